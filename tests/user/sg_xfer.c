// SPDX-License-Identifier: GPL-2.0
/*
 * Integration tests of libdpusim's transfers through the real rank
 * devices: dpu_push_sg_xfer (one test per rule of
 * shared/design/sg-transfers.md), dpu_push_xfer / dpu_prepare_xfer,
 * dpu_copy_to / dpu_copy_from, dpu_broadcast_to, dpu_load of a
 * host-compiled ELF, the ASYNC flags with dpu_sync, and dpu_free with
 * queued work. Each test allocates its own set (the harness forks per
 * test, so the ranks are released when it ends).
 */
#include <stdatomic.h>
#include <sys/mman.h>

#include <dpu.h>

#include "kselftest_harness.h"
#include "common.h"

#define HEAP DPU_MRAM_HEAP_POINTER_NAME
#define MAX_DPUS 256
#define BUDGET_PARAM "/sys/module/dpusim/parameters/mram_budget"

/* ------------------------------------------------------------ helpers */

static uint8_t pat(uint32_t dpu, uint64_t i, uint32_t seed)
{
	return (uint8_t)(dpu * 131u + i * 7u + (i >> 9) * 13u + seed * 29u + 1u);
}

struct dpus {
	uint32_t n;
	struct dpu_set_t dpu[MAX_DPUS];
};

static void list_dpus(struct dpu_set_t set, struct dpus *d)
{
	struct dpu_set_t dpu;
	uint32_t i;

	d->n = 0;
	DPU_FOREACH(set, dpu, i) {
		if (i < MAX_DPUS) {
			d->dpu[i] = dpu;
			d->n = i + 1;
		}
	}
}

static long long sum_attr(uint32_t nr_ranks, const char *attr)
{
	long long s = 0;
	uint32_t r;

	for (r = 0; r < nr_ranks; r++)
		s += sysfs_rank_attr(r, attr);
	return s;
}

/* Write pat(d, seed) to [off, off + len) of every DPU (dpu_copy_to per DPU). */
static int fill_dpus(const struct dpus *d, uint64_t off, size_t len, uint32_t seed)
{
	uint8_t *buf = malloc(len);
	uint32_t k;
	size_t i;
	int ret = 0;

	if (!buf)
		return -1;
	for (k = 0; k < d->n && !ret; k++) {
		for (i = 0; i < len; i++)
			buf[i] = pat(k, off + i, seed);
		if (dpu_copy_to(d->dpu[k], HEAP, off, buf, len) != DPU_OK)
			ret = -1;
	}
	free(buf);
	return ret;
}

/*
 * Check [off, off + len) of every DPU: pat(d, seed) (zero = false), or
 * zeros (zero = true). Returns the first bad DPU, or -1 if all match.
 */
static int check_dpus(const struct dpus *d, uint64_t off, size_t len,
		      uint32_t seed, bool zero)
{
	uint8_t *buf = malloc(len);
	uint32_t k;
	size_t i;

	if (!buf)
		return 9999;
	for (k = 0; k < d->n; k++) {
		if (dpu_copy_from(d->dpu[k], HEAP, off, buf, len) != DPU_OK) {
			free(buf);
			return (int)k;
		}
		for (i = 0; i < len; i++) {
			if (buf[i] != (zero ? 0 : pat(k, off + i, seed))) {
				free(buf);
				return (int)k;
			}
		}
	}
	free(buf);
	return -1;
}

/*
 * Scatter/gather layout: DPU d's len bytes are cut into nb pieces with
 * uneven boundaries S(k) = len * k^2 / nb^2 (so some pieces are empty and
 * lengths are not multiples of 8). Piece k of every DPU sits side by side
 * in the host buffer: piece k of DPU d at host + nr_dpus * S(k) + d * |k|.
 */
struct sg_ctx {
	uint8_t *host;
	uint32_t nr_dpus;
	uint32_t nb;		/* blocks per DPU */
	uint64_t len;		/* bytes per DPU described by the blocks */
	uint32_t odd_dpu;	/* this DPU gets odd_nb blocks ... */
	uint32_t odd_nb;
	int64_t odd_delta;	/* ... and its last block this many more bytes */
	uint32_t bad_dpu;	/* this DPU's block 0 is at bad_addr */
	uint8_t *bad_addr;
	_Atomic uint32_t *calls;	/* per set index, when not NULL */
	int written;		/* the callback writes 1 here (args copy test) */
};

static uint64_t sg_cut(const struct sg_ctx *c, uint32_t k, uint32_t nb)
{
	return c->len * k * k / ((uint64_t)nb * nb);
}

static bool sg_get(struct sg_block_info *out, uint32_t dpu, uint32_t block,
		   void *args)
{
	struct sg_ctx *c = args;
	uint32_t nb = dpu == c->odd_dpu ? c->odd_nb : c->nb;
	uint64_t s, e;

	if (c->calls && dpu < MAX_DPUS)
		atomic_fetch_add(&c->calls[dpu], 1);
	if (dpu == 0 && block == 0)
		c->written = 1;	/* into the callback's copy, from one thread */
	if (block >= nb)
		return false;
	s = sg_cut(c, block, nb);
	e = sg_cut(c, block + 1, nb);
	out->addr = c->host + c->nr_dpus * s + dpu * (e - s);
	out->length = (uint32_t)(e - s);
	if (dpu == c->odd_dpu && block == nb - 1)
		out->length = (uint32_t)((int64_t)out->length + c->odd_delta);
	if (dpu == c->bad_dpu && block == 0)
		out->addr = c->bad_addr;
	return true;
}

static void sg_init(struct sg_ctx *c, uint8_t *host, uint32_t nr_dpus,
		    uint32_t nb, uint64_t len)
{
	memset(c, 0, sizeof(*c));
	c->host = host;
	c->nr_dpus = nr_dpus;
	c->nb = nb;
	c->len = len;
	c->odd_dpu = UINT32_MAX;
	c->bad_dpu = UINT32_MAX;
}

/* Fill the host buffer with DPU d's data pat(d, off + i, seed) in the layout. */
static void sg_fill_host(const struct sg_ctx *c, uint64_t off, uint32_t seed)
{
	uint32_t d, k;
	uint64_t i;

	for (d = 0; d < c->nr_dpus; d++)
		for (k = 0; k < c->nb; k++) {
			uint64_t s = sg_cut(c, k, c->nb), e = sg_cut(c, k + 1, c->nb);
			uint8_t *p = c->host + c->nr_dpus * s + d * (e - s);

			for (i = s; i < e; i++)
				p[i - s] = pat(d, off + i, seed);
		}
}

