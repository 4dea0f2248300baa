// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of streams moved by DPU programs, through /dev/dpusim/rank0
 * and its worker files: the worker file's DPUSIM_IOCTL_WORKER_STREAM_OPEN,
 * _CLOSE, _SEEK, _MOVE and _WAIT (one test per failure path, and what a
 * success gives: out fields, the cursor, bytes through the worker's window,
 * through the stream's mapping and by a transfer after FINISH), the rank
 * file's EBUSY for a host thread acting as a RUNNING DPU (OPEN, CLOSE,
 * SEEK, and DPUSIM_XFER_STREAM moves), a stream kept open by its core
 * across the end of the DPU's run, and FINISH right after an asynchronous
 * move while the worker's copy thread is busy with moves of its move ring
 * and the host holds the rank's transfer lock (a deadlock, once).
 *
 * Stream 0 is mostly 100 bytes of data in tokens of 16: tokens 0-5 of 16
 * bytes, token 6 of 4; token i's header at 24 i, its data at 24 i + 8,
 * the end's header at 156; 164 bytes in all.  The DPU held is DPU 3.
 *
 * Worker files (and the window, which holds its worker file) always go
 * before the rank file: closing the rank file sends SIGKILL to every
 * process that claimed through one of them.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE		4096UL
#define HELD		3		/* the DPU the worker holds */
#define S_LEN		100		/* stream 0: bytes of data */
#define S_TOKEN		16
#define S_MEM		164		/* its memory */
#define S_TOKENS	7
#define DATA_LEN	(1UL << 20)

FIXTURE(sw) {
	int fd;
	int wfd[2];
	struct dpusim_rank_info info;
	volatile uint8_t *win;		/* wfd[0]'s window, or NULL */
	void *smap;			/* a stream's mapping, or NULL */
	size_t smap_len;
	uint8_t *data;			/* DATA_LEN bytes of a pattern */
};

FIXTURE_SETUP(sw)
{
	size_t i;

	self->wfd[0] = self->wfd[1] = -1;
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
	self->info = (struct dpusim_rank_info){ .size = sizeof(self->info) };
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &self->info));
	ASSERT_LT(8, self->info.nr_dpus);
	self->data = malloc(DATA_LEN);
	ASSERT_NE(NULL, self->data);
	for (i = 0; i < DATA_LEN; i++)
		self->data[i] = i * 7 + 1 + (i >> 12);
}

FIXTURE_TEARDOWN(sw)
{
	if (self->win)
		munmap((void *)self->win, DPUSIM_WINDOW_SIZE);
	if (self->smap)
		munmap(self->smap, self->smap_len);
	if (self->wfd[0] >= 0)
		close(self->wfd[0]);
	if (self->wfd[1] >= 0)
		close(self->wfd[1]);
	if (self->fd >= 0)
		close(self->fd);
	free(self->data);
}

/* ------------------------------------------------------------ helpers */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int worker_open(int fd)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };

	if (ioctl(fd, DPUSIM_IOCTL_WORKER_OPEN, &wo))
		return -1;
	return wo.fd;
}

static int do_launch(int fd, uint32_t first, uint32_t nr)
{
	struct dpusim_launch l = {
		.size = sizeof(l), .first_dpu = first, .nr_dpus = nr,
	};

	return ioctl(fd, DPUSIM_IOCTL_LAUNCH, &l);
}

/* Claim (NONBLOCK): the DPU claimed, or -1. */
static int claim(int wfd)
{
	struct dpusim_worker_claim c = {
		.size = sizeof(c), .flags = DPUSIM_CLAIM_NONBLOCK,
	};

	if (ioctl(wfd, DPUSIM_IOCTL_WORKER_CLAIM, &c))
		return -1;
	return c.dpu;
}

static int finish(int wfd, uint32_t dpu)
{
	struct dpusim_worker_finish f = { .size = sizeof(f), .dpu = dpu };

	return ioctl(wfd, DPUSIM_IOCTL_WORKER_FINISH, &f);
}

/* A worker file in wfd[0] (opened if needed) holding DPU @dpu: 0 or -1. */
static int hold(FIXTURE_DATA(sw) *self, uint32_t dpu)
{
	if (self->wfd[0] < 0)
		self->wfd[0] = worker_open(self->fd);
	if (self->wfd[0] < 0 || do_launch(self->fd, dpu, 1))
		return -1;
	return claim(self->wfd[0]) == (int)dpu ? 0 : -1;
}

/* Map wfd[0]'s window: 0 or -1. */
static int map_window(FIXTURE_DATA(sw) *self)
{
	void *p = mmap(NULL, DPUSIM_WINDOW_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, self->wfd[0], DPUSIM_MMAP_WINDOW);

	if (p == MAP_FAILED)
		return -1;
	self->win = p;
	return 0;
}

/* Map stream @id's memory (@len bytes) read-only: the mapping or NULL. */
static const uint8_t *map_stream(FIXTURE_DATA(sw) *self, uint32_t id,
				 size_t len)
{
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd,
		       DPUSIM_MMAP_STREAM(id));

	if (p == MAP_FAILED)
		return NULL;
	self->smap = p;
	self->smap_len = len;
	return p;
}

/* The cursor of stream @id as its core @core sees it (SEEK by 0), or -1 */
static int cursor_of(int fd, unsigned long seek, uint32_t id, uint32_t core)
{
	struct dpusim_stream_cmd o;

	if (stream_cmd(fd, seek, id, core, 0, &o))
		return -1;
	return o.cursor;
}

/* DPUSIM_IOCTL_WORKER_STREAM_MOVE with @nb blocks */
static int wmove(int wfd, uint32_t flags, uint32_t id, uint64_t off,
		 uint32_t nb, const struct dpusim_window_block *b)
{
	struct dpusim_worker_stream_move m = {
		.size = sizeof(m), .flags = flags, .stream = id,
		.nr_blocks = nb, .offset = off,
	};
	uint32_t i;

	for (i = 0; i < nb && i < DPUSIM_STREAM_MOVE_MAX_BLOCKS; i++)
		m.blocks[i] = b[i];
	return ioctl(wfd, DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m);
}

/* One token of stream 0 down into WRAM at @wram (its data + header) */
static int wdown(int wfd, uint32_t id, uint64_t off, uint64_t len,
		 uint64_t wram)
{
	struct dpusim_window_block b = { wram, len };

	return wmove(wfd, DPUSIM_STREAM_MOVE_DOWN, id, off, 1, &b);
}

static int wwait(int wfd, uint32_t flags)
{
	struct dpusim_worker_stream_wait wt = { .size = sizeof(wt), .flags = flags };

	return ioctl(wfd, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &wt);
}

/* A DPUSIM_XFER_STREAM move of the rank file, one block, by @core */
static int xmove(int fd, uint32_t id, uint32_t core, uint32_t flags,
		 uint64_t off, void *buf, uint64_t len)
{
	struct dpusim_xfer_dpu d = { .dpu = core, .nr_blocks = 1 };
	struct dpusim_block b = { (uintptr_t)buf, len };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags | DPUSIM_XFER_STREAM,
		.offset = off, .length = len, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b, .stream = id,
	};

	return xfer(fd, &x);
}

/* Stream 0 (100 bytes in tokens of 16) and stream 1 (empty, 64 bytes) */
static int two_streams(FIXTURE_DATA(sw) *self)
{
	return stream_create(self->fd, S_LEN, S_TOKEN, self->data, NULL) == 0 &&
	       stream_create(self->fd, 64, 16, NULL, NULL) == 1 ? 0 : -1;
}

/*
 * The setting of the move tests: two_streams(), DPU HELD held by wfd[0]
 * with both streams open, the window mapped.
 */
static int move_setup(FIXTURE_DATA(sw) *self)
{
	if (two_streams(self) || hold(self, HELD) ||
	    stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD, 0, NULL) ||
	    stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 1, HELD, 0, NULL))
		return -1;
	return map_window(self);
}

