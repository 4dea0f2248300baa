// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of streams through /dev/dpusim/rank0: DPUSIM_IOCTL_STREAM_CREATE,
 * _OPEN, _CLOSE and _SEEK, one test per failure path, the numbering in
 * creation order, one core at a time, the cursor, and the memory charged
 * and given back (sysfs stream_resident_bytes); a core's token buffer
 * registered at OPEN and DPUSIM_XFER_STREAM_BUF moves by offset into it
 * (sysfs pinned_pages, VmPin, RLIMIT_MEMLOCK, fork).
 */
#include <limits.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "common.h"

FIXTURE(stream) {
	int fd;
	struct dpusim_rank_info info;
	uint8_t data[4096];
};

FIXTURE_SETUP(stream)
{
	size_t i;

	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
	self->info = (struct dpusim_rank_info){ .size = sizeof(self->info) };
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &self->info));
	for (i = 0; i < sizeof(self->data); i++)
		self->data[i] = i * 7 + 1;
}

FIXTURE_TEARDOWN(stream)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* ------------------------------------------------------------ CREATE */

TEST_F(stream, create_short_struct)
{
	struct dpusim_stream_create c = {
		.size = offsetof(struct dpusim_stream_create, __reserved),
		.stream_size = 64, .token_size = 16,
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, &c));
}

TEST_F(stream, create_long_struct)
{
	struct {
		struct dpusim_stream_create c;
		uint64_t tail;
	} big = { .c = { .size = sizeof(big), .stream_size = 64,
			 .token_size = 16 }, .tail = 1 };

	EXPECT_ERRNO(E2BIG, ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, &big.c));
	/* zeros past the struct are fine */
	big.tail = 0;
	EXPECT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, &big.c));
	EXPECT_EQ(sizeof(struct dpusim_stream_create), big.c.size);
}

TEST_F(stream, create_bad_pointer)
{
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, 16));
}

TEST_F(stream, create_bad_flags)
{
	struct dpusim_stream_create c = {
		.size = sizeof(c), .flags = 1, .stream_size = 64,
		.token_size = 16,
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, &c));
}

TEST_F(stream, create_reserved)
{
	struct dpusim_stream_create c = {
		.size = sizeof(c), .stream_size = 64, .token_size = 16,
		.__reserved = 1,
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, &c));
}

/* EBSP's minimum: tokens of 16 bytes */
TEST_F(stream, create_token_under_16)
{
	EXPECT_EQ(-1, stream_create(self->fd, 64, 15, self->data, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, stream_create(self->fd, 64, 0, NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
}

TEST_F(stream, create_size_zero)
{
	EXPECT_EQ(-1, stream_create(self->fd, 0, 16, self->data, NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(stream, create_size_over_max)
{
	EXPECT_EQ(-1, stream_create(self->fd, DPUSIM_STREAM_MAX_BYTES + 1, 1 << 20,
			     NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(stream, create_too_many_tokens)
{
	EXPECT_EQ(-1, stream_create(self->fd, (uint64_t)DPUSIM_STREAM_MAX_TOKENS * 16 + 16,
			     16, self->data, NULL));
	EXPECT_EQ(E2BIG, errno);
}

/* Data that is not mapped: EFAULT, nothing created, nothing charged */
TEST_F(stream, create_data_efault)
{
	uint8_t *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, 4096);
	ASSERT_EQ(0, munmap(p + 4096, 4096));
	EXPECT_EQ(-1, stream_create(self->fd, 8192, 64, p, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, sysfs_rank_attr(0, "stream_resident_bytes"));
	EXPECT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	munmap(p, 4096);
}

/* An answer that cannot be written: the stream goes, its number is free */
TEST_F(stream, create_readonly_struct)
{
	struct dpusim_stream_create *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, c);
	*c = (struct dpusim_stream_create){ .size = sizeof(*c),
					    .stream_size = 64, .token_size = 16,
					    .data = (uintptr_t)self->data };
	ASSERT_EQ(0, mprotect(c, 4096, PROT_READ));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, c));
	EXPECT_EQ(0, sysfs_rank_attr(0, "stream_resident_bytes"));
	EXPECT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	munmap(c, 4096);
}

/* Numbers in creation order, down and up alike; the shape reported */
TEST_F(stream, create_ids_and_shape)
{
	struct dpusim_stream_create c;

	ASSERT_EQ(0, stream_create(self->fd, 256 * 4, 32 * 4, self->data, &c));
	EXPECT_EQ(8, c.nr_tokens);
	EXPECT_EQ(1024 + 9 * 8, c.mem_size);
	ASSERT_EQ(1, stream_create(self->fd, 4096, 64, NULL, &c));
	EXPECT_EQ(0, c.nr_tokens);	/* empty, for results */
	ASSERT_EQ(2, stream_create(self->fd, 100, 16, self->data, &c));
	EXPECT_EQ(7, c.nr_tokens);	/* 6 x 16 + 4 */
	EXPECT_EQ(100 + 8 * 8, c.mem_size);
	/*
	 * a page each, and the empty stream's token tables: 513 tokens of
	 * 12 bytes, 2 pages
	 */
	EXPECT_EQ(5 * 4096, sysfs_rank_attr(0, "stream_resident_bytes"));
}

TEST_F(stream, create_max_streams)
{
	unsigned int i;

	for (i = 0; i < DPUSIM_STREAM_MAX; i++)
		ASSERT_EQ((int)i, stream_create(self->fd, 16, 16, self->data, NULL));
	EXPECT_EQ(-1, stream_create(self->fd, 16, 16, self->data, NULL));
	EXPECT_EQ(ENOSPC, errno);
}

/* The streams go with the rank's ownership */
TEST_F(stream, freed_on_close)
{
	ASSERT_EQ(0, stream_create(self->fd, 4096, 64, self->data, NULL));
	EXPECT_LT(0, sysfs_rank_attr(0, "stream_resident_bytes"));
	close(self->fd);
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(0, sysfs_rank_attr(0, "stream_resident_bytes"));
	/* numbering starts again */
	EXPECT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 1, 0, 0, NULL));
	EXPECT_EQ(ENOENT, errno);
}

/* -------------------------------------------------- OPEN, CLOSE, SEEK */

static const unsigned long cmds[] = {
	DPUSIM_IOCTL_STREAM_OPEN, DPUSIM_IOCTL_STREAM_CLOSE,
	DPUSIM_IOCTL_STREAM_SEEK,
};

TEST_F(stream, cmd_short_struct)
{
	struct dpusim_stream_cmd c = {
		.size = offsetof(struct dpusim_stream_cmd, prev),
	};
	size_t i;

	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	for (i = 0; i < 3; i++)
		EXPECT_ERRNO(EINVAL, ioctl(self->fd, cmds[i], &c));
}

TEST_F(stream, cmd_long_struct)
{
	struct {
		struct dpusim_stream_cmd c;
		uint64_t tail;
	} big = { .c = { .size = sizeof(big) }, .tail = 1 };
	size_t i;

	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	for (i = 0; i < 3; i++)
		EXPECT_ERRNO(E2BIG, ioctl(self->fd, cmds[i], &big.c));
}

TEST_F(stream, cmd_bad_pointer)
{
	size_t i;

	for (i = 0; i < 3; i++)
		EXPECT_ERRNO(EFAULT, ioctl(self->fd, cmds[i], 16));
}

TEST_F(stream, cmd_bad_flags)
{
	struct dpusim_stream_cmd c = { .size = sizeof(c), .flags = 1 };
	size_t i;

	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	for (i = 0; i < 3; i++)
		EXPECT_ERRNO(EINVAL, ioctl(self->fd, cmds[i], &c));
}

TEST_F(stream, cmd_no_stream)
{
	size_t i;

	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, stream_cmd(self->fd, cmds[i], 0, 0, 0, NULL));
		EXPECT_EQ(ENOENT, errno);
		EXPECT_EQ(-1, stream_cmd(self->fd, cmds[i], UINT32_MAX, 0, 0, NULL));
		EXPECT_EQ(ENOENT, errno);
	}
}

TEST_F(stream, cmd_core_past_rank)
{
	size_t i;

	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, stream_cmd(self->fd, cmds[i], 0, self->info.nr_dpus, 0,
				   NULL));
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(stream, open_close_with_delta)
{
	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 0, 1, NULL));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 0, 0, NULL));
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 0, -1, NULL));
	EXPECT_EQ(EINVAL, errno);
}

