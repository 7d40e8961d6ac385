// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench engine: the engine alone, no NIC and no tun.
 *
 * A producer thread (our RX thread: it owns the pool) allocates frames,
 * fills in each frame's header as the RX path does, and feeds them through
 * the cpumap's bulk queues to one worker on another CPU. The worker parses
 * each 64-byte UDP frame into its descriptor and hands the batch to a sink
 * that delivers nothing; the frames then go home. We count what the worker
 * processed per second (the "dst CPU" rate of the seeds' tables).
 *
 * Rows, each the engine with one mechanism on or off:
 *   recycle        - the worker returns frames through the pool's recycle
 *                    ring; the owner refills its cache from it
 *   no-recycle     - the worker gives frames straight back to the backing
 *                    stack; every allocation takes the locked slow path:
 *                    recycle against it is the recycle ring's gain
 *   direct-bulk    - frames come home the way TX completions do: the sink
 *                    passes them back to the producer, which returns them in
 *                    bulk as the owner, straight into its cache
 *   no-direct-bulk - the same with direct bulk recycling off: the owner's bulk
 *                    return goes through its own recycle ring: direct-bulk
 *                    against it is the direct return's gain
 *   no-latency     - recycle without the latency stamps (a clock read per
 *                    bulk flushed, two per worker batch): recycle against
 *                    it is their cost
 *   mp-ring        - recycle through a multi-producer worker ring, as with
 *                    more than one RX queue: recycle against it is the
 *                    single-producer ring's gain
 * Rows run interleaved, round after round, so drift hits all alike. The
 * pairs compared are engine_report.c's eng_pairs[]; each one's note names
 * what it measures (the kernel patch it reproduces, where there is one).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/ring.h"
#include "opts.h"
#include "util.h"
#include "bench.h"
#include "engine.h"

/*
 * Frames in the pool: by default as many as the worker ring holds, at least
 * ENG_FRAMES_MIN. A ring of --qsize entries holds 8/9 of that in packets
 * when each bulk of 8 takes an entry more for its latency stamp, so the
 * power of two it holds in every row is half of --qsize. The producer is
 * then throttled by its pool, as an RX queue is by its fill ring, and the
 * ring never overflows, so the rate is the worker's capacity. More frames
 * than the ring holds (--frames 8192 with the default ring) floods the
 * worker instead: drops at enqueue, the regime of the seeds' "bombed with
 * 27 Mpps" tables.
 */
#define ENG_FRAMES_MIN		256
/* Data where AF_XDP puts it: after XDP_PACKET_HEADROOM. */
#define ENG_DATA_OFF		256
#define ENG_PKT_LEN		64
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

static const struct eng_row eng_rows[] = {
	{ "recycle", "worker returns frames via the recycle ring", 0, 0, false, false },
	{ "no-recycle", "worker releases frames to the backing stack",
	  UCM_CPUMAP_F_NO_RECYCLE, 0, false, false },
	{ "direct-bulk", "owner returns completions in bulk into its cache",
	  0, 0, true, false },
	{ "no-direct-bulk", "owner returns completions via its recycle ring",
	  0, UCM_UMEM_F_NO_DIRECT_BULK, true, false },
	{ "no-latency", "recycle without the latency histograms' stamps",
	  UCM_CPUMAP_F_NO_LATENCY, 0, false, false },
	{ "mp-ring", "recycle through a multi-producer worker ring",
	  0, 0, false, true },
};
#define ENG_NROWS	((int)(sizeof(eng_rows) / sizeof(eng_rows[0])))
_Static_assert(ENG_NROWS <= ENG_MAX_ROWS, "raise ENG_MAX_ROWS for the rows table");

struct eng_run {
	const struct eng_row *row;
	struct ucm_umem *umem;
	struct ucm_pool *pool;
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer *prod;
	struct ucm_ring *comp;		/* completion-shaped rows */
	int cpu;
	int stop;		/* set by the main thread, atomically */
	int err;
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

static void eng_template(uint8_t *p)
{
	static const uint8_t eth[14] = { 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00 };
	static const uint8_t src[4] = { 198, 18, 0, 1 }, dst[4] = { 198, 18, 0, 2 };

	memcpy(p, eth, sizeof(eth));
	udp_build(p + 14, ENG_PKT_LEN - 14, false, src, dst, 12345, 9000);
}

static void *eng_producer(void *arg)
{
	struct eng_run *run = arg;
	uint64_t addrs[ENG_RX_BATCH];
	int n, i;

	pin_self(run->cpu);
	ucm_pool__set_owner(run->pool);
	while (!__atomic_load_n(&run->stop, __ATOMIC_RELAXED)) {
		if (run->comp) {
			n = ucm_ring__consume(run->comp, addrs, ENG_RX_BATCH);
			if (n)
				ucm_umem__put_bulk(run->umem, addrs, n);
		}
		n = ucm_pool__alloc_bulk(run->pool, addrs, ENG_RX_BATCH);
		if (n < 0) {
			run->err = n;
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
		 * address and length on, without touching the frame. */
		for (i = 0; i < n; i++)
			if (ucm_cpumap_producer__enqueue(run->prod, 0,
							 addrs[i] + ENG_DATA_OFF,
							 ENG_PKT_LEN))
				ucm_pool__put(run->pool, addrs[i]);	/* never lost */
		ucm_cpumap_producer__flush(run->prod);
	}
	/* Last act of an owner: the UMEM may now drain our cache. */
	ucm_pool__clear_owner(run->pool);
	return NULL;
}

struct eng_snap {
	double t;
	double steal;			/* both CPUs, seconds */
	struct ucm_cpumap_worker_stats w;
	struct ucm_cpumap_enqueue_stats e;
	struct ucm_pool_stats p;
};

static void eng_snapshot(struct eng_run *run, int wcpu, struct eng_snap *s)
{
	s->t = now_sec();
	s->steal = cpu_steal_sec(run->cpu) + cpu_steal_sec(wcpu);
	ucm_cpumap__worker_stats(run->map, 0, &s->w, sizeof(s->w));
	ucm_cpumap_producer__enqueue_stats(run->prod, 0, &s->e, sizeof(s->e));
	ucm_pool__stats(run->pool, &s->p, sizeof(s->p));
}

#define DELTA(f) (b->p.f - a->p.f)
static void eng_pool_delta(const struct eng_snap *a, const struct eng_snap *b,
			   struct ucm_pool_stats *d)
{
	d->alloc_fast = DELTA(alloc_fast);
	d->alloc_slow = DELTA(alloc_slow);
	d->alloc_empty = DELTA(alloc_empty);
	d->alloc_refill = DELTA(alloc_refill);
	d->alloc_exhausted = DELTA(alloc_exhausted);
	d->recycle_cached = DELTA(recycle_cached);
	d->recycle_cache_full = DELTA(recycle_cache_full);
	d->recycle_ring = DELTA(recycle_ring);
	d->recycle_ring_full = DELTA(recycle_ring_full);
	d->recycle_released = DELTA(recycle_released);
	d->hold = DELTA(hold);
	d->release = DELTA(release);
}
#undef DELTA

/* One run of one row. Return 0, or -errno (and a message) when the engine
 * misbehaved: a setup failure, or frames that did not come home. */
static int eng_run_once(const struct eng_cfg *cfg, const struct eng_row *row,
			struct eng_result *res)
{
	UCM_OPTS(ucm_umem_opts, uopts, .frame_size = 4096,
		 .frames_per_pool = cfg->frames, .flags = row->umem_flags);
	struct eng_run run = { .row = row, .cpu = cfg->producer_cpu };
	struct ucm_pool_audit audit;
	struct eng_snap s0, s1;
	pthread_t thr;
	uint8_t *area;
	uint64_t buf[ENG_RX_BATCH];
	uint32_t i, n;
	int err;

	res->rtt_ns[0] = cpu_pingpong_ns(cfg->producer_cpu, cfg->worker_cpu,
					 ENG_RTT_PROBE_S);
	run.umem = ucm_umem__create(&uopts);
	if (!run.umem)
		return -errno;
	run.pool = ucm_umem__pool(run.umem, 0);
	area = ucm_umem__area(run.umem);
	for (i = 0; i < cfg->frames; i++)
		eng_template(area + (uint64_t)i * 4096 + ENG_DATA_OFF);

	if (row->completion) {
		run.comp = ucm_ring__create(cfg->frames, UCM_RING_SP);
		if (!run.comp) {
			err = -errno;
			goto out_umem;
		}
	}
	{
		UCM_OPTS(ucm_cpumap_opts, copts, .cpus = &cfg->worker_cpu,
			 .ncpus = 1, .qsize = cfg->qsize,
			 .sink = row->completion ? &comp_sink : &ucm_sink_null,
			 .sink_ctx = &run, .flags = row->cpumap_flags |
				  /* one producer, as ucm_dp with one queue */
				  (row->mp_ring ? 0 : UCM_CPUMAP_F_ONE_PRODUCER));

		run.map = ucm_cpumap__create(run.umem, &copts);
	}
	if (!run.map) {
		err = -errno;
		goto out_comp;
	}
	run.prod = ucm_cpumap__producer_create(run.map, run.pool);
	if (!run.prod) {
		err = -errno;
		goto out_map;
	}
	err = -pthread_create(&thr, NULL, eng_producer, &run);
	if (err)
		goto out_map;

	sleep_sec(cfg->warmup);
	eng_snapshot(&run, cfg->worker_cpu, &s0);
	sleep_sec(cfg->seconds);
	eng_snapshot(&run, cfg->worker_cpu, &s1);
	__atomic_store_n(&run.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thr, NULL);
	err = run.err;
	res->rtt_ns[1] = cpu_pingpong_ns(cfg->producer_cpu, cfg->worker_cpu,
					 ENG_RTT_PROBE_S);

	res->dst_mpps = (s1.w.processed - s0.w.processed) / (s1.t - s0.t) / 1e6;
	res->src_mpps = (s1.e.processed - s0.e.processed) / (s1.t - s0.t) / 1e6;
	res->drop_mpps = (s1.e.drops - s0.e.drops) / (s1.t - s0.t) / 1e6;
	res->steal = (s1.steal - s0.steal) / (2 * (s1.t - s0.t));
	eng_pool_delta(&s0, &s1, &res->pool);

out_map:
	/* Flushes the producer's bulk queues and drains the worker. */
	ucm_cpumap__destroy(run.map);
out_comp:
	if (run.comp) {
		while ((n = ucm_ring__consume(run.comp, buf, ENG_RX_BATCH)))
			ucm_umem__put_bulk(run.umem, buf, n);
		ucm_ring__destroy(run.comp);
	}
out_umem:
	/* Every frame must be home: the audit balances and destroy frees. */
	if (ucm_umem__audit(run.umem, &audit, sizeof(audit)) && !err) {
		fprintf(stderr, "engine: %s: the frame audit failed\n", row->name);
		err = -EUCLEAN;
	}
	if (ucm_umem__destroy(run.umem, 1000) && !err) {
		fprintf(stderr, "engine: %s: frames did not come home\n", row->name);
		err = -EBUSY;
	}
	return err;
}

static int eng_parse_rows(const char *s, struct eng_cfg *cfg)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int i, ok = 0;

	memset(cfg->want, 0, sizeof(cfg->want));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ENG_NROWS; i++)
			if (!strcmp(tok, eng_rows[i].name))
				break;
		if (i == ENG_NROWS) {
			fprintf(stderr, "engine: unknown row '%s'; see --help for the rows\n", tok);
			free(copy);
			return -1;
		}
		cfg->want[i] = true;
		ok = 1;
	}
	free(copy);
	if (!ok)
		fprintf(stderr, "engine: --rows needs at least one row\n");
	return ok ? 0 : -1;
}

