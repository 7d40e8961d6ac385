// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench scale: the datapath at width, against the kernel's cpumap.
 *
 * One veth pair as many queues wide as the widest width; at width w, w
 * generators (ucpumap-gen's live or loop engine, one per CPU) each feed
 * one of vd's RX queues: veth's ndo_xdp_xmit puts a redirected frame on the
 * peer's queue (sending CPU) % (its queues), and that queue's NAPI, with the XDP
 * program on vd, runs on the sending CPU. ucpumapd then serves the w queues
 * with w RX threads and w workers, each on a CPU of its own; the kernel's
 * cpumap spreads the same flows by the same L4 hash over the same worker
 * CPUs. Besides the wide rows, fan-in (w queues into one worker), fan-out
 * (one queue into w workers) and flood (fan-in with queue 0 flooding and
 * the others at a light fixed rate, each to a sink of its own: what each
 * light queue got through).
 *
 * Rows run interleaved, round after round, width after width. Delivered is
 * datapath's: the sink's InDatagrams + RcvbufErrors (here a SO_REUSEPORT
 * group of one socket per queue, never read). The results are
 * scale_report.c's; the NIC form (--dev: the NIC's queues, an external
 * generator) is scale_dev.c's, the widths and each row's CPUs
 * scale_place.c's.
 */
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bench.h"
#include "opts.h"
#include "scale.h"
#include "ucpumap/xdp.h"

#define ARRAY_SIZE(a)	((int)(sizeof(a) / sizeof((a)[0])))
#define xstr(x)		str(x)
#define str(x)		#x
/* The first generator's first source port; queue i's flows follow it. */
#define SPORT0		10000

static const struct scale_rowdef rowdefs[] = {
	{ "kernel-cpumap", true, SH_WIDE, false, NULL, 1 },
	{ "cpumap", false, SH_WIDE, false, NULL, 1 },
	{ "cpumap-coalesce", false, SH_WIDE, true, NULL, 1 },
	/* one producer per ring below width 2: nothing to share */
	{ "cpumap-no-fair", false, SH_WIDE, false, "--no-fair-share", 2 },
	{ "kernel-cpumap-fan-in", true, SH_FAN_IN, false, NULL, 2 },
	{ "cpumap-fan-in", false, SH_FAN_IN, false, NULL, 2 },
	{ "kernel-cpumap-fan-out", true, SH_FAN_OUT, false, NULL, 2 },
	{ "cpumap-fan-out", false, SH_FAN_OUT, false, NULL, 2 },
	{ "kernel-cpumap-flood", true, SH_FLOOD, false, NULL, 2 },
	{ "cpumap-flood", false, SH_FLOOD, false, NULL, 2 },
	{ "cpumap-flood-no-fair", false, SH_FLOOD, false, "--no-fair-share", 2 },
	/* a lane per RX thread in each worker: nothing to share below 2 */
	{ "cpumap-lanes", false, SH_WIDE, false, "--lanes", 2 },
	{ "cpumap-flood-lanes", false, SH_FLOOD, false, "--lanes", 2 },
};

_Static_assert(ARRAY_SIZE(rowdefs) <= SCALE_MAX_ROWS, "scale_cfg.want holds every row");

/* ucpumapd's rows, as daemon.c starts them: one-way, no extra flag. */
static const struct row_kind_ops daemon_ops = { .kind = K_DAEMON };

const struct scale_rowdef *scale_rowdefs(int *n)
{
	*n = ARRAY_SIZE(rowdefs);
	return rowdefs;
}

const struct scale_cell *scale_cell_of(const struct scale_run *sr, const char *name, int w)
{
	for (int i = 0; i < sr->ncells; i++)
		if (sr->cells[i].width == w && !strcmp(sr->cells[i].def->name, name))
			return &sr->cells[i];
	return NULL;
}

/* ---- options ----------------------------------------------------------------- */

