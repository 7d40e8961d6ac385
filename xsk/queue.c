// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An AF_XDP queue's operations, on its RX thread (the queue's NAPI): the
 * fill ring topped up from the queue's pool, RX descriptors validated and
 * handed on to the cpumap, and the idle thread's look and sleep. Packets
 * of several descriptors are queue_chain.c's, the way out's TX ring and
 * completions queue_tx.c's; the sockets themselves are set up and closed
 * in port.c (port_internal.h).
 */
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "core/pool_internal.h"
#include "engine/cpumap_internal.h"
#include "engine/txq_internal.h"
#include "proto/proto.h"
#include "ucpumap/txq.h"
#include "port_internal.h"

/* ---- what a queue is, and its counters (any thread) -------------------- */

int ucm_xsk_queue__fd(const struct ucm_xsk_queue *q)
{
	return q->fd;
}

uint32_t ucm_xsk_queue__id(const struct ucm_xsk_queue *q)
{
	return q->id;
}

struct ucm_pool *ucm_xsk_queue__pool(struct ucm_xsk_queue *q)
{
	return q->pool;
}

int ucm_xsk_queue__stats(const struct ucm_xsk_queue *q, struct ucm_xsk_stats *st,
			 size_t sz)
{
	struct xdp_statistics ks = {};
	socklen_t len = sizeof(ks);
	struct ucm_xsk_stats o = {};
	int err = 0;

	if (!q || !st || !sz)
		return ucm_err(-EINVAL);

	o.rx = READ_ONCE(q->stats.rx);
	o.rx_bad_desc = READ_ONCE(q->stats.rx_bad_desc);
	o.fill = READ_ONCE(q->stats.fill);
	o.fill_short = READ_ONCE(q->stats.fill_short);
	o.wakeups = READ_ONCE(q->stats.wakeups);
	o.rx_steer_err = READ_ONCE(q->stats.rx_steer_err);
	/* Completions before sends: tx_completed never passes tx, so a live
	 * reader's tx - tx_completed (pending) cannot wrap. S2: pairs with S1
	 * in ucm_xsk_queue__complete(). */
	o.tx_completed = __atomic_load_n(&q->stats.tx_completed, __ATOMIC_ACQUIRE);
	o.tx = READ_ONCE(q->stats.tx);
	o.tx_ring_full = READ_ONCE(q->stats.tx_ring_full);
	o.tx_bad_desc = READ_ONCE(q->stats.tx_bad_desc);
	o.tx_kicks = READ_ONCE(q->stats.tx_kicks);
	o.tx_kick_err = READ_ONCE(q->stats.tx_kick_err);
	o.tx_comp_bulks = READ_ONCE(q->stats.tx_comp_bulks);
	o.tx_comp_direct = READ_ONCE(q->stats.tx_comp_direct);
	for (int b = 0; b < UCM_LAT_BUCKETS; b++)
		o.rx_hist[b] = READ_ONCE(q->stats.rx_hist[b]);
	o.rx_lat_ns = READ_ONCE(q->stats.rx_lat_ns);
	o.rx_batches = READ_ONCE(q->stats.rx_batches);
	o.busy_polls = READ_ONCE(q->stats.busy_polls);
	o.rx_chains = READ_ONCE(q->stats.rx_chains);
	o.rx_chain_long = READ_ONCE(q->stats.rx_chain_long);
	o.rx_chain_cut = READ_ONCE(q->stats.rx_chain_cut);
	o.rx_chain_bad = READ_ONCE(q->stats.rx_chain_bad);
	o.rx_chain_nosg = READ_ONCE(q->stats.rx_chain_nosg);
	o.rx_chain_more = READ_ONCE(q->stats.rx_chain_more);
	o.rx_packets = READ_ONCE(q->stats.rx_packets);
	o.tx_packets = READ_ONCE(q->stats.tx_packets);
	o.sleeps = READ_ONCE(q->stats.sleeps);
	o.wake_rx = READ_ONCE(q->stats.wake_rx);
	o.wake_tx = READ_ONCE(q->stats.wake_tx);
	o.wake_fd = READ_ONCE(q->stats.wake_fd);
	o.wake_timeout = READ_ONCE(q->stats.wake_timeout);
	o.tx_chains = READ_ONCE(q->stats.tx_chains);
	o.tx_chain_more = READ_ONCE(q->stats.tx_chain_more);
	o.tx_chain_long = READ_ONCE(q->stats.tx_chain_long);
	o.tx_chain_bad = READ_ONCE(q->stats.tx_chain_bad);
	o.tx_chain_nosg = READ_ONCE(q->stats.tx_chain_nosg);
	if (q->fd < 0 || getsockopt(q->fd, SOL_XDP, XDP_STATISTICS, &ks, &len)) {
		/* The queue's own counters all the same; the kernel's read 0. */
		err = q->fd < 0 ? -EBADF : -errno;
		goto out;
	}
	o.kernel_rx_dropped = ks.rx_dropped;
	o.kernel_rx_invalid_descs = ks.rx_invalid_descs;
	o.kernel_tx_invalid_descs = ks.tx_invalid_descs;
	/* Older kernels return the first three fields only. */
	if (len >= offsetofend(struct xdp_statistics, tx_ring_empty_descs)) {
		o.kernel_rx_ring_full = ks.rx_ring_full;
		o.kernel_rx_fill_ring_empty_descs = ks.rx_fill_ring_empty_descs;
		o.kernel_tx_ring_empty_descs = ks.tx_ring_empty_descs;
	}
out:
	ucm_stats_out(st, sz, &o, sizeof(o));
	return ucm_err(err);
}

