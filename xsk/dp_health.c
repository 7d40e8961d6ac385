// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_dp's faults at run time, and its links' states: ucm_dp__check() and
 * ucm_dp__err(), on the control thread (dp_internal.h). A fault is named
 * once, in the order of its causes; a link's change once per change.
 */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>

#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "dp_internal.h"
#include "engine/cpumap_internal.h"
#include "port_internal.h"

int ucm_dp__err(const struct ucm_dp *dp, uint32_t *queue)
{
	uint32_t q;
	int err;

	if (!dp)
		return ucm_err(-EINVAL);
	for (q = 0; q < dp->c.nqueues; q++) {
		err = atomic_load_explicit(&dp->rx[q].err, memory_order_acquire); /* R2' */
		if (err) {
			if (queue)
				*queue = dp->c.queues[q];
			return ucm_err(err);
		}
	}
	return 0;
}

static const char *const fault_names[UCM_DP_FAULT__MAX] = {
	[UCM_DP_FAULT_NONE] = "none",
	[UCM_DP_FAULT_IFACE_GONE] = "interface gone",
	[UCM_DP_FAULT_TUN_GONE] = "tun gone",
	[UCM_DP_FAULT_XSK] = "socket error",
	[UCM_DP_FAULT_RX_THREAD] = "RX thread failed",
	[UCM_DP_FAULT_BACK] = "way back failed",
	[UCM_DP_FAULT_WORKER_STALLED] = "worker stalled",
	[UCM_DP_FAULT_RX_STALLED] = "RX thread stalled",
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
	err = ucm_dp_if_ioctl(name, SIOCGIFFLAGS, &ifr);
	if (err)	/* renamed meanwhile, or gone: the index says which */
		return !if_indextoname(ifindex, name) && errno == ENXIO ? -ENODEV : 1;
	flags = ifr.ifr_flags;
	if (!(flags & IFF_UP) || !carrier)
		return !!(flags & IFF_UP);
	/* The carrier as the driver has it now: IFF_RUNNING is the operstate,
	 * which the kernel's linkwatch updates up to a second late. */
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_data = (void *)&ev;
	if (!ucm_dp_if_ioctl(name, SIOCETHTOOL, &ifr))
		return !!ev.data;
	return !!(flags & IFF_RUNNING);
}

static void fault_set(struct ucm_dp *dp, uint32_t fault, int err, uint32_t where)
{
	dp->health.fault = fault;
	dp->health.err = err;
	dp->health.where = where;
}

/* How long (ns) a ring's consumer index @taken has stood still while
 * entries waited (@waiting), by @s's last looks; 0 while it moves or
 * nothing waits. */
static uint64_t watch_still(struct dp_watch *s, uint32_t taken, bool waiting, uint64_t now)
{
	if (!waiting || taken != s->taken || !s->since) {
		s->taken = taken;
		s->since = waiting ? now : 0;
		return 0;
	}
	return now - s->since;
}

/* A thread that takes nothing from its ring while packets wait there: it
 * is stuck (a sink that never returns, a lost wake-up); its ring is full
 * and what comes for it is dropped. The RX threads first: a worker whose
 * RX thread stopped mid-batch waits for a kick that does not come, and is
 * not the one to name while any RX ring stands still too. */
