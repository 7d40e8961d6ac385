// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench scale: the results. A table of every row at every width
 * (the median of the rounds; each ratio the median of the rounds' own
 * ratios, as machines drift), each queue's and worker's share of
 * ucpumapd's work (with --dev also each of the NIC's queues' share of
 * what was offered), what the light queues of the flood rows got through,
 * the targets, --json's file and --chart's PNG.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "scale.h"

/* A ratio the issue set for a 16-CPU host: @a at width @wa over @b at @wb. */
static const struct {
	const char *a, *b;
	int wa, wb;
	double target;
} targets[] = {
	{ "cpumap", "kernel-cpumap", 4, 4, 1.3 },
	{ "cpumap", "cpumap", 4, 1, 3.0 },
	{ "cpumap-coalesce", "kernel-cpumap", 4, 4, 2.0 },
};

static bool cell_ok(const struct scale_cell *c)
{
	return c && !c->failed;
}

/* The kernel's row beside ucpumapd's @c: the same shape, the same width. */
static const struct scale_cell *kernel_of(const struct scale_run *sr, const struct scale_cell *c)
{
	int n;
	const struct scale_rowdef *d = scale_rowdefs(&n);

	for (int i = 0; i < n; i++)
		if (d[i].kernel && d[i].shape == c->def->shape)
			return scale_cell_of(sr, d[i].name, c->width);
	return NULL;
}

/* Width 1 of @c's kind: the same row, or for a fan or flood row the wide
 * row of its side. */
static const struct scale_cell *width1_of(const struct scale_run *sr, const struct scale_cell *c)
{
	if (c->def->shape == SH_WIDE && c->def->min_width == 1)
		return scale_cell_of(sr, c->def->name, 1);
	return scale_cell_of(sr, c->def->kernel ? "kernel-cpumap" : "cpumap", 1);
}

/* The median (min, max) over the rounds of @a's rate over @b's. */
static bool ratio(const struct scale_run *sr, const struct scale_cell *a,
		  const struct scale_cell *b, struct run_stats *st)
{
	double v[SCALE_MAX_ROUNDS];
	int n = 0;

	if (!cell_ok(a) || !cell_ok(b))
		return false;
	for (int k = 0; k < sr->nrounds; k++)
		if (b->dst[k] > 0)
			v[n++] = a->dst[k] / b->dst[k];
	if (!n)
		return false;
	run_stats(v, n, st);
	return true;
}

/* CPUs a row uses beside the generators (with --dev, beside the NIC's
 * interrupts): the workers, and ucpumapd's RX threads (the kernel's RX
 * runs in the generators' or the NIC's NAPI, as the XDP program and the
 * copy into ucpumapd's sockets do). */
static int cpus_used(const struct scale_cell *c)
{
	return c->pl.nwk + (c->def->kernel ? 0 : c->pl.ngen);
}

/* Where each queue lost what it did not hand on, over the rounds. */
static void print_losses(const struct scale_run *sr, const struct scale_cell *c)
{
	printf("    %-24s queues' losses, at the XSK socket / the worker rings:", "");
	for (int i = 0; i < c->pl.ngen; i++) {
		double x = 0, e = 0;

		for (int k = 0; k < sr->nrounds; k++)
			x += c->qxsk[k][i], e += c->qenq[k][i];
		printf(" %.0f/%.0f", x, e);
	}
	printf("\n");
}

static void print_shares(const struct scale_run *sr, const struct scale_cell *c)
{
	double q[SCALE_MAX_WIDTH] = { 0 }, w[SCALE_MAX_WIDTH] = { 0 }, qs = 0, ws = 0;

	if (sr->cfg.dev)
		scale_dev_shares(sr, c);
	if (!c->have_daemon || (c->pl.ngen < 2 && c->pl.nwk < 2))
		return;
	for (int k = 0; k < sr->nrounds; k++) {
		for (int i = 0; i < c->pl.ngen; i++)
			q[i] += c->qrx[k][i], qs += c->qrx[k][i];
		for (int i = 0; i < c->pl.nwk; i++)
			w[i] += c->wproc[k][i], ws += c->wproc[k][i];
	}
	printf("    %-24s queues' share of rx:", "");
	for (int i = 0; i < c->pl.ngen; i++)
		printf(" %.1f%%", qs > 0 ? 100 * q[i] / qs : 0);
	printf("; workers' share:");
	for (int i = 0; i < c->pl.nwk; i++)
		printf(" %.1f%%", ws > 0 ? 100 * w[i] / ws : 0);
	printf("\n");
	print_losses(sr, c);
}

