// SPDX-License-Identifier: MIT
/*
 * Unit tests of the DPU-side runtime (lib/dpurt), without the kernel: the
 * test maps anonymous WRAM at 0x06000000 and MRAM at 0x08000000 and runs
 * "DPUs" with dpurt_run_dpu(), whose tasklets are functions of this file
 * written against the DPU headers (include/dpurt).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <alloc.h>
#include <barrier.h>
#include <defs.h>
#include <handshake.h>
#include <mram.h>
#include <mutex.h>
#include <perfcounter.h>
/* profiling.h as a program built with -DDPU_PROFILING sees it, 24 tasklets */
#define DPU_PROFILING 1
#define NR_THREADS 24
#include <profiling.h>
#include <sem.h>
#include <seqread.h>

#include "dpurt.h"
#include "unit.h"

#define WRAM_SIZE (64U * 1024)
#define MRAM_SIZE (4U << 20)
#define LOG_OFFSET (MRAM_SIZE - DPURT_LOG_SIZE)
#define HEAP_START (DPURT_WRAM_BASE + 100) /* unaligned on purpose */

static struct dpurt_log *test_log;

static int run(int (*entry)(void), unsigned int n, struct dpurt_result *res)
{
	struct dpurt_config cfg = {
		.entry = entry,
		.nr_tasklets = n,
		.wram_size = WRAM_SIZE,
		.mram_size = MRAM_SIZE,
		.heap_start = HEAP_START,
		.log = test_log,
	};

	return dpurt_run_dpu(&cfg, res);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- barriers ------------------------------------------------------- */

#define ROUNDS 100
static barrier_t hand_barrier;
BARRIER_INIT(init_barrier, 4);
static volatile uint32_t seen[DPURT_MAX_TASKLETS];
static _Atomic uint32_t barrier_errors;
static unsigned int cur_n;

static int barrier_entry(void)
{
	unsigned int id = me(), t;
	uint32_t r;

	for (r = 1; r <= ROUNDS; r++) {
		seen[id] = r;
		barrier_wait(&hand_barrier);
		for (t = 0; t < cur_n; t++)
			if (seen[t] != r)
				barrier_errors++;
		barrier_wait(&hand_barrier);
	}
	return 0;
}

static int barrier_init_entry(void)
{
	unsigned int id = me(), t;
	uint32_t r;

	for (r = 1; r <= ROUNDS; r++) {
		seen[id] = r + 1000;
		barrier_wait(&init_barrier);
		for (t = 0; t < 4; t++)
			if (seen[t] != r + 1000)
				barrier_errors++;
		barrier_wait(&init_barrier);
	}
	return 0;
}

static void test_barriers(void)
{
	struct dpurt_result res;
	unsigned int n;
	int bad = 0;

	for (n = 1; n <= DPURT_MAX_TASKLETS; n++) {
		memset(&hand_barrier, 0, sizeof(hand_barrier));
		hand_barrier.wait_queue = 0xff;
		hand_barrier.count = (uint8_t)n;
		hand_barrier.initial_count = (uint8_t)n;
		cur_n = n;
		barrier_errors = 0;
		memset((void *)seen, 0, sizeof(seen));
		if (run(barrier_entry, n, &res) || res.fault || barrier_errors) {
			unit_fail("barrier_wait, hand-filled barrier_t", "%u tasklets: %u errors %s", n,
				  barrier_errors, res.reason);
			bad = 1;
		}
	}
	if (!bad)
		unit_pass("barrier_wait, hand-filled barrier_t, 1 to 24 tasklets");
	barrier_errors = 0;
	UNIT_CHECK("BARRIER_INIT(name, 4): 4 tasklets, 100 rounds",
		   run(barrier_init_entry, 4, &res) == 0 && !res.fault && barrier_errors == 0 &&
			   init_barrier.initial_count == 4 && init_barrier.wait_queue == 0xff,
		   "%u errors", barrier_errors);
}

/* ---- mutexes -------------------------------------------------------- */

#define ITER 5000
MUTEX_INIT(test_mutex);
static mutex_id_t zero_id;
static uint64_t count_a, count_b, count_c;

static int mutex_entry(void)
{
	for (int i = 0; i < ITER; i++) {
		mutex_lock(MUTEX_GET(test_mutex));
		count_a++;
		mutex_unlock(MUTEX_GET(test_mutex));
		mutex_lock(zero_id);
		count_b++;
		mutex_unlock(zero_id);
		while (!mutex_trylock((mutex_id_t)(uintptr_t)0x1234))
			;
		count_c++;
		mutex_unlock((mutex_id_t)(uintptr_t)0x1234);
	}
	return 0;
}

static int trylock_entry(void)
{
	bool first = mutex_trylock(MUTEX_GET(test_mutex));
	bool second = mutex_trylock(MUTEX_GET(test_mutex));

	mutex_unlock(MUTEX_GET(test_mutex));
	count_a = first && !second && mutex_trylock(MUTEX_GET(test_mutex));
	mutex_unlock(MUTEX_GET(test_mutex));
	return 0;
}

static void test_mutexes(void)
{
	struct dpurt_result res;
	uint64_t want = 16ULL * ITER;

	count_a = count_b = count_c = 0;
	UNIT_CHECK("mutexes: MUTEX_INIT, a zero mutex_id_t, trylock on a made-up id (16 tasklets)",
		   run(mutex_entry, 16, &res) == 0 && !res.fault && count_a == want &&
			   count_b == want && count_c == want,
		   "counts %llu %llu %llu, want %llu", (unsigned long long)count_a,
		   (unsigned long long)count_b, (unsigned long long)count_c,
		   (unsigned long long)want);
	UNIT_CHECK("mutex_trylock fails on a held mutex, succeeds once released",
		   run(trylock_entry, 1, &res) == 0 && count_a == 1, "got %llu",
		   (unsigned long long)count_a);
}

/* ---- handshakes ----------------------------------------------------- */

static volatile uint32_t relay, order_err;
static int hs_ret[DPURT_MAX_TASKLETS];

static int relay_entry(void)
{
	unsigned int id = me();

	if (id > 0) {
		hs_ret[id] = handshake_wait_for(id - 1);
		if (relay != (id - 1) * id / 2)
			order_err++;
		relay += id;
	}
	if (id + 1 < cur_n)
		handshake_notify();
	return 0;
}

static int ealready_entry(void)
{
	switch (me()) {
	case 0:
		sleep_ms(100);
		handshake_notify();
		break;
	case 1:
		hs_ret[1] = handshake_wait_for(0);
		break;
	case 2:
		sleep_ms(30);
		hs_ret[2] = handshake_wait_for(0);
		hs_ret[3] = errno;
		break;
	}
	return 0;
}

static void test_handshakes(void)
{
	struct dpurt_result res;
	unsigned int i;
	int errs = 0;

	cur_n = 12;
	relay = 0;
	order_err = 0;
	memset(hs_ret, 0, sizeof(hs_ret));
	run(relay_entry, cur_n, &res);
	for (i = 0; i < cur_n; i++)
		errs += hs_ret[i] != 0;
	UNIT_CHECK("handshake relay through 12 tasklets", !res.fault && relay == 66 &&
		   order_err == 0 && errs == 0, "relay %u order errors %u wait errors %d",
		   relay, order_err, errs);
	memset(hs_ret, 0, sizeof(hs_ret));
	run(ealready_entry, 3, &res);
	UNIT_CHECK("handshake_wait_for: a second waiter for the same notifier gets EALREADY",
		   !res.fault && hs_ret[1] == 0 && hs_ret[2] == EALREADY && hs_ret[3] == EALREADY,
		   "first %d second %d errno %d", hs_ret[1], hs_ret[2], hs_ret[3]);
}

/* ---- semaphores ----------------------------------------------------- */

SEMAPHORE_INIT(test_sem, 2);
static _Atomic int inside, max_inside, sem_total;

static int sem_entry(void)
{
	for (int i = 0; i < 200; i++) {
		int now;

		sem_take(&test_sem);
		now = ++inside;
		if (now > max_inside)
			max_inside = now;
		sem_total++;
		dpurt_relax();
		inside--;
		sem_give(&test_sem);
	}
	return 0;
}

static void test_semaphores(void)
{
	struct dpurt_result res;

	inside = max_inside = sem_total = 0;
	UNIT_CHECK("SEMAPHORE_INIT(s, 2): at most 2 of 8 tasklets inside",
		   run(sem_entry, 8, &res) == 0 && !res.fault && max_inside >= 1 &&
			   max_inside <= 2 && sem_total == 1600 && test_sem.count == 2,
		   "max inside %d total %d count %u", max_inside, sem_total, test_sem.count);
}

/* ---- mem_alloc ------------------------------------------------------ */

static uintptr_t allocs[DPURT_MAX_TASKLETS][6];
static uintptr_t reset_ret;

static int alloc_entry(void)
{
	static const size_t sizes[] = { 1, 3, 8, 13, 100, 0 };

	for (int i = 0; i < 6; i++) {
		allocs[me()][i] = (uintptr_t)mem_alloc(sizes[i]);
		memset((void *)allocs[me()][i], (int)me(), sizes[i]);
	}
	return 0;
}

static int alloc_reset_entry(void)
{
	mem_alloc(64);
	reset_ret = (uintptr_t)mem_reset();
	allocs[0][0] = (uintptr_t)mem_alloc(8);
	return 0;
}

static int exhaust_entry(void)
{
	if (me() == 2)
		for (;;)
			mem_alloc(4096);
	return 0;
}

static void test_alloc(void)
{
	struct dpurt_result res;
	int bad = 0, t, i;

	run(alloc_entry, 8, &res);
	for (t = 0; t < 8; t++)
		for (i = 0; i < 6; i++) {
			uintptr_t p = allocs[t][i];

			if (p % 8 || p < ((HEAP_START + 7) & ~7UL) || p >= DPURT_WRAM_BASE + WRAM_SIZE)
				bad++;
		}
	UNIT_CHECK("mem_alloc: 8-byte aligned, inside the WRAM heap (8 tasklets)",
		   !res.fault && bad == 0, "%d bad pointers", bad);
	run(alloc_reset_entry, 1, &res);
	UNIT_CHECK("mem_reset returns the heap start, the next mem_alloc gets it",
		   !res.fault && reset_ret == ((HEAP_START + 7) & ~7UL) && allocs[0][0] == reset_ret,
		   "reset %#lx first %#lx", (unsigned long)reset_ret, (unsigned long)allocs[0][0]);
	run(exhaust_entry, 4, &res);
	UNIT_CHECK("mem_alloc exhaustion faults the DPU, naming the tasklet",
		   res.fault && strncmp(res.reason, "mem_alloc: 4096 bytes, WRAM has ", 32) == 0 &&
			   strstr(res.reason, "(tasklet 2)"),
		   "fault %d reason '%s'", res.fault, res.reason);
}

/* ---- fsb_alloc and the buddy allocator (issue 30, item 1) ----------- */

#define FSB_TASKLETS 8
#define FSB_ROUNDS 200

static uintptr_t fsb_heap, fsb_next, fsb_blocks[4];
static void *fsb_none, *fsb_again;
static fsb_allocator_t fsb_shared;
static _Atomic uint32_t fsb_errors;
static barrier_t fsb_barrier;

static void fsb_barrier_init(unsigned int n)
{
	memset(&fsb_barrier, 0, sizeof(fsb_barrier));
	fsb_barrier.wait_queue = 0xff;
	fsb_barrier.count = (uint8_t)n;
	fsb_barrier.initial_count = (uint8_t)n;
}

/* fsb_alloc(13, 3): blocks of 16, the head word after them, then the heap. */
static int fsb_layout_entry(void)
{
	fsb_allocator_t a;

	fsb_heap = (uintptr_t)mem_reset();
	a = fsb_alloc(13, 3);
	fsb_next = (uintptr_t)mem_alloc(8);
	for (int i = 0; i < 3; i++)
		fsb_blocks[i] = (uintptr_t)fsb_get(a);
	fsb_none = fsb_get(a);
	fsb_free(a, (void *)fsb_blocks[1]);
	fsb_again = fsb_get(a);
	fsb_blocks[3] = (uintptr_t)fsb_alloc(0, 1);     /* 8-byte blocks */
	return 0;
}

/* Tasklets take and give back blocks; a block is never held twice. */
static int fsb_race_entry(void)
{
	uint8_t mark = (uint8_t)(me() + 1);

	if (me() == 0)
		fsb_shared = fsb_alloc(24, FSB_TASKLETS / 2);
	barrier_wait(&fsb_barrier);
	for (int r = 0; r < FSB_ROUNDS; r++) {
		uint8_t *b = fsb_get(fsb_shared);

		if (!b) {
			dpurt_yield();
			continue;
		}
		memset(b, mark, 24);
		dpurt_yield();
		for (int i = 0; i < 24; i++)
			if (b[i] != mark)
				atomic_fetch_add(&fsb_errors, 1);
		fsb_free(fsb_shared, b);
	}
	return 0;
}

static int fsb_exhaust_entry(void)
{
	fsb_alloc(1024, 1024);  /* 1 MiB: more than the WRAM */
	return 0;
}

static void test_fsb(void)
{
	uintptr_t h = (HEAP_START + 7) & ~7UL;
	struct dpurt_result res;

	run(fsb_layout_entry, 1, &res);
	UNIT_CHECK("fsb_alloc(13, 3): 16-byte blocks from the heap, 3 * 16 + 8 bytes taken",
		   !res.fault && fsb_heap == h && fsb_blocks[0] == h && fsb_blocks[1] == h + 16 &&
			   fsb_blocks[2] == h + 32 && fsb_next == h + 56,
		   "heap %#lx blocks %#lx %#lx %#lx next %#lx", (unsigned long)fsb_heap,
		   (unsigned long)fsb_blocks[0], (unsigned long)fsb_blocks[1],
		   (unsigned long)fsb_blocks[2], (unsigned long)fsb_next);
	UNIT_CHECK("fsb_get: NULL once every block is taken, a freed block comes back",
		   fsb_none == NULL && fsb_again == (void *)fsb_blocks[1], "none %p again %p",
		   fsb_none, fsb_again);
	UNIT_CHECK("fsb_alloc(0, 1): one 8-byte block, the allocator word after it",
		   fsb_blocks[3] == h + 64 + 8, "allocator %#lx", (unsigned long)fsb_blocks[3]);
	fsb_barrier_init(FSB_TASKLETS);
	atomic_store(&fsb_errors, 0);
	run(fsb_race_entry, FSB_TASKLETS, &res);
	UNIT_CHECK("fsb_get/fsb_free between 8 tasklets: no block held twice",
		   !res.fault && atomic_load(&fsb_errors) == 0, "fault %d errors %u", res.fault,
		   atomic_load(&fsb_errors));
	run(fsb_exhaust_entry, 1, &res);
	UNIT_CHECK("fsb_alloc over the WRAM faults as mem_alloc does",
		   res.fault && strncmp(res.reason, "mem_alloc: 1048584 bytes", 24) == 0,
		   "fault %d reason '%s'", res.fault, res.reason);
}

static uintptr_t bd_heap, bd_next;
static void *bd_p[8];
static int bd_err[8];

static void *bd_alloc(int i, size_t size)
{
	errno = 0;
	bd_p[i] = buddy_alloc(size);
	bd_err[i] = errno;
	return bd_p[i];
}

/* buddy_init(2048): 2048 + 32 bytes of WRAM; sizes, limits, free, reset. */
static int buddy_basic_entry(void)
{
	int n = 0;

	bd_heap = (uintptr_t)mem_reset();
	buddy_init(2048);
	buddy_init(4096);       /* ignored: once per launch */
	bd_next = (uintptr_t)mem_alloc(8);
	bd_alloc(0, 33);        /* a 64-byte block */
	bd_alloc(1, 0);         /* EINVAL */
	bd_alloc(2, 2049);      /* EINVAL */
	bd_alloc(3, 1);         /* a 16-byte block */
	errno = 0;
	buddy_free((char *)bd_p[0] + 40);       /* inside the block: frees it */
	bd_err[4] = errno;
	errno = 0;
	buddy_free(bd_p[0]);    /* not allocated any more: EINVAL */
	bd_err[5] = errno;
	buddy_free(bd_p[3]);
	while (buddy_alloc(16))
		n++;
	bd_err[6] = errno;      /* ENOMEM */
	bd_p[6] = (void *)(uintptr_t)n;
	buddy_reset();
	bd_alloc(7, 2048);      /* the whole heap again */
	return 0;
}

static int buddy_realloc_entry(void)
{
	uint8_t *p, *q, *r;
	int bad = 0;

	mem_reset();
	buddy_init(4096);
	p = buddy_alloc(100);   /* 128 */
	for (int i = 0; i < 100; i++)
		p[i] = (uint8_t)i;
	q = buddy_realloc(p, 1000);     /* 1024: moved, contents kept */
	for (int i = 0; i < 100; i++)
		bad += q[i] != (uint8_t)i;
	r = buddy_realloc(q, 20);       /* 32: same start, rest freed */
	bd_p[0] = p;
	bd_p[1] = q;
	bd_p[2] = r;
	bd_p[3] = buddy_realloc(NULL, 16);
	bd_p[4] = buddy_realloc(r, 0);  /* frees, returns r */
	errno = 0;
	buddy_free(r);
	bd_err[4] = errno;              /* already freed by realloc(r, 0) */
	bd_err[0] = bad;
	return 0;
}

#define BUDDY_TASKLETS 8
static int buddy_race_entry(void)
{
	uint8_t mark = (uint8_t)(me() + 1);

	if (me() == 0)
		buddy_init(8192);
	barrier_wait(&fsb_barrier);
	for (int r = 0; r < FSB_ROUNDS; r++) {
		size_t size = 16u << (r % 5);
		uint8_t *b = buddy_alloc(size);

		if (!b || (uintptr_t)b % 8) {
			atomic_fetch_add(&fsb_errors, 1);
			continue;
		}
		memset(b, mark, size);
		dpurt_yield();
		for (size_t i = 0; i < size; i++)
			if (b[i] != mark)
				atomic_fetch_add(&fsb_errors, 1);
		buddy_free(b);
	}
	return 0;
}

static void test_buddy(void)
{
	uintptr_t h = (HEAP_START + 7) & ~7UL, start = h + 32;
	struct dpurt_result res;

	run(buddy_basic_entry, 1, &res);
	UNIT_CHECK("buddy_init(2048): 2048 + 32 bytes of WRAM, the second call ignored",
		   !res.fault && bd_heap == h && bd_next == h + 2048 + 32, "heap %#lx next %#lx",
		   (unsigned long)bd_heap, (unsigned long)bd_next);
	UNIT_CHECK("buddy_alloc(33): a 64-byte block at the heap's start, (1): 16 bytes after it",
		   bd_p[0] == (void *)start && bd_p[3] == (void *)(start + 64), "%p %p", bd_p[0],
		   bd_p[3]);
	UNIT_CHECK("buddy_alloc(0) and over the heap: NULL, errno EINVAL",
		   !bd_p[1] && bd_err[1] == EINVAL && !bd_p[2] && bd_err[2] == EINVAL,
		   "%p %d %p %d", bd_p[1], bd_err[1], bd_p[2], bd_err[2]);
	UNIT_CHECK("buddy_free: inside a block frees it; a free block is EINVAL",
		   bd_err[4] == 0 && bd_err[5] == EINVAL, "errno %d then %d", bd_err[4], bd_err[5]);
	UNIT_CHECK("buddy_alloc(16) until ENOMEM: 2048 / 16 = 128 blocks",
		   (uintptr_t)bd_p[6] == 128 && bd_err[6] == ENOMEM, "%lu blocks, errno %d",
		   (unsigned long)(uintptr_t)bd_p[6], bd_err[6]);
	UNIT_CHECK("buddy_reset frees every block (the whole heap allocatable)",
		   bd_p[7] == (void *)start, "%p", bd_p[7]);
	run(buddy_realloc_entry, 1, &res);
	UNIT_CHECK("buddy_realloc: grows by moving with the contents, shrinks in place",
		   !res.fault && bd_err[0] == 0 && bd_p[1] != bd_p[0] && bd_p[2] == bd_p[1],
		   "bad %d %p -> %p -> %p", bd_err[0], bd_p[0], bd_p[1], bd_p[2]);
	UNIT_CHECK("buddy_realloc(NULL, n) allocates, (p, 0) frees and returns p",
		   bd_p[3] != NULL && bd_p[4] == bd_p[2] && bd_err[4] == EINVAL, "%p %p %d",
		   bd_p[3], bd_p[4], bd_err[4]);
	fsb_barrier_init(BUDDY_TASKLETS);
	atomic_store(&fsb_errors, 0);
	run(buddy_race_entry, BUDDY_TASKLETS, &res);
	UNIT_CHECK("buddy_alloc/buddy_free between 8 tasklets: blocks never shared",
		   !res.fault && atomic_load(&fsb_errors) == 0, "fault %d errors %u", res.fault,
		   atomic_load(&fsb_errors));
}

/* ---- MRAM rules ----------------------------------------------------- */

static int mram_mode;
static uint64_t mbuf[DPURT_MAX_TASKLETS][300];
BARRIER_INIT(mram_barrier, 4);

static int mram_entry(void)
{
	uint8_t *mram = (uint8_t *)DPURT_MRAM_BASE;
	uint64_t *b = mbuf[me()];

	if (me() != 3) {
		mram_read(mram, b, 8);
		barrier_wait(&mram_barrier); /* unwound by the fault */
		return 0;
	}
	switch (mram_mode) {
	case 0: mram_read(mram, b, 2048); mram_write(b, mram + 4096, 2048);
		mram_read((void *)(uintptr_t)16, b, 8); /* a bare offset */
		barrier_wait(&mram_barrier); break;
	case 1: mram_read(mram, b, 12); break;
	case 2: mram_read(mram, b, 4096); break;
	case 3: mram_read(mram, b, 0); break;
	case 4: mram_read(mram + 4, b, 8); break;
	case 5: mram_write((uint8_t *)b + 4, mram, 8); break;
	case 6: mram_write(b, mram + MRAM_SIZE - 8, 16); break;
	case 7: mram_read((void *)(uintptr_t)0x7000000, b, 8); break;
	case 8: { /* the spec's example reason, word for word */
		mram_read(mram, b, 12); break; }
	}
	return 0;
}

static void test_mram_rules(void)
{
	static const struct {
		int mode;
		const char *reason;
	} cases[] = {
		{ 1, "mram_read: size 12 not a multiple of 8 (tasklet 3)" },
		{ 2, "mram_read: size 4096 above 2048 (tasklet 3)" },
		{ 3, "mram_read: size 0 below 8 (tasklet 3)" },
		{ 4, "mram_read: MRAM 0x8000004 unaligned (tasklet 3)" },
		{ 5, "mram_write: WRAM 0x" },
		{ 6, "mram_write: 0x83ffff8+16 outside MRAM (tasklet 3)" },
		{ 7, "mram_read: 0x7000000+8 outside MRAM (tasklet 3)" },
		{ 8, "mram_read: size 12 not a multiple of 8 (tasklet 3)" },
	};
	struct dpurt_result res;
	char name[128];
	size_t i;

	dpurt_dma_strict = true;	/* profile key dpusimStrictDma=true */
	mram_mode = 0;
	UNIT_CHECK("mram_read/mram_write within the rules (and a bare MRAM offset) do not fault",
		   run(mram_entry, 4, &res) == 0 && !res.fault && !res.halted, "reason '%s'",
		   res.reason);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mram_mode = cases[i].mode;
		snprintf(name, sizeof(name), "MRAM rule %d faults: %s", cases[i].mode, cases[i].reason);
		run(mram_entry, 4, &res);
		if (cases[i].mode == 5)
			UNIT_CHECK(name, res.fault && strncmp(res.reason, cases[i].reason, 19) == 0 &&
				   strstr(res.reason, " unaligned (tasklet 3)"), "got '%s'",
				   res.reason);
		else
			UNIT_CHECK(name, res.fault && strcmp(res.reason, cases[i].reason) == 0,
				   "got '%s'", res.reason);
	}
	dpurt_dma_strict = false;
}

