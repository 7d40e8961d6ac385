/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_dp: the whole datapath of one interface, as one object.
 *
 *   NIC queues -> XDP steering program -> XSK sockets -> one RX thread per
 *   queue (our NAPI: owner of the queue's frame pool) -> cpumap workers
 *   (one per CPU) -> tun or tap -> the kernel's stack
 *
 * and, two-way, the way back: each worker also reads its tun queue into
 * frames its queue's RX thread lends it, and that RX thread puts them on
 * the queue's XSK TX ring and brings the completed frames home in bulk.
 *
 * Life cycle (one control thread):
 *
 *   ucm_dp__create()   program loaded and attached (nothing redirected yet),
 *                      sockets bound, tun, the way back's channels, workers
 *   ucm_dp__start()    RX threads, then each socket into the XSK map: the
 *                      kernel redirects from here on
 *   ucm_dp__stop()     sockets out of the map, RX threads stop (flushing
 *                      their bulk queues), workers drain into the tun, the
 *                      way back's channels give their frames back, program
 *                      off; the counters are final and checked (every
 *                      packet received is delivered or a counted drop);
 *                      tun closed, sockets closed, every frame audited home
 *   ucm_dp__destroy()  memory (stops first if still running)
 *
 * Threads the object starts: one RX thread per queue (pinned when
 * rx_cpus is given), one worker per CPU (pinned). Every thread it starts
 * blocks all signals: signals stay with the application's threads.
 * The statistics getters may be called from any thread at any time; after
 * ucm_dp__stop() they return the final counters.
 *
 * Errors: 0 or a negative errno (also in errno); create returns NULL with
 * errno set. Every failure says why in the log (ucm_set_print()), naming
 * the fix, and leaves nothing attached.
 */
#ifndef UCPUMAP_DP_H
#define UCPUMAP_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ucpumap/api.h"
#include "ucpumap/cpumap.h"
#include "ucpumap/pool.h"
#include "ucpumap/tun.h"
#include "ucpumap/txq.h"
#include "ucpumap/xsk.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ucm_dp_flags {
	/* A tap: frames go whole (L2), not IP datagrams; the tap takes the
	 * interface's MAC address, to which they are addressed. */
	UCM_DP_F_TAP = 1 << 0,
	/* The way back: what the kernel routes into the tun leaves through
	 * the interface (to the next hop the kernel's tables give, or to
	 * peer_mac). With a tap, ARP and neighbour discovery go to it. */
	UCM_DP_F_TWO_WAY = 1 << 1,
	/* No workers: each RX thread writes to the tun itself (the kernel's
	 * XDP_PASS, for comparison). Not with UCM_DP_F_TWO_WAY. */
	UCM_DP_F_INLINE = 1 << 2,
	/* Our GRO: the tun merges each flow's held packets into GSO
	 * super-packets (UCM_TUN_F_COALESCE). */
	UCM_DP_F_COALESCE = 1 << 3,
	/* The "before" of the kernel patches ucpumap reproduces, for
	 * comparison: workers release frames to the backing stack, one
	 * write per packet into the tun, bulk returns never into the
	 * owner's cache (cpumap.h, tun.h, pool.h). */
	UCM_DP_F_NO_RECYCLE = 1 << 4,
	UCM_DP_F_NO_BATCH = 1 << 5,
	UCM_DP_F_NO_DIRECT_BULK = 1 << 6,
	/* Busy-poll the device (UCM_XSK_F_BUSY_POLL): an idle RX thread
	 * runs its NAPI poll itself for spin_us, or UCM_DP_BUSY_POLL_US,
	 * before it sleeps. */
	UCM_DP_F_BUSY_POLL = 1 << 7,
	/* Generic (skb) XDP instead of native. */
	UCM_DP_F_XDP_SKB = 1 << 8,
	/* Replace another XDP program already on the interface. */
	UCM_DP_F_REPLACE = 1 << 9,
	/* Bring your own XDP program: the application loads and attaches
	 * it, and gives its XSKMAP (ucm_dp_opts.xsks_map_fd), keyed by queue
	 * id; ucm_dp loads no program, puts each socket into that map at
	 * start and takes it out at stop, and leaves the program alone. A
	 * program that writes struct ucm_xdp_meta (steer.h) in front of a
	 * packet picks its worker, unless steer_fn is given (it picks every
	 * packet's); for the others steer_policy does, on the RX thread.
	 * Not with XDP_SKB or REPLACE, which are
	 * about attaching ours. The program must redirect with XDP_PASS as
	 * bpf_redirect_map()'s fallback: a queue out of the map (stopped,
	 * or its RX thread gave up) then goes to the kernel's stack, not
	 * dropped (a missing key aborts otherwise). The map's fd, and the
	 * verdict, steer and thread_init contexts, must stay valid until
	 * ucm_dp__stop() returns. */
	UCM_DP_F_OWN_XDP = 1 << 10,
	/* The verdict may send packets back out (UCM_VERDICT_TX): each
	 * worker gets a TX channel to the queue's RX thread, as two-way
	 * does, and the frames that takes. One queue only, for now: a frame
	 * must leave on the queue whose pool it belongs to. */
	UCM_DP_F_VERDICT_TX = 1 << 11,
	/* No latency histograms: the XDP program does not stamp arrivals
	 * (UCM_STEER_F_STAMP) and the cpumap does not stamp its bulks
	 * (UCM_CPUMAP_F_NO_LATENCY); for measuring what they cost. */
	UCM_DP_F_NO_LATENCY = 1 << 12,
	/* The tun's workers hand over what they took at each batch of up to
	 * 8 (the kernel cpumap's CPUMAP_BATCH), not holding up to 64 for one
	 * submission (UCM_CPUMAP_F_HOLD: the default with the tun, held
	 * until 64 wait or the ring runs empty); for comparison. Coalescing
	 * holds all the same; a sink of one's own is never handed a hold. */
	UCM_DP_F_NO_HOLD = 1 << 13,
	/* Two-way: the tun's read path takes no offloads
	 * (UCM_TUN_F_NO_OFFLOAD): one MTU-sized packet per read, every
	 * checksum done by the kernel; for comparison. */
	UCM_DP_F_NO_OFFLOAD = 1 << 14,
	/* Two-way with offloads: the way back computes every checksum
	 * itself, not leaving them to the kernel or the device through
	 * AF_XDP TX metadata (UCM_XSK_F_TX_CSUM: Linux 6.11, where the
	 * device takes the requests); for comparison. */
	UCM_DP_F_NO_TX_CSUM = 1 << 15,
	/* Several queues: no fair share of the worker rings between their
	 * RX threads (UCM_CPUMAP_F_NO_FAIR): a queue that floods a worker
	 * then costs the others their packets too, as in the kernel's
	 * cpumap; for comparison. */
	UCM_DP_F_NO_FAIR_SHARE = 1 << 16,
	/* Several queues: each RX thread flushes into a lane of its own in
	 * every worker, and the workers take the lanes in turn
	 * (UCM_CPUMAP_F_LANES): no ring shared between RX threads, and so
	 * no fair share needed. With one queue (or UCM_DP_F_INLINE) it
	 * changes nothing: the one ring is single-producer already. */
	UCM_DP_F_LANES = 1 << 17,
};
/* Every UCM_DP_F_* flag: ucm_dp__create() refuses any other bit, so a
 * flag added to the enum must be added here too. */
