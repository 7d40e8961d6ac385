// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The TX channel between a queue's RX thread and a worker: two SPSC rings
 * of frame handles and descriptors (see ucpumap/txq.h for the contract).
 */
#include <stdlib.h>
#include <string.h>

#include "core/pool_internal.h"
#include "engine/chain.h"
#include "engine/txq_internal.h"
#include "engine/wake.h"
#include "ucpumap/ring.h"
#include "ucpumap/txq.h"

/* Lend in bulks of this many: one pool call per bulk. */
#define TXQ_LEND_BULK	64

/*
 * Concurrency contract: free and out follow ring.h's SPSC contract (free:
 * RX thread -> worker; out: worker -> RX thread). rx_stats are written by
 * the RX thread only, w_stats by the worker only (STAT_ADD), each on its
 * own cache line; anyone reads them (READ_ONCE). rx_wake: the RX thread
 * sleeps on it, the worker's sends kick it (wake.h's contract), on its
 * own line. room_wake: the worker waits on it for room in out, the RX
 * thread's collects kick it (the same contract), on its own line.
 * want: the worker asks for frames (ucm_txq__want(): set, then a kick of
 * rx_wake; a spinning worker's ucm_txq_ask() makes one while none
 * stands); the RX thread's lend clears it before it measures the free
 * ring, and its re-check before a sleep reads it (F1-F3 below), as does
 * its spin (ucm_txq_wanted(), a hint), on its own line.
 */
struct ucm_txq {
	struct ucm_umem *umem;
	struct ucm_ring *free;
	struct ucm_ring *out;
	bool tx_csum;		/* set before the worker runs */
	bool no_lend;		/* the same: a worker that only sends */
	uint32_t max_frames;	/* the same: a packet's frames at most */
	struct ucm_wake rx_wake __cacheline_aligned;
	/* 1: the worker came up short of frames. On a line of its own: the
	 * RX thread looks at it every turn, the worker writes it rarely. */
	uint32_t want __cacheline_aligned;
	struct ucm_wake room_wake __cacheline_aligned;
	struct {
		uint64_t lent, lend_short, collected;
	} rx_stats __cacheline_aligned;
	struct {
		uint64_t sent, send_full, dropped;
	} w_stats __cacheline_aligned;
};

struct ucm_txq *ucm_txq__create(struct ucm_umem *umem, uint32_t size)
{
	struct ucm_txq *t;
	int err;

	if (!size)
		size = UCM_TXQ_DEFAULT_SIZE;
	if (!umem) {
		pr_warn("txq: no UMEM: the channel's frames are a UMEM's\n");
		return ucm_err_ptr(-EINVAL);
	}
	if (size < 2 || (size & (size - 1))) {
		pr_warn("txq: the ring size must be a power of two (got %u)\n", size);
		return ucm_err_ptr(-EINVAL);
	}
	t = aligned_alloc(UCM_CACHELINE, sizeof(*t));
	if (!t)
		return ucm_err_ptr(ucm_oom("a TX channel"));
	memset(t, 0, sizeof(*t));
	t->umem = umem;
	t->max_frames = 1;
	t->free = ucm_ring__create(size, UCM_RING_SP);
	t->out = ucm_ring__create(size, UCM_RING_SP);
	t->room_wake.fd = -1;
	err = ucm_wake_init(&t->rx_wake, true);
	if (!err)
		err = ucm_wake_init(&t->room_wake, true);
	if (err)
		pr_warn("txq: a TX channel's eventfd: %s%s\n", strerror(-err),
			err == -EMFILE ? " (the open files' limit: ulimit -n, a unit's LimitNOFILE=)" : "");
	if (!t->free || !t->out || err) {
		err = err ? err : -ENOMEM;
		ucm_ring__destroy(t->free);
		ucm_ring__destroy(t->out);
		ucm_wake_fini(&t->rx_wake);
		ucm_wake_fini(&t->room_wake);
		free(t);
		return ucm_err_ptr(err);
	}
	return t;
}

int ucm_txq__destroy(struct ucm_txq *t)
{
	if (!t)
		return 0;
	if (!ucm_ring__empty(t->free) || !ucm_ring__empty(t->out)) {
		pr_warn("txq: %u frames still in the channel: reclaim them first\n",
			ucm_ring__count(t->free) + ucm_ring__count(t->out));
		return ucm_err(-EBUSY);
	}
	ucm_ring__destroy(t->free);
	ucm_ring__destroy(t->out);
	ucm_wake_fini(&t->rx_wake);
	ucm_wake_fini(&t->room_wake);
	free(t);
	return 0;
}

/* Packets that never go out: every frame of each (a packet of several
 * has its later ones listed) home from the channel's hands, in bulks.
 * Return: the frames. */
