// SPDX-License-Identifier: MIT
/*
 * dpusim — command-line tool for the simulated DPU ranks.
 *
 *   dpusim list [--json]   every rank: index, device, DPUs, MRAM, WRAM, owner
 *   dpusim --help | --version
 *
 * Reads sysfs through libudev and never opens a rank, so it works while
 * ranks are owned. Exit status: 0 ok, 1 no ranks / error, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "internal.h"

#include <uapi/dpusim.h>

#ifndef DPUSIM_VERSION
#define DPUSIM_VERSION "0.1.0"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dpusim <command> [options]\n"
		"\n"
		"commands:\n"
		"  list [--json]   list the simulated ranks (index, device, DPUs,\n"
		"                  MRAM and WRAM per DPU, owner); --json prints a\n"
		"                  JSON array for scripts\n"
		"  help            this text\n"
		"\n"
		"options:\n"
		"  -h, --help      this text\n"
		"  -V, --version   print the version\n"
		"\n"
		"Exit status: 0 success, 1 no ranks or an error, 2 bad usage.\n");
}

/* "64 MiB", "65536 B", "1.5 GiB" ... */
static void human_size(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;
	uint64_t whole = v;

	while (whole >= 1024 && (whole % 1024) == 0 && u < 4) {
		whole /= 1024;
		u++;
	}
	if (u == 0 && v >= 1024) {
		double d = (double)v;

		while (d >= 1024 && u < 4) {
			d /= 1024;
			u++;
		}
		snprintf(buf, len, "%.1f %s", d, units[u]);
		return;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)whole, units[u]);
}

static void print_text(const struct dpusim_rank_desc *r, uint32_t n)
{
	uint32_t i;

	printf("%-5s %-22s %5s %10s %10s %12s  %s\n", "RANK", "DEVICE", "DPUS",
	       "MRAM/DPU", "WRAM/DPU", "RESIDENT", "OWNER");
	for (i = 0; i < n; i++) {
		char dpus[16] = "?", mram[32] = "?", wram[32] = "?";
		char res[32] = "?", owner[32] = "?";

		if (r[i].valid & DPUSIM_ATTR_NR_DPUS)
			snprintf(dpus, sizeof(dpus), "%u", r[i].nr_dpus);
		if (r[i].valid & DPUSIM_ATTR_MRAM_SIZE)
			human_size(mram, sizeof(mram), r[i].mram_size);
		if (r[i].valid & DPUSIM_ATTR_WRAM_SIZE)
			human_size(wram, sizeof(wram), r[i].wram_size);
		if (r[i].valid & DPUSIM_ATTR_MRAM_RESIDENT)
			human_size(res, sizeof(res), r[i].mram_resident_bytes);
		if ((r[i].valid & DPUSIM_ATTR_OWNER_PID) && r[i].owner_pid)
			snprintf(owner, sizeof(owner), "pid %u", r[i].owner_pid);
		else if (r[i].valid & DPUSIM_ATTR_IS_OWNED)
			snprintf(owner, sizeof(owner), "%s",
				 r[i].is_owned ? "owned" : "free");
		else if (r[i].valid & DPUSIM_ATTR_OWNER_PID)
			snprintf(owner, sizeof(owner), "free");
		printf("%-5u %-22s %5s %10s %10s %12s  %s\n", r[i].index,
		       r[i].devnode, dpus, mram, wram, res, owner);
	}
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_u64(const char *key, bool valid, uint64_t v, bool last)
{
	printf("\"%s\": ", key);
	if (valid)
		printf("%llu", (unsigned long long)v);
	else
		printf("null");
	printf(last ? "" : ", ");
}

static void print_json(const struct dpusim_rank_desc *r, uint32_t n)
{
	uint32_t i;

	printf("[");
	for (i = 0; i < n; i++) {
		unsigned int v = r[i].valid;

		printf("%s\n  {\"index\": %u, \"devnode\": ", i ? "," : "",
		       r[i].index);
		json_string(r[i].devnode);
		printf(", ");
		json_u64("nr_dpus", v & DPUSIM_ATTR_NR_DPUS, r[i].nr_dpus, false);
		json_u64("mram_size", v & DPUSIM_ATTR_MRAM_SIZE, r[i].mram_size, false);
		json_u64("wram_size", v & DPUSIM_ATTR_WRAM_SIZE, r[i].wram_size, false);
		printf("\"is_owned\": %s, ", !(v & DPUSIM_ATTR_IS_OWNED) ? "null" :
		       r[i].is_owned ? "true" : "false");
		/* owner_pid: null when free (or unknown) */
		json_u64("owner_pid", (v & DPUSIM_ATTR_OWNER_PID) && r[i].owner_pid,
			 r[i].owner_pid, false);
		json_u64("mram_resident_bytes", v & DPUSIM_ATTR_MRAM_RESIDENT,
			 r[i].mram_resident_bytes, true);
		printf("}");
	}
	printf("%s]\n", n ? "\n" : "");
}

static int cmd_list(int argc, char **argv)
{
	struct dpusim_rank_desc *ranks = NULL;
	uint32_t n = 0;
	bool json = false;
	char err[512];
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "-h") == 0 ||
			   strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "dpusim: list: unknown option '%s'\n\n",
				argv[i]);
			usage(stderr);
			return 2;
		}
	}

	if (dpusim_discover(&ranks, &n, err, sizeof(err)) != DPU_OK) {
		fprintf(stderr, "dpusim: %s\n", err);
		return 1;
	}
	if (json)
		print_json(ranks, n);
	else if (n)
		print_text(ranks, n);
	free(ranks);
	if (n == 0) {
		/* --json still printed "[]" for scripts */
		fprintf(stderr, "dpusim: " DPUSIM_NO_RANKS_MSG "\n");
		return 1;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "dpusim: error writing output\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		usage(stderr);
		return 2;
	}
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
		printf("dpusim %s (ABI %d)\n", DPUSIM_VERSION,
		       DPUSIM_ABI_VERSION);
		return 0;
	}
	if (strcmp(cmd, "list") == 0)
		return cmd_list(argc - 2, argv + 2);

	fprintf(stderr, "dpusim: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return 2;
}
