/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The proto layer's private interface: what gso.c lends the io layer's
 * write path, beside the public gso.h. */
#ifndef UCM_PROTO_H
#define UCM_PROTO_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "ucpumap/gso.h"
#include "core/internal.h"
#include "ucpumap/csum.h"
#include "ucpumap/pkt.h"

struct ucm_pkt;

/* ucm_pkt__parse() of a packet of @len bytes of which only the first @rd
 * are at @data (the first frame of a packet of several): the lengths are
 * checked against @len, the headers must lie in the @rd (else
 * UCM_DROP_L3_TRUNC or UCM_DROP_L4_TRUNC). */
enum ucm_drop_reason ucm_pkt_parse_head(struct ucm_pkt *pkt, const void *data,
					uint32_t rd, uint32_t len);

/* What ucm_gso__build() overwrites in a group's first packet and cannot
 * work out again (the L4 check field, TCP's flags), saved before it and
 * put back with the lengths by ucm_gso_restore(). */
struct ucm_gso_undo {
	uint16_t check;		/* as stored: network order */
	uint8_t tflags;
};
void ucm_gso_save(const struct ucm_pkt *pkt, const uint8_t *data,
		  struct ucm_gso_undo *u);
void ucm_gso_restore(const struct ucm_pkt *pkt, uint8_t *data,
		     const struct ucm_gso_undo *u);

/* A packet of several frames, for ucm_gso_plan_frags(): @head bytes of it at
 * its data[] (the first frame's), the rest in @n later parts. */
#define UCM_GSO_FRAGS_MAX	17	/* UCM_FRAME_CHAIN_MAX */
struct ucm_gso_frags {
	uint32_t head;
	uint32_t n;
	const uint8_t *part[UCM_GSO_FRAGS_MAX];
	uint32_t len[UCM_GSO_FRAGS_MAX];
};

/* ucm_gso__plan() where some packets are of several frames: @frags[i]
 * says where packet i's bytes lie (NULL: all at data[i], as @frags NULL
 * says of every packet). A packet of several frames merges as any other
 * (its checksum summed over its parts); one marked UCM_PKT_F_PARTIAL
 * without its parts goes alone. */
int ucm_gso_plan_frags(const struct ucm_pkt *const *pkts, const uint8_t *const *data,
		       const struct ucm_gso_frags *const *frags, uint32_t n, uint32_t flags,
		       struct ucm_gso_plan *plan);
/* Where the L4 checksum sits in its header: TCP's at 16, UDP's at 6. */
static inline uint32_t ucm_l4_check_off(uint8_t l4_proto)
{
	return l4_proto == IPPROTO_TCP ? 16 : 6;
}


/* IPv4 option types (RFC 791): the list's end, a no-op, the source routes */
#define UCM_IPV4_OPT_END	0
#define UCM_IPV4_OPT_NOOP	1
#define UCM_IPV4_OPT_LSRR	131
#define UCM_IPV4_OPT_SSRR	137

/* Whether the @len bytes of IPv4 options at @o hold a loose or strict
 * source route: the sender's pseudo-header then has the route's last
 * address, not the header's. A malformed list ends the look (the
 * kernel's stack judges it). */
static inline bool ucm_ipv4_srcroute(const uint8_t *o, uint32_t len)
{
	uint32_t i = 0;

	while (i < len && o[i] != UCM_IPV4_OPT_END) {
		if (o[i] == UCM_IPV4_OPT_NOOP) {
			i++;
			continue;
		}
		if (i + 1 >= len || o[i + 1] < 2)
			break;
		if (o[i] == UCM_IPV4_OPT_LSRR || o[i] == UCM_IPV4_OPT_SSRR)
			return true;
		i += o[i + 1];
	}
	return false;
}

/* The pseudo-header's sum: addresses, protocol, L4 length (@ip: the IP
 * header). */
