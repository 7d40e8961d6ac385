// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The RX path itself (xsk/queue.c's ucm_xsk_queue__refill() and
 * ucm_xsk_queue__rx(), xsk/queue_chain.c), no socket: a queue whose fill
 * and RX rings are memory of ours, as tests/unit/test-xskchain.c's, over
 * a real UMEM and pool (lib/core, a debug build: every frame move checked
 * against the frame's tag). A fake kernel takes the frames the refill
 * posts and writes the descriptors the input says; the RX thread's calls
 * take them in batches; a consumer hands every packet back home, with its
 * chain's frames, the two ways the library does it. The end is
 * ucm_xsk__destroy()'s: the packet half taken dropped, the frames the
 * kernel held reclaimed (ucm_pools_reclaim()).
 *
 * Input: a socket byte, then records, host order.
 *   socket:  bit 0 bound with XDP_USE_SG; bits 1-5 max_frags (0 or more
 *            than UCM_CHAIN_MAX: UCM_CHAIN_MAX); bit 6 frames of 2048
 *            (else 4096); bit 7 the end stops the RX thread with what is
 *            still on the RX ring (else the ring is drained first)
 *   a descriptor (control < 0x80; 5 bytes: control, off, len, u16 each):
 *            the kernel writes one on the RX ring, when it has room
 *     bits 0-1  its frame: 0, 1 the next one the fill ring gave the
 *               kernel (none left: the kernel drops the packet, no
 *               descriptor); 2 another queue's (pool 1's); 3 none: past
 *               the UMEM's end (UINT64_MAX - off with bit 3)
 *     bit 2     XDP_PKT_CONTD
 *     bit 3     the packet's offset in its frame off mod the frame size,
 *               else XDP_PACKET_HEADROOM (256)
 *     bit 4     its length the room left in the frame plus len's low
 *               byte as a signed delta (at least 0), else len
 *     bits 5-6  the XDP metadata in front of it: zeroed, a worker's
 *               (UCM_XDP_META_MAGIC), with an arrival stamp
 *               (..._STAMP), or another magic
 *   an operation (control >= 0x80; 2 bytes: control, arg); control & 3:
 *     0 RX      the RX thread's poll: ucm_xsk_queue__refill() (not with
 *               arg bit 6), then ucm_xsk_queue__rx() of (arg & 63) + 1 at
 *               most; arg bit 7: its packets handed back at once
 *     1 BACK    the packets held handed back, arg & 63 of them (0: all),
 *               newest first with bit 6; bit 7 as a TX channel's refusal
 *               does (ucm_chain_desc_frames(), the frames in one bulk),
 *               else ucm_xsk_rx_put()
 *     2 CONFIG  arg bit 0 XDP_USE_SG, bits 1-5 max_frags, bit 6 the fill
 *               ring asks for a wake-up; only between packets (a socket's
 *               settings do not change under a packet being taken)
 *     3 IDLE    what the RX thread does between polls: arg bit 0 its
 *               look at the RX ring (ucm_xsk_queue_rx_ready(), which reads
 *               the producer's index when all it had seen is taken), bit
 *               1 a refill (ucm_xsk_queue__refill())
 * At most MAX_RECS records. The seeds (tests/fuzz/corpus/fuzz-xskrx/,
 * tests/fuzz/make-seeds.py) are test-xskchain's cases and more.
 *
 * The oracle. A model of its own says, from the descriptors and where the
 * calls fall (libxdp's consumer caches the producer's index: a call ends
 * a packet as cut when it took everything it had seen, queue.c), what
 * each call must return and count, in chain.h's and umem_desc.h's terms:
 * a descriptor of no frame of the pool left alone, one of the pool's that
 * is bad (empty, past its frame) home; a packet of several whole when it
 * has 2 to max_frags frames, at most 65535 bytes, room for the list
 * before its first byte, a socket bound for it and no bad descriptor,
 * else dropped with every frame home, by the greatest reason. Each call:
 * the packets returned are exactly the model's, in order (address, length,
 * worker, and for a chain the list in its first frame's headroom: head
 * length, each later frame's part), each lying inside the pool's part of
 * the UMEM and each part inside its frame, no frame in two packets; the
 * metadata read has its magic cleared; the batch's stamp; every counter
 * the queue keeps. After each call the model's place of every frame of
 * the pool (home, the fill ring, the RX ring, held by the queue, out
 * with a packet, first or later) is its tag; the other pool's frames are
 * never touched. The refill posts exactly min(room, frames home), frames
 * that were home. A packet held is unchanged when it goes home. At the
 * end: the counters add up (every descriptor taken is a packet handed on,
 * a bad one, or one of a packet of several dropped by one reason, or the
 * ones after the first: rx_chain_more), the audit (ucm_pool__audit(),
 * ucm_umem__audit()) finds no frame twice and the kernel's count where
 * the model has it, the queue's posted less taken is that count, inflight
 * what is off the backing stack, and the reclaim takes exactly those
 * home, after which every frame is on the backing stack.
 *
 * ASan: the frames at home or on the fill ring are poisoned (the RX path
 * must not touch them: a list read from a frame gone home, a write into
 * the kernel's), the other pool's always; the batch's array ends at the
 * call's max.
 *
 * Cost: the two UMEMs (one per frame size, two pools of 256 frames) are
 * made once; each input ends with every frame home, the pool as it was
 * made (every frame on its backing stack, in order), the queue reset.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_xdp.h>

#include "../../xsk/port_internal.h"
#include "fuzz.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#endif
#endif
#ifndef POISON
#define POISON(p, n)	((void)(p), (void)(n))
#define UNPOISON(p, n)	((void)(p), (void)(n))
#endif

#define NPOOLS		2	/* the queue's (0) and another queue's */
#define FRAMES		256	/* a pool's: the fewest a pool has */
#define RX_RING		64
#define FILL_RING	128	/* twice the RX ring, as the default */
#define BATCH		UCM_XSK_RX_BATCH
#define HEADROOM	256	/* XDP_PACKET_HEADROOM */
#define MAX_RECS	512
#define META		sizeof(struct ucm_xdp_meta)
#define STAMP		sizeof(struct ucm_xdp_stamp)

enum {
	SOCK_SG = 1 << 0,
	SOCK_MAX_SHIFT = 1,
	SOCK_MAX_MASK = 0x1f,
	SOCK_2K = 1 << 6,
	SOCK_STOP = 1 << 7,
	/* a descriptor's control */
	D_OURS0 = 0, D_OURS1, D_OTHER, D_NONE, D_WHERE = 3,
	D_CONTD = 1 << 2,
	D_OFF = 1 << 3,
	D_ROOM = 1 << 4,
	D_META_SHIFT = 5,
	D_OP = 0x80,
	/* an operation's */
	OP_RX = 0, OP_BACK, OP_CONFIG, OP_IDLE,
	RX_NO_REFILL = 1 << 6,
	RX_BACK_NOW = 1 << 7,
	BACK_NEWEST = 1 << 6,
	BACK_TX = 1 << 7,
	CFG_WAKEUP = 1 << 6,
	IDLE_LOOK = 1 << 0,
	IDLE_REFILL = 1 << 1,
};

enum meta { META_ZERO, META_WORKER, META_STAMP, META_OTHER };

/* Where a frame of the queue's pool is, as the model has it. */
enum where { HOME, FILL, RING, HELD, OUT_HEAD, OUT_FRAG };

/* A descriptor the kernel wrote, as the model keeps it. */
struct fed {
	uint64_t addr, frame;	/* frame: of the pool, else ~0 */
	uint32_t len, off;
	enum ucm_umem_desc v;
	bool contd;
	int32_t worker;		/* what its metadata says, -1 for none */
	bool stamped;		/* with a stamp the RX path reads */
	uint64_t ns;
};

/* A packet: what the model says, and then what a consumer holds. */
struct pkt {
	struct ucm_xsk_desc d;
	uint32_t n;			/* frames */
	uint64_t frame[UCM_CHAIN_MAX];
	uint64_t frag[UCM_CHAIN_MAX];	/* ucm_desc_make() of each part */
};

struct umem {
	struct ucm_umem *umem;
	uint8_t poisoned[FRAMES];	/* the queue's pool's frames */
};

static struct umem umems[2];	/* frames of 4096, of 2048 */

static struct {
	struct umem *u;
	struct ucm_xsk x;
	struct ucm_xsk_queue q;
	uint32_t fs, shift;
	/* The rings, as the kernel sees them. */
	uint32_t rx_prod, rx_cons, rx_flags;
	uint32_t fill_prod, fill_cons, fill_flags;
	struct xdp_desc rx[RX_RING];
	uint64_t fill[FILL_RING];
	struct fed fed[RX_RING];	/* by RX ring slot */
	uint32_t seq;			/* descriptors written */
	/* The model. */
	uint8_t where[FRAMES];
	bool sg;
	uint32_t max;
	uint32_t c_prod, c_cons;	/* libxdp's cached indices */
	bool open;
	uint32_t n, seen, len;
	enum ucm_chain_why why;
	struct fed kept[UCM_CHAIN_MAX];
	int32_t cworker;		/* its first frame's metadata's */
	uint64_t stamp;
	struct ucm_xsk_stats st;	/* the counters the queue must have */
	uint64_t singles;		/* packets of one handed on */
	/* What a call returns, then what the consumer holds. */
	struct pkt want[BATCH];
	uint32_t nwant;
	struct pkt held[FRAMES];
	uint32_t nheld;
} H;

static struct ucm_xsk_desc batch[BATCH];

/* The oracle's sweeps over every frame: no coverage, no comparisons
 * traced (they would be most of a run's time, and say nothing new). */
#define SWEEP	__attribute__((no_sanitize("coverage")))

static uint32_t fidx(uint64_t frame)
{
	return (uint32_t)(frame >> H.shift);
}

/* The frames home or on the fill ring poisoned, the rest not. */
SWEEP static void poison_sweep(void)
{
	char *area = H.x.area;

	for (uint32_t i = 0; i < FRAMES; i++) {
		bool want = H.where[i] == HOME || H.where[i] == FILL;

		if (want == H.u->poisoned[i])
			continue;
		if (want)
			POISON(area + ((uint64_t)i << H.shift), H.fs);
		else
			UNPOISON(area + ((uint64_t)i << H.shift), H.fs);
		H.u->poisoned[i] = want;
	}
}

/* Every frame of the queue's pool tagged where the model has it. */
SWEEP static void tags_check(void)
{
	for (uint32_t i = 0; i < FRAMES; i++) {
		enum ucm_frame_loc loc = ucm_frame_loc(H.x.umem, (uint64_t)i << H.shift);

		switch (H.where[i]) {
		case HOME:
			CHECK(loc == UCM_LOC_STACK || loc == UCM_LOC_CACHE || loc == UCM_LOC_RING);
			break;
		case FILL:
		case RING:
			CHECK(loc == UCM_LOC_KERNEL);
			break;
		case HELD:
		case OUT_HEAD:
			CHECK(loc == UCM_LOC_APP);
			break;
		default:
			CHECK(loc == (enum ucm_frame_loc)UCM_LOC_CHAIN);
			break;
		}
	}
}

static void move(uint64_t frame, enum where from, enum where to)
{
	CHECK(frame < (uint64_t)FRAMES << H.shift && !(frame & (H.fs - 1)));
	CHECK(H.where[fidx(frame)] == from);
	H.where[fidx(frame)] = to;
}

/* The frames the kernel holds: on the fill ring, or written on the RX
 * ring and not yet taken. */
SWEEP static uint32_t kernel_frames(void)
{
	uint32_t k = H.fill_prod - H.fill_cons;

	for (uint32_t i = H.rx_cons; i != H.rx_prod; i++)
		k += H.fed[i & (RX_RING - 1)].v != UCM_UMEM_DESC_FOREIGN;
	return k;
}

SWEEP static uint32_t home_frames(void)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < FRAMES; i++)
		k += H.where[i] == HOME;
	return k;
}

