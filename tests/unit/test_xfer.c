// SPDX-License-Identifier: MIT
/*
 * Unit tests of the transfer engine without a device: ranks are built in
 * memory (fd -1) and assembled as dpu_alloc does. Covers symbol
 * resolution and the MRAM access checks, the targets of sets and subsets,
 * the descriptors built for each kind of transfer, the scatter/gather
 * rules (set-wide indices, max blocks, length mismatch across ranks, the
 * args copy), the kernel limits, errno mapping, dpu_load/dpu_get_symbol
 * (with tests/unit/fixtures/mram_symbols.c compiled by cc at run time),
 * and the API paths that must fail before any ioctl. An ioctl on fd -1
 * fails with EBADF (DPU_ERR_DRIVER): that shows when one was attempted.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uapi/dpusim.h>

#include "internal.h"
#include "program.h"
#include "unit.h"
#include "unit_set.h"
#include "xfer.h"

#define MRAM_SIZE UNIT_MRAM_SIZE

/* A program with symbols "a" (offset 64, 256 bytes) and "odd" (offset 4100, 16 bytes). */
static struct dpu_program_t *hand_program(void)
{
	struct dpu_program_t *prog = calloc(1, sizeof(*prog));

	if (!prog)
		return NULL;
	prog->symbols = calloc(2, sizeof(*prog->symbols));
	if (!prog->symbols) {
		free(prog);
		return NULL;
	}
	prog->nr_symbols = 2;
	prog->symbols[0].name = strdup("a");
	prog->symbols[0].offset = 64;
	prog->symbols[0].size = 256;
	prog->symbols[1].name = strdup("odd");
	prog->symbols[1].offset = 4100;
	prog->symbols[1].size = 16;
	if (!prog->symbols[0].name || !prog->symbols[1].name) {
		dpusim_program_free(prog);
		return NULL;
	}
	return prog;
}

/* ------------------------------------------------------------ resolve */

static void test_resolve(void)
{
	struct dpu_set_t set;
	struct dpusim_set_props *props;
	struct dpu_program_t *prog;
	uint64_t off = 1;

	if (!make_set(1, 4, UINT32_MAX, NULL, &set)) {
		unit_fail("resolve: make set", "failed");
		return;
	}
	props = dpusim_set_props(set, NULL);

	UNIT_CHECK("resolve: heap pointer without a program",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, 4096, 1024, &off) == DPU_OK &&
		   off == 4096, "off %llu", (unsigned long long)off);
	UNIT_CHECK("resolve: heap pointer, whole MRAM",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, 0, MRAM_SIZE, &off) == DPU_OK &&
		   off == 0, "refused");
	UNIT_CHECK("resolve: heap pointer, last 8 bytes",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, MRAM_SIZE - 8, 8, &off) == DPU_OK &&
		   off == MRAM_SIZE - 8, "refused");
	UNIT_CHECK("resolve: heap pointer, 8 bytes past the end",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, MRAM_SIZE - 8, 16, &off) ==
		   DPU_ERR_INVALID_MRAM_ACCESS, "accepted");
	UNIT_CHECK("resolve: offset past the end",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, UINT32_MAX - 7, 8, &off) ==
		   DPU_ERR_INVALID_MRAM_ACCESS, "accepted");
	UNIT_CHECK("resolve: length that would wrap",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, 8, SIZE_MAX - 7, &off) ==
		   DPU_ERR_INVALID_MRAM_ACCESS, "accepted");
	UNIT_CHECK("resolve: unaligned offset",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, 4, 8, &off) ==
		   DPU_ERR_INVALID_MRAM_ACCESS, "accepted");
	UNIT_CHECK("resolve: unaligned length",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, 0, 12, &off) ==
		   DPU_ERR_INVALID_MRAM_ACCESS, "accepted");
	UNIT_CHECK("resolve: zero length accepted",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, 0, 0, &off) == DPU_OK,
		   "refused");
	UNIT_CHECK("resolve: unknown symbol without a program",
		   dpusim_xfer_resolve(props, "t", "a", 0, 8, &off) == DPU_ERR_UNKNOWN_SYMBOL,
		   "accepted");
	UNIT_CHECK("resolve: NULL symbol name",
		   dpusim_xfer_resolve(props, "t", NULL, 0, 8, &off) == DPU_ERR_UNKNOWN_SYMBOL,
		   "accepted");

	prog = hand_program();
	if (!prog) {
		unit_fail("resolve: hand-made program", "out of memory");
		dpu_free(set);
		return;
	}
	props->program = prog;
	dpusim_set_hook_add(props, DPUSIM_SET_HOOK_PROGRAM, dpusim_load_teardown);
	UNIT_CHECK("resolve: program symbol + offset",
		   dpusim_xfer_resolve(props, "t", "a", 16, 240, &off) == DPU_OK && off == 80,
		   "off %llu", (unsigned long long)off);
	UNIT_CHECK("resolve: program symbol, one word too long",
		   dpusim_xfer_resolve(props, "t", "a", 16, 248, &off) == DPU_ERR_INVALID_MRAM_ACCESS,
		   "accepted");
	UNIT_CHECK("resolve: symbol at an unaligned MRAM offset",
		   dpusim_xfer_resolve(props, "t", "odd", 0, 8, &off) == DPU_ERR_INVALID_MRAM_ACCESS,
		   "accepted");
	UNIT_CHECK("resolve: heap pointer with a program loaded",
		   dpusim_xfer_resolve(props, "t", DPU_MRAM_HEAP_POINTER_NAME, 0, MRAM_SIZE, &off) == DPU_OK,
		   "refused");
	UNIT_CHECK("resolve: unknown symbol with a program",
		   dpusim_xfer_resolve(props, "t", "b", 0, 8, &off) == DPU_ERR_UNKNOWN_SYMBOL,
		   "accepted");
	UNIT_CHECK("resolve: dpu_free frees the program", dpu_free(set) == DPU_OK, "failed");
}

