/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_xsk: AF_XDP sockets on one interface's queues, over one UMEM.
 *
 * The UMEM is a ucm_umem carved per queue: queue i's frames are pool i's,
 * so a frame's owner follows from its address. Each queue has its own
 * socket, fill and completion rings (XDP_SHARED_UMEM), and one RX thread,
 * which owns the queue's pool: it refills the fill ring from the pool
 * before it reads more, validates every RX descriptor, and hands packets
 * on to the cpumap.
 *
 * Threads: open/close and the stats on a control thread; everything on a
 * ucm_xsk_queue (refill, rx, poll) on that queue's RX thread only.
 * Errors: 0 or a negative errno; pointers NULL with errno set; every
 * failure of open says why in the log, naming the fix.
 */
#ifndef UCPUMAP_XSK_H
#define UCPUMAP_XSK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ucpumap/api.h"
#include "ucpumap/cpumap.h"
#include "ucpumap/pool.h"
#include "ucpumap/steer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UCM_XSK_MAX_QUEUES	64
/* One RX batch: the NAPI budget. */
#define UCM_XSK_RX_BATCH	64
/* Each queue's TX ring: this, or the RX ring's size if smaller; at most
 * half the completion ring (twice the RX ring), so completions of a full
 * TX ring always have room. */
#define UCM_XSK_TX_RING		1024
/* Each queue's RX ring by default (ucm_dp gives UCM_DP_RX_RING_DEFAULT);
 * the fill ring is twice it by default. */
#define UCM_XSK_RX_RING_DEFAULT	2048
/* Each queue's frames, by default: the least power of two above what the
 * default rings hold at once (4096 fill + 2048 RX). */
#define UCM_XSK_FRAMES_DEFAULT	8192

/* The sockets' place of a frame (pool.h's enum ucm_frame_loc): posted to a
 * fill or TX ring, the kernel's until it comes back on the RX or
 * completion ring. */
#define UCM_LOC_KERNEL		UCM_LOC_CPUMAP_END

enum ucm_xsk_mode {
	UCM_XSK_AUTO = 0,	/* zero-copy if the driver can, else copy */
	UCM_XSK_COPY,
	UCM_XSK_ZEROCOPY,
};

enum ucm_xsk_flags {
	UCM_XSK_F_NO_NEED_WAKEUP = 1 << 0,	/* need_wakeup is on by default */
	/* SO_PREFER_BUSY_POLL, SO_BUSY_POLL and its budget, and the idle
	 * look (ucm_xsk_queue__spin()) drives the device's NAPI poll. */
	UCM_XSK_F_BUSY_POLL = 1 << 1,
	/*
	 * Register the UMEM with TX metadata (UCM_TXQ_META_LEN bytes in front
	 * of every packet sent, which must then start that far into its
	 * frame), so that a descriptor with UCM_TXQ_DESC_CSUM has its
	 * checksum finished by the kernel (ucm_xsk__tx_csum() says whether it
	 * is: on a kernel that takes TX metadata, copy mode on veth, or
	 * zero-copy where the driver's xsk-features say tx-checksum; the
	 * metadata is registered only where one of them can be). Logged once.
	 */
	UCM_XSK_F_TX_CSUM = 1 << 2,
	/*
	 * Multi-buffer (XDP_USE_SG, Linux 6.6): a packet longer than a frame
	 * comes in several descriptors, and ucm_xsk_queue__rx() hands it on
	 * as one, its address with UCM_DESC_CHAIN (its later frames listed in
	 * its first frame's headroom, UCM_LOC_CHAIN), its length the whole
	 * packet's. The XDP program must be frags-aware (UCM_XDP_F_FRAGS).
	 * On an older kernel the open fails with -EINVAL.
	 */
	UCM_XSK_F_SG = 1 << 3,
};

/* Descriptors the kernel gives one packet: MAX_SKB_FRAGS (17) and the
 * linear part; a packet's later frames are UCM_FRAME_CHAIN_MAX. */
#define UCM_XSK_MAX_FRAGS	(UCM_FRAME_CHAIN_MAX + 1)

