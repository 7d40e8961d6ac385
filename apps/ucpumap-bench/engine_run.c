// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench engine: one run of one row. The UMEM with a pool per
 * producer, the cpumap and its workers, a thread per producer that feeds
 * them as an RX thread does, and the counters read around the measured
 * window; then every frame must be home.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/pkt.h"
#include "ucpumap/ring.h"
#include "ucpumap/steer.h"
#include "util.h"
#include "engine.h"

/* ucpumapd's default frame. */
#define ENG_FRAME_SIZE		4096
/* Data where AF_XDP puts it: after XDP_PACKET_HEADROOM. */
#define ENG_DATA_OFF		256
/* The frames' UDP source port; the P->W rows' flow f has ENG_SPORT + f. */
#define ENG_SPORT		12345
/*
 * The engine hands every frame from one CPU to another, so its rate
 * follows the cost of moving a cache line between them. A 20 ms probe
 * before and after each run measures that round trip; on a virtual
 * machine the host's placement of the vCPUs moves it by 10x. Runs whose
 * two probes both fall below ENG_RTT_SPLIT_NS ("near") or both above
 * ("far") are summarised apart, mixed ones only in the overall figures.
 */
#define ENG_RTT_PROBE_S		0.02
/* One producer batch: the NAPI budget. */
#define ENG_RX_BATCH		64

/* The steering table holds a worker in a byte. */
_Static_assert(ENG_PW_MAX <= 256, "a worker's index in steer[]");

/*
 * Frames per pool: --frames, or half of --qsize in all (ENG_FRAMES_MIN
 * says why), shared by the producers: in the worst case every frame of
 * every pool waits in one worker's ring, and it does not overflow.
 */
uint32_t eng_frames(const struct eng_cfg *cfg, uint32_t nprod)
{
	uint32_t f = cfg->qsize / 2 / nprod;

	if (cfg->frames_set)
		return cfg->frames;
	while (f & (f - 1))	/* a power of two, as a pool's size is */
		f &= f - 1;
	return f > ENG_FRAMES_MIN ? f : ENG_FRAMES_MIN;
}

/*
 * One run. The main thread sets it up, starts a thread per producer, stops
 * them with @stop and joins them before it reads anything a producer wrote
 * (its @err); the steering table is written before the threads start and
 * only read after. Each producer thread uses its own struct eng_prod alone.
 */
struct eng_run;

struct eng_prod {
	struct eng_run *run;
	struct ucm_pool *pool;		/* its own: it is the owner, as an RX thread */
	struct ucm_cpumap_producer *prod;
	int cpu;
	uint32_t flow;			/* the next frame's flow: steer[] */
	int err;
	pthread_t thr;
};

struct eng_run {
	const struct eng_row *row;
	struct ucm_umem *umem;
	struct ucm_cpumap *map;
	struct ucm_ring *comp;		/* completion-shaped rows (one producer) */
	uint32_t nprod, nworkers;
	uint32_t frames;		/* per pool */
	int wcpu[ENG_PW_MAX];
	struct eng_prod prod[ENG_PW_MAX];
	uint8_t steer[ENG_FLOWS];	/* a flow's worker */
	int stop;			/* set by the main thread, atomically */
};

/* Completion-shaped sink: keep the frames and pass them back to the owner,
 * as a TX ring hands frames to the completion ring. */
static int comp_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		     const uint64_t *addrs, uint32_t n)
{
	struct eng_run *run = ctx;

	/* Sized for every frame in the pool: cannot overflow. */
	if (ucm_ring__produce_sp(run->comp, addrs, n) != n)
		abort();
	return 0;
}

static const struct ucm_sink_ops comp_sink = {
	.sz = sizeof(struct ucm_sink_ops),
	.xmit = comp_xmit,
	.flags = UCM_SINK_F_KEEP,
};

static void eng_template(uint8_t *p, uint16_t sport)
{
	static const uint8_t eth[14] = { 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00 };
	static const uint8_t src[4] = { 198, 18, 0, 1 }, dst[4] = { 198, 18, 0, 2 };

	memcpy(p, eth, sizeof(eth));
	udp_build(p + 14, ENG_PKT_LEN - 14, false, src, dst, sport, 9000);
}

