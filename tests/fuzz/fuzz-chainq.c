// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Packets of several frames (lib/engine/chain.h) from a library caller
 * into the cpumap, and the consumers of their lists: the enqueue's guard
 * (cpumap.c's chain_list_ok()), the worker's frame header
 * (UCM_FRAME_F_CHAIN, head_len, ucm_frame_chain()) and drops, the tun's
 * iovecs (lib/io/tun_chain.c) and a TX refusal's ucm_chain_desc_frames(),
 * on any list. An inline map (the worker runs in the producer's calls:
 * one thread, deterministic) over a real UMEM of two pools, debug build.
 *
 * Input: a set-up byte, then records, host order.
 *   set-up:  bit 0 frames of 2048 (else 4096); bits 1-3 UCM_CPUMAP_F_HOLD,
 *            _NO_RECYCLE, _NO_LATENCY; bit 4 the end stops the map, its
 *            producer not stopped (what is staged or held goes home
 *            unsent), else the producer's stop delivers it
 *   a packet (control < 0x80; control, n, nfrag, u16 off, head, len; then
 *            5 bytes an entry: sel, u16 poff, u16 plen)
 *     control bit 0 UCM_DESC_CHAIN; bits 1-2 its first frame: 0, 1 a
 *             fresh one of the producer's pool, 2 of the other pool, 3
 *             none (past the UMEM); bit 3 the list's nfrag is the nfrag
 *             byte, else the entries' count; bit 4 its length is len, else
 *             head_len and the listed parts added up; bit 5 head_len fills
 *             the frame, else head; bit 6 sent home as a TX refusal
 *     n       bits 0-4 its entries (at most UCM_CHAIN_MAX - 1); bits 5-6
 *             the verdict: PASS, DROP, TX (no channel: a drop), 7; bit 7
 *             the sink writes as a tun (from the IP header), else a tap; a
 *             refusal's descriptor gets UCM_TXQ_DESC_CSUM
 *     off     the packet's offset, mod the frame size; >> 12 the worker
 *     entry   the part at poff mod the frame size, plen bytes, in: sel &
 *             7 0-3 a fresh frame of the producer's pool, 4 an earlier
 *             entry's ((sel >> 3) mod its index; first: the first frame),
 *             5 the first frame, 6 a fresh one of the other pool, 7 none:
 *             the UMEM's size plus poff, or (sel bit 3) UCM_DESC_ADDR_MASK
 *             less poff. Slots past the entries name none.
 *     Each has its list in its first frame's headroom (also without the
 *     chain bit) and an Ethernet header the parser passes (0x88b5); it is
 *     skipped while a pool has fewer than UCM_CHAIN_MAX frames home.
 *   a flush (control >= 0x80; 1 byte): ucm_cpumap_producer__flush()
 * At most MAX_RECS records. Seeds: tests/fuzz/make-seeds.py.
 *
 * The oracle, a model of its own. An enqueue is accepted iff its frame is
 * in the UMEM and the producer's pool's, its length at most 65535, and
 * with the chain bit the list has room before the packet (offset >=
 * UCM_CHAIN_HEAD_ROOM), 1 to UCM_CHAIN_MAX - 1 later frames, each in the
 * UMEM and the producer's pool's, its part inside its frame, none twice,
 * none the first, the parts (head_len's and the list's) adding up to its
 * length; a refused one returns -EINVAL with every frame where it
 * was, then goes home as a refusal. The model runs the bulk queue and the
 * worker: the drops and why (bounds, runt, no Ethernet header in the
 * first frame, the verdict), the verdict's and sink's calls in order, each
 * hand-over's packets (HOLD: at 64 or the flush), each header as its
 * descriptor and list make it, all its frames the worker's, its list
 * intact after the sink wrote its room. The sink's iovecs: the model's,
 * each inside its own frame of the UMEM, no frame twice, the write's whole
 * length when the parts hold the packet. A refusal: the first frame and
 * the frames of the list's first nfrag (at most UCM_CHAIN_MAX - 1) slots
 * in the UMEM, each once, in order; the rest left. After each record
 * every tag and counter is the model's; at the end every frame is home.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "engine/chain.h"
#include "io/tun_internal.h"
#include "ucpumap/log.h"
#include "fuzz.h"

