// SPDX-License-Identifier: GPL-2.0
/*
 * Integration tests of DPU programs (issue 9): programs built by
 * tools/dpusim-cc (tests/user/dpu/, built into build/tests/dpu/) loaded
 * with dpu_load and run with dpu_launch on the real rank devices. Every
 * runtime primitive (barriers with 1 to 24 tasklets, mutexes, handshakes,
 * mem_alloc, the MRAM rules, per-DPU globals, __host round trips, logs),
 * the launch policies, dpu_status, dpu_sync, dpu_callback, faults and
 * crashes, a transfer to a running DPU, and a killed host that must leave
 * no worker behind. Each test allocates its own set (the harness forks per
 * test, so the ranks are released when it ends).
 */
#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <dpu.h>
#include <dpu_log.h>
#include <dpu_management.h>

#include "kselftest_harness.h"
#include "common.h"
#include "dpurt/model_table.h"

#define DPU_BIN(name) "build/tests/dpu/" name

/* ------------------------------------------------------------ helpers */

static uint32_t get_u32(struct dpu_set_t dpu, const char *sym)
{
	uint32_t v = 0xdeadbeef;

	if (dpu_copy_from(dpu, sym, 0, &v, sizeof(v)) != DPU_OK)
		return 0xdeadbeef;
	return v;
}

static uint64_t get_u64(struct dpu_set_t dpu, const char *sym)
{
	uint64_t v = ~0ULL;

	if (dpu_copy_from(dpu, sym, 0, &v, sizeof(v)) != DPU_OK)
		return ~0ULL;
	return v;
}

static dpu_error_t put_u32(struct dpu_set_t set, const char *sym, uint32_t v)
{
	return dpu_copy_to(set, sym, 0, &v, sizeof(v));
}

/* Launch with stderr captured; *msg gets what the library printed. */
static dpu_error_t launch_capture(struct dpu_set_t set, char **msg)
{
	struct capture c;
	dpu_error_t r;

	cap_begin(&c);
	r = dpu_launch(set, DPU_SYNCHRONOUS);
	*msg = cap_end(&c);
	return r;
}

/* Processes whose executable is path (workers of a DPU program). */
static int count_processes_of(const char *path)
{
	char want[PATH_MAX], link[300], got[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n = 0;

	if (!realpath(path, want))
		return -1;
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(link, sizeof(link), "/proc/%s/exe", e->d_name);
		len = readlink(link, got, sizeof(got) - 1);
		if (len <= 0)
			continue;
		got[len] = '\0';
		if (!strcmp(got, want))
			n++;
	}
	closedir(d);
	return n;
}

/* ------------------------------------------------------------ barriers */

static void barrier_case(struct __test_metadata *_metadata, const char *bin,
			 uint32_t tasklets)
{
	struct dpu_set_t set, dpu;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(4, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, bin, NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		EXPECT_EQ(0, get_u32(dpu, "errors"));
		EXPECT_EQ(200, get_u32(dpu, "rounds"));
		EXPECT_EQ(tasklets, get_u32(dpu, "tasklets"));
		EXPECT_EQ(2, get_u32(dpu, "launches"));
	}
	dpu_free(set);
}

TEST(barrier_1_tasklet) { barrier_case(_metadata, DPU_BIN("barrier_test_1t"), 1); }
TEST(barrier_2_tasklets) { barrier_case(_metadata, DPU_BIN("barrier_test_2t"), 2); }
TEST(barrier_16_tasklets) { barrier_case(_metadata, DPU_BIN("barrier_test_16t"), 16); }
TEST(barrier_24_tasklets) { barrier_case(_metadata, DPU_BIN("barrier_test_24t"), 24); }

/* ------------------------------------------------------------ sync */

TEST(mutexes_keep_counters_exact)
{
	struct dpu_set_t set, dpu;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("mutex_test"), NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		uint64_t want = get_u64(dpu, "expected");

		EXPECT_EQ(16 * 2000, want);
		EXPECT_EQ(want, get_u64(dpu, "counter_a"));
		EXPECT_EQ(want, get_u64(dpu, "counter_b"));
		EXPECT_EQ(want, get_u64(dpu, "counter_c"));
	}
	dpu_free(set);
}

TEST(handshake_relay)
{
	struct dpu_set_t set, dpu;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("handshake_test"), NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		EXPECT_EQ(0 + 1 + 2 + 3 + 4 + 5 + 6 + 7, get_u32(dpu, "token"));
		EXPECT_EQ(0, get_u32(dpu, "order_errors"));
		EXPECT_EQ(0, get_u32(dpu, "status"));
	}
	dpu_free(set);
}

/* ------------------------------------------------------------ mem_alloc */

TEST(mem_alloc_aligned_in_wram)
{
	struct dpu_set_t set, dpu;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("alloc_test"), NULL));
	ASSERT_EQ(DPU_OK, put_u32(set, "mode", 0));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		uint32_t heap = get_u32(dpu, "heap_start");

		EXPECT_EQ(0, get_u32(dpu, "errors"));
		EXPECT_EQ(0, heap % 8);
		EXPECT_GE(heap, 0x06000000u);
		EXPECT_LT(heap, 0x06000000u + 65536);
	}
	dpu_free(set);
}

TEST(mem_alloc_exhaustion_faults)
{
	struct dpu_set_t set;
	bool done, fault;
	char *msg;

	ASSERT_EQ(DPU_OK, dpu_alloc(1, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("alloc_test"), NULL));
	ASSERT_EQ(DPU_OK, put_u32(set, "mode", 1));
	EXPECT_EQ(DPU_ERR_DPU_FAULT, launch_capture(set, &msg));
	EXPECT_NE(NULL, strstr(msg, "faulted: mem_alloc: 4096 bytes, WRAM has"));
	free(msg);
	ASSERT_EQ(DPU_OK, dpu_status(set, &done, &fault));
	EXPECT_TRUE(done);
	EXPECT_TRUE(fault);
	/* the worker starts afresh: the next run is clean */
	ASSERT_EQ(DPU_OK, put_u32(set, "mode", 0));
	EXPECT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	ASSERT_EQ(DPU_OK, dpu_status(set, &done, &fault));
	EXPECT_FALSE(fault);
	dpu_free(set);
}

/* ------------------------------------------------------------ MRAM rules */