/* Stream @id's cursor for the worker (as DPU HELD) */
static int wcursor(FIXTURE_DATA(sw) *self, uint32_t id)
{
	return cursor_of(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, id, HELD);
}

/* @len bytes of the window at @off are all zero */
static bool win_zero(FIXTURE_DATA(sw) *self, uint64_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (self->win[off + i])
			return false;
	return true;
}

/* @len bytes of the window at @off are @want */
static bool win_is(FIXTURE_DATA(sw) *self, uint64_t off, const void *want,
		   size_t len)
{
	const uint8_t *w = want;
	size_t i;

	for (i = 0; i < len; i++)
		if (self->win[off + i] != w[i])
			return false;
	return true;
}

/* Token @i of stream 0 as a down move gives it: data, then the header */
static size_t token0(FIXTURE_DATA(sw) *self, uint32_t i, uint8_t *out)
{
	uint32_t size = i < 6 ? 16 : 4, h[2] = { size, i < 5 ? 16 : i == 5 ? 4 : 0 };

	memcpy(out, self->data + 16 * i, size);
	memcpy(out + size, h, 8);
	return size + 8;
}

static const unsigned long wcmds[] = {
	DPUSIM_IOCTL_WORKER_STREAM_OPEN, DPUSIM_IOCTL_WORKER_STREAM_CLOSE,
	DPUSIM_IOCTL_WORKER_STREAM_SEEK,
};

/* ------------------------------------------- WORKER_STREAM_OPEN/_CLOSE/_SEEK */

/* The struct's size: under the first version EINVAL, past it E2BIG */
TEST_F(sw, wcmd_short_struct)
{
	struct dpusim_stream_cmd c = {
		.size = offsetof(struct dpusim_stream_cmd, prev), .core = HELD,
	};
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	for (i = 0; i < 3; i++) {
		c.size = offsetof(struct dpusim_stream_cmd, prev);
		EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], wcmds[i], &c));
		c.size = 4;
		EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], wcmds[i], &c));
	}
	/* nothing happened: the stream opens now, with the minimum size */
	c.size = offsetofend(struct dpusim_stream_cmd, prev);
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, &c));
	EXPECT_EQ(0, c.cursor);
	EXPECT_EQ(S_TOKEN, c.token);
}

TEST_F(sw, wcmd_long_struct)
{
	struct {
		struct dpusim_stream_cmd c;
		uint64_t tail;
	} big = { .c = { .size = sizeof(big), .core = HELD }, .tail = 1 };
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	for (i = 0; i < 3; i++)
		EXPECT_ERRNO(E2BIG, ioctl(self->wfd[0], wcmds[i], &big.c));
	/* a zero tail is fine, and left alone */
	big.tail = 0;
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, &big.c));
	EXPECT_EQ(sizeof(big.c), big.c.size);
	EXPECT_EQ(0, big.tail);
	EXPECT_EQ(S_TOKENS, big.c.nr_tokens);
}

TEST_F(sw, wcmd_bad_pointer)
{
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	for (i = 0; i < 3; i++) {
		EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], wcmds[i], 16));
		EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], wcmds[i], NULL));
	}
}

/* The answer cannot be written: nothing happened */
TEST_F(sw, wcmd_readonly_struct)
{
	struct dpusim_stream_cmd *c = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, c);
	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	*c = (struct dpusim_stream_cmd){ .size = sizeof(*c), .core = HELD };
	ASSERT_EQ(0, mprotect(c, PAGE, PROT_READ));
	EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, c));
	/* not open: the host opens it as another core */
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 5, 0, NULL));
	munmap(c, PAGE);
}

/* A worker file holding no DPU acts as none: EPERM */
TEST_F(sw, wcmd_nothing_held)
{
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], 0, 0, 0, NULL));
		EXPECT_EQ(EPERM, errno);
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], 0, HELD, 0, NULL));
		EXPECT_EQ(EPERM, errno);
	}
	/* launched but not claimed: still nothing held */
	ASSERT_EQ(0, do_launch(self->fd, HELD, 1));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			   0, NULL));
	EXPECT_EQ(EPERM, errno);
	/* held and finished: nothing held again */
	ASSERT_EQ(HELD, claim(self->wfd[0]));
	ASSERT_EQ(0, finish(self->wfd[0], HELD));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			   0, NULL));
	EXPECT_EQ(EPERM, errno);
	/* and the stream is open by nobody */
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, HELD, 0, NULL));
}

/* Only as the DPU held: EPERM for any other core */
TEST_F(sw, wcmd_other_core)
{
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	/* stream 0 open by core 4 (the host, DPU 4 idle) */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, NULL));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], 0, 4, 0, NULL));
		EXPECT_EQ(EPERM, errno);
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], 1, 0, 0, NULL));
		EXPECT_EQ(EPERM, errno);
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], 1,
				   self->info.nr_dpus - 1, 0, NULL));
		EXPECT_EQ(EPERM, errno);
	}
	/* nothing changed: stream 0 is core 4's, stream 1 nobody's */
	EXPECT_EQ(0, cursor_of(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 4));
	EXPECT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 1, HELD,
			  0, NULL));
}

TEST_F(sw, wcmd_bad_flags)
{
	struct dpusim_stream_cmd c = { .size = sizeof(c), .core = HELD };
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	for (i = 0; i < 3; i++) {
		c.flags = 1;
		EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], wcmds[i], &c));
		c.flags = 1u << 31;
		EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], wcmds[i], &c));
	}
	/* the same without the flag opens it */
	c.flags = 0;
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, &c));
}

/*
 * A token buffer (@buf) is for host threads: on a worker file EINVAL,
 * nothing pinned, the stream not open
 */
TEST_F(sw, wopen_with_buf)
{
	long long pinned = sysfs_rank_attr(0, "pinned_pages");
	struct dpusim_stream_cmd c = { .size = sizeof(c), .core = HELD };
	void *buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	c.buf = (uintptr_t)buf;
	c.buf_len = PAGE;
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, &c));
	EXPECT_EQ(pinned, sysfs_rank_attr(0, "pinned_pages"));
	/* the same without the buffer opens it */
	c.buf = c.buf_len = 0;
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, &c));
	munmap(buf, PAGE);
}

TEST_F(sw, wcmd_delta_with_open_close)
{
	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			   1, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			   INT_MIN, NULL));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			  0, NULL));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 0, HELD,
			   -1, NULL));
	EXPECT_EQ(EINVAL, errno);
	/* still open: a close without delta works */
	EXPECT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 0, HELD,
			  0, NULL));
}

/* A core past the rank is EINVAL before whether it is held */
TEST_F(sw, wcmd_core_past_rank)
{
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], 0, self->info.nr_dpus,
				   0, NULL));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], 0, UINT32_MAX, 0, NULL));
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(sw, wcmd_no_stream)
{
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], 2, HELD, 0, NULL));
		EXPECT_EQ(ENOENT, errno);
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], DPUSIM_STREAM_MAX, HELD,
				   0, NULL));
		EXPECT_EQ(ENOENT, errno);
		EXPECT_EQ(-1, stream_cmd(self->wfd[0], wcmds[i], UINT32_MAX, HELD, 0,
				   NULL));
		EXPECT_EQ(ENOENT, errno);
	}
}

/* One core at a time: a stream another core has open is EBUSY */
TEST_F(sw, wopen_by_other_core)
{
	struct dpusim_stream_cmd o;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 5, 0, NULL));
	ASSERT_EQ(0, hold(self, HELD));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			   0, NULL));
	EXPECT_EQ(EBUSY, errno);
	/* core 5 still has it, at its cursor */
	EXPECT_EQ(0, cursor_of(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 5));
	/* open by the DPU itself: a second open is EBUSY too */
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 1, HELD,
			  0, &o));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 1, HELD,
			   0, NULL));
	EXPECT_EQ(EBUSY, errno);
	/* and the host as another core, too */
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 1, 5, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	/* once core 5 closed it, the DPU opens it */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 5, 0, NULL));
	EXPECT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			  0, NULL));
}

