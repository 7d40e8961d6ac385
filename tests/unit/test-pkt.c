// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Frame parser tests. Frames are built by small push helpers (Ethernet,
 * VLAN, IPv4, IPv6 and its extension headers, UDP, TCP, ICMP), which also
 * record where each header landed; a table row names a builder and the
 * expected verdict, and on success the descriptor is compared with what
 * the builder recorded. Every table row is also parsed at every prefix
 * length from an exact-size heap copy, so ASan flags any overread.
 */
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/if_ether.h>

#include "ucpumap/pkt.h"
#include "ucpumap/flowhash.h"
#include "proto/proto.h"
#include "utest.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- frame builder ---------------------------------------------------- */

#define FB_MAX	2048

struct fb {
	uint8_t buf[FB_MAX];
	uint32_t len;
	uint32_t l3;		/* network header: after Ethernet and tags */
	uint32_t l4;		/* after the IP header and its extensions */
	uint32_t l3_len;	/* set by fb_done(); 0 for non-IP */
	uint32_t udp;		/* UDP header whose length fb_done() fixes */
	int ip;			/* 4, 6 or 0 */
	/* addresses the IP pushes use, host order / byte arrays */
	uint32_t s4, d4;
	uint8_t s6[16], d6[16];
};

static void fb_init(struct fb *f)
{
	static const uint8_t s6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t d6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

	memset(f, 0, sizeof(*f));
	f->s4 = 0x0a000001;	/* 10.0.0.1 */
	f->d4 = 0x0a000002;	/* 10.0.0.2 */
	memcpy(f->s6, s6, 16);
	memcpy(f->d6, d6, 16);
}

/* Append n zeroed bytes; a builder bug is a test bug, so just abort. */
static uint8_t *fb_put(struct fb *f, uint32_t n)
{
	uint8_t *p;

	if (f->len + n > FB_MAX)
		abort();
	p = f->buf + f->len;
	memset(p, 0, n);
	f->len += n;
	return p;
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, v >> 16);
	wr16(p + 2, v);
}

static void fb_set16(struct fb *f, uint32_t off, uint16_t v)
{
	wr16(f->buf + off, v);
}

static void fb_raw(struct fb *f, uint32_t n)
{
	uint8_t *p = fb_put(f, n);
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = 0xa5 ^ i;
}

static void fb_eth(struct fb *f, uint16_t type)
{
	uint8_t *p = fb_put(f, ETH_HLEN);

	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	wr16(p + 12, type);
	f->l3 = f->len;
}

/* One tag: its TCI and the EtherType that follows it. */
static void fb_vlan(struct fb *f, uint16_t tci, uint16_t next)
{
	uint8_t *p = fb_put(f, 4);

	wr16(p, tci);
	wr16(p + 2, next);
	f->l3 = f->len;
}

/* IPv4 with optlen bytes of options (NOPs); frag is the raw flags+offset. */
static void fb_ipv4_full(struct fb *f, uint8_t proto, uint32_t optlen,
			 uint16_t frag)
{
	uint32_t hl = 20 + optlen;
	uint8_t *p = fb_put(f, hl);

	p[0] = 0x40 | hl / 4;
	wr16(p + 4, 0x1234);	/* id */
	wr16(p + 6, frag);
	p[8] = 64;
	p[9] = proto;
	wr32(p + 12, f->s4);
	wr32(p + 16, f->d4);
	memset(p + 20, 1, optlen);
	f->ip = 4;
	f->l4 = f->len;
}

static void fb_ipv4(struct fb *f, uint8_t proto)
{
	fb_ipv4_full(f, proto, 0, 0);
}

static void fb_ipv6(struct fb *f, uint8_t nexthdr)
{
	uint8_t *p = fb_put(f, 40);

	p[0] = 0x60;
	p[6] = nexthdr;
	p[7] = 64;
	memcpy(p + 8, f->s6, 16);
	memcpy(p + 24, f->d6, 16);
	f->ip = 6;
	f->l4 = f->len;
}

/* HBH/routing/dest options (size multiple of 8) or AH (multiple of 4). */
static void fb_ext6(struct fb *f, uint8_t self, uint8_t next, uint32_t size)
{
	uint8_t *p = fb_put(f, size);

	p[0] = next;
	p[1] = self == IPPROTO_AH ? size / 4 - 2 : size / 8 - 1;
	f->l4 = f->len;
}

static void fb_frag6(struct fb *f, uint8_t next, uint16_t offset, bool more)
{
	uint8_t *p = fb_put(f, 8);

	p[0] = next;
	wr16(p + 2, (offset & 0xfff8) | more);
	wr32(p + 4, 0xcafe0001);
	f->l4 = f->len;
}

static void fb_udp(struct fb *f, uint16_t sport, uint16_t dport)
{
	uint8_t *p;

	f->udp = f->len;
	p = fb_put(f, 8);
	wr16(p, sport);
	wr16(p + 2, dport);
}

static void fb_tcp(struct fb *f, uint16_t sport, uint16_t dport,
		   uint32_t optlen)
{
	uint8_t *p = fb_put(f, 20 + optlen);

	wr16(p, sport);
	wr16(p + 2, dport);
	p[12] = (20 + optlen) / 4 << 4;
	p[13] = 0x10;	/* ACK */
	memset(p + 20, 1, optlen);
}

static void fb_icmp(struct fb *f, uint8_t type)
{
	uint8_t *p = fb_put(f, 8);

	p[0] = type;
}

/* Close the frame: fill IP and UDP length fields from what was pushed. */
static void fb_done(struct fb *f)
{
	if (f->ip == 4) {
		f->l3_len = f->len - f->l3;
		fb_set16(f, f->l3 + 2, f->l3_len);
	} else if (f->ip == 6) {
		f->l3_len = f->len - f->l3;
		fb_set16(f, f->l3 + 4, f->l3_len - 40);
	}
	if (f->udp)
		fb_set16(f, f->udp + 4, f->len - f->udp);
}

/* Ethernet padding after fb_done(): bytes the IP length does not count. */
static void fb_pad_to(struct fb *f, uint32_t len)
{
	if (f->len < len)
		fb_put(f, len - f->len);
}

/* ---- builders, one per table row ------------------------------------- */

static void b_runt0(struct fb *f) { (void)f; }
static void b_runt1(struct fb *f) { fb_raw(f, 1); }
static void b_runt13(struct fb *f) { fb_raw(f, 13); }

static void b_eth_only_ipv4(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
}

static void b_arp(struct fb *f)
{
	fb_eth(f, ETH_P_ARP);
	fb_raw(f, 28);
	fb_pad_to(f, 60);
}

static void b_lldp(struct fb *f)
{
	fb_eth(f, 0x88cc);
	fb_raw(f, 40);
}

static void b_8023_len(struct fb *f)
{
	fb_eth(f, 46);		/* 802.3: a length, not an EtherType */
	fb_raw(f, 46);
}

static void b_vlan1_udp(struct fb *f)
{
	fb_eth(f, ETH_P_8021Q);
	fb_vlan(f, 0x2064, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, 1234, 53);
	fb_raw(f, 20);
	fb_done(f);
}

static void b_qinq_ipv6_udp(struct fb *f)
{
	fb_eth(f, ETH_P_8021AD);
	fb_vlan(f, 0x0064, ETH_P_8021Q);
	fb_vlan(f, 0x00c8, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_UDP);
	fb_udp(f, 5000, 6000);
	fb_raw(f, 10);
	fb_done(f);
}

static void b_qinq_8100_tcp(struct fb *f)
{
	fb_eth(f, ETH_P_8021Q);
	fb_vlan(f, 10, ETH_P_8021Q);
	fb_vlan(f, 20, ETH_P_IP);
	fb_ipv4(f, IPPROTO_TCP);
	fb_tcp(f, 40000, 443, 0);
	fb_done(f);
}

static void b_vlan3(struct fb *f)
{
	fb_eth(f, ETH_P_8021AD);
	fb_vlan(f, 1, ETH_P_8021Q);
	fb_vlan(f, 2, ETH_P_8021Q);
	fb_vlan(f, 3, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, 1, 2);
	fb_done(f);
}

static void b_vlan_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_8021Q);
	fb_raw(f, 2);
}

static void b_qinq_trunc_inner(struct fb *f)
{
	fb_eth(f, ETH_P_8021AD);
	fb_vlan(f, 1, ETH_P_8021Q);
	fb_raw(f, 3);
}

