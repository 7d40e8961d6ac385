// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An AF_XDP queue's way out, on its RX thread (the queue's NAPI, which owns
 * its TX and completion rings as a driver's does): the workers' packets
 * from their TX channels onto the TX ring, and the completed frames home
 * in bulk. queue.c is the rest of the queue's operations.
 *
 * A packet of several frames (UCM_DESC_CHAIN, its later frames listed in
 * its first frame's headroom: engine/chain.h) goes on the ring as one
 * descriptor per frame, all but the last with XDP_PKT_CONTD, the TX
 * metadata's request on the first only; posted whole or not at all. The
 * completion ring gives back one address per descriptor: tx_posted and
 * tx_done (port_internal.h) count frames, and so do the statistics' tx
 * and tx_completed; a packet of several counts once in tx_ring_full and
 * tx_bad_desc, and tx less tx_chain_more is the packets posted
 * (tx_packets, one counter: a reading never goes back).
 */
#include <string.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "core/pool_internal.h"
#include "ucpumap/txq.h"
#include "port_internal.h"

/* Linux 6.11 (and 6.8's stable updates): a TX descriptor that says it
 * carries TX metadata. Older headers lack it. */
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA			(1 << 1)
#endif

/* Kick the kernel into sending: copy mode sends in this syscall; zero-copy
 * drivers are woken. EAGAIN/EBUSY/ENOBUFS: the kernel is busy, the next
 * kick sends what is left. ENETDOWN: the device is down, and copy mode
 * takes nothing from the ring until it is up (tx_stuck()). */
static void tx_kick(struct ucm_xsk_queue *q)
{
	int err = 0;

	STAT_ADD(q->stats.tx_kicks, 1);
	if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0)
		err = errno;
	q->tx_down = err == ENETDOWN || err == ENXIO;
	if (err && err != EAGAIN && err != EBUSY && err != ENOBUFS)
		STAT_ADD(q->stats.tx_kick_err, 1);
}

/* Without need_wakeup the kernel must be kicked every time; with busy
 * polling too: each kick is a busy poll, which runs the driver's TX while
 * its interrupts are deferred (need_wakeup tells of the interrupt-driven
 * path only; xdpsock kicks every time then as well). */
static bool tx_wants_kick(struct ucm_xsk_queue *q)
{
	return !(q->bind_flags & XDP_USE_NEED_WAKEUP) || q->busy_poll ||
	       xsk_ring_prod__needs_wakeup(&q->tx);
}

/* Packets that do not go out: every frame of each home (ours straight
 * into the cache: we are its owner), from the channel's hands. */
static void tx_home(struct ucm_xsk_queue *q, const uint64_t *desc, uint32_t n)
{
	uint64_t back[UCM_XSK_RX_BATCH + UCM_CHAIN_MAX];
	uint32_t i, m = 0;

	for (i = 0; i < n; i++) {
		m += ucm_chain_desc_frames(q->x->umem, desc[i], back + m);
		if (m >= UCM_XSK_RX_BATCH || i + 1 == n) {
			ucm_umem_put_bulk_from(q->x->umem, back, m, UCM_LOC_APP, false);
			m = 0;
		}
	}
}

/* Why a packet is refused (tx_bad_desc): engine/chain.h's reasons. */
static void tx_refuse(struct ucm_xsk_queue *q, uint64_t d, enum ucm_chain_why why)
{
	tx_home(q, &d, 1);
	STAT_ADD(q->stats.tx_bad_desc, 1);
	if (why == UCM_CHAIN_LONG)
		STAT_ADD(q->stats.tx_chain_long, 1);
	else if (why == UCM_CHAIN_NOSG)
		STAT_ADD(q->stats.tx_chain_nosg, 1);
	else if (d & UCM_DESC_CHAIN)
		STAT_ADD(q->stats.tx_chain_bad, 1);
}

/* A frame's part of a packet that the kernel takes: @len bytes from
 * @addr, within its frame, with TX metadata UCM_TXQ_META_LEN into it at
 * least (the kernel checks every descriptor so). */
