// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tun sink: cpumap batches into a multi-queue tun/tap device, one
 * io_uring submission per batch (our netif_receive_skb_list()).
 *
 * Each worker owns its state (struct tun_wstate), made by open() on the
 * worker thread: an io_uring with the queue's fd registered, and the
 * layout of one batch, so building a batch allocates nothing. A packet is
 * one contiguous buffer, one IORING_OP_WRITE: the zeroed virtio_net header,
 * written into the frame right before the packet (tun: over the end of the
 * Ethernet header, whose place the IP datagram takes; tap: in the
 * headroom, UCM_FRAME_SINK_ROOM), then the packet (tun: the IP datagram,
 * Ethernet and VLAN tags stripped; tap: the whole frame). One buffer
 * instead of two iovecs spares the kernel an iovec import per packet.
 * Coalescing (UCM_TUN_F_COALESCE, our cpumap GRO) plans the batch with
 * ucm_gso__plan() and writes each group of same-flow UDP datagrams or TCP
 * segments as one super-packet: the first packet, its headers rewritten by
 * ucm_gso__build(), then the other packets' payloads, one
 * IORING_OP_WRITEV; the kernel takes it as one packet through its stack
 * (a UDP socket without UDP_GRO gets the datagrams cut back out). The
 * batch is submitted with one io_uring_submit_and_wait() and every
 * completion is reaped before xmit() returns: the worker returns the
 * frames to their pools right after, so no write may still be reading
 * them. A completion names its write exactly
 * (the batch's number and the slot, in user_data): one of an earlier
 * batch never passes for the write now in its slot. A wait that fails
 * cancels the writes not reaped and waits for their answers; a ring that
 * cannot account for every write is thrown away.
 *
 * The writes are RWF_NOWAIT (Linux 6.4 on; before, nowait_probe() says
 * so) and the fds non-blocking, so io_uring never parks a write (it
 * completes it inline or fails it with EAGAIN), and a tun write never
 * sleeps: waiting for the completions of a submitted batch cannot wait
 * forever. Before 6.4 a write to a full tun (its sndbuf lowered) waits
 * for room.
 *
 * A packet of several frames (UCM_FRAME_F_CHAIN) is one write of an
 * iovec per frame; coalesced, its payload is an iovec per frame of the
 * super-packet's write (the plan sums its checksum over its frames).
 *
 * This file is the workers' write path and the sink ops; their open and
 * close, tun_worker.c. The device's set-up and the writes' statistics
 * are tun_dev.c; the read path (the way back), tun_read.c and tun_read_tx.c.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <liburing.h>

#include "io/tun_internal.h"
#include "io/uring.h"

/* ---- worker side: xmit ------------------------------------------------ */

static __hot_inline void count_err(struct ucm_tun_stats *a, int err)
{
	switch (err) {
	case EIO:
		a->err_eio++;	/* link down */
		break;
	case EBADFD:
		a->err_ebadfd++;	/* device deleted under us */
		break;
	case EAGAIN:
		a->err_eagain++;
		break;
	default:
		a->err_other++;
	}
}

/* Super-packet size histogram bucket: 2, 3-4, 5-8, ... 65-128 segments. */
static __hot_inline uint32_t seg_bucket(uint32_t nseg)
{
	uint32_t b = 31 - __builtin_clz(nseg - 1);

	return min(b, (uint32_t)UCM_TUN_SEG_HIST - 1);
}

/* A write's result: the whole of it, or a failure. Returns the packets it
 * failed to deliver. */
static __hot_inline uint32_t count_res(struct ucm_tun_stats *a, ssize_t res,
				       const struct tun_slot *sl)
{
	if (likely(res == (ssize_t)sl->len)) {
		a->packets += sl->nseg;
		a->bytes += sl->bytes;
		a->csum_partial += sl->partial;
		if (sl->nseg > 1) {
			a->super++;
			a->super_segs += sl->nseg;
			a->super_hist[seg_bucket(sl->nseg)]++;
		}
		return 0;
	}
	if (res < 0)
		count_err(a, (int)-res);
	else
		a->err_other++;	/* short write */
	return sl->nseg;
}

/* What the device takes, vnet header first, in one buffer (its length in
 * sl->len); NULL for a non-IP frame in tun mode (a tun has no Ethernet
 * header to carry anything else). The header goes right before the packet:
 * over the Ethernet header in tun mode (l3_off >= 14), in the sink's room
 * of the headroom in tap mode (data_off >= UCM_FRAME_HDR_ROOM, checked by
 * the worker). No offloads, but a partial checksum's: the kernel completes
 * it (NEEDS_CSUM; for local delivery it trusts it), where written as it
 * came it would drop the packet (proto.h: ucm_l4_csum_partial()). */
static __hot_inline char *pkt_buf(const struct ucm_tun *tun, struct ucm_frame_hdr *hdr,
				  struct tun_slot *sl)
{
	char *data = ucm_frame_data(hdr), *frame = data;
	struct virtio_net_hdr *vh;
	uint32_t start = 0;

	if (tun->flags & UCM_TUN_F_TAP) {
		sl->len = hdr->len;
	} else {
		if (unlikely(!(hdr->pkt.flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6))))
			return NULL;
		/* l3_len, not len - l3_off: Ethernet padding stays out. */
		start = hdr->pkt.l3_off;
		sl->len = hdr->pkt.l3_len;
	}
	data = frame + start - VNET_LEN;
	memset(data, 0, VNET_LEN);
	sl->len += VNET_LEN;
	/* A tap's write runs to the frame's end, and the kernel's sum with
	 * it: trailing bytes (Ethernet padding) are no sender's offload. */
	sl->partial = (!start && hdr->len != hdr->pkt.l3_off + hdr->pkt.l3_len) ? false :
		      ucm_l4_csum_partial(&hdr->pkt, (const uint8_t *)frame);
	if (unlikely(sl->partial)) {
		vh = (struct virtio_net_hdr *)data;
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		/* Offsets from where the write starts, as ucm_gso__build()'s. */
		vh->csum_start = hdr->pkt.l4_off - start;
		vh->csum_offset = ucm_l4_check_off(hdr->pkt.l4_proto);
		vh->hdr_len = vh->csum_start + hdr->pkt.l4_hlen;
	} else if (unlikely(hdr->flags & UCM_FRAME_F_CHAIN)) {
		/* Past a page the tun makes its skb linear but for hdr_len
		 * (tun_alloc_skb()): 0 would copy a jumbo packet into one
		 * buffer, a high-order allocation each; its headers linear,
		 * the rest goes in pages. A hint only, without GSO. */
		vh = (struct virtio_net_hdr *)data;
		vh->hdr_len = hdr->pkt.l4_off - start +
			      (hdr->pkt.flags & UCM_PKT_F_L4 ? hdr->pkt.l4_hlen : 0);
	}
	return data;
}

