// SPDX-License-Identifier: MIT
/*
 * run.c - tasklets: NR_TASKLETS coroutines of the program's main per
 * launch, on the worker's one thread; faults, halt() and fatal signals.
 *
 * A DPU interleaves its tasklets in hardware, one instruction each in
 * turn, and a DMA (mram_read/mram_write) stalls the tasklet issuing it.
 * dpusim runs them as coroutines in round-robin order: a tasklet runs
 * until it issues a DMA, passes a barrier or waits (mutex, handshake,
 * semaphore, a barrier not yet full), then the next one runs.  This keeps
 * the order programs written for the hardware rely on (after a barrier,
 * every tasklet reaches its first DMA before any goes past it) and costs
 * no system call per switch, where threads handing over in this order
 * would need a futex wake and wait per switch.  A tasklet that spins on a
 * variable without any of those calls never lets the others run (the DPU
 * never finishes, as an endless program).
 */
#include "dpurt.h"

#include <errno.h>
#include <pthread.h>
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
	unsigned int id;
	bool in_run;
	bool done;
	void *sp;                     /* saved stack pointer when switched out */
	uintptr_t stack_lo;
	uintptr_t stack_hi;
};

static struct {
	struct tasklet t[DPURT_MAX_TASKLETS];
	unsigned int nr_stacks;
	unsigned int active;
	int (*entry)(void);
} pool;

/* The tasklet running on this thread, and where the scheduler waits. */
static __thread struct tasklet *self;
static __thread void *sched_sp;

/*
 * dpurt_switch(save, to): save the callee-saved registers on the current
 * stack, store the stack pointer in *save, continue on the stack to (which
 * was saved the same way, or made by tasklet_stack()).
 */
void dpurt_switch(void **save, void *to);
__asm__(".text\n"
	".globl dpurt_switch\n"
	".type dpurt_switch, @function\n"
	"dpurt_switch:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n"
	"\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n"
	"\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n"
	".size dpurt_switch, .-dpurt_switch\n");

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

/* ---- waiting: the other tasklets run ------------------------------ */

void dpurt_yield(void)
{
	struct tasklet *t = self;

	if (!t || !t->in_run)
		return;
	dpurt_time_take();	/* its instructions so far are its own */
	dpurt_switch(&t->sp, sched_sp);
}

void dpurt_wait(_Atomic uint32_t *word, uint32_t old)
{
	while (atomic_load_explicit(word, memory_order_acquire) == old) {
		if (!self || !self->in_run)
			return;	/* not a tasklet: nobody else could change it */
		dpurt_yield();
	}
}

