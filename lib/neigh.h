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
#include <stdint.h>

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

#endif /* UCM_NEIGH_H */