static void b_vlan_arp(struct fb *f)
{
	fb_eth(f, ETH_P_8021Q);
	fb_vlan(f, 5, ETH_P_ARP);
	fb_raw(f, 28);
}

static void b_vlan_no_ip(struct fb *f)
{
	fb_eth(f, ETH_P_8021Q);
	fb_vlan(f, 5, ETH_P_IP);
}

static void b_ipv4_udp(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, 1234, 53);
	fb_raw(f, 32);
	fb_done(f);
}

static void b_ipv4_tcp_opts(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_TCP, 8, 0x4000 /* DF: not a fragment */);
	fb_tcp(f, 40000, 80, 12);
	fb_raw(f, 100);
	fb_done(f);
}

static void b_ipv4_max_opts(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_UDP, 40, 0);
	fb_udp(f, 7, 9);
	fb_done(f);
}

static void b_ipv4_icmp(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_ICMP);
	fb_icmp(f, 8);
	fb_raw(f, 56);
	fb_done(f);
}

static void b_ipv4_gre(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_GRE);
	fb_raw(f, 3);		/* too short for anything: not our business */
	fb_done(f);
}

static void b_ipv4_padded(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, 1234, 53);
	fb_raw(f, 2);
	fb_done(f);
	fb_pad_to(f, 60);
}

static void b_ipv4_19(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	f->len -= 1;
}

static void b_ipv4_ihl4(struct fb *f)
{
	b_ipv4_udp(f);
	f->buf[f->l3] = 0x44;
}

static void b_ipv4_ihl_past_end(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, 1, 2);
	fb_done(f);
	f->buf[f->l3] = 0x4f;	/* 60 bytes of header in a 28-byte datagram */
}

/* One option word announced, none there: the smallest overrun. */
static void b_ipv4_ihl_past_end_by4(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_GRE);
	fb_done(f);
	f->buf[f->l3] = 0x46;
}

/* Header only, no payload, protocol we don't parse: fine. */
static void b_ipv4_hdr_only(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_GRE);
	fb_done(f);
}

static void b_ipv4_totlen_lt_ihl(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_UDP, 4, 0);
	fb_udp(f, 1, 2);
	fb_done(f);
	fb_set16(f, f->l3 + 2, 23);
}

static void b_ipv4_totlen_gt_frame(struct fb *f)
{
	b_ipv4_udp(f);
	fb_set16(f, f->l3 + 2, f->len - f->l3 + 1);
}

static void b_ipv4_version6(struct fb *f)
{
	b_ipv4_udp(f);
	f->buf[f->l3] = 0x65;
}

/* Three fragments of one UDP datagram: 16 + 16 + 8 bytes of IP payload. */
static void b_ipv4_frag_first(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_UDP, 0, 0x2000);
	fb_udp(f, 1234, 53);
	fb_raw(f, 8);
	fb_done(f);
	fb_set16(f, f->udp + 4, 40);	/* the whole datagram's UDP length */
}

static void b_ipv4_frag_middle(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_UDP, 0, 0x2000 | 2);
	fb_put(f, 16);		/* zeros: a bad UDP length if parsed as one */
	fb_done(f);
}

static void b_ipv4_frag_last(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_UDP, 0, 4);
	fb_put(f, 8);
	fb_done(f);
}

/* Last fragment of a TCP segment: zeros would be doff 0 if parsed. */
static void b_ipv4_frag_last_tcp(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_TCP, 0, 100);
	fb_put(f, 24);
	fb_done(f);
}

static void b_ipv4_frag_first_ulen7(struct fb *f)
{
	b_ipv4_frag_first(f);
	fb_set16(f, f->udp + 4, 7);
}

static void b_ipv4_frag_first_tcp_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_TCP, 0, 0x2000);
	fb_raw(f, 8);		/* tiny first fragment: half a TCP header */
	fb_done(f);
}

static void b_ipv4_min(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, 1, 2);
	fb_done(f);		/* 42 bytes, no padding */
}

static void b_ipv4_min_padded(struct fb *f)
{
	b_ipv4_min(f);
	fb_pad_to(f, 60);
}

static void b_ipv4_1514(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, 4789, 4789);
	fb_raw(f, 1514 - 14 - 20 - 8);
	fb_done(f);
}

static void b_ipv6_udp(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_UDP);
	fb_udp(f, 1234, 53);
	fb_raw(f, 24);
	fb_done(f);
}

static void b_ipv6_tcp(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_TCP);
	fb_tcp(f, 50000, 22, 12);
	fb_raw(f, 48);
	fb_done(f);
}

static void b_ipv6_icmp6(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_ICMPV6);
	fb_raw(f, 4);		/* the 4-byte minimum */
	f->buf[f->l4] = 128;
	fb_done(f);
}

static void b_ipv6_chain3(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_HOPOPTS);
	fb_ext6(f, IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, 8);
	fb_ext6(f, IPPROTO_DSTOPTS, IPPROTO_ROUTING, 16);
	fb_ext6(f, IPPROTO_ROUTING, IPPROTO_UDP, 24);
	fb_udp(f, 3000, 4000);
	fb_raw(f, 4);
	fb_done(f);
}

static void b_ipv6_ah(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_AH);
	fb_ext6(f, IPPROTO_AH, IPPROTO_TCP, 24);
	fb_tcp(f, 179, 50001, 0);
	fb_done(f);
}

static void b_ipv6_frag_first(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_FRAGMENT);
	fb_frag6(f, IPPROTO_UDP, 0, true);
	fb_udp(f, 1234, 53);
	fb_raw(f, 8);
	fb_done(f);
	fb_set16(f, f->udp + 4, 3000);
}

static void b_ipv6_frag_middle(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_FRAGMENT);
	fb_frag6(f, IPPROTO_UDP, 1448, true);
	fb_put(f, 16);
	fb_done(f);
}

static void b_ipv6_frag_last(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_FRAGMENT);
	fb_frag6(f, IPPROTO_UDP, 2896, false);
	fb_put(f, 16);
	fb_done(f);
}

/* Two bytes of a fragment header: its offset field is not there. */
static void b_ipv6_frag_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_FRAGMENT);
	fb_put(f, 2)[0] = IPPROTO_UDP;
	fb_done(f);
}

/* A first-fragment header followed by a later-fragment one. */
static void b_ipv6_two_frag_hdrs(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_FRAGMENT);
	fb_frag6(f, IPPROTO_FRAGMENT, 0, true);
	fb_frag6(f, IPPROTO_UDP, 8, true);
	fb_put(f, 16);
	fb_done(f);
}

static void b_ipv6_atomic_frag(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_FRAGMENT);
	fb_frag6(f, IPPROTO_UDP, 0, false);
	fb_udp(f, 1234, 53);
	fb_done(f);
}

/* Pushes n extension headers, cycling through the five kinds, then UDP. */
static void fb_ext_chain(struct fb *f, int n)
{
	static const uint8_t kinds[] = {
		IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
		IPPROTO_AH, IPPROTO_FRAGMENT,
	};
	int i;

	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, kinds[0]);
	for (i = 0; i < n; i++) {
		uint8_t self = kinds[i % ARRAY_SIZE(kinds)];
		uint8_t next = i + 1 < n ?
			kinds[(i + 1) % ARRAY_SIZE(kinds)] : IPPROTO_UDP;

		if (self == IPPROTO_FRAGMENT)
			fb_frag6(f, next, 0, false);	/* atomic */
		else
			fb_ext6(f, self, next, self == IPPROTO_AH ? 16 : 8);
	}
	fb_udp(f, 1111, 2222);
	fb_done(f);
}

static void b_ipv6_chain_max(struct fb *f)
{
	fb_ext_chain(f, UCM_IPV6_EXT_MAX_CHAIN);
}

static void b_ipv6_chain_over(struct fb *f)
{
	fb_ext_chain(f, UCM_IPV6_EXT_MAX_CHAIN + 1);
}

static void b_ipv6_ext_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_HOPOPTS);
	fb_ext6(f, IPPROTO_HOPOPTS, IPPROTO_UDP, 16);
	fb_done(f);
	fb_set16(f, f->l3 + 4, 8);	/* half the header is in the payload */
	f->len -= 8;
}

static void b_ipv6_ext_trunc_min(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_DSTOPTS);
	fb_raw(f, 4);		/* not even the 8-byte minimum */
	fb_done(f);
}

