// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Next hops from the kernel (see neigh.h): a seeded, 4-way set-associative
 * cache on the worker, fed by a resolver thread that talks netlink (its
 * questions and the parsers of their answers: neigh_nl.c).
 *
 * Why a thread, not a non-blocking socket on the worker: rtnetlink answers
 * inside the sender's sendmsg() (RTM_NEWNEIGH under the RTNL mutex, which
 * any `ip` command or link change holds), so even a MSG_DONTWAIT send can
 * sleep for as long as someone else keeps that lock, and a route question
 * and the neighbour question that depends on its answer would make the
 * worker a state machine around its own sleep. On its own thread the
 * resolver can talk synchronously (each wait bounded by SO_RCVTIMEO); the
 * worker's part is a slot written per miss and, per batch with new
 * questions, one release store and one eventfd write.
 *
 * Concurrency contract. Two threads: the worker (the one calling sync,
 * lookup and kick; create and destroy too) and the resolver.
 * - The cache (set[]), the budget (tokens, tokens_at), req_next and
 *   ans_head are the worker's alone: no atomics.
 * - req[] and req_tail: the worker writes a slot, then publishes it with a
 *   store-release of req_tail in kick(), which pairs with the resolver's
 *   load-acquire of req_tail in resolver_drain(). The resolver only reads
 *   the slots and keeps its own req_head.
 * - ans[] and ans_tail: the resolver writes a slot, then a store-release
 *   of ans_tail, paired with the worker's load-acquire in sync(). The
 *   worker keeps its own ans_head.
 * - No ring can overrun: the worker queues a question only while fewer
 *   than NEIGH_RING are unanswered (req_next - ans_head), and the resolver
 *   answers each question once, held ones later than others. It reads the
 *   question slots once each, in order, each before its answer: when the
 *   worker has taken k answers, the slots of the first k questions are
 *   read, and its acquire of ans_tail orders that before it rewrites one.
 *   Answer slot j + NEIGH_RING is written for a question published after
 *   the worker took answer j (its release of req_tail, the resolver's
 *   acquire).
 * - stop: destroy's store-release, paired with the resolver's load-acquire
 *   after each wake; efd (eventfd) wakes it: kick() writes it after the
 *   release of req_tail, the resolver reads it (resetting it) before it
 *   loads req_tail, so a question published after that load leaves the
 *   counter set and poll() returns at once: no lost wake-up.
 * - nl (the netlink socket), req_head, ans_next, held[] and nheld are the
 *   resolver's alone.
 * - Each question carries its number (req_next when asked), and its answer
 *   the same: a destination given up and asked about again has two out,
 *   and the entry waits for the one it asked last.
 * - The counters evicted, refused (the worker's) and nl.requests (the
 *   resolver's) have one writer each and are read by ucm_neigh_counts() on
 *   any thread: relaxed stores and loads (STAT_ADD), nothing ordered by
 *   them.
 *
 * A question whose next hop the kernel is resolving is held by the
 * resolver, which looks at the neighbour entry again after 1, 2, 4 ... ms
 * (128 ms at most, its poll() timeout) and answers as soon as it is
 * usable, or -EAGAIN after 1 s: the worker learns of the address within a
 * few ms of the kernel, without asking again, so only the packets of that
 * wait are dropped, as the kernel queues (and drops past its small queue)
 * what waits for a neighbour.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/random.h>

#include "core/internal.h"
#include "io/neigh.h"
#include "io/neigh_nl.h"

#define NEIGH_WAYS	4
#define NEIGH_SETS	256		/* 1024 destinations per worker (40 KiB) */
#define NEIGH_REFRESH_NS 1000000000ull	/* a known next hop: ask again after 1 s */
#define NEIGH_NEG_NS	25000000ull	/* a negative answer: ask again after 25 ms, */
#define NEIGH_NEG_MAX	6		/* doubling each time up to 1.6 s */
#define NEIGH_RING	64		/* questions in flight per worker */
/*
 * The budget: a question per ms, in two buckets of a question per 2 ms
 * each, saved up to 16: one for new destinations (and negative ones asked
 * again), one kept for the next hops in use (refreshes, and a destination
 * that comes again; see NEIGH_IDLE_NS). Either may take from the other's
 * bucket what is there beyond its first 8, so each class has the whole
 * budget while the other is idle and half of it under contention: a flood
 * of new destinations (a scan, spoofed sources) cannot stop the next hops
 * in use from being asked about again, nor can a thousand next hops'
 * refreshes stop new ones. The last 16 places in flight are the kept
 * class's too.
 */
#define NEIGH_RATE_NS	2000000ull
#define NEIGH_BURST	16
#define NEIGH_LEND	(NEIGH_BURST / 2)
#define NEIGH_KEEP_RING	16
/* A known next hop looked up in the last second is in use: a new
 * destination does not take its place (as the kernel's forced GC spares
 * entries updated in the last 5 s) unless it comes again (it is one of
 * the last two that missed in its set) and every way is in use: then it
 * takes the one used longest ago, once per 100 ms per set at most. A set
 * cannot hold more than four; the fifth is not starved, and a flood of
 * new destinations, each seen once in a while, neither evicts one in use
 * nor takes the questions kept for them. */
#define NEIGH_IDLE_NS	1000000000ull
#define NEIGH_FORCE_NS	100000000ull
#define HOLD_NS		1000000000ull	/* a neighbour the kernel resolves: watched 1 s, */
#define HOLD_STEP_MS	1		/* looked at after 1, 2, 4 ... ms, */
#define HOLD_STEP_MAX	128		/* then every 128 ms */

enum { NE_FREE, NE_KNOWN, NE_NEG };

struct neigh_entry {
	uint8_t addr[16];
	uint8_t mac[6];
	uint8_t state;		/* NE_* */
	uint8_t v6;
	uint8_t pending;	/* a question is out */
	uint8_t backoff;	/* NE_NEG: doublings of NEIGH_NEG_NS */
	int16_t err;		/* NE_NEG: the answer */
	uint32_t asked;		/* pending: the question's number (req_next) */
	uint64_t refresh;	/* ask again from then */
	uint64_t used;		/* last looked up */
};

struct neigh_req {
	uint8_t addr[16];
	uint8_t v6;
	uint32_t id;		/* its number: answers name it */
};

struct neigh_ans {
	uint8_t addr[16];
	uint8_t mac[6];
	uint8_t v6;
	int32_t err;
	uint32_t id;		/* the question's */
};

/* A question the resolver keeps open while the kernel resolves its hop. */
struct neigh_held {
	uint8_t addr[16];
	uint8_t hop[16];
	uint8_t v6;
	bool hop_v6;		/* the next hop's family: an IPv4 route may go via IPv6 */
	uint32_t id;		/* the question's */
	uint32_t step_ms;
	uint64_t next;		/* look again then */
	uint64_t deadline;	/* answer -EAGAIN then */
};

struct ucm_neigh {
	/* the worker's */
	struct neigh_entry set[NEIGH_SETS][NEIGH_WAYS];
	uint64_t seed;
	uint64_t tokens_at;	/* the budget's clock */
	uint32_t tokens[2];	/* per class: [1] is the kept one */
	uint32_t req_next;	/* questions written */
	uint32_t ans_head;	/* answers taken */
	uint64_t forced[NEIGH_SETS];	/* a set's last eviction of a way in use */
	uint32_t missed[NEIGH_SETS][2];	/* the hashes of a set's last misses */
	uint64_t evicted;	/* next hops in the cache given up for another */
	uint64_t refused;	/* new destinations with every way in use */
	/* shared, see the contract */
	uint32_t req_tail __cacheline_aligned;
	uint32_t ans_tail __cacheline_aligned;
	int stop;
	int efd;
	struct neigh_req req[NEIGH_RING];
	struct neigh_ans ans[NEIGH_RING];
	/* the resolver's */
	uint32_t req_head __cacheline_aligned;
	uint32_t ans_next;
	uint32_t nheld;
	struct neigh_held held[NEIGH_RING];
	pthread_t thread;
	bool thread_ok;
	/* Called on the thread first (ucm_neigh_create()'s). */
	ucm_thread_fn init;
	void *init_ctx;
	uint32_t init_idx;
	sem_t ready;		/* posted by the thread once init ran */
	struct neigh_nl nl;	/* its netlink socket (neigh_nl.c) */
};

/* ---- the resolver thread ---------------------------------------------- */

/* An answer published to the worker (its slot, then ans_tail). */
static void answer(struct ucm_neigh *n, uint32_t id, bool v6, const uint8_t *addr, int err,
		   const uint8_t *mac)
{
	struct neigh_ans *a = &n->ans[n->ans_next % NEIGH_RING];

	a->id = id;
	memcpy(a->addr, addr, sizeof(a->addr));
	a->v6 = v6;
	a->err = err;
	memcpy(a->mac, mac, sizeof(a->mac));
	/* Pairs with the worker's load-acquire in ucm_neigh_sync(). */
	__atomic_store_n(&n->ans_tail, ++n->ans_next, __ATOMIC_RELEASE);
}

/* Answer every published question, or hold it while the kernel resolves
 * its next hop (at most NEIGH_RING are unanswered: held has room). */
static void resolver_drain(struct ucm_neigh *n)
{
	/* Pairs with the worker's store-release in ucm_neigh_kick(). */
	uint32_t tail = __atomic_load_n(&n->req_tail, __ATOMIC_ACQUIRE);
	uint64_t now;

	while (n->req_head != tail) {
		const struct neigh_req *q = &n->req[n->req_head++ % NEIGH_RING];
		struct neigh_held *h = &n->held[n->nheld];
		uint8_t mac[6] = {};
		int err;

		err = ucm_neigh_nl_resolve(&n->nl, q->v6, q->addr, h->hop, &h->hop_v6, mac);
		if (err != -EAGAIN) {
			answer(n, q->id, q->v6, q->addr, err, mac);
			continue;
		}
		h->id = q->id;
		memcpy(h->addr, q->addr, sizeof(h->addr));
		h->v6 = q->v6;
		h->step_ms = HOLD_STEP_MS;
		now = ucm_now_ns();
		h->next = now + HOLD_STEP_MS * 1000000ull;
		h->deadline = now + HOLD_NS;
		n->nheld++;
	}
}

/* Look at the held questions that are due: answer those the kernel has
 * resolved, or has not in HOLD_NS. Return the ms until the next is due,
 * or -1 for none held. */
static int resolver_recheck(struct ucm_neigh *n)
{
	uint64_t now = ucm_now_ns(), first = UINT64_MAX;

	for (uint32_t i = 0; i < n->nheld;) {
		struct neigh_held *h = &n->held[i];
		uint8_t mac[6] = {};
		int err = -EAGAIN;

		if (now >= h->next)
			err = ucm_neigh_nl_get(&n->nl, h->hop_v6, h->hop, mac);
		if (err == -EAGAIN && now < h->deadline) {
			if (now >= h->next) {
				h->step_ms = h->step_ms * 2 > HOLD_STEP_MAX ?
					     HOLD_STEP_MAX : h->step_ms * 2;
				h->next = now + h->step_ms * 1000000ull;
				/* The last look is at the deadline. */
				if (h->next > h->deadline)
					h->next = h->deadline;
			}
			first = h->next < first ? h->next : first;
			i++;
			continue;
		}
		if (err == 1)
			ucm_neigh_nl_use(&n->nl, h->hop_v6, h->hop);	/* stale already: confirm it */
		answer(n, h->id, h->v6, h->addr, err == 1 ? 0 : err, mac);
		*h = n->held[--n->nheld];	/* the last one, looked at next */
	}
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

static void *resolver_main(void *arg)
{
	struct ucm_neigh *n = arg;
	struct pollfd p = { .fd = n->efd, .events = POLLIN };
	uint64_t v;

	if (n->init)
		n->init(n->init_ctx, n->init_idx);
	sem_post(&n->ready);	/* the creator returns after the hook */
	for (;;) {
		if (read(n->efd, &v, sizeof(v)) < 0 && errno != EAGAIN && errno != EINTR)
			break;
		/* Pairs with the store-release in ucm_neigh_destroy(). */
		if (__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE))
			return NULL;
		resolver_drain(n);
		if (poll(&p, 1, resolver_recheck(n)) < 0 && errno != EINTR)
			break;
	}
	/* Not asked to stop: next hops not known yet are dropped from now
	 * on (drop_no_neigh), the known ones used as they are. Said. */
	pr_warn("neigh: the next-hop resolver stopped (%s): a next hop not known yet is a counted drop (drop_no_neigh) until the datapath restarts\n",
		strerror(errno));
	return NULL;
}

/* ---- create and destroy ----------------------------------------------- */

static uint32_t neigh_hash(uint64_t seed, bool v6, const uint8_t *a);
static void entry_init(struct neigh_entry *e, bool v6, const uint8_t *a, uint64_t now);

static struct ucm_neigh *neigh_alloc(uint64_t seed)
{
	struct ucm_neigh *n;
	size_t sz = (sizeof(*n) + UCM_CACHELINE - 1) & ~(size_t)(UCM_CACHELINE - 1);

	n = aligned_alloc(UCM_CACHELINE, sz);
	if (!n)
		return NULL;
	memset(n, 0, sz);
	n->nl.fd = -1;
	n->efd = -1;
	n->seed = seed;
	n->tokens[0] = n->tokens[1] = NEIGH_BURST;
	return n;
}

/* The resolver runs anywhere the process may (the main thread's CPUs, as
 * taskset left them; not the worker's CPU only, where it is created) and
 * takes no signals. */
static int start_resolver(struct ucm_neigh *n)
{
	sigset_t all, old;
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	pthread_attr_init(&attr);
	/* Best effort: unpinned, it runs where the creator's mask allows. */
	if (!ucm_affinity(getpid(), &set))
		(void)pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	sigfillset(&all);
	sem_init(&n->ready, 0, 0);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&n->thread, &attr, resolver_main, n);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		sem_destroy(&n->ready);
		return err;
	}
	n->thread_ok = true;
	pthread_setname_np(n->thread, "ucpumap/neigh");
	/* Its hook has run when we return (neigh.h); the semaphore goes
	 * after the join (sem_post may still be on its way out). */
	while (sem_wait(&n->ready) && errno == EINTR)
		;
	return 0;
}

