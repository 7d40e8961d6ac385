/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_cpumap: the kernel's cpumap in userspace.
 *
 * One worker thread per configured CPU, pinned there, consumes frames from
 * its ring in batches of UCM_CPUMAP_BATCH, builds a packet descriptor (our
 * skb) in each frame's headroom, hands the whole batch to a sink (our
 * netif_receive_skb_list) and returns the frames to their pools in bulk.
 *
 * Producers (RX threads) never touch a worker ring per frame: each keeps a
 * bulk queue of UCM_CPUMAP_BULK_SIZE per worker, flushed into the worker's
 * ring when full and by ucm_cpumap_producer__flush() at the end of every RX
 * batch, with one ring reservation per bulk. A full ring sends the frame
 * straight back to the producer's own pool (direct: the producer owns it)
 * and counts an enqueue drop. A flush wakes each sleeping worker at most once.
 *
 * Threads: ucm_cpumap__create()/destroy() and producer create/destroy run
 * on a control thread. A producer is used by one thread at a time. Stats
 * may be read from any thread at any time. The worker threads block every
 * signal (UCM_CPUMAP_F_INLINE starts none): a program's signal handlers
 * run on its own threads, never in the middle of a worker's batch or its
 * sink's callbacks.
 */
#ifndef UCPUMAP_CPUMAP_H
#define UCPUMAP_CPUMAP_H

#include <stdint.h>

#include "ucpumap/pool.h"
#include "ucpumap/pkt.h"
#include "ucpumap/txq.h"

/* The cpumap's places of a frame (pool.h's enum ucm_frame_loc). */
#define UCM_LOC_BQ		(UCM_LOC_USER + 0)	/* a bulk queue */
#define UCM_LOC_WQ		(UCM_LOC_USER + 1)	/* a worker ring */
#define UCM_LOC_WORKER		(UCM_LOC_USER + 2)	/* a worker's batch, or its sink */
#define UCM_LOC_CPUMAP_END	(UCM_LOC_USER + 3)	/* the next layer's first */

