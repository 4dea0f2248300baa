// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for a core's registered token buffer (stream_buf.c): the
 * pin and its RLIMIT_MEMLOCK charge at OPEN, given back at CLOSE and when
 * the rank's streams go; DPUSIM_XFER_STREAM_BUF moves through the pages by
 * offset; the offsets checked; an asynchronous move that keeps the buffer
 * after a CLOSE until it is done.
 *
 * The fixture's user memory (xfer_fixture.h): a pattern in pages 0-3,
 * 0xee in pages 4-7.  The stream is made of the pattern's first 100 bytes
 * in tokens of 16; the buffer is pages 4-5.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>

#include "xfer_fixture.h"

#define BUF_OFF		XFER_UMEM_HALF
#define BUF_LEN		(2 * PAGE_SIZE)

static unsigned long pinned_vm(void)
{
	return atomic64_read(&current->mm->pinned_vm);
}

static int buf_cmd(struct xfer_fixture *t, unsigned int cmd, u64 buf,
		   u64 len, struct dpusim_stream_cmd *out)
{
	*out = (struct dpusim_stream_cmd){ .id = 0, .core = 2, .buf = buf,
					   .buf_len = len };
	return dpusim_stream_cmd(&t->rank, cmd, out, NULL);
}

/* Stream 0: the pattern's first 100 bytes in tokens of 16 */
static void make_stream(struct kunit *test, struct xfer_fixture *t)
{
	struct dpusim_stream_create c = {
		.stream_size = 100, .token_size = 16,
		.data = xfer_uaddr(t, 0),
	};

	KUNIT_ASSERT_EQ(test, dpusim_stream_create(&t->rank, &c), 0);
}

/* Stream 0 made and opened by core 2 with the buffer (pages 4-5) */
static struct dpusim_stream *open_with_buf(struct kunit *test,
					   struct xfer_fixture *t)
{
	struct dpusim_stream_cmd o;

	make_stream(test, t);
	KUNIT_ASSERT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_OPEN,
				      xfer_uaddr(t, BUF_OFF), BUF_LEN, &o), 0);
	return xa_load(&t->rank.streams, 0);
}

/* The token at the cursor (@token of 16 bytes), down to @off of the buffer */
static int move_down(struct xfer_fixture *t, u32 token, u64 off, u64 len,
		     u32 flags)
{
	const struct dpusim_xfer_dpu d = { .dpu = 2, .nr_blocks = 1 };
	const struct dpusim_block b = { off, len };
	struct dpusim_xfer x = {
		.flags = DPUSIM_XFER_STREAM | DPUSIM_XFER_FROM_DPU |
			 DPUSIM_XFER_STREAM_BUF | flags,
		.offset = token * 24 + 8, .length = 24, .nr_dpus = 1,
		.nr_blocks = 1,
	};

	return dpusim_xfer_run(&t->rank, &x, &d, &b);
}

/* Did token @token (16 bytes of the pattern) land at @off of the buffer? */
static void expect_token(struct kunit *test, struct xfer_fixture *t,
			 u32 token, u64 off)
{
	u8 got[16];

	KUNIT_ASSERT_EQ(test, copy_from_user(got, t->umem + BUF_OFF + off,
					     sizeof(got)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, t->kbuf + token * 16, sizeof(got)), 0);
}

/* OPEN pins and charges the buffer's pages; CLOSE gives them back */
static void stream_buf_pin_and_release(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	unsigned long base = pinned_vm();
	struct dpusim_stream_cmd o;
	struct dpusim_stream *s;

	s = open_with_buf(test, t);
	KUNIT_ASSERT_NOT_NULL(test, s->buf);
	KUNIT_EXPECT_EQ(test, s->buf->nr_pages, 2);
	KUNIT_EXPECT_EQ(test, pinned_vm(), base + 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.xfer.pinned_pages), 2);
	/* the buffer's pages, in order, by offset */
	KUNIT_EXPECT_PTR_EQ(test, dpusim_stream_buf_page(s->buf, 0),
			    s->buf->pages[0]);
	KUNIT_EXPECT_PTR_EQ(test, dpusim_stream_buf_page(s->buf, PAGE_SIZE + 5),
			    s->buf->pages[1]);
	KUNIT_ASSERT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_CLOSE, 0, 0, &o), 0);
	KUNIT_EXPECT_NULL(test, s->buf);
	KUNIT_EXPECT_EQ(test, pinned_vm(), base);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.xfer.pinned_pages), 0);
}

