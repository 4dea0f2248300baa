// SPDX-License-Identifier: MIT
/*
 * dpusim — command-line tool for the simulated DPU ranks.
 *
 *   dpusim list [--json]   every rank: index, device, DPUs, MRAM, WRAM, owner,
 *                          how close it is to its limits and the run
 *                          states of its DPUs; then the tag-matching
 *                          device and its counters
 *   dpusim --help | --version
 *
 * Reads sysfs through libudev and never opens a rank, so it works while
 * ranks are owned. Exit status: 0 ok, 1 no ranks / error, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
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
		"                  MRAM and WRAM per DPU, resident memory, owner,\n"
		"                  pinned user pages, the asynchronous queue\n"
		"                  against its limits, the run states of its DPUs,\n"
		"                  e.g. \"running 4, done 60\"), then the tag-matching\n"
		"                  device /dev/dpusim/tm with its counters;\n"
		"                  --json prints a JSON array for scripts: one\n"
		"                  object per rank, then {\"tm\": {...}}\n"
		"  stat [--json] [-w SECONDS] [-c COUNT]\n"
		"                  every counter of every rank (transfers, bytes\n"
		"                  to and from the DPUs, their guest time and their\n"
		"                  time modeled on real UPMEM hardware, blocks,\n"
		"                  launches, faults,\n"
		"                  resident memory, pinned pages, the asynchronous\n"
		"                  queue, the DPU states) and of the tag-matching\n"
		"                  device, cumulative since the module was loaded;\n"
		"                  -w: a sample every SECONDS, with the rates per\n"
		"                  second since the previous one (until Ctrl-C);\n"
		"                  -c: stop after COUNT samples (without -w: one\n"
		"                  a second); --json: one JSON object per sample\n"
		"                  and line: {\"time\", \"ranks\": [...], \"tm\"}\n"
		"  top [-d SECONDS] [-n ITERATIONS]\n"
		"                  live view every SECONDS (default 1, e.g. 0.2):\n"
		"                  per rank bytes/s to and from the DPUs, blocks/s,\n"
		"                  transfers/s, launches/s, faults, owner, DPUs\n"
		"                  running, busiest first; the tag matcher's\n"
		"                  matches/s, messages/s, unexpected/s, bytes/s\n"
		"                  and overruns; q or Ctrl-C quits, -n after\n"
		"                  ITERATIONS frames\n"
		"  trace [-o FILE] [--summary-only] -- CMD [ARGS...]\n"
		"                  run CMD with dpusim's tracepoints enabled, write\n"
		"                  a Chrome trace-event JSON timeline (Perfetto;\n"
		"                  default dpusim-trace.json) and print a summary;\n"
		"                  exit status: CMD's (see dpusim trace --help)\n"
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

/*
 * The run states of a rank's DPUs (sysfs dpu_state: one word per DPU) and
 * its launches and faults counters; false if the kernel has none.
 */
struct run_states {
	unsigned int n[4];	/* idle, running, done, fault */
	long long launches, faults;
};

static const char *const run_state_names[4] = { "idle", "running", "done", "fault" };

static long long read_rank_ll(uint32_t index, const char *attr)
{
	char path[128], buf[64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/dpusim/rank%u/%s", index, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 10);
	fclose(f);
	return v;
}

static bool read_run_states(uint32_t index, struct run_states *rs)
{
	char path[128], word[16];
	FILE *f;
	int i;

	memset(rs, 0, sizeof(*rs));
	snprintf(path, sizeof(path), "/sys/class/dpusim/rank%u/dpu_state", index);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fscanf(f, "%15s", word) == 1)
		for (i = 0; i < 4; i++)
			if (!strcmp(word, run_state_names[i]))
				rs->n[i]++;
	fclose(f);
	rs->launches = read_rank_ll(index, "launches");
	rs->faults = read_rank_ll(index, "faults");
	return true;
}

/* "running 4, done 60": the states present, running first */
static void format_run_states(char *buf, size_t len, const struct run_states *rs)
{
	static const int order[4] = { 1, 2, 3, 0 };
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < 4 && used < len; i++) {
		if (!rs->n[order[i]])
			continue;
		used += snprintf(buf + used, len - used, "%s%s %u", used ? ", " : "",
				 run_state_names[order[i]], rs->n[order[i]]);
	}
}