/* The header's tail lies in Ethernet padding: still cut short. */
static void b_ipv6_ext_in_padding(struct fb *f)
{
	b_ipv6_ext_trunc(f);
	fb_pad_to(f, f->len + 16);
}

static void b_ipv6_esp(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_ESP);
	fb_raw(f, 40);
	fb_done(f);
}

static void b_ipv6_dst_esp(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_DSTOPTS);
	fb_ext6(f, IPPROTO_DSTOPTS, IPPROTO_ESP, 8);
	fb_raw(f, 3);
	fb_done(f);
}

static void b_ipv6_nonext(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_NONE);
	fb_done(f);		/* also the smallest IPv6 frame: 54 bytes */
}

static void b_ipv6_payload_gt_frame(struct fb *f)
{
	b_ipv6_udp(f);
	fb_set16(f, f->l3 + 4, f->len - f->l3 - 40 + 1);
}

static void b_ipv6_39(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_UDP);
	f->len -= 1;
}

static void b_ipv6_version4(struct fb *f)
{
	b_ipv6_udp(f);
	f->buf[f->l3] = 0x45;
}

static void b_ipv6_padded(struct fb *f)
{
	b_ipv6_udp(f);
	fb_pad_to(f, f->len + 6);
}

static void b_ipv6_1514(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_TCP);
	fb_tcp(f, 443, 50000, 0);
	fb_raw(f, 1514 - 14 - 40 - 20);
	fb_done(f);
}

static void b_udp_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_raw(f, 7);
	fb_done(f);
}

/* UDP header sits in the Ethernet padding, outside tot_len. */
static void b_udp_in_padding(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_raw(f, 4);
	fb_done(f);
	fb_pad_to(f, 60);
}

static void b_tcp_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_TCP);
	fb_raw(f, 19);
	fb_done(f);
}

static void b_tcp6_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_TCP);
	fb_raw(f, 12);
	fb_done(f);
}

static void b_icmp_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_ICMP);
	fb_raw(f, 7);
	fb_done(f);
}

static void b_icmp6_trunc(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_ICMPV6);
	fb_raw(f, 3);
	fb_done(f);
}

static void b_udp_len7(struct fb *f)
{
	b_ipv4_udp(f);
	fb_set16(f, f->udp + 4, 7);
}

static void b_udp_len_gt(struct fb *f)
{
	b_ipv4_udp(f);
	fb_set16(f, f->udp + 4, f->len - f->udp + 1);
}

static void b_udp_len_lt(struct fb *f)
{
	b_ipv4_udp(f);
	fb_set16(f, f->udp + 4, 8);	/* shorter than the IP payload: ok */
}

static void b_udp6_len_gt(struct fb *f)
{
	b_ipv6_udp(f);
	fb_set16(f, f->udp + 4, f->len - f->udp + 1);
}

static void b_tcp_doff4(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_TCP);
	fb_tcp(f, 1, 2, 0);
	fb_done(f);
	f->buf[f->l4 + 12] = 4 << 4;
}

static void b_tcp_doff_past_end(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_TCP);
	fb_tcp(f, 1, 2, 0);
	fb_raw(f, 20);
	fb_done(f);
	f->buf[f->l4 + 12] = 15 << 4;	/* 60 bytes, 40 there */
}

static void b_tcp_max_opts(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_TCP);
	fb_tcp(f, 1, 2, 40);
	fb_done(f);
}

/* ---- tables ------------------------------------------------------------ */

#define V4	UCM_PKT_F_IPV4
#define V6	UCM_PKT_F_IPV6
#define FRAG	UCM_PKT_F_FRAG
#define FIRST	UCM_PKT_F_FRAG_FIRST
#define L4	UCM_PKT_F_L4
#define PORTS	UCM_PKT_F_PORTS
#define OPTS	UCM_PKT_F_IP_OPTS
#define EXT	UCM_PKT_F_IPV6_EXT

struct row {
	const char *name;
	void (*build)(struct fb *f);
	enum ucm_drop_reason want;
	/* the rest is checked only when want is UCM_DROP_NONE */
	uint16_t flags;		/* exact */
	uint16_t eth_proto;
	uint8_t l4_proto;
	uint8_t nvlan;
	uint16_t tci[UCM_VLAN_MAX_DEPTH];
	uint16_t sport, dport;
	uint16_t l4_hlen;
};

