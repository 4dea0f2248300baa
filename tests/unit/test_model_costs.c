// SPDX-License-Identifier: MIT
/*
 * Unit tests of the model's cost table as dpusim-cc's plugin applies it
 * (tools/dpu-model-plugin.cc, lib/dpurt/model_table.h): functions of one
 * operation each (fixtures/model_ops.c, compiled with the plugin) add the
 * operation's DPU instruction count, plus one for their return, to
 * __dpusim_icount.  Covers the DPU's native 32- and 64-bit arithmetic, the
 * emulated multiply, divide and floating point, and the ILP32 rule (long,
 * size_t and pointers are 32-bit on the DPU).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "unit.h"
#include "dpurt/model_table.h"

unsigned long long __dpusim_icount;

/* the runtime's barrier, as op_split() calls it: the count at the call */
struct barrier;
static unsigned long long at_barrier;
void barrier_wait(struct barrier *b);
void barrier_wait(struct barrier *b)
{
	(void)b;
	at_barrier = __dpusim_icount;
}

#define DECL(name, type) type name(type a, type b);
DECL(op_add32, uint32_t)
DECL(op_xor32, uint32_t)
DECL(op_mul32, uint32_t)
DECL(op_div32, uint32_t)
DECL(op_mod32, int32_t)
DECL(op_mul8, uint8_t)
DECL(op_add64, int64_t)
DECL(op_uadd64, uint64_t)
DECL(op_mul64, int64_t)
DECL(op_div64, uint64_t)
DECL(op_shl64, uint64_t)
DECL(op_long, long)
DECL(op_size, size_t)
DECL(op_fadd, float)
DECL(op_fmul, float)
DECL(op_fdiv, float)
DECL(op_dadd, double)
DECL(op_dmul, double)
DECL(op_ddiv, double)
DECL(op_mulc8, uint32_t)
DECL(op_mulc10, uint32_t)
DECL(op_divc4, uint32_t)
uint32_t op_load(const uint32_t *p);
uint32_t op_ptr(const uint32_t *p, size_t i);
uint32_t op_loop(const uint32_t *p, uint32_t n);
void op_loop64(int64_t *p, int64_t s, uint32_t n);
void op_split(uint32_t *p);
uint32_t op_plain64(const uint32_t *p);
uint32_t op_unroll64(const uint32_t *p);
uint32_t op_unroll_n(const uint32_t *p);

static unsigned long long mark;

static void start(void)
{
	mark = __dpusim_icount;
}

static unsigned long long counted(void)
{
	return __dpusim_icount - mark;
}

#define RET DPU_COST_BRANCH
#define CHECK_OP(name, fn, type, want)                                              \
	do {                                                                         \
		volatile type x = (type)7, y = (type)3;                              \
		unsigned long long got;                                              \
		start();                                                             \
		(void)fn(x, y);                                                      \
		got = counted();                                                     \
		UNIT_CHECK(name, got == (unsigned long long)(want), "counted %llu, want %llu", \
			   got, (unsigned long long)(want));                         \
	} while (0)

