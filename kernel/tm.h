/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dpusim tag matching: /dev/dpusim/tm.  The kernel plays the "hardware"
 * of rdma-core's tag-matching offload (shared/design/tag-matching.md):
 * it holds the posted tags of each TM-SRQ, matches every message a QP
 * sends, copies eager payloads, reads rendezvous payloads from the
 * sender's registered memory, and writes completions into rings mapped by
 * the owning process.
 *
 * One file per concern, as rxe does; each calls only the files below it:
 *   tm_dev.c   the device: file operations, the ioctl table, mmap and
 *              poll, sysfs counters
 *   tm_qp.c    QPs: lifetime, connect, the POST_SEND doorbell
 *   tm_srq.c   TM-SRQs: lifetime, list operations, untagged buffers,
 *              the SRQ's sends
 *   tm_msg.c   the message data path: delivery and matching, rendezvous,
 *              SRQ sends, RDMA read, FIN, the completions they write
 *   tm_mr.c    memory regions (pinned user memory or DPU MRAM), keys,
 *              the sg lists that name them and the copy engine
 *   tm_cq.c    completion queues: the mapped ring
 *   tm_obj.c   object lifetimes: contexts, handle and number
 *              reservation, publish and unpublish, buffer charging
 *   tm_list.c  the tag list of a TM-SRQ and its sync rule (no locking,
 *              no device: KUnit tests it alone)
 *
 * Locking, outermost first: ctx->lock (object tables), qp->lock (one send
 * at a time per QP), srq->lock (the SRQ's serialisation point: matching,
 * its buffers, its connections), rank->state_lock (MRAM regions, at
 * registration only), cq->lock (spinlock, ring producer), the xarrays'
 * own locks; tm->users_lock is taken alone.
 *
 * Object lifetime follows iommufd's rule.  A create reserves its handle
 * (and its module-wide number or key) as an XA_ZERO_ENTRY, which every
 * lookup reads as NULL, builds the object, writes the reply to user space
 * and only then publishes the object (dpusim_tm_obj_finalize()); a
 * failure before that, the copy-out included, releases the reservations
 * and frees an object no other thread could see.  Once published, the
 * creator does not touch it again: another thread may destroy it at once.
 * A destroy takes the object out of its tables (a reservation is not an
 * object: destroying it is -ENOENT) and then marks it dead under the lock
 * that every path linking, connecting or posting to it holds while it
 * checks that mark: qp->lock for a QP, srq->lock for an SRQ.  The tables
 * of a context hold one reference on each object; every other user holds
 * its own.
 *
 * Kernel memory held for user space is charged to it and bounded: CQ
 * rings and SRQ tag tables to the creator's RLIMIT_MEMLOCK as pinned
 * memory (mm->pinned_vm, as RDMA and io_uring charge theirs; CAP_IPC_LOCK
 * exempt), posted buffers (tagged and untagged) to a per-user count
 * capped by the tm_user_bufs module parameter.
 */
#ifndef _DPUSIM_TM_H
#define _DPUSIM_TM_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <uapi/dpusim.h>

#include "pin.h"

struct dpusim_rank;
struct mm_struct;

/* Counters of /sys/class/dpusim/tm */
struct dpusim_tm_stats {
	atomic64_t messages;
	atomic64_t matches;
	atomic64_t unexpected;
	atomic64_t syncs;
	atomic64_t rndv_reads;
	atomic64_t bytes;
	atomic64_t no_tag;
	atomic64_t fins;
	atomic64_t overruns;
};

/**
 * struct dpusim_tm_dev - the tag-matching device, one per module
 * @dev: /sys/class/dpusim/tm
 * @cdev: /dev/dpusim/tm
 * @mrs: key -> region, module wide (rkeys cross processes)
 * @next_mr: cyclic allocation cursor of @mrs
 * @srqs: srq_num -> SRQ, for CONNECT
 * @next_srq: cyclic allocation cursor of @srqs
 * @qps: qp_num -> QP (numbers only; nothing looks QPs up here)
 * @next_qp: cyclic allocation cursor of @qps
 * @stats: counters
 * @contexts: open files
 * @nr_mrs: regions alive (registered, or unregistered but still in use)
 * @pinned_pages: user pages the regions hold pinned
 * @charged_pages: pages of CQ rings and SRQ tag tables, charged to their
 *                 creators' RLIMIT_MEMLOCK
 * @posted_bufs: tagged and untagged buffers posted, all users
 * @users: euid -> struct dpusim_tm_user, for the users with a context
 * @users_lock: protects @users and the users' @ref
 */
