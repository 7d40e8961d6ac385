// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the whole path, row against row.
 *
 * On veth (the default), one topology for all rows: a generator namespace
 * (ucpumap-gen on vg, CPU 0: its live engine, its packet engine for --mtu's
 * frames past what a live frame holds) joined by a veth pair to a DUT
 * namespace (vd) that holds a bound UDP socket the bench never reads while
 * traffic runs. The bench itself enters the DUT namespace (setns), so the
 * sink socket, the kernel rows' XDP programs, the tun of the tun-ceiling row
 * and the /proc/net/snmp counters are all its own. ucpumapd, ucpumap-gen and
 * dpdk-testpmd run as child processes under `ip netns exec`.
 *
 * With --dev IFACE (a real NIC), there is no topology: an external generator
 * sends to --sink-ip, an address of this host, and the bench runs its rows on
 * IFACE in its own namespace, counting what the NIC received as offered.
 *
 * Delivered = delta of Udp and Udp6 InDatagrams + RcvbufErrors around a run,
 * the socket drained before and after (the kernel counts InDatagrams when a
 * datagram is read).
 *
 * This file: the options and the run loop (rows interleaved, round after
 * round). The rows are rows.c's table, each run by its kind's function
 * (kinds.c, latency.c); the results are report.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/if_ether.h>

#include "bench.h"
#include "datapath.h"
#include "opts.h"

_Static_assert(MAX_ROUNDS <= RUN_STATS_MAX, "run_stats() takes every round");

/* --queues as one range A or A-B (testpmd's start_queue/queue_count); a
 * list that is not one range leaves cfg->nq 0. What ucpumapd would refuse
 * (its rules: distinct queues 0-63): -1, said, before any row runs. */
static int queue_range(struct bench_cfg *cfg, const char *s)
{
	uint32_t list[64];
	unsigned long a, b;
	char *end;
	int n;

	cfg->nq = 0;
	n = parse_index_list(s, list, 64, "datapath: --queues");
	if (n < 0)
		return -1;
	cfg->nqueues = n;
	a = strtoul(s, &end, 10);
	b = a;
	if (*end == '-')
		b = strtoul(end + 1, &end, 10);
	if (*end || b < a || b > 1023)
		return 0;	/* a list: ucpumapd takes it, testpmd cannot */
	cfg->q0 = a;
	cfg->nq = b - a + 1;
	return 0;
}

static int opt_queues(const struct opt *o, const char *arg, void *cfg)
{
	return queue_range(cfg, arg);
}

static const struct opt_enum gen_engines[] = { GEN_ENGINE_NAMES };