/* The host bytes of DPU d, byte i of its logical data. */
static uint8_t sg_host_byte(const struct sg_ctx *c, uint32_t d, uint64_t i)
{
	uint32_t k = 0;

	while (sg_cut(c, k + 1, c->nb) <= i)
		k++;
	{
		uint64_t s = sg_cut(c, k, c->nb), e = sg_cut(c, k + 1, c->nb);

		return c->host[c->nr_dpus * s + d * (e - s) + (i - s)];
	}
}

static dpu_error_t sg_push(struct dpu_set_t set, dpu_xfer_t dir, uint64_t off,
			   size_t len, struct sg_ctx *c, dpu_sg_xfer_flags_t flags)
{
	get_block_t gb = { .f = sg_get, .args = c, .args_size = sizeof(*c) };

	return dpu_push_sg_xfer(set, dir, HEAP, (uint32_t)off, len, &gb, flags);
}

/* ------------------------------------------------------------ fixtures */

FIXTURE(all) {
	struct dpu_set_t set;
	struct dpus d;
	bool allocated;
};

FIXTURE_SETUP(all)
{
	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(4, "sgXferEnable=true", &self->set));
	self->allocated = true;
	list_dpus(self->set, &self->d);
	ASSERT_EQ(256, self->d.n);
}

FIXTURE_TEARDOWN(all)
{
	if (self->allocated)
		EXPECT_EQ(DPU_OK, dpu_free(self->set));
}

FIXTURE(rank) {
	struct dpu_set_t set;
	struct dpus d;
	bool allocated;
};

FIXTURE_SETUP(rank)
{
	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(1, "sgXferEnable=true", &self->set));
	self->allocated = true;
	list_dpus(self->set, &self->d);
	ASSERT_EQ(64, self->d.n);
}

FIXTURE_TEARDOWN(rank)
{
	if (self->allocated)
		EXPECT_EQ(DPU_OK, dpu_free(self->set));
}

