// SPDX-License-Identifier: MIT
/*
 * libdpusim: DPU sets — allocation of whole ranks, freeing, sizes and the
 * iterators behind DPU_FOREACH / DPU_RANK_FOREACH.
 *
 * Ownership: dpu_alloc* returns a set whose rank array, ranks, DPUs and
 * props (struct dpusim_set_props) all belong to the set until dpu_free.
 * Subsets handed out by the iterators point into that memory and become
 * invalid with it. No global mutable state: the kernel's EBUSY on open
 * arbitrates between threads and processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uapi/dpusim.h>

#include "discovery.h"
#include "internal.h"

/* ------------------------------------------------------------ ranks */

dpu_error_t dpusim_rank_new(int fd, const struct dpusim_rank_info *info,
			    struct dpu_rank_t **out)
{
	struct dpu_rank_t *rank;
	uint32_t i;

	*out = NULL;
	if (info->nr_dpus == 0)
		return DPU_ERR_DRIVER;
	rank = calloc(1, sizeof(*rank));
	if (!rank)
		return DPU_ERR_SYSTEM;
	rank->dpus = calloc(info->nr_dpus, sizeof(*rank->dpus));
	if (!rank->dpus) {
		free(rank);
		return DPU_ERR_SYSTEM;
	}
	rank->fd = fd;
	rank->index = info->rank_index;
	rank->nr_dpus = info->nr_dpus;
	rank->nr_enabled = info->nr_dpus;
	rank->mram_size = info->mram_size;
	rank->wram_size = info->wram_size;
	for (i = 0; i < rank->nr_dpus; i++) {
		rank->dpus[i].rank = rank;
		rank->dpus[i].index_in_rank = i;
		rank->dpus[i].index_in_set = i;
		rank->dpus[i].enabled = true;
	}
	*out = rank;
	return DPU_OK;
}

void dpusim_rank_destroy(struct dpu_rank_t *rank)
{
	if (!rank)
		return;
	/* what holds the owner file (the streams' mappings) goes first */
	if (rank->hooks[DPUSIM_RANK_HOOK_CLOSING])
		rank->hooks[DPUSIM_RANK_HOOK_CLOSING](rank);
	if (rank->status)
		munmap((void *)rank->status, rank->status_len);
	if (rank->fd >= 0) {
		char eb[128];

		/* close releases ownership even when it reports an error */
		if (close(rank->fd) < 0 && errno != EINTR)
			dpusim_log("closing rank%u: %s", rank->index,
				   dpusim_strerror(errno, eb, sizeof(eb)));
	}
	/* closing the owner file made dpusim.ko kill the workers */
	if (rank->hooks[DPUSIM_RANK_HOOK_CLOSED])
		rank->hooks[DPUSIM_RANK_HOOK_CLOSED](rank);
	free(rank->dpus);
	free(rank);
}

/*
 * Map the rank file's status page, so that a wait for a queue that is done
 * needs no system call.  Without it (out of memory), every wait is a
 * DPUSIM_IOCTL_SYNC: nothing else changes.  A child of fork() inherits it
 * with the set, as it inherits the rank file itself.
 */
static void rank_map_status(struct dpu_rank_t *rank)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (page <= 0)
		return;
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, rank->fd, DPUSIM_MMAP_STATUS);
	if (p == MAP_FAILED)
		return;
	rank->status = p;
	rank->status_len = (size_t)page;
}