/* Over the rounds: the light queues' datagrams offered and delivered, the
 * lowest light queue's share, the flooding queue's. */
struct flood_sum {
	double lsent, ldst, lmin, fsent, fdst;
};

static void flood_sum(const struct scale_run *sr, const struct scale_cell *c,
		      struct flood_sum *f)
{
	*f = (struct flood_sum){ .lmin = 1 };
	for (int k = 0; k < sr->nrounds; k++) {
		f->fsent += c->flood_sent[k];
		f->fdst += c->flood_dst[k];
		for (int i = 1; i < c->pl.ngen; i++) {
			f->lsent += c->light_sent[k][i];
			f->ldst += c->light_dst[k][i];
			if (c->light_sent[k][i] > 0 &&
			    c->light_dst[k][i] / c->light_sent[k][i] < f->lmin)
				f->lmin = c->light_dst[k][i] / c->light_sent[k][i];
		}
	}
}

/* Each light queue's own p50 and p99 (medians of the rounds that timed
 * it): one of them starved hides in the pooled figures. */
static void print_light_queues(const struct scale_run *sr, const struct scale_cell *c)
{
	printf("    %-24s each light queue's p50/p99 us:", "");
	for (int i = 1; i < c->pl.ngen; i++) {
		double v50[SCALE_MAX_ROUNDS], v99[SCALE_MAX_ROUNDS];
		struct run_stats p50, p99;
		int n = 0;

		for (int k = 0; k < sr->nrounds; k++)
			if (c->lq_timed[k][i] > 0) {
				v50[n] = c->lq_p50[k][i];
				v99[n++] = c->lq_p99[k][i];
			}
		if (!n) {
			printf(" q%d none timed", c->pl.queue[i]);
			continue;
		}
		run_stats(v50, n, &p50);
		run_stats(v99, n, &p99);
		printf(" q%d %.1f/%.1f", c->pl.queue[i], p50.median, p99.median);
	}
	printf("\n");
}

static void print_flood(const struct scale_run *sr, const struct scale_cell *c)
{
	double v50[SCALE_MAX_ROUNDS], v99[SCALE_MAX_ROUNDS], timed = 0;
	struct run_stats p50, p99;
	struct flood_sum f;
	int n = 0;

	flood_sum(sr, c, &f);
	printf("    %-24s light queues: %.0f of %.0f delivered (%.2f%%, the lowest queue's "
	       "round %.2f%%); flooding queue: %.0f of %.0f (%.1f%%)\n", "", f.ldst, f.lsent,
	       f.lsent > 0 ? 100 * f.ldst / f.lsent : 0, 100 * f.lmin, f.fdst, f.fsent,
	       f.fsent > 0 ? 100 * f.fdst / f.fsent : 0);
	for (int k = 0; k < sr->nrounds; k++) {
		timed += c->light_timed[k];
		if (c->light_timed[k] > 0) {	/* rounds without a time say nothing */
			v50[n] = c->light_p50[k];
			v99[n++] = c->light_p99[k];
		}
	}
	if (!n) {
		printf("    %-24s light queues' one-way latency: no datagram timed\n", "");
		return;
	}
	run_stats(v50, n, &p50);
	run_stats(v99, n, &p99);
	printf("    %-24s light queues' one-way latency, send to the stack: p50 %.1f us "
	       "(%.1f-%.1f), p99 %.1f us (%.1f-%.1f); %.0f datagrams timed in %d round(s)\n", "",
	       p50.median, p50.min, p50.max, p99.median, p99.min, p99.max, timed, n);
	print_light_queues(sr, c);
}