/* A group of the plan as one write: the first packet whole, its headers
 * made the super-packet's, then each other packet's L4 payload. */
static __hot_inline void super_build(const struct ucm_tun *tun, struct tun_wstate *st,
				     struct ucm_frame_hdr **frames, uint32_t g,
				     struct tun_slot *sl, struct iovec *iov)
{
	uint32_t head = st->plan.head[g];
	struct ucm_frame_hdr *h = frames[head];
	uint8_t *data = ucm_frame_data(h);
	bool tap = tun->flags & UCM_TUN_F_TAP;
	/* tun: from the IP header; tap: the whole frame, less any padding */
	uint32_t start = tap ? 0 : h->pkt.l3_off;
	uint32_t hlen = h->pkt.l4_off - h->pkt.l3_off + h->pkt.l4_hlen;
	uint32_t payload = h->pkt.l3_len - hlen, first = payload, last = first, k = 1, nseg = 1;
	struct virtio_net_hdr *vh = (struct virtio_net_hdr *)(data + start - VNET_LEN);
	int32_t j;

	/* The first packet whole: its own lengths, before the build. */
	iov[0].iov_base = vh;
	iov[0].iov_len = VNET_LEN + h->pkt.l3_off - start + h->pkt.l3_len;
	if (unlikely(h->flags & UCM_FRAME_F_CHAIN))
		k = ucm_tun_chain_iov(h, st->addrs[head], iov, iov[0].iov_len);
	sl->bytes = tap ? h->len : h->pkt.l3_len;
	for (j = st->plan.next[head]; j >= 0; j = st->plan.next[j]) {
		struct ucm_frame_hdr *m = frames[j];
		uint32_t mh = m->pkt.l4_off - m->pkt.l3_off + m->pkt.l4_hlen;

		iov[k].iov_base = (uint8_t *)ucm_frame_data(m) + m->pkt.l4_off + m->pkt.l4_hlen;
		last = m->pkt.l3_len - mh;
		iov[k].iov_len = last;
		payload += last;
		sl->bytes += tap ? m->len : m->pkt.l3_len;
		if (unlikely(m->flags & UCM_FRAME_F_CHAIN))
			k += ucm_tun_chain_iov(m, st->addrs[j], &iov[k], iov[k].iov_len);
		else
			k++;
		nseg++;
	}
	sl->short_last = last < first;
	/* What ucm_gso__build() rewrites and cannot work out again, for a
	 * kernel that refuses the super-packet (super_refused()). */
	ucm_gso_save(&h->pkt, data, &sl->undo);
	ucm_gso__build(&h->pkt, data, nseg, payload, st->plan.push[g], tap, vh);
#ifdef UCM_DEBUG
	/* Relaxed, no pair: a test's switch, nothing published with it. 1:
	 * every super-packet refused, 4: IPv6 ones (a shape refused), 8:
	 * UDP ones with a short last segment (Linux 6.6.44). */
	if ((__atomic_load_n(&ucm_tun_test_refuse_super, __ATOMIC_RELAXED) & 1) ||
	    ((__atomic_load_n(&ucm_tun_test_refuse_super, __ATOMIC_RELAXED) & 4) &&
	     h->pkt.eth_proto == 0x86dd) ||
	    ((__atomic_load_n(&ucm_tun_test_refuse_super, __ATOMIC_RELAXED) & 8) &&
	     h->pkt.l4_proto == IPPROTO_UDP && sl->short_last))
		vh->gso_type = 0x7f;
#endif
	sl->len = VNET_LEN + h->pkt.l3_off - start + hlen + payload;
	sl->nseg = nseg;
	sl->niov = k;
	sl->g = g;
	sl->partial = false;	/* a super-packet's: always NEEDS_CSUM */
}

