/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tun sink: where cpumap workers hand their batches to the kernel's
 * stack (our netif_receive_skb_list()).
 *
 * A ucm_tun is a multi-queue tun (L3) or tap (L2) device opened with
 * IFF_NO_PI | IFF_VNET_HDR, one non-blocking fd per queue. Worker w of a
 * cpumap whose sink is ucm_tun__sink() writes to queue w % nqueues. By
 * default each batch goes to the queue in one io_uring submission, one
 * write per packet: the virtio_net header (zeroed: no offloads) and the
 * packet. With UCM_TUN_F_COALESCE, same-flow UDP datagrams or TCP segments
 * of a batch go as one super-packet per write (an IORING_OP_WRITEV of the
 * first packet and the others' payloads, with a GSO virtio_net header). In tun
 * mode the Ethernet header and VLAN tags are stripped and non-IP frames
 * are dropped (counted as non_ip); in tap mode frames go whole. The kernel runs its receive path inside each write, so
 * the frames are done with when xmit returns and go back to their pools.
 *
 * Queue sharing: with more workers than queues, two workers write to the
 * same queue fd (the kernel allows concurrent writes). Counters are kept
 * per worker, each written by its worker only; ucm_tun__queue_stats() sums
 * the workers of a queue, ucm_tun__worker_stats() gives one worker's.
 *
 * Threads: create/destroy run on a control thread; the tun must outlive
 * every cpumap that uses it (destroy the cpumap first). The sink callbacks
 * run on the worker threads. Stats may be read from any thread at any time.
 *
 * Errors: functions return 0 or a negative errno (also in errno); create
 * returns NULL and sets errno, with a log line naming the fix.
 */
#ifndef UCPUMAP_TUN_H
#define UCPUMAP_TUN_H

#include <stddef.h>
#include <stdint.h>

#include "ucpumap/api.h"
#include "ucpumap/cpumap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Queues (fds) one tun opens, and sink workers (0..63) it keeps state
 * for: 64, a bound on the memory of one tun; the kernel takes up to 256
 * queues (MAX_TAP_QUEUES). */
#define UCM_TUN_MAX_QUEUES	64
#define UCM_TUN_MAX_WORKERS	64
/* Packets per io_uring submission; larger sink batches are split. A
 * held hand-over (UCM_CPUMAP_F_HOLD: at most 71) fits in one. */
#define UCM_TUN_BATCH_MAX	128
/* Buckets of the super-packet size histogram: 2, 3-4, 5-8, 9-16, 17-32,
 * 33-64, 65-128 segments. */
#define UCM_TUN_SEG_HIST	7

enum ucm_tun_flags {
	/* L2 tap: frames are written whole, Ethernet header included. */
	UCM_TUN_F_TAP		= 1 << 0,
	/* One write() per packet (per super-packet with
	 * UCM_TUN_F_COALESCE), built and written one at a time: the
	 * unbatched way, the baseline the batched write is measured
	 * against. */
	UCM_TUN_F_NO_BATCH	= 1 << 1,
	/* Our cpumap GRO: same-flow UDP datagrams or TCP
	 * segments of a batch go as one GSO super-packet per write, which
	 * the kernel's stack takes as one packet (a UDP socket without
	 * UDP_GRO gets the datagrams cut back out; TCP takes the whole
	 * run; rules: ucpumap/gso.h). Pair it with
	 * UCM_CPUMAP_F_HOLD, so batches are up to 71 packets, not 8. A tap
	 * merges only frames with the same Ethernet header and no VLAN tag. */
	UCM_TUN_F_COALESCE	= 1 << 2,
	/* The read path (ucm_tun__sink_back()) takes no offloads: the
	 * kernel cuts every TCP segment to MTU size and finishes every
	 * checksum before the tun, as it does for a device without any;
	 * for comparison. By default ucm_tun__set_back() turns on what
	 * the kernel has of TUN_F_CSUM, TSO4, TSO6, USO4 and USO6, and the
	 * read path cuts super-packets and completes checksums itself
	 * (see ucm_tun_back_stats). */
	UCM_TUN_F_NO_OFFLOAD	= 1 << 3,
};

/*
 * @name:    device name, at most IFNAMSIZ - 1 (15) characters; an existing
 *           tun/tap of that name is attached to (it must be multi-queue and
 *           of the same type), otherwise one is created. NULL or "": the
 *           kernel picks "tunN"/"tapN".
 * @nqueues: queues (fds) to open, 1..UCM_TUN_MAX_QUEUES; default 1.
 * @flags:   enum ucm_tun_flags.
 * @mtu:     0 leaves the MTU as it is. The library cannot see the UMEM, so
 *           the caller sizes it: the kernel does not check the MTU on what
 *           we write, but it is what the stack uses for traffic routed out
 *           through the device and what it advertises (PMTU, TCP MSS), so
 *           it must describe packets that fit a UMEM frame: frame size
 *           minus headroom, Ethernet header and VLAN tags (tap: the frame
 *           minus headroom and Ethernet header).
 *
 * The link is brought up. Addresses are the caller's business.
 */
struct ucm_tun_opts {
	size_t sz;
	const char *name;
	uint32_t nqueues;
	uint32_t flags;
	uint32_t mtu;
	/* On each worker's next-hop resolver thread (the way back with
	 * resolve_ifindex), before its loop (api.h: ucm_thread_fn; @idx: the
	 * worker). The resolver asks the kernel to resolve next hops
	 * (RTM_NEWNEIGH): it needs CAP_NET_ADMIN. */
	ucm_thread_fn resolver_init;
	void *resolver_init_ctx;
	/* The user a tun created here belongs to (TUNSETOWNER): another
	 * user attaches queues of it only with CAP_NET_ADMIN. A tun the
	 * kernel creates has no owner, and then any user may open queues of
	 * a multi-queue one: read its traffic, write into it. 0: the
	 * effective user (geteuid()), left ownerless, said, where the user
	 * namespace does not map it; one named that it does not map (or
	 * (uint32_t)-1) is refused, -EINVAL. A tun that was there keeps its
	 * owner. */
	uint32_t owner;
	size_t :0;
};
#define ucm_tun_opts__last_field owner

/**
 * struct ucm_tun_stats - write outcomes
 * @packets: packets the kernel accepted
 * @bytes: their bytes, virtio_net header excluded (tun: IP datagrams;
 *         tap: whole frames)
 * @submits: write syscalls: io_uring submissions (one per batch), or
 *           write()/writev() calls with UCM_TUN_F_NO_BATCH; packets /
 *           submits is the batch average
 * @non_ip: frames dropped in tun mode because they are not IPv4/IPv6
 * @err_eio: writes refused with EIO: the link is down
 * @err_ebadfd: writes refused with EBADFD: the device is gone
 * @err_eagain: writes refused with EAGAIN
 * @err_other: any other error, a short write, a write the kernel did not
 *             take from the ring, or one whose completion was lost
 *             (cancelled after a failed wait, or given up)
 * @super: UCM_TUN_F_COALESCE: super-packets the kernel accepted (writes of
 *         two packets or more; they count in @packets as their packets)
 * @super_segs: the packets in them; super_segs / super is the average
 * @super_hist: @super by packets in each (buckets: UCM_TUN_SEG_HIST)
 * @super_refused: super-packets the kernel refused with EINVAL (too old
 *                 for that GSO type: UDP needs Linux 6.2; or that shape of
 *                 it): their packets were written one by one; a UDP one
 *                 with a short last segment made the worker merge equal
 *                 sizes only, any other stopped merging that protocol for
 *                 a second, then twice as long at each refusal that
 *                 follows, up to 64 s
 * @csum_partial: of @packets, those written alone whose TCP or UDP
 *                checksum held only the pseudo-header sum (their sender's
 *                checksum offload: a veth's default), written with
 *                VIRTIO_NET_HDR_F_NEEDS_CSUM for the kernel to complete;
 *                those merged into a super-packet count in @super_segs,
 *                whose checksums the kernel always completes
 *
 * Errors count writes; a super-packet that fails otherwise drops all its
 * packets.
 */
struct ucm_tun_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t submits;
	uint64_t non_ip;
	uint64_t err_eio;
	uint64_t err_ebadfd;
	uint64_t err_eagain;
	uint64_t err_other;
	uint64_t super;
	uint64_t super_segs;
	uint64_t super_hist[UCM_TUN_SEG_HIST];
	uint64_t super_refused;
	uint64_t csum_partial;
};

