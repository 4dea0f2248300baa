// SPDX-License-Identifier: MIT
/*
 * libdpusim: the public transfer functions. Each one describes its
 * transfer and hands it to run_xfer(), the one path every transfer takes
 * through the engine of xfer.c (and async.c for the ASYNC flags).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "xfer.h"

enum source {
	SRC_BUFFER,	/* one buffer for every DPU */
	SRC_PREPARED,	/* each DPU's dpu_prepare_xfer buffer */
	SRC_SG,		/* get_block callback */
};

struct xfer_desc {
	const char *fn;
	dpu_xfer_t dir;
	const char *symbol;
	const struct dpu_symbol_t *by_symbol;	/* the *_symbol variants */
	uint32_t symbol_offset;
	size_t length;
	enum source src;
	const void *buffer;		/* SRC_BUFFER */
	const get_block_t *get_block;	/* SRC_SG */
	bool length_check;		/* SRC_SG */
	bool skip_empty;		/* SRC_SG: DPUs without blocks left out */
	uint32_t max_blocks;		/* SRC_SG: 0 for the profile's */
	bool async;
	bool reset_prepared;		/* clear prepared buffers on success */
};

static void clear_prepared(struct dpusim_xfer_req *req)
{
	uint32_t i, k;

	for (i = 0; i < req->nr_parts; i++) {
		struct dpusim_xfer_part *p = &req->parts[i];

		for (k = 0; k < p->count; k++)
			p->rank->dpus[p->first + k].prepared_buffer = NULL;
	}
}

/*
 * A struct dpu_symbol_t as dpu_get_symbol gives it: an address at or above
 * DPUSIM_DPU_MRAM_BASE is MRAM (offset = address - base), below is WRAM.
 */
static dpu_error_t resolve_symbol(const struct xfer_desc *d, uint64_t *offset,
				  bool *wram)
{
	const struct dpu_symbol_t *sym = d->by_symbol;
	uint64_t base = sym->address;
	char what[32];

	*wram = base < DPUSIM_DPU_MRAM_BASE;
	if (!*wram)
		base -= DPUSIM_DPU_MRAM_BASE;
	snprintf(what, sizeof(what), "0x%x", (unsigned int)sym->address);
	return dpusim_xfer_check_range(d->fn, what, *wram, base, sym->size,
				       d->symbol_offset, d->length, offset);
}

static dpu_error_t run_xfer(struct dpu_set_t set, const struct xfer_desc *d)
{
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	bool wram = false;
	dpu_error_t ret;

	ret = dpusim_xfer_req_new(set, d->fn, &props, &req);
	if (ret != DPU_OK)
		return ret;
	if (d->dir != DPU_XFER_TO_DPU && d->dir != DPU_XFER_FROM_DPU) {
		dpusim_log("%s: invalid direction %d (DPU_XFER_TO_DPU or DPU_XFER_FROM_DPU)",
			   d->fn, (int)d->dir);
		ret = DPU_ERR_INVALID_MEMORY_TRANSFER;
		goto out;
	}
	if (d->src == SRC_SG && !props->sg_enabled) {
		dpusim_log("%s: scatter/gather transfers are not enabled for this set: allocate it with the profile \"sgXferEnable=true\"",
			   d->fn);
		ret = DPU_ERR_SG_NOT_ACTIVATED;
		goto out;
	}
	if (d->by_symbol)
		ret = resolve_symbol(d, &req->offset, &wram);
	else
		ret = dpusim_xfer_resolve_mem(props, d->fn, d->symbol,
					      d->symbol_offset, d->length,
					      &req->offset, &wram);
	if (ret != DPU_OK)
		goto out;
	if (wram && d->src == SRC_SG) {
		dpusim_log("%s: symbol '%s' is in WRAM: scatter/gather transfers move MRAM only",
			   d->fn, d->symbol ? d->symbol : "(by address)");
		ret = DPU_ERR_SG_NOT_MRAM_SYMBOL;
		goto out;
	}
	req->length = d->length;
	req->kflags = d->dir == DPU_XFER_FROM_DPU ? DPUSIM_XFER_FROM_DPU : 0;
	if (wram)
		req->kflags |= DPUSIM_XFER_WRAM;

	switch (d->src) {
	case SRC_BUFFER:
		ret = dpusim_xfer_gather_buffer(req, d->buffer);
		break;
	case SRC_PREPARED:
		ret = dpusim_xfer_gather_prepared(req);
		break;
	case SRC_SG:
		if (!d->length_check)
			req->kflags |= DPUSIM_XFER_NO_LENGTH_CHECK;
		req->sg_skip_empty = d->skip_empty;
		ret = dpusim_xfer_gather_sg(req, d->get_block,
					    d->max_blocks ? d->max_blocks :
					    props->sg_max_blocks_per_dpu,
					    d->length_check);
		break;
	}
	if (ret != DPU_OK)
		goto out;
	ret = dpusim_xfer_check_limits(req);
	if (ret != DPU_OK)
		goto out;

	/*
	 * dpusim.ko queues an ASYNC transfer; a synchronous one waits there
	 * for the queued transfers of the rank first (submission order).
	 */
	if (d->async)
		ret = dpusim_async_submit(props, req);
	else
		ret = dpusim_xfer_issue(req);
	/* As UPMEM: the buffers are cleared after a successful transfer only. */
	if (ret == DPU_OK && d->reset_prepared)
		clear_prepared(req);
out:
	dpusim_xfer_req_free(req);
	return ret;
}

