// SPDX-License-Identifier: MIT
/*
 * Unit tests of `dpusim trace`'s pure half (tools/dpusim/trace_fmt.c):
 * trace_pipe lines of every event of the contract (kernel/trace.h) in,
 * Chrome trace-event JSON out (read back with a strict parser: phases,
 * timestamps, durations, the tracks' tids and names, args), unknown and
 * broken lines ignored, lanes for overlapping slices, the summary's
 * numbers and text, input cut anywhere, escaping.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/dpusim/trace_fmt.c"
#include "json_mini.h"
#include "unit.h"

/* ------------------------------------------------------------ the parser */

static void test_parse(void)
{
	struct trace_record r;
	char line[512];
	enum trace_line_kind k;
	unsigned int i;

	snprintf(line, sizeof(line), "%s",
		 "           pivot-77      [000] ...1.    10.461741: dpusim_xfer: rank=0 dpus=4 blocks=4 bytes=8384 dir=to_dpu async=0 duration_ns=5553833\n");
	k = trace_parse_line(line, &r);
	UNIT_CHECK("parse: 6.12 line", k == TRACE_LINE_EVENT &&
		   !strcmp(r.task, "pivot") && r.pid == 77 && r.cpu == 0 &&
		   r.ts_ns == 10461741000ULL && !strcmp(r.event, "dpusim_xfer") &&
		   r.nr_fields == 7, "kind %d task '%s' pid %d cpu %d ts %llu event '%s' %u fields",
		   k, r.task, r.pid, r.cpu, (unsigned long long)r.ts_ns,
		   r.event ? r.event : "", r.nr_fields);
	UNIT_CHECK("parse: fields in order", r.nr_fields == 7 &&
		   !strcmp(r.key[0], "rank") && !strcmp(r.val[0], "0") &&
		   !strcmp(r.key[4], "dir") && !strcmp(r.val[4], "to_dpu") &&
		   !strcmp(r.key[6], "duration_ns") && !strcmp(r.val[6], "5553833"),
		   "fields wrong");
	UNIT_CHECK("parse: trace_field", trace_field(&r, "bytes") &&
		   !strcmp(trace_field(&r, "bytes"), "8384") &&
		   !trace_field(&r, "nope"), "lookup");

	/* the comm may hold blanks and dashes; record-tgid adds "(tgid)" */
	snprintf(line, sizeof(line), "%s",
		 " my prog-x-1234 (   1200) [002] d..2. 123.456789: dpusim_fault: rank=1 dpu=2\r\n");
	k = trace_parse_line(line, &r);
	UNIT_CHECK("parse: comm with blank and dash, tgid", k == TRACE_LINE_EVENT &&
		   !strcmp(r.task, "my prog-x") && r.pid == 1234 && r.cpu == 2 &&
		   r.ts_ns == 123456789000ULL && !strcmp(r.event, "dpusim_fault") &&
		   r.nr_fields == 2 && !strcmp(r.val[1], "2"),
		   "task '%s' pid %d cpu %d ts %llu", r.task, r.pid, r.cpu,
		   (unsigned long long)r.ts_ns);

	/* irq-info off: no flags column */
	snprintf(line, sizeof(line), "%s", "  <...>-5     [011]  7.000001: dpusim_tm_fin: qp=1");
	k = trace_parse_line(line, &r);
	UNIT_CHECK("parse: no flags column", k == TRACE_LINE_EVENT &&
		   !strcmp(r.task, "<...>") && r.pid == 5 && r.cpu == 11 &&
		   r.ts_ns == 7000001000ULL && r.nr_fields == 1,
		   "task '%s' pid %d cpu %d ts %llu", r.task, r.pid, r.cpu,
		   (unsigned long long)r.ts_ns);

	/* the 4-character flags of older kernels, a counter clock */
	snprintf(line, sizeof(line), "%s", "foo-9 [001] d.h1 12345: dpusim_tm_overrun: cq=3");
	k = trace_parse_line(line, &r);
	UNIT_CHECK("parse: old flags, integer timestamp", k == TRACE_LINE_EVENT &&
		   r.ts_ns == 12345000000000ULL && !strcmp(r.event, "dpusim_tm_overrun"),
		   "kind %d ts %llu", k, (unsigned long long)r.ts_ns);

	/* nanosecond fraction, and more than 9 digits cut */
	snprintf(line, sizeof(line), "%s", "a-1 [000] ..... 1.123456789123: e: x=1");
	k = trace_parse_line(line, &r);
	UNIT_CHECK("parse: long fraction", k == TRACE_LINE_EVENT &&
		   r.ts_ns == 1123456789ULL, "ts %llu", (unsigned long long)r.ts_ns);

	/* tokens without '=' skipped, '=x' skipped, at most 16 fields */
	snprintf(line, sizeof(line), "%s",
		 "a-1 [000] ..... 1.0: dpusim_x: junk =x k=v a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 j=10 l=11 m=12 n=13 o=14 p=15 q=16 r=17");
	k = trace_parse_line(line, &r);
	UNIT_CHECK("parse: odd tokens, field limit", k == TRACE_LINE_EVENT &&
		   r.nr_fields == TRACE_MAX_FIELDS && !strcmp(r.key[0], "k") &&
		   !strcmp(r.key[15], "p"), "%u fields", r.nr_fields);

	snprintf(line, sizeof(line), "%s", "a-1 [000] ..... 2.5: dpusim_tm_fin:");
	k = trace_parse_line(line, &r);
	UNIT_CHECK("parse: no fields", k == TRACE_LINE_EVENT && r.nr_fields == 0 &&
		   r.ts_ns == 2500000000ULL, "kind %d", k);

	snprintf(line, sizeof(line), "%s", "CPU:1 [LOST 42 EVENTS]");
	k = trace_parse_line(line, &r);
	UNIT_CHECK("parse: lost events", k == TRACE_LINE_LOST && r.lost == 42,
		   "kind %d lost %llu", k, (unsigned long long)r.lost);

	{
		static const char *const other[] = {
			"", "   ", "# tracer: nop", "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
			"hello world", "a-1 [000] ..... 1.5 dpusim_x: k=v",
			"a-1 [000] ..... 1.5: : k=v", "a-1 [000] ..... x1.5: ev: k=v",
			"a-1 [000] ..... 1.: ev: k=v", "a-1 [000] ..... .5: ev: k=v",
			"a-1 [000] .....", "CPU:1 [LOST x EVENTS]",
		};

		for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
			snprintf(line, sizeof(line), "%s", other[i]);
			k = trace_parse_line(line, &r);
			UNIT_CHECK(other[i][0] ? other[i] : "parse: empty line",
				   k == TRACE_LINE_OTHER, "kind %d", k);
		}
	}
}

