// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cpumap: bulk queues, worker rings and worker threads
 * (kernel/bpf/cpumap.c's role). This file is its hot path, the producers'
 * enqueue and flush and the worker loop; cpumap_ctl.c is the control path
 * (create, stop, destroy, statistics), cpumap_chain.c the packets of
 * several frames, cpumap_fair.c the producers' fair
 * share of a shared ring, cpumap_lat.h the latency stamps, cpumap_priv.h
 * the structures and their concurrency contracts.
 *
 * Producer side, per RX thread (struct ucm_cpumap_producer):
 *   enqueue - append the frame to the bulk queue of its worker; a full bulk
 *             queue is flushed first (bq_enqueue()).
 *   flush   - at the end of each RX batch, every non-empty bulk queue goes
 *             into its worker's ring (MPSC; SPSC with
 *             UCM_CPUMAP_F_ONE_PRODUCER; with UCM_CPUMAP_F_LANES the
 *             producer's own SPSC lane into that worker, the lanes taken
 *             in turn) with one reservation; what the
 *             ring cannot take is recycled directly into the producer's pool
 *             and counted as a drop; then each worker that sleeps is woken
 *             once (xdp_do_flush()).
 *
 * Worker side (ucm_cpumap_worker_main(), cpu_map_kthread_run()):
 *   consume up to 8 descriptors (9 ring entries with the latency stamps),
 *   build the descriptors in the frames' headroom, hand
 *   the batch to the sink, return the frames in bulk; when the ring is
 *   empty, flush the sink and sleep without losing a wakeup; when told to
 *   stop, drain the ring first. With UCM_CPUMAP_F_HOLD the parsed packets
 *   wait in the worker (our gro_node) and go to the sink together once 64
 *   are held or the ring runs empty, the kernel's GRO flush policy.
 *
 * Sleep/wake: lib/engine/wake.h's protocol, where the argument is written out.
 * The worker is the sleeper (worker_sleep()); producers (cpumap_wake())
 * and the stop (worker_stop(), cpumap_ctl.c) are the wakers:
 *
 *   worker                               producer (or stop)
 *   (W0) seq = LOAD-ACQUIRE wake.seq     publish frames: ring P2, release
 *   (W1) XCHG wake.state = SLEEPING,       (stop: (X1) STORE-RELEASE stop)
 *        seq_cst                         (W2) s = FETCH_OR wake.state,
 *   re-check the ring, then stop (X2):        KICKED, seq_cst
 *     frames or stop: do not sleep       if s == SLEEPING:
 *   futex_wait(wake.seq, seq), or the      (W4) wake.seq++ (release),
 *     sink's wait() on wake.fd (or on      futex_wake(wake.seq); or
 *     epfd: the pre-wake's set), or
 *     epoll_wait() with the pre-wake fds   write(wake.fd)
 *   (W3) XCHG wake.state = 0
 *
 * W1 pairs with W2, W0 with W4, X1 with X2 (and X3 in
 * ucm_cpumap_worker_main()).
 * Only the first producer to find the worker asleep makes a system call.
 * The stop is work like frames: stored before its W2, checked after W1.
 *
 * Pre-wake (UCM_CPUMAP_F_PREWAKE): the kernel wakes its cpumap kthread
 * from the softirq that received the packet; ours is woken by an RX
 * thread that must itself be woken first, two wake-ups in a row. So an
 * idle worker may also sleep on the fds the packets arrive on (the XSK
 * sockets, edge-triggered, in an epoll set with wake.fd): the kernel then
 * wakes it in the same softirq as the RX thread, and its wake-up (an IPI
 * to a sleeping CPU, tens of us in a VM) runs beside the RX thread's
 * instead of after it. The RX thread's kick usually lands before the
 * worker runs; a worker that runs first finds its ring empty and sleeps
 * again, on a CPU that is awake now (a guest's haltpoll, a shallow idle
 * state), so the kick that follows is cheap. No spin: a worker that
 * shares its CPU with the RX thread must not hold it. It is only a head
 * start: the protocol above still delivers every kick, so an arrival that
 * wakes nobody costs latency, never a lost wake-up. A sink that sleeps on
 * its own fds and only polls its wake fd (UCM_SINK_F_POLL_WAKE: the tun's,
 * whose two-way workers sleep in its io_uring) polls the epoll set
 * instead; the worker then takes the set's edges (epoll_wait() with no
 * wait) after each real sleep, or a stale edge would end every later poll
 * of the set while the RX ring holds packets.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>