/* ---- MRAM DMA as the hardware does it (the default) ------------------ */

static void test_dma_request(void)
{
	static const struct {
		uintptr_t mram, wram;
		unsigned int n;
		uintptr_t mram_out, wram_out;
		unsigned int n_out;
	} cases[] = {
		{ 0x8000000, 0x1000, 8, 0x8000000, 0x1000, 8 },		/* legal */
		{ 0x8000000, 0x1000, 2048, 0x8000000, 0x1000, 2048 },
		{ 0x8000004, 0x1000, 8, 0x8000000, 0x1000, 8 },		/* low bits ignored */
		{ 0x8000007, 0x1003, 16, 0x8000000, 0x1000, 16 },
		{ 0x800000d, 0x100c, 8, 0x8000008, 0x1008, 8 },
		{ 0x8000000, 0x1000, 4, 0x8000000, 0x1000, 2048 },	/* (4 >> 3) - 1 = 0xff */
		{ 0x8000000, 0x1000, 0, 0x8000000, 0x1000, 2048 },
		{ 0x8000000, 0x1000, 7, 0x8000000, 0x1000, 2048 },
		{ 0x8000000, 0x1000, 12, 0x8000000, 0x1000, 8 },	/* rounds down */
		{ 0x8000000, 0x1000, 2047, 0x8000000, 0x1000, 2040 },
		{ 0x8000000, 0x1000, 2056, 0x8000000, 0x1000, 8 },	/* 8-bit field wraps */
		{ 0x8000000, 0x1000, 4096, 0x8000000, 0x1000, 2048 },
	};
	char name[160];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uintptr_t m = cases[i].mram, w = cases[i].wram;
		unsigned int n = dpurt_dma_request(&m, &w, cases[i].n);

		snprintf(name, sizeof(name),
			 "DMA of %u bytes MRAM %#lx WRAM %#lx moves %u bytes %#lx -> %#lx",
			 cases[i].n, (unsigned long)cases[i].mram, (unsigned long)cases[i].wram,
			 cases[i].n_out, (unsigned long)cases[i].mram_out,
			 (unsigned long)cases[i].wram_out);
		UNIT_CHECK(name, n == cases[i].n_out && m == cases[i].mram_out &&
			   w == cases[i].wram_out, "got %u bytes %#lx -> %#lx", n,
			   (unsigned long)m, (unsigned long)w);
	}
}