/* ------------------------------------------------------------ targets */

static void test_targets(void)
{
	struct dpu_set_t set, rank, dpu, last = { .kind = DPU_SET_DPU };
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	uint32_t r;
	bool ok;

	if (!make_set(3, 4, 10, NULL, &set)) {
		unit_fail("targets: make set", "failed");
		return;
	}
	ok = dpusim_xfer_req_new(set, "t", &props, &req) == DPU_OK &&
	     req->nr_parts == 3 && req->parts[0].count == 4 &&
	     req->parts[1].count == 4 && req->parts[2].count == 2 &&
	     req->parts[2].rank == set.list.ranks[2];
	UNIT_CHECK("targets: whole set, enabled DPUs per rank 4,4,2", ok, "wrong parts");
	dpusim_xfer_req_free(req);

	DPU_RANK_FOREACH(set, rank, r) {
		if (r != 1)
			continue;
		ok = dpusim_xfer_req_new(rank, "t", &props, &req) == DPU_OK &&
		     req->nr_parts == 1 && req->parts[0].rank == set.list.ranks[1] &&
		     req->parts[0].first == 0 && req->parts[0].count == 4;
		UNIT_CHECK("targets: a rank of the set", ok, "wrong parts");
		dpusim_xfer_req_free(req);
	}
	DPU_FOREACH(set, dpu, r) {
		if (r != 6)
			continue;
		ok = dpusim_xfer_req_new(dpu, "t", &props, &req) == DPU_OK &&
		     req->nr_parts == 1 && req->parts[0].rank == set.list.ranks[1] &&
		     req->parts[0].first == 2 && req->parts[0].count == 1;
		UNIT_CHECK("targets: one DPU of the set", ok, "wrong parts");
		dpusim_xfer_req_free(req);
	}
	last.dpu = &set.list.ranks[2]->dpus[3];
	UNIT_CHECK("targets: a disabled DPU is refused",
		   dpusim_xfer_req_new(last, "t", &props, &req) == DPU_ERR_DPU_DISABLED,
		   "accepted");
	dpu_free(set);
}

/* ------------------------------------------------------------ one-buffer gathers */

/*
 * A rank's part of 4 DPUs with @nb blocks each of @len bytes, block k of
 * a DPU at @base + k * @gap (fake addresses: check_limits reads none)
 */
static bool fake_part(struct dpusim_xfer_req *req, uint32_t nb, uint64_t len, uint64_t gap)
{
	struct dpusim_xfer_part *p = &req->parts[0];
	uint64_t base = 1ULL << 40;
	uint32_t d, k;

	p->blocks = calloc(4 * (size_t)nb, sizeof(*p->blocks));
	if (!p->blocks)
		return false;
	p->cap_blocks = p->nr_blocks = 4 * nb;
	p->nr_dpus = 4;
	for (d = 0; d < 4; d++) {
		p->dpus[d].dpu = d;
		p->dpus[d].nr_blocks = nb;
		for (k = 0; k < nb; k++) {
			p->blocks[d * nb + k].addr = base + (uint64_t)(d * nb + k) * gap;
			p->blocks[d * nb + k].length = len;
		}
	}
	return true;
}

