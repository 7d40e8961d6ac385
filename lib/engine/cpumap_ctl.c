// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cpumap's control path: options, create (a thread per worker, each
 * pinned, started and waited for), stop and destroy (kernel/bpf/cpumap.c's
 * teardown: the producers' bulk queues flushed, then each worker drains
 * its ring and exits), and producers. The map's calls run on the control
 * thread, a producer's on its RX thread (cpumap.h). The hot path is
 * cpumap.c, the statistics' readers cpumap_stats.c; the structures they
 * share, cpumap_priv.h.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "engine/cpumap_lat.h"
#include "engine/cpumap_priv.h"

#ifdef UCM_DEBUG
int ucm_cpumap_test_ring_flags(const struct ucm_cpumap *map, uint32_t w)
{
	if (!map || w >= map->nworkers || !map->workers[w] || !map->workers[w]->ring)
		return -1;
	return (int)map->workers[w]->ring->flags;
}
#endif

/* A producer's memory: create's undo, and destroy's last step. */
static void producer_free(struct ucm_cpumap_producer *prod)
{
	free(prod->ring);
	free(prod->fair);
	free(prod->stats);
	free(prod);
}

/* ---- lifecycle -------------------------------------------------------- */

static void worker_stop(struct ucm_worker *w)
{
	/* X1: pairs with X2 in worker_sleep() and X3 in
	 * ucm_cpumap_worker_main() (cpumap.c): a worker that sees the stop
	 * sees all that came before it. */
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	/* The stop is work: a worker that announced its sleep before our W2
	 * is woken by it; one that announces after re-checks stop (X2). */
	ucm_cpumap_worker_kick(w);
	pthread_join(w->thread, NULL);
}

