// SPDX-License-Identifier: MIT
/*
 * Unit tests of the tag-matching library (lib/dtm.c) without the kernel:
 *
 *  - the wire headers: dtm_tmh_build/_parse and dtm_rvh_build/_parse
 *    against the exact big-endian bytes, and round trips;
 *  - dtm_wc_opcode_str, dtm_wc_status_str, dtm_wc_read_tm_info;
 *  - the completion ring reader (lib/dtm_ring.h) on rings built in plain
 *    memory: every field, wrap-around of the u32 indexes, partial polls,
 *    INLINE data, the consumer published, -EOVERFLOW once per new overrun,
 *    a hostile header nr_entries / producer ignored;
 *  - the ioctl usage of every call, against a fake device: this program
 *    defines ioctl(), mmap(), munmap() and poll(), which take the place of
 *    libc's for the library it links statically; the "device" is an open
 *    /dev/null, every other descriptor goes to the real system calls.
 *    Covered: struct sizes and fields, the ring mapping, chunks of
 *    DPUSIM_TM_MAX_WR, bad_wr at nr_done, TAG_ADD handles written back,
 *    max_ops per call, the single send on the stack in one ioctl, the
 *    SRQ-side send, MRAM regions, EBUSY on a CQ in use, the pending
 *    overrun, dtm_get_cq_event, and dtm_close_device;
 *  - dpusim_discover_tm (dpusim list's tm line) against sysfs.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <dtm.h>
#include <uapi/dpusim.h>

#include "discovery.h"
#include "dtm_ring.h"
#include "internal.h"
#include "unit.h"

/* ------------------------------------------------------------ headers */

static void test_tmh(void)
{
	static const unsigned char want[16] = {
		0x01, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	};
	static const unsigned char raw[16] = {
		0x03, 0xaa, 0xbb, 0xcc, 0xde, 0xad, 0xbe, 0xef,
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	static const uint64_t tags[] = { 0, 1, 0xffffffffffffffffULL,
					 0x8000000000000000ULL,
					 0x0123456789abcdefULL };
	static const uint32_t ctxs[] = { 0, 1, 0xffffffffU, 0x80000001U };
	struct dtm_tmh h;
	enum dtm_tmh_op op;
	uint32_t app_ctx;
	uint64_t tag;
	unsigned int o, i, j;
	bool ok;

	memset(&h, 0xff, sizeof(h));
	dtm_tmh_build(&h, DTM_TMH_RNDV, 0x01020304U, 0x1122334455667788ULL);
	UNIT_CHECK("tmh build: big-endian bytes, reserved zeroed",
		   memcmp(&h, want, 16) == 0,
		   "%02x %02x %02x %02x | %02x %02x %02x %02x | %02x ... %02x",
		   ((unsigned char *)&h)[0], ((unsigned char *)&h)[1],
		   ((unsigned char *)&h)[2], ((unsigned char *)&h)[3],
		   ((unsigned char *)&h)[4], ((unsigned char *)&h)[5],
		   ((unsigned char *)&h)[6], ((unsigned char *)&h)[7],
		   ((unsigned char *)&h)[8], ((unsigned char *)&h)[15]);

	memcpy(&h, raw, 16);
	dtm_tmh_parse(&h, &op, &app_ctx, &tag);
	UNIT_CHECK("tmh parse from bytes",
		   op == DTM_TMH_EAGER && app_ctx == 0xdeadbeefU &&
		   tag == 0x8000000000000001ULL,
		   "op %d ctx %#x tag %#llx", (int)op, app_ctx,
		   (unsigned long long)tag);
	/* NULL outputs are skipped */
	app_ctx = 7;
	dtm_tmh_parse(&h, NULL, NULL, &tag);
	dtm_tmh_parse(&h, &op, NULL, NULL);
	UNIT_CHECK("tmh parse with NULL outputs",
		   op == DTM_TMH_EAGER && app_ctx == 7 &&
		   tag == 0x8000000000000001ULL, "op %d", (int)op);

	ok = true;
	for (o = DTM_TMH_NO_TAG; o <= DTM_TMH_EAGER; o++)
		for (i = 0; i < sizeof(ctxs) / sizeof(ctxs[0]); i++)
			for (j = 0; j < sizeof(tags) / sizeof(tags[0]); j++) {
				const unsigned char *b = (const void *)&h;

				dtm_tmh_build(&h, (enum dtm_tmh_op)o, ctxs[i],
					      tags[j]);
				dtm_tmh_parse(&h, &op, &app_ctx, &tag);
				if (op != (enum dtm_tmh_op)o ||
				    app_ctx != ctxs[i] || tag != tags[j] ||
				    b[0] != o || b[1] || b[2] || b[3] ||
				    b[4] != (uint8_t)(ctxs[i] >> 24) ||
				    b[7] != (uint8_t)ctxs[i] ||
				    b[8] != (uint8_t)(tags[j] >> 56) ||
				    b[15] != (uint8_t)tags[j])
					ok = false;
			}
	UNIT_CHECK("tmh round trips (every opcode, edge values)", ok,
		   "mismatch");
}

static void test_rvh(void)
{
	static const unsigned char want[16] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xa1, 0xb2, 0xc3, 0xd4, 0x00, 0x00, 0x10, 0x00,
	};
	struct dtm_rvh r;
	uint64_t va = 0;
	uint32_t rkey = 0, len = 0;
	unsigned int i;
	bool ok;

	memset(&r, 0xee, sizeof(r));
	dtm_rvh_build(&r, 0x0102030405060708ULL, 0xa1b2c3d4U, 0x1000);
	UNIT_CHECK("rvh build: big-endian bytes", memcmp(&r, want, 16) == 0,
		   "first byte %02x, rkey byte %02x, len bytes %02x%02x",
		   ((unsigned char *)&r)[0], ((unsigned char *)&r)[8],
		   ((unsigned char *)&r)[14], ((unsigned char *)&r)[15]);
	dtm_rvh_parse(&r, &va, &rkey, &len);
	UNIT_CHECK("rvh parse",
		   va == 0x0102030405060708ULL && rkey == 0xa1b2c3d4U &&
		   len == 0x1000, "va %#llx rkey %#x len %u",
		   (unsigned long long)va, rkey, len);
	len = 5;
	dtm_rvh_parse(&r, NULL, &rkey, NULL);
	UNIT_CHECK("rvh parse with NULL outputs", rkey == 0xa1b2c3d4U && len == 5,
		   "rkey %#x len %u", rkey, len);

	ok = true;
	for (i = 0; i < 64; i++) {
		uint64_t v = 0x9e3779b97f4a7c15ULL * (i + 1);
		uint32_t k = (uint32_t)(v >> 17), l = (uint32_t)v ^ i;

		dtm_rvh_build(&r, v, k, l);
		dtm_rvh_parse(&r, &va, &rkey, &len);
		if (va != v || rkey != k || len != l ||
		    ((unsigned char *)&r)[0] != (uint8_t)(v >> 56) ||
		    ((unsigned char *)&r)[11] != (uint8_t)k)
			ok = false;
	}
	UNIT_CHECK("rvh round trips", ok, "mismatch");
}