static uint64_t random_seed(void)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = ucm_now_ns() ^ (uintptr_t)&seed;	/* no entropy yet */
	return seed | 1;
}

/*
 * What the kernel already knows about the NIC's neighbours, read once at
 * creation: an on-link destination among them goes at its first packet
 * instead of waiting for a question's answer.
 * Each is due at once (refresh 0), so its first lookup both uses the MAC
 * and asks about it, which confirms its route through the NIC; never
 * looked up (used 0), it is the first a newcomer takes. A destination
 * behind a gateway is not in the table: its first packets wait for the
 * answer about its route.
 */
int ucm_neigh_preload(struct ucm_neigh *n, bool v6, const uint8_t *addr, const uint8_t *mac)
{
	struct neigh_entry *s = n->set[neigh_hash(n->seed, v6, addr) % NEIGH_SETS];

	for (int i = 0; i < NEIGH_WAYS; i++) {
		if (s[i].state != NE_FREE)
			continue;
		entry_init(&s[i], v6, addr, 0);
		s[i].state = NE_KNOWN;
		s[i].err = 0;
		memcpy(s[i].mac, mac, 6);
		return 0;
	}
	return -ENOSPC;
}

static void preload_one(void *ctx, bool v6, const uint8_t *addr, const uint8_t *mac)
{
	ucm_neigh_preload(ctx, v6, addr, mac);
}

