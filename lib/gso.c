// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * UDP coalescing plan and super-packet headers (see ucpumap/gso.h for the
 * rules). Each packet is compared with the open groups of the batch (at
 * most one open group per flow); a batch is small (a worker's), so a
 * linear scan of the open groups is cheaper than any table.
 */
#include <string.h>

#include "internal.h"
#include "ucpumap/csum.h"
#include "ucpumap/gso.h"

#define UDP_HLEN	UCM_GSO_UDP_HLEN

/* What a datagram brings to the merge test, read once. */
struct seg {
	const uint8_t *ip;
	uint32_t hash;		/* the flow hash: a cheap first test */
	uint32_t payload;	/* UDP payload bytes */
	uint16_t id;		/* IPv4 ID */
	uint16_t sport, dport;
	uint8_t proto;
	bool v6, df, ports, ok;	/* ok: may merge at all */
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* The UDP checksum over pseudo-header and datagram is right (and present). */
static bool udp_csum_ok(const uint8_t *ip, bool v6, const uint8_t *udp, uint32_t ulen)
{
	uint8_t ph[4] = { 0, 0, 0, 17 };
	uint32_t sum;

	if (!get16(udp + 6))
		return false;	/* none (IPv4): nothing to carry over */
	sum = ucm_csum_add(0, v6 ? ip + 8 : ip + 12, v6 ? 32 : 8);
	sum = ucm_csum_add(sum, udp + 4, 2);
	sum = ucm_csum_add(sum, ph, 4);
	sum = ucm_csum_add(sum, udp, ulen);
	return ucm_csum_fold(sum) == 0;
}

static void seg_read(const struct ucm_pkt *p, const uint8_t *data, struct seg *s)
{
	const uint8_t *ip = data + p->l3_off, *udp = data + p->l4_off;
	uint32_t ulen;

	memset(s, 0, sizeof(*s));
	if (!(p->flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6)))
		return;
	s->ip = ip;	/* any IP packet: its addresses order its flow */
	s->v6 = p->flags & UCM_PKT_F_IPV6;
	s->hash = p->hash;
	s->proto = p->l4_proto;
	s->ports = p->flags & UCM_PKT_F_PORTS;
	s->sport = p->sport;
	s->dport = p->dport;
	if (p->l4_proto != 17 || !(p->flags & UCM_PKT_F_PORTS) ||
	    (p->flags & (UCM_PKT_F_FRAG | UCM_PKT_F_IP_OPTS | UCM_PKT_F_IPV6_EXT)))
		return;
	ulen = get16(udp + 4);
	/* The UDP length must be the rest of the IP datagram exactly. */
	if (ulen < UDP_HLEN || p->l4_off - p->l3_off + ulen != p->l3_len)
		return;
	s->payload = ulen - UDP_HLEN;
	if (!s->v6) {
		s->id = get16(ip + 4);
		s->df = ip[6] & 0x40;
	}
	s->ok = s->payload > 0 && udp_csum_ok(ip, s->v6, udp, ulen);
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

		seg_read(pkts[i], data[i], s);
		plan->next[i] = -1;
		/* A packet that goes alone closes the open groups it could
		 * belong with: later datagrams of the flow must not pass it. */
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
			plan->next[last[g]] = i;
			last[g] = i;
			plan->nseg[g]++;
			bytes[g] += s->payload;
			/* A shorter datagram is the last one of its group. */
			open[g] = s->payload == h->payload;
			goto placed;
		}
		g = plan->ngroups++;
		plan->head[g] = i;
		plan->nseg[g] = 1;
		last[g] = i;
		open[g] = s->ok;
		bytes[g] = s->ok ? (uint32_t)(pkts[i]->l3_len) : 0;
placed:
		;
	}
	return 0;
}

void ucm_gso__build(const struct ucm_pkt *pkt, uint8_t *data, uint32_t nseg,
		    uint32_t payload, struct virtio_net_hdr *vh)
{
	uint8_t *ip = data + pkt->l3_off, *udp = data + pkt->l4_off;
	uint32_t l3h = pkt->l4_off - pkt->l3_off, ulen = UDP_HLEN + payload;
	uint8_t ph[4] = { 0, 0, 0, 17 };
	uint32_t sum;
	bool v6 = pkt->flags & UCM_PKT_F_IPV6;

	memset(vh, 0, sizeof(*vh));
	if (nseg < 2)
		return;
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
	vh->hdr_len = l3h + UDP_HLEN;
	vh->gso_size = get16(udp + 4) - UDP_HLEN;	/* the first: full size */
	vh->csum_start = l3h;
	vh->csum_offset = 6;
	if (v6) {
		put16(ip + 4, ulen);
	} else {
		put16(ip + 2, l3h + ulen);
		put16(ip + 10, 0);
		put16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, l3h)));
	}
	put16(udp + 4, ulen);
	/* NEEDS_CSUM: the field holds the pseudo-header sum, not inverted;
	 * the kernel adds the datagram and inverts. */
	sum = ucm_csum_add(0, v6 ? ip + 8 : ip + 12, v6 ? 32 : 8);
	sum = ucm_csum_add(sum, udp + 4, 2);
	sum = ucm_csum_add(sum, ph, 4);
	put16(udp + 6, (uint16_t)~ucm_csum_fold(sum));
}