/* Round trip: gather to the DPUs, check each DPU's MRAM, scatter back. */
static void roundtrip(struct __test_metadata *_metadata, struct dpu_set_t set,
		      const struct dpus *d, uint32_t nb, uint64_t len, uint64_t off)
{
	uint8_t *host = calloc(d->n, len), *back = calloc(d->n, len);
	struct sg_ctx c;

	ASSERT_NE(NULL, host);
	ASSERT_NE(NULL, back);
	sg_init(&c, host, d->n, nb, len);
	sg_fill_host(&c, off, nb);
	ASSERT_EQ(DPU_OK, sg_push(set, DPU_XFER_TO_DPU, off, len, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(-1, check_dpus(d, off, len, nb, false));
	c.host = back;
	ASSERT_EQ(DPU_OK, sg_push(set, DPU_XFER_FROM_DPU, off, len, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(0, memcmp(host, back, d->n * len));
	free(host);
	free(back);
}

/* ------------------------------------------------------------ sg rules */

TEST_F(all, sg_roundtrip_1_block)
{
	roundtrip(_metadata, self->set, &self->d, 1, 4096, 8192);
}

TEST_F(all, sg_roundtrip_3_blocks)
{
	roundtrip(_metadata, self->set, &self->d, 3, 1000 * 8, 1 << 20);
}

/* Default limit on a full rank: 64 blocks per DPU. */
TEST_F(rank, sg_roundtrip_max_blocks_rank)
{
	roundtrip(_metadata, self->set, &self->d, 64, 64 * 40, 0);
}

/* Default limit on 4 ranks: 256 blocks per DPU (many empty ones). */
TEST_F(all, sg_roundtrip_max_blocks_all)
{
	roundtrip(_metadata, self->set, &self->d, 256, 2048, 64 << 10);
}

TEST(sg_not_activated)
{
	struct dpu_set_t set;
	uint8_t host[64 * 8];
	struct sg_ctx c;
	long long before = sysfs_rank_attr(0, "xfer_ioctls");

	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(1, NULL, &set));
	sg_init(&c, host, 64, 1, 8);
	EXPECT_EQ(DPU_ERR_SG_NOT_ACTIVATED,
		  sg_push(set, DPU_XFER_TO_DPU, 0, 8, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(before, sysfs_rank_attr(0, "xfer_ioctls"));
	EXPECT_EQ(DPU_OK, dpu_free(set));
}

TEST_F(rank, sg_too_many_blocks_default)
{
	uint8_t *host = calloc(64, 65 * 8);
	long long before = sysfs_rank_attr(0, "xfer_ioctls");
	struct sg_ctx c;

	ASSERT_NE(NULL, host);
	sg_init(&c, host, 64, 64, 64 * 8);
	c.odd_dpu = 33;		/* one DPU asks for 65 */
	c.odd_nb = 65;
	EXPECT_EQ(DPU_ERR_SG_TOO_MANY_BLOCKS,
		  sg_push(self->set, DPU_XFER_TO_DPU, 0, 64 * 8, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(before, sysfs_rank_attr(0, "xfer_ioctls"));
	free(host);
}

TEST(sg_too_many_blocks_raised)
{
	uint8_t *host = calloc(64, 100 * 8);
	struct dpu_set_t set;
	struct dpus d;
	struct sg_ctx c;

	ASSERT_NE(NULL, host);
	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(1, "sgXferEnable=true,sgXferMaxBlocksPerDpu=100", &set));
	list_dpus(set, &d);
	/* exactly the maximum passes */
	sg_init(&c, host, 64, 100, 100 * 8);
	sg_fill_host(&c, 0, 5);
	EXPECT_EQ(DPU_OK, sg_push(set, DPU_XFER_TO_DPU, 0, 800, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(-1, check_dpus(&d, 0, 800, 5, false));
	/* max + 1 for one DPU */
	c.odd_dpu = 63;
	c.odd_nb = 101;
	EXPECT_EQ(DPU_ERR_SG_TOO_MANY_BLOCKS,
		  sg_push(set, DPU_XFER_TO_DPU, 0, 800, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(DPU_OK, dpu_free(set));
	free(host);
}

/* A mismatch in one DPU of the last rank: nothing written to any DPU. */
TEST_F(all, sg_length_mismatch_writes_nothing)
{
	uint8_t *host = calloc(256, 512);
	long long ioctls[4];
	struct sg_ctx c;
	uint32_t r;

	ASSERT_NE(NULL, host);
	ASSERT_EQ(0, fill_dpus(&self->d, 0, 512, 1));
	for (r = 0; r < 4; r++)
		ioctls[r] = sysfs_rank_attr(r, "xfer_ioctls");
	sg_init(&c, host, 256, 4, 512);
	sg_fill_host(&c, 0, 2);
	c.odd_dpu = 250;
	c.odd_nb = 4;
	c.odd_delta = -8;
	EXPECT_EQ(DPU_ERR_SG_LENGTH_MISMATCH,
		  sg_push(self->set, DPU_XFER_TO_DPU, 0, 512, &c, DPU_SG_XFER_DEFAULT));
	for (r = 0; r < 4; r++)
		EXPECT_EQ(ioctls[r], sysfs_rank_attr(r, "xfer_ioctls"));
	EXPECT_EQ(-1, check_dpus(&self->d, 0, 512, 1, false));
	/* a longer DPU is a mismatch too, also from the DPU */
	c.odd_dpu = 3;
	c.odd_delta = 8;
	EXPECT_EQ(DPU_ERR_SG_LENGTH_MISMATCH,
		  sg_push(self->set, DPU_XFER_FROM_DPU, 0, 512, &c, DPU_SG_XFER_DEFAULT));
	free(host);
}

/* To the DPU, blocks shorter than length: the rest of the range becomes 0. */
/*
 * Transfers of 512 KiB and more, in blocks of 4 KiB and more on average,
 * are copied on two CPUs (kernel/xfer.c: the caller up to half of the
 * bytes, a work item the rest): round trips of uneven blocks (lengths not
 * multiples of 8, empty ones) on one rank and on four, with the rank
 * counters counting every byte once.
 */
TEST_F(rank, sg_roundtrip_large_two_cpus)
{
	long long to0 = sum_attr(4, "xfer_bytes_to_dpu");
	long long from0 = sum_attr(4, "xfer_bytes_from_dpu");

	roundtrip(_metadata, self->set, &self->d, 5, 64 << 10, 4096);
	EXPECT_EQ(64LL << 16, sum_attr(4, "xfer_bytes_to_dpu") - to0);
	/* from the DPUs: check_dpus' reads, then the gather */
	EXPECT_EQ(2 * (64LL << 16), sum_attr(4, "xfer_bytes_from_dpu") - from0);
	roundtrip(_metadata, self->set, &self->d, 2, 8200, 0);
}

TEST_F(all, sg_roundtrip_large_two_cpus_all)
{
	roundtrip(_metadata, self->set, &self->d, 3, 24 << 10, 1 << 20);
}

/* DPU @k's first @have bytes are pat(k, i, @seed), then zeros up to @len */
static size_t padded_bad_byte(const struct dpus *d, uint32_t k, size_t have, size_t len,
			      uint32_t seed)
{
	uint8_t *buf = malloc(len);
	size_t i;

	if (!buf || dpu_copy_from(d->dpu[k], HEAP, 0, buf, len) != DPU_OK) {
		free(buf);
		return 0;
	}
	for (i = 0; i < have && buf[i] == pat(k, i, seed); i++)
		;
	if (i == have)
		for (; i < len && !buf[i]; i++)
			;
	free(buf);
	return i;
}

/* The same, with one DPU short and the rest padded with zeros */
TEST_F(rank, sg_large_pads_with_zeros_two_cpus)
{
	uint8_t *host = calloc(64, 32 << 10);
	struct sg_ctx c;
	size_t have;
	uint32_t k;

	ASSERT_NE(NULL, host);
	ASSERT_EQ(0, fill_dpus(&self->d, 0, 64 << 10, 3));
	sg_init(&c, host, 64, 4, 32 << 10);
	sg_fill_host(&c, 0, 4);
	c.odd_dpu = 37;
	c.odd_nb = 4;
	c.odd_delta = -1000;
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_TO_DPU, 0, 48 << 10, &c,
				  DPU_SG_XFER_DISABLE_LENGTH_CHECK));
	for (k = 0; k < 64; k++) {
		have = k == 37 ? (32 << 10) - 1000 : 32 << 10;
		EXPECT_EQ((size_t)48 << 10, padded_bad_byte(&self->d, k, have, 48 << 10, 4))
			TH_LOG("DPU %u: the first wrong byte", k);
	}
	EXPECT_EQ(-1, check_dpus(&self->d, 48 << 10, 16 << 10, 3, false));	/* untouched */
	free(host);
}

TEST_F(rank, sg_no_length_check_pads_with_zeros)
{
	uint8_t *host = calloc(64, 512);
	struct sg_ctx c;

	ASSERT_NE(NULL, host);
	ASSERT_EQ(0, fill_dpus(&self->d, 0, 1024, 3));
	sg_init(&c, host, 64, 3, 512);
	sg_fill_host(&c, 0, 4);
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_TO_DPU, 0, 768, &c,
				  DPU_SG_XFER_DISABLE_LENGTH_CHECK));
	EXPECT_EQ(-1, check_dpus(&self->d, 0, 512, 4, false));	/* the blocks */
	EXPECT_EQ(-1, check_dpus(&self->d, 512, 256, 0, true));	/* padded */
	EXPECT_EQ(-1, check_dpus(&self->d, 768, 256, 3, false));	/* untouched */
	free(host);
}

/* To the DPU, blocks longer than length: cut at length. */
TEST_F(rank, sg_no_length_check_truncates_to_dpu)
{
	uint8_t *host = calloc(64, 512);
	struct sg_ctx c;

	ASSERT_NE(NULL, host);
	ASSERT_EQ(0, fill_dpus(&self->d, 0, 512, 3));
	sg_init(&c, host, 64, 3, 512);
	sg_fill_host(&c, 0, 4);
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_TO_DPU, 0, 256, &c,
				  DPU_SG_XFER_DISABLE_LENGTH_CHECK));
	EXPECT_EQ(-1, check_dpus(&self->d, 0, 256, 4, false));
	EXPECT_EQ(-1, check_dpus(&self->d, 256, 256, 3, false));
	free(host);
}

/* From the DPU, blocks shorter than length: only their bytes are written. */
TEST_F(rank, sg_no_length_check_short_from_dpu)
{
	uint8_t *host = malloc(64 * 256 + 64);
	struct sg_ctx c;
	uint32_t d;
	uint64_t i;

	ASSERT_NE(NULL, host);
	ASSERT_EQ(0, fill_dpus(&self->d, 0, 512, 6));
	memset(host, 0xee, 64 * 256 + 64);
	sg_init(&c, host, 64, 3, 256);
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_FROM_DPU, 0, 512, &c,
				  DPU_SG_XFER_DISABLE_LENGTH_CHECK));
	for (d = 0; d < 64; d++)
		for (i = 0; i < 256; i++)
			ASSERT_EQ(pat(d, i, 6), sg_host_byte(&c, d, i));
	for (i = 0; i < 64; i++)	/* past the blocks: untouched */
		ASSERT_EQ(0xee, host[64 * 256 + i]);
	free(host);
}

/* From the DPU, blocks longer than length: bytes past length untouched. */
TEST_F(rank, sg_no_length_check_truncates_from_dpu)
{
	uint8_t *host = malloc(64 * 512);
	struct sg_ctx c;
	uint32_t d;
	uint64_t i;

	ASSERT_NE(NULL, host);
	ASSERT_EQ(0, fill_dpus(&self->d, 0, 512, 7));
	memset(host, 0xee, 64 * 512);
	sg_init(&c, host, 64, 2, 512);
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_FROM_DPU, 0, 256, &c,
				  DPU_SG_XFER_DISABLE_LENGTH_CHECK));
	for (d = 0; d < 64; d++) {
		for (i = 0; i < 256; i++)
			ASSERT_EQ(pat(d, i, 7), sg_host_byte(&c, d, i));
		for (i = 256; i < 512; i++)
			ASSERT_EQ(0xee, sg_host_byte(&c, d, i));
	}
	free(host);
}

