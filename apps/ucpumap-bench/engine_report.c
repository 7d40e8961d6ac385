// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench engine: what the runs measured, printed. The rates per row,
 * the P->W rows' rate per worker, the runs split by the cross-CPU round
 * trip around them, the pool's allocation and return paths, the gains
 * between rows (eng_pairs[]), and every run as JSON.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "engine.h"

/* Gains are reported for these pairs: a row against its base; with a
 * target, the ratio it should reach. */
static const struct eng_pair {
	const char *row, *base, *note;
	double target;
} eng_pairs[] = {
	{ .row = "recycle", .base = "no-recycle", .note = "skb recycling into page_pool" },
	{ .row = "direct-bulk", .base = "no-direct-bulk", .note = "direct bulk recycling" },
	{ .row = "recycle", .base = "no-latency",
	  .note = "the latency stamps: under 1 is their cost" },
	{ .row = "recycle", .base = "mp-ring", .note = "one producer: single-producer worker rings" },
	/* four of each at 80% of four times one of each */
	{ .row = "pw-4x4", .base = "pw-1x1", .note = "4 producers into 4 workers", .target = 3.2 },
	{ .row = "pw-4x4-lanes", .base = "pw-1x1", .note = "4 into 4 through lanes", .target = 3.2 },
	{ .row = "pw-4x4-lanes", .base = "pw-4x4", .note = "lanes against a shared ring a worker" },
	{ .row = "pw-4x1-lanes", .base = "pw-4x1", .note = "4 into 1: lanes against its shared ring" },
	{ .row = "pw-2x2-lanes", .base = "pw-2x2", .note = "2 into 2: lanes against shared rings" },
};

/* Row @i was selected and ran. */
static bool ran(const struct eng_bench *eb, int i)
{
	return eb->cfg.want[i] && !eb->skipped[i][0];
}

static int row_index(const struct eng_bench *eb, const char *name)
{
	for (int i = 0; i < eb->nrows; i++)
		if (!strcmp(eb->rows[i].name, name))
			return i;
	return -1;
}

