// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tun sink's read path: what the kernel sends out through the tun
 * (replies, locally generated traffic) goes to the NIC. Each two-way worker
 * reads its tun queue in batches into frames lent by the queue's RX thread
 * (ucm_txq), puts the Ethernet header in front in tun mode, and hands the
 * frames back to go out on the TX ring. This file is the reading: the
 * ring, its reads, the worker's poll() and wait(), open and close;
 * tun_read_tx.c sends what the reads brought.
 *
 * One io_uring per worker, apart from the write ring, holds two standing
 * requests: a multishot poll on the tun queue (a completion each time a
 * packet arrives: no syscall to learn that the tun is idle) and, while the
 * worker sleeps, a poll on its wake eventfd. A batch of reads goes in one
 * submission; with RWF_NOWAIT io_uring completes each read inline with a
 * packet or -EAGAIN (it would otherwise park a read of an empty tun, even
 * on an O_NONBLOCK fd), and every completion is reaped before the frames
 * move on. Reads are handled in submission order, which is the
 * tun's order: a flow's packets leave as they came.
 *
 * A turn reads no more packets than the TX channel has room for: when the
 * RX thread is behind, the packets stay in the tun's queue, where the
 * kernel holds back their senders, instead of being read and dropped. A
 * worker with nothing else to do then waits for the RX thread to take
 * some (a third standing poll, on the channel's room eventfd).
 *
 * So between turns no read is in the kernel, and the frames kept in hand
 * for the next turn are ours alone. Only a batch whose submission or wait
 * fails can leave reads there (the read path stops then, dead); close
 * cancels them and reaps their completions, tears the ring down, and only
 * then sends the frames home.
 *
 * Frame layout of a read: the virtio_net header lands right before
 * UCM_TUN_BACK_HEADROOM, the packet at it; in tun mode the Ethernet header
 * then overwrites the (consumed) vnet header's bytes, 14 before the packet.
 *
 * Concurrency contract: struct tun_back's, in tun_internal.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "engine/txq_internal.h"
#include "io/neigh.h"
#include "io/tun_internal.h"
#include "io/uring.h"

#define BACK_RING	64	/* SQEs: a batch of reads and the standing polls */
#define TAG_POLL	(1ull << 62)
#define TAG_WAKE	(1ull << 61)
#define TAG_ROOM	(1ull << 58)	/* the channel's room eventfd */
/* A cancel's user_data: this bit over its target's (a slot or a tag). */
#define TAG_CANCEL	(1ull << 60)
/* A read the kernel never took, turned into a no-op (unqueue_reads()). */
#define TAG_NOP		(1ull << 59)
/* What close waits at most for each completion it still expects. */
#define BACK_CLOSE_WAIT_NS	50000000

/* A read path short of frames asks the RX thread for them
 * (ucm_txq__want(): it lends at once, woken if asleep) and looks again
 * after this long at most: a pool that had none to lend may have some
 * by then, and the ask is made again. */
#define BACK_NO_FRAME_WAIT_NS	1000000

/* With offloads, what a read takes past its frame: a super-packet of up to
 * 64 KiB (IPv4's total length, IPv6's payload length; a tap's Ethernet
 * header fits in the frame's part); and what a packet of several frames
 * has past its first. Mapped lazily: only what long reads touch is
 * memory. */
#define BACK_SPILL_LEN		65536

_Static_assert(UCM_TUN_BACK_BATCH <= 64, "one bit of inflight per slot");
_Static_assert(UCM_TUN_BACK_BATCH < TAG_CANCEL, "a slot is not a tag");

/* A read's result that brought a packet: more than the vnet header. */
static inline bool read_got_packet(int32_t res)
{
	return res > (int32_t)VNET_LEN;
}

/* The slots below @n whose read answered with a packet. */
static uint32_t reads_with_packet(const struct tun_back *r, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 0; i < n; i++)
		k += !(r->inflight & (1ull << i)) && read_got_packet(r->res[i]);
	return k;
}

