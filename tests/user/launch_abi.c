// SPDX-License-Identifier: GPL-2.0
/*
 * ABI tests of DPU programs through /dev/dpusim/rank0 (and rank1):
 * DPUSIM_IOCTL_LAUNCH, _DPU_STATUS, _WORKER_OPEN and the worker file's
 * _WORKER_CLAIM and _WORKER_FINISH (one test per failure path), mmap of
 * the rank and worker files (one test per failure path), a fake worker
 * process that writes the DPU's memories through its mapping, a worker's
 * window (one test per failure path, and what it shows when), poll(),
 * the faults of closed worker files, a killed host leaving no worker,
 * and the budget of pages a mapping allocates.
 *
 * Worker files are always closed before the rank file: closing the rank
 * file sends SIGKILL to every process that claimed through one of them.
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define MAXW 4

FIXTURE(launch) {
	int fd;
	int wfd[MAXW];
	struct dpusim_rank_info info;
	void *win;		/* a worker's window, unmapped first */
};

FIXTURE_SETUP(launch)
{
	int i;

	for (i = 0; i < MAXW; i++)
		self->wfd[i] = -1;
	self->fd = open(RANK_PATH(0), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
	self->info = (struct dpusim_rank_info){ .size = sizeof(self->info) };
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_RANK_INFO, &self->info));
}

FIXTURE_TEARDOWN(launch)
{
	int i;

	/* it holds its worker file: the rank's release would kill us */
	if (self->win && self->win != MAP_FAILED)
		munmap(self->win, DPUSIM_WINDOW_SIZE);

	for (i = 0; i < MAXW; i++)
		if (self->wfd[i] >= 0)
			close(self->wfd[i]);
	if (self->fd >= 0)
		close(self->fd);
}

static int do_launch(int fd, uint32_t first, uint32_t nr)
{
	struct dpusim_launch l = {
		.size = sizeof(l), .first_dpu = first, .nr_dpus = nr,
	};

	return ioctl(fd, DPUSIM_IOCTL_LAUNCH, &l);
}

static int worker_open(int fd)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };

	if (ioctl(fd, DPUSIM_IOCTL_WORKER_OPEN, &wo))
		return -1;
	return wo.fd;
}

static int claim(int wfd, uint32_t flags, struct dpusim_worker_claim *c)
{
	*c = (struct dpusim_worker_claim){ .size = sizeof(*c), .flags = flags };
	return ioctl(wfd, DPUSIM_IOCTL_WORKER_CLAIM, c);
}

static int finish(int wfd, uint32_t dpu, uint32_t flags, const char *reason)
{
	struct dpusim_worker_finish f = {
		.size = sizeof(f), .flags = flags, .dpu = dpu,
	};

	if (reason)
		strncpy(f.reason, reason, sizeof(f.reason) - 1);
	return ioctl(wfd, DPUSIM_IOCTL_WORKER_FINISH, &f);
}

static int dpu_status(int fd, uint32_t dpu, struct dpusim_dpu_state *s)
{
	struct dpusim_dpu_status st = {
		.size = sizeof(st), .first_dpu = dpu, .nr_dpus = 1,
		.states = (uintptr_t)s,
	};

	return ioctl(fd, DPUSIM_IOCTL_DPU_STATUS, &st);
}

/* The word of /sys/class/dpusim/rank0/dpu_state for DPU @dpu. */
static int sysfs_dpu_state(unsigned int dpu, char *word, size_t len)
{
	return sysfs_rank_word(0, "dpu_state", dpu, word, len);
}

/* Wait (bounded) until poll() on the rank reports no DPU running. */
static int wait_idle(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 20000) == 1 && (p.revents & POLLIN) ? 0 : -1;
}

/* ------------------------------------------------------------ LAUNCH */

TEST_F(launch, launch_short_struct)
{
	struct dpusim_launch l = { .size = offsetof(struct dpusim_launch, nr_dpus) };

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_LAUNCH, &l));
}

TEST_F(launch, launch_long_struct)
{
	struct {
		struct dpusim_launch l;
		uint64_t tail;
	} big = { .l = { .size = sizeof(big), .nr_dpus = 1 }, .tail = 1 };

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, DPUSIM_IOCTL_LAUNCH, &big.l));
}

TEST_F(launch, launch_bad_pointer)
{
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_LAUNCH, (void *)8));
}

TEST_F(launch, launch_bad_flags)
{
	struct dpusim_launch l = { .size = sizeof(l), .flags = 1, .nr_dpus = 1 };

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_LAUNCH, &l));
}

TEST_F(launch, launch_no_dpus)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, do_launch(self->fd, 0, 0));
}

TEST_F(launch, launch_dpu_past_rank)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, do_launch(self->fd, self->info.nr_dpus, 1));
}

TEST_F(launch, launch_range_past_rank)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, do_launch(self->fd, 1, UINT32_MAX));
	EXPECT_ERRNO(EINVAL, do_launch(self->fd, 1, self->info.nr_dpus));
}

TEST_F(launch, launch_no_worker)
{
	struct dpusim_dpu_state s;

	EXPECT_ERRNO(ESRCH, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, dpu_status(self->fd, 0, &s));
	EXPECT_EQ(DPUSIM_DPU_IDLE, s.state);
}

TEST_F(launch, launch_running_busy)
{
	struct dpusim_dpu_state s;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 4, 1));
	EXPECT_ERRNO(EBUSY, do_launch(self->fd, 3, 2));
	ASSERT_EQ(0, dpu_status(self->fd, 3, &s));
	EXPECT_EQ(DPUSIM_DPU_IDLE, s.state);	/* nothing launched */
	ASSERT_EQ(0, dpu_status(self->fd, 4, &s));
	EXPECT_EQ(1, s.launches);
}

TEST_F(launch, worker_cmd_on_rank_enotty)
{
	struct dpusim_worker_claim c = { .size = sizeof(c) };

	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, DPUSIM_IOCTL_WORKER_CLAIM, &c));
}

/* ------------------------------------------------------------ DPU_STATUS */

TEST_F(launch, status_short_struct)
{
	struct dpusim_dpu_state s;
	struct dpusim_dpu_status st = {
		.size = offsetof(struct dpusim_dpu_status, nr_fault),
		.nr_dpus = 1, .states = (uintptr_t)&s,
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &st));
}

TEST_F(launch, status_long_struct)
{
	struct dpusim_dpu_state s;
	struct {
		struct dpusim_dpu_status st;
		uint64_t tail;
	} big = { .st = { .size = sizeof(big), .nr_dpus = 1,
			  .states = (uintptr_t)&s } };

	EXPECT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &big.st));
	EXPECT_EQ(sizeof(big.st), big.st.size);	/* the kernel's size */
	big.st.size = sizeof(big);
	big.tail = 1;
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &big.st));
}

TEST_F(launch, status_bad_pointer)
{
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, (void *)8));
}

TEST_F(launch, status_bad_flags)
{
	struct dpusim_dpu_state s;
	struct dpusim_dpu_status st = {
		.size = sizeof(st), .flags = 1, .nr_dpus = 1,
		.states = (uintptr_t)&s,
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &st));
}

