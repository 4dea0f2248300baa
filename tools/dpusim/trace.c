// SPDX-License-Identifier: MIT
/*
 * dpusim trace [-o FILE] [--summary-only] -- CMD [ARGS...]
 *
 * Runs CMD with dpusim's tracepoints (kernel/trace.h) enabled in a
 * tracefs instance of its own, instances/dpusim-<pid>, so that other
 * users of tracefs are not disturbed: trace clock "mono" (comparable to
 * CLOCK_MONOTONIC), 8 MiB of buffer per CPU (64 MiB in all on more
 * than 8 CPUs, at least 1 MiB each), only the dpusim events.
 * While CMD runs, the instance's trace_pipe is read (poll, with a pidfd
 * telling when CMD ends) and converted as it comes (trace_fmt.c) into
 * Chrome trace-event JSON, FILE (default dpusim-trace.json; "-" is
 * stdout: the summary and CMD's stdout then go to stderr).  Then the
 * summary: wall time, transfers each way (bytes, count, busy time),
 * async jobs, DPU runs, faults, tag-matching events.
 *
 * The events are the whole system's, not only CMD's (an async copy runs
 * in a kernel worker, a DPU program in a process of its own).  SIGINT,
 * SIGTERM and SIGHUP sent to dpusim trace are passed on to CMD (those of
 * the terminal reach CMD by themselves); dpusim trace waits for CMD in
 * any case, then writes the trace and removes the instance.  An instance
 * left behind by a dpusim trace that was killed (SIGKILL) is removed by
 * the next one.
 *
 * Exit status: CMD's (128 + N if killed by signal N, 127 if it could not
 * be run), 1 if tracing failed, 2 on bad usage.  The trace is written
 * whatever CMD's status.
 */
#include "commands.h"
#include "trace_fmt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

#define TRACE_DEFAULT_OUTPUT "dpusim-trace.json"
/* per CPU: 8 MiB, less on many CPUs (64 MiB in all), never under 1 MiB */
#define TRACE_BUFFER_KB_MAX 8192
#define TRACE_BUFFER_KB_MIN 1024
#define TRACE_BUFFER_KB_ALL 65536
#define TRACE_CLOCK "mono"
#define TRACE_INSTANCE_PREFIX "dpusim-"

/* What the signal handler needs: CMD's pid, and that a signal came. */
static volatile sig_atomic_t trace_child = 0;
static volatile sig_atomic_t trace_signalled = 0;

static const int trace_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NR_TRACE_SIGNALS (sizeof(trace_signals) / sizeof(trace_signals[0]))

/*
 * Passes a signal sent with kill() on to CMD; one from the terminal
 * (SI_KERNEL) has reached CMD's process group already.
 */
static void trace_on_signal(int sig, siginfo_t *si, void *ctx)
{
	pid_t child = (pid_t)trace_child;

	(void)ctx;
	trace_signalled = sig;
	if (child > 0 && (!si || si->si_code != SI_KERNEL))
		kill(child, sig);
}