/* The struct's tag in the 0.2.0 ABI is ucm_tun_rev_stats; the source
 * calls it ucm_tun_back_stats, which the old tag stands behind, so the
 * ABI keeps its name and the source has one name for the way back. */
#define ucm_tun_back_stats	ucm_tun_rev_stats

/**
 * struct ucm_tun_back_stats - the read path of one worker (tun -> XSK TX)
 * @packets: packets read from the tun and handed to the TX channel
 * @bytes: their bytes as sent (tun: Ethernet header included)
 * @reads: read submissions (one per batch); packets / reads is the batch
 *         average
 * @no_frame: turns that found packets waiting and no frame lent (the
 *            queue's RX thread is behind lending); they wait in the tun
 * @drop_offload: packets whose virtio_net header asks for an offload
 *                (checksum, GSO) that could not be done (reasons below;
 *                with UCM_TUN_F_NO_OFFLOAD, any)
 * @drop_too_big: packets larger than a frame holds, or where the queue's
 *                sockets take packets of several frames
 *                (ucm_txq__max_frames()), than such a packet takes
 * @drop_non_ip: tun mode: packets neither IPv4 nor IPv6
 * @drop_no_neigh: tun mode with resolve_ifindex: packets with no unicast
 *                 route through the NIC (a subnet's directed broadcast
 *                 included), whose next hop the kernel did not
 *                 resolve within 1.2 s, or found no place to wait for it
 *                 (@neigh_held: 32 a worker, 8 a destination; a GSO
 *                 super-packet never waits)
 * @drop_stopped: packets read and not handed on because reading stopped:
 *                the worker's stop came while they waited for room,
 *                frames or a next hop (a super-packet sent in part counts
 *                once), or the
 *                read path's io_uring failed with them in hand (@stopped);
 *                their frames go home
 * @neigh_asks: questions about next hops queued for the kernel (netlink,
 *              on the worker's resolver thread): misses and refreshes
 * @err: reads that failed otherwise than EAGAIN
 * @stopped: 1 once the read path gave up (its io_uring failed): nothing is
 *           read from the tun any more (ucm_dp__check(): UCM_DP_FAULT_BACK)
 * @neigh_requests: messages the resolver sent the kernel (netlink): two or
 *                  three per question, and one per look at a neighbour the
 *                  kernel is resolving (bounded: a question per ms at most)
 * @neigh_evicted: known next hops given up for another destination (the
 *                 least recently used idle one; where every way of its
 *                 set is in use, the oldest of those, at most once in
 *                 100 ms a set): many mean the cache (1024 destinations
 *                 per worker) is smaller than the traffic
 * @neigh_refused: lookups of new destinations neither cached nor asked
 *                 about, every place they could take being in use: one
 *                 per packet (each is in drop_no_neigh too)
 * @channel_waits: times the TX channel was full with packets waiting: the
 *                 worker stopped reading (they wait in the tun, whose
 *                 senders the kernel then holds back) until the RX thread
 *                 took some; not drops
 * With offloads (not UCM_TUN_F_NO_OFFLOAD):
 * @super_packets: GSO super-packets read (TSO, USO) and cut into segments
 * @segments: the segments made of them, each a packet in @packets
 * @csum_completed: packets whose checksum the kernel left to us
 *                  (NEEDS_CSUM without GSO), completed
 * @csum_offloaded: packets sent with their L4 checksum left for the way
 *                  out to finish (ucm_txq__tx_csum(): AF_XDP TX metadata):
 *                  the segments, and the NEEDS_CSUM packets not completed
 * @drop_offload counts the offloaded packets that could not be done, one
 * of these reasons each:
 * @offload_bad_type: a GSO type we do not know, or a gso_size of 0
 * @offload_bad_header: headers that do not match the packet, its length
 *                      or its GSO type, or a checksum's place outside it
 * @offload_too_big: a segment that would not fit a frame (an MSS larger
 *                   than the frame's room less the headers), or than a
 *                   packet of several frames takes where the way out
 *                   takes those
 * @chains: of @packets, those sent in several frames (their bytes past
 *          the first frame's room; ucm_txq__max_frames() > 1)
 * @drop_link_local: tun mode: packets to the tun's own link, which has no
 *                   place on the NIC's: IPv6 multicast of interface- or
 *                   link-local scope (ff01::/16, ff02::/16: MLD, router
 *                   solicitations, ...), IPv4 224.0.0.0/24 and
 *                   255.255.255.255. Other multicast goes to the group's
 *                   Ethernet address, asking no neighbour.
 * @neigh_held: tun mode with resolve_ifindex: packets that waited for
 *              their next hop, as in the kernel's neighbour queue: sent
 *              once it was known (in @packets), else in @drop_no_neigh,
 *              or in @drop_stopped when reading stopped first
 * The neigh_requests, _evicted and _refused counts are as of the
 * worker's last turn, and final once it is closed; like the others they
 * go on over the worker's later opens (a new cpumap on the tun).
 */