TEST_F(launch, status_dpu_past_rank)
{
	struct dpusim_dpu_state s;
	struct dpusim_dpu_status st = {
		.size = sizeof(st), .first_dpu = self->info.nr_dpus,
		.states = (uintptr_t)&s,
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &st));
}

TEST_F(launch, status_range_past_rank)
{
	struct dpusim_dpu_state s[2];
	struct dpusim_dpu_status st = {
		.size = sizeof(st), .first_dpu = self->info.nr_dpus - 1,
		.nr_dpus = 2, .states = (uintptr_t)s,
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &st));
}

TEST_F(launch, status_bad_states_pointer)
{
	struct dpusim_dpu_status st = {
		.size = sizeof(st), .nr_dpus = 2, .states = 8,
	};

	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &st));
}

TEST_F(launch, status_whole_rank)
{
	struct dpusim_dpu_state *s = calloc(self->info.nr_dpus, sizeof(*s));
	struct dpusim_dpu_status st = {
		.size = sizeof(st), .nr_dpus = self->info.nr_dpus,
		.states = (uintptr_t)s, .nr_running = 77, .nr_fault = 77,
	};
	uint32_t i;

	ASSERT_NE(NULL, s);
	memset(s, 0xee, self->info.nr_dpus * sizeof(*s));
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &st));
	EXPECT_EQ(0, st.nr_running);
	EXPECT_EQ(0, st.nr_fault);
	for (i = 0; i < self->info.nr_dpus; i++) {
		EXPECT_EQ(DPUSIM_DPU_IDLE, s[i].state);
		EXPECT_EQ(0, s[i].launches);
		EXPECT_EQ(0, s[i].reason[0]);
	}
	free(s);
}

/* ------------------------------------------------------------ WORKER_OPEN */

TEST_F(launch, worker_open_short_struct)
{
	struct dpusim_worker_open wo = {
		.size = offsetof(struct dpusim_worker_open, __reserved),
	};

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo));
}

TEST_F(launch, worker_open_long_struct)
{
	struct {
		struct dpusim_worker_open wo;
		uint64_t tail;
	} big = { .wo = { .size = sizeof(big) }, .tail = 1 };

	EXPECT_ERRNO(E2BIG, ioctl(self->fd, DPUSIM_IOCTL_WORKER_OPEN, &big.wo));
	EXPECT_ERRNO(ESRCH, do_launch(self->fd, 0, 1));	/* no worker made */
}

TEST_F(launch, worker_open_bad_pointer)
{
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_WORKER_OPEN, (void *)8));
}

/* The answer cannot be written back: no file is left behind. */
TEST_F(launch, worker_open_readonly_struct)
{
	struct dpusim_worker_open *wo;
	int probe;

	wo = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, wo);
	wo->size = sizeof(*wo);
	ASSERT_EQ(0, mprotect(wo, 4096, PROT_READ));
	probe = dup(0);
	ASSERT_LE(0, probe);
	close(probe);
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, DPUSIM_IOCTL_WORKER_OPEN, wo));
	EXPECT_ERRNO(EBADF, fcntl(probe, F_GETFD));
	EXPECT_ERRNO(ESRCH, do_launch(self->fd, 0, 1));	/* no worker left */
	munmap(wo, 4096);
}

TEST_F(launch, worker_open_bad_flags)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo), .flags = 1 };

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo));
}

TEST_F(launch, worker_open_reserved)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo), .__reserved = 1 };

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, DPUSIM_IOCTL_WORKER_OPEN, &wo));
}

TEST_F(launch, worker_open_too_many)
{
	int fds[DPUSIM_MAX_WORKERS], i;

	for (i = 0; i < (int)DPUSIM_MAX_WORKERS; i++) {
		fds[i] = worker_open(self->fd);
		ASSERT_LE(0, fds[i]) TH_LOG("worker %d: %s", i, strerror(errno));
	}
	EXPECT_ERRNO(E2BIG, worker_open(self->fd));
	close(fds[0]);
	fds[0] = worker_open(self->fd);
	EXPECT_LE(0, fds[0]);
	for (i = 0; i < (int)DPUSIM_MAX_WORKERS; i++)
		close(fds[i]);
}

TEST_F(launch, worker_open_emfile)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int n = dup(0);
		struct rlimit rl;

		if (n < 0)
			_exit(10);
		close(n);
		rl.rlim_cur = rl.rlim_max = n;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(11);
		if (worker_open(self->fd) != -1 || errno != EMFILE)
			_exit(12);
		if (do_launch(self->fd, 0, 1) != -1 || errno != ESRCH)
			_exit(13);
		_exit(0);
	}
	EXPECT_EQ(0, child_exit_status(pid));
}

/* The worker file: O_RDWR, close-on-exec, its own ioctls only. */
TEST_F(launch, worker_file_flags)
{
	struct dpusim_rank_info info = { .size = sizeof(info) };
	int w = worker_open(self->fd);

	ASSERT_LE(0, w);
	self->wfd[0] = w;
	EXPECT_EQ(O_RDWR, fcntl(w, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(FD_CLOEXEC, fcntl(w, F_GETFD));
	EXPECT_ERRNO(ENOTTY, ioctl(w, DPUSIM_IOCTL_RANK_INFO, &info));
}

/* ------------------------------------------------------------ CLAIM */

TEST_F(launch, claim_short_struct)
{
	struct dpusim_worker_claim c = {
		.size = offsetof(struct dpusim_worker_claim, mram_size),
	};

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_CLAIM, &c));
}

TEST_F(launch, claim_long_struct)
{
	struct {
		struct dpusim_worker_claim c;
		uint64_t tail;
	} big = { .c = { .size = sizeof(big) }, .tail = 1 };

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(E2BIG, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_CLAIM, &big.c));
}

TEST_F(launch, claim_bad_pointer)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_CLAIM,
				   (void *)8));
}

TEST_F(launch, claim_bad_flags)
{
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, claim(self->wfd[0], 2, &c));
}

TEST_F(launch, claim_times_out)
{
	struct dpusim_worker_claim c = {
		.size = sizeof(c),
		.timeout_ms = 20,
	};

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(ETIMEDOUT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_CLAIM, &c));
}

TEST_F(launch, claim_timeout_over_max)
{
	struct dpusim_worker_claim c = {
		.size = sizeof(c),
		.flags = DPUSIM_CLAIM_NONBLOCK,
		.timeout_ms = DPUSIM_SYNC_MAX_TIMEOUT_MS + 1,
	};

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_CLAIM, &c));
}

TEST_F(launch, claim_reserved_nonzero)
{
	struct dpusim_worker_claim c = {
		.size = sizeof(c),
		.flags = DPUSIM_CLAIM_NONBLOCK,
		.__reserved = 1,
	};

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_CLAIM, &c));
}

TEST_F(launch, claim_nonblock_nothing)
{
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EAGAIN, claim(self->wfd[0], DPUSIM_CLAIM_NONBLOCK, &c));
}

TEST_F(launch, claim_already_held)
{
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 6, 2));
	ASSERT_EQ(0, claim(self->wfd[0], DPUSIM_CLAIM_NONBLOCK, &c));
	EXPECT_EQ(6, c.dpu);
	EXPECT_ERRNO(EINVAL, claim(self->wfd[0], DPUSIM_CLAIM_NONBLOCK, &c));
}

