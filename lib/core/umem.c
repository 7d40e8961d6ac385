// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The UMEM area, its carving into per-queue pools, the audit and the
 * shutdown that brings every frame home (page_pool_destroy()'s role).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "core/pool_internal.h"

#define UCM_UMEM_DEFAULT_FRAME_SIZE	4096
#define UCM_UMEM_DEFAULT_FRAMES		4096
/* Fewer frames than this cannot cover a fill ring and an RX ring of the
 * smallest sizes anyone uses (64 + 64), plus the cache. */
#define UCM_UMEM_MIN_FRAMES		256
#define UCM_UMEM_MAX_POOLS		256
/* How often ucm_umem__destroy() looks for late returns. */
#define UCM_DESTROY_RETRY_MS		10

int ucm_umem_parse_opts(const struct ucm_umem_opts *in, struct ucm_umem_opts *o)
{
	int err = UCM_OPTS_COPY(o, in, ucm_umem_opts);

	if (err)
		return err;
	if (!o->frame_size)
		o->frame_size = UCM_UMEM_DEFAULT_FRAME_SIZE;
	if (!o->npools)
		o->npools = 1;
	if (!o->frames_per_pool)
		o->frames_per_pool = UCM_UMEM_DEFAULT_FRAMES;
	if (!o->ring_size)
		o->ring_size = UCM_POOL_RING_DEFAULT;

	if (o->frame_size != 2048 && o->frame_size != 4096) {
		pr_warn("frame size %u: must be 2048 or 4096\n", o->frame_size);
		return -EINVAL;
	}
	if (o->npools > UCM_UMEM_MAX_POOLS) {
		pr_warn("%u pools: at most %u\n", o->npools, UCM_UMEM_MAX_POOLS);
		return -EINVAL;
	}
	if (!is_pow2(o->frames_per_pool) ||
	    o->frames_per_pool < UCM_UMEM_MIN_FRAMES) {
		pr_warn("%u frames per pool: must be a power of two >= %u\n",
			o->frames_per_pool, UCM_UMEM_MIN_FRAMES);
		return -EINVAL;
	}
	if (!is_pow2(o->ring_size) || o->ring_size < UCM_POOL_PUT_BULK ||
	    o->ring_size > UCM_POOL_RING_MAX) {
		pr_warn("recycle ring size %u: must be a power of two between %u and %u\n",
			o->ring_size, UCM_POOL_PUT_BULK, UCM_POOL_RING_MAX);
		return -EINVAL;
	}
	/* A 32-bit build's size_t holds less than the 64-bit limit. */
	if ((uint64_t)o->npools * o->frames_per_pool * o->frame_size >
	    (UCM_UMEM_MAX_SIZE < SIZE_MAX ? UCM_UMEM_MAX_SIZE : SIZE_MAX)) {
		pr_warn("UMEM of %u x %u x %u bytes is too large\n", o->npools,
			o->frames_per_pool, o->frame_size);
		return -EINVAL;
	}
	if (o->flags & ~(UCM_UMEM_F_NO_DIRECT_BULK | UCM_UMEM_F_NUMA_NODE)) {
		pr_warn("unknown umem flags 0x%x\n", o->flags);
		return -EINVAL;
	}
	if ((o->flags & UCM_UMEM_F_NUMA_NODE) && o->numa_node >= UCM_UMEM_NUMA_NODES) {
		pr_warn("NUMA node %u: at most %u\n", o->numa_node, UCM_UMEM_NUMA_NODES - 1);
		return -EINVAL;
	}
	return 0;
}

/*
 * The area's pages from @node, preferred: a node short of memory still
 * gives some elsewhere, as page_pool's allocation does. Set before any
 * page exists: they are made when the sockets register the area (which
 * pins it), or at first touch.
 */
static int umem_set_node(void *area, size_t size, uint32_t node)
{
	unsigned long mask[UCM_UMEM_NUMA_NODES / (8 * sizeof(unsigned long))] = {};
	const unsigned long bits = 8 * sizeof(unsigned long);

	mask[node / bits] |= 1UL << (node % bits);
	/* maxnode: the kernel reads one bit less than it is given. */
	if (syscall(SYS_mbind, area, size, MPOL_PREFERRED, mask, 8 * sizeof(mask) + 1, 0)) {
		int err = -errno;

		pr_warn("cannot place the UMEM on NUMA node %u: %s\n", node, strerror(-err));
		return err;
	}
	return 0;
}

static void pool_fini(struct ucm_pool *pool)
{
	if (pool->ring)
		ucm_ring__destroy(pool->ring);
	free(pool->stack.frames);
	pthread_mutex_destroy(&pool->stack.lock);
}

static int pool_init(struct ucm_umem *umem, struct ucm_pool *pool,
		     uint32_t idx, uint32_t ring_size)
{
	uint32_t i;

	memset(pool, 0, sizeof(*pool));
	pthread_mutex_init(&pool->stack.lock, NULL);
	pool->umem = umem;
	pool->idx = idx;
	pool->nframes = umem->frames_per_pool;
	pool->base = (uint64_t)idx << umem->pool_shift;
	pool->ring = ucm_ring__create(ring_size, UCM_RING_MP);
	if (!pool->ring) {
		int err = -errno;

		pool_fini(pool);
		return err;
	}
	pool->stack.frames = calloc(pool->nframes, sizeof(uint64_t));
	if (!pool->stack.frames) {
		pool_fini(pool);
		return ucm_oom("a pool's backing stack");
	}
	/* Every frame starts on the backing stack; pushed in reverse so the
	 * first allocations come out in address order. */
	for (i = 0; i < pool->nframes; i++)
		pool->stack.frames[i] = pool->base +
			(uint64_t)(pool->nframes - 1 - i) * umem->frame_size;
	pool->stack.top = pool->nframes;
	return 0;
}

struct ucm_umem *ucm_umem__create(const struct ucm_umem_opts *opts)
{
	struct ucm_umem_opts o;
	struct ucm_umem *umem;
	uint32_t i;
	int err;

	err = ucm_umem_parse_opts(opts, &o);
	if (err)
		return ucm_err_ptr(err);

	umem = calloc(1, sizeof(*umem));
	if (!umem)
		return ucm_err_ptr(ucm_oom("the UMEM"));
	umem->frame_size = o.frame_size;
	umem->frame_shift = ilog2_u64(o.frame_size);
	umem->npools = o.npools;
	umem->frames_per_pool = o.frames_per_pool;
	umem->pool_shift = umem->frame_shift + ilog2_u64(o.frames_per_pool);
	umem->flags = o.flags;
	umem->size = (size_t)o.npools * o.frames_per_pool * o.frame_size;

	/* Page-aligned and zeroed, as AF_XDP wants its UMEM. */
	umem->area = mmap(NULL, umem->size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (umem->area == MAP_FAILED) {
		err = -errno;
		pr_warn("cannot map a UMEM of %zu bytes: %s\n", umem->size,
			strerror(-err));
		goto out_umem;
	}
	if (o.flags & UCM_UMEM_F_NUMA_NODE) {
		err = umem_set_node(umem->area, umem->size, o.numa_node);
		if (err)
			goto out_area;
	}

#ifdef UCM_DEBUG
	/* calloc: every tag starts as UCM_LOC_STACK (0). */
	umem->tags = calloc((size_t)o.npools * o.frames_per_pool, 1);
	if (!umem->tags) {
		err = ucm_oom("the UMEM's frame places");
		goto out_area;
	}
#endif
	umem->pools = aligned_alloc(UCM_CACHELINE,
				    sizeof(struct ucm_pool) * o.npools);
	if (!umem->pools) {
		err = ucm_oom("the UMEM's pools");
		goto out_tags;
	}
	for (i = 0; i < o.npools; i++) {
		err = pool_init(umem, &umem->pools[i], i, o.ring_size);
		if (err)
			goto out_pools;
	}
	return umem;

out_pools:
	while (i--)
		pool_fini(&umem->pools[i]);
	free(umem->pools);
out_tags:
	free(umem->tags);
out_area:
	munmap(umem->area, umem->size);
out_umem:
	free(umem);
	return ucm_err_ptr(err);
}

/* Move everything parked in the cache and the recycle ring back to the
 * backing stack. Caller: the owner, or destroy once no owner is left. */
static void pool_scrub(struct ucm_pool *pool)
{
	uint64_t buf[UCM_POOL_STACK_BULK];
	uint32_t n;

	if (pool->alloc.count) {
		ucm_frame_move_bulk(pool->umem, pool->alloc.cache,
				    pool->alloc.count, UCM_LOC_CACHE,
				    UCM_LOC_STACK);
		n = pool->alloc.count;
		pool->alloc.count = 0;
		/* Through a copy: the push may log, the cache is ours. */
		for (uint32_t off = 0; off < n; off += UCM_POOL_STACK_BULK) {
			uint32_t k = min(n - off, (uint32_t)UCM_POOL_STACK_BULK);

			memcpy(buf, &pool->alloc.cache[off], k * sizeof(*buf));
			ucm_pool_stack_push(pool, buf, k, NULL);
		}
	}
	while ((n = ucm_ring__consume(pool->ring, buf, ARRAY_SIZE(buf)))) {
		ucm_frame_move_bulk(pool->umem, buf, n, UCM_LOC_RING,
				    UCM_LOC_STACK);
		ucm_pool_stack_push(pool, buf, n, NULL);
	}
}


/* Heapsort of @n addresses in place: no memory and no system call
 * (glibc's qsort() asks sysinfo(), which ucpumapd's seccomp list refuses
 * by the time it stops). */
static void addr_sift(uint64_t *f, uint32_t i, uint32_t n)
{
	uint32_t c;
	uint64_t t;

	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && f[c + 1] > f[c])
			c++;
		if (f[i] >= f[c])
			return;
		t = f[i];
		f[i] = f[c];
		f[c] = t;
	}
}

