// SPDX-License-Identifier: MIT
/* Unit tests of the profile-string parser (lib/profile.c). */
#include <stdint.h>
#include <string.h>

#include "profile.h"
#include "unit.h"

#define ERR DPU_ERR_INVALID_PROFILE

struct pcase {
	const char *name;
	const char *in;
	dpu_error_t ret;
	bool sg;		/* expected sg_enabled (if ret == DPU_OK) */
	bool max_set;
	uint32_t max;
	const char *msg;	/* substring of the error message (if error) */
};

static const struct pcase cases[] = {
	/* defaults */
	{ "NULL profile", NULL, DPU_OK, false, false, 0, NULL },
	{ "empty profile", "", DPU_OK, false, false, 0, NULL },
	{ "blank profile", "  \t ", DPU_OK, false, false, 0, NULL },
	{ "only separators", ",,&, ,", DPU_OK, false, false, 0, NULL },

	/* booleans */
	{ "enable true", "sgXferEnable=true", DPU_OK, true, false, 0, NULL },
	{ "enable false", "sgXferEnable=false", DPU_OK, false, false, 0, NULL },
	{ "enable 1", "sgXferEnable=1", DPU_OK, true, false, 0, NULL },
	{ "enable 0", "sgXferEnable=0", DPU_OK, false, false, 0, NULL },
	{ "enable TRUE any case", "sgXferEnable=TRUE", DPU_OK, true, false, 0, NULL },
	{ "enable False any case", "sgXferEnable=False", DPU_OK, false, false, 0, NULL },
	{ "bad bool yes", "sgXferEnable=yes", ERR, 0, 0, 0, "not a boolean" },
	{ "bad bool 2", "sgXferEnable=2", ERR, 0, 0, 0, "not a boolean" },
	{ "bad bool trailing", "sgXferEnable=truex", ERR, 0, 0, 0, "'truex'" },
	{ "bad bool inner space", "sgXferEnable=tr ue", ERR, 0, 0, 0, "not a boolean" },
	{ "missing value", "sgXferEnable=", ERR, 0, 0, 0, "missing value for key 'sgXferEnable'" },
	{ "missing value blank", "sgXferEnable=   ", ERR, 0, 0, 0, "missing value" },

	/* trimming and separators */
	{ "trim around key and value", "  sgXferEnable  =  true  ", DPU_OK, true, false, 0, NULL },
	{ "trim tabs", "\tsgXferEnable\t=\ttrue\t", DPU_OK, true, false, 0, NULL },
	{ "space after comma (UPMEM drops it)", "backend=hw, sgXferEnable=true", DPU_OK, true, false, 0, NULL },
	{ "ampersand separator", "sgXferEnable=true&sgXferMaxBlocksPerDpu=8", DPU_OK, true, true, 8, NULL },
	{ "mixed separators", "backend=hw & sgXferEnable=true , sgXferMaxBlocksPerDpu=3", DPU_OK, true, true, 3, NULL },
	{ "trailing comma", "sgXferEnable=true,", DPU_OK, true, false, 0, NULL },
	{ "leading comma", ",sgXferEnable=true", DPU_OK, true, false, 0, NULL },
	{ "empty items between", "sgXferEnable=true,,,sgXferMaxBlocksPerDpu=2", DPU_OK, true, true, 2, NULL },

	/* later keys win */
	{ "later wins true->false", "sgXferEnable=true,sgXferEnable=false", DPU_OK, false, false, 0, NULL },
	{ "later wins false->true", "sgXferEnable=false,sgXferEnable=true", DPU_OK, true, false, 0, NULL },
	{ "later max wins", "sgXferEnable=true,sgXferMaxBlocksPerDpu=4,sgXferMaxBlocksPerDpu=9", DPU_OK, true, true, 9, NULL },

	/* max blocks */
	{ "max blocks without enable", "sgXferMaxBlocksPerDpu=4", ERR, 0, 0, 0, "needs sgXferEnable=true" },
	{ "max blocks with enable=false", "sgXferEnable=false,sgXferMaxBlocksPerDpu=4", ERR, 0, 0, 0, "needs sgXferEnable=true" },
	{ "max blocks then enable", "sgXferMaxBlocksPerDpu=4,sgXferEnable=true", DPU_OK, true, true, 4, NULL },
	{ "enable then max blocks", "sgXferEnable=true,sgXferMaxBlocksPerDpu=4", DPU_OK, true, true, 4, NULL },
	{ "enable later turned off", "sgXferEnable=true,sgXferMaxBlocksPerDpu=4,sgXferEnable=false", ERR, 0, 0, 0, "needs sgXferEnable=true" },
	{ "max blocks zero", "sgXferEnable=true,sgXferMaxBlocksPerDpu=0", ERR, 0, 0, 0, "at least 1" },
	{ "max blocks 000", "sgXferEnable=true,sgXferMaxBlocksPerDpu=000", ERR, 0, 0, 0, "at least 1" },
	{ "max blocks one", "sgXferEnable=true,sgXferMaxBlocksPerDpu=1", DPU_OK, true, true, 1, NULL },
	{ "max blocks leading zeros", "sgXferEnable=true,sgXferMaxBlocksPerDpu=007", DPU_OK, true, true, 7, NULL },
	{ "max blocks UINT32_MAX", "sgXferEnable=true,sgXferMaxBlocksPerDpu=4294967295", DPU_OK, true, true, UINT32_MAX, NULL },
	{ "max blocks UINT32_MAX+1", "sgXferEnable=true,sgXferMaxBlocksPerDpu=4294967296", ERR, 0, 0, 0, "out of range" },
	{ "max blocks u64 overflow", "sgXferEnable=true,sgXferMaxBlocksPerDpu=18446744073709551616", ERR, 0, 0, 0, "out of range" },
	{ "max blocks huge", "sgXferEnable=true,sgXferMaxBlocksPerDpu=99999999999999999999999999999", ERR, 0, 0, 0, "out of range" },
	{ "max blocks negative", "sgXferEnable=true,sgXferMaxBlocksPerDpu=-1", ERR, 0, 0, 0, "not a decimal integer" },
	{ "max blocks plus sign", "sgXferEnable=true,sgXferMaxBlocksPerDpu=+4", ERR, 0, 0, 0, "not a decimal integer" },
	{ "max blocks hex", "sgXferEnable=true,sgXferMaxBlocksPerDpu=0x10", ERR, 0, 0, 0, "not a decimal integer" },
	{ "max blocks trailing garbage", "sgXferEnable=true,sgXferMaxBlocksPerDpu=12abc", ERR, 0, 0, 0, "'12abc'" },
	{ "max blocks inner space", "sgXferEnable=true,sgXferMaxBlocksPerDpu=1 2", ERR, 0, 0, 0, "not a decimal integer" },
	{ "max blocks float", "sgXferEnable=true,sgXferMaxBlocksPerDpu=1.5", ERR, 0, 0, 0, "not a decimal integer" },
	{ "max blocks missing value", "sgXferEnable=true,sgXferMaxBlocksPerDpu=", ERR, 0, 0, 0, "missing value" },

	/* keys */
	{ "unknown key", "foo=1", ERR, 0, 0, 0, "unknown key 'foo'" },
	{ "unknown key after good", "sgXferEnable=true,foo=bar", ERR, 0, 0, 0, "unknown key 'foo'" },
	{ "wrong case key suggests", "sgxferenable=true", ERR, 0, 0, 0, "did you mean 'sgXferEnable'" },
	{ "no equals", "sgXferEnable", ERR, 0, 0, 0, "not key=value" },
	{ "no equals garbage", "hello world", ERR, 0, 0, 0, "'hello world' is not key=value" },
	{ "empty key", "=true", ERR, 0, 0, 0, "missing key" },
	{ "blank key", "  =true", ERR, 0, 0, 0, "missing key" },
	{ "double equals", "sgXferEnable==true", ERR, 0, 0, 0, "not a boolean" },
	{ "value with equals", "sgXferEnable=true=false", ERR, 0, 0, 0, "not a boolean" },
	{ "backend hw", "backend=hw", DPU_OK, false, false, 0, NULL },
	{ "backend simulator", "backend=simulator", DPU_OK, false, false, 0, NULL },
	{ "backend unknown", "backend=fpga", ERR, 0, 0, 0, "backend: 'fpga'" },
	/* keys of UPMEM's SDK that mean nothing here: accepted, checked */
	{ "prim nrThreadPerPool", "nrThreadPerPool=8", DPU_OK, false, false, 0, NULL },
	{ "prim cycleAccurate", "cycleAccurate=true", DPU_OK, false, false, 0, NULL },
	{ "prim nrJobsPerRank", "nrJobsPerRank=64", DPU_OK, false, false, 0, NULL },
	{ "sdk keys together", "backend=hw,nrThreadsPerRank=4,mramSize=0x4000000,disableSafeChecks=1,rankPath=/dev/dpu_rank0,poolThreshold1Thread=-1",
	  DPU_OK, false, false, 0, NULL },
	{ "sdk int key not an int", "nrJobsPerRank=many", ERR, 0, 0, 0, "nrJobsPerRank: 'many' is not an integer" },
	{ "sdk int key trailing garbage", "wramSize=64k", ERR, 0, 0, 0, "wramSize: '64k' is not an integer" },
	{ "sdk int key bare 0x", "chipId=0x", ERR, 0, 0, 0, "is not an integer" },
	{ "sdk key wrong case", "nrthreadperpool=8", ERR, 0, 0, 0, "did you mean 'nrThreadPerPool'" },
	{ "sdk key typo named", "nrThreadsPerPool=8", ERR, 0, 0, 0, "unknown key 'nrThreadsPerPool'" },
	{ "long unknown key truncated",
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1",
	  ERR, 0, 0, 0, "...' (not a key of UPMEM's SDK" },
};