static int opt_rows(const struct opt *o, const char *arg, void *cfg)
{
	return eng_parse_rows(arg, cfg);
}

#define xstr(x) str(x)
#define str(x) #x

static const struct opt eng_opts[] = {
	OPT_DEF("rounds", OPT_UINT, struct eng_cfg, rounds, .short_opt = 'r', .lo = 1,
		.hi = ENG_MAX_ROUNDS, .flags = OPT_F_DEFAULT, .metavar = "N",
		.help = "rounds of every row, at most " xstr(ENG_MAX_ROUNDS)),
	OPT_DEF("seconds", OPT_SECONDS, struct eng_cfg, seconds, .short_opt = 's',
		.dlo = 0.05, .dhi = 3600, .flags = OPT_F_DEFAULT, .metavar = "S",
		.help = "measured seconds per run"),
	OPT_DEF("warmup", OPT_SECONDS, struct eng_cfg, warmup, .short_opt = 'w', .dhi = 3600,
		.flags = OPT_F_DEFAULT, .metavar = "S", .help = "seconds before measuring"),
	OPT_DEF("rows", OPT_CUSTOM, struct eng_cfg, want, .parse = opt_rows, .metavar = "LIST",
		.help = "comma-separated rows (default: all)"),
	OPT_DEF("producer-cpu", OPT_CPUS, struct eng_cfg, producer_cpu, .flags = OPT_F_DEFAULT,
		.metavar = "C", .help = "CPU of the producer"),
	OPT_DEF("worker-cpu", OPT_CPUS, struct eng_cfg, worker_cpu, .flags = OPT_F_DEFAULT,
		.metavar = "C", .help = "CPU of the worker"),
	/* 4 KiB frames: 65536 of them are 256 MiB of UMEM. */
	OPT_DEF("frames", OPT_POW2, struct eng_cfg, frames, .lo = ENG_FRAMES_MIN, .hi = 65536,
		.metavar = "N",
		.help = "frames in the pool, power of two (default: as many as the worker "
			"ring holds with the latency stamps, half of --qsize, at least "
			xstr(ENG_FRAMES_MIN) "), so the producer is "
			"throttled by its pool and nothing is dropped; more floods the worker "
			"and drops at enqueue"),
	OPT_DEF("qsize", OPT_POW2, struct eng_cfg, qsize, .lo = UCM_CPUMAP_QSIZE_MIN,
		.hi = UCM_CPUMAP_QSIZE_MAX, .flags = OPT_F_DEFAULT, .metavar = "N",
		.help = "worker ring size, power of two"),
	OPT_DEF("json", OPT_STRING, struct eng_cfg, json, .metavar = "FILE",
		.help = "write every run of every row as JSON"),
	{}
};

