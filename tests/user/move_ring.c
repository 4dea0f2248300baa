// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of a worker file's move ring (DPUSIM_MMAP_MOVE_RING, struct
 * dpusim_move_ring): its mmap() failure paths, one page shared by every
 * mapping, moves submitted with no system call and answered in the page
 * (a good one, a wrong one, one for another DPU), NEED_WAKEUP and the
 * kick, a hostile thread scribbling over the page while moves go on, and
 * a worker file closed with its ring mapped and its thread busy.
 *
 * Stream 0: 100 bytes of data in tokens of 16 (token i's data at
 * 24 i + 8).  The worker holds DPU 3 and has stream 0 open as it.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "kselftest_harness.h"
#include "common.h"

#define PAGE	4096UL
#define HELD	3

FIXTURE(ring) {
	int fd, wfd;
	uint8_t data[100];
	volatile uint8_t *win;
	struct dpusim_move_ring *r;
};

/*
 * The worker of stream 0, holding DPU @HELD, its window mapped; its ring
 * too if @map_ring.
 */
static void worker_setup(struct __test_metadata *_metadata,
		       FIXTURE_DATA(ring) *self, bool map_ring)
{
	struct dpusim_stream_create c = { .size = sizeof(c) };
	struct dpusim_worker_claim cl = {
		.size = sizeof(cl), .flags = DPUSIM_CLAIM_NONBLOCK,
	};
	struct dpusim_worker_open wo = { .size = sizeof(wo) };
	struct dpusim_launch l = {
		.size = sizeof(l), .first_dpu = HELD, .nr_dpus = 1,
	};
	struct dpusim_stream_cmd o;
	void *p;
	int i;

	self->wfd = -1;
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
	for (i = 0; i < 100; i++)
		self->data[i] = i * 3 + 1;
	c.stream_size = 100;
	c.token_size = 16;
	c.data = (uintptr_t)self->data;
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_STREAM_CREATE, &c));
	ASSERT_EQ(0u, c.id);
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo));
	self->wfd = wo.fd;
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_LAUNCH, &l));
	ASSERT_EQ(0, ioctl(self->wfd, DPUSIM_IOCTL_WORKER_CLAIM, &cl));
	ASSERT_EQ((uint32_t)HELD, cl.dpu);
	ASSERT_EQ(0, stream_cmd(self->wfd, DPUSIM_IOCTL_WORKER_STREAM_OPEN, 0, HELD, 0, &o));
	p = mmap(NULL, DPUSIM_WINDOW_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->wfd, DPUSIM_MMAP_WINDOW);
	ASSERT_NE(MAP_FAILED, p);
	self->win = p;
	if (!map_ring)
		return;
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->wfd,
		 DPUSIM_MMAP_MOVE_RING);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("%s", strerror(errno));
	self->r = p;
}

FIXTURE_SETUP(ring)
{
	worker_setup(_metadata, self, true);
}

static void worker_teardown(FIXTURE_DATA(ring) *self)
{
	if (self->r)
		munmap(self->r, PAGE);
	if (self->win)
		munmap((void *)self->win, DPUSIM_WINDOW_SIZE);
	if (self->wfd >= 0)
		close(self->wfd);
	if (self->fd >= 0)
		close(self->fd);
}

FIXTURE_TEARDOWN(ring)
{
	worker_teardown(self);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int kick(int wfd)
{
	struct dpusim_worker_stream_wait w = {
		.size = sizeof(w), .flags = DPUSIM_STREAM_WAIT_KICK,
	};

	return ioctl(wfd, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &w);
}

/*
 * Submit the move in r->move as number @seq and wait (2 s at most, kicking
 * the thread when it sleeps) for its answer: 0 (answered) or -1.
 */
/*
 * Submit move @seq and wait for its answer.  The 20 s are a liveness
 * bound, not a speed check: a CI run with two TCG guests on a 2-core host
 * once took over 2 s to schedule the copy thread.
 */
static int submit(FIXTURE_DATA(ring) *self, uint32_t seq)
{
	struct dpusim_move_ring *r = self->r;
	double end = now() + 20;

	r->dpu = r->dpu ? r->dpu : HELD;
	__atomic_store_n(&r->submitted, seq, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->flags, __ATOMIC_RELAXED) & DPUSIM_MOVE_RING_NEED_WAKEUP)
		kick(self->wfd);
	while (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) != seq) {
		if (now() > end)
			return -1;
		if (__atomic_load_n(&r->flags, __ATOMIC_RELAXED) & DPUSIM_MOVE_RING_NEED_WAKEUP)
			kick(self->wfd);
		usleep(100);
	}
	return 0;
}