#define ROW(fn, reason, ...)						\
	{ .name = #fn, .build = b_##fn, .want = UCM_DROP_##reason, __VA_ARGS__ }
#define BAD(fn, reason)							\
	{ .name = #fn, .build = b_##fn, .want = UCM_DROP_##reason }

static const struct row eth_rows[] = {
	BAD(runt0, RUNT),
	BAD(runt1, RUNT),
	BAD(runt13, RUNT),
	BAD(eth_only_ipv4, L3_TRUNC),
	ROW(arp, NONE, .eth_proto = ETH_P_ARP),
	ROW(lldp, NONE, .eth_proto = 0x88cc),
	ROW(8023_len, NONE, .eth_proto = 46),
	ROW(vlan1_udp, NONE, .flags = V4 | L4 | PORTS, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_UDP, .nvlan = 1, .tci = { 0x2064 },
	    .sport = 1234, .dport = 53, .l4_hlen = 8),
	ROW(qinq_ipv6_udp, NONE, .flags = V6 | L4 | PORTS,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_UDP, .nvlan = 2,
	    .tci = { 0x64, 0xc8 }, .sport = 5000, .dport = 6000, .l4_hlen = 8),
	ROW(qinq_8100_tcp, NONE, .flags = V4 | L4 | PORTS,
	    .eth_proto = ETH_P_IP, .l4_proto = IPPROTO_TCP, .nvlan = 2,
	    .tci = { 10, 20 }, .sport = 40000, .dport = 443, .l4_hlen = 20),
	BAD(vlan3, VLAN_DEPTH),
	BAD(vlan_trunc, RUNT),
	BAD(qinq_trunc_inner, RUNT),
	ROW(vlan_arp, NONE, .eth_proto = ETH_P_ARP, .nvlan = 1, .tci = { 5 }),
	BAD(vlan_no_ip, L3_TRUNC),
};

static const struct row ipv4_rows[] = {
	ROW(ipv4_udp, NONE, .flags = V4 | L4 | PORTS, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_UDP, .sport = 1234, .dport = 53, .l4_hlen = 8),
	ROW(ipv4_tcp_opts, NONE, .flags = V4 | OPTS | L4 | PORTS,
	    .eth_proto = ETH_P_IP, .l4_proto = IPPROTO_TCP, .sport = 40000,
	    .dport = 80, .l4_hlen = 32),
	ROW(ipv4_max_opts, NONE, .flags = V4 | OPTS | L4 | PORTS,
	    .eth_proto = ETH_P_IP, .l4_proto = IPPROTO_UDP, .sport = 7,
	    .dport = 9, .l4_hlen = 8),
	ROW(ipv4_icmp, NONE, .flags = V4 | L4, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_ICMP, .l4_hlen = 8),
	ROW(ipv4_gre, NONE, .flags = V4, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_GRE),
	ROW(ipv4_padded, NONE, .flags = V4 | L4 | PORTS, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_UDP, .sport = 1234, .dport = 53, .l4_hlen = 8),
	BAD(ipv4_19, L3_TRUNC),
	BAD(ipv4_ihl4, IPV4_IHL),
	BAD(ipv4_ihl_past_end, L3_TRUNC),
	BAD(ipv4_ihl_past_end_by4, L3_TRUNC),
	ROW(ipv4_hdr_only, NONE, .flags = V4, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_GRE),
	BAD(ipv4_totlen_lt_ihl, IP_LEN),
	BAD(ipv4_totlen_gt_frame, IP_LEN),
	BAD(ipv4_version6, IP_VERSION),
	ROW(ipv4_frag_first, NONE, .flags = V4 | FRAG | FIRST | L4 | PORTS,
	    .eth_proto = ETH_P_IP, .l4_proto = IPPROTO_UDP, .sport = 1234,
	    .dport = 53, .l4_hlen = 8),
	ROW(ipv4_frag_middle, NONE, .flags = V4 | FRAG, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_UDP),
	ROW(ipv4_frag_last, NONE, .flags = V4 | FRAG, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_UDP),
	ROW(ipv4_frag_last_tcp, NONE, .flags = V4 | FRAG,
	    .eth_proto = ETH_P_IP, .l4_proto = IPPROTO_TCP),
	BAD(ipv4_frag_first_ulen7, L4_HDR),
	BAD(ipv4_frag_first_tcp_trunc, L4_TRUNC),
};

static const struct row ipv6_rows[] = {
	ROW(ipv6_udp, NONE, .flags = V6 | L4 | PORTS, .eth_proto = ETH_P_IPV6,
	    .l4_proto = IPPROTO_UDP, .sport = 1234, .dport = 53, .l4_hlen = 8),
	ROW(ipv6_tcp, NONE, .flags = V6 | L4 | PORTS, .eth_proto = ETH_P_IPV6,
	    .l4_proto = IPPROTO_TCP, .sport = 50000, .dport = 22,
	    .l4_hlen = 32),
	ROW(ipv6_icmp6, NONE, .flags = V6 | L4, .eth_proto = ETH_P_IPV6,
	    .l4_proto = IPPROTO_ICMPV6, .l4_hlen = 4),
	ROW(ipv6_chain3, NONE, .flags = V6 | EXT | L4 | PORTS,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_UDP, .sport = 3000,
	    .dport = 4000, .l4_hlen = 8),
	ROW(ipv6_ah, NONE, .flags = V6 | EXT | L4 | PORTS,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_TCP, .sport = 179,
	    .dport = 50001, .l4_hlen = 20),
	ROW(ipv6_frag_first, NONE, .flags = V6 | EXT | FRAG | FIRST | L4 | PORTS,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_UDP, .sport = 1234,
	    .dport = 53, .l4_hlen = 8),
	ROW(ipv6_frag_middle, NONE, .flags = V6 | EXT | FRAG,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_UDP),
	ROW(ipv6_frag_last, NONE, .flags = V6 | EXT | FRAG,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_UDP),
	BAD(ipv6_frag_trunc, IPV6_EXT),
	ROW(ipv6_two_frag_hdrs, NONE, .flags = V6 | EXT | FRAG,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_UDP),
	ROW(ipv6_atomic_frag, NONE, .flags = V6 | EXT | L4 | PORTS,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_UDP, .sport = 1234,
	    .dport = 53, .l4_hlen = 8),
	ROW(ipv6_chain_max, NONE, .flags = V6 | EXT | L4 | PORTS,
	    .eth_proto = ETH_P_IPV6, .l4_proto = IPPROTO_UDP, .sport = 1111,
	    .dport = 2222, .l4_hlen = 8),
	BAD(ipv6_chain_over, IPV6_EXT),
	BAD(ipv6_ext_trunc, IPV6_EXT),
	BAD(ipv6_ext_trunc_min, IPV6_EXT),
	BAD(ipv6_ext_in_padding, IPV6_EXT),
	ROW(ipv6_esp, NONE, .flags = V6, .eth_proto = ETH_P_IPV6,
	    .l4_proto = IPPROTO_ESP),
	ROW(ipv6_dst_esp, NONE, .flags = V6 | EXT, .eth_proto = ETH_P_IPV6,
	    .l4_proto = IPPROTO_ESP),
	ROW(ipv6_nonext, NONE, .flags = V6, .eth_proto = ETH_P_IPV6,
	    .l4_proto = IPPROTO_NONE),
	BAD(ipv6_payload_gt_frame, IP_LEN),
	BAD(ipv6_39, L3_TRUNC),
	BAD(ipv6_version4, IP_VERSION),
	ROW(ipv6_padded, NONE, .flags = V6 | L4 | PORTS, .eth_proto = ETH_P_IPV6,
	    .l4_proto = IPPROTO_UDP, .sport = 1234, .dport = 53, .l4_hlen = 8),
};

static const struct row l4_rows[] = {
	BAD(udp_trunc, L4_TRUNC),
	BAD(udp_in_padding, L4_TRUNC),
	BAD(tcp_trunc, L4_TRUNC),
	BAD(tcp6_trunc, L4_TRUNC),
	BAD(icmp_trunc, L4_TRUNC),
	BAD(icmp6_trunc, L4_TRUNC),
	BAD(udp_len7, L4_HDR),
	BAD(udp_len_gt, L4_HDR),
	ROW(udp_len_lt, NONE, .flags = V4 | L4 | PORTS, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_UDP, .sport = 1234, .dport = 53, .l4_hlen = 8),
	BAD(udp6_len_gt, L4_HDR),
	BAD(tcp_doff4, L4_HDR),
	BAD(tcp_doff_past_end, L4_HDR),
	ROW(tcp_max_opts, NONE, .flags = V4 | L4 | PORTS, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_TCP, .sport = 1, .dport = 2, .l4_hlen = 60),
};

static const struct row size_rows[] = {
	ROW(ipv4_min, NONE, .flags = V4 | L4 | PORTS, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_UDP, .sport = 1, .dport = 2, .l4_hlen = 8),
	ROW(ipv4_min_padded, NONE, .flags = V4 | L4 | PORTS,
	    .eth_proto = ETH_P_IP, .l4_proto = IPPROTO_UDP, .sport = 1,
	    .dport = 2, .l4_hlen = 8),
	ROW(ipv4_1514, NONE, .flags = V4 | L4 | PORTS, .eth_proto = ETH_P_IP,
	    .l4_proto = IPPROTO_UDP, .sport = 4789, .dport = 4789,
	    .l4_hlen = 8),
	ROW(ipv6_1514, NONE, .flags = V6 | L4 | PORTS, .eth_proto = ETH_P_IPV6,
	    .l4_proto = IPPROTO_TCP, .sport = 443, .dport = 50000,
	    .l4_hlen = 20),
};

static const struct {
	const struct row *rows;
	size_t n;
} all_tables[] = {
	{ eth_rows, ARRAY_SIZE(eth_rows) },
	{ ipv4_rows, ARRAY_SIZE(ipv4_rows) },
	{ ipv6_rows, ARRAY_SIZE(ipv6_rows) },
	{ l4_rows, ARRAY_SIZE(l4_rows) },
	{ size_rows, ARRAY_SIZE(size_rows) },
};

/* ---- row checking ------------------------------------------------------ */

#define RS(r)	ucm_drop_reason_str(r)

/* Compare a successful parse with what the builder recorded. */
static int check_desc(const struct row *r, const struct fb *f,
		      const struct ucm_pkt *pkt)
{
	const char *n = r->name;
	int i;

	UT_ASSERT(pkt->len == f->len, "%s: len %u", n, pkt->len);
	UT_ASSERT(pkt->flags == r->flags, "%s: flags %#x, want %#x", n,
		  pkt->flags, r->flags);
	UT_ASSERT(pkt->eth_proto == r->eth_proto, "%s: eth_proto %#x", n,
		  pkt->eth_proto);
	UT_ASSERT(pkt->nvlan == r->nvlan, "%s: nvlan %u", n, pkt->nvlan);
	for (i = 0; i < UCM_VLAN_MAX_DEPTH; i++)
		UT_ASSERT(pkt->vlan_tci[i] == r->tci[i], "%s: tci[%d] %#x", n,
			  i, pkt->vlan_tci[i]);
	UT_ASSERT(pkt->l3_off == f->l3, "%s: l3_off %u, want %u", n,
		  pkt->l3_off, f->l3);
	UT_ASSERT(pkt->l3_len == f->l3_len, "%s: l3_len %u, want %u", n,
		  pkt->l3_len, f->l3_len);
	UT_ASSERT(pkt->l4_proto == r->l4_proto, "%s: l4_proto %u", n,
		  pkt->l4_proto);
	UT_ASSERT(pkt->l4_off == (f->ip ? f->l4 : 0), "%s: l4_off %u, want %u",
		  n, pkt->l4_off, f->l4);
	if (pkt->flags & UCM_PKT_F_L4)
		UT_ASSERT(pkt->l4_hlen == r->l4_hlen, "%s: l4_hlen %u", n,
			  pkt->l4_hlen);
	UT_ASSERT(pkt->sport == r->sport && pkt->dport == r->dport,
		  "%s: ports %u %u", n, pkt->sport, pkt->dport);
	if (f->ip)
		UT_ASSERT(pkt->hash && pkt->hash_sym, "%s: zero hash", n);
	else
		UT_ASSERT(!pkt->hash && !pkt->hash_sym, "%s: non-IP hash", n);
	return 0;
}

static int run_rows(const struct row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		enum ucm_drop_reason ret;
		struct ucm_pkt pkt;
		uint8_t *buf;
		struct fb f;

		fb_init(&f);
		r->build(&f);
		/* Exact-size heap copy: ASan sees any read past the end. */
		buf = malloc(f.len);
		UT_ASSERT(buf || !f.len, "malloc");
		if (f.len)
			memcpy(buf, f.buf, f.len);
		memset(&pkt, 0xee, sizeof(pkt));
		ret = ucm_pkt__parse(&pkt, buf, f.len);
		free(buf);
		UT_ASSERT(ret == r->want, "%s: got %s, want %s", r->name,
			  RS(ret), RS(r->want));
		if (ret == UCM_DROP_NONE && check_desc(r, &f, &pkt))
			return 1;
	}
	return 0;
}

static int test_eth_vlan(void)
{
	return run_rows(eth_rows, ARRAY_SIZE(eth_rows));
}

static int test_ipv4(void)
{
	return run_rows(ipv4_rows, ARRAY_SIZE(ipv4_rows));
}

static int test_ipv6(void)
{
	return run_rows(ipv6_rows, ARRAY_SIZE(ipv6_rows));
}

static int test_l4(void)
{
	return run_rows(l4_rows, ARRAY_SIZE(l4_rows));
}

static int test_sizes(void)
{
	return run_rows(size_rows, ARRAY_SIZE(size_rows));
}

/*
 * Every prefix of every good frame, from an exact-size heap copy: ASan
 * catches a read past the end. A prefix that still holds the whole IP
 * datagram (or the whole tag stack, for non-IP) must parse exactly as the
 * full frame; any shorter prefix must be dropped.
 */
static int test_no_overread(void)
{
	size_t t, i;
	uint32_t n;

	for (t = 0; t < ARRAY_SIZE(all_tables); t++) {
		for (i = 0; i < all_tables[t].n; i++) {
			const struct row *r = &all_tables[t].rows[i];
			struct ucm_pkt full, pkt;
			struct fb f;

			if (r->want != UCM_DROP_NONE)
				continue;
			fb_init(&f);
			r->build(&f);
			UT_ASSERT(ucm_pkt__parse(&full, f.buf, f.len) ==
				  UCM_DROP_NONE, "%s", r->name);

			for (n = 0; n < f.len; n++) {
				uint8_t *buf = malloc(n);
				enum ucm_drop_reason ret;
				bool whole;

				UT_ASSERT(buf || !n, "malloc");
				if (n)
					memcpy(buf, f.buf, n);
				ret = ucm_pkt__parse(&pkt, buf, n);
				free(buf);

				UT_ASSERT((unsigned int)ret < UCM_DROP__MAX,
					  "%s/%u: bad enum %d", r->name, n,
					  ret);
				whole = n >= f.l3 + f.l3_len;
				UT_ASSERT((ret == UCM_DROP_NONE) == whole,
					  "%s/%u: got %s", r->name, n, RS(ret));
				if (ret)
					continue;
				pkt.len = full.len;
				UT_ASSERT(!memcmp(&pkt, &full, sizeof(pkt)),
					  "%s/%u: descriptor differs",
					  r->name, n);
			}
		}
	}
	return 0;
}

/* Frames start anywhere in a UMEM chunk: misaligned loads are UB. */
static int test_unaligned(void)
{
	static void (*const builds[])(struct fb *) = {
		b_qinq_ipv6_udp, b_ipv4_tcp_opts, b_ipv6_chain3, b_ipv6_ah,
	};
	struct ucm_pkt ref, pkt;
	uint8_t *buf;
	size_t i, s;

	for (i = 0; i < ARRAY_SIZE(builds); i++) {
		struct fb f;

		fb_init(&f);
		builds[i](&f);
		UT_ASSERT(!ucm_pkt__parse(&ref, f.buf, f.len), "build %zu", i);
		buf = malloc(f.len + 8);
		UT_ASSERT(buf, "malloc");
		for (s = 1; s < 8; s++) {
			memcpy(buf + s, f.buf, f.len);
			if (ucm_pkt__parse(&pkt, buf + s, f.len) ||
			    memcmp(&pkt, &ref, sizeof(pkt))) {
				free(buf);
				ut_fail_reason("build %zu shift %zu", i, s);
				return 1;
			}
		}
		free(buf);
	}
	return 0;
}

/* Frames longer than the u16 offsets can describe, and the IPv6 edge. */
static int test_oversize(void)
{
	uint32_t big = UINT16_MAX + 1;
	uint8_t *buf = calloc(1, big);
	enum ucm_drop_reason ret;
	struct ucm_pkt pkt;

	UT_ASSERT(buf, "calloc");
	wr16(buf + 12, ETH_P_IPV6);
	buf[14] = 0x60;
	buf[20] = IPPROTO_NONE;

	ret = ucm_pkt__parse(&pkt, buf, big);
	if (ret != UCM_DROP_OVERSIZE)
		goto fail;

	/* Largest frame: the payload just fits. */
	wr16(buf + 18, UINT16_MAX - 54);
	ret = ucm_pkt__parse(&pkt, buf, UINT16_MAX);
	if (ret != UCM_DROP_NONE || pkt.l3_len != UINT16_MAX - 14)
		goto fail;

	/* 40 + 65535 must not wrap around the 16-bit l3_len. */
	wr16(buf + 18, UINT16_MAX);
	ret = ucm_pkt__parse(&pkt, buf, UINT16_MAX);
	if (ret != UCM_DROP_IP_LEN)
		goto fail;
	free(buf);
	return 0;
fail:
	free(buf);
	ut_fail_reason("%s:%d: got %s", __FILE__, __LINE__, RS(ret));
	return 1;
}

/* ---- hashes ------------------------------------------------------------ */

static int parse_fb(struct fb *f, struct ucm_pkt *pkt)
{
	return ucm_pkt__parse(pkt, f->buf, f->len);
}

static void build_v4_udp(struct fb *f, uint32_t s, uint32_t d, uint16_t sp,
			 uint16_t dp, uint32_t payload)
{
	fb_init(f);
	f->s4 = s;
	f->d4 = d;
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, sp, dp);
	fb_raw(f, payload);
	fb_done(f);
}

