/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dpusim's tracepoints (trace system "dpusim"): transfers, the
 * asynchronous queue, DPU runs and faults, and the tag matcher.  Each
 * prints its fields as key=value; `dpusim trace` reads them from tracefs
 * and writes a timeline.  Disabled, a tracepoint is a static branch; the
 * clock reads for durations are taken only when the event is enabled,
 * except a transfer's, which the rank counts in sysfs as well.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dpusim

#if !defined(_DPUSIM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DPUSIM_TRACE_H

#include <linux/tracepoint.h>

/* ------------------------------------------------------------ rank side */

/*
 * One transfer call of one rank: duration_ns the guest time it held the
 * rank, modeled_ns what it would take on real hardware (xfer_model.c).
 */
TRACE_EVENT(dpusim_xfer,
	    TP_PROTO(u32 rank, u32 dpus, u32 blocks, u64 bytes, bool from_dpu, bool async,
		     u64 duration_ns, u64 modeled_ns),
	    TP_ARGS(rank, dpus, blocks, bytes, from_dpu, async, duration_ns, modeled_ns),
	    TP_STRUCT__entry(__field(u32, rank)
			     __field(u32, dpus)
			     __field(u32, blocks)
			     __field(u64, bytes)
			     __field(bool, from_dpu)
			     __field(bool, async)
			     __field(u64, duration_ns)
			     __field(u64, modeled_ns)),
	    TP_fast_assign(__entry->rank = rank;
			   __entry->dpus = dpus;
			   __entry->blocks = blocks;
			   __entry->bytes = bytes;
			   __entry->from_dpu = from_dpu;
			   __entry->async = async;
			   __entry->duration_ns = duration_ns;
			   __entry->modeled_ns = modeled_ns;),
	    TP_printk("rank=%u dpus=%u blocks=%u bytes=%llu dir=%s async=%d duration_ns=%llu modeled_ns=%llu",
		      __entry->rank, __entry->dpus, __entry->blocks, __entry->bytes,
		      __entry->from_dpu ? "from_dpu" : "to_dpu", __entry->async,
		      __entry->duration_ns, __entry->modeled_ns)
);

TRACE_EVENT(dpusim_async_queue,
	    TP_PROTO(u32 rank, u64 job, u32 dpus, u32 blocks, u64 bytes, u32 queued),
	    TP_ARGS(rank, job, dpus, blocks, bytes, queued),
	    TP_STRUCT__entry(__field(u32, rank)
			     __field(u64, job)
			     __field(u32, dpus)
			     __field(u32, blocks)
			     __field(u64, bytes)
			     __field(u32, queued)),
	    TP_fast_assign(__entry->rank = rank;
			   __entry->job = job;
			   __entry->dpus = dpus;
			   __entry->blocks = blocks;
			   __entry->bytes = bytes;
			   __entry->queued = queued;),
	    TP_printk("rank=%u job=%llu dpus=%u blocks=%u bytes=%llu queued=%u",
		      __entry->rank, __entry->job, __entry->dpus, __entry->blocks,
		      __entry->bytes, __entry->queued)
);

TRACE_EVENT(dpusim_async_done,
	    TP_PROTO(u32 rank, u64 job, u64 bytes, int err, u64 wait_ns, u64 duration_ns),
	    TP_ARGS(rank, job, bytes, err, wait_ns, duration_ns),
	    TP_STRUCT__entry(__field(u32, rank)
			     __field(u64, job)
			     __field(u64, bytes)
			     __field(int, err)
			     __field(u64, wait_ns)
			     __field(u64, duration_ns)),
	    TP_fast_assign(__entry->rank = rank;
			   __entry->job = job;
			   __entry->bytes = bytes;
			   __entry->err = err;
			   __entry->wait_ns = wait_ns;
			   __entry->duration_ns = duration_ns;),
	    TP_printk("rank=%u job=%llu bytes=%llu err=%d wait_ns=%llu duration_ns=%llu",
		      __entry->rank, __entry->job, __entry->bytes, __entry->err,
		      __entry->wait_ns, __entry->duration_ns)
);

TRACE_EVENT(dpusim_launch_start,
	    TP_PROTO(u32 rank, u32 dpu),
	    TP_ARGS(rank, dpu),
	    TP_STRUCT__entry(__field(u32, rank)
			     __field(u32, dpu)),
	    TP_fast_assign(__entry->rank = rank;
			   __entry->dpu = dpu;),
	    TP_printk("rank=%u dpu=%u", __entry->rank, __entry->dpu)
);

/* modeled_cycles: the run's modeled DPU cycles, 0 if not modeled */
TRACE_EVENT(dpusim_launch_end,
	    TP_PROTO(u32 rank, u32 dpu, bool fault, u64 duration_ns, u64 modeled_cycles),
	    TP_ARGS(rank, dpu, fault, duration_ns, modeled_cycles),
	    TP_STRUCT__entry(__field(u32, rank)
			     __field(u32, dpu)
			     __field(bool, fault)
			     __field(u64, duration_ns)
			     __field(u64, modeled_cycles)),
	    TP_fast_assign(__entry->rank = rank;
			   __entry->dpu = dpu;
			   __entry->fault = fault;
			   __entry->duration_ns = duration_ns;
			   __entry->modeled_cycles = modeled_cycles;),
	    TP_printk("rank=%u dpu=%u state=%s duration_ns=%llu modeled_cycles=%llu",
		      __entry->rank, __entry->dpu, __entry->fault ? "fault" : "done",
		      __entry->duration_ns, __entry->modeled_cycles)
);