static int opt_widths(const struct opt *o, const char *arg, void *p)
{
	struct scale_cfg *cfg = p;
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned long w;
	int rc = -1;

	cfg->widths_s = arg;
	cfg->nwidths = 0;
	if (!copy || list_check(arg, "scale: --widths"))
		goto out;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint(tok, 1, SCALE_MAX_WIDTH, "scale: --widths", &w))
			goto out;
		for (int i = 0; i < cfg->nwidths; i++)
			if (cfg->widths[i] == (int)w) {
				fprintf(stderr, "scale: --widths: %lu given twice\n", w);
				goto out;
			}
		if (cfg->nwidths == SCALE_MAX_WIDTH)
			goto out;
		cfg->widths[cfg->nwidths++] = w;
	}
	rc = cfg->nwidths ? 0 : -1;
	if (rc)
		fprintf(stderr, "scale: --widths: give widths, e.g. 1,2,4\n");
	/* In order: the table, the chart's line and the skips read so. */
	for (int i = 1; i < cfg->nwidths; i++)
		for (int j = i; j > 0 && cfg->widths[j - 1] > cfg->widths[j]; j--) {
			int t = cfg->widths[j];

			cfg->widths[j] = cfg->widths[j - 1];
			cfg->widths[j - 1] = t;
		}
out:
	free(copy);
	return rc;
}

static int opt_rows(const struct opt *o, const char *arg, void *p)
{
	struct scale_cfg *cfg = p;
	char *copy = strdup(arg), *tok, *save = NULL;
	int rc = 0;

	cfg->rowlist = arg;
	memset(cfg->want, 0, sizeof(cfg->want));
	if (!copy || list_check(arg, "scale: --rows")) {
		free(copy);
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < ARRAY_SIZE(rowdefs) && strcmp(rowdefs[i].name, tok); i++)
			;
		if (i == ARRAY_SIZE(rowdefs)) {
			fprintf(stderr, "scale: --rows: no row '%s'; the rows:", tok);
			for (i = 0; i < ARRAY_SIZE(rowdefs); i++)
				fprintf(stderr, " %s", rowdefs[i].name);
			fprintf(stderr, "\n");
			rc = -1;
			break;
		}
		cfg->want[i] = true;
	}
	free(copy);
	return rc;
}

bool scale_row_wanted(const struct scale_cfg *cfg, int i)
{
	for (int j = 0; j < ARRAY_SIZE(rowdefs); j++)
		if (cfg->want[j])
			return cfg->want[i];
	return true;	/* none named: every row */
}

static const struct opt_enum gen_engines[] = { GEN_ENGINE_NAMES };

