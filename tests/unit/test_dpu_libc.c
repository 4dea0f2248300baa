// SPDX-License-Identifier: MIT
/*
 * Unit tests of the C library surface DPU code sees (include/dpurt/
 * stdlib.h, string.h, stdio.h, ctype.h, inttypes.h): what the DPU
 * runtime's headers (UPMEM SDK dpu-rt) declare, and nothing else of the
 * host's.  Run from the top of the tree after make; compiles, at run time,
 * with tools/dpusim-cc:
 *   - tests/unit/fixtures/dpu_libc_own.c, which defines its own random,
 *     qsort, strtol, strdup, index, fopen, snprintf, isascii and strtoumax
 *     of types the host's declarations contradict: it must compile with
 *     -Wall -Wextra -Werror, run (linked into a host executable) calling
 *     its own, and link as a DPU program with those local, the runtime's
 *     snprintf and strtol the C library's;
 *   - tests/unit/fixtures/dpu_libc_undeclared.c, which calls host-only
 *     functions: -Werror=implicit-function-declaration must refuse each;
 *   - tests/unit/fixtures/dpu_libc_sdk.c, which uses the SDK's whole
 *     surface: it must compile with that flag and run;
 * each under several flag sets (optimisation, _FORTIFY_SOURCE, strict
 * C11).  And include/dpurt/dpusim_libc.h must be what tools/gen-dpurt-libc
 * makes of lib/dpurt/libc.hide.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#define FIX "tests/unit/fixtures/"

static char tmpdir[] = "/tmp/dpusim-libc-XXXXXX";
static char dpurt_a[512];

/* Runs argv with stdout and stderr to file out (if any); its exit status. */
static int run(char *const argv[], const char *out)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out) {
			int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd < 0)
				_exit(126);
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		setenv("LC_ALL", "C", 1);	/* gcc's quotes: 'name' */
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void tmp(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

/* dpusim-cc FLAGS... -c SRC -o OBJ, with up to 6 flags from a string. */
static int dpucc_c(const char *flags, const char *extra, const char *src, const char *obj,
		   const char *log)
{
	char fl[256], *argv[16], *save = NULL;
	int n = 0;

	argv[n++] = "tools/dpusim-cc";
	argv[n++] = "-Wall";
	argv[n++] = "-Wextra";
	argv[n++] = "-Werror";
	snprintf(fl, sizeof(fl), "%s", flags);
	for (char *t = strtok_r(fl, " ", &save); t && n < 12; t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	if (extra)
		argv[n++] = (char *)extra;
	argv[n++] = "-c";
	argv[n++] = (char *)src;
	argv[n++] = "-o";
	argv[n++] = (char *)obj;
	argv[n] = NULL;
	return run(argv, log);
}

/* Links obj with the DPU runtime into a host executable and runs it. */
static int host_run(const char *obj, const char *exe, const char *log)
{
	char *link[] = { "cc", "-no-pie", "-o", (char *)exe, (char *)obj, dpurt_a, NULL };
	char *prog[] = { (char *)exe, NULL };
	int rc = run(link, log);

	return rc ? 1000 + rc : run(prog, log);
}

static const char *const flag_sets[] = {
	"-O0",
	"-O2",
	"-O2 -D_GNU_SOURCE -D_FORTIFY_SOURCE=2 -D_FILE_OFFSET_BITS=64",
	"-std=c11 -O2",
};
#define NSETS (sizeof(flag_sets) / sizeof(flag_sets[0]))

static void test_generated(void)
{
	char log[512], *argv[] = { "tools/gen-dpurt-libc", "--check", NULL };
	int rc;

	tmp(log, sizeof(log), "gen.log");
	rc = run(argv, log);
	UNIT_CHECK("dpusim_libc.h is what tools/gen-dpurt-libc makes of lib/dpurt/libc.hide",
		   rc == 0, "gen-dpurt-libc --check exited %d (see %s)", rc, log);
}

static void test_own(void)
{
	char obj[512], exe[512], log[512], name[160];

	tmp(obj, sizeof(obj), "own.o");
	tmp(exe, sizeof(exe), "own");
	tmp(log, sizeof(log), "own.log");
	for (unsigned int k = 0; k < NSETS; k++) {
		int rc = dpucc_c(flag_sets[k], NULL, FIX "dpu_libc_own.c", obj, log);
		char *msg = rc ? slurp(log) : NULL;

		snprintf(name, sizeof(name),
			 "DPU code defines its own random, qsort, strtol, strdup, index, fopen, snprintf, isascii, "
			 "strtoumax (%s)",
			 flag_sets[k]);
		UNIT_CHECK(name, rc == 0, "dpusim-cc exited %d: %.400s", rc, msg ? msg : "");
		free(msg);
		if (rc)
			continue;
		rc = host_run(obj, exe, log);
		snprintf(name, sizeof(name), "... and runs, calling its own (%s)", flag_sets[k]);
		UNIT_CHECK(name, rc == 0, "exit %d (over 1000: the link failed; see %s)", rc, log);
	}
}

/* The DPU link: the program's own functions local, the runtime's not them. */
static void test_own_link(void)
{
	static const char *const own[] = {
		"random", "qsort", "strtol", "strdup", "index", "fopen", "snprintf", "isascii",
		"strtoumax",
	};
	char exe[512], log[512], nmlog[512], *msg;
	char *cc[] = { "tools/dpusim-cc", "-Wall", "-Wextra", "-Werror", "-O2", "-o", exe,
		       FIX "dpu_libc_own.c", NULL };
	char *nm[] = { "nm", exe, NULL };
	unsigned int bad = 0;
	int rc;

	tmp(exe, sizeof(exe), "own.dpu");
	tmp(log, sizeof(log), "own-link.log");
	tmp(nmlog, sizeof(nmlog), "own-link.nm");
	rc = run(cc, log);
	UNIT_CHECK("dpusim-cc links DPU code with its own C library names", rc == 0,
		   "exited %d (see %s)", rc, log);
	if (rc || run(nm, nmlog) != 0 || !(msg = slurp(nmlog)))
		return;
	for (unsigned int i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		char local[64], global[64];

		snprintf(local, sizeof(local), " t %s\n", own[i]);
		snprintf(global, sizeof(global), " T %s\n", own[i]);
		bad += !strstr(msg, local) || strstr(msg, global);
	}
	UNIT_CHECK("... its own functions are local to it", !bad, "%u not (see %s)", bad, nmlog);
	UNIT_CHECK("... the runtime's snprintf and strtol are the C library's",
		   strstr(msg, " U snprintf@") && strstr(msg, " U strtol@"),
		   "no undefined snprintf@GLIBC / strtol@GLIBC (see %s)", nmlog);
	free(msg);
}

static void test_undeclared(void)
{
	static const char *const names[] = {
		"random", "strdup", "fopen", "snprintf", "qsort", "isascii", "strtol", "malloc",
		"rand", "strtoimax",
	};
	char obj[512], log[512], name[160];

	tmp(obj, sizeof(obj), "undeclared.o");
	tmp(log, sizeof(log), "undeclared.log");
	for (unsigned int k = 0; k < NSETS; k++) {
		int rc = dpucc_c(flag_sets[k], "-Werror=implicit-function-declaration",
				 FIX "dpu_libc_undeclared.c", obj, log);
		char *msg = slurp(log);
		unsigned int missing = 0;
		char first[64] = "";

		for (unsigned int i = 0; msg && i < sizeof(names) / sizeof(names[0]); i++) {
			char want[96];

			snprintf(want, sizeof(want), "implicit declaration of function '%s'", names[i]);
			if (!strstr(msg, want) && !missing++)
				snprintf(first, sizeof(first), "%s", names[i]);
		}
		snprintf(name, sizeof(name),
			 "host-only random, strdup, fopen, snprintf, qsort, isascii, strtol, malloc, rand, "
			 "strtoimax are undeclared (%s)",
			 flag_sets[k]);
		UNIT_CHECK(name, rc != 0 && msg && !missing,
			   "dpusim-cc exited %d, %u names not reported undeclared (first %s)", rc,
			   missing, first);
		free(msg);
	}
}

static void test_sdk_surface(void)
{
	char obj[512], exe[512], log[512], name[160];

	tmp(obj, sizeof(obj), "sdk.o");
	tmp(exe, sizeof(exe), "sdk");
	tmp(log, sizeof(log), "sdk.log");
	for (unsigned int k = 0; k < NSETS; k++) {
		int rc = dpucc_c(flag_sets[k], "-Werror=implicit-function-declaration",
				 FIX "dpu_libc_sdk.c", obj, log);
		char *msg = rc ? slurp(log) : NULL;

		snprintf(name, sizeof(name),
			 "the DPU runtime's stdlib, string, stdio, ctype are all declared (%s)",
			 flag_sets[k]);
		UNIT_CHECK(name, rc == 0, "dpusim-cc exited %d: %.400s", rc, msg ? msg : "");
		free(msg);
		if (rc)
			continue;
		rc = host_run(obj, exe, log);
		snprintf(name, sizeof(name), "... and work, strlwr, strupr, strrev included (%s)",
			 flag_sets[k]);
		UNIT_CHECK(name, rc == 0, "exit %d (see %s)", rc, log);
	}
}

int main(void)
{
	const char *build = getenv("DPUSIM_BUILD");
	char *rm[] = { "rm", "-rf", tmpdir, NULL };

	if (access("tools/dpusim-cc", X_OK) != 0 || !mkdtemp(tmpdir)) {
		UNIT_CHECK("run from the top of the tree", false, "no tools/dpusim-cc here");
		return unit_done();
	}
	snprintf(dpurt_a, sizeof(dpurt_a), "%s/lib/libdpusim-dpurt.a", build ? build : "build");
	test_generated();
	test_own();
	test_own_link();
	test_undeclared();
	test_sdk_surface();
	if (!unit_failed)
		run(rm, NULL);
	else
		printf("# files kept in %s\n", tmpdir);
	return unit_done();
}
