// SPDX-License-Identifier: MIT
/*
 * dpusim stat, dpusim top: the counters of the ranks and of the
 * tag-matching device, once, sampled, or as a live view.
 *
 * Everything is read from sysfs (/sys/class/dpusim/): the ranks are found
 * with dpusim_discover() like `dpusim list`, which also reads their
 * gauges; the other attributes are read from the rank's directory.  No
 * device is ever opened.  The cumulative counters count since the module
 * was loaded; rates are their differences between two samples divided by
 * the time between them (CLOCK_MONOTONIC).  A counter that went down (the
 * module was reloaded) or a rank that was not there in the previous
 * sample has no rate.
 *
 * Signals (SIGINT, SIGTERM; for top also SIGHUP, SIGQUIT, and SIGTSTP and
 * SIGCONT to give the terminal back on Ctrl-Z and take it again on fg)
 * are blocked and read from a signalfd while waiting for the next sample,
 * so the commands stop between two samples with everything restored, and
 * keep no global state.  Single-threaded.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "discovery.h"
#include "internal.h"

/* ---------------------------------------------------------------- fields */

/* The attributes of a rank: the cumulative counters first. */
enum rank_field {
	RF_XFER_IOCTLS,
	RF_XFER_BYTES_TO_DPU,
	RF_XFER_BYTES_FROM_DPU,
	RF_XFER_BLOCKS,
	RF_LAUNCHES,
	RF_FAULTS,
	/* the transfers' time: a text table of its own, after the counts */
	RF_XFER_GUEST_NS_TO_DPU,
	RF_NR_COUNTS = RF_XFER_GUEST_NS_TO_DPU,
	RF_XFER_MODELED_NS_TO_DPU,
	RF_XFER_GUEST_NS_FROM_DPU,
	RF_XFER_MODELED_NS_FROM_DPU,
	RF_NR_CUMULATIVE,
	RF_NR_DPUS = RF_NR_CUMULATIVE,
	RF_IS_OWNED,
	RF_OWNER_PID,
	RF_MRAM_RESIDENT,
	RF_WRAM_RESIDENT,
	RF_STREAM_RESIDENT,
	RF_PINNED_PAGES,
	RF_ASYNC_JOBS,
	RF_ASYNC_BLOCKS,
	RF_ASYNC_BYTES,
	RF_ASYNC_PAGES,
	RF_NR
};

/* sysfs names, also the JSON keys */
static const char *const rank_field_names[RF_NR] = {
	[RF_XFER_IOCTLS] = "xfer_ioctls",
	[RF_XFER_BYTES_TO_DPU] = "xfer_bytes_to_dpu",
	[RF_XFER_BYTES_FROM_DPU] = "xfer_bytes_from_dpu",
	[RF_XFER_BLOCKS] = "xfer_blocks",
	[RF_LAUNCHES] = "launches",
	[RF_FAULTS] = "faults",
	[RF_XFER_GUEST_NS_TO_DPU] = "xfer_guest_ns_to_dpu",
	[RF_XFER_MODELED_NS_TO_DPU] = "xfer_modeled_ns_to_dpu",
	[RF_XFER_GUEST_NS_FROM_DPU] = "xfer_guest_ns_from_dpu",
	[RF_XFER_MODELED_NS_FROM_DPU] = "xfer_modeled_ns_from_dpu",
	[RF_NR_DPUS] = "nr_dpus",
	[RF_IS_OWNED] = "is_owned",
	[RF_OWNER_PID] = "owner_pid",
	[RF_MRAM_RESIDENT] = "mram_resident_bytes",
	[RF_WRAM_RESIDENT] = "wram_resident_bytes",
	[RF_STREAM_RESIDENT] = "stream_resident_bytes",
	[RF_PINNED_PAGES] = "pinned_pages",
	[RF_ASYNC_JOBS] = "async_jobs",
	[RF_ASYNC_BLOCKS] = "async_blocks",
	[RF_ASYNC_BYTES] = "async_bytes",
	[RF_ASYNC_PAGES] = "async_pages",
};

_Static_assert(RF_NR <= 32, "rank_sample.valid is a 32-bit mask");
_Static_assert(DPUSIM_TM_NR_STATS <= 32, "tm_sample.valid is a 32-bit mask");

/* The run states of sysfs dpu_state, in the kernel's order. */
enum { ST_IDLE, ST_RUNNING, ST_DONE, ST_FAULT, ST_UNKNOWN, ST_NR };
static const char *const state_names[ST_NR] = {
	"idle", "running", "done", "fault", "?"
};

/* The tag-matching device's gauges; its other attributes are cumulative. */
static bool tm_is_cumulative(unsigned int i)
{
	const char *n = dpusim_tm_stat_names[i];

	return strcmp(n, "contexts") && strcmp(n, "mrs") &&
	       strcmp(n, "pinned_pages");
}

static int tm_index(const char *name)
{
	unsigned int i;

	for (i = 0; i < DPUSIM_TM_NR_STATS; i++)
		if (!strcmp(dpusim_tm_stat_names[i], name))
			return (int)i;
	return -1;
}

/* --------------------------------------------------------------- samples */

struct rank_sample {
	uint32_t index;
	char devnode[PATH_MAX];
	uint32_t valid;			/* bit f: v[f] was read */
	uint64_t v[RF_NR];
	bool have_states;		/* dpu_state was read */
	uint32_t nr_states;
	unsigned char *states;		/* ST_*, one per DPU */
	uint32_t state_count[ST_NR];
};

struct tm_sample {
	bool present;
	char devnode[PATH_MAX];
	uint32_t valid;			/* bit i: v[i] was read */
	uint64_t v[DPUSIM_TM_NR_STATS];
};

struct sample {
	double wall;			/* CLOCK_REALTIME, seconds */
	struct timespec mono;		/* CLOCK_MONOTONIC */
	struct rank_sample *ranks;	/* sorted by index */
	uint32_t nr_ranks;
	struct tm_sample tm;
};

static void sample_free(struct sample *s)
{
	uint32_t i;

	if (s->ranks)
		for (i = 0; i < s->nr_ranks; i++)
			free(s->ranks[i].states);
	free(s->ranks);
	memset(s, 0, sizeof(*s));
}

