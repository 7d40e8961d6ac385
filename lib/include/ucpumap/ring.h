/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_ring: a bounded FIFO of frame handles (64-bit UMEM addresses or
 * descriptors; a cpumap worker ring also carries its bulks' latency
 * stamps) with bulk produce and consume. It carries frames between
 * threads: bulk queues into a cpumap worker, remote returns into a pool's
 * recycle ring, TX completions back to their RX thread.
 *
 * Concurrency contract
 * --------------------
 * - Exactly one consumer thread at a time (the worker for a cpumap ring, the
 *   pool's owner for a recycle ring). Consumer calls need no lock.
 * - UCM_RING_SP: exactly one producer thread at a time.
 *   UCM_RING_MP: any number of producers. Each *bulk* reserves its slots
 *   with one CAS on prod.head and publishes them by writing them. Never one
 *   atomic read-modify-write per item, and no producer waits for another:
 *   a producer preempted between its reservation and its writes (a user
 *   thread can be, where the kernel's ptr_ring holds a lock with bottom
 *   halves off) only holds back the consumer, at its first slot, until it
 *   runs again. A free slot holds UCM_RING_NO_HANDLE, which is therefore
 *   not a handle an MP ring carries (produce stops before it).
 * - Produce and consume are best effort: they move as many handles as fit
 *   (or are there) and return that count. Neither ever blocks; the caller
 *   decides what a short count means (a counted drop, a spill elsewhere).
 * - Indices are free-running u32; unsigned subtraction modulo 2^32 gives the
 *   fill level, so sizes are powers of two no larger than 2^31.
 *
 * Memory ordering (labels are repeated at each site in the code)
 * ---------------------------------------------------------------
 *
 *   SP producer                            SP consumer
 *   (P1) LOAD-ACQUIRE  cons.tail           (C1) LOAD-ACQUIRE  prod.tail
 *        STORE slots                            LOAD slots
 *   (P2) STORE-RELEASE prod.tail           (C2) STORE-RELEASE cons.tail
 *
 *   MP producer                            MP consumer
 *   (P1) LOAD-ACQUIRE  cons.tail           (C1) LOAD-ACQUIRE each slot, up
 *        CAS prod.head, relaxed                 to the first free one
 *   (P2) STORE-RELEASE each slot                STORE free marks in them
 *                                          (C2) STORE-RELEASE cons.tail
 *
 *   P2 pairs with C1: what a producer wrote before P2 is seen by the
 *   consumer once it observes the new tail (SP) or the slot's handle (MP).
 *   C2 pairs with P1: the consumer has finished with the slots (read them,
 *   MP: marked them free) before a producer that observes the new
 *   cons.tail writes them again.
 *
 * Layout: producer fields, consumer fields and the read-only fields live on
 * three separate cache lines, as in ptr_ring, so the two sides only share
 * the lines they must (the slots and one index each way). An SP ring's
 * consumer never writes a slot; an MP ring's marks the slots it took free,
 * lines the producers write next anyway.
 */
#ifndef UCPUMAP_RING_H
#define UCPUMAP_RING_H

#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include "ucpumap/api.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ucm_ring_flags {
	UCM_RING_SP = 0,	/* single producer */
	UCM_RING_MP = 1 << 0,	/* multiple producers, CAS reservation */
};

/* An MP ring's free slot. No UMEM address or descriptor is all ones. */
#define UCM_RING_NO_HANDLE	UINT64_MAX

/* Do not access these members directly. Use the functions below. */
struct ucm_ring {
	struct {
		uint32_t head;		/* MP: next slot to reserve */
		uint32_t tail;		/* SP: slots below it are published */
		uint32_t cached_cons;	/* SP: producer's view of cons.tail */
	} prod __attribute__((aligned(64)));
	struct {
		uint32_t tail;		/* slots below it are consumed */
		uint32_t cached_prod;	/* SP: consumer's view of prod.tail */
	} cons __attribute__((aligned(64)));
	/* Read-only by both sides after creation. */
	uint32_t size __attribute__((aligned(64)));
	uint32_t mask;
	uint32_t flags;
	uint64_t slots[] __attribute__((aligned(64)));
};

