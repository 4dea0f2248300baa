// SPDX-License-Identifier: MIT
/*
 * run.c - tasklets: a pool of threads kept across DPUs runs the program's
 * main NR_TASKLETS times per launch; faults, halt() and fatal signals.
 */
#include "dpurt.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uapi/dpusim.h"

struct dpurt_ctx dpurt_ctx;
int dpurt_worker_fd = -1;
uint32_t dpurt_worker_dpu;
char **dpurt_argv;

__thread unsigned int __dpurt_tasklet_id;

/* Tasklet stacks sit below 4 GiB (programs written for the 32-bit DPU
 * sometimes keep a WRAM address in a uint32_t), in the gap between the
 * largest MRAM (0x48000000) and the program's text (0x50000000). */
#define STACK_SIZE (1024UL * 1024)
#define ALTSTACK_SIZE (64UL * 1024)
#define STACK_AREA 0x49000000UL

struct tasklet {
	pthread_t thread;
	unsigned int id;
	bool in_run;
	sigjmp_buf unwind;
	uintptr_t stack_lo;
	uint32_t gen;                 /* start_gen last seen */
};

static struct {
	struct tasklet t[DPURT_MAX_TASKLETS];
	unsigned int nr_threads;
	_Atomic uint32_t start_gen;   /* bumped to start a run */
	_Atomic uint32_t remaining;   /* tasklets of the run not done */
	unsigned int active;
	int (*entry)(void);
	pthread_mutex_t lock;         /* creating threads */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread struct tasklet *self;

/* Test mode: set when the run must stop (fault, halt). */
static _Atomic bool run_abort;
/* Both modes: the first fault or halt wins. */
static _Atomic int run_ending;
static struct dpurt_result run_res;

/* ---- messages -------------------------------------------------------- */

void dpurt_msg_str(struct dpurt_msg *m, const char *s)
{
	while (*s && m->len < sizeof(m->buf) - 1)
		m->buf[m->len++] = *s++;
	m->buf[m->len] = '\0';
}

static void msg_num(struct dpurt_msg *m, uint64_t v, unsigned int base)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n && m->len < sizeof(m->buf) - 1)
		m->buf[m->len++] = tmp[--n];
	m->buf[m->len] = '\0';
}

void dpurt_msg_dec(struct dpurt_msg *m, uint64_t v)
{
	msg_num(m, v, 10);
}

void dpurt_msg_hex(struct dpurt_msg *m, uint64_t v)
{
	dpurt_msg_str(m, "0x");
	msg_num(m, v, 16);
}

void dpurt_msg_tasklet(struct dpurt_msg *m)
{
	struct dpurt_msg t = { .len = 0 };

	if (self) {
		dpurt_msg_str(&t, " (tasklet ");
		dpurt_msg_dec(&t, self->id);
		dpurt_msg_str(&t, ")");
	} else {
		dpurt_msg_str(&t, " (runtime)");
	}
	/* The tasklet always fits: cut the message before it if needed. */
	if (m->len + t.len > sizeof(m->buf) - 1)
		m->len = sizeof(m->buf) - 1 - t.len;
	m->buf[m->len] = '\0';
	dpurt_msg_str(m, t.buf);
}

/* ---- futex ----------------------------------------------------------- */

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

static void check_abort(void)
{
	if (atomic_load_explicit(&run_abort, memory_order_acquire) && self && self->in_run)
		siglongjmp(self->unwind, 1);
}

void dpurt_wait(_Atomic uint32_t *word, uint32_t old)
{
	/* Test mode polls the abort flag; the worker re-executes instead. */
	static const struct timespec poll = { 0, 50 * 1000 * 1000 };
	int i;

	for (i = 0; i < 64; i++) {
		if (atomic_load_explicit(word, memory_order_acquire) != old)
			return;
		dpurt_relax();
	}
	while (atomic_load_explicit(word, memory_order_acquire) == old) {
		check_abort();
		futex(word, FUTEX_WAIT_PRIVATE, old, dpurt_worker_fd < 0 ? &poll : NULL);
	}
	check_abort();
}