/* Whether the copy thread says it sleeps (NEED_WAKEUP), within 20 s */
static bool asleep(struct dpusim_move_ring *r)
{
	double end = now() + 20;

	while (!(__atomic_load_n(&r->flags, __ATOMIC_ACQUIRE) & DPUSIM_MOVE_RING_NEED_WAKEUP)) {
		if (now() > end)
			return false;
		usleep(1000);
	}
	return true;
}

/* Token @t of stream 0 down into WRAM at @woff (its data + next header) */
static void down_move(struct dpusim_worker_stream_move *m, int t, uint64_t woff)
{
	*m = (struct dpusim_worker_stream_move){
		.size = sizeof(*m), .flags = DPUSIM_STREAM_MOVE_DOWN,
		.stream = 0, .nr_blocks = 1, .offset = 24 * t + 8,
		.blocks = { { woff, 24 } },
	};
}

static uint32_t cursor(FIXTURE_DATA(ring) *self)
{
	struct dpusim_stream_cmd o;

	if (stream_cmd(self->wfd, DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, HELD, 0, &o))
		return ~0u;
	return o.cursor;
}

TEST_F(ring, mmap_failure_paths)
{
	void *p;

	/* the rank file has no ring */
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 DPUSIM_MMAP_MOVE_RING);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->wfd,
		 DPUSIM_MMAP_MOVE_RING);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->wfd,
		 DPUSIM_MMAP_MOVE_RING);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* the page after the ring's offset is no ring */
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->wfd,
		 DPUSIM_MMAP_MOVE_RING + PAGE);
	EXPECT_EQ(MAP_FAILED, p);
}

TEST_F(ring, every_mapping_shows_one_page)
{
	struct dpusim_move_ring *r2;

	r2 = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->wfd,
		  DPUSIM_MMAP_MOVE_RING);
	ASSERT_NE(MAP_FAILED, r2);
	self->r->move.offset = 0x1234567;
	EXPECT_EQ(0x1234567u, r2->move.offset);
	munmap(r2, PAGE);
}

/*
 * The thread claims the moves it carries out: @taken holds the number of
 * each it answered.
 */
TEST_F(ring, the_thread_claims_its_moves)
{
	struct dpusim_worker_stream_move m;

	down_move(&m, 0, 64);
	self->r->move = m;
	ASSERT_EQ(0, submit(self, 1));
	EXPECT_EQ(1u, __atomic_load_n(&self->r->taken, __ATOMIC_ACQUIRE));
	down_move(&m, 1, 128);
	self->r->move = m;
	ASSERT_EQ(0, submit(self, 2));
	EXPECT_EQ(2u, __atomic_load_n(&self->r->taken, __ATOMIC_ACQUIRE));
	EXPECT_EQ(2u, cursor(self));
}

/*
 * A move the program claimed first is the program's: the thread, awake
 * and shown it, neither carries it out nor answers it (the cursor moves
 * once, by the program's own ioctl), and takes the next one as usual.
 */
TEST_F(ring, a_move_claimed_by_the_program_is_left_to_it)
{
	struct dpusim_worker_stream_move m, mine;
	struct dpusim_move_ring *r = self->r;

	down_move(&m, 0, 64);
	r->move = m;
	r->dpu = HELD;
	r->result = 12345;
	/* claimed before it is submitted: the thread cannot win */
	__atomic_store_n(&r->taken, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&r->submitted, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, kick(self->wfd));
	/* long enough for a woken thread to have looked at it */
	usleep(500 * 1000);
	EXPECT_EQ(0u, __atomic_load_n(&r->done, __ATOMIC_ACQUIRE));
	EXPECT_EQ(12345, r->result);
	EXPECT_EQ(0u, cursor(self));
	/* the program carries it out itself, and says so in @done */
	mine = m;
	ASSERT_EQ(0, ioctl(self->wfd, DPUSIM_IOCTL_WORKER_STREAM_MOVE, &mine));
	EXPECT_EQ(16u, mine.next);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(1u, cursor(self));
	EXPECT_EQ(0, memcmp((const void *)(self->win + 64), self->data, 16));
	/* the next move is the thread's again */
	down_move(&m, 1, 128);
	r->move = m;
	ASSERT_EQ(0, submit(self, 2));
	EXPECT_EQ(0, r->result);
	EXPECT_EQ(2u, __atomic_load_n(&r->taken, __ATOMIC_ACQUIRE));
	EXPECT_EQ(2u, cursor(self));
}