#define NPOOLS		2	/* the producer's (0) and another */
#define FRAMES		256	/* a pool's */
#define NF		(NPOOLS * FRAMES)
#define NFRAG		(UCM_CHAIN_MAX - 1)
#define MAX_RECS	256
#define REC		9	/* a packet record, before its entries */
#define ENT		5
#define ETH_LEN		14
#define ETH_TYPE	0x88b5	/* local experimental: the parser passes it */
#define NO_FRAME	UCM_DESC_ADDR_MASK
#define HELD_MAX	(UCM_CPUMAP_HOLD_MAX + UCM_CPUMAP_BATCH - 1)

enum {
	S_2K = 1 << 0, S_HOLD = 1 << 1, S_NO_RECYCLE = 1 << 2, S_NO_LAT = 1 << 3,
	S_ABANDON = 1 << 4,
	/* a packet's control, its first frame, its n */
	P_CHAIN = 1 << 0, P_FIRST_SHIFT = 1, P_NFRAG = 1 << 3, P_LEN = 1 << 4,
	P_FILL = 1 << 5, P_TX = 1 << 6, P_FLUSH = 1 << 7,
	FIRST_OTHER = 2, FIRST_NONE = 3,
	N_ENT = 0x1f, N_VERDICT_SHIFT = 5, N_TUN = 1 << 7,
	/* an entry's sel */
	E_REPEAT = 4, E_FIRST, E_OTHER, E_NONE, E_HIGH = 1 << 3,
};

/* Where a frame is, as the model has it. DONE: the worker is through
 * with it (in its bulk of returns, or home already). */
enum where { HOME, APP, CHAIN, BQ, HELD, DONE };

/* A packet: as the record made it, then as the model follows it. */
struct pk {
	uint64_t addr;			/* its first byte, no chain bit */
	uint64_t base;			/* its first frame, the UMEM's size for none */
	uint32_t off, len, rd;		/* rd: its bytes in the first frame */
	uint32_t worker;
	uint16_t nfrag;			/* the list's */
	bool chain, ours, exact, tun;
	uint8_t verdict, nent;
	uint64_t slot[NFRAG];		/* the list's entries, as written */
	uint64_t fresh[NFRAG];		/* the frames made for its entries */
	uint8_t fresh_at[NFRAG];	/* ... the entry of each */
	uint32_t nfresh;
	uint64_t frame[UCM_CHAIN_MAX];	/* accepted: its frames, the first first */
	uint32_t nframes;
};

/* What a call must show the verdict and the sink, in order: a verdict
 * on packet @at, or a hand-over of H.xl[@at .. @at + @n). */
struct ev {
	bool verdict;
	uint32_t at, n;
};

static struct ucm_umem *umems[2];	/* frames of 4096, of 2048 */
/* The accepted packets, by number: a packet held may outlive any number
 * of others, and a record makes one at most. */
static struct pk flight[MAX_RECS];

static struct {
	struct ucm_umem *umem;
	char *area;
	uint64_t size;
	uint32_t fs, shift;
	uint8_t setup;
	struct ucm_pool *pool[NPOOLS];
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer *prod;
	/* The model. */
	uint8_t where[NF];
	uint32_t seq;
	uint32_t staged[UCM_CPUMAP_BULK_SIZE], nstaged;
	uint32_t held[HELD_MAX], nheld;
	struct ev ev[16];
	uint32_t nev, ev_at;
	uint32_t xl[2 * HELD_MAX], nxl;
	struct ucm_cpumap_worker_stats ws;	/* the counters the map must have */
	uint64_t pprocessed, pevents;
} H;

/* The oracle's sweeps over every frame: no coverage, no comparisons
 * traced (they would be most of a run's time, and say nothing new). */
#define SWEEP	__attribute__((no_sanitize("coverage")))

static uint32_t fidx(uint64_t frame)
{
	return (uint32_t)(frame >> H.shift);
}

static uint64_t frame_of(uint64_t addr)
{
	return addr & ~(uint64_t)(H.fs - 1);
}

static struct pk *pk_of(uint32_t seq)
{
	CHECK(seq < MAX_RECS);
	return &flight[seq];
}

