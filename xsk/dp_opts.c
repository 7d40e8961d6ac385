// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_dp's options: every default resolved, every bad combination refused
 * with a message that names it, before anything is loaded or opened; the
 * interface they are resolved against (its MTU); and what a datapath
 * reports of them. Control thread only (dp_internal.h).
 */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "dp_internal.h"
#include "port_internal.h"
#include "engine/chain.h"
#include "engine/cpumap_internal.h"
#include "io/cpus.h"

/* The XDP headroom in front of a received packet, and what an MTU
 * leaves room for: Ethernet and two VLAN tags. */
#define DP_XDP_HEADROOM		256
#define DP_L2_ROOM		(14 + 8)

_Static_assert(UCM_DP_FRAMES_DEFAULT >= 3 * UCM_DP_RX_RING_DEFAULT +
	       UCM_CPUMAP_QSIZE_DEFAULT + UCM_XSK_TX_RING +
	       4 * 2 * UCM_TXQ_DEFAULT_SIZE,
	       "the default frames cover the default rings, two-way");

/* Default workers (ucm_pick_worker_cpus()): every CPU we may use but CPU
 * 0, only those of @ifname's NUMA node when it has some of them. *node:
 * the node, when it left some out; else -1. */
static uint32_t default_cpus(const char *ifname, int *cpus, uint32_t max, int *node)
{
	char prim[IF_NAMESIZE];
	cpu_set_t allowed, near;
	bool narrowed = false;
	uint32_t n;
	int dev;

	if (ucm_affinity(0, &allowed))
		CPU_ZERO(&allowed);
	/* sysfs knows the primary name only */
	dev = ucm_dev_numa_node(ifname ? ucm_if_primary(ifname, prim) : ifname);
	if (max > UCM_CPUMAP_MAX_WORKERS)
		max = UCM_CPUMAP_MAX_WORKERS;	/* what a map takes */
	/* The CPUs' IDs run to the configured count: online ones past a
	 * hole (0-3 and 8-9 online) are above the online count. The
	 * affinity mask holds online CPUs only. */
	n = ucm_pick_worker_cpus(&allowed, sysconf(_SC_NPROCESSORS_CONF),
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
	const char *p;

	if (!src || !*src) {
		pr_warn("dp: %s is required\n", what);
		return -EINVAL;
	}
	if (strlen(src) >= IF_NAMESIZE) {
		pr_warn("dp: %s '%s' is longer than %d characters\n", what, src,
			IF_NAMESIZE - 1);
		return -EINVAL;
	}
	/* The kernel's rule for a device's name (dev_valid_name()): else
	 * the tun's create refuses it after the program is attached. */
	if (!strcmp(src, ".") || !strcmp(src, "..") || strpbrk(src, "/: \t\n\v\f\r")) {
		pr_warn("dp: %s '%s' cannot be a device's name: not . or .., no /, : or blank\n",
			what, src);
		return -EINVAL;
	}
	/* A template takes one %d (__dev_alloc_name()), nothing else. */
	p = strchr(src, '%');
	if (p && (p[1] != 'd' || strchr(p + 2, '%'))) {
		pr_warn("dp: %s '%s': a name's '%%' is a template's one %%d (ucm%%d), no other\n",
			what, src);
		return -EINVAL;
	}
	strcpy(dst, src);
	return 0;
}

static int resolve_lists(const struct ucm_dp_opts *o, struct dp_cfg *c)
{
	uint32_t i, j;

	if (o->nqueues > UCM_XSK_MAX_QUEUES || o->ncpus > UCM_CPUMAP_MAX_WORKERS ||
	    o->n_rx_cpus > UCM_XSK_MAX_QUEUES) {
		pr_warn("dp: %u queues, %u worker CPUs, %u RX CPUs: at most %d, %d and %d\n",
			o->nqueues, o->ncpus, o->n_rx_cpus, UCM_XSK_MAX_QUEUES,
			UCM_CPUMAP_MAX_WORKERS, UCM_XSK_MAX_QUEUES);
		return -EINVAL;
	}
	if ((o->nqueues && !o->queues) || (o->ncpus && !o->cpus) ||
	    (o->n_rx_cpus && !o->rx_cpus)) {
		pr_warn("dp: a count without its list: nqueues %u with%s queues, ncpus %u with%s cpus, n_rx_cpus %u with%s rx_cpus\n",
			o->nqueues, o->queues ? "" : "out", o->ncpus, o->cpus ? "" : "out",
			o->n_rx_cpus, o->rx_cpus ? "" : "out");
		return -EINVAL;
	}
	c->cpus_node = -1;
	c->nqueues = o->nqueues ? o->nqueues : 1;
	for (i = 0; i < o->nqueues; i++) {
		/* Our program's socket map has a slot per queue id below
		 * UCM_STEER_MAX_QUEUES (an application's map is checked
		 * against its own size); one socket per queue. */
		if (!(c->flags & UCM_DP_F_OWN_XDP) && o->queues[i] >= UCM_STEER_MAX_QUEUES) {
			pr_warn("dp: queue %u: the XDP program's socket map holds queues 0-%d: use a queue below %d (ethtool -L, or an XDP program of one's own: UCM_DP_F_OWN_XDP)\n",
				o->queues[i], UCM_STEER_MAX_QUEUES - 1, UCM_STEER_MAX_QUEUES);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (o->queues[j] == o->queues[i]) {
				pr_warn("dp: queue %u is listed twice: one socket a queue\n",
					o->queues[i]);
				return -EINVAL;
			}
		}
		c->queues[i] = o->queues[i];
	}
	c->n_rx_cpus = o->n_rx_cpus;
	for (i = 0; i < o->n_rx_cpus; i++) {
		/* An RX thread off its CPU would run, unpinned, where
		 * nobody asked: a polling one beside a worker. */
		if (!ucm_cpu_allowed(o->rx_cpus[i])) {
			pr_warn("dp: RX CPU %d is not online or not in the calling thread's affinity mask, which new threads inherit (%ld online; taskset -c or a unit's CPUAffinity= sets the mask, which leaves isolcpus= CPUs out)\n",
				o->rx_cpus[i], sysconf(_SC_NPROCESSORS_ONLN));
			return -EINVAL;
		}
		c->rx_cpus[i] = o->rx_cpus[i];
	}
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
	c->frames_set = o->frames_per_queue;
	c->frame_size = o->frame_size ? o->frame_size :
					 UCM_DP_FRAME_SIZE_DEFAULT;
	c->rx_size = o->rx_size ? o->rx_size : UCM_DP_RX_RING_DEFAULT;
	c->rx_size_set = o->rx_size;
	c->qsize = o->qsize ? o->qsize : UCM_CPUMAP_QSIZE_DEFAULT;
	if (!is_pow2(c->frames)) {
		pr_warn("dp: frames_per_queue %u: a power of two\n", c->frames);
		return -EINVAL;
	}
	if (!is_pow2(c->rx_size) || c->rx_size > UCM_XSK_MAX_RING) {
		pr_warn("dp: rx_size %u: a power of two, at most %u\n", c->rx_size,
			UCM_XSK_MAX_RING);
		return -EINVAL;
	}
	if (!is_pow2(c->qsize) || c->qsize < UCM_CPUMAP_QSIZE_MIN ||
	    c->qsize > UCM_CPUMAP_QSIZE_MAX) {
		pr_warn("dp: qsize %u: a power of two, %u to %u\n", c->qsize,
			UCM_CPUMAP_QSIZE_MIN, UCM_CPUMAP_QSIZE_MAX);
		return -EINVAL;
	}
	if (c->frame_size != 2048 && c->frame_size != 4096) {
		pr_warn("dp: frame_size %u: 2048 or 4096 bytes\n", c->frame_size);
		return -EINVAL;
	}
	c->mtu = o->mtu;
	/* The kernel's least for a device that carries IPv4 (ETH_MIN_MTU):
	 * below it the tun's own MTU ioctl refuses, after the attach. */
	if (c->mtu > UCM_DP_MTU_MAX || (c->mtu && c->mtu < 68 && !o->sink)) {
		pr_warn("dp: mtu %u: the tun's is 68 to %u\n", c->mtu, UCM_DP_MTU_MAX);
		return -EINVAL;
	}
	c->max_frags = o->max_frags ? o->max_frags : UCM_XSK_MAX_FRAGS;
	if (c->max_frags > UCM_XSK_MAX_FRAGS) {
		pr_warn("dp: max_frags %u: a packet takes at most %u frames (the kernel's limit)\n",
			c->max_frags, UCM_XSK_MAX_FRAGS);
		return -EINVAL;
	}
	return 0;
}

/* How the threads wait: the spin, the workers' pre-wake (AUTO: where
 * every arrival is for the one worker, one way). After the sink's copy
 * and the worker count. The two-way workers sleep in the tun's io_uring,
 * which polls the pre-wake's set (UCM_SINK_F_POLL_WAKE); AUTO leaves them
 * without: they sleep between the way back's turns too, and a pre-wake
 * then is mostly one wake-up more (docs/experiments.md, "The pre-wake on by default for a two-way worker"). */
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

/* The XDP program's steering: the application's policy and flags, and
 * the flags that follow the datapath's. After the worker count. */
static int resolve_steer(const struct ucm_dp_opts *o, struct dp_cfg *c)
{
	if (o->steer_policy >= UCM_STEER__MAX) {
		pr_warn("dp: steer_policy %u unknown: UCM_STEER_FIXED, _RR, _L4_HASH, _L4_SPORT or _L4_DPORT\n",
			o->steer_policy);
		return -EINVAL;
	}
	/* LINK_CTRL and STAMP are the library's to set, below. */
	if (o->steer_flags & ~(UCM_STEER_F_SYMMETRIC | UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6)) {
		pr_warn("dp: steer_flags 0x%x unknown: the flags are SYMMETRIC, IPV4 and IPV6\n",
			o->steer_flags);
		return -EINVAL;
	}
	c->steer.policy = o->steer_policy;
	c->steer.flags = o->steer_flags;
	c->steer.fixed = o->fixed_worker;
	c->steer.nworkers = c->nworkers;
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
		/* Frames to it would reach no one, or everyone. */
		if ((o->peer_mac[0] & 1) || !memcmp(o->peer_mac, "\0\0\0\0\0\0", 6)) {
			pr_warn("dp: peer_mac %02x:%02x:%02x:%02x:%02x:%02x is not a station's: give the next hop's unicast MAC\n",
				o->peer_mac[0], o->peer_mac[1], o->peer_mac[2],
				o->peer_mac[3], o->peer_mac[4], o->peer_mac[5]);
			return -EINVAL;
		}
		c->peer_mac_set = true;
		memcpy(c->peer_mac, o->peer_mac, 6);
	}
	return 0;
}

