/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ucpumapd's pieces: its configuration, its state, and what each file
 * gives the others. */
#ifndef UCPUMAPD_DAEMON_H
#define UCPUMAPD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/dp.h"
#include "httpd.h"

struct cfg {
	const char *dev, *tun, *stats_json;
	uint32_t queues[UCM_XSK_MAX_QUEUES];
	int nqueues;
	int cpus[UCM_CPUMAP_MAX_WORKERS], ncpus;
	int rx_cpus[UCM_XSK_MAX_QUEUES], n_rx_cpus;	/* RX thread i: rx_cpus[i % n] */
	bool tap, busy_poll, no_recycle, no_batch, no_direct_bulk, replace, pass;
	bool no_coalesce, copy, zero_copy;
	bool reverse;			/* two-way: --two-way or --peer-mac */
	bool peer_mac_set;		/* the next hop fixed, not from the kernel */
	uint8_t peer_mac[6];
	int skb_mode, policy, filter, verbose;
	unsigned long fixed, frames, frame_size, rx_size, qsize, mtu;
	uint32_t steer_flags;
	double interval, duration;
	struct httpd_addr metrics;	/* --metrics-listen; .len 0: none */
};

struct daemon {
	struct cfg c;
	struct ucm_dp *dp;
	FILE *json;
	struct ucm_dp_stats last;
	/* Previous snapshots, for the per-line rates. */
	uint64_t last_q_rx[UCM_XSK_MAX_QUEUES], last_q_tx[UCM_XSK_MAX_QUEUES];
	uint64_t last_enq[UCM_XSK_MAX_QUEUES][UCM_CPUMAP_MAX_WORKERS][2];
	uint64_t last_w[UCM_CPUMAP_MAX_WORKERS][2];
	uint64_t last_rev[UCM_CPUMAP_MAX_WORKERS];
	double last_t;
	struct metrics *metrics;	/* NULL without --metrics-listen */
};

/* stats.c: the statistics every interval (final: the totals), and the
 * closing conservation lines. */
void print_stats(struct daemon *d, bool final);
void print_verdict(struct daemon *d);

/* metrics.c: --metrics-listen, GET /metrics (Prometheus) on a thread of
 * its own. Open before ucm_dp__create() (a port in use fails first),
 * start after ucm_dp__start(), stop before ucm_dp__stop(). Each is a
 * no-op on NULL; 0 or -errno after a message. */
struct opt;
struct metrics;
int metrics_parse_listen(const struct opt *o, const char *arg, void *cfg);
int metrics__open(struct metrics **mp, const struct httpd_addr *a);
int metrics__start(struct metrics *m, const struct daemon *d);
void metrics__stop(struct metrics *m);
void metrics__close(struct metrics *m);

#endif /* UCPUMAPD_DAEMON_H */
