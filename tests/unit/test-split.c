// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The way back's segmentation (lib/proto/split.c): TCP and UDP
 * super-packets over IPv4 and IPv6, as a tun with offloads gives them, cut
 * into segments whose every field and checksum is checked here from
 * scratch, their payloads put back together and compared; the head/tail
 * split of a read at every place; each bad case's outcome; a partial
 * checksum completed.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>

#include "proto/split.h"
#include "ucpumap/csum.h"
#include "ucpumap/gso.h"
#include "utest.h"

#define SP_MAX	(65536 + 64)
#define SEG_MAX	3840		/* a 4 KiB frame less the headroom */

static uint8_t sp[SP_MAX];		/* the super-packet */
static uint8_t seg[SEG_MAX];
static uint8_t payload_out[SP_MAX];

struct spec {
	bool v6, udp, tap;
	uint32_t payload;
	uint16_t mss;
	uint8_t tflags;		/* TCP flags of the super-packet (0: ACK|PSH) */
	uint16_t id;
	bool partial;		/* checksums left partial, finished here as a device does */
	bool lsrr;		/* IPv4: a loose source route whose last hop is 10.0.0.3 */
};

/* A NOP and a loose source route (RFC 791) of two hops: 10.0.0.9, then
 * 10.0.0.3, the final destination the sender's pseudo-header has. */
static const uint8_t lsrr_opt[12] = { 1, 131, 11, 4, 10, 0, 0, 9, 10, 0, 0, 3 };
static const uint8_t lsrr_final[4] = { 10, 0, 0, 3 };

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* The sum over pseudo-header and L4 bytes: 0 folded when right. The
 * pseudo-header's destination is @dst where given (a source route's last
 * hop), else the header's. */
static uint16_t l4_check(const uint8_t *ip, bool v6, uint8_t proto, const uint8_t *l4,
			 uint32_t l4len, const uint8_t *dst)
{
	const uint8_t ph[4] = { 0, proto, l4len >> 8, l4len & 0xff };
	uint32_t sum = ucm_csum_add(0, v6 ? ip + 8 : ip + 12, v6 ? 32 : (dst ? 4 : 8));

	if (dst)
		sum = ucm_csum_add(sum, dst, 4);

	return ucm_csum_fold(ucm_csum_add(ucm_csum_add(sum, ph, 4), l4, l4len));
}

/* A super-packet as the kernel hands it over: lengths of the whole, the L4
 * field the pseudo-header's sum (NEEDS_CSUM). Return its length. */
static uint32_t build(const struct spec *s, struct virtio_net_hdr *vh)
{
	uint32_t l2 = s->tap ? 14 : 0, l3h = s->v6 ? 40 : s->lsrr ? 32 : 20, l4h = s->udp ? 8 : 32;
	uint32_t l4len = l4h + s->payload, len = l2 + l3h + l4len, i, sum;
	uint8_t *ip = sp + l2, *l4 = ip + l3h;
	uint8_t ph[4] = { 0, s->udp ? 17 : 6, l4len >> 8, l4len & 0xff };

	memset(sp, 0, l2 + l3h + l4h);
	if (s->tap) {
		memset(sp, 0xaa, 12);
		put16(sp + 12, s->v6 ? 0x86dd : 0x0800);
	}
	if (s->v6) {
		ip[0] = 0x60;
		put16(ip + 4, l4len);
		ip[6] = s->udp ? 17 : 6;
		ip[7] = 64;
		ip[8] = 0xfd;
		ip[23] = 1;
		ip[24] = 0xfd;
		ip[39] = 2;
	} else {
		ip[0] = 0x40 | l3h / 4;
		put16(ip + 2, l3h + l4len);
		put16(ip + 4, s->id);
		put16(ip + 6, 0x4000);	/* DF */
		ip[8] = 64;
		ip[9] = s->udp ? 17 : 6;
		memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
		if (s->lsrr)
			memcpy(ip + 20, lsrr_opt, sizeof(lsrr_opt));
		put16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, l3h)));
	}
	put16(l4, 5001);
	put16(l4 + 2, 40000);
	if (s->udp) {
		put16(l4 + 4, l4len);
	} else {
		memcpy(l4 + 4, "\xff\xff\xf0\x00", 4);	/* wraps within 64 KiB */
		memcpy(l4 + 8, "\x00\x00\x00\x07", 4);
		l4[12] = 8 << 4;		/* a timestamp option's 12 bytes */
		l4[13] = s->tflags ? s->tflags : 0x18;
		put16(l4 + 14, 500);
		memcpy(l4 + 20, "\x01\x01\x08\x0a\x00\x00\x00\x09\x00\x00\x00\x0b", 12);
	}
	for (i = 0; i < s->payload; i++)
		l4[l4h + i] = (uint8_t)(i * 7 + i / 251);
	/* The sender's pseudo-header: with a source route, its last hop. */
	sum = ucm_csum_add(0, s->v6 ? ip + 8 : ip + 12, s->v6 ? 32 : s->lsrr ? 4 : 8);
	if (s->lsrr)
		sum = ucm_csum_add(sum, lsrr_final, 4);
	put16(l4 + (s->udp ? 6 : 16), (uint16_t)~ucm_csum_fold(ucm_csum_add(sum, ph, 4)));
	memset(vh, 0, sizeof(*vh));
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->gso_type = s->udp ? VIRTIO_NET_HDR_GSO_UDP_L4 :
		       s->v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	vh->gso_size = s->mss;
	vh->hdr_len = l2 + l3h + l4h;
	vh->csum_start = l2 + l3h;
	vh->csum_offset = s->udp ? 6 : 16;
	return len;
}