static void trace_usage(FILE *f)
{
	fprintf(f,
		"usage: dpusim trace [-o FILE] [--summary-only] [--] CMD [ARGS...]\n"
		"  runs CMD with dpusim's tracepoints enabled (a tracefs instance of\n"
		"  its own), writes a Chrome trace-event JSON timeline (Perfetto,\n"
		"  chrome://tracing) and prints a summary: transfers, async jobs,\n"
		"  DPU runs, faults, tag matching.\n"
		"  -o, --output FILE   the trace (default " TRACE_DEFAULT_OUTPUT "; - for stdout)\n"
		"  --summary-only      no trace file, only the summary\n"
		"Exit status: CMD's (128+N if killed by signal N, 127 if it could\n"
		"not run), 1 if tracing failed, 2 on bad usage.\n");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool is_tracefs(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == TRACEFS_MAGIC;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * tracefs: /sys/kernel/tracing (mounted here if it is not), else
 * /sys/kernel/debug/tracing.  false with a message if neither works.
 */
static bool find_tracefs(char *buf, size_t len)
{
	static const char *const sys = "/sys/kernel/tracing";
	static const char *const dbg = "/sys/kernel/debug/tracing";
	char path[256];

	if (!is_tracefs(sys) && is_dir(sys) &&
	    mount("nodev", sys, "tracefs", 0, NULL) != 0 && errno != EBUSY)
		fprintf(stderr, "dpusim: trace: cannot mount tracefs on %s: %s\n",
			sys, strerror(errno));
	if (is_tracefs(sys)) {
		snprintf(buf, len, "%s", sys);
		return true;
	}
	snprintf(path, sizeof(path), "%s/instances", dbg);
	if (is_dir(path)) {
		snprintf(buf, len, "%s", dbg);
		return true;
	}
	fprintf(stderr, "dpusim: trace: no tracefs (%s, %s): is the kernel built with CONFIG_TRACING, and are you root?\n",
		sys, dbg);
	return false;
}

/* Writes @val into @dir/@name (O_TRUNC, as echo does). 0 or -errno. */
static int write_attr(const char *dir, const char *name, const char *val)
{
	char path[512];
	size_t len = strlen(val);
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (len) {
		n = write(fd, val, len);
		if (n < 0)
			err = -errno;
		else if ((size_t)n != len)
			err = -EIO;
	}
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* Instances dpusim-<pid> whose dpusim trace no longer exists. */
static void remove_stale_instances(const char *tracefs)
{
	char dir[512], path[1024];
	struct dirent *d;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/instances", tracefs);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((d = readdir(dp))) {
		const char *s = d->d_name;
		char *end;
		long pid;

		if (strncmp(s, TRACE_INSTANCE_PREFIX, strlen(TRACE_INSTANCE_PREFIX)))
			continue;
		s += strlen(TRACE_INSTANCE_PREFIX);
		errno = 0;
		pid = strtol(s, &end, 10);
		if (errno || *end || pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (rmdir(path) == 0)
			fprintf(stderr, "dpusim: trace: removed %s, left by a dpusim trace that is gone\n",
				path);
	}
	closedir(dp);
}

struct tracer {
	char tracefs[256];
	char inst[320];		/* the instance's directory */
	bool have_inst;
	bool record_cmd_off;	/* we turned the top level's record-cmd off */
	int pipe_fd;
};

/*
 * The top level's options/record-cmd (instances inherit it and cannot set
 * it): while it is on, the first and last enable of any event patch the
 * scheduler's code to record comms, and under QEMU's software emulation
 * (stock 6.1) the other CPU was seen looping on the half-patched code.
 * The dpusim events carry what the timeline needs, so it goes off while
 * tracing and back on after.
 */
static void record_cmd_off(struct tracer *t)
{
	char path[320], v = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/options/record-cmd", t->tracefs);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (read(fd, &v, 1) != 1)
		v = 0;
	close(fd);
	if (v == '1' && !write_attr(t->tracefs, "options/record-cmd", "0"))
		t->record_cmd_off = true;
}

/* Creates and sets up the instance, opens its trace_pipe. 0 or -1. */
static int tracer_start(struct tracer *t)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF), kb;
	char events[512], size[32];
	int err;

	t->pipe_fd = -1;
	if (!find_tracefs(t->tracefs, sizeof(t->tracefs)))
		return -1;
	snprintf(events, sizeof(events), "%s/events/dpusim", t->tracefs);
	if (!is_dir(events)) {
		fprintf(stderr, "dpusim: trace: no dpusim tracepoints in %s/events: is the dpusim module loaded (and recent enough)?\n",
			t->tracefs);
		return -1;
	}
	remove_stale_instances(t->tracefs);
	snprintf(t->inst, sizeof(t->inst), "%s/instances/" TRACE_INSTANCE_PREFIX "%d",
		 t->tracefs, (int)getpid());
	err = mkdir(t->inst, 0700) ? errno : 0;
	if (err == EEXIST)	/* left by an earlier process of this pid */
		err = rmdir(t->inst) || mkdir(t->inst, 0700) ? errno : 0;
	if (err) {
		fprintf(stderr, "dpusim: trace: cannot create the tracefs instance %s: %s\n",
			t->inst, strerror(err));
		return -1;
	}
	t->have_inst = true;
	record_cmd_off(t);
	err = write_attr(t->inst, "trace_clock", TRACE_CLOCK);
	if (err)
		fprintf(stderr, "dpusim: trace: warning: no trace clock " TRACE_CLOCK " (%s): timestamps will not match CLOCK_MONOTONIC\n",
			strerror(-err));
	kb = TRACE_BUFFER_KB_ALL / (cpus > 0 ? cpus : 1);
	kb = kb > TRACE_BUFFER_KB_MAX ? TRACE_BUFFER_KB_MAX :
	     kb < TRACE_BUFFER_KB_MIN ? TRACE_BUFFER_KB_MIN : kb;
	snprintf(size, sizeof(size), "%ld", kb);
	err = write_attr(t->inst, "buffer_size_kb", size);
	if (err)
		fprintf(stderr, "dpusim: trace: warning: cannot set buffer_size_kb to %s: %s\n",
			size, strerror(-err));
	err = write_attr(t->inst, "trace", "");	/* clear */
	if (!err)
		err = write_attr(t->inst, "events/dpusim/enable", "1");
	if (!err)
		err = write_attr(t->inst, "tracing_on", "1");
	if (err) {
		fprintf(stderr, "dpusim: trace: cannot enable the dpusim events in %s: %s\n",
			t->inst, strerror(-err));
		return -1;
	}
	snprintf(events, sizeof(events), "%s/trace_pipe", t->inst);
	t->pipe_fd = open(events, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (t->pipe_fd < 0) {
		fprintf(stderr, "dpusim: trace: cannot open %s: %s\n", events,
			strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Reads what trace_pipe has now into @c.  0, or -1 on an error (a
 * message printed; out of memory in @c is an error too).
 */
static int tracer_drain(struct tracer *t, struct trace_conv *c)
{
	char buf[65536];
	ssize_t n;

	for (;;) {
		n = read(t->pipe_fd, buf, sizeof(buf));
		if (n > 0) {
			if (trace_conv_feed(c, buf, (size_t)n)) {
				fprintf(stderr, "dpusim: trace: out of memory\n");
				return -1;
			}
			continue;
		}
		if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno == EINTR)
			continue;
		fprintf(stderr, "dpusim: trace: reading %s/trace_pipe: %s\n",
			t->inst, strerror(errno));
		return -1;
	}
}

/* Stops the events, closes trace_pipe, removes the instance. */
static void tracer_stop(struct tracer *t)
{
	if (t->have_inst) {
		write_attr(t->inst, "events/dpusim/enable", "0");
		write_attr(t->inst, "tracing_on", "0");
	}
	if (t->pipe_fd >= 0)
		close(t->pipe_fd);
	t->pipe_fd = -1;
	if (t->have_inst && rmdir(t->inst) != 0)
		fprintf(stderr, "dpusim: trace: cannot remove %s: %s\n", t->inst,
			strerror(errno));
	t->have_inst = false;
	if (t->record_cmd_off)
		write_attr(t->tracefs, "options/record-cmd", "1");
	t->record_cmd_off = false;
}

/* The signals dpusim trace passes on to CMD. */
static void trace_sigset(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < NR_TRACE_SIGNALS; i++)
		sigaddset(set, trace_signals[i]);
}

/*
 * The handler for trace_signals[], and SIGPIPE ignored (a trace going to
 * a closed pipe is a write error, not death with the instance left);
 * @old: NR_TRACE_SIGNALS + 1 dispositions to restore, SIGPIPE's last.
 */
static int install_handlers(struct sigaction *old)
{
	struct sigaction sa, ign;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = trace_on_signal;
	sa.sa_flags = SA_SIGINFO;	/* no SA_RESTART: poll() returns */
	trace_sigset(&sa.sa_mask);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (i = 0; i <= NR_TRACE_SIGNALS; i++) {
		if (sigaction(i < NR_TRACE_SIGNALS ? trace_signals[i] : SIGPIPE,
			      i < NR_TRACE_SIGNALS ? &sa : &ign, &old[i])) {
			while (i--)
				sigaction(trace_signals[i], &old[i], NULL);
			return -1;
		}
	}
	return 0;
}

static void restore_handlers(const struct sigaction *old)
{
	size_t i;

	for (i = 0; i < NR_TRACE_SIGNALS; i++)
		sigaction(trace_signals[i], &old[i], NULL);
	sigaction(SIGPIPE, &old[NR_TRACE_SIGNALS], NULL);
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	case SIGKILL: return "SIGKILL";
	case SIGSEGV: return "SIGSEGV";
	case SIGABRT: return "SIGABRT";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGPIPE: return "SIGPIPE";
	case SIGQUIT: return "SIGQUIT";
	default: return NULL;
	}
}

/* "build/examples/pivot --dpus 4" (for the summary and otherData) */
static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/*
 * Runs @argv (its stdout on stderr if @stdout_to_stderr: the trace
 * goes to stdout), reading trace_pipe into @c until it ends.  *status: its
 * wait status; *wall_ns: fork to exit.  @old: the signal dispositions
 * CMD gets back.  0; -1 if it could not be started, -3 if a signal came
 * before (nothing to wait for); -2 if reading the trace failed (CMD
 * waited for).
 */
static int run_child(char **argv, bool stdout_to_stderr, struct tracer *t,
		     struct trace_conv *c, const struct sigaction *old,
		     int *status, uint64_t *wall_ns)
{
	struct pollfd pfd[2];
	sigset_t blocked, oldmask;
	bool read_err = false;
	uint64_t t0, t1 = 0;
	int pidfd = -1;
	pid_t pid, w;

	/* the handler must know CMD's pid before it can pass a signal on */
	trace_sigset(&blocked);
	sigprocmask(SIG_BLOCK, &blocked, &oldmask);
	if (trace_signalled) {	/* during the set-up: CMD is not run */
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		return -3;
	}
	fflush(NULL);
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "dpusim: trace: fork: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		return -1;
	}
	if (pid == 0) {
		int e;

		restore_handlers(old);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		e = errno;
		fprintf(stderr, "dpusim: trace: cannot run %s: %s\n", argv[0],
			strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	trace_child = pid;
	sigprocmask(SIG_SETMASK, &oldmask, NULL);

#ifdef SYS_pidfd_open
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	pfd[0].fd = t->pipe_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = pidfd;
	pfd[1].events = POLLIN;
	for (;;) {
		/* without a pidfd, wake often to see whether CMD ended */
		int r = poll(pfd, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? 200 : 10);

		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "dpusim: trace: poll: %s\n", strerror(errno));
			read_err = true;
			break;
		}
		if (!read_err && tracer_drain(t, c))
			read_err = true;	/* keep waiting for CMD */
		w = waitpid(pid, status, WNOHANG);
		if (w == pid) {
			t1 = now_ns();
			break;
		}
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, "dpusim: trace: waitpid: %s\n", strerror(errno));
			read_err = true;
			break;
		}
		/*
		 * trace_pipe wakes poll() at every event: let them gather
		 * for up to 10 ms (8 MiB a CPU holds far more) unless CMD
		 * ends meanwhile.
		 */
		poll(pfd + 1, pidfd >= 0 ? 1 : 0, 10);
	}
	if (!t1) {	/* left the loop on an error: CMD still has to end */
		while (waitpid(pid, status, 0) < 0 && errno == EINTR)
			;
		t1 = now_ns();
	}
	trace_child = 0;
	if (pidfd >= 0)
		close(pidfd);
	*wall_ns = t1 - t0;
	return read_err ? -2 : 0;
}