/*
 * A protocol whose super-packet the kernel refused is merged again after
 * GSO_RETRY_NS, then after twice that at each refusal, up to
 * GSO_RETRY_MAX_NS. A kernel may refuse one shape and take the rest (a
 * UDP short last segment is handled apart: super_refused()), so one
 * refusal does not end merging for good; a kernel that never takes it
 * (a tun takes UDP GSO from Linux 6.2) costs one refused write a minute.
 */
#define GSO_RETRY_NS		1000000000ull
#define GSO_RETRY_MAX_NS	64000000000ull

/* Before a batch's plan, with a protocol off: back on when its time came. */
static __noinline void gso_retry(struct tun_wstate *st)
{
	static const uint32_t flag[2] = { UCM_GSO_F_NO_TCP, UCM_GSO_F_NO_UDP };
	uint64_t now = ucm_now_ns();

	for (int p = 0; p < 2; p++)
		if ((st->gso_flags & flag[p]) && now >= st->gso_retry_at[p])
			st->gso_flags &= ~flag[p];
}

/*
 * Lay a batch out as writes in st->slot[] / st->iov[]: one per packet, or
 * with coalescing one per group of the plan, in the plan's order (each
 * flow's order kept). Packets that cannot go (non-IP in tun mode) are
 * counted and added to *failed. Returns the number of writes.
 */