/* ---- the RX thread's side ------------------------------------------------- */

int ucm_xsk_queue__refill(struct ucm_xsk_queue *q)
{
	uint64_t addrs[UCM_XSK_RX_BATCH];
	uint32_t room, idx = 0, i, total = 0;
	int n, err = 0;

	room = xsk_prod_nb_free(&q->fill, q->x->fill_size);
	q->fill_dry = false;
	while (room) {
		uint32_t want = min(room, (uint32_t)UCM_XSK_RX_BATCH);

		n = ucm_pool__alloc_bulk(q->pool, addrs, want);
		if (n < 0) {
			err = n;	/* what went out before is counted below */
			break;
		}
		if ((uint32_t)n < want) {
			if (!q->fill_dry)	/* once a refill */
				STAT_ADD(q->stats.fill_short, 1);
			q->fill_dry = true;
		}
		if (!n)
			break;
		/* nb_free said there is room, so reserve takes all n; if it
		 * ever did not, the frames go straight back, never lost. */
		if (xsk_ring_prod__reserve(&q->fill, n, &idx) != (uint32_t)n) {
			for (i = 0; i < (uint32_t)n; i++)
				ucm_pool__put(q->pool, addrs[i]);
			break;
		}
		for (i = 0; i < (uint32_t)n; i++)
			*xsk_ring_prod__fill_addr(&q->fill, idx + i) = addrs[i];
		ucm_frame_move_bulk(q->x->umem, addrs, n, UCM_LOC_APP,
				    UCM_LOC_KERNEL);
		xsk_ring_prod__submit(&q->fill, n);
		room -= n;
		total += n;
	}
	if (total) {
		q->posted += total;
		STAT_ADD(q->stats.fill, total);
	}
	if (xsk_ring_prod__needs_wakeup(&q->fill)) {
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		STAT_ADD(q->stats.wakeups, 1);
	}
	return err ? err : (int)total;
}

/*
 * Fetch the metadata line of the packet RX_PREFETCH places ahead. The
 * kernel wrote it (the NIC, or the copy on the softirq's CPU, often not
 * ours), so each read of it is a miss; fetched early, a batch's misses
 * overlap instead of following one another, as the worker's do (and
 * drivers' for headers). For write: we clear the magic. 4 in flight: 8
 * measured the same.
 * Only an address in the UMEM.
 */
#define RX_PREFETCH	4

static inline void rx_prefetch(const struct ucm_xsk *x, const struct ucm_umem_geom *g,
			       const struct xdp_desc *rd)
{
	if (rd->addr >= sizeof(struct ucm_xdp_meta) && rd->addr < g->size)
		__builtin_prefetch((char *)x->area + rd->addr - sizeof(struct ucm_xdp_meta), 1);
}

