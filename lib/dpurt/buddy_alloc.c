// SPDX-License-Identifier: MIT
/*
 * buddy_alloc.c - the buddy allocator (buddy_alloc.h).
 *
 * The heap (2^max_power bytes, from mem_alloc) is a complete binary tree of
 * blocks: node 0 is the whole heap, node n has children 2n+1 and 2n+2, a
 * node at depth d is a block of 2^(max_power - d) bytes, the deepest
 * blocks are BUDDY_MIN bytes.  state[n] is FREE, SPLIT (its children hold
 * the state) or USED; nodes under a FREE or USED node are meaningless.
 * The tree lives in the runtime, not in WRAM: WRAM holds what the SDK's
 * allocator takes (the heap and a bitmap-sized area before it), so a
 * program's WRAM layout is the SDK's.  The state is per launch (reset with
 * the mem_alloc heap it lives in) and guarded by one lock, as in the SDK.
 */
#include "dpurt.h"

#include <errno.h>
#include <string.h>

#include <alloc.h>
#include <atomic_bit.h>

#define BUDDY_MIN_SHIFT 4U                      /* 16-byte blocks, as the SDK */
#define BUDDY_MAX_SHIFT 20U                     /* the largest WRAM: 1 MiB */
#define BUDDY_NODES ((2U << (BUDDY_MAX_SHIFT - BUDDY_MIN_SHIFT)) - 1)

enum { FREE, SPLIT, USED };

static struct {
	bool init_done;
	unsigned int max_power;                 /* the heap is 2^max_power bytes */
	unsigned int depth;                     /* depth of the BUDDY_MIN blocks */
	uintptr_t start;
	uint8_t state[BUDDY_NODES];
} buddy;

static const char buddy_lock_key;

#define BUDDY_LOCK() __dpurt_key_lock((uintptr_t)&buddy_lock_key)
#define BUDDY_UNLOCK() __dpurt_key_unlock((uintptr_t)&buddy_lock_key)

/* Called at every launch, with the heap's reset. */
void dpurt_buddy_reset(void)
{
	buddy.init_done = false;
	buddy.max_power = 0;
	buddy.depth = 0;
	buddy.start = 0;
}

static size_t heap_bytes(void)
{
	return buddy.init_done ? (size_t)1 << buddy.max_power : 0;
}

static uintptr_t node_addr(unsigned int n, unsigned int d)
{
	return buddy.start + (((uintptr_t)n + 1 - (1U << d)) << (buddy.max_power - d));
}

/* The depth whose blocks are the smallest that hold size (0 < size <= heap). */
static unsigned int depth_for(size_t size)
{
	unsigned int d = buddy.depth;

	while (d > 0 && ((size_t)1 << (buddy.max_power - d)) < size)
		d--;
	return d;
}

/* The USED block holding address a (*depth set), or -1. */
static long find_used(uintptr_t a, unsigned int *depth)
{
	unsigned int n = 0, d = 0;

	for (;;) {
		if (buddy.state[n] == USED) {
			*depth = d;
			return n;
		}
		if (buddy.state[n] == FREE)
			return -1;
		d++;
		n = 2 * n + 1;
		if (a >= node_addr(n + 1, d))
			n++;
	}
}

static void *alloc_locked(size_t size)
{
	unsigned int want, d;

	if (size == 0 || size > heap_bytes()) {
		errno = EINVAL;
		return NULL;
	}
	want = depth_for(size);
	/* The smallest free block large enough, the lowest address first. */
	for (d = want + 1; d-- > 0;) {
		unsigned int first = (1U << d) - 1, last = (2U << d) - 1;

		for (unsigned int n = first; n < last; n++) {
			if (buddy.state[n] != FREE || (n && buddy.state[(n - 1) / 2] != SPLIT))
				continue;
			while (d < want) {
				buddy.state[n] = SPLIT;
				buddy.state[2 * n + 1] = FREE;
				buddy.state[2 * n + 2] = FREE;
				n = 2 * n + 1;
				d++;
			}
			buddy.state[n] = USED;
			return (void *)node_addr(n, d);
		}
	}
	errno = ENOMEM;
	return NULL;
}

