// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The read path's second half: what a turn's reads brought (tun_read.c)
 * goes out on the XSK TX ring through the worker's channel (ucm_txq). Each
 * read is checked (tun_read.h); a packet gets its Ethernet header in tun
 * mode (a fixed one, or its next hop's from ucm_neigh), a super-packet is
 * cut into segments in frames of their own (ucm_split), a partial checksum
 * is completed here or left to the way out; what cannot go is counted by
 * its reason. A turn stops at the channel's room or when no frame is left
 * for a segment: the reads after it wait, in order, for the next.
 *
 * On the worker's thread, like the rest of its struct tun_back.
 */
#include <string.h>
#include <linux/if_ether.h>

#include "io/neigh.h"
#include "io/tun_internal.h"
#include "io/tun_read.h"
#include "proto/split.h"

static void turn_emit(struct tun_back *r, struct back_turn *t, uint64_t d)
{
	t->out[t->nout++] = d;
	t->room--;
	t->a.packets++;
	t->a.bytes += ucm_desc_len(d);
	if (t->nout == BACK_OUT) {
		ucm_txq__send(r->txq, t->out, t->nout);
		t->nout = 0;
	}
}

/* A frame for a segment into @f (0 is a frame too), of the @want the
 * super-packet still needs: false when the channel lends none now. */
static bool turn_frame(struct tun_back *r, struct back_turn *t, uint32_t want, uint64_t *f)
{
	if (!t->nfree)
		t->nfree = ucm_txq__take(r->txq, t->free, min(want, (uint32_t)UCM_TUN_BACK_BATCH));
	if (!t->nfree)
		return false;
	*f = t->free[--t->nfree];
	return true;
}

/* Tun mode: the Ethernet header for the IP packet at @pkt, into @eth (the
 * next hop's address, ours, the type). Return false when the next hop is
 * not known yet (drop_no_neigh). */
static bool l2_header(struct tun_back *r, const uint8_t *pkt, bool v6, uint8_t *eth,
		      struct ucm_tun_back_stats *a)
{
	if (!r->neigh)
		memcpy(eth, r->l2.dst, 6);
	else if (ucm_neigh_lookup(r->neigh, v6, pkt + (v6 ? 24 : 16), eth, r->now,
				  &a->neigh_asks))
		return false;
	memcpy(eth + 6, r->l2.src, 6);
	st_be16(eth + 12, v6 ? ETH_P_IPV6 : ETH_P_IP);
	return true;
}

/* A checksum the way out is to finish: its start and its field's place
 * from there (a start of 0: none). */
struct back_csum {
	uint16_t start, off;
};

/* Out goes the packet of @len bytes at frame @f's headroom: as it is (a
 * tap), or from the Ethernet header in front of it; with its checksum left
 * to the way out when @cs says where. */
static void emit_packet(struct tun_back *r, struct back_turn *t, uint64_t f, uint32_t len,
			struct back_csum cs)
{
	uint32_t l2 = r->tap ? 0 : ETH_HLEN;
	uint64_t at = f + UCM_TUN_BACK_HEADROOM - l2;
	uint64_t d = ucm_desc_make(at, len + l2);

	if (cs.start) {
		d = ucm_txq_meta_csum((char *)r->area + at, d, cs.start + l2, cs.off);
		t->a.csum_offloaded++;
	}
	turn_emit(r, t, d);
}

/* The read packet of @len bytes in frame @f, given its Ethernet header in
 * tun mode. Return false (a counted drop) without a next hop. */
static bool send_packet(struct tun_back *r, struct back_turn *t, uint64_t f, uint32_t len,
			bool v6, struct back_csum cs)
{
	uint8_t *pkt = (uint8_t *)r->area + f + UCM_TUN_BACK_HEADROOM;

	if (!r->tap && !l2_header(r, pkt, v6, pkt - ETH_HLEN, &t->a)) {
		t->a.drop_no_neigh++;
		return false;
	}
	emit_packet(r, t, f, len, cs);
	return true;
}

/* An offload asked of us that cannot be done: counted by its reason. */
static void offload_drop(struct ucm_tun_back_stats *a, enum ucm_split_err err)
{
	a->drop_offload++;
	if (err == UCM_SPLIT_BAD_GSO)
		a->offload_bad_type++;
	else if (err == UCM_SPLIT_BAD_HDR)
		a->offload_bad_header++;
	else if (err == UCM_SPLIT_TOO_BIG)
		a->offload_too_big++;
}

/*
 * Slot @i's super-packet (@res bytes read, vnet header first): planned
 * (or, for slot 0 of a turn that stopped in it, resumed at pend_seg) and
 * cut into segments, each in a frame of its own. Return false when the
 * turn ran out of frames or room before its last segment.
 */
static bool send_super(struct tun_back *r, struct back_turn *t, uint32_t i, int32_t res)
{
	uint8_t *pkt = (uint8_t *)r->area + r->stash[i] + UCM_TUN_BACK_HEADROOM;
	uint32_t len = res - VNET_LEN, head = min(len, r->room - (uint32_t)VNET_LEN);
	uint32_t k = 0, n;
	enum ucm_split_err err;
	uint8_t *seg;
	uint64_t f;

	if (i == 0 && r->in_super) {
		k = r->pend_seg;
	} else {
		err = ucm_split_plan((const struct virtio_net_hdr *)(pkt - VNET_LEN), pkt, head,
				     len, r->tap, r->room - VNET_LEN, &r->plan);
		if (err) {
			offload_drop(&t->a, err);
			return true;
		}
		if (!r->tap && !l2_header(r, pkt, r->plan.v6, r->eth, &t->a)) {
			t->a.drop_no_neigh++;
			return true;
		}
		r->plan.partial = r->tx_csum;
		t->a.super_packets++;
	}
	for (; k < r->plan.nseg; k++) {
		if (!t->room || !turn_frame(r, t, r->plan.nseg - k, &f)) {
			r->pend_seg = k;
			r->in_super = true;
			return false;
		}
		seg = (uint8_t *)r->area + f + UCM_TUN_BACK_HEADROOM;
		n = ucm_split_seg(&r->plan, k, pkt, head, r->spill[i], seg);
		if (!r->tap)	/* the super-packet's, looked up once */
			memcpy(seg - ETH_HLEN, r->eth, ETH_HLEN);
		emit_packet(r, t, f, n, r->plan.partial ?
			    (struct back_csum){ r->plan.l4_off, ucm_split_csum_off(r->plan.proto) } :
			    (struct back_csum){ 0, 0 });
		t->a.segments++;
	}
	r->pend_seg = 0;
	r->in_super = false;
	return true;
}

/* NEEDS_CSUM without GSO: the packet of @len bytes in frame @f, its
 * checksum completed here or left to the way out. Return false when it
 * did not go (a counted drop). */
static bool send_csum(struct tun_back *r, struct back_turn *t, uint64_t f, uint32_t len)
{
	uint8_t *pkt = (uint8_t *)r->area + f + UCM_TUN_BACK_HEADROOM;
	const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)(pkt - VNET_LEN);
	bool own = r->tx_csum && ucm_split_csum_own(vh, pkt, len, r->tap);
	struct back_csum cs = { 0, 0 };
	enum ucm_split_err err;
	bool v6 = false;

	/* Left to the way out, it is within the packet (ucm_split_csum_own()). */
	err = own ? UCM_SPLIT_OK : ucm_split_csum(vh, pkt, len);
	if (err) {
		offload_drop(&t->a, err);
		return false;
	}
	if (!r->tap && !ucm_tun_read_ip(pkt, len, &v6)) {
		t->a.drop_non_ip++;
		return false;
	}
	if (own)
		cs = (struct back_csum){ vh->csum_start, vh->csum_offset };
	else
		t->a.csum_completed++;
	return send_packet(r, t, f, len, v6, cs);
}

