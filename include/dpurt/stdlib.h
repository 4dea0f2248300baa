/* SPDX-License-Identifier: MIT */
/*
 * stdlib.h - the C library's <stdlib.h> as DPU code sees it.
 *
 * DPU programs are compiled against the host's C library, but the DPU
 * runtime's stdlib.h (UPMEM SDK, dpu-rt) declares no rand or srand, and
 * programs written for it define their own, of their own types (PIM-TC:
 * `uint32_t rand()`, `void srand(uint32_t)`), which the host's
 * declarations would contradict.  So the host's header is included with
 * those two names hidden: DPU code may define rand and srand as it likes,
 * and one that only calls them is told at compile time that they are not
 * declared, as it would be by the SDK's compiler.
 */
#ifndef DPUSIM_DPURT_STDLIB_H
#define DPUSIM_DPURT_STDLIB_H

#pragma push_macro("rand")
#pragma push_macro("srand")
#undef rand
#undef srand
#define rand __dpusim_host_rand
#define srand __dpusim_host_srand
#include_next <stdlib.h>
#undef rand
#undef srand
#pragma pop_macro("rand")
#pragma pop_macro("srand")

#endif /* DPUSIM_DPURT_STDLIB_H */
