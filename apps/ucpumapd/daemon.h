/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ucpumapd's pieces: its configuration, its state, and what each file
 * gives the others. */
#ifndef UCPUMAPD_DAEMON_H
#define UCPUMAPD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/dp.h"

struct cfg {
	const char *dev, *tun, *stats_json;
	const char *user;		/* --user: who it runs as after set-up */
	bool tun_any_owner, no_seccomp;
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
};

/* priv.c's state. */
struct priv {
	uid_t uid;			/* who it runs as after set-up */
	gid_t gid;
	uint64_t run;			/* the capabilities its run time keeps */
	bool reopen_said;		/* a SIGHUP's failed reopen, said once */
};

struct daemon {
	struct cfg c;
	struct priv priv;
	struct ucm_dp *dp;
	FILE *json;
	struct ucm_dp_stats last;
	/* Previous snapshots, for the per-line rates. */
	uint64_t last_q_rx[UCM_XSK_MAX_QUEUES], last_q_tx[UCM_XSK_MAX_QUEUES];
	uint64_t last_enq[UCM_XSK_MAX_QUEUES][UCM_CPUMAP_MAX_WORKERS][2];
	uint64_t last_w[UCM_CPUMAP_MAX_WORKERS][2];
	uint64_t last_rev[UCM_CPUMAP_MAX_WORKERS];
	double last_t;
};

/* stats.c: the statistics every interval (final: the totals), and the
 * closing conservation lines. */
void print_stats(struct daemon *d, bool final);
void print_verdict(struct daemon *d);

/* priv.c: least privilege (man/ucpumapd.8, PRIVILEGES) and the files it
 * writes. priv_prepare() before ucm_dp__create() (the exit status after
 * a message, 1 or 2: nothing attached), priv_drop() once ucm_dp__start() succeeded
 * (-1 after a message: stop, exit 1), priv_reopen() on SIGHUP. */
int priv_prepare(struct daemon *d);
int priv_drop(struct daemon *d);
void priv_reopen(struct daemon *d);
/* seccomp.c: the running phase's allow-list, on every thread. 0, or -1
 * after a message. */
int seccomp_start(struct daemon *d);

#endif /* UCPUMAPD_DAEMON_H */