static void arm_poll(struct tun_back *r)
{
	struct io_uring_sqe *sqe;

	if (r->poll_dead)
		return;
	sqe = io_uring_get_sqe(&r->ring);
	if (!sqe)
		return;
	if (r->oneshot)
		io_uring_prep_poll_add(sqe, r->fd, POLLIN);
	else
		io_uring_prep_poll_multishot(sqe, r->fd, POLLIN);
	io_uring_sqe_set_data64(sqe, TAG_POLL);
	r->poll_armed = true;
}

/* A one-shot poll of @fd, tagged @tag; true once armed. */
static bool arm_oneshot(struct tun_back *r, int fd, uint64_t tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	if (!sqe)
		return false;
	io_uring_prep_poll_add(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, tag);
	return true;
}

static void arm_wake(struct tun_back *r)
{
	r->wake_armed = arm_oneshot(r, r->wake_fd, TAG_WAKE);
}

/* A standing request's completion. Return true for a wake. */
static bool standing_event(struct tun_back *r, const struct io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);

	if (ud == TAG_POLL) {
		if (cqe->res < 0) {
			/* No multishot poll here: one-shot ones; none at all:
			 * read every turn (a syscall per turn, but working). */
			if (r->oneshot && !r->poll_dead)
				pr_warn("tun: cannot poll a tun queue (%s): reading it every turn\n",
					strerror(-cqe->res));
			r->poll_dead = r->oneshot;
			r->oneshot = true;
		}
		r->readable = true;
		if (!(cqe->flags & IORING_CQE_F_MORE))
			r->poll_armed = false;	/* re-armed by the caller */
	} else if (ud == TAG_ROOM) {
		r->room_armed = false;	/* ucm_txq__room_wait_end() reads it */
	} else if (ud == TAG_WAKE) {
		/* The worker reads the wake (UCM_SINK_F_POLL_WAKE). */
		r->wake_armed = false;
		return true;
	}
	return false;
}

/* The standing requests' completions (no read is ever left pending).
 * Return true when a wake came. */
static bool reap_events(struct tun_back *r)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;
	bool woke = false;

	ucm_uring_run_tasks(&r->ring);
	io_uring_for_each_cqe(&r->ring, head, cqe) {
		woke |= standing_event(r, cqe);
		n++;
	}
	io_uring_cq_advance(&r->ring, n);
	if (!r->poll_armed)
		arm_poll(r);
	if (r->poll_dead)
		r->readable = true;
	return woke;
}

/* Each read slot's spill, for a super-packet past its frame. */
static int spill_map(struct tun_back *r)
{
	uint32_t i;

	r->spill_area = mmap(NULL, (size_t)UCM_TUN_BACK_BATCH * BACK_SPILL_LEN,
			     PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->spill_area == MAP_FAILED) {
		r->spill_area = NULL;
		return -errno;
	}
	for (i = 0; i < UCM_TUN_BACK_BATCH; i++)
		r->spill[i] = r->spill_area + (size_t)i * BACK_SPILL_LEN;
	r->cap = r->room + BACK_SPILL_LEN;
	return 0;
}

