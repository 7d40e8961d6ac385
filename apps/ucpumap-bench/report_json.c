// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath's results as files: every run of every row as
 * JSON (--json), with the run's conditions, and a PNG chart of the UDP
 * rows through gnuplot (--chart). The tables: report.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "datapath.h"

/* ---- the JSON file --------------------------------------------------------- */

/* One value per round. */
static void json_runs(struct json *j, const char *key, const double *v, int nr)
{
	json_arr(j, key);
	for (int k = 0; k < nr; k++)
		json_num(j, NULL, v[k]);
	json_arr_end(j);
}

static const char *const lat_names[4] = { "p50", "p90", "p99", "p999" };

/* A latency row's object: us; "runs" and "median" are the p50 at the
 * probes' rate alone, the other percentiles beside it, and "load" the
 * same under the background load. */
static void json_latency(struct json *j, const struct row *r, int nr)
{
	double v[MAX_ROUNDS];

	json_str(j, "unit", "us");
	/* Where a percentile's rank fell on a lost probe: at least this. */
	if (r->have_load)
		json_u64(j, "lost_probe_us", LAT_LOST_US);
	if (r->responder_cpu >= 0) {
		char where[32];

		snprintf(where, sizeof(where), "pinned to CPU %d", r->responder_cpu);
		json_str(j, "responder", where);
	} else {
		json_str(j, "responder", r->responder_cpu == LAT_NOT_PLACED ? "unknown" :
			 "unpinned");
	}
	json_runs(j, "runs", r->dst, nr);
	for (int p = 0; p < 3 + p999_measured(r, 0, nr); p++) {
		for (int k = 0; k < nr; k++)
			v[k] = r->lat[k][p];
		json_runs(j, lat_names[p], v, nr);
	}
	for (int k = 0; k < nr; k++)
		v[k] = r->probes[k][0] - r->answered[k][0];
	json_runs(j, "lost", v, nr);
	if (r->have_load)
		json_runs(j, "capacity_pps", r->capacity, nr);
	if (r->have_app) {
		/* -1: a round with no probe timed so */
		json_obj(j, "prober_view");
		for (int p = 0; p < 3 + p999_measured(r, 0, nr); p++) {
			for (int k = 0; k < nr; k++)
				v[k] = r->lat_app[k][p];
			json_runs(j, lat_names[p], v, nr);
		}
		for (int p = 0; p < 2; p++) {
			for (int k = 0; k < nr; k++)
				v[k] = r->lat_own[k][p];
			json_runs(j, p ? "own_p99" : "own_p50", v, nr);
		}
		json_obj_end(j);
	}
	if (r->have_stage) {
		static const char *const keys[3] = LAT_STAGES;

		for (int q = 0; q < 2; q++) {
			json_obj(j, q ? "daemon_stage_p99_bound_us" : "daemon_stage_p50_bound_us");
			for (int p = 0; p < 3; p++) {
				for (int k = 0; k < nr; k++)
					v[k] = r->stage[k][p + 3 * q];
				json_runs(j, keys[p], v, nr);
			}
			json_obj_end(j);
		}
	}
	for (int ph = 0; r->have_cost && ph < 2; ph++) {
		json_obj(j, ph ? "cost_load" : "cost_alone");
		for (int c = 0; c < 4; c++) {
			for (int k = 0; k < nr; k++)
				v[k] = r->cost[k][ph][c];
			json_runs(j, cost_name(c), v, nr);
		}
		json_obj_end(j);
	}
	if (!r->have_load)
		return;
	json_obj(j, "load");
	json_runs(j, "pps", r->load_pps, nr);
	for (int p = 0; p < 3 + p999_measured(r, 1, nr); p++) {
		for (int k = 0; k < nr; k++)
			v[k] = r->lat_load[k][p];
		json_runs(j, lat_names[p], v, nr);
	}
	for (int k = 0; k < nr; k++)
		v[k] = r->probes[k][1] - r->answered[k][1];
	json_runs(j, "lost", v, nr);
	json_obj_end(j);
}

