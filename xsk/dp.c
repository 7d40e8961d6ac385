// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_dp: the datapath of one interface (see dp.h for the life cycle).
 * Here the life cycle itself and the RX threads; the threads, what each
 * touches and the pairs of the fields they share are in dp_internal.h,
 * with the other pieces of the object.
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>

#include <bpf/bpf.h>

#include "dp_internal.h"
#include "port_internal.h"

/*
 * An idle RX thread sleeps this long at most in poll(2); with frames on
 * the TX path, this long: their completions wake nobody (POLLOUT is the
 * TX ring's room, true at once). Waking for them (copy mode's sock_wfree()
 * wake-ups, through an edge-triggered epoll) wakes the thread no less
 * often, and right behind the reply it sent; a worker short of frames
 * wakes it itself (ucm_txq__want()), and a dry pool shortens the sleep.
 */
#define DP_RX_IDLE_MS		10
#define DP_RX_TX_PENDING_MS	1
/* What is on its way out at stop gets this long to complete. */
#define DP_TX_GRACE_MS		100
/* An RX thread that has not made its producer by then is stuck. */
#define DP_START_TIMEOUT_MS	5000
/* At stop, between the sockets leaving the XSK map and the RX threads'
 * last look: a NAPI poll (a budget of 64 packets: microseconds) that
 * found a socket before publishes its packets at its end. */
#define NAPI_GRACE_NS		1000000

/* Queue @q's socket into the XSK map (@fd), or out of it (-1). */
static int dp_redirect(struct ucm_dp *dp, uint32_t q, int fd)
{
	uint32_t key = dp->c.queues[q];
	int err;

	if (!(dp->c.flags & UCM_DP_F_OWN_XDP))
		err = dp->xdp ? ucm_xdp__set_xsk(dp->xdp, key, fd) : 0;
	else if (fd >= 0)
		err = bpf_map_update_elem(dp->c.xsks_map_fd, &key, &fd, 0);
	else
		err = bpf_map_delete_elem(dp->c.xsks_map_fd, &key);
	if (err < 0 && !(fd < 0 && err == -ENOENT)) {
		/* Out of the map failed (EPERM: a kernel that wants CAP_BPF
		 * for it after the privileges went): the kernel redirects to
		 * a socket nobody reads until the program is detached. */
		pr_warn("dp: queue %u %s the XSK map%s: %s%s\n", key, fd >= 0 ? "into" : "out of",
			dp->c.flags & UCM_DP_F_OWN_XDP ? " (the application's)" : "", strerror(-err),
			fd >= 0 ? "" : ": its packets are lost until the program is off");
		return err;
	}
	return 0;
}

/* ---- the RX thread -------------------------------------------------------- */

#ifdef UCM_DEBUG
/* Tests: non-zero keeps every RX thread from taking anything off its ring
 * (it only refills) until the stop (tests/progs/xsk_rx.c, drain mode);
 * relaxed, no pair. */
int ucm_dp_test_rx_hold;

/* Tests: non-zero, an idle RX thread's longest sleep in ms instead of
 * DP_RX_IDLE_MS: one that no timeout ends while the test stops the
 * datapath (tests/progs/xsk_rx.c, idle-stop mode); relaxed, no pair. */
int ucm_dp_test_rx_idle_ms;

/* Tests: the datapath's cpumap, for the cpumap's own test helpers
 * (engine/cpumap_internal.h). */
struct ucm_cpumap *ucm_dp_test_map(struct ucm_dp *dp)
{
	return dp->map;
}
#endif

/* The RX thread gives up: why, for ucm_dp__check(). */
static void rx_fail(struct dp_rx *rx, uint32_t fault, int err)
{
	atomic_store_explicit(&rx->fault, fault, memory_order_relaxed);
	atomic_store_explicit(&rx->err, err, memory_order_release); /* R2 */
}