static void find_stall(struct ucm_dp *dp)
{
	const uint64_t stall = UCM_DP_STALL_MS * 1000000ull;
	uint64_t now = ucm_now_ns(), still, rx_still = 0;
	uint32_t w, q, taken;
	bool waiting;

	/* Looks half the limit apart or more (the process stopped, frozen,
	 * or the caller very late): what stood still then may not have had
	 * a chance to run; the watch starts again. A caller that looks once
	 * a second (ucm_dp(3)'s example) still sees a stall; a pause under
	 * half the limit alone cannot make one. */
	if (now - dp->watch_at >= stall / 2) {
		memset(dp->watch_w, 0, sizeof(dp->watch_w));
		memset(dp->watch_q, 0, sizeof(dp->watch_q));
	}
	dp->watch_at = now;

	for (q = 0; q < dp->c.nqueues; q++) {
		if (!dp->rx[q].q)
			continue;
		taken = ucm_xsk_queue_rx_look(dp->rx[q].q, &waiting);
		still = watch_still(&dp->watch_q[q], taken, waiting, now);
		rx_still = still > rx_still ? still : rx_still;
		if (still < stall)
			continue;
		fault_set(dp, UCM_DP_FAULT_RX_STALLED, -ETIMEDOUT, dp->c.queues[q]);
		pr_warn("dp: %s queue %u: its RX thread has taken nothing from the RX ring for %u s with packets waiting: it is stuck%s; the kernel drops what comes\n",
			dp->c.ifname, dp->c.queues[q], UCM_DP_STALL_MS / 1000,
			dp->c.flags & UCM_DP_F_INLINE ? " (inline: in its sink, or asleep)" : "");
		return;
	}
	for (w = 0; dp->map && w < dp->c.nworkers; w++) {
		if (ucm_cpumap_worker_look(dp->map, w, &taken, &waiting))
			continue;
		still = watch_still(&dp->watch_w[w], taken, waiting, now);
		/* An RX ring standing still a tenth as long: that thread first. */
		if (still < stall || rx_still >= stall / 10)
			continue;
		fault_set(dp, UCM_DP_FAULT_WORKER_STALLED, -ETIMEDOUT, w);
		pr_warn("dp: worker %u has taken nothing from its ring for %u s with packets waiting: it is stuck (in its sink, or asleep); what comes for it is dropped\n",
			w, UCM_DP_STALL_MS / 1000);
		return;
	}
}

/* The first fault, in the order of causes: a device gone makes its
 * sockets and threads fail too, and is the one to name. */
static void find_fault(struct ucm_dp *dp, int iface, int tun)
{
	struct ucm_tun_back_stats rs;
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
		if (ucm_dp_read_back(dp, w, &rs) || !rs.stopped)
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
	find_stall(dp);
}

/* A link that flaps (a failing optic, a peer that toggles its end of a
 * veth) is said a few times a minute, then counted: the journal keeps the
 * faults, not thousands of link lines a day. */
#define LINKS_SAY_MAX	4
#define LINKS_WIN_NS	60000000000ull

/* The minute's changes left unsaid, and the links as they are now (@now). */
static void links_hushed_say(struct ucm_dp *dp, uint32_t now)
{
	pr_info("dp: %u more link changes in the last minute, not said one by one: %s is %s%s%s%s\n",
		dp->links_hushed, dp->c.ifname, now & UCM_DP_LINK_IFACE_UP ? "up" : "down",
		dp->tun_ifindex ? ", the tun " : "", dp->tun_ifindex ? dp->c.tun : "",
		!dp->tun_ifindex ? "" : now & UCM_DP_LINK_TUN_UP ? " up" : " down");
}

void ucm_dp_links_flush(struct ucm_dp *dp)
{
	if (dp->links_hushed)
		links_hushed_say(dp, dp->links);
	dp->links_hushed = 0;
}

/* A link's change, said once per change, when two looks in a row agree:
 * a carrier settles through a few states (the kernel's linkwatch). */
static void links_say(struct ucm_dp *dp, uint32_t now)
{
	uint32_t was = dp->links_seen ? dp->links : UCM_DP_LINK_IFACE_UP |
			(dp->tun_ifindex ? UCM_DP_LINK_TUN_UP : 0);
	uint32_t ch = now ^ was;
	uint64_t t = ucm_now_ns();

	if (t - dp->links_win >= LINKS_WIN_NS) {
		if (dp->links_hushed)
			links_hushed_say(dp, now);
		dp->links_win = t;
		dp->links_nsaid = dp->links_hushed = 0;
	}
	if (now != dp->links_last) {
		dp->links_last = now;
		return;
	}
	if (ch && dp->links_nsaid >= LINKS_SAY_MAX) {
		dp->links_hushed++;
		ch = 0;
	} else if (ch && ++dp->links_nsaid == LINKS_SAY_MAX) {
		pr_warn("dp: %s's links change often: this minute's later changes are said together at its end\n",
			dp->c.ifname);
	}

	if (ch & UCM_DP_LINK_IFACE_UP) {
		if (now & UCM_DP_LINK_IFACE_UP)
			pr_info("dp: %s is up again\n", dp->c.ifname);
		else
			pr_warn("dp: %s is down or has no carrier: nothing comes in until it is up again\n",
				dp->c.ifname);
	}
	if (ch & UCM_DP_LINK_TUN_UP) {
		if (now & UCM_DP_LINK_TUN_UP)
			pr_info("dp: the tun %s is up again\n", dp->c.tun);
		else
			pr_warn("dp: the tun %s is down: what the workers write to it is dropped (tun eio) until it is up again\n",
				dp->c.tun);
	}
	dp->links = now;
	dp->links_seen = true;
}