static const struct opt scale_opts[] = {
	OPT_DEF("widths", OPT_CUSTOM, struct scale_cfg, widths_s, .parse = opt_widths,
		.metavar = "LIST",
		.help = "the widths, e.g. 1,2,4,8 (default: every power of two whose generators, "
			"RX threads and workers, w of each, fit on CPUs not shared); one given "
			"that does not fit is refused, unless --shared-cpus"),
	OPT_DEF("rounds", OPT_UINT, struct scale_cfg, rounds, .lo = 1, .hi = SCALE_MAX_ROUNDS,
		.flags = OPT_F_DEFAULT, .metavar = "N", .help = "rounds"),
	OPT_DEF("seconds", OPT_SECONDS, struct scale_cfg, seconds, .dlo = 0.2, .dhi = 600,
		.flags = OPT_F_DEFAULT, .metavar = "S", .help = "seconds per row and round"),
	OPT_DEF("rows", OPT_CUSTOM, struct scale_cfg, rowlist, .parse = opt_rows,
		.metavar = "LIST",
		.help = "comma-separated rows (default all): kernel-cpumap, cpumap (--no-coalesce), "
			"cpumap-coalesce (w queues into w workers); cpumap-no-fair (the same, "
			"--no-fair-share); kernel-cpumap-fan-in, "
			"cpumap-fan-in (w queues into 1 worker); kernel-cpumap-fan-out, "
			"cpumap-fan-out (1 queue into w workers); kernel-cpumap-flood, "
			"cpumap-flood (w queues into 1 worker, queue 0 as fast as it goes, the "
			"others at --light-rate), cpumap-flood-no-fair (--no-fair-share); "
			"cpumap-lanes, cpumap-flood-lanes (--lanes: a ring per RX thread in each "
			"worker); all but the first three run at widths 2 and up"),
	OPT_DEF("flows", OPT_UINT, struct scale_cfg, flows, .lo = 1, .hi = 2048,
		.flags = OPT_F_DEFAULT, .metavar = "N", .seen = OPT_REF(struct scale_cfg, flows_set),
		.help = "flows (source ports) per queue; the coalesce rows: " xstr(FEW_FLOWS)
			" per queue, the streams coalescing is for"),
	OPT_DEF("light-rate", OPT_UINT, struct scale_cfg, light_rate, .lo = 1, .hi = 1000000,
		.flags = OPT_F_DEFAULT, .metavar = "PPS", .seen = OPT_REF(struct scale_cfg, light_set),
		.help = "the flood rows: each light queue's rate"),
	OPT_DEF("gen-engine", OPT_ENUM, struct scale_cfg, gen_engine, .vals = gen_engines,
		.metavar = "ENGINE",
		.help = "the generators' ucpumap-gen --engine: live or loop (default: its own "
			"choice, live where the kernel runs live frames, else loop)"),
	OPT_DEF("cpus", OPT_CPUS, struct scale_cfg, cpus, .count = OPT_REF(struct scale_cfg, ncpus),
		.text = OPT_REF(struct scale_cfg, cpus_s), .metavar = "LIST",
		.help = "the CPUs to place on, in order: at width w the first w carry the "
			"generators, the next w ucpumapd's RX threads, the next w the workers "
			"(default: every CPU); with --dev no generator: the first carry the RX "
			"threads, one per queue the traffic arrives on, the next the workers"),
	OPT_DEF("shared-cpus", OPT_FLAG, struct scale_cfg, shared,
		.help = "place a width on fewer than 3w CPUs, sharing them (a functional run "
			"on a small host, not a measure of width)"),
	OPT_DEF("json", OPT_OUTFILE, struct scale_cfg, json, .metavar = "FILE",
		.help = "every run of every row as JSON"),
	OPT_DEF("chart", OPT_OUTFILE, struct scale_cfg, chart, .metavar = "FILE",
		.help = "a PNG chart, Mpps against width (gnuplot; its script is FILE.gp, drawn "
			"later by `gnuplot FILE.gp` where gnuplot is missing)"),
	OPT_DEF("dev", OPT_STRING, struct scale_cfg, dev, .lo = 1, .hi = IF_NAMESIZE - 1,
		.metavar = "IFACE",
		.heading = "On a real NIC, fed by an external generator (see docs/BENCHMARKING.md):",
		.help = "run the rows on IFACE's own queues, in this namespace: no veth, no "
			"generator of ours, the NIC's received packets stand for offered; a width "
			"is as many queues as the traffic arrives on (fan-out: one); the flood "
			"rows are skipped"),
	OPT_DEF("sink-ip", OPT_ADDR, struct scale_cfg, sink_ip, .metavar = "ADDR",
		.help = "the address the generator sends to, one of this host's (required with "
			"--dev)"),
	OPT_DEF("sink-port", OPT_UINT, struct scale_cfg, sink_port, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "P", .help = "the UDP port it sends to"),
	OPT_DEF("zero-copy", OPT_FLAG, struct scale_cfg, zero_copy,
		.help = "ucpumapd's --zero-copy"),
	OPT_DEF("busy-poll", OPT_FLAG, struct scale_cfg, busy_poll,
		.help = "ucpumapd's --busy-poll"),
	{}
};

static const struct opts_cmd scale_cmd = {
	.name = "scale",
	.invoked = "ucpumap-bench scale",
	.usage = "ucpumap-bench scale [options]",
	.doc =
"The datapath at width on a veth pair between two namespaces: at width w, w\n"
"generators (one per CPU, each feeding one of vd's RX queues) send 64-byte\n"
"UDP, --flows flows per queue, to a never-read sink; ucpumapd serves the w\n"
"queues with w RX threads and w workers on CPUs of their own, the kernel's\n"
"cpumap spreads the same flows over the same worker CPUs. Rows run\n"
"interleaved, round after round. With --dev, on a NIC's own queues fed by an\n"
"external generator. Needs root.\n",
	.opts = scale_opts,
};

/* ---- one round of a cell ----------------------------------------------------------- */

/* When the generators start sending (ucpumap-gen --start-at): after
 * every one's set-up (an XDP attach each under the RTNL lock, a grace
 * period or more; the loop engine's namespace), so that all send the
 * same --seconds and delivered / --seconds is the rate. */
#define GEN_LEAD_SEC		0.3
#define GEN_LEAD_PER_GEN	0.1

/* Run the cell's generators for --seconds and count: sent, delivered, and
 * for a flood row each queue's own. 0, or -1 when a generator failed. */