int ucm_tun_back_open(struct ucm_tun *tun, uint32_t w, struct tun_wstate *st)
{
	struct tun_worker *wk = &tun->wk[w];
	struct ucm_umem *umem = ucm_txq__umem(wk->txq);
	struct tun_back *r;
	int err;

	r = aligned_alloc(UCM_CACHELINE,
			  (sizeof(*r) + UCM_CACHELINE - 1) & ~(size_t)(UCM_CACHELINE - 1));
	if (!r)
		return ucm_oom("a worker's read path");
	memset(r, 0, sizeof(*r));
	err = ucm_uring_init(&r->ring, BACK_RING);
	if (err) {
		pr_warn("tun: %s: worker %u: no io_uring for the read path: %s\n",
			tun->name, w, strerror(-err));
		free(r);
		return err;
	}
	r->txq = wk->txq;
	r->tx_csum = ucm_txq__tx_csum(wk->txq);
	r->umem = umem;
	r->area = ucm_umem__area(umem);
	r->room = ucm_umem__frame_size(umem) - UCM_TUN_BACK_HEADROOM + VNET_LEN;
	r->cap = r->room;
	r->tap = tun->flags & UCM_TUN_F_TAP;
	r->rw_nowait = tun->rw_nowait;
	r->offload = tun->offload;
	r->frag_room = ucm_umem__frame_size(umem) - BACK_FRAG_OFF;
	r->max_len = r->room - VNET_LEN + (ucm_txq__max_frames(wk->txq) - 1) * r->frag_room;
	/* A descriptor's length is 16 bits, the Ethernet header in it. */
	r->max_len = min(r->max_len, (uint32_t)UINT16_MAX - (r->tap ? 0 : ETH_HLEN));
	if (r->offload || ucm_txq__max_frames(wk->txq) > 1) {
		err = spill_map(r);
		if (err) {
			pr_warn("tun: %s: worker %u: no memory for long reads: %s\n",
				tun->name, w, strerror(-err));
			goto out_ring;
		}
	}
	r->fd = st->fd;
	r->wake_fd = -1;
	r->l2 = wk->l2;
	if (r->l2.resolve_ifindex > 0 && !r->tap) {
		r->neigh_base[0] = tun->wk[w].back_stats.neigh_requests;
		r->neigh_base[1] = tun->wk[w].back_stats.neigh_evicted;
		r->neigh_base[2] = tun->wk[w].back_stats.neigh_refused;
		r->neigh = ucm_neigh_create(r->l2.resolve_ifindex, tun->resolver_init,
					    tun->resolver_init_ctx, w);
		if (!r->neigh) {
			err = -errno;
			pr_warn("tun: %s: worker %u: no next-hop resolver (its netlink socket, eventfd or thread): %s\n",
				tun->name, w, strerror(-err));
			goto out_spill;
		}
	}
	r->readable = true;	/* packets may have queued before we came */
	arm_poll(r);
	io_uring_submit(&r->ring);
	st->back = r;
	return 0;

out_spill:
	if (r->spill_area)
		munmap(r->spill_area, (size_t)UCM_TUN_BACK_BATCH * BACK_SPILL_LEN);
out_ring:
	io_uring_queue_exit(&r->ring);
	free(r);
	return err;
}

/* Ask the kernel to cancel the request @ud. */
static void cancel_one(struct tun_back *r, uint64_t ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	if (!sqe) {	/* the SQ full: make room */
		io_uring_submit(&r->ring);
		sqe = io_uring_get_sqe(&r->ring);
		if (!sqe)
			return;	/* close waits for an answer in vain, then gives up */
	}
	io_uring_prep_cancel64(sqe, ud, 0);
	io_uring_sqe_set_data64(sqe, TAG_CANCEL | ud);
}

/* A completion while closing: what it ends. A cancel that found nothing
 * (ENOENT) ends its target too: it was over, its completion reaped or
 * lost. */
static void close_event(struct tun_back *r, const struct io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	bool own = !(ud & TAG_CANCEL);	/* the request's own answer */

	if (!own) {
		if (cqe->res != -ENOENT)
			return;	/* cancelled, or running: it answers itself */
		ud &= ~TAG_CANCEL;
	} else if (ud == TAG_POLL && (cqe->flags & IORING_CQE_F_MORE)) {
		return;	/* a multishot poll's event: not its end */
	}
	if (ud < UCM_TUN_BACK_BATCH) {
		/* A read a failed batch left in the kernel answered with a
		 * packet after all: it goes no further either. */
		if (own && read_got_packet(cqe->res))
			r->late_packets++;
		r->inflight &= ~(1ull << ud);
	} else if (ud == TAG_POLL)
		r->poll_armed = false;
	else if (ud == TAG_WAKE)
		r->wake_armed = false;
	else if (ud == TAG_ROOM)
		r->room_armed = false;
}

