// SPDX-License-Identifier: MIT
/*
 * libdpusim: running DPU programs — dpu_launch, dpu_status, the launch part
 * of dpu_sync, and the worker processes.
 *
 * dpusim.ko keeps every DPU's memory and run state; the program itself (a
 * dpusim-cc executable, see lib/program.h) runs in worker processes. Each
 * rank of a set gets about (online CPUs / ranks of the set) workers, at
 * least one, spawned at the first launch after a dpu_load and kept until
 * the next dpu_load or dpu_free. A worker gets a worker file of the rank
 * (DPUSIM_IOCTL_WORKER_OPEN) as fd 3 and nothing else of the host, claims
 * RUNNING DPUs one at a time, maps their WRAM and MRAM at the hardware's
 * addresses and runs NR_TASKLETS threads of the program's main. When the
 * host dies, dpusim.ko kills them.
 *
 * A launch is one DPUSIM_IOCTL_LAUNCH per rank for the enabled DPUs of the
 * set; DPU_SYNCHRONOUS then waits (poll on the rank) and reads the run
 * states: a FAULT is DPU_ERR_DPU_FAULT, with one line per faulting DPU
 * naming it and the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uapi/dpusim.h>

#include "program.h"
#include "xfer.h"

extern char **environ;

/* fd numbers in a worker */
#define WORKER_FD 3
#define EXEC_FD 4
/* poll period while other DPUs of a rank still run */
#define WAIT_POLL_MS 20
/* faulting DPUs named one by one in the log */
#define MAX_FAULT_LINES 8

/* ------------------------------------------------------------ workers */

static void reap(int pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void dpusim_workers_stop(struct dpu_rank_t *rank)
{
	uint32_t i;

	for (i = 0; i < rank->nr_workers; i++) {
		kill(rank->workers[i], SIGKILL);
		reap(rank->workers[i]);
	}
	free(rank->workers);
	rank->workers = NULL;
	rank->nr_workers = 0;
}

/* Forget workers that exited (they faulted beyond repair or were killed). */
static void reap_exited(struct dpu_rank_t *rank, const char *fn)
{
	uint32_t i = 0;

	while (i < rank->nr_workers) {
		int status;
		pid_t r = waitpid(rank->workers[i], &status, WNOHANG);

		if (r == 0 || (r < 0 && errno == EINTR)) {
			i++;
			continue;
		}
		if (r > 0 && WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
			dpusim_log("%s: rank%u: a worker died of signal %d; starting another",
				   fn, rank->index, WTERMSIG(status));
		rank->workers[i] = rank->workers[--rank->nr_workers];
	}
}

static dpu_error_t spawn_worker(struct dpu_rank_t *rank,
				const struct dpu_program_t *prog,
				bool strict_dma, const char *fn)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };
	char path_buf[32], eb[128];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char **envp = NULL;
	const char *path;
	size_t n = 0, i;
	sigset_t none, all;
	int fd, r, pid;
	char *argv[3];

	if (ioctl(rank->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo) < 0) {
		dpusim_log("%s: rank%u: DPUSIM_IOCTL_WORKER_OPEN: %s", fn,
			   rank->index, dpusim_strerror(errno, eb, sizeof(eb)));
		return errno == ENOMEM ? DPU_ERR_SYSTEM : DPU_ERR_DRIVER;
	}
	/* above the fds the child gets, so that dup2 really copies it */
	fd = fcntl(wo.fd, F_DUPFD_CLOEXEC, 10);
	close(wo.fd);
	if (fd < 0) {
		dpusim_log("%s: %s", fn, dpusim_strerror(errno, eb, sizeof(eb)));
		return DPU_ERR_SYSTEM;
	}

	while (environ && environ[n])
		n++;
	envp = calloc(n + 3, sizeof(*envp));
	if (!envp) {
		close(fd);
		dpusim_log("%s: out of memory", fn);
		return DPU_ERR_SYSTEM;
	}
	/* the runtime's settings: ours, not ones inherited from the caller */
	for (i = 0, n = 0; environ && environ[i]; i++)
		if (strncmp(environ[i], "DPUSIM_WORKER_FD=", 17) != 0 &&
		    strncmp(environ[i], "DPUSIM_STRICT_DMA=", 18) != 0)
			envp[n++] = environ[i];
	envp[n++] = "DPUSIM_WORKER_FD=3";
	envp[n++] = strict_dma ? "DPUSIM_STRICT_DMA=1" : "DPUSIM_STRICT_DMA=0";

	if (prog->exec_fd >= 0) {
		snprintf(path_buf, sizeof(path_buf), "/proc/self/fd/%d", EXEC_FD);
		path = path_buf;
	} else {
		path = prog->path;
	}
	argv[0] = (char *)path;
	argv[1] = "--dpusim-worker";
	argv[2] = NULL;

	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	posix_spawn_file_actions_adddup2(&fa, fd, WORKER_FD);
	if (prog->exec_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, prog->exec_fd, EXEC_FD);
	posix_spawn_file_actions_addclosefrom_np(&fa, prog->exec_fd >= 0 ?
						 EXEC_FD + 1 : WORKER_FD + 1);
	r = posix_spawn(&pid, path, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(envp);
	close(fd);
	if (r) {
		dpusim_log("%s: cannot start a worker for %s: %s", fn, prog->path,
			   dpusim_strerror(r, eb, sizeof(eb)));
		return DPU_ERR_SYSTEM;
	}
	rank->workers[rank->nr_workers++] = pid;
	return DPU_OK;
}

static uint32_t workers_wanted(const struct dpusim_set_props *props,
			       const struct dpu_rank_t *rank)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t want;

	if (cpus < 1)
		cpus = 1;
	want = (uint32_t)((cpus + props->nr_ranks - 1) / props->nr_ranks);
	if (want > rank->nr_dpus)
		want = rank->nr_dpus;
	if (want > DPUSIM_MAX_WORKERS)
		want = DPUSIM_MAX_WORKERS;
	return want ? want : 1;
}

