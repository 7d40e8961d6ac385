// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * UDP and TCP coalescing plan and super-packet headers (see ucpumap/gso.h
 * for the rules). A flow has at most one open group, its latest; each
 * packet finds it through a bucket of its flow hash (the latest group of
 * the bucket first, then older ones), so a hand-over of many flows costs
 * no scan of every group.
 */
#include <string.h>
#include <netinet/in.h>

#include "core/internal.h"
#include "proto/proto.h"
#include "ucpumap/csum.h"
#include "ucpumap/gso.h"

#define TCP_HLEN	20	/* without options */

/* TCP flags (byte 13 of the header) */
#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_RST		0x04
#define TCP_PSH		0x08
#define TCP_URG		0x20
#define TCP_CWR		0x80
/* A segment with one of these never merges: it goes alone, as the
 * kernel's GRO lets it through (SYN, RST, URG, CWR) or as the issue's
 * rules keep it (FIN: the end of the stream, rare and not worth merging). */
#define TCP_ALONE	(TCP_FIN | TCP_SYN | TCP_RST | TCP_URG | TCP_CWR)

/* What a packet brings to the merge test, read once. */
struct seg {
	const uint8_t *ip;
	const uint8_t *l4;
	const uint8_t *eth;	/* UCM_GSO_F_L2: the Ethernet header */
	uint32_t hash;		/* the flow hash: a cheap first test */
	uint32_t payload;	/* UDP/TCP payload bytes */
	uint32_t tseq;		/* TCP sequence number */
	uint16_t l4len;		/* L4 header and payload */
	uint16_t hlen;		/* L4 header length */
	uint16_t id;		/* IPv4 ID */
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t tflags;		/* TCP flags */
	/* A packet of several frames: its parts, and its L4 bytes in the
	 * first frame (the headers always). NULL: all at @l4. */
	const struct ucm_gso_frags *fr;
	uint32_t l4head;
	bool v6, df, ports;
	bool frag;		/* hashed on addresses and protocol only */
	bool elig;		/* its kind and headers allow merging */
	int8_t good;		/* checksums: 1 right, -1 wrong, 0 not looked at yet */
};

/* The L4 bytes of a packet of several frames added to @sum: the first
 * frame's, then each part's, a part that starts at an odd offset of the
 * segment swapped (RFC 1071, 2.(B)). */
static uint32_t sum_parts(const struct seg *s, uint32_t sum)
{
	uint32_t off = s->l4head, left = s->l4len - s->l4head, i, l, part;

	sum = ucm_csum_add(sum, s->l4, s->l4head);
	for (i = 0; i < s->fr->n && left; i++) {
		l = s->fr->len[i] < left ? s->fr->len[i] : left;
		part = ucm_csum_add(0, s->fr->part[i], l);
		if (off & 1)
			part = ((part & 0xff) << 8) | ((part >> 8) & 0xff);
		sum += part;
		off += l;
		left -= l;
	}
	return sum;
}

/*
 * The packet's checksums are right: the IPv4 header's (the kernel's GRO
 * and ip_rcv() drop a bad one; a super-packet's is rewritten, so it must
 * not hide one) and the L4 one over pseudo-header and segment (for UDP
 * also present: a zero field is "no checksum", nothing to carry over), or
 * the L4 one is partial: the pseudo-header sum alone, its sender's
 * offload's (proto.h: ucm_l4_csum_partial()). A partial one is left to
 * the kernel whether the packet goes alone (tun.c writes it with
 * NEEDS_CSUM) or in a super-packet (always NEEDS_CSUM), so merging it
 * makes nothing good that would not be anyway, as the kernel's GRO takes
 * CHECKSUM_PARTIAL packets; it is checked first, sparing the payload's
 * sum. Looked at only when the packet is about to share a write: most
 * packets of many flows never are.
 */