#define UCM_DP_F_MASK							\
	((uint32_t)(UCM_DP_F_TAP | UCM_DP_F_TWO_WAY | UCM_DP_F_INLINE |	\
		    UCM_DP_F_COALESCE | UCM_DP_F_NO_RECYCLE |		\
		    UCM_DP_F_NO_BATCH | UCM_DP_F_NO_DIRECT_BULK |	\
		    UCM_DP_F_BUSY_POLL | UCM_DP_F_XDP_SKB |		\
		    UCM_DP_F_REPLACE | UCM_DP_F_OWN_XDP |		\
		    UCM_DP_F_VERDICT_TX | UCM_DP_F_NO_LATENCY |		\
		    UCM_DP_F_NO_HOLD | UCM_DP_F_NO_OFFLOAD |		\
		    UCM_DP_F_NO_TX_CSUM | UCM_DP_F_NO_FAIR_SHARE |	\
		    UCM_DP_F_LANES))

/* Defaults of the options, and why. */
/* The sockets' own: it covers ucm_dp__frames_needed() of the defaults
 * below one way (5120), and two-way up to four workers per queue (8192). */
#define UCM_DP_FRAMES_DEFAULT		UCM_XSK_FRAMES_DEFAULT
/* A page per frame: it holds an MTU of 3818 (ucm_dp_opts.mtu). */
#define UCM_DP_FRAME_SIZE_DEFAULT	4096
/* 16 RX batches (UCM_XSK_RX_BATCH); with the fill ring (twice this), a
 * worker ring and the way back, within UCM_DP_FRAMES_DEFAULT. */
#define UCM_DP_RX_RING_DEFAULT		1024
/* Where packets take several frames (an MTU above what a frame holds) and
 * frames_per_queue and rx_size are left to the library: a descriptor a
 * frame, so at MTU 9000 in 4096-byte frames 1024 hold 341 packets, fewer
 * than a TCP sender keeps in flight with tcp_wmem's 4 MiB (some 460
 * segments of 8948 bytes); 2048 hold 682. The frames per queue then:
 * 16384 one-way or two-way with up to 3 workers a queue, 32768 with 4 to
 * 19, 65536 with 20 to 51 (with 1024: 16384 up to 6 workers). */
