// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Coalescing on random batches: the input is cut into packets, each is
 * parsed (those the parser refuses never reach a sink, so not the plan
 * either), the batch is planned, every group is built into its
 * super-packet's headers and put back, as the tun's write path does
 * (lib/io/tun.c: super_build(), super_refused()).
 *
 * Input: a flags byte, then records of three bytes and what follows:
 *   flags:  bit 0 UCM_GSO_F_NO_UDP, 1 UCM_GSO_F_NO_TCP, 2 UCM_GSO_F_L2,
 *           3 UCM_GSO_F_UDP_EQUAL;
 *           bit 7: also ask with an unknown flag (-EINVAL wanted)
 *   record: ctl, n (16 bits, big-endian)
 *     ctl bit 0 clear: a packet of n bytes follows (cut at MAX_PKT and at
 *                      the input's end)
 *     ctl bit 0 set:   n copies of the batch's last packet, each the next
 *                      of its stream: IPv4 ID + 1 (bit 2: the same ID),
 *                      TCP sequence + its payload
 *     ctl bit 1: checksums made right (IPv4 header, UDP/TCP), so that
 *                mutated packets may still merge
 * Each packet lives in a heap block of its exact size (ASan sees a read
 * past it).
 *
 * The oracle is what ucpumap/gso.h promises, checked independently of
 * gso.c: every packet in exactly one group, groups in the order of their
 * first packet and chained in order; a merged group is one flow
 * (addresses, protocol, ports, IPv6 flow label) with the same TTL,
 * TOS/traffic class and DF, over IPv4 without options or fragmentation or
 * IPv6 without extension headers (and, writing whole frames, one Ethernet
 * header and no VLAN tag); no merged packet has a bad IPv4 header or L4
 * checksum (a partial one, the pseudo-header's sum alone, is not bad) or a
 * zero UDP one; payloads non-empty, equal but a shorter
 * last; IPv4 IDs counting up by one or, with DF, all equal; TCP's
 * sequence, ACK, window, header, options and flags rules, PSH only on the
 * last; at most 64 UDP / 128 TCP segments and 65535 bytes of IP packet.
 * A flow's packets are never written out of order. Planning writes
 * nothing. The built super-packet: its vnet header, lengths and IPv4
 * header checksum, and its L4 checksum once completed as the kernel
 * completes NEEDS_CSUM; a group of one is left alone. Restoring gives the
 * first packet's bytes back. A violation is abort(): libFuzzer reports it.
 *
 * Laid over several frames (check_split()), the same packets plan the
 * same.
 *
 * Not promised, so not checked: that every packet that could merge does
 * (the plan may leave a merge out), and what the kernel's segmentation of
 * a super-packet gives back (its IPv4 IDs and checksums are the kernel's).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/if_ether.h>

#include "fuzz-batch.h"

/* ---- the plan's shape ----------------------------------------------------------- */

/* Every packet in one group, in order; groups in the order of their heads. */
static void check_shape(struct batch *b)
{
	const struct ucm_gso_plan *pl = &b->plan;
	uint32_t g, seen = 0;
	int32_t i, prev;

	for (i = 0; i < (int32_t)b->n; i++)
		b->group[i] = -1;
	CHECK(pl->ngroups <= b->n && (b->n == 0 || pl->ngroups > 0));
	for (g = 0; g < pl->ngroups; g++) {
		uint32_t k = 0;

		CHECK(pl->head[g] < b->n);
		CHECK(g == 0 || pl->head[g] > pl->head[g - 1]);
		for (i = pl->head[g], prev = -1; i >= 0; prev = i, i = pl->next[i], k++) {
			CHECK(i < (int32_t)b->n && i > prev && b->group[i] < 0);
			b->group[i] = g;
			seen++;
		}
		CHECK(k == pl->nseg[g]);
	}
	CHECK(seen == b->n);
}

/* Packets @i < @j whose order gso.h keeps: one flow (addresses, protocol,
 * ports, IPv6 flow label), or a fragment without ports and any packet of
 * its addresses and protocol. */
static bool ordered(const struct batch *b, uint32_t i, uint32_t j)
{
	const struct ucm_pkt *p = &b->pkt[i], *q = &b->pkt[j];
	const uint8_t *a = ip_of(b, i), *c = ip_of(b, j);
	bool v6 = is_v6(p);
	uint16_t ports = UCM_PKT_F_PORTS;

	if (!(p->flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6)) ||
	    (q->flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6)) !=
	    (p->flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6)) || p->l4_proto != q->l4_proto)
		return false;
	if (v6 ? memcmp(a + 8, c + 8, 32) : memcmp(a + 12, c + 12, 8))
		return false;
	if (((p->flags & ports) == 0 && (p->flags & UCM_PKT_F_FRAG)) ||
	    ((q->flags & ports) == 0 && (q->flags & UCM_PKT_F_FRAG)))
		return true;
	if (!(p->flags & ports) || !(q->flags & ports))
		return false;
	return p->sport == q->sport && p->dport == q->dport &&
	       (!v6 || !((ld_be32(a) ^ ld_be32(c)) & 0xfffff));
}