/* One core at a time: a second open fails, and succeeds after the close */
TEST_F(stream, open_by_second_core)
{
	struct dpusim_stream_cmd o;

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 3, 0, &o));
	EXPECT_EQ(0, o.cursor);
	EXPECT_EQ(16, o.token);
	EXPECT_EQ(7, o.nr_tokens);
	EXPECT_EQ(164, o.mem_size);
	EXPECT_EQ(0, o.offset);
	EXPECT_EQ(16, o.token_size);
	EXPECT_EQ(sizeof(o), o.size);
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 3, 0, NULL));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 4, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 3, 0, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 4, 0, &o));
	EXPECT_EQ(0, o.cursor);
}

TEST_F(stream, close_twice)
{
	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 0, 0, NULL));
	EXPECT_EQ(EINVAL, errno);	/* never opened */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 0, 0, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 0, 0, NULL));
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 0, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(stream, seek_not_open)
{
	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	EXPECT_EQ(-1, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 0, 1, NULL));
	EXPECT_EQ(EINVAL, errno);
}

/* Forward, backward, clamped, INT_MIN, INT_MAX; the size at the cursor */
TEST_F(stream, seek_cursor)
{
	static const struct {
		int32_t delta;
		uint32_t cursor, token;
		uint64_t offset;
	} steps[] = {
		{ 5, 5, 16, 120 }, { -3, 2, 16, 48 }, { 4, 6, 4, 144 },
		{ 1, 7, 0, 156 }, { 100, 7, 0, 156 }, { -100, 0, 16, 0 },
		{ INT_MAX, 7, 0, 156 }, { INT_MIN, 0, 16, 0 }, { 0, 0, 16, 0 },
		{ -1, 0, 16, 0 },
	};
	struct dpusim_stream_cmd o;
	size_t i;

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 1, 0, NULL));
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 1,
				  steps[i].delta, &o));
		EXPECT_EQ(steps[i].cursor, o.cursor) TH_LOG("step %zu", i);
		EXPECT_EQ(steps[i].token, o.token) TH_LOG("step %zu", i);
		EXPECT_EQ(steps[i].offset, o.offset) TH_LOG("step %zu", i);
		EXPECT_EQ(steps[i].cursor == 0 ? 0u : steps[i].cursor == 7 ? 4u : 16u,
			  o.prev) TH_LOG("step %zu", i);
	}
}

/* Many open/close cycles, by many cores, leave it as it was */
TEST_F(stream, many_open_close)
{
	struct dpusim_stream_cmd o;
	unsigned int i;

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	for (i = 0; i < 2000; i++) {
		uint32_t core = i % self->info.nr_dpus;

		ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, core, 0,
				  &o));
		ASSERT_EQ(0, o.cursor);
		ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, core,
				  (int32_t)(i % 9) - 4, NULL));
		ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, core, 0,
				  NULL));
	}
	EXPECT_EQ(4096, sysfs_rank_attr(0, "stream_resident_bytes"));
}

/* ------------------------------------------------------------ moves */

/* One token moved by @core: down into @buf (size + header), or up */
static int move(int fd, uint32_t id, uint32_t core, uint32_t flags,
		uint64_t off, uint64_t len, struct dpusim_block *b, uint32_t nb)
{
	struct dpusim_xfer_dpu d = { .dpu = core, .nr_blocks = nb };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags | DPUSIM_XFER_STREAM,
		.offset = off, .length = len, .nr_dpus = 1, .nr_blocks = nb,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)b, .stream = id,
	};

	return ioctl(fd, DPUSIM_IOCTL_XFER, &x);
}

static int down(int fd, uint32_t id, uint32_t core, uint64_t off,
		uint32_t size, uint8_t *buf)
{
	struct dpusim_block b = { (uintptr_t)buf, size + 8 };

	return move(fd, id, core, DPUSIM_XFER_FROM_DPU, off, size + 8, &b, 1);
}

/*
 * A host thread as core 2 reads every token of a stream of 100 bytes in
 * tokens of 16: the data in order, each followed by the header
 * (prevsize, nextsize) EBSP puts before the next one; then the end.
 */
TEST_F(stream, move_down_all_tokens)
{
	struct dpusim_stream_cmd o;
	uint8_t buf[64];
	uint64_t off = 8;
	uint32_t size, i, got = 0, h[2];

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, &o));
	size = o.token;
	for (i = 0; i < 7; i++) {
		ASSERT_EQ(0, down(self->fd, 0, 2, off, size, buf)) TH_LOG("token %u", i);
		EXPECT_EQ(0, memcmp(buf, self->data + got, size));
		got += size;
		memcpy(h, buf + size, 8);
		EXPECT_EQ(size, h[0]);
		EXPECT_EQ(i < 5 ? 16u : i == 5 ? 4u : 0u, h[1]);
		off += size + 8;
		size = h[1];
	}
	EXPECT_EQ(100, got);
	/* the end is sticky: the last token again, or past the memory */
	EXPECT_EQ(-1, down(self->fd, 0, 2, off - 12, 4, buf));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, down(self->fd, 0, 2, off - 12, 4, buf));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, down(self->fd, 0, 2, off, 0, buf));
	EXPECT_EQ(EOVERFLOW, errno);
}

/* A descriptor that is not the token at the cursor: EINVAL, no move */
TEST_F(stream, move_down_wrong_token)
{
	struct dpusim_stream_cmd o;
	uint8_t buf[64];

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, NULL));
	EXPECT_EQ(-1, down(self->fd, 0, 2, 0, 16, buf));	/* the header */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, down(self->fd, 0, 2, 8, 8, buf));	/* too short */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, down(self->fd, 0, 2, 32, 16, buf));	/* the next one */
	EXPECT_EQ(EINVAL, errno);
	/* by a core that has not it open, or of no stream */
	EXPECT_EQ(-1, down(self->fd, 0, 3, 8, 16, buf));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, down(self->fd, 5, 2, 8, 16, buf));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 2, 0, &o));
	EXPECT_EQ(0, o.cursor);			/* nothing moved */
	EXPECT_EQ(0, down(self->fd, 0, 2, 8, 16, buf));
}