static const struct opt dp_opts[] = {
	OPT_DEF("rounds", OPT_UINT, struct bench_cfg, rounds, .lo = 1, .hi = MAX_ROUNDS,
		.flags = OPT_F_DEFAULT, .metavar = "N", .help = "rounds"),
	OPT_DEF("seconds", OPT_SECONDS, struct bench_cfg, seconds, .dlo = 0.2, .dhi = 3600,
		.flags = OPT_F_DEFAULT, .metavar = "S", .help = "seconds per row and round"),
	OPT_DEF("rows", OPT_STRING, struct bench_cfg, rowlist, .metavar = "LIST",
		.help = "comma-separated rows (default all): kernel-pass, kernel-cpumap, pass, "
			"cpumap-no-recycle, cpumap, cpumap-coalesce (4 flows), "
			"cpumap-coalesce-many-flows (1024 flows), cpumap-no-batch, "
			"cpumap-no-hold, cpumap-no-prewake, tun-ceiling, "
			"dpdk, two-way, two-way-no-direct-bulk, two-way-prewake (both directions "
			"at once: direct bulk recycling; the pre-wake's cost), tcp-kernel, tcp, "
			"tcp-coalesce, "
			"tcp-kernel-cpumap (one iperf3 TCP stream, Gbit/s: the kernel's own "
			"path, through ucpumapd, through the kernel's cpumap), tcp-back, "
			"tcp-back-no-offload, tcp-back-sw-csum, tcp-back-prewake (the stream "
			"from the DUT through the way back, with and without the tun's "
			"offloads, with every checksum its own, and with the pre-wake), "
			"udp-back (64-byte datagrams the way back, pps), cpumap-no-latency, "
			"latency-kernel-cpumap, latency-cpumap, latency-cpumap-spin (--spin-us "
			"1000), latency-cpumap-poll (--poll: needs --rx-cpus and CPUs to "
			"spare), latency-cpumap-no-prewake, "
			"latency-pass, latency-two-way, latency-two-way-prewake (UDP round "
			"trips, us; the responder where the scheduler puts it), "
			"latency-kernel-cpumap-pinned, latency-cpumap-pinned (the responder "
			"on the first --cpus CPU), sockperf-kernel-cpumap, sockperf-cpumap "
			"(the first two by sockperf's ping-pong, full round trips); every "
			"ucpumapd row but the *-coalesce, tcp-back* and latency ones runs "
			"--no-coalesce"),
	OPT_DEF("rate", OPT_UINT, struct bench_cfg, rate, .lo = 0, .hi = 1000000000,
		.metavar = "PPS",
		.help = "the generator's rate (default 0: as fast as it goes)"),
	OPT_DEF("ipv6", OPT_FLAG, struct bench_cfg, v6, .short_opt = '6',
		.help = "IPv6 traffic (fd77::1 -> fd77::2) instead of IPv4"),
	OPT_DEF("cpus", OPT_CPUS, struct bench_cfg, wcpu, .count = OPT_REF(struct bench_cfg, nwcpu),
		.text = OPT_REF(struct bench_cfg, cpus), .flags = OPT_F_DEFAULT, .metavar = "LIST",
		.help = "the workers' CPUs (ucpumapd, kernel cpumap, testpmd's forwarding "
			"cores; the tun ceiling writes from the first; on veth not CPU 0 unless "
			"every row is a latency row)"),
	OPT_DEF("json", OPT_OUTFILE, struct bench_cfg, json, .metavar = "FILE",
		.help = "every run of every row as JSON"),
	OPT_DEF("chart", OPT_OUTFILE, struct bench_cfg, chart, .metavar = "FILE",
		.help = "a PNG chart of the rows (gnuplot)"),
	OPT_DEF("dev", OPT_STRING, struct bench_cfg, dev, .lo = 1, .hi = IF_NAMESIZE - 1,
		.metavar = "IFACE",
		.heading = "On a real NIC, fed by an external generator (see docs/BENCHMARKING.md):",
		.help = "run the rows on IFACE, in this namespace; no veth, no ucpumap-gen; the "
			"NIC's received packets stand for sent"),
	OPT_DEF("sink-ip", OPT_ADDR, struct bench_cfg, sink_ip, .metavar = "ADDR",
		.help = "the address the generator sends to, one of this host's (required with "
			"--dev)"),
	OPT_DEF("sink-port", OPT_UINT, struct bench_cfg, sink_port, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "P", .help = "the UDP port it sends to"),
	OPT_DEF("queues", OPT_CUSTOM, struct bench_cfg, queues, .parse = opt_queues,
		.text = OPT_REF(struct bench_cfg, queues), .flags = OPT_F_DEFAULT, .metavar = "LIST",
		.help = "the RX queues the rows use; testpmd needs one range, like 0-3"),
	OPT_DEF("rx-cpus", OPT_CPUS, struct bench_cfg, rx_cpu,
		.count = OPT_REF(struct bench_cfg, n_rx_cpu), .text = OPT_REF(struct bench_cfg, rx_cpus),
		.metavar = "LIST", .help = "ucpumapd's --rx-cpus (on veth too: where its RX "
			"thread runs)"),
	OPT_DEF("spin-us", OPT_UINT, struct bench_cfg, spin_us, .lo = 0, .hi = 1000,
		.metavar = "US", .help = "ucpumapd's --spin-us"),
	OPT_DEF("poll", OPT_FLAG, struct bench_cfg, poll,
		.help = "ucpumapd's --poll (it needs --rx-cpus, and CPUs to spare)"),
	OPT_DEF("mtu", OPT_UINT, struct bench_cfg, mtu, .lo = 1280, .hi = 9000, .metavar = "N",
		.help = "the veth pair's MTU (default 1500); the generator's UDP rows send "
			"N + 14-byte frames (past 3408 bytes through an AF_PACKET socket, slower "
			"than the live frames; tun-ceiling and udp-back stay at 64), the XDP "
			"programs are loaded frags-aware"),
	OPT_DEF("gen-engine", OPT_ENUM, struct bench_cfg, gen_engine, .vals = gen_engines,
		.metavar = "ENGINE",
		.help = "ucpumap-gen's --engine: live, loop, xsk or packet (default: its own "
			"choice, live where the kernel runs live frames, else loop; packet past "
			"3408-byte frames)"),
	OPT_DEF("zero-copy", OPT_FLAG, struct bench_cfg, zero_copy, .help = "ucpumapd's --zero-copy"),
	OPT_DEF("busy-poll", OPT_FLAG, struct bench_cfg, busy_poll,
		.help = "ucpumapd's --busy-poll (it needs --rx-cpus apart from --cpus)"),
	{}
};

