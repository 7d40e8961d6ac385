// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Frame parser: the userspace cousin of the kernel's flow dissector, cut
 * down to what cpumap steering and the sinks need.
 *
 * Headers are read through byte loads and memcpy(), never through struct
 * casts: frames sit at any alignment in the UMEM, and a cast would be
 * undefined behaviour there. Every read is checked against the frame end
 * (Ethernet, VLAN, IP header) or the IP datagram end (extension and
 * transport headers; Ethernet padding is not payload), so the parser never
 * reads outside [data, data + len).
 */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>

#include "core/internal.h"
#include "ucpumap/pkt.h"
#include "proto/proto.h"
#include "ucpumap/flowhash.h"

#define VLAN_HLEN	4
#define IPV4_MIN_HLEN	20
#define IPV6_HLEN	40
#define UDP_HLEN	8
#define TCP_MIN_HLEN	20
#define ICMP_HLEN	8
#define ICMPV6_HLEN	4	/* type, code, checksum: the rest varies */

#define IPV4_MF		0x2000
#define IPV4_OFFSET	0x1fff
#define IPV6_FRAG_OFFSET 0xfff8
#define IPV6_FRAG_MF	0x0001

static const char *const drop_reason_names[] = {
	[UCM_DROP_NONE]		= "none",
	[UCM_DROP_RUNT]		= "runt",
	[UCM_DROP_VLAN_DEPTH]	= "vlan_depth",
	[UCM_DROP_NON_IP]	= "non_ip",
	[UCM_DROP_L3_TRUNC]	= "l3_trunc",
	[UCM_DROP_IP_VERSION]	= "ip_version",
	[UCM_DROP_IPV4_IHL]	= "ipv4_ihl",
	[UCM_DROP_IP_LEN]	= "ip_len",
	[UCM_DROP_IPV6_EXT]	= "ipv6_ext",
	[UCM_DROP_L4_TRUNC]	= "l4_trunc",
	[UCM_DROP_L4_HDR]	= "l4_hdr",
	[UCM_DROP_ENQUEUE_FULL]	= "enqueue_full",
	[UCM_DROP_SINK]		= "sink",
	[UCM_DROP_FRAME_BOUNDS]	= "frame_bounds",
	[UCM_DROP_OVERSIZE]	= "oversize",
	[UCM_DROP_VERDICT]	= "verdict",
	[UCM_DROP_CHAIN_TX]	= "chain_tx",
};

_Static_assert(ARRAY_SIZE(drop_reason_names) == UCM_DROP__MAX,
	       "every drop reason needs a name");

const char *ucm_drop_reason_str(enum ucm_drop_reason r)
{
	/* Unsigned compare: also catches negative values forced into r. */
	if ((unsigned int)r >= ARRAY_SIZE(drop_reason_names) ||
	    !drop_reason_names[r])
		return "unknown";
	return drop_reason_names[r];
}

/* Raw load keeps network order: that is what flowhash.h wants. */
static inline uint32_t ld_raw32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline bool eth_is_vlan(uint16_t proto)
{
	return proto == ETH_P_8021Q || proto == ETH_P_8021AD;
}

/*
 * Transport header at @off, datagram ending at @end (off <= end). Sets
 * l4_off always and L4/PORTS when the header is one we know and it fits.
 */
static enum ucm_drop_reason parse_l4(struct ucm_pkt *pkt, const uint8_t *p,
				     uint32_t off, uint32_t end, uint32_t rd)
{
	/* @rem for the lengths, @hrem for the header's bytes: only the
	 * first @rd bytes of a packet of several frames are at @p. */
	uint32_t lim = rd > off ? rd : off;
	uint32_t rem = end - off, hrem = min(end, lim) - off, hlen, ulen;

	pkt->l4_off = off;
	switch (pkt->l4_proto) {
	case IPPROTO_UDP:
		if (hrem < UDP_HLEN)
			return UCM_DROP_L4_TRUNC;
		ulen = ld_be16(p + off + 4);
		if (ulen < UDP_HLEN)
			return UCM_DROP_L4_HDR;
		/* A first fragment's UDP length counts the whole datagram. */
		if (ulen > rem && !(pkt->flags & UCM_PKT_F_FRAG_FIRST))
			return UCM_DROP_L4_HDR;
		hlen = UDP_HLEN;
		break;
	case IPPROTO_TCP:
		if (hrem < TCP_MIN_HLEN)
			return UCM_DROP_L4_TRUNC;
		hlen = (p[off + 12] >> 4) * 4;
		if (hlen < TCP_MIN_HLEN || hlen > rem)
			return UCM_DROP_L4_HDR;
		if (hlen > hrem)
			return UCM_DROP_L4_TRUNC;
		break;
	case IPPROTO_ICMP:
		if (hrem < ICMP_HLEN)
			return UCM_DROP_L4_TRUNC;
		hlen = ICMP_HLEN;
		break;
	case IPPROTO_ICMPV6:
		if (hrem < ICMPV6_HLEN)
			return UCM_DROP_L4_TRUNC;
		hlen = ICMPV6_HLEN;
		break;
	default:
		/* ESP, GRE, SCTP, ...: fine, we just don't look inside. */
		return UCM_DROP_NONE;
	}

	pkt->l4_hlen = hlen;
	pkt->flags |= UCM_PKT_F_L4;
	if (pkt->l4_proto == IPPROTO_UDP || pkt->l4_proto == IPPROTO_TCP) {
		pkt->sport = ld_be16(p + off);
		pkt->dport = ld_be16(p + off + 2);
		pkt->flags |= UCM_PKT_F_PORTS;
	}
	return UCM_DROP_NONE;
}

