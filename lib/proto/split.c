// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Segmentation and checksum completion for the way back (see split.h).
 * Pure functions of the bytes given: tests/unit/test-split.c and
 * tests/fuzz/fuzz-split.c call them on any.
 */
#include <string.h>
#include <netinet/in.h>
#include <linux/if_ether.h>

#include "core/internal.h"
#include "proto/proto.h"
#include "proto/split.h"
#include "ucpumap/csum.h"
#include "ucpumap/gso.h"	/* VIRTIO_NET_HDR_GSO_UDP_L4 on older headers */

/* TCP flags (byte 13) a segment keeps only at one end of the run. */
#define TCP_FIN		0x01
#define TCP_PSH		0x08
#define TCP_CWR		0x80

/* IPv4: more fragments, or an offset: a fragment is never a GSO packet. */
#define IP4_FRAG_MASK	0x3fff

/* The IP and L4 headers of @pkt (its first @head bytes) for gso type @gt;
 * @ver, the IP version a tap's ethertype says (0: a tun's, any). */
static enum ucm_split_err parse(const uint8_t *pkt, uint32_t head, uint32_t len,
				uint8_t gt, uint8_t ver, struct ucm_split *s)
{
	const uint8_t *ip = pkt + s->l3_off, *l4;
	uint32_t l3h, l4h;

	if (head < s->l3_off + 20u || (ver && ip[0] >> 4 != ver))
		return UCM_SPLIT_BAD_HDR;
	s->v6 = ip[0] >> 4 == 6;
	if (s->v6) {
		/* No extension headers (way-back.md lists the super-packets
		 * that have them: dropped), and a jumbogram's length field
		 * is 0. */
		l3h = 40;
		if (head < s->l3_off + l3h || ld_be16(ip + 4) != len - s->l3_off - l3h)
			return UCM_SPLIT_BAD_HDR;
		s->proto = ip[6];
	} else {
		l3h = (ip[0] & 0xf) * 4u;
		if (ip[0] >> 4 != 4 || l3h < 20 || head < s->l3_off + l3h ||
		    ld_be16(ip + 2) != len - s->l3_off || (ld_be16(ip + 6) & IP4_FRAG_MASK))
			return UCM_SPLIT_BAD_HDR;
		s->proto = ip[9];
		s->srcroute = ucm_ipv4_srcroute(ip + 20, l3h - 20);
	}
	if ((gt == VIRTIO_NET_HDR_GSO_TCPV4 && (s->v6 || s->proto != IPPROTO_TCP)) ||
	    (gt == VIRTIO_NET_HDR_GSO_TCPV6 && (!s->v6 || s->proto != IPPROTO_TCP)) ||
	    (gt == VIRTIO_NET_HDR_GSO_UDP_L4 && s->proto != IPPROTO_UDP))
		return UCM_SPLIT_BAD_HDR;
	s->l4_off = s->l3_off + l3h;
	l4 = pkt + s->l4_off;
	/* The fixed header first: TCP's data offset is in it. */
	l4h = s->proto == IPPROTO_TCP ? 20u : 8u;
	if (head < s->l4_off + l4h)
		return UCM_SPLIT_BAD_HDR;
	if (s->proto == IPPROTO_TCP)
		l4h = (l4[12] >> 4) * 4u;
	if (l4h < 8 || (s->proto == IPPROTO_TCP && l4h < 20) || head < s->l4_off + l4h)
		return UCM_SPLIT_BAD_HDR;
	s->hlen = s->l4_off + l4h;
	return UCM_SPLIT_OK;
}

/* @l2: a tap's frame, untagged IPv4 or IPv6 only; its IP header's place,
 * and in @ver the version the ethertype says (0 without @l2): a segment
 * goes out with the frame's Ethernet header, so the two must agree. */
static enum ucm_split_err parse_l2(const uint8_t *pkt, uint32_t head, bool l2,
				   struct ucm_split *s, uint8_t *ver)
{
	uint16_t et;

	*ver = 0;
	if (!l2)
		return UCM_SPLIT_OK;
	if (head < ETH_HLEN)
		return UCM_SPLIT_BAD_HDR;
	et = ld_be16(pkt + 12);
	if (et != ETH_P_IP && et != ETH_P_IPV6)
		return UCM_SPLIT_BAD_HDR;
	*ver = et == ETH_P_IP ? 4 : 6;
	s->l3_off = ETH_HLEN;
	return UCM_SPLIT_OK;
}

enum ucm_split_err ucm_split_plan(const struct virtio_net_hdr *vh, const uint8_t *pkt,
				  uint32_t head, uint32_t len, bool l2, uint32_t seg_max,
				  struct ucm_split *s)
{
	uint8_t gt = vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN;
	enum ucm_split_err err;
	uint32_t payload;
	uint8_t ver;