static void move(uint64_t frame, enum where from, enum where to)
{
	CHECK(frame < H.size && !(frame & (H.fs - 1)));
	CHECK(H.where[fidx(frame)] == from);
	H.where[fidx(frame)] = to;
}

/* Every frame tagged where the model has it. */
SWEEP static void tags_check(void)
{
	static const uint32_t tag[] = { [APP] = UCM_LOC_APP, [CHAIN] = UCM_LOC_CHAIN,
					[BQ] = UCM_LOC_BQ, [HELD] = UCM_LOC_WORKER };

	for (uint32_t i = 0; i < NF; i++) {
		uint32_t loc = ucm_frame_loc(H.umem, (uint64_t)i << H.shift);
		bool home = loc == UCM_LOC_STACK || loc == UCM_LOC_CACHE || loc == UCM_LOC_RING;

		if (H.where[i] == HOME)
			CHECK(home);
		else if (H.where[i] == DONE)
			CHECK(home || loc == UCM_LOC_WORKER);
		else
			CHECK(loc == tag[H.where[i]]);
	}
}

SWEEP static uint32_t home_frames(uint32_t pool)
{
	uint32_t k = 0;

	for (uint32_t i = pool * FRAMES; i < (pool + 1) * FRAMES; i++)
		k += H.where[i] == HOME;
	return k;
}

SWEEP static void done_home(void)
{
	for (uint32_t i = 0; i < NF; i++)
		if (H.where[i] == DONE)
			H.where[i] = HOME;
}

static void stats_check(void)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_cpumap_enqueue_stats es;

	CHECK(!ucm_cpumap__worker_stats(H.map, 0, &ws, sizeof(ws)));
	CHECK(ws.processed == H.ws.processed && ws.drops == H.ws.drops && ws.tx == 0);
	CHECK(ws.xmits == H.ws.xmits && ws.flush_empty == H.ws.flush_empty &&
	      ws.flush_full == H.ws.flush_full);
	CHECK(!memcmp(ws.drop_reason, H.ws.drop_reason, sizeof(ws.drop_reason)));
	CHECK(!ucm_cpumap_producer__enqueue_stats(H.prod, 0, &es, sizeof(es)));
	CHECK(es.processed == H.pprocessed && es.events == H.pevents);
	CHECK(!es.drops && !es.shed && !es.wakeups);
}

/* ---- the packets' frames ------------------------------------------------- */

static uint64_t frame_new(uint32_t pool)
{
	uint64_t f;

	CHECK(!ucm_pool__alloc(H.pool[pool], &f));
	CHECK(f < H.size && !(f & (H.fs - 1)) && fidx(f) / FRAMES == pool);
	/* Home, or back from the worker since the model last looked. */
	CHECK(H.where[fidx(f)] == HOME || H.where[fidx(f)] == DONE);
	H.where[fidx(f)] = APP;
	return f;
}

/* Entry @i of @p, from the record's @e: the address it names. */
static uint64_t entry(struct pk *p, uint32_t i, const uint8_t *e)
{
	uint8_t sel = e[0], k = sel & 7;
	uint16_t poff;
	uint64_t f;

	memcpy(&poff, e + 1, sizeof(poff));
	switch (k) {
	case E_REPEAT:
		f = i ? frame_of(ucm_desc_addr(p->slot[(sel >> 3) % i])) : p->base;
		break;
	case E_FIRST:
		f = p->base;
		break;
	case E_NONE:
		return sel & E_HIGH ? NO_FRAME - poff : H.size + poff;
	default:
		f = frame_new(k == E_OTHER);
		move(f, APP, CHAIN);
		ucm_frame_move(H.umem, f, UCM_LOC_APP, UCM_LOC_CHAIN);
		p->fresh[p->nfresh] = f;
		p->fresh_at[p->nfresh++] = i;
		break;
	}
	return f + (poff & (H.fs - 1));
}

/* The packet's first 14 bytes and its list, as a caller writes them (the
 * list last where it could cover the packet's header, so that it is what
 * the model has). */