/* The interface's MTU changed under the running datapath: said once per
 * change. The set-up sized the frames, the chains and the tun for the old
 * one, and two-way what the kernel routes into the tun past the new one
 * cannot leave by it (the way back would count it sent). */
static void mtu_say(struct ucm_dp *dp)
{
	uint32_t was = dp->if_mtu_said ? dp->if_mtu_said : dp->c.if_mtu, mtu, start;
	char name[IF_NAMESIZE];
	struct ifreq ifr = {};

	/* By its index: renamed, it is still ours. */
	if (!dp->c.if_mtu || !if_indextoname(dp->ifindex, name) ||
	    ucm_dp_if_ioctl(name, SIOCGIFMTU, &ifr) || ifr.ifr_mtu <= 0 ||
	    (uint32_t)ifr.ifr_mtu == was)
		return;
	mtu = ifr.ifr_mtu;
	dp->if_mtu_said = mtu;
	start = ucm_dp_mtu_frames(&dp->c, dp->c.if_mtu);
	if (mtu == dp->c.if_mtu)
		pr_info("dp: %s's MTU is back to %u, the start's\n", dp->c.ifname, mtu);
	else if ((dp->c.flags & UCM_DP_F_TWO_WAY) && !dp->c.sink && mtu < dp->c.mtu)
		pr_warn("dp: %s's MTU is now %u, below the tun %s's %u: what the kernel routes into the tun past %u bytes cannot leave by %s; lower the tun's (ip link set dev %s mtu %u), or restart: that sizes it anew\n",
			dp->c.ifname, mtu, dp->c.tun, dp->c.mtu, mtu, dp->c.ifname, dp->c.tun, mtu);
	else if (ucm_dp_mtu_fits(&dp->c, mtu))
		pr_info("dp: %s's MTU is now %u (%u at the start): its packets take no more frames than the start sized for\n",
			dp->c.ifname, mtu, dp->c.if_mtu);
	else if (ucm_dp_mtu_chains(&dp->c, mtu))
		pr_warn("dp: %s's MTU is now %u (%u at the start): its packets take up to %u frames, %u at the start; they come through, but the frames were counted for %u a packet and may run short under load until a restart sizes them anew\n",
			dp->c.ifname, mtu, dp->c.if_mtu, ucm_dp_mtu_frames(&dp->c, mtu), start,
			start);
	else if (dp->c.sg)
		pr_warn("dp: %s's MTU is now %u (%u at the start): a packet of more than %u frames (max_frags) or 65535 bytes is dropped, counted as rx_chain_long, until a restart sizes them anew\n",
			dp->c.ifname, mtu, dp->c.if_mtu, dp->c.max_frags);
	else
		pr_warn("dp: %s's MTU is now %u (%u at the start, which the frames%s were sized for): its longer packets are dropped until a restart sizes them anew\n",
			dp->c.ifname, mtu, dp->c.if_mtu, dp->c.sink ? "" : " and the tun");
}

/* One way over a tap: the interface's MAC changed, the tap's not (that
 * takes CAP_NET_ADMIN, which the run has not): said, once a change. */
