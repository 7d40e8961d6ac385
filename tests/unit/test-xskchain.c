// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The RX path's packets of several descriptors (multi-buffer AF_XDP,
 * xsk/queue.c's ucm_xsk_queue__rx()), with no socket: a queue whose RX
 * ring is memory of ours, filled with the descriptors a kernel would
 * write, over a real UMEM (the debug build's frame tags check every move;
 * the pool audit says where every frame is). For each way a packet can
 * be bad, the outcome the header promises: a counted drop, every frame
 * home, the next packet fine.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_xdp.h>

#include "../../xsk/dp_internal.h"
#include "../../xsk/port_internal.h"
#include "utest.h"

#define FRAMES		256
#define RING		64
#define DATA_OFF	256	/* where the kernel puts a packet: XDP_PACKET_HEADROOM */
#define PER		(4096 - DATA_OFF)

/* A queue with a ring of ours: what the kernel would see of it. */
struct fake {
	struct ucm_xsk x;
	struct ucm_xsk_queue q;
	uint32_t prod, cons, flags;
	struct xdp_desc ring[RING];
	uint64_t posted[FRAMES];	/* the frames "the kernel" holds */
	uint32_t nposted, next;		/* next: the next one it fills */
};

static struct fake *fake_new(bool sg)
{
	UCM_OPTS(ucm_umem_opts, uo, .npools = 1, .frames_per_pool = FRAMES);
	struct fake *f = calloc(1, sizeof(*f));
	int n;

	if (!f)
		return NULL;
	f->x.umem = ucm_umem__create(&uo);
	if (!f->x.umem) {
		free(f);
		return NULL;
	}
	f->x.area = ucm_umem__area(f->x.umem);
	f->x.size = ucm_umem__size(f->x.umem);
	f->x.frame_size = ucm_umem__frame_size(f->x.umem);
	f->x.nqueues = 1;
	f->x.q = &f->q;
	f->q.x = &f->x;
	f->q.pool = ucm_umem__pool(f->x.umem, 0);
	f->q.fd = -1;
	f->q.wake_fd = -1;
	f->q.sg = sg;
	f->q.chain.max = UCM_CHAIN_MAX;
	f->q.rx.mask = RING - 1;
	f->q.rx.size = RING;
	f->q.rx.producer = &f->prod;
	f->q.rx.consumer = &f->cons;
	f->q.rx.flags = &f->flags;
	f->q.rx.ring = f->ring;
	ucm_pool__set_owner(f->q.pool);
	/* The fill ring, as a refill leaves it: frames out to the kernel. */
	n = ucm_pool__alloc_bulk(f->q.pool, f->posted, 128);
	for (int i = 0; i < n; i++)
		ucm_frame_move(f->x.umem, f->posted[i], UCM_LOC_APP, UCM_LOC_KERNEL);
	f->nposted = n;
	f->q.posted = n;
	return f;
}

/* The kernel writes one descriptor: the next posted frame, @len bytes at
 * @off, @more for XDP_PKT_CONTD. Return: its frame. */
static uint64_t put_desc(struct fake *f, uint32_t off, uint32_t len, bool more)
{
	uint64_t frame = f->posted[f->next++];
	struct xdp_desc *d = &f->ring[f->prod & (RING - 1)];

	d->addr = frame + off;
	d->len = len;
	d->options = more ? XDP_PKT_CONTD : 0;
	__atomic_store_n(&f->prod, f->prod + 1, __ATOMIC_RELEASE);
	return frame;
}

/* A descriptor naming no frame of ours (another queue's, or garbage). */
static void put_foreign(struct fake *f, bool more)
{
	struct xdp_desc *d = &f->ring[f->prod & (RING - 1)];

	d->addr = f->x.size + DATA_OFF;
	d->len = 100;
	d->options = more ? XDP_PKT_CONTD : 0;
	__atomic_store_n(&f->prod, f->prod + 1, __ATOMIC_RELEASE);
}