static void addr_sort(uint64_t *f, uint32_t n)
{
	uint64_t t;

	for (uint32_t i = n / 2; i--;)
		addr_sift(f, i, n);
	while (n > 1) {
		t = f[0];
		f[0] = f[--n];
		f[n] = t;
		addr_sift(f, 0, n);
	}
}

/* How many frames @pool's backing stack holds more than once (no owner,
 * no returner: the destroy's). Sorted in place, the stack's order being
 * no one's once the pool stops: no memory needed, so no want of it
 * either (an unwinding create under memory pressure must still free). */
static int stack_dups(struct ucm_pool *pool)
{
	uint64_t *f = pool->stack.frames;
	int dups = 0;

	addr_sort(f, pool->stack.top);
	for (uint32_t i = 1; i < pool->stack.top; i++)
		dups += f[i] == f[i - 1];
	return dups;
}

int ucm_umem__destroy(struct ucm_umem *umem, unsigned int timeout_ms)
{
	uint64_t start = ucm_now_ns() / 1000000;
	bool warned = false;
	int64_t inflight;
	uint32_t i;

	if (!umem)
		return 0;

	/*
	 * An owner thread touches its cache without any lock: it must be done
	 * (joined, or having cleared its ownership as its last act) before we
	 * drain that cache. The acquire pairs with the release in
	 * ucm_pool__clear_owner(). Then page_pool_disable_direct_recycling():
	 * from here every return goes through a ring, drained below.
	 */
	for (i = 0; i < umem->npools; i++) {
		uint64_t owner = __atomic_load_n(&umem->pools[i].owner,
						 __ATOMIC_ACQUIRE);

		if (owner && owner != ucm_self()) {
			pr_warn("pool %u still has an owner thread: it must call ucm_pool__clear_owner() (or be joined after doing so) before the UMEM is destroyed\n",
				i);
			return ucm_err(-EBUSY);
		}
	}
	for (i = 0; i < umem->npools; i++)
		ucm_pool__clear_owner(&umem->pools[i]);

	for (;;) {
		inflight = 0;
		for (i = 0; i < umem->npools; i++) {
			pool_scrub(&umem->pools[i]);
			inflight += ucm_pool__inflight(&umem->pools[i]);
		}
		if (inflight <= 0)
			break;
		if (ucm_now_ns() / 1000000 - start >= timeout_ms) {
			for (i = 0; i < umem->npools; i++) {
				int64_t n = ucm_pool__inflight(&umem->pools[i]);

				if (n)
					pr_warn("stalled pool shutdown: pool %u, %lld frames inflight after %u ms\n",
						i, (long long)n, timeout_ms);
			}
			return ucm_err(-EBUSY);
		}
		if (!warned) {
			pr_info("waiting for %lld frames in flight\n",
				(long long)inflight);
			warned = true;
		}
		nanosleep(&(struct timespec){ .tv_nsec =
				UCM_DESTROY_RETRY_MS * 1000000 }, NULL);
	}
	/* Returners touch a pool after their frames are visible only under
	 * its stack lock: once we have held it, none is left inside. */
	for (i = 0; i < umem->npools; i++) {
		pthread_mutex_lock(&umem->pools[i].stack.lock);
		pthread_mutex_unlock(&umem->pools[i].stack.lock);
	}
	/* A frame given back twice (a release build does not check each
	 * return) counts home twice: none in flight while one still is. */
	for (i = 0; i < umem->npools; i++) {
		int dups = stack_dups(&umem->pools[i]);

		if (dups) {
			pr_warn("pool %u: %d frames were given back twice, so as many others are not home (held still, or refused when the stack overflowed): the UMEM stays (a leak, not a use after free)\n",
				i, dups);
			return ucm_err(-EUCLEAN);
		}
	}

	for (i = 0; i < umem->npools; i++)
		pool_fini(&umem->pools[i]);
	free(umem->pools);
	free(umem->tags);
	munmap(umem->area, umem->size);
	free(umem);
	return 0;
}