TEST_F(stream, move_bad_flags)
{
	struct dpusim_block b = { (uintptr_t)self->data, 24 };

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, NULL));
	EXPECT_EQ(-1, move(self->fd, 0, 2, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_WRAM,
			   8, 24, &b, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, move(self->fd, 0, 2, DPUSIM_XFER_FROM_DPU |
			   DPUSIM_XFER_NO_LENGTH_CHECK, 8, 24, &b, 1));
	EXPECT_EQ(EINVAL, errno);
}

/* Up: tokens written at the cursor, read back; past the capacity: ENOSPC */
TEST_F(stream, move_up_and_back)
{
	uint32_t hdr[2], term[2], h[2];
	uint8_t buf[64];
	struct dpusim_block b[3] = {
		{ (uintptr_t)hdr, 8 }, { (uintptr_t)self->data, 0 },
		{ (uintptr_t)term, 8 },
	};
	struct dpusim_stream_cmd o;
	uint64_t off = 0;
	uint32_t prev = 0, n, i;

	ASSERT_EQ(0, stream_create(self->fd, 64, 16, NULL, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 1, 0, NULL));
	for (i = 0; i < 3; i++) {
		n = i == 2 ? 32 : 16;
		hdr[0] = prev;
		hdr[1] = n;
		term[0] = n;
		term[1] = 0;
		b[1] = (struct dpusim_block){ (uintptr_t)(self->data + 100 * i), n };
		ASSERT_EQ(0, move(self->fd, 0, 1, 0, off, n + 16, b, 3))
			TH_LOG("token %u: %s", i, strerror(errno));
		off += 8 + n;
		prev = n;
	}
	/* 64 bytes written: one more is past the capacity, nothing written */
	hdr[0] = prev;
	hdr[1] = 8;
	b[1].length = 8;
	EXPECT_EQ(-1, move(self->fd, 0, 1, 0, off, 24, b, 3));
	EXPECT_EQ(ENOSPC, errno);
	/* read back from the start */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 1, INT_MIN, &o));
	EXPECT_EQ(3, o.nr_tokens);
	EXPECT_EQ(16, o.token);
	off = 8;
	n = o.token;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, down(self->fd, 0, 1, off, n, buf));
		EXPECT_EQ(0, memcmp(buf, self->data + 100 * i, n));
		memcpy(h, buf + n, 8);
		EXPECT_EQ(n, h[0]);
		off += n + 8;
		n = h[1];
	}
	EXPECT_EQ(0, n);
	EXPECT_EQ(-1, down(self->fd, 0, 1, off, 0, buf));
	EXPECT_EQ(ENODATA, errno);
}

/* Up moves only on a stream created empty; sizes a multiple of 8 */
TEST_F(stream, move_up_rules)
{
	uint32_t hdr[2] = { 0, 12 }, term[2] = { 12, 0 };
	struct dpusim_block b[3] = {
		{ (uintptr_t)hdr, 8 }, { (uintptr_t)self->data, 12 },
		{ (uintptr_t)term, 8 },
	};

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(1, stream_create(self->fd, 64, 16, NULL, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 1, 0, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 1, 1, 0, NULL));
	b[1].length = 16;
	EXPECT_EQ(-1, move(self->fd, 0, 1, 0, 0, 32, b, 3));	/* made of data */
	EXPECT_EQ(EINVAL, errno);
	b[1].length = 12;
	EXPECT_EQ(-1, move(self->fd, 1, 1, 0, 0, 28, b, 3));	/* 12 bytes */
	EXPECT_EQ(EINVAL, errno);
	b[1].length = 16;
	EXPECT_EQ(-1, move(self->fd, 1, 1, 0, 8, 32, b, 3));	/* not the cursor */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, move(self->fd, 1, 1, 0, 0, 32, b, 3));
}

/* A preloaded token goes through the asynchronous path: SYNC, then it's there */
TEST_F(stream, move_down_async)
{
	struct dpusim_sync sy = { .size = sizeof(sy) };
	struct dpusim_block b;
	uint8_t *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dpusim_stream_cmd o;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, NULL));
	b = (struct dpusim_block){ (uintptr_t)buf, 24 };
	ASSERT_EQ(0, move(self->fd, 0, 2, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_ASYNC,
			  8, 24, &b, 1));
	/* the cursor moved when it was queued */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 2, 0, &o));
	EXPECT_EQ(1, o.cursor);
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_SYNC, &sy));
	EXPECT_EQ(0, memcmp(buf, self->data, 16));
	munmap(buf, 4096);
}

/* ------------------------------------------------------------ mmap */

/* The memory in EBSP's format, byte for byte, through the mapping */
TEST_F(stream, mmap_format)
{
	struct dpusim_stream_create c;
	const uint8_t *m;
	uint32_t h[2], i, size, prev = 0;
	uint64_t off = 0, got = 0;

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, &c));
	m = mmap(NULL, c.mem_size, PROT_READ, MAP_SHARED, self->fd,
		 DPUSIM_MMAP_STREAM(0));
	ASSERT_NE(MAP_FAILED, m) TH_LOG("%s", strerror(errno));
	for (i = 0; i <= 7; i++) {
		memcpy(h, m + off, 8);
		size = i < 6 ? 16 : i == 6 ? 4 : 0;
		EXPECT_EQ(prev, h[0]) TH_LOG("header %u", i);
		EXPECT_EQ(size, h[1]) TH_LOG("header %u", i);
		EXPECT_EQ(0, memcmp(m + off + 8, self->data + got, size));
		got += size;
		off += 8 + size;
		prev = size;
	}
	EXPECT_EQ(c.mem_size, off);
	munmap((void *)m, c.mem_size);
}

/* The host sees what move_up wrote */
TEST_F(stream, mmap_sees_move_up)
{
	uint32_t hdr[2] = { 0, 24 }, term[2] = { 24, 0 };
	struct dpusim_block b[3] = {
		{ (uintptr_t)hdr, 8 }, { (uintptr_t)self->data, 24 },
		{ (uintptr_t)term, 8 },
	};
	struct dpusim_stream_create c;
	const uint32_t *m;

	ASSERT_EQ(0, stream_create(self->fd, 64, 16, NULL, &c));
	m = mmap(NULL, c.mem_size, PROT_READ, MAP_SHARED, self->fd,
		 DPUSIM_MMAP_STREAM(0));
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, m[0]);
	EXPECT_EQ(0, m[1]);
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 0, 0, NULL));
	ASSERT_EQ(0, move(self->fd, 0, 0, 0, 0, 40, b, 3));
	EXPECT_EQ(0, m[0]);
	EXPECT_EQ(24, m[1]);
	EXPECT_EQ(0, memcmp(m + 2, self->data, 24));
	EXPECT_EQ(24, m[8]);
	EXPECT_EQ(0, m[9]);
	munmap((void *)m, c.mem_size);
}