TEST_F(sw, wclose_not_open)
{
	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 0, HELD,
			   0, NULL));
	EXPECT_EQ(EINVAL, errno);	/* never opened */
	/* open by another core */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 5, 0, NULL));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 0, HELD,
			   0, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, cursor_of(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 5));
	/* closed twice */
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 1, HELD,
			  0, NULL));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 1, HELD,
			  0, NULL));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 1, HELD,
			   0, NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(sw, wseek_not_open)
{
	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, HELD,
			   1, NULL));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 5, 0, NULL));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, HELD,
			   1, NULL));
	EXPECT_EQ(EINVAL, errno);
	/* core 5's cursor did not move */
	EXPECT_EQ(0, cursor_of(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 5));
}

/* OPEN, SEEK, CLOSE as the DPU held: every out field */
TEST_F(sw, wcmd_out_fields)
{
	static const struct {
		unsigned long ioc;
		int32_t delta;
		uint32_t cursor, token, prev;
		uint64_t offset;
	} steps[] = {
		{ DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, 0, 16, 0, 0 },
		{ DPUSIM_IOCTL_WORKER_STREAM_SEEK, 6, 6, 4, 16, 144 },
		{ DPUSIM_IOCTL_WORKER_STREAM_SEEK, -1, 5, 16, 16, 120 },
		{ DPUSIM_IOCTL_WORKER_STREAM_SEEK, INT_MAX, 7, 0, 4, 156 },
		{ DPUSIM_IOCTL_WORKER_STREAM_SEEK, INT_MIN, 0, 16, 0, 0 },
		{ DPUSIM_IOCTL_WORKER_STREAM_SEEK, 100, 7, 0, 4, 156 },
		{ DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 0, 7, 0, 4, 156 },
	};
	struct dpusim_stream_cmd o;
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		memset(&o, 0xee, sizeof(o));
		ASSERT_EQ(0, stream_cmd(self->wfd[0], steps[i].ioc, 0, HELD,
				  steps[i].delta, &o)) TH_LOG("step %zu: %s", i,
							      strerror(errno));
		EXPECT_EQ(sizeof(o), o.size) TH_LOG("step %zu", i);
		EXPECT_EQ(0, o.flags) TH_LOG("step %zu", i);
		EXPECT_EQ(0, o.id) TH_LOG("step %zu", i);
		EXPECT_EQ(HELD, o.core) TH_LOG("step %zu", i);
		EXPECT_EQ(steps[i].delta, o.delta) TH_LOG("step %zu", i);
		EXPECT_EQ(steps[i].cursor, o.cursor) TH_LOG("step %zu", i);
		EXPECT_EQ(steps[i].token, o.token) TH_LOG("step %zu", i);
		EXPECT_EQ(S_TOKENS, o.nr_tokens) TH_LOG("step %zu", i);
		EXPECT_EQ(S_MEM, o.mem_size) TH_LOG("step %zu", i);
		EXPECT_EQ(steps[i].offset, o.offset) TH_LOG("step %zu", i);
		EXPECT_EQ(S_TOKEN, o.token_size) TH_LOG("step %zu", i);
		EXPECT_EQ(steps[i].prev, o.prev) TH_LOG("step %zu", i);
	}
	/* closed: the host opens it as another core, on token 0 */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, &o));
	EXPECT_EQ(0, o.cursor);
	/* an empty stream: no token, its one header */
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 1, HELD,
			  0, &o));
	EXPECT_EQ(0, o.cursor);
	EXPECT_EQ(0, o.token);
	EXPECT_EQ(0, o.nr_tokens);
	EXPECT_EQ(64 + 9 * 8, o.mem_size);
	EXPECT_EQ(0, o.offset);
	EXPECT_EQ(16, o.token_size);
}

/* The worker's commands on the rank file and the rank's on the worker file */
TEST_F(sw, wrong_file_enotty)
{
	struct dpusim_worker_stream_move m = { .size = sizeof(m) };
	struct dpusim_worker_stream_wait wt = { .size = sizeof(wt) };
	struct dpusim_stream_cmd c = { .size = sizeof(c), .core = HELD };
	size_t i;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	for (i = 0; i < 3; i++)
		EXPECT_ERRNO(ENOTTY, ioctl(self->fd, wcmds[i], &c));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &wt));
	EXPECT_ERRNO(ENOTTY, ioctl(self->wfd[0], DPUSIM_IOCTL_STREAM_OPEN, &c));
	EXPECT_ERRNO(ENOTTY, ioctl(self->wfd[0], DPUSIM_IOCTL_STREAM_SEEK, &c));
	EXPECT_ERRNO(ENOTTY, ioctl(self->wfd[0], DPUSIM_IOCTL_STREAM_CLOSE, &c));
	/* the stream is open by nobody */
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, NULL));
}

/* ------------------------------------------------ WORKER_STREAM_MOVE */

/*
 * The struct's size: under the first version (up to @blocks) EINVAL; the
 * first version moves (the fields past it read as zeros, @next is not
 * answered); the whole struct answers @next; past it E2BIG with a
 * non-zero tail, fine with zeros (left alone).
 */
TEST_F(sw, move_struct_size)
{
	const size_t v1 = offsetofend(struct dpusim_worker_stream_move, blocks);
	struct {
		struct dpusim_worker_stream_move m;
		uint64_t tail;
	} big = {
		.m = {
			.flags = DPUSIM_STREAM_MOVE_DOWN, .nr_blocks = 1,
			.offset = 8, .blocks = { { 0, 24 } },
			.next = 0xdeadbeef,
		},
	};
	uint8_t want[24];

	ASSERT_LE(v1, sizeof(big.m));
	ASSERT_EQ(0, move_setup(self));
	big.m.size = offsetof(struct dpusim_worker_stream_move,
			      blocks[DPUSIM_STREAM_MOVE_MAX_BLOCKS - 1]);
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE,
				   &big.m));
	big.m.size = v1 - 1;
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE,
				   &big.m));
	big.m.size = 4;
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE,
				   &big.m));
	big.m.size = sizeof(big);
	big.tail = 1ULL << 40;
	EXPECT_ERRNO(E2BIG, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE,
				  &big.m));
	EXPECT_EQ(0, wcursor(self, 0));		/* nothing moved */
	EXPECT_TRUE(win_zero(self, 0, 24));
	EXPECT_EQ(0xdeadbeef, big.m.next);
	/* the first version: token 0 moves, nothing past it is written */
	big.m.size = v1;
	ASSERT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE, &big.m))
		TH_LOG("%s", strerror(errno));
	EXPECT_EQ(1, wcursor(self, 0));
	token0(self, 0, want);
	EXPECT_TRUE(win_is(self, 0, want, 24));
	EXPECT_EQ(0xdeadbeef, big.m.next);
	EXPECT_EQ(1ULL << 40, big.tail);
	/* the whole struct and a zero tail: token 1, @next answered */
	big.m.size = sizeof(big);
	big.tail = 0;
	big.m.offset = 32;
	big.m.blocks[0].offset = 64;
	ASSERT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE, &big.m))
		TH_LOG("%s", strerror(errno));
	EXPECT_EQ(2, wcursor(self, 0));
	token0(self, 1, want);
	EXPECT_TRUE(win_is(self, 64, want, 24));
	EXPECT_EQ(sizeof(big.m), big.m.size);
	EXPECT_EQ(S_TOKEN, big.m.next);
	EXPECT_EQ(0, big.tail);
}

/* @__reserved must be 0 (and, in a first-version struct, reads as 0) */
TEST_F(sw, move_reserved)
{
	struct dpusim_worker_stream_move m = {
		.size = sizeof(m), .flags = DPUSIM_STREAM_MOVE_DOWN, .nr_blocks = 1,
		.offset = 8, .blocks = { { 0, 24 } }, .__reserved = 1,
	};

	ASSERT_EQ(0, move_setup(self));
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m));
	m.__reserved = 1u << 31;
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m));
	EXPECT_EQ(0, wcursor(self, 0));
	EXPECT_TRUE(win_zero(self, 0, 24));
	m.size = offsetofend(struct dpusim_worker_stream_move, blocks);
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m));
	EXPECT_EQ(1, wcursor(self, 0));
}

