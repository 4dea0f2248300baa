// SPDX-License-Identifier: GPL-2.0
/*
 * The dpusim tool in the VM: `dpusim stat` (every counter of every rank
 * and of the tag-matching device, once or sampled, text or JSON Lines)
 * and `dpusim top` (a live view: on a pseudo-terminal, with stdin a pipe
 * or /dev/null, stopped by q, Ctrl-C, SIGTERM or -n).  The JSON is checked
 * by a small parser here, not by an outside program.
 */
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <time.h>

#include <dpu.h>

#include "kselftest_harness.h"
#include "common.h"

#define TOOL "build/bin/dpusim"
#define HEAP DPU_MRAM_HEAP_POINTER_NAME
#define NR_RANKS 4

static const char *const rank_counters[] = {
	"xfer_ioctls", "xfer_bytes_to_dpu", "xfer_bytes_from_dpu",
	"xfer_blocks", "launches", "faults", "xfer_guest_ns_to_dpu",
	"xfer_modeled_ns_to_dpu", "xfer_guest_ns_from_dpu",
	"xfer_modeled_ns_from_dpu", NULL
};

static const char *const rank_gauges[] = {
	"nr_dpus", "is_owned", "owner_pid", "mram_resident_bytes",
	"wram_resident_bytes", "stream_resident_bytes", "pinned_pages",
	"async_jobs", "async_blocks", "async_bytes", "async_pages",
	"dpu_state", NULL
};

static const char *const tm_counters[] = {
	"messages", "matches", "unexpected", "syncs", "rndv_reads", "bytes",
	"no_tag", "fins", "overruns", "contexts", "mrs", "pinned_pages", NULL
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ tiny JSON */

/*
 * A validating skipper over RFC 8259 JSON: each json_skip_* moves *p past
 * one item and returns false on a syntax error.  The lookups below walk a
 * document with it, no tree built.
 */
static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static bool json_skip_value(const char **p, int depth);

static bool json_skip_string(const char **p)
{
	const char *s = *p;

	if (*s++ != '"')
		return false;
	for (;;) {
		unsigned char c = (unsigned char)*s++;

		if (c == '"')
			break;
		if (c < 0x20)		/* includes the terminating NUL */
			return false;
		if (c == '\\') {
			c = (unsigned char)*s++;
			if (c == 'u') {
				int i;

				for (i = 0; i < 4; i++, s++)
					if (!((*s >= '0' && *s <= '9') ||
					      (*s >= 'a' && *s <= 'f') ||
					      (*s >= 'A' && *s <= 'F')))
						return false;
			} else if (!strchr("\"\\/bfnrt", c) || !c) {
				return false;
			}
		}
	}
	*p = s;
	return true;
}

static bool json_digits(const char **p)
{
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	*p = s;
	return true;
}

static bool json_skip_number(const char **p)
{
	const char *s = *p;

	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (!json_digits(&s))
		return false;
	if (*s == '.') {
		s++;
		if (!json_digits(&s))
			return false;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!json_digits(&s))
			return false;
	}
	*p = s;
	return true;
}

static bool json_skip_value(const char **p, int depth)
{
	const char *s = json_ws(*p);

	if (depth > 64)
		return false;
	if (*s == '{' || *s == '[') {
		char close = *s == '{' ? '}' : ']';
		bool object = *s == '{';

		s = json_ws(s + 1);
		if (*s == close) {
			*p = s + 1;
			return true;
		}
		for (;;) {
			if (object) {
				if (!json_skip_string(&s))
					return false;
				s = json_ws(s);
				if (*s++ != ':')
					return false;
			}
			if (!json_skip_value(&s, depth + 1))
				return false;
			s = json_ws(s);
			if (*s == ',') {
				s = json_ws(s + 1);
				continue;
			}
			if (*s++ != close)
				return false;
			*p = s;
			return true;
		}
	}
	if (*s == '"') {
		if (!json_skip_string(&s))
			return false;
	} else if (!strncmp(s, "true", 4)) {
		s += 4;
	} else if (!strncmp(s, "false", 5)) {
		s += 5;
	} else if (!strncmp(s, "null", 4)) {
		s += 4;
	} else if (!json_skip_number(&s)) {
		return false;
	}
	*p = s;
	return true;
}

/* The whole of [s, s + len) is exactly one JSON value. */
static bool json_valid(const char *s)
{
	const char *p = s;

	if (!json_skip_value(&p, 0))
		return false;
	return *json_ws(p) == '\0';
}

