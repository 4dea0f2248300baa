/* SPDX-License-Identifier: MIT */
/*
 * fsb_allocator.h - the fixed-size block allocator (UPMEM SDK names and
 * semantics, dpu-rt's syslib/fsb_allocator.h).
 *
 * fsb_alloc(block_size, nb_of_blocks) takes block_size rounded up to a
 * multiple of 8 (8 at least) times nb_of_blocks, plus one 8-byte word, from
 * the WRAM heap with mem_alloc: it faults the DPU when WRAM runs out, as
 * mem_alloc does, and the allocator lives until the heap is emptied
 * (mem_reset, or the next launch).  Blocks are 8-byte aligned.  The free
 * blocks form a list threaded through their first bytes, so writing past a
 * block corrupts the list, and fsb_free takes back any pointer unchecked.
 * fsb_get (NULL once every block is taken) and fsb_free are safe between the
 * tasklets of a DPU.
 */
#ifndef DPUSYSCORE_FBS_ALLOC_H
#define DPUSYSCORE_FBS_ALLOC_H

#ifdef __cplusplus
extern "C" {
#endif

/* Points at the word holding the first free block (NULL: none left). */
typedef void **fsb_allocator_t;

fsb_allocator_t fsb_alloc(unsigned int block_size, unsigned int nb_of_blocks);
void *fsb_get(fsb_allocator_t allocator);
void fsb_free(fsb_allocator_t allocator, void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_FBS_ALLOC_H */
