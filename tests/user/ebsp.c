// SPDX-License-Identifier: GPL-2.0
/*
 * ebsp.h through the library, host threads acting as cores: the seed's
 * down-stream of 256 floats in tokens of 32, with and without preload,
 * seek (also right after a preload), the sticky end, uneven sizes, the
 * seed's double-buffered move_up loop read back through the pointer
 * bsp_stream_create returned, move_up past the capacity, one core at a
 * time (also two threads racing to open), double close, negative ids.
 */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <pthread.h>
#include <sys/resource.h>

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

/*
 * An open core's two token buffers are registered with the kernel (each
 * rounded up to a page, pinned once at the open, moved by offset): the
 * rank holds their pages while the stream is open, and none after the
 * close, with or without a preload in flight at the close.
 */
TEST_F(ebsp, registered_buffers_pinned_while_open)
{
	ebsp_stream s;
	void *buf;

	ASSERT_NE(NULL, bsp_stream_create(256 * 4, 32 * 4, self->data));
	ASSERT_TRUE(bsp_stream_open(&s, 0));
	EXPECT_EQ(2, sysfs_rank_attr(0, "pinned_pages"));
	ASSERT_EQ(128, bsp_stream_move_down(&s, &buf, 1));
	EXPECT_EQ(0, memcmp(buf, self->data, 128));
	bsp_stream_close(&s);			/* the preload still in flight */
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));
	consume(_metadata, self->data, 1);
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));
}

/*
 * A token larger than the registered buffers (a core moved up more than
 * the stream's token size): it comes down whole, through buffers of its
 * own, and so do the tokens after it.
 */
TEST_F(ebsp, token_larger_than_registered_buffers)
{
	uint64_t big[1024], small[2] = { 7, 9 };
	ebsp_stream s;
	void *buf;
	int i;

	for (i = 0; i < 1024; i++)
		big[i] = i * 0x9e3779b97f4a7c15ULL;
	ASSERT_NE(NULL, bsp_stream_create(16384, 16, NULL));
	ASSERT_TRUE(bsp_stream_open(&s, 0));
	ASSERT_EQ(16, bsp_stream_move_up(&s, small, 16, 1));
	ASSERT_EQ(8192, bsp_stream_move_up(&s, big, 8192, 1));
	ASSERT_EQ(16, bsp_stream_move_up(&s, small, 16, 1));
	bsp_stream_close(&s);

	ASSERT_TRUE(bsp_stream_open(&s, 0));
	EXPECT_EQ(2, sysfs_rank_attr(0, "pinned_pages"));	/* 16 + 8 bytes: a page each */
	ASSERT_EQ(16, bsp_stream_move_down(&s, &buf, 1));
	EXPECT_EQ(0, memcmp(buf, small, 16));
	ASSERT_EQ(8192, bsp_stream_move_down(&s, &buf, 1));
	EXPECT_EQ(0, memcmp(buf, big, 8192));
	ASSERT_EQ(16, bsp_stream_move_down(&s, &buf, 1));
	EXPECT_EQ(0, memcmp(buf, small, 16));
	EXPECT_EQ(0, bsp_stream_move_down(&s, &buf, 1));
	bsp_stream_close(&s);
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));
}

/*
 * A core whose RLIMIT_MEMLOCK cannot hold the registered buffers (four
 * pages for tokens of 4 KiB; the limit is three, no CAP_IPC_LOCK): the
 * open goes on without them, and every token comes down right, through
 * buffers pinned move by move.
 */
TEST_F(ebsp, registration_refused_falls_back)
{
	static uint8_t data[8 * 4096];
	pid_t pid;
	int i;

	for (i = 0; i < (int)sizeof(data); i++)
		data[i] = i * 31 + 7;
	ASSERT_NE(NULL, bsp_stream_create(sizeof(data), 4096, data));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 3 * 4096, 3 * 4096 };
		ebsp_stream s;
		void *buf;

		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setresuid(65534, 65534, 65534))
			_exit(10);
		if (!bsp_stream_open(&s, 0))
			_exit(11);
		if (sysfs_rank_attr(0, "pinned_pages") != 0)
			_exit(12);		/* nothing registered */
		for (i = 0; i < 8; i++) {
			if (bsp_stream_move_down(&s, &buf, i & 1) != 4096)
				_exit(13);
			if (memcmp(buf, data + i * 4096, 4096))
				_exit(14);
		}
		if (bsp_stream_move_down(&s, &buf, 1) != 0)
			_exit(15);
		bsp_stream_close(&s);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));
}

/* ------------------------------------------------- DPU programs as cores */

#define CORE_BIN "build/tests/dpu/stream_core"
enum { WALK, SEEK, UP, CAP, ERRORS, CYCLES, HOLD, RELEASE, NEXT };