/* ---- the kernel ----------------------------------------------------------- */

static void write_meta(const struct fed *f, enum meta m)
{
	struct ucm_xdp_meta meta = { .worker = (uint16_t)f->worker };
	char *p = (char *)H.x.area + f->addr;

	if (f->off < META)
		return;
	meta.magic = m == META_WORKER ? UCM_XDP_META_MAGIC :
		     m == META_STAMP ? UCM_XDP_META_MAGIC_STAMP :
		     m == META_OTHER ? UCM_XDP_META_MAGIC ^ 0x100 : 0;
	memcpy(p - META, &meta, sizeof(meta));
	if (m == META_STAMP && f->off >= META + STAMP)
		memcpy(p - META - STAMP, &f->ns, sizeof(f->ns));
}

static void kernel_write(uint8_t c, uint16_t off, uint16_t len)
{
	struct fed *f = &H.fed[H.rx_prod & (RX_RING - 1)];
	struct xdp_desc *d = &H.rx[H.rx_prod & (RX_RING - 1)];
	enum meta m = (enum meta)((c >> D_META_SHIFT) & 3);
	uint64_t pool1 = (uint64_t)FRAMES << H.shift;
	int64_t room;

	if (H.rx_prod - H.rx_cons == RX_RING)
		return;			/* the RX ring full: dropped */
	memset(f, 0, sizeof(*f));
	f->frame = ~0ull;
	f->off = c & D_OFF ? off % H.fs : HEADROOM;
	switch (c & D_WHERE) {
	case D_OURS0:
	case D_OURS1:
		if (H.fill_prod == H.fill_cons)
			return;		/* no buffer: dropped */
		f->frame = H.fill[H.fill_cons & (FILL_RING - 1)];
		__atomic_store_n(&H.fill_cons, H.fill_cons + 1, __ATOMIC_RELEASE);
		move(f->frame, FILL, RING);
		UNPOISON((char *)H.x.area + f->frame, H.fs);
		H.u->poisoned[fidx(f->frame)] = false;
		f->addr = f->frame + f->off;
		break;
	case D_OTHER:
		f->addr = pool1 + ((uint64_t)(H.seq % FRAMES) << H.shift) + f->off;
		break;
	default:
		f->addr = c & D_OFF ? UINT64_MAX - off : H.x.size + off;
		break;
	}
	room = (int64_t)H.fs - f->off;
	if (c & D_ROOM)
		room += (int8_t)(len & 0xff);
	f->len = c & D_ROOM ? (uint32_t)(room > 0 ? room : 0) : len;
	f->contd = c & D_CONTD;
	/* umem_desc.h's contract, from the model's own knowledge. */
	if (f->frame == ~0ull)
		f->v = UCM_UMEM_DESC_FOREIGN;
	else if (!f->len || f->off + (uint64_t)f->len > H.fs)
		f->v = UCM_UMEM_DESC_BAD;
	else
		f->v = UCM_UMEM_DESC_GOOD;
	f->ns = H.seq * 1000ull;
	f->worker = (m == META_WORKER || m == META_STAMP) && f->off >= META ?
		    (int32_t)(H.seq & 0xffff) : -1;
	f->stamped = m == META_STAMP && f->off >= META + STAMP;
	if (f->v != UCM_UMEM_DESC_FOREIGN)
		write_meta(f, m);
	H.seq++;
	d->addr = f->addr;
	d->len = f->len;
	d->options = f->contd ? XDP_PKT_CONTD : 0;
	__atomic_store_n(&H.rx_prod, H.rx_prod + 1, __ATOMIC_RELEASE);
}

