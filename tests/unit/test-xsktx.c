// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The TX path's packets of several frames (multi-buffer AF_XDP,
 * xsk/queue_tx.c's ucm_xsk_queue__tx()), with no socket: a queue whose TX
 * and completion rings are memory of ours, read and answered here as the
 * kernel would, over a real UMEM (the debug build's frame tags check every
 * move; the pool audit says where every frame is). A packet of several
 * goes on the ring as one descriptor per frame, all but the last with
 * XDP_PKT_CONTD, the metadata's request on the first only, whole or not
 * at all; each way it can be bad is a counted refusal, every frame home,
 * the next packet fine; completions bring each frame home.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_xdp.h>

#include "../../xsk/port_internal.h"
#include "ucpumap/txq.h"
#include "utest.h"

#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA	(1 << 1)
#endif

#define FRAMES		256
#define RING		16
#define FS		4096
#define HEAD_OFF	(256 - 14)	/* a tun read's Ethernet header */
#define HEAD_LEN	(FS - HEAD_OFF)
#define FRAG_OFF	UCM_TXQ_META_LEN
#define FRAG_LEN	(FS - FRAG_OFF)

/* A queue with rings of ours: what the kernel would see of them. */
struct fake {
	struct ucm_xsk x;
	struct ucm_xsk_queue q;
	uint32_t tx_prod, tx_cons, tx_flags;
	struct xdp_desc tx[RING];
	uint32_t c_prod, c_cons, c_flags;
	uint64_t comp[RING];
	uint32_t rx_prod, rx_cons, rx_flags;
	struct xdp_desc rx[RING];
};

/* An RX ring with nothing on it, for the idle spin's cases. */
static void fake_rx_empty(struct fake *f)
{
	f->q.rx.mask = RING - 1;
	f->q.rx.size = RING;
	f->q.rx.producer = &f->rx_prod;
	f->q.rx.consumer = &f->rx_cons;
	f->q.rx.flags = &f->rx_flags;
	f->q.rx.ring = f->rx;
}

static struct fake *fake_new(bool sg)
{
	UCM_OPTS(ucm_umem_opts, uo, .npools = 1, .frames_per_pool = FRAMES, .frame_size = FS);
	struct fake *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->x.umem = ucm_umem__create(&uo);
	if (!f->x.umem) {
		free(f);
		return NULL;
	}
	f->x.area = ucm_umem__area(f->x.umem);
	f->x.size = ucm_umem__size(f->x.umem);
	f->x.frame_size = FS;
	f->x.nqueues = 1;
	f->x.q = &f->q;
	f->x.tx_meta = true;	/* the kernel's checks for every descriptor */
	f->x.tx_csum = true;
	f->q.x = &f->x;
	f->q.pool = ucm_umem__pool(f->x.umem, 0);
	f->q.fd = -1;
	f->q.wake_fd = -1;
	f->q.sg = sg;
	f->q.chain.max = UCM_CHAIN_MAX;
	/* need_wakeup, never asked: no kick of a socket we do not have */
	f->q.bind_flags = XDP_USE_NEED_WAKEUP;
	f->q.tx.mask = RING - 1;
	f->q.tx.size = RING;
	f->q.tx.producer = &f->tx_prod;
	f->q.tx.consumer = &f->tx_cons;
	f->q.tx.flags = &f->tx_flags;
	f->q.tx.ring = f->tx;
	f->q.tx.cached_cons = RING;
	f->q.comp.mask = RING - 1;
	f->q.comp.size = RING;
	f->q.comp.producer = &f->c_prod;
	f->q.comp.consumer = &f->c_cons;
	f->q.comp.flags = &f->c_flags;
	f->q.comp.ring = f->comp;
	ucm_pool__set_owner(f->q.pool);
	return f;
}

static uint64_t frame(struct fake *f)
{
	uint64_t a = UINT64_MAX;

	ucm_pool__alloc(f->q.pool, &a);
	return a;
}

/* A packet of one frame, 100 bytes at the headroom. */
static uint64_t single(struct fake *f)
{
	return ucm_desc_make(frame(f) + HEAD_OFF, 100);
}

/*
 * A packet of @n frames as the read path lays one out: the first full from
 * HEAD_OFF, the later ones FRAG_OFF in, the last @last bytes; the list in
 * the first frame's headroom, the later frames tagged chain. Its frames
 * into @fr (@n of them).
 */
