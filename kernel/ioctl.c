// SPDX-License-Identifier: GPL-2.0
/*
 * The rank's ioctl dispatch, table driven as iommufd and fwctl do it: one
 * table of {cmd, handler, struct size, minimum size}, one place that copies
 * the struct in (copy_struct_from_user) and out, handlers that see kernel
 * copies only.
 */
#include <kunit/visibility.h>
#include <linux/uaccess.h>

#include "dpusim.h"

/* Copy the kernel struct back, cut to what the user's version holds. */
int dpusim_ucmd_respond(struct dpusim_ucmd *ucmd, size_t cmd_len)
{
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd,
			 min_t(size_t, ucmd->user_size, cmd_len)))
		return -EFAULT;
	return 0;
}

static int dpusim_rank_info(struct dpusim_ucmd *ucmd)
{
	struct dpusim_rank_info *info = ucmd->cmd;
	struct dpusim_rank *rank = ucmd->rank;

	if (info->flags)
		return -EINVAL;

	*info = (struct dpusim_rank_info) {
		.size = sizeof(*info),
		.abi_version = DPUSIM_ABI_VERSION,
		.rank_index = rank->index,
		.nr_dpus = rank->nr_dpus,
		.wram_size = rank->wram_size,
		.mram_size = rank->mram_size,
	};
	return dpusim_ucmd_respond(ucmd, sizeof(*info));
}

static int dpusim_xfer_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_xfer_user(ucmd->rank, ucmd->cmd);
}

static int dpusim_sync_ioctl(struct dpusim_ucmd *ucmd)
{
	struct dpusim_sync *sync = ucmd->cmd;

	if (sync->flags || sync->__reserved ||
	    sync->timeout_ms > DPUSIM_SYNC_MAX_TIMEOUT_MS)
		return -EINVAL;
	return dpusim_async_sync(ucmd->rank, sync->timeout_ms);
}

union dpusim_ucmd_buffer {
	struct dpusim_rank_info info;
	struct dpusim_xfer xfer;
	struct dpusim_sync sync;
	struct dpusim_launch launch;
	struct dpusim_dpu_status status;
	struct dpusim_worker_open worker_open;
	struct dpusim_stream_create stream_create;
	struct dpusim_stream_cmd stream_cmd;
};

/* A caller passing the whole struct is never refused for its size. */
static_assert(sizeof(union dpusim_ucmd_buffer) <= DPUSIM_UCMD_MAX_SIZE);

#define IOCTL_OP(_name, _fn, _struct, _last)				\
	[DPUSIM_CMD_##_name - DPUSIM_CMD_BASE] = {			\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union dpusim_ucmd_buffer) < \
					  sizeof(_struct)),		\
		.min_size = offsetofend(_struct, _last),		\
		.ioctl_num = DPUSIM_IOCTL_##_name,			\
		.execute = _fn,						\
	}

static const struct dpusim_ioctl_op dpusim_ioctl_ops[] = {
	IOCTL_OP(RANK_INFO, dpusim_rank_info, struct dpusim_rank_info,
		 mram_size),
	IOCTL_OP(XFER, dpusim_xfer_ioctl, struct dpusim_xfer, blocks),
	IOCTL_OP(SYNC, dpusim_sync_ioctl, struct dpusim_sync, __reserved),
	IOCTL_OP(LAUNCH, dpusim_launch_ioctl, struct dpusim_launch, nr_dpus),
	IOCTL_OP(DPU_STATUS, dpusim_dpu_status_ioctl, struct dpusim_dpu_status,
		 nr_fault),
	IOCTL_OP(WORKER_OPEN, dpusim_worker_open_ioctl,
		 struct dpusim_worker_open, __reserved),
	IOCTL_OP(STREAM_CREATE, dpusim_stream_create_ioctl,
		 struct dpusim_stream_create, __reserved),
	IOCTL_OP(STREAM_OPEN, dpusim_stream_open_ioctl,
		 struct dpusim_stream_cmd, prev),
	IOCTL_OP(STREAM_CLOSE, dpusim_stream_close_ioctl,
		 struct dpusim_stream_cmd, prev),
	IOCTL_OP(STREAM_SEEK, dpusim_stream_seek_ioctl,
		 struct dpusim_stream_cmd, prev),
};

/**
 * dpusim_ucmd_dispatch - look a command up in a table, copy its struct in
 * and run it
 * @ucmd: the call, @ucmd->rank, ->worker and ->ubuffer set
 * @ops: the table, indexed by command number - @base
 * @nr_ops: entries of @ops
 * @base: the command number of @ops[0]
 * @cmd: the ioctl command
 * @buf: room for the largest struct of @ops
 *
 * A size field over DPUSIM_UCMD_MAX_SIZE is -E2BIG, whatever the tail holds.
 *
 * Return: 0 or a negative errno as documented in uapi/dpusim.h.
 */
long dpusim_ucmd_dispatch(struct dpusim_ucmd *ucmd,
			  const struct dpusim_ioctl_op *ops,
			  unsigned int nr_ops, unsigned int base,
			  unsigned int cmd, void *buf)
{
	const struct dpusim_ioctl_op *op;
	unsigned int nr;
	int ret;

	nr = _IOC_NR(cmd);
	if (_IOC_TYPE(cmd) != DPUSIM_TYPE || nr < base || nr - base >= nr_ops)
		return -ENOTTY;
	op = &ops[nr - base];
	if (!op->execute || op->ioctl_num != cmd)
		return -ENOTTY;

	ret = get_user(ucmd->user_size, (u32 __user *)ucmd->ubuffer);
	if (ret)
		return ret;
	if (ucmd->user_size < op->min_size)
		return -EINVAL;
	if (ucmd->user_size > DPUSIM_UCMD_MAX_SIZE)
		return -E2BIG;	/* before a scan of its tail: see the limit */

	ucmd->cmd = buf;
	ret = copy_struct_from_user(ucmd->cmd, op->size, ucmd->ubuffer,
				    ucmd->user_size);
	if (ret)
		return ret;
	return op->execute(ucmd);
}

/**
 * dpusim_ioctl_dispatch - run one ioctl on a rank
 * @rank: the rank
 * @cmd: the ioctl command
 * @ubuffer: the user's struct, starting with its __u32 size
 *
 * Return: 0 or a negative errno as documented in uapi/dpusim.h.
 */
long dpusim_ioctl_dispatch(struct dpusim_rank *rank, unsigned int cmd,
			   void __user *ubuffer)
{
	struct dpusim_ucmd ucmd = {
		.rank = rank,
		.ubuffer = ubuffer,
	};
	union dpusim_ucmd_buffer buf;

	return dpusim_ucmd_dispatch(&ucmd, dpusim_ioctl_ops,
				    ARRAY_SIZE(dpusim_ioctl_ops),
				    DPUSIM_CMD_BASE, cmd, &buf);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_ioctl_dispatch);

long dpusim_rank_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct dpusim_rank *rank = filp->private_data;

	dpusim_rank_touch_owner(rank);
	return dpusim_ioctl_dispatch(rank, cmd, (void __user *)arg);
}