static void rx_loop(struct dp_rx *rx, struct ucm_cpumap_producer *prod)
{
	const struct ucm_steer_cfg *steer = &rx->dp->c.steer;
	struct timespec ms = { 0, 1000000 };
	bool idle = false;	/* the last sleep ran out with nothing */
	int idle_ms = DP_RX_IDLE_MS;
	uint32_t rr = 0;
	int n, i;

#ifdef UCM_DEBUG
	if (__atomic_load_n(&ucm_dp_test_rx_idle_ms, __ATOMIC_RELAXED))
		idle_ms = __atomic_load_n(&ucm_dp_test_rx_idle_ms,
					  __ATOMIC_RELAXED);
#endif
	while (!atomic_load_explicit(&rx->dp->stop, memory_order_relaxed)) {
#ifdef UCM_DEBUG
		if (__atomic_load_n(&ucm_dp_test_rx_hold, __ATOMIC_RELAXED)) {
			ucm_xsk_queue__refill(rx->q);	/* the device has buffers */
			nanosleep(&ms, NULL);
			continue;
		}
#endif
		n = ucm_xsk_queue__poll(rx->q, prod, steer, &rr);
		if (n < 0) {
			rx_fail(rx, UCM_DP_FAULT_RX_THREAD, n);
			break;
		}
		if (rx->ntxq)
			n += ucm_xsk_queue__tx_turn(rx->q, rx->txq, rx->ntxq);
		if (n) {
			idle = false;
			continue;
		}
		/* The spin is for traffic that was just here: not after a
		 * sleep that timed out, or an idle queue would spin at every
		 * timeout (a tenth of its CPU with a 1 ms spin). */
		if (rx->dp->c.rx_spin_us && !idle &&
		    ucm_xsk_queue__spin(rx->q, rx->txq, rx->ntxq, rx->dp->c.rx_spin_us) > 0)
			continue;
		n = ucm_xsk_queue__sleep(rx->q, rx->txq, rx->ntxq,
					 ucm_xsk_queue__tx_pending(rx->q) ?
						 DP_RX_TX_PENDING_MS :
						 idle_ms);
		idle = n == 0;
		if (n < 0 && n != -EINTR) {
			/* The socket's error does not heal (the kernel
			 * unbound it: its device went). */
			rx_fail(rx, UCM_DP_FAULT_XSK, n);
			break;
		}
	}
	/*
	 * Stopped, not failed: the kernel redirects to us no more (the stop's
	 * step 1), and what it had put on the ring is ours to deliver, as a
	 * NAPI poll finishes its budget: a ring's worth of turns at most,
	 * until the ring is empty (a turn may deliver nothing: all drops, or
	 * the first part of a packet). A packet still half taken then has
	 * lost its end: it is dropped here, counted before the stop's
	 * snapshot, its frames home while this thread owns the pool.
	 */
	if (!atomic_load_explicit(&rx->err, memory_order_relaxed)) {
		for (i = 0; i <= (int)(rx->dp->c.rx_size / UCM_XSK_RX_BATCH); i++)
			if (ucm_xsk_queue__poll(rx->q, prod, steer, &rr) < 0 ||
			    !ucm_xsk_queue_rx_ready(rx->q))
				break;
	} else {
		/* Given up: the queue's traffic goes to the kernel's stack
		 * (the program passes what it cannot redirect), not to a
		 * socket nobody reads, until the application stops the
		 * datapath; at once, not after the grace below. */
		pr_warn("dp: queue %u: its RX thread gave up: its traffic goes to the kernel's stack\n",
			ucm_xsk_queue__id(rx->q));
		dp_redirect(rx->dp, rx - rx->dp->rx, -1);
	}
	ucm_xsk_queue_chain_end(rx->q);
	/* What is on its way out gets a moment to complete. */
	for (i = 0; i < DP_TX_GRACE_MS && rx->ntxq &&
	     ucm_xsk_queue__tx_pending(rx->q); i++) {
		ucm_xsk_queue__complete(rx->q);
		nanosleep(&ms, NULL);
	}
}

