// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoints of kernel/trace.h, instantiated once.
 */
#ifndef NOTRACE	/* DPUSIM_NOTRACE=1: no tracepoints at all */
#define CREATE_TRACE_POINTS
#include "trace.h"
#endif