struct ucm_xsk_opts {
	size_t sz;
	const char *ifname;
	const uint32_t *queues;		/* default: queue 0 */
	uint32_t nqueues;
	uint32_t frame_size;		/* 2048 or 4096; default 4096 */
	/*
	 * Frames of each queue's pool, a power of two; at least fill_size +
	 * rx_size, since both rings can be full at once and the frames out
	 * in the cpumap come on top (open refuses less, saying how many).
	 * Default UCM_XSK_FRAMES_DEFAULT, which does not grow with rx_size
	 * or fill_size: with larger rings, give it.
	 */
	uint32_t frames_per_queue;
	/* A power of two; default UCM_XSK_RX_RING_DEFAULT. */
	uint32_t rx_size;
	uint32_t fill_size;		/* default 2 x rx_size */
	uint32_t mode;			/* enum ucm_xsk_mode */
	uint32_t flags;			/* enum ucm_xsk_flags */
	/* enum ucm_umem_flags but UCM_UMEM_F_NUMA_NODE: the frames' node is
	 * the device's (sysfs), where it has one, said once. */
	uint32_t umem_flags;
	/* With UCM_XSK_F_SG: the frames one packet may take, 1 to
	 * UCM_XSK_MAX_FRAGS; a longer one is dropped (@rx_chain_long). 0:
	 * UCM_XSK_MAX_FRAGS, the most the kernel sends. */
	uint32_t max_frags;
	size_t :0;
};
#define ucm_xsk_opts__last_field max_frags

/**
 * struct ucm_xsk_stats - one queue
 * @rx: descriptors taken from the RX ring
 * @rx_bad_desc: of them, outside the UMEM, another queue's frame, empty,
 *               or longer than their frame; their frame, when it is this
 *               queue's, went straight back to the pool
 * @fill: frames posted to the fill ring
 * @fill_short: refills that found the pool with fewer frames than room
 * @wakeups: need_wakeup kicks
 * @rx_steer_err: packets steered to a worker the cpumap does not have
 *                (configuration mismatch); recycled
 * @tx: descriptors put on the TX ring, one per frame: @tx less
 *      @tx_chain_more is packets
 * @tx_ring_full: packets the TX ring had no room for (the caller keeps
 *                their frames); one of several frames counts once
 * @tx_kicks: sendto() kicks (need_wakeup, or every post without it or
 *            with UCM_XSK_F_BUSY_POLL)
 * @tx_kick_err: kicks that failed otherwise than busy (link down, ...)
 * @tx_completed: frames taken back from the completion ring
 * @tx_comp_bulks: completion bulks (tx_completed / tx_comp_bulks: the
 *                 bulk average)
 * @tx_comp_direct: completed frames that went straight into the pool's
 *                  cache (direct bulk recycling); the rest went through
 *                  the recycle ring
 * @kernel_*: the socket's XDP_STATISTICS
 * @rx_hist: per RX batch that ucm_xsk_queue__poll() flushed, the time from
 *           its first packet's arrival in the XDP program (its metadata's
 *           stamp, UCM_STEER_F_STAMP) to the flush towards the workers
 *           (an inline worker's: to the start of its work):
 *           the RX ring, the RX thread's wake-up, the steering; log2
 *           buckets of us (api.h). Batches without a stamp are not counted.
 * @rx_batches: RX batches ucm_xsk_queue__poll() flushed (with stamps on,
 *              the sum of @rx_hist)
 * @tx_bad_desc: packets ucm_xsk_queue__tx() refused, every frame of each
 *               home: with TX metadata (UCM_XSK_F_TX_CSUM), a packet less
 *               than UCM_TXQ_META_LEN into its frame; a checksum request
 *               (UCM_TXQ_DESC_CSUM) where ucm_xsk__tx_csum() is false,
 *               not in the metadata, or with its field past the first
 *               frame's part; a packet of several frames refused for a
 *               reason below
 * @busy_polls: with UCM_XSK_F_BUSY_POLL, the device's NAPI polls that
 *              ucm_xsk_queue__spin() asked for (recvfrom(MSG_DONTWAIT))
 * @rx_chains: packets of several descriptors handed on (UCM_XSK_F_SG)
 * @rx_chain_long: packets of several dropped, every frame home: longer
 *                 than ucm_xsk_opts.max_frags descriptors or 65535 bytes
 * @rx_chain_cut: ... whose last descriptor never came (the RX ring ran dry
 *                mid-packet; the kernel publishes whole packets)
 * @rx_chain_bad: ... with a bad descriptor among theirs (counted here
 *                only), or a first frame with no room for the list of
 *                the others
 * @rx_chain_nosg: ... on a socket bound without UCM_XSK_F_SG (the kernel
 *                 should never send one there)
 * @rx_chain_more: of @rx, the descriptors after the first of each packet
 *                 of several, handed on or dropped: @rx less this is
 *                 packets (one still being taken aside)
 * @sleeps: the sleeps of ucm_xsk_queue__sleep() (its poll(2)s)
 * @wake_rx, @wake_tx, @wake_fd, @wake_timeout: what ended them: the RX
 *              ring had something; a TX channel's wake-up (a worker's send
 *              or its ask for frames); the wake fd
 *              (ucm_xsk_queue__set_wake_fd(): ucm_dp's stop); nothing,
 *              the timeout. A sleep that several ended counts in each.
 * @tx_chains: packets of several frames (UCM_DESC_CHAIN) put on the TX
 *             ring, each as a descriptor per frame (XDP_PKT_CONTD)
 * @tx_chain_more: of @tx, the descriptors after the first of each of them
 * Of @tx_bad_desc, packets of several frames refused, every frame home:
 * @tx_chain_long: more frames listed than the socket takes (UCM_CHAIN_MAX
 *                 in copy mode, the driver's limit in zero-copy)
 * @tx_chain_bad: none listed, a frame's part outside its frame (or before
 *                the TX metadata's room), lengths that do not add up to
 *                the packet's, or a checksum asked of a socket that
 *                cannot offload it
 * @tx_chain_nosg: on a socket bound without UCM_XSK_F_SG
 * @rx_packets: packets taken from the RX ring: a descriptor of one frame
 *              each, a packet of several once, at its end (handed on or
 *              dropped). Final, it is @rx less @rx_chain_more; unlike that
 *              difference of two live counters, a reading never goes back.
 * @tx_packets: packets posted to the TX ring, one of several frames once:
 *              @tx less @tx_chain_more, in one counter likewise.
 */