uint32_t ucm_xsk_queue__rx(struct ucm_xsk_queue *q, struct ucm_xsk_desc *d,
			   uint32_t max)
{
	struct ucm_xsk *x = q->x;
	const struct ucm_umem_geom g = ucm_umem_geom_of(x->umem);
	const uint32_t pool = q->pool->idx;
	uint32_t idx = 0, n, i, good = 0, bad = 0, single = 0;
	enum ucm_umem_desc v;

	q->rx_stamp = 0;
	n = xsk_ring_cons__peek(&q->rx, max, &idx);
	for (i = 0; i < n && i < RX_PREFETCH; i++)
		rx_prefetch(x, &g, xsk_ring_cons__rx_desc(&q->rx, idx + i));
	for (i = 0; i < n; i++) {
		const struct xdp_desc *rd = xsk_ring_cons__rx_desc(&q->rx, idx + i);
		uint64_t addr = rd->addr, base;

		if (i + RX_PREFETCH < n)
			rx_prefetch(x, &g, xsk_ring_cons__rx_desc(&q->rx, idx + i + RX_PREFETCH));
		if (unlikely((rd->options & XDP_PKT_CONTD) || q->chain.open)) {
			good += ucm_xsk_chain_take(q, &g, rd, &d[good]);
			continue;
		}
		single++;	/* a packet of one frame, good or bad */
		/* umem_desc.h says what a good one is. A bad one is counted;
		 * its frame, if it is ours, goes straight back to the pool. */
		v = ucm_umem_desc_check(&g, pool, addr, rd->len, &base);
		if (unlikely(v != UCM_UMEM_DESC_GOOD)) {
			bad++;
			if (v == UCM_UMEM_DESC_BAD) {
				q->taken++;
				ucm_frame_move(x->umem, base, UCM_LOC_KERNEL,
					       UCM_LOC_APP);
				ucm_pool__put(q->pool, base);
			}
			continue;
		}
		q->taken++;
		ucm_frame_move(x->umem, base, UCM_LOC_KERNEL, UCM_LOC_APP);
		d[good].addr = addr;
		d[good].len = rd->len;
		d[good].worker = ucm_xsk_rx_meta(q, addr, base);
		good++;
	}
	/* The kernel publishes a packet's descriptors together, so a packet
	 * still open at the producer index last read lost its end. That
	 * index, not @max: a zero-copy RX ring that fills mid-packet
	 * publishes the first part alone on kernels before the fix, and
	 * then the ring holds a multiple of a batch. Only where the read
	 * of the index falls right after such a part: one the kernel
	 * published more packets behind before we read it merges with the
	 * next packet (docs/design/xsk.md, "Multi-buffer"). */
	if (unlikely(q->chain.open) && q->rx.cached_cons == q->rx.cached_prod)
		ucm_xsk_queue_chain_end(q);
	if (n) {
		xsk_ring_cons__release(&q->rx, n);
		STAT_ADD(q->stats.rx, n);
		STAT_ADD(q->stats.rx_packets, single);
		if (bad)
			STAT_ADD(q->stats.rx_bad_desc, bad);
	}
	return good;
}

bool ucm_xsk_queue_rx_ready(struct ucm_xsk_queue *q)
{
	return xsk_cons_nb_avail(&q->rx, 1) != 0;
}

uint32_t ucm_xsk_queue_rx_look(const struct ucm_xsk_queue *q, bool *waiting)
{
	/* The RX thread's release of the consumer, the kernel's of the
	 * producer: relaxed, a look that may be a moment old. */
	uint32_t cons = __atomic_load_n(q->rx.consumer, __ATOMIC_RELAXED);

	*waiting = __atomic_load_n(q->rx.producer, __ATOMIC_RELAXED) != cons;
	return cons;
}

/* After an idle sleep: the socket's pending error, 0 for none. An XSK's
 * poll does not report sk_err (the kernel sets ENETDOWN when the device
 * goes), so an idle RX thread asks: one syscall per idle timeout. */
static int idle_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return 0;
	return -err;
}

/* The error a socket reports (SO_ERROR): -errno, -EIO when it has none
 * to give (a hang-up, or an fd no longer open). */
static int sock_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || !err)
		return -EIO;
	return -err;
}

/*
 * An RX thread whose last refill found the pool short sleeps this long at
 * most: the frames that come home meanwhile (the recycle ring) wake
 * nobody, and the socket is not readable while the device has no buffer,
 * so it looks again soon, as a driver that could not allocate keeps its
 * NAPI scheduled. A millisecond: a dry pool costs a thousand cheap looks
 * a second, not a spin (test-backpressure), and the device's loss to a
 * pool that has frames again is a millisecond's, not the idle timeout's.
 */
