/* SPDX-License-Identifier: MIT */
/*
 * stdio.h - the C library's <stdio.h> as DPU code sees it.
 *
 * What the DPU runtime's stdio.h (UPMEM SDK, dpu-rt) declares: printf,
 * puts and putchar (the host's declarations of these are kept, with their
 * int results where the SDK's return nothing).  The host's header is
 * included with every other name it declares hidden but stdin, stdout and
 * stderr, which it defines as macros of themselves for its own inline
 * functions; see stdlib.h here.
 */
#ifndef DPUSIM_DPURT_STDIO_H
#define DPUSIM_DPURT_STDIO_H

#ifdef DPUSIM_HOST_LIBC
#include_next <stdio.h>
#else
#include "dpusim_libc_inlines.h"
#define __DPUSIM_LIBC_HIDE_stdio
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_HIDE_stdio
#include_next <stdio.h>
#define __DPUSIM_LIBC_SHOW_stdio
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_SHOW_stdio
#endif

#endif /* DPUSIM_DPURT_STDIO_H */