static bool seg_good(struct seg *s)
{
	if (!s->good) {
		bool ok = true;
		uint32_t sum;

		if (!s->v6)
			ok = ucm_csum_fold(ucm_csum_add(0, s->ip, 20)) == 0;
		if (s->proto == IPPROTO_UDP && !ld_be16(s->l4 + 6))
			ok = false;
		if (ok) {
			sum = ucm_pseudo_sum(s->ip, s->v6, s->proto, s->l4len);
			/* seg_read(): a TCP or UDP datagram's whole L4 part,
			 * the partial test's length too. */
			ok = ld_be16(s->l4 + ucm_l4_check_off(s->proto)) == ucm_csum_folded(sum) ||
			     ucm_csum_fold(likely(!s->fr) ? ucm_csum_add(sum, s->l4, s->l4len) :
							    sum_parts(s, sum)) == 0;
		}
		s->good = ok ? 1 : -1;
	}
	return s->good > 0;
}

/* Packet @p of several frames (@fr): true when its headers lie in the
 * first frame and its parts hold the rest of it; @s->l4head set. */
static bool seg_frags(const struct ucm_pkt *p, const struct ucm_gso_frags *fr, struct seg *s)
{
	uint64_t have = fr->head;
	uint32_t i;

	if (fr->n > UCM_GSO_FRAGS_MAX || fr->head < (uint32_t)p->l4_off + p->l4_hlen)
		return false;
	for (i = 0; i < fr->n; i++)
		have += fr->len[i];
	if (have < (uint64_t)p->l3_off + p->l3_len)
		return false;
	s->fr = fr;
	s->l4head = fr->head - p->l4_off;
	return true;
}

static void seg_read(const struct ucm_pkt *p, const uint8_t *data,
		     const struct ucm_gso_frags *fr, uint32_t flags, struct seg *s)
{
	const uint8_t *ip = data + p->l3_off, *l4 = data + p->l4_off;
	uint32_t l4len = p->l3_len - (p->l4_off - p->l3_off);

	memset(s, 0, sizeof(*s));
	if (!(p->flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6)))
		return;
	s->ip = ip;	/* any IP packet: its addresses order its flow */
	s->l4 = l4;
	s->v6 = p->flags & UCM_PKT_F_IPV6;
	s->hash = p->hash;
	s->proto = p->l4_proto;
	s->ports = p->flags & UCM_PKT_F_PORTS;
	s->sport = p->sport;
	s->dport = p->dport;
	s->frag = p->flags & UCM_PKT_F_FRAG;
	s->eth = data;
	/* Frames written whole: a VLAN tag would have to reach a VLAN
	 * device through the kernel's segmentation; not merged. */
	if ((flags & UCM_GSO_F_L2) && p->nvlan)
		return;
	if (!(p->flags & UCM_PKT_F_PORTS) || !(p->flags & UCM_PKT_F_L4) ||
	    (p->flags & (UCM_PKT_F_FRAG | UCM_PKT_F_IP_OPTS | UCM_PKT_F_IPV6_EXT)))
		return;
	/* A packet of several frames merges only with its parts at hand, to
	 * be checked and written. */
	if ((p->flags & UCM_PKT_F_PARTIAL) && (!fr || !seg_frags(p, fr, s)))
		return;
	if (p->l4_proto == IPPROTO_UDP ? (flags & UCM_GSO_F_NO_UDP) :
	    p->l4_proto != IPPROTO_TCP || (flags & UCM_GSO_F_NO_TCP))
		return;
	s->hlen = p->l4_hlen;
	if (l4len < s->hlen)
		return;
	s->l4len = l4len;
	if (s->fr && s->l4head > l4len)
		s->l4head = l4len;
	/* UDP: its length must be the rest of the IP datagram exactly. */
	if (p->l4_proto == IPPROTO_UDP && ld_be16(l4 + 4) != l4len)
		return;
	s->payload = l4len - s->hlen;
	if (p->l4_proto == IPPROTO_TCP) {
		s->tseq = ld_be32(l4 + 4);
		s->tflags = l4[13];
		if (s->tflags & TCP_ALONE)
			return;
	}
	if (!s->v6) {
		s->id = ld_be16(ip + 4);
		s->df = ip[6] & 0x40;
		/* Any flag but DF (the reserved one: MF is a fragment's)
		 * stops the kernel's GRO, inet_gro_receive(): alone. */
		if (ip[6] & 0x80)
			return;
	}
	/* Empty segments never merge: a TCP pure ACK is a signal of its own
	 * (duplicate ACKs count). */
	s->elig = s->payload > 0;
}