static void test_strings(void)
{
	static const struct { int v; const char *s; } ops[] = {
		{ DTM_WC_SEND, "SEND" }, { DTM_WC_RDMA_READ, "RDMA_READ" },
		{ DTM_WC_RECV, "RECV" }, { DTM_WC_TM_ADD, "TM_ADD" },
		{ DTM_WC_TM_DEL, "TM_DEL" }, { DTM_WC_TM_SYNC, "TM_SYNC" },
		{ DTM_WC_TM_RECV, "TM_RECV" }, { DTM_WC_TM_NO_TAG, "TM_NO_TAG" },
	};
	static const struct { int v; const char *s; } sts[] = {
		{ DTM_WC_SUCCESS, "SUCCESS" }, { DTM_WC_LOC_LEN_ERR, "LOC_LEN_ERR" },
		{ DTM_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR" },
		{ DTM_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR" },
		{ DTM_WC_GENERAL_ERR, "GENERAL_ERR" }, { DTM_WC_TM_ERR, "TM_ERR" },
		{ DTM_WC_TM_RNDV_INCOMPLETE, "TM_RNDV_INCOMPLETE" },
	};
	static const int bad_ops[] = { 1, 3, 127, 129, 135, 255, -1, 100000 };
	static const int bad_sts[] = { 2, 4, 6, 9, 11, 20, 24, 255, -1 };
	struct dtm_wc wc = { .tag = 0xfedcba9876543210ULL, .priv = 0xabcd };
	struct dtm_wc_tm_info info = { 0, 0 };
	char name[96];
	unsigned int i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const char *s = dtm_wc_opcode_str((enum dtm_wc_opcode)ops[i].v);

		snprintf(name, sizeof(name), "opcode %d is %s", ops[i].v, ops[i].s);
		UNIT_CHECK(name, s && strcmp(s, ops[i].s) == 0, "'%s'", s ? s : "(null)");
	}
	for (i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		const char *s = dtm_wc_opcode_str((enum dtm_wc_opcode)bad_ops[i]);

		snprintf(name, sizeof(name), "opcode %d is UNKNOWN", bad_ops[i]);
		UNIT_CHECK(name, s && strcmp(s, "UNKNOWN") == 0, "'%s'", s ? s : "(null)");
	}
	for (i = 0; i < sizeof(sts) / sizeof(sts[0]); i++) {
		const char *s = dtm_wc_status_str((enum dtm_wc_status)sts[i].v);

		snprintf(name, sizeof(name), "status %d is %s", sts[i].v, sts[i].s);
		UNIT_CHECK(name, s && strcmp(s, sts[i].s) == 0, "'%s'", s ? s : "(null)");
	}
	for (i = 0; i < sizeof(bad_sts) / sizeof(bad_sts[0]); i++) {
		const char *s = dtm_wc_status_str((enum dtm_wc_status)bad_sts[i]);

		snprintf(name, sizeof(name), "status %d is UNKNOWN", bad_sts[i]);
		UNIT_CHECK(name, s && strcmp(s, "UNKNOWN") == 0, "'%s'", s ? s : "(null)");
	}

	dtm_wc_read_tm_info(&wc, &info);
	UNIT_CHECK("dtm_wc_read_tm_info", info.tag == wc.tag && info.priv == wc.priv,
		   "tag %#llx priv %#x", (unsigned long long)info.tag, info.priv);
}

/* ------------------------------------------------------------ rings */

#define RING_BYTES(nr) (DPUSIM_TM_CQ_RING_ENTRIES + (size_t)(nr) * sizeof(struct dpusim_tm_cqe))

/* A ring of exactly its size, so that a read past it is a heap overflow. */
static void *ring_new(uint32_t nr)
{
	void *r = calloc(1, RING_BYTES(nr));

	if (!r) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	((struct dpusim_tm_cq_ring *)r)->nr_entries = nr;
	((struct dpusim_tm_cq_ring *)r)->entry_size = sizeof(struct dpusim_tm_cqe);
	return r;
}

static struct dpusim_tm_cq_ring *hdr(void *ring)
{
	return ring;
}

static struct dpusim_tm_cqe *slot(void *ring, uint32_t nr, uint32_t idx)
{
	return (struct dpusim_tm_cqe *)((char *)ring + DPUSIM_TM_CQ_RING_ENTRIES) +
	       (idx & (nr - 1));
}

/* Write completion number idx (fields derived from it) as the kernel does. */
static void ring_put(void *ring, uint32_t nr, uint32_t idx)
{
	struct dpusim_tm_cqe *e = slot(ring, nr, idx);
	unsigned int i;

	memset(e, 0, sizeof(*e));
	e->wr_id = 0x1000000000ULL + idx;
	e->tag = 0xa5a5000000000000ULL | idx;
	e->byte_len = idx % 100;
	e->priv = idx * 3;
	e->qp_num = 100 + idx;
	e->src_qp = 200 + idx;
	e->opcode = DPUSIM_TM_WC_TM_RECV;
	e->status = (uint8_t)(idx % 2 ? DPUSIM_TM_WC_LOC_LEN_ERR : DPUSIM_TM_WC_SUCCESS);
	e->wc_flags = DPUSIM_TM_WC_F_TM_MATCH | DPUSIM_TM_WC_F_TM_DATA_VALID;
	e->handle = 7000 + idx;
	for (i = 0; i < sizeof(e->data); i++)
		e->data[i] = (uint8_t)(idx + i);
	hdr(ring)->producer = idx + 1;
}

static bool wc_is(const struct dtm_wc *w, uint32_t idx)
{
	return w->wr_id == 0x1000000000ULL + idx &&
	       w->tag == (0xa5a5000000000000ULL | idx) &&
	       w->byte_len == idx % 100 && w->priv == idx * 3 &&
	       w->qp_num == 100 + idx && w->src_qp == 200 + idx &&
	       w->opcode == DTM_WC_TM_RECV &&
	       w->status == (idx % 2 ? DTM_WC_LOC_LEN_ERR : DTM_WC_SUCCESS) &&
	       w->wc_flags == (DTM_WC_TM_MATCH | DTM_WC_TM_DATA_VALID) &&
	       w->handle == 7000 + idx;
}

static void test_ring_basic(void)
{
	void *ring = ring_new(8);
	struct dtm_ring_state st = { .nr_entries = 8 };
	struct dtm_wc wc[8];
	uint32_t i;
	bool ok;
	int n;

	n = dtm_ring_poll(ring, &st, 8, wc);
	UNIT_CHECK("ring: empty polls 0", n == 0, "%d", n);
	n = dtm_ring_poll(ring, &st, 0, NULL);
	UNIT_CHECK("ring: num_entries 0 with NULL wc", n == 0, "%d", n);
	errno = 0;
	n = dtm_ring_poll(ring, &st, -1, wc);
	UNIT_CHECK("ring: negative num_entries is -EINVAL", n == -EINVAL && errno == EINVAL,
		   "%d errno %d", n, errno);
	n = dtm_ring_poll(ring, &st, 1, NULL);
	UNIT_CHECK("ring: NULL wc is -EINVAL", n == -EINVAL, "%d", n);

	for (i = 0; i < 3; i++)
		ring_put(ring, 8, i);
	memset(wc, 0, sizeof(wc));
	n = dtm_ring_poll(ring, &st, 8, wc);
	ok = n == 3;
	for (i = 0; ok && i < 3; i++)
		ok = wc_is(&wc[i], i);
	UNIT_CHECK("ring: three completions, every field", ok, "n %d, wr_id[0] %#llx",
		   n, (unsigned long long)wc[0].wr_id);
	UNIT_CHECK("ring: consumer published", hdr(ring)->consumer == 3 && st.consumer == 3,
		   "ring %u state %u", hdr(ring)->consumer, st.consumer);
	UNIT_CHECK("ring: not INLINE, data untouched", wc[1].data[0] == 0 && wc[1].data[63] == 0,
		   "data %u", wc[1].data[0]);
	n = dtm_ring_poll(ring, &st, 8, wc);
	UNIT_CHECK("ring: drained", n == 0, "%d", n);
	free(ring);

	/* a ring of one entry: the mask is 0 */
	ring = ring_new(1);
	st = (struct dtm_ring_state){ .nr_entries = 1 };
	ok = true;
	for (i = 0; i < 5; i++) {
		ring_put(ring, 1, i);
		n = dtm_ring_poll(ring, &st, 4, wc);
		if (n != 1 || !wc_is(&wc[0], i))
			ok = false;
	}
	UNIT_CHECK("ring: one entry, reused", ok && st.consumer == 5, "consumer %u", st.consumer);
	free(ring);

	/* a state that is not a ring */
	ring = ring_new(4);
	st = (struct dtm_ring_state){ .nr_entries = 0 };
	n = dtm_ring_poll(ring, &st, 4, wc);
	UNIT_CHECK("ring: nr_entries 0 refused", n == -EINVAL, "%d", n);
	st = (struct dtm_ring_state){ .nr_entries = 3 };
	n = dtm_ring_poll(ring, &st, 4, wc);
	UNIT_CHECK("ring: nr_entries 3 refused", n == -EINVAL, "%d", n);
	free(ring);
}

static void test_ring_wrap_partial(void)
{
	const uint32_t nr = 8, start = 0xfffffffdU;	/* 3 before the wrap */
	void *ring = ring_new(nr);
	struct dtm_ring_state st = { .nr_entries = nr, .consumer = start };
	struct dtm_wc wc[8];
	uint32_t i, got = 0;
	bool ok = true;
	int n;

	hdr(ring)->producer = start;
	hdr(ring)->consumer = start;
	for (i = 0; i < 7; i++)
		ring_put(ring, nr, start + i);	/* producer ends at start + 7 = 4 */
	UNIT_CHECK("wrap: producer wrapped", hdr(ring)->producer == 4, "%u", hdr(ring)->producer);

	/* 7 available, polled 2 + 2 + 2 + 1 */
	while ((n = dtm_ring_poll(ring, &st, 2, wc)) > 0) {
		for (i = 0; i < (uint32_t)n; i++)
			if (!wc_is(&wc[i], start + got + i))
				ok = false;
		if (hdr(ring)->consumer != start + got + (uint32_t)n)
			ok = false;
		got += (uint32_t)n;
		if (n > 2)
			ok = false;
	}
	UNIT_CHECK("wrap: partial polls across the u32 wrap, in order", ok && got == 7 && n == 0,
		   "got %u, last %d", got, n);
	UNIT_CHECK("wrap: consumer wrapped", st.consumer == 4 && hdr(ring)->consumer == 4,
		   "state %u ring %u", st.consumer, hdr(ring)->consumer);

	/* a full ring across the wrap: exactly nr, then nothing */
	for (i = 0; i < nr; i++)
		ring_put(ring, nr, 4 + i);
	n = dtm_ring_poll(ring, &st, 3, wc);
	ok = n == 3 && wc_is(&wc[0], 4) && wc_is(&wc[2], 6);
	n = dtm_ring_poll(ring, &st, 8, wc);
	ok = ok && n == 5 && wc_is(&wc[0], 7) && wc_is(&wc[4], 11);
	UNIT_CHECK("wrap: a full ring read in two polls", ok && dtm_ring_poll(ring, &st, 8, wc) == 0,
		   "n %d", n);
	free(ring);
}

static void test_ring_inline(void)
{
	void *ring = ring_new(4);
	struct dtm_ring_state st = { .nr_entries = 4 };
	struct dpusim_tm_cqe *e;
	struct dtm_wc wc[4];
	unsigned int i;
	bool ok;
	int n;

	/* 10 bytes inline: exactly 10 copied */
	ring_put(ring, 4, 0);
	e = slot(ring, 4, 0);
	e->opcode = DPUSIM_TM_WC_RECV;
	e->wc_flags = DPUSIM_TM_WC_F_INLINE;
	e->byte_len = 10;
	/* 200 bytes announced: 64 copied */
	ring_put(ring, 4, 1);
	e = slot(ring, 4, 1);
	e->wc_flags = DPUSIM_TM_WC_F_INLINE;
	e->byte_len = 200;
	/* 0 bytes inline: nothing copied */
	ring_put(ring, 4, 2);
	e = slot(ring, 4, 2);
	e->wc_flags = DPUSIM_TM_WC_F_INLINE;
	e->byte_len = 0;

	memset(wc, 0xcc, sizeof(wc));
	n = dtm_ring_poll(ring, &st, 4, wc);
	UNIT_CHECK("inline: three completions", n == 3, "%d", n);
	ok = wc[0].byte_len == 10 && wc[0].wc_flags == DTM_WC_INLINE &&
	     wc[0].opcode == DTM_WC_RECV;
	for (i = 0; i < 10; i++)
		ok = ok && wc[0].data[i] == (uint8_t)i;
	for (; i < 64; i++)
		ok = ok && wc[0].data[i] == 0xcc;
	UNIT_CHECK("inline: byte_len 10 copies 10 bytes", ok, "data[9] %u data[10] %#x",
		   wc[0].data[9], wc[0].data[10]);
	ok = wc[1].byte_len == 200;
	for (i = 0; i < 64; i++)
		ok = ok && wc[1].data[i] == (uint8_t)(1 + i);
	UNIT_CHECK("inline: byte_len 200 copies 64 bytes", ok, "data[63] %u", wc[1].data[63]);
	ok = true;
	for (i = 0; i < 64; i++)
		ok = ok && wc[2].data[i] == 0xcc;
	UNIT_CHECK("inline: byte_len 0 copies nothing", ok, "data[0] %#x", wc[2].data[0]);

	/* not INLINE: the entry's data is not copied */
	ring_put(ring, 4, 3);
	memset(wc, 0xcc, sizeof(wc));
	n = dtm_ring_poll(ring, &st, 4, wc);
	ok = n == 1;
	for (i = 0; i < 64; i++)
		ok = ok && wc[0].data[i] == 0xcc;
	UNIT_CHECK("inline: without the flag, data untouched", ok, "n %d data[0] %#x", n,
		   wc[0].data[0]);
	free(ring);
}

static void test_ring_overflow(void)
{
	void *ring = ring_new(4);
	struct dtm_ring_state st = { .nr_entries = 4 };
	struct dtm_wc wc[4];
	int n, n2;

	hdr(ring)->overruns = 1;
	hdr(ring)->flags = DPUSIM_TM_CQ_F_OVERRUN;
	errno = 0;
	n = dtm_ring_poll(ring, &st, 4, wc);
	UNIT_CHECK("overflow: empty ring, new overrun: -EOVERFLOW",
		   n == -EOVERFLOW && errno == EOVERFLOW, "%d errno %d", n, errno);
	n = dtm_ring_poll(ring, &st, 4, wc);
	UNIT_CHECK("overflow: reported once", n == 0, "%d", n);

	/* entries first, then the overrun */
	ring_put(ring, 4, 0);
	ring_put(ring, 4, 1);
	hdr(ring)->overruns = 2;
	n = dtm_ring_poll(ring, &st, 1, wc);
	n2 = dtm_ring_poll(ring, &st, 4, wc + 1);
	UNIT_CHECK("overflow: the completions before it come first",
		   n == 1 && n2 == 1 && wc_is(&wc[0], 0) && wc_is(&wc[1], 1), "%d %d", n, n2);
	n = dtm_ring_poll(ring, &st, 4, wc);
	n2 = dtm_ring_poll(ring, &st, 4, wc);
	UNIT_CHECK("overflow: then -EOVERFLOW once", n == -EOVERFLOW && n2 == 0, "%d %d", n, n2);

	/* num_entries 0 does not consume the report */
	hdr(ring)->overruns = 3;
	n = dtm_ring_poll(ring, &st, 0, wc);
	n2 = dtm_ring_poll(ring, &st, 4, wc);
	UNIT_CHECK("overflow: num_entries 0 leaves it", n == 0 && n2 == -EOVERFLOW, "%d %d", n, n2);

	/* the counter wrapping around is still a change */
	hdr(ring)->overruns = 0;
	st.last_overruns = 0xffffffffU;
	n = dtm_ring_poll(ring, &st, 4, wc);
	UNIT_CHECK("overflow: counter wrap", n == -EOVERFLOW && st.last_overruns == 0, "%d", n);
	free(ring);
}

static void test_ring_hostile(void)
{
	const uint32_t nr = 4;
	void *ring = ring_new(nr);
	struct dtm_ring_state st = { .nr_entries = nr };
	struct dtm_wc wc[16];
	uint32_t i;
	bool ok;
	int n;

	/* the header's nr_entries says 2^20 (or 0, or 3): ignored */
	for (i = 0; i < 3; i++)
		ring_put(ring, nr, i);
	hdr(ring)->nr_entries = 1U << 20;
	hdr(ring)->entry_size = 1;
	n = dtm_ring_poll(ring, &st, 2, wc);
	hdr(ring)->nr_entries = 0;
	ok = n == 2 && wc_is(&wc[0], 0) && wc_is(&wc[1], 1);
	n = dtm_ring_poll(ring, &st, 2, wc);
	ok = ok && n == 1 && wc_is(&wc[0], 2);
	hdr(ring)->nr_entries = 3;
	for (i = 3; i < 7; i++)		/* slots 3, 0, 1, 2 */
		ring_put(ring, nr, i);
	n = dtm_ring_poll(ring, &st, 16, wc);
	ok = ok && n == 4 && wc_is(&wc[0], 3) && wc_is(&wc[1], 4) && wc_is(&wc[3], 6);
	UNIT_CHECK("hostile: header nr_entries ignored", ok, "n %d", n);

	/* a producer far ahead: never more than a ring's worth */
	hdr(ring)->producer = st.consumer + 1000;
	n = dtm_ring_poll(ring, &st, 16, wc);
	UNIT_CHECK("hostile: producer 1000 ahead reads at most nr_entries", n == (int)nr,
		   "%d", n);
	/* a producer behind the consumer: as far ahead as it gets */
	hdr(ring)->producer = st.consumer - 1;
	n = dtm_ring_poll(ring, &st, 16, wc);
	UNIT_CHECK("hostile: producer behind reads at most nr_entries", n == (int)nr,
		   "%d", n);

	/* the ring's consumer field overwritten: the library keeps its own */
	hdr(ring)->producer = st.consumer + 1;
	ring_put(ring, nr, st.consumer);
	hdr(ring)->consumer = 12345;
	n = dtm_ring_poll(ring, &st, 16, wc);
	UNIT_CHECK("hostile: the library's consumer, not the ring's",
		   n == 1 && hdr(ring)->consumer == st.consumer, "n %d ring %u state %u", n,
		   hdr(ring)->consumer, st.consumer);
	free(ring);
}

/* ------------------------------------------------------------ fake device */

#define FAKE_MAX_CQ	8
#define FAKE_LOG	16384

struct fake_cq {
	bool used;		/* handle allocated */
	bool live;		/* not destroyed */
	bool mapped;
	bool unmapped_after_destroy;
	uint32_t nr;
	uint32_t users;
	void *ring;
	size_t size;
	uint32_t prod;
};

static struct {
	int fd;				/* the "device"; -1: none */
	unsigned int ioctls;		/* on the device */
	unsigned long last_cmd;
	bool overrun_pending;		/* next ioctl: EOVERFLOW, nothing written */
	bool poll_err;			/* poll says POLLERR, whatever the ioctls do */
	bool bad_size;			/* a struct arrived with a wrong size */
	bool bad_reserved;		/* a must-be-zero field was not */
	/* posts */
	unsigned int posts;
	uint32_t post_nr[64];
	uint32_t last_flags, last_handle, last_remote_qpn;
	const void *last_wrs;
	uint32_t wr_seen;		/* work requests carried out, all calls */
	uint32_t fail_at;		/* fail the wr with this global index */
	int fail_errno;			/* 0: never */
	uint64_t wr_ids[FAKE_LOG];
	uint32_t wr_opcode[FAKE_LOG];
	uint32_t wr_handle[FAKE_LOG];	/* DEL: the handle received */
	uint64_t wr_sg[FAKE_LOG];
	uint32_t wr_num_sge[FAKE_LOG];
	struct dpusim_tm_send_wr last_send;
	uint32_t next_tag_handle;
	/* objects */
	struct fake_cq cq[FAKE_MAX_CQ + 1];	/* handles 1 .. FAKE_MAX_CQ */
	uint32_t srq_cq[8], qp_cq[8];
	uint32_t nr_srq, nr_qp, next_key, mrs;
	struct dpusim_tm_reg_mr last_mr;
	struct dpusim_tm_create_srq last_srq;
	struct dpusim_tm_connect last_connect;
	unsigned int mmaps, munmaps;
	int last_prot, last_mflags;
} fk = { .fd = -1 };

static struct fake_cq *fake_cq_of(uint32_t handle)
{
	if (handle < 1 || handle > FAKE_MAX_CQ || !fk.cq[handle].used ||
	    !fk.cq[handle].live)
		return NULL;
	return &fk.cq[handle];
}

/* The "kernel" writes a completion to a CQ's ring. */
static void fake_push(uint32_t handle, uint64_t wr_id)
{
	struct fake_cq *c = &fk.cq[handle];
	struct dpusim_tm_cqe *e = slot(c->ring, c->nr, c->prod);

	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->opcode = DPUSIM_TM_WC_RECV;
	c->prod++;
	__atomic_store_n(&hdr(c->ring)->producer, c->prod, __ATOMIC_RELEASE);
}

static int fake_post(unsigned long cmd, struct dpusim_tm_post *p)
{
	uint32_t i;
	int ret = 0;

	if (p->size != sizeof(*p))
		fk.bad_size = true;
	if (!p->nr_wr || p->nr_wr > DPUSIM_TM_MAX_WR)
		return p->nr_wr ? -E2BIG : -EINVAL;
	if (cmd != DPUSIM_IOCTL_TM_POST_SEND && (p->flags || p->remote_qpn))
		fk.bad_reserved = true;
	if (fk.posts < 64)
		fk.post_nr[fk.posts] = p->nr_wr;
	fk.posts++;
	fk.last_flags = p->flags;
	fk.last_handle = p->handle;
	fk.last_remote_qpn = p->remote_qpn;
	fk.last_wrs = (const void *)(uintptr_t)p->wrs;
	for (i = 0; i < p->nr_wr; i++, fk.wr_seen++) {
		uint32_t g = fk.wr_seen;

		if (fk.fail_errno && g == fk.fail_at) {
			ret = -fk.fail_errno;
			break;
		}
		if (cmd == DPUSIM_IOCTL_TM_POST_SRQ_OPS) {
			struct dpusim_tm_ops_wr *w = (struct dpusim_tm_ops_wr *)(uintptr_t)p->wrs + i;

			if (w->__reserved)
				fk.bad_reserved = true;
			if (g < FAKE_LOG) {
				fk.wr_ids[g] = w->wr_id;
				fk.wr_opcode[g] = w->opcode;
				fk.wr_handle[g] = w->handle;
				fk.wr_sg[g] = w->sg_list;
				fk.wr_num_sge[g] = w->num_sge;
			}
			if (w->opcode == DPUSIM_TM_WR_TAG_ADD)
				w->handle = ++fk.next_tag_handle;
		} else if (cmd == DPUSIM_IOCTL_TM_POST_SRQ_RECV) {
			const struct dpusim_tm_recv_wr *w =
				(const struct dpusim_tm_recv_wr *)(uintptr_t)p->wrs + i;

			if (w->__reserved)
				fk.bad_reserved = true;
			if (g < FAKE_LOG) {
				fk.wr_ids[g] = w->wr_id;
				fk.wr_sg[g] = w->sg_list;
				fk.wr_num_sge[g] = w->num_sge;
			}
		} else {
			const struct dpusim_tm_send_wr *w =
				(const struct dpusim_tm_send_wr *)(uintptr_t)p->wrs + i;

			if (w->__reserved || w->__reserved2)
				fk.bad_reserved = true;
			if (g < FAKE_LOG) {
				fk.wr_ids[g] = w->wr_id;
				fk.wr_sg[g] = w->sg_list;
				fk.wr_num_sge[g] = w->num_sge;
			}
			fk.last_send = *w;
		}
	}
	p->nr_done = i;
	return ret;
}

static int fake_ioctl(unsigned long cmd, void *arg)
{
	uint32_t size = *(uint32_t *)arg;
	uint32_t h;

	fk.ioctls++;
	fk.last_cmd = cmd;
	if (fk.overrun_pending) {
		fk.overrun_pending = false;
		return -EOVERFLOW;
	}
	switch (cmd) {
	case DPUSIM_IOCTL_TM_QUERY: {
		struct dpusim_tm_query *q = arg;

		if (size != sizeof(*q))
			fk.bad_size = true;
		*q = (struct dpusim_tm_query){
			.size = sizeof(*q), .max_num_tags = 11, .max_ops = 12,
			.max_sge = 13, .max_rndv_hdr_size = 14, .max_srq_wr = 15,
			.max_cqe = 16, .max_inline = 17, .max_qp_recv = 18,
			.max_msg = 19, .cap_flags = DPUSIM_TM_CAP_RC,
		};
		return 0;
	}
	case DPUSIM_IOCTL_TM_REG_MR: {
		struct dpusim_tm_reg_mr *r = arg;

		if (size != sizeof(*r))
			fk.bad_size = true;
		if (r->__reserved)
			fk.bad_reserved = true;
		fk.last_mr = *r;
		r->lkey = r->rkey = ++fk.next_key;
		fk.mrs++;
		return 0;
	}
	case DPUSIM_IOCTL_TM_DEREG_MR:
	case DPUSIM_IOCTL_TM_DESTROY_CQ:
	case DPUSIM_IOCTL_TM_DESTROY_SRQ:
	case DPUSIM_IOCTL_TM_DESTROY_QP: {
		struct dpusim_tm_destroy *d = arg;

		if (size != sizeof(*d))
			fk.bad_size = true;
		if (d->flags || d->__reserved)
			fk.bad_reserved = true;
		if (cmd == DPUSIM_IOCTL_TM_DEREG_MR) {
			if (!d->handle || d->handle > fk.next_key)
				return -ENOENT;
			fk.mrs--;
			return 0;
		}
		if (cmd == DPUSIM_IOCTL_TM_DESTROY_CQ) {
			struct fake_cq *c = fake_cq_of(d->handle);

			if (!c)
				return -ENOENT;
			if (c->users)
				return -EBUSY;
			c->live = false;
			return 0;
		}
		if (cmd == DPUSIM_IOCTL_TM_DESTROY_SRQ) {
			if (d->handle < 1 || d->handle > fk.nr_srq || !fk.srq_cq[d->handle])
				return -ENOENT;
			fk.cq[fk.srq_cq[d->handle]].users--;
			fk.srq_cq[d->handle] = 0;
			return 0;
		}
		if (d->handle < 1 || d->handle > fk.nr_qp || !fk.qp_cq[d->handle])
			return -ENOENT;
		fk.cq[fk.qp_cq[d->handle]].users--;
		fk.qp_cq[d->handle] = 0;
		return 0;
	}
	case DPUSIM_IOCTL_TM_CREATE_CQ: {
		struct dpusim_tm_create_cq *c = arg;
		struct fake_cq *q;
		uint32_t nr = 1;

		if (size != sizeof(*c))
			fk.bad_size = true;
		if (c->flags)
			fk.bad_reserved = true;
		if (!c->cqe)
			return -EINVAL;
		if (c->cqe > DPUSIM_TM_MAX_CQE)
			return -E2BIG;
		for (h = 1; h <= FAKE_MAX_CQ && fk.cq[h].used; h++)
			;
		if (h > FAKE_MAX_CQ)
			return -ENOSPC;
		while (nr < c->cqe)
			nr <<= 1;
		q = &fk.cq[h];
		memset(q, 0, sizeof(*q));
		q->size = (RING_BYTES(nr) + 4095) & ~(size_t)4095;
		q->ring = aligned_alloc(4096, q->size);
		if (!q->ring)
			return -ENOMEM;
		memset(q->ring, 0, q->size);
		hdr(q->ring)->nr_entries = nr;
		hdr(q->ring)->entry_size = sizeof(struct dpusim_tm_cqe);
		q->nr = nr;
		q->used = q->live = true;
		c->cqe = nr;
		c->handle = h;
		c->mmap_offset = (uint64_t)h << 12;
		c->mmap_size = q->size;
		return 0;
	}
	case DPUSIM_IOCTL_TM_CREATE_SRQ: {
		struct dpusim_tm_create_srq *s = arg;

		if (size != sizeof(*s))
			fk.bad_size = true;
		if (s->flags || s->__reserved)
			fk.bad_reserved = true;
		if (!fake_cq_of(s->cq_handle))
			return -ENOENT;
		if (fk.nr_srq >= 7)
			return -ENOSPC;
		fk.last_srq = *s;
		fk.srq_cq[++fk.nr_srq] = s->cq_handle;
		fk.cq[s->cq_handle].users++;
		s->handle = fk.nr_srq;
		s->srq_num = 500 + fk.nr_srq;
		return 0;
	}
	case DPUSIM_IOCTL_TM_CREATE_QP: {
		struct dpusim_tm_create_qp *q = arg;

		if (size != sizeof(*q))
			fk.bad_size = true;
		if (q->flags)
			fk.bad_reserved = true;
		if (!fake_cq_of(q->cq_handle))
			return -ENOENT;
		if (fk.nr_qp >= 7)
			return -ENOSPC;
		fk.qp_cq[++fk.nr_qp] = q->cq_handle;
		fk.cq[q->cq_handle].users++;
		q->handle = fk.nr_qp;
		q->qp_num = 900 + fk.nr_qp;
		return 0;
	}
	case DPUSIM_IOCTL_TM_CONNECT: {
		struct dpusim_tm_connect *c = arg;

		if (size != sizeof(*c))
			fk.bad_size = true;
		if (c->flags)
			fk.bad_reserved = true;
		fk.last_connect = *c;
		return 0;
	}
	case DPUSIM_IOCTL_TM_POST_SRQ_OPS:
	case DPUSIM_IOCTL_TM_POST_SRQ_RECV:
	case DPUSIM_IOCTL_TM_POST_SEND:
		return fake_post(cmd, arg);
	}
	return -ENOTTY;
}

/* These take the place of libc's for the library linked into this test. */
int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	long r;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fk.fd >= 0 && fd == fk.fd) {
		r = fake_ioctl(request, arg);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return 0;
	}
	return (int)syscall(SYS_ioctl, fd, request, arg);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fk.fd >= 0 && fd == fk.fd) {
		uint64_t h = (uint64_t)off >> 12;
		struct fake_cq *c;

		fk.mmaps++;
		fk.last_prot = prot;
		fk.last_mflags = flags;
		if ((off & 4095) || h > FAKE_MAX_CQ || !(c = fake_cq_of((uint32_t)h)) ||
		    len != c->size || !(flags & MAP_SHARED)) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		c->mapped = true;
		return c->ring;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
	unsigned int h;

	for (h = 1; h <= FAKE_MAX_CQ; h++)
		if (fk.cq[h].used && fk.cq[h].ring == addr && fk.cq[h].mapped) {
			fk.munmaps++;
			if (len != fk.cq[h].size)
				fk.bad_size = true;
			fk.cq[h].unmapped_after_destroy = !fk.cq[h].live;
			fk.cq[h].mapped = false;
			return 0;
		}
	return (int)syscall(SYS_munmap, addr, len);
}