/* A device's (or skb_checksum_help()'s) part of a checksum left partial:
 * the sum from @start to the end of @n bytes, the field included. */
static void finish_partial(uint8_t *pkt, uint32_t n, uint32_t start, uint32_t at, bool udp)
{
	uint16_t v = ucm_csum_fold(ucm_csum_add(0, pkt + start, n - start));

	put16(pkt + at, v || !udp ? v : 0xffff);
}

/* Cut @s with its first @head bytes apart from the rest, check every
 * segment; the payloads back together must be the original's. */
static int cut_and_check(const struct spec *s, uint32_t head)
{
	uint32_t l2 = s->tap ? 14 : 0, l3h = s->v6 ? 40 : s->lsrr ? 32 : 20, l4h = s->udp ? 8 : 32;
	uint32_t hl = l2 + l3h + l4h, len, k, got = 0, n;
	uint8_t tf = s->tflags ? s->tflags : 0x18;
	struct virtio_net_hdr vh;
	struct ucm_split pl;
	static uint8_t headbuf[SP_MAX];

	len = build(s, &vh);
	if (head > len)
		head = len;
	/* The head apart, as a read's frame; the tail stays in sp. */
	memcpy(headbuf, sp, head);
	UT_ASSERT(ucm_split_plan(&vh, headbuf, head, len, s->tap, SEG_MAX, &pl) == UCM_SPLIT_OK,
		  "a good super-packet refused (payload %u)", s->payload);
	pl.partial = s->partial;
	UT_ASSERT(pl.nseg == (s->payload + s->mss - 1) / s->mss && pl.hlen == hl,
		  "plan: %u segments of headers %u (payload %u mss %u)", pl.nseg, pl.hlen,
		  s->payload, s->mss);
	for (k = 0; k < pl.nseg; k++) {
		uint8_t *ip = seg + l2, *l4 = ip + l3h;
		uint32_t want = k + 1 < pl.nseg ? s->mss : s->payload - k * s->mss;

		memset(seg, 0x5a, sizeof(seg));
		n = ucm_split_seg(&pl, k, headbuf, head, sp + head, seg);
		UT_ASSERT(n == hl + want, "segment %u: %u bytes, not %u", k, n, hl + want);
		if (s->partial)
			finish_partial(seg, n, l2 + l3h, l2 + l3h + ucm_split_csum_off(s->udp ? 17 : 6),
				       s->udp);
		UT_ASSERT(!memcmp(seg, sp, l2), "segment %u: the Ethernet header changed", k);
		if (s->v6) {
			UT_ASSERT(be16(ip + 4) == l4h + want, "segment %u: IPv6 payload length %u",
				  k, be16(ip + 4));
		} else {
			UT_ASSERT(be16(ip + 2) == l3h + l4h + want, "segment %u: total length", k);
			UT_ASSERT(be16(ip + 4) == (uint16_t)(s->id + k), "segment %u: IPv4 ID %u",
				  k, be16(ip + 4));
			UT_ASSERT(ucm_csum_fold(ucm_csum_add(0, ip, l3h)) == 0,
				  "segment %u: IPv4 header checksum", k);
		}
		UT_ASSERT(l4_check(ip, s->v6, s->udp ? 17 : 6, l4, l4h + want,
				   s->lsrr ? lsrr_final : NULL) == 0,
			  "segment %u: L4 checksum wrong", k);
		if (s->udp) {
			UT_ASSERT(be16(l4 + 4) == 8 + want, "segment %u: UDP length", k);
			UT_ASSERT(be16(l4 + 6) != 0, "segment %u: UDP checksum 0", k);
		} else {
			uint8_t f = tf;

			UT_ASSERT(be32(l4 + 4) == 0xfffff000u + k * s->mss,
				  "segment %u: sequence number %08x", k, be32(l4 + 4));
			if (k + 1 < pl.nseg)
				f &= ~0x09;	/* FIN, PSH: the last's */
			if (k)
				f &= ~0x80;	/* CWR: the first's */
			UT_ASSERT(l4[13] == f, "segment %u: flags %02x, not %02x", k, l4[13], f);
			UT_ASSERT(!memcmp(l4 + 20, sp + l2 + l3h + 20, 12),
				  "segment %u: TCP options changed", k);
		}
		memcpy(payload_out + got, seg + hl, want);
		got += want;
	}
	UT_ASSERT(got == s->payload && !memcmp(payload_out, sp + hl, got),
		  "the payloads put back together are not the original (head %u)", head);
	return 0;
}