/* The answer cannot be written back: the DPU is not held. */
TEST_F(launch, claim_readonly_struct)
{
	struct dpusim_worker_claim *c, ok;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 2, 1));
	c = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->size = sizeof(*c);
	c->flags = DPUSIM_CLAIM_NONBLOCK;
	ASSERT_EQ(0, mprotect(c, 4096, PROT_READ));
	EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_CLAIM, c));
	ASSERT_EQ(0, claim(self->wfd[0], DPUSIM_CLAIM_NONBLOCK, &ok));
	EXPECT_EQ(2, ok.dpu);
	munmap(c, 4096);
}

TEST_F(launch, claim_shutdown)
{
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	EXPECT_ERRNO(ESHUTDOWN, claim(self->wfd[0], 0, &c));
	EXPECT_ERRNO(ESHUTDOWN, claim(self->wfd[0], DPUSIM_CLAIM_NONBLOCK, &c));
	/* The worker file keeps the rank owned */
	EXPECT_EQ(1, sysfs_rank_attr(0, "is_owned"));
	close(self->wfd[0]);
	self->wfd[0] = -1;
	EXPECT_EQ(0, sysfs_rank_attr(0, "is_owned"));
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST_F(launch, claim_interrupted)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	alarm(1);
	EXPECT_ERRNO(EINTR, claim(self->wfd[0], 0, &c));
	alarm(0);
}

/* A blocked claimer wakes up for a launch. */
TEST_F(launch, claim_waits_for_launch)
{
	struct dpusim_worker_claim c;
	pid_t pid;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(self->fd);
		if (claim(self->wfd[0], 0, &c))
			_exit(10);
		if (c.dpu != 9 || c.nr_dpus != self->info.nr_dpus ||
		    c.wram_size != self->info.wram_size ||
		    c.mram_size != self->info.mram_size || c.launches != 1)
			_exit(11);
		_exit(finish(self->wfd[0], c.dpu, 0, NULL) ? 12 : 0);
	}
	usleep(200000);
	ASSERT_EQ(0, do_launch(self->fd, 9, 1));
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(0, wait_idle(self->fd));
}

/* ------------------------------------------------------------ FINISH */

TEST_F(launch, finish_short_struct)
{
	struct dpusim_worker_finish f = {
		.size = offsetof(struct dpusim_worker_finish, reason),
	};

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH, &f));
}

TEST_F(launch, finish_long_struct)
{
	struct dpusim_worker_claim c;
	struct {
		struct dpusim_worker_finish f;
		uint64_t tail;
	} big = { .f = { .size = sizeof(big) }, .tail = 1 };

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	EXPECT_ERRNO(E2BIG, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH, &big.f));
	big.tail = 0;
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH, &big.f));
}

TEST_F(launch, finish_bad_pointer)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EFAULT, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH,
				   (void *)8));
}

TEST_F(launch, finish_bad_flags)
{
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	EXPECT_ERRNO(EINVAL, finish(self->wfd[0], 0, 2, NULL));
}

/* The run's modeled cycles, as the worker reports them, stay until the
 * DPU's next launch (sysfs dpu_modeled_cycles) */
TEST_F(launch, finish_reports_modeled_cycles)
{
	struct dpusim_worker_claim c;
	struct dpusim_worker_finish f = { .size = sizeof(f), .modeled_cycles = 4242 };
	char word[32];

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 0, 2));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	f.dpu = c.dpu;
	ASSERT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH, &f));
	ASSERT_EQ(0, sysfs_rank_word(0, "dpu_modeled_cycles", c.dpu, word, sizeof(word)));
	EXPECT_STREQ("4242", word);
	/* the struct of before the field: 0 */
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	f.dpu = c.dpu;
	f.size = offsetof(struct dpusim_worker_finish, modeled_cycles);
	ASSERT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH, &f));
	ASSERT_EQ(0, sysfs_rank_word(0, "dpu_modeled_cycles", c.dpu, word, sizeof(word)));
	EXPECT_STREQ("0", word);
	/* a new launch starts from 0 */
	ASSERT_EQ(0, wait_idle(self->fd));
	ASSERT_EQ(0, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, sysfs_rank_word(0, "dpu_modeled_cycles", 0, word, sizeof(word)));
	EXPECT_STREQ("0", word);
}

TEST_F(launch, finish_reserved)
{
	struct dpusim_worker_claim c;
	struct dpusim_worker_finish f = { .size = sizeof(f), .__reserved = 1 };

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH, &f));
}

TEST_F(launch, finish_not_held)
{
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(EINVAL, finish(self->wfd[0], 0, 0, NULL));
	ASSERT_EQ(0, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	EXPECT_ERRNO(EINVAL, finish(self->wfd[0], 1, 0, NULL));
}

TEST_F(launch, finish_reason_without_nul)
{
	struct dpusim_worker_claim c;
	struct dpusim_worker_finish f = {
		.size = sizeof(f), .flags = DPUSIM_FINISH_FAULT,
	};

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	memset(f.reason, 'x', sizeof(f.reason));
	EXPECT_ERRNO(EINVAL, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH, &f));
}

TEST_F(launch, finish_reason_without_fault)
{
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	EXPECT_ERRNO(EINVAL, finish(self->wfd[0], 0, 0, "oops"));
}

TEST_F(launch, rank_cmd_on_worker_enotty)
{
	struct dpusim_launch l = { .size = sizeof(l), .nr_dpus = 1 };

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_ERRNO(ENOTTY, ioctl(self->wfd[0], DPUSIM_IOCTL_LAUNCH, &l));
}

/*
 * Every ioctl of the worker file, with its struct and flags that make it
 * return at once (CLAIM: NONBLOCK): the size field is bounded by a page
 * (UCMD_MAX_SIZE) in the dispatcher, before any struct is read.
 */
static const struct worker_cmd {
	unsigned long cmd;
	size_t size;
	uint32_t flags;
	const char *name;
} worker_cmds[] = {
	{ DPUSIM_IOCTL_WORKER_CLAIM, sizeof(struct dpusim_worker_claim),
	  DPUSIM_CLAIM_NONBLOCK, "CLAIM" },
	{ DPUSIM_IOCTL_WORKER_FINISH, sizeof(struct dpusim_worker_finish), 0,
	  "FINISH" },
	{ DPUSIM_IOCTL_WORKER_STREAM_OPEN, sizeof(struct dpusim_stream_cmd), 0,
	  "STREAM_OPEN" },
	{ DPUSIM_IOCTL_WORKER_STREAM_CLOSE, sizeof(struct dpusim_stream_cmd), 0,
	  "STREAM_CLOSE" },
	{ DPUSIM_IOCTL_WORKER_STREAM_SEEK, sizeof(struct dpusim_stream_cmd), 0,
	  "STREAM_SEEK" },
	{ DPUSIM_IOCTL_WORKER_STREAM_MOVE,
	  sizeof(struct dpusim_worker_stream_move), 0, "STREAM_MOVE" },
	{ DPUSIM_IOCTL_WORKER_STREAM_WAIT,
	  sizeof(struct dpusim_worker_stream_wait), 0, "STREAM_WAIT" },
};

