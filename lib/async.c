// SPDX-License-Identifier: MIT
/*
 * libdpusim: asynchronous transfers (DPU_XFER_ASYNC, DPU_SG_XFER_ASYNC)
 * and dpu_sync.
 *
 * The kernel has no asynchronous ioctl yet: this is library-side queueing.
 * The API call validates and gathers everything itself (so its errors come
 * back at once), then hands the finished request to the set's worker
 * thread, which issues the ordinary synchronous DPUSIM_IOCTL_XFERs, one job
 * after the other in submission order. dpu_sync waits for the queue to
 * drain and returns the first error of the jobs since the previous
 * dpu_sync. The user's buffers must stay valid until then (as UPMEM).
 *
 * One queue per allocated set (props->xfer), created on first use under
 * props->lock and destroyed by dpu_free through props->xfer_release, which
 * lets the worker finish every queued job before joining it.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "xfer.h"

struct async_queue {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* a job was queued, or stop was set */
	pthread_cond_t idle;	/* the queue drained */
	struct dpusim_xfer_req *head, *tail;
	bool busy;		/* the worker is running a job */
	bool stop;		/* dpu_free: finish the queue, then exit */
	dpu_error_t first_error;
	pthread_t thread;
};

static void *async_worker(void *arg)
{
	struct async_queue *q = arg;
	struct dpusim_xfer_req *req;
	dpu_error_t err;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->head && !q->stop)
			pthread_cond_wait(&q->work, &q->lock);
		req = q->head;
		if (!req)
			break;	/* stop, and nothing left */
		q->head = req->next;
		if (!q->head)
			q->tail = NULL;
		q->busy = true;
		pthread_mutex_unlock(&q->lock);

		err = dpusim_xfer_issue(req);
		dpusim_xfer_req_free(req);

		pthread_mutex_lock(&q->lock);
		if (err != DPU_OK && q->first_error == DPU_OK)
			q->first_error = err;
		q->busy = false;
		if (!q->head)
			pthread_cond_broadcast(&q->idle);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void async_release(struct dpusim_set_props *props)
{
	struct async_queue *q = props->xfer;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	if (q->first_error != DPU_OK)
		dpusim_log("dpu_free: an asynchronous transfer failed and dpu_sync was not called to see it");
	pthread_cond_destroy(&q->idle);
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->lock);
	free(q);
	props->xfer = NULL;
	props->xfer_release = NULL;
}

/* The set's queue; created (with its worker) if create. NULL on failure. */
static struct async_queue *async_queue(struct dpusim_set_props *props,
				       bool create, const char *fn)
{
	struct async_queue *q;
	sigset_t all, old;
	int r;

	pthread_mutex_lock(&props->lock);
	q = props->xfer;
	if (q || !create)
		goto out;
	q = calloc(1, sizeof(*q));
	if (!q) {
		dpusim_log("%s: out of memory", fn);
		goto out;
	}
	if (pthread_mutex_init(&q->lock, NULL)) {
		free(q);
		q = NULL;
		dpusim_log("%s: pthread_mutex_init failed", fn);
		goto out;
	}
	if (pthread_cond_init(&q->work, NULL)) {
		pthread_mutex_destroy(&q->lock);
		free(q);
		q = NULL;
		dpusim_log("%s: pthread_cond_init failed", fn);
		goto out;
	}
	if (pthread_cond_init(&q->idle, NULL)) {
		pthread_cond_destroy(&q->work);
		pthread_mutex_destroy(&q->lock);
		free(q);
		q = NULL;
		dpusim_log("%s: pthread_cond_init failed", fn);
		goto out;
	}
	/* The worker blocks every signal: they belong to the user's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&q->thread, NULL, async_worker, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		char eb[128];

		pthread_cond_destroy(&q->idle);
		pthread_cond_destroy(&q->work);
		pthread_mutex_destroy(&q->lock);
		free(q);
		q = NULL;
		dpusim_log("%s: cannot start the asynchronous transfer thread: %s",
			   fn, dpusim_strerror(r, eb, sizeof(eb)));
		goto out;
	}
	props->xfer = q;
	props->xfer_release = async_release;
out:
	pthread_mutex_unlock(&props->lock);
	return q;
}

dpu_error_t dpusim_async_submit(struct dpusim_set_props *props,
				struct dpusim_xfer_req *req)
{
	struct async_queue *q = async_queue(props, true, req->fn);

	if (!q) {
		dpusim_xfer_req_free(req);
		return DPU_ERR_SYSTEM;
	}
	req->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = req;
	else
		q->head = req;
	q->tail = req;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
	return DPU_OK;
}

dpu_error_t dpusim_async_wait(struct dpusim_set_props *props, bool take_error)
{
	struct async_queue *q = async_queue(props, false, NULL);
	dpu_error_t err = DPU_OK;

	if (!q)
		return DPU_OK;
	pthread_mutex_lock(&q->lock);
	while (q->head || q->busy)
		pthread_cond_wait(&q->idle, &q->lock);
	if (take_error) {
		err = q->first_error;
		q->first_error = DPU_OK;
	}
	pthread_mutex_unlock(&q->lock);
	return err;
}

DPUSIM_API dpu_error_t dpu_sync(struct dpu_set_t dpu_set)
{
	struct dpusim_set_props *props = dpusim_set_props(dpu_set, "dpu_sync");

	if (!props)
		return DPU_ERR_INVALID_DPU_SET;
	return dpusim_async_wait(props, true);
}
