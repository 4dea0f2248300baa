// SPDX-License-Identifier: MIT
/*
 * model.c - the DPU pipeline model (model.h).  A report costs O(1) while
 * at most @issue_interval tasklets exist (none can then be slowed by the
 * others), else O(tasklets) per change of rate it crosses: the rate
 * changes only where another tasklet's known state does (its idle
 * interval, its end).
 */
#include "model.h"

#include <string.h>

#define FRAC 20

int dpurt_model_init(struct dpurt_model *m, const struct dpurt_model_params *p,
		     unsigned int ntasklets)
{
	unsigned int r;

	if (!m || !p || !p->issue_interval || !ntasklets ||
	    ntasklets > DPURT_MODEL_MAX_TASKLETS)
		return -1;
	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->n = ntasklets;
	for (r = 1; r <= ntasklets; r++) {
		uint64_t step = r > p->issue_interval ? r : p->issue_interval;

		/* rounded up: a whole instruction's worth is never short */
		m->recip[r] = ((1ULL << FRAC) + step - 1) / step;
	}
	return 0;
}

/* Does tasklet @j issue at cycle @y, as far as its reports tell? */
static bool issuing(const struct dpurt_model_tasklet *j, uint64_t y)
{
	if (j->done && y >= j->clock)
		return false;
	return !(j->idle_from <= y && y < j->idle_to);
}

/*
 * Tasklet @t issues @instr instructions from cycle @y while more than
 * @issue_interval tasklets exist: at each cycle the others' known states
 * give r, the tasklets issuing, and it progresses at 1 / max(issue_interval,
 * r) instructions a cycle.  r changes only where another tasklet's idle
 * interval begins or ends or where it is done; those changes before the
 * latest the segment can end (every tasklet issuing throughout) are swept
 * in order.  Progress is counted in 2^-FRAC instructions with the rates'
 * reciprocals (struct dpurt_model::recip), so that a change costs a
 * multiply, not a division.
 */
static uint64_t shared_issue(const struct dpurt_model *m, unsigned int t, uint64_t y,
			     uint64_t instr)
{
	/*
	 * A change: its cycle << 1 | 0 where one more tasklet issues from
	 * there on (an idle stretch ends), | 1 where one fewer does (an idle
	 * stretch begins, a tasklet is done); sorted as numbers, so that at
	 * one cycle the ends come first and r never drops below 1.
	 */
	uint64_t c[3 * DPURT_MODEL_MAX_TASKLETS], tmp;
	uint64_t horizon = y + instr * m->n, left = instr << FRAC;
	unsigned int j, k, nc = 0, r = 1;

	/*
	 * From the tasklet after @t round to the one before it: the order
	 * the others reported in (run.c's round robin), so that their
	 * changes come nearly sorted.
	 */
	for (j = t + 1 == m->n ? 0 : t + 1; j != t; j = j + 1 == m->n ? 0 : j + 1) {
		const struct dpurt_model_tasklet *o = &m->t[j];

		r += issuing(o, y);
		/* idle_to <= clock: a tasklet done is done after its idle stretch */
		if (o->idle_from > y && o->idle_from < horizon)
			c[nc++] = o->idle_from << 1 | 1;
		if (o->idle_to > y && o->idle_to < horizon)
			c[nc++] = o->idle_to << 1;
		if (o->done && o->clock > y && o->clock < horizon)
			c[nc++] = o->clock << 1 | 1;
	}
	/* insertion sort: a few changes */
	for (k = 1; k < nc; k++) {
		tmp = c[k];
		for (j = k; j > 0 && c[j - 1] > tmp; j--)
			c[j] = c[j - 1];
		c[j] = tmp;
	}
	for (k = 0; k < nc; k++) {
		uint64_t at = c[k] >> 1, done = (at - y) * m->recip[r];

		if (done >= left)
			break;
		left -= done;
		y = at;
		r = c[k] & 1 ? r - 1 : r + 1;
	}
	/* the rest at the last rate: cycles = left * step, rounded up */
	return y + ((left * (r > m->p.issue_interval ? r : m->p.issue_interval) +
		     ((1ULL << FRAC) - 1)) >> FRAC);
}

void dpurt_model_compute(struct dpurt_model *m, unsigned int t, uint64_t instr)
{
	struct dpurt_model_tasklet *me;

	if (t >= m->n || !instr)
		return;
	me = &m->t[t];
	me->instr += instr;
	if (m->n <= m->p.issue_interval || instr < DPURT_MODEL_SHORT)
		/*
		 * r <= issue_interval always: the tasklet's own limit rules.
		 * A short segment (the few instructions between two DMAs) is
		 * issued at that rate too: the sharing would change it by a
		 * few cycles and cost a pass over the others each time.
		 */
		me->clock += instr * m->p.issue_interval;
	else
		/* in parts that keep shared_issue()'s products in 64 bits */
		for (uint64_t part; instr; instr -= part) {
			part = instr < (1ULL << 32) ? instr : 1ULL << 32;
			me->clock = shared_issue(m, t, me->clock, part);
		}
}

/* ---- busy spans ------------------------------------------------------ */