/* Ports for the hash: none for fragments, so they all hash alike. */
static inline void hash_ports(const struct ucm_pkt *pkt, uint16_t *sport_be,
			      uint16_t *dport_be)
{
	if ((pkt->flags & (UCM_PKT_F_PORTS | UCM_PKT_F_FRAG)) ==
	    UCM_PKT_F_PORTS) {
		*sport_be = htons(pkt->sport);
		*dport_be = htons(pkt->dport);
	} else {
		*sport_be = 0;
		*dport_be = 0;
	}
}

static enum ucm_drop_reason parse_ipv4(struct ucm_pkt *pkt, const uint8_t *p,
				       uint32_t rd)
{
	uint32_t off = pkt->l3_off, avail = pkt->len - off, hav = rd - off;
	uint32_t ihl, tot_len, saddr, daddr;
	uint16_t frag, sport, dport;
	enum ucm_drop_reason ret;

	if (hav < IPV4_MIN_HLEN)
		return UCM_DROP_L3_TRUNC;
	if (p[off] >> 4 != 4)
		return UCM_DROP_IP_VERSION;
	ihl = (p[off] & 0xf) * 4;
	if (ihl < IPV4_MIN_HLEN)
		return UCM_DROP_IPV4_IHL;
	if (ihl > hav)
		return UCM_DROP_L3_TRUNC;
	tot_len = ld_be16(p + off + 2);
	/* Shorter than the frame is fine: that is Ethernet padding. */
	if (tot_len < ihl || tot_len > avail)
		return UCM_DROP_IP_LEN;

	pkt->l3_len = tot_len;
	pkt->l4_proto = p[off + 9];
	pkt->flags = UCM_PKT_F_IPV4;
	if (ihl > IPV4_MIN_HLEN)
		pkt->flags |= UCM_PKT_F_IP_OPTS |
			      (ucm_ipv4_srcroute(p + off + IPV4_MIN_HLEN, ihl - IPV4_MIN_HLEN) ?
			       UCM_PKT_F_SRCROUTE : 0);

	frag = ld_be16(p + off + 6);
	if (frag & (IPV4_MF | IPV4_OFFSET)) {
		pkt->flags |= UCM_PKT_F_FRAG;
		if (!(frag & IPV4_OFFSET))
			pkt->flags |= UCM_PKT_F_FRAG_FIRST;
	}

	if (frag & IPV4_OFFSET) {
		/* Later fragments carry payload bytes, not a header. */
		pkt->l4_off = off + ihl;
	} else {
		ret = parse_l4(pkt, p, off + ihl, off + tot_len, rd);
		if (ret)
			return ret;
	}

	saddr = ld_raw32(p + off + 12);
	daddr = ld_raw32(p + off + 16);
	hash_ports(pkt, &sport, &dport);
	pkt->hash = ucm_flow_hash_v4(saddr, daddr, sport, dport,
				     pkt->l4_proto, 0);
	pkt->hash_sym = ucm_flow_hash_v4(saddr, daddr, sport, dport,
					 pkt->l4_proto, 1);
	return UCM_DROP_NONE;
}

static inline bool ipv6_is_ext(uint8_t nh)
{
	switch (nh) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_DSTOPTS:
	case IPPROTO_AH:
	case IPPROTO_FRAGMENT:
		return true;
	default:
		return false;
	}
}

