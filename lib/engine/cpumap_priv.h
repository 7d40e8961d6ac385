/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The cpumap's own structures and the helpers its files share, for them
 * alone: cpumap.c (the hot path: bulk queues, flush, the worker loop),
 * cpumap_lat.h (the latency stamps, on that path too) and cpumap_ctl.c
 * (create, start, stop, destroy, producers, statistics). What the layers
 * above use is in cpumap_internal.h.
 *
 * Calls between the files go one way, cpumap_ctl.c to cpumap.c (the
 * worker thread's entry, the kick; the public flush). What both files use
 * of the worker's per-batch code is static, here or in cpumap_lat.h, so
 * that the hot path calls nothing across files.
 */
#ifndef UCM_CPUMAP_PRIV_H
#define UCM_CPUMAP_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/pool_internal.h"
#include "engine/chain.h"
#include "engine/cpumap_internal.h"
#include "engine/wake.h"
#include "ucpumap/cpumap.h"

/* The most a worker holds for its sink: a full hold and one more batch. */
#define HELD_MAX	(UCM_CPUMAP_HOLD_MAX + UCM_CPUMAP_BATCH - 1)
/* Dequeue times of bulks whose packets are not gone yet (cpumap_lat.h): at
 * most one per packet held, and a batch's worth more (a stamp without
 * packets, all dropped by a full ring, is done at once:
 * worker_lat_dequeue()). */
#define PEND_MAX	(HELD_MAX + UCM_CPUMAP_BATCH)
/* An inline producer runs a whole bulk queue as one worker batch. */
_Static_assert(UCM_CPUMAP_BULK_SIZE <= UCM_CPUMAP_BATCH, "a bulk fits a batch");

/* Tags of the pre-wake's epoll events. */
#define EP_WAKE		0u	/* wake.fd: a kick */
#define EP_ARRIVAL	1u	/* an fd given to ucm_cpumap__prewake_on() */

/* The producers a fair share tells apart: one slot each (map->fair_slots);
 * those past it are not counted by the others (they still share). As many
 * as a datapath has queues. */
#define UCM_CPUMAP_FAIR_SLOTS	64
/* A producer refreshes its mark in a ring each eighth of the ring's
 * entries: one store per 256 entries of the default ring, not per bulk. */
#define FAIR_MARK_STEP(size)	((size) / 8)
/* A producer is among the ring's senders when its mark is within this
 * many rings' worth of entries: a light queue at 10 kpps beside a flood
 * of several Mpps flushes well within it; a queue without traffic, or
 * whose RX thread gave up, drops out. */
#define FAIR_RECENT		8

/*
 * Concurrency contract of struct ucm_worker
 *  - ring: MPSC; producers flush bulks into it, only this worker consumes.
 *    SPSC with UCM_CPUMAP_F_ONE_PRODUCER: producer_create keeps a second
 *    producer out, so one thread flushes at a time (a producer is used
 *    by one thread at a time, and a new one follows a destroy). NULL
 *    with UCM_CPUMAP_F_LANES.
 *  - lane[]: UCM_CPUMAP_F_LANES: SPSC rings, lane[l] flushed into by the
 *    producer that holds lane l (one at a time, as for ONE_PRODUCER's
 *    ring), consumed by this worker. Each is set once by producer
 *    create, under map->lock, before map->nlanes covers it (L1, release;
 *    the worker's L2, acquire), and freed with the worker. lane_cur,
 *    lane_prev, lane_stamp[]: the worker's own.
 *  - wake: the worker sleeps on it, producers and stop kick it (wake.h's
 *    contract). wake.fd is an eventfd when the sink sleeps on its own fds
 *    (ops->wait), which then drains it (the worker does when the sink has
 *    UCM_SINK_F_POLL_WAKE), or with a pre-wake (in epfd; edge-triggered
 *    and never read when no sink polls the set); else -1: the futex on
 *    wake.seq.
 *  - epfd: the pre-wake's epoll set (wake.fd and the arrival fds), or -1.
 *    The worker waits on it, or the sink's wait() polls it;
 *    ucm_cpumap__prewake_on() adds fds from the control thread
 *    (epoll_ctl() is safe beside a wait).
 *  - stop: written once by stop (X1, release), read by the worker (X2,
 *    X3, acquire).
 *  - running: written once by the worker (R1, release), read by create
 *    (R2, acquire).
 *  - stats: written by the worker only (WRITE_ONCE), read by anyone
 *    (READ_ONCE); relaxed, no pair: nothing is published through them.
 *  - held, ret, pend: the worker's only (or its inline producer's thread).
 */
struct ucm_worker {
	struct ucm_ring *ring;
	struct ucm_cpumap *map;
	uint32_t idx;
	int cpu;
	pthread_t thread;
	int open_err;		/* the sink's open() result, for create */
	uint32_t running;	/* futex: 0 until the loop is about to start */

	struct ucm_wake wake __cacheline_aligned;
	uint32_t stop;

	/* Parsed packets not handed to the sink yet: one batch, or with
	 * UCM_CPUMAP_F_HOLD up to HOLD_MAX + BATCH - 1. Its own lines:
	 * producers hit the wake line at every flush. */
	struct ucm_frame_hdr *held[HELD_MAX] __cacheline_aligned;
	uint64_t held_base[HELD_MAX];
	uint32_t nheld;
	uint32_t nheld_chain;	/* of them, packets of several frames */

	/* Finished frames waiting to go home together (xdp_frame_bulk): one
	 * return per UCM_POOL_PUT_BULK frames. */
	uint64_t ret[UCM_POOL_PUT_BULK + HELD_MAX];
	uint32_t nret;

	/* When the stamped bulks not counted yet were dequeued; the first
	 * nfin of them are finished (worker_lat_done()). */
	uint64_t pend[PEND_MAX];
	uint32_t npend, nfin;
	/* A stamp that ended a batch: its bulk's descriptors come with the
	 * next one (0: none). */
	uint64_t stamp_next;
	/* UCM_CPUMAP_F_LANES: the lane to take from next, the one taken
	 * last (whose stamp stamp_next is) */
	uint32_t lane_cur, lane_prev;

	struct ucm_cpumap_worker_stats stats __cacheline_aligned;
	/*
	 * Time asleep, so that a reader also counts a sleep still going on:
	 * awake, the total shifted left by one; asleep, (total - the sleep's
	 * start) shifted left by one, with bit 0 set (a reader adds its own
	 * clock). One word, stored by the worker (relaxed, as STAT_ADD) at
	 * each sleep's start and end; its readers load it once. @slept is
	 * the worker's own copy of the total.
	 */
	uint64_t sleep_word;
	uint64_t slept;
	int epfd;
	/* The most any reader was given of the time asleep: a reader's clock
	 * may run past the worker's own read at a sleep's end (before its
	 * store), and a total must not go back (a counter in /metrics).
	 * Readers only, an atomic max (relaxed: the values alone matter);
	 * on its own line, away from the worker's. */
	uint64_t sleep_seen __cacheline_aligned;
	/* The fair share's marks: slot s, the ring's reservation count when
	 * producer s last flushed to it (refreshed each FAIR_MARK_STEP of
	 * the ring's). Written by that producer, read by the others (relaxed:
	 * a threshold, nothing published); the worker never looks. */
	uint32_t fair_mark[UCM_CPUMAP_FAIR_SLOTS] __cacheline_aligned;

	struct ucm_ring *lane[UCM_CPUMAP_MAX_LANES] __cacheline_aligned;
	/* Each lane's stamp_next while the worker takes from the others. */
	uint64_t lane_stamp[UCM_CPUMAP_MAX_LANES];
};

/*
 * Concurrency contract of struct ucm_cpumap: written by create and
 * read-only afterwards, but for the producer list, inline_held and the
 * lanes (under lock, on any thread that makes or destroys a producer) and
 * stopped (the control thread's; an inline producer used after the stop
 * reads it, relaxed, no pair: its thread is the stop's, or a misuse's).
 * The workers read it, never write it.
 */
struct ucm_cpumap {
	struct ucm_umem *umem;
	void *area;
	uint32_t frame_size;
	uint32_t flags;
	const struct ucm_sink_ops *sink;	/* &sink_ops, or NULL */
	struct ucm_sink_ops sink_ops;		/* the caller's, copied */
	void *sink_ctx;
	ucm_verdict_fn verdict;
	void *verdict_ctx;
	ucm_thread_fn worker_init;
	void *worker_init_ctx;
	struct ucm_txq **txqs;	/* UCM_VERDICT_TX: per worker, or NULL */
	uint32_t nworkers;
	uint64_t spin_ns;	/* a worker's look before it sleeps */
	struct ucm_worker **workers;

	pthread_mutex_t lock;	/* the producer list, inline_held */
	struct ucm_cpumap_producer *producers;
	/* The fair share's slots held by a producer (bit s): written under
	 * lock, read by the producers' fair share (relaxed, no pair: a
	 * threshold, nothing published). */
	uint64_t fair_slots;
	/* UCM_CPUMAP_F_INLINE: the workers a producer runs (bit w); a
	 * destroyed producer's goes to the next one made */
	uint64_t inline_held;
	bool stopped;		/* workers joined (control thread only) */
	uint32_t qsize;		/* a worker ring's entries, a lane's */
	/* UCM_CPUMAP_F_LANES: lanes held by a producer (bit l), under lock;
	 * lanes made so far, every worker's lane[0 .. nlanes - 1] set
	 * (written under lock, L1; read by the workers, L2). */
	uint64_t lanes_held;
	uint32_t nlanes;
};

/* One bulk queue is exactly one cache line of descriptors, with its
 * latency stamp (RING_STAMP) in the entry before them, one array, so that
 * one ring produce takes both without a copy; its fill count lives in the
 * producer's bq_count[] line with the others. */
struct ucm_bq {
	uint64_t pad_[UCM_CACHELINE / sizeof(uint64_t) - 1];
	uint64_t ent[1 + UCM_CPUMAP_BULK_SIZE];	/* the stamp, the descriptors */
} __cacheline_aligned;
_Static_assert(offsetof(struct ucm_bq, ent) + sizeof(uint64_t) == UCM_CACHELINE,
	       "descriptors on a line of their own");

/* The bulk's descriptors, after its stamp. */
static inline uint64_t *bq_desc(struct ucm_bq *bq)
{
	return bq->ent + 1;
}

/*
 * A producer's share of a worker ring's recent entries: the ring's
 * reservation count (prod.head) when the window began, the entries this
 * producer put in since, and the frames the share refused. Halved as the
 * window passes a ring's size, so the share follows the recent rate.
 * mark: what it last wrote into the worker's fair_mark[].
 */
struct ucm_fair {
	uint32_t head0, mine, mark;
	uint64_t shed;
};

/*
 * Concurrency contract of struct ucm_cpumap_producer: used by one thread
 * at a time (its RX thread); stats (whose drops are the ring-full ones:
 * the getter adds fair[].shed) and fair[].shed are written by it only
 * (WRITE_ONCE) and read by anyone (READ_ONCE), relaxed, no pair; the rest
 * of fair[] is its own.
 */
struct ucm_cpumap_producer {
	struct ucm_cpumap *map;
	struct ucm_pool *pool;
	struct ucm_cpumap_producer *next;
	uint64_t dirty;		/* bit w: bq[w] is not empty (the flush list) */
	/* The time stamped into this RX batch's bulks: read at its first
	 * bulk flush, kept until ucm_cpumap_producer__flush() ends it (one
	 * clock read per batch, not per bulk); flush_ns, the last one. */
	uint64_t now, flush_ns;
	int inline_w;		/* UCM_CPUMAP_F_INLINE: our worker, else -1 */
	int lane;		/* UCM_CPUMAP_F_LANES: our lane, else -1 */
	int fair_slot;		/* our fair_mark[] slot, else -1 */
	bool stopped;
	struct ucm_cpumap_enqueue_stats *stats;	/* one per worker */
	struct ucm_fair *fair;			/* one per worker */
	/* The ring each worker's bulks go into: its ring, or our lane in
	 * it; set at create, on the producer's own lines. */
	struct ucm_ring **ring;
	uint8_t bq_count[UCM_CPUMAP_MAX_WORKERS] __cacheline_aligned;
	struct ucm_bq bq[];
};

/* Producer side: the later frames of the chains among @n descriptors
 * dropped into @pool (each chain's first frame is the caller's). */
/* cpumap_chain.c: a caller's chain list checked (the enqueue), and a
 * chain's later frames with its worker: taken from the ring (return: the
 * bytes in the first frame), lent to the verdict's TX channel (false: it
 * takes fewer frames a packet), sent home on a drop. */
bool ucm_cpumap_chain_list_ok(const struct ucm_cpumap *map, const struct ucm_pool *pool,
			      uint64_t addr, uint64_t base, uint32_t len);
uint32_t ucm_cpumap_chain_take(struct ucm_worker *w, uint64_t base);
bool ucm_cpumap_chain_lend(struct ucm_worker *w, uint64_t base, const struct ucm_txq *t);
void ucm_cpumap_chain_ret(struct ucm_worker *w, uint64_t base);

/* An inline producer's staged packets (UCM_LOC_BQ) home undelivered,
 * counted as the worker's drops (UCM_DROP_SINK), said with @why. */
void ucm_cpumap_inline_unrun(struct ucm_cpumap_producer *prod, const char *why);

static inline void chain_drop_frags(const struct ucm_cpumap *map, struct ucm_pool *pool,
				    const uint64_t *desc, uint32_t n)
{
	uint64_t frag[UCM_CHAIN_MAX - 1];
	uint32_t k;

	for (uint32_t i = 0; i < n; i++) {
		if (likely(!(desc[i] & UCM_DESC_CHAIN)))
			continue;
		k = ucm_chain_frames(map->area, ucm_umem_desc_base(map->umem, desc[i]),
				     map->frame_size - 1, frag);
		ucm_pool_recycle_direct(pool, frag, k, UCM_LOC_CHAIN);
	}
}

/* The frames (their base addresses) of @n descriptors. */
static inline void desc_to_base(const struct ucm_cpumap *map, const uint64_t *desc,
				uint64_t *base, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		base[i] = ucm_umem_desc_base(map->umem, desc[i]);
}

/* UCM_CPUMAP_F_LANES: lanes every worker has (0 without). L2: pairs with
 * L1 in producer_lane_get() (cpumap_ctl.c): lane[l] below it is set. */
static inline uint32_t map_nlanes(const struct ucm_cpumap *map)
{
	return __atomic_load_n(&map->nlanes, __ATOMIC_ACQUIRE);
}

/* The finished frames home to their pools, in one bulk. */
static inline void worker_return(struct ucm_worker *w)
{
	struct ucm_cpumap *map = w->map;

	if (!w->nret)
		return;
	ucm_umem_put_bulk_from(map->umem, w->ret, w->nret, UCM_LOC_WORKER,
			       map->flags & UCM_CPUMAP_F_NO_RECYCLE);
	w->nret = 0;
}

/* Queue finished frames for their pools, returning in bulk. */
static inline void worker_ret_add(struct ucm_worker *w, const uint64_t *base, uint32_t n)
{
	if (w->nret + n > ARRAY_SIZE(w->ret))
		worker_return(w);
	memcpy(&w->ret[w->nret], base, n * sizeof(*base));
	w->nret += n;
	if (w->nret >= UCM_POOL_PUT_BULK)
		worker_return(w);
}

/* The later frames of the chains among the @n packets @hdr (frames
 * @base) home, before their first frames: the list lies in those. */
static inline void worker_ret_chains(struct ucm_worker *w, struct ucm_frame_hdr *const *hdr,
				     const uint64_t *base, uint32_t n)
{
	const struct ucm_cpumap *map = w->map;
	uint64_t frag[UCM_CHAIN_MAX - 1];

	for (uint32_t i = 0; i < n; i++)
		if (hdr[i]->flags & UCM_FRAME_F_CHAIN)
			worker_ret_add(w, frag, ucm_chain_frames(map->area, base[i],
								 map->frame_size - 1, frag));
}

/* cpumap.c: the worker thread's loop, and the kick that wakes a worker
 * after work (frames, or the stop) was published. */
void *ucm_cpumap_worker_main(void *arg);
bool ucm_cpumap_worker_kick(struct ucm_worker *wk);

/* cpumap_fair.c: whether @prod is over its fair share of worker @w's
 * shared @ring, which is filling: its bulk is then refused. */
bool ucm_cpumap_fair_over(struct ucm_cpumap_producer *prod, uint32_t w,
			  const struct ucm_ring *ring);

#endif /* UCM_CPUMAP_PRIV_H */
