// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The frame parser on arbitrary bytes (`make fuzz`; the seeds in
 * tests/fuzz/corpus/fuzz-pkt/, more from `build/tests/test-pkt --write-corpus
 * DIR`, one file per frame of its tables). The frame is an exact-size heap
 * copy (ASan sees a read past it).
 *
 * Oracle: a reason the parser may give; on success every offset within
 * the frame and the flags consistent (check()), the VLAN tags and the
 * offsets the bytes' own (check_l2(), check_l3(): the transport header at
 * the IHL, or 40 bytes into an IPv6 header without extensions), and a
 * second parse the same.
 *
 * Then the frame as a packet of several frames of which only the first
 * rd bytes are at hand (ucm_pkt_parse_head()), rd the frame's last two
 * bytes, host order, mod its length + 1, in a block of exactly rd bytes
 * (ASan sees a read past rd): the whole frame's parse, UCM_PKT_F_PARTIAL
 * apart, its transport header (UCM_PKT_F_L4) within rd, or a header not
 * at hand (L3_TRUNC, L4_TRUNC, only while rd < len); an rd past len the
 * whole frame's parse to the byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/if_ether.h>

#include "ucpumap/pkt.h"
#include "proto/proto.h"
#include "fuzz.h"

/* Header size the flags promise fits at l4_off, recomputed independently. */
static uint32_t l4_min(const struct ucm_pkt *pkt, const uint8_t *data)
{
	switch (pkt->l4_proto) {
	case IPPROTO_UDP:
		return 8;
	case IPPROTO_TCP:
		CHECK(pkt->l4_off + 20u <= pkt->len);
		return (data[pkt->l4_off + 12] >> 4) * 4;
	case IPPROTO_ICMP:
		return 8;
	case IPPROTO_ICMPV6:
		return 4;
	default:
		abort();	/* L4 set for a protocol we don't parse */
	}
}

/*
 * The tags are where the parser read them: tag i's TPID at 12 + 4 * i and
 * its TCI after it, outermost first, and the EtherType past the last one
 * is eth_proto.
 */
static void check_l2(const struct ucm_pkt *pkt, const uint8_t *data)
{
	uint32_t i, tpid;

	for (i = 0; i < pkt->nvlan; i++) {
		tpid = ld_be16(data + 12 + 4 * i);
		CHECK(tpid == ETH_P_8021Q || tpid == ETH_P_8021AD);
		CHECK(pkt->vlan_tci[i] == ld_be16(data + 14 + 4 * i));
	}
	CHECK(pkt->eth_proto == ld_be16(data + 12 + 4 * pkt->nvlan));
}

/*
 * Where the IP header says its payload starts, from the header's bytes,
 * not the parse: IPv4 at IHL * 4 (with options or not, a fragment or
 * not: pkt.h's l4_off is "where the IP payload proper starts" for every
 * IP packet), and options exactly when the IHL is over 5; IPv6 at 40
 * without extension headers, the next header byte then being l4_proto,
 * and past at least one 8-byte one with them. A transport header found
 * at a wrong place (ports read from options) fails here.
 */
static void check_l3(const struct ucm_pkt *pkt, const uint8_t *data)
{
	const uint8_t *ip = data + pkt->l3_off;
	uint32_t ihl;

	if (pkt->flags & UCM_PKT_F_IPV4) {
		ihl = (ip[0] & 0xf) * 4u;
		CHECK(ip[0] >> 4 == 4);
		CHECK(pkt->l4_off == pkt->l3_off + ihl);
		CHECK(!(pkt->flags & UCM_PKT_F_IP_OPTS) == (ihl == 20));
		CHECK(pkt->l4_proto == ip[9]);
		CHECK(pkt->l3_len == ld_be16(ip + 2));
		return;
	}
	CHECK(ip[0] >> 4 == 6);
	CHECK(pkt->l3_len == 40 + ld_be16(ip + 4));
	if (pkt->flags & UCM_PKT_F_IPV6_EXT) {
		CHECK(pkt->l4_off >= pkt->l3_off + 40 + 8);
	} else {
		CHECK(pkt->l4_off == pkt->l3_off + 40);
		CHECK(pkt->l4_proto == ip[6]);
		/* Only a fragment header makes a fragment. */
		CHECK(!(pkt->flags & UCM_PKT_F_FRAG));
	}
}