TRACE_EVENT(dpusim_fault,
	    TP_PROTO(u32 rank, u32 dpu),
	    TP_ARGS(rank, dpu),
	    TP_STRUCT__entry(__field(u32, rank)
			     __field(u32, dpu)),
	    TP_fast_assign(__entry->rank = rank;
			   __entry->dpu = dpu;),
	    TP_printk("rank=%u dpu=%u", __entry->rank, __entry->dpu)
);

/* ---------------------------------------------------------- tag matching */

/* dpusim_tm_post's op */
#define DPUSIM_TRACE_TM_ADD	0
#define DPUSIM_TRACE_TM_DEL	1
#define DPUSIM_TRACE_TM_SYNC	2
#define DPUSIM_TRACE_TM_RECV	3

TRACE_EVENT(dpusim_tm_post,
	    TP_PROTO(u32 srq, u32 op, u64 tag, u32 handle),
	    TP_ARGS(srq, op, tag, handle),
	    TP_STRUCT__entry(__field(u32, srq)
			     __field(u32, op)
			     __field(u64, tag)
			     __field(u32, handle)),
	    TP_fast_assign(__entry->srq = srq;
			   __entry->op = op;
			   __entry->tag = tag;
			   __entry->handle = handle;),
	    TP_printk("srq=%u op=%s tag=0x%llx handle=%u", __entry->srq,
		      __print_symbolic(__entry->op, { DPUSIM_TRACE_TM_ADD, "add" },
				       { DPUSIM_TRACE_TM_DEL, "del" },
				       { DPUSIM_TRACE_TM_SYNC, "sync" },
				       { DPUSIM_TRACE_TM_RECV, "recv" }),
		      __entry->tag, __entry->handle)
);

TRACE_EVENT(dpusim_tm_match,
	    TP_PROTO(u32 srq, u64 tag, u32 handle, u32 bytes, bool rndv),
	    TP_ARGS(srq, tag, handle, bytes, rndv),
	    TP_STRUCT__entry(__field(u32, srq)
			     __field(u64, tag)
			     __field(u32, handle)
			     __field(u32, bytes)
			     __field(bool, rndv)),
	    TP_fast_assign(__entry->srq = srq;
			   __entry->tag = tag;
			   __entry->handle = handle;
			   __entry->bytes = bytes;
			   __entry->rndv = rndv;),
	    TP_printk("srq=%u tag=0x%llx handle=%u bytes=%u rndv=%d", __entry->srq, __entry->tag,
		      __entry->handle, __entry->bytes, __entry->rndv)
);

TRACE_EVENT(dpusim_tm_unexpected,
	    TP_PROTO(u32 srq, u64 tag, u32 bytes),
	    TP_ARGS(srq, tag, bytes),
	    TP_STRUCT__entry(__field(u32, srq)
			     __field(u64, tag)
			     __field(u32, bytes)),
	    TP_fast_assign(__entry->srq = srq;
			   __entry->tag = tag;
			   __entry->bytes = bytes;),
	    TP_printk("srq=%u tag=0x%llx bytes=%u", __entry->srq, __entry->tag, __entry->bytes)
);

TRACE_EVENT(dpusim_tm_sync,
	    TP_PROTO(u32 srq, u32 unexpected),
	    TP_ARGS(srq, unexpected),
	    TP_STRUCT__entry(__field(u32, srq)
			     __field(u32, unexpected)),
	    TP_fast_assign(__entry->srq = srq;
			   __entry->unexpected = unexpected;),
	    TP_printk("srq=%u unexpected=%u", __entry->srq, __entry->unexpected)
);

TRACE_EVENT(dpusim_tm_rndv_read,
	    TP_PROTO(u32 qp, u64 bytes, int err),
	    TP_ARGS(qp, bytes, err),
	    TP_STRUCT__entry(__field(u32, qp)
			     __field(u64, bytes)
			     __field(int, err)),
	    TP_fast_assign(__entry->qp = qp;
			   __entry->bytes = bytes;
			   __entry->err = err;),
	    TP_printk("qp=%u bytes=%llu err=%d", __entry->qp, __entry->bytes, __entry->err)
);

TRACE_EVENT(dpusim_tm_fin,
	    TP_PROTO(u32 qp),
	    TP_ARGS(qp),
	    TP_STRUCT__entry(__field(u32, qp)),
	    TP_fast_assign(__entry->qp = qp;),
	    TP_printk("qp=%u", __entry->qp)
);

TRACE_EVENT(dpusim_tm_completion,
	    TP_PROTO(u32 cq, u32 opcode, u32 status, u32 flags),
	    TP_ARGS(cq, opcode, status, flags),
	    TP_STRUCT__entry(__field(u32, cq)
			     __field(u32, opcode)
			     __field(u32, status)
			     __field(u32, flags)),
	    TP_fast_assign(__entry->cq = cq;
			   __entry->opcode = opcode;
			   __entry->status = status;
			   __entry->flags = flags;),
	    TP_printk("cq=%u opcode=%u status=%u flags=0x%x", __entry->cq, __entry->opcode,
		      __entry->status, __entry->flags)
);

TRACE_EVENT(dpusim_tm_overrun,
	    TP_PROTO(u32 cq),
	    TP_ARGS(cq),
	    TP_STRUCT__entry(__field(u32, cq)),
	    TP_fast_assign(__entry->cq = cq;),
	    TP_printk("cq=%u", __entry->cq)
);

#endif /* _DPUSIM_TRACE_H */

/* This part must be outside the include guard */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
