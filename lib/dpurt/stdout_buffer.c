// SPDX-License-Identifier: MIT
/*
 * stdout_buffer.c - the DPU's log, __stdout_buffer in MRAM.  A member of its
 * own: dpusim-cc pulls it in (-u __stdout_buffer) only for programs that
 * print, so that, as with the SDK, a program without printf has its
 * DPU_MRAM_HEAP_POINTER at the start of MRAM.
 */
#include "dpurt.h"

__attribute__((section(".mram.noinit"), aligned(8), used))
unsigned char __stdout_buffer[DPURT_LOG_SIZE];
