/* SPDX-License-Identifier: MIT */
/*
 * inttypes.h - the C library's <inttypes.h> as DPU code sees it.
 *
 * What the DPU runtime's inttypes.h (UPMEM SDK, dpu-rt) declares: imaxabs
 * and imaxdiv, and the PRI and SCN macros.  The host's header is included
 * with strtoimax, strtoumax, wcstoimax and wcstoumax hidden; see stdlib.h
 * here.
 */
#ifndef DPUSIM_DPURT_INTTYPES_H
#define DPUSIM_DPURT_INTTYPES_H

#ifdef DPUSIM_HOST_LIBC
#include_next <inttypes.h>
#else
#include "dpusim_libc_inlines.h"
#define __DPUSIM_LIBC_HIDE_inttypes
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_HIDE_inttypes
#include_next <inttypes.h>
#define __DPUSIM_LIBC_SHOW_inttypes
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_SHOW_inttypes
#endif

#endif /* DPUSIM_DPURT_INTTYPES_H */
