/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumap-gen's options, parsed and checked (gen.c), and the two files that
 * read them besides: the resolver (resolve.c) fills in the source address
 * and the destination MAC not given, and the sending loop (pace.c) calls an
 * engine (engine.h) until --duration, --count or a signal.
 */
#ifndef UCM_GEN_OPTS_H
#define UCM_GEN_OPTS_H

#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

enum gen_engine { ENGINE_LIVE, ENGINE_LOOP, ENGINE_XSK, ENGINE_PACKET };

struct gen_opts {
	const char *dev;
	const char *src_s, *dst_s;	/* --src-ip, --dst-ip as given */
	bool ipv6, have_dmac, have_src, have_dst, seq, stamp;
	bool size_set, queue_set, engine_set;
	int verbose;
	uint8_t dmac[6];
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} src, dst;
	unsigned long size, flows, rate, batch, count, sport, dport, queue;
	double duration;
	double start_at;		/* --start-at: CLOCK_MONOTONIC seconds, or 0 */
	int cpu;			/* -1: not pinned */
	enum gen_engine engine;
};

/* ---- the resolver (resolve.c) --------------------------------------------- */

/* --src-ip and --dst-mac when not given, from the kernel's route and
 * neighbour table towards --dst-ip out of @ifindex. Return 0, or -1 with a
 * message. */
int resolve_addrs(struct gen_opts *c, int ifindex);
/* @a, an address of @c's family, as text in @buf (INET6_ADDRSTRLEN). */
const char *addr_str(const struct gen_opts *c, const void *a, char *buf);
/* @m as text in @buf (18 bytes). */
const char *mac_str(const uint8_t *m, char *buf);

struct nlmsghdr;
struct rtattr;
/* An attribute at the end of rtnetlink message @n, which has the room;
 * @len 0: a nest, whose rta_len the caller sets once it is filled. */
struct rtattr *gen_nl_add_attr(struct nlmsghdr *n, int type, const void *data, int len);
/* @req sent on a socket of the calling thread's network namespace, with an
 * acknowledgement asked for: 0, or the kernel's -errno. */
int gen_nl_ack(struct nlmsghdr *req);

/* ---- the sending loop (pace.c) --------------------------------------------- */

/* Why frames sent out of --dev would be counted and never leave (gen.c):
 * it is down or without a carrier, its MTU no longer carries --size, or,
 * for the engines that redirect (live, loop), it takes no redirected
 * frames; NULL when none of these. */
const char *gen_link_lost(const struct gen_opts *c);

/* Send through @engine's @send in calls of about 10 ms, paced by --rate,
 * until --duration, --count or *@stop; a line per second and the total on
 * stdout. Return the exit status: 0, or 1 when the engine failed, or the
 * interface went down or lost its carrier (looked at once a second). */
int pace_run(const struct gen_opts *c, gen_send_fn send, void *engine,
	     const volatile sig_atomic_t *stop);

#endif /* UCM_GEN_OPTS_H */