int main(void)
{
	static const uint32_t arr[64];
	unsigned long long c10, c20, c40;

	CHECK_OP("32-bit add: one instruction", op_add32, uint32_t, DPU_COST_OP32 + RET);
	CHECK_OP("32-bit xor: one instruction", op_xor32, uint32_t, DPU_COST_OP32 + RET);
	/* 7 * 3: two steps, the smaller operand's bits */
	CHECK_OP("32-bit multiply: a step per bit of the smaller operand", op_mul32, uint32_t,
		 DPU_COST_MUL32_BASE + 2 + RET);
	{
		unsigned long long got[3];
		volatile uint32_t big = 0xffffffffu, mid = 1000, huge = 70000;

		start();
		(void)op_mul32(huge, mid);
		got[0] = counted();
		start();
		(void)op_mul32(big, big);
		got[1] = counted();
		start();
		(void)op_mul32(0, big);
		got[2] = counted();
		UNIT_CHECK("32-bit multiply: 10 steps for 1000, 32 at most, 1 for 0",
			   got[0] == DPU_COST_MUL32_BASE + 10 + RET &&
				   got[1] == DPU_COST_MUL32_BASE + DPU_COST_MUL32 + RET &&
				   got[2] == DPU_COST_MUL32_BASE + 1 + RET,
			   "counted %llu %llu %llu", got[0], got[1], got[2]);
	}
	CHECK_OP("32-bit divide: emulated", op_div32, uint32_t, DPU_COST_DIV32 + RET);
	CHECK_OP("32-bit signed remainder: emulated", op_mod32, int32_t, DPU_COST_DIV32 + RET);
	CHECK_OP("8-bit multiply: the native 8x8 instruction", op_mul8, uint8_t,
		 DPU_COST_MUL8 + RET);
	CHECK_OP("int64_t add: a pair", op_add64, int64_t, DPU_COST_OP64 + RET);
	CHECK_OP("uint64_t add: a pair", op_uadd64, uint64_t, DPU_COST_OP64 + RET);
	CHECK_OP("64-bit multiply", op_mul64, int64_t, DPU_COST_MUL64 + RET);
	CHECK_OP("64-bit divide", op_div64, uint64_t, DPU_COST_DIV64 + RET);
	CHECK_OP("64-bit shift by a variable: a sequence (the amount's and is 32-bit)", op_shl64,
		 uint64_t, DPU_COST_OP32 + DPU_COST_SHIFT64 + RET);
	CHECK_OP("long is 32-bit on the DPU", op_long, long, DPU_COST_OP32 + RET);
	CHECK_OP("size_t is 32-bit on the DPU", op_size, size_t, DPU_COST_OP32 + RET);
	CHECK_OP("float add: emulated", op_fadd, float, DPU_COST_FADD32 + RET);
	CHECK_OP("float multiply: emulated", op_fmul, float, DPU_COST_FMUL32 + RET);
	CHECK_OP("float divide: emulated", op_fdiv, float, DPU_COST_FDIV32 + RET);
	CHECK_OP("double add: emulated", op_dadd, double, DPU_COST_FADD64 + RET);
	CHECK_OP("double multiply: emulated", op_dmul, double, DPU_COST_FMUL64 + RET);
	CHECK_OP("double divide: emulated", op_ddiv, double, DPU_COST_FDIV64 + RET);
	CHECK_OP("multiply by 8: a shift", op_mulc8, uint32_t, DPU_COST_OP32 + RET);
	CHECK_OP("multiply by 10: shifts and adds", op_mulc10, uint32_t, 3 * DPU_COST_OP32 + RET);
	CHECK_OP("unsigned divide by 4: a shift", op_divc4, uint32_t, DPU_COST_OP32 + RET);

	start();
	(void)op_load(arr);
	UNIT_CHECK("a WRAM load: one instruction", counted() == DPU_COST_OP32 + RET, "counted %llu",
		   counted());
	start();
	(void)op_ptr(arr, 5);
	UNIT_CHECK("pointer arithmetic is 32-bit: scale and add", counted() == 2 * DPU_COST_OP32 + RET,
		   "counted %llu", counted());

	start();
	(void)op_loop(arr, 10);
	c10 = counted();
	start();
	(void)op_loop(arr, 20);
	c20 = counted();
	start();
	(void)op_loop(arr, 40);
	c40 = counted();
	printf("# loop: 10 -> %llu, 20 -> %llu, 40 -> %llu\n", c10, c20, c40);
	/* load, add, the index's and the pointer's steps, compare-and-branch:
	 * 4 to 6 as the optimizer keeps one induction variable or two */
	UNIT_CHECK("a loop's count grows by its body's count per iteration",
		   c40 - c20 == 2 * (c20 - c10) && c20 - c10 >= 10 * 4 && c20 - c10 <= 10 * 6,
		   "10: %llu 20: %llu 40: %llu", c10, c20, c40);
	{
		static int64_t x[64];

		start();
		op_loop64(x, 3, 10);
		c10 = counted();
		start();
		op_loop64(x, 3, 20);
		c20 = counted();
	}
	/* load, 64-bit add (a pair), store, the steps, compare-and-branch */
	UNIT_CHECK("an int64_t loop's add counts as a pair",
		   c20 - c10 >= 10 * (4 + DPU_COST_OP64) && c20 - c10 <= 10 * (6 + DPU_COST_OP64),
		   "10: %llu 20: %llu", c10, c20);
	{
		static uint32_t z[8];
		unsigned long long before;

		start();
		op_split(z);
		before = at_barrier - mark;
		/* a load, an add and a store each: 2 before the call, 3 after */
		UNIT_CHECK("a barrier's block: what follows the call is counted after it",
			   before == 2 * 3 * DPU_COST_OP32 &&
				   counted() == before + 3 * 3 * DPU_COST_OP32 + DPU_COST_CALL + RET,
			   "at the call %llu, in all %llu", before, counted());
	}
	{
		static uint32_t y[64];
		unsigned long long plain, full, byn;

		start();
		(void)op_plain64(y);
		plain = counted();
		start();
		(void)op_unroll64(y);
		full = counted();
		start();
		(void)op_unroll_n(y);
		byn = counted();
		printf("# 64 iterations: plain %llu, #pragma unroll %llu, #pragma unroll(64) %llu\n",
		       plain, full, byn);
		/* unrolled, a load and an add each; the loop's steps and branch go */
		UNIT_CHECK("#pragma unroll: the loop is counted as the DPU compiler unrolls it",
			   full <= 64 * 2 + 4 && plain >= 64 * 4,
			   "plain %llu, unrolled %llu", plain, full);
		UNIT_CHECK("#pragma unroll(64): a factor of the whole trip count, the same",
			   byn == full, "by 64 %llu, full %llu", byn, full);
	}
	return unit_done();
}
