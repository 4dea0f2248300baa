// SPDX-License-Identifier: GPL-2.0
/*
 * The DRI examples in the VM:
 * - the stencil (tools/examples/stencil.c and its DPU program,
 *   tools/examples/dpu/stencil.c): a Jacobi stencil whose DPUs compute
 *   between halo refreshes, compared bit for bit with the host's.  Even
 *   and uneven grids, DPU grids from 1 x 1 to 8 x 8, a DPU per element;
 *   the example must exit 0 with its "all N elements match" line.  Bad
 *   usage is exit 2.
 * - the corner turn (tools/examples/corner_turn.c): N x N floats over 64
 *   DPUs and over DPU counts that do not divide N, every element checked
 *   by the example.
 */
#include "kselftest_harness.h"
#include "common.h"

#define STENCIL "build/examples/stencil"
#define CORNER_TURN "build/examples/corner_turn"

/* Run example @prog with @args; its exit status, its output in @out */
static int example(const char *prog, const char *args, char *out, size_t len)
{
	char cmd[256];
	size_t n = 0, r;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", prog, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n < len - 1 && (r = fread(out + n, 1, len - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define EXPECT_MATCH(args, elements)						\
	do {									\
		static char out[4096];						\
										\
		ASSERT_EQ(0, access(STENCIL, X_OK))				\
			TH_LOG(STENCIL ": %s (make examples)", strerror(errno)); \
		EXPECT_EQ(0, example(STENCIL, args, out, sizeof(out))) TH_LOG("%s", out); \
		EXPECT_NE(NULL, strstr(out, "all " elements " elements match"))	\
			TH_LOG("%s", out);					\
	} while (0)

/* Only for the longer timeout of TEST_F_TIMEOUT (KASAN is slow) */
FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

/* The defaults: 256 x 256 over 8 x 8 = 64 DPUs, 10 iterations */
TEST_F_TIMEOUT(slow, grid_256x256_over_8x8, 300)
{
	EXPECT_MATCH("--h 256 --w 256 --p 8 --q 8", "65536");
}

/* Uneven blocks in both dimensions, odd row lengths (unaligned rows in MRAM) */
TEST_F_TIMEOUT(slow, grid_61x45_over_4x2, 300)
{
	EXPECT_MATCH("--h 61 --w 45 --p 4 --q 2", "2745");
}

/* One DPU: no halo, the whole grid; two: one halo row each */
TEST_F_TIMEOUT(slow, grid_61x45_over_1x1_and_2x1, 300)
{
	EXPECT_MATCH("--h 61 --w 45 --p 1 --q 1", "2745");
	EXPECT_MATCH("--h 61 --w 45 --p 2 --q 1", "2745");
}

/* Rows wider than a DPU strip (several strips per row) */
TEST_F_TIMEOUT(slow, grid_40x2000_over_2x2, 300)
{
	EXPECT_MATCH("--h 40 --w 2000 --p 2 --q 2 --iters 4", "80000");
}

/* A DPU per element: blocks of 1 x 1, only halo around them */
TEST_F_TIMEOUT(slow, grid_7x5_over_7x5, 300)
{
	EXPECT_MATCH("--h 7 --w 5 --p 7 --q 5 --iters 3", "35");
}

TEST(bad_usage)
{
	static char out[4096];

	/* more DPUs than rows, an unknown option, a missing value */
	EXPECT_EQ(2, example(STENCIL, "--h 10 --w 10 --p 11 --q 1", out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(2, example(STENCIL, "--bogus", out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(2, example(STENCIL, "--iters", out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(2, example(STENCIL, "--p 0", out, sizeof(out))) TH_LOG("%s", out);
}

#define EXPECT_TURNED(args, elements)						\
	do {									\
		static char out[4096];						\
										\
		ASSERT_EQ(0, access(CORNER_TURN, X_OK))				\
			TH_LOG(CORNER_TURN ": %s (make examples)", strerror(errno)); \
		EXPECT_EQ(0, example(CORNER_TURN, args, out, sizeof(out))) TH_LOG("%s", out); \
		EXPECT_NE(NULL, strstr(out, elements " elements checked on the DPUs: all where they must be")) \
			TH_LOG("%s", out);					\
	} while (0)

TEST_F_TIMEOUT(slow, corner_turn_512_over_64, 300)
{
	EXPECT_TURNED("--n 512", "262144");
}

/* 100 rows over 7 DPUs: blocks of 15 and 14 rows, and of 15 and 14 columns */
TEST_F_TIMEOUT(slow, corner_turn_100_over_7, 300)
{
	EXPECT_TURNED("--n 100 --dpus 7", "10000");
}

/* More DPUs than rows: some own nothing */
TEST_F_TIMEOUT(slow, corner_turn_5_over_8, 300)
{
	EXPECT_TURNED("--n 5 --dpus 8", "25");
}

TEST_HARNESS_MAIN
