// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_dp: the datapath of one interface (see dp.h for the life cycle).
 *
 * Threads and what they touch:
 *   control thread: create, start, stop, destroy, the stats getters;
 *   RX thread q:    dp->rx[q] (its queue, its pool as owner, its producer,
 *                   the TX channels of the workers that send on it);
 *   workers:        inside the cpumap and the tun (not here).
 *
 * The statistics getters may run on any thread, also during stop: they
 * and stop's last reading of the parts hold dp->lock (never on a hot path),
 * so a getter reads either the live parts or the final counters, never
 * parts being taken down.
 *
 * Cross-thread fields, and their pairs:
 *   rx->prod   RX thread stores it (release, R1) once its producer exists;
 *              start and the stats load it (acquire, R1').
 *   rx->err    RX thread stores it (release, R2) when it gives up, after
 *              rx->fault (relaxed, published by R2); the control thread
 *              loads err (acquire, R2'), then fault. At start, against
 *              the thread's delete from the XSK map: the map's lock.
 *   dp->stop   control thread stores 1 (relaxed: pthread_join orders what
 *              follows); RX threads poll it (relaxed) once per turn.
 * Counters are the parts' own (each documents its readers).
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "core/pool_internal.h"
#include "engine/cpumap_internal.h"
#include "io/cpus.h"
#include "ucpumap/dp.h"
#include "ucpumap/xdp.h"

/* An idle RX thread sleeps this long at most in poll(2); with frames on
 * the TX path, this long (completions come without a wakeup). */
#define DP_RX_IDLE_MS		10
#define DP_RX_TX_PENDING_MS	1
/* What is on its way out at stop gets this long to complete. */
#define DP_TX_GRACE_MS		100
/* An RX thread that has not made its producer by then is stuck. */
#define DP_START_TIMEOUT_MS	5000
/* The XDP headroom in front of a received packet, and what an MTU
 * leaves room for: Ethernet and two VLAN tags. */
#define DP_XDP_HEADROOM		256
#define DP_L2_ROOM		(14 + 8)

/* The options with every default resolved. */
/* Every UCM_DP_F_* flag: UCM_DP_F_NO_LATENCY is the last (dp.h). */
#define DP_FLAGS_KNOWN	((uint32_t)UCM_DP_F_NO_TX_CSUM * 2 - 1)

struct dp_cfg {
	char ifname[IF_NAMESIZE], tun[IF_NAMESIZE];
	uint32_t queues[UCM_XSK_MAX_QUEUES], nqueues;
	int cpus[UCM_CPUMAP_MAX_WORKERS];
	uint32_t nworkers;
	int rx_cpus[UCM_XSK_MAX_QUEUES];
	uint32_t n_rx_cpus;
	int cpus_node;		/* default workers narrowed to this node, or -1 */
	struct ucm_steer_cfg steer;
	uint32_t xsk_mode, frames, frame_size, rx_size, qsize, mtu, flags;
	uint32_t spin_us;	/* the workers' look before sleeping */
	uint32_t rx_spin_us;	/* the RX threads': with busy polling, its polls */
	bool prewake;		/* the workers' (UCM_CPUMAP_F_PREWAKE) */
	bool peer_mac_set;
	uint8_t peer_mac[6];
	const struct ucm_sink_ops *sink;	/* &sink_ops; NULL: the tun */
	struct ucm_sink_ops sink_ops;		/* the caller's, copied */
	void *sink_ctx;
	ucm_verdict_fn verdict;
	void *verdict_ctx;
	ucm_steer_fn steer_fn;
	void *steer_ctx;
	int xsks_map_fd;			/* UCM_DP_F_OWN_XDP */
	ucm_dp_thread_fn thread_init;
	void *thread_init_ctx;
};

/* One RX thread: the NAPI of one queue. */
struct dp_rx {
	struct ucm_dp *dp;
	struct ucm_xsk_queue *q;
	struct ucm_cpumap_producer *_Atomic prod;
	_Atomic int err;
	_Atomic uint32_t fault;		/* enum ucm_dp_fault: why err */
	/* Two-way: the channels of the workers that send on this queue
	 * (worker w on queue w % nqueues). */
	struct ucm_txq *txq[UCM_CPUMAP_MAX_WORKERS];
	uint32_t ntxq;
	int cpu;			/* -1: not pinned */
	pthread_t thr;
	bool started;
};

/* The counters as ucm_dp__stop() left them. */
struct dp_final {
	struct ucm_dp_stats tot;
	struct ucm_xsk_stats xs[UCM_XSK_MAX_QUEUES];
	struct ucm_pool_stats ps[UCM_XSK_MAX_QUEUES];
	struct ucm_cpumap_enqueue_stats *es;	/* [q * nworkers + w] */
	bool *es_ok;
	struct ucm_cpumap_worker_stats ws[UCM_CPUMAP_MAX_WORKERS];
	struct ucm_tun_stats ts[UCM_CPUMAP_MAX_WORKERS];
	struct ucm_tun_rev_stats rs[UCM_CPUMAP_MAX_WORKERS];
	struct ucm_txq_stats qs[UCM_CPUMAP_MAX_WORKERS];
};

struct ucm_dp {
	struct dp_cfg c;
	struct ucm_xdp *xdp;
	struct ucm_xsk *xsk;
	struct ucm_tun *tun;
	struct ucm_cpumap *map;
	struct ucm_txq *txq[UCM_CPUMAP_MAX_WORKERS];	/* two-way: per worker */
	struct dp_rx rx[UCM_XSK_MAX_QUEUES];
	atomic_int stop;
	bool started;			/* start() ran: it runs once */
	bool zerocopy;			/* the mode the sockets got */
	/* The statistics getters and stop's last reading: under @lock, a
	 * getter reads the parts while STOPPED is clear, @fin after; stop
	 * sets STOPPED under it before it takes the parts down. */
	pthread_mutex_t lock;
	uint32_t state;			/* enum ucm_dp_state, under @lock */
	int counted;			/* 0 or -EUCLEAN: the counters' verdict */
	struct dp_final *fin;		/* read once UCM_DP_S_STOPPED */
	/* ucm_dp__check(), control thread only. */
	int ifindex, tun_ifindex;	/* tun_ifindex 0: no tun */
	uint32_t links;			/* UCM_DP_LINK_*, as last said */
	uint32_t links_last;		/* as the last look saw them */
	bool links_seen;
	struct ucm_dp_health health;	/* the first fault, kept */
};

/* ---- options ------------------------------------------------------------ */

/* Default workers (ucm_pick_worker_cpus()): every CPU we may use but CPU
 * 0, only those of @ifname's NUMA node when it has some of them. *node:
 * the node, when it left some out; else -1. */
static uint32_t default_cpus(const char *ifname, int *cpus, uint32_t max, int *node)
{
	cpu_set_t allowed, near;
	bool narrowed = false;
	uint32_t n;
	int dev;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	dev = ucm_dev_numa_node(ifname);
	if (max > UCM_CPUMAP_MAX_WORKERS)
		max = UCM_CPUMAP_MAX_WORKERS;	/* what a map takes */
	n = ucm_pick_worker_cpus(&allowed, sysconf(_SC_NPROCESSORS_ONLN),
				 dev >= 0 && !ucm_node_cpus(dev, &near) ? &near : NULL,
				 cpus, max, &narrowed);
	*node = narrowed ? dev : -1;
	return n;
}

int ucm_dp__default_cpus(const char *ifname, int *cpus, uint32_t max)
{
	int node;

	if (!cpus || !max)
		return ucm_err(-EINVAL);
	return (int)default_cpus(ifname, cpus, max, &node);
}

static int copy_name(char *dst, const char *src, const char *what)
{
	if (!src || !*src) {
		pr_warn("dp: %s is required\n", what);
		return -EINVAL;
	}
	if (strlen(src) >= IF_NAMESIZE) {
		pr_warn("dp: %s '%s' is longer than %d characters\n", what, src,
			IF_NAMESIZE - 1);
		return -EINVAL;
	}
	strcpy(dst, src);
	return 0;
}

static int resolve_lists(const struct ucm_dp_opts *o, struct dp_cfg *c)
{
	uint32_t i;

	if (o->nqueues > UCM_XSK_MAX_QUEUES || (o->nqueues && !o->queues) ||
	    o->ncpus > UCM_CPUMAP_MAX_WORKERS || (o->ncpus && !o->cpus) ||
	    o->n_rx_cpus > UCM_XSK_MAX_QUEUES || (o->n_rx_cpus && !o->rx_cpus)) {
		pr_warn("dp: at most %d queues, %d worker CPUs and %d RX CPUs, each list with its array\n",
			UCM_XSK_MAX_QUEUES, UCM_CPUMAP_MAX_WORKERS, UCM_XSK_MAX_QUEUES);
		return -EINVAL;
	}
	c->cpus_node = -1;
	c->nqueues = o->nqueues ? o->nqueues : 1;
	for (i = 0; i < o->nqueues; i++)
		c->queues[i] = o->queues[i];
	c->n_rx_cpus = o->n_rx_cpus;
	for (i = 0; i < o->n_rx_cpus; i++)
		c->rx_cpus[i] = o->rx_cpus[i];
	if (c->flags & UCM_DP_F_INLINE) {
		/* The RX threads are the workers: one "worker" per queue. */
		c->nworkers = c->nqueues;
		for (i = 0; i < c->nworkers; i++)
			c->cpus[i] = -1;
	} else if (o->ncpus) {
		c->nworkers = o->ncpus;
		for (i = 0; i < o->ncpus; i++)
			c->cpus[i] = o->cpus[i];
	} else {
		c->nworkers = default_cpus(c->ifname, c->cpus, UCM_CPUMAP_MAX_WORKERS,
					   &c->cpus_node);
	}
	return 0;
}

static int resolve_sizes(const struct ucm_dp_opts *o, struct dp_cfg *c)
{
	c->frames = o->frames_per_queue ? o->frames_per_queue : UCM_DP_FRAMES_DEFAULT;
	c->frame_size = o->frame_size ? o->frame_size : 4096;
	c->rx_size = o->rx_size ? o->rx_size : UCM_DP_RX_RING_DEFAULT;
	c->qsize = o->qsize ? o->qsize : UCM_CPUMAP_QSIZE_DEFAULT;
	if (!is_pow2(c->frames) || !is_pow2(c->rx_size) || !is_pow2(c->qsize) ||
	    (c->frame_size != 2048 && c->frame_size != 4096)) {
		pr_warn("dp: frames per queue, the RX ring and the worker ring are powers of two, and frames 2048 or 4096 bytes\n");
		return -EINVAL;
	}
	c->mtu = o->mtu;
	return 0;
}

/* How the threads wait: the spin, the workers' pre-wake (AUTO: where
 * every arrival is for the one worker, one way). After the sink's copy
 * and the worker count. The two-way workers sleep in the tun's io_uring,
 * which polls the pre-wake's set (UCM_SINK_F_POLL_WAKE); AUTO leaves them
 * without: they sleep between the way back's turns too, and a pre-wake
 * then is mostly one wake-up more (BENCHMARKS.md, "Latency"). */
static int resolve_wake(const struct ucm_dp_opts *o, struct dp_cfg *c)
{
	bool can = !(c->flags & UCM_DP_F_INLINE) && !ucm_sink_reads_wake(c->sink);

	if (o->spin_us > UCM_SPIN_US_MAX) {
		pr_warn("dp: spin_us %u: at most %u (beyond, it is busy polling)\n", o->spin_us,
			UCM_SPIN_US_MAX);
		return -EINVAL;
	}
	c->spin_us = o->spin_us;
	c->rx_spin_us = o->spin_us ? o->spin_us :
			c->flags & UCM_DP_F_BUSY_POLL ? UCM_DP_BUSY_POLL_US : 0;
	if (o->prewake > UCM_DP_PREWAKE_AUTO) {
		pr_warn("dp: prewake %u: give UCM_DP_PREWAKE_OFF, _ON or _AUTO\n", o->prewake);
		return -EINVAL;
	}
	if (o->prewake == UCM_DP_PREWAKE_ON && !can) {
		pr_warn("dp: a pre-wake needs workers that sleep on their own: %s; give UCM_DP_PREWAKE_OFF or _AUTO\n",
			c->flags & UCM_DP_F_INLINE ? "inline workers never sleep" :
			"the sink reads its wake fd in wait() (no UCM_SINK_F_POLL_WAKE)");
		return -EINVAL;
	}
	c->prewake = o->prewake == UCM_DP_PREWAKE_ON ||
		     (o->prewake == UCM_DP_PREWAKE_AUTO && can && c->nworkers == 1 &&
		      !(c->flags & UCM_DP_F_TWO_WAY));
	return 0;
}

/* The way back's flags, and its next hop. */
static int resolve_way_back(const struct ucm_dp_opts *o, struct dp_cfg *c)
{
	if ((c->flags & UCM_DP_F_INLINE) && (c->flags & UCM_DP_F_TWO_WAY)) {
		pr_warn("dp: inline has no workers to read the tun: not both UCM_DP_F_INLINE and UCM_DP_F_TWO_WAY\n");
		return -EINVAL;
	}
	if ((c->flags & UCM_DP_F_NO_TX_CSUM) &&
	    (c->flags & (UCM_DP_F_TWO_WAY | UCM_DP_F_NO_OFFLOAD)) != UCM_DP_F_TWO_WAY) {
		pr_warn("dp: UCM_DP_F_NO_TX_CSUM is about the way back's offloads: give UCM_DP_F_TWO_WAY without UCM_DP_F_NO_OFFLOAD, or leave it out\n");
		return -EINVAL;
	}
	if ((c->flags & UCM_DP_F_NO_OFFLOAD) && !(c->flags & UCM_DP_F_TWO_WAY)) {
		pr_warn("dp: UCM_DP_F_NO_OFFLOAD is about the way back: give UCM_DP_F_TWO_WAY too, or leave it out\n");
		return -EINVAL;
	}
	if (o->peer_mac) {
		if (!(c->flags & UCM_DP_F_TWO_WAY) || (c->flags & UCM_DP_F_TAP)) {
			pr_warn("dp: peer_mac is the next hop of the way back over a tun (UCM_DP_F_TWO_WAY, not UCM_DP_F_TAP)\n");
			return -EINVAL;
		}
		c->peer_mac_set = true;
		memcpy(c->peer_mac, o->peer_mac, 6);
	}
	return 0;
}

static int dp_resolve(const struct ucm_dp_opts *opts, struct dp_cfg *c)
{
	struct ucm_dp_opts o;
	int err;

	err = UCM_OPTS_COPY(&o, opts, ucm_dp_opts);
	if (err)
		return err;
	memset(c, 0, sizeof(*c));
	c->flags = o.flags;
	if (c->flags & ~DP_FLAGS_KNOWN) {
		pr_warn("dp: unknown flags 0x%x\n", c->flags & ~DP_FLAGS_KNOWN);
		return -EINVAL;
	}
	c->xsk_mode = o.xsk_mode;
	if (o.sink) {
		err = ucm_sink_ops_copy(&c->sink_ops, o.sink);
		if (err)
			return err;
		c->sink = &c->sink_ops;
	}
	c->sink_ctx = o.sink_ctx;
	c->verdict = o.verdict;
	c->verdict_ctx = o.verdict_ctx;
	c->steer_fn = o.steer_fn;
	c->steer_ctx = o.steer_ctx;
	c->xsks_map_fd = o.xsks_map_fd;
	c->thread_init = o.thread_init;
	c->thread_init_ctx = o.thread_init_ctx;
	if ((c->flags & UCM_DP_F_OWN_XDP) &&
	    (c->flags & (UCM_DP_F_XDP_SKB | UCM_DP_F_REPLACE))) {
		pr_warn("dp: UCM_DP_F_XDP_SKB and UCM_DP_F_REPLACE attach our program: not with UCM_DP_F_OWN_XDP\n");
		return -EINVAL;
	}
	err = copy_name(c->ifname, o.ifname, "the interface (ifname)");
	if (!err && !c->sink)
		err = copy_name(c->tun, o.tun_name, "the tun (tun_name)");
	if (!err)
		err = resolve_lists(&o, c);
	if (!err)
		err = resolve_sizes(&o, c);
	if (err)
		return err;
	if (c->sink && (c->flags & (UCM_DP_F_TAP | UCM_DP_F_TWO_WAY |
				    UCM_DP_F_NO_BATCH | UCM_DP_F_COALESCE))) {
		pr_warn("dp: UCM_DP_F_TAP, TWO_WAY, NO_BATCH and COALESCE are the tun's: not with a sink of one's own\n");
		return -EINVAL;
	}
	if ((c->flags & UCM_DP_F_VERDICT_TX) && !o.verdict) {
		pr_warn("dp: UCM_DP_F_VERDICT_TX gives a verdict's packets a way out: it needs a verdict\n");
		return -EINVAL;
	}
	if ((c->flags & UCM_DP_F_VERDICT_TX) && c->nqueues > 1) {
		/* A worker's channel goes to one queue, its frames come from
		 * every queue's pool; the sockets' close counts what the
		 * kernel holds per queue, in that queue's pool. */
		pr_warn("dp: UCM_DP_F_VERDICT_TX takes one queue for now: a frame sent back out must leave on its own queue\n");
		return -EINVAL;
	}
	if (c->sink && (c->sink->flags & UCM_SINK_F_KEEP)) {
		pr_warn("dp: a sink that keeps frames (UCM_SINK_F_KEEP) must return them itself: not with ucm_dp\n");
		return -EINVAL;
	}
	err = resolve_way_back(&o, c);
	if (err)
		return err;
	c->steer.policy = o.steer_policy;
	c->steer.flags = o.steer_flags;
	c->steer.fixed = o.fixed_worker;
	c->steer.nworkers = c->nworkers;
	err = resolve_wake(&o, c);
	if (err)
		return err;
	if ((c->flags & UCM_DP_F_TWO_WAY) && (c->flags & UCM_DP_F_TAP))
		/* The tap is the host's interface on this link: its stack
		 * must see ARP and neighbour discovery. */
		c->steer.flags |= UCM_STEER_F_LINK_CTRL;
	if (!(c->flags & UCM_DP_F_NO_LATENCY))
		c->steer.flags |= UCM_STEER_F_STAMP;
	if (c->steer.fixed >= c->nworkers) {
		pr_warn("dp: fixed worker %u: there are only %u workers\n",
			c->steer.fixed, c->nworkers);
		return -EINVAL;
	}
	return 0;
}

/* With TX channels: two-way, or a verdict that sends. */
static bool has_channels(uint32_t flags)
{
	return flags & (UCM_DP_F_TWO_WAY | UCM_DP_F_VERDICT_TX);
}

/* Fill and RX rings, a worker ring, and with TX channels the TX ring and
 * each of the queue's workers' channels: its out ring, and with the way
 * back its free ring too (what the queue lends it). */
static uint32_t frames_needed(const struct dp_cfg *c)
{
	uint32_t wpq = (c->nworkers + c->nqueues - 1) / c->nqueues;
	uint32_t need = 2 * c->rx_size + c->rx_size + c->qsize;
	uint32_t rings = c->flags & UCM_DP_F_TWO_WAY ? 2 : 1;

	if (has_channels(c->flags))
		need += UCM_XSK_TX_RING + wpq * rings * UCM_TXQ_DEFAULT_SIZE;
	return need;
}

uint32_t ucm_dp__frames_needed(const struct ucm_dp_opts *opts)
{
	struct dp_cfg c;

	if (dp_resolve(opts, &c))
		return 0;
	return frames_needed(&c);
}

/* ---- the interface ------------------------------------------------------ */

/* SIOCGIFMTU or SIOCGIFHWADDR/SIOCSIFHWADDR on @ifname. */
static int if_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (s < 0)
		return -errno;
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	if (ioctl(s, req, ifr))
		err = -errno;
	close(s);
	return err;
}

static int if_mac(const char *ifname, uint8_t *mac)
{
	struct ifreq ifr = {};
	int err = if_ioctl(ifname, SIOCGIFHWADDR, &ifr);

	if (err)
		pr_warn("dp: no MAC address on %s: %s\n", ifname, strerror(-err));
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return err;
}

/* The largest MTU a frame holds: after the XDP headroom, Ethernet and two
 * VLAN tags. */
static uint32_t frame_mtu(const struct dp_cfg *c)
{
	return c->frame_size - DP_XDP_HEADROOM - DP_L2_ROOM;
}

static void resolve_mtu(struct dp_cfg *c)
{
	struct ifreq ifr = {};

	if (!c->mtu) {
		c->mtu = frame_mtu(c);
		/* What the kernel routes into the tun leaves through the
		 * interface: no larger than it takes. */
		if ((c->flags & UCM_DP_F_TWO_WAY) &&
		    !if_ioctl(c->ifname, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0 &&
		    (uint32_t)ifr.ifr_mtu < c->mtu)
			c->mtu = ifr.ifr_mtu;
	}
	if (c->mtu > UCM_DP_MTU_MAX)
		c->mtu = UCM_DP_MTU_MAX;
}

/*
 * The interface's MTU against what a frame holds. AF_XDP takes each
 * packet whole into one frame here (no multi-buffer, and our program is
 * not frags-aware), so a larger packet could never come in; most drivers
 * refuse the program at such an MTU, with a bare ERANGE or EINVAL that
 * names neither the MTU nor the fix.
 */
static int check_if_mtu(const struct dp_cfg *c)
{
	uint32_t holds = frame_mtu(c);
	struct ifreq ifr = {};

	if (if_ioctl(c->ifname, SIOCGIFMTU, &ifr) || ifr.ifr_mtu <= 0 ||
	    (uint32_t)ifr.ifr_mtu <= holds)
		return 0;
	pr_warn("dp: %s's MTU %d is more than a %u-byte frame holds (%u after the XDP headroom, an Ethernet header and two VLAN tags; a packet comes in whole in one frame): lower it (ip link set dev %s mtu %u)%s\n",
		c->ifname, ifr.ifr_mtu, c->frame_size, holds, c->ifname, holds,
		c->frame_size < 4096 ? ", or give 4096-byte frames" : "");
	return -ERANGE;
}

/* Two-way tap: the tap answers for the interface on the link, with its
 * address. */
static int tap_take_mac(struct ucm_dp *dp)
{
	struct ifreq ifr = {};
	int err;

	err = if_mac(dp->c.ifname, (uint8_t *)ifr.ifr_hwaddr.sa_data);
	if (err)
		return err;
	ifr.ifr_hwaddr.sa_family = 1;	/* ARPHRD_ETHER */
	err = if_ioctl(ucm_tun__name(dp->tun), SIOCSIFHWADDR, &ifr);
	if (err)
		pr_warn("dp: cannot give %s the address of %s: %s\n",
			ucm_tun__name(dp->tun), dp->c.ifname, strerror(-err));
	return err;
}

/* Two-way: a TX channel per worker to its queue's RX thread (worker w
 * sends on queue w % nqueues), and the tun's read path on each worker. */
static int back_setup(struct ucm_dp *dp)
{
	struct ucm_tun_l2 l2 = {};
	uint32_t w;
	int err;

	err = if_mac(dp->c.ifname, l2.src);
	if (err)
		return err;
	memcpy(l2.dst, dp->c.peer_mac, 6);
	l2.resolve_ifindex = dp->c.peer_mac_set || (dp->c.flags & UCM_DP_F_TAP) ?
			     0 : (int)if_nametoindex(dp->c.ifname);
	for (w = 0; w < dp->c.nworkers; w++) {
		err = ucm_tun__set_reverse(dp->tun, w, dp->txq[w], &l2);
		if (err)
			return err;
	}
	return 0;
}

/* A TX channel per worker to its queue's RX thread (worker w sends on
 * queue w % nqueues): the way back's, and the verdict's. */
static int channels_setup(struct ucm_dp *dp)
{
	uint32_t w;

	for (w = 0; w < dp->c.nworkers; w++) {
		struct dp_rx *rx = &dp->rx[w % dp->c.nqueues];

		dp->txq[w] = ucm_txq__create(ucm_xsk__umem(dp->xsk), 0);
		if (!dp->txq[w])
			return -errno;
		ucm_txq__set_tx_csum(dp->txq[w], ucm_xsk__tx_csum(dp->xsk));
		/* Without the way back only the verdict sends, frames it
		 * received: nothing to lend it. */
		ucm_txq__set_lend(dp->txq[w], dp->c.flags & UCM_DP_F_TWO_WAY);
		rx->txq[rx->ntxq++] = dp->txq[w];
	}
	return 0;
}

/* ---- the RX thread -------------------------------------------------------- */

static int dp_redirect(struct ucm_dp *dp, uint32_t q, int fd);

#ifdef UCM_DEBUG
/* Tests: non-zero keeps every RX thread from taking anything off its ring
 * (it only refills) until the stop (tests/net/xsk_rx.c, drain mode);
 * relaxed, no pair. */
int ucm_dp_test_rx_hold;

/* Tests: the datapath's cpumap, for the cpumap's own test helpers
 * (engine/cpumap_internal.h). */
struct ucm_cpumap *ucm_dp_test_map(struct ucm_dp *dp)
{
	return dp->map;
}
#endif

/* The RX thread gives up: why, for ucm_dp__check(). */
static void rx_fail(struct dp_rx *rx, uint32_t fault, int err)
{
	atomic_store_explicit(&rx->fault, fault, memory_order_relaxed);
	atomic_store_explicit(&rx->err, err, memory_order_release); /* R2 */
}

static void rx_loop(struct dp_rx *rx, struct ucm_cpumap_producer *prod)
{
	const struct ucm_steer_cfg *steer = &rx->dp->c.steer;
	struct timespec ms = { 0, 1000000 };
	uint32_t rr = 0;
	int n, i;

	while (!atomic_load_explicit(&rx->dp->stop, memory_order_relaxed)) {
#ifdef UCM_DEBUG
		if (__atomic_load_n(&ucm_dp_test_rx_hold, __ATOMIC_RELAXED)) {
			ucm_xsk_queue__refill(rx->q);	/* the device has buffers */
			nanosleep(&ms, NULL);
			continue;
		}
#endif
		n = ucm_xsk_queue__poll(rx->q, prod, steer, &rr);
		if (n < 0) {
			rx_fail(rx, UCM_DP_FAULT_RX_THREAD, n);
			break;
		}
		if (rx->ntxq)
			n += ucm_xsk_queue__tx_turn(rx->q, rx->txq, rx->ntxq);
		if (n)
			continue;
		if (rx->dp->c.rx_spin_us &&
		    ucm_xsk_queue__spin(rx->q, rx->txq, rx->ntxq, rx->dp->c.rx_spin_us) > 0)
			continue;
		n = ucm_xsk_queue__sleep(rx->q, rx->txq, rx->ntxq,
					 ucm_xsk_queue__tx_pending(rx->q) ?
					 DP_RX_TX_PENDING_MS : DP_RX_IDLE_MS);
		if (n < 0 && n != -EINTR) {
			/* The socket's error does not heal (the kernel
			 * unbound it: its device went). */
			rx_fail(rx, UCM_DP_FAULT_XSK, n);
			break;
		}
	}
	/*
	 * Stopped, not failed: the kernel redirects to us no more (the stop's
	 * step 1), and what it had put on the ring is ours to deliver, as a
	 * NAPI poll finishes its budget: a ring's worth of turns at most.
	 */
	if (!atomic_load_explicit(&rx->err, memory_order_relaxed))
		for (i = 0; i <= (int)(rx->dp->c.rx_size / UCM_XSK_RX_BATCH); i++)
			if (ucm_xsk_queue__poll(rx->q, prod, steer, &rr) <= 0)
				break;
	/* What is on its way out gets a moment to complete. */
	for (i = 0; i < DP_TX_GRACE_MS && rx->ntxq &&
	     ucm_xsk_queue__tx_pending(rx->q); i++) {
		ucm_xsk_queue__complete(rx->q);
		nanosleep(&ms, NULL);
	}
}

static void *rx_main(void *arg)
{
	struct dp_rx *rx = arg;
	struct ucm_pool *pool = ucm_xsk_queue__pool(rx->q);
	struct ucm_cpumap_producer *prod;
	cpu_set_t set;

	if (rx->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(rx->cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
			pr_warn("dp: cannot pin the RX thread of queue %u to CPU %d\n",
				ucm_xsk_queue__id(rx->q), rx->cpu);
	}
	ucm_pool__set_owner(pool);
	prod = ucm_cpumap__producer_create(rx->dp->map, pool);
	if (!prod) {
		ucm_pool__clear_owner(pool);
		rx_fail(rx, UCM_DP_FAULT_RX_THREAD, -errno);
		return NULL;
	}
	if (rx->dp->c.thread_init)
		rx->dp->c.thread_init(rx->dp->c.thread_init_ctx, UCM_DP_THREAD_RX,
				      rx - rx->dp->rx);
	atomic_store_explicit(&rx->prod, prod, memory_order_release); /* R1 */
	rx_loop(rx, prod);
	/* Given up: the queue's traffic goes to the kernel's stack (the
	 * program passes what it cannot redirect), not to a socket nobody
	 * reads, until the application stops the datapath. */
	if (atomic_load_explicit(&rx->err, memory_order_relaxed)) {
		pr_warn("dp: queue %u: its RX thread gave up: its traffic goes to the kernel's stack\n",
			ucm_xsk_queue__id(rx->q));
		dp_redirect(rx->dp, rx - rx->dp->rx, -1);
	}
	/* Flush what is staged (and, inline, close our tun queue on this
	 * thread); the producer stays registered with the cpumap, its stats
	 * are read at the end, and is freed with it. */
	ucm_cpumap_producer__stop(prod);
	/* Last act of an owner. */
	ucm_pool__clear_owner(pool);
	return NULL;
}

/* ---- statistics --------------------------------------------------------- */

static struct ucm_cpumap_producer *rx_prod(const struct dp_rx *rx)
{
	return atomic_load_explicit(&rx->prod, memory_order_acquire); /* R1' */
}

static bool stopped(const struct ucm_dp *dp)
{
	return dp->state & UCM_DP_S_STOPPED;
}

/* The getters' lock is not the datapath's state: a const getter takes it. */
static pthread_mutex_t *dp_lock(const struct ucm_dp *dp)
{
	return (pthread_mutex_t *)&dp->lock;
}

static int check_qw(const struct ucm_dp *dp, uint32_t q, uint32_t w)
{
	return !dp || q >= dp->c.nqueues || w >= dp->c.nworkers ? -EINVAL : 0;
}

/* The readings, under dp->lock: the live parts, or the final counters.
 * Each fills the library's own struct, every byte of it. */
static void read_xsk(const struct ucm_dp *dp, uint32_t q, struct ucm_xsk_stats *xs)
{
	memset(xs, 0, sizeof(*xs));
	if (stopped(dp))
		*xs = dp->fin->xs[q];
	else
		ucm_xsk_queue__stats(dp->rx[q].q, xs, sizeof(*xs));
}

static void read_pool(const struct ucm_dp *dp, uint32_t q, struct ucm_pool_stats *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (stopped(dp))
		*ps = dp->fin->ps[q];
	else
		ucm_pool__get_stats(ucm_xsk_queue__pool(dp->rx[q].q), ps,
				    sizeof(*ps));
}

static int read_enqueue(const struct ucm_dp *dp, uint32_t q, uint32_t w,
			struct ucm_cpumap_enqueue_stats *es)
{
	struct ucm_cpumap_producer *prod;

	memset(es, 0, sizeof(*es));
	if (stopped(dp)) {
		if (!dp->fin->es_ok[q * dp->c.nworkers + w])
			return -ENOENT;
		*es = dp->fin->es[q * dp->c.nworkers + w];
		return 0;
	}
	prod = rx_prod(&dp->rx[q]);
	if (!prod || ucm_cpumap_producer__enqueue_stats(prod, w, es, sizeof(*es)))
		return -ENOENT;
	return 0;
}

static void read_worker(const struct ucm_dp *dp, uint32_t w,
			struct ucm_cpumap_worker_stats *ws)
{
	memset(ws, 0, sizeof(*ws));
	if (stopped(dp))
		*ws = dp->fin->ws[w];
	else
		ucm_cpumap__worker_stats(dp->map, w, ws, sizeof(*ws));
}

/* Zero with a sink of one's own (no tun). */
static void read_tun(const struct ucm_dp *dp, uint32_t w, struct ucm_tun_stats *ts)
{
	memset(ts, 0, sizeof(*ts));
	if (stopped(dp))
		*ts = dp->fin->ts[w];
	else if (dp->tun)
		ucm_tun__worker_stats(dp->tun, w, ts, sizeof(*ts));
}

static int read_rev(const struct ucm_dp *dp, uint32_t w,
		    struct ucm_tun_rev_stats *rs)
{
	memset(rs, 0, sizeof(*rs));
	if (!has_channels(dp->c.flags))
		return -ENOENT;
	if (stopped(dp))
		*rs = dp->fin->rs[w];
	else if (dp->c.flags & UCM_DP_F_TWO_WAY)
		ucm_tun__rev_stats(dp->tun, w, rs, sizeof(*rs));
	return 0;
}

static int read_txq(const struct ucm_dp *dp, uint32_t w, struct ucm_txq_stats *qs)
{
	memset(qs, 0, sizeof(*qs));
	if (!has_channels(dp->c.flags))
		return -ENOENT;
	if (stopped(dp))
		*qs = dp->fin->qs[w];
	else
		ucm_txq__stats(dp->txq[w], qs, sizeof(*qs));
	return 0;
}

/*
 * The getters: check, read under dp->lock into the library's own struct,
 * copy out to the caller's @st of @sz bytes (zeros when not there).
 */
#define DP_GETTER(name, TYPE, q, w, read)				\
int ucm_dp__##name##_stats(const struct ucm_dp *dp, uint32_t idx,	\
			   struct TYPE *st, size_t sz)			\
{									\
	struct TYPE o;							\
	int err;							\
									\
	if (check_qw(dp, q, w) || !st || !sz)				\
		return ucm_err(-EINVAL);				\
	pthread_mutex_lock(dp_lock(dp));				\
	err = read;							\
	pthread_mutex_unlock(dp_lock(dp));				\
	ucm_stats_out(st, sz, &o, sizeof(o));				\
	return ucm_err(err);						\
}

DP_GETTER(xsk, ucm_xsk_stats, idx, 0, (read_xsk(dp, idx, &o), 0))
DP_GETTER(pool, ucm_pool_stats, idx, 0, (read_pool(dp, idx, &o), 0))
DP_GETTER(worker, ucm_cpumap_worker_stats, 0, idx, (read_worker(dp, idx, &o), 0))
DP_GETTER(tun, ucm_tun_stats, 0, idx, (read_tun(dp, idx, &o), 0))
DP_GETTER(rev, ucm_tun_rev_stats, 0, idx, read_rev(dp, idx, &o))
DP_GETTER(txq, ucm_txq_stats, 0, idx, read_txq(dp, idx, &o))

int ucm_dp__enqueue_stats(const struct ucm_dp *dp, uint32_t q, uint32_t w,
			  struct ucm_cpumap_enqueue_stats *st, size_t sz)
{
	struct ucm_cpumap_enqueue_stats o;
	int err;

	if (check_qw(dp, q, w) || !st || !sz)
		return ucm_err(-EINVAL);
	pthread_mutex_lock(dp_lock(dp));
	err = read_enqueue(dp, q, w, &o);
	pthread_mutex_unlock(dp_lock(dp));
	ucm_stats_out(st, sz, &o, sizeof(o));
	return ucm_err(err);
}

static void add_queue(const struct ucm_dp *dp, uint32_t q, struct ucm_dp_stats *t)
{
	struct ucm_cpumap_enqueue_stats es;
	struct ucm_xsk_stats xs;
	uint32_t w;

	read_xsk(dp, q, &xs);
	t->rx += xs.rx;
	t->rx_bad_desc += xs.rx_bad_desc;
	t->rx_steer_err += xs.rx_steer_err;
	t->tx += xs.tx;
	t->tx_drops += xs.tx_ring_full + xs.tx_bad_desc;
	t->tx_completed += xs.tx_completed;
	t->tx_comp_direct += xs.tx_comp_direct;
	t->tx_comp_bulks += xs.tx_comp_bulks;
	/* The RX thread's own counters say the same; the TX ring's
	 * positions are read once it has stopped (snapshot()). */
	t->tx_pending += xs.tx - xs.tx_completed;
	for (w = 0; w < UCM_LAT_BUCKETS; w++)
		t->rx_hist[w] += xs.rx_hist[w];
	t->rx_lat_ns += xs.rx_lat_ns;
	for (w = 0; w < dp->c.nworkers; w++) {
		if (read_enqueue(dp, q, w, &es))
			continue;
		t->enqueue_processed += es.processed;
		t->enqueue_drops += es.drops;
		t->enqueue_events += es.events;
	}
}

static void add_worker(const struct ucm_dp *dp, uint32_t w, struct ucm_dp_stats *t)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_tun_rev_stats rs;
	struct ucm_tun_stats ts;
	struct ucm_txq_stats qs;
	uint64_t bad;
	int r;

	read_worker(dp, w, &ws);
	read_tun(dp, w, &ts);
	t->worker_processed += ws.processed;
	t->verdict_tx += ws.tx;
	t->worker_drops += ws.drops;
	t->worker_sleep_ns += ws.sleep_ns;
	for (r = 0; r < UCM_DROP__MAX; r++)
		t->worker_drop_reason[r] += ws.drop_reason[r];
	for (r = 0; r < UCM_LAT_BUCKETS; r++) {
		t->wait_hist[r] += ws.wait_hist[r];
		t->sink_hist[r] += ws.sink_hist[r];
	}
	t->wait_ns += ws.wait_ns;
	t->sink_ns += ws.sink_ns;
	t->prewakes += ws.prewakes;
	t->tun_packets += ts.packets;
	t->tun_non_ip += ts.non_ip;
	t->tun_err_eio += ts.err_eio;
	t->tun_err_ebadfd += ts.err_ebadfd;
	t->tun_err_eagain += ts.err_eagain;
	t->tun_err_other += ts.err_other;
	t->tun_super += ts.super;
	t->tun_super_segs += ts.super_segs;
	if (read_rev(dp, w, &rs) || read_txq(dp, w, &qs))
		return;
	bad = rs.drop_offload + rs.drop_too_big + rs.drop_non_ip + rs.drop_no_neigh +
	      rs.drop_stopped;
	t->back_read += rs.packets + bad;
	t->back_drop_bad += bad;
	t->back_read_err += rs.err;
	t->back_channel_sent += qs.sent;
	t->back_channel_full += qs.send_full;
	t->back_channel_waits += rs.channel_waits;
	t->back_super += rs.super_packets;
	t->back_segments += rs.segments;
	t->back_csum_completed += rs.csum_completed;
	t->back_csum_offloaded += rs.csum_offloaded;
	t->back_channel_collected += qs.collected;
}

/* The totals of the live parts, under dp->lock. */
static void gather(const struct ucm_dp *dp, struct ucm_dp_stats *t)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < dp->c.nqueues; i++)
		add_queue(dp, i, t);
	for (i = 0; i < dp->c.nworkers; i++)
		add_worker(dp, i, t);
	/* A sink of one's own took what the workers processed and neither
	 * dropped nor sent back out. */
	t->delivered = dp->c.sink ? t->worker_processed - t->worker_drops -
				    t->verdict_tx : t->tun_packets;
}