static int run_gens(struct scale_run *sr, struct scale_cell *c, int k)
{
	const struct scale_cfg *cfg = &sr->cfg;
	const struct scale_place *pl = &c->pl;
	bool flood = c->def->shape == SH_FLOOD;
	int flows = c->def->coalesce ? FEW_FLOWS : (int)cfg->flows;
	char out[SCALE_MAX_WIDTH][GEN_OUT], tag[80];
	int lfd[SCALE_MAX_WIDTH], rc = 0;
	pid_t g[SCALE_MAX_WIDTH];
	unsigned int sport[SCALE_MAX_WIDTH];
	struct scale_lat la = {};
	uint32_t sa, da;
	double start, late = 0;
	uint64_t d0, d1;

	/* --flows is bounded so that every generator's run fits. */
	inet_pton(AF_INET, GEN_IP4, &sa);
	inet_pton(AF_INET, sr->br.cfg.sink_ip, &da);
	if (scale_sports(sa, da, sr->br.cfg.sink_port, pl->ngen, pl->nwk, flows, SPORT0,
			 c->wflows, sport)) {
		fprintf(stderr, "scale: %s: %d generators of %d flows do not fit below port 65536\n",
			c->name, pl->ngen, flows);
		return -1;
	}
	c->flows = flows;
	for (int i = 0; i < pl->ngen; i++) {
		lfd[i] = -1;	/* a light sink: a flood row's queues but 0 */
		if (flood && i && (lfd[i] = scale_light_open(&sr->br.cfg, LIGHT_PORT0 + i)) < 0)
			rc = -1;
	}
	if (flood && scale_lat_init(&la, cfg->light_rate, cfg->seconds, pl->ngen - 1))
		rc = -1;
	d0 = delivered_now(&sr->br.topo);
	start = now_sec() + GEN_LEAD_SEC + GEN_LEAD_PER_GEN * pl->ngen;
	for (int i = 0; i < pl->ngen; i++) {
		struct gen_spec s = { .cpu = pl->gen[i], .flows = flows,
				      .sport = sport[i], .dport = sr->br.cfg.sink_port,
				      .seconds = cfg->seconds, .start_at = start };

		if (flood && i > 0) {
			s.dport = LIGHT_PORT0 + i;
			s.rate = cfg->light_rate;
			s.stamp = true;
		}
		snprintf(tag, sizeof(tag), "%s-%d", c->name, i);
		g[i] = gen_start_spec(&sr->br, tag, &s, out[i]);
	}
	c->sent[k] = 0;
	for (int i = 0; i < pl->ngen; i++) {
		double n;

		if (gen_wait(&sr->br, g[i], c->name, out[i], cfg->seconds + 10))
			rc = -1;
		late = fmax(late, gen_late_sec(out[i]));
		n = gen_total(out[i]);
		c->sent[k] += n;
		if (flood)
			*(i ? &c->light_sent[k][i] : &c->flood_sent[k]) = n;
	}
	sleep_sec(0.3);		/* what is on its way arrives */
	for (int i = 1; flood && i < pl->ngen; i++) {
		size_t from = la.n;

		c->light_dst[k][i] = lfd[i] >= 0 ? scale_light_drain(lfd[i], la.us ? &la : NULL) : 0;
		scale_lat_part(&la, from, &c->lq_p50[k][i], &c->lq_p99[k][i], &c->lq_timed[k][i]);
	}
	if (flood)
		scale_lat_done(&la, &c->light_p50[k], &c->light_p99[k], &c->light_timed[k]);
	d1 = delivered_now(&sr->br.topo);
	/* A generator that missed --start-at sent in a window that far
	 * apart: the traffic took that much longer, never less. */
	c->late[k] = late;
	c->dst[k] = (d1 - d0) / (cfg->seconds + late);
	if (flood) {
		c->flood_dst[k] = d1 - d0;
		for (int i = 1; i < pl->ngen; i++)
			c->flood_dst[k] -= c->light_dst[k][i];
	}
	return rc;
}

int scale_cpu_list(char *buf, size_t sz, const int *v, int n)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < n && off < sz; i++)
		off += snprintf(buf + off, sz - off, "%s%d", i ? "," : "", v[i]);
	return off < sz ? 0 : -1;
}

/* Cell @c's placement into the datapath's configuration, as its kernel
 * cpumap and ucpumapd read it: the workers, and ucpumapd's RX threads and
 * queues, the lists' text kept in @sr for as long as the cell runs. */