static bool check_flags(const char *fn, unsigned int flags, unsigned int known)
{
	if (flags & ~known) {
		dpusim_log("%s: unknown flags 0x%x", fn, flags & ~known);
		return false;
	}
	return true;
}

static bool check_buffer(const char *fn, const void *buf, size_t length)
{
	if (!buf && length) {
		dpusim_log("%s: host buffer is NULL", fn);
		return false;
	}
	return true;
}

/*
 * Each transfer exists twice in the API: naming its symbol, or with a
 * struct dpu_symbol_t (the *_symbol variants). One body each; sym is NULL
 * for the named form.
 */
static dpu_error_t copy_to(const char *fn, struct dpu_set_t set,
			   const char *name, const struct dpu_symbol_t *sym,
			   uint32_t off, const void *src, size_t length)
{
	struct xfer_desc d = {
		.fn = fn, .dir = DPU_XFER_TO_DPU, .symbol = name,
		.by_symbol = sym, .symbol_offset = off, .length = length,
		.src = SRC_BUFFER, .buffer = src,
	};

	if (!check_buffer(fn, src, length))
		return DPU_ERR_INVALID_MEMORY_TRANSFER;
	return run_xfer(set, &d);
}

static dpu_error_t copy_from(const char *fn, struct dpu_set_t set,
			     const char *name, const struct dpu_symbol_t *sym,
			     uint32_t off, void *dst, size_t length)
{
	struct xfer_desc d = {
		.fn = fn, .dir = DPU_XFER_FROM_DPU, .symbol = name,
		.by_symbol = sym, .symbol_offset = off, .length = length,
		.src = SRC_BUFFER, .buffer = dst,
	};

	if (set.kind != DPU_SET_DPU) {
		dpusim_log("%s: the set must be one DPU (from DPU_FOREACH), as UPMEM; use dpu_push_xfer for several",
			   fn);
		return DPU_ERR_INVALID_DPU_SET;
	}
	if (!check_buffer(fn, dst, length))
		return DPU_ERR_INVALID_MEMORY_TRANSFER;
	return run_xfer(set, &d);
}

static dpu_error_t broadcast_to(const char *fn, struct dpu_set_t set,
				const char *name, const struct dpu_symbol_t *sym,
				uint32_t off, const void *src, size_t length,
				dpu_xfer_flags_t flags)
{
	struct xfer_desc d = {
		.fn = fn, .dir = DPU_XFER_TO_DPU, .symbol = name,
		.by_symbol = sym, .symbol_offset = off, .length = length,
		.src = SRC_BUFFER, .buffer = src,
		.async = flags & DPU_XFER_ASYNC,
	};

	if (!check_flags(fn, flags, DPU_XFER_NO_RESET | DPU_XFER_ASYNC))
		return DPU_ERR_INVALID_MEMORY_TRANSFER;
	if (!check_buffer(fn, src, length))
		return DPU_ERR_INVALID_MEMORY_TRANSFER;
	return run_xfer(set, &d);
}

