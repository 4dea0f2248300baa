// SPDX-License-Identifier: MIT
/*
 * ebsp.c - EBSP's streams (include/ebsp.h) over the rank's stream ioctls:
 * the kernel keeps the stream's memory, its token sizes and the cursor of
 * the one core that has it open; a move is one DPUSIM_IOCTL_XFER
 * descriptor with DPUSIM_XFER_STREAM, built here from the cursor (down: the
 * token and the header after it, which gives the next size; up: header,
 * data, terminator), asynchronous for a preload or a move_up that does not
 * wait.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ebsp.h"
#include "internal.h"
#include "uapi/dpusim.h"

#define HDR DPUSIM_STREAM_HEADER

/* The rank bsp_stream_create() uses, for every thread. */
static _Atomic(struct dpu_rank_t *) target;
/* The core the calling thread acts as. */
static _Thread_local uint32_t this_core;

/* The mappings bsp_stream_create() returned, unmapped with their rank. */
struct stream_map {
	struct dpu_rank_t *rank;
	void *addr;
	size_t len;
	uint32_t id;
	uint32_t token_size;
	struct stream_map *next;
};
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stream_map *maps;

/*
 * A rank's DPUSIM_RANK_HOOK_CLOSING hook, from its first ebsp_set_target on:
 * before the rank is closed, its streams' mappings go and it stops being
 * the target.
 */
static void ebsp_rank_gone(struct dpu_rank_t *rank)
{
	struct stream_map **pp, *m;
	struct dpu_rank_t *want = rank;

	atomic_compare_exchange_strong(&target, &want, NULL);
	pthread_mutex_lock(&maps_lock);
	for (pp = &maps; (m = *pp);) {
		if (m->rank == rank) {
			*pp = m->next;
			munmap(m->addr, m->len);
			free(m);
		} else {
			pp = &m->next;
		}
	}
	pthread_mutex_unlock(&maps_lock);
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int r;

	do
		r = ioctl(fd, cmd, arg);
	while (r < 0 && errno == EINTR);
	return r;
}

static void ebsp_err(const char *fn, const char *what, int err)
{
	char eb[128];

	if (err)
		dpusim_log("ebsp: %s: %s: %s", fn, what, dpusim_strerror(err, eb, sizeof(eb)));
	else
		dpusim_log("ebsp: %s: %s", fn, what);
}

DPUSIM_API dpu_error_t ebsp_set_target(struct dpu_set_t set)
{
	struct dpusim_set_props *props = dpusim_set_props(set, "ebsp_set_target");
	struct dpu_rank_t *rank;

	if (!props)
		return DPU_ERR_INVALID_DPU_SET;
	rank = set.kind == DPU_SET_DPU ? set.dpu->rank : set.list.ranks[0];
	/* streams are only made on a target: the hook precedes them all */
	pthread_mutex_lock(&props->lock);
	dpusim_rank_hook_add(rank, DPUSIM_RANK_HOOK_CLOSING, ebsp_rank_gone);
	pthread_mutex_unlock(&props->lock);
	atomic_store(&target, rank);
	return DPU_OK;
}

DPUSIM_API void ebsp_set_core(uint32_t core)
{
	this_core = core;
}

DPUSIM_API void *bsp_stream_create(int stream_size, int token_size,
				   const void *initial_data)
{
	struct dpu_rank_t *rank = atomic_load(&target);
	struct dpusim_stream_create c = {
		.size = sizeof(c),
		.stream_size = stream_size > 0 ? (uint64_t)stream_size : 0,
		.token_size = token_size > 0 ? (uint32_t)token_size : 0,
		.data = (uintptr_t)initial_data,
	};
	struct stream_map *m;
	void *addr;
	char what[96];

	if (!rank) {
		ebsp_err("bsp_stream_create", "no target set (ebsp_set_target)", 0);
		return NULL;
	}
	if (token_size < (int)DPUSIM_STREAM_MIN_TOKEN) {
		snprintf(what, sizeof(what), "token_size %d is below %u", token_size,
			 DPUSIM_STREAM_MIN_TOKEN);
		ebsp_err("bsp_stream_create", what, 0);
		return NULL;
	}
	if (stream_size <= 0) {
		snprintf(what, sizeof(what), "stream_size %d", stream_size);
		ebsp_err("bsp_stream_create", what, 0);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		ebsp_err("bsp_stream_create", "out of memory", ENOMEM);
		return NULL;
	}
	if (xioctl(rank->fd, DPUSIM_IOCTL_STREAM_CREATE, &c)) {
		ebsp_err("bsp_stream_create", "creating the stream", errno);
		free(m);
		return NULL;
	}
	addr = mmap(NULL, c.mem_size, PROT_READ, MAP_SHARED, rank->fd,
		    DPUSIM_MMAP_STREAM(c.id));
	if (addr == MAP_FAILED) {
		/* the stream stays (numbers are never reused while the set lives) */
		snprintf(what, sizeof(what), "mapping stream %u", c.id);
		ebsp_err("bsp_stream_create", what, errno);
		free(m);
		return NULL;
	}
	*m = (struct stream_map){ rank, addr, c.mem_size, c.id, c.token_size, NULL };
	pthread_mutex_lock(&maps_lock);
	m->next = maps;
	maps = m;
	pthread_mutex_unlock(&maps_lock);
	return addr;
}