#define UCM_DP_RX_RING_CHAIN		2048
/* The common jumbo-frame MTU: the tun's largest. */
#define UCM_DP_MTU_MAX			9000
/* ucpumapd's --spin-us: see ucm_dp_opts.spin_us (the library's is 0). */
#define UCM_DP_SPIN_US_DEFAULT	0
/*
 * With UCM_DP_F_BUSY_POLL and no spin_us, how long an idle RX thread polls
 * the device before it sleeps. Preferred busy polling leaves the device's
 * interrupts off for its gro_flush_timeout after each poll, so what comes
 * in a gap shorter than that waits for the timer unless the thread still
 * polls: the gro_flush_timeout given with napi_defer_hard_irqs in
 * the NIC runbook in docs/BENCHMARKING.md.
 */
#define UCM_DP_BUSY_POLL_US	200
/* ucm_dp_opts.prewake: the worker's pre-wake (cpumap.h,
 * UCM_CPUMAP_F_PREWAKE). Every idle worker wakes at every arrival on any
 * queue, so it pays where the arrivals are all for the worker woken. */
enum ucm_dp_prewake {
	UCM_DP_PREWAKE_OFF = 0,
	/* Not with UCM_DP_F_INLINE, nor with a sink that reads its wake fd
	 * in wait() (one without UCM_SINK_F_POLL_WAKE). Two-way workers
	 * sleep in the tun's io_uring, which polls the pre-wake's set. */
	UCM_DP_PREWAKE_ON,
	/* On where every arrival is for the one worker and it only waits
	 * for them (one worker, one way, and where ON is allowed), else off:
	 * ucpumapd's default. A two-way worker also sleeps between the way
	 * back's turns, where a pre-wake is mostly a wake-up more: ON. */
	UCM_DP_PREWAKE_AUTO,
};

/* The threads ucm_dp starts, for ucm_dp_opts.thread_init. */
enum ucm_dp_thread {
	UCM_DP_THREAD_RX = 1,	/* an RX thread (@idx: the queue's index in queues) */
	UCM_DP_THREAD_WORKER,	/* a worker (@idx: the worker) */
	UCM_DP_THREAD_RESOLVER,	/* two-way over a tun, next hops from the kernel:
				 * a worker's resolver (@idx: the worker); it
				 * needs CAP_NET_ADMIN (RTM_NEWNEIGH) */
};
/* On each thread ucm_dp starts, once its own set-up is done and before its
 * loop (@kind: enum ucm_dp_thread): to drop the thread's capabilities
 * (none of the RX threads' or workers' run time needs one, but an RX
 * thread that gives up takes its socket out of the XSK map, which needs
 * CAP_BPF or CAP_SYS_ADMIN before Linux 5.19 where
 * kernel.unprivileged_bpf_disabled is not 0: there, without it, its
 * queue's traffic goes to a socket nobody reads), name it, set
 * its scheduling. It runs during ucm_dp__create() (workers, resolvers)
 * and ucm_dp__start() (RX threads), before either returns; it must not
 * block, and cannot fail a thread: it records a failure for the control
 * thread to act on. */
typedef void (*ucm_dp_thread_fn)(void *ctx, uint32_t kind, uint32_t idx);

