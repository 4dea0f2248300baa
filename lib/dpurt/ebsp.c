// SPDX-License-Identifier: MIT
/*
 * ebsp.c - the DPU side of EBSP's streams (include/dpurt/ebsp.h): the DPU
 * the worker holds is the core.  Open, close and seek are the worker
 * file's DPUSIM_IOCTL_WORKER_STREAM_*; a move is one
 * DPUSIM_IOCTL_WORKER_STREAM_MOVE whose DPU side is window offsets (WRAM at
 * 0, MRAM at DPUSIM_WINDOW_MRAM, as the runtime maps them): down, the token
 * at the cursor and the header after it (which gives the next size) into
 * a WRAM buffer; up, header, data and terminator.  A preload or a move_up
 * that does not wait goes through the worker file's move ring instead of
 * the ioctl (no system call; see ring_submit()).  The descriptors are the
 * host library's (lib/ebsp.c).
 */
#include "dpurt.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <alloc.h>
#include <dpurt/ebsp.h>	/* not the host's include/ebsp.h */

#include "uapi/dpusim.h"

#define HDR DPUSIM_STREAM_HEADER

/*
 * WRAM given back by bsp_stream_close(), for the next open: the heap is
 * a bump allocator.  Emptied with the heap at every launch; the tasklets
 * take turns on one thread (run.c), so no lock.
 */
#define POOL_MAX 16
struct wram_block {
	char *p;
	uint32_t size;
};
static struct wram_block pool[POOL_MAX];
static unsigned int pool_nr;
/*
 * Which run of the DPU this is: its launch count, the same in whichever
 * worker process runs it (a stream kept open across launches lives in the
 * DPU's memory, and the next launch may be run by another worker).
 */
static uint32_t launch_gen = 1;

void dpurt_ebsp_reset(uint32_t launch)
{
	pool_nr = 0;
	launch_gen = launch ? launch : launch_gen + 1;
}

static void ebsp_err(const char *fn, const char *what, int err)
{
	if (err)
		fprintf(stderr, "ebsp: DPU %u: %s: %s: %s\n", dpurt_worker_dpu, fn, what,
			strerror(err));
	else
		fprintf(stderr, "ebsp: DPU %u: %s: %s\n", dpurt_worker_dpu, fn, what);
}

/* WRAM for a stream: a block given back, or the heap (faults when full). */
static char *wram_get(uint32_t size)
{
	unsigned int i, best = POOL_MAX;
	char *p;

	for (i = 0; i < pool_nr; i++)
		if (pool[i].size >= size && (best == POOL_MAX || pool[i].size < pool[best].size))
			best = i;
	if (best == POOL_MAX)
		return mem_alloc(size);
	p = pool[best].p;
	pool[best] = pool[--pool_nr];
	return p;
}

static void wram_put(char *p, uint32_t size)
{
	if (p && pool_nr < POOL_MAX)
		pool[pool_nr++] = (struct wram_block){ p, size };
}

void *ebsp_malloc(unsigned int size)
{
	uint64_t *p = (uint64_t *)wram_get((size + 15) & ~7U);

	*p = (size + 15) & ~7U;	/* the block's size, for ebsp_free() */
	return p + 1;
}

void ebsp_free(void *ptr)
{
	uint64_t *p = (uint64_t *)ptr - 1;

	if (ptr)
		wram_put((char *)p, (uint32_t)*p);
}

/* The window offset of [p, p + len) in the DPU's WRAM or MRAM; -1 if not. */
static int64_t window_off(const void *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p;

	if (a >= DPURT_WRAM_BASE && a < DPURT_WRAM_BASE + dpurt_ctx.wram_size &&
	    len <= DPURT_WRAM_BASE + dpurt_ctx.wram_size - a)
		return (int64_t)(a - DPURT_WRAM_BASE);
	if (a >= DPURT_MRAM_BASE && a < DPURT_MRAM_BASE + dpurt_ctx.mram_size &&
	    len <= DPURT_MRAM_BASE + dpurt_ctx.mram_size - a)
		return (int64_t)(DPUSIM_WINDOW_MRAM + (a - DPURT_MRAM_BASE));
	return -1;
}