static const struct opts_cmd dp_cmd = {
	.name = "datapath",
	.invoked = "ucpumap-bench datapath",
	.usage = "ucpumap-bench datapath [options]",
	.doc =
"The whole datapath on a veth pair between two namespaces: ucpumap-gen on CPU 0\n"
"sends 64-byte UDP (16 flows; the coalescing rows: 4 and 1024) to a bound,\n"
"never-read socket in the DUT namespace; each row forwards it its own way;\n"
"delivered = Udp and Udp6 InDatagrams + RcvbufErrors at the sink. Rows run\n"
"interleaved, round after round. Needs root.\n",
	.opts = dp_opts,
};

/*
 * ucpumapd's threads as it places them (poll_check()): an RX thread a
 * queue, on --rx-cpus in turn, polling; the workers on --cpus, polling
 * when @wk_poll. NULL, or why ucpumapd would refuse them (a static
 * buffer: the bench's set-up is one thread).
 */
static const char *poll_place(const struct bench_cfg *cfg, bool wk_poll)
{
	/* With --pass alone the RX threads are ucpumapd's only threads: the
	 * workers' CPUs are the kernel's cpumap's, in its rows. */
	int nwk = cfg->pass_only ? 0 : cfg->nwcpu;
	int nrx = cfg->nqueues > 1 ? cfg->nqueues : 1;
	int cpus[2 * APP_MAX_CPUS], n = 0, npoll = 0;
	bool polls[2 * APP_MAX_CPUS];
	static char why[256];

	if (!cfg->n_rx_cpu)
		return "needs ucpumapd's RX thread on a CPU of its own: give --rx-cpus (one "
		       "per queue)";
	for (int q = 0; q < nrx && n < 2 * APP_MAX_CPUS; q++) {
		cpus[n] = cfg->rx_cpu[q % cfg->n_rx_cpu];
		polls[n++] = true;
		npoll++;
		if (!cfg->dev && cpus[n - 1] == 0)
			return "--rx-cpus 0 is the generator's CPU; give another";
	}
	for (int w = 0; w < nwk && n < 2 * APP_MAX_CPUS; w++) {
		cpus[n] = cfg->wcpu[w];
		polls[n++] = wk_poll;
		npoll += wk_poll;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (cpus[i] == cpus[j] && (polls[i] || polls[j])) {
				snprintf(why, sizeof(why), "%s share a CPU (%d), as ucpumapd places "
					 "them (queue q's RX thread on the q-th --rx-cpus CPU, in "
					 "turn); a polling thread needs one of its own",
					 j >= nrx ? "two workers" : i >= nrx ?
					 "--rx-cpus and --cpus" : "two queues' RX threads", cpus[i]);
				return why;
			}
	/* Polling CPUs are distinct now: one must be left to the rest. */
	if (npoll >= cpu_online_count())
		return "its polling threads would hold every CPU; a host with CPUs to spare";
	return NULL;
}

const char *bench_poll_refused(const struct bench_cfg *cfg)
{
	static char poll_why[300];
	const char *why = poll_place(cfg, true);

	if (!why)
		return NULL;
	snprintf(poll_why, sizeof(poll_why), "polling (--poll, --spin-us): %s", why);
	return poll_why;
}

/* The workers' and the polling RX threads' CPUs against the generator's and
 * each other: 0, or -1 after a message. */
static int check_cpus(struct bench_run *br)
{
	struct bench_cfg *cfg = &br->cfg;

	/* On veth CPU 0 sends: a worker there measures less than its
	 * capacity. Latency rows alone take it (a small host's placement,
	 * the probes at 1000 a second beside it), and say so. */
	for (int i = 0; !cfg->dev && i < cfg->nwcpu; i++)
		if (cfg->wcpu[i] == 0 && !rows_latency_only(br)) {
			fprintf(stderr, "datapath: --cpus: CPU 0 carries the generator and the "
				"veth's receive work; give the workers other CPUs (latency rows "
				"alone may share it)\n");
			return -1;
		}
	/* ucpumapd's own placement for busy-polling RX threads: said here,
	 * before any row, not by each ucpumapd it starts. */
	if (cfg->busy_poll && !cfg->spin_us && !cfg->poll && poll_place(cfg, false)) {
		fprintf(stderr, "datapath: --busy-poll: %s\n", poll_place(cfg, false));
		return -1;
	}
	if ((cfg->spin_us || cfg->poll) && bench_poll_refused(cfg)) {
		fprintf(stderr, "datapath: %s\n", bench_poll_refused(cfg));
		return -1;
	}
	return 0;
}

/* Options into br->cfg, and the rows into br->rows. Return 0 to go on,
 * OPTS_HELP when the help was asked for, or -1 after a message (usage). */
static int parse_args(struct bench_run *br, int argc, char **argv)
{
	struct bench_cfg *cfg = &br->cfg;
	int rc = opts_parse(&dp_cmd, cfg, argc, argv);

	if (rc)
		return rc;
	if (!cfg->nwcpu) {
		/* A NIC's several queues into that one worker: a fan-in the
		 * user may not have meant. */
		if (cfg->dev && strpbrk(cfg->queues, ",-"))
			fprintf(stderr, "datapath: --queues %s and no --cpus: every queue feeds "
				"one worker, on CPU 1; give --cpus, a CPU of %s's node for each "
				"worker\n", cfg->queues, cfg->dev);
		cfg->wcpu[0] = 1;
		cfg->nwcpu = 1;
		if (!cpu_usable(1)) {
			fprintf(stderr, "datapath: the default worker's CPU 1 is not one this "
				"process may run on (taskset, a cpuset): give --cpus\n");
			return -1;
		}
	}
	/* On veth the generator, the latency prober and the way back's
	 * sender run on CPU 0: not moved, the rows would all fail. */
	if (!cfg->dev && !cpu_usable(0)) {
		fprintf(stderr, "datapath: CPU 0 is not one this process may run on (taskset, a "
			"cpuset): on veth the generator, the latency prober and the way back's "
			"sender run there; allow it\n");
		return -1;
	}
	if (cfg->dev) {
		if (!cfg->sink_ip) {
			fprintf(stderr, "datapath: --dev needs --sink-ip, the address of this host "
				"that the external generator sends to\n");
			return -1;
		}
		if (cfg->rate || cfg->v6 || cfg->mtu || cfg->gen_engine) {
			fprintf(stderr, "datapath: --rate, --ipv6, --mtu and --gen-engine are the "
				"generator's and the topology's: with --dev the generator runs outside "
				"and the NIC's MTU is yours, set them there (the sink's family follows "
				"--sink-ip)\n");
			return -1;
		}
		if (sink_steered("datapath", cfg->sink_ip, cfg->sink_port))
			return -1;
		snprintf(cfg->ifname, sizeof(cfg->ifname), "%s", cfg->dev);
		cfg->v6 = strchr(cfg->sink_ip, ':');
	} else {
		if (cfg->sink_ip || cfg->sink_port != 9000 || cfg->zero_copy ||
		    strcmp(cfg->queues, "0")) {
			fprintf(stderr, "datapath: --sink-ip, --sink-port, --queues and "
				"--zero-copy go with --dev; on veth the sink is 10.77.0.2 "
				"(fd77::2 with --ipv6) port 9000, queue 0\n");
			return -1;
		}
		snprintf(cfg->ifname, sizeof(cfg->ifname), "vd");
		cfg->sink_ip = cfg->v6 ? "fd77::2" : "10.77.0.2";
		if (cfg->gen_engine && cfg->gen_engine != GEN_ENGINE_PACKET &&
		    gen_frame_size(cfg) > GEN_LIVE_MAX) {
			fprintf(stderr, "datapath: --gen-engine %s: --mtu %lu makes %lu-byte frames, "
				"and its frames hold %d bytes: give --gen-engine packet, or leave "
				"--gen-engine out (the bench then picks packet)\n", gen_engine(cfg),
				cfg->mtu, gen_frame_size(cfg), GEN_LIVE_MAX);
			return -1;
		}
	}
	if (rows_select(br, cfg->rowlist))
		return -1;
	cfg->pass_only = rows_pass_only(br);
	return check_cpus(br);
}

int bench_progs(struct bench_cfg *cfg, const char *who)
{
	char self[512], gen[600], sbin[600];
	ssize_t sl;

	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		fprintf(stderr, "%s: cannot find this program's folder (/proc/self/exe): %s\n", who,
			sl ? strerror(errno) : "empty");
		return -1;
	}
	self[sl] = 0;
	if (strrchr(self, '/'))
		*strrchr(self, '/') = 0;
	snprintf(cfg->bindir, sizeof(cfg->bindir), "%s", self);
	snprintf(gen, sizeof(gen), "%s/ucpumap-gen", self);
	snprintf(cfg->daemon, sizeof(cfg->daemon), "%s/ucpumapd", self);
	snprintf(sbin, sizeof(sbin), "%s/../sbin/ucpumapd", self);
	if (access(cfg->daemon, X_OK) && !access(sbin, X_OK))
		snprintf(cfg->daemon, sizeof(cfg->daemon), "%s", sbin);
	if (access(gen, X_OK)) {
		fprintf(stderr, "%s: no ucpumap-gen beside this program (%s): install both, or run the bench from the build folder\n",
			who, gen);
		return -1;
	}
	if (access(cfg->daemon, X_OK)) {
		fprintf(stderr, "%s: no ucpumapd beside this program (%s/ucpumapd) or in %s: install it, or run the bench from the build folder\n",
			who, self, sbin);
		return -1;
	}
	return 0;
}

