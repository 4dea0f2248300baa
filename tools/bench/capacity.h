/* SPDX-License-Identifier: MIT */
/*
 * capacity.h - how much a second CPU of this guest adds, sampled in the
 * same run as a benchmark's figures (stream_bench, dri_bench).
 *
 * A figure that overlaps work on two CPUs (a preload copied while the
 * consumer computes, a corner turn packed and copied on two CPUs against
 * a transpose on one) can only be as good as the guest's second CPU.
 * Under QEMU's TCG each vCPU is a host thread: two busy vCPUs get what
 * the host gives two threads at that moment (on the 2-CPU machine the
 * README's figures come from, a CPU-bound loop on the host took 0.27 to
 * 0.59 s alone and 0.27 to 0.61 s with a second one beside it, from one
 * minute to the next).  A
 * sample times the same copy loop (8-byte words between two halves of
 * 1 MiB, eight times; a loop of its own, not memcpy(), whose strategy
 * glibc picks by CPU model) on one thread alone, then on two threads at
 * once on two different CPUs.  The halves are BENCH_TLB_GAP apart, not
 * 1 MiB (bench.h: QEMU's software TLB is direct-mapped): 1 MiB apart,
 * after a while of compute on few pages (stream_bench with work of 5
 * transfers) a sample ran 30 ms instead of 2.5 ms, without being
 * switched out.
 *
 *   capacity = 2 x (time alone) / (time of the pair)
 *
 * 2.00 is two whole CPUs, 1.00 none to gain.  Each thread is pinned; the
 * caller's own affinity does not change.
 *
 * What it bounds.  If both vCPUs run at capacity / 2 of their speed alone
 * while both are busy, a copy of X (alone) overlapped with work W >= X
 * takes 2X / capacity of wall time, during which the work does X of its
 * own; the whole takes 2X / capacity + W - X instead of X + W, so an
 * overlap hides at most (X + W - that) / X = 2 - 2 / capacity of the
 * copy (all of it from capacity 2 up), before any cost of starting it.
 */
#ifndef DPUSIM_BENCH_CAPACITY_H
#define DPUSIM_BENCH_CAPACITY_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define CAP_HALF	(1u << 20)
#define CAP_WORDS	(CAP_HALF / sizeof(uint64_t))
#define CAP_GAP_WORDS	(BENCH_TLB_GAP / sizeof(uint64_t))
#define CAP_BYTES	(2 * CAP_HALF + BENCH_TLB_GAP)
#define CAP_ROUNDS	8
#define CAP_MAX_SAMPLES	64

struct bench_cap {
	int cpu[2];			/* the two CPUs; cpu[1] < 0: only one */
	uint64_t *buf[2];		/* CAP_BYTES each */
	double one[CAP_MAX_SAMPLES], two[CAP_MAX_SAMPLES];
	unsigned int n;
};

struct cap_thread {
	pthread_barrier_t *bar;		/* NULL: alone */
	int cpu;
	uint64_t *buf;
	double us;
};

static void *cap_thread_fn(void *arg)
{
	struct cap_thread *t = arg;
	size_t i;
	double t0;
	int r;

	bench_pin_thread(t->cpu);
	if (t->bar)
		pthread_barrier_wait(t->bar);
	t0 = bench_now_us();
	for (r = 0; r < CAP_ROUNDS; r++) {
		uint64_t *d = t->buf + (r & 1 ? 0 : CAP_WORDS + CAP_GAP_WORDS);
		const uint64_t *s = t->buf + (r & 1 ? CAP_WORDS + CAP_GAP_WORDS : 0);

		for (i = 0; i < CAP_WORDS; i++)
			d[i] = s[i] ^ r;
	}
	t->us = bench_now_us() - t0;
	return NULL;
}

/* 0, or -1 (no memory); with one CPU, samples are not taken */
static int bench_cap_init(struct bench_cap *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	bench_two_cpus(c->cpu);
	if (c->cpu[1] < 0)
		return 0;
	for (i = 0; i < 2; i++) {
		c->buf[i] = malloc(CAP_BYTES);
		if (!c->buf[i]) {
			free(c->buf[0]);
			c->buf[0] = NULL;
			return -1;
		}
		memset(c->buf[i], i + 1, CAP_BYTES);
	}
	return 0;
}

/* One sample: the loop alone on the first CPU, then on both at once */
static void bench_cap_sample(struct bench_cap *c)
{
	struct cap_thread t[2];
	pthread_barrier_t bar;
	pthread_t tid[2];
	int i, started = 0;

	if (c->cpu[1] < 0 || c->n == CAP_MAX_SAMPLES)
		return;
	t[0] = (struct cap_thread){ .cpu = c->cpu[0], .buf = c->buf[0] };
	if (pthread_create(&tid[0], NULL, cap_thread_fn, &t[0]))
		return;
	pthread_join(tid[0], NULL);
	c->one[c->n] = t[0].us;
	if (pthread_barrier_init(&bar, NULL, 2))
		return;
	for (i = 0; i < 2; i++) {
		t[i] = (struct cap_thread){ .bar = &bar, .cpu = c->cpu[i], .buf = c->buf[i] };
		if (pthread_create(&tid[i], NULL, cap_thread_fn, &t[i]))
			break;
		started++;
	}
	if (started < 2) {	/* the first, if any, waits at the barrier: take its place */
		if (started) {
			pthread_barrier_wait(&bar);
			pthread_join(tid[0], NULL);
		}
		pthread_barrier_destroy(&bar);
		return;
	}
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&bar);
	c->two[c->n++] = t[0].us > t[1].us ? t[0].us : t[1].us;
}

/* 2 x the median alone / the median of the pairs; 1.0 without samples */
static double bench_cap_value(struct bench_cap *c)
{
	if (!c->n)
		return 1.0;
	return 2 * bench_median(c->one, c->n) / bench_median(c->two, c->n);
}

static void bench_cap_free(struct bench_cap *c)
{
	free(c->buf[0]);
	free(c->buf[1]);
}

#endif
