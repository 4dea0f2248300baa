/* SPDX-License-Identifier: MIT */
/*
 * libdpusim internals shared by the library's sources (sets, transfers,
 * programs). Not installed. Everything here has hidden visibility (the
 * library is built with -fvisibility=hidden); only DPUSIM_API symbols of
 * the public headers are exported from libdpusim.so. The static library
 * still exposes these to the unit tests and the dpusim tool.
 */
#ifndef DPUSIM_LIB_INTERNAL_H
#define DPUSIM_LIB_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dpu.h>

#include "profile.h"

struct dpusim_rank_info;
struct dpusim_set_props;
struct dpusim_cb_job;
struct dpu_rank_t;

/*
 * Teardown hooks.  set.c frees a set and closes its ranks knowing none of
 * the subsystems that attach state to them: a subsystem registers its hook
 * (dpusim_set_hook_add(), dpusim_rank_hook_add()) when it first attaches
 * state to a set or a rank, and set.c calls what is registered.
 *
 * dpu_free calls the set's hooks in enum order, before any rank is
 * closed; then, for each rank, its DPUSIM_RANK_HOOK_CLOSING hook, the close
 * of the rank's file and its DPUSIM_RANK_HOOK_CLOSED hook.  A hook runs at
 * most once; a slot holds one hook (a later registration replaces it).
 */
enum dpusim_set_hook {
	DPUSIM_SET_HOOK_CALLBACKS,	/* callback.c: join the async callbacks */
	DPUSIM_SET_HOOK_ASYNC,		/* async.c: sync the queued transfers */
	DPUSIM_SET_HOOK_PROGRAM,	/* load.c: free the loaded program */
	DPUSIM_SET_HOOK_NR
};

enum dpusim_rank_hook {
	DPUSIM_RANK_HOOK_CLOSING,	/* ebsp.c: unmap the rank's streams */
	DPUSIM_RANK_HOOK_CLOSED,	/* launch.c: reap the rank's workers */
	DPUSIM_RANK_HOOK_NR
};

typedef void dpusim_set_hook_fn(struct dpusim_set_props *props);
typedef void dpusim_rank_hook_fn(struct dpu_rank_t *rank);

/*
 * What a set's profile and later API calls decided; one per allocated set,
 * owned by it (created by dpu_alloc*, freed by dpu_free), and reachable from
 * every rank of the set (rank->props), so any subset — a rank from
 * DPU_RANK_FOREACH, a DPU from DPU_FOREACH — finds it.
 */
struct dpusim_set_props {
	/* the parsed profile string */
	struct dpusim_profile profile;
	/* sgXferEnable */
	bool sg_enabled;
	/* sgXferMaxBlocksPerDpu, resolved: default = DPUs in the set */
	uint32_t sg_max_blocks_per_dpu;

	/* the allocated set: its rank array and sizes */
	uint32_t nr_ranks;
	struct dpu_rank_t **ranks;
	uint32_t nr_dpus;		/* enabled DPUs in the whole set */

	/* serialises changes below (program, transfer state) */
	pthread_mutex_t lock;

	/* the loaded program (lib/load.c), freed by its teardown hook */
	struct dpu_program_t *program;

	/* an asynchronous dpu_launch not yet collected by dpu_sync */
	bool launch_pending;
	/* queued DPU_CALLBACK_ASYNC jobs (lib/callback.c), in order */
	struct dpusim_cb_job *callbacks;

	/* teardown hooks, see dpusim_set_hook_add(); NULL: none */
	dpusim_set_hook_fn *hooks[DPUSIM_SET_HOOK_NR];
};

/* ------------------------------------------------------------ callback.c */

/* Wait for the queued asynchronous callbacks; the first error they gave. */
dpu_error_t dpusim_callbacks_join(struct dpusim_set_props *props);

/* The whole allocated set of props, as dpu_alloc returned it. */
static inline struct dpu_set_t dpusim_props_set(struct dpusim_set_props *props)
{
	struct dpu_set_t set = {
		.kind = DPU_SET_RANKS,
		.list = { .nr_ranks = props->nr_ranks, .ranks = props->ranks },
	};

	return set;
}

/* ------------------------------------------------------------ launch.c */

/*
 * Kill and reap the worker processes of a rank (its fd may be closed);
 * the rank's DPUSIM_RANK_HOOK_CLOSED hook once it has any.
 */
void dpusim_workers_stop(struct dpu_rank_t *rank);

/*
 * dpu_sync's part for launches: wait until no DPU of the set runs; if an
 * asynchronous launch was pending, DPU_ERR_DPU_FAULT when one of the set's
 * DPUs faulted (logged with fn).
 */
dpu_error_t dpusim_launch_sync(struct dpusim_set_props *props, const char *fn);

/* DPU_ERR_DPU_ALREADY_RUNNING (logged) if a DPU of the set runs. */
dpu_error_t dpusim_set_running(struct dpusim_set_props *props, const char *fn);

/* Wait until no DPU of the set runs (faults are not looked at). */
dpu_error_t dpusim_launch_wait(struct dpusim_set_props *props, const char *fn);

