// SPDX-License-Identifier: MIT
/*
 * libdpusim: dpu_sync - wait for everything queued on a set: its
 * asynchronous transfers (async.c), then its launches (launch.c), then its
 * asynchronous callbacks (callback.c); the first error of the three.
 */
#include "xfer.h"

DPUSIM_API dpu_error_t dpu_sync(struct dpu_set_t dpu_set)
{
	struct dpusim_set_props *props = dpusim_set_props(dpu_set, "dpu_sync");
	dpu_error_t ret, lret, cret;

	if (!props)
		return DPU_ERR_INVALID_DPU_SET;

	ret = dpusim_async_sync(props, "dpu_sync");
	lret = dpusim_launch_sync(props, "dpu_sync");
	cret = dpusim_callbacks_join(props);
	if (ret == DPU_OK)
		ret = lret;
	return ret != DPU_OK ? ret : cret;
}
