// SPDX-License-Identifier: MIT
/*
 * tm_pingpong - a tag ping-pong between two processes over /dev/dpusim/tm
 * (dtm.h), eager and rendezvous, with every byte checked.
 *
 * The parent (ping) and a forked child (pong) each open a context with a
 * TM-SRQ (its own CQ), a QP (its own CQ) and two registered regions: rx
 * for tagged buffers, tx (REMOTE_READ) for rendezvous payloads.  They
 * swap SRQ numbers through pipes and connect their QPs to each other's
 * SRQ.  Round i: ping sends tag 2i, pong answers with tag 2i + 1.
 *   eager:       TMH | payload (8 .. 200 bytes) sent inline;
 *   rendezvous:  TMH | RVH naming tx; the receiving kernel reads the
 *                payload from the sender's region, then the sender gets
 *                the FIN and may reuse tx.
 * Each side posts the tagged buffer for the next message it expects
 * before it sends (ping: the answer's tag before the ping; pong: the next
 * ping's tag before its answer), so no message is ever unexpected; one
 * would be reported as an error.  Completions are read from the mapped
 * rings by busy polling: no system call on the receiving side.
 *
 *   usage: tm_pingpong [-n EAGER_ROUNDS] [-r RNDV_ROUNDS] [-s RNDV_BYTES]
 *          defaults 1000, 20, 262144
 * Prints the round trips (median and mean time per round trip) and
 * "tm_pingpong: OK"; exit status 0, or 1 with "tm_pingpong: FAILED: ..."
 * (2 on bad usage).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dtm.h>

#define EAGER_MAX	200
#define TIMEOUT_MS	20000

static const char *who = "ping";
static pid_t peer_pid;	/* ping: the child, to notice it died */
static int peer_status = -1;	/* its wait status, once reaped early */

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "tm_pingpong: FAILED: %s: ", who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint8_t pat(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 197 + i * 11 + (i >> 9) + 3);
}

struct end {
	struct dtm_context *ctx;
	struct dtm_cq *scq, *qcq;
	struct dtm_srq *srq;
	struct dtm_qp *qp;
	uint8_t *rx, *tx;
	size_t rx_len, tx_len;
	struct dtm_mr *rxmr, *txmr;
	uint32_t peer_srq;
};

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

static void end_open(struct end *e, size_t rndv_bytes)
{
	struct dtm_srq_init_attr sa = {
		.max_num_tags = 16, .max_ops = 16, .max_wr = 16, .max_sge = 1,
	};
	struct dtm_qp_init_attr qa = { .max_sge = 2 };

	e->ctx = dtm_open_device(NULL);
	if (!e->ctx)
		die("open %s: %s", DTM_DEVICE_PATH, strerror(errno));
	e->scq = dtm_create_cq(e->ctx, 64);
	e->qcq = dtm_create_cq(e->ctx, 64);
	if (!e->scq || !e->qcq)
		die("dtm_create_cq: %s", strerror(errno));
	sa.cq = e->scq;
	qa.cq = e->qcq;
	e->srq = dtm_create_srq(e->ctx, &sa);
	if (!e->srq)
		die("dtm_create_srq: %s", strerror(errno));
	e->qp = dtm_create_qp(e->ctx, &qa);
	if (!e->qp)
		die("dtm_create_qp: %s", strerror(errno));
	e->rx_len = rndv_bytes > EAGER_MAX ? rndv_bytes : EAGER_MAX;
	e->tx_len = e->rx_len;
	e->rx = map(e->rx_len);
	e->tx = map(e->tx_len);
	e->rxmr = dtm_reg_mr(e->ctx, e->rx, e->rx_len, DTM_ACCESS_LOCAL_WRITE);
	e->txmr = dtm_reg_mr(e->ctx, e->tx, e->tx_len, DTM_ACCESS_REMOTE_READ);
	if (!e->rxmr || !e->txmr)
		die("dtm_reg_mr: %s", strerror(errno));
}

/* The tagged buffer for the message with @tag: all of rx. */
static void post_tag(struct end *e, uint64_t tag)
{
	struct dtm_sge sge = { (uintptr_t)e->rx, (uint32_t)e->rx_len,
			       e->rxmr->lkey };
	struct dtm_ops_wr wr = {
		.wr_id = tag, .opcode = DTM_WR_TAG_ADD,
		.tm.add = { .recv_wr_id = tag, .sg_list = &sge, .num_sge = 1,
			    .tag = tag, .mask = ~0ULL },
	}, *bad;
	int ret = dtm_post_srq_ops(e->srq, &wr, &bad);

	if (ret)
		die("posting the buffer for tag %" PRIu64 ": %s", tag,
		    strerror(ret));
}

