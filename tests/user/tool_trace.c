// SPDX-License-Identifier: GPL-2.0
/*
 * `dpusim trace` in the VM: the pivot example traced; its trace is valid
 * JSON (tests/unit/json_mini.h, strict), its transfer slices add up to
 * the bytes the ranks' sysfs counters moved, its DPU runs to their
 * launches counters, every timestamp falls within the run on
 * CLOCK_MONOTONIC; async jobs (this binary re-run as the traced command)
 * and tag matching (the tm_pingpong example) against their counters;
 * CMD's exit status passed through and the trace written all the same;
 * SIGINT and SIGTERM passed on (or, during the set-up, CMD not run);
 * no tracefs instance left behind, stale ones removed; --summary-only;
 * bad usage.
 *
 * Needs the module's tracepoints (kernel/trace.h): every test SKIPs when
 * tracefs has no events/dpusim.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "kselftest_harness.h"
#include "common.h"
#include "../unit/json_mini.h"

#define TOOL "build/bin/dpusim"
#define PIVOT "build/examples/pivot"
#define PINGPONG "build/examples/tm_pingpong"
#define OUT "/tmp/tool_trace.json"
#define SUMMARY "/tmp/tool_trace.txt"

#define ASYNC_HELPER "--async-helper"
#define ASYNC_TO 8	/* async jobs to the DPUs */
#define ASYNC_FROM 4	/* and back */
#define ASYNC_LEN 65536

/* The tracefs directory holding events/dpusim, or NULL. */
static const char *tracefs_dir(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing" };
	struct statfs sf;
	char path[128];
	struct stat st;
	unsigned int i;

	if (statfs(dirs[0], &sf) == 0 && sf.f_type != 0x74726163)
		mount("nodev", dirs[0], "tracefs", 0, NULL);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/dpusim", dirs[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return dirs[i];
	}
	return NULL;
}

#define NEED_TRACEPOINTS()						\
	do {								\
		if (!tracefs_dir())					\
			SKIP(return, "no dpusim tracepoints in tracefs");	\
	} while (0)

/* The tracefs instances named dpusim-* */
static int nr_instances(void)
{
	const char *base = tracefs_dir();
	char path[128];
	struct dirent *d;
	int n = 0;
	DIR *dp;

	if (!base)
		return -1;
	snprintf(path, sizeof(path), "%s/instances", base);
	dp = opendir(path);
	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		n += !strncmp(d->d_name, "dpusim-", 7);
	closedir(dp);
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t len = 0, cap = 65536, n;
	char *s = malloc(cap), *p;

	if (!f || !s) {
		if (f)
			fclose(f);
		free(s);
		return NULL;
	}
	while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			p = realloc(s, cap * 2);
			if (!p) {
				free(s);
				fclose(f);
				return NULL;
			}
			s = p;
			cap *= 2;
		}
	}
	fclose(f);
	s[len] = '\0';
	return s;
}

/* The sum over all ranks of /sys/class/dpusim/rank<N>/@attr */
static long long ranks_sum(const char *attr)
{
	long long sum = 0, v;
	unsigned int r;

	for (r = 0; r < 64; r++) {
		v = sysfs_rank_attr(r, attr);
		if (v < 0)
			break;
		sum += v;
	}
	return sum;
}

static long long tm_attr(const char *attr)
{
	char path[128], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/dpusim/tm/%s", attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] ? strtoll(buf, NULL, 10) : -1;
}

static double mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* What a trace holds. */
struct trace_sums {
	double bytes[2];		/* xfer slices: to, from DPUs */
	double modeled_ns[2];		/* their modeled_ns added up */
	unsigned int unmodeled;		/* xfer slices without modeled_ns */
	unsigned int xfers[2], async_xfers;
	unsigned int launches, faults, async_jobs, async_errors;
	unsigned int matches, rndv_matches, unexpected, rndv_reads, completions;
	unsigned int unnamed_tids;	/* events on a tid no thread_name names */
	double first_us, last_us;	/* earliest start, latest end */
	unsigned int events;
};