/* A packet of @nframes descriptors, @last bytes in the last. */
static uint64_t put_packet(struct fake *f, uint32_t nframes, uint32_t last)
{
	uint64_t first = 0;

	for (uint32_t i = 0; i < nframes; i++) {
		uint64_t fr = put_desc(f, DATA_OFF, i + 1 < nframes ? PER : last,
				       i + 1 < nframes);
		if (!i)
			first = fr;
	}
	return first;
}

static struct ucm_xsk_stats stats(struct fake *f)
{
	struct ucm_xsk_stats s;

	ucm_xsk_queue__stats(&f->q, &s, sizeof(s));
	return s;
}

/* Frames where the pool's audit puts them: @app out with us (handed on
 * or not yet taken back), @chain listed in a first frame. */
static int audit(struct fake *f, uint32_t app, uint32_t chain)
{
	struct ucm_pool_audit a;
	uint32_t kernel;

	UT_ASSERT(ucm_pool__audit(f->q.pool, &a, sizeof(a)) == 0, "the books do not balance");
	/* The kernel's: posted and not written, or written and not read. */
	kernel = f->nposted - f->next + (f->prod - f->cons);

	UT_ASSERT(a.loc[UCM_LOC_KERNEL] == kernel, "kernel holds %u, want %u",
		  a.loc[UCM_LOC_KERNEL], kernel);
	UT_ASSERT(a.loc[UCM_LOC_APP] == app, "app holds %u, want %u", a.loc[UCM_LOC_APP], app);
	UT_ASSERT(a.chain == chain, "chains hold %u, want %u", a.chain, chain);
	return 0;
}

/* A packet handed on goes home as the datapath sends it: later frames
 * first (the list lies in the first). */
static void give_back(struct fake *f, const struct ucm_xsk_desc *d)
{
	uint64_t base = (d->addr & ~UCM_DESC_CHAIN) & ~(uint64_t)(f->x.frame_size - 1);
	uint64_t frag[UCM_CHAIN_MAX - 1];
	uint32_t n = 0;

	if (d->addr & UCM_DESC_CHAIN)
		n = ucm_chain_frames(f->x.area, base, f->x.frame_size - 1, frag);
	for (uint32_t i = 0; i < n; i++) {
		ucm_frame_move(f->x.umem, frag[i], UCM_LOC_CHAIN, UCM_LOC_APP);
		ucm_pool__put(f->q.pool, frag[i]);
	}
	ucm_pool__put(f->q.pool, base);
}

/* Everything home, as the destroy's reclaim takes what the kernel held:
 * 0 when the UMEM then goes, every frame in its pool. */
static int fake_free(struct fake *f)
{
	uint64_t fmask = f->x.frame_size - 1;
	int err;

	for (uint32_t i = f->cons; i != f->prod; i++) {
		uint64_t a = f->ring[i & (RING - 1)].addr;

		if (a < f->x.size) {
			ucm_frame_move(f->x.umem, a & ~fmask, UCM_LOC_KERNEL, UCM_LOC_APP);
			ucm_pool__put(f->q.pool, a & ~fmask);
		}
	}
	for (uint32_t i = f->next; i < f->nposted; i++) {
		ucm_frame_move(f->x.umem, f->posted[i], UCM_LOC_KERNEL, UCM_LOC_APP);
		ucm_pool__put(f->q.pool, f->posted[i]);
	}
	ucm_pool__clear_owner(f->q.pool);
	err = ucm_umem__destroy(f->x.umem, 0);
	free(f);
	UT_ASSERT(!err, "the UMEM stays: %s", strerror(-err));
	return 0;
}

#define FAKE(f, sg)							\
	struct fake *f = fake_new(sg);					\
	UT_ASSERT(f, "no UMEM: %s", strerror(errno))

/* Three descriptors, one packet: its first frame with UCM_DESC_CHAIN and
 * the whole length, its others listed in its headroom, tagged chain. */
