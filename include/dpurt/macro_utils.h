/* SPDX-License-Identifier: MIT */
/*
 * macro_utils.h - token helpers.  glibc's <sys/cdefs.h> already defines
 * __CONCAT (without expanding its arguments), so the dpusim headers use
 * their own __DPURT_CAT; __STR is defined here when nobody did.
 */
#ifndef DPUSYSCORE_MACRO_UTILS_H
#define DPUSYSCORE_MACRO_UTILS_H

#define __DPURT_CAT2(a, b) a##b
#define __DPURT_CAT(a, b) __DPURT_CAT2(a, b)
#define __DPURT_STR2(x) #x
#define __DPURT_STR(x) __DPURT_STR2(x)
#ifndef __STR
#define __STR(x) __DPURT_STR(x)
#endif

#endif /* DPUSYSCORE_MACRO_UTILS_H */
