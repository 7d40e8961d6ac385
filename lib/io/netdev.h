/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a device's driver says it does for AF_XDP, asked of the kernel's
 * netdev family (generic netlink, Linux 6.3; its xsk-features, 6.8):
 * whether a zero-copy driver finishes the TX checksums that AF_XDP TX
 * metadata asks for, and how many descriptors a packet may take in
 * zero-copy (xdp-zc-max-segs, 6.6); and whether IPv6 is off on a device
 * (rtnetlink). Asked when the sockets or the tun open: no hot path.
 */
#ifndef UCM_IO_NETDEV_H
#define UCM_IO_NETDEV_H

#include <stdint.h>

struct nlmsghdr;

/* netdev's xsk-features bits (enum netdev_xsk_flags, <linux/netdev.h>) */
#define UCM_NETDEV_XSK_TX_TIMESTAMP	(1ull << 0)
#define UCM_NETDEV_XSK_TX_CHECKSUM	(1ull << 1)
/* netdev's xdp-features bit (enum netdev_xdp_act): the device takes
 * frames redirected to it (ndo_xdp_xmit); the kernel drops them
 * otherwise. On veth only while the peer has an XDP program or GRO. */
#define UCM_NETDEV_XDP_NDO_XMIT		(1ull << 2)

/* A device's record, as far as XDP and AF_XDP go. */
struct ucm_netdev_info {
	uint64_t xdp_features;	/* UCM_NETDEV_XDP_* (the family has it from
				 * its first version, Linux 6.3) */
	int xsk_err;		/* 0: xsk_features is the driver's; -EOPNOTSUPP:
				 * a kernel before 6.8 cannot say; -EPROTO */
	uint64_t xsk_features;	/* UCM_NETDEV_XSK_* */
	uint32_t zc_max_segs;	/* descriptors a packet may take in zero-copy
				 * (xdp-zc-max-segs, 1 without multi-buffer);
				 * 0: not said (before 6.6) */
};

/*
 * The record of the device @ifindex into @info. Return: 0, -EOPNOTSUPP
 * when the kernel has no netdev family (before Linux 6.3), or another
 * -errno (-ENODEV: no such device; -ETIMEDOUT: no answer within a
 * second).
 */
int ucm_netdev_info(int ifindex, struct ucm_netdev_info *info);

/* Why a device takes no IPv6: its disable_ipv6 setting, or none at all
 * (a kernel without IPv6; an MTU below 1280, which turns it off). */
#define UCM_NETDEV_IPV6_OFF	1
#define UCM_NETDEV_IPV6_NONE	2

/*
 * Whether IPv6 is off on the device @ifindex, asked of rtnetlink:
 * /proc/sys may be hidden (a unit's ProcSubset=pid). What is written into
 * a tun without it, the kernel drops. Return: UCM_NETDEV_IPV6_OFF or
 * _NONE, 0 when it takes IPv6, or -errno.
 */
int ucm_netdev_ipv6_off(int ifindex);

/* ---- for tests/unit/test-neigh.c: pure parsers over a reply ----------- */

/* A CTRL_CMD_GETFAMILY reply's family id. Return: 0, -EPROTO without one. */
int ucm_netdev_parse_family(const struct nlmsghdr *h, uint16_t *id);
/* A NETDEV_CMD_DEV_GET reply's xsk-features. Return: 0, -EOPNOTSUPP
 * without them (a kernel before 6.8), -EPROTO for a short attribute. */
int ucm_netdev_parse_xsk(const struct nlmsghdr *h, uint64_t *features);
/* Its xdp-features. Return: 0, -EPROTO without them or short. */
int ucm_netdev_parse_xdp(const struct nlmsghdr *h, uint64_t *features);
/* Its xdp-zc-max-segs. Return: 0, -EOPNOTSUPP without it (before 6.6),
 * -EPROTO for a short attribute. */
int ucm_netdev_parse_zc_segs(const struct nlmsghdr *h, uint32_t *segs);
/* An RTM_NEWLINK's IPv6 setting: UCM_NETDEV_IPV6_OFF or _NONE, 0 on,
 * -EPROTO. */
int ucm_netdev_parse_ipv6_off(const struct nlmsghdr *h);

#endif /* UCM_IO_NETDEV_H */