static dpu_error_t ensure_workers(struct dpusim_set_props *props,
				  struct dpu_rank_t *rank,
				  const struct dpu_program_t *prog,
				  const char *fn)
{
	uint32_t want = workers_wanted(props, rank);
	dpu_error_t ret;

	reap_exited(rank, fn);
	if (!rank->workers) {
		rank->workers = calloc(DPUSIM_MAX_WORKERS, sizeof(*rank->workers));
		if (!rank->workers) {
			dpusim_log("%s: out of memory", fn);
			return DPU_ERR_SYSTEM;
		}
		dpusim_rank_hook_add(rank, DPUSIM_RANK_HOOK_CLOSED,
				     dpusim_workers_stop);
	}
	while (rank->nr_workers < want) {
		ret = spawn_worker(rank, prog, props->profile.strict_dma, fn);
		if (ret != DPU_OK)
			return rank->nr_workers ? DPU_OK : ret;
	}
	return DPU_OK;
}

/* ------------------------------------------------------------ states */

/* DPUSIM_IOCTL_DPU_STATUS of DPUs [first, first + count); errors logged. */
static dpu_error_t read_states(struct dpu_rank_t *rank, uint32_t first,
			       uint32_t count, struct dpusim_dpu_state *states,
			       struct dpusim_dpu_status *st, const char *fn)
{
	char eb[128];
	int r;