static uint64_t chain(struct fake *f, uint32_t n, uint32_t last, uint64_t *fr)
{
	struct ucm_chain *c;
	uint32_t i, len = HEAD_LEN;

	for (i = 0; i < n; i++)
		fr[i] = frame(f);
	c = ucm_chain_of(f->x.area, fr[0]);
	c->nfrag = n - 1;
	c->head_len = HEAD_LEN;
	for (i = 1; i < n; i++) {
		uint32_t l = i + 1 < n ? FRAG_LEN : last;

		c->frag[i - 1] = ucm_desc_make(fr[i] + FRAG_OFF, l);
		len += l;
		ucm_frame_move(f->x.umem, fr[i], UCM_LOC_APP, UCM_LOC_CHAIN);
	}
	return ucm_desc_make(fr[0] + HEAD_OFF, len) | UCM_DESC_CHAIN;
}

/* The caller's share of what the ring did not take: every frame home. */
static void home(struct fake *f, uint64_t d)
{
	uint64_t fr[UCM_CHAIN_MAX];
	uint32_t n = ucm_chain_desc_frames(f->x.umem, d, fr);

	ucm_umem__put_bulk(f->x.umem, fr, n);
}

/* The kernel sends everything on the ring: a completion per descriptor. */
static uint32_t kernel_send(struct fake *f)
{
	uint32_t n = 0;

	while (f->tx_cons != __atomic_load_n(&f->tx_prod, __ATOMIC_ACQUIRE)) {
		f->comp[f->c_prod & (RING - 1)] = f->tx[f->tx_cons & (RING - 1)].addr;
		f->tx_cons++;
		__atomic_store_n(&f->c_prod, f->c_prod + 1, __ATOMIC_RELEASE);
		n++;
	}
	return n;
}

static struct ucm_xsk_stats stats(struct fake *f)
{
	struct ucm_xsk_stats s;

	ucm_xsk_queue__stats(&f->q, &s, sizeof(s));
	return s;
}

/* Frames where the audit puts them: @kernel on the ring, @app and @chain
 * with us. */
static int audit(struct fake *f, uint32_t kernel, uint32_t app, uint32_t chain)
{
	struct ucm_pool_audit a;

	UT_ASSERT(ucm_pool__audit(f->q.pool, &a, sizeof(a)) == 0, "the books do not balance");
	UT_ASSERT(a.loc[UCM_LOC_KERNEL] == kernel, "kernel holds %u, want %u",
		  a.loc[UCM_LOC_KERNEL], kernel);
	UT_ASSERT(a.loc[UCM_LOC_APP] == app, "app holds %u, want %u", a.loc[UCM_LOC_APP], app);
	UT_ASSERT(a.chain == chain, "chains hold %u, want %u", a.chain, chain);
	return 0;
}

/* Whatever is on the ring sent and completed, the UMEM gone: 0 when every
 * frame was home. */
static int fake_free(struct fake *f)
{
	int err;

	kernel_send(f);
	ucm_xsk_queue__complete(&f->q);
	if (audit(f, 0, 0, 0))
		return 1;
	UT_ASSERT(ucm_xsk_queue__tx_pending(&f->q) == 0, "%u frames pending",
		  ucm_xsk_queue__tx_pending(&f->q));
	ucm_pool__clear_owner(f->q.pool);
	err = ucm_umem__destroy(f->x.umem, 0);
	free(f);
	UT_ASSERT(!err, "the UMEM stays: %s", strerror(-err));
	return 0;
}

#define FAKE(f, sg)							\
	struct fake *f = fake_new(sg);					\
	UT_ASSERT(f, "no UMEM: %s", strerror(errno))

/* Three frames, one packet: three descriptors in order, XDP_PKT_CONTD on
 * the first two, the checksum's metadata on the first only; the frames
 * the kernel's, the counts in frames and packets; the completions bring
 * all three home. */
