// SPDX-License-Identifier: MIT
/* profiling_on - profiling_test built with DPU_PROFILING (counting). */
#define DPU_PROFILING 1
#include "profiling_test.c"