static uint32_t desc_home(struct ucm_txq *t, const uint64_t *desc, uint32_t n)
{
	uint64_t back[TXQ_LEND_BULK + UCM_CHAIN_MAX];
	uint32_t i, m = 0, total = 0;

	for (i = 0; i < n; i++) {
		m += ucm_chain_desc_frames(t->umem, desc[i], back + m);
		if (m >= TXQ_LEND_BULK || i + 1 == n) {
			ucm_umem_put_bulk_from(t->umem, back, m, UCM_LOC_APP, false);
			total += m;
			m = 0;
		}
	}
	return total;
}

/* ---- RX thread ---------------------------------------------------------- */

int ucm_txq__lend(struct ucm_txq *t, struct ucm_pool *pool)
{
	uint64_t addrs[TXQ_LEND_BULK];
	int n, total = 0;
	uint32_t room;

	if (!ucm_pool_local(pool))
		return ucm_err(-EPERM);
	/* Another UMEM's frames would be written as this one's, and come
	 * home to pools that never lent them. */
	if (unlikely(pool->umem != t->umem))
		return ucm_err(-EINVAL);
	/* The worker's ask is answered by this lend, whatever it brings: a
	 * pool that ran dry is asked again at the worker's next look, not
	 * by an RX thread that would spin on it. Taken before the room is
	 * measured: F3, acquire, pairs with F1 in ucm_txq__want(), so the
	 * takes before an ask we clear are in the count below. */
	if (__atomic_load_n(&t->want, __ATOMIC_RELAXED))	/* no RMW per turn */
		__atomic_exchange_n(&t->want, 0, __ATOMIC_ACQUIRE);
	if (t->no_lend)
		return 0;
	room = ucm_ring__size(t->free) - ucm_ring__count(t->free);
	/* Top up only below half: lend in bulks, not a frame per call. */
	if (room < ucm_ring__size(t->free) / 2)
		return 0;
	while (room) {
		uint32_t want = min(room, (uint32_t)TXQ_LEND_BULK);

		n = ucm_pool__alloc_bulk(pool, addrs, want);
		if (n < 0)
			return n;
		/* Single producer with the room measured above: all fit. */
		ucm_ring__produce_sp(t->free, addrs, n);
		room -= n;
		total += n;
		if ((uint32_t)n < want) {
			STAT_ADD(t->rx_stats.lend_short, 1);	/* the pool ran dry */
			break;
		}
	}
	if (total)
		STAT_ADD(t->rx_stats.lent, total);
	return total;
}

bool ucm_txq__sleep_begin(struct ucm_txq *t)
{
	/* W1 (wake.h): pairs with W2 in ucm_txq__send() and ucm_txq__want() */
	ucm_wake_announce(&t->rx_wake);
	/* Re-check: descriptors sent before our W1 are seen here (C1 of
	 * ring.h, after W1 synchronised with their W2), and so is an ask
	 * for frames (F2: pairs with F1 in ucm_txq__want()). */
	return ucm_ring__empty(t->out) && !__atomic_load_n(&t->want, __ATOMIC_RELAXED);
}

void ucm_txq__sleep_end(struct ucm_txq *t)
{
	/* W3, and read(wake_fd) only when a wake is owed (wake.h). */
	ucm_wake_drain(&t->rx_wake);
}

int ucm_txq__wake_fd(const struct ucm_txq *t)
{
	return ucm_wake_fd(&t->rx_wake);
}

uint32_t ucm_txq__pending(struct ucm_txq *t)
{
	return ucm_ring__count(t->out);
}

uint32_t ucm_txq__collect(struct ucm_txq *t, uint64_t *desc, uint32_t max)
{
	uint32_t n = ucm_ring__consume(t->out, desc, max);
	int err;

	if (!n)
		return 0;
	STAT_ADD(t->rx_stats.collected, n);
	/* W2 (wake.h): pairs with W1 in ucm_txq__room_wait_begin(); the
	 * slots were freed before it (ring.h C2). */
	err = ucm_wake_kick(&t->room_wake);
	if (err < 0)
		pr_warn("txq: cannot wake the worker: %s\n", strerror(-err));
	return n;
}

/* ---- worker ------------------------------------------------------------- */

uint32_t ucm_txq__available(struct ucm_txq *t)
{
	return ucm_ring__count(t->free);
}

uint32_t ucm_txq__take(struct ucm_txq *t, uint64_t *addrs, uint32_t max)
{
	return ucm_ring__consume(t->free, addrs, max);
}

void ucm_txq__want(struct ucm_txq *t)
{
	int err;

	/* F1: the ask, release (the takes that came up short before it; F3
	 * in ucm_txq__lend()), and before the kick's W2 (seq_cst), so an RX
	 * thread whose W1 follows sees it (F2 in ucm_txq__sleep_begin()). */
	__atomic_store_n(&t->want, 1, __ATOMIC_RELEASE);
	/* W2 (wake.h): pairs with W1 in ucm_txq__sleep_begin() */
	err = ucm_wake_kick(&t->rx_wake);
	if (err < 0)
		pr_warn("txq: cannot wake the RX thread: %s\n", strerror(-err));
}