static void *rx_main(void *arg)
{
	struct dp_rx *rx = arg;
	struct ucm_pool *pool = ucm_xsk_queue__pool(rx->q);
	struct ucm_cpumap_producer *prod;

	ucm_pool__set_owner(pool);
	prod = ucm_cpumap__producer_create(rx->dp->map, pool);
	if (!prod) {
		ucm_pool__clear_owner(pool);
		rx_fail(rx, UCM_DP_FAULT_RX_THREAD, -errno);
		return NULL;
	}
	if (rx->dp->c.thread_init)
		rx->dp->c.thread_init(rx->dp->c.thread_init_ctx, UCM_DP_THREAD_RX,
				      rx - rx->dp->rx);
	atomic_store_explicit(&rx->prod, prod, memory_order_release); /* R1 */
	rx_loop(rx, prod);
	/* Flush what is staged (and, inline, close our tun queue on this
	 * thread); the producer stays registered with the cpumap, its stats
	 * are read at the end, and is freed with it. */
	ucm_cpumap_producer__stop(prod);
	/* Last act of an owner. */
	ucm_pool__clear_owner(pool);
	return NULL;
}

/* ---- life cycle ------------------------------------------------------------ */

int ucm_dp__validate(const struct ucm_dp_opts *opts)
{
	struct dp_cfg c;
	int err = ucm_dp_resolve(opts, &c);

	if (!err)
		err = ucm_dp_check_cfg(&c);
	if (!err)
		err = ucm_dp_check_parts(&c);
	return ucm_err(err);
}

struct ucm_dp *ucm_dp__create(const struct ucm_dp_opts *opts)
{
	struct ucm_dp *dp;
	int err;

	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return ucm_err_ptr(ucm_oom("the datapath"));
	dp->stop_fd = -1;
	pthread_mutex_init(&dp->lock, NULL);
	err = ucm_dp_resolve(opts, &dp->c);
	if (err)
		goto out_free;
	if (dp->c.cpus_node >= 0) {
		char list[UCM_CPUMAP_MAX_WORKERS * 6] = "";
		uint32_t i;
		size_t len = 0;

		for (i = 0; i < dp->c.nworkers; i++)
			len += snprintf(list + len, sizeof(list) - len, "%s%d",
					i ? "," : "", dp->c.cpus[i]);
		pr_info("dp: workers on CPUs %s, those of %s's NUMA node %d\n", list,
			dp->c.ifname, dp->c.cpus_node);
	}
	err = ucm_dp_check_cfg(&dp->c);
	if (err)
		goto out_free;
	dp->ifindex = if_nametoindex(dp->c.ifname);
	dp->fin = calloc(1, sizeof(*dp->fin));
	if (dp->fin) {
		dp->fin->es = calloc(dp->c.nqueues * dp->c.nworkers, sizeof(*dp->fin->es));
		dp->fin->es_ok = calloc(dp->c.nqueues * dp->c.nworkers, sizeof(bool));
	}
	if (!dp->fin || !dp->fin->es || !dp->fin->es_ok) {
		err = ucm_oom("the datapath's final counters");
		goto out_parts;
	}
	err = ucm_dp_parts_open(dp);
	if (err)
		goto out_parts;
	return dp;

out_parts:
	/* Whatever was set up is taken down; nothing is left attached. */
	ucm_dp__stop(dp, 0);
	ucm_dp__destroy(dp);
	return ucm_err_ptr(err);
out_free:
	pthread_mutex_destroy(&dp->lock);
	free(dp);
	return ucm_err_ptr(err);
}

