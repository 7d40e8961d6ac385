// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The frame pool: allocation and return paths (page_pool.c's role).
 *
 * Allocation, owner only:
 *   fast path  - pop the alloc cache;
 *   refill     - cache empty: take up to 64 from the recycle ring (lockless,
 *                the owner is its only consumer);
 *   slow path  - ring empty: take up to 64 from the backing stack under its
 *                lock (hold += n).
 * Each allocation is counted in exactly one of fast, refill and slow, as in
 * page_pool: fast + refill + slow == frames allocated.
 *
 * Return, any thread:
 *   owner (and direct allowed) - into the cache (cached), overflow counted
 *                                cache_full and sent on to the ring;
 *   others                     - into the recycle ring (ring), one
 *                                reservation per bulk;
 *   ring full                  - to the backing stack (ring_full,
 *                                release += n), one lock per bulk.
 */
#include <stdlib.h>
#include <string.h>

#include "core/pool_internal.h"

__thread uint64_t ucm_self_id __attribute__((tls_model("initial-exec")));
static uint64_t ucm_next_id;

/* A thread's id is taken on first use and never reused, unlike the
 * address of a thread-local (glibc hands a joined thread's TLS block to
 * the next thread, which would inherit the dead thread's pools). */
uint64_t ucm_self_slow(void)
{
	ucm_self_id = __atomic_add_fetch(&ucm_next_id, 1, __ATOMIC_RELAXED);
	return ucm_self_id;
}

/* The pool's own places; the layers above name theirs at load time
 * (ucm_frame_loc_name(), from a constructor: before any thread runs). */
static const char *loc_names[UCM_LOC__MAX] = {
	[UCM_LOC_STACK] = "stack",
	[UCM_LOC_CACHE] = "cache",
	[UCM_LOC_RING] = "ring",
	[UCM_LOC_APP] = "app",
};

void ucm_frame_loc_name(enum ucm_frame_loc loc, const char *name)
{
	if ((unsigned int)loc >= UCM_LOC_USER && (unsigned int)loc < UCM_LOC__MAX)
		loc_names[loc] = name;
}

const char *ucm_frame_loc_str(enum ucm_frame_loc loc)
{
	if ((unsigned int)loc == UCM_LOC_CHAIN)
		return "chain";
	if ((unsigned int)loc >= UCM_LOC__MAX || !loc_names[loc])
		return "unknown";
	return loc_names[loc];
}

#ifdef UCM_DEBUG
void ucm_frame_bad_move(struct ucm_umem *umem, uint64_t addr,
			enum ucm_frame_loc from, enum ucm_frame_loc to)
{
	pr_warn("frame 0x%llx: move %s -> %s, but it is in %s\n",
		(unsigned long long)addr, ucm_frame_loc_str(from),
		ucm_frame_loc_str(to),
		ucm_frame_loc_str(ucm_frame_loc(umem, addr)));
	abort();
}
#endif

/* ---- the backing stack ------------------------------------------------- */

/* Pop up to @n frames; they become CACHE. Caller: owner. */
static uint32_t pool_stack_pop(struct ucm_pool *pool, uint64_t *out,
			       uint32_t n)
{
	uint32_t k;

	pthread_mutex_lock(&pool->stack.lock);
	k = min(n, pool->stack.top);
	pool->stack.top -= k;
	memcpy(out, &pool->stack.frames[pool->stack.top], k * sizeof(*out));
	WRITE_ONCE(pool->stack.hold, pool->stack.hold + k);
	pthread_mutex_unlock(&pool->stack.lock);

	ucm_frame_move_bulk(pool->umem, out, k, UCM_LOC_STACK, UCM_LOC_CACHE);
	return k;
}

/*
 * Push @n frames, whose tags are already UCM_LOC_STACK, and add what was
 * pushed to @stat (ring_full or released; NULL for none). A stack that
 * would overflow can only mean a frame was returned twice: the excess is
 * refused and counted (release builds' double-free detector).
 *
 * Everything a returner touches after its frames become visible happens
 * here, under the lock: ucm_umem__destroy() takes and releases this lock
 * before freeing, so no returner is left inside (page_pool_release()).
 *
 * Return: the number refused.
 */