static inline uint32_t ucm_pseudo_sum(const uint8_t *ip, bool v6, uint8_t proto,
				      uint32_t l4len)
{
	const uint8_t ph[4] = { 0, proto, l4len >> 8, l4len & 0xff };

	return ucm_csum_add(ucm_csum_add(0, v6 ? ip + 8 : ip + 12, v6 ? 32 : 8), ph, 4);
}

/* A sum folded, not inverted: what a partial checksum's field holds. */
static inline uint16_t ucm_csum_folded(uint32_t sum)
{
	uint16_t inv = ucm_csum_fold(sum);

	return (uint16_t)~inv;
}

/*
 * A partial checksum (the kernel's CHECKSUM_PARTIAL): the TCP or UDP
 * checksum field of the packet at @data holds the pseudo-header's folded
 * sum, not inverted, and the segment is left for someone to add. A sender
 * whose device has TX checksum offload (a veth's default) leaves it so;
 * AF_XDP hands the packet over as it is. Header bytes only: the addresses
 * and the field, never the payload, so a packet of several frames (its
 * headers in the first) is judged alike.
 *
 * False for a fragment (the kernel completes a checksum before it
 * fragments), for a UDP field of 0 (IPv4's "no checksum": a pseudo-header
 * sum is never 0, its protocol word is not), and where the sender's
 * pseudo-header is not this header's (an IPv4 source route, an IPv6
 * routing header with segments left: UCM_PKT_F_SRCROUTE), and for a UDP
 * length short of the datagram (the kernel would sum the bytes past it:
 * a full checksum that looked partial would come out wrong; tun.c holds
 * a tap's frame with bytes past its datagram to the same): left as they
 * came. A correct full checksum F that
 * equals the pseudo-header sum P (one packet in 2^16) is true too, and
 * harmless: correct, P + S + F = -0 (S: the segment's sum but the field),
 * so F = ~(P + S); the kernel completes it as ~(F + S) = ~(P + S) = F,
 * the value it had (tests/unit/test-gso.c shows it). The price: a
 * corrupted packet whose field holds exactly P is made good.
 */
static inline bool ucm_l4_csum_partial(const struct ucm_pkt *pkt, const uint8_t *data)
{
	const uint8_t *ip = data + pkt->l3_off, *l4 = data + pkt->l4_off;
	uint8_t ph[4] = { 0, pkt->l4_proto };
	uint32_t l4len, w;
	uint64_t acc = 0;
	uint16_t field;
	int i;

	/* PORTS: TCP or UDP, its header within what was read. */
	if ((pkt->flags & (UCM_PKT_F_PORTS | UCM_PKT_F_FRAG | UCM_PKT_F_SRCROUTE)) !=
	    UCM_PKT_F_PORTS)
		return false;
	/* The rest of the datagram, which the kernel's completion sums. */
	l4len = pkt->l3_len - (pkt->l4_off - pkt->l3_off);
	if (pkt->l4_proto == IPPROTO_UDP && ld_be16(l4 + 4) != l4len)
		return false;
	st_be16(ph + 2, l4len);
	/*
	 * ucm_pseudo_sum() unrolled, in native order throughout: every
	 * packet of the tun's write path pays for this, where the generic
	 * sum's loops and folds doubled its cost. The one's complement sum
	 * does not depend on byte order (ucm_csum_add()), so the native sum
	 * folded equals the field loaded in native order.
	 */
	memcpy(&w, ph, 4);
	acc = w;
	for (i = 0; i < (pkt->flags & UCM_PKT_F_IPV6 ? 8 : 2); i++) {
		memcpy(&w, ip + (pkt->flags & UCM_PKT_F_IPV6 ? 8 : 12) + 4 * i, 4);
		acc += w;
	}
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	memcpy(&field, l4 + ucm_l4_check_off(pkt->l4_proto), 2);
	return field == (uint16_t)acc;
}

#endif /* UCM_PROTO_H */