void dpurt_wake(_Atomic uint32_t *word, int nr)
{
	/* the waiters look again when their turn comes */
	(void)word;
	(void)nr;
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
 * Worker mode: let go of the DPU (its memories leave the window first),
 * report and start afresh. Async-signal-safe.
 */
static __attribute__((noreturn)) void worker_end(bool fault, const char *reason)
{
	struct dpusim_worker_finish fin;

	/*
	 * halt(): no stream move left in flight.  A fault may have stopped a
	 * move's submission halfway, so it does not wait: the kernel fails a
	 * move left over for another DPU (struct dpusim_move_ring::dpu).
	 */
	if (!fault)
		dpurt_ebsp_quiesce();
	munmap((void *)DPURT_WRAM_BASE, DPUSIM_WINDOW_SIZE);	/* the window */
	memset(&fin, 0, sizeof(fin));
	fin.size = sizeof(fin);
	fin.dpu = dpurt_worker_dpu;
	fin.modeled_cycles = dpurt_time_end();
	if (fault) {
		fin.flags = DPUSIM_FINISH_FAULT;
		strncpy(fin.reason, reason, sizeof(fin.reason) - 1);
	}
	while (ioctl(dpurt_worker_fd, DPUSIM_IOCTL_WORKER_FINISH, &fin) < 0 && errno == EINTR)
		;
	reexec();
	_exit(1);
}

/* Test mode: record, stop the run, leave this tasklet for good. */
static __attribute__((noreturn)) void test_end(bool fault, const char *reason)
{
	if (atomic_exchange(&run_ending, 1) == 0) {
		run_res.fault = fault;
		run_res.halted = !fault;
		if (fault)
			strncpy(run_res.reason, reason, sizeof(run_res.reason) - 1);
	}
	atomic_store_explicit(&run_abort, true, memory_order_release);
	/* back to the scheduler for good: the run's stacks are dropped */
	if (self && self->in_run)
		dpurt_switch(&self->sp, sched_sp);
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
			test_end(true, "fault");
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

/* ---- the scheduler --------------------------------------------------- */

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

static int stacks_grow(unsigned int n)
{
	while (pool.nr_stacks < n) {
		struct tasklet *t = &pool.t[pool.nr_stacks];
		void *stack = stack_alloc(pool.nr_stacks);

		if (!stack)
			return -ENOMEM;
		t->id = pool.nr_stacks;
		t->stack_lo = (uintptr_t)stack + 4096;
		t->stack_hi = (uintptr_t)stack + STACK_SIZE;
		pool.nr_stacks++;
	}
	return 0;
}

/* A tasklet's first frame: main, then back to the scheduler for good. */
static __attribute__((noreturn)) void tasklet_start(void)
{
	struct tasklet *t = self;

	pool.entry();
	dpurt_time_done();
	t->in_run = false;
	t->done = true;
	dpurt_switch(&t->sp, sched_sp);
	abort();
}

/* A fresh stack for dpurt_switch: six zero registers, then the entry. */
static void tasklet_stack(struct tasklet *t)
{
	uintptr_t *sp = (uintptr_t *)(t->stack_hi & ~(uintptr_t)15) - 8;

	memset(sp, 0, 8 * sizeof(*sp));
	sp[6] = (uintptr_t)tasklet_start;	/* dpurt_switch's ret */
	t->sp = sp;
}

static void install_altstack(void)
{
	static __thread bool done;
	stack_t ss;

	if (done)
		return;
	ss.ss_sp = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ss.ss_sp == MAP_FAILED)
		return;
	ss.ss_size = ALTSTACK_SIZE;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) == 0)
		done = true;
}

int dpurt_run_dpu(const struct dpurt_config *cfg, struct dpurt_result *res)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	unsigned int i, left;
	int ret;

	if (!cfg || !res || !cfg->entry || cfg->nr_tasklets < 1 ||
	    cfg->nr_tasklets > DPURT_MAX_TASKLETS ||
	    cfg->heap_start < DPURT_WRAM_BASE ||
	    cfg->heap_start > DPURT_WRAM_BASE + cfg->wram_size)
		return -EINVAL;
	pthread_once(&once, install_signals);
	install_altstack();
	ret = stacks_grow(cfg->nr_tasklets);
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
	dpurt_ebsp_reset(cfg->launch);
	dpurt_log_begin();
	atomic_store(&run_abort, false);
	atomic_store(&run_ending, 0);

	pool.entry = cfg->entry;
	pool.active = cfg->nr_tasklets;
	for (i = 0; i < pool.active; i++) {
		pool.t[i].done = false;
		pool.t[i].in_run = true;
		tasklet_stack(&pool.t[i]);
	}
	/* round robin until every tasklet has returned, or the run stops */
	do {
		left = 0;
		for (i = 0; i < pool.active; i++) {
			struct tasklet *t = &pool.t[i];

			if (t->done)
				continue;
			self = t;
			__dpurt_tasklet_id = t->id;
			dpurt_switch(&sched_sp, t->sp);
			self = NULL;
			if (atomic_load_explicit(&run_abort, memory_order_acquire))
				break;
			left += !t->done;
		}
	} while (left && !atomic_load_explicit(&run_abort, memory_order_acquire));
	for (i = 0; i < pool.active; i++)
		pool.t[i].in_run = false;
	__dpurt_tasklet_id = 0;

	dpurt_log_end();
	*res = run_res;
	return 0;
}