static int dma_hw_mode;
static uint64_t dma_buf[300] __attribute__((aligned(8)));

static int dma_hw_entry(void)
{
	uint64_t *mram = (uint64_t *)DPURT_MRAM_BASE;

	switch (dma_hw_mode) {
	case 0: /* unaligned MRAM: the word holding the address */
		mram_read((uint8_t *)mram + 8 + 5, dma_buf, 8);
		break;
	case 1: /* 4 bytes: ldma's size field is 0xff, 2048 bytes move */
		mram_read(mram, dma_buf, 4);
		break;
	case 2: /* 12 bytes: one word moves */
		mram_write(dma_buf, mram + 100, 12);
		break;
	case 3: /* unaligned WRAM: the aligned-down word is written */
		mram_read(mram + 2, (uint8_t *)dma_buf + 3, 8);
		break;
	case 4: /* past 4 GiB: a DPU's 32-bit address wraps (PIM-TC) */
		mram_read((uint8_t *)mram + 24 + 0x100000000ull, dma_buf, 8);
		mram_read((uint8_t *)mram + 32 + (uint32_t)-8, dma_buf + 1, 8);
		break;
	}
	return 0;
}

static void test_mram_hw_mode(void)
{
	uint64_t *mram = (uint64_t *)DPURT_MRAM_BASE;
	struct dpurt_result res;
	unsigned int i;
	bool ok;

	dpurt_dma_strict = false;
	for (i = 0; i < 300; i++)
		mram[i] = 0x1111111111111111ull * (i % 15) + i;

	memset(dma_buf, 0xee, sizeof(dma_buf));
	dma_hw_mode = 0;
	run(dma_hw_entry, 1, &res);
	UNIT_CHECK("default: mram_read at MRAM+13 reads the word at MRAM+8, no fault",
		   !res.fault && dma_buf[0] == mram[1] && dma_buf[1] == 0xeeeeeeeeeeeeeeeeull,
		   "fault %d '%s', got %#llx", res.fault, res.reason,
		   (unsigned long long)dma_buf[0]);

	memset(dma_buf, 0xee, sizeof(dma_buf));
	dma_hw_mode = 1;
	run(dma_hw_entry, 1, &res);
	ok = !res.fault && dma_buf[256] == 0xeeeeeeeeeeeeeeeeull;
	for (i = 0; i < 256; i++)
		ok = ok && dma_buf[i] == mram[i];
	UNIT_CHECK("default: mram_read of 4 bytes moves 2048 bytes, as ldma does", ok,
		   "fault %d '%s'", res.fault, res.reason);

	for (i = 0; i < 4; i++)
		dma_buf[i] = 0xaaaa000000000000ull + i;
	mram[102] = 0x5555;
	dma_hw_mode = 2;
	run(dma_hw_entry, 1, &res);
	UNIT_CHECK("default: mram_write of 12 bytes writes one word",
		   !res.fault && mram[100] == dma_buf[0] && mram[101] == 0x1111111111111111ull * (101 % 15) + 101 &&
		   mram[102] == 0x5555, "fault %d '%s'", res.fault, res.reason);

	memset(dma_buf, 0xee, sizeof(dma_buf));
	dma_hw_mode = 3;
	run(dma_hw_entry, 1, &res);
	UNIT_CHECK("default: mram_read to WRAM+3 fills the word at WRAM+0",
		   !res.fault && dma_buf[0] == mram[2] && dma_buf[1] == 0xeeeeeeeeeeeeeeeeull,
		   "fault %d '%s'", res.fault, res.reason);

	memset(dma_buf, 0xee, sizeof(dma_buf));
	dma_hw_mode = 4;
	run(dma_hw_entry, 1, &res);
	UNIT_CHECK("an MRAM address past 4 GiB wraps to 32 bits, as the DPU's does",
		   !res.fault && dma_buf[0] == mram[3] && dma_buf[1] == mram[3],
		   "fault %d '%s', got %#llx %#llx", res.fault, res.reason,
		   (unsigned long long)dma_buf[0], (unsigned long long)dma_buf[1]);
}

