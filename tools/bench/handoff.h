/* SPDX-License-Identifier: MIT */
/*
 * handoff.h - what two plain threads (no dpusim at all) get from the
 * overlap a preload makes, measured in the same run as stream_bench's
 * figure: a reference for the machine, not a bound.
 *
 * A preload overlaps the copy of token k + 1, on one CPU, with the
 * consumer's work on token k, on the other: the bytes are written by one
 * CPU and read by the other, and both stream memory at once.  What that
 * costs is the machine's, not the driver's (on the 2-CPU machine of the
 * 2026-11-27 figures, both natively and in the guest, two such threads
 * took longer than one thread copying and working in turn).  A sample
 * runs the benchmark's own pattern in user space, on the same sizes:
 *
 *   copy     one thread copies every token from a source the size of
 *            the stream into one of two token buffers, in turn
 *   serial   the same thread copies token k, then works on it
 *   overlap  a thread on the second CPU copies token k + 1 into the other
 *            buffer while the first works on token k (double buffering;
 *            each waits for the other's flag, on a cache line of its own,
 *            spinning a little, then in a futex, as dpusim's waits poll
 *            a little, then sleep).  The copier is started and pinned
 *            before the clock starts, as dpusim's worker is there already
 *
 *   hidden = (serial - overlap) / copy
 *
 * The copy is the transfer engine's loop (8-byte words, four at a time;
 * not memcpy(), whose strategy glibc picks by CPU model); the work is the
 * caller's.  The source and the two buffers are one allocation with
 * BENCH_TLB_GAP between them, so that a source page and the destination
 * page copied beside it are never a power of two of pages apart: QEMU's
 * software TLB is direct-mapped, and two such pages take the same entry
 * (bench.h), which would slow the copy for reasons of its own.  Each
 * thread is pinned; the caller's own affinity does not change.  With one
 * CPU no sample is taken.
 */
#ifndef DPUSIM_BENCH_HANDOFF_H
#define DPUSIM_BENCH_HANDOFF_H

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define HANDOFF_MAX_SAMPLES	64

typedef uint64_t (*handoff_work_fn)(const void *buf, unsigned int n);

struct bench_handoff {
	int cpu[2];			/* cpu[1] < 0: only one */
	unsigned int tokens, token;
	uint8_t *src;			/* tokens x token, then the buffers */
	uint8_t *buf;			/* two token buffers, BENCH_TLB_GAP apart */
	handoff_work_fn work;
	double copy[HANDOFF_MAX_SAMPLES], serial[HANDOFF_MAX_SAMPLES];
	double overlap[HANDOFF_MAX_SAMPLES];
	unsigned int n;
	/* the overlap's flags, each on a cache line of its own */
	alignas(64) atomic_int ready;	/* tokens copied */
	alignas(64) atomic_int used;	/* tokens worked on */
	alignas(64) atomic_int go;	/* 1: copier pinned; 2: start */
	alignas(64) volatile uint64_t sink;
};

static void handoff_copy(void *dst, const void *src, size_t len)
{
	uint64_t *d = dst;
	const uint64_t *s = src;
	size_t i;

	for (i = 0; i + 4 <= len / 8; i += 4) {
		uint64_t a = s[i], b = s[i + 1], c = s[i + 2], e = s[i + 3];

		d[i] = a;
		d[i + 1] = b;
		d[i + 2] = c;
		d[i + 3] = e;
	}
	for (; i < len / 8; i++)
		d[i] = s[i];
}

#define HANDOFF_SPINS	1000	/* looks at a flag before the futex */