/* ------------------------------------------------------------ a whole trace */

/*
 * Every event of the contract.  Timestamps in us of the JSON are
 * ts_ns / 1000: 10.000100 s -> 10000100.000.
 */
static const char canned[] =
	"# tracer: nop\n"
	"#\n"
	"           pivot-77      [000] ...1.    10.000100: dpusim_xfer: rank=0 dpus=4 blocks=4 bytes=8384 dir=to_dpu async=0 duration_ns=50000\n"
	"           pivot-77      [001] ...1.    10.000300: dpusim_xfer: rank=1 dpus=64 blocks=64 bytes=1048576 dir=to_dpu async=0 duration_ns=150000\n"
	"           pivot-77      [000] ...1.    10.001000: dpusim_launch_start: rank=0 dpu=3\n"
	"           pivot-77      [000] ...1.    10.001010: dpusim_launch_start: rank=0 dpu=4\n"
	"           pivot-78      [001] ...1.    10.001500: dpusim_fault: rank=0 dpu=4\n"
	"           pivot-78      [001] ...1.    10.001500: dpusim_launch_end: rank=0 dpu=4 state=fault duration_ns=490000\n"
	"           pivot-78      [001] ...1.    10.003000: dpusim_launch_end: rank=0 dpu=3 state=done duration_ns=2000000\n"
	"           pivot-78      [001] ...1.    10.003100: dpusim_launch_end: rank=1 dpu=0 state=done duration_ns=700\n"
	"           pivot-77      [000] ...1.    10.004000: dpusim_async_queue: rank=0 job=7 dpus=2 blocks=2 bytes=4096 queued=1\n"
	"           pivot-77      [000] ...1.    10.004100: dpusim_async_queue: rank=0 job=8 dpus=2 blocks=2 bytes=4096 queued=2\n"
	"  kworker/u4:1-12      [001] ...1.    10.004200: dpusim_xfer: rank=0 dpus=2 blocks=2 bytes=4096 dir=from_dpu async=1 duration_ns=100000\n"
	"  kworker/u4:1-12      [001] ...1.    10.004200: dpusim_async_done: rank=0 job=7 bytes=4096 err=0 wait_ns=100000 duration_ns=100000\n"
	"  kworker/u4:1-12      [001] ...1.    10.004300: dpusim_xfer: rank=0 dpus=2 blocks=2 bytes=4096 dir=from_dpu async=1 duration_ns=100000\n"
	"  kworker/u4:1-12      [001] ...1.    10.004300: dpusim_async_done: rank=0 job=8 bytes=4096 err=-14 wait_ns=100000 duration_ns=100000\n"
	"  kworker/u4:1-12      [001] ...1.    10.005000: dpusim_async_done: rank=2 job=1 bytes=8 err=0 wait_ns=1000 duration_ns=2000\n"
	"           pivot-77      [000] ...1.    10.004301: dpusim_xfer: rank=0 dpus=1 blocks=1 bytes=8 dir=to_dpu async=0 duration_ns=1500\n"
	"     tm_pingpong-90      [001] .....    10.006000: dpusim_tm_post: srq=5 op=add tag=0xdeadbeefcafef00d handle=3\n"
	"     tm_pingpong-90      [001] .....    10.006001: dpusim_tm_post: srq=5 op=recv tag=0x0 handle=0\n"
	"     tm_pingpong-91      [000] .....    10.006002: dpusim_tm_match: srq=5 tag=0xdeadbeefcafef00d handle=3 bytes=64 rndv=0\n"
	"     tm_pingpong-91      [000] .....    10.006003: dpusim_tm_match: srq=5 tag=0x10 handle=4 bytes=65536 rndv=1\n"
	"     tm_pingpong-91      [000] .....    10.006004: dpusim_tm_unexpected: srq=5 tag=0x11 bytes=8\n"
	"     tm_pingpong-90      [001] .....    10.006005: dpusim_tm_sync: srq=5 unexpected=1\n"
	"     tm_pingpong-91      [000] .....    10.006006: dpusim_tm_rndv_read: qp=9 bytes=65536 err=0\n"
	"     tm_pingpong-91      [000] .....    10.006007: dpusim_tm_fin: qp=9\n"
	"     tm_pingpong-91      [000] .....    10.006008: dpusim_tm_completion: cq=2 opcode=1 status=0 flags=0x2\n"
	"     tm_pingpong-91      [000] .....    10.006009: dpusim_tm_completion: cq=2 opcode=1 status=4 flags=0x0\n"
	"     tm_pingpong-91      [000] .....    10.006010: dpusim_tm_overrun: cq=2\n"
	"          <idle>-0       [000] d..1.    10.007000: dpusim_future_event: rank=0 x=1\n"
	"            sshd-100     [000] .....    10.007001: sched_switch: prev_comm=sshd\n"
	"CPU:1 [LOST 42 EVENTS]\n"
	"hello world\n"
	"           pivot-77      [000] ...1.    10.008000: dpusim_launch_start: rank=3 dpu=1\n"
	"           pivot-77      [000] ...1.    10.008500: dpusim_async_queue: rank=3 job=99 dpus=1 blocks=1 bytes=64 queued=1\n"
	"     tm_pingpong-91      [000] .....    10.009000: dpusim_tm_fin: qp=9";	/* no newline */