/* ---- signals, halt, a run after a fault ----------------------------- */

static int crash_entry(void)
{
	volatile uintptr_t zero = 0;

	if (me() == 1)
		*(volatile int *)zero = 1;
	barrier_wait(&mram_barrier); /* 4 tasklets: unwound by the fault */
	return 0;
}

static _Atomic int after_halt;

static int halt_entry(void)
{
	if (me() == 0)
		halt();
	sleep_ms(10);
	after_halt++;
	return 0;
}

static int ok_entry(void)
{
	return 0;
}

static void test_end_of_run(void)
{
	struct dpurt_result res;
	struct dpurt_config bad = { .entry = ok_entry, .nr_tasklets = 25, .wram_size = WRAM_SIZE,
				    .mram_size = MRAM_SIZE, .heap_start = HEAP_START };

	run(crash_entry, 4, &res);
	UNIT_CHECK("SIGSEGV in a tasklet faults the DPU: 'SIGSEGV at 0x0 (tasklet 1)'",
		   res.fault && strcmp(res.reason, "SIGSEGV at 0x0 (tasklet 1)") == 0, "got '%s'",
		   res.reason);
	after_halt = 0;
	run(halt_entry, 3, &res);
	UNIT_CHECK("halt() ends the run without a fault", !res.fault && res.halted,
		   "fault %d halted %d", res.fault, res.halted);
	UNIT_CHECK("a run after faults starts clean", run(ok_entry, 24, &res) == 0 && !res.fault &&
		   !res.halted, "'%s'", res.reason);
	UNIT_CHECK("dpurt_run_dpu refuses 25 tasklets", dpurt_run_dpu(&bad, &res) == -EINVAL,
		   "accepted");
}