static void print_cell(const struct scale_run *sr, const struct scale_cell *c)
{
	struct run_stats st, sent, rk, r1;
	double v[SCALE_MAX_ROUNDS];
	char xk[16] = "-", x1[16] = "-";

	if (c->failed) {
		printf("%-24s %2d %2d->%-2d  failed (see above)\n", c->def->name, c->width,
		       c->pl.ngen, c->pl.nwk);
		return;
	}
	run_stats(c->dst, sr->nrounds, &st);
	for (int k = 0; k < sr->nrounds; k++)
		v[k] = scale_offered(sr, c, k);
	run_stats(v, sr->nrounds, &sent);
	if (!c->def->kernel && ratio(sr, c, kernel_of(sr, c), &rk))
		snprintf(xk, sizeof(xk), "%.2f", rk.median);
	if (width1_of(sr, c) != c && ratio(sr, c, width1_of(sr, c), &r1))
		snprintf(x1, sizeof(x1), "%.2f", r1.median);
	printf("%-24s %2d %2d->%-2d %7.3f (%.3f-%.3f) %7.3f %8.3f %7.3f %8s %6s\n",
	       c->def->name, c->width, c->pl.ngen, c->pl.nwk, st.median / 1e6, st.min / 1e6,
	       st.max / 1e6, sent.median / 1e6, st.median / 1e6 / c->pl.nwk,
	       st.median / 1e6 / cpus_used(c), xk, x1);
	print_shares(sr, c);
	if (c->def->shape == SH_FLOOD)
		print_flood(sr, c);
}

static void print_targets(const struct scale_run *sr)
{
	/* Threads that share CPUs measure time-sharing: no verdict. */
	const char *no_verdict = sr->cfg.shared ? "on shared CPUs: not a measure" : NULL;

	printf("\nTargets (set for a 16-CPU host; ratios within this run):\n");
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		const struct scale_cell *a = scale_cell_of(sr, targets[i].a, targets[i].wa);
		const struct scale_cell *b = scale_cell_of(sr, targets[i].b, targets[i].wb);
		struct run_stats st;

		printf("  %s w%d / %s w%d >= %.1f: ", targets[i].a, targets[i].wa, targets[i].b,
		       targets[i].wb, targets[i].target);
		if (ratio(sr, a, b, &st))
			printf("%.2f (%.2f-%.2f), %s\n", st.median, st.min, st.max,
			       no_verdict ? no_verdict : st.median >= targets[i].target ? "met" : "NOT met");
		else
			printf("not measured (a width or row did not run)\n");
	}
	for (int j = 0; j < sr->ncells; j++) {
		const struct scale_cell *c = &sr->cells[j];
		struct flood_sum f;

		if (c->def->shape != SH_FLOOD || c->def->flag || !cell_ok(c))
			continue;
		flood_sum(sr, c, &f);
		printf("  %s w%d: the light queues deliver all they were offered: %.0f "
		       "lost, %s\n", c->def->name, c->width, f.lsent - f.ldst,
		       no_verdict ? no_verdict : f.ldst >= f.lsent ? "met" : "NOT met");
	}
	printf("  cpumap w1 >= 0.9x the tun ceiling: `ucpumap-bench datapath --rows "
	       "cpumap,tun-ceiling` measures it\n");
}

void scale_report(const struct scale_run *sr)
{
	printf("\nResults: median of %d round(s) (min-max), Mpps delivered at the sink; /worker "
	       "and /CPU per worker CPU and per CPU used beside the %s (ucpumapd: its RX "
	       "threads' too); x kernel: against the kernel's cpumap at the same width and "
	       "shape; x w1: against width 1\n", sr->nrounds,
	       sr->cfg.dev ? "NIC's interrupts" : "generators");
	printf("%-24s %2s %-6s %7s %13s %7s %8s %7s %8s %6s\n", "row", "w", "q->wk", "Mpps",
	       "(min-max)", "offered", "/worker", "/CPU", "x kernel", "x w1");
	for (int i = 0; i < sr->ncells; i++)
		print_cell(sr, &sr->cells[i]);
	scale_print_skips(sr, stdout, "");
	print_targets(sr);
}

void scale_print_skips(const struct scale_run *sr, FILE *f, const char *prefix)
{
	for (int i = 0; i < sr->nskip; i++) {
		const struct scale_skip *s = &sr->skip[i];

		if (s->width)
			fprintf(f, "%swidth %d skipped: %s\n", prefix, s->width, s->why);
		else if (s->widths[0])
			fprintf(f, "%s%s skipped at width(s) %s: %s\n", prefix, s->rows, s->widths,
				s->why);
		else
			fprintf(f, "%s%s skipped at every width: %s\n", prefix, s->rows, s->why);
	}
}

/* ---- --json ----------------------------------------------------------------------- */

static void json_cpus(struct json *j, const char *key, const int *v, int n)
{
	json_arr(j, key);
	for (int i = 0; i < n; i++)
		json_num(j, NULL, v[i]);
	json_arr_end(j);
}

static void json_nums(struct json *j, const char *key, const double *v, int n)
{
	json_arr(j, key);
	for (int i = 0; i < n; i++)
		json_num(j, NULL, v[i]);
	json_arr_end(j);
}