static void place_cfg(struct scale_run *sr, const struct scale_cell *c)
{
	struct bench_cfg *bc = &sr->br.cfg;

	memcpy(bc->wcpu, c->pl.wk, c->pl.nwk * sizeof(int));
	bc->nwcpu = c->pl.nwk;
	scale_cpu_list(sr->wk_s, sizeof(sr->wk_s), c->pl.wk, c->pl.nwk);
	scale_cpu_list(sr->rx_s, sizeof(sr->rx_s), c->pl.rx, c->pl.ngen);
	scale_cpu_list(sr->q_s, sizeof(sr->q_s), c->pl.queue, c->pl.ngen);
	bc->cpus = sr->wk_s;
	bc->rx_cpus = sr->rx_s;
	bc->queues = sr->q_s;
}

static int run_kernel(struct scale_run *sr, struct scale_cell *c, int k)
{
	struct bench_cfg *bc = &sr->br.cfg;
	struct ucm_xdp *x;
	int rc;

	place_cfg(sr, c);
	x = kernel_cpumap_attach(bc, if_nametoindex(bc->ifname));
	if (!x)
		return -1;
	sleep_sec(0.2);
	rc = sr->cfg.dev ? scale_dev_window(sr, c, k) : run_gens(sr, c, k);
	ucm_xdp__detach(x);
	ucm_xdp__destroy(x);
	return rc;
}

/* Queue @i's counters from its object at @p in ucpumapd's line, before
 * @wks (the workers' array): true when they were there. Its enqueue drops
 * are those of its own "enqueue" array, which ends before the next
 * queue's object. */
static bool queue_counts(struct scale_cell *c, int k, int i, const char *p, const char *wks)
{
	const char *end = strstr(p + 1, "\"queue\":"), *e = p;
	double full, dropped, drops;

	if (!end || end > wks)
		end = wks;
	if (json_u64_field(p, "rx", &c->qrx[k][i]) ||
	    json_u64_field(p, "kernel_rx_ring_full", &full) ||
	    json_u64_field(p, "kernel_rx_dropped", &dropped))
		return false;
	c->qxsk[k][i] = full + dropped;
	c->qenq[k][i] = 0;
	while ((e = strstr(e + 1, "\"drops\":")) && e < end && !json_u64_field(e, "drops", &drops))
		c->qenq[k][i] += drops;
	return true;
}

/* Each queue's rx and each worker's processed, from a line of ucpumapd's:
 * true when all were there. */
static bool line_counts(struct scale_cell *c, int k, const char *line)
{
	const char *p, *wks;
	bool ok;
	int i;

	wks = strstr(line, "\"workers\":");
	p = strstr(line, "\"queues\":");
	ok = p && wks;
	for (i = 0; ok && i < c->pl.ngen; i++)
		ok = (p = strstr(p + 1, "\"queue\":")) && p < wks && queue_counts(c, k, i, p, wks);
	for (i = 0, p = wks; ok && i < c->pl.nwk; i++)
		ok = (p = strstr(p + 1, "\"worker\":")) &&
		     !json_u64_field(p, "processed", &c->wproc[k][i]);
	return ok;
}

/* The counters over the round's window: ucpumapd's last line (on veth all
 * traffic falls in its life), or with --dev, whose generator runs on,
 * the difference of the lines @l0 and @l1 taken around the window (NULL
 * when one did not come), scaled to @seconds by the lines' own times. */
static void daemon_counts(struct scale_cell *c, int k, const char *js, const char *l0,
			  const char *l1, double seconds)
{
	double t0, t1, f = 1;
	char *line;
	double qrx[SCALE_MAX_WIDTH], qxsk[SCALE_MAX_WIDTH], qenq[SCALE_MAX_WIDTH];
	double wproc[SCALE_MAX_WIDTH];
	bool ok;
	int i;

	if (!js) {
		ok = l0 && l1 && line_counts(c, k, l0);
		memcpy(qrx, c->qrx[k], sizeof(qrx));
		memcpy(qxsk, c->qxsk[k], sizeof(qxsk));
		memcpy(qenq, c->qenq[k], sizeof(qenq));
		memcpy(wproc, c->wproc[k], sizeof(wproc));
		ok = ok && line_counts(c, k, l1) && !json_u64_field(l0, "time", &t0) &&
		     !json_u64_field(l1, "time", &t1) && t1 > t0;
		if (ok)
			f = window_scale(seconds, t0, t1);
		for (i = 0; ok && i < SCALE_MAX_WIDTH; i++) {
			c->qrx[k][i] = (c->qrx[k][i] - qrx[i]) * f;
			c->qxsk[k][i] = (c->qxsk[k][i] - qxsk[i]) * f;
			c->qenq[k][i] = (c->qenq[k][i] - qenq[i]) * f;
			c->wproc[k][i] = (c->wproc[k][i] - wproc[i]) * f;
		}
	} else {
		line = last_line(js);
		ok = line && line_counts(c, k, line);
		free(line);
	}
	c->have_daemon = (k == 0 || c->have_daemon) && ok;
}

