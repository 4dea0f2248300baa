/* SPDX-License-Identifier: MIT */
/*
 * ctype.h - the C library's <ctype.h> as DPU code sees it.
 *
 * What the DPU runtime's ctype.h (UPMEM SDK, dpu-rt) declares: isalnum,
 * isalpha, isblank, iscntrl, isdigit, isgraph, islower, isprint, ispunct,
 * isspace, isupper, isxdigit, tolower and toupper.  The host's header is
 * included with every other name it declares (isascii, toascii, the _l
 * forms ...) hidden; see stdlib.h here.
 */
#ifndef DPUSIM_DPURT_CTYPE_H
#define DPUSIM_DPURT_CTYPE_H

#ifdef DPUSIM_HOST_LIBC
#include_next <ctype.h>
#else
#include "dpusim_libc_inlines.h"
#define __DPUSIM_LIBC_HIDE_ctype
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_HIDE_ctype
#include_next <ctype.h>
#define __DPUSIM_LIBC_SHOW_ctype
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_SHOW_ctype
#endif

#endif /* DPUSIM_DPURT_CTYPE_H */