static void run_case(const struct pcase *c)
{
	struct dpusim_profile p;
	char err[256];
	dpu_error_t r;

	memset(&p, 0xa5, sizeof(p));
	memset(err, 'x', sizeof(err));
	r = dpusim_profile_parse(c->in, &p, err, sizeof(err));
	if (r != c->ret) {
		unit_fail(c->name, "returned %d, expected %d (message '%s')",
			  (int)r, (int)c->ret, err);
		return;
	}
	if (r != DPU_OK) {
		if (!err[0] || strlen(err) >= sizeof(err)) {
			unit_fail(c->name, "no error message");
			return;
		}
		if (c->msg && !strstr(err, c->msg)) {
			unit_fail(c->name, "message '%s' lacks '%s'", err, c->msg);
			return;
		}
		if (p.sg_enabled || p.sg_max_blocks_set) {
			unit_fail(c->name, "output not reset to defaults on error");
			return;
		}
		unit_pass(c->name);
		return;
	}
	if (err[0]) {
		unit_fail(c->name, "message '%s' on success", err);
		return;
	}
	if (p.sg_enabled != c->sg || p.sg_max_blocks_set != c->max_set ||
	    (c->max_set && p.sg_max_blocks_per_dpu != c->max)) {
		unit_fail(c->name, "got sg=%d max_set=%d max=%u, expected sg=%d max_set=%d max=%u",
			  p.sg_enabled, p.sg_max_blocks_set,
			  p.sg_max_blocks_per_dpu, c->sg, c->max_set, c->max);
		return;
	}
	unit_pass(c->name);
}