/* A page and one byte, the tail all zeros: E2BIG, whatever it holds. */
TEST_F(launch, worker_size_over_page_zero_tail)
{
	const struct worker_cmd *c;
	int ret;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 22, 1));	/* CLAIM would succeed */
	for (c = worker_cmds; c < worker_cmds + ARRAY_SIZE(worker_cmds); c++) {
		errno = 0;
		ret = ioctl_sized(self->wfd[0], c->cmd, UCMD_MAX_SIZE + 1,
				  c->flags, c->size, false);
		EXPECT_EQ(-1, ret) TH_LOG("%s", c->name);
		EXPECT_EQ(E2BIG, errno) TH_LOG("%s: %s", c->name, strerror(errno));
	}
}

/* A page exactly, the tail all zeros: CLAIM and FINISH work as before. */
TEST_F(launch, worker_size_page_zero_tail)
{
	const struct worker_cmd *c;
	struct {
		struct dpusim_worker_claim c;
		uint8_t tail[UCMD_MAX_SIZE - sizeof(struct dpusim_worker_claim)];
	} cl = { .c = { .size = UCMD_MAX_SIZE } };
	struct {
		struct dpusim_worker_finish f;
		uint8_t tail[UCMD_MAX_SIZE - sizeof(struct dpusim_worker_finish)];
	} fin = { .f = { .size = UCMD_MAX_SIZE, .dpu = 22 } };

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 22, 1));
	ASSERT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_CLAIM, &cl));
	EXPECT_EQ(22, cl.c.dpu);
	EXPECT_EQ(sizeof(cl.c), cl.c.size);
	EXPECT_EQ(self->info.mram_size, cl.c.mram_size);
	EXPECT_EQ(0, ioctl(self->wfd[0], DPUSIM_IOCTL_WORKER_FINISH, &fin));
	/* the others: what their zero fields give, never E2BIG */
	for (c = worker_cmds; c < worker_cmds + ARRAY_SIZE(worker_cmds); c++) {
		errno = 0;
		if (ioctl_sized(self->wfd[0], c->cmd, UCMD_MAX_SIZE, c->flags,
				c->size, false))
			EXPECT_NE(E2BIG, errno) TH_LOG("%s", c->name);
	}
}

/*
 * The largest size field, nothing mapped past the struct: E2BIG, and no
 * byte of the tail read (a scan would fault at once: EFAULT).
 */
TEST_F(launch, worker_size_max_not_scanned)
{
	const struct worker_cmd *c;
	int ret;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	for (c = worker_cmds; c < worker_cmds + ARRAY_SIZE(worker_cmds); c++) {
		errno = 0;
		ret = ioctl_sized(self->wfd[0], c->cmd, UINT32_MAX, c->flags,
				  c->size, true);
		EXPECT_EQ(-1, ret) TH_LOG("%s", c->name);
		EXPECT_EQ(E2BIG, errno) TH_LOG("%s: %s", c->name, strerror(errno));
	}
}

/* FINISH with FAULT: the reason in DPU_STATUS, sysfs counts it. */
TEST_F(launch, finish_fault_reason)
{
	const char *why = "mram_read: size 12 not a multiple of 8 (tasklet 3)";
	long long faults = sysfs_rank_attr(0, "faults");
	long long launches = sysfs_rank_attr(0, "launches");
	struct dpusim_dpu_state s[2];
	struct dpusim_dpu_status st = {
		.size = sizeof(st), .first_dpu = 0, .nr_dpus = 2,
		.states = (uintptr_t)s,
	};
	struct dpusim_worker_claim c;
	char word[16];

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 0, 2));
	ASSERT_EQ(0, sysfs_dpu_state(1, word, sizeof(word)));
	EXPECT_STREQ("running", word);
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	ASSERT_EQ(0, c.dpu);
	ASSERT_EQ(0, finish(self->wfd[0], 0, DPUSIM_FINISH_FAULT, why));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	ASSERT_EQ(1, c.dpu);
	ASSERT_EQ(0, finish(self->wfd[0], 1, 0, NULL));
	ASSERT_EQ(0, wait_idle(self->fd));
	ASSERT_EQ(0, ioctl(self->fd, DPUSIM_IOCTL_DPU_STATUS, &st));
	EXPECT_EQ(0, st.nr_running);
	EXPECT_EQ(1, st.nr_fault);
	EXPECT_EQ(DPUSIM_DPU_FAULT, s[0].state);
	EXPECT_STREQ(why, s[0].reason);
	EXPECT_EQ(DPUSIM_DPU_DONE, s[1].state);
	EXPECT_STREQ("", s[1].reason);
	EXPECT_EQ(faults + 1, sysfs_rank_attr(0, "faults"));
	EXPECT_EQ(launches + 2, sysfs_rank_attr(0, "launches"));
	ASSERT_EQ(0, sysfs_dpu_state(0, word, sizeof(word)));
	EXPECT_STREQ("fault", word);
	ASSERT_EQ(0, sysfs_dpu_state(1, word, sizeof(word)));
	EXPECT_STREQ("done", word);
	ASSERT_EQ(0, sysfs_dpu_state(2, word, sizeof(word)));
	EXPECT_STREQ("idle", word);
}

/* ------------------------------------------------------------ transfers */

TEST_F(launch, xfer_to_running_busy)
{
	uint64_t buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	long long ioctls = sysfs_rank_attr(0, "xfer_ioctls");
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 3, 1));
	EXPECT_ERRNO(EBUSY, xfer_one(self->fd, 3, 0, 0, buf, sizeof(buf)));
	EXPECT_ERRNO(EBUSY, xfer_one(self->fd, 3, DPUSIM_XFER_ASYNC, 0, buf,
				     sizeof(buf)));
	EXPECT_ERRNO(EBUSY, xfer_one(self->fd, 3, DPUSIM_XFER_FROM_DPU |
				     DPUSIM_XFER_WRAM, 0, buf, sizeof(buf)));
	EXPECT_EQ(0, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(ioctls, sysfs_rank_attr(0, "xfer_ioctls"));
	/* Other DPUs move */
	EXPECT_EQ(0, xfer_one(self->fd, 2, 0, 0, buf, sizeof(buf)));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	ASSERT_EQ(0, finish(self->wfd[0], 3, 0, NULL));
	EXPECT_EQ(0, xfer_one(self->fd, 3, 0, 0, buf, sizeof(buf)));
}

/* WRAM: 4-byte alignment; MRAM keeps 8. */
TEST_F(launch, wram_four_byte_alignment)
{
	uint32_t in[3] = { 0x11111111, 0x22222222, 0x33333333 }, out[3] = {};

	EXPECT_EQ(0, xfer_one(self->fd, 1, DPUSIM_XFER_WRAM, 4, in, 12));
	EXPECT_EQ(0, xfer_one(self->fd, 1, DPUSIM_XFER_WRAM | DPUSIM_XFER_FROM_DPU,
			      4, out, 12));
	EXPECT_EQ(0, memcmp(in, out, 12));
	EXPECT_ERRNO(EINVAL, xfer_one(self->fd, 1, DPUSIM_XFER_WRAM, 2, in, 4));
	EXPECT_ERRNO(EINVAL, xfer_one(self->fd, 1, 0, 4, in, 8));
	EXPECT_ERRNO(EINVAL, xfer_one(self->fd, 1, 0, 0, in, 12));
}