static int xioctl(unsigned long cmd, void *arg)
{
	int r;

	do
		r = ioctl(dpurt_worker_fd, cmd, arg);
	while (r < 0 && errno == EINTR);
	return r;
}

static int stream_cmd(ebsp_stream *s, unsigned long ioc, int32_t delta,
		      struct dpusim_stream_cmd *o)
{
	*o = (struct dpusim_stream_cmd){
		.size = sizeof(*o), .id = (uint32_t)s->id, .core = dpurt_worker_dpu,
		.delta = delta,
	};
	return xioctl(ioc, o);
}

static void stream_at(ebsp_stream *s, const struct dpusim_stream_cmd *o)
{
	s->size = o->token;
	s->prev = o->prev;
	s->data_off = o->offset + HDR;
}

/*
 * The worker file's move ring (DPUSIM_MMAP_MOVE_RING): asynchronous moves
 * (a preload, a move_up that does not wait) are written to it and carried
 * out by the kernel's copy thread, with no system call while the thread
 * polls.  Mapped at the first one; without it, those moves are synchronous.
 */
static struct dpusim_move_ring *ring;
static uint32_t ring_seq;
static int ring_tried;
/* the move in the ring, as submitted: for ring_run() */
static struct dpusim_worker_stream_move ring_move;

static void ring_kick(void)
{
	struct dpusim_worker_stream_wait w = { .size = sizeof(w),
					       .flags = DPUSIM_STREAM_WAIT_KICK };

	xioctl(DPUSIM_IOCTL_WORKER_STREAM_WAIT, &w);
}

/*
 * Wait for the ring's last move; its result (0 or -errno) and the size of
 * the token after it.  Polls the page (no PAUSE: where the CPU is
 * emulated it costs more than the wait, see commit 45907e4), and wakes the
 * copy thread if it went to sleep.
 */
static int ring_wait(uint32_t *next)
{
	unsigned long spins = 0;

	while (__atomic_load_n(&ring->done, __ATOMIC_ACQUIRE) != ring_seq) {
		if (++spins < 4096)
			continue;
		/* long: the thread sleeps, or waits for this CPU */
		if (__atomic_load_n(&ring->flags, __ATOMIC_RELAXED) &
		    DPUSIM_MOVE_RING_NEED_WAKEUP)
			ring_kick();
		sched_yield();
	}
	if (next)
		*next = ring->next;
	return ring->result;
}

static int ring_map(void)
{
	void *p;

	if (ring_tried)
		return ring != NULL;
	ring_tried = 1;
	_Static_assert(sizeof(*ring) <= 4096, "the move ring is one page");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, dpurt_worker_fd,
		 DPUSIM_MMAP_MOVE_RING);
	if (p == MAP_FAILED)
		return 0;
	ring = p;
	/* a move of a program that faulted before it finished: let it end */
	ring_seq = __atomic_load_n(&ring->submitted, __ATOMIC_RELAXED);
	ring_wait(NULL);
	return 1;
}

/*
 * The stream whose move is in the ring, until its answer is collected
 * into it (ring_collect(), by whoever needs the ring next or the stream's
 * own wait).  A stream closes (and a run ends) only with its move
 * collected, so the pointer never outlives it.
 */
static ebsp_stream *ring_owner;

/*
 * Claim the ring's move for this program: one attempt, as the thread's.
 * It succeeds while the thread has not taken the move: asleep, waking
 * (a wake-up can take longer than the copy), or waiting for this
 * program's CPU.  Then waiting could only cost more than the move.
 */
