// SPDX-License-Identifier: MIT
/*
 * mram.c - mram_read/mram_write as the DPU's DMA engine does them.
 *
 * By default a request outside the SDK's documented rules (size 8..2048, a
 * multiple of 8, 8-byte aligned MRAM and WRAM addresses) does what the
 * ldma/sdma instruction does with it on the machine, wrong data included:
 * the SDK's compiler puts (size >> 3) - 1 into bits 31:24 of the WRAM
 * address register, the engine moves (1 + (that & 0xff)) * 8 bytes, and it
 * ignores the low 3 bits of both addresses. In strict mode (the profile key
 * dpusimStrictDma=true, see lib/profile.h) a broken rule faults the DPU
 * instead, with a reason naming the call, the value and the tasklet.
 */
#include "dpurt.h"

#include <string.h>

#include <mram.h>

uintptr_t dpurt_mram_addr(uintptr_t addr, uint64_t len)
{
	uint64_t size = dpurt_ctx.mram_size;

	/*
	 * The DPU's addresses are 32 bits: an MRAM pointer that arithmetic
	 * took past 4 GiB (an offset that underflowed, added to a base) wraps
	 * as on the DPU.  MRAM is mapped below 4 GiB (DPURT_MRAM_BASE).
	 */
	addr = (uint32_t)addr;
	if (addr < size)  /* a bare offset, as the DPU's DMA engine sees it */
		addr += DPURT_MRAM_BASE;
	if (addr < DPURT_MRAM_BASE || addr - DPURT_MRAM_BASE > size ||
	    len > size - (addr - DPURT_MRAM_BASE))
		return 0;
	return addr;
}

static __attribute__((noreturn, noinline)) void rule(const char *call, const char *what,
						      uint64_t value, bool hex, const char *tail)
{
	struct dpurt_msg m = { .len = 0 };

	dpurt_msg_str(&m, call);
	dpurt_msg_str(&m, ": ");
	dpurt_msg_str(&m, what);
	dpurt_msg_str(&m, " ");
	if (hex)
		dpurt_msg_hex(&m, value);
	else
		dpurt_msg_dec(&m, value);
	dpurt_msg_str(&m, tail);
	dpurt_msg_tasklet(&m);
	dpurt_fault(m.buf);
}

bool dpurt_dma_strict;

unsigned int dpurt_dma_request(uintptr_t *mram, uintptr_t *wram, unsigned int n)
{
	*mram &= ~(uintptr_t)7;
	*wram &= ~(uintptr_t)7;
	return ((((n >> 3) - 1) & 0xff) + 1) * 8;
}

static uintptr_t check(const char *call, uintptr_t mram, uintptr_t *wram, unsigned int *np)
{
	unsigned int n = *np;
	uintptr_t p;

	if (!dpurt_dma_strict) {
		*np = n = dpurt_dma_request(&mram, wram, n);
		goto bounds;
	}
	if (n < 8)
		rule(call, "size", n, false, " below 8");
	if (n > 2048)
		rule(call, "size", n, false, " above 2048");
	if (n % 8)
		rule(call, "size", n, false, " not a multiple of 8");
	if (mram % 8)
		rule(call, "MRAM", mram, true, " unaligned");
	if (*wram % 8)
		rule(call, "WRAM", *wram, true, " unaligned");
bounds:
	p = dpurt_mram_addr(mram, n);
	if (!p) {
		struct dpurt_msg m = { .len = 0 };

		dpurt_msg_str(&m, call);
		dpurt_msg_str(&m, ": ");
		dpurt_msg_hex(&m, mram);
		dpurt_msg_str(&m, "+");
		dpurt_msg_dec(&m, n);
		dpurt_msg_str(&m, " outside MRAM");
		dpurt_msg_tasklet(&m);
		dpurt_fault(m.buf);
	}
	return p;
}

/*
 * The DMA engine moves 8-byte words; in both modes it gets a multiple of
 * 8 bytes between 8-aligned addresses, so a word string move does it
 * (what compilers emit for a fixed-size copy), without the size and
 * alignment dispatch of a general memcpy.
 */
static inline void dma_copy(void *to, const void *from, unsigned int n)
{
	unsigned long words = n / 8;

	__asm__ volatile("rep movsq"
			 : "+D"(to), "+S"(from), "+c"(words)
			 :
			 : "memory");
}

void mram_read(const __mram_ptr void *from, void *to, unsigned int nb_of_bytes)
{
	uintptr_t w = (uintptr_t)to;
	uintptr_t p = check("mram_read", (uintptr_t)from, &w, &nb_of_bytes);

	dma_copy((void *)w, (const void *)p, nb_of_bytes);
	dpurt_time_dma(nb_of_bytes);
	dpurt_yield();	/* the DMA stalls this tasklet: the others go on */
}

void mram_write(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes)
{
	uintptr_t w = (uintptr_t)from;
	uintptr_t p = check("mram_write", (uintptr_t)to, &w, &nb_of_bytes);

	dma_copy((void *)p, (const void *)w, nb_of_bytes);
	dpurt_time_dma(nb_of_bytes);
	dpurt_yield();
}