uint32_t ucm_pool_stack_push(struct ucm_pool *pool, const uint64_t *addrs,
			     uint32_t n, uint64_t *stat)
{
	uint32_t k, idx = pool->idx;

	pthread_mutex_lock(&pool->stack.lock);
	k = min(n, pool->nframes - pool->stack.top);
	memcpy(&pool->stack.frames[pool->stack.top], addrs, k * sizeof(*addrs));
	if (stat)
		__atomic_fetch_add(stat, k, __ATOMIC_RELAXED);
	if (unlikely(k < n))
		__atomic_fetch_add(&pool->remote_stats.double_free, n - k,
				   __ATOMIC_RELAXED);
	pool->stack.top += k;
	/* S1: pairs with S2 in pool_counts(): every hold that came
	 * before (stack.lock orders them) is seen with it. */
	__atomic_store_n(&pool->stack.release, pool->stack.release + k,
			 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pool->stack.lock);

	if (unlikely(k < n))
		pr_warn("pool %u: backing stack overflow: %u frames returned twice\n",
			idx, n - k);
	return n - k;
}

/* ---- allocation (owner only) ------------------------------------------- */

/* noinline: keep the fast path small, as page_pool_refill_alloc_cache(). */
static __noinline uint32_t pool_refill_from_ring(struct ucm_pool *pool)
{
	uint32_t n;

	n = ucm_ring__consume(pool->ring, pool->alloc.cache,
			      UCM_POOL_CACHE_REFILL);
	ucm_frame_move_bulk(pool->umem, pool->alloc.cache, n, UCM_LOC_RING,
			    UCM_LOC_CACHE);
	pool->alloc.count = n;
	return n;
}

static __noinline uint32_t pool_alloc_slow(struct ucm_pool *pool)
{
	uint32_t n = pool_stack_pop(pool, pool->alloc.cache,
				    UCM_POOL_STACK_BULK);

	pool->alloc.count = n;
	return n;
}

int ucm_pool__alloc_bulk(struct ucm_pool *pool, uint64_t *addrs, uint32_t n)
{
	uint32_t got = 0, k;

	if (unlikely(!ucm_pool_local(pool)))
		return ucm_err(-EPERM);

	while (got < n) {
		k = min(n - got, pool->alloc.count);
		if (k) {
			/* LIFO: hand out the most recently returned (hot)
			 * frames first. */
			pool->alloc.count -= k;
			memcpy(&addrs[got], &pool->alloc.cache[pool->alloc.count],
			       k * sizeof(*addrs));
			ucm_frame_move_bulk(pool->umem, &addrs[got], k,
					    UCM_LOC_CACHE, UCM_LOC_APP);
			STAT_ADD(pool->owner_stats.fast, k);
			got += k;
			continue;
		}
		/* Cache empty: the next frame is a refill or a slow one,
		 * the ones after it come from the refilled cache (fast). */
		if (pool_refill_from_ring(pool)) {
			STAT_ADD(pool->owner_stats.refill, 1);
		} else {
			STAT_ADD(pool->owner_stats.empty, 1);
			if (!pool_alloc_slow(pool)) {
				STAT_ADD(pool->owner_stats.exhausted, n - got);
				break;
			}
			STAT_ADD(pool->owner_stats.slow, 1);
		}
		addrs[got++] = pool->alloc.cache[--pool->alloc.count];
		ucm_frame_move(pool->umem, addrs[got - 1], UCM_LOC_CACHE,
			       UCM_LOC_APP);
	}
	return got;
}

int ucm_pool__alloc(struct ucm_pool *pool, uint64_t *addr)
{
	int n = ucm_pool__alloc_bulk(pool, addr, 1);

	if (n < 0)
		return n;
	return n ? 0 : ucm_err(-ENOBUFS);
}