struct ucm_neigh *ucm_neigh_create(int ifindex, ucm_thread_fn init, void *ctx,
				   uint32_t idx)
{
	struct ucm_neigh *n = neigh_alloc(random_seed());
	int err;

	if (!n)
		return ucm_err_ptr(ucm_oom("a next-hop resolver"));
	n->init = init;
	n->init_ctx = ctx;
	n->init_idx = idx;
	err = ucm_neigh_nl_open(&n->nl, ifindex);
	if (err)
		goto err_free;
	n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n->efd < 0) {
		err = -errno;
		goto err_free;
	}
	/* Before the thread: the cache is still the creator's alone. Best
	 * effort: without it, a first packet per destination is dropped. */
	if (ucm_neigh_nl_dump(&n->nl, preload_one, n) < 0)
		ucm_log(UCM_LOG_DEBUG, "ucpumap: next hops: the kernel's neighbour table unread\n");
	err = start_resolver(n);
	if (err)
		goto err_free;
	return n;

err_free:
	ucm_neigh_destroy(n);
	return ucm_err_ptr(err);
}

void ucm_neigh_stop(struct ucm_neigh *n)
{
	uint64_t one = 1;

	if (!n || !n->thread_ok)
		return;
	/* Pairs with the load-acquire in resolver_main(). */
	__atomic_store_n(&n->stop, 1, __ATOMIC_RELEASE);
	if (write(n->efd, &one, sizeof(one)) < 0)
		(void)0;	/* the counter is set already */
	pthread_join(n->thread, NULL);
	sem_destroy(&n->ready);
	n->thread_ok = false;
}