/* ---- the model of the RX path --------------------------------------------- */

static void model_why(enum ucm_chain_why why)
{
	if (why > H.why)
		H.why = why;
}

/* The first frame's metadata read: its worker, the batch's stamp. */
static int32_t model_meta(const struct fed *f)
{
	if (f->stamped && !H.stamp)
		H.stamp = f->ns;
	return f->worker;
}

static void model_end(void)
{
	H.st.rx_chain_more += H.seen - 1;
	H.open = false;
	H.n = H.seen = H.len = 0;
	H.why = UCM_CHAIN_OK;
}

static void model_drop(void)
{
	for (uint32_t i = 0; i < H.n; i++)
		move(H.kept[i].frame, HELD, HOME);
	switch (H.why) {
	case UCM_CHAIN_LONG:
		H.st.rx_chain_long++;
		break;
	case UCM_CHAIN_NOSG:
		H.st.rx_chain_nosg++;
		break;
	case UCM_CHAIN_CUT:
		H.st.rx_chain_cut++;
		break;
	default:
		CHECK(H.why == UCM_CHAIN_BAD);
		H.st.rx_chain_bad++;
		break;
	}
	model_end();
}

static void model_whole(void)
{
	struct pkt *p = &H.want[H.nwant++];

	p->d.addr = H.kept[0].addr | UCM_DESC_CHAIN;
	p->d.len = H.len;
	p->d.worker = H.cworker;
	p->n = H.n;
	for (uint32_t i = 0; i < H.n; i++) {
		p->frame[i] = H.kept[i].frame;
		p->frag[i] = ucm_desc_make(H.kept[i].addr, H.kept[i].len);
		move(H.kept[i].frame, HELD, i ? OUT_FRAG : OUT_HEAD);
	}
	H.st.rx_chains++;
	model_end();
}

