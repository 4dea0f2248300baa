/* SPDX-License-Identifier: MIT */
/*
 * handshake.h - handshakes between two tasklets (UPMEM SDK semantics):
 * handshake_notify() waits until some tasklet waits for the caller, then
 * releases it; handshake_wait_for(n) waits for tasklet n's notify and
 * returns 0, or returns EALREADY at once (errno set) when another tasklet
 * already waits for n.
 */
#ifndef DPUSYSCORE_HANDSHAKE_H
#define DPUSYSCORE_HANDSHAKE_H

#include <sysdef.h>

#ifdef __cplusplus
extern "C" {
#endif

void handshake_notify(void);
int handshake_wait_for(sysname_t notifier);

#ifdef __cplusplus
}
#endif

#endif /* DPUSYSCORE_HANDSHAKE_H */