/*
 * The P->W rows' steering: flow f is the template from source port
 * ENG_SPORT + f, and goes to the worker ucpumapd's L4 hash picks for it.
 * Producer p's frames are flows p, p + P, p + 2P, ... in turn: the flows
 * of one RX queue, which RSS keeps apart from the other queues'.
 */
static int eng_steer_table(struct eng_run *run)
{
	struct ucm_steer_cfg sc = { .policy = UCM_STEER_L4_HASH,
				    .nworkers = run->nworkers,
				    .flags = UCM_STEER_F_IPV4 };
	uint8_t buf[ENG_PKT_LEN];
	struct ucm_pkt pkt;
	uint32_t rr = 0, p;

	for (uint32_t f = 0; f < ENG_FLOWS; f++) {
		eng_template(buf, ENG_SPORT + f);
		if (ucm_pkt__parse(&pkt, buf, sizeof(buf)) != UCM_DROP_NONE)
			return -EINVAL;
		run->steer[f] = ucm_steer__pick(&sc, &pkt, &rr);
	}
	for (p = 0; p < run->nprod; p++)
		run->prod[p].flow = p;
	return 0;
}

static void *eng_producer(void *arg)
{
	struct eng_prod *p = arg;
	struct eng_run *run = p->run;
	bool steer = run->row->workers;
	uint64_t addrs[ENG_RX_BATCH];
	uint32_t w = 0;
	int n, i;

	pin_self(p->cpu);
	ucm_pool__set_owner(p->pool);
	while (!__atomic_load_n(&run->stop, __ATOMIC_RELAXED)) {
		if (run->comp) {
			n = ucm_ring__consume(run->comp, addrs, ENG_RX_BATCH);
			if (n)
				ucm_umem__put_bulk(run->umem, addrs, n);
		}
		n = ucm_pool__alloc_bulk(p->pool, addrs, ENG_RX_BATCH);
		if (n < 0) {
			p->err = n;
			break;
		}
		if (!n) {
			/* Every frame is out: like an RX queue whose fill ring
			 * ran dry, wait a moment before polling again. */
			for (i = 0; i < 16; i++)
				cpu_relax();
			continue;
		}
		/* What an RX thread does with its RX descriptors: pass
		 * address and length on, without touching the frame, to
		 * the worker the XDP program chose. */
		for (i = 0; i < n; i++) {
			if (steer) {
				w = run->steer[p->flow];
				p->flow += run->nprod;
				if (p->flow >= ENG_FLOWS)
					p->flow -= ENG_FLOWS;
			}
			if (ucm_cpumap_producer__enqueue(p->prod, w,
							 addrs[i] + ENG_DATA_OFF,
							 ENG_PKT_LEN))
				ucm_pool__put(p->pool, addrs[i]);	/* never lost */
		}
		ucm_cpumap_producer__flush(p->prod);
	}
	/* Last act of an owner: the UMEM may now drain our cache. */
	ucm_pool__clear_owner(p->pool);
	return NULL;
}

struct eng_snap {
	double t;
	double steal;			/* every CPU of the run, seconds */
	uint64_t wproc[ENG_PW_MAX];	/* each worker's processed */
	uint64_t src, drops;		/* enqueued, over every producer and worker */
	struct ucm_pool_stats p[ENG_PW_MAX];
};

static void eng_snapshot(const struct eng_run *run, struct eng_snap *s)
{
	struct ucm_cpumap_enqueue_stats e;
	struct ucm_cpumap_worker_stats ws;
	uint32_t p, w;

	s->t = now_sec();
	s->steal = 0;
	s->src = s->drops = 0;
	for (w = 0; w < run->nworkers; w++) {
		s->steal += cpu_steal_sec(run->wcpu[w]);
		ucm_cpumap__worker_stats(run->map, w, &ws, sizeof(ws));
		s->wproc[w] = ws.processed;
	}
	for (p = 0; p < run->nprod; p++) {
		s->steal += cpu_steal_sec(run->prod[p].cpu);
		ucm_pool__stats(run->prod[p].pool, &s->p[p], sizeof(s->p[p]));
		for (w = 0; w < run->nworkers; w++) {
			ucm_cpumap_producer__enqueue_stats(run->prod[p].prod, w, &e, sizeof(e));
			s->src += e.processed;
			s->drops += e.drops;
		}
	}
}