/* One DPU. */
struct dpu_t {
	struct dpu_rank_t *rank;
	uint32_t index_in_rank;
	/* index in the allocated set, DPU_FOREACH order (valid if enabled) */
	uint32_t index_in_set;
	/* false for the DPUs past nr_dpus in the last rank of dpu_alloc */
	bool enabled;
	/* dpu_prepare_xfer's buffer, NULL if none */
	void *prepared_buffer;
};

/* One open rank: /dev/dpusim/rank<index>. */
struct dpu_rank_t {
	int fd;			/* owner fd, -1 in unit tests */
	uint32_t index;		/* N of rankN */
	uint32_t nr_dpus;	/* DPUs of the rank (enabled or not) */
	uint32_t nr_enabled;	/* dpus[0 .. nr_enabled-1] are enabled */
	uint64_t mram_size;	/* bytes of MRAM per DPU */
	uint32_t wram_size;	/* bytes of WRAM per DPU */
	struct dpu_t *dpus;	/* nr_dpus entries */
	struct dpusim_set_props *props;	/* the set it belongs to */
	/* the rank file's status page (DPUSIM_MMAP_STATUS), or NULL */
	const struct dpusim_rank_status *status;
	size_t status_len;
	/* worker processes running the loaded program (lib/launch.c) */
	int *workers;		/* pids */
	uint32_t nr_workers;
	/* teardown hooks, see dpusim_rank_hook_add(); NULL: none */
	dpusim_rank_hook_fn *hooks[DPUSIM_RANK_HOOK_NR];
};

/*
 * Register @fn as @props' teardown hook @which.  Call with props->lock
 * held: a set's subsystems may attach state from several threads.
 */
static inline void dpusim_set_hook_add(struct dpusim_set_props *props,
				       enum dpusim_set_hook which,
				       dpusim_set_hook_fn *fn)
{
	props->hooks[which] = fn;
}

/*
 * Register @fn as @rank's teardown hook @which.  Call with the lock of the
 * rank's set (rank->props->lock) held.
 */
static inline void dpusim_rank_hook_add(struct dpu_rank_t *rank,
					enum dpusim_rank_hook which,
					dpusim_rank_hook_fn *fn)
{
	rank->hooks[which] = fn;
}

/* ------------------------------------------------------------ load.c */

/* Free the set's loaded program: its DPUSIM_SET_HOOK_PROGRAM hook. */
void dpusim_load_teardown(struct dpusim_set_props *props);

/* ------------------------------------------------------------ async.c */

/*
 * True if every asynchronous transfer queued on the rank so far has
 * finished (its status page says so: no system call); false if one has
 * not, or the rank has no status page.
 */
bool dpusim_rank_async_idle(const struct dpu_rank_t *rank);

/* ------------------------------------------------------------ log.c */

/* Print "dpusim: <message>\n" on stderr as one write. */
void dpusim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Thread-safe strerror into buf; returns the message. */
const char *dpusim_strerror(int errnum, char *buf, size_t len);

/* ------------------------------------------------------------ util.c */

/*
 * Strict unsigned decimal: digits only (no sign, space, prefix or trailing
 * garbage), value <= max. Returns 0, or -EINVAL (not a number) / -ERANGE.
 * len is the number of chars of s to read (SIZE_MAX: up to NUL).
 */
int dpusim_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);

/* ------------------------------------------------------------ set.c */

/*
 * Open one rank device: open(O_RDWR|O_CLOEXEC), DPUSIM_IOCTL_RANK_INFO,
 * ABI check. On success *rank is a new rank (not yet in a set). Returns
 * DPU_ERR_ALLOCATION with *busy = true for EBUSY (nothing printed),
 * DPU_ERR_ALLOCATION for other open failures (message in errbuf),
 * DPU_ERR_DRIVER for ioctl / ABI problems (message in errbuf).
 */
dpu_error_t dpusim_rank_open(const char *devnode, uint32_t expect_index,
			     struct dpu_rank_t **rank, bool *busy,
			     char *errbuf, size_t errlen);

/* A rank from a RANK_INFO answer and an fd (fd -1: no device, for tests). */
dpu_error_t dpusim_rank_new(int fd, const struct dpusim_rank_info *info,
			    struct dpu_rank_t **rank);

/* Close and free a rank that is not (or no longer) part of a set. */
void dpusim_rank_destroy(struct dpu_rank_t *rank);

/*
 * Build a set from ranks (takes ownership of the array and the ranks,
 * also on failure): enables the first nr_dpus DPUs (UINT32_MAX: all),
 * resolves the profile, fills *set.
 */
dpu_error_t dpusim_set_assemble(struct dpu_rank_t **ranks, uint32_t nr_ranks,
				uint32_t nr_dpus,
				const struct dpusim_profile *profile,
				struct dpu_set_t *set);

/*
 * The props of any set or subset (NULL for an invalid or empty set).
 * With a message to stderr naming fn when invalid and fn != NULL.
 */
struct dpusim_set_props *dpusim_set_props(struct dpu_set_t set,
					  const char *fn);

#endif /* DPUSIM_LIB_INTERNAL_H */