static int test_posted(void)
{
	FAKE(f, true);
	uint64_t fr[3], d;
	struct ucm_xsk_stats s;
	struct xdp_desc *t = f->tx;

	d = chain(f, 3, 1000, fr);
	d = ucm_txq_meta_csum((char *)f->x.area + ucm_desc_addr(d & ~UCM_DESC_CHAIN), d, 34, 6);
	UT_ASSERT(ucm_xsk_queue__tx(&f->q, &d, 1) == 1, "not taken");
	UT_ASSERT(f->tx_prod == 3, "%u descriptors, want 3", f->tx_prod);
	UT_ASSERT(t[0].addr == fr[0] + HEAD_OFF && t[0].len == HEAD_LEN &&
		  t[0].options == (XDP_PKT_CONTD | XDP_TX_METADATA), "first: %#llx %u %#x",
		  (unsigned long long)t[0].addr, t[0].len, t[0].options);
	UT_ASSERT(t[1].addr == fr[1] + FRAG_OFF && t[1].len == FRAG_LEN &&
		  t[1].options == XDP_PKT_CONTD, "second: %u %#x", t[1].len, t[1].options);
	UT_ASSERT(t[2].addr == fr[2] + FRAG_OFF && t[2].len == 1000 && t[2].options == 0,
		  "last: %u %#x", t[2].len, t[2].options);
	s = stats(f);
	UT_ASSERT(s.tx == 3 && s.tx_chains == 1 && s.tx_chain_more == 2 && s.tx_ring_full == 0 &&
		  s.tx_bad_desc == 0 && s.tx_packets == 1, "tx %llu chains %llu more %llu packets %llu",
		  (unsigned long long)s.tx, (unsigned long long)s.tx_chains,
		  (unsigned long long)s.tx_chain_more, (unsigned long long)s.tx_packets);
	UT_ASSERT(ucm_xsk_queue__tx_pending(&f->q) == 3, "pending %u",
		  ucm_xsk_queue__tx_pending(&f->q));
	if (audit(f, 3, 0, 0))
		return 1;
	UT_ASSERT(kernel_send(f) == 3, "sent");
	UT_ASSERT(ucm_xsk_queue__complete(&f->q) == 3, "completed");
	UT_ASSERT(stats(f).tx_completed == 3, "tx_completed %llu",
		  (unsigned long long)stats(f).tx_completed);
	return fake_free(f);
}

/* A ring with room for fewer descriptors than the packet has: nothing of
 * it goes on, it is counted ring full and stays the caller's; once the
 * ring has room it goes whole. Packets before it go; after it, none. */
static int test_ring_full(void)
{
	FAKE(f, true);
	uint64_t fr[3], d[RING];
	uint32_t i, k;

	for (i = 0; i < RING - 2; i++)
		d[i] = single(f);
	UT_ASSERT(ucm_xsk_queue__tx(&f->q, d, RING - 2) == RING - 2, "singles");
	d[0] = chain(f, 3, 10, fr);
	d[1] = single(f);
	k = ucm_xsk_queue__tx(&f->q, d, 2);
	UT_ASSERT(k == 0 && f->tx_prod == RING - 2, "took %u, ring at %u", k, f->tx_prod);
	UT_ASSERT(stats(f).tx_ring_full == 2, "ring full %llu",
		  (unsigned long long)stats(f).tx_ring_full);
	if (audit(f, RING - 2, 2, 2))
		return 1;
	/* Sent: room for all three, and the single behind them. */
	kernel_send(f);
	ucm_xsk_queue__complete(&f->q);
	k = ucm_xsk_queue__tx(&f->q, d, 2);
	UT_ASSERT(k == 2 && stats(f).tx == RING - 2 + 4 && stats(f).tx_packets == RING - 2 + 2,
		  "took %u, tx %llu, packets %llu", k, (unsigned long long)stats(f).tx,
		  (unsigned long long)stats(f).tx_packets);
	if (audit(f, 4, 0, 0))
		return 1;
	/* A single, a packet of three, a single with room for four: the
	 * last is left. */
	kernel_send(f);
	ucm_xsk_queue__complete(&f->q);
	for (i = 0; i < RING - 4; i++)
		d[i] = single(f);
	UT_ASSERT(ucm_xsk_queue__tx(&f->q, d, RING - 4) == RING - 4, "fill");
	d[0] = single(f);
	d[1] = chain(f, 3, 10, fr);
	d[2] = single(f);
	k = ucm_xsk_queue__tx(&f->q, d, 3);
	UT_ASSERT(k == 2 && f->tx_prod - f->tx_cons == RING, "took %u, %u on the ring", k,
		  f->tx_prod - f->tx_cons);
	home(f, d[2]);
	return fake_free(f);
}

/* Each bad packet of several: refused, counted by its reason, every frame
 * home; the single packet after it goes. */