struct dpusim_tm_dev {
	struct device dev;
	struct cdev cdev;
	struct xarray mrs;
	u32 next_mr;
	struct xarray srqs;
	u32 next_srq;
	struct xarray qps;
	u32 next_qp;
	struct dpusim_tm_stats stats;
	atomic_t contexts;
	atomic_t nr_mrs;
	atomic_long_t pinned_pages;
	atomic_long_t charged_pages;
	atomic_long_t posted_bufs;
	struct xarray users;
	struct mutex users_lock;	/* @users, each user's @ref */
};

/**
 * struct dpusim_tm_user - what one user's contexts hold together
 * @uid: the effective uid
 * @ref: contexts of the user (under tm->users_lock)
 * @bufs: tagged and untagged buffers the user's SRQs hold, at most
 *        tm_user_bufs
 */
struct dpusim_tm_user {
	kuid_t uid;
	unsigned int ref;
	atomic_t bufs;
};

/**
 * struct dpusim_tm_ctx - one open file of /dev/dpusim/tm
 * @ref: held by the file and by each CQ (a mapped ring outlives the file)
 * @tm: the device
 * @lock: protects the object tables
 * @mrs: lkey -> region
 * @cqs: handle -> CQ
 * @srqs: handle -> SRQ
 * @qps: handle -> QP
 * @nr_mrs: entries of @mrs
 * @overrun: a CQ of the context refused a completion; the next call
 *           fails once with -EOVERFLOW
 * @wait: poll() waiters
 * @uid: effective uid of the opener
 * @user: what the opener's contexts hold together (referenced)
 * @dead: the file is being released
 */
struct dpusim_tm_ctx {
	struct kref ref;
	struct dpusim_tm_dev *tm;
	struct mutex lock;	/* protects the object tables */
	struct xarray mrs;
	struct xarray cqs;
	struct xarray srqs;
	struct xarray qps;
	u32 nr_mrs;
	atomic_t overrun;
	wait_queue_head_t wait;
	kuid_t uid;
	struct dpusim_tm_user *user;
	bool dead;
};

/**
 * struct dpusim_tm_mr - a memory region
 * @ref: held by the context until DEREG, and by each sg list naming it
 * @tm: the device
 * @ctx: the owning context (identity only: compared, never followed)
 * @key: lkey == rkey, also the handle
 * @access: DPUSIM_TM_ACCESS_*
 * @iova: first address (user address, or MRAM offset)
 * @length: bytes
 * @first_off: offset of @iova in pages[0]
 * @npages: entries of @pages
 * @pages: the pages, pinned user pages or the DPU's MRAM pages
 * @rank: MRAM regions: the rank, whose ownership the region holds
 * @charge: user regions: the pinned pages, charged to the registering
 *          process and the device's pinned_pages
 */
struct dpusim_tm_mr {
	struct kref ref;
	struct dpusim_tm_dev *tm;
	const struct dpusim_tm_ctx *ctx;
	u32 key;
	u32 access;
	u64 iova;
	u64 length;
	unsigned int first_off;
	unsigned long npages;
	struct page **pages;
	struct dpusim_rank *rank;
	struct dpusim_charge charge;
};

/* One resolved sg entry: @len bytes at @off from the start of @mr */
struct dpusim_tm_seg {
	struct dpusim_tm_mr *mr;
	u64 off;
	u32 len;
};

/* A resolved sg list; holds a reference on each region */
struct dpusim_tm_sgl {
	u32 nr;
	u64 bytes;
	struct dpusim_tm_seg seg[];
};

/* A cursor over segments, or over a kernel buffer (@kbuf non-NULL) */
struct dpusim_tm_iter {
	const struct dpusim_tm_seg *seg;
	u32 nr;
	u32 i;
	u64 pos;
	u8 *kbuf;
	u64 klen;
};

/**
 * struct dpusim_tm_cq - a completion queue
 * @ref: held by its context's table, each mapping, each SRQ or QP using it
 * @ctx: the owning context (referenced)
 * @handle: the context's handle
 * @lock: protects @prod, @reserved, @overruns
 * @ring: header and entries: @pages mapped with vmap()
 * @ring_size: bytes of @ring (page multiple)
 * @pages: the ring's pages, inserted into the process's mapping
 * @npages: entries of @pages
 * @nr_entries: entries, a power of two (the kernel's copy)
 * @prod: producer index (the kernel's copy)
 * @reserved: entries promised to operations under way
 * @overruns: completions refused because the ring was full
 * @users: SRQs and QPs using it (destroy: -EBUSY)
 * @charge: the ring's pages, charged to the creator and the device's
 *          charged_pages (empty: not charged)
 */