/* The other per-call limits, and a DPU over a limit on its own */
static void test_split(void)
{
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	struct dpu_set_t set;
	struct dpusim_xfer_part *p;

	if (!make_set(1, 4, UINT32_MAX, NULL, &set)) {
		unit_fail("split: make set", "failed");
		return;
	}
	/* 300000 empty blocks per DPU: 3 DPUs fill DPUSIM_XFER_MAX_BLOCKS */
	dpusim_xfer_req_new(set, "t", &props, &req);
	p = &req->parts[0];
	req->kflags = DPUSIM_XFER_FROM_DPU;
	UNIT_CHECK("split: 4 x 300000 blocks is 3 DPUs, then 1 (DPUSIM_XFER_MAX_BLOCKS)",
		   fake_part(req, 300000, 0, 64) && dpusim_xfer_check_limits(req) == DPU_OK &&
		   p->nr_calls == 2 && p->call_end[0] == 3 && p->call_end[1] == 4,
		   "%u calls", p->nr_calls);
	dpusim_xfer_req_free(req);

	/* 200000 blocks of 8 bytes a page apart: 2 DPUs fill DPUSIM_XFER_MAX_PAGES */
	dpusim_xfer_req_new(set, "t", &props, &req);
	p = &req->parts[0];
	req->kflags = DPUSIM_XFER_FROM_DPU;
	req->length = 200000 * 8;
	UNIT_CHECK("split: 4 x 200000 pages is 2 DPUs, then 2 (DPUSIM_XFER_MAX_PAGES)",
		   fake_part(req, 200000, 8, 4096) && dpusim_xfer_check_limits(req) == DPU_OK &&
		   p->nr_calls == 2 && p->call_end[0] == 2 && p->call_end[1] == 4,
		   "%u calls", p->nr_calls);
	dpusim_xfer_req_free(req);

	/* a DPU alone over DPUSIM_XFER_MAX_BYTES: refused, nothing issued */
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = DPUSIM_XFER_MAX_BYTES + 8;
	UNIT_CHECK("split: a DPU alone over DPUSIM_XFER_MAX_BYTES refused",
		   fake_part(req, 1, DPUSIM_XFER_MAX_BYTES + 8, 0) &&
		   dpusim_xfer_check_limits(req) == DPU_ERR_INVALID_MEMORY_TRANSFER,
		   "accepted");
	dpusim_xfer_req_free(req);

	/* two halves of DPUSIM_XFER_MAX_BYTES fill a call exactly */
	dpusim_xfer_req_new(set, "t", &props, &req);
	p = &req->parts[0];
	req->length = DPUSIM_XFER_MAX_BYTES / 2;
	UNIT_CHECK("split: 4 DPUs of half DPUSIM_XFER_MAX_BYTES: 2 calls of 2",
		   fake_part(req, 1, DPUSIM_XFER_MAX_BYTES / 2, DPUSIM_XFER_MAX_BYTES) &&
		   dpusim_xfer_check_limits(req) == DPU_OK &&
		   p->nr_calls == 2 && p->call_end[0] == 2 && p->call_end[1] == 4,
		   "%u calls", p->nr_calls);
	dpusim_xfer_req_free(req);

	/* no DPU taking part: no call */
	dpusim_xfer_req_new(set, "t", &props, &req);
	UNIT_CHECK("split: no DPU, no call",
		   dpusim_xfer_check_limits(req) == DPU_OK && req->parts[0].nr_calls == 0,
		   "%u calls", req->parts[0].nr_calls);
	dpusim_xfer_req_free(req);
	dpu_free(set);
}