static int refused(struct fake *f, uint64_t d, uint64_t *(*what)(struct ucm_xsk_stats *))
{
	struct ucm_xsk_stats s0 = stats(f), s;
	uint64_t next[2] = { d, single(f) };
	uint32_t k;

	k = ucm_xsk_queue__tx(&f->q, next, 2);
	s = stats(f);
	UT_ASSERT(k == 2 && s.tx == s0.tx + 1 && s.tx_packets == s0.tx_packets + 1,
		  "took %u, tx %llu, packets %llu", k, (unsigned long long)s.tx,
		  (unsigned long long)s.tx_packets);
	UT_ASSERT(s.tx_bad_desc == s0.tx_bad_desc + 1 && *what(&s) == *what(&s0) + 1,
		  "not counted by its reason");
	return audit(f, f->tx_prod - f->tx_cons, 0, 0);
}

static uint64_t *bad(struct ucm_xsk_stats *s)
{
	return &s->tx_chain_bad;
}

static uint64_t *too_long(struct ucm_xsk_stats *s)
{
	return &s->tx_chain_long;
}

static uint64_t *nosg(struct ucm_xsk_stats *s)
{
	return &s->tx_chain_nosg;
}

static uint64_t *bad_desc(struct ucm_xsk_stats *s)
{
	return &s->tx_bad_desc;
}

static int test_refused(void)
{
	FAKE(f, true);
	uint64_t fr[UCM_CHAIN_MAX], d, a;
	struct ucm_chain *c;

	/* A later part past its frame. */
	d = chain(f, 3, 10, fr);
	ucm_chain_of(f->x.area, fr[0])->frag[0] = ucm_desc_make(fr[1] + FRAG_OFF, FRAG_LEN + 1);
	if (refused(f, d + ((uint64_t)1 << UCM_DESC_LEN_SHIFT), bad))
		return 1;
	/* Lengths that do not add up to the packet's. */
	d = chain(f, 3, 10, fr);
	if (refused(f, d + ((uint64_t)1 << UCM_DESC_LEN_SHIFT), bad))
		return 1;
	/* A later part in the TX metadata's room. */
	d = chain(f, 2, 10, fr);
	ucm_chain_of(f->x.area, fr[0])->frag[0] = ucm_desc_make(fr[1] + 8, 10);
	if (refused(f, d, bad))
		return 1;
	/* None listed. */
	d = chain(f, 1, 0, fr);
	if (refused(f, d, bad))
		return 1;
	/* A frame listed twice, and the first frame listed (each would
	 * complete, and go home, twice): refused, each frame home once. */
	d = chain(f, 2, 10, fr);
	c = ucm_chain_of(f->x.area, fr[0]);
	c->frag[1] = c->frag[0];
	c->nfrag = 2;
	if (refused(f, d + ((uint64_t)10 << UCM_DESC_LEN_SHIFT), bad))
		return 1;
	d = chain(f, 2, 10, fr);
	c = ucm_chain_of(f->x.area, fr[0]);
	c->frag[1] = ucm_desc_make(fr[0] + FRAG_OFF, 10);
	c->nfrag = 2;
	if (refused(f, d + ((uint64_t)10 << UCM_DESC_LEN_SHIFT), bad))
		return 1;
	/* More than the kernel takes: the frames the list can hold home. */
	d = chain(f, UCM_CHAIN_MAX, 10, fr);
	c = ucm_chain_of(f->x.area, fr[0]);
	c->nfrag = UCM_CHAIN_MAX;
	if (refused(f, d, too_long))
		return 1;
	/* Packets of one: no bytes, or past their frame. */
	if (refused(f, ucm_desc_make(frame(f) + HEAD_OFF, 0), bad_desc) ||
	    refused(f, ucm_desc_make(frame(f) + HEAD_OFF, FS - HEAD_OFF + 1), bad_desc))
		return 1;
	/* A packet of several whose first frame is outside the UMEM: its
	 * list is not read (no crash), the packet refused as bad. */
	if (refused(f, ucm_desc_make(1ull << 41, 100) | UCM_DESC_CHAIN, bad))
		return 1;
	/* In zero-copy, more frames than the driver takes (xdp-zc-max-segs). */
	f->x.zerocopy = true;
	f->x.zc_max_segs = 4;
	d = chain(f, 5, 10, fr);
	if (refused(f, d, too_long))
		return 1;
	f->x.zerocopy = false;
	/* Checksum requests the kernel cannot honour: the field past the
	 * first part (of several, of one), the request not in the metadata. */
	d = chain(f, 2, 10, fr);
	d = ucm_txq_meta_csum((char *)f->x.area + fr[0] + HEAD_OFF, d, HEAD_LEN - 7, 6);
	if (refused(f, d, bad))
		return 1;
	a = frame(f) + HEAD_OFF;
	d = ucm_txq_meta_csum((char *)f->x.area + a, ucm_desc_make(a, 100), 34, 65);
	if (refused(f, d, bad_desc))
		return 1;
	a = frame(f) + HEAD_OFF;
	d = ucm_txq_meta_csum((char *)f->x.area + a, ucm_desc_make(a, 100), 34, 6);
	memset((char *)f->x.area + a - UCM_TXQ_META_LEN, 0, sizeof(uint64_t));
	if (refused(f, d, bad_desc))
		return 1;
	a = frame(f) + HEAD_OFF;	/* a flag besides the request's */
	d = ucm_txq_meta_csum((char *)f->x.area + a, ucm_desc_make(a, 100), 34, 6);
	((uint8_t *)f->x.area)[a - UCM_TXQ_META_LEN] |= 1 << 7;
	if (refused(f, d, bad_desc))
		return 1;
	/* A checksum request with no one to finish it. */
	f->x.tx_csum = false;
	d = chain(f, 2, 10, fr);
	d = ucm_txq_meta_csum((char *)f->x.area + fr[0] + HEAD_OFF, d, 34, 6);
	if (refused(f, d, bad))
		return 1;
	return fake_free(f);
}

