/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_wake: one sleeper, any number of wakers, no lost wake-up, and no
 * system call when nobody sleeps. The cpumap's worker sleeps on one (its
 * producers and its stop wake it); a txq's RX thread sleeps on one (the
 * worker's sends wake it). Internal to lib/.
 *
 * The sleeper sleeps on a futex (seq) or, when something else must wake it
 * too, on an eventfd polled with its other fds (fd). One word, state,
 * carries the whole handshake:
 *
 *   0, or KICKED alone          awake (KICKED alone: a waker came while it
 *                               was awake; harmless, W1 overwrites it)
 *   SLEEPING                    announced; nobody has signalled yet
 *   SLEEPING | KICKED           announced, and one waker has signalled
 *                               (or is about to): the others stay quiet
 *
 * Protocol (labels are repeated at each site below)
 * -------------------------------------------------
 *
 *   sleeper                                 waker
 *   [futex: (W0) s = LOAD-ACQUIRE seq]      publish work (e.g. ring P2)
 *   (W1) XCHG state = SLEEPING, seq_cst     (W2) old = FETCH_OR state,
 *   re-check for work: found -> do not           KICKED, seq_cst
 *        sleep                              if old == SLEEPING: signal
 *   sleep: futex_wait(seq, s) or poll(fd)        [futex: (W4) seq++, release;
 *   (W3) old = XCHG state = 0, relaxed                   futex_wake(seq)]
 *   [drain: read(fd) only if a kick is           [eventfd: write(fd, 1)]
 *    owed: old had KICKED, or an earlier
 *    one's write had not landed yet]
 *
 *   W1 pairs with W2. W0 pairs with W4.
 *
 * Why no wake-up is lost (the argument, once)
 * -------------------------------------------
 * W1 and W2 are read-modify-writes of one word, so the modification order
 * of state puts every W2 either before or after a given W1, and each RMW
 * reads the value written by the one just before it in that order.
 *  - W2 before W1: W2 is a release RMW and W1 an acquire RMW reading the
 *    value W2 wrote (or a later one in W2's release sequence, which RMWs
 *    extend), so W2 synchronises with W1: the waker's publication happens
 *    before the sleeper's re-check, and the re-check finds the work.
 *  - W2 between W1 and W3: W2 reads SLEEPING, with or without KICKED.
 *    Without: this waker signals. With: an earlier waker's W2 read plain
 *    SLEEPING and signals. Either way one signal is sent for this sleep,
 *    and it cannot be missed: an eventfd keeps its count until read (a
 *    poll that starts after the write returns at once), and W4 moves seq
 *    away from the s the sleeper loaded at W0, so a futex_wait that starts
 *    after W4 returns EAGAIN, and one that started before is woken. (W0
 *    cannot have loaded W4's value: W1 synchronises with this W2, as in
 *    the first case with the roles swapped, so W0, before W1, happens
 *    before W4, after W2.)
 *  - W2 after W3: the sleeper is awake; before its next sleep it passes
 *    W1 again, which comes after this W2: the first case.
 * Two RMWs on one location instead of two fences: the same guarantee,
 * stated in the C11 model and visible to ThreadSanitizer.
 *
 * Why the syscalls saved are safe
 * -------------------------------
 * A waker writes (or futex_wakes) only when its W2 turned SLEEPING into
 * SLEEPING | KICKED: at most once per sleep, and never while the sleeper
 * is awake. The others have nothing to add: the sleeper is woken by the
 * first one's signal, and their work, if it does not see it then, is
 * found by the re-check after its next W1, which comes after their W2 in
 * state's order: the first case. Only W3 clears KICKED after a signalling
 * W2 (a W2 reads plain SLEEPING only between a W1 and its W3), so every
 * signal is seen by exactly one W3.
 *
 * A sleeper that reads its eventfd itself (ucm_wake_drain(), the txq's RX
 * thread) reads it only when a signal is owed: W3 saw KICKED (one write
 * per KICKED), and a write may land after W3 (the waker is between W2 and
 * its write), so what a read did not find stays owed and is read at the
 * next sleep's end: that sleep's poll sees the late write and returns at
 * once, a spurious wake-up, never a lost one nor an fd left readable for
 * good (which would make every later poll return at once). The cpumap's
 * worker drains this way with a sink that only polls its fd
 * (UCM_SINK_F_POLL_WAKE); a sleeper whose fd is drained
 * by whoever polls it (a sink's @wait that reads it) ends with
 * ucm_wake_end() and never drains here.
 *
 * A sleeper that waits for the eventfd's edges (EPOLLET in an epoll set
 * that only its own epoll_wait() looks at: the cpumap's pre-wake without
 * a sink that polls the set) never reads it and ends with ucm_wake_end():
 * every write wakes the fd's waiters, so every write is an edge, counter
 * read or not. A write that lands after W3 leaves an edge that ends the
 * next wait at once (a spurious wake-up, as above), and epoll_wait() takes
 * the edge: the set does not stay readable. (A poll of the set would not
 * take it, and an eventfd never read stays readable: so not with a set
 * that anyone else polls.) The counter only grows, one per sleep at most;
 * it would take 2^64 - 2 of them to fill it.
 *
 * Nothing may write to the eventfd but ucm_wake_kick(): a write that is
 * not counted as owed would stay unread by ucm_wake_drain().
 */
#ifndef UCM_WAKE_H
#define UCM_WAKE_H

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include "core/internal.h"

enum ucm_wake_state {
	UCM_WAKE_SLEEPING = 1 << 0,	/* written by the sleeper only */
	UCM_WAKE_KICKED = 1 << 1,	/* set by wakers, cleared by the sleeper */
};

/*
 * Concurrency contract: state is the W1/W2/W3 word; seq is bumped by wakers
 * (W4) and loaded (W0) and futex-waited on by the sleeper; fd is read-only
 * between init and fini; owed is the sleeper's alone. One sleeper thread
 * at a time. A user puts the struct on a cache line of its own: every
 * waker's W2 writes it.
 */
struct ucm_wake {
	uint32_t state;		/* enum ucm_wake_state */
	uint32_t seq;		/* the futex word, when fd < 0 */
	int fd;			/* eventfd, or -1: sleep on the futex */
	uint32_t owed;		/* signals whose write is not read yet */
};

static inline long ucm_wake_futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/**
 * ucm_wake_init() - an awake sleeper with nothing owed
 * @use_fd: sleep on an eventfd (non-blocking) rather than the futex
 *
 * Return: 0, or -errno from eventfd().
 */
static inline int ucm_wake_init(struct ucm_wake *wk, bool use_fd)
{
	wk->state = 0;
	wk->seq = 0;
	wk->owed = 0;
	wk->fd = -1;
	if (use_fd) {
		wk->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (wk->fd < 0)
			return -errno;
	}
	return 0;
}

static inline void ucm_wake_fini(struct ucm_wake *wk)
{
	if (wk->fd >= 0)
		close(wk->fd);
	wk->fd = -1;
}

/* The eventfd a sleeper polls (POLLIN), or -1 for a futex sleeper. */
static inline int ucm_wake_fd(const struct ucm_wake *wk)
{
	return wk->fd;
}

/* ---- sleeper ------------------------------------------------------------ */

/* Before the announcement: the futex value to sleep on (futex sleepers). */
static inline uint32_t ucm_wake_prepare(struct ucm_wake *wk)
{
	/* W0: pairs with W4 in ucm_wake_signal_() */
	return __atomic_load_n(&wk->seq, __ATOMIC_ACQUIRE);
}

/* Announce the sleep. The caller re-checks for work next, and sleeps only
 * when it finds none; it calls ucm_wake_end() (or _drain()) either way. */
static inline void ucm_wake_announce(struct ucm_wake *wk)
{
	/* W1: pairs with W2 in ucm_wake_kick() */
	__atomic_exchange_n(&wk->state, UCM_WAKE_SLEEPING, __ATOMIC_SEQ_CST);
}

/*
 * Sleep on the futex until a waker's W4 moves seq from @seq (futex
 * sleepers, after ucm_wake_announce() and a re-check that found nothing).
 * Return: 0 after a real sleep, -EAGAIN when seq had moved already,
 * -EINTR; each means: look again.
 */
static inline int ucm_wake_sleep(struct ucm_wake *wk, uint32_t seq)
{
	if (ucm_wake_futex(&wk->seq, FUTEX_WAIT_PRIVATE, seq))
		return -errno;
	return 0;
}

/* Awake again (or never slept). Return: true when a waker signalled this
 * sleep. */
static inline bool ucm_wake_end(struct ucm_wake *wk)
{
	/* W3: pairs with nothing. Only atomicity counts: KICKED is cleared
	 * and seen in one step, so no signal is counted twice or missed.
	 * The work's visibility is W1's business at the next sleep. */
	uint32_t old = __atomic_exchange_n(&wk->state, 0, __ATOMIC_RELAXED);

	return old & UCM_WAKE_KICKED;
}

/* Read the eventfd when a signal is owed. Only while awake (between W3
 * and the next W1): no waker writes then, so what is read is owed. */
static inline void ucm_wake_settle(struct ucm_wake *wk)
{
	uint64_t v;

	if (!wk->owed)
		return;
	/* EAGAIN: the write has not landed yet; it stays owed. */
	if (read(wk->fd, &v, sizeof(v)) == sizeof(v))
		wk->owed -= v < wk->owed ? (uint32_t)v : wk->owed;
}

/* ucm_wake_end() for a sleeper that reads its own eventfd, leaving the
 * read for later: ucm_wake_settle() before its next W1 (a sleeper in a
 * hurry: the read is off the path from the wake-up to the work). */
static inline void ucm_wake_end_owed(struct ucm_wake *wk)
{
	if (ucm_wake_end(wk))
		wk->owed++;
}

/* ucm_wake_end() for a sleeper that reads its own eventfd: read it only
 * when a signal is owed (see the top of this file). */
static inline void ucm_wake_drain(struct ucm_wake *wk)
{
	ucm_wake_end_owed(wk);
	ucm_wake_settle(wk);
}

/* ---- waker -------------------------------------------------------------- */

/* Signal the sleeper: bump seq and wake the futex, or write the eventfd.
 * Only ucm_wake_kick() calls it, once per sleep (see the top of this file).
 * Return: 0 or -errno from write(). */
static inline int ucm_wake_signal_(struct ucm_wake *wk)
{
	uint64_t one = 1;

	if (wk->fd < 0) {
		/* W4: pairs with W0 in ucm_wake_prepare(). Release: a
		 * sleeper that loads the new seq sees what came before. */
		__atomic_fetch_add(&wk->seq, 1, __ATOMIC_RELEASE);
		ucm_wake_futex(&wk->seq, FUTEX_WAKE_PRIVATE, 1);
		return 0;
	}
	/* EAGAIN (the counter at its maximum) cannot happen with one write
	 * per sleep (nor in 2^64 - 2 sleeps of an edge sleeper that never
	 * reads), and would mean a wake is pending anyway. */
	if (write(wk->fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

/*
 * After publishing work: wake the sleeper if it announced a sleep and no
 * other waker has signalled it yet. A waker that finds KICKED set relies
 * on the one that set it: if that one is preempted before its signal, the
 * sleeper wakes when it runs again, a scheduler slice late at worst, never
 * lost (the same as a producer preempted between reserve and publish).
 * Return: 1 when this call signalled, 0 when it did not have to, or
 * -errno when the signal failed (the sleeper then stays asleep until its
 * own timeout or another wake: the caller should say so).
 */
static inline int ucm_wake_kick(struct ucm_wake *wk)
{
	int err;

	/* W2: pairs with W1 in ucm_wake_announce() */
	if (__atomic_fetch_or(&wk->state, UCM_WAKE_KICKED, __ATOMIC_SEQ_CST) !=
	    UCM_WAKE_SLEEPING)
		return 0;
	err = ucm_wake_signal_(wk);
	return err ? err : 1;
}

#endif /* UCM_WAKE_H */