void dpurt_wake(_Atomic uint32_t *word, int nr)
{
	futex(word, FUTEX_WAKE_PRIVATE, (uint32_t)nr, NULL);
}

/* ---- the end of a run: fault, halt ----------------------------------- */

static void reexec(void)
{
	extern char **environ;

	execve("/proc/self/exe", dpurt_argv, environ);
	if (dpurt_argv && dpurt_argv[0])
		execve(dpurt_argv[0], dpurt_argv, environ);
	_exit(1);
}

/*
 * Worker mode: let go of the DPU (the other tasklets lose its memories and
 * stop in the signal handler), report and start afresh. Async-signal-safe.
 */
static __attribute__((noreturn)) void worker_end(bool fault, const char *reason)
{
	struct dpusim_worker_finish fin;

	munmap((void *)DPURT_WRAM_BASE, dpurt_ctx.wram_size);
	munmap((void *)DPURT_MRAM_BASE, dpurt_ctx.mram_size);
	memset(&fin, 0, sizeof(fin));
	fin.size = sizeof(fin);
	fin.dpu = dpurt_worker_dpu;
	if (fault) {
		fin.flags = DPUSIM_FINISH_FAULT;
		strncpy(fin.reason, reason, sizeof(fin.reason) - 1);
	}
	while (ioctl(dpurt_worker_fd, DPUSIM_IOCTL_WORKER_FINISH, &fin) < 0 && errno == EINTR)
		;
	reexec();
	_exit(1);
}

/* Test mode: record, stop the run, unwind this tasklet. */
static __attribute__((noreturn)) void test_end(bool fault, const char *reason)
{
	if (atomic_exchange(&run_ending, 1) == 0) {
		run_res.fault = fault;
		run_res.halted = !fault;
		if (fault)
			strncpy(run_res.reason, reason, sizeof(run_res.reason) - 1);
	}
	atomic_store_explicit(&run_abort, true, memory_order_release);
	if (self && self->in_run)
		siglongjmp(self->unwind, 1);
	abort();
}

static __attribute__((noreturn)) void hang(void)
{
	for (;;)
		pause();
}

void dpurt_fault(const char *reason)
{
	if (dpurt_worker_fd < 0)
		test_end(true, reason);
	if (atomic_exchange(&run_ending, 1))
		hang();
	/* Not in a signal handler: what the DPU printed so far is kept. */
	fflush(stdout);
	worker_end(true, reason);
}

void __dpurt_halt(void)
{
	if (dpurt_worker_fd < 0)
		test_end(false, NULL);
	if (atomic_exchange(&run_ending, 1))
		hang();
	fflush(stdout);
	worker_end(false, NULL);
}

int check_stack(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

	if (!self || sp < self->stack_lo)
		return 0;
	return (int)((sp - self->stack_lo) / 4);
}

static const char *signame(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGABRT: return "SIGABRT";
	default: return "signal";
	}
}

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
	struct dpurt_msg m = { .len = 0 };
	bool in_dpu = self && self->in_run;

	(void)uc;
	if (!in_dpu && dpurt_worker_fd >= 0 && atomic_load(&run_ending))
		hang(); /* a tasklet that lost the memories of a finished DPU */
	if (!in_dpu || (dpurt_worker_fd < 0 && atomic_load(&run_ending))) {
		if (in_dpu)
			siglongjmp(self->unwind, 1);
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	dpurt_msg_str(&m, signame(sig));
	if (sig != SIGABRT) {
		dpurt_msg_str(&m, " at ");
		dpurt_msg_hex(&m, (uintptr_t)si->si_addr);
	}
	dpurt_msg_tasklet(&m);
	if (dpurt_worker_fd < 0)
		test_end(true, m.buf);
	if (atomic_exchange(&run_ending, 1))
		hang();
	worker_end(true, m.buf);
}

