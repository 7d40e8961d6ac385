/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cutting what a tun with offloads on (TUNSETOFFLOAD: TUN_F_CSUM, TSO4/6,
 * USO4/6) gives its reader into what a wire takes: a GSO super-packet into
 * segments, a checksum the kernel left partial (NEEDS_CSUM) completed. A
 * NIC does this for its driver; the way back's XSK TX has neither, so the
 * read path does it in software (lib/io/tun_read_tx.c).
 *
 * Of the virtio_net header only flags, gso_type and gso_size are trusted:
 * the headers are parsed from the packet itself (hdr_len is not used: the
 * kernel has got it wrong before), every length is checked against the
 * bytes read, and each segment's checksums are computed in full.
 *
 * A segment k of n carries the super-packet's headers with its own
 * lengths; IPv4 ID + k (the kernel's TSO and USO count up, whatever DF);
 * TCP: sequence number + k * gso_size, FIN and PSH on the last segment
 * only, CWR on the first only (tcp_gso_segment()); UDP: a datagram of its
 * own, a zero checksum sent as 0xffff.
 *
 * Where the way out finishes checksums itself (AF_XDP TX metadata,
 * ucm_txq__tx_csum()), a plan's @partial leaves each segment's L4
 * checksum as the kernel's CHECKSUM_PARTIAL does: the field holds the
 * pseudo-header's sum, and the payload is copied, not summed.
 */
#ifndef UCM_SPLIT_H
#define UCM_SPLIT_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <linux/virtio_net.h>

/* What ucm_split_plan() finds wrong, each a counted drop of the read path. */
enum ucm_split_err {
	UCM_SPLIT_OK = 0,
	UCM_SPLIT_BAD_GSO,	/* gso_type unknown, gso_size 0 */
	UCM_SPLIT_BAD_HDR,	/* headers that do not match the packet or gso_type */
	UCM_SPLIT_TOO_BIG,	/* a segment would not fit what the caller can send */
};

/**
 * struct ucm_split - a super-packet's plan
 * @len: its bytes (from the Ethernet header with @l2, else the IP header)
 * @l3_off, @l4_off: where its IP and L4 headers start
 * @hlen: all its headers' bytes, copied in front of every segment
 * @mss: payload bytes per segment (the last may have fewer)
 * @nseg: segments
 * @partial: the caller's: leave the L4 checksums partial (the field at
 *           l4_off + ucm_split_csum_off() to be finished from l4_off on)
 */
struct ucm_split {
	uint32_t len;
	uint16_t l3_off, l4_off, hlen, mss, nseg;
	uint8_t proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	bool v6;
	bool partial;
	/* An IPv4 source route: the sender's pseudo-header has the route's
	 * last address, so each segment's comes from the super-packet's
	 * field (the sum at its whole length), as the kernel's GSO does. */
	bool srcroute;
};

/* Where a TCP or UDP header holds its checksum. */
static inline uint16_t ucm_split_csum_off(uint8_t proto)
{
	return proto == IPPROTO_TCP ? 16 : 6;
}

/*
 * The plan of the GSO packet @pkt of @len bytes, whose first @head bytes
 * are contiguous at @pkt (the headers must be among them; the rest is
 * ucm_split_seg()'s @tail) and whose vnet header @vh asks for GSO. @l2: a
 * tap's whole frame (Ethernet first). @seg_max: the bytes a segment may
 * take at most (a frame's room, or a packet of several frames').
 */
enum ucm_split_err ucm_split_plan(const struct virtio_net_hdr *vh, const uint8_t *pkt,
				  uint32_t head, uint32_t len, bool l2, uint32_t seg_max,
				  struct ucm_split *s);

/* Headers a plan takes at most: Ethernet, IPv4 with options, TCP with
 * options. */
#define UCM_SPLIT_HLEN_MAX	(14 + 60 + 60)

/* Segment @k's length: its headers and its share of the payload. */
static inline uint32_t ucm_split_seg_len(const struct ucm_split *s, uint32_t k)
{
	uint32_t left = s->len - s->hlen - k * (uint32_t)s->mss;

	return s->hlen + (left < s->mss ? left : s->mss);
}

/*
 * Segment @k of @s into @dst (room for hlen + mss bytes): the headers, the
 * payload gathered from @pkt's first @head bytes and then @tail (the
 * packet's bytes past @head). Return: its length.
 */
uint32_t ucm_split_seg(const struct ucm_split *s, uint32_t k, const uint8_t *pkt,
		       uint32_t head, const uint8_t *tail, uint8_t *dst);

/*
 * Where a segment goes when it takes several frames: its first @first
 * bytes at @part[0] (at least the headers: UCM_SPLIT_HLEN_MAX), then
 * @each bytes at each later part, as many as ucm_split_seg_len() takes.
 */
struct ucm_split_out {
	uint8_t *const *part;
	uint32_t first, each;
};

/* ucm_split_seg() into the parts of @out. */
uint32_t ucm_split_seg_out(const struct ucm_split *s, uint32_t k, const uint8_t *pkt,
			   uint32_t head, const uint8_t *tail, const struct ucm_split_out *out);

/*
 * NEEDS_CSUM without GSO (a local socket's packet): the checksum at
 * csum_start + csum_offset, summed from csum_start to the end of @pkt's
 * @len bytes (the field holds the pseudo-header's sum), in place. Return:
 * UCM_SPLIT_OK, or UCM_SPLIT_BAD_HDR for offsets outside the packet.
 */
enum ucm_split_err ucm_split_csum(const struct virtio_net_hdr *vh, uint8_t *pkt,
				  uint32_t len);
/* The same of a packet of @len bytes whose first @head are at @pkt and
 * the rest at @tail; UCM_SPLIT_BAD_HDR also for a field past @head. */
enum ucm_split_err ucm_split_csum_tail(const struct virtio_net_hdr *vh, uint8_t *pkt,
				       uint32_t head, const uint8_t *tail, uint32_t len);
/*
 * Whether @pkt's partial checksum is its own TCP or UDP one: the L4 header
 * right after an IPv4 header or an IPv6 one without extensions, lengths
 * that match, the field where the protocol has it (so within the packet:
 * ucm_split_csum()'s checks hold). Only such a checksum is left to the way
 * out: a device may finish what it finds at the packet's L4 header
 * whatever csum_start says (an inner header's, a tunnel's).
 */
bool ucm_split_csum_own(const struct virtio_net_hdr *vh, const uint8_t *pkt, uint32_t len,
			bool l2);
/* The same of a packet of @len bytes of which only the first @head are at
 * @pkt: its headers, and so the field, among them. */
bool ucm_split_csum_own_head(const struct virtio_net_hdr *vh, const uint8_t *pkt,
			     uint32_t head, uint32_t len, bool l2);

#endif /* UCM_SPLIT_H */