/* ---- returns ----------------------------------------------------------- */

/*
 * Into the recycle ring; what does not fit goes to the backing stack. The
 * tags of @addrs are already UCM_LOC_RING. The ring counter is added
 * between the reserve and the publish: the pool may be freed once the
 * frames are visible (see ucm_pool_stack_push()), and a count of what was
 * reserved never has to be taken back (a counter that went back would
 * read as a reset).
 * Return: the number refused (see ucm_pool_stack_push()).
 */
static uint32_t pool_recycle_ring(struct ucm_pool *pool,
				  const uint64_t *addrs, uint32_t n)
{
	uint32_t head = 0, k;

	k = ucm_ring_reserve_mp_(pool->ring, addrs, n, &head);	/* the ring is MP */
	__atomic_fetch_add(&pool->remote_stats.ring, k, __ATOMIC_RELAXED);
	ucm_ring_publish_mp_(pool->ring, head, addrs, k);
	if (k == n)
		return 0;
	ucm_frame_move_bulk(pool->umem, addrs + k, n - k, UCM_LOC_RING,
			    UCM_LOC_STACK);
	return ucm_pool_stack_push(pool, addrs + k, n - k,
				   &pool->remote_stats.ring_full);
}

/*
 * The core of every return: @addrs all belong to @pool and have been
 * validated, and their tags already say @to (CACHE is decided here, so
 * callers pass RING for "recycle" and STACK for "release").
 * Return: the number refused as returned twice (release builds).
 */
static uint32_t pool_put_validated(struct ucm_pool *pool,
				   const uint64_t *addrs, uint32_t n,
				   bool allow_direct, bool release)
{
	uint32_t k = 0;

	if (release)
		return ucm_pool_stack_push(pool, addrs, n,
					   &pool->remote_stats.released);
	if (allow_direct) {
		k = min(n, UCM_POOL_CACHE_SIZE - pool->alloc.count);
		memcpy(&pool->alloc.cache[pool->alloc.count], addrs,
		       k * sizeof(*addrs));
		pool->alloc.count += k;
		ucm_frame_move_bulk(pool->umem, addrs, k, UCM_LOC_RING,
				    UCM_LOC_CACHE);
		STAT_ADD(pool->owner_stats.cached, k);
		if (k < n)
			STAT_ADD(pool->owner_stats.cache_full, n - k);
	}
	return k < n ? pool_recycle_ring(pool, addrs + k, n - k) : 0;
}

#ifdef UCM_DEBUG
static bool loc_outside_pool(enum ucm_frame_loc loc)
{
	return loc != UCM_LOC_STACK && loc != UCM_LOC_CACHE &&
	       loc != UCM_LOC_RING;
}
#endif

/*
 * Check one frame handle on its way back and, in debug builds, claim its
 * tag (@from, or any location outside the pool when @from is
 * UCM_LOC_ANY) for @to. A refused handle is counted on @pool, or on its
 * owner (pool 0 for an address that has none).
 *
 * Return: 0, -EINVAL (bad address, or not @pool's), -EALREADY (already free).
 */
static int put_check(struct ucm_umem *umem, struct ucm_pool *pool,
		     uint64_t addr, enum ucm_frame_loc from,
		     enum ucm_frame_loc to)
{
	if (unlikely(!ucm_umem_addr_ok(umem, addr) ||
		     (pool && ucm_umem_owner(umem, addr) != pool))) {
		struct ucm_pool *p = pool ? pool : addr < umem->size ?
				     ucm_umem_owner(umem, addr) : &umem->pools[0];

		__atomic_fetch_add(&p->remote_stats.bad_addr, 1,
				   __ATOMIC_RELAXED);
		return -EINVAL;
	}
#ifdef UCM_DEBUG
	enum ucm_frame_loc cur = ucm_frame_loc(umem, addr);