static const struct {
	uint32_t mode;
	const char *reason;
} mram_rules[] = {
	{ 1, "mram_read: size 12 not a multiple of 8 (tasklet 1)" },
	{ 2, "mram_read: size 4096 above 2048 (tasklet 1)" },
	{ 3, "mram_read: size 4 below 8 (tasklet 1)" },
	{ 4, "unaligned (tasklet 1)" },
	{ 5, "mram_write: WRAM 0x" },
	{ 6, "outside MRAM (tasklet 1)" },
};

TEST(mram_rule_violations_fault_the_dpu)
{
	struct dpu_set_t set, dpu;
	unsigned int k;
	uint32_t i;

	/* strict conformance mode: the default does what the hardware does */
	ASSERT_EQ(DPU_OK, dpu_alloc(2, "dpusimStrictDma=true", &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("mram_fault"), NULL));
	ASSERT_EQ(DPU_OK, put_u32(set, "tasklet", 1));
	for (k = 0; k < sizeof(mram_rules) / sizeof(mram_rules[0]); k++) {
		char *msg;

		ASSERT_EQ(DPU_OK, put_u32(set, "mode", mram_rules[k].mode));
		EXPECT_EQ(DPU_ERR_DPU_FAULT, launch_capture(set, &msg));
		/* both DPUs named, with the reason */
		EXPECT_NE(NULL, strstr(msg, "DPU 0 of the set"));
		EXPECT_NE(NULL, strstr(msg, "DPU 1 of the set"));
		if (!strstr(msg, mram_rules[k].reason))
			TH_LOG("mode %u: %s", mram_rules[k].mode, msg);
		EXPECT_NE(NULL, strstr(msg, mram_rules[k].reason));
		free(msg);
	}
	ASSERT_EQ(DPU_OK, put_u32(set, "mode", 0));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i)
		EXPECT_EQ(0x600d, get_u32(dpu, "result"));
	dpu_free(set);
}

/* MRAM DMA outside the SDK's rules, by default as the DPU's DMA engine */
#define DMA_WORD(i) (0x0101010101010101ull * ((i) & 0x7f) + ((uint64_t)(i) << 32))

TEST(mram_dma_outside_the_rules_does_what_the_hardware_does)
{
	struct dpu_set_t set, dpu;
	uint64_t out[8];
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("mram_dma"), NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "out", 0, out, sizeof(out)));
		/* the low 3 bits of the MRAM address are ignored */
		EXPECT_EQ(DMA_WORD(1), out[0]);
		EXPECT_EQ(DMA_WORD(2), out[1]);
		/* a size of 4: (4 >> 3) - 1 in ldma's 8-bit field, 2048 bytes */
		EXPECT_EQ(256, out[2]);
		EXPECT_EQ(DMA_WORD(255), out[3]);
		/* a size of 12 moves one word */
		EXPECT_EQ(DMA_WORD(301), out[4]);
		/* PrIM TRNS's done-array: bit address % 8 of the word holding it */
		EXPECT_EQ(0xffff, out[5]);
		EXPECT_EQ(0x000000ff000000ffull, out[6]);
	}
	dpu_free(set);
}

TEST(mram_dma_outside_the_rules_faults_in_strict_mode)
{
	struct dpu_set_t set;
	char *msg;

	ASSERT_EQ(DPU_OK, dpu_alloc(1, "dpusimStrictDma=true", &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("mram_dma"), NULL));
	EXPECT_EQ(DPU_ERR_DPU_FAULT, launch_capture(set, &msg));
	if (!strstr(msg, "mram_read: MRAM 0x") || !strstr(msg, " unaligned (tasklet 0)"))
		TH_LOG("%s", msg);
	EXPECT_NE(NULL, strstr(msg, "mram_read: MRAM 0x"));
	EXPECT_NE(NULL, strstr(msg, " unaligned (tasklet 0)"));
	free(msg);
	/* dpusimStrictDma=false is the default */
	dpu_free(set);
	ASSERT_EQ(DPU_OK, dpu_alloc(1, "dpusimStrictDma=false", &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("mram_dma"), NULL));
	EXPECT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	dpu_free(set);
}

/* ------------------------------------------------------------ globals */

TEST(globals_are_per_dpu_across_256_dpus)
{
	struct dpu_set_t set, dpu;
	uint32_t ids[256], i, n;

	ASSERT_EQ(DPU_OK, dpu_alloc(256, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_dpus(set, &n));
	ASSERT_EQ(256, n);
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("globals"), NULL));
	DPU_FOREACH(set, dpu, i) {
		ids[i] = i + 1;
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, &ids[i]));
	}
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, "dpu_id", 0, 4,
					DPU_XFER_DEFAULT));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		EXPECT_EQ((i + 1) * 1000 + 7, get_u32(dpu, "output"));
		EXPECT_EQ((i + 1) * 3, get_u32(dpu, "echo"));
		EXPECT_EQ(2, get_u32(dpu, "launches"));
		EXPECT_EQ(0x12345678, get_u32(dpu, "init_check"));
	}
	dpu_free(set);
}

/* ------------------------------------------------------------ __host */