#include "engine/cpumap_lat.h"
#include "engine/cpumap_priv.h"
#include "proto/proto.h"

/* The names of our places in the pool's messages. */
__attribute__((constructor)) static void cpumap_loc_names(void)
{
	ucm_frame_loc_name(UCM_LOC_BQ, "bulkq");
	ucm_frame_loc_name(UCM_LOC_WQ, "worker-ring");
	ucm_frame_loc_name(UCM_LOC_WORKER, "worker");
}

#ifdef UCM_DEBUG
void (*ucm_cpumap_test_hook)(uint32_t worker, enum ucm_cpumap_hook_point where);
/* H1: pairs with the release store of the test that sets the hook, so
 * the state the hook uses is set up before it is called. */
#define TEST_HOOK(w, where)						\
	do {								\
		void (*hook)(uint32_t, enum ucm_cpumap_hook_point) =	\
			__atomic_load_n(&ucm_cpumap_test_hook,		\
					__ATOMIC_ACQUIRE);		\
		if (hook)						\
			hook((w)->idx, where);				\
	} while (0)
#else
#define TEST_HOOK(w, where) do { } while (0)
#endif

static void worker_run_batch(struct ucm_worker *w, const uint64_t *desc,
			     uint32_t n);
static void worker_idle(struct ucm_worker *w);

/* After publishing work (frames, or the stop): wake the worker if it
 * sleeps and nobody has woken it yet. Return: true when this call did. */
bool ucm_cpumap_worker_kick(struct ucm_worker *wk)
{
	/* W2 (wake.h): pairs with W1 in worker_sleep() */
	int ret = ucm_wake_kick(&wk->wake);

	if (ret < 0)
		pr_warn("cpumap: worker %u: cannot wake it: %s\n", wk->idx,
			strerror(-ret));
	return ret > 0;
}

/* ---- producer side ---------------------------------------------------- */

/* After bq_flush() published the bulk (ring.h P2): the W2 that follows
 * makes sure a sleeping worker sees it. */
static void cpumap_wake(struct ucm_cpumap_producer *prod, uint32_t w)
{
	if (ucm_cpumap_worker_kick(prod->map->workers[w]))
		STAT_ADD(prod->stats[w].wakeups, 1);
}

/*
 * bq_flush_to_queue(): bulk queue @w to its worker, one ring reservation
 * for the whole bulk. Stamped unless the map has UCM_CPUMAP_F_NO_LATENCY:
 * nstamp, the bulk's stamp entries (1 or 0), go into the ring in front of
 * its descriptors, bq->ent[0] just before bq_desc() (an inline worker
 * counts its wait of none at once).
 */
void ucm_cpumap_inline_unrun(struct ucm_cpumap_producer *prod, const char *why)
{
	struct ucm_cpumap *map = prod->map;
	struct ucm_worker *wk = map->workers[prod->inline_w];
	const uint64_t *desc = bq_desc(&prod->bq[prod->inline_w]);
	uint32_t n = prod->bq_count[prod->inline_w];
	uint64_t base[UCM_CPUMAP_BULK_SIZE];

	if (!n)
		return;
	pr_warn("cpumap: inline producer %d %s: %u staged frames returned undelivered\n",
		prod->inline_w, why, n);
	/* Taken from the producer and dropped, as held packets are:
	 * processed and drops both. */
	STAT_ADD(wk->stats.processed, n);
	STAT_ADD(wk->stats.drop_reason[UCM_DROP_SINK], n);
	STAT_ADD(wk->stats.drops, n);
	desc_to_base(map, desc, base, n);
	chain_drop_frags(map, prod->pool, desc, n);
	ucm_pool_recycle_direct(prod->pool, base, n, UCM_LOC_BQ);
	prod->bq_count[prod->inline_w] = 0;
}

/* An inline producer used after its stop (its sink closed) or the map's
 * (its held packets gone home): the worker is not to run. */
static inline bool inline_stopped(const struct ucm_cpumap_producer *prod)
{
	return prod->stopped || READ_ONCE(prod->map->stopped);
}

