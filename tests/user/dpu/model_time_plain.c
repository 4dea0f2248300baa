// SPDX-License-Identifier: MIT
/* model_time_plain - model_time built with dpusim-cc -fno-dpu-model. */
#include "model_time.c"