/* A packet of several on a socket bound without XDP_USE_SG: refused, its
 * frames home; packets of one go as ever. */
static int test_no_sg(void)
{
	FAKE(f, false);
	uint64_t fr[3];

	if (refused(f, chain(f, 3, 10, fr), nosg))
		return 1;
	return fake_free(f);
}

/* The way out's turn: a channel's packets of several collected and
 * posted, no more than the ring's slots hold at the most frames a packet
 * may take (3, a zero-copy driver's): 5 of 6 in a ring of 16, the sixth
 * left in the channel, not dropped, and posted once the kernel sent. */
static int test_turn(void)
{
	FAKE(f, true);
	struct ucm_txq *t = ucm_txq__create(f->x.umem, 16);
	uint64_t fr[3], d[6];
	uint32_t i;

	UT_ASSERT(t, "no channel: %s", strerror(errno));
	f->x.zerocopy = true;
	f->x.zc_max_segs = 3;
	ucm_txq__set_lend(t, false);
	for (i = 0; i < 6; i++)	/* 18 descriptors: two packets too many */
		d[i] = chain(f, 3, 100 + i, fr);
	UT_ASSERT(ucm_txq__send(t, d, 6) == 6, "send");
	ucm_xsk_queue__tx_turn(&f->q, &t, 1);
	UT_ASSERT(stats(f).tx_chains == 5 && stats(f).tx_ring_full == 0 && ucm_txq__pending(t) == 1,
		  "chains %llu full %llu, %u left (want 5, 0, 1)",
		  (unsigned long long)stats(f).tx_chains,
		  (unsigned long long)stats(f).tx_ring_full, ucm_txq__pending(t));
	if (audit(f, 15, 1, 2))	/* the sixth, in the channel */
		return 1;
	kernel_send(f);
	ucm_xsk_queue__tx_turn(&f->q, &t, 1);
	UT_ASSERT(stats(f).tx_chains == 6 && !ucm_txq__pending(t), "after the send: %llu chains",
		  (unsigned long long)stats(f).tx_chains);
	UT_ASSERT(!ucm_txq__destroy(t), "the channel");
	return fake_free(f);
}

/* Two channels, each always fuller than the ring takes: they take turns
 * at going first, so the second's packets go out too. */
static int test_turn_channels_alternate(void)
{
	FAKE(f, false);
	struct ucm_txq *t[2] = { ucm_txq__create(f->x.umem, 64), ucm_txq__create(f->x.umem, 64) };
	struct ucm_txq_stats ts[2];
	uint64_t d[2 * RING];

	UT_ASSERT(t[0] && t[1], "no channel: %s", strerror(errno));
	for (int c = 0; c < 2; c++) {	/* two rings' worth each */
		ucm_txq__set_lend(t[c], false);
		for (int i = 0; i < 2 * RING; i++)
			d[i] = single(f);
		UT_ASSERT(ucm_txq__send(t[c], d, 2 * RING) == 2 * RING, "send");
	}
	for (int turn = 0; turn < 2; turn++) {
		ucm_xsk_queue__tx_turn(&f->q, t, 2);
		kernel_send(f);
	}
	for (int c = 0; c < 2; c++)
		ucm_txq__stats(t[c], &ts[c], sizeof(ts[c]));
	UT_ASSERT(ts[0].collected == RING && ts[1].collected == RING,
		  "collected %llu and %llu over two turns of a ring of %u (want %u each)",
		  (unsigned long long)ts[0].collected, (unsigned long long)ts[1].collected, RING,
		  RING);
	for (int turn = 0; turn < 2; turn++) {	/* the rest */
		ucm_xsk_queue__tx_turn(&f->q, t, 2);
		kernel_send(f);
	}
	UT_ASSERT(!ucm_txq__destroy(t[0]) && !ucm_txq__destroy(t[1]), "the channels");
	return fake_free(f);
}

