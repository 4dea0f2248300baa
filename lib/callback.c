// SPDX-License-Identifier: MIT
/*
 * libdpusim: dpu_callback.
 *
 * Without DPU_CALLBACK_ASYNC the callback runs on the caller's thread,
 * once per rank of the set (rank set, rank index in the set, args) or,
 * with DPU_CALLBACK_SINGLE_CALL, once for the whole set (index 0).
 * With DPU_CALLBACK_ASYNC it runs on a thread of its own once everything
 * queued on the set before it (asynchronous transfers and launches) has
 * finished; dpu_sync waits for it and returns its error. NONBLOCKING only
 * means something with ASYNC (else DPU_ERR_NONBLOCKING_SYNC_CALLBACK, as
 * the SDK): here an asynchronous callback never blocks the rank's queue
 * anyway, so it is accepted and changes nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <dpu_management.h>

#include "xfer.h"

typedef dpu_error_t (*dpu_callback_fn)(struct dpu_set_t, uint32_t, void *);

struct dpusim_cb_job {
	struct dpusim_cb_job *next;
	struct dpusim_cb_job *prev;	/* queued before; NULL if none */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	pthread_t thread;
	struct dpusim_set_props *props;
	struct dpu_set_t set;
	dpu_callback_fn fn;
	void *args;
	bool single;
	dpu_error_t result;
};

/* The ranks of a set or subset and their index in the whole set. */
static dpu_error_t call(struct dpusim_set_props *props, struct dpu_set_t set,
			dpu_callback_fn fn, void *args, bool single)
{
	dpu_error_t err, ret = DPU_OK;
	uint32_t i, r;

	if (single || set.kind == DPU_SET_DPU)
		return fn(set, 0, args);
	for (i = 0; i < set.list.nr_ranks; i++) {
		for (r = 0; r < props->nr_ranks; r++)
			if (props->ranks[r] == set.list.ranks[i])
				break;
		err = fn(dpu_set_from_rank(&set.list.ranks[i]), r, args);
		if (ret == DPU_OK)
			ret = err;
	}
	return ret;
}

static void *cb_thread(void *arg)
{
	struct dpusim_cb_job *job = arg;
	dpu_error_t ret;

	/* what was queued before: callbacks, transfers, then launches */
	if (job->prev) {
		pthread_mutex_lock(&job->prev->lock);
		while (!job->prev->done)
			pthread_cond_wait(&job->prev->cond, &job->prev->lock);
		pthread_mutex_unlock(&job->prev->lock);
	}
	ret = dpusim_async_sync(job->props, "dpu_callback");
	if (ret == DPU_OK)
		ret = dpusim_launch_wait(job->props, "dpu_callback");
	if (ret == DPU_OK)
		ret = call(job->props, job->set, job->fn, job->args, job->single);
	pthread_mutex_lock(&job->lock);
	job->result = ret;
	job->done = true;
	pthread_cond_broadcast(&job->cond);
	pthread_mutex_unlock(&job->lock);
	return NULL;
}

dpu_error_t dpusim_callbacks_join(struct dpusim_set_props *props)
{
	struct dpusim_cb_job *first, *job;
	dpu_error_t ret = DPU_OK;

	pthread_mutex_lock(&props->lock);
	first = props->callbacks;
	props->callbacks = NULL;
	pthread_mutex_unlock(&props->lock);
	/* all threads first: a later one may still wait on an earlier job */
	for (job = first; job; job = job->next) {
		pthread_join(job->thread, NULL);
		if (ret == DPU_OK)
			ret = job->result;
	}
	while (first) {
		job = first->next;
		pthread_mutex_destroy(&first->lock);
		pthread_cond_destroy(&first->cond);
		free(first);
		first = job;
	}
	return ret;
}

/* The set's DPUSIM_SET_HOOK_CALLBACKS hook, from its first async callback on. */
static void callbacks_teardown(struct dpusim_set_props *props)
{
	dpusim_callbacks_join(props);
}

DPUSIM_API dpu_error_t dpu_callback(struct dpu_set_t dpu_set,
				    dpu_error_t (*callback)(struct dpu_set_t,
							    uint32_t, void *),
				    void *args, dpu_callback_flags_t flags)
{
	static const char fn[] = "dpu_callback";
	const unsigned int known = DPU_CALLBACK_ASYNC | DPU_CALLBACK_NONBLOCKING |
				   DPU_CALLBACK_SINGLE_CALL;
	struct dpusim_set_props *props = dpusim_set_props(dpu_set, fn);
	struct dpusim_cb_job *job;
	char eb[128];
	int r;

	if (!props)
		return DPU_ERR_INVALID_DPU_SET;
	if (!callback) {
		dpusim_log("%s: callback is NULL", fn);
		return DPU_ERR_INTERNAL;
	}
	if (flags & ~known) {
		dpusim_log("%s: unknown flags 0x%x", fn, (unsigned int)(flags & ~known));
		return DPU_ERR_INTERNAL;
	}
	if ((flags & DPU_CALLBACK_NONBLOCKING) && !(flags & DPU_CALLBACK_ASYNC)) {
		dpusim_log("%s: DPU_CALLBACK_NONBLOCKING needs DPU_CALLBACK_ASYNC", fn);
		return DPU_ERR_NONBLOCKING_SYNC_CALLBACK;
	}
	if (!(flags & DPU_CALLBACK_ASYNC))
		return call(props, dpu_set, callback, args,
			    flags & DPU_CALLBACK_SINGLE_CALL);

	job = calloc(1, sizeof(*job));
	if (!job) {
		dpusim_log("%s: out of memory", fn);
		return DPU_ERR_SYSTEM;
	}
	job->props = props;
	job->set = dpu_set;
	job->fn = callback;
	job->args = args;
	job->single = flags & DPU_CALLBACK_SINGLE_CALL;
	pthread_mutex_init(&job->lock, NULL);
	pthread_cond_init(&job->cond, NULL);
	/* queued in order: a callback waits for the ones queued before it */
	pthread_mutex_lock(&props->lock);
	{
		struct dpusim_cb_job **tail = &props->callbacks;

		while (*tail) {
			job->prev = *tail;
			tail = &(*tail)->next;
		}
		r = pthread_create(&job->thread, NULL, cb_thread, job);
		if (r == 0) {
			*tail = job;
			dpusim_set_hook_add(props, DPUSIM_SET_HOOK_CALLBACKS,
					    callbacks_teardown);
		}
	}
	pthread_mutex_unlock(&props->lock);
	if (r) {
		pthread_mutex_destroy(&job->lock);
		pthread_cond_destroy(&job->cond);
		free(job);
		dpusim_log("%s: cannot start a thread: %s", fn,
			   dpusim_strerror(r, eb, sizeof(eb)));
		return DPU_ERR_SYSTEM;
	}
	return DPU_OK;
}