static void test_gather_buffers(void)
{
	struct dpu_set_t set, dpu;
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	uint64_t buf[4], bufs[10][4];
	uint32_t i, r, d, n;
	bool ok = true;

	if (!make_set(3, 4, 10, NULL, &set)) {
		unit_fail("gather: make set", "failed");
		return;
	}
	if (dpusim_xfer_req_new(set, "t", &props, &req) != DPU_OK) {
		unit_fail("gather: request", "failed");
		return;
	}
	req->length = sizeof(buf);
	ok = dpusim_xfer_gather_buffer(req, buf) == DPU_OK;
	for (r = 0, n = 0; r < 3 && ok; r++) {
		struct dpusim_xfer_part *p = &req->parts[r];

		ok = p->nr_dpus == (r < 2 ? 4 : 2) && p->nr_blocks == p->nr_dpus;
		for (d = 0; d < p->nr_dpus && ok; d++, n++)
			ok = p->dpus[d].dpu == d && p->dpus[d].nr_blocks == 1 &&
			     p->blocks[d].addr == (uintptr_t)buf &&
			     p->blocks[d].length == sizeof(buf);
	}
	UNIT_CHECK("gather: one buffer for every DPU (copy_to, broadcast)",
		   ok && n == 10, "wrong descriptors");
	UNIT_CHECK("limits: 10 x 32 bytes fine", dpusim_xfer_check_limits(req) == DPU_OK &&
		   req->parts[0].bytes == 128 && req->parts[2].bytes == 64, "refused");
	dpusim_xfer_req_free(req);

	/* prepared buffers: DPUs 1, 4, 9 only */
	DPU_FOREACH(set, dpu, i)
		if (i == 1 || i == 4 || i == 9)
			dpu_prepare_xfer(dpu, bufs[i]);
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = sizeof(bufs[0]);
	ok = dpusim_xfer_gather_prepared(req) == DPU_OK &&
	     req->parts[0].nr_dpus == 1 && req->parts[0].dpus[0].dpu == 1 &&
	     req->parts[0].blocks[0].addr == (uintptr_t)bufs[1] &&
	     req->parts[1].nr_dpus == 1 && req->parts[1].dpus[0].dpu == 0 &&
	     req->parts[1].blocks[0].addr == (uintptr_t)bufs[4] &&
	     req->parts[2].nr_dpus == 1 && req->parts[2].dpus[0].dpu == 1 &&
	     req->parts[2].blocks[0].addr == (uintptr_t)bufs[9];
	UNIT_CHECK("gather: prepared buffers only (push_xfer)", ok, "wrong descriptors");
	dpusim_xfer_req_free(req);

	/* push_xfer fails (fd -1: EBADF): the prepared buffers are kept */
	UNIT_CHECK("push_xfer: ioctl error is DPU_ERR_DRIVER",
		   dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0,
				 sizeof(bufs[0]), DPU_XFER_DEFAULT) == DPU_ERR_DRIVER,
		   "other result");
	UNIT_CHECK("push_xfer: prepared buffers kept after an error",
		   set.list.ranks[0]->dpus[1].prepared_buffer == bufs[1] &&
		   set.list.ranks[2]->dpus[1].prepared_buffer == bufs[9], "cleared");
	/* a validation error: also kept */
	UNIT_CHECK("push_xfer: unaligned length refused",
		   dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 12,
				 DPU_XFER_DEFAULT) == DPU_ERR_INVALID_MRAM_ACCESS, "accepted");
	UNIT_CHECK("push_xfer: bad direction refused",
		   dpu_push_xfer(set, (dpu_xfer_t)7, DPU_MRAM_HEAP_POINTER_NAME, 0, 8,
				 DPU_XFER_DEFAULT) == DPU_ERR_INVALID_MEMORY_TRANSFER, "accepted");
	UNIT_CHECK("push_xfer: unknown flag refused",
		   dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 8,
				 (dpu_xfer_flags_t)0x100) == DPU_ERR_INVALID_MEMORY_TRANSFER, "accepted");
	DPU_FOREACH(set, dpu, i)
		if (i == 9)
			dpu_prepare_xfer(dpu, NULL);
	UNIT_CHECK("prepare_xfer(NULL) clears one DPU",
		   set.list.ranks[2]->dpus[1].prepared_buffer == NULL &&
		   set.list.ranks[0]->dpus[1].prepared_buffer == bufs[1], "wrong");
	dpu_prepare_xfer(set, NULL);
	/* nothing prepared: nothing to do, no ioctl (fd -1 would fail) */
	UNIT_CHECK("push_xfer: no prepared buffer, no ioctl",
		   dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 8,
				 DPU_XFER_DEFAULT) == DPU_OK, "failed");

	UNIT_CHECK("copy_from: a set of ranks is refused",
		   dpu_copy_from(set, DPU_MRAM_HEAP_POINTER_NAME, 0, buf, 8) ==
		   DPU_ERR_INVALID_DPU_SET, "accepted");
	UNIT_CHECK("copy_to: unknown symbol",
		   dpu_copy_to(set, "nope", 0, buf, 8) == DPU_ERR_UNKNOWN_SYMBOL, "accepted");
	UNIT_CHECK("copy_to: NULL source",
		   dpu_copy_to(set, DPU_MRAM_HEAP_POINTER_NAME, 0, NULL, 8) ==
		   DPU_ERR_INVALID_MEMORY_TRANSFER, "accepted");
	UNIT_CHECK("copy_to: ioctl attempted (EBADF -> DPU_ERR_DRIVER)",
		   dpu_copy_to(set, DPU_MRAM_HEAP_POINTER_NAME, 0, buf, 8) == DPU_ERR_DRIVER,
		   "other result");
	dpu_free(set);

	/*
	 * A rank of 64 DPUs x 64 MiB is 4 GiB: over one ioctl's byte limit,
	 * split into calls of 16 DPUs (1 GiB each: the limit, not over it)
	 */
	if (!make_set(1, 64, UINT32_MAX, NULL, &set)) {
		unit_fail("limits: make set", "failed");
		return;
	}
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = MRAM_SIZE;
	UNIT_CHECK("limits: 64 x 64 MiB is 4 calls of 16 DPUs",
		   dpusim_xfer_gather_buffer(req, buf) == DPU_OK &&
		   dpusim_xfer_check_limits(req) == DPU_OK && req->parts[0].nr_calls == 4 &&
		   req->parts[0].call_end[0] == 16 && req->parts[0].call_end[1] == 32 &&
		   req->parts[0].call_end[2] == 48 && req->parts[0].call_end[3] == 64 &&
		   req->parts[0].bytes == 64ULL * MRAM_SIZE,
		   "%u calls", req->parts[0].nr_calls);
	/* empty blocks, no length check: 4 GiB of zero padding is the limit */
	for (i = 0; i < req->parts[0].nr_blocks; i++)
		req->parts[0].blocks[i].length = 0;
	req->kflags |= DPUSIM_XFER_NO_LENGTH_CHECK;
	UNIT_CHECK("limits: 64 x 64 MiB of padding is DPUSIM_XFER_MAX_PAD_BYTES: one call",
		   dpusim_xfer_check_limits(req) == DPU_OK && req->parts[0].nr_calls == 1,
		   "%u calls", req->parts[0].nr_calls);
	req->kflags |= DPUSIM_XFER_FROM_DPU;
	UNIT_CHECK("limits: from the DPU nothing is padded",
		   dpusim_xfer_check_limits(req) == DPU_OK && req->parts[0].nr_calls == 1,
		   "%u calls", req->parts[0].nr_calls);
	dpusim_xfer_req_free(req);
	dpu_free(set);

	/* 80 DPUs x 64 MiB of padding: over the limit, two calls */
	if (!make_set(1, 80, UINT32_MAX, NULL, &set)) {
		unit_fail("limits: make set", "failed");
		return;
	}
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = MRAM_SIZE;
	req->kflags = DPUSIM_XFER_NO_LENGTH_CHECK;
	ok = dpusim_xfer_gather_buffer(req, buf) == DPU_OK;
	for (i = 0; ok && i < req->parts[0].nr_blocks; i++)
		req->parts[0].blocks[i].length = 0;
	UNIT_CHECK("limits: 80 x 64 MiB of padding is 64 DPUs, then 16",
		   ok && dpusim_xfer_check_limits(req) == DPU_OK && req->parts[0].nr_calls == 2 &&
		   req->parts[0].call_end[0] == 64 && req->parts[0].call_end[1] == 80,
		   "%u calls", req->parts[0].nr_calls);
	dpusim_xfer_req_free(req);
	dpu_free(set);

	test_split();
}

