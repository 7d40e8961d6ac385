/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The inside of ucm_umem and ucm_pool, shared by umem.c and pool.c with
 * the engine (cpumap, txq) and xsk/. See include/ucpumap/pool.h for the
 * model.
 */
#ifndef UCM_POOL_INTERNAL_H
#define UCM_POOL_INTERNAL_H

#include <pthread.h>

#include "core/internal.h"
#include "core/umem_desc.h"
#include "ucpumap/pool.h"
#include "ucpumap/ring.h"

/*
 * Concurrency contract of struct ucm_pool
 *  - alloc.*, alloc_stats, owner_stats: written only by the owner thread
 *    (the thread whose token is in ->owner), without atomics. Counters are
 *    published with WRITE_ONCE so readers never see torn values.
 *  - ring: MPSC; any thread produces, only the owner consumes (refill) -
 *    or ucm_umem__destroy() once no owner is left.
 *  - remote_stats: any thread, __atomic_fetch_add relaxed, once per bulk.
 *  - stack.*, hold, release: under stack.lock. hold and release are also
 *    read without the lock for statistics: release (S1/S2, pool.c) before
 *    hold, so that inflight is never seen below 0.
 *  - A returning thread touches the pool only before its frames become
 *    visible (ring publication) or under stack.lock; ucm_umem__destroy()
 *    takes and releases every stack lock once nothing is in flight, so a
 *    late returner has left before memory is freed.
 *  - owner: clear_owner()'s release (O1) pairs with the next
 *    ucm_pool__set_owner()'s acquire (O2, an exchange) and with
 *    ucm_umem__destroy()'s acquire: the cache passes whole. Read by every
 *    returning thread (relaxed: a thread only ever compares it with its own
 *    id, which no other thread ever has).
 */
struct ucm_pool {
	/* Owner-only line(s): the lockless LIFO cache (page_pool's pool->alloc). */
	struct {
		uint32_t count;
		uint64_t cache[UCM_POOL_CACHE_SIZE];
	} alloc __cacheline_aligned;

	struct {
		uint64_t fast, slow, empty, refill, exhausted;
		uint64_t cached, cache_full;
	} owner_stats;

	/* Read-mostly after creation. */
	uint64_t owner __cacheline_aligned;	/* ucm_self() of the owner, 0: none */
	struct ucm_umem *umem;
	struct ucm_ring *ring;
	uint64_t base;		/* first frame handle of this pool */
	uint32_t nframes;
	uint32_t idx;

	/* Returns from any thread, one atomic add per bulk. */
	struct {
		uint64_t ring, ring_full, released;
		uint64_t bad_addr, double_free;
	} remote_stats __cacheline_aligned;

	/* The backing stack: our page allocator. */
	struct {
		pthread_mutex_t lock;
		uint32_t top;
		uint64_t hold;		/* frames taken out, ever */
		uint64_t release;	/* frames given back, ever */
		uint64_t *frames;	/* nframes slots */
	} stack __cacheline_aligned;
};

/*
 * Concurrency contract of struct ucm_umem: everything is read-only after
 * ucm_umem__create() except the pools (see above) and, in debug builds,
 * tags[], which are moved with a CAS per frame so that a frame claimed by
 * two threads at once is caught.
 */
struct ucm_umem {
	void *area;
	size_t size;
	uint32_t frame_size;
	uint32_t frame_shift;
	uint32_t pool_shift;	/* addr >> pool_shift == pool index */
	uint32_t npools;
	uint32_t frames_per_pool;
	uint32_t flags;
	uint8_t *tags;		/* debug builds: one enum ucm_frame_loc per frame */
	struct ucm_pool *pools;	/* npools, each cache-line aligned */
};

static inline bool ucm_umem_addr_ok(const struct ucm_umem *umem, uint64_t addr)
{
	return addr < umem->size && !(addr & (umem->frame_size - 1));
}

/* The frame an address lies in (a packet's, a descriptor's): its handle.
 * Every layer that takes an address back to its frame asks here. */
static inline uint64_t ucm_umem_base(const struct ucm_umem *umem, uint64_t addr)
{
	return addr & ~(uint64_t)(umem->frame_size - 1);
}

static inline uint64_t ucm_umem_desc_base(const struct ucm_umem *umem, uint64_t desc)
{
	return ucm_umem_base(umem, ucm_desc_addr(desc) & ~UCM_DESC_CHAIN);
}

/* A layer above the pool names its places (UCM_LOC_USER on) for the
 * messages; from a constructor. */
void ucm_frame_loc_name(enum ucm_frame_loc loc, const char *name);

static inline struct ucm_pool *ucm_umem_owner(struct ucm_umem *umem,
					      uint64_t addr)
{
	return &umem->pools[addr >> umem->pool_shift];
}

/* What ucm_umem_desc_check() needs of @umem, by value: a caller's copy
 * stays in registers across stores into frames. */
static inline struct ucm_umem_geom ucm_umem_geom_of(const struct ucm_umem *umem)
{
	return (struct ucm_umem_geom){ .size = umem->size,
				       .frame_size = umem->frame_size,
				       .pool_shift = umem->pool_shift };
}