TEST_F(stream, mmap_no_stream)
{
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   DPUSIM_MMAP_STREAM(0)));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, NULL));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 8192, PROT_READ, MAP_SHARED, self->fd,
				   DPUSIM_MMAP_STREAM(0)));	/* past it */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   DPUSIM_MMAP_STREAM(DPUSIM_STREAM_MAX)));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * A stream's memory is written by the kernel alone (moves, and headers
 * that follow its own table of token sizes): the host's view of it is
 * read-only, a writable mapping EPERM.
 */
TEST_F(stream, mmap_writable_eperm)
{
	struct dpusim_stream_create c;

	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, &c));
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, c.mem_size, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, DPUSIM_MMAP_STREAM(0)));
	EXPECT_EQ(EPERM, errno);
}

/* Nor can mprotect() make a read-only mapping of it writable: EACCES. */
TEST_F(stream, mmap_mprotect_write_eacces)
{
	struct dpusim_stream_create c;
	void *m;

	ASSERT_EQ(0, stream_create(self->fd, 64, 16, self->data, &c));
	m = mmap(NULL, c.mem_size, PROT_READ, MAP_SHARED, self->fd,
		 DPUSIM_MMAP_STREAM(0));
	ASSERT_NE(MAP_FAILED, m) TH_LOG("%s", strerror(errno));
	EXPECT_ERRNO(EACCES, mprotect(m, c.mem_size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, memcmp((uint8_t *)m + 8, self->data, 16));	/* still there */
	munmap(m, c.mem_size);
}

/* ------------------------------------------------ registered buffers */

/*
 * A core's token buffer (struct dpusim_stream_cmd @buf, @buf_len) and
 * DPUSIM_XFER_STREAM_BUF moves, whose blocks are offsets into it.  Stream
 * 0 is mostly 100 bytes in tokens of 16: token i's data at 24 i + 8, 16
 * bytes (4 for token 6).
 */

#define PAGE		4096UL
#define AHEAD		32		/* transfers queued ahead of a move */
#define AHEAD_LEN	(1UL << 20)	/* bytes of each */
#define AHEAD_PAGES	(AHEAD_LEN / PAGE)

static long long pinned_pages(void)
{
	return sysfs_rank_attr(0, "pinned_pages");
}

/* @len bytes, page aligned, read-write, each 0xee */
static uint8_t *map_buf(size_t len)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0xee, len);
	return p;
}

/* OPEN/CLOSE/SEEK of stream @id as @core, with @buf and @buf_len */
static int buf_cmd(int fd, unsigned long ioc, uint32_t id, uint32_t core,
		   int32_t delta, uint64_t buf, uint64_t buf_len,
		   struct dpusim_stream_cmd *out)
{
	struct dpusim_stream_cmd c = {
		.size = sizeof(c), .id = id, .core = core, .delta = delta,
		.buf = buf, .buf_len = buf_len,
	};
	int r = ioctl(fd, ioc, &c);

	if (out)
		*out = c;
	return r;
}

static int open_buf(int fd, uint32_t id, uint32_t core, const void *buf,
		    uint64_t len)
{
	return buf_cmd(fd, DPUSIM_IOCTL_STREAM_OPEN, id, core, 0,
		       (uintptr_t)buf, len, NULL);
}

/* Stream @id's cursor for @core, or -1 (not open by it) */
static int cursor(int fd, uint32_t id, uint32_t core)
{
	struct dpusim_stream_cmd o;

	if (stream_cmd(fd, DPUSIM_IOCTL_STREAM_SEEK, id, core, 0, &o))
		return -1;
	return o.cursor;
}

/* Stream @id is open by no core: @core opens and closes it */
static bool not_open(int fd, uint32_t id, uint32_t core)
{
	return !stream_cmd(fd, DPUSIM_IOCTL_STREAM_OPEN, id, core, 0, NULL) &&
	       !stream_cmd(fd, DPUSIM_IOCTL_STREAM_CLOSE, id, core, 0, NULL);
}

/* Token @i of stream 0 into the registered buffer at @boff */
static int down_buf(int fd, uint32_t core, uint32_t flags, uint32_t i,
		    uint64_t boff)
{
	uint32_t size = i < 6 ? 16 : 4;
	struct dpusim_block b = { boff, size + 8 };

	return move(fd, 0, core, flags | DPUSIM_XFER_FROM_DPU |
		    DPUSIM_XFER_STREAM_BUF, 24 * i + 8, size + 8, &b, 1);
}

/* Token @i of stream 0 as a down move gives it: data, then the header */
static size_t token_of(const uint8_t *data, uint32_t i, uint8_t *out)
{
	uint32_t size = i < 6 ? 16 : 4, h[2] = { size, i < 5 ? 16 : i == 5 ? 4 : 0 };

	memcpy(out, data + 16 * i, size);
	memcpy(out + size, h, 8);
	return size + 8;
}

/*
 * Queue AHEAD transfers of AHEAD_LEN bytes to DPU 0's MRAM from the
 * mapping *@bufp: each holds AHEAD_PAGES pinned pages until it is done.
 */
static int queue_ahead(int fd, uint8_t **bufp)
{
	struct dpusim_xfer_dpu d = { .dpu = 0, .nr_blocks = 1 };
	struct dpusim_block b;
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_ASYNC,
		.length = AHEAD_LEN, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};
	int i;

	*bufp = map_buf(AHEAD_LEN);
	if (!*bufp)
		return -1;
	b = (struct dpusim_block){ (uintptr_t)*bufp, AHEAD_LEN };
	for (i = 0; i < AHEAD; i++)
		if (ioctl(fd, DPUSIM_IOCTL_XFER, &x))
			return -1;
	return 0;
}

/*
 * After the last of the queued transfers, a move into a one-page buffer
 * was queued, then the buffer's stream (or the rank) closed.  @p pinned
 * pages more than before, read before @jobs transfers were still queued:
 * if one was, the move was not done (they run in order) and held the
 * buffer's page when @p was read; every transfer held its AHEAD_PAGES or
 * none.
 */
static bool move_held_page(long long p, long long jobs)
{
	return jobs < 1 || p % AHEAD_PAGES == 1;
}

static int sync_rank(int fd)
{
	struct dpusim_sync sy = { .size = sizeof(sy) };

	return ioctl(fd, DPUSIM_IOCTL_SYNC, &sy);
}

/*
 * OPEN with a buffer pins its pages (pinned_pages, the caller's VmPin)
 * until CLOSE; each down move lands its token (data, then the next
 * header) at the offset its block names: 0, a page, across a page
 * boundary, at the buffer's very end; no other byte of the buffer changes.
 */
TEST_F(stream, buf_down_at_offsets)
{
	static const uint64_t at[] = { 0, PAGE, 3 * PAGE - 8, 4 * PAGE - 24 };
	const size_t len = 4 * PAGE;
	long long pinned = pinned_pages();
	long vmpin = proc_status_kb("VmPin:");
	uint8_t *buf = map_buf(len), *want = malloc(len);
	struct dpusim_stream_cmd o;
	uint32_t i;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, want);
	ASSERT_LE(0, pinned);
	ASSERT_LE(0, vmpin);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, buf_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0,
			     (uintptr_t)buf, len, &o)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, o.cursor);
	EXPECT_EQ(16, o.token);
	EXPECT_EQ(7, o.nr_tokens);
	EXPECT_EQ(pinned + 4, pinned_pages());
	EXPECT_EQ(vmpin + 16, proc_status_kb("VmPin:"));
	memset(want, 0xee, len);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, down_buf(self->fd, 2, 0, i, at[i]))
			TH_LOG("token %u: %s", i, strerror(errno));
		token_of(self->data, i, want + at[i]);
	}
	EXPECT_EQ(0, memcmp(buf, want, len));
	EXPECT_EQ(4, cursor(self->fd, 0, 2));
	/* a move pins nothing more */
	EXPECT_EQ(pinned + 4, pinned_pages());
	EXPECT_EQ(vmpin + 16, proc_status_kb("VmPin:"));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0, NULL));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(vmpin, proc_status_kb("VmPin:"));
	munmap(buf, len);
	free(want);
}