static void build_v6_tcp(struct fb *f, const uint8_t *s, const uint8_t *d,
			 uint16_t sp, uint16_t dp)
{
	fb_init(f);
	memcpy(f->s6, s, 16);
	memcpy(f->d6, d, 16);
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_TCP);
	fb_tcp(f, sp, dp, 0);
	fb_done(f);
}

static int test_hash_flows(void)
{
	static const uint8_t a6[16] = { 0xfd, 0, [14] = 0x12, [15] = 0x34 };
	static const uint8_t b6[16] = { 0xfd, 1, [15] = 0x01 };
	struct ucm_pkt p1, p2;
	struct fb f;

	/* Same flow, different payload and VLAN: same hashes. */
	build_v4_udp(&f, 0xc0a80001, 0x08080808, 33333, 53, 10);
	UT_ASSERT(!parse_fb(&f, &p1), "parse");
	build_v4_udp(&f, 0xc0a80001, 0x08080808, 33333, 53, 100);
	UT_ASSERT(!parse_fb(&f, &p2), "parse");
	UT_ASSERT(p1.hash == p2.hash && p1.hash_sym == p2.hash_sym, "v4 same");
	fb_init(&f);
	f.s4 = 0xc0a80001;
	f.d4 = 0x08080808;
	fb_eth(&f, ETH_P_8021Q);
	fb_vlan(&f, 7, ETH_P_IP);
	fb_ipv4(&f, IPPROTO_UDP);
	fb_udp(&f, 33333, 53);
	fb_done(&f);
	UT_ASSERT(!parse_fb(&f, &p2), "parse");
	UT_ASSERT(p1.hash == p2.hash && p1.hash_sym == p2.hash_sym, "vlan");

	/* What an XDP program computing flowhash.h itself would get. */
	UT_ASSERT(p1.hash == ucm_flow_hash_v4(htonl(0xc0a80001),
					      htonl(0x08080808), htons(33333),
					      htons(53), IPPROTO_UDP, 0),
		  "v4 hash disagrees with flowhash.h");
	UT_ASSERT(p1.hash_sym == ucm_flow_hash_v4(htonl(0x08080808),
						  htonl(0xc0a80001), htons(53),
						  htons(33333), IPPROTO_UDP, 1),
		  "v4 sym hash disagrees with flowhash.h");

	/* Reverse direction: symmetric equal, plain different. */
	build_v4_udp(&f, 0x08080808, 0xc0a80001, 53, 33333, 10);
	UT_ASSERT(!parse_fb(&f, &p2), "parse");
	UT_ASSERT(p1.hash_sym == p2.hash_sym, "v4 reverse sym");
	UT_ASSERT(p1.hash != p2.hash, "v4 reverse plain");

	/* Another flow differs. */
	build_v4_udp(&f, 0xc0a80001, 0x08080808, 33334, 53, 10);
	UT_ASSERT(!parse_fb(&f, &p2), "parse");
	UT_ASSERT(p1.hash != p2.hash && p1.hash_sym != p2.hash_sym, "v4 other");

	build_v6_tcp(&f, a6, b6, 40000, 443);
	UT_ASSERT(!parse_fb(&f, &p1), "parse");
	build_v6_tcp(&f, b6, a6, 443, 40000);
	UT_ASSERT(!parse_fb(&f, &p2), "parse");
	UT_ASSERT(p1.hash_sym == p2.hash_sym, "v6 reverse sym");
	UT_ASSERT(p1.hash != p2.hash, "v6 reverse plain");
	build_v6_tcp(&f, a6, b6, 40000, 443);
	UT_ASSERT(!parse_fb(&f, &p2), "parse");
	UT_ASSERT(p1.hash == p2.hash && p1.hash_sym == p2.hash_sym, "v6 same");
	return 0;
}