static const struct trace_run_info canned_info = {
	.command = "build/examples/pivot --dpus \"4\"\t\\x",
	.status = "exited 3",
	.exit_status = 3,
	.wall_ns = 1234567890ULL,
	.clock = "mono",
	.output = "t.json",
};

/* Converts @text fed @chunk bytes at a time (0: line by line). */
static char *convert(const char *text, size_t chunk, struct trace_stats *st,
		     bool with_output)
{
	char *buf = NULL, *copy, *line, *save = NULL;
	size_t len = 0, off;
	FILE *f = open_memstream(&buf, &len);
	struct trace_conv *c;
	int err = 0;

	if (!f)
		return NULL;
	c = trace_conv_new(with_output ? f : NULL);
	if (!c) {
		fclose(f);
		free(buf);
		return NULL;
	}
	if (chunk) {
		for (off = 0; off < strlen(text) && !err; off += chunk) {
			size_t n = strlen(text) - off;

			err |= trace_conv_feed(c, text + off, n < chunk ? n : chunk);
		}
	} else {
		copy = strdup(text);
		if (!copy) {
			err = 1;
		} else {
			/* strtok_r drops empty lines: as good for this test */
			for (line = strtok_r(copy, "\n", &save); line && !err;
			     line = strtok_r(NULL, "\n", &save))
				err |= trace_conv_line(c, line);
			free(copy);
		}
	}
	err |= trace_conv_finish(c, &canned_info);
	*st = *trace_conv_stats(c);
	trace_conv_free(c);
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The trace's tracks: tid -> name, tid -> sort index. */
struct tracks {
	char *name[64];
	int sort[64];
};

static void read_tracks(const struct jnode *evs, struct tracks *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < 64; i++)
		t->sort[i] = -1;
	for (i = 0; i < evs->n; i++) {
		const struct jnode *e = &evs->kids[i];
		const char *ph = json_str(e, "ph"), *name = json_str(e, "name");
		int tid = (int)json_num(e, "tid", -1);
		const struct jnode *args = json_get(e, "args");

		if (!ph || strcmp(ph, "M") || tid < 0 || tid >= 64 || !name)
			continue;
		if (!strcmp(name, "thread_name"))
			t->name[tid] = (char *)json_str(args, "name");
		else if (!strcmp(name, "thread_sort_index"))
			t->sort[tid] = (int)json_num(args, "sort_index", -1);
	}
}

/* The @nth (0-based) event named @name on the track named @track. */
static const struct jnode *find_ev(const struct jnode *evs, const struct tracks *t,
				   const char *name, const char *track, int nth)
{
	size_t i;

	for (i = 0; i < evs->n; i++) {
		const struct jnode *e = &evs->kids[i];
		const char *n = json_str(e, "name"), *ph = json_str(e, "ph");
		int tid = (int)json_num(e, "tid", -1);

		if (!n || !ph || strcmp(ph, "M") == 0 || strcmp(n, name))
			continue;
		if (tid < 0 || tid >= 64 || !t->name[tid] || strcmp(t->name[tid], track))
			continue;
		if (nth-- == 0)
			return e;
	}
	return NULL;
}

static bool near(double a, double b)
{
	return a - b < 0.0005 && b - a < 0.0005;
}

/* X on @track at @ts us lasting @dur us */
static void check_slice(const struct jnode *evs, const struct tracks *t,
			const char *what, const char *name, const char *track,
			int nth, double ts, double dur)
{
	const struct jnode *e = find_ev(evs, t, name, track, nth);

	UNIT_CHECK(what, e && !strcmp(json_str(e, "ph"), "X") &&
		   near(json_num(e, "ts", -1), ts) && near(json_num(e, "dur", -1), dur) &&
		   json_num(e, "pid", -1) == 1 && json_str(e, "cat"),
		   "%s: %s ts %.3f dur %.3f, expected %.3f %.3f", name,
		   e ? "found" : "missing", e ? json_num(e, "ts", -1) : 0,
		   e ? json_num(e, "dur", -1) : 0, ts, dur);
}

static void check_instant(const struct jnode *evs, const struct tracks *t,
			  const char *what, const char *name, const char *track,
			  int nth, double ts)
{
	const struct jnode *e = find_ev(evs, t, name, track, nth);

	UNIT_CHECK(what, e && !strcmp(json_str(e, "ph"), "i") &&
		   json_str(e, "s") && !strcmp(json_str(e, "s"), "t") &&
		   near(json_num(e, "ts", -1), ts) && !json_get(e, "dur"),
		   "%s on %s: %s", name, track, e ? "wrong" : "missing");
}

static const struct jnode *args_of(const struct jnode *evs, const struct tracks *t,
				   const char *name, const char *track, int nth)
{
	return json_get(find_ev(evs, t, name, track, nth), "args");
}

