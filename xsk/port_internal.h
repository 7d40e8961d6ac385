/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The AF_XDP sockets' state, shared by port.c (the UMEM and the sockets
 * set up and closed: ucm_xsk__*), queue.c (a queue's operations on its
 * RX thread: ucm_xsk_queue__*) and queue_tx.c (the same thread's way
 * out). None calls another.
 *
 * A frame's trip: pool -> fill ring (UCM_LOC_KERNEL) -> RX ring ->
 * validated and handed on (UCM_LOC_APP) -> cpumap -> back to the pool.
 * On the way out: pool -> filled by a worker (UCM_LOC_APP, see ucm_txq) ->
 * TX ring (UCM_LOC_KERNEL) -> completion ring -> back to the pool, in bulk,
 * by the queue's RX thread. A packet of several frames moves each of its
 * frames so: the later ones from UCM_LOC_CHAIN, one TX descriptor and one
 * completion each.
 * Each queue counts the frames it posted and took back, on both paths, so
 * that ucm_xsk__destroy() can prove the ones it reclaims from the kernel
 * are exactly the ones the kernel held.
 */
#ifndef UCM_XSK_PORT_INTERNAL_H
#define UCM_XSK_PORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xdp/xsk.h>

#include "core/pool_internal.h"
#include "engine/chain.h"
#include "ucpumap/steer.h"
#include "ucpumap/xdp.h"
#include "ucpumap/xsk.h"

/* An RX ring's entries at most: ucm_xsk__open() refuses more. */
#define UCM_XSK_MAX_RING	16384

/* Linux 6.6: multi-buffer sockets, and the descriptor option that says
 * the packet goes on in the next one. Older headers lack them. */
#ifndef XDP_USE_SG
#define XDP_USE_SG		(1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD		(1 << 0)
#endif

/* A socket's mapped rings, unmapped when it closes. */
enum { RING_RX, RING_TX, RING_FILL, RING_COMP, RING__MAX };

/*
 * Concurrency contract: everything below is the queue's RX thread's, but
 * stats, which it publishes with WRITE_ONCE (STAT_ADD) for any reader,
 * tx_completed with release (S1 in ucm_xsk_queue__complete(), paired with
 * S2 in ucm_xsk_queue__stats()); the control thread uses the rest only
 * before the RX thread starts and after it stopped.
 */
struct ucm_xsk_queue {
	struct ucm_xsk *x;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	struct xsk_ring_prod tx;
	struct ucm_pool *pool;
	uint32_t id;
	int fd;			/* queue 0's is the UMEM's */
	uint16_t bind_flags;	/* XDP_USE_NEED_WAKEUP or 0 */
	void *map[RING__MAX];
	size_t map_len[RING__MAX];
	uint64_t posted;	/* frames given to the fill ring, ever */
	uint64_t taken;		/* frames taken back from the RX ring, ever */
	uint64_t tx_posted;	/* frames (descriptors) given to the TX ring, ever */
	uint64_t tx_done;	/* frames taken back from the completion ring */
	uint32_t tx_next;	/* the channel a TX turn starts with (rotates) */
	uint32_t tx_cons_seen;	/* the TX ring's consumer at the last look (tx_stuck()) */
	ucm_steer_fn steer_fn;	/* the application's steering, or NULL */
	void *steer_ctx;
	uint64_t rx_stamp;	/* the last RX batch's first arrival stamp, or 0 */
	bool fill_dry;		/* the last refill found the pool short */
	bool tx_down;		/* the last kick was refused: the device is down (tx_kick()) */
	bool busy_poll;		/* UCM_XSK_F_BUSY_POLL: the spin polls the device */
	bool sg;		/* bound with XDP_USE_SG (its UMEM's first socket was) */
	struct ucm_chain_rx chain;	/* a packet of several being taken */
	int32_t chain_worker;		/* its first frame's metadata's */
	bool napi_known; /* busy polling's NAPI looked for (queue.c) */
	/* ucm_xsk_queue__set_wake_fd(): the sleep also wakes when it turns
	 * readable (set before the RX thread starts, read by it); -1: none */
	int wake_fd;
	struct ucm_xsk_stats stats;
};

/* Written by ucm_xsk__open() on the control thread, read-only after: the
 * RX threads read it through their queues until they stop. */
struct ucm_xsk {
	struct ucm_umem *umem;
	void *area;
	uint64_t size;
	uint32_t frame_size;
	uint32_t fill_size;
	int ifindex;
	bool zerocopy;
	bool tx_meta;		/* the UMEM has UCM_TXQ_META_LEN in front of TX packets */
	bool tx_csum;		/* and the kernel finishes the checksums they ask for */
	bool copy_csum;		/* the driver's copy path is known to finish them */
	bool zc_csum;		/* the driver takes them in zero-copy (xsk-features) */
	/* The descriptors a packet may take in zero-copy (the driver's
	 * xdp-zc-max-segs; 0: not said, or not asked: neither multi-buffer
	 * nor checksum requests). Read in zero-copy with multi-buffer only. */
	uint32_t zc_max_segs;
	uint32_t nqueues;
	struct ucm_xsk_queue *q;
};

/*
 * The frames a packet sent on these sockets may take: 1 without
 * multi-buffer (@sg); in zero-copy, what the driver takes
 * (@zc_max_segs, when said: a longer chain is an invalid descriptor to
 * it); else the kernel's most.
 */