int ucm_dp__stats(const struct ucm_dp *dp, struct ucm_dp_stats *st, size_t sz)
{
	struct ucm_dp_stats t;

	if (!dp || !st || !sz)
		return ucm_err(-EINVAL);
	pthread_mutex_lock(dp_lock(dp));
	if (stopped(dp))
		t = dp->fin->tot;
	else
		gather(dp, &t);
	t.state = dp->state;
	pthread_mutex_unlock(dp_lock(dp));
	ucm_stats_out(st, sz, &t, sizeof(t));
	return 0;
}

uint32_t ucm_dp_stats__violations(const struct ucm_dp_stats *st, size_t sz)
{
	struct ucm_dp_stats t = {};
	uint64_t drops;
	uint32_t v = 0;

	/* A caller's older, smaller struct: the fields it lacks read 0. */
	memcpy(&t, st, sz < sizeof(t) ? sz : sizeof(t));
	drops = t.rx_bad_desc + t.rx_steer_err + t.enqueue_drops + t.worker_drops;
	if (t.rx != t.delivered + drops + t.verdict_tx)
		v |= UCM_DP_V_FORWARD;
	/* Read from the tun + sent by the verdict = handed to the channels +
	 * dropped there; handed on = sent + channel full; sent = collected +
	 * left in the channel (brought home at stop); collected = on the TX
	 * ring + ring full; on it = completed + pending. */
	if (t.back_read + t.verdict_tx != t.back_channel_sent + t.back_channel_full +
					  t.back_drop_bad ||
	    t.back_channel_collected != t.tx + t.tx_drops ||
	    t.tx != t.tx_completed + t.tx_pending)
		v |= UCM_DP_V_BACK;
	return v;
}

