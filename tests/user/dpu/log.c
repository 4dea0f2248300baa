// SPDX-License-Identifier: MIT
/*
 * log - printf into the DPU's log (dpu_log_read).
 * mode 0: each tasklet prints "tasklet T of N: dpu_value V big B" with
 *         int64_t through %lld; tasklet 0 also puts() "puts line" and
 *         putchar()s "ok\n" (after a barrier, so it comes last).
 * mode 1: tasklet 0 prints OVERFLOW_LINES lines of 100 bytes (70000 bytes
 *         in all): the log keeps 65528 bytes and counts the rest as lost.
 */
#include <barrier.h>
#include <defs.h>
#include <stdint.h>
#include <stdio.h>

#define OVERFLOW_LINES 700

BARRIER_INIT(sync, NR_TASKLETS);

__host uint32_t mode;
__host uint32_t dpu_value;

int main(void)
{
	int64_t big = (int64_t)1 << 40;

	if (mode == 1) {
		if (me() == 0)
			for (int i = 0; i < OVERFLOW_LINES; i++)
				printf("line %04d %089d\n", i, 0);
		return 0;
	}
	printf("tasklet %u of %d: dpu_value %u big %lld\n", me(), NR_TASKLETS, dpu_value,
	       big + me());
	barrier_wait(&sync);
	if (me() == 0) {
		puts("puts line");
		putchar('o');
		putchar('k');
		putchar('\n');
	}
	return 0;
}