/*
 * @next: down, the size of the token after the one moved (0 after the
 * last); up, 0.  An answer that cannot be written: EFAULT, nothing moved.
 */
TEST_F(sw, move_next)
{
	static const uint32_t next[S_TOKENS] = { 16, 16, 16, 16, 16, 4, 0 };
	struct dpusim_worker_stream_move m, *ro;
	uint32_t tok[6] = { 0, 8, 1, 2, 8, 0 }, i;

	ASSERT_EQ(0, move_setup(self));
	for (i = 0; i < S_TOKENS; i++) {
		m = (struct dpusim_worker_stream_move){
			.size = sizeof(m), .flags = DPUSIM_STREAM_MOVE_DOWN |
			(i % 2 ? DPUSIM_STREAM_MOVE_ASYNC : 0),
			.nr_blocks = 1, .offset = 24 * i + 8,
			.blocks = { { 64 * i, i < 6 ? 24 : 12 } }, .next = 77,
		};
		ASSERT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m))
			TH_LOG("token %u: %s", i, strerror(errno));
		EXPECT_EQ(next[i], m.next) TH_LOG("token %u", i);
	}
	memcpy((void *)self->win, tok, sizeof(tok));
	m = (struct dpusim_worker_stream_move){
		.size = sizeof(m), .nr_blocks = 1, .stream = 1,
		.blocks = { { 0, 24 } }, .next = 77,
	};
	ASSERT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m));
	EXPECT_EQ(0, m.next);
	/* read-only: EFAULT, the cursor where it was */
	ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		  -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	*ro = (struct dpusim_worker_stream_move){
		.size = sizeof(*ro), .nr_blocks = 1, .stream = 1, .offset = 16,
		.blocks = { { 0, 24 } },
	};
	ASSERT_EQ(0, mprotect(ro, PAGE, PROT_READ));
	EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE, ro));
	EXPECT_EQ(1, wcursor(self, 1));
	munmap(ro, PAGE);
}

TEST_F(sw, move_bad_pointer)
{
	ASSERT_EQ(0, move_setup(self));
	EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE,
				   16));
	EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE,
				   NULL));
	EXPECT_EQ(0, wcursor(self, 0));
}

TEST_F(sw, move_bad_flags)
{
	struct dpusim_window_block b = { 0, 24 };
	static const uint32_t bad[] = { 1u << 2, 1u << 31, ~0u };
	size_t i;

	ASSERT_EQ(0, move_setup(self));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN | bad[i],
				    0, 8, 1, &b));
		EXPECT_EQ(EINVAL, errno) TH_LOG("flags %#x", bad[i]);
	}
	EXPECT_EQ(0, wcursor(self, 0));
	EXPECT_TRUE(win_zero(self, 0, 24));
	EXPECT_EQ(0, wdown(self->wfd[0], 0, 8, 24, 0));
}

/* 1 .. DPUSIM_STREAM_MOVE_MAX_BLOCKS blocks */
TEST_F(sw, move_nr_blocks)
{
	struct dpusim_window_block b[4] = {
		{ 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 0 },
	};

	struct dpusim_worker_stream_move m = {
		.size = sizeof(m), .flags = DPUSIM_STREAM_MOVE_DOWN,
		.nr_blocks = 4, .offset = 8,
		.blocks = { { 0, 8 }, { 8, 8 }, { 16, 8 } },
	};

	ASSERT_EQ(0, move_setup(self));
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 0, b));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE,
				   &m));
	m.nr_blocks = UINT32_MAX;
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_MOVE,
				   &m));
	EXPECT_EQ(0, wcursor(self, 0));
	EXPECT_TRUE(win_zero(self, 0, 24));
	EXPECT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 3, b));
	EXPECT_EQ(1, wcursor(self, 0));
}

/* A block of length 0, even among blocks that add up */
TEST_F(sw, move_block_length_zero)
{
	struct dpusim_window_block b[3] = { { 0, 24 }, { 64, 0 }, { 128, 0 } };

	ASSERT_EQ(0, move_setup(self));
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 2, b));
	EXPECT_EQ(EINVAL, errno);
	b[0] = (struct dpusim_window_block){ 0, 0 };
	b[1] = (struct dpusim_window_block){ 64, 24 };
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 2, b));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, wcursor(self, 0));
	EXPECT_TRUE(win_zero(self, 64, 24));
	EXPECT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 1, b + 1));
}

/* Blocks past the WRAM (into the gap before the MRAM side) */
TEST_F(sw, move_block_past_wram)
{
	uint64_t w = self->info.wram_size;
	struct dpusim_window_block b = { w - 16, 24 };
	struct dpusim_window_block bb[3] = { { 0, 8 }, { 8, 8 }, { w - 4, 8 } };
	uint8_t want[24];

	ASSERT_EQ(0, move_setup(self));
	ASSERT_LT(w + 24, DPUSIM_WINDOW_MRAM);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, w - 16));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, w));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, w + 4096));
	EXPECT_EQ(EINVAL, errno);
	/* the last block of three is the one that leaves it */
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 3, bb));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, wcursor(self, 0));
	EXPECT_TRUE(win_zero(self, 0, 24));
	EXPECT_TRUE(win_zero(self, w - 32, 32));
	/* the last 24 bytes of WRAM are fine */
	b.offset = w - 24;
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 1, &b))
		TH_LOG("%s", strerror(errno));
	token0(self, 0, want);
	EXPECT_TRUE(win_is(self, w - 24, want, 24));
}

TEST_F(sw, move_block_past_mram)
{
	uint64_t m = DPUSIM_WINDOW_MRAM + self->info.mram_size;
	uint8_t want[24];

	ASSERT_EQ(0, move_setup(self));
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, m - 16));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, m));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, DPUSIM_WINDOW_SIZE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, UINT64_MAX - 8));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, wcursor(self, 0));
	EXPECT_TRUE(win_zero(self, m - 32, 32));
	/* the last 24 bytes of MRAM are fine */
	ASSERT_EQ(0, wdown(self->wfd[0], 0, 8, 24, m - 24)) TH_LOG("%s",
								     strerror(errno));
	token0(self, 0, want);
	EXPECT_TRUE(win_is(self, m - 24, want, 24));
}

/* A block must lie in one memory: not across the gap, not wrapping */
TEST_F(sw, move_block_straddling)
{
	struct dpusim_window_block b[2] = { { 0, 16 }, { 8, UINT64_MAX } };

	ASSERT_EQ(0, move_setup(self));
	/* from the end of the WRAM side into the MRAM side */
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, DPUSIM_WINDOW_MRAM - 8));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, DPUSIM_WINDOW_MRAM - 23));
	EXPECT_EQ(EINVAL, errno);
	/* offset + length wraps */
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 2, b));
	EXPECT_EQ(EINVAL, errno);
	b[1] = (struct dpusim_window_block){ UINT64_MAX - 7, 8 };
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 2, b));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, wcursor(self, 0));
	EXPECT_TRUE(win_zero(self, DPUSIM_WINDOW_MRAM, 24));
	/* exactly at the start of the MRAM side: fine */
	EXPECT_EQ(0, wdown(self->wfd[0], 0, 8, 24, DPUSIM_WINDOW_MRAM));
}

/* No DPU held: EPERM, whatever the stream */
TEST_F(sw, move_nothing_held)
{
	struct dpusim_window_block b = { 0, 24 };

	ASSERT_EQ(0, two_streams(self));
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	/* stream 0 open by core HELD (the host, DPU HELD idle) */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, HELD, 0, NULL));
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 1, &b));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN |
			    DPUSIM_STREAM_MOVE_ASYNC, 0, 8, 1, &b));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 7, 8, 1, &b));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0, cursor_of(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, HELD));
	/* after FINISH it holds nothing again */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, HELD, 0, NULL));
	ASSERT_EQ(0, hold(self, HELD));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			  0, NULL));
	ASSERT_EQ(0, finish(self->wfd[0], HELD));
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 1, &b));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0, cursor_of(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, HELD));
}