struct dpusim_tm_cq {
	struct kref ref;
	struct dpusim_tm_ctx *ctx;
	u32 handle;
	spinlock_t lock;	/* ring producer side */
	struct dpusim_tm_cq_ring *ring;
	size_t ring_size;
	struct page **pages;
	unsigned long npages;
	u32 nr_entries;
	u32 prod;
	u32 reserved;
	u32 overruns;
	atomic_t users;
	struct dpusim_charge charge;
};

/**
 * struct dpusim_tm_entry - a tagged buffer in a TM-SRQ's list
 * @node: in the list, post order
 * @hnode: in a hash bucket (full mask) or in the wildcard list, post order
 * @hh: in the handle hash
 * @seq: post order
 * @tag: tag & mask
 * @mask: the mask
 * @wr_id: recv_wr_id
 * @handle: the handle
 * @epoch: eligible once the list's epoch reaches it
 * @sgl: the buffer
 */
struct dpusim_tm_entry {
	struct list_head node;
	struct list_head hnode;
	struct hlist_node hh;
	u64 seq;
	u64 tag;
	u64 mask;
	u64 wr_id;
	u32 handle;
	u32 epoch;
	struct dpusim_tm_sgl *sgl;
};

/**
 * struct dpusim_tm_list - the tag list of a TM-SRQ and its sync state
 * @entries: all entries, post order
 * @nr: entries in the list
 * @max: max_num_tags
 * @buckets: 1 << @hash_bits lists of full-mask entries, by tag
 * @hash_bits: log2 of the bucket count (of both hashes)
 * @wild: entries whose mask is not all ones, post order
 * @handles: 1 << @hash_bits lists of entries, by handle
 * @next_handle: the next handle to try (handles go up and wrap, skipping
 *               0 and handles in use)
 * @wrapped: handles wrapped around once (then every unknown handle of
 *           the range counts as issued)
 * @next_seq: post order counter
 * @hw_cnt: messages the "hardware" declared unexpected
 * @sw_cnt: the count software last reported
 * @epoch: entries with epoch <= this are eligible
 * @pending: entries were added out of sync (epoch + 1)
 */
struct dpusim_tm_list {
	struct list_head entries;
	u32 nr;
	u32 max;
	struct list_head *buckets;
	unsigned int hash_bits;
	struct list_head wild;
	struct hlist_head *handles;
	u32 next_handle;
	bool wrapped;
	u64 next_seq;
	u32 hw_cnt;
	u32 sw_cnt;
	u32 epoch;
	bool pending;
};

/* An untagged buffer */
struct dpusim_tm_rbuf {
	struct list_head node;
	u64 wr_id;
	struct dpusim_tm_sgl *sgl;
};

/**
 * struct dpusim_tm_srq - a TM-SRQ
 * @ref: held by its context's table and by each connected QP
 * @tm: the device
 * @ctx: the owning context (identity and overrun notice)
 * @handle: the context's handle
 * @num: srq_num, module wide
 * @uid: effective uid of the owner
 * @cq: its CQ (referenced)
 * @max_ops: list operations per call
 * @max_wr: untagged buffers
 * @max_sge: entries per sg list
 * @lock: serialises everything below
 * @dead: destroyed; senders get -ECONNRESET
 * @list: the tag list
 * @rbufs: untagged buffers, FIFO
 * @nr_rbufs: entries of @rbufs
 * @qps: qp_num -> connected QP
 * @charge: the tag tables' pages, charged to the creator and the
 *          device's charged_pages
 */
struct dpusim_tm_srq {
	struct kref ref;
	struct dpusim_tm_dev *tm;
	struct dpusim_tm_ctx *ctx;
	u32 handle;
	u32 num;
	kuid_t uid;
	struct dpusim_tm_cq *cq;
	u32 max_ops;
	u32 max_wr;
	u32 max_sge;
	struct mutex lock;	/* the SRQ's serialisation point */
	bool dead;
	struct dpusim_tm_list list;
	struct list_head rbufs;
	u32 nr_rbufs;
	struct xarray qps;
	struct dpusim_charge charge;
};