/* glibc declares poll's fds write-only (access attribute); they are read */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	if (fk.fd >= 0 && nfds == 1 && fds[0].fd == fk.fd) {
		unsigned int h;

		fds[0].revents = 0;
		if (fk.overrun_pending || fk.poll_err)
			fds[0].revents |= POLLIN | POLLERR;
		for (h = 1; h <= FAKE_MAX_CQ; h++)
			if (fk.cq[h].used && fk.cq[h].mapped &&
			    __atomic_load_n(&hdr(fk.cq[h].ring)->consumer, __ATOMIC_ACQUIRE) !=
			    fk.cq[h].prod)
				fds[0].revents |= POLLIN;
		if (fds[0].revents)
			return 1;
		if (timeout > 0) {
			struct timespec ts = { timeout / 1000, (timeout % 1000) * 1000000L };

			nanosleep(&ts, NULL);
		}
		return 0;	/* a timeout < 0 is not used by these tests */
	}
	if (timeout < 0)
		return ppoll(fds, nfds, NULL, NULL);
	{
		struct timespec ts = { timeout / 1000, (timeout % 1000) * 1000000L };

		return ppoll(fds, nfds, &ts, NULL);
	}
}
#pragma GCC diagnostic pop

/* Is p on this thread's stack, near here? (the fast path uses no heap) */
static bool near_stack(const void *p)
{
	char here;
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)&here;

	return (a > b ? a - b : b - a) < 64 * 1024;
}

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ API tests */