/* Wait until *@flag >= @v */
static void handoff_wait(atomic_int *flag, int v)
{
	int seen, spins = 0;

	while ((seen = atomic_load_explicit(flag, memory_order_acquire)) < v)
		if (++spins > HANDOFF_SPINS)
			syscall(SYS_futex, flag, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void handoff_set(atomic_int *flag, int v)
{
	atomic_store_explicit(flag, v, memory_order_release);
	syscall(SYS_futex, flag, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static uint8_t *handoff_tok(struct bench_handoff *h, uint8_t *base, unsigned int k)
{
	return base + (size_t)k * h->token;
}

/* Token buffer @k % 2 */
static uint8_t *handoff_buf(struct bench_handoff *h, unsigned int k)
{
	return h->buf + (k % 2) * ((size_t)h->token + BENCH_TLB_GAP);
}

/* The copier of the overlap, on the second CPU */
static void *handoff_copier(void *arg)
{
	struct bench_handoff *h = arg;
	unsigned int k;

	bench_pin_thread(h->cpu[1]);
	handoff_set(&h->go, 1);
	handoff_wait(&h->go, 2);
	for (k = 0; k < h->tokens; k++) {
		/* buffer k % 2 held token k - 2: wait until it was worked on */
		if (k >= 2)
			handoff_wait(&h->used, (int)k - 1);
		handoff_copy(handoff_buf(h, k), handoff_tok(h, h->src, k), h->token);
		handoff_set(&h->ready, (int)k + 1);
	}
	return NULL;
}

/* The three passes, in the calling thread pinned to the first CPU */
static void *handoff_passes(void *arg)
{
	struct bench_handoff *h = arg;
	unsigned int k;
	pthread_t tid;
	double t0;

	bench_pin_thread(h->cpu[0]);
	t0 = bench_now_us();
	for (k = 0; k < h->tokens; k++)
		handoff_copy(handoff_buf(h, k), handoff_tok(h, h->src, k), h->token);
	h->copy[h->n] = bench_now_us() - t0;

	t0 = bench_now_us();
	for (k = 0; k < h->tokens; k++) {
		handoff_copy(handoff_buf(h, k), handoff_tok(h, h->src, k), h->token);
		h->sink += h->work(handoff_buf(h, k), h->token);
	}
	h->serial[h->n] = bench_now_us() - t0;

	/*
	 * The copier starts, pins itself and waits for go before the clock
	 * starts (creating and moving a thread took 600-800 us natively,
	 * most of a pass's copy), and the clock stops when the last token
	 * was worked on: the copier had copied every token by then, only
	 * its exit is left.
	 */
	atomic_store(&h->ready, 0);
	atomic_store(&h->used, 0);
	atomic_store(&h->go, 0);
	if (pthread_create(&tid, NULL, handoff_copier, h)) {
		h->overlap[h->n] = -1;
		return NULL;
	}
	handoff_wait(&h->go, 1);
	t0 = bench_now_us();
	handoff_set(&h->go, 2);
	for (k = 0; k < h->tokens; k++) {
		handoff_wait(&h->ready, (int)k + 1);
		h->sink += h->work(handoff_buf(h, k), h->token);
		handoff_set(&h->used, (int)k + 1);
	}
	h->overlap[h->n] = bench_now_us() - t0;
	pthread_join(tid, NULL);
	return NULL;
}

/* 0, or -1 (no memory); with one CPU, samples are not taken */
static int bench_handoff_init(struct bench_handoff *h, unsigned int tokens,
			      unsigned int token, handoff_work_fn work)
{
	size_t i;

	memset(h, 0, sizeof(*h));
	h->tokens = tokens;
	h->token = token & ~7u;
	h->work = work;
	bench_two_cpus(h->cpu);
	if (h->cpu[1] < 0)
		return 0;
	h->src = malloc((size_t)(tokens + 2) * h->token + 2 * BENCH_TLB_GAP);
	if (!h->src)
		return -1;
	h->buf = h->src + (size_t)tokens * h->token + BENCH_TLB_GAP;
	for (i = 0; i < (size_t)tokens * h->token; i++)
		h->src[i] = (uint8_t)(i * 13 + 5);
	memset(h->buf, 0, 2 * (size_t)h->token + BENCH_TLB_GAP);
	return 0;
}

/* One sample of the three passes (in a thread of its own, pinned) */
static void bench_handoff_sample(struct bench_handoff *h)
{
	pthread_t tid;

	if (h->cpu[1] < 0 || !h->src || h->n == HANDOFF_MAX_SAMPLES)
		return;
	if (pthread_create(&tid, NULL, handoff_passes, h))
		return;
	pthread_join(tid, NULL);
	if (h->overlap[h->n] >= 0)
		h->n++;
}

/* Medians of the samples; 0 if none was taken */
static unsigned int bench_handoff_value(struct bench_handoff *h, double *copy,
					double *serial, double *overlap,
					double *hidden)
{
	if (!h->n)
		return 0;
	*copy = bench_median(h->copy, h->n);
	*serial = bench_median(h->serial, h->n);
	*overlap = bench_median(h->overlap, h->n);
	*hidden = (*serial - *overlap) / *copy;
	return h->n;
}

static void bench_handoff_free(struct bench_handoff *h)
{
	free(h->src);
}

#endif