static int test_whole(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[8];
	struct ucm_chain *c;
	struct ucm_xsk_stats s;
	uint64_t first;
	uint32_t n;

	first = put_packet(f, 3, 1334);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	UT_ASSERT(n == 1, "%u packets, want 1", n);
	UT_ASSERT(d[0].addr == ((first + DATA_OFF) | UCM_DESC_CHAIN), "addr %#llx",
		  (unsigned long long)d[0].addr);
	UT_ASSERT(d[0].len == 2 * PER + 1334, "len %u", d[0].len);
	c = ucm_chain_of(f->x.area, first);
	UT_ASSERT(c->nfrag == 2 && c->head_len == PER, "list of %u, head %u", c->nfrag,
		  c->head_len);
	UT_ASSERT(ucm_desc_addr(c->frag[0]) == f->posted[1] + DATA_OFF &&
		  ucm_desc_len(c->frag[1]) == 1334, "the list names other frames");
	s = stats(f);
	UT_ASSERT(s.rx == 3 && s.rx_chains == 1 && s.rx_chain_more == 2 && s.rx_packets == 1,
		  "rx %llu chains %llu more %llu packets %llu", (unsigned long long)s.rx,
		  (unsigned long long)s.rx_chains, (unsigned long long)s.rx_chain_more,
		  (unsigned long long)s.rx_packets);
	if (audit(f, 1, 2))
		return 1;
	give_back(f, &d[0]);
	if (audit(f, 0, 0))
		return 1;
	return fake_free(f);
}

/* A packet longer than one call takes (@max): held over, whole next time. */
static int test_across_calls(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[8];
	uint32_t n;

	put_packet(f, 3, 100);
	n = ucm_xsk_queue__rx(&f->q, d, 2);
	UT_ASSERT(n == 0 && f->q.chain.open, "%u packets after 2 of 3 descriptors", n);
	if (audit(f, 2, 0))
		return 1;
	n = ucm_xsk_queue__rx(&f->q, d, 2);
	UT_ASSERT(n == 1 && d[0].len == 2 * PER + 100, "%u packets, len %u", n, n ? d[0].len : 0);
	UT_ASSERT(stats(f).rx_chain_cut == 0, "cut");
	give_back(f, &d[0]);
	if (audit(f, 0, 0))
		return 1;
	return fake_free(f);
}

/* The ring runs dry mid-packet (the kernel publishes whole packets): cut,
 * its frames home, the next packet fine. */
static int test_cut(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[8];
	uint32_t n;

	put_desc(f, DATA_OFF, PER, true);
	put_desc(f, DATA_OFF, PER, true);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	UT_ASSERT(n == 0, "%u packets", n);
	UT_ASSERT(stats(f).rx_chain_cut == 1 && !f->q.chain.open, "not cut");
	if (audit(f, 0, 0))
		return 1;
	put_desc(f, DATA_OFF, 60, false);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	UT_ASSERT(n == 1 && d[0].len == 60 && !(d[0].addr & UCM_DESC_CHAIN),
		  "the next packet: %u, len %u", n, n ? d[0].len : 0);
	give_back(f, &d[0]);
	return fake_free(f);
}

/* More descriptors than UCM_CHAIN_MAX: long, every frame home. */
static int test_too_long(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[RING];
	struct ucm_xsk_stats s;
	uint32_t n;

	put_packet(f, UCM_CHAIN_MAX + 1, 10);
	put_packet(f, 2, 10);
	n = ucm_xsk_queue__rx(&f->q, d, RING);
	s = stats(f);
	UT_ASSERT(n == 1 && d[0].len == PER + 10, "%u packets", n);
	UT_ASSERT(s.rx_chain_long == 1 && s.rx_chains == 1, "long %llu",
		  (unsigned long long)s.rx_chain_long);
	UT_ASSERT(s.rx - s.rx_chain_more == 2, "packets %llu",
		  (unsigned long long)(s.rx - s.rx_chain_more));
	if (audit(f, 1, 1))
		return 1;
	give_back(f, &d[0]);
	return fake_free(f);
}

/* max_frags 2: a packet of three is long, every frame home; one of two,
 * and the next of three with max_frags back at its default, go on. */