/*
 * Cancel everything the ring has in the kernel and reap until each has
 * answered: the reads a failed batch left there, which write into our
 * frames, and the standing polls, which hold the tun queue's file until
 * they end (so the queue closes with the sink, not with the ring's
 * teardown). Bounded: BACK_CLOSE_WAIT_NS for each completion.
 */
static void cancel_all(struct tun_back *r)
{
	struct __kernel_timespec ts = { .tv_nsec = BACK_CLOSE_WAIT_NS };
	struct io_uring_cqe *cqe;
	uint32_t i;
	int err;

	for (i = 0; i < UCM_TUN_BACK_BATCH; i++)
		if (r->inflight & (1ull << i))
			cancel_one(r, i);
	if (r->poll_armed)
		cancel_one(r, TAG_POLL);
	if (r->wake_armed)
		cancel_one(r, TAG_WAKE);
	if (r->room_armed)
		cancel_one(r, TAG_ROOM);
	/* Reads a failed submission left in the SQ go in first: each is in
	 * inflight, and its cancel follows it. */
	io_uring_submit(&r->ring);
	while (r->inflight || r->poll_armed || r->wake_armed || r->room_armed) {
		err = io_uring_wait_cqe_timeout(&r->ring, &cqe, &ts);
		if (err == -EINTR)
			continue;
		if (err)
			break;
		close_event(r, cqe);
		io_uring_cqe_seen(&r->ring, cqe);
	}
}

/* The resolver's counts into the statistics, once a turn: set, on top of
 * what earlier resolvers of the worker's tun counted (r->neigh_base). */
static void neigh_stats_publish(struct ucm_tun_back_stats *s, const struct tun_back *r)
{
	uint64_t req, ev, ref;

	ucm_neigh_counts(r->neigh, &req, &ev, &ref);
	req += r->neigh_base[0];
	ev += r->neigh_base[1];
	ref += r->neigh_base[2];
	if (req != s->neigh_requests)
		WRITE_ONCE(s->neigh_requests, req);
	if (ev != s->neigh_evicted)
		WRITE_ONCE(s->neigh_evicted, ev);
	if (ref != s->neigh_refused)
		WRITE_ONCE(s->neigh_refused, ref);
}

void ucm_tun_back_close(struct ucm_tun *tun, uint32_t w, struct tun_wstate *st)
{
	struct tun_back *r = st->back;
	uint32_t i, keep = 0;
	uint64_t left;

	/* Joined first: the messages of its last turns are counted too. */
	ucm_neigh_stop(r->neigh);
	if (r->neigh)
		neigh_stats_publish(&tun->wk[w].back_stats, r);
	ucm_neigh_destroy(r->neigh);
	/* Packets read that waited for the next turn: counted, not lost
	 * (a failed batch leaves none waiting: read_batch() counted its). */
	left = reads_with_packet(r, r->pend);
	ucm_tun_back_unres_flush(r, &left);
	cancel_all(r);
	left += r->late_packets;
	if (left)
		STAT_ADD(tun->wk[w].back_stats.drop_stopped, left);
	io_uring_queue_exit(&r->ring);
	/*
	 * Frames in hand go home, now that no read can write into them. One
	 * whose read never answered may still be written by the kernel,
	 * whose teardown of the ring is its own, later: it stays out of its
	 * pool, and the audit counts it missing.
	 */
	for (i = 0; i < r->nstash; i++)
		if (!(r->inflight & (1ull << i)))
			r->stash[keep++] = r->stash[i];
	if (keep < r->nstash)
		pr_warn("tun: %s: worker %u: %u reads did not answer their cancel: their frames stay out of the pool, and their spill buffers mapped\n",
			tun->name, w, r->nstash - keep);
	ucm_txq__drop(r->txq, r->stash, keep);
	/* Such a read writes into its spill buffer too: that stays mapped
	 * (a leak, said above), never reused under it. */
	if (r->spill_area && !r->inflight)
		munmap(r->spill_area, (size_t)UCM_TUN_BACK_BATCH * BACK_SPILL_LEN);
	free(r);
	st->back = NULL;
}