/* The value of member @key of the object at @obj, or NULL. */
static const char *json_get(const char *obj, const char *key)
{
	const char *s = json_ws(obj), *k, *v;
	size_t klen = strlen(key);

	if (*s != '{')
		return NULL;
	s = json_ws(s + 1);
	while (*s == '"') {
		k = s + 1;
		if (!json_skip_string(&s))
			return NULL;
		s = json_ws(s);
		if (*s++ != ':')
			return NULL;
		v = json_ws(s);
		if ((size_t)(s - k) >= klen + 2 && !strncmp(k, key, klen) &&
		    k[klen] == '"')
			return v;
		if (!json_skip_value(&s, 0))
			return NULL;
		s = json_ws(s);
		if (*s != ',')
			return NULL;
		s = json_ws(s + 1);
	}
	return NULL;
}

/* Element @i of the array at @arr, or NULL. */
static const char *json_at(const char *arr, unsigned int i)
{
	const char *s = json_ws(arr);

	if (*s != '[')
		return NULL;
	s = json_ws(s + 1);
	if (*s == ']')
		return NULL;
	for (;;) {
		if (!i--)
			return s;
		if (!json_skip_value(&s, 0))
			return NULL;
		s = json_ws(s);
		if (*s != ',')
			return NULL;
		s = json_ws(s + 1);
	}
}

static unsigned int json_len(const char *arr)
{
	unsigned int n = 0;

	while (json_at(arr, n))
		n++;
	return n;
}

/* An unsigned integer value; false for anything else (null, 1.5, "x"). */
static bool json_u64(const char *v, unsigned long long *out)
{
	char *end;

	if (!v || *v < '0' || *v > '9')
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return !errno && (*end == ',' || *end == '}' || *end == ']' ||
			  *end == ' ' || *end == '\n' || !*end);
}

static bool json_is_number(const char *v)
{
	const char *p = v;

	return v && json_skip_number(&p);
}

/* The object of rank @index in the "ranks" array of a sample. */
static const char *json_rank(const char *sample, unsigned int index)
{
	const char *ranks = json_get(sample, "ranks"), *r;
	unsigned long long n;
	unsigned int i;

	for (i = 0; ranks && (r = json_at(ranks, i)); i++)
		if (json_u64(json_get(r, "rank"), &n) && n == index)
			return r;
	return NULL;
}

static unsigned long long rank_value(const char *sample, unsigned int index,
				     const char *key)
{
	unsigned long long v = ~0ULL;

	json_u64(json_get(json_rank(sample, index), key), &v);
	return v;
}

/* ------------------------------------------------------------- processes */

