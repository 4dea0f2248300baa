// SPDX-License-Identifier: MIT
/*
 * Unit tests of the DPU pipeline model (lib/dpurt/model.c), against what
 * its rules give by hand: compute-bound runs of 1, 4, 11, 16 and 24 tasklets (a tasklet
 * issues every 11 cycles at most, the DPU once a cycle), DMA-bound runs
 * (the per-byte part served one DMA at a time, the latency overlapped), a
 * DMA hidden behind computing tasklets, waits, the busy spans of the MRAM
 * engine and of a lock, and determinism.  The
 * reports come in the runtime's order: round robin, each tasklet up to its
 * next DMA or wait.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "model.h"

static const struct dpurt_model_params P = {
	.issue_interval = 11, .dma_latency = 77, .dma_cycles_per_8b = 4,
};

/* @nt tasklets, @rounds rounds of (@instr instructions, a DMA of @bytes) */
static uint64_t rounds(struct dpurt_model *m, unsigned int nt, unsigned int rounds,
		       uint64_t instr, uint32_t bytes)
{
	unsigned int r, t;

	dpurt_model_init(m, &P, nt);
	for (r = 0; r < rounds; r++)
		for (t = 0; t < nt; t++) {
			dpurt_model_compute(m, t, instr);
			if (bytes)
				dpurt_model_dma(m, t, bytes);
		}
	for (t = 0; t < nt; t++)
		dpurt_model_done(m, t);
	return dpurt_model_end(m);
}

static void compute_bound(unsigned int nt)
{
	struct dpurt_model m;
	char name[96];
	uint64_t got, want = 1000ULL * (nt > 11 ? nt : 11);

	got = rounds(&m, nt, 1, 1000, 0);
	snprintf(name, sizeof(name), "compute-bound, %u tasklets: 1000 instructions each in %llu cycles",
		 nt, (unsigned long long)want);
	UNIT_CHECK(name, got == want && dpurt_model_instructions(&m) == 1000ULL * nt,
		   "got %llu cycles, %llu instructions", (unsigned long long)got,
		   (unsigned long long)dpurt_model_instructions(&m));
}

static void test_compute(void)
{
	compute_bound(1);
	compute_bound(4);
	compute_bound(11);
	compute_bound(16);
	compute_bound(24);
}

static void test_dma(void)
{
	struct dpurt_model m;
	uint64_t got;

	/* one tasklet: each 2048-byte DMA costs 1024 + 77, nothing overlaps */
	got = rounds(&m, 1, 10, 0, 2048);
	UNIT_CHECK("DMA-bound, 1 tasklet: 10 x (1024 + 77) cycles", got == 11010,
		   "got %llu", (unsigned long long)got);
	/* 16 tasklets: the engine is the bottleneck; one latency shows */
	got = rounds(&m, 16, 10, 0, 2048);
	UNIT_CHECK("DMA-bound, 16 tasklets: the engine serves 160 DMAs one at a time",
		   got == 160ULL * 1024 + 77, "got %llu", (unsigned long long)got);
	/* 11 tasklets, small DMAs: latency-bound, the latencies overlap */
	got = rounds(&m, 11, 4, 0, 8);
	UNIT_CHECK("DMA latency of 11 tasklets overlaps: 4 rounds of 8 bytes",
		   got < 4ULL * 11 * (4 + 77) && got >= 4ULL * (4 + 77),
		   "got %llu", (unsigned long long)got);
	/* rounding: 1..8 bytes are one 8-byte word */
	dpurt_model_init(&m, &P, 1);
	dpurt_model_dma(&m, 0, 1);
	UNIT_CHECK("a DMA of 1 byte costs one 8-byte word", dpurt_model_end(&m) == 4 + 77,
		   "got %llu", (unsigned long long)dpurt_model_end(&m));
}

static void test_hidden(void)
{
	struct dpurt_model m;
	unsigned int t;

	/* 11 tasklets: tasklet 0 waits for a DMA, the others compute; nobody
	 * is slowed, tasklet 0 ends one DMA after the others */
	dpurt_model_init(&m, &P, 11);
	dpurt_model_dma(&m, 0, 64);
	dpurt_model_compute(&m, 0, 100);
	for (t = 1; t < 11; t++)
		dpurt_model_compute(&m, t, 100);
	UNIT_CHECK("a DMA hidden behind 10 computing tasklets",
		   dpurt_model_end(&m) == 32 + 77 + 1100 && m.t[1].clock == 1100,
		   "end %llu, tasklet 1 at %llu", (unsigned long long)dpurt_model_end(&m),
		   (unsigned long long)m.t[1].clock);

	/* 12 tasklets: once the other 11 are done, the last runs at 1/11 */
	dpurt_model_init(&m, &P, 12);
	for (t = 0; t < 11; t++) {
		dpurt_model_compute(&m, t, 100);
		dpurt_model_done(&m, t);
	}
	dpurt_model_compute(&m, 11, 200);
	UNIT_CHECK("12 tasklets: 100 instructions shared 12 ways, then 100 alone",
		   m.t[0].clock == 1200 && m.t[11].clock == 1200 + 1100,
		   "tasklet 0 at %llu, tasklet 11 at %llu", (unsigned long long)m.t[0].clock,
		   (unsigned long long)m.t[11].clock);

	/* 16 tasklets: while 8 wait for DMAs, the other 8 issue at 1/11 */
	dpurt_model_init(&m, &P, 16);
	for (t = 0; t < 8; t++)
		dpurt_model_until(&m, t, 100000);
	for (t = 8; t < 16; t++)
		dpurt_model_compute(&m, t, 1000);
	UNIT_CHECK("16 tasklets, 8 of them waiting: the others are not slowed",
		   m.t[15].clock == 11000, "tasklet 15 at %llu", (unsigned long long)m.t[15].clock);
}