static int ring_claim(void)
{
	uint32_t old = __atomic_load_n(&ring->taken, __ATOMIC_RELAXED);

	return old != ring_seq &&
	       __atomic_compare_exchange_n(&ring->taken, &old, ring_seq, 0,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/*
 * Carry out the ring's move, claimed, with the ioctl; 0 or -errno, the
 * size of the token after it in *@next (if not NULL).  @done is then
 * stored as the thread would, so the ring's numbers stay in step.
 */
static int ring_run(uint32_t *next)
{
	struct dpusim_worker_stream_move m = ring_move;
	int r = 0;

	m.flags &= ~DPUSIM_STREAM_MOVE_ASYNC;
	if (xioctl(DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m))
		r = -errno;
	if (next)
		*next = r ? 0 : m.next;
	__atomic_store_n(&ring->done, ring_seq, __ATOMIC_RELEASE);
	return r;
}

/* The ring's move done, by this program or by the thread; as ring_wait() */
static int ring_finish(uint32_t *next)
{
	return ring_claim() ? ring_run(next) : ring_wait(next);
}

/* The answer of the ring's move, into its stream */
static void ring_collect(void)
{
	ebsp_stream *s = ring_owner;

	if (!s)
		return;
	s->ring_result = ring_finish(&s->ring_next);
	ring_owner = NULL;
}

/* Submit @m, a move of stream @s, to the ring. */
static void ring_submit(ebsp_stream *s, const struct dpusim_worker_stream_move *m)
{
	ring_collect();		/* one move at a time */
	ring_owner = s;
	ring_move = *m;
	memcpy(&ring->move, m, sizeof(*m));
	ring->dpu = dpurt_worker_dpu;
	__atomic_store_n(&ring->submitted, ++ring_seq, __ATOMIC_RELEASE);
	/* the number before the look at the flag; pairs with the thread's */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ring->flags, __ATOMIC_RELAXED) & DPUSIM_MOVE_RING_NEED_WAKEUP)
		ring_kick();
}

/*
 * The run of the DPU ends (worker.c, before FINISH): the ring's move in
 * flight is done first, so none is left for the next DPU's run.
 */
void dpurt_ebsp_quiesce(void)
{
	/* not into the stream: the tasklet that held it may have returned */
	if (ring_owner)
		ring_finish(NULL);
	ring_owner = NULL;
}

/*
 * Wait for @s's move in the ring; 0 or -1 with errno (its error).  *@next
 * (if not NULL) gets the size of the token after the one it moved.
 */
static int stream_wait_next(ebsp_stream *s, uint32_t *next)
{
	int r = 0;

	if (s->preloaded || s->up_pending) {
		if (ring_owner == s)
			ring_collect();
		r = s->ring_result;
		if (next)
			*next = s->ring_next;
	}
	s->preloaded = 0;
	s->up_pending = 0;
	if (r) {
		errno = -r;
		return -1;
	}
	return 0;
}

static int stream_wait(ebsp_stream *s)
{
	return stream_wait_next(s, NULL);
}

static int stream_move(ebsp_stream *s, uint32_t flags, uint64_t off,
		       const void *const *ptr, const uint64_t *len, uint32_t nb,
		       uint32_t *next)
{
	struct dpusim_worker_stream_move m = {
		.size = sizeof(m), .flags = flags, .stream = (uint32_t)s->id,
		.nr_blocks = nb, .offset = off,
	};
	uint32_t i;
	int64_t w;

	for (i = 0; i < nb; i++) {
		w = window_off(ptr[i], len[i]);
		if (w < 0) {
			errno = EFAULT;
			return -1;
		}
		m.blocks[i] = (struct dpusim_window_block){ (uint64_t)w, len[i] };
	}
	if (flags & DPUSIM_STREAM_MOVE_ASYNC) {
		ring_submit(s, &m);	/* the caller checked ring_map() */
		return 0;
	}
	if (xioctl(DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m))
		return -1;
	if (next)
		*next = m.next;
	return 0;
}

/*
 * The launch changed since the buffers were taken: they are gone.  A
 * preload of the last run moved the kernel's cursor past the token this
 * stream returns next (unless it failed): then that token is fetched
 * again.  The kernel's cursor tells, not this worker's memory: another
 * worker process may have run the last launch.
 */
static void stream_relaunch(ebsp_stream *s)
{
	struct dpusim_stream_cmd o;

	if (s->launch == launch_gen)
		return;
	if (s->preloaded && !stream_cmd(s, DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, &o) &&
	    o.offset + HDR != s->data_off &&
	    !stream_cmd(s, DPUSIM_IOCTL_WORKER_STREAM_SEEK, -1, &o))
		stream_at(s, &o);
	s->preloaded = s->up_pending = 0;
	s->buf[0] = s->buf[1] = NULL;
	s->cap = 0;
	s->hdr = NULL;
	s->launch = launch_gen;
}