static void model_chain(const struct fed *f)
{
	H.seen++;
	H.open = true;
	if (!H.sg)
		model_why(UCM_CHAIN_NOSG);
	if (f->v == UCM_UMEM_DESC_FOREIGN) {
		model_why(UCM_CHAIN_BAD);
	} else if (f->v == UCM_UMEM_DESC_BAD) {
		model_why(UCM_CHAIN_BAD);
		move(f->frame, RING, HOME);
	} else if (H.n >= H.max) {
		model_why(UCM_CHAIN_LONG);
		move(f->frame, RING, HOME);
	} else {
		if (!H.n)
			H.cworker = model_meta(f);
		H.kept[H.n++] = *f;
		H.len += f->len;
		move(f->frame, RING, HELD);
	}
	/* Without XDP_USE_SG each descriptor is a packet: a stray
	 * XDP_PKT_CONTD one ends at once, dropped. */
	if (f->contd && H.sg)
		return;
	if (H.len > UINT16_MAX)
		model_why(UCM_CHAIN_LONG);
	if (H.n < 2 || H.kept[0].off < UCM_CHAIN_HEAD_ROOM)
		model_why(UCM_CHAIN_BAD);
	if (H.why == UCM_CHAIN_OK)
		model_whole();
	else
		model_drop();
}

