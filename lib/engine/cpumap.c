// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cpumap: bulk queues, worker rings and worker threads
 * (kernel/bpf/cpumap.c's role).
 *
 * Producer side, per RX thread (struct ucm_cpumap_producer):
 *   enqueue - append the frame to the bulk queue of its worker; a full bulk
 *             queue is flushed first (bq_enqueue()).
 *   flush   - at the end of each RX batch, every non-empty bulk queue goes
 *             into its worker's ring (MPSC; SPSC with
 *             UCM_CPUMAP_F_ONE_PRODUCER) with one reservation; what the
 *             ring cannot take is recycled directly into the producer's pool
 *             and counted as a drop; then each worker that sleeps is woken
 *             once (xdp_do_flush()).
 *
 * Worker side (worker_main(), cpu_map_kthread_run()):
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
 * and the stop (worker_stop()) are the wakers:
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
 * W1 pairs with W2, W0 with W4, X1 with X2 (and X3 in worker_main()).
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/epoll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "core/pool_internal.h"
#include "engine/cpumap_internal.h"
#include "engine/wake.h"
#include "ucpumap/cpumap.h"

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

/* The most a worker holds for its sink: a full hold and one more batch. */
#define HELD_MAX	(UCM_CPUMAP_HOLD_MAX + UCM_CPUMAP_BATCH - 1)

/*
 * A bulk's stamp: an entry of its own in the worker ring, just before the
 * bulk's descriptors, holding the producer's flush time (ucm_now_ns(), its
 * low 47 bits) for the worker's wait_hist and sink_hist: one clock read per
 * flush and two per worker batch, not per packet. Not in the bulk's first
 * frame: that line would cross from the producer's CPU to the worker's
 * for every bulk (docs/BENCHMARKS.md, "Where the latency stamps' cost
 * goes"). Bit 47 tells a stamp from a descriptor: it is above every UMEM
 * handle and below the length. A wait is read modulo 2^47 ns (39 hours).
 */
#define RING_STAMP	(1ull << 47)
#define STAMP_MASK	(RING_STAMP - 1)
_Static_assert(UCM_UMEM_MAX_SIZE <= RING_STAMP, "the stamp bit is not an address bit");
_Static_assert(RING_STAMP < 1ull << UCM_DESC_LEN_SHIFT, "the stamp bit is not a length bit");
/* A worker takes one entry more than a batch: every run of entries that
 * long holds a stamp, so at most a batch of descriptors. */
#define RING_TAKE_MAX	(UCM_CPUMAP_BATCH + 1)
/* Dequeue times of bulks whose packets are not gone yet: at most one per
 * packet held, and a batch's worth more (a stamp without packets, all
 * dropped by a full ring, is done at once: worker_lat_dequeue()). */
#define PEND_MAX	(HELD_MAX + UCM_CPUMAP_BATCH)
/* An inline producer runs a whole bulk queue as one worker batch. */
_Static_assert(UCM_CPUMAP_BULK_SIZE <= UCM_CPUMAP_BATCH, "a bulk fits a batch");

/*
 * Concurrency contract of struct ucm_worker
 *  - ring: MPSC; producers flush bulks into it, only this worker consumes.
 *    SPSC with UCM_CPUMAP_F_ONE_PRODUCER: producer_create keeps a second
 *    producer out, so one thread flushes at a time (a producer is used
 *    by one thread at a time, and a new one follows a destroy).
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
};

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

	pthread_mutex_t lock;	/* the producer list, inline_next */
	struct ucm_cpumap_producer *producers;
	uint32_t inline_next;	/* UCM_CPUMAP_F_INLINE: next worker to hand out */
	bool stopped;		/* workers joined (control thread only) */
};

#ifdef UCM_DEBUG
int ucm_cpumap_test_ring_flags(const struct ucm_cpumap *map, uint32_t w)
{
	if (!map || w >= map->nworkers || !map->workers[w] || !map->workers[w]->ring)
		return -1;
	return (int)map->workers[w]->ring->flags;
}
#endif

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
 * Concurrency contract of struct ucm_cpumap_producer: used by one thread
 * at a time (its RX thread); stats are written by it only (WRITE_ONCE) and
 * read by anyone (READ_ONCE), relaxed, no pair.
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
	bool stopped;
	struct ucm_cpumap_enqueue_stats *stats;	/* one per worker */
	uint8_t bq_count[UCM_CPUMAP_MAX_WORKERS] __cacheline_aligned;
	struct ucm_bq bq[];
};