static void install_signals(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* ---- the pool -------------------------------------------------------- */

static __attribute__((noinline)) void run_one(struct tasklet *t)
{
	if (sigsetjmp(t->unwind, 1) == 0) {
		t->in_run = true;
		pool.entry();
	}
	t->in_run = false;
}

static void *tasklet_main(void *arg)
{
	struct tasklet *t = arg;
	uint32_t gen = t->gen;
	stack_t ss;

	self = t;
	__dpurt_tasklet_id = t->id;
	ss.ss_sp = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ss.ss_sp != MAP_FAILED) {
		ss.ss_size = ALTSTACK_SIZE;
		ss.ss_flags = 0;
		sigaltstack(&ss, NULL);
	}
	for (;;) {
		dpurt_wait(&pool.start_gen, gen);
		gen = atomic_load_explicit(&pool.start_gen, memory_order_acquire);
		if (t->id >= pool.active)
			continue;
		run_one(t);
		if (atomic_fetch_sub_explicit(&pool.remaining, 1, memory_order_acq_rel) == 1)
			dpurt_wake(&pool.remaining, 1);
	}
	return NULL;
}

static void *stack_alloc(unsigned int id)
{
	uintptr_t want = STACK_AREA + (uintptr_t)id * STACK_SIZE;
	void *p = mmap((void *)want, STACK_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_STACK, -1, 0);

	if (p == MAP_FAILED)
		p = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	mprotect(p, 4096, PROT_NONE); /* guard page */
	return p;
}

static int pool_grow(unsigned int n)
{
	int ret = 0;

	pthread_mutex_lock(&pool.lock);
	while (pool.nr_threads < n) {
		struct tasklet *t = &pool.t[pool.nr_threads];
		pthread_attr_t attr;
		void *stack = stack_alloc(pool.nr_threads);

		if (!stack) {
			ret = -ENOMEM;
			break;
		}
		t->id = pool.nr_threads;
		t->stack_lo = (uintptr_t)stack + 4096;
		t->gen = atomic_load(&pool.start_gen);
		pthread_attr_init(&attr);
		pthread_attr_setstack(&attr, stack, STACK_SIZE);
		ret = -pthread_create(&t->thread, &attr, tasklet_main, t);
		pthread_attr_destroy(&attr);
		if (ret)
			break;
		pool.nr_threads++;
	}
	pthread_mutex_unlock(&pool.lock);
	return ret;
}

int dpurt_run_dpu(const struct dpurt_config *cfg, struct dpurt_result *res)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t left;
	int ret;

	if (!cfg || !res || !cfg->entry || cfg->nr_tasklets < 1 ||
	    cfg->nr_tasklets > DPURT_MAX_TASKLETS ||
	    cfg->heap_start < DPURT_WRAM_BASE ||
	    cfg->heap_start > DPURT_WRAM_BASE + cfg->wram_size)
		return -EINVAL;
	pthread_once(&once, install_signals);
	ret = pool_grow(cfg->nr_tasklets);
	if (ret)
		return ret;

	memset(res, 0, sizeof(*res));
	memset(&run_res, 0, sizeof(run_res));
	dpurt_ctx.wram_size = cfg->wram_size;
	dpurt_ctx.mram_size = cfg->mram_size;
	dpurt_ctx.heap_start = (cfg->heap_start + 7) & ~(uintptr_t)7;
	dpurt_ctx.heap_end = DPURT_WRAM_BASE + cfg->wram_size;
	dpurt_ctx.log = cfg->log;
	dpurt_ctx.nr_tasklets = cfg->nr_tasklets;
	dpurt_sync_reset();
	dpurt_alloc_reset();
	dpurt_perf_reset();
	dpurt_log_begin();
	atomic_store(&run_abort, false);
	atomic_store(&run_ending, 0);

	pool.entry = cfg->entry;
	pool.active = cfg->nr_tasklets;
	atomic_store(&pool.remaining, cfg->nr_tasklets);
	atomic_fetch_add_explicit(&pool.start_gen, 1, memory_order_release);
	dpurt_wake(&pool.start_gen, INT32_MAX);
	while ((left = atomic_load_explicit(&pool.remaining, memory_order_acquire)) != 0)
		futex(&pool.remaining, FUTEX_WAIT_PRIVATE, left, NULL);

	dpurt_log_end();
	*res = run_res;
	return 0;
}
