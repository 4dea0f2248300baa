// SPDX-License-Identifier: MIT
/*
 * libdpusim: the transfer engine (steps described in xfer.h). The public
 * functions built on it are in xfer_api.c, the ASYNC flags in async.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "program.h"
#include "xfer.h"

/*
 * Valgrind cannot know that DPUSIM_IOCTL_XFER writes the host blocks of a
 * transfer from the DPUs: tell it, so that host programs run clean under
 * memcheck. The client request is a few no-op instructions otherwise.
 */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define DPUSIM_HAVE_VALGRIND 1
#endif
#endif

/* ------------------------------------------------------------ requests */

void dpusim_xfer_req_free(struct dpusim_xfer_req *req)
{
	uint32_t i;

	if (!req)
		return;
	for (i = 0; i < req->nr_parts; i++) {
		free(req->parts[i].dpus);
		free(req->parts[i].blocks);
		free(req->parts[i].call_end);
	}
	free(req->parts);
	free(req->sg_args);
	free(req);
}

dpu_error_t dpusim_xfer_req_new(struct dpu_set_t set, const char *fn,
				struct dpusim_set_props **propsp,
				struct dpusim_xfer_req **out)
{
	struct dpusim_set_props *props;
	struct dpusim_xfer_req *req;
	uint32_t i, n;

	*out = NULL;
	props = dpusim_set_props(set, fn);
	if (!props)
		return DPU_ERR_INVALID_DPU_SET;
	if (set.kind == DPU_SET_DPU) {
		if (!set.dpu->enabled) {
			dpusim_log("%s: DPU %u of rank%u is disabled", fn,
				   set.dpu->index_in_rank, set.dpu->rank->index);
			return DPU_ERR_DPU_DISABLED;
		}
		n = 1;
	} else {
		for (i = 0; i < set.list.nr_ranks; i++) {
			if (!set.list.ranks[i] ||
			    set.list.ranks[i]->props != props) {
				dpusim_log("%s: invalid dpu set (rank %u does not belong to the set of the first)",
					   fn, i);
				return DPU_ERR_INVALID_DPU_SET;
			}
		}
		n = set.list.nr_ranks;
	}

	req = calloc(1, sizeof(*req));
	if (req)
		req->parts = calloc(n, sizeof(*req->parts));
	if (!req || !req->parts) {
		free(req);
		dpusim_log("%s: out of memory", fn);
		return DPU_ERR_SYSTEM;
	}
	req->fn = fn;
	req->nr_parts = n;
	for (i = 0; i < n; i++) {
		struct dpusim_xfer_part *p = &req->parts[i];

		p->req = req;
		if (set.kind == DPU_SET_DPU) {
			p->rank = set.dpu->rank;
			p->first = set.dpu->index_in_rank;
			p->count = 1;
		} else {
			p->rank = set.list.ranks[i];
			p->first = 0;
			p->count = p->rank->nr_enabled;
		}
		p->dpus = calloc(p->count ? p->count : 1, sizeof(*p->dpus));
		if (!p->dpus) {
			dpusim_xfer_req_free(req);
			dpusim_log("%s: out of memory", fn);
			return DPU_ERR_SYSTEM;
		}
	}
	*propsp = props;
	*out = req;
	return DPU_OK;
}

/* ------------------------------------------------------------ symbols */

dpu_error_t dpusim_xfer_check_range(const char *fn, const char *what, bool wram,
				    uint64_t base, uint64_t size,
				    uint32_t symbol_offset, size_t length,
				    uint64_t *offset)
{
	unsigned int align = wram ? DPUSIM_WRAM_ALIGN : DPUSIM_MRAM_ALIGN;
	dpu_error_t err = wram ? DPU_ERR_INVALID_WRAM_ACCESS :
				 DPU_ERR_INVALID_MRAM_ACCESS;
	const char *mem = wram ? "WRAM" : "MRAM";
	uint64_t off;

	if (symbol_offset % align || length % align) {
		dpusim_log("%s: %s symbol '%s': offset %" PRIu32 " and length %zu must be multiples of %u",
			   fn, mem, what, symbol_offset, length, align);
		return err;
	}
	if (symbol_offset > size || length > size - symbol_offset) {
		dpusim_log("%s: %s symbol '%s' has %" PRIu64 " bytes: offset %" PRIu32 " + length %zu is outside it",
			   fn, mem, what, size, symbol_offset, length);
		return err;
	}
	off = base + symbol_offset;
	if (off % align) {
		dpusim_log("%s: symbol '%s' is at %s offset %" PRIu64 ", not a multiple of %u",
			   fn, what, mem, base, align);
		return err;
	}
	*offset = off;
	return DPU_OK;
}

