// SPDX-License-Identifier: MIT
/* Unit tests of dpu_error_to_string and the dpu_error_t values. */
#include <stdlib.h>
#include <string.h>

#include <dpu.h>

#include "unit.h"

int main(void)
{
	const dpu_error_t last = DPU_ERR_SG_NOT_MRAM_SYMBOL;
	char *strs[64] = { 0 };
	char name[96];
	unsigned int v, w;
	bool ok;
	char *s;

	/* numeric values of UPMEM's dpu_error.h */
	UNIT_CHECK("value DPU_OK", DPU_OK == 0, "%d", (int)DPU_OK);
	UNIT_CHECK("value DPU_ERR_SYSTEM", DPU_ERR_SYSTEM == 2, "%d", (int)DPU_ERR_SYSTEM);
	UNIT_CHECK("value DPU_ERR_ALLOCATION", DPU_ERR_ALLOCATION == 4, "%d", (int)DPU_ERR_ALLOCATION);
	UNIT_CHECK("value DPU_ERR_INVALID_MRAM_ACCESS", DPU_ERR_INVALID_MRAM_ACCESS == 10, "%d",
		   (int)DPU_ERR_INVALID_MRAM_ACCESS);
	UNIT_CHECK("value DPU_ERR_INVALID_PROFILE", DPU_ERR_INVALID_PROFILE == 26, "%d",
		   (int)DPU_ERR_INVALID_PROFILE);
	UNIT_CHECK("value DPU_ERR_UNKNOWN_SYMBOL", DPU_ERR_UNKNOWN_SYMBOL == 27, "%d",
		   (int)DPU_ERR_UNKNOWN_SYMBOL);
	UNIT_CHECK("value DPU_ERR_SG_TOO_MANY_BLOCKS", DPU_ERR_SG_TOO_MANY_BLOCKS == 37, "%d",
		   (int)DPU_ERR_SG_TOO_MANY_BLOCKS);
	UNIT_CHECK("value DPU_ERR_SG_NOT_MRAM_SYMBOL", DPU_ERR_SG_NOT_MRAM_SYMBOL == 40, "%d",
		   (int)DPU_ERR_SG_NOT_MRAM_SYMBOL);
	UNIT_CHECK("value DPU_ERR_ASYNC_JOBS", (unsigned int)DPU_ERR_ASYNC_JOBS == 0x80000000u,
		   "%#x", (unsigned int)DPU_ERR_ASYNC_JOBS);

	/* every value: a non-NULL, non-empty, known string, all distinct */
	ok = true;
	for (v = 0; v <= (unsigned int)last; v++) {
		strs[v] = (char *)dpu_error_to_string((dpu_error_t)v);
		snprintf(name, sizeof(name), "string of value %u", v);
		if (!strs[v] || !strs[v][0]) {
			unit_fail(name, "NULL or empty");
			ok = false;
			continue;
		}
		if (strstr(strs[v], "unknown error")) {
			unit_fail(name, "'%s' for a known value", strs[v]);
			ok = false;
			continue;
		}
		unit_pass(name);
	}
	for (v = 0; ok && v <= (unsigned int)last; v++)
		for (w = v + 1; w <= (unsigned int)last; w++)
			if (strcmp(strs[v], strs[w]) == 0) {
				unit_fail("strings distinct", "%u and %u: '%s'",
					  v, w, strs[v]);
				ok = false;
			}
	if (ok)
		unit_pass("strings distinct");
	UNIT_CHECK("DPU_OK is success", strs[0] && strcmp(strs[0], "success") == 0,
		   "'%s'", strs[0] ? strs[0] : "(null)");
	for (v = 0; v <= (unsigned int)last; v++)
		free(strs[v]);

	/* unknown values */
	s = (char *)dpu_error_to_string((dpu_error_t)(last + 1));
	UNIT_CHECK("unknown value past the last",
		   s && strstr(s, "unknown error") && strstr(s, "41"),
		   "'%s'", s ? s : "(null)");
	free(s);
	s = (char *)dpu_error_to_string((dpu_error_t)12345);
	UNIT_CHECK("unknown value 12345", s && strstr(s, "unknown error (12345)"),
		   "'%s'", s ? s : "(null)");
	free(s);

	/* asynchronous job errors */
	s = (char *)dpu_error_to_string(DPU_ERR_ASYNC_JOBS);
	UNIT_CHECK("DPU_ERR_ASYNC_JOBS alone", s && strstr(s, "asynchronous"),
		   "'%s'", s ? s : "(null)");
	free(s);
	s = (char *)dpu_error_to_string((dpu_error_t)((unsigned int)DPU_ERR_ASYNC_JOBS |
		(3u << DPU_ERROR_ASYNC_JOB_TYPE_SHIFT) | DPU_ERR_SG_LENGTH_MISMATCH));
	UNIT_CHECK("async job with inner error",
		   s && strstr(s, "asynchronous") && strstr(s, "job 3") &&
		   strstr(s, "block lengths"),
		   "'%s'", s ? s : "(null)");
	free(s);
	s = (char *)dpu_error_to_string((dpu_error_t)((unsigned int)DPU_ERR_ASYNC_JOBS | 999u));
	UNIT_CHECK("async job with unknown inner error",
		   s && strstr(s, "unknown error"), "'%s'", s ? s : "(null)");
	free(s);

	/* the string is the caller's: two calls give two buffers */
	{
		const char *a = dpu_error_to_string(DPU_OK);
		const char *b = dpu_error_to_string(DPU_OK);

		UNIT_CHECK("fresh string per call", a && b && a != b, "same pointer");
		free((void *)a);
		free((void *)b);
	}
	return unit_done();
}