/* 8 DPUs of one rank run tests/user/dpu/stream_core.c */
FIXTURE(ebsp_dpu) {
	struct dpu_set_t set, dpu[8];
};

FIXTURE_SETUP(ebsp_dpu)
{
	struct dpu_set_t d;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(8, NULL, &self->set));
	ASSERT_EQ(DPU_OK, ebsp_set_target(self->set));
	ebsp_set_core(0);
	DPU_FOREACH(self->set, d, i)
		self->dpu[i] = d;
	ASSERT_EQ(DPU_OK, dpu_load(self->set, CORE_BIN, NULL));
}

FIXTURE_TEARDOWN(ebsp_dpu)
{
	dpu_free(self->set);
}

/* Run @mode on @set; the results of DPU @d go to out[], their count back */
static int run_core(struct __test_metadata *_metadata, struct dpu_set_t set,
		    struct dpu_set_t d, uint32_t mode, int a0, int a1, int a2,
		    int64_t *out)
{
	int32_t arg[4] = { a0, a1, a2, 0 };
	uint32_t n = 0;

	EXPECT_EQ(DPU_OK, dpu_copy_to(set, "mode", 0, &mode, sizeof(mode)));
	EXPECT_EQ(DPU_OK, dpu_copy_to(set, "arg", 0, arg, sizeof(arg)));
	EXPECT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	EXPECT_EQ(DPU_OK, dpu_copy_from(d, "nout", 0, &n, sizeof(n)));
	if (n > 160)
		return -1;
	EXPECT_EQ(DPU_OK, dpu_copy_from(d, "out", 0, out, 160 * sizeof(*out)));
	return (int)n;
}

/* Walk a stream of @size bytes of @data in tokens of @tok from DPU 0 */
static void dpu_walk(struct __test_metadata *_metadata, FIXTURE_DATA(ebsp_dpu) *self,
		     const uint8_t *data, int size, int tok, int preload)
{
	int k = (size + tok - 1) / tok, i, n, t;
	int64_t out[160];

	n = run_core(_metadata, self->dpu[0], self->dpu[0], WALK, 0, preload, 0, out);
	ASSERT_EQ(1 + 2 * k + 3, n);
	EXPECT_EQ(1, out[0]);
	for (t = 0; t < k; t++) {
		int len = t < k - 1 ? tok : size - (k - 1) * tok;
		int64_t sum = 0;

		for (i = 0; i < len; i++)
			sum += data[t * tok + i];
		EXPECT_EQ(len, out[1 + 2 * t]) TH_LOG("token %d", t);
		EXPECT_EQ(sum, out[2 + 2 * t]) TH_LOG("token %d", t);
	}
	/* the end, then sticky with and without preload */
	EXPECT_EQ(0, out[1 + 2 * k]);
	EXPECT_EQ(0, out[2 + 2 * k]);
	EXPECT_EQ(0, out[3 + 2 * k]);
}

TEST_F(ebsp_dpu, seed_stream_consumed_by_a_dpu)
{
	float data[256];
	int i;

	for (i = 0; i < 256; i++)
		data[i] = i * 0.5f + 1;
	ASSERT_NE(NULL, bsp_stream_create(sizeof(data), 32 * 4, data));
	dpu_walk(_metadata, self, (const uint8_t *)data, sizeof(data), 128, 0);
	dpu_walk(_metadata, self, (const uint8_t *)data, sizeof(data), 128, 1);
}

