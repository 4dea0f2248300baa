/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the integration tests that run inside the VM. */
#ifndef DPUSIM_TESTS_COMMON_H
#define DPUSIM_TESTS_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uapi/dpusim.h"

#define RANK_PATH(n) "/dev/dpusim/rank" #n

#ifndef offsetofend
#define offsetofend(T, m) (offsetof(T, m) + sizeof(((T *)0)->m))
#endif

#define EXPECT_ERRNO(expected, cmd)			\
	do {						\
		errno = 0;				\
		ASSERT_EQ(-1, cmd);			\
		EXPECT_EQ(expected, errno);		\
	} while (0)

/* stderr goes to a memfd between cap_begin() and cap_end(), which returns
 * what was printed (processes spawned meanwhile keep printing there). */
struct capture {
	int saved;
	int fd;
};

static inline void cap_begin(struct capture *c)
{
	fflush(stderr);
	c->fd = memfd_create("stderr", 0);
	c->saved = dup(2);
	dup2(c->fd, 2);
}

static inline char *cap_end(struct capture *c)
{
	off_t n;
	char *s;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	n = lseek(c->fd, 0, SEEK_END);
	s = calloc(1, (size_t)n + 1);
	if (s && n > 0)
		pread(c->fd, s, (size_t)n, 0);
	close(c->fd);
	return s;
}

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

/*
 * Word @idx of /sys/class/dpusim/rank<N>/<attr>, an attribute of one word
 * per DPU (dpu_state, dpu_modeled_cycles), into @word; 0, or -1.
 */
static inline int sysfs_rank_word(unsigned int rank, const char *attr, unsigned int idx,
				  char *word, size_t len)
{
	char buf[4096], path[128], *tok, *save;
	unsigned int i = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/dpusim/rank%u/%s", rank, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), i++) {
		if (i == idx) {
			snprintf(word, len, "%s", tok);
			return 0;
		}
	}
	return -1;
}