static inline uint32_t ucm_xsk_tx_frames_of(bool sg, bool zerocopy, uint32_t zc_max_segs)
{
	if (!sg)
		return 1;
	if (zerocopy && zc_max_segs && zc_max_segs < UCM_XSK_MAX_FRAGS)
		return zc_max_segs;
	return UCM_XSK_MAX_FRAGS;
}

static inline uint32_t ucm_xsk_tx_frames(const struct ucm_xsk *x)
{
	return ucm_xsk_tx_frames_of(x->q[0].sg, x->zerocopy, x->zc_max_segs);
}

/* queue.c: whether the kernel has published descriptors not yet taken
 * (an acquire load of the RX ring's producer when none are known). */
bool ucm_xsk_queue_rx_ready(struct ucm_xsk_queue *q);
/* queue.c, any thread: the RX ring's consumer index, and in *@waiting
 * whether descriptors wait past it; a snapshot (ucm_dp's stall watch). */
uint32_t ucm_xsk_queue_rx_look(const struct ucm_xsk_queue *q, bool *waiting);
/* queue_chain.c: a packet of several descriptors still being taken (its
 * RX thread stopped) is dropped, as one whose end never came. */
void ucm_xsk_queue_chain_end(struct ucm_xsk_queue *q);
/* One descriptor of a packet of several, taken: true when it was the last
 * of a whole packet, then *@out (ucm_xsk_queue__rx()'s slow path). */
bool ucm_xsk_chain_take(struct ucm_xsk_queue *q, const struct ucm_umem_geom *g,
			const struct xdp_desc *rd, struct ucm_xsk_desc *out);
/* The bytes of packet @d at hand (its first frame's, for a chain) into
 * *@rd; its first byte. */
const uint8_t *ucm_xsk_rx_head(struct ucm_xsk_queue *q, const struct ucm_xsk_desc *d,
			       uint32_t *rd);
/* A packet no worker takes goes home, every frame of it. */
void ucm_xsk_rx_put(struct ucm_xsk_queue *q, const struct ucm_xsk_desc *d);

/* The worker the XDP program chose for the packet at @addr in frame
 * @base (its metadata), or -1; takes the batch's first arrival stamp. */
static __hot_inline int32_t ucm_xsk_rx_meta(struct ucm_xsk_queue *q, uint64_t addr, uint64_t base)
{
	struct ucm_xdp_meta meta;
	struct ucm_xdp_stamp st;
	uint8_t *at;

	if (addr - base < sizeof(meta))
		return -1;
	/* Copied, not read in place: a program that moved the packet's
	 * start by other than a multiple of 8 leaves them unaligned. */
	at = ucm_umem__frame(q->x->area, addr - sizeof(meta));
	memcpy(&meta, at, sizeof(meta));
	if (meta.magic != UCM_XDP_META_MAGIC && meta.magic != UCM_XDP_META_MAGIC_STAMP)
		return -1;
	/* The batch's first arrival: one stamp per batch, not per packet. */
	if (meta.magic == UCM_XDP_META_MAGIC_STAMP && !q->rx_stamp &&
	    addr - base >= sizeof(meta) + sizeof(st)) {
		memcpy(&st, at - sizeof(st), sizeof(st));
		q->rx_stamp = st.ns;
	}
	/* A recycled frame must not show it again if the next packet comes
	 * without one. */
	memset(at + offsetof(struct ucm_xdp_meta, magic), 0, sizeof(meta.magic));
	return meta.worker;
}

/* @ifname's primary name into @buf (IF_NAMESIZE), said, where it is an
 * altname: the kernel's calls take either, /sys/class/net only the
 * primary. @ifname itself otherwise. */
const char *ucm_if_primary(const char *ifname, char *buf);
/* Every queue of @queues (@nqueues; NULL: queue 0) is one @ifname has:
 * 0, or -EINVAL after a message naming those it has. */
int ucm_xsk_check_queues(const char *ifname, const uint32_t *queues, uint32_t nqueues);
/* The same for TX queues, where the sockets send (copy mode sends nothing
 * on a queue the device has no TX queue of, and says nothing). */
int ucm_xsk_check_tx_queues(const char *ifname, const uint32_t *queues, uint32_t nqueues);

/* What ucm_xsk__open() (port.c) and ucm_xdp__load() (xdp.c) refuse of
 * their options before they touch anything: @in copied into @o, defaults
 * filled in (and the steering's config in @cfg); 0 or -EINVAL, said. For
 * ucm_dp, to refuse them before it attaches anything. */
int ucm_xsk_parse_opts(const struct ucm_xsk_opts *in, struct ucm_xsk_opts *o);
int ucm_xdp_opts_check(const struct ucm_xdp_opts *opts, struct ucm_xdp_opts *o,
		       struct ucm_steer_cfg *cfg);

/* The program UCM_XDP_ATTACH_REPLACE took off stays off: the detach no
 * longer puts it back (ucm_dp, once started). */
void ucm_xdp_let_other_go(struct ucm_xdp *x);
/* The interface's MAC (@mac, 6 bytes): a unicast frame to another is
 * passed to the kernel (steer.bpf.c's ucm_steer_mac). For ucm_dp;
 * ucm_xdp alone steers every frame. 0 or -errno. */
int ucm_xdp_set_mac(struct ucm_xdp *x, const uint8_t *mac);

#endif /* UCM_XSK_PORT_INTERNAL_H */
