/* SPDX-License-Identifier: MIT */
/*
 * mutex.h - mutual exclusion (UPMEM SDK 2023.2 names).  A mutex_id_t is
 * only a value: the runtime keys its lock table by it and never
 * dereferences it, so ids that are zero-initialised (all the same lock) or
 * made up work as on hardware.
 */
#ifndef DPUSYSCORE_MUTEX_H
#define DPUSYSCORE_MUTEX_H

#include <stdint.h>
#include <stdbool.h>
#include <sysdef.h>
#include <atomic_bit.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint8_t *mutex_id_t;

#define MUTEX_GET(_name) _name

#define MUTEX_INIT(_name)                                                      \
	ATOMIC_BIT_INIT(__DPURT_CAT(mutex_, _name));                           \
	const mutex_id_t MUTEX_GET(_name) = &ATOMIC_BIT_GET(__DPURT_CAT(mutex_, _name))

static inline void mutex_lock(mutex_id_t mutex)
{
	__dpurt_key_lock((uintptr_t)mutex);
}

static inline bool mutex_trylock(mutex_id_t mutex)
{
	return __dpurt_key_trylock((uintptr_t)mutex) != 0;
}

static inline void mutex_unlock(mutex_id_t mutex)
{
	__dpurt_key_unlock((uintptr_t)mutex);
}

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_MUTEX_H */