TEST(host_variables_4_and_12_bytes_round_trip)
{
	struct { uint32_t a, b, c; } in12 = { 1, 20, 300 }, out12;
	struct dpu_set_t set, dpu;
	uint32_t in4 = 0x0f0f1234, out4, i;
	struct dpu_program_t *prog;
	struct dpu_symbol_t sym;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, "sgXferEnable=true", &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("hostvar"), &prog));
	ASSERT_EQ(DPU_OK, dpu_copy_to(set, "in4", 0, &in4, 4));
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, "in12", 0, &in12, 12, DPU_XFER_DEFAULT));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "out4", 0, &out4, 4));
		EXPECT_EQ(~in4, out4);
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "out12", 0, &out12, 12));
		EXPECT_EQ(301, out12.a);
		EXPECT_EQ(40, out12.b);
		EXPECT_EQ(0xfffffffe, out12.c);
	}
	/* WRAM symbols: WRAM addresses, the 4-byte rule, the symbol variants */
	ASSERT_EQ(DPU_OK, dpu_get_symbol(prog, "out12", &sym));
	EXPECT_LT(sym.address, DPU_MRAM_BASE);
	EXPECT_EQ(12, sym.size);
	DPU_FOREACH(set, dpu, i) {
		memset(&out12, 0, sizeof(out12));
		ASSERT_EQ(DPU_OK, dpu_copy_from_symbol(dpu, sym, 4, &out12, 8));
		EXPECT_EQ(40, out12.a);
		EXPECT_EQ(0xfffffffe, out12.b);
	}
	EXPECT_EQ(DPU_ERR_INVALID_WRAM_ACCESS, dpu_copy_to(set, "in12", 0, &in12, 6));
	EXPECT_EQ(DPU_ERR_INVALID_WRAM_ACCESS, dpu_copy_to(set, "in12", 2, &in12, 4));
	EXPECT_EQ(DPU_ERR_INVALID_WRAM_ACCESS, dpu_copy_to(set, "in12", 8, &in12, 8));
	EXPECT_EQ(DPU_ERR_SG_NOT_MRAM_SYMBOL,
		  dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, "in12", 0, 12,
				   &(get_block_t){ 0 }, 0));
	/* a program that never prints has no log (as the SDK): heap at 0 */
	EXPECT_EQ(DPU_ERR_UNKNOWN_SYMBOL, dpu_get_symbol(prog, "__stdout_buffer", &sym));
	ASSERT_EQ(DPU_OK, dpu_get_symbol(prog, DPU_MRAM_HEAP_POINTER_NAME, &sym));
	EXPECT_EQ(DPU_MRAM_BASE, sym.address);
	DPU_FOREACH(set, dpu, i)
		EXPECT_EQ(DPU_ERR_LOG_CONTEXT_MISSING, dpu_log_read(dpu, stdout));
	dpu_free(set);
}

/*
 * A printf that only dead code reaches does not link the log: the heap
 * starts at the start of MRAM, as the SDK's --gc-sections leaves it
 * (SimplePIM loads with one program and computes with another that has
 * such a printf; both must agree on the heap).
 */
TEST(printf_in_dead_code_links_no_log)
{
	struct dpu_set_t set, dpu;
	struct dpu_program_t *prog;
	struct dpu_symbol_t sym;
	uint32_t answer;

	ASSERT_EQ(DPU_OK, dpu_alloc(1, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("dead_printf"), &prog));
	EXPECT_EQ(DPU_ERR_UNKNOWN_SYMBOL, dpu_get_symbol(prog, "__stdout_buffer", &sym));
	ASSERT_EQ(DPU_OK, dpu_get_symbol(prog, DPU_MRAM_HEAP_POINTER_NAME, &sym));
	EXPECT_EQ(DPU_MRAM_BASE, sym.address);
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "answer", 0, &answer, sizeof(answer)));
		EXPECT_EQ(42, answer);
	}
	dpu_free(set);
}

/* ------------------------------------------------------------ logs */

TEST(log_read_per_dpu)
{
	struct dpu_set_t set, dpu;
	char *buf = NULL, line[128];
	uint32_t i, vals[2] = { 11, 22 };
	struct dpu_program_t *prog;
	struct dpu_symbol_t sym;
	size_t len = 0;
	FILE *f;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("log"), &prog));
	/* the log is in MRAM, before the heap */
	ASSERT_EQ(DPU_OK, dpu_get_symbol(prog, "__stdout_buffer", &sym));
	EXPECT_EQ(DPU_MRAM_BASE, sym.address);
	EXPECT_EQ(65536, sym.size);
	ASSERT_EQ(DPU_OK, put_u32(set, "mode", 0));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_copy_to(dpu, "dpu_value", 0, &vals[i], 4));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		f = open_memstream(&buf, &len);
		ASSERT_NE(NULL, f);
		ASSERT_EQ(DPU_OK, dpu_log_read(dpu, f));
		fclose(f);
		snprintf(line, sizeof(line), "=== DPU#0x%x ===\n",
			 dpu_get_id(dpu_from_set(dpu)));
		EXPECT_EQ(0, strncmp(buf, line, strlen(line)));
		for (uint32_t t = 0; t < 4; t++) {
			snprintf(line, sizeof(line), "tasklet %u of 4: dpu_value %u", t, vals[i]);
			EXPECT_NE(NULL, strstr(buf, line));
		}
		EXPECT_NE(NULL, strstr(buf, "puts line\n"));
		EXPECT_NE(NULL, strstr(buf, "ok\n"));
		EXPECT_EQ(NULL, strstr(buf, "lost"));
		free(buf);
		buf = NULL;
	}
	/* a set of more than one DPU is refused, as the SDK */
	EXPECT_EQ(DPU_ERR_INVALID_DPU_SET, dpu_log_read(set, stdout));
	dpu_free(set);
}

TEST(log_overflow_is_reported)
{
	struct dpu_set_t set, dpu;
	char *buf = NULL;
	size_t len = 0;
	uint32_t i;
	FILE *f;

	ASSERT_EQ(DPU_OK, dpu_alloc(1, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("log"), NULL));
	ASSERT_EQ(DPU_OK, put_u32(set, "mode", 1));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		f = open_memstream(&buf, &len);
		ASSERT_NE(NULL, f);
		EXPECT_EQ(DPU_ERR_LOG_BUFFER_TOO_SMALL, dpu_log_read(dpu, f));
		fclose(f);
		EXPECT_NE(NULL, strstr(buf, "line 0000 "));
		EXPECT_EQ(NULL, strstr(buf, "line 0699 "));
		EXPECT_NE(NULL, strstr(buf, "bytes of this DPU's log were lost: the log holds 65528]"));
		free(buf);
		buf = NULL;
	}
	/* the next run starts with an empty log */
	ASSERT_EQ(DPU_OK, put_u32(set, "mode", 0));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		f = open_memstream(&buf, &len);
		ASSERT_EQ(DPU_OK, dpu_log_read(dpu, f));
		fclose(f);
		EXPECT_EQ(NULL, strstr(buf, "line 0000"));
		free(buf);
		buf = NULL;
	}
	dpu_free(set);
}

/* ------------------------------------------------------------ policies */

TEST(async_launch_status_and_sync)
{
	struct dpu_set_t set, dpu;
	bool done, fault;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(8, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("globals"), NULL));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, put_u32(dpu, "dpu_id", i));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_ASYNCHRONOUS));
	ASSERT_EQ(DPU_OK, dpu_sync(set));
	ASSERT_EQ(DPU_OK, dpu_status(set, &done, &fault));
	EXPECT_TRUE(done);
	EXPECT_FALSE(fault);
	DPU_FOREACH(set, dpu, i)
		EXPECT_EQ(i * 1000 + 7, get_u32(dpu, "output"));
	EXPECT_EQ(DPU_ERR_INVALID_LAUNCH_POLICY, dpu_launch(set, 2));
	dpu_free(set);
}