static void check_order(const struct batch *b)
{
	for (uint32_t i = 0; i < b->n; i++)
		for (uint32_t j = i + 1; j < b->n; j++)
			if (b->group[i] > b->group[j])
				CHECK(!ordered(b, i, j));
}

/* ---- a merged group ------------------------------------------------------------- */

/* Member @m may share head @h's write: kind, flow, IP fields, checksums. */
static void check_member(const struct batch *b, uint32_t h, uint32_t m)
{
	const struct ucm_pkt *p = &b->pkt[h], *q = &b->pkt[m];
	const uint8_t *a = ip_of(b, h), *c = ip_of(b, m);
	bool v6 = is_v6(p);

	CHECK(q->flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6));
	CHECK(!(q->flags & (UCM_PKT_F_FRAG | UCM_PKT_F_IP_OPTS | UCM_PKT_F_IPV6_EXT)));
	CHECK((q->flags & UCM_PKT_F_L4) && (q->flags & UCM_PKT_F_PORTS));
	CHECK(q->l4_proto == IPPROTO_UDP ? !(b->flags & UCM_GSO_F_NO_UDP) :
	      q->l4_proto == IPPROTO_TCP && !(b->flags & UCM_GSO_F_NO_TCP));
	CHECK(is_v6(q) == v6 && q->l4_proto == p->l4_proto);
	CHECK(q->sport == p->sport && q->dport == p->dport);
	/* A datagram whose length field is not its IP payload stays alone:
	 * merged, its trailing bytes would become the group's payload. */
	if (q->l4_proto == IPPROTO_UDP)
		CHECK(ld_be16(l4_of(b, m) + 4) == l4len(q));
	if (v6) {
		CHECK(!memcmp(a + 8, c + 8, 32));
		CHECK(!((ld_be32(a) ^ ld_be32(c)) & 0x0fffffff));	/* class, label */
		CHECK(a[7] == c[7]);				/* hop limit */
	} else {
		CHECK(!memcmp(a + 12, c + 12, 8));
		CHECK(a[1] == c[1] && a[8] == c[8] && (a[6] & 0x40) == (c[6] & 0x40));
		CHECK(!(c[6] & 0x80));				/* reserved flag */
	}
	if (b->flags & UCM_GSO_F_L2)
		CHECK(!q->nvlan && !memcmp(b->data[h], b->data[m], ETH_HLEN));
	CHECK(ip_csum_ok(b, m) && l4_csum_ok(b, m));
	CHECK(payload(q) > 0 && payload(q) <= payload(p));
}

