// SPDX-License-Identifier: MIT
/*
 * worker.c - main() of every DPU program built by dpusim-cc.
 *
 * `prog --dpusim-worker` (spawned by libdpusim with the worker file on fd
 * DPUSIM_WORKER_FD, 3) loops: CLAIM a DPU (the worker file's window, mapped
 * once, then shows its WRAM at 0x06000000 and its MRAM at 0x08000000), run
 * NR_TASKLETS tasklets of the program's main (renamed __dpusim_dpu_main by
 * dpusim-cc), FINISH.
 * ESHUTDOWN from CLAIM: exit 0; any other CLAIM error: exit 1.  A fault
 * reports FINISH/FAULT and re-executes the program (run.c).
 */
#include "dpurt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/dpusim.h"

_Static_assert(DPURT_REASON_LEN == DPUSIM_REASON_LEN, "reason length");

/* The program's main, renamed by dpusim-cc. */
extern int __dpusim_dpu_main(void);
/* Written by dpusim-cc into the .dpusim.program section. */
extern const struct dpurt_program_desc __dpusim_program;
/* dpusim-cc's linker script: end of the WRAM globals. */
extern char __dpusim_wram_end[];

/* The DPU's log, read by dpu_log_read() (stdout_buffer.c): linked only
 * into programs that print, as the SDK's. */
extern unsigned char __stdout_buffer[] __attribute__((weak));

static void finish_fault(const char *reason)
{
	struct dpusim_worker_finish fin;

	memset(&fin, 0, sizeof(fin));
	fin.size = sizeof(fin);
	fin.flags = DPUSIM_FINISH_FAULT;
	fin.dpu = dpurt_worker_dpu;
	strncpy(fin.reason, reason, sizeof(fin.reason) - 1);
	while (ioctl(dpurt_worker_fd, DPUSIM_IOCTL_WORKER_FINISH, &fin) < 0 && errno == EINTR)
		;
}

/*
 * The worker file's window (DPUSIM_MMAP_WINDOW), mapped once at
 * DPURT_WRAM_BASE: it shows the WRAM and, DPUSIM_WINDOW_MRAM further (at
 * DPURT_MRAM_BASE), the MRAM of whichever DPU the worker holds.  CLAIM
 * maps the DPU's pages into it and FINISH takes them out, so a worker
 * runs DPU after DPU with no mmap call of its own.
 */
_Static_assert(DPURT_MRAM_BASE - DPURT_WRAM_BASE == DPUSIM_WINDOW_MRAM,
	       "the window's layout is the runtime's");

static bool window_mapped;

static bool window_map(void)
{
	void *w;

	if (window_mapped)
		return true;
	w = mmap((void *)DPURT_WRAM_BASE, DPUSIM_WINDOW_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, dpurt_worker_fd, DPUSIM_MMAP_WINDOW);
	if (w == MAP_FAILED)
		return false;
	window_mapped = true;
	return true;
}

static void run_claimed(const struct dpusim_worker_claim *c)
{
	struct dpurt_config cfg;
	struct dpurt_result res;
	struct dpusim_worker_finish fin;
	uintptr_t wram_end = (uintptr_t)__dpusim_wram_end;
	int ret;

	dpurt_worker_dpu = c->dpu;
	dpurt_ctx.wram_size = c->wram_size;
	dpurt_ctx.mram_size = c->mram_size;
	if (!window_map()) {
		char reason[128];

		snprintf(reason, sizeof(reason), "worker: mapping the window failed: %s",
			 strerror(errno));
		finish_fault(reason);
		return;
	}
	if (wram_end - DPURT_WRAM_BASE > c->wram_size) {
		char reason[128];

		snprintf(reason, sizeof(reason), "WRAM globals take %lu bytes, WRAM has %u",
			 (unsigned long)(wram_end - DPURT_WRAM_BASE), c->wram_size);
		finish_fault(reason);
		return;
	}

	memset(&cfg, 0, sizeof(cfg));
	cfg.entry = __dpusim_dpu_main;
	cfg.nr_tasklets = __dpusim_program.nr_tasklets;
	cfg.wram_size = c->wram_size;
	cfg.mram_size = c->mram_size;
	cfg.heap_start = wram_end;
	cfg.launch = c->launches;
	cfg.log = __stdout_buffer && (c->mram_size >= (uint64_t)((uintptr_t)__stdout_buffer - DPURT_MRAM_BASE) + DPURT_LOG_SIZE)
		  ? (struct dpurt_log *)__stdout_buffer : NULL;
	ret = dpurt_run_dpu(&cfg, &res);
	if (ret) {
		char reason[128];

		snprintf(reason, sizeof(reason), "worker: cannot run the program: %s",
			 strerror(-ret));
		finish_fault(reason);
		return;
	}
	/* Faults and halt() never come back here (run.c). */
	dpurt_ebsp_quiesce();
	memset(&fin, 0, sizeof(fin));
	fin.size = sizeof(fin);
	fin.dpu = c->dpu;
	fin.modeled_cycles = dpurt_time_end();
	while (ioctl(dpurt_worker_fd, DPUSIM_IOCTL_WORKER_FINISH, &fin) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "dpusim worker: FINISH of DPU %u: %s\n", c->dpu,
				strerror(errno));
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	const char *env = getenv("DPUSIM_WORKER_FD");
	sigset_t none;
	int fd, flags;

	if (argc < 2 || strcmp(argv[1], "--dpusim-worker") != 0) {
		fprintf(stderr,
			"%s: a DPU program built by dpusim-cc; a host program runs it with dpu_load() and dpu_launch()\n",
			argc > 0 && argv[0] ? argv[0] : "dpu-program");
		return 2;
	}
	dpurt_argv = argv;
	/* the set's profile (dpusimStrictDma), through launch.c's spawn */
	dpurt_dma_strict = getenv("DPUSIM_STRICT_DMA") &&
			   strcmp(getenv("DPUSIM_STRICT_DMA"), "1") == 0;
	fd = env && *env ? atoi(env) : 3;
	flags = fcntl(fd, F_GETFD);
	if (fd < 0 || flags < 0) {
		fprintf(stderr, "%s: no worker file on fd %d\n", argv[0], fd);
		return 1;
	}
	/* The fault path re-executes: the worker file must survive it. */
	fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
	/* ...and a fault handler's blocked signal must not stay blocked. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	dpurt_worker_fd = fd;
	/* before the first claim, which fills it (a failure faults the DPU) */
	window_map();

	for (;;) {
		struct dpusim_worker_claim c;

		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		if (ioctl(fd, DPUSIM_IOCTL_WORKER_CLAIM, &c) < 0) {
			if (errno == EINTR || errno == ETIMEDOUT)
				continue;
			if (errno == ESHUTDOWN)
				exit(0);
			fprintf(stderr, "%s: CLAIM: %s\n", argv[0], strerror(errno));
			exit(1);
		}
		run_claimed(&c);
	}
}
