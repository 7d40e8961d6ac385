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
 * Where the queue's sockets take packets of several frames
 * (ucm_txq__max_frames()), a packet longer than its frame holds past the
 * headroom (a read into frame and spill, or a segment) goes out as one:
 * the frame with the Ethernet header as ever, and as many more as its
 * bytes past it take, each BACK_FRAG_OFF in; their list (engine/chain.h)
 * in the first frame's headroom, before the TX metadata and the Ethernet
 * header, they tagged as the packet's; its descriptor with UCM_DESC_CHAIN.
 * A packet takes all its frames or waits for them, as a segment waits.
 *
 * On the worker's thread, like the rest of its struct tun_back.
 */
#include <string.h>
#include <linux/if_ether.h>

#include "engine/chain.h"
#include "io/neigh.h"
#include "io/tun_internal.h"
#include "io/tun_read.h"
#include "proto/split.h"

/* The list of a packet's frames, the TX metadata, the Ethernet header and
 * the packet, in this order in its first frame; a tap's frame has no
 * Ethernet header of ours, and the vnet header is read before any. */
_Static_assert(UCM_CHAIN_OFF + sizeof(struct ucm_chain) <=
	       UCM_TUN_BACK_HEADROOM - ETH_HLEN - UCM_TXQ_META_LEN,
	       "the list lies before the TX metadata and the Ethernet header");
_Static_assert(VNET_LEN <= ETH_HLEN + UCM_TXQ_META_LEN, "the vnet header is past the list");
/* A segment's headers are all in its first frame (ucm_split_seg_out()). */
_Static_assert(2048 - UCM_TUN_BACK_HEADROOM >= UCM_SPLIT_HLEN_MAX, "headers fit a frame");

static void turn_emit(struct tun_back *r, struct back_turn *t, uint64_t d)
{
	t->out[t->nout++] = d;
	t->room--;
	t->a.packets++;
	t->a.bytes += ucm_desc_len(d);
	t->a.chains += !!(d & UCM_DESC_CHAIN);
	t->a.csum_offloaded += !!(d & UCM_TXQ_DESC_CSUM);
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

/* Frames taken for a packet that did not go: free for the next again.
 * They came from the free ones, which had room for them. */
static void turn_unframe(struct back_turn *t, const uint64_t *f, uint32_t n)
{
	while (n--)
		t->free[t->nfree++] = f[n];
}

/* The frames after the first that @len bytes of a packet take (from its
 * first byte at the headroom): 0 when its frame holds them. */
static uint32_t back_nfrag(const struct tun_back *r, uint32_t len)
{
	uint32_t in = r->room - VNET_LEN;

	return len <= in ? 0 : (len - in + r->frag_room - 1) / r->frag_room;
}

/* @n frames for a packet's later parts into @frag, of the @want still
 * needed: all of them, or none taken and false (it waits). */
static bool turn_frames(struct tun_back *r, struct back_turn *t, uint32_t n, uint32_t want,
			uint64_t *frag)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (!turn_frame(r, t, want - i, &frag[i])) {
			turn_unframe(t, frag, i);
			return false;
		}
	}
	return true;
}

/*
 * The packet of @len bytes at frame @f's headroom goes on in @frag[0..n)
 * (back_nfrag() of them): its bytes past @f, at @tail, copied in (NULL:
 * they are in place), their list in @f's headroom, each frame tagged as
 * the packet's. Return: the descriptor's UCM_DESC_CHAIN, 0 for n 0.
 */
static uint64_t chain_lay(struct tun_back *r, uint64_t f, uint32_t len, const uint8_t *tail,
			  const uint64_t *frag, uint32_t n)
{
	struct ucm_chain *c = ucm_chain_of(r->area, f);
	uint32_t in = r->room - VNET_LEN, left = len - in, j, part;

	if (!n)
		return 0;
	c->nfrag = n;
	c->head_len = in + (r->tap ? 0 : ETH_HLEN);
	c->rsvd = 0;
	for (j = 0; j < n; j++) {
		part = min(left, r->frag_room);
		if (tail)
			memcpy((char *)r->area + frag[j] + BACK_FRAG_OFF,
			       tail + (size_t)j * r->frag_room, part);
		c->frag[j] = ucm_desc_make(frag[j] + BACK_FRAG_OFF, part);
		ucm_frame_move(r->umem, frag[j], UCM_LOC_APP, UCM_LOC_CHAIN);
		left -= part;
	}
	return UCM_DESC_CHAIN;
}

