/* SPDX-License-Identifier: MIT */
/*
 * buddy_alloc.h - the buddy allocator (UPMEM SDK names and semantics,
 * dpu-rt's syslib/buddy_alloc.h).
 *
 * buddy_init(size_of_heap) takes size_of_heap plus size_of_heap / 64 bytes
 * (the SDK's block bitmap; 8 at least) from the WRAM heap with mem_alloc
 * (a fault when WRAM runs out); only the first call of a launch does
 * anything.  The heap is meant to be a power of two (the SDK tests 2048 to
 * 32768 bytes); of another size, the largest power of two below it is used.
 * Its memory comes from the mem_alloc heap, which every launch empties, so
 * every launch starts with no buddy heap: call buddy_init in each launch.
 *
 * buddy_alloc(size) returns a block of the smallest power of two >= size,
 * 16 bytes at least, 8-byte aligned (usable for MRAM transfers), or NULL
 * with errno EINVAL (size 0 or over the heap, or no buddy_init) or ENOMEM
 * (no free block large enough).
 * buddy_free(p) frees the block holding p (any address inside it); NULL
 * does nothing; an address not 8-byte aligned, outside the heap or not in
 * an allocated block sets errno to EINVAL and changes nothing.
 * buddy_realloc(p, size): p NULL is buddy_alloc(size); size 0 is
 * buddy_free(p) and returns p; a size of the same block size keeps the
 * block, a smaller one keeps its start and frees the rest, a larger one
 * moves the contents to a new block (NULL and errno ENOMEM if none: p
 * stays allocated, unchanged).
 * buddy_reset frees every block; the heap keeps its size.
 * All are safe between the tasklets of a DPU.
 */
#ifndef DPUSYSCORE_BUDDY_ALLOC_H
#define DPUSYSCORE_BUDDY_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void buddy_init(size_t size_of_heap);
void buddy_reset(void);
void *buddy_alloc(size_t size);
void buddy_free(void *pointer);
void *buddy_realloc(void *ptr, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_BUDDY_ALLOC_H */