#define XSK_DRY_SLEEP_MS	1

/*
 * A spinning RX thread whose pool was short looks for frames come home
 * this often: the device gets them within 10 us, not after the spin and a
 * dry sleep; a look at a dry pool takes the backing stack's lock, so not
 * at every turn.
 */
#define XSK_SPIN_REFILL_NS	10000

/* What ended a sleep, counted by cause (each that was ready): its
 * @p[0] the socket, then @ntxq channels, then the wake fd. Return 1. */
static int sleep_woken(struct ucm_xsk_queue *q, const struct pollfd *p,
		       uint32_t ntxq)
{
	uint32_t i;

	if (p[0].revents & POLLIN)
		STAT_ADD(q->stats.wake_rx, 1);
	for (i = 0; i < ntxq; i++)
		if (p[1 + i].revents & POLLIN || (!i && p[0].revents & POLLOUT)) {
			STAT_ADD(q->stats.wake_tx, 1);
			break;
		}
	if (q->wake_fd >= 0 && p[1 + ntxq].revents & POLLIN)
		STAT_ADD(q->stats.wake_fd, 1);
	return 1; /* poll's count of ready fds: not ours */
}

int ucm_xsk_queue__set_wake_fd(struct ucm_xsk_queue *q, int fd)
{
	if (!q || fd < -1)
		return ucm_err(-EINVAL);
	q->wake_fd = fd;
	return 0;
}

/*
 * Zero-copy, the TX ring has no room for a packet and the driver took
 * nothing from it since the last look (its link down, a NIC slower than
 * the way back): the channels' descriptors are no work then, the ring's
 * room is (the socket's POLLOUT, which the driver's release raises). In
 * copy mode the kicks are what sends: a kick that took nothing (the
 * socket's send buffer full of skbs the peer has not freed yet) is tried
 * again at once, as before; waiting for POLLOUT (half the buffer freed)
 * cost the way back's TCP about a tenth on veth. Copy mode's last kick
 * refused as the device is down, with descriptors on the ring: stuck too,
 * until a later kick (the sleep's timeout, DP_RX_TX_PENDING_MS) sends.
 */
static bool tx_stuck(struct ucm_xsk_queue *q)
{
	uint32_t room, cons;
	bool stuck;

	room = xsk_prod_nb_free(&q->tx, q->tx.size);
	if (!q->x->zerocopy)
		return q->tx_down && room != q->tx.size;
	cons = __atomic_load_n(q->tx.consumer, __ATOMIC_ACQUIRE);
	stuck = room != q->tx.size && room < ucm_xsk_tx_frames(q->x) && cons == q->tx_cons_seen;

	q->tx_cons_seen = cons;
	return stuck;
}

int ucm_xsk_queue__sleep(struct ucm_xsk_queue *q, struct ucm_txq *const *txq,
			 uint32_t ntxq, int timeout_ms)
{
	struct pollfd p[2 + UCM_XSK_MAX_TXQ];
	bool busy = false, stuck;
	uint32_t i, n;
	int ret = 1;	/* a channel has descriptors: work, no sleep */

	if (!q || ntxq > UCM_XSK_MAX_TXQ || (ntxq && !txq))
		return ucm_err(-EINVAL);
	if (q->fill_dry && (timeout_ms < 0 || timeout_ms > XSK_DRY_SLEEP_MS))
		timeout_ms = XSK_DRY_SLEEP_MS;
	stuck = ntxq && tx_stuck(q);
	for (i = 0; i < ntxq; i++)
		busy |= !ucm_txq__sleep_begin(txq[i]) && (!stuck || ucm_txq_wanted(txq[i]));
	if (!busy) {
		p[0].fd = q->fd;
		/* Copy mode: nothing but a kick frees the ring. POLLOUT is
		 * the ring half free, which a ring of fewer than two
		 * packets' frames may be with no room for one: the sleep's
		 * timeout then (1 ms while frames are out), not a spin. */
		p[0].events = POLLIN | (stuck && q->x->zerocopy &&
					q->tx.size >= 2 * ucm_xsk_tx_frames(q->x) ? POLLOUT : 0);
		for (i = 0; i < ntxq; i++) {
			p[1 + i].fd = ucm_txq__wake_fd(txq[i]);
			p[1 + i].events = POLLIN;
		}
		n = 1 + ntxq;
		if (q->wake_fd >= 0) {
			p[n].fd = q->wake_fd;
			p[n++].events = POLLIN;
		}
		STAT_ADD(q->stats.sleeps, 1);
		ret = poll(p, n, timeout_ms);
		if (ret < 0)
			ret = -errno;
		else if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL))
			ret = sock_error(q->fd);
		else if (ret > 0)
			ret = sleep_woken(q, p, ntxq);
		else
			ret = idle_error(q->fd);
		if (!ret)
			STAT_ADD(q->stats.wake_timeout, 1);
	}
	for (i = 0; i < ntxq; i++)
		ucm_txq__sleep_end(txq[i]);
	return ucm_err(ret);
}

