// SPDX-License-Identifier: MIT
/*
 * handshake_test - a relay: tasklet 0 starts a token, tasklet k waits for
 * tasklet k-1's handshake_notify, adds k, and notifies tasklet k+1.
 * Results: token (0 + 1 + ... + NR_TASKLETS-1), order_errors (0: each
 * tasklet saw the token its predecessor left), status (0: no
 * handshake_wait_for returned an error).
 */
#include <defs.h>
#include <handshake.h>
#include <stdint.h>

static volatile uint32_t relay;
static volatile uint32_t last;

__host uint32_t token;
__host uint32_t order_errors;
__host uint32_t status;

int main(void)
{
	unsigned int id = me();

	if (id == 0) {
		relay = 0;
		last = 0;
		order_errors = 0;
		status = 0;
	} else {
		int ret = handshake_wait_for(id - 1);

		if (ret)
			status = (uint32_t)ret;
		if (last != id - 1)
			order_errors++;
		relay += id;
		last = id;
	}
	if (id + 1 < NR_TASKLETS)
		handshake_notify();
	else
		token = relay;
	return 0;
}
