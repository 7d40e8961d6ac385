/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * UMEM and frame pools: the userspace page_pool.
 *
 * A ucm_umem is one contiguous, page-aligned memory area cut into frames of
 * 2048 or 4096 bytes (later registered as an AF_XDP UMEM). It is carved into
 * npools equal shares; share i belongs to pool i (one per RX queue). Frames
 * never migrate between pools, so the owner pool of a frame follows from its
 * address: addr >> pool_shift. Handles are byte offsets into the area, as in
 * AF_XDP descriptors.
 *
 * Each pool has three tiers, after page_pool:
 *   alloc cache  - LIFO of UCM_POOL_CACHE_SIZE handles, touched only by the
 *                  pool's owner thread, no atomics (pool->alloc);
 *   recycle ring - MPSC ucm_ring for frames returned by other threads
 *                  (pool->ring); consumed by the owner when its cache runs dry;
 *   backing stack - the pool's free frames, under a mutex, taken and given
 *                  back in bulks: our page allocator. Every frame starts here.
 *
 * Locality rule (page_pool_napi_local()): a return goes straight into the
 * cache only when the calling thread is the pool's owner. Everyone else
 * goes through the recycle ring; a full ring spills to the backing stack.
 *
 * Threads: ucm_pool__set_owner() names the thread that allocates (the RX
 * thread, our NAPI). Allocation is owner-only and never blocks. Returns are
 * allowed from any thread. Statistics may be read from any thread at any
 * time; they are per-field snapshots, each monotonic (recycle_ring counts
 * the slots a bulk reserved, before its frames become visible). The audit
 * is not: it reads the owner's cache, so run it only while no thread
 * moves frames. The owner changes hands only in order: the old owner's
 * ucm_pool__clear_owner() (or its thread joined) before the new one's
 * ucm_pool__set_owner(); two threads allocating at once corrupt the
 * cache.
 *
 * Errors: functions return 0 or a negative errno (also stored in errno);
 * pointer functions return NULL and set errno.
 */
#ifndef UCPUMAP_POOL_H
#define UCPUMAP_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include "ucpumap/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The NAPI budget is 64 frames: after one RX batch at most 64 need
 * replacing, so the cache is refilled 64 at a time; the other 64 slots
 * take direct returns without spilling (page_pool's PP_ALLOC_CACHE_SIZE and
 * PP_ALLOC_CACHE_REFILL).
 */
#define UCM_POOL_CACHE_SIZE	128
#define UCM_POOL_CACHE_REFILL	64
/* Bulk size of backing-stack transfers: one lock per 64 frames. */
#define UCM_POOL_STACK_BULK	64
/* Returns are grouped per pool in bulks of 16 (XDP_BULK_QUEUE_SIZE). */
#define UCM_POOL_PUT_BULK	16
/* Recycle ring size: default and sanity cap on memory pinned in the ring
 * (page_pool: 1024, > 32768 is -E2BIG). */
#define UCM_POOL_RING_DEFAULT	1024
#define UCM_POOL_RING_MAX	32768

struct ucm_umem;
struct ucm_pool;

enum ucm_umem_flags {
	/* Bulk returns never use the owner's cache, even from the owner
	 * (the "before" of page_pool direct bulk recycling). */
	UCM_UMEM_F_NO_DIRECT_BULK = 1 << 0,
	/* The area's pages come from ucm_umem_opts.numa_node, preferred
	 * (page_pool's nid: the device's node, so that its DMA stays
	 * local); without, from the node of the thread that first touches
	 * them, the one that registers the sockets. */
	UCM_UMEM_F_NUMA_NODE = 1 << 1,
};
/* NUMA nodes ucm_umem_opts.numa_node may name: the kernel's most. */
#define UCM_UMEM_NUMA_NODES	1024

/* Extensible options, libbpf style: zero-initialise, set .sz, or use
 * UCM_OPTS(). Zero fields take their defaults. */
struct ucm_umem_opts {
	size_t sz;
	uint32_t frame_size;		/* 2048 or 4096; default 4096 */
	uint32_t npools;		/* default 1; at most 256 */
	uint32_t frames_per_pool;	/* power of two >= 256; default 4096 */
	uint32_t ring_size;		/* recycle ring, power of two 16..32768; default 1024 */
	uint32_t flags;			/* enum ucm_umem_flags */
	uint32_t numa_node;		/* with UCM_UMEM_F_NUMA_NODE */
	size_t :0;
};
#define ucm_umem_opts__last_field numa_node