void *ucm_umem__area(struct ucm_umem *umem)
{
	return umem->area;
}

size_t ucm_umem__size(const struct ucm_umem *umem)
{
	return umem->size;
}

uint32_t ucm_umem__frame_size(const struct ucm_umem *umem)
{
	return umem->frame_size;
}

uint32_t ucm_umem__npools(const struct ucm_umem *umem)
{
	return umem->npools;
}

uint32_t ucm_umem__flags(const struct ucm_umem *umem)
{
	return umem->flags;
}

struct ucm_pool *ucm_umem__pool(struct ucm_umem *umem, uint32_t idx)
{
	if (idx >= umem->npools)
		return ucm_err_ptr(-EINVAL);
	return &umem->pools[idx];
}

/* ---- audit --------------------------------------------------------------- */

/* Mark @addr seen; false if it already was (a frame in two places). */
static bool audit_mark(const struct ucm_pool *pool, uint8_t *seen,
		       uint64_t addr)
{
	uint64_t i = (addr - pool->base) >> pool->umem->frame_shift;

	if (addr < pool->base || i >= pool->nframes ||
	    (addr & (pool->umem->frame_size - 1))) {
		pr_warn("audit: pool %u holds foreign handle 0x%llx\n",
			pool->idx, (unsigned long long)addr);
		return false;
	}
	if (seen[i])
		return false;
	seen[i] = 1;
	return true;
}