static int test_tcp4(void)
{
	struct spec s = { .payload = 65535 - 20 - 32, .mss = 1448, .id = 0xfffe };

	return cut_and_check(&s, SEG_MAX);
}

static int test_tcp6_cwr_fin(void)
{
	struct spec s = { .v6 = true, .payload = 10000, .mss = 1428, .tflags = 0x80 | 0x19 };

	return cut_and_check(&s, SEG_MAX);
}

static int test_udp4_udp6_short_last(void)
{
	struct spec s = { .udp = true, .payload = 1400 * 20 + 17, .mss = 1400, .id = 7 };

	if (cut_and_check(&s, SEG_MAX))
		return -1;
	s.v6 = true;
	return cut_and_check(&s, SEG_MAX);
}

/* A TCP sender's source route (IP_OPTIONS, no privilege needed): the
 * field's pseudo-header has the route's last hop, not the header's first;
 * each segment's checksum must too, full or left partial. UDP alike. */
static int test_tcp4_source_route(void)
{
	struct spec s = { .lsrr = true, .payload = 5000, .mss = 1448, .id = 7 };

	if (cut_and_check(&s, 4000))
		return 1;
	s.partial = true;
	if (cut_and_check(&s, 4000))
		return 1;
	s.udp = true;
	s.partial = false;
	return cut_and_check(&s, 4000);
}

static int test_tap(void)
{
	struct spec s = { .tap = true, .payload = 5000, .mss = 1448 };

	if (cut_and_check(&s, SEG_MAX))
		return -1;
	s.v6 = s.udp = true;
	return cut_and_check(&s, SEG_MAX);
}

/* A read's head of every length from the headers' end on: segments
 * straddle the head and tail everywhere, odd places included. */
static int test_every_head(void)
{
	struct spec s = { .payload = 3000, .mss = 1000 };
	uint32_t head;

	for (head = 72; head <= 3100; head += 1)
		if (cut_and_check(&s, head))
			return -1;
	return 0;
}

/* Checksums left partial: finished from the pseudo-header's sum the way
 * a device does, they are the full ones (every check of cut_and_check()). */
static int test_partial(void)
{
	struct spec s = { .payload = 20000, .mss = 1448, .id = 3, .partial = true };

	if (cut_and_check(&s, SEG_MAX) || cut_and_check(&s, 1000))
		return -1;
	s.v6 = true;
	if (cut_and_check(&s, SEG_MAX))
		return -1;
	s.udp = true;
	s.payload = 1400 * 9 + 1;
	s.mss = 1400;
	if (cut_and_check(&s, SEG_MAX))
		return -1;
	s.v6 = false;
	s.tap = true;
	return cut_and_check(&s, 777);
}