dpu_error_t dpusim_rank_open(const char *devnode, uint32_t expect_index,
			     struct dpu_rank_t **out, bool *busy,
			     char *errbuf, size_t errlen)
{
	struct dpusim_rank_info info;
	char eb[128];
	dpu_error_t ret;
	int fd, err;

	*out = NULL;
	*busy = false;
	do {
		fd = open(devnode, O_RDWR | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		err = errno;
		if (err == EBUSY) {
			*busy = true;
			snprintf(errbuf, errlen, "%s: owned by another open file",
				 devnode);
		} else {
			snprintf(errbuf, errlen, "cannot open %s: %s%s", devnode,
				 dpusim_strerror(err, eb, sizeof(eb)),
				 (err == EACCES || err == EPERM) ?
				 " (is the user in group dpusim? see tools/udev/60-dpusim.rules)" : "");
		}
		return DPU_ERR_ALLOCATION;
	}

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, DPUSIM_IOCTL_RANK_INFO, &info) < 0) {
		err = errno;
		snprintf(errbuf, errlen, "%s: DPUSIM_IOCTL_RANK_INFO failed: %s%s",
			 devnode, dpusim_strerror(err, eb, sizeof(eb)),
			 err == ENOTTY ? " (not a dpusim rank, or dpusim.ko does not match libdpusim)" : "");
		close(fd);
		return DPU_ERR_DRIVER;
	}
	if (info.abi_version != DPUSIM_ABI_VERSION) {
		snprintf(errbuf, errlen,
			 "%s: dpusim.ko speaks ABI version %u but libdpusim needs %u: install matching versions of the module and the library",
			 devnode, info.abi_version, DPUSIM_ABI_VERSION);
		close(fd);
		return DPU_ERR_DRIVER;
	}
	if (info.rank_index != expect_index) {
		snprintf(errbuf, errlen, "%s: driver reports rank index %u",
			 devnode, info.rank_index);
		close(fd);
		return DPU_ERR_DRIVER;
	}
	if (info.nr_dpus == 0) {
		snprintf(errbuf, errlen, "%s: driver reports a rank of 0 DPUs",
			 devnode);
		close(fd);
		return DPU_ERR_DRIVER;
	}
	ret = dpusim_rank_new(fd, &info, out);
	if (ret != DPU_OK) {
		snprintf(errbuf, errlen, "%s: out of memory", devnode);
		close(fd);
		return ret;
	}
	rank_map_status(*out);
	return DPU_OK;
}

/* ------------------------------------------------------------ sets */

static void props_destroy(struct dpusim_set_props *props)
{
	uint32_t i;

	if (!props)
		return;
	/*
	 * In enum order; the first one joins the callback threads, which may
	 * still register the others: each is read under the lock.
	 */
	for (i = 0; i < DPUSIM_SET_HOOK_NR; i++) {
		dpusim_set_hook_fn *fn;

		pthread_mutex_lock(&props->lock);
		fn = props->hooks[i];
		props->hooks[i] = NULL;
		pthread_mutex_unlock(&props->lock);
		if (fn)
			fn(props);
	}
	for (i = 0; i < props->nr_ranks; i++)
		dpusim_rank_destroy(props->ranks[i]);
	free(props->ranks);
	pthread_mutex_destroy(&props->lock);
	free(props);
}

dpu_error_t dpusim_set_assemble(struct dpu_rank_t **ranks, uint32_t nr_ranks,
				uint32_t nr_dpus,
				const struct dpusim_profile *profile,
				struct dpu_set_t *set)
{
	struct dpusim_set_props *props;
	uint64_t total = 0;
	uint32_t i, j, want, left, index = 0;

	for (i = 0; i < nr_ranks; i++)
		total += ranks[i]->nr_dpus;
	if (nr_ranks == 0 || total > UINT32_MAX - 1 ||
	    (nr_dpus != UINT32_MAX && nr_dpus > total)) {
		for (i = 0; i < nr_ranks; i++)
			dpusim_rank_destroy(ranks[i]);
		free(ranks);
		dpusim_log("internal error: cannot make a set of %u DPUs from %u ranks",
			   nr_dpus, nr_ranks);
		return DPU_ERR_INTERNAL;
	}
	want = nr_dpus == UINT32_MAX ? (uint32_t)total : nr_dpus;

	props = calloc(1, sizeof(*props));
	if (!props) {
		for (i = 0; i < nr_ranks; i++)
			dpusim_rank_destroy(ranks[i]);
		free(ranks);
		dpusim_log("out of memory");
		return DPU_ERR_SYSTEM;
	}
	if (pthread_mutex_init(&props->lock, NULL) != 0) {
		free(props);
		for (i = 0; i < nr_ranks; i++)
			dpusim_rank_destroy(ranks[i]);
		free(ranks);
		dpusim_log("pthread_mutex_init failed");
		return DPU_ERR_SYSTEM;
	}