/*
 * A submission the kernel refused, or took in part: the reads it did not
 * take are still in the SQ, and any later submission (close's cancels)
 * would send them into frames that go home. Each becomes a no-op, and is
 * no longer in flight. The kernel takes SQEs in order from its head:
 * @pos[i] is where read i was queued (the SQ's tail then).
 */
static void unqueue_reads(struct tun_back *r, const unsigned int *pos, uint32_t n)
{
	unsigned int khead = io_uring_smp_load_acquire(r->ring.sq.khead);
	struct io_uring_sqe *sqe;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if ((int)(pos[i] - khead) < 0)
			continue;	/* taken: its completion answers */
		sqe = &r->ring.sq.sqes[pos[i] & r->ring.sq.ring_mask];
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, TAG_NOP);
		r->inflight &= ~(1ull << i);
	}
}

/*
 * A kernel whose tun takes no RWF_NOWAIT (before Linux 6.4): io_uring
 * would park each read of an empty tun, and the batch would wait for as
 * many packets as it has reads. The reads go one readv() each on the
 * O_NONBLOCK fd instead, to the first EAGAIN: a system call a packet.
 */
static uint32_t read_plain(struct tun_back *r, uint32_t n)
{
	uint32_t i;
	ssize_t ret;

	for (i = 0; i < n; i++) {
		r->iov[i][0].iov_base = (char *)r->area + r->stash[i] + UCM_TUN_BACK_HEADROOM -
					VNET_LEN;
		r->iov[i][0].iov_len = r->room;
		r->iov[i][1].iov_base = r->spill_area ? r->spill[i] : NULL;
		r->iov[i][1].iov_len = r->spill_area ? BACK_SPILL_LEN : 0;
		ret = readv(r->fd, r->iov[i], r->spill_area ? 2 : 1);
		r->res[i] = ret < 0 ? -errno : (int32_t)ret;
		if (ret < 0 && errno == EAGAIN)
			return i + 1;	/* drained: the rest would say so too */
	}
	return n;
}

/*
 * Submit the batch of reads, into the first @max slots of the stash, and
 * collect every result, in slot order.
 * readable is cleared first: a poll completion during the batch (a packet
 * that came after a read found the queue empty) sets it again, so no packet
 * is left waiting for the next one. A ring that fails to take the whole
 * submission is given up (dead): SQEs left in it would read into frames
 * that move on.
 */
