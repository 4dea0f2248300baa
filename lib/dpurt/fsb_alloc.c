// SPDX-License-Identifier: MIT
/*
 * fsb_alloc.c - the fixed-size block allocator (fsb_allocator.h): blocks
 * from the WRAM heap in one mem_alloc, the free ones in a list threaded
 * through their first 8 bytes, the list's head in the word after the last
 * block (the allocator points at it).  As in the SDK, one lock serves every
 * allocator of the DPU.
 */
#include "dpurt.h"

#include <alloc.h>
#include <atomic_bit.h>

/* Its address is the lock's key: no DPU-side address can equal it. */
static const char fsb_lock_key;

#define FSB_LOCK() __dpurt_key_lock((uintptr_t)&fsb_lock_key)
#define FSB_UNLOCK() __dpurt_key_unlock((uintptr_t)&fsb_lock_key)

fsb_allocator_t fsb_alloc(unsigned int block_size, unsigned int nb_of_blocks)
{
	size_t bs, bytes;
	char *mem;
	void **head;

	/* The SDK's bound: a larger size does not round up to 8 in 32 bits. */
	if (block_size > 0xFFFFFFF8u) {
		struct dpurt_msg m = { .len = 0 };

		dpurt_msg_str(&m, "fsb_alloc: block size ");
		dpurt_msg_dec(&m, block_size);
		dpurt_msg_tasklet(&m);
		dpurt_fault(m.buf);
	}
	bs = block_size == 0 ? 8 : ((size_t)block_size + 7) & ~(size_t)7;
	/* 64-bit: cannot wrap; what WRAM cannot hold faults in mem_alloc. */
	bytes = bs * nb_of_blocks + sizeof(void *);
	mem = mem_alloc(bytes);
	head = (void **)(mem + bs * nb_of_blocks);
	*head = nb_of_blocks ? mem : NULL;
	for (unsigned int i = 0; i < nb_of_blocks; i++) {
		char *b = mem + bs * i;

		*(void **)b = i + 1 < nb_of_blocks ? b + bs : NULL;
	}
	return head;
}

void *fsb_get(fsb_allocator_t allocator)
{
	void **block;

	FSB_LOCK();
	block = *allocator;
	if (block)
		*allocator = *block;
	FSB_UNLOCK();
	return block;
}

void fsb_free(fsb_allocator_t allocator, void *ptr)
{
	FSB_LOCK();
	*(void **)ptr = *allocator;
	*allocator = ptr;
	FSB_UNLOCK();
}
