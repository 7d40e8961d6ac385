// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The way back's segmentation (lib/proto/split.c, which tun_read_tx.c calls on
 * every packet a tun with offloads gives it): a random virtio_net header
 * and packet, read with its head apart from its tail at a random place.
 *
 * Input: a control byte (bit 0: a tap's whole frame; bit 1: checksums
 * left partial, finished here as a device does), the head's length
 * (16 bits, big-endian), a frame's room (16 bits), the vnet header, then
 * the packet. Head and tail are heap blocks of exactly their bytes, and
 * each segment goes into a block of exactly the room (ASan sees a look or
 * a write past any).
 *
 * The oracle, from split.h's contract: a plan is taken only with its
 * headers within the head and every segment within the room; its segments
 * carry every payload byte once, in order; each has its lengths, IPv4 ID,
 * TCP sequence number and flags as the kernel's segmentation gives them,
 * and a right L4 checksum (and IPv4 header checksum); spread over parts (ucm_split_seg_out(), a
 * packet of several frames: a first part and later ones of sizes drawn
 * from the input, each a block of exactly its size), it is the same
 * bytes. ucm_split_csum() writes only within the
 * packet, and a completed checksum sums to zero with the pseudo-header's
 * sum the field held; a checksum ucm_split_csum_own() leaves to the way
 * out is one ucm_split_csum() takes (within the packet, an even field).
 * The same packet's checksum with the head apart from the tail
 * (ucm_split_csum_tail(), ucm_split_csum_own_head(): check_tail()) is
 * the whole packet's, and an RFC 1071 sum of the harness's own over the
 * bytes it covers is zero.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "core/internal.h"
#include "proto/split.h"
#include "ucpumap/csum.h"
#include "fuzz.h"

#define VNET	sizeof(struct virtio_net_hdr)

/* Segment @k (@n bytes at @seg) of the super-packet whose headers are at
 * @h: its lengths; IPv4's ID the super-packet's + k; TCP's sequence
 * number + k * mss, its flags the super-packet's but FIN and PSH (the
 * last segment's only) and CWR (the first's only); right checksums. */
static void check_seg(const struct ucm_split *s, uint32_t k, const uint8_t *h,
		      const uint8_t *seg, uint32_t n)
{
	const uint8_t *ip = seg + s->l3_off, *l4 = seg + s->l4_off;
	const uint8_t *hip = h + s->l3_off, *hl4 = h + s->l4_off;
	uint32_t l4len = n - s->l4_off, sum;
	const uint8_t ph[4] = { 0, s->proto, l4len >> 8, l4len & 0xff };
	bool last = k + 1 == s->nseg;

	if (s->v6) {
		CHECK(ld_be16(ip + 4) == n - s->l3_off - 40);
	} else {
		CHECK(ld_be16(ip + 2) == n - s->l3_off);
		CHECK(ld_be16(ip + 4) == ((ld_be16(hip + 4) + k) & 0xffff));
		CHECK(ucm_csum_fold(ucm_csum_add(0, ip, s->l4_off - s->l3_off)) == 0);
	}
	if (s->proto == IPPROTO_TCP) {
		uint8_t drop = (last ? 0 : 0x09) | (k ? 0x80 : 0);	/* FIN PSH, CWR */

		CHECK(ld_be32(l4 + 4) == ld_be32(hl4 + 4) + k * (uint32_t)s->mss);
		CHECK(l4[13] == (hl4[13] & ~drop));
	} else {
		CHECK(ld_be16(l4 + 4) == l4len);
	}
	if (s->srcroute) {
		/* The sender's pseudo-header is the super-packet's field (its
		 * sum at the whole length): less that length, plus this one. */
		const uint8_t *f = hl4 + ucm_split_csum_off(s->proto);
		uint16_t less = (uint16_t)~(s->len - s->l4_off);
		const uint8_t adj[6] = { f[0], f[1], less >> 8, less & 0xff, l4len >> 8,
					 l4len & 0xff };

		sum = ucm_csum_add(0, adj, sizeof(adj));
	} else {
		sum = ucm_csum_add(ucm_csum_add(0, s->v6 ? ip + 8 : ip + 12, s->v6 ? 32 : 8),
				   ph, 4);
	}
	CHECK(ucm_csum_fold(ucm_csum_add(sum, l4, l4len)) == 0);
}

/* Segment @k spread over parts of @first, then @each bytes: the bytes of
 * @seg, its @n whole. */
static void check_parts(const struct ucm_split *s, uint32_t k, const uint8_t *h, uint32_t head,
			const uint8_t *t, const uint8_t *seg, uint32_t n, uint32_t first,
			uint32_t each)
{
	uint32_t np = n <= first ? 1 : 1 + (n - first + each - 1) / each, j, at, c;
	uint8_t **part = calloc(np, sizeof(*part));
	struct ucm_split_out o = { .part = part, .first = first, .each = each };

	CHECK(part);
	for (j = 0; j < np; j++) {
		part[j] = malloc(j ? each : first);
		CHECK(part[j]);
	}
	CHECK(ucm_split_seg_out(s, k, h, head, t, &o) == n);
	for (j = 0, at = 0; j < np; j++) {
		c = n - at < (j ? each : first) ? n - at : (j ? each : first);
		CHECK(!memcmp(part[j], seg + at, c));
		at += c;
		free(part[j]);
	}
	free(part);
}