void ucm_neigh_destroy(struct ucm_neigh *n)
{
	if (!n)
		return;
	ucm_neigh_stop(n);
	if (n->efd >= 0)
		close(n->efd);
	if (n->nl.fd >= 0)
		close(n->nl.fd);
	free(n);
}

/* ---- the worker's side ------------------------------------------------ */

/* A hash of the destination seeded per resolver, as the kernel seeds its
 * neighbour tables' (neigh_rand): who picks the addresses (a remote
 * sender, whose replies come back this way) does not know the seed, so
 * cannot aim them all at one set. */
static uint32_t neigh_hash(uint64_t seed, bool v6, const uint8_t *a)
{
	uint64_t h = seed ^ v6;
	uint32_t w;

	for (int i = 0; i < (v6 ? 16 : 4); i += 4) {
		memcpy(&w, a + i, sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	/* murmur3's finaliser: every bit of the key moves the low ones */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static struct neigh_entry *find(struct ucm_neigh *n, bool v6, const uint8_t *a,
				uint32_t *hash)
{
	struct neigh_entry *s;

	*hash = neigh_hash(n->seed, v6, a);
	s = n->set[*hash % NEIGH_SETS];
	for (int i = 0; i < NEIGH_WAYS; i++)
		if (s[i].state != NE_FREE && s[i].v6 == v6 && !memcmp(s[i].addr, a, v6 ? 16 : 4))
			return &s[i];
	return NULL;
}

void ucm_neigh_counts(const struct ucm_neigh *n, uint64_t *requests, uint64_t *evicted,
		      uint64_t *refused)
{
	*requests = __atomic_load_n(&n->nl.requests, __ATOMIC_RELAXED);
	*evicted = __atomic_load_n(&n->evicted, __ATOMIC_RELAXED);
	*refused = __atomic_load_n(&n->refused, __ATOMIC_RELAXED);
}

/* A known next hop looked up within NEIGH_IDLE_NS. */
static bool in_use(const struct neigh_entry *e, uint64_t now)
{
	return e->state == NE_KNOWN && now - e->used < NEIGH_IDLE_NS;
}

/*
 * The way of set @si to give a new destination, in this order: a free
 * one; a negative answer not being asked about; a known next hop idle for
 * NEIGH_IDLE_NS; one being asked about (a new destination still unknown:
 * only if @pending_too); and, if @again (it missed before, see above) and
 * all four are known and in use, the one used longest ago, if the set has
 * not given one up in NEIGH_FORCE_NS. Within a kind, the one used longest
 * ago (a known one) or due first. NULL otherwise: the newcomer waits.
 */
static struct neigh_entry *victim(struct ucm_neigh *n, uint32_t si, uint64_t now,
				  bool pending_too, bool again)
{
	struct neigh_entry *s = n->set[si], *v = NULL, *lru = NULL;
	int vrank = 4, busy = 0;

	for (int i = 0; i < NEIGH_WAYS; i++) {
		struct neigh_entry *e = &s[i];
		int rank;

		if (e->state == NE_FREE)
			return e;
		if (in_use(e, now)) {
			busy++;
			if (!e->pending && (!lru || e->used < lru->used))
				lru = e;
			continue;
		}
		if (e->pending && (!pending_too || e->state == NE_KNOWN))
			continue;
		rank = e->state == NE_KNOWN ? 2 : e->pending ? 3 : 1;
		if (rank < vrank || (rank == vrank &&
				     (rank == 2 ? e->used < v->used : e->refresh < v->refresh))) {
			v = e;
			vrank = rank;
		}
	}
	if (v || !again || busy < NEIGH_WAYS || !lru || now - n->forced[si] < NEIGH_FORCE_NS)
		return v;
	n->forced[si] = now;
	return lru;
}

static void entry_init(struct neigh_entry *e, bool v6, const uint8_t *a, uint64_t now)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->addr, a, v6 ? 16 : 4);
	e->v6 = v6;
	e->state = NE_NEG;
	e->err = -EAGAIN;
	e->used = now;
}

/* The bucket a question of class @keep (see NEIGH_RATE_NS) takes its
 * token from, or -1 for none (no token, or no place in flight). */
static int bucket(const struct ucm_neigh *n, bool keep)
{
	uint32_t ring = keep ? NEIGH_RING : NEIGH_RING - NEIGH_KEEP_RING;

	if (n->req_next - n->ans_head >= ring)
		return -1;
	if (n->tokens[keep])
		return keep;
	return n->tokens[!keep] > NEIGH_LEND ? !keep : -1;
}

/* Queue a question about @e, within the bounds. */
static void ask(struct ucm_neigh *n, struct neigh_entry *e, bool keep, uint64_t *asks)
{
	struct neigh_req *q;
	int b = bucket(n, keep);

	if (b < 0)
		return;
	n->tokens[b]--;
	q = &n->req[n->req_next % NEIGH_RING];
	memcpy(q->addr, e->addr, sizeof(q->addr));
	q->v6 = e->v6;
	q->id = n->req_next;
	e->asked = n->req_next++;
	e->pending = 1;
	(*asks)++;
}

int ucm_neigh_lookup(struct ucm_neigh *n, bool v6, const uint8_t *dst, uint8_t *mac,
		     uint64_t now, uint64_t *asks)
{
	uint32_t h, si;
	struct neigh_entry *e = find(n, v6, dst, &h);
	bool again;

	if (!e) {
		si = h % NEIGH_SETS;
		again = n->missed[si][0] == h || n->missed[si][1] == h;
		if (!again) {
			n->missed[si][1] = n->missed[si][0];
			n->missed[si][0] = h;
		}
		if (bucket(n, again) < 0)
			return -EAGAIN;	/* no room to ask: keep what is cached */
		e = victim(n, si, now, true, again);
		if (!e) {
			STAT_ADD(n->refused, 1);
			return -EAGAIN;
		}
		if (e->state == NE_KNOWN)
			STAT_ADD(n->evicted, 1);
		entry_init(e, v6, dst, now);
		ask(n, e, again, asks);
		return -EAGAIN;
	}
	e->used = now;
	if (now >= e->refresh && !e->pending)
		ask(n, e, e->state == NE_KNOWN, asks);
	if (e->state == NE_NEG)
		return e->err;
	memcpy(mac, e->mac, 6);
	return 0;
}

int ucm_neigh_peek(struct ucm_neigh *n, bool v6, const uint8_t *dst, uint8_t *mac)
{
	uint32_t h;
	const struct neigh_entry *e = find(n, v6, dst, &h);

	if (!e)
		return -ENOENT;
	if (e->state == NE_KNOWN) {
		memcpy(mac, e->mac, 6);
		return 0;
	}
	if (e->pending)
		return -EAGAIN;
	return e->err == -EAGAIN ? -ENOENT : e->err;
}

/*
 * A failure of our own asking (the resolver's netlink talk: no answer in
 * time, a cut or garbled one, no buffer), not the kernel's word about the
 * next hop: a known one stays known until the kernel says otherwise.
 */
static bool neigh_err_ours(int err)
{
	switch (err) {
	case -ETIMEDOUT: case -EMSGSIZE: case -EPROTO: case -EBUSY:
	case -ENOBUFS: case -ENOMEM: case -EINTR:
		return true;
	default:
		return false;
	}
}

/* An answer into the cache. */
static void apply(struct ucm_neigh *n, const struct neigh_ans *a, uint64_t now)
{
	uint32_t h;
	struct neigh_entry *e = find(n, a->v6, a->addr, &h);

	if (!e) {
		/* Evicted while asked about: back in, if a way is neither in
		 * use nor waiting for an answer of its own. */
		e = victim(n, h % NEIGH_SETS, now, false, false);
		if (!e)
			return;
		if (e->state == NE_KNOWN)
			STAT_ADD(n->evicted, 1);
		entry_init(e, a->v6, a->addr, now);
	} else if (e->pending && e->asked != a->id) {
		/* An older question's, the destination given up and asked
		 * about again since: the newer answer is due. */
		return;
	}
	e->pending = 0;
	if (!a->err) {
		e->state = NE_KNOWN;
		memcpy(e->mac, a->mac, 6);
		e->backoff = 0;
		e->refresh = now + NEIGH_REFRESH_NS;
		return;
	}
	if (e->state == NE_KNOWN && neigh_err_ours(a->err)) {
		/* Used as it is; asked about again soon. */
		e->refresh = now + NEIGH_NEG_NS;
		return;
	}
	/* The first negative answer waits NEIGH_NEG_NS, each next one twice
	 * as long as the one before (refresh is 0 until a first answer). */
	if (e->state == NE_NEG && e->refresh && e->backoff < NEIGH_NEG_MAX)
		e->backoff++;
	e->state = NE_NEG;
	e->err = a->err < -32768 ? -EPROTO : a->err;
	e->refresh = now + (NEIGH_NEG_NS << e->backoff);
}

void ucm_neigh_sync(struct ucm_neigh *n, uint64_t now)
{
	/* Pairs with the resolver's store-release in resolver_drain(). */
	uint32_t tail = __atomic_load_n(&n->ans_tail, __ATOMIC_ACQUIRE);
	uint64_t earned;

	while (n->ans_head != tail)
		apply(n, &n->ans[n->ans_head++ % NEIGH_RING], now);
	if (now <= n->tokens_at)
		return;
	earned = (now - n->tokens_at) / NEIGH_RATE_NS;
	for (int b = 0; b < 2; b++)
		n->tokens[b] = n->tokens[b] + earned >= NEIGH_BURST ? NEIGH_BURST :
			       n->tokens[b] + (uint32_t)earned;
	if (n->tokens[0] == NEIGH_BURST && n->tokens[1] == NEIGH_BURST)
		n->tokens_at = now;
	else
		n->tokens_at += earned * NEIGH_RATE_NS;
}

void ucm_neigh_kick(struct ucm_neigh *n)
{
	uint64_t one = 1;

	/* The worker's own last store: relaxed. */
	if (n->req_next == __atomic_load_n(&n->req_tail, __ATOMIC_RELAXED))
		return;
	/* Pairs with the resolver's load-acquire in resolver_drain(). */
	__atomic_store_n(&n->req_tail, n->req_next, __ATOMIC_RELEASE);
	if (n->efd >= 0 && write(n->efd, &one, sizeof(one)) < 0)
		(void)0;	/* EAGAIN: the counter is full, the resolver awake */
}

/* ---- the test's resolver ---------------------------------------------- */

struct ucm_neigh *ucm_neigh_create_detached(uint64_t seed)
{
	struct ucm_neigh *n = neigh_alloc(seed);

	return n ? n : ucm_err_ptr(-ENOMEM);
}

uint32_t ucm_neigh_set_of(const struct ucm_neigh *n, bool v6, const uint8_t *addr)
{
	return neigh_hash(n->seed, v6, addr) % NEIGH_SETS;
}

int ucm_neigh_take_request(struct ucm_neigh *n, bool *v6, uint8_t *addr, uint32_t *id)
{
	const struct neigh_req *q;

	if (n->req_head == __atomic_load_n(&n->req_tail, __ATOMIC_ACQUIRE))
		return -ENOENT;
	q = &n->req[n->req_head++ % NEIGH_RING];
	*v6 = q->v6;
	memcpy(addr, q->addr, 16);
	if (id)
		*id = q->id;
	return 0;
}

void ucm_neigh_put_answer_to(struct ucm_neigh *n, uint32_t id, bool v6, const uint8_t *addr,
			     int err, const uint8_t *mac)
{
	static const uint8_t none[6];

	answer(n, id, v6, addr, err, mac ? mac : none);
}

void ucm_neigh_put_answer(struct ucm_neigh *n, bool v6, const uint8_t *addr, int err,
			  const uint8_t *mac)
{
	uint32_t id = n->req_head - 1;

	/* The latest question taken about @addr (its slot is intact: at
	 * most NEIGH_RING are unanswered). */
	for (uint32_t i = 1; i <= NEIGH_RING && i <= n->req_head; i++) {
		const struct neigh_req *q = &n->req[(n->req_head - i) % NEIGH_RING];

		if (q->v6 == v6 && !memcmp(q->addr, addr, v6 ? 16 : 4)) {
			id = q->id;
			break;
		}
	}
	ucm_neigh_put_answer_to(n, id, v6, addr, err, mac);
}