TEST_F(ring, a_move_answered_in_the_page)
{
	struct dpusim_worker_stream_move m;

	down_move(&m, 0, 64);
	self->r->move = m;
	ASSERT_EQ(0, submit(self, 1));
	EXPECT_EQ(0, self->r->result);
	EXPECT_EQ(16u, self->r->next);
	EXPECT_EQ(1u, cursor(self));
	EXPECT_EQ(0, memcmp((const void *)(self->win + 64), self->data, 16));
	/* the header after token 0: 16, 16 */
	EXPECT_EQ(16, self->win[64 + 16]);
	EXPECT_EQ(16, self->win[64 + 20]);
	/* ASYNC in the ring is ignored: done when answered */
	down_move(&m, 1, 128);
	m.flags |= DPUSIM_STREAM_MOVE_ASYNC;
	self->r->move = m;
	ASSERT_EQ(0, submit(self, 2));
	EXPECT_EQ(0, self->r->result);
	EXPECT_EQ(0, memcmp((const void *)(self->win + 128), self->data + 16, 16));
	EXPECT_EQ(2u, cursor(self));
}

TEST_F(ring, a_wrong_move_fails_with_its_errno_and_moves_nothing)
{
	struct dpusim_worker_stream_move m;

	down_move(&m, 1, 64);			/* not the cursor's token */
	self->r->move = m;
	ASSERT_EQ(0, submit(self, 1));
	EXPECT_EQ(-EINVAL, self->r->result);
	EXPECT_EQ(0u, self->r->next);
	EXPECT_EQ(0u, cursor(self));
	down_move(&m, 0, 64);
	m.__reserved = 1;
	self->r->move = m;
	ASSERT_EQ(0, submit(self, 2));
	EXPECT_EQ(-EINVAL, self->r->result);
	down_move(&m, 0, 64);
	m.stream = 9;
	self->r->move = m;
	ASSERT_EQ(0, submit(self, 3));
	EXPECT_EQ(-ENOENT, self->r->result);
	EXPECT_EQ(0u, cursor(self));
	EXPECT_EQ(0, self->win[64]);
}

TEST_F(ring, a_move_for_another_dpu_fails)
{
	struct dpusim_worker_stream_move m;

	down_move(&m, 0, 64);
	self->r->move = m;
	self->r->dpu = HELD + 1;
	ASSERT_EQ(0, submit(self, 1));
	EXPECT_EQ(-EPERM, self->r->result);
	EXPECT_EQ(0u, cursor(self));
}

TEST_F(ring, need_wakeup_and_kick)
{
	struct dpusim_worker_stream_wait w = {
		.size = sizeof(w), .flags = 1 << 1,
	};
	struct dpusim_worker_stream_move m;

	/* idle, the thread goes to sleep and says so */
	ASSERT_TRUE(asleep(self->r));
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &w));
	down_move(&m, 0, 64);
	self->r->move = m;
	self->r->dpu = HELD;
	__atomic_store_n(&self->r->submitted, 1, __ATOMIC_RELEASE);
	usleep(20000);
	/* asleep: nothing happens without the kick */
	EXPECT_EQ(0u, self->r->done);
	EXPECT_EQ(0, kick(self->wfd));
	ASSERT_EQ(0, submit(self, 1));
	EXPECT_EQ(0, self->r->result);
	EXPECT_EQ(1u, cursor(self));
}

struct scribble {
	volatile uint32_t *page;
	volatile int stop;
};

static void *scribbler(void *arg)
{
	struct scribble *s = arg;
	uint32_t x = 12345;
	unsigned int i;

	while (!s->stop) {
		for (i = 0; i < PAGE / 4; i++) {
			x = x * 1103515245 + 12345;
			s->page[i] = x;
		}
	}
	return NULL;
}

/*
 * A thread writes garbage over the whole page (numbers, moves, answers)
 * while the other kicks the copy thread: the kernel takes every snapshot
 * as a move to check, and stays sound; afterwards a good move works.
 */