/*
 * The checksum of the packet @pkt (@len bytes) read as its first @head
 * bytes and a tail (ucm_split_csum_tail(), what the read path runs for a
 * packet longer than a frame), in blocks of exactly their bytes. Taken
 * exactly when the whole packet's (ucm_split_csum()) is and the field
 * lies within the head; then only the field changes, to the whole
 * packet's ("the same"), and the bytes from csum_start to the end read
 * as one, with the new field, plus the old field's pseudo-header sum, are
 * 0xffff (one's complement zero). A checksum ucm_split_csum_own_head()
 * leaves to the way out is one the tail version takes (its field within
 * the head), and one the whole packet's own takes too.
 */
static void check_tail(const struct virtio_net_hdr *vh, const uint8_t *pkt, uint32_t head,
		       uint32_t len, bool tap)
{
	uint32_t start = vh->csum_start, at = start + vh->csum_offset;
	uint8_t *hc = malloc(head ? head : 1), *t = malloc(len - head ? len - head : 1);
	uint8_t *w = malloc(len ? len : 1);
	enum ucm_split_err err, werr;
	bool own, wown;
	uint64_t sum;

	CHECK(hc && t && w);
	memcpy(hc, pkt, head);
	memcpy(t, pkt + head, len - head);
	memcpy(w, pkt, len);
	own = ucm_split_csum_own_head(vh, hc, head, len, tap);
	wown = ucm_split_csum_own(vh, w, len, tap);
	err = ucm_split_csum_tail(vh, hc, head, t, len);
	werr = ucm_split_csum(vh, w, len);
	if (own)
		CHECK(err == UCM_SPLIT_OK && wown);
	CHECK((err == UCM_SPLIT_OK) == (werr == UCM_SPLIT_OK && at + 2 <= head));
	CHECK(!memcmp(t, pkt + head, len - head));
	if (err != UCM_SPLIT_OK) {
		CHECK(!memcmp(hc, pkt, head));
		goto out;
	}
	CHECK(!memcmp(hc, pkt, at) && !memcmp(hc + at + 2, pkt + at + 2, head - at - 2));
	CHECK(!memcmp(hc + at, w + at, 2));
	/* Pieces of even length up to the field: each starts at an even
	 * offset of the sum. */
	sum = fuzz_sum16(0, pkt + start, at - start);
	sum = fuzz_sum16(sum, hc + at, 2);
	sum = fuzz_sum16(sum, pkt + at + 2, len - at - 2);
	sum = fuzz_sum16(sum, pkt + at, 2);
	CHECK(fuzz_fold16(sum) == 0xffff);
out:
	free(hc);
	free(t);
	free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_net_hdr vh;
	struct ucm_split s;
	uint32_t head, room, len, k, off;
	uint8_t *h, *t, *seg, field[2] = { 0, 0 };
	bool tap, partial, own;

	if (size < 5 + VNET)
		return 0;
	tap = data[0] & 1;
	partial = data[0] & 2;
	head = (uint32_t)data[1] << 8 | data[2];
	room = (uint32_t)data[3] << 8 | data[4];
	memcpy(&vh, data + 5, VNET);
	data += 5 + VNET;
	len = size - 5 - VNET;
	if (head > len)
		head = len;
	h = malloc(head ? head : 1);
	t = malloc(len - head ? len - head : 1);
	CHECK(h && t);
	memcpy(h, data, head);
	memcpy(t, data + head, len - head);

	if (ucm_split_plan(&vh, h, head, len, tap, room, &s) == UCM_SPLIT_OK) {
		CHECK(s.hlen <= head && s.hlen + s.mss <= room && s.nseg >= 1);
		s.partial = partial;
		seg = malloc(room ? room : 1);
		CHECK(seg);
		for (k = 0, off = s.hlen; k < s.nseg; k++) {
			uint32_t n = ucm_split_seg(&s, k, h, head, t, seg);

			CHECK(n == ucm_split_seg_len(&s, k));
			CHECK(n > s.hlen || (s.nseg == 1 && n == s.hlen));
			CHECK(n <= room && !memcmp(seg + s.hlen, data + off, n - s.hlen));
			off += n - s.hlen;
			/* Parts of sizes the input gives: a first one with
			 * the headers, later ones of 64 bytes or more. */
			check_parts(&s, k, h, head, t, seg, n, s.hlen + room % 97,
				    64 + head % 4033);
			if (partial) {	/* the sum from the L4 header on, the field's */
				uint8_t *at = seg + s.l4_off + ucm_split_csum_off(s.proto);
				uint16_t v = ucm_csum_fold(ucm_csum_add(0, seg + s.l4_off,
									n - s.l4_off));

				at[0] = v >> 8;
				at[1] = v & 0xff;
			}
			check_seg(&s, k, h, seg, n);
		}
		CHECK(off == len);
		free(seg);
	}
	check_tail(&vh, data, head, len, tap);
	if (vh.csum_start + vh.csum_offset + 2u <= head)
		memcpy(field, h + vh.csum_start + vh.csum_offset, 2);
	own = ucm_split_csum_own(&vh, h, head, tap);
	if (ucm_split_csum(&vh, h, head) == UCM_SPLIT_OK) {
		/* The bytes summed, the new field among them, plus what the
		 * field held (the pseudo-header's sum): zero, folded. */
		uint32_t sum = ucm_csum_add(0, h + vh.csum_start, head - vh.csum_start);

		CHECK(ucm_csum_fold(ucm_csum_add(sum, field, 2)) == 0);
	} else {
		CHECK(!own);
	}
	free(h);
	free(t);
	return 0;
}