/* ------------------------------------------------------------ scatter/gather */

#define SG_DPUS 256

struct sg_ctx {
	uint8_t *base;			/* fake addresses: base + dpu * 4096 + block * 64 */
	uint32_t nr_blocks[SG_DPUS];	/* blocks per DPU */
	uint32_t block_len;
	uint32_t short_dpu;		/* this DPU's last block is 8 bytes short */
	_Atomic uint32_t *calls;	/* calls per set index */
	int value;			/* written through args by the callback */
	void *seen_args;
};

static bool sg_get_block(struct sg_block_info *out, uint32_t dpu,
			 uint32_t block, void *args)
{
	struct sg_ctx *c = args;

	atomic_fetch_add(&c->calls[dpu], 1);
	if (dpu == 0 && block == 0) {	/* one thread only: no race */
		c->seen_args = args;
		c->value = 42;		/* must not reach the caller's struct */
	}
	if (block >= c->nr_blocks[dpu])
		return false;
	out->addr = c->base + dpu * 4096 + block * 64;
	out->length = c->block_len;
	if (dpu == c->short_dpu && block == c->nr_blocks[dpu] - 1)
		out->length -= 8;
	return true;
}

static _Atomic bool null_args_seen;
static bool sg_null_args(struct sg_block_info *out, uint32_t dpu,
			 uint32_t block, void *args)
{
	if (dpu == 0)
		atomic_store(&null_args_seen, args == NULL);
	if (block)
		return false;
	out->addr = NULL;
	out->length = 0;
	return true;
}

static void sg_reset(struct sg_ctx *c, uint32_t blocks, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < SG_DPUS; i++) {
		c->nr_blocks[i] = blocks;
		atomic_store(&c->calls[i], 0);
	}
	c->block_len = len;
	c->short_dpu = UINT32_MAX;
	c->value = 1;
	c->seen_args = NULL;
}