static int read_batch(struct tun_back *r, uint32_t max, struct ucm_tun_back_stats *a)
{
	struct io_uring_cqe *cqe;
	uint32_t i, got = 0, n = min(r->nstash, max);
	unsigned int head, cnt, queued, pos[UCM_TUN_BACK_BATCH];
	int ret;

	if (!r->rw_nowait && !tun_test_wait_fail(false)) {
		r->readable = false;
		a->reads++;
		return read_plain(r, n);
	}
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe;

		pos[i] = r->ring.sq.sqe_tail;	/* where get_sqe puts it */
		sqe = io_uring_get_sqe(&r->ring);
		if (!sqe)
			break;
		/* Offset -1: a tun is a stream. */
		r->iov[i][0].iov_base = (char *)r->area + r->stash[i] + UCM_TUN_BACK_HEADROOM -
					VNET_LEN;
		r->iov[i][0].iov_len = r->room;
		if (r->spill_area) {	/* long reads: past the frame, the slot's spill */
			r->iov[i][1].iov_base = r->spill[i];
			r->iov[i][1].iov_len = BACK_SPILL_LEN;
			io_uring_prep_readv(sqe, r->fd, r->iov[i], 2, -1);
		} else {
			io_uring_prep_read(sqe, r->fd, r->iov[i][0].iov_base, r->room, -1);
		}
		/* io_uring parks a read of a pollable file until data comes,
		 * O_NONBLOCK or not; RWF_NOWAIT makes it answer -EAGAIN. */
		sqe->rw_flags = tun_test_wait_fail(false) ? 0 : r->rw_nowait;
		io_uring_sqe_set_data64(sqe, i);
		r->res[i] = -EAGAIN;
		r->inflight |= 1ull << i;
	}
	n = i;
	r->readable = false;
	queued = io_uring_sq_ready(&r->ring);
	ret = io_uring_submit(&r->ring);
	if (ret < 0 || (unsigned int)ret < queued) {
		pr_warn("tun: the read path's io_uring took %d of %u requests: reading stops\n",
			ret, queued);
		unqueue_reads(r, pos, n);
		r->dead = true;
		ucm_tun_back_unres_flush(r, &a->drop_stopped);
		a->stopped = 1;
		return ret < 0 ? ret : -EIO;
	}
	a->reads++;
	while (got < n) {
		cnt = 0;
		io_uring_for_each_cqe(&r->ring, head, cqe) {
			uint64_t ud = io_uring_cqe_get_data64(cqe);

			if (ud < UCM_TUN_BACK_BATCH) {
				r->res[ud] = cqe->res;
				r->inflight &= ~(1ull << ud);
				got++;
			} else {
				standing_event(r, cqe);	/* the worker is awake */
			}
			cnt++;
		}
		io_uring_cq_advance(&r->ring, cnt);
		if (got >= n)
			break;
		/* Non-blocking reads complete inline; this only waits for
		 * the completions to be posted. */
		ret = tun_test_wait_fail(true) ? -EBADR : io_uring_wait_cqe(&r->ring, &cqe);
		if (ret && ret != -EINTR && ret != -EAGAIN) {
			/* Reads still in flight name stash slots: a later
			 * batch must not reuse them (close cancels them). */
			pr_warn("tun: the read path's io_uring failed waiting (%s): reading stops\n",
				strerror(-ret));
			r->dead = true;
			a->stopped = 1;
			ucm_tun_back_unres_flush(r, &a->drop_stopped);
			/* The reads that did answer go no further. */
			a->drop_stopped += reads_with_packet(r, n);
			return ret;
		}
	}
	return n;
}

static void back_stats_publish(struct ucm_tun_back_stats *s,
			      const struct ucm_tun_back_stats *a)
{
	const uint64_t *src = (const uint64_t *)a;
	uint64_t *dst = (uint64_t *)s;

	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		if (src[i])
			STAT_ADD(dst[i], src[i]);
}

