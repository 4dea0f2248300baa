/* SPDX-License-Identifier: MIT */
/* tasklet.h - tasklet basics (UPMEM SDK), see defs.h. */
#ifndef DPUSYSCORE_TASKLET_H
#define DPUSYSCORE_TASKLET_H

#include <defs.h>

#endif /* DPUSYSCORE_TASKLET_H */