static void test_until(void)
{
	struct dpurt_model m;

	dpurt_model_init(&m, &P, 2);
	dpurt_model_compute(&m, 0, 100);
	dpurt_model_compute(&m, 1, 10);
	/* a barrier: both leave at the last arrival */
	dpurt_model_until(&m, 0, 1100);
	dpurt_model_until(&m, 1, 1100);
	dpurt_model_compute(&m, 0, 10);
	dpurt_model_compute(&m, 1, 10);
	UNIT_CHECK("a wait moves the clock to its release, never back",
		   m.t[0].clock == 1210 && m.t[1].clock == 1210 && m.t[1].idle_from == 110,
		   "%llu %llu", (unsigned long long)m.t[0].clock, (unsigned long long)m.t[1].clock);
	dpurt_model_until(&m, 0, 5);
	UNIT_CHECK("a release in the past changes nothing", m.t[0].clock == 1210, "%llu",
		   (unsigned long long)m.t[0].clock);
}

/*
 * The engine serves a DMA in its first idle cycles at or after the
 * tasklet's clock: one reported after a later one still goes first.
 */
static void test_engine_spans(void)
{
	struct dpurt_model m;

	dpurt_model_init(&m, &P, 3);
	dpurt_model_compute(&m, 0, 100);	/* 1100 */
	dpurt_model_dma(&m, 0, 64);		/* engine [1100, 1132) */
	dpurt_model_compute(&m, 1, 10);		/* 110 */
	dpurt_model_dma(&m, 1, 64);		/* [110, 142): before it */
	dpurt_model_compute(&m, 2, 99);		/* 1089 */
	dpurt_model_dma(&m, 2, 64);		/* [1089, 1100), then [1132, 1153) */
	UNIT_CHECK("a DMA reported late takes the engine's earlier idle cycles",
		   m.t[1].clock == 110 + 32 + 77 && m.t[0].clock == 1100 + 32 + 77 &&
			   m.t[2].clock == 1153 + 77,
		   "clocks %llu %llu %llu", (unsigned long long)m.t[0].clock,
		   (unsigned long long)m.t[1].clock, (unsigned long long)m.t[2].clock);
	UNIT_CHECK("the spans a DMA meets are one", m.engine.n == 2 && m.engine.span[0].from == 110 &&
		   m.engine.span[1].from == 1089 && m.engine.span[1].to == 1153 && m.engine.span[1].busy == 64,
		   "%u spans", m.engine.n);
}