static void worker_run_batch(struct ucm_worker *w, const uint64_t *desc,
			     uint32_t n);
static void worker_idle(struct ucm_worker *w);
static void worker_lat_stamp(struct ucm_worker *w, uint64_t stamp, uint64_t now,
			     bool gone);
static void worker_lat_record(struct ucm_worker *w, uint64_t now);
static void worker_return(struct ucm_worker *w);
static void producer_free(struct ucm_cpumap_producer *prod);

/* After publishing work (frames, or the stop): wake the worker if it
 * sleeps and nobody has woken it yet. Return: true when this call did. */
static bool worker_kick(struct ucm_worker *wk)
{
	/* W2 (wake.h): pairs with W1 in worker_sleep() */
	int ret = ucm_wake_kick(&wk->wake);

	if (ret < 0)
		pr_warn("cpumap: worker %u: cannot wake it: %s\n", wk->idx,
			strerror(-ret));
	return ret > 0;
}

/* ---- producer side ------------------------------------------------------ */

/* After bq_flush() published the bulk (ring.h P2): the W2 that follows
 * makes sure a sleeping worker sees it. */
static void cpumap_wake(struct ucm_cpumap_producer *prod, uint32_t w)
{
	if (worker_kick(prod->map->workers[w]))
		STAT_ADD(prod->stats[w].wakeups, 1);
}

static void desc_to_base(const struct ucm_cpumap *map, const uint64_t *desc,
			 uint64_t *base, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		base[i] = ucm_umem_desc_base(map->umem, desc[i]);
}

/*
 * bq_flush_to_queue(): bulk queue @w to its worker, one ring reservation
 * for the whole bulk. Stamped unless the map has UCM_CPUMAP_F_NO_LATENCY:
 * nstamp, the bulk's stamp entries (1 or 0), go into the ring in front of
 * its descriptors, bq->ent[0] just before bq_desc() (an inline worker
 * counts its wait of none at once).
 */