/* Where a destination's frames go at layer 2: to a next hop, to a group's
 * address (no neighbour to ask), or nowhere off the tun's own link. */
enum back_dst { BACK_DST_UNICAST, BACK_DST_GROUP, BACK_DST_LINK };

/* IPv6 multicast of interface- or link-local scope (RFC 4291, 2.7: scope
 * 1 and 2, and the reserved 0), IPv4's local network control block
 * 224.0.0.0/24 (RFC 5771) and the limited broadcast: the tun's own link's
 * (MLD, router solicitations, ...), which never leaves it, as a router
 * forwards none of it. Other groups go to their Ethernet address (RFC
 * 2464, RFC 1112), into @mac. */
static enum back_dst back_dst(const uint8_t *dst, bool v6, uint8_t *mac)
{
	if (v6) {
		if (dst[0] != 0xff)
			return BACK_DST_UNICAST;
		if ((dst[1] & 0x0f) <= 2)
			return BACK_DST_LINK;
		mac[0] = 0x33;
		mac[1] = 0x33;
		memcpy(mac + 2, dst + 12, 4);
		return BACK_DST_GROUP;
	}
	if (dst[0] == 255 && dst[1] == 255 && dst[2] == 255 && dst[3] == 255)
		return BACK_DST_LINK;
	if ((dst[0] & 0xf0) != 0xe0)
		return BACK_DST_UNICAST;
	if (dst[0] == 224 && !dst[1] && !dst[2])
		return BACK_DST_LINK;
	mac[0] = 0x01;
	mac[1] = 0x00;
	mac[2] = 0x5e;
	mac[3] = dst[1] & 0x7f;
	mac[4] = dst[2];
	mac[5] = dst[3];
	return BACK_DST_GROUP;
}

/* ---- packets waiting for their next hop -------------------------------- */

/* The Ethernet header of waiting packet @u, and its destination address. */
static uint8_t *unres_eth(const struct tun_back *r, const struct back_unres *u)
{
	return (uint8_t *)r->area + u->at;
}

static const uint8_t *unres_dst(const struct tun_back *r, const struct back_unres *u)
{
	return unres_eth(r, u) + ETH_HLEN + (u->v6 ? 24 : 16);
}

/* A bit of the waiting destinations' filter (unres_bits): most packets
 * that find packets waiting look no further. */
static uint64_t unres_bit(bool v6, const uint8_t *dst)
{
	uint32_t w;

	memcpy(&w, dst + (v6 ? 12 : 0), sizeof(w));
	return 1ull << ((w * 0x9e3779b9u) >> 26);
}

/* How many packets to @dst wait. */
static uint32_t unres_count(const struct tun_back *r, bool v6, const uint8_t *dst)
{
	uint32_t i, same = 0;

	if (!(r->unres_bits & unres_bit(v6, dst)))
		return 0;
	for (i = 0; i < r->nunres; i++)
		same += r->unres[i].v6 == v6 &&
			!memcmp(unres_dst(r, &r->unres[i]), dst, v6 ? 16 : 4);
	return same;
}

/* Whether a packet to @dst of @nframes frames has a place to wait (the
 * newest finds none: the kernel's queue drops its oldest instead). */
static bool unres_room(const struct tun_back *r, bool v6, const uint8_t *dst, uint32_t nframes)
{
	return r->nunres < BACK_UNRES && r->unres_frames + nframes <= BACK_UNRES_FRAMES &&
	       unres_count(r, v6, dst) < BACK_UNRES_DST;
}

/* Every frame of the waiting packet @u home. */
static void unres_home(struct tun_back *r, const struct back_unres *u)
{
	uint64_t f[UCM_CHAIN_MAX];

	ucm_txq__drop(r->txq, f, ucm_chain_desc_frames(r->umem, u->desc, f));
}

/*
 * The waiting packets, at each turn before its reads, in order: out when
 * their next hop is known now and the channel has room; a drop
 * (drop_no_neigh) when no question about it is out any more (the
 * kernel's answer was negative, or it did not resolve it within the
 * resolver's watch) or after BACK_UNRES_NS; else they wait on. The cache
 * is only read: their waits are neither new lookups nor uses of it.
 */
