// SPDX-License-Identifier: MIT
/* libdpusim: small parsing helpers. */
#include <errno.h>
#include <stdint.h>

#include "internal.h"

int dpusim_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < len && s[i]; i++) {
		unsigned int d;

		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		d = (unsigned int)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (i == 0)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