struct ucm_xsk_stats {
	uint64_t rx, rx_bad_desc, fill, fill_short, wakeups, rx_steer_err;
	uint64_t tx, tx_ring_full, tx_kicks, tx_kick_err;
	uint64_t tx_completed, tx_comp_bulks, tx_comp_direct;
	uint64_t kernel_rx_dropped, kernel_rx_invalid_descs;
	uint64_t kernel_tx_invalid_descs, kernel_rx_ring_full;
	uint64_t kernel_rx_fill_ring_empty_descs, kernel_tx_ring_empty_descs;
	uint64_t rx_hist[UCM_LAT_BUCKETS];
	uint64_t rx_lat_ns;	/* the sum of rx_hist's times, in ns */
	uint64_t rx_batches;
	uint64_t tx_bad_desc;
	uint64_t busy_polls;
	uint64_t rx_chains, rx_chain_long, rx_chain_cut, rx_chain_bad, rx_chain_nosg;
	uint64_t rx_chain_more;
	uint64_t sleeps, wake_rx, wake_tx, wake_fd, wake_timeout;
	uint64_t tx_chains, tx_chain_more, tx_chain_long, tx_chain_bad, tx_chain_nosg;
	uint64_t rx_packets;
	uint64_t tx_packets;
};

/* A validated RX descriptor. */
struct ucm_xsk_desc {
	uint64_t addr;		/* packet address: frame + offset */
	uint32_t len;
	int32_t worker;		/* from the XDP metadata, or -1 */
};

struct ucm_xsk;
struct ucm_xsk_queue;

/**
 * ucm_xsk__open() - UMEM and one socket per queue, bound, fill rings empty
 *
 * Loads no XDP program (see ucm_xdp). Return: the object, or NULL with
 * errno: ENODEV (no such interface), EINVAL (a bad option, a queue the
 * interface lacks), EOPNOTSUPP (zero-copy asked and not available), EPERM.
 */
