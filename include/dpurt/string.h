/* SPDX-License-Identifier: MIT */
/*
 * string.h - the C library's <string.h> as DPU code sees it.
 *
 * What the DPU runtime's string.h (UPMEM SDK, dpu-rt) declares: strlen,
 * strnlen, memcmp, strcmp, strncmp, memset, memchr, strcat, strncat,
 * strchr, strrchr, memcpy, memmove, strcpy, strncpy, stpcpy, stpncpy,
 * strerror, strspn, strcspn, strpbrk, strstr, strtok_r, strsep, its
 * strlwr, strupr and strrev (not in the host's C library: the runtime has
 * them), and strxfrm and strcoll as macros for strncpy and strcmp.  The
 * host's header is included with every other name it (and the strings.h
 * it includes) declares hidden; see stdlib.h here.
 */
#ifndef DPUSIM_DPURT_STRING_H
#define DPUSIM_DPURT_STRING_H

#ifdef DPUSIM_HOST_LIBC
#include_next <string.h>
#else
#include "dpusim_libc_inlines.h"
#define __DPUSIM_LIBC_HIDE_string
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_HIDE_string
#include_next <string.h>
#define __DPUSIM_LIBC_SHOW_string
#include "dpusim_libc.h"
#undef __DPUSIM_LIBC_SHOW_string

#define strxfrm strncpy
#define strcoll strcmp
#endif

/*
 * The SDK declares these whatever the feature macros; the host's header,
 * only with POSIX's (not under -std=c11 alone).  The same prototypes again
 * are harmless.
 */
size_t strnlen(const char *string, size_t max_len);
char *stpcpy(char *destination, const char *source);
char *stpncpy(char *destination, const char *source, size_t size);
char *strtok_r(char *str, const char *delim, char **saveptr);
char *strsep(char **stringp, const char *delim);

/* The SDK's own (lib/dpurt/string.c): lower- or upper-case (ASCII) in
 * place, reverse in place; each returns string. */
char *strlwr(char *string);
char *strupr(char *string);
char *strrev(char *string);

#endif /* DPUSIM_DPURT_STRING_H */