static int stream_check(ebsp_stream *s, const char *fn)
{
	if (!s || s->id < 0) {
		ebsp_err(fn, "the stream is not open", 0);
		return -1;
	}
	stream_relaunch(s);
	return 0;
}

int bsp_stream_open(ebsp_stream *stream, int stream_id)
{
	struct dpusim_stream_cmd o;
	char what[96];

	if (!stream) {
		ebsp_err("bsp_stream_open", "no stream struct", 0);
		return 0;
	}
	memset(stream, 0, sizeof(*stream));
	stream->id = -1;
	stream->launch = launch_gen;
	if (stream_id < 0) {
		snprintf(what, sizeof(what), "stream id %d is negative", stream_id);
		ebsp_err("bsp_stream_open", what, 0);
		return 0;
	}
	if (dpurt_worker_fd < 0) {
		ebsp_err("bsp_stream_open", "streams need a launched DPU (dpu_launch)", 0);
		return 0;
	}
	stream->id = stream_id;
	if (stream_cmd(stream, DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, &o)) {
		int err = errno;

		if (err == EBUSY)
			snprintf(what, sizeof(what), "stream %d is open by another core", stream_id);
		else if (err == ENOENT)
			snprintf(what, sizeof(what), "no stream %d", stream_id);
		else
			snprintf(what, sizeof(what), "stream %d", stream_id);
		ebsp_err("bsp_stream_open", what, err == EBUSY || err == ENOENT ? 0 : err);
		stream->id = -1;
		return 0;
	}
	stream->token_size = o.token_size;
	stream_at(stream, &o);
	/*
	 * The ring, and with it the copy thread, now rather than at the first
	 * preload: starting a thread costs more than moving a token.  Without
	 * it, moves are synchronous.
	 */
	ring_map();
	return 1;
}

static void stream_free(ebsp_stream *s)
{
	if (s->buf[0])
		wram_put(s->buf[0], 2 * s->cap);
	wram_put((char *)s->hdr, 4 * sizeof(uint32_t));
	s->buf[0] = s->buf[1] = NULL;
	s->hdr = NULL;
	s->cap = 0;
}

void bsp_stream_close(ebsp_stream *stream)
{
	struct dpusim_stream_cmd o;

	if (stream_check(stream, "bsp_stream_close"))
		return;
	if (stream->preloaded || stream->up_pending)
		stream_wait(stream);
	if (stream_cmd(stream, DPUSIM_IOCTL_WORKER_STREAM_CLOSE, 0, &o))
		ebsp_err("bsp_stream_close", "closing", errno);
	stream_free(stream);
	stream->id = -1;
}

/*
 * Fetch the token of @size bytes at @off into buf[@i]; *@next gets the size
 * of the token after it (asynchronous: at ring_wait()).
 */
static int stream_fetch(ebsp_stream *s, int i, uint64_t off, uint32_t size,
			int async, uint32_t *next)
{
	const void *p = s->buf[i];
	uint64_t len = size + HDR;

	return stream_move(s, DPUSIM_STREAM_MOVE_DOWN | (async ? DPUSIM_STREAM_MOVE_ASYNC : 0),
			   off, &p, &len, 1, next);
}