/* ---- seqread -------------------------------------------------------- */

#define SEQ_N 20000U
static uint32_t seq_errors;

static int seqread_entry(void)
{
	seqreader_t sr;
	uint32_t *p, i;

	p = seqread_init(seqread_alloc(), (void *)(DPURT_MRAM_BASE + 4), &sr);
	for (i = 1; i <= SEQ_N; i++) {
		if (*p != i)
			seq_errors++;
		p = seqread_get(p, sizeof(*p), &sr);
	}
	if ((uintptr_t)seqread_tell(p, &sr) != DPURT_MRAM_BASE + 4 + 4 * SEQ_N)
		seq_errors += 1000000;
	return 0;
}

static void test_seqread(void)
{
	struct dpurt_result res;
	uint32_t *m = (uint32_t *)DPURT_MRAM_BASE;
	uint32_t i;

	for (i = 0; i <= SEQ_N + 1000; i++)
		m[i] = i;
	seq_errors = 0;
	UNIT_CHECK("seqread_init/get/tell over 20000 words from an unaligned start",
		   run(seqread_entry, 1, &res) == 0 && !res.fault && seq_errors == 0,
		   "%u errors, '%s'", seq_errors, res.reason);
}

/* ---- log ------------------------------------------------------------ */

static int log_mode;

