// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_dp's parts, set up in order by ucm_dp__create() and taken down in
 * order by ucm_dp__stop(): the XDP program (or the application's XSKMAP),
 * the sockets, the tun, the TX channels of the way back and the verdict,
 * the cpumap and its workers. Control thread only (dp_internal.h).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "dp_internal.h"
#include "port_internal.h"
#include "engine/chain.h"
#include "io/netdev.h"
#include "engine/cpumap_internal.h"

static int if_mac(const char *ifname, uint8_t *mac)
{
	struct ifreq ifr = {};
	int err = ucm_dp_if_ioctl(ifname, SIOCGIFHWADDR, &ifr);

	if (err)
		pr_warn("dp: no MAC address on %s: %s\n", ifname, strerror(-err));
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return err;
}

/* Whether device @name is up (@up) or down, as far as can be asked. */
static bool tap_updown_is(const char *name, bool up)
{
	struct ifreq ifr = {};

	return !ucm_dp_if_ioctl(name, SIOCGIFFLAGS, &ifr) && !!(ifr.ifr_flags & IFF_UP) == up;
}

/* A tap's flags, up or down. */
static int tap_updown(const char *tap, bool up)
{
	struct ifreq ifr = {};
	int err;

	err = ucm_dp_if_ioctl(tap, SIOCGIFFLAGS, &ifr);
	if (err || !!(ifr.ifr_flags & IFF_UP) == up)
		return err;
	ifr.ifr_flags = up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP;
	return ucm_dp_if_ioctl(tap, SIOCSIFFLAGS, &ifr);
}

/*
 * A tap takes the interface's address: the frames steered into it are
 * addressed to it (a tap's stack drops those to another station's as
 * other host), and two-way it answers for the interface on the link. One
 * that was not up before this start goes down for the change and up
 * again: the kernel makes a device's IPv6 link-local address from its MAC
 * when it comes up, and makes none anew for a MAC changed while up (the
 * peers would ask for the interface's). One way, a tap that cannot take
 * it (attached without CAP_NET_ADMIN) is said, not refused.
 */
static int tap_take_mac(struct ucm_dp *dp)
{
	const char *tap = ucm_tun__name(dp->tun);
	struct ifreq ifr = {};
	uint8_t now[6];
	int err;

	err = if_mac(dp->c.ifname, (uint8_t *)ifr.ifr_hwaddr.sa_data);
	if (err)
		return err;
	memcpy(dp->if_mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!if_mac(tap, now) && !memcmp(now, dp->if_mac, 6))
		return 0;
	if (dp->tun_fresh)
		err = tap_updown(tap, false);
	if (!err) {
		ifr.ifr_hwaddr.sa_family = 1;	/* ARPHRD_ETHER */
		err = ucm_dp_if_ioctl(tap, SIOCSIFHWADDR, &ifr);
	}
	/* Up again, whatever the change did: as the set-up left it. */
	if (dp->tun_fresh) {
		int up = tap_updown(tap, true);

		err = err ? err : up;
	}
	if (err && !(dp->c.flags & UCM_DP_F_TWO_WAY)) {
		pr_warn("dp: cannot give %s the address of %s: %s; its stack drops what is steered into it as another station's until it has it (ip link set dev %s address %02x:%02x:%02x:%02x:%02x:%02x)\n",
			tap, dp->c.ifname, strerror(-err), tap, dp->if_mac[0], dp->if_mac[1],
			dp->if_mac[2], dp->if_mac[3], dp->if_mac[4], dp->if_mac[5]);
		return 0;
	}
	if (err)
		pr_warn("dp: cannot give %s the address of %s: %s\n", tap, dp->c.ifname,
			strerror(-err));
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
	memcpy(dp->back_mac, l2.src, 6);
	dp->back_mac_set = true;
	memcpy(l2.dst, dp->c.peer_mac, 6);
	l2.resolve_ifindex = dp->c.peer_mac_set || (dp->c.flags & UCM_DP_F_TAP) ?
			     0 : (int)if_nametoindex(dp->c.ifname);
	for (w = 0; w < dp->c.nworkers; w++) {
		err = ucm_tun__set_back(dp->tun, w, dp->txq[w], &l2);
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
		/* Sockets bound for packets of several frames take them both
		 * ways: the way back sends its long reads and segments so. */
		ucm_txq__set_max_frames(dp->txq[w], ucm_xsk_tx_frames(dp->xsk));
		/* Without the way back only the verdict sends, frames it
		 * received: nothing to lend it. */
		ucm_txq__set_lend(dp->txq[w], dp->c.flags & UCM_DP_F_TWO_WAY);
		rx->txq[rx->ntxq++] = dp->txq[w];
	}
	return 0;
}

/* The application's XSKMAP (UCM_DP_F_OWN_XDP): an XSKMAP, with room for
 * every queue id. */
static int check_own_map(const struct dp_cfg *c)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info), q;

	if (bpf_obj_get_info_by_fd(c->xsks_map_fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_XSKMAP) {
		pr_warn("dp: xsks_map_fd %d is not an XSKMAP (BPF_MAP_TYPE_XSKMAP): give the map your XDP program redirects with\n",
			c->xsks_map_fd);
		return -EINVAL;
	}
	for (q = 0; q < c->nqueues; q++) {
		if (c->queues[q] >= info.max_entries) {
			pr_warn("dp: the XSKMAP has %u entries, no room for queue %u\n",
				info.max_entries, c->queues[q]);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- each part's options, from the configuration ----------------------- */

/* The application's thread hook, for the parts' own (api.h: ucm_thread_fn). */
static void dp_worker_init(void *ctx, uint32_t w)
{
	const struct dp_cfg *c = ctx;

	c->thread_init(c->thread_init_ctx, UCM_DP_THREAD_WORKER, w);
}

static void xdp_opts_of(const struct dp_cfg *c, struct ucm_xdp_opts *xo)
{
	*xo = (struct ucm_xdp_opts){
		.sz = sizeof(*xo), .policy = c->steer.policy, .nworkers = c->steer.nworkers,
		.fixed = c->steer.fixed, .flags = c->steer.flags,
		.load_flags = c->sg ? UCM_XDP_F_FRAGS : 0,
	};
}

static void xsk_opts_of(const struct dp_cfg *c, struct ucm_xsk_opts *so)
{
	uint32_t f = c->flags;

	*so = (struct ucm_xsk_opts){
		.sz = sizeof(*so), .ifname = c->ifname, .queues = c->queues,
		.nqueues = c->nqueues, .frames_per_queue = c->frames,
		.frame_size = c->frame_size, .rx_size = c->rx_size,
		.fill_size = 2 * c->rx_size, .mode = c->xsk_mode,
		.flags = (f & UCM_DP_F_BUSY_POLL ? UCM_XSK_F_BUSY_POLL : 0) |
			 (c->sg ? UCM_XSK_F_SG : 0) |
			 /* The way back's cut leaves checksums to the kernel. */
			 ((f & UCM_DP_F_TWO_WAY) &&
			  !(f & (UCM_DP_F_NO_OFFLOAD | UCM_DP_F_NO_TX_CSUM)) ?
			  UCM_XSK_F_TX_CSUM : 0),
		.umem_flags = f & UCM_DP_F_NO_DIRECT_BULK ? UCM_UMEM_F_NO_DIRECT_BULK : 0,
		.max_frags = c->max_frags,
	};
}

/* Whether the workers hold up to 64 for the tun: one io_uring submission
 * (or a GSO super-packet) for them all. Coalescing always holds (inline
 * too: the RX thread holds across its flushes). Not for a sink of one's
 * own: its xmit() is handed each batch. */
static bool dp_hold(const struct dp_cfg *c)
{
	uint32_t f = c->flags;

	if (f & UCM_DP_F_COALESCE)
		return true;
	return !c->sink && !(f & (UCM_DP_F_NO_HOLD | UCM_DP_F_INLINE));
}

/* All but what the open makes: the sink's context and the channels. */
static void cpumap_opts_of(const struct dp_cfg *c, struct ucm_cpumap_opts *co)
{
	uint32_t f = c->flags;

	*co = (struct ucm_cpumap_opts){
		.sz = sizeof(*co), .cpus = c->cpus, .ncpus = c->nworkers, .qsize = c->qsize,
		.sink = c->sink ? c->sink : f & UCM_DP_F_TWO_WAY ?
			ucm_tun__sink_back() : ucm_tun__sink(),
		.sink_ctx = c->sink ? c->sink_ctx : NULL,
		.flags = (f & UCM_DP_F_NO_RECYCLE ? UCM_CPUMAP_F_NO_RECYCLE : 0) |
			 (f & UCM_DP_F_INLINE ? UCM_CPUMAP_F_INLINE : 0) |
			 /* the tun sees up to 64 at once: one submission */
			 (dp_hold(c) ? UCM_CPUMAP_F_HOLD : 0) |
			 (f & UCM_DP_F_NO_LATENCY ? UCM_CPUMAP_F_NO_LATENCY : 0) |
			 (f & UCM_DP_F_NO_FAIR_SHARE ? UCM_CPUMAP_F_NO_FAIR : 0) |
			 (c->prewake ? UCM_CPUMAP_F_PREWAKE : 0) |
			 /* one RX thread: single-producer worker rings
			  * (inline, one "worker" per queue: no ring);
			  * several: a lane each, when asked */
			 (c->nqueues == 1 ? UCM_CPUMAP_F_ONE_PRODUCER :
			  (f & (UCM_DP_F_LANES | UCM_DP_F_INLINE)) == UCM_DP_F_LANES ?
			  UCM_CPUMAP_F_LANES : 0),
		.verdict = c->verdict, .verdict_ctx = c->verdict_ctx,
		.spin_us = c->spin_us,
		.worker_init = c->thread_init ? dp_worker_init : NULL,
		.worker_init_ctx = (void *)c,	/* the hook only reads it */
	};
}

int ucm_dp_check_parts(const struct dp_cfg *c)
{
	struct ucm_cpumap_opts co;
	struct ucm_xdp_opts xo, xo_in;
	struct ucm_xsk_opts so, so_in;
	struct ucm_steer_cfg steer;
	int err;

	err = c->flags & UCM_DP_F_OWN_XDP ? check_own_map(c) : 0;
	if (!err)
		err = ucm_dp_check_if_mtu(c);
	if (err)
		return err;
	/* The steering's config picks workers in the RX threads too (a
	 * packet without the program's mark): checked with OWN_XDP as well. */
	xdp_opts_of(c, &xo_in);
	err = ucm_xdp_opts_check(&xo_in, &xo, &steer);
	if (err)
		return err;
	xsk_opts_of(c, &so_in);
	err = ucm_xsk_parse_opts(&so_in, &so);
	if (err)
		return err;
	cpumap_opts_of(c, &co);
	err = ucm_cpumap_opts_check(&co);
	if (!err)
		err = ucm_xsk_check_queues(c->ifname, c->queues, c->nqueues);
	if (!err && (c->flags & (UCM_DP_F_TWO_WAY | UCM_DP_F_VERDICT_TX)))
		err = ucm_xsk_check_tx_queues(c->ifname, c->queues, c->nqueues);
	return err ? err : ucm_dp_check_ether(c->ifname);
}

static int dp_attach(struct ucm_dp *dp)
{
	struct ucm_xdp_opts xo;
	uint32_t f = dp->c.flags;
	int err;

	/* What cannot work is refused before anything is touched. */
	err = ucm_dp_check_parts(&dp->c);
	if (err || (f & UCM_DP_F_OWN_XDP))
		return err;
	xdp_opts_of(&dp->c, &xo);
	/* The program first: it replaces a stale one of ours, whose XSK map
	 * would otherwise keep the queues busy. */
	dp->xdp = ucm_xdp__load(&xo);
	if (!dp->xdp)
		return -errno;
	/* Frames to another station's MAC stay the kernel's, from the first
	 * packet on (ucm_dp__check() follows a change of it). */
	ucm_dp_follow_mac(dp);
	return ucm_xdp__attach(dp->xdp, if_nametoindex(dp->c.ifname),
			       (f & UCM_DP_F_XDP_SKB ? UCM_XDP_ATTACH_SKB : 0) |
			       (f & UCM_DP_F_REPLACE ? UCM_XDP_ATTACH_REPLACE : 0));
}

static int dp_open_xsk(struct ucm_dp *dp)
{
	struct ucm_xsk_opts so;
	uint32_t q;
	int err;

	xsk_opts_of(&dp->c, &so);
	dp->xsk = ucm_xsk__open(&so);
	if (!dp->xsk)
		return -errno;
	dp->zerocopy = ucm_xsk__zerocopy(dp->xsk);
	err = ucm_dp_check_tx_frames(&dp->c, ucm_xsk_tx_frames(dp->xsk));
	if (err)
		return err;
	for (q = 0; q < dp->c.nqueues; q++) {
		struct dp_rx *rx = &dp->rx[q];

		rx->dp = dp;
		rx->q = ucm_xsk__queue(dp->xsk, q);
		rx->cpu = dp->c.n_rx_cpus ? dp->c.rx_cpus[q % dp->c.n_rx_cpus] : -1;
		ucm_xsk_queue__set_steer(rx->q, dp->c.steer_fn, dp->c.steer_ctx);
	}
	return 0;
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
		 .resolver_init_ctx = &dp->c, .owner = dp->c.tun_owner);

	/* Made by this start (a template names none there before), or one
	 * it brings up: its addresses are made as it comes up. */
	dp->tun_fresh = strchr(dp->c.tun, '%') || !if_nametoindex(dp->c.tun) ||
			tap_updown_is(dp->c.tun, false);
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

/*
 * IPv6 claimed, and off on the tun (its disable_ipv6, inherited from
 * net.ipv6.conf.default at its making, or no IPv6 there at all): the
 * kernel would drop each IPv6 packet written into it, and the writes
 * count it delivered. Our program then leaves IPv6 to the kernel on the
 * interface, said; IPv6 alone asked is refused. An application's own
 * program is its to change: said. Not known (an old kernel's answer): as
 * asked.
 */
static int tun_ipv6_check(struct ucm_dp *dp)
{
	uint32_t fam = dp->c.steer.flags & (UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6);
	int off = fam == UCM_STEER_F_IPV4 ? 0 : ucm_netdev_ipv6_off(dp->tun_ifindex);
	const char *t = dp->c.tun;
	char why[160], fix[200];

	if (off <= 0)
		return 0;
	if (off == UCM_NETDEV_IPV6_NONE) {
		snprintf(why, sizeof(why), "the tun %s has no IPv6 (an MTU below 1280, or a kernel without IPv6)", t);
		snprintf(fix, sizeof(fix), "give it an MTU of 1280 or more");
	} else {
		snprintf(why, sizeof(why), "IPv6 is off on the tun %s (net.ipv6.conf.%s.disable_ipv6 is 1)", t, t);
		snprintf(fix, sizeof(fix), "turn it on (sysctl -w net.ipv6.conf.%s.disable_ipv6=0, or net.ipv6.conf.default.disable_ipv6=0 before a tun is made)", t);
	}
	if (!dp->xdp) {
		pr_warn("dp: %s: the kernel drops what the application's XDP program steers of IPv6 into it; leave IPv6 to the kernel there, or %s\n",
			why, fix);
		return 0;
	}
	if (fam == UCM_STEER_F_IPV6) {
		pr_warn("dp: %s, and IPv6 alone is steered: the kernel would drop all of it; %s\n",
			why, fix);
		return -EINVAL;
	}
	pr_warn("dp: %s: IPv6 stays with the kernel on %s, IPv4 alone is steered; to steer IPv6, %s and start again\n",
		why, dp->c.ifname, fix);
	dp->c.steer.flags = (dp->c.steer.flags & ~UCM_STEER_F_IPV6) | UCM_STEER_F_IPV4;
	return ucm_xdp__configure(dp->xdp, &dp->c.steer);
}

/* A NIC that takes VLAN tags off in hardware (rx-vlan-hw-parse) keeps
 * them in its descriptor, which XDP does not see: a tap then gets tagged
 * frames without their tag. Said, not refused: untagged traffic is right
 * as it is, and a tun takes IP datagrams, tagged or not. veth's flag
 * says nothing of what its XDP sees. */
static void tap_vlan_hint(const struct dp_cfg *c)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ethtool_value ev = { .cmd = ETHTOOL_GFLAGS };
	struct ifreq ifr = { .ifr_data = (void *)&info };

	if (ucm_dp_if_ioctl(c->ifname, SIOCETHTOOL, &ifr) || !strcmp(info.driver, "veth"))
		return;
	ifr.ifr_data = (void *)&ev;
	if (ucm_dp_if_ioctl(c->ifname, SIOCETHTOOL, &ifr) || !(ev.data & ETH_FLAG_RXVLAN))
		return;
	pr_warn("dp: %s takes VLAN tags off in hardware (rx-vlan-hw-parse on), where XDP does not see them: tagged frames reach the tap without their tag; ethtool -K %s rxvlan off keeps them in the frame\n",
		c->ifname, c->ifname);
}

static int dp_open_cpumap(struct ucm_dp *dp)
{
	uint32_t f = dp->c.flags, q;
	struct ucm_cpumap_opts co;
	int err;

	cpumap_opts_of(&dp->c, &co);
	if (!dp->c.sink)
		co.sink_ctx = dp->tun;
	co.txqs = f & UCM_DP_F_VERDICT_TX ? dp->txq : NULL;

	if (co.flags & UCM_CPUMAP_F_LANES)
		pr_info("dp: lanes: each of the %u RX threads flushes into a ring of its own in each of the %u workers\n",
			dp->c.nqueues, dp->c.nworkers);
	else if (f & UCM_DP_F_LANES)
		pr_info("dp: lanes asked for, none made: %s\n",
			f & UCM_DP_F_INLINE ? "inline workers have no rings" :
			"one queue's worker rings are single-producer already");
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

/* ---- up and down ------------------------------------------------------- */

/* Each after what it takes: the program first (it replaces a stale one of
 * ours, whose XSK map would keep the queues busy), the sockets and their
 * UMEM, the tun, the channels (the UMEM's frames, the tun's reads), the
 * workers last (the sink, the channels). */
int ucm_dp_parts_open(struct ucm_dp *dp)
{
	uint32_t f = dp->c.flags;
	int err;

	err = dp_attach(dp);
	if (!err)
		err = dp_open_xsk(dp);
	if (!err && !dp->c.sink)
		err = dp_open_tun(dp);
	if (!err && !dp->c.sink)
		err = tun_ipv6_check(dp);
	if (!err && (f & UCM_DP_F_TAP) && !dp->c.sink)
		tap_vlan_hint(&dp->c);
	if (!err && (f & UCM_DP_F_TAP) && !dp->c.sink)
		err = tap_take_mac(dp);
	if (!err && dp_has_channels(f))
		err = channels_setup(dp);
	if (!err && (f & UCM_DP_F_TWO_WAY))
		err = back_setup(dp);
	if (!err)
		err = dp_open_cpumap(dp);
	return err;
}

/* 6. Sockets closed: every frame home (fill, RX, TX and completion rings
 * included), or the count of those missing. A close that found frames
 * still out (-EBUSY) can be tried again. */
int ucm_dp_close_xsk(struct ucm_dp *dp, unsigned int timeout_ms)
{
	int err = 0;

	if (dp->xsk) {
		err = ucm_xsk__destroy(dp->xsk, timeout_ms);
		if (!err) {
			dp->xsk = NULL;
			dp->zerocopy = false;	/* no sockets: no mode */
		}
	}
	pthread_mutex_lock(&dp->lock);
	dp->state = UCM_DP_S_STOPPED | (err ? 0 : UCM_DP_S_FRAMES_HOME);
	pthread_mutex_unlock(&dp->lock);
	return err;
}

/* Steps 4-6 of the stop: every part down, every frame home. */
int ucm_dp_parts_close(struct ucm_dp *dp, unsigned int timeout_ms)
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
	return ucm_dp_close_xsk(dp, timeout_ms);
}