/* Run a command and capture up to len-1 bytes of its stdout. */
static int capture(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0, r;
	int st;

	if (!p)
		return -1;
	while (n < len - 1 && (r = fread(buf + n, 1, len - 1 - n, p)) > 0)
		n += r;
	buf[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The tool with @args (NULL-terminated), stdin/stdout/stderr as given. */
static pid_t spawn_tool(const char *const *args, int in, int out, int err)
{
	const char *argv[16] = { TOOL };
	unsigned int n = 1;
	pid_t pid;

	while (*args && n < ARRAY_LEN(argv) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	pid = fork();
	if (pid)
		return pid;
	if (in >= 0)
		dup2(in, 0);
	if (out >= 0)
		dup2(out, 1);
	if (err >= 0)
		dup2(err, 2);
	execv(TOOL, (char *const *)argv);
	_exit(127);
}

/* Exit status of @pid within @timeout seconds; else kill it, -1. */
static int wait_exit(pid_t pid, double timeout)
{
	double end = now_s() + timeout;
	int st;

	while (now_s() < end) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		if (r < 0)
			return -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/*
 * Read from @fd into buf (appending at *len) until @needle appears in it
 * after offset @from, or @timeout seconds pass.  True if it appeared.
 */
static bool read_until_from(int fd, char *buf, size_t cap, size_t *len,
			    size_t from, const char *needle, double timeout)
{
	double end = now_s() + timeout;

	while (!strstr(buf + from, needle)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = end - now_s();
		ssize_t n;

		if (left <= 0 || *len >= cap - 1)
			return false;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		n = read(fd, buf + *len, cap - 1 - *len);
		if (n <= 0)
			return false;
		*len += (size_t)n;
		buf[*len] = '\0';
	}
	return true;
}

static bool read_until(int fd, char *buf, size_t cap, size_t *len,
		       const char *needle, double timeout)
{
	return read_until_from(fd, buf, cap, len, 0, needle, timeout);
}

/* What a pseudo-terminal run of `dpusim top` saw. */
struct pty_run {
	int status;			/* exit status, -1 if none */
	struct termios before, during, after;	/* of the slave */
	struct termios resumed;		/* after Ctrl-Z or SIGSTOP, SIGCONT */
	bool redrawn;			/* it set the terminal up again */
	bool first_frame;		/* a frame appeared */
	char out[65536];		/* what it printed */
	size_t len;
	double seconds;			/* from the first frame to the exit */
};

enum pty_stop {
	STOP_Q, STOP_CTRL_C, STOP_SIGTERM, STOP_N,
	STOP_CTRL_Z_Q,		/* Ctrl-Z first (not stopped: orphaned) */
	STOP_SIGSTOP_Q,		/* SIGSTOP, tty reset as a shell does, SIGCONT */
};

/*
 * `dpusim top -d 0.2` (with -n 3 for STOP_N) on a new pseudo-terminal,
 * its controlling terminal; after the first frame, stop it as @how says.
 * Only libc: posix_openpt, not openpty (-lutil).  The child is a session
 * leader whose parent is in another session: its process group is
 * orphaned, so the kernel does not stop it on Ctrl-Z.
 */
static int run_top_on_pty(enum pty_stop how, struct pty_run *res)
{
	int master, slave;
	const char *name;
	double t0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	res->status = -1;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master))
		return -1;
	name = ptsname(master);
	if (!name)
		return -1;
	/* kept open here: the slave's settings outlive the child */
	slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0 || tcgetattr(slave, &res->before))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd;

		setsid();
		fd = open(name, O_RDWR);	/* the controlling terminal */
		if (fd < 0)
			_exit(126);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (how == STOP_N)
			execl(TOOL, TOOL, "top", "-d", "0.2", "-n", "3", (char *)NULL);
		else
			execl(TOOL, TOOL, "top", "-d", "0.2", (char *)NULL);
		_exit(127);
	}
	res->first_frame = read_until(master, res->out, sizeof(res->out),
				      &res->len, "RANK", 10);
	t0 = now_s();
	tcgetattr(slave, &res->during);
	if (res->first_frame) {
		switch (how) {
		case STOP_Q:
			write(master, "q", 1);
			break;
		case STOP_CTRL_C:
			write(master, "\003", 1);	/* VINTR: SIGINT */
			break;
		case STOP_SIGTERM:
			kill(pid, SIGTERM);
			break;
		case STOP_N:
			break;
		case STOP_CTRL_Z_Q:
		case STOP_SIGSTOP_Q: {
			size_t from = res->len;
			int st;

			if (how == STOP_CTRL_Z_Q) {
				write(master, "\032", 1);	/* VSUSP: SIGTSTP */
			} else {
				kill(pid, SIGSTOP);
				waitpid(pid, &st, WUNTRACED);
				tcsetattr(slave, TCSANOW, &res->before);
				kill(pid, SIGCONT);
			}
			/* the cursor hidden again: set up again */
			res->redrawn = read_until_from(master, res->out,
						       sizeof(res->out),
						       &res->len, from,
						       "\033[?25l", 5);
			tcgetattr(slave, &res->resumed);
			write(master, "q", 1);
			break;
		}
		}
	}
	/* keep reading, so the child never blocks writing */
	for (;;) {
		struct pollfd pfd = { .fd = master, .events = POLLIN };
		pid_t r;
		int st;

		r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			res->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
			break;
		}
		if (now_s() - t0 > 10) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		if (poll(&pfd, 1, 20) > 0) {
			ssize_t n;

			if (res->len >= sizeof(res->out) - 1)
				res->len = 0;	/* only the end matters */
			n = read(master, res->out + res->len,
				 sizeof(res->out) - 1 - res->len);
			if (n > 0) {
				res->len += (size_t)n;
				res->out[res->len] = '\0';
			}
		}
	}
	res->seconds = now_s() - t0;
	/* what the child wrote last, before it exited */
	for (;;) {
		struct pollfd pfd = { .fd = master, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 50) <= 0 || res->len >= sizeof(res->out) - 1)
			break;
		n = read(master, res->out + res->len,
			 sizeof(res->out) - 1 - res->len);
		if (n <= 0)
			break;
		res->len += (size_t)n;
		res->out[res->len] = '\0';
	}
	tcgetattr(slave, &res->after);
	close(slave);
	close(master);
	return 0;
}

