// SPDX-License-Identifier: GPL-2.0
/*
 * The tag list of a TM-SRQ: what the "hardware" holds, and the sync rule.
 *
 * A message matches the earliest-posted eligible entry whose masked tag
 * equals the message's tag under the entry's mask.  Entries with a full
 * mask (the common MPI case) sit in hash buckets by tag, the others in one
 * wildcard list; both keep post order, and the match is the lower post
 * sequence of the first hit in the message's bucket and the first hit in
 * the wildcard list.  So exact tags cost the same however long the list
 * is (UCX's software matcher does the same).
 *
 * The sync rule (seed 004, "the race"): once a message went unexpected
 * (hw_cnt advanced), entries added before software reports that count
 * (sw_cnt, by an op with TM_SYNC or a TAG_SYNC) are not eligible; once the
 * counts agree, all of them become eligible together.  An entry's epoch
 * says from which list epoch on it is eligible; reaching sync advances the
 * epoch if entries wait for it.
 *
 * Handles are issued in increasing order and wrap, so that a consumed
 * handle is not issued again for a long time; a hash by handle finds the
 * entry of a TAG_DEL.  Every match unlists its entry inside the sender's
 * system call, so removal must be cheap: unlinking from a hash is a few
 * stores, where an xarray's erase walks and may free tree nodes.
 *
 * No locking here: the SRQ's lock covers it.
 */
#include <kunit/visibility.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "tm.h"

/**
 * dpusim_tm_list_init - an empty list
 * @l: the list
 * @max_num_tags: entries it may hold, 1 .. DPUSIM_TM_MAX_NUM_TAGS
 *
 * Return: 0 or -ENOMEM.
 */
int dpusim_tm_list_init(struct dpusim_tm_list *l, u32 max_num_tags)
{
	u32 i, n;

	memset(l, 0, sizeof(*l));
	INIT_LIST_HEAD(&l->entries);
	INIT_LIST_HEAD(&l->wild);
	l->max = max_num_tags;
	l->hash_bits = max_num_tags > 1 ? ilog2(roundup_pow_of_two(max_num_tags)) : 1;
	n = 1U << l->hash_bits;
	l->buckets = kvmalloc_array(n, sizeof(*l->buckets), GFP_KERNEL_ACCOUNT);
	l->handles = kvmalloc_array(n, sizeof(*l->handles), GFP_KERNEL_ACCOUNT);
	if (!l->buckets || !l->handles) {
		kvfree(l->buckets);
		kvfree(l->handles);
		l->buckets = NULL;
		l->handles = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		INIT_LIST_HEAD(&l->buckets[i]);
		INIT_HLIST_HEAD(&l->handles[i]);
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_init);

/**
 * dpusim_tm_list_fini - drop every entry and free the list
 * @l: the list
 * @drop: called on each entry after it left the list (it frees it)
 */
void dpusim_tm_list_fini(struct dpusim_tm_list *l,
			 void (*drop)(struct dpusim_tm_entry *e))
{
	struct dpusim_tm_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &l->entries, node) {
		dpusim_tm_list_remove(l, e);
		drop(e);
	}
	kvfree(l->handles);
	kvfree(l->buckets);
	l->handles = NULL;
	l->buckets = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_fini);

static bool dpusim_tm_full_mask(u64 mask)
{
	return mask == ~0ULL;
}

static struct list_head *dpusim_tm_bucket(struct dpusim_tm_list *l, u64 tag)
{
	return &l->buckets[hash_64(tag, l->hash_bits)];
}

static struct hlist_head *dpusim_tm_handle_bucket(struct dpusim_tm_list *l,
						  u32 handle)
{
	return &l->handles[hash_32(handle, l->hash_bits)];
}

static struct dpusim_tm_entry *dpusim_tm_handle_lookup(struct dpusim_tm_list *l,
						       u32 handle)
{
	struct dpusim_tm_entry *e;

	hlist_for_each_entry(e, dpusim_tm_handle_bucket(l, handle), hh)
		if (e->handle == handle)
			return e;
	return NULL;
}

/* The next handle: not 0, not in use; at most max_num_tags are in use */
static u32 dpusim_tm_handle_next(struct dpusim_tm_list *l)
{
	u32 h;

	do {
		h = l->next_handle++;
		if (!l->next_handle)
			l->wrapped = true;
	} while (!h || dpusim_tm_handle_lookup(l, h));
	return h;
}

/**
 * dpusim_tm_list_eligible - may @e match now?
 * @l: the list
 * @e: an entry of it
 */
