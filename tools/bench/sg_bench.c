// SPDX-License-Identifier: MIT
/*
 * sg_bench - scatter/gather transfer figures of shared/design/performance.md.
 *
 * Every figure is a ratio against a baseline that moves the same bytes in
 * the same guest, in the same run; each time is the median of --reps
 * repetitions, the transfer and its baseline alternating. All memory is
 * touched before anything is timed, and one untimed warm-up of each side
 * runs first (it also allocates the MRAM pages).
 *
 *   gather    64 DPUs (one rank), 1 MiB per DPU in blocks of 4 KiB, 64 KiB,
 *             1 MiB; block k of DPU d sits at host offset (k * 64 + d) * B,
 *             so no DPU's blocks are contiguous. dpu_push_sg_xfer(TO_DPU)
 *             vs memcpy of the same blocks into a contiguous image
 *             (ratio = memcpy / xfer, target >= 0.8)
 *   scatter   the same, FROM_DPU, vs memcpy back to the blocks (>= 0.8)
 *   small     1024 blocks of 64 .. 512 B per DPU, both directions, vs a
 *             memcpy loop over the same blocks (>= 0.5), ns per block
 *   pvw       the gather blocks copied with process_vm_writev (same local
 *             iovecs, remote = the contiguous image of this process)
 *             (ratio = process_vm_writev / xfer, target >= 1.0)
 *   ioctls    /sys/class/dpusim/rank<N>/xfer_ioctls around every timed
 *             dpu_push_sg_xfer, and around one call on a set of all ranks:
 *             exactly 1 per rank per call; and around one dpu_push_xfer
 *             of more than DPUSIM_XFER_MAX_BYTES on one rank (20 MiB from
 *             each DPU's sparse MRAM into one host buffer), which the
 *             library splits: exactly the fewest calls the limit allows
 *   cacheline the seed's remark: 1024 partitions of 8 / 24 B per DPU, the
 *             k-th partitions of all 64 DPUs adjacent on the host, scattered
 *             FROM_DPU in the regular order vs the offset-rotated order
 *             (ratio = regular / rotated; no target, > 1 means the
 *             rotation helps)
 *   raw       "kernel only" rows: the same gather/scatter/small transfers
 *             through a raw DPUSIM_IOCTL_XFER on a rank opened directly
 *             (no library), lists built outside the timing
 *
 * The memcpy baselines are glibc's memcpy; tools/bench/run runs this with
 * GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=2147483647 (recorded in
 * the output) because under -cpu max glibc would copy 16 .. 256 KiB blocks
 * with `rep movsb`, which TCG emulates ~50x slower than its vector loop.
 *
 * usage: sg_bench [--cpu-model NAME] [--json FILE] [--reps N] [--quick]
 *                 [--no-raw] [--raw-only]
 * The CPU model is only a label (the guest cannot see QEMU's -cpu name);
 * default $DPUSIM_BENCH_CPU, else "unknown".
 * Exit status: 0 when every transfer moved the right bytes and made one
 * ioctl per rank (targets missed are reported, not failures), 1 otherwise,
 * 2 on bad usage.
 */
#include <dpu.h>
#include <uapi/dpusim.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define NR_DPUS		64
#define KIB		((uint64_t)1024)
#define MIB		((uint64_t)1024 * 1024)
#define MAX_BLOCKS_PER_DPU 1024
#define SYSFS_CLASS	"/sys/class/dpusim"

static unsigned int reps = 7;
static bool quick;
static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sg_bench: FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	failures++;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sg_bench: error: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

#define CHECK_DPU(call)                                                     \
	do {                                                                \
		dpu_error_t _e = (call);                                    \
		if (_e != DPU_OK) {                                         \
			const char *_s = dpu_error_to_string(_e);           \
			die("%s:%d: %s: %s", __FILE__, __LINE__, #call,     \
			    _s ? _s : "?");                                 \
		}                                                           \
	} while (0)

static void *big_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu bytes: %s", bytes, strerror(errno));
	return p;
}

/* Fill with a position-dependent pattern: faults every page in. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint64_t *q = (uint64_t *)p;

	for (size_t i = 0; i < n / 8; i++)
		q[i] = (i * 0x9e3779b97f4a7c15ULL) ^ seed;
}

static uint64_t checksum(const uint8_t *p, size_t n)
{
	const uint64_t *q = (const uint64_t *)p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n / 8; i++)
		h = (h ^ q[i]) * 0x100000001b3ULL;
	return h;
}

/* ------------------------------------------------------------ sysfs */

static bool read_sysfs_u64(unsigned int rank, const char *attr, uint64_t *v)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), SYSFS_CLASS "/rank%u/%s", rank, attr);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok;
}

#define MAX_RANKS 64