/* A TX ring the kernel has not emptied: the turn collects no more than
 * it has slots for, and the rest wait in the channel (its filling holds
 * the worker's reads back) instead of being dropped; once the kernel has
 * sent, the next turn posts them. */
static int test_turn_ring_full(void)
{
	FAKE(f, false);
	struct ucm_txq *t = ucm_txq__create(f->x.umem, 32);
	uint64_t d[RING + 4];
	uint32_t i;

	UT_ASSERT(t, "no channel: %s", strerror(errno));
	ucm_txq__set_lend(t, false);
	for (i = 0; i < RING + 4; i++)
		d[i] = single(f);
	UT_ASSERT(ucm_txq__send(t, d, RING + 4) == RING + 4, "send");
	ucm_xsk_queue__tx_turn(&f->q, &t, 1);
	UT_ASSERT(stats(f).tx == RING && stats(f).tx_ring_full == 0 && ucm_txq__pending(t) == 4,
		  "ring of %u: %llu posted, %llu dropped, %u left in the channel (want %u, 0, 4)",
		  RING, (unsigned long long)stats(f).tx, (unsigned long long)stats(f).tx_ring_full,
		  ucm_txq__pending(t), RING);
	kernel_send(f);
	ucm_xsk_queue__tx_turn(&f->q, &t, 1);
	UT_ASSERT(stats(f).tx == RING + 4 && !ucm_txq__pending(t), "after the send: %llu posted",
		  (unsigned long long)stats(f).tx);
	UT_ASSERT(!ucm_txq__destroy(t), "the channel");
	return fake_free(f);
}

/* The TX ring full and the driver taking nothing (zero-copy, its link
 * down): the channel's backlog does not keep the RX thread from its sleep
 * or its spin, which would turn at once, for ever; once the driver takes
 * from the ring, the backlog is work again. In copy mode the backlog stays
 * work, the kicks are what sends, but for a device that refused the last
 * one as down. */
static int test_tx_full_sleeps(void)
{
	FAKE(f, false);
	struct ucm_txq *t = ucm_txq__create(f->x.umem, 32);
	uint64_t d[RING + 4];
	uint32_t i;
	int n;

	UT_ASSERT(t, "no channel: %s", strerror(errno));
	fake_rx_empty(f);
	f->x.zerocopy = true;
	ucm_txq__set_lend(t, false);
	for (i = 0; i < RING + 4; i++)
		d[i] = single(f);
	UT_ASSERT(ucm_txq__send(t, d, RING + 4) == RING + 4, "send");
	ucm_xsk_queue__tx_turn(&f->q, &t, 1);
	UT_ASSERT(ucm_txq__pending(t) == 4, "%u left in the channel", ucm_txq__pending(t));
	n = ucm_xsk_queue__sleep(&f->q, &t, 1, 5);
	UT_ASSERT(n == 0 && stats(f).sleeps == 1, "a full ring the kernel does not take from: "
		  "sleep %d, %llu sleeps (want 0, 1)", n, (unsigned long long)stats(f).sleeps);
	n = ucm_xsk_queue__spin(&f->q, &t, 1, 50);
	UT_ASSERT(n == 0, "the spin ended for a backlog the ring cannot take: %d", n);
	f->x.zerocopy = false;
	n = ucm_xsk_queue__sleep(&f->q, &t, 1, 5);
	UT_ASSERT(n == 1 && stats(f).sleeps == 1, "copy mode: sleep %d (want 1: a kick's work)", n);
	/* Copy mode, the last kick refused (ENETDOWN): no work but the
	 * next kick, after the sleep; not its POLLOUT either (the ring's
	 * room: nothing frees it while the device is down). */
	f->q.tx_down = true;
	n = ucm_xsk_queue__sleep(&f->q, &t, 1, 5);
	UT_ASSERT(n == 0 && stats(f).sleeps == 2, "copy mode, device down: sleep %d, %llu sleeps "
		  "(want 0, 2)", n, (unsigned long long)stats(f).sleeps);
	n = ucm_xsk_queue__spin(&f->q, &t, 1, 50);
	UT_ASSERT(n == 0, "copy mode, device down: the spin ended for the backlog: %d", n);
	f->q.tx_down = false;
	f->x.zerocopy = true;
	kernel_send(f);
	n = ucm_xsk_queue__sleep(&f->q, &t, 1, 5);
	UT_ASSERT(n == 1 && stats(f).sleeps == 2, "the kernel took the ring: sleep %d (want 1)", n);
	ucm_xsk_queue__tx_turn(&f->q, &t, 1);
	UT_ASSERT(!ucm_txq__pending(t), "%u left", ucm_txq__pending(t));
	UT_ASSERT(!ucm_txq__destroy(t), "the channel");
	f->q.rx.producer = NULL;
	return fake_free(f);
}

