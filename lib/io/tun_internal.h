/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tun sink's state, shared by its files: tun_dev.c (the device's
 * set-up), tun_worker.c (the workers' open and close), tun.c (the write
 * path, the sink ops), tun_read.c and tun_read_tx.c (the read path: tun ->
 * XSK TX). Calls go one way: tun.c to tun_worker.c and tun_read.c,
 * tun_worker.c to tun_read.c, tun_read.c to tun_read_tx.c; tun_dev.c
 * calls none of them.
 */
#ifndef UCM_TUN_INTERNAL_H
#define UCM_TUN_INTERNAL_H

#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <sys/uio.h>
#include <liburing.h>

#include "core/internal.h"
#include "io/neigh.h"
#include "proto/proto.h"
#include "proto/split.h"
#include "ucpumap/tun.h"
#include "ucpumap/txq.h"
#include "ucpumap/gso.h"

#define VNET_LEN	sizeof(struct virtio_net_hdr)
_Static_assert(VNET_LEN <= UCM_FRAME_SINK_ROOM, "the sink's room holds the vnet header");
_Static_assert(UCM_TUN_BATCH_MAX <= UCM_GSO_MAX_BATCH, "one plan covers a batch");
_Static_assert(UCM_GSO_FRAGS_MAX == UCM_FRAME_CHAIN_MAX, "a chain's parts fit the plan's");
/* A packet's iovecs at most: its first frame and its later ones. */
#define UCM_TUN_CHAIN_IOV	(1 + UCM_FRAME_CHAIN_MAX)

/* One write of a batch: a packet, or a group of packets as one
 * super-packet. */
struct tun_slot {
	uint32_t len;		/* bytes the write must take */
	uint32_t bytes;		/* the packets' own bytes (stats) */
	uint16_t nseg;		/* packets in it */
	uint16_t niov;		/* its iovecs, from iov: nseg, or a chain's */
	uint32_t iov;
	/* a super-packet's: its group, and what ucm_gso__build() overwrote */
	uint16_t g;
	struct ucm_gso_undo undo;
	bool done;		/* its completion was reaped */
	bool partial;		/* one packet, its checksum left to the kernel */
	bool short_last;	/* a super-packet's last payload is shorter */
};

/*
 * Per-worker write state. Concurrency contract: made in open(), used by
 * xmit() and torn down in close(), all on the worker thread that owns it;
 * no other thread touches it.
 */
struct tun_wstate {
	struct io_uring ring;
	uint64_t seq;		/* the batch's number, in its writes' user_data */
	bool ring_ok;		/* false: NO_BATCH, or the ring broke */
	uint64_t ring_retry_at;	/* a broken ring's next rebuild; 0: none */
	bool ring_warned;	/* a failed rebuild said, once */
	int fd;			/* the queue's fd */
	int sqe_fd;		/* what SQEs name: 0 (registered) or fd */
	uint8_t sqe_flags;	/* IOSQE_FIXED_FILE when registered */
	bool coalesce;		/* UCM_TUN_F_COALESCE */
	uint32_t gso_flags;	/* UCM_GSO_F_*: protocols the kernel refused */
	/* Per protocol (0 TCP, 1 UDP) whose super-packet the kernel refused:
	 * when to try one again, the wait before that (doubling), and
	 * whether this worker has said so (tun.c's super_refused()). */
	uint64_t gso_retry_at[2], gso_backoff[2];
	bool gso_warned[2];
	/* One batch's writes: at most one slot per packet, and one iovec
	 * per frame (a packet of several frames takes one per frame). */
	struct tun_slot slot[UCM_TUN_BATCH_MAX];
	struct iovec iov[UCM_TUN_BATCH_MAX * UCM_TUN_CHAIN_IOV];
	const uint64_t *addrs;	/* the batch's frame handles, for the chains */
	/* Coalescing: the plan and what it reads. */
	struct ucm_gso_plan plan;
	const struct ucm_pkt *pkts[UCM_TUN_BATCH_MAX];
	const uint8_t *data[UCM_TUN_BATCH_MAX];
	/* Packets of several frames: where their bytes lie (NULL for the
	 * rest), filled for the batches that have any. */
	const struct ucm_gso_frags *fragp[UCM_TUN_BATCH_MAX];
	struct ucm_gso_frags frags[UCM_TUN_BATCH_MAX];
	struct tun_back *back;	/* the read path's state, or NULL */
};

