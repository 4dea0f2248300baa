// SPDX-License-Identifier: MIT
/*
 * libdpusim: asynchronous transfers (DPU_XFER_ASYNC, DPU_SG_XFER_ASYNC).
 *
 * The queueing is dpusim.ko's (DPUSIM_XFER_ASYNC): the API call validates
 * and gathers everything itself, then issues the same DPUSIM_IOCTL_XFER
 * calls per rank as a synchronous call (one, unless the rank's share is
 * over one call's limits), with DPUSIM_XFER_ASYNC.
 * The kernel checks, pins the host pages and allocates the MRAM before
 * returning, so every error still comes back from the call; the copy runs
 * later in the kernel, in submission order per rank, and a synchronous
 * transfer on the rank waits for the queued ones. dpusim_async_sync (for
 * dpu_sync, sync.c) issues DPUSIM_IOCTL_SYNC on every rank of the set
 * whose status page does not say its queue is done, and returns the first
 * error. The user's buffers must stay valid until then (as UPMEM).
 *
 * dpu_free syncs first (the set's DPUSIM_SET_HOOK_ASYNC hook, registered
 * on the first submit), so an error nobody collected is logged; closing a
 * rank also waits in the kernel.
 */
#include <errno.h>
#include <sys/ioctl.h>

#include "xfer.h"

/* The longest DPUSIM_IOCTL_SYNC wait; a timeout is reported as an error. */
#define SYNC_TIMEOUT_MS 60000U

bool dpusim_rank_async_idle(const struct dpu_rank_t *rank)
{
	const struct dpusim_rank_status *st = rank->status;
	uint64_t queued;

	if (!st)
		return false;
	/* the count of our own submits is in: the kernel stored it first */
	queued = __atomic_load_n(&st->async_queued, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&st->async_done, __ATOMIC_ACQUIRE) >= queued;
}

static dpu_error_t rank_sync(struct dpu_rank_t *rank, const char *fn)
{
	struct dpusim_sync s = {
		.size = sizeof(s),
		.timeout_ms = SYNC_TIMEOUT_MS,
	};
	char eb[128];
	int r;

	if (rank->fd < 0 || dpusim_rank_async_idle(rank))
		return DPU_OK;	/* no device, or nothing left in the queue */
	/* The wait changes nothing, so an interrupted one is retried. */
	do {
		r = ioctl(rank->fd, DPUSIM_IOCTL_SYNC, &s);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return DPU_OK;
	if (errno == ETIMEDOUT) {
		dpusim_log("%s: rank%u: the queued transfers did not finish in %u ms",
			   fn, rank->index, SYNC_TIMEOUT_MS);
		return DPU_ERR_SYSTEM;
	}
	dpusim_log("%s: rank%u: an asynchronous transfer failed: %s",
		   fn, rank->index, dpusim_strerror(errno, eb, sizeof(eb)));
	return dpusim_xfer_errno_to_error(errno);
}

dpu_error_t dpusim_async_sync(struct dpusim_set_props *props, const char *fn)
{
	dpu_error_t err, ret = DPU_OK;
	uint32_t i;

	for (i = 0; i < props->nr_ranks; i++) {
		err = rank_sync(props->ranks[i], fn);
		if (ret == DPU_OK)
			ret = err;
	}
	return ret;
}

/* The set's DPUSIM_SET_HOOK_ASYNC hook, from its first submit on. */
static void async_teardown(struct dpusim_set_props *props)
{
	if (dpusim_async_sync(props, "dpu_free") != DPU_OK)
		dpusim_log("dpu_free: an asynchronous transfer failed and dpu_sync was not called to see it");
}

dpu_error_t dpusim_async_submit(struct dpusim_set_props *props,
				struct dpusim_xfer_req *req)
{
	pthread_mutex_lock(&props->lock);
	dpusim_set_hook_add(props, DPUSIM_SET_HOOK_ASYNC, async_teardown);
	pthread_mutex_unlock(&props->lock);
	req->kflags |= DPUSIM_XFER_ASYNC;
	return dpusim_xfer_issue(req);
}