/*
 * The NAPI a busy poll runs is the socket's, which the kernel marks at its
 * first packets (SO_INCOMING_NAPI_ID): the device queue's NAPI, or in
 * zero-copy the pool's. A socket still without one then polls nothing
 * (copy mode where the receive has no NAPI id: veth's, native or generic,
 * Linux 6.18): said once, and its looks stop asking the kernel. Once,
 * on the RX thread, after the first packets.
 */
static void busy_poll_napi(struct ucm_xsk_queue *q)
{
	unsigned int id = 0;
	socklen_t len = sizeof(id);

	q->napi_known = true;
	if (getsockopt(q->fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &id, &len))
		return; /* before Linux 4.12: cannot tell, polls on */
	if (id) {
		pr_info("xsk: queue %u: busy polling the device's NAPI %u\n",
			q->id, id);
		return;
	}
	pr_info("xsk: queue %u: no NAPI to busy-poll (the socket has none after its first packets: copy mode on a driver whose receive has no NAPI id, as veth): the idle look only looks\n",
		q->id);
	q->busy_poll = false;
}

int ucm_xsk_queue__spin(struct ucm_xsk_queue *q, struct ucm_txq *const *txq,
			uint32_t ntxq, uint32_t spin_us)
{
	uint64_t now, end, look = 0;
	bool stuck;
	uint32_t i;

	if (!q || ntxq > UCM_XSK_MAX_TXQ || (ntxq && !txq) || spin_us > UCM_SPIN_US_MAX)
		return ucm_err(-EINVAL);
	if (q->busy_poll && !q->napi_known && q->stats.rx)
		busy_poll_napi(q);
	now = ucm_now_ns();
	end = now + (uint64_t)spin_us * 1000;
	do {
		/* Its errors are the next poll's to report. */
		if (q->fill_dry && now >= look) {
			look = now + XSK_SPIN_REFILL_NS;
			ucm_xsk_queue__refill(q);
		}
		if (xsk_cons_nb_avail(&q->rx, 1))
			return 1;
		/* Sent frames the kernel completed: the pool's, which the
		 * fill ring may be waiting for (tx_turn() takes them). */
		if (ntxq && ucm_xsk_queue__tx_pending(q) && xsk_cons_nb_avail(&q->comp, 1))
			return 1;
		/* What would end a sleep ends the spin: descriptors to
		 * send while the TX ring takes them, or a worker's ask for
		 * frames (ucm_txq__sleep_begin()). */
		stuck = ntxq && tx_stuck(q);
		for (i = 0; i < ntxq; i++)
			if ((!stuck && ucm_txq__pending(txq[i])) || ucm_txq_wanted(txq[i]))
				return 1;
		if (q->busy_poll) {
			/* The kernel runs the device's NAPI poll here
			 * (sk_busy_loop(), SO_BUSY_POLL_BUDGET): with
			 * SO_PREFER_BUSY_POLL and the device's interrupts
			 * deferred, nothing else would until its
			 * gro_flush_timeout. Its errors are the sleep's to
			 * report (SO_ERROR), as without busy polling. */
			recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
			STAT_ADD(q->stats.busy_polls, 1);
		} else {
			cpu_relax();
		}
		now = ucm_now_ns();
	} while (now < end);
	return 0;
}

int ucm_xsk_queue__set_steer(struct ucm_xsk_queue *q, ucm_steer_fn fn, void *ctx)
{
	if (!q)
		return ucm_err(-EINVAL);
	q->steer_fn = fn;
	q->steer_ctx = ctx;
	return 0;
}