static void print_header(const struct bench_run *br)
{
	const struct bench_cfg *cfg = &br->cfg;
	unsigned long size = gen_frame_size(cfg);

	if (cfg->dev)
		printf("datapath: %s queue(s) %s, external generator to %s port %lu, %d round(s) x "
		       "%g s per row; workers on CPU(s) %s\n", cfg->dev, cfg->queues, cfg->sink_ip,
		       cfg->sink_port, cfg->rounds, cfg->seconds, cfg->cpus);
	else
		printf("datapath: veth vg (ns %s, ucpumap-gen %s, CPU 0) -> vd (ns %s), %lu-byte "
		       "%s UDP, 16 flows, rate %s, %d round(s) x %g s per row; workers on CPU(s) "
		       "%s\n", br->topo.ns_gen, gen_engine(cfg),
		       br->topo.ns_dut, size, cfg->v6 ? "IPv6" : "IPv4",
		       cfg->rate ? "fixed" : "as fast as it goes", cfg->rounds, cfg->seconds, cfg->cpus);
	if (cfg->rate)
		printf("datapath: offered rate %lu pps\n", cfg->rate);
	fflush(stdout);
}

/* Round @k of every row that runs: the failures. The table's order, and
 * the reverse every other round (A-B, B-A): a drift within a round, or
 * what a row leaves the next, then weighs on a pair both ways. */
