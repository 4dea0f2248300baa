// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for streams (stream.c): the layout, the header walk (the
 * memory's format byte for byte, uneven sizes), the cursor (seek as a
 * table), the open/close/seek rules and which moves are allowed.
 */
#include <kunit/test.h>
#include <linux/limits.h>

#include "xfer_fixture.h"

static void stream_layout_sizes(struct kunit *test)
{
	u32 n = 99;
	u64 m = 99;

	/* the seed's stream: 256 floats in tokens of 32 */
	KUNIT_EXPECT_EQ(test, dpusim_stream_layout(1024, 128, true, &n, &m), 0);
	KUNIT_EXPECT_EQ(test, n, 8);
	KUNIT_EXPECT_EQ(test, m, 1024 + 9 * 8);
	/* sizes that do not divide: the last token is the rest */
	KUNIT_EXPECT_EQ(test, dpusim_stream_layout(100, 16, true, &n, &m), 0);
	KUNIT_EXPECT_EQ(test, n, 7);
	KUNIT_EXPECT_EQ(test, m, 100 + 8 * 8);
	/* one token, smaller than the token size */
	KUNIT_EXPECT_EQ(test, dpusim_stream_layout(5, 16, true, &n, &m), 0);
	KUNIT_EXPECT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, m, 5 + 16);
	/* an empty stream for results: no token, room for 8-byte ones */
	KUNIT_EXPECT_EQ(test, dpusim_stream_layout(64, 16, false, &n, &m), 0);
	KUNIT_EXPECT_EQ(test, n, 0);
	KUNIT_EXPECT_EQ(test, m, 64 + 9 * 8);
	/* refused */
	KUNIT_EXPECT_EQ(test, dpusim_stream_layout(64, 15, true, &n, &m),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_stream_layout(0, 16, true, &n, &m),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_stream_layout(DPUSIM_STREAM_MAX_BYTES + 1,
						   1 << 20, true, &n, &m),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, dpusim_stream_layout((u64)DPUSIM_STREAM_MAX_TOKENS *
						   16 + 1, 16, true, &n, &m),
			-E2BIG);
}

struct seek_case {
	u32 cursor, nr;
	s32 delta;
	u32 want;
};

static const struct seek_case seek_cases[] = {
	{ 0, 8, 5, 5 },			/* forward */
	{ 5, 8, -3, 2 },		/* back */
	{ 2, 8, 100, 8 },		/* clamped at the end */
	{ 2, 8, -100, 0 },		/* clamped at the first token */
	{ 3, 8, INT_MIN, 0 },		/* the start */
	{ 3, 8, INT_MAX, 8 },		/* the end */
	{ 8, 8, INT_MAX, 8 },
	{ 0, 8, INT_MIN, 0 },
	{ 8, 8, -1, 7 },		/* back from the end */
	{ 4, 8, 0, 4 },
	{ 0, 0, 1, 0 },			/* an empty stream */
	{ 0, 0, -1, 0 },
	{ DPUSIM_STREAM_MAX_TOKENS, DPUSIM_STREAM_MAX_TOKENS, INT_MIN, 0 },
};

static void stream_seek_table(struct kunit *test)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(seek_cases); i++) {
		const struct seek_case *c = &seek_cases[i];

		KUNIT_EXPECT_EQ_MSG(test,
				    dpusim_stream_seek(c->cursor, c->nr, c->delta),
				    c->want, "case %zu: %u of %u, %d", i,
				    c->cursor, c->nr, c->delta);
	}
}

static struct dpusim_stream *stream_get(struct xfer_fixture *t, u32 id)
{
	return xa_load(&t->rank.streams, id);
}

static u32 mem_u32(struct dpusim_stream *s, u64 off)
{
	u32 v;

	dpusim_mem_copy_page(&s->mem, off, &v, sizeof(v), false);
	return v;
}

/* The memory of a stream of 100 bytes in tokens of 16, byte for byte */
static void stream_format_uneven(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_stream_create c = {
		.stream_size = 100, .token_size = 16,
		.data = xfer_uaddr(t, 0),
	};
	u32 want_size[8] = { 16, 16, 16, 16, 16, 16, 4, 0 };
	struct dpusim_stream *s;
	u64 off, pos = 0;
	u32 i, prev = 0;
	u8 b;

	KUNIT_ASSERT_EQ(test, dpusim_stream_create(&t->rank, &c), 0);
	KUNIT_EXPECT_EQ(test, c.id, 0);
	KUNIT_EXPECT_EQ(test, c.nr_tokens, 7);
	KUNIT_EXPECT_EQ(test, c.mem_size, 164);
	s = stream_get(t, 0);
	KUNIT_ASSERT_NOT_NULL(test, s);
	for (i = 0; i <= 7; i++) {
		KUNIT_EXPECT_EQ(test, dpusim_stream_token(s, i, &off),
				want_size[i]);
		KUNIT_EXPECT_EQ(test, off, pos);
		KUNIT_EXPECT_EQ_MSG(test, mem_u32(s, pos), prev, "token %u", i);
		KUNIT_EXPECT_EQ_MSG(test, mem_u32(s, pos + 4), want_size[i],
				    "token %u", i);
		prev = want_size[i];
		pos += 8 + want_size[i];
	}
	/* the data, in order, between the headers */
	for (i = 0, pos = 0; i < 100; i++) {
		u32 tok = i / 16;

		off = (u64)tok * 24 + 8 + i % 16;
		dpusim_mem_copy_page(&s->mem, off, &b, 1, false);
		KUNIT_EXPECT_EQ_MSG(test, b, t->kbuf[i], "byte %u", i);
	}
	/* the pages of the format are charged */
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 1);
}