/* Refused buffers: nothing pinned, the stream not open */
static void stream_buf_refused(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	unsigned long base = pinned_vm();
	u64 buf = xfer_uaddr(t, BUF_OFF);
	struct dpusim_stream_cmd o;

	make_stream(test, t);
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_OPEN, buf + 8,
				      BUF_LEN, &o), -EINVAL);
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_OPEN, buf, 0, &o),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0, BUF_LEN, &o),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_OPEN, buf,
				      DPUSIM_STREAM_MAX_BUF + 1, &o), -E2BIG);
	/* its last page past the top of the address space */
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_OPEN, -PAGE_SIZE,
				      100, &o), -EFAULT);
	/* past the fixture's mapping */
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_OPEN, buf,
				      XFER_UMEM_PAGES * PAGE_SIZE, &o), -EFAULT);
	/* no stream 1 */
	o = (struct dpusim_stream_cmd){ .id = 1, .core = 2, .buf = buf,
					.buf_len = BUF_LEN };
	KUNIT_EXPECT_EQ(test, dpusim_stream_cmd(&t->rank, DPUSIM_CMD_STREAM_OPEN,
						&o, NULL), -ENOENT);
	KUNIT_EXPECT_EQ(test, pinned_vm(), base);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.xfer.pinned_pages), 0);
	/* open without, then a buffer on SEEK or CLOSE */
	KUNIT_ASSERT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0, 0, &o), 0);
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_SEEK, buf, BUF_LEN,
				      &o), -EINVAL);
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_CLOSE, buf, BUF_LEN,
				      &o), -EINVAL);
	/* a move by offset with no buffer registered */
	KUNIT_EXPECT_EQ(test, move_down(t, 0, 0, 24, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, pinned_vm(), base);
}