TEST(running_dpu_refuses_transfers_and_launches)
{
	struct dpu_set_t set, dpu;
	uint64_t spins = 1;
	bool done, fault;
	uint32_t i, first = 1;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("endless"), NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_ASYNCHRONOUS));
	ASSERT_EQ(DPU_OK, dpu_status(set, &done, &fault));
	EXPECT_FALSE(done);
	EXPECT_FALSE(fault);
	DPU_FOREACH(set, dpu, i) {
		EXPECT_EQ(DPU_ERR_DPU_ALREADY_RUNNING,
			  dpu_copy_to(dpu, "spins", 0, &spins, 8));
		EXPECT_EQ(DPU_ERR_DPU_ALREADY_RUNNING,
			  dpu_copy_to(dpu, DPU_MRAM_HEAP_POINTER_NAME, 0, &spins, 8));
		EXPECT_EQ(DPU_ERR_DPU_ALREADY_RUNNING, dpu_launch(dpu, DPU_SYNCHRONOUS));
		(void)first;
	}
	EXPECT_EQ(DPU_ERR_DPU_ALREADY_RUNNING,
		  dpu_load(set, DPU_BIN("empty"), NULL));
	/* dpu_free of a running set: dpusim.ko kills the workers */
	EXPECT_EQ(DPU_OK, dpu_free(set));
	EXPECT_EQ(0, count_processes_of(DPU_BIN("endless")));
}

struct cb_state {
	uint32_t calls;
	uint32_t mask;
	uint32_t output0;
	dpu_error_t ret;
};

static dpu_error_t count_cb(struct dpu_set_t rank, uint32_t idx, void *args)
{
	struct cb_state *s = args;
	struct dpu_set_t dpu;
	uint32_t n = 0;

	s->calls++;
	s->mask |= 1u << idx;
	if (dpu_get_nr_dpus(rank, &n) != DPU_OK || !n)
		return DPU_ERR_INTERNAL;
	DPU_FOREACH(rank, dpu) {
		dpu_copy_from(dpu, "output", 0, &s->output0, 4);
		break;
	}
	return s->ret;
}

TEST(callbacks)
{
	struct cb_state s = { 0 };
	struct dpu_set_t set, dpu;
	uint32_t nr_ranks, i;

	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_get_nr_ranks(set, &nr_ranks));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("globals"), NULL));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, put_u32(dpu, "dpu_id", 5));
	ASSERT_EQ(DPU_OK, dpu_callback(set, count_cb, &s, DPU_CALLBACK_DEFAULT));
	EXPECT_EQ(nr_ranks, s.calls);
	EXPECT_EQ((1u << nr_ranks) - 1, s.mask);
	s = (struct cb_state){ 0 };
	ASSERT_EQ(DPU_OK, dpu_callback(set, count_cb, &s, DPU_CALLBACK_SINGLE_CALL));
	EXPECT_EQ(1, s.calls);
	EXPECT_EQ(DPU_ERR_NONBLOCKING_SYNC_CALLBACK,
		  dpu_callback(set, count_cb, &s, DPU_CALLBACK_NONBLOCKING));
	/* ASYNC: after the launch queued before it; dpu_sync returns its error */
	s = (struct cb_state){ .ret = DPU_ERR_INVALID_THREAD_ID };
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_ASYNCHRONOUS));
	ASSERT_EQ(DPU_OK, dpu_callback(set, count_cb, &s,
				       DPU_CALLBACK_ASYNC | DPU_CALLBACK_SINGLE_CALL));
	EXPECT_EQ(DPU_ERR_INVALID_THREAD_ID, dpu_sync(set));
	EXPECT_EQ(1, s.calls);
	EXPECT_EQ(5 * 1000 + 7, s.output0);
	EXPECT_EQ(DPU_OK, dpu_sync(set));
	dpu_free(set);
}

/* ------------------------------------------------------------ crashes */

TEST(crashing_dpu_is_reported_and_the_host_survives)
{
	static const char *const reasons[] = {
		NULL, "SIGSEGV at 0x0 (tasklet 1)", "SIGFPE", "SIGABRT (tasklet 1)",
	};
	struct dpu_set_t set, dpu;
	uint32_t mode, i;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("crash"), NULL));
	ASSERT_EQ(DPU_OK, put_u32(set, "tasklet", 1));
	for (mode = 1; mode <= 3; mode++) {
		char *msg;

		ASSERT_EQ(DPU_OK, put_u32(set, "mode", mode));
		EXPECT_EQ(DPU_ERR_DPU_FAULT, launch_capture(set, &msg));
		if (!strstr(msg, reasons[mode]))
			TH_LOG("mode %u: %s", mode, msg);
		EXPECT_NE(NULL, strstr(msg, reasons[mode]));
		free(msg);
	}
	ASSERT_EQ(DPU_OK, put_u32(set, "mode", 0));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i)
		EXPECT_EQ(1, get_u32(dpu, "result"));
	dpu_free(set);
}

