// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoints of kernel/trace.h, instantiated once.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
