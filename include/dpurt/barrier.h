/* SPDX-License-Identifier: MIT */
/*
 * barrier.h - barriers (UPMEM SDK 2023.2 layout).  barrier_wait reads the
 * number of participants from initial_count (count when initial_count is
 * 0), so a barrier_t filled by hand works; the waiting itself is kept by
 * the runtime, keyed by the barrier's address.
 */
#ifndef DPUSYSCORE_BARRIER_H
#define DPUSYSCORE_BARRIER_H

#include <stdint.h>
#include <attributes.h>
#include <atomic_bit.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct barrier_t {
	uint8_t wait_queue;
	uint8_t count;
	uint8_t initial_count;
	uint8_t lock;
} barrier_t;

#define BARRIER_INIT(_name, _counter)                                          \
	_Static_assert((_counter) < 128 && (_counter) >= -127,                 \
		       "barrier counter must be encoded on a byte");           \
	barrier_t _name __attribute__((aligned(4))) = {                        \
		0xFF, (uint8_t)(_counter), (uint8_t)(_counter), 0 }

void barrier_wait(barrier_t *barrier);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_BARRIER_H */
