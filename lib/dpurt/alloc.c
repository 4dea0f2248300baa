// SPDX-License-Identifier: MIT
/*
 * alloc.c - mem_alloc/mem_reset: a bump allocator over the DPU's WRAM from
 * the end of the program's globals to the end of WRAM, emptied at every
 * launch.  Running out faults the DPU.
 */
#include "dpurt.h"

#include <alloc.h>

static _Atomic uintptr_t heap_ptr;

void dpurt_alloc_reset(void)
{
	atomic_store(&heap_ptr, dpurt_ctx.heap_start);
	dpurt_buddy_reset();
}

void *mem_alloc(size_t size)
{
	uintptr_t cur = atomic_load_explicit(&heap_ptr, memory_order_relaxed);
	uintptr_t want = (size + 7) & ~(size_t)7;

	for (;;) {
		uintptr_t left = dpurt_ctx.heap_end > cur ? dpurt_ctx.heap_end - cur : 0;

		if (want > left || want < size) {
			struct dpurt_msg m = { .len = 0 };

			dpurt_msg_str(&m, "mem_alloc: ");
			dpurt_msg_dec(&m, size);
			dpurt_msg_str(&m, " bytes, WRAM has ");
			dpurt_msg_dec(&m, left);
			dpurt_msg_tasklet(&m);
			dpurt_fault(m.buf);
		}
		if (atomic_compare_exchange_weak_explicit(&heap_ptr, &cur, cur + want,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return (void *)cur;
	}
}

void *mem_reset(void)
{
	atomic_store(&heap_ptr, dpurt_ctx.heap_start);
	return (void *)dpurt_ctx.heap_start;
}
