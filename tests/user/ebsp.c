// SPDX-License-Identifier: GPL-2.0
/*
 * ebsp.h through the library, host threads acting as cores: the seed's
 * down-stream of 256 floats in tokens of 32, with and without preload,
 * seek (also right after a preload), the sticky end, uneven sizes, the
 * seed's double-buffered move_up loop read back through the pointer
 * bsp_stream_create returned, move_up past the capacity, one core at a
 * time (also two threads racing to open), double close, negative ids.
 */
#include <limits.h>
#include <pthread.h>

#include <ebsp.h>

#include "kselftest_harness.h"
#include "common.h"

FIXTURE(ebsp) {
	struct dpu_set_t set;
	float data[256];
};

FIXTURE_SETUP(ebsp)
{
	int i;

	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(1, NULL, &self->set));
	ASSERT_EQ(DPU_OK, ebsp_set_target(self->set));
	ebsp_set_core(0);
	for (i = 0; i < 256; i++)
		self->data[i] = i * 0.5f + 1;
}

FIXTURE_TEARDOWN(ebsp)
{
	dpu_free(self->set);
}

/* The seed's stream, consumed token by token: 8 x 32 floats, then 0 */
static void consume(struct __test_metadata *_metadata, const float *data,
		    int preload)
{
	ebsp_stream s;
	void *buf = NULL;
	int t;

	ASSERT_TRUE(bsp_stream_open(&s, 0));
	for (t = 0; t < 8; t++) {
		ASSERT_EQ(32 * 4, bsp_stream_move_down(&s, &buf, preload))
			TH_LOG("token %d", t);
		EXPECT_EQ(0, memcmp(buf, data + 32 * t, 128)) TH_LOG("token %d", t);
	}
	EXPECT_EQ(0, bsp_stream_move_down(&s, &buf, preload));
	EXPECT_EQ(0, bsp_stream_move_down(&s, &buf, 0));	/* sticky */
	bsp_stream_close(&s);
}

TEST_F(ebsp, seed_down_stream)
{
	const int *mem = bsp_stream_create(256 * 4, 32 * 4, self->data);

	ASSERT_NE(NULL, mem);
	/* the format: 0, 128, data, 128, 128, data, ... 128, 0 */
	EXPECT_EQ(0, mem[0]);
	EXPECT_EQ(128, mem[1]);
	EXPECT_EQ(128, mem[2 + 32]);
	EXPECT_EQ(0, mem[(2 + 32) * 8 + 1]);
	consume(_metadata, self->data, 0);
}

TEST_F(ebsp, seed_down_stream_preload)
{
	ASSERT_NE(NULL, bsp_stream_create(256 * 4, 32 * 4, self->data));
	consume(_metadata, self->data, 1);
}

/* Seek right after a preloaded move_down is relative to the token returned */
TEST_F(ebsp, seek_after_preload)
{
	ebsp_stream s;
	void *buf;
	int preload;

	ASSERT_NE(NULL, bsp_stream_create(256 * 4, 32 * 4, self->data));
	for (preload = 0; preload <= 1; preload++) {
		ASSERT_TRUE(bsp_stream_open(&s, 0));
		ASSERT_EQ(128, bsp_stream_move_down(&s, &buf, preload));
		EXPECT_EQ(0, memcmp(buf, self->data, 128));
		bsp_stream_seek(&s, 1);			/* skip token 1 */
		ASSERT_EQ(128, bsp_stream_move_down(&s, &buf, preload));
		EXPECT_EQ(0, memcmp(buf, self->data + 64, 128)) TH_LOG("preload %d", preload);
		bsp_stream_seek(&s, -2);		/* back to token 1 */
		ASSERT_EQ(128, bsp_stream_move_down(&s, &buf, preload));
		EXPECT_EQ(0, memcmp(buf, self->data + 32, 128)) TH_LOG("preload %d", preload);
		bsp_stream_seek(&s, INT_MIN);
		ASSERT_EQ(128, bsp_stream_move_down(&s, &buf, preload));
		EXPECT_EQ(0, memcmp(buf, self->data, 128));
		bsp_stream_seek(&s, INT_MAX);
		EXPECT_EQ(0, bsp_stream_move_down(&s, &buf, preload));
		bsp_stream_seek(&s, -1);		/* the last token */
		ASSERT_EQ(128, bsp_stream_move_down(&s, &buf, 0));
		EXPECT_EQ(0, memcmp(buf, self->data + 224, 128));
		bsp_stream_seek(&s, 100);		/* clamped at the end */
		EXPECT_EQ(0, bsp_stream_move_down(&s, &buf, 0));
		bsp_stream_close(&s);
	}
}

TEST_F(ebsp, uneven_sizes)
{
	ebsp_stream s;
	void *buf;
	int t, got = 0;

	ASSERT_NE(NULL, bsp_stream_create(100, 16, self->data));
	ASSERT_TRUE(bsp_stream_open(&s, 0));
	for (t = 0; t < 7; t++) {
		int n = bsp_stream_move_down(&s, &buf, 1);

		EXPECT_EQ(t < 6 ? 16 : 4, n);
		EXPECT_EQ(0, memcmp(buf, (char *)self->data + got, n));
		got += n;
	}
	EXPECT_EQ(100, got);
	EXPECT_EQ(0, bsp_stream_move_down(&s, &buf, 1));
	bsp_stream_close(&s);
}