static uint32_t batch_layout(const struct ucm_tun *tun, struct tun_wstate *st,
			     struct ucm_frame_hdr **frames, uint32_t n,
			     struct ucm_tun_stats *a, uint32_t *failed)
{
	uint32_t i, g, nslot = 0, niov = 0, ngroups = n;
	bool coalesce = st->coalesce;

	if (coalesce) {
		uint32_t chains = 0;

		for (i = 0; i < n; i++) {
			st->pkts[i] = &frames[i]->pkt;
			st->data[i] = ucm_frame_data(frames[i]);
			chains |= frames[i]->flags & UCM_FRAME_F_CHAIN;
		}
		if (unlikely(chains))
			ucm_tun_frags_fill(st, frames, n);
		/* Refused at run time: its retry's clock. (Refused at create
		 * is for good: no clock read per batch for it.) */
		if (unlikely(st->gso_flags & (UCM_GSO_F_NO_TCP | UCM_GSO_F_NO_UDP) &
			     ~tun->gso_refused))
			gso_retry(st);
		/* n <= UCM_TUN_BATCH_MAX <= UCM_GSO_MAX_BATCH: cannot fail. */
		ucm_gso_plan_frags(st->pkts, st->data, chains ? st->fragp : NULL, n,
				   st->gso_flags, &st->plan);
		ngroups = st->plan.ngroups;
	}
	for (g = 0; g < ngroups; g++) {
		struct tun_slot *sl = &st->slot[nslot];
		struct iovec *iov = &st->iov[niov];

		i = coalesce ? st->plan.head[g] : g;
		if (coalesce && st->plan.nseg[g] > 1) {
			super_build(tun, st, frames, g, sl, iov);
		} else {
			iov->iov_base = pkt_buf(tun, frames[i], sl);
			if (unlikely(!iov->iov_base)) {
				a->non_ip++;
				(*failed)++;
				continue;
			}
			iov->iov_len = sl->len;
			sl->bytes = sl->len - VNET_LEN;
			sl->nseg = 1;
			sl->niov = 1;
			if (unlikely(frames[i]->flags & UCM_FRAME_F_CHAIN))
				sl->niov = ucm_tun_chain_iov(frames[i], st->addrs[i], iov, sl->len);
		}
		sl->done = false;
		sl->iov = niov;
		niov += sl->niov;
		nslot++;
	}
	return nslot;
}

/*
 * A super-packet the kernel took, of a protocol it had refused: the waits
 * start again from the shortest, said once, only when no refusal came for
 * a whole wait past the retry. A kernel that refuses one shape and takes
 * another (a short last segment, a family) keeps doubling the wait, not
 * refusing once a second with a line each time.
 */
static __noinline void gso_taken(const struct ucm_tun *tun, struct tun_wstate *st, bool tcp)
{
	uint32_t flag = tcp ? UCM_GSO_F_NO_TCP : UCM_GSO_F_NO_UDP;

	if ((st->gso_flags & flag) ||
	    ucm_now_ns() < st->gso_retry_at[!tcp] + st->gso_backoff[!tcp])
		return;
	st->gso_backoff[!tcp] = 0;
	pr_info("tun: %s: the kernel takes %s super-packets again\n", tun->name,
		tcp ? "TCP" : "UDP");
}

/*
 * The kernel refused a super-packet with EINVAL: too old for its GSO type,
 * or this shape of it. Put the first packet back as it came, write the
 * group's packets one by one, and stop merging that protocol on this
 * worker until its retry (above), or for a UDP one with a short last
 * segment merge equal sizes only: nothing is lost. On the io_uring path
 * the rest of the batch is already written by then, so a flow's next group
 * in the same hand-over may pass these packets: a reordering per refusal.
 */