/* The ranks this process owns (owner_pid), ascending; returns the count. */
static unsigned int owned_ranks(unsigned int *idx)
{
	unsigned int n = 0;
	uint64_t pid;

	for (unsigned int r = 0; r < MAX_RANKS; r++)
		if (read_sysfs_u64(r, "owner_pid", &pid) && pid == (uint64_t)getpid())
			idx[n++] = r;
	return n;
}

static void read_ioctls(const unsigned int *idx, unsigned int n, uint64_t *v)
{
	for (unsigned int i = 0; i < n; i++)
		if (!read_sysfs_u64(idx[i], "xfer_ioctls", &v[i]))
			die("cannot read %s/rank%u/xfer_ioctls", SYSFS_CLASS, idx[i]);
}

/* ------------------------------------------------------------ patterns */

/*
 * Blocks of a transfer: block k of DPU d is at host + (k' * nr_dpus + d) *
 * bsz, k' = (k + rot[d]) % nblk (rot NULL: k' = k); every block is bsz
 * bytes, and the DPU's memory image is the concatenation of its blocks.
 */
struct pattern {
	uint8_t *host;
	uint32_t nr_dpus;
	uint32_t nblk;
	uint32_t bsz;
	const uint32_t *rot;
};

static inline uint8_t *pat_addr(const struct pattern *p, uint32_t d, uint32_t k)
{
	if (p->rot)
		k = (k + p->rot[d]) % p->nblk;
	return p->host + ((size_t)k * p->nr_dpus + d) * p->bsz;
}

static inline size_t pat_per_dpu(const struct pattern *p)
{
	return (size_t)p->nblk * p->bsz;
}

static bool get_block(struct sg_block_info *out, uint32_t dpu_index,
		      uint32_t block_index, void *args)
{
	const struct pattern *p = args;

	if (block_index >= p->nblk)
		return false;
	out->addr = pat_addr(p, dpu_index, block_index);
	out->length = p->bsz;
	return true;
}

/* memcpy baselines between the blocks and a contiguous image. */
static void memcpy_gather(const struct pattern *p, uint8_t *image)
{
	size_t per = pat_per_dpu(p);

	for (uint32_t d = 0; d < p->nr_dpus; d++)
		for (uint32_t k = 0; k < p->nblk; k++)
			memcpy(image + d * per + (size_t)k * p->bsz,
			       pat_addr(p, d, k), p->bsz);
}

static void memcpy_scatter(const struct pattern *p, const uint8_t *image)
{
	size_t per = pat_per_dpu(p);

	for (uint32_t d = 0; d < p->nr_dpus; d++)
		for (uint32_t k = 0; k < p->nblk; k++)
			memcpy(pat_addr(p, d, k),
			       image + d * per + (size_t)k * p->bsz, p->bsz);
}

/* ------------------------------------------------------------ results */

struct row {
	char figure[40];
	char path[24];		/* dpu_push_sg_xfer, raw ioctl, ... */
	char baseline[24];
	uint64_t block_bytes, blocks, bytes;
	double xfer_ns, base_ns;
	double ratio, target;	/* target 0: none */
	bool has_base;
};

static struct row rows[64];
static unsigned int nr_rows;