static bool tx_part_ok(const struct ucm_xsk *x, uint64_t addr, uint32_t len)
{
	uint64_t off = addr & (x->frame_size - 1);

	return addr < x->size && len && off + len <= x->frame_size &&
	       (!x->tx_meta || off >= UCM_TXQ_META_LEN);
}

/* A checksum request (UCM_TXQ_DESC_CSUM) the kernel can honour: asked in
 * the metadata, its field within the first part, @head bytes (copy mode
 * refuses one past it with EINVAL and leaves it at the ring's head). The
 * metadata may sit unaligned: copied out. */
static bool tx_csum_ok(const struct ucm_xsk *x, uint64_t addr, uint32_t head)
{
	struct ucm_txq_meta m;

	memcpy(&m, (const char *)x->area + addr - UCM_TXQ_META_LEN, sizeof(m));
	/* The request alone: the kernel refuses flags it does not know the
	 * same way (txq.h: the only value ours take). */
	return m.flags == UCM_TXQ_META_F_CSUM &&
	       (uint32_t)m.csum_start + m.csum_offset + sizeof(uint16_t) <= head;
}

/*
 * A descriptor the kernel would take without ever completing it, losing
 * its frame (or, for a request it cannot honour, stall the ring on): no
 * bytes, or a part outside its frame; with TX metadata, a packet less
 * than UCM_TXQ_META_LEN into its frame; a checksum request where there
 * is none to make, or whose field is not in the first part. A packet of several: on a socket bound without
 * XDP_USE_SG, more frames than the kernel takes, or in zero-copy the
 * driver (or none listed), a frame listed twice (the first too: it would
 * complete twice and go home twice), or parts whose lengths do not add up
 * to the packet's.
 */
static enum ucm_chain_why tx_check(const struct ucm_xsk_queue *q, uint64_t d,
				   const struct ucm_chain *c)
{
	const struct ucm_xsk *x = q->x;
	uint64_t addr = ucm_desc_addr(ucm_txq_desc_plain(d)) & ~UCM_DESC_CHAIN;
	uint64_t base[UCM_CHAIN_MAX];
	uint32_t i, j, len;

	if ((d & UCM_TXQ_DESC_CSUM) && !x->tx_csum)
		return UCM_CHAIN_BAD;
	if (likely(!c))
		return tx_part_ok(x, addr, ucm_desc_len(d)) &&
		       (!(d & UCM_TXQ_DESC_CSUM) || tx_csum_ok(x, addr, ucm_desc_len(d))) ?
			       UCM_CHAIN_OK : UCM_CHAIN_BAD;
	if (!q->sg)
		return UCM_CHAIN_NOSG;
	if (!c->nfrag || c->nfrag >= ucm_xsk_tx_frames(x))
		return c->nfrag ? UCM_CHAIN_LONG : UCM_CHAIN_BAD;
	if (!tx_part_ok(x, addr, c->head_len) ||
	    ((d & UCM_TXQ_DESC_CSUM) && !tx_csum_ok(x, addr, c->head_len)))
		return UCM_CHAIN_BAD;
	len = c->head_len;
	base[0] = ucm_umem_base(x->umem, addr);
	for (i = 0; i < c->nfrag; i++) {
		if (!tx_part_ok(x, ucm_desc_addr(c->frag[i]), ucm_desc_len(c->frag[i])))
			return UCM_CHAIN_BAD;
		base[i + 1] = ucm_umem_base(x->umem, ucm_desc_addr(c->frag[i]));
		for (j = 0; j <= i; j++)
			if (base[j] == base[i + 1])
				return UCM_CHAIN_BAD;
		len += ucm_desc_len(c->frag[i]);
	}
	return len == ucm_desc_len(d) ? UCM_CHAIN_OK : UCM_CHAIN_BAD;
}

/* One TX descriptor: @len bytes at @addr, its frame now the kernel's
 * (from @from). A zero-copy driver may read the metadata of every
 * descriptor, asked for or not: no stale request (@opt without
 * XDP_TX_METADATA). */