/* Loner @l may belong to group head @h's flow, whose order must hold:
 * same addresses and protocol, and the same ports unless @l has none (a
 * fragment). */
static bool may_share_flow(const struct seg *h, const struct seg *l)
{
	if (!l->ip || h->v6 != l->v6 || h->proto != l->proto ||
	    (l->ports && (h->sport != l->sport || h->dport != l->dport)))
		return false;
	return h->v6 ? !memcmp(h->ip + 8, l->ip + 8, 32) : !memcmp(h->ip + 12, l->ip + 12, 8);
}

/* One flow: addresses, protocol, ports, and for IPv6 the flow label (the
 * kernel's GRO keeps flows apart by it too). */
static bool same_flow(const struct seg *a, const struct seg *b)
{
	if (a->hash != b->hash || a->v6 != b->v6 || a->proto != b->proto ||
	    a->sport != b->sport || a->dport != b->dport)
		return false;
	if (a->v6)
		return !((ld_be32(a->ip) ^ ld_be32(b->ip)) & 0xfffff) &&
		       !memcmp(a->ip + 8, b->ip + 8, 32);
	return !memcmp(a->ip + 12, b->ip + 12, 8);
}

/* The per-packet IP fields the kernel's GRO flushes a flow on when they
 * change: TOS, TTL and DF; IPv6 traffic class and hop limit. */
static bool same_ip_fields(const struct seg *a, const struct seg *b)
{
	if (a->v6)
		return !((ld_be32(a->ip) ^ ld_be32(b->ip)) & 0x0ff00000) && a->ip[7] == b->ip[7];
	return a->ip[1] == b->ip[1] && a->ip[8] == b->ip[8] && a->df == b->df;
}

/* TCP segment @s may follow @l, the last of head @h's group: the next bytes
 * of the stream, the same ACK, window, flags but PSH, and options (so the
 * same timestamps): tcp_gro_receive()'s tests. */
static bool tcp_follows(const struct seg *h, const struct seg *l, const struct seg *s)
{
	return s->tseq == l->tseq + l->payload &&
	       !memcmp(h->l4 + 8, s->l4 + 8, 4) &&		/* ACK */
	       h->l4[12] == s->l4[12] &&			/* header length */
	       !((h->tflags ^ s->tflags) & ~TCP_PSH) &&
	       !memcmp(h->l4 + 14, s->l4 + 14, 2) &&		/* window */
	       !memcmp(h->l4 + TCP_HLEN, s->l4 + TCP_HLEN, h->hlen - TCP_HLEN);
}

/* IPv4 IDs: a group's second packet decides, as in the kernel's GRO,
 * whether they count up by one or stay fixed (DF only); the rest follow. */
enum { ID_ANY, ID_INC, ID_FIXED };

static bool id_follows(const struct seg *l, const struct seg *s, uint8_t *mode)
{
	if (s->v6)
		return true;
	if (*mode != ID_FIXED && s->id == (uint16_t)(l->id + 1)) {
		*mode = ID_INC;
		return true;
	}
	if (*mode != ID_INC && s->df && s->id == l->id) {
		*mode = ID_FIXED;
		return true;
	}
	return false;
}

/* Groups are found by flow hash: buckets of the latest group, chained to
 * older ones. A power of two, a few times the groups of a hand-over. */
#define PLAN_BUCKETS	256