TEST_F(rank, sg_unaligned_offset)
{
	uint8_t host[64 * 64];
	struct sg_ctx c;

	sg_init(&c, host, 64, 1, 64);
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS,
		  sg_push(self->set, DPU_XFER_TO_DPU, 4, 64, &c, DPU_SG_XFER_DEFAULT));
}

TEST_F(rank, sg_unaligned_length)
{
	uint8_t host[64 * 60];
	struct sg_ctx c;

	sg_init(&c, host, 64, 1, 60);
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS,
		  sg_push(self->set, DPU_XFER_TO_DPU, 0, 60, &c, DPU_SG_XFER_DEFAULT));
}

TEST_F(rank, sg_outside_symbol)
{
	uint64_t mram = sysfs_rank_attr(0, "mram_size");
	uint8_t host[64 * 16];
	struct sg_ctx c;

	sg_init(&c, host, 64, 1, 16);
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS,
		  sg_push(self->set, DPU_XFER_TO_DPU, mram - 8, 16, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS,
		  sg_push(self->set, DPU_XFER_FROM_DPU, mram, 16, &c, DPU_SG_XFER_DEFAULT));
	/* the last 16 bytes are fine */
	EXPECT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_FROM_DPU, mram - 16, 16, &c,
				  DPU_SG_XFER_DEFAULT));
}

TEST_F(rank, sg_unknown_symbol)
{
	uint8_t host[64 * 8];
	struct sg_ctx c;
	get_block_t gb = { .f = sg_get, .args = &c, .args_size = sizeof(c) };

	sg_init(&c, host, 64, 1, 8);
	EXPECT_EQ(DPU_ERR_UNKNOWN_SYMBOL,
		  dpu_push_sg_xfer(self->set, DPU_XFER_TO_DPU, "no_such_symbol", 0, 8, &gb,
				   DPU_SG_XFER_DEFAULT));
}

/* The callback writes through args: the caller's struct does not change. */
TEST_F(rank, sg_args_are_copied)
{
	uint8_t host[64 * 8];
	struct sg_ctx c;

	sg_init(&c, host, 64, 1, 8);
	sg_fill_host(&c, 0, 1);
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_TO_DPU, 0, 8, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(0, c.written);
}

/* A munmap'd page in one DPU's block: error, and no DPU changed. */
TEST_F(rank, sg_bad_address_to_dpu_changes_nothing)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *host = calloc(64, 1024), *hole;
	long long ioctls;
	struct sg_ctx c;

	ASSERT_NE(NULL, host);
	hole = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, page));
	ASSERT_EQ(0, fill_dpus(&self->d, 0, 1024, 8));
	sg_init(&c, host, 64, 3, 1024);
	sg_fill_host(&c, 0, 9);
	c.bad_dpu = 40;
	c.bad_addr = hole;
	ioctls = sysfs_rank_attr(0, "xfer_ioctls");
	EXPECT_EQ(DPU_ERR_INVALID_MEMORY_TRANSFER,
		  sg_push(self->set, DPU_XFER_TO_DPU, 0, 1024, &c, DPU_SG_XFER_DEFAULT));
	EXPECT_EQ(ioctls, sysfs_rank_attr(0, "xfer_ioctls"));	/* counts successes */
	EXPECT_EQ(-1, check_dpus(&self->d, 0, 1024, 8, false));
	free(host);
}

/* The same from the DPU: no host block is written. */
TEST_F(rank, sg_bad_address_from_dpu_writes_nothing)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *host = calloc(64, 1024), *hole;
	struct sg_ctx c;
	uint32_t i;

	ASSERT_NE(NULL, host);
	hole = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);	/* read-only: not writable from the DPU */
	ASSERT_EQ(0, fill_dpus(&self->d, 0, 1024, 8));
	sg_init(&c, host, 64, 3, 1024);
	c.bad_dpu = 63;
	c.bad_addr = hole;
	EXPECT_EQ(DPU_ERR_INVALID_MEMORY_TRANSFER,
		  sg_push(self->set, DPU_XFER_FROM_DPU, 0, 1024, &c, DPU_SG_XFER_DEFAULT));
	for (i = 0; i < 64 * 1024; i++)
		ASSERT_EQ(0, host[i]);
	munmap(hole, page);
	free(host);
}

