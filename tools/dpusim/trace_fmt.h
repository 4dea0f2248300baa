/* SPDX-License-Identifier: MIT */
/*
 * trace_fmt.h - the pure half of `dpusim trace`: parse the lines of a
 * tracefs trace_pipe carrying dpusim's tracepoints (the contract:
 * kernel/trace.h), turn them into Chrome trace-event JSON (Perfetto,
 * chrome://tracing) and count what happened for the summary.  No system
 * calls here: trace.c runs the command and feeds the lines in; the host
 * unit test (tests/unit/test_trace.c) feeds canned ones.
 */
#ifndef DPUSIM_TOOL_TRACE_FMT_H
#define DPUSIM_TOOL_TRACE_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_MAX_FIELDS 16

/* One trace_pipe line, split in place (the pointers point into it). */
struct trace_record {
	const char *task;	/* comm, "" if none */
	int pid;		/* -1 if none */
	int cpu;		/* -1 if none */
	uint64_t ts_ns;		/* the event's timestamp */
	const char *event;	/* "dpusim_xfer" */
	unsigned int nr_fields;
	const char *key[TRACE_MAX_FIELDS];
	const char *val[TRACE_MAX_FIELDS];
	uint64_t lost;		/* TRACE_LINE_LOST: events the buffer dropped */
};

enum trace_line_kind {
	TRACE_LINE_OTHER = 0,	/* blank, a comment, or not understood */
	TRACE_LINE_EVENT = 1,	/* an event: *rec filled */
	TRACE_LINE_LOST = 2,	/* "CPU:N [LOST M EVENTS]": rec->lost = M */
};

/*
 * Split one line (no trailing newline needed) of trace_pipe:
 *   "  task-pid  [cpu] flags  12345.678901: event_name: k=v k=v ..."
 * (flags and "(tgid)" are optional).  Writes NULs into @line.
 */
enum trace_line_kind trace_parse_line(char *line, struct trace_record *rec);

/* The value of @key in @rec, or NULL. */
const char *trace_field(const struct trace_record *rec, const char *key);

/* What the summary prints; all times in ns. */
struct trace_stats {
	uint64_t lines, events, ignored, lost;
	uint64_t first_ns, last_ns;		/* of the events seen */
	uint64_t xfers[2];			/* [0] to DPUs, [1] from DPUs */
	uint64_t xfer_bytes[2];
	uint64_t xfer_sum_ns[2];		/* durations added up */
	uint64_t xfer_busy_ns[2];		/* their union */
	/*
	 * Modeled time on real hardware (modeled_ns) of the busiest rank:
	 * each rank has its own channel, so the ranks' calls overlap and a
	 * transfer over several ranks takes the longest of theirs.
	 */
	uint64_t xfer_modeled_ns[2];
	uint64_t xfers_modeled;			/* of xfers[], with modeled_ns */
	uint64_t async_xfers;			/* of xfers[], async=1 */
	uint64_t async_jobs, async_errors;	/* async_done events */
	uint64_t async_busy_ns;			/* union of queue -> done */
	uint64_t launches, launch_sum_ns, launch_busy_ns;
	/*
	 * Modeled kernel time (launch_end's modeled_cycles): the runs are
	 * grouped into launches, a group from a start while no DPU runs to
	 * the moment none runs again, and each group takes its slowest
	 * run's cycles (its DPUs and ranks run in parallel).
	 */
	uint64_t launch_groups, launch_modeled_cycles, runs_modeled;
	uint64_t launches_unfinished;		/* a start without an end */
	uint64_t faults;
	uint64_t tm_posts, tm_matches, tm_rndv_matches, tm_unexpected;
	uint64_t tm_syncs, tm_rndv_reads, tm_rndv_read_bytes, tm_fins;
	uint64_t tm_completions, tm_completion_errors, tm_overruns; /* errors: status != 0 (RNDV_INCOMPLETE too) */
	uint64_t json_events;			/* trace events written, M included */
};

struct trace_conv;

/*
 * A converter writing JSON to @out (NULL: count only).  The JSON starts
 * at the first call, so that nothing is written if creation fails.
 * Returns NULL if out of memory.
 */
struct trace_conv *trace_conv_new(FILE *out);

/* One line (without its newline; modified in place). 0, or -1 out of memory. */
int trace_conv_line(struct trace_conv *c, char *line);

/* Bytes as read from trace_pipe, cut anywhere. 0, or -1 out of memory. */
int trace_conv_feed(struct trace_conv *c, const char *buf, size_t len);

/* What goes into "otherData" and the summary. */
struct trace_run_info {
	const char *command;	/* argv joined by spaces */
	const char *status;	/* "exited 0", "killed by SIGINT" ... */
	int exit_status;	/* dpusim trace's exit status */
	uint64_t wall_ns;
	const char *clock;	/* the trace clock, "mono" */
	const char *output;	/* the JSON file, NULL with --summary-only */
};

/*
 * The end: a line left without newline, unfinished launches and async
 * jobs (slices up to the last event, args.unfinished = 1), the metadata
 * events naming the tracks, "otherData" and the closing brackets; the
 * busy times.  0, -1 out of memory or an error writing @out.
 */
int trace_conv_finish(struct trace_conv *c, const struct trace_run_info *info);

const struct trace_stats *trace_conv_stats(const struct trace_conv *c);

void trace_conv_free(struct trace_conv *c);

/* The summary, a few lines, to @f. */
void trace_summary(FILE *f, const struct trace_stats *s,
		   const struct trace_run_info *info);

/* "3.0 MiB", "512 B"; "1.23 s", "4.5 ms", "12.0 us", "800 ns" */
void trace_fmt_bytes(char *buf, size_t len, uint64_t bytes);
void trace_fmt_ns(char *buf, size_t len, uint64_t ns);

/* @s as a JSON string, quotes included. */
void trace_json_string(FILE *f, const char *s);

#endif /* DPUSIM_TOOL_TRACE_FMT_H */