/* The module's parameter mram_budget, in bytes; -1 on error. */
static inline long long mram_budget_read(void)
{
	char buf[64] = "";
	FILE *f = fopen("/sys/module/dpusim/parameters/mram_budget", "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] ? strtoll(buf, NULL, 0) : -1;
}

/* Set mram_budget (root); 0 or -1. */
static inline int mram_budget_write(long long v)
{
	FILE *f = fopen("/sys/module/dpusim/parameters/mram_budget", "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%lld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/*
 * A "Key:" line of /proc/self/status in kB ("VmPin:" = pages pinned and
 * charged to RLIMIT_MEMLOCK, "VmLck:"); -1 if absent.
 */
static inline long proc_status_kb(const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen))
			v = strtol(line + klen, NULL, 10);
	fclose(f);
	return v;
}

/* Wait for child @pid: its exit status, or -1 if it did not exit normally. */
static inline int child_exit_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Run a shell command, return its exit status (or -1). */
static inline int run_cmd(const char *cmd)
{
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * One block of @len bytes for each of two DPUs of a rank: src (2 * len
 * bytes, a pattern) holds DPU @dpu0's block then DPU @dpu1's; dst (2 * len
 * bytes of 0xee) is there to read back into.
 */
struct two_dpu_xfer {
	struct dpusim_xfer_dpu dpus[2];
	struct dpusim_block blocks[2];
	struct dpusim_xfer x;
	uint8_t *src, *dst;
};

/* Returns 0, or -1 if out of memory. */
static inline int two_dpu_xfer_init(struct two_dpu_xfer *t, uint32_t dpu0,
				    uint32_t dpu1, uint64_t offset,
				    uint64_t len, uint32_t flags)
{
	uint64_t i;

	t->src = malloc(2 * len);
	t->dst = malloc(2 * len);
	if (!t->src || !t->dst)
		return -1;
	for (i = 0; i < 2 * len; i++)
		t->src[i] = i * 31 + 7;
	memset(t->dst, 0xee, 2 * len);
	t->dpus[0] = (struct dpusim_xfer_dpu){ .dpu = dpu0, .nr_blocks = 1 };
	t->dpus[1] = (struct dpusim_xfer_dpu){ .dpu = dpu1, .nr_blocks = 1 };
	t->blocks[0] = (struct dpusim_block){ (uintptr_t)t->src, len };
	t->blocks[1] = (struct dpusim_block){ (uintptr_t)(t->src + len), len };
	t->x = (struct dpusim_xfer){
		.size = sizeof(t->x),
		.flags = flags,
		.offset = offset,
		.length = len,
		.nr_dpus = 2,
		.nr_blocks = 2,
		.dpus = (uintptr_t)t->dpus,
		.blocks = (uintptr_t)t->blocks,
	};
	return 0;
}

static inline void two_dpu_xfer_free(struct two_dpu_xfer *t)
{
	free(t->src);
	free(t->dst);
}

static inline int xfer(int fd, struct dpusim_xfer *x)
{
	return ioctl(fd, DPUSIM_IOCTL_XFER, x);
}

/* The fuzzers' model of the kernel's dpusim_stream_layout(): 0, EINVAL or E2BIG */
static inline int stream_layout(uint64_t size, uint32_t token, bool down,
				uint32_t *nr_tokens, uint64_t *mem_size)
{
	uint64_t n;

	if (!size || size > DPUSIM_STREAM_MAX_BYTES ||
	    token < DPUSIM_STREAM_MIN_TOKEN)
		return EINVAL;
	n = (size + token - 1) / token;
	if (down) {
		if (n > DPUSIM_STREAM_MAX_TOKENS)
			return E2BIG;
		*nr_tokens = n;
	} else {
		*nr_tokens = 0;
		n = (size + 7) / 8;
		if (n > DPUSIM_STREAM_MAX_TOKENS)
			n = DPUSIM_STREAM_MAX_TOKENS;
	}
	*mem_size = size + (n + 1) * DPUSIM_STREAM_HEADER;
	return 0;
}

/* A stream of @size bytes of data (or empty with @data NULL): its id or -1 */
static inline int stream_create(int fd, uint64_t size, uint32_t token,
				const void *data, struct dpusim_stream_create *out)
{
	struct dpusim_stream_create c = {
		.size = sizeof(c), .stream_size = size, .token_size = token,
		.data = (uintptr_t)data,
	};

	if (ioctl(fd, DPUSIM_IOCTL_STREAM_CREATE, &c))
		return -1;
	if (out)
		*out = c;
	return c.id;
}

/*
 * OPEN/CLOSE/SEEK of stream @id as @core, on the rank file or
 * (DPUSIM_IOCTL_WORKER_STREAM_*) a worker file; the answer in *@out
 */
static inline int stream_cmd(int fd, unsigned long ioc, uint32_t id,
			     uint32_t core, int32_t delta,
			     struct dpusim_stream_cmd *out)
{
	struct dpusim_stream_cmd c = {
		.size = sizeof(c), .id = id, .core = core, .delta = delta,
	};
	int r = ioctl(fd, ioc, &c);

	if (out)
		*out = c;
	return r;
}

/* The largest struct size a dispatcher reads (the header's E2BIG line) */
#define UCMD_MAX_SIZE	4096u

/*
 * ioctl(@fd, @cmd) on a struct of @ksize bytes (the kernel's) whose size
 * field says @size and whose flags (the second __u32 of every struct) are
 * @flags, the rest zeros: with @hole_after, nothing is mapped right past
 * its @ksize bytes (a read of its tail faults); else two pages of zeros
 * and more follow it.  Returns what ioctl() did, errno set.
 */
static inline int ioctl_sized(int fd, unsigned long cmd, uint32_t size,
			      uint32_t flags, size_t ksize, bool hole_after)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *p = map;
	int ret, err;

	if (map == MAP_FAILED)
		return -2;
	if (hole_after) {
		munmap(map + page, 2 * page);
		p = map + page - ksize;
	}
	memcpy(p, &size, sizeof(size));
	memcpy(p + 4, &flags, sizeof(flags));
	ret = ioctl(fd, cmd, p);
	err = errno;
	munmap(map, hole_after ? page : 3 * page);
	errno = err;
	return ret;
}

/* One DPU, @len bytes to or from host buffer @buf, MRAM or WRAM. */
static inline int xfer_one(int fd, uint32_t dpu, uint32_t flags, uint64_t off,
			   void *buf, uint64_t len)
{
	struct dpusim_xfer_dpu d = { .dpu = dpu, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)buf, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags, .offset = off,
		.length = len, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	return xfer(fd, &x);
}

#endif