static void write_packet(const struct pk *p)
{
	static const uint8_t eth[ETH_LEN] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1,
					      ETH_TYPE >> 8, ETH_TYPE & 0xff };
	struct ucm_chain *c = ucm_chain_of(H.area, p->base);
	bool room = p->off + ETH_LEN <= H.fs;

	if (room && p->chain)
		memcpy(H.area + p->addr, eth, sizeof(eth));
	c->nfrag = p->nfrag;
	c->head_len = (uint16_t)p->rd;
	c->rsvd = 0;
	memcpy(c->frag, p->slot, sizeof(c->frag));
	/* A packet of one: the parser must find its header whatever lies
	 * in its headroom. */
	if (room && !p->chain)
		memcpy(H.area + p->addr, eth, sizeof(eth));
}

/* A packet record (@r: after its control @c) into *@p, its frames made
 * and its memory written. False: a pool has fewer frames home than a
 * record may take; nothing is made. */
static bool build(struct pk *p, uint8_t c, const uint8_t *r)
{
	uint32_t first = (c >> P_FIRST_SHIFT) & 3, i, n, sum;
	uint16_t off, head, len;

	if (home_frames(0) < UCM_CHAIN_MAX || home_frames(1) < UCM_CHAIN_MAX)
		return false;
	memset(p, 0, sizeof(*p));
	p->nent = (r[0] & N_ENT) < NFRAG ? r[0] & N_ENT : NFRAG;
	memcpy(&off, r + 2, sizeof(off));
	memcpy(&head, r + 4, sizeof(head));
	memcpy(&len, r + 6, sizeof(len));
	p->off = off & (H.fs - 1);
	p->worker = off >> 12;
	p->ours = first < FIRST_OTHER;
	p->base = first == FIRST_NONE ? H.size : frame_new(first == FIRST_OTHER);
	p->addr = p->base + p->off;
	p->chain = c & P_CHAIN;
	p->tun = r[0] & N_TUN;
	p->verdict = (r[0] >> N_VERDICT_SHIFT) & 3;
	p->rd = c & P_FILL ? H.fs - p->off : head;
	for (i = 0; i < p->nent; i++) {
		const uint8_t *e = r + REC - 1 + ENT * i;
		uint16_t plen;

		memcpy(&plen, e + 3, sizeof(plen));
		p->slot[i] = ucm_desc_make(entry(p, i, e) & UCM_DESC_ADDR_MASK, plen);
	}
	for (; i < NFRAG; i++)
		p->slot[i] = ucm_desc_make(NO_FRAME, 0);
	p->nfrag = c & P_NFRAG ? r[1] : p->nent;
	n = p->nfrag < NFRAG ? p->nfrag : NFRAG;
	for (i = 0, sum = p->rd; i < n; i++)
		sum += ucm_desc_len(p->slot[i]);
	if (!p->chain)
		sum = p->rd;
	p->len = c & P_LEN ? len : sum;
	if (!p->chain)
		p->rd = p->len;
	p->exact = p->chain && sum == p->len;
	if (p->base < H.size)
		write_packet(p);
	return true;
}

/* @p's fresh frames from entry @keep on, still the caller's: home. */
static void fresh_home(const struct pk *p, uint32_t keep)
{
	uint64_t f[NFRAG];
	uint32_t i, n = 0;

	for (i = 0; i < p->nfresh; i++)
		if (p->fresh_at[i] >= keep && H.where[fidx(p->fresh[i])] == CHAIN)
			f[n++] = p->fresh[i];
	if (!n)
		return;
	CHECK(!ucm_umem_put_bulk_from(H.umem, f, n, UCM_LOC_CHAIN, false));
	for (i = 0; i < n; i++)
		move(f[i], CHAIN, HOME);
}

/*
 * A TX channel's refusal sending @p home (txq.c's desc_home()):
 * ucm_chain_desc_frames() on its descriptor, the frames it gives in one
 * bulk; the fresh frames the list's read left, after.
 */