static void bq_flush(struct ucm_cpumap_producer *prod, uint32_t w)
{
	struct ucm_cpumap *map = prod->map;
	struct ucm_bq *bq = &prod->bq[w];
	struct ucm_worker *wk = map->workers[w];
	uint64_t base[UCM_CPUMAP_BULK_SIZE];
	uint32_t n = prod->bq_count[w], nstamp = !(map->flags & UCM_CPUMAP_F_NO_LATENCY);
	uint32_t k, sent;

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
	} else {
		if (nstamp)
			bq->ent[0] = RING_STAMP | (prod->now & STAMP_MASK);
		/* From the stamp when there is one, else from the first
		 * descriptor (bq->ent + 1). */
		k = ucm_ring__produce(wk->ring, bq->ent + 1 - nstamp, n + nstamp);
		if (unlikely(k < n + nstamp)) {
			/* Ring full: back into our own pool, directly, as
			 * xdp_return_frame_rx_napi() does. A stamp that went
			 * in alone counts as a bulk whose packets were all
			 * dropped. */
			sent = k > nstamp ? k - nstamp : 0;	/* descriptors taken */
			desc_to_base(map, bq_desc(bq) + sent, base, n - sent);
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
	uint64_t base = ucm_umem_base(map->umem, addr);
	struct ucm_bq *bq;

	/* Inline: every packet is ours to run, whatever the steering said. */
	if (prod->inline_w >= 0)
		worker = prod->inline_w;
	/* A frame of another pool would go back to the wrong pool on a
	 * drop: refuse it along with a bad worker index. */
	if (unlikely(worker >= map->nworkers || addr >= map->umem->size ||
		     len > UINT16_MAX ||
		     ucm_umem_owner(map->umem, base) != prod->pool))
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

void ucm_cpumap_producer__stop(struct ucm_cpumap_producer *prod)
{
	struct ucm_cpumap *map = prod->map;

	if (prod->stopped)
		return;
	ucm_cpumap_producer__flush(prod);
	if (prod->inline_w >= 0 && map->sink && map->sink->close)
		map->sink->close(map->sink_ctx, prod->inline_w);
	prod->stopped = true;
}

struct ucm_cpumap_producer *
ucm_cpumap__producer_create(struct ucm_cpumap *map, struct ucm_pool *pool)
{
	struct ucm_cpumap_producer *prod;

	if (!map || !pool || pool->umem != map->umem)
		return ucm_err_ptr(-EINVAL);
	prod = aligned_alloc(UCM_CACHELINE,
			     (sizeof(*prod) +
			      map->nworkers * sizeof(struct ucm_bq) +
			      UCM_CACHELINE - 1) & ~(size_t)(UCM_CACHELINE - 1));
	if (!prod)
		return ucm_err_ptr(ucm_oom("a producer"));
	memset(prod, 0, sizeof(*prod) + map->nworkers * sizeof(struct ucm_bq));
	prod->stats = calloc(map->nworkers, sizeof(*prod->stats));
	if (!prod->stats) {
		free(prod);
		return ucm_err_ptr(ucm_oom("a producer's counters"));
	}
	prod->map = map;
	prod->pool = pool;
	prod->inline_w = -1;

	pthread_mutex_lock(&map->lock);
	if ((map->flags & UCM_CPUMAP_F_ONE_PRODUCER) && map->producers) {
		pthread_mutex_unlock(&map->lock);
		pr_warn("cpumap: the map was made for one producer (UCM_CPUMAP_F_ONE_PRODUCER) and has it: destroy that one first, or make the map without the flag\n");
		producer_free(prod);
		return ucm_err_ptr(-EBUSY);
	}
	if (map->flags & UCM_CPUMAP_F_INLINE) {
		int err = 0;

		if (map->inline_next >= map->nworkers) {
			pr_warn("cpumap: inline mode has %u producers already\n",
				map->nworkers);
			err = -ENOSPC;
		} else {
			prod->inline_w = map->inline_next++;
			/* The sink's per-worker state belongs to the thread
			 * that will run the batches: this one. */
			if (map->sink && map->sink->open)
				err = map->sink->open(map->sink_ctx, prod->inline_w);
			if (err) {
				err = err < 0 ? err : -EIO;
				map->inline_next--;
			}
		}
		if (err) {
			pthread_mutex_unlock(&map->lock);
			producer_free(prod);
			return ucm_err_ptr(err);
		}
	}
	prod->next = map->producers;
	map->producers = prod;
	pthread_mutex_unlock(&map->lock);
	return prod;
}

static void producer_free(struct ucm_cpumap_producer *prod)
{
	free(prod->stats);
	free(prod);
}

void ucm_cpumap_producer__destroy(struct ucm_cpumap_producer *prod)
{
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer **pp;

	if (!prod)
		return;
	map = prod->map;
	/* Nothing staged may be lost: push it to the workers first. */
	ucm_cpumap_producer__stop(prod);

	pthread_mutex_lock(&map->lock);
	for (pp = &map->producers; *pp; pp = &(*pp)->next) {
		if (*pp == prod) {
			*pp = prod->next;
			break;
		}
	}
	pthread_mutex_unlock(&map->lock);
	producer_free(prod);
}

/* ---- worker side ---------------------------------------------------------- */

/* The worker's time asleep now, a sleep going on included (sleep_word). */
static uint64_t sleep_read(const struct ucm_worker *w)
{
	uint64_t x = READ_ONCE(w->sleep_word);

	if (!(x & 1))
		return x >> 1;
	return (uint64_t)((int64_t)(x & ~1ull) / 2) + ucm_now_ns();
}

/* The pre-wake's events are taken PREWAKE_BATCH at a time, at most
 * PREWAKE_BATCHES times a sleep: a set of 64 queues' fds and the kick
 * (UCM_XSK_MAX_QUEUES) is taken whole, with a batch to spare. */
#define PREWAKE_BATCH		8
#define PREWAKE_BATCHES		10

/* Tags of the pre-wake's epoll events. */
#define EP_WAKE		0u	/* wake.fd: a kick */
#define EP_ARRIVAL	1u	/* an fd given to ucm_cpumap__prewake_on() */

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
	/* W0 (wake.h): pairs with W4 of the kick in worker_kick() */
	seq = ucm_wake_prepare(&w->wake);
	/* W1 (wake.h): pairs with W2 in worker_kick() */
	ucm_wake_announce(&w->wake);
	/* Recheck to avoid a lost wakeup. */
	if (!ucm_ring__empty(w->ring))
		goto awake;
	TEST_HOOK(w, UCM_CPUMAP_HOOK_STOP_CHECK);
	/* X2: pairs with X1 in worker_stop() */
	stop = __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE);
	if (stop) {
		/* What the stop's flush put in the ring after the re-check
		 * came before X1, so X2 sees it: drained before the stop. */
		if (!ucm_ring__empty(w->ring))
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

static void worker_return(struct ucm_worker *w)
{
	struct ucm_cpumap *map = w->map;

	if (!w->nret)
		return;
	ucm_umem_put_bulk_from(map->umem, w->ret, w->nret, UCM_LOC_WORKER,
			       map->flags & UCM_CPUMAP_F_NO_RECYCLE);
	w->nret = 0;
}

/* Queue finished frames for their pools, returning in bulk. */
static void worker_ret_add(struct ucm_worker *w, const uint64_t *base, uint32_t n)
{
	if (w->nret + n > ARRAY_SIZE(w->ret))
		worker_return(w);
	memcpy(&w->ret[w->nret], base, n * sizeof(*base));
	w->nret += n;
	if (w->nret >= UCM_POOL_PUT_BULK)
		worker_return(w);
}

/*
 * The stamped bulks dequeued so far are finished (their packets went to
 * the sink, a channel or home). Their sink_hist waits for the worker's
 * next clock read, at its next dequeue or as it goes idle: one read per
 * batch, and a time no earlier than the true one by the loop's turn.
 */
static void worker_lat_done(struct ucm_worker *w)
{
	w->nfin = w->npend;
}

/* Count the finished bulks as done at @now. */
static void worker_lat_record(struct ucm_worker *w, uint64_t now)
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
static void worker_lat_stamp(struct ucm_worker *w, uint64_t stamp, uint64_t now,
			     bool gone)
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
static uint32_t worker_lat_dequeue(struct ucm_worker *w, uint64_t *desc, uint32_t n)
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

/* Hand everything held to the sink (netif_receive_skb_list(), or the
 * GRO flush with UCM_CPUMAP_F_HOLD), then send the frames home (all of
 * them, or none for a keeping sink). */
static void worker_xmit(struct ucm_worker *w)
{
	struct ucm_cpumap *map = w->map;
	uint32_t n = w->nheld, dropped = 0;
	int ret;

	if (!n)
		return;
	w->nheld = 0;
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
	 * inline worker has no ring: it never keeps a stamp. */
	alone = w->stamp_next && !ucm_ring__count(w->ring);

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
		__builtin_prefetch((char *)map->area + ucm_desc_addr(desc[i]), 0);
		__builtin_prefetch((char *)map->area + base[i], 1);
	}

	for (i = 0; i < n; i++) {
		struct ucm_frame_hdr *hdr = ucm_umem__frame(map->area, base[i]);
		uint32_t off = ucm_desc_addr(desc[i]) - base[i];
		uint32_t len = ucm_desc_len(desc[i]);
		enum ucm_drop_reason reason;
		int verdict = UCM_VERDICT_PASS;

		ucm_frame_move(map->umem, base[i], UCM_LOC_WQ, UCM_LOC_WORKER);
		if (unlikely(off < UCM_FRAME_HDR_ROOM || off + len > map->frame_size)) {
			reason = UCM_DROP_FRAME_BOUNDS;
		} else {
			hdr->data_off = off;
			hdr->len = len;
			hdr->flags = 0;
			reason = ucm_pkt__parse(&hdr->pkt, ucm_frame_data(hdr), len);
			if (map->verdict && reason == UCM_DROP_NONE)
				verdict = map->verdict(map->verdict_ctx, w->idx, hdr);
			if (verdict == UCM_VERDICT_TX && map->txqs && map->txqs[w->idx]) {
				/* Out as it is now: ucm_txq's from here. */
				ucm_frame_move(map->umem, base[i], UCM_LOC_WORKER, UCM_LOC_APP);
				/* The checked offset and length: the verdict
				 * may not change them. */
				tx[ntx++] = ucm_desc_make(base[i] + off, len);
				continue;
			}
			if (verdict != UCM_VERDICT_PASS)
				reason = UCM_DROP_VERDICT;
		}
		if (unlikely(reason != UCM_DROP_NONE)) {
			STAT_ADD(w->stats.drop_reason[reason], 1);
			bad[nbad++] = base[i];
			continue;
		}
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
 * (W2 finds no SLEEPING). A stop ends it (X3's pair, worker_stop()).
 */
static bool worker_spin(struct ucm_worker *w)
{
	struct ucm_cpumap *map = w->map;
	const struct ucm_sink_ops *sink = map->sink;
	uint64_t end = ucm_now_ns() + map->spin_ns;

	do {
		if (!ucm_ring__empty(w->ring))
			return true;
		if (__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
			return false;
		if (sink && sink->poll && sink->poll(map->sink_ctx, w->idx))
			return true;
		cpu_relax();
	} while (ucm_now_ns() < end);
	return false;
}

static void *worker_main(void *arg)
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
	 * R1: pairs with R2 in worker_start(), which then reads open_err. */
	__atomic_store_n(&w->running, 1, __ATOMIC_RELEASE);
	ucm_wake_futex(&w->running, FUTEX_WAKE_PRIVATE, 1);
	if (w->open_err)
		return NULL;

	for (;;) {
		n = ucm_ring__consume(w->ring, desc, take);
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
		 * X3: pairs with X1 in worker_stop() */
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

/* ---- lifecycle ------------------------------------------------------------ */

static int cpu_allowed(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return CPU_ISSET(cpu, &set);
}

static void worker_stop(struct ucm_worker *w)
{
	/* X1: pairs with X2 in worker_sleep() and X3 in worker_main(): a
	 * worker that sees the stop sees all that came before it. */
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	/* The stop is work: a worker that announced its sleep before our W2
	 * is woken by it; one that announces after re-checks stop (X2). */
	worker_kick(w);
	pthread_join(w->thread, NULL);
}

static void worker_free(struct ucm_worker *w)
{
	if (w->epfd >= 0)
		close(w->epfd);
	ucm_wake_fini(&w->wake);
	ucm_ring__destroy(w->ring);
	free(w);
}

/* An inline worker: the state without the thread or the ring. */
static int worker_inline(struct ucm_cpumap *map, uint32_t idx)
{
	struct ucm_worker *w = aligned_alloc(UCM_CACHELINE, sizeof(*w));

	if (!w)
		return ucm_oom("a worker");
	memset(w, 0, sizeof(*w));
	w->map = map;
	w->idx = idx;
	w->cpu = -1;
	w->epfd = -1;
	ucm_wake_init(&w->wake, false);	/* no fd: it cannot fail */
	map->workers[idx] = w;
	return 0;
}

static int worker_start(struct ucm_cpumap *map, uint32_t idx, int cpu,
			uint32_t qsize)
{
	struct ucm_worker *w;
	sigset_t all, old;
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	w = aligned_alloc(UCM_CACHELINE, sizeof(*w));
	if (!w)
		return ucm_oom("a worker");
	memset(w, 0, sizeof(*w));
	w->map = map;
	w->idx = idx;
	w->cpu = cpu;
	w->epfd = -1;
	/* With a sink that sleeps on its own fds, an eventfd among them; with
	 * a pre-wake, among the arrival fds. */
	err = ucm_wake_init(&w->wake, (map->sink && map->sink->wait) ||
				       (map->flags & UCM_CPUMAP_F_PREWAKE));
	if (err) {
		free(w);
		return err;
	}
	if (map->flags & UCM_CPUMAP_F_PREWAKE) {
		/* Edges when only the worker's epoll_wait() sees the set:
		 * each kick is one and it never reads the eventfd
		 * (worker_drains()). A sink that polls the set gets a level
		 * the worker's read clears, as cpumap.h says. */
		struct epoll_event ev = {
			.events = EPOLLIN | (map->sink && map->sink->wait ? 0 : EPOLLET),
			.data.u32 = EP_WAKE };

		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0 ||
		    epoll_ctl(w->epfd, EPOLL_CTL_ADD, ucm_wake_fd(&w->wake), &ev)) {
			err = -errno;
			worker_free(w);
			return err;
		}
	}
	w->ring = ucm_ring__create(qsize, map->flags & UCM_CPUMAP_F_ONE_PRODUCER ?
					 UCM_RING_SP : UCM_RING_MP);
	if (!w->ring) {
		worker_free(w);
		return -ENOMEM;		/* the ring said so */
	}

	pthread_attr_init(&attr);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* A worker off its CPU would run, unpinned, where nobody asked. */
	err = -pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (err) {
		pr_warn("cpumap: worker %u: cannot pin it to CPU %d: %s\n", idx, cpu,
			strerror(-err));
		pthread_attr_destroy(&attr);
		worker_free(w);
		return err;
	}
	/* Workers take no signals: the application's control thread does. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&w->thread, &attr, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		pr_warn("cannot start the worker for CPU %d: %s\n", cpu,
			strerror(-err));
		worker_free(w);
		return err;
	}
	/* R2: pairs with R1 in worker_main(): open_err is its. */
	while (!__atomic_load_n(&w->running, __ATOMIC_ACQUIRE))
		ucm_wake_futex(&w->running, FUTEX_WAIT_PRIVATE, 0);
	if (w->open_err) {
		err = w->open_err < 0 ? w->open_err : -EIO;
		pr_warn("worker %u (CPU %d): sink open failed: %s\n", idx, cpu,
			strerror(-err));
		pthread_join(w->thread, NULL);
		worker_free(w);
		return err;
	}
	{
		char name[16];

		snprintf(name, sizeof(name), "ucpumap/%d", cpu);
		pthread_setname_np(w->thread, name);
	}
	map->workers[idx] = w;
	return 0;
}

int ucm_sink_ops_copy(struct ucm_sink_ops *dst, const struct ucm_sink_ops *src)
{
	if (!src->sz) {
		pr_warn("sink: struct ucm_sink_ops has no sz: set .sz = sizeof(struct ucm_sink_ops) (or declare it with UCM_OPTS())\n");
		return -EINVAL;
	}
	return UCM_OPTS_COPY(dst, src, ucm_sink_ops);
}

/* UCM_VERDICT_TX's channels, one per worker (or none): this map's UMEM's. */
static int map_set_txqs(struct ucm_cpumap *map, struct ucm_txq *const *txqs,
			uint32_t n)
{
	uint32_t i;

	if (!txqs)
		return 0;
	for (i = 0; i < n; i++) {
		if (txqs[i] && ucm_txq__umem(txqs[i]) != map->umem) {
			pr_warn("cpumap: TX channel %u is on another UMEM: it must carry this map's frames\n", i);
			return -EINVAL;
		}
	}
	map->txqs = calloc(n, sizeof(*map->txqs));
	if (!map->txqs)
		return ucm_oom("the workers' TX channels");
	memcpy(map->txqs, txqs, n * sizeof(*map->txqs));
	return 0;
}

/* The options that stand alone; the sink's are checked on its copy. */
static int opts_check(struct ucm_cpumap_opts *o)
{
	uint32_t i, j;

	if (!o->qsize)
		o->qsize = UCM_CPUMAP_QSIZE_DEFAULT;
	if (!is_pow2(o->qsize) || o->qsize > UCM_CPUMAP_QSIZE_MAX ||
	    o->qsize < UCM_CPUMAP_QSIZE_MIN) {
		pr_warn("cpumap: queue size %u: must be a power of two between %u and %u\n",
			o->qsize, UCM_CPUMAP_QSIZE_MIN, UCM_CPUMAP_QSIZE_MAX);
		return -EINVAL;
	}
	if (o->flags & ~(UCM_CPUMAP_F_NO_RECYCLE | UCM_CPUMAP_F_INLINE | UCM_CPUMAP_F_HOLD |
			UCM_CPUMAP_F_NO_LATENCY | UCM_CPUMAP_F_PREWAKE |
			UCM_CPUMAP_F_ONE_PRODUCER)) {
		pr_warn("cpumap: unknown flags 0x%x\n", o->flags);
		return -EINVAL;
	}
	if ((o->flags & UCM_CPUMAP_F_ONE_PRODUCER) && (o->flags & UCM_CPUMAP_F_INLINE) &&
	    o->ncpus > 1) {
		pr_warn("cpumap: inline mode has a producer per worker: UCM_CPUMAP_F_ONE_PRODUCER needs ncpus 1\n");
		return -EINVAL;
	}
	if (o->spin_us > UCM_SPIN_US_MAX) {
		pr_warn("cpumap: a spin of %u us: at most %u (beyond, it is busy polling)\n",
			o->spin_us, UCM_SPIN_US_MAX);
		return -EINVAL;
	}
	if (!o->ncpus || o->ncpus > UCM_CPUMAP_MAX_WORKERS ||
	    (!o->cpus && !(o->flags & UCM_CPUMAP_F_INLINE))) {
		pr_warn("cpumap: give between 1 and %u worker CPUs\n",
			UCM_CPUMAP_MAX_WORKERS);
		return -EINVAL;
	}
	for (i = 0; i < o->ncpus && !(o->flags & UCM_CPUMAP_F_INLINE); i++) {
		if (!cpu_allowed(o->cpus[i])) {
			pr_warn("cpumap: CPU %d is not online or not in this process's affinity mask (nproc says %ld)\n",
				o->cpus[i], sysconf(_SC_NPROCESSORS_ONLN));
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (o->cpus[j] == o->cpus[i]) {
				pr_warn("cpumap: CPU %d is listed twice\n",
					o->cpus[i]);
				return -EINVAL;
			}
		}
	}
	return 0;
}

struct ucm_cpumap *ucm_cpumap__create(struct ucm_umem *umem,
				      const struct ucm_cpumap_opts *opts)
{
	struct ucm_sink_ops sink = {};
	struct ucm_cpumap_opts o;
	struct ucm_cpumap *map;
	uint32_t i;
	int err;

	err = UCM_OPTS_COPY(&o, opts, ucm_cpumap_opts);
	if (err)
		return ucm_err_ptr(err);
	if (!umem) {
		pr_warn("cpumap: no umem\n");
		return ucm_err_ptr(-EINVAL);
	}
	err = opts_check(&o);
	if (err)
		return ucm_err_ptr(err);
	err = o.sink ? ucm_sink_ops_copy(&sink, o.sink) : 0;
	if (err)
		return ucm_err_ptr(err);
	if (o.sink && !sink.xmit) {
		pr_warn("cpumap: a sink needs an xmit callback\n");
		return ucm_err_ptr(-EINVAL);
	}
	if (sink.flags & ~(uint32_t)(UCM_SINK_F_KEEP | UCM_SINK_F_POLL_WAKE)) {
		pr_warn("cpumap: sink flags %#x: unknown to this library\n", sink.flags);
		return ucm_err_ptr(-EINVAL);
	}
	if ((o.flags & UCM_CPUMAP_F_PREWAKE) &&
	    (ucm_sink_reads_wake(&sink) || (o.flags & UCM_CPUMAP_F_INLINE))) {
		pr_warn("cpumap: a pre-wake needs workers that sleep on their own or on a sink that only polls: %s\n",
			o.flags & UCM_CPUMAP_F_INLINE ? "inline workers never sleep" :
			"this sink reads its wake fd in wait() (no UCM_SINK_F_POLL_WAKE)");
		return ucm_err_ptr(-EINVAL);
	}

	map = calloc(1, sizeof(*map));
	if (!map)
		return ucm_err_ptr(ucm_oom("the cpumap"));
	map->workers = calloc(o.ncpus, sizeof(*map->workers));
	if (!map->workers) {
		free(map);
		return ucm_err_ptr(ucm_oom("the cpumap's workers"));
	}
	pthread_mutex_init(&map->lock, NULL);
	map->umem = umem;
	map->area = ucm_umem__area(umem);
	map->frame_size = ucm_umem__frame_size(umem);
	map->flags = o.flags;
	map->spin_ns = (uint64_t)o.spin_us * 1000;
	map->sink_ops = sink;
	map->sink = o.sink ? &map->sink_ops : NULL;
	map->sink_ctx = o.sink_ctx;
	map->verdict = o.verdict;
	map->verdict_ctx = o.verdict_ctx;
	map->worker_init = o.worker_init;
	map->worker_init_ctx = o.worker_init_ctx;
	err = map_set_txqs(map, o.txqs, o.ncpus);
	if (err)
		goto out_workers;

	for (i = 0; i < o.ncpus; i++) {
		if (o.flags & UCM_CPUMAP_F_INLINE)
			err = worker_inline(map, i);
		else
			err = worker_start(map, i, o.cpus[i], o.qsize);
		if (err)
			goto out_workers;
		map->nworkers = i + 1;
	}
	return map;

out_workers:
	ucm_cpumap__destroy(map);
	return ucm_err_ptr(err);
}

void ucm_cpumap__stop(struct ucm_cpumap *map)
{
	struct ucm_cpumap_producer *prod;
	struct ucm_worker *wk;
	uint32_t i;

	if (!map || map->stopped)
		return;
	/* 1. Whatever producers still stage goes to the rings: their
	 *    threads have stopped, so their bulk queues are ours now. An
	 *    inline producer must have stopped itself (its sink is its
	 *    thread's): anything it still holds goes home undelivered. */
	for (prod = map->producers; prod; prod = prod->next) {
		if (prod->inline_w < 0) {
			ucm_cpumap_producer__flush(prod);
			continue;
		}
		if (prod->bq_count[prod->inline_w]) {
			uint64_t base[UCM_CPUMAP_BULK_SIZE];
			uint32_t n = prod->bq_count[prod->inline_w];

			pr_warn("cpumap: inline producer %d not stopped: %u staged frames returned undelivered\n",
				prod->inline_w, n);
			desc_to_base(map, bq_desc(&prod->bq[prod->inline_w]), base, n);
			ucm_pool_recycle_direct(prod->pool, base, n, UCM_LOC_BQ);
			prod->bq_count[prod->inline_w] = 0;
		}
		wk = map->workers[prod->inline_w];
		if (wk->nheld) {
			/* Its sink is its own thread's, which no longer runs
			 * it: they cannot be delivered. */
			STAT_ADD(wk->stats.drop_reason[UCM_DROP_SINK], wk->nheld);
			STAT_ADD(wk->stats.drops, wk->nheld);
			worker_ret_add(wk, wk->held_base, wk->nheld);
			wk->nheld = 0;
		}
		/* Every stamped bulk's packets are gone now: sink_hist
		 * counts each bulk wait_hist did. */
		worker_lat_done(wk);
		if (wk->npend)
			worker_lat_record(wk, ucm_now_ns());
		worker_return(wk);
	}
	/* 2. Each worker drains its ring, closes its sink and exits. */
	if (!(map->flags & UCM_CPUMAP_F_INLINE))
		for (i = 0; i < map->nworkers; i++)
			worker_stop(map->workers[i]);
	map->stopped = true;
}

void ucm_cpumap__destroy(struct ucm_cpumap *map)
{
	struct ucm_cpumap_producer *prod, *next;
	uint32_t i;

	if (!map)
		return;
	ucm_cpumap__stop(map);
	for (i = 0; i < map->nworkers; i++) {
		if (map->workers[i]->ring && ucm_ring__count(map->workers[i]->ring))
			pr_warn("cpumap: worker %u exited with %u ring entries queued\n",
				i, ucm_ring__count(map->workers[i]->ring));
		worker_free(map->workers[i]);
	}
	for (prod = map->producers; prod; prod = next) {
		next = prod->next;
		producer_free(prod);
	}
	pthread_mutex_destroy(&map->lock);
	free(map->workers);
	free(map->txqs);
	free(map);
}

/* The null sink: takes every batch, delivers nothing anywhere. */
static int null_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		     const uint64_t *addrs, uint32_t n)
{
	return 0;
}

const struct ucm_sink_ops ucm_sink_null = {
	.sz = sizeof(struct ucm_sink_ops),
	.xmit = null_xmit,
};

/* ---- statistics ------------------------------------------------------------ */

uint32_t ucm_cpumap__nworkers(const struct ucm_cpumap *map)
{
	return map->nworkers;
}

int ucm_cpumap__worker_cpu(const struct ucm_cpumap *map, uint32_t w)
{
	if (w >= map->nworkers)
		return ucm_err(-EINVAL);
	return map->workers[w]->cpu;
}

int ucm_cpumap__prewake_on(struct ucm_cpumap *map, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u32 = EP_ARRIVAL };
	uint32_t i, j;
	int err;

	if (!map || fd < 0)
		return ucm_err(-EINVAL);
	if (!(map->flags & UCM_CPUMAP_F_PREWAKE)) {
		pr_warn("cpumap: no pre-wake: create the map with UCM_CPUMAP_F_PREWAKE\n");
		return ucm_err(-EINVAL);
	}
	for (i = 0; i < map->nworkers; i++) {
		if (!epoll_ctl(map->workers[i]->epfd, EPOLL_CTL_ADD, fd, &ev))
			continue;
		err = -errno;
		pr_warn("cpumap: worker %u: cannot wait on fd %d: %s\n", i, fd, strerror(-err));
		for (j = 0; j < i; j++)
			epoll_ctl(map->workers[j]->epfd, EPOLL_CTL_DEL, fd, NULL);
		return ucm_err(err);
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
	o.drops = READ_ONCE(s->drops);
	o.events = READ_ONCE(s->events);
	o.wakeups = READ_ONCE(s->wakeups);
	ucm_stats_out(st, sz, &o, sizeof(o));
	return 0;
}