static int rx_start(struct dp_rx *rx)
{
	pthread_attr_t attr;
	sigset_t all, old;
	cpu_set_t set;
	int err;

	/* Pinned from its first instruction, or not started: the CPU may
	 * have left the process's mask since the check. */
	pthread_attr_init(&attr);
	CPU_ZERO(&set);
	if (rx->cpu >= 0)
		CPU_SET(rx->cpu, &set);
	err = rx->cpu >= 0 ? pthread_attr_setaffinity_np(&attr, sizeof(set), &set) : 0;
	if (!err) {
		/* Signals stay with the application's threads. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = pthread_create(&rx->thr, &attr, rx_main, rx);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_attr_destroy(&attr);
	if (err) {
		pr_warn("dp: cannot start the RX thread of queue %u (CPU %d; -1: any): %s\n",
			ucm_xsk_queue__id(rx->q), rx->cpu, strerror(err));
		return -err;
	}
	rx->started = true;
	{
		char name[16];	/* what top and /proc show: the queue */

		snprintf(name, sizeof(name), "ucpumap/rx%u", ucm_xsk_queue__id(rx->q));
		pthread_setname_np(rx->thr, name);
	}
	return 0;
}

/* Wait for the RX thread's producer (R1'), or its error (R2'). */
static int rx_ready(struct dp_rx *rx)
{
	struct timespec ms = { 0, 1000000 };
	int i, err;

	for (i = 0; i < DP_START_TIMEOUT_MS; i++) {
		if (dp_rx_prod(rx))
			return 0;
		err = atomic_load_explicit(&rx->err, memory_order_acquire); /* R2' */
		if (err) {
			pr_warn("dp: RX thread of queue %u: %s\n",
				rx->dp->c.queues[rx - rx->dp->rx], strerror(-err));
			return err;
		}
		nanosleep(&ms, NULL);
	}
	pr_warn("dp: RX thread of queue %u did not start in %d ms\n",
		rx->dp->c.queues[rx - rx->dp->rx], DP_START_TIMEOUT_MS);
	return -ETIMEDOUT;
}

/* Point every queue at its socket, or none. */
static int redirect_all(struct ucm_dp *dp)
{
	uint32_t q;
	int err = 0;

	for (q = 0; q < dp->c.nqueues && !err; q++) {
		err = dp_redirect(dp, q, ucm_xsk_queue__fd(dp->rx[q].q));
		/*
		 * An RX thread that already gave up took its socket out of a
		 * map it was not in yet: out again. The thread stores its
		 * error, then deletes; we update, then load it. What orders
		 * the two is the map's lock, which its update and delete both
		 * take: if our update came second, this load sees the error;
		 * if first, the thread's delete undoes it.
		 */
		if (!err && atomic_load_explicit(&dp->rx[q].err, memory_order_acquire) && /* R2' */
		    dp_redirect(dp, q, -1))
			pr_warn("dp: queue %u: its RX thread gave up, and its socket stays in the XSK map\n",
				dp->c.queues[q]);
	}
	if (err)
		while (q--)
			dp_redirect(dp, q, -1);
	return err;
}

int ucm_dp__start(struct ucm_dp *dp)
{
	uint32_t q;
	int err = 0;

	/* Once: a second start would put a second thread on a pool; after
	 * a stop the sockets and the pools are gone. */
	if (!dp || dp->started || dp_stopped(dp))
		return ucm_err(-EINVAL);
	dp->started = true;
	dp->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (dp->stop_fd < 0)	/* the stop then waits for a sleep's timeout */
		pr_warn("dp: no eventfd for the stop (%s): a sleeping RX thread sees it within %d ms\n",
			strerror(errno), DP_RX_IDLE_MS);
	for (q = 0; q < dp->c.nqueues && dp->stop_fd >= 0; q++)
		ucm_xsk_queue__set_wake_fd(dp->rx[q].q, dp->stop_fd);
	for (q = 0; q < dp->c.nqueues && !err; q++)
		err = rx_start(&dp->rx[q]);
	/* Last, once every RX thread has its producer, the kernel starts
	 * redirecting to us. */
	for (q = 0; q < dp->c.nqueues && !err; q++)
		err = rx_ready(&dp->rx[q]);
	if (!err)
		err = redirect_all(dp);
	if (err)
		return ucm_err(err);
	/* Set up: a later stop leaves another's replaced program off (a
	 * daemon that dropped CAP_NET_ADMIN could not put it back). */
	if (dp->xdp)
		ucm_xdp_let_other_go(dp->xdp);
	pthread_mutex_lock(&dp->lock);
	dp->state = UCM_DP_S_RUNNING;
	pthread_mutex_unlock(&dp->lock);
	return 0;
}