/* Never-written MRAM reads as zeros and stays non-resident. */
TEST_F(rank, sparse_mram_reads_zeros)
{
	uint64_t far = sysfs_rank_attr(0, "mram_size") - 8192;
	uint8_t *host = malloc(64 * 4096);
	struct sg_ctx c;
	uint32_t i;

	ASSERT_NE(NULL, host);
	ASSERT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	memset(host, 0xaa, 64 * 4096);
	sg_init(&c, host, 64, 5, 4096);
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_FROM_DPU, far, 4096, &c,
				  DPU_SG_XFER_DEFAULT));
	for (i = 0; i < 64 * 4096; i++)
		ASSERT_EQ(0, host[i]);
	EXPECT_EQ(-1, check_dpus(&self->d, far, 8192, 0, true));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	free(host);
}

/* The module's budget: ENOSPC -> DPU_ERR_ALLOCATION, nothing resident. */
FIXTURE(budget) {
	struct dpu_set_t set;
	struct dpus d;
	char old[64];
	bool saved;
};

static int write_budget(const char *v)
{
	FILE *f = fopen(BUDGET_PARAM, "w");
	int ok;

	if (!f)
		return -1;
	ok = fputs(v, f) >= 0;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

FIXTURE_SETUP(budget)
{
	FILE *f = fopen(BUDGET_PARAM, "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(self->old, sizeof(self->old), f));
	fclose(f);
	self->saved = true;
	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(1, "sgXferEnable=true", &self->set));
	list_dpus(self->set, &self->d);
}

FIXTURE_TEARDOWN(budget)
{
	if (self->saved)
		EXPECT_EQ(0, write_budget(self->old));
	dpu_free(self->set);
}

TEST_F(budget, over_budget_is_allocation_error)
{
	size_t len = 64 << 10;
	uint8_t *buf = calloc(1, len);
	long long resident = sysfs_rank_attr(0, "mram_resident_bytes");

	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, len);
	ASSERT_EQ(0, write_budget("1048576"));	/* 1 MiB; the copy needs 4 */
	EXPECT_EQ(DPU_ERR_ALLOCATION, dpu_broadcast_to(self->set, HEAP, 0, buf, len,
						       DPU_XFER_DEFAULT));
	EXPECT_EQ(resident, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(-1, check_dpus(&self->d, 0, len, 0, true));
	/* a transfer that fits still works: 64 x 8 KiB = 512 KiB */
	EXPECT_EQ(DPU_OK, dpu_broadcast_to(self->set, HEAP, 0, buf, 8192, DPU_XFER_DEFAULT));
	EXPECT_EQ(resident + 64 * 8192, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(0, write_budget(self->old));
	free(buf);
}

/* One DPUSIM_IOCTL_XFER per rank and per call. */
TEST_F(all, sg_one_ioctl_per_rank)
{
	uint8_t *host = calloc(256, 256);
	long long ioctls[4], blocks[4];
	struct sg_ctx c;
	uint32_t r;

	ASSERT_NE(NULL, host);
	for (r = 0; r < 4; r++) {
		ioctls[r] = sysfs_rank_attr(r, "xfer_ioctls");
		blocks[r] = sysfs_rank_attr(r, "xfer_blocks");
	}
	sg_init(&c, host, 256, 4, 256);
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_TO_DPU, 0, 256, &c, DPU_SG_XFER_DEFAULT));
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(ioctls[r] + 1, sysfs_rank_attr(r, "xfer_ioctls"));
		EXPECT_EQ(blocks[r] + 64 * 4, sysfs_rank_attr(r, "xfer_blocks"));
	}
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_FROM_DPU, 0, 256, &c, DPU_SG_XFER_DEFAULT));
	for (r = 0; r < 4; r++)
		EXPECT_EQ(ioctls[r] + 2, sysfs_rank_attr(r, "xfer_ioctls"));
	free(host);
}

/* get_block sees indices in the whole set, also for subsets. */
TEST_F(all, sg_get_block_set_indices)
{
	static _Atomic uint32_t calls[MAX_DPUS];
	uint8_t *host = calloc(256, 64);
	struct dpu_set_t rank, dpu;
	struct sg_ctx c;
	uint32_t i, r;

	ASSERT_NE(NULL, host);
	sg_init(&c, host, 256, 2, 64);
	c.calls = calls;
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_TO_DPU, 0, 64, &c, DPU_SG_XFER_DEFAULT));
	for (i = 0; i < MAX_DPUS; i++)
		ASSERT_EQ(3, atomic_exchange(&calls[i], 0));	/* 2 blocks + false */

	DPU_RANK_FOREACH(self->set, rank, r) {
		if (r == 2)
			ASSERT_EQ(DPU_OK, sg_push(rank, DPU_XFER_FROM_DPU, 0, 64, &c,
						  DPU_SG_XFER_DEFAULT));
	}
	for (i = 0; i < MAX_DPUS; i++)
		ASSERT_EQ(i >= 128 && i < 192 ? 3 : 0, atomic_exchange(&calls[i], 0));

	DPU_FOREACH(self->set, dpu, i) {
		if (i == 77)
			ASSERT_EQ(DPU_OK, sg_push(dpu, DPU_XFER_FROM_DPU, 0, 64, &c,
						  DPU_SG_XFER_DEFAULT));
	}
	for (i = 0; i < MAX_DPUS; i++)
		ASSERT_EQ(i == 77 ? 3 : 0, atomic_exchange(&calls[i], 0));
	free(host);
}

/* ------------------------------------------------------------ push_xfer */

TEST_F(all, push_xfer_roundtrip_and_reset)
{
	size_t len = 2048;
	uint8_t *in = malloc(256 * len), *out = calloc(256, len);
	long long ioctls = sum_attr(4, "xfer_ioctls");
	struct dpu_set_t dpu;
	uint32_t i;
	size_t j;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	for (i = 0; i < 256; i++)
		for (j = 0; j < len; j++)
			in[i * len + j] = pat(i, 4096 + j, 11);
	DPU_FOREACH(self->set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, in + i * len));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(self->set, DPU_XFER_TO_DPU, HEAP, 4096, len,
					DPU_XFER_DEFAULT));
	EXPECT_EQ(ioctls + 4, sum_attr(4, "xfer_ioctls"));
	EXPECT_EQ(-1, check_dpus(&self->d, 4096, len, 11, false));
	/* the buffers were reset: a second push moves nothing */
	ioctls = sum_attr(4, "xfer_ioctls");
	ASSERT_EQ(DPU_OK, dpu_push_xfer(self->set, DPU_XFER_FROM_DPU, HEAP, 4096, len,
					DPU_XFER_DEFAULT));
	EXPECT_EQ(ioctls, sum_attr(4, "xfer_ioctls"));

	DPU_FOREACH(self->set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, out + i * len));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(self->set, DPU_XFER_FROM_DPU, HEAP, 4096, len,
					DPU_XFER_DEFAULT));
	EXPECT_EQ(0, memcmp(in, out, 256 * len));
	free(in);
	free(out);
}

