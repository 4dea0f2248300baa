// SPDX-License-Identifier: MIT
/*
 * model.c - the DPU pipeline model (model.h).  A report costs O(1) while
 * at most @issue_interval tasklets exist (none can then be slowed by the
 * others), else O(tasklets log tasklets): the rate changes only where
 * another tasklet's known state does (its idle interval, its end).
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

int dpurt_model_init(struct dpurt_model *m, const struct dpurt_model_params *p,
		     unsigned int ntasklets)
{
	if (!m || !p || !p->issue_interval || !ntasklets ||
	    ntasklets > DPURT_MODEL_MAX_TASKLETS)
		return -1;
	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->n = ntasklets;
	return 0;
}

/* Does tasklet @j issue at cycle @y, as far as its reports tell? */
static bool issuing(const struct dpurt_model_tasklet *j, uint64_t y)
{
	if (j->done && y >= j->clock)
		return false;
	return !(j->idle_from <= y && y < j->idle_to);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void dpurt_model_compute(struct dpurt_model *m, unsigned int t, uint64_t instr)
{
	struct dpurt_model_tasklet *me;
	uint64_t bp[2 * DPURT_MODEL_MAX_TASKLETS + 1];
	uint64_t y, left = instr;
	unsigned int j, nbp = 0, b = 0;

	if (t >= m->n || !instr)
		return;
	me = &m->t[t];
	me->instr += instr;
	y = me->clock;
	if (m->n <= m->p.issue_interval) {
		/* r <= issue_interval always: the tasklet's own limit rules */
		me->clock = y + instr * m->p.issue_interval;
		return;
	}
	/* the cycles after @y where another tasklet starts or stops issuing */
	for (j = 0; j < m->n; j++) {
		const struct dpurt_model_tasklet *o = &m->t[j];

		if (j == t)
			continue;
		if (o->done && o->clock > y)
			bp[nbp++] = o->clock;
		if (o->idle_from > y)
			bp[nbp++] = o->idle_from;
		if (o->idle_to > y)
			bp[nbp++] = o->idle_to;
	}
	qsort(bp, nbp, sizeof(bp[0]), cmp_u64);
	bp[nbp] = UINT64_MAX;
	while (left) {
		uint64_t r = 1, step, room, q;

		while (bp[b] <= y)
			b++;
		for (j = 0; j < m->n; j++)
			if (j != t && issuing(&m->t[j], y))
				r++;
		step = r > m->p.issue_interval ? r : m->p.issue_interval;
		room = bp[b] - y;
		q = room / step;
		if (q >= left) {
			y += left * step;
			break;
		}
		if (!q)
			q = 1;	/* the instruction that straddles the change */
		y += q * step;
		left -= q;
	}
	me->clock = y;
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