static dpu_error_t push_xfer(const char *fn, struct dpu_set_t set,
			     dpu_xfer_t xfer, const char *name,
			     const struct dpu_symbol_t *sym, uint32_t off,
			     size_t length, dpu_xfer_flags_t flags)
{
	struct xfer_desc d = {
		.fn = fn, .dir = xfer, .symbol = name, .by_symbol = sym,
		.symbol_offset = off, .length = length, .src = SRC_PREPARED,
		.async = flags & DPU_XFER_ASYNC,
		.reset_prepared = !(flags & DPU_XFER_NO_RESET),
	};

	if (!check_flags(fn, flags, DPU_XFER_NO_RESET | DPU_XFER_ASYNC))
		return DPU_ERR_INVALID_MEMORY_TRANSFER;
	return run_xfer(set, &d);
}

static dpu_error_t push_sg_xfer(const char *fn, struct dpu_set_t set,
				dpu_xfer_t xfer, const char *name,
				const struct dpu_symbol_t *sym, uint32_t off,
				size_t length, const get_block_t *get_block,
				dpu_sg_xfer_flags_t flags)
{
	struct xfer_desc d = {
		.fn = fn, .dir = xfer, .symbol = name, .by_symbol = sym,
		.symbol_offset = off, .length = length, .src = SRC_SG,
		.get_block = get_block,
		.length_check = !(flags & DPU_SG_XFER_DISABLE_LENGTH_CHECK),
		.async = flags & DPU_SG_XFER_ASYNC,
	};

	if (!check_flags(fn, flags, DPU_SG_XFER_ASYNC |
			 DPU_SG_XFER_DISABLE_LENGTH_CHECK))
		return DPU_ERR_INVALID_MEMORY_TRANSFER;
	return run_xfer(set, &d);
}

DPUSIM_API dpu_error_t dpu_copy_to(struct dpu_set_t dpu_set,
				   const char *symbol_name,
				   uint32_t symbol_offset, const void *src,
				   size_t length)
{
	return copy_to("dpu_copy_to", dpu_set, symbol_name, NULL,
		       symbol_offset, src, length);
}

DPUSIM_API dpu_error_t dpu_copy_to_symbol(struct dpu_set_t dpu_set,
					  struct dpu_symbol_t symbol,
					  uint32_t symbol_offset,
					  const void *src, size_t length)
{
	return copy_to("dpu_copy_to_symbol", dpu_set, NULL, &symbol,
		       symbol_offset, src, length);
}

DPUSIM_API dpu_error_t dpu_copy_from(struct dpu_set_t dpu_set,
				     const char *symbol_name,
				     uint32_t symbol_offset, void *dst,
				     size_t length)
{
	return copy_from("dpu_copy_from", dpu_set, symbol_name, NULL,
			 symbol_offset, dst, length);
}

DPUSIM_API dpu_error_t dpu_copy_from_symbol(struct dpu_set_t dpu_set,
					    struct dpu_symbol_t symbol,
					    uint32_t symbol_offset, void *dst,
					    size_t length)
{
	return copy_from("dpu_copy_from_symbol", dpu_set, NULL, &symbol,
			 symbol_offset, dst, length);
}

DPUSIM_API dpu_error_t dpu_broadcast_to(struct dpu_set_t dpu_set,
					const char *symbol_name,
					uint32_t symbol_offset,
					const void *src, size_t length,
					dpu_xfer_flags_t flags)
{
	return broadcast_to("dpu_broadcast_to", dpu_set, symbol_name, NULL,
			    symbol_offset, src, length, flags);
}

DPUSIM_API dpu_error_t dpu_broadcast_to_symbol(struct dpu_set_t dpu_set,
					       struct dpu_symbol_t symbol,
					       uint32_t symbol_offset,
					       const void *src, size_t length,
					       dpu_xfer_flags_t flags)
{
	return broadcast_to("dpu_broadcast_to_symbol", dpu_set, NULL, &symbol,
			    symbol_offset, src, length, flags);
}