/* Moves land at their offset; offsets outside the buffer move nothing */
static void stream_buf_moves(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	unsigned long base = pinned_vm();
	struct dpusim_stream *s;

	s = open_with_buf(test, t);
	KUNIT_EXPECT_EQ(test, move_down(t, 0, 0, 24, 0), 0);
	expect_token(test, t, 0, 0);
	/* across the buffer's two pages */
	KUNIT_EXPECT_EQ(test, move_down(t, 1, PAGE_SIZE - 10, 24, 0), 0);
	expect_token(test, t, 1, PAGE_SIZE - 10);
	/* the last bytes of the buffer */
	KUNIT_EXPECT_EQ(test, move_down(t, 2, BUF_LEN - 24, 24, 0), 0);
	expect_token(test, t, 2, BUF_LEN - 24);
	KUNIT_EXPECT_EQ(test, s->cursor, 3);
	/* one byte past the end, or an offset past it: nothing moves */
	KUNIT_EXPECT_EQ(test, move_down(t, 3, BUF_LEN - 23, 24, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, move_down(t, 3, BUF_LEN, 24, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, move_down(t, 3, U64_MAX - 8, 24, 0), -EFAULT);
	KUNIT_EXPECT_EQ(test, s->cursor, 3);
	/* nothing charged per move */
	KUNIT_EXPECT_EQ(test, pinned_vm(), base + 2);
	KUNIT_EXPECT_EQ(test, kref_read(&s->buf->ref), 1);
}

/*
 * A move whose blocks are not the buffer's pages in order (the token's
 * first 16 bytes in the second page, its header in the first, one
 * asynchronous) gets a page array of its own: each block lands where it
 * says, nothing else in the buffer changes.
 */
static void stream_buf_blocks_out_of_order(struct kunit *test)
{
	const struct dpusim_xfer_dpu d = { .dpu = 2, .nr_blocks = 2 };
	const struct dpusim_block b[2] = { { PAGE_SIZE + 100, 16 }, { 40, 8 } };
	struct dpusim_xfer x = {
		.flags = DPUSIM_XFER_STREAM | DPUSIM_XFER_FROM_DPU |
			 DPUSIM_XFER_STREAM_BUF,
		.offset = 8, .length = 24, .nr_dpus = 1, .nr_blocks = 2,
	};
	struct xfer_fixture *t = test->priv;
	struct dpusim_stream *s;
	u32 hdr[2], i;
	u8 rest[32];

	s = open_with_buf(test, t);
	for (i = 0; i < 2; i++) {
		if (i)
			x.flags |= DPUSIM_XFER_ASYNC;
		x.offset = i * 24 + 8;
		KUNIT_EXPECT_EQ(test, dpusim_xfer_run(&t->rank, &x, &d, b), 0);
		KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
		expect_token(test, t, i, PAGE_SIZE + 100);
		/* the header after the token: prevsize, nextsize */
		KUNIT_ASSERT_EQ(test, copy_from_user(hdr, t->umem + BUF_OFF + 40,
						     sizeof(hdr)), 0);
		KUNIT_EXPECT_EQ(test, hdr[0], 16);
		KUNIT_EXPECT_EQ(test, hdr[1], 16);
	}
	KUNIT_EXPECT_EQ(test, s->cursor, 2);
	/* around the blocks: the fixture's 0xee */
	KUNIT_ASSERT_EQ(test, copy_from_user(rest, t->umem + BUF_OFF + 8,
					     sizeof(rest)), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(rest, 0xee, sizeof(rest)));
	KUNIT_ASSERT_EQ(test, copy_from_user(rest, t->umem + BUF_OFF + PAGE_SIZE + 116,
					     sizeof(rest)), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(rest, 0xee, sizeof(rest)));
	KUNIT_EXPECT_EQ(test, kref_read(&s->buf->ref), 1);
}

/*
 * An asynchronous move holds the buffer: CLOSE while it is queued lets
 * go of the stream's reference only; the pages stay pinned and charged
 * until the move is done, and it lands.
 */
static void stream_buf_async_outlives_close(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	unsigned long base = pinned_vm();
	struct dpusim_stream_cmd o;
	struct blocker blk;

	open_with_buf(test, t);
	block_rank(t, &blk);
	KUNIT_EXPECT_EQ(test, move_down(t, 0, 100, 24, DPUSIM_XFER_ASYNC), 0);
	KUNIT_EXPECT_EQ(test, buf_cmd(t, DPUSIM_CMD_STREAM_CLOSE, 0, 0, &o), 0);
	KUNIT_EXPECT_EQ(test, pinned_vm(), base + 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.xfer.pinned_pages), 2);
	unblock_rank(&blk);
	KUNIT_EXPECT_EQ(test, dpusim_async_sync(&t->rank, 0), 0);
	expect_token(test, t, 0, 100);
	KUNIT_EXPECT_EQ(test, pinned_vm(), base);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.xfer.pinned_pages), 0);
}

/* The rank's streams going (the end of its ownership) unpin the buffer */
static void stream_buf_freed_with_streams(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	unsigned long base = pinned_vm();

	open_with_buf(test, t);
	KUNIT_EXPECT_EQ(test, pinned_vm(), base + 2);
	dpusim_stream_free_all(&t->rank);
	KUNIT_EXPECT_EQ(test, pinned_vm(), base);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->rank.xfer.pinned_pages), 0);
}

static struct kunit_case dpusim_stream_buf_cases[] = {
	KUNIT_CASE(stream_buf_pin_and_release),
	KUNIT_CASE(stream_buf_refused),
	KUNIT_CASE(stream_buf_moves),
	KUNIT_CASE(stream_buf_blocks_out_of_order),
	KUNIT_CASE(stream_buf_async_outlives_close),
	KUNIT_CASE(stream_buf_freed_with_streams),
	{}
};

static struct kunit_suite dpusim_stream_buf_suite = {
	.name = "dpusim_stream_buf",
	.init = xfer_fixture_init,
	.exit = xfer_fixture_exit,
	.test_cases = dpusim_stream_buf_cases,
};

kunit_test_suite(dpusim_stream_buf_suite);