static void unres_turn(struct tun_back *r, struct back_turn *t)
{
	uint32_t i, keep = 0;
	int err;

	r->unres_bits = 0;
	for (i = 0; i < r->nunres; i++) {
		struct back_unres *u = &r->unres[i];

		err = ucm_neigh_peek(r->neigh, u->v6, unres_dst(r, u), unres_eth(r, u));
		if (!err && t->room) {
			turn_emit(r, t, u->desc);
		} else if (err && (err != -EAGAIN || r->now - u->since >= BACK_UNRES_NS)) {
			t->a.drop_no_neigh++;
			unres_home(r, u);
		} else {
			r->unres_bits |= unres_bit(u->v6, unres_dst(r, u));
			r->unres[keep++] = *u;
			continue;
		}
		r->unres_frames -= u->nframes;
	}
	r->nunres = keep;
}

/* What l2_header() made of a packet: go, a counted drop, or wait for its
 * next hop (the queue of unresolved packets below). */
enum back_l2 { BACK_L2_GO, BACK_L2_DROP, BACK_L2_WAIT };

/* Tun mode: the Ethernet header for the IP packet at @pkt, into @eth (the
 * next hop's address or the group's, ours, the type). A drop, counted,
 * for the tun's own link's traffic (drop_link_local) and a next hop the
 * kernel has none for (drop_no_neigh); BACK_L2_WAIT (not counted, the
 * destination's address not filled) when it is not known yet, or packets
 * to the same destination wait already: they leave in order. */
static enum back_l2 l2_header(struct tun_back *r, const uint8_t *pkt, bool v6, uint8_t *eth,
			      struct ucm_tun_back_stats *a)
{
	const uint8_t *dst = pkt + (v6 ? 24 : 16);
	enum back_dst k = unlikely(dst[0] >= 0xe0) ? back_dst(dst, v6, eth) : BACK_DST_UNICAST;
	enum back_l2 ret = BACK_L2_GO;
	int err;

	if (unlikely(k == BACK_DST_LINK)) {
		a->drop_link_local++;
		return BACK_L2_DROP;
	}
	/* A group's address (k BACK_DST_GROUP) is in @eth already. */
	if (k == BACK_DST_UNICAST && !r->neigh) {
		memcpy(eth, r->l2.dst, 6);
	} else if (k == BACK_DST_UNICAST) {
		err = ucm_neigh_lookup(r->neigh, v6, dst, eth, r->now, &a->neigh_asks);
		/* Not known: it waits while a question about it is out. */
		if (err == -EAGAIN && ucm_neigh_peek(r->neigh, v6, dst, eth) == -EAGAIN) {
			ret = BACK_L2_WAIT;
		} else if (err) {
			a->drop_no_neigh++;
			return BACK_L2_DROP;
		} else if (unlikely(r->nunres) && unres_count(r, v6, dst)) {
			ret = BACK_L2_WAIT;
		}
	}
	memcpy(eth + 6, r->l2.src, 6);
	st_be16(eth + 12, v6 ? ETH_P_IPV6 : ETH_P_IP);
	return ret;
}

void ucm_tun_back_src_sync(struct tun_back *r, const uint64_t *src)
{
	/* S2 (tun_internal.h): pairs with S1 in ucm_tun__set_back_src(). */
	uint64_t v = __atomic_load_n(src, __ATOMIC_RELAXED);
	uint32_t i;

	if (likely(v == r->src_seen))
		return;
	r->src_seen = v;
	for (i = 0; i < 6; i++)
		r->l2.src[i] = v >> (8 * i);
	/* Headers written already: a super-packet's next segments, and the
	 * packets waiting for their next hop. */
	memcpy(r->eth + 6, r->l2.src, 6);
	for (i = 0; i < r->nunres; i++)
		memcpy(unres_eth(r, &r->unres[i]) + 6, r->l2.src, 6);
}

void ucm_tun_back_unres_age(struct tun_back *r, struct back_turn *t)
{
	/* No room: nothing goes out, what failed or waited too long goes. */
	t->room = 0;
	unres_turn(r, t);
}

void ucm_tun_back_unres_flush(struct tun_back *r, uint64_t *dropped)
{
	for (uint32_t i = 0; i < r->nunres; i++)
		unres_home(r, &r->unres[i]);
	*dropped += r->nunres;
	r->nunres = 0;
	r->unres_bits = 0;
	r->unres_frames = 0;
}

/* A checksum the way out is to finish: its start and its field's place
 * from there (a start of 0: none). */
struct back_csum {
	uint16_t start, off;
};

/* The descriptor of the packet of @len bytes at frame @f's headroom: as
 * it is (a tap), or from the Ethernet header in front of it; with its
 * checksum left to the way out when @cs says where; @chain:
 * UCM_DESC_CHAIN when its later frames are laid out (chain_lay()). */