static const char *size_str(uint64_t b, char *buf, size_t len)
{
	if (b >= MIB && b % MIB == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", b / MIB);
	else if (b >= KIB && b % KIB == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", b / KIB);
	else
		snprintf(buf, len, "%" PRIu64 " B", b);
	return buf;
}

static const char *verdict(const struct row *r)
{
	if (!r->has_base || r->target <= 0)
		return "info";
	return r->ratio >= r->target ? "ok" : "BELOW";
}

static void print_header(void)
{
	printf("%-28s %-17s %7s %6s %7s %9s %9s %-18s %8s %8s %6s %6s %s\n",
	       "figure", "path", "block", "blocks", "MiB", "xfer ms", "GB/s",
	       "baseline", "base ms", "ns/blk", "ratio", "target", "");
}

static void print_row(const struct row *r)
{
	char sz[32], tg[16];

	if (r->target > 0)
		snprintf(tg, sizeof(tg), ">=%.1f", r->target);
	else
		snprintf(tg, sizeof(tg), "-");
	printf("%-28s %-17s %7s %6" PRIu64 " %7.2f %9.3f %9.3f %-18s %8.3f %8.1f %6.2f %6s %s\n",
	       r->figure, r->path, size_str(r->block_bytes, sz, sizeof(sz)),
	       r->blocks, (double)r->bytes / MIB, r->xfer_ns / 1e6,
	       r->xfer_ns > 0 ? (double)r->bytes / r->xfer_ns : 0.0,
	       r->baseline, r->base_ns / 1e6, r->xfer_ns / (double)r->blocks,
	       r->ratio, tg, verdict(r));
	fflush(stdout);
}

typedef void (*run_fn)(void *ctx);

/*
 * Median times of xfer and base (may be NULL) over reps alternating
 * repetitions, after one untimed warm-up of each. ratio = base / xfer, or
 * with swap = xfer / base ... computed by the caller.
 */
static void measure(run_fn xfer, void *xctx, run_fn base, void *bctx,
		    double *xfer_ns, double *base_ns)
{
	uint64_t tx[64], tb[64], t0;
	unsigned int i;

	xfer(xctx);
	if (base)
		base(bctx);
	for (i = 0; i < reps; i++) {
		t0 = bench_now_ns();
		xfer(xctx);
		tx[i] = bench_now_ns() - t0;
		if (base) {
			t0 = bench_now_ns();
			base(bctx);
			tb[i] = bench_now_ns() - t0;
		}
	}
	*xfer_ns = bench_median_u64(tx, reps);
	*base_ns = base ? bench_median_u64(tb, reps) : 0;
}

static struct row *add_row(const char *figure, const char *path,
			   const char *baseline, const struct pattern *p,
			   double xfer_ns, double base_ns, bool base_over_xfer,
			   double target)
{
	struct row *r = &rows[nr_rows++];

	snprintf(r->figure, sizeof(r->figure), "%s", figure);
	snprintf(r->path, sizeof(r->path), "%s", path);
	snprintf(r->baseline, sizeof(r->baseline), "%s", baseline);
	r->block_bytes = p->bsz;
	r->blocks = (uint64_t)p->nr_dpus * p->nblk;
	r->bytes = r->blocks * p->bsz;
	r->xfer_ns = xfer_ns;
	r->base_ns = base_ns;
	r->has_base = base_ns > 0;
	r->ratio = !r->has_base ? 0 :
		   base_over_xfer ? base_ns / xfer_ns : xfer_ns / base_ns;
	r->target = target;
	print_row(r);
	return r;
}

/* ------------------------------------------------------------ contexts */

struct memcpy_ctx {
	const struct pattern *p;
	uint8_t *image;
	bool to_dpu;
};

static void run_memcpy(void *arg)
{
	struct memcpy_ctx *c = arg;

	if (c->to_dpu)
		memcpy_gather(c->p, c->image);
	else
		memcpy_scatter(c->p, c->image);
}

struct sg_ctx {
	struct dpu_set_t set;
	const struct pattern *p;
	dpu_xfer_t dir;
	unsigned int calls;
};

static void run_sg(void *arg)
{
	struct sg_ctx *c = arg;
	get_block_t gb = {
		.f = get_block,
		.args = (void *)c->p,
		.args_size = sizeof(*c->p),
	};

	CHECK_DPU(dpu_push_sg_xfer(c->set, c->dir, DPU_MRAM_HEAP_POINTER_NAME,
				   0, pat_per_dpu(c->p), &gb,
				   DPU_SG_XFER_DEFAULT));
	c->calls++;
}

struct raw_ctx {
	int fd;
	struct dpusim_xfer x;
	struct dpusim_xfer_dpu *dpus;
	struct dpusim_block *blocks;
};

static void raw_prepare(struct raw_ctx *c, int fd, const struct pattern *p,
			bool to_dpu)
{
	size_t n = (size_t)p->nr_dpus * p->nblk, i = 0;

	c->fd = fd;
	c->dpus = calloc(p->nr_dpus, sizeof(*c->dpus));
	c->blocks = calloc(n, sizeof(*c->blocks));
	if (!c->dpus || !c->blocks)
		die("out of memory");
	for (uint32_t d = 0; d < p->nr_dpus; d++) {
		c->dpus[d].dpu = d;
		c->dpus[d].nr_blocks = p->nblk;
		for (uint32_t k = 0; k < p->nblk; k++, i++) {
			c->blocks[i].addr = (uintptr_t)pat_addr(p, d, k);
			c->blocks[i].length = p->bsz;
		}
	}
	memset(&c->x, 0, sizeof(c->x));
	c->x.size = sizeof(c->x);
	c->x.flags = to_dpu ? 0 : DPUSIM_XFER_FROM_DPU;
	c->x.offset = 0;
	c->x.length = pat_per_dpu(p);
	c->x.nr_dpus = p->nr_dpus;
	c->x.nr_blocks = (uint32_t)n;
	c->x.dpus = (uintptr_t)c->dpus;
	c->x.blocks = (uintptr_t)c->blocks;
}

static void raw_free(struct raw_ctx *c)
{
	free(c->dpus);
	free(c->blocks);
}

static void run_raw(void *arg)
{
	struct raw_ctx *c = arg;

	if (ioctl(c->fd, DPUSIM_IOCTL_XFER, &c->x) != 0)
		die("DPUSIM_IOCTL_XFER: %s", strerror(errno));
}

struct pvw_ctx {
	const struct pattern *p;
	uint8_t *image;
	struct iovec *local, *remote;
	size_t n;
};

static void pvw_prepare(struct pvw_ctx *c, const struct pattern *p,
			uint8_t *image)
{
	size_t per = pat_per_dpu(p), i = 0;

	c->p = p;
	c->image = image;
	c->n = (size_t)p->nr_dpus * p->nblk;
	c->local = calloc(c->n, sizeof(*c->local));
	c->remote = calloc(c->n, sizeof(*c->remote));
	if (!c->local || !c->remote)
		die("out of memory");
	for (uint32_t d = 0; d < p->nr_dpus; d++)
		for (uint32_t k = 0; k < p->nblk; k++, i++) {
			c->local[i].iov_base = pat_addr(p, d, k);
			c->local[i].iov_len = p->bsz;
			c->remote[i].iov_base = image + d * per + (size_t)k * p->bsz;
			c->remote[i].iov_len = p->bsz;
		}
}

static void run_pvw(void *arg)
{
	struct pvw_ctx *c = arg;
	size_t done = 0;

	while (done < c->n) {
		size_t n = c->n - done > IOV_MAX ? IOV_MAX : c->n - done;
		size_t want = n * c->p->bsz;
		ssize_t got = process_vm_writev(getpid(), c->local + done, n,
						c->remote + done, n, 0);

		if (got < 0 || (size_t)got != want)
			die("process_vm_writev: %zd of %zu bytes: %s", got, want,
			    got < 0 ? strerror(errno) : "short");
		done += n;
	}
}

/* ------------------------------------------------------------ checks */

/*
 * After a gather with the same pattern as memcpy_gather produced image:
 * the MRAM of a few DPUs must equal the image.
 */
static void verify_mram_lib(struct dpu_set_t set, const struct pattern *p,
			    const uint8_t *image, const char *what)
{
	const uint32_t pick[] = { 0, 37, NR_DPUS - 1 };
	size_t per = pat_per_dpu(p);
	uint8_t *tmp = malloc(per);
	struct dpu_set_t dpu;
	uint32_t i;

	if (!tmp)
		die("out of memory");
	DPU_FOREACH(set, dpu, i) {
		for (unsigned int j = 0; j < sizeof(pick) / sizeof(pick[0]); j++) {
			if (pick[j] != i)
				continue;
			CHECK_DPU(dpu_copy_from(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0,
						tmp, per));
			if (memcmp(tmp, image + i * per, per) != 0)
				fail("%s: MRAM of DPU %u differs from the memcpy image", what, i);
		}
	}
	free(tmp);
}

static void verify_mram_raw(int fd, const struct pattern *p,
			    const uint8_t *image, const char *what)
{
	size_t per = pat_per_dpu(p);
	uint8_t *tmp = malloc(per);
	struct dpusim_xfer_dpu dd = { .dpu = 0, .nr_blocks = 1 };
	struct dpusim_block b;
	struct dpusim_xfer x = {
		.size = sizeof(x), .flags = DPUSIM_XFER_FROM_DPU,
		.length = per, .nr_dpus = 1, .nr_blocks = 1,
		.dpus = (uintptr_t)&dd, .blocks = (uintptr_t)&b,
	};

	if (!tmp)
		die("out of memory");
	b.addr = (uintptr_t)tmp;
	b.length = per;
	for (uint32_t d = 0; d < p->nr_dpus; d += 21) {
		dd.dpu = d;
		if (ioctl(fd, DPUSIM_IOCTL_XFER, &x) != 0)
			die("DPUSIM_IOCTL_XFER (verify): %s", strerror(errno));
		if (memcmp(tmp, image + d * per, per) != 0)
			fail("%s: MRAM of DPU %u differs from the memcpy image", what, d);
	}
	free(tmp);
}

/* ------------------------------------------------------------ figures */

static uint8_t *H, *C;		/* the host blocks, the contiguous image */
static size_t HC_BYTES;
static double memcpy_gbps;
static const char *tunables = "";
static char ioctl_note[256];

static const uint32_t gather_sizes[] = { 4 * KIB, 64 * KIB, MIB };
static const uint32_t small_sizes[] = { 64, 128, 256, 512 };

/* Bytes per DPU for gather blocks of bsz bytes (0: the largest). */
static size_t per_dpu_bytes(size_t bsz)
{
	size_t per = quick ? 256 * KIB : MIB;

	return bsz > per ? bsz : per;
}

static uint32_t small_blocks(void)
{
	return quick ? 256 : MAX_BLOCKS_PER_DPU;
}

/* One gather + scatter pair of rows (to and from the DPUs) for a pattern. */
static void raw_pair(int fd, const struct pattern *p, const char *gfig,
		     const char *sfig, double target)
{
	struct raw_ctx rc;
	struct memcpy_ctx mc = { .p = p, .image = C };
	double x, b;
	uint64_t sum;

	raw_prepare(&rc, fd, p, true);
	mc.to_dpu = true;
	measure(run_raw, &rc, run_memcpy, &mc, &x, &b);
	verify_mram_raw(fd, p, C, gfig);
	add_row(gfig, "raw ioctl", "memcpy", p, x, b, true, target);
	raw_free(&rc);

	/* Scatter writes back what the gather read: H must stay the same. */
	sum = checksum(H, HC_BYTES);
	raw_prepare(&rc, fd, p, false);
	mc.to_dpu = false;
	measure(run_raw, &rc, run_memcpy, &mc, &x, &b);
	if (checksum(H, HC_BYTES) != sum)
		fail("%s: raw scatter changed the host blocks", sfig);
	add_row(sfig, "raw ioctl", "memcpy", p, x, b, true, target);
	raw_free(&rc);
}

static int open_free_rank(unsigned int *index)
{
	char dev[64];

	for (unsigned int r = 0; r < MAX_RANKS; r++) {
		int fd;

		snprintf(dev, sizeof(dev), "/dev/dpusim/rank%u", r);
		fd = open(dev, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			*index = r;
			return fd;
		}
		if (errno == ENOENT)
			break;
	}
	die("no free rank under /dev/dpusim (is dpusim.ko loaded?)");
}

static void raw_figures(void)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };
	unsigned int rank;
	int fd = open_free_rank(&rank);
	char fig[40], sfig[40];

	if (ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info) != 0)
		die("DPUSIM_IOCTL_RANK_INFO: %s", strerror(errno));
	if (info.nr_dpus < NR_DPUS)
		die("rank%u has %u DPUs, need %u", rank, info.nr_dpus, NR_DPUS);

	for (unsigned int i = 0; i < sizeof(gather_sizes) / sizeof(gather_sizes[0]); i++) {
		struct pattern p = { H, NR_DPUS, (uint32_t)(per_dpu_bytes(gather_sizes[i]) / gather_sizes[i]),
				     gather_sizes[i], NULL };

		raw_pair(fd, &p, "gather to 64 DPUs", "scatter from 64 DPUs", 0.8);
	}
	for (unsigned int i = 0; i < sizeof(small_sizes) / sizeof(small_sizes[0]); i++) {
		struct pattern p = { H, NR_DPUS, small_blocks(), small_sizes[i], NULL };

		snprintf(fig, sizeof(fig), "small blocks, gather");
		snprintf(sfig, sizeof(sfig), "small blocks, scatter");
		raw_pair(fd, &p, fig, sfig, 0.5);
	}
	close(fd);
}