bool dpusim_tm_list_eligible(const struct dpusim_tm_list *l,
			     const struct dpusim_tm_entry *e)
{
	return (s32)(e->epoch - l->epoch) <= 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_eligible);

/**
 * dpusim_tm_list_sync_req - do the counts differ (completions carry
 * DPUSIM_TM_WC_F_TM_SYNC_REQ)?
 * @l: the list
 */
bool dpusim_tm_list_sync_req(const struct dpusim_tm_list *l)
{
	return l->hw_cnt != l->sw_cnt;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_sync_req);

/**
 * dpusim_tm_list_add - append an entry (TAG_ADD)
 * @l: the list
 * @e: the entry, @tag, @mask, @wr_id and @sgl filled in
 *
 * Masks the tag, gives the entry its handle, post order and epoch.
 *
 * Return: 0, -ENOMEM when the list holds max_num_tags entries.
 */
int dpusim_tm_list_add(struct dpusim_tm_list *l, struct dpusim_tm_entry *e)
{
	if (l->nr >= l->max)
		return -ENOMEM;
	e->handle = dpusim_tm_handle_next(l);
	hlist_add_head(&e->hh, dpusim_tm_handle_bucket(l, e->handle));
	e->tag &= e->mask;
	e->seq = l->next_seq++;
	if (dpusim_tm_list_sync_req(l)) {
		e->epoch = l->epoch + 1;
		l->pending = true;
	} else {
		e->epoch = l->epoch;
	}
	list_add_tail(&e->node, &l->entries);
	list_add_tail(&e->hnode, dpusim_tm_full_mask(e->mask) ?
		      dpusim_tm_bucket(l, e->tag) : &l->wild);
	l->nr++;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_add);

/**
 * dpusim_tm_list_remove - take an entry out (consumed or deleted)
 * @l: the list
 * @e: the entry; its handle is released (handles are allocated
 *     cyclically, so it is not issued again before 2^32 others)
 */
void dpusim_tm_list_remove(struct dpusim_tm_list *l, struct dpusim_tm_entry *e)
{
	hlist_del(&e->hh);
	list_del(&e->node);
	list_del(&e->hnode);
	l->nr--;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_remove);

/**
 * dpusim_tm_list_match - the entry a message with @tag consumes
 * @l: the list
 * @tag: the message's tag
 *
 * Return: the earliest-posted eligible matching entry (still in the
 * list), or NULL: the message is unexpected.
 */
struct dpusim_tm_entry *dpusim_tm_list_match(struct dpusim_tm_list *l, u64 tag)
{
	struct dpusim_tm_entry *e, *hit = NULL;

	list_for_each_entry(e, dpusim_tm_bucket(l, tag), hnode) {
		if (e->tag == tag && dpusim_tm_list_eligible(l, e)) {
			hit = e;
			break;
		}
	}
	list_for_each_entry(e, &l->wild, hnode) {
		if (hit && e->seq > hit->seq)
			break;
		if ((tag & e->mask) == e->tag && dpusim_tm_list_eligible(l, e))
			return e;
	}
	return hit;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_match);

/**
 * dpusim_tm_list_find - the entry of a handle (TAG_DEL)
 * @l: the list
 * @handle: the handle
 * @issued: out, whether the handle was ever issued by this list (so a
 *          missing entry was consumed or deleted already)
 *
 * Return: the entry, or NULL.
 */
struct dpusim_tm_entry *dpusim_tm_list_find(struct dpusim_tm_list *l,
					    u32 handle, bool *issued)
{
	struct dpusim_tm_entry *e = handle ? dpusim_tm_handle_lookup(l, handle) : NULL;

	*issued = e || (handle && (l->wrapped || handle < l->next_handle));
	return e;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_find);

/**
 * dpusim_tm_list_unexpected - a message went unexpected
 * @l: the list
 */
void dpusim_tm_list_unexpected(struct dpusim_tm_list *l)
{
	l->hw_cnt++;
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_unexpected);

/**
 * dpusim_tm_list_sync - software reports the unexpected messages it handled
 * @l: the list
 * @sw_cnt: the count (TAG_SYNC, or an op with DPUSIM_TM_OPS_TM_SYNC)
 *
 * Once the counts agree, the entries added while they differed become
 * eligible.
 */
void dpusim_tm_list_sync(struct dpusim_tm_list *l, u32 sw_cnt)
{
	l->sw_cnt = sw_cnt;
	if (!dpusim_tm_list_sync_req(l) && l->pending) {
		l->epoch++;
		l->pending = false;
	}
}
EXPORT_SYMBOL_IF_KUNIT(dpusim_tm_list_sync);