int ucm_dp_resolve(const struct ucm_dp_opts *opts, struct dp_cfg *c)
{
	struct ucm_dp_opts o;
	int err;

	err = UCM_OPTS_COPY(&o, opts, ucm_dp_opts);
	if (err)
		return err;
	memset(c, 0, sizeof(*c));
	c->flags = o.flags;
	if (c->flags & ~UCM_DP_F_MASK) {
		pr_warn("dp: unknown flags 0x%x\n", c->flags & ~UCM_DP_F_MASK);
		return -EINVAL;
	}
	c->xsk_mode = o.xsk_mode;
	if (c->xsk_mode > UCM_XSK_ZEROCOPY) {
		pr_warn("dp: xsk_mode %u unknown: UCM_XSK_AUTO, _COPY or _ZEROCOPY\n", c->xsk_mode);
		return -EINVAL;
	}
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
	c->tun_owner = o.tun_owner;
	c->one_frame_callbacks = opts && opts->sz <= offsetof(struct ucm_dp_opts, thread_init) &&
				 (o.sink || o.verdict || o.steer_fn);
	if ((c->flags & UCM_DP_F_OWN_XDP) &&
	    (c->flags & (UCM_DP_F_XDP_SKB | UCM_DP_F_REPLACE))) {
		pr_warn("dp: UCM_DP_F_XDP_SKB and UCM_DP_F_REPLACE attach our program: not with UCM_DP_F_OWN_XDP\n");
		return -EINVAL;
	}
	err = copy_name(c->ifname, o.ifname, "the interface (ifname)");
	if (!err) {
		char prim[IF_NAMESIZE];

		if (ucm_if_primary(c->ifname, prim) == prim)
			strcpy(c->ifname, prim);
	}
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
	err = resolve_wake(&o, c);
	if (err)
		return err;
	return resolve_steer(&o, c);
}