/* The calling thread's id: unique for the life of the process, never 0.
 * initial-exec keeps the read a single %fs-relative load. */
extern __thread uint64_t ucm_self_id __attribute__((tls_model("initial-exec")));
uint64_t ucm_self_slow(void);

static inline uint64_t ucm_self(void)
{
	uint64_t id = ucm_self_id;

	return likely(id) ? id : ucm_self_slow();
}

static inline bool ucm_pool_local(const struct ucm_pool *pool)
{
	return __atomic_load_n(&pool->owner, __ATOMIC_RELAXED) == ucm_self();
}

/*
 * Frame tags (debug builds only). ucm_frame_move() checks that a frame is
 * where the caller believes and moves it; a mismatch is a bug in the
 * caller: a double return, a lost frame, or two threads owning one frame.
 */
#ifdef UCM_DEBUG
#define UCM_HAVE_TAGS 1

static inline uint8_t *ucm_frame_tag(struct ucm_umem *umem, uint64_t addr)
{
	return &umem->tags[addr >> umem->frame_shift];
}

static inline bool ucm_frame_try_move(struct ucm_umem *umem, uint64_t addr,
				      enum ucm_frame_loc from,
				      enum ucm_frame_loc to)
{
	uint8_t expect = from;

	return __atomic_compare_exchange_n(ucm_frame_tag(umem, addr), &expect,
					   to, false, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED);
}

void ucm_frame_bad_move(struct ucm_umem *umem, uint64_t addr,
			enum ucm_frame_loc from, enum ucm_frame_loc to);

/* Internal moves cannot fail in a correct program: abort loudly. */
static inline void ucm_frame_move(struct ucm_umem *umem, uint64_t addr,
				  enum ucm_frame_loc from,
				  enum ucm_frame_loc to)
{
	if (unlikely(!ucm_frame_try_move(umem, addr, from, to)))
		ucm_frame_bad_move(umem, addr, from, to);
}

static inline enum ucm_frame_loc ucm_frame_loc(struct ucm_umem *umem,
					       uint64_t addr)
{
	return __atomic_load_n(ucm_frame_tag(umem, addr), __ATOMIC_RELAXED);
}
#else
#define UCM_HAVE_TAGS 0
static inline void ucm_frame_move(struct ucm_umem *umem, uint64_t addr,
				  enum ucm_frame_loc from,
				  enum ucm_frame_loc to)
{
}
#endif

static inline void ucm_frame_move_bulk(struct ucm_umem *umem,
				       const uint64_t *addrs, uint32_t n,
				       enum ucm_frame_loc from,
				       enum ucm_frame_loc to)
{
#ifdef UCM_DEBUG
	for (uint32_t i = 0; i < n; i++)
		ucm_frame_move(umem, addrs[i], from, to);
#endif
}

/* Returns of the pool's own frames that skip the checks: into the cache
 * when the caller is the owner, else the ring, then the stack. For frames
 * that cannot be free already (a producer's staged ones); @from is their
 * tag. */
void ucm_pool_recycle_direct(struct ucm_pool *pool, const uint64_t *addrs,
			     uint32_t n, enum ucm_frame_loc from);

/* Push frames tagged UCM_LOC_STACK onto the backing stack (under its lock);
 * refuses and counts what would overflow it (a double return). */
uint32_t ucm_pool_stack_push(struct ucm_pool *pool, const uint64_t *addrs,
			     uint32_t n, uint64_t *stat);

/*
 * Take back the frames a user of the pools held all of when it let go of
 * them (the kernel's, in @from, when its sockets went away): every frame
 * of the @npools @pools found in no tier. There must be exactly @expect of
 * them, all pools together (a socket may hold another pool's frames: a
 * verdict's send on another queue's TX ring); else nothing is moved:
 * -EBUSY when more are off the pools (the application's threads still
 * hold some, or returns are arriving: ask again; @quiet: say nothing of
 * it), -EUCLEAN when fewer (a frame counted home twice). Owners stopped;
 * control path only.
 */
int ucm_pools_reclaim(struct ucm_pool *const *pools, uint32_t npools, uint64_t expect,
		      enum ucm_frame_loc from, bool quiet);

/* "Anywhere outside the pool" for a return's expected location: no tag
 * is it (a tag is a byte; UCM_LOC_CHAIN is UCM_LOC__MAX). */
#define UCM_LOC_ANY	((enum ucm_frame_loc)0xff)

/* ucm_umem__put_bulk()/release_bulk() with the frames' expected location
 * (@from; UCM_LOC_ANY: anywhere outside the pool). */
int ucm_umem_put_bulk_from(struct ucm_umem *umem, const uint64_t *addrs,
			   uint32_t n, enum ucm_frame_loc from, bool release);

/* What ucm_umem__create() refuses of its options, before it makes
 * anything: @in copied into @o, defaults filled in; 0 or -EINVAL, said.
 * For the sockets' open to refuse them before anything is touched. */
int ucm_umem_parse_opts(const struct ucm_umem_opts *in, struct ucm_umem_opts *o);

#endif /* UCM_POOL_INTERNAL_H */
