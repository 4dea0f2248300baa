// SPDX-License-Identifier: GPL-2.0
/*
 * The dpusim tool in the VM: `dpusim list` and `dpusim list --json` show
 * every rank with its geometry and owner, read through libudev.
 */
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define TOOL "build/bin/dpusim"

/* Run a command and capture up to len-1 bytes of its stdout. */
static int capture(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;
	int st;

	if (!p)
		return -1;
	n = fread(buf, 1, len - 1, p);
	buf[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(list_text_shows_every_rank)
{
	char out[4096], line[64];
	unsigned int r;

	ASSERT_EQ(0, capture(TOOL " list", out, sizeof(out)));
	for (r = 0; r < 4; r++) {
		snprintf(line, sizeof(line), "/dev/dpusim/rank%u", r);
		EXPECT_NE(NULL, strstr(out, line)) TH_LOG("%s missing in:\n%s", line, out);
	}
	EXPECT_NE(NULL, strstr(out, "64 MiB"));
	EXPECT_NE(NULL, strstr(out, "64 KiB"));
	EXPECT_NE(NULL, strstr(out, "free"));
}

TEST(list_shows_owner)
{
	char out[4096], want[64];
	int fd = open(RANK_PATH(1), O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	/* The tool never opens a rank: it works while one is owned. */
	ASSERT_EQ(0, capture(TOOL " list", out, sizeof(out)));
	snprintf(want, sizeof(want), "pid %d", getpid());
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("no '%s' in:\n%s", want, out);
	ASSERT_EQ(0, capture(TOOL " list --json", out, sizeof(out)));
	snprintf(want, sizeof(want), "\"owner_pid\": %d", getpid());
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("no '%s' in:\n%s", want, out);
	close(fd);
}

TEST(list_json)
{
	char out[8192], *p;
	int objects = 0;

	ASSERT_EQ(0, capture(TOOL " list --json", out, sizeof(out)));
	EXPECT_EQ('[', out[0]);
	EXPECT_NE(NULL, strstr(out, "\"devnode\": \"/dev/dpusim/rank3\""));
	EXPECT_NE(NULL, strstr(out, "\"nr_dpus\": 64"));
	EXPECT_NE(NULL, strstr(out, "\"mram_size\": 67108864"));
	EXPECT_NE(NULL, strstr(out, "\"wram_size\": 65536"));
	/* One object per rank, and the array is closed. */
	for (p = out; (p = strstr(p, "\"index\": ")); p++)
		objects++;
	EXPECT_NE(NULL, strstr(out, "\"pinned_pages\": 0"));
	EXPECT_NE(NULL, strstr(out, "\"async_queue\": {\"jobs\": [0, 64]"));
	EXPECT_EQ(4, objects);
	EXPECT_NE(NULL, strrchr(out, ']'));
}

/* The run states of the DPUs: "idle 64", "running 4, idle 60". */
TEST(list_shows_dpu_states)
{
	struct dpusim_worker_open wo = { .size = sizeof(wo) };
	struct dpusim_launch l = { .size = sizeof(l), .first_dpu = 2, .nr_dpus = 4 };
	char out[8192];
	int fd;

	ASSERT_EQ(0, capture(TOOL " list", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "idle 64")) TH_LOG("no 'idle 64' in:\n%s", out);
	fd = open(RANK_PATH(1), O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, DPUSIM_IOCTL_WORKER_OPEN, &wo));
	ASSERT_EQ(0, ioctl(fd, DPUSIM_IOCTL_LAUNCH, &l));
	ASSERT_EQ(0, capture(TOOL " list", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "running 4, idle 60")) TH_LOG("in:\n%s", out);
	ASSERT_EQ(0, capture(TOOL " list --json", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "\"dpu_states\": {\"idle\": 60, \"running\": 4, \"done\": 0, \"fault\": 0}"))
		TH_LOG("in:\n%s", out);
	EXPECT_NE(NULL, strstr(out, "\"launches\": ")) TH_LOG("in:\n%s", out);
	/* the worker file closed: they fault ("no worker left") */
	close(wo.fd);
	ASSERT_EQ(0, capture(TOOL " list", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "fault 4, idle 60")) TH_LOG("in:\n%s", out);
	close(fd);
}

TEST(bad_usage)
{
	EXPECT_EQ(2, run_cmd(TOOL " frobnicate 2>/dev/null"));
	EXPECT_EQ(2, run_cmd(TOOL " list --bogus 2>/dev/null"));
	EXPECT_EQ(0, run_cmd(TOOL " --help >/dev/null"));
}

TEST_HARNESS_MAIN