/*
 * Read slot @i, handed on or counted. Return false when the turn ran out
 * of frames or room for it: it waits, with every read after it, for the
 * next. Its frame goes to the free ones unless it left as its packet.
 */
static bool handle_slot(struct tun_back *r, struct back_turn *t, uint32_t i)
{
	uint64_t f = r->stash[i];
	uint8_t *pkt = (uint8_t *)r->area + f + UCM_TUN_BACK_HEADROOM;
	const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)(pkt - VNET_LEN);
	uint32_t len = 0;
	bool v6 = false, sent = false;

	switch (ucm_tun_read_check(pkt - VNET_LEN, r->res[i], r->cap, r->tap, &len, &v6)) {
	case UCM_TUN_READ_PACKET:
		if (len > r->room - VNET_LEN) {	/* in a spill: past a frame */
			t->a.drop_too_big++;
			break;
		}
		if (!t->room)
			return false;
		sent = send_packet(r, t, f, len, v6, (struct back_csum){ 0, 0 });
		break;
	case UCM_TUN_READ_DRAINED:
		break;
	case UCM_TUN_READ_ERR:
		t->a.err++;
		break;
	case UCM_TUN_READ_TOO_BIG:
		t->a.drop_too_big++;
		break;
	case UCM_TUN_READ_NON_IP:
		t->a.drop_non_ip++;
		break;
	case UCM_TUN_READ_OFFLOAD:
		len = r->res[i] - VNET_LEN;
		if (!r->spill_area) {	/* no offloads: none asked of us */
			t->a.drop_offload++;
		} else if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
			if (!send_super(r, t, i, r->res[i]))
				return false;
		} else if (len > r->room - VNET_LEN) {
			t->a.drop_too_big++;
		} else if (!t->room) {
			return false;	/* before the checksum: it is done once */
		} else {
			sent = send_csum(r, t, f, len);
		}
		break;
	}
	if (!sent)
		t->free[t->nfree++] = f;
	return true;
}

/*
 * The turn's reads, handled in order from the stash's first slot, until
 * one must wait. The stash then holds, in order, the reads still waiting
 * (their spills moved along), then the free frames it has room for; the
 * rest go home.
 */
void ucm_tun_back_handle_reads(struct tun_back *r, struct back_turn *t)
{
	uint8_t *spill[UCM_TUN_BACK_BATCH];
	uint32_t h = 0, i, keep;

	/* The frames past the reads are free from the start. */
	for (i = r->pend; i < r->nstash; i++)
		t->free[t->nfree++] = r->stash[i];
	while (h < r->pend && handle_slot(r, t, h))
		h++;
	r->short_frames = h < r->pend && t->room;
	if (t->nout)
		ucm_txq__send(r->txq, t->out, t->nout);
	keep = r->pend - h;
	if (h && r->spill_area) {	/* the spills of the waiting reads to the front */
		memcpy(spill, r->spill, sizeof(spill));
		for (i = 0; i < UCM_TUN_BACK_BATCH; i++)
			r->spill[i] = spill[(i + h) % UCM_TUN_BACK_BATCH];
	}
	memmove(r->stash, r->stash + h, keep * sizeof(r->stash[0]));
	memmove(r->res, r->res + h, keep * sizeof(r->res[0]));
	r->pend = keep;
	i = min(t->nfree, (uint32_t)UCM_TUN_BACK_BATCH - keep);
	memcpy(r->stash + keep, t->free, i * sizeof(r->stash[0]));
	r->nstash = keep + i;
	if (t->nfree > i)
		ucm_txq__drop(r->txq, t->free + i, t->nfree - i);
}
