/* SPDX-License-Identifier: MIT */
/*
 * alloc.h - the WRAM heap.  It starts after the program's WRAM globals
 * (__dpusim_wram_end) and ends at the end of the DPU's WRAM; every launch
 * starts with an empty heap.  Buffers are 8-byte aligned; running out of
 * WRAM faults the DPU ("mem_alloc: ... (tasklet N)").  As in the SDK, it
 * also declares the allocators built on this heap: the fixed-size block
 * allocator (fsb_allocator.h) and the buddy allocator (buddy_alloc.h).
 */
#ifndef DPUSYSCORE_ALLOC_H
#define DPUSYSCORE_ALLOC_H

#include <stddef.h>
#include <attributes.h>
#include <buddy_alloc.h>
#include <fsb_allocator.h>

#ifdef __cplusplus
extern "C" {
#endif

void *mem_alloc(size_t size);
void *mem_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_ALLOC_H */