static unsigned int count_str(const char *hay, const char *needle)
{
	unsigned int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* ------------------------------------------------------------------ stat */

TEST(stat_json_once)
{
	static char out[1 << 16];
	const char *tm, *r, *nl;
	unsigned int i, k;

	ASSERT_EQ(0, capture(TOOL " stat --json", out, sizeof(out)));
	/* one line: one sample */
	nl = strchr(out, '\n');
	ASSERT_NE(NULL, nl);
	EXPECT_EQ('\0', nl[1]);
	ASSERT_TRUE(json_valid(out)) TH_LOG("not JSON:\n%s", out);
	EXPECT_TRUE(json_is_number(json_get(out, "time")));
	ASSERT_EQ(NR_RANKS, json_len(json_get(out, "ranks")));
	for (i = 0; i < NR_RANKS; i++) {
		r = json_rank(out, i);
		ASSERT_NE(NULL, r) TH_LOG("rank %u missing", i);
		for (k = 0; rank_counters[k]; k++) {
			unsigned long long v;

			/* same value as sysfs, nobody transfers meanwhile */
			EXPECT_TRUE(json_u64(json_get(r, rank_counters[k]), &v))
				TH_LOG("rank %u: no %s", i, rank_counters[k]);
			EXPECT_EQ(sysfs_rank_attr(i, rank_counters[k]), (long long)v);
		}
		for (k = 0; rank_gauges[k]; k++) {
			const char *g = rank_gauges[k];

			EXPECT_NE(NULL, json_get(r, g))
				TH_LOG("rank %u: no %s", i, g ? g : "?");
		}
		EXPECT_EQ(64, rank_value(out, i, "nr_dpus"));
		EXPECT_EQ(64, json_len(json_get(r, "dpu_state")));
		EXPECT_NE(NULL, json_get(r, "devnode"));
		/* the first sample has nothing to compute rates from */
		EXPECT_EQ(NULL, json_get(r, "rates"));
	}
	tm = json_get(out, "tm");
	ASSERT_NE(NULL, tm);
	ASSERT_EQ('{', *tm) TH_LOG("tm is not an object: %.20s", tm);
	for (k = 0; tm_counters[k]; k++) {
		unsigned long long v;

		EXPECT_TRUE(json_u64(json_get(tm, tm_counters[k]), &v))
			TH_LOG("tm: no %s", tm_counters[k]);
	}
}

/* The JSON checker itself: it must reject what is not JSON. */
TEST(json_checker)
{
	EXPECT_TRUE(json_valid("{\"a\": [1, -2.5e3, true, null, \"x\\n\"]}"));
	EXPECT_TRUE(json_valid(" [] "));
	EXPECT_FALSE(json_valid("{\"a\": 1,}"));
	EXPECT_FALSE(json_valid("{\"a\" 1}"));
	EXPECT_FALSE(json_valid("[1 2]"));
	EXPECT_FALSE(json_valid("{\"a\": 01}"));
	EXPECT_FALSE(json_valid("{\"a\": nan}"));
	EXPECT_FALSE(json_valid("{\"a\": \"\\q\"}"));
	EXPECT_FALSE(json_valid("{} {}"));
	EXPECT_FALSE(json_valid("[1"));
	EXPECT_FALSE(json_valid(""));
}

/*
 * A known transfer on the rank this process owns: 16 KiB to each of 64
 * DPUs (1 MiB), 8 bytes back from one; the samples before and after differ
 * by exactly that on that rank, and by nothing on the others.  The same
 * transfer again adds the same modeled time (a function of the calls
 * alone), and some modeled time in each direction.
 */
TEST(stat_counters_move)
{
	static char before[1 << 16], after[1 << 16], again[1 << 16];
	const size_t per_dpu = 16384;
	struct dpu_set_t set, dpu;
	unsigned long long b, a, m_to, m_from;
	unsigned int r, mine = NR_RANKS;
	uint64_t back;
	void *buf;

	buf = calloc(1, per_dpu);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, per_dpu);
	ASSERT_EQ(DPU_OK, dpu_alloc(64, NULL, &set));
	for (r = 0; r < NR_RANKS; r++)
		if (sysfs_rank_attr(r, "owner_pid") == getpid())
			mine = r;
	ASSERT_LT(mine, NR_RANKS);

	ASSERT_EQ(0, capture(TOOL " stat --json", before, sizeof(before)));
	ASSERT_TRUE(json_valid(before));
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, HEAP, 0, buf, per_dpu,
					   DPU_XFER_DEFAULT));
	DPU_FOREACH(set, dpu) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, HEAP, 0, &back, 8));
		break;
	}
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aULL, back);
	ASSERT_EQ(0, capture(TOOL " stat --json", after, sizeof(after)));
	ASSERT_TRUE(json_valid(after));

	b = rank_value(before, mine, "xfer_bytes_to_dpu");
	a = rank_value(after, mine, "xfer_bytes_to_dpu");
	ASSERT_NE(~0ULL, b);
	EXPECT_EQ(64 * per_dpu, a - b);
	EXPECT_EQ(8, rank_value(after, mine, "xfer_bytes_from_dpu") -
		     rank_value(before, mine, "xfer_bytes_from_dpu"));
	EXPECT_LE(2, rank_value(after, mine, "xfer_ioctls") -
		     rank_value(before, mine, "xfer_ioctls"));
	EXPECT_LE(65, rank_value(after, mine, "xfer_blocks") -
		      rank_value(before, mine, "xfer_blocks"));
	/* the owner, as the gauges see it */
	EXPECT_EQ((unsigned long long)getpid(),
		  rank_value(after, mine, "owner_pid"));
	EXPECT_EQ(0, strncmp(json_get(json_rank(after, mine), "is_owned"),
			     "true", 4));
	for (r = 0; r < NR_RANKS; r++) {
		if (r == mine)
			continue;
		EXPECT_EQ(rank_value(before, r, "xfer_bytes_to_dpu"),
			  rank_value(after, r, "xfer_bytes_to_dpu"));
		EXPECT_EQ(rank_value(before, r, "xfer_modeled_ns_to_dpu"),
			  rank_value(after, r, "xfer_modeled_ns_to_dpu"));
	}

	m_to = rank_value(after, mine, "xfer_modeled_ns_to_dpu") -
	       rank_value(before, mine, "xfer_modeled_ns_to_dpu");
	m_from = rank_value(after, mine, "xfer_modeled_ns_from_dpu") -
		 rank_value(before, mine, "xfer_modeled_ns_from_dpu");
	EXPECT_LT(0, m_to);
	EXPECT_LT(0, m_from);
	EXPECT_NE(~0ULL, rank_value(after, mine, "xfer_guest_ns_to_dpu"));
	EXPECT_NE(~0ULL, rank_value(after, mine, "xfer_guest_ns_from_dpu"));
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, HEAP, 0, buf, per_dpu,
					   DPU_XFER_DEFAULT));
	DPU_FOREACH(set, dpu) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, HEAP, 0, &back, 8));
		break;
	}
	ASSERT_EQ(0, capture(TOOL " stat --json", again, sizeof(again)));
	ASSERT_TRUE(json_valid(again));
	EXPECT_EQ(m_to, rank_value(again, mine, "xfer_modeled_ns_to_dpu") -
			rank_value(after, mine, "xfer_modeled_ns_to_dpu"));
	EXPECT_EQ(m_from, rank_value(again, mine, "xfer_modeled_ns_from_dpu") -
			  rank_value(after, mine, "xfer_modeled_ns_from_dpu"));
	ASSERT_EQ(DPU_OK, dpu_free(set));
	free(buf);
}