/* A launch waits for the file's queued asynchronous transfers. */
TEST_F(launch, launch_waits_for_async)
{
	size_t len = 4 << 20;
	uint8_t *buf = malloc(len), *back = malloc(len);
	struct dpusim_worker_claim c;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, back);
	memset(buf, 0x6b, len);
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, xfer_one(self->fd, 5, DPUSIM_XFER_ASYNC, 0, buf, len));
	ASSERT_EQ(0, do_launch(self->fd, 5, 1));
	EXPECT_EQ(0, sysfs_rank_attr(0, "async_jobs"));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	ASSERT_EQ(0, finish(self->wfd[0], 5, 0, NULL));
	ASSERT_EQ(0, xfer_one(self->fd, 5, DPUSIM_XFER_FROM_DPU, 0, back, len));
	EXPECT_EQ(0, memcmp(buf, back, len));
	free(buf);
	free(back);
}

/* ------------------------------------------------------------ mmap */

TEST_F(launch, mmap_private_einval)
{
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_PRIVATE,
				   self->fd, DPUSIM_MMAP_MRAM(0)));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(launch, mmap_dpu_past_rank)
{
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   DPUSIM_MMAP_MRAM(self->info.nr_dpus)));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(launch, mmap_past_mram)
{
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 8192, PROT_READ, MAP_SHARED, self->fd,
				   DPUSIM_MMAP_MRAM(1) + self->info.mram_size - 4096));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   DPUSIM_MMAP_MRAM(1) + self->info.mram_size));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(launch, mmap_past_wram)
{
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, self->info.wram_size + 4096, PROT_READ,
				   MAP_SHARED, self->fd, DPUSIM_MMAP_WRAM(1)));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(launch, mmap_unaligned_offset)
{
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   DPUSIM_MMAP_MRAM(1) + 8));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(launch, mmap_worker_not_held)
{
	struct dpusim_worker_claim c;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED,
				   self->wfd[0], DPUSIM_MMAP_WRAM(0)));
	EXPECT_EQ(EACCES, errno);
	ASSERT_EQ(0, do_launch(self->fd, 0, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED,
				   self->wfd[0], DPUSIM_MMAP_WRAM(1)));
	EXPECT_EQ(EACCES, errno);
}

TEST_F(launch, mmap_no_expand)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
		       DPUSIM_MMAP_MRAM(0));

	ASSERT_NE(MAP_FAILED, p);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mremap(p, 4096, 8192, MREMAP_MAYMOVE));
	EXPECT_EQ(EFAULT, errno);
	munmap(p, 4096);
}

/* The rank file's mapping and the transfers see the same bytes. */
TEST_F(launch, mmap_rank_coherent)
{
	uint64_t in[4] = { 0x0102030405060708ULL, 2, 3, 4 }, out[4] = {};
	uint8_t *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->fd, DPUSIM_MMAP_MRAM(7) + 4096);
	uint32_t *w = mmap(NULL, self->info.wram_size, PROT_READ | PROT_WRITE,
			   MAP_SHARED, self->fd, DPUSIM_MMAP_WRAM(7));

	ASSERT_NE(MAP_FAILED, m);
	ASSERT_NE(MAP_FAILED, w);
	ASSERT_EQ(0, xfer_one(self->fd, 7, 0, 4096 + 64, in, sizeof(in)));
	EXPECT_EQ(0, memcmp(m + 64, in, sizeof(in)));
	memcpy(m + 4096 + 8, in, sizeof(in));
	ASSERT_EQ(0, xfer_one(self->fd, 7, DPUSIM_XFER_FROM_DPU, 8192 + 8, out,
			      sizeof(out)));
	EXPECT_EQ(0, memcmp(in, out, sizeof(in)));
	w[1] = 0xabcdef01;
	ASSERT_EQ(0, xfer_one(self->fd, 7, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_WRAM,
			      4, out, 4));
	EXPECT_EQ(0xabcdef01, (uint32_t)out[0]);
	munmap(m, 2 * 4096);
	munmap(w, self->info.wram_size);
}

/* Pages touched through a mapping are allocated and charged. */
TEST_F(launch, mmap_sparse_charged)
{
	long long res = sysfs_rank_attr(0, "mram_resident_bytes");
	size_t len = 64 * 4096;
	volatile uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, DPUSIM_MMAP_MRAM(3));

	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(res, sysfs_rank_attr(0, "mram_resident_bytes"));
	m[0] = 1;
	m[10 * 4096 + 5] = 2;
	(void)m[20 * 4096];	/* a read touches the page too */
	EXPECT_EQ(res + 3 * 4096, sysfs_rank_attr(0, "mram_resident_bytes"));
	m[1] = 3;		/* the same page */
	EXPECT_EQ(res + 3 * 4096, sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(0, m[20 * 4096]);
	munmap((void *)m, len);
	/* Unmapping keeps the pages: they are the DPU's memory */
	EXPECT_EQ(res + 3 * 4096, sysfs_rank_attr(0, "mram_resident_bytes"));
}

static __thread sigjmp_buf touch_jmp;

static void on_touch_signal(int sig)
{
	siglongjmp(touch_jmp, sig);
}

/* Read (or write) the byte at @p: 0, or the signal the access got. */
static int touch(volatile uint8_t *p, int write, uint8_t *val)
{
	struct sigaction sa = { .sa_handler = on_touch_signal }, ob, os;
	int sig;

	sigaction(SIGBUS, &sa, &ob);
	sigaction(SIGSEGV, &sa, &os);
	sig = sigsetjmp(touch_jmp, 1);
	if (!sig) {
		if (write)
			*p = *val;
		else if (val)
			*val = *p;
		else
			(void)*p;
	}
	sigaction(SIGBUS, &ob, NULL);
	sigaction(SIGSEGV, &os, NULL);
	return sig;
}

/* Over the module's budget, a touch of a new page gets SIGBUS. */
TEST_F(launch, mmap_budget_sigbus)
{
	long long budget = mram_budget_read(), used = 0;
	volatile uint8_t *m;
	uint8_t two = 2;
	char path[64];
	int r, sig;

	ASSERT_LT(0, budget);
	for (r = 0; r < 64; r++) {
		long long a, b;

		snprintf(path, sizeof(path), "/sys/class/dpusim/rank%d", r);
		if (access(path, F_OK))
			break;
		a = sysfs_rank_attr(r, "mram_resident_bytes");
		b = sysfs_rank_attr(r, "wram_resident_bytes");
		used += (a > 0 ? a : 0) + (b > 0 ? b : 0);
	}
	m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 DPUSIM_MMAP_MRAM(4));
	ASSERT_NE(MAP_FAILED, m);
	m[0] = 1;			/* one page within the budget */
	ASSERT_EQ(0, mram_budget_write(used));
	sig = touch(m + 4096, 1, &two);	/* a new page: over the budget */
	ASSERT_EQ(0, mram_budget_write(budget));
	EXPECT_EQ(SIGBUS, sig);
	EXPECT_EQ(4096, sysfs_rank_attr(0, "mram_resident_bytes"));
	m[4096] = 2;			/* within the budget again */
	EXPECT_EQ(2 * 4096, sysfs_rank_attr(0, "mram_resident_bytes"));
	munmap((void *)m, 4 * 4096);
}