/* Asynchronous moves into the buffer: queued at once, there after SYNC */
TEST_F(stream, buf_down_async)
{
	const size_t len = 2 * PAGE;
	long long pinned = pinned_pages();
	uint8_t *buf = map_buf(len), *want = malloc(len);

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, len));
	memset(want, 0xee, len);
	ASSERT_EQ(0, down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 0, 0));
	token_of(self->data, 0, want);
	ASSERT_EQ(0, down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 1, PAGE - 8));
	token_of(self->data, 1, want + PAGE - 8);
	EXPECT_EQ(2, cursor(self->fd, 0, 2));	/* moved at the submit */
	ASSERT_EQ(0, sync_rank(self->fd));
	EXPECT_EQ(0, memcmp(buf, want, len));
	EXPECT_EQ(pinned + 2, pinned_pages());
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0, NULL));
	EXPECT_EQ(pinned, pinned_pages());
	munmap(buf, len);
	free(want);
}

/*
 * CLOSE with a move into the buffer still queued (behind other
 * transfers): the move keeps the buffer's page; SYNC returns 0, the token
 * is there, and only then is the page let go.
 */
TEST_F(stream, buf_close_with_async_queued)
{
	long long pinned = pinned_pages(), p, jobs;
	long vmpin = proc_status_kb("VmPin:");
	uint8_t *buf = map_buf(PAGE), *ahead, want[24];

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, PAGE));
	ASSERT_EQ(0, queue_ahead(self->fd, &ahead)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 0, 8));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0, NULL));
	p = pinned_pages() - pinned;
	jobs = sysfs_rank_attr(0, "async_jobs");
	EXPECT_TRUE(move_held_page(p, jobs)) TH_LOG("%lld pages, %lld jobs", p, jobs);
	if (jobs < 1)
		TH_LOG("the move was done before the check");
	ASSERT_EQ(0, sync_rank(self->fd));
	token_of(self->data, 0, want);
	EXPECT_EQ(0, memcmp(buf + 8, want, 24));
	EXPECT_EQ(0xee, buf[7]);
	EXPECT_EQ(0xee, buf[32]);
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(vmpin, proc_status_kb("VmPin:"));
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	munmap(ahead, AHEAD_LEN);
	munmap(buf, PAGE);
}

/*
 * Up moves from the buffer: a token as one block (header, data, end
 * header), the next as three blocks out of order, its data across a page
 * boundary; the stream's memory holds them, and they come back down into
 * the buffer.
 */
TEST_F(stream, buf_move_up)
{
	const size_t len = 3 * PAGE;
	uint8_t *buf = map_buf(len), got[40];
	uint32_t h0[2] = { 0, 24 }, t0[2] = { 24, 0 };
	uint32_t h1[2] = { 24, 32 }, t1[2] = { 32, 0 }, h[2];
	struct dpusim_block one = { 0, 40 }, three[3] = {
		{ 2 * PAGE + 8, 8 }, { PAGE - 16, 32 }, { 200, 8 },
	}, b;
	struct dpusim_stream_create c;
	struct dpusim_stream_cmd o;
	const uint8_t *m;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 4096, 16, NULL, &c));
	ASSERT_EQ(0, open_buf(self->fd, 0, 1, buf, len));
	memcpy(buf, h0, 8);
	memcpy(buf + 8, self->data, 24);
	memcpy(buf + 32, t0, 8);
	ASSERT_EQ(0, move(self->fd, 0, 1, DPUSIM_XFER_STREAM_BUF, 0, 40, &one, 1))
		TH_LOG("%s", strerror(errno));
	memcpy(buf + 2 * PAGE + 8, h1, 8);
	memcpy(buf + PAGE - 16, self->data + 100, 32);
	memcpy(buf + 200, t1, 8);
	ASSERT_EQ(0, move(self->fd, 0, 1, DPUSIM_XFER_STREAM_BUF, 32, 48, three, 3))
		TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 1, 0, &o));
	EXPECT_EQ(2, o.cursor);
	EXPECT_EQ(2, o.nr_tokens);
	/* the stream's memory, in EBSP's format */
	m = mmap(NULL, c.mem_size, PROT_READ, MAP_SHARED, self->fd,
		 DPUSIM_MMAP_STREAM(0));
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, memcmp(m, h0, 8));
	EXPECT_EQ(0, memcmp(m + 8, self->data, 24));
	EXPECT_EQ(0, memcmp(m + 32, h1, 8));
	EXPECT_EQ(0, memcmp(m + 40, self->data + 100, 32));
	EXPECT_EQ(0, memcmp(m + 72, t1, 8));
	munmap((void *)m, c.mem_size);
	/* and down again, into the buffer */
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 1, INT_MIN, NULL));
	b = (struct dpusim_block){ 2 * PAGE + 1000, 32 };
	ASSERT_EQ(0, move(self->fd, 0, 1, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_STREAM_BUF,
			  8, 32, &b, 1));
	memcpy(got, self->data, 24);
	h[0] = 24;
	h[1] = 32;
	memcpy(got + 24, h, 8);
	EXPECT_EQ(0, memcmp(buf + 2 * PAGE + 1000, got, 32));
	b = (struct dpusim_block){ 2 * PAGE + 2000, 40 };
	ASSERT_EQ(0, move(self->fd, 0, 1, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_STREAM_BUF,
			  40, 40, &b, 1));
	memcpy(got, self->data + 100, 32);
	memcpy(got + 32, t1, 8);
	EXPECT_EQ(0, memcmp(buf + 2 * PAGE + 2000, got, 40));
	munmap(buf, len);
}

/* DPUSIM_XFER_STREAM_BUF without DPUSIM_XFER_STREAM: EINVAL */
TEST_F(stream, buf_flag_without_stream)
{
	uint8_t *buf = map_buf(PAGE);
	struct dpusim_xfer_dpu d = { .dpu = 2, .nr_blocks = 1 };
	struct dpusim_block b = { 0, 24 };
	struct dpusim_xfer x = {
		.size = sizeof(x),
		.flags = DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_STREAM_BUF,
		.offset = 8, .length = 24, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)&b,
	};

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, PAGE));
	/* an offset into the buffer, as the stream's token would be */
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_XFER, &x));
	x.flags |= DPUSIM_XFER_ASYNC;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_XFER, &x));
	/* a user address: a good MRAM transfer but for the flag */
	b.addr = (uintptr_t)buf;
	x.flags = DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_STREAM_BUF;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_XFER, &x));
	x.flags = DPUSIM_XFER_STREAM_BUF;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_XFER, &x));
	EXPECT_EQ(0xee, buf[0]);
	x.flags = DPUSIM_XFER_FROM_DPU;
	EXPECT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_XFER, &x));
	/* the stream did not move */
	EXPECT_EQ(0, cursor(self->fd, 0, 2));
	munmap(buf, PAGE);
}