struct ucm_dp_opts {
	size_t sz;
	const char *ifname;		/* required */
	const char *tun_name;		/* created, or attached; required
					 * unless a sink of one's own */
	const uint32_t *queues;		/* default: queue 0 */
	uint32_t nqueues;
	/* Worker i on cpus[i]; default (ucm_dp__default_cpus()): every CPU
	 * this process may use but CPU 0 (which takes the RX work), only those
	 * of the device's NUMA node when it has some, or CPU 0 alone. Ignored
	 * inline. */
	const int *cpus;
	uint32_t ncpus;
	/* RX thread i on rx_cpus[i % n_rx_cpus], each CPU online and in the
	 * calling thread's affinity mask (else -EINVAL); default: not
	 * pinned. */
	const int *rx_cpus;
	uint32_t n_rx_cpus;
	uint32_t steer_policy;		/* enum ucm_steer_policy; 0: FIXED */
	/* SYMMETRIC, IPV4, IPV6 (steer.h). Where IPv6 is off on the tun,
	 * IPv6 stays with the kernel (said); IPV6 alone: -EINVAL; with
	 * UCM_DP_F_OWN_XDP, said. */
	uint32_t steer_flags;
	uint32_t fixed_worker;		/* UCM_STEER_FIXED's worker */
	uint32_t xsk_mode;		/* enum ucm_xsk_mode */
	uint32_t frames_per_queue;	/* power of two; UCM_DP_FRAMES_DEFAULT */
	/* 2048 or 4096; UCM_DP_FRAME_SIZE_DEFAULT */
	uint32_t frame_size;
	uint32_t rx_size;		/* power of two; UCM_DP_RX_RING_DEFAULT,
					 * UCM_DP_RX_RING_CHAIN for packets of
					 * several frames without
					 * frames_per_queue */
	uint32_t qsize;			/* worker ring entries; UCM_CPUMAP_QSIZE_DEFAULT */
	/* The tun's MTU; default: what a frame holds after the XDP headroom,
	 * Ethernet and two VLAN tags, or the interface's where that is more
	 * (packets of several frames, both ways), at most UCM_DP_MTU_MAX, and
	 * two-way at most the interface's. Given, below 68 (the kernel's
	 * least for IPv4; without a sink of one's own) or more than
	 * UCM_DP_MTU_MAX is refused (EINVAL), and two-way more than the interface's MTU
	 * (ERANGE: the way back could not send what the kernel routes into
	 * the tun). */
	uint32_t mtu;
	/* Two-way over a tun: the next hop's MAC, instead of the kernel's
	 * routing and neighbour tables; NULL: from the kernel. */
	const uint8_t *peer_mac;
	/* A sink of one's own instead of the tun (cpumap.h: struct
	 * ucm_sink_ops): tun_name is then not used, and the tun's flags
	 * (TAP, TWO_WAY, NO_BATCH, COALESCE) are refused, as is a sink that
	 * keeps frames (UCM_SINK_F_KEEP). The ops are copied at create (their
	 * .sz set: cpumap.h, "Size"); sink_ctx must outlive the datapath. */
	const struct ucm_sink_ops *sink;
	void *sink_ctx;
	/* The application's code on each packet, on the workers (cpumap.h:
	 * ucm_verdict_fn: pass or drop, rewrite in place), and its choice
	 * of each packet's worker, on the RX threads (steer.h: ucm_steer_fn,
	 * instead of steer_policy). NULL: none. */
	ucm_verdict_fn verdict;
	void *verdict_ctx;
	ucm_steer_fn steer_fn;
	void *steer_ctx;
	int xsks_map_fd;		/* UCM_DP_F_OWN_XDP: the program's XSKMAP */
	uint32_t flags;			/* enum ucm_dp_flags */
	ucm_dp_thread_fn thread_init;	/* NULL: none */
	void *thread_init_ctx;
	/* An idle RX thread and worker look again for this long before they
	 * sleep (ucm_xsk_queue__spin(), ucm_cpumap_opts.spin_us): a packet
	 * that comes meanwhile costs no wake-up. 0: they sleep at once (a
	 * host that saves power). At most UCM_SPIN_US_MAX. With
	 * UCM_DP_F_BUSY_POLL the RX threads' look polls the device, and 0
	 * is UCM_DP_BUSY_POLL_US for them. */
	uint32_t spin_us;
	/* enum ucm_dp_prewake: whether an idle worker is also woken by the
	 * arrivals on the queues' XSK sockets, with the RX thread rather than
	 * after it (UCM_CPUMAP_F_PREWAKE). 0: off. */
	uint32_t prewake;
	/* Packets of several frames (an MTU more than a frame holds): the
	 * frames one may take on the way in, 1 to UCM_XSK_MAX_FRAGS; a
	 * longer one is dropped (rx_chain_long), and the frames per queue
	 * grow for this many. 0: UCM_XSK_MAX_FRAGS. */
	uint32_t max_frags;
	/* The user a tun created here belongs to (ucm_tun_opts.owner): the
	 * user a daemon runs as after it gives up root. 0: the effective
	 * user. */
	uint32_t tun_owner;
	size_t :0;
};
#define ucm_dp_opts__last_field tun_owner