static FILE *open_rank_attr(uint32_t index, const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/dpusim/rank%u/%s", index,
		 attr);
	return fopen(path, "r");
}

/* /sys/class/dpusim/rank<index>/<attr> as an unsigned number */
static bool read_rank_u64(uint32_t index, const char *attr, uint64_t *out)
{
	char buf[64];
	size_t len;
	bool ok = false;
	FILE *f = open_rank_attr(index, attr);

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		len = strlen(buf);
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
			len--;
		ok = dpusim_parse_u64(buf, len, UINT64_MAX, out) == 0;
	}
	fclose(f);
	return ok;
}

/*
 * dpu_state: one word per DPU.  Returns 0 (rs->have_states false if the
 * attribute is missing), or -ENOMEM.
 */
static int read_states(struct rank_sample *rs)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint32_t n = 0, ncap = 0;
	char *save = NULL, *w;
	int ret = 0;
	FILE *f = open_rank_attr(rs->index, "dpu_state");

	if (!f)
		return 0;
	errno = 0;
	len = getline(&line, &cap, f);
	fclose(f);
	if (len < 0) {
		ret = errno == ENOMEM ? -ENOMEM : 0;
		free(line);
		return ret;
	}
	for (w = strtok_r(line, " \n", &save); w;
	     w = strtok_r(NULL, " \n", &save)) {
		unsigned int s;

		if (n == ncap) {
			uint32_t c = ncap ? ncap * 2 : 64;
			unsigned char *ns = realloc(rs->states, c);

			if (!ns) {
				ret = -ENOMEM;
				goto out;
			}
			rs->states = ns;
			ncap = c;
		}
		for (s = 0; s < ST_UNKNOWN; s++)
			if (!strcmp(w, state_names[s]))
				break;
		rs->states[n++] = (unsigned char)s;
		rs->state_count[s]++;
	}
	rs->nr_states = n;
	rs->have_states = true;
out:
	free(line);
	return ret;
}

static void set_field(struct rank_sample *rs, enum rank_field f, bool ok,
		      uint64_t v)
{
	if (!ok)
		return;
	rs->v[f] = v;
	rs->valid |= 1U << f;
}

static int read_rank(struct rank_sample *rs, const struct dpusim_rank_desc *d)
{
	unsigned int dv = d->valid;
	uint64_t v;
	int f;

	memset(rs, 0, sizeof(*rs));
	rs->index = d->index;
	snprintf(rs->devnode, sizeof(rs->devnode), "%s", d->devnode);
	/* what dpusim_discover() read */
	set_field(rs, RF_NR_DPUS, dv & DPUSIM_ATTR_NR_DPUS, d->nr_dpus);
	set_field(rs, RF_IS_OWNED, dv & DPUSIM_ATTR_IS_OWNED, d->is_owned);
	set_field(rs, RF_OWNER_PID, dv & DPUSIM_ATTR_OWNER_PID, d->owner_pid);
	set_field(rs, RF_MRAM_RESIDENT, dv & DPUSIM_ATTR_MRAM_RESIDENT,
		  d->mram_resident_bytes);
	set_field(rs, RF_WRAM_RESIDENT, dv & DPUSIM_ATTR_WRAM_RESIDENT,
		  d->wram_resident_bytes);
	set_field(rs, RF_PINNED_PAGES, dv & DPUSIM_ATTR_PINNED, d->pinned_pages);
	set_field(rs, RF_ASYNC_JOBS, dv & DPUSIM_ATTR_ASYNC, d->async_jobs);
	set_field(rs, RF_ASYNC_BLOCKS, dv & DPUSIM_ATTR_ASYNC, d->async_blocks);
	set_field(rs, RF_ASYNC_BYTES, dv & DPUSIM_ATTR_ASYNC, d->async_bytes);
	set_field(rs, RF_ASYNC_PAGES, dv & DPUSIM_ATTR_ASYNC, d->async_pages);
	/* and the rest */
	for (f = 0; f < RF_NR_CUMULATIVE; f++)
		if (read_rank_u64(d->index, rank_field_names[f], &v))
			set_field(rs, f, true, v);
	if (read_rank_u64(d->index, rank_field_names[RF_STREAM_RESIDENT], &v))
		set_field(rs, RF_STREAM_RESIDENT, true, v);
	return read_states(rs);
}

/* Returns 0, or 1 with a message on stderr. */
static int take_sample(struct sample *s)
{
	struct dpusim_rank_desc *descs = NULL;
	struct dpusim_tm_desc tm;
	struct timespec rt;
	char err[512];
	uint32_t n = 0, i;
	bool found = false;

	memset(s, 0, sizeof(*s));
	clock_gettime(CLOCK_MONOTONIC, &s->mono);
	clock_gettime(CLOCK_REALTIME, &rt);
	s->wall = (double)rt.tv_sec + rt.tv_nsec / 1e9;
	if (dpusim_discover(&descs, &n, err, sizeof(err)) != DPU_OK) {
		fprintf(stderr, "dpusim: %s\n", err);
		return 1;
	}
	if (n) {
		s->ranks = calloc(n, sizeof(*s->ranks));
		if (!s->ranks) {
			free(descs);
			fprintf(stderr, "dpusim: out of memory\n");
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		s->nr_ranks = i + 1;	/* so sample_free() frees it */
		if (read_rank(&s->ranks[i], &descs[i])) {
			free(descs);
			sample_free(s);
			fprintf(stderr, "dpusim: out of memory\n");
			return 1;
		}
	}
	free(descs);
	if (dpusim_discover_tm(&tm, &found, err, sizeof(err)) != DPU_OK) {
		sample_free(s);
		fprintf(stderr, "dpusim: %s\n", err);
		return 1;
	}
	if (found) {
		s->tm.present = true;
		snprintf(s->tm.devnode, sizeof(s->tm.devnode), "%s", tm.devnode);
		s->tm.valid = tm.valid;
		memcpy(s->tm.v, tm.stats, sizeof(s->tm.v));
	}
	return 0;
}

static double elapsed(const struct sample *prev, const struct sample *cur)
{
	return (double)(cur->mono.tv_sec - prev->mono.tv_sec) +
	       (cur->mono.tv_nsec - prev->mono.tv_nsec) / 1e9;
}

static const struct rank_sample *find_rank(const struct sample *s,
					   uint32_t index)
{
	uint32_t i;

	if (!s)
		return NULL;
	for (i = 0; i < s->nr_ranks; i++)
		if (s->ranks[i].index == index)
			return &s->ranks[i];
	return NULL;
}

/* The per-second rate of a counter between two samples. */
static bool rate_of(uint64_t prev, uint64_t cur, double dt, double *rate)
{
	if (dt <= 0 || cur < prev)
		return false;
	*rate = (double)(cur - prev) / dt;
	return true;
}

static bool rank_rate(const struct rank_sample *prev,
		      const struct rank_sample *cur, double dt,
		      enum rank_field f, double *rate)
{
	uint32_t bit = 1U << f;

	if (!prev || !(prev->valid & bit) || !(cur->valid & bit))
		return false;
	return rate_of(prev->v[f], cur->v[f], dt, rate);
}

static bool tm_rate(const struct tm_sample *prev, const struct tm_sample *cur,
		    double dt, int i, double *rate)
{
	uint32_t bit;

	if (i < 0 || !prev || !prev->present || !cur->present)
		return false;
	bit = 1U << i;
	if (!(prev->valid & bit) || !(cur->valid & bit))
		return false;
	return rate_of(prev->v[i], cur->v[i], dt, rate);
}

/* ------------------------------------------------------------ formatting */

static void json_string(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(o, "\\%c", c);
		else if (c < 0x20)
			fprintf(o, "\\u%04x", c);
		else
			fputc(c, o);
	}
	fputc('"', o);
}

