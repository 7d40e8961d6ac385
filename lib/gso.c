// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * UDP and TCP coalescing plan and super-packet headers (see ucpumap/gso.h
 * for the rules). Each packet is compared with the open groups of the
 * batch (at most one open group per flow); a batch is small (a worker's
 * hand-over), so a linear scan of the open groups, flow hash first, is
 * cheaper than any table.
 */
#include <string.h>
#include <netinet/in.h>

#include "internal.h"
#include "ucpumap/csum.h"
#include "ucpumap/gso.h"

#define UDP_HLEN	UCM_GSO_UDP_HLEN
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
	uint32_t hash;		/* the flow hash: a cheap first test */
	uint32_t payload;	/* UDP/TCP payload bytes */
	uint32_t tseq;		/* TCP sequence number */
	uint16_t hlen;		/* L4 header length */
	uint16_t id;		/* IPv4 ID */
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t tflags;		/* TCP flags */
	bool v6, df, ports, ok;	/* ok: may merge at all */
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* The pseudo-header's sum: addresses, protocol, L4 length. */
static uint32_t pseudo_sum(const uint8_t *ip, bool v6, uint8_t proto, uint32_t l4len)
{
	const uint8_t ph[4] = { 0, proto, l4len >> 8, l4len & 0xff };

	return ucm_csum_add(ucm_csum_add(0, v6 ? ip + 8 : ip + 12, v6 ? 32 : 8), ph, 4);
}

/* The L4 checksum over pseudo-header and segment is right (and, for UDP,
 * present: a zero field is "no checksum", nothing to carry over). */
static bool l4_csum_ok(const uint8_t *ip, bool v6, uint8_t proto, const uint8_t *l4,
		       uint32_t len)
{
	if (proto == IPPROTO_UDP && !get16(l4 + 6))
		return false;
	return ucm_csum_fold(ucm_csum_add(pseudo_sum(ip, v6, proto, len), l4, len)) == 0;
}

static void seg_read(const struct ucm_pkt *p, const uint8_t *data, struct seg *s)
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
	if ((p->l4_proto != IPPROTO_UDP && p->l4_proto != IPPROTO_TCP) ||
	    !(p->flags & UCM_PKT_F_PORTS) || !(p->flags & UCM_PKT_F_L4) ||
	    (p->flags & (UCM_PKT_F_FRAG | UCM_PKT_F_IP_OPTS | UCM_PKT_F_IPV6_EXT)))
		return;
	s->hlen = p->l4_hlen;
	if (l4len < s->hlen)
		return;
	/* UDP: its length must be the rest of the IP datagram exactly. */
	if (p->l4_proto == IPPROTO_UDP && get16(l4 + 4) != l4len)
		return;
	s->payload = l4len - s->hlen;
	if (p->l4_proto == IPPROTO_TCP) {
		s->tseq = get32(l4 + 4);
		s->tflags = l4[13];
		if (s->tflags & TCP_ALONE)
			return;
	}
	if (!s->v6) {
		s->id = get16(ip + 4);
		s->df = ip[6] & 0x40;
	}
	/* Empty segments never merge: a TCP pure ACK is a signal of its own
	 * (duplicate ACKs count). */
	s->ok = s->payload > 0 && l4_csum_ok(ip, s->v6, s->proto, l4, l4len);
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