static int test_one_segment(void)
{
	struct spec s = { .payload = 100, .mss = 1448 };
	struct spec big = { .payload = 100, .mss = 3 * SEG_MAX };

	/* A gso_size past a frame, the one segment within it: sent. */
	return cut_and_check(&s, SEG_MAX) || cut_and_check(&big, SEG_MAX);
}

/* Each bad case's outcome. */
static int test_bad(void)
{
	struct spec s = { .payload = 4000, .mss = 1448 };
	struct virtio_net_hdr vh;
	struct ucm_split pl;
	uint32_t len = build(&s, &vh);

#define EXPECT(want, what)							\
	UT_ASSERT(ucm_split_plan(&vh, sp, SEG_MAX, len, false, SEG_MAX, &pl) == (want), what)
	vh.gso_size = 0;
	EXPECT(UCM_SPLIT_BAD_GSO, "gso_size 0 taken");
	vh.gso_size = 1448;
	vh.gso_type = 2;	/* VIRTIO_NET_HDR_GSO_UDP (UFO): not ours */
	EXPECT(UCM_SPLIT_BAD_GSO, "an unknown gso_type taken");
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	EXPECT(UCM_SPLIT_BAD_HDR, "TCPV6 on an IPv4 packet taken");
	vh.gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
	EXPECT(UCM_SPLIT_BAD_HDR, "UDP_L4 on a TCP packet taken");
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN;
	EXPECT(UCM_SPLIT_OK, "the ECN bit refused");
	vh.csum_start = 21;
	EXPECT(UCM_SPLIT_BAD_HDR, "a checksum elsewhere taken");
	vh.csum_start = 20;
	UT_ASSERT(ucm_split_plan(&vh, sp, SEG_MAX, len - 1, false, SEG_MAX, &pl) ==
		  UCM_SPLIT_BAD_HDR, "a length that is not the read's taken");
	UT_ASSERT(ucm_split_plan(&vh, sp, 40, len, false, SEG_MAX, &pl) == UCM_SPLIT_BAD_HDR,
		  "headers past the head taken");
	UT_ASSERT(ucm_split_plan(&vh, sp, SEG_MAX, len, false, 1448 + 51, &pl) ==
		  UCM_SPLIT_TOO_BIG, "a segment past a frame taken");
	sp[12 + 20] = 4 << 4;	/* TCP data offset 16: shorter than a header */
	EXPECT(UCM_SPLIT_BAD_HDR, "a TCP header of 16 bytes taken");
	build(&s, &vh);
	put16(sp + 6, 0x2000);	/* more fragments */
	EXPECT(UCM_SPLIT_BAD_HDR, "a fragment taken");
	build(&s, &vh);
	sp[0] = 0x55;
	EXPECT(UCM_SPLIT_BAD_HDR, "IP version 5 taken");
	s.tap = true;
	len = build(&s, &vh);
	put16(sp + 12, 0x8100);
	UT_ASSERT(ucm_split_plan(&vh, sp, SEG_MAX, len, true, SEG_MAX, &pl) == UCM_SPLIT_BAD_HDR,
		  "a VLAN-tagged frame taken");
	/* Each segment goes out under the frame's Ethernet header: an
	 * ethertype that says the other IP version is refused. */
	put16(sp + 12, 0x86dd);
	UT_ASSERT(ucm_split_plan(&vh, sp, SEG_MAX, len, true, SEG_MAX, &pl) == UCM_SPLIT_BAD_HDR,
		  "an IPv4 packet under the IPv6 ethertype taken");
	s.v6 = true;
	len = build(&s, &vh);
	put16(sp + 12, 0x0800);
	UT_ASSERT(ucm_split_plan(&vh, sp, SEG_MAX, len, true, SEG_MAX, &pl) == UCM_SPLIT_BAD_HDR,
		  "an IPv6 packet under the IPv4 ethertype taken");
	vh.gso_type = VIRTIO_NET_HDR_GSO_NONE;
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len, true),
		  "an IPv6 packet's checksum under the IPv4 ethertype taken");
	put16(sp + 12, 0x86dd);
	UT_ASSERT(ucm_split_csum_own(&vh, sp, len, true), "the IPv6 frame's checksum not seen");
#undef EXPECT
	return 0;
}