TEST(killed_host_leaves_no_worker)
{
	long long resident0 = sysfs_rank_attr(0, "mram_resident_bytes");
	struct dpu_set_t set;
	int pipefd[2], i;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(pipefd[0]);
		if (dpu_alloc_ranks(1, NULL, &set) != DPU_OK ||
		    dpu_load(set, DPU_BIN("endless"), NULL) != DPU_OK ||
		    dpu_launch(set, DPU_ASYNCHRONOUS) != DPU_OK)
			_exit(1);
		/* wait until the workers really run the program */
		for (i = 0; i < 2000; i++) {
			if (count_processes_of(DPU_BIN("endless")) > 0)
				break;
			usleep(10000);
		}
		write(pipefd[1], "r", 1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_GT(count_processes_of(DPU_BIN("endless")), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* the workers die with the rank's owner; give the kernel a moment */
	for (i = 0; i < 500 && count_processes_of(DPU_BIN("endless")) > 0; i++)
		usleep(10000);
	EXPECT_EQ(0, count_processes_of(DPU_BIN("endless")));
	/* the rank is free again and its memory (and pages) gone */
	for (i = 0; i < 500; i++) {
		if (dpu_alloc_ranks(1, NULL, &set) == DPU_OK)
			break;
		usleep(10000);
	}
	ASSERT_LT(i, 500);
	EXPECT_EQ(resident0 > 0 ? resident0 : 0,
		  sysfs_rank_attr(0, "mram_resident_bytes"));
	EXPECT_EQ(0, sysfs_rank_attr(0, "pinned_pages"));
	dpu_free(set);
}

/* ------------------------------------------------------------ loading */

TEST(upmem_binary_is_refused_at_launch)
{
	char path[] = "/dev/shm/dpusim-em245-XXXXXX", *msg;
	struct dpu_set_t set;
	uint16_t machine = 245;
	struct capture c;
	dpu_error_t r;
	FILE *in;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		SKIP(return, "no writable /dev/shm");
	in = fopen(DPU_BIN("empty"), "rb");
	ASSERT_NE(NULL, in);
	for (int ch; (ch = fgetc(in)) != EOF;)
		ASSERT_EQ(1, write(fd, &(char){ (char)ch }, 1));
	fclose(in);
	/* e_machine at offset 18: a UPMEM DPU binary */
	ASSERT_EQ(2, pwrite(fd, &machine, 2, 18));
	close(fd);
	ASSERT_EQ(DPU_OK, dpu_alloc(1, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, path, NULL));
	cap_begin(&c);
	r = dpu_launch(set, DPU_SYNCHRONOUS);
	msg = cap_end(&c);
	unlink(path);
	EXPECT_EQ(DPU_ERR_ELF_INVALID_FILE, r);
	EXPECT_NE(NULL, strstr(msg, "is a UPMEM DPU binary (ELF machine 245)"));
	EXPECT_NE(NULL, strstr(msg, "dpu-upmem-dpurte-clang"));
	free(msg);
	dpu_free(set);
}

TEST(load_from_memory_runs)
{
	struct dpu_set_t set, dpu;
	uint8_t *img = NULL;
	size_t len = 0;
	uint32_t i;
	FILE *in;

	in = fopen(DPU_BIN("globals"), "rb");
	ASSERT_NE(NULL, in);
	ASSERT_EQ(0, fseek(in, 0, SEEK_END));
	len = (size_t)ftell(in);
	rewind(in);
	img = malloc(len);
	ASSERT_NE(NULL, img);
	ASSERT_EQ(len, fread(img, 1, len, in));
	fclose(in);
	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load_from_memory(set, img, len, NULL));
	free(img);
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, put_u32(dpu, "dpu_id", 40 + i));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i)
		EXPECT_EQ((40 + i) * 1000 + 7, get_u32(dpu, "output"));
	dpu_free(set);
}

TEST(no_program_no_launch)
{
	struct dpu_set_t set;

	ASSERT_EQ(DPU_OK, dpu_alloc(1, NULL, &set));
	EXPECT_EQ(DPU_ERR_NO_PROGRAM_LOADED, dpu_launch(set, DPU_SYNCHRONOUS));
	dpu_free(set);
}

TEST(vecadd_with_input_arguments)
{
	struct { uint32_t size, transfer_size, kernel; } args;
	struct dpu_set_t set, dpu;
	const uint32_t n = 4096;	/* int32 per DPU */
	int32_t *a, *b, *c;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(4, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("vecadd"), NULL));
	a = calloc(4 * n, 4);
	b = calloc(4 * n, 4);
	c = calloc(4 * n, 4);
	ASSERT_TRUE(a && b && c);
	for (i = 0; i < 4 * n; i++) {
		a[i] = (int32_t)(i * 7);
		b[i] = (int32_t)(100000 - i);
	}
	args = (typeof(args)){ n * 4, n * 4, 0 };
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, "DPU_INPUT_ARGUMENTS", 0, &args,
					   sizeof(args), DPU_XFER_DEFAULT));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, a + i * n));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME,
					0, n * 4, DPU_XFER_DEFAULT));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, b + i * n));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME,
					n * 4, n * 4, DPU_XFER_DEFAULT));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, dpu_prepare_xfer(dpu, c + i * n));
	ASSERT_EQ(DPU_OK, dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME,
					2 * n * 4, n * 4, DPU_XFER_DEFAULT));
	for (i = 0; i < 4 * n; i++)
		ASSERT_EQ(a[i] + b[i], c[i]);
	free(a);
	free(b);
	free(c);
	dpu_free(set);
}

/*
 * The SDK's fixed-size block and buddy allocators (issue 30, item 1), as
 * SimplePIM uses them: 8 tasklets, each a block of both, filled by DMA.
 */
TEST(sdk_allocators_fsb_and_buddy)
{
	struct dpu_set_t set, dpu;
	uint64_t words[8 * 64], want = 0;
	uint32_t i;

	for (i = 0; i < 8 * 64; i++) {
		words[i] = (uint64_t)i * 2654435761u;
		want += words[i];
	}
	ASSERT_EQ(DPU_OK, dpu_alloc(4, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("sdk_alloc"), NULL));
	ASSERT_EQ(DPU_OK, dpu_broadcast_to(set, DPU_MRAM_HEAP_POINTER_NAME, 0, words,
					   sizeof(words), DPU_XFER_DEFAULT));
	for (int launch = 0; launch < 2; launch++) {
		ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
		DPU_FOREACH(set, dpu) {
			EXPECT_EQ(0u, get_u32(dpu, "errors"));
			EXPECT_EQ(want, get_u64(dpu, "sum"));
			EXPECT_EQ(8u, get_u32(dpu, "fsb_left"));
		}
	}
	dpu_free(set);
}

/*
 * CLOCKS_PER_SEC is a DPU variable the host reads by name (issue 30, item
 * 4; TransPimLib's hosts do), and the value the DPU code sees.
 */
TEST(clocks_per_sec_by_name)
{
	struct dpu_set_t set, dpu;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("clocks"), NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu) {
		uint32_t hz = 0;

		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "CLOCKS_PER_SEC", 0, &hz, sizeof(hz)));
		EXPECT_EQ(350000000u, hz);
		EXPECT_EQ(hz, get_u32(dpu, "hz"));
	}
	dpu_free(set);
}


