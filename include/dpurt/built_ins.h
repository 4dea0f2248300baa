/* SPDX-License-Identifier: MIT */
/*
 * built_ins.h - the DPU compiler's builtins that have a meaning on the host.
 */
#ifndef DPUSYSCORE_BUILT_INS_H
#define DPUSYSCORE_BUILT_INS_H

#include <defs.h>
#include <string.h>

#define __builtin_dpu_tid() me()
#include <mram.h>
#define __builtin_dpu_ldma(to, from, size) mram_read((from), (to), (size))
#define __builtin_dpu_sdma(from, to, size) mram_write((from), (to), (size))

#endif /* DPUSYSCORE_BUILT_INS_H */