	left = want;
	for (i = 0; i < nr_ranks; i++) {
		struct dpu_rank_t *rank = ranks[i];
		uint32_t en = left < rank->nr_dpus ? left : rank->nr_dpus;

		rank->props = props;
		rank->nr_enabled = en;
		for (j = 0; j < rank->nr_dpus; j++) {
			rank->dpus[j].enabled = j < en;
			rank->dpus[j].index_in_set = j < en ? index + j : UINT32_MAX;
			rank->dpus[j].prepared_buffer = NULL;
		}
		index += en;
		left -= en;
	}

	props->profile = *profile;
	props->sg_enabled = profile->sg_enabled;
	props->sg_max_blocks_per_dpu = profile->sg_max_blocks_set ?
		profile->sg_max_blocks_per_dpu : want;
	props->nr_ranks = nr_ranks;
	props->ranks = ranks;
	props->nr_dpus = want;

	set->kind = DPU_SET_RANKS;
	set->list.nr_ranks = nr_ranks;
	set->list.ranks = ranks;
	return DPU_OK;
}

enum alloc_unit { ALLOC_DPUS, ALLOC_RANKS };

/*
 * As the SDK: the profile in effect is $UPMEM_PROFILE_BASE, then the
 * program's string, then $UPMEM_PROFILE, the non-empty ones joined with
 * ',' (a later key overrides an earlier one).
 */
static dpu_error_t parse_merged_profile(const char *profile_str,
					struct dpusim_profile *profile,
					const char *fn)
{
	const char *parts[3] = { getenv("UPMEM_PROFILE_BASE"), profile_str,
				 getenv("UPMEM_PROFILE") };
	size_t len = 1, i;
	char err[512], *all;
	dpu_error_t ret;

	for (i = 0; i < 3; i++)
		if (parts[i])
			len += strlen(parts[i]) + 1;
	all = malloc(len);
	if (!all) {
		dpusim_log("%s: out of memory", fn);
		return DPU_ERR_SYSTEM;
	}
	all[0] = '\0';
	for (i = 0; i < 3; i++) {
		if (!parts[i] || !parts[i][0])
			continue;
		if (all[0])
			strcat(all, ",");
		strcat(all, parts[i]);
	}
	ret = dpusim_profile_parse(all, profile, err, sizeof(err));
	if (ret != DPU_OK)
		dpusim_log("profile: %s (profile in effect: \"%s\" from UPMEM_PROFILE_BASE, the program and UPMEM_PROFILE)",
			   err, all);
	free(all);
	return ret;
}

static dpu_error_t alloc_common(enum alloc_unit unit, uint32_t count,
				const char *profile_str,
				struct dpu_set_t *set, const char *fn)
{
	struct dpusim_rank_desc *descs = NULL;
	struct dpu_rank_t **ranks = NULL;
	struct dpusim_profile profile;
	char err[512], first_err[512] = "";
	uint32_t nr_descs = 0, n = 0, busy = 0, i;
	uint64_t got = 0;
	bool all = count == DPU_ALLOCATE_ALL;
	dpu_error_t ret;

	if (!set) {
		dpusim_log("%s: dpu_set is NULL", fn);
		return DPU_ERR_INVALID_DPU_SET;
	}
	if (count == 0) {
		dpusim_log("%s: cannot allocate 0 %s", fn,
			   unit == ALLOC_DPUS ? "DPUs" : "ranks");
		return DPU_ERR_ALLOCATION;
	}
	ret = parse_merged_profile(profile_str, &profile, fn);
	if (ret != DPU_OK)
		return ret;

	ret = dpusim_discover(&descs, &nr_descs, err, sizeof(err));
	if (ret != DPU_OK) {
		dpusim_log("%s: %s", fn, err);
		return ret;
	}
	if (nr_descs == 0) {
		dpusim_log("%s: " DPUSIM_NO_RANKS_MSG, fn);
		return DPU_ERR_ALLOCATION;
	}

	ranks = calloc(nr_descs, sizeof(*ranks));
	if (!ranks) {
		free(descs);
		dpusim_log("%s: out of memory", fn);
		return DPU_ERR_SYSTEM;
	}

