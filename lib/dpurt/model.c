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
	/* a change: its cycle << 5 | the tasklet, sorted as numbers */
	uint64_t c[3 * DPURT_MODEL_MAX_TASKLETS], tmp;
	uint64_t horizon = y + instr * m->n, left = instr << FRAC;
	unsigned int j, k, nc = 0, r = 1;
	bool st[DPURT_MODEL_MAX_TASKLETS];	/* each other one issues at @y */

	/*
	 * From the tasklet after @t round to the one before it: the order
	 * the others reported in (run.c's round robin), so that their
	 * changes come nearly sorted.
	 */
	for (j = t + 1 == m->n ? 0 : t + 1; j != t; j = j + 1 == m->n ? 0 : j + 1) {
		const struct dpurt_model_tasklet *o = &m->t[j];

		st[j] = issuing(o, y);
		r += st[j];
		if (o->done && o->clock > y && o->clock < horizon)
			c[nc++] = o->clock << 5 | j;
		if (o->idle_from > y && o->idle_from < horizon)
			c[nc++] = o->idle_from << 5 | j;
		if (o->idle_to > y && o->idle_to < horizon)
			c[nc++] = o->idle_to << 5 | j;
	}
	/* insertion sort: a few changes */
	for (k = 1; k < nc; k++) {
		tmp = c[k];
		for (j = k; j > 0 && c[j - 1] > tmp; j--)
			c[j] = c[j - 1];
		c[j] = tmp;
	}
	for (k = 0; k < nc; k++) {
		uint64_t at = c[k] >> 5, done = (at - y) * m->recip[r];
		unsigned int who = c[k] & 31;
		bool now;

		if (done >= left)
			break;
		left -= done;
		y = at;
		now = issuing(&m->t[who], y);
		r = r + now - st[who];
		st[who] = now;
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

void dpurt_model_dma(struct dpurt_model *m, unsigned int t, uint32_t bytes)
{
	struct dpurt_model_tasklet *me;
	uint64_t start;

	if (t >= m->n)
		return;
	me = &m->t[t];
	start = me->clock > m->engine_free ? me->clock : m->engine_free;
	m->engine_free = start + (uint64_t)((bytes + 7) / 8) * m->p.dma_cycles_per_8b;
	me->idle_from = me->clock;
	me->clock = m->engine_free + m->p.dma_latency;
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