static void test_convert(void)
{
	struct trace_stats st, st2;
	char err[128], *out, *out2;
	const struct jnode *evs, *a, *od;
	struct jnode *root;
	struct tracks t;
	size_t i, nx = 0, ni = 0, nm = 0, chunk;
	bool dup = false, ok;
	static const char *const order[] = {
		"rank 0", "rank 0 async", "rank 0 async #2", "rank 0 dpu 3",
		"rank 0 dpu 4", "rank 1", "rank 1 dpu 0", "rank 2 async",
		"rank 3 async", "rank 3 dpu 1", "tm srq 5", "tm qp 9", "tm cq 2",
	};

	out = convert(canned, 0, &st, true);
	UNIT_CHECK("convert: runs", out != NULL, "failed");
	if (!out)
		return;
	root = json_parse(out, err, sizeof(err));
	UNIT_CHECK("convert: valid JSON", root != NULL, "%s\n%s", err, out);
	if (!root) {
		free(out);
		return;
	}
	evs = json_get(root, "traceEvents");
	UNIT_CHECK("convert: traceEvents array", evs && evs->t == J_ARR, "missing");
	UNIT_CHECK("convert: displayTimeUnit ns", json_str(root, "displayTimeUnit") &&
		   !strcmp(json_str(root, "displayTimeUnit"), "ns"), "missing");
	if (!evs || evs->t != J_ARR)
		goto out;

	for (i = 0; i < evs->n; i++) {
		const struct jnode *e = &evs->kids[i];
		const char *ph = json_str(e, "ph");
		const struct jnode *args = json_get(e, "args");
		size_t k;

		nx += ph && !strcmp(ph, "X");
		ni += ph && !strcmp(ph, "i");
		nm += ph && !strcmp(ph, "M");
		for (k = 0; args && k < args->n; k++)
			dup |= json_count_key(args, args->keys[k]) != 1;
	}
	/* 5 xfers, 4 launches, 4 async jobs; 1 fault + 12 tm; 1 + 13 * 2 */
	UNIT_CHECK("convert: 13 slices", nx == 13, "%zu", nx);
	UNIT_CHECK("convert: 13 instants", ni == 13, "%zu", ni);
	UNIT_CHECK("convert: 27 metadata events", nm == 27, "%zu", nm);
	UNIT_CHECK("convert: json_events counts them all", st.json_events == evs->n,
		   "%llu vs %zu", (unsigned long long)st.json_events, evs->n);
	UNIT_CHECK("convert: no arg twice", !dup, "duplicate key");

	read_tracks(evs, &t);
	ok = true;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int tid, found = -1;

		for (tid = 0; tid < 64; tid++)
			if (t.name[tid] && !strcmp(t.name[tid], order[i]))
				found = tid;
		if (found < 0 || t.sort[found] != (int)i) {
			ok = false;
			printf("# track '%s': tid %d sort %d, expected sort %zu\n",
			       order[i], found, found >= 0 ? t.sort[found] : -1, i);
		}
	}
	UNIT_CHECK("convert: tracks named and ordered", ok, "see above");
	{
		const struct jnode *e = NULL;

		for (i = 0; i < evs->n && !e; i++) {
			const char *n = json_str(&evs->kids[i], "name");

			if (n && !strcmp(n, "process_name"))
				e = &evs->kids[i];
		}
		UNIT_CHECK("convert: process dpusim", e && json_num(e, "pid", -1) == 1 &&
			   json_str(json_get(e, "args"), "name") &&
			   !strcmp(json_str(json_get(e, "args"), "name"), "dpusim"), "missing");
	}

	/* transfers: [ts - duration_ns, ts] */
	check_slice(evs, &t, "xfer: slice before its event", "xfer to DPUs", "rank 0", 0,
		    10000050.0, 50.0);
	check_slice(evs, &t, "xfer: other rank", "xfer to DPUs", "rank 1", 0,
		    10000150.0, 150.0);
	check_slice(evs, &t, "xfer: async from DPUs", "async xfer from DPUs", "rank 0", 0,
		    10004100.0, 100.0);
	check_slice(evs, &t, "xfer: async from DPUs, second", "async xfer from DPUs",
		    "rank 0", 1, 10004200.0, 100.0);
	/* 0.5 us of overlap with the slice before: taken off its start */
	check_slice(evs, &t, "xfer: small overlap clamped", "xfer to DPUs", "rank 0", 1,
		    10004300.0, 1.0);
	a = args_of(evs, &t, "xfer to DPUs", "rank 1", 0);
	UNIT_CHECK("xfer: args", a && json_num(a, "bytes", -1) == 1048576 &&
		   json_num(a, "rank", -1) == 1 && json_num(a, "dpus", -1) == 64 &&
		   json_num(a, "blocks", -1) == 64 && json_num(a, "async", -1) == 0 &&
		   json_num(a, "duration_ns", -1) == 150000 &&
		   json_str(a, "dir") && !strcmp(json_str(a, "dir"), "to_dpu"), "wrong");

	/* launches: start/end pairs, or from duration_ns */
	check_slice(evs, &t, "launch: start/end pair", "launch", "rank 0 dpu 3", 0,
		    10001000.0, 2000.0);
	check_slice(evs, &t, "launch: faulted", "launch (fault)", "rank 0 dpu 4", 0,
		    10001010.0, 490.0);
	check_slice(evs, &t, "launch: end without start", "launch", "rank 1 dpu 0", 0,
		    10003099.3, 0.7);
	check_slice(evs, &t, "launch: unfinished, up to the last event", "launch",
		    "rank 3 dpu 1", 0, 10008000.0, 1000.0);
	a = args_of(evs, &t, "launch", "rank 0 dpu 3", 0);
	UNIT_CHECK("launch: args", a && json_str(a, "state") &&
		   !strcmp(json_str(a, "state"), "done") &&
		   json_num(a, "duration_ns", -1) == 2000000 && json_num(a, "dpu", -1) == 3,
		   "wrong");
	a = args_of(evs, &t, "launch", "rank 3 dpu 1", 0);
	UNIT_CHECK("launch: unfinished flagged", a && json_num(a, "unfinished", -1) == 1 &&
		   json_num(a, "dpu", -1) == 1, "wrong");
	check_instant(evs, &t, "fault: instant on its DPU", "fault", "rank 0 dpu 4", 0,
		      10001500.0);

	/* async jobs: queued -> done, lanes when they overlap */
	check_slice(evs, &t, "async: job 7", "async job", "rank 0 async", 0,
		    10004000.0, 200.0);
	check_slice(evs, &t, "async: job 8 overlaps, second lane", "async job",
		    "rank 0 async #2", 0, 10004100.0, 200.0);
	check_slice(evs, &t, "async: done without queue", "async job", "rank 2 async", 0,
		    10004997.0, 3.0);
	check_slice(evs, &t, "async: unfinished", "async job", "rank 3 async", 0,
		    10008500.0, 500.0);
	a = args_of(evs, &t, "async job", "rank 0 async #2", 0);
	UNIT_CHECK("async: queue and done fields merged", a &&
		   json_num(a, "job", -1) == 8 && json_num(a, "queued", -1) == 2 &&
		   json_num(a, "dpus", -1) == 2 && json_num(a, "err", 0) == -14 &&
		   json_num(a, "wait_ns", -1) == 100000 &&
		   json_num(a, "duration_ns", -1) == 100000 && json_num(a, "bytes", -1) == 4096,
		   "wrong");
	a = args_of(evs, &t, "async job", "rank 3 async", 0);
	UNIT_CHECK("async: unfinished flagged", a && json_num(a, "unfinished", -1) == 1 &&
		   json_num(a, "job", -1) == 99, "wrong");

	/* tag matching: instants on their SRQ, QP, CQ */
	check_instant(evs, &t, "tm: post add", "post add", "tm srq 5", 0, 10006000.0);
	check_instant(evs, &t, "tm: post recv", "post recv", "tm srq 5", 0, 10006001.0);
	check_instant(evs, &t, "tm: match", "match", "tm srq 5", 0, 10006002.0);
	check_instant(evs, &t, "tm: rendezvous match", "match (rendezvous)", "tm srq 5", 0,
		      10006003.0);
	check_instant(evs, &t, "tm: unexpected", "unexpected", "tm srq 5", 0, 10006004.0);
	check_instant(evs, &t, "tm: sync", "sync", "tm srq 5", 0, 10006005.0);
	check_instant(evs, &t, "tm: rendezvous read", "rendezvous read", "tm qp 9", 0,
		      10006006.0);
	check_instant(evs, &t, "tm: fin", "fin", "tm qp 9", 0, 10006007.0);
	check_instant(evs, &t, "tm: fin, last line without newline", "fin", "tm qp 9", 1,
		      10009000.0);
	check_instant(evs, &t, "tm: completion", "completion", "tm cq 2", 0, 10006008.0);
	check_instant(evs, &t, "tm: completion with error", "completion", "tm cq 2", 1,
		      10006009.0);
	check_instant(evs, &t, "tm: overrun", "overrun", "tm cq 2", 0, 10006010.0);
	a = args_of(evs, &t, "post add", "tm srq 5", 0);
	UNIT_CHECK("tm: hex tag kept as a string", a && json_str(a, "tag") &&
		   !strcmp(json_str(a, "tag"), "0xdeadbeefcafef00d") &&
		   json_num(a, "handle", -1) == 3 && !strcmp(json_str(a, "op"), "add"),
		   "wrong");
	a = args_of(evs, &t, "completion", "tm cq 2", 0);
	UNIT_CHECK("tm: completion args", a && json_num(a, "opcode", -1) == 1 &&
		   json_num(a, "status", -1) == 0 && json_str(a, "flags") &&
		   !strcmp(json_str(a, "flags"), "0x2"), "wrong");
	a = args_of(evs, &t, "match (rendezvous)", "tm srq 5", 0);
	UNIT_CHECK("tm: match args", a && json_num(a, "bytes", -1) == 65536 &&
		   json_num(a, "rndv", -1) == 1 && json_num(a, "handle", -1) == 4, "wrong");

	/* otherData */
	od = json_get(root, "otherData");
	UNIT_CHECK("otherData: command escaped and back", od && json_str(od, "command") &&
		   !strcmp(json_str(od, "command"), canned_info.command), "wrong");
	UNIT_CHECK("otherData: numbers", od && json_num(od, "exit_status", -1) == 3 &&
		   json_num(od, "wall_ns", -1) == 1234567890.0 &&
		   json_num(od, "lost_events", -1) == 42 && json_num(od, "events", -1) == 30 &&
		   !strcmp(json_str(od, "clock"), "mono") &&
		   !strcmp(json_str(od, "status"), "exited 3"), "wrong");

	/* the numbers of the summary */
	UNIT_CHECK("stats: events, ignored, lost", st.events == 30 && st.ignored == 3 &&
		   st.lost == 42, "events %llu ignored %llu lost %llu",
		   (unsigned long long)st.events, (unsigned long long)st.ignored,
		   (unsigned long long)st.lost);
	UNIT_CHECK("stats: transfers", st.xfers[0] == 3 && st.xfers[1] == 2 &&
		   st.xfer_bytes[0] == 8384 + 1048576 + 8 && st.xfer_bytes[1] == 8192 &&
		   st.async_xfers == 2, "wrong");
	UNIT_CHECK("stats: transfer time, sum and union",
		   st.xfer_sum_ns[0] == 201500 && st.xfer_busy_ns[0] == 201500 &&
		   st.xfer_sum_ns[1] == 200000 && st.xfer_busy_ns[1] == 200000,
		   "to %llu/%llu from %llu/%llu", (unsigned long long)st.xfer_sum_ns[0],
		   (unsigned long long)st.xfer_busy_ns[0], (unsigned long long)st.xfer_sum_ns[1],
		   (unsigned long long)st.xfer_busy_ns[1]);
	UNIT_CHECK("stats: launches (overlapping runs counted once in busy)",
		   st.launches == 4 && st.launches_unfinished == 1 && st.faults == 1 &&
		   st.launch_busy_ns == 3000700 && st.launch_sum_ns == 3490700,
		   "launches %llu busy %llu sum %llu", (unsigned long long)st.launches,
		   (unsigned long long)st.launch_busy_ns, (unsigned long long)st.launch_sum_ns);
	UNIT_CHECK("stats: async", st.async_jobs == 3 && st.async_errors == 1 &&
		   st.async_busy_ns == 803000, "jobs %llu errors %llu busy %llu",
		   (unsigned long long)st.async_jobs, (unsigned long long)st.async_errors,
		   (unsigned long long)st.async_busy_ns);
	UNIT_CHECK("stats: tm", st.tm_posts == 2 && st.tm_matches == 2 &&
		   st.tm_rndv_matches == 1 && st.tm_unexpected == 1 && st.tm_syncs == 1 &&
		   st.tm_rndv_reads == 1 && st.tm_rndv_read_bytes == 65536 &&
		   st.tm_fins == 2 && st.tm_completions == 2 &&
		   st.tm_completion_errors == 1 && st.tm_overruns == 1, "wrong");

	/* the same bytes cut anywhere give the same JSON */
	ok = true;
	for (chunk = 1; chunk <= 17 && ok; chunk++) {
		out2 = convert(canned, chunk, &st2, true);
		ok = out2 && !strcmp(out, out2) && st2.events == st.events &&
		     st2.lines == st.lines;
		if (!ok)
			printf("# chunk %zu differs\n", chunk);
		free(out2);
	}
	UNIT_CHECK("feed: cut anywhere, same trace", ok, "see above");
	out2 = convert(canned, 4096, &st2, false);
	UNIT_CHECK("feed: no output, same numbers", out2 && !out2[0] &&
		   st2.events == st.events && st2.json_events == st.json_events &&
		   st2.launch_busy_ns == st.launch_busy_ns, "differs");
	free(out2);
