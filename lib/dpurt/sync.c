// SPDX-License-Identifier: MIT
/*
 * sync.c - mutexes and atomic bits, barriers, semaphores, handshakes.
 *
 * The objects a program names (a mutex_id_t value, the address of a
 * barrier_t or sem_t) are keys into one table of runtime objects, emptied
 * at every launch: the program's own bytes are only read (barrier counts)
 * or mirrored (semaphore counts), never used as lock words, so ids that are
 * zero or made up work, and hand-filled barriers too.  Waiting spins
 * briefly, then sleeps on a futex: cheap when tasklets outnumber CPUs.
 */
#include "dpurt.h"
#include "model.h"

#include <errno.h>
#include <string.h>

#include <barrier.h>
#include <defs.h>
#include <handshake.h>
#include <sem.h>

#define NR_OBJS 1024U

enum { OBJ_FREE, OBJ_INIT, OBJ_READY };
enum { KIND_LOCK = 1, KIND_BARRIER, KIND_SEM };

struct obj {
	uint32_t run;         /* the run it belongs to: an older one is free */
	_Atomic uint32_t state;
	uint32_t kind;
	uintptr_t key;
	_Atomic uint32_t a;   /* lock: 0 free, 1 held, 2 held + waiters; barrier: arrived; sem: value */
	_Atomic uint32_t b;   /* barrier: generation */
	/*
	 * The modeled time (perfcounter.c): lock: the cycle its holder's
	 * modeled hold began (mt), its modeled holds (lock_spans[] at the
	 * object's index); barrier: the last arrival so far, and the cycle the
	 * last generation was let go; semaphore: the last give.
	 */
	uint64_t mt;
	uint64_t mrel;
};

static struct obj objs[NR_OBJS];
static struct dpurt_model_spans lock_spans[NR_OBJS];
/* Bumped per run: emptying the table costs nothing (see obj_get). */
static uint32_t sync_run = 1;

/* Handshakes, per notifier: 0 nobody waits, 1 a tasklet waits, 2 notified. */
static _Atomic uint32_t hs_state[DPURT_MAX_TASKLETS];
/* and the modeled cycles its waiter began waiting and it notified */
static uint64_t hs_wait_cycle[DPURT_MAX_TASKLETS];
static uint64_t hs_notify_cycle[DPURT_MAX_TASKLETS];

void dpurt_sync_reset(void)
{
	if (++sync_run == 0) {	/* wrapped: start the table afresh */
		memset(objs, 0, sizeof(objs));
		sync_run = 1;
	}
	memset(hs_state, 0, sizeof(hs_state));
	memset(hs_wait_cycle, 0, sizeof(hs_wait_cycle));
	memset(hs_notify_cycle, 0, sizeof(hs_notify_cycle));
}

static const char *kind_name(uint32_t kind)
{
	return kind == KIND_LOCK ? "mutexes" : kind == KIND_BARRIER ? "barriers" : "semaphores";
}

static struct obj *obj_get(uint32_t kind, uintptr_t key, uint32_t init_a)
{
	uint64_t h = ((uint64_t)key * 0x9E3779B97F4A7C15ULL) ^ kind;
	unsigned int i, idx = (unsigned int)(h >> 54) % NR_OBJS;