/* A spinning RX thread stops for a worker's ask for frames, as its sleep
 * does (ucm_txq__sleep_begin()): the turn that follows lends them. */
static int test_spin_ask(void)
{
	FAKE(f, true);
	struct ucm_txq *t = ucm_txq__create(f->x.umem, 16);
	int n;

	UT_ASSERT(t, "no channel: %s", strerror(errno));
	fake_rx_empty(f);
	n = ucm_xsk_queue__spin(&f->q, &t, 1, 50);
	UT_ASSERT(n == 0, "an idle spin: %d", n);
	ucm_txq__want(t);
	n = ucm_xsk_queue__spin(&f->q, &t, 1, UCM_SPIN_US_MAX);
	UT_ASSERT(n == 1, "the spin did not stop for the ask: %d", n);
	UT_ASSERT(!ucm_txq__destroy(t), "the channel");
	f->q.rx.producer = NULL;
	return fake_free(f);
}

/* Two-way, a frame out on the TX ring that the kernel completed ends the
 * spin (its turn takes it home), where an idle look would spin on. */
static int test_spin_completion(void)
{
	FAKE(f, true);
	struct ucm_txq *t = ucm_txq__create(f->x.umem, 16);
	int n;

	UT_ASSERT(t, "no channel: %s", strerror(errno));
	fake_rx_empty(f);
	f->q.tx_posted = 1;	/* one frame out */
	n = ucm_xsk_queue__spin(&f->q, &t, 1, 50);
	UT_ASSERT(n == 0, "a spin with nothing completed: %d", n);
	f->comp[0] = 0;
	f->c_prod = 1;		/* the kernel completed it */
	n = ucm_xsk_queue__spin(&f->q, &t, 1, UCM_SPIN_US_MAX);
	UT_ASSERT(n == 1, "the spin did not stop for the completion: %d", n);
	f->c_prod = 0;		/* none after all: nothing was sent */
	f->q.comp.cached_prod = 0;
	f->q.tx_posted = 0;
	UT_ASSERT(!ucm_txq__destroy(t), "the channel");
	f->q.rx.producer = NULL;
	return fake_free(f);
}

/* A spin with its pool short refills the fill ring as frames come home:
 * the pool emptied, a refill that found nothing (fill_dry), RING frames
 * back in the pool; a 50 us look with no traffic posts them. */
