/* SPDX-License-Identifier: MIT */
/* sysdef.h - DPU system types (UPMEM SDK names). */
#ifndef DPUSYSCORE_SYSDEF_H
#define DPUSYSCORE_SYSDEF_H

typedef unsigned int thread_id_t;
typedef unsigned int sysname_t;

#endif /* DPUSYSCORE_SYSDEF_H */