	for (i = 0; i < NR_OBJS; i++, idx = (idx + 1) % NR_OBJS) {
		struct obj *o = &objs[idx];
		uint32_t s;

		if (o->run != sync_run) {	/* left over from an earlier run */
			o->run = sync_run;
			atomic_store_explicit(&o->state, OBJ_FREE, memory_order_relaxed);
		}
		s = atomic_load_explicit(&o->state, memory_order_acquire);

		if (s == OBJ_FREE) {
			uint32_t expect = OBJ_FREE;

			if (atomic_compare_exchange_strong(&o->state, &expect, OBJ_INIT)) {
				o->kind = kind;
				o->key = key;
				atomic_store_explicit(&o->a, init_a, memory_order_relaxed);
				atomic_store_explicit(&o->b, 0, memory_order_relaxed);
				o->mt = 0;
				o->mrel = 0;
				lock_spans[o - objs].n = 0;
				atomic_store_explicit(&o->state, OBJ_READY, memory_order_release);
				return o;
			}
			s = expect;
		}
		while (s == OBJ_INIT) {
			dpurt_relax();
			s = atomic_load_explicit(&o->state, memory_order_acquire);
		}
		if (o->kind == kind && o->key == key)
			return o;
	}
	{
		struct dpurt_msg m = { .len = 0 };

		dpurt_msg_str(&m, "more than ");
		dpurt_msg_dec(&m, NR_OBJS);
		dpurt_msg_str(&m, " ");
		dpurt_msg_str(&m, kind_name(kind));
		dpurt_msg_tasklet(&m);
		dpurt_fault(m.buf);
	}
}

/* ---- locks: mutexes and atomic bits ---------------------------------- */

/*
 * Modeled, a lock's holds are spans of modeled time (model.h): the
 * tasklets take turns only at DMAs and waits, so one may lock and unlock
 * many times before the next runs.  Its holds are then ahead in modeled
 * time, and the next tasklet's take the idle stretches between them, or
 * queue behind them where there are none.  A tasklet that waited here for
 * the real lock finds its holder's hold recorded by the unlock that woke
 * it.
 */
static void lock_obj(struct obj *o)
{
	uint32_t c = 0;

	/*
	 * The tasklets take turns on one thread (run.c): a holder cannot let
	 * go while this one spins, so a busy lock waits for its turn at once.
	 */
	if (!atomic_compare_exchange_strong_explicit(&o->a, &c, 1, memory_order_acquire,
						     memory_order_relaxed)) {
		if (c != 2)
			c = atomic_exchange_explicit(&o->a, 2, memory_order_acquire);
		while (c != 0) {
			dpurt_wait(&o->a, 2);
			c = atomic_exchange_explicit(&o->a, 2, memory_order_acquire);
		}
	}
	o->mt = dpurt_time_lock(&lock_spans[o - objs]);
}

void __dpurt_key_lock(uintptr_t key)
{
	lock_obj(obj_get(KIND_LOCK, key, 0));
}

int __dpurt_key_trylock(uintptr_t key)
{
	struct obj *o = obj_get(KIND_LOCK, key, 0);
	uint32_t c = 0;

	if (!atomic_compare_exchange_strong_explicit(&o->a, &c, 1, memory_order_acquire,
						     memory_order_relaxed)) {
		dpurt_time_sync();
		return 0;
	}
	o->mt = dpurt_time_lock(&lock_spans[o - objs]);
	return 1;
}

void __dpurt_key_unlock(uintptr_t key)
{
	struct obj *o = obj_get(KIND_LOCK, key, 0);

	/* the hold ends here, recorded before a waiter runs (not a free lock's) */
	if (atomic_load_explicit(&o->a, memory_order_relaxed))
		dpurt_time_unlock(&lock_spans[o - objs], o->mt);
	else
		dpurt_time_sync();
	/*
	 * Releasing a free lock is harmless, as on hardware.  With waiters,
	 * they run next: a holder that went on would take the lock again
	 * before any of them (the tasklets take turns only at DMAs and
	 * waits), where the hardware's tasklets interleave and the lock
	 * passes on.
	 */
	if (atomic_exchange_explicit(&o->a, 0, memory_order_release) == 2) {
		dpurt_wake(&o->a, 1);
		dpurt_yield();
	}
}

/* ---- barriers -------------------------------------------------------- */