static void json_rate(FILE *o, bool ok, double r)
{
	if (ok && isfinite(r))
		fprintf(o, "%.3f", r);
	else
		fputs("null", o);
}

/* "12.0 MiB", "512 B": binary units, for rates */
static void human_bytes(char *buf, size_t len, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* "running 4, idle 60": the states present, running first */
static void format_states(char *buf, size_t len, const struct rank_sample *r)
{
	static const int order[ST_NR] = {
		ST_RUNNING, ST_DONE, ST_FAULT, ST_IDLE, ST_UNKNOWN
	};
	size_t used = 0;
	int i;

	snprintf(buf, len, "%s", r->have_states ? "" : "?");
	for (i = 0; i < ST_NR && r->have_states && used < len; i++) {
		uint32_t c = r->state_count[order[i]];

		if (c)
			used += snprintf(buf + used, len - used, "%s%s %u",
					 used ? ", " : "",
					 state_names[order[i]], c);
	}
}

static void format_owner(char *buf, size_t len, const struct rank_sample *r)
{
	if ((r->valid & (1U << RF_OWNER_PID)) && r->v[RF_OWNER_PID])
		snprintf(buf, len, "pid %llu",
			 (unsigned long long)r->v[RF_OWNER_PID]);
	else if (r->valid & (1U << RF_IS_OWNED))
		snprintf(buf, len, "%s", r->v[RF_IS_OWNED] ? "owned" : "free");
	else if (r->valid & (1U << RF_OWNER_PID))
		snprintf(buf, len, "free");
	else
		snprintf(buf, len, "?");
}

static void format_u64(char *buf, size_t len, bool ok, uint64_t v)
{
	if (ok)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "?");
}

/* ------------------------------------------------------------------ stat */

static void stat_json_rank(FILE *o, const struct rank_sample *r,
			   const struct rank_sample *prev, double dt)
{
	uint32_t bit;
	double rate;
	int f;

	fprintf(o, "{\"rank\": %u, \"devnode\": ", r->index);
	json_string(o, r->devnode);
	for (f = 0; f < RF_NR; f++) {
		bit = 1U << f;
		fprintf(o, ", \"%s\": ", rank_field_names[f]);
		if (!(r->valid & bit))
			fputs("null", o);
		else if (f == RF_IS_OWNED)
			fputs(r->v[f] ? "true" : "false", o);
		else if (f == RF_OWNER_PID && !r->v[f])
			fputs("null", o);	/* free, as in dpusim list */
		else
			fprintf(o, "%llu", (unsigned long long)r->v[f]);
	}
	fputs(", \"dpu_state\": ", o);
	if (r->have_states) {
		uint32_t i;

		fputc('[', o);
		for (i = 0; i < r->nr_states; i++)
			fprintf(o, "%s\"%s\"", i ? ", " : "",
				state_names[r->states[i]]);
		fputc(']', o);
	} else {
		fputs("null", o);
	}
	fputs(", \"dpu_states\": ", o);
	if (r->have_states)
		fprintf(o, "{\"idle\": %u, \"running\": %u, \"done\": %u, \"fault\": %u}",
			r->state_count[ST_IDLE], r->state_count[ST_RUNNING],
			r->state_count[ST_DONE], r->state_count[ST_FAULT]);
	else
		fputs("null", o);
	if (prev) {
		fputs(", \"rates\": {", o);
		for (f = 0; f < RF_NR_CUMULATIVE; f++) {
			bool ok = rank_rate(prev, r, dt, f, &rate);

			fprintf(o, "%s\"%s\": ", f ? ", " : "",
				rank_field_names[f]);
			json_rate(o, ok, rate);
		}
		fputc('}', o);
	}
	fputc('}', o);
}

static void stat_json_tm(FILE *o, const struct tm_sample *tm,
			 const struct tm_sample *prev, double dt)
{
	unsigned int i;
	bool first = true;
	double rate;

	if (!tm->present) {
		fputs("null", o);
		return;
	}
	fputs("{\"devnode\": ", o);
	json_string(o, tm->devnode);
	for (i = 0; i < DPUSIM_TM_NR_STATS; i++) {
		fprintf(o, ", \"%s\": ", dpusim_tm_stat_names[i]);
		if (tm->valid & (1U << i))
			fprintf(o, "%llu", (unsigned long long)tm->v[i]);
		else
			fputs("null", o);
	}
	if (prev && prev->present) {
		fputs(", \"rates\": {", o);
		for (i = 0; i < DPUSIM_TM_NR_STATS; i++) {
			bool ok;

			if (!tm_is_cumulative(i))
				continue;
			ok = tm_rate(prev, tm, dt, (int)i, &rate);
			fprintf(o, "%s\"%s\": ", first ? "" : ", ",
				dpusim_tm_stat_names[i]);
			json_rate(o, ok, rate);
			first = false;
		}
		fputc('}', o);
	}
	fputc('}', o);
}