static __noinline uint32_t super_refused(const struct ucm_tun *tun, struct tun_wstate *st,
					 struct ucm_frame_hdr **frames,
					 const struct tun_slot *sl, struct ucm_tun_stats *a)
{
	int32_t j = st->plan.head[sl->g];
	struct ucm_frame_hdr *h = frames[j];
	bool tcp = h->pkt.l4_proto == IPPROTO_TCP;
	uint32_t flag = tcp ? UCM_GSO_F_NO_TCP : UCM_GSO_F_NO_UDP, failed = 0;
	ssize_t res;
	char *buf;

	a->super_refused++;
	if (!tcp && sl->short_last) {
		/* Perhaps this shape alone (Linux 6.6.44 refused a short
		 * last segment; the create's probe finds that on a tun, not
		 * on a tap): equal sizes from now on, for good, as the
		 * probe's finding is. A group planned so is never short:
		 * refused too, UDP stops as below. */
		if (!(st->gso_flags & UCM_GSO_F_UDP_EQUAL))
			pr_warn("tun: %s: the kernel refused a UDP super-packet with a short last segment (EINVAL): this worker merges UDP datagrams of one size only\n",
				tun->name);
		st->gso_flags |= UCM_GSO_F_UDP_EQUAL;
		goto one_by_one;
	}
	if (!st->gso_warned[!tcp])
		pr_warn("tun: %s: the kernel refused a %s super-packet (EINVAL%s): this worker writes %s packets one by one, and tries merging again after 1 s, then at doubling waits up to 64 s\n",
			tun->name, tcp ? "TCP" : "UDP",
			tcp ? "" : "; a tun takes UDP GSO from Linux 6.2", tcp ? "TCP" : "UDP");
	st->gso_warned[!tcp] = true;
	/* The batch's first refusal of it sets the wait (its plan merged
	 * more groups of the protocol, all refused alike). */
	if (!(st->gso_flags & flag)) {
		st->gso_backoff[!tcp] = st->gso_backoff[!tcp] ?
					min(2 * st->gso_backoff[!tcp], GSO_RETRY_MAX_NS) :
					GSO_RETRY_NS;
		st->gso_retry_at[!tcp] = ucm_now_ns() + st->gso_backoff[!tcp];
	}
	st->gso_flags |= flag;
one_by_one:
	ucm_gso_restore(&h->pkt, ucm_frame_data(h), &sl->undo);
	for (; j >= 0; j = st->plan.next[j]) {
		struct tun_slot one = { .nseg = 1 };
		struct iovec iov[UCM_TUN_CHAIN_IOV];

		buf = pkt_buf(tun, frames[j], &one);	/* no GSO in its vnet header */
		one.bytes = one.len - VNET_LEN;
		iov[0].iov_base = buf;
		iov[0].iov_len = one.len;
		one.niov = 1;
		if (frames[j]->flags & UCM_FRAME_F_CHAIN)
			one.niov = ucm_tun_chain_iov(frames[j], st->addrs[j], iov, one.len);
		res = writev(st->fd, iov, one.niov);
		a->submits++;
		failed += count_res(a, res < 0 ? -errno : res, &one);
	}
	return failed;
}

/* A write's result, a refused super-packet's second chance included. */
static __hot_inline uint32_t slot_result(const struct ucm_tun *tun, struct tun_wstate *st,
					 struct ucm_frame_hdr **frames, struct tun_slot *sl,
					 ssize_t res, struct ucm_tun_stats *a)
{
	sl->done = true;
	if (unlikely(res == -EINVAL && sl->nseg > 1))
		return super_refused(tun, st, frames, sl, a);
	if (unlikely((st->gso_backoff[0] | st->gso_backoff[1]) && sl->nseg > 1 && res > 0)) {
		bool tcp = frames[st->plan.head[sl->g]]->pkt.l4_proto == IPPROTO_TCP;

		if (st->gso_backoff[!tcp])
			gso_taken(tun, st, tcp);
	}
	return count_res(a, res, sl);
}

/* The "before": one write at a time. */
static uint32_t xmit_write(const struct ucm_tun *tun, struct tun_wstate *st,
			   struct ucm_frame_hdr **frames, uint32_t n,
			   struct ucm_tun_stats *a)
{
	uint32_t i, failed = 0, nslot;
	ssize_t res;