UCM_API struct ucm_xsk *ucm_xsk__open(const struct ucm_xsk_opts *opts);

/**
 * ucm_xsk__destroy() - delete the sockets, bring every frame home, free
 * @timeout_ms: how long to wait for frames still out (as ucm_umem__destroy)
 *
 * Call once the RX threads have stopped (each clearing its pool's
 * ownership as its last act) and every frame they handed on has come back
 * (cpumap destroyed). Frames still in the fill and RX rings when
 * the sockets go are reclaimed: the kernel no longer owns them. Their
 * number must match what the queues posted and did not receive; if it does
 * not, frames are missing elsewhere and destroy reports it.
 *
 * Unlike most destructors it can fail, as ucm_umem__destroy() (which it
 * ends with) can: memory is never freed under a live frame.
 *
 * Return: 0 once everything is freed; -EBUSY when an RX thread still owns
 * its pool (nothing touched) or when frames are still out after
 * @timeout_ms (more off the pools than the kernel held: waited for, then
 * said); -EUCLEAN when fewer are off the pools than the kernel held (a
 * frame counted home twice; the log says how many).
 * On an error nothing is freed (the sockets may be gone: each step is done
 * once) and @x stays valid: call ucm_xsk__destroy() again, for example
 * once the frames are back.
 */
UCM_API int ucm_xsk__destroy(struct ucm_xsk *x, unsigned int timeout_ms);

/* The handles these two return let the caller change the object's frames
 * (allocate, return, own a pool), so they take the object non-const. */
UCM_API struct ucm_umem *ucm_xsk__umem(struct ucm_xsk *x);
UCM_API uint32_t ucm_xsk__nqueues(const struct ucm_xsk *x);
UCM_API int ucm_xsk__ifindex(const struct ucm_xsk *x);
/* The mode the kernel really gave: true for zero-copy. */
UCM_API bool ucm_xsk__zerocopy(const struct ucm_xsk *x);
/* UCM_XSK_F_TX_CSUM was asked for and is on: descriptors with
 * UCM_TXQ_DESC_CSUM have their checksums finished by the kernel. */
UCM_API bool ucm_xsk__tx_csum(const struct ucm_xsk *x);
UCM_API struct ucm_xsk_queue *ucm_xsk__queue(struct ucm_xsk *x, uint32_t i);

UCM_API int ucm_xsk_queue__fd(const struct ucm_xsk_queue *q);
UCM_API uint32_t ucm_xsk_queue__id(const struct ucm_xsk_queue *q);
UCM_API struct ucm_pool *ucm_xsk_queue__pool(struct ucm_xsk_queue *q);
/**
 * ucm_xsk_queue__stats() - the queue's counters, into the caller's @st
 * @sz: sizeof(*@st) as the caller was built: an older, smaller struct gets
 *      its part; bytes past ours are zeroed.
 *
 * Return: 0; -EINVAL (@st NULL or @sz 0); -EBADF or -errno when the
 * kernel's counters cannot be read (the queue's own are filled all the
 * same, the kernel's read 0).
 */
UCM_API int ucm_xsk_queue__stats(const struct ucm_xsk_queue *q,
				 struct ucm_xsk_stats *st, size_t sz);

/**
 * ucm_xsk_queue__refill() - top the fill ring up from the queue's pool
 *
 * RX thread (pool owner) only. Return: frames posted, or -errno.
 */
UCM_API int ucm_xsk_queue__refill(struct ucm_xsk_queue *q);

/**
 * ucm_xsk_queue__rx() - take up to @max RX descriptors
 *
 * RX thread only. Each descriptor is validated (inside the UMEM, within
 * its frame); bad ones are counted and their frames recycled. The worker
 * comes from the XDP metadata when the program wrote it.
 * Return: the number of good descriptors in @d.
 */
UCM_API uint32_t ucm_xsk_queue__rx(struct ucm_xsk_queue *q,
				   struct ucm_xsk_desc *d, uint32_t max);