static int test_hash_frags(void)
{
	static void (*const v4[])(struct fb *) = {
		b_ipv4_frag_first, b_ipv4_frag_middle, b_ipv4_frag_last,
	};
	static void (*const v6[])(struct fb *) = {
		b_ipv6_frag_first, b_ipv6_frag_middle, b_ipv6_frag_last,
	};
	struct ucm_pkt pkt, whole;
	uint32_t h = 0, hs = 0;
	struct fb f;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v4); i++) {
		fb_init(&f);
		v4[i](&f);
		UT_ASSERT(!parse_fb(&f, &pkt), "v4 frag %zu", i);
		if (!i) {
			h = pkt.hash;
			hs = pkt.hash_sym;
		}
		UT_ASSERT(pkt.hash == h && pkt.hash_sym == hs, "v4 frag %zu", i);
	}
	UT_ASSERT(h == ucm_flow_hash_v4(htonl(0x0a000001), htonl(0x0a000002),
					0, 0, IPPROTO_UDP, 0), "v4 frag ports");
	/* The unfragmented flow hashes its ports. */
	fb_init(&f);
	b_ipv4_udp(&f);
	UT_ASSERT(!parse_fb(&f, &whole), "parse");
	UT_ASSERT(whole.hash != h, "ports ignored for whole datagram");

	for (i = 0; i < ARRAY_SIZE(v6); i++) {
		fb_init(&f);
		v6[i](&f);
		UT_ASSERT(!parse_fb(&f, &pkt), "v6 frag %zu", i);
		if (!i) {
			h = pkt.hash;
			hs = pkt.hash_sym;
		}
		UT_ASSERT(pkt.hash == h && pkt.hash_sym == hs, "v6 frag %zu", i);
	}

	/*
	 * Extension headers in the fragmentable part: the first fragment
	 * shows UDP past them, later ones only the fragment header's next
	 * header. Both must still hash alike.
	 */
	fb_init(&f);
	fb_eth(&f, ETH_P_IPV6);
	fb_ipv6(&f, IPPROTO_FRAGMENT);
	fb_frag6(&f, IPPROTO_DSTOPTS, 0, true);
	fb_ext6(&f, IPPROTO_DSTOPTS, IPPROTO_UDP, 8);
	fb_udp(&f, 1, 2);
	fb_done(&f);
	UT_ASSERT(!parse_fb(&f, &pkt), "v6 first frag with dstopts");
	UT_ASSERT(pkt.l4_proto == IPPROTO_UDP && (pkt.flags & UCM_PKT_F_PORTS),
		  "first frag l4 %u", pkt.l4_proto);
	h = pkt.hash;
	fb_init(&f);
	fb_eth(&f, ETH_P_IPV6);
	fb_ipv6(&f, IPPROTO_FRAGMENT);
	fb_frag6(&f, IPPROTO_DSTOPTS, 8, false);
	fb_put(&f, 8);
	fb_done(&f);
	UT_ASSERT(!parse_fb(&f, &pkt), "v6 last frag after dstopts");
	UT_ASSERT(pkt.l4_proto == IPPROTO_DSTOPTS, "l4 %u", pkt.l4_proto);
	UT_ASSERT(pkt.hash == h, "v6 frags with dstopts hash apart");
	return 0;
}

static uint32_t xs_state = 0x12345678;

static uint32_t xs32(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 17;
	xs_state ^= xs_state << 5;
	return xs_state;
}

/* flowhash.h on its own: symmetry, direction, spread. */
static int test_flowhash(void)
{
	unsigned int buckets[16] = { 0 }, same = 0, i, j;
	__u32 s6[4], d6[4];

	for (i = 0; i < 100000; i++) {
		__u32 s = xs32(), d = xs32();
		__u16 sp = xs32(), dp = xs32();
		__u8 proto = xs32();

		UT_ASSERT(ucm_flow_hash_v4(s, d, sp, dp, proto, 1) ==
			  ucm_flow_hash_v4(d, s, dp, sp, proto, 1), "v4 sym");
		UT_ASSERT(ucm_flow_hash_v4(s, d, sp, dp, proto, 0), "zero");
		same += ucm_flow_hash_v4(s, d, sp, dp, proto, 0) ==
			ucm_flow_hash_v4(d, s, dp, sp, proto, 0);
	}
	UT_ASSERT(same <= 2, "v4 plain hash symmetric %u times", same);

	for (i = same = 0; i < 20000; i++) {
		__u16 sp = xs32(), dp = xs32();

		for (j = 0; j < 4; j++) {
			s6[j] = xs32();
			d6[j] = i & 1 ? s6[j] : xs32();
		}
		/* Odd rounds: same high words, differing only in the last. */
		if (i & 1)
			d6[3] ^= 1;
		UT_ASSERT(ucm_flow_hash_v6(s6, d6, sp, dp, 6, 1) ==
			  ucm_flow_hash_v6(d6, s6, dp, sp, 6, 1), "v6 sym");
		same += ucm_flow_hash_v6(s6, d6, sp, dp, 6, 0) ==
			ucm_flow_hash_v6(d6, s6, dp, sp, 6, 0);
	}
	UT_ASSERT(same <= 2, "v6 plain hash symmetric %u times", same);

	/* Equal addresses: the ports decide the order. */
	UT_ASSERT(ucm_flow_hash_v4(7, 7, 1, 2, 17, 1) ==
		  ucm_flow_hash_v4(7, 7, 2, 1, 17, 1), "v4 tie-break");
	UT_ASSERT(ucm_flow_hash_v4(7, 7, 1, 2, 17, 0) !=
		  ucm_flow_hash_v4(7, 7, 2, 1, 17, 0), "v4 tie plain");
	UT_ASSERT(ucm_flow_hash_v6(s6, s6, 1, 2, 17, 1) ==
		  ucm_flow_hash_v6(s6, s6, 2, 1, 17, 1), "v6 tie-break");
	UT_ASSERT(ucm_flow_hash_v4(1, 2, 3, 4, IPPROTO_TCP, 0) !=
		  ucm_flow_hash_v4(1, 2, 3, 4, IPPROTO_UDP, 0), "proto");

	/* Sequential source ports (a typical client) spread evenly. */
	for (i = 0; i < 65536; i++)
		buckets[ucm_flow_hash_v4(htonl(0x0a000001), htonl(0x0a000002),
					 htons(i), htons(80), 6, 1) & 15]++;
	for (i = 0; i < 16; i++)
		UT_ASSERT(buckets[i] > 4096 * 9 / 10 &&
			  buckets[i] < 4096 * 11 / 10, "bucket %u: %u", i,
			  buckets[i]);
	return 0;
}