static void tap_iface_mac(struct ucm_dp *dp)
{
	char name[IF_NAMESIZE];
	struct ifreq ifr = {};
	const uint8_t *m = (const uint8_t *)ifr.ifr_hwaddr.sa_data, *t = dp->if_mac;

	if (!if_indextoname(dp->ifindex, name) || ucm_dp_if_ioctl(name, SIOCGIFHWADDR, &ifr) ||
	    !memcmp(m, dp->if_mac, 6))
		return;
	pr_warn("dp: %s's MAC is now %02x:%02x:%02x:%02x:%02x:%02x; the tap %s keeps %02x:%02x:%02x:%02x:%02x:%02x, which frames are steered by: those to the new one go to the kernel on %s, past the tap, until a restart gives it the new one\n",
		name, m[0], m[1], m[2], m[3], m[4], m[5], ucm_tun__name(dp->tun), t[0], t[1], t[2],
		t[3], t[4], t[5], name);
	memcpy(dp->if_mac, m, 6);
}

void ucm_dp_follow_mac(struct ucm_dp *dp)
{
	uint32_t both = UCM_DP_F_TWO_WAY | UCM_DP_F_TAP;
	char name[IF_NAMESIZE];
	struct ifreq ifr = {};
	const uint8_t *mac = (const uint8_t *)ifr.ifr_hwaddr.sa_data;
	const char *dev = name;
	char text[18];
	bool back;
	int err;

	/* Two-way over a tun: the way back's frames leave from the
	 * interface's address, which a spoof check (a VF's) holds them to. */
	back = (dp->c.flags & both) == UCM_DP_F_TWO_WAY && dp->tun && dp->back_mac_set;
	if (!dp->xdp && !back)
		return;
	/* A tap took the interface's address at the set-up: the frames it
	 * takes are those to its own (two-way, the peers send to it), which
	 * an operator's change of the interface's does not move. Else the
	 * interface's, by its index: renamed, it is still ours. */
	if ((dp->c.flags & both) == UCM_DP_F_TAP && dp->tun)
		tap_iface_mac(dp);
	if ((dp->c.flags & UCM_DP_F_TAP) && dp->tun)
		dev = ucm_tun__name(dp->tun);
	else if (!if_indextoname(dp->ifindex, name))
		return;
	/* Not an Ethernet device (no MAC to tell stations by): every frame
	 * steered. */
	if (ucm_dp_if_ioctl(dev, SIOCGIFHWADDR, &ifr) || ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
		return;
	snprintf(text, sizeof(text), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
	if (back && memcmp(dp->back_mac, mac, 6) && !ucm_tun__set_back_src(dp->tun, mac)) {
		pr_info("dp: %s's MAC is now %s: the way back's frames leave from it\n", dev, text);
		memcpy(dp->back_mac, mac, 6);
	}
	/* A value tried and refused is not tried again. */
	if (!dp->xdp || ((dp->mac_set || dp->mac_refused) && !memcmp(dp->mac, mac, 6)))
		return;
	/* Back to the one the program holds (a change to another refused). */
	if (dp->mac_set && !memcmp(dp->prog_mac, mac, 6)) {
		pr_info("dp: %s's MAC is back to %s, the XDP program's: frames to it are steered again\n",
			dev, text);
		memcpy(dp->mac, mac, 6);
		dp->mac_refused = false;
		return;
	}
	err = ucm_xdp_set_mac(dp->xdp, mac);
	if (err && !dp->mac_set)
		pr_warn("dp: cannot give the XDP program %s's MAC (%s): every frame is steered, those to other stations too\n",
			dev, strerror(-err));
	else if (err)
		pr_warn("dp: %s's MAC is now %s, which the XDP program cannot be told (%s; before Linux 5.19 a map update needs CAP_BPF where kernel.unprivileged_bpf_disabled is set): frames to it go to the kernel, not forwarded, until a restart\n",
			dev, text, strerror(-err));
	else if (dp->mac_set)
		pr_info("dp: %s's MAC is now %s: frames to it are steered, to the old one the kernel's\n",
			dev, text);
	memcpy(dp->mac, mac, 6);
	if (!err)
		memcpy(dp->prog_mac, mac, 6);
	dp->mac_refused = err != 0;
	dp->mac_set |= !err;
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
		if (iface > 0) {
			mtu_say(dp);
			ucm_dp_follow_mac(dp);
		}
	}
	dp->health.links = links;
	ucm_stats_out(h, sz, &dp->health, sizeof(dp->health));
	return dp->health.fault ? 1 : 0;
}