/**
 * ucm_xsk_queue__tx() - put packets on the queue's TX ring
 * @desc: packet descriptors (ucm_desc_make()) of this UMEM's frames; with
 *        UCM_DESC_CHAIN, a packet of several frames (ucpumap/txq.h), on a
 *        socket bound with UCM_XSK_F_SG: one TX descriptor per frame,
 *        posted all together or, when the ring has no room for all,
 *        not at all
 *
 * Kicks the kernel when need_wakeup asks (copy mode sends in the kick).
 * Frames of the descriptors taken belong to the kernel until they come
 * back through the completion ring (ucm_xsk_queue__complete()). RX thread
 * only: it owns the queue's TX and completion rings, as a driver's NAPI
 * owns its queue's. A descriptor the kernel would lose (tx_bad_desc) is
 * not posted: its frame goes home, counted. Return: descriptors taken,
 * from the first (posted, or refused as bad); the caller keeps the rest
 * (ring full: retry or drop).
 */
UCM_API uint32_t ucm_xsk_queue__tx(struct ucm_xsk_queue *q,
				   const uint64_t *desc, uint32_t n);
/**
 * ucm_xsk_queue__complete() - bring sent frames home, in bulk
 *
 * Takes everything on the completion ring (an address per descriptor: a
 * packet of several frames comes back frame by frame) and returns the
 * frames with one bulk return per 64 (our xdp_return_frame_bulk()): frames of the calling
 * thread's own pool go straight into its cache (unless the UMEM has
 * UCM_UMEM_F_NO_DIRECT_BULK), others through their pools' recycle rings.
 * Re-kicks when descriptors wait on the TX ring. RX thread only.
 * Return: frames brought home.
 */
UCM_API uint32_t ucm_xsk_queue__complete(struct ucm_xsk_queue *q);
/* Frames on the TX path, posted and not yet completed. */
UCM_API uint32_t ucm_xsk_queue__tx_pending(const struct ucm_xsk_queue *q);

struct ucm_txq;
/* TX channels one RX thread serves at most (one per worker). */
#define UCM_XSK_MAX_TXQ		64

/**
 * ucm_xsk_queue__tx_turn() - the way out's share of one RX thread's turn
 * @txq: the TX channels of the workers that send on this queue
 *
 * Lends each channel frames of the queue's pool, puts what its worker
 * filled on the TX ring, and brings completed frames home (before each
 * send, so the ring has all the room it can). It collects no more than
 * the ring has room for: the rest stays in the channel, whose filling
 * holds the worker's reads back; the RX direction never waits on TX, and
 * in zero-copy a ring the driver takes nothing from lets the RX thread
 * sleep (ucm_xsk_queue__sleep() then waits for the ring's room too). RX
 * thread only. Return: frames moved (sent, refused and completed); 0
 * when there was nothing to do.
 */
UCM_API uint32_t ucm_xsk_queue__tx_turn(struct ucm_xsk_queue *q,
					struct ucm_txq *const *txq,
					uint32_t ntxq);

/**
 * ucm_xsk_queue__set_wake_fd() - one more fd an RX thread's sleep wakes for
 * @fd: readable means "look again" (an eventfd the application writes to
 *      stop its RX threads at once, say); -1: none (the default)
 *
 * ucm_xsk_queue__sleep() then also returns 1 when @fd is readable; it
 * never reads @fd. Set it before the RX thread sleeps. Return: 0, or
 * -EINVAL.
 */
UCM_API int ucm_xsk_queue__set_wake_fd(struct ucm_xsk_queue *q, int fd);

/**
 * ucm_xsk_queue__sleep() - an idle RX thread's sleep
 *
 * Until the RX ring has something, a worker sends on one of @txq (its
 * channel's wake-up, see txq.h), or @timeout_ms passes; not at all when
 * a channel already has descriptors waiting. At most 1 ms when the last
 * ucm_xsk_queue__refill() found the pool short: frames coming home wake
 * nobody, and the device drops while it has no buffer. RX thread only.
 * Return: 1 when there is work (the RX ring has something, a channel's
 * wake-up came, or a channel had descriptors waiting and it did not
 * sleep), 0 when @timeout_ms passed with none; -EINVAL for more than
 * UCM_XSK_MAX_TXQ channels, -errno from poll(2) (-EINTR for a signal), or
 * the socket's own error (SO_ERROR) when poll reports one (POLLERR,
 * POLLHUP; -EIO when it gives none) or when a sleep timed out and the
 * socket has one (an XSK's poll does not report it): a socket in error
 * does not heal, and an RX thread that slept on it again would spin.
 */
