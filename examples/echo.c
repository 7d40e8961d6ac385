// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * echo: a UDP echo server (port 7) answered from userspace, as XDP_TX
 * would: the verdict callback turns each request around in place (the
 * Ethernet and IP addresses and the ports swapped, which keeps both
 * checksums right) and sends it back out of the interface through XSK TX.
 * Everything else the verdict drops (counted as the workers' drops,
 * UCM_DROP_VERDICT): ARP and the rest stay with the kernel anyway,
 * through the XDP program.
 *
 *   echo IFACE [SECONDS]                 (root: see libucpumap(3), PRIVILEGES)
 *
 * Its last line: "echo: answered N, sent N, dropped on the way out N"
 * (put on the TX ring, and those the TX channel or ring had no room for,
 * of the answered; packets, one of several frames once).
 * Build: cc echo.c $(pkg-config --cflags --libs libucpumap)
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ucpumap/dp.h>

#define ECHO_PORT	7

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	done = 1;
}

static void swap(uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t t[16];

	memcpy(t, a, n);
	memcpy(a, b, n);
	memcpy(b, t, n);
}

/* On the worker: a request to port 7 goes back where it came from. Not
 * one sent to a group or to everyone (the answer's source would be that
 * address), nor one from port 7 (two echo servers would answer each
 * other for ever: RFC 862's echo has the same hazard), nor a fragment:
 * only the first carries the ports, and the sender could not reassemble
 * an answer of the first alone. */
static int turn_around(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	const struct ucm_pkt *p = &frame->pkt;
	uint8_t *d = ucm_frame_data(frame);
	size_t alen = p->flags & UCM_PKT_F_IPV6 ? 16 : 4;	/* the addresses */
	size_t aoff = p->flags & UCM_PKT_F_IPV6 ? 8 : 12;

	if (p->l4_proto != IPPROTO_UDP || !(p->flags & UCM_PKT_F_PORTS) ||
	    (p->flags & UCM_PKT_F_FRAG) || p->dport != ECHO_PORT || p->sport == ECHO_PORT ||
	    (d[0] & 1))
		return UCM_VERDICT_DROP;
	swap(d, d + 6, 6);					/* Ethernet */
	swap(d + p->l3_off + aoff, d + p->l3_off + aoff + alen, alen);	/* IP */
	swap(d + p->l4_off, d + p->l4_off + 2, 2);		/* UDP ports */
	return UCM_VERDICT_TX;
}

int main(int argc, char **argv)
{
	struct ucm_dp_health h;
	struct ucm_dp_stats st;
	struct ucm_dp *dp;
	int secs, err, fault = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: echo IFACE [SECONDS]\n");
		return 2;
	}
	secs = argc > 2 ? atoi(argv[2]) : 0;
	UCM_OPTS(ucm_dp_opts, o, .ifname = argv[1], .steer_policy = UCM_STEER_L4_HASH,
		 .sink = &ucm_sink_null, .verdict = turn_around,
		 .flags = UCM_DP_F_VERDICT_TX);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	dp = ucm_dp__create(&o);
	if (!dp) {
		fprintf(stderr, "echo: %s\n", strerror(errno));
		return 1;
	}
	err = ucm_dp__start(dp);
	if (!err) {
		printf("echo: answering UDP port %d on %s\n", ECHO_PORT, argv[1]);
		fflush(stdout);
		/* Every 100 ms: faults (the interface or tun deleted, a socket
		 * or thread failed) end the run; the library logs them. */
		for (int t = 0; !done && (!secs || t < secs * 10); t++) {
			if (ucm_dp__check(dp, &h, sizeof(h)) == 1) {
				fprintf(stderr, "echo: stopping: %s\n", ucm_dp_fault_str(h.fault));
				fault = 1;
				break;
			}
			usleep(100000);
		}
	}
	if (ucm_dp__stop(dp, 1500) && !err)
		err = -errno;
	ucm_dp__stats(dp, &st, sizeof(st));
	/* Answered: what the verdict turned around; of those, some went on
	 * the TX ring, the TX channel or ring had no room for others
	 * (dropped on the way out). Packets all: tx_completed counts frames. */
	printf("echo: answered %llu, sent %llu, dropped on the way out %llu%s%s\n",
	       (unsigned long long)st.verdict_tx, (unsigned long long)st.tx,
	       (unsigned long long)(st.back_channel_full + st.tx_drops),
	       err ? ": " : "", err ? strerror(-err) : "");
	ucm_dp__destroy(dp);
	return err || fault ? 1 : 0;
}