void barrier_wait(barrier_t *barrier)
{
	unsigned int n = barrier->initial_count ? barrier->initial_count : barrier->count;
	struct obj *o = obj_get(KIND_BARRIER, (uintptr_t)barrier, 0);
	uint32_t gen = atomic_load_explicit(&o->b, memory_order_acquire);
	uint64_t arrived = dpurt_time_sync();

	if (n <= 1)
		return;
	/* modeled, all leave at the last arrival's cycle */
	if (arrived > o->mt)
		o->mt = arrived;
	if (atomic_fetch_add_explicit(&o->a, 1, memory_order_acq_rel) + 1 >= n) {
		o->mrel = o->mt;
		o->mt = 0;
		dpurt_time_until(o->mrel);
		atomic_store_explicit(&o->a, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&o->b, 1, memory_order_release);
		dpurt_wake(&o->b, INT32_MAX);
		/* all leave together, as in hardware: the last one too waits its turn */
		dpurt_yield();
		return;
	}
	do
		dpurt_wait(&o->b, gen);
	while (atomic_load_explicit(&o->b, memory_order_acquire) == gen);
	/* nobody can let the next generation go before this one arrives */
	dpurt_time_until(o->mrel);
}

/* ---- semaphores ------------------------------------------------------ */

void sem_take(sem_t *sem)
{
	struct obj *o = obj_get(KIND_SEM, (uintptr_t)sem, (uint32_t)(int32_t)(int8_t)sem->count);
	bool waited = false;

	dpurt_time_sync();
	for (;;) {
		uint32_t v = atomic_load_explicit(&o->a, memory_order_acquire);

		if ((int32_t)v > 0) {
			if (atomic_compare_exchange_weak_explicit(&o->a, &v, v - 1,
								  memory_order_acquire,
								  memory_order_relaxed)) {
				sem->count = (uint8_t)(v - 1);
				/* modeled, a take that waited goes on at the give */
				if (waited)
					dpurt_time_until(o->mt);
				return;
			}
			continue;
		}
		waited = true;
		dpurt_wait(&o->a, v);
	}
}

void sem_give(sem_t *sem)
{
	struct obj *o = obj_get(KIND_SEM, (uintptr_t)sem, (uint32_t)(int32_t)(int8_t)sem->count);
	uint64_t now = dpurt_time_sync();
	uint32_t v = atomic_fetch_add_explicit(&o->a, 1, memory_order_release) + 1;

	if (now > o->mt)
		o->mt = now;

	sem->count = (uint8_t)v;
	dpurt_wake(&o->a, 1);
}

/* ---- handshakes ------------------------------------------------------ */

void handshake_notify(void)
{
	_Atomic uint32_t *s = &hs_state[me()];
	uint32_t v;

	dpurt_time_sync();
	/* Wait until a tasklet waits for me. */
	while ((v = atomic_load_explicit(s, memory_order_acquire)) != 1)
		dpurt_wait(s, v);
	dpurt_time_until(hs_wait_cycle[me()]);
	hs_notify_cycle[me()] = dpurt_time_sync();
	atomic_store_explicit(s, 2, memory_order_release);
	dpurt_wake(s, INT32_MAX);
}

int handshake_wait_for(sysname_t notifier)
{
	_Atomic uint32_t *s;
	uint32_t expect = 0;

	if (notifier >= DPURT_MAX_TASKLETS) {
		errno = EINVAL;
		return EINVAL;
	}
	s = &hs_state[notifier];
	for (;;) {
		expect = 0;
		if (atomic_compare_exchange_strong(s, &expect, 1))
			break;
		if (expect == 1) {
			errno = EALREADY;
			return EALREADY;
		}
		/* 2: the previous waiter has not taken its notification yet */
		dpurt_wait(s, 2);
	}
	hs_wait_cycle[notifier] = dpurt_time_sync();
	dpurt_wake(s, INT32_MAX);
	while (atomic_load_explicit(s, memory_order_acquire) != 2)
		dpurt_wait(s, 1);
	dpurt_time_until(hs_notify_cycle[notifier]);
	atomic_store_explicit(s, 0, memory_order_release);
	dpurt_wake(s, INT32_MAX);
	return 0;
}
