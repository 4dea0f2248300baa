/* SPDX-License-Identifier: MIT */
/*
 * mram.h - MRAM transfers (UPMEM SDK 2023.2 signatures).
 *
 * mram_read/mram_write keep the hardware's rules: 8 to 2048 bytes, a
 * multiple of 8, both addresses 8-byte aligned, the MRAM range inside the
 * DPU's MRAM.  A call that breaks one faults the DPU (DPU_ERR_DPU_FAULT on
 * the host) with a reason naming the call, the value and the tasklet.
 * An MRAM address is 0x08000000 + offset (DPU_MRAM_HEAP_POINTER, __mram
 * variables); a bare offset below the MRAM size is accepted as well.
 */
#ifndef DPUSYSCORE_MRAM_H
#define DPUSYSCORE_MRAM_H

#include <stdint.h>
#include <attributes.h>

#ifdef __cplusplus
extern "C" {
#endif

/* End of the program's MRAM variables (dpusim-cc's linker script). */
extern __mram_ptr __dma_aligned uint8_t __sys_used_mram_end[];
#define DPU_MRAM_HEAP_POINTER ((__mram_ptr void *)(&__sys_used_mram_end))

void mram_read(const __mram_ptr void *from, void *to, unsigned int nb_of_bytes);
void mram_write(const void *from, __mram_ptr void *to, unsigned int nb_of_bytes);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_MRAM_H */