static int run_round(struct bench_run *br, int k)
{
	int failed = 0;

	for (int j = 0; j < br->nrows && !bench_stopped(); j++) {
		int i = k % 2 ? br->nrows - 1 - j : j;
		struct row *r = &br->rows[i];

		if (!r->on || r->skipped)
			continue;
		if (r->def->ops->run(br, r, k)) {
			/* What a failed round left (zeros, the kernel's path)
			 * is no figure: the row's medians, gains and JSON
			 * leave the row out, as a skipped one, with why. */
			failed++;
			fprintf(stderr, "datapath: round %d, row %s failed\n", k + 1, r->def->name);
			snprintf(r->failed_why, sizeof(r->failed_why),
				 "failed in round %d (its figures left out)", k + 1);
			r->skipped = r->failed_why;
			continue;
		}
		if (r->def->ops->latency && r->load_pps[k] <= 0)
			printf("  round %d %-18s %7.1f us p50\n", k + 1, r->def->name, r->dst[k]);
		else if (r->def->ops->latency)
			printf("  round %d %-18s %7.1f us p50 alone, %.1f us under %.0f pps\n", k + 1,
			       r->def->name, r->dst[k], r->lat_load[k][0], r->load_pps[k]);
		else if (row_is_tcp(r))
			printf("  round %d %-18s %7.3f Gbit/s received\n", k + 1, r->def->name,
			       r->dst[k] / 1e9);
		else
			printf("  round %d %-18s %7.3f Mpps delivered\n", k + 1, r->def->name,
			       r->dst[k] / 1e6);
		fflush(stdout);
	}
	return failed;
}