static int run_daemon(struct scale_run *sr, struct scale_cell *c, int k)
{
	struct row_def rd = { .name = c->name, .ops = &daemon_ops, .coalesce = c->def->coalesce,
			      .flag = c->def->flag };
	struct row r = { .def = &rd, .on = true };
	struct daemon_run d = { 0 };
	char *l0 = NULL, *l1 = NULL;
	int rc;

	place_cfg(sr, c);
	if (daemon_start(&sr->br, &r, &d))
		return -1;	/* it said why, and is gone */
	sleep_sec(0.2);
	if (sr->cfg.dev) {
		/* The NIC's traffic starts before the daemon and goes on
		 * after it: its counters around the window alone. */
		l0 = daemon_json_line(&d);
		rc = scale_dev_window(sr, c, k);
		l1 = daemon_json_line(&d);
	} else {
		rc = run_gens(sr, c, k);
	}
	rc |= d.rc;
	if (daemon_stop(&sr->br, &r, &d))
		rc = -1;
	if (sr->cfg.dev)
		daemon_counts(c, k, NULL, l0, l1, sr->cfg.seconds);
	else
		daemon_counts(c, k, d.js, NULL, NULL, 0);
	free(l0);
	free(l1);
	return rc;
}

/* Round @k of every cell, width after width: the failures. */
static int run_round(struct scale_run *sr, int k)
{
	int failed = 0;

	for (int i = 0; i < sr->ncells && !bench_stopped(); i++) {
		struct scale_cell *c = &sr->cells[i];

		if ((c->def->kernel ? run_kernel(sr, c, k) : run_daemon(sr, c, k)) != 0) {
			c->failed = true;
			failed++;
			fprintf(stderr, "scale: round %d, row %s failed\n", k + 1, c->name);
		}
		printf("  round %d %-26s %7.3f Mpps delivered of %.3f offered\n", k + 1, c->name,
		       c->dst[k] / 1e6, scale_offered(sr, c, k) / 1e6);
		fflush(stdout);
	}
	return failed;
}

/* ---- the run ----------------------------------------------------------------------- */

static int parse_args(struct scale_run *sr, int argc, char **argv)
{
	struct scale_cfg *cfg = &sr->cfg;
	int rc = opts_parse(&scale_cmd, cfg, argc, argv);

	if (rc)
		return rc;
	if (cfg->gen_engine == GEN_ENGINE_XSK || cfg->gen_engine == GEN_ENGINE_PACKET) {
		fprintf(stderr, "scale: --gen-engine: live or loop; the xsk and packet engines "
			"do not send on the queue of their CPU, which is how each generator feeds "
			"its own queue\n");
		return -1;
	}
	if (!cfg->ncpus) {
		/* The first APP_MAX_CPUS it may use, whatever their numbers. */
		cfg->ncpus = cpus_usable(cfg->cpus, APP_MAX_CPUS);
		if (!cfg->ncpus) {
			fprintf(stderr, "scale: no CPU this process may use was found: give --cpus\n");
			return -1;
		}
	}
	return scale_dev_opts(cfg);
}