/* Add the pool's counts from @a to @b into @d. */
#define DELTA(f) (d->f += b->f - a->f)
static void eng_pool_delta(const struct ucm_pool_stats *a, const struct ucm_pool_stats *b,
			   struct ucm_pool_stats *d)
{
	DELTA(alloc_fast);
	DELTA(alloc_slow);
	DELTA(alloc_empty);
	DELTA(alloc_refill);
	DELTA(alloc_exhausted);
	DELTA(recycle_cached);
	DELTA(recycle_cache_full);
	DELTA(recycle_ring);
	DELTA(recycle_ring_full);
	DELTA(recycle_released);
	DELTA(hold);
	DELTA(release);
}
#undef DELTA

/* What the run did between two snapshots. */
static void eng_result_of(const struct eng_run *run, const struct eng_snap *a,
			  const struct eng_snap *b, struct eng_result *res)
{
	double dt = b->t - a->t;
	uint32_t p, w;

	res->dst_mpps = 0;
	for (w = 0; w < run->nworkers; w++) {
		res->worker_mpps[w] = (b->wproc[w] - a->wproc[w]) / dt / 1e6;
		res->dst_mpps += res->worker_mpps[w];
	}
	res->src_mpps = (b->src - a->src) / dt / 1e6;
	res->drop_mpps = (b->drops - a->drops) / dt / 1e6;
	res->steal = (b->steal - a->steal) / ((run->nprod + run->nworkers) * dt);
	memset(&res->pool, 0, sizeof(res->pool));
	for (p = 0; p < run->nprod; p++)
		eng_pool_delta(&a->p[p], &b->p[p], &res->pool);
}

/* Where a run's threads go (eng_cpu()). */
static void eng_place(const struct eng_cfg *cfg, struct eng_run *run)
{
	const struct eng_row *row = run->row;
	uint32_t i;

	run->nprod = eng_nprod(row);
	run->nworkers = eng_nworkers(row);
	for (i = 0; i < run->nprod; i++)
		run->prod[i].cpu = eng_cpu(cfg, row, i);
	for (i = 0; i < run->nworkers; i++)
		run->wcpu[i] = eng_cpu(cfg, row, run->nprod + i);
}

/* The UMEM, a pool per producer, its frames filled in. */
static int eng_umem_open(struct eng_run *run)
{
	UCM_OPTS(ucm_umem_opts, uopts, .frame_size = ENG_FRAME_SIZE, .npools = run->nprod,
		 .frames_per_pool = run->frames, .flags = run->row->umem_flags);
	uint64_t i, n = (uint64_t)run->nprod * run->frames;
	uint8_t *area;

	run->umem = ucm_umem__create(&uopts);
	if (!run->umem)
		return -errno;
	area = ucm_umem__area(run->umem);
	for (i = 0; i < n; i++)
		eng_template(area + i * ENG_FRAME_SIZE + ENG_DATA_OFF, ENG_SPORT);
	for (i = 0; i < run->nprod; i++) {
		run->prod[i].run = run;
		run->prod[i].pool = ucm_umem__pool(run->umem, i);
	}
	return 0;
}

