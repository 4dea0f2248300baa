/* SPDX-License-Identifier: MIT */
/*
 * stdlib.h - the C library's <stdlib.h> as DPU code sees it.
 *
 * DPU programs are compiled against the host's C library, but DPU code
 * should see what the DPU runtime's stdlib.h (UPMEM SDK, dpu-rt) declares:
 * abort, exit, getenv, abs, labs, llabs, div, ldiv, lldiv, atoi, atol.
 * Programs written for it define functions of their own under names the
 * host's header declares, of their own types (PIM-TC: `uint32_t rand()`,
 * `void srand(uint32_t)`), which the host's declarations would contradict.
 * So the host's header is included with every other name it declares
 * hidden (lib/dpurt/libc.hide, through dpusim_libc.h): DPU code may define
 * them as it likes, and one that only calls them is told at compile time
 * that they are not declared, as it would be by the SDK's compiler.
 *
 * Host code that includes the DPU headers (the runtime itself, host unit
 * tests) defines DPUSIM_HOST_LIBC to see the host's whole header.
 */
#ifndef DPUSIM_DPURT_STDLIB_H
#define DPUSIM_DPURT_STDLIB_H

#ifdef DPUSIM_HOST_LIBC
#include_next <stdlib.h>
#else
#include "dpusim_libc_inlines.h"
#define __DPUSIM_LIBC_HIDE_stdlib
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_HIDE_stdlib
#include_next <stdlib.h>
#define __DPUSIM_LIBC_SHOW_stdlib
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_SHOW_stdlib
#endif

#endif /* DPUSIM_DPURT_STDLIB_H */