static void send_eager(struct end *e, uint64_t tag, uint32_t len)
{
	struct dtm_tmh tmh;
	struct dtm_sge sge[2] = {
		{ (uintptr_t)&tmh, sizeof(tmh), 0 },
		{ (uintptr_t)e->tx, len, 0 },
	};
	struct dtm_send_wr wr = {
		.wr_id = tag, .sg_list = sge, .num_sge = 2,
		.opcode = DTM_WR_SEND, .send_flags = DTM_SEND_INLINE,
	}, *bad;
	size_t i;
	int ret;

	for (i = 0; i < len; i++)
		e->tx[i] = pat((uint32_t)tag, i);
	dtm_tmh_build(&tmh, DTM_TMH_EAGER, len, tag);
	ret = dtm_post_send(e->qp, &wr, &bad);
	if (ret)
		die("eager send, tag %" PRIu64 ": %s", tag, strerror(ret));
}

static void send_rndv(struct end *e, uint64_t tag, uint32_t len)
{
	struct {
		struct dtm_tmh tmh;
		struct dtm_rvh rvh;
	} req;
	struct dtm_sge sge = { (uintptr_t)&req, sizeof(req), 0 };
	struct dtm_send_wr wr = {
		.wr_id = tag, .sg_list = &sge, .num_sge = 1,
		.opcode = DTM_WR_SEND, .send_flags = DTM_SEND_INLINE,
	}, *bad;
	size_t i;
	int ret;

	for (i = 0; i < len; i++)
		e->tx[i] = pat((uint32_t)tag, i);
	dtm_tmh_build(&req.tmh, DTM_TMH_RNDV, len, tag);
	dtm_rvh_build(&req.rvh, (uintptr_t)e->tx, e->txmr->rkey, len);
	ret = dtm_post_send(e->qp, &wr, &bad);
	if (ret)
		die("rendezvous send, tag %" PRIu64 ": %s", tag, strerror(ret));
}

/* One completion of @cq, busy polling; dies after TIMEOUT_MS. */
static struct dtm_wc wait_one(struct dtm_cq *cq, const char *what)
{
	double end = now_us() + TIMEOUT_MS * 1e3;
	struct dtm_wc wc;
	unsigned long spins = 0;
	int n, st;

	for (;;) {
		n = dtm_poll_cq(cq, 1, &wc);
		if (n == 1)
			return wc;
		if (n < 0)
			die("dtm_poll_cq waiting for %s: %s", what,
			    strerror(-n));
		if (++spins % 4096)
			continue;
		sched_yield();	/* the peer may share this CPU */
		if (now_us() > end)
			die("no %s after %d ms", what, TIMEOUT_MS);
		if (peer_pid && waitpid(peer_pid, &st, WNOHANG) == peer_pid) {
			/*
			 * Its last message may have landed after the poll
			 * above: the kernel writes it before the peer's send
			 * returns, so one more poll sees it.
			 */
			peer_pid = 0;
			peer_status = st;
			n = dtm_poll_cq(cq, 1, &wc);
			if (n == 1)
				return wc;
			die("the pong process ended (status 0x%x) while waiting for %s",
			    st, what);
		}
	}
}

/*
 * The message with @tag (@len bytes, eager or rendezvous) into rx: its
 * completions checked, then every byte.
 */
