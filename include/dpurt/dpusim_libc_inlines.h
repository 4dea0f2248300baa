/* SPDX-License-Identifier: MIT */
/*
 * dpusim_libc_inlines.h - no extern inline functions from the host's C
 * library headers in DPU code.
 *
 * With optimisation glibc's headers define some functions inline, and the
 * inline atoi, atol and atof call strtol and strtod, putchar putc: names
 * DPU code does not see (dpusim_libc.h) and may define for itself, when
 * the inline functions would call the program's instead of the C
 * library's.  Out of line, the C library's own run.  Included by
 * stdlib.h, string.h, stdio.h, ctype.h and inttypes.h here before the
 * host's header.
 */
#ifndef DPUSIM_DPURT_LIBC_INLINES_H
#define DPUSIM_DPURT_LIBC_INLINES_H

#if defined(__has_include)
#if __has_include(<features.h>)
#include <features.h>
#endif
#endif
#undef __USE_EXTERN_INLINES

#endif /* DPUSIM_DPURT_LIBC_INLINES_H */