static int log_entry(void)
{
	int64_t big = (int64_t)1 << 40;

	if (log_mode == 1) {
		if (me() == 0)
			for (int i = 0; i < 700; i++)
				printf("line %04d %089d\n", i, 0);
		return 0;
	}
	printf("tasklet %u big %lld\n", me(), (long long)(big + me()));
	barrier_wait(&hand_barrier);
	if (me() == 0) {
		puts("puts line");
		putchar('o');
		putchar('k');
		putchar('\n');
	}
	return 0;
}

static void test_logging(void)
{
	struct dpurt_result res;
	char want[64];
	bool lines = true;
	unsigned int t;

	memset(&hand_barrier, 0, sizeof(hand_barrier));
	hand_barrier.initial_count = 4;
	log_mode = 0;
	test_log->length = 1234; /* reset at the start of the run */
	test_log->lost = 99;
	run(log_entry, 4, &res);
	for (t = 0; t < 4; t++) {
		snprintf(want, sizeof(want), "tasklet %u big %lld\n", t, (long long)((1LL << 40) + t));
		if (!memmem(test_log->text, test_log->length, want, strlen(want)))
			lines = false;
	}
	UNIT_CHECK("printf/puts/putchar of tasklets go to the DPU's log",
		   !res.fault && lines && test_log->lost == 0 &&
			   test_log->length > 15 &&
			   memcmp(test_log->text + test_log->length - 13, "puts line\nok\n", 13) == 0,
		   "length %u lost %u: '%.*s'", test_log->length, test_log->lost,
		   (int)test_log->length, test_log->text);
	log_mode = 1;
	run(log_entry, 1, &res);
	UNIT_CHECK("log overflow: 65528 bytes kept, the rest counted in lost",
		   !res.fault && test_log->length == DPURT_LOG_SIZE - 8 &&
			   test_log->lost == 70000 - (DPURT_LOG_SIZE - 8) &&
			   memcmp(test_log->text, "line 0000 0", 11) == 0,
		   "length %u lost %u", test_log->length, test_log->lost);
}