static void print_text(const struct dpusim_rank_desc *r, uint32_t n)
{
	uint32_t i;

	printf("%-5s %-22s %5s %10s %10s %12s %10s %8s %11s  %-10s  %s\n", "RANK",
	       "DEVICE", "DPUS", "MRAM/DPU", "WRAM/DPU", "MRAM RES", "WRAM RES",
	       "PINNED", "QUEUE", "OWNER", "DPU STATES");
	for (i = 0; i < n; i++) {
		char dpus[16] = "?", mram[32] = "?", wram[32] = "?";
		char res[32] = "?", wres[32] = "?", owner[32] = "?";
		char pinned[32] = "?", queue[32] = "?", states[96] = "?";
		struct run_states rs;

		if (r[i].valid & DPUSIM_ATTR_NR_DPUS)
			snprintf(dpus, sizeof(dpus), "%u", r[i].nr_dpus);
		if (r[i].valid & DPUSIM_ATTR_MRAM_SIZE)
			human_size(mram, sizeof(mram), r[i].mram_size);
		if (r[i].valid & DPUSIM_ATTR_WRAM_SIZE)
			human_size(wram, sizeof(wram), r[i].wram_size);
		if (r[i].valid & DPUSIM_ATTR_MRAM_RESIDENT)
			human_size(res, sizeof(res), r[i].mram_resident_bytes);
		if (r[i].valid & DPUSIM_ATTR_WRAM_RESIDENT)
			human_size(wres, sizeof(wres), r[i].wram_resident_bytes);
		if (r[i].valid & DPUSIM_ATTR_PINNED)
			snprintf(pinned, sizeof(pinned), "%llu",
				 (unsigned long long)r[i].pinned_pages);
		if (r[i].valid & DPUSIM_ATTR_ASYNC)
			snprintf(queue, sizeof(queue), "%llu/%u jobs",
				 (unsigned long long)r[i].async_jobs,
				 DPUSIM_ASYNC_MAX_JOBS);
		if ((r[i].valid & DPUSIM_ATTR_OWNER_PID) && r[i].owner_pid)
			snprintf(owner, sizeof(owner), "pid %u", r[i].owner_pid);
		else if (r[i].valid & DPUSIM_ATTR_IS_OWNED)
			snprintf(owner, sizeof(owner), "%s",
				 r[i].is_owned ? "owned" : "free");
		else if (r[i].valid & DPUSIM_ATTR_OWNER_PID)
			snprintf(owner, sizeof(owner), "free");
		if (read_run_states(r[i].index, &rs))
			format_run_states(states, sizeof(states), &rs);
		printf("%-5u %-22s %5s %10s %10s %12s %10s %8s %11s  %-10s  %s\n",
		       r[i].index, r[i].devnode, dpus, mram, wram, res, wres,
		       pinned, queue, owner, states);
	}
}

/*
 * The module-wide budget of resident simulated memory (parameter
 * mram_budget) against what all ranks hold; nothing if unreadable.
 */
static void print_budget(const struct dpusim_rank_desc *r, uint32_t n)
{
	char used[32], limit[32], buf[64];
	unsigned long long b;
	uint64_t sum = 0;
	uint32_t i;
	FILE *f = fopen("/sys/module/dpusim/parameters/mram_budget", "r");

	if (!f)
		return;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%llu", &b) != 1) {
		fclose(f);
		return;
	}
	fclose(f);
	for (i = 0; i < n; i++)
		sum += r[i].mram_resident_bytes + r[i].wram_resident_bytes;
	human_size(used, sizeof(used), sum);
	human_size(limit, sizeof(limit), b);
	printf("resident memory, all ranks: %s of %s (mram_budget); queue limits per rank: %u jobs, %u blocks, %llu GiB, %u pages\n",
	       used, limit, DPUSIM_ASYNC_MAX_JOBS, DPUSIM_ASYNC_MAX_BLOCKS,
	       (unsigned long long)(DPUSIM_ASYNC_MAX_BYTES >> 30),
	       DPUSIM_ASYNC_MAX_PAGES);
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