/* ------------------------------------------------------------ window */

static void *window_map(int wfd)
{
	return mmap(NULL, DPUSIM_WINDOW_SIZE, PROT_READ | PROT_WRITE,
		    MAP_SHARED, wfd, DPUSIM_MMAP_WINDOW);
}

TEST_F(launch, window_on_rank_file_einval)
{
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   DPUSIM_MMAP_WINDOW));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(launch, window_private_einval)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_PRIVATE,
				   self->wfd[0], DPUSIM_MMAP_WINDOW));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(launch, window_too_long_einval)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, DPUSIM_WINDOW_SIZE + 4096, PROT_READ,
				   MAP_SHARED, self->wfd[0], DPUSIM_MMAP_WINDOW));
	EXPECT_EQ(EINVAL, errno);
}

/* Only the window's own offset: a page into it is no DPU's memory */
TEST_F(launch, window_offset_einval)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED,
				   self->wfd[0], DPUSIM_MMAP_WINDOW + 4096));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(launch, window_second_ebusy)
{
	void *again;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->win = window_map(self->wfd[0]);
	ASSERT_NE(MAP_FAILED, self->win);
	EXPECT_EQ(MAP_FAILED, window_map(self->wfd[0]));
	EXPECT_EQ(EBUSY, errno);
	/* another worker file has a window of its own */
	self->wfd[1] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[1]);
	again = window_map(self->wfd[1]);
	EXPECT_NE(MAP_FAILED, again);
	munmap(again, DPUSIM_WINDOW_SIZE);
	/* unmapped, the first one can be mapped again */
	ASSERT_EQ(0, munmap(self->win, DPUSIM_WINDOW_SIZE));
	self->win = window_map(self->wfd[0]);
	EXPECT_NE(MAP_FAILED, self->win);
}

/*
 * The window shows the DPU held, and only while it is held: two DPUs
 * claimed in turn through one window, a write through it reaching the
 * DPU's memory (a hole allocated and charged), nothing after FINISH.
 */
TEST_F(launch, window_shows_held_dpu)
{
	uint64_t mram_size = self->info.mram_size;
	uint32_t wram[16], w20 = 0;
	uint64_t mtop, mval = 0;
	struct dpusim_worker_claim c;
	volatile uint8_t *win;
	long long res;
	uint8_t v = 0x77;
	int d, i;

	for (d = 5; d <= 6; d++) {
		for (i = 0; i < 16; i++)
			wram[i] = 0xa0000000u + d * 0x100 + i;
		mtop = 0xbeef000000000000ULL + d;
		ASSERT_EQ(0, xfer_one(self->fd, d, DPUSIM_XFER_WRAM,
				      0, wram, sizeof(wram)));
		ASSERT_EQ(0, xfer_one(self->fd, d, 0,
				      mram_size - 8, &mtop, 8));
	}
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->win = window_map(self->wfd[0]);
	ASSERT_NE(MAP_FAILED, self->win);
	win = self->win;
	EXPECT_EQ(SIGBUS, touch(win, 0, NULL));		/* nothing held */
	ASSERT_EQ(0, do_launch(self->fd, 5, 2));
	for (d = 5; d <= 6; d++) {
		ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
		ASSERT_EQ(d, c.dpu);
		for (i = 0; i < 16; i++)
			EXPECT_EQ(0xa0000000u + d * 0x100 + i,
				  ((volatile uint32_t *)win)[i]);
		EXPECT_EQ(0xbeef000000000000ULL + d,
			  *(volatile uint64_t *)(win + DPUSIM_WINDOW_MRAM +
						 mram_size - 8));
		if (d == 5) {
			/* a write, and a hole of the MRAM allocated */
			res = sysfs_rank_attr(0, "mram_resident_bytes");
			((volatile uint32_t *)win)[20] = 0x12345678;
			*(volatile uint64_t *)(win + DPUSIM_WINDOW_MRAM + 8 * 4096) =
				0x0123456789abcdefULL;
			EXPECT_EQ(res + 4096,
				  sysfs_rank_attr(0, "mram_resident_bytes"));
		}
		ASSERT_EQ(0, finish(self->wfd[0], d, 0, NULL));
		EXPECT_EQ(SIGBUS, touch(win, 0, NULL));
		EXPECT_EQ(SIGBUS, touch(win + DPUSIM_WINDOW_MRAM, 1, &v));
	}
	ASSERT_EQ(0, xfer_one(self->fd, 5, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_WRAM,
			      80, &w20, 4));
	EXPECT_EQ(0x12345678, w20);
	ASSERT_EQ(0, xfer_one(self->fd, 5, DPUSIM_XFER_FROM_DPU, 8 * 4096,
			      &mval, 8));
	EXPECT_EQ(0x0123456789abcdefULL, mval);
	/* DPU 6 never saw DPU 5's write */
	ASSERT_EQ(0, xfer_one(self->fd, 6, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_WRAM,
			      80, &w20, 4));
	EXPECT_EQ(0, w20);
}