TEST_F(ring, hostile_scribbling)
{
	struct dpusim_worker_stream_move m;
	struct scribble s = { (volatile uint32_t *)self->r, 0 };
	struct dpusim_stream_cmd o;
	pthread_t t;
	double end;

	ASSERT_EQ(0, pthread_create(&t, NULL, scribbler, &s));
	end = now() + 0.5;
	while (now() < end) {
		kick(self->wfd);
		usleep(500);
	}
	s.stop = 1;
	pthread_join(t, NULL);
	/* some garbage may have been a good move: start again at token 0 */
	ASSERT_EQ(0, stream_cmd(self->wfd, DPUSIM_IOCTL_WORKER_STREAM_SEEK, 0, HELD,
				INT32_MIN, &o));
	memset(self->r, 0, PAGE);
	usleep(20000);
	/* the thread may still answer the last garbage: wait it out */
	down_move(&m, 0, 256);
	self->r->move = m;
	self->r->dpu = HELD;
	/* the garbage may have wiped NEED_WAKEUP too: kick once */
	__atomic_store_n(&self->r->submitted, 77, __ATOMIC_RELEASE);
	EXPECT_EQ(0, kick(self->wfd));
	ASSERT_EQ(0, submit(self, 77));
	EXPECT_EQ(0, self->r->result);
	EXPECT_EQ(0, memcmp((const void *)(self->win + 256), self->data, 16));
}

/* The worker file closed with its ring mapped and moves going on */
TEST_F(ring, close_with_the_ring_mapped_and_busy)
{
	struct dpusim_worker_stream_move m;
	struct scribble s = { (volatile uint32_t *)self->r, 0 };
	pthread_t t;

	down_move(&m, 0, 64);
	self->r->move = m;
	ASSERT_EQ(0, submit(self, 1));
	ASSERT_EQ(0, pthread_create(&t, NULL, scribbler, &s));
	usleep(100000);
	munmap((void *)self->win, DPUSIM_WINDOW_SIZE);
	self->win = NULL;
	close(self->wfd);		/* DPU 3 faults: "worker exited" */
	self->wfd = -1;
	usleep(100000);
	s.stop = 1;
	pthread_join(t, NULL);
	munmap(self->r, PAGE);
	self->r = NULL;
}

/*
 * The same worker, its ring not mapped yet: the copy thread started by an
 * asynchronous move of the ioctl has gone to sleep when the ring is
 * mapped, with no ring to flag.  The mapping must wake it, so that it
 * flags the new ring when it sleeps again; otherwise the program, which
 * kicks only when told to, would wait for ever for its first move.  (The
 * same sleep, with the thread started by the mmap() itself, hung a CI
 * run now and then: the thread slept before the page existed.)
 */
FIXTURE(late) {
	FIXTURE_DATA(ring) c;
};

FIXTURE_SETUP(late)
{
	worker_setup(_metadata, &self->c, false);
}

FIXTURE_TEARDOWN(late)
{
	worker_teardown(&self->c);
}

TEST_F(late, a_ring_mapped_while_the_thread_sleeps_wakes_it)
{
	struct dpusim_worker_stream_wait w = { .size = sizeof(w) };
	struct dpusim_worker_stream_move m;
	void *p;

	down_move(&m, 0, 64);
	m.flags |= DPUSIM_STREAM_MOVE_ASYNC;
	ASSERT_EQ(0, ioctl(self->c.wfd, DPUSIM_IOCTL_WORKER_STREAM_MOVE, &m));
	ASSERT_EQ(0, ioctl(self->c.wfd, DPUSIM_IOCTL_WORKER_STREAM_WAIT, &w));
	/* the thread polls 200 us after its last move, then sleeps */
	usleep(100000);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->c.wfd,
		 DPUSIM_MMAP_MOVE_RING);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("%s", strerror(errno));
	self->c.r = p;
	/* woken by the mmap(), idle again: it flags the ring as it sleeps */
	EXPECT_TRUE(asleep(self->c.r));
	down_move(&m, 1, 128);
	self->c.r->move = m;
	ASSERT_EQ(0, submit(&self->c, 1));
	EXPECT_EQ(0, self->c.r->result);
	EXPECT_EQ(2u, cursor(&self->c));
	EXPECT_EQ(0, memcmp((const void *)(self->c.win + 128), self->c.data + 16, 16));
}

TEST_HARNESS_MAIN
