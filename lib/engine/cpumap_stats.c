// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cpumap's queries and statistics' readers, on any thread (cpumap.h):
 * each reads what the workers and producers publish (WRITE_ONCE, relaxed,
 * cpumap_priv.h's contracts), never writes it but for the sleep time's
 * high mark. The control path is cpumap_ctl.c, the hot path cpumap.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/cpumap_priv.h"

uint32_t ucm_cpumap__nworkers(const struct ucm_cpumap *map)
{
	return map ? map->nworkers : 0;
}

int ucm_cpumap__worker_cpu(const struct ucm_cpumap *map, uint32_t w)
{
	if (!map || w >= map->nworkers)
		return ucm_err(-EINVAL);
	return map->workers[w]->cpu;
}

/* The worker's time asleep now, a sleep going on included (sleep_word),
 * never less than a reader was given before (sleep_seen). */
static uint64_t sleep_read(struct ucm_worker *w)
{
	uint64_t x = READ_ONCE(w->sleep_word), v, seen;

	v = !(x & 1) ? x >> 1 : (uint64_t)((int64_t)(x & ~1ull) / 2) + ucm_now_ns();
	seen = __atomic_load_n(&w->sleep_seen, __ATOMIC_RELAXED);
	while (v > seen && !__atomic_compare_exchange_n(&w->sleep_seen, &seen, v, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return v > seen ? v : seen;
}

int ucm_cpumap_worker_look(const struct ucm_cpumap *map, uint32_t w, uint32_t *taken,
			   bool *waiting)
{
	const struct ucm_worker *wk;
	uint32_t l, n;

	if (!map || w >= map->nworkers)
		return -EINVAL;
	if (map->flags & UCM_CPUMAP_F_INLINE)
		return -ENOENT;
	wk = map->workers[w];
	*taken = 0;
	*waiting = false;
	if (wk->ring) {
		*taken = __atomic_load_n(&wk->ring->cons.tail, __ATOMIC_RELAXED);
		*waiting = ucm_ring__count(wk->ring) != 0;
	}
	n = map_nlanes(map);
	for (l = 0; l < n; l++) {
		*taken += __atomic_load_n(&wk->lane[l]->cons.tail, __ATOMIC_RELAXED);
		*waiting |= ucm_ring__count(wk->lane[l]) != 0;
	}
	return 0;
}

int ucm_cpumap__worker_stats(const struct ucm_cpumap *map, uint32_t w,
			     struct ucm_cpumap_worker_stats *st, size_t sz)
{
	struct ucm_cpumap_worker_stats o = {};	/* reasons past UCM_DROP__MAX read 0 */
	const struct ucm_cpumap_worker_stats *s;
	uint32_t r;

	if (!map || w >= map->nworkers || !st || !sz)
		return ucm_err(-EINVAL);
	s = &map->workers[w]->stats;
	o.processed = READ_ONCE(s->processed);
	o.tx = READ_ONCE(s->tx);
	o.drops = READ_ONCE(s->drops);
	o.sched = READ_ONCE(s->sched);
	o.xmits = READ_ONCE(s->xmits);
	o.flush_empty = READ_ONCE(s->flush_empty);
	o.flush_full = READ_ONCE(s->flush_full);
	o.sleep_ns = sleep_read(map->workers[w]);
	for (r = 0; r < UCM_DROP__MAX; r++)
		o.drop_reason[r] = READ_ONCE(s->drop_reason[r]);
	for (r = 0; r < UCM_LAT_BUCKETS; r++) {
		o.wait_hist[r] = READ_ONCE(s->wait_hist[r]);
		o.sink_hist[r] = READ_ONCE(s->sink_hist[r]);
	}
	o.wait_ns = READ_ONCE(s->wait_ns);
	o.sink_ns = READ_ONCE(s->sink_ns);
	o.prewakes = READ_ONCE(s->prewakes);
	ucm_stats_out(st, sz, &o, sizeof(o));
	return 0;
}

int ucm_cpumap_producer__enqueue_stats(const struct ucm_cpumap_producer *prod,
				       uint32_t w,
				       struct ucm_cpumap_enqueue_stats *st,
				       size_t sz)
{
	struct ucm_cpumap_enqueue_stats o = {};
	const struct ucm_cpumap_enqueue_stats *s;

	if (!prod || w >= prod->map->nworkers || !st || !sz)
		return ucm_err(-EINVAL);
	s = &prod->stats[w];
	o.processed = READ_ONCE(s->processed);
	o.events = READ_ONCE(s->events);
	o.wakeups = READ_ONCE(s->wakeups);
	/* Counted apart, each only grows: so does their sum, and so does
	 * the ring-full part a reader takes as drops less shed. */
	o.shed = READ_ONCE(prod->fair[w].shed);
	o.drops = READ_ONCE(s->drops) + o.shed;
	ucm_stats_out(st, sz, &o, sizeof(o));
	return 0;
}

uint64_t ucm_cpumap_producer__shed(const struct ucm_cpumap_producer *prod, uint32_t w)
{
	if (!prod || w >= prod->map->nworkers)
		return 0;
	return READ_ONCE(prod->fair[w].shed);
}