/* An empty stream: one header 0, 0, ids in creation order, a bad buffer */
static void stream_create_rules(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_stream_create c = { .stream_size = 4096, .token_size = 64 };
	struct dpusim_stream *s;
	long base;

	KUNIT_ASSERT_EQ(test, dpusim_stream_create(&t->rank, &c), 0);
	KUNIT_EXPECT_EQ(test, c.id, 0);
	KUNIT_EXPECT_EQ(test, c.nr_tokens, 0);
	s = stream_get(t, 0);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_EXPECT_EQ(test, mem_u32(s, 0), 0);
	KUNIT_EXPECT_EQ(test, mem_u32(s, 4), 0);
	KUNIT_EXPECT_EQ(test, s->mem.nr_pages, 1);	/* sparse */

	c = (struct dpusim_stream_create){ .stream_size = 64, .token_size = 16,
					   .data = xfer_uaddr(t, 0) };
	KUNIT_ASSERT_EQ(test, dpusim_stream_create(&t->rank, &c), 0);
	KUNIT_EXPECT_EQ(test, c.id, 1);

	/* refused, with nothing created or charged */
	base = atomic_long_read(&t->budget.pages);
	c.token_size = 8;
	KUNIT_EXPECT_EQ(test, dpusim_stream_create(&t->rank, &c), -EINVAL);
	c.token_size = 16;
	c.flags = 1;
	KUNIT_EXPECT_EQ(test, dpusim_stream_create(&t->rank, &c), -EINVAL);
	c.flags = 0;
	c.__reserved = 1;
	KUNIT_EXPECT_EQ(test, dpusim_stream_create(&t->rank, &c), -EINVAL);
	c.__reserved = 0;
	c.data = 16;		/* not mapped */
	KUNIT_EXPECT_EQ(test, dpusim_stream_create(&t->rank, &c), -EFAULT);
	c.data = xfer_uaddr(t, 0);
	t->budget.limit = base << PAGE_SHIFT;
	KUNIT_EXPECT_EQ(test, dpusim_stream_create(&t->rank, &c), -ENOSPC);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), base);
	KUNIT_EXPECT_NULL(test, stream_get(t, 2));
	t->budget.limit = SZ_1M;
	KUNIT_ASSERT_EQ(test, dpusim_stream_create(&t->rank, &c), 0);
	KUNIT_EXPECT_EQ(test, c.id, 2);

	/* all go with the ownership, their pages back to the budget */
	dpusim_stream_free_all(&t->rank);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&t->budget.pages), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&t->rank.streams));
}

static int stream_cmd(struct xfer_fixture *t, unsigned int cmd, u32 id,
		      u32 core, s32 delta, struct dpusim_stream_cmd *out)
{
	*out = (struct dpusim_stream_cmd){ .id = id, .core = core,
					   .delta = delta };
	return dpusim_stream_cmd(&t->rank, cmd, out, NULL);
}

/* One core at a time; close and seek only by it; the cursor */
static void stream_open_close_seek(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_stream_create c = {
		.stream_size = 100, .token_size = 16,
		.data = xfer_uaddr(t, 0),
	};
	struct dpusim_stream_cmd o;

	KUNIT_ASSERT_EQ(test, dpusim_stream_create(&t->rank, &c), 0);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 1, 0, 0, &o),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0,
					 t->rank.nr_dpus, 0, &o), -EINVAL);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0, 1, 3, &o),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_SEEK, 0, 1, 1, &o),
			-EINVAL);	/* not open */
	KUNIT_ASSERT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0, 1, 0, &o),
			0);
	KUNIT_EXPECT_EQ(test, o.cursor, 0);
	KUNIT_EXPECT_EQ(test, o.token, 16);
	KUNIT_EXPECT_EQ(test, o.nr_tokens, 7);
	KUNIT_EXPECT_EQ(test, o.mem_size, 164);
	/* a second core: EBUSY, also the same core again */
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0, 2, 0, &o),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0, 1, 0, &o),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_CLOSE, 0, 2, 0, &o),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_SEEK, 0, 2, 1, &o),
			-EINVAL);
	/* seek: to the last token (4 bytes), the end, back */
	KUNIT_ASSERT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_SEEK, 0, 1, 6, &o),
			0);
	KUNIT_EXPECT_EQ(test, o.cursor, 6);
	KUNIT_EXPECT_EQ(test, o.token, 4);
	KUNIT_ASSERT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_SEEK, 0, 1,
					 INT_MAX, &o), 0);
	KUNIT_EXPECT_EQ(test, o.cursor, 7);
	KUNIT_EXPECT_EQ(test, o.token, 0);
	KUNIT_ASSERT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_SEEK, 0, 1, -2, &o),
			0);
	KUNIT_EXPECT_EQ(test, o.cursor, 5);
	/* close, then another core opens it, on token 0 again */
	KUNIT_ASSERT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_CLOSE, 0, 1, 0, &o),
			0);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_CLOSE, 0, 1, 0, &o),
			-EINVAL);	/* twice */
	KUNIT_ASSERT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0, 2, 0, &o),
			0);
	KUNIT_EXPECT_EQ(test, o.cursor, 0);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_CLOSE, 0, 2, 0, &o),
			0);
	KUNIT_EXPECT_EQ(test, stream_cmd(t, 0, 0, 2, 0, &o), -EINVAL);
}