/* Fill and RX rings, a worker ring of packets of @k frames, and with TX
 * channels the TX ring and each of the queue's workers' channels: its out
 * ring of packets of @k_out frames, and with the way back its free ring
 * too (what the queue lends it, a frame an entry). The fill, RX and TX
 * rings hold a frame a descriptor whatever the packets.
 *
 * Left out: the other workers' rings; what a worker holds past its ring
 * (up to HELD_MAX packets and a return bulk, all handed back when its
 * ring runs empty); a packet of several half taken off the RX ring (its
 * rest is on it); completions beyond the TX ring; and the way back's
 * hands, a worker's stash of 32 and 64 frames waiting for a next hop
 * (1.2 s at most). None waits for the fill ring or for RX: each comes
 * home on a worker's or the kernel's time, but the stash, which an idle
 * way back keeps. While they are out the fill ring is short, never dry
 * for good: only the RX thread allocates (the pool's cache and recycle
 * ring are its own), it looks again within 1 ms of a short refill
 * (queue.c's XSK_DRY_SLEEP_MS), and the kernel counts what it drops
 * meanwhile (rx_dropped, rx_fill_ring_empty_descs), as test-backpressure
 * checks.
 */
static uint32_t frames_for(const struct dp_cfg *c, uint32_t k, uint32_t k_out)
{
	uint32_t wpq = (c->nworkers + c->nqueues - 1) / c->nqueues;
	uint32_t need = 2 * c->rx_size + c->rx_size + c->qsize * k;
	uint32_t per = k_out + (c->flags & UCM_DP_F_TWO_WAY ? 1 : 0);

	if (dp_has_channels(c->flags))
		need += UCM_XSK_TX_RING + wpq * per * UCM_TXQ_DEFAULT_SIZE;
	return need;
}