/**
 * struct ucm_dp_stats - the whole datapath, summed over queues and workers
 *
 * The way in: @rx = @delivered + @rx_bad_desc + @rx_chain_drops +
 * @rx_steer_err + @enqueue_drops + @worker_drops + @verdict_tx once
 * stopped (ucm_dp_stats__violations()).
 * @rx: packets; one of several frames (multi-buffer) counts once, at its
 *      end (ucm_xsk_stats.rx_packets): a reading never goes back, nor
 *      does @tx's (tx_packets). While it runs, (a sink of one's own)
 *      @delivered is a counter less others, which a reading can catch in
 *      the middle of a batch: a few tens low for a moment, never below 0;
 *      final once stopped.
 * @rx_chains: of them, packets of several frames handed on
 * @rx_chain_drops: packets of several frames dropped at the RX ring
 *                  (ucm_xsk_stats: rx_chain_long, _cut, _bad, _nosg)
 * @verdict_tx: packets the verdict sent back out (UCM_VERDICT_TX), handed
 *              to the TX channels; they go on as the way back's do
 * @delivered: what the sink took: the tun's @tun_packets, or for a sink
 *             of one's own what the workers processed and neither dropped
 *             nor sent back out
 * @rx_bad_desc, @rx_steer_err: the RX rings (ucm_xsk_stats)
 * @enqueue_processed, @enqueue_drops, @enqueue_events: the bulk queues
 *                     (ucm_cpumap_enqueue_stats); drops: worker ring full,
 *                     or over the queue's fair share of it
 * @enqueue_shed: of @enqueue_drops, the fair share's (several queues,
 *                without UCM_DP_F_NO_FAIR_SHARE; ucm_cpumap_enqueue_stats.shed)
 * @worker_processed, @worker_drops, @worker_drop_reason: the workers
 * @tun_*: the writes into the tun (ucm_tun_stats)
 *
 * The way back (two-way, and the verdict's): @back_read = the packets read
 * from the tun, handed on or dropped there (@back_drop_bad: offload, too
 * big, not IP, no next hop, to the tun's own link (link-local, the
 * kernel's MLD and router solicitations), reading stopped with them in
 * hand);
 * @back_read - @back_drop_bad + @verdict_tx = @back_channel_sent +
 * @back_channel_full; of the sent, @back_channel_collected reached the TX ring's turn: @tx went on
 * it, @tx_drops found it full or were refused (ucm_xsk_stats.tx_ring_full,
 * tx_bad_desc); these count packets. The ring gives frames back one at a
 * time: @tx_completed and @tx_pending count frames, and
 * @tx + @tx_chain_more = @tx_completed + @tx_pending.
 * @tx_chains: of @tx, packets of several frames (multi-buffer AF_XDP)
 * @tx_chain_more: the frames after the first of each of them
 * @tx_comp_direct: completions straight into the owner's cache (direct
 *                  bulk recycling).
 *
 * @state: UCM_DP_S_* bits.
 * @worker_sleep_ns: the workers' time asleep on an empty ring, summed
 *                   (ucm_cpumap_worker_stats.sleep_ns): over an interval of
 *                   T seconds and N workers, 1 - worker_sleep_ns / (N T 1e9)
 *                   is their busy share
 * @rx_hist, @wait_hist, @sink_hist: the latency histograms, summed over
 *            the queues (ucm_xsk_stats.rx_hist: arrival to flush) and the
 *            workers (ucm_cpumap_worker_stats: flush to dequeue, dequeue
 *            to the sink's completion); UCM_LAT_BUCKETS log2 buckets of
 *            us (api.h), one count per bulk or RX batch
 * @rx_lat_ns, @wait_ns, @sink_ns: their sums of times, ns
 * @prewakes: the workers' pre-wakes (ucm_cpumap_worker_stats), summed
 * @back_channel_waits: the way back stopped reading, its TX channel full
 *                      (ucm_tun_back_stats.channel_waits): back-pressure,
 *                      not drops
 * @back_super, @back_segments, @back_csum_completed: the way back's
 *            offloads (ucm_tun_back_stats.super_packets, segments,
 *            csum_completed): super-packets read and the segments cut
 *            from them, which back_read counts as packets, and partial
 *            checksums completed
 * @back_csum_offloaded: packets the way back sent with their checksum
 *            left to the kernel or the device (ucm_tun_back_stats.csum_offloaded)
 * @rx_sleeps: the RX threads' sleeps, summed (ucm_xsk_stats.sleeps)
 * @rx_wake_rx, @rx_wake_channel, @rx_wake_stop, @rx_wake_timeout: what
 *            ended them (ucm_xsk_stats.wake_rx, wake_tx, wake_fd,
 *            wake_timeout): an arrival, a worker's send or ask for frames
 *            on a TX channel, ucm_dp__stop() (an RX thread asleep when it
 *            came), the timeout; a sleep that several ended counts in each
 * @tun_csum_partial: of @tun_packets, those written with their checksum
 *            left to the kernel: their sender left it partial (its checksum
 *            offload; ucm_tun_stats.csum_partial)
 * @xdp_pass: by reason (enum ucm_steer_pass), the frames our XDP program
 *            left to the kernel before they were ours: not in @rx, nor in
 *            any equation (0 with UCM_DP_F_OWN_XDP; ucm_xdp__pass_stats())
 * @xdp_pass_err: 0, or why @xdp_pass could not be read (-errno; -EPERM:
 *            a bpf(2) lookup refused, before Linux 5.19 without CAP_BPF
 *            where kernel.unprivileged_bpf_disabled is set); @xdp_pass is
 *            0 then
 */
