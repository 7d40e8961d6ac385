// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A queue's packets of several descriptors (multi-buffer AF_XDP), on its
 * RX thread: taken one descriptor at a time as lib/engine/chain.h's
 * ucm_chain_rx_take() says, handed on whole with the list of their later
 * frames in their first frame's headroom, or dropped with every frame
 * home; and the packets the RX thread itself looks at or sends home
 * (steering, a refused enqueue), of one frame or several. queue.c's RX
 * path calls in here only for them.
 */
#include "core/pool_internal.h"
#include "port_internal.h"

/* Every frame of the packet being taken goes home, counted by its why. */
static void chain_drop(struct ucm_xsk_queue *q)
{
	struct ucm_chain_rx *c = &q->chain;
	uint32_t i;

	for (i = 0; i < c->n; i++)
		ucm_pool__put(q->pool, ucm_umem_base(q->x->umem, ucm_desc_addr(c->frag[i])));
	switch (c->why) {
	case UCM_CHAIN_LONG:
		STAT_ADD(q->stats.rx_chain_long, 1);
		break;
	case UCM_CHAIN_NOSG:
		STAT_ADD(q->stats.rx_chain_nosg, 1);
		break;
	case UCM_CHAIN_CUT:
		STAT_ADD(q->stats.rx_chain_cut, 1);
		break;
	default:
		STAT_ADD(q->stats.rx_chain_bad, 1);
		break;
	}
	STAT_ADD(q->stats.rx_chain_more, c->seen - 1);
	STAT_ADD(q->stats.rx_packets, 1);
	ucm_chain_rx_reset(c);
}

void ucm_xsk_queue_chain_end(struct ucm_xsk_queue *q)
{
	if (ucm_chain_rx_cut(&q->chain))
		chain_drop(q);
}

/* The packet is whole: hand it on in *@out, the list of its later frames
 * in its first frame's headroom, they tagged as its. */
static void chain_whole(struct ucm_xsk_queue *q, struct ucm_xsk_desc *out)
{
	struct ucm_chain_rx *c = &q->chain;
	uint64_t head = ucm_desc_addr(c->frag[0]);
	struct ucm_chain *rec = ucm_chain_of(q->x->area, ucm_umem_base(q->x->umem, head));
	uint32_t i;

	rec->nfrag = c->n - 1;
	rec->head_len = ucm_desc_len(c->frag[0]);
	for (i = 1; i < c->n; i++) {
		rec->frag[i - 1] = c->frag[i];
		ucm_frame_move(q->x->umem, ucm_umem_base(q->x->umem, ucm_desc_addr(c->frag[i])),
			       UCM_LOC_APP, UCM_LOC_CHAIN);
	}
	out->addr = head | UCM_DESC_CHAIN;
	out->len = c->len;
	out->worker = q->chain_worker;
	STAT_ADD(q->stats.rx_chains, 1);
	STAT_ADD(q->stats.rx_chain_more, c->seen - 1);
	STAT_ADD(q->stats.rx_packets, 1);
	ucm_chain_rx_reset(c);
}

/*
 * One descriptor of a packet of several (it or one before it had
 * XDP_PKT_CONTD), as engine/chain.h's ucm_chain_rx_take() says. True when
 * it was the last and the packet is whole: then *@out is the packet.
 */
bool ucm_xsk_chain_take(struct ucm_xsk_queue *q, const struct ucm_umem_geom *g,
			const struct xdp_desc *rd, struct ucm_xsk_desc *out)
{
	enum ucm_chain_frame frame;
	enum ucm_chain_end end;
	enum ucm_umem_desc v;
	uint64_t base = 0;

	v = ucm_umem_desc_check(g, q->pool->idx, rd->addr, rd->len, &base);
	end = ucm_chain_rx_take(&q->chain, q->sg, v, rd->addr, rd->len,
				rd->options & XDP_PKT_CONTD, g->frame_size - 1, &frame);
	if (frame != UCM_CHAIN_LEAVE) {
		q->taken++;
		ucm_frame_move(q->x->umem, base, UCM_LOC_KERNEL, UCM_LOC_APP);
		if (frame == UCM_CHAIN_PUT)
			ucm_pool__put(q->pool, base);
		else if (q->chain.n == 1)
			q->chain_worker = ucm_xsk_rx_meta(q, rd->addr, base);
	}
	if (end == UCM_CHAIN_WHOLE)
		chain_whole(q, out);
	else if (end == UCM_CHAIN_DROP)
		chain_drop(q);
	return end == UCM_CHAIN_WHOLE;
}

/* The bytes of packet @d at hand (its first frame's, for a chain) into
 * *@rd; its first byte. */
const uint8_t *ucm_xsk_rx_head(struct ucm_xsk_queue *q, const struct ucm_xsk_desc *d,
			       uint32_t *rd)
{
	uint64_t addr = d->addr & ~UCM_DESC_CHAIN;

	*rd = d->len;
	if (d->addr & UCM_DESC_CHAIN)
		*rd = ucm_chain_of(q->x->area, ucm_umem_base(q->x->umem, addr))->head_len;
	return ucm_umem__frame(q->x->area, addr);
}

/* A packet that no worker takes goes home, every frame of it. */
void ucm_xsk_rx_put(struct ucm_xsk_queue *q, const struct ucm_xsk_desc *d)
{
	uint64_t base = ucm_umem_base(q->x->umem, d->addr & ~UCM_DESC_CHAIN);
	uint64_t frag[UCM_CHAIN_MAX - 1];
	uint32_t i, n = 0;

	if (d->addr & UCM_DESC_CHAIN)
		n = ucm_chain_frames(q->x->area, base, q->x->frame_size - 1, frag);
	for (i = 0; i < n; i++) {
		ucm_frame_move(q->x->umem, frag[i], UCM_LOC_CHAIN, UCM_LOC_APP);
		ucm_pool__put(q->pool, frag[i]);
	}
	ucm_pool__put(q->pool, base);
}