static void tx_home(const struct pk *p, bool csum)
{
	uint64_t desc = ucm_desc_make(p->addr, p->len & 0xffff) |
			(p->chain ? UCM_DESC_CHAIN : 0) | (csum ? UCM_TXQ_DESC_CSUM : 0);
	uint64_t out[UCM_CHAIN_MAX], want[UCM_CHAIN_MAX];
	uint32_t i, j, n, k = 1, first = p->base < H.size ? 0 : 1;

	want[0] = p->base;
	n = !p->chain || first ? 0 : p->nfrag < NFRAG ? p->nfrag : NFRAG;
	for (i = 0; i < n; i++) {
		uint64_t f = frame_of(ucm_desc_addr(p->slot[i]));

		for (j = 0; j < k && want[j] != f; j++)
			;
		if (f < H.size && j == k)
			want[k++] = f;
	}
	CHECK(ucm_chain_desc_frames(H.umem, desc, out) == k);
	for (i = 0; i < k; i++)
		CHECK(out[i] == want[i]);
	for (i = 1; i < k; i++)
		move(want[i], CHAIN, APP);
	tags_check();
	if (k > first)
		CHECK(!ucm_umem_put_bulk_from(H.umem, out + first, k - first, UCM_LOC_APP, false));
	for (i = first; i < k; i++)
		move(out[i], APP, HOME);
	fresh_home(p, 0);
}

/* ---- the model of the bulk queue and the inline worker ------------------- */

static void ev_add(bool verdict, uint32_t at, uint32_t n)
{
	CHECK(H.nev < ARRAY_SIZE(H.ev));
	H.ev[H.nev++] = (struct ev){ .verdict = verdict, .at = at, .n = n };
}

/* Packet @seq's frames from @from to @to (staged: its later ones CHAIN). */
static void pk_move(uint32_t seq, enum where from, enum where to)
{
	const struct pk *p = pk_of(seq);

	move(p->base, from, to);
	for (uint32_t j = 1; j < p->nframes; j++)
		move(p->frame[j], from == BQ ? CHAIN : from, to);
}

/* What the worker holds to the sink (worker_xmit()). */
static void model_xmit(void)
{
	CHECK(H.nxl + H.nheld <= ARRAY_SIZE(H.xl));
	ev_add(false, H.nxl, H.nheld);
	for (uint32_t i = 0; i < H.nheld; i++) {
		H.xl[H.nxl++] = H.held[i];
		pk_move(H.held[i], HELD, DONE);
	}
	H.ws.xmits++;
	H.nheld = 0;
}

/* What the worker does with a packet before the verdict: the frame's
 * bounds, then the parse of an Ethernet header of a type it passes. */
static enum ucm_drop_reason model_fate(const struct pk *p)
{
	if (p->off < UCM_FRAME_HDR_ROOM || p->off + p->rd > H.fs)
		return UCM_DROP_FRAME_BOUNDS;
	return p->len < ETH_LEN ? UCM_DROP_RUNT : p->rd < ETH_LEN ? UCM_DROP_L3_TRUNC :
	       UCM_DROP_NONE;
}

/* The bulk queue to the inline worker (bq_flush(), worker_run_batch()). */
static void model_batch(void)
{
	uint32_t i, nbad = 0;

	for (i = 0; i < H.nstaged; i++) {
		const struct pk *p = pk_of(H.staged[i]);
		enum ucm_drop_reason r = model_fate(p);

		if (r == UCM_DROP_NONE) {
			ev_add(true, H.staged[i], 0);
			if (p->verdict)
				r = UCM_DROP_VERDICT;
		}
		pk_move(H.staged[i], BQ, r == UCM_DROP_NONE ? HELD : DONE);
		if (r == UCM_DROP_NONE) {
			H.held[H.nheld++] = H.staged[i];
		} else {
			H.ws.drop_reason[r]++;
			nbad++;
		}
	}
	H.ws.processed += H.nstaged;
	H.ws.drops += nbad;
	H.pprocessed += H.nstaged;
	H.pevents++;
	H.nstaged = 0;
	if (!(H.setup & S_HOLD)) {
		if (H.nheld)
			model_xmit();
	} else if (H.nheld >= UCM_CPUMAP_HOLD_MAX) {
		H.ws.flush_full++;
		model_xmit();
	}
}

/* The producer's flush: its bulk, then the worker's idle moment. */
static void model_flush(void)
{
	if (H.nstaged)
		model_batch();
	if (H.nheld) {
		H.ws.flush_empty++;
		model_xmit();
	}
	done_home();
}