/*
 * A stream opened without a buffer: a STREAM_BUF move is EINVAL, even if
 * the core registered a buffer with another stream; nothing moved.
 */
TEST_F(stream, buf_move_no_buffer)
{
	uint8_t *buf = map_buf(PAGE), got[24], want[24];

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(1, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 1, 2, buf, PAGE));
	EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, 0, 0, 0));
	EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 0, 0));
	EXPECT_EQ(0, sync_rank(self->fd));
	EXPECT_EQ(0, cursor(self->fd, 0, 2));
	EXPECT_EQ(0xee, buf[0]);
	/* the same token by address */
	ASSERT_EQ(0, down(self->fd, 0, 2, 8, 16, got));
	token_of(self->data, 0, want);
	EXPECT_EQ(0, memcmp(got, want, 24));
	munmap(buf, PAGE);
}

/*
 * A block at or past the buffer's length (inside its last page or far
 * past it): EINVAL, nothing moved; one that ends at the length moves.
 */
TEST_F(stream, buf_move_past_end)
{
	static const uint64_t bad[] = {
		PAGE + 100, PAGE + 101, 2 * PAGE, 1ULL << 40, ~(PAGE - 1),
	};
	const uint64_t len = PAGE + 100;
	uint8_t *buf = map_buf(2 * PAGE), want[24];
	size_t i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, len));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-1, down_buf(self->fd, 2, 0, 0, bad[i]));
		EXPECT_EQ(EINVAL, errno) TH_LOG("offset %#llx",
						(unsigned long long)bad[i]);
		EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 0,
					      bad[i]));
		EXPECT_EQ(0, cursor(self->fd, 0, 2));
	}
	EXPECT_EQ(0, sync_rank(self->fd));
	EXPECT_EQ(0xee, buf[len]);
	ASSERT_EQ(0, down_buf(self->fd, 2, 0, 0, len - 24));
	token_of(self->data, 0, want);
	EXPECT_EQ(0, memcmp(buf + len - 24, want, 24));
	EXPECT_EQ(0xee, buf[len]);
	munmap(buf, 2 * PAGE);
}

/*
 * A block that starts inside the buffer and ends past it, alone or after
 * one that fits: EINVAL, nothing written, nothing moved.
 */
TEST_F(stream, buf_move_crossing_end)
{
	const uint64_t len = PAGE + 100;
	uint8_t *buf = map_buf(2 * PAGE);
	struct dpusim_block two[2] = { { 0, 16 }, { len - 4, 8 } };
	size_t i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, len));
	EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, 0, 0, len - 23));
	EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 0, len - 23));
	EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, 0, 0, len - 1));
	EXPECT_ERRNO(EINVAL, move(self->fd, 0, 2, DPUSIM_XFER_FROM_DPU |
				  DPUSIM_XFER_STREAM_BUF, 8, 24, two, 2));
	EXPECT_ERRNO(EINVAL, move(self->fd, 0, 2, DPUSIM_XFER_FROM_DPU |
				  DPUSIM_XFER_STREAM_BUF | DPUSIM_XFER_ASYNC,
				  8, 24, two, 2));
	EXPECT_EQ(0, sync_rank(self->fd));
	EXPECT_EQ(0, cursor(self->fd, 0, 2));
	for (i = 0; i < 2 * PAGE; i++)
		if (buf[i] != 0xee)
			break;
	EXPECT_EQ(2 * PAGE, i);
	/* the second block inside: the move is good */
	two[1].addr = len - 8;
	EXPECT_EQ(0, move(self->fd, 0, 2, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_STREAM_BUF,
			  8, 24, two, 2));
	EXPECT_EQ(0, memcmp(buf, self->data, 16));
	munmap(buf, 2 * PAGE);
}

/*
 * CLOSE lets the buffer go: reopened without one, a STREAM_BUF move is
 * EINVAL, and nothing is pinned any more.
 */
TEST_F(stream, buf_move_after_close)
{
	long long pinned = pinned_pages();
	uint8_t *buf = map_buf(PAGE), want[24];

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, PAGE));
	ASSERT_EQ(0, down_buf(self->fd, 2, 0, 0, 0));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0, NULL));
	EXPECT_EQ(pinned, pinned_pages());
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, NULL));
	EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, 0, 0, 0));
	EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 0, 0));
	EXPECT_EQ(0, cursor(self->fd, 0, 2));
	/* the first move's bytes are still there, and only they */
	token_of(self->data, 0, want);
	EXPECT_EQ(0, memcmp(buf, want, 24));
	EXPECT_EQ(0xee, buf[24]);
	munmap(buf, PAGE);
}

/* OPEN with a buffer not page aligned: EINVAL, nothing pinned, not open */
TEST_F(stream, buf_open_misaligned)
{
	long long pinned = pinned_pages();
	uint8_t *buf = map_buf(2 * PAGE);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	EXPECT_ERRNO(EINVAL, open_buf(self->fd, 0, 2, buf + 8, PAGE));
	EXPECT_ERRNO(EINVAL, open_buf(self->fd, 0, 2, buf + PAGE / 2, PAGE));
	EXPECT_ERRNO(EINVAL, open_buf(self->fd, 0, 2, buf + 1, 1));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	munmap(buf, 2 * PAGE);
}

/* A buffer of 0 bytes: EINVAL, nothing pinned, not open */
TEST_F(stream, buf_open_len_zero)
{
	long long pinned = pinned_pages();
	uint8_t *buf = map_buf(PAGE);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	EXPECT_ERRNO(EINVAL, open_buf(self->fd, 0, 2, buf, 0));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	munmap(buf, PAGE);
}

/* A length without a buffer: EINVAL, not open */
TEST_F(stream, buf_open_len_without_buf)
{
	long long pinned = pinned_pages();

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	EXPECT_ERRNO(EINVAL, open_buf(self->fd, 0, 2, NULL, PAGE));
	EXPECT_ERRNO(EINVAL, open_buf(self->fd, 0, 2, NULL, 1));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_TRUE(not_open(self->fd, 0, 2));
}

/* A buffer with CLOSE: EINVAL, the stream stays open, nothing pinned */
TEST_F(stream, buf_close_with_buf)
{
	long long pinned = pinned_pages();
	uint8_t *buf = map_buf(PAGE);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, NULL));
	EXPECT_ERRNO(EINVAL, buf_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0,
				     (uintptr_t)buf, PAGE, NULL));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(0, cursor(self->fd, 0, 2));
	EXPECT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0, NULL));
	/* and with a buffer registered, the same */
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, PAGE));
	EXPECT_ERRNO(EINVAL, buf_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0,
				     (uintptr_t)buf, PAGE, NULL));
	EXPECT_EQ(pinned + 1, pinned_pages());
	EXPECT_EQ(0, down_buf(self->fd, 2, 0, 0, 0));
	munmap(buf, PAGE);
}