static int audit_tier(struct ucm_pool *pool, uint8_t *seen,
		      const char *tier, enum ucm_frame_loc loc, uint64_t addr)
{
	if (!audit_mark(pool, seen, addr)) {
		pr_warn("audit: pool %u: frame 0x%llx is in two places (again in %s)\n",
			pool->idx, (unsigned long long)addr, tier);
		return -EUCLEAN;
	}
#ifdef UCM_DEBUG
	if (ucm_frame_loc(pool->umem, addr) != loc) {
		pr_warn("audit: pool %u: frame 0x%llx is in the %s but tagged %s\n",
			pool->idx, (unsigned long long)addr, tier,
			ucm_frame_loc_str(ucm_frame_loc(pool->umem, addr)));
		return -EUCLEAN;
	}
#endif
	return 0;
}

/* Into the library's own @a, every byte of it written. */
static int pool_audit(struct ucm_pool *pool, struct ucm_pool_audit *a)
{
	struct ucm_ring *r = pool->ring;
	uint32_t i, ring_n, parked;
	uint8_t *seen;
	int err = 0;

	memset(a, 0, sizeof(*a));
	a->frames = pool->nframes;
	seen = calloc(pool->nframes, 1);
	if (!seen)
		return ucm_err(ucm_oom("the audit"));

	pthread_mutex_lock(&pool->stack.lock);
	for (i = 0; i < pool->stack.top && !err; i++)
		err = audit_tier(pool, seen, "backing stack", UCM_LOC_STACK,
				 pool->stack.frames[i]);
	for (i = 0; i < pool->alloc.count && !err; i++)
		err = audit_tier(pool, seen, "alloc cache", UCM_LOC_CACHE,
				 pool->alloc.cache[i]);
	ring_n = ucm_ring__count(r);
	for (i = 0; i < ring_n && !err; i++)
		err = audit_tier(pool, seen, "recycle ring", UCM_LOC_RING,
				 r->slots[(r->cons.tail + i) & r->mask]);

	/* No check of hold - release against the stack's top: both move
	 * together under the lock, always equal. A frame lost and one the
	 * application holds are alike to the counters: only the tags
	 * below (debug builds) or the destroy's wait tell them apart. */
	parked = pool->stack.top + pool->alloc.count + ring_n;

#ifdef UCM_DEBUG
	a->tagged = true;
	for (i = 0; i < pool->nframes; i++) {
		uint64_t addr = pool->base + ((uint64_t)i << pool->umem->frame_shift);
		enum ucm_frame_loc loc = ucm_frame_loc(pool->umem, addr);

		if (loc == UCM_LOC_CHAIN)
			a->chain++;
		else
			a->loc[loc < UCM_LOC__MAX ? loc : UCM_LOC_APP]++;
		/* A frame tagged as parked in a tier must have been found
		 * in it above. */
		if (!err && !seen[i] && (loc == UCM_LOC_STACK ||
					 loc == UCM_LOC_CACHE ||
					 loc == UCM_LOC_RING)) {
			pr_warn("audit: pool %u: frame 0x%llx tagged %s is not there\n",
				pool->idx, (unsigned long long)addr,
				ucm_frame_loc_str(loc));
			err = -EUCLEAN;
		}
	}
#else
	a->loc[UCM_LOC_STACK] = pool->stack.top;
	a->loc[UCM_LOC_CACHE] = pool->alloc.count;
	a->loc[UCM_LOC_RING] = ring_n;
	a->loc[UCM_LOC_APP] = parked <= pool->nframes ? pool->nframes - parked : 0;
#endif
	if (!err && parked > pool->nframes) {
		pr_warn("audit: pool %u: %u frames parked, only %u exist\n",
			pool->idx, parked, pool->nframes);
		err = -EUCLEAN;
	}
	pthread_mutex_unlock(&pool->stack.lock);
	free(seen);
	return err;
}