/**
 * struct dpusim_tm_qp - a QP
 * @ref: held by its context's table (and transiently by users)
 * @tm: the device
 * @ctx: the owning context
 * @handle: the context's handle
 * @num: qp_num, module wide
 * @max_sge: entries per sg list
 * @cq: its CQ (referenced)
 * @lock: one send at a time; protects @srq and @dead
 * @srq: the SRQ it is connected to (referenced), or NULL
 * @dead: destroyed: nothing connects it or sends on it any more
 * @reset: the SRQ is gone (under the SRQ's lock)
 * @rcu: freed after a grace period (looked up under RCU)
 */
struct dpusim_tm_qp {
	struct kref ref;
	struct rcu_head rcu;
	struct dpusim_tm_dev *tm;
	struct dpusim_tm_ctx *ctx;
	u32 handle;
	u32 num;
	u32 max_sge;
	struct dpusim_tm_cq *cq;
	struct mutex lock;	/* one send at a time */
	struct dpusim_tm_srq *srq;
	bool dead;
	bool reset;
};

/**
 * struct dpusim_tm_ucmd - one ioctl call
 * @ctx: the caller's context
 * @ubuffer: the user's struct
 * @user_size: its size, as the user gave it
 * @cmd: the kernel's copy
 */
struct dpusim_tm_ucmd {
	struct dpusim_tm_ctx *ctx;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

/* tm_dev.c */
int dpusim_tm_create(dev_t devt, struct class *class);
void dpusim_tm_destroy(void);

/* tm_obj.c */
struct dpusim_tm_ctx *dpusim_tm_ctx_new(struct dpusim_tm_dev *tm);
void dpusim_tm_ctx_put(struct dpusim_tm_ctx *ctx);
int dpusim_tm_ucmd_respond(struct dpusim_tm_ucmd *ucmd, size_t cmd_len);
int dpusim_tm_obj_reserve(struct dpusim_tm_ctx *ctx, struct xarray *table,
			  u32 max, u32 *handle);
void dpusim_tm_obj_finalize(struct dpusim_tm_ctx *ctx, struct xarray *table,
			    u32 handle, void *obj);
void dpusim_tm_obj_abort(struct dpusim_tm_ctx *ctx, struct xarray *table,
			 u32 handle);
int dpusim_tm_num_reserve(struct xarray *numbers, struct xa_limit limit,
			  u32 *next, u32 *num);
void *dpusim_tm_obj_unpublish(struct dpusim_tm_ctx *ctx, struct xarray *table,
			      u32 handle);
int dpusim_tm_bufs_charge(struct dpusim_tm_ctx *ctx, u32 n);
void dpusim_tm_bufs_uncharge(struct dpusim_tm_ctx *ctx, u32 n);

/* tm_mr.c */
int dpusim_tm_reg_mr(struct dpusim_tm_ucmd *ucmd);
int dpusim_tm_dereg_mr(struct dpusim_tm_ctx *ctx, u32 key);
void dpusim_tm_dereg_mrs(struct dpusim_tm_ctx *ctx);
void dpusim_tm_mr_put(struct dpusim_tm_mr *mr);
struct dpusim_tm_mr *dpusim_tm_mr_lookup(struct dpusim_tm_dev *tm, u32 key);
struct dpusim_tm_sgl *dpusim_tm_sgl_get(struct dpusim_tm_ctx *ctx, u64 usgl,
					u32 nr, u32 max_sge, u32 access);
void dpusim_tm_sgl_put(struct dpusim_tm_sgl *sgl);
void dpusim_tm_iter_sgl(struct dpusim_tm_iter *it,
			const struct dpusim_tm_sgl *sgl);
void dpusim_tm_iter_seg(struct dpusim_tm_iter *it,
			const struct dpusim_tm_seg *seg);
void dpusim_tm_iter_buf(struct dpusim_tm_iter *it, void *buf, u64 len);
void dpusim_tm_iter_skip(struct dpusim_tm_iter *it, u64 n);
u64 dpusim_tm_copy(struct dpusim_tm_iter *dst, struct dpusim_tm_iter *src,
		   u64 len);
int dpusim_tm_mr_range(struct dpusim_tm_mr *mr, u64 addr, u64 len,
		       struct dpusim_tm_seg *seg);

/* tm_cq.c */
struct dpusim_tm_cq *dpusim_tm_cq_alloc(u32 cqe);
struct dpusim_tm_cq *dpusim_tm_cq_use(struct dpusim_tm_ctx *ctx, u32 handle);
void dpusim_tm_cq_unuse(struct dpusim_tm_cq *cq);
void dpusim_tm_cq_put(struct dpusim_tm_cq *cq);
int dpusim_tm_cq_reserve(struct dpusim_tm_cq *cq, u32 n);
void dpusim_tm_cq_unreserve(struct dpusim_tm_cq *cq, u32 n);
void dpusim_tm_cq_push(struct dpusim_tm_cq *cq,
		       const struct dpusim_tm_cqe *cqe);
bool dpusim_tm_cq_pending(struct dpusim_tm_cq *cq);
int dpusim_tm_create_cq(struct dpusim_tm_ucmd *ucmd);
int dpusim_tm_destroy_cq(struct dpusim_tm_ctx *ctx, u32 handle);
void dpusim_tm_destroy_cqs(struct dpusim_tm_ctx *ctx);
int dpusim_tm_cq_mmap(struct dpusim_tm_ctx *ctx, struct vm_area_struct *vma);

/* tm_list.c */
int dpusim_tm_list_init(struct dpusim_tm_list *l, u32 max_num_tags);
void dpusim_tm_list_fini(struct dpusim_tm_list *l,
			 void (*drop)(struct dpusim_tm_entry *e));
int dpusim_tm_list_add(struct dpusim_tm_list *l, struct dpusim_tm_entry *e);
struct dpusim_tm_entry *dpusim_tm_list_match(struct dpusim_tm_list *l,
					     u64 tag);
void dpusim_tm_list_remove(struct dpusim_tm_list *l,
			   struct dpusim_tm_entry *e);
struct dpusim_tm_entry *dpusim_tm_list_find(struct dpusim_tm_list *l,
					    u32 handle, bool *issued);
void dpusim_tm_list_sync(struct dpusim_tm_list *l, u32 sw_cnt);
void dpusim_tm_list_unexpected(struct dpusim_tm_list *l);
bool dpusim_tm_list_sync_req(const struct dpusim_tm_list *l);
bool dpusim_tm_list_eligible(const struct dpusim_tm_list *l,
			     const struct dpusim_tm_entry *e);

/* tm_msg.c */
void dpusim_tm_entry_drop(struct dpusim_tm_entry *e);
void dpusim_tm_rbuf_drop(struct dpusim_tm_rbuf *rb);
void dpusim_tm_srq_entry_done(struct dpusim_tm_srq *srq,
			      struct dpusim_tm_entry *e);
void dpusim_tm_srq_cqe(struct dpusim_tm_srq *srq, struct dpusim_tm_cqe *c);
void dpusim_tm_flush_cqe(struct dpusim_tm_cq *cq, u32 qp_num, u32 src_qp,
			 u16 wc_flags);
int dpusim_tm_send_wr_get(struct dpusim_tm_send_wr *wr,
			  const struct dpusim_tm_send_wr __user *uwr);
int dpusim_tm_qp_send(struct dpusim_tm_ctx *ctx, struct dpusim_tm_qp *qp,
		      const struct dpusim_tm_send_wr *wr);
int dpusim_tm_srq_send(struct dpusim_tm_ctx *ctx, struct dpusim_tm_srq *srq,
		       struct dpusim_tm_qp *qp,
		       const struct dpusim_tm_send_wr *wr);

/* tm_srq.c */
int dpusim_tm_create_srq(struct dpusim_tm_ucmd *ucmd);
int dpusim_tm_destroy_srq(struct dpusim_tm_ctx *ctx, u32 handle);
struct dpusim_tm_srq *dpusim_tm_srq_get(struct dpusim_tm_ctx *ctx, u32 handle);
void dpusim_tm_srq_put(struct dpusim_tm_srq *srq);
int dpusim_tm_post_srq_ops(struct dpusim_tm_ucmd *ucmd);
int dpusim_tm_post_srq_recv(struct dpusim_tm_ucmd *ucmd);
int dpusim_tm_post_srq_send(struct dpusim_tm_ctx *ctx,
			    struct dpusim_tm_post *cmd);

/* tm_qp.c */
int dpusim_tm_create_qp(struct dpusim_tm_ucmd *ucmd);
int dpusim_tm_destroy_qp(struct dpusim_tm_ctx *ctx, u32 handle);
int dpusim_tm_connect(struct dpusim_tm_ucmd *ucmd);
int dpusim_tm_post_send(struct dpusim_tm_ucmd *ucmd);

#endif /* _DPUSIM_TM_H */