static void bq_flush(struct ucm_cpumap_producer *prod, uint32_t w)
{
	struct ucm_cpumap *map = prod->map;
	struct ucm_bq *bq = &prod->bq[w];
	struct ucm_worker *wk = map->workers[w];
	struct ucm_ring *ring = prod->ring[w];
	uint64_t base[UCM_CPUMAP_BULK_SIZE];
	uint32_t n = prod->bq_count[w], nstamp = !(map->flags & UCM_CPUMAP_F_NO_LATENCY);
	uint32_t k, sent;

	if (prod->inline_w >= 0 && unlikely(inline_stopped(prod))) {
		ucm_cpumap_inline_unrun(prod, "used after the stop");
		return;
	}
	if (nstamp && !prod->now)
		prod->now = ucm_now_ns();
#ifdef UCM_DEBUG
	/* Tags first: the worker may consume a frame the moment it lands. */
	desc_to_base(map, bq_desc(bq), base, n);
	ucm_frame_move_bulk(map->umem, base, n, UCM_LOC_BQ, UCM_LOC_WQ);
#endif
	if (prod->inline_w >= 0) {
		/* No ring, no thread: the worker's work, here and now. Its
		 * bulk waited for nothing (wait_hist's first bucket), and its
		 * sink time runs from the RX batch's first flush (its first
		 * clock read; worker_idle() takes the second, at its end). */
		if (nstamp) {
			/* Only an application's flush of more bulks than an
			 * RX batch has fills pend: what is finished is done
			 * by now, at a clock read of its own. */
			if (wk->npend == PEND_MAX)
				worker_lat_record(wk, ucm_now_ns());
			worker_lat_stamp(wk, prod->now, prod->now, false);
		}
		worker_run_batch(wk, bq_desc(bq), n);
	} else if (!(map->flags & UCM_CPUMAP_F_NO_FAIR) &&
		   (ring->flags & UCM_RING_MP) &&
		   unlikely(ucm_cpumap_fair_over(prod, w, ring))) {
		/* Over our share of a filling ring: this bulk goes home,
		 * the room left is the other producers'. */
		desc_to_base(map, bq_desc(bq), base, n);
		chain_drop_frags(map, prod->pool, bq_desc(bq), n);
		ucm_pool_recycle_direct(prod->pool, base, n, UCM_LOC_WQ);
		STAT_ADD(prod->fair[w].shed, n);
	} else {
		if (nstamp)
			bq->ent[0] = RING_STAMP | (prod->now & STAMP_MASK);
		/* From the stamp when there is one, else from the first
		 * descriptor (bq->ent + 1). */
		k = ucm_ring__produce(ring, bq->ent + 1 - nstamp, n + nstamp);
		if (ring->flags & UCM_RING_MP)	/* the share counts what went in */
			prod->fair[w].mine += k;
		if (unlikely(k < n + nstamp)) {
			/* Ring full: back into our own pool, directly, as
			 * xdp_return_frame_rx_napi() does. A stamp that went
			 * in alone counts as a bulk whose packets were all
			 * dropped. */
			sent = k > nstamp ? k - nstamp : 0;	/* descriptors taken */
			desc_to_base(map, bq_desc(bq) + sent, base, n - sent);
			chain_drop_frags(map, prod->pool, bq_desc(bq) + sent, n - sent);
			ucm_pool_recycle_direct(prod->pool, base, n - sent, UCM_LOC_WQ);
			STAT_ADD(prod->stats[w].drops, n - sent);
		}
	}
	STAT_ADD(prod->stats[w].processed, n);
	STAT_ADD(prod->stats[w].events, 1);
	prod->bq_count[w] = 0;
}

int ucm_cpumap_producer__enqueue(struct ucm_cpumap_producer *prod,
				 uint32_t worker, uint64_t addr, uint32_t len)
{
	struct ucm_cpumap *map = prod->map;
	uint64_t base = ucm_umem_base(map->umem, addr & ~UCM_DESC_CHAIN);
	struct ucm_bq *bq;

	/* Inline: every packet is ours to run, whatever the steering said. */
	if (prod->inline_w >= 0)
		worker = prod->inline_w;
	/* A frame of another pool would go back to the wrong pool on a
	 * drop: refuse it along with a bad worker index. */
	if (unlikely(worker >= map->nworkers || (addr & ~UCM_DESC_CHAIN) >= map->umem->size ||
		     len > UINT16_MAX ||
		     ucm_umem_owner(map->umem, base) != prod->pool ||
		     ((addr & UCM_DESC_CHAIN) &&
		      !ucm_cpumap_chain_list_ok(map, prod->pool, addr & ~UCM_DESC_CHAIN, base,
						len))))
		return ucm_err(-EINVAL);
	bq = &prod->bq[worker];
	if (unlikely(prod->bq_count[worker] == UCM_CPUMAP_BULK_SIZE))
		bq_flush(prod, worker);
	ucm_frame_move(map->umem, base, UCM_LOC_APP, UCM_LOC_BQ);
	bq_desc(bq)[prod->bq_count[worker]++] = ucm_desc_make(addr, len);
	prod->dirty |= 1ull << worker;
	return 0;
}

