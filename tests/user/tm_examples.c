// SPDX-License-Identifier: GPL-2.0
/*
 * The tag-matching examples in the VM: build/examples/tm_race walks the
 * seed's race and must print each completion the sync rule requires;
 * build/examples/tm_pingpong runs eager and rendezvous round trips between
 * two processes, every byte checked.  Both must exit 0 with their OK line.
 */
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "common.h"

#define EXAMPLES "build/examples/"

/* Run a command and capture up to len-1 bytes of its stdout and stderr. */
static int capture(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0, r;
	int st;

	if (!p)
		return -1;
	while (n < len - 1 && (r = fread(buf + n, 1, len - 1 - n, p)) > 0)
		n += r;
	buf[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define EXPECT_LINE(out, s)						\
	EXPECT_NE(NULL, strstr(out, s)) TH_LOG("no \"%s\" in:\n%s", s, out)

TEST(tm_race_example)
{
	static char out[16384];

	ASSERT_EQ(0, access(EXAMPLES "tm_race", X_OK))
		TH_LOG(EXAMPLES "tm_race: %s (make examples)", strerror(errno));
	ASSERT_EQ(0, capture(EXAMPLES "tm_race 2>&1", out, sizeof(out)))
		TH_LOG("output:\n%s", out);
	EXPECT_LINE(out, "step 2: m1 arrives");
	EXPECT_LINE(out, "SRQ CQ: RECV    status SUCCESS flags SYNC_REQ");
	EXPECT_LINE(out, "SRQ CQ: TM_ADD  status SUCCESS flags SYNC_REQ");
	EXPECT_LINE(out, "step 4: m2 arrives");
	EXPECT_LINE(out, "SRQ CQ: TM_ADD  status SUCCESS flags 0");
	EXPECT_LINE(out, "SRQ CQ: TM_RECV status SUCCESS flags MATCH|DATA_VALID wr_id 0xb1 (b1)");
	EXPECT_LINE(out, "SRQ CQ: TM_RECV status SUCCESS flags MATCH|DATA_VALID wr_id 0xb2 (b2)");
	EXPECT_LINE(out, "u1 holds m1 (TMH included)");
	EXPECT_LINE(out, "u2 holds m2 (TMH included)");
	EXPECT_LINE(out, "b1 holds m3");
	EXPECT_LINE(out, "b2 holds m4");
	EXPECT_LINE(out, "tm_race: OK");
	EXPECT_EQ(NULL, strstr(out, "FAILED"));
}

/* Only for the longer timeout of TEST_F_TIMEOUT */
FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

TEST_F_TIMEOUT(slow, tm_pingpong_example, 300)
{
	static char out[16384];

	ASSERT_EQ(0, access(EXAMPLES "tm_pingpong", X_OK))
		TH_LOG(EXAMPLES "tm_pingpong: %s (make examples)",
		       strerror(errno));
	ASSERT_EQ(0, capture(EXAMPLES "tm_pingpong -n 300 -r 10 -s 65536 2>&1",
			     out, sizeof(out)))
		TH_LOG("output:\n%s", out);
	EXPECT_LINE(out, "tm_pingpong: ping pid");
	EXPECT_LINE(out, "eager: 300 round trips of 8..200 bytes, median");
	EXPECT_LINE(out, "rendezvous: 10 round trips of 65536 bytes, median");
	EXPECT_LINE(out, "tm_pingpong: OK: 300 eager and 10 rendezvous round trips");
	EXPECT_EQ(NULL, strstr(out, "FAILED"));
}

/* Bad usage is exit 2, not a crash or a hang. */
TEST(tm_pingpong_bad_usage)
{
	static char out[4096];

	EXPECT_EQ(2, capture(EXAMPLES "tm_pingpong -n x 2>&1", out,
			     sizeof(out)));
	EXPECT_EQ(2, capture(EXAMPLES "tm_pingpong -q 2>&1", out, sizeof(out)));
}

TEST_HARNESS_MAIN