TEST_F(all, push_xfer_no_reset_keeps_buffers)
{
	uint64_t v[256], back[256];
	long long ioctls;
	struct dpu_set_t dpu;
	uint32_t i;

	DPU_FOREACH(self->set, dpu, i) {
		v[i] = 0x1000 + i;
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, &v[i]));
	}
	ASSERT_EQ(DPU_OK, dpu_push_xfer(self->set, DPU_XFER_TO_DPU, HEAP, 0, 8,
					DPU_XFER_NO_RESET));
	for (i = 0; i < 256; i++)
		v[i] = 0x2000 + i;
	ioctls = sum_attr(4, "xfer_ioctls");
	/* no dpu_prepare_xfer: the same buffers again */
	ASSERT_EQ(DPU_OK, dpu_push_xfer(self->set, DPU_XFER_TO_DPU, HEAP, 8, 8,
					DPU_XFER_NO_RESET));
	EXPECT_EQ(ioctls + 4, sum_attr(4, "xfer_ioctls"));
	for (i = 0; i < 256; i++) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[i], HEAP, 8, &back[i], 8));
		ASSERT_EQ(0x2000 + i, back[i]);
		ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[i], HEAP, 0, &back[i], 8));
		ASSERT_EQ(0x1000 + i, back[i]);
	}
}

/* Only the DPUs with a prepared buffer take part. */
TEST_F(rank, push_xfer_some_dpus)
{
	uint64_t v = 0x77, zero = 0, back;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_prepare_xfer(self->d.dpu[5], &v));
	ASSERT_EQ(DPU_OK, dpu_prepare_xfer(self->d.dpu[60], &v));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(self->set, DPU_XFER_TO_DPU, HEAP, 0, 8,
					DPU_XFER_DEFAULT));
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[i], HEAP, 0, &back, 8));
		ASSERT_EQ(i == 5 || i == 60 ? v : zero, back);
	}
}

/* ------------------------------------------------------------ copy, broadcast */

TEST_F(all, copy_to_copy_from)
{
	uint8_t buf[1000 * 8], back[1000 * 8];
	long long ioctls = sum_attr(4, "xfer_ioctls");
	uint32_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 3 + 1);
	ASSERT_EQ(DPU_OK, dpu_copy_to(self->set, HEAP, 512, buf, sizeof(buf)));
	EXPECT_EQ(ioctls + 4, sum_attr(4, "xfer_ioctls"));	/* one per rank */
	for (i = 0; i < 256; i += 17) {
		memset(back, 0, sizeof(back));
		ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[i], HEAP, 512, back, sizeof(back)));
		ASSERT_EQ(0, memcmp(buf, back, sizeof(buf)));
	}
	/* a single DPU */
	memset(buf, 0x42, 64);
	ASSERT_EQ(DPU_OK, dpu_copy_to(self->d.dpu[100], HEAP, 512, buf, 64));
	ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[100], HEAP, 512, back, 64));
	EXPECT_EQ(0, memcmp(buf, back, 64));
	ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[99], HEAP, 512, back, 64));
	EXPECT_NE(0, memcmp(buf, back, 64));
}

TEST_F(all, copy_from_needs_one_dpu)
{
	uint64_t v;
	struct dpu_set_t rank;

	EXPECT_EQ(DPU_ERR_INVALID_DPU_SET, dpu_copy_from(self->set, HEAP, 0, &v, 8));
	DPU_RANK_FOREACH(self->set, rank)
		EXPECT_EQ(DPU_ERR_INVALID_DPU_SET, dpu_copy_from(rank, HEAP, 0, &v, 8));
}

TEST_F(all, broadcast_to)
{
	uint64_t buf[64], back[64];
	uint32_t i;

	for (i = 0; i < 64; i++)
		buf[i] = 0xabcdef00ULL + i;
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(self->set, HEAP, 1 << 20, buf, sizeof(buf),
					   DPU_XFER_DEFAULT));
	for (i = 0; i < 256; i++) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[i], HEAP, 1 << 20, back, sizeof(back)));
		ASSERT_EQ(0, memcmp(buf, back, sizeof(buf)));
	}
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS,
		  dpu_broadcast_to(self->set, HEAP, 4, buf, 8, DPU_XFER_DEFAULT));
}

/* ------------------------------------------------------------ dpu_load */

static int build_fixture(char *obj, size_t len)
{
	const char *dir = getenv("DPUSIM_SCRATCH");
	char cmd[1024];

	if (!dir || access(dir, W_OK) != 0)
		dir = "/tmp";
	snprintf(obj, len, "%s/xfer_program-%d.o", dir, (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "cc -c -O0 -fno-common -fno-toplevel-reorder -w tests/user/fixtures/xfer_program.c -o %s",
		 obj);
	return run_cmd(cmd);
}

TEST_F(rank, load_host_elf)
{
	struct dpu_program_t *prog = NULL;
	struct dpu_symbol_t in, out, scratch;
	uint64_t data[512], back[512];
	char obj[512];
	uint32_t i;

	ASSERT_EQ(0, build_fixture(obj, sizeof(obj)));
	ASSERT_EQ(DPU_OK, dpu_load(self->set, obj, &prog));
	unlink(obj);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(DPU_OK, dpu_get_symbol(prog, "input", &in));
	ASSERT_EQ(DPU_OK, dpu_get_symbol(prog, "output", &out));
	ASSERT_EQ(DPU_OK, dpu_get_symbol(prog, "scratch", &scratch));
	EXPECT_EQ(4096, in.size);
	EXPECT_EQ(2048, out.size);
	EXPECT_EQ(1001, scratch.size);
	EXPECT_LE(0x08000000, in.address);
	EXPECT_LE(0x08000000, out.address);
	EXPECT_EQ(DPU_ERR_UNKNOWN_SYMBOL, dpu_get_symbol(prog, "host_only", &in));

	/* a transfer to the symbol lands at its MRAM offset */
	for (i = 0; i < 512; i++)
		data[i] = 0x5000 + i;
	ASSERT_EQ(DPU_OK, dpu_copy_to(self->set, "output", 1024, data, 1024));
	ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[9], HEAP, out.address - 0x08000000 + 1024,
					back, 1024));
	EXPECT_EQ(0, memcmp(data, back, 1024));
	ASSERT_EQ(DPU_OK, dpu_copy_to(self->set, "input", 0, data, 4096));
	ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[63], "input", 0, back, 4096));
	EXPECT_EQ(0, memcmp(data, back, 4096));
	/* bounds of the symbol */
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS, dpu_copy_to(self->set, "output", 1024, data, 1032));
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS, dpu_copy_to(self->set, "scratch", 0, data, 1008));
	EXPECT_EQ(DPU_OK, dpu_copy_to(self->set, "scratch", 0, data, 1000));
	EXPECT_EQ(DPU_ERR_UNKNOWN_SYMBOL, dpu_copy_to(self->set, "host_only", 0, data, 8));
	/* the heap pointer still names the whole MRAM */
	EXPECT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[0], HEAP,
					sysfs_rank_attr(0, "mram_size") - 8, back, 8));
}