/* An accepted packet into the bulk queue, a full one flushed first. */
static void model_enqueue(const struct pk *in)
{
	struct pk *p;
	uint32_t i;

	if (H.nstaged == UCM_CPUMAP_BULK_SIZE)
		model_batch();
	p = pk_of(H.seq);
	*p = *in;
	p->frame[0] = p->base;
	p->nframes = 1 + (p->chain ? p->nfrag : 0);
	for (i = 1; i < p->nframes; i++)
		p->frame[i] = frame_of(ucm_desc_addr(p->slot[i - 1]));
	move(p->base, APP, BQ);
	H.staged[H.nstaged++] = H.seq++;
}

/* ucm_cpumap__stop() with the inline producer not stopped: what it staged
 * counted and dropped, what the worker holds dropped, every frame home. */
static void model_abandon(void)
{
	uint32_t i;

	H.ws.processed += H.nstaged;
	H.ws.drop_reason[UCM_DROP_SINK] += H.nstaged + H.nheld;
	H.ws.drops += H.nstaged + H.nheld;
	for (i = 0; i < H.nstaged; i++)
		pk_move(H.staged[i], BQ, HOME);
	for (i = 0; i < H.nheld; i++)
		pk_move(H.held[i], HELD, HOME);
	H.nstaged = H.nheld = 0;
	done_home();
}

/* The enqueue's guard, from cpumap.h's contract. */
static bool model_accept(const struct pk *p)
{
	uint64_t seen[UCM_CHAIN_MAX];
	uint32_t i, j;

	if (!p->ours || p->len > UINT16_MAX)
		return false;
	if (!p->chain)
		return true;
	if (p->off < UCM_CHAIN_HEAD_ROOM || !p->nfrag || p->nfrag > NFRAG)
		return false;
	seen[0] = p->base;
	for (i = 0; i < p->nfrag; i++) {
		uint64_t a = ucm_desc_addr(p->slot[i]), f = frame_of(a);

		if (a >= H.size || fidx(f) >= FRAMES ||
		    (a & (H.fs - 1)) + ucm_desc_len(p->slot[i]) > H.fs)
			return false;
		for (j = 0; j <= i; j++)
			if (seen[j] == f)
				return false;
		seen[i + 1] = f;
	}
	return p->exact;
}

/* ---- the verdict and the sink ------------------------------------------- */

/* A packet as the worker hands it on: its header built from its
 * descriptor and list, every frame of it the worker's. */
static void hdr_check(struct ucm_frame_hdr *hdr, const struct pk *p)
{
	uint64_t part[UCM_FRAME_CHAIN_MAX];
	uint32_t i, n;

	CHECK((char *)hdr == H.area + p->base);
	CHECK(hdr->data_off == p->off && hdr->len == p->len && hdr->head_len == p->rd);
	CHECK(hdr->flags == (p->chain ? UCM_FRAME_F_CHAIN : 0));
	CHECK(hdr->pkt.len == p->len && hdr->pkt.l3_off == ETH_LEN &&
	      hdr->pkt.eth_proto == ETH_TYPE);
	CHECK(!(hdr->pkt.flags & UCM_PKT_F_PARTIAL) == (p->rd >= p->len));
	for (i = 0; i < p->nframes; i++)
		CHECK(ucm_frame_loc(H.umem, p->frame[i]) == (enum ucm_frame_loc)UCM_LOC_WORKER);
	n = ucm_frame_chain(hdr, part);
	CHECK(n + 1 == p->nframes);
	for (i = 0; i < n; i++)
		CHECK(part[i] == p->slot[i]);
}

/* A chain's write as the tun's (tun.c): from the vnet header in the
 * sink's room, @start bytes of the packet skipped (a tun's Ethernet
 * header), @len bytes. */
