// SPDX-License-Identifier: MIT
/*
 * model_arith - arithmetic throughput as PrIM's microbenchmark measures it,
 * written for dpusim's modeled time: each tasklet applies one operation to
 * the ELEMS elements of its WRAM buffer (x[i] = x[i] OP s, s not known to
 * the compiler), between two barriers; tasklet 0 then reads the DPU's
 * modeled cycles and instructions (perfcounter).  Built once per tasklet
 * count (Makefile: model_arith_<N>t).
 *
 * Host variables: op (in: type * 4 + operation, type 0 int32, 1 int64,
 * 2 float, 3 double; operation 0 add, 1 sub, 2 mul, 3 div), scalar (in),
 * cycles and instrs (out).
 */
#include <attributes.h>
#include <barrier.h>
#include <defs.h>
#include <perfcounter.h>
#include <stdint.h>

#define ELEMS 256

BARRIER_INIT(arith_barrier, NR_TASKLETS);

__host uint32_t op;
__host uint32_t scalar = 3;
__host uint32_t elems = ELEMS;
__host uint64_t cycles;
__host uint64_t instrs;

static uint64_t buf[NR_TASKLETS][ELEMS];

#define LOOP(T, OP)                                                    \
	do {                                                           \
		T *x = (T *)buf[t];                                    \
		T s = (T)scalar;                                       \
		for (unsigned int i = 0; i < ELEMS; i++)               \
			x[i] = x[i] OP s;                              \
	} while (0)

#define TYPE(T)                                                        \
	do {                                                           \
		switch (op % 4) {                                      \
		case 0: LOOP(T, +); break;                             \
		case 1: LOOP(T, -); break;                             \
		case 2: LOOP(T, *); break;                             \
		default: LOOP(T, /); break;                            \
		}                                                      \
	} while (0)

int main(void)
{
	unsigned int t = me();

	for (unsigned int i = 0; i < ELEMS; i++)
		buf[t][i] = i + 1000;
	barrier_wait(&arith_barrier);
	if (t == 0)
		perfcounter_config(COUNT_CYCLES, true);
	barrier_wait(&arith_barrier);
	switch (op / 4) {
	case 0: TYPE(int32_t); break;
	case 1: TYPE(int64_t); break;
	case 2: TYPE(float); break;
	default: TYPE(double); break;
	}
	barrier_wait(&arith_barrier);
	if (t == 0) {
		perfcounter_pair_t p = perfcounter_get_both(false);

		cycles = p.cycles;
		instrs = p.instr;
	}
	return 0;
}