TEST_F(rank, load_bad_files)
{
	struct dpu_program_t *prog = NULL;

	EXPECT_EQ(DPU_ERR_ELF_NO_SUCH_FILE, dpu_load(self->set, "/nonexistent.o", &prog));
	EXPECT_EQ(DPU_ERR_ELF_INVALID_FILE,
		  dpu_load(self->set, "tests/user/fixtures/xfer_program.c", &prog));
	EXPECT_EQ(NULL, prog);
}

/* ------------------------------------------------------------ async */

TEST_F(all, async_then_sync)
{
	size_t len = 4096;
	uint8_t *host = calloc(256, len), *back = calloc(256, len);
	uint64_t v[256], vb[256];
	struct dpu_set_t dpu;
	struct sg_ctx c, cb;
	uint32_t i;

	ASSERT_NE(NULL, host);
	ASSERT_NE(NULL, back);
	sg_init(&c, host, 256, 3, len);
	sg_fill_host(&c, 0, 21);
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_TO_DPU, 0, len, &c, DPU_SG_XFER_ASYNC));
	DPU_FOREACH(self->set, dpu, i) {
		v[i] = i * 1000;
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, &v[i]));
	}
	ASSERT_EQ(DPU_OK, dpu_push_xfer(self->set, DPU_XFER_TO_DPU, HEAP, len, 8,
					DPU_XFER_ASYNC));
	/* jobs run in order: this read sees both writes */
	cb = c;
	cb.host = back;
	ASSERT_EQ(DPU_OK, sg_push(self->set, DPU_XFER_FROM_DPU, 0, len, &cb, DPU_SG_XFER_ASYNC));
	DPU_FOREACH(self->set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, &vb[i]));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(self->set, DPU_XFER_FROM_DPU, HEAP, len, 8,
					DPU_XFER_ASYNC));
	ASSERT_EQ(DPU_OK, dpu_sync(self->set));
	EXPECT_EQ(0, memcmp(host, back, 256 * len));
	EXPECT_EQ(0, memcmp(v, vb, sizeof(v)));
	EXPECT_EQ(DPU_OK, dpu_sync(self->set));
	free(host);
	free(back);
}

/*
 * dpusim.ko pins the host pages before it queues: an unmapped block is
 * reported by the ASYNC call itself, and nothing is left for dpu_sync.
 */
TEST_F(rank, async_error_returned_at_submit)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *host = calloc(64, 64), *hole;
	struct sg_ctx c;

	ASSERT_NE(NULL, host);
	hole = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	sg_init(&c, host, 64, 1, 64);
	c.bad_dpu = 7;
	c.bad_addr = hole;
	EXPECT_EQ(DPU_ERR_INVALID_MEMORY_TRANSFER,
		  sg_push(self->set, DPU_XFER_TO_DPU, 0, 64, &c, DPU_SG_XFER_ASYNC));
	/* validation errors still come back at once */
	EXPECT_EQ(DPU_ERR_INVALID_MRAM_ACCESS,
		  sg_push(self->set, DPU_XFER_TO_DPU, 4, 64, &c, DPU_SG_XFER_ASYNC));
	EXPECT_EQ(DPU_OK, dpu_sync(self->set));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	munmap(hole, page);
	free(host);
}

/* A synchronous transfer waits for the queued ones. */
TEST_F(rank, sync_call_after_async_sees_its_data)
{
	uint64_t v = 0x1234, back = 0;

	ASSERT_EQ(DPU_OK, dpu_broadcast_to(self->set, HEAP, 64, &v, 8, DPU_XFER_ASYNC));
	ASSERT_EQ(DPU_OK, dpu_copy_from(self->d.dpu[30], HEAP, 64, &back, 8));
	EXPECT_EQ(v, back);
	EXPECT_EQ(DPU_OK, dpu_sync(self->set));
}