static void iov_check(struct ucm_frame_hdr *hdr, const struct pk *p, uint32_t start)
{
	uint8_t *data = ucm_frame_data(hdr);
	uint32_t len = VNET_LEN + p->len - start, want, left, sum = 0, i, j, k, m = 1;
	struct iovec iovs[UCM_TUN_CHAIN_IOV];	/* a packet's most: ASan bounds it */
	uint64_t fr[UCM_TUN_CHAIN_IOV];

	iovs[0].iov_base = data + start - VNET_LEN;
	iovs[0].iov_len = len;
	k = ucm_tun_chain_iov(hdr, p->base, iovs, len);
	CHECK(k >= 1 && k <= UCM_TUN_CHAIN_IOV);
	/* The model's: the first frame's part, the list's parts cut to len. */
	want = p->rd - start + VNET_LEN < len ? p->rd - start + VNET_LEN : len;
	CHECK(iovs[0].iov_base == data + start - VNET_LEN && iovs[0].iov_len == want);
	for (i = 0, left = len - want; i + 1 < p->nframes && left; i++, m++) {
		uint32_t l = ucm_desc_len(p->slot[i]) < left ? ucm_desc_len(p->slot[i]) : left;

		CHECK(m < k && (char *)iovs[m].iov_base == H.area + ucm_desc_addr(p->slot[i]));
		CHECK(iovs[m].iov_len == l);
		left -= l;
	}
	CHECK(k == m);
	/* Whatever the model: each inside its own frame of the UMEM, none
	 * twice, the first the packet's; all of it when the parts hold it. */
	for (i = 0; i < k; i++) {
		uint64_t a = (uint64_t)((char *)iovs[i].iov_base - H.area);

		CHECK((char *)iovs[i].iov_base >= H.area && a < H.size);
		fr[i] = frame_of(a);
		CHECK(!iovs[i].iov_len || frame_of(a + iovs[i].iov_len - 1) == fr[i]);
		for (j = 0; j < i; j++)
			CHECK(fr[j] != fr[i]);
		sum += iovs[i].iov_len;
	}
	CHECK(fr[0] == p->base && sum == len - left && (!p->exact || sum == len));
}

static int verdict_cb(void *ctx, uint32_t worker, struct ucm_frame_hdr *hdr)
{
	static const int v[] = { UCM_VERDICT_PASS, UCM_VERDICT_DROP, UCM_VERDICT_TX, 7 };
	const struct pk *p;

	CHECK(worker == 0 && H.ev_at < H.nev && H.ev[H.ev_at].verdict);
	p = pk_of(H.ev[H.ev_at++].at);
	hdr_check(hdr, p);
	return v[p->verdict];
}

/* Each packet as the tun's sink takes it: its vnet header into the room
 * before it (the list lies before that), a chain's iovecs. */
static int sink_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		     const uint64_t *addrs, uint32_t n)
{
	const struct ev *e;
	uint32_t i;

	CHECK(worker == 0 && H.ev_at < H.nev);
	e = &H.ev[H.ev_at++];
	CHECK(!e->verdict && n == e->n);
	for (i = 0; i < n; i++) {
		const struct pk *p = pk_of(H.xl[e->at + i]);

		CHECK(addrs[i] == p->base);
		hdr_check(frames[i], p);
		memset((char *)ucm_frame_data(frames[i]) - UCM_FRAME_SINK_ROOM, 0xee,
		       UCM_FRAME_SINK_ROOM);
		hdr_check(frames[i], p);
		if (p->chain)
			iov_check(frames[i], p, p->tun ? ETH_LEN : 0);
	}
	return 0;
}

static const struct ucm_sink_ops sink_ops = {
	.sz = sizeof(struct ucm_sink_ops),
	.xmit = sink_xmit,
};

/* ---- records ------------------------------------------------------------ */

static void call_end(void)
{
	CHECK(H.ev_at == H.nev);
	tags_check();
	stats_check();
}

static void op_packet(uint8_t c, const uint8_t *r)
{
	struct pk p;
	bool ok;
	int ret;

	if (!build(&p, c, r))
		return;
	H.nev = H.ev_at = H.nxl = 0;
	if (c & P_TX) {
		tx_home(&p, p.tun);
		call_end();
		return;
	}
	ok = model_accept(&p);
	if (ok)
		model_enqueue(&p);
	ret = ucm_cpumap_producer__enqueue(H.prod, p.worker,
					   p.addr | (p.chain ? UCM_DESC_CHAIN : 0), p.len);
	CHECK(ret == (ok ? 0 : -EINVAL));
	CHECK(H.ev_at == H.nev);
	if (ok) {
		fresh_home(&p, p.chain ? p.nfrag : 0);
	} else {
		/* Refused: every frame where it was, then home. */
		tags_check();
		tx_home(&p, p.tun);
	}
	call_end();
}

static void op_flush(void)
{
	H.nev = H.ev_at = H.nxl = 0;
	model_flush();
	ucm_cpumap_producer__flush(H.prod);
	call_end();
}

