// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the traffic. ucpumap-gen's live engine on vg
 * (the loop engine where the kernel refuses live frames; or, with --dev,
 * the external generator, counted at the NIC), one iperf3 TCP stream for
 * the TCP rows, and the way back's sender of the two-way rows.
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_ether.h>

#include "datapath.h"

/* Start ucpumap-gen in the generator's namespace for --seconds, for row
 * @tag; its output into @out (a buffer of GEN_OUT bytes). */
pid_t gen_start(struct bench_run *br, const char *tag, int flows, char *out)
{
	return gen_start_at(br, tag, flows, br->cfg.rate, br->cfg.seconds, out);
}

/* The same at @rate pps (0: as fast as it can) for @seconds. */
pid_t gen_start_at(struct bench_run *br, const char *tag, int flows, double rate_pps,
		   double seconds, char *out)
{
	struct gen_spec g = { .cpu = 0, .flows = flows ? flows : DEFAULT_FLOWS,
			      .sport = 0, .dport = br->cfg.sink_port, .rate = rate_pps,
			      .seconds = seconds };

	return gen_start_spec(br, tag, &g, out);
}

unsigned long gen_frame_size(const struct bench_cfg *cfg)
{
	return cfg->mtu ? cfg->mtu + ETH_HLEN : 64;
}

const char *gen_engine(const struct bench_cfg *cfg)
{
	static const struct opt_enum names[] = { GEN_ENGINE_NAMES };

	for (const struct opt_enum *e = names; cfg->gen_engine && e->name; e++)
		if (e->val == cfg->gen_engine)
			return e->name;
	if (gen_frame_size(cfg) > GEN_LIVE_MAX)
		return "packet";
	/* ucpumap-gen's own choice, named in the banner: the loop engine
	 * sends from --cpu, as the live engine does */
	return xdp_live_frames() ? "loop" : "live";
}

pid_t gen_start_spec(struct bench_run *br, const char *tag, const struct gen_spec *g,
		     char *out)
{
	const struct bench_cfg *cfg = &br->cfg;
	struct bench_topo *t = &br->topo;
	char dur[32], rate[32], gen[600], port[16], nflows[16], cpu[16], sport[16], size[16];
	char start[32];
	char *argv[28] = { gen, "--dev", "vg", "--dst-ip", (char *)cfg->sink_ip, "--dst-mac",
			   t->vd_mac, "--dst-port", port, "--flows", nflows, "--cpu", cpu,
			   "--duration", dur, "--rate", rate };
	int n = 17;

	snprintf(out, GEN_OUT, "%s/gen-%s", t->tmpdir, tag);
	snprintf(gen, sizeof(gen), "%s/ucpumap-gen", cfg->bindir);
	snprintf(nflows, sizeof(nflows), "%d", g->flows);
	snprintf(cpu, sizeof(cpu), "%d", g->cpu);
	snprintf(sport, sizeof(sport), "%u", g->sport);
	snprintf(dur, sizeof(dur), "%g", g->seconds);
	snprintf(rate, sizeof(rate), "%.0f", g->rate);
	snprintf(port, sizeof(port), "%u", g->dport);
	if (g->sport) {
		argv[n++] = "--src-port";
		argv[n++] = sport;
	}
	if (cfg->mtu) {
		snprintf(size, sizeof(size), "%lu", gen_frame_size(cfg));
		argv[n++] = "--size";
		argv[n++] = size;
	}
	if (cfg->mtu || cfg->gen_engine) {
		argv[n++] = "--engine";
		argv[n++] = (char *)gen_engine(cfg);
	}
	if (g->stamp)
		argv[n++] = "--stamp";
	if (g->start_at > 0) {
		snprintf(start, sizeof(start), "%.6f", g->start_at);
		argv[n++] = "--start-at";
		argv[n++] = start;
	}
	argv[n] = NULL;
	return spawn(t, t->ns_gen, out, argv);
}

/* The first of the generator's own lines in its output @out ("ucpumap-gen:
 * ...") that holds @what, into @line; false when none does. */