/* ---- perfcounter ---------------------------------------------------- */

static perfcounter_t pc[4];
static int pc_monotonic;

static int perf_entry(void)
{
	perfcounter_t prev;

	pc[0] = perfcounter_config(COUNT_CYCLES, true);
	pc[1] = perfcounter_get();
	sleep_ms(20);
	pc[2] = perfcounter_get();
	pc_monotonic = 1;
	prev = pc[2];
	for (int i = 0; i < 100000; i++) {
		perfcounter_t v = perfcounter_get();

		if (v < prev)
			pc_monotonic = 0;
		prev = v;
	}
	pc[3] = perfcounter_config(COUNT_CYCLES, true);
	pc[0] = perfcounter_get(); /* just reset: small */
	return 0;
}

static void test_perfcounter(void)
{
	struct dpurt_result res;

#ifdef CLOCKS_PER_SEC
	UNIT_CHECK("CLOCKS_PER_SEC is the SDK's DPU variable, not a macro", 0,
		   "perfcounter.h defines CLOCKS_PER_SEC as a macro");
#else
	UNIT_CHECK("CLOCKS_PER_SEC is the SDK's DPU variable, not a macro",
		   &CLOCKS_PER_SEC != NULL && CLOCKS_PER_SEC == 350000000u, "value %u",
		   (unsigned int)CLOCKS_PER_SEC);
#endif

	run(perf_entry, 1, &res);
	/* 20 ms at 350 MHz: 7,000,000 cycles */
	UNIT_CHECK("perfcounter: monotonic, 350 MHz simulated cycles, reset by config",
		   !res.fault && pc_monotonic && pc[2] >= 7000000 && pc[2] < 7000000ULL * 50 &&
			   pc[3] >= pc[2] && pc[0] < pc[2] && CLOCKS_PER_SEC == 350000000u,
		   "values %llu %llu %llu %llu", (unsigned long long)pc[0],
		   (unsigned long long)pc[1], (unsigned long long)pc[2], (unsigned long long)pc[3]);
}

