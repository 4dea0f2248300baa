// SPDX-License-Identifier: MIT
/*
 * tm_race - the race of rdma-core's tag-matching offload (seed 004,
 * shared/design/tag-matching.md), walked step by step on /dev/dpusim/tm,
 * printing every completion.
 *
 * Two messages m1, m2 with tag T and two tagged buffers b1, b2 for T are
 * posted asynchronously.  m1 arrives before b1 is posted: it is
 * unexpected and goes to software.  If b1 were matched by the next
 * message m2, m2 would be received before m1 — the MPI ordering rule
 * broken.  So once the "hardware" (the kernel) declared a message
 * unexpected, tags posted afterwards do not match until software reports
 * (unexpected_cnt with DTM_OPS_TM_SYNC) that it has seen that many
 * unexpected messages; meanwhile every completion of the SRQ's CQ carries
 * DTM_WC_TM_SYNC_REQ.
 *
 *   usage: tm_race
 * Exit status 0 when every completion is the one the rule requires, 1
 * with "tm_race: FAILED: ..." otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dtm.h>

#define T	0x77ULL
#define BUFSZ	4096

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "tm_race: FAILED: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static const char *flags_str(unsigned int f, char *buf, size_t len)
{
	static const struct { unsigned int bit; const char *name; } names[] = {
		{ DTM_WC_TM_SYNC_REQ, "SYNC_REQ" },
		{ DTM_WC_TM_MATCH, "MATCH" },
		{ DTM_WC_TM_DATA_VALID, "DATA_VALID" },
		{ DTM_WC_INLINE, "INLINE" },
	};
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f & names[i].bit)
			n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
				      n ? "|" : "", names[i].name);
	if (!n)
		snprintf(buf, len, "0");
	return buf;
}

struct env {
	struct dtm_context *ctx;
	struct dtm_cq *cq;
	struct dtm_srq *srq;
	struct dtm_qp *qp;
	uint8_t *buf;
	struct dtm_mr *mr;
};

/* The one completion the step must produce; prints it and checks it. */
static struct dtm_wc expect(struct env *e, const char *step,
			    enum dtm_wc_opcode opcode, unsigned int flags,
			    uint64_t wr_id)
{
	struct dtm_wc wc, more;
	char fl[64];
	int n;

	n = dtm_poll_cq(e->cq, 1, &wc);
	if (n != 1)
		die("%s: expected one completion, dtm_poll_cq returned %d",
		    step, n);
	printf("  SRQ CQ: %-7s status %s flags %-16s wr_id 0x%-3" PRIx64 "(%s)",
	       dtm_wc_opcode_str(wc.opcode), dtm_wc_status_str(wc.status),
	       flags_str(wc.wc_flags, fl, sizeof(fl)), wc.wr_id,
	       wc.wr_id == 0xb1 ? "b1" : wc.wr_id == 0xb2 ? "b2" :
	       wc.wr_id == 0xf1 ? "u1" : wc.wr_id == 0xf2 ? "u2" :
	       wc.wr_id == 0xa1 ? "ADD b1" : wc.wr_id == 0xa2 ? "ADD b2" : "?");
	if (wc.opcode == DTM_WC_TM_ADD)
		printf(" handle %u", wc.handle);
	else if (wc.opcode == DTM_WC_TM_RECV)
		printf(" tag 0x%" PRIx64 " priv %u byte_len %u", wc.tag,
		       wc.priv, wc.byte_len);
	else
		printf(" byte_len %u", wc.byte_len);
	printf("\n");
	if (wc.opcode != opcode || wc.status != DTM_WC_SUCCESS ||
	    wc.wc_flags != flags || wc.wr_id != wr_id)
		die("%s: expected %s status %s flags %s wr_id 0x%" PRIx64,
		    step, dtm_wc_opcode_str(opcode),
		    dtm_wc_status_str(DTM_WC_SUCCESS),
		    flags_str(flags, fl, sizeof(fl)), wr_id);
	n = dtm_poll_cq(e->cq, 1, &more);
	if (n != 0)
		die("%s: a completion too many (%s)", step,
		    n > 0 ? dtm_wc_opcode_str(more.opcode) : strerror(-n));
	return wc;
}

