/* SPDX-License-Identifier: MIT */
/*
 * atomic_bit.h - atomic bits.  An atomic bit is named by its address (a
 * byte in section .dpusim.atomic, never read or written); acquiring it
 * takes a runtime lock keyed by that value.
 */
#ifndef DPUSYSCORE_ATOMIC_BIT_H
#define DPUSYSCORE_ATOMIC_BIT_H

#include <stdint.h>
#include <macro_utils.h>
#include <attributes.h>

#ifdef __cplusplus
extern "C" {
#endif

void __dpurt_key_lock(uintptr_t key);
void __dpurt_key_unlock(uintptr_t key);
int __dpurt_key_trylock(uintptr_t key);

#define ATOMIC_BIT_GET(_name) __DPURT_CAT(__atomic_bit_, _name)
#define ATOMIC_BIT_INIT(_name) uint8_t __atomic_bit ATOMIC_BIT_GET(_name)
#define ATOMIC_BIT_EXTERN(_name) extern uint8_t ATOMIC_BIT_GET(_name)

extern uint8_t __atomic_start_addr[];
#define ATOMIC_BIT_INDEX(_name) ((unsigned int)(&ATOMIC_BIT_GET(_name) - __atomic_start_addr))

#define __ATOMIC_BIT_ACQUIRE(_reg, _bit) __dpurt_key_lock((uintptr_t)(_reg) + (uintptr_t)(_bit))
#define __ATOMIC_BIT_RELEASE(_reg, _bit) __dpurt_key_unlock((uintptr_t)(_reg) + (uintptr_t)(_bit))
#define ATOMIC_BIT_ACQUIRE(_name) __dpurt_key_lock((uintptr_t)&ATOMIC_BIT_GET(_name))
#define ATOMIC_BIT_RELEASE(_name) __dpurt_key_unlock((uintptr_t)&ATOMIC_BIT_GET(_name))

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_ATOMIC_BIT_H */