static void test_sg(void)
{
	static _Atomic uint32_t calls[SG_DPUS];
	struct dpu_set_t set, dpu, rank;
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	struct sg_ctx ctx = { .base = (uint8_t *)0x100000, .calls = calls };
	get_block_t gb = { .f = sg_get_block, .args = &ctx, .args_size = sizeof(ctx) };
	uint32_t r = 0, d = 0, i, blk;
	bool ok;

	/* 4 ranks x 64 DPUs, default max blocks = 256 */
	if (!make_set(4, 64, UINT32_MAX, "sgXferEnable=true", &set)) {
		unit_fail("sg: make set", "failed");
		return;
	}
	props = dpusim_set_props(set, NULL);
	UNIT_CHECK("sg: default max blocks is the set's DPU count",
		   props->sg_max_blocks_per_dpu == 256, "got %u", props->sg_max_blocks_per_dpu);

	/* 3 blocks of 16 bytes per DPU, length 48 */
	sg_reset(&ctx, 3, 16);
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = 48;
	ok = dpusim_xfer_gather_sg(req, &gb, 256, true) == DPU_OK;
	for (r = 0; r < 4 && ok; r++) {
		struct dpusim_xfer_part *p = &req->parts[r];

		ok = p->nr_dpus == 64 && p->nr_blocks == 192;
		for (d = 0; d < 64 && ok; d++) {
			uint32_t idx = r * 64 + d;

			ok = p->dpus[d].dpu == d && p->dpus[d].nr_blocks == 3 &&
			     atomic_load(&calls[idx]) == 4;
			for (blk = 0; blk < 3 && ok; blk++)
				ok = p->blocks[d * 3 + blk].addr ==
				     0x100000 + idx * 4096 + blk * 64 &&
				     p->blocks[d * 3 + blk].length == 16;
		}
	}
	UNIT_CHECK("sg: 4 ranks x 64 DPUs x 3 blocks, set-wide indices, one false call each",
		   ok, "wrong descriptors (rank %u dpu %u)", r, d);
	UNIT_CHECK("sg: the callback saw a copy of args",
		   ctx.seen_args == NULL && ctx.value == 1, "caller's struct changed (value %d)",
		   ctx.value);
	UNIT_CHECK("sg: args copy freed after gathering", req->sg_args == NULL, "still held");
	dpusim_xfer_req_free(req);

	/* exactly max blocks (256) per DPU of 8 bytes: fine */
	sg_reset(&ctx, 256, 8);
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = 256 * 8;
	ok = dpusim_xfer_gather_sg(req, &gb, 256, true) == DPU_OK &&
	     req->parts[3].nr_blocks == 64 * 256 && req->parts[3].dpus[63].nr_blocks == 256;
	UNIT_CHECK("sg: max blocks per DPU accepted", ok, "refused");
	dpusim_xfer_req_free(req);

	/* max + 1 for DPU 200 only: too many, callback stopped at max + 1 */
	sg_reset(&ctx, 1, 8);
	ctx.nr_blocks[200] = 300;
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = 8;
	ok = dpusim_xfer_gather_sg(req, &gb, 256, true) == DPU_ERR_SG_TOO_MANY_BLOCKS;
	UNIT_CHECK("sg: max + 1 blocks is DPU_ERR_SG_TOO_MANY_BLOCKS", ok, "accepted");
	UNIT_CHECK("sg: the callback is not called past block max",
		   atomic_load(&calls[200]) == 257, "called %u times", atomic_load(&calls[200]));
	dpusim_xfer_req_free(req);

	/* length mismatch in rank 2 only, too many in rank 3: rank 2's error first */
	sg_reset(&ctx, 2, 16);
	ctx.short_dpu = 150;
	ctx.nr_blocks[250] = 1000;
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = 32;
	ok = dpusim_xfer_gather_sg(req, &gb, 256, true) == DPU_ERR_SG_LENGTH_MISMATCH;
	UNIT_CHECK("sg: length mismatch in one DPU of rank 2 (first error in DPU order)",
		   ok, "other result");
	UNIT_CHECK("sg: other ranks were still gathered (validate all before issuing)",
		   req->parts[0].nr_dpus == 64 && req->parts[1].nr_dpus == 64, "not gathered");
	dpusim_xfer_req_free(req);

	/* the same through the API: refused before any ioctl (fd -1 would give DRIVER) */
	sg_reset(&ctx, 2, 16);
	ctx.short_dpu = 150;
	UNIT_CHECK("sg api: length mismatch refused before any ioctl",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 32,
				    &gb, DPU_SG_XFER_DEFAULT) == DPU_ERR_SG_LENGTH_MISMATCH,
		   "other result");
	UNIT_CHECK("sg api: ASYNC length mismatch also returned at once",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 32,
				    &gb, DPU_SG_XFER_ASYNC) == DPU_ERR_SG_LENGTH_MISMATCH &&
		   dpu_sync(set) == DPU_OK, "other result");
	/* without the check, a short DPU is fine; the ioctl is attempted */
	UNIT_CHECK("sg api: DISABLE_LENGTH_CHECK accepts it (ioctl attempted)",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 32,
				    &gb, DPU_SG_XFER_DISABLE_LENGTH_CHECK) == DPU_ERR_DRIVER,
		   "other result");
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = 24;	/* 32 bytes of blocks, longer than the length */
	UNIT_CHECK("sg: longer blocks accepted without the check, bytes cut at length",
		   dpusim_xfer_gather_sg(req, &gb, 256, false) == DPU_OK &&
		   dpusim_xfer_check_limits(req) == DPU_OK && req->parts[0].bytes == 64 * 24,
		   "bytes %llu", (unsigned long long)req->parts[0].bytes);
	dpusim_xfer_req_free(req);

	UNIT_CHECK("sg api: NULL get_block refused",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 32,
				    NULL, DPU_SG_XFER_DEFAULT) == DPU_ERR_INVALID_MEMORY_TRANSFER,
		   "accepted");
	UNIT_CHECK("sg api: unknown symbol",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, "nope", 0, 32, &gb,
				    DPU_SG_XFER_DEFAULT) == DPU_ERR_UNKNOWN_SYMBOL, "accepted");
	UNIT_CHECK("sg api: unaligned offset",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 12, 32, &gb,
				    DPU_SG_XFER_DEFAULT) == DPU_ERR_INVALID_MRAM_ACCESS, "accepted");
	UNIT_CHECK("sg api: DPU_XFER_NO_RESET is not an sg flag",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 32, &gb,
				    (dpu_sg_xfer_flags_t)DPU_XFER_NO_RESET) ==
		   DPU_ERR_INVALID_MEMORY_TRANSFER, "accepted");

	/* zero-length blocks and zero blocks */
	sg_reset(&ctx, 3, 0);
	ctx.nr_blocks[5] = 0;
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = 0;
	ok = dpusim_xfer_gather_sg(req, &gb, 256, true) == DPU_OK &&
	     req->parts[0].dpus[5].nr_blocks == 0 && req->parts[0].dpus[6].nr_blocks == 3 &&
	     req->parts[0].nr_dpus == 64;
	UNIT_CHECK("sg: zero-length blocks and a DPU without blocks (length 0)", ok, "refused");
	dpusim_xfer_req_free(req);

	/* NULL args, size 0 */
	{
		get_block_t g0 = { .f = sg_null_args, .args = NULL, .args_size = 0 };

		null_args_seen = false;
		dpusim_xfer_req_new(set, "t", &props, &req);
		req->length = 0;
		UNIT_CHECK("sg: NULL args with size 0",
			   dpusim_xfer_gather_sg(req, &g0, 256, true) == DPU_OK && null_args_seen,
			   "refused");
		dpusim_xfer_req_free(req);
	}

	/* a rank subset and a DPU subset keep set-wide indices */
	sg_reset(&ctx, 1, 8);
	DPU_RANK_FOREACH(set, rank, r) {
		if (r != 2)
			continue;
		dpusim_xfer_req_new(rank, "t", &props, &req);
		req->length = 8;
		ok = dpusim_xfer_gather_sg(req, &gb, 256, true) == DPU_OK &&
		     req->nr_parts == 1 && req->parts[0].nr_dpus == 64 &&
		     req->parts[0].blocks[0].addr == 0x100000 + 128 * 4096;
		for (i = 0; i < SG_DPUS && ok; i++)
			ok = atomic_load(&calls[i]) == ((i >= 128 && i < 192) ? 2 : 0);
		UNIT_CHECK("sg: a rank subset calls get_block with indices 128..191", ok, "wrong");
		dpusim_xfer_req_free(req);
	}
	sg_reset(&ctx, 1, 8);
	DPU_FOREACH(set, dpu, i) {
		if (i != 77)
			continue;
		dpusim_xfer_req_new(dpu, "t", &props, &req);
		req->length = 8;
		ok = dpusim_xfer_gather_sg(req, &gb, 256, true) == DPU_OK &&
		     req->parts[0].nr_dpus == 1 && req->parts[0].dpus[0].dpu == 13 &&
		     req->parts[0].blocks[0].addr == 0x100000 + 77 * 4096 &&
		     atomic_load(&calls[77]) == 2 && atomic_load(&calls[76]) == 0;
		UNIT_CHECK("sg: a DPU subset calls get_block with index 77 only", ok, "wrong");
		dpusim_xfer_req_free(req);
	}
	dpu_free(set);

	/* sg not enabled */
	if (!make_set(1, 4, UINT32_MAX, NULL, &set)) {
		unit_fail("sg: make set", "failed");
		return;
	}
	UNIT_CHECK("sg api: DPU_ERR_SG_NOT_ACTIVATED without sgXferEnable",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 8, &gb,
				    DPU_SG_XFER_DEFAULT) == DPU_ERR_SG_NOT_ACTIVATED, "other result");
	dpu_free(set);

	/* a raised limit */
	if (!make_set(1, 4, UINT32_MAX, "sgXferEnable=true,sgXferMaxBlocksPerDpu=10", &set)) {
		unit_fail("sg: make set", "failed");
		return;
	}
	props = dpusim_set_props(set, NULL);
	sg_reset(&ctx, 10, 8);
	dpusim_xfer_req_new(set, "t", &props, &req);
	req->length = 80;
	UNIT_CHECK("sg: sgXferMaxBlocksPerDpu=10 allows 10",
		   dpusim_xfer_gather_sg(req, &gb, props->sg_max_blocks_per_dpu, true) == DPU_OK,
		   "refused");
	dpusim_xfer_req_free(req);
	sg_reset(&ctx, 11, 8);
	UNIT_CHECK("sg api: sgXferMaxBlocksPerDpu=10 refuses 11",
		   dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 88, &gb,
				    DPU_SG_XFER_DEFAULT) == DPU_ERR_SG_TOO_MANY_BLOCKS, "other result");
	dpu_free(set);
}