static int test_drop_reason_str(void)
{
	const char *names[UCM_DROP__MAX];
	const char *c;
	int i, j;

	for (i = 0; i < UCM_DROP__MAX; i++) {
		names[i] = ucm_drop_reason_str(i);
		UT_ASSERT(names[i] && names[i][0], "reason %d: no name", i);
		UT_ASSERT(strcmp(names[i], "unknown"), "reason %d: unknown", i);
		for (c = names[i]; *c; c++)
			UT_ASSERT(islower((unsigned char)*c) ||
				  isdigit((unsigned char)*c) || *c == '_',
				  "reason %d: \"%s\" is not snake_case", i,
				  names[i]);
		for (j = 0; j < i; j++)
			UT_ASSERT(strcmp(names[i], names[j]),
				  "reasons %d and %d both \"%s\"", j, i,
				  names[i]);
	}
	UT_ASSERT(!strcmp(ucm_drop_reason_str(UCM_DROP_NONE), "none"), "none");
	UT_ASSERT(!strcmp(ucm_drop_reason_str(UCM_DROP_RUNT), "runt"), "runt");
	UT_ASSERT(!strcmp(ucm_drop_reason_str(UCM_DROP_NON_IP), "non_ip"),
		  "non_ip");
	UT_ASSERT(!strcmp(ucm_drop_reason_str(UCM_DROP__MAX), "unknown"),
		  "__MAX");
	UT_ASSERT(!strcmp(ucm_drop_reason_str((enum ucm_drop_reason)1000),
			  "unknown"), "1000");
	UT_ASSERT(!strcmp(ucm_drop_reason_str((enum ucm_drop_reason)-1),
			  "unknown"), "-1");
	return 0;
}

/* ---- the first frame of a packet of several ---------------------------- */

/*
 * ucm_pkt_parse_head() of frame @f with only its first @rd bytes at hand,
 * from an exact-size heap copy of them: ASan sees a read past @rd.
 * UCM_DROP__MAX when there is no memory.
 */
static enum ucm_drop_reason parse_head_fb(const struct fb *f, uint32_t rd,
					  struct ucm_pkt *pkt)
{
	uint32_t n = rd < f->len ? rd : f->len;
	enum ucm_drop_reason ret;
	uint8_t *buf = malloc(n);

	if (!buf && n)
		return UCM_DROP__MAX;
	if (n)
		memcpy(buf, f->buf, n);
	memset(pkt, 0xee, sizeof(*pkt));
	ret = ucm_pkt_parse_head(pkt, buf, rd, f->len);
	free(buf);
	return ret;
}

/* Packets whose payload a first frame need not hold. */
static void h_ipv4_udp(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_UDP);
	fb_udp(f, 1234, 53);
	fb_raw(f, 1400);
	fb_done(f);
}

static void h_ipv4_tcp(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_TCP, 8, 0x4000 /* DF */);
	fb_tcp(f, 40000, 80, 12);
	fb_raw(f, 1400);
	fb_done(f);
}

static void h_ipv6_udp(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_UDP);
	fb_udp(f, 1234, 53);
	fb_raw(f, 1400);
	fb_done(f);
}

static void h_vlan_ipv6_ext_tcp(struct fb *f)
{
	fb_eth(f, ETH_P_8021Q);
	fb_vlan(f, 0x2064, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_HOPOPTS);
	fb_ext6(f, IPPROTO_HOPOPTS, IPPROTO_TCP, 16);
	fb_tcp(f, 50000, 22, 12);
	fb_raw(f, 1400);
	fb_done(f);
}

/* A jumbo ping: the 8-byte ICMP header, then the payload. */
static void h_ipv4_icmp(struct fb *f)
{
	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_ICMP);
	fb_icmp(f, 8);
	fb_raw(f, 1400);
	fb_done(f);
}

/* ICMPv6 echo: the parser takes 4 bytes of its header. */
static void h_ipv6_icmp6(struct fb *f)
{
	fb_eth(f, ETH_P_IPV6);
	fb_ipv6(f, IPPROTO_ICMPV6);
	fb_icmp(f, 128);
	fb_raw(f, 1400);
	fb_done(f);
}

/* 40 bytes of options, a loose source route last: the parser reads them
 * all for UCM_PKT_F_SRCROUTE. */
static void h_ipv4_lsrr_udp(struct fb *f)
{
	uint8_t *o;

	fb_eth(f, ETH_P_IP);
	fb_ipv4_full(f, IPPROTO_UDP, 40, 0);
	o = f->buf + f->l4 - 11;	/* NOPs, then LSRR of two hops */
	o[0] = 131;
	o[1] = 11;
	o[2] = 4;
	wr32(o + 3, 0x0a000003);
	wr32(o + 7, 0x0a000004);
	fb_udp(f, 1234, 53);
	fb_raw(f, 1400);
	fb_done(f);
}

/* A protocol whose header the parser does not look at: headers end with
 * the IP header's. */
static void h_ipv4_gre(struct fb *f)
{
	uint8_t *p;

	fb_eth(f, ETH_P_IP);
	fb_ipv4(f, IPPROTO_GRE);
	p = fb_put(f, 4);	/* GRE: no flags, carrying IPv4 */
	wr16(p + 2, ETH_P_IP);
	fb_raw(f, 1400);
	fb_done(f);
}

/* The flags a row's whole parse must have, of these. */
#define HEAD_FLAGS	(UCM_PKT_F_L4 | UCM_PKT_F_PORTS | UCM_PKT_F_IP_OPTS | \
			 UCM_PKT_F_SRCROUTE)

static const struct {
	const char *name;
	void (*build)(struct fb *f);
	/* The network header's last bytes the parser does not read: of an
	 * extension header, only its first 8 (next header, length). */
	uint32_t l3_unread;
	uint32_t flags;		/* of HEAD_FLAGS */
} head_rows[] = {
	{ "ipv4_udp", h_ipv4_udp, 0, UCM_PKT_F_L4 | UCM_PKT_F_PORTS },
	{ "ipv4_tcp", h_ipv4_tcp, 0, UCM_PKT_F_L4 | UCM_PKT_F_PORTS | UCM_PKT_F_IP_OPTS },
	{ "ipv6_udp", h_ipv6_udp, 0, UCM_PKT_F_L4 | UCM_PKT_F_PORTS },
	{ "vlan_ipv6_ext_tcp", h_vlan_ipv6_ext_tcp, 8, UCM_PKT_F_L4 | UCM_PKT_F_PORTS },
	/* Headers with no ports: whole at l4_off + l4_hlen all the same. */
	{ "ipv4_icmp", h_ipv4_icmp, 0, UCM_PKT_F_L4 },
	{ "ipv6_icmp6", h_ipv6_icmp6, 0, UCM_PKT_F_L4 },
	{ "ipv4_lsrr_udp", h_ipv4_lsrr_udp, 0,
	  UCM_PKT_F_L4 | UCM_PKT_F_PORTS | UCM_PKT_F_IP_OPTS | UCM_PKT_F_SRCROUTE },
	/* No L4 header: whole at l4_off. */
	{ "ipv4_gre", h_ipv4_gre, 0, 0 },
};

/*
 * Packet @f with its first @rd bytes at hand, against @full, its whole
 * parse: short of its headers a truncation (L3 short of @l3_need, L4
 * after); from there on the whole packet's parse, lengths from len, hash
 * and all, marked partial while rd < len.
 */
static int head_check(const char *n, const struct fb *f,
		      const struct ucm_pkt *full, uint32_t rd, uint32_t l3_need)
{
	enum ucm_drop_reason ret, want;
	struct ucm_pkt pkt;

	ret = parse_head_fb(f, rd, &pkt);
	if (rd < full->l4_off + full->l4_hlen) {
		want = rd < l3_need ? UCM_DROP_L3_TRUNC : UCM_DROP_L4_TRUNC;
		UT_ASSERT(ret == want, "%s/%u: got %s, want %s", n, rd,
			  RS(ret), RS(want));
		return 0;
	}
	UT_ASSERT(ret == UCM_DROP_NONE, "%s/%u: got %s", n, rd, RS(ret));
	if (rd < f->len) {
		UT_ASSERT(pkt.flags == (full->flags | UCM_PKT_F_PARTIAL),
			  "%s/%u: flags %#x", n, rd, pkt.flags);
		UT_ASSERT(pkt.len == f->len && pkt.l3_len == f->l3_len,
			  "%s/%u: len %u, l3_len %u", n, rd, pkt.len,
			  pkt.l3_len);
		UT_ASSERT(pkt.hash == full->hash &&
			  pkt.hash_sym == full->hash_sym,
			  "%s/%u: hash %#x", n, rd, pkt.hash);
		pkt.flags &= ~UCM_PKT_F_PARTIAL;
	}
	/* rd >= len: the whole packet's parse to the byte. */
	UT_ASSERT(!memcmp(&pkt, full, sizeof(pkt)),
		  "%s/%u: descriptor differs", n, rd);
	return 0;
}