	nslot = batch_layout(tun, st, frames, n, a, &failed);
	for (i = 0; i < nslot; i++) {
		const struct tun_slot *sl = &st->slot[i];

		res = writev(st->fd, &st->iov[sl->iov], sl->niov);
		a->submits++;
		failed += slot_result(tun, st, frames, &st->slot[i], res < 0 ? -errno : res, a);
	}
	return failed;
}

/* A ring that cannot be rebuilt (out of memory or fds for a moment) is
 * tried again this long after, the batches written one packet a write()
 * meanwhile: a second is a few thousand syscalls at the worst. */
#define RING_RETRY_NS		1000000000ull

static void ring_build(const struct ucm_tun *tun, struct tun_wstate *st)
{
	int err = tun_test_ring_fail(true) ? -ENOMEM : ucm_tun_ring_init(st);

	if (!err) {
		if (st->ring_warned)
			pr_info("tun: %s: the io_uring is back: batches again\n", tun->name);
		st->ring_retry_at = 0;
		st->ring_warned = false;
		return;
	}
	st->ring_retry_at = ucm_now_ns() + RING_RETRY_NS;
	if (!st->ring_warned)
		pr_warn("tun: %s: cannot rebuild an io_uring (%s): one packet per write() until it can be (tried every second)\n",
			tun->name, strerror(-err));
	st->ring_warned = true;
}

/*
 * Throw the ring away and make a new one: SQEs the kernel did not take are
 * still queued in it and name frames that go home after this batch, so
 * they must never be submitted. If no new ring can be made, the worker
 * goes on one write() per packet until one can (ring_build()).
 */
static void ring_reset(const struct ucm_tun *tun, struct tun_wstate *st)
{
	ucm_tun_ring_exit(st);
	ring_build(tun, st);
}

/* How long the answer to a batch's cancels may take, per completion. */
#define REAP_CANCEL_WAIT_NS	100000000

/*
 * One completion while reaping the batch: a write's result, or the answer
 * to a write's cancel, which settles the write only when it found nothing
 * (ENOENT: the write was over, its completion lost). A stale one is
 * dropped. *left counts the writes not settled. Return the packets failed.
 */
static __hot_inline uint32_t cqe_result(const struct ucm_tun *tun, struct tun_wstate *st,
					struct ucm_frame_hdr **frames,
					const struct io_uring_cqe *cqe, uint32_t *left,
					struct ucm_tun_stats *a)
{
	uint64_t ud = cqe->user_data;
	uint32_t i = ud & TUN_UD_SLOT_MASK;
	struct tun_slot *sl;

	if (unlikely(i >= UCM_TUN_BATCH_MAX || (ud & ~TUN_UD_CANCEL) != tun_write_ud(st, i)))
		return 0;	/* stale */
	sl = &st->slot[i];
	if (unlikely(sl->done))
		return 0;	/* settled by its cancel's ENOENT: stale too */
	if (unlikely(ud & TUN_UD_CANCEL)) {
		if (cqe->res != -ENOENT)
			return 0;	/* cancelled or running: the write answers */
		sl->done = true;
		(*left)--;
		a->err_other++;
		return sl->nseg;
	}
	(*left)--;
	return slot_result(tun, st, frames, sl, cqe->res, a);
}

/*
 * Cancel each write of the batch not settled, by its user_data. False when
 * nothing may go in: SQEs the kernel did not take are still queued (a
 * short submit) and name frames that go home after this batch.
 */
static bool cancel_writes(struct tun_wstate *st, uint32_t nsub)
{
	struct io_uring_sqe *sqe;
	uint32_t i, n = 0;

	if (io_uring_sq_ready(&st->ring))
		return false;
	for (i = 0; i < nsub; i++) {
		if (st->slot[i].done)
			continue;
		/* The SQ holds a batch and is empty: room for each. */
		sqe = io_uring_get_sqe(&st->ring);
		if (!sqe)
			return false;
		io_uring_prep_cancel64(sqe, tun_write_ud(st, i), 0);
		io_uring_sqe_set_data64(sqe, tun_write_ud(st, i) | TUN_UD_CANCEL);
		n++;
	}
	return io_uring_submit(&st->ring) == (int)n;
}