	if (loc_outside_pool(cur) && from != UCM_LOC_ANY && cur != from)
		ucm_frame_bad_move(umem, addr, from, to);
	if (unlikely(!loc_outside_pool(cur) ||
		     !ucm_frame_try_move(umem, addr, cur, to))) {
		__atomic_fetch_add(&ucm_umem_owner(umem, addr)->remote_stats.double_free,
				   1, __ATOMIC_RELAXED);
		pr_warn("frame 0x%llx returned while in %s\n",
			(unsigned long long)addr, ucm_frame_loc_str(cur));
		return -EALREADY;
	}
#endif
	return 0;
}

int ucm_pool__put(struct ucm_pool *pool, uint64_t addr)
{
	int err = put_check(pool->umem, pool, addr, UCM_LOC_ANY,
			    UCM_LOC_RING);

	if (err)
		return ucm_err(err);
	if (pool_put_validated(pool, &addr, 1, ucm_pool_local(pool), false))
		return ucm_err(-EALREADY);
	return 0;
}

void ucm_pool_recycle_direct(struct ucm_pool *pool, const uint64_t *addrs,
			     uint32_t n, enum ucm_frame_loc from)
{
	ucm_frame_move_bulk(pool->umem, addrs, n, from, UCM_LOC_RING);
	/* Frames from the producer's own staging cannot be free already. */
	pool_put_validated(pool, addrs, n, ucm_pool_local(pool), false);
}

/*
 * page_pool_put_netmem_bulk(): take the first frame's pool, evaluate the
 * locality rule once for it, gather its frames (16 at a time) and return
 * them together; frames of other pools are compacted to the front and
 * handled in the next round.
 */
int ucm_umem_put_bulk_from(struct ucm_umem *umem, const uint64_t *addrs,
			   uint32_t n, enum ucm_frame_loc from, bool release)
{
	uint64_t bulk[UCM_POOL_PUT_BULK];
	uint64_t rest[UCM_POOL_PUT_BULK * 4];
	const uint64_t *src = addrs;
	enum ucm_frame_loc to = release ? UCM_LOC_STACK : UCM_LOC_RING;
	bool rejected = false, late = false;
	uint64_t last = 0;

	/* Chunk the caller's array so the "foreign" scratch space is bounded. */
	while (n) {
		uint32_t chunk = min(n, (uint32_t)ARRAY_SIZE(rest));
		uint32_t left = 0, i;

		for (i = 0; i < chunk; i++) {
			if (!put_check(umem, NULL, src[i], from, to))
				rest[left++] = src[i];
			else
				rejected = true;
		}
		src += chunk;
		n -= chunk;
		/* Checks still to come (they count on a pool): one frame of
		 * ours stays out until they are done, so that nothing is
		 * freed under them (pool_internal.h, the destroy's fence). */
		if (n && left && !late) {
			last = rest[--left];
			late = true;
		}

		while (left) {
			struct ucm_pool *pool = ucm_umem_owner(umem, rest[0]);
			bool direct = !(umem->flags & UCM_UMEM_F_NO_DIRECT_BULK) &&
				      ucm_pool_local(pool);
			uint32_t nb = 0, foreign = 0;

			for (i = 0; i < left; i++) {
				if (ucm_umem_owner(umem, rest[i]) != pool) {
					rest[foreign++] = rest[i];
					continue;
				}
				bulk[nb++] = rest[i];
				if (nb == UCM_POOL_PUT_BULK) {
					if (pool_put_validated(pool, bulk, nb,
							       direct, release))
						rejected = true;
					nb = 0;
				}
			}
			if (nb && pool_put_validated(pool, bulk, nb, direct,
						     release))
				rejected = true;
			left = foreign;
		}
	}
	if (late) {
		struct ucm_pool *pool = ucm_umem_owner(umem, last);

		if (pool_put_validated(pool, &last, 1, !(umem->flags & UCM_UMEM_F_NO_DIRECT_BULK) &&
				       ucm_pool_local(pool), release))
			rejected = true;
	}
	return rejected ? ucm_err(-EINVAL) : 0;
}