/* One line: {"time": ..., "ranks": [...], "tm": {...} | null} */
static void stat_json(FILE *o, const struct sample *s, const struct sample *prev)
{
	double dt = prev ? elapsed(prev, s) : 0;
	uint32_t i;

	fprintf(o, "{\"time\": %.6f, \"ranks\": [", s->wall);
	for (i = 0; i < s->nr_ranks; i++) {
		const struct rank_sample *r = &s->ranks[i];

		if (i)
			fputs(", ", o);
		stat_json_rank(o, r, find_rank(prev, r->index), dt);
	}
	fputs("], \"tm\": ", o);
	stat_json_tm(o, &s->tm, prev ? &prev->tm : NULL, dt);
	fputs("}\n", o);
}

/* Column headers of the text tables, the counters in rank_field order. */
static const char *const counter_headers[RF_NR_COUNTS] = {
	"XFER_IOCTLS", "BYTES_TO_DPU", "BYTES_FROM_DPU", "XFER_BLOCKS",
	"LAUNCHES", "FAULTS",
};

/* A time counter in ms, "?" if it was not read (an older module). */
static void format_ms(char *buf, size_t len, const struct rank_sample *r,
		      enum rank_field f)
{
	if (r->valid & (1U << f))
		snprintf(buf, len, "%.3f", (double)r->v[f] / 1e6);
	else
		snprintf(buf, len, "?");
}

/*
 * The transfers' guest time (what the calls took here) beside their
 * modeled time (what they would take on real hardware), per rank: each
 * rank has its own channel, so a transfer over several ranks takes the
 * longest of their times, not their sum.
 */
static void stat_text_times(FILE *o, const struct sample *s)
{
	static const enum rank_field cols[] = {
		RF_XFER_GUEST_NS_TO_DPU, RF_XFER_MODELED_NS_TO_DPU,
		RF_XFER_GUEST_NS_FROM_DPU, RF_XFER_MODELED_NS_FROM_DPU,
	};
	char buf[4][32];
	uint32_t i;
	unsigned int k;

	fprintf(o, "\n%-6s %17s %17s %19s %19s\n", "RANK", "TO_DPU_GUEST_MS",
		"TO_DPU_MODELED_MS", "FROM_DPU_GUEST_MS", "FROM_DPU_MODELED_MS");
	for (i = 0; i < s->nr_ranks; i++) {
		const struct rank_sample *r = &s->ranks[i];

		for (k = 0; k < 4; k++)
			format_ms(buf[k], sizeof(buf[k]), r, cols[k]);
		fprintf(o, "%-6u %17s %17s %19s %19s\n", r->index, buf[0],
			buf[1], buf[2], buf[3]);
	}
}

static void stat_text(FILE *o, const struct sample *s,
		      const struct sample *prev, unsigned long long nr)
{
	double dt = prev ? elapsed(prev, s) : 0, rate;
	char when[64] = "?", buf[64];
	struct tm lt;
	time_t t = (time_t)s->wall;
	uint32_t i;
	int f;

	if (localtime_r(&t, &lt))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &lt);
	fprintf(o, "dpusim stat: sample %llu at %s", nr, when);
	if (prev)
		fprintf(o, ", rates per second over the last %.2f s", dt);
	fputs("\n", o);

	if (s->nr_ranks) {
		/* the cumulative counters, with their rates under them */
		fprintf(o, "%-6s", "RANK");
		for (f = 0; f < RF_NR_COUNTS; f++)
			fprintf(o, " %15s", counter_headers[f]);
		fputs("\n", o);
		for (i = 0; i < s->nr_ranks; i++) {
			const struct rank_sample *r = &s->ranks[i];
			const struct rank_sample *p = find_rank(prev, r->index);

			fprintf(o, "%-6u", r->index);
			for (f = 0; f < RF_NR_COUNTS; f++) {
				format_u64(buf, sizeof(buf),
					   r->valid & (1U << f), r->v[f]);
				fprintf(o, " %15s", buf);
			}
			fputs("\n", o);
			if (!prev)
				continue;
			fprintf(o, "%-6s", "  /s");
			for (f = 0; f < RF_NR_COUNTS; f++) {
				if (rank_rate(p, r, dt, f, &rate))
					snprintf(buf, sizeof(buf), "%.1f", rate);
				else
					snprintf(buf, sizeof(buf), "-");
				fprintf(o, " %15s", buf);
			}
			fputs("\n", o);
		}

		stat_text_times(o, s);

		/* the gauges */
		fprintf(o, "\n%-6s %-18s %5s %-11s %12s %10s %12s %7s %22s  %s\n",
			"RANK", "DEVICE", "DPUS", "OWNER", "MRAM_RES", "WRAM_RES",
			"STREAM_RES", "PINNED", "ASYNC JOBS/BLK/B/PAGES",
			"DPU STATES");
		for (i = 0; i < s->nr_ranks; i++) {
			const struct rank_sample *r = &s->ranks[i];
			char dpus[24], owner[32], mres[24], wres[24], sres[24];
			char pinned[24], async[96], states[128];

			format_u64(dpus, sizeof(dpus),
				   r->valid & (1U << RF_NR_DPUS), r->v[RF_NR_DPUS]);
			format_owner(owner, sizeof(owner), r);
			format_u64(mres, sizeof(mres),
				   r->valid & (1U << RF_MRAM_RESIDENT),
				   r->v[RF_MRAM_RESIDENT]);
			format_u64(wres, sizeof(wres),
				   r->valid & (1U << RF_WRAM_RESIDENT),
				   r->v[RF_WRAM_RESIDENT]);
			format_u64(sres, sizeof(sres),
				   r->valid & (1U << RF_STREAM_RESIDENT),
				   r->v[RF_STREAM_RESIDENT]);
			format_u64(pinned, sizeof(pinned),
				   r->valid & (1U << RF_PINNED_PAGES),
				   r->v[RF_PINNED_PAGES]);
			if (r->valid & (1U << RF_ASYNC_JOBS))
				snprintf(async, sizeof(async), "%llu/%llu/%llu/%llu",
					 (unsigned long long)r->v[RF_ASYNC_JOBS],
					 (unsigned long long)r->v[RF_ASYNC_BLOCKS],
					 (unsigned long long)r->v[RF_ASYNC_BYTES],
					 (unsigned long long)r->v[RF_ASYNC_PAGES]);
			else
				snprintf(async, sizeof(async), "?");
			format_states(states, sizeof(states), r);
			fprintf(o, "%-6u %-18s %5s %-11s %12s %10s %12s %7s %22s  %s\n",
				r->index, r->devnode, dpus, owner, mres, wres,
				sres, pinned, async, states);
		}
	}

	if (s->tm.present) {
		const struct tm_sample *tm = &s->tm;
		const struct tm_sample *ptm = prev ? &prev->tm : NULL;
		unsigned int k;

		fprintf(o, "\ntm %s:", tm->devnode);
		for (k = 0; k < DPUSIM_TM_NR_STATS; k++) {
			if (tm_is_cumulative(k))
				continue;
			format_u64(buf, sizeof(buf), tm->valid & (1U << k),
				   tm->v[k]);
			fprintf(o, " %s %s", dpusim_tm_stat_names[k], buf);
		}
		fprintf(o, "\n%-6s", "");
		for (k = 0; k < DPUSIM_TM_NR_STATS; k++)
			if (tm_is_cumulative(k))
				fprintf(o, " %11s", dpusim_tm_stat_names[k]);
		fprintf(o, "\n%-6s", "tm");
		for (k = 0; k < DPUSIM_TM_NR_STATS; k++) {
			if (!tm_is_cumulative(k))
				continue;
			format_u64(buf, sizeof(buf), tm->valid & (1U << k),
				   tm->v[k]);
			fprintf(o, " %11s", buf);
		}
		if (prev) {
			fprintf(o, "\n%-6s", "  /s");
			for (k = 0; k < DPUSIM_TM_NR_STATS; k++) {
				if (!tm_is_cumulative(k))
					continue;
				if (tm_rate(ptm, tm, dt, (int)k, &rate))
					snprintf(buf, sizeof(buf), "%.1f", rate);
				else
					snprintf(buf, sizeof(buf), "-");
				fprintf(o, " %11s", buf);
			}
		}
		fputs("\n", o);
	} else {
		fputs("\ntm: no tag-matching device\n", o);
	}
}