static void tx_put(struct ucm_xsk_queue *q, uint32_t slot, uint64_t addr, uint32_t len,
		   uint32_t opt, enum ucm_frame_loc from)
{
	struct ucm_xsk *x = q->x;
	struct xdp_desc *td = xsk_ring_prod__tx_desc(&q->tx, slot);

	if (x->tx_meta && x->zerocopy && !(opt & XDP_TX_METADATA))
		memset((char *)x->area + addr - UCM_TXQ_META_LEN, 0, sizeof(uint64_t));
	td->addr = addr;
	td->len = len;
	td->options = opt;
	ucm_frame_move(x->umem, ucm_umem_base(x->umem, addr), from, UCM_LOC_KERNEL);
}

/* The list of packet @d's later frames, or NULL for a packet of one, and
 * for one whose first frame is outside the UMEM (refused as a packet of
 * one would be: its list is nowhere to read). */
static const struct ucm_chain *tx_chain_of(const struct ucm_xsk *x, uint64_t d)
{
	uint64_t base;

	if (likely(!(d & UCM_DESC_CHAIN)))
		return NULL;
	base = ucm_umem_desc_base(x->umem, ucm_txq_desc_plain(d));
	return base < x->size ? ucm_chain_of(x->area, base) : NULL;
}

/* Ring slots @n packets take at most (a list's count bounded as its
 * check bounds it). */
static uint32_t tx_slots(const struct ucm_xsk *x, const uint64_t *desc, uint32_t n)
{
	uint32_t i, need = n;

	for (i = 0; i < n; i++) {
		const struct ucm_chain *c = tx_chain_of(x, desc[i]);

		if (unlikely(c))
			need += c->nfrag < UCM_CHAIN_MAX ? c->nfrag : 0;
	}
	return need;
}

uint32_t ucm_xsk_queue__tx(struct ucm_xsk_queue *q, const uint64_t *desc,
			   uint32_t n)
{
	struct ucm_xsk *x = q->x;
	uint32_t idx = 0, k, i, j, need, used = 0, more = 0, chains = 0;

	/* reserve() is all or nothing: ask for what there is room for. */
	need = n ? tx_slots(x, desc, n) : 0;
	k = need ? xsk_prod_nb_free(&q->tx, need) : 0;
	if (k > need)
		k = need;
	if (k && xsk_ring_prod__reserve(&q->tx, k, &idx) != k)
		k = 0;
	for (i = 0; i < n; i++) {
		uint64_t d = desc[i], addr = ucm_desc_addr(ucm_txq_desc_plain(d)) & ~UCM_DESC_CHAIN;
		const struct ucm_chain *c = tx_chain_of(x, d);
		uint32_t opt = d & UCM_TXQ_DESC_CSUM ? XDP_TX_METADATA : 0;
		enum ucm_chain_why why = tx_check(q, d, c);

		if (unlikely(why)) {
			tx_refuse(q, d, why);
			continue;
		}
		if (likely(!c)) {
			if (used == k)
				break;
			tx_put(q, idx + used++, addr, ucm_desc_len(d), opt, UCM_LOC_APP);
			continue;
		}
		/* Whole or not at all: the kernel takes a packet's
		 * descriptors as they come, and ours are published together. */
		if (c->nfrag + 1u > k - used)
			break;
		tx_put(q, idx + used++, addr, c->head_len, opt | XDP_PKT_CONTD, UCM_LOC_APP);
		for (j = 0; j < c->nfrag; j++)
			tx_put(q, idx + used++, ucm_desc_addr(c->frag[j]), ucm_desc_len(c->frag[j]),
			       j + 1 < c->nfrag ? XDP_PKT_CONTD : 0, UCM_LOC_CHAIN);
		more += c->nfrag;
		chains++;
	}
	q->tx.cached_prod -= k - used;	/* the slots refusals left: not ours */
	if (used) {
		xsk_ring_prod__submit(&q->tx, used);
		q->tx_posted += used;
		STAT_ADD(q->stats.tx, used);
		STAT_ADD(q->stats.tx_packets, used - more);
	}
	if (chains) {
		STAT_ADD(q->stats.tx_chains, chains);
		STAT_ADD(q->stats.tx_chain_more, more);
	}
	if (i < n)
		STAT_ADD(q->stats.tx_ring_full, n - i);
	if (used && tx_wants_kick(q))
		tx_kick(q);
	return i;
}