#ifdef __cplusplus
extern "C" {
#endif

/* 8 descriptors == one cache line of bulk queue (CPU_MAP_BULK_SIZE). */
#define UCM_CPUMAP_BULK_SIZE		8
/* Worker dequeue batch (CPUMAP_BATCH). */
#define UCM_CPUMAP_BATCH		8
/* Worker ring: xdp-bench redirect-cpu's default, the kernel's sanity cap. */
#define UCM_CPUMAP_QSIZE_DEFAULT	2048
#define UCM_CPUMAP_QSIZE_MAX		16384
/* The smallest worker ring that takes a full bulk and its latency stamp. */
#define UCM_CPUMAP_QSIZE_MIN		16
/* UCM_CPUMAP_F_HOLD: packets a worker holds for its sink before handing
 * them over even though its ring is not empty: NAPI_POLL_WEIGHT, where the
 * kernel's cpumap flushes its GRO. A hand-over is at most
 * UCM_CPUMAP_HOLD_MAX + UCM_CPUMAP_BATCH - 1 packets. */
#define UCM_CPUMAP_HOLD_MAX		64
/* Workers are tracked in one 64-bit dirty mask per producer. */
#define UCM_CPUMAP_MAX_WORKERS		64

/*
 * What a worker hands its sink: our xdp_frame and skb, built by the worker
 * at the base of the frame (its headroom). The packet starts data_off
 * bytes into the frame, at least UCM_FRAME_HDR_ROOM. The bytes between the
 * header and the packet belong to the sink during xmit: the tun sink
 * writes its virtio_net header right before what it hands the kernel, so
 * each packet is one contiguous write (the kernel's XDP headroom, which
 * ucpumap's frames always have, plays the same part for an skb).
 *
 * The producer does not write it: a frame travels through the bulk queues
 * and the worker ring as one 64-bit descriptor, the frame handle plus the
 * packet's offset in the low bits (as in an AF_XDP RX descriptor) and its
 * length in the top 16, so an RX thread hands frames on without touching
 * their memory, and a frame's first cache line only moves to the worker.
 */
struct ucm_frame_hdr {
	uint16_t data_off;	/* frame base -> packet (Ethernet header) */
	uint16_t len;		/* packet length */
	uint16_t flags;		/* UCM_FRAME_F_* */
	/* The packet's bytes in this frame: len, or less with
	 * UCM_FRAME_F_CHAIN (the rest lie in its later frames) */
	uint16_t head_len;
	struct ucm_pkt pkt;	/* our skb */
};

/* A packet of several frames (UCM_XSK_F_SG): only head_len of its bytes
 * follow the header; ucm_frame_chain() lists the frames of the rest, and
 * they come home with this one. A UCM_SINK_F_KEEP sink returns them too,
 * by their frames' handles (ucm_umem__put_bulk() takes no other): each
 * part's ucm_desc_addr() (pool.h) rounded down to the frame size,
 * ucm_desc_addr(part) & ~(uint64_t)(frame_size - 1). */
#define UCM_FRAME_F_CHAIN	(1U << 0)

/**
 * ucm_frame_chain() - the later parts of a packet of several frames
 * @hdr: a packet with UCM_FRAME_F_CHAIN, as a sink or verdict gets it
 * @part: room for UCM_FRAME_CHAIN_MAX descriptors (ucm_desc_make(): the
 *        part's address in the UMEM and its length)
 *
 * Return: how many, 0 for a packet of one frame.
 */
#define UCM_FRAME_CHAIN_MAX	17
UCM_API uint32_t ucm_frame_chain(const struct ucm_frame_hdr *hdr, uint64_t *part);

/* Bytes a sink may write right before the packet (a virtio_net header is
 * 10 or 12). */
#define UCM_FRAME_SINK_ROOM	16
/* Smallest packet offset: the header, the sink's room, a cache line. */
#define UCM_FRAME_HDR_ROOM	\
	((sizeof(struct ucm_frame_hdr) + UCM_FRAME_SINK_ROOM + 63) & ~63u)

static inline void *ucm_frame_data(struct ucm_frame_hdr *hdr)
{
	return (char *)hdr + hdr->data_off;
}

enum ucm_sink_flags {
	/* The sink keeps every frame passed to xmit and returns it itself
	 * later (e.g. after a TX completion), with ucm_umem__put_bulk(). */
	UCM_SINK_F_KEEP = 1 << 0,
	/* wait() only polls @wake_fd and never reads it: the worker consumes
	 * what woke it. Such a sink may sleep with a pre-wake
	 * (UCM_CPUMAP_F_PREWAKE): @wake_fd is then an epoll set. */
	UCM_SINK_F_POLL_WAKE = 1 << 1,
};

/*
 * Where a worker's batches go. Every callback runs on the worker thread
 * of @worker (inline: on the producer's thread, as "worker" k).
 *
 * The contract:
 * - Size: @sz first, as in the opts structs: sizeof(struct ucm_sink_ops)
 *   as the sink was built (static const struct ucm_sink_ops my_ops = {
 *   .sz = sizeof(struct ucm_sink_ops), .xmit = ... }, or UCM_OPTS() for
 *   one on the stack, so its padding is zero). ucm_cpumap__create() and
 *   ucm_dp__create() copy the ops: callbacks past a smaller @sz read as
 *   absent; non-zero bytes past what the library knows, or @sz 0, are
 *   refused (-EINVAL). The caller's struct need not outlive the create.
 * - Frames: in xmit, frames[i] is packet i, its descriptor (our skb) in
 *   the frame's headroom, and addrs[i] its frame's handle in the UMEM
 *   (what ucm_umem__put_bulk() takes). The sink may read and write the
 *   packet and the UCM_FRAME_SINK_ROOM bytes before it, until xmit
 *   returns; then the worker returns every frame to its pool, whatever
 *   xmit said. Only a UCM_SINK_F_KEEP sink holds frames past xmit, and
 *   returns each itself, once, with ucm_umem__put_bulk(): until then they
 *   are out of their pools, and a UMEM is not destroyed under them.
 * - Pairing: close is called once for every worker whose open succeeded
 *   (or that had no open), after its ring has drained; never after a
 *   failed open. An inline producer's close runs in
 *   ucm_cpumap_producer__stop() on its thread, or, where that thread
 *   never stopped it, in ucm_cpumap__stop() on the caller's. A sink
 *   that wraps another forwards every callback, close included (the tun
 *   sink holds the worker's queue until close), and keeps its flags.
 * - It must not block for long: the worker's ring fills behind it.
 *
 * @open:  once, before the worker's loop (e.g. attach its tun queue);
 *         non-zero fails ucm_cpumap__create(). Optional.
 * @xmit:  the whole batch of parsed packets: at most UCM_CPUMAP_BATCH, or
 *         UCM_CPUMAP_HOLD_MAX + UCM_CPUMAP_BATCH - 1 with
 *         UCM_CPUMAP_F_HOLD, in arrival order. Returns how many of them it
 *         failed to deliver, or a negative errno when none was (counted as
 *         UCM_DROP_SINK); unless the sink has UCM_SINK_F_KEEP, every frame
 *         returns to its pool after xmit.
 * @flush: the worker's ring ran empty; release anything held. Optional.
 * @poll:  the other direction's work (e.g. the tun's packets out to the
 *         NIC), bounded per call: called after every batch and before the
 *         worker sleeps, so neither direction starves the other. Returns
 *         how much it did; 0 lets the worker sleep. Optional. Without
 *         @wait that sleep ends only at a producer's kick: the poll's own
 *         work waits for the other direction's traffic, so give @wait too.
 * @wait:  sleep until the sink has work for @poll or @wake_fd (an eventfd
 *         the cpumap's producers and stop write to) is readable; consume
 *         what made @wake_fd readable, unless the sink has
 *         UCM_SINK_F_POLL_WAKE (then only poll it: the worker reads it, and
 *         with UCM_CPUMAP_F_PREWAKE it is an epoll set that also turns
 *         readable at arrivals, whose events the worker takes after a
 *         wait() that returned 0: so return 0 whenever a poll of @wake_fd
 *         ended the wait). Returns 0 after a real sleep, or non-zero when
 *         it did not sleep. With @wait, the cpumap wakes the worker
 *         through @wake_fd instead of a futex. Optional.
 * @close: once, after the loop has drained the ring. Optional.
 */
struct ucm_sink_ops {
	size_t sz;	/* sizeof(struct ucm_sink_ops): see "Size" above */
	int (*open)(void *ctx, uint32_t worker);
	int (*xmit)(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		    const uint64_t *addrs, uint32_t n);
	void (*flush)(void *ctx, uint32_t worker);
	uint32_t (*poll)(void *ctx, uint32_t worker);
	int (*wait)(void *ctx, uint32_t worker, int wake_fd);
	void (*close)(void *ctx, uint32_t worker);
	uint32_t flags;
};
#define ucm_sink_ops__last_field flags

/* A sink that accepts every batch and does nothing with it. */
UCM_API extern const struct ucm_sink_ops ucm_sink_null;

enum ucm_cpumap_flags {
	/* Frames finished by a worker skip cache and recycle ring and go to
	 * their backing stacks: every allocation takes the slow path (the
	 * "before" of skb page_pool recycling). */
	UCM_CPUMAP_F_NO_RECYCLE = 1 << 0,
	/* No worker threads: each producer's thread runs the worker's work
	 * itself when it flushes (builds the descriptors, calls the sink,
	 * returns the frames): the XDP_PASS row, where the receiving CPU
	 * runs the stack. ncpus counts the producers; cpus is ignored;
	 * producer k is "worker" k (its sink queue and its counters). */
	UCM_CPUMAP_F_INLINE = 1 << 1,
	/* Workers hold parsed packets across batches and hand the sink
	 * everything held when UCM_CPUMAP_HOLD_MAX are held or the ring runs
	 * empty (the kernel cpumap's GRO flush policy): a coalescing sink
	 * (the tun's, UCM_TUN_F_COALESCE) then sees a flow's packets of up
	 * to 64 together, not 8. Nothing waits across an idle moment. */
	UCM_CPUMAP_F_HOLD = 1 << 2,
	/* No latency histograms (ucm_cpumap_worker_stats.wait_hist and
	 * sink_hist stay 0): the bulks go unstamped, which saves a ring
	 * entry per bulk and two clock reads per worker batch; for
	 * measuring what they cost. */
	UCM_CPUMAP_F_NO_LATENCY = 1 << 3,
	/* Pre-wake: an idle worker also wakes when an fd given to
	 * ucm_cpumap__prewake_on() turns readable (the sockets its packets
	 * arrive on), in the same softirq that wakes the RX thread that will
	 * flush them to it, as the kernel wakes its cpumap kthread: the
	 * worker's wake-up (a sleeping CPU's) no longer waits for the RX
	 * thread's. Every idle worker wakes at every arrival, so it is meant
	 * for maps whose arrivals are all (or mostly) for the worker woken:
	 * one worker. Not with inline workers, nor with a sink that sleeps
	 * on its own fds (wait()) unless it has UCM_SINK_F_POLL_WAKE. */
	UCM_CPUMAP_F_PREWAKE = 1 << 4,
	/* The map has one producer (one RX thread) at a time: the worker
	 * rings are single-producer (ring.h), so a flush reserves its
	 * slots with no atomic read-modify-write and the worker writes no
	 * free mark into the slots it takes. ucm_cpumap__producer_create()
	 * then refuses a second one while the first exists (EBUSY). ucm_dp
	 * sets it for one RX queue. */
	UCM_CPUMAP_F_ONE_PRODUCER = 1 << 5,
	/* No fair share: with several producers, one that floods a worker
	 * fills its ring and the others' bulks find it full as often as its
	 * own do, as in the kernel's cpumap. By default a producer that has
	 * put more than its share (1 / the producers sending into it lately)
	 * of a ring's recent entries in is refused once the ring is
	 * UCM_CPUMAP_FAIR_FILL full: the
	 * flood loses its excess at the ring's three quarters, and the room
	 * left takes the light producers' bulks. Counted as drops, and apart
	 * (ucm_cpumap_producer__shed()). */
	UCM_CPUMAP_F_NO_FAIR = 1 << 6,
	/* Lanes: each producer gets a single-producer ring of qsize
	 * entries into each worker, and the worker takes them in turn, a
	 * batch from each. No producer's flush meets another's (no shared
	 * reservation, no slot another CPU wrote last), and one that floods
	 * a worker fills only its own lane: the others' bulks never find it
	 * full, so the fair share is not needed. Up to
	 * UCM_CPUMAP_MAX_LANES producers at a time; each takes a lane in
	 * every worker (ncpus * qsize * 8 bytes), kept and handed to the
	 * next producer after it is destroyed. Not with UCM_CPUMAP_F_INLINE
	 * (no rings) nor UCM_CPUMAP_F_ONE_PRODUCER (one ring, already
	 * single-producer). */
	UCM_CPUMAP_F_LANES = 1 << 7,
};

/* UCM_CPUMAP_F_LANES: producers at a time, one per RX queue of a
 * 64-queue NIC (UCM_XSK_MAX_QUEUES). */
#define UCM_CPUMAP_MAX_LANES	64

/* The fair share's threshold, in quarters of the ring: below it every
 * producer's bulks go in; at or above it only those of producers within
 * their share. A quarter of the ring is left for them: 512 entries of the
 * default ring, some 57 bulks of 8 and their stamps. */
#define UCM_CPUMAP_FAIR_FILL	3

/* What a worker does with a packet (ucm_verdict_fn's answer). */
enum ucm_verdict {
	UCM_VERDICT_PASS = 0,	/* on to the sink */
	UCM_VERDICT_DROP = 1,	/* home to its pool, counted as UCM_DROP_VERDICT */
	/* Back out of the interface, as it is now (a userspace XDP_TX:
	 * reflect, answer, bounce): through the worker's TX channel
	 * (ucm_cpumap_opts.txqs) to its queue's TX ring; a packet of
	 * several frames whole (UCM_DESC_CHAIN), or dropped as
	 * UCM_DROP_CHAIN_TX where the channel takes fewer
	 * (ucm_txq__max_frames()). Without a channel, as UCM_VERDICT_DROP. */
	UCM_VERDICT_TX = 2,
};

/**
 * typedef ucm_verdict_fn - the application's code on each packet
 * @ctx: ucm_cpumap_opts.verdict_ctx
 * @worker: the worker it runs on (0 .. ncpus-1; inline: the producer's)
 * @frame: the packet, parsed: @frame->pkt says where its headers are,
 *         ucm_frame_data(@frame) is its first byte, @frame->len its length
 *
 * Runs on the worker thread, for every packet that parsed, in arrival
 * order, before the packet is held or handed to the sink: so the sink
 * (and coalescing) sees what the verdict left. Returns enum ucm_verdict:
 * UCM_VERDICT_TX sends it back out (with a TX channel), any other value
 * but UCM_VERDICT_PASS drops the packet.
 *
 * It may rewrite the packet in place: bytes within [data, data + len),
 * never the length; a packet of several frames (UCM_FRAME_F_CHAIN) has
 * [data, data + head_len) here, its headers among them, and the rest in
 * the frames ucm_frame_chain() lists. When it changes what the descriptor
 * records (the addresses, ports, protocol, IP lengths, VLAN tags) of a
 * packet of one frame, it parses the packet again
 * (ucm_pkt__parse(&frame->pkt, ucm_frame_data(frame), frame->len)) and
 * drops it unless that returns UCM_DROP_NONE (ucm_pkt__parse() reads one
 * buffer: a packet of several keeps its descriptor as it came);
 * checksums it breaks are its to fix (csum.h); what it does to @frame's
 * start, lengths and flags is undone. It must not keep @frame: after it returns, the
 * frame is the worker's. It must not block: the worker's ring fills
 * behind it.
 */
typedef int (*ucm_verdict_fn)(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame);

struct ucm_cpumap_opts {
	size_t sz;
	const int *cpus;	/* one worker per entry, pinned to that CPU */
	uint32_t ncpus;
	/* Worker ring entries; power of two, default 2048, max 16384. A
	 * bulk takes one entry more than its packets for its latency stamp
	 * (not with UCM_CPUMAP_F_NO_LATENCY): full bulks of 8 fill a ring
	 * with 8/9 of qsize packets. */
	uint32_t qsize;
	const struct ucm_sink_ops *sink;
	void *sink_ctx;
	uint32_t flags;		/* enum ucm_cpumap_flags */
	ucm_verdict_fn verdict;	/* NULL: every parsed packet passes */
	void *verdict_ctx;
	/* UCM_VERDICT_TX: worker i's TX channel, txqs[i] (ncpus of them, or
	 * NULL). The worker sends on it (txq.h: ucm_txq__send()), so a sink
	 * that also sends on it (the tun's read path) must run on the same
	 * worker: one producer. A frame leaves on the TX ring its channel
	 * feeds, whichever queue received it: with more than one queue, only
	 * a frame of that queue's own pool may be sent back out, or
	 * ucm_xsk__destroy() cannot account for the frames still on a TX
	 * ring at stop (-EUCLEAN). ucm_dp takes one queue with
	 * UCM_DP_F_VERDICT_TX for this reason. */
	struct ucm_txq *const *txqs;
	/* On each worker once its sink is open (api.h: ucm_thread_fn). */
	ucm_thread_fn worker_init;
	void *worker_init_ctx;
	/* A worker whose ring ran empty looks again for up to this long
	 * before it sleeps (its sink's poll() too): the next bulk then
	 * costs no wake-up, and its producer no system call; 0: it sleeps
	 * at once (a host that saves power). At most UCM_SPIN_US_MAX. */
	uint32_t spin_us;
	size_t :0;
};
#define ucm_cpumap_opts__last_field spin_us
/* The longest spin: beyond a millisecond it is busy polling. */
#define UCM_SPIN_US_MAX	1000

/**
 * struct ucm_cpumap_enqueue_stats - per (producer, worker), after the
 * xdp_cpumap_enqueue tracepoint
 * @processed: packets flushed towards the worker (drops included); a
 *             packet of several frames (UCM_DESC_CHAIN) counts once, here
 *             and in every packet count below
 * @drops: packets the worker ring had no room for, or the fair share
 *         refused (UCM_CPUMAP_F_NO_FAIR)
 * @events: bulk flushes; processed / events is the bulk average
 * @wakeups: times this producer woke the sleeping worker
 * @shed: of @drops, those the fair share refused
 *        (ucm_cpumap_producer__shed()); the rest found the ring full
 */
struct ucm_cpumap_enqueue_stats {
	uint64_t processed;
	uint64_t drops;
	uint64_t events;
	uint64_t wakeups;
	uint64_t shed;
};

/**
 * struct ucm_cpumap_worker_stats - per worker, after xdp_cpumap_kthread
 * @processed: packets dequeued
 * @tx: packets the verdict sent back out (UCM_VERDICT_TX), handed to the
 *      TX channel; what the channel had no room for it counts (send_full)
 * @drops: packets not delivered (malformed, or refused by the sink)
 * @sched: times the worker went to sleep on an empty ring
 * @drop_reason: @drops by enum ucm_drop_reason
 * @xmits: batches handed to the sink; delivered / xmits is the average
 * @flush_empty: UCM_CPUMAP_F_HOLD: hand-overs because the ring ran empty
 * @flush_full: UCM_CPUMAP_F_HOLD: hand-overs because UCM_CPUMAP_HOLD_MAX
 *              packets were held
 * @sleep_ns: time asleep on an empty ring (ns, CLOCK_MONOTONIC, read
 *            around each sleep, never per packet); the worker's busy share
 *            of an interval is 1 - its sleep_ns over the interval
 * @wait_hist: per bulk a producer flushed to this worker, the time from
 *             the flush to the worker's dequeue (in its ring, and the
 *             worker's wake-up when it slept): UCM_LAT_BUCKETS log2
 *             buckets of us (api.h). Its sum is the bulks dequeued (a
 *             bulk's stamp is an entry of its own in the ring, before its
 *             packets: one that a full ring took without them counts).
 *             With UCM_CPUMAP_F_INLINE a bulk waits for nothing: every
 *             one is in the first bucket.
 * @sink_hist: per bulk, the time from the dequeue to the sink's
 *             completion of its packets (xmit returned: the tun sink's
 *             writes are done by then), or to their drop: the hold, the
 *             parsing, the sink. Every bulk counted in @wait_hist is
 *             counted here once its packets are gone. Inline, the time
 *             runs from the producer's first bulk of its RX batch (two
 *             clock reads per batch: there and at its end).
 * @wait_ns, @sink_ns: the sums of those times, in ns (a histogram's _sum)
 * Neither with UCM_CPUMAP_F_NO_LATENCY.
 * @prewakes: UCM_CPUMAP_F_PREWAKE: sleeps an arrival ended before any
 *            producer's kick: the wake-ups the pre-wake adds (when the
 *            worker then finds no bulk, it sleeps again), among them a
 *            wait an arrival while the worker was awake ended at once
 *            (counted in @sched too)
 */
struct ucm_cpumap_worker_stats {
	uint64_t processed;
	uint64_t tx;
	uint64_t drops;
	uint64_t sched;
	uint64_t drop_reason[UCM_DROP_REASONS_MAX];
	uint64_t xmits;
	uint64_t flush_empty;
	uint64_t flush_full;
	uint64_t sleep_ns;
	uint64_t wait_hist[UCM_LAT_BUCKETS];
	uint64_t sink_hist[UCM_LAT_BUCKETS];
	uint64_t wait_ns;
	uint64_t sink_ns;
	uint64_t prewakes;
};

struct ucm_cpumap;
struct ucm_cpumap_producer;

/**
 * ucm_cpumap__create() - start the workers
 *
 * Returns once every worker runs (its sink is open), so nothing enqueued
 * afterwards can be missed. @umem must outlive the map. Return: the map, or NULL with errno (EINVAL for
 * bad options, with a log line naming the fix).
 */
UCM_API struct ucm_cpumap *ucm_cpumap__create(struct ucm_umem *umem,
					      const struct ucm_cpumap_opts *opts);

/**
 * ucm_cpumap__prewake_on() - wake idle workers on @fd's arrivals too
 * @fd: a file whose readiness means packets for the workers are coming
 *      (an RX queue's XSK socket: ucm_xsk_queue__fd()); watched
 *      edge-triggered, never read. It must stay open while the map runs.
 *
 * Return: 0, -EINVAL without UCM_CPUMAP_F_PREWAKE, or -errno from
 * epoll_ctl() (nothing added then).
 */
UCM_API int ucm_cpumap__prewake_on(struct ucm_cpumap *map, int fd);

/**
 * ucm_cpumap__destroy() - flush, drain and stop
 *
 * Call once producer threads have stopped. Flushes what producers still
 * hold, lets each worker drain its ring into the sink, joins the workers
 * and frees the map (producers included). Every frame is back in a pool
 * afterwards (or kept by a UCM_SINK_F_KEEP sink), also what a producer
 * enqueued after ucm_cpumap__stop() (said, undelivered), but for those
 * in the UCM_VERDICT_TX channels: those are ucm_txq__reclaim()'s, and
 * the XSK TX ring's completions'.
 */
UCM_API void ucm_cpumap__destroy(struct ucm_cpumap *map);

/**
 * ucm_cpumap__stop() - destroy's first half: flush, drain, join the
 * workers, but keep the map and its producers, so that the final counters
 * can still be read. ucm_cpumap__destroy() afterwards frees it.
 */
UCM_API void ucm_cpumap__stop(struct ucm_cpumap *map);

/**
 * ucm_cpumap__producer_create() - a bulk-queue set for one RX thread
 * @pool: the producer's own pool, where enqueue drops go back directly
 *
 * Return: the producer, or NULL with errno set: EINVAL (also for a map
 * ucm_cpumap__stop() stopped), ENOMEM, ENOSPC
 * (inline: every worker has its producer; UCM_CPUMAP_F_LANES: every lane
 * has one), EBUSY (UCM_CPUMAP_F_ONE_PRODUCER and the map's producer
 * exists: destroy it first).
 */
UCM_API struct ucm_cpumap_producer *
ucm_cpumap__producer_create(struct ucm_cpumap *map, struct ucm_pool *pool);
UCM_API void ucm_cpumap_producer__destroy(struct ucm_cpumap_producer *prod);

/**
 * ucm_cpumap_producer__stop() - the producer thread's last call
 *
 * Flushes what is staged; with UCM_CPUMAP_F_INLINE also returns the
 * frames held and closes its sink, on the thread that opened it. The
 * producer stays registered (its counters readable) until the map goes.
 */
UCM_API void ucm_cpumap_producer__stop(struct ucm_cpumap_producer *prod);

/**
 * ucm_cpumap_producer__enqueue() - stage a packet for a worker (bq_enqueue)
 * @addr: the packet's address: frame handle + offset of its first byte, as
 *        an AF_XDP RX descriptor gives it
 * @len: its length
 *
 * The frame must belong to the producer's pool. Its memory is not touched
 * here: a packet that runs past its frame, or leaves no headroom for the
 * frame header (offset < UCM_FRAME_HDR_ROOM), is dropped by the worker as
 * UCM_DROP_FRAME_BOUNDS.
 *
 * Return: 0, or -EINVAL (nothing counted, the frame stays with the caller)
 * for a worker index out of range, an address outside the UMEM, a frame
 * that is not the producer's pool's, @len above 65535, or UCM_DESC_CHAIN
 * on a frame whose list (as ucm_xsk_queue__rx() writes it) is not one: no
 * room for it in front of the packet, no later frame or more than a packet
 * takes, one outside the UMEM or the pool, a part that runs past its frame,
 * one listed twice, or parts (the first frame's head_len and the later
 * frames' lengths) that do not add up to @len.
 */
UCM_API int ucm_cpumap_producer__enqueue(struct ucm_cpumap_producer *prod,
					 uint32_t worker, uint64_t addr,
					 uint32_t len);

/* End of an RX batch: flush every non-empty bulk queue, wake each sleeping
 * worker once (xdp_do_flush()). */
UCM_API void ucm_cpumap_producer__flush(struct ucm_cpumap_producer *prod);

UCM_API uint32_t ucm_cpumap__nworkers(const struct ucm_cpumap *map);
/* Worker @w's CPU; -1 for an inline map's (it runs on its producer's
 * thread), -EINVAL out of range. */
UCM_API int ucm_cpumap__worker_cpu(const struct ucm_cpumap *map, uint32_t w);
/*
 * The statistics getters copy into the caller's @st of @sz bytes
 * (sizeof(*@st) as the caller was built): an older, smaller struct gets
 * its part; bytes past ours are zeroed. Return: 0, or -EINVAL (@w out of
 * range, @st NULL or @sz 0).
 */
UCM_API int ucm_cpumap__worker_stats(const struct ucm_cpumap *map, uint32_t w,
				     struct ucm_cpumap_worker_stats *st,
				     size_t sz);
UCM_API int
ucm_cpumap_producer__enqueue_stats(const struct ucm_cpumap_producer *prod,
				   uint32_t w,
				   struct ucm_cpumap_enqueue_stats *st, size_t sz);
/* Frames of @prod's towards worker @w that the fair share refused (in
 * ucm_cpumap_enqueue_stats.drops too); 0 for a bad @w. */
UCM_API uint64_t ucm_cpumap_producer__shed(const struct ucm_cpumap_producer *prod,
					   uint32_t w);

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_CPUMAP_H */