/* Same flow and the same per-packet IP fields the kernel's GRO compares. */
static bool same_flow(const struct seg *a, const struct seg *b)
{
	if (a->hash != b->hash || a->v6 != b->v6)
		return false;
	if (a->v6)	/* version/class/label, next header, hop limit, addresses */
		return !memcmp(a->ip, b->ip, 4) && !memcmp(a->ip + 6, b->ip + 6, 34) &&
		       !memcmp(a->ip + 40, b->ip + 40, 4);	/* ports */
	/* TOS, TTL, protocol, addresses, ports */
	return a->ip[1] == b->ip[1] && a->ip[8] == b->ip[8] && a->ip[9] == b->ip[9] &&
	       !memcmp(a->ip + 12, b->ip + 12, 8) && !memcmp(a->ip + 20, b->ip + 20, 4);
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

int ucm_gso__plan(const struct ucm_pkt *const *pkts, const uint8_t *const *data,
		  uint32_t n, struct ucm_gso_plan *plan)
{
	struct seg seg[UCM_GSO_MAX_BATCH];
	/* per group: its last member, its bytes, whether it still takes more */
	uint16_t last[UCM_GSO_MAX_BATCH];
	uint32_t bytes[UCM_GSO_MAX_BATCH];
	bool open[UCM_GSO_MAX_BATCH];
	uint32_t i, g;

	if (n > UCM_GSO_MAX_BATCH)
		return ucm_err(-EINVAL);
	plan->ngroups = 0;
	for (i = 0; i < n; i++) {
		struct seg *s = &seg[i];
		bool push;

		seg_read(pkts[i], data[i], s);
		plan->next[i] = -1;
		/* TCP PSH ends a group (it may end one, not start one). */
		push = s->proto == IPPROTO_TCP && (s->tflags & TCP_PSH);
		/* A packet that goes alone closes the open groups it could
		 * belong with: later packets of the flow must not pass it. */
		for (g = 0; !s->ok && g < plan->ngroups; g++)
			if (open[g] && may_share_flow(&seg[plan->head[g]], s))
				open[g] = false;
		for (g = 0; s->ok && g < plan->ngroups; g++) {
			const struct seg *h = &seg[plan->head[g]], *l = &seg[last[g]];

			if (!open[g] || !same_flow(h, s))
				continue;
			/* One open group per flow: this one, merge or not. */
			open[g] = false;
			if (s->payload > h->payload || plan->nseg[g] >= UCM_GSO_MAX_SEGS ||
			    bytes[g] + s->payload > UCM_GSO_MAX_BYTES)
				break;
			if (!s->v6 && s->id != (uint16_t)(l->id + 1) &&
			    !(s->df && l->df && s->id == l->id))
				break;
			if (s->proto == IPPROTO_TCP && !tcp_follows(h, l, s))
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
		open[g] = s->ok && !push;
		bytes[g] = s->ok ? (uint32_t)(pkts[i]->l3_len) : 0;
placed:
		;
	}
	return 0;
}

void ucm_gso__build(const struct ucm_pkt *pkt, uint8_t *data, uint32_t nseg,
		    uint32_t payload, bool push, struct virtio_net_hdr *vh)
{
	uint8_t *ip = data + pkt->l3_off, *l4 = data + pkt->l4_off;
	uint32_t l3h = pkt->l4_off - pkt->l3_off, l4len = pkt->l4_hlen + payload;
	bool v6 = pkt->flags & UCM_PKT_F_IPV6, tcp = pkt->l4_proto == IPPROTO_TCP;
	uint8_t *check = l4 + (tcp ? 16 : 6);

	memset(vh, 0, sizeof(*vh));
	if (nseg < 2)
		return;
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	if (tcp)
		vh->gso_type = v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	else
		vh->gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
	vh->hdr_len = l3h + pkt->l4_hlen;
	/* The first segment is a full one: its payload is the size. */
	vh->gso_size = pkt->l3_len - l3h - pkt->l4_hlen;
	vh->csum_start = l3h;
	vh->csum_offset = check - l4;
	if (v6) {
		put16(ip + 4, l4len);
	} else {
		put16(ip + 2, l3h + l4len);
		put16(ip + 10, 0);
		put16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, l3h)));
	}
	if (tcp) {
		if (push)
			l4[13] |= TCP_PSH;	/* the last segment's, as GRO keeps it */
	} else {
		put16(l4 + 4, l4len);
	}
	/* NEEDS_CSUM: the field holds the pseudo-header sum, not inverted;
	 * the kernel adds the segment and inverts. */
	put16(check, (uint16_t)~ucm_csum_fold(pseudo_sum(ip, v6, pkt->l4_proto, l4len)));
}