/*
 * A write's user_data: its batch's number over its slot. A completion of
 * an earlier batch (the answer to a cancel, a write given up on) is stale:
 * tun.c's reap() drops it, never takes it for the write now in its slot.
 * TUN_UD_CANCEL marks a cancel's; the number wraps after 2^56 batches.
 */
#define TUN_UD_SLOT_BITS	7
#define TUN_UD_SLOT_MASK	((1ull << TUN_UD_SLOT_BITS) - 1)
#define TUN_UD_CANCEL		(1ull << 63)
_Static_assert(UCM_TUN_BATCH_MAX <= TUN_UD_SLOT_MASK + 1, "a slot fits user_data's low bits");

static inline uint64_t tun_write_ud(const struct tun_wstate *st, uint32_t slot)
{
	return (st->seq << TUN_UD_SLOT_BITS | slot) & ~TUN_UD_CANCEL;
}

/*
 * One per possible worker index. Concurrency contract:
 *  - open: taken with an atomic exchange in open() (O1, acq_rel),
 *    released in close() (O2, release), read by destroy() and
 *    set_back() (O3, acquire);
 *    keeps two cpumaps off one worker slot. O2 pairs with O1 and O3.
 *  - st: written and read by the worker thread only (open/xmit/close).
 *  - stats: written by that worker only (STAT_ADD), read by anyone
 *    (READ_ONCE), at any time; relaxed, no pair: nothing is published
 *    through them.
 */
struct tun_worker {
	struct ucm_tun_stats stats;
	struct ucm_tun_back_stats back_stats;	/* the read path's, same rules */
	struct tun_wstate *st;
	uint32_t open;
	/* The read path's configuration: set by ucm_tun__set_back()
	 * before the worker opens, read-only afterwards. */
	struct ucm_txq *txq;
	struct ucm_tun_l2 l2;
} __cacheline_aligned;

/*
 * Concurrency contract of struct ucm_tun: every field but wk[], offload
 * and back_src is written by create() and read-only afterwards (workers
 * read flags, nqueues and fds); offload is written by the first
 * set_back(), on the control thread before any worker opens, and
 * read-only afterwards (the worker threads start after it); wk[] follows
 * its own contract above. back_src: stored by set_back_src() on any
 * thread (S1, relaxed), loaded by each worker's read path once a turn
 * (S2, relaxed); S1 pairs with S2, and only its own 64 bits pass, whole.
 * destroy() runs once every worker has closed.
 */
struct ucm_tun {
	char name[IFNAMSIZ];
	int ifindex;
	uint32_t flags;
	uint32_t nqueues;
	int fds[UCM_TUN_MAX_QUEUES];
	struct tun_worker wk[UCM_TUN_MAX_WORKERS];
	ucm_thread_fn resolver_init;	/* ucm_tun_opts' */
	void *resolver_init_ctx;
	/* UCM_GSO_F_NO_TCP, _NO_UDP, _UDP_EQUAL: the super-packets the
	 * kernel refused when create() asked (tun_dev.c's gso_probe()). */
	uint32_t gso_refused;
	/* The read path's offloads: TUN_F_* the kernel took, 0 for none;
	 * offload_set once set_back() has asked. */
	uint32_t offload;
	bool offload_set;
	/* RWF_NOWAIT where the device takes it (Linux 6.4), else 0: the
	 * io_uring writes and reads' rw_flags (nowait_probe()) */
	int rw_nowait;
	/* The way back's source MAC in the low 48 bits over TUN_SRC_SET, or
	 * 0: each worker's l2.src. */
	uint64_t back_src;
};
#define TUN_SRC_SET	(1ull << 63)