static bool is(const char *s, const char *want)
{
	return s && !strcmp(s, want);
}

/* Parses @path into *s; false with a message in @err if not valid. */
static bool read_trace(const char *path, struct trace_sums *s, char *err, size_t errlen)
{
	char *text = slurp(path);
	struct jnode *root;
	const struct jnode *evs;
	bool named[4096] = { false };
	size_t i;

	memset(s, 0, sizeof(*s));
	s->first_us = 1e300;
	if (!text) {
		snprintf(err, errlen, "cannot read %s", path);
		return false;
	}
	root = json_parse(text, err, errlen);
	free(text);
	if (!root)
		return false;
	evs = json_get(root, "traceEvents");
	if (!evs || evs->t != J_ARR || !is(json_str(root, "displayTimeUnit"), "ns") ||
	    !json_get(root, "otherData")) {
		snprintf(err, errlen, "no traceEvents, displayTimeUnit or otherData");
		json_free(root);
		return false;
	}
	for (i = 0; i < evs->n; i++) {
		const struct jnode *e = &evs->kids[i];
		int tid = (int)json_num(e, "tid", -1);

		if (is(json_str(e, "ph"), "M") && is(json_str(e, "name"), "thread_name") &&
		    tid >= 0 && tid < 4096)
			named[tid] = true;
	}
	for (i = 0; i < evs->n; i++) {
		const struct jnode *e = &evs->kids[i];
		const struct jnode *a = json_get(e, "args");
		const char *ph = json_str(e, "ph"), *cat = json_str(e, "cat");
		const char *name = json_str(e, "name");
		int tid = (int)json_num(e, "tid", -1);
		double ts = json_num(e, "ts", -1), dur = json_num(e, "dur", 0);

		if (is(ph, "M"))
			continue;
		s->events++;
		if (tid < 0 || tid >= 4096 || !named[tid])
			s->unnamed_tids++;
		if (ts < s->first_us)
			s->first_us = ts;
		if (ts + dur > s->last_us)
			s->last_us = ts + dur;
		if (is(ph, "X") && is(cat, "xfer")) {
			int d = is(json_str(a, "dir"), "from_dpu");

			s->bytes[d] += json_num(a, "bytes", 0);
			s->modeled_ns[d] += json_num(a, "modeled_ns", 0);
			s->unmodeled += json_num(a, "modeled_ns", -1) < 0;
			s->xfers[d]++;
			s->async_xfers += json_num(a, "async", 0) != 0;
		} else if (is(ph, "X") && is(cat, "launch")) {
			s->launches++;
		} else if (is(ph, "X") && is(cat, "async")) {
			s->async_jobs++;
			s->async_errors += json_num(a, "err", 0) != 0;
		} else if (is(ph, "i") && is(name, "fault")) {
			s->faults++;
		} else if (is(ph, "i") && is(name, "match")) {
			s->matches++;
		} else if (is(ph, "i") && is(name, "match (rendezvous)")) {
			s->matches++;
			s->rndv_matches++;
		} else if (is(ph, "i") && is(name, "unexpected")) {
			s->unexpected++;
		} else if (is(ph, "i") && is(name, "rendezvous read")) {
			s->rndv_reads++;
		} else if (is(ph, "i") && is(name, "completion")) {
			s->completions++;
		}
	}
	json_free(root);
	return true;
}

/*
 * The trace of the pivot example against the ranks' counters: bytes,
 * launches, and the modeled transfer time (each transfer's modeled_ns,
 * added up, is what sysfs counted).
 */