int ucm_umem__put_bulk(struct ucm_umem *umem, const uint64_t *addrs,
		       uint32_t n)
{
	return ucm_umem_put_bulk_from(umem, addrs, n, UCM_LOC_ANY, false);
}

int ucm_umem__release_bulk(struct ucm_umem *umem, const uint64_t *addrs,
			   uint32_t n)
{
	return ucm_umem_put_bulk_from(umem, addrs, n, UCM_LOC_ANY, true);
}

/* ---- ownership, statistics ---------------------------------------------- */

int ucm_pool__set_owner(struct ucm_pool *pool)
{
	/* O2: the acquire pairs with O1 in the old owner's clear_owner(): the
	 * new owner's reads of the cache see the old owner's last writes (a
	 * joined old owner needs none: the join orders them). */
	__atomic_exchange_n(&pool->owner, ucm_self(), __ATOMIC_ACQ_REL);
	return 0;
}

void ucm_pool__clear_owner(struct ucm_pool *pool)
{
	/* O1: pairs with O2 (the next owner) and with ucm_umem__destroy()'s
	 * acquire, which then may drain the cache. */
	__atomic_store_n(&pool->owner, 0, __ATOMIC_RELEASE);
}

bool ucm_pool__is_owner(const struct ucm_pool *pool)
{
	return ucm_pool_local(pool);
}

uint32_t ucm_pool__index(const struct ucm_pool *pool)
{
	return pool->idx;
}

uint32_t ucm_pool__frames(const struct ucm_pool *pool)
{
	return pool->nframes;
}

/*
 * hold and release without the lock: release first, then hold, which
 * was at least as much when that release was counted (a frame is given
 * back after it was taken) and only grows since; read the other way, a
 * take and its return between the two loads would make inflight < 0.
 */
static void pool_counts(const struct ucm_pool *pool, uint64_t *hold, uint64_t *release)
{
	*release = __atomic_load_n(&pool->stack.release, __ATOMIC_ACQUIRE); /* S2 */
	*hold = READ_ONCE(pool->stack.hold);
}

int64_t ucm_pool__inflight(const struct ucm_pool *pool)
{
	uint64_t hold, release;

	pool_counts(pool, &hold, &release);
	/* Serial-number arithmetic, as page_pool_inflight(). */
	return (int64_t)(hold - release);
}

int ucm_pool__stats(const struct ucm_pool *pool, struct ucm_pool_stats *st,
		    size_t sz)
{
	const struct ucm_pool *p = pool;
	struct ucm_pool_stats o = {};

	if (!pool || !st || !sz)
		return ucm_err(-EINVAL);
	o.alloc_fast = READ_ONCE(p->owner_stats.fast);
	o.alloc_slow = READ_ONCE(p->owner_stats.slow);
	o.alloc_empty = READ_ONCE(p->owner_stats.empty);
	o.alloc_refill = READ_ONCE(p->owner_stats.refill);
	o.alloc_exhausted = READ_ONCE(p->owner_stats.exhausted);
	o.recycle_cached = READ_ONCE(p->owner_stats.cached);
	o.recycle_cache_full = READ_ONCE(p->owner_stats.cache_full);
	o.recycle_ring = READ_ONCE(p->remote_stats.ring);
	o.recycle_ring_full = READ_ONCE(p->remote_stats.ring_full);
	o.recycle_released = READ_ONCE(p->remote_stats.released);
	o.bad_addr = READ_ONCE(p->remote_stats.bad_addr);
	o.double_free = READ_ONCE(p->remote_stats.double_free);
	pool_counts(p, &o.hold, &o.release);
	o.inflight = (int64_t)(o.hold - o.release);
	ucm_stats_out(st, sz, &o, sizeof(o));
	return 0;
}

/* The old name (pool.h): a function of its own rather than an alias
 * symbol, so that the ABI's description keeps it under its own name. */
int ucm_pool__get_stats(const struct ucm_pool *pool, struct ucm_pool_stats *st,
			size_t sz)
{
	return ucm_pool__stats(pool, st, sz);
}
