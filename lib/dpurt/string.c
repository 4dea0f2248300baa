// SPDX-License-Identifier: MIT
/*
 * string.c - the functions the DPU runtime's string.h has and the host's
 * C library has not (UPMEM SDK dpu-rt strlwr.c, strupr.c, strrev.c).
 * Weak: a program may define its own of any of them.
 */
#include <string.h>

__attribute__((weak)) char *strlwr(char *string)
{
	for (char *p = string; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p + ('a' - 'A'));
	return string;
}

__attribute__((weak)) char *strupr(char *string)
{
	for (char *p = string; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - ('a' - 'A'));
	return string;
}

__attribute__((weak)) char *strrev(char *string)
{
	size_t n = strlen(string);

	for (size_t i = 0; i < n / 2; i++) {
		char c = string[i];

		string[i] = string[n - 1 - i];
		string[n - 1 - i] = c;
	}
	return string;
}