/* ---- profiling.h (issue 30, item 6) ---------------------------------- */

PROFILING_INIT(prof_section);
static int prof_mode;

static int prof_entry(void)
{
	if (prof_mode == 1) {           /* started twice */
		profiling_start(&prof_section);
		profiling_start(&prof_section);
	} else if (prof_mode == 2) {    /* stopped, never started */
		profiling_stop(&prof_section);
	}
	for (int i = 0; i < 3; i++) {
		profiling_start(&prof_section);
		sleep_ms(2);
		profiling_stop(&prof_section);
	}
	return 0;
}

static void test_profiling(void)
{
	struct dpurt_result res;
	int bad = 0;

	prof_mode = 0;
	run(prof_entry, 4, &res);
	for (int t = 0; t < 24; t++) {
		uint32_t c = prof_section.count[t];

		/* 3 x 2 ms at 350 MHz / 16: 131250 at least */
		if (prof_section.start[t] != PROFILING_RESET_VALUE ||
		    (t < 4 ? c < 131250 || c > 131250 * 50 : c != 0))
			bad++;
	}
	UNIT_CHECK("profiling_start/stop count each tasklet's time in its section",
		   !res.fault && bad == 0, "%d bad slots, tasklet 0: count %u start %#x", bad,
		   prof_section.count[0], prof_section.start[0]);
	memset(&prof_section.start, 0xff, sizeof(prof_section.start));
	prof_mode = 1;
	run(prof_entry, 2, &res);
	UNIT_CHECK("profiling_start twice faults the DPU",
		   res.fault && strncmp(res.reason, "profiling_start: section already started", 40) == 0,
		   "fault %d reason '%s'", res.fault, res.reason);
	memset(&prof_section.start, 0xff, sizeof(prof_section.start));
	prof_mode = 2;
	run(prof_entry, 1, &res);
	UNIT_CHECK("profiling_stop without a start faults the DPU",
		   res.fault && strncmp(res.reason, "profiling_stop: section not started", 35) == 0,
		   "fault %d reason '%s'", res.fault, res.reason);
}

int main(void)
{
	void *w = mmap((void *)DPURT_WRAM_BASE, WRAM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	void *m = mmap((void *)DPURT_MRAM_BASE, MRAM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (w != (void *)DPURT_WRAM_BASE || m != (void *)DPURT_MRAM_BASE) {
		printf("not ok - cannot map WRAM/MRAM at their fixed addresses\n");
		return 1;
	}
	test_log = (struct dpurt_log *)(DPURT_MRAM_BASE + LOG_OFFSET);
	setvbuf(stdout, NULL, _IOLBF, 0);

	test_barriers();
	test_mutexes();
	test_handshakes();
	test_semaphores();
	test_alloc();
	test_fsb();
	test_buddy();
	test_mram_rules();
	test_dma_request();
	test_mram_hw_mode();
	test_end_of_run();
	test_seqread();
	test_logging();
	test_perfcounter();
	test_profiling();
	return unit_done();
}