TEST_F(sw, move_no_stream)
{
	struct dpusim_window_block b = { 0, 24 };

	ASSERT_EQ(0, move_setup(self));
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 2, 8, 1, &b));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, UINT32_MAX, 8,
			    1, &b));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, DPUSIM_STREAM_MAX, 0, 1, &b));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_TRUE(win_zero(self, 0, 24));
}

/* A stream the held DPU has not open: EINVAL, nothing moved */
TEST_F(sw, move_stream_not_open)
{
	struct dpusim_window_block b = { 0, 24 };
	uint32_t hdr[6] = { 0, 8, 1, 2, 8, 0 };
	struct dpusim_stream_cmd o;

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	ASSERT_EQ(0, map_window(self));
	/* open by nobody */
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	memcpy((void *)self->win, hdr, sizeof(hdr));
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, 1, 0, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	/* open by another core (the host as core 5) */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 5, 0, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 1, 5, 0, NULL));
	b.offset = 256;
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	b.offset = 0;
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, 1, 0, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	/* nothing moved: the cursors, the window, the empty stream */
	EXPECT_EQ(0, cursor_of(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 5));
	EXPECT_EQ(0, cursor_of(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 1, 5));
	EXPECT_TRUE(win_zero(self, 256, 24));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 1, 5, 0, &o));
	EXPECT_EQ(0, o.nr_tokens);
}

/* Down: the descriptor must be the token at the cursor and its header */
TEST_F(sw, move_down_wrong_token)
{
	ASSERT_EQ(0, move_setup(self));
	/* the header, not the data */
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 0, 24, 0));
	EXPECT_EQ(EINVAL, errno);
	/* the data without the header after it, or more */
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 16, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 32, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 23, 0));
	EXPECT_EQ(EINVAL, errno);
	/* the next token */
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 32, 24, 0));
	EXPECT_EQ(EINVAL, errno);
	/* past the stream's memory */
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, S_MEM, 24, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, UINT64_MAX - 7, 24, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, wcursor(self, 0));
	EXPECT_TRUE(win_zero(self, 0, 32));
	/* after a seek, the token there; the first one is wrong now */
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, HELD,
			  6, NULL));
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 152, 24, 0));	/* 16 bytes: no */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, wdown(self->wfd[0], 0, 152, 12, 0));	/* token 6: 4 */
	EXPECT_EQ(7, wcursor(self, 0));
}

/* Up: a stream created empty, at the cursor's header, n + 16 bytes, n % 8 == 0 */
TEST_F(sw, move_up_wrong)
{
	struct dpusim_window_block b = { 0, 32 };
	uint32_t tok[8] = { 0, 16, 1, 2, 3, 4, 16, 0 };
	struct dpusim_stream_cmd o;

	ASSERT_EQ(0, move_setup(self));
	memcpy((void *)self->win, tok, sizeof(tok));
	/* a stream made of data */
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, 0, 0, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	/* not at the cursor's header */
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, 1, 8, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	/* 12 bytes of data, not a multiple of 8 */
	b.length = 28;
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, 1, 0, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	/* no data: less than two headers and 8 bytes */
	b.length = 16;
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, 1, 0, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	b.length = 8;
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, 1, 0, 1, &b));
	EXPECT_EQ(EINVAL, errno);
	/* nothing happened to either stream */
	EXPECT_EQ(0, wcursor(self, 0));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 1, HELD,
			  0, &o));
	EXPECT_EQ(0, o.cursor);
	EXPECT_EQ(0, o.nr_tokens);
	/* right: 16 bytes at the cursor */
	b.length = 32;
	EXPECT_EQ(0, wmove(self->wfd[0], 0, 1, 0, 1, &b));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 1, HELD,
			  0, &o));
	EXPECT_EQ(1, o.cursor);
	EXPECT_EQ(1, o.nr_tokens);
	EXPECT_EQ(24, o.offset);
	EXPECT_EQ(16, o.prev);
}

/* The end of the stream: ENODATA, sticky */
TEST_F(sw, move_down_end)
{
	struct dpusim_stream_cmd o;

	ASSERT_EQ(0, move_setup(self));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, HELD,
			  6, NULL));
	ASSERT_EQ(0, wdown(self->wfd[0], 0, 152, 12, 0));
	/* the last token again, the end's "token", any other */
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 152, 12, 0));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 164, 8, 64));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, wdown(self->wfd[0], 0, 8, 24, 64));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN |
			    DPUSIM_STREAM_MOVE_ASYNC, 0, 8,
			    1, &(struct dpusim_window_block){ 64, 24 }));
	EXPECT_EQ(ENODATA, errno);
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, HELD,
			  0, &o));
	EXPECT_EQ(S_TOKENS, o.cursor);
	EXPECT_EQ(0, o.token);
	EXPECT_TRUE(win_zero(self, 64, 24));
	/* an empty stream is at its end from the start */
	EXPECT_EQ(-1, wdown(self->wfd[0], 1, 8, 8, 64));
	EXPECT_EQ(ENODATA, errno);
}

/*
 * Up past the capacity: ENOSPC, and nothing written (the stream's mapping
 * shows the end header in place, zeros after it), the cursor as it was.
 */
TEST_F(sw, move_up_capacity)
{
	struct dpusim_window_block b[3];
	const uint32_t *m;
	uint32_t i, h[2], t[2];
	const uint8_t *mb;
	struct dpusim_stream_cmd o;

	ASSERT_EQ(0, move_setup(self));
	m = (const uint32_t *)map_stream(self, 1, PAGE);
	ASSERT_NE(NULL, m) TH_LOG("%s", strerror(errno));
	mb = (const uint8_t *)m;
	/* two tokens of 32 bytes: data in MRAM, headers in WRAM */
	for (i = 0; i < 2; i++) {
		h[0] = i ? 32 : 0;
		h[1] = 32;
		t[0] = 32;
		t[1] = 0;
		memcpy((void *)(self->win + 16 * i), h, 8);
		memcpy((void *)(self->win + 1024 + 16 * i), t, 8);
		memcpy((void *)(self->win + DPUSIM_WINDOW_MRAM + 64 * i),
		       self->data + 64 * i, 32);
		b[0] = (struct dpusim_window_block){ 16 * i, 8 };
		b[1] = (struct dpusim_window_block){ DPUSIM_WINDOW_MRAM + 64 * i, 32 };
		b[2] = (struct dpusim_window_block){ 1024 + 16 * i, 8 };
		ASSERT_EQ(0, wmove(self->wfd[0], 0, 1, 40 * i, 3, b))
			TH_LOG("token %u: %s", i, strerror(errno));
	}
	/* 64 bytes used: 8 more do not fit */
	h[0] = 32;
	h[1] = 8;
	t[0] = 8;
	memcpy((void *)(self->win + 2048), h, 8);
	memset((void *)(self->win + 2056), 0x5a, 8);
	memcpy((void *)(self->win + 2064), t, 8);
	b[0] = (struct dpusim_window_block){ 2048, 24 };
	EXPECT_EQ(-1, wmove(self->wfd[0], 0, 1, 80, 1, b));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(-1, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_ASYNC, 1, 80, 1, b));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(0, wwait(self->wfd[0], 0));
	/* nothing written: the end header, zeros to the end of the memory */
	EXPECT_EQ(32, m[20]);
	EXPECT_EQ(0, m[21]);
	for (i = 88; i < 64 + 9 * 8; i++)
		ASSERT_EQ(0, mb[i]) TH_LOG("stream byte %u", i);
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 1, HELD,
			  0, &o));
	EXPECT_EQ(2, o.cursor);
	EXPECT_EQ(2, o.nr_tokens);
	EXPECT_EQ(80, o.offset);
	/* what was written is there */
	EXPECT_EQ(0, m[0]);
	EXPECT_EQ(32, m[1]);
	EXPECT_EQ(0, memcmp(mb + 8, self->data, 32));
	EXPECT_EQ(32, m[10]);
	EXPECT_EQ(32, m[11]);
	EXPECT_EQ(0, memcmp(mb + 48, self->data + 64, 32));
}