/* TCP: @m continues @l (the member before it) and matches head @h. */
static void check_tcp(const struct batch *b, uint32_t h, uint32_t l, uint32_t m)
{
	const uint8_t *th = l4_of(b, h), *tm = l4_of(b, m);
	uint32_t hl = b->pkt[h].l4_hlen;

	CHECK(ld_be32(tm + 4) == ld_be32(l4_of(b, l) + 4) + payload(&b->pkt[l]));
	CHECK(!memcmp(th + 8, tm + 8, 4) && th[12] == tm[12] && !memcmp(th + 14, tm + 14, 2));
	CHECK(b->pkt[m].l4_hlen == hl && !memcmp(th + 20, tm + 20, hl - 20));
	CHECK(!((th[13] ^ tm[13]) & ~TCP_PSH));
}

/* IPv4 IDs: all counting up by one, or all equal under DF. */
static void check_ids(const struct batch *b, uint32_t g)
{
	int32_t h = b->plan.head[g], i, l;
	uint32_t step;

	if (is_v6(&b->pkt[h]))
		return;
	step = (ld_be16(ip_of(b, b->plan.next[h]) + 4) - ld_be16(ip_of(b, h) + 4)) & 0xffff;
	CHECK(step == 1 || (step == 0 && (ip_of(b, h)[6] & 0x40)));
	for (l = h, i = b->plan.next[h]; i >= 0; l = i, i = b->plan.next[i])
		CHECK(((ld_be16(ip_of(b, i) + 4) - ld_be16(ip_of(b, l) + 4)) & 0xffff) == step);
}

/* Group @g of two or more: the rules, its limits; its payload bytes. */
static uint32_t check_group(const struct batch *b, uint32_t g)
{
	int32_t h = b->plan.head[g], i, l;
	const struct ucm_pkt *p = &b->pkt[h];
	bool tcp = p->l4_proto == IPPROTO_TCP;
	uint32_t total = 0;

	CHECK(b->plan.nseg[g] <= (tcp ? UCM_GSO_MAX_SEGS : UCM_GSO_MAX_UDP_SEGS));
	for (l = -1, i = h; i >= 0; l = i, i = b->plan.next[i]) {
		bool last = b->plan.next[i] < 0;

		check_member(b, h, i);
		/* Equal payloads but the last; with UDP_EQUAL a UDP last too. */
		CHECK((last && (tcp || !(b->flags & UCM_GSO_F_UDP_EQUAL))) ||
		      payload(&b->pkt[i]) == payload(p));
		if (tcp && l >= 0)
			check_tcp(b, h, l, i);
		/* No SYN, FIN...; PSH only on the last, and the group says so. */
		if (tcp)
			CHECK(!(l4_of(b, i)[13] & TCP_ALONE) &&
			      (last ? b->plan.push[g] == !!(l4_of(b, i)[13] & TCP_PSH) :
				      !(l4_of(b, i)[13] & TCP_PSH)));
		total += payload(&b->pkt[i]);
	}
	check_ids(b, g);
	CHECK(p->l3_len - payload(p) + total <= UCM_GSO_MAX_BYTES);
	return total;
}

/* ---- the super-packet ------------------------------------------------------------ */

/*
 * What the tun is given for group @g: the first packet from @start (its IP
 * header, or the Ethernet header for whole frames) to its IP end, then the
 * other packets' payloads; its L4 checksum completed from csum_start as
 * the kernel does for NEEDS_CSUM must then be right.
 */