/* ---- set-up and end ------------------------------------------------------ */

/* The library's lines, but the one an abandoned producer's stop says. */
static int print(enum ucm_log_level level, const char *fmt, va_list ap)
{
	if (strstr(fmt, "cpumap: inline producer"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (int i = 0; i < 2; i++) {
		UCM_OPTS(ucm_umem_opts, uo, .npools = NPOOLS, .frames_per_pool = FRAMES,
			 .frame_size = i ? 2048 : 4096);

		umems[i] = ucm_umem__create(&uo);
		CHECK(umems[i]);
	}
	ucm_set_print(print);
	return 0;
}

static void start(uint8_t setup)
{
	uint32_t flags = UCM_CPUMAP_F_INLINE | (setup & S_HOLD ? UCM_CPUMAP_F_HOLD : 0) |
			 (setup & S_NO_RECYCLE ? UCM_CPUMAP_F_NO_RECYCLE : 0) |
			 (setup & S_NO_LAT ? UCM_CPUMAP_F_NO_LATENCY : 0);

	memset(&H, 0, sizeof(H));
	H.setup = setup;
	H.umem = umems[setup & S_2K];
	H.area = ucm_umem__area(H.umem);
	H.size = ucm_umem__size(H.umem);
	H.fs = ucm_umem__frame_size(H.umem);
	H.shift = H.fs == 4096 ? 12 : 11;
	for (int i = 0; i < NPOOLS; i++) {
		H.pool[i] = ucm_umem__pool(H.umem, i);
		ucm_pool__set_owner(H.pool[i]);
	}
	{
		UCM_OPTS(ucm_cpumap_opts, co, .ncpus = 1, .sink = &sink_ops, .flags = flags,
			 .verdict = verdict_cb);

		H.map = ucm_cpumap__create(H.umem, &co);
	}
	CHECK(H.map);
	H.prod = ucm_cpumap__producer_create(H.map, H.pool[0]);
	CHECK(H.prod);
}

/* The end: every packet delivered or dropped, every frame home; the pools
 * as they were made, for the next input. */
static void finish(void)
{
	struct ucm_pool_audit a;
	uint64_t addrs[FRAMES];

	H.nev = H.ev_at = H.nxl = 0;
	if (H.setup & S_ABANDON) {
		model_abandon();
		ucm_cpumap__stop(H.map);
	} else {
		model_flush();
		ucm_cpumap_producer__stop(H.prod);
	}
	call_end();
	CHECK(home_frames(0) + home_frames(1) == NF);
	ucm_cpumap__destroy(H.map);
	CHECK(!ucm_umem__audit(H.umem, &a, sizeof(a)));
	CHECK(a.tagged && a.frames == NF && !a.chain && !a.loc[UCM_LOC_APP]);
	CHECK(a.loc[UCM_LOC_STACK] + a.loc[UCM_LOC_CACHE] + a.loc[UCM_LOC_RING] == NF);
	for (uint32_t i = 0; i < NPOOLS; i++) {
		/* Every frame on the backing stack, the first to come off
		 * it the lowest. */
		CHECK(ucm_pool__alloc_bulk(H.pool[i], addrs, FRAMES) == FRAMES);
		for (uint32_t j = 0; j < FRAMES; j++)
			addrs[j] = (uint64_t)(i * FRAMES + FRAMES - 1 - j) << H.shift;
		CHECK(!ucm_umem__release_bulk(H.umem, addrs, FRAMES));
		CHECK(ucm_pool__inflight(H.pool[i]) == 0);
		ucm_pool__clear_owner(H.pool[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t at = 1, need;

	if (size < 1)
		return 0;
	start(data[0]);
	for (uint32_t recs = 0; at < size && recs < MAX_RECS; recs++, at += need) {
		need = data[at] & P_FLUSH ? 1 : size - at < REC ? size :
		       REC + ENT * ((data[at + 1] & N_ENT) < NFRAG ? data[at + 1] & N_ENT : NFRAG);
		if (need > size - at)
			break;
		if (data[at] & P_FLUSH)
			op_flush();
		else
			op_packet(data[at], data + at + 1);
	}
	finish();
	return 0;
}