static uint64_t packet_desc(struct tun_back *r, uint64_t f, uint32_t len, struct back_csum cs,
			    uint64_t chain)
{
	uint32_t l2 = r->tap ? 0 : ETH_HLEN;
	uint64_t at = f + UCM_TUN_BACK_HEADROOM - l2;
	uint64_t d = ucm_desc_make(at, len + l2) | chain;

	if (cs.start)
		d = ucm_txq_meta_csum((char *)r->area + at, d, cs.start + l2, cs.off);
	return d;
}

/* A packet taken from a read: its frame, and the @nfrag frames its bytes
 * past it (at @tail, the read's spill) go on in. */
struct back_pkt {
	uint64_t f;
	const uint8_t *tail;
	const uint64_t *frag;
	uint32_t nfrag;
};

/* The read packet of @len bytes, given its Ethernet header in tun mode:
 * out, or into the queue of unresolved packets. Return false (a counted
 * drop) without a next hop or a place to wait for one. */
static bool send_packet(struct tun_back *r, struct back_turn *t, const struct back_pkt *p,
			uint32_t len, bool v6, struct back_csum cs)
{
	uint8_t *pkt = (uint8_t *)r->area + p->f + UCM_TUN_BACK_HEADROOM;
	enum back_l2 l2 = r->tap ? BACK_L2_GO : l2_header(r, pkt, v6, pkt - ETH_HLEN, &t->a);
	struct back_unres *u;
	uint64_t d;

	if (l2 == BACK_L2_DROP)
		return false;
	if (l2 == BACK_L2_WAIT && !unres_room(r, v6, pkt + (v6 ? 24 : 16), 1 + p->nfrag)) {
		t->a.drop_no_neigh++;
		return false;
	}
	d = packet_desc(r, p->f, len, cs, chain_lay(r, p->f, len, p->tail, p->frag, p->nfrag));
	if (l2 == BACK_L2_GO) {
		turn_emit(r, t, d);
		return true;
	}
	r->unres_bits |= unres_bit(v6, pkt + (v6 ? 24 : 16));
	u = &r->unres[r->nunres++];
	u->desc = d;
	u->at = p->f + UCM_TUN_BACK_HEADROOM - ETH_HLEN;
	u->since = r->now;
	u->v6 = v6;
	u->nframes = 1 + p->nfrag;
	r->unres_frames += u->nframes;
	t->a.neigh_held++;
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

/* Segment @k of the plan, built in frame @f and @nfrag more (@frag) from
 * slot @i's read (@pkt, its first @head bytes in the frame). Return: its
 * length. */
static uint32_t build_seg(struct tun_back *r, uint32_t i, const uint8_t *pkt, uint32_t head,
			  uint32_t k, uint64_t f, const uint64_t *frag, uint32_t nfrag)
{
	uint8_t *part[UCM_CHAIN_MAX];
	struct ucm_split_out out = {
		.part = part, .first = r->room - VNET_LEN, .each = r->frag_room,
	};
	uint32_t j;

	part[0] = (uint8_t *)r->area + f + UCM_TUN_BACK_HEADROOM;
	for (j = 0; j < nfrag; j++)
		part[1 + j] = (uint8_t *)r->area + frag[j] + BACK_FRAG_OFF;
	return ucm_split_seg_out(&r->plan, k, pkt, head, r->spill[i], &out);
}

/*
 * Slot @i's super-packet (@res bytes read, vnet header first): planned
 * (or, for slot 0 of a turn that stopped in it, resumed at pend_seg) and
 * cut into segments, each in a frame of its own, or several where it is
 * longer than one holds. Return false when the turn ran out of frames or
 * room before its last segment.
 */
static bool send_super(struct tun_back *r, struct back_turn *t, uint32_t i, int32_t res)
{
	uint8_t *pkt = (uint8_t *)r->area + r->stash[i] + UCM_TUN_BACK_HEADROOM;
	uint32_t len = res - VNET_LEN, head = min(len, r->room - (uint32_t)VNET_LEN);
	uint32_t k = 0, n, nfrag, want;
	uint64_t f, frag[UCM_CHAIN_MAX - 1];
	enum ucm_split_err err;
	enum back_l2 l2;

	if (i == 0 && r->in_super) {
		k = r->pend_seg;
	} else {
		/* No room: packets to its destination may wait for room
		 * before it (unres_turn()); planned at the next turn. */
		if (!t->room)
			return false;
		err = ucm_split_plan((const struct virtio_net_hdr *)(pkt - VNET_LEN), pkt, head,
				     len, r->tap, r->max_len, &r->plan);
		if (err) {
			offload_drop(&t->a, err);
			return true;
		}
		l2 = r->tap ? BACK_L2_GO : l2_header(r, pkt, r->plan.v6, r->eth, &t->a);
		if (l2 != BACK_L2_GO) {
			/* Its segments do not wait for a next hop: too many frames. */
			t->a.drop_no_neigh += l2 == BACK_L2_WAIT;
			return true;
		}
		r->plan.partial = r->tx_csum;
		t->a.super_packets++;
	}
	for (; k < r->plan.nseg; k++) {
		nfrag = back_nfrag(r, ucm_split_seg_len(&r->plan, k));
		want = (r->plan.nseg - k) * (1 + nfrag);
		if (!t->room || !turn_frame(r, t, want, &f))
			goto wait;
		if (nfrag && !turn_frames(r, t, nfrag, want - 1, frag)) {
			turn_unframe(t, &f, 1);
			goto wait;
		}
		n = build_seg(r, i, pkt, head, k, f, frag, nfrag);
		if (!r->tap)	/* the super-packet's, looked up once */
			memcpy((uint8_t *)r->area + f + UCM_TUN_BACK_HEADROOM - ETH_HLEN, r->eth,
			       ETH_HLEN);
		turn_emit(r, t, packet_desc(r, f, n, r->plan.partial ?
			  (struct back_csum){ r->plan.l4_off, ucm_split_csum_off(r->plan.proto) } :
			  (struct back_csum){ 0, 0 }, chain_lay(r, f, n, NULL, frag, nfrag)));
		t->a.segments++;
	}
	r->pend_seg = 0;
	r->in_super = false;
	return true;
wait:
	r->pend_seg = k;
	r->in_super = true;
	return false;
}

/* NEEDS_CSUM without GSO: the packet of @len bytes in @p, its checksum
 * completed here or left to the way out. Return false when it did not go
 * (a counted drop). */
static bool send_csum(struct tun_back *r, struct back_turn *t, const struct back_pkt *p,
		      uint32_t len)
{
	uint8_t *pkt = (uint8_t *)r->area + p->f + UCM_TUN_BACK_HEADROOM;
	const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)(pkt - VNET_LEN);
	uint32_t head = min(len, r->room - (uint32_t)VNET_LEN);
	bool own = r->tx_csum && ucm_split_csum_own_head(vh, pkt, head, len, r->tap);
	struct back_csum cs = { 0, 0 };
	enum ucm_split_err err;
	bool v6 = false;

	/* Left to the way out, it is within the first frame
	 * (ucm_split_csum_own_head()), as the kernel wants it. */
	err = own ? UCM_SPLIT_OK : ucm_split_csum_tail(vh, pkt, head, p->tail, len);
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
	return send_packet(r, t, p, len, v6, cs);
}

