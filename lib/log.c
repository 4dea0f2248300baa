// SPDX-License-Identifier: MIT
/* libdpusim: one-line messages on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

void dpusim_log(const char *fmt, ...)
{
	char buf[1024];
	size_t n;
	va_list ap;
	int r;

	memcpy(buf, "dpusim: ", 8);
	va_start(ap, fmt);
	r = vsnprintf(buf + 8, sizeof(buf) - 9, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	n = strlen(buf);
	buf[n++] = '\n';
	/* one write, so lines of several threads do not interleave */
	fflush(stderr);
	if (write(STDERR_FILENO, buf, n) < 0) {
		/* nothing better to do */
	}
}

const char *dpusim_strerror(int errnum, char *buf, size_t len)
{
	/* GNU strerror_r (we build with _GNU_SOURCE) */
	return strerror_r(errnum, buf, len);
}