/* Time one direction of the library path; checks ioctls per call. */
static void lib_row(struct dpu_set_t set, const unsigned int *ranks,
		    unsigned int nr_ranks, const struct pattern *p, bool to_dpu,
		    const char *figure, double target)
{
	struct sg_ctx sc = { .set = set, .p = p,
			     .dir = to_dpu ? DPU_XFER_TO_DPU : DPU_XFER_FROM_DPU };
	struct memcpy_ctx mc = { .p = p, .image = C, .to_dpu = to_dpu };
	uint64_t before[MAX_RANKS], after[MAX_RANKS], sum = 0;
	double x, b;

	if (!to_dpu)
		sum = checksum(H, HC_BYTES);
	read_ioctls(ranks, nr_ranks, before);
	measure(run_sg, &sc, run_memcpy, &mc, &x, &b);
	read_ioctls(ranks, nr_ranks, after);
	for (unsigned int r = 0; r < nr_ranks; r++)
		if (after[r] - before[r] != sc.calls)
			fail("%s: %" PRIu64 " ioctls on rank%u for %u dpu_push_sg_xfer calls",
			     figure, after[r] - before[r], ranks[r], sc.calls);
	if (to_dpu)
		verify_mram_lib(set, p, C, figure);
	else if (checksum(H, HC_BYTES) != sum)
		fail("%s: scatter changed the host blocks", figure);
	add_row(figure, "dpu_push_sg_xfer", "memcpy", p, x, b, true, target);
}