void ucm_cpumap_producer__flush(struct ucm_cpumap_producer *prod)
{
	uint64_t dirty = prod->dirty;

	if (prod->inline_w >= 0) {
		struct ucm_cpumap *map = prod->map;
		struct ucm_worker *wk = map->workers[prod->inline_w];

		if (prod->bq_count[prod->inline_w])
			bq_flush(prod, prod->inline_w);
		/* End of the RX batch: what a worker does when its ring runs
		 * empty, since nothing else will come before the next poll. */
		if (likely(!inline_stopped(prod)))
			worker_idle(wk);
	} else {
		while (dirty) {
			uint32_t w = __builtin_ctzll(dirty);

			dirty &= dirty - 1;
			if (prod->bq_count[w])
				bq_flush(prod, w);
			cpumap_wake(prod, w);
		}
	}
	prod->dirty = 0;
	/* 0 when nothing was stamped: no time of an earlier batch is left
	 * for ucm_cpumap_producer_flush_ns(). */
	prod->flush_ns = prod->now;
	prod->now = 0;
}

uint64_t ucm_cpumap_producer_flush_ns(struct ucm_cpumap_producer *prod)
{
	uint64_t t = prod->flush_ns;

	prod->flush_ns = 0;
	return t;
}

/* ---- worker side ------------------------------------------------------ */

/* Nothing queued for the worker: its ring, or every lane, empty. */
static bool worker_empty(struct ucm_worker *w)
{
	uint32_t l, nl;

	if (likely(w->ring))
		return ucm_ring__empty(w->ring);
	nl = map_nlanes(w->map);
	for (l = 0; l < nl; l++)
		if (!ucm_ring__empty(w->lane[l]))
			return false;
	return true;
}

/*
 * UCM_CPUMAP_F_LANES: up to @take entries from the lanes in turn, from
 * lane_cur on: a take from each lane that has work, so that every
 * producer's bulks wait behind at most one take of each other's. A take
 * that ended on a stamp (worker_lat_dequeue()'s stamp_next) leaves it
 * with its lane, whose next entries are that stamp's bulk, and it comes
 * back with the lane's next take; a lane found empty behind one had that
 * bulk's packets dropped by a full lane (a single producer publishes a
 * bulk with its stamp), and the stamp is counted alone.
 */
static __noinline uint32_t worker_take_lanes(struct ucm_worker *w, uint64_t *desc,
					     uint32_t take)
{
	uint32_t nl = map_nlanes(w->map), i, l, n;

	if (w->stamp_next) {
		w->lane_stamp[w->lane_prev] = w->stamp_next;
		w->stamp_next = 0;
	}
	for (i = 0; i < nl; i++) {
		l = w->lane_cur < nl ? w->lane_cur : 0;
		w->lane_cur = l + 1;
		n = ucm_ring__consume(w->lane[l], desc, take);
		if (n) {
			w->stamp_next = w->lane_stamp[l];
			w->lane_stamp[l] = 0;
			w->lane_prev = l;
			return n;
		}
		if (unlikely(w->lane_stamp[l])) {
			worker_lat_stamp(w, w->lane_stamp[l], ucm_now_ns(), true);
			w->lane_stamp[l] = 0;
		}
	}
	return 0;
}

/* Entries for the worker: from its ring, or its lanes. */
static inline uint32_t worker_take(struct ucm_worker *w, uint64_t *desc, uint32_t take)
{
	if (likely(w->ring))
		return ucm_ring__consume(w->ring, desc, take);
	return worker_take_lanes(w, desc, take);
}