/* What becomes of a read packet of @len bytes that may go (slot @i):
 * false when it must wait for room or frames, with none taken; else
 * *@sent, and its later frames home to the free ones if it did not go. */
static bool send_read(struct tun_back *r, struct back_turn *t, uint32_t i, uint32_t len,
		      bool csum, bool v6, bool *sent)
{
	uint64_t frag[UCM_CHAIN_MAX - 1];
	struct back_pkt p = { r->stash[i], r->spill[i], frag, back_nfrag(r, len) };

	if (!t->room || (p.nfrag && !turn_frames(r, t, p.nfrag, p.nfrag, frag)))
		return false;
	*sent = csum ? send_csum(r, t, &p, len) :
		       send_packet(r, t, &p, len, v6, (struct back_csum){ 0, 0 });
	if (!*sent)
		turn_unframe(t, frag, p.nfrag);
	return true;
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
		if (len > r->max_len)	/* past what a packet of ours takes */
			t->a.drop_too_big++;
		else if (!send_read(r, t, i, len, false, v6, &sent))
			return false;
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
		if (!r->offload) {	/* no offloads: none asked of us */
			t->a.drop_offload++;
		} else if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
			if (!send_super(r, t, i, r->res[i]))
				return false;
		} else if (len > r->max_len) {
			t->a.drop_too_big++;
		} else if (!send_read(r, t, i, len, true, false, &sent)) {
			return false;	/* before the checksum: it is done once */
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
	if (r->nunres)	/* before the reads: a destination's packets in order */
		unres_turn(r, t);
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