static int test_max_frags(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[RING];
	struct ucm_xsk_stats s;
	uint32_t n;

	f->q.chain.max = 2;
	put_packet(f, 3, 10);
	put_packet(f, 2, 20);
	n = ucm_xsk_queue__rx(&f->q, d, RING);
	s = stats(f);
	UT_ASSERT(n == 1 && d[0].len == PER + 20, "%u packets, len %u", n, n ? d[0].len : 0);
	UT_ASSERT(s.rx_chain_long == 1 && s.rx_chains == 1, "long %llu chains %llu",
		  (unsigned long long)s.rx_chain_long, (unsigned long long)s.rx_chains);
	if (audit(f, 1, 1))
		return 1;
	give_back(f, &d[0]);
	f->q.chain.max = UCM_CHAIN_MAX;
	put_packet(f, 3, 30);
	n = ucm_xsk_queue__rx(&f->q, d, RING);
	UT_ASSERT(n == 1 && d[0].len == 2 * PER + 30, "%u packets", n);
	if (audit(f, 1, 2))
		return 1;
	give_back(f, &d[0]);
	return fake_free(f);
}

/* UCM_CHAIN_MAX descriptors is fine, but not past 65535 bytes. */
static int test_too_many_bytes(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[RING];
	uint32_t n;

	put_packet(f, UCM_CHAIN_MAX, PER);	/* 18 * 3840 > 65535 */
	n = ucm_xsk_queue__rx(&f->q, d, RING);
	UT_ASSERT(n == 0 && stats(f).rx_chain_long == 1, "%u packets", n);
	if (audit(f, 0, 0))
		return 1;
	put_packet(f, UCM_CHAIN_MAX, 100);	/* 17 * 3840 + 100 fits */
	n = ucm_xsk_queue__rx(&f->q, d, RING);
	UT_ASSERT(n == 1 && d[0].len == 17 * PER + 100, "%u packets", n);
	give_back(f, &d[0]);
	return fake_free(f);
}

/* After a bad packet, the next one of one frame arrives whole: its own
 * frame, its own length, no chain bit (nothing of the bad one held over
 * into it); then every frame is home. */
static int next_fine(struct fake *f)
{
	struct ucm_xsk_stats s0 = stats(f), s;
	struct ucm_xsk_desc d[8];
	uint64_t frame;
	uint32_t n;

	frame = put_desc(f, DATA_OFF, 60, false);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	s = stats(f);
	UT_ASSERT(n == 1 && d[0].addr == frame + DATA_OFF && d[0].len == 60 &&
		  !f->q.chain.open, "the next packet: %u, addr %#llx len %u", n,
		  n ? (unsigned long long)d[0].addr : 0ull, n ? d[0].len : 0);
	UT_ASSERT(s.rx == s0.rx + 1 && s.rx_chains == s0.rx_chains &&
		  s.rx_chain_bad == s0.rx_chain_bad && s.rx_chain_cut == s0.rx_chain_cut,
		  "counted: rx %llu chains %llu bad %llu cut %llu",
		  (unsigned long long)(s.rx - s0.rx), (unsigned long long)(s.rx_chains - s0.rx_chains),
		  (unsigned long long)(s.rx_chain_bad - s0.rx_chain_bad),
		  (unsigned long long)(s.rx_chain_cut - s0.rx_chain_cut));
	if (audit(f, 1, 0))
		return 1;
	give_back(f, &d[0]);
	return audit(f, 0, 0);
}

/* A descriptor of no frame of ours in the middle: the packet is bad; the
 * frames it did name come home, the foreign one is left alone. */
static int test_foreign_middle(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[8];
	struct ucm_xsk_stats s;
	uint32_t n;

	put_desc(f, DATA_OFF, PER, true);
	put_foreign(f, true);
	put_desc(f, DATA_OFF, 100, false);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	s = stats(f);
	UT_ASSERT(n == 0 && s.rx_chain_bad == 1 && s.rx_chain_more == 2,
		  "%u packets, bad %llu", n, (unsigned long long)s.rx_chain_bad);
	if (audit(f, 0, 0) || next_fine(f))
		return 1;
	return fake_free(f);
}