bool ucm_txq_wanted(struct ucm_txq *t)
{
	/* No pair: a hint; the lend's F3 orders what it answers. */
	return __atomic_load_n(&t->want, __ATOMIC_RELAXED);
}

void ucm_txq_ask(struct ucm_txq *t)
{
	/* No pair: a standing ask was made with F1 and its kick already. */
	if (!__atomic_load_n(&t->want, __ATOMIC_RELAXED))
		ucm_txq__want(t);
}

void ucm_txq__drop(struct ucm_txq *t, const uint64_t *addrs, uint32_t n)
{
	if (!n)
		return;
	ucm_umem_put_bulk_from(t->umem, addrs, n, UCM_LOC_APP, false);
	STAT_ADD(t->w_stats.dropped, n);
}

uint32_t ucm_txq__room(struct ucm_txq *t)
{
	return ucm_ring__size(t->out) - ucm_ring__count(t->out);
}

bool ucm_txq__room_wait_begin(struct ucm_txq *t)
{
	/* W1 (wake.h): pairs with W2 in ucm_txq__collect() */
	ucm_wake_announce(&t->room_wake);
	/* Re-check: slots freed before our W1 are seen here. */
	return !ucm_txq__room(t);
}

void ucm_txq__room_wait_end(struct ucm_txq *t)
{
	/* W3, and read(room_fd) only when a wake is owed (wake.h). */
	ucm_wake_drain(&t->room_wake);
}

int ucm_txq__room_fd(const struct ucm_txq *t)
{
	return ucm_wake_fd(&t->room_wake);
}

uint32_t ucm_txq__send(struct ucm_txq *t, const uint64_t *desc, uint32_t n)
{
	uint32_t k = ucm_ring__produce_sp(t->out, desc, n);

	if (k) {
		int err;

		STAT_ADD(t->w_stats.sent, k);
		/* W2 (wake.h): pairs with W1 in ucm_txq__sleep_begin(); the
		 * eventfd is written only by the send that finds the RX
		 * thread asleep and not yet signalled. */
		err = ucm_wake_kick(&t->rx_wake);
		if (err < 0)
			pr_warn("txq: cannot wake the RX thread: %s\n", strerror(-err));
	}
	/* Back-pressure: the RX thread is behind; these never go out. */
	if (k < n) {
		STAT_ADD(t->w_stats.dropped, desc_home(t, desc + k, n - k));
		STAT_ADD(t->w_stats.send_full, n - k);
	}
	return k;
}

/* ---- control ------------------------------------------------------------ */

uint32_t ucm_txq__reclaim(struct ucm_txq *t)
{
	uint64_t v[TXQ_LEND_BULK];
	uint32_t n, total = 0;

	while ((n = ucm_ring__consume(t->free, v, TXQ_LEND_BULK))) {
		ucm_umem_put_bulk_from(t->umem, v, n, UCM_LOC_APP, false);
		total += n;
	}
	while ((n = ucm_ring__consume(t->out, v, TXQ_LEND_BULK)))
		total += desc_home(t, v, n);
	return total;
}

int ucm_txq__stats(const struct ucm_txq *t, struct ucm_txq_stats *st, size_t sz)
{
	struct ucm_txq_stats s = {};

	if (!t || !st || !sz)
		return ucm_err(-EINVAL);
	s.lent = READ_ONCE(t->rx_stats.lent);
	s.lend_short = READ_ONCE(t->rx_stats.lend_short);
	s.collected = READ_ONCE(t->rx_stats.collected);
	s.sent = READ_ONCE(t->w_stats.sent);
	s.send_full = READ_ONCE(t->w_stats.send_full);
	s.dropped = READ_ONCE(t->w_stats.dropped);
	ucm_stats_out(st, sz, &s, sizeof(s));
	return 0;
}

void ucm_txq__set_tx_csum(struct ucm_txq *t, bool on)
{
	t->tx_csum = on;
}

void ucm_txq__set_lend(struct ucm_txq *t, bool on)
{
	t->no_lend = !on;
}

bool ucm_txq__tx_csum(const struct ucm_txq *t)
{
	return t->tx_csum;
}

int ucm_txq__set_max_frames(struct ucm_txq *t, uint32_t n)
{
	if (!t)
		return ucm_err(-EINVAL);
	if (!n || n > UCM_CHAIN_MAX) {
		pr_warn("txq: %u frames a packet: give between 1 and %u\n", n, UCM_CHAIN_MAX);
		return ucm_err(-EINVAL);
	}
	t->max_frames = n;
	return 0;
}

uint32_t ucm_txq__max_frames(const struct ucm_txq *t)
{
	return t->max_frames;
}

struct ucm_umem *ucm_txq__umem(struct ucm_txq *t)
{
	return t->umem;
}
