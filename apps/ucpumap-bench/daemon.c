// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: ucpumapd as a row runs it. Its command line is
 * the row's (its flag, coalescing or --no-coalesce, two-way with its way
 * back) and the run's (--cpus, --queues, --rx-cpus, ...); it is started in
 * the DUT's namespace on the rows' interface with a tun named ucmb0, and is
 * ready when both are there. SIGUSR1 makes it append a statistics line to
 * its --stats-json file: the rows' samples of its counters and histograms.
 * kinds.c (its rows) and latency.c (its latency rows) use it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datapath.h"

/* ucpumapd runs two-way: its way back to vg's MAC, the route to the
 * generator's address through the tun. */
static bool row_two_way(const struct row *r)
{
	return r->def->ops->two_way || r->def->ops->back || row_kind(r) == K_LAT_TWOWAY;
}

/* ucpumapd's command line for row @r. */
static void daemon_argv(const struct bench_run *br, const struct row *r, struct daemon_run *d,
			char **argv)
{
	const struct bench_cfg *cfg = &br->cfg;
	int n = 0;

	argv[n++] = d->bin;
	argv[n++] = "--dev"; argv[n++] = (char *)cfg->ifname;
	argv[n++] = "--tun"; argv[n++] = "ucmb0";
	argv[n++] = "--cpus"; argv[n++] = (char *)cfg->cpus;
	argv[n++] = "--queues"; argv[n++] = (char *)cfg->queues;
	argv[n++] = "--interval"; argv[n++] = "0";
	argv[n++] = "--stats-json"; argv[n++] = d->js;
	if (cfg->rx_cpus) {
		argv[n++] = "--rx-cpus";
		argv[n++] = (char *)cfg->rx_cpus;
	} else if (r->def->rx_on_wcpu) {
		/* Inline, the RX thread is the worker: on the workers' CPU,
		 * as --cpus puts them, beside the responder (latency.c,
		 * RESPOND_CPU_WHY). */
		snprintf(d->rx_cpu, sizeof(d->rx_cpu), "%d", cfg->wcpu[0]);
		argv[n++] = "--rx-cpus";
		argv[n++] = d->rx_cpu;
	}
	if (cfg->zero_copy)
		argv[n++] = "--zero-copy";
	if (cfg->busy_poll)
		argv[n++] = "--busy-poll";
	if (cfg->poll)
		argv[n++] = "--poll";
	if (cfg->spin_us) {
		snprintf(d->spin, sizeof(d->spin), "%lu", cfg->spin_us);
		argv[n++] = "--spin-us";
		argv[n++] = d->spin;
	}
	if (row_two_way(r)) {
		argv[n++] = "--peer-mac";
		argv[n++] = (char *)br->topo.vg_mac;
	}
	if (r->def->flag)
		argv[n++] = (char *)r->def->flag;
	if (r->def->flag_arg)
		argv[n++] = (char *)r->def->flag_arg;
	if (!r->def->coalesce)
		argv[n++] = "--no-coalesce";
	argv[n] = NULL;
}

int daemon_start(struct bench_run *br, const struct row *r, struct daemon_run *d)
{
	struct bench_topo *t = &br->topo;
	char *argv[32];

	snprintf(d->out, sizeof(d->out), "%s/d-%s", t->tmpdir, r->def->name);
	snprintf(d->js, sizeof(d->js), "%s/d-%s.json", t->tmpdir, r->def->name);
	snprintf(d->bin, sizeof(d->bin), "%s", br->cfg.daemon);
	unlink(d->js);
	daemon_argv(br, r, d, argv);
	d->l0 = delivered_now(t);
	d->pid = spawn(t, t->ns_dut, d->out, argv);
	if (d->pid < 0 || wait_ready(br, d->pid, "ucmb0", "ucpumapd", d->out))
		return -1;
	set_sysctl("/proc/sys/net/ipv4/conf/ucmb0/rp_filter", "0");
	/* the way back: through the tun only */
	if (row_two_way(r) && sh("ip route replace 10.77.0.1/32 dev ucmb0")) {
		fprintf(stderr, "datapath: %s: cannot route the way back through ucmb0\n",
			r->def->name);
		d->rc = -1;
	}
	return 0;
}

int daemon_stop(struct bench_run *br, const struct row *r, const struct daemon_run *d)
{
	return stop_child(&br->topo, d->pid, r->def->name, "ucpumapd", d->out);
}

/* ---- its statistics on demand --------------------------------------------------- */

/* Lines of @path, whatever their length. */
static int count_lines(const char *path)
{
	char buf[4096];
	size_t k, i;
	int n = 0;
	FILE *f = fopen(path, "r");

	while (f && (k = fread(buf, 1, sizeof(buf), f)))
		for (i = 0; i < k; i++)
			n += buf[i] == '\n';
	if (f)
		fclose(f);
	return n;
}

/* "tun_packets" (and "rx" into *@rx, "time" into *@when, -1 without
 * them) of a complete line after the first @skip lines of @js: 0, or -1
 * when there is none yet. */
static int tun_packets_after(const char *js, int skip, double *v, double *rx, double *when)
{
	char *line = NULL;
	size_t cap = 0;
	int n = 0;
	FILE *f = fopen(js, "r");

	*v = *rx = *when = -1;
	while (f && getline(&line, &cap, f) > 0)
		if (++n > skip && strchr(line, '\n')) {
			json_u64_field(line, "tun_packets", v);
			json_u64_field(line, "rx", rx);
			json_u64_field(line, "time", when);
		}
	if (f)
		fclose(f);
	free(line);
	return *v >= 0 ? 0 : -1;
}

/* ucpumapd's tun_packets now: SIGUSR1 makes it append a line to its
 * --stats-json file. -1 when no line came within a second. @kern: the
 * kernel's delivered count at about the same moment, the middle of two reads
 * that bracket the signal (the daemon counts a packet after the kernel has).
 * @rx: the line's "rx", what its sockets received, and @when its "time"
 * (-1 without them). */
double daemon_sample(const struct bench_topo *t, const struct daemon_run *d, double *kern,
		     double *rx, double *when)
{
	int n0 = count_lines(d->js);
	uint64_t k0 = delivered_now(t);
	double v;

	kill(d->pid, SIGUSR1);
	for (int i = 0; i < 2000; i++) {	/* short steps: a narrow bracket */
		sleep_sec(0.0005);
		if (!tun_packets_after(d->js, n0, &v, rx, when)) {
			*kern = (k0 + delivered_now(t)) / 2.0;
			return v;
		}
	}
	return -1;
}

char *daemon_json_line(const struct daemon_run *d)
{
	int n0 = count_lines(d->js);
	char *line;

	kill(d->pid, SIGUSR1);
	for (int i = 0; i < 1000; i++) {
		sleep_sec(0.001);
		if (count_lines(d->js) > n0) {
			line = last_line(d->js);
			if (line && strchr(line, '\n'))
				return line;
			free(line);
		}
	}
	return NULL;
}