/* The pre-wake's events are taken PREWAKE_BATCH at a time, at most
 * PREWAKE_BATCHES times a sleep: a set of 64 queues' fds and the kick
 * (UCM_XSK_MAX_QUEUES) is taken whole, with a batch to spare. */
#define PREWAKE_BATCH		8
#define PREWAKE_BATCHES		10

/*
 * The pre-wake's sleep: until a kick (wake.fd: an edge, or a level with a
 * sink that polls the set) or an arrival (an edge), for @timeout_ms (-1:
 * no limit; 0: only take what a sink's wait() saw, so that no edge stays
 * in the set). An arrival with no kick beside it is a pre-wake. The set
 * holds an arrival fd per queue (or any number a library user gives), so
 * the ready list is taken whole, a batch at a time: a kick behind a batch
 * of arrivals is still seen, and its edge does not end the next wait. (An
 * edge left by arrivals while the worker was awake ends the next wait at
 * once: one more look at the ring, then a real sleep.)
 * Return: 0 after a real sleep, -errno (EINTR: look again).
 */
static int prewake_sleep(struct ucm_worker *w, int timeout_ms)
{
	struct epoll_event ev[PREWAKE_BATCH];
	bool kicked = false, arrived = false;
	int n, i, b;

	n = epoll_wait(w->epfd, ev, ARRAY_SIZE(ev), timeout_ms);
	if (n < 0)
		return -errno;
	for (b = 1;; b++) {
		for (i = 0; i < n; i++) {
			if (ev[i].data.u32 == EP_WAKE)
				kicked = true;
			else
				arrived = true;
		}
		if (n < (int)ARRAY_SIZE(ev) || b == PREWAKE_BATCHES)
			break;
		/* A full batch: the rest of the ready list, not waited for.
		 * The arrivals are edges, taken once; only a polled set's
		 * wake.fd is a level, one item. Bounded all the same: new
		 * arrivals keep adding edges while we look. */
		n = epoll_wait(w->epfd, ev, ARRAY_SIZE(ev), 0);
		if (n <= 0)
			break;
	}
	if (arrived && !kicked)
		STAT_ADD(w->stats.prewakes, 1);
	return 0;
}

/* Whether the worker reads its own eventfd (ucm_wake_settle()): with a
 * sink that only polls it (or the pre-wake's set), as cpumap.h promises
 * such a sink. A sink's wait() that reads it drains it. A worker that
 * sleeps in the pre-wake's set itself never reads it: it waits for its
 * edges (wake.h, edge sleepers), one system call fewer per kicked sleep. */
static bool worker_drains(const struct ucm_worker *w)
{
	const struct ucm_sink_ops *sink = w->map->sink;

	return sink && sink->wait && (sink->flags & UCM_SINK_F_POLL_WAKE);
}

/* The sink's sleep: on the pre-wake's epoll set, when there is one, whose
 * edges are then taken. Return: 0 after a real sleep. */
static int worker_sink_wait(struct ucm_worker *w)
{
	int fd = w->epfd >= 0 ? w->epfd : ucm_wake_fd(&w->wake);

	if (w->map->sink->wait(w->map->sink_ctx, w->idx, fd))
		return 1;
	if (w->epfd >= 0)
		prewake_sleep(w, 0);
	return 0;
}

static bool worker_sleep(struct ucm_worker *w)
{
	bool stop = false;
	uint64_t t0 = 0;
	uint32_t seq;

	TEST_HOOK(w, UCM_CPUMAP_HOOK_EMPTY_SEEN);
	/* The last wake-up's read, put off until now. */
	if (worker_drains(w))
		ucm_wake_settle(&w->wake);
	/* W0 (wake.h): pairs with W4 of the kick, ucm_cpumap_worker_kick() */
	seq = ucm_wake_prepare(&w->wake);
	/* W1 (wake.h): pairs with W2 in ucm_cpumap_worker_kick() */
	ucm_wake_announce(&w->wake);
	/* Recheck to avoid a lost wakeup. */
	if (!worker_empty(w))
		goto awake;
	TEST_HOOK(w, UCM_CPUMAP_HOOK_STOP_CHECK);
	/* X2: pairs with X1 in worker_stop() (cpumap_ctl.c) */
	stop = __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE);
	if (stop) {
		/* What the stop's flush put in the ring after the re-check
		 * came before X1, so X2 sees it: drained before the stop. */
		if (!worker_empty(w))
			stop = false;
		goto awake;
	}
	TEST_HOOK(w, UCM_CPUMAP_HOOK_BEFORE_SLEEP);
	t0 = ucm_now_ns();
	WRITE_ONCE(w->sleep_word, (uint64_t)((int64_t)(w->slept - t0) * 2) | 1);
	if (w->map->sink && w->map->sink->wait) {
		/* The eventfd keeps a wake that came before the wait: the
		 * sink's wait() consumes it, or we do (worker_drains()). */
		if (!worker_sink_wait(w))
			STAT_ADD(w->stats.sched, 1);
		goto awake;
	}
	if (w->epfd >= 0) {
		if (!prewake_sleep(w, -1))
			STAT_ADD(w->stats.sched, 1);
		goto awake;
	}
	/* EAGAIN (seq moved on) and EINTR both mean: look again; only a
	 * real sleep counts as sched. */
	if (!ucm_wake_sleep(&w->wake, seq))
		STAT_ADD(w->stats.sched, 1);