static void test_api_no_device(void)
{
	struct dpu_set_t ranks_set = { .kind = DPU_SET_RANKS };
	struct dtm_send_wr swr = { 0 };
	struct dtm_context *ctx;
	struct dtm_wc wc;
	int r;

	errno = 0;
	ctx = dtm_open_device("/nonexistent/dpusim/tm");
	UNIT_CHECK("open: a missing device is NULL with errno ENOENT",
		   !ctx && errno == ENOENT, "errno %d", errno);
	errno = 0;
	r = dtm_poll_cq(NULL, 1, &wc);
	UNIT_CHECK("poll_cq NULL: -EINVAL and errno", r == -EINVAL && errno == EINVAL, "%d", r);
	r = dtm_post_send(NULL, &swr, NULL);
	UNIT_CHECK("post_send NULL qp: EINVAL (positive)", r == EINVAL, "%d", r);
	r = dtm_close_device(NULL);
	UNIT_CHECK("close NULL: -EINVAL", r == -EINVAL, "%d", r);
	r = dtm_context_fd(NULL);
	UNIT_CHECK("context_fd NULL: -EINVAL", r == -EINVAL, "%d", r);
	errno = 0;
	UNIT_CHECK("reg_mr_mram NULL ctx: EINVAL",
		   !dtm_reg_mr_mram(NULL, ranks_set, 0, 8, 0) && errno == EINVAL, "errno %d", errno);

	/* a device that is not the tm device: the ioctls fail, cleanly */
	ctx = dtm_open_device("/dev/null");
	UNIT_CHECK("open /dev/null", ctx != NULL, "errno %d", errno);
	if (ctx) {
		struct dtm_device_attr a;

		errno = 0;
		r = dtm_query_device(ctx, &a);
		UNIT_CHECK("query on /dev/null: -ENOTTY, errno set",
			   r == -ENOTTY && errno == ENOTTY, "%d errno %d", r, errno);
		errno = 0;
		UNIT_CHECK("create_cq on /dev/null: NULL, errno ENOTTY",
			   !dtm_create_cq(ctx, 4) && errno == ENOTTY, "errno %d", errno);
		UNIT_CHECK("close /dev/null context", dtm_close_device(ctx) == 0, "failed");
	}
}