static void release(unsigned int n)
{
	buddy.state[n] = FREE;
	while (n) {
		unsigned int p = (n - 1) / 2;

		if (buddy.state[2 * p + 1] != FREE || buddy.state[2 * p + 2] != FREE)
			break;
		buddy.state[p] = FREE;
		n = p;
	}
}

/* The USED block holding p, or -1 with errno EINVAL. */
static long lookup(void *p, unsigned int *depth)
{
	uintptr_t a = (uintptr_t)p;
	long n;

	if (a % 8 || a < buddy.start || a - buddy.start >= heap_bytes()) {
		errno = EINVAL;
		return -1;
	}
	n = find_used(a, depth);
	if (n < 0)
		errno = EINVAL;
	return n;
}

void buddy_init(size_t size_of_heap)
{
	unsigned int p = 0;
	size_t meta;
	char *mem;

	BUDDY_LOCK();
	if (buddy.init_done) {
		BUDDY_UNLOCK();
		return;
	}
	if (size_of_heap < ((size_t)1 << BUDDY_MIN_SHIFT)) {
		struct dpurt_msg m = { .len = 0 };

		BUDDY_UNLOCK();
		dpurt_msg_str(&m, "buddy_init: heap of ");
		dpurt_msg_dec(&m, size_of_heap);
		dpurt_msg_str(&m, " bytes, 16 at least");
		dpurt_msg_tasklet(&m);
		dpurt_fault(m.buf);
	}
	if (size_of_heap > ((size_t)2 << BUDDY_MAX_SHIFT)) {
		BUDDY_UNLOCK();
		mem_alloc(size_of_heap);        /* more than any WRAM: faults */
		dpurt_fault("buddy_init: heap larger than WRAM");
	}
	while (((size_t)2 << p) <= size_of_heap)
		p++;
	if (p > BUDDY_MAX_SHIFT)
		p = BUDDY_MAX_SHIFT;
	/* The SDK's bitmap: 2^(p - BUDDY_MIN_SHIFT + 1) bits, 8 bytes at least. */
	meta = ((size_t)1 << p) / 64;
	if (meta < 8)
		meta = 8;
	mem = mem_alloc(size_of_heap + meta);
	buddy.max_power = p;
	buddy.depth = p - BUDDY_MIN_SHIFT;
	buddy.start = (uintptr_t)mem + meta;
	buddy.state[0] = FREE;
	buddy.init_done = true;
	BUDDY_UNLOCK();
}

void buddy_reset(void)
{
	BUDDY_LOCK();
	buddy.state[0] = FREE;
	BUDDY_UNLOCK();
}

void *buddy_alloc(size_t size)
{
	void *p;

	BUDDY_LOCK();
	p = alloc_locked(size);
	BUDDY_UNLOCK();
	return p;
}

void buddy_free(void *pointer)
{
	unsigned int d;
	long n;

	if (!pointer)
		return;
	BUDDY_LOCK();
	n = lookup(pointer, &d);
	if (n >= 0)
		release((unsigned int)n);
	BUDDY_UNLOCK();
}

void *buddy_realloc(void *ptr, size_t size)
{
	unsigned int d, want;
	void *to;
	long n;

	if (!ptr)
		return buddy_alloc(size);
	if (size == 0) {
		buddy_free(ptr);
		return ptr;
	}
	BUDDY_LOCK();
	n = lookup(ptr, &d);
	if (n < 0 || size > heap_bytes()) {
		errno = EINVAL;
		BUDDY_UNLOCK();
		return NULL;
	}
	want = depth_for(size);
	if (want >= d) {
		/* Same or smaller: keep the start, free the upper halves. */
		unsigned int m = (unsigned int)n;

		while (d < want) {
			buddy.state[m] = SPLIT;
			buddy.state[2 * m + 2] = FREE;
			m = 2 * m + 1;
			d++;
		}
		buddy.state[m] = USED;
		BUDDY_UNLOCK();
		return (void *)node_addr(m, d);
	}
	to = alloc_locked(size);
	if (to) {
		memcpy(to, (void *)node_addr((unsigned int)n, d), (size_t)1 << (buddy.max_power - d));
		release((unsigned int)n);
	}
	BUDDY_UNLOCK();
	return to;
}