/* ------------------------------------------------------- waiting, signals */

struct waiter {
	int sfd;		/* signalfd of the blocked signals, or -1 */
	sigset_t old_mask;	/* to restore if the signalfd fails */
	int in_fd;		/* stdin while it is polled for keys, else -1 */
	int signo;		/* after WAIT_SIGNAL: which one */
};

enum wait_result { WAIT_TIMEOUT, WAIT_SIGNAL, WAIT_QUIT, WAIT_ERROR };

/*
 * Block @sigs (those not ignored: a command started with SIGINT ignored,
 * as in the background of a script, keeps ignoring it) and read them from
 * a signalfd.  Returns 0, or 1 with a message.
 */
static int waiter_init(struct waiter *w, const int *sigs, unsigned int n,
		       int in_fd)
{
	struct sigaction sa;
	sigset_t set;
	unsigned int i;

	w->sfd = -1;
	w->in_fd = in_fd;
	w->signo = 0;
	sigemptyset(&set);
	for (i = 0; i < n; i++)
		if (sigaction(sigs[i], NULL, &sa) == 0 &&
		    sa.sa_handler != SIG_IGN)
			sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, &w->old_mask)) {
		fprintf(stderr, "dpusim: sigprocmask: %s\n", strerror(errno));
		return 1;
	}
	w->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (w->sfd < 0) {
		fprintf(stderr, "dpusim: signalfd: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &w->old_mask, NULL);
		return 1;
	}
	return 0;
}

/* Pending signals stay pending: the process exits right after this. */
static void waiter_fini(struct waiter *w)
{
	if (w->sfd >= 0)
		close(w->sfd);
	w->sfd = -1;
}

static void timespec_add(struct timespec *t, double seconds)
{
	time_t whole = (time_t)seconds;		/* > 0: truncates */
	long ns = (long)((seconds - (double)whole) * 1e9);

	t->tv_sec += whole;
	t->tv_nsec += ns;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static int timespec_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	if (a->tv_nsec != b->tv_nsec)
		return a->tv_nsec < b->tv_nsec ? -1 : 1;
	return 0;
}

/*
 * Wait until @deadline (CLOCK_MONOTONIC), a signal, or a q/Q key on
 * w->in_fd.  Signals and keys are looked at even when the deadline has
 * passed already (samples slower than the interval), so that they are
 * never starved.  At end of file (or a read error) on the input it stops
 * polling it, so that an input at EOF, always readable, cannot make this a
 * busy loop.
 */
static enum wait_result wait_until(struct waiter *w,
				   const struct timespec *deadline)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = w->sfd, .events = POLLIN },
			{ .fd = w->in_fd, .events = POLLIN },
		};
		struct timespec now, left = { 0, 0 };
		int r;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timespec_cmp(&now, deadline) < 0) {
			left.tv_sec = deadline->tv_sec - now.tv_sec;
			left.tv_nsec = deadline->tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_sec--;
				left.tv_nsec += 1000000000L;
			}
		}
		/* a negative fd (stdin at EOF, or not polled) is ignored */
		r = ppoll(pfd, 2, &left, NULL);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "dpusim: poll: %s\n", strerror(errno));
			return WAIT_ERROR;
		}
		if (r > 0 && pfd[0].revents) {
			struct signalfd_siginfo si;
			ssize_t n = read(w->sfd, &si, sizeof(si));

			if (n == (ssize_t)sizeof(si)) {
				w->signo = (int)si.ssi_signo;
				return WAIT_SIGNAL;
			}
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				fprintf(stderr, "dpusim: reading signals: %s\n",
					strerror(errno));
				return WAIT_ERROR;
			}
		}
		if (r > 0 && w->in_fd >= 0 && pfd[1].revents) {
			char keys[256];
			ssize_t n = read(w->in_fd, keys, sizeof(keys));

			if (n > 0 && (memchr(keys, 'q', (size_t)n) ||
				      memchr(keys, 'Q', (size_t)n)))
				return WAIT_QUIT;
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				w->in_fd = -1;	/* EOF or gone: stop polling */
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timespec_cmp(&now, deadline) >= 0)
			return WAIT_TIMEOUT;
	}
}

