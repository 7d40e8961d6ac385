/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Next-hop MAC addresses from the kernel's routing and neighbour tables,
 * for packets that leave through a NIC without the kernel's help (the
 * tun's way back). One resolver per worker: a cache the worker probes per
 * packet, and a thread of its own that asks the kernel over netlink.
 *
 * A lookup is a hash probe in the worker's cache and never waits: a miss
 * queues a question for the resolver thread (bounded, rate-limited); the
 * caller keeps its packet a while (the way back's queue of unresolved
 * packets, tun_read_tx.c, as the kernel's neighbour queue) or drops it.
 * The answers come into the cache at the next batch. At creation the cache takes the kernel's
 * usable neighbour entries on the NIC (a dump): an on-link destination the
 * kernel knows goes at its first packet. The resolver asks for the route towards the
 * address through the NIC, then its next hop's neighbour entry; an unknown
 * neighbour makes the kernel resolve it (RTM_NEWNEIGH with NTF_USE, what
 * `ip neigh ... use` does), and the resolver answers when it is resolved
 * (or after 1 s, or at once with the kernel's refusal: -EPERM without
 * CAP_NET_ADMIN, -ENOBUFS with its table full, the first one logged);
 * a stale one is confirmed the same way: our traffic
 * bypasses the kernel's neighbour code, which would otherwise do it. A
 * known next hop is asked about again after 1 s of use and used meanwhile
 * (as the kernel uses a STALE entry while it probes), so changes in the
 * kernel's tables are followed without a drop; a negative answer is cached
 * and asked again after a backoff that doubles (25 ms to 1.6 s).
 */
#ifndef UCM_NEIGH_H
#define UCM_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ucpumap/api.h"

struct nlmsghdr;
struct ucm_neigh;

/* Start a resolver for the NIC @ifindex (its thread included, which calls
 * @init(@ctx, @idx) first when @init is set); NULL with errno on failure.
 * Stop joins the thread, after which ucm_neigh_counts() are final;
 * destroy stops it too where stop was not called. */
struct ucm_neigh *ucm_neigh_create(int ifindex, ucm_thread_fn init, void *ctx,
				   uint32_t idx);
void ucm_neigh_stop(struct ucm_neigh *n);
void ucm_neigh_destroy(struct ucm_neigh *n);

/*
 * The worker's side, per batch: ucm_neigh_sync() before the packets (the
 * resolver's answers into the cache, the request budget refilled), then
 * ucm_neigh_lookup() per packet, then ucm_neigh_kick() (the new questions
 * handed over: one eventfd write when there are some). Only lookup runs
 * per packet: no syscall, lock, atomic or allocation.
 *
 * @dst: 4 (IPv4) or 16 (IPv6) bytes. Return: 0 with @mac filled, or
 * -EAGAIN (not known yet: asked, or waiting for an answer or its turn) or
 * the kernel's cached negative answer: -ENETUNREACH (no route through the
 * NIC) or another -errno. @now: ucm_now_ns() of the batch
 * (core/internal.h), read once per batch; @asks counts the questions
 * queued for the kernel.
 */
void ucm_neigh_sync(struct ucm_neigh *n, uint64_t now);
int ucm_neigh_lookup(struct ucm_neigh *n, bool v6, const uint8_t *dst, uint8_t *mac,
		     uint64_t now, uint64_t *asks);
void ucm_neigh_kick(struct ucm_neigh *n);
/* What the cache holds for @dst, asking nothing and marking nothing used
 * (for packets that wait for their next hop): 0 with @mac; -EAGAIN while
 * a question about it is out; -ENOENT when none is (not cached, no budget
 * or place for one, or the kernel did not resolve it in time: asked again
 * at a later lookup); or the kernel's cached negative answer. */
int ucm_neigh_peek(struct ucm_neigh *n, bool v6, const uint8_t *dst, uint8_t *mac);
/* Counters for the statistics, from any thread: @requests, messages sent
 * to the kernel (netlink; a question costs two or three, and one per look
 * at a neighbour the kernel resolves); @evicted, known next hops given up
 * for another destination (idle ones first, then, where a whole set is in
 * use, its oldest: a sign the cache is too small for the traffic);
 * @refused, new destinations not cached (nor asked about) because every
 * way of their set was in use. */
void ucm_neigh_counts(const struct ucm_neigh *n, uint64_t *requests, uint64_t *evicted,
		      uint64_t *refused);

/* Append an attribute of @len bytes to the request @h (room is the
 * caller's): rtnetlink's and generic netlink's are laid out alike. */
void ucm_nl_put_attr(struct nlmsghdr *h, int type, const void *data, int len);

/* ---- for tests/unit/test-neigh.c ---------------------------------------- */

/* Pure parsers over a received datagram (neigh_nl.c, as is
 * ucm_nl_put_attr()). ucm_neigh_nl_find(): the reply to question @seq in
 * @buf (@len bytes from @pid, the sender's nl_pid): 1 with @msg, a message
 * of @type with at least @hdr bytes of payload; 0 when the datagram holds
 * none (another sender's, another question's); the kernel's -errno;
 * -EPROTO for a malformed message, an ACK or another type. */
int ucm_neigh_nl_find(const void *buf, size_t len, uint32_t pid, uint32_t seq,
		      uint16_t type, size_t hdr, const struct nlmsghdr **msg);
/* A validated RTM_NEWROUTE: 0 with @hop (the gateway, or @dst on-link)
 * and its family (*@hop_v6: an IPv4 route may go via an IPv6 gateway,
 * RTA_VIA), -ENETUNREACH for no unicast route through @ifindex, -EPROTO. */
int ucm_neigh_parse_route(const struct nlmsghdr *h, int ifindex, bool v6,
			  const uint8_t *dst, uint8_t *hop, bool *hop_v6);
/* A validated RTM_NEWNEIGH: 0 with @mac, 1 with @mac of a stale entry,
 * -EAGAIN for none usable, -EPROTO. */
int ucm_neigh_parse_neigh(const struct nlmsghdr *h, int ifindex, bool v6, uint8_t *mac);

/* A usable RTM_NEWNEIGH of a dump: 0 with @v6, @addr and @mac; -EAGAIN
 * for one of no use here (another NIC or family, no address yet);
 * -EPROTO. */
int ucm_neigh_parse_entry(const struct nlmsghdr *h, int ifindex, bool *v6, uint8_t *addr,
			  uint8_t *mac);
/* A dump's datagram (@len bytes, the kernel's) for question @seq: each
 * usable entry on @ifindex to @fn. Return: the entries given, with
 * UCM_NEIGH_DUMP_DONE or'ed in at the dump's end, or -errno. */
typedef void (*ucm_neigh_entry_fn)(void *ctx, bool v6, const uint8_t *addr,
				   const uint8_t *mac);
#define UCM_NEIGH_DUMP_DONE	(1 << 30)
int ucm_neigh_nl_walk_dump(const void *buf, size_t len, uint32_t seq, int ifindex,
			   ucm_neigh_entry_fn fn, void *ctx);
/* The kernel's entry for @addr into the cache, as ucm_neigh_create()
 * preloads them: 0, or -ENOSPC when its set has no free way. */
int ucm_neigh_preload(struct ucm_neigh *n, bool v6, const uint8_t *addr, const uint8_t *mac);

/* A cache without a thread or socket (@seed: its hash seed): the test is
 * the resolver, taking the kicked questions and giving answers. */
struct ucm_neigh *ucm_neigh_create_detached(uint64_t seed);
int ucm_neigh_take_request(struct ucm_neigh *n, bool *v6, uint8_t *addr, uint32_t *id);
/* The set @addr falls in (of 256, 4 ways each). */
uint32_t ucm_neigh_set_of(const struct ucm_neigh *n, bool v6, const uint8_t *addr);
/* The answer to question @id (take_request's); put_answer: to the latest
 * question taken about @addr. */
void ucm_neigh_put_answer_to(struct ucm_neigh *n, uint32_t id, bool v6, const uint8_t *addr,
			     int err, const uint8_t *mac);
void ucm_neigh_put_answer(struct ucm_neigh *n, bool v6, const uint8_t *addr, int err,
			  const uint8_t *mac);

#endif /* UCM_NEIGH_H */
