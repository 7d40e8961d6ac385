/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cpumap's latency stamps, and the worker's wait_hist and sink_hist
 * made from them.
 *
 * A bulk's stamp is an entry of its own in the worker ring, just before
 * the bulk's descriptors, holding the producer's flush time (ucm_now_ns(),
 * its low 47 bits): one clock read per flush and two per worker batch, not
 * per packet. Not in the bulk's first frame: that line would cross from
 * the producer's CPU to the worker's for every bulk (docs/experiments.md,
 * "The latency stamps without the frame's write"). Bit 47 tells a stamp from a
 * descriptor: it is above every UMEM handle and below the length. A wait
 * is read modulo 2^47 ns (39 hours).
 *
 * The producer writes the stamp (bq_flush(), cpumap.c); the functions
 * here are the worker's side, on its thread (or its inline producer's),
 * once a batch or more. They are static inline for the files that call
 * them (cpumap.c; cpumap_ctl.c at an inline producer's stop), so the hot
 * path makes no call across files. worker_lat_record() and
 * worker_lat_stamp() are static but out of line: each has several callers
 * on the worker's path, and inlined they would make its loop a third
 * longer.
 */
#ifndef UCM_CPUMAP_LAT_H
#define UCM_CPUMAP_LAT_H

#include "engine/cpumap_priv.h"

#define RING_STAMP	(1ull << 47)
#define STAMP_MASK	(RING_STAMP - 1)
_Static_assert(UCM_UMEM_MAX_SIZE <= RING_STAMP, "the stamp bit is not an address bit");
_Static_assert(RING_STAMP < 1ull << UCM_DESC_LEN_SHIFT, "the stamp bit is not a length bit");
/* A worker takes one entry more than a batch: every run of entries that
 * long holds a stamp, so at most a batch of descriptors. */
#define RING_TAKE_MAX	(UCM_CPUMAP_BATCH + 1)

/*
 * The stamped bulks dequeued so far are finished (their packets went to
 * the sink, a channel or home). Their sink_hist waits for the worker's
 * next clock read, at its next dequeue or as it goes idle: one read per
 * batch, and a time no earlier than the true one by the loop's turn.
 */
static inline void worker_lat_done(struct ucm_worker *w)
{
	w->nfin = w->npend;
}

/* Count the finished bulks as done at @now. */
static __noinline __maybe_unused void worker_lat_record(struct ucm_worker *w, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < w->nfin; i++) {
		STAT_ADD(w->stats.sink_hist[ucm_lat_bucket(now - w->pend[i])], 1);
		STAT_ADD(w->stats.sink_ns, now - w->pend[i]);
	}
	memmove(w->pend, w->pend + w->nfin, (w->npend - w->nfin) * sizeof(w->pend[0]));
	w->npend -= w->nfin;
	w->nfin = 0;
}

/* A bulk's stamp taken from the ring at @now: count its wait, keep its
 * dequeue time for sink_hist; or with @gone (a full ring took the stamp
 * without its packets) count a sink time of none too. */
static __noinline __maybe_unused void worker_lat_stamp(struct ucm_worker *w, uint64_t stamp,
						       uint64_t now, bool gone)
{
	uint64_t dt = (now - stamp) & STAMP_MASK;

	/* One clock on every CPU: a stamp from the future cannot be, and
	 * counts as no wait. */
	if (dt > STAMP_MASK / 2)
		dt = 0;
	STAT_ADD(w->stats.wait_hist[ucm_lat_bucket(dt)], 1);
	STAT_ADD(w->stats.wait_ns, dt);
	if (gone) {
		STAT_ADD(w->stats.sink_hist[ucm_lat_bucket(0)], 1);
		return;
	}
	/* Full only when a hold waits while whole bulks were dropped (an
	 * inline bq_flush() records the finished ones first): the oldest
	 * counts as done now. */
	if (w->npend == PEND_MAX) {
		w->nfin = 1;
		worker_lat_record(w, now);
	}
	w->pend[w->npend++] = now;
}

/*
 * Entries from the ring: one clock read, for the bulks finished before
 * them and those they bring. Takes the stamps out and leaves the
 * descriptors at the front of @desc. Return: how many descriptors.
 */
static inline uint32_t worker_lat_dequeue(struct ucm_worker *w, uint64_t *desc,
					  uint32_t n)
{
	uint64_t now = 0;
	uint32_t i, k = 0;

	if (w->nfin || w->stamp_next) {
		now = ucm_now_ns();
		worker_lat_record(w, now);
	}
	if (w->stamp_next) {
		worker_lat_stamp(w, w->stamp_next, now, desc[0] & RING_STAMP);
		w->stamp_next = 0;
	}
	for (i = 0; i < n; i++) {
		if (!(desc[i] & RING_STAMP)) {
			desc[k++] = desc[i];
			continue;
		}
		/* Last: its bulk is dequeued with the next batch (or is a
		 * stamp alone, worker_idle()). */
		if (i == n - 1) {
			w->stamp_next = desc[i];
			break;
		}
		if (!now)
			now = ucm_now_ns();
		/* Another stamp next: a full ring took this one without
		 * its packets. */
		worker_lat_stamp(w, desc[i], now, desc[i + 1] & RING_STAMP);
	}
	return k;
}

#endif /* UCM_CPUMAP_LAT_H */