/**
 * ucm_ring__create() - allocate a ring
 * @size: number of slots, a power of two, 2 .. 2^31
 * @flags: UCM_RING_SP or UCM_RING_MP
 *
 * Return: the ring, or NULL with errno set (EINVAL for a bad size, ENOMEM).
 */
UCM_API struct ucm_ring *ucm_ring__create(uint32_t size, uint32_t flags);
UCM_API void ucm_ring__destroy(struct ucm_ring *r);

/* Helpers of the inline functions below, not API: a trailing underscore,
 * since names beginning with two underscores are reserved to the
 * implementation (C11 7.1.3). */
static inline void ucm_ring_copy_in_(struct ucm_ring *r, uint32_t at,
				     const uint64_t *v, uint32_t n)
{
	uint32_t idx = at & r->mask, first = r->size - idx;

	if (n <= first) {
		memcpy(&r->slots[idx], v, n * sizeof(*v));
	} else {
		memcpy(&r->slots[idx], v, first * sizeof(*v));
		memcpy(&r->slots[0], v + first, (n - first) * sizeof(*v));
	}
}

static inline void ucm_ring_copy_out_(const struct ucm_ring *r, uint32_t at,
				      uint64_t *v, uint32_t n)
{
	uint32_t idx = at & r->mask, first = r->size - idx;

	if (n <= first) {
		memcpy(v, &r->slots[idx], n * sizeof(*v));
	} else {
		memcpy(v, &r->slots[idx], first * sizeof(*v));
		memcpy(v + first, &r->slots[0], (n - first) * sizeof(*v));
	}
}

/* Single producer: only this thread writes prod.tail, so reading it back
 * relaxed is enough; cons.tail is re-read only when the cached view says
 * the ring is too full. */
static inline uint32_t ucm_ring__produce_sp(struct ucm_ring *r,
					    const uint64_t *v, uint32_t n)
{
	uint32_t tail = __atomic_load_n(&r->prod.tail, __ATOMIC_RELAXED);
	uint32_t free = r->size - (tail - r->prod.cached_cons);

	if (free < n) {
		/* P1: pairs with C2 */
		r->prod.cached_cons = __atomic_load_n(&r->cons.tail,
						      __ATOMIC_ACQUIRE);
		free = r->size - (tail - r->prod.cached_cons);
		if (n > free)
			n = free;
		if (!n)
			return 0;
	}
	ucm_ring_copy_in_(r, tail, v, n);
	/* P2: pairs with C1 */
	__atomic_store_n(&r->prod.tail, tail + n, __ATOMIC_RELEASE);
	return n;
}

/* MP: reserve up to @n slots (P1, the CAS); *@head is the first. Stops
 * before a UCM_RING_NO_HANDLE in @v. Return: how many were reserved. */