/* ------------------------------------------------------------ errno */

static void test_errno_map(void)
{
	UNIT_CHECK("errno: 0 -> DPU_OK", dpusim_xfer_errno_to_error(0) == DPU_OK, "wrong");
	UNIT_CHECK("errno: EFAULT -> DPU_ERR_INVALID_MEMORY_TRANSFER",
		   dpusim_xfer_errno_to_error(EFAULT) == DPU_ERR_INVALID_MEMORY_TRANSFER, "wrong");
	UNIT_CHECK("errno: ENOSPC -> DPU_ERR_ALLOCATION",
		   dpusim_xfer_errno_to_error(ENOSPC) == DPU_ERR_ALLOCATION, "wrong");
	UNIT_CHECK("errno: ENOMEM -> DPU_ERR_SYSTEM",
		   dpusim_xfer_errno_to_error(ENOMEM) == DPU_ERR_SYSTEM, "wrong");
	UNIT_CHECK("errno: E2BIG -> DPU_ERR_INVALID_MEMORY_TRANSFER",
		   dpusim_xfer_errno_to_error(E2BIG) == DPU_ERR_INVALID_MEMORY_TRANSFER, "wrong");
	UNIT_CHECK("errno: EOVERFLOW -> DPU_ERR_INVALID_MRAM_ACCESS",
		   dpusim_xfer_errno_to_error(EOVERFLOW) == DPU_ERR_INVALID_MRAM_ACCESS, "wrong");
	UNIT_CHECK("errno: EINVAL -> DPU_ERR_DRIVER",
		   dpusim_xfer_errno_to_error(EINVAL) == DPU_ERR_DRIVER, "wrong");
	UNIT_CHECK("errno: ENODEV -> DPU_ERR_DRIVER",
		   dpusim_xfer_errno_to_error(ENODEV) == DPU_ERR_DRIVER, "wrong");
}

/* ------------------------------------------------------------ async */