/* ---- life cycle ------------------------------------------------------------ */

/* The application's XSKMAP (UCM_DP_F_OWN_XDP): an XSKMAP, with room for
 * every queue id. */
static int check_own_map(struct ucm_dp *dp)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info), q;

	if (bpf_obj_get_info_by_fd(dp->c.xsks_map_fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_XSKMAP) {
		pr_warn("dp: xsks_map_fd %d is not an XSKMAP (BPF_MAP_TYPE_XSKMAP): give the map your XDP program redirects with\n",
			dp->c.xsks_map_fd);
		return -EINVAL;
	}
	for (q = 0; q < dp->c.nqueues; q++) {
		if (dp->c.queues[q] >= info.max_entries) {
			pr_warn("dp: the XSKMAP has %u entries, no room for queue %u\n",
				info.max_entries, dp->c.queues[q]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Queue @q's socket into the XSK map (@fd), or out of it (-1). */
static int dp_redirect(struct ucm_dp *dp, uint32_t q, int fd)
{
	uint32_t key = dp->c.queues[q];
	int err;

	if (!(dp->c.flags & UCM_DP_F_OWN_XDP))
		return dp->xdp ? ucm_xdp__set_xsk(dp->xdp, key, fd) : 0;
	if (fd >= 0)
		err = bpf_map_update_elem(dp->c.xsks_map_fd, &key, &fd, 0);
	else
		err = bpf_map_delete_elem(dp->c.xsks_map_fd, &key);
	if (err < 0 && !(fd < 0 && err == -ENOENT)) {
		pr_warn("dp: queue %u in the application's XSKMAP: %s\n", key, strerror(-err));
		return err;
	}
	return 0;
}

static int dp_attach(struct ucm_dp *dp)
{
	UCM_OPTS(ucm_xdp_opts, xo, .policy = dp->c.steer.policy,
		 .nworkers = dp->c.steer.nworkers, .fixed = dp->c.steer.fixed,
		 .flags = dp->c.steer.flags);
	uint32_t f = dp->c.flags;
	int err;

	/* What cannot work is refused before anything is touched. */
	err = f & UCM_DP_F_OWN_XDP ? check_own_map(dp) : 0;
	if (!err)
		err = check_if_mtu(&dp->c);
	if (err || (f & UCM_DP_F_OWN_XDP))
		return err;
	/* The program first: it replaces a stale one of ours, whose XSK map
	 * would otherwise keep the queues busy. */
	dp->xdp = ucm_xdp__load(&xo);
	if (!dp->xdp)
		return -errno;
	return ucm_xdp__attach(dp->xdp, if_nametoindex(dp->c.ifname),
			       (f & UCM_DP_F_XDP_SKB ? UCM_XDP_ATTACH_SKB : 0) |
			       (f & UCM_DP_F_REPLACE ? UCM_XDP_ATTACH_REPLACE : 0));
}

static int dp_open_xsk(struct ucm_dp *dp)
{
	uint32_t f = dp->c.flags;
	UCM_OPTS(ucm_xsk_opts, so, .ifname = dp->c.ifname, .queues = dp->c.queues,
		 .nqueues = dp->c.nqueues, .frames_per_queue = dp->c.frames,
		 .frame_size = dp->c.frame_size, .rx_size = dp->c.rx_size,
		 .fill_size = 2 * dp->c.rx_size, .mode = dp->c.xsk_mode,
		 .flags = (f & UCM_DP_F_BUSY_POLL ? UCM_XSK_F_BUSY_POLL : 0) |
			  /* The way back's cut leaves checksums to the kernel. */
			  ((f & UCM_DP_F_TWO_WAY) &&
			   !(f & (UCM_DP_F_NO_OFFLOAD | UCM_DP_F_NO_TX_CSUM)) ?
			   UCM_XSK_F_TX_CSUM : 0),
		 .umem_flags = f & UCM_DP_F_NO_DIRECT_BULK ? UCM_UMEM_F_NO_DIRECT_BULK : 0);
	uint32_t q;

	dp->xsk = ucm_xsk__open(&so);
	if (!dp->xsk)
		return -errno;
	dp->zerocopy = ucm_xsk__zerocopy(dp->xsk);
	for (q = 0; q < dp->c.nqueues; q++) {
		struct dp_rx *rx = &dp->rx[q];

		rx->dp = dp;
		rx->q = ucm_xsk__queue(dp->xsk, q);
		rx->cpu = dp->c.n_rx_cpus ? dp->c.rx_cpus[q % dp->c.n_rx_cpus] : -1;
		ucm_xsk_queue__set_steer(rx->q, dp->c.steer_fn, dp->c.steer_ctx);
	}
	return 0;
}

/* The application's thread hook, for the parts' own (api.h: ucm_thread_fn). */
static void dp_worker_init(void *ctx, uint32_t w)
{
	const struct dp_cfg *c = ctx;

	c->thread_init(c->thread_init_ctx, UCM_DP_THREAD_WORKER, w);
}

static void dp_resolver_init(void *ctx, uint32_t w)
{
	const struct dp_cfg *c = ctx;

	c->thread_init(c->thread_init_ctx, UCM_DP_THREAD_RESOLVER, w);
}

static int dp_open_tun(struct ucm_dp *dp)
{
	uint32_t f = dp->c.flags;
	UCM_OPTS(ucm_tun_opts, to, .name = dp->c.tun, .nqueues = dp->c.nworkers,
		 .flags = (f & UCM_DP_F_TAP ? UCM_TUN_F_TAP : 0) |
			  (f & UCM_DP_F_NO_BATCH ? UCM_TUN_F_NO_BATCH : 0) |
			  (f & UCM_DP_F_COALESCE ? UCM_TUN_F_COALESCE : 0) |
			  (f & UCM_DP_F_NO_OFFLOAD ? UCM_TUN_F_NO_OFFLOAD : 0),
		 .mtu = dp->c.mtu,
		 .resolver_init = dp->c.thread_init ? dp_resolver_init : NULL,
		 .resolver_init_ctx = &dp->c);

	dp->tun = ucm_tun__create(&to);
	if (!dp->tun)
		return -errno;
	/* A name template (ucm%d) becomes the kernel's name. */
	snprintf(dp->c.tun, sizeof(dp->c.tun), "%s", ucm_tun__name(dp->tun));
	/* The index, not the name: a tun made again under the name is not
	 * the one our queues are attached to. */
	dp->tun_ifindex = if_nametoindex(dp->c.tun);
	return 0;
}

/* Whether the workers hold up to 64 for the tun: one io_uring submission
 * (or a GSO super-packet) for them all. Coalescing always holds (inline
 * too: the RX thread holds across its flushes). Not for a sink of one's
 * own (its xmit() is handed a batch, as it always was). */
static bool dp_hold(const struct ucm_dp *dp)
{
	uint32_t f = dp->c.flags;

	if (f & UCM_DP_F_COALESCE)
		return true;
	return !dp->c.sink && !(f & (UCM_DP_F_NO_HOLD | UCM_DP_F_INLINE));
}

static int dp_open_cpumap(struct ucm_dp *dp)
{
	uint32_t f = dp->c.flags, q;
	int err;
	UCM_OPTS(ucm_cpumap_opts, co, .cpus = dp->c.cpus, .ncpus = dp->c.nworkers,
		 .qsize = dp->c.qsize,
		 .sink = dp->c.sink ? dp->c.sink : f & UCM_DP_F_TWO_WAY ?
			 ucm_tun__sink_duplex() : ucm_tun__sink(),
		 .sink_ctx = dp->c.sink ? dp->c.sink_ctx : dp->tun,
		 .flags = (f & UCM_DP_F_NO_RECYCLE ? UCM_CPUMAP_F_NO_RECYCLE : 0) |
			  (f & UCM_DP_F_INLINE ? UCM_CPUMAP_F_INLINE : 0) |
			  /* the tun sees up to 64 at once: one submission */
			  (dp_hold(dp) ? UCM_CPUMAP_F_HOLD : 0) |
			  (f & UCM_DP_F_NO_LATENCY ? UCM_CPUMAP_F_NO_LATENCY : 0) |
			  (dp->c.prewake ? UCM_CPUMAP_F_PREWAKE : 0) |
			  /* one RX thread: single-producer worker rings
			   * (inline, one "worker" per queue: no ring) */
			  (dp->c.nqueues == 1 ? UCM_CPUMAP_F_ONE_PRODUCER : 0),
		 .verdict = dp->c.verdict, .verdict_ctx = dp->c.verdict_ctx,
		 .spin_us = dp->c.spin_us,
		 .txqs = f & UCM_DP_F_VERDICT_TX ? dp->txq : NULL,
		 .worker_init = dp->c.thread_init ? dp_worker_init : NULL,
		 .worker_init_ctx = &dp->c);

	dp->map = ucm_cpumap__create(ucm_xsk__umem(dp->xsk), &co);
	if (!dp->map)
		return -errno;
	/* The workers wake with the RX threads: at their sockets' arrivals. */
	for (q = 0; q < dp->c.nqueues && dp->c.prewake; q++) {
		err = ucm_cpumap__prewake_on(dp->map, ucm_xsk_queue__fd(dp->rx[q].q));
		if (err)
			return err;
	}
	return 0;
}

struct ucm_dp *ucm_dp__create(const struct ucm_dp_opts *opts)
{
	struct ucm_dp *dp;
	int err;

	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return ucm_err_ptr(ucm_oom("the datapath"));
	pthread_mutex_init(&dp->lock, NULL);
	err = dp_resolve(opts, &dp->c);
	if (err)
		goto out_free;
	if (dp->c.cpus_node >= 0) {
		char list[UCM_CPUMAP_MAX_WORKERS * 6] = "";
		uint32_t i;
		size_t len = 0;

		for (i = 0; i < dp->c.nworkers; i++)
			len += snprintf(list + len, sizeof(list) - len, "%s%d",
					i ? "," : "", dp->c.cpus[i]);
		pr_info("dp: workers on CPUs %s, those of %s's NUMA node %d\n", list,
			dp->c.ifname, dp->c.cpus_node);
	}
	if (dp->c.frames < frames_needed(&dp->c)) {
		pr_warn("dp: %u frames per queue cannot cover the rings, a worker ring%s: give at least %u\n",
			dp->c.frames, has_channels(dp->c.flags) ?
			" and the way back" : "", frames_needed(&dp->c));
		err = -EINVAL;
		goto out_free;
	}
	if (!if_nametoindex(dp->c.ifname)) {
		pr_warn("dp: no interface named '%s'\n", dp->c.ifname);
		err = -ENODEV;
		goto out_free;
	}
	dp->ifindex = if_nametoindex(dp->c.ifname);
	resolve_mtu(&dp->c);
	dp->fin = calloc(1, sizeof(*dp->fin));
	if (dp->fin) {
		dp->fin->es = calloc(dp->c.nqueues * dp->c.nworkers, sizeof(*dp->fin->es));
		dp->fin->es_ok = calloc(dp->c.nqueues * dp->c.nworkers, sizeof(bool));
	}
	if (!dp->fin || !dp->fin->es || !dp->fin->es_ok) {
		err = ucm_oom("the datapath's final counters");
		goto out_parts;
	}
	err = dp_attach(dp);
	if (!err)
		err = dp_open_xsk(dp);
	if (!err && !dp->c.sink)
		err = dp_open_tun(dp);
	if (!err && (dp->c.flags & UCM_DP_F_TWO_WAY) && (dp->c.flags & UCM_DP_F_TAP))
		err = tap_take_mac(dp);
	if (!err && has_channels(dp->c.flags))
		err = channels_setup(dp);
	if (!err && (dp->c.flags & UCM_DP_F_TWO_WAY))
		err = back_setup(dp);
	if (!err)
		err = dp_open_cpumap(dp);
	if (err)
		goto out_parts;
	return dp;

out_parts:
	/* Whatever was set up is taken down; nothing is left attached. */
	ucm_dp__stop(dp, 0);
	ucm_dp__destroy(dp);
	return ucm_err_ptr(err);
out_free:
	pthread_mutex_destroy(&dp->lock);
	free(dp);
	return ucm_err_ptr(err);
}

static int rx_start(struct dp_rx *rx)
{
	sigset_t all, old;
	int err;

	/* Signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&rx->thr, NULL, rx_main, rx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_warn("dp: cannot start the RX thread of queue %u: %s\n",
			ucm_xsk_queue__id(rx->q), strerror(err));
		return -err;
	}
	rx->started = true;
	{
		char name[16];	/* what top and /proc show: the queue */

		snprintf(name, sizeof(name), "ucpumap/rx%u", ucm_xsk_queue__id(rx->q));
		pthread_setname_np(rx->thr, name);
	}
	return 0;
}

/* Wait for the RX thread's producer (R1'), or its error (R2'). */
static int rx_ready(struct dp_rx *rx)
{
	struct timespec ms = { 0, 1000000 };
	int i, err;

	for (i = 0; i < DP_START_TIMEOUT_MS; i++) {
		if (rx_prod(rx))
			return 0;
		err = atomic_load_explicit(&rx->err, memory_order_acquire); /* R2' */
		if (err) {
			pr_warn("dp: RX thread of queue %u: %s\n",
				rx->dp->c.queues[rx - rx->dp->rx], strerror(-err));
			return err;
		}
		nanosleep(&ms, NULL);
	}
	pr_warn("dp: RX thread of queue %u did not start in %d ms\n",
		rx->dp->c.queues[rx - rx->dp->rx], DP_START_TIMEOUT_MS);
	return -ETIMEDOUT;
}

/* Point every queue at its socket, or none. */
static int redirect_all(struct ucm_dp *dp)
{
	uint32_t q;
	int err = 0;

	for (q = 0; q < dp->c.nqueues && !err; q++) {
		err = dp_redirect(dp, q, ucm_xsk_queue__fd(dp->rx[q].q));
		/*
		 * An RX thread that already gave up took its socket out of a
		 * map it was not in yet: out again. The thread stores its
		 * error, then deletes; we update, then load it. What orders
		 * the two is the map's lock, which its update and delete both
		 * take: if our update came second, this load sees the error;
		 * if first, the thread's delete undoes it.
		 */
		if (!err && atomic_load_explicit(&dp->rx[q].err, memory_order_acquire) && /* R2' */
		    dp_redirect(dp, q, -1))
			pr_warn("dp: queue %u: its RX thread gave up, and its socket stays in the XSK map\n",
				dp->c.queues[q]);
	}
	if (err)
		while (q--)
			dp_redirect(dp, q, -1);
	return err;
}

int ucm_dp__start(struct ucm_dp *dp)
{
	uint32_t q;
	int err = 0;

	/* Once: a second start would put a second thread on a pool. */
	if (!dp || dp->started)
		return ucm_err(-EINVAL);
	dp->started = true;
	for (q = 0; q < dp->c.nqueues && !err; q++)
		err = rx_start(&dp->rx[q]);
	/* Last, once every RX thread has its producer, the kernel starts
	 * redirecting to us. */
	for (q = 0; q < dp->c.nqueues && !err; q++)
		err = rx_ready(&dp->rx[q]);
	if (!err)
		err = redirect_all(dp);
	if (err)
		return ucm_err(err);
	pthread_mutex_lock(&dp->lock);
	dp->state = UCM_DP_S_RUNNING;
	pthread_mutex_unlock(&dp->lock);
	return 0;
}

int ucm_dp__err(const struct ucm_dp *dp, uint32_t *queue)
{
	uint32_t q;
	int err;

	for (q = 0; dp && q < dp->c.nqueues; q++) {
		err = atomic_load_explicit(&dp->rx[q].err, memory_order_acquire); /* R2' */
		if (err) {
			if (queue)
				*queue = dp->c.queues[q];
			return err;
		}
	}
	return 0;
}

/* ---- faults at run time ------------------------------------------------ */

static const char *const fault_names[UCM_DP_FAULT__MAX] = {
	[UCM_DP_FAULT_NONE] = "none",
	[UCM_DP_FAULT_IFACE_GONE] = "interface gone",
	[UCM_DP_FAULT_TUN_GONE] = "tun gone",
	[UCM_DP_FAULT_XSK] = "socket error",
	[UCM_DP_FAULT_RX_THREAD] = "RX thread failed",
	[UCM_DP_FAULT_BACK] = "way back failed",
};

const char *ucm_dp_fault_str(uint32_t fault)
{
	return fault < UCM_DP_FAULT__MAX ? fault_names[fault] : "unknown";
}

/* Device @ifindex: 1 up (@carrier: and with a carrier), 0 down, -ENODEV
 * gone. What cannot be read counts as up: only a fact makes a fault. */
static int link_state(int ifindex, bool carrier)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GLINK };
	char name[IF_NAMESIZE];
	struct ifreq ifr = {};
	int err, flags;

	if (!if_indextoname(ifindex, name))
		return errno == ENXIO || errno == ENODEV ? -ENODEV : 1;
	err = if_ioctl(name, SIOCGIFFLAGS, &ifr);
	if (err)	/* renamed meanwhile, or gone: the index says which */
		return !if_indextoname(ifindex, name) && errno == ENXIO ? -ENODEV : 1;
	flags = ifr.ifr_flags;
	if (!(flags & IFF_UP) || !carrier)
		return !!(flags & IFF_UP);
	/* The carrier as the driver has it now: IFF_RUNNING is the operstate,
	 * which the kernel's linkwatch updates up to a second late. */
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_data = (void *)&ev;
	if (!if_ioctl(name, SIOCETHTOOL, &ifr))
		return !!ev.data;
	return !!(flags & IFF_RUNNING);
}

static void fault_set(struct ucm_dp *dp, uint32_t fault, int err, uint32_t where)
{
	dp->health.fault = fault;
	dp->health.err = err;
	dp->health.where = where;
}

/* The first fault, in the order of causes: a device gone makes its
 * sockets and threads fail too, and is the one to name. */
static void find_fault(struct ucm_dp *dp, int iface, int tun)
{
	struct ucm_tun_rev_stats rs;
	uint32_t q, w, fault;
	int err;

	if (iface == -ENODEV) {
		fault_set(dp, UCM_DP_FAULT_IFACE_GONE, -ENODEV, 0);
		pr_warn("dp: the interface %s was deleted: the datapath cannot go on\n",
			dp->c.ifname);
		return;
	}
	if (tun == -ENODEV) {
		fault_set(dp, UCM_DP_FAULT_TUN_GONE, -ENODEV, 0);
		pr_warn("dp: the tun %s was deleted: the datapath cannot go on\n",
			dp->c.tun);
		return;
	}
	for (w = 0; w < dp->c.nworkers; w++) {
		if (read_rev(dp, w, &rs) || !rs.stopped)
			continue;
		fault_set(dp, UCM_DP_FAULT_BACK, -EIO, w);
		pr_warn("dp: worker %u stopped reading the tun (its io_uring failed): the way back is dead\n",
			w);
		return;
	}
	for (q = 0; q < dp->c.nqueues; q++) {
		err = atomic_load_explicit(&dp->rx[q].err, memory_order_acquire); /* R2' */
		if (!err)
			continue;
		fault = atomic_load_explicit(&dp->rx[q].fault, memory_order_relaxed);
		fault_set(dp, fault, err, dp->c.queues[q]);
		pr_warn("dp: %s queue %u: %s: %s; the queue is not served\n",
			dp->c.ifname, dp->c.queues[q], ucm_dp_fault_str(fault),
			strerror(-err));
		return;
	}
}

/* A link's change, said once per change, when two looks in a row agree:
 * a carrier settles through a few states (the kernel's linkwatch). */
static void links_say(struct ucm_dp *dp, uint32_t now)
{
	uint32_t was = dp->links_seen ? dp->links : UCM_DP_LINK_IFACE_UP |
			(dp->tun_ifindex ? UCM_DP_LINK_TUN_UP : 0);
	uint32_t ch = now ^ was;

	if (now != dp->links_last) {
		dp->links_last = now;
		return;
	}

	if (ch & UCM_DP_LINK_IFACE_UP) {
		if (now & UCM_DP_LINK_IFACE_UP)
			pr_info("dp: %s is up again\n", dp->c.ifname);
		else
			pr_info("dp: %s is down or has no carrier: nothing comes in until it is up again\n",
				dp->c.ifname);
	}
	if (ch & UCM_DP_LINK_TUN_UP) {
		if (now & UCM_DP_LINK_TUN_UP)
			pr_info("dp: the tun %s is up again\n", dp->c.tun);
		else
			pr_info("dp: the tun %s is down: what the workers write to it is dropped (tun eio) until it is up again\n",
				dp->c.tun);
	}
	dp->links = now;
	dp->links_seen = true;
}

int ucm_dp__check(struct ucm_dp *dp, struct ucm_dp_health *h, size_t sz)
{
	int iface, tun = 1;
	uint32_t links = 0;

	if (!dp || !h || !sz)
		return ucm_err(-EINVAL);
	/* Control thread only: it is the one that starts and stops. */
	if (dp->state & UCM_DP_S_RUNNING) {
		iface = link_state(dp->ifindex, true);
		if (dp->tun_ifindex)
			tun = link_state(dp->tun_ifindex, false);
		if (!dp->health.fault)
			find_fault(dp, iface, tun);
		links = (iface > 0 ? UCM_DP_LINK_IFACE_UP : 0) |
			(dp->tun_ifindex && tun > 0 ? UCM_DP_LINK_TUN_UP : 0);
		if (iface >= 0 && tun >= 0)
			links_say(dp, links);
	}
	dp->health.links = links;
	ucm_stats_out(h, sz, &dp->health, sizeof(dp->health));
	return dp->health.fault ? 1 : 0;
}

/* The counters, as the stopped parts leave them; under dp->lock. */
static void snapshot(struct ucm_dp *dp)
{
	struct dp_final *f = dp->fin;
	uint32_t q, w, nw = dp->c.nworkers;

	for (q = 0; q < dp->c.nqueues; q++) {
		read_xsk(dp, q, &f->xs[q]);
		read_pool(dp, q, &f->ps[q]);
		for (w = 0; w < nw; w++)
			f->es_ok[q * nw + w] =
				!read_enqueue(dp, q, w, &f->es[q * nw + w]);
	}
	for (w = 0; w < nw; w++) {
		read_worker(dp, w, &f->ws[w]);
		read_tun(dp, w, &f->ts[w]);
		read_rev(dp, w, &f->rs[w]);
		read_txq(dp, w, &f->qs[w]);
	}
	gather(dp, &f->tot);
	/* The RX threads are joined: what is on the TX path by the queues'
	 * own counts of frames posted and reaped, which the statistics must
	 * agree with (the audit at close then checks the counts against the
	 * frames the kernel gives back). */
	f->tot.tx_pending = 0;
	for (q = 0; q < dp->c.nqueues; q++)
		f->tot.tx_pending += ucm_xsk_queue__tx_pending(dp->rx[q].q);
}

/* Steps 1-3: nothing comes in any more, and what came in is out. */
static void dp_quiesce(struct ucm_dp *dp)
{
	uint32_t q;

	/* 1. The kernel stops redirecting to us. */
	for (q = 0; q < dp->c.nqueues; q++)
		if (dp->rx[q].q)
			dp_redirect(dp, q, -1);
	/* 2. RX threads flush their bulk queues and let go of their pools. */
	atomic_store_explicit(&dp->stop, 1, memory_order_relaxed);
	for (q = 0; q < dp->c.nqueues; q++) {
		if (!dp->rx[q].started)
			continue;
		pthread_join(dp->rx[q].thr, NULL);
		dp->rx[q].started = false;
	}
	/* 3. Workers drain into the tun. */
	if (dp->map)
		ucm_cpumap__stop(dp->map);
}

/* 6. Sockets closed: every frame home (fill, RX, TX and completion rings
 * included), or the count of those missing. A close that found frames
 * still out (-EBUSY) can be tried again. */
static int dp_close(struct ucm_dp *dp, unsigned int timeout_ms)
{
	int err = 0;

	if (dp->xsk) {
		err = ucm_xsk__destroy(dp->xsk, timeout_ms);
		if (!err)
			dp->xsk = NULL;
	}
	pthread_mutex_lock(&dp->lock);
	dp->state = UCM_DP_S_STOPPED | (err ? 0 : UCM_DP_S_FRAMES_HOME);
	pthread_mutex_unlock(&dp->lock);
	return err;
}

/* Steps 4-6: every part down, every frame home. */
static int dp_teardown(struct ucm_dp *dp, unsigned int timeout_ms)
{
	uint32_t w;

	ucm_cpumap__destroy(dp->map);
	dp->map = NULL;
	/* 4. The way back's channels: what the workers left in them (lent,
	 * or filled and not collected) goes home. */
	for (w = 0; w < UCM_CPUMAP_MAX_WORKERS; w++) {
		if (!dp->txq[w])
			continue;
		ucm_txq__reclaim(dp->txq[w]);
		ucm_txq__destroy(dp->txq[w]);
		dp->txq[w] = NULL;
	}
	/* 5. Program off, tun closed. */
	if (dp->xdp) {
		ucm_xdp__detach(dp->xdp);
		ucm_xdp__destroy(dp->xdp);
		dp->xdp = NULL;
	}
	ucm_tun__destroy(dp->tun);
	dp->tun = NULL;
	return dp_close(dp, timeout_ms);
}

int ucm_dp__stop(struct ucm_dp *dp, unsigned int timeout_ms)
{
	bool ran;
	int err;

	if (!dp)
		return ucm_err(-EINVAL);
	if (stopped(dp)) {
		/* Frames were still out: look again. */
		err = dp->xsk ? dp_close(dp, timeout_ms) : 0;
		return ucm_err(dp->counted ? dp->counted : err);
	}
	ran = dp->state & UCM_DP_S_RUNNING;
	dp_quiesce(dp);
	/* From here the getters read the final counters, while the parts go. */
	pthread_mutex_lock(&dp->lock);
	if (ran && dp->fin) {
		snapshot(dp);
		if (ucm_dp_stats__violations(&dp->fin->tot, sizeof(dp->fin->tot))) {
			pr_warn("dp: the counters do not add up: a packet or a frame went unaccounted\n");
			dp->counted = -EUCLEAN;
		}
	}
	/* Without a reading (it never ran), the getters see zeros. */
	dp->state = UCM_DP_S_STOPPED;
	pthread_mutex_unlock(&dp->lock);
	err = dp_teardown(dp, timeout_ms);
	return ucm_err(dp->counted ? dp->counted : err);
}

void ucm_dp__destroy(struct ucm_dp *dp)
{
	if (!dp)
		return;
	if (!stopped(dp))
		ucm_dp__stop(dp, 0);
	/* Sockets that could not close keep their memory: frames are out. */
	pthread_mutex_destroy(&dp->lock);
	if (dp->fin) {
		free(dp->fin->es);
		free(dp->fin->es_ok);
		free(dp->fin);
	}
	free(dp);
}

/* ---- what it runs on -------------------------------------------------- */

uint32_t ucm_dp__nqueues(const struct ucm_dp *dp)
{
	return dp->c.nqueues;
}

uint32_t ucm_dp__queue_id(const struct ucm_dp *dp, uint32_t q)
{
	return q < dp->c.nqueues ? dp->c.queues[q] : UINT32_MAX;
}

uint32_t ucm_dp__nworkers(const struct ucm_dp *dp)
{
	return dp->c.nworkers;
}

int ucm_dp__worker_cpu(const struct ucm_dp *dp, uint32_t w)
{
	return w < dp->c.nworkers ? dp->c.cpus[w] : -1;
}

uint32_t ucm_dp__flags(const struct ucm_dp *dp)
{
	return dp->c.flags;
}

uint32_t ucm_dp__mtu(const struct ucm_dp *dp)
{
	return dp->c.mtu;
}

bool ucm_dp__prewake(const struct ucm_dp *dp)
{
	return dp->c.prewake;
}

bool ucm_dp__zerocopy(const struct ucm_dp *dp)
{
	return dp->zerocopy;
}

const char *ucm_dp__tun_name(const struct ucm_dp *dp)
{
	return dp->c.sink ? NULL : dp->c.tun;
}