uint32_t ucm_tun_back_poll(void *ctx, uint32_t w)
{
	struct ucm_tun *tun = ctx;
	struct tun_wstate *st = tun->wk[w].st;
	struct tun_back *r = st ? st->back : NULL;
	struct back_turn t;
	uint32_t i, n;
	bool drained = false, got_one = false;
	int ret;

	if (!r || r->dead)
		return 0;
	if (r->neigh)
		neigh_stats_publish(&tun->wk[w].back_stats, r);
	reap_events(r);
	if (!r->readable && !r->pend && !r->nunres) {
		if (io_uring_sq_ready(&r->ring))
			io_uring_submit(&r->ring);	/* a re-armed poll */
		return 0;
	}
	if (r->nstash < UCM_TUN_BACK_BATCH)
		r->nstash += ucm_txq__take(r->txq, r->stash + r->nstash,
					   UCM_TUN_BACK_BATCH - r->nstash);
	/* Back-pressure: no more reads than the channel takes now; the
	 * rest wait in the tun (the RX thread's collect frees room). */
	t.room = ucm_txq__room(r->txq);
	/* Short of frames: ask the RX thread now, as a sleep would; a worker
	 * that spins (spin_us) may not sleep for a while. A turn stopped in
	 * a packet for want of frames keeps that read's own in the stash:
	 * short too while it has none past them. */
	if ((!r->nstash && (r->readable || r->pend)) ||
	    (r->short_frames && r->nstash <= r->pend))
		ucm_txq_ask(r->txq);
	/* Each its own: a stall for room counts once, whether or not its
	 * first turn had frames. */
	if (!r->nstash && r->readable)
		STAT_ADD(tun->wk[w].back_stats.no_frame, 1);
	if (!t.room && !r->blocked)
		STAT_ADD(tun->wk[w].back_stats.channel_waits, 1);
	/* Packets waiting for a next hop have their frames: room will do.
	 * Without it they still age, and a failed next hop's go. */
	if (!t.room || (!r->nstash && !r->nunres)) {
		uint32_t aged = 0;

		r->blocked = !t.room;
		if (r->nunres && r->neigh) {
			memset(&t.a, 0, sizeof(t.a));
			r->now = ucm_now_ns();
			ucm_neigh_sync(r->neigh, r->now);
			ucm_tun_back_unres_age(r, &t);
			back_stats_publish(&tun->wk[w].back_stats, &t.a);
			aged = t.a.drop_no_neigh;
		}
		if (io_uring_sq_ready(&r->ring))
			io_uring_submit(&r->ring);
		return aged;
	}
	r->blocked = false;
	memset(&t.a, 0, sizeof(t.a));
	t.nout = t.nfree = 0;
	if (!r->pend && r->readable && r->nstash) {	/* nothing waits from the last turn: read */
		ret = read_batch(r, t.room, &t.a);
		n = ret > 0 ? (uint32_t)ret : 0;
		if (ret < 0)
			t.a.err++;
		for (i = 0; i < n; i++) {
			drained |= r->res[i] == -EAGAIN;
			got_one |= read_got_packet(r->res[i]);
		}
		/* Every read found a packet: more may wait, and no poll
		 * event will say so (it fires on arrivals). */
		if (!drained && got_one)
			r->readable = true;
		r->pend = n;
	}
	ucm_tun_back_src_sync(r, &tun->back_src);
	if (r->neigh && (r->pend || r->nunres)) {
		r->now = ucm_now_ns();
		ucm_neigh_sync(r->neigh, r->now);	/* the resolver's answers */
	}
	ucm_tun_back_handle_reads(r, &t);
	if (r->neigh && t.a.neigh_asks)
		ucm_neigh_kick(r->neigh);	/* the batch's questions, at once */
	back_stats_publish(&tun->wk[w].back_stats, &t.a);
	/* Work done: packets sent or dropped (not empty reads). */
	return (uint32_t)(t.a.packets + t.a.drop_offload + t.a.drop_too_big +
			  t.a.drop_non_ip + t.a.drop_no_neigh + t.a.drop_link_local);
}

/*
 * A sleep's wait, given @ret: one the ring refused (not a signal, not its
 * timeout) stops reading, as a batch's failed wait does (read_batch()),
 * rather than leave the worker spinning on a wait that returns at once.
 * The packets waiting are counted at close.
 */
static void sleep_done(struct ucm_tun *tun, uint32_t w, struct tun_back *r, int ret)
{
	struct ucm_tun_back_stats a = {};

	if (tun_test_sleep_fail(false))
		ret = -EBADR;
	if (ret >= 0 || ret == -EINTR || ret == -ETIME || ret == -EAGAIN || ret == -EBUSY) {
		reap_events(r);
		return;
	}
	pr_warn("tun: the read path's io_uring failed a sleep (%s): reading stops\n",
		strerror(-ret));
	r->dead = true;
	a.stopped = 1;
	ucm_tun_back_unres_flush(r, &a.drop_stopped);
	back_stats_publish(&tun->wk[w].back_stats, &a);
}

/* Packets wait and the channel is full: sleep until the RX thread takes
 * some (the room eventfd) or the worker is woken. Return: 1 when there is
 * room again, 0 after a sleep. */
