/* SPDX-License-Identifier: MIT */
/* dpuruntime.h - what SDK code includes for the runtime's basics. */
#ifndef DPUSYSCORE_DPURUNTIME_H
#define DPUSYSCORE_DPURUNTIME_H

#include <defs.h>
#include <mram.h>
#include <attributes.h>

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

#endif /* DPUSYSCORE_DPURUNTIME_H */