/* Two samples a second apart: two lines, rates in the second. */
TEST(stat_watch_json)
{
	static char out[1 << 17];
	const char *line2, *r, *rates;
	unsigned long long n;
	double t1, t2, start = now_s();
	unsigned int i, k;
	char *nl;

	ASSERT_EQ(0, capture(TOOL " stat -w 1 -c 2 --json", out, sizeof(out)));
	EXPECT_LE(0.9, now_s() - start);
	EXPECT_EQ(2, count_str(out, "\n"));
	nl = strchr(out, '\n');
	ASSERT_NE(NULL, nl);
	*nl = '\0';
	line2 = nl + 1;
	ASSERT_TRUE(json_valid(out)) TH_LOG("line 1 not JSON:\n%s", out);
	ASSERT_TRUE(json_valid(line2)) TH_LOG("line 2 not JSON:\n%s", line2);
	t1 = strtod(json_get(out, "time"), NULL);
	t2 = strtod(json_get(line2, "time"), NULL);
	EXPECT_LE(0.9, t2 - t1);
	EXPECT_GE(3.0, t2 - t1);
	ASSERT_EQ(NR_RANKS, json_len(json_get(line2, "ranks")));
	for (i = 0; i < NR_RANKS; i++) {
		EXPECT_EQ(NULL, json_get(json_rank(out, i), "rates"));
		r = json_rank(line2, i);
		ASSERT_NE(NULL, r);
		rates = json_get(r, "rates");
		ASSERT_NE(NULL, rates) TH_LOG("rank %u: no rates", i);
		for (k = 0; rank_counters[k]; k++) {
			const char *c = rank_counters[k];

			EXPECT_TRUE(json_is_number(json_get(rates, c)))
				TH_LOG("rank %u: no rate of %s", i, c ? c : "?");
		}
		/* nothing moved meanwhile */
		EXPECT_TRUE(json_u64(json_get(r, "xfer_ioctls"), &n));
	}
	rates = json_get(json_get(line2, "tm"), "rates");
	ASSERT_NE(NULL, rates);
	EXPECT_TRUE(json_is_number(json_get(rates, "matches")));
	EXPECT_TRUE(json_is_number(json_get(rates, "bytes")));
}