int ucm_pool__audit(struct ucm_pool *pool, struct ucm_pool_audit *a, size_t sz)
{
	struct ucm_pool_audit o;
	int err;

	if (!pool || (a && !sz))
		return ucm_err(-EINVAL);
	err = pool_audit(pool, &o);
	if (a)
		ucm_stats_out(a, sz, &o, sizeof(o));
	return ucm_err(err);
}

/* The frames of @pool in no tier into @addrs (pool->nframes of room):
 * their count, or -errno. */
static int pool_missing(struct ucm_pool *pool, uint8_t *seen, uint64_t *addrs)
{
	uint32_t i, ring_n, missing = 0;

	pool_scrub(pool);	/* cache and ring to the stack: one tier left */
	pthread_mutex_lock(&pool->stack.lock);
	for (i = 0; i < pool->stack.top; i++)
		audit_mark(pool, seen, pool->stack.frames[i]);
	ring_n = ucm_ring__count(pool->ring);
	pthread_mutex_unlock(&pool->stack.lock);
	if (ring_n)	/* returns still arriving: the caller asks again */
		return -EBUSY;
	for (i = 0; i < pool->nframes; i++)
		if (!seen[i])
			addrs[missing++] = pool->base + ((uint64_t)i << pool->umem->frame_shift);
	return (int)missing;
}