int ucm_gso__plan(const struct ucm_pkt *const *pkts, const uint8_t *const *data,
		  uint32_t n, uint32_t flags, struct ucm_gso_plan *plan)
{
	return ucm_gso_plan_frags(pkts, data, NULL, n, flags, plan);
}

int ucm_gso_plan_frags(const struct ucm_pkt *const *pkts, const uint8_t *const *data,
		       const struct ucm_gso_frags *const *frags, uint32_t n, uint32_t flags,
		       struct ucm_gso_plan *plan)
{
	struct seg seg[UCM_GSO_MAX_BATCH];
	/* per group: its last member, its bytes, whether it still takes
	 * more, how its IPv4 IDs go, the next older group of its bucket */
	uint16_t last[UCM_GSO_MAX_BATCH];
	uint32_t bytes[UCM_GSO_MAX_BATCH];
	bool open[UCM_GSO_MAX_BATCH];
	uint8_t idmode[UCM_GSO_MAX_BATCH];
	int16_t chain[UCM_GSO_MAX_BATCH];
	int16_t bucket[PLAN_BUCKETS];
	uint32_t i;
	int32_t g;

	if (n > UCM_GSO_MAX_BATCH ||
	    (flags & ~(UCM_GSO_F_NO_UDP | UCM_GSO_F_NO_TCP | UCM_GSO_F_L2 |
		       UCM_GSO_F_UDP_EQUAL)))
		return ucm_err(-EINVAL);
	memset(bucket, 0xff, sizeof(bucket));
	plan->ngroups = 0;
	for (i = 0; i < n; i++) {
		struct seg *s = &seg[i];
		uint32_t b;
		bool push;

		seg_read(pkts[i], data[i], frags ? frags[i] : NULL, flags, s);
		b = s->hash & (PLAN_BUCKETS - 1);
		plan->next[i] = -1;
		/* TCP PSH ends a group (it may end one, not start one). */
		push = s->proto == IPPROTO_TCP && (s->tflags & TCP_PSH);
		/*
		 * A flow has at most one open group, its latest: found first
		 * in its bucket. A packet that goes alone closes it (later
		 * packets of the flow must not pass it); a fragment, hashed
		 * without ports, every group it could belong to.
		 */
		if (s->frag) {
			for (g = 0; g < (int32_t)plan->ngroups; g++)
				if (open[g] && may_share_flow(&seg[plan->head[g]], s))
					open[g] = false;
		}
		for (g = s->ip ? bucket[b] : -1; g >= 0; g = chain[g]) {
			struct seg *h = &seg[plan->head[g]];
			const struct seg *l = &seg[last[g]];
			uint32_t max = s->proto == IPPROTO_UDP ? UCM_GSO_MAX_UDP_SEGS :
								 UCM_GSO_MAX_SEGS;

			if (!same_flow(h, s))
				continue;
			if (!open[g])
				break;
			/* The flow's open group: it takes @s or ends here. */
			open[g] = false;
			if (!s->elig || !seg_good(s)) {
				s->elig = false;	/* alone, after the group */
				break;
			}
			if (!seg_good(h) || !same_ip_fields(h, s) || s->payload > h->payload ||
			    ((flags & UCM_GSO_F_UDP_EQUAL) && s->proto == IPPROTO_UDP &&
			     s->payload != h->payload) ||
			    ((flags & UCM_GSO_F_L2) && memcmp(h->eth, s->eth, 14)) ||
			    plan->nseg[g] >= max || bytes[g] + s->payload > UCM_GSO_MAX_BYTES ||
			    !id_follows(l, s, &idmode[g]) ||
			    (s->proto == IPPROTO_TCP && !tcp_follows(h, l, s)))
				break;
			plan->next[last[g]] = i;
			last[g] = i;
			plan->nseg[g]++;
			plan->push[g] = push;
			bytes[g] += s->payload;
			/* A shorter one, or a PSH, is the last of its group. */
			open[g] = s->payload == h->payload && !push;
			goto placed;
		}
		g = plan->ngroups++;
		plan->head[g] = i;
		plan->nseg[g] = 1;
		plan->push[g] = push;
		last[g] = i;
		open[g] = s->elig && !push;
		idmode[g] = ID_ANY;
		bytes[g] = pkts[i]->l3_len;
		if (s->ip) {
			chain[g] = bucket[b];
			bucket[b] = g;
		}
placed:
		;
	}
	return 0;
}