/* Where a frame is. Debug builds keep one tag per frame and check every
 * move; the audit counts them. The pool names its own places and the one
 * out of it; the layers that hold frames above it number theirs from
 * UCM_LOC_USER in their own headers (cpumap.h, xsk.h). */
enum ucm_frame_loc {
	UCM_LOC_STACK,		/* the pool's backing stack */
	UCM_LOC_CACHE,		/* the owner's alloc cache */
	UCM_LOC_RING,		/* the pool's recycle ring */
	UCM_LOC_APP,		/* allocated: out of the pool, held by its user */
	UCM_LOC_USER,		/* the first place a user of the pool defines */
	/* The places an audit counts (struct ucm_pool_audit: its size is
	 * ABI): the pool's four and four for the layers above. */
	UCM_LOC__MAX = 8,
};
/* A later frame of a packet of several (AF_XDP multi-buffer): it goes
 * wherever the packet's first frame goes, listed in that frame's headroom
 * (lib/engine/chain.h), and comes home with it. Past the places the
 * audit's @loc counts (its size is ABI): counted in its @chain. */
#define UCM_LOC_CHAIN		UCM_LOC__MAX

UCM_API const char *ucm_frame_loc_str(enum ucm_frame_loc loc);

/**
 * struct ucm_pool_stats - page_pool's statistics, same names
 * @alloc_fast: allocations served from the alloc cache
 * @alloc_slow: allocations that had to take frames from the backing stack
 * @alloc_empty: times the recycle ring was empty when the cache needed a refill
 * @alloc_refill: allocations served right after a refill from the recycle ring
 * @alloc_exhausted: frames asked for while the pool had none free
 * @recycle_cached: returns put straight into the alloc cache (owner only)
 * @recycle_cache_full: direct returns that found the cache full
 * @recycle_ring: returns put into the recycle ring
 * @recycle_ring_full: returns that found the ring full and went to the stack
 * @recycle_released: returns sent straight to the backing stack (recycling off)
 * @hold: frames taken from the backing stack, ever
 * @release: frames given back to the backing stack, ever
 * @inflight: hold - release: frames outside the backing stack
 * @bad_addr: returns rejected: outside the UMEM, not frame-aligned, or
 *            another pool's frame given to this pool
 * @double_free: returns of a frame that was already free. Debug builds
 *               catch each one as it happens. Release builds notice only
 *               when the backing stack would overflow, after the duplicate
 *               went in: by then an innocent frame of that bulk is the one
 *               refused (lost), and the audit reports the duplicate.
 */
struct ucm_pool_stats {
	uint64_t alloc_fast;
	uint64_t alloc_slow;
	uint64_t alloc_empty;
	uint64_t alloc_refill;
	uint64_t alloc_exhausted;
	uint64_t recycle_cached;
	uint64_t recycle_cache_full;
	uint64_t recycle_ring;
	uint64_t recycle_ring_full;
	uint64_t recycle_released;
	uint64_t hold;
	uint64_t release;
	int64_t inflight;
	uint64_t bad_addr;
	uint64_t double_free;
};

/**
 * struct ucm_pool_audit - where every frame of a pool is
 * @frames: frames in the pool's share of the UMEM
 * @loc: frames per location; debug builds count the tags, release builds
 *       fill in STACK, CACHE and RING from the tiers and put the rest in APP
 * @tagged: true when @loc comes from per-frame tags (debug build)
 * @chain: frames in UCM_LOC_CHAIN (debug builds; release builds count
 *         them in APP)
 */
struct ucm_pool_audit {
	uint32_t frames;
	uint32_t loc[UCM_LOC__MAX];
	bool tagged;
	uint32_t chain;
};

/**
 * ucm_umem__create() - allocate a UMEM area and its pools
 * Return: the umem, or NULL with errno: EINVAL for a bad option (the log
 * says which), ENOMEM.
 */
UCM_API struct ucm_umem *ucm_umem__create(const struct ucm_umem_opts *opts);

