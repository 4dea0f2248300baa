/* SPDX-License-Identifier: MIT */
/*
 * Minimal host unit-test helper: one line per case,
 *   ok - <name>
 *   not ok - <name>: <why>
 * then "N passed, N failed"; unit_done() returns the exit status.
 * One test program per .c file; include this once.
 */
#ifndef DPUSIM_TESTS_UNIT_H
#define DPUSIM_TESTS_UNIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static unsigned int unit_passed, unit_failed;

static void unit_pass(const char *name)
{
	unit_passed++;
	printf("ok - %s\n", name);
	fflush(stdout);
}

static void unit_fail(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void unit_fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	unit_failed++;
	printf("not ok - %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* UNIT_CHECK(name, cond, fmt, ...): pass if cond, else fail with the message. */
#define UNIT_CHECK(name, cond, ...)                                         \
	do {                                                                \
		if (cond)                                                   \
			unit_pass(name);                                    \
		else                                                        \
			unit_fail(name, __VA_ARGS__);                       \
	} while (0)

static int unit_done(void)
{
	printf("%u passed, %u failed\n", unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif /* DPUSIM_TESTS_UNIT_H */