/*
 * Down, three tokens, each in three blocks across WRAM and MRAM (at odd
 * offsets): byte for byte through the window, the bytes around untouched,
 * the cursor on; after FINISH the same bytes by a transfer.
 */
TEST_F(sw, move_down_bytes)
{
	uint64_t mr = DPUSIM_WINDOW_MRAM + 5 * PAGE - 7;
	uint8_t want[24], back[64];
	struct dpusim_window_block b[3];
	uint32_t i;

	ASSERT_EQ(0, move_setup(self));
	for (i = 0; i < 3; i++) {
		b[0] = (struct dpusim_window_block){ 100 * i + 3, 5 };
		b[1] = (struct dpusim_window_block){ mr + 100 * i, 11 };
		b[2] = (struct dpusim_window_block){ 4096 - 4 + 100 * i, 8 };
		ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0,
				   24 * i + 8, 3, b)) TH_LOG("token %u: %s", i,
							     strerror(errno));
		EXPECT_EQ(i + 1, wcursor(self, 0));
		token0(self, i, want);
		EXPECT_TRUE(win_is(self, b[0].offset, want, 5)) TH_LOG("token %u", i);
		EXPECT_TRUE(win_is(self, b[1].offset, want + 5, 11)) TH_LOG("token %u", i);
		EXPECT_TRUE(win_is(self, b[2].offset, want + 16, 8)) TH_LOG("token %u", i);
		EXPECT_TRUE(win_zero(self, b[0].offset - 3, 3));
		EXPECT_TRUE(win_zero(self, b[0].offset + 5, 3));
		EXPECT_TRUE(win_zero(self, b[1].offset - 1, 1));
		EXPECT_TRUE(win_zero(self, b[1].offset + 11, 1));
		EXPECT_TRUE(win_zero(self, b[2].offset + 8, 4));
	}
	ASSERT_EQ(0, finish(self->wfd[0], HELD));
	/* the host reads the DPU's memories */
	for (i = 0; i < 3; i++) {
		token0(self, i, want);
		ASSERT_EQ(0, xfer_one(self->fd, HELD, DPUSIM_XFER_FROM_DPU |
				      DPUSIM_XFER_WRAM, 100 * i, back, 16));
		EXPECT_EQ(0, memcmp(back + 3, want, 5)) TH_LOG("token %u", i);
		ASSERT_EQ(0, xfer_one(self->fd, HELD, DPUSIM_XFER_FROM_DPU,
				      (mr - DPUSIM_WINDOW_MRAM + 100 * i) & ~7ULL,
				      back, 24));
		EXPECT_EQ(0, memcmp(back + ((mr + 100 * i) & 7), want + 5, 11))
			TH_LOG("token %u", i);
		ASSERT_EQ(0, xfer_one(self->fd, HELD, DPUSIM_XFER_FROM_DPU |
				      DPUSIM_XFER_WRAM, 4096 - 4 + 100 * i, back, 8));
		EXPECT_EQ(0, memcmp(back, want + 16, 8)) TH_LOG("token %u", i);
	}
}

/*
 * Up: header, data and end header from WRAM and MRAM into an empty
 * stream, seen through the stream's mapping; then read back down.
 */
TEST_F(sw, move_up_bytes)
{
	uint32_t h[2] = { 0, 24 }, t[2] = { 24, 0 }, h2[2] = { 24, 8 }, t2[2] = { 8, 0 };
	struct dpusim_window_block b[3] = {
		{ 8, 8 }, { DPUSIM_WINDOW_MRAM + 3, 24 }, { 40, 8 },
	};
	uint8_t want[32];
	const uint8_t *m;
	struct dpusim_stream_cmd o;

	ASSERT_EQ(0, move_setup(self));
	m = map_stream(self, 1, PAGE);
	ASSERT_NE(NULL, m) TH_LOG("%s", strerror(errno));
	memcpy((void *)(self->win + 8), h, 8);
	memcpy((void *)(self->win + DPUSIM_WINDOW_MRAM + 3), self->data + 500, 24);
	memcpy((void *)(self->win + 40), t, 8);
	ASSERT_EQ(0, wmove(self->wfd[0], 0, 1, 0, 3, b)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, memcmp(m, h, 8));
	EXPECT_EQ(0, memcmp(m + 8, self->data + 500, 24));
	EXPECT_EQ(0, memcmp(m + 32, t, 8));
	/* a second token of 8, from one MRAM block */
	memcpy((void *)(self->win + DPUSIM_WINDOW_MRAM + 4096), h2, 8);
	memcpy((void *)(self->win + DPUSIM_WINDOW_MRAM + 4104), self->data + 900, 8);
	memcpy((void *)(self->win + DPUSIM_WINDOW_MRAM + 4112), t2, 8);
	b[0] = (struct dpusim_window_block){ DPUSIM_WINDOW_MRAM + 4096, 24 };
	ASSERT_EQ(0, wmove(self->wfd[0], 0, 1, 32, 1, b)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, memcmp(m + 32, h2, 8));
	EXPECT_EQ(0, memcmp(m + 40, self->data + 900, 8));
	EXPECT_EQ(0, memcmp(m + 48, t2, 8));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 1, HELD,
			  INT_MIN, &o));
	EXPECT_EQ(2, o.nr_tokens);
	EXPECT_EQ(24, o.token);
	/* read back down: token 0, then token 1 */
	ASSERT_EQ(0, wdown(self->wfd[0], 1, 8, 32, 2048));
	memcpy(want, self->data + 500, 24);
	memcpy(want + 24, h2, 8);
	EXPECT_TRUE(win_is(self, 2048, want, 32));
	ASSERT_EQ(0, wdown(self->wfd[0], 1, 40, 16, 2048 + 64));
	memcpy(want, self->data + 900, 8);
	memcpy(want + 8, t2, 8);
	EXPECT_TRUE(win_is(self, 2048 + 64, want, 16));
	EXPECT_EQ(-1, wdown(self->wfd[0], 1, 56, 8, 2048 + 128));
	EXPECT_EQ(ENODATA, errno);
}

/*
 * ASYNC: the cursor moves at once, WAIT waits for the copy; a move after
 * an asynchronous one waits for it; an asynchronous up move too.
 */
TEST_F(sw, move_async_wait)
{
	uint32_t h[2] = { 0, 16 }, t[2] = { 16, 0 };
	struct dpusim_window_block b = { 0, 24 };
	uint8_t want[24];
	const uint8_t *m;
	uint32_t i;

	ASSERT_EQ(0, move_setup(self));
	m = map_stream(self, 1, PAGE);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN |
			   DPUSIM_STREAM_MOVE_ASYNC, 0, 8, 1, &b));
	EXPECT_EQ(1, wcursor(self, 0));
	ASSERT_EQ(0, wwait(self->wfd[0], 0));
	token0(self, 0, want);
	EXPECT_TRUE(win_is(self, 0, want, 24));
	/* async, async, sync: each waits for the one before */
	for (i = 1; i < 4; i++) {
		b.offset = 64 * i;
		ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN |
				   (i < 3 ? DPUSIM_STREAM_MOVE_ASYNC : 0), 0,
				   24 * i + 8, 1, &b)) TH_LOG("token %u", i);
	}
	for (i = 1; i < 4; i++) {
		token0(self, i, want);
		EXPECT_TRUE(win_is(self, 64 * i, want, 24)) TH_LOG("token %u", i);
	}
	EXPECT_EQ(4, wcursor(self, 0));
	/* async up */
	memcpy((void *)(self->win + 1024), h, 8);
	memcpy((void *)(self->win + 1032), self->data + 300, 16);
	memcpy((void *)(self->win + 1048), t, 8);
	b = (struct dpusim_window_block){ 1024, 32 };
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_ASYNC, 1, 0, 1, &b));
	ASSERT_EQ(0, wwait(self->wfd[0], 0));
	EXPECT_EQ(0, memcmp(m, h, 8));
	EXPECT_EQ(0, memcmp(m + 8, self->data + 300, 16));
	EXPECT_EQ(0, memcmp(m + 24, t, 8));
	/* nothing in flight: WAIT returns at once */
	EXPECT_EQ(0, wwait(self->wfd[0], 0));
}