/* NEEDS_CSUM alone: the field completed; offsets outside refused. */
static int test_csum(void)
{
	struct spec s = { .udp = true, .payload = 333, .mss = 1400 };
	struct virtio_net_hdr vh;
	uint32_t len = build(&s, &vh);

	vh.gso_type = VIRTIO_NET_HDR_GSO_NONE;
	vh.gso_size = 0;
	UT_ASSERT(ucm_split_csum(&vh, sp, len) == UCM_SPLIT_OK, "a good one refused");
	UT_ASSERT(l4_check(sp, false, 17, sp + 20, len - 20, NULL) == 0, "UDP checksum wrong");
	s.udp = false;
	s.v6 = true;
	len = build(&s, &vh);
	UT_ASSERT(ucm_split_csum(&vh, sp, len) == UCM_SPLIT_OK, "a good one refused");
	UT_ASSERT(l4_check(sp, true, 6, sp + 40, len - 40, NULL) == 0, "TCPv6 checksum wrong");
	UT_ASSERT(ucm_split_csum_own(&vh, sp, len, false), "TCPv6's own checksum not seen as such");
	vh.csum_offset = 6;
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len, false), "UDP's field in a TCP packet taken");
	vh.csum_offset = 16;
	vh.csum_start = 40 + 20;	/* inside the L4 header: an inner checksum's place */
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len, false), "a start past the L4 header taken");
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len - 1, false), "a length that does not match taken");
	vh.csum_start = 40;
	sp[6] = 1;		/* ICMP's number: not TCP or UDP */
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len, false), "another protocol's checksum taken");
	sp[6] = 6;
	s.tap = true;
	s.v6 = false;
	s.udp = true;
	len = build(&s, &vh);
	vh.gso_type = VIRTIO_NET_HDR_GSO_NONE;
	UT_ASSERT(ucm_split_csum_own(&vh, sp, len, true), "a tap frame's own UDP checksum not seen");
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len, false), "a tap frame read as an IP packet");
	s.tap = false;
	s.udp = false;
	s.v6 = true;
	len = build(&s, &vh);
	vh.csum_start = len;
	UT_ASSERT(ucm_split_csum(&vh, sp, len) == UCM_SPLIT_BAD_HDR, "a start past the end taken");
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len, false), "a start past the end left to the way out");
	vh.csum_start = 40;
	vh.csum_offset = len - 41;
	UT_ASSERT(ucm_split_csum(&vh, sp, len) == UCM_SPLIT_BAD_HDR, "a field past the end taken");
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len, false), "a field past the end left to the way out");
	vh.csum_offset = 17;
	UT_ASSERT(ucm_split_csum(&vh, sp, len) == UCM_SPLIT_BAD_HDR, "an odd field taken");
	UT_ASSERT(!ucm_split_csum_own(&vh, sp, len, false), "an odd field left to the way out");
	return 0;
}

/* A segment spread over parts (a packet of several frames: the first
 * with @first bytes, each later one with @each) is byte for byte the one
 * cut whole, checksums included, wherever the parts and the read's head
 * split it. Each part is a block of its own size, a guard byte after. */
static int parts_check(const struct spec *s, uint32_t head, uint32_t first, uint32_t each)
{
	static uint8_t whole[SP_MAX], headbuf[SP_MAX], blk[UCM_SPLIT_HLEN_MAX + SP_MAX];
	uint8_t *part[64];
	struct virtio_net_hdr vh;
	struct ucm_split pl;
	uint32_t len = build(s, &vh), k, n, m, j, at, np;

	if (head > len)
		head = len;
	memcpy(headbuf, sp, head);
	UT_ASSERT(ucm_split_plan(&vh, headbuf, head, len, s->tap, 65535, &pl) == UCM_SPLIT_OK,
		  "refused");
	pl.partial = s->partial;
	for (k = 0; k < pl.nseg; k++) {
		struct ucm_split_out o = { .part = part, .first = first, .each = each };

		n = ucm_split_seg(&pl, k, headbuf, head, sp + head, whole);
		UT_ASSERT(n == ucm_split_seg_len(&pl, k), "segment %u: %u bytes, said %u", k, n,
			  ucm_split_seg_len(&pl, k));
		np = n <= first ? 1 : 1 + (n - first + each - 1) / each;
		UT_ASSERT(np <= 64, "%u parts", np);
		memset(blk, 0xa5, sizeof(blk));
		for (j = 0, at = 0; j < np; j++) {
			part[j] = blk + at + j;	/* a guard byte between parts */
			at += j ? each : first;
		}
		m = ucm_split_seg_out(&pl, k, headbuf, head, sp + head, &o);
		UT_ASSERT(m == n, "segment %u: %u bytes spread, %u whole", k, m, n);
		for (j = 0, at = 0; j < np; j++) {
			uint32_t room = j ? each : first, c = n - at < room ? n - at : room;

			UT_ASSERT(!memcmp(part[j], whole + at, c),
				  "segment %u, part %u (first %u each %u head %u) differs", k, j,
				  first, each, head);
			UT_ASSERT(j + 1 < np || part[j][c] == 0xa5, "written past the last part");
			UT_ASSERT(j == 0 || part[j][-1] == 0xa5, "written before part %u", j);
			at += c;
		}
	}
	return 0;
}