struct ucm_dp_stats {
	uint64_t rx, rx_bad_desc, rx_steer_err, delivered;
	uint64_t enqueue_processed, enqueue_drops, enqueue_events;
	uint64_t worker_processed, worker_drops;
	uint64_t worker_drop_reason[UCM_DROP_REASONS_MAX];
	uint64_t tun_packets, tun_non_ip, tun_err_eio, tun_err_ebadfd;
	uint64_t tun_err_eagain, tun_err_other, tun_super, tun_super_segs;
	uint64_t back_read, back_drop_bad, back_read_err;
	uint64_t back_channel_sent, back_channel_full, back_channel_collected;
	uint64_t tx, tx_drops, tx_completed, tx_comp_direct, tx_comp_bulks;
	uint64_t tx_pending;
	uint64_t verdict_tx;
	uint32_t state;
	uint64_t worker_sleep_ns;	/* the workers' sleep_ns, summed */
	uint64_t rx_hist[UCM_LAT_BUCKETS];
	uint64_t wait_hist[UCM_LAT_BUCKETS];
	uint64_t sink_hist[UCM_LAT_BUCKETS];
	uint64_t rx_lat_ns, wait_ns, sink_ns;
	uint64_t prewakes;
	uint64_t back_channel_waits;
	uint64_t back_super, back_segments, back_csum_completed;
	uint64_t back_csum_offloaded;
	uint64_t rx_chains, rx_chain_drops;
	uint64_t rx_sleeps, rx_wake_rx, rx_wake_channel, rx_wake_stop;
	uint64_t rx_wake_timeout;
	uint64_t enqueue_shed;
	uint64_t tx_chains, tx_chain_more;
	uint64_t tun_csum_partial;
	uint64_t xdp_pass[UCM_STEER_PASS_SLOTS];
	int32_t xdp_pass_err;
};

enum ucm_dp_state {
	UCM_DP_S_RUNNING = 1 << 0,	/* started, not stopped */
	UCM_DP_S_STOPPED = 1 << 1,	/* the counters are final */
	UCM_DP_S_FRAMES_HOME = 1 << 2,	/* stopped, and every frame came home */
};

/* Which conservation equations fail on @st, a struct of @sz bytes (0: all
 * hold). Exact on a stopped datapath's counters. */
enum ucm_dp_violation {
	UCM_DP_V_FORWARD = 1 << 0,	/* the way in */
	UCM_DP_V_BACK = 1 << 1,		/* the way back */
};

struct ucm_dp;

/**
 * ucm_dp__create() - set the datapath up, nothing redirected yet
 *
 * Needs CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW, CAP_SYS_ADMIN (the verifier
 * of the XDP program, and finding who holds an interface) and
 * CAP_IPC_LOCK (the UMEM locked), or root. Return: the
 * object, or NULL with errno: EINVAL (a bad option; the log says which),
 * ENODEV (no such interface), ERANGE (its MTU is more than a packet of
 * the kernel's most frames holds, or than the driver takes with XDP;
 * two-way, a tun MTU above the interface's; a packet longer than
 * max_frags frames is a counted drop, rx_chain_long), EBUSY (another XDP
 * program on it),
 * EPERM, EOPNOTSUPP (zero-copy asked and not available), or what a part
 * reported.
 */
UCM_API struct ucm_dp *ucm_dp__create(const struct ucm_dp_opts *opts);

/**
 * ucm_dp__start() - start the RX threads and redirect the queues to them
 *
 * Once per object. The queues are redirected only when every RX thread
 * runs. Return: 0, or -errno (an RX thread could not start, or the XSK map
 * refused a socket: nothing is redirected then; ucm_dp__stop() or
 * ucm_dp__destroy() takes it down), -EINVAL when called again.
 */
UCM_API int ucm_dp__start(struct ucm_dp *dp);

/**
 * ucm_dp__stop() - drain in order, take everything down, prove it
 * @timeout_ms: how long frames still out (returns in flight to the pools)
 *              may take to come home when the sockets close
 *
 * The counters are final once the workers drained (UCM_DP_S_STOPPED):
 * statistics getters on other threads read them from then on. Return: 0
 * when the counters add up and every frame came home; -EUCLEAN when they
 * do not, or the frames' audit found one home twice (the log says which),
 * -EBUSY when frames were still out after
 * @timeout_ms. Called again after -EBUSY, it looks for them again; once
 * the counters failed it says -EUCLEAN each time, and whether the frames
 * came home is UCM_DP_S_FRAMES_HOME in ucm_dp__stats()' state.
 */
UCM_API int ucm_dp__stop(struct ucm_dp *dp, unsigned int timeout_ms);

/*
 * Stops it if running (without waiting: a timeout of 0), and frees it.
 * Where frames are still out then, the UMEM stays, for good (its sockets'
 * memory, 32 MiB a queue by default), rather than be freed under the
 * kernel: call ucm_dp__stop() with a timeout first, and look at its
 * result. NULL is fine.
 */
UCM_API void ucm_dp__destroy(struct ucm_dp *dp);