uint32_t ucm_xsk_queue__complete(struct ucm_xsk_queue *q)
{
	struct ucm_xsk *x = q->x;
	uint64_t addrs[UCM_XSK_RX_BATCH];
	uint32_t idx = 0, n, i, total = 0;
	uint64_t cached;

	/* Copy mode sends only when kicked; a kick that met a busy kernel
	 * left descriptors on the TX ring. Taken but not completed yet is
	 * the driver's business (zero-copy): no kick for that. */
	if (xsk_prod_nb_free(&q->tx, q->tx.size) < q->tx.size && tx_wants_kick(q))
		tx_kick(q);
	while ((n = xsk_ring_cons__peek(&q->comp, UCM_XSK_RX_BATCH, &idx))) {
		for (i = 0; i < n; i++)
			addrs[i] = ucm_umem_base(x->umem,
						 *xsk_ring_cons__comp_addr(&q->comp, idx + i));
		xsk_ring_cons__release(&q->comp, n);
		q->tx_done += n;
		/* Our xdp_return_frame_bulk(): the owner's bulk goes
		 * straight into its cache (unless NO_DIRECT_BULK); what
		 * reached the cache is the direct share. */
		cached = q->pool->owner_stats.cached;
		ucm_umem_put_bulk_from(x->umem, addrs, n, UCM_LOC_KERNEL,
				       false);
		STAT_ADD(q->stats.tx_comp_direct, q->pool->owner_stats.cached - cached);
		STAT_ADD(q->stats.tx_comp_bulks, 1);
		total += n;
	}
	/* S1: release, so a reader that sees these completions sees the
	 * sends before them (S2 in ucm_xsk_queue__stats()). */
	if (total)
		__atomic_store_n(&q->stats.tx_completed,
				 READ_ONCE(q->stats.tx_completed) + total, __ATOMIC_RELEASE);
	return total;
}

uint32_t ucm_xsk_queue__tx_pending(const struct ucm_xsk_queue *q)
{
	return (uint32_t)(q->tx_posted - q->tx_done);
}

/*
 * The RX thread's turn of the way out, as a driver's NAPI poll does its TX
 * completions: lend the workers frames of its pool, put what they filled
 * on the TX ring, and bring completed frames home, in bulk, straight into
 * its own cache (direct bulk recycling). Completions are reaped before
 * each send, so the TX ring has all the room it can, and no more packets
 * are collected than its free slots hold at the most frames a packet may
 * take: the rest stay in the channel, whose filling holds the worker's
 * reads back (the packets wait in the tun's queue, their senders held by
 * the kernel) rather than being read and dropped here. The channels take
 * turns at going first, so that one that is always full does not keep
 * the others' packets out. The RX direction never waits on TX.
 */
uint32_t ucm_xsk_queue__tx_turn(struct ucm_xsk_queue *q,
				struct ucm_txq *const *txq, uint32_t ntxq)
{
	uint32_t per = ucm_xsk_tx_frames(q->x), first = ntxq ? q->tx_next++ % ntxq : 0;
	uint64_t desc[UCM_XSK_RX_BATCH];
	uint32_t n, k, i, c, room, done = 0;

	for (c = 0; c < ntxq; c++) {
		i = (first + c) % ntxq;
		ucm_txq__lend(txq[i], q->pool);
		if (!ucm_txq__pending(txq[i]))
			continue;
		done += ucm_xsk_queue__complete(q);
		room = xsk_prod_nb_free(&q->tx, q->tx.size);
		/* An empty ring smaller than the most a packet may take
		 * takes one: a longer one is refused, counted. */
		room = room == q->tx.size && room < per ? 1 : room / per;
		n = ucm_txq__collect(txq[i], desc, min(room, (uint32_t)UCM_XSK_RX_BATCH));
		if (!n)
			continue;
		k = ucm_xsk_queue__tx(q, desc, n);
		if (k < n)
			tx_home(q, desc + k, n - k);
		done += n;
	}
	return done + ucm_xsk_queue__complete(q);
}