awake:
	if (t0) {
		w->slept += ucm_now_ns() - t0;
		WRITE_ONCE(w->sleep_word, w->slept << 1);
	}
	/* W3 (wake.h): the sink drains wake.fd, or we do, at the next sleep:
	 * not between the wake-up and the work. */
	if (worker_drains(w))
		ucm_wake_end_owed(&w->wake);
	else
		ucm_wake_end(&w->wake);
	return stop;
}

/* Hand everything held to the sink (netif_receive_skb_list(), or the
 * GRO flush with UCM_CPUMAP_F_HOLD), then send the frames home (all of
 * them, or none for a keeping sink). */
static void worker_xmit(struct ucm_worker *w)
{
	struct ucm_cpumap *map = w->map;
	uint32_t n = w->nheld, nchain = w->nheld_chain, dropped = 0;
	int ret;

	if (!n)
		return;
	w->nheld = 0;
	w->nheld_chain = 0;
	if (map->sink) {
		ret = map->sink->xmit(map->sink_ctx, w->idx, w->held, w->held_base, n);
		STAT_ADD(w->stats.xmits, 1);
		worker_lat_done(w);
		/* A negative errno means the whole batch failed. */
		if (ret != 0) {
			dropped = ret < 0 ? n : min((uint32_t)ret, n);
			STAT_ADD(w->stats.drop_reason[UCM_DROP_SINK], dropped);
			STAT_ADD(w->stats.drops, dropped);
		}
		if (map->sink->flags & UCM_SINK_F_KEEP)
			return;
	}
	/* Our skb_mark_for_recycle(): home to the owner pools, in bulk. */
	worker_lat_done(w);	/* also without a sink */
	if (unlikely(nchain))
		worker_ret_chains(w, w->held, w->held_base, n);
	worker_ret_add(w, w->held_base, n);
}

/* Ring empty (or the inline producer's RX batch done): nothing may wait
 * across an idle moment. */
static void worker_idle(struct ucm_worker *w)
{
	struct ucm_cpumap *map = w->map;
	bool alone;

	if (w->nheld) {
		STAT_ADD(w->stats.flush_empty, 1);
		worker_xmit(w);
	}
	if (map->sink && map->sink->flush)
		map->sink->flush(map->sink_ctx, w->idx);
	/* Before a sleep, the finished bulks' sink_hist: one clock read.
	 * A stamp still kept with nothing after it in the ring had its
	 * packets dropped by a full ring: a bulk whose packets are gone.
	 * With an MP ring's slots reserved but not written yet, they are
	 * coming: it waits for them (their producer's kick follows). An
	 * inline worker has no ring: it never keeps a stamp; nor does one
	 * with lanes here (worker_take_lanes() counted it). */
	alone = w->stamp_next && (!w->ring || !ucm_ring__count(w->ring));

	if (w->nfin || alone) {
		uint64_t now = ucm_now_ns();

		if (alone) {
			worker_lat_stamp(w, w->stamp_next, now, true);
			w->stamp_next = 0;
		}
		worker_lat_record(w, now);
	}
	worker_return(w);
}

/* UCM_VERDICT_TX: the packet in frame @base out as it is now, ucm_txq's
 * from here, its descriptor into *@tx with the checked offset and length
 * (the verdict may not change them). False: a packet of several frames
 * the channel cannot take; its frames stay. */