	for (i = 0; i < nr_descs; i++) {
		bool is_busy;

		if (!all && unit == ALLOC_DPUS && got >= count)
			break;
		if (!all && unit == ALLOC_RANKS && n >= count)
			break;
		ret = dpusim_rank_open(descs[i].devnode, descs[i].index,
				       &ranks[n], &is_busy, err, sizeof(err));
		if (ret == DPU_OK) {
			got += ranks[n]->nr_dpus;
			n++;
			continue;
		}
		if (is_busy) {
			busy++;
			continue;
		}
		if (ret == DPU_ERR_ALLOCATION) {
			/* e.g. EACCES: try the others, report if all fail */
			if (!first_err[0])
				snprintf(first_err, sizeof(first_err), "%s", err);
			continue;
		}
		dpusim_log("%s: %s", fn, err);
		goto fail;
	}

	if (n == 0 || (!all && unit == ALLOC_DPUS && got < count) ||
	    (!all && unit == ALLOC_RANKS && n < count)) {
		if (unit == ALLOC_DPUS && !all)
			dpusim_log("%s: %u DPU%s requested, only %llu free (%u of %u ranks could be opened, %u owned by another open file)%s%s",
				   fn, count, count == 1 ? "" : "s",
				   (unsigned long long)got, n,
				   nr_descs, busy, first_err[0] ? "; " : "",
				   first_err);
		else if (!all)
			dpusim_log("%s: %u rank%s requested, only %u free (of %u, %u owned by another open file)%s%s",
				   fn, count, count == 1 ? "" : "s", n, nr_descs, busy,
				   first_err[0] ? "; " : "", first_err);
		else
			dpusim_log("%s: no free rank (%u ranks, %u owned by another open file)%s%s",
				   fn, nr_descs, busy,
				   first_err[0] ? "; " : "", first_err);
		ret = DPU_ERR_ALLOCATION;
		goto fail;
	}

	free(descs);
	return dpusim_set_assemble(ranks, n, (unit == ALLOC_DPUS && !all) ?
				   count : UINT32_MAX, &profile, set);

fail:
	for (i = 0; i < n; i++)
		dpusim_rank_destroy(ranks[i]);
	free(ranks);
	free(descs);
	return ret;
}

DPUSIM_API dpu_error_t dpu_alloc(uint32_t nr_dpus, const char *profile,
				 struct dpu_set_t *dpu_set)
{
	return alloc_common(ALLOC_DPUS, nr_dpus, profile, dpu_set,
			    "dpu_alloc");
}

DPUSIM_API dpu_error_t dpu_alloc_ranks(uint32_t nr_ranks, const char *profile,
				       struct dpu_set_t *dpu_set)
{
	return alloc_common(ALLOC_RANKS, nr_ranks, profile, dpu_set,
			    "dpu_alloc_ranks");
}

DPUSIM_API dpu_error_t dpu_free(struct dpu_set_t set)
{
	struct dpusim_set_props *props;

	if (set.kind != DPU_SET_RANKS || set.list.nr_ranks == 0 ||
	    !set.list.ranks || !set.list.ranks[0] ||
	    !(props = set.list.ranks[0]->props) ||
	    props->ranks != set.list.ranks ||
	    props->nr_ranks != set.list.nr_ranks) {
		dpusim_log("dpu_free: not a set returned by dpu_alloc or dpu_alloc_ranks (a rank or DPU of one?)");
		return DPU_ERR_INVALID_DPU_SET;
	}
	props_destroy(props);
	return DPU_OK;
}

struct dpusim_set_props *dpusim_set_props(struct dpu_set_t set, const char *fn)
{
	switch (set.kind) {
	case DPU_SET_RANKS:
		if (set.list.nr_ranks && set.list.ranks && set.list.ranks[0])
			return set.list.ranks[0]->props;
		break;
	case DPU_SET_DPU:
		if (set.dpu && set.dpu->rank)
			return set.dpu->rank->props;
		break;
	}
	if (fn)
		dpusim_log("%s: invalid or empty dpu set", fn);
	return NULL;
}

static bool check_set(struct dpu_set_t set, const char *fn)
{
	uint32_t i;

	switch (set.kind) {
	case DPU_SET_RANKS:
		if (set.list.nr_ranks && !set.list.ranks)
			break;
		for (i = 0; i < set.list.nr_ranks; i++)
			if (!set.list.ranks[i])
				goto bad;
		return true;
	case DPU_SET_DPU:
		if (set.dpu)
			return true;
		break;
	}
bad:
	dpusim_log("%s: invalid dpu set", fn);
	return false;
}