static void receive(struct end *e, uint64_t tag, uint32_t len, bool rndv)
{
	struct dtm_wc wc;
	size_t i;

	wc = wait_one(e->scq, "a message");
	if (wc.opcode != DTM_WC_TM_RECV)
		die("tag %" PRIu64 ": %s (status %s) instead of TM_RECV%s",
		    tag, dtm_wc_opcode_str(wc.opcode),
		    dtm_wc_status_str(wc.status),
		    wc.opcode == DTM_WC_RECV ? ": an unexpected message" : "");
	if (wc.status != DTM_WC_SUCCESS || wc.wr_id != tag || wc.tag != tag ||
	    wc.byte_len != len || wc.priv != len)
		die("tag %" PRIu64 ": completion status %s wr_id %" PRIu64
		    " tag %" PRIu64 " byte_len %u priv %u", tag,
		    dtm_wc_status_str(wc.status), wc.wr_id, wc.tag,
		    wc.byte_len, wc.priv);
	if (rndv) {
		if (wc.wc_flags != DTM_WC_TM_MATCH)
			die("tag %" PRIu64 ": rendezvous flags 0x%x, want MATCH",
			    tag, wc.wc_flags);
		wc = wait_one(e->scq, "DATA_VALID");
		if (wc.opcode != DTM_WC_TM_RECV || wc.status != DTM_WC_SUCCESS ||
		    wc.wc_flags != DTM_WC_TM_DATA_VALID || wc.wr_id != tag ||
		    wc.byte_len != len)
			die("tag %" PRIu64 ": second rendezvous completion %s status %s flags 0x%x",
			    tag, dtm_wc_opcode_str(wc.opcode),
			    dtm_wc_status_str(wc.status), wc.wc_flags);
	} else if (wc.wc_flags != (DTM_WC_TM_MATCH | DTM_WC_TM_DATA_VALID)) {
		die("tag %" PRIu64 ": eager flags 0x%x, want MATCH|DATA_VALID",
		    tag, wc.wc_flags);
	}
	for (i = 0; i < len; i++)
		if (e->rx[i] != pat((uint32_t)tag, i))
			die("tag %" PRIu64 ": byte %zu is 0x%02x, want 0x%02x",
			    tag, i, e->rx[i], pat((uint32_t)tag, i));
}

/* The FIN of our rendezvous with @tag: tx may be reused after it. */
static void wait_fin(struct end *e, uint64_t tag, uint32_t len)
{
	struct dtm_wc wc = wait_one(e->qcq, "the FIN");
	enum dtm_tmh_op op;
	uint32_t app_ctx, rkey, rlen;
	uint64_t ftag, va;

	if (wc.opcode != DTM_WC_RECV || wc.status != DTM_WC_SUCCESS ||
	    !(wc.wc_flags & DTM_WC_INLINE) || wc.byte_len != 32)
		die("tag %" PRIu64 ": %s status %s instead of the FIN", tag,
		    dtm_wc_opcode_str(wc.opcode), dtm_wc_status_str(wc.status));
	dtm_tmh_parse((const struct dtm_tmh *)wc.data, &op, &app_ctx, &ftag);
	dtm_rvh_parse((const struct dtm_rvh *)(wc.data + 16), &va, &rkey,
		      &rlen);
	if (op != DTM_TMH_FIN || ftag != tag || rlen != len ||
	    va != (uintptr_t)e->tx || rkey != e->txmr->rkey)
		die("tag %" PRIu64 ": FIN op %d tag %" PRIu64 " len %u", tag,
		    (int)op, ftag, rlen);
}

static uint32_t eager_len(uint32_t i)
{
	return 8 + (i * 8) % (EAGER_MAX - 8 + 8);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, uint32_t n, const char *size)
{
	double sum = 0;
	uint32_t i;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		sum += t[i];
	qsort(t, n, sizeof(*t), cmp_double);
	printf("%s: %u round trips of %s, median %.1f us, mean %.1f us per round trip\n",
	       what, n, size, t[n / 2], sum / n);
}

/*
 * Rounds 0 .. n_eager - 1 are eager, then n_rndv rendezvous rounds.
 * Tags: ping 2i, pong 2i + 1.
 */
static void pong(struct end *e, uint32_t n_eager, uint32_t n_rndv,
		 uint32_t rbytes)
{
	uint32_t i, total = n_eager + n_rndv;

	for (i = 0; i < total; i++) {
		bool rndv = i >= n_eager;
		uint32_t len = rndv ? rbytes : eager_len(i);

		receive(e, 2ULL * i, len, rndv);
		if (i + 1 < total)
			post_tag(e, 2ULL * (i + 1));
		if (rndv) {
			send_rndv(e, 2ULL * i + 1, len);
			wait_fin(e, 2ULL * i + 1, len);
		} else {
			send_eager(e, 2ULL * i + 1, len);
		}
	}
}