	memset(s, 0, sizeof(*s));
	if ((gt != VIRTIO_NET_HDR_GSO_TCPV4 && gt != VIRTIO_NET_HDR_GSO_TCPV6 &&
	     gt != VIRTIO_NET_HDR_GSO_UDP_L4) || !vh->gso_size)
		return UCM_SPLIT_BAD_GSO;
	if (head > len)
		head = len;
	err = parse_l2(pkt, head, l2, s, &ver);
	if (!err)
		err = parse(pkt, head, len, gt, ver, s);
	if (err)
		return err;
	/* A checksum asked for must be the L4 one, where parse() found it;
	 * with a source route, its field is the one pseudo-header known. */
	if ((vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    (vh->csum_start != s->l4_off ||
	     vh->csum_offset != ucm_split_csum_off(s->proto)))
		return UCM_SPLIT_BAD_HDR;
	if (s->srcroute && !(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return UCM_SPLIT_BAD_HDR;
	s->len = len;
	s->mss = vh->gso_size;
	payload = len - s->hlen;
	/* A payload shorter than gso_size is one segment, of that payload:
	 * the segment size to fit, and the plan's. */
	if (payload && payload < s->mss)
		s->mss = payload;
	if ((uint32_t)s->hlen + s->mss > seg_max)
		return UCM_SPLIT_TOO_BIG;
	s->nseg = payload ? (payload + s->mss - 1) / s->mss : 1;
	return UCM_SPLIT_OK;
}

/* @n bytes from @src into @dst: their sum when @summed, else 0. */
static inline uint32_t copy_part(uint8_t *dst, const uint8_t *src, uint32_t n, bool summed)
{
	if (summed)
		return ucm_csum_copy(dst, src, n, 0);
	memcpy(dst, src, n);
	return 0;
}

/* A 16-bit sum of bytes that start at an odd offset of the summed stream,
 * as if they started at an even one: byte-swapped (RFC 1071, 2.(B)). */
static inline uint32_t sum_odd(uint32_t b)
{
	while (b >> 16)
		b = (b & 0xffff) + (b >> 16);
	return __builtin_bswap16((uint16_t)b);
}

/* Where byte @at of a segment goes in @o, and the bytes its part has from
 * there into *@room. */
static uint8_t *out_at(const struct ucm_split_out *o, uint32_t at, uint32_t *room)
{
	uint32_t j, in;

	if (at < o->first) {
		*room = o->first - at;
		return o->part[0] + at;
	}
	j = (at - o->first) / o->each;
	in = (at - o->first) % o->each;
	*room = o->each - in;
	return o->part[1 + j] + in;
}

/*
 * @n bytes of the packet from @off into the segment's bytes from @at on,
 * from the packet's head, then its tail; with @summed, return their sum
 * (as ucm_csum_add() over them, @off's byte at an even offset). Copied in
 * runs that are contiguous on both sides; a run that starts at an odd
 * offset of the bytes has its sum byte-swapped.
 */
static uint32_t gather(const struct ucm_split_out *o, uint32_t at, const uint8_t *pkt,
		       uint32_t head, const uint8_t *tail, uint32_t off, uint32_t n, bool summed)
{
	uint32_t sum = 0, done = 0, droom, sroom, run, b;
	const uint8_t *src;
	uint8_t *dst;

	while (done < n) {
		dst = out_at(o, at + done, &droom);
		if (off + done < head) {
			src = pkt + off + done;
			sroom = head - (off + done);
		} else {
			src = tail + (off + done - head);
			sroom = n - done;
		}
		run = min(droom, sroom);
		if (run > n - done)
			run = n - done;
		b = copy_part(dst, src, run, summed);
		sum += done & 1 ? sum_odd(b) : b;
		done += run;
	}
	return sum;
}

/* The L4 checksum of a segment whose headers are in place and whose
 * payload sums to @psum; partial: the pseudo-header's sum alone, not
 * complemented (what the one finishing it adds the rest to). */
static void l4_csum(const struct ucm_split *s, uint8_t *seg, uint32_t l4len, uint32_t psum)
{
	const uint8_t ph[4] = { 0, s->proto, l4len >> 8, l4len & 0xff };
	uint8_t *ip = seg + s->l3_off, *l4 = seg + s->l4_off;
	uint8_t *check = l4 + ucm_split_csum_off(s->proto);
	uint32_t sum;
	uint16_t v;

	if (s->srcroute) {
		/* The field's sum at the whole length, less that length, plus
		 * this segment's (one's complement: adding ~L takes L away). */
		uint16_t less = (uint16_t)~(s->len - s->l4_off);
		const uint8_t adj[6] = { check[0], check[1], less >> 8, less & 0xff,
					 l4len >> 8, l4len & 0xff };

		sum = ucm_csum_add(psum, adj, sizeof(adj));
	} else {
		sum = ucm_csum_add(psum, s->v6 ? ip + 8 : ip + 12, s->v6 ? 32 : 8);
		sum = ucm_csum_add(sum, ph, sizeof(ph));
	}
	st_be16(check, 0);
	if (s->partial) {
		st_be16(check, (uint16_t)~ucm_csum_fold(sum));
		return;
	}
	v = ucm_csum_fold(ucm_csum_add(sum, l4, s->hlen - s->l4_off));
	/* 0 is "no checksum" to UDP; 0xffff is the same sum (RFC 768). */
	st_be16(check, v ? v : 0xffff);
}

uint32_t ucm_split_seg_out(const struct ucm_split *s, uint32_t k, const uint8_t *pkt,
			   uint32_t head, const uint8_t *tail, const struct ucm_split_out *o)
{
	uint32_t off = s->hlen + k * (uint32_t)s->mss;
	uint32_t n = min((uint32_t)s->mss, s->len - off);
	uint32_t l3h = s->l4_off - s->l3_off, l4len = s->hlen - s->l4_off + n;
	uint8_t *dst = o->part[0], *ip = dst + s->l3_off, *l4 = dst + s->l4_off;
	uint32_t psum;

	memcpy(dst, pkt, s->hlen);
	/* The L4 header's length is a multiple of 4: the payload starts at
	 * an even offset of the checksummed bytes. */
	psum = gather(o, s->hlen, pkt, head, tail, off, n, !s->partial);
	if (s->v6) {
		st_be16(ip + 4, l4len);
	} else {
		st_be16(ip + 2, l3h + l4len);
		st_be16(ip + 4, ld_be16(ip + 4) + k);
		st_be16(ip + 10, 0);
		st_be16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, l3h)));
	}
	if (s->proto == IPPROTO_TCP) {
		uint32_t seq = ld_be32(l4 + 4) + k * (uint32_t)s->mss;

		st_be16(l4 + 4, seq >> 16);
		st_be16(l4 + 6, seq & 0xffff);
		if (k + 1 < s->nseg)
			l4[13] &= ~(TCP_FIN | TCP_PSH);
		if (k)
			l4[13] &= ~TCP_CWR;
	} else {
		st_be16(l4 + 4, l4len);
	}
	l4_csum(s, dst, l4len, psum);
	return s->hlen + n;
}