/* One descriptor taken, as queue.c's dispatch must treat it. */
static void model_one(const struct fed *f)
{
	struct pkt *p;

	if (f->contd || H.open) {
		model_chain(f);
		return;
	}
	if (f->v != UCM_UMEM_DESC_GOOD) {
		H.st.rx_bad_desc++;
		if (f->v == UCM_UMEM_DESC_BAD)
			move(f->frame, RING, HOME);
		return;
	}
	p = &H.want[H.nwant++];
	p->d.addr = f->addr;
	p->d.len = f->len;
	p->d.worker = model_meta(f);
	p->n = 1;
	p->frame[0] = f->frame;
	p->frag[0] = ucm_desc_make(f->addr, f->len);
	move(f->frame, RING, OUT_HEAD);
	H.singles++;
}

/* ---- checks ----------------------------------------------------------------- */

static void stats_check(void)
{
	const struct ucm_xsk_stats *s = &H.q.stats;

	CHECK(s->rx == H.st.rx && s->rx_bad_desc == H.st.rx_bad_desc);
	CHECK(s->fill == H.st.fill && s->fill_short == H.st.fill_short);
	CHECK(s->wakeups == H.st.wakeups);
	CHECK(s->rx_chains == H.st.rx_chains && s->rx_chain_more == H.st.rx_chain_more);
	CHECK(s->rx_chain_long == H.st.rx_chain_long && s->rx_chain_cut == H.st.rx_chain_cut);
	CHECK(s->rx_chain_bad == H.st.rx_chain_bad && s->rx_chain_nosg == H.st.rx_chain_nosg);
	CHECK(s->rx_steer_err == 0 && s->rx_batches == 0);
	/* Packets counted at their end: a packet still open is in rx alone. */
	CHECK(s->rx - s->rx_chain_more == s->rx_packets + (H.q.chain.open ? H.q.chain.seen : 0));
}

/* A packet as it is in memory: inside the pool's part of the UMEM, each
 * part inside its frame, no frame twice; and what the model says. */
static void pkt_check(const struct ucm_xsk_desc *d, const struct pkt *p)
{
	uint64_t end = (uint64_t)FRAMES << H.shift, fmask = H.fs - 1;
	uint64_t addr = d->addr & ~UCM_DESC_CHAIN, base = addr & ~fmask;
	const struct ucm_chain *c;
	uint64_t sum;

	CHECK(d->addr == p->d.addr && d->len == p->d.len && d->worker == p->d.worker);
	CHECK(addr < end && d->len);
	CHECK(base == p->frame[0]);
	CHECK(ucm_frame_loc(H.x.umem, base) == UCM_LOC_APP);
	if (!(d->addr & UCM_DESC_CHAIN)) {
		CHECK(p->n == 1 && (addr & fmask) + d->len <= H.fs);
		return;
	}
	c = ucm_chain_of(H.x.area, base);
	CHECK(c->nfrag >= 1 && c->nfrag + 1u <= UCM_CHAIN_MAX && c->nfrag + 1u == p->n);
	CHECK(c->head_len && (addr & fmask) + c->head_len <= H.fs);
	CHECK((addr & fmask) >= UCM_CHAIN_HEAD_ROOM);
	CHECK(c->head_len == ucm_desc_len(p->frag[0]));
	sum = c->head_len;
	for (uint32_t i = 0; i < c->nfrag; i++) {
		uint64_t a = ucm_desc_addr(c->frag[i]), b = a & ~fmask;
		uint32_t l = ucm_desc_len(c->frag[i]);

		CHECK(c->frag[i] == p->frag[i + 1] && b == p->frame[i + 1]);
		CHECK(a < end && l && (a & fmask) + l <= H.fs);
		CHECK(ucm_frame_loc(H.x.umem, b) == (enum ucm_frame_loc)UCM_LOC_CHAIN);
		CHECK(b != base);
		for (uint32_t j = 0; j < i; j++)
			CHECK((ucm_desc_addr(c->frag[j]) & ~fmask) != b);
		sum += l;
	}
	CHECK(sum == d->len && d->len <= UINT16_MAX);
}

/* ---- the RX thread and the consumer ----------------------------------------- */