/**
 * ucm_umem__destroy() - bring every frame home and free the UMEM
 * @timeout_ms: how long to wait for frames still out
 *
 * Call it once every owner thread is done: it must have called
 * ucm_pool__clear_owner() as its last act (the calling thread may be an
 * owner itself); otherwise it returns -EBUSY and touches nothing. Other
 * threads may still be returning frames: they are waited for. It disables
 * direct recycling,
 * drains caches and recycle rings into the backing stacks, and frees
 * everything only when no frame is in flight. While frames are out it
 * retries (late returns through the rings are taken in) until @timeout_ms
 * passes, then logs "stalled pool shutdown" with the count and returns
 * -EBUSY *without freeing anything*: memory is never freed under a live
 * frame. Call it again once the frames are back. A frame given back twice
 * (which only the debug build catches at the return) leaves another one
 * out while the counts say none: it returns -EUCLEAN, freeing nothing.
 *
 * Either failure leaves every pool without an owner and direct recycling
 * off: a thread that goes on allocating calls ucm_pool__set_owner() again.
 *
 * Return: 0, or -EBUSY or -EUCLEAN with the umem intact.
 */
UCM_API int ucm_umem__destroy(struct ucm_umem *umem, unsigned int timeout_ms);

/* The frames' memory: writable, so the umem is taken non-const. */
UCM_API void *ucm_umem__area(struct ucm_umem *umem);
UCM_API size_t ucm_umem__size(const struct ucm_umem *umem);
UCM_API uint32_t ucm_umem__frame_size(const struct ucm_umem *umem);
UCM_API uint32_t ucm_umem__npools(const struct ucm_umem *umem);
UCM_API struct ucm_pool *ucm_umem__pool(struct ucm_umem *umem, uint32_t idx);
UCM_API uint32_t ucm_umem__flags(const struct ucm_umem *umem);

/*
 * A packet descriptor, as the cpumap's queues and the TX channels carry
 * packets: its address (frame handle + offset, as in an AF_XDP descriptor)
 * in the low 48 bits, its length in the top 16. UMEM handles stay below
 * 2^40 (ucm_umem_opts caps the size).
 */
#define UCM_DESC_LEN_SHIFT	48
#define UCM_DESC_ADDR_MASK	((1ull << UCM_DESC_LEN_SHIFT) - 1)

/* A descriptor's chain bit: above every UMEM address (at most 2^40),
 * below UCM_TXQ_DESC_CSUM and the length. The descriptor is the first
 * frame of a packet of several, its length the whole packet's; only
 * ucm_xsk_queue__rx() makes one, on a socket bound with UCM_XSK_F_SG. */
#define UCM_DESC_CHAIN		(1ull << 45)

static inline uint64_t ucm_desc_make(uint64_t addr, uint32_t len)
{
	return (uint64_t)len << UCM_DESC_LEN_SHIFT | addr;
}

static inline uint64_t ucm_desc_addr(uint64_t desc)
{
	return desc & UCM_DESC_ADDR_MASK;
}

static inline uint32_t ucm_desc_len(uint64_t desc)
{
	return desc >> UCM_DESC_LEN_SHIFT;
}

/* Frame pointer from a frame handle; no checks (the hot path). */
static inline void *ucm_umem__frame(void *area, uint64_t addr)
{
	return (char *)area + addr;
}

/**
 * ucm_umem__put_bulk() - return frames to their owner pools
 *
 * Frames may belong to any pools. They are grouped per pool, 16 at a time;
 * the locality check runs once per group: the owner's returns go into its
 * cache (unless UCM_UMEM_F_NO_DIRECT_BULK), other threads' into the recycle
 * ring with one reservation per group, and what the ring cannot take goes
 * to the backing stack. Bad handles are counted in bad_addr and skipped.
 *
 * Return: 0, or -EINVAL if any handle was rejected.
 */
UCM_API int ucm_umem__put_bulk(struct ucm_umem *umem, const uint64_t *addrs,
			       uint32_t n);

/**
 * ucm_umem__release_bulk() - give frames straight back to their backing
 * stacks, skipping cache and ring: recycling switched off (counted as
 * recycle_released). Return: as ucm_umem__put_bulk().
 */