out:
	json_free(root);
	free(out);
}

/* trace_summary()'s text for @st and @info (NULL: no memory). */
static char *summary_of(const struct trace_stats *st, const struct trace_run_info *info)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	trace_summary(f, st, info);
	fclose(f);
	return text;
}

static void test_summary(void)
{
	struct trace_stats st;
	char *out = convert(canned, 0, &st, false), *text;

	free(out);
	text = summary_of(&st, &canned_info);
	if (!text) {
		unit_fail("summary", "open_memstream");
		return;
	}
	printf("# %s", text);
	UNIT_CHECK("summary: command and status", strstr(text, "dpusim trace: build/examples/pivot") &&
		   strstr(text, "exited 3 after 1.23 s"), "%s", text);
	UNIT_CHECK("summary: transfers", strstr(text,
		   "transfers: 5 (1.0 MiB to DPUs in 201.5 us, 3 transfers; 8.0 KiB from DPUs in 200.0 us, 2 transfers)"),
		   "%s", text);
	/* a kernel without modeled_ns: no modeled time */
	UNIT_CHECK("summary: no modeled time", !strstr(text, "modeled"), "%s", text);
	UNIT_CHECK("summary: async", strstr(text, "async: 3 jobs (803.0 us queued or copying), 1 failed"),
		   "%s", text);
	UNIT_CHECK("summary: launches", strstr(text,
		   "launches: 4 DPU runs (3.0 ms busy, 3.5 ms of DPU time), 1 still running at the end, 1 fault"),
		   "%s", text);
	UNIT_CHECK("summary: tm", strstr(text,
		   "tm: 2 matches (1 rendezvous), 1 unexpected, 2 posts, 1 sync, 1 rendezvous read, 2 fins, 2 completions (1 not successful), 1 overrun"),
		   "%s", text);
	UNIT_CHECK("summary: lost", strstr(text, "warning: 42 events lost"), "%s", text);
	UNIT_CHECK("summary: trace file", strstr(text, "trace: t.json (30 dpusim events, 53 trace events)"),
		   "%s", text);
	free(text);

	/* nothing traced: no tm line, --summary-only */
	{
		struct trace_stats zero = { 0 };
		struct trace_run_info info = canned_info;

		info.output = NULL;
		text = summary_of(&zero, &info);
		if (!text)
			return;
		UNIT_CHECK("summary: empty trace", strstr(text, "transfers: 0 (0 B to DPUs in 0 ns") &&
			   !strstr(text, "tm:") && !strstr(text, "async") &&
			   strstr(text, "  0 dpusim events\n"), "%s", text);
		free(text);
	}
}