/*
 * The writes left cannot be accounted for: they fail, and *broken tells
 * the caller to throw the ring away, so that none of them is heard of
 * again. Their frames go home when xmit returns, and the kernel, which
 * tears a ring down on its own time, might still read them then: no way
 * of ours can tell once the ring stops answering. Say so.
 */
static __noinline uint32_t reap_give_up(const struct ucm_tun *tun, struct tun_wstate *st,
					uint32_t nsub, uint32_t left, int err,
					struct ucm_tun_stats *a, bool *broken)
{
	uint32_t i, failed = 0;

	pr_warn("tun: %s: %u writes of a batch did not answer (%s): the ring is rebuilt, and their frames go home unconfirmed\n",
		tun->name, left, strerror(-err));
	a->err_other += left;
	for (i = 0; i < nsub; i++)
		if (!st->slot[i].done)
			failed += st->slot[i].nseg;
	*broken = true;
	return failed;
}

/*
 * Reap the batch's @nsub submitted writes, every one: the worker sends
 * their frames home when xmit returns, so none may be in the kernel then.
 * A wait that fails (EBADR: the kernel dropped a completion) cancels the
 * writes not settled and waits for the answers, REAP_CANCEL_WAIT_NS at
 * most for each. Return the packets failed; *broken as reap_give_up().
 */
static uint32_t reap(const struct ucm_tun *tun, struct tun_wstate *st,
		     struct ucm_frame_hdr **frames, uint32_t nsub,
		     struct ucm_tun_stats *a, bool *broken)
{
	struct __kernel_timespec ts = { .tv_nsec = REAP_CANCEL_WAIT_NS };
	struct io_uring_cqe *cqe;
	uint32_t left = nsub, failed = 0;
	unsigned int head, cnt;
	bool cancelled = false;
	int err;

	for (;;) {
		cnt = 0;
		io_uring_for_each_cqe(&st->ring, head, cqe) {
			failed += cqe_result(tun, st, frames, cqe, &left, a);
			cnt++;
		}
		io_uring_cq_advance(&st->ring, cnt);
		if (!left)
			return failed;
		/* Submitted writes finish (with RWF_NOWAIT at once; before
		 * Linux 6.4 a full tun's once it has room); their frames may
		 * not go home before. */
		if (!cancelled)
			err = tun_test_wait_fail(true) ? -EBADR :
			      io_uring_wait_cqe(&st->ring, &cqe);
		else
			err = io_uring_wait_cqe_timeout(&st->ring, &cqe, &ts);
		if (!err || err == -EINTR || err == -EAGAIN)
			continue;
		if (cancelled || !cancel_writes(st, nsub))
			return failed + reap_give_up(tun, st, nsub, left, err, a, broken);
		cancelled = true;
	}
}

static uint32_t xmit_uring(const struct ucm_tun *tun, struct tun_wstate *st,
			   struct ucm_frame_hdr **frames, uint32_t n,
			   struct ucm_tun_stats *a)
{
	struct io_uring_sqe *sqe;
	uint32_t i, nlay, nsub, failed = 0, done;
	bool broken = false;
	int ret;