/* Linux 6.2's USO bits; Debian 12's uapi headers (6.1) lack them. */
#ifndef TUN_F_USO4
#define TUN_F_USO4	0x20
#define TUN_F_USO6	0x40
#endif

#ifdef UCM_DEBUG
/* Tests: bit 0 makes every super-packet's GSO type invalid, so the
 * kernel refuses it as an older kernel would (EINVAL); bit 1 does so to
 * create()'s UDP probes (a kernel without UDP GSO in a tun); bit 2 to the
 * IPv6 ones alone (a kernel that refuses one shape and takes another). */
extern int ucm_tun_test_refuse_super;
/*
 * Tests: non-zero makes the next wait for a batch's completions (the write
 * path's or the read path's) fail at once with EBADR, as when the kernel
 * has dropped a completion. So that a request can really be in the kernel
 * then, the write path submits that batch without waiting and the read
 * path leaves RWF_NOWAIT out: on a blocking socket a write into a full one
 * or a read of an empty one stays there, as a tun's never does.
 */
extern int ucm_tun_test_wait_fail;
/*
 * Tests: non-zero makes the next batch's submit fail as io_uring_enter()
 * can (ENOMEM, nothing taken), and the ring's rebuild after it fail too.
 */
extern int ucm_tun_test_ring_fail;
/* Tests: non-zero makes the way back's next sleep (ucm_tun_back_wait())
 * fail at once with EBADR, as a ring the kernel broke would, every time. */
extern int ucm_tun_test_sleep_fail;
#endif

/* A switch above, looked at (@take false) or used up (@take true);
 * always false in release builds. Relaxed, no pair: a test sets it while
 * the worker is not in a batch. */
#ifdef UCM_DEBUG
static inline bool tun_test_switch(int *sw, bool take)
{
	if (take)
		return __atomic_exchange_n(sw, 0, __ATOMIC_RELAXED);
	return __atomic_load_n(sw, __ATOMIC_RELAXED);
}
#define tun_test_wait_fail(take)	tun_test_switch(&ucm_tun_test_wait_fail, (take))
#define tun_test_ring_fail(take)	tun_test_switch(&ucm_tun_test_ring_fail, (take))
#define tun_test_sleep_fail(take)	tun_test_switch(&ucm_tun_test_sleep_fail, (take))
#else
#define tun_test_wait_fail(take)	((void)(take), false)
#define tun_test_ring_fail(take)	((void)(take), false)
#define tun_test_sleep_fail(take)	((void)(take), false)
#endif

/* tun_dev.c: one batch's counts @a into a worker's @s (tun_xmit()). */
void ucm_tun_stats_publish(struct ucm_tun_stats *s, const struct ucm_tun_stats *a);

/* ---- the read path (tun_read.c, tun_read_tx.c) ------------------------ */

/* A turn's descriptors for the channel, sent whenever this many wait. */
#define BACK_OUT			64
/* Where a later frame of a packet of several holds its part: past the TX
 * metadata's room, which the kernel wants in front of every descriptor
 * where the UMEM has it. */
#define BACK_FRAG_OFF		UCM_TXQ_META_LEN
/* A turn's free frames: a take for segments (at most a batch, and only
 * when none are left) and the frames of the batch's reads. */
#define BACK_FREE		(2 * UCM_TUN_BACK_BATCH)

/*
 * Packets whose next hop the kernel is resolving wait for it, as in its
 * neighbour queue (unres_qlen), instead of being dropped: BACK_UNRES a
 * worker, BACK_UNRES_DST of one destination (so that one that never
 * resolves cannot take every place), BACK_UNRES_FRAMES frames in all (a
 * jumbo packet takes several), each BACK_UNRES_NS at most: the resolver
 * watches the kernel resolve for 1 s (neigh.c's HOLD_NS), its answer
 * comes at the worker's next turn. Then a counted drop (drop_no_neigh),
 * as the kernel's when its resolution fails. While any wait the worker
 * looks at the answers every BACK_UNRES_WAIT_NS, the channel full or not.
 */