/* m<k>: TMH (eager, app_ctx k, tag T) | "message k" */
static void send_m(struct env *e, int k)
{
	struct dtm_tmh tmh;
	char pay[32];
	struct dtm_sge sge[2] = {
		{ (uintptr_t)&tmh, sizeof(tmh), 0 },
		{ (uintptr_t)pay, sizeof(pay), 0 },
	};
	struct dtm_send_wr wr = {
		.wr_id = k, .sg_list = sge, .num_sge = 2,
		.opcode = DTM_WR_SEND, .send_flags = DTM_SEND_INLINE,
	}, *bad;
	int ret;

	memset(pay, 0, sizeof(pay));
	snprintf(pay, sizeof(pay), "message %d", k);
	dtm_tmh_build(&tmh, DTM_TMH_EAGER, k, T);
	ret = dtm_post_send(e->qp, &wr, &bad);
	if (ret)
		die("sending m%d: %s", k, strerror(ret));
}

static uint32_t add_b(struct env *e, uint64_t wr_id, uint64_t recv_wr_id,
		      uint32_t off, uint32_t cnt)
{
	struct dtm_sge sge = { (uintptr_t)(e->buf + off), 64, e->mr->lkey };
	struct dtm_ops_wr wr = {
		.wr_id = wr_id, .opcode = DTM_WR_TAG_ADD,
		.flags = DTM_OPS_SIGNALED | DTM_OPS_TM_SYNC,
		.tm = {
			.unexpected_cnt = cnt,
			.add = { .recv_wr_id = recv_wr_id, .sg_list = &sge,
				 .num_sge = 1, .tag = T, .mask = ~0ULL },
		},
	}, *bad;
	int ret = dtm_post_srq_ops(e->srq, &wr, &bad);

	if (ret)
		die("posting b%d: %s", (int)(recv_wr_id & 0xf), strerror(ret));
	return wr.tm.handle;
}

static void post_u(struct env *e, uint64_t wr_id, uint32_t off)
{
	struct dtm_sge sge = { (uintptr_t)(e->buf + off), 64, e->mr->lkey };
	struct dtm_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int ret = dtm_post_srq_recv(e->srq, &wr, &bad);

	if (ret)
		die("posting an untagged buffer: %s", strerror(ret));
}

/* Is the message at @off m<k> (whole: TMH included, or payload only)? */
static void check_m(struct env *e, uint32_t off, int k, int whole,
		    const char *where)
{
	char want[32];
	const uint8_t *p = e->buf + off;
	enum dtm_tmh_op op;
	uint32_t app_ctx;
	uint64_t tag;

	memset(want, 0, sizeof(want));
	snprintf(want, sizeof(want), "message %d", k);
	if (whole) {
		dtm_tmh_parse((const struct dtm_tmh *)p, &op, &app_ctx, &tag);
		if (op != DTM_TMH_EAGER || app_ctx != (uint32_t)k || tag != T)
			die("%s does not hold m%d's TMH", where, k);
		p += sizeof(struct dtm_tmh);
	}
	if (memcmp(p, want, sizeof(want)))
		die("%s does not hold m%d", where, k);
	printf("  %s holds m%d%s\n", where, k, whole ? " (TMH included)" : "");
}

