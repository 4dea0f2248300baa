// SPDX-License-Identifier: MIT
/* libdpusim: the profile string of dpu_alloc (syntax in profile.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* Longest piece of user text quoted in a message. */
#define QUOTE_MAX 64

enum key_id {
	KEY_SG_ENABLE, KEY_SG_MAX_BLOCKS, KEY_BACKEND, KEY_STRICT_DMA, KEY_DPU_MODEL, KEY_IGNORED
};

/* How an ignored key's value is checked (as the SDK reads it). */
enum value_kind {
	VAL_ANY,	/* strings; booleans (the SDK: all but false/0 is true) */
	VAL_INT,	/* strtol/strtoull base 0: decimal, 0x hex, 0 octal */
};

/*
 * Every key UPMEM's SDK (2023.2 .. 2025.1, gen_profile_files.py) knows,
 * and dpusimStrictDma and dpusimDpuModel, dpusim's own.
 * The ones marked KEY_IGNORED tune hardware, simulators or thread pools
 * dpusim does not have; they are accepted and mean nothing here (the
 * module's parameters decide MRAM and WRAM sizes and DPUs per rank).
 */
static const struct {
	const char *name;
	enum key_id id;
	enum value_kind kind;
} keys[] = {
	{ "sgXferEnable", KEY_SG_ENABLE, VAL_ANY },
	{ "sgXferMaxBlocksPerDpu", KEY_SG_MAX_BLOCKS, VAL_ANY },
	{ "backend", KEY_BACKEND, VAL_ANY },
	/* dpusim's own: fault on an MRAM DMA outside the SDK's rules */
	{ "dpusimStrictDma", KEY_STRICT_DMA, VAL_ANY },
	/* dpusim's own: the DPU model of the modeled time */
	{ "dpusimDpuModel", KEY_DPU_MODEL, VAL_ANY },
	/* all backends */
	{ "chipId", KEY_IGNORED, VAL_INT },
	{ "clockDivision", KEY_IGNORED, VAL_INT },
	{ "fckFrequency", KEY_IGNORED, VAL_INT },
	{ "enableProfiling", KEY_IGNORED, VAL_ANY },
	{ "profilingDpuId", KEY_IGNORED, VAL_INT },
	{ "profilingSliceId", KEY_IGNORED, VAL_INT },
	{ "mcountAddress", KEY_IGNORED, VAL_INT },
	{ "retMcountAddress", KEY_IGNORED, VAL_INT },
	{ "threadProfilingAddress", KEY_IGNORED, VAL_INT },
	{ "mramAccessByDpuOnly", KEY_IGNORED, VAL_ANY },
	{ "disabledMask", KEY_IGNORED, VAL_INT },
	{ "disableSafeChecks", KEY_IGNORED, VAL_ANY },
	{ "disableMuxSwitch", KEY_IGNORED, VAL_ANY },
	{ "disableResetOnAlloc", KEY_IGNORED, VAL_ANY },
	{ "cmdsBufferSize", KEY_IGNORED, VAL_INT },
	{ "dispatchOnAllRanks", KEY_IGNORED, VAL_ANY },
	/* high-level API */
	{ "nrThreadsPerRank", KEY_IGNORED, VAL_INT },
	{ "nrJobsPerRank", KEY_IGNORED, VAL_INT },
	/* functional simulator */
	{ "nrDpusPerCi", KEY_IGNORED, VAL_INT },
	{ "iramSize", KEY_IGNORED, VAL_INT },
	{ "mramSize", KEY_IGNORED, VAL_INT },
	{ "wramSize", KEY_IGNORED, VAL_INT },
	{ "doProfiling", KEY_IGNORED, VAL_ANY },
	{ "profileInstruction", KEY_IGNORED, VAL_ANY },
	{ "profileDma", KEY_IGNORED, VAL_ANY },
	{ "profileMemory", KEY_IGNORED, VAL_ANY },
	{ "profileIla", KEY_IGNORED, VAL_ANY },
	/* modelsim */
	{ "modelsimMramFile", KEY_IGNORED, VAL_ANY },
	{ "modelsimWorkDir", KEY_IGNORED, VAL_ANY },
	{ "modelsimExecPath", KEY_IGNORED, VAL_ANY },
	{ "modelsimTclScript", KEY_IGNORED, VAL_ANY },
	{ "modelsimEnableGui", KEY_IGNORED, VAL_ANY },
	{ "modelsimBypassMramSwitch", KEY_IGNORED, VAL_ANY },
	/* FPGA */
	{ "reportFileName", KEY_IGNORED, VAL_ANY },
	{ "analyzerEnabled", KEY_IGNORED, VAL_ANY },
	{ "analyzerFilteringEnabled", KEY_IGNORED, VAL_ANY },
	{ "mramBypassEnabled", KEY_IGNORED, VAL_ANY },
	{ "mramEmulateRefresh", KEY_IGNORED, VAL_INT },
	{ "cycleAccurate", KEY_IGNORED, VAL_ANY },
	/* hardware */
	{ "regionMode", KEY_IGNORED, VAL_ANY },
	{ "rankPath", KEY_IGNORED, VAL_ANY },
	{ "ignoreVersion", KEY_IGNORED, VAL_ANY },
	{ "tryRepairIram", KEY_IGNORED, VAL_ANY },
	{ "tryRepairWram", KEY_IGNORED, VAL_ANY },
	{ "ignoreVpd", KEY_IGNORED, VAL_ANY },
	/* Xeon SP thread pools */
	{ "nrThreadPerPool", KEY_IGNORED, VAL_INT },
	{ "poolThreshold1Thread", KEY_IGNORED, VAL_INT },
	{ "poolThreshold2Threads", KEY_IGNORED, VAL_INT },
	{ "poolThreshold4Threads", KEY_IGNORED, VAL_INT },
	/* backup SPI */
	{ "usbSerial", KEY_IGNORED, VAL_ANY },
	{ "chipSelect", KEY_IGNORED, VAL_INT },
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

/* An integer as strtol(.., 0) reads it whole: [-]digits, 0x.., 0... */
static bool is_c_integer(const char *b, const char *e)
{
	bool hex = false;

	if (b < e && (*b == '-' || *b == '+'))
		b++;
	if (e - b > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) {
		b += 2;
		hex = true;
	}
	if (b == e)
		return false;
	for (; b < e; b++)
		if (!(hex ? isxdigit((unsigned char)*b) : isdigit((unsigned char)*b)))
			return false;
	return true;
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
					"unknown key '%.*s%s' (not a key of UPMEM's SDK; dpusim refuses keys it does not know, see dpu.h)",
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
		case KEY_STRICT_DMA:
			if (parse_bool(vb, ve, keys[k].id == KEY_SG_ENABLE ?
					       &p.sg_enabled : &p.strict_dma)) {
				set_err(errbuf, errlen,
					"%s: '%.*s%s' is not a boolean (true, false, 1 or 0)",
					keys[k].name, quote_len(vb, ve), vb,
					ellipsis(vb, ve));
				return DPU_ERR_INVALID_PROFILE;
			}
			break;
		case KEY_DPU_MODEL:
			if (span_eq_nocase(vb, ve, "v1A")) {
				p.dpu_v1b = false;
			} else if (span_eq_nocase(vb, ve, "v1B")) {
				p.dpu_v1b = true;
			} else {
				set_err(errbuf, errlen, "%s: '%.*s%s' is not a DPU model (v1A or v1B)",
					keys[k].name, quote_len(vb, ve), vb, ellipsis(vb, ve));
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
		case KEY_IGNORED:
			if (keys[k].kind == VAL_INT && !is_c_integer(vb, ve)) {
				set_err(errbuf, errlen,
					"%s: '%.*s%s' is not an integer",
					keys[k].name, quote_len(vb, ve), vb,
					ellipsis(vb, ve));
				return DPU_ERR_INVALID_PROFILE;
			}
			break;
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