static int room_wait(struct ucm_tun *tun, uint32_t w, struct tun_back *r)
{
	if (!ucm_txq__room_wait_begin(r->txq)) {
		ucm_txq__room_wait_end(r->txq);
		io_uring_submit(&r->ring);
		return 1;
	}
	if (!r->room_armed)
		r->room_armed = arm_oneshot(r, ucm_txq__room_fd(r->txq), TAG_ROOM);
	if (r->nunres) {	/* packets wait for next hops: they age meanwhile */
		struct __kernel_timespec ts = { .tv_nsec = BACK_UNRES_WAIT_NS };
		struct io_uring_cqe *cqe;

		sleep_done(tun, w, r, io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts,
									NULL));
	} else {
		sleep_done(tun, w, r, io_uring_submit_and_wait(&r->ring, 1));
	}
	ucm_txq__room_wait_end(r->txq);
	return 0;
}

int ucm_tun_back_wait(void *ctx, uint32_t w, int wake_fd)
{
	struct ucm_tun *tun = ctx;
	struct tun_wstate *st = tun->wk[w].st;
	struct tun_back *r = st ? st->back : NULL;
	struct __kernel_timespec ts = { .tv_nsec = BACK_NO_FRAME_WAIT_NS };
	struct io_uring_cqe *cqe;
	struct pollfd p;
	int ret;

	if (!r || r->dead) {	/* a one-way worker, or reading stopped */
		p.fd = wake_fd;
		p.events = POLLIN;
		if (poll(&p, 1, -1) < 0)
			return -errno;
		return 0;	/* the worker reads the wake */
	}
	r->wake_fd = wake_fd;
	/* A wake seen here may be this sleep's (the producer saw our
	 * announcement): do not sleep then. */
	if (reap_events(r)) {
		io_uring_submit(&r->ring);
		return 1;
	}
	if (!r->wake_armed)
		arm_wake(r);
	if (r->pend) {	/* reads wait for room or frames: never for the tun */
		if (!ucm_txq__room(r->txq))
			return room_wait(tun, w, r);
		if (!r->short_frames || ucm_txq__available(r->txq)) {
			io_uring_submit(&r->ring);
			return 1;
		}
		ucm_txq__want(r->txq);	/* the RX thread lends now, not at its idle timeout */
		sleep_done(tun, w, r, io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL));
		return 0;
	}
	if (r->readable && (r->nstash || ucm_txq__available(r->txq)) &&
	    ucm_txq__room(r->txq)) {
		io_uring_submit(&r->ring);
		return 1;	/* work to do: no sleep */
	}
	if (r->readable && (r->nstash || ucm_txq__available(r->txq)))
		return room_wait(tun, w, r);
	if (r->readable) {	/* packets wait for frames: ask, look again soon */
		ucm_txq__want(r->txq);
		ret = io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
	} else if (r->nunres) {	/* packets wait for next hops: look again soon */
		ts.tv_nsec = BACK_UNRES_WAIT_NS;
		ret = io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
	} else {
		ret = io_uring_submit_and_wait(&r->ring, 1);
	}
	sleep_done(tun, w, r, ret);
	return 0;
}

int ucm_tun__back_stats(const struct ucm_tun *tun, uint32_t worker,
			struct ucm_tun_back_stats *st, size_t sz)
{
	struct ucm_tun_back_stats o;
	uint64_t *dst = (uint64_t *)&o;
	const uint64_t *src;

	_Static_assert(sizeof(o) % sizeof(uint64_t) == 0,
		       "ucm_tun_back_stats: counters of 64 bits only");
	if (!tun || !st || !sz || worker >= UCM_TUN_MAX_WORKERS)
		return ucm_err(-EINVAL);
	src = (const uint64_t *)&tun->wk[worker].back_stats;
	for (size_t i = 0; i < sizeof(o) / sizeof(uint64_t); i++)
		dst[i] = READ_ONCE(src[i]);
	ucm_stats_out(st, sz, &o, sizeof(o));
	return 0;
}

/* The 0.2.0 name (tun.h). */
int ucm_tun__rev_stats(const struct ucm_tun *tun, uint32_t worker,
		       struct ucm_tun_back_stats *st, size_t sz)
{
	return ucm_tun__back_stats(tun, worker, st, sz);
}