/*
 * One dpu_push_xfer over DPUSIM_XFER_MAX_BYTES on one rank: each DPU's
 * SPLIT_LEN bytes of never written (sparse) MRAM into one host buffer,
 * so that it needs no memory.  The DPUs' shares are equal: the fewest
 * calls is ceil(DPUs / DPUs per call).
 */
#define SPLIT_LEN (20 * MIB)
static char split_note[160];

static void split_note_fill(void)
{
	uint64_t before[MAX_RANKS], after[MAX_RANKS], per_call, want;
	unsigned int ranks[MAX_RANKS], nr_ranks;
	struct dpu_set_t set, dpu;
	uint32_t nr_dpus;
	uint8_t *buf;

	CHECK_DPU(dpu_alloc_ranks(1, NULL, &set));
	CHECK_DPU(dpu_get_nr_dpus(set, &nr_dpus));
	nr_ranks = owned_ranks(ranks);
	if ((uint64_t)nr_dpus * SPLIT_LEN <= DPUSIM_XFER_MAX_BYTES) {
		snprintf(split_note, sizeof(split_note),
			 "not measured: %u DPUs x %llu MiB fit in one call", nr_dpus,
			 (unsigned long long)(SPLIT_LEN / MIB));
		CHECK_DPU(dpu_free(set));
		return;
	}
	buf = big_alloc(SPLIT_LEN);
	DPU_FOREACH(set, dpu)
		CHECK_DPU(dpu_prepare_xfer(dpu, buf));
	read_ioctls(ranks, nr_ranks, before);
	CHECK_DPU(dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0,
				SPLIT_LEN, DPU_XFER_DEFAULT));
	read_ioctls(ranks, nr_ranks, after);
	per_call = DPUSIM_XFER_MAX_BYTES / SPLIT_LEN;
	want = (nr_dpus + per_call - 1) / per_call;
	if (after[0] - before[0] != want)
		fail("one dpu_push_xfer of %u x %llu MiB made %" PRIu64 " ioctls, the fewest is %" PRIu64,
		     nr_dpus, (unsigned long long)(SPLIT_LEN / MIB), after[0] - before[0], want);
	snprintf(split_note, sizeof(split_note),
		 "%s: %" PRIu64 " for one dpu_push_xfer of %u DPUs x %llu MiB (the fewest DPUSIM_XFER_MAX_BYTES allows: %" PRIu64 ")",
		 after[0] - before[0] == want ? "ok" : "FAIL", after[0] - before[0], nr_dpus,
		 (unsigned long long)(SPLIT_LEN / MIB), want);
	CHECK_DPU(dpu_free(set));
	munmap(buf, SPLIT_LEN);
}