/*
 * modeled_ns (the time on real hardware) is an arg beside duration_ns,
 * and the summary adds it up per rank and takes the busiest rank's: the
 * ranks' channels work at once.
 */
static const char canned_modeled[] =
	"  app-7 [000] ...1. 20.000100: dpusim_xfer: rank=0 dpus=64 blocks=64 bytes=65536 dir=to_dpu async=0 duration_ns=50000 modeled_ns=1000\n"
	"  app-7 [001] ...1. 20.000100: dpusim_xfer: rank=1 dpus=64 blocks=64 bytes=65536 dir=to_dpu async=0 duration_ns=40000 modeled_ns=2500\n"
	"  app-7 [000] ...1. 20.000300: dpusim_xfer: rank=0 dpus=64 blocks=64 bytes=65536 dir=to_dpu async=0 duration_ns=50000 modeled_ns=2000\n"
	"  app-7 [001] ...1. 20.000400: dpusim_xfer: rank=1 dpus=2 blocks=2 bytes=16 dir=from_dpu async=1 duration_ns=3000 modeled_ns=700\n";

static void test_modeled(void)
{
	struct trace_stats st;
	char err[128], *out, *text;
	const struct jnode *evs, *a;
	struct jnode *root;
	struct tracks t;

	out = convert(canned_modeled, 0, &st, true);
	UNIT_CHECK("modeled: converts", out != NULL, "failed");
	if (!out)
		return;
	UNIT_CHECK("modeled: busiest rank per direction",
		   st.xfer_modeled_ns[0] == 3000 && st.xfer_modeled_ns[1] == 700 &&
		   st.xfers_modeled == 4, "to %llu from %llu of %llu",
		   (unsigned long long)st.xfer_modeled_ns[0],
		   (unsigned long long)st.xfer_modeled_ns[1],
		   (unsigned long long)st.xfers_modeled);
	root = json_parse(out, err, sizeof(err));
	UNIT_CHECK("modeled: valid JSON", root != NULL, "%s", err);
	if (root) {
		evs = json_get(root, "traceEvents");
		read_tracks(evs, &t);
		a = args_of(evs, &t, "xfer to DPUs", "rank 0", 1);
		UNIT_CHECK("modeled: an arg beside duration_ns",
			   a && json_num(a, "modeled_ns", -1) == 2000 &&
			   json_num(a, "duration_ns", -1) == 50000, "wrong");
		a = args_of(evs, &t, "async xfer from DPUs", "rank 1", 0);
		UNIT_CHECK("modeled: async too", a && json_num(a, "modeled_ns", -1) == 700,
			   "wrong");
		json_free(root);
	}
	free(out);

	text = summary_of(&st, NULL);
	if (!text)
		return;
	UNIT_CHECK("modeled: summary", strstr(text,
		   "; modeled on UPMEM hardware: 3.0 us to, 700 ns from the DPUs (the busiest rank)"),
		   "%s", text);
	free(text);
}