static void print_split(int n, const struct run_stats *st)
{
	if (n)
		printf("%5d %9.2f %8.2f-%-8.2f", n, st->median, st->min, st->max);
	else
		printf("%5d %9s %17s", 0, "-", "-");
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

#define RES(f)		offsetof(struct eng_result, f)

/* The double at @off of struct eng_result, for each of @n runs. */
static void eng_runs(const struct eng_result *rr, int n, size_t off, double *v)
{
	for (int r = 0; r < n; r++)
		v[r] = *(const double *)((const char *)&rr[r] + off);
}

static void eng_stats(const struct eng_result *rr, int n, size_t off, struct run_stats *st)
{
	double v[ENG_MAX_ROUNDS];

	eng_runs(rr, n, off, v);
	run_stats(v, n, st);
}

static void print_rates(const struct eng_bench *eb)
{
	printf("%-15s %9s %9s %9s %17s %7s\n", "row", "src Mpps", "drops", "dst Mpps",
	       "dst min-max", "steal");
	for (int i = 0; i < eb->nrows; i++) {
		struct run_stats s_src, s_drop, st;
		double steal;
		int r;

		if (!eb->cfg.want[i])
			continue;
		if (eb->skipped[i][0]) {
			printf("%-15s skipped: %s\n", eb->rows[i].name, eb->skipped[i]);
			continue;
		}
		eng_stats(eb->res[i], eb->cfg.rounds, RES(src_mpps), &s_src);
		eng_stats(eb->res[i], eb->cfg.rounds, RES(drop_mpps), &s_drop);
		eng_stats(eb->res[i], eb->cfg.rounds, RES(dst_mpps), &st);
		for (r = 0, steal = 0; r < eb->cfg.rounds; r++)
			steal += eb->res[i][r].steal / eb->cfg.rounds;
		printf("%-15s %9.2f %9.2f %9.2f %8.2f-%-8.2f %6.1f%%\n", eb->rows[i].name,
		       s_src.median, s_drop.median, st.median, st.min, st.max,
		       100 * steal);
	}
}

/* The rates apart by the cross-CPU round trip around each run. */
static void print_by_rtt(const struct eng_bench *eb)
{
	printf("\nby cross-CPU round trip (probed before and after each run; near: both < %d ns,\n"
	       "far: both >= %d ns%s)\n", ENG_RTT_SPLIT_NS, ENG_RTT_SPLIT_NS,
	       eb->cfg.shared ? "; the rows on shared CPUs left out" : "");
	printf("%-15s %5s %9s %17s | %5s %9s %17s\n", "row", "near", "dst Mpps", "min-max",
	       "far", "dst Mpps", "min-max");
	for (int i = 0; i < eb->nrows; i++) {
		double nv[ENG_MAX_ROUNDS], fv[ENG_MAX_ROUNDS];
		struct run_stats ns, fs;
		int nn = 0, nf = 0;

		/* on shared CPUs the rate is time-sharing's, not the round
		 * trip's (and the probe's two may be one CPU: 0 ns) */
		if (!ran(eb, i) || eb->shared[i])
			continue;
		for (int r = 0; r < eb->cfg.rounds; r++) {
			const double *t = eb->res[i][r].rtt_ns;

			if (t[0] < ENG_RTT_SPLIT_NS && t[1] < ENG_RTT_SPLIT_NS)
				nv[nn++] = eb->res[i][r].dst_mpps;
			else if (t[0] >= ENG_RTT_SPLIT_NS && t[1] >= ENG_RTT_SPLIT_NS)
				fv[nf++] = eb->res[i][r].dst_mpps;
		}
		run_stats(nv, nn, &ns);
		run_stats(fv, nf, &fs);
		printf("%-15s ", eb->rows[i].name);
		print_split(nn, &ns);
		printf(" | ");
		print_split(nf, &fs);
		printf("\n");
	}
}

static void print_pool(const struct eng_bench *eb)
{
	printf("\npool, all rounds: share of allocations (fast/refill/slow) and of returns\n"
	       "(cached/ring/ring_full/released)\n");
	printf("%-15s %6s %6s %6s | %6s %6s %9s %8s\n", "row", "fast", "refill", "slow",
	       "cached", "ring", "ring_full", "released");
	for (int i = 0; i < eb->nrows; i++) {
		struct ucm_pool_stats t = {};
		uint64_t allocs, rets;

		if (!ran(eb, i))
			continue;
		for (int r = 0; r < eb->cfg.rounds; r++) {
			const struct ucm_pool_stats *p = &eb->res[i][r].pool;

			t.alloc_fast += p->alloc_fast;
			t.alloc_refill += p->alloc_refill;
			t.alloc_slow += p->alloc_slow;
			t.recycle_cached += p->recycle_cached;
			t.recycle_ring += p->recycle_ring;
			t.recycle_ring_full += p->recycle_ring_full;
			t.recycle_released += p->recycle_released;
		}
		allocs = t.alloc_fast + t.alloc_refill + t.alloc_slow;
		rets = t.recycle_cached + t.recycle_ring + t.recycle_ring_full +
		       t.recycle_released;
		printf("%-15s %5.1f%% %5.1f%% %5.1f%% | %5.1f%% %5.1f%% %8.1f%% %7.1f%%\n",
		       eb->rows[i].name, share(t.alloc_fast, allocs),
		       share(t.alloc_refill, allocs), share(t.alloc_slow, allocs),
		       share(t.recycle_cached, rets), share(t.recycle_ring, rets),
		       share(t.recycle_ring_full, rets), share(t.recycle_released, rets));
	}
}

/* @k's target, when it has one: the ratio's median against it. */
static void print_target(const struct eng_pair *pair, const struct run_stats *st)
{
	double x = 1 + st->median / 100;

	printf(": %.2fx, target >= %.1fx, %s", x, pair->target,
	       x >= pair->target ? "met" : "missed");
}

static void print_gains(const struct eng_bench *eb)
{
	printf("\ngains, computed round by round (dst rate of after / before - 1)\n");
	for (int k = 0; k < (int)(sizeof(eng_pairs) / sizeof(eng_pairs[0])); k++) {
		const struct eng_pair *pair = &eng_pairs[k];
		int a = row_index(eb, pair->row), b = row_index(eb, pair->base);
		double v[ENG_MAX_ROUNDS];
		struct run_stats st;
		int n = 0;

		if (!ran(eb, a) || !ran(eb, b))
			continue;
		/* A round whose base delivered nothing has no ratio. */
		for (int r = 0; r < eb->cfg.rounds; r++)
			if (eb->res[b][r].dst_mpps > 0)
				v[n++] = 100.0 * (eb->res[a][r].dst_mpps /
						  eb->res[b][r].dst_mpps - 1);
		if (!n) {
			printf("  %-15s vs %-15s      -  (%s delivered nothing in any round)\n",
			       pair->row, pair->base, pair->base);
			continue;
		}
		run_stats(v, n, &st);
		printf("  %-15s vs %-15s %+6.1f%% (min %+.1f%%, max %+.1f%%)  %s",
		       pair->row, pair->base, st.median, st.min, st.max, pair->note);
		if (eb->shared[a] || eb->shared[b])
			printf(" (on shared CPUs: not a measure)");
		else if (pair->target)
			print_target(pair, &st);
		printf("\n");
	}
}

/* The CPUs of @row's producers (@from 0) or workers (@from P), @n of them. */
static void print_cpus(const struct eng_bench *eb, const struct eng_row *row, int from, int n)
{
	for (int k = 0; k < n; k++)
		printf("%s%d", k ? "," : "", eng_cpu(&eb->cfg, row, from + k));
}

/* The P->W rows: the rate per worker, and each worker's own, so that a
 * worker the steering starves shows. */
static void print_workers(const struct eng_bench *eb)
{
	bool any = false;

	for (int i = 0; i < eb->nrows; i++)
		any |= ran(eb, i) && eb->rows[i].workers;
	if (!any)
		return;
	printf("\nP->W rows, medians: Mpps per worker (dst / W), each worker's; CPUs\n");
	printf("%-15s %2s %2s %11s  %-31s %s\n", "row", "P", "W", "per worker",
	       "worker 0, 1, ...", "producers | workers");
	for (int i = 0; i < eb->nrows; i++) {
		const struct eng_row *row = &eb->rows[i];
		int nw = eng_nworkers(row), np = eng_nprod(row), col = 0;
		struct run_stats st;

		if (!ran(eb, i) || !row->workers)
			continue;
		eng_stats(eb->res[i], eb->cfg.rounds, RES(dst_mpps), &st);
		printf("%-15s %2d %2d %11.2f  ", row->name, np, nw, st.median / nw);
		for (int w = 0; w < nw; w++) {
			eng_stats(eb->res[i], eb->cfg.rounds, RES(worker_mpps[w]), &st);
			col += printf("%6.2f ", st.median);
		}
		printf("%*s", col < 32 ? 32 - col : 0, "");
		print_cpus(eb, row, 0, np);
		printf(" | ");
		print_cpus(eb, row, np, nw);
		printf("\n");
	}
}

void eng_report(const struct eng_bench *eb)
{
	print_rates(eb);
	print_workers(eb);
	print_by_rtt(eb);
	print_pool(eb);
	print_gains(eb);
}

/* The double at @off of each run, as an array under @key. */
static void json_runs(struct json *j, const char *key, const struct eng_result *rr, int n,
		      size_t off)
{
	double v[ENG_MAX_ROUNDS];

	eng_runs(rr, n, off, v);
	json_arr(j, key);
	for (int r = 0; r < n; r++)
		json_num(j, NULL, v[r]);
	json_arr_end(j);
}

/* Row @row's producers' CPUs (@from 0) or workers' (@from P), @n of them. */
static void json_cpus(struct json *j, const char *key, const struct eng_bench *eb,
		      const struct eng_row *row, int from, int n)
{
	json_arr(j, key);
	for (int k = 0; k < n; k++)
		json_num(j, NULL, eng_cpu(&eb->cfg, row, from + k));
	json_arr_end(j);
}

static void json_row(struct json *j, const struct eng_bench *eb, int i)
{
	const struct eng_result *rr = eb->res[i];
	const struct eng_row *row = &eb->rows[i];
	int np = eng_nprod(row), nw = eng_nworkers(row);
	struct run_stats st;

	json_obj(j, NULL);
	json_str(j, "name", row->name);
	json_num(j, "producers", np);
	json_num(j, "workers", nw);
	if (eb->skipped[i][0]) {
		json_str(j, "skipped", eb->skipped[i]);
		json_obj_end(j);
		return;
	}
	eng_stats(rr, eb->cfg.rounds, RES(dst_mpps), &st);
	json_str(j, "unit", "Mpps");
	json_str(j, "shared_cpus", eb->shared[i] ? "yes" : "no");
	json_runs(j, "runs", rr, eb->cfg.rounds, RES(dst_mpps));
	json_num(j, "median", st.median);
	json_num(j, "min", st.min);
	json_num(j, "max", st.max);
	json_num(j, "per_worker_median", st.median / nw);
	/* each worker's runs, in Mpps: one array per worker */
	json_arr(j, "worker_runs");
	for (int w = 0; w < nw; w++)
		json_runs(j, NULL, rr, eb->cfg.rounds, RES(worker_mpps[w]));
	json_arr_end(j);
	json_cpus(j, "producer_cpus", eb, row, 0, np);
	json_cpus(j, "worker_cpus", eb, row, np, nw);
	json_runs(j, "src_runs", rr, eb->cfg.rounds, RES(src_mpps));
	json_runs(j, "drop_runs", rr, eb->cfg.rounds, RES(drop_mpps));
	json_runs(j, "rtt_ns_before_runs", rr, eb->cfg.rounds, RES(rtt_ns[0]));
	json_runs(j, "rtt_ns_after_runs", rr, eb->cfg.rounds, RES(rtt_ns[1]));
	json_runs(j, "steal_runs", rr, eb->cfg.rounds, RES(steal));
	json_obj_end(j);
}

int eng_write_json(const struct eng_bench *eb)
{
	FILE *f = json_file_open("engine", eb->cfg.json);
	struct json j;

	if (!f)
		return -1;
	json_begin(&j, f);
	json_str(&j, "bench", "engine");
	json_num(&j, "seconds", eb->cfg.seconds);
	json_num(&j, "rounds", eb->cfg.rounds);
	json_num(&j, "producer_cpu", eb->cfg.producer_cpu);
	json_num(&j, "worker_cpu", eb->cfg.worker_cpu);
	json_str(&j, "shared_cpus", eb->cfg.shared ? "yes" : "no");
	json_arr(&j, "pw_cpus");
	for (int c = 0; c < eb->cfg.n_pw_cpu; c++)
		json_num(&j, NULL, eb->cfg.pw_cpu[c]);
	json_arr_end(&j);
	json_arr(&j, "rows");
	for (int i = 0; i < eb->nrows; i++)
		if (eb->cfg.want[i])
			json_row(&j, eb, i);
	json_arr_end(&j);
	json_end(&j);
	return json_file_close(f, "engine", eb->cfg.json);
}