static int stream_cmd(ebsp_stream *s, unsigned long ioc, int32_t delta,
		      struct dpusim_stream_cmd *o)
{
	*o = (struct dpusim_stream_cmd){
		.size = sizeof(*o), .id = (uint32_t)s->id, .core = s->core,
		.delta = delta,
	};
	return xioctl(s->rank->fd, ioc, o);
}

/* The library's view from a cursor answer: the next token to return. */
static void stream_at(ebsp_stream *s, const struct dpusim_stream_cmd *o)
{
	s->size = o->token;
	s->prev = o->prev;
	s->data_off = o->offset + HDR;
}

/*
 * Wait for every move in flight on the rank's file: DPUSIM_IOCTL_SYNC,
 * unless the rank's status page says they are done (a preload usually is).
 */
static int stream_sync(ebsp_stream *s)
{
	struct dpusim_sync sy = { .size = sizeof(sy) };
	int r = 0;

	if (!dpusim_rank_async_idle(s->rank))
		do
			r = xioctl(s->rank->fd, DPUSIM_IOCTL_SYNC, &sy);
		while (r < 0 && errno == ETIMEDOUT);
	s->preloaded = 0;
	s->up_pending = 0;
	return r;
}

static int stream_move(ebsp_stream *s, uint32_t flags, uint64_t off,
		       struct dpusim_block *b, uint32_t nb)
{
	struct dpusim_xfer_dpu d = { .dpu = s->core, .nr_blocks = nb };
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = flags | DPUSIM_XFER_STREAM,
		.offset = off, .nr_dpus = 1, .nr_blocks = nb,
		.dpus = (uintptr_t)&d, .blocks = (uintptr_t)b,
		.stream = (uint32_t)s->id,
	};
	uint32_t i;

	for (i = 0; i < nb; i++)
		x.length += b[i].length;
	return xioctl(s->rank->fd, DPUSIM_IOCTL_XFER, &x);
}

/* The buffers were malloc()'ed (not the registered ones). */
static int stream_own_bufs(const ebsp_stream *s)
{
	return s->buf[0] && s->buf[0] != s->reg;
}

/*
 * Buffers of at least @need bytes (none in flight).  A token larger than
 * the registered buffers (a token moved up bigger than the stream's
 * token size) gets malloc()'ed ones, moved as user addresses from then on.
 */
static int stream_room(ebsp_stream *s, uint32_t need)
{
	void *b0, *b1;

	if (need <= s->cap)
		return 0;
	b0 = malloc(need);
	b1 = malloc(need);
	if (!b0 || !b1) {
		free(b0);
		free(b1);
		return -1;
	}
	if (stream_own_bufs(s)) {
		free(s->buf[0]);
		free(s->buf[1]);
	}
	s->buf[0] = b0;
	s->buf[1] = b1;
	s->cap = need;
	return 0;
}

/* Let go of the token buffers (none in flight, the stream closed). */
static void stream_bufs_free(ebsp_stream *s)
{
	if (stream_own_bufs(s)) {
		free(s->buf[0]);
		free(s->buf[1]);
	}
	if (s->reg)
		munmap(s->reg, s->reg_len);
	s->buf[0] = s->buf[1] = NULL;
	s->reg = NULL;
	s->reg_len = 0;
	s->cap = 0;
}

/* The token size of stream @id of @rank, if bsp_stream_create() made it; else 0. */
static uint32_t stream_token_size(struct dpu_rank_t *rank, int id)
{
	struct stream_map *m;
	uint32_t t = 0;

	pthread_mutex_lock(&maps_lock);
	for (m = maps; m; m = m->next)
		if (m->rank == rank && m->id == (uint32_t)id)
			t = m->token_size;
	pthread_mutex_unlock(&maps_lock);
	return t;
}

