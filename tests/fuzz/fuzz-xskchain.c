// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The RX path's taking of packets of several descriptors (AF_XDP
 * multi-buffer; lib/engine/chain.h, ucm_chain_rx_take(), which xsk/queue.c
 * applies to a descriptor with XDP_PKT_CONTD and to every one after it up
 * to the packet's last): random descriptors against a random UMEM
 * geometry, one after another as the RX thread meets them.
 *
 * Input: a 4-byte geometry (fuzz-xskdesc.c's), a socket byte, then up to
 * MAX_DESC 13-byte descriptors: a control byte, the address (8 bytes) and
 * the length (4), host order.
 *   socket:   bit 0 bound with XDP_USE_SG; bits 1-5 the frames a packet
 *             may take (max_frags, at most UCM_CHAIN_MAX; 0: UCM_CHAIN_MAX)
 *   control:  bits 0-1 where the address points: as given, anywhere in
 *             the queue's pool (mod its span), XDP_PACKET_HEADROOM into
 *             the pool's frame the address numbers (mod its frames),
 *             where the kernel puts a packet, or in the next pool (the
 *             UMEM's end when there is one pool); bit 2 XDP_PKT_CONTD; bit 3 the
 *             length is the room left in the address's frame plus the
 *             length's low byte as a signed delta (at least 0); bit 4 the
 *             ring ran dry after it; bit 5 the address's offset in its
 *             frame UCM_CHAIN_HEAD_ROOM instead, plus the address's top
 *             byte as a signed delta
 * The input's end is the ring run dry too. The seeds
 * (tests/fuzz/corpus/fuzz-xskchain/) are packets at the edges.
 *
 * As queue.c does: each descriptor through ucm_umem_desc_check(); one
 * without XDP_PKT_CONTD while no packet is open is a packet of one, which
 * the machine never sees; the ring run dry is ucm_chain_rx_cut(); after
 * WHOLE or DROP, ucm_chain_rx_reset().
 *
 * The oracle models the frames itself. Each descriptor's frame is taken
 * once when it is the pool's (GOOD or BAD: KEEP or PUT) and never when it
 * is not (FOREIGN: LEAVE, the base untouched); a GOOD one is KEEP while
 * the packet has fewer than max_frags, else PUT. Every frame taken
 * goes exactly once home or out: at once (PUT), or with its packet (KEEP:
 * out when the packet is WHOLE, home when DROP), and the packet's frag[]
 * are exactly the model's kept descriptors in order. A WHOLE packet has 2
 * to max_frags frames, at most UINT16_MAX bytes (their lengths' sum),
 * its first packet byte at least UCM_CHAIN_HEAD_ROOM into its frame, a
 * socket bound with XDP_USE_SG and no BAD or FOREIGN descriptor; any
 * other is a DROP whose why is the greatest that holds, in chain.h's
 * order: BAD (a bad or foreign descriptor, fewer than 2 frames, no room
 * for the list) < LONG (a descriptor past max_frags, too many bytes) <
 * CUT (the ring ran dry) < NOSG (on a socket without XDP_USE_SG each
 * descriptor is a packet: one with a stray XDP_PKT_CONTD ends at once,
 * dropped, and the next is its own). seen counts every descriptor
 * of the packet; after the reset every field but max is 0. At the end no
 * frame is left with a packet.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/umem_desc.h"
#include "engine/chain.h"
#include "fuzz.h"

#define GEOM_LEN	4
#define SOCK_LEN	1
#define DESC_LEN	13	/* control, address, length */
#define MAX_DESC	512	/* several RX batches (UCM_XSK_RX_BATCH) */
#define HEADROOM	256	/* XDP_PACKET_HEADROOM: where the kernel puts a packet */
#define NO_BASE		0xdeadbeefcafeull	/* FOREIGN leaves it */

enum {
	AT_RAW,
	AT_POOL,
	AT_HEAD,
	AT_NEXT,
	AT_MASK = 3,
	CTL_CONTD = 1 << 2,
	LEN_ROOM = 1 << 3,
	CTL_DRY = 1 << 4,
	AT_LIST_EDGE = 1 << 5,
	SOCK_SG = 1 << 0,
	SOCK_MAX_SHIFT = 1,
	SOCK_MAX_MASK = 0x1f,
};

struct geom {
	struct ucm_umem_geom g;
	uint32_t npools;
	uint32_t pool;		/* the queue's */
	uint64_t span;		/* a pool's bytes */
};

/* Where a frame taken is: with the packet being taken, home, out. */
enum where { HELD, HOME, OUT };

struct model {
	const struct geom *G;
	bool sg;
	uint32_t max;			/* max_frags */
	uint32_t ntake;			/* frames taken */
	uint8_t where[MAX_DESC];	/* enum where, by take */
	/* The packet being taken: its kept descriptors, in order. */
	uint32_t kept[UCM_CHAIN_MAX];	/* their takes */
	uint64_t kaddr[UCM_CHAIN_MAX];
	uint32_t klen[UCM_CHAIN_MAX];
	uint64_t koff0;			/* the first one's offset in its frame */
	uint32_t n, seen;
	uint64_t sum;			/* the kept ones' bytes */
	bool open, bad, over;
};

static void geom_read(struct geom *G, const uint8_t *in)
{
	uint32_t fshift = in[0] & 1 ? 11 : 12, log = in[1] % 29;

	G->npools = in[2] + 1u;
	while (((uint64_t)G->npools << (fshift + log)) > UCM_UMEM_MAX_SIZE)
		log--;
	G->g.frame_size = 1u << fshift;
	G->g.pool_shift = fshift + log;
	G->span = 1ull << G->g.pool_shift;
	G->g.size = G->npools * G->span;
	G->pool = in[3] % G->npools;
}

/* The descriptor a record stands for, steered to the edges. */
static void desc_read(const struct geom *G, const uint8_t *rec, uint64_t *addr, uint32_t *len)
{
	uint64_t raw, a, lo = G->pool * G->span, fs = G->g.frame_size;
	uint8_t ctl = rec[0];
	uint32_t l;

	memcpy(&raw, rec + 1, sizeof(raw));
	memcpy(&l, rec + 9, sizeof(l));
	switch (ctl & AT_MASK) {
	case AT_RAW:
		a = raw;
		break;
	case AT_POOL:
		a = lo + raw % G->span;
		break;
	case AT_HEAD:
		a = lo + raw % (G->span / fs) * fs + HEADROOM;
		break;
	default:
		a = G->npools > 1 ? (G->pool + 1) % G->npools * G->span + raw % G->span :
			G->g.size + raw % 65536;
		break;
	}
	if (ctl & AT_LIST_EDGE)
		a = a / fs * fs + UCM_CHAIN_HEAD_ROOM + (int8_t)(raw >> 56);
	if (ctl & LEN_ROOM) {
		int64_t room = (int64_t)(fs - a % fs) + (int8_t)l;

		l = room > 0 ? (uint32_t)room : 0;
	}
	*addr = a;
	*len = l;
}

/* What the check must say, from the pool's range and its frames' grid. */
static enum ucm_umem_desc oracle(const struct geom *G, uint64_t addr, uint32_t len,
				 uint64_t *frame)
{
	uint64_t lo = G->pool * G->span, fs = G->g.frame_size;

	if (addr < lo || addr - lo >= G->span || addr >= G->g.size)
		return UCM_UMEM_DESC_FOREIGN;
	*frame = lo + (addr - lo) / fs * fs;
	if (len == 0 || addr - *frame + len > fs)
		return UCM_UMEM_DESC_BAD;
	return UCM_UMEM_DESC_GOOD;
}

static void model_take(struct model *M, enum where w)
{
	CHECK(M->ntake < MAX_DESC);
	M->where[M->ntake++] = w;
}

/* The machine's packet is the model's: its frames, bytes, descriptors. */
static void same_packet(const struct model *M, const struct ucm_chain_rx *c)
{
	uint32_t i;

	CHECK(c->n == M->n && c->seen == M->seen && c->len == M->sum);
	for (i = 0; i < M->n; i++) {
		CHECK(c->frag[i] == ((uint64_t)M->klen[i] << 48 | M->kaddr[i]));
		CHECK(ucm_desc_addr(c->frag[i]) == M->kaddr[i]);
		CHECK(ucm_desc_len(c->frag[i]) == M->klen[i]);
	}
}

/* Why the packet that just ended is dropped (OK: it is whole). */
static enum ucm_chain_why model_why(const struct model *M, bool cut)
{
	enum ucm_chain_why why = UCM_CHAIN_OK;

	if (!M->sg)
		return UCM_CHAIN_NOSG;
	if (cut)
		return UCM_CHAIN_CUT;
	if (M->bad || M->n < 2 || M->koff0 < UCM_CHAIN_HEAD_ROOM)
		why = UCM_CHAIN_BAD;
	if (M->over || M->sum > UINT16_MAX)
		why = UCM_CHAIN_LONG;
	if (!M->sg)
		why = UCM_CHAIN_NOSG;
	return why;
}

/* The packet ended (WHOLE or DROP): its frames out or home, the machine
 * reset as queue.c resets it. */
static void packet_end(struct model *M, struct ucm_chain_rx *c, enum ucm_chain_end end,
		       bool cut)
{
	enum ucm_chain_why why = model_why(M, cut);
	uint32_t i;

	same_packet(M, c);
	if (end == UCM_CHAIN_WHOLE) {
		CHECK(why == UCM_CHAIN_OK && c->why == UCM_CHAIN_OK);
		CHECK(c->n >= 2 && c->n <= M->max && c->len <= UINT16_MAX);
		CHECK((ucm_desc_addr(c->frag[0]) & (M->G->g.frame_size - 1)) >=
		      UCM_CHAIN_HEAD_ROOM);
		CHECK(M->sg && !M->bad && !M->over);
	} else {
		CHECK(end == UCM_CHAIN_DROP && why != UCM_CHAIN_OK && c->why == why);
	}
	for (i = 0; i < M->n; i++) {
		CHECK(M->where[M->kept[i]] == HELD);
		M->where[M->kept[i]] = end == UCM_CHAIN_WHOLE ? OUT : HOME;
	}
	ucm_chain_rx_reset(c);
	CHECK(!c->n && !c->seen && !c->len && !c->open && c->why == UCM_CHAIN_OK);
	M->n = M->seen = 0;
	M->sum = M->koff0 = 0;
	M->open = M->bad = M->over = false;
}

/* One descriptor of a packet of several, through the machine. */
static void chain_one(struct model *M, struct ucm_chain_rx *c, enum ucm_umem_desc v,
		      uint64_t addr, uint32_t len, uint64_t frame, bool more)
{
	enum ucm_chain_frame fr = (enum ucm_chain_frame)-1, want;
	enum ucm_chain_end end;

	end = ucm_chain_rx_take(c, M->sg, v, addr, len, more, M->G->g.frame_size - 1, &fr);
	M->seen++;
	M->open = true;
	if (v == UCM_UMEM_DESC_FOREIGN) {
		want = UCM_CHAIN_LEAVE;
		M->bad = true;
	} else if (v == UCM_UMEM_DESC_BAD) {
		want = UCM_CHAIN_PUT;
		M->bad = true;
		model_take(M, HOME);
	} else if (M->n == M->max) {
		want = UCM_CHAIN_PUT;
		M->over = true;
		model_take(M, HOME);
	} else {
		want = UCM_CHAIN_KEEP;
		if (!M->n)
			M->koff0 = addr - frame;
		M->kept[M->n] = M->ntake;
		M->kaddr[M->n] = addr;
		M->klen[M->n++] = len;
		M->sum += len;
		model_take(M, HELD);
	}
	CHECK(fr == want && c->open);
	if (more && M->sg) {
		CHECK(end == UCM_CHAIN_MORE);
		same_packet(M, c);
		return;
	}
	CHECK(end == UCM_CHAIN_WHOLE || end == UCM_CHAIN_DROP);
	packet_end(M, c, end, false);
}

/* The ring ran dry: a packet open loses its end. */
static void ring_dry(struct model *M, struct ucm_chain_rx *c)
{
	bool dropped = ucm_chain_rx_cut(c);

	CHECK(dropped == M->open);
	if (dropped) {
		CHECK(c->why == (M->sg ? UCM_CHAIN_CUT : UCM_CHAIN_NOSG));
		packet_end(M, c, UCM_CHAIN_DROP, true);
	}
	CHECK(!c->open && !c->n && !c->seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ucm_chain_rx c;
	struct model M;
	struct geom G;
	uint32_t n, i;

	if (size < GEOM_LEN + SOCK_LEN)
		return 0;
	geom_read(&G, data);
	memset(&M, 0, sizeof(M));
	M.G = &G;
	M.sg = data[GEOM_LEN] & SOCK_SG;
	M.max = (data[GEOM_LEN] >> SOCK_MAX_SHIFT) & SOCK_MAX_MASK;
	if (!M.max || M.max > UCM_CHAIN_MAX)
		M.max = UCM_CHAIN_MAX;
	memset(&c, 0xa5, sizeof(c));	/* reset must clear whatever was there */
	ucm_chain_rx_reset(&c);
	c.max = (uint8_t)M.max;
	n = (size - GEOM_LEN - SOCK_LEN) / DESC_LEN;
	if (n > MAX_DESC)
		n = MAX_DESC;
	for (i = 0; i < n; i++) {
		const uint8_t *rec = data + GEOM_LEN + SOCK_LEN + i * DESC_LEN;
		uint64_t addr, base = NO_BASE, frame = NO_BASE;
		bool more = rec[0] & CTL_CONTD;
		enum ucm_umem_desc v;
		uint32_t len;

		desc_read(&G, rec, &addr, &len);
		v = ucm_umem_desc_check(&G.g, G.pool, addr, len, &base);
		CHECK(v == oracle(&G, addr, len, &frame));
		CHECK(v == UCM_UMEM_DESC_FOREIGN ? base == NO_BASE : base == frame);
		/* queue.c's choice: the machine, or a packet of one. */
		if (more || c.open)
			chain_one(&M, &c, v, addr, len, frame, more);
		else if (v != UCM_UMEM_DESC_FOREIGN)
			model_take(&M, v == UCM_UMEM_DESC_GOOD ? OUT : HOME);
		CHECK(c.open == M.open);
		if (rec[0] & CTL_DRY)
			ring_dry(&M, &c);
	}
	ring_dry(&M, &c);
	/* Every frame taken went home or out, none is left with a packet. */
	for (i = 0; i < M.ntake; i++)
		CHECK(M.where[i] != HELD);
	return 0;
}