TEST(stat_text_lists_every_rank)
{
	static char out[1 << 16];
	char want[64];
	unsigned int r;

	ASSERT_EQ(0, capture(TOOL " stat", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "XFER_IOCTLS")) TH_LOG("in:\n%s", out);
	EXPECT_NE(NULL, strstr(out, "BYTES_TO_DPU"));
	EXPECT_NE(NULL, strstr(out, "TO_DPU_GUEST_MS"));
	EXPECT_NE(NULL, strstr(out, "TO_DPU_MODELED_MS"));
	EXPECT_NE(NULL, strstr(out, "FROM_DPU_MODELED_MS"));
	for (r = 0; r < NR_RANKS; r++) {
		snprintf(want, sizeof(want), "/dev/dpusim/rank%u", r);
		EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s missing in:\n%s", want, out);
		snprintf(want, sizeof(want), "\n%u ", r);
		EXPECT_LE(2, count_str(out, want)) TH_LOG("rank %u rows in:\n%s", r, out);
	}
	EXPECT_NE(NULL, strstr(out, "idle 64"));
	EXPECT_NE(NULL, strstr(out, "tm /dev/dpusim/tm"));
	EXPECT_NE(NULL, strstr(out, "overruns"));
	/* no rates in a single sample; no escapes off a terminal */
	EXPECT_EQ(NULL, strstr(out, "/s "));
	EXPECT_EQ(NULL, strchr(out, '\033'));

	ASSERT_EQ(0, capture(TOOL " stat -w 0.3 -c 2", out, sizeof(out)));
	EXPECT_EQ(2, count_str(out, "dpusim stat: sample"));
	EXPECT_EQ(NR_RANKS + 1, count_str(out, "\n  /s ")) TH_LOG("in:\n%s", out);
}

/*
 * SIGINT or SIGTERM while waiting for the next sample: exit 0.  With an
 * interval shorter than a sample takes, it never really waits: the signal
 * must still be seen.
 */
static void stat_signal(struct __test_metadata *_metadata, int sig,
			const char *interval)
{
	const char *const args[] = { "stat", "-w", interval, "--json", NULL };
	char buf[1 << 16] = "";
	size_t len = 0;
	int p[2];
	pid_t pid;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	pid = spawn_tool(args, -1, p[1], -1);
	ASSERT_LT(0, pid);
	close(p[1]);
	ASSERT_TRUE(read_until(p[0], buf, sizeof(buf), &len, "\n", 10));
	ASSERT_EQ(0, kill(pid, sig));
	/* to the end of its output: it never waits on a full pipe */
	while (read_until(p[0], buf, sizeof(buf), &len, "no such text", 5))
		;
	EXPECT_EQ(0, wait_exit(pid, 5));
	close(p[0]);
}

TEST(stat_sigint_sigterm)
{
	stat_signal(_metadata, SIGINT, "0.2");
	stat_signal(_metadata, SIGTERM, "0.2");
	stat_signal(_metadata, SIGINT, "0.0001");
}

/* ------------------------------------------------------------------- top */

static void expect_tty_restored(struct __test_metadata *_metadata,
				const struct pty_run *res)
{
	tcflag_t m = ICANON | ECHO;

	EXPECT_EQ(m, res->before.c_lflag & m);
	/* while it ran: no line editing, no echo */
	EXPECT_EQ(0, res->during.c_lflag & m);
	EXPECT_EQ(res->before.c_lflag & m, res->after.c_lflag & m);
	EXPECT_EQ(res->before.c_lflag, res->after.c_lflag);
	EXPECT_EQ(0, memcmp(res->before.c_cc, res->after.c_cc,
			    sizeof(res->before.c_cc)));
	/* a redrawn screen, and the cursor given back */
	EXPECT_NE(NULL, strstr(res->out, "\033[H"));
	EXPECT_NE(NULL, strstr(res->out, "\033[?25h"));
}

TEST(top_pty_q)
{
	static struct pty_run res;

	ASSERT_EQ(0, run_top_on_pty(STOP_Q, &res));
	ASSERT_TRUE(res.first_frame) TH_LOG("no frame in:\n%s", res.out);
	EXPECT_EQ(0, res.status);
	EXPECT_GT(3.0, res.seconds);
	expect_tty_restored(_metadata, &res);
	EXPECT_NE(NULL, strstr(res.out, "q to quit"));
}

