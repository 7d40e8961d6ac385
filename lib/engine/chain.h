/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A packet of several frames (AF_XDP multi-buffer: XDP_USE_SG, the
 * kernel's xdp_frags). Its first frame travels as the packet: one
 * descriptor with UCM_DESC_CHAIN, the whole packet's length in it, through
 * the bulk queues and the worker ring like any other. The later frames
 * are listed in the first frame's headroom (struct ucm_chain) and tagged
 * UCM_LOC_CHAIN: they move with it, and every place that sends the first
 * frame home sends them too (ucm_chain_frames()).
 *
 * Where the list lies: after the worker's struct ucm_frame_hdr and before
 * the sink's room in front of the packet, so that neither overwrites it
 * while the packet is in flight. The RX thread writes it (after it has
 * read the XDP metadata, which lies nearer the packet) and hands the
 * frame on; the worker and the drop paths read it. The RX thread checked
 * every descriptor of the chain before it wrote the list: the list is
 * trusted as the frame tags are, never as a descriptor from the kernel.
 *
 * The way back sends such packets too (a tun's read longer than a frame,
 * a super-packet's segment): the read path lays the list out the same way
 * in the first frame it fills, its descriptor goes through the worker's
 * TX channel (ucpumap/txq.h) with UCM_DESC_CHAIN, and the RX thread posts
 * one TX descriptor per frame (xsk/queue_tx.c). There the list lies
 * before the TX metadata and the Ethernet header in front of the packet
 * (tun_read_tx.c checks it).
 */
#ifndef UCM_ENGINE_CHAIN_H
#define UCM_ENGINE_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pool_internal.h"
#include "core/umem_desc.h"
#include "ucpumap/cpumap.h"
#include "ucpumap/pool.h"
#include "ucpumap/txq.h"

/* Descriptors one packet may take: the kernel's MAX_SKB_FRAGS (17) and
 * the linear part; the kernel never sends an AF_XDP socket more. */
#define UCM_CHAIN_MAX		(UCM_FRAME_CHAIN_MAX + 1)

struct ucm_chain {
	uint16_t nfrag;		/* frames after the first: 1..UCM_CHAIN_MAX - 1 */
	uint16_t head_len;	/* packet bytes in the first frame */
	uint32_t rsvd;
	uint64_t frag[UCM_CHAIN_MAX - 1];	/* ucm_desc_make(addr, len) */
};

#define UCM_CHAIN_OFF	((sizeof(struct ucm_frame_hdr) + 7) & ~(size_t)7)
/* The smallest offset of a chain's first packet byte in its frame: the
 * list, then the sink's room. The kernel puts packets XDP_PACKET_HEADROOM
 * (256) in. */
#define UCM_CHAIN_HEAD_ROOM	(UCM_CHAIN_OFF + sizeof(struct ucm_chain) + UCM_FRAME_SINK_ROOM)
_Static_assert(UCM_CHAIN_HEAD_ROOM <= 256, "a chain's list fits the XDP headroom");

static inline struct ucm_chain *ucm_chain_of(void *area, uint64_t base)
{
	return (struct ucm_chain *)((char *)area + base + UCM_CHAIN_OFF);
}

/* The later frames (their handles) of the chain in frame @base, into
 * @out (room for UCM_CHAIN_MAX - 1); @fmask: frame size - 1. Return: how
 * many. */
static inline uint32_t ucm_chain_frames(void *area, uint64_t base, uint64_t fmask,
					uint64_t *out)
{
	const struct ucm_chain *c = ucm_chain_of(area, base);
	uint32_t i, n = c->nfrag;

	for (i = 0; i < n; i++)
		out[i] = ucm_desc_addr(c->frag[i]) & ~fmask;
	return n;
}

/*
 * Every frame of a packet that goes home unsent from where a TX channel's
 * descriptors are (its rings, the TX ring's refusals): the handle of the
 * frame of @desc (ucm_desc_make(), with UCM_TXQ_DESC_CSUM or not) into
 * @out[0], and with UCM_DESC_CHAIN its later frames' after it, each moved
 * from UCM_LOC_CHAIN to UCM_LOC_APP, where the first is: all of them go
 * home in one bulk. A list longer than a packet takes is read no further,
 * a listed address outside the UMEM is no frame of ours, and one listed
 * again (or the first) goes home once: left out.
 * @out: room for UCM_CHAIN_MAX. Return: how many.
 */
static inline uint32_t ucm_chain_desc_frames(struct ucm_umem *umem, uint64_t desc,
					     uint64_t *out)
{
	uint64_t base = ucm_umem_desc_base(umem, ucm_txq_desc_plain(desc));
	const struct ucm_chain *c;
	uint32_t i, n, k = 1;

	out[0] = base;
	/* A first frame outside the UMEM has no list to read; the put's
	 * check refuses it. */
	if (!(desc & UCM_DESC_CHAIN) || base >= umem->size)
		return 1;
	c = ucm_chain_of(umem->area, base);
	n = c->nfrag < UCM_CHAIN_MAX ? c->nfrag : UCM_CHAIN_MAX - 1;
	for (i = 0; i < n; i++) {
		uint64_t f = ucm_umem_base(umem, ucm_desc_addr(c->frag[i]));
		uint32_t j;

		for (j = 0; j < k && out[j] != f; j++)
			;
		if (f >= umem->size || j < k)
			continue;
		ucm_frame_move(umem, f, UCM_LOC_CHAIN, UCM_LOC_APP);
		out[k++] = f;
	}
	return k;
}

/*
 * The RX side's taking of a packet of several descriptors, one at a time:
 * a pure function of the descriptors (and the check each passed,
 * core/umem_desc.h), apart so that tests/fuzz/fuzz-xskchain.c can give it
 * any; xsk/queue.c does what it says with the frames and the counters.
 *
 * For each descriptor, *frame says what becomes of its frame at once:
 * KEEP (it is the packet's now, in frag[]), PUT (ours, refused: home) or
 * LEAVE (no frame of ours: untouched). The return says what became of the
 * packet: MORE (its end is still to come), WHOLE (frag[0..n) is the
 * packet, frag[0] its first frame) or DROP (frag[0..n) go home, counted
 * by why). After WHOLE or DROP, ucm_chain_rx_reset() before the next.
 */
enum ucm_chain_frame { UCM_CHAIN_KEEP, UCM_CHAIN_PUT, UCM_CHAIN_LEAVE };
enum ucm_chain_end { UCM_CHAIN_MORE, UCM_CHAIN_WHOLE, UCM_CHAIN_DROP };
/* Why a packet is dropped; the greatest wins. CUT: its end never came.
 * NOSG: on such a socket each descriptor is a packet, and one with a
 * stray XDP_PKT_CONTD is dropped alone: the next is a packet of its own. */
enum ucm_chain_why {
	UCM_CHAIN_OK,
	UCM_CHAIN_BAD,	/* a bad descriptor, or no room for the list */
	UCM_CHAIN_LONG,	/* more than @max frames or UINT16_MAX bytes */
	UCM_CHAIN_CUT,
	UCM_CHAIN_NOSG,	/* on a socket bound without XDP_USE_SG */
};

struct ucm_chain_rx {
	uint64_t frag[UCM_CHAIN_MAX];	/* ucm_desc_make() of each frame kept */
	uint32_t n;			/* frames kept */
	uint32_t seen;			/* descriptors, kept or not */
	uint32_t len;			/* the kept frames' bytes */
	uint8_t open;			/* a packet is being taken */
	uint8_t why;			/* enum ucm_chain_why */
	/* Frames a packet may take, 1..UCM_CHAIN_MAX: set once, before the
	 * first packet (ucm_chain_rx_reset() keeps it). */
	uint8_t max;
};

static inline void ucm_chain_rx_why(struct ucm_chain_rx *c, enum ucm_chain_why why)
{
	if (why > c->why)
		c->why = why;
}

/* One descriptor (@addr, @len; @v what its check said) of a packet of
 * several: @more when the packet goes on after it (XDP_PKT_CONTD), @sg
 * when the socket was bound for such packets; @fmask: frame size - 1. */
static inline enum ucm_chain_end ucm_chain_rx_take(struct ucm_chain_rx *c, bool sg,
						   enum ucm_umem_desc v, uint64_t addr,
						   uint32_t len, bool more, uint64_t fmask,
						   enum ucm_chain_frame *frame)
{
	c->seen++;
	c->open = 1;
	if (!sg)
		ucm_chain_rx_why(c, UCM_CHAIN_NOSG);
	if (v == UCM_UMEM_DESC_FOREIGN) {
		*frame = UCM_CHAIN_LEAVE;
		ucm_chain_rx_why(c, UCM_CHAIN_BAD);
	} else if (v == UCM_UMEM_DESC_BAD) {
		*frame = UCM_CHAIN_PUT;
		ucm_chain_rx_why(c, UCM_CHAIN_BAD);
	} else if (c->n >= c->max) {
		*frame = UCM_CHAIN_PUT;
		ucm_chain_rx_why(c, UCM_CHAIN_LONG);
	} else {
		*frame = UCM_CHAIN_KEEP;
		c->frag[c->n++] = ucm_desc_make(addr, len);
		c->len += len;
	}
	if (more && sg)
		return UCM_CHAIN_MORE;
	if (c->len > UINT16_MAX)
		ucm_chain_rx_why(c, UCM_CHAIN_LONG);
	/* One frame left of several is no packet either; and the first
	 * must have room for the list of the others. */
	if (c->n < 2 || (ucm_desc_addr(c->frag[0]) & fmask) < UCM_CHAIN_HEAD_ROOM)
		ucm_chain_rx_why(c, UCM_CHAIN_BAD);
	return c->why == UCM_CHAIN_OK ? UCM_CHAIN_WHOLE : UCM_CHAIN_DROP;
}

/* The ring ran dry with a packet open: DROP it (true) as CUT. */
static inline bool ucm_chain_rx_cut(struct ucm_chain_rx *c)
{
	if (!c->open)
		return false;
	ucm_chain_rx_why(c, UCM_CHAIN_CUT);
	return true;
}

static inline void ucm_chain_rx_reset(struct ucm_chain_rx *c)
{
	c->n = c->seen = c->len = 0;
	c->open = 0;
	c->why = UCM_CHAIN_OK;
}

#endif /* UCM_ENGINE_CHAIN_H */