static void eng_rows_help(FILE *f)
{
	int i;

	for (i = 0; i < ENG_NROWS; i++)
		fprintf(f, "  %-15s %s\n", eng_rows[i].name, eng_rows[i].what);
}

static const struct opts_cmd eng_cmd = {
	.name = "engine",
	.invoked = "ucpumap-bench engine",
	.usage = "ucpumap-bench engine [options]",
	.doc =
"Feeds frames from a producer thread through the cpumap to one worker on\n"
"another CPU, whose sink delivers nothing, and prints the worker's rate for\n"
"each row: median and min-max over the rounds, rows interleaved.\n",
	.tail = "Rows:\n",
	.tail_fn = eng_rows_help,
	.opts = eng_opts,
};

/* Return 0, OPTS_HELP, or -1 after a message. */
static int eng_parse(int argc, char **argv, struct eng_cfg *cfg)
{
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->rounds = 10;
	cfg->seconds = 1;
	cfg->warmup = 0.2;
	cfg->producer_cpu = 0;
	cfg->worker_cpu = cpu_online_count() > 1 ? 1 : 0;
	cfg->qsize = UCM_CPUMAP_QSIZE_DEFAULT;
	memset(cfg->want, 1, sizeof(cfg->want));
	ret = opts_parse(&eng_cmd, cfg, argc, argv);
	if (!ret && !cfg->frames)	/* the default: what the ring holds */
		cfg->frames = cfg->qsize / 2 > ENG_FRAMES_MIN ? cfg->qsize / 2 : ENG_FRAMES_MIN;
	return ret;
}

