/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frame parser and packet descriptor. ucm_pkt__parse() walks Ethernet,
 * up to two VLAN tags, IPv4 or IPv6 (with extension headers) and the
 * UDP/TCP/ICMP header, checks every length it crosses, and fills a small
 * descriptor that the rest of the pipeline reads instead of the headers.
 * Malformed frames come back with the reason they would be dropped for.
 */
#ifndef UCPUMAP_PKT_H
#define UCPUMAP_PKT_H

#include <stdint.h>

#include "ucpumap/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UCM_VLAN_MAX_DEPTH	2	/* 802.1ad + 802.1Q (QinQ) */
#define UCM_IPV6_EXT_MAX_CHAIN	6	/* like xdp-tools' parsing_helpers.h */

enum ucm_drop_reason {
	UCM_DROP_NONE = 0,
	UCM_DROP_RUNT,		/* shorter than an Ethernet header or a VLAN tag */
	UCM_DROP_VLAN_DEPTH,	/* more VLAN tags than UCM_VLAN_MAX_DEPTH */
	UCM_DROP_NON_IP,	/* not IPv4/IPv6: the parser never returns it, nor does
				 * the tun (its refusals are sink drops, and its own
				 * non_ip count); a sink of one's own may count it */
	UCM_DROP_L3_TRUNC,	/* IP header cut short by the end of the frame */
	UCM_DROP_IP_VERSION,	/* version field disagrees with the EtherType */
	UCM_DROP_IPV4_IHL,	/* IHL < 5 */
	UCM_DROP_IP_LEN,	/* IP length field shorter than the header or longer than the frame */
	UCM_DROP_IPV6_EXT,	/* extension-header chain past the limit or cut short */
	UCM_DROP_L4_TRUNC,	/* UDP/TCP/ICMP header cut short */
	UCM_DROP_L4_HDR,	/* UDP length or TCP data offset inconsistent */
	/* reasons owned by other modules; keep the slots, parser never returns them */
	UCM_DROP_ENQUEUE_FULL,	/* cpumap worker ring full */
	UCM_DROP_SINK,		/* the sink (tun) refused the packet */
	UCM_DROP_FRAME_BOUNDS,	/* cpumap: data_off/len outside the UMEM frame */
	/* parser, added after the others so that their values stay put */
	UCM_DROP_OVERSIZE,	/* frame longer than UINT16_MAX: offsets would not fit */
	UCM_DROP_VERDICT,	/* the application's verdict (cpumap.h: ucm_verdict_fn) */
	UCM_DROP_CHAIN_TX,	/* a packet of several frames the verdict sent out: the way out takes fewer */
	UCM_DROP__MAX,
};

/* Counts by reason are arrays this long, whatever UCM_DROP__MAX is: a new
 * reason changes no struct's size (the ABI). */
#define UCM_DROP_REASONS_MAX	32
#ifndef __cplusplus
_Static_assert(UCM_DROP__MAX <= UCM_DROP_REASONS_MAX, "room for every drop reason");
#endif

/**
 * ucm_drop_reason_str() - short name of a drop reason
 * @r: the reason
 *
 * Return: a static snake_case string ("none", "runt", "vlan_depth", ...),
 * or "unknown" for a value out of range.
 */
UCM_API const char *ucm_drop_reason_str(enum ucm_drop_reason r);

/*
 * Packet descriptor: our sk_buff. Built in the frame headroom, never
 * allocated. Offsets are relative to the start of the packet data (the
 * Ethernet header). Multi-byte fields are host order unless the name says
 * _be. After a successful parse every offset lies within [0, len].
 */
struct ucm_pkt {
	uint16_t len;		/* bytes of packet data (frame length) */
	uint16_t l3_off;	/* network header (IP or not): after Ethernet and VLAN tags */
	/* transport header; valid when UCM_PKT_F_L4. Other IP packets (ESP,
	 * later fragments, ...) get where the IP payload proper starts. */
	uint16_t l4_off;
	/* IP datagram length from its header (IPv4 tot_len; IPv6 40 +
	 * payload_len): trailing Ethernet padding excluded; 0 if not IP */
	uint16_t l3_len;
	uint16_t eth_proto;	/* innermost EtherType (or 802.3 length field) */
	uint16_t flags;		/* UCM_PKT_F_* */
	uint16_t vlan_tci[UCM_VLAN_MAX_DEPTH];	/* outermost first */
	uint8_t nvlan;
	uint8_t l4_proto;	/* IPPROTO_* of the transport header (after IPv6 ext headers); 0 if not IP */
	uint16_t sport, dport;	/* host order; valid when UCM_PKT_F_PORTS */
	uint16_t l4_hlen;	/* transport header length; valid when UCM_PKT_F_L4 */
	uint32_t hash;		/* flow hash (non-symmetric), 0 if not IP */
	uint32_t hash_sym;	/* symmetric flow hash, 0 if not IP */
	/* room for later: csum state, vnet header fields */
};

#ifndef __cplusplus
_Static_assert(sizeof(struct ucm_pkt) <= 64,
	       "struct ucm_pkt must fit in one cache line");
#endif

#define UCM_PKT_F_IPV4		(1U << 0)
#define UCM_PKT_F_IPV6		(1U << 1)
#define UCM_PKT_F_FRAG		(1U << 2)	/* IP fragment (any) */
#define UCM_PKT_F_FRAG_FIRST	(1U << 3)	/* offset 0 fragment (has L4 header) */
/* l4_off valid and the L4 header (UDP 8, TCP doff*4, ICMP 8, ICMPv6 4) fits */
#define UCM_PKT_F_L4		(1U << 4)
#define UCM_PKT_F_PORTS		(1U << 5)	/* sport/dport valid (UDP or TCP, not a non-first fragment) */
#define UCM_PKT_F_IP_OPTS	(1U << 6)	/* IPv4 with options */
#define UCM_PKT_F_IPV6_EXT	(1U << 7)	/* IPv6 with at least one extension header */
/* Only the first part of the packet lies at its data (the first of its
 * frames, UCM_FRAME_F_CHAIN): its headers are there, its payload is not */
#define UCM_PKT_F_PARTIAL	(1U << 8)
/* A source route: an IPv4 LSRR or SSRR option, or an IPv6 routing header
 * with segments left. Its sender's TCP or UDP checksum covers the final
 * destination, not the header's */
#define UCM_PKT_F_SRCROUTE	(1U << 9)

/**
 * ucm_pkt__parse() - parse a frame and fill its descriptor
 * @pkt: descriptor to fill
 * @data: the frame, starting at the Ethernet header
 * @len: bytes at @data
 *
 * Bounded: reads only [data, data + len), loops at most UCM_VLAN_MAX_DEPTH
 * and UCM_IPV6_EXT_MAX_CHAIN times. Never fails on non-IP (eth_proto tells;
 * l4_proto 0). Fragments are hashed on addresses and protocol only, so all
 * fragments of one datagram hash alike.
 *
 * Return: UCM_DROP_NONE, or the drop reason for a malformed frame
 * (descriptor then undefined beyond len).
 */
UCM_API enum ucm_drop_reason ucm_pkt__parse(struct ucm_pkt *pkt,
					    const void *data, uint32_t len);

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_PKT_H */