/**
 * ucm_dp__err() - an RX thread gave up
 *
 * An RX thread that gives up takes its socket out of the XSK map: its
 * queue's traffic goes to the kernel's stack until the datapath stops.
 * Return: 0 while every RX thread runs, else the first one's -errno (its
 * queue in @queue when not NULL). ucm_dp__check() says this and more.
 */
UCM_API int ucm_dp__err(const struct ucm_dp *dp, uint32_t *queue);

/*
 * Faults at run time, and the links' states (ucm_dp__check()). The policy
 * the library gives an application: a link going down or up is not a
 * fault (nothing comes in, or the tun drops, until it is up again: the
 * datapath keeps running and resumes); each fault below is, and the
 * datapath cannot heal it: stop it (the counters and the audit still
 * hold) and start again, as a service manager restarting a daemon does.
 */
enum ucm_dp_fault {
	UCM_DP_FAULT_NONE = 0,
	UCM_DP_FAULT_IFACE_GONE,	/* the interface was deleted */
	UCM_DP_FAULT_TUN_GONE,		/* the tun or tap was deleted */
	UCM_DP_FAULT_XSK,		/* a socket reported an error (@where: queue id) */
	UCM_DP_FAULT_RX_THREAD,		/* an RX thread gave up (@where: queue id) */
	UCM_DP_FAULT_BACK,		/* the way back's reads stopped (@where: worker) */
	/* A thread took nothing from its ring for UCM_DP_STALL_MS while
	 * packets waited there: a worker (@where: worker), an RX thread
	 * (@where: queue id; with UCM_DP_F_INLINE its sink too). */
	UCM_DP_FAULT_WORKER_STALLED,
	UCM_DP_FAULT_RX_STALLED,
	UCM_DP_FAULT__MAX,
};

/* As the kernel's netdev watchdog's usual timeout: far above any pause a
 * working thread makes (a tun write, a sleep, the scheduler), short enough
 * that a service manager restarts a stuck datapath within seconds. */
#define UCM_DP_STALL_MS	5000

enum ucm_dp_links {
	UCM_DP_LINK_IFACE_UP = 1 << 0,	/* up, with a carrier */
	UCM_DP_LINK_TUN_UP = 1 << 1,	/* up (no tun: 0) */
};

/**
 * struct ucm_dp_health - what ucm_dp__check() found
 * @fault: enum ucm_dp_fault, the first one seen (it stays)
 * @err: its -errno
 * @where: the queue id or the worker, as the fault says
 * @links: UCM_DP_LINK_* of what is up now
 */
struct ucm_dp_health {
	uint32_t fault;
	int err;
	uint32_t where;
	uint32_t links;
};

/**
 * ucm_dp__check() - look at a running datapath: faults and links
 * @h: filled, @sz bytes of it (sizeof as the caller was built)
 *
 * For the control thread, every 100 ms or so while running (up to four
 * interface lookups and five ioctls, a map update when the interface's MAC
 * changed, a look at each thread's ring; it never touches the threads);
 * the stall watch needs a look at least every
 * UCM_DP_STALL_MS / 2, or it starts again (a process stopped meanwhile). A fault is logged once when first seen, and a link's
 * change, or of the interface's MTU, once per change, naming what it
 * means. Return: 0 no fault (a link may be down), 1 a fault (in @h),
 * -EINVAL.
 */
UCM_API int ucm_dp__check(struct ucm_dp *dp, struct ucm_dp_health *h, size_t sz);
/* The fault's name ("interface gone"); "unknown" out of range. */
UCM_API const char *ucm_dp_fault_str(uint32_t fault);

/**
 * ucm_dp__stats() - the totals, into the caller's @st of @sz bytes
 *
 * A caller built against an older, smaller struct gets its part. Return:
 * 0, or -EINVAL.
 */
UCM_API int ucm_dp__stats(const struct ucm_dp *dp, struct ucm_dp_stats *st,
			  size_t sz);
UCM_API uint32_t ucm_dp_stats__violations(const struct ucm_dp_stats *st,
					  size_t sz);

/* What it runs on, as set up (defaults resolved). */
UCM_API uint32_t ucm_dp__nqueues(const struct ucm_dp *dp);
/* The interface's queue id of queue @q; UINT32_MAX out of range. */
UCM_API uint32_t ucm_dp__queue_id(const struct ucm_dp *dp, uint32_t q);
/* Workers; inline, one per queue (the RX threads). */
UCM_API uint32_t ucm_dp__nworkers(const struct ucm_dp *dp);
/* Worker @w's CPU; -1 inline. */
UCM_API int ucm_dp__worker_cpu(const struct ucm_dp *dp, uint32_t w);
UCM_API uint32_t ucm_dp__flags(const struct ucm_dp *dp);
UCM_API uint32_t ucm_dp__mtu(const struct ucm_dp *dp);
/* Whether the workers pre-wake (ucm_dp_opts.prewake, AUTO resolved). */
UCM_API bool ucm_dp__prewake(const struct ucm_dp *dp);
UCM_API bool ucm_dp__zerocopy(const struct ucm_dp *dp);
/* The tun's name; NULL with a sink of one's own. */
UCM_API const char *ucm_dp__tun_name(const struct ucm_dp *dp);
/* Frames each queue needs for the options' rings, workers and way back:
 * ucm_dp__create() refuses fewer. Where the interface's packets take
 * several frames, more: the rings and channels that hold packets hold
 * that many times their frames (frames_per_queue 0: ucm_dp__create()
 * takes enough; given too few, it says how many). */
