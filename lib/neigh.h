/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Next-hop MAC addresses from the kernel's routing and neighbour tables,
 * for packets that leave through a NIC without the kernel's help (the
 * tun's way back). One resolver per worker, used by that worker only.
 *
 * A lookup is a hash probe in a small cache; a miss asks the kernel over
 * netlink (the route towards the address through the NIC, then its next
 * hop's neighbour entry): syscalls per new destination, not per packet.
 * Entries live 1 s, so changes in the kernel's tables are followed. An
 * unknown neighbour makes the kernel resolve it (RTM_NEWNEIGH with
 * NTF_USE, what `ip neigh ... use` does) and is remembered as unknown for
 * 50 ms, during which its packets are dropped and counted, as the kernel
 * drops what overflows its own small queue of unresolved packets. A stale
 * entry is used and the kernel asked the same way to confirm it: our
 * traffic bypasses its neighbour code, which would otherwise do so.
 */
#ifndef UCM_NEIGH_H
#define UCM_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;
struct ucm_neigh;

struct ucm_neigh *ucm_neigh_create(int ifindex);
void ucm_neigh_destroy(struct ucm_neigh *n);
/* @dst: 4 (IPv4) or 16 (IPv6) bytes. Return: 0 with @mac filled, or
 * -EAGAIN (not resolved yet; resolution asked) or -ENETUNREACH (no route
 * through the NIC) or another -errno of netlink. @now: ucm_neigh_now();
 * @asks counts the lookups that went to the kernel. */
int ucm_neigh_lookup(struct ucm_neigh *n, bool v6, const uint8_t *dst, uint8_t *mac,
		     uint64_t now, uint64_t *asks);
/* The clock the cache's lifetimes run on (CLOCK_MONOTONIC, ns): read once
 * per batch by the caller, not once per packet. */
uint64_t ucm_neigh_now(void);

/* ---- for tests/unit/test_neigh.c ---------------------------------------- */

/* Pure parsers over a received datagram. ucm_neigh_nl_find(): the reply to
 * question @seq in @buf (@len bytes from @pid, the sender's nl_pid): 1
 * with @msg, a message of @type with at least @hdr bytes of payload; 0
 * when the datagram holds none (another sender's, another question's);
 * the kernel's -errno; -EPROTO for a malformed message, an ACK or another
 * type. */
int ucm_neigh_nl_find(const void *buf, size_t len, uint32_t pid, uint32_t seq,
		      uint16_t type, size_t hdr, const struct nlmsghdr **msg);
/* A validated RTM_NEWROUTE: 0 with @hop (the gateway, or @dst on-link),
 * -ENETUNREACH for no unicast route through @ifindex, -EPROTO. */
int ucm_neigh_parse_route(const struct nlmsghdr *h, int ifindex, bool v6,
			  const uint8_t *dst, uint8_t *hop);
/* A validated RTM_NEWNEIGH: 0 with @mac, 1 with @mac of a stale entry,
 * -EAGAIN for none usable, -EPROTO. */
int ucm_neigh_parse_neigh(const struct nlmsghdr *h, int ifindex, bool v6, uint8_t *mac);

#endif /* UCM_NEIGH_H */