static inline bool worker_verdict_tx(struct ucm_worker *w, uint64_t base, uint32_t off,
				     uint32_t len, bool chain, uint64_t *tx)
{
	const struct ucm_cpumap *map = w->map;

	if (unlikely(chain) && !ucm_cpumap_chain_lend(w, base, map->txqs[w->idx]))
		return false;
	ucm_frame_move(map->umem, base, UCM_LOC_WORKER, UCM_LOC_APP);
	*tx = ucm_desc_make(base + off, len) | (chain ? UCM_DESC_CHAIN : 0);
	return true;
}

/* Where a worker's packet lies: @len bytes from @off, @rd of them in its
 * first frame (less where @chain lists the rest). */
static inline void frame_hdr_set(struct ucm_frame_hdr *hdr, uint32_t off, uint32_t len,
				 uint32_t rd, bool chain)
{
	hdr->data_off = off;
	hdr->len = len;
	hdr->head_len = rd;
	hdr->flags = chain ? UCM_FRAME_F_CHAIN : 0;
}

/*
 * One batch: lay each frame's header out from its descriptor, parse the
 * packet into it, add the good ones to what is held for the sink and
 * send the bad ones home; hand over what is held unless the map holds
 * and fewer than UCM_CPUMAP_HOLD_MAX are.
 */
static void worker_run_batch(struct ucm_worker *w, const uint64_t *desc,
			     uint32_t n)
{
	struct ucm_cpumap *map = w->map;
	uint64_t base[UCM_CPUMAP_BATCH], bad[UCM_CPUMAP_BATCH], tx[UCM_CPUMAP_BATCH];
	uint32_t nbad = 0, ntx = 0, i;

	/*
	 * The packets were last written on another CPU (by the NIC or the
	 * kernel's copy): start fetching all of them, and the header lines
	 * we are about to write, before touching any.
	 */
	for (i = 0; i < n; i++) {
		base[i] = ucm_umem_desc_base(map->umem, desc[i]);
		__builtin_prefetch((char *)map->area + (ucm_desc_addr(desc[i]) & ~UCM_DESC_CHAIN), 0);
		__builtin_prefetch((char *)map->area + base[i], 1);
	}

	for (i = 0; i < n; i++) {
		struct ucm_frame_hdr *hdr = ucm_umem__frame(map->area, base[i]);
		uint32_t off = (ucm_desc_addr(desc[i]) & ~UCM_DESC_CHAIN) - base[i];
		uint32_t len = ucm_desc_len(desc[i]), rd = len;
		bool chain = desc[i] & UCM_DESC_CHAIN;
		enum ucm_drop_reason reason;
		int verdict = UCM_VERDICT_PASS;

		ucm_frame_move(map->umem, base[i], UCM_LOC_WQ, UCM_LOC_WORKER);
		if (unlikely(chain))
			rd = ucm_cpumap_chain_take(w, base[i]);
		if (unlikely(off < UCM_FRAME_HDR_ROOM || off + rd > map->frame_size)) {
			reason = UCM_DROP_FRAME_BOUNDS;
		} else {
			frame_hdr_set(hdr, off, len, rd, chain);
			reason = likely(!chain) ? ucm_pkt__parse(&hdr->pkt, ucm_frame_data(hdr), len) :
				 ucm_pkt_parse_head(&hdr->pkt, ucm_frame_data(hdr), rd, len);
			if (map->verdict && reason == UCM_DROP_NONE) {
				verdict = map->verdict(map->verdict_ctx, w->idx, hdr);
				/* What the frames hold is the library's to say:
				 * a verdict that moved the start, changed a length
				 * or a flag, or parsed a chain as one buffer, does
				 * not make the sink or the coalescing read past
				 * the first frame. */
				frame_hdr_set(hdr, off, len, rd, chain);
				if (unlikely(rd < len))	/* as ucm_pkt_parse_head() */
					hdr->pkt.flags |= UCM_PKT_F_PARTIAL;
			}
			if (verdict == UCM_VERDICT_TX && map->txqs && map->txqs[w->idx]) {
				if (worker_verdict_tx(w, base[i], off, len, chain, &tx[ntx])) {
					ntx++;
					continue;
				}
				reason = UCM_DROP_CHAIN_TX;
			} else if (verdict != UCM_VERDICT_PASS) {
				reason = UCM_DROP_VERDICT;
			}
		}
		if (unlikely(reason != UCM_DROP_NONE)) {
			STAT_ADD(w->stats.drop_reason[reason], 1);
			if (unlikely(chain))
				ucm_cpumap_chain_ret(w, base[i]);
			bad[nbad++] = base[i];
			continue;
		}
		w->nheld_chain += chain;
		w->held[w->nheld] = hdr;
		w->held_base[w->nheld++] = base[i];
	}
	if (nbad) {
		STAT_ADD(w->stats.drops, nbad);
		worker_ret_add(w, bad, nbad);
	}
	if (ntx) {
		/* All of them are the channel's now: what it has no room for,
		 * it sends home and counts. */
		ucm_txq__send(map->txqs[w->idx], tx, ntx);
		STAT_ADD(w->stats.tx, ntx);
	}
	if (!(map->flags & UCM_CPUMAP_F_HOLD)) {
		worker_xmit(w);
	} else if (w->nheld >= UCM_CPUMAP_HOLD_MAX) {
		STAT_ADD(w->stats.flush_full, 1);
		worker_xmit(w);
	}
	/* Nothing held: every packet of the batch is gone (to the sink, a
	 * channel or home). */
	if (!w->nheld)
		worker_lat_done(w);
	/* After the sink: without a hold, processed counts what it saw. */
	STAT_ADD(w->stats.processed, n);
}