int bench_datapath(int argc, char **argv)
{
	struct bench_run br = {
		.cfg = { .rounds = 5, .seconds = 5, .sink_port = 9000, .cpus = "1",
			 .queues = "0", .nq = 1 },
	};
	int nr = 0, failed = 0, rc;

	topo_init(&br.topo);
	rc = parse_args(&br, argc, argv);
	if (rc) {
		rc = rc == OPTS_HELP ? 0 : 2;
		goto out;
	}
	rc = 1;
	if (geteuid()) {
		fprintf(stderr, "datapath: needs root (namespaces, XDP, tun)\n");
		goto out;
	}
	if (cpu_online_count() < 2) {
		fprintf(stderr, "datapath: needs CPUs 0 and 1\n");
		goto out;
	}
	if (bench_progs(&br.cfg, "datapath"))
		goto out;
	rows_skip(&br);
	topo_signals();
	if (topo_tmpdir(&br.topo))
		goto out;
	if (br.cfg.dev ? topo_dev(&br.topo, &br.cfg) : topo_veth(&br.topo, &br.cfg))
		goto out_topo;
	libbpf_set_print(NULL);
	print_header(&br);
	for (int k = 0; k < br.cfg.rounds && !bench_stopped(); k++) {
		failed += run_round(&br, k);
		nr = k + 1;
	}
	if (bench_stopped()) {
		fprintf(stderr, "datapath: interrupted\n");
		goto out_topo;
	}
	report_tables(&br, nr);
	if (br.cfg.json && report_json(&br, nr))
		failed++;
	if (br.cfg.chart)
		report_chart(&br, nr);
	rc = failed ? 1 : 0;
out_topo:
	topo_cleanup(&br.topo, row_kind_on(&br, K_DPDK));
out:
	free(br.rows);
	return rc;
}