TEST_F(ebsp_dpu, uneven_sizes_from_a_dpu)
{
	uint8_t data[1000];
	int i;

	for (i = 0; i < 1000; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	ASSERT_NE(NULL, bsp_stream_create(1000, 96, data));
	dpu_walk(_metadata, self, data, 1000, 96, 0);
	dpu_walk(_metadata, self, data, 1000, 96, 1);
}

TEST_F(ebsp_dpu, seek_from_a_dpu_with_and_without_preload)
{
	/* token i's first word is i; see seek() in stream_core.c */
	const int64_t want[] = { 1, 0, 3, 2, 0, -1, 9, 0, -1, -1 };
	int32_t data[10 * 4];
	int64_t out[160];
	int i, p;

	for (i = 0; i < 40; i++)
		data[i] = i % 4 ? 100 + i : i / 4;
	ASSERT_NE(NULL, bsp_stream_create(sizeof(data), 16, data));
	for (p = 0; p < 2; p++) {
		ASSERT_EQ(10, run_core(_metadata, self->dpu[0], self->dpu[0], SEEK, 0, p, 0, out));
		for (i = 0; i < 10; i++)
			EXPECT_EQ(want[i], out[i]) TH_LOG("step %d, preload %d", i, p);
	}
}

static void check_up(struct __test_metadata *_metadata, const uint32_t *mem,
		     int tokens, uint32_t tag)
{
	const uint32_t *h = mem;
	int k, i;

	for (k = 0; k < tokens; k++) {
		const uint64_t *d = (const uint64_t *)(h + 2);

		EXPECT_EQ(k ? 64u : 0u, h[0]) TH_LOG("token %d", k);
		EXPECT_EQ(64u, h[1]) TH_LOG("token %d", k);
		for (i = 0; i < 8; i++)
			EXPECT_EQ((uint64_t)tag << 32 | (uint64_t)k << 8 | i, d[i]);
		h += 2 + 16;
	}
	EXPECT_EQ(64u, h[0]);
	EXPECT_EQ(0u, h[1]);	/* the terminator */
}

TEST_F(ebsp_dpu, move_up_double_buffered_from_a_dpu)
{
	const uint32_t *mem[2];
	int64_t out[160];
	int w, k;

	for (w = 0; w < 2; w++) {
		mem[w] = bsp_stream_create(6 * 64, 64, NULL);
		ASSERT_NE(NULL, mem[w]);
		EXPECT_EQ(0u, mem[w][0]);	/* created empty: 0, 0 */
		EXPECT_EQ(0u, mem[w][1]);
		ASSERT_EQ(1 + 6, run_core(_metadata, self->dpu[3], self->dpu[3], UP, w, 6, w, out));
		EXPECT_EQ(1, out[0]);
		for (k = 0; k < 6; k++)
			EXPECT_EQ(64, out[1 + k]);
		/* the host sees what move_up wrote */
		check_up(_metadata, mem[w], 6, 0xd0);
	}
}

TEST_F(ebsp_dpu, move_up_beyond_capacity_from_a_dpu)
{
	const uint32_t *mem = bsp_stream_create(100, 16, NULL);
	int64_t out[160];

	ASSERT_NE(NULL, mem);
	ASSERT_EQ(3, run_core(_metadata, self->dpu[0], self->dpu[0], CAP, 0, 128, 0, out));
	EXPECT_EQ(1, out[0]);
	EXPECT_EQ(0, out[1]);	/* 128 > 100: fails */
	EXPECT_EQ(8, out[2]);	/* and wrote nothing: the 8 bytes are token 0 */
	EXPECT_EQ(0u, mem[0]);
	EXPECT_EQ(8u, mem[1]);
	EXPECT_EQ(0x1111111111111111ULL, *(const uint64_t *)(mem + 2));
	EXPECT_EQ(8u, mem[4]);
	EXPECT_EQ(0u, mem[5]);
}

TEST_F(ebsp_dpu, errors_from_a_dpu)
{
	uint8_t data[64] = { 1 };
	int64_t out[160];
	struct capture c;
	char *msg;

	ASSERT_NE(NULL, bsp_stream_create(64, 16, data));
	/* the workers start at this launch, with stderr going to the capture */
	cap_begin(&c);
	ASSERT_EQ(5, run_core(_metadata, self->dpu[0], self->dpu[0], ERRORS, 0, 0, 0, out));
	msg = cap_end(&c);
	ASSERT_NE(NULL, msg);
	EXPECT_EQ(1, out[0]);
	EXPECT_EQ(0, out[1]);	/* move_down after close */
	EXPECT_EQ(0, out[2]);	/* open(-1) */
	EXPECT_EQ(0, out[3]);	/* open(999) */
	EXPECT_EQ(1, out[4]);	/* still openable */
	EXPECT_NE(NULL, strstr(msg, "ebsp: DPU 0: bsp_stream_close: the stream is not open"))
		TH_LOG("%s", msg);
	EXPECT_NE(NULL, strstr(msg, "stream id -1 is negative")) TH_LOG("%s", msg);
	EXPECT_NE(NULL, strstr(msg, "no stream 999")) TH_LOG("%s", msg);
	free(msg);
}

TEST_F(ebsp_dpu, many_open_close_cycles_from_a_dpu)
{
	uint8_t data[64] = { 1 };
	int64_t out[160];

	ASSERT_NE(NULL, bsp_stream_create(64, 16, data));
	ASSERT_EQ(1, run_core(_metadata, self->dpu[0], self->dpu[0], CYCLES, 0, 300, 0, out));
	EXPECT_EQ(300, out[0]);
}

/*
 * Eight DPUs race to open one stream: one wins and keeps it open across
 * launches; a host thread acting as another core cannot open it; the
 * winner moves tokens in later launches (with a preload left in flight at
 * the end of a launch); once it closes, another core opens the stream.
 */
TEST_F(ebsp_dpu, open_race_between_dpus_and_close)
{
	int32_t data[8 * 4];
	int64_t out[160];
	ebsp_stream s;
	int i, winner = -1, wins = 0;

	for (i = 0; i < 32; i++)
		data[i] = i / 4;
	ASSERT_NE(NULL, bsp_stream_create(sizeof(data), 16, data));
	ASSERT_EQ(DPU_OK, dpu_copy_to(self->set, "mode", 0, &(uint32_t){ HOLD }, 4));
	ASSERT_EQ(DPU_OK, dpu_copy_to(self->set, "arg", 0, (int32_t[4]){ 0 }, 16));
	ASSERT_EQ(DPU_OK, dpu_launch(self->set, DPU_SYNCHRONOUS));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(self->dpu[i], "out", 0, out, 8));
		if (out[0] == 1) {
			wins++;
			winner = i;
		}
	}
	ASSERT_EQ(1, wins);
	ebsp_set_core((uint32_t)(winner + 1) % 8);
	EXPECT_FALSE(bsp_stream_open(&s, 0));
	ebsp_set_core(0);
	/* tokens 0, 1, 2 in three launches, each leaving a preload in flight */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(2, run_core(_metadata, self->dpu[winner], self->dpu[winner], NEXT,
				      0, 1, 0, out));
		EXPECT_EQ(16, out[0]);
		EXPECT_EQ(i, out[1]) TH_LOG("launch %d", i);
	}
	ASSERT_EQ(DPU_OK, dpu_copy_to(self->set, "mode", 0, &(uint32_t){ RELEASE }, 4));
	ASSERT_EQ(DPU_OK, dpu_launch(self->set, DPU_SYNCHRONOUS));
	ebsp_set_core((uint32_t)(winner + 1) % 8);
	EXPECT_TRUE(bsp_stream_open(&s, 0));
	bsp_stream_close(&s);
	ebsp_set_core(0);
}