TEST(pivot_trace_matches_sysfs)
{
	long long to0, from0, launches0, to1, from1, launches1;
	long long mto0, mfrom0, mto1, mfrom1;
	struct trace_sums s;
	char err[256], *sum;
	double t0, t1;

	NEED_TRACEPOINTS();
	unlink(OUT);
	to0 = ranks_sum("xfer_bytes_to_dpu");
	from0 = ranks_sum("xfer_bytes_from_dpu");
	launches0 = ranks_sum("launches");
	mto0 = ranks_sum("xfer_modeled_ns_to_dpu");
	mfrom0 = ranks_sum("xfer_modeled_ns_from_dpu");
	t0 = mono_us();
	ASSERT_EQ(0, run_cmd(TOOL " trace -o " OUT " -- " PIVOT " --dpus 16 --elements-per-dpu 1000 > " SUMMARY));
	t1 = mono_us();
	to1 = ranks_sum("xfer_bytes_to_dpu");
	from1 = ranks_sum("xfer_bytes_from_dpu");
	launches1 = ranks_sum("launches");
	mto1 = ranks_sum("xfer_modeled_ns_to_dpu");
	mfrom1 = ranks_sum("xfer_modeled_ns_from_dpu");
	ASSERT_TRUE(read_trace(OUT, &s, err, sizeof(err))) TH_LOG("%s: %s", OUT, err);

	TH_LOG("trace: %u events, %u + %u transfers, %.0f + %.0f bytes, %u launches",
	       s.events, s.xfers[0], s.xfers[1], s.bytes[0], s.bytes[1], s.launches);
	EXPECT_LT(0, s.xfers[0]);
	EXPECT_LT(0, s.xfers[1]);
	EXPECT_EQ((double)(to1 - to0), s.bytes[0]);
	EXPECT_EQ((double)(from1 - from0), s.bytes[1]);
	EXPECT_EQ(0, s.unmodeled);
	EXPECT_LT(0, mto1 - mto0);
	EXPECT_EQ((double)(mto1 - mto0), s.modeled_ns[0]);
	EXPECT_EQ((double)(mfrom1 - mfrom0), s.modeled_ns[1]);
	/* one run per DPU and variant */
	EXPECT_EQ(launches1 - launches0, s.launches);
	EXPECT_EQ(32, s.launches);
	EXPECT_EQ(0, s.faults);
	EXPECT_EQ(0, s.unnamed_tids);
	/* the trace clock is CLOCK_MONOTONIC's */
	EXPECT_LE(t0, s.first_us) TH_LOG("first event %.3f us, run from %.3f", s.first_us, t0);
	EXPECT_GE(t1, s.last_us) TH_LOG("last event %.3f us, run until %.3f", s.last_us, t1);

	/* the summary after the example's own output */
	sum = slurp(SUMMARY);
	ASSERT_NE(NULL, sum);
	EXPECT_NE(NULL, strstr(sum, "pivot: OK"));
	EXPECT_NE(NULL, strstr(sum, "dpusim trace: " PIVOT " --dpus 16 --elements-per-dpu 1000 exited 0 after "))
		TH_LOG("%s", sum);
	EXPECT_NE(NULL, strstr(sum, "  launches: 32 DPU runs (")) TH_LOG("%s", sum);
	EXPECT_NE(NULL, strstr(sum, "; modeled on UPMEM hardware: ")) TH_LOG("%s", sum);
	EXPECT_NE(NULL, strstr(sum, "  trace: " OUT " (")) TH_LOG("%s", sum);
	EXPECT_EQ(NULL, strstr(sum, "lost")) TH_LOG("%s", sum);
	free(sum);
	EXPECT_EQ(0, nr_instances());
}