TEST_F(ebsp, token_under_16)
{
	ebsp_stream s;

	EXPECT_EQ(NULL, bsp_stream_create(64, 8, self->data));
	EXPECT_EQ(NULL, bsp_stream_create(0, 16, self->data));
	/* numbering is not disturbed */
	EXPECT_NE(NULL, bsp_stream_create(64, 16, self->data));
	EXPECT_TRUE(bsp_stream_open(&s, 0));
	bsp_stream_close(&s);
}

/* The seed's double-buffered move_up loop; the host reads the results */
TEST_F(ebsp, move_up_double_buffered)
{
	const int *mem = bsp_stream_create(4 * 96, 96, NULL);
	int buf1[24], buf2[24], *cur = buf1, *other = buf2, *tmp;
	ebsp_stream s;
	int t, i;

	ASSERT_NE(NULL, mem);
	EXPECT_EQ(0, mem[0]);
	EXPECT_EQ(0, mem[1]);
	ebsp_set_core(5);
	ASSERT_TRUE(bsp_stream_open(&s, 0));
	for (t = 0; t < 4; t++) {
		for (i = 0; i < 24; i++)
			cur[i] = 1000 * t + i;
		EXPECT_EQ(96, bsp_stream_move_up(&s, cur, 96, 0));
		tmp = cur;
		cur = other;
		other = tmp;
	}
	/* full: nothing more fits, nothing is written */
	EXPECT_EQ(0, bsp_stream_move_up(&s, cur, 8, 1));
	bsp_stream_close(&s);
	for (t = 0; t < 4; t++) {
		const int *h = mem + t * 26;

		EXPECT_EQ(t ? 96 : 0, h[0]) TH_LOG("token %d", t);
		EXPECT_EQ(96, h[1]) TH_LOG("token %d", t);
		for (i = 0; i < 24; i++)
			EXPECT_EQ(1000 * t + i, h[2 + i]);
	}
	EXPECT_EQ(96, mem[4 * 26]);
	EXPECT_EQ(0, mem[4 * 26 + 1]);
	/* a core reads them back */
	ASSERT_TRUE(bsp_stream_open(&s, 0));
	for (t = 0; t < 4; t++) {
		void *b;

		ASSERT_EQ(96, bsp_stream_move_down(&s, &b, 1));
		EXPECT_EQ(1000 * t, ((int *)b)[0]);
	}
	bsp_stream_close(&s);
}

struct opener {
	int core, got;
	ebsp_stream s;
	pthread_barrier_t *start;
};

static void *open_as(void *arg)
{
	struct opener *o = arg;

	ebsp_set_core(o->core);
	if (o->start)
		pthread_barrier_wait(o->start);
	o->got = bsp_stream_open(&o->s, 0);
	return NULL;
}

/* Open by a second core fails while the first has it, works after close */
TEST_F(ebsp, open_by_second_core)
{
	struct opener b = { .core = 2 };
	ebsp_stream s;
	pthread_t th;

	ASSERT_NE(NULL, bsp_stream_create(64, 16, self->data));
	ebsp_set_core(1);
	ASSERT_TRUE(bsp_stream_open(&s, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, open_as, &b));
	pthread_join(th, NULL);
	EXPECT_EQ(0, b.got);
	bsp_stream_close(&s);
	ASSERT_EQ(0, pthread_create(&th, NULL, open_as, &b));
	pthread_join(th, NULL);
	EXPECT_EQ(1, b.got);
	bsp_stream_close(&b.s);
}

/* Two threads racing to open: one success, one failure */
TEST_F(ebsp, open_race)
{
	pthread_barrier_t start;
	struct opener o[2] = { { .core = 3 }, { .core = 4 } };
	pthread_t th[2];
	int round, i;

	ASSERT_NE(NULL, bsp_stream_create(64, 16, self->data));
	for (round = 0; round < 50; round++) {
		pthread_barrier_init(&start, NULL, 2);
		for (i = 0; i < 2; i++) {
			o[i].start = &start;
			ASSERT_EQ(0, pthread_create(&th[i], NULL, open_as, &o[i]));
		}
		for (i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&start);
		ASSERT_EQ(1, o[0].got + o[1].got) TH_LOG("round %d", round);
		bsp_stream_close(o[0].got ? &o[0].s : &o[1].s);
	}
}

TEST_F(ebsp, close_twice_negative_id)
{
	ebsp_stream s;
	void *buf;

	ASSERT_NE(NULL, bsp_stream_create(64, 16, self->data));
	EXPECT_EQ(0, bsp_stream_open(&s, -1));
	EXPECT_EQ(0, bsp_stream_open(&s, 7));	/* no such stream */
	ASSERT_TRUE(bsp_stream_open(&s, 0));
	bsp_stream_close(&s);
	bsp_stream_close(&s);			/* an error, nothing else */
	EXPECT_EQ(0, bsp_stream_move_down(&s, &buf, 0));
	EXPECT_TRUE(bsp_stream_open(&s, 0));	/* still closed once */
	bsp_stream_close(&s);
}

TEST_F(ebsp, many_open_close)
{
	ebsp_stream s;
	void *buf;
	int i;

	ASSERT_NE(NULL, bsp_stream_create(256 * 4, 32 * 4, self->data));
	for (i = 0; i < 500; i++) {
		ebsp_set_core(i % 64);
		ASSERT_TRUE(bsp_stream_open(&s, 0));
		ASSERT_EQ(128, bsp_stream_move_down(&s, &buf, i & 1));
		ASSERT_EQ(0, memcmp(buf, self->data, 128));
		bsp_stream_close(&s);
	}
}

TEST_HARNESS_MAIN
