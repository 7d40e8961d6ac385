// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench scale --dev IFACE: the scale bench on a NIC's own queues,
 * fed by an external generator, as datapath --dev is.
 *
 * Nothing of the NIC's is changed: its RX queues (ETHTOOL_GCHANNELS) bound
 * the widths, and the queues the traffic arrives on are the operator's
 * (`ethtool -L`, `ethtool -X`, the generator's flows). A short probe
 * through the kernel's cpumap program finds them by the NIC's per-queue
 * counters (its ethtool statistics); where the driver has none, the
 * traffic is taken to be on every RX queue. Every cell serves those
 * queues, an RX thread each: the wide, no-fair, lanes and fan-in rows at the
 * width that is their number, fan-out (one queue into w workers) when it
 * is one; what another width needs is skipped with the fix. A queue the
 * cell does not serve would hand its packets to the stack, past the row,
 * and the sink would count them: a cell whose window saw traffic there
 * fails. The flood rows need the bench's own generators and are skipped.
 *
 * Offered is what the NIC received in the window (/proc/net/dev: packets
 * and drops, datapath's nic_rx_now()); delivered, the sink's count over
 * the same window; each queue's share, the NIC's per-queue counters.
 */
#include <errno.h>
#include <glob.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "scale.h"
#include "ucpumap/xdp.h"

#define ARRAY_SIZE(a)	((int)(sizeof(a) / sizeof((a)[0])))
/* The probe: long enough for thousands of packets at any generator's
 * pace, short beside a row. */
#define PROBE_SEC	0.5
/* Fewer received packets in the probe than this: no generator running. */
#define PROBE_MIN	100
/* A queue carries the traffic when it takes more than this share of it:
 * RSS spreads 64 flows unevenly, never this thinly; less is stray (ARP,
 * the host's own). */
#define QUEUE_MIN_SHARE	0.01
/* A cell's window with more than this share on queues it does not serve
 * failed: the stack delivered that part, past the row. */
#define OUTSIDE_MAX	0.02

/* Where a queue's received packets are among ethtool's statistics, by
 * driver family (%u: the queue); the first family that names any wins. */
static const char *const qstat_fmt[] = {
	"rx_queue_%u_packets%n",	/* ixgbe, ice, igb, virtio_net */
	"rx-%u.packets%n",		/* i40e, iavf */
	"rx%u_packets%n",		/* mlx5 */
	"[%u]: rx_ucast_packets%n",	/* bnxt: unicast, as the generator sends */
	"rx_queue_%u_xdp_packets%n",	/* veth: every frame its queue took */
};

/* ---- the options ------------------------------------------------------------------- */

int scale_dev_opts(const struct scale_cfg *cfg)
{
	const struct scale_rowdef *d;
	bool flood_only = true;
	int n;

	if (!cfg->dev) {
		if (cfg->sink_ip || cfg->sink_port != 9000 || cfg->zero_copy || cfg->busy_poll) {
			fprintf(stderr, "scale: --sink-ip, --sink-port, --zero-copy and --busy-poll "
				"go with --dev; on veth the sink is 10.77.0.2 port 9000\n");
			return -1;
		}
		return 0;
	}
	if (!cfg->sink_ip) {
		fprintf(stderr, "scale: --dev needs --sink-ip, the address of this host that the "
			"external generator sends to\n");
		return -1;
	}
	if (sink_steered("scale", cfg->sink_ip, cfg->sink_port))
		return -1;
	/* ucpumapd refuses a busy-polling RX thread beside a worker: each
	 * cell would fail to start. */
	if (cfg->busy_poll && cfg->shared) {
		fprintf(stderr, "scale: --busy-poll with --shared-cpus: a busy-polling RX thread "
			"needs a CPU of its own, which shared CPUs cannot give; leave one of them "
			"out\n");
		return -1;
	}
	if (cfg->flows_set || cfg->light_set || cfg->gen_engine) {
		fprintf(stderr, "scale: --flows, --light-rate and --gen-engine are the bench's own "
			"generators': with --dev the traffic is the external generator's (set its "
			"flows there), and the flood rows, the light rate's, do not run\n");
		return -1;
	}
	d = scale_rowdefs(&n);
	for (int i = 0; i < n; i++)
		if (scale_row_wanted(cfg, i) && d[i].shape != SH_FLOOD)
			flood_only = false;
	if (flood_only) {
		fprintf(stderr, "scale: --rows %s: no row runs with --dev: the flood rows need the "
			"bench's own generators (one queue flooding beside light ones, each to "
			"a sink port of its own)\n", cfg->rowlist);
		return -1;
	}
	return 0;
}

/* ---- the NIC's queues and their counters ------------------------------------------- */

/* How many statistics the NIC gives now; -1 when it gives none. */
static int stats_count(const char *ifname)
{
	struct ethtool_sset_info *si = calloc(1, sizeof(*si) + sizeof(__u32));
	int n = -1;

	if (!si)
		return -1;
	si->cmd = ETHTOOL_GSSET_INFO;
	si->sset_mask = 1ULL << ETH_SS_STATS;
	if (!eth_ioctl(ifname, si) && si->sset_mask)
		n = si->data[0];
	free(si);
	return n > 0 ? n : -1;
}

/* Each queue's received-packets statistic among the names @gs holds, into
 * sr->qstat[] (-1: none), by the first family of qstat_fmt that names any. */
static void qstats_match(struct scale_run *sr, const struct ethtool_gstrings *gs)
{
	for (int f = 0; f < ARRAY_SIZE(qstat_fmt); f++) {
		int found = 0;

		for (int q = 0; q < SCALE_DEV_MAX_QUEUES; q++)
			sr->qstat[q] = -1;
		for (unsigned int i = 0; i < gs->len; i++) {
			char name[ETH_GSTRING_LEN + 1];
			unsigned int q;
			int end = -1;

			memcpy(name, gs->data + i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
			name[ETH_GSTRING_LEN] = 0;
			if (sscanf(name, qstat_fmt[f], &q, &end) == 1 && end == (int)strlen(name) &&
			    q < SCALE_DEV_MAX_QUEUES) {
				sr->qstat[q] = i;
				found++;
			}
		}
		if (found)
			return;
	}
}

/* Where each of the NIC's queues counts what it received: sr->qstat[],
 * and have_qstats when every queue (of the first SCALE_DEV_MAX_QUEUES)
 * has a counter. */
static void qstats_find(struct scale_run *sr)
{
	int n = stats_count(sr->cfg.dev);
	struct ethtool_gstrings *gs;

	sr->have_qstats = false;
	if (n < 0 || !(gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN)))
		return;
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	if (!eth_ioctl(sr->cfg.dev, gs) && gs->len == (unsigned int)n) {
		qstats_match(sr, gs);
		sr->nstats = n;
		sr->have_qstats = true;
		for (int q = 0; q < sr->nic_queues && q < SCALE_DEV_MAX_QUEUES; q++)
			sr->have_qstats &= sr->qstat[q] >= 0;
	}
	free(gs);
}

/* Each queue's received count now into @v: 0, or -1 when the NIC's
 * statistics changed under us (a channel count changed) or cannot be read. */
static int queue_counts(const struct scale_run *sr, uint64_t *v)
{
	struct ethtool_stats *st;
	int rc = -1;

	/* The kernel writes as many as it has now, whatever we ask for. */
	if (stats_count(sr->cfg.dev) != sr->nstats)
		return -1;
	st = calloc(1, sizeof(*st) + (size_t)sr->nstats * sizeof(__u64));
	if (!st)
		return -1;
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = sr->nstats;
	if (!eth_ioctl(sr->cfg.dev, st) && st->n_stats == (__u32)sr->nstats) {
		for (int q = 0; q < sr->nic_queues && q < SCALE_DEV_MAX_QUEUES; q++)
			v[q] = sr->qstat[q] >= 0 ? st->data[sr->qstat[q]] : 0;
		rc = 0;
	}
	free(st);
	return rc;
}

/* ---- the set-up -------------------------------------------------------------------- */

/* An explicit width above the NIC's RX queues, where a row needs as many
 * queues as the width: refused with the fix. */
static int check_widths(const struct scale_run *sr)
{
	const struct scale_cfg *cfg = &sr->cfg;
	int n;
	const struct scale_rowdef *d = scale_rowdefs(&n);

	for (int k = 0; k < cfg->nwidths; k++) {
		int w = cfg->widths[k];

		if (w <= sr->nic_queues)
			continue;
		for (int i = 0; i < n; i++) {
			if (!scale_row_wanted(cfg, i) || w < d[i].min_width ||
			    d[i].shape == SH_FAN_OUT || d[i].shape == SH_FLOOD)
				continue;
			fprintf(stderr, "scale: --widths: width %d needs %d RX queues of %s (%s: an "
				"RX thread per queue); it has %d: `ethtool -L %s combined %d`, "
				"and the traffic spread over them (`ethtool -X %s equal %d`)\n", w,
				w, cfg->dev, d[i].name, sr->nic_queues, cfg->dev, w, cfg->dev, w);
			return -1;
		}
	}
	return 0;
}

/* The queues the probe saw traffic on, from the per-queue counts @a and
 * @b around it: 0, or -1 after a message. */
static int traffic_queues(struct scale_run *sr, const uint64_t *a, const uint64_t *b)
{
	int nq = sr->nic_queues < SCALE_DEV_MAX_QUEUES ? sr->nic_queues : SCALE_DEV_MAX_QUEUES;
	double all = 0;

	for (int q = 0; q < nq; q++)
		all += b[q] - a[q];
	if (all < PROBE_MIN / 2) {
		printf("scale: %s's per-queue counters counted %.0f of the packets it received in "
		       "the probe: not used, the traffic is taken to be on every RX queue\n",
		       sr->cfg.dev, all);
		sr->have_qstats = false;
		return 0;
	}
	for (int q = 0; q < nq; q++) {
		sr->probe_share[q] = (b[q] - a[q]) / all;
		if (sr->probe_share[q] <= QUEUE_MIN_SHARE)
			continue;
		if (sr->ntraffic == SCALE_MAX_WIDTH) {
			fprintf(stderr, "scale: the traffic arrives on more than %d queues of %s, "
				"more RX threads than the bench places: spread it over fewer "
				"(`ethtool -X %s equal %d`)\n", SCALE_MAX_WIDTH, sr->cfg.dev,
				sr->cfg.dev, SCALE_MAX_WIDTH);
			return -1;
		}
		sr->traffic[sr->ntraffic++] = q;
	}
	return 0;
}

/* Every RX queue, where the NIC cannot say which the traffic is on. */
static int all_queues(struct scale_run *sr)
{
	if (sr->nic_queues > SCALE_MAX_WIDTH) {
		fprintf(stderr, "scale: %s has %d RX queues and no per-queue counters: the bench "
			"takes the traffic to be on every queue, and places an RX thread for at "
			"most %d: `ethtool -L %s combined %d` or fewer\n", sr->cfg.dev,
			sr->nic_queues, SCALE_MAX_WIDTH, sr->cfg.dev, SCALE_MAX_WIDTH);
		return -1;
	}
	for (int q = 0; q < sr->nic_queues; q++) {
		sr->traffic[sr->ntraffic++] = q;
		sr->probe_share[q] = 1.0 / sr->nic_queues;
	}
	return 0;
}

/* Which of the NIC's queues the traffic arrives on: PROBE_SEC of it
 * through the kernel's cpumap program (a veth's queue takes nothing
 * without a program on it; a NIC's go on as they were), by each queue's
 * counter. 0, or -1 after a message. */
static int probe(struct scale_run *sr)
{
	uint64_t a[SCALE_DEV_MAX_QUEUES] = { 0 }, b[SCALE_DEV_MAX_QUEUES] = { 0 }, n0, n1;
	struct bench_cfg *bc = &sr->br.cfg;
	struct ucm_xdp *x;

	bc->wcpu[0] = sr->cfg.cpus[0];
	bc->nwcpu = 1;
	x = kernel_cpumap_attach(bc, if_nametoindex(bc->ifname));
	if (!x)
		return -1;
	sleep_sec(0.2);
	n0 = nic_rx_now(bc->ifname);
	if (sr->have_qstats && queue_counts(sr, a))
		sr->have_qstats = false;
	sleep_sec(PROBE_SEC);
	n1 = nic_rx_now(bc->ifname);
	if (sr->have_qstats && queue_counts(sr, b))
		sr->have_qstats = false;
	ucm_xdp__detach(x);
	ucm_xdp__destroy(x);
	if (bench_stopped()) {
		fprintf(stderr, "scale: interrupted\n");
		return -1;
	}
	if (n1 - n0 < PROBE_MIN) {
		fprintf(stderr, "scale: %s received %llu packets in %g s: no traffic; start the "
			"external generator (to %s port %lu) first, and keep it sending through "
			"the run\n", bc->ifname, (unsigned long long)(n1 - n0), PROBE_SEC,
			bc->sink_ip, bc->sink_port);
		return -1;
	}
	if (sr->have_qstats && traffic_queues(sr, a, b))
		return -1;
	return sr->have_qstats ? 0 : all_queues(sr);
}

int scale_dev_setup(struct scale_run *sr)
{
	struct scale_cfg *cfg = &sr->cfg;
	struct bench_cfg *bc = &sr->br.cfg;

	if (!if_nametoindex(cfg->dev)) {
		fprintf(stderr, "scale: --dev %s: no such interface in this network namespace\n",
			cfg->dev);
		return -1;
	}
	sr->nic_queues = nic_rx_queues(cfg->dev);
	if (sr->nic_queues < 1) {
		fprintf(stderr, "scale: cannot read %s's RX queues (ETHTOOL_GCHANNELS, "
			"/sys/class/net/%s/queues)\n", cfg->dev, cfg->dev);
		return -1;
	}
	if (check_widths(sr))
		return -1;
	bc->dev = cfg->dev;
	snprintf(bc->ifname, sizeof(bc->ifname), "%s", cfg->dev);
	bc->sink_ip = cfg->sink_ip;
	bc->sink_port = cfg->sink_port;
	bc->v6 = strchr(cfg->sink_ip, ':');
	bc->zero_copy = cfg->zero_copy;
	bc->busy_poll = cfg->busy_poll;
	bc->nsinks = sr->nic_queues < MAX_SINKS ? sr->nic_queues : MAX_SINKS;
	if (topo_dev(&sr->br.topo, bc))
		return -1;
	qstats_find(sr);
	if (probe(sr))
		return -1;
	if (!cfg->nwidths) {
		/* The width the traffic has; with one queue, fan-out's too. */
		cfg->widths[cfg->nwidths++] = sr->ntraffic;
		for (int w = 2; sr->ntraffic == 1 && w <= SCALE_MAX_WIDTH; w *= 2)
			cfg->widths[cfg->nwidths++] = w;
	}
	return 0;
}

/* ---- the cells --------------------------------------------------------------------- */

const char *scale_dev_skip(const struct scale_run *sr, const struct scale_rowdef *def, int w,
			   bool *every)
{
	static char why[384];
	char tq[64];	/* SCALE_MAX_WIDTH queues of at most 2 digits */

	scale_cpu_list(tq, sizeof(tq), sr->traffic, sr->ntraffic);
	*every = true;
	if (def->shape == SH_FLOOD)
		return "they need the bench's own generators (one queue flooding beside light "
		       "ones at --light-rate, each to a sink port of its own); with --dev the "
		       "traffic is the external generator's";
	if (def->shape == SH_FAN_OUT) {
		if (sr->ntraffic == 1)
			return NULL;
		snprintf(why, sizeof(why), "one queue into w workers needs the traffic on one "
			 "queue; it arrives on %d (queue(s) %s): confine it to one (`ethtool -X %s "
			 "equal 1`) for a run of these rows", sr->ntraffic, tq, sr->cfg.dev);
		return why;
	}
	if (sr->ntraffic < def->min_width) {
		snprintf(why, sizeof(why), "they need the traffic on %d queues or more; it "
			 "arrives on %d (queue(s) %s): spread it (`ethtool -X %s equal W`) for a "
			 "run of these rows", def->min_width, sr->ntraffic, tq, sr->cfg.dev);
		return why;
	}
	if (w == sr->ntraffic)
		return NULL;
	*every = false;
	snprintf(why, sizeof(why), "width w needs the traffic on w queues; it arrives on %d "
		 "(queue(s) %s): these rows run at width %d here; for width W spread it over W "
		 "queues (`ethtool -X %s equal W`) and run again", sr->ntraffic, tq, sr->ntraffic,
		 sr->cfg.dev);
	return why;
}

/* An RX thread per queue the traffic arrives on, in order, on the first
 * --cpus CPUs (beside each queue's interrupt: docs/BENCHMARKING.md); the
 * workers on the next. */
void scale_dev_place(const struct scale_run *sr, const struct scale_rowdef *def, int w,
		     struct scale_place *pl)
{
	const struct scale_cfg *cfg = &sr->cfg;
	int n = cfg->ncpus, q = sr->ntraffic;

	memset(pl, 0, sizeof(*pl));
	pl->ngen = q;
	pl->nwk = def->shape == SH_FAN_IN ? 1 : w;
	for (int i = 0; i < q; i++) {
		pl->queue[i] = sr->traffic[i];
		pl->rx[i] = cfg->cpus[i % n];
		pl->gen[i] = -1;
	}
	for (int i = 0; i < pl->nwk; i++)
		pl->wk[i] = cfg->cpus[(q + i) % n];
}

/* Whether round @k of cell @c saw its traffic on its own queues: a
 * message and false when more than OUTSIDE_MAX of it was elsewhere. */
static bool on_its_queues(const struct scale_run *sr, const struct scale_cell *c, int k)
{
	double all = 0, in = 0;
	char qs[128];

	for (int q = 0; q < sr->nic_queues && q < SCALE_DEV_MAX_QUEUES; q++)
		all += c->qoff[k][q];
	for (int i = 0; i < c->pl.ngen; i++)
		in += c->qoff[k][c->pl.queue[i]];
	if (all <= 0 || (all - in) / all <= OUTSIDE_MAX)
		return true;
	scale_cpu_list(qs, sizeof(qs), c->pl.queue, c->pl.ngen);
	fprintf(stderr, "scale: %s: %.1f%% of what %s received arrived on queues other than %s, "
		"which the row does not serve (the stack took it, and the sink counted it): "
		"the traffic moved since the probe; keep the generator's flows and RSS as they "
		"were through the run\n", c->name, 100 * (all - in) / all, sr->cfg.dev, qs);
	return false;
}

int scale_dev_window(struct scale_run *sr, struct scale_cell *c, int k)
{
	uint64_t a[SCALE_DEV_MAX_QUEUES], b[SCALE_DEV_MAX_QUEUES], n0, n1, d0, d1;
	const char *ifname = sr->br.cfg.ifname;
	bool qs = sr->have_qstats && !queue_counts(sr, a);

	double tn0, tn1, td0, td1;

	/* The far side's generator does not stop with the window: each count
	 * over its own time between its two reads (a sink's drain may take
	 * most of a second at a high rate), offered scaled to the window. */
	n0 = nic_rx_now(ifname);
	tn0 = now_sec();
	d0 = delivered_now(&sr->br.topo);
	td0 = now_sec();
	bench_sleep(sr->cfg.seconds);
	n1 = nic_rx_now(ifname);
	tn1 = now_sec();
	/* The queues' counts beside the NIC's, before the sink's drain. */
	qs = qs && !queue_counts(sr, b);
	d1 = delivered_now(&sr->br.topo);
	td1 = now_sec();
	c->sent[k] = (n1 - n0) * sr->cfg.seconds / (tn1 - tn0);
	c->dst[k] = (d1 - d0) / (td1 - td0);
	for (int q = 0; qs && q < sr->nic_queues && q < SCALE_DEV_MAX_QUEUES; q++)
		c->qoff[k][q] = (b[q] - a[q]) * sr->cfg.seconds / (tn1 - tn0);
	c->have_qoff = (k == 0 || c->have_qoff) && qs;
	if (bench_stopped())
		return -1;
	if (n1 == n0) {
		fprintf(stderr, "scale: %s: %s received nothing in the window: the external "
			"generator stopped?\n", c->name, ifname);
		return -1;
	}
	return qs && !on_its_queues(sr, c, k) ? -1 : 0;
}

/* ---- what it prints ---------------------------------------------------------------- */

void scale_dev_header(const struct scale_run *sr)
{
	const struct bench_cfg *bc = &sr->br.cfg;
	char tq[128];

	scale_cpu_list(tq, sizeof(tq), sr->traffic, sr->ntraffic);
	printf("scale: %s, %d RX queue(s); the external generator's traffic to %s port %lu "
	       "arrives on queue(s) %s", bc->ifname, sr->nic_queues, bc->sink_ip, bc->sink_port,
	       tq);
	if (sr->have_qstats) {
		printf(" (the probe's shares:");
		for (int i = 0; i < sr->ntraffic; i++)
			printf(" %.1f%%", 100 * sr->probe_share[sr->traffic[i]]);
		printf(")");
	} else {
		printf(" (taken so: %s has no per-queue counters the bench reads)", bc->ifname);
	}
	printf("; %d round(s) x %g s per row\n", sr->cfg.rounds, sr->cfg.seconds);
}

void scale_dev_shares(const struct scale_run *sr, const struct scale_cell *c)
{
	double all = 0, in = 0, v[SCALE_MAX_WIDTH] = { 0 };

	if (!c->have_qoff)
		return;
	for (int k = 0; k < sr->nrounds; k++) {
		for (int q = 0; q < sr->nic_queues && q < SCALE_DEV_MAX_QUEUES; q++)
			all += c->qoff[k][q];
		for (int i = 0; i < c->pl.ngen; i++)
			v[i] += c->qoff[k][c->pl.queue[i]];
	}
	printf("    %-24s offered by queue (the NIC's counters):", "");
	for (int i = 0; i < c->pl.ngen; i++) {
		printf("%s q%d %.1f%%", i ? "," : "", c->pl.queue[i], all > 0 ? 100 * v[i] / all : 0);
		in += v[i];
	}
	printf("; elsewhere %.1f%%\n", all > 0 ? 100 * (all - in) / all : 0);
}