/* This binary, run as the traced command: async jobs on rank 0. */
static int async_helper(void)
{
	struct two_dpu_xfer t[ASYNC_TO];
	struct dpusim_sync s = { .size = sizeof(s) };
	int fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC), i, ret = 0;

	if (fd < 0) {
		perror("async helper: open");
		return 1;
	}
	for (i = 0; i < ASYNC_TO; i++) {
		if (two_dpu_xfer_init(&t[i], 2 * i, 2 * i + 1, 0, ASYNC_LEN,
				      DPUSIM_XFER_ASYNC))
			return 1;
		if (xfer(fd, &t[i].x)) {
			perror("async helper: xfer to");
			ret = 1;
		}
	}
	if (ioctl(fd, DPUSIM_IOCTL_SYNC, &s)) {
		perror("async helper: sync");
		ret = 1;
	}
	for (i = 0; i < ASYNC_FROM; i++) {
		t[i].x.flags = DPUSIM_XFER_ASYNC | DPUSIM_XFER_FROM_DPU;
		t[i].blocks[0].addr = (uintptr_t)t[i].dst;
		t[i].blocks[1].addr = (uintptr_t)(t[i].dst + ASYNC_LEN);
		if (xfer(fd, &t[i].x)) {
			perror("async helper: xfer from");
			ret = 1;
		}
	}
	if (ioctl(fd, DPUSIM_IOCTL_SYNC, &s)) {
		perror("async helper: sync");
		ret = 1;
	}
	for (i = 0; i < ASYNC_FROM; i++)
		if (memcmp(t[i].src, t[i].dst, 2 * ASYNC_LEN)) {
			fprintf(stderr, "async helper: job %d read back wrong\n", i);
			ret = 1;
		}
	for (i = 0; i < ASYNC_TO; i++)
		two_dpu_xfer_free(&t[i]);
	close(fd);
	return ret;
}

TEST(async_jobs)
{
	long long to0, from0, to1, from1;
	char err[256], self_exe[512] = "", cmd[1024];
	struct trace_sums s;

	NEED_TRACEPOINTS();
	unlink(OUT);
	ASSERT_LT(0, readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1));
	snprintf(cmd, sizeof(cmd), TOOL " trace -o " OUT " -- %s " ASYNC_HELPER " > " SUMMARY,
		 self_exe);
	to0 = ranks_sum("xfer_bytes_to_dpu");
	from0 = ranks_sum("xfer_bytes_from_dpu");
	ASSERT_EQ(0, run_cmd(cmd));
	to1 = ranks_sum("xfer_bytes_to_dpu");
	from1 = ranks_sum("xfer_bytes_from_dpu");
	ASSERT_TRUE(read_trace(OUT, &s, err, sizeof(err))) TH_LOG("%s: %s", OUT, err);
	EXPECT_EQ(ASYNC_TO + ASYNC_FROM, s.async_jobs);
	EXPECT_EQ(0, s.async_errors);
	EXPECT_EQ(ASYNC_TO + ASYNC_FROM, s.async_xfers);
	EXPECT_EQ(ASYNC_TO, s.xfers[0]);
	EXPECT_EQ(ASYNC_FROM, s.xfers[1]);
	EXPECT_EQ(2.0 * ASYNC_TO * ASYNC_LEN, s.bytes[0]);
	EXPECT_EQ(2.0 * ASYNC_FROM * ASYNC_LEN, s.bytes[1]);
	EXPECT_EQ((double)(to1 - to0), s.bytes[0]);
	EXPECT_EQ((double)(from1 - from0), s.bytes[1]);
	EXPECT_EQ(0, s.unnamed_tids);
	EXPECT_EQ(0, nr_instances());
}

TEST(tm_pingpong)
{
	long long m0 = tm_attr("matches"), u0 = tm_attr("unexpected");
	long long r0 = tm_attr("rndv_reads"), m1, u1, r1;
	struct trace_sums s;
	char err[256], *sum;

	NEED_TRACEPOINTS();
	if (m0 < 0)
		SKIP(return, "no /sys/class/dpusim/tm/matches");
	unlink(OUT);
	ASSERT_EQ(0, run_cmd(TOOL " trace -o " OUT " -- " PINGPONG " -n 20 -r 3 -s 65536 > " SUMMARY));
	m1 = tm_attr("matches");
	u1 = tm_attr("unexpected");
	r1 = tm_attr("rndv_reads");
	ASSERT_TRUE(read_trace(OUT, &s, err, sizeof(err))) TH_LOG("%s: %s", OUT, err);
	TH_LOG("%u matches (%u rendezvous), %u unexpected, %u reads, %u completions",
	       s.matches, s.rndv_matches, s.unexpected, s.rndv_reads, s.completions);
	EXPECT_EQ(m1 - m0, s.matches);
	EXPECT_EQ(u1 - u0, s.unexpected);
	EXPECT_EQ(r1 - r0, s.rndv_reads);
	EXPECT_EQ(46, s.matches);	/* 2 x (20 + 3) */
	EXPECT_EQ(6, s.rndv_matches);
	EXPECT_LT(0, s.completions);
	EXPECT_EQ(0, s.unnamed_tids);
	sum = slurp(SUMMARY);
	ASSERT_NE(NULL, sum);
	EXPECT_NE(NULL, strstr(sum, "  tm: 46 matches (6 rendezvous), 0 unexpected")) TH_LOG("%s", sum);
	free(sum);
}

