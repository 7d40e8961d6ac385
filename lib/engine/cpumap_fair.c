// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The producers' fair share of a shared worker ring (docs/design/cpumap.md,
 * "The fair share"): called by bq_flush() (cpumap.c) before each bulk that
 * goes into a multi-producer ring, unless UCM_CPUMAP_F_NO_FAIR. Each
 * producer counts its entries in a window of the ring's recent ones, and
 * marks in the worker when it last sent (fair_mark[], its slot's), so
 * that the share divides among the producers that send into the ring, not
 * among all that exist.
 */
#include "engine/cpumap_priv.h"

/* The producers sending into worker @wk's @ring lately, @prod among
 * them: those whose mark is within FAIR_RECENT rings before @head, or
 * within a ring after it (one that moved the head on since our read). */
static uint32_t fair_senders(const struct ucm_cpumap_producer *prod,
			     const struct ucm_worker *wk, const struct ucm_ring *ring,
			     uint32_t head)
{
	uint64_t slots = __atomic_load_n(&prod->map->fair_slots, __ATOMIC_RELAXED);
	uint32_t n = 1, age;

	while (slots) {
		int s = __builtin_ctzll(slots);

		slots &= slots - 1;
		age = head - READ_ONCE(wk->fair_mark[s]);
		if (s != prod->fair_slot &&
		    (age < FAIR_RECENT * ring->size || -age <= ring->size))
			n++;
	}
	return n;
}

/*
 * The fair share (UCM_CPUMAP_F_NO_FAIR): whether @prod, about to put a
 * bulk into worker @w's @ring, is over its share while the ring fills:
 * more than 1 / (the producers sending into it lately) of the window's
 * entries. Alone, a producer never is (mine <= total). A producer that
 * tries counts as a sender though the full ring took none of its bulks:
 * the others are then over their share, and make room for it. The
 * ring's counters are read relaxed, a view that may be a moment old: a
 * threshold, not a bound, and the reservation that follows still checks
 * for room. bq_flush() counts what went in; the window
 * halves at each ring's worth.
 */
bool ucm_cpumap_fair_over(struct ucm_cpumap_producer *prod, uint32_t w,
			  const struct ucm_ring *ring)
{
	struct ucm_fair *f = &prod->fair[w];
	struct ucm_worker *wk = prod->map->workers[w];
	/* ucm_ring__count()'s order: cons.tail first (acquire, pairs with
	 * the worker's C2), so that the fill level cannot wrap. */
	uint32_t cons = __atomic_load_n(&ring->cons.tail, __ATOMIC_ACQUIRE);
	uint32_t head = __atomic_load_n(&ring->prod.head, __ATOMIC_RELAXED);
	uint32_t used = head - cons, total = head - f->head0;

	if (total >= ring->size) {
		f->head0 = head - total / 2;
		f->mine /= 2;
		total -= total / 2;
	}
	/* We send here: said to the others now and then. */
	if (prod->fair_slot >= 0 && head - f->mark >= FAIR_MARK_STEP(ring->size)) {
		f->mark = head;
		WRITE_ONCE(wk->fair_mark[prod->fair_slot], head);
	}
	/* Room enough for everyone, or within our share: in it goes. The
	 * senders are counted only here, with the ring three quarters full:
	 * the worker is behind, and the producer has the time. */
	if (used < ring->size / 4 * UCM_CPUMAP_FAIR_FILL || !f->mine)
		return false;
	return (uint64_t)f->mine * fair_senders(prod, wk, ring, head) > total;
}