#define BACK_UNRES		32
#define BACK_UNRES_DST		8
#define BACK_UNRES_FRAMES	64
#define BACK_UNRES_NS		1200000000ull
#define BACK_UNRES_WAIT_NS	1000000

/* A waiting packet: its frames the worker's (the first UCM_LOC_APP, any
 * later ones UCM_LOC_CHAIN), its headers written but for the next hop's
 * address. */
struct back_unres {
	uint64_t desc;		/* ready to send */
	uint64_t at;		/* its Ethernet header's UMEM offset */
	uint64_t since;		/* the batch time it came */
	uint8_t v6;
	uint8_t nframes;
};

/*
 * One worker's read path. Concurrency contract: its worker's only, made in
 * its open(), used by its poll() and wait(), torn down in its close() (its
 * next-hop resolver has a thread of its own, behind ucm_neigh's rings:
 * neigh.c); the stats it counts are the worker's to write (STAT_ADD),
 * anyone's to read (tun_worker).
 */
struct tun_back {
	struct io_uring ring;
	struct ucm_txq *txq;
	struct ucm_umem *umem;
	void *area;
	uint32_t room;		/* bytes a read may take: vnet header + packet */
	/* A packet longer than its frame holds past the headroom goes out
	 * in several (ucm_txq__max_frames() > 1): frag_room bytes in each
	 * later frame, max_len of the read packet's bytes at most (the
	 * frame's room alone without). */
	uint32_t frag_room, max_len;
	int fd;			/* the tun queue */
	int wake_fd;		/* the worker's wake fd, once wait() named it:
				 * polled, never read (UCM_SINK_F_POLL_WAKE) */
	bool tap;
	bool readable;		/* packets may be waiting: read before sleeping */
	bool poll_armed, wake_armed, room_armed;
	bool blocked;		/* the channel was full at the last turn */
	bool oneshot;		/* multishot poll refused: one-shot polls */
	bool poll_dead;		/* no poll at all: read every turn */
	bool dead;		/* the ring failed: the read path is off */
	bool tx_csum;		/* the way out finishes L4 checksums (ucm_txq__tx_csum()) */
	int rw_nowait;		/* struct ucm_tun's */
	bool offload;		/* the tun's offloads are on (ucm_tun.offload) */
	struct ucm_tun_l2 l2;
	uint64_t src_seen;	/* struct ucm_tun's back_src, as l2.src took it */
	struct ucm_neigh *neigh;	/* l2.resolve_ifindex: the next hops */
	/* The worker's neigh_requests, _evicted, _refused before this
	 * resolver: the counts go on from there. */
	uint64_t neigh_base[3];
	uint64_t now;		/* this batch's time, for the next-hop cache */
	uint32_t nstash;	/* lent frames in hand */
	/* Offloads (the tun's, ucm_tun.offload) or packets of several
	 * frames: spill_area is mapped, and a read takes a frame's room and
	 * then its slot's spill, up to cap bytes in all; a super-packet is
	 * cut into segments in frames of their own, a long packet's bytes
	 * past its frame copied into its later frames. */
	uint32_t cap;		/* bytes a read may take */
	uint8_t *spill_area;
	uint8_t *spill[UCM_TUN_BACK_BATCH];	/* each slot's: moves with it */
	struct iovec iov[UCM_TUN_BACK_BATCH][2];
	/* A turn that ran out of frames or room in the middle leaves the
	 * rest of its reads for the next: the stash's first pend slots hold
	 * them (in order), slot 0's super-packet at segment pend_seg, with
	 * its plan and Ethernet header kept. No read is made while any
	 * wait: a flow's packets leave in order. */
	uint32_t pend;
	uint32_t pend_seg;
	bool in_super;		/* slot 0's super-packet is planned: resume it */
	bool short_frames;	/* the last turn stopped for want of frames */
	struct ucm_split plan;
	uint8_t eth[ETH_HLEN];
	/* Slots whose read is in the kernel: set when it is submitted,
	 * cleared by its completion. Non-zero only after a batch that
	 * failed (dead), whose stash keeps its slot order. */
	uint64_t inflight;
	uint32_t late_packets;	/* of those, answered with a packet at close */
	uint64_t stash[UCM_TUN_BACK_BATCH];
	int32_t res[UCM_TUN_BACK_BATCH];
	uint32_t nunres, unres_frames;
	uint64_t unres_bits;	/* a filter of their destinations */
	struct back_unres unres[BACK_UNRES];
};

