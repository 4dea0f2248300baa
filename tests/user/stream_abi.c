// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of streams through /dev/dpusim/rank0: DPUSIM_IOCTL_STREAM_CREATE,
 * _OPEN, _CLOSE and _SEEK, one test per failure path, the numbering in
 * creation order, one core at a time, the cursor, and the memory charged
 * and given back (sysfs stream_resident_bytes).
 */
#include <limits.h>
#include <sys/mman.h>

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

TEST_HARNESS_MAIN