UCM_API uint32_t ucm_dp__frames_needed(const struct ucm_dp_opts *opts);
/*
 * What ucm_dp__create() would refuse of @opts before it attaches anything,
 * checked alone, touching nothing: the options, the frames, the interface
 * (there, the queues asked for among its RX queues, its MTU against the
 * frames). What only the set-up finds (the driver's XDP and zero-copy, the
 * interface held by another program, the tun) is not. Return: 0, or the
 * -errno ucm_dp__create() would fail with, after its message.
 */
UCM_API int ucm_dp__validate(const struct ucm_dp_opts *opts);

/**
 * ucm_dp__default_cpus() - the worker CPUs of ucm_dp_opts.ncpus = 0
 * @ifname: the interface, or NULL
 * @cpus: the CPUs, in increasing order, at most @max (and at most 64,
 *        UCM_CPUMAP_MAX_WORKERS, as a datapath takes)
 *
 * Every CPU this process may use (sched_getaffinity()) but CPU 0, which
 * takes the RX work; of those, only the ones on @ifname's device's NUMA
 * node (sysfs) when it has some, as page_pool takes its pages from the
 * device's node; CPU 0 alone when nothing else is left. ucm_dp__create()
 * says which node narrowed the list, at UCM_LOG_INFO.
 *
 * Return: how many (1 or more), or -EINVAL without @cpus or @max.
 */
UCM_API int ucm_dp__default_cpus(const char *ifname, int *cpus, uint32_t max);

/*
 * The parts' own counters, one struct per getter, per queue @q or per
 * worker @w: live while running, final after ucm_dp__stop(); the tun's
 * are zero with a sink of one's own. Each copies into the caller's @st of
 * @sz bytes (sizeof(*@st) as the caller was built): an older, smaller
 * struct gets its part; bytes past ours are zeroed.
 *
 * Return: 0, or -EINVAL (out of range, @st NULL or @sz 0) or -ENOENT (not
 * there, and @st reads 0: an enqueue before its RX thread started; the
 * getters of the way back, back_stats and txq_stats, on a one-way
 * datapath without UCM_DP_F_VERDICT_TX; with it, back_stats reads 0:
 * no tun is read).
 */
/* The queue's socket (ucm_xsk_queue__stats()). */
UCM_API int ucm_dp__xsk_stats(const struct ucm_dp *dp, uint32_t q,
			      struct ucm_xsk_stats *st, size_t sz);
/* The queue's pool (ucm_pool__stats()). */
UCM_API int ucm_dp__pool_stats(const struct ucm_dp *dp, uint32_t q,
			       struct ucm_pool_stats *st, size_t sz);
/* Queue @q's RX thread into worker @w (ucm_cpumap_producer__enqueue_stats()). */
UCM_API int ucm_dp__enqueue_stats(const struct ucm_dp *dp, uint32_t q,
				  uint32_t w,
				  struct ucm_cpumap_enqueue_stats *st,
				  size_t sz);
/* The worker (ucm_cpumap__worker_stats()). */
UCM_API int ucm_dp__worker_stats(const struct ucm_dp *dp, uint32_t w,
				 struct ucm_cpumap_worker_stats *st, size_t sz);
/* The worker's writes into the tun (ucm_tun__worker_stats()). */
UCM_API int ucm_dp__tun_stats(const struct ucm_dp *dp, uint32_t w,
			      struct ucm_tun_stats *st, size_t sz);
/* The worker's reads from the tun, the way back (ucm_tun__back_stats()). */
UCM_API int ucm_dp__back_stats(const struct ucm_dp *dp, uint32_t w,
			       struct ucm_tun_back_stats *st, size_t sz);
/* The old name of ucm_dp__back_stats() (0.2.0), kept for the programs
 * that call it. */
UCM_API int ucm_dp__rev_stats(const struct ucm_dp *dp, uint32_t w,
			      struct ucm_tun_back_stats *st, size_t sz);
/* The worker's channel to the RX thread, the way back (ucm_txq__stats()). */
UCM_API int ucm_dp__txq_stats(const struct ucm_dp *dp, uint32_t w,
			      struct ucm_txq_stats *st, size_t sz);

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_DP_H */