dpu_error_t dpusim_xfer_resolve_mem(struct dpusim_set_props *props,
				    const char *fn, const char *symbol_name,
				    uint32_t symbol_offset, size_t length,
				    uint64_t *offset, bool *wram)
{
	const struct dpusim_symbol *sym;
	uint64_t base = 0, size = 0;
	bool found = false, have_program, in_wram = false;

	if (!symbol_name) {
		dpusim_log("%s: symbol name is NULL", fn);
		return DPU_ERR_UNKNOWN_SYMBOL;
	}
	pthread_mutex_lock(&props->lock);
	have_program = props->program != NULL;
	sym = dpusim_program_find(props->program, symbol_name);
	if (sym) {
		base = sym->offset;
		size = sym->size;
		in_wram = sym->mem == DPUSIM_SYM_WRAM;
		found = true;
	}
	pthread_mutex_unlock(&props->lock);
	if (!found && strcmp(symbol_name, DPU_MRAM_HEAP_POINTER_NAME) == 0) {
		base = 0;
		size = props->ranks[0]->mram_size;
		found = true;
	}
	if (!found) {
		dpusim_log("%s: unknown symbol '%s' (%s)", fn, symbol_name,
			   have_program ? "not an MRAM or WRAM symbol of the loaded program" :
			   "no program loaded; only " DPU_MRAM_HEAP_POINTER_NAME
			   " exists without one");
		return DPU_ERR_UNKNOWN_SYMBOL;
	}
	*wram = in_wram;
	return dpusim_xfer_check_range(fn, symbol_name, in_wram, base, size,
				       symbol_offset, length, offset);
}

dpu_error_t dpusim_xfer_resolve(struct dpusim_set_props *props,
				const char *fn, const char *symbol_name,
				uint32_t symbol_offset, size_t length,
				uint64_t *mram_offset)
{
	bool wram;
	dpu_error_t ret;

	ret = dpusim_xfer_resolve_mem(props, fn, symbol_name, symbol_offset,
				      length, mram_offset, &wram);
	if (ret == DPU_OK && wram) {
		dpusim_log("%s: '%s' is a WRAM symbol", fn, symbol_name);
		return DPU_ERR_INVALID_MRAM_ACCESS;
	}
	return ret;
}

/* ------------------------------------------------------------ threads */

/*
 * Run start(item) for n items of size stride: item 0 on the calling
 * thread, the others on threads of their own (which block all signals, so
 * they never see the caller's handlers). An item whose thread cannot be
 * created runs on the calling thread afterwards.
 */
static void run_parallel(void *items, size_t stride, uint32_t n,
			 void *(*start)(void *))
{
	pthread_t *tids;
	bool *started;
	sigset_t all, old;
	uint32_t i;

	if (n <= 1) {
		if (n)
			start(items);
		return;
	}
	tids = calloc(n, sizeof(*tids));
	started = calloc(n, sizeof(*started));
	if (!tids || !started) {
		free(tids);
		free(started);
		for (i = 0; i < n; i++)
			start((char *)items + i * stride);
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 1; i < n; i++)
		started[i] = pthread_create(&tids[i], NULL, start,
					    (char *)items + i * stride) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	start(items);
	for (i = 1; i < n; i++) {
		if (started[i])
			pthread_join(tids[i], NULL);
		else
			start((char *)items + i * stride);
	}
	free(tids);
	free(started);
}

/* ------------------------------------------------------------ gathering */