static void test_async(void)
{
	struct dpu_set_t set, dpu;
	uint64_t buf[2];
	uint32_t i;

	if (!make_set(2, 4, UINT32_MAX, NULL, &set)) {
		unit_fail("async: make set", "failed");
		return;
	}
	UNIT_CHECK("async: dpu_sync with nothing queued", dpu_sync(set) == DPU_OK, "failed");
	/* dpusim.ko queues: the ioctl's error (fd -1) comes back at once */
	UNIT_CHECK("async: broadcast refused at once",
		   dpu_broadcast_to(set, DPU_MRAM_HEAP_POINTER_NAME, 0, buf, 16,
				    DPU_XFER_ASYNC) == DPU_ERR_DRIVER, "other result");
	UNIT_CHECK("async: validation errors returned at once",
		   dpu_broadcast_to(set, "nope", 0, buf, 16, DPU_XFER_ASYNC) ==
		   DPU_ERR_UNKNOWN_SYMBOL, "other result");
	UNIT_CHECK("async: nothing queued, dpu_sync has no error", dpu_sync(set) == DPU_OK,
		   "other result");
	/* ASYNC push_xfer that fails keeps the prepared buffers (as UPMEM) */
	DPU_FOREACH(set, dpu, i)
		dpu_prepare_xfer(dpu, buf);
	UNIT_CHECK("async: failed push_xfer keeps the buffers",
		   dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 16,
				 DPU_XFER_ASYNC) == DPU_ERR_DRIVER &&
		   set.list.ranks[1]->dpus[3].prepared_buffer == buf, "cleared");
	/* dpu_free after ASYNC calls syncs first (valgrind: nothing leaks) */
	for (i = 0; i < 20; i++)
		dpu_broadcast_to(set, DPU_MRAM_HEAP_POINTER_NAME, 0, buf, 16, DPU_XFER_ASYNC);
	UNIT_CHECK("async: dpu_free with queued work", dpu_free(set) == DPU_OK, "failed");
}

/* ------------------------------------------------------------ dpu_load */

static void test_load(void)
{
	char dir[] = "/tmp/dpusim-test-xfer-XXXXXX", obj[128], cmd[512];
	struct dpu_program_t *prog = NULL, *prog2 = NULL;
	struct dpusim_set_props *props;
	struct dpu_symbol_t sym;
	struct dpu_set_t set, dpu;
	uint64_t off;
	uint32_t i;

	if (!make_set(1, 4, UINT32_MAX, NULL, &set)) {
		unit_fail("load: make set", "failed");
		return;
	}
	props = dpusim_set_props(set, NULL);
	UNIT_CHECK("load: missing file is DPU_ERR_ELF_NO_SUCH_FILE",
		   dpu_load(set, "/nonexistent/x.o", &prog) == DPU_ERR_ELF_NO_SUCH_FILE && !prog,
		   "other result");
	UNIT_CHECK("load: a C source is DPU_ERR_ELF_INVALID_FILE",
		   dpu_load(set, "tests/unit/fixtures/mram_symbols.c", &prog) ==
		   DPU_ERR_ELF_INVALID_FILE, "other result");
	UNIT_CHECK("get_symbol: NULL program", dpu_get_symbol(NULL, "x", &sym) ==
		   DPU_ERR_NO_PROGRAM_LOADED, "other result");

	if (!mkdtemp(dir)) {
		unit_fail("load: mkdtemp", "%s", strerror(errno));
		dpu_free(set);
		return;
	}
	snprintf(obj, sizeof(obj), "%s/mram_symbols.o", dir);
	snprintf(cmd, sizeof(cmd),
		 "cc -c -O0 -fno-common -fno-toplevel-reorder -fno-data-sections -w "
		 "tests/unit/fixtures/mram_symbols.c -o %s", obj);
	if (system(cmd) != 0) {
		unit_fail("load: cc -c the fixture", "failed (run from the repository root)");
		dpu_free(set);
		rmdir(dir);
		return;
	}
	UNIT_CHECK("load: host object with .mram symbols",
		   dpu_load(set, obj, &prog) == DPU_OK && prog && props->program == prog,
		   "failed");
	UNIT_CHECK("get_symbol: mram_counter at 0x08000000 + 8192",
		   dpu_get_symbol(prog, "mram_counter", &sym) == DPU_OK &&
		   sym.address == 0x08000000 + 8192 && sym.size == 4,
		   "address 0x%x size %u", sym.address, sym.size);
	UNIT_CHECK("get_symbol: heap pointer is all of MRAM at 0x08000000",
		   dpu_get_symbol(prog, DPU_MRAM_HEAP_POINTER_NAME, &sym) == DPU_OK &&
		   sym.address == 0x08000000 && sym.size == MRAM_SIZE, "wrong");
	UNIT_CHECK("get_symbol: unknown symbol",
		   dpu_get_symbol(prog, "host_data", &sym) == DPU_ERR_UNKNOWN_SYMBOL, "found");
	UNIT_CHECK("resolve: loaded symbol mram_scratch + 8",
		   dpusim_xfer_resolve(props, "t", "mram_scratch", 8, 88, &off) == DPU_OK &&
		   off == 8264, "off %llu", (unsigned long long)off);
	UNIT_CHECK("resolve: loaded symbol, past its 100 bytes",
		   dpusim_xfer_resolve(props, "t", "mram_scratch", 0, 104, &off) ==
		   DPU_ERR_INVALID_MRAM_ACCESS, "accepted");
	/* loading again (through a DPU of the set) replaces the program */
	DPU_FOREACH(set, dpu, i)
		if (i == 2)
			UNIT_CHECK("load: again through one DPU replaces the set's program",
				   dpu_load(dpu, obj, &prog2) == DPU_OK && props->program == prog2 &&
				   prog2 != prog, "failed");
	UNIT_CHECK("load: program out-param may be NULL", dpu_load(set, obj, NULL) == DPU_OK,
		   "failed");
	unlink(obj);
	rmdir(dir);
	dpu_free(set);
}

int main(void)
{
	test_resolve();
	test_targets();
	test_gather_buffers();
	test_sg();
	test_errno_map();
	test_async();
	test_load();
	return unit_done();
}
