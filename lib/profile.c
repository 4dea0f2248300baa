// SPDX-License-Identifier: MIT
/* libdpusim: the profile string of dpu_alloc (syntax in profile.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* Longest piece of user text quoted in a message. */
#define QUOTE_MAX 64

enum key_id { KEY_SG_ENABLE, KEY_SG_MAX_BLOCKS, KEY_BACKEND };

static const struct {
	const char *name;
	enum key_id id;
} keys[] = {
	{ "sgXferEnable", KEY_SG_ENABLE },
	{ "sgXferMaxBlocksPerDpu", KEY_SG_MAX_BLOCKS },
	{ "backend", KEY_BACKEND },
};

#define NR_KEYS (sizeof(keys) / sizeof(keys[0]))

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\v' || c == '\f';
}

static bool is_sep(char c)
{
	return c == ',' || c == '&';
}

/* Trim [*b, *e) of blanks. */
static void trim(const char **b, const char **e)
{
	while (*b < *e && is_blank(**b))
		(*b)++;
	while (*e > *b && is_blank((*e)[-1]))
		(*e)--;
}

static int quote_len(const char *b, const char *e)
{
	size_t n = (size_t)(e - b);

	return (int)(n > QUOTE_MAX ? QUOTE_MAX : n);
}

static const char *ellipsis(const char *b, const char *e)
{
	return (size_t)(e - b) > QUOTE_MAX ? "..." : "";
}

static bool span_eq(const char *b, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - b) == n && memcmp(b, lit, n) == 0;
}

static bool span_eq_nocase(const char *b, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - b) == n && strncasecmp(b, lit, n) == 0;
}

static int parse_bool(const char *b, const char *e, bool *out)
{
	if (span_eq_nocase(b, e, "true") || span_eq(b, e, "1")) {
		*out = true;
		return 0;
	}
	if (span_eq_nocase(b, e, "false") || span_eq(b, e, "0")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

dpu_error_t dpusim_profile_parse(const char *s, struct dpusim_profile *out,
				 char *errbuf, size_t errlen)
{
	struct dpusim_profile p = { 0 };
	const char *item = s;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (out)
		*out = p;
	if (!out) {
		set_err(errbuf, errlen, "internal error: no output");
		return DPU_ERR_INTERNAL;
	}
	if (!s)
		return DPU_OK;

	while (*item) {
		const char *end = item, *b, *e, *eq, *kb, *ke, *vb, *ve;
		size_t k;

		while (*end && !is_sep(*end))
			end++;
		b = item;
		e = end;
		item = *end ? end + 1 : end;
		trim(&b, &e);
		if (b == e)
			continue;	/* empty item: ",," or trailing ',' */

		eq = memchr(b, '=', (size_t)(e - b));
		if (!eq) {
			set_err(errbuf, errlen, "'%.*s%s' is not key=value",
				quote_len(b, e), b, ellipsis(b, e));
			return DPU_ERR_INVALID_PROFILE;
		}
		kb = b;
		ke = eq;
		vb = eq + 1;
		ve = e;
		trim(&kb, &ke);
		trim(&vb, &ve);
		if (kb == ke) {
			set_err(errbuf, errlen, "missing key in '%.*s%s'",
				quote_len(b, e), b, ellipsis(b, e));
			return DPU_ERR_INVALID_PROFILE;
		}

		for (k = 0; k < NR_KEYS; k++)
			if (span_eq(kb, ke, keys[k].name))
				break;
		if (k == NR_KEYS) {
			for (k = 0; k < NR_KEYS; k++)
				if (span_eq_nocase(kb, ke, keys[k].name))
					break;
			if (k < NR_KEYS)
				set_err(errbuf, errlen,
					"unknown key '%.*s' (did you mean '%s'?)",
					quote_len(kb, ke), kb, keys[k].name);
			else
				set_err(errbuf, errlen,
					"unknown key '%.*s%s' (known: sgXferEnable, sgXferMaxBlocksPerDpu, backend)",
					quote_len(kb, ke), kb, ellipsis(kb, ke));
			return DPU_ERR_INVALID_PROFILE;
		}
		if (vb == ve) {
			set_err(errbuf, errlen, "missing value for key '%s'",
				keys[k].name);
			return DPU_ERR_INVALID_PROFILE;
		}

		switch (keys[k].id) {
		case KEY_SG_ENABLE:
			if (parse_bool(vb, ve, &p.sg_enabled)) {
				set_err(errbuf, errlen,
					"%s: '%.*s%s' is not a boolean (true, false, 1 or 0)",
					keys[k].name, quote_len(vb, ve), vb,
					ellipsis(vb, ve));
				return DPU_ERR_INVALID_PROFILE;
			}
			break;
		case KEY_SG_MAX_BLOCKS: {
			uint64_t v;
			int r = dpusim_parse_u64(vb, (size_t)(ve - vb),
						 UINT32_MAX, &v);

			if (r == -ERANGE) {
				set_err(errbuf, errlen,
					"%s: '%.*s%s' is out of range (1 to %u)",
					keys[k].name, quote_len(vb, ve), vb,
					ellipsis(vb, ve), UINT32_MAX);
				return DPU_ERR_INVALID_PROFILE;
			}
			if (r) {
				set_err(errbuf, errlen,
					"%s: '%.*s%s' is not a decimal integer",
					keys[k].name, quote_len(vb, ve), vb,
					ellipsis(vb, ve));
				return DPU_ERR_INVALID_PROFILE;
			}
			if (v == 0) {
				set_err(errbuf, errlen,
					"%s: must be at least 1", keys[k].name);
				return DPU_ERR_INVALID_PROFILE;
			}
			p.sg_max_blocks_set = true;
			p.sg_max_blocks_per_dpu = (uint32_t)v;
			break;
		}
		case KEY_BACKEND:
			if (!span_eq(vb, ve, "hw") &&
			    !span_eq(vb, ve, "simulator")) {
				set_err(errbuf, errlen,
					"backend: '%.*s%s' is not supported (hw or simulator, both run on dpusim)",
					quote_len(vb, ve), vb, ellipsis(vb, ve));
				return DPU_ERR_INVALID_PROFILE;
			}
			break;
		}
	}

	if (p.sg_max_blocks_set && !p.sg_enabled) {
		set_err(errbuf, errlen,
			"sgXferMaxBlocksPerDpu needs sgXferEnable=true");
		return DPU_ERR_INVALID_PROFILE;
	}
	*out = p;
	return DPU_OK;
}