/* Every selected row, interleaved, round after round. */
static int eng_run_rounds(struct eng_bench *eb)
{
	const struct eng_cfg *cfg = &eb->cfg;
	int r, i, err;

	for (r = 0; r < cfg->rounds; r++) {
		for (i = 0; i < eb->nrows; i++) {
			struct eng_result *res = &eb->res[i][r];

			if (!cfg->want[i])
				continue;
			err = eng_run_once(cfg, &eb->rows[i], res);
			if (err) {
				fprintf(stderr, "engine: row %s, round %d failed: %s\n",
					eb->rows[i].name, r + 1, strerror(-err));
				return -1;
			}
			fprintf(stderr, "  round %d/%d %-15s %6.2f Mpps  (cross-CPU round trip %.0f/%.0f ns, steal %.1f%%)\n",
				r + 1, cfg->rounds, eb->rows[i].name, res->dst_mpps,
				res->rtt_ns[0], res->rtt_ns[1], 100 * res->steal);
		}
	}
	return 0;
}

static int eng_main(struct eng_bench *eb, int argc, char **argv)
{
	struct eng_cfg *cfg = &eb->cfg;
	int err;

	eb->rows = eng_rows;
	eb->nrows = ENG_NROWS;
	err = eng_parse(argc, argv, cfg);
	if (err)
		return err == OPTS_HELP ? 0 : 2;
	if (cfg->producer_cpu == cfg->worker_cpu)
		fprintf(stderr, "engine: warning: producer and worker share CPU %d; the rates measure time-sharing\n",
			cfg->worker_cpu);

	printf("ucpumap engine benchmark: producer on CPU %d -> cpumap -> 1 worker on CPU %d, null sink\n",
	       cfg->producer_cpu, cfg->worker_cpu);
	printf("%d-byte IPv4/UDP frames, %u frames, worker ring %u, %d rounds x %.2f s per row, rows interleaved\n\n",
	       ENG_PKT_LEN, cfg->frames, cfg->qsize, cfg->rounds, cfg->seconds);
	if (eng_run_rounds(eb))
		return 1;
	eng_report(eb);
	if (cfg->json && eng_write_json(eb))
		return 1;
	return 0;
}

int bench_engine(int argc, char **argv)
{
	/* Every run's result: too big for the stack. */
	struct eng_bench *eb = calloc(1, sizeof(*eb));
	int rc;

	if (!eb) {
		fprintf(stderr, "engine: out of memory\n");
		return 1;
	}
	rc = eng_main(eb, argc, argv);
	free(eb);
	return rc;
}