struct ucm_tun_back_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t reads;
	uint64_t no_frame;
	uint64_t drop_offload;
	uint64_t drop_too_big;
	uint64_t drop_non_ip;
	uint64_t drop_no_neigh;
	uint64_t neigh_asks;
	uint64_t err;
	uint64_t stopped;
	uint64_t neigh_requests;
	uint64_t neigh_evicted;
	uint64_t neigh_refused;
	uint64_t channel_waits;
	uint64_t super_packets;
	uint64_t segments;
	uint64_t csum_completed;
	uint64_t offload_bad_type;
	uint64_t offload_bad_header;
	uint64_t offload_too_big;
	uint64_t csum_offloaded;
	uint64_t drop_stopped;
	uint64_t chains;
	uint64_t drop_link_local;
	uint64_t neigh_held;
};

/* The Ethernet header the read path puts in front of what a tun gives
 * (tun mode; a tap's frames go as they are). */
struct ucm_tun_l2 {
	uint8_t src[6];		/* the NIC's address */
	uint8_t dst[6];		/* the next hop's, unless resolve_ifindex */
	/* > 0: each packet's next hop from the kernel's routing and
	 * neighbour tables for this interface (the NIC), cached per
	 * destination and asked about again every second; dst is not used */
	int resolve_ifindex;
};