static enum ucm_drop_reason parse_ipv6(struct ucm_pkt *pkt, const uint8_t *p,
				       uint32_t rd)
{
	uint32_t off = pkt->l3_off, avail = pkt->len - off;
	uint32_t saddr[4], daddr[4], l3_len, end, hend, cur, hlen;
	uint16_t fo, sport, dport;
	bool later_frag = false;
	uint8_t nh, hash_proto;
	enum ucm_drop_reason ret;
	int i;

	if (rd - off < IPV6_HLEN)
		return UCM_DROP_L3_TRUNC;
	if (p[off] >> 4 != 6)
		return UCM_DROP_IP_VERSION;
	/* Sum in 32 bits: 40 + 65535 would wrap l3_len before the check. */
	l3_len = IPV6_HLEN + ld_be16(p + off + 4);
	if (l3_len > avail)
		return UCM_DROP_IP_LEN;
	pkt->l3_len = l3_len;
	pkt->flags = UCM_PKT_F_IPV6;

	end = off + l3_len;
	hend = min(end, rd);	/* the end of what can be read */
	cur = off + IPV6_HLEN;
	nh = p[off + 6];
	hash_proto = 0;

	for (i = 0; i < UCM_IPV6_EXT_MAX_CHAIN && ipv6_is_ext(nh); i++) {
		/* Every extension header is at least 8 bytes long. */
		if (end - cur < 8)
			return UCM_DROP_IPV6_EXT;
		if (hend < cur + 8)
			return UCM_DROP_L3_TRUNC;
		switch (nh) {
		case IPPROTO_FRAGMENT:
			hlen = 8;
			fo = ld_be16(p + cur + 2);
			if (!(fo & (IPV6_FRAG_OFFSET | IPV6_FRAG_MF)))
				break;	/* atomic fragment: a whole datagram */
			/*
			 * The fragment header's next header is the same in
			 * every fragment, unlike whatever the first one
			 * shows past it: hash on that, the first such
			 * header's (the XDP program stops at it).
			 */
			if (!(pkt->flags & UCM_PKT_F_FRAG))
				hash_proto = p[cur];
			pkt->flags |= UCM_PKT_F_FRAG;
			if (fo & IPV6_FRAG_OFFSET) {
				pkt->flags &= ~UCM_PKT_F_FRAG_FIRST;
				later_frag = true;
			} else {
				pkt->flags |= UCM_PKT_F_FRAG_FIRST;
			}
			break;
		case IPPROTO_AH:
			hlen = (p[cur + 1] + 2) * 4;
			break;
		default:
			hlen = (p[cur + 1] + 1) * 8;
			/* segments left: not yet at its final destination */
			if (nh == IPPROTO_ROUTING && p[cur + 3])
				pkt->flags |= UCM_PKT_F_SRCROUTE;
			break;
		}
		if (hlen > end - cur)
			return UCM_DROP_IPV6_EXT;
		pkt->flags |= UCM_PKT_F_IPV6_EXT;
		nh = p[cur];
		cur += hlen;
		if (later_frag)
			break;
	}

	pkt->l4_proto = nh;
	if (later_frag) {
		pkt->l4_off = cur;
	} else {
		if (ipv6_is_ext(nh))
			return UCM_DROP_IPV6_EXT;
		/* ESP and no-next-header end up in parse_l4()'s default. */
		ret = parse_l4(pkt, p, cur, end, rd);
		if (ret)
			return ret;
	}
	if (!(pkt->flags & UCM_PKT_F_FRAG))
		hash_proto = pkt->l4_proto;

	memcpy(saddr, p + off + 8, sizeof(saddr));
	memcpy(daddr, p + off + 24, sizeof(daddr));
	hash_ports(pkt, &sport, &dport);
	pkt->hash = ucm_flow_hash_v6(saddr, daddr, sport, dport, hash_proto, 0);
	pkt->hash_sym = ucm_flow_hash_v6(saddr, daddr, sport, dport,
					 hash_proto, 1);
	return UCM_DROP_NONE;
}

/* The parse, of @len bytes of which the first @rd are at @data. Inlined
 * into both entries: the one-frame parse is every packet's. */
static __attribute__((always_inline)) inline enum ucm_drop_reason
pkt_parse(struct ucm_pkt *pkt, const void *data, uint32_t rd, uint32_t len)
{
	const uint8_t *p = data;
	uint32_t off = ETH_HLEN;
	uint16_t proto;
	int i;

	if (unlikely(len > UINT16_MAX))
		return UCM_DROP_OVERSIZE;
	memset(pkt, 0, sizeof(*pkt));
	pkt->len = len;
	if (unlikely(len < ETH_HLEN))
		return UCM_DROP_RUNT;
	if (unlikely(rd > len))
		rd = len;
	if (unlikely(rd < ETH_HLEN))
		return UCM_DROP_L3_TRUNC;

	proto = ld_be16(p + 12);
	for (i = 0; i < UCM_VLAN_MAX_DEPTH && eth_is_vlan(proto); i++) {
		if (len - off < VLAN_HLEN)
			return UCM_DROP_RUNT;
		if (rd - off < VLAN_HLEN)
			return UCM_DROP_L3_TRUNC;
		pkt->vlan_tci[i] = ld_be16(p + off);
		proto = ld_be16(p + off + 2);
		off += VLAN_HLEN;
	}
	if (eth_is_vlan(proto))
		return UCM_DROP_VLAN_DEPTH;
	pkt->nvlan = i;
	pkt->eth_proto = proto;
	pkt->l3_off = off;

	switch (proto) {
	case ETH_P_IP:
		return parse_ipv4(pkt, p, rd);
	case ETH_P_IPV6:
		return parse_ipv6(pkt, p, rd);
	default:
		/* ARP, LLDP, 802.3 length field, ...: not ours to judge. */
		return UCM_DROP_NONE;
	}
}

enum ucm_drop_reason ucm_pkt__parse(struct ucm_pkt *pkt, const void *data,
				    uint32_t len)
{
	return pkt_parse(pkt, data, len, len);
}

enum ucm_drop_reason ucm_pkt_parse_head(struct ucm_pkt *pkt, const void *data,
					uint32_t rd, uint32_t len)
{
	enum ucm_drop_reason r = pkt_parse(pkt, data, rd, len);

	if (rd < len)
		pkt->flags |= UCM_PKT_F_PARTIAL;
	return r;
}