static void refill(void)
{
	uint32_t room = FILL_RING - (H.fill_prod - H.fill_cons), home = home_frames(), want;
	uint32_t prod = H.fill_prod;
	int ret;

	want = room < home ? room : home;
	ret = ucm_xsk_queue__refill(&H.q);
	CHECK(ret == (int)want && H.fill_prod - prod == want);
	for (uint32_t i = prod; i != H.fill_prod; i++)
		move(H.fill[i & (FILL_RING - 1)], HOME, FILL);
	H.st.fill += want;
	if (want < room)
		H.st.fill_short++;
	CHECK(H.q.fill_dry == (want < room));
	if (H.fill_flags & XDP_RING_NEED_WAKEUP)
		H.st.wakeups++;
	CHECK(H.q.posted == H.st.fill);
	stats_check();
	tags_check();
}

/* Packets @from..@from + @n of those held go home; @tx: as a TX
 * channel's refusal sends them (txq.c's desc_home()), else as the RX
 * thread's (ucm_xsk_rx_put()). */
static void give_back(uint32_t from, uint32_t n, bool tx)
{
	uint64_t back[BATCH + UCM_CHAIN_MAX];
	uint32_t m = 0;

	for (uint32_t i = from; i < from + n; i++) {
		struct pkt *p = &H.held[i];

		pkt_check(&p->d, p);	/* unchanged while it was held */
		if (tx) {
			uint32_t k = ucm_chain_desc_frames(H.x.umem,
							   ucm_desc_make(p->d.addr, p->d.len),
							   back + m);

			CHECK(k == p->n);
			for (uint32_t j = 0; j < k; j++)
				CHECK(back[m + j] == p->frame[j]);
			m += k;
			if (m >= BATCH || i + 1 == from + n) {
				CHECK(!ucm_umem_put_bulk_from(H.x.umem, back, m, UCM_LOC_APP, false));
				m = 0;
			}
		} else {
			ucm_xsk_rx_put(&H.q, &p->d);
		}
		for (uint32_t j = 0; j < p->n; j++)
			move(p->frame[j], j ? OUT_FRAG : OUT_HEAD, HOME);
	}
	memmove(&H.held[from], &H.held[from + n], (H.nheld - from - n) * sizeof(H.held[0]));
	H.nheld -= n;
	tags_check();
	poison_sweep();
}

static void rx(uint32_t max, bool back_now)
{
	uint32_t n, got, entries;

	/* libxdp's peek: the producer's index read only when all that was
	 * seen is taken. */
	entries = H.c_prod - H.c_cons;
	if (!entries) {
		H.c_prod = H.rx_prod;
		entries = H.c_prod - H.c_cons;
	}
	n = entries < max ? entries : max;
	H.nwant = 0;
	H.stamp = 0;
	for (uint32_t i = 0; i < n; i++)
		model_one(&H.fed[(H.c_cons + i) & (RX_RING - 1)]);
	H.c_cons += n;
	/* queue.c: a packet open where the call took all it had seen is cut. */
	if (H.open && H.c_cons == H.c_prod) {
		model_why(UCM_CHAIN_CUT);
		model_drop();
	}
	H.st.rx += n;

	memset(batch, 0xa5, sizeof(batch));
	POISON(&batch[max], (BATCH - max) * sizeof(batch[0]));
	got = ucm_xsk_queue__rx(&H.q, batch, max);
	UNPOISON(batch, sizeof(batch));

	CHECK(got == H.nwant);
	CHECK(H.rx_cons == H.c_cons && H.q.rx.cached_cons == H.c_cons &&
	      H.q.rx.cached_prod == H.c_prod);
	CHECK(H.q.rx_stamp == H.stamp);
	CHECK(H.q.chain.open == H.open && (!H.open || (H.q.chain.n == H.n &&
						       H.q.chain.seen == H.seen)));
	CHECK(H.q.posted - H.q.taken == kernel_frames());
	stats_check();
	for (uint32_t i = 0; i < got; i++) {
		uint64_t addr = batch[i].addr & ~UCM_DESC_CHAIN;
		uint32_t meta;

		pkt_check(&batch[i], &H.want[i]);
		CHECK(H.want[i].n <= H.max);
		/* What the RX path read of the metadata is cleared. */
		if ((addr & (H.fs - 1)) >= META) {
			memcpy(&meta, (char *)H.x.area + addr - META, sizeof(meta));
			CHECK(meta != UCM_XDP_META_MAGIC && meta != UCM_XDP_META_MAGIC_STAMP);
		}
		CHECK(H.nheld < FRAMES);
		H.held[H.nheld++] = H.want[i];
	}
	tags_check();
	poison_sweep();
	if (back_now)
		give_back(0, H.nheld, false);
}

