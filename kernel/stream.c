// SPDX-License-Identifier: GPL-2.0
/*
 * Streams: EBSP's streams in the rank's simulated external memory
 * (DPUSIM_IOCTL_STREAM_*; shared/design/streams.md).
 *
 * A stream is a sparse memory (mram.c, charged to the module's budget)
 * holding EBSP's format: before every token a header of two u32, the size
 * of the token before it and its own (0, n0, data0, n0, n1, data1, ...,
 * n(k-1), 0).  The kernel keeps its own table of the token sizes, so what a
 * core writes into the memory never changes where the kernel thinks the
 * tokens are, and the cursor (the next token) of the one core that has the
 * stream open.  Streams are numbered from 0 in creation order and go with
 * the rank's ownership (dpusim_stream_free_all()).
 *
 * Locking: the rank's state_lock, as for the transfers that move tokens.
 */
#include <kunit/visibility.h>
#include <linux/highmem.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dpusim.h"

/**
 * dpusim_stream_layout - the shape of a stream
 * @stream_size: data bytes (the capacity of an empty stream)
 * @token_size: bytes per token
 * @down: a stream made of data (else an empty one for results)
 * @nr_tokens: out, tokens of a stream made of data, 0 for an empty one
 * @mem_size: out, bytes of its memory with the headers; an empty stream
 *            has room for @stream_size data bytes in tokens of 8 bytes or
 *            more (its memory is sparse: only what is written costs)
 *
 * Return: 0, -EINVAL or -E2BIG.
 */