	nlay = batch_layout(tun, st, frames, n, a, &failed);
	st->seq++;
	for (i = 0; i < nlay; i++) {
		const struct tun_slot *sl = &st->slot[i];

		/* The SQ holds UCM_TUN_BATCH_MAX and is empty between
		 * batches, so there is room for each write. */
		sqe = io_uring_get_sqe(&st->ring);
		if (unlikely(!sqe))
			break;
		/* Offset -1: a tun is a stream, it has no file position. */
		if (likely(sl->niov == 1))
			io_uring_prep_write(sqe, st->sqe_fd, st->iov[sl->iov].iov_base, sl->len, -1);
		else
			io_uring_prep_writev(sqe, st->sqe_fd, &st->iov[sl->iov], sl->niov, -1);
		/* io_uring parks a write of a pollable file that has no
		 * room, O_NONBLOCK or not; RWF_NOWAIT makes it answer
		 * -EAGAIN (the test's wait failure wants it parked). */
		sqe->rw_flags = tun_test_wait_fail(false) ? 0 : tun->rw_nowait;
		sqe->flags |= st->sqe_flags;
		sqe->user_data = tun_write_ud(st, i);
	}
	/* Only what was prepared is submitted and waited for; a ring without
	 * room fails the writes left, each counted once, and is made anew. */
	nsub = i;
	for (i = nsub; i < nlay; i++) {
		a->err_other++;
		failed += st->slot[i].nseg;
	}
	if (!nsub) {
		if (nlay)
			ring_reset(tun, st);
		return failed;
	}

	ret = tun_test_ring_fail(false) ? -ENOMEM :
	      io_uring_submit_and_wait(&st->ring, tun_test_wait_fail(false) ? 0 : nsub);
	a->submits++;
	if (unlikely(ret < 0)) {
		/* Nothing was taken: the batch fails as a whole. */
		for (i = 0; i < nsub; i++) {
			count_err(a, -ret);
			failed += st->slot[i].nseg;
		}
		ring_reset(tun, st);
		return failed;
	}
	done = min((uint32_t)ret, nsub);
	failed += reap(tun, st, frames, done, a, &broken);
	/* The SQEs not taken (EAGAIN, ENOMEM) are the last ones. */
	for (i = done; i < nsub; i++) {
		a->err_other++;
		failed += st->slot[i].nseg;
	}
	if (unlikely(broken || done < nsub || nsub < nlay))
		ring_reset(tun, st);
	return failed;
}

static int tun_xmit(void *ctx, uint32_t w, struct ucm_frame_hdr **frames,
		    const uint64_t *addrs, uint32_t n)
{
	struct ucm_tun *tun = ctx;
	struct tun_worker *wk = &tun->wk[w];
	struct tun_wstate *st = wk->st;
	struct ucm_tun_stats a = {};
	uint32_t done = 0, k, failed = 0;

	if (unlikely(!st))
		return n;
	if (unlikely(st->ring_retry_at) && ucm_now_ns() >= st->ring_retry_at)
		ring_build(tun, st);
	while (done < n) {
		k = min(n - done, (uint32_t)UCM_TUN_BATCH_MAX);
		st->addrs = addrs + done;
		if (likely(st->ring_ok))
			failed += xmit_uring(tun, st, frames + done, k, &a);
		else
			failed += xmit_write(tun, st, frames + done, k, &a);
		done += k;
	}
	ucm_tun_stats_publish(&wk->stats, &a);
	return failed;
}

static const struct ucm_sink_ops tun_sink_ops = {
	.sz = sizeof(struct ucm_sink_ops),
	.open = ucm_tun_open,
	.xmit = tun_xmit,
	.close = ucm_tun_close,
};

const struct ucm_sink_ops *ucm_tun__sink(void)
{
	return &tun_sink_ops;
}

static const struct ucm_sink_ops tun_back_ops = {
	.sz = sizeof(struct ucm_sink_ops),
	.open = ucm_tun_open_back,
	.xmit = tun_xmit,
	.poll = ucm_tun_back_poll,
	.wait = ucm_tun_back_wait,
	.close = ucm_tun_close,
	.flags = UCM_SINK_F_POLL_WAKE,
};

const struct ucm_sink_ops *ucm_tun__sink_back(void)
{
	return &tun_back_ops;
}

/* The 0.2.0 name (tun.h): a function of its own, so that the ABI's
 * description keeps it under its own name. */
const struct ucm_sink_ops *ucm_tun__sink_duplex(void)
{
	return &tun_back_ops;
}