/* dpu_free waits for queued work before the ranks are closed. */
TEST(free_waits_for_async_work)
{
	static uint8_t buf[256 << 10];
	struct dpu_set_t set;
	long long before;
	int i;

	before = sysfs_rank_attr(0, "xfer_ioctls");
	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(1, NULL, &set));
	memset(buf, 0x3c, sizeof(buf));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, HEAP, 0, buf, sizeof(buf),
						   DPU_XFER_ASYNC));
	ASSERT_EQ(DPU_OK, dpu_free(set));
	EXPECT_EQ(before + 16, sysfs_rank_attr(0, "xfer_ioctls"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "is_owned"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
}

/* ------------------------------------------------------------ over one ioctl */

/*
 * A transfer of more than DPUSIM_XFER_MAX_BYTES on one rank: 64 DPUs x
 * 20 MiB is 1280 MiB, which the library splits into two
 * DPUSIM_IOCTL_XFER calls (51 DPUs of 20 MiB fill 1020 MiB of the 1024,
 * then 13).  The SDK takes any transfer that fits the DPUs' MRAM.
 */
#define BIG_DPUS 64
#define BIG_LEN (20ULL << 20)

static uint64_t big_word(uint32_t dpu, uint64_t i)
{
	return (uint64_t)dpu << 48 ^ i * 0x9e3779b97f4a7c15ULL;
}

/*
 * Only for the longer timeout: the debug kernel (KASAN) copies 1280 MiB
 * each way in minutes, not seconds
 */
FIXTURE(big) {
	int unused;
};

FIXTURE_SETUP(big)
{
}

FIXTURE_TEARDOWN(big)
{
}

static long long mem_available(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/*
 * Little memory: every DPU holds the same two words (the rest of its
 * 20 MiB never written: a hole, read as zeros), and all 64 read into
 * one 20 MiB host buffer, so that whatever DPU writes it last, it must
 * hold those words and zeros.  The kernel moves 1280 MiB.
 */
TEST_F_TIMEOUT(big, push_xfer_over_one_ioctl_from_sparse_mram, 600)
{
	uint64_t w[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL }, i, bad = 0;
	uint64_t *buf = mmap(NULL, BIG_LEN, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dpu_set_t set, dpu;
	long long ioctls;
	uint32_t nr_ranks;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(DPU_OK, dpu_alloc(BIG_DPUS, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &nr_ranks));
	if (nr_ranks != 1)
		SKIP(goto out, "the module's ranks have fewer than %u DPUs", BIG_DPUS);
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, HEAP, 0, &w[0], 8, DPU_XFER_DEFAULT));
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, HEAP, BIG_LEN - 8, &w[1], 8, DPU_XFER_DEFAULT));
	memset(buf, 0xa5, BIG_LEN);
	DPU_FOREACH(set, dpu)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, buf));
	ioctls = sum_attr(4, "xfer_ioctls");
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_FROM_DPU, HEAP, 0, BIG_LEN,
					DPU_XFER_DEFAULT));
	EXPECT_EQ(ioctls + 2, sum_attr(4, "xfer_ioctls")) TH_LOG("ioctls for 1280 MiB");
	EXPECT_EQ(w[0], buf[0]);
	EXPECT_EQ(w[1], buf[BIG_LEN / 8 - 1]);
	for (i = 1; i < BIG_LEN / 8 - 1; i++)
		bad += buf[i] != 0;
	EXPECT_EQ(0, bad);
	/* the same, queued */
	memset(buf, 0xa5, BIG_LEN);
	DPU_FOREACH(set, dpu)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, buf));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_FROM_DPU, HEAP, 0, BIG_LEN,
					DPU_XFER_ASYNC));
	ASSERT_EQ(DPU_OK, dpu_sync(set));
	EXPECT_EQ(ioctls + 4, sum_attr(4, "xfer_ioctls"));
	EXPECT_EQ(w[0], buf[0]);
	EXPECT_EQ(w[1], buf[BIG_LEN / 8 - 1]);
	EXPECT_EQ(0, buf[BIG_LEN / 16]);
out:
	dpu_free(set);
	munmap(buf, BIG_LEN);
}

/*
 * 64 DPUs x 20 MiB of distinct data to the DPUs and back through one
 * host buffer of 1280 MiB: 1280 MiB resident in the module's budget and
 * as much on the host, so this needs a guest of 4 GiB (tools/vm-run
 * --mem 4G; with the default budget of half the RAM); it skips in a
 * smaller one and says so.
 */
TEST_F_TIMEOUT(big, push_xfer_over_one_ioctl_round_trip, 600)
{
	uint64_t total = BIG_DPUS * BIG_LEN, i, bad = 0, first = 0;
	long long budget = mram_budget_read(), avail = mem_available(), ioctls;
	struct dpu_set_t set, dpu;
	uint32_t nr_ranks, d;
	uint64_t *buf;

	if (budget < (long long)total + (8LL << 20) || avail < (long long)total * 2 + (256LL << 20))
		SKIP(return, "needs mram_budget over %llu MiB (it is %lld MiB) and %llu MiB available (%lld MiB): run the guest with --mem 4G",
		     (unsigned long long)(total >> 20) + 8, budget >> 20,
		     (unsigned long long)(total >> 19) + 256, avail >> 20);
	buf = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(DPU_OK, dpu_alloc(BIG_DPUS, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &nr_ranks));
	if (nr_ranks != 1) {
		dpu_free(set);
		munmap(buf, total);
		SKIP(return, "the module's ranks have fewer than %u DPUs", BIG_DPUS);
	}
	for (d = 0; d < BIG_DPUS; d++)
		for (i = 0; i < BIG_LEN / 8; i++)
			buf[d * (BIG_LEN / 8) + i] = big_word(d, i);
	DPU_FOREACH(set, dpu, d)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, buf + d * (BIG_LEN / 8)));
	ioctls = sum_attr(4, "xfer_ioctls");
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, HEAP, 0, BIG_LEN,
					DPU_XFER_DEFAULT));
	EXPECT_EQ(ioctls + 2, sum_attr(4, "xfer_ioctls")) TH_LOG("ioctls for 1280 MiB");
	EXPECT_EQ((long long)total, sum_attr(4, "mram_resident_bytes"));
	memset(buf, 0, total);
	DPU_FOREACH(set, dpu, d)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, buf + d * (BIG_LEN / 8)));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_FROM_DPU, HEAP, 0, BIG_LEN,
					DPU_XFER_DEFAULT));
	for (d = 0; d < BIG_DPUS; d++)
		for (i = 0; i < BIG_LEN / 8; i++)
			if (buf[d * (BIG_LEN / 8) + i] != big_word(d, i) && !bad++)
				first = d * (BIG_LEN / 8) + i;
	EXPECT_EQ(0, bad) TH_LOG("%llu words differ, the first: DPU %llu word %llu",
				 (unsigned long long)bad,
				 (unsigned long long)(first / (BIG_LEN / 8)),
				 (unsigned long long)(first % (BIG_LEN / 8)));
	dpu_free(set);
	munmap(buf, total);
}

/*
 * The module, loaded without mram_budget (as tools/vm-run does), gives
 * the budget half of the RAM (MemTotal is totalram_pages()), at least
 * 1 GiB: a guest of 4 GiB or more has more than the 1 GiB of before.
 */
TEST(budget_default_is_half_the_ram)
{
	long long budget = mram_budget_read(), total = -1, want;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lld kB", &total) == 1)
			break;
	fclose(f);
	ASSERT_LT(0, total);
	want = total * 1024 / 2 / 4096 * 4096;
	if (want < 1LL << 30)
		want = 1LL << 30;
	EXPECT_EQ(want, budget) TH_LOG("MemTotal %lld kB", total);
}

TEST_HARNESS_MAIN
