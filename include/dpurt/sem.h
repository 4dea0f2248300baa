/* SPDX-License-Identifier: MIT */
/*
 * sem.h - semaphores (UPMEM SDK 2023.2 layout).  The counter starts at
 * the sem_t's count at the first use in a launch; count mirrors it.
 */
#ifndef DPUSYSCORE_SEM_H
#define DPUSYSCORE_SEM_H

#include <stdint.h>
#include <attributes.h>
#include <atomic_bit.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sem_t {
	uint8_t wait_queue;
	uint8_t count;
	uint8_t initial_count;
	uint8_t lock;
} sem_t;

#define SEMAPHORE_INIT(_name, _counter)                                        \
	_Static_assert((_counter) < 128 && (_counter) >= -127,                 \
		       "semaphore counter must be encoded on a byte");         \
	sem_t _name __attribute__((aligned(4))) = {                            \
		0xFF, (uint8_t)(_counter), (uint8_t)(_counter), 0 }

void sem_take(sem_t *sem);
void sem_give(sem_t *sem);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_SEM_H */