int bsp_stream_move_down(ebsp_stream *stream, void **buffer, int preload)
{
	ebsp_stream *s = stream;
	uint32_t size, next = 0;

	if (stream_check(s, "bsp_stream_move_down") || !buffer)
		return 0;
	size = s->size;
	if (s->up_pending && stream_wait(s))
		ebsp_err("bsp_stream_move_down", "the token moved up", errno);
	if (s->preloaded) {
		/* the token to return is in flight into buf[cur ^ 1] */
		if (!stream_wait_next(s, &next)) {
			s->cur ^= 1;
			goto got;
		}
		ebsp_err("bsp_stream_move_down", "the preloaded token", errno);
		/* not moved: fetch it now */
	}
	if (!size)
		return 0;	/* the end, for good */
	if (!s->buf[0]) {
		/* tokens are at most token_size: two buffers for good */
		s->cap = s->token_size + HDR;
		s->buf[0] = wram_get(2 * s->cap);
		s->buf[1] = s->buf[0] + s->cap;
	}
	if (stream_fetch(s, s->cur ^ 1, s->data_off, size, 0, &next)) {
		ebsp_err("bsp_stream_move_down", "moving the token", errno);
		return 0;
	}
	s->cur ^= 1;
got:
	/* the next token into the other buffer, meanwhile */
	if (preload && next && ring_map()) {
		stream_fetch(s, s->cur ^ 1, s->data_off + size + HDR, next, 1, NULL);
		s->preloaded = 1;
	}
	*buffer = s->buf[s->cur];
	s->data_off += size + HDR;
	s->prev = size;
	s->size = next;
	return (int)size;
}

int bsp_stream_move_up(ebsp_stream *stream, const void *data, int data_size,
		       int wait_for_completion)
{
	ebsp_stream *s = stream;
	const void *ptr[3];
	uint64_t len[3];
	char what[96];

	if (stream_check(s, "bsp_stream_move_up"))
		return 0;
	if (data_size <= 0 || data_size % 8 || !data) {
		snprintf(what, sizeof(what), "data_size %d is not a positive multiple of 8",
			 data_size);
		ebsp_err("bsp_stream_move_up", what, 0);
		return 0;
	}
	/* the previous token first, always */
	if ((s->up_pending || s->preloaded) && stream_wait(s)) {
		ebsp_err("bsp_stream_move_up", "the previous token", errno);
		return 0;
	}
	if (!s->hdr)
		s->hdr = (uint32_t *)wram_get(4 * sizeof(uint32_t));
	s->hdr[0] = s->prev;
	s->hdr[1] = (uint32_t)data_size;
	s->hdr[2] = (uint32_t)data_size;
	s->hdr[3] = 0;
	ptr[0] = &s->hdr[0];
	ptr[1] = data;
	ptr[2] = &s->hdr[2];
	len[0] = HDR;
	len[1] = (uint64_t)data_size;
	len[2] = HDR;
	if (!wait_for_completion && !ring_map())
		wait_for_completion = 1;	/* no ring: synchronous */
	if (stream_move(s, wait_for_completion ? 0 : DPUSIM_STREAM_MOVE_ASYNC,
			s->data_off - HDR, ptr, len, 3, NULL)) {
		int err = errno;

		if (err == ENOSPC)
			snprintf(what, sizeof(what), "%d bytes do not fit in stream %d",
				 data_size, s->id);
		else if (err == EFAULT)
			snprintf(what, sizeof(what), "the data is not in the DPU's WRAM or MRAM");
		else
			snprintf(what, sizeof(what), "stream %d", s->id);
		ebsp_err("bsp_stream_move_up", what, err == ENOSPC || err == EFAULT ? 0 : err);
		return 0;
	}
	s->up_pending = !wait_for_completion;
	s->data_off += (uint64_t)data_size + HDR;
	s->prev = (uint32_t)data_size;
	s->size = 0;	/* the stream ends after it */
	return data_size;
}

void bsp_stream_seek(ebsp_stream *stream, int delta_tokens)
{
	ebsp_stream *s = stream;
	struct dpusim_stream_cmd o;
	int32_t delta = delta_tokens;

	if (stream_check(s, "bsp_stream_seek"))
		return;
	if (s->preloaded || s->up_pending) {
		int preloaded = s->preloaded;

		/* relative to the token last returned: the kernel is one ahead */
		if (!stream_wait(s) && preloaded && delta != INT_MIN && delta != INT_MAX)
			delta--;
	}
	if (stream_cmd(s, DPUSIM_IOCTL_WORKER_STREAM_SEEK, delta, &o)) {
		ebsp_err("bsp_stream_seek", "seeking", errno);
		return;
	}
	stream_at(s, &o);
}