/*
 * profiling.h (issue 30, item 6): built as usual its sections do nothing
 * and the contexts stay as PROFILING_INIT left them; built with
 * DPU_PROFILING each tasklet's time in each section is counted.  The host
 * reads the contexts by name.
 */
static void profiling_case(struct __test_metadata *_metadata, const char *bin, bool counting)
{
	struct { uint32_t start[4], count[4]; } ctx[2];
	static const char *const names[2] = { "compute", "copy" };
	struct dpu_set_t set, dpu;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, bin, NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu) {
		for (int s = 0; s < 2; s++) {
			ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, names[s], 0, &ctx[s], sizeof(ctx[s])));
			for (int t = 0; t < 4; t++) {
				EXPECT_EQ(UINT32_MAX, ctx[s].start[t]);
				if (counting) {
					EXPECT_LT(0u, ctx[s].count[t]);
				} else {
					EXPECT_EQ(0u, ctx[s].count[t]);
				}
			}
		}
		EXPECT_NE(0ull, get_u64(dpu, "work"));
	}
	dpu_free(set);
}

TEST(profiling_sections_compile_to_nothing)
{
	profiling_case(_metadata, DPU_BIN("profiling_test"), false);
}

TEST(profiling_sections_count_with_dpu_profiling)
{
	profiling_case(_metadata, DPU_BIN("profiling_on"), true);
}

/*
 * A DPU program defining its own rand() and srand() (issue 30, item 5;
 * PIM-TC does) compiles against <stdlib.h> and runs its generator.
 */
TEST(dpu_program_defines_rand)
{
	struct dpu_set_t set, dpu;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("own_rand"), NULL));
	DPU_FOREACH(set, dpu, i)
		ASSERT_EQ(DPU_OK, put_u32(dpu, "seed", 1000 + i));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		uint64_t got[3];
		uint32_t prev = 1000 + i;

		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "first", 0, got, sizeof(got)));
		for (int k = 0; k < 3; k++) {
			uint64_t want = 1103515245ull * prev + 12345u;

			EXPECT_EQ(want, got[k]);
			prev = (uint32_t)want;
		}
	}
	dpu_free(set);
}

/* The ISA's mul_X_Y: a byte of a ("h" bits 8..15, "l" 0..7) times one of b. */
static uint32_t isa_mul8(uint32_t a, int ha, int sa, uint32_t b, int hb, int sb)
{
	int64_t p = (ha ? (a >> 8) & 0xff : a & 0xff);
	int64_t q = (hb ? (b >> 8) & 0xff : b & 0xff);

	if (sa && p >= 128)
		p -= 256;
	if (sb && q >= 128)
		q -= 256;
	return (uint32_t)((p * q) & 0xffffffff);
}

/*
 * A DPU program doing pim-ml's int8 products with the 8x8-bit multiply
 * builtins (issue 30, item 2) computes what plain C multiplication does,
 * and each of the twelve builtins what the ISA defines.
 */
TEST(int8_multiply_builtins)
{
	static const struct { int ha, sa, hb, sb; } ops[12] = {
		{ 1, 1, 1, 1 }, { 1, 1, 0, 1 }, { 1, 1, 1, 0 }, { 1, 1, 0, 0 },
		{ 0, 1, 1, 1 }, { 0, 1, 0, 1 }, { 0, 1, 1, 0 }, { 0, 1, 0, 0 },
		{ 1, 0, 1, 0 }, { 1, 0, 0, 0 }, { 0, 0, 1, 0 }, { 0, 0, 0, 0 },
	};
	static const uint32_t as[] = { 0x12347f80U, 0xffff80ffU, 0x00ff017fU };
	static const uint32_t bs[] = { 0xabcd80ffU, 0x00017f80U, 0xffffff01U };
	struct dpu_set_t set, dpu;
	int8_t x[64];
	int16_t w[64];
	int32_t y[64], wide[64], dot, want_dot = 0;
	uint32_t raw[12];

	for (int i = 0; i < 64; i++) {
		x[i] = (int8_t)(i * 37 - 128);
		w[i] = (int16_t)(i * 1031 - 32768);
		y[i] = (int32_t)(i * 0x01020305U - 0x7fffffffU);
		want_dot += x[i] * w[i];
	}
	ASSERT_EQ(DPU_OK, dpu_alloc(1, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("int8_mul"), NULL));
	ASSERT_EQ(DPU_OK, dpu_copy_to(set, "x", 0, x, sizeof(x)));
	ASSERT_EQ(DPU_OK, dpu_copy_to(set, "w", 0, w, sizeof(w)));
	ASSERT_EQ(DPU_OK, dpu_copy_to(set, "y", 0, y, sizeof(y)));
	for (unsigned int k = 0; k < sizeof(as) / sizeof(as[0]); k++) {
		ASSERT_EQ(DPU_OK, put_u32(set, "a", as[k]));
		ASSERT_EQ(DPU_OK, put_u32(set, "b", bs[k]));
		ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
		DPU_FOREACH(set, dpu) {
			ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "raw", 0, raw, sizeof(raw)));
			for (int j = 0; j < 12; j++)
				EXPECT_EQ(isa_mul8(as[k], ops[j].ha, ops[j].sa,
						   bs[k], ops[j].hb, ops[j].sb), raw[j]);
		}
	}
	DPU_FOREACH(set, dpu) {
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "dot", 0, &dot, sizeof(dot)));
		EXPECT_EQ(want_dot, dot);
		ASSERT_EQ(DPU_OK, dpu_copy_from(dpu, "wide", 0, wide, sizeof(wide)));
		for (int i = 0; i < 64; i++)
			EXPECT_EQ((int32_t)((uint32_t)x[i] * (uint32_t)y[i]), wide[i]);
	}
	dpu_free(set);
}

/*
 * Two files with a file-static variable of one name (issue 30, item 7):
 * the program loads, each file has its own, the host reaches neither.
 */
TEST(same_named_statics_load)
{
	struct dpu_set_t set, dpu;
	uint32_t v = 0;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("statics"), NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu) {
		EXPECT_EQ(6u, get_u32(dpu, "from_main"));
		EXPECT_EQ(102u, get_u32(dpu, "from_other"));
		EXPECT_EQ(DPU_ERR_UNKNOWN_SYMBOL, dpu_copy_from(dpu, "counter", 0, &v, 4));
	}
	dpu_free(set);
}

/* ------------------------------------------------------------ profile */