/*
 * Modeled kernel time: launch groups (a start while nothing runs to the
 * moment nothing runs) take their slowest run's modeled cycles; two
 * ranks of one launch run in parallel.
 */
static const char canned_launch_model[] =
	"p-1 [000] ..... 1.000000: dpusim_launch_start: rank=0 dpu=0\n"
	"p-1 [000] ..... 1.000001: dpusim_launch_start: rank=0 dpu=1\n"
	"p-1 [000] ..... 1.000002: dpusim_launch_start: rank=1 dpu=0\n"
	"p-1 [000] ..... 1.000100: dpusim_launch_end: rank=0 dpu=1 state=done duration_ns=99000 modeled_cycles=3500\n"
	"p-1 [000] ..... 1.000200: dpusim_launch_end: rank=1 dpu=0 state=done duration_ns=198000 modeled_cycles=7000\n"
	"p-1 [000] ..... 1.000300: dpusim_launch_end: rank=0 dpu=0 state=done duration_ns=300000 modeled_cycles=350\n"
	"p-1 [000] ..... 2.000000: dpusim_launch_start: rank=0 dpu=0\n"
	"p-1 [000] ..... 2.000100: dpusim_launch_end: rank=0 dpu=0 state=done duration_ns=100000 modeled_cycles=35000\n"
	"p-1 [000] ..... 3.000000: dpusim_launch_start: rank=0 dpu=0\n"
	"p-1 [000] ..... 3.000100: dpusim_launch_end: rank=0 dpu=0 state=done duration_ns=100000\n";

static void test_launch_model(void)
{
	struct trace_stats st;
	char *out, *text;

	out = convert(canned_launch_model, 0, &st, true);
	UNIT_CHECK("launch model: converts", out != NULL, "failed");
	if (!out)
		return;
	free(out);
	UNIT_CHECK("launch model: each launch its slowest run, launches added up",
		   st.launch_groups == 3 && st.runs_modeled == 4 &&
			   st.launch_modeled_cycles == 7000 + 35000,
		   "groups %llu runs %llu cycles %llu", (unsigned long long)st.launch_groups,
		   (unsigned long long)st.runs_modeled,
		   (unsigned long long)st.launch_modeled_cycles);
	text = summary_of(&st, NULL);
	if (!text)
		return;
	/* 42000 cycles at 350 MHz: 120 us */
	UNIT_CHECK("launch model: summary in PrIM's split",
		   strstr(text, "  modeled on UPMEM hardware: CPU-DPU 0 ns, DPU kernel 120.0 us (3 launches at 350 MHz), DPU-CPU 0 ns\n"),
		   "%s", text);
	free(text);
}

static void test_format(void)
{
	char b[32], *text = NULL;
	size_t len = 0;
	FILE *f;

	trace_fmt_bytes(b, sizeof(b), 1023);
	UNIT_CHECK("fmt: 1023 B", !strcmp(b, "1023 B"), "%s", b);
	trace_fmt_bytes(b, sizeof(b), 3 << 20);
	UNIT_CHECK("fmt: 3.0 MiB", !strcmp(b, "3.0 MiB"), "%s", b);
	trace_fmt_bytes(b, sizeof(b), 1536);
	UNIT_CHECK("fmt: 1.5 KiB", !strcmp(b, "1.5 KiB"), "%s", b);
	trace_fmt_ns(b, sizeof(b), 999);
	UNIT_CHECK("fmt: 999 ns", !strcmp(b, "999 ns"), "%s", b);
	trace_fmt_ns(b, sizeof(b), 12300000);
	UNIT_CHECK("fmt: 12.3 ms", !strcmp(b, "12.3 ms"), "%s", b);
	trace_fmt_ns(b, sizeof(b), 61000000000ULL);
	UNIT_CHECK("fmt: 61.00 s", !strcmp(b, "61.00 s"), "%s", b);

	f = open_memstream(&text, &len);
	if (!f)
		return;
	trace_json_string(f, "a\"b\\c\n\t\x01\x7f\xc3\xa9");
	fclose(f);
	UNIT_CHECK("json string escapes", !strcmp(text, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\xc3\xa9\""),
		   "%s", text);
	free(text);

	text = NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	/* bad lead, lead without continuation, overlong, surrogate, euro sign */
	trace_json_string(f, "\xff\xc3(\xc0\xaf\xed\xa0\x80\xe2\x82\xac");
	fclose(f);
	UNIT_CHECK("json string: not UTF-8 -> U+FFFD",
		   !strcmp(text, "\"\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\xe2\x82\xac\""),
		   "%s", text);
	free(text);

	/* numbers: JSON integers only; the rest as strings */
	UNIT_CHECK("json int: 0, -14, 18446744073709551615",
		   is_json_int("0") && is_json_int("-14") && is_json_int("18446744073709551615"),
		   "no");
	UNIT_CHECK("json int: not 007, 0x1f, 1.5, -, empty, 1e3",
		   !is_json_int("007") && !is_json_int("0x1f") && !is_json_int("1.5") &&
		   !is_json_int("-") && !is_json_int("") && !is_json_int("1e3"), "no");
}