static void test_spans(void)
{
	struct dpurt_model m;
	struct dpurt_model_spans s = { 0 };
	unsigned int k;
	bool ok = true;
	uint64_t busy = 0;

	dpurt_model_init(&m, &P, 2);
	UNIT_CHECK("fill: an idle resource at once",
		   dpurt_model_fill(&m, &s, 50, 10) == 60 && s.n == 1, "n %u", s.n);
	UNIT_CHECK("fill: inside a busy span, after it, one span with it",
		   dpurt_model_fill(&m, &s, 55, 10) == 70 && s.n == 1 && s.span[0].from == 50 &&
			   s.span[0].to == 70 && s.span[0].busy == 20,
		   "n %u to %llu", s.n, (unsigned long long)s.span[0].to);
	dpurt_model_fill(&m, &s, 100, 10);	/* [50, 70) [100, 110) */
	UNIT_CHECK("fill: a short idle stretch, then the rest after the next span",
		   dpurt_model_fill(&m, &s, 60, 40) == 120 && s.n == 1 && s.span[0].from == 50 &&
			   s.span[0].to == 120 && s.span[0].busy == 70,
		   "n %u [%llu, %llu) busy %llu", s.n, (unsigned long long)s.span[0].from,
		   (unsigned long long)s.span[0].to, (unsigned long long)s.span[0].busy);
	UNIT_CHECK("fill: a long enough idle stretch before every span",
		   dpurt_model_fill(&m, &s, 0, 30) == 30 && s.n == 2, "n %u", s.n);
	UNIT_CHECK("free_at: inside a busy span, its end; outside, the cycle itself",
		   dpurt_model_free_at(&s, 60) == 120 && dpurt_model_free_at(&s, 40) == 40 &&
			   dpurt_model_free_at(&s, 10) == 30 && dpurt_model_free_at(&s, 200) == 200,
		   "%llu %llu", (unsigned long long)dpurt_model_free_at(&s, 60),
		   (unsigned long long)dpurt_model_free_at(&s, 10));
	UNIT_CHECK("fill of nothing takes nothing",
		   dpurt_model_fill(&m, &s, 20, 0) == 30 && s.n == 2, "n %u", s.n);

	/* full: spans every 100 cycles from 1000, both tasklets at 0 */
	memset(&s, 0, sizeof(s));
	for (k = 0; k < DPURT_MODEL_SPANS; k++)
		dpurt_model_fill(&m, &s, 1000 + 100ULL * k, 10 + k % 3);
	dpurt_model_fill(&m, &s, 100000, 5);
	for (k = 0; k < s.n; k++) {
		ok = ok && (k + 1 == s.n || s.span[k].to <= s.span[k + 1].from);
		busy += s.span[k].busy;
	}
	/* the gaps are 90, 89, 88, 90, ...: the first 88 goes, after [1200, 1212) */
	UNIT_CHECK("full, nothing behind every clock: the two closest spans are joined",
		   s.n == DPURT_MODEL_SPANS && ok && s.span[s.n - 1].from == 100000 &&
			   s.span[2].from == 1200 && s.span[2].to == 1310 && s.span[2].busy == 22 &&
			   busy == 32 * 10 + 31 + 5,
		   "n %u third [%llu, %llu) busy %llu", s.n, (unsigned long long)s.span[2].from,
		   (unsigned long long)s.span[2].to, (unsigned long long)s.span[2].busy);
	/* 88 of its 110 cycles idle: 44 cycles are taken in 55 */
	UNIT_CHECK("a joined span lends its idle cycles, spread over it",
		   dpurt_model_free_at(&s, 1250) == 1250 &&
			   dpurt_model_fill(&m, &s, 1200, 44) == 1255 && s.span[2].busy == 66,
		   "busy %llu", (unsigned long long)s.span[2].busy);
	dpurt_model_compute(&m, 0, 1000);	/* 11000 */
	dpurt_model_done(&m, 1);
	for (k = 0; s.n < DPURT_MODEL_SPANS; k++)	/* full again */
		dpurt_model_fill(&m, &s, 150000 + 100ULL * k, 5);
	dpurt_model_fill(&m, &s, 200000, 5);
	UNIT_CHECK("full: the spans behind every running tasklet's clock are dropped",
		   s.n < DPURT_MODEL_SPANS && s.span[0].from >= 11000 - 100 &&
			   s.span[s.n - 1].from == 200000,
		   "n %u first %llu", s.n, (unsigned long long)s.span[0].from);
}

/* A mutex waiter spins: it keeps issuing, so the others are not sped up. */
static void test_spin(void)
{
	struct dpurt_model m;

	dpurt_model_init(&m, &P, 2);
	dpurt_model_compute(&m, 0, 10);
	dpurt_model_spin(&m, 0, 500);
	UNIT_CHECK("a spin moves the clock and leaves no idle stretch",
		   m.t[0].clock == 500 && m.t[0].idle_to == 0 && dpurt_model_instructions(&m) == 10,
		   "clock %llu idle to %llu", (unsigned long long)m.t[0].clock,
		   (unsigned long long)m.t[0].idle_to);
	dpurt_model_spin(&m, 0, 20);
	UNIT_CHECK("a spin into the past changes nothing", m.t[0].clock == 500, "%llu",
		   (unsigned long long)m.t[0].clock);
}

static void test_determinism_and_args(void)
{
	struct dpurt_model a, b;
	struct dpurt_model_params bad = P;

	rounds(&a, 24, 7, 123, 512);
	rounds(&b, 24, 7, 123, 512);
	UNIT_CHECK("the same reports give the same model, bit for bit",
		   memcmp(&a, &b, sizeof(a)) == 0, "differ");
	bad.issue_interval = 0;
	UNIT_CHECK("bad parameters and tasklet counts are refused",
		   dpurt_model_init(&a, &bad, 1) == -1 && dpurt_model_init(&a, &P, 0) == -1 &&
			   dpurt_model_init(&a, &P, 25) == -1 && dpurt_model_init(&a, &P, 24) == 0,
		   "accepted");
	dpurt_model_init(&a, &P, 2);
	dpurt_model_compute(&a, 2, 100);
	dpurt_model_dma(&a, 7, 8);
	UNIT_CHECK("reports of a tasklet beyond the run are ignored",
		   dpurt_model_end(&a) == 0 && a.engine.n == 0, "end %llu",
		   (unsigned long long)dpurt_model_end(&a));
}

int main(void)
{
	test_compute();
	test_dma();
	test_hidden();
	test_until();
	test_engine_spans();
	test_spans();
	test_spin();
	test_determinism_and_args();
	return unit_done();
}