/* A length past its frame in the middle: bad, that frame home too. */
static int test_bad_length(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[8];
	uint32_t n;

	put_desc(f, DATA_OFF, PER, true);
	put_desc(f, DATA_OFF, PER + 1, true);
	put_desc(f, DATA_OFF, 100, false);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	UT_ASSERT(n == 0 && stats(f).rx_chain_bad == 1, "%u packets", n);
	if (audit(f, 0, 0) || next_fine(f))
		return 1;
	return fake_free(f);
}

/* A first frame with no room for the list before its packet: bad. */
static int test_no_room(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[8];
	uint32_t n;

	put_desc(f, UCM_CHAIN_HEAD_ROOM - 8, 1000, true);
	put_desc(f, DATA_OFF, 100, false);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	UT_ASSERT(n == 0 && stats(f).rx_chain_bad == 1, "%u packets", n);
	if (audit(f, 0, 0) || next_fine(f))
		return 1;
	return fake_free(f);
}

/* XDP_PKT_CONTD on a socket bound without XDP_USE_SG: nosg, frames home;
 * its packets of one descriptor are fine. */
static int test_no_sg(void)
{
	FAKE(f, false);
	struct ucm_xsk_desc d[8];
	uint32_t n;

	/* Each descriptor a packet: the one with XDP_PKT_CONTD dropped
	 * alone, the next two delivered. */
	put_desc(f, DATA_OFF, 100, true);
	put_desc(f, DATA_OFF, 80, false);
	put_desc(f, DATA_OFF, 64, false);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	UT_ASSERT(n == 2 && d[0].len == 80 && d[1].len == 64, "%u packets", n);
	UT_ASSERT(stats(f).rx_chain_nosg == 1 && !f->q.chain.open, "nosg %llu",
		  (unsigned long long)stats(f).rx_chain_nosg);
	give_back(f, &d[0]);
	give_back(f, &d[1]);
	if (audit(f, 0, 0))
		return 1;
	/* A stray XDP_PKT_CONTD last on the ring: not SG's, not a cut. */
	put_desc(f, DATA_OFF, 64, true);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	UT_ASSERT(n == 0 && stats(f).rx_chain_nosg == 2 && !stats(f).rx_chain_cut,
		  "%u packets, nosg %llu, cut %llu", n, (unsigned long long)stats(f).rx_chain_nosg,
		  (unsigned long long)stats(f).rx_chain_cut);
	if (audit(f, 0, 0))
		return 1;
	return fake_free(f);
}

/* The ring runs dry mid-packet on the last descriptor a full call takes
 * (a zero-copy kernel that published a packet's first part when its RX
 * ring filled): cut, not merged with the next packet. */
static int test_cut_full_call(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[8];
	uint32_t n;

	put_desc(f, DATA_OFF, 60, false);
	put_desc(f, DATA_OFF, PER, true);
	n = ucm_xsk_queue__rx(&f->q, d, 2);
	UT_ASSERT(n == 1 && d[0].len == 60, "%u packets", n);
	UT_ASSERT(stats(f).rx_chain_cut == 1 && !f->q.chain.open, "not cut");
	give_back(f, &d[0]);
	if (audit(f, 0, 0))
		return 1;
	put_packet(f, 2, 70);
	n = ucm_xsk_queue__rx(&f->q, d, 8);
	UT_ASSERT(n == 1 && d[0].len == PER + 70 && (d[0].addr & UCM_DESC_CHAIN),
		  "the next packet: %u, len %u", n, n ? d[0].len : 0);
	UT_ASSERT(stats(f).rx_chain_cut == 1, "cut again");
	give_back(f, &d[0]);
	if (audit(f, 0, 0))
		return 1;
	return fake_free(f);
}

/* The queue stops with a packet half taken: it comes home, counted cut
 * (what ucm_xsk__destroy() does before it closes the sockets). */