static int test_spin_refill(void)
{
	FAKE(f, true);
	uint32_t fill_prod = 0, fill_cons = 0, fill_flags = 0;
	uint64_t fill[RING], held[FRAMES];
	int n, i;

	fake_rx_empty(f);
	f->x.fill_size = RING;
	f->q.fill.mask = RING - 1;
	f->q.fill.size = RING;
	f->q.fill.producer = &fill_prod;
	f->q.fill.consumer = &fill_cons;
	f->q.fill.flags = &fill_flags;
	f->q.fill.ring = fill;
	f->q.fill.cached_cons = RING;
	UT_ASSERT(ucm_pool__alloc_bulk(f->q.pool, held, FRAMES) == FRAMES, "the pool");
	UT_ASSERT(ucm_xsk_queue__refill(&f->q) == 0 && f->q.fill_dry, "a dry refill");
	UT_ASSERT(stats(f).fill_short == 1, "a dry refill counted %llu times",
		  (unsigned long long)stats(f).fill_short);
	/* 5 frames home: a short refill, counted once (its second ask,
	 * which finds none, is the same refill). */
	for (i = 0; i < 5; i++)
		ucm_pool__put(f->q.pool, held[i]);
	UT_ASSERT(ucm_xsk_queue__refill(&f->q) == 5 && stats(f).fill_short == 2,
		  "a refill of 5: fill_short %llu (want 2)", (unsigned long long)stats(f).fill_short);
	/* The kernel gives them back unused. */
	ucm_frame_move_bulk(f->x.umem, fill, 5, UCM_LOC_KERNEL, UCM_LOC_APP);
	for (i = 0; i < 5; i++)
		held[i] = fill[i];
	fill_prod = 0;
	f->q.fill.cached_prod = 0;
	f->q.fill.cached_cons = RING;
	for (i = 0; i < RING; i++)
		ucm_pool__put(f->q.pool, held[i]);	/* frames come home */
	n = ucm_xsk_queue__spin(&f->q, NULL, 0, 50);
	UT_ASSERT(n == 0, "an idle spin: %d", n);
	UT_ASSERT(fill_prod == RING, "%u of %u frames home posted during the spin",
		  fill_prod, RING);
	/* The kernel gives them back unused; the rest come home. */
	ucm_frame_move_bulk(f->x.umem, fill, RING, UCM_LOC_KERNEL, UCM_LOC_APP);
	for (i = 0; i < RING; i++)
		ucm_pool__put(f->q.pool, fill[i]);
	for (i = RING; i < FRAMES; i++)
		ucm_pool__put(f->q.pool, held[i]);
	f->q.rx.producer = NULL;
	return fake_free(f);
}

/* The destroy's reclaim counts what the sockets held over every pool: a
 * TX ring holds another queue's frames when a worker's verdict sends on
 * its own queue. Three frames out, one of pool 1 and two of pool 0, all
 * on queue 0's socket: they come home; a count that differs moves none. */
static int test_reclaim_across_pools(void)
{
	UCM_OPTS(ucm_umem_opts, uo, .npools = 2, .frames_per_pool = FRAMES, .frame_size = FS);
	struct ucm_umem *umem = ucm_umem__create(&uo);
	struct ucm_pool *pools[2];
	struct ucm_pool_audit a;
	uint64_t fr[3];
	int err;

	UT_ASSERT(umem, "no UMEM: %s", strerror(errno));
	pools[0] = ucm_umem__pool(umem, 0);
	pools[1] = ucm_umem__pool(umem, 1);
	ucm_pool__set_owner(pools[0]);
	ucm_pool__set_owner(pools[1]);
	UT_ASSERT(ucm_pool__alloc_bulk(pools[0], fr, 2) == 2 &&
		  ucm_pool__alloc_bulk(pools[1], fr + 2, 1) == 1, "no frames");
	for (int i = 0; i < 3; i++)
		ucm_frame_move(umem, fr[i], UCM_LOC_APP, UCM_LOC_KERNEL);
	ucm_pool__clear_owner(pools[0]);
	ucm_pool__clear_owner(pools[1]);
	/* One more out than the kernel held: someone has it, ask again. */
	err = ucm_pools_reclaim(pools, 2, 2, UCM_LOC_KERNEL, true);
	UT_ASSERT(err == -EBUSY, "3 out, 2 expected: %d", err);
	/* Fewer out than it held: one was counted home twice. */
	err = ucm_pools_reclaim(pools, 2, 4, UCM_LOC_KERNEL, false);
	UT_ASSERT(err == -EUCLEAN, "3 out, 4 expected: %d", err);
	err = ucm_pools_reclaim(pools, 2, 3, UCM_LOC_KERNEL, false);
	UT_ASSERT(!err, "3 out, 3 expected: %d", err);
	UT_ASSERT(!ucm_umem__audit(umem, &a, sizeof(a)) && a.loc[UCM_LOC_STACK] == 2 * FRAMES,
		  "%u of %u frames home", a.loc[UCM_LOC_STACK], 2 * FRAMES);
	UT_ASSERT(!ucm_umem__destroy(umem, 0), "the UMEM stays");
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_posted),
	UT_CASE(test_ring_full),
	UT_CASE(test_refused),
	UT_CASE(test_no_sg),
	UT_CASE(test_turn),
	UT_CASE(test_turn_ring_full),
	UT_CASE(test_tx_full_sleeps),
	UT_CASE(test_turn_channels_alternate),
	UT_CASE(test_spin_ask),
	UT_CASE(test_spin_refill),
	UT_CASE(test_spin_completion),
	UT_CASE(test_reclaim_across_pools),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