int dpusim_stream_layout(u64 stream_size, u32 token_size, bool down,
			 u32 *nr_tokens, u64 *mem_size)
{
	u64 n;

	if (!stream_size || stream_size > DPUSIM_STREAM_MAX_BYTES ||
	    token_size < DPUSIM_STREAM_MIN_TOKEN)
		return -EINVAL;
	n = DIV_ROUND_UP_ULL(stream_size, token_size);
	if (down) {
		if (n > DPUSIM_STREAM_MAX_TOKENS)
			return -E2BIG;
		*nr_tokens = n;
		*mem_size = stream_size + (n + 1) * DPUSIM_STREAM_HEADER;
	} else {
		*nr_tokens = 0;
		n = min_t(u64, DIV_ROUND_UP_ULL(stream_size, 8),
			  DPUSIM_STREAM_MAX_TOKENS);
		*mem_size = stream_size + (n + 1) * DPUSIM_STREAM_HEADER;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_layout);

/* Size of token @i of a stream made of data. */
static u32 dpusim_stream_down_size(const struct dpusim_stream *s, u32 i)
{
	if (i + 1 < s->nr_tokens)
		return s->token_size;
	return s->data_size - (u64)(s->nr_tokens - 1) * s->token_size;
}

/**
 * dpusim_stream_token - size and place of token @i
 * @s: the stream
 * @i: token index, 0 .. s->nr_tokens (the end: size 0)
 * @off: out, the offset of its header in the memory
 *
 * Return: its size in bytes, 0 at the end.
 */
u32 dpusim_stream_token(const struct dpusim_stream *s, u32 i, u64 *off)
{
	if (s->sizes) {
		*off = s->offs[i];
		return i < s->nr_tokens ? s->sizes[i] : 0;
	}
	if (i < s->nr_tokens) {
		*off = (u64)i * (s->token_size + DPUSIM_STREAM_HEADER);
		return dpusim_stream_down_size(s, i);
	}
	/* the end: the header after the last token, which may be shorter */
	*off = s->data_size + (u64)i * DPUSIM_STREAM_HEADER;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_token);

/**
 * dpusim_stream_seek - the cursor after a seek by @delta tokens
 * @cursor: the cursor, 0 .. @nr_tokens
 * @nr_tokens: tokens of the stream
 * @delta: tokens forward (> 0) or back (< 0); INT_MIN and INT_MAX too
 *
 * Return: the new cursor, clamped to the first token and the end.
 */
u32 dpusim_stream_seek(u32 cursor, u32 nr_tokens, s32 delta)
{
	s64 c = (s64)cursor + delta;

	return c < 0 ? 0 : c > nr_tokens ? nr_tokens : (u32)c;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_seek);

/* Copy @len bytes to the memory at @off from a kernel or a user buffer. */
static int dpusim_stream_write(struct dpusim_mem *mem, u64 off,
			       const void *kbuf, const void __user *ubuf,
			       u64 len)
{
	while (len) {
		size_t n = min_t(u64, len, PAGE_SIZE - offset_in_page(off));
		struct page *page = dpusim_mem_page(mem, off);
		void *m;
		int ret = 0;

		if (WARN_ON_ONCE(!page))
			return -EINVAL;
		m = kmap_local_page(page);
		if (kbuf)
			memcpy(m + offset_in_page(off), kbuf, n);
		else if (copy_from_user(m + offset_in_page(off), ubuf, n))
			ret = -EFAULT;
		kunmap_local(m);
		if (ret)
			return ret;
		if (kbuf)
			kbuf += n;
		else
			ubuf += n;
		off += n;
		len -= n;
		cond_resched();
	}
	return 0;
}

static int dpusim_stream_header(struct dpusim_mem *mem, u64 off, u32 prev,
				u32 next)
{
	u32 h[2] = { prev, next };

	return dpusim_stream_write(mem, off, h, NULL, sizeof(h));
}

/*
 * Write the format of a stream made of data: the headers and the tokens
 * copied from @data.  Every page of the memory is resident.
 */
static int dpusim_stream_fill(struct dpusim_stream *s, const void __user *data)
{
	u32 i, prev = 0, size;
	u64 off;
	int ret;

	for (i = 0; i <= s->nr_tokens; i++) {
		size = dpusim_stream_token(s, i, &off);
		ret = dpusim_stream_header(&s->mem, off, prev, size);
		if (!ret && size)
			ret = dpusim_stream_write(&s->mem,
						  off + DPUSIM_STREAM_HEADER,
						  NULL, data, size);
		if (ret)
			return ret;
		data += size;
		prev = size;
	}
	return 0;
}

static void dpusim_stream_destroy(struct dpusim_stream *s)
{
	if (s->table_pages)
		dpusim_budget_uncharge(s->budget, s->table_pages);
	dpusim_stream_buf_put(s->buf);
	dpusim_mem_free(&s->mem);
	kvfree(s->sizes);
	kvfree(s->offs);
	kfree(s);
}

/*
 * Create a stream; with @ucmd, its answer is written before the stream is
 * published, so that no other thread of the owner can open or map a
 * stream whose creation then fails.
 */
static int dpusim_stream_create_answer(struct dpusim_rank *rank,
				       struct dpusim_stream_create *c,
				       struct dpusim_ucmd *ucmd)
{
	const void __user *data = u64_to_user_ptr(c->data);
	struct dpusim_mem_undo undo = {};
	struct dpusim_stream *s;
	unsigned long pages;
	u32 nr_tokens, id;
	u64 mem_size;
	int ret;

	if (c->flags || c->__reserved)
		return -EINVAL;
	ret = dpusim_stream_layout(c->stream_size, c->token_size, c->data,
				   &nr_tokens, &mem_size);
	if (ret)
		return ret;
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->token_size = c->token_size;
	s->data_size = c->stream_size;
	s->nr_tokens = nr_tokens;
	s->core = -1;
	dpusim_mem_init(&s->mem, mem_size, rank->budget);
	if (!c->data) {
		/*
		 * An empty stream: room in its table for every token it may
		 * get, charged to the budget as the memory is.
		 */
		s->max_tokens = min_t(u64, c->stream_size / 8,
				      DPUSIM_STREAM_MAX_TOKENS);
		pages = DIV_ROUND_UP((s->max_tokens + 1ULL) *
				     (sizeof(*s->offs) + sizeof(*s->sizes)),
				     PAGE_SIZE);
		ret = dpusim_budget_charge(rank->budget, pages);
		if (ret)
			goto out_free;
		s->table_pages = pages;
		s->budget = rank->budget;
		s->offs = kvcalloc(s->max_tokens + 1, sizeof(*s->offs),
				   GFP_KERNEL_ACCOUNT);
		s->sizes = kvcalloc(s->max_tokens + 1, sizeof(*s->sizes),
				    GFP_KERNEL_ACCOUNT);
		if (!s->offs || !s->sizes) {
			ret = -ENOMEM;
			goto out_free;
		}
	}

	/* the pages of the format, all of a stream of data, charged first */
	pages = c->data ? DIV_ROUND_UP(mem_size, PAGE_SIZE) : 1;
	ret = dpusim_budget_charge(rank->budget, pages);
	if (ret)
		goto out_free;
	undo.cap = pages;
	undo.entries = kvmalloc_array(pages, sizeof(*undo.entries),
				      GFP_KERNEL_ACCOUNT);
	if (!undo.entries) {
		ret = -ENOMEM;
		goto out_uncharge;
	}
	ret = dpusim_mem_populate(&s->mem, 0,
				  c->data ? mem_size : DPUSIM_STREAM_HEADER,
				  &undo);
	if (!ret)
		ret = c->data ? dpusim_stream_fill(s, data) :
				dpusim_stream_header(&s->mem, 0, 0, 0);
	if (ret)
		goto out_undo;

	/*
	 * The number is reserved (a NULL entry: lookups find nothing), the
	 * answer written, and only then the stream stored, all under
	 * state_lock (a copy to user space may fault: mmap_lock nests inside
	 * state_lock, as for the transfers' pinning).
	 */
	mutex_lock(&rank->state_lock);
	ret = xa_alloc(&rank->streams, &id, NULL,
		       XA_LIMIT(0, DPUSIM_STREAM_MAX - 1), GFP_KERNEL_ACCOUNT);
	if (ret) {
		mutex_unlock(&rank->state_lock);
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto out_undo;
	}
	s->id = id;
	c->id = id;
	c->mem_size = mem_size;
	c->nr_tokens = nr_tokens;
	c->size = sizeof(*c);
	ret = ucmd ? dpusim_ucmd_respond(ucmd, sizeof(*c)) : 0;
	if (ret) {
		xa_erase(&rank->streams, id);
		mutex_unlock(&rank->state_lock);
		goto out_undo;
	}
	xa_store(&rank->streams, id, s, GFP_KERNEL_ACCOUNT); /* reserved: no allocation */
	mutex_unlock(&rank->state_lock);
	kvfree(undo.entries);
	return 0;

out_undo:
	dpusim_mem_undo(&undo);
	kvfree(undo.entries);
out_uncharge:
	dpusim_budget_uncharge(rank->budget, pages);
out_free:
	dpusim_stream_destroy(s);
	return ret;
}

/**
 * dpusim_stream_create - a new stream of a rank
 * @rank: the rank, owned by the caller
 * @c: the command; @id, @mem_size and @nr_tokens are written
 *
 * Return: 0 or the errno of struct dpusim_stream_create.
 */
int dpusim_stream_create(struct dpusim_rank *rank,
			 struct dpusim_stream_create *c)
{
	return dpusim_stream_create_answer(rank, c, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_create);

/**
 * dpusim_stream_core_check - may the caller act as @core?
 * @rank: the rank, its state_lock held
 * @core: a DPU of the rank
 * @w: the worker file of a DPU program, or NULL (a host thread, through
 *     the rank file)
 *
 * A worker acts only as the DPU it holds; a host thread as any DPU that
 * is not running (a running DPU's program is the core).
 *
 * Return: 0, -EPERM (the worker does not hold @core) or -EBUSY.
 */
int dpusim_stream_core_check(struct dpusim_rank *rank, u32 core,
			     struct dpusim_worker *w)
{
	lockdep_assert_held(&rank->state_lock);
	if (w)
		return w->held >= 0 && w->held == core ? 0 : -EPERM;
	return rank->dpus[core].state == DPUSIM_DPU_RUNNING ? -EBUSY : 0;
}

/*
 * Open, close or seek; with @ucmd the answer is written under state_lock
 * before the stream changes: a call that fails changes nothing.  An
 * OPEN's buffer is pinned first, outside the lock (pinning may fault),
 * and let go if the open fails; a CLOSE lets go of the stream's.
 */
static int dpusim_stream_cmd_answer(struct dpusim_rank *rank, unsigned int cmd,
				    struct dpusim_stream_cmd *c,
				    struct dpusim_ucmd *ucmd,
				    struct dpusim_worker *w)
{
	struct dpusim_stream_buf *buf = NULL;
	struct dpusim_stream *s;
	s32 core;
	u32 cursor;
	u64 off;
	int ret = 0;

	if (c->flags || c->core >= rank->nr_dpus ||
	    (cmd != DPUSIM_CMD_STREAM_SEEK && c->delta) ||
	    !c->buf != !c->buf_len ||
	    (c->buf && (cmd != DPUSIM_CMD_STREAM_OPEN || w)))
		return -EINVAL;
	if (c->buf) {
		buf = dpusim_stream_buf_register(rank, c->buf, c->buf_len);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
	}
	ret = mutex_lock_interruptible(&rank->state_lock);
	if (ret)
		goto out_buf;
	ret = dpusim_stream_core_check(rank, c->core, w);
	if (ret)
		goto out;
	s = xa_load(&rank->streams, c->id);
	if (!s) {
		ret = -ENOENT;
		goto out;
	}
	switch (cmd) {
	case DPUSIM_CMD_STREAM_OPEN:
		if (s->core >= 0) {
			ret = -EBUSY;
			goto out;
		}
		core = c->core;
		cursor = 0;
		break;
	case DPUSIM_CMD_STREAM_CLOSE:
		if (s->core != (s32)c->core) {
			ret = -EINVAL;
			goto out;
		}
		core = -1;
		cursor = s->cursor;
		break;
	case DPUSIM_CMD_STREAM_SEEK:
		if (s->core != (s32)c->core) {
			ret = -EINVAL;
			goto out;
		}
		core = s->core;
		cursor = dpusim_stream_seek(s->cursor, s->nr_tokens, c->delta);
		break;
	default:
		ret = -EINVAL;
		goto out;
	}
	c->size = sizeof(*c);
	c->cursor = cursor;
	c->token = dpusim_stream_token(s, cursor, &off);
	c->offset = off;
	c->token_size = s->token_size;
	c->prev = cursor ? dpusim_stream_token(s, cursor - 1, &off) : 0;
	c->nr_tokens = s->nr_tokens;
	c->mem_size = s->mem.size;
	ret = ucmd ? dpusim_ucmd_respond(ucmd, sizeof(*c)) : 0;
	if (!ret) {
		s->core = core;
		s->cursor = cursor;
		if (cmd != DPUSIM_CMD_STREAM_SEEK)
			swap(s->buf, buf);	/* OPEN: in; CLOSE: out */
	}
out:
	mutex_unlock(&rank->state_lock);
out_buf:
	/* a failed OPEN's, or the one CLOSE took out (moves hold their own) */
	dpusim_stream_buf_put(buf);
	return ret;
}

/**
 * dpusim_stream_cmd - open, close or seek a stream
 * @rank: the rank
 * @cmd: DPUSIM_CMD_STREAM_OPEN, _CLOSE or _SEEK
 * @c: the command; its out fields are written
 * @w: the worker file of the DPU program acting as the core, or NULL
 *
 * Return: 0 or the errno of struct dpusim_stream_cmd.
 */
int dpusim_stream_cmd(struct dpusim_rank *rank, unsigned int cmd,
		      struct dpusim_stream_cmd *c, struct dpusim_worker *w)
{
	return dpusim_stream_cmd_answer(rank, cmd, c, NULL, w);
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_cmd);

/**
 * dpusim_stream_move_check - may this transfer move a token of its stream?
 * @rank: the rank, its state_lock held
 * @x: a DPUSIM_XFER_STREAM transfer, its header checked
 * @core: the core moving (dpus[0].dpu)
 *
 * Return: 0, or -ENOENT, -EINVAL, -ENODATA or -ENOSPC (uapi
 * DPUSIM_XFER_STREAM).
 */
int dpusim_stream_move_check(struct dpusim_rank *rank,
			     const struct dpusim_xfer *x, u32 core)
{
	struct dpusim_stream *s = xa_load(&rank->streams, x->stream);
	u64 off, used;
	u32 size, n;

	lockdep_assert_held(&rank->state_lock);
	if (!s)
		return -ENOENT;
	if (s->core < 0 || s->core != (s32)core)
		return -EINVAL;
	size = dpusim_stream_token(s, s->cursor, &off);
	if (x->flags & DPUSIM_XFER_FROM_DPU) {
		if (s->cursor == s->nr_tokens)
			return -ENODATA;
		if (x->offset != off + DPUSIM_STREAM_HEADER ||
		    x->length != (u64)size + DPUSIM_STREAM_HEADER)
			return -EINVAL;
		return 0;
	}
	/* up: only a stream made empty, at the cursor's header */
	if (!s->sizes || x->offset != off ||
	    x->length < 3 * DPUSIM_STREAM_HEADER ||
	    !IS_ALIGNED(x->length, 8))
		return -EINVAL;
	n = x->length - 2 * DPUSIM_STREAM_HEADER;
	used = off - (u64)s->cursor * DPUSIM_STREAM_HEADER;
	if (s->cursor >= s->max_tokens || used + n > s->data_size)
		return -ENOSPC;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_move_check);

/**
 * dpusim_stream_move_done - a checked move is carried out (or queued)
 * @rank: the rank, its state_lock held
 * @x: the transfer
 *
 * The cursor goes to the next token; an up move makes the stream end
 * after the token it wrote.
 */
void dpusim_stream_move_done(struct dpusim_rank *rank,
			     const struct dpusim_xfer *x)
{
	struct dpusim_stream *s = xa_load(&rank->streams, x->stream);
	u32 n;

	lockdep_assert_held(&rank->state_lock);
	if (WARN_ON_ONCE(!s))
		return;
	if (!(x->flags & DPUSIM_XFER_FROM_DPU)) {
		n = x->length - 2 * DPUSIM_STREAM_HEADER;
		s->sizes[s->cursor] = n;
		s->offs[s->cursor + 1] = x->offset + DPUSIM_STREAM_HEADER + n;
		s->nr_tokens = s->cursor + 1;
	}
	s->cursor++;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_move_done);

/**
 * dpusim_stream_free_all - the rank's ownership ends: its streams go
 * @rank: the rank, with no owner, job or worker file left
 */
void dpusim_stream_free_all(struct dpusim_rank *rank)
{
	struct dpusim_stream *s;
	unsigned long id;

	xa_for_each(&rank->streams, id, s) {
		xa_erase(&rank->streams, id);
		dpusim_stream_destroy(s);
	}
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_free_all);

/**
 * dpusim_stream_mem - the memory of stream @id (a mapping, a transfer)
 * @rank: the rank, owned (its streams live as long as the ownership)
 * @id: the stream
 *
 * Return: its memory, or NULL (no such stream).
 */
struct dpusim_mem *dpusim_stream_mem(struct dpusim_rank *rank, u32 id)
{
	struct dpusim_stream *s = xa_load(&rank->streams, id);

	return s ? &s->mem : NULL;
}

/**
 * dpusim_stream_buf_get - the registered buffer a move of @x may use
 * @rank: the rank, its state_lock held
 * @x: a DPUSIM_XFER_STREAM_BUF transfer, its stream checked
 *
 * Return: the buffer of @x's stream, with a reference for the move; or
 * ERR_PTR(-EINVAL) (none registered) or ERR_PTR(-EPERM) (registered by
 * another process).
 */
struct dpusim_stream_buf *dpusim_stream_buf_get(struct dpusim_rank *rank,
						const struct dpusim_xfer *x)
{
	struct dpusim_stream *s = xa_load(&rank->streams, x->stream);

	lockdep_assert_held(&rank->state_lock);
	if (!s || !s->buf)
		return ERR_PTR(-EINVAL);
	if (s->buf->charge.mm != current->mm)
		return ERR_PTR(-EPERM);
	kref_get(&s->buf->ref);
	return s->buf;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_stream_buf_get);

/**
 * dpusim_stream_resident_bytes - bytes of the rank's streams resident
 * @rank: the rank
 *
 * Return: the sum over its streams, their memory and the token tables of
 * empty ones (sysfs stream_resident_bytes), what they charge the budget.
 */
u64 dpusim_stream_resident_bytes(struct dpusim_rank *rank)
{
	struct dpusim_stream *s;
	unsigned long id, pages = 0;

	xa_lock(&rank->streams);
	xa_for_each(&rank->streams, id, s)
		pages += READ_ONCE(s->mem.nr_pages) + s->table_pages;
	xa_unlock(&rank->streams);
	return (u64)pages << PAGE_SHIFT;
}

/* ------------------------------------------------ the rank's ioctls */

int dpusim_stream_create_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_stream_create_answer(ucmd->rank, ucmd->cmd, ucmd);
}

/* The rank file's commands, or the worker file's (ucmd->worker) */
int dpusim_stream_cmd_respond(struct dpusim_ucmd *ucmd, unsigned int cmd)
{
	return dpusim_stream_cmd_answer(ucmd->rank, cmd, ucmd->cmd, ucmd,
					ucmd->worker);
}

int dpusim_stream_open_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_stream_cmd_respond(ucmd, DPUSIM_CMD_STREAM_OPEN);
}

int dpusim_stream_close_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_stream_cmd_respond(ucmd, DPUSIM_CMD_STREAM_CLOSE);
}

int dpusim_stream_seek_ioctl(struct dpusim_ucmd *ucmd)
{
	return dpusim_stream_cmd_respond(ucmd, DPUSIM_CMD_STREAM_SEEK);
}