/* Each packet with its first rd bytes at hand, rd from 0 to past its end
 * (UINT32_MAX too: any rd past len is len). */
static int test_head_partial(void)
{
	uint32_t rd, l3_need;
	struct ucm_pkt full;
	size_t t;

	for (t = 0; t < ARRAY_SIZE(head_rows); t++) {
		const char *n = head_rows[t].name;
		struct fb f;

		fb_init(&f);
		head_rows[t].build(&f);
		UT_ASSERT(!ucm_pkt__parse(&full, f.buf, f.len), "%s", n);
		UT_ASSERT((full.flags & HEAD_FLAGS) == head_rows[t].flags,
			  "%s: flags %#x, want %#x of %#x", n, full.flags,
			  head_rows[t].flags, HEAD_FLAGS);
		l3_need = f.l4 - head_rows[t].l3_unread;
		for (rd = 0; rd <= f.len + 2; rd++)
			if (head_check(n, &f, &full, rd, l3_need))
				return 1;
		if (head_check(n, &f, &full, UINT32_MAX, l3_need))
			return 1;
	}
	return 0;
}

/* A chain of IPv6 extension headers that breaks off before rd ends:
 * L3_TRUNC wherever it breaks; their lengths checked against len. */
static int test_head_ipv6_ext(void)
{
	/* rd less the network header's offset, and what it gives. */
	static const struct {
		uint32_t rd;
		enum ucm_drop_reason want;
	} cut[] = {
		{ 40, UCM_DROP_L3_TRUNC },	/* no extension header */
		{ 47, UCM_DROP_L3_TRUNC },	/* the first but a byte */
		{ 48 + 7, UCM_DROP_L3_TRUNC },	/* 7 of the second */
		{ 64, UCM_DROP_L3_TRUNC },	/* none of the third */
		/* The third's first 8 bytes: all the parser reads of it. */
		{ 64 + 8, UCM_DROP_L4_TRUNC },
		{ 88 + 7, UCM_DROP_L4_TRUNC },
		{ 88 + 8, UCM_DROP_NONE },	/* the last */
	};
	enum ucm_drop_reason ret;
	struct ucm_pkt pkt;
	struct fb f;
	size_t i;

	fb_init(&f);
	fb_eth(&f, ETH_P_IPV6);
	fb_ipv6(&f, IPPROTO_HOPOPTS);
	fb_ext6(&f, IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, 8);	/* at 40 */
	fb_ext6(&f, IPPROTO_DSTOPTS, IPPROTO_ROUTING, 16);	/* 48 */
	fb_ext6(&f, IPPROTO_ROUTING, IPPROTO_UDP, 24);		/* 64 */
	fb_udp(&f, 3000, 4000);					/* 88 */
	fb_raw(&f, 1000);
	fb_done(&f);

	for (i = 0; i < ARRAY_SIZE(cut); i++) {
		ret = parse_head_fb(&f, f.l3 + cut[i].rd, &pkt);
		UT_ASSERT(ret == cut[i].want, "rd %u: got %s, want %s",
			  f.l3 + cut[i].rd, RS(ret), RS(cut[i].want));
	}
	UT_ASSERT(pkt.flags == (V6 | EXT | L4 | PORTS | UCM_PKT_F_PARTIAL) &&
		  pkt.l4_off == f.l3 + 88, "flags %#x, l4_off %u", pkt.flags,
		  pkt.l4_off);

	/* The third's length past the packet's end, its tail not at hand:
	 * a bad extension header, as in the whole packet. */
	f.buf[f.l3 + 64 + 1] = 255;
	ret = parse_head_fb(&f, f.l3 + 72, &pkt);
	UT_ASSERT(ret == UCM_DROP_IPV6_EXT, "got %s", RS(ret));
	UT_ASSERT(ucm_pkt__parse(&pkt, f.buf, f.len) == UCM_DROP_IPV6_EXT,
		  "whole");
	return 0;
}

/*
 * The lengths a first frame's headers give are checked against the whole
 * packet's len, not against rd: an IP length past len is IP_LEN, a UDP
 * length past the datagram L4_HDR, as for the whole packet; a packet
 * shorter than an Ethernet header a runt whatever rd says.
 */
static int test_head_lengths(void)
{
	const uint32_t rd = 100;	/* every header, no payload */
	enum ucm_drop_reason ret;
	struct ucm_pkt pkt;
	struct fb f;

	fb_init(&f);
	h_ipv4_udp(&f);
	fb_set16(&f, f.l3 + 2, f.l3_len + 1);
	ret = parse_head_fb(&f, rd, &pkt);
	UT_ASSERT(ret == UCM_DROP_IP_LEN, "ipv4: got %s", RS(ret));
	UT_ASSERT(ucm_pkt__parse(&pkt, f.buf, f.len) == ret, "ipv4: whole");

	/* Ethernet padding after the datagram is fine. */
	fb_set16(&f, f.l3 + 2, f.l3_len);
	fb_pad_to(&f, f.len + 40);
	ret = parse_head_fb(&f, rd, &pkt);
	UT_ASSERT(ret == UCM_DROP_NONE && pkt.l3_len == f.l3_len &&
		  pkt.len == f.len, "padded: got %s, l3_len %u", RS(ret),
		  pkt.l3_len);

	fb_init(&f);
	h_ipv6_udp(&f);
	fb_set16(&f, f.l3 + 4, f.l3_len - 40 + 1);
	ret = parse_head_fb(&f, rd, &pkt);
	UT_ASSERT(ret == UCM_DROP_IP_LEN, "ipv6: got %s", RS(ret));
	UT_ASSERT(ucm_pkt__parse(&pkt, f.buf, f.len) == ret, "ipv6: whole");

	fb_init(&f);
	h_ipv4_udp(&f);
	fb_set16(&f, f.udp + 4, f.len - f.udp + 1);
	ret = parse_head_fb(&f, rd, &pkt);
	UT_ASSERT(ret == UCM_DROP_L4_HDR, "udp: got %s", RS(ret));
	UT_ASSERT(ucm_pkt__parse(&pkt, f.buf, f.len) == ret, "udp: whole");

	fb_init(&f);
	fb_raw(&f, ETH_HLEN - 1);
	ret = parse_head_fb(&f, rd, &pkt);
	UT_ASSERT(ret == UCM_DROP_RUNT, "runt: got %s", RS(ret));
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_eth_vlan),
	UT_CASE(test_ipv4),
	UT_CASE(test_ipv6),
	UT_CASE(test_l4),
	UT_CASE(test_sizes),
	UT_CASE(test_no_overread),
	UT_CASE(test_unaligned),
	UT_CASE(test_oversize),
	UT_CASE(test_hash_flows),
	UT_CASE(test_hash_frags),
	UT_CASE(test_flowhash),
	UT_CASE(test_drop_reason_str),
	UT_CASE(test_head_partial),
	UT_CASE(test_head_ipv6_ext),
	UT_CASE(test_head_lengths),
	{}
};

/* Seeds for tests/fuzz/fuzz-pkt.c: every table frame, one file each. */
static int write_corpus(const char *dir)
{
	char path[4096];
	size_t t, i;
	FILE *out;

	for (t = 0; t < ARRAY_SIZE(all_tables); t++) {
		for (i = 0; i < all_tables[t].n; i++) {
			const struct row *r = &all_tables[t].rows[i];
			struct fb f;

			fb_init(&f);
			r->build(&f);
			snprintf(path, sizeof(path), "%s/%s", dir, r->name);
			out = fopen(path, "wb");
			if (!out || fwrite(f.buf, 1, f.len, out) != f.len) {
				perror(path);
				if (out)
					fclose(out);
				return 1;
			}
			fclose(out);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-corpus"))
		return write_corpus(argv[2]);
	return ut_main(argc, argv, cases);
}