static void lib_figures(void)
{
	struct dpu_set_t set;
	unsigned int ranks[MAX_RANKS], nr_ranks;
	char profile[96];

	snprintf(profile, sizeof(profile),
		 "sgXferEnable=true, sgXferMaxBlocksPerDpu=%u", MAX_BLOCKS_PER_DPU);
	CHECK_DPU(dpu_alloc(NR_DPUS, profile, &set));
	nr_ranks = owned_ranks(ranks);
	if (nr_ranks != 1)
		die("dpu_alloc(64) owns %u ranks, expected 1", nr_ranks);

	for (unsigned int i = 0; i < sizeof(gather_sizes) / sizeof(gather_sizes[0]); i++) {
		struct pattern p = { H, NR_DPUS, (uint32_t)(per_dpu_bytes(gather_sizes[i]) / gather_sizes[i]),
				     gather_sizes[i], NULL };
		struct sg_ctx sc = { .set = set, .p = &p, .dir = DPU_XFER_TO_DPU };
		struct pvw_ctx pc;
		double x, b;

		lib_row(set, ranks, nr_ranks, &p, true, "gather to 64 DPUs", 0.8);
		lib_row(set, ranks, nr_ranks, &p, false, "scatter from 64 DPUs", 0.8);

		pvw_prepare(&pc, &p, C);
		measure(run_sg, &sc, run_pvw, &pc, &x, &b);
		add_row("gather vs process_vm_writev", "dpu_push_sg_xfer",
			"process_vm_writev", &p, x, b, true, 1.0);
		free(pc.local);
		free(pc.remote);
	}
	for (unsigned int i = 0; i < sizeof(small_sizes) / sizeof(small_sizes[0]); i++) {
		struct pattern p = { H, NR_DPUS, small_blocks(), small_sizes[i], NULL };

		lib_row(set, ranks, nr_ranks, &p, true, "small blocks, gather", 0.5);
		lib_row(set, ranks, nr_ranks, &p, false, "small blocks, scatter", 0.5);
	}

	/* The seed's cache-line remark: regular vs offset-rotated scatter. */
	{
		static const uint32_t lens[] = { 8, 24 };
		uint32_t nblk = small_blocks(), rot[NR_DPUS];
		uint64_t s = 12345;

		for (uint32_t d = 0; d < NR_DPUS; d++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			rot[d] = (uint32_t)(s >> 33) % nblk;
		}
		for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			struct pattern reg = { H, NR_DPUS, nblk, lens[i], NULL };
			struct pattern rotp = { H, NR_DPUS, nblk, lens[i], rot };
			struct sg_ctx a = { .set = set, .p = &reg, .dir = DPU_XFER_FROM_DPU };
			struct sg_ctx b = { .set = set, .p = &rotp, .dir = DPU_XFER_FROM_DPU };
			struct memcpy_ctx mc = { .p = &reg, .image = C, .to_dpu = false };
			double xa, xb, m, unused;

			/* MRAM content: whatever the DPUs hold; only speed counts. */
			measure(run_sg, &a, run_sg, &b, &xa, &xb);
			add_row("adjacent scatter, regular", "dpu_push_sg_xfer",
				"rotated (seed)", &reg, xa, xb, false, 0);
			measure(run_memcpy, &mc, NULL, NULL, &m, &unused);
			add_row("adjacent scatter, memcpy", "memcpy loop", "-", &reg,
				m, 0, false, 0);
		}
	}
	CHECK_DPU(dpu_free(set));

	/* ioctls per dpu_push_sg_xfer on a set of every free rank. */
	{
		uint64_t before[MAX_RANKS], after[MAX_RANKS];
		uint32_t nr_dpus;
		bool ok = true;
		struct pattern p;
		struct sg_ctx sc;
		uint8_t *buf;

		CHECK_DPU(dpu_alloc(DPU_ALLOCATE_ALL, "sgXferEnable=true", &set));
		CHECK_DPU(dpu_get_nr_dpus(set, &nr_dpus));
		nr_ranks = owned_ranks(ranks);
		buf = big_alloc((size_t)nr_dpus * 2 * 4 * KIB);
		fill(buf, (size_t)nr_dpus * 2 * 4 * KIB, 7);
		p = (struct pattern){ buf, nr_dpus, 2, 4 * KIB, NULL };
		sc = (struct sg_ctx){ .set = set, .p = &p, .dir = DPU_XFER_TO_DPU };
		for (int dir = 0; dir < 2; dir++) {
			sc.dir = dir ? DPU_XFER_FROM_DPU : DPU_XFER_TO_DPU;
			read_ioctls(ranks, nr_ranks, before);
			run_sg(&sc);
			read_ioctls(ranks, nr_ranks, after);
			for (unsigned int r = 0; r < nr_ranks; r++)
				if (after[r] - before[r] != 1) {
					ok = false;
					fail("one dpu_push_sg_xfer(%s) over %u ranks made %" PRIu64
					     " ioctls on rank%u",
					     dir ? "FROM_DPU" : "TO_DPU", nr_ranks,
					     after[r] - before[r], ranks[r]);
				}
		}
		snprintf(ioctl_note, sizeof(ioctl_note),
			 "%s: 1 per rank per dpu_push_sg_xfer (every timed call on 1 rank, and 1 call each way on %u ranks / %u DPUs)",
			 ok ? "ok" : "FAIL", nr_ranks, nr_dpus);
		CHECK_DPU(dpu_free(set));
		munmap(buf, (size_t)nr_dpus * 2 * 4 * KIB);
	}
	split_note_fill();
}