	*st = (struct dpusim_dpu_status) {
		.size = sizeof(*st),
		.first_dpu = first,
		.nr_dpus = count,
		.states = (uint64_t)(uintptr_t)states,
	};
	/* it waits for a running transfer of the rank: a signal may cut it */
	do {
		r = ioctl(rank->fd, DPUSIM_IOCTL_DPU_STATUS, st);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return DPU_OK;
	dpusim_log("%s: rank%u: DPUSIM_IOCTL_DPU_STATUS: %s", fn, rank->index,
		   dpusim_strerror(errno, eb, sizeof(eb)));
	return DPU_ERR_DRIVER;
}

/* Only the counts (running, fault) of DPUs [first, first + count). */
static dpu_error_t read_counts(struct dpu_rank_t *rank, uint32_t first,
			       uint32_t count, struct dpusim_dpu_status *st,
			       const char *fn)
{
	struct dpusim_dpu_state *states = calloc(count ? count : 1, sizeof(*states));
	dpu_error_t ret;

	if (!states) {
		dpusim_log("%s: out of memory", fn);
		return DPU_ERR_SYSTEM;
	}
	ret = read_states(rank, first, count, states, st, fn);
	free(states);
	return ret;
}

/*
 * Wait until none of DPUs [first, first + count) of the rank runs, then
 * report the faults among them. Returns DPU_OK, DPU_ERR_DPU_FAULT (each
 * fault logged, *nfault_logged counting lines across ranks) or an error.
 */
static dpu_error_t wait_part(struct dpu_rank_t *rank, uint32_t first,
			     uint32_t count, const char *fn,
			     uint32_t *nfault_logged)
{
	struct dpusim_dpu_state *states;
	struct dpusim_dpu_status st;
	dpu_error_t ret = DPU_OK;
	char eb[128];
	uint32_t k;

	states = calloc(count, sizeof(*states));
	if (!states) {
		dpusim_log("%s: out of memory", fn);
		return DPU_ERR_SYSTEM;
	}
	for (;;) {
		struct pollfd pfd = { .fd = rank->fd, .events = POLLIN };

		ret = read_states(rank, first, count, states, &st, fn);
		if (ret != DPU_OK)
			goto out;
		if (!st.nr_running)
			break;
		if (poll(&pfd, 1, WAIT_POLL_MS) < 0 && errno != EINTR) {
			dpusim_log("%s: poll: %s", fn, dpusim_strerror(errno, eb, sizeof(eb)));
			ret = DPU_ERR_SYSTEM;
			goto out;
		}
	}
	for (k = 0; k < count && st.nr_fault; k++) {
		const struct dpu_t *dpu = &rank->dpus[first + k];

		if (states[k].state != DPUSIM_DPU_FAULT)
			continue;
		ret = DPU_ERR_DPU_FAULT;
		states[k].reason[DPUSIM_REASON_LEN - 1] = '\0';
		if ((*nfault_logged)++ < MAX_FAULT_LINES)
			dpusim_log("%s: DPU %" PRIu32 " of the set (rank%u DPU %" PRIu32 ") faulted: %s",
				   fn, dpu->index_in_set, rank->index, first + k,
				   states[k].reason);
	}
out:
	free(states);
	return ret;
}

static dpu_error_t wait_req(struct dpusim_xfer_req *req, const char *fn)
{
	dpu_error_t err, ret = DPU_OK;
	uint32_t i, logged = 0;

	for (i = 0; i < req->nr_parts; i++) {
		struct dpusim_xfer_part *p = &req->parts[i];

		if (!p->count || p->rank->fd < 0)
			continue;
		err = wait_part(p->rank, p->first, p->count, fn, &logged);
		if (ret == DPU_OK || (ret == DPU_ERR_DPU_FAULT && err != DPU_OK &&
				      err != DPU_ERR_DPU_FAULT))
			ret = err == DPU_OK ? ret : err;
	}
	if (logged > MAX_FAULT_LINES)
		dpusim_log("%s: %" PRIu32 " more DPUs faulted", fn,
			   logged - MAX_FAULT_LINES);
	return ret;
}

/* ------------------------------------------------------------ launch */

static dpu_error_t launch_errno(int err)
{
	switch (err) {
	case EBUSY:
		return DPU_ERR_DPU_ALREADY_RUNNING;
	case ENOMEM:
		return DPU_ERR_SYSTEM;
	default:
		return DPU_ERR_DRIVER;
	}
}

static dpu_error_t check_program(const struct dpu_program_t *prog,
				 const char *fn)
{
	if (!prog) {
		dpusim_log("%s: no program loaded (dpu_load first)", fn);
		return DPU_ERR_NO_PROGRAM_LOADED;
	}
	if (prog->runnable)
		return DPU_OK;
	if (prog->machine == DPUSIM_EM_DPU)
		dpusim_log("%s: %s is a UPMEM DPU binary (ELF machine %d): dpusim cannot run DPU machine code; rebuild the DPU program from its sources with dpusim's dpu-upmem-dpurte-clang (put dpusim's bin directory first in PATH and run its Makefile again)",
			   fn, prog->path, DPUSIM_EM_DPU);
	else
		dpusim_log("%s: %s is not a DPU program built by dpusim-cc (no %s section): build it with dpu-upmem-dpurte-clang or dpusim-cc",
			   fn, prog->path, DPUSIM_PROGRAM_SECTION);
	return DPU_ERR_ELF_INVALID_FILE;
}

DPUSIM_API dpu_error_t dpu_launch(struct dpu_set_t dpu_set,
				  dpu_launch_policy_t policy)
{
	static const char fn[] = "dpu_launch";
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	dpu_error_t ret;
	char eb[128];
	uint32_t i;

	if (policy != DPU_ASYNCHRONOUS && policy != DPU_SYNCHRONOUS) {
		dpusim_log("%s: invalid launch policy %d (DPU_ASYNCHRONOUS or DPU_SYNCHRONOUS)",
			   fn, (int)policy);
		return DPU_ERR_INVALID_LAUNCH_POLICY;
	}
	ret = dpusim_xfer_req_new(dpu_set, fn, &props, &req);
	if (ret != DPU_OK)
		return ret;

	pthread_mutex_lock(&props->lock);
	ret = check_program(props->program, fn);
	for (i = 0; ret == DPU_OK && i < req->nr_parts; i++) {
		struct dpusim_xfer_part *p = &req->parts[i];

		if (p->count && p->rank->fd >= 0)
			ret = ensure_workers(props, p->rank, props->program, fn);
	}
	for (i = 0; ret == DPU_OK && i < req->nr_parts; i++) {
		struct dpusim_xfer_part *p = &req->parts[i];
		struct dpusim_launch l = {
			.size = sizeof(l),
			.first_dpu = p->first,
			.nr_dpus = p->count,
		};
		int r;

		if (!p->count || p->rank->fd < 0)
			continue;
		do {
			r = ioctl(p->rank->fd, DPUSIM_IOCTL_LAUNCH, &l);
		} while (r < 0 && errno == EINTR);
		if (r < 0) {
			ret = launch_errno(errno);
			dpusim_log("%s: rank%u: DPUSIM_IOCTL_LAUNCH (DPUs %u..%u): %s%s%s",
				   fn, p->rank->index, p->first, p->first + p->count - 1,
				   dpusim_strerror(errno, eb, sizeof(eb)),
				   errno == EBUSY ? ": a DPU of the set is still running" : "",
				   i ? "; the ranks before it were launched" : "");
		}
	}
	if (ret == DPU_OK && policy == DPU_ASYNCHRONOUS)
		props->launch_pending = true;
	pthread_mutex_unlock(&props->lock);

	if (ret == DPU_OK && policy == DPU_SYNCHRONOUS)
		ret = wait_req(req, fn);
	dpusim_xfer_req_free(req);
	return ret;
}

DPUSIM_API dpu_error_t dpu_status(struct dpu_set_t dpu_set, bool *done,
				  bool *fault)
{
	static const char fn[] = "dpu_status";
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	bool all_done = true, any_fault = false;
	dpu_error_t ret;
	uint32_t i;

	if (!done || !fault) {
		dpusim_log("%s: done and fault must not be NULL", fn);
		return DPU_ERR_INTERNAL;
	}
	ret = dpusim_xfer_req_new(dpu_set, fn, &props, &req);
	if (ret != DPU_OK)
		return ret;
	for (i = 0; i < req->nr_parts; i++) {
		struct dpusim_xfer_part *p = &req->parts[i];
		struct dpusim_dpu_status st;

		if (!p->count || p->rank->fd < 0)
			continue;
		ret = read_counts(p->rank, p->first, p->count, &st, fn);
		if (ret != DPU_OK)
			break;
		all_done &= st.nr_running == 0;
		any_fault |= st.nr_fault != 0;
	}
	dpusim_xfer_req_free(req);
	if (ret == DPU_OK) {
		*done = all_done;
		*fault = any_fault;
	}
	return ret;
}

dpu_error_t dpusim_set_running(struct dpusim_set_props *props, const char *fn)
{
	uint32_t i, running = 0;

	for (i = 0; i < props->nr_ranks; i++) {
		struct dpu_rank_t *rank = props->ranks[i];
		struct dpusim_dpu_status st;
		dpu_error_t ret;

		if (rank->fd < 0)
			continue;
		ret = read_counts(rank, 0, rank->nr_dpus, &st, fn);
		if (ret != DPU_OK)
			return ret;
		running += st.nr_running;
	}
	if (running) {
		dpusim_log("%s: %u DPUs of the set are running a program: wait for them (dpu_sync) first",
			   fn, running);
		return DPU_ERR_DPU_ALREADY_RUNNING;
	}
	return DPU_OK;
}

dpu_error_t dpusim_launch_wait(struct dpusim_set_props *props, const char *fn)
{
	uint32_t i;

	for (i = 0; i < props->nr_ranks; i++) {
		struct pollfd pfd = { .fd = props->ranks[i]->fd, .events = POLLIN };
		char eb[128];

		if (pfd.fd < 0)
			continue;
		/* EPOLLIN: no DPU of the rank runs */
		while (poll(&pfd, 1, -1) < 0) {
			if (errno != EINTR) {
				dpusim_log("%s: poll: %s", fn,
					   dpusim_strerror(errno, eb, sizeof(eb)));
				return DPU_ERR_SYSTEM;
			}
		}
	}
	return DPU_OK;
}

dpu_error_t dpusim_launch_sync(struct dpusim_set_props *props, const char *fn)
{
	struct dpusim_xfer_req *req;
	struct dpusim_set_props *p2;
	struct dpu_set_t all = dpusim_props_set(props);
	bool pending;
	dpu_error_t ret;

	pthread_mutex_lock(&props->lock);
	pending = props->launch_pending;
	props->launch_pending = false;
	pthread_mutex_unlock(&props->lock);
	if (!pending)
		return DPU_OK;
	ret = dpusim_xfer_req_new(all, fn, &p2, &req);
	if (ret != DPU_OK)
		return ret;
	ret = wait_req(req, fn);
	dpusim_xfer_req_free(req);
	return ret;
}