DPUSIM_API dpu_error_t dpu_get_nr_ranks(struct dpu_set_t set,
					uint32_t *nr_ranks)
{
	if (!check_set(set, "dpu_get_nr_ranks"))
		return DPU_ERR_INVALID_DPU_SET;
	if (!nr_ranks) {
		dpusim_log("dpu_get_nr_ranks: nr_ranks is NULL");
		return DPU_ERR_INTERNAL;
	}
	*nr_ranks = set.kind == DPU_SET_RANKS ? set.list.nr_ranks : 1;
	return DPU_OK;
}

DPUSIM_API dpu_error_t dpu_get_nr_dpus(struct dpu_set_t set,
				       uint32_t *nr_dpus)
{
	uint32_t i, n = 0;

	if (!check_set(set, "dpu_get_nr_dpus"))
		return DPU_ERR_INVALID_DPU_SET;
	if (!nr_dpus) {
		dpusim_log("dpu_get_nr_dpus: nr_dpus is NULL");
		return DPU_ERR_INTERNAL;
	}
	if (set.kind == DPU_SET_DPU) {
		*nr_dpus = 1;
		return DPU_OK;
	}
	for (i = 0; i < set.list.nr_ranks; i++)
		n += set.list.ranks[i]->nr_enabled;
	*nr_dpus = n;
	return DPU_OK;
}

/* ------------------------------------------------------------ iterators */

DPUSIM_API struct dpu_set_rank_iterator_t
dpu_set_rank_iterator_from(struct dpu_set_t *set)
{
	struct dpu_set_rank_iterator_t it;

	memset(&it, 0, sizeof(it));
	it.set = set;
	it.next_idx = 1;
	if (!set)
		return it;
	it.next = *set;
	switch (set->kind) {
	case DPU_SET_RANKS:
		it.has_next = set->list.nr_ranks != 0 && set->list.ranks;
		it.next.list.nr_ranks = 1;
		break;
	case DPU_SET_DPU:
		it.has_next = set->dpu != NULL;
		break;
	}
	return it;
}

DPUSIM_API void
dpu_set_rank_iterator_next(struct dpu_set_rank_iterator_t *it)
{
	it->count++;
	if (!it->has_next)
		return;
	if (it->set->kind == DPU_SET_RANKS &&
	    it->next_idx < it->set->list.nr_ranks) {
		it->next.list.ranks = it->set->list.ranks + it->next_idx;
		it->next_idx++;
		return;
	}
	it->has_next = false;
}

/* Move to the next enabled DPU at or after it->next_idx of the current rank. */
static void dpu_iterator_advance(struct dpu_set_dpu_iterator_t *it)
{
	while (it->rank_iterator.has_next) {
		struct dpu_rank_t *rank = it->rank_iterator.next.list.ranks[0];

		for (; rank && it->next_idx < rank->nr_dpus; it->next_idx++) {
			struct dpu_t *dpu = &rank->dpus[it->next_idx];

			if (dpu->enabled) {
				it->has_next = true;
				it->next.kind = DPU_SET_DPU;
				it->next.dpu = dpu;
				it->next_idx++;
				return;
			}
		}
		dpu_set_rank_iterator_next(&it->rank_iterator);
		it->next_idx = 0;
	}
	it->has_next = false;
}

DPUSIM_API struct dpu_set_dpu_iterator_t
dpu_set_dpu_iterator_from(struct dpu_set_t *set)
{
	struct dpu_set_dpu_iterator_t it;

	memset(&it, 0, sizeof(it));
	it.rank_iterator = dpu_set_rank_iterator_from(set);
	if (!set)
		return it;
	it.next = *set;
	if (set->kind == DPU_SET_DPU) {
		it.has_next = set->dpu != NULL;
		return it;
	}
	if (set->kind == DPU_SET_RANKS)
		dpu_iterator_advance(&it);
	return it;
}

DPUSIM_API void
dpu_set_dpu_iterator_next(struct dpu_set_dpu_iterator_t *it)
{
	it->count++;
	if (!it->has_next)
		return;
	if (it->rank_iterator.set->kind == DPU_SET_DPU) {
		it->has_next = false;
		return;
	}
	dpu_iterator_advance(it);
}
