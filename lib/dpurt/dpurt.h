/* SPDX-License-Identifier: MIT */
/*
 * dpurt.h - internals of the DPU-side runtime (libdpusim-dpurt.a).
 *
 * The runtime runs one DPU at a time: dpurt_run_dpu() takes the DPU's
 * memories (already mapped: WRAM at DPURT_WRAM_BASE, MRAM at
 * DPURT_MRAM_BASE), resets the per-launch state (log header, WRAM heap,
 * lock/barrier/semaphore/handshake tables, perfcounter), runs
 * nr_tasklets threads of the program's main on a pool of threads kept
 * across runs, and returns when all have returned or one called halt().
 *
 * Two modes:
 *  - worker (worker.c, the main() of every program built by dpusim-cc):
 *    a fault (broken MRAM rule, WRAM exhausted, a signal such as SIGSEGV in
 *    a tasklet) unmaps the DPU's memories, reports FINISH/FAULT with the
 *    reason to the kernel and re-executes the program: it never returns.
 *  - test (tests/unit/test_dpurt.c): dpurt_run_dpu() returns the fault in
 *    struct dpurt_result; the faulting tasklet unwinds at once, the others
 *    at their next blocking call (barrier, mutex, semaphore, handshake) or
 *    when they return.
 */
#ifndef DPUSIM_DPURT_H
#define DPUSIM_DPURT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DPURT_WRAM_BASE 0x06000000UL
#define DPURT_MRAM_BASE 0x08000000UL
#define DPURT_MAX_TASKLETS 24U
#define DPURT_LOG_SIZE 65536U     /* __stdout_buffer, header included */
#define DPURT_REASON_LEN 56U      /* DPUSIM_REASON_LEN */

/* The .dpusim.program section (dpusim-cc writes it, dpu_load reads it). */
struct dpurt_program_desc {
	uint32_t magic;           /* 0x53555044 "DPUS" */
	uint32_t version;         /* 1 */
	uint32_t nr_tasklets;     /* 1..24 */
	uint32_t reserved;
};

/* Header of __stdout_buffer; the text follows. */
struct dpurt_log {
	uint32_t length;
	uint32_t lost;
	char text[];
};

struct dpurt_config {
	int (*entry)(void);       /* the program's main */
	unsigned int nr_tasklets; /* 1..DPURT_MAX_TASKLETS */
	uint32_t wram_size;       /* WRAM mapped at DPURT_WRAM_BASE */
	uint64_t mram_size;       /* MRAM mapped at DPURT_MRAM_BASE */
	uintptr_t heap_start;     /* __dpusim_wram_end */
	struct dpurt_log *log;    /* DPURT_LOG_SIZE bytes, or NULL: no log */
	uint32_t launch;          /* the DPU's launch count (its claim); 0: none */
};

struct dpurt_result {
	bool fault;
	bool halted;
	char reason[DPURT_REASON_LEN];
};

/* Runs one DPU; 0, or -errno if the config is invalid (nothing ran). */
int dpurt_run_dpu(const struct dpurt_config *cfg, struct dpurt_result *res);

/* ---- shared by the runtime's files ---------------------------------- */

/* The DPU being run (valid during dpurt_run_dpu). */
struct dpurt_ctx {
	uint32_t wram_size;
	uint64_t mram_size;
	uintptr_t heap_start;
	uintptr_t heap_end;
	struct dpurt_log *log;
	unsigned int nr_tasklets;
};
extern struct dpurt_ctx dpurt_ctx;

/*
 * MRAM DMA (mram.c). dpurt_dma_strict: fault on a request outside the SDK's
 * rules (profile key dpusimStrictDma; a worker reads DPUSIM_STRICT_DMA=1).
 * dpurt_dma_request: what the hardware's ldma/sdma does with a request,
 * the addresses' low 3 bits dropped, returns the bytes it moves.
 */
extern bool dpurt_dma_strict;
unsigned int dpurt_dma_request(uintptr_t *mram, uintptr_t *wram, unsigned int n);

/* Worker mode: the worker file descriptor and the claimed DPU. */
extern int dpurt_worker_fd;
extern uint32_t dpurt_worker_dpu;
extern char **dpurt_argv;

/* Async-signal-safe reason builder (truncates at DPURT_REASON_LEN - 1). */
struct dpurt_msg {
	char buf[DPURT_REASON_LEN];
	size_t len;
};
void dpurt_msg_str(struct dpurt_msg *m, const char *s);
void dpurt_msg_dec(struct dpurt_msg *m, uint64_t v);
void dpurt_msg_hex(struct dpurt_msg *m, uint64_t v);
/* Appends " (tasklet N)" (or " (runtime)" outside a tasklet). */
void dpurt_msg_tasklet(struct dpurt_msg *m);

/* Faults the DPU with the reason; never returns. */
__attribute__((noreturn)) void dpurt_fault(const char *reason);

/* Blocking: returns once *word != old (futex; spins a little first). */
/* The running tasklet lets the others run (run.c's round robin). */
void dpurt_yield(void);
void dpurt_wait(_Atomic uint32_t *word, uint32_t old);
void dpurt_wake(_Atomic uint32_t *word, int nr);
static inline void dpurt_relax(void)
{
	__builtin_ia32_pause();
}

/* Per-launch resets of the other files. */
void dpurt_sync_reset(void);
void dpurt_alloc_reset(void);
void dpurt_buddy_reset(void);  /* the buddy heap lives in the mem_alloc heap */
void dpurt_perf_reset(void);
void dpurt_ebsp_reset(uint32_t launch);
void dpurt_ebsp_quiesce(void);  /* before FINISH: no stream move left in flight */
void dpurt_log_begin(void);   /* zero the header, point stdout at the log */
void dpurt_log_end(void);     /* flush, give stdout back (test mode) */

/*
 * The modeled time (perfcounter.c, model.c): no-ops unless the program was
 * instrumented (dpurt_modeled).  take: the running tasklet's instructions
 * so far into the model; dma: a DMA of @bytes; now: the tasklet's cycle;
 * sync: a synchronisation's instructions, then now; until: the tasklet
 * could not go on before @cycle; done: it returned; end: the run's
 * modeled length (its last cycle and the launch's fixed cost).  lock: the
 * running tasklet takes a mutex whose modeled holds are @s, spinning to
 * the first free cycle; returns the hold's start, from which unlock has
 * the hold take the lock's idle cycles (model.h), the tasklet going on
 * where the last is taken.
 */
struct dpurt_model_spans;
extern bool dpurt_modeled;
void dpurt_time_take(void);
void dpurt_time_dma(uint32_t bytes);
uint64_t dpurt_time_now(void);
uint64_t dpurt_time_sync(void);
void dpurt_time_until(uint64_t cycle);
uint64_t dpurt_time_lock(struct dpurt_model_spans *s);
void dpurt_time_unlock(struct dpurt_model_spans *s, uint64_t start);
void dpurt_time_done(void);
uint64_t dpurt_time_end(void);
extern __thread unsigned int __dpurt_tasklet_id;

/* MRAM address (0x08000000 + offset, or a bare offset) to a pointer; 0 if
 * [addr, addr + len) is not inside MRAM. */
uintptr_t dpurt_mram_addr(uintptr_t addr, uint64_t len);

#endif /* DPUSIM_DPURT_H */