static int test_parts(void)
{
	struct spec tcp = { .payload = 60000, .mss = 8948, .id = 9 };
	struct spec udp = { .v6 = true, .udp = true, .payload = 8952 * 3 + 5, .mss = 8952 };
	/* A 4 KiB frame's and a 2 KiB frame's rooms, and odd ones. */
	static const uint32_t fe[][2] = { { 3840, 4080 }, { 1792, 2032 }, { 201, 333 },
					  { 1001, 777 }, { 134, 511 } };
	static const uint32_t heads[] = { 3840, 3841, 1792, 97, 60000 };

	for (uint32_t i = 0; i < sizeof(fe) / sizeof(fe[0]); i++) {
		for (uint32_t h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
			if (parts_check(&tcp, heads[h], fe[i][0], fe[i][1]) ||
			    parts_check(&udp, heads[h], fe[i][0], fe[i][1]))
				return -1;
			tcp.partial = !tcp.partial;
			udp.partial = !udp.partial;
		}
	}
	return 0;
}

/* NEEDS_CSUM over a read's frame and spill: the same field as over the
 * packet whole, wherever they split it, odd places included; a field past
 * the head refused; a checksum left to the way out only with its headers
 * in the head. */
static int test_csum_tail(void)
{
	struct spec s = { .udp = true, .payload = 8972, .mss = 1400 };
	static uint8_t whole[SP_MAX], headbuf[SP_MAX];
	struct virtio_net_hdr vh;
	uint32_t len = build(&s, &vh), head;

	vh.gso_type = VIRTIO_NET_HDR_GSO_NONE;
	vh.gso_size = 0;
	memcpy(whole, sp, len);
	UT_ASSERT(ucm_split_csum(&vh, whole, len) == UCM_SPLIT_OK, "whole");
	for (head = 28; head <= len; head += head < 100 ? 1 : 97) {
		memcpy(headbuf, sp, head);
		UT_ASSERT(ucm_split_csum_tail(&vh, headbuf, head, sp + head, len) == UCM_SPLIT_OK,
			  "head %u refused", head);
		UT_ASSERT(!memcmp(headbuf + 26, whole + 26, 2), "head %u: field %02x%02x, want %02x%02x",
			  head, headbuf[26], headbuf[27], whole[26], whole[27]);
		UT_ASSERT(ucm_split_csum_own_head(&vh, sp, head, len, false),
			  "head %u: its own checksum not seen", head);
	}
	UT_ASSERT(ucm_split_csum_tail(&vh, headbuf, 27, sp + 27, len) == UCM_SPLIT_BAD_HDR,
		  "a field past the head taken");
	UT_ASSERT(!ucm_split_csum_own_head(&vh, sp, 27, len, false), "headers past the head taken");
	UT_ASSERT(!ucm_split_csum_own_head(&vh, sp, 3000, len - 1, false),
		  "a length that does not match taken");
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_tcp4),
	UT_CASE(test_tcp6_cwr_fin),
	UT_CASE(test_udp4_udp6_short_last),
	UT_CASE(test_tcp4_source_route),
	UT_CASE(test_tap),
	UT_CASE(test_every_head),
	UT_CASE(test_partial),
	UT_CASE(test_one_segment),
	UT_CASE(test_bad),
	UT_CASE(test_csum),
	UT_CASE(test_parts),
	UT_CASE(test_csum_tail),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