/* The application's choice (ucm_steer_fn) for one packet. */
static uint32_t steer_app(struct ucm_xsk_queue *q, const struct ucm_xsk_desc *d)
{
	struct ucm_pkt pkt;
	const uint8_t *data;
	uint32_t rd;

	data = ucm_xsk_rx_head(q, d, &rd);
	if (ucm_pkt_parse_head(&pkt, data, rd, d->len) != UCM_DROP_NONE)
		return 0;
	return q->steer_fn(q->steer_ctx, &pkt, data, rd);
}

/*
 * The RX thread's poll: the userspace NAPI poll of one queue. Refill the
 * fill ring first (the kernel cannot receive into frames it does not
 * have), take one batch, stage every packet for its worker, flush once.
 */
#ifdef UCM_DEBUG
/* Tests: non-zero makes the next poll of any queue fail with -EIO, as an
 * RX thread's own failure would (tests/progs/xsk_rx.c, fault mode). Used up
 * by that poll; relaxed, no pair. */
int ucm_xsk_test_poll_fail;
#endif

int ucm_xsk_queue__poll(struct ucm_xsk_queue *q,
			struct ucm_cpumap_producer *prod,
			const struct ucm_steer_cfg *cfg, uint32_t *rr)
{
	struct ucm_xsk_desc d[UCM_XSK_RX_BATCH];
	uint32_t n, i, nw;
	int err;

	if (!q || !prod || !cfg || !rr)
		return ucm_err(-EINVAL);
	nw = cfg->nworkers ? cfg->nworkers : 1;
#ifdef UCM_DEBUG
	if (__atomic_load_n(&ucm_xsk_test_poll_fail, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&ucm_xsk_test_poll_fail, 0, __ATOMIC_RELAXED))
		return ucm_err(-EIO);
#endif
	err = ucm_xsk_queue__refill(q);
	if (err < 0)
		return err;
	n = ucm_xsk_queue__rx(q, d, UCM_XSK_RX_BATCH);
	for (i = 0; i < n; i++) {
		uint32_t w = d[i].worker;

		if (q->steer_fn) {
			w = steer_app(q, &d[i]);
		} else if (d[i].worker < 0 || w >= nw) {
			/* No metadata: the program's policy, here. A frame
			 * that does not parse may go anywhere: its worker
			 * drops and counts it. */
			const uint8_t *data;
			struct ucm_pkt pkt;
			uint32_t rd;

			w = 0;
			data = ucm_xsk_rx_head(q, &d[i], &rd);
			if (ucm_pkt_parse_head(&pkt, data, rd, d[i].len) == UCM_DROP_NONE)
				w = ucm_steer__pick(cfg, &pkt, rr);
		}
		if (unlikely(ucm_cpumap_producer__enqueue(prod, w, d[i].addr, d[i].len))) {
			/* A steering configuration with more workers than
			 * the cpumap: count it, keep the frame. */
			STAT_ADD(q->stats.rx_steer_err, 1);
			ucm_xsk_rx_put(q, &d[i]);
		}
	}
	if (n) {
		ucm_cpumap_producer__flush(prod);
		STAT_ADD(q->stats.rx_batches, 1);
	}
	/* A sample per batch (rx_hist's count is rx_batches): a poll whose
	 * packets were all dropped (a chain too long, cut) flushed none. */
	if (q->rx_stamp && n) {
		/* The flush's own stamp: no clock read of ours. */
		uint64_t now = ucm_cpumap_producer_flush_ns(prod) ?: ucm_now_ns();
		/* One clock on every CPU: a stamp from the future would be a
		 * torn metadata, counted as no wait. */
		uint64_t dt = now > q->rx_stamp ? now - q->rx_stamp : 0;

		STAT_ADD(q->stats.rx_hist[ucm_lat_bucket(dt)], 1);
		STAT_ADD(q->stats.rx_lat_ns, dt);
	}
	q->rx_stamp = 0;
	return n;
}

int ucm_xsk_queue__wait(struct ucm_xsk_queue *q, int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	int ret;

	if (!q || q->fd < 0)
		return ucm_err(-EBADF);
	p.fd = q->fd;
	ret = poll(&p, 1, timeout_ms);
	if (ret < 0)
		return ucm_err(-errno);
	if (p.revents & POLLNVAL)
		return ucm_err(-EBADF);
	return (p.revents & POLLIN) ? 1 : 0;
}