uint32_t ucm_split_seg(const struct ucm_split *s, uint32_t k, const uint8_t *pkt,
		       uint32_t head, const uint8_t *tail, uint8_t *dst)
{
	const struct ucm_split_out o = { .part = &dst, .first = UINT32_MAX };

	return ucm_split_seg_out(s, k, pkt, head, tail, &o);
}

bool ucm_split_csum_own_head(const struct virtio_net_hdr *vh, const uint8_t *pkt,
			     uint32_t head, uint32_t len, bool l2)
{
	struct ucm_split s = {};
	uint8_t ver;

	if (head > len)
		head = len;
	if (parse_l2(pkt, head, l2, &s, &ver) ||
	    parse(pkt, head, len, VIRTIO_NET_HDR_GSO_NONE, ver, &s) ||
	    (s.proto != IPPROTO_TCP && s.proto != IPPROTO_UDP))
		return false;
	/* parse() found the whole L4 header within @head: the field is too. */
	return vh->csum_start == s.l4_off && vh->csum_offset == ucm_split_csum_off(s.proto);
}

bool ucm_split_csum_own(const struct virtio_net_hdr *vh, const uint8_t *pkt, uint32_t len,
			bool l2)
{
	return ucm_split_csum_own_head(vh, pkt, len, len, l2);
}

enum ucm_split_err ucm_split_csum_tail(const struct virtio_net_hdr *vh, uint8_t *pkt,
				       uint32_t head, const uint8_t *tail, uint32_t len)
{
	uint32_t start = vh->csum_start, at = start + vh->csum_offset, sum = 0, b;
	uint16_t v;

	if (head > len)
		head = len;
	/* The field is within the summed bytes and the head, and starts at
	 * an even offset of them (a 16-bit word of the sum). */
	if (start >= len || at + 2 > head || (vh->csum_offset & 1))
		return UCM_SPLIT_BAD_HDR;
	sum = ucm_csum_add(0, pkt + start, head - start);
	if (len > head) {
		b = ucm_csum_add(0, tail, len - head);
		sum += (head - start) & 1 ? sum_odd(b) : b;
	}
	v = ucm_csum_fold(sum);
	st_be16(pkt + at, v ? v : 0xffff);
	return UCM_SPLIT_OK;
}

enum ucm_split_err ucm_split_csum(const struct virtio_net_hdr *vh, uint8_t *pkt,
				  uint32_t len)
{
	return ucm_split_csum_tail(vh, pkt, len, NULL, len);
}