static void worker_free(struct ucm_worker *w)
{
	uint32_t l;

	if (w->epfd >= 0)
		close(w->epfd);
	ucm_wake_fini(&w->wake);
	ucm_ring__destroy(w->ring);
	for (l = 0; l < UCM_CPUMAP_MAX_LANES; l++)
		ucm_ring__destroy(w->lane[l]);
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
		pr_warn("cpumap: worker %u's eventfd: %s%s\n", idx, strerror(-err),
			err == -EMFILE ? " (the open files' limit: ulimit -n, a unit's LimitNOFILE=)" : "");
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
			pr_warn("cpumap: worker %u's epoll set: %s%s\n", idx, strerror(-err),
				err == -EMFILE ? " (the open files' limit: ulimit -n, a unit's LimitNOFILE=)" : "");
			worker_free(w);
			return err;
		}
	}
	/* With lanes, the producers bring their rings (producer_lane_get()). */
	if (!(map->flags & UCM_CPUMAP_F_LANES)) {
		w->ring = ucm_ring__create(qsize, map->flags & UCM_CPUMAP_F_ONE_PRODUCER ?
						 UCM_RING_SP : UCM_RING_MP);
		if (!w->ring) {
			worker_free(w);
			return -ENOMEM;		/* the ring said so */
		}
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
	err = -pthread_create(&w->thread, &attr, ucm_cpumap_worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		pr_warn("cannot start the worker for CPU %d: %s\n", cpu,
			strerror(-err));
		worker_free(w);
		return err;
	}
	/* R2: pairs with R1 in ucm_cpumap_worker_main(): open_err is its. */
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
	int err;

	if (!src->sz) {
		pr_warn("sink: struct ucm_sink_ops has no sz: set .sz = sizeof(struct ucm_sink_ops) (or declare it with UCM_OPTS())\n");
		return -EINVAL;
	}
	err = UCM_OPTS_COPY(dst, src, ucm_sink_ops);
	if (err)
		return err;
	/* Here, so that ucm_dp__validate() and the dp's create refuse them
	 * before anything is attached, as the cpumap's create does. */
	if (!dst->xmit) {
		pr_warn("cpumap: a sink needs an xmit callback\n");
		return -EINVAL;
	}
	if (dst->flags & ~(uint32_t)(UCM_SINK_F_KEEP | UCM_SINK_F_POLL_WAKE)) {
		pr_warn("cpumap: sink flags %#x: unknown to this library\n", dst->flags);
		return -EINVAL;
	}
	return 0;
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
int ucm_cpumap_opts_check(struct ucm_cpumap_opts *o)
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
			UCM_CPUMAP_F_ONE_PRODUCER | UCM_CPUMAP_F_NO_FAIR | UCM_CPUMAP_F_LANES)) {
		pr_warn("cpumap: unknown flags 0x%x\n", o->flags);
		return -EINVAL;
	}
	if ((o->flags & UCM_CPUMAP_F_LANES) &&
	    (o->flags & (UCM_CPUMAP_F_INLINE | UCM_CPUMAP_F_ONE_PRODUCER))) {
		pr_warn("cpumap: lanes (UCM_CPUMAP_F_LANES) are rings between producers and workers: %s\n",
			o->flags & UCM_CPUMAP_F_INLINE ? "inline workers have none" :
			"with UCM_CPUMAP_F_ONE_PRODUCER the one ring is single-producer already");
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
	if (!o->ncpus || o->ncpus > UCM_CPUMAP_MAX_WORKERS) {
		pr_warn("cpumap: %u worker CPUs: give between 1 and %u\n", o->ncpus,
			UCM_CPUMAP_MAX_WORKERS);
		return -EINVAL;
	}
	if (!o->cpus && !(o->flags & UCM_CPUMAP_F_INLINE)) {
		pr_warn("cpumap: no cpus[]: give the %u workers' CPUs, or UCM_CPUMAP_F_INLINE\n",
			o->ncpus);
		return -EINVAL;
	}
	for (i = 0; i < o->ncpus && !(o->flags & UCM_CPUMAP_F_INLINE); i++) {
		if (!ucm_cpu_allowed(o->cpus[i])) {
			pr_warn("cpumap: CPU %d is not online or not in the calling thread's affinity mask, which new threads inherit (%ld online; taskset -c or a unit's CPUAffinity= sets the mask, which leaves isolcpus= CPUs out)\n",
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
	err = ucm_cpumap_opts_check(&o);
	if (err)
		return ucm_err_ptr(err);
	err = o.sink ? ucm_sink_ops_copy(&sink, o.sink) : 0;
	if (err)
		return ucm_err_ptr(err);
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
	map->qsize = o.qsize;
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
		wk = map->workers[prod->inline_w];
		ucm_cpumap_inline_unrun(prod, "not stopped");
		if (wk->nheld) {
			/* Its sink is its own thread's, which no longer runs
			 * it: they cannot be delivered. */
			STAT_ADD(wk->stats.drop_reason[UCM_DROP_SINK], wk->nheld);
			STAT_ADD(wk->stats.drops, wk->nheld);
			worker_ret_chains(wk, wk->held, wk->held_base, wk->nheld);
			worker_ret_add(wk, wk->held_base, wk->nheld);
			wk->nheld = 0;
			wk->nheld_chain = 0;
		}
		/* Every stamped bulk's packets are gone now: sink_hist
		 * counts each bulk wait_hist did. */
		worker_lat_done(wk);
		if (wk->npend)
			worker_lat_record(wk, ucm_now_ns());
		worker_return(wk);
		/* The close its thread did not call, here: every open has
		 * its close (cpumap.h), the tun sink's queue let go. */
		if (!prod->stopped) {
			if (map->sink && map->sink->close)
				map->sink->close(map->sink_ctx, prod->inline_w);
			prod->stopped = true;
		}
	}
	/* 2. Each worker drains its ring, closes its sink and exits. */
	if (!(map->flags & UCM_CPUMAP_F_INLINE))
		for (i = 0; i < map->nworkers; i++)
			worker_stop(map->workers[i]);
	WRITE_ONCE(map->stopped, true);	/* an inline producer used after it reads it */
}

/* Entries queued for worker @w, in its ring or all its lanes. */
static uint32_t worker_queued(const struct ucm_worker *w)
{
	uint32_t n, l, nl;

	if (w->ring)
		return ucm_ring__count(w->ring);
	nl = map_nlanes(w->map);
	for (n = 0, l = 0; l < nl; l++)
		n += ucm_ring__count(w->lane[l]);
	return n;
}

/* @n entries (descriptors; stamps skipped) nothing will deliver, their
 * frames tagged @loc (a chain's later ones UCM_LOC_CHAIN): home, each
 * chain's later frames first. Return: the packets. */
static uint32_t entries_home(struct ucm_cpumap *map, const uint64_t *e, uint32_t n,
			     enum ucm_frame_loc loc)
{
	uint64_t frag[UCM_CHAIN_MAX - 1], base;
	uint32_t i, k, pk = 0;

	for (i = 0; i < n; i++) {
		if (e[i] & RING_STAMP)
			continue;
		base = ucm_umem_desc_base(map->umem, e[i]);
		if (e[i] & UCM_DESC_CHAIN) {
			k = ucm_chain_frames(map->area, base, map->frame_size - 1, frag);
			ucm_umem_put_bulk_from(map->umem, frag, k, UCM_LOC_CHAIN, false);
		}
		ucm_umem_put_bulk_from(map->umem, &base, 1, loc, false);
		pk++;
	}
	return pk;
}

/* Once the workers are gone: what a producer used after the stop left in a
 * bulk queue or a ring goes home (the workers' joined, this thread is the
 * one consumer), so the UMEM can be destroyed. Said: a misuse. */
static void left_home(struct ucm_cpumap *map)
{
	struct ucm_cpumap_producer *prod;
	uint64_t e[UCM_CPUMAP_BATCH];
	uint32_t i, l, n, nl, pk = 0;
	struct ucm_worker *wk;

	for (prod = map->producers; prod; prod = prod->next)
		for (i = 0; i < map->nworkers; i++) {
			pk += entries_home(map, bq_desc(&prod->bq[i]), prod->bq_count[i],
					   UCM_LOC_BQ);
			prod->bq_count[i] = 0;
		}
	for (i = 0; i < map->nworkers && !(map->flags & UCM_CPUMAP_F_INLINE); i++) {
		wk = map->workers[i];
		nl = wk->ring ? 1 : map_nlanes(map);
		for (l = 0; l < nl; l++) {
			struct ucm_ring *r = wk->ring ? wk->ring : wk->lane[l];

			while ((n = ucm_ring__consume(r, e, ARRAY_SIZE(e))))
				pk += entries_home(map, e, n, UCM_LOC_WQ);
		}
	}
	if (pk)
		pr_warn("cpumap: %u packets enqueued after the stop (no worker to take them) returned undelivered\n",
			pk);
}

void ucm_cpumap__destroy(struct ucm_cpumap *map)
{
	struct ucm_cpumap_producer *prod, *next;
	uint32_t i;

	if (!map)
		return;
	ucm_cpumap__stop(map);
	left_home(map);
	for (i = 0; i < map->nworkers; i++) {
		uint32_t left = worker_queued(map->workers[i]);

		if (left)
			pr_warn("cpumap: worker %u exited with %u ring entries queued\n",
				i, left);
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

/* ---- producers -------------------------------------------------------- */

/*
 * UCM_CPUMAP_F_LANES, under map->lock: the lowest lane no producer holds,
 * its rings made in every worker the first time it is handed out. A lane
 * a destroyed producer held may still have entries for its workers: the
 * next holder adds behind them (one producer at a time, SPSC).
 * Return: the lane, or -errno.
 */
static int producer_lane_get(struct ucm_cpumap *map)
{
	uint32_t l, i;

	if (map->lanes_held == UINT64_MAX) {
		pr_warn("cpumap: all %u lanes (UCM_CPUMAP_F_LANES) have a producer: destroy one first, or make the map without lanes\n",
			UCM_CPUMAP_MAX_LANES);
		return -ENOSPC;
	}
	_Static_assert(UCM_CPUMAP_MAX_LANES == 64, "one bit a lane in lanes_held");
	l = __builtin_ctzll(~map->lanes_held);
	if (l == map->nlanes) {
		for (i = 0; i < map->nworkers; i++) {
			map->workers[i]->lane[l] = ucm_ring__create(map->qsize, UCM_RING_SP);
			if (!map->workers[i]->lane[l])
				goto err;
		}
		/* L1: pairs with L2 in map_nlanes() (cpumap_priv.h): the
		 * workers see lane[l] before they look at it. */
		__atomic_store_n(&map->nlanes, l + 1, __ATOMIC_RELEASE);
	}
	map->lanes_held |= 1ull << l;
	return (int)l;
err:
	while (i--) {
		ucm_ring__destroy(map->workers[i]->lane[l]);
		map->workers[i]->lane[l] = NULL;
	}
	return -ENOMEM;		/* the ring said so */
}

/* Inline: the producer takes a free worker, and opens its sink on this
 * thread, which will run its batches. Under map->lock. 0 or -errno. */
static int producer_inline_take(struct ucm_cpumap *map, struct ucm_cpumap_producer *prod)
{
	uint64_t all = map->nworkers < 64 ? (1ull << map->nworkers) - 1 : ~0ull;
	int err = 0;

	if ((map->inline_held & all) == all) {
		pr_warn("cpumap: inline mode has %u producers already, one a worker: destroy one first\n",
			map->nworkers);
		return -ENOSPC;
	}
	prod->inline_w = __builtin_ctzll(~map->inline_held);
	map->inline_held |= 1ull << prod->inline_w;
	if (map->sink && map->sink->open)
		err = map->sink->open(map->sink_ctx, prod->inline_w);
	if (err) {
		map->inline_held &= ~(1ull << prod->inline_w);
		return err < 0 ? err : -EIO;
	}
	return 0;
}

struct ucm_cpumap_producer *
ucm_cpumap__producer_create(struct ucm_cpumap *map, struct ucm_pool *pool)
{
	struct ucm_cpumap_producer *prod;
	uint32_t i;

	if (!map || !pool)
		return ucm_err_ptr(-EINVAL);
	if (pool->umem != map->umem) {
		pr_warn("cpumap: a producer's pool must be of the map's UMEM\n");
		return ucm_err_ptr(-EINVAL);
	}
	if (map->stopped) {
		pr_warn("cpumap: the map is stopped (its workers are gone): create producers before ucm_cpumap__stop()\n");
		return ucm_err_ptr(-EINVAL);
	}
	prod = aligned_alloc(UCM_CACHELINE,
			     (sizeof(*prod) +
			      map->nworkers * sizeof(struct ucm_bq) +
			      UCM_CACHELINE - 1) & ~(size_t)(UCM_CACHELINE - 1));
	if (!prod)
		return ucm_err_ptr(ucm_oom("a producer"));
	memset(prod, 0, sizeof(*prod) + map->nworkers * sizeof(struct ucm_bq));
	prod->stats = calloc(map->nworkers, sizeof(*prod->stats));
	prod->fair = calloc(map->nworkers, sizeof(*prod->fair));
	prod->ring = calloc(map->nworkers, sizeof(*prod->ring));
	if (!prod->stats || !prod->fair || !prod->ring) {
		producer_free(prod);
		return ucm_err_ptr(ucm_oom("a producer's counters"));
	}
	prod->map = map;
	prod->pool = pool;
	prod->inline_w = -1;
	prod->lane = -1;
	prod->fair_slot = -1;

	pthread_mutex_lock(&map->lock);
	if ((map->flags & UCM_CPUMAP_F_ONE_PRODUCER) && map->producers) {
		pthread_mutex_unlock(&map->lock);
		pr_warn("cpumap: the map was made for one producer (UCM_CPUMAP_F_ONE_PRODUCER) and has it: destroy that one first, or make the map without the flag\n");
		producer_free(prod);
		return ucm_err_ptr(-EBUSY);
	}
	if (map->flags & UCM_CPUMAP_F_INLINE) {
		int err = producer_inline_take(map, prod);

		if (err) {
			pthread_mutex_unlock(&map->lock);
			producer_free(prod);
			return ucm_err_ptr(err);
		}
	}
	if (map->flags & UCM_CPUMAP_F_LANES) {
		int l = producer_lane_get(map);

		if (l < 0) {
			pthread_mutex_unlock(&map->lock);
			producer_free(prod);
			return ucm_err_ptr(l);
		}
		prod->lane = l;
	}
	for (i = 0; i < map->nworkers; i++)
		prod->ring[i] = prod->lane >= 0 ? map->workers[i]->lane[prod->lane] :
						  map->workers[i]->ring;
	/* A slot for the fair share of shared rings (not inline, not lanes). */
	if (prod->inline_w < 0 && prod->lane < 0 && prod->ring[0] &&
	    (prod->ring[0]->flags & UCM_RING_MP) && ~map->fair_slots) {
		prod->fair_slot = __builtin_ctzll(~map->fair_slots);
		/* A mark left by the slot's last holder: out of date (the
		 * others may see the old one a moment more: a threshold). */
		for (i = 0; i < map->nworkers; i++) {
			prod->fair[i].mark = __atomic_load_n(&prod->ring[i]->prod.head,
							     __ATOMIC_RELAXED) -
					     (FAIR_RECENT + 1) * prod->ring[i]->size;
			WRITE_ONCE(map->workers[i]->fair_mark[prod->fair_slot],
				   prod->fair[i].mark);
		}
		__atomic_store_n(&map->fair_slots, map->fair_slots | 1ull << prod->fair_slot,
				 __ATOMIC_RELAXED);
	}
	prod->next = map->producers;
	map->producers = prod;
	pthread_mutex_unlock(&map->lock);
	return prod;
}

void ucm_cpumap_producer__stop(struct ucm_cpumap_producer *prod)
{
	struct ucm_cpumap *map = prod->map;

	if (prod->stopped) {
		/* What it staged since (a misuse, tolerated): on to the
		 * ring, or home inline, before a destroy frees its bulks. */
		if (prod->dirty)
			ucm_cpumap_producer__flush(prod);
		return;
	}
	ucm_cpumap_producer__flush(prod);
	if (prod->inline_w >= 0 && map->sink && map->sink->close)
		map->sink->close(map->sink_ctx, prod->inline_w);
	prod->stopped = true;
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
			if (prod->fair_slot >= 0)
				__atomic_store_n(&map->fair_slots,
						 map->fair_slots & ~(1ull << prod->fair_slot),
						 __ATOMIC_RELAXED);
			/* Its lane, with what it flushed, for the next one;
			 * its inline worker too (the sink closed in stop). */
			if (prod->lane >= 0)
				map->lanes_held &= ~(1ull << prod->lane);
			if (prod->inline_w >= 0)
				map->inline_held &= ~(1ull << prod->inline_w);
			break;
		}
	}
	pthread_mutex_unlock(&map->lock);
	producer_free(prod);
}