static void check(const struct ucm_pkt *pkt, const uint8_t *data,
		  uint32_t len)
{
	uint32_t l3_end = pkt->l3_off + pkt->l3_len;
	uint16_t f = pkt->flags;
	int ip = !!(f & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6));

	CHECK(pkt->len == len);
	CHECK(pkt->l3_off >= ETH_HLEN && pkt->l3_off <= len);
	CHECK(pkt->l3_off == ETH_HLEN + 4 * pkt->nvlan);
	CHECK(pkt->nvlan <= UCM_VLAN_MAX_DEPTH);
	CHECK(pkt->l4_off <= len);
	CHECK(l3_end <= len);
	CHECK(!((f & UCM_PKT_F_IPV4) && (f & UCM_PKT_F_IPV6)));
	check_l2(pkt, data);

	if (!ip) {
		/* Non-IP: nothing beyond the link layer is claimed. */
		CHECK(f == 0 && !pkt->l4_proto && !pkt->l3_len &&
		      !pkt->l4_off && !pkt->hash && !pkt->hash_sym);
		CHECK(pkt->eth_proto != ETH_P_IP &&
		      pkt->eth_proto != ETH_P_IPV6);
		return;
	}

	CHECK(pkt->eth_proto == ((f & UCM_PKT_F_IPV4) ? ETH_P_IP :
				 ETH_P_IPV6));
	CHECK(pkt->l3_len >= ((f & UCM_PKT_F_IPV4) ? 20 : 40));
	CHECK(pkt->l4_off >= pkt->l3_off + 20 && pkt->l4_off <= l3_end);
	CHECK(pkt->hash && pkt->hash_sym);
	if (f & UCM_PKT_F_FRAG_FIRST)
		CHECK(f & UCM_PKT_F_FRAG);
	if (f & UCM_PKT_F_IP_OPTS)
		CHECK(f & UCM_PKT_F_IPV4);
	if (f & UCM_PKT_F_IPV6_EXT)
		CHECK(f & UCM_PKT_F_IPV6);
	check_l3(pkt, data);
	if (f & UCM_PKT_F_PORTS) {
		CHECK((f & UCM_PKT_F_L4) && (pkt->l4_proto == IPPROTO_UDP ||
					     pkt->l4_proto == IPPROTO_TCP));
		/* The ports the hash took are the header's own bytes. */
		CHECK(pkt->sport == ld_be16(data + pkt->l4_off) &&
		      pkt->dport == ld_be16(data + pkt->l4_off + 2));
	}
	/* A later fragment carries no transport header. */
	if ((f & UCM_PKT_F_FRAG) && !(f & UCM_PKT_F_FRAG_FIRST))
		CHECK(!(f & UCM_PKT_F_L4));

	if (f & UCM_PKT_F_L4) {
		uint32_t need = l4_min(pkt, data);

		CHECK(need >= 4 && pkt->l4_hlen == need);
		CHECK(pkt->l4_off + need <= l3_end);
	} else {
		CHECK(!pkt->sport && !pkt->dport);
	}
}

/*
 * ucm_pkt_parse_head() of frame @buf (@len bytes) with its first @rd at
 * hand, against @whole, the whole frame's parse, which gave @wret.
 */
static void check_head(const uint8_t *buf, uint32_t rd, uint32_t len,
		       const struct ucm_pkt *whole, enum ucm_drop_reason wret)
{
	uint32_t n = rd < len ? rd : len;
	enum ucm_drop_reason ret;
	struct ucm_pkt pkt;
	uint8_t *head;

	head = malloc(n);
	if (!head && n)
		return;
	if (n)
		memcpy(head, buf, n);
	ret = ucm_pkt_parse_head(&pkt, head, rd, len);
	free(head);
	if (rd < len && (ret == UCM_DROP_L3_TRUNC || ret == UCM_DROP_L4_TRUNC))
		return;
	CHECK(ret == wret);
	if (ret != UCM_DROP_NONE)
		return;
	CHECK(!(pkt.flags & UCM_PKT_F_PARTIAL) == (rd >= len));
	/* The parse took a header whose bytes it could not read. */
	if (pkt.flags & UCM_PKT_F_L4)
		CHECK((uint32_t)pkt.l4_off + pkt.l4_hlen <= n);
	pkt.flags &= ~UCM_PKT_F_PARTIAL;
	CHECK(!memcmp(&pkt, whole, sizeof(pkt)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ucm_pkt pkt, again;
	enum ucm_drop_reason ret;
	uint8_t *buf;
	uint32_t rd;

	if (size > UINT16_MAX)
		return 0;
	/* libFuzzer's buffer may have slack; an exact copy has none. */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	ret = ucm_pkt__parse(&pkt, buf, size);
	CHECK((unsigned int)ret < UCM_DROP__MAX);
	/* The parser only returns its own reasons. */
	CHECK(ret != UCM_DROP_NON_IP && ret != UCM_DROP_ENQUEUE_FULL &&
	      ret != UCM_DROP_SINK && ret != UCM_DROP_FRAME_BOUNDS &&
	      ret != UCM_DROP_OVERSIZE);
	if (ret == UCM_DROP_NONE) {
		check(&pkt, buf, size);
		/* Deterministic: a second parse gives the same descriptor. */
		CHECK(ucm_pkt__parse(&again, buf, size) == UCM_DROP_NONE);
		CHECK(!memcmp(&pkt, &again, sizeof(pkt)));
	}
	rd = size < 2 ? 0 : (buf[size - 2] | buf[size - 1] << 8) % (size + 1);
	check_head(buf, rd, size, &pkt, ret);
	check_head(buf, UINT32_MAX, size, &pkt, ret);
	free(buf);
	return 0;
}