/* A buffer with SEEK: EINVAL, the cursor stays, nothing pinned */
TEST_F(stream, buf_seek_with_buf)
{
	long long pinned = pinned_pages();
	uint8_t *buf = map_buf(PAGE);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, NULL));
	EXPECT_ERRNO(EINVAL, buf_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 2, 1,
				     (uintptr_t)buf, PAGE, NULL));
	EXPECT_ERRNO(EINVAL, buf_cmd(self->fd, DPUSIM_IOCTL_STREAM_SEEK, 0, 2, 0,
				     (uintptr_t)buf, PAGE, NULL));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(0, cursor(self->fd, 0, 2));
	/* the stream has no buffer */
	EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, 0, 0, 0));
	munmap(buf, PAGE);
}

/*
 * A buffer longer than DPUSIM_STREAM_MAX_BUF: E2BIG, nothing pinned, not
 * open; one of exactly DPUSIM_STREAM_MAX_BUF is no E2BIG (EFAULT: only
 * its first page is mapped writable).
 */
TEST_F(stream, buf_open_len_over_max)
{
	long long pinned = pinned_pages();
	long vmpin = proc_status_kb("VmPin:");
	uint8_t *buf = mmap(NULL, DPUSIM_STREAM_MAX_BUF, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, mprotect(buf, PAGE, PROT_READ | PROT_WRITE));
	buf[0] = 1;
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	EXPECT_ERRNO(E2BIG, open_buf(self->fd, 0, 2, buf, DPUSIM_STREAM_MAX_BUF + 1));
	EXPECT_ERRNO(E2BIG, open_buf(self->fd, 0, 2, buf, UINT64_MAX));
	EXPECT_ERRNO(EFAULT, open_buf(self->fd, 0, 2, buf, DPUSIM_STREAM_MAX_BUF));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(vmpin, proc_status_kb("VmPin:"));
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	munmap(buf, DPUSIM_STREAM_MAX_BUF);
}

/*
 * A buffer mapped read-only, wholly or in its second page: EFAULT, the
 * pages pinned so far let go, not open.
 */
TEST_F(stream, buf_open_readonly_mapping)
{
	long long pinned = pinned_pages();
	long vmpin = proc_status_kb("VmPin:");
	uint8_t *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0), *buf = map_buf(2 * PAGE);

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, mprotect(buf + PAGE, PAGE, PROT_READ));
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	EXPECT_ERRNO(EFAULT, open_buf(self->fd, 0, 2, ro, PAGE));
	EXPECT_ERRNO(EFAULT, open_buf(self->fd, 0, 2, buf, 2 * PAGE));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(vmpin, proc_status_kb("VmPin:"));
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	/* its first page alone is fine */
	EXPECT_EQ(0, open_buf(self->fd, 0, 2, buf, PAGE));
	EXPECT_EQ(pinned + 1, pinned_pages());
	munmap(ro, PAGE);
	munmap(buf, 2 * PAGE);
}

/*
 * A buffer not mapped, wholly or in its second page, or one that wraps
 * the address space: EFAULT, nothing pinned, not open.
 */
TEST_F(stream, buf_open_unmapped)
{
	long long pinned = pinned_pages();
	long vmpin = proc_status_kb("VmPin:");
	uint8_t *hole = map_buf(2 * PAGE), *half = map_buf(2 * PAGE);

	ASSERT_NE(NULL, hole);
	ASSERT_NE(NULL, half);
	ASSERT_EQ(0, munmap(hole, 2 * PAGE));
	ASSERT_EQ(0, munmap(half + PAGE, PAGE));
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	EXPECT_ERRNO(EFAULT, open_buf(self->fd, 0, 2, hole, 2 * PAGE));
	EXPECT_ERRNO(EFAULT, open_buf(self->fd, 0, 2, half, 2 * PAGE));
	EXPECT_ERRNO(EFAULT, buf_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0,
				     ~(PAGE - 1), 2 * PAGE, NULL));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(vmpin, proc_status_kb("VmPin:"));
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	munmap(half, PAGE);
}

/* The answer of an OPEN with a buffer cannot be written: nothing pinned */
TEST_F(stream, buf_open_readonly_struct)
{
	long long pinned = pinned_pages();
	long vmpin = proc_status_kb("VmPin:");
	uint8_t *buf = map_buf(PAGE);
	struct dpusim_stream_cmd *c = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(NULL, buf);
	ASSERT_NE(MAP_FAILED, c);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	*c = (struct dpusim_stream_cmd){ .size = sizeof(*c), .core = 2,
					 .buf = (uintptr_t)buf, .buf_len = PAGE };
	ASSERT_EQ(0, mprotect(c, PAGE, PROT_READ));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_STREAM_OPEN, c));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(vmpin, proc_status_kb("VmPin:"));
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	munmap(c, PAGE);
	munmap(buf, PAGE);
}

/* OPEN with a buffer of no stream, or as a core past the rank: nothing pinned */
TEST_F(stream, buf_open_no_stream)
{
	long long pinned = pinned_pages();
	uint8_t *buf = map_buf(PAGE);

	ASSERT_NE(NULL, buf);
	EXPECT_ERRNO(ENOENT, open_buf(self->fd, 0, 2, buf, PAGE));
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	EXPECT_ERRNO(ENOENT, open_buf(self->fd, 1, 2, buf, PAGE));
	EXPECT_ERRNO(EINVAL, open_buf(self->fd, 0, self->info.nr_dpus, buf, PAGE));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	munmap(buf, PAGE);
}

/*
 * OPEN with a buffer of a stream open by another core, or by the same
 * one: EBUSY, nothing more pinned, the opener keeps the stream.
 */
TEST_F(stream, buf_open_busy)
{
	long long pinned = pinned_pages();
	uint8_t *a = map_buf(2 * PAGE), *b = map_buf(PAGE);

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 3, 0, NULL));
	EXPECT_ERRNO(EBUSY, open_buf(self->fd, 0, 4, b, PAGE));
	EXPECT_ERRNO(EBUSY, open_buf(self->fd, 0, 3, b, PAGE));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_EQ(0, cursor(self->fd, 0, 3));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 3, 0, NULL));
	/* open with a buffer: another buffer is EBUSY and pins nothing */
	ASSERT_EQ(0, open_buf(self->fd, 0, 4, a, 2 * PAGE));
	EXPECT_EQ(pinned + 2, pinned_pages());
	EXPECT_ERRNO(EBUSY, open_buf(self->fd, 0, 5, b, PAGE));
	EXPECT_ERRNO(EBUSY, open_buf(self->fd, 0, 4, b, PAGE));
	EXPECT_EQ(pinned + 2, pinned_pages());
	/* core 4's buffer is still the one its moves use */
	EXPECT_EQ(0, down_buf(self->fd, 4, 0, 0, PAGE));
	EXPECT_EQ(0, memcmp(a + PAGE, self->data, 16));
	EXPECT_EQ(0xee, b[0]);
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 4, 0, NULL));
	EXPECT_EQ(pinned, pinned_pages());
	munmap(a, 2 * PAGE);
	munmap(b, PAGE);
}

/*
 * Over RLIMIT_MEMLOCK without CAP_IPC_LOCK (root drops to nobody, with a
 * limit of one page): a buffer of two pages is ENOMEM, nothing pinned;
 * one page is within it, and then a second buffer of one page is over.
 */