uint32_t ucm_dp_frames_needed(const struct dp_cfg *c)
{
	return frames_for(c, 1, 1);
}

uint32_t ucm_dp__frames_needed(const struct ucm_dp_opts *opts)
{
	struct dp_cfg c;

	if (ucm_dp_resolve(opts, &c))
		return 0;
	return ucm_dp_frames_needed(&c);
}

/* ---- the interface ------------------------------------------------------ */

int ucm_dp_if_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
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

/* The largest MTU a frame holds: after the XDP headroom, Ethernet and two
 * VLAN tags. */
static uint32_t frame_mtu(const struct dp_cfg *c)
{
	return c->frame_size - DP_XDP_HEADROOM - DP_L2_ROOM;
}

/* Frames a packet of an interface MTU @mtu takes, in several. */
static uint32_t frames_of(const struct dp_cfg *c, uint32_t mtu)
{
	uint32_t per = c->frame_size - DP_XDP_HEADROOM;

	return (mtu + DP_L2_ROOM + per - 1) / per;
}

/* Frames a packet may take at the interface's MTU. */
static uint32_t chain_len(const struct dp_cfg *c)
{
	return frames_of(c, c->if_mtu);
}

uint32_t ucm_dp_mtu_frames(const struct dp_cfg *c, uint32_t mtu)
{
	return c->sg ? frames_of(c, mtu) : 1;
}

bool ucm_dp_mtu_chains(const struct dp_cfg *c, uint32_t mtu)
{
	return c->sg && mtu + DP_L2_ROOM <= UINT16_MAX && frames_of(c, mtu) <= c->max_frags;
}

bool ucm_dp_mtu_fits(const struct dp_cfg *c, uint32_t mtu)
{
	if (!c->sg)
		return mtu <= frame_mtu(c);
	return mtu + DP_L2_ROOM <= UINT16_MAX && frames_of(c, mtu) <= chain_len(c);
}