TEST(top_pty_ctrl_c)
{
	static struct pty_run res;

	ASSERT_EQ(0, run_top_on_pty(STOP_CTRL_C, &res));
	ASSERT_TRUE(res.first_frame) TH_LOG("no frame in:\n%s", res.out);
	EXPECT_EQ(0, res.status);
	EXPECT_GT(3.0, res.seconds);
	expect_tty_restored(_metadata, &res);
}

TEST(top_pty_sigterm)
{
	static struct pty_run res;

	ASSERT_EQ(0, run_top_on_pty(STOP_SIGTERM, &res));
	ASSERT_TRUE(res.first_frame) TH_LOG("no frame in:\n%s", res.out);
	EXPECT_EQ(0, res.status);
	EXPECT_GT(3.0, res.seconds);
	expect_tty_restored(_metadata, &res);
}

/* Ctrl-Z: the terminal given back, then taken again (not stopped here) */
TEST(top_pty_ctrl_z)
{
	static struct pty_run res;

	ASSERT_EQ(0, run_top_on_pty(STOP_CTRL_Z_Q, &res));
	ASSERT_TRUE(res.first_frame) TH_LOG("no frame in:\n%s", res.out);
	EXPECT_TRUE(res.redrawn);
	EXPECT_EQ(0, res.resumed.c_lflag & (ICANON | ECHO));
	EXPECT_EQ(0, res.status);
	expect_tty_restored(_metadata, &res);
}

/* Stopped, the tty reset by someone else, continued: raw again, q works */
TEST(top_pty_sigstop_sigcont)
{
	static struct pty_run res;

	ASSERT_EQ(0, run_top_on_pty(STOP_SIGSTOP_Q, &res));
	ASSERT_TRUE(res.first_frame) TH_LOG("no frame in:\n%s", res.out);
	EXPECT_TRUE(res.redrawn);
	EXPECT_EQ(0, res.resumed.c_lflag & (ICANON | ECHO));
	EXPECT_EQ(0, res.status);
	expect_tty_restored(_metadata, &res);
}

TEST(top_pty_iterations)
{
	static struct pty_run res;

	ASSERT_EQ(0, run_top_on_pty(STOP_N, &res));
	ASSERT_TRUE(res.first_frame) TH_LOG("no frame in:\n%s", res.out);
	EXPECT_EQ(0, res.status);
	expect_tty_restored(_metadata, &res);
	EXPECT_EQ(3, count_str(res.out, "dpusim top - "));
}

TEST(top_stdin_pipe_q)
{
	char out[1 << 14];
	double start = now_s();

	ASSERT_EQ(0, capture("printf q | timeout -s KILL 10 " TOOL " top -d 0.2",
			     out, sizeof(out)));
	EXPECT_GT(3.0, now_s() - start);
	EXPECT_EQ(1, count_str(out, "dpusim top - "));
	EXPECT_EQ(NULL, strchr(out, '\033'));
	/* frames faster than it can sample: the key still seen */
	ASSERT_EQ(0, run_cmd("(sleep 0.5; printf q) | timeout -s KILL 10 " TOOL
			     " top -d 0.0001 >/dev/null"));
}

/* stdin at EOF from the start: three frames 0.2 s apart, plain text */
TEST(top_stdin_devnull)
{
	static char out[1 << 15];
	double start = now_s(), wall;
	unsigned int r;
	char want[32];

	ASSERT_EQ(0, capture("timeout -s KILL 10 " TOOL " top -d 0.2 -n 3 </dev/null",
			     out, sizeof(out)));
	wall = now_s() - start;
	EXPECT_LE(0.38, wall);
	EXPECT_GT(5.0, wall);
	EXPECT_EQ(3, count_str(out, "dpusim top - ")) TH_LOG("in:\n%s", out);
	/* plain frames, apart by an empty line */
	EXPECT_EQ(NULL, strchr(out, '\033'));
	EXPECT_EQ(2, count_str(out, "\n\ndpusim top - "));
	for (r = 0; r < NR_RANKS; r++) {
		snprintf(want, sizeof(want), "\n    %u free ", r);
		EXPECT_EQ(3, count_str(out, want)) TH_LOG("rank %u in:\n%s", r, out);
	}
	EXPECT_EQ(3, count_str(out, "\ntm: matches/s "));
	EXPECT_NE(NULL, strstr(out, "overruns"));
}