/* CMD's status comes back; the trace is written whatever it is. */
TEST(exit_status_and_trace_written)
{
	struct trace_sums s;
	char err[256];

	NEED_TRACEPOINTS();
	unlink(OUT);
	EXPECT_EQ(3, run_cmd(TOOL " trace -o " OUT " -- sh -c '" PIVOT " --dpus 4 >/dev/null; exit 3' >/dev/null"));
	ASSERT_TRUE(read_trace(OUT, &s, err, sizeof(err))) TH_LOG("%s: %s", OUT, err);
	EXPECT_LT(0, s.xfers[0]);
	EXPECT_EQ(8, s.launches);

	unlink(OUT);
	EXPECT_EQ(127, run_cmd(TOOL " trace -o " OUT " -- /nonexistent/cmd >/dev/null 2>&1"));
	ASSERT_TRUE(read_trace(OUT, &s, err, sizeof(err))) TH_LOG("%s: %s", OUT, err);
	EXPECT_EQ(0, s.events);

	/* killed by a signal: 128 + N, as a shell says */
	EXPECT_EQ(128 + SIGTERM, run_cmd(TOOL " trace -o " OUT " -- sh -c 'kill -TERM $$' >/dev/null"));
	ASSERT_TRUE(read_trace(OUT, &s, err, sizeof(err))) TH_LOG("%s: %s", OUT, err);

	/* CMD without "--" */
	EXPECT_EQ(0, run_cmd(TOOL " trace -o " OUT " true >/dev/null"));
	EXPECT_EQ(0, nr_instances());
}

TEST(summary_only)
{
	char *sum;

	NEED_TRACEPOINTS();
	unlink(OUT);
	unlink("dpusim-trace.json");
	EXPECT_EQ(0, run_cmd(TOOL " trace --summary-only -- " PIVOT " --dpus 4 > " SUMMARY));
	EXPECT_EQ(-1, access(OUT, F_OK));
	EXPECT_EQ(-1, access("dpusim-trace.json", F_OK));
	sum = slurp(SUMMARY);
	ASSERT_NE(NULL, sum);
	EXPECT_NE(NULL, strstr(sum, "  launches: 8 DPU runs")) TH_LOG("%s", sum);
	EXPECT_EQ(NULL, strstr(sum, "  trace: ")) TH_LOG("%s", sum);
	free(sum);
}

/* "-o -": the trace on stdout, CMD's stdout and the summary on stderr */
TEST(output_to_stdout)
{
	struct trace_sums s;
	char err[256], *sum;

	NEED_TRACEPOINTS();
	EXPECT_EQ(0, run_cmd(TOOL " trace -o - -- " PIVOT " --dpus 4 > " OUT " 2> " SUMMARY));
	ASSERT_TRUE(read_trace(OUT, &s, err, sizeof(err))) TH_LOG("%s: %s", OUT, err);
	EXPECT_EQ(8, s.launches);
	sum = slurp(SUMMARY);
	ASSERT_NE(NULL, sum);
	EXPECT_NE(NULL, strstr(sum, "pivot: OK")) TH_LOG("%s", sum);
	EXPECT_NE(NULL, strstr(sum, "  trace: stdout (")) TH_LOG("%s", sum);
	free(sum);
}