/* "tm  /dev/dpusim/tm  contexts=N mrs=N ... overruns=N", as a table row */
static void print_tm_text(const struct dpusim_tm_desc *tm)
{
	unsigned int i;

	printf("%-5s %-22s", "tm", tm->devnode);
	for (i = 0; i < DPUSIM_TM_NR_STATS; i++) {
		if (tm->valid & (1U << i))
			printf(" %s=%llu", dpusim_tm_stat_names[i],
			       (unsigned long long)tm->stats[i]);
		else
			printf(" %s=?", dpusim_tm_stat_names[i]);
	}
	printf("\n");
}

/* The last element of the array: {"tm": {"devnode": ..., counters}} */
static void print_tm_json(const struct dpusim_tm_desc *tm)
{
	unsigned int i;

	printf("{\"tm\": {\"devnode\": ");
	json_string(tm->devnode);
	for (i = 0; i < DPUSIM_TM_NR_STATS; i++) {
		printf(", ");
		json_u64(dpusim_tm_stat_names[i], tm->valid & (1U << i),
			 tm->stats[i], true);
	}
	printf("}}");
}

/* , "dpu_states": {"idle": N, ...}, "launches": N, "faults": N (or nulls) */
static void print_run_states_json(uint32_t index)
{
	struct run_states rs;
	int i;

	if (!read_run_states(index, &rs)) {
		printf(", \"dpu_states\": null, \"launches\": null, \"faults\": null");
		return;
	}
	printf(", \"dpu_states\": {");
	for (i = 0; i < 4; i++)
		printf("%s\"%s\": %u", i ? ", " : "", run_state_names[i], rs.n[i]);
	printf("}, \"launches\": %lld, \"faults\": %lld", rs.launches, rs.faults);
}

static void print_json(const struct dpusim_rank_desc *r, uint32_t n,
		       const struct dpusim_tm_desc *tm)
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
			 r[i].mram_resident_bytes, false);
		json_u64("wram_resident_bytes", v & DPUSIM_ATTR_WRAM_RESIDENT,
			 r[i].wram_resident_bytes, false);
		json_u64("pinned_pages", v & DPUSIM_ATTR_PINNED,
			 r[i].pinned_pages, false);
		printf("\"async_queue\": ");
		if (v & DPUSIM_ATTR_ASYNC)
			printf("{\"jobs\": [%llu, %u], \"blocks\": [%llu, %u], "
			       "\"bytes\": [%llu, %llu], \"pages\": [%llu, %u]}",
			       (unsigned long long)r[i].async_jobs,
			       DPUSIM_ASYNC_MAX_JOBS,
			       (unsigned long long)r[i].async_blocks,
			       DPUSIM_ASYNC_MAX_BLOCKS,
			       (unsigned long long)r[i].async_bytes,
			       (unsigned long long)DPUSIM_ASYNC_MAX_BYTES,
			       (unsigned long long)r[i].async_pages,
			       DPUSIM_ASYNC_MAX_PAGES);
		else
			printf("null");
		print_run_states_json(r[i].index);
		printf("}");
	}
	if (tm) {
		printf("%s\n  ", n ? "," : "");
		print_tm_json(tm);
	}
	printf("%s]\n", n || tm ? "\n" : "");
}

static int cmd_list(int argc, char **argv)
{
	struct dpusim_rank_desc *ranks = NULL;
	struct dpusim_tm_desc tm;
	bool json = false, have_tm = false;
	uint32_t n = 0;
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
	if (dpusim_discover_tm(&tm, &have_tm, err, sizeof(err)) != DPU_OK) {
		fprintf(stderr, "dpusim: %s\n", err);
		free(ranks);
		return 1;
	}
	if (json) {
		print_json(ranks, n, have_tm ? &tm : NULL);
	} else {
		if (n)
			print_text(ranks, n);
		if (have_tm)
			print_tm_text(&tm);
		if (n)
			print_budget(ranks, n);
	}
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
	if (strcmp(cmd, "stat") == 0)
		return cmd_stat(argc - 2, argv + 2);
	if (strcmp(cmd, "top") == 0)
		return cmd_top(argc - 2, argv + 2);
	if (strcmp(cmd, "trace") == 0)
		return cmd_trace(argc - 2, argv + 2);

	fprintf(stderr, "dpusim: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return 2;
}
