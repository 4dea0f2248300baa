// SPDX-License-Identifier: MIT
/*
 * seqread.c - sequential readers: a WRAM cache of 2 * cache_size bytes
 * over a window of MRAM that slides by cache_size as the pointer passes
 * the first half.
 */
#include "dpurt.h"

#include <string.h>

#include <alloc.h>
#include <seqread.h>

static void fill(unsigned int cache_size, seqreader_t *reader)
{
	uint64_t end = DPURT_MRAM_BASE + dpurt_ctx.mram_size;
	uint64_t n = 2ULL * cache_size;

	if (reader->mram_addr >= end)
		n = 0;
	else if (end - reader->mram_addr < n)
		n = end - reader->mram_addr;
	memcpy((void *)reader->wram_cache, (const void *)reader->mram_addr, n);
	dpurt_time_dma((uint32_t)n);
	dpurt_yield();	/* a DMA, as mram_read */
}

seqreader_buffer_t __dpurt_seqread_alloc(unsigned int cache_size)
{
	return (seqreader_buffer_t)mem_alloc(2 * cache_size);
}

void *__dpurt_seqread_seek(unsigned int cache_size, __mram_ptr void *mram_addr,
			   seqreader_t *reader)
{
	uintptr_t addr = dpurt_mram_addr((uintptr_t)mram_addr, 0);
	uintptr_t base;

	if (!addr) {
		struct dpurt_msg m = { .len = 0 };

		dpurt_msg_str(&m, "seqread: MRAM address ");
		dpurt_msg_hex(&m, (uintptr_t)mram_addr);
		dpurt_msg_str(&m, " outside MRAM");
		dpurt_msg_tasklet(&m);
		dpurt_fault(m.buf);
	}
	base = addr & ~(uintptr_t)7;
	reader->mram_addr = base;
	fill(cache_size, reader);
	return (char *)reader->wram_cache + (addr - base);
}

void *__dpurt_seqread_init(unsigned int cache_size, seqreader_buffer_t cache,
			   __mram_ptr void *mram_addr, seqreader_t *reader)
{
	reader->wram_cache = cache;
	return __dpurt_seqread_seek(cache_size, mram_addr, reader);
}

void *__dpurt_seqread_get(unsigned int cache_size, void *ptr, uint32_t inc, seqreader_t *reader)
{
	uintptr_t p = (uintptr_t)ptr + inc;

	if (p < reader->wram_cache + cache_size)
		return (void *)p;
	while (p >= reader->wram_cache + cache_size) {
		reader->mram_addr += cache_size;
		p -= cache_size;
	}
	fill(cache_size, reader);
	return (void *)p;
}

__mram_ptr void *__dpurt_seqread_tell(void *ptr, seqreader_t *reader)
{
	return (__mram_ptr void *)(reader->mram_addr + ((uintptr_t)ptr - reader->wram_cache));
}