int ucm_pools_reclaim(struct ucm_pool *const *pools, uint32_t npools, uint64_t expect,
		      enum ucm_frame_loc from, bool quiet)
{
	uint64_t **addrs = calloc(npools, sizeof(*addrs)), total = 0;
	uint32_t *missing = calloc(npools, sizeof(*missing)), i, k, n;
	uint8_t *seen = NULL;
	int err = 0, ret;

	if (!addrs || !missing) {
		err = ucm_oom("the reclaim");
		goto out;
	}
	for (i = 0; i < npools && !err; i++) {
		struct ucm_pool *pool = pools[i];

		free(seen);
		seen = calloc(pool->nframes, 1);
		addrs[i] = calloc(pool->nframes, sizeof(**addrs));
		if (!seen || !addrs[i]) {
			err = ucm_oom("the reclaim");
			break;
		}
		ret = pool_missing(pool, seen, addrs[i]);
		if (ret == -EBUSY && !quiet)
			pr_warn("pool %u: returns still arriving while reclaiming\n", pool->idx);
		if (ret < 0)
			err = ret;
		else
			total += missing[i] = (uint32_t)ret;
	}
	if (err)
		goto out;
	if (total != expect) {
		err = total > expect ? -EBUSY : -EUCLEAN;
		if (err == -EBUSY && quiet)
			goto out;
		for (i = 0; i < npools; i++)
			pr_warn("pool %u: %u frames are off the pool\n", pools[i]->idx, missing[i]);
		pr_warn("%llu frames are off the pools but the kernel held %llu: %lld %s\n",
			(unsigned long long)total, (unsigned long long)expect,
			(long long)(total - expect), err == -EBUSY ?
			"frames are still out elsewhere (an application's thread)" :
			"frames more came home than went out (one counted twice)");
		goto out;
	}
	for (i = 0; i < npools; i++)
		for (k = 0; k < missing[i]; k += n) {
			n = min(missing[i] - k, (uint32_t)UCM_POOL_STACK_BULK);
			ucm_frame_move_bulk(pools[i]->umem, addrs[i] + k, n, from, UCM_LOC_STACK);
			ucm_pool_stack_push(pools[i], addrs[i] + k, n, NULL);
		}
out:
	for (i = 0; addrs && i < npools; i++)
		free(addrs[i]);
	free(addrs);
	free(missing);
	free(seen);
	return err;
}

int ucm_umem__audit(struct ucm_umem *umem, struct ucm_pool_audit *sum,
		    size_t sz)
{
	struct ucm_pool_audit a, t;
	int err = 0, ret;
	uint32_t i, l;

	if (!umem || (sum && !sz))
		return ucm_err(-EINVAL);
	memset(&t, 0, sizeof(t));
	for (i = 0; i < umem->npools; i++) {
		ret = pool_audit(&umem->pools[i], &a);
		if (ret && !err)
			err = ret;
		t.frames += a.frames;
		t.tagged = a.tagged;
		for (l = 0; l < UCM_LOC__MAX; l++)
			t.loc[l] += a.loc[l];
		t.chain += a.chain;
	}
	if (sum)
		ucm_stats_out(sum, sz, &t, sizeof(t));
	return ucm_err(err);
}
