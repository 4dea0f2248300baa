/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the integration tests that run inside the VM. */
#ifndef DPUSIM_TESTS_COMMON_H
#define DPUSIM_TESTS_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "uapi/dpusim.h"

#define RANK_PATH(n) "/dev/dpusim/rank" #n

#define EXPECT_ERRNO(expected, cmd)			\
	do {						\
		errno = 0;				\
		ASSERT_EQ(-1, cmd);			\
		EXPECT_EQ(expected, errno);		\
	} while (0)

/* Read /sys/class/dpusim/rank<N>/<attr> as an integer; -1 on error. */
static inline long long sysfs_rank_attr(unsigned int rank, const char *attr)
{
	char path[128], buf[64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/dpusim/rank%u/%s", rank, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 0);
	fclose(f);
	return v;
}

/* Run a shell command, return its exit status (or -1). */
static inline int run_cmd(const char *cmd)
{
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

#endif