/*
 * Open, registering two page-aligned token buffers with the kernel
 * (struct dpusim_stream_cmd @buf): their pages are pinned once, and each
 * move names them by offset (DPUSIM_XFER_STREAM_BUF) instead of pinning
 * them again.  If the kernel will not pin them (RLIMIT_MEMLOCK, a token
 * size too large), the open goes on without: malloc()'ed buffers, moved
 * as user addresses.  Returns 0 or the open's errno.
 */
static int stream_open_reg(ebsp_stream *s, struct dpusim_stream_cmd *o)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t t = stream_token_size(s->rank, s->id);
	size_t half;
	void *reg;
	int err;

	if (t && page > 0) {
		half = ((size_t)t + HDR + (size_t)page - 1) / (size_t)page * (size_t)page;
		reg = mmap(NULL, 2 * half, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (reg != MAP_FAILED) {
			*o = (struct dpusim_stream_cmd){
				.size = sizeof(*o), .id = (uint32_t)s->id, .core = s->core,
				.buf = (uintptr_t)reg, .buf_len = 2 * half,
			};
			if (!xioctl(s->rank->fd, DPUSIM_IOCTL_STREAM_OPEN, o)) {
				s->reg = reg;
				s->reg_len = 2 * half;
				s->buf[0] = reg;
				s->buf[1] = (char *)reg + half;
				s->cap = (uint32_t)(half < UINT32_MAX ? half : UINT32_MAX);
				return 0;
			}
			err = errno;
			munmap(reg, 2 * half);
			if (err == EBUSY || err == ENOENT || err == EINTR)
				return err;
		}
	}
	if (stream_cmd(s, DPUSIM_IOCTL_STREAM_OPEN, 0, o))
		return errno;
	return 0;
}

DPUSIM_API int bsp_stream_open(ebsp_stream *stream, int stream_id)
{
	struct dpu_rank_t *rank = atomic_load(&target);
	struct dpusim_stream_cmd o;
	char what[96];
	int err;

	if (!stream) {
		ebsp_err("bsp_stream_open", "no stream struct", 0);
		return 0;
	}
	memset(stream, 0, sizeof(*stream));
	stream->id = -1;
	if (stream_id < 0) {
		snprintf(what, sizeof(what), "stream id %d is negative", stream_id);
		ebsp_err("bsp_stream_open", what, 0);
		return 0;
	}
	if (!rank) {
		ebsp_err("bsp_stream_open", "no target set (ebsp_set_target)", 0);
		return 0;
	}
	stream->id = stream_id;
	stream->core = this_core;
	stream->rank = rank;
	err = stream_open_reg(stream, &o);
	if (err) {
		if (err == EBUSY)
			snprintf(what, sizeof(what), "stream %d is open by another core (core %u asked)",
				 stream_id, this_core);
		else if (err == ENOENT)
			snprintf(what, sizeof(what), "no stream %d", stream_id);
		else
			snprintf(what, sizeof(what), "stream %d, core %u", stream_id, this_core);
		ebsp_err("bsp_stream_open", what, err == EBUSY || err == ENOENT ? 0 : err);
		stream->id = -1;
		return 0;
	}
	stream->token_size = o.token_size;
	if (stream_room(stream, o.token_size + HDR)) {
		ebsp_err("bsp_stream_open", "out of memory", ENOMEM);
		stream_cmd(stream, DPUSIM_IOCTL_STREAM_CLOSE, 0, &o);
		stream_bufs_free(stream);
		stream->id = -1;
		return 0;
	}
	stream_at(stream, &o);
	return 1;
}

static int stream_check(ebsp_stream *s, const char *fn)
{
	if (!s || s->id < 0) {
		ebsp_err(fn, "the stream is not open", 0);
		return -1;
	}
	return 0;
}

DPUSIM_API void bsp_stream_close(ebsp_stream *stream)
{
	struct dpusim_stream_cmd o;

	if (stream_check(stream, "bsp_stream_close"))
		return;
	if (stream->preloaded || stream->up_pending)
		stream_sync(stream);
	if (stream_cmd(stream, DPUSIM_IOCTL_STREAM_CLOSE, 0, &o))
		ebsp_err("bsp_stream_close", "closing", errno);
	stream_bufs_free(stream);
	stream->id = -1;
}

