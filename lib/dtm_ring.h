/* SPDX-License-Identifier: MIT */
/*
 * libdpusim internals: reading a tag-matching completion ring (the mapping
 * of a CQ, struct dpusim_tm_cq_ring followed by the entries).  Not
 * installed; hidden visibility like the rest of lib/.  Split out of
 * lib/dtm.c so that the unit tests can decode a ring built in plain
 * memory, without the kernel.
 */
#ifndef DPUSIM_LIB_DTM_RING_H
#define DPUSIM_LIB_DTM_RING_H

#include <stdint.h>

#include <dtm.h>

/*
 * What the library knows about a ring, kept outside the mapping: nothing
 * of the ring's header but @producer and @overruns is ever read (the
 * header's nr_entries is process-writable memory and is ignored).
 */
struct dtm_ring_state {
	uint32_t nr_entries;	/* from DPUSIM_IOCTL_TM_CREATE_CQ; a power of two */
	uint32_t consumer;	/* the next entry to read (free-running u32) */
	uint32_t last_overruns;	/* the ring's overruns counter last reported */
};

/*
 * Decode up to @num_entries completions of the ring mapped at @ring (the
 * mapping's first byte) into @wc: reads the producer (acquire), copies the
 * entries from @st->consumer on (entry i at DPUSIM_TM_CQ_RING_ENTRIES +
 * (i & (nr_entries - 1)) * sizeof(struct dpusim_tm_cqe); wc->data only
 * with DTM_WC_INLINE, at most min(byte_len, 64) bytes), then publishes the
 * new consumer (release).  Never reads more than nr_entries entries past
 * the consumer, whatever the producer says.
 *
 * Returns the number of completions, or -EOVERFLOW (errno set) when none
 * was available and the ring's overruns counter differs from
 * @st->last_overruns (which then takes the new value: reported once), or
 * -EINVAL for a negative @num_entries or a NULL @wc.
 */
int dtm_ring_poll(void *ring, struct dtm_ring_state *st, int num_entries,
		  struct dtm_wc *wc);

/* Does the ring hold completions not consumed yet (producer != consumer)? */
int dtm_ring_pending(const void *ring);

#endif /* DPUSIM_LIB_DTM_RING_H */