/* ----------------------------------------------------------- option parsing */

/* A positive number of seconds, fractions allowed ("0.2"). */
static bool parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0 || v > 1e6)
		return false;
	*out = v;
	return true;
}

static bool parse_count(const char *s, unsigned long long *out)
{
	uint64_t v;

	if (!s || dpusim_parse_u64(s, strlen(s), UINT64_MAX, &v) || v == 0)
		return false;
	*out = v;
	return true;
}

/*
 * An option with a value, "-w 2" or "-w2": the value, or NULL (and *i
 * unchanged) if @arg is not @opt.  *missing is set when the value is not
 * there.
 */
static const char *opt_value(int argc, char **argv, int *i, const char *opt,
			     bool *missing)
{
	const char *arg = argv[*i];
	size_t len = strlen(opt);

	*missing = false;
	if (strncmp(arg, opt, len))
		return NULL;
	if (arg[len])
		return arg + len;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

static void stat_usage(FILE *f)
{
	fprintf(f,
		"usage: dpusim stat [--json] [-w SECONDS] [-c COUNT]\n"
		"       dpusim top [-d SECONDS] [-n ITERATIONS]\n"
		"(dpusim --help for details)\n");
}

static int usage_error(const char *cmd, const char *what, const char *arg)
{
	fprintf(stderr, "dpusim: %s: %s '%s'\n", cmd, what, arg);
	stat_usage(stderr);
	return 2;
}

/* ------------------------------------------------------------- cmd_stat */

static int write_out(FILE *o)
{
	if (fflush(o) != 0 || ferror(o)) {
		fprintf(stderr, "dpusim: error writing output: %s\n",
			strerror(errno));
		return 1;
	}
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	struct sample prev = { 0 }, cur = { 0 };
	unsigned long long count = 1, nr;
	double interval = 1;
	bool json = false, watch = false, have_count = false, have_prev = false;
	struct timespec deadline;
	struct waiter w;
	int i, ret = 0;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *val;
		bool missing;

		if (!strcmp(arg, "--json")) {
			json = true;
		} else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			stat_usage(stdout);
			return 0;
		} else if ((val = opt_value(argc, argv, &i, "-w", &missing)) ||
			   missing) {
			if (missing)
				return usage_error("stat", "missing value of", arg);
			if (!parse_seconds(val, &interval))
				return usage_error("stat", "bad interval (seconds > 0)", val);
			watch = true;
		} else if ((val = opt_value(argc, argv, &i, "-c", &missing)) ||
			   missing) {
			if (missing)
				return usage_error("stat", "missing value of", arg);
			if (!parse_count(val, &count))
				return usage_error("stat", "bad count (an integer > 0)", val);
			have_count = true;
		} else {
			return usage_error("stat", "unknown option", arg);
		}
	}
	if (watch && !have_count)
		count = 0;		/* forever */

	if (waiter_init(&w, sigs, sizeof(sigs) / sizeof(sigs[0]), -1))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	for (nr = 1; count == 0 || nr <= count; nr++) {
		enum wait_result wr;
		struct timespec now;

		if (take_sample(&cur)) {
			ret = 1;
			break;
		}
		if (nr == 1 && !cur.nr_ranks && !cur.tm.present) {
			fprintf(stderr, "dpusim: " DPUSIM_NO_RANKS_MSG "\n");
			ret = 1;
			break;
		}
		if (json)
			stat_json(stdout, &cur, have_prev ? &prev : NULL);
		else
			stat_text(stdout, &cur, have_prev ? &prev : NULL, nr);
		if (!json && (count == 0 || nr < count))
			putchar('\n');
		if (write_out(stdout)) {
			ret = 1;
			break;
		}
		sample_free(&prev);
		prev = cur;
		memset(&cur, 0, sizeof(cur));
		have_prev = true;
		if (count && nr == count)
			break;
		timespec_add(&deadline, interval);
		/* late (a slow sample, a stopped process): no catching up */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timespec_cmp(&deadline, &now) < 0)
			deadline = now;
		wr = wait_until(&w, &deadline);
		if (wr == WAIT_SIGNAL)
			break;
		if (wr == WAIT_ERROR) {
			ret = 1;
			break;
		}
	}
	sample_free(&prev);
	sample_free(&cur);
	waiter_fini(&w);
	return ret;
}

/* -------------------------------------------------------------- cmd_top */

struct top_row {
	const struct rank_sample *r, *p;
	double to, from, blocks, ioctls, launches;	/* per second */
	bool have_rates;
	double total;					/* to + from */
};

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->r->index < y->r->index ? -1 : x->r->index > y->r->index;
}

static void rate_cell(char *buf, size_t len, bool ok, double v, bool bytes)
{
	if (!ok)
		snprintf(buf, len, "-");
	else if (bytes)
		human_bytes(buf, len, v);
	else
		snprintf(buf, len, "%.1f", v);
}

/*
 * One frame into @o.  @eol ends each line: "\033[K\n" on a terminal (clear
 * what the previous frame left on the line), else "\n".
 */