static void test_api_fake(void)
{
	static struct dtm_ops_wr ops[10000];
	static struct dtm_recv_wr rwr[9000];
	struct dtm_sge sge[2] = { { 0x1000, 64, 3 }, { 0x2000, 32, 4 } };
	struct dtm_send_wr swr[20], *sbad;
	struct dtm_ops_wr *obad;
	struct dtm_recv_wr *rbad;
	struct dtm_context *ctx;
	struct dtm_device_attr attr;
	struct dtm_cq *cq, *cq2, *ev;
	struct dtm_srq *srq, *srq2;
	struct dtm_qp *qp;
	struct dtm_mr *mr, *mr2, *mram;
	struct dpu_rank_t rank = { .fd = 42, .nr_dpus = 8 };
	struct dpu_t dpus[8];
	struct dpu_set_t dset;
	struct dtm_wc wc[4];
	unsigned int before, i;
	char buf[256];
	int64_t t0;
	bool ok;
	int r;

	ctx = dtm_open_device("/dev/null");
	if (!ctx) {
		unit_fail("fake device", "cannot open /dev/null: errno %d", errno);
		return;
	}
	fk.fd = dtm_context_fd(ctx);

	/* query */
	r = dtm_query_device(ctx, &attr);
	UNIT_CHECK("query: every field",
		   r == 0 && attr.max_num_tags == 11 && attr.max_ops == 12 && attr.max_sge == 13 &&
		   attr.max_rndv_hdr_size == 14 && attr.max_srq_wr == 15 && attr.max_cqe == 16 &&
		   attr.max_inline == 17 && attr.max_qp_recv == 18 && attr.max_msg == 19 &&
		   attr.flags == DTM_TM_CAP_RC, "r %d", r);

	/* CQs: create, map, the kernel's nr_entries */
	before = fk.ioctls;
	errno = 0;
	UNIT_CHECK("create_cq 0: EINVAL, no ioctl",
		   !dtm_create_cq(ctx, 0) && errno == EINVAL && fk.ioctls == before, "errno %d", errno);
	UNIT_CHECK("create_cq -1: EINVAL", !dtm_create_cq(ctx, -1) && errno == EINVAL, "errno %d",
		   errno);
	cq = dtm_create_cq(ctx, 5);
	UNIT_CHECK("create_cq 5: mapped shared, read-write", cq && fk.cq[1].mapped && fk.mmaps == 1 &&
		   fk.last_prot == (PROT_READ | PROT_WRITE) && fk.last_mflags == MAP_SHARED,
		   "cq %p mapped %d prot %d flags %d", (void *)cq, fk.cq[1].mapped, fk.last_prot,
		   fk.last_mflags);
	if (!cq)
		return;
	/* the kernel's ring has 8 entries; a header saying 2 is ignored */
	hdr(fk.cq[1].ring)->nr_entries = 2;
	for (i = 0; i < 6; i++)
		fake_push(1, 40 + i);
	r = dtm_poll_cq(cq, 4, wc);
	ok = r == 4 && wc[0].wr_id == 40 && wc[3].wr_id == 43;
	r = dtm_poll_cq(cq, 4, wc);
	ok = ok && r == 2 && wc[0].wr_id == 44 && wc[1].wr_id == 45;
	UNIT_CHECK("poll_cq: reads the mapped ring with the kernel's size", ok, "r %d", r);
	hdr(fk.cq[1].ring)->overruns = 1;
	r = dtm_poll_cq(cq, 4, wc);
	UNIT_CHECK("poll_cq: -EOVERFLOW once", r == -EOVERFLOW && dtm_poll_cq(cq, 4, wc) == 0,
		   "%d", r);

	/* SRQ, QP */
	errno = 0;
	UNIT_CHECK("create_srq without a CQ: EINVAL",
		   !dtm_create_srq(ctx, &(struct dtm_srq_init_attr){ .max_ops = 1 }) &&
		   errno == EINVAL, "errno %d", errno);
	srq = dtm_create_srq(ctx, &(struct dtm_srq_init_attr){
		.cq = cq, .max_num_tags = 64, .max_ops = 3, .max_wr = 32, .max_sge = 2 });
	UNIT_CHECK("create_srq", srq && srq->srq_num == 501 && srq->cq == cq && srq->context == ctx &&
		   fk.last_srq.max_num_tags == 64 && fk.last_srq.max_ops == 3 &&
		   fk.last_srq.max_wr == 32 && fk.last_srq.max_sge == 2 && fk.last_srq.cq_handle == 1,
		   "srq %p", (void *)srq);
	srq2 = dtm_create_srq(ctx, &(struct dtm_srq_init_attr){
		.cq = cq, .max_num_tags = 16384, .max_ops = 16384, .max_wr = 16384, .max_sge = 1 });
	qp = dtm_create_qp(ctx, &(struct dtm_qp_init_attr){ .cq = cq, .max_sge = 2 });
	UNIT_CHECK("create_qp", qp && qp->qp_num == 901 && qp->cq == cq, "qp %p", (void *)qp);
	if (!srq || !srq2 || !qp)
		return;
	r = dtm_connect(qp, 777);
	UNIT_CHECK("connect", r == 0 && fk.last_connect.qp_handle == qp->handle &&
		   fk.last_connect.srq_num == 777, "%d", r);

	/* a CQ in use: EBUSY, everything intact */
	before = fk.munmaps;
	errno = 0;
	r = dtm_destroy_cq(cq);
	fake_push(1, 99);
	UNIT_CHECK("destroy_cq in use: -EBUSY, still mapped and pollable",
		   r == -EBUSY && errno == EBUSY && fk.munmaps == before &&
		   dtm_poll_cq(cq, 4, wc) == 1 && wc[0].wr_id == 99, "%d", r);

	/* ops: max_ops 3 of 5, ENOMEM at the 4th, handles written back */
	memset(ops, 0, sizeof(ops));
	for (i = 0; i < 5; i++) {
		ops[i].wr_id = i;
		ops[i].next = i < 4 ? &ops[i + 1] : NULL;
		ops[i].opcode = DTM_WR_TAG_ADD;
		ops[i].tm.handle = 0xdead;
		ops[i].tm.add.sg_list = sge;
		ops[i].tm.add.num_sge = 1;
	}
	fk.posts = 0;
	obad = NULL;
	r = dtm_post_srq_ops(srq, ops, &obad);
	UNIT_CHECK("ops over max_ops: ENOMEM, bad_wr = the 4th, one ioctl of 3",
		   r == ENOMEM && errno == ENOMEM && obad == &ops[3] && fk.posts == 1 &&
		   fk.post_nr[0] == 3 && fk.last_handle == srq->handle,
		   "r %d bad %td posts %u", r, obad ? obad - ops : -1, fk.posts);
	UNIT_CHECK("ops: ADD handles written back for those carried out",
		   ops[0].tm.handle == 1 && ops[1].tm.handle == 2 && ops[2].tm.handle == 3 &&
		   ops[3].tm.handle == 0xdead && ops[4].tm.handle == 0xdead,
		   "%u %u %u %u", ops[0].tm.handle, ops[1].tm.handle, ops[2].tm.handle,
		   ops[3].tm.handle);
	UNIT_CHECK("ops: sg list passed as the user's pointer",
		   fk.wr_sg[fk.wr_seen - 1] == (uintptr_t)sge && fk.wr_num_sge[fk.wr_seen - 1] == 1,
		   "sg %#llx", (unsigned long long)fk.wr_sg[fk.wr_seen - 1]);

	/* 10000 mixed ops: 4096 + 4096 + 1808, in order */
	memset(ops, 0, sizeof(ops));
	for (i = 0; i < 10000; i++) {
		ops[i].wr_id = 100000 + i;
		ops[i].next = i < 9999 ? &ops[i + 1] : NULL;
		ops[i].opcode = i % 3 == 0 ? DTM_WR_TAG_ADD : i % 3 == 1 ? DTM_WR_TAG_DEL
									 : DTM_WR_TAG_SYNC;
		ops[i].flags = DTM_OPS_SIGNALED;
		ops[i].tm.handle = i % 3 == 0 ? 0 : 50000 + i;
		ops[i].tm.unexpected_cnt = i;
	}
	fk.posts = 0;
	fk.wr_seen = 0;
	fk.next_tag_handle = 0;
	r = dtm_post_srq_ops(srq2, ops, &obad);
	ok = r == 0 && fk.posts == 3 && fk.post_nr[0] == 4096 && fk.post_nr[1] == 4096 &&
	     fk.post_nr[2] == 1808;
	UNIT_CHECK("ops: 10000 in chunks of DPUSIM_TM_MAX_WR", ok, "r %d posts %u (%u %u %u)", r,
		   fk.posts, fk.post_nr[0], fk.post_nr[1], fk.post_nr[2]);
	ok = true;
	for (i = 0; i < 10000; i++) {
		if (fk.wr_ids[i] != 100000 + i || fk.wr_opcode[i] != (uint32_t)ops[i].opcode)
			ok = false;
		if (ops[i].opcode == DTM_WR_TAG_ADD && ops[i].tm.handle != i / 3 + 1)
			ok = false;
		if (ops[i].opcode == DTM_WR_TAG_DEL && fk.wr_handle[i] != 50000 + i)
			ok = false;
	}
	UNIT_CHECK("ops: order, DEL handles in, every ADD handle out", ok, "mismatch");

	/* failing at 5000: the first two chunks done, bad_wr = ops[5000] */
	for (i = 0; i < 10000; i++)
		if (ops[i].opcode == DTM_WR_TAG_ADD)
			ops[i].tm.handle = 0;
	fk.posts = 0;
	fk.wr_seen = 0;
	fk.next_tag_handle = 0;
	fk.fail_at = 5000;
	fk.fail_errno = EINVAL;
	r = dtm_post_srq_ops(srq2, ops, &obad);
	fk.fail_errno = 0;
	ok = r == EINVAL && obad == &ops[5000] && fk.posts == 2;
	for (i = 0; i < 10000; i++)
		if (ops[i].opcode == DTM_WR_TAG_ADD &&
		    ops[i].tm.handle != (i < 5000 ? i / 3 + 1 : 0))
			ok = false;
	UNIT_CHECK("ops: an error in the second chunk: bad_wr at nr_done, handles up to it", ok,
		   "r %d bad %td posts %u", r, obad ? obad - ops : -1, fk.posts);

	/* a pending overrun: the kernel writes nothing back */
	fk.overrun_pending = true;
	obad = NULL;
	r = dtm_post_srq_ops(srq2, &ops[9999], &obad);
	UNIT_CHECK("ops: pending overrun: EOVERFLOW, bad_wr = the first",
		   r == EOVERFLOW && obad == &ops[9999], "r %d", r);

	/* untagged buffers */
	for (i = 0; i < 9000; i++) {
		rwr[i].wr_id = 7000000 + i;
		rwr[i].next = i < 8999 ? &rwr[i + 1] : NULL;
		rwr[i].sg_list = &sge[i % 2];
		rwr[i].num_sge = 1 + (int)(i % 2);
	}
	rwr[2].next = NULL;
	fk.posts = 0;
	fk.wr_seen = 0;
	r = dtm_post_srq_recv(srq, rwr, &rbad);
	UNIT_CHECK("recv: 3 in one ioctl, on the stack, fields",
		   r == 0 && fk.posts == 1 && fk.post_nr[0] == 3 && near_stack(fk.last_wrs) &&
		   fk.wr_ids[2] == 7000002 && fk.wr_sg[1] == (uintptr_t)&sge[1] &&
		   fk.wr_num_sge[1] == 2 && fk.last_cmd == DPUSIM_IOCTL_TM_POST_SRQ_RECV,
		   "r %d posts %u", r, fk.posts);
	rwr[2].next = &rwr[3];
	fk.posts = 0;
	fk.wr_seen = 0;
	fk.fail_at = 8500;
	fk.fail_errno = ENOMEM;
	r = dtm_post_srq_recv(srq, rwr, &rbad);
	fk.fail_errno = 0;
	UNIT_CHECK("recv: 9000 in 3 ioctls, failing at 8500",
		   r == ENOMEM && rbad == &rwr[8500] && fk.posts == 3 && fk.post_nr[2] == 808,
		   "r %d bad %td posts %u", r, rbad ? rbad - rwr : -1, fk.posts);
	errno = 0;
	r = dtm_post_srq_recv(srq, NULL, &rbad);
	UNIT_CHECK("recv: an empty list is EINVAL, bad_wr NULL",
		   r == EINVAL && errno == EINVAL && rbad == NULL, "%d", r);

	/* one send: one ioctl, the request on the stack, fields */
	memset(swr, 0, sizeof(swr));
	swr[0] = (struct dtm_send_wr){
		.wr_id = 0xabcdef, .sg_list = sge, .num_sge = 2, .opcode = DTM_WR_SEND,
		.send_flags = DTM_SEND_SIGNALED | DTM_SEND_INLINE,
		.rdma = { .remote_addr = 0x5555, .rkey = 66 },
	};
	before = fk.ioctls;
	fk.posts = 0;
	r = dtm_post_send(qp, &swr[0], &sbad);
	UNIT_CHECK("send: one wr is exactly one ioctl", r == 0 && fk.ioctls == before + 1 &&
		   fk.posts == 1 && fk.post_nr[0] == 1, "r %d ioctls %u", r, fk.ioctls - before);
	UNIT_CHECK("send: the wr array is on the stack", near_stack(fk.last_wrs), "%p", fk.last_wrs);
	UNIT_CHECK("send: fields", fk.last_send.wr_id == 0xabcdef &&
		   fk.last_send.opcode == DPUSIM_TM_WR_SEND &&
		   fk.last_send.flags == (DPUSIM_TM_SEND_SIGNALED | DPUSIM_TM_SEND_INLINE) &&
		   fk.last_send.sg_list == (uintptr_t)sge && fk.last_send.num_sge == 2 &&
		   fk.last_send.remote_addr == 0x5555 && fk.last_send.rkey == 66 &&
		   fk.last_flags == 0 && fk.last_handle == qp->handle && fk.last_remote_qpn == 0,
		   "flags %#x handle %u", fk.last_flags, fk.last_handle);
	fk.wr_seen = 0;
	fk.fail_at = 0;
	fk.fail_errno = ENOTCONN;
	sbad = NULL;
	errno = 0;
	r = dtm_post_send(qp, &swr[0], &sbad);
	fk.fail_errno = 0;
	UNIT_CHECK("send: error: the errno, positive, errno, bad_wr", r == ENOTCONN && errno == ENOTCONN &&
		   sbad == &swr[0], "r %d errno %d", r, errno);
	fk.overrun_pending = true;
	sbad = NULL;
	r = dtm_post_send(qp, &swr[0], &sbad);
	UNIT_CHECK("send: pending overrun: EOVERFLOW, bad_wr", r == EOVERFLOW && sbad == &swr[0],
		   "r %d", r);
	for (i = 0; i < 20; i++) {
		swr[i] = swr[0];
		swr[i].wr_id = i;
		swr[i].next = i < 19 ? &swr[i + 1] : NULL;
	}
	fk.posts = 0;
	fk.wr_seen = 0;
	fk.fail_at = 7;
	fk.fail_errno = EAGAIN;
	r = dtm_post_send(qp, swr, &sbad);
	fk.fail_errno = 0;
	UNIT_CHECK("send: 20 chained, one ioctl, failing at 7", r == EAGAIN && sbad == &swr[7] &&
		   fk.posts == 1 && fk.post_nr[0] == 20, "r %d bad %td", r,
		   sbad ? sbad - swr : -1);
	swr[15].next = NULL;
	fk.posts = 0;
	r = dtm_post_send(qp, swr, &sbad);
	UNIT_CHECK("send: 16 chained stay on the stack", r == 0 && fk.posts == 1 &&
		   near_stack(fk.last_wrs), "r %d", r);

	/* from the SRQ */
	swr[0].next = NULL;
	swr[0].opcode = DTM_WR_RDMA_READ;
	r = dtm_post_srq_send(srq, 901, &swr[0], &sbad);
	UNIT_CHECK("srq_send: POST_SEND from the SRQ", r == 0 &&
		   fk.last_cmd == DPUSIM_IOCTL_TM_POST_SEND &&
		   fk.last_flags == DPUSIM_TM_POST_FROM_SRQ && fk.last_handle == srq->handle &&
		   fk.last_remote_qpn == 901 && fk.last_send.opcode == DPUSIM_TM_WR_RDMA_READ,
		   "r %d flags %#x", r, fk.last_flags);

	/* regions */
	mr = dtm_reg_mr(ctx, buf, sizeof(buf), DTM_ACCESS_LOCAL_WRITE | DTM_ACCESS_REMOTE_READ);
	UNIT_CHECK("reg_mr", mr && mr->addr == buf && mr->length == sizeof(buf) &&
		   mr->lkey == fk.next_key && mr->rkey == mr->lkey && mr->handle == mr->lkey &&
		   mr->context == ctx && fk.last_mr.flags == 0 &&
		   fk.last_mr.addr == (uintptr_t)buf && fk.last_mr.length == sizeof(buf) &&
		   fk.last_mr.access == (DPUSIM_TM_ACCESS_LOCAL_WRITE | DPUSIM_TM_ACCESS_REMOTE_READ) &&
		   fk.last_mr.rank_fd == 0 && fk.last_mr.dpu == 0, "mr %p", (void *)mr);
	memset(dpus, 0, sizeof(dpus));
	for (i = 0; i < 8; i++) {
		dpus[i].rank = &rank;
		dpus[i].index_in_rank = i;
		dpus[i].enabled = true;
	}
	rank.dpus = dpus;
	dset = (struct dpu_set_t){ .kind = DPU_SET_DPU, .dpu = &dpus[3] };
	mram = dtm_reg_mr_mram(ctx, dset, 1 << 20, 4096, DTM_ACCESS_LOCAL_WRITE);
	UNIT_CHECK("reg_mr_mram: rank fd, DPU index, MRAM flag, offset as addr",
		   mram && fk.last_mr.flags == DPUSIM_TM_MR_MRAM && fk.last_mr.rank_fd == 42 &&
		   fk.last_mr.dpu == 3 && fk.last_mr.addr == 1 << 20 && fk.last_mr.length == 4096 &&
		   mram->addr == (void *)(uintptr_t)(1 << 20) && mram->length == 4096,
		   "mram %p", (void *)mram);
	before = fk.ioctls;
	errno = 0;
	dset = (struct dpu_set_t){ .kind = DPU_SET_RANKS };
	UNIT_CHECK("reg_mr_mram of a rank set: EINVAL, no ioctl",
		   !dtm_reg_mr_mram(ctx, dset, 0, 4096, 0) && errno == EINVAL &&
		   fk.ioctls == before, "errno %d", errno);
	r = dtm_dereg_mr(mram);
	UNIT_CHECK("dereg_mr", r == 0, "%d", r);

	/* events */
	t0 = ms_now();
	r = dtm_get_cq_event(ctx, &ev, 30);
	UNIT_CHECK("cq event: nothing armed, nothing pending: -ETIMEDOUT after the timeout",
		   r == -ETIMEDOUT && errno == ETIMEDOUT && ms_now() - t0 >= 25, "r %d", r);
	cq2 = dtm_create_cq(ctx, 2);
	UNIT_CHECK("a second CQ", cq2 != NULL, "errno %d", errno);
	if (!cq2)
		return;
	r = dtm_req_notify_cq(cq, 0);
	UNIT_CHECK("req_notify_cq", r == 0, "%d", r);
	fake_push(2, 1);	/* the unarmed CQ */
	t0 = ms_now();
	r = dtm_get_cq_event(ctx, &ev, 40);
	UNIT_CHECK("cq event: only an unarmed CQ ready: -ETIMEDOUT, not a spin forever",
		   r == -ETIMEDOUT && ms_now() - t0 >= 35 && ms_now() - t0 < 2000, "r %d", r);
	fake_push(1, 2);
	ev = NULL;
	r = dtm_get_cq_event(ctx, &ev, 1000);
	UNIT_CHECK("cq event: the armed CQ", r == 0 && ev == cq, "r %d", r);
	r = dtm_get_cq_event(ctx, &ev, 0);
	UNIT_CHECK("cq event: disarmed after it", r == -ETIMEDOUT, "r %d", r);
	dtm_req_notify_cq(cq2, 0);
	r = dtm_get_cq_event(ctx, &ev, -1);	/* ready now: -1 does not wait */
	UNIT_CHECK("cq event: an armed CQ with completions already in", r == 0 && ev == cq2,
		   "r %d", r);
	while (dtm_poll_cq(cq, 4, wc) > 0)
		;
	while (dtm_poll_cq(cq2, 4, wc) > 0)
		;
	fk.overrun_pending = true;
	before = fk.ioctls;
	r = dtm_get_cq_event(ctx, &ev, 1000);
	UNIT_CHECK("cq event: a pending overrun is -EOVERFLOW, taken once",
		   r == -EOVERFLOW && !fk.overrun_pending && fk.ioctls == before + 1 &&
		   dtm_query_device(ctx, &attr) == 0, "r %d", r);

	fk.poll_err = true;
	t0 = ms_now();
	r = dtm_get_cq_event(ctx, &ev, 30);
	fk.poll_err = false;
	UNIT_CHECK("cq event: POLLERR without an overrun to take: -ETIMEDOUT in time",
		   r == -ETIMEDOUT && ms_now() - t0 >= 25 && ms_now() - t0 < 2000, "r %d", r);

	/* destroy: the kernel first, then the mapping */
	r = dtm_destroy_qp(qp);
	UNIT_CHECK("destroy_qp", r == 0, "%d", r);
	r = dtm_destroy_srq(srq);
	UNIT_CHECK("destroy_srq", r == 0, "%d", r);
	r = dtm_destroy_srq(srq2);
	UNIT_CHECK("destroy_srq 2", r == 0, "%d", r);
	before = fk.munmaps;
	r = dtm_destroy_cq(cq);
	UNIT_CHECK("destroy_cq: DESTROY_CQ then munmap", r == 0 && fk.munmaps == before + 1 &&
		   fk.cq[1].unmapped_after_destroy, "r %d", r);

	/* close: what the user left (cq2, mr, mr2) is freed, the ring unmapped */
	mr2 = dtm_reg_mr(ctx, buf, 16, 0);
	(void)mr2;
	(void)mr;
	before = fk.munmaps;
	r = dtm_close_device(ctx);
	UNIT_CHECK("close_device: frees and unmaps the rest", r == 0 && fk.munmaps == before + 1 &&
		   !fk.cq[2].mapped, "r %d", r);
	UNIT_CHECK("fake device: every struct had its size", !fk.bad_size, "wrong size seen");
	UNIT_CHECK("fake device: every reserved field 0", !fk.bad_reserved, "non-zero seen");
	fk.fd = -1;
	for (i = 1; i <= FAKE_MAX_CQ; i++)
		free(fk.cq[i].ring);
}

/* dpusim list's source: found exactly when sysfs has the class device */
static void test_discover_tm(void)
{
	struct dpusim_tm_desc tm;
	bool found = true, exists = access("/sys/class/dpusim/tm", F_OK) == 0;
	char err[256];
	dpu_error_t r;

	r = dpusim_discover_tm(&tm, &found, err, sizeof(err));
	UNIT_CHECK("discover_tm: found iff /sys/class/dpusim/tm exists",
		   r == DPU_OK && found == exists, "r %d found %d exists %d (%s)", (int)r,
		   found, exists, err);
	if (found)
		UNIT_CHECK("discover_tm: devnode and every counter",
			   strcmp(tm.devnode, DTM_DEVICE_PATH) == 0 &&
			   tm.valid == (1U << DPUSIM_TM_NR_STATS) - 1,
			   "%s valid %#x", tm.devnode, tm.valid);
}

int main(void)
{
	test_tmh();
	test_rvh();
	test_strings();
	test_ring_basic();
	test_ring_wrap_partial();
	test_ring_inline();
	test_ring_overflow();
	test_ring_hostile();
	test_api_no_device();
	test_api_fake();
	test_discover_tm();
	return unit_done();
}
