/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumap-bench engine, its own header: the rows, the options and the run
 * loop (engine.c), and what the runs measured, as tables and JSON
 * (engine_report.c).
 *
 * The two files share no variable: a struct eng_bench, made by engine.c,
 * holds the configuration, the rows and every run's result, and is passed
 * to the report. The main thread alone reads and writes it.
 */
#ifndef UCM_BENCH_ENGINE_H
#define UCM_BENCH_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "ucpumap/pool.h"

#define ENG_MAX_ROUNDS		64
/* Room for the rows table: engine.c checks that it fits. */
#define ENG_MAX_ROWS		16
/*
 * A run's two probes of the cross-CPU round trip both below this are
 * "near", both at or above it "far" (engine.c says why it matters).
 */
#define ENG_RTT_SPLIT_NS	300

struct eng_row {
	const char *name;
	const char *what;
	uint32_t cpumap_flags;
	uint32_t umem_flags;
	bool completion;
	bool mp_ring;		/* worker ring MPSC: as with more than one RX queue */
};

struct eng_cfg {
	int rounds;
	double seconds, warmup;
	int producer_cpu, worker_cpu;
	uint32_t frames, qsize;
	bool want[ENG_MAX_ROWS];
	const char *json;
};

/* What one run measured, over its measurement window. */
struct eng_result {
	double src_mpps, drop_mpps, dst_mpps;
	double steal;			/* share of the window the host took */
	double rtt_ns[2];		/* cross-CPU round trip before, after */
	struct ucm_pool_stats pool;	/* deltas over the window */
};

/* A whole invocation: what was asked, and what every run measured. */
struct eng_bench {
	struct eng_cfg cfg;
	const struct eng_row *rows;	/* engine.c's table */
	int nrows;
	struct eng_result res[ENG_MAX_ROWS][ENG_MAX_ROUNDS];	/* per row, per round */
};

/* The tables after the rounds (engine_report.c). */
void eng_report(const struct eng_bench *eb);
/* Every run of every row into cfg.json: 0, or -1 after a message. */
int eng_write_json(const struct eng_bench *eb);

#endif /* UCM_BENCH_ENGINE_H */