int main(void)
{
	struct dtm_srq_init_attr sa = {
		.max_num_tags = 16, .max_ops = 16, .max_wr = 16, .max_sge = 1,
	};
	struct dtm_qp_init_attr qa = { .max_sge = 2 };
	struct dtm_wc wc;
	struct env e;
	uint32_t hb1, hb2;
	int ret;

	e.ctx = dtm_open_device(NULL);
	if (!e.ctx)
		die("open %s: %s", DTM_DEVICE_PATH, strerror(errno));
	e.cq = dtm_create_cq(e.ctx, 64);
	if (!e.cq)
		die("dtm_create_cq: %s", strerror(errno));
	sa.cq = e.cq;
	qa.cq = dtm_create_cq(e.ctx, 64);
	if (!qa.cq)
		die("dtm_create_cq: %s", strerror(errno));
	e.srq = dtm_create_srq(e.ctx, &sa);
	if (!e.srq)
		die("dtm_create_srq: %s", strerror(errno));
	e.qp = dtm_create_qp(e.ctx, &qa);
	if (!e.qp)
		die("dtm_create_qp: %s", strerror(errno));
	ret = dtm_connect(e.qp, e.srq->srq_num);
	if (ret)
		die("dtm_connect: %s", strerror(-ret));
	e.buf = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e.buf == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	e.mr = dtm_reg_mr(e.ctx, e.buf, BUFSZ, DTM_ACCESS_LOCAL_WRITE);
	if (!e.mr)
		die("dtm_reg_mr: %s", strerror(errno));

	printf("tm_race: the seed's race: messages m1, m2 and tagged buffers b1, b2, all tag 0x%llx\n",
	       (unsigned long long)T);
	printf("  (SRQ %u, QP %u; completions are read from the mapped ring)\n",
	       e.srq->srq_num, e.qp->qp_num);

	printf("step 1: post two untagged buffers u1, u2 for unexpected messages\n");
	post_u(&e, 0xf1, 0);
	post_u(&e, 0xf2, 64);
	if (dtm_poll_cq(e.cq, 1, &wc) != 0)
		die("step 1: a completion where none is due");

	printf("step 2: m1 arrives; no tagged buffer is posted: unexpected (hw count 1)\n");
	send_m(&e, 1);
	wc = expect(&e, "step 2", DTM_WC_RECV, DTM_WC_TM_SYNC_REQ, 0xf1);
	check_m(&e, 0, 1, 1, "u1");

	printf("step 3: software has not seen m1 yet: it posts b1 with the stale count 0\n");
	hb1 = add_b(&e, 0xa1, 0xb1, 1024, 0);
	wc = expect(&e, "step 3", DTM_WC_TM_ADD, DTM_WC_TM_SYNC_REQ, 0xa1);
	if (wc.handle != hb1)
		die("step 3: TM_ADD handle %u, the post returned %u",
		    wc.handle, hb1);
	printf("  b1 (handle %u) is not eligible: counts differ (sw 0, hw 1)\n",
	       hb1);

	printf("step 4: m2 arrives with b1's tag; matching b1 would overtake m1: unexpected too (hw count 2)\n");
	send_m(&e, 2);
	expect(&e, "step 4", DTM_WC_RECV, DTM_WC_TM_SYNC_REQ, 0xf2);
	check_m(&e, 64, 2, 1, "u2");
	printf("  b1 still holds nothing\n");
	{
		static const uint8_t zero[64];

		if (memcmp(e.buf + 1024, zero, 64))
			die("step 4: b1 was written");
	}

	printf("step 5: software handles m1 and m2, then posts b2 with TM_SYNC and unexpected_cnt 2\n");
	hb2 = add_b(&e, 0xa2, 0xb2, 2048, 2);
	wc = expect(&e, "step 5", DTM_WC_TM_ADD, 0, 0xa2);
	if (wc.handle != hb2)
		die("step 5: TM_ADD handle %u, the post returned %u",
		    wc.handle, hb2);
	printf("  in sync (sw 2, hw 2): no SYNC_REQ; b1 and b2 are eligible\n");

	printf("step 6: m3 and m4 arrive: the earliest-posted buffer first, b1 then b2\n");
	send_m(&e, 3);
	wc = expect(&e, "step 6 (m3)", DTM_WC_TM_RECV,
		    DTM_WC_TM_MATCH | DTM_WC_TM_DATA_VALID, 0xb1);
	if (wc.handle != hb1 || wc.tag != T || wc.priv != 3)
		die("step 6: m3's completion names handle %u tag 0x%" PRIx64
		    " priv %u", wc.handle, wc.tag, wc.priv);
	send_m(&e, 4);
	wc = expect(&e, "step 6 (m4)", DTM_WC_TM_RECV,
		    DTM_WC_TM_MATCH | DTM_WC_TM_DATA_VALID, 0xb2);
	if (wc.handle != hb2 || wc.priv != 4)
		die("step 6: m4's completion names handle %u priv %u",
		    wc.handle, wc.priv);
	check_m(&e, 1024, 3, 0, "b1");
	check_m(&e, 2048, 4, 0, "b2");

	dtm_close_device(e.ctx);
	printf("tm_race: OK: m1, m2 went to software in order; m3 -> b1, m4 -> b2\n");
	return 0;
}
