// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * filter: a forwarder with the application's code on every packet. The
 * workers run a verdict callback on each parsed packet: UDP and TCP to
 * PORT are dropped and counted, the rest goes on into the tun TUN. Only a
 * datagram's first fragment carries its ports: the later ones of one to
 * PORT go on, counted delivered, and the stack drops them when their
 * reassembly times out (a firewall that judges them reassembles first).
 *
 *   filter IFACE TUN PORT [SECONDS]      (root: see libucpumap(3), PRIVILEGES)
 *
 * Its last line: "filter: dropped N to port PORT, delivered M, received R".
 * Build: cc filter.c $(pkg-config --cflags --libs libucpumap)
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ucpumap/dp.h>

static volatile sig_atomic_t done;
/* One counter per worker, written by that worker only. */
static atomic_ulong dropped[UCM_CPUMAP_MAX_WORKERS];

static void on_signal(int sig)
{
	done = 1;
}

/* Runs on the worker that holds the packet: must be quick, never block. */
static int drop_port(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	const struct ucm_pkt *p = &frame->pkt;
	uint16_t port = *(const uint16_t *)ctx;

	if ((p->l4_proto == IPPROTO_UDP || p->l4_proto == IPPROTO_TCP) &&
	    (p->flags & UCM_PKT_F_PORTS) && p->dport == port) {
		atomic_fetch_add_explicit(&dropped[worker], 1, memory_order_relaxed);
		return UCM_VERDICT_DROP;
	}
	return UCM_VERDICT_PASS;
}

int main(int argc, char **argv)
{
	unsigned long total = 0;
	struct ucm_dp_health h;
	struct ucm_dp_stats st;
	struct ucm_dp *dp;
	uint16_t port;
	int secs, err, fault = 0;

	if (argc < 4 || atoi(argv[3]) <= 0 || atoi(argv[3]) > 65535) {
		fprintf(stderr, "usage: filter IFACE TUN PORT [SECONDS]\n");
		return 2;
	}
	port = atoi(argv[3]);
	secs = argc > 4 ? atoi(argv[4]) : 0;
	UCM_OPTS(ucm_dp_opts, o, .ifname = argv[1], .tun_name = argv[2],
		 .steer_policy = UCM_STEER_L4_HASH, .flags = UCM_DP_F_COALESCE,
		 .verdict = drop_port, .verdict_ctx = &port);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	dp = ucm_dp__create(&o);
	if (!dp) {
		fprintf(stderr, "filter: %s\n", strerror(errno));
		return 1;
	}
	err = ucm_dp__start(dp);
	if (err) {
		fprintf(stderr, "filter: start: %s\n", strerror(-err));
		ucm_dp__destroy(dp);
		return 1;
	}
	printf("filter: %s -> %s, dropping port %u\n", argv[1], ucm_dp__tun_name(dp), port);
	fflush(stdout);
	/* Every 100 ms: faults (the interface or tun deleted, a socket
	 * or thread failed) end the run; the library logs them. */
	for (int t = 0; !done && (!secs || t < secs * 10); t++) {
		if (ucm_dp__check(dp, &h, sizeof(h)) == 1) {
			fprintf(stderr, "filter: stopping: %s\n", ucm_dp_fault_str(h.fault));
			fault = 1;
			break;
		}
		usleep(100000);
	}
	err = ucm_dp__stop(dp, 1500);
	ucm_dp__stats(dp, &st, sizeof(st));
	for (uint32_t w = 0; w < UCM_CPUMAP_MAX_WORKERS; w++)
		total += atomic_load(&dropped[w]);
	printf("filter: dropped %lu to port %u, delivered %llu, received %llu%s%s\n",
	       total, port, (unsigned long long)st.delivered, (unsigned long long)st.rx,
	       err ? ": " : "", err ? strerror(-err) : "");
	ucm_dp__destroy(dp);
	return err || fault ? 1 : 0;
}