static void print_header(const struct scale_run *sr)
{
	const struct scale_cfg *cfg = &sr->cfg;

	if (cfg->dev)
		scale_dev_header(sr);
	else
		printf("scale: veth vg (ns %s) -> vd (ns %s), %d queues each way; 64-byte IPv4 "
		       "UDP, %lu flows per queue (coalesce rows %d), ucpumap-gen %s, %d round(s) x "
		       "%g s per row\n", sr->br.topo.ns_gen, sr->br.topo.ns_dut, sr->veth_queues,
		       cfg->flows, FEW_FLOWS, gen_engine(&sr->br.cfg), cfg->rounds, cfg->seconds);
	scale_print_skips(sr, stdout, "scale: ");
	if (cfg->shared)
		printf("scale: --shared-cpus: %s share CPUs; these figures do not measure width\n",
		       cfg->dev ? "RX threads and workers" : "generators, RX threads and workers");
	for (int i = 0; i < sr->ncells; i++) {
		const struct scale_cell *c = &sr->cells[i];
		char g[128], q[128], rx[128], wk[128];

		/* ucpumapd's plain row of each shape the run has: on veth
		 * the wide one, on a NIC the fans too (their queues and
		 * workers are not the wide row's) */
		if (c->def->kernel || c->def->coalesce || c->def->flag ||
		    (c->def->shape != SH_WIDE && !cfg->dev))
			continue;
		scale_cpu_list(g, sizeof(g), c->pl.gen, c->pl.ngen);
		scale_cpu_list(q, sizeof(q), c->pl.queue, c->pl.ngen);
		scale_cpu_list(rx, sizeof(rx), c->pl.rx, c->pl.ngen);
		scale_cpu_list(wk, sizeof(wk), c->pl.wk, c->pl.nwk);
		if (cfg->dev)
			printf("scale: width %d, %s: RX threads on CPUs %s (queues %s), workers %s\n",
			       c->width, c->def->name, rx, q, wk);
		else
			printf("scale: width %d: generators on CPUs %s (queues %s), RX threads %s, "
			       "workers %s\n", c->width, g, q, rx, wk);
	}
	fflush(stdout);
}

/* The veth topology, as many queues wide as the widest width. */
static int veth_up(struct scale_run *sr)
{
	struct bench_cfg *bc = &sr->br.cfg;

	if (scale_pick_widths(sr) || scale_make_cells(sr))
		return -1;
	bc->sink_port = 9000;
	bc->sink_ip = "10.77.0.2";
	bc->veth_queues = sr->veth_queues;
	bc->nsinks = sr->veth_queues;
	snprintf(bc->ifname, sizeof(bc->ifname), "vd");
	return topo_tmpdir(&sr->br.topo) || topo_veth(&sr->br.topo, bc) ? -1 : 0;
}

/* The NIC checked and its traffic probed: then the widths and cells that
 * fit what it found. */
static int dev_up(struct scale_run *sr)
{
	return topo_tmpdir(&sr->br.topo) || scale_dev_setup(sr) || scale_pick_widths(sr) ||
	       scale_make_cells(sr) ? -1 : 0;
}

int bench_scale(int argc, char **argv)
{
	struct scale_run sr = {
		.cfg = { .rounds = 3, .seconds = 3, .flows = 64, .light_rate = 10000,
			 .sink_port = 9000 },
	};
	struct bench_cfg *bc = &sr.br.cfg;
	int failed = 0, rc, stamps = -1;

	topo_init(&sr.br.topo);
	rc = parse_args(&sr, argc, argv);
	if (rc)
		return rc == OPTS_HELP ? 0 : 2;
	if (geteuid()) {
		fprintf(stderr, "scale: needs root (namespaces, XDP, tun)\n");
		return 1;
	}
	rc = 1;
	*bc = (struct bench_cfg){ .rounds = sr.cfg.rounds, .seconds = sr.cfg.seconds,
				  .gen_engine = sr.cfg.gen_engine };
	if (bench_progs(bc, "scale"))
		goto out;
	topo_signals();
	if (!sr.cfg.dev && (stamps = scale_light_stamps_on()) < 0)
		goto out;
	if (sr.cfg.dev ? dev_up(&sr) : veth_up(&sr))
		goto out_topo;
	libbpf_set_print(NULL);
	print_header(&sr);
	for (int k = 0; k < sr.cfg.rounds && !bench_stopped(); k++) {
		failed += run_round(&sr, k);
		sr.nrounds = k + 1;
	}
	if (bench_stopped()) {
		fprintf(stderr, "scale: interrupted\n");
		goto out_topo;
	}
	scale_report(&sr);
	if (sr.cfg.json && scale_json(&sr))
		failed++;
	if (sr.cfg.chart)
		scale_chart(&sr);
	rc = failed ? 1 : 0;
out_topo:
	topo_cleanup(&sr.br.topo, false);
out:
	if (stamps >= 0)
		close(stamps);
	free(sr.cells);
	return rc;
}
