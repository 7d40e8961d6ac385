// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's options that exclude or need each other, and values a
 * setting elsewhere makes wrong: each refusal names its fix (exit 2).
 * The checks that need the workers' count or the library stay in
 * check_args().
 */
#include <stdio.h>
#include <string.h>

#include "ucpumap/dp.h"
#include "ucpumap/steer.h"
#include "daemon.h"
#include "util.h"

/* IPv6's minimum link MTU (RFC 8200): below it the kernel turns IPv6 off
 * on the tun and drops what is written into it, after us. */
#define IPV6_MIN_MTU	1280

/* Return: 0, or -1 after a message. */
int args_exclusive(struct cfg *c)
{
	unsigned long mtu, if_mtu;

	/* First: --check runs the datapath's checks on these options even
	 * after a refusal here, and a --peer-mac means two-way there too. */
	c->two_way |= c->peer_mac_set;
	if (c->copy && c->zero_copy) {
		fprintf(stderr, "ucpumapd: --copy and --zero-copy exclude each other\n");
		return -1;
	}
	if (c->peer_mac_set && c->tap) {
		fprintf(stderr, "ucpumapd: --peer-mac is for a tun: a tap's frames carry their own Ethernet header; use --two-way\n");
		return -1;
	}
	if (c->no_offload && !c->two_way) {
		fprintf(stderr, "ucpumapd: --no-offload is about the way back: add --two-way, or drop --no-offload\n");
		return -1;
	}
	if (c->no_tx_csum && !c->two_way) {
		fprintf(stderr, "ucpumapd: --no-tx-csum is about the way back's offloads: add --two-way, or drop --no-tx-csum\n");
		return -1;
	}
	if (c->no_tx_csum && c->no_offload) {
		fprintf(stderr, "ucpumapd: --no-tx-csum and --no-offload: --no-offload computes every checksum already; drop one of them\n");
		return -1;
	}
	if (c->no_hold && !c->no_coalesce) {
		/* Merging needs the hold: the library holds all the same. */
		fprintf(stderr, "ucpumapd: --no-hold: coalescing holds up to 64 packets to merge them; add --no-coalesce, or drop --no-hold\n");
		return -1;
	}
	if (c->keep_tun && c->tun && strchr(c->tun, '%')) {
		fprintf(stderr, "ucpumapd: --keep-tun needs a fixed --tun name: with %s the kernel picks a new name at each start, and each kept tun would stay behind; give a name without %%\n",
			c->tun);
		return -1;
	}
	/* Two-way, the tun's MTU is at most IFACE's: taken where not given,
	 * and a larger one given is refused (check_tun_mtu()). */
	if_mtu = c->two_way ? iface_mtu(c->dev) : 0;
	mtu = c->mtu ? c->mtu : if_mtu;
	if (mtu && mtu < IPV6_MIN_MTU && c->filter != UCM_STEER_F_IPV4) {
		if (if_mtu && if_mtu < IPV6_MIN_MTU)
			fprintf(stderr, "ucpumapd: --two-way: the tun's MTU is at most %s's, %lu: below %d the kernel turns IPv6 off on the tun and drops each IPv6 packet written into it; raise %s's (ip link set dev %s mtu %d), or give --filter ipv4\n",
				c->dev, if_mtu, IPV6_MIN_MTU, c->dev, c->dev, IPV6_MIN_MTU);
		else
			fprintf(stderr, "ucpumapd: --mtu %lu: below %d the kernel turns IPv6 off on the tun and drops each IPv6 packet written into it; give --mtu %d or more, or --filter ipv4\n",
				mtu, IPV6_MIN_MTU, IPV6_MIN_MTU);
		return -1;
	}
	if (c->two_way && c->pass) {
		fprintf(stderr, "ucpumapd: --pass has no workers to read the tun: drop --pass, or --two-way and --peer-mac\n");
		return -1;
	}
	if (c->prewake == UCM_DP_PREWAKE_ON && c->pass) {
		fprintf(stderr, "ucpumapd: --prewake on: --pass has no workers; give --prewake auto or off\n");
		return -1;
	}
	if (c->poll && c->spin_set && !c->spin_us) {
		fprintf(stderr, "ucpumapd: --poll with --spin-us 0 would never poll: give --spin-us "
			"above 0, or leave --poll out\n");
		return -1;
	}
	/* Each is one policy's: with another, it would be ignored. */
	if ((c->steer_flags & UCM_STEER_F_SYMMETRIC) && c->policy != UCM_STEER_L4_HASH) {
		fprintf(stderr, "ucpumapd: --symmetric is l4-hash's: drop it, or give --steer l4-hash\n");
		return -1;
	}
	if (c->fixed_set && c->policy != UCM_STEER_FIXED) {
		fprintf(stderr, "ucpumapd: --fixed-worker is the worker of --steer fixed: add --steer fixed, or drop it\n");
		return -1;
	}
	return 0;
}