struct ucm_tun;
struct ucm_txq;

/**
 * ucm_tun__create() - create or attach a multi-queue tun/tap device
 *
 * Return: the device, or NULL with errno: EINVAL (bad option, name too
 * long, a device of that name of another type, not multi-queue, or not a
 * tun at all), EBUSY (in use by another program with other flags), EPERM
 * (CAP_NET_ADMIN missing), ENOENT (no /dev/net/tun) or ENODEV (the node,
 * but no tun driver). On failure nothing
 * this call created is left behind: our device is not persistent and
 * disappears with its last fd.
 */
UCM_API struct ucm_tun *ucm_tun__create(const struct ucm_tun_opts *opts);

/* Close every queue; call after the cpumaps using it are destroyed. */
UCM_API void ucm_tun__destroy(struct ucm_tun *tun);

UCM_API int ucm_tun__ifindex(const struct ucm_tun *tun);
UCM_API const char *ucm_tun__name(const struct ucm_tun *tun);
UCM_API uint32_t ucm_tun__nqueues(const struct ucm_tun *tun);

/**
 * ucm_tun__sink() - the sink callbacks; pass the struct ucm_tun * as ctx
 *
 * open() runs on each worker and sets up its state there (its io_uring);
 * it fails with -EBUSY when that worker index of this tun is already open
 * (one cpumap per tun at a time), and with the io_uring error when no ring
 * can be made (the log names the fix). xmit() returns how many packets were
 * not delivered (non-IP in tun mode and failed writes included).
 */
UCM_API const struct ucm_sink_ops *ucm_tun__sink(void);

/**
 * ucm_tun__sink_back() - the sink callbacks of a two-way worker
 *
 * As ucm_tun__sink(), and each worker given a TX channel with
 * ucm_tun__set_back() also reads its tun queue (poll), batched and
 * non-blocking, at most UCM_TUN_BACK_BATCH packets per turn: each packet
 * is read into a frame lent through the channel (virtio_net header first,
 * in the frame's headroom), given its Ethernet header in tun mode, and
 * handed back through the channel to go out on the queue's TX ring. The
 * worker sleeps (wait) until frames arrive for it or the tun has packets.
 * Its flags include UCM_SINK_F_POLL_WAKE (wait() never reads the wake fd:
 * the worker does): a sink that wraps it forwards its flags with its
 * callbacks, or nothing reads the wake fd and the worker spins.
 */