/* Which descriptors move a token, and where the cursor goes */
static void stream_move_rules(struct kunit *test)
{
	struct xfer_fixture *t = test->priv;
	struct dpusim_rank *rank = &t->rank;
	struct dpusim_stream_create c = {
		.stream_size = 100, .token_size = 16,
		.data = xfer_uaddr(t, 0),
	};
	struct dpusim_stream_cmd o;
	struct dpusim_xfer x = {
		.flags = DPUSIM_XFER_STREAM | DPUSIM_XFER_FROM_DPU, .nr_dpus = 1,
	};
	struct dpusim_stream *s;

	KUNIT_ASSERT_EQ(test, dpusim_stream_create(rank, &c), 0);
	c = (struct dpusim_stream_create){ .stream_size = 40, .token_size = 16 };
	KUNIT_ASSERT_EQ(test, dpusim_stream_create(rank, &c), 0);
	KUNIT_ASSERT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 0, 2, 0, &o), 0);
	KUNIT_ASSERT_EQ(test, stream_cmd(t, DPUSIM_CMD_STREAM_OPEN, 1, 2, 0, &o), 0);
	s = stream_get(t, 0);

	mutex_lock(&rank->state_lock);
	/* down: the data of the token at the cursor and the header after it */
	x.offset = 8;
	x.length = 24;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), 0);
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 3), -EINVAL);
	x.length = 16;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), -EINVAL);
	x.offset = 0;
	x.length = 24;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), -EINVAL);
	x.stream = 9;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), -ENOENT);
	x.stream = 0;
	/* to the last token (4 bytes), then the end */
	s->cursor = 6;
	x.offset = 6 * 24 + 8;
	x.length = 12;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), 0);
	dpusim_stream_move_done(rank, &x);
	KUNIT_EXPECT_EQ(test, s->cursor, 7);
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), -ENODATA);
	/* up: not on a stream made of data */
	x.flags = DPUSIM_XFER_STREAM;
	s->cursor = 0;
	x.offset = 0;
	x.length = 32;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), -EINVAL);
	/* on the empty one (40 bytes): 16, 16, then 16 more is too many */
	x.stream = 1;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), 0);
	dpusim_stream_move_done(rank, &x);
	s = stream_get(t, 1);
	KUNIT_EXPECT_EQ(test, s->nr_tokens, 1);
	KUNIT_EXPECT_EQ(test, s->cursor, 1);
	x.length = 28;			/* 12 bytes: not a multiple of 8 */
	x.offset = 24;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), -EINVAL);
	x.length = 32;
	x.offset = 16;			/* not the cursor's header */
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), -EINVAL);
	x.offset = 24;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), 0);
	dpusim_stream_move_done(rank, &x);
	x.offset = 48;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), -ENOSPC);
	x.length = 24;			/* 8 bytes: 40 in all, fits */
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), 0);
	/* back to token 1 and write there: the stream ends after it */
	s->cursor = 1;
	x.offset = 24;
	x.length = 24;
	KUNIT_EXPECT_EQ(test, dpusim_stream_move_check(rank, &x, 2), 0);
	dpusim_stream_move_done(rank, &x);
	KUNIT_EXPECT_EQ(test, s->nr_tokens, 2);
	KUNIT_EXPECT_EQ(test, s->sizes[1], 8);
	mutex_unlock(&rank->state_lock);
}

static struct kunit_case dpusim_stream_cases[] = {
	KUNIT_CASE(stream_layout_sizes),
	KUNIT_CASE(stream_seek_table),
	KUNIT_CASE(stream_format_uneven),
	KUNIT_CASE(stream_create_rules),
	KUNIT_CASE(stream_open_close_seek),
	KUNIT_CASE(stream_move_rules),
	{}
};

static struct kunit_suite dpusim_stream_suite = {
	.name = "dpusim_stream",
	.init = xfer_fixture_init,
	.exit = xfer_fixture_exit,
	.test_cases = dpusim_stream_cases,
};

kunit_test_suite(dpusim_stream_suite);