/* Between the memories and past the MRAM: SIGBUS, while a DPU is held */
TEST_F(launch, window_past_memories_sigbus)
{
	uint64_t wram_end = (self->info.wram_size + 4095) & ~4095ULL;
	struct dpusim_worker_claim c;
	volatile uint8_t *win;
	uint8_t v = 1;

	ASSERT_LT(wram_end, DPUSIM_WINDOW_MRAM);
	ASSERT_LT(self->info.mram_size, DPUSIM_WINDOW_SIZE - DPUSIM_WINDOW_MRAM);
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->win = window_map(self->wfd[0]);
	ASSERT_NE(MAP_FAILED, self->win);
	win = self->win;
	ASSERT_EQ(0, do_launch(self->fd, 7, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	EXPECT_EQ(0, touch(win + wram_end - 1, 0, NULL));
	EXPECT_EQ(SIGBUS, touch(win + wram_end, 0, NULL));
	EXPECT_EQ(SIGBUS, touch(win + DPUSIM_WINDOW_MRAM - 1, 1, &v));
	EXPECT_EQ(0, touch(win + DPUSIM_WINDOW_MRAM + self->info.mram_size - 1,
			   0, NULL));
	EXPECT_EQ(SIGBUS, touch(win + DPUSIM_WINDOW_MRAM + self->info.mram_size,
				0, NULL));
	EXPECT_EQ(0, finish(self->wfd[0], 7, 0, NULL));
}

/* Neither moved nor split; a whole munmap works */
TEST_F(launch, window_not_moved_nor_split)
{
	struct dpusim_worker_claim c;
	uint32_t val = 0x600d600d;
	void *elsewhere, *r;

	ASSERT_EQ(0, xfer_one(self->fd, 9, DPUSIM_XFER_WRAM,
			      0, &val, 4));
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->win = window_map(self->wfd[0]);
	ASSERT_NE(MAP_FAILED, self->win);
	elsewhere = mmap(NULL, DPUSIM_WINDOW_SIZE, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, elsewhere);
	r = mremap(self->win, DPUSIM_WINDOW_SIZE, DPUSIM_WINDOW_SIZE,
		   MREMAP_MAYMOVE | MREMAP_FIXED, elsewhere);
	EXPECT_EQ(MAP_FAILED, r);
	EXPECT_EQ(EINVAL, errno);
	if (r != MAP_FAILED)
		self->win = r;
	else
		munmap(elsewhere, DPUSIM_WINDOW_SIZE);
	EXPECT_EQ(-1, munmap((uint8_t *)self->win + 16 * 4096, 4096));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mprotect(self->win, 4096, PROT_READ));
	EXPECT_EQ(EINVAL, errno);
	/* still the window, where it was, and still the only one */
	EXPECT_EQ(MAP_FAILED, window_map(self->wfd[0]));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, do_launch(self->fd, 9, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	EXPECT_EQ(0x600d600d, *(volatile uint32_t *)self->win);
	EXPECT_EQ(0, finish(self->wfd[0], 9, 0, NULL));
	EXPECT_EQ(SIGBUS, touch(self->win, 0, NULL));	/* emptied */
	EXPECT_EQ(0, munmap(self->win, DPUSIM_WINDOW_SIZE));
	self->win = NULL;
}

/* A child of the worker does not inherit the window (SIGSEGV there) */
TEST_F(launch, window_not_inherited)
{
	struct dpusim_worker_claim c;
	pid_t pid;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->win = window_map(self->wfd[0]);
	ASSERT_NE(MAP_FAILED, self->win);
	ASSERT_EQ(0, do_launch(self->fd, 10, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(touch(self->win, 0, NULL) == SIGSEGV ? 0 : 10);
	EXPECT_EQ(0, child_exit_status(pid));
	EXPECT_EQ(0, touch(self->win, 0, NULL));
	EXPECT_EQ(0, finish(self->wfd[0], 10, 0, NULL));
}

/*
 * Not even at the caller's request: MADV_DOFORK cannot take VM_DONTCOPY
 * off the window (the child's copy would keep the DPU's pages after
 * FINISH took the DPU away: FINISH empties the worker's window only).
 */
TEST_F(launch, window_dofork_einval)
{
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->win = window_map(self->wfd[0]);
	ASSERT_NE(MAP_FAILED, self->win);
	EXPECT_ERRNO(EINVAL, madvise(self->win, DPUSIM_WINDOW_SIZE, MADV_DOFORK));
}

/*
 * The same end to end: whatever MADV_DOFORK answered, a child forked while
 * the worker holds a DPU, once FINISH took it away, has no window
 * (SIGSEGV) or one that shows nothing (SIGBUS); it never reads the DPU.
 */
TEST_F(launch, window_dofork_child_sees_nothing)
{
	uint32_t val = 0x5ec0de15;
	struct dpusim_worker_claim c;
	int go[2], st;
	uint8_t b = 0;
	pid_t pid;

	ASSERT_EQ(0, xfer_one(self->fd, 21, DPUSIM_XFER_WRAM, 0, &val, 4));
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->win = window_map(self->wfd[0]);
	ASSERT_NE(MAP_FAILED, self->win);
	madvise(self->win, DPUSIM_WINDOW_SIZE, MADV_DOFORK);	/* refused? */
	ASSERT_EQ(0, do_launch(self->fd, 21, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	ASSERT_EQ(21, c.dpu);
	EXPECT_EQ(val, *(volatile uint32_t *)self->win);
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &b, 1) != 1)	/* the worker finished */
			_exit(9);
		switch (touch(self->win, 0, &b)) {
		case SIGSEGV:
		case SIGBUS:
			_exit(0);
		case 0:		/* the DPU's first byte, 0x15: read */
			_exit(b == 0x15 ? 10 : 11);
		default:
			_exit(12);
		}
	}
	close(go[0]);
	EXPECT_EQ(0, finish(self->wfd[0], 21, 0, NULL));
	EXPECT_EQ(1, write(go[1], "", 1));
	close(go[1]);
	st = child_exit_status(pid);
	EXPECT_EQ(0, st) TH_LOG("%s", st == 10 ? "the child read the DPU's WRAM" :
				st == 11 ? "the child read a byte" : "");
}

struct toucher {
	volatile uint8_t *win;
	volatile int stop;
	unsigned long reads, sigbus, wrong;
};

static void *toucher_thread(void *arg)
{
	struct toucher *t = arg;
	uint8_t b[4];

	while (!t->stop) {
		int i, sig = 0;

		for (i = 0; i < 4 && !sig; i++)
			sig = touch(t->win + i, 0, &b[i]);
		if (sig) {
			t->sigbus++;
			continue;
		}
		t->reads++;
		/* 0xd0d000NN of a DPU 16..23: never another page */
		if (b[3] != 0xd0 || b[2] != 0xd0 || b[1] || b[0] < 16 || b[0] > 23)
			t->wrong++;
	}
	return NULL;
}

/*
 * A thread of the worker reads through the window while the other claims
 * and finishes DPU after DPU: each read shows the word of a DPU it was
 * given (WRAM 0xd0d000NN for DPU NN), or gets SIGBUS between two.
 */
TEST_F(launch, window_fault_races_finish)
{
	struct toucher t = { 0 };
	struct dpusim_worker_claim c;
	pthread_t th;
	uint32_t d, val;
	int i;

	for (d = 16; d < 24; d++) {
		val = 0xd0d00000u | d;
		ASSERT_EQ(0, xfer_one(self->fd, d, DPUSIM_XFER_WRAM,
				      0, &val, 4));
	}
	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->win = window_map(self->wfd[0]);
	ASSERT_NE(MAP_FAILED, self->win);
	t.win = self->win;
	ASSERT_EQ(0, pthread_create(&th, NULL, toucher_thread, &t));
	for (i = 0; i < 400; i++) {
		d = 16 + i % 8;
		if (do_launch(self->fd, d, 1) || claim(self->wfd[0], 0, &c) ||
		    c.dpu != d)
			break;
		if (i % 4 == 0)
			usleep(500);	/* held a while: the toucher reads */
		if (finish(self->wfd[0], d, 0, NULL))
			break;
		if (i % 16 == 0)
			usleep(500);	/* nothing held a while */
	}
	t.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(400, i);
	EXPECT_EQ(0, t.wrong);
	EXPECT_LT(0, t.sigbus);
	TH_LOG("%lu reads, %lu SIGBUS", t.reads, t.sigbus);
}

/* ------------------------------------------------------------ workers */

/*
 * A fake worker: a child that only has the worker file claims, maps the
 * DPU's WRAM and MRAM, writes them, finishes; the host sees the bytes.
 */
TEST_F(launch, fake_worker_round_trip)
{
	uint32_t wout[4] = {};
	uint64_t mout[4] = {};
	struct dpusim_dpu_state s;
	struct pollfd p;
	pid_t pid;
	int w;

	w = worker_open(self->fd);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, do_launch(self->fd, 11, 1));
	p = (struct pollfd){ .fd = self->fd, .events = POLLIN };
	EXPECT_EQ(0, poll(&p, 1, 0));	/* a DPU runs */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct dpusim_worker_claim c;
		volatile uint32_t *wram;
		volatile uint64_t *mram;
		uint32_t i;

		close(self->fd);	/* it must not keep the rank file */
		if (claim(w, 0, &c))
			_exit(10);
		wram = mmap(NULL, c.wram_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, w, DPUSIM_MMAP_WRAM(c.dpu));
		mram = mmap(NULL, c.mram_size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, w, DPUSIM_MMAP_MRAM(c.dpu));
		if (wram == MAP_FAILED || mram == MAP_FAILED)
			_exit(11);
		usleep(100000);
		for (i = 0; i < 4; i++) {
			wram[1 + i] = 0xc0de0000 + i;
			mram[c.mram_size / 8 - 4 + i] = 0xfeed000000000000ULL + i;
		}
		_exit(finish(w, c.dpu, 0, NULL) ? 12 : 0);
	}
	close(w);
	EXPECT_EQ(0, wait_idle(self->fd));
	EXPECT_EQ(0, child_exit_status(pid));
	ASSERT_EQ(0, dpu_status(self->fd, 11, &s));
	EXPECT_EQ(DPUSIM_DPU_DONE, s.state);
	ASSERT_EQ(0, xfer_one(self->fd, 11, DPUSIM_XFER_FROM_DPU | DPUSIM_XFER_WRAM,
			      4, wout, sizeof(wout)));
	ASSERT_EQ(0, xfer_one(self->fd, 11, DPUSIM_XFER_FROM_DPU,
			      self->info.mram_size - sizeof(mout), mout,
			      sizeof(mout)));
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(0xc0de0000 + i, wout[i]);
		EXPECT_EQ(0xfeed000000000000ULL + i, mout[i]);
	}
}