static bool gen_line(const char *out, const char *what, char *line, size_t len)
{
	FILE *f = fopen(out, "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, len, f))
		found = !strncmp(line, "ucpumap-gen: ", 13) && strstr(line, what);
	fclose(f);
	return found;
}

/* Whether the banner of the generator's output @out names @engine: what the
 * bench's own banner says it sends with. */
static bool gen_used(const char *out, const char *engine)
{
	char line[512], want[32];

	snprintf(want, sizeof(want), ", %s engine", engine);
	return gen_line(out, " -> ", line, sizeof(line)) && strstr(line, want);
}

/* A generator that missed its --start-at (its set-up took longer) sent
 * in a window apart from the others': said with its line. */
static void gen_late(const char *out, const char *tag)
{
	char line[512];

	if (gen_line(out, "--start-at: ", line, sizeof(line)))
		fprintf(stderr, "datapath: %s: %s", tag, line);
}

/* Wait up to @timeout s for generator @g of row @tag: 0 when it exited
 * cleanly with the engine the bench names; -1 otherwise (also when it did
 * not start), its last lines shown. */
int gen_wait(struct bench_run *br, pid_t g, const char *tag, const char *out, double timeout)
{
	const char *engine = gen_engine(&br->cfg);

	if (g <= 0 || reap(&br->topo, g, timeout)) {
		fprintf(stderr, "datapath: %s: the generator failed:\n", tag);
	} else if (!gen_used(out, engine)) {
		fprintf(stderr, "datapath: %s: the generator did not send with the %s engine, which "
			"the bench's banner names:\n", tag, engine);
	} else {
		gen_late(out, tag);
		return 0;
	}
	show_tail(3, out, NULL);
	return -1;
}

/* Offer traffic to whatever is on the interface now, for --seconds; fills
 * @sent. On veth the generator runs now; with --dev it is already running
 * outside, and what the NIC received stands for what was sent. */
int run_traffic(struct bench_run *br, const char *tag, int flows, double *sent,
		double *dev_dst)
{
	const struct bench_cfg *cfg = &br->cfg;
	char out[GEN_OUT];
	pid_t g;

	if (cfg->dev) {
		/* The far side's generator does not stop with the window:
		 * what is delivered is counted over the offered load's
		 * window, not over the row's set-up and drain. Each count
		 * over the time between its own two reads, made --seconds
		 * long: a read of the sink drains it first, most of a second
		 * at a high rate, and a row that delivers more drains longer. */
		uint64_t n0, n1, k0, k1;
		double tn0, tn1, tk0, tk1;

		n0 = nic_rx_now(cfg->ifname);
		tn0 = now_sec();
		k0 = delivered_now(&br->topo);
		tk0 = now_sec();
		bench_sleep(cfg->seconds);
		n1 = nic_rx_now(cfg->ifname);
		tn1 = now_sec();
		k1 = delivered_now(&br->topo);
		tk1 = now_sec();
		*sent = (n1 - n0) * window_scale(cfg->seconds, tn0, tn1);
		*dev_dst = (k1 - k0) * window_scale(cfg->seconds, tk0, tk1);
		return bench_stopped() ? -1 : 0;
	}
	g = gen_start(br, tag, flows, out);
	if (gen_wait(br, g, tag, out, cfg->seconds + 10))
		return -1;
	*sent = gen_total(out);
	return 0;
}

/* One iperf3 TCP stream from the generator's namespace (CPU 0) to the
 * sink address, for --seconds: its receiver's rate, bit/s, in @bps.
 * @back: the other way, from the DUT's namespace (CPU 0) to the
 * generator's address (10.77.0.1), through the tun and the way back. */
int run_tcp(struct bench_run *br, const char *tag, bool back, double *bps)
{
	const struct bench_cfg *cfg = &br->cfg;
	struct bench_topo *t = &br->topo;
	char sout[256], cout[256], port[16], secs[32];
	char *to = back ? GEN_IP4 : (char *)cfg->sink_ip;
	char *server[] = { "iperf3", "-s", "-1", "-B", to, "-p", port, NULL };
	char *client[] = { "iperf3", "-c", to, "-p", port, "-t", secs, "-A", "0",
			   "-J", NULL };
	pid_t s, c;
	int rc;

	snprintf(port, sizeof(port), "%d", TCP_PORT);
	/* iperf3's -t takes whole seconds ("0.5" is its default of 10) */
	snprintf(secs, sizeof(secs), "%.0f", cfg->seconds < 1 ? 1 : cfg->seconds);
	snprintf(sout, sizeof(sout), "%s/iperf3-s-%s", t->tmpdir, tag);
	snprintf(cout, sizeof(cout), "%s/iperf3-c-%s", t->tmpdir, tag);
	*bps = 0;
	s = spawn(t, back ? t->ns_gen : t->ns_dut, sout, server);
	if (s < 0)
		return -1;
	sleep_sec(0.3);		/* listening */
	c = spawn(t, back ? t->ns_dut : t->ns_gen, cout, client);
	rc = c < 0 ? -1 : reap(t, c, cfg->seconds + 15);
	if (reap(t, s, 5) != 0)
		rc = rc ?: -1;
	if (rc) {
		fprintf(stderr, "datapath: %s: iperf3 failed:\n", tag);
		show_tail(3, cout, sout);
		return -1;
	}
	*bps = iperf3_received(cout);
	return *bps > 0 ? 0 : -1;
}

/* ---- the way back (two-way rows) ------------------------------------------- */

static void *back_send_main(void *arg)
{
	struct back_sender *b = arg;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(BACK_PORT) };
	static char payload[64 - 14 - 20 - 8];
	struct mmsghdr m[BACK_BATCH];
	struct iovec iov = { payload, sizeof(payload) };
	double t0;
	int fd, n;

	pin_self(0);
	inet_pton(AF_INET, GEN_IP4, &dst.sin_addr);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return NULL;
	memset(m, 0, sizeof(m));
	for (int i = 0; i < BACK_BATCH; i++) {
		m[i].msg_hdr.msg_name = &dst;
		m[i].msg_hdr.msg_namelen = sizeof(dst);
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now_sec();
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		n = sendmmsg(fd, m, BACK_BATCH, 0);
		if (n > 0)
			b->sent += n;
		else
			sched_yield();	/* ENOBUFS: the tun's queue is full */
	}
	b->secs = now_sec() - t0;
	close(fd);
	return NULL;
}

void back_start(const struct bench_topo *t, struct back_sender *b)
{
	b->d0 = back_delivered_now(t);
	b->started = !pthread_create(&b->thr, NULL, back_send_main, b);
}

/* Stop the sender; its rates, sent and delivered, when it ran. */
void back_stop(const struct bench_topo *t, struct back_sender *b, double *sent_pps,
	       double *dst_pps)
{
	if (!b->started)
		return;
	atomic_store(&b->stop, 1);
	pthread_join(b->thr, NULL);
	sleep_sec(0.2);
	/* It runs from before the generator starts until after it is
	 * reaped: longer than --seconds. */
	if (b->secs > 0) {
		*sent_pps = b->sent / b->secs;
		*dst_pps = (back_delivered_now(t) - b->d0) / b->secs;
	}
}