TEST(profile_environment_is_merged)
{
	struct dpu_set_t set;
	struct capture c;
	char *msg;
	dpu_error_t r;

	setenv("UPMEM_PROFILE", "noSuchKey=1", 1);
	cap_begin(&c);
	r = dpu_alloc(1, "nrThreadPerPool=8", &set);
	msg = cap_end(&c);
	EXPECT_EQ(DPU_ERR_INVALID_PROFILE, r);
	EXPECT_NE(NULL, strstr(msg, "unknown key 'noSuchKey'"));
	free(msg);
	/* UPMEM_PROFILE comes last: it overrides the program's string */
	setenv("UPMEM_PROFILE", "sgXferEnable=false", 1);
	ASSERT_EQ(DPU_OK, dpu_alloc(1, "sgXferEnable=true,cycleAccurate=true,nrJobsPerRank=64", &set));
	r = dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME,
			     0, 8, &(get_block_t){ 0 }, 0);
	EXPECT_EQ(DPU_ERR_SG_NOT_ACTIVATED, r);
	dpu_free(set);
	unsetenv("UPMEM_PROFILE");
	setenv("UPMEM_PROFILE_BASE", "sgXferEnable=true", 1);
	ASSERT_EQ(DPU_OK, dpu_alloc(1, "", &set));
	/* enabled by the base: the NULL callback is the next error */
	r = dpu_push_sg_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME,
			     0, 8, &(get_block_t){ 0 }, 0);
	EXPECT_EQ(DPU_ERR_INVALID_MEMORY_TRANSFER, r);
	dpu_free(set);
	unsetenv("UPMEM_PROFILE_BASE");
}

/* ------------------------------------------------------------ management */

TEST(management_ids)
{
	struct dpu_set_t set, rank, dpu;
	uint32_t r, i;

	ASSERT_EQ(DPU_OK, dpu_alloc_ranks(2, NULL, &set));
	DPU_RANK_FOREACH(set, rank, r) {
		struct dpu_rank_t *rk = dpu_rank_from_set(rank);

		ASSERT_NE(NULL, rk);
		DPU_FOREACH(rank, dpu, i) {
			struct dpu_t *d = dpu_from_set(dpu);

			ASSERT_NE(NULL, d);
			EXPECT_EQ(rk, dpu_get_rank(d));
			EXPECT_EQ(i / 8, dpu_get_slice_id(d));
			EXPECT_EQ(i % 8, dpu_get_member_id(d));
			EXPECT_EQ(d, dpu_get(rk, dpu_get_slice_id(d), dpu_get_member_id(d)));
			EXPECT_EQ((dpu_get_rank_id(rk) << 16) | ((i / 8) << 8) | (i % 8),
				  dpu_get_id(d));
			EXPECT_TRUE(dpu_is_enabled(d));
		}
	}
	EXPECT_EQ(NULL, dpu_rank_from_set(set));
	dpu_free(set);
}

/*
 * Modeled time (issue 33): an unmodified program's perfcounter reads the
 * pipeline model's cycles (tests/user/dpu/model_time.c), which depend on
 * what the program did, never on the host's time.
 */
struct model_reading {
	uint64_t cycles, instrs, dma, launch;
};

/* sysfs dpu_modeled_cycles of the DPU: the run's modeled cycles */
static uint64_t launch_cycles(struct dpu_set_t dpu)
{
	struct dpu_t *d = dpu_from_set(dpu);
	char word[32];

	if (!d || sysfs_rank_word(dpu_get_rank_id(dpu_get_rank(d)), "dpu_modeled_cycles",
				  dpu_get_slice_id(d) * DPUSIM_DPUS_PER_SLICE +
					  dpu_get_member_id(d),
				  word, sizeof(word)))
		return UINT64_MAX;
	return strtoull(word, NULL, 10);
}

static void model_run(struct __test_metadata *_metadata, const char *bin, uint32_t iters,
		      struct model_reading r[2])
{
	struct dpu_set_t set, dpu;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(2, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, bin, NULL));
	ASSERT_EQ(DPU_OK, put_u32(set, "iters", iters));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu, i) {
		r[i].cycles = get_u64(dpu, "cycles");
		r[i].instrs = get_u64(dpu, "instrs");
		r[i].dma = get_u64(dpu, "dma_cycles");
		r[i].launch = launch_cycles(dpu);
	}
	dpu_free(set);
}

TEST(perfcounter_reads_modeled_cycles_of_one_tasklet)
{
	struct model_reading a[2], b[2], c[2];
	/* 8 DMAs of 256 bytes, one after the other */
	uint64_t dma = 8ull * (DPU_DMA_LATENCY + 256 / 8 * DPU_DMA_CYCLES_PER_8B);

	model_run(_metadata, DPU_BIN("model_time"), 1000, a);
	model_run(_metadata, DPU_BIN("model_time"), 2000, b);
	model_run(_metadata, DPU_BIN("model_time"), 3000, c);
	TH_LOG("1000 iterations: %llu cycles, %llu instructions; DMAs %llu cycles",
	       (unsigned long long)a[0].cycles, (unsigned long long)a[0].instrs,
	       (unsigned long long)a[0].dma);
	EXPECT_EQ(a[0].cycles, a[1].cycles);
	EXPECT_EQ(a[0].instrs, a[1].instrs);
	/* one tasklet issues once every 11 cycles */
	EXPECT_EQ(a[0].instrs * DPU_ISSUE_INTERVAL, a[0].cycles);
	/* at least the loop's shift, xor, two adds and its branch */
	EXPECT_LE(1000ull * 5, a[0].instrs);
	/* each 1000 iterations more cost the same */
	EXPECT_EQ(b[0].cycles - a[0].cycles, c[0].cycles - b[0].cycles);
	EXPECT_LT(a[0].cycles, b[0].cycles);
	EXPECT_LE(dma, a[0].dma);
	EXPECT_GE(dma + 11ull * 400, a[0].dma);
	/* the launch's modeled time covers both phases and its fixed cost */
	EXPECT_EQ(a[0].launch, a[1].launch);
	EXPECT_LE(a[0].cycles + a[0].dma + DPU_LAUNCH_CYCLES, a[0].launch);
	EXPECT_GT(a[0].cycles + a[0].dma + DPU_LAUNCH_CYCLES + 11ull * 1000, a[0].launch);
}