/* A worker that exits holding a DPU: FAULT "worker exited", poll wakes. */
TEST_F(launch, worker_exit_faults_held)
{
	struct dpusim_dpu_state s;
	pid_t pid;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	self->wfd[1] = worker_open(self->fd);	/* stays: the rest runs on */
	ASSERT_LE(0, self->wfd[1]);
	ASSERT_EQ(0, do_launch(self->fd, 12, 2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct dpusim_worker_claim c;

		close(self->fd);
		close(self->wfd[1]);
		if (claim(self->wfd[0], 0, &c) || c.dpu != 12)
			_exit(10);
		_exit(0);	/* holding DPU 12 */
	}
	close(self->wfd[0]);
	self->wfd[0] = -1;
	EXPECT_EQ(0, child_exit_status(pid));
	ASSERT_EQ(0, dpu_status(self->fd, 12, &s));
	EXPECT_EQ(DPUSIM_DPU_FAULT, s.state);
	EXPECT_STREQ("worker exited", s.reason);
	ASSERT_EQ(0, dpu_status(self->fd, 13, &s));
	EXPECT_EQ(DPUSIM_DPU_RUNNING, s.state);
	/* The last worker file closed: DPU 13 faults, poll wakes */
	close(self->wfd[1]);
	self->wfd[1] = -1;
	EXPECT_EQ(0, wait_idle(self->fd));
	ASSERT_EQ(0, dpu_status(self->fd, 13, &s));
	EXPECT_EQ(DPUSIM_DPU_FAULT, s.state);
	EXPECT_STREQ("no worker left", s.reason);
}

/* poll() wakes on FINISH while another thread waits in it. */
TEST_F(launch, poll_wakes_on_finish)
{
	struct dpusim_worker_claim c;
	struct pollfd p = { .events = POLLIN };
	pid_t pid;

	self->wfd[0] = worker_open(self->fd);
	ASSERT_LE(0, self->wfd[0]);
	ASSERT_EQ(0, do_launch(self->fd, 20, 1));
	ASSERT_EQ(0, claim(self->wfd[0], 0, &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(300000);
		_exit(finish(self->wfd[0], 20, 0, NULL) ? 10 : 0);
	}
	p.fd = self->fd;
	EXPECT_EQ(1, poll(&p, 1, 20000));
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_EQ(0, child_exit_status(pid));
}

/*
 * A host (a child owning rank1) killed while its worker (a grandchild)
 * loops in a mapped DPU: the worker is killed, the rank is free again,
 * the counters are back.
 */
TEST_F(launch, killed_host_leaves_no_worker)
{
	long long pinned = sysfs_rank_attr(1, "pinned_pages");
	int ready[2], fd;
	pid_t host, worker = 0;
	int i, gone = 0;

	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, pipe(ready));
	host = fork();
	ASSERT_LE(0, host);
	if (host == 0) {
		int rfd = open(RANK_PATH(1), O_RDWR | O_CLOEXEC);
		int w;
		pid_t wp;

		close(ready[0]);
		if (rfd < 0)
			_exit(10);
		w = worker_open(rfd);
		if (w < 0 || do_launch(rfd, 0, 1))
			_exit(11);
		wp = fork();
		if (wp < 0)
			_exit(12);
		if (wp == 0) {
			struct dpusim_worker_claim c;
			volatile uint64_t *mram;
			pid_t me = getpid();

			close(rfd);
			if (claim(w, 0, &c))
				_exit(20);
			mram = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				    MAP_SHARED, w, DPUSIM_MMAP_MRAM(c.dpu));
			if (mram == MAP_FAILED)
				_exit(21);
			mram[0] = 1;
			if (write(ready[1], &me, sizeof(me)) != sizeof(me))
				_exit(22);
			for (;;)
				mram[(mram[0]++ * 512) % (1 << 17)] += 1;
		}
		close(w);
		pause();
		_exit(0);
	}
	close(ready[1]);
	ASSERT_EQ(sizeof(worker), read(ready[0], &worker, sizeof(worker)));
	close(ready[0]);
	EXPECT_EQ(1, sysfs_rank_attr(1, "is_owned"));
	EXPECT_LT(0, sysfs_rank_attr(1, "mram_resident_bytes"));
	ASSERT_EQ(0, kill(host, SIGKILL));
	EXPECT_EQ(-1, child_exit_status(host));
	/* The worker, reparented to us, is killed by the rank's release */
	for (i = 0; i < 200 && !gone; i++) {
		int st;

		if (waitpid(worker, &st, WNOHANG) == worker) {
			EXPECT_TRUE(WIFSIGNALED(st));
			EXPECT_EQ(SIGKILL, WTERMSIG(st));
			gone = 1;
		} else {
			usleep(50000);
		}
	}
	ASSERT_TRUE(gone);
	fd = open(RANK_PATH(1), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open rank1: %s", strerror(errno));
	EXPECT_EQ(getpid(), sysfs_rank_attr(1, "owner_pid"));
	EXPECT_EQ(0, sysfs_rank_attr(1, "mram_resident_bytes"));
	EXPECT_EQ(pinned, sysfs_rank_attr(1, "pinned_pages"));
	close(fd);
	EXPECT_EQ(0, sysfs_rank_attr(1, "is_owned"));
}

TEST_HARNESS_MAIN