/* Row @r's object: every run, and what it measured besides. */
static void json_row(const struct bench_run *br, struct json *j, const struct row *r, int nr)
{
	struct run_stats st;

	json_obj(j, NULL);
	json_str(j, "name", r->def->name);
	if (r->skipped) {
		json_str(j, "skipped", r->skipped);
		json_obj_end(j);
		return;
	}
	if (r->def->ops->latency) {
		json_latency(j, r, nr);
		run_stats(r->dst, nr, &st);
		json_num(j, "median", run_median_bound(r->dst, nr, LAT_LOST_US));
		json_num(j, "min", st.min);
		json_num(j, "max", st.max);
		json_obj_end(j);
		return;
	}
	json_str(j, "unit", row_is_tcp(r) ? "bit/s" : "pps");
	json_runs(j, "runs", r->dst, nr);	/* delivered, in "unit" */
	if (!row_is_tcp(r))
		json_runs(j, "sent_packets", r->sent, nr);
	if (r->have_src)
		json_runs(j, "src_rx_pps", r->src, nr);
	if (r->have_daemon) {
		json_runs(j, "daemon_tun_packets", r->daemon, nr);
		json_str(j, "count_window", br->cfg.dev ? "sigusr1-samples" : "daemon-life");
		json_runs(j, "kernel_delivered_same_window", r->kernel_cmp, nr);
	}
	if (r->have_busy) {
		json_runs(j, "worker_cpu_busy", r->busy, nr);
		json_runs(j, "cpu0_busy", r->busy_cpu0, nr);
	}
	if (r->have_segs) {
		json_runs(j, "super_segs_avg", r->segs, nr);
		json_runs(j, "coalesced_share", r->merged, nr);
	}
	if (r->def->ops->two_way) {
		json_runs(j, "back_sent_pps", r->back_sent, nr);
		json_runs(j, "back_runs", r->back_dst, nr);	/* the way back, delivered, pps */
		json_runs(j, "completions_direct_share", r->direct, nr);
	}
	if (r->have_pool) {
		json_obj(j, "pool");	/* summed over the rounds */
		for (int k = 0; k < NPOOL; k++)
			json_num(j, pool_key(k), r->pool[k]);
		json_obj_end(j);
	}
	run_stats(r->dst, nr, &st);
	json_num(j, "median", st.median);
	json_num(j, "min", st.min);
	json_num(j, "max", st.max);
	json_obj_end(j);
}

int report_json(const struct bench_run *br, int nr)
{
	FILE *f = json_file_open("datapath", br->cfg.json);
	struct utsname u;
	unsigned long mtu;
	struct json j;

	if (uname(&u))
		strcpy(u.release, "?");
	if (!f)
		return -1;
	json_begin(&j, f);
	json_str(&j, "bench", "datapath");
	json_str(&j, "dev", br->cfg.dev ? br->cfg.dev : "veth");
	json_str(&j, "sink_ip", br->cfg.sink_ip);
	json_str(&j, "cpus", br->cfg.cpus);
	json_num(&j, "seconds", br->cfg.seconds);
	json_u64(&j, "rate", br->cfg.rate);
	/* --dev: the NIC's own (--mtu is the veth pair's), and a generator
	 * outside, not the bench's. */
	mtu = br->cfg.dev ? iface_mtu(br->cfg.ifname) : br->cfg.mtu;
	json_u64(&j, "mtu", mtu ? mtu : 1500);
	/* What else a comparison of two runs must hold equal. */
	json_obj(&j, "conditions");
	json_str(&j, "gen_engine", br->cfg.dev ? "external" : gen_engine(&br->cfg));
	json_u64(&j, "rounds", nr);
	json_str(&j, "ip", br->cfg.v6 ? "ipv6" : "ipv4");
	json_str(&j, "rx_cpus", br->cfg.rx_cpus ? br->cfg.rx_cpus : "");
	json_str(&j, "queues", br->cfg.queues ? br->cfg.queues : "");
	json_str(&j, "wait", br->cfg.poll ? "poll" : br->cfg.busy_poll ? "busy-poll" :
		 br->cfg.spin_us ? "spin" : "sleep");
	json_u64(&j, "spin_us", br->cfg.spin_us);
	json_u64(&j, "zero_copy", br->cfg.zero_copy);
	json_str(&j, "kernel", u.release);
	json_obj_end(&j);
	json_arr(&j, "rows");
	for (int i = 0; i < br->nrows; i++)
		if (br->rows[i].on)
			json_row(br, &j, &br->rows[i], nr);
	json_arr_end(&j);
	json_end(&j);
	return json_file_close(f, "datapath", br->cfg.json);
}

/* ---- the chart ------------------------------------------------------------ */

void report_chart(const struct bench_run *br, int nr)
{
	char dat[] = "/tmp/ucm-bench-chart-XXXXXX";
	FILE *f;
	int fd;

	if (!have_prog("gnuplot")) {
		printf("chart: skipped, gnuplot is not installed\n");
		return;
	}
	/* A name of its own (O_EXCL): a root run must not follow another's
	 * link planted at a name it could guess. */
	fd = mkstemp(dat);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		printf("chart: no file for gnuplot's data: %s\n", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(dat);
		}
		return;
	}
	for (int i = 0; i < br->nrows; i++) {
		const struct row *r = &br->rows[i];
		struct run_stats st;

		if (!r->on || r->skipped || r->def->ops->tcp || r->def->ops->latency)
			continue;
		run_stats(r->dst, nr, &st);
		fprintf(f, "\"%s\" %f %f %f\n", r->def->name, st.median / 1e6, st.min / 1e6,
			st.max / 1e6);
	}
	fclose(f);
	if (sh("gnuplot -e \"set terminal pngcairo size 900,500; set output '%s';"
	       "set title 'ucpumap datapath on veth: delivered at the UDP socket (median, min-max)';"
	       "set ylabel 'Mpps'; set yrange [0:*]; set style fill solid 0.6; set boxwidth 0.6;"
	       "set xtics rotate by -30; unset key;"
	       "plot '%s' using 0:2:xtic(1) with boxes, '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt -1\" 2>&1",
	       br->cfg.chart, dat))
		printf("chart: gnuplot failed\n");
	else
		printf("chart: %s\n", br->cfg.chart);
	unlink(dat);
}
