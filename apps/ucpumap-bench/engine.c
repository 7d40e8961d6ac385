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
 *   pw-PxW         - P producers into W workers (1x1, 2x2, 4x4, 4x1, 1x4),
 *                    as ucpumapd with P queues and W workers: each producer
 *                    owns a pool of the UMEM and steers its flows over the
 *                    workers by ucpumapd's L4 hash; the rate is the sum of
 *                    the workers'. pw-4x4 against pw-1x1 is the engine's
 *                    scaling. The threads go on --pw-cpus, none shared; a
 *                    row needing more CPUs than the host has is skipped,
 *                    or with --shared-cpus run on shared CPUs (a
 *                    functional run: the frames' audit, not a measure)
 *   pw-PxW-lanes   - the same (2x2, 4x4, 4x1) with a lane per producer in
 *                    each worker (UCM_CPUMAP_F_LANES) instead of one
 *                    multi-producer ring a worker: against pw-PxW, what
 *                    the shared ring's contention costs
 * Rows run interleaved, round after round, so drift hits all alike. The
 * pairs compared are engine_report.c's eng_pairs[]; each one's note names
 * what it measures (the kernel patch it reproduces, where there is one).
 */
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ucpumap/cpumap.h"
#include "opts.h"
#include "util.h"
#include "bench.h"
#include "engine.h"

static const struct eng_row eng_rows[] = {
	{ .name = "recycle", .what = "worker returns frames via the recycle ring" },
	{ .name = "no-recycle", .what = "worker releases frames to the backing stack",
	  .cpumap_flags = UCM_CPUMAP_F_NO_RECYCLE },
	{ .name = "direct-bulk", .what = "owner returns completions in bulk into its cache",
	  .completion = true },
	{ .name = "no-direct-bulk", .what = "owner returns completions via its recycle ring",
	  .umem_flags = UCM_UMEM_F_NO_DIRECT_BULK, .completion = true },
	{ .name = "no-latency", .what = "recycle without the latency histograms' stamps",
	  .cpumap_flags = UCM_CPUMAP_F_NO_LATENCY },
	{ .name = "mp-ring", .what = "recycle through a multi-producer worker ring",
	  .mp_ring = true },
	{ .name = "pw-1x1", .what = "P->W: 1 producer into 1 worker, on --pw-cpus",
	  .producers = 1, .workers = 1 },
	{ .name = "pw-2x2", .what = "P->W: 2 producers, a pool each, into 2 workers",
	  .producers = 2, .workers = 2 },
	{ .name = "pw-4x4", .what = "P->W: 4 into 4; against pw-1x1, the scaling",
	  .producers = 4, .workers = 4 },
	{ .name = "pw-4x1", .what = "P->W: 4 producers into 1 worker's ring",
	  .producers = 4, .workers = 1 },
	{ .name = "pw-1x4", .what = "P->W: 1 producer steering over 4 workers",
	  .producers = 1, .workers = 4 },
	{ .name = "pw-2x2-lanes", .what = "P->W: 2 into 2, a lane per producer and worker",
	  .producers = 2, .workers = 2, .cpumap_flags = UCM_CPUMAP_F_LANES },
	{ .name = "pw-4x4-lanes", .what = "P->W: 4 into 4 through lanes; against pw-4x4",
	  .producers = 4, .workers = 4, .cpumap_flags = UCM_CPUMAP_F_LANES },
	{ .name = "pw-4x1-lanes", .what = "P->W: 4 producers into 1 worker's 4 lanes",
	  .producers = 4, .workers = 1, .cpumap_flags = UCM_CPUMAP_F_LANES },
};
#define ENG_NROWS	((int)(sizeof(eng_rows) / sizeof(eng_rows[0])))
_Static_assert(ENG_NROWS <= ENG_MAX_ROWS, "raise ENG_MAX_ROWS for the rows table");

static int eng_parse_rows(const char *s, struct eng_cfg *cfg)
{
	char *copy, *tok, *save = NULL;
	int i, ok = 0;

	if (list_check(s, "engine: --rows"))
		return -1;
	copy = strdup(s);
	if (!copy)
		return -1;
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
		cfg->rows_given = true;
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
	OPT_DEF("pw-cpus", OPT_CPUS, struct eng_cfg, pw_cpu, .metavar = "LIST",
		.count = OPT_REF(struct eng_cfg, n_pw_cpu), .text = OPT_REF(struct eng_cfg, pw_cpus),
		.help = "CPUs of the P->W rows, none shared: the producers on the first P, "
			"the workers on the next W (default: every CPU we may use, in order; "
			"a row that needs more than there are is skipped, or refused when "
			"--rows names it)"),
	OPT_DEF("shared-cpus", OPT_FLAG, struct eng_cfg, shared,
		.help = "run a P->W row of more threads than --pw-cpus has CPUs on them, "
			"in turn, sharing them (its W workers still on W CPUs): a functional "
			"run on a small host, not a measure"),
	/* 4 KiB frames: 65536 of them are 256 MiB of UMEM. */
	OPT_DEF("frames", OPT_POW2, struct eng_cfg, frames, .lo = ENG_FRAMES_MIN, .hi = 65536,
		.metavar = "N", .seen = OPT_REF(struct eng_cfg, frames_set),
		.help = "frames in the pool, power of two (default: as many as the worker "
			"ring holds with the latency stamps, half of --qsize, at least "
			xstr(ENG_FRAMES_MIN) "; a P->W row's P pools share that), so the "
			"producer is throttled by its pool and nothing is dropped; more floods "
			"the worker and drops at enqueue"),
	OPT_DEF("qsize", OPT_POW2, struct eng_cfg, qsize, .lo = UCM_CPUMAP_QSIZE_MIN,
		.hi = UCM_CPUMAP_QSIZE_MAX, .flags = OPT_F_DEFAULT, .metavar = "N",
		.help = "worker ring size, power of two"),
	OPT_DEF("json", OPT_OUTFILE, struct eng_cfg, json, .metavar = "FILE",
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
"each row: median and min-max over the rounds, rows interleaved. The pw-PxW\n"
"rows run P producers, each with its own pool, into W workers, on --pw-cpus;\n"
"their rate is the sum of the workers'.\n",
	.tail = "Rows:\n",
	.tail_fn = eng_rows_help,
	.opts = eng_opts,
};

/* Return 0, OPTS_HELP, or -1 after a message. */
static int eng_parse(int argc, char **argv, struct eng_cfg *cfg)
{
	int two[2], n, ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->rounds = 10;
	cfg->seconds = 1;
	cfg->warmup = 0.2;
	/* The first two CPUs this process may use; with one, both on it. */
	n = cpus_usable(two, 2);
	cfg->producer_cpu = n ? two[0] : 0;
	cfg->worker_cpu = n > 1 ? two[1] : cfg->producer_cpu;
	cfg->qsize = UCM_CPUMAP_QSIZE_DEFAULT;
	memset(cfg->want, 1, sizeof(cfg->want));
	ret = opts_parse(&eng_cmd, cfg, argc, argv);
	if (!ret && !cfg->frames_set)	/* the default: what the ring holds */
		cfg->frames = eng_frames(cfg, 1);
	return ret;
}

/* Every selected row, interleaved, round after round: the reverse order
 * every other round, as datapath's. */
static int eng_run_rounds(struct eng_bench *eb)
{
	const struct eng_cfg *cfg = &eb->cfg;
	int r, i, j, err;

	for (r = 0; r < cfg->rounds; r++) {
		for (j = 0; j < eb->nrows; j++) {
			struct eng_result *res;

			i = r % 2 ? eb->nrows - 1 - j : j;
			res = &eb->res[i][r];

			if (!cfg->want[i] || eb->skipped[i][0])
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

/* The P->W rows' CPUs without --pw-cpus: every CPU we may run on, in order. */
static void eng_pw_default(struct eng_cfg *cfg)
{
	cfg->n_pw_cpu = cpus_usable(cfg->pw_cpu, APP_MAX_CPUS);
}

/*
 * Each selected P->W row that needs more CPUs than --pw-cpus gives: an
 * error, since the list was asked for; without it, the row is skipped,
 * with why. With --shared-cpus such a row runs on the CPUs there are,
 * marked shared, as long as its workers have one each (the cpumap places
 * a worker a CPU). Return 0, or -1 after a message.
 */
static int eng_pw_fit(struct eng_bench *eb)
{
	struct eng_cfg *cfg = &eb->cfg;

	if (!cfg->pw_cpus)
		eng_pw_default(cfg);
	for (int i = 0; i < eb->nrows; i++) {
		const struct eng_row *row = &eb->rows[i];
		int need = row->producers + row->workers, np = row->producers, nw = row->workers;
		const char *ps = np == 1 ? "" : "s", *ws = nw == 1 ? "" : "s";

		if (!cfg->want[i] || !row->workers || need <= cfg->n_pw_cpu)
			continue;
		eb->shared[i] = cfg->shared && nw <= cfg->n_pw_cpu;
		if (eb->shared[i])
			continue;
		if (cfg->pw_cpus && cfg->shared) {
			fprintf(stderr, "engine: --pw-cpus %s: %d CPU%s, but %s has %d workers, a CPU "
				"each even with --shared-cpus\n", cfg->pw_cpus, cfg->n_pw_cpu,
				cfg->n_pw_cpu == 1 ? "" : "s", row->name, nw);
			return -1;
		}
		if (cfg->pw_cpus) {
			fprintf(stderr, "engine: --pw-cpus %s: %d CPU%s, but %s needs %d (%d "
				"producer%s, then %d worker%s, none shared); --shared-cpus shares "
				"them\n", cfg->pw_cpus, cfg->n_pw_cpu, cfg->n_pw_cpu == 1 ? "" : "s",
				row->name, need, np, ps, nw, ws);
			return -1;
		}
		if (cfg->rows_given && cfg->shared) {
			fprintf(stderr, "engine: --rows %s: its %d workers need a CPU each even "
				"with --shared-cpus, and this process may use %d: take it out of "
				"--rows\n", row->name, nw, cfg->n_pw_cpu);
			return -1;
		}
		if (cfg->rows_given) {
			fprintf(stderr, "engine: --rows %s: it needs %d CPUs (%d producer%s, %d "
				"worker%s, none shared), and this process may use %d: take it out "
				"of --rows, or add --shared-cpus\n", row->name, need, np, ps, nw, ws,
				cfg->n_pw_cpu);
			return -1;
		}
		if (cfg->shared)
			snprintf(eb->skipped[i], sizeof(eb->skipped[i]), "needs %d CPUs for its %d "
				 "workers, a CPU each even with --shared-cpus, this host has %d",
				 nw, nw, cfg->n_pw_cpu);
		else
			snprintf(eb->skipped[i], sizeof(eb->skipped[i]), "needs %d CPUs (%d "
				 "producer%s, %d worker%s, none shared), this host has %d", need,
				 np, ps, nw, ws, cfg->n_pw_cpu);
	}
	return 0;
}

static void eng_header(const struct eng_bench *eb)
{
	const struct eng_cfg *cfg = &eb->cfg;
	bool one = false, pw = false;

	for (int i = 0; i < eb->nrows; i++) {
		one |= cfg->want[i] && !eb->rows[i].workers;
		pw |= cfg->want[i] && eb->rows[i].workers;
	}
	printf("ucpumap engine benchmark: cpumap, null sink; %d-byte IPv4/UDP frames, worker ring %u, %d rounds x %.2f s per row, rows interleaved\n",
	       ENG_PKT_LEN, cfg->qsize, cfg->rounds, cfg->seconds);
	if (one)
		printf("producer on CPU %d, %u frames -> 1 worker on CPU %d\n",
		       cfg->producer_cpu, cfg->frames, cfg->worker_cpu);
	if (pw) {
		printf("pw-PxW: P producers on the first P of CPUs ");
		for (int c = 0; c < cfg->n_pw_cpu; c++)
			printf("%s%d", c ? "," : "", cfg->pw_cpu[c]);
		printf(", W workers on the next W; frames per pool: %s; %d flows by ucpumapd's L4 hash\n",
		       cfg->frames_set ? "--frames" : "half the worker ring over P", ENG_FLOWS);
	}
	for (int i = 0; i < eb->nrows; i++) {
		if (cfg->want[i] && eb->skipped[i][0])
			printf("%s: skipped, %s\n", eb->rows[i].name, eb->skipped[i]);
		if (cfg->want[i] && eb->shared[i])
			printf("%s: on shared CPUs (--shared-cpus): a functional run, not a measure; "
			       "its rates measure time-sharing\n", eb->rows[i].name);
	}
	printf("\n");
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
	if (eng_pw_fit(eb))
		return 2;
	if (cfg->producer_cpu == cfg->worker_cpu) {
		fprintf(stderr, "engine: warning: producer and worker share CPU %d; the rates measure time-sharing\n",
			cfg->worker_cpu);
		/* The one-producer rows are shared then: said in the JSON and
		 * the tables, no verdict. */
		for (int i = 0; i < eb->nrows; i++)
			if (!eb->rows[i].workers)
				eb->shared[i] = true;
	}

	eng_header(eb);
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