DPUSIM_API dpu_error_t dpu_prepare_xfer(struct dpu_set_t dpu_set,
					void *buffer)
{
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	uint32_t i, k;
	dpu_error_t ret;

	/* The same targets as a transfer: the enabled DPUs of the (sub)set. */
	ret = dpusim_xfer_req_new(dpu_set, "dpu_prepare_xfer", &props, &req);
	if (ret != DPU_OK)
		return ret;
	for (i = 0; i < req->nr_parts; i++) {
		struct dpusim_xfer_part *p = &req->parts[i];

		for (k = 0; k < p->count; k++)
			p->rank->dpus[p->first + k].prepared_buffer = buffer;
	}
	dpusim_xfer_req_free(req);
	return DPU_OK;
}

DPUSIM_API dpu_error_t dpu_push_xfer(struct dpu_set_t dpu_set,
				     dpu_xfer_t xfer, const char *symbol_name,
				     uint32_t symbol_offset, size_t length,
				     dpu_xfer_flags_t flags)
{
	return push_xfer("dpu_push_xfer", dpu_set, xfer, symbol_name, NULL,
			 symbol_offset, length, flags);
}

DPUSIM_API dpu_error_t dpu_push_xfer_symbol(struct dpu_set_t dpu_set,
					    dpu_xfer_t xfer,
					    struct dpu_symbol_t symbol,
					    uint32_t symbol_offset,
					    size_t length,
					    dpu_xfer_flags_t flags)
{
	return push_xfer("dpu_push_xfer_symbol", dpu_set, xfer, NULL, &symbol,
			 symbol_offset, length, flags);
}

DPUSIM_API dpu_error_t dpu_push_sg_xfer(struct dpu_set_t dpu_set,
					dpu_xfer_t xfer,
					const char *symbol_name,
					uint32_t symbol_offset, size_t length,
					get_block_t *get_block_info,
					dpu_sg_xfer_flags_t flags)
{
	return push_sg_xfer("dpu_push_sg_xfer", dpu_set, xfer, symbol_name,
			    NULL, symbol_offset, length, get_block_info, flags);
}

DPUSIM_API dpu_error_t dpu_push_sg_xfer_symbol(struct dpu_set_t dpu_set,
					       dpu_xfer_t xfer,
					       struct dpu_symbol_t symbol,
					       uint32_t symbol_offset,
					       size_t length,
					       struct get_block_t *get_block_info,
					       dpu_sg_xfer_flags_t flags)
{
	return push_sg_xfer("dpu_push_sg_xfer_symbol", dpu_set, xfer, NULL,
			    &symbol, symbol_offset, length, get_block_info,
			    flags);
}

/* ------------------------------------------------------------ internal */

dpu_error_t dpusim_push_sg_subset(struct dpu_set_t set, const char *fn, dpu_xfer_t dir,
				  const char *symbol, uint32_t symbol_offset, size_t length,
				  const get_block_t *get_block, uint32_t max_blocks,
				  bool length_check, bool async)
{
	struct xfer_desc d = {
		.fn = fn, .dir = dir, .symbol = symbol, .symbol_offset = symbol_offset,
		.length = length, .src = SRC_SG, .get_block = get_block,
		.length_check = length_check, .skip_empty = true,
		.max_blocks = max_blocks, .async = async,
	};

	return run_xfer(set, &d);
}

dpu_error_t dpusim_xfer_raw(struct dpu_set_t set, const char *fn, bool wram,
			    dpu_xfer_t dir, uint64_t offset, void *buf,
			    size_t length)
{
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	dpu_error_t ret;

	ret = dpusim_xfer_req_new(set, fn, &props, &req);
	if (ret != DPU_OK)
		return ret;
	req->offset = offset;
	req->length = length;
	req->kflags = (dir == DPU_XFER_FROM_DPU ? DPUSIM_XFER_FROM_DPU : 0) |
		      (wram ? DPUSIM_XFER_WRAM : 0);
	ret = dpusim_xfer_gather_buffer(req, buf);
	if (ret == DPU_OK)
		ret = dpusim_xfer_check_limits(req);
	if (ret == DPU_OK)
		ret = dpusim_xfer_issue(req);
	dpusim_xfer_req_free(req);
	return ret;
}