/* --dev: what each of the cell's queues received in round @k, by the
 * NIC's counters, and what the others did (the stack's, not the row's). */
static void json_dev_run(struct json *j, const struct scale_run *sr, const struct scale_cell *c,
			 int k)
{
	double v[SCALE_MAX_WIDTH], all = 0, in = 0;

	for (int q = 0; q < sr->nic_queues && q < SCALE_DEV_MAX_QUEUES; q++)
		all += c->qoff[k][q];
	for (int i = 0; i < c->pl.ngen; i++) {
		v[i] = c->qoff[k][c->pl.queue[i]];
		in += v[i];
	}
	json_nums(j, "nic_queue_offered", v, c->pl.ngen);
	json_num(j, "nic_offered_elsewhere", all - in);
}

static void json_cell(struct json *j, const struct scale_run *sr, const struct scale_cell *c)
{
	json_obj(j, NULL);
	json_str(j, "row", c->def->name);
	json_num(j, "width", c->width);
	json_num(j, "queues", c->pl.ngen);
	json_num(j, "workers", c->pl.nwk);
	json_num(j, "cpus_used", cpus_used(c));
	json_str(j, "ok", c->failed ? "no" : "yes");
	if (sr->cfg.dev) {
		json_cpus(j, "nic_queues", c->pl.queue, c->pl.ngen);
	} else {
		json_cpus(j, "gen_cpus", c->pl.gen, c->pl.ngen);
		json_cpus(j, "vd_queues", c->pl.queue, c->pl.ngen);
		json_num(j, "flows_per_queue", c->flows);
		json_cpus(j, "flows_per_worker", c->wflows, c->pl.nwk);
	}
	if (!c->def->kernel)
		json_cpus(j, "rx_cpus", c->pl.rx, c->pl.ngen);
	json_cpus(j, "worker_cpus", c->pl.wk, c->pl.nwk);
	if (c->failed) {	/* a failed round's zeros measured nothing */
		json_obj_end(j);
		return;
	}
	json_arr(j, "runs");
	for (int k = 0; k < sr->nrounds; k++) {
		json_obj(j, NULL);
		json_num(j, "offered_pps", scale_offered(sr, c, k));
		json_num(j, "delivered_pps", c->dst[k]);
		if (c->have_qoff)
			json_dev_run(j, sr, c, k);
		if (c->have_daemon) {
			json_nums(j, "queue_rx", c->qrx[k], c->pl.ngen);
			json_nums(j, "worker_processed", c->wproc[k], c->pl.nwk);
			json_nums(j, "queue_xsk_drops", c->qxsk[k], c->pl.ngen);
			json_nums(j, "queue_enqueue_drops", c->qenq[k], c->pl.ngen);
		}
		if (c->def->shape == SH_FLOOD) {
			json_num(j, "flood_offered", c->flood_sent[k]);
			json_num(j, "flood_delivered", c->flood_dst[k]);
			json_nums(j, "light_offered", c->light_sent[k] + 1, c->pl.ngen - 1);
			json_nums(j, "light_delivered", c->light_dst[k] + 1, c->pl.ngen - 1);
			if (c->light_timed[k]) {	/* else none was timed */
				json_num(j, "light_latency_p50_us", c->light_p50[k]);
				json_num(j, "light_latency_p99_us", c->light_p99[k]);
			}
			json_num(j, "light_latency_timed", c->light_timed[k]);
			/* each light queue's own (0 where none was timed) */
			json_nums(j, "light_queue_p50_us", c->lq_p50[k] + 1, c->pl.ngen - 1);
			json_nums(j, "light_queue_p99_us", c->lq_p99[k] + 1, c->pl.ngen - 1);
			json_nums(j, "light_queue_timed", c->lq_timed[k] + 1, c->pl.ngen - 1);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

int scale_json(const struct scale_run *sr)
{
	FILE *f = json_file_open("scale", sr->cfg.json);
	struct utsname u;
	struct json j;

	if (!f)
		return -1;
	uname(&u);
	json_begin(&j, f);
	json_str(&j, "bench", "scale");
	json_str(&j, "kernel", u.release);
	json_num(&j, "host_cpus", sysconf(_SC_NPROCESSORS_ONLN));
	json_num(&j, "rounds", sr->nrounds);
	json_num(&j, "seconds", sr->cfg.seconds);
	if (!sr->cfg.dev) {	/* with --dev the outside generator's */
		json_num(&j, "flows_per_queue", sr->cfg.flows);
		json_num(&j, "light_rate", sr->cfg.light_rate);
	}
	json_str(&j, "shared_cpus", sr->cfg.shared ? "yes" : "no");
	if (sr->cfg.dev) {
		json_str(&j, "dev", sr->cfg.dev);
		json_num(&j, "nic_rx_queues", sr->nic_queues);
		json_cpus(&j, "traffic_queues", sr->traffic, sr->ntraffic);
		json_str(&j, "nic_queue_counters", sr->have_qstats ? "yes" : "no");
	}
	json_arr(&j, "skipped");
	for (int i = 0; i < sr->nskip; i++) {
		const struct scale_skip *s = &sr->skip[i];

		json_obj(&j, NULL);
		if (s->width) {
			json_num(&j, "width", s->width);
		} else {
			json_str(&j, "rows", s->rows);
			json_str(&j, "widths", s->widths[0] ? s->widths : "all");
		}
		json_str(&j, "why", s->why);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "rows");
	for (int i = 0; i < sr->ncells; i++)
		json_cell(&j, sr, &sr->cells[i]);
	json_arr_end(&j);
	json_end(&j);
	return json_file_close(f, "scale", sr->cfg.json);
}

/* ---- --chart ------------------------------------------------------------------------ */

/* Whether row @name has a good cell at some width: a line to draw. */
static bool chart_has(const struct scale_run *sr, const char *name)
{
	for (int k = 0; k < sr->cfg.nwidths; k++)
		if (cell_ok(scale_cell_of(sr, name, sr->cfg.widths[k])))
			return true;
	return false;
}

/* The wide rows' Mpps against width: a line for each with a figure, no
 * chart where none has one (gnuplot draws no plot without data). */
void scale_chart(const struct scale_run *sr)
{
	static const char *const lines[] = { "kernel-cpumap", "cpumap", "cpumap-coalesce" };
	bool draw[3];
	int ndraw = 0;
	char gp[512];
	FILE *f;

	for (size_t i = 0; i < 3; i++)
		ndraw += draw[i] = chart_has(sr, lines[i]);
	if (!ndraw) {
		printf("chart: no figure of kernel-cpumap, cpumap or cpumap-coalesce: no chart in %s\n",
		       sr->cfg.chart);
		return;
	}
	snprintf(gp, sizeof(gp), "%s.gp", sr->cfg.chart);
	f = fopen(gp, "w");
	if (!f) {
		perror(gp);
		return;
	}
	fprintf(f, "set terminal pngcairo size 900,500\nset output '%s'\n"
		"set title 'ucpumap at width on %s (median of %d rounds)'\n"
		"set xlabel 'width: queues = RX threads = workers'\nset ylabel 'Mpps delivered'\n"
		"set yrange [0:*]\nset logscale x 2\nset xtics (", sr->cfg.chart,
		sr->cfg.dev ? sr->cfg.dev : "veth: a generator per queue", sr->nrounds);
	for (int k = 0; k < sr->cfg.nwidths; k++)
		fprintf(f, "%s%d", k ? ", " : "", sr->cfg.widths[k]);
	fprintf(f, ")\nset key left top\nplot ");
	for (size_t i = 0, n = 0; i < 3; i++)
		if (draw[i])
			fprintf(f, "%s'-' using 1:2 with linespoints lw 2 title '%s'", n++ ? ", " : "",
				lines[i]);
	fprintf(f, "\n");
	for (size_t i = 0; i < 3; i++) {
		if (!draw[i])
			continue;
		for (int k = 0; k < sr->cfg.nwidths; k++) {
			const struct scale_cell *c = scale_cell_of(sr, lines[i], sr->cfg.widths[k]);
			struct run_stats st;

			if (!cell_ok(c))
				continue;
			run_stats(c->dst, sr->nrounds, &st);
			fprintf(f, "%d %f\n", c->width, st.median / 1e6);
		}
		fprintf(f, "e\n");
	}
	fclose(f);
	if (!have_prog("gnuplot"))
		printf("chart: gnuplot is not installed here; `gnuplot %s` draws it\n", gp);
	else if (sh("gnuplot '%s' 2>&1", gp))
		printf("chart: gnuplot failed on %s\n", gp);
	else
		printf("chart: %s (its script: %s)\n", sr->cfg.chart, gp);
}
