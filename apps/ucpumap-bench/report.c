// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the results, once every round has run. The
 * tables on stdout (the UDP rows, the two-way rows, TCP, latency, the
 * gains of rows.c's pairs, ucpumapd's pools, coalescing and its own count
 * against the kernel's); every run of every row as JSON (--json); a PNG
 * chart of the UDP rows through gnuplot (--chart). Rates are medians over
 * the rounds, with their min and max. The JSON and the chart:
 * report_json.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "datapath.h"

/* ---- the tables ------------------------------------------------------------ */

static void print_stats_col(const double *v, int n, bool have)
{
	struct run_stats st;

	if (!have) {
		printf(" %22s", "-");
		return;
	}
	run_stats(v, n, &st);
	printf(" %6.3f (%5.3f-%5.3f)", st.median / 1e6, st.min / 1e6, st.max / 1e6);
}

/* Whether the generator's traffic is what the row's sent counts. */
static bool gen_row(const struct row *r)
{
	switch (row_kind(r)) {
	case K_KPASS: case K_KCPUMAP: case K_DAEMON: case K_DPDK: case K_TWOWAY:
		return true;
	default:	/* the tun writer's, the way back's sender's, TCP, probes */
		return false;
	}
}

/* The UDP rows: sent (offered), src rx, drops, dst rx. */
static void print_flat(const struct bench_run *br, int nr)
{
	bool flat = false;

	for (int i = 0; i < br->nrows; i++) {
		const struct row *r = &br->rows[i];

		flat |= r->on && !r->def->ops->tcp && !r->def->ops->latency;
	}
	if (flat)
		printf("\n%-28s %22s %22s %22s %22s%s   (Mpps: median (min-max) over %d round(s))\n",
		       "row", br->cfg.dev ? "offered" : "sent", "src rx", "drops", "dst rx",
		       br->cfg.mtu ? "   dst Gbit/s" : "", nr);
	for (int i = 0; i < br->nrows; i++) {
		struct row *r = &br->rows[i];
		double sent[MAX_ROUNDS], drops[MAX_ROUNDS];

		if (!r->on)
			continue;
		if (row_is_tcp(r) || r->def->ops->latency)
			continue;	/* their own tables */
		if (r->skipped) {
			printf("%-28s skipped: %s\n", r->def->name, r->skipped);
			continue;
		}
		for (int k = 0; k < nr; k++) {
			sent[k] = r->sent[k] / br->cfg.seconds;
			drops[k] = sent[k] - r->dst[k];
		}
		printf("%-28s", r->def->name);
		print_stats_col(sent, nr, true);
		print_stats_col(r->src, nr, r->have_src);
		print_stats_col(drops, nr, true);
		print_stats_col(r->dst, nr, true);
		if (br->cfg.mtu) {	/* the frames' bytes, Ethernet header on */
			struct run_stats st;

			run_stats(r->dst, nr, &st);
			/* The tun writer's and the way back's sender's
			 * packets stay 64 bytes. */
			printf("   %11.2f", st.median * (gen_row(r) ? br->cfg.mtu + 14 : 64) * 8 / 1e9);
		}
		printf("\n");
	}
}

/* The two-way rows: both directions at once (the load of direct bulk
 * recycling). */
static void print_two_way(const struct bench_run *br, int nr)
{
	bool any = false;

	for (int i = 0; i < br->nrows; i++) {
		const struct row *r = &br->rows[i];

		any |= r->on && r->def->ops->two_way && !r->skipped;
	}
	if (!any)
		return;
	printf("\ntwo-way: forward as above, and the way back (DUT -> tun -> ucpumapd -> XSK TX -> "
	       "generator namespace) at the same time\n");
	printf("%-28s %22s %22s %22s %22s\n", "row", "forward dst rx", "back sent", "back dst rx",
	       "completions direct");
	for (int i = 0; i < br->nrows; i++) {
		struct row *r = &br->rows[i];
		double pct[MAX_ROUNDS];
		struct run_stats st;

		if (!r->on || !r->def->ops->two_way || r->skipped)
			continue;
		printf("%-28s", r->def->name);
		print_stats_col(r->dst, nr, true);
		print_stats_col(r->back_sent, nr, true);
		print_stats_col(r->back_dst, nr, true);
		for (int k = 0; k < nr; k++)
			pct[k] = 100 * r->direct[k];
		run_stats(pct, nr, &st);
		printf("  %5.1f%% (%5.1f-%5.1f)\n", st.median, st.min, st.max);
	}
	printf("(Mpps, median (min-max); completions direct: the share that went straight into "
	       "the RX thread's cache;\n the way back's sender shares CPU 0 with the generator, "
	       "so forward is not the one-way rows' figure)\n");
}

/* The TCP rows: the receiver's rate, Gbit/s. */
static void print_tcp(const struct bench_run *br, int nr)
{
	bool any = false;

	for (int i = 0; i < br->nrows; i++) {
		struct row *r = &br->rows[i];
		double g[MAX_ROUNDS], b[MAX_ROUNDS], c[MAX_ROUNDS];

		if (!r->on || !row_is_tcp(r))
			continue;
		if (!any)
			printf("\n%-28s %22s %22s %22s   (one iperf3 stream, Gbit/s; busy\n"
			       "%-28s %22s %22s %22s    shares, all work: median (min-max))\n",
			       "row", "received", "worker CPU busy %", "CPU 0 busy %", "", "", "", "");
		any = true;
		if (r->skipped) {
			printf("%-28s skipped: %s\n", r->def->name, r->skipped);
			continue;
		}
		/* print_stats_col shows millions */
		for (int k = 0; k < nr; k++) {
			g[k] = r->dst[k] * 1e6 / 1e9;
			b[k] = r->busy[k] * 1e6 * 100;
			c[k] = r->busy_cpu0[k] * 1e6 * 100;
		}
		printf("%-28s", r->def->name);
		print_stats_col(g, nr, true);
		print_stats_col(b, nr, r->have_busy);
		print_stats_col(c, nr, r->have_busy);
		printf("\n");
	}
}

static const char *const cost_names[4] = { "cpu0", "worker_cpu", "rx_threads", "workers" };

const char *cost_name(int c)
{
	return cost_names[c];
}

/* A latency row's cost: each phase's busy shares, medians over the rounds
 * (those measured). */
static void print_cost(const struct row *r, int nr, int wcpu)
{
	static const char *const what[4] = { "CPU 0", "CPU", "RX thread", "workers" };

	if (!r->have_cost)
		return;
	printf("  %-27s busy, alone / under load:", "");
	for (int c = 0; c < 4; c++) {
		printf("%s %s", c ? "," : "", what[c]);
		if (c == COST_WCPU)
			printf(" %d", wcpu);
		for (int ph = 0; ph < 2; ph++) {
			double v[MAX_ROUNDS];
			struct run_stats st;
			int n = 0;

			for (int k = 0; k < nr; k++)
				if (r->cost[k][ph][c] >= 0)
					v[n++] = r->cost[k][ph][c];
			if (!n) {
				printf("%s-", ph ? "/" : " ");
				continue;
			}
			run_stats(v, n, &st);
			printf("%s%.0f%%", ph ? "/" : " ", 100 * st.median);
		}
	}
	printf("\n");
}

/* The median over @nr rounds of @v[k * @stride] where it was measured
 * (>= 0); -1 when it never was. */
static double measured_median(const double *v, int stride, int nr)
{
	double x[MAX_ROUNDS];
	struct run_stats st;
	int n = 0;

	for (int k = 0; k < nr; k++)
		if (v[k * stride] >= 0)
			x[n++] = v[k * stride];
	if (!n)
		return -1;
	run_stats(x, n, &st);
	return st.median;
}

/* A latency figure of the table: a lost probe's rank is shown as the
 * lower bound it is. */
static void print_lat(double v)
{
	if (v >= LAT_LOST_US)
		printf(" %7s", ">100ms");
	else
		printf(" %7.1f", v);
}

/* A p99.9 of fewer than 1000 answers is only their largest: it is shown
 * where every round of phase @ph (0 alone, 1 under load) had that many. */
#define P999_MIN_ANSWERED	1000

bool p999_measured(const struct row *r, int ph, int nr)
{
	for (int k = 0; k < nr; k++)
		if (r->answered[k][ph] < P999_MIN_ANSWERED)
			return false;
	return true;
}

/* A bench latency row's round trip as its prober saw it, alone. */
static void print_app(const struct row *r, int nr)
{
	double v;

	if (!r->have_app)
		return;
	printf("  %-27s the prober's view alone (its send call to its read):", "");
	for (int p = 0; p < 4; p++) {
		v = measured_median(&r->lat_app[0][p], 4, nr);
		printf(v < 0 || (p == 3 && !p999_measured(r, 0, nr)) ? " -" : " %.1f", v);
	}
	printf("; its own part p50/p99 %.1f/%.1f\n", measured_median(&r->lat_own[0][0], 2, nr),
	       measured_median(&r->lat_own[0][1], 2, nr));
}

/* @a's percentile @p against @b's, round by round where both were
 * measured (@a's view: the kernel's timestamps, or its prober's): the
 * median ratio, or 0. */
static double sockperf_ratio(const struct row *a, const struct row *b, bool app, int p, int nr)
{
	double x[MAX_ROUNDS];
	struct run_stats st;
	int n = 0;

	for (int k = 0; k < nr; k++) {
		double v = app ? a->lat_app[k][p] : a->lat[k][p];

		if (v > 0 && b->lat[k][p] > 0)
			x[n++] = v / b->lat[k][p];
	}
	if (!n)
		return 0;
	run_stats(x, n, &st);
	return st.median;
}

/* The bench's probes against sockperf's, row @a against row @b, round by
 * round: within 15% is agreement. The kernel's timestamps leave out what
 * sockperf's client times, its own part; the prober's view has it
 * (docs/BENCHMARKING.md). */
static void print_sockperf_check(const struct bench_run *br, int nr, const char *a,
				 const char *b)
{
	const struct row *ra = row_by(br, a), *rb = row_by(br, b);

	if (!ra || !rb || !ra->on || !rb->on || ra->skipped || rb->skipped)
		return;
	printf("  %s vs %s: kernel timestamps p50 %.2fx, p99 %.2fx", a, b,
	       sockperf_ratio(ra, rb, false, 0, nr), sockperf_ratio(ra, rb, false, 2, nr));
	if (ra->have_app)
		printf("; the prober's view p50 %.2fx, p99 %.2fx", sockperf_ratio(ra, rb, true, 0, nr),
		       sockperf_ratio(ra, rb, true, 2, nr));
	printf(" (against sockperf's; agreement: within 15%%)\n");
}

/* The latency rows: round trips, us, median over the rounds of each
 * percentile; alone and under half the capacity. */
static void print_latency(const struct bench_run *br, int nr)
{
	struct row *kern = row_by(br, "latency-kernel-cpumap");
	struct row *kern_pin = row_by(br, "latency-kernel-cpumap-pinned");
	bool any = false;

	for (int i = 0; i < br->nrows; i++) {
		struct row *r = &br->rows[i];
		double v[MAX_ROUNDS], lost = 0, sent = 0;
		struct run_stats st;

		if (!r->on || !r->def->ops->latency)
			continue;
		if (!any)
			printf("\nlatency (round trip of UDP probes at %d/s, kernel timestamps; the sockperf "
			       "rows, its client's own timing; us; median over the rounds):\n"
			       "%-29s %7s %7s %7s %7s | %9s %7s %7s %7s %7s | %s\n",
			       1000, "row", "p50", "p90", "p99", "p99.9", "load pps", "p50", "p90",
			       "p99", "p99.9", "lost");
		any = true;
		if (r->skipped) {
			printf("%-29s skipped: %s\n", r->def->name, r->skipped);
			continue;
		}
		printf("%-29s", r->def->name);
		for (int p = 0; p < 4; p++) {
			for (int k = 0; k < nr; k++)
				v[k] = r->lat[k][p];
			if (p == 3 && !p999_measured(r, 0, nr))
				printf(" %7s", "-");
			else
				print_lat(run_median_bound(v, nr, LAT_LOST_US));
		}
		run_stats(r->load_pps, nr, &st);
		if (!r->have_load) {	/* sockperf's rows */
			printf(" | %9s %7s %7s %7s %7s", "-", "-", "-", "-", "-");
		} else {
			printf(" | %9.0f", st.median);
			for (int p = 0; p < 4; p++) {
				for (int k = 0; k < nr; k++)
					v[k] = r->lat_load[k][p];
				if (p == 3 && !p999_measured(r, 1, nr))
					printf(" %7s", "-");
				else
					print_lat(run_median_bound(v, nr, LAT_LOST_US));
			}
		}
		for (int k = 0; k < nr; k++) {
			lost += r->probes[k][0] + r->probes[k][1] - r->answered[k][0] - r->answered[k][1];
			sent += r->probes[k][0] + r->probes[k][1];
		}
		printf(" | %.0f of %.0f\n", lost, sent);
		print_cost(r, nr, br->cfg.wcpu[0]);
		print_app(r, nr);
		if (r->have_stage) {
			printf("  %-27s ucpumapd's stages alone, p50/p99 bounds (us): arrival to flush", "");
			for (int p = 0; p < 3; p++) {
				for (int q = 0; q < 2; q++) {
					for (int k = 0; k < nr; k++)
						v[k] = r->stage[k][p + 3 * q];
					run_stats(v, nr, &st);
					printf("%s%.0f", q ? "/" : p == 1 ? ", flush to dequeue " :
					       p == 2 ? ", dequeue to the tun's completion " : " ",
					       st.median);
				}
			}
			printf("\n");
		}
	}
	if (!any)
		return;
	/* The targets: p50 and p99 against the kernel's cpumap with the
	 * responder placed alike. */
	for (int i = 0; i < br->nrows; i++) {
		struct row *r = &br->rows[i];
		double a[MAX_ROUNDS], b[MAX_ROUNDS];
		struct run_stats s50, s99;

		kern = r->def->pin_responder ? kern_pin :
		       row_kind(r) == K_SOCKPERF ? row_by(br, "sockperf-kernel-cpumap") :
		       row_by(br, "latency-kernel-cpumap");
		if (!r->on || r->skipped || !r->def->ops->latency || row_kind(r) == K_LAT_KERNEL ||
		    row_kind(r) == K_SOCKPERF_KERNEL || !kern || !kern->on || kern->skipped)
			continue;
		for (int k = 0; k < nr; k++) {
			a[k] = kern->lat[k][0] > 0 ? r->lat[k][0] / kern->lat[k][0] : 0;
			b[k] = kern->lat[k][2] > 0 ? r->lat[k][2] / kern->lat[k][2] : 0;
		}
		run_stats(a, nr, &s50);
		run_stats(b, nr, &s99);
		printf("  %s vs %s: p50 %.2fx, p99 %.2fx (round by round; "
		       "target p50 <= %s)\n", r->def->name, kern->def->name, s50.median, s99.median,
		       row_kind(r) == K_LAT_TWOWAY ? "2.4x" : "1.2x, p99 <= 2x");
	}
	print_sockperf_check(br, nr, "latency-kernel-cpumap", "sockperf-kernel-cpumap");
	print_sockperf_check(br, nr, "latency-cpumap", "sockperf-cpumap");
}

/*
 * A target no row's offered load could reach: in every round, delivering
 * every packet the generator offered to any row in that round (the most
 * it sent) would still fall short of target times b's dst rx. Said, so
 * that such a miss is not read as the code's. On a machine where the
 * generator shares the CPUs, what it offers depends on the row: hence the
 * most of the round, not row a's own (UDP rows: TCP clocks itself, and the
 * way back has its own sender). A round with nothing sent says nothing.
 */
static void print_gain_reach(const struct bench_run *br, const struct row_gain *gn,
			     const struct row *rb, int nr)
{
	double most[MAX_ROUNDS];
	struct run_stats sm, sb;

	if (!gn->target || gn->back || !gen_row(row_by(br, gn->a)))
		return;
	for (int i = 0; i < nr; i++) {
		most[i] = 0;
		for (int j = 0; j < br->nrows; j++) {
			const struct row *r = &br->rows[j];

			if (r->on && !r->skipped && gen_row(r) && r->sent[i] / br->cfg.seconds > most[i])
				most[i] = r->sent[i] / br->cfg.seconds;
		}
		if (!most[i] || most[i] >= gn->target * rb->dst[i])
			return;
	}
	run_stats(most, nr, &sm);
	run_stats(rb->dst, nr, &sb);
	printf("    cannot be met in this run: %gx %s is %.3f Mpps (median), more than the generator offered any row (%.3f, the median of each round's most)\n",
	       gn->target, gn->b, gn->target * sb.median / 1e6, sm.median / 1e6);
}

/* A UDP row that delivered nearly all it was sent (GEN_BOUND_SHARE) in
 * most rounds measured the generator, not its path: a ratio against it
 * says at most how far the other row got past the generator. */
#define GEN_BOUND_SHARE	0.97

static bool gen_bound(const struct row *r, double seconds, int nr)
{
	int bound = 0;

	if (!gen_row(r))
		return false;
	for (int i = 0; i < nr; i++)
		bound += r->sent[i] > 0 && r->dst[i] >= GEN_BOUND_SHARE * r->sent[i] / seconds;
	return 2 * bound > nr;
}

/* Row a's rate over row b's, round by round: dst rx, or with .back the
 * way back's delivered rate; only when both ran. */
static void print_gain(const struct bench_run *br, const struct row_gain *gn, int nr)
{
	struct row *ra = row_by(br, gn->a), *rb = row_by(br, gn->b);
	bool back = gn->back;
	double g[MAX_ROUNDS];
	struct run_stats st;
	int n = 0;

	if (!ra->on || !rb->on || ra->skipped || rb->skipped)
		return;
	printf("  %-26s vs %-24s", gn->a, gn->b);
	if (br->cfg.mtu && !back && gen_row(ra) != gen_row(rb)) {
		printf("  left out: --mtu's frames against %s's 64-byte packets\n",
		       gen_row(ra) ? gn->b : gn->a);
		return;
	}
	for (int i = 0; i < nr; i++) {
		const double *x = back ? ra->back_dst : ra->dst, *y = back ? rb->back_dst : rb->dst;

		/* A round b delivered nothing in has no ratio: left out. */
		if (y[i] > 0) {
			g[n] = x[i] / y[i];
			printf(" %5.3f", g[n++]);
		} else {
			printf(" %5s", "-");
		}
	}
	if (!n) {
		printf("  no round where %s delivered\n", gn->b);
		return;
	}
	run_stats(g, n, &st);
	printf("  median %.3f (%+.0f%%)  %s\n", st.median, (st.median - 1) * 100, gn->note);
	for (int k = 0; k < 2 && !back; k++)
		if (gen_bound(k ? ra : rb, br->cfg.seconds, nr))
			printf("    %s delivered what the generator sent in most rounds: it measured the generator, not its path (the ratio is %s bound)\n",
			       k ? gn->a : gn->b, k ? "a lower" : "an upper");
	print_gain_reach(br, gn, rb, nr);
}

/* Where ucpumapd's frames came from and went back to, per row, as shares
 * of all allocations and returns over the rounds. A return reaches the
 * stack when recycling is off (released) or the recycle ring was full. */
static void print_pool(const struct bench_run *br)
{
	bool any = false;

	for (int i = 0; i < br->nrows; i++)
		any |= br->rows[i].on && !br->rows[i].skipped && br->rows[i].have_pool;
	if (!any)
		return;
	printf("\nucpumapd's pools, all rounds (alloc: from the cache / refilled from the recycle "
	       "ring / from the backing stack; return: into the cache / the ring / the stack):\n");
	printf("  %-28s %12s %22s %12s %22s %12s\n", "row", "allocs", "cache/refill/stack %",
	       "returns", "cache/ring/stack %", "ring full");
	for (int i = 0; i < br->nrows; i++) {
		const struct row *r = &br->rows[i];
		const double *p = r->pool;
		double a = p[0] + p[1] + p[2], stack = p[5] + p[6], f = p[3] + p[4] + stack;

		if (!r->on || r->skipped || !r->have_pool)
			continue;
		printf("  %-28s %12.0f %8.1f/%5.1f/%5.1f  %12.0f %8.1f/%5.1f/%5.1f  %12.0f\n",
		       r->def->name, a, a ? 100 * p[0] / a : 0, a ? 100 * p[1] / a : 0,
		       a ? 100 * p[2] / a : 0, f, f ? 100 * p[3] / f : 0, f ? 100 * p[4] / f : 0,
		       f ? 100 * stack / f : 0, p[5]);
	}
}

/* What coalescing made of the rows' traffic. */
static void print_coalesce(const struct bench_run *br, int nr)
{
	bool any = false;

	for (int i = 0; i < br->nrows; i++) {
		struct row *r = &br->rows[i];

		if (!r->on || r->skipped || !r->have_segs)
			continue;
		if (!any)
			printf("\ncoalescing (per round: datagrams per super-packet, share of datagrams in one):\n");
		any = true;
		if (row_is_tcp(r))
			printf("  %-28s  1 stream:", r->def->name);
		else
			printf("  %-28s %5d flows:", r->def->name, r->def->flows ? r->def->flows : DEFAULT_FLOWS);
		for (int k = 0; k < nr; k++)
			printf(" %.1f %.0f%%;", r->segs[k], 100 * r->merged[k]);
		if (r->have_busy) {
			printf(" busy, worker CPU / CPU 0:");
			for (int k = 0; k < nr; k++)
				printf(" %.0f/%.0f%%", 100 * r->busy[k], 100 * r->busy_cpu0[k]);
		}
		printf("\n");
	}
}

/* ucpumapd's own delivered count against the kernel's. */
static void print_counts(const struct bench_run *br, int nr)
{
	printf("\nucpumapd's tun_packets against the kernel's count at the socket, both over %s:\n",
	       br->cfg.dev ? "the timed run (SIGUSR1 samples)" : "ucpumapd's life");
	for (int i = 0; i < br->nrows; i++) {
		struct row *r = &br->rows[i];

		if (!r->on || r->skipped || !r->def->ops->count)
			continue;
		printf("  %-28s", r->def->name);
		if (!r->have_daemon) {
			printf(" no statistics from ucpumapd\n");
			continue;
		}
		for (int k = 0; k < nr; k++) {
			double kern = r->kernel_cmp[k];

			printf(" ucpumapd %.0f, kernel %.0f: %+.0f (%+.3f%%);", r->daemon[k], kern,
			       r->daemon[k] - kern, kern > 0 ? 100 * (r->daemon[k] - kern) / kern : 0);
		}
		printf("\n");
	}
}

void report_tables(const struct bench_run *br, int nr)
{
	const struct row_gain *gains;
	int ngains;

	print_flat(br, nr);
	print_two_way(br, nr);
	print_tcp(br, nr);
	print_latency(br, nr);
	printf("\ngains (dst rx, round by round):\n");
	gains = row_gains(&ngains);
	for (int i = 0; i < ngains; i++)
		print_gain(br, &gains[i], nr);
	print_pool(br);
	print_coalesce(br, nr);
	print_counts(br, nr);
}
