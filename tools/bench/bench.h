/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what the benchmarks of tools/bench share: the monotonic clock,
 * medians, the work's calibration, and the two CPUs a two-thread sample
 * runs on.  Each median sorts its array in place (callers that look at
 * the quickest repetition afterwards rely on it) and takes n >= 1.
 */
#ifndef DPUSIM_BENCH_H
#define DPUSIM_BENCH_H

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int bench_cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of @n doubles, and the smallest and largest (either may be NULL) */
static inline double bench_median_range(double *v, size_t n, double *lo, double *hi)
{
	qsort(v, n, sizeof(*v), bench_cmp_dbl);
	if (lo)
		*lo = v[0];
	if (hi)
		*hi = v[n - 1];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline double bench_median(double *v, size_t n)
{
	return bench_median_range(v, n, NULL, NULL);
}

static inline double bench_median_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

/*
 * Bytes between the two sides of a copy loop in one allocation (5 pages
 * and 192 bytes): QEMU's software TLB is direct-mapped and resized with
 * its use (256 entries by default, fewer after a while of little use), so
 * two pages a power of two of pages apart take the same entry, and a loop
 * alternating between them misses on every access (capacity.h's sample,
 * its halves 1 MiB apart, once ran 30 ms instead of 2.5 ms so).
 */
#define BENCH_TLB_GAP		(5 * 4096 + 192)

#define BENCH_ROUNDS_MAX	10000

/*
 * The passes a calibrated work makes over a token: about @ratio x @transfer
 * (what the work should last) / @one (one pass), rounded, and at least 1 and
 * at most BENCH_ROUNDS_MAX whatever the samples were: a time of 0 or less,
 * or not a number, is a sample gone wrong (a cold first pass can take
 * longer than a warm pass with work in it), not a reason to work for hours.
 */
static inline unsigned int bench_work_rounds(double ratio, double transfer, double one)
{
	double r = ratio * transfer / one;

	if (!(ratio > 0) || !(transfer > 0) || !(one > 0) || !isfinite(r) || r < 1)
		return 1;
	if (r >= BENCH_ROUNDS_MAX)
		return BENCH_ROUNDS_MAX;
	return (unsigned int)(r + 0.5);
}

/* The first two CPUs the caller may run on; cpu[1] < 0: only one */
static inline void bench_two_cpus(int cpu[2])
{
	cpu_set_t set;
	int i, k = 0;

	cpu[0] = cpu[1] = -1;
	if (!sched_getaffinity(0, sizeof(set), &set))
		for (i = 0; i < CPU_SETSIZE && k < 2; i++)
			if (CPU_ISSET(i, &set))
				cpu[k++] = i;
}

/* Pin the calling thread to @cpu (the process's affinity does not change) */
static inline void bench_pin_thread(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

#endif
