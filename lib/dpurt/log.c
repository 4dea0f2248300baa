// SPDX-License-Identifier: MIT
/*
 * log.c - printf/puts/putchar of DPU code go to the DPU's log,
 * __stdout_buffer in MRAM: { uint32_t length; uint32_t lost; text }.
 * stdout is pointed at a stream whose writes append to the log of the DPU
 * being run; text that does not fit is counted in `lost` and dropped.
 * The stream is line-buffered and flushed when the run ends, so a fault
 * loses at most the unfinished line.
 */
#include "dpurt.h"

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

static FILE *log_file;
static FILE *saved_stdout;

static ssize_t log_write(void *cookie, const char *buf, size_t n)
{
	struct dpurt_log *log = dpurt_ctx.log;
	uint32_t cap = DPURT_LOG_SIZE - (uint32_t)sizeof(struct dpurt_log);
	uint32_t len, room, take;

	(void)cookie;
	if (!log)
		return (ssize_t)n;
	len = log->length;
	room = len < cap ? cap - len : 0;
	take = n < room ? (uint32_t)n : room;
	memcpy(log->text + len, buf, take);
	log->length = len + take;
	if (n - take > UINT32_MAX - log->lost)
		log->lost = UINT32_MAX;
	else
		log->lost += (uint32_t)(n - take);
	return (ssize_t)n;
}

void dpurt_log_begin(void)
{
	if (dpurt_ctx.log) {
		dpurt_ctx.log->length = 0;
		dpurt_ctx.log->lost = 0;
	}
	if (!log_file) {
		cookie_io_functions_t io = { .write = log_write };

		log_file = fopencookie(NULL, "w", io);
		if (!log_file)
			return;
		setvbuf(log_file, NULL, _IOLBF, 4096);
	}
	if (stdout != log_file) {
		saved_stdout = stdout;
		stdout = log_file;
	}
}

void dpurt_log_end(void)
{
	if (!log_file)
		return;
	fflush(log_file);
	if (dpurt_worker_fd < 0 && saved_stdout) {
		stdout = saved_stdout;
		saved_stdout = NULL;
	}
}
