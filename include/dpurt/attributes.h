/* SPDX-License-Identifier: MIT */
/*
 * attributes.h - DPU qualifiers for a DPU program compiled by dpusim-cc
 * (UPMEM SDK 2023.2 names).  On the host, __mram_ptr is an ordinary
 * pointer: MRAM is mapped at 0x08000000 in the worker, so an MRAM address
 * (DPU_MRAM_HEAP_POINTER, an __mram variable, a uint32_t cast back to a
 * pointer) can be dereferenced directly.  WRAM globals (.data/.bss of the
 * program) are moved to the DPU's WRAM by dpusim-cc; __host variables go
 * there too, first.
 */
#ifndef DPUSYSCORE_ATTRIBUTES_H
#define DPUSYSCORE_ATTRIBUTES_H

#define DEPRECATED __attribute__((deprecated))

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define __NO_RETURN _Noreturn
#else
#define __NO_RETURN __attribute__((noreturn))
#endif

#ifndef __weak
#define __weak __attribute__((weak))
#endif
#ifndef __section
#define __section(s) __attribute__((section(s)))
#endif
#ifndef __aligned
#define __aligned(a) __attribute__((aligned(a)))
#endif
#ifndef __used
#define __used __attribute__((used))
#endif
#ifndef __noinline
#define __noinline __attribute__((noinline))
#endif

/* Atomic bits: their addresses are the ids; they are never read or written. */
#define __atomic_bit __attribute__((section(".dpusim.atomic"), used))

#define __dma_aligned __aligned(8)

#define __keep __used __section(".data.__sys_keep")

/* WRAM variables the host reaches by name (dpu_copy_to/from, xfer). */
#define __host __aligned(8) __used __section(".dpu_wram.host")

#define __lower_data(name) __attribute__((used, section(".data.immediate_memory." name)))

/* An MRAM address: a plain pointer here (MRAM is mapped at 0x08000000). */
#define __mram_ptr

#define __mram __mram_ptr __section(".mram") __dma_aligned __used
#define __mram_noinit __mram_ptr __section(".mram.noinit") __dma_aligned __used
#define __mram_keep __mram_ptr __section(".mram.keep") __dma_aligned __used
#define __mram_noinit_keep __mram_ptr __section(".mram.noinit.keep") __dma_aligned __used

#endif /* DPUSYSCORE_ATTRIBUTES_H */