/* A child of @parent whose comm is @comm: its pid, or 0. */
static pid_t child_named(pid_t parent, const char *comm)
{
	char path[300], buf[512], *p;
	struct dirent *d;
	pid_t found = 0;
	DIR *dp = opendir("/proc");
	FILE *f;
	int ppid;

	if (!dp)
		return 0;
	while (!found && (d = readdir(dp))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* pid (comm) state ppid ... */
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == parent &&
		    !strncmp(strchr(buf, '(') + 1, comm, strlen(comm)) &&
		    strchr(buf, '(')[1 + strlen(comm)] == ')')
			found = atoi(d->d_name);
		fclose(f);
	}
	closedir(dp);
	return found;
}

/*
 * dpusim trace gets @sig from kill() (not the terminal), once CMD runs
 * (@setup false) or as soon as its instance exists (@setup: maybe while
 * it sets the instance up): it passes the signal on to CMD or does not
 * run CMD at all, writes the trace, removes its instance and exits with
 * 128 + @sig.
 */
static void signal_forwarded(struct __test_metadata *_metadata, int sig, bool setup)
{
	char inst[160];
	struct trace_sums s;
	struct stat st;
	char err[256];
	pid_t pid;
	int i, status;

	unlink(OUT);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		execl(TOOL, "dpusim", "trace", "-o", OUT, "--", "sleep", "30", NULL);
		_exit(99);
	}
	snprintf(inst, sizeof(inst), "%s/instances/dpusim-%d", tracefs_dir(), pid);
	for (i = 0; i < 1000 && stat(inst, &st); i++)
		usleep(10000);
	ASSERT_EQ(0, stat(inst, &st)) TH_LOG("no %s", inst);
	for (i = 0; !setup && i < 1000 && !child_named(pid, "sleep"); i++)
		usleep(10000);
	ASSERT_GT(1000, i) TH_LOG("sleep did not start");
	ASSERT_EQ(0, kill(pid, sig));
	for (i = 0; i < 1000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(10000);
	}
	ASSERT_GT(1000, i) TH_LOG("dpusim trace still running");
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status 0x%x", status);
	EXPECT_EQ(128 + sig, WEXITSTATUS(status));
	EXPECT_NE(0, stat(inst, &st));
	ASSERT_TRUE(read_trace(OUT, &s, err, sizeof(err))) TH_LOG("%s: %s", OUT, err);
	EXPECT_EQ(0, child_named(pid, "sleep"));
}

TEST(sigint_forwarded)
{
	NEED_TRACEPOINTS();
	signal_forwarded(_metadata, SIGINT, false);
}

TEST(sigterm_forwarded)
{
	NEED_TRACEPOINTS();
	signal_forwarded(_metadata, SIGTERM, false);
}

TEST(sigint_during_setup)
{
	NEED_TRACEPOINTS();
	signal_forwarded(_metadata, SIGINT, true);
}

/* An instance whose dpusim trace is gone (SIGKILL) goes at the next run. */
TEST(stale_instance_removed)
{
	char inst[160];
	struct stat st;

	NEED_TRACEPOINTS();
	snprintf(inst, sizeof(inst), "%s/instances/dpusim-4194303", tracefs_dir());
	ASSERT_EQ(0, mkdir(inst, 0700));
	EXPECT_EQ(0, run_cmd(TOOL " trace --summary-only -- true >/dev/null 2>&1"));
	EXPECT_NE(0, stat(inst, &st));
	if (stat(inst, &st) == 0)
		rmdir(inst);
	EXPECT_EQ(0, nr_instances());
}

TEST(bad_usage)
{
	EXPECT_EQ(2, run_cmd(TOOL " trace 2>/dev/null"));
	EXPECT_EQ(2, run_cmd(TOOL " trace -- 2>/dev/null"));
	EXPECT_EQ(2, run_cmd(TOOL " trace -o 2>/dev/null"));
	EXPECT_EQ(2, run_cmd(TOOL " trace --bogus -- true 2>/dev/null"));
	EXPECT_EQ(0, run_cmd(TOOL " trace --help >/dev/null"));
	EXPECT_EQ(0, run_cmd(TOOL " --help | grep -q '^  trace '"));
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], ASYNC_HELPER))
		return async_helper();
	return test_harness_run(argc, argv);
}