/* the first span of @s ending after @at */
static unsigned int span_after(const struct dpurt_model_spans *s, uint64_t at)
{
	unsigned int lo = 0, hi = s->n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (s->span[mid].to > at)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static bool span_full(const struct dpurt_model_span *sp)
{
	return sp->busy >= sp->to - sp->from;
}

uint64_t dpurt_model_free_at(const struct dpurt_model_spans *s, uint64_t at)
{
	unsigned int k;

	for (k = span_after(s, at); k < s->n && s->span[k].from <= at && span_full(&s->span[k]);
	     k++)
		at = s->span[k].to;
	return at;
}

/* No tasklet can ask for a cycle before this: the least clock of those not done. */
static uint64_t model_floor(const struct dpurt_model *m)
{
	uint64_t floor = UINT64_MAX;
	unsigned int j;

	for (j = 0; j < m->n; j++)
		if (!m->t[j].done && m->t[j].clock < floor)
			floor = m->t[j].clock;
	return floor;
}

/* Remove spans [k, k + count). */
static void span_remove(struct dpurt_model_spans *s, unsigned int k, unsigned int count)
{
	memmove(&s->span[k], &s->span[k + count], (s->n - k - count) * sizeof(s->span[0]));
	s->n -= count;
}

/* Join spans [k, k + count] into span k. */
static void span_join(struct dpurt_model_spans *s, unsigned int k, unsigned int count)
{
	unsigned int i;

	for (i = 1; i <= count; i++)
		s->span[k].busy += s->span[k + i].busy;
	s->span[k].to = s->span[k + count].to;
	span_remove(s, k + 1, count);
}

/*
 * Make room in a full @s: drop the spans no tasklet can reach any more
 * (they come first), else join the two closest into one partly busy span.
 */
static void span_room(const struct dpurt_model *m, struct dpurt_model_spans *s)
{
	uint64_t floor = model_floor(m), best = UINT64_MAX;
	unsigned int old = 0, i, join = 0;

	while (old < s->n && s->span[old].to <= floor)
		old++;
	if (old) {
		span_remove(s, 0, old);
		return;
	}
	for (i = 0; i + 1 < s->n; i++)
		if (s->span[i + 1].from - s->span[i].to < best) {
			best = s->span[i + 1].from - s->span[i].to;
			join = i;
		}
	span_join(s, join, 1);
}

uint64_t dpurt_model_fill(const struct dpurt_model *m, struct dpurt_model_spans *s,
			  uint64_t at, uint64_t len)
{
	struct dpurt_model_span *sp, *last = s->n ? &s->span[s->n - 1] : NULL;
	uint64_t cursor = at, left = len, end;
	unsigned int k, first, n;

	if (!len)
		return dpurt_model_free_at(s, at);
	/* after every span, the common case: join the last or follow it */
	if (!last || at >= last->to) {
		if (last && at == last->to) {
			last->to += len;
			last->busy += len;
			return last->to;
		}
		if (s->n == DPURT_MODEL_SPANS)
			span_room(m, s);
		s->span[s->n++] = (struct dpurt_model_span){ at, at + len, len };
		return at + len;
	}
	if (s->n == DPURT_MODEL_SPANS)
		span_room(m, s);
	/*
	 * From @at on: an idle stretch gives its cycles, a span what it has
	 * not used, spread evenly over it (a joined span: span_room()).
	 */
	first = span_after(s, at);
	for (k = first;; k++) {
		uint64_t len_k, idle_k, avail;

		sp = &s->span[k];
		if (k == s->n || sp->from > cursor) {
			if (k == s->n || sp->from - cursor >= left) {
				end = cursor + left;
				break;
			}
			left -= sp->from - cursor;
			cursor = sp->from;
		}
		len_k = sp->to - sp->from;
		idle_k = span_full(sp) ? 0 : len_k - sp->busy;
		avail = (sp->to - cursor) * idle_k / len_k;
		if (idle_k && avail >= left) {
			end = cursor + (left * len_k + idle_k - 1) / idle_k;
			break;
		}
		left -= avail;
		cursor = sp->to;
	}
	/* [at, end) and the spans it meets are one span now */
	for (n = 0; first + n < s->n && s->span[first + n].from < end; n++)
		;
	sp = &s->span[first];
	if (!n) {
		memmove(sp + 1, sp, (s->n - first) * sizeof(*sp));
		*sp = (struct dpurt_model_span){ at, end, len };
		s->n++;
		return end;
	}
	if (n > 1)
		span_join(s, first, n - 1);
	if (sp->from > at)
		sp->from = at;
	if (sp->to < end)
		sp->to = end;
	sp->busy += len;
	return end;
}

void dpurt_model_dma(struct dpurt_model *m, unsigned int t, uint32_t bytes)
{
	struct dpurt_model_tasklet *me;
	uint64_t len, end;

	if (t >= m->n)
		return;
	me = &m->t[t];
	len = (uint64_t)((bytes + 7ULL) / 8) * m->p.dma_cycles_per_8b;
	end = dpurt_model_fill(m, &m->engine, me->clock, len);
	me->idle_from = me->clock;
	me->clock = end + m->p.dma_latency;
	me->idle_to = me->clock;
}

void dpurt_model_until(struct dpurt_model *m, unsigned int t, uint64_t cycle)
{
	struct dpurt_model_tasklet *me;

	if (t >= m->n)
		return;
	me = &m->t[t];
	if (cycle <= me->clock)
		return;
	me->idle_from = me->clock;
	me->idle_to = cycle;
	me->clock = cycle;
}

void dpurt_model_spin(struct dpurt_model *m, unsigned int t, uint64_t cycle)
{
	if (t < m->n && cycle > m->t[t].clock)
		m->t[t].clock = cycle;
}

void dpurt_model_done(struct dpurt_model *m, unsigned int t)
{
	if (t < m->n)
		m->t[t].done = true;
}

uint64_t dpurt_model_end(const struct dpurt_model *m)
{
	uint64_t end = 0;
	unsigned int j;

	for (j = 0; j < m->n; j++)
		if (m->t[j].clock > end)
			end = m->t[j].clock;
	return end;
}

uint64_t dpurt_model_instructions(const struct dpurt_model *m)
{
	uint64_t n = 0;
	unsigned int j;

	for (j = 0; j < m->n; j++)
		n += m->t[j].instr;
	return n;
}