/* CPU seconds (user + system) that process @pid has used; -1 on error */
static double proc_cpu_s(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "(comm)": state, then utime and stime are fields 14, 15 */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

/*
 * stdin at EOF (/dev/null, always readable): waiting for the next frame
 * must sleep, not poll stdin in a loop.  Its CPU time over a second of
 * waiting, from /proc, stays near zero.
 */
TEST(top_stdin_eof_no_busy_loop)
{
	static const char *const args[] = { "top", "-d", "2", "-n", "2", NULL };
	char out[1 << 14] = "";
	double c0, c1;
	size_t len = 0;
	int p[2], devnull;
	pid_t pid;

	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, devnull);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	pid = spawn_tool(args, devnull, p[1], -1);
	ASSERT_LT(0, pid);
	close(p[1]);
	ASSERT_TRUE(read_until(p[0], out, sizeof(out), &len, "\ntm:", 10));
	usleep(100000);
	c0 = proc_cpu_s(pid);
	usleep(1000000);
	c1 = proc_cpu_s(pid);
	ASSERT_LE(0, c0);
	EXPECT_GT(0.2, c1 - c0) TH_LOG("%.2f s CPU in 1 s of waiting", c1 - c0);
	read_until(p[0], out, sizeof(out), &len, "no such text", 5);
	EXPECT_EQ(0, wait_exit(pid, 5));
	EXPECT_EQ(2, count_str(out, "dpusim top - "));
	close(p[0]);
	close(devnull);
}

/* The busiest rank first; its owner and its bytes per second. */
TEST(top_sorts_by_bytes)
{
	static const char *const args[] = { "top", "-d", "1", "-n", "2", NULL };
	static char out[1 << 15];
	const size_t per_dpu = 1 << 16;
	struct dpu_set_t set;
	unsigned int r, mine = NR_RANKS, i;
	char want[64], *frame2, *rank_line;
	size_t len = 0;
	double t0;
	void *buf;
	int p[2], devnull;
	pid_t pid;

	buf = calloc(1, per_dpu);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(DPU_OK, dpu_alloc(64, NULL, &set));
	for (r = 0; r < NR_RANKS; r++)
		if (sysfs_rank_attr(r, "owner_pid") == getpid())
			mine = r;
	ASSERT_LT(mine, NR_RANKS);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, devnull);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	pid = spawn_tool(args, devnull, p[1], -1);
	ASSERT_LT(0, pid);
	close(p[1]);
	/* the first frame out: 4 MiB at a time for up to 0.4 s */
	ASSERT_TRUE(read_until(p[0], out, sizeof(out), &len, "\ntm:", 10));
	t0 = now_s();
	for (i = 0; i < 8 && now_s() - t0 < 0.4; i++)
		ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, HEAP, 0, buf, per_dpu,
						   DPU_XFER_DEFAULT));
	read_until(p[0], out, sizeof(out), &len, "no such text", 5);
	EXPECT_EQ(0, wait_exit(pid, 5));
	close(p[0]);
	close(devnull);
	frame2 = strstr(out, "frame 2");
	ASSERT_NE(NULL, frame2) TH_LOG("in:\n%s", out);
	rank_line = strstr(frame2, "FAULTS (NEW)");
	ASSERT_NE(NULL, rank_line);
	rank_line = strchr(rank_line, '\n');
	ASSERT_NE(NULL, rank_line);
	snprintf(want, sizeof(want), "\n    %u pid %d ", mine, getpid());
	EXPECT_EQ(0, strncmp(rank_line, want, strlen(want)))
		TH_LOG("%s not first in:\n%s", want, frame2);
	EXPECT_NE(NULL, strstr(rank_line, "MiB")) TH_LOG("in:\n%s", frame2);
	ASSERT_EQ(DPU_OK, dpu_free(set));
	free(buf);
}

TEST(bad_usage)
{
	static const char *const bad[] = {
		"stat --bogus", "stat -w 0", "stat -w -1", "stat -w abc",
		"stat -w", "stat -c 0", "stat -c -2", "stat -c", "stat -c 1x",
		"stat extra", "stat -w nan", "stat -w inf",
		"top --bogus", "top -d 0", "top -d -0.5", "top -d x", "top -d",
		"top -n 0", "top -n", "top -n 2.5", "top extra",
	};
	char cmd[128];
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		snprintf(cmd, sizeof(cmd), TOOL " %s </dev/null >/dev/null 2>&1",
			 bad[i]);
		EXPECT_EQ(2, run_cmd(cmd)) TH_LOG("%s", cmd);
	}
	EXPECT_EQ(0, run_cmd(TOOL " stat --help >/dev/null"));
	EXPECT_EQ(0, run_cmd(TOOL " top -h >/dev/null"));
	EXPECT_EQ(0, run_cmd(TOOL " stat -c 1 >/dev/null"));
	EXPECT_EQ(0, run_cmd(TOOL " stat -w0.2 -c1 >/dev/null"));
	EXPECT_EQ(0, run_cmd(TOOL " top -d0.1 -n1 </dev/null >/dev/null"));
}

TEST_HARNESS_MAIN
