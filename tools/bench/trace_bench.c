// SPDX-License-Identifier: MIT
/*
 * trace_bench - what one operation costs on each path that has dpusim
 * tracepoints, in ns: run once with dpusim.ko and once with the same
 * module built with DPUSIM_NOTRACE=1 (the tracepoints compiled out), in
 * the same guest, to measure what the tracepoints cost when disabled
 * (tools/bench/trace-run does the swapping; target: within noise).
 *
 *   xfer     dpu_copy_to of 64 bytes to one DPU (one DPUSIM_IOCTL_XFER:
 *            the dpusim_xfer tracepoint)
 *   async    the same with DPU_XFER_ASYNC, then dpu_sync (async_queue,
 *            async_done, xfer)
 *   launch   dpu_launch of the empty program on one DPU (launch_start,
 *            launch_end)
 *   tm       a tag posted, then an 8-byte eager message to it through a
 *            QP connected to the SRQ, its completions polled (tm_post,
 *            tm_match, tm_completion)
 *
 * Each figure: the median over --reps rounds of the mean of --ops
 * operations.  Output: one line per figure, and --json FILE.
 *
 * usage: trace_bench [--reps N] [--ops N] [--json FILE]
 */
#include <dpu.h>
#include <dtm.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define EMPTY "build/bench/dpu/empty"

struct tm_loop {
	struct dtm_context *ctx;
	struct dtm_cq *scq, *qcq;
	struct dtm_srq *srq;
	struct dtm_qp *qp;
	struct dtm_mr *mr;
	uint8_t rx[64];
};

static int tm_setup(struct tm_loop *t)
{
	struct dtm_srq_init_attr sa = { .max_num_tags = 16, .max_ops = 16, .max_wr = 16,
					.max_sge = 2 };
	struct dtm_qp_init_attr qa = { .max_sge = 2 };

	t->ctx = dtm_open_device(NULL);
	if (!t->ctx)
		return -1;
	t->scq = dtm_create_cq(t->ctx, 64);
	t->qcq = dtm_create_cq(t->ctx, 64);
	if (!t->scq || !t->qcq)
		return -1;
	sa.cq = t->scq;
	qa.cq = t->qcq;
	t->srq = dtm_create_srq(t->ctx, &sa);
	t->qp = dtm_create_qp(t->ctx, &qa);
	if (!t->srq || !t->qp || dtm_connect(t->qp, t->srq->srq_num))
		return -1;
	t->mr = dtm_reg_mr(t->ctx, t->rx, sizeof(t->rx), DTM_ACCESS_LOCAL_WRITE);
	return t->mr ? 0 : -1;
}

/* One tagged message: post the tag, send to it, take its completion */
static int tm_one(struct tm_loop *t, uint64_t tag)
{
	struct dtm_sge rsge = { (uintptr_t)t->rx, sizeof(t->rx), t->mr->lkey };
	struct dtm_ops_wr op = {
		.opcode = DTM_WR_TAG_ADD,
		.tm.add = { .sg_list = &rsge, .num_sge = 1, .tag = tag, .mask = ~0ULL },
	};
	struct dtm_ops_wr *bad_op = NULL;
	struct dtm_send_wr wr, *bad = NULL;
	uint64_t payload = tag;
	struct dtm_sge sge[2];
	struct dtm_tmh tmh;
	struct dtm_wc wc;
	int n, spins = 0;

	if (dtm_post_srq_ops(t->srq, &op, &bad_op))
		return -1;
	dtm_tmh_build(&tmh, DTM_TMH_EAGER, 0, tag);
	sge[0] = (struct dtm_sge){ (uintptr_t)&tmh, sizeof(tmh), 0 };
	sge[1] = (struct dtm_sge){ (uintptr_t)&payload, sizeof(payload), 0 };
	wr = (struct dtm_send_wr){ .sg_list = sge, .num_sge = 2, .opcode = DTM_WR_SEND,
				   .send_flags = DTM_SEND_INLINE };
	if (dtm_post_send(t->qp, &wr, &bad))
		return -1;
	while ((n = dtm_poll_cq(t->scq, 1, &wc)) == 0)
		if (++spins > 100000000)
			return -1;
	return n == 1 && wc.status == DTM_WC_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned int reps = 7, ops = 2000, r, i, f;
	static const char *const names[] = { "xfer", "async", "launch", "tm" };
	double res[4], *t;
	struct dpu_set_t set, dpu;
	const char *json = NULL;
	struct tm_loop tm = { 0 };
	uint8_t buf[64] = { 1 };
	double t0;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--reps") && a + 1 < argc)
			reps = (unsigned int)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--ops") && a + 1 < argc)
			ops = (unsigned int)strtoul(argv[++a], NULL, 10);
		else if (!strcmp(argv[a], "--json") && a + 1 < argc)
			json = argv[++a];
		else
			goto usage;
	}
	if (!reps || !ops)
		goto usage;
	t = calloc(reps, sizeof(*t));
	if (!t)
		return 1;
	if (dpu_alloc(1, NULL, &set) != DPU_OK || dpu_load(set, EMPTY, NULL) != DPU_OK) {
		fprintf(stderr, "trace_bench: no DPU or no %s (make bench)\n", EMPTY);
		return 1;
	}
	DPU_FOREACH(set, dpu)
		break;
	if (tm_setup(&tm)) {
		fprintf(stderr, "trace_bench: tag-matching setup: %s\n", strerror(errno));
		return 1;
	}
	for (f = 0; f < 4; f++) {
		for (r = 0; r < reps; r++) {
			t0 = (double)bench_now_ns();
			for (i = 0; i < ops; i++) {
				int bad = 0;

				switch (f) {
				case 0:
					bad = dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, buf,
							  sizeof(buf)) != DPU_OK;
					break;
				case 1:
					bad = dpu_prepare_xfer(dpu, buf) != DPU_OK ||
					      dpu_push_xfer(dpu, DPU_XFER_TO_DPU,
							    DPU_MRAM_HEAP_POINTER_NAME, 0, sizeof(buf),
							    DPU_XFER_ASYNC) != DPU_OK ||
					      dpu_sync(dpu) != DPU_OK;
					break;
				case 2:
					bad = dpu_launch(dpu, DPU_SYNCHRONOUS) != DPU_OK;
					break;
				default:
					bad = tm_one(&tm, i + 1);
					break;
				}
				if (bad) {
					fprintf(stderr, "trace_bench: %s failed at operation %u\n",
						names[f], i);
					return 1;
				}
			}
			t[r] = ((double)bench_now_ns() - t0) / ops;
		}
		res[f] = bench_median(t, reps);
		printf("%-8s %10.0f ns per operation (median of %u rounds of %u)\n", names[f],
		       res[f], reps, ops);
	}
	if (json) {
		FILE *fp = fopen(json, "w");

		if (!fp) {
			perror(json);
			return 1;
		}
		fprintf(fp, "{\"reps\": %u, \"ops\": %u", reps, ops);
		for (f = 0; f < 4; f++)
			fprintf(fp, ", \"%s_ns\": %.1f", names[f], res[f]);
		fprintf(fp, "}\n");
		fclose(fp);
	}
	dtm_close_device(tm.ctx);
	dpu_free(set);
	free(t);
	return 0;
usage:
	fprintf(stderr, "usage: trace_bench [--reps N] [--ops N] [--json FILE]\n");
	return 2;
}