/*
 * Fetch the next token (s->size bytes, at s->data_off) into buf[i]: by
 * its offset in the registered buffers if it is one of them.
 */
static int stream_fetch(ebsp_stream *s, int i, int async)
{
	struct dpusim_block b = { (uintptr_t)s->buf[i], s->size + HDR };
	uint32_t flags = DPUSIM_XFER_FROM_DPU | (async ? DPUSIM_XFER_ASYNC : 0);

	if (!stream_own_bufs(s) && s->reg) {
		b.addr = (uint64_t)((char *)s->buf[i] - (char *)s->reg);
		flags |= DPUSIM_XFER_STREAM_BUF;
	}
	return stream_move(s, flags, s->data_off, &b, 1);
}

DPUSIM_API int bsp_stream_move_down(ebsp_stream *stream, void **buffer,
				    int preload)
{
	ebsp_stream *s = stream;
	uint32_t size, next;

	if (stream_check(s, "bsp_stream_move_down") || !buffer)
		return 0;
	if (s->preloaded) {
		if (stream_sync(s)) {
			ebsp_err("bsp_stream_move_down", "the preloaded token", errno);
			return 0;
		}
		s->cur ^= 1;
	} else {
		if (!s->size)
			return 0;	/* the end, for good */
		if (stream_room(s, s->size + HDR)) {
			ebsp_err("bsp_stream_move_down", "out of memory", ENOMEM);
			return 0;
		}
		if (stream_fetch(s, s->cur ^ 1, 0)) {
			ebsp_err("bsp_stream_move_down", "moving the token", errno);
			return 0;
		}
		s->cur ^= 1;
	}
	size = s->size;
	memcpy(&next, (char *)s->buf[s->cur] + size + 4, sizeof(next));
	*buffer = s->buf[s->cur];
	s->data_off += size + HDR;
	s->prev = size;
	s->size = next;
	if (preload && next && next + HDR <= s->cap) {
		if (stream_fetch(s, s->cur ^ 1, 1))
			ebsp_err("bsp_stream_move_down", "preloading the next token", errno);
		else
			s->preloaded = 1;
	}
	return (int)size;
}

DPUSIM_API int bsp_stream_move_up(ebsp_stream *stream, const void *data,
				  int data_size, int wait_for_completion)
{
	ebsp_stream *s = stream;
	struct dpusim_block b[3];
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
	if ((s->up_pending || s->preloaded) && stream_sync(s)) {
		ebsp_err("bsp_stream_move_up", "the previous token", errno);
		return 0;
	}
	s->hdr[0] = s->prev;
	s->hdr[1] = (uint32_t)data_size;
	s->hdr[2] = (uint32_t)data_size;
	s->hdr[3] = 0;
	b[0] = (struct dpusim_block){ (uintptr_t)&s->hdr[0], HDR };
	b[1] = (struct dpusim_block){ (uintptr_t)data, (uint64_t)data_size };
	b[2] = (struct dpusim_block){ (uintptr_t)&s->hdr[2], HDR };
	if (stream_move(s, wait_for_completion ? 0 : DPUSIM_XFER_ASYNC,
			s->data_off - HDR, b, 3)) {
		int err = errno;

		if (err == ENOSPC)
			snprintf(what, sizeof(what), "%d bytes do not fit in stream %d", data_size, s->id);
		else
			snprintf(what, sizeof(what), "stream %d", s->id);
		ebsp_err("bsp_stream_move_up", what, err == ENOSPC ? 0 : err);
		return 0;
	}
	s->up_pending = !wait_for_completion;
	s->data_off += (uint64_t)data_size + HDR;
	s->prev = (uint32_t)data_size;
	s->size = 0;	/* the stream ends after it */
	return data_size;
}

DPUSIM_API void bsp_stream_seek(ebsp_stream *stream, int delta_tokens)
{
	ebsp_stream *s = stream;
	struct dpusim_stream_cmd o;
	int32_t delta = delta_tokens;

	if (stream_check(s, "bsp_stream_seek"))
		return;
	if (s->preloaded || s->up_pending) {
		/* relative to the token last returned: the kernel is one ahead */
		if (s->preloaded && delta != INT_MIN && delta != INT_MAX)
			delta--;
		stream_sync(s);
	}
	if (stream_cmd(s, DPUSIM_IOCTL_STREAM_SEEK, delta, &o)) {
		ebsp_err("bsp_stream_seek", "seeking", errno);
		return;
	}
	stream_at(s, &o);
}