static int top_frame(FILE *o, const struct sample *s, const struct sample *prev,
		     double delay, unsigned long long frame, bool keys,
		     const char *eol)
{
	double dt = prev ? elapsed(prev, s) : 0;
	struct top_row *rows = NULL;
	char when[32] = "?";
	struct tm lt;
	time_t t = (time_t)s->wall;
	uint32_t i;

	if (s->nr_ranks) {
		rows = calloc(s->nr_ranks, sizeof(*rows));
		if (!rows) {
			fprintf(stderr, "dpusim: out of memory\n");
			return 1;
		}
	}
	for (i = 0; i < s->nr_ranks; i++) {
		struct top_row *row = &rows[i];
		bool ok;

		row->r = &s->ranks[i];
		row->p = find_rank(prev, row->r->index);
		ok = rank_rate(row->p, row->r, dt, RF_XFER_BYTES_TO_DPU, &row->to);
		ok &= rank_rate(row->p, row->r, dt, RF_XFER_BYTES_FROM_DPU, &row->from);
		ok &= rank_rate(row->p, row->r, dt, RF_XFER_BLOCKS, &row->blocks);
		ok &= rank_rate(row->p, row->r, dt, RF_XFER_IOCTLS, &row->ioctls);
		ok &= rank_rate(row->p, row->r, dt, RF_LAUNCHES, &row->launches);
		row->have_rates = ok;
		row->total = ok ? row->to + row->from : 0;
	}
	if (s->nr_ranks)
		qsort(rows, s->nr_ranks, sizeof(*rows), cmp_rows);

	if (localtime_r(&t, &lt))
		strftime(when, sizeof(when), "%H:%M:%S", &lt);
	fprintf(o, "dpusim top - %s, every %g s, frame %llu%s%s", when, delay,
		frame, keys ? ", q to quit" : "", eol);
	fprintf(o, "%s", eol);
	fprintf(o, "%5s %-11s %9s %12s %12s %10s %9s %10s %14s%s", "RANK",
		"OWNER", "RUNNING", "TO DPU/s", "FROM DPU/s", "BLOCKS/s",
		"IOCTLS/s", "LAUNCHES/s", "FAULTS (NEW)", eol);
	for (i = 0; i < s->nr_ranks; i++) {
		const struct top_row *row = &rows[i];
		const struct rank_sample *r = row->r;
		char owner[32], running[32], to[24], from[24], blocks[24];
		char ioctls[24], launches[24], faults[48];

		format_owner(owner, sizeof(owner), r);
		if (r->have_states)
			snprintf(running, sizeof(running), "%u/%u",
				 r->state_count[ST_RUNNING], r->nr_states);
		else
			snprintf(running, sizeof(running), "?");
		rate_cell(to, sizeof(to), row->have_rates, row->to, true);
		rate_cell(from, sizeof(from), row->have_rates, row->from, true);
		rate_cell(blocks, sizeof(blocks), row->have_rates, row->blocks, false);
		rate_cell(ioctls, sizeof(ioctls), row->have_rates, row->ioctls, false);
		rate_cell(launches, sizeof(launches), row->have_rates,
			  row->launches, false);
		if (!(r->valid & (1U << RF_FAULTS)))
			snprintf(faults, sizeof(faults), "?");
		else if (row->p && (row->p->valid & (1U << RF_FAULTS)) &&
			 r->v[RF_FAULTS] >= row->p->v[RF_FAULTS])
			snprintf(faults, sizeof(faults), "%llu (+%llu)",
				 (unsigned long long)r->v[RF_FAULTS],
				 (unsigned long long)(r->v[RF_FAULTS] -
						      row->p->v[RF_FAULTS]));
		else
			snprintf(faults, sizeof(faults), "%llu",
				 (unsigned long long)r->v[RF_FAULTS]);
		fprintf(o, "%5u %-11s %9s %12s %12s %10s %9s %10s %14s%s",
			r->index, owner, running, to, from, blocks, ioctls,
			launches, faults, eol);
	}
	if (!s->nr_ranks)
		fprintf(o, "no ranks%s", eol);
	fprintf(o, "%s", eol);
	if (s->tm.present) {
		static const char *const names[] = {
			"matches", "messages", "unexpected", "bytes",
		};
		const struct tm_sample *ptm = prev ? &prev->tm : NULL;
		int ov = tm_index("overruns");
		unsigned int k;

		fprintf(o, "tm:");
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			char cell[24];
			double rate = 0;
			bool ok = tm_rate(ptm, &s->tm, dt, tm_index(names[k]),
					  &rate);

			rate_cell(cell, sizeof(cell), ok, rate,
				  !strcmp(names[k], "bytes"));
			fprintf(o, " %s/s %s%s", names[k], cell,
				k + 1 < sizeof(names) / sizeof(names[0]) ? "," : "");
		}
		if (ov >= 0 && (s->tm.valid & (1U << ov))) {
			fprintf(o, ", overruns %llu",
				(unsigned long long)s->tm.v[ov]);
			if (ptm && ptm->present && (ptm->valid & (1U << ov)) &&
			    s->tm.v[ov] >= ptm->v[ov])
				fprintf(o, " (+%llu)", (unsigned long long)
					(s->tm.v[ov] - ptm->v[ov]));
		} else {
			fprintf(o, ", overruns ?");
		}
		fprintf(o, "%s", eol);
	} else {
		fprintf(o, "tm: no tag-matching device%s", eol);
	}
	free(rows);
	return 0;
}

/*
 * The terminal while top runs: stdin (if a terminal) without line editing
 * and echo, so that q works without Enter (ISIG kept: Ctrl-C and Ctrl-Z
 * still send signals); stdout (if a terminal) redrawn in place with the
 * cursor hidden.  top_leave() undoes both, on every way out and before
 * stopping on Ctrl-Z; top_enter() (again after SIGCONT) redoes them.
 */
struct top_term {
	bool tty_in;		/* stdin is a terminal: saved, raw are set */
	struct termios saved, raw;
	bool raw_on;		/* raw applied: restore saved */
	bool ansi;		/* stdout is a terminal: escapes */
	bool hidden;		/* cursor hidden: show it again */
	char *last;		/* the last frame drawn, to redraw it */
	size_t last_len;
};

static void top_init(struct top_term *tt)
{
	memset(tt, 0, sizeof(*tt));
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tt->saved) == 0) {
		tt->tty_in = true;
		tt->raw = tt->saved;
		tt->raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		tt->raw.c_cc[VMIN] = 1;
		tt->raw.c_cc[VTIME] = 0;
	}
	tt->ansi = isatty(STDOUT_FILENO);
}