int main(void)
{
	struct dpusim_profile p;
	char small[8];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);

	/* errbuf may be NULL, or tiny (message truncated, NUL-terminated) */
	UNIT_CHECK("NULL errbuf", dpusim_profile_parse("foo=1", &p, NULL, 0) == ERR,
		   "expected DPU_ERR_INVALID_PROFILE");
	memset(small, 'x', sizeof(small));
	UNIT_CHECK("tiny errbuf truncates",
		   dpusim_profile_parse("foo=1", &p, small, sizeof(small)) == ERR &&
		   strlen(small) == sizeof(small) - 1,
		   "got '%.8s'", small);
	UNIT_CHECK("NULL output", dpusim_profile_parse("", NULL, NULL, 0) != DPU_OK,
		   "expected an error");

	/* dpusimStrictDma: default off, a boolean */
	UNIT_CHECK("dpusimStrictDma defaults to false",
		   dpusim_profile_parse("", &p, NULL, 0) == DPU_OK && !p.strict_dma, "%s", "unexpected result");
	UNIT_CHECK("dpusimStrictDma=true",
		   dpusim_profile_parse("backend=hw,dpusimStrictDma=true", &p, NULL, 0) == DPU_OK &&
		   p.strict_dma, "%s", "unexpected result");
	UNIT_CHECK("dpusimStrictDma=0",
		   dpusim_profile_parse("dpusimStrictDma=0", &p, NULL, 0) == DPU_OK &&
		   !p.strict_dma, "%s", "unexpected result");
	UNIT_CHECK("dpusimStrictDma=yes is not a boolean",
		   dpusim_profile_parse("dpusimStrictDma=yes", &p, NULL, 0) == ERR, "%s", "unexpected result");

	/* dpusimDpuModel: v1A by default, v1B, any case; nothing else */
	UNIT_CHECK("dpusimDpuModel defaults to v1A",
		   dpusim_profile_parse("", &p, NULL, 0) == DPU_OK && !p.dpu_v1b, "%s",
		   "unexpected result");
	UNIT_CHECK("dpusimDpuModel=v1B",
		   dpusim_profile_parse("dpusimDpuModel=v1B", &p, NULL, 0) == DPU_OK && p.dpu_v1b,
		   "%s", "unexpected result");
	UNIT_CHECK("dpusimDpuModel=v1b, then v1A: the later wins",
		   dpusim_profile_parse("dpusimDpuModel=v1b, dpusimDpuModel = V1A", &p, NULL, 0) ==
				   DPU_OK && !p.dpu_v1b,
		   "%s", "unexpected result");
	{
		char err[128] = "";

		UNIT_CHECK("dpusimDpuModel=v2 is refused, naming the models",
			   dpusim_profile_parse("dpusimDpuModel=v2", &p, err, sizeof(err)) == ERR &&
				   strstr(err, "v1A or v1B") && strstr(err, "'v2'") && !p.dpu_v1b,
			   "error '%s'", err);
	}
	return unit_done();
}