static void ping(struct end *e, uint32_t n_eager, uint32_t n_rndv,
		 uint32_t rbytes)
{
	uint32_t i, total = n_eager + n_rndv;
	double *t = calloc(total ? total : 1, sizeof(*t)), t0;
	char size[64];

	if (!t)
		die("out of memory");
	for (i = 0; i < total; i++) {
		bool rndv = i >= n_eager;
		uint32_t len = rndv ? rbytes : eager_len(i);

		t0 = now_us();
		post_tag(e, 2ULL * i + 1);
		if (rndv) {
			send_rndv(e, 2ULL * i, len);
			receive(e, 2ULL * i + 1, len, true);
			wait_fin(e, 2ULL * i, len);
		} else {
			send_eager(e, 2ULL * i, len);
			receive(e, 2ULL * i + 1, len, false);
		}
		t[i] = now_us() - t0;
	}
	report("eager", t, n_eager, "8..200 bytes");
	snprintf(size, sizeof(size), "%u bytes", rbytes);
	report("rendezvous", t + n_eager, n_rndv, size);
	free(t);
}

static int put_u32(int fd, uint32_t v)
{
	return write(fd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

static int get_u32(int fd, uint32_t *v)
{
	return read(fd, v, sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

static uint32_t arg(const char *s, const char *name, uint32_t min,
		    uint32_t max)
{
	char *endp;
	unsigned long v = strtoul(s, &endp, 0);

	if (*endp || v < min || v > max) {
		fprintf(stderr, "tm_pingpong: %s must be %u .. %u\n", name,
			min, max);
		exit(2);
	}
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	uint32_t n_eager = 1000, n_rndv = 20, rbytes = 256 << 10, v;
	int to_child[2], to_parent[2], opt, st;
	struct end e;
	pid_t pid;

	while ((opt = getopt(argc, argv, "n:r:s:")) != -1) {
		switch (opt) {
		case 'n':
			n_eager = arg(optarg, "-n", 0, 1000000);
			break;
		case 'r':
			n_rndv = arg(optarg, "-r", 0, 100000);
			break;
		case 's':
			rbytes = arg(optarg, "-s", 1, 64 << 20);
			break;
		default:
			fprintf(stderr, "usage: tm_pingpong [-n EAGER_ROUNDS] [-r RNDV_ROUNDS] [-s RNDV_BYTES]\n");
			return 2;
		}
	}
	if (pipe(to_child) || pipe(to_parent))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		who = "pong";
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		end_open(&e, rbytes);
		/* the first ping's buffer before anyone can send it */
		if (n_eager + n_rndv)
			post_tag(&e, 0);
		if (put_u32(to_parent[1], e.srq->srq_num) ||
		    put_u32(to_parent[1], e.qp->qp_num) ||
		    get_u32(to_child[0], &e.peer_srq))
			die("pipe to ping: %s", strerror(errno));
		if (dtm_connect(e.qp, e.peer_srq))
			die("dtm_connect to SRQ %u: %s", e.peer_srq,
			    strerror(errno));
		if (put_u32(to_parent[1], 1))
			die("pipe to ping: %s", strerror(errno));
		pong(&e, n_eager, n_rndv, rbytes);
		dtm_close_device(e.ctx);
		exit(0);
	}
	peer_pid = pid;
	end_open(&e, rbytes);
	if (get_u32(to_parent[0], &e.peer_srq) || get_u32(to_parent[0], &v))
		die("no SRQ number from the pong process");
	printf("tm_pingpong: ping pid %d (SRQ %u, QP %u), pong pid %d (SRQ %u, QP %u)\n",
	       (int)getpid(), e.srq->srq_num, e.qp->qp_num, (int)pid,
	       e.peer_srq, v);
	if (dtm_connect(e.qp, e.peer_srq))
		die("dtm_connect to SRQ %u: %s", e.peer_srq, strerror(errno));
	if (put_u32(to_child[1], e.srq->srq_num) || get_u32(to_parent[0], &v))
		die("the pong process did not connect");
	ping(&e, n_eager, n_rndv, rbytes);
	/* wait_one() may have reaped it already, after its last message */
	st = peer_status;
	if (st == -1 && waitpid(pid, &st, 0) != pid)
		die("waitpid of the pong process: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		die("the pong process failed (status 0x%x)", st);
	dtm_close_device(e.ctx);
	printf("tm_pingpong: OK: %u eager and %u rendezvous round trips, every byte checked\n",
	       n_eager, n_rndv);
	return 0;
}