static void check_written(const struct batch *b, uint32_t g, const struct virtio_net_hdr *vh,
			  uint32_t start, uint32_t total)
{
	int32_t h = b->plan.head[g], i;
	const struct ucm_pkt *p = &b->pkt[h];
	uint32_t hlen = p->l4_off - start + p->l4_hlen, len = hlen, l3 = p->l3_off - start;
	uint8_t *w = malloc(hlen + total);
	uint8_t *l4 = w + (p->l4_off - start);

	CHECK(w);
	memcpy(w, b->data[h] + start, p->l3_off - start + p->l3_len);
	len += payload(p);
	for (i = b->plan.next[h]; i >= 0; i = b->plan.next[i]) {
		memcpy(w + len, l4_of(b, i) + b->pkt[i].l4_hlen, payload(&b->pkt[i]));
		len += payload(&b->pkt[i]);
	}
	CHECK(len == hlen + total && vh->hdr_len == hlen && vh->csum_start == p->l4_off - start);
	CHECK(len - l3 <= UCM_GSO_MAX_BYTES);
	st_be16(w + vh->csum_start + vh->csum_offset,
	      fold(fuzz_sum16(0, w + vh->csum_start, len - vh->csum_start)));
	CHECK(fold(fuzz_sum16(pseudo(w + l3, is_v6(p), p->l4_proto, len - (l4 - w)), l4,
			 len - (l4 - w))) == 0);
	free(w);
}

/* The headers ucm_gso__build() rewrote for @total payload bytes. */
static void check_headers(const struct batch *b, uint32_t g, const struct virtio_net_hdr *vh,
			  uint32_t total)
{
	int32_t h = b->plan.head[g];
	const struct ucm_pkt *p = &b->pkt[h];
	const uint8_t *ip = ip_of(b, h), *l4 = l4_of(b, h);
	bool tcp = p->l4_proto == IPPROTO_TCP, v6 = is_v6(p);
	uint32_t len = p->l4_hlen + total, segs = (total + payload(p) - 1) / payload(p);

	CHECK(vh->flags == VIRTIO_NET_HDR_F_NEEDS_CSUM);
	CHECK(vh->gso_type == (!tcp ? VIRTIO_NET_HDR_GSO_UDP_L4 :
			       v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4));
	CHECK(vh->gso_size == payload(p) && vh->csum_offset == (tcp ? 16 : 6));
	/* The segments the kernel cuts: as many as went in. */
	CHECK(segs == b->plan.nseg[g]);
	if (v6) {
		CHECK(ld_be16(ip + 4) == len);
	} else {
		CHECK(ld_be16(ip + 2) == 20 + len && fold(fuzz_sum16(0, ip, 20)) == 0);
	}
	if (!tcp)
		CHECK(ld_be16(l4 + 4) == len);
	else
		CHECK(!!(l4[13] & TCP_PSH) == b->plan.push[g]);
}

/* Build each group as the write path does, check it, put it back. */
static void build_all(struct batch *b)
{
	bool l2 = b->flags & UCM_GSO_F_L2;

	for (uint32_t g = 0; g < b->plan.ngroups; g++) {
		int32_t h = b->plan.head[g];
		const struct ucm_pkt *p = &b->pkt[h];
		struct virtio_net_hdr vh, zero = {};
		struct ucm_gso_undo undo;
		uint32_t total;

		memset(&vh, 0xa5, sizeof(vh));
		if (b->plan.nseg[g] < 2) {
			ucm_gso__build(p, b->data[h], 1, 0, false, l2, &vh);
			CHECK(!memcmp(&vh, &zero, sizeof(vh)));
			CHECK(!memcmp(b->data[h], b->orig[h], b->len[h]));
			continue;
		}
		total = check_group(b, g);
		ucm_gso_save(p, b->data[h], &undo);
		ucm_gso__build(p, b->data[h], b->plan.nseg[g], total, b->plan.push[g], l2, &vh);
		check_headers(b, g, &vh, total);
		check_written(b, g, &vh, l2 ? 0 : p->l3_off, total);
		ucm_gso_restore(p, b->data[h], &undo);
		CHECK(!memcmp(b->data[h], b->orig[h], b->len[h]));
	}
}

/* ---- packets of several frames --------------------------------------- */

/*
 * The batch again with each packet whose L4 headers allow it laid over
 * heap blocks of their exact sizes: a first frame holding the headers and
 * up to 63 bytes more, then parts of 1 to 1500 bytes (at most
 * UCM_GSO_FRAGS_MAX), both chosen from @r. Its parse is
 * ucm_pkt_parse_head()'s. The plan given the parts (ucm_gso_plan_frags(), as
 * the tun gives them) is the plan of the packets whole, and it reads no
 * byte past a block.
 */