UCM_API int ucm_xsk_queue__sleep(struct ucm_xsk_queue *q,
				 struct ucm_txq *const *txq, uint32_t ntxq,
				 int timeout_ms);

/**
 * ucm_xsk_queue__spin() - an idle RX thread's look before it sleeps
 *
 * Looks at the RX ring and @txq's channels for up to @spin_us (at most
 * UCM_SPIN_US_MAX), with no system call (but with busy polling, below):
 * the next packet or send then costs no wake-up, neither the kernel's nor
 * the worker's (a worker's send finds no sleep announced). With
 * UCM_XSK_F_BUSY_POLL each look that finds nothing is a busy poll, a
 * recvfrom(MSG_DONTWAIT) in
 * which the kernel runs the device's NAPI poll on this thread: with
 * SO_PREFER_BUSY_POLL and the device's interrupts deferred
 * (napi_defer_hard_irqs, gro_flush_timeout) that is how packets arrive
 * while the thread looks. The NAPI is the socket's, marked by the kernel
 * at its first packets; a socket that has none by then (copy mode where
 * the receive has no NAPI id, as on veth) would poll nothing: its looks
 * stop asking, said once. A fill ring the pool left short is refilled
 * during the look (every 10 us), as frames come home: the device is not
 * left without buffers until the sleep. RX thread only. Return: 1 when
 * work came, 0 when none did (then sleep), -EINVAL for a bad argument.
 */
UCM_API int ucm_xsk_queue__spin(struct ucm_xsk_queue *q, struct ucm_txq *const *txq,
				uint32_t ntxq, uint32_t spin_us);

struct ucm_cpumap_producer;

/**
 * ucm_xsk_queue__poll() - one RX batch into the cpumap
 * @prod: this RX thread's cpumap producer (its pool: the queue's)
 * @cfg: the steering configuration, for packets that came without the XDP
 *       program's metadata (generic mode): the same policy, in userspace
 * @rr: this thread's round-robin position
 *
 * Refills the fill ring, takes up to UCM_XSK_RX_BATCH descriptors, stages
 * each for its worker and flushes the bulk queues (our NAPI poll). Each
 * packet's worker: the application's (ucm_xsk_queue__set_steer()), else
 * the XDP program's metadata, else @cfg's policy. RX thread only.
 * Return: packets handed on, or -errno (-EINVAL when an argument is NULL).
 */
UCM_API int ucm_xsk_queue__poll(struct ucm_xsk_queue *q,
				struct ucm_cpumap_producer *prod,
				const struct ucm_steer_cfg *cfg, uint32_t *rr);

/**
 * ucm_xsk_queue__set_steer() - the application picks the workers
 * @fn: called for each packet by ucm_xsk_queue__poll() (steer.h:
 *      ucm_steer_fn); NULL: the XDP program's metadata, or the policy of
 *      the configuration poll is given
 *
 * Before the queue's RX thread starts polling. Return: 0 or -EINVAL.
 */
UCM_API int ucm_xsk_queue__set_steer(struct ucm_xsk_queue *q, ucm_steer_fn fn,
				     void *ctx);

/**
 * ucm_xsk_queue__wait() - sleep until the RX ring has something or
 * @timeout_ms passes (-1: no limit); for an idle RX thread
 *
 * Return: 1 when the RX ring has something, 0 when @timeout_ms passed
 * with nothing; -errno from poll(2) (-EINTR for a signal), or -EBADF when
 * the queue has no socket (after ucm_xsk__destroy() deleted it).
 */
UCM_API int ucm_xsk_queue__wait(struct ucm_xsk_queue *q, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_XSK_H */