/* The idle look: libxdp's xsk_cons_nb_avail(), one wanted. */
static void look(void)
{
	if (H.c_prod == H.c_cons)
		H.c_prod = H.rx_prod;
	CHECK(ucm_xsk_queue_rx_ready(&H.q) == (H.c_prod != H.c_cons));
	CHECK(H.q.rx.cached_prod == H.c_prod && H.q.rx.cached_cons == H.c_cons);
}

static void config(uint8_t arg)
{
	if (H.open)
		return;
	H.sg = arg & 1;
	H.max = (arg >> 1) & SOCK_MAX_MASK;
	if (!H.max || H.max > UCM_CHAIN_MAX)
		H.max = UCM_CHAIN_MAX;
	H.q.sg = H.sg;
	H.q.chain.max = (uint8_t)H.max;
}

/* ---- set-up, end, reset -------------------------------------------------- */

static struct ucm_umem *umem_new(uint32_t frame_size)
{
	UCM_OPTS(ucm_umem_opts, uo, .npools = NPOOLS, .frames_per_pool = FRAMES,
		 .frame_size = frame_size);
	struct ucm_umem *umem = ucm_umem__create(&uo);

	CHECK(umem);
	/* Every frame home: poisoned, as is the other pool, for good. */
	POISON(ucm_umem__area(umem), ucm_umem__size(umem));
	return umem;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	umems[0].umem = umem_new(4096);
	umems[1].umem = umem_new(2048);
	for (int i = 0; i < 2; i++)
		memset(umems[i].poisoned, 1, FRAMES);
	return 0;
}

static void start(uint8_t sock)
{
	struct umem *u = &umems[!!(sock & SOCK_2K)];
	struct ucm_xsk_queue *q = &H.q;

	memset(&H, 0, sizeof(H));
	H.u = u;
	H.x.umem = u->umem;
	H.x.area = ucm_umem__area(u->umem);
	H.x.size = ucm_umem__size(u->umem);
	H.x.frame_size = ucm_umem__frame_size(u->umem);
	H.x.fill_size = FILL_RING;
	H.x.nqueues = 1;
	H.x.q = q;
	H.fs = H.x.frame_size;
	H.shift = H.fs == 4096 ? 12 : 11;
	q->x = &H.x;
	q->pool = ucm_umem__pool(u->umem, 0);
	q->fd = -1;
	q->wake_fd = -1;
	q->rx.mask = RX_RING - 1;
	q->rx.size = RX_RING;
	q->rx.producer = &H.rx_prod;
	q->rx.consumer = &H.rx_cons;
	q->rx.flags = &H.rx_flags;
	q->rx.ring = H.rx;
	q->fill.mask = FILL_RING - 1;
	q->fill.size = FILL_RING;
	q->fill.producer = &H.fill_prod;
	q->fill.consumer = &H.fill_cons;
	q->fill.flags = &H.fill_flags;
	q->fill.ring = H.fill;
	q->fill.cached_cons = FILL_RING;	/* libxdp: the consumer + the size */
	ucm_chain_rx_reset(&q->chain);
	config(sock);
	ucm_pool__set_owner(q->pool);
	for (uint32_t i = 0; i < FRAMES; i++)
		CHECK(u->poisoned[i]);
	/* The RX thread's first refill, before the kernel has any frame. */
	refill();
}

static void pool_check(struct ucm_pool *pool, uint32_t kernel)
{
	struct ucm_pool_audit a;

	CHECK(!ucm_pool__audit(pool, &a, sizeof(a)));
	CHECK(a.tagged && a.frames == FRAMES && a.chain == 0);
	CHECK(a.loc[UCM_LOC_APP] == 0 && a.loc[UCM_LOC_KERNEL] == kernel);
	CHECK(a.loc[UCM_LOC_STACK] + a.loc[UCM_LOC_CACHE] + a.loc[UCM_LOC_RING] == FRAMES - kernel);
	CHECK(ucm_pool__inflight(pool) == FRAMES - a.loc[UCM_LOC_STACK]);
}