/*
 * One turn's hand-over: descriptors for the channel, in order, sent in
 * bulks of BACK_OUT; the channel's room left; the frames free for
 * segments (the stash's past the reads, and the frames of reads done
 * with), topped up from the channel when they run out.
 */
struct back_turn {
	struct ucm_tun_back_stats a;
	uint32_t room;
	uint32_t nout, nfree;
	uint64_t out[BACK_OUT];
	uint64_t free[BACK_FREE];
};

/* tun_worker.c: a worker's state, on its thread: the sink ops' open (the
 * back ops' with its read path) and close; its write ring, made again by
 * the write path after a failure (tun.c). */
int ucm_tun_open(void *ctx, uint32_t w);
int ucm_tun_open_back(void *ctx, uint32_t w);
void ucm_tun_close(void *ctx, uint32_t w);
int ucm_tun_ring_init(struct tun_wstate *st);
void ucm_tun_ring_exit(struct tun_wstate *st);

/* tun_read.c: the read path of one worker, on its thread. */
int ucm_tun_back_open(struct ucm_tun *tun, uint32_t w, struct tun_wstate *st);
void ucm_tun_back_close(struct ucm_tun *tun, uint32_t w, struct tun_wstate *st);
uint32_t ucm_tun_back_poll(void *ctx, uint32_t w);
int ucm_tun_back_wait(void *ctx, uint32_t w, int wake_fd);
/* tun_read_tx.c: a turn's reads, from the stash's first slot, out to the
 * channel until one must wait for room or frames; the stash then holds,
 * in order, the reads still waiting, then the free frames it has room
 * for (the rest go home). */
void ucm_tun_back_handle_reads(struct tun_back *r, struct back_turn *t);
/* tun_read_tx.c: while the channel is full, the waiting packets whose
 * next hop failed or that waited BACK_UNRES_NS home, counted into @t. */
void ucm_tun_back_unres_age(struct tun_back *r, struct back_turn *t);
/* tun_read_tx.c: the packets waiting for a next hop home, counted into
 * @dropped, when reading stops (its close, its io_uring failed). */
void ucm_tun_back_unres_flush(struct tun_back *r, uint64_t *dropped);
/* tun_read_tx.c: struct ucm_tun's back_src (@src), if it changed, into
 * the headers to come and those written already. */
void ucm_tun_back_src_sync(struct tun_back *r, const uint64_t *src);

/* tun_chain.c: a packet of several frames, @len bytes to write from
 * iov[0].iov_base (in its first frame) into @iov (room for
 * UCM_TUN_CHAIN_IOV): the first frame's part, then its later frames',
 * the last cut to @len. Return: the iovecs. And the batch's packets of
 * several frames, where they lie, into st->fragp[] and st->frags[]. */
uint32_t ucm_tun_chain_iov(struct ucm_frame_hdr *hdr, uint64_t base, struct iovec *iov,
			   uint32_t len);
void ucm_tun_frags_fill(struct tun_wstate *st, struct ucm_frame_hdr **frames, uint32_t n);

#endif /* UCM_TUN_INTERNAL_H */