/* FINISH waits for the move in flight: the transfer after it sees it */
TEST_F(sw, finish_flushes_async)
{
	size_t len = DATA_LEN - 64;
	struct dpusim_window_block b = { DPUSIM_WINDOW_MRAM, len + 8 };
	uint8_t *back = malloc(len + 8);
	uint32_t h[2];

	ASSERT_NE(NULL, back);
	ASSERT_EQ(0, stream_create(self->fd, len, len, self->data, NULL));
	ASSERT_EQ(0, hold(self, HELD));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			  0, NULL));
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN |
			   DPUSIM_STREAM_MOVE_ASYNC, 0, 8, 1, &b));
	ASSERT_EQ(0, finish(self->wfd[0], HELD));
	ASSERT_EQ(0, xfer_one(self->fd, HELD, DPUSIM_XFER_FROM_DPU, 0, back,
			      len + 8));
	EXPECT_EQ(0, memcmp(back, self->data, len));
	memcpy(h, back + len, 8);
	EXPECT_EQ(len, h[0]);
	EXPECT_EQ(0, h[1]);
	free(back);
}

/* A worker file closed with a move in flight: the DPU faults, the copy done */
TEST_F(sw, close_flushes_async)
{
	size_t len = DATA_LEN - 64;
	struct dpusim_window_block b = { DPUSIM_WINDOW_MRAM + 8, len + 8 };
	uint8_t *back = malloc(len);
	struct dpusim_stream_cmd o;

	ASSERT_NE(NULL, back);
	ASSERT_EQ(0, stream_create(self->fd, len, len, self->data, NULL));
	ASSERT_EQ(0, hold(self, HELD));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			  0, NULL));
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN |
			   DPUSIM_STREAM_MOVE_ASYNC, 0, 8, 1, &b));
	close(self->wfd[0]);
	self->wfd[0] = -1;
	ASSERT_EQ(0, xfer_one(self->fd, HELD, DPUSIM_XFER_FROM_DPU, 8, back, len));
	EXPECT_EQ(0, memcmp(back, self->data, len));
	/* the stream stays open by the DPU, at its end */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, HELD, 0, &o));
	EXPECT_EQ(1, o.cursor);
	free(back);
}

/* ------------------------------------------------ WORKER_STREAM_WAIT */

TEST_F(sw, wait_bad_flags)
{
	ASSERT_EQ(0, hold(self, HELD));
	EXPECT_ERRNO(EINVAL, wwait(self->wfd[0], 1u << 1));
	EXPECT_ERRNO(EINVAL, wwait(self->wfd[0], 1u << 31));
	EXPECT_ERRNO(EINVAL, wwait(self->wfd[0], ~1u));
	EXPECT_EQ(0, wwait(self->wfd[0], 0));
	/* DPUSIM_STREAM_WAIT_KICK wakes the copy thread: none yet, or one */
	EXPECT_EQ(0, wwait(self->wfd[0], DPUSIM_STREAM_WAIT_KICK));
	ASSERT_EQ(0, stream_create(self->fd, S_LEN, S_TOKEN, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			  0, NULL));
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN |
			   DPUSIM_STREAM_MOVE_ASYNC, 0, 8, 1,
			   &(struct dpusim_window_block){ 0, 24 }));
	EXPECT_EQ(0, wwait(self->wfd[0], DPUSIM_STREAM_WAIT_KICK));
	EXPECT_EQ(0, wwait(self->wfd[0], 0));
	EXPECT_EQ(1, wcursor(self, 0));
}

TEST_F(sw, wait_struct_size)
{
	struct {
		struct dpusim_worker_stream_wait wt;
		uint64_t tail;
	} big = { .wt = { .size = 4 } };

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_WAIT,
				   &big.wt));
	big.wt.size = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_WAIT,
				   &big.wt));
	big.wt.size = sizeof(big);
	big.tail = 1;
	EXPECT_ERRNO(E2BIG, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_WAIT,
				  &big.wt));
	big.tail = 0;
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_WAIT, &big.wt));
	/* the minimum (first version): size and flags */
	big.wt.size = offsetofend(struct dpusim_worker_stream_wait, flags);
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_WAIT, &big.wt));
	EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_WAIT,
				   16));
}

/* ------------------------------------------------ the rank file's side */

/*
 * A host thread may not act as a RUNNING DPU: OPEN, CLOSE, SEEK and
 * DPUSIM_XFER_STREAM moves (down, up, synchronous or not) as that core
 * are EBUSY, nothing changed; other cores are fine; after FINISH the
 * host acts as it again.
 */
TEST_F(sw, rank_running_core_busy)
{
	uint32_t up[4] = { 0, 8, 0x11, 0x22 }, term[2] = { 8, 0 };
	uint8_t buf[64], tok[32];
	struct dpusim_stream_cmd o;
	long long ioctls;

	memcpy(tok, up, 16);
	memcpy(tok + 16, term, 8);
	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(2, stream_create(self->fd, S_LEN, S_TOKEN, self->data, NULL));
	/* streams 0 and 1 open by core HELD while it is idle */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, HELD, 0, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 1, HELD, 0, NULL));
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, HELD, 1));
	/* nobody holds it yet: RUNNING is what counts */
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 2, HELD, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, HELD, 1, NULL));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, HELD, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(HELD, claim(self->wfd[0]));
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 1, HELD, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	ioctls = sysfs_rank_attr(0, "xfer_ioctls");
	EXPECT_EQ(-1, xmove(self->fd, 0, HELD, DPUSIM_XFER_FROM_DPU, 8, buf, 24));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, xmove(self->fd, 0, HELD, DPUSIM_XFER_FROM_DPU |
			    DPUSIM_XFER_ASYNC, 8, buf, 24));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, xmove(self->fd, 1, HELD, 0, 0, tok, 24));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, xmove(self->fd, 1, HELD, DPUSIM_XFER_ASYNC, 0, tok, 24));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(ioctls, sysfs_rank_attr(0, "xfer_ioctls"));
	/* another core is fine */
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 2, 4, 0, NULL));
	EXPECT_EQ(0, xmove(self->fd, 2, 4, DPUSIM_XFER_FROM_DPU, 8, buf, 24));
	/* the DPU's program acts as the core meanwhile */
	EXPECT_EQ(0, cursor_of(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0,
			       HELD));
	ASSERT_EQ(0, finish(self->wfd[0], HELD));
	/* nothing changed: both still open by core HELD on token 0 */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, HELD, 0, &o));
	EXPECT_EQ(0, o.cursor);
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 1, HELD, 0, &o));
	EXPECT_EQ(0, o.cursor);
	EXPECT_EQ(0, o.nr_tokens);
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	/* and the host moves as core HELD again */
	EXPECT_EQ(0, xmove(self->fd, 0, HELD, DPUSIM_XFER_FROM_DPU, 8, buf, 24));
	EXPECT_EQ(0, memcmp(buf, self->data, 16));
	EXPECT_EQ(0, xmove(self->fd, 1, HELD, 0, 0, tok, 24));
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, HELD, 0, NULL));
}

/*
 * A stream a DPU opened stays open by it after FINISH, at its cursor:
 * another core cannot open it, the host as that core seeks, moves and
 * closes it.
 */
