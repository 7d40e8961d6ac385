/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumap-bench engine, its own header: the rows, the options and the run
 * loop (engine.c), one run of a row (engine_run.c), and what the runs
 * measured, as tables and JSON (engine_report.c).
 *
 * The files share no variable: a struct eng_bench, made by engine.c,
 * holds the configuration, the rows and every run's result, and is passed
 * to the report. The main thread alone reads and writes it.
 */
#ifndef UCM_BENCH_ENGINE_H
#define UCM_BENCH_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "ucpumap/pool.h"
#include "util.h"

#define ENG_MAX_ROUNDS		64
/* Room for the rows table: engine.c checks that it fits. */
#define ENG_MAX_ROWS		16
/*
 * A run's two probes of the cross-CPU round trip both below this are
 * "near", both at or above it "far" (engine_run.c says why it matters).
 */
#define ENG_RTT_SPLIT_NS	300
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
/* The frames: 64-byte IPv4/UDP */
#define ENG_PKT_LEN		64
/*
 * The P->W rows' flows: as many as the datapath's many-flows rows. The
 * hash gives 4 workers 242, 253, 262 and 267 of them, 2 workers 509 and
 * 515: the few percent apart a real flow mix would be.
 */
#define ENG_FLOWS		1024
/* Producers, or workers, of a P->W row at most. */
#define ENG_PW_MAX		8

struct eng_row {
	const char *name;
	const char *what;
	uint32_t cpumap_flags;
	uint32_t umem_flags;
	bool completion;
	bool mp_ring;		/* worker ring MPSC: as with more than one RX queue */
	/* A P->W row: @producers threads, a pool each, into @workers, on
	 * --pw-cpus. 0: one producer on --producer-cpu into one worker on
	 * --worker-cpu. */
	int producers, workers;
};

struct eng_cfg {
	int rounds;
	double seconds, warmup;
	int producer_cpu, worker_cpu;
	/* The P->W rows' CPUs: producers on the first, workers on the next,
	 * in turn over the list with --shared-cpus (eng_cpu()) */
	int pw_cpu[APP_MAX_CPUS], n_pw_cpu;
	const char *pw_cpus;		/* --pw-cpus as given; NULL: ours, in order */
	bool shared;			/* --shared-cpus */
	uint32_t frames, qsize;
	bool frames_set;		/* --frames given: per pool, in every row */
	bool want[ENG_MAX_ROWS];
	bool rows_given;		/* --rows: a row that cannot run is an error */
	const char *json;
};

/* What one run measured, over its measurement window. */
struct eng_result {
	double src_mpps, drop_mpps, dst_mpps;
	double steal;			/* share of the window the host took */
	double rtt_ns[2];		/* cross-CPU round trip before, after */
	double worker_mpps[ENG_PW_MAX];	/* each worker's share of dst_mpps */
	struct ucm_pool_stats pool;	/* deltas over the window, every pool */
};

/* A whole invocation: what was asked, and what every run measured. */
struct eng_bench {
	struct eng_cfg cfg;
	const struct eng_row *rows;	/* engine.c's table */
	int nrows;
	/* Why a selected row does not run (it needs more CPUs), or "" */
	char skipped[ENG_MAX_ROWS][128];
	/* A P->W row placed on shared CPUs (--shared-cpus): it ran, but
	 * its rates measure time-sharing */
	bool shared[ENG_MAX_ROWS];
	struct eng_result res[ENG_MAX_ROWS][ENG_MAX_ROUNDS];	/* per row, per round */
};

/* A row's producers and workers: a P->W row's, or the classic one and one. */
static inline int eng_nprod(const struct eng_row *row)
{
	return row->workers ? row->producers : 1;
}

static inline int eng_nworkers(const struct eng_row *row)
{
	return row->workers ? row->workers : 1;
}

/* The CPU of producer @k of @row (k < its producers), or of worker
 * @k - producers: --producer-cpu and --worker-cpu, or --pw-cpus in turn;
 * a row of more threads than that has CPUs (--shared-cpus) goes round
 * the list again, its W workers still on W CPUs of their own. */
static inline int eng_cpu(const struct eng_cfg *cfg, const struct eng_row *row, int k)
{
	if (!row->workers)
		return k ? cfg->worker_cpu : cfg->producer_cpu;
	return cfg->pw_cpu[k % cfg->n_pw_cpu];
}

/* One run of @row (engine_run.c): 0, or -errno after a message when the
 * engine misbehaved (a setup failure, frames that did not come home). */
int eng_run_once(const struct eng_cfg *cfg, const struct eng_row *row,
		 struct eng_result *res);
/* Frames per pool for @nprod producers. */
uint32_t eng_frames(const struct eng_cfg *cfg, uint32_t nprod);

/* The tables after the rounds (engine_report.c). */
void eng_report(const struct eng_bench *eb);
/* Every run of every row into cfg.json: 0, or -1 after a message. */
int eng_write_json(const struct eng_bench *eb);

#endif /* UCM_BENCH_ENGINE_H */