void ucm_dp_resolve_mtu(struct dp_cfg *c)
{
	struct ifreq ifr = {};

	if (!ucm_dp_if_ioctl(c->ifname, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0)
		c->if_mtu = ifr.ifr_mtu;
	c->sg = c->if_mtu > frame_mtu(c);
	if (c->mtu)
		return;		/* given: check_tun_mtu() */
	/* Packets of several frames: the tun takes what the interface
	 * does. */
	c->mtu = c->sg ? c->if_mtu : frame_mtu(c);
	/* What the kernel routes into the tun leaves through the interface:
	 * no larger than it takes. */
	if ((c->flags & UCM_DP_F_TWO_WAY) && c->if_mtu && c->if_mtu < c->mtu)
		c->mtu = c->if_mtu;
	if (c->mtu > UCM_DP_MTU_MAX)
		c->mtu = UCM_DP_MTU_MAX;
}

/* Two-way, a tun MTU given above the interface's: the kernel would route
 * into the tun packets the way back cannot send on as they are (cut into
 * more frames than the sockets take, dropped as too big, or by the
 * interface's peer); refused with the fixes. */
static int check_tun_mtu(const struct dp_cfg *c)
{
	if (!(c->flags & UCM_DP_F_TWO_WAY) || !c->if_mtu || c->mtu <= c->if_mtu)
		return 0;
	pr_warn("dp: two-way, the tun's MTU %u is more than %s's %u: what the kernel routes into the tun leaves through %s, and a longer packet cannot; give an MTU of at most %u, or raise %s's (ip link set dev %s mtu %u)\n",
		c->mtu, c->ifname, c->if_mtu, c->ifname, c->if_mtu, c->ifname, c->ifname,
		c->mtu);
	return -ERANGE;
}

/*
 * The interface's MTU against what a frame holds. Above it, a packet
 * comes in several frames (multi-buffer AF_XDP, a frags-aware program:
 * Linux 6.6), and two-way the way back sends it so; what cannot work that
 * way yet is refused here, with the MTU and the fix: a driver would refuse
 * it with a bare ERANGE or EINVAL.
 */
int ucm_dp_check_if_mtu(const struct dp_cfg *c)
{
	uint32_t holds = frame_mtu(c), big = 4096 - DP_XDP_HEADROOM;
	/* The largest MTU that works, and whether 4096-byte frames would */
	uint32_t fix = holds;
	bool frames_help = c->if_mtu <= big - DP_L2_ROOM;
	const char *why = NULL;

	if (!c->sg)
		return 0;
	if (c->flags & UCM_DP_F_OWN_XDP) {
		why = "the packets come in several frames, and whether the attached program is frags-aware cannot be told";
	} else if (c->one_frame_callbacks) {
		why = "the program was built against libucpumap 0.2.0, whose callbacks (sink, verdict, steer_fn) take a packet in one frame (built again against 0.3.0, it gets packets of several)";
	} else if (c->if_mtu + DP_L2_ROOM > UINT16_MAX || chain_len(c) > UCM_CHAIN_MAX) {
		why = c->if_mtu + DP_L2_ROOM > UINT16_MAX ?
		      "a packet could be longer than 65535 bytes" :
		      "a packet would take more frames than the kernel gives one";
		/* The largest MTU that is neither. */
		fix = UCM_CHAIN_MAX * (c->frame_size - DP_XDP_HEADROOM) - DP_L2_ROOM;
		if (fix > UINT16_MAX - DP_L2_ROOM)
			fix = UINT16_MAX - DP_L2_ROOM;
		frames_help = c->if_mtu + DP_L2_ROOM <= UCM_CHAIN_MAX * big &&
			      c->if_mtu + DP_L2_ROOM <= UINT16_MAX;
	}
	if (why) {
		pr_warn("dp: %s's MTU %u is more than a %u-byte frame holds (%u after the XDP headroom, an Ethernet header and two VLAN tags) and %s: lower it (ip link set dev %s mtu %u)%s\n",
			c->ifname, c->if_mtu, c->frame_size, holds, why, c->ifname, fix,
			c->frame_size < 4096 && frames_help ? ", or give 4096-byte frames" : "");
		return -ERANGE;
	}
	pr_info("dp: %s's MTU %u is more than a %u-byte frame holds (%u): packets of up to %u frames (multi-buffer AF_XDP)\n",
		c->ifname, c->if_mtu, c->frame_size, holds, chain_len(c));
	if (c->max_frags < chain_len(c))
		pr_info("dp: packets of more than %u frames (max_frags) are dropped on the way in, counted as rx_chain_long\n",
			c->max_frags);
	return 0;
}

/*
 * Frames per queue for packets of several frames: a worker ring holds k
 * frames an entry (at most max_frags), and so does a TX channel's out
 * ring: the verdict's sends are packets that came in, the way back's
 * reads and segments are at most the tun's MTU, two-way at most the
 * interface's (check_tun_mtu()), and take no more frames than it on the
 * way in (each later frame holds more past its TX metadata than past the
 * XDP headroom); max_frags does not bound them.
 */
int ucm_dp_chain_frames(struct dp_cfg *c)
{
	uint32_t k, k_out, need;
	char chans[48] = "";

	/* An MTU no packet of several frames can take is refused later,
	 * with its own reason (ucm_dp_check_if_mtu()). */
	if (!c->sg || chain_len(c) > UCM_CHAIN_MAX || c->if_mtu + DP_L2_ROOM > UINT16_MAX)
		return 0;
	k_out = chain_len(c);
	k = k_out < c->max_frags ? k_out : c->max_frags;
	/* A packet's descriptors go on the RX ring together, the way back's
	 * on the TX ring (min(rx_size, UCM_XSK_TX_RING)): a ring smaller
	 * than a packet passes none of that size. */
	if (c->rx_size < k_out) {
		pr_warn("dp: an RX ring of %u descriptors cannot hold a packet of %u frames (%s's MTU %u): give rx_size %u at least\n",
			c->rx_size, k_out, c->ifname, c->if_mtu, pow2_up(k_out));
		return -EINVAL;
	}
	/* The frames are ours to size: so is the RX ring, in packets. */
	if (!c->frames_set && !c->rx_size_set && c->rx_size < UCM_DP_RX_RING_CHAIN)
		c->rx_size = UCM_DP_RX_RING_CHAIN;
	need = frames_for(c, k, k_out);
	if (dp_has_channels(c->flags))
		snprintf(chans, sizeof(chans), ", TX channels of up to %u", k_out);
	if (c->frames >= need)
		return 0;
	if (!c->frames_set) {
		c->frames = pow2_up(need);
		pr_info("dp: %u frames per queue: an RX ring of %u descriptors, a worker ring of packets of up to %u frames%s\n",
			c->frames, c->rx_size, k, chans);
		return 0;
	}
	pr_warn("dp: %u frames per queue cannot cover the rings and a worker ring of packets of up to %u frames%s (%s's MTU %u): give at least %u (they need %u; a power of two)\n",
		c->frames, k, chans, c->ifname, c->if_mtu, pow2_up(need), need);
	return -EINVAL;
}

int ucm_dp_check_tx_frames(const struct dp_cfg *c, uint32_t tx_frames)
{
	uint32_t per = c->frame_size - DP_XDP_HEADROOM;

	if (!c->sg || !dp_has_channels(c->flags) || chain_len(c) <= tx_frames)
		return 0;
	pr_warn("dp: in zero-copy %s's driver takes packets of at most %u descriptors, and its MTU %u takes %u frames of %u bytes: use copy mode (UCM_XSK_COPY, ucpumapd --copy)%s, or a lower MTU (ip link set dev %s mtu %u)\n",
		c->ifname, tx_frames, c->if_mtu, chain_len(c), c->frame_size,
		c->frame_size < 4096 &&
		(c->if_mtu + DP_L2_ROOM + 4096 - DP_XDP_HEADROOM - 1) / (4096 - DP_XDP_HEADROOM) <= tx_frames ?
		", 4096-byte frames" : "", c->ifname,
		tx_frames * per - DP_L2_ROOM);
	return -EINVAL;
}

/* The program and the workers read Ethernet frames: on a device without
 * that header (wireguard, ipip, gre, an L3 tun, lo) the IP header sits
 * where they look for the EtherType. */
int ucm_dp_check_ether(const char *ifname)
{
	struct ifreq ifr = {};
	int err;

	err = ucm_dp_if_ioctl(ifname, SIOCGIFHWADDR, &ifr);
	if (err) {
		pr_warn("dp: cannot read the link type of %s: %s\n", ifname, strerror(-err));
		return err;
	}
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		pr_warn("dp: %s is not an Ethernet device (link type %u, /sys/class/net/%s/type): ucpumap serves Ethernet interfaces (a NIC, a veth, a tap, a bond or VLAN on one)\n",
			ifname, ifr.ifr_hwaddr.sa_family, ifname);
		return -EINVAL;
	}
	return 0;
}

int ucm_dp_check_cfg(struct dp_cfg *c)
{
	uint32_t need = ucm_dp_frames_needed(c);
	int err;

	/* Not given: as many as the rings and the channels take (two-way
	 * past four workers a queue, more than the default). */
	if (c->frames < need && !c->frames_set) {
		c->frames = pow2_up(need);
		pr_info("dp: %u frames per queue: the rings, a worker ring and the way back of %u workers\n",
			c->frames, c->nworkers);
	}
	if (c->frames < need) {
		pr_warn("dp: %u frames per queue cannot cover the rings, a worker ring%s: give at least %u (they need %u; a power of two)\n",
			c->frames, dp_has_channels(c->flags) ? " and the way back" : "", pow2_up(need),
			need);
		return -EINVAL;
	}
	if (!if_nametoindex(c->ifname)) {
		pr_warn("dp: no interface named '%s'\n", c->ifname);
		return -ENODEV;
	}
	ucm_dp_resolve_mtu(c);
	err = check_tun_mtu(c);
	return err ? err : ucm_dp_chain_frames(c);
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
	return dp && dp->zerocopy;
}

const char *ucm_dp__tun_name(const struct ucm_dp *dp)
{
	return dp->c.sink ? NULL : dp->c.tun;
}