/*
 * Look again for up to map->spin_ns before sleeping: true when work came
 * (a bulk in the ring, or the sink's other direction). Not announced as
 * asleep meanwhile, so a producer's kick is one atomic and no system call
 * (W2 finds no SLEEPING). A stop ends it (X3's pair, worker_stop() in
 * cpumap_ctl.c).
 */
static bool worker_spin(struct ucm_worker *w)
{
	struct ucm_cpumap *map = w->map;
	const struct ucm_sink_ops *sink = map->sink;
	uint64_t end = ucm_now_ns() + map->spin_ns;

	do {
		if (!worker_empty(w))
			return true;
		if (__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
			return false;
		if (sink && sink->poll && sink->poll(map->sink_ctx, w->idx))
			return true;
		cpu_relax();
	} while (ucm_now_ns() < end);
	return false;
}

void *ucm_cpumap_worker_main(void *arg)
{
	struct ucm_worker *w = arg;
	struct ucm_cpumap *map = w->map;
	const struct ucm_sink_ops *sink = map->sink;
	uint64_t desc[RING_TAKE_MAX];
	uint32_t take = map->flags & UCM_CPUMAP_F_NO_LATENCY ? UCM_CPUMAP_BATCH : RING_TAKE_MAX;
	uint32_t n;

	if (sink && sink->open)
		w->open_err = sink->open(map->sink_ctx, w->idx);
	if (!w->open_err && map->worker_init)
		map->worker_init(map->worker_init_ctx, w->idx);
	/* kthread_running: create() waits for this before returning.
	 * R1: pairs with R2 in worker_start() (cpumap_ctl.c), which then reads
	 * open_err. */
	__atomic_store_n(&w->running, 1, __ATOMIC_RELEASE);
	ucm_wake_futex(&w->running, FUTEX_WAKE_PRIVATE, 1);
	if (w->open_err)
		return NULL;

	for (;;) {
		n = worker_take(w, desc, take);
		if (n) {
			if (take == RING_TAKE_MAX)
				n = worker_lat_dequeue(w, desc, n);
			if (n)
				worker_run_batch(w, desc, n);
			/* One bounded turn of the other direction per batch. */
			if (sink && sink->poll)
				sink->poll(map->sink_ctx, w->idx);
			continue;
		}
		/* Ring empty: nothing may wait across an idle moment. */
		worker_idle(w);
		/* The other direction's work keeps the worker up, but not
		 * past a stop: only worker_sleep() looks at it.
		 * X3: pairs with X1 in worker_stop() (cpumap_ctl.c) */
		if (sink && sink->poll && !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE) &&
		    sink->poll(map->sink_ctx, w->idx))
			continue;
		if (map->spin_ns && worker_spin(w))
			continue;
		if (worker_sleep(w))
			break;
	}
	if (sink && sink->close)
		sink->close(map->sink_ctx, w->idx);
	return NULL;
}