static void finish(bool stop)
{
	struct ucm_pool *pool = H.q.pool, *other = ucm_umem__pool(H.x.umem, 1);
	struct ucm_pool_audit sum;
	struct ucm_xsk_stats s;
	uint64_t addrs[FRAMES];
	uint32_t kernel;

	/* The RX thread's last polls take all the kernel wrote, or it stops
	 * with some on the ring. */
	while (!stop && H.rx_cons != H.rx_prod)
		rx(BATCH, false);
	CHECK(stop || (!H.open && !H.q.chain.open));
	give_back(0, H.nheld, false);
	/* ucm_xsk__destroy(): the packet half taken goes home, cut. */
	if (H.open) {
		model_why(UCM_CHAIN_CUT);
		model_drop();
	}
	ucm_xsk_queue_chain_end(&H.q);
	CHECK(!H.q.chain.open);
	tags_check();

	/* The counters add up: each descriptor taken is a packet of one
	 * handed on, a bad one, or of a packet of several, handed on or
	 * dropped by one reason (its first) or after its first. */
	ucm_xsk_queue__stats(&H.q, &s, sizeof(s));
	CHECK(s.rx == H.st.rx && s.rx_chains == H.st.rx_chains);
	CHECK(s.rx == H.singles + s.rx_bad_desc + s.rx_chains + s.rx_chain_long + s.rx_chain_cut +
	      s.rx_chain_bad + s.rx_chain_nosg + s.rx_chain_more);
	CHECK(s.rx == H.rx_cons && s.fill == H.q.posted);
	CHECK(s.rx_packets == s.rx - s.rx_chain_more);

	/* Every frame home but the kernel's, once. */
	kernel = kernel_frames();
	CHECK(H.q.posted - H.q.taken == kernel);
	CHECK(!ucm_umem__audit(H.x.umem, &sum, sizeof(sum)));
	CHECK(sum.tagged && sum.frames == NPOOLS * FRAMES && !sum.chain);
	CHECK(sum.loc[UCM_LOC_KERNEL] == kernel && sum.loc[UCM_LOC_APP] == 0);
	CHECK(sum.loc[UCM_LOC_STACK] + sum.loc[UCM_LOC_CACHE] + sum.loc[UCM_LOC_RING] ==
	      NPOOLS * FRAMES - kernel);
	/* The other queue's pool untouched: every frame on its stack. */
	CHECK(ucm_pool__inflight(other) == 0);
	CHECK(ucm_pool__inflight(pool) == (int64_t)FRAMES - (int64_t)(sum.loc[UCM_LOC_STACK] -
								       FRAMES));

	/* The kernel lets go with the socket: exactly its frames reclaimed. */
	CHECK(!ucm_pools_reclaim(&pool, 1, H.q.posted - H.q.taken, UCM_LOC_KERNEL, false));
	for (uint32_t i = 0; i < FRAMES; i++)
		H.where[i] = H.where[i] == FILL || H.where[i] == RING ? HOME : H.where[i];
	tags_check();
	CHECK(ucm_pool__inflight(pool) == 0);
	pool_check(pool, 0);

	/* The pool as it was made, for the next input: every frame on its
	 * backing stack, the first to come off it the lowest. */
	CHECK(ucm_pool__alloc_bulk(pool, addrs, FRAMES) == FRAMES);
	for (uint32_t i = 0; i < FRAMES; i++)
		addrs[i] = (uint64_t)(FRAMES - 1 - i) << H.shift;
	CHECK(!ucm_umem__release_bulk(H.x.umem, addrs, FRAMES));
	CHECK(ucm_pool__inflight(pool) == 0);
	ucm_pool__clear_owner(pool);
	poison_sweep();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t at = 1;
	uint32_t recs = 0;

	if (size < 1)
		return 0;
	start(data[0]);
	while (at < size && recs++ < MAX_RECS) {
		uint8_t c = data[at];

		if (!(c & D_OP)) {
			uint16_t off, len;

			if (size - at < 5)
				break;
			memcpy(&off, data + at + 1, sizeof(off));
			memcpy(&len, data + at + 3, sizeof(len));
			kernel_write(c, off, len);
			at += 5;
			continue;
		}
		if (size - at < 2)
			break;
		uint8_t arg = data[at + 1];

		at += 2;
		switch (c & 3) {
		case OP_RX:
			if (!(arg & RX_NO_REFILL))
				refill();
			rx((arg & 63) + 1u, arg & RX_BACK_NOW);
			break;
		case OP_BACK: {
			uint32_t n = arg & 63;

			if (!n || n > H.nheld)
				n = H.nheld;
			give_back(arg & BACK_NEWEST ? H.nheld - n : 0, n, arg & BACK_TX);
			break;
		}
		case OP_CONFIG:
			config(arg);
			H.fill_flags = arg & CFG_WAKEUP ? XDP_RING_NEED_WAKEUP : 0;
			break;
		default:
			if (arg & IDLE_LOOK)
				look();
			if (arg & IDLE_REFILL)
				refill();
			break;
		}
	}
	finish(data[0] & SOCK_STOP);
	return 0;
}