TEST_F(stream, buf_open_memlock_enomem)
{
	long long pinned = pinned_pages();
	uint8_t *a = map_buf(2 * PAGE), *b = map_buf(PAGE);
	pid_t pid;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(1, stream_create(self->fd, 100, 16, self->data, NULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { PAGE, PAGE };
		uint8_t want[24];

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(10);
		if (getuid() == 0 && setresuid(65534, 65534, 65534))
			_exit(11);
		if (open_buf(self->fd, 0, 2, a, 2 * PAGE) != -1 || errno != ENOMEM)
			_exit(12);
		if (proc_status_kb("VmPin:") != 0 || pinned_pages() != pinned)
			_exit(13);
		if (!not_open(self->fd, 0, 2))
			_exit(14);
		if (open_buf(self->fd, 0, 2, a, PAGE))
			_exit(15);
		if (proc_status_kb("VmPin:") != 4 || pinned_pages() != pinned + 1)
			_exit(16);
		if (open_buf(self->fd, 1, 2, b, PAGE) != -1 || errno != ENOMEM)
			_exit(17);
		if (!not_open(self->fd, 1, 2))
			_exit(18);
		if (down_buf(self->fd, 2, 0, 0, 0))
			_exit(19);
		token_of(self->data, 0, want);
		if (memcmp(a, want, 24))
			_exit(20);
		if (stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0, NULL))
			_exit(21);
		if (proc_status_kb("VmPin:") != 0 || pinned_pages() != pinned)
			_exit(22);
		/* given back: the other stream's buffer fits now */
		if (open_buf(self->fd, 1, 2, b, PAGE))
			_exit(23);
		if (stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 1, 2, 0, NULL))
			_exit(24);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(pinned, pinned_pages());
	EXPECT_TRUE(not_open(self->fd, 0, 2));
	EXPECT_TRUE(not_open(self->fd, 1, 2));
	munmap(a, 2 * PAGE);
	munmap(b, PAGE);
}

/*
 * A forked child moving with the parent's buffer (the fd inherited): EPERM,
 * synchronous or not, nothing moved; the parent's moves still land in its
 * own buffer.
 */
TEST_F(stream, buf_move_forked_child)
{
	long long pinned = pinned_pages();
	uint8_t *buf = map_buf(PAGE), want[24];
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, PAGE));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (down_buf(self->fd, 2, 0, 0, 0) != -1 || errno != EPERM)
			_exit(10);
		if (down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 0, 0) != -1 ||
		    errno != EPERM)
			_exit(11);
		if (sync_rank(self->fd))
			_exit(12);
		if (cursor(self->fd, 0, 2) != 0)
			_exit(13);
		_exit(buf[0] == 0xee ? 0 : 14);
	}
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(0, cursor(self->fd, 0, 2));
	EXPECT_EQ(pinned + 1, pinned_pages());
	ASSERT_EQ(0, down_buf(self->fd, 2, 0, 0, 0));
	token_of(self->data, 0, want);
	EXPECT_EQ(0, memcmp(buf, want, 24));
	ASSERT_EQ(0, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_CLOSE, 0, 2, 0, NULL));
	EXPECT_EQ(pinned, pinned_pages());
	munmap(buf, PAGE);
}

/*
 * The struct of before the buffer (up to @prev) still opens, closes and
 * seeks, with no buffer; what follows it in memory is neither read nor
 * written.
 */
TEST_F(stream, buf_old_struct_size)
{
	const size_t old = offsetofend(struct dpusim_stream_cmd, prev);
	union {
		struct dpusim_stream_cmd c;
		uint8_t raw[sizeof(struct dpusim_stream_cmd)];
	} u;
	long long pinned = pinned_pages();
	unsigned long ioc[] = {
		DPUSIM_IOCTL_STREAM_OPEN, DPUSIM_IOCTL_STREAM_SEEK,
		DPUSIM_IOCTL_STREAM_CLOSE,
	};
	uint8_t got[24];
	size_t i, j;

	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	for (i = 0; i < 3; i++) {
		memset(u.raw, 0, old);
		memset(u.raw + old, 0xee, sizeof(u) - old);	/* "buf", "buf_len" */
		u.c.size = old;
		u.c.core = 2;
		u.c.delta = i == 1 ? 1 : 0;
		ASSERT_EQ(0, ioctl(self->fd, ioc[i], &u.c))
			TH_LOG("cmd %zu: %s", i, strerror(errno));
		EXPECT_EQ(sizeof(struct dpusim_stream_cmd), u.c.size);
		EXPECT_EQ(i ? 2u : 0u, u.c.cursor);	/* a move, a seek */
		EXPECT_EQ(16, u.c.token);
		EXPECT_EQ(7, u.c.nr_tokens);
		for (j = old; j < sizeof(u); j++)
			if (u.raw[j] != 0xee)
				break;
		EXPECT_EQ(sizeof(u), j) TH_LOG("cmd %zu wrote past the size", i);
		EXPECT_EQ(pinned, pinned_pages());
		if (i == 0) {
			EXPECT_ERRNO(EINVAL, down_buf(self->fd, 2, 0, 0, 0));
			ASSERT_EQ(0, down(self->fd, 0, 2, 8, 16, got));
		}
	}
	EXPECT_TRUE(not_open(self->fd, 0, 2));
}

/*
 * The rank's fd closed with a buffer registered and a move into it still
 * queued (behind other transfers): the move completes into the buffer; the
 * next open finds nothing pinned, no stream, VmPin as before.
 */
TEST_F(stream, buf_rank_close_with_async_queued)
{
	long vmpin = proc_status_kb("VmPin:");
	uint8_t *buf = map_buf(PAGE), *ahead, want[24];
	long long p, jobs;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, pinned_pages());
	ASSERT_EQ(0, stream_create(self->fd, 100, 16, self->data, NULL));
	ASSERT_EQ(0, open_buf(self->fd, 0, 2, buf, PAGE));
	ASSERT_EQ(0, queue_ahead(self->fd, &ahead)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, down_buf(self->fd, 2, DPUSIM_XFER_ASYNC, 0, 8));
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	p = pinned_pages();
	jobs = sysfs_rank_attr(0, "async_jobs");
	EXPECT_TRUE(move_held_page(p, jobs)) TH_LOG("%lld pages, %lld jobs", p, jobs);
	if (jobs < 1)
		TH_LOG("the move was done before the check");
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(0, sysfs_rank_attr(0, "async_jobs"));
	EXPECT_EQ(0, pinned_pages());
	EXPECT_EQ(vmpin, proc_status_kb("VmPin:"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "stream_resident_bytes"));
	EXPECT_ERRNO(ENOENT, stream_cmd(self->fd, DPUSIM_IOCTL_STREAM_OPEN, 0, 2, 0, NULL));
	token_of(self->data, 0, want);
	EXPECT_EQ(0, memcmp(buf + 8, want, 24));
	EXPECT_EQ(0xee, buf[7]);
	EXPECT_EQ(0xee, buf[32]);
	munmap(ahead, AHEAD_LEN);
	munmap(buf, PAGE);
}

TEST_HARNESS_MAIN