/* The IP (and UDP) length fields for @l4len bytes of L4 header and
 * payload, and the IPv4 header checksum again. */
static void set_lengths(const struct ucm_pkt *pkt, uint8_t *data, uint32_t l4len)
{
	uint8_t *ip = data + pkt->l3_off, *l4 = data + pkt->l4_off;
	uint32_t l3h = pkt->l4_off - pkt->l3_off;

	if (pkt->flags & UCM_PKT_F_IPV6) {
		st_be16(ip + 4, l4len);
	} else {
		st_be16(ip + 2, l3h + l4len);
		st_be16(ip + 10, 0);
		st_be16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, l3h)));
	}
	if (pkt->l4_proto == IPPROTO_UDP)
		st_be16(l4 + 4, l4len);
}

void ucm_gso__build(const struct ucm_pkt *pkt, uint8_t *data, uint32_t nseg,
		    uint32_t payload, bool push, bool l2, struct virtio_net_hdr *vh)
{
	uint8_t *ip = data + pkt->l3_off, *l4 = data + pkt->l4_off;
	uint32_t l3h = pkt->l4_off - pkt->l3_off, l4len = pkt->l4_hlen + payload;
	bool v6 = pkt->flags & UCM_PKT_F_IPV6, tcp = pkt->l4_proto == IPPROTO_TCP;
	uint8_t *check = l4 + ucm_l4_check_off(pkt->l4_proto);

	memset(vh, 0, sizeof(*vh));
	if (nseg < 2)
		return;
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	if (tcp)
		vh->gso_type = v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	else
		vh->gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
	/* Offsets from where the write starts: the IP header, or for whole
	 * frames the Ethernet header. */
	vh->hdr_len = (l2 ? pkt->l4_off : l3h) + pkt->l4_hlen;
	/* The first segment is a full one: its payload is the size. */
	vh->gso_size = pkt->l3_len - l3h - pkt->l4_hlen;
	vh->csum_start = l2 ? pkt->l4_off : l3h;
	vh->csum_offset = check - l4;
	set_lengths(pkt, data, l4len);
	if (tcp && push)
		l4[13] |= TCP_PSH;	/* the last segment's, as GRO keeps it */
	/* NEEDS_CSUM: the field holds the pseudo-header sum, not inverted;
	 * the kernel adds the segment and inverts. */
	st_be16(check, ucm_csum_folded(ucm_pseudo_sum(ip, v6, pkt->l4_proto, l4len)));
}

void ucm_gso_save(const struct ucm_pkt *pkt, const uint8_t *data, struct ucm_gso_undo *u)
{
	const uint8_t *l4 = data + pkt->l4_off;

	memcpy(&u->check, l4 + ucm_l4_check_off(pkt->l4_proto), 2);
	/* TCP's flags; a UDP datagram may end before byte 13 of its header. */
	u->tflags = pkt->l4_proto == IPPROTO_TCP ? l4[13] : 0;
}

void ucm_gso_restore(const struct ucm_pkt *pkt, uint8_t *data, const struct ucm_gso_undo *u)
{
	uint8_t *l4 = data + pkt->l4_off;

	set_lengths(pkt, data, pkt->l3_len - (pkt->l4_off - pkt->l3_off));
	if (pkt->l4_proto == IPPROTO_TCP)
		l4[13] = u->tflags;
	memcpy(l4 + ucm_l4_check_off(pkt->l4_proto), &u->check, 2);
}