/* The state and parent of process @pid (from /proc/PID/stat); -1 if gone */
static int proc_stat(int pid, char *state, int *ppid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && sscanf(p + 1, " %c %d", state, ppid) == 2 ? 0 : -1;
}

/*
 * Kill this process's children (the rank's idle worker processes) and
 * wait until they are gone: the next launch starts new workers.
 */
static int kill_workers(void)
{
	int killed = 0, tries, n = 0, i, ppid;
	struct dirent *e;
	pid_t pids[64];
	char state;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -1;
	while ((e = readdir(d)) && n < 64) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (!proc_stat(atoi(e->d_name), &state, &ppid) && ppid == getpid() &&
		    state != 'Z')
			pids[n++] = atoi(e->d_name);
	}
	closedir(d);
	for (i = 0; i < n; i++)
		killed += !kill(pids[i], SIGKILL);
	/* dead when a zombie: the library reaps it at the next launch */
	for (i = 0; i < n; i++)
		for (tries = 0; tries < 1000; tries++) {
			if (proc_stat(pids[i], &state, &ppid) || state == 'Z')
				break;
			usleep(10000);
		}
	return killed;
}

/*
 * A stream kept open by a DPU across launches, each launch leaving a
 * preload in flight, and each next launch run by a new worker process
 * (the ones before are killed while idle): the preloaded token is the
 * next one returned all the same.  The state of a stream held across
 * launches lives in the DPU's memory and the kernel, not in a worker.
 */
TEST_F(ebsp_dpu, held_stream_with_preload_in_new_workers)
{
	int32_t data[8 * 4];
	int64_t out[160];
	ebsp_stream s;
	int i;

	for (i = 0; i < 32; i++)
		data[i] = i / 4;
	ASSERT_NE(NULL, bsp_stream_create(sizeof(data), 16, data));
	ASSERT_EQ(1, run_core(_metadata, self->dpu[0], self->dpu[0], HOLD, 0, 0, 0, out));
	ASSERT_EQ(1, out[0]);
	for (i = 0; i < 6; i++) {
		ASSERT_LT(0, kill_workers()) TH_LOG("no worker to kill before launch %d", i);
		ASSERT_EQ(2, run_core(_metadata, self->dpu[0], self->dpu[0], NEXT, 0, 1, 0, out));
		EXPECT_EQ(16, out[0]) TH_LOG("launch %d", i);
		EXPECT_EQ(i, out[1]) TH_LOG("launch %d", i);
	}
	ASSERT_EQ(0, run_core(_metadata, self->dpu[0], self->dpu[0], RELEASE, 0, 0, 0, out));
	ebsp_set_core(1);
	EXPECT_TRUE(bsp_stream_open(&s, 0));
	bsp_stream_close(&s);
	ebsp_set_core(0);
}

/* The example (tools/examples/streams.c) checks every result itself */
TEST(example_streams)
{
	EXPECT_EQ(0, run_cmd("build/examples/streams --dpus 8 > /dev/null"));
}

TEST_HARNESS_MAIN
