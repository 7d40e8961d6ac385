/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_txq: a worker's way out through one AF_XDP queue (the way back).
 *
 * A worker that sends (tun -> NIC) needs frames of the UMEM to copy packets
 * into, and a TX ring to put them on. Both belong to the queue's RX thread:
 * it owns the queue's pool (only the owner allocates from its cache) and
 * the queue's TX and completion rings (one producer, one consumer each), as
 * a driver's NAPI owns its queue. So the RX thread lends the worker empty
 * frames of its pool, the worker hands them back filled, and the RX thread
 * puts them on the TX ring and, when they complete, returns them to its own
 * pool: straight into its cache, the pool's direct bulk recycling.
 *
 *   RX thread (pool owner)                    worker
 *   ucm_txq__lend(): pool -> free ring  --->  ucm_txq__take(): free ring
 *                                             copies a packet in
 *   ucm_txq__collect(): out ring  <-------    ucm_txq__send(): out ring
 *   ucm_xsk_queue__tx(), __complete()
 *
 * Concurrency contract: two SPSC rings. free: produced by the RX thread
 * (lend), consumed by the worker (take). out: produced by the worker
 * (send), consumed by the RX thread (collect). Each ring's ordering is
 * ring.h's (publication with release, consumption with acquire), so a
 * frame's contents written before send() are visible after collect().
 * Counters are written by one side each (named below) and read by anyone.
 * create/reclaim/destroy run on a control thread while neither side runs.
 *
 * Sleep/wake of the RX thread (W1 pairs with W2), the cpumap's protocol
 * (lib/engine/wake.h, where the argument is written out):
 *
 *   RX thread                              worker
 *   ucm_txq__sleep_begin():                ucm_txq__send():
 *     (W1) XCHG rx_wake = SLEEPING,          publish on out (release)
 *          seq_cst                           (W2) s = FETCH_OR rx_wake,
 *     out ring not empty: do not sleep            KICKED, seq_cst
 *   poll(wake_fd, ...)                       if s == SLEEPING: write(wake_fd)
 *   ucm_txq__sleep_end(): (W3) XCHG
 *     rx_wake = 0; read(wake_fd) if a
 *     write is owed
 *
 * Either W2 sees "sleeping" and the eventfd (which keeps a wake that comes
 * before the poll) wakes the RX thread, or the RX thread's re-check after
 * W1 sees the published descriptors. Only the first send of a sleep writes
 * the eventfd, and the RX thread reads it only after a sleep that a send
 * signalled: no system call on either side otherwise. A worker short of
 * frames asks the same way (ucm_txq__want(): a flag, then W2), and the
 * re-check sees the flag, which the next lend clears.
 *
 * Back-pressure, the other way round: a worker whose out ring is full
 * stops taking packets (the tun's read path leaves them in the tun's
 * queue, as a driver stops its queue when its TX ring is full) and may
 * sleep until the RX thread has taken some (room_wake, the same protocol):
 *
 *   worker                                 RX thread
 *   ucm_txq__room_wait_begin():            ucm_txq__collect():
 *     (W1) XCHG room_wake = SLEEPING,        consume from out (release)
 *          seq_cst                           (W2) s = FETCH_OR room_wake,
 *     room in out: do not sleep                   KICKED, seq_cst
 *   poll(room_fd, ...)                       if s == SLEEPING:
 *   ucm_txq__room_wait_end(): (W3)             write(room_fd)
 *
 * Lent frames are the pool's allocated frames (UCM_LOC_APP) until they come
 * home: through the TX path, through ucm_txq__drop() (a worker's frame it
 * could not use), or through ucm_txq__reclaim() at shutdown.
 *
 * A checksum left for the way out to finish: where the queue's sockets
 * take TX metadata (ucm_txq__tx_csum(); AF_XDP, Linux 6.11), a worker may
 * send a packet whose L4 checksum is partial, as the kernel's
 * CHECKSUM_PARTIAL: the field holds the pseudo-header's sum, the
 * UCM_TXQ_META_LEN bytes in front of the packet in its frame hold a struct
 * ucm_txq_meta asking for the rest (ucm_txq_meta_csum()), and its
 * descriptor carries UCM_TXQ_DESC_CSUM. Every other descriptor goes out as
 * it is.
 *
 * A packet of several frames (where the queue's sockets take them:
 * ucm_txq__max_frames() > 1, multi-buffer AF_XDP) travels as its first
 * frame's descriptor with UCM_DESC_CHAIN (ucpumap/pool.h) and the whole
 * packet's length; its later frames are listed in that frame's headroom
 * (lib/engine/chain.h's struct ucm_chain) and tagged UCM_LOC_CHAIN, and
 * every place that sends the first frame home sends them too. A
 * checksum request (UCM_TXQ_DESC_CSUM) is the first frame's: its
 * metadata in front of the packet, the field within that frame.
 */
#ifndef UCPUMAP_TXQ_H
#define UCPUMAP_TXQ_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "ucpumap/api.h"
#include "ucpumap/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ring size of each direction: 4 worker batches of 64 in flight each way. */
#define UCM_TXQ_DEFAULT_SIZE	256

/* The uapi's struct xsk_tx_metadata (<linux/if_xdp.h>, Linux 6.8) as far
 * as a checksum request goes, in the UCM_TXQ_META_LEN bytes before the
 * packet: the sockets register that much (a multiple of 8, as the kernel
 * wants). */
struct ucm_txq_meta {
	uint64_t flags;		/* UCM_TXQ_META_F_CSUM */
	uint16_t csum_start;	/* from the packet's first byte */
	uint16_t csum_offset;	/* from csum_start to the checksum field */
	uint32_t pad;
};
#define UCM_TXQ_META_LEN	16
#define UCM_TXQ_META_F_CSUM	(1ull << 1)	/* XDP_TXMD_FLAGS_CHECKSUM */
/* A descriptor's request bit: above every UMEM address (at most 2^40),
 * below the length (ucm_desc_make()). */
#define UCM_TXQ_DESC_CSUM	(1ull << 46)

/* Ask for @pkt's checksum at @start + @off to be finished on the way out;
 * @desc is @pkt's descriptor. Return: the descriptor to send. The metadata
 * sits wherever the packet puts it (a tun's packets 2 bytes off 8 behind
 * their Ethernet header): copied in, never stored through the struct. */
static inline uint64_t ucm_txq_meta_csum(void *pkt, uint64_t desc, uint16_t start,
					 uint16_t off)
{
	struct ucm_txq_meta m = {
		.flags = UCM_TXQ_META_F_CSUM, .csum_start = start, .csum_offset = off,
	};

	memcpy((char *)pkt - UCM_TXQ_META_LEN, &m, sizeof(m));
	return desc | UCM_TXQ_DESC_CSUM;
}

/* A descriptor without its request bit: its frame and length. */
static inline uint64_t ucm_txq_desc_plain(uint64_t desc)
{
	return desc & ~UCM_TXQ_DESC_CSUM;
}

struct ucm_txq;

/**
 * struct ucm_txq_stats - one channel
 * @lent: frames lent to the worker (RX thread)
 * @lend_short: lends that found the pool with fewer frames than room (RX
 *              thread)
 * @sent: packets handed back to go out (worker); a packet of several
 *        frames counts once, as in @send_full and @collected
 * @send_full: packets the out ring had no room for, their frames given
 *             back to the pool unsent: counted drops (worker)
 * @dropped: frames the worker gave back unused or unsent (worker)
 * @collected: packets taken by the RX thread (RX thread)
 */
struct ucm_txq_stats {
	uint64_t lent, lend_short, sent, send_full, dropped, collected;
};

/**
 * ucm_txq__create() - a channel over @umem's frames
 * @size: each ring's slots, a power of two (0: UCM_TXQ_DEFAULT_SIZE)
 * Return: the channel, or NULL with errno (EINVAL, ENOMEM).
 */
UCM_API struct ucm_txq *ucm_txq__create(struct ucm_umem *umem, uint32_t size);
/**
 * ucm_txq__destroy() - free an empty channel
 * Return: 0, or -EBUSY when frames are still in it (ucm_txq__reclaim()
 * first); nothing is freed then.
 */
UCM_API int ucm_txq__destroy(struct ucm_txq *t);

/* RX thread (the owner of @pool). Top the free ring up from @pool (none
 * when ucm_txq__set_lend() turned lending off).
 * Return: frames lent now, or -errno (-EPERM: not the owner; -EINVAL:
 * @pool is not of the channel's UMEM). */
UCM_API int ucm_txq__lend(struct ucm_txq *t, struct ucm_pool *pool);
/* RX thread. Announce a sleep (W1); false: descriptors are waiting, do
 * not sleep (call sleep_end all the same). */
UCM_API bool ucm_txq__sleep_begin(struct ucm_txq *t);
UCM_API void ucm_txq__sleep_end(struct ucm_txq *t);
/* The eventfd a sleeping RX thread polls (POLLIN) with its socket. Poll
 * it, never read it: ucm_txq__sleep_end() does, when a wake is owed. */
UCM_API int ucm_txq__wake_fd(const struct ucm_txq *t);
/* RX thread. Filled descriptors waiting to go out (a hint: the worker
 * may be adding more); no system call, nothing announced. */
UCM_API uint32_t ucm_txq__pending(struct ucm_txq *t);
/* RX thread. Take up to @max filled descriptors (ucm_desc_make()). */
UCM_API uint32_t ucm_txq__collect(struct ucm_txq *t, uint64_t *desc,
				  uint32_t max);

/* Worker. Empty frames waiting to be taken (a hint: more may come). */
UCM_API uint32_t ucm_txq__available(struct ucm_txq *t);
/* Worker. Take up to @max empty frames (frame handles). */
UCM_API uint32_t ucm_txq__take(struct ucm_txq *t, uint64_t *addrs,
			       uint32_t max);
/* Worker. Hand @n filled descriptors back to go out. What the out ring
 * cannot take goes home unsent (send_full): a sender that must not drop
 * sends no more than ucm_txq__room(). Return: descriptors taken. */
UCM_API uint32_t ucm_txq__send(struct ucm_txq *t, const uint64_t *desc,
			       uint32_t n);
/* Worker. Sends that fit in the out ring now (at least: only the RX thread
 * frees slots). */
UCM_API uint32_t ucm_txq__room(struct ucm_txq *t);
/* Worker. Announce a wait for room (W1); false: there is room, do not
 * sleep (call room_wait_end all the same). */
UCM_API bool ucm_txq__room_wait_begin(struct ucm_txq *t);
UCM_API void ucm_txq__room_wait_end(struct ucm_txq *t);
/* The eventfd a worker waiting for room polls (POLLIN). Poll it, never
 * read it: ucm_txq__room_wait_end() does, when a wake is owed. */
UCM_API int ucm_txq__room_fd(const struct ucm_txq *t);
/* Worker. Ask for frames now (a take came up short and packets wait):
 * the RX thread lends at its next turn, woken if it sleeps (W2, as a
 * send's). One lend answers the ask, even one the pool left short: ask
 * again at the next look. */
UCM_API void ucm_txq__want(struct ucm_txq *t);
/* Worker. Give frames back unused (through the pools' recycle rings):
 * frame handles, none of them listed in a packet of several. */
UCM_API void ucm_txq__drop(struct ucm_txq *t, const uint64_t *addrs,
			   uint32_t n);

/* Control thread, both sides stopped: every frame in the rings goes home.
 * Return: the number of frames brought home. */
UCM_API uint32_t ucm_txq__reclaim(struct ucm_txq *t);
/* The channel's counters, into the caller's @st of @sz bytes (sizeof(*@st)
 * as the caller was built: an older, smaller struct gets its part; bytes
 * past ours are zeroed). Return: 0, or -EINVAL (@st NULL or @sz 0). */
UCM_API int ucm_txq__stats(const struct ucm_txq *t, struct ucm_txq_stats *st,
			   size_t sz);
/* Control thread, before the worker runs: the queue's sockets finish the
 * checksums UCM_TXQ_DESC_CSUM asks for (ucm_xsk__tx_csum()). Off at
 * create. */
UCM_API void ucm_txq__set_tx_csum(struct ucm_txq *t, bool on);
/* Control thread, before either side runs: whether ucm_txq__lend() lends
 * (on at create). Off for a worker that only sends frames it received
 * (UCM_VERDICT_TX) and never takes: frames lent to it would sit in the
 * free ring until reclaim, out of the pool's reach. */
UCM_API void ucm_txq__set_lend(struct ucm_txq *t, bool on);
/* Worker: whether it may send UCM_TXQ_DESC_CSUM. */
UCM_API bool ucm_txq__tx_csum(const struct ucm_txq *t);
/* Control thread, before the worker runs: the queue's sockets take
 * packets of up to @n frames (1..UCM_FRAME_CHAIN_MAX + 1: sockets bound
 * with UCM_XSK_F_SG), sent as UCM_DESC_CHAIN descriptors. 1 at create:
 * one frame a packet. Return: 0, or -EINVAL for an @n out of range. */
UCM_API int ucm_txq__set_max_frames(struct ucm_txq *t, uint32_t n);
/* Worker: the frames a packet it sends may take (1: no UCM_DESC_CHAIN). */
UCM_API uint32_t ucm_txq__max_frames(const struct ucm_txq *t);
/* Non-const: the UMEM it returns is the one the channel lends frames of. */
UCM_API struct ucm_umem *ucm_txq__umem(struct ucm_txq *t);

#ifdef __cplusplus
}
#endif
#endif /* UCPUMAP_TXQ_H */