/* A value with a quote becomes an escaped string; the event name too. */
static void test_escape_values(void)
{
	static const char text[] =
		"x-1 [000] ..... 1.000000: dpusim_tm_post: srq=1 op=a\"b\\ tag=0x1 handle=007\n"
		"x-1 [000] ..... 1.000001: dpusim_xfer: rank=0 bytes=1 dir=sideways duration_ns=1\n"
		"x-1 [000] ..... 1.000002: dpusim_xfer: bytes=1 dir=to_dpu duration_ns=1\n"
		"x-1 [000] ..... 1.000003: dpusim_launch_end: rank=0 state=done\n";
	struct trace_stats st;
	char err[128], *out = convert(text, 0, &st, true);
	struct jnode *root = out ? json_parse(out, err, sizeof(err)) : NULL;
	const struct jnode *evs = json_get(root, "traceEvents"), *e = NULL, *a;
	size_t i;

	UNIT_CHECK("escape: valid JSON", root != NULL, "%s\n%s", err, out ? out : "");
	for (i = 0; evs && i < evs->n && !e; i++)
		if (json_str(&evs->kids[i], "ph") && !strcmp(json_str(&evs->kids[i], "ph"), "i"))
			e = &evs->kids[i];
	a = json_get(e, "args");
	UNIT_CHECK("escape: name and args", e && !strcmp(json_str(e, "name"), "post a\"b\\") &&
		   json_str(a, "op") && !strcmp(json_str(a, "op"), "a\"b\\") &&
		   json_str(a, "handle") && !strcmp(json_str(a, "handle"), "007"), "wrong");
	/* a bad dir, a missing rank or dpu: counted, ignored */
	UNIT_CHECK("escape: broken events ignored", st.events == 4 && st.ignored == 3 &&
		   st.xfers[0] + st.xfers[1] == 0 && st.launches == 0,
		   "events %llu ignored %llu", (unsigned long long)st.events,
		   (unsigned long long)st.ignored);
	json_free(root);
	free(out);
}

/* Many tracks: the hash grows, tids stay distinct and stable. */
static void test_many_tracks(void)
{
	struct trace_conv *c = trace_conv_new(NULL);
	char line[160];
	unsigned int r, d;
	int tid_first = -1, tid_again = -1, ok = 1;

	if (!c) {
		unit_fail("many tracks", "out of memory");
		return;
	}
	for (r = 0; r < 8; r++)
		for (d = 0; d < 64; d++) {
			snprintf(line, sizeof(line),
				 "p-1 [000] ..... 1.%06u: dpusim_launch_start: rank=%u dpu=%u",
				 r * 64 + d, r, d);
			ok &= trace_conv_line(c, line) == 0;
		}
	for (r = 0; r < 8; r++)
		for (d = 0; d < 64; d++) {
			snprintf(line, sizeof(line),
				 "p-1 [000] ..... 2.%06u: dpusim_launch_end: rank=%u dpu=%u state=done duration_ns=5",
				 r * 64 + d, r, d);
			ok &= trace_conv_line(c, line) == 0;
		}
	tid_first = track_get(c, TK_DPU, 0, 0, 0)->tid;
	tid_again = track_get(c, TK_DPU, 0, 0, 0)->tid;
	ok &= trace_conv_finish(c, NULL) == 0;
	UNIT_CHECK("many tracks: 512 DPUs, all paired", ok && c->nr_tracks == 512 &&
		   trace_conv_stats(c)->launches == 512 &&
		   trace_conv_stats(c)->launches_unfinished == 0 && tid_first == 1 &&
		   tid_again == 1 && trace_conv_stats(c)->json_events == 512 + 1 + 1024,
		   "tracks %zu launches %llu json %llu", c->nr_tracks,
		   (unsigned long long)trace_conv_stats(c)->launches,
		   (unsigned long long)trace_conv_stats(c)->json_events);
	trace_conv_free(c);
}

/*
 * The canned trace with a few bytes changed (blanks, '=', ':', brackets,
 * digits, quotes, control bytes, newlines ...), 3000 times: the output is
 * valid JSON every time, with no arg twice.
 */
static void test_mutations(void)
{
	static const char alphabet[] = " =:[]-.0123456789\"\\\n\t\x01\xff\x7f" "ax_";
	uint64_t rng = 12345;
	unsigned int iter, k, bad = 0;
	size_t n = strlen(canned);
	char *text = malloc(n + 1);

	if (!text) {
		unit_fail("mutations", "out of memory");
		return;
	}
	for (iter = 0; iter < 3000 && !bad; iter++) {
		struct trace_stats st;
		struct jnode *root;
		char err[128], *out;

		memcpy(text, canned, n + 1);
		for (k = 0; k < 1 + iter % 8; k++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			text[(rng >> 33) % n] = alphabet[(rng >> 17) % (sizeof(alphabet) - 1)];
		}
		out = convert(text, iter % 5 ? 0 : 1 + iter % 13, &st, true);
		root = out ? json_parse(out, err, sizeof(err)) : NULL;
		if (!root) {
			bad++;
			printf("# iteration %u: %s\n%s\n", iter, out ? err : "convert failed",
			       text);
		} else {
			const struct jnode *evs = json_get(root, "traceEvents");
			size_t i, j;

			for (i = 0; evs && i < evs->n; i++) {
				const struct jnode *a = json_get(&evs->kids[i], "args");

				for (j = 0; a && j < a->n; j++)
					if (json_count_key(a, a->keys[j]) != 1 && !bad++)
						printf("# iteration %u: key %s twice\n", iter,
						       a->keys[j]);
			}
		}
		json_free(root);
		free(out);
	}
	free(text);
	UNIT_CHECK("mutations: 3000 damaged traces, valid JSON", !bad, "see above");
}

int main(void)
{
	test_parse();
	test_convert();
	test_summary();
	test_modeled();
	test_launch_model();
	test_format();
	test_escape_values();
	test_many_tracks();
	test_mutations();
	return unit_done();
}