static void check_split(const struct batch *b, uint32_t r)
{
	static struct ucm_pkt pkt[UCM_GSO_MAX_BATCH];
	static struct ucm_gso_frags fr[UCM_GSO_MAX_BATCH];
	static uint8_t *blk[UCM_GSO_MAX_BATCH * (1 + UCM_GSO_FRAGS_MAX)];
	const struct ucm_gso_frags *fp[UCM_GSO_MAX_BATCH];
	const struct ucm_pkt *pp[UCM_GSO_MAX_BATCH];
	const uint8_t *dp[UCM_GSO_MAX_BATCH];
	struct ucm_gso_plan plan;
	uint32_t nb = 0, i, k, g;

	for (i = 0; i < b->n; i++) {
		const struct ucm_pkt *p = &b->pkt[i];
		uint32_t len = b->len[i], head, step, off, l;

		r = r * 1103515245u + 12345u;
		head = p->l4_off + p->l4_hlen + (r >> 8) % 64;
		step = 1 + (r >> 16) % 1500;
		pp[i] = p;
		dp[i] = b->data[i];
		fp[i] = NULL;
		if (!(p->flags & UCM_PKT_F_L4) || head >= len)
			continue;
		if ((len - head + step - 1) / step > UCM_GSO_FRAGS_MAX)
			step = (len - head + UCM_GSO_FRAGS_MAX - 1) / UCM_GSO_FRAGS_MAX;
		blk[nb] = malloc(head);
		CHECK(blk[nb]);
		memcpy(blk[nb], b->data[i], head);
		if (ucm_pkt_parse_head(&pkt[i], blk[nb], head, len) != UCM_DROP_NONE) {
			nb++;
			continue;
		}
		dp[i] = blk[nb++];
		for (off = head, k = 0; off < len; off += l, k++) {
			l = len - off < step ? len - off : step;
			blk[nb] = malloc(l);
			CHECK(blk[nb] && k < UCM_GSO_FRAGS_MAX);
			memcpy(blk[nb], b->data[i] + off, l);
			fr[i].part[k] = blk[nb++];
			fr[i].len[k] = l;
		}
		fr[i].n = k;
		fr[i].head = head;
		pp[i] = &pkt[i];
		fp[i] = &fr[i];
	}
	CHECK(ucm_gso_plan_frags(pp, dp, fp, b->n, b->flags, &plan) == 0);
	CHECK(plan.ngroups == b->plan.ngroups);
	for (g = 0; g < plan.ngroups; g++)
		CHECK(plan.head[g] == b->plan.head[g] && plan.nseg[g] == b->plan.nseg[g] &&
		      plan.push[g] == b->plan.push[g]);
	for (i = 0; i < b->n; i++)
		CHECK(plan.next[i] == b->plan.next[i]);
	while (nb)
		free(blk[--nb]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct batch b;
	uint32_t i;

	if (!size)
		return 0;
	memset(&b, 0, offsetof(struct batch, pkt));
	read_batch(&b, data, size);
	if (data[0] & 0x80)
		CHECK(ucm_gso__plan(b.pp, b.dp, b.n, b.flags | 0x100, &b.plan) == -EINVAL);
	CHECK(ucm_gso__plan(b.pp, b.dp, b.n, b.flags, &b.plan) == 0);
	for (i = 0; i < b.n; i++)
		CHECK(!memcmp(b.data[i], b.orig[i], b.len[i]));	/* plan wrote nothing */
	check_shape(&b);
	check_order(&b);
	check_split(&b, (uint32_t)size * 2654435761u ^ data[size - 1]);
	build_all(&b);
	for (i = 0; i < b.n; i++) {
		CHECK(!memcmp(b.data[i], b.orig[i], b.len[i]));
		free(b.data[i]);
		free(b.orig[i]);
	}
	return 0;
}
