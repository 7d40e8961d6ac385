/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_dp's state, shared by its pieces, each calling only those below it:
 *
 *   dp.c         the life cycle and the RX threads
 *   dp_parts.c   the parts set up and taken down (program, sockets, tun,
 *                channels, cpumap)
 *   dp_health.c  faults and links at run time (ucm_dp__check())
 *   dp_stats.c   the statistics getters and the final counters
 *   dp_opts.c    the options resolved, against the interface
 *
 * Threads and what they touch:
 *   control thread: create, start, stop, destroy, check, the stats getters;
 *   RX thread q:    dp->rx[q] (its queue, its pool as owner, its producer,
 *                   the TX channels of the workers that send on it);
 *   workers:        inside the cpumap and the tun (not here).
 *
 * The statistics getters may run on any thread, also during stop: they
 * and stop's last reading of the parts hold dp->lock (never on a hot path),
 * so a getter reads either the live parts or the final counters, never
 * parts being taken down.
 *
 * Cross-thread fields, and their pairs:
 *   rx->prod   RX thread stores it (release, R1) once its producer exists;
 *              start and the stats load it (acquire, R1').
 *   rx->err    RX thread stores it (release, R2) when it gives up, after
 *              rx->fault (relaxed, published by R2); the control thread
 *              loads err (acquire, R2'), then fault. At start, against
 *              the thread's delete from the XSK map: the map's lock.
 *   dp->stop   control thread stores 1 (relaxed: pthread_join orders what
 *              follows); RX threads poll it (relaxed) once per turn.
 * Counters are the parts' own (each documents its readers).
 */
#ifndef UCM_DP_INTERNAL_H
#define UCM_DP_INTERNAL_H

#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"
#include "ucpumap/dp.h"
#include "ucpumap/xdp.h"

struct ifreq;

/* The options with every default resolved. */
struct dp_cfg {
	char ifname[IF_NAMESIZE], tun[IF_NAMESIZE];
	uint32_t queues[UCM_XSK_MAX_QUEUES], nqueues;
	int cpus[UCM_CPUMAP_MAX_WORKERS];
	uint32_t nworkers;
	int rx_cpus[UCM_XSK_MAX_QUEUES];
	uint32_t n_rx_cpus;
	int cpus_node;		/* default workers narrowed to this node, or -1 */
	struct ucm_steer_cfg steer;
	uint32_t xsk_mode, frames, frame_size, rx_size, qsize, mtu, flags;
	uint32_t spin_us;	/* the workers' look before sleeping */
	uint32_t rx_spin_us;	/* the RX threads': with busy polling, its polls */
	bool prewake;		/* the workers' (UCM_CPUMAP_F_PREWAKE) */
	/* The interface's MTU is more than a frame holds: packets come in
	 * several frames (UCM_XSK_F_SG, a frags-aware program). */
	bool sg;
	/* Built against 0.2.0 (its struct ends at flags): its callbacks take
	 * a packet in one frame, as 0.2.0 gave them. */
	bool one_frame_callbacks;
	uint32_t max_frags;	/* a packet's frames on the way in (ucm_dp_opts) */
	uint32_t tun_owner;	/* a tun created here belongs to it; 0: euid */
	uint32_t if_mtu;	/* the interface's, 0 when unknown */
	bool frames_set;	/* frames_per_queue was given, not defaulted */
	bool rx_size_set;	/* rx_size was given, not defaulted */
	bool peer_mac_set;
	uint8_t peer_mac[6];
	const struct ucm_sink_ops *sink;	/* &sink_ops; NULL: the tun */
	struct ucm_sink_ops sink_ops;		/* the caller's, copied */
	void *sink_ctx;
	ucm_verdict_fn verdict;
	void *verdict_ctx;
	ucm_steer_fn steer_fn;
	void *steer_ctx;
	int xsks_map_fd;			/* UCM_DP_F_OWN_XDP */
	ucm_dp_thread_fn thread_init;
	void *thread_init_ctx;
};

/* One RX thread: the NAPI of one queue. */
struct dp_rx {
	struct ucm_dp *dp;
	struct ucm_xsk_queue *q;
	struct ucm_cpumap_producer *_Atomic prod;
	_Atomic int err;
	_Atomic uint32_t fault;		/* enum ucm_dp_fault: why err */
	/* Two-way: the channels of the workers that send on this queue
	 * (worker w on queue w % nqueues). */
	struct ucm_txq *txq[UCM_CPUMAP_MAX_WORKERS];
	uint32_t ntxq;
	int cpu;			/* -1: not pinned */
	pthread_t thr;
	bool started;
};

/* A thread's ring as ucm_dp__check() last saw it: its consumer index, and
 * since when (ns; 0: nothing waited) it has not moved with entries there. */
struct dp_watch {
	uint32_t taken;
	uint64_t since;
};

/* The counters as ucm_dp__stop() left them. */
struct dp_final {
	struct ucm_dp_stats tot;
	struct ucm_xsk_stats xs[UCM_XSK_MAX_QUEUES];
	struct ucm_pool_stats ps[UCM_XSK_MAX_QUEUES];
	struct ucm_cpumap_enqueue_stats *es;	/* [q * nworkers + w] */
	bool *es_ok;
	struct ucm_cpumap_worker_stats ws[UCM_CPUMAP_MAX_WORKERS];
	struct ucm_tun_stats ts[UCM_CPUMAP_MAX_WORKERS];
	struct ucm_tun_back_stats rs[UCM_CPUMAP_MAX_WORKERS];
	struct ucm_txq_stats qs[UCM_CPUMAP_MAX_WORKERS];
};

struct ucm_dp {
	struct dp_cfg c;
	struct ucm_xdp *xdp;
	struct ucm_xsk *xsk;
	struct ucm_tun *tun;
	struct ucm_cpumap *map;
	struct ucm_txq *txq[UCM_CPUMAP_MAX_WORKERS];	/* two-way: per worker */
	struct dp_rx rx[UCM_XSK_MAX_QUEUES];
	atomic_int stop;
	/* An eventfd in every RX thread's sleep (ucm_xsk_queue__set_wake_fd()):
	 * the stop writes it after @stop, so a sleeping RX thread sees the
	 * stop at once, not at its sleep's timeout; -1 before start. */
	int stop_fd;
	bool started;			/* start() ran: it runs once */
	bool zerocopy;			/* the mode the sockets got */
	/* The statistics getters and stop's last reading: under @lock, a
	 * getter reads the parts while STOPPED is clear, @fin after; stop
	 * sets STOPPED under it before it takes the parts down. */
	pthread_mutex_t lock;
	uint32_t state;			/* enum ucm_dp_state, under @lock */
	int counted;			/* 0 or -EUCLEAN: the counters' verdict */
	struct dp_final *fin;		/* read once UCM_DP_S_STOPPED */
	/* ucm_dp__check(), control thread only. */
	int ifindex, tun_ifindex;	/* tun_ifindex 0: no tun */
	uint32_t links;			/* UCM_DP_LINK_*, as last said */
	uint32_t links_last;		/* as the last look saw them */
	bool links_seen;
	/* The changes said in the minute that began at links_win (ns), and
	 * those left unsaid past LINKS_SAY_MAX: said together at its end. */
	uint64_t links_win;
	uint32_t links_nsaid, links_hushed;
	uint32_t if_mtu_said;		/* the interface's MTU last said, 0:
					 * the set-up's (c.if_mtu) */
	uint8_t mac[6];			/* the interface's (two-way tap: the
					 * tap's) last seen: in the program
					 * unless @mac_refused */
	uint8_t prog_mac[6];		/* the one the program holds, if @mac_set */
	bool mac_set;			/* the program has one (ucm_dp_follow_mac()) */
	bool mac_refused;		/* @mac was refused (said once) */
	uint8_t back_mac[6];		/* two-way tun: the way back's source */
	bool back_mac_set;		/* set by back_setup() */
	bool tun_fresh;			/* the tun made, or brought up, by
					 * this start */
	uint8_t if_mac[6];		/* a tap: the interface's it took,
					 * then its last said (one way) */
	struct ucm_dp_health health;	/* the first fault, kept */
	struct dp_watch watch_w[UCM_CPUMAP_MAX_WORKERS];
	struct dp_watch watch_q[UCM_XSK_MAX_QUEUES];
	uint64_t watch_at;		/* the last look (ns) */
};

/* With TX channels: two-way, or a verdict that sends. */
static inline bool dp_has_channels(uint32_t flags)
{
	return flags & (UCM_DP_F_TWO_WAY | UCM_DP_F_VERDICT_TX);
}

/* Control thread, or under dp->lock. */
static inline bool dp_stopped(const struct ucm_dp *dp)
{
	return dp->state & UCM_DP_S_STOPPED;
}

static inline struct ucm_cpumap_producer *dp_rx_prod(const struct dp_rx *rx)
{
	return atomic_load_explicit(&rx->prod, memory_order_acquire); /* R1' */
}

/* dp_opts.c: the options resolved (every default, every refusal said in
 * the log), and the interface they are resolved against. */
int ucm_dp_resolve(const struct ucm_dp_opts *opts, struct dp_cfg *c);
uint32_t ucm_dp_frames_needed(const struct dp_cfg *c);
/* The tun's MTU, once the interface is known to exist. */
void ucm_dp_resolve_mtu(struct dp_cfg *c);
/* -ERANGE when the interface's MTU is more than a frame holds and its
 * packets cannot come in several frames here (said, with the fix). */
int ucm_dp_check_if_mtu(const struct dp_cfg *c);
/* With packets of several frames, frames per queue for a worker ring of
 * them: the default grows to cover it, a number given too small is
 * refused (-EINVAL, said). After ucm_dp_resolve_mtu(). */
int ucm_dp_chain_frames(struct dp_cfg *c);
/* The sockets send packets of @tx_frames frames at most (zero-copy: the
 * driver's xdp-zc-max-segs): 0 when the MTU's packets fit, or -EINVAL
 * after a message naming the fixes, where anything is sent (the way back,
 * the verdict's UCM_VERDICT_TX). */
int ucm_dp_check_tx_frames(const struct dp_cfg *c, uint32_t tx_frames);
/* What ucm_dp__create() refuses of a resolved @c before it sets anything
 * up: too few frames, no such interface, a jumbo MTU's frames (with
 * ucm_dp_resolve_mtu()), two-way a tun MTU above the interface's. 0, or
 * -errno after a message. */
int ucm_dp_check_cfg(struct dp_cfg *c);
/* The interface is an Ethernet device (the program and the workers read
 * that header): 0, or -EINVAL after a message. */
int ucm_dp_check_ether(const char *ifname);
/* Whether packets of an interface MTU @mtu take no more frames than the
 * set-up sized @c for (its if_mtu): a frame, or with packets of several
 * frames (c->sg) the chain of if_mtu. */
bool ucm_dp_mtu_fits(const struct dp_cfg *c, uint32_t mtu);
/* Whether, with packets of several frames, those of an interface MTU @mtu
 * come through: no more than max_frags frames, nor 65535 bytes. */
bool ucm_dp_mtu_chains(const struct dp_cfg *c, uint32_t mtu);
/* The frames a packet of an interface MTU @mtu takes as @c is set up
 * (1 without packets of several frames). */
uint32_t ucm_dp_mtu_frames(const struct dp_cfg *c, uint32_t mtu);
/* SIOCGIFMTU, SIOCGIFFLAGS, SIOCETHTOOL or SIOCGIFHWADDR/SIOCSIFHWADDR on
 * @ifname: 0 or -errno. */
int ucm_dp_if_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr);
/* dp_health.c: the link changes of this minute not said yet, said (the
 * stop's; control thread). */
void ucm_dp_links_flush(struct ucm_dp *dp);

/* dp_health.c */
/* The interface's MAC into the XDP program, where it changed (or was not
 * set): a unicast frame to another station's is the kernel's. Control
 * thread; nothing with the application's own program. */
void ucm_dp_follow_mac(struct ucm_dp *dp);

/* dp_stats.c */
/* The way back's counters of worker @w, under dp->lock; -ENOENT one way. */
int ucm_dp_read_back(const struct ucm_dp *dp, uint32_t w,
		    struct ucm_tun_back_stats *rs);
/* The final counters, from the stopped parts; under dp->lock. */
void ucm_dp_snapshot(struct ucm_dp *dp);

/* dp_parts.c */
/* What each part would refuse of its options, given @c, before anything
 * is set up: the application's XSKMAP, the interface's MTU
 * (ucm_dp_check_if_mtu()), the steering, the sockets and their UMEM, the
 * workers (CPUs, ring size), the interface's queues and its link type
 * (Ethernet). 0, or -errno after a message. */
int ucm_dp_check_parts(const struct dp_cfg *c);
/* Every part, in order; what was set up stays for ucm_dp_parts_close(). */
int ucm_dp_parts_open(struct ucm_dp *dp);
/* Steps 4-6 of the stop: every part down, every frame home. */
int ucm_dp_parts_close(struct ucm_dp *dp, unsigned int timeout_ms);
/* Step 6 alone: the sockets closed, again after -EBUSY. */
int ucm_dp_close_xsk(struct ucm_dp *dp, unsigned int timeout_ms);

#endif /* UCM_DP_INTERNAL_H */