UCM_API const struct ucm_sink_ops *ucm_tun__sink_back(void);

/* Packets read per worker turn: a bounded share, so the RX direction
 * keeps its turn too. */
#define UCM_TUN_BACK_BATCH	32
/* Where a read packet starts in its frame: the headroom of an AF_XDP
 * frame (XDP_PACKET_HEADROOM), so the vnet header and the Ethernet header
 * fit before it. */
#define UCM_TUN_BACK_HEADROOM	256

/**
 * ucm_tun__set_back() - give worker @worker its way out
 * @txq: the channel to the queue's RX thread (frames lent, packets out)
 * @l2: tun mode: the Ethernet header to put in front (NULL for a tap)
 *
 * Before the cpumap is created (the worker opens with it); only
 * ucm_tun__sink_back()'s workers use it, each cpumap's for its life (set
 * it again for a later cpumap whose channel is another). The first call
 * also turns the tun's offloads on (TUNSETOFFLOAD), unless
 * UCM_TUN_F_NO_OFFLOAD: checksum, TSO4 and TSO6, and USO4 and USO6 where
 * the kernel has them (Linux 6.2); it logs what it got, once. A kernel
 * that takes none leaves the read path as with UCM_TUN_F_NO_OFFLOAD.
 * Return: 0, or -EINVAL (worker out of range, a tun without @l2, an
 * @l2 whose resolve_ifindex names no interface, whose src is a group
 * address, or whose dst, without resolve_ifindex, is all zeros or a group
 * address), -EBUSY (the worker is open).
 */
UCM_API int ucm_tun__set_back(struct ucm_tun *tun, uint32_t worker,
			      struct ucm_txq *txq, const struct ucm_tun_l2 *l2);

/**
 * ucm_tun__set_back_src() - the way back's source MAC from now on
 * @mac: 6 bytes: the NIC's address now
 *
 * For a NIC whose address changes while the workers run (an operator's
 * change; a VF given another by its PF, whose spoof check drops frames
 * from the old): it replaces ucm_tun__set_back()'s l2.src for every
 * worker, this cpumap's and later ones', each from its next read turn.
 * Any thread. Return: 0, or -EINVAL (@tun or @mac NULL, a tap: the
 * stack gives its frames their source, or a group address).
 */
UCM_API int ucm_tun__set_back_src(struct ucm_tun *tun, const uint8_t *mac);
/*
 * The statistics getters copy into the caller's @st of @sz bytes
 * (sizeof(*@st) as the caller was built): an older, smaller struct gets
 * its part; bytes past ours are zeroed. Return: 0, or -EINVAL (out of
 * range, @st NULL or @sz 0).
 */
/* The read path of worker @worker (0..UCM_TUN_MAX_WORKERS-1). */
UCM_API int ucm_tun__back_stats(const struct ucm_tun *tun, uint32_t worker,
				struct ucm_tun_back_stats *st, size_t sz);
/* Counters of queue @q: the sum over the workers that write to it. */
UCM_API int ucm_tun__queue_stats(const struct ucm_tun *tun, uint32_t q,
				 struct ucm_tun_stats *st, size_t sz);
/* Counters of worker @w (0..UCM_TUN_MAX_WORKERS-1). */
UCM_API int ucm_tun__worker_stats(const struct ucm_tun *tun, uint32_t w,
				  struct ucm_tun_stats *st, size_t sz);

/*
 * The way back's 0.2.0 names, kept for the programs written against them:
 * the same constants and functions under the names above.
 */
#define UCM_TUN_REV_BATCH	UCM_TUN_BACK_BATCH
#define UCM_TUN_REV_HEADROOM	UCM_TUN_BACK_HEADROOM
UCM_API const struct ucm_sink_ops *ucm_tun__sink_duplex(void);
UCM_API int ucm_tun__set_reverse(struct ucm_tun *tun, uint32_t worker,
				 struct ucm_txq *txq, const struct ucm_tun_l2 *l2);
UCM_API int ucm_tun__rev_stats(const struct ucm_tun *tun, uint32_t worker,
			       struct ucm_tun_back_stats *st, size_t sz);

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_TUN_H */