static int test_stop_mid_packet(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[8];

	put_packet(f, 3, 100);
	UT_ASSERT(ucm_xsk_queue__rx(&f->q, d, 2) == 0 && f->q.chain.open, "not held over");
	ucm_xsk_queue_chain_end(&f->q);
	UT_ASSERT(stats(f).rx_chain_cut == 1 && !f->q.chain.open, "not cut");
	if (audit(f, 0, 0))
		return 1;
	return fake_free(f);
}

/* Packets of one and of several, mixed in one call, in order. */
static int test_mixed(void)
{
	FAKE(f, true);
	struct ucm_xsk_desc d[RING];
	uint32_t want[] = { 64, 2 * PER + 5, 1500, PER + 1, 64 };
	uint32_t n, i;

	put_desc(f, DATA_OFF, 64, false);
	put_packet(f, 3, 5);
	put_desc(f, DATA_OFF, 1500, false);
	put_packet(f, 2, 1);
	put_desc(f, DATA_OFF, 64, false);
	n = ucm_xsk_queue__rx(&f->q, d, RING);
	UT_ASSERT(n == 5, "%u packets", n);
	for (i = 0; i < n; i++) {
		UT_ASSERT(d[i].len == want[i], "packet %u: len %u, want %u", i, d[i].len, want[i]);
		UT_ASSERT(!!(d[i].addr & UCM_DESC_CHAIN) == (want[i] > PER), "packet %u: chain bit", i);
	}
	if (audit(f, 5, 3))
		return 1;
	for (i = 0; i < n; i++)
		give_back(f, &d[i]);
	if (audit(f, 0, 0))
		return 1;
	return fake_free(f);
}

/* Zero-copy with multi-buffer: a packet sent takes what the driver takes
 * (xdp-zc-max-segs), and an MTU whose packets take more frames is refused
 * where anything is sent. */
static int test_zc_frames(void)
{
	struct dp_cfg c = { .ifname = "eth0", .frame_size = 4096, .if_mtu = 9000, .sg = true,
			    .flags = UCM_DP_F_TWO_WAY };

	UT_ASSERT(ucm_xsk_tx_frames_of(false, true, 4) == 1, "one frame without multi-buffer");
	UT_ASSERT(ucm_xsk_tx_frames_of(true, false, 4) == UCM_XSK_MAX_FRAGS, "copy mode: the kernel's most");
	UT_ASSERT(ucm_xsk_tx_frames_of(true, true, 5) == 5, "zero-copy: the driver's");
	UT_ASSERT(ucm_xsk_tx_frames_of(true, true, 0) == UCM_XSK_MAX_FRAGS, "not said: the kernel's most");
	UT_ASSERT(ucm_xsk_tx_frames_of(true, true, 64) == UCM_XSK_MAX_FRAGS, "never more than the kernel's");
	/* 9000 bytes in 4096-byte frames: three. */
	UT_ASSERT(ucm_dp_check_tx_frames(&c, 3) == 0, "three frames for three");
	UT_ASSERT(ucm_dp_check_tx_frames(&c, 2) == -EINVAL, "three frames for two");
	c.flags = 0;	/* one-way: nothing sent */
	UT_ASSERT(ucm_dp_check_tx_frames(&c, 2) == 0, "one-way refused");
	c.flags = UCM_DP_F_VERDICT_TX;
	UT_ASSERT(ucm_dp_check_tx_frames(&c, 2) == -EINVAL, "the verdict's sends");
	c.sg = false;
	c.if_mtu = 1500;
	UT_ASSERT(ucm_dp_check_tx_frames(&c, 1) == 0, "one frame for one");
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_whole),
	UT_CASE(test_across_calls),
	UT_CASE(test_cut),
	UT_CASE(test_cut_full_call),
	UT_CASE(test_too_long),
	UT_CASE(test_max_frags),
	UT_CASE(test_too_many_bytes),
	UT_CASE(test_foreign_middle),
	UT_CASE(test_bad_length),
	UT_CASE(test_no_room),
	UT_CASE(test_no_sg),
	UT_CASE(test_stop_mid_packet),
	UT_CASE(test_mixed),
	UT_CASE(test_zc_frames),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
