// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the traffic. ucpumap-gen's live engine on vg
 * (or, with --dev, the external generator, counted at the NIC), one
 * iperf3 TCP stream for the TCP rows, and the way back's sender of the
 * two-way rows.
 */
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath.h"

/* Start ucpumap-gen in the generator's namespace for cfg.seconds, for row
 * @tag; its output into @out (a buffer of GEN_OUT bytes). */
pid_t gen_start(const char *tag, int flows, char *out)
{
	return gen_start_at(tag, flows, cfg.rate, cfg.seconds, out);
}

/* The same at @rate pps (0: as fast as it can) for @seconds. */
pid_t gen_start_at(const char *tag, int flows, double rate_pps, double seconds, char *out)
{
	char dur[32], rate[32], gen[600], port[16], nflows[16];
	char *argv[] = { gen, "--dev", "vg", "--dst-ip", (char *)cfg.sink_ip, "--dst-mac", vd_mac,
			 "--dst-port", port, "--flows", nflows, "--cpu", "0",
			 "--duration", dur, "--rate", rate, NULL };

	snprintf(out, GEN_OUT, "%s/gen-%s", tmpdir, tag);
	snprintf(gen, sizeof(gen), "%s/ucpumap-gen", cfg.bindir);
	snprintf(nflows, sizeof(nflows), "%d", flows ? flows : DEFAULT_FLOWS);
	snprintf(dur, sizeof(dur), "%g", seconds);
	snprintf(rate, sizeof(rate), "%.0f", rate_pps);
	snprintf(port, sizeof(port), "%lu", cfg.sink_port);
	return spawn(ns_gen, out, argv);
}

/* Wait up to @timeout s for generator @g of row @tag: 0 when it exited
 * cleanly; -1 otherwise (also when it did not start), its last lines shown. */
int gen_wait(pid_t g, const char *tag, const char *out, double timeout)
{
	if (g > 0 && reap(g, timeout) == 0)
		return 0;
	fprintf(stderr, "datapath: %s: the generator failed:\n", tag);
	show_tail(3, out, NULL);
	return -1;
}

/* Offer traffic to whatever is on the interface now, for cfg.seconds; fills
 * @sent. On veth the generator runs now; with --dev it is already running
 * outside, and what the NIC received stands for what was sent. */
int run_traffic(const char *tag, int flows, double *sent, double *dev_dst)
{
	char out[GEN_OUT];
	pid_t g;

	if (cfg.dev) {
		/* The far side's generator does not stop with the window:
		 * what is delivered is counted over the same window as what
		 * was offered, not over the row's set-up and drain. */
		uint64_t n0 = nic_rx_now(), k0 = delivered_now();

		sleep_sec(cfg.seconds);
		*sent = nic_rx_now() - n0;
		*dev_dst = delivered_now() - k0;
		return stopping ? -1 : 0;
	}
	g = gen_start(tag, flows, out);
	if (gen_wait(g, tag, out, cfg.seconds + 10))
		return -1;
	*sent = gen_total(out);
	return 0;
}

/* One iperf3 TCP stream from the generator's namespace (CPU 0) to the
 * sink address, for cfg.seconds: its receiver's rate, bit/s, in @bps.
 * @back: the other way, from the DUT's namespace (CPU 0) to the
 * generator's address (10.77.0.1), through the tun and the way back. */
int run_tcp(const char *tag, bool back, double *bps)
{
	char sout[256], cout[256], port[16], secs[32];
	char *to = back ? "10.77.0.1" : (char *)cfg.sink_ip;
	char *server[] = { "iperf3", "-s", "-1", "-B", to, "-p", port, NULL };
	char *client[] = { "iperf3", "-c", to, "-p", port, "-t", secs, "-A", "0",
			   "-J", NULL };
	pid_t s, c;
	int rc;

	snprintf(port, sizeof(port), "%d", TCP_PORT);
	snprintf(secs, sizeof(secs), "%g", cfg.seconds);
	snprintf(sout, sizeof(sout), "%s/iperf3-s-%s", tmpdir, tag);
	snprintf(cout, sizeof(cout), "%s/iperf3-c-%s", tmpdir, tag);
	*bps = 0;
	s = spawn(back ? ns_gen : ns_dut, sout, server);
	if (s < 0)
		return -1;
	sleep_sec(0.3);		/* listening */
	c = spawn(back ? ns_dut : ns_gen, cout, client);
	rc = c < 0 ? -1 : reap(c, cfg.seconds + 15);
	if (reap(s, 5) != 0)
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
	inet_pton(AF_INET, "10.77.0.1", &dst.sin_addr);
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

void back_start(struct back_sender *b)
{
	b->d0 = back_delivered_now();
	b->started = !pthread_create(&b->thr, NULL, back_send_main, b);
}

/* Stop the sender; its rates, sent and delivered, when it ran. */
void back_stop(struct back_sender *b, double *sent_pps, double *dst_pps)
{
	if (!b->started)
		return;
	atomic_store(&b->stop, 1);
	pthread_join(b->thr, NULL);
	sleep_sec(0.2);
	/* It runs from before the generator starts until after it is
	 * reaped: longer than cfg.seconds. */
	if (b->secs > 0) {
		*sent_pps = b->sent / b->secs;
		*dst_pps = (back_delivered_now() - b->d0) / b->secs;
	}
}