TEST(sixteen_tasklets_fill_the_pipeline)
{
	struct model_reading r[2];

	model_run(_metadata, DPU_BIN("model_time_16"), 1000, r);
	TH_LOG("16 tasklets: %llu cycles, %llu instructions; DMAs %llu cycles",
	       (unsigned long long)r[0].cycles, (unsigned long long)r[0].instrs,
	       (unsigned long long)r[0].dma);
	/* the DPU issues one instruction a cycle at most, and 16 keep it busy */
	EXPECT_LE(r[0].instrs, r[0].cycles);
	EXPECT_GE(r[0].instrs * 110 / 100, r[0].cycles);
	EXPECT_LE(16ull * 1000 * 5, r[0].instrs);
	/* 128 DMAs of 256 bytes: the MRAM engine serves one at a time */
	EXPECT_LE(128ull * 256 / 8 * DPU_DMA_CYCLES_PER_8B, r[0].dma);
}

/*
 * 16 tasklets add to one word under one mutex, then each to its own
 * (tests/user/dpu/model_lock.c).  The holds follow one another: each has
 * at least the load, add, store and release (4 instructions), issued 11
 * cycles apart at best, so the lock phase takes at least 16 x iters x 4 x
 * 11 cycles, where the same adds with no lock keep the pipeline full.
 */
TEST(mutex_holds_follow_one_another_in_modeled_time)
{
	struct dpu_set_t set, dpu;
	uint64_t lock[2], nolock[2];
	const uint32_t iters = 200;
	uint32_t i;

	ASSERT_EQ(DPU_OK, dpu_alloc(1, NULL, &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("model_lock"), NULL));
	ASSERT_EQ(DPU_OK, put_u32(set, "iters", iters));
	for (int k = 0; k < 2; k++) {
		ASSERT_EQ(DPU_OK, put_u32(set, "shared", 0));
		ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
		DPU_FOREACH(set, dpu, i) {
			lock[k] = get_u64(dpu, "lock_cycles");
			nolock[k] = get_u64(dpu, "free_cycles");
			/* the lock held: no add lost */
			EXPECT_EQ(16u * (iters * (iters - 1) / 2), get_u32(dpu, "shared"));
		}
	}
	TH_LOG("%u adds each: under the mutex %llu cycles, without %llu", iters,
	       (unsigned long long)lock[0], (unsigned long long)nolock[0]);
	EXPECT_EQ(lock[0], lock[1]);
	EXPECT_EQ(nolock[0], nolock[1]);
	EXPECT_LE(16ull * iters * 4 * DPU_ISSUE_INTERVAL, lock[0]);
	EXPECT_GT(lock[0], 4 * nolock[0]);
	dpu_free(set);
}

TEST(modeled_time_is_the_same_on_every_run)
{
	struct model_reading first[2], again[2];

	model_run(_metadata, DPU_BIN("model_time_16"), 1500, first);
	for (int k = 0; k < 3; k++) {
		model_run(_metadata, DPU_BIN("model_time_16"), 1500, again);
		for (int d = 0; d < 2; d++) {
			EXPECT_EQ(first[0].cycles, again[d].cycles);
			EXPECT_EQ(first[0].instrs, again[d].instrs);
			EXPECT_EQ(first[0].dma, again[d].dma);
			EXPECT_EQ(first[0].launch, again[d].launch);
		}
	}
	TH_LOG("16 tasklets, 1500 iterations: %llu cycles, %llu instructions, DMAs %llu, launch %llu",
	       (unsigned long long)first[0].cycles, (unsigned long long)first[0].instrs,
	       (unsigned long long)first[0].dma, (unsigned long long)first[0].launch);
	/*
	 * For tests/check, which compares the figures of its two kernels'
	 * runs: the same program and input, the same modeled time.
	 */
	if (getenv("DPUSIM_SCRATCH")) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/modeled-time.txt", getenv("DPUSIM_SCRATCH"));
		f = fopen(path, "w");
		if (f) {
			fprintf(f, "model_time_16 1500: cycles %llu instructions %llu dma %llu launch %llu\n",
				(unsigned long long)first[0].cycles,
				(unsigned long long)first[0].instrs,
				(unsigned long long)first[0].dma,
				(unsigned long long)first[0].launch);
			fclose(f);
		}
	}
	EXPECT_LT(first[0].cycles + first[0].dma, first[0].launch);
}

TEST(without_the_model_the_counter_reads_host_time)
{
	struct model_reading r[2];

	/* dpusim-cc -fno-dpu-model: host time, one instruction a cycle */
	model_run(_metadata, DPU_BIN("model_time_plain"), 1000, r);
	EXPECT_LT(0ull, r[0].cycles);
	EXPECT_EQ(r[0].cycles, r[0].instrs);
	EXPECT_EQ(0ull, r[0].launch);
}

/* dpusimDpuModel=v1B: a 400 MHz DPU of at most 16 tasklets */
TEST(dpu_model_v1b)
{
	struct dpu_set_t set, dpu;
	struct model_reading a[2], b[2] = { { 0 } };

	ASSERT_EQ(DPU_OK, dpu_alloc(2, "dpusimDpuModel=v1B", &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("clocks"), NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu)
		EXPECT_EQ(400000000u, get_u32(dpu, "hz"));
	/* 24 tasklets: refused, the loaded program stays */
	EXPECT_EQ(DPU_ERR_ELF_INVALID_FILE, dpu_load(set, DPU_BIN("barrier_test_24t"), NULL));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu)
		EXPECT_EQ(400000000u, get_u32(dpu, "hz"));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("barrier_test_16t"), NULL));
	dpu_free(set);
	/* the cycles are the same: only their length differs */
	model_run(_metadata, DPU_BIN("model_time_16"), 1000, a);
	ASSERT_EQ(DPU_OK, dpu_alloc(2, "dpusimDpuModel=v1B", &set));
	ASSERT_EQ(DPU_OK, dpu_load(set, DPU_BIN("model_time_16"), NULL));
	ASSERT_EQ(DPU_OK, put_u32(set, "iters", 1000));
	ASSERT_EQ(DPU_OK, dpu_launch(set, DPU_SYNCHRONOUS));
	DPU_FOREACH(set, dpu)
		b[0].cycles = get_u64(dpu, "cycles");
	dpu_free(set);
	EXPECT_EQ(a[0].cycles, b[0].cycles);
}

TEST_HARNESS_MAIN