/* ------------------------------------------------------------ output */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('"', f);
}

static void write_json(const char *path, const char *cpu, const char *accel, const char *kernel)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "{\n  \"qemu_cpu_model\": ");
	json_str(f, cpu);
	fprintf(f, ",\n  \"accelerator\": ");
	json_str(f, accel);
	fprintf(f, ",\n  \"kernel\": ");
	json_str(f, kernel);
	fprintf(f, ",\n  \"repetitions\": %u,\n  \"statistic\": \"median\",\n", reps);
	fprintf(f, "  \"quick\": %s,\n  \"memcpy_gbps\": %.3f,\n", quick ? "true" : "false",
		memcpy_gbps);
	fprintf(f, "  \"glibc_tunables\": ");
	json_str(f, tunables);
	fprintf(f, ",\n");
	fprintf(f, "  \"ioctls_per_sg_xfer\": ");
	json_str(f, ioctl_note);
	fprintf(f, ",\n  \"ioctls_per_split_xfer\": ");
	json_str(f, split_note);
	fprintf(f, ",\n  \"failures\": %d,\n  \"rows\": [\n", failures);
	for (unsigned int i = 0; i < nr_rows; i++) {
		const struct row *r = &rows[i];

		fprintf(f, "    {\"figure\": ");
		json_str(f, r->figure);
		fprintf(f, ", \"path\": ");
		json_str(f, r->path);
		fprintf(f, ", \"baseline\": ");
		json_str(f, r->baseline);
		fprintf(f, ", \"block_bytes\": %" PRIu64 ", \"blocks\": %" PRIu64
			", \"bytes\": %" PRIu64 ", \"xfer_ns\": %.0f, \"baseline_ns\": %.0f"
			", \"ns_per_block\": %.2f, \"ratio\": %.4f, \"target\": %.2f"
			", \"verdict\": \"%s\"}%s\n",
			r->block_bytes, r->blocks, r->bytes, r->xfer_ns, r->base_ns,
			r->xfer_ns / (double)r->blocks, r->ratio, r->target,
			verdict(r), i + 1 < nr_rows ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f) != 0)
		die("writing %s: %s", path, strerror(errno));
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sg_bench [--cpu-model NAME] [--json FILE] [--reps N] [--quick]\n"
		"                [--no-raw] [--raw-only]\n"
		"  --cpu-model NAME  QEMU -cpu model to report (default $DPUSIM_BENCH_CPU)\n"
		"  --json FILE       also write the results as JSON\n"
		"  --reps N          repetitions per figure, median reported (default 7, max 63)\n"
		"  --quick           256 KiB per DPU (1 MiB blocks: 1), 256 small blocks per DPU\n"
		"  --no-raw          skip the raw-ioctl (kernel only) rows\n"
		"  --raw-only        only the raw-ioctl rows (no libdpusim transfers)\n");
}

