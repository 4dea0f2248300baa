// SPDX-License-Identifier: MIT
/* model_time_16 - model_time with 16 tasklets (Makefile: DPU_NR_model_time_16). */
#include "model_time.c"