static inline uint32_t ucm_ring_reserve_mp_(struct ucm_ring *r, const uint64_t *v,
					    uint32_t n, uint32_t *head)
{
	uint32_t h, cons, free, want = 0;

	while (want < n && v[want] != UCM_RING_NO_HANDLE)
		want++;
	if (!want)
		return 0;
	h = __atomic_load_n(&r->prod.head, __ATOMIC_RELAXED);
	do {
		/* P1: pairs with C2 */
		cons = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
		/* A stale head can make this exceed size; the CAS then
		 * fails because prod.head has moved on, and we retry. Each
		 * try starts from the whole request: a stale view may have
		 * clipped the last one. */
		free = r->size - (h - cons);
		n = want < free ? want : free;
		if (!n)
			return 0;
	} while (!__atomic_compare_exchange_n(&r->prod.head, &h, h + n, true,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	*head = h;
	return n;
}

/* MP: publish the @n slots reserved at @head, in order. */
static inline void ucm_ring_publish_mp_(struct ucm_ring *r, uint32_t head,
					const uint64_t *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		/* P2: pairs with C1 */
		__atomic_store_n(&r->slots[(head + i) & r->mask], v[i],
				 __ATOMIC_RELEASE);
}

static inline uint32_t ucm_ring__produce_mp(struct ucm_ring *r,
					    const uint64_t *v, uint32_t n)
{
	uint32_t head = 0;

	n = ucm_ring_reserve_mp_(r, v, n, &head);
	ucm_ring_publish_mp_(r, head, v, n);
	return n;
}

/**
 * ucm_ring__produce() - append up to @n handles
 *
 * Return: how many were appended, 0 .. @n, in order from the front of @v.
 */
static inline uint32_t ucm_ring__produce(struct ucm_ring *r,
					 const uint64_t *v, uint32_t n)
{
	if (r->flags & UCM_RING_MP)
		return ucm_ring__produce_mp(r, v, n);
	return ucm_ring__produce_sp(r, v, n);
}

/* MP: take up to @n published handles, up to the first free slot. */
static inline uint32_t ucm_ring_consume_mp_(struct ucm_ring *r, uint64_t *v,
					    uint32_t n)
{
	uint32_t tail = r->cons.tail, k;	/* only we write it */

	if (n > r->size)	/* the slots past the last are the first */
		n = r->size;
	for (k = 0; k < n; k++) {
		/* C1: pairs with P2 */
		v[k] = __atomic_load_n(&r->slots[(tail + k) & r->mask],
				       __ATOMIC_ACQUIRE);
		if (v[k] == UCM_RING_NO_HANDLE)
			break;
	}
	if (!k)
		return 0;
	/* Free again; ordered before C2 by its release. */
	for (uint32_t i = 0; i < k; i++)
		__atomic_store_n(&r->slots[(tail + i) & r->mask],
				 UCM_RING_NO_HANDLE, __ATOMIC_RELAXED);
	/* C2: pairs with P1 */
	__atomic_store_n(&r->cons.tail, tail + k, __ATOMIC_RELEASE);
	return k;
}

/**
 * ucm_ring__consume() - take up to @n handles, oldest first
 *
 * Consumer thread only. Return: how many were taken.
 */
static inline uint32_t ucm_ring__consume(struct ucm_ring *r, uint64_t *v,
					 uint32_t n)
{
	uint32_t tail, avail;

	if (r->flags & UCM_RING_MP)
		return ucm_ring_consume_mp_(r, v, n);
	tail = r->cons.tail;	/* only we write it */
	avail = r->cons.cached_prod - tail;
	if (avail < n) {
		/* C1: pairs with P2 */
		r->cons.cached_prod = __atomic_load_n(&r->prod.tail,
						      __ATOMIC_ACQUIRE);
		avail = r->cons.cached_prod - tail;
		if (n > avail)
			n = avail;
		if (!n)
			return 0;
	}
	ucm_ring_copy_out_(r, tail, v, n);
	/* C2: pairs with P1 */
	__atomic_store_n(&r->cons.tail, tail + n, __ATOMIC_RELEASE);
	return n;
}

/**
 * ucm_ring__empty() - is there nothing to consume?
 *
 * Consumer thread only. Reads prod.tail (SP) or the next slot (MP) with
 * acquire (C1), so a false answer means what it saw is readable. An MP
 * ring whose next slot is reserved but not written yet is empty to it.
 */
static inline bool ucm_ring__empty(struct ucm_ring *r)
{
	if (r->flags & UCM_RING_MP)
		/* C1: pairs with P2 */
		return __atomic_load_n(&r->slots[r->cons.tail & r->mask],
				       __ATOMIC_ACQUIRE) == UCM_RING_NO_HANDLE;
	if (r->cons.cached_prod != r->cons.tail)
		return false;
	r->cons.cached_prod = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);
	return r->cons.cached_prod == r->cons.tail;
}

/* Fill level seen from any thread: a snapshot for statistics, not a
 * promise. An MP ring counts the slots reserved, written or not yet. */
static inline uint32_t ucm_ring__count(const struct ucm_ring *r)
{
	/* cons first, with acquire (pairs with C2): a weakly ordered CPU must
	 * not read the producer's index older than cons.tail, or the count
	 * wraps. */
	uint32_t cons = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	uint32_t prod = __atomic_load_n((r->flags & UCM_RING_MP) ? &r->prod.head :
					&r->prod.tail, __ATOMIC_RELAXED);

	return prod - cons;
}

static inline uint32_t ucm_ring__size(const struct ucm_ring *r)
{
	return r->size;
}

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_RING_H */