int main(int argc, char **argv)
{
	const char *cpu = getenv("DPUSIM_BENCH_CPU"), *json = NULL;
	/* tools/vm-run says which accelerator the VM runs on: ratios are only
	 * comparable between runs on the same one.
	 */
	const char *accel = getenv("DPUSIM_VM_ACCEL");
	bool raw = true, lib = true;
	struct utsname un;
	uint64_t t0;

	for (int a = 1; a < argc; a++) {
		const char *val = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(argv[a], "--cpu-model") && val) {
			cpu = val;
			a++;
		} else if (!strcmp(argv[a], "--json") && val) {
			json = val;
			a++;
		} else if (!strcmp(argv[a], "--reps") && val) {
			char *end;
			long v = strtol(val, &end, 10);

			if (*end || v < 1 || v > 63) {
				usage(stderr);
				return 2;
			}
			reps = (unsigned int)v;
			a++;
		} else if (!strcmp(argv[a], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[a], "--no-raw")) {
			raw = false;
		} else if (!strcmp(argv[a], "--raw-only")) {
			lib = false;
		} else if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "sg_bench: bad option '%s'\n", argv[a]);
			usage(stderr);
			return 2;
		}
	}
	if (!cpu || !*cpu)
		cpu = "unknown";
	if (!accel || !*accel)
		accel = "unknown";
	uname(&un);

	/* 64 DPUs x 1 MiB of host blocks, and the same for the image. */
	HC_BYTES = (size_t)NR_DPUS * per_dpu_bytes(MIB);
	if (HC_BYTES < (size_t)NR_DPUS * small_blocks() * 512)
		HC_BYTES = (size_t)NR_DPUS * small_blocks() * 512;
	H = big_alloc(HC_BYTES);
	C = big_alloc(HC_BYTES);
	fill(H, HC_BYTES, 1);
	fill(C, HC_BYTES, 2);
	memcpy(C, H, HC_BYTES);
	for (int i = 0; i < 3; i++) {
		double gbps;

		t0 = bench_now_ns();
		memcpy(C, H, HC_BYTES);
		gbps = (double)HC_BYTES / (double)(bench_now_ns() - t0);
		if (gbps > memcpy_gbps)
			memcpy_gbps = gbps;
	}
	tunables = getenv("GLIBC_TUNABLES");
	if (!tunables)
		tunables = "";

	printf("sg_bench: QEMU CPU model %s, accelerator %s, kernel %s, %u DPUs (one rank), %zu KiB per DPU, "
	       "median of %u repetitions; one contiguous %zu MiB memcpy (best of 3): %.2f GB/s\n",
	       cpu, accel, un.release, NR_DPUS, per_dpu_bytes(0) / (size_t)KIB, reps, HC_BYTES / (size_t)MIB,
	       memcpy_gbps);
	printf("GLIBC_TUNABLES=%s (the memcpy baselines are glibc's memcpy)\n", tunables);
	printf("ratio = baseline / xfer (for 'adjacent scatter, regular': regular / rotated)\n\n");
	print_header();
	if (raw)
		raw_figures();
	if (lib)
		lib_figures();
	if (ioctl_note[0])
		printf("\nioctls per dpu_push_sg_xfer: %s\n", ioctl_note);
	if (split_note[0])
		printf("ioctls per transfer over one call's limit: %s\n", split_note);
	if (json)
		write_json(json, cpu, accel, un.release);
	printf("sg_bench: %s\n", failures ? "FAILED (see above)" : "done");
	return failures ? 1 : 0;
}