/* Steps 1-3: nothing comes in any more, and what came in is out. */
static void dp_quiesce(struct ucm_dp *dp)
{
	uint32_t q;

	/* 1. The kernel stops redirecting to us; the RX threads, still
	 *    running, take what a NAPI poll under way publishes at its end
	 *    (xdp_do_flush()). */
	for (q = 0; q < dp->c.nqueues; q++)
		if (dp->rx[q].q)
			dp_redirect(dp, q, -1);
	if (dp->state & UCM_DP_S_RUNNING)
		nanosleep(&(struct timespec){ .tv_nsec = NAPI_GRACE_NS }, NULL);
	/* 2. RX threads flush their bulk queues and let go of their pools. */
	atomic_store_explicit(&dp->stop, 1, memory_order_relaxed);
	/* Never read: readable from now on, every sleep ends at once. */
	if (dp->stop_fd >= 0 && eventfd_write(dp->stop_fd, 1))
		pr_warn("dp: cannot wake the RX threads for the stop: %s\n", strerror(errno));
	for (q = 0; q < dp->c.nqueues; q++) {
		if (!dp->rx[q].started)
			continue;
		pthread_join(dp->rx[q].thr, NULL);
		dp->rx[q].started = false;
	}
	/* 3. Workers drain into the tun. */
	if (dp->map)
		ucm_cpumap__stop(dp->map);
}

int ucm_dp__stop(struct ucm_dp *dp, unsigned int timeout_ms)
{
	bool ran;
	int err;

	if (!dp)
		return ucm_err(-EINVAL);
	if (dp_stopped(dp)) {
		/* Frames were still out: look again. */
		err = dp->xsk ? ucm_dp_close_xsk(dp, timeout_ms) : 0;
		return ucm_err(dp->counted ? dp->counted : err);
	}
	/* A start that failed part-way may have RX threads that ran: their
	 * packets are counted too. */
	ran = dp->state & UCM_DP_S_RUNNING;
	for (uint32_t q = 0; q < dp->c.nqueues; q++)
		ran |= dp->rx[q].started;
	ucm_dp_links_flush(dp);
	dp_quiesce(dp);
	/* From here the getters read the final counters, while the parts go. */
	pthread_mutex_lock(&dp->lock);
	if (ran && dp->fin) {
		ucm_dp_snapshot(dp);
		if (ucm_dp_stats__violations(&dp->fin->tot, sizeof(dp->fin->tot))) {
			pr_warn("dp: the counters do not add up: a packet or a frame went unaccounted\n");
			dp->counted = -EUCLEAN;
		}
	}
	/* Without a reading (it never ran), the getters see zeros. */
	dp->state = UCM_DP_S_STOPPED;
	pthread_mutex_unlock(&dp->lock);
	err = ucm_dp_parts_close(dp, timeout_ms);
	return ucm_err(dp->counted ? dp->counted : err);
}

void ucm_dp__destroy(struct ucm_dp *dp)
{
	if (!dp)
		return;
	if (!dp_stopped(dp))
		ucm_dp__stop(dp, 0);
	/* Sockets that could not close keep their memory: frames are out. */
	if (dp->stop_fd >= 0)
		close(dp->stop_fd);
	pthread_mutex_destroy(&dp->lock);
	if (dp->fin) {
		free(dp->fin->es);
		free(dp->fin->es_ok);
		free(dp->fin);
	}
	free(dp);
}