static void top_enter(struct top_term *tt)
{
	if (tt->tty_in && tcsetattr(STDIN_FILENO, TCSANOW, &tt->raw) == 0)
		tt->raw_on = true;
	if (tt->ansi) {
		fputs("\033[?25l\033[H\033[2J", stdout);	/* no cursor, clear */
		tt->hidden = true;
		fflush(stdout);
	}
}

static void top_leave(struct top_term *tt)
{
	if (tt->raw_on) {
		tcsetattr(STDIN_FILENO, TCSANOW, &tt->saved);
		tt->raw_on = false;
	}
	if (tt->hidden) {
		fputs("\033[?25h", stdout);	/* the cursor back */
		fflush(stdout);
		tt->hidden = false;
	}
}

/* The last frame again, on a cleared screen (after fg). */
static void top_redraw(struct top_term *tt)
{
	if (!tt->ansi || !tt->last)
		return;
	fwrite(tt->last, 1, tt->last_len, stdout);
	fflush(stdout);
}

/*
 * Ctrl-Z (SIGTSTP, read from the signalfd): the terminal as it was, then
 * the default action of SIGTSTP, which stops the process unless its
 * process group is orphaned (as the kernel would have done); then, once
 * continued, the terminal set up and the frame drawn again.
 */
static void top_suspend(struct top_term *tt)
{
	sigset_t tstp;

	top_leave(tt);
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	raise(SIGTSTP);				/* pending: it is blocked */
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);	/* stops here */
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	top_enter(tt);
	top_redraw(tt);
}

/* Build the frame in memory, then one write: no flicker. */
static int top_draw(struct top_term *tt, const struct sample *s,
		    const struct sample *prev, double delay,
		    unsigned long long frame, bool keys, bool *epipe)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	int ret;

	if (!o) {
		fprintf(stderr, "dpusim: out of memory\n");
		return 1;
	}
	if (tt->ansi)
		fputs("\033[H", o);		/* home, then overwrite */
	else if (frame > 1)
		fputs("\n", o);			/* frames apart by a blank line */
	ret = top_frame(o, s, prev, delay, frame, keys,
			tt->ansi ? "\033[K\n" : "\n");
	if (tt->ansi)
		fputs("\033[J", o);		/* and clear what is below */
	if (fclose(o) != 0 && !ret) {
		fprintf(stderr, "dpusim: out of memory\n");
		ret = 1;
	}
	if (!ret && (fwrite(buf, 1, len, stdout) != len || fflush(stdout))) {
		if (errno == EPIPE) {
			*epipe = true;
		} else {
			fprintf(stderr, "dpusim: error writing output: %s\n",
				strerror(errno));
		}
		ret = 1;
	}
	if (!ret && tt->ansi) {
		/* kept for top_redraw() after fg */
		free(tt->last);
		tt->last = buf;
		tt->last_len = len;
		buf = NULL;
	}
	free(buf);
	return ret;
}

int cmd_top(int argc, char **argv)
{
	/* SIGPIPE ignored: a closed output ends the loop with EPIPE */
	static const int sigs[] = {
		SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT
	};
	struct top_term tt;
	struct sample prev = { 0 }, cur = { 0 };
	unsigned long long iterations = 0, frame;
	double delay = 1;
	bool have_prev = false, epipe = false;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	struct timespec deadline;
	struct waiter w;
	int i, ret = 0;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *val;
		bool missing;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			stat_usage(stdout);
			return 0;
		} else if ((val = opt_value(argc, argv, &i, "-d", &missing)) ||
			   missing) {
			if (missing)
				return usage_error("top", "missing value of", arg);
			if (!parse_seconds(val, &delay))
				return usage_error("top", "bad delay (seconds > 0)", val);
		} else if ((val = opt_value(argc, argv, &i, "-n", &missing)) ||
			   missing) {
			if (missing)
				return usage_error("top", "missing value of", arg);
			if (!parse_count(val, &iterations))
				return usage_error("top", "bad number of iterations (an integer > 0)", val);
		} else {
			return usage_error("top", "unknown option", arg);
		}
	}

	/* the first sample before touching the terminal: nothing to undo */
	if (take_sample(&cur))
		return 1;
	if (!cur.nr_ranks && !cur.tm.present) {
		fprintf(stderr, "dpusim: " DPUSIM_NO_RANKS_MSG "\n");
		sample_free(&cur);
		return 1;
	}
	if (waiter_init(&w, sigs, sizeof(sigs) / sizeof(sigs[0]),
			STDIN_FILENO)) {
		sample_free(&cur);
		return 1;
	}
	sigaction(SIGPIPE, &ign, &old_pipe);
	top_init(&tt);
	top_enter(&tt);

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	for (frame = 1;; frame++) {
		enum wait_result wr;
		struct timespec now;

		if (frame > 1 && take_sample(&cur)) {
			ret = 1;
			break;
		}
		if (top_draw(&tt, &cur, have_prev ? &prev : NULL, delay, frame,
			     tt.raw_on, &epipe)) {
			ret = epipe ? 0 : 1;
			break;
		}
		sample_free(&prev);
		prev = cur;
		memset(&cur, 0, sizeof(cur));
		have_prev = true;
		if (iterations && frame == iterations)
			break;
		timespec_add(&deadline, delay);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timespec_cmp(&deadline, &now) < 0)
			deadline = now;
		do {
			wr = wait_until(&w, &deadline);
			if (wr != WAIT_SIGNAL)
				break;
			if (w.signo == SIGTSTP) {
				top_suspend(&tt);
			} else if (w.signo == SIGCONT) {
				/* stopped otherwise: the shell reset the tty */
				top_enter(&tt);
				top_redraw(&tt);
			} else {
				break;
			}
		} while (1);
		if (wr == WAIT_SIGNAL || wr == WAIT_QUIT)
			break;
		if (wr == WAIT_ERROR) {
			ret = 1;
			break;
		}
	}
	top_leave(&tt);
	free(tt.last);
	sample_free(&prev);
	sample_free(&cur);
	waiter_fini(&w);
	sigaction(SIGPIPE, &old_pipe, NULL);
	return ret;
}