static void part_fail(struct dpusim_xfer_part *p, dpu_error_t err,
		      const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void part_fail(struct dpusim_xfer_part *p, dpu_error_t err,
		      const char *fmt, ...)
{
	va_list ap;

	p->err = err;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
}

/* The first failed part (DPU_FOREACH order): log it, return its error. */
static dpu_error_t first_error(struct dpusim_xfer_req *req)
{
	uint32_t i;

	for (i = 0; i < req->nr_parts; i++) {
		if (req->parts[i].err != DPU_OK) {
			dpusim_log("%s: %s", req->fn, req->parts[i].msg);
			return req->parts[i].err;
		}
	}
	return DPU_OK;
}

static bool part_add_block(struct dpusim_xfer_part *p, uint64_t addr,
			   uint64_t length)
{
	if (p->nr_blocks == p->cap_blocks) {
		/* a rank's blocks may fill several calls (step 4) */
		uint32_t cap = p->cap_blocks ? p->cap_blocks * 2 : 16;
		struct dpusim_block *nb;

		if (cap < p->cap_blocks)
			cap = UINT32_MAX;
		if (cap <= p->nr_blocks) {
			part_fail(p, DPU_ERR_INVALID_MEMORY_TRANSFER,
				  "rank%u: more than %u blocks in one rank",
				  p->rank->index, UINT32_MAX - 1);
			return false;
		}
		nb = realloc(p->blocks, (size_t)cap * sizeof(*nb));
		if (!nb) {
			part_fail(p, DPU_ERR_SYSTEM, "rank%u: out of memory for %u blocks",
				  p->rank->index, cap);
			return false;
		}
		p->blocks = nb;
		p->cap_blocks = cap;
	}
	p->blocks[p->nr_blocks].addr = addr;
	p->blocks[p->nr_blocks].length = length;
	p->nr_blocks++;
	return true;
}

static void part_gather_one(struct dpusim_xfer_part *p, const void *buf,
			    bool prepared)
{
	uint32_t k;

	for (k = 0; k < p->count; k++) {
		struct dpu_t *dpu = &p->rank->dpus[p->first + k];
		const void *b = prepared ? dpu->prepared_buffer : buf;

		if (!dpu->enabled || (prepared && !b))
			continue;
		if (!part_add_block(p, (uint64_t)(uintptr_t)b, p->req->length))
			return;
		p->dpus[p->nr_dpus].dpu = dpu->index_in_rank;
		p->dpus[p->nr_dpus].nr_blocks = 1;
		p->nr_dpus++;
	}
}

dpu_error_t dpusim_xfer_gather_buffer(struct dpusim_xfer_req *req,
				      const void *buf)
{
	uint32_t i;

	for (i = 0; i < req->nr_parts; i++)
		part_gather_one(&req->parts[i], buf, false);
	return first_error(req);
}

dpu_error_t dpusim_xfer_gather_prepared(struct dpusim_xfer_req *req)
{
	uint32_t i;

	for (i = 0; i < req->nr_parts; i++)
		part_gather_one(&req->parts[i], NULL, true);
	return first_error(req);
}

/* Thread body: the block lists of one rank's DPUs. */
static void *part_gather_sg(void *arg)
{
	struct dpusim_xfer_part *p = arg;
	struct dpusim_xfer_req *req = p->req;
	uint32_t k, b;

	for (k = 0; k < p->count; k++) {
		struct dpu_t *dpu = &p->rank->dpus[p->first + k];
		uint32_t first_block = p->nr_blocks;
		uint64_t sum = 0;

		if (!dpu->enabled)
			continue;
		for (b = 0;; b++) {
			struct sg_block_info info = { NULL, 0 };

			if (!req->sg_f(&info, dpu->index_in_set, b, req->sg_args))
				break;
			if (b == req->sg_max_blocks) {
				part_fail(p, DPU_ERR_SG_TOO_MANY_BLOCKS,
					  "DPU %u (rank%u DPU %u): get_block returned more than the %u blocks allowed per DPU (profile sgXferMaxBlocksPerDpu; the default is the number of DPUs in the set)",
					  dpu->index_in_set, p->rank->index,
					  dpu->index_in_rank, req->sg_max_blocks);
				return NULL;
			}
			if (!part_add_block(p, (uint64_t)(uintptr_t)info.addr,
					    info.length))
				return NULL;
			sum += info.length;
		}
		if (!b && req->sg_skip_empty)
			continue;
		if (req->sg_length_check && sum != req->length) {
			part_fail(p, DPU_ERR_SG_LENGTH_MISMATCH,
				  "DPU %u (rank%u DPU %u): its %u blocks hold %" PRIu64 " bytes, the transfer length is %" PRIu64 " (flag DPU_SG_XFER_DISABLE_LENGTH_CHECK allows a difference); nothing was transferred",
				  dpu->index_in_set, p->rank->index,
				  dpu->index_in_rank, p->nr_blocks - first_block,
				  sum, req->length);
			return NULL;
		}
		p->dpus[p->nr_dpus].dpu = dpu->index_in_rank;
		p->dpus[p->nr_dpus].nr_blocks = p->nr_blocks - first_block;
		p->nr_dpus++;
	}
	return NULL;
}

dpu_error_t dpusim_xfer_gather_sg(struct dpusim_xfer_req *req,
				  const get_block_t *gb, uint32_t max_blocks,
				  bool length_check)
{
	if (!gb || !gb->f) {
		dpusim_log("%s: get_block_info or its function f is NULL",
			   req->fn);
		return DPU_ERR_INVALID_MEMORY_TRANSFER;
	}
	/* The callback sees a copy, made once before the first call. */
	free(req->sg_args);
	req->sg_args = NULL;
	if (gb->args && gb->args_size) {
		req->sg_args = malloc(gb->args_size);
		if (!req->sg_args) {
			dpusim_log("%s: out of memory copying %zu bytes of get_block arguments",
				   req->fn, gb->args_size);
			return DPU_ERR_SYSTEM;
		}
		memcpy(req->sg_args, gb->args, gb->args_size);
	}
	req->sg_f = gb->f;
	req->sg_max_blocks = max_blocks;
	req->sg_length_check = length_check;

	run_parallel(req->parts, sizeof(*req->parts), req->nr_parts,
		     part_gather_sg);

	/* Only gathering needs the arguments. */
	free(req->sg_args);
	req->sg_args = NULL;
	return first_error(req);
}

/* ------------------------------------------------------------ limits */

/* What one DPU's share adds to a call */
struct xfer_share {
	uint64_t bytes, pad, pages, blocks;
};

static void dpu_share(const struct dpusim_xfer_req *req, const struct dpusim_xfer_dpu *dpu,
		      const struct dpusim_block *b, unsigned int shift, struct xfer_share *sh)
{
	uint64_t sum = 0;
	uint32_t k;

	sh->pages = 0;
	sh->blocks = dpu->nr_blocks;
	for (k = 0; k < dpu->nr_blocks; k++, b++) {
		sum += b->length; /* < 2^32 blocks of < 2^32 */
		if (!b->length)
			continue;
		/* its pages, whole (the kernel pins at most these) */
		sh->pages += ((b->addr + b->length - 1) >> shift) - (b->addr >> shift) + 1;
	}
	sh->bytes = sum < req->length ? sum : req->length;
	/* to the DPUs, the rest of length is zero padding */
	sh->pad = !(req->kflags & DPUSIM_XFER_FROM_DPU) && sum < req->length ?
		  req->length - sum : 0;
}

/* Does @add still fit in a call holding @cur? */
static bool share_fits(const struct xfer_share *cur, const struct xfer_share *add)
{
	return cur->bytes + add->bytes <= DPUSIM_XFER_MAX_BYTES &&
	       cur->pad + add->pad <= DPUSIM_XFER_MAX_PAD_BYTES &&
	       cur->pages + add->pages <= DPUSIM_XFER_MAX_PAGES &&
	       cur->blocks + add->blocks <= DPUSIM_XFER_MAX_BLOCKS;
}

static dpu_error_t part_split(struct dpusim_xfer_req *req, struct dpusim_xfer_part *p,
			      unsigned int shift)
{
	static const struct xfer_share none;
	const struct dpusim_block *b = p->blocks;
	struct xfer_share cur = none, sh;
	uint32_t d, n = 0;

	free(p->call_end);
	p->call_end = NULL;
	p->nr_calls = 0;
	p->bytes = 0;
	if (!p->nr_dpus)
		return DPU_OK;
	/* at most a call per DPU */
	p->call_end = malloc(p->nr_dpus * sizeof(*p->call_end));
	if (!p->call_end) {
		dpusim_log("%s: rank%u: out of memory", req->fn, p->rank->index);
		return DPU_ERR_SYSTEM;
	}
	for (d = 0; d < p->nr_dpus; b += p->dpus[d].nr_blocks, d++) {
		dpu_share(req, &p->dpus[d], b, shift, &sh);
		p->bytes += sh.bytes;
		if (!share_fits(&none, &sh)) {
			dpusim_log("%s: rank%u DPU %u alone takes %" PRIu64 " bytes, %" PRIu64 " of zero padding, %" PRIu64 " blocks and %" PRIu64 " pages: more than one DPUSIM_IOCTL_XFER takes (%llu bytes, %llu of padding, %u blocks, %u pages), and a DPU's share is never split",
				   req->fn, p->rank->index, p->dpus[d].dpu, sh.bytes, sh.pad,
				   sh.blocks, sh.pages,
				   (unsigned long long)DPUSIM_XFER_MAX_BYTES,
				   (unsigned long long)DPUSIM_XFER_MAX_PAD_BYTES,
				   DPUSIM_XFER_MAX_BLOCKS, DPUSIM_XFER_MAX_PAGES);
			return DPU_ERR_INVALID_MEMORY_TRANSFER;
		}
		if (d && !share_fits(&cur, &sh)) {
			p->call_end[n++] = d;
			cur = none;
		}
		cur.bytes += sh.bytes;
		cur.pad += sh.pad;
		cur.pages += sh.pages;
		cur.blocks += sh.blocks;
	}
	p->call_end[n++] = p->nr_dpus;
	p->nr_calls = n;
	return DPU_OK;
}

dpu_error_t dpusim_xfer_check_limits(struct dpusim_xfer_req *req)
{
	long ps = sysconf(_SC_PAGESIZE);
	/* a page size is a power of two */
	unsigned int shift = ps > 0 ? (unsigned int)__builtin_ctzl((unsigned long)ps) : 12;
	dpu_error_t ret;
	uint32_t i;

	for (i = 0; i < req->nr_parts; i++) {
		ret = part_split(req, &req->parts[i], shift);
		if (ret != DPU_OK)
			return ret;
	}
	return DPU_OK;
}

/* ------------------------------------------------------------ issuing */

dpu_error_t dpusim_xfer_errno_to_error(int err)
{
	switch (err) {
	case 0:
		return DPU_OK;
	case EFAULT:	/* a host block is not mapped (or not writable) */
	case E2BIG:	/* over the kernel's per-call limits */
		return DPU_ERR_INVALID_MEMORY_TRANSFER;
	case ENOSPC:	/* the simulated-memory budget */
		return DPU_ERR_ALLOCATION;
	case ENOMEM:	/* the kernel's own allocations */
		return DPU_ERR_SYSTEM;
	case EOVERFLOW:	/* offset + length past the MRAM */
		return DPU_ERR_INVALID_MRAM_ACCESS;
	case EBUSY:	/* a DPU of the transfer is running */
		return DPU_ERR_DPU_ALREADY_RUNNING;
	default:	/* EINVAL (library and module disagree), ENODEV, ... */
		return DPU_ERR_DRIVER;
	}
}

static const char *errno_hint(int err)
{
	switch (err) {
	case EFAULT:
		return "a host block address is not mapped or not writable";
	case ENOSPC:
		return "the simulated-memory budget (/sys/module/dpusim/parameters/mram_budget) is exhausted";
	case ENOMEM:
		return "the kernel is out of memory, or an asynchronous transfer would pin more than RLIMIT_MEMLOCK (ulimit -l)";
	case ETIMEDOUT:
		return "queued asynchronous transfers of the rank did not finish in time";
	case E2BIG:
		return "over the limits of one transfer";
	case EOVERFLOW:
		return "offset + length is past the end of the memory";
	case EBUSY:
		return "a DPU of the transfer is running a program (dpu_launch): wait for it (dpu_sync) first";
	case EINVAL:
		return "the module refused the descriptor (libdpusim and dpusim.ko do not match?)";
	case ENODEV:
		return "the rank device is gone (module unloaded?)";
	default:
		return "unexpected error from dpusim.ko";
	}
}

/*
 * After a transfer from the DPUs: the bytes written to the host blocks
 * of DPUs @d0 .. @d1 - 1 (from block @b0).
 */
static void mark_defined(const struct dpusim_xfer_part *p, uint32_t d0, uint32_t d1,
			 uint32_t b0)
{
#ifdef DPUSIM_HAVE_VALGRIND
	const struct dpusim_block *b = p->blocks + b0;
	uint32_t d, k;

	if (!RUNNING_ON_VALGRIND)
		return;
	for (d = d0; d < d1; d++) {
		uint64_t left = p->req->length;

		for (k = 0; k < p->dpus[d].nr_blocks; k++, b++) {
			uint64_t n = b->length < left ? b->length : left;

			if (n)
				VALGRIND_MAKE_MEM_DEFINED((void *)(uintptr_t)b->addr, n);
			left -= n;
		}
	}
#else
	(void)p;
	(void)d0;
	(void)d1;
	(void)b0;
#endif
}

/* Thread body: the calls of one rank, in order, up to the first that fails. */
static void *part_issue(void *arg)
{
	struct dpusim_xfer_part *p = arg;
	struct dpusim_xfer_req *req = p->req;
	uint32_t c, d0 = 0, d, b0 = 0, nb;
	struct dpusim_xfer x;
	char eb[128], done[96];
	int r;

	p->calls_done = 0;
	for (c = 0; c < p->nr_calls; c++, d0 = p->call_end[c - 1], b0 += nb) {
		for (nb = 0, d = d0; d < p->call_end[c]; d++)
			nb += p->dpus[d].nr_blocks;
		memset(&x, 0, sizeof(x));
		x.size = sizeof(x);
		x.flags = req->kflags;
		x.offset = req->offset;
		x.length = req->length;
		x.nr_dpus = p->call_end[c] - d0;
		x.nr_blocks = nb;
		x.dpus = (uint64_t)(uintptr_t)(p->dpus + d0);
		x.blocks = (uint64_t)(uintptr_t)(p->blocks + b0);
		/* A failed call changes nothing, so an interrupted one is retried. */
		do {
			r = ioctl(p->rank->fd, DPUSIM_IOCTL_XFER, &x);
		} while (r < 0 && errno == EINTR);
		if (r < 0)
			break;
		if (req->kflags & DPUSIM_XFER_FROM_DPU)
			mark_defined(p, d0, p->call_end[c], b0);
		p->calls_done++;
	}
	if (c == p->nr_calls)
		return NULL;
	p->sys_errno = errno;
	if (!c)
		snprintf(done, sizeof(done), "this rank is unchanged");
	else
		snprintf(done, sizeof(done),
			 "its first %u of %u DPUs are done (call %u of %u), the others unchanged",
			 d0, p->nr_dpus, c + 1, p->nr_calls);
	part_fail(p, dpusim_xfer_errno_to_error(p->sys_errno),
		  "rank%u: DPUSIM_IOCTL_XFER (%s, %u DPUs, %u blocks, %s offset %" PRIu64 ", length %" PRIu64 "): %s: %s; %s",
		  p->rank->index,
		  req->kflags & DPUSIM_XFER_FROM_DPU ? "from DPU" : "to DPU",
		  x.nr_dpus, x.nr_blocks,
		  req->kflags & DPUSIM_XFER_WRAM ? "WRAM" : "MRAM",
		  req->offset, req->length,
		  dpusim_strerror(p->sys_errno, eb, sizeof(eb)),
		  errno_hint(p->sys_errno), done);
	return NULL;
}

dpu_error_t dpusim_xfer_issue(struct dpusim_xfer_req *req)
{
	dpu_error_t ret = DPU_OK;
	uint32_t i, done = 0;

	for (i = 0; i < req->nr_parts; i++) {
		req->parts[i].err = DPU_OK;
		req->parts[i].sys_errno = 0;
	}
	run_parallel(req->parts, sizeof(*req->parts), req->nr_parts,
		     part_issue);
	/* Report every failed rank (part_issue says how far it got). */
	for (i = 0; i < req->nr_parts; i++) {
		if (req->parts[i].err == DPU_OK) {
			done += req->parts[i].nr_dpus != 0;
			continue;
		}
		dpusim_log("%s: %s", req->fn, req->parts[i].msg);
		if (ret == DPU_OK)
			ret = req->parts[i].err;
	}
	if (ret != DPU_OK && done)
		dpusim_log("%s: the transfer did complete on the other %u rank%s of the set",
			   req->fn, done, done == 1 ? "" : "s");
	return ret;
}