int cmd_trace(int argc, char **argv)
{
	const char *output = TRACE_DEFAULT_OUTPUT;
	bool summary_only = false, to_stdout;
	struct trace_run_info info = { .clock = TRACE_CLOCK };
	struct tracer t = { .pipe_fd = -1 };
	struct trace_conv *c = NULL;
	struct sigaction old[NR_TRACE_SIGNALS + 1];
	bool handlers = false;
	FILE *out = NULL, *sum;
	char *command = NULL, status_buf[64];
	int i, ret = 1, wstatus = 0, r;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= argc || !argv[i + 1][0]) {
				fprintf(stderr, "dpusim: trace: %s needs a file name\n\n", a);
				trace_usage(stderr);
				return 2;
			}
			output = argv[++i];
		} else if (!strncmp(a, "--output=", 9) && a[9]) {
			output = a + 9;
		} else if (!strcmp(a, "--summary-only")) {
			summary_only = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			trace_usage(stdout);
			return 0;
		} else if (a[0] == '-') {
			fprintf(stderr, "dpusim: trace: unknown option '%s'\n\n", a);
			trace_usage(stderr);
			return 2;
		} else {
			break;	/* CMD without "--" */
		}
	}
	if (i >= argc) {
		fprintf(stderr, "dpusim: trace: no command to run\n\n");
		trace_usage(stderr);
		return 2;
	}
	argv += i;
	argc -= i;
	to_stdout = !summary_only && !strcmp(output, "-");
	sum = to_stdout ? stderr : stdout;

	command = join_args(argc, argv);
	if (!command) {
		fprintf(stderr, "dpusim: trace: out of memory\n");
		goto out;
	}
	/* from here on a signal must not leave the instance behind */
	if (install_handlers(old)) {
		fprintf(stderr, "dpusim: trace: sigaction: %s\n", strerror(errno));
		goto out;
	}
	handlers = true;
	if (tracer_start(&t))
		goto out;
	if (!summary_only) {
		out = to_stdout ? stdout : fopen(output, "we");
		if (!out) {
			fprintf(stderr, "dpusim: trace: cannot create %s: %s\n", output,
				strerror(errno));
			goto out;
		}
	}
	c = trace_conv_new(out);
	if (!c) {
		fprintf(stderr, "dpusim: trace: out of memory\n");
		goto out;
	}

	r = run_child(argv, to_stdout, &t, c, old, &wstatus, &info.wall_ns);
	if (r == -1)
		goto out;
	/* CMD is gone: what it left in the buffer, then stop */
	if (r == 0 && tracer_drain(&t, c))
		r = -2;
	tracer_stop(&t);

	if (r == -3) {	/* a signal during the set-up: an empty trace */
		ret = 128 + trace_signalled;
		snprintf(status_buf, sizeof(status_buf), "was not run (interrupted)");
		r = 0;
	} else if (WIFEXITED(wstatus)) {
		ret = WEXITSTATUS(wstatus);
		snprintf(status_buf, sizeof(status_buf), "exited %d", ret);
	} else if (WIFSIGNALED(wstatus)) {
		const char *name = signal_name(WTERMSIG(wstatus));

		ret = 128 + WTERMSIG(wstatus);
		if (name)
			snprintf(status_buf, sizeof(status_buf), "killed by %s", name);
		else
			snprintf(status_buf, sizeof(status_buf), "killed by signal %d",
				 WTERMSIG(wstatus));
	} else {
		snprintf(status_buf, sizeof(status_buf), "ended (status 0x%x)", wstatus);
	}
	info.command = command;
	info.status = status_buf;
	info.exit_status = r ? 1 : ret;
	info.output = summary_only ? NULL : to_stdout ? "stdout" : output;
	if (trace_conv_finish(c, &info)) {
		fprintf(stderr, "dpusim: trace: writing %s: %s\n",
			to_stdout ? "the trace" : output,
			out && ferror(out) ? "write error" : "out of memory");
		r = -2;
	}
	if (out && out != stdout) {
		if (fclose(out) && !r) {
			fprintf(stderr, "dpusim: trace: writing %s: %s\n", output,
				strerror(errno));
			r = -2;
		}
		out = NULL;
	}
	trace_summary(sum, trace_conv_stats(c), &info);
	fflush(sum);
	if (r)
		ret = 1;
out:
	tracer_stop(&t);
	if (handlers)
		restore_handlers(old);
	if (out && out != stdout) {	/* CMD not run: no trace */
		fclose(out);
		unlink(output);
	}
	trace_conv_free(c);
	free(command);
	return ret;
}