UCM_API int ucm_umem__release_bulk(struct ucm_umem *umem,
				   const uint64_t *addrs, uint32_t n);

/**
 * ucm_umem__audit() - account for every frame of every pool
 * @sum: if not NULL, the per-location totals over all pools
 * @sz: sizeof(*@sum) as the caller was built (an older, smaller struct
 *      gets its part; bytes past ours are zeroed); ignored when @sum is NULL
 *
 * Exact only while no thread moves frames. Return: 0 when the books
 * balance; -EUCLEAN (and a log line per problem) when they do not;
 * -EINVAL for @sum with @sz 0.
 */
UCM_API int ucm_umem__audit(struct ucm_umem *umem, struct ucm_pool_audit *sum,
			    size_t sz);

/**
 * ucm_pool__set_owner() - make the calling thread the pool's owner
 *
 * Only the owner may allocate, and only its returns may use the cache.
 * Call it from the thread that runs the pool's RX loop, before it
 * allocates. Return: 0.
 */
UCM_API int ucm_pool__set_owner(struct ucm_pool *pool);

/* No owner: direct recycling off until the next ucm_pool__set_owner().
 * An owner thread calls it as its last act before it stops: the release
 * pairs with ucm_umem__destroy()'s check, which then may drain the cache. */
UCM_API void ucm_pool__clear_owner(struct ucm_pool *pool);
UCM_API bool ucm_pool__is_owner(const struct ucm_pool *pool);

/**
 * ucm_pool__alloc_bulk() - allocate up to @n frames
 *
 * Owner only. Cache first, then a refill of up to 64 from the recycle ring,
 * then bulks of 64 from the backing stack. Never blocks.
 *
 * Return: the number allocated (0 when the pool is exhausted), or -EPERM
 * when the caller is not the owner.
 */
UCM_API int ucm_pool__alloc_bulk(struct ucm_pool *pool, uint64_t *addrs,
				 uint32_t n);

/* One frame. Return: 0, -ENOBUFS when exhausted, -EPERM when not owner. */
UCM_API int ucm_pool__alloc(struct ucm_pool *pool, uint64_t *addr);

/**
 * ucm_pool__put() - return one frame of this pool
 *
 * Return: 0; -EINVAL for a frame outside this pool's share, unaligned or
 * outside the UMEM; -EALREADY when the frame is already free (detected in
 * debug builds, or when the backing stack would overflow).
 */
UCM_API int ucm_pool__put(struct ucm_pool *pool, uint64_t addr);

UCM_API uint32_t ucm_pool__index(const struct ucm_pool *pool);
UCM_API uint32_t ucm_pool__frames(const struct ucm_pool *pool);
/* page_pool_get_stats(): into the caller's @st of @sz bytes (sizeof(*@st)
 * as the caller was built: an older, smaller struct gets its part; bytes
 * past ours are zeroed). Return: 0, or -EINVAL (@st NULL or @sz 0). */
UCM_API int ucm_pool__stats(const struct ucm_pool *pool,
			    struct ucm_pool_stats *st, size_t sz);
/* The old name of ucm_pool__stats() (0.2.0): the same function, kept for
 * the programs that call it. */
UCM_API int ucm_pool__get_stats(const struct ucm_pool *pool,
				struct ucm_pool_stats *st, size_t sz);
UCM_API int64_t ucm_pool__inflight(const struct ucm_pool *pool);

/**
 * ucm_pool__audit() - account for every frame of one pool
 *
 * Debug builds walk the per-frame tags and check each tier against them
 * (and the backing stack for duplicates); release builds check that no
 * frame is parked twice, outside its pool, or beyond the pool's count, and
 * count the rest as the application's (a frame lost is counted so too).
 * Not for the data path. Exact only while no thread moves frames.
 * @a: if not NULL, where the frames are
 * @sz: sizeof(*@a) as the caller was built (an older, smaller struct gets
 *      its part; bytes past ours are zeroed); ignored when @a is NULL
 *
 * Return: 0, or -EUCLEAN with a log line per discrepancy; -EINVAL for @a
 * with @sz 0.
 */
UCM_API int ucm_pool__audit(struct ucm_pool *pool, struct ucm_pool_audit *a,
			    size_t sz);

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_POOL_H */
