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