TEST_F(sw, open_after_finish)
{
	struct dpusim_window_block b = { 0, 24 };
	struct dpusim_stream_cmd o;
	uint8_t buf[32];

	ASSERT_EQ(0, two_streams(self));
	ASSERT_EQ(0, hold(self, HELD));
	ASSERT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			  0, NULL));
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 1, &b));
	ASSERT_EQ(0, finish(self->wfd[0], HELD));
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 4, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, HELD, 0, &o));
	EXPECT_EQ(1, o.cursor);
	EXPECT_EQ(24, o.offset);
	/* the host as core HELD moves token 1, then closes it */
	ASSERT_EQ(0, xmove(self->fd, 0, HELD, DPUSIM_XFER_FROM_DPU, 32, buf, 24));
	EXPECT_EQ(0, memcmp(buf, self->data + 16, 16));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, HELD, 0, &o));
	EXPECT_EQ(2, o.cursor);
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, &o));
	EXPECT_EQ(0, o.cursor);
}

/* The DPU's next run finds the stream open, at its cursor, and closes it */
TEST_F(sw, open_across_runs)
{
	struct dpusim_window_block b = { 0, 24 };
	uint8_t want[24];

	ASSERT_EQ(0, move_setup(self));
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 8, 1, &b));
	ASSERT_EQ(0, finish(self->wfd[0], HELD));
	ASSERT_EQ(0, hold(self, HELD));
	EXPECT_EQ(1, wcursor(self, 0));
	EXPECT_EQ(-1, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD,
			   0, NULL));
	EXPECT_EQ(EBUSY, errno);
	/* the window shows the token of the first run, and the next one moves */
	token0(self, 0, want);
	EXPECT_TRUE(win_is(self, 0, want, 24));
	b.offset = 64;
	ASSERT_EQ(0, wmove(self->wfd[0], DPUSIM_STREAM_MOVE_DOWN, 0, 32, 1, &b));
	token0(self, 1, want);
	EXPECT_TRUE(win_is(self, 64, want, 24));
	EXPECT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 0, HELD,
			  0, NULL));
	EXPECT_EQ(0, stream_cmd(self->wfd[0], DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 1, HELD,
			  0, NULL));
	ASSERT_EQ(0, finish(self->wfd[0], HELD));
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, NULL));
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 1, 4, 0, NULL));
}

/* ------------------------------------------------ the copy thread */

struct ring_hammer {
	struct dpusim_move_ring *r;
	int wfd, fd;
	volatile int stop;
	unsigned long answered, xfers;
	uint8_t *buf;		/* HOG_LEN bytes */
};

#define HOG_LEN		(4UL << 20)

/*
 * The host moves HOG_LEN bytes to DPU 5 and back, again and again: the
 * rank's xfer_lock is held most of the time (the copy thread sleeps on
 * it, not only spins).
 */
static void *xfer_hog_main(void *arg)
{
	struct ring_hammer *h = arg;

	while (!h->stop)
		if (!xfer_one(h->fd, 5, h->xfers & 1 ? DPUSIM_XFER_FROM_DPU : 0,
			      0, h->buf, HOG_LEN))
			h->xfers++;
	return NULL;
}

/*
 * Moves submitted through the ring one after the other, each one taken
 * by the copy thread (which takes the rank's xfer_lock for it) and
 * failing at once: a move for DPU HELD of a stream at its end (ENODATA),
 * or, between runs, EPERM.
 */
static void *ring_hammer_main(void *arg)
{
	struct ring_hammer *h = arg;
	struct dpusim_worker_stream_wait kick = {
		.size = sizeof(kick), .flags = DPUSIM_STREAM_WAIT_KICK,
	};
	uint32_t seq = 0;

	h->r->dpu = HELD;
	h->r->move = (struct dpusim_worker_stream_move){
		.size = sizeof(h->r->move), .flags = DPUSIM_STREAM_MOVE_DOWN,
		.stream = 1, .nr_blocks = 1, .offset = 8,
		.blocks = { { 4096, 24 } },
	};
	while (!h->stop) {
		__atomic_store_n(&h->r->submitted, ++seq, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		while (!h->stop &&
		       __atomic_load_n(&h->r->done, __ATOMIC_ACQUIRE) != seq) {
			if (__atomic_load_n(&h->r->flags, __ATOMIC_RELAXED) &
			    DPUSIM_MOVE_RING_NEED_WAKEUP)
				ioctl(h->wfd, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &kick);
			sched_yield();
		}
		h->answered++;
	}
	return NULL;
}

/*
 * FINISH right after an asynchronous move, while the copy thread takes
 * ring moves: FINISH (under the rank's xfer_lock) waits for the queued
 * move, which only the copy thread copies, whatever it was doing with
 * the lock meanwhile.  A thread that slept on the lock then would never
 * copy it: both would wait for ever (uninterruptibly).  Run after run.
 */
TEST_F_TIMEOUT(sw, finish_while_ring_busy, 120)
{
	struct ring_hammer h = { .wfd = -1, .fd = self->fd };
	struct dpusim_worker_stream_move m;
	struct dpusim_stream_cmd o;
	pthread_t t, hog;
	double end;
	int runs = 0, i;

	/* stream 0: 4096 tokens of 16; stream 1: at its end */
	ASSERT_EQ(0, stream_create(self->fd, 1 << 16, 16, self->data, NULL));
	ASSERT_EQ(1, stream_create(self->fd, 16, 16, self->data, NULL));
	ASSERT_EQ(0, hold(self, HELD));
	h.wfd = self->wfd[0];
	ASSERT_EQ(0, stream_cmd(h.wfd, DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD, 0, NULL));
	ASSERT_EQ(0, stream_cmd(h.wfd, DPUSIM_IOCTL_WORKER_STREAM_OPEN, 1, HELD, 0, NULL));
	ASSERT_EQ(0, stream_cmd(h.wfd, DPUSIM_IOCTL_WORKER_STREAM_SEEK, 1, HELD, 1, NULL));
	h.r = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, h.wfd,
		   DPUSIM_MMAP_MOVE_RING);
	ASSERT_NE(MAP_FAILED, h.r) TH_LOG("%s", strerror(errno));
	h.buf = malloc(HOG_LEN);
	ASSERT_NE(NULL, h.buf);
	memset(h.buf, 0x3c, HOG_LEN);
	ASSERT_EQ(0, pthread_create(&t, NULL, ring_hammer_main, &h));
	ASSERT_EQ(0, pthread_create(&hog, NULL, xfer_hog_main, &h));
	end = now_s() + 8;
	do {
		for (i = 0; i < 4; i++) {
			ASSERT_EQ(0, stream_cmd(h.wfd, DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0,
					  HELD, 0, &o));
			if (o.cursor == o.nr_tokens)
				ASSERT_EQ(0, stream_cmd(h.wfd, DPUSIM_IOCTL_WORKER_STREAM_SEEK,
						  0, HELD, INT_MIN, &o));
			m = (struct dpusim_worker_stream_move){
				.size = sizeof(m), .flags = DPUSIM_STREAM_MOVE_DOWN |
				DPUSIM_STREAM_MOVE_ASYNC, .stream = 0, .nr_blocks = 1,
				.offset = o.offset + 8, .blocks = { { 64 * i, 24 } },
			};
			ASSERT_EQ(0, ioctl(h.wfd, DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m))
				TH_LOG("%s", strerror(errno));
		}
		ASSERT_EQ(0, finish(h.wfd, HELD));
		runs++;
		ASSERT_EQ(0, do_launch(self->fd, HELD, 1));
		ASSERT_EQ(HELD, claim(h.wfd));
	} while (now_s() < end);
	h.stop = 1;
	pthread_join(t, NULL);
	pthread_join(hog, NULL);
	TH_LOG("%d runs, %lu ring moves answered, %lu transfers of the host",
	       runs, h.answered, h.xfers);
	EXPECT_LT(0, h.answered);
	EXPECT_LT(0, h.xfers);
	munmap(h.r, PAGE);
	free(h.buf);
}

TEST_HARNESS_MAIN