/* The completion ring, the cpumap and a producer per pool. */
static int eng_map_open(const struct eng_cfg *cfg, struct eng_run *run)
{
	const struct eng_row *row = run->row;
	/* One producer, as ucm_dp with one queue: single-producer worker
	 * rings. More, and every worker has more than one. */
	bool one = !row->mp_ring && run->nprod == 1;
	UCM_OPTS(ucm_cpumap_opts, copts, .cpus = run->wcpu, .ncpus = run->nworkers,
		 .qsize = cfg->qsize, .sink = row->completion ? &comp_sink : &ucm_sink_null,
		 .sink_ctx = run,
		 .flags = row->cpumap_flags | (one ? UCM_CPUMAP_F_ONE_PRODUCER : 0));
	uint32_t p;

	if (row->completion) {
		run->comp = ucm_ring__create(run->frames, UCM_RING_SP);
		if (!run->comp)
			return -errno;
	}
	run->map = ucm_cpumap__create(run->umem, &copts);
	if (!run->map)
		return -errno;
	for (p = 0; p < run->nprod; p++) {
		run->prod[p].prod = ucm_cpumap__producer_create(run->map, run->prod[p].pool);
		if (!run->prod[p].prod)
			return -errno;
	}
	return eng_steer_table(run);
}

/* Take down what eng_umem_open() and eng_map_open() set up, and check
 * that every frame came home. Return @err, or -errno when they did not. */
static int eng_close(struct eng_run *run, int err)
{
	struct ucm_pool_audit audit;
	uint64_t buf[ENG_RX_BATCH];
	uint32_t n;

	/* Flushes the producers' bulk queues and drains the workers. */
	if (run->map)
		ucm_cpumap__destroy(run->map);
	if (run->comp) {
		while ((n = ucm_ring__consume(run->comp, buf, ENG_RX_BATCH)))
			ucm_umem__put_bulk(run->umem, buf, n);
		ucm_ring__destroy(run->comp);
	}
	/* Every frame must be home: the audit balances and destroy frees. */
	if (ucm_umem__audit(run->umem, &audit, sizeof(audit)) && !err) {
		fprintf(stderr, "engine: %s: the frame audit failed\n", run->row->name);
		err = -EUCLEAN;
	}
	if (ucm_umem__destroy(run->umem, 1000) && !err) {
		fprintf(stderr, "engine: %s: frames did not come home\n", run->row->name);
		err = -EBUSY;
	}
	return err;
}

/* The producers run for the warm-up and the measured window. */
static int eng_measure(const struct eng_cfg *cfg, struct eng_run *run,
		       struct eng_result *res)
{
	struct eng_snap s0, s1;
	uint32_t p, started;
	int err = 0;

	for (started = 0; started < run->nprod; started++) {
		err = -pthread_create(&run->prod[started].thr, NULL, eng_producer,
				      &run->prod[started]);
		if (err)
			break;
	}
	if (!err) {
		sleep_sec(cfg->warmup);
		eng_snapshot(run, &s0);
		sleep_sec(cfg->seconds);
		eng_snapshot(run, &s1);
	}
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELAXED);
	for (p = 0; p < started; p++) {
		pthread_join(run->prod[p].thr, NULL);
		if (!err)
			err = run->prod[p].err;
	}
	if (!err)
		eng_result_of(run, &s0, &s1, res);
	return err;
}

/* One run of one row. Return 0, or -errno (and a message) when the engine
 * misbehaved: a setup failure, or frames that did not come home. */
int eng_run_once(const struct eng_cfg *cfg, const struct eng_row *row,
		 struct eng_result *res)
{
	struct eng_run run = { .row = row };
	int err;

	if (eng_nprod(row) > ENG_PW_MAX || eng_nworkers(row) > ENG_PW_MAX) {
		fprintf(stderr, "engine: %s: more than %d producers or workers\n", row->name,
			ENG_PW_MAX);
		return -E2BIG;
	}
	eng_place(cfg, &run);
	run.frames = eng_frames(cfg, run.nprod);
	res->rtt_ns[0] = cpu_pingpong_ns(run.prod[0].cpu, run.wcpu[0], ENG_RTT_PROBE_S);
	err = eng_umem_open(&run);
	if (err)
		return err;
	err = eng_map_open(cfg, &run);
	if (!err)
		err = eng_measure(cfg, &run, res);
	if (!err)
		res->rtt_ns[1] = cpu_pingpong_ns(run.prod[0].cpu, run.wcpu[0],
						 ENG_RTT_PROBE_S);
	return eng_close(&run, err);
}
