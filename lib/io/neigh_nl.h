/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The next-hop resolver's netlink socket and its questions (neigh_nl.c),
 * for the resolver thread (neigh.c). The socket is that thread's alone,
 * but for @requests, which any thread reads (ucm_neigh_counts()).
 */
#ifndef UCM_NEIGH_NL_H
#define UCM_NEIGH_NL_H

#include <stdbool.h>
#include <stdint.h>

#include "io/neigh.h"

#define NL_BUF		8192	/* a reply's room */

struct neigh_nl {
	int fd;			/* NETLINK_ROUTE, or -1 */
	int ifindex;		/* the NIC the questions are about */
	uint32_t seq;		/* the last question's */
	bool use_refused;	/* a refusal of RTM_NEWNEIGH logged */
	bool kernel_said;	/* the last question's error was the kernel's reply */
	uint64_t requests;	/* messages sent: one writer, STAT_ADD */
	char buf[NL_BUF] __attribute__((aligned(8)));
};

/* Open @nl's socket for the NIC @ifindex (its fd is -1 before: the caller
 * closes it, opened or not). Return: 0 or -errno. */
int ucm_neigh_nl_open(struct neigh_nl *nl, int ifindex);
/* A question's answer: 0 with @mac, -EAGAIN with @hop (of the family
 * @hop_v6 says) when the kernel was asked to resolve that next hop (look
 * again with ucm_neigh_nl_get()), or -errno (-ENETUNREACH: no route
 * through the NIC). */
int ucm_neigh_nl_resolve(struct neigh_nl *nl, bool v6, const uint8_t *dst, uint8_t *hop,
			 bool *hop_v6, uint8_t *mac);
/* The neighbour entry of @hop: 0 with @mac, 1 with @mac of a stale entry,
 * or -errno (-EAGAIN: none usable yet). */
int ucm_neigh_nl_get(struct neigh_nl *nl, bool v6, const uint8_t *hop, uint8_t *mac);
/* Have the kernel resolve @hop, or confirm its stale entry: 0 when it
 * took the request (or no word came: our own failure, asked again
 * later), or the kernel's refusal, -errno (the first logged). */
int ucm_neigh_nl_use(struct neigh_nl *nl, bool v6, const uint8_t *hop);

/* The kernel's usable neighbour entries on the NIC, each given to @fn
 * (neigh.h's ucm_neigh_entry_fn): a dump, at set-up. Return: how many, or
 * -errno. */
int ucm_neigh_nl_dump(struct neigh_nl *nl, ucm_neigh_entry_fn fn, void *ctx);

#endif /* UCM_NEIGH_NL_H */
