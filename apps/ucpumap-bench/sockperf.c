// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the latency rows checked by a tool of their own,
 * sockperf (Debian's): its server in the DUT's namespace and its ping-pong
 * client in the generator's, both where the scheduler puts them, one
 * message in flight at SOCKPERF_MPS a second for --seconds, full round
 * trips (--full-rtt), through the kernel's cpumap (sockperf-kernel-cpumap)
 * or through ucpumapd one way (sockperf-cpumap, the answer by the kernel's
 * own path), as latency-kernel-cpumap and latency-cpumap take them.
 *
 * sockperf times the round trip in its client, from before its send to
 * after its receive: the client's own wake-up is in its figure, where the
 * bench's probes take the kernel's timestamps on the socket. The report
 * sets the two side by side (report.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include "datapath.h"

#define SOCKPERF_PORT	"9003"
#define SOCKPERF_MPS	"1000"	/* the latency rows' probe rate */

/* sockperf's percentiles of a ping-pong run in @out: p50, p90, p99,
 * p99.9 into @p, and its valid messages sent and received. A reply lost
 * is the last message sent: the client waits for it until its -t ends,
 * outside the valid window, so the whole run's loss (its Total Run line)
 * is added to what was sent where it is more. 0, or -1 when the output
 * lacks them. */
static int sockperf_parse(const char *out, double *p, double *sent, double *rcvd)
{
	static const double want[4] = { 50.0, 90.0, 99.0, 99.9 };
	char line[512];
	int have = 0, valid = 0, total = 0;
	double t_sent = 0, t_rcvd = 0;
	FILE *f = fopen(out, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		double pc, v;
		char *s;

		if ((s = strstr(line, "[Valid Duration]")) &&
		    (s = strstr(s, "SentMessages=")) &&
		    sscanf(s, "SentMessages=%lf; ReceivedMessages=%lf", sent, rcvd) == 2)
			valid = 1;
		if ((s = strstr(line, "[Total Run]")) && (s = strstr(s, "SentMessages=")) &&
		    sscanf(s, "SentMessages=%lf; ReceivedMessages=%lf", &t_sent, &t_rcvd) == 2)
			total = 1;
		if (!(s = strstr(line, "percentile ")) || sscanf(s, "percentile %lf = %lf", &pc, &v) != 2)
			continue;
		for (int i = 0; i < 4; i++)
			if (pc > want[i] - 0.0005 && pc < want[i] + 0.0005) {
				p[i] = v;
				have |= 1 << i;
			}
	}
	fclose(f);
	if (!(have == 0xf && valid && total))
		return -1;
	if (t_sent - t_rcvd > *sent - *rcvd)
		*sent = *rcvd + (t_sent - t_rcvd);
	return 0;
}

/*
 * Stop the server @s of row @row (output in @out): 0 when it goes as its
 * SIGTERM asks, -1 after a message. sockperf (3.7) has no handler for
 * SIGTERM: the signal's default action ends it, a status of 128 + SIGTERM
 * from reap() (0 from one that catches it); any other status, another
 * signal, or no end within 10 s is a failure.
 */
static int sockperf_stop(struct bench_topo *t, pid_t s, const char *row, const char *out)
{
	int rc;

	kill(s, SIGTERM);
	rc = reap(t, s, 10);
	if (rc == 0 || rc == 128 + SIGTERM)
		return 0;
	if (rc < 0)
		fprintf(stderr, "datapath: %s: the sockperf server ran on 10 s after SIGTERM: "
			"killed:\n", row);
	else
		fprintf(stderr, "datapath: %s: the sockperf server did not stop cleanly "
			"(status %d, not %d):\n", row, rc, 128 + SIGTERM);
	show_tail(5, out, NULL);
	return -1;
}

/* One ping-pong run against a server started here, both in @br's
 * namespaces: 0, or -1 after a message. */
static int sockperf_run(struct bench_run *br, struct row *r, int round)
{
	struct bench_topo *t = &br->topo;
	char sout[256], cout[256], secs[32];
	char *server[] = { "sockperf", "server", "-i", (char *)br->cfg.sink_ip,
			   "-p", SOCKPERF_PORT, NULL };
	char *client[] = { "sockperf", "ping-pong", "-i", (char *)br->cfg.sink_ip,
			   "-p", SOCKPERF_PORT, "--mps", SOCKPERF_MPS, "-t", secs,
			   "--full-rtt", NULL };
	pid_t s, c;
	int rc;

	snprintf(secs, sizeof(secs), "%.0f", br->cfg.seconds < 1 ? 1 : ceil(br->cfg.seconds));
	snprintf(sout, sizeof(sout), "%s/sockperf-s-%s", t->tmpdir, r->def->name);
	snprintf(cout, sizeof(cout), "%s/sockperf-c-%s", t->tmpdir, r->def->name);
	s = spawn(t, t->ns_dut, sout, server);
	if (s < 0)
		return -1;
	sleep_sec(0.3);		/* listening */
	r->responder_cpu = lat_placement(s);
	c = spawn(t, t->ns_gen, cout, client);
	rc = c < 0 ? -1 : reap(t, c, br->cfg.seconds + 15);
	if (sockperf_stop(t, s, r->def->name, sout))
		return -1;
	if (rc || sockperf_parse(cout, r->lat[round], &r->probes[round][0],
				 &r->answered[round][0])) {
		fprintf(stderr, "datapath: %s: sockperf failed (exit %d):\n", r->def->name, rc);
		show_tail(3, cout, sout);
		return -1;
	}
	r->dst[round] = r->lat[round][0];
	return 0;
}

int row_sockperf(struct bench_run *br, struct row *r, int round)
{
	struct lat_path p;

	if (lat_path_up(br, r, row_kind(r) == K_SOCKPERF_KERNEL, &p))
		return -1;
	return lat_path_down(br, r, &p, sockperf_run(br, r, round));
}

const char *skip_sockperf(const struct bench_cfg *cfg)
{
	if (cfg->dev)
		return "needs the client on the far side of IFACE: veth only";
	if (cfg->v6)
		return "IPv4 only, as the latency rows";
	if (!have_prog("sockperf"))
		return "sockperf is not installed (Debian: apt-get install sockperf)";
	return NULL;
}
