// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The next-hop resolver (lib/io/neigh.c, its parsers in neigh_nl.c),
 * without root: its netlink parsers fed synthetic replies (good, truncated
 * at every length from an exact-size copy, wrong type, short, an error, an ACK, another sender,
 * another question), its cache driven through a resolver-less instance
 * whose questions the test answers (one question per destination, the
 * answers used, refresh without a drop, negative answers backed off, the
 * rate and in-flight bounds, the capacity of the seeded sets), and real
 * resolver threads asking the kernel about loopback addresses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/ipv6.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "core/internal.h"
#include "ucpumap/log.h"
#include "io/neigh.h"
#include "io/neigh_nl.h"
#include "io/netdev.h"
#include "utest.h"

#define IFX	7		/* the NIC's ifindex in the synthetic replies */
#define MS	1000000ull

/* ---- building replies ------------------------------------------------------ */

struct msgbuf {
	uint64_t buf[512];	/* aligned as a received datagram */
	size_t len;		/* the datagram so far */
};

static struct nlmsghdr *msg_start(struct msgbuf *b, uint16_t type, uint32_t seq,
				  const void *hdr, size_t hlen)
{
	struct nlmsghdr *h = (struct nlmsghdr *)((char *)b->buf + b->len);

	memset(h, 0, NLMSG_SPACE(hlen));
	h->nlmsg_len = NLMSG_LENGTH(hlen);
	h->nlmsg_type = type;
	h->nlmsg_seq = seq;
	memcpy(NLMSG_DATA(h), hdr, hlen);
	return h;
}

static void msg_end(struct msgbuf *b, struct nlmsghdr *h)
{
	b->len += NLMSG_ALIGN(h->nlmsg_len);
}

/* A route reply: @type (RTN_*), through @oif, from @table, @gw or none. */
static struct nlmsghdr *route_msg(struct msgbuf *b, uint32_t seq, bool v6, uint8_t type,
				  int oif, uint32_t table, const uint8_t *gw)
{
	struct rtmsg rt = { .rtm_family = v6 ? AF_INET6 : AF_INET, .rtm_type = type,
			    .rtm_table = table < 256 ? table : RT_TABLE_COMPAT };
	struct nlmsghdr *h = msg_start(b, RTM_NEWROUTE, seq, &rt, sizeof(rt));

	ucm_nl_put_attr(h, RTA_TABLE, &table, sizeof(table));
	if (gw)
		ucm_nl_put_attr(h, RTA_GATEWAY, gw, v6 ? 16 : 4);
	ucm_nl_put_attr(h, RTA_OIF, &oif, sizeof(oif));
	msg_end(b, h);
	return h;
}

static struct nlmsghdr *neigh_msg(struct msgbuf *b, uint32_t seq, bool v6, int ifindex,
				  uint16_t state, const uint8_t *mac, size_t maclen)
{
	struct ndmsg nd = { .ndm_family = v6 ? AF_INET6 : AF_INET, .ndm_ifindex = ifindex,
			    .ndm_state = state, .ndm_type = RTN_UNICAST };
	struct nlmsghdr *h = msg_start(b, RTM_NEWNEIGH, seq, &nd, sizeof(nd));
	uint8_t dst[4] = { 10, 0, 0, 1 };

	ucm_nl_put_attr(h, NDA_DST, dst, sizeof(dst));
	if (mac)
		ucm_nl_put_attr(h, NDA_LLADDR, mac, maclen);
	msg_end(b, h);
	return h;
}

static void error_msg(struct msgbuf *b, uint32_t seq, int err, size_t cut)
{
	struct nlmsgerr e = { .error = err };
	struct nlmsghdr *h = msg_start(b, NLMSG_ERROR, seq, &e, sizeof(e));

	h->nlmsg_len -= cut;
	msg_end(b, h);
}

static int find(const struct msgbuf *b, size_t len, uint32_t pid, uint32_t seq,
		uint16_t type, const struct nlmsghdr **msg)
{
	size_t hdr = type == RTM_NEWROUTE ? sizeof(struct rtmsg) : sizeof(struct ndmsg);

	*msg = NULL;
	return ucm_neigh_nl_find(b->buf, len, pid, seq, type, hdr, msg);
}

static const uint8_t GW4[4] = { 10, 0, 0, 1 }, DST4[4] = { 192, 0, 2, 9 };
static const uint8_t MAC[6] = { 0x02, 0, 0, 0, 0, 0x42 };
static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t MCAST[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };

/* ---- the reply finder ---------------------------------------------------------- */

/* An older question's answer, then ours: ours is found, whole. */
static int test_find_good(void)
{
	struct msgbuf b = {};
	const struct nlmsghdr *m, *ours;

	route_msg(&b, 4, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, NULL);
	ours = route_msg(&b, 5, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, GW4);
	UT_ASSERT(find(&b, b.len, 0, 5, RTM_NEWROUTE, &m) == 1, "ours not found");
	UT_ASSERT(m == ours, "found another message");
	UT_ASSERT(find(&b, b.len, 0, 6, RTM_NEWROUTE, &m) == 0 && !m, "a question never asked");
	return 0;
}

/* Every prefix of a datagram, from an exact-size heap copy (ASan sees any
 * read past it): nothing before the whole message is there. */
static int test_find_truncated(void)
{
	struct msgbuf b = {};
	const struct nlmsghdr *m;
	struct nlmsghdr *h;

	h = route_msg(&b, 9, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, GW4);
	for (size_t len = 0; len <= b.len; len++) {
		void *copy = malloc(len ? len : 1);
		int ret;

		memcpy(copy, b.buf, len);
		m = NULL;
		ret = ucm_neigh_nl_find(copy, len, 0, 9, RTM_NEWROUTE, sizeof(struct rtmsg), &m);
		free(copy);
		if (len == b.len)
			UT_ASSERT(ret == 1, "whole: %d", ret);
		else if (len < NLMSG_HDRLEN)
			UT_ASSERT(ret == 0, "%zu bytes: %d", len, ret);
		else
			UT_ASSERT(ret == -EPROTO, "%zu of %zu bytes: %d", len, b.len, ret);
	}
	/* A length below the header's own. */
	h->nlmsg_len = 8;
	UT_ASSERT(find(&b, b.len, 0, 9, RTM_NEWROUTE, &m) == -EPROTO, "nlmsg_len 8");
	return 0;
}

/* Ours, of another type or too short for its fixed header. */
static int test_find_wrong_type(void)
{
	struct msgbuf b = {};
	const struct nlmsghdr *m;
	struct rtmsg rt = {};
	struct nlmsghdr *h;

	neigh_msg(&b, 3, false, IFX, NUD_REACHABLE, MAC, 6);
	UT_ASSERT(find(&b, b.len, 0, 3, RTM_NEWROUTE, &m) == -EPROTO && !m, "a neighbour as a route");
	memset(&b, 0, sizeof(b));
	h = msg_start(&b, RTM_NEWROUTE, 3, &rt, 4);	/* 4 of 12 bytes */
	msg_end(&b, h);
	UT_ASSERT(find(&b, b.len, 0, 3, RTM_NEWROUTE, &m) == -EPROTO && !m, "a short rtmsg");
	memset(&b, 0, sizeof(b));
	h = msg_start(&b, NLMSG_DONE, 3, &rt, 4);
	msg_end(&b, h);
	UT_ASSERT(find(&b, b.len, 0, 3, RTM_NEWROUTE, &m) == -EPROTO && !m, "NLMSG_DONE");
	return 0;
}

/* The kernel's error is the answer; an ACK, a short or a positive error
 * is not one. */
static int test_find_error(void)
{
	struct msgbuf b = {};
	const struct nlmsghdr *m;

	error_msg(&b, 2, -ENETUNREACH, 0);
	UT_ASSERT(find(&b, b.len, 0, 2, RTM_NEWROUTE, &m) == -ENETUNREACH, "error");
	memset(&b, 0, sizeof(b));
	error_msg(&b, 2, 0, 0);
	UT_ASSERT(find(&b, b.len, 0, 2, RTM_NEWROUTE, &m) == -EPROTO, "an ACK");
	/* An ACK where one was asked for (RTM_NEWNEIGH with NTF_USE). */
	m = NULL;
	UT_ASSERT(ucm_neigh_nl_find(b.buf, b.len, 0, 2, NLMSG_ERROR, sizeof(struct nlmsgerr), &m) == 1 &&
		  m, "the ACK asked for");
	memset(&b, 0, sizeof(b));
	error_msg(&b, 2, -EPERM, 0);
	UT_ASSERT(ucm_neigh_nl_find(b.buf, b.len, 0, 2, NLMSG_ERROR, sizeof(struct nlmsgerr), &m) ==
		  -EPERM, "a refusal where an ACK was asked for");
	memset(&b, 0, sizeof(b));
	error_msg(&b, 2, -ENOENT, 4);
	UT_ASSERT(find(&b, b.len, 0, 2, RTM_NEWNEIGH, &m) == -EPROTO, "a short error");
	memset(&b, 0, sizeof(b));
	error_msg(&b, 2, 5, 0);
	UT_ASSERT(find(&b, b.len, 0, 2, RTM_NEWNEIGH, &m) == -EPROTO, "a positive error");
	memset(&b, 0, sizeof(b));
	error_msg(&b, 2, -100000, 0);
	UT_ASSERT(find(&b, b.len, 0, 2, RTM_NEWNEIGH, &m) == -EPROTO, "an error out of range");
	/* Another question's error is not ours. */
	memset(&b, 0, sizeof(b));
	error_msg(&b, 1, -EBUSY, 0);
	neigh_msg(&b, 2, false, IFX, NUD_REACHABLE, MAC, 6);
	UT_ASSERT(find(&b, b.len, 0, 2, RTM_NEWNEIGH, &m) == 1, "ours after an old error");
	return 0;
}

/* Only the kernel (nl_pid 0) answers: the same bytes from a process are
 * read past, errors included. */
static int test_find_foreign(void)
{
	struct msgbuf b = {};
	const struct nlmsghdr *m;

	route_msg(&b, 7, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, GW4);
	UT_ASSERT(find(&b, b.len, 4242, 7, RTM_NEWROUTE, &m) == 0 && !m, "a process's route");
	memset(&b, 0, sizeof(b));
	error_msg(&b, 7, -ENETUNREACH, 0);
	UT_ASSERT(find(&b, b.len, 4242, 7, RTM_NEWROUTE, &m) == 0, "a process's error");
	return 0;
}

/* ---- the parsers ------------------------------------------------------------------ */

static int test_parse_route(void)
{
	static const uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 9 };
	static const uint8_t gw6[16] = { 0xfe, 0x80, [15] = 1 };
	struct msgbuf b = {};
	uint8_t hop[16], via[2 + 16];
	struct nlmsghdr *h;
	uint16_t fam = AF_INET6;
	bool hv6;

	h = route_msg(&b, 1, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, GW4);
	UT_ASSERT(!ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) && !memcmp(hop, GW4, 4) &&
		  !hv6, "gateway");
	h = route_msg(&b, 1, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, NULL);
	UT_ASSERT(!ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) && !memcmp(hop, DST4, 4), "on-link");
	h = route_msg(&b, 1, true, RTN_UNICAST, IFX, 1000, gw6);
	UT_ASSERT(!ucm_neigh_parse_route(h, IFX, true, dst6, hop, &hv6) && !memcmp(hop, gw6, 16),
		  "IPv6 gateway, table 1000");
	h = route_msg(&b, 1, false, RTN_UNICAST, IFX + 1, RT_TABLE_MAIN, GW4);
	UT_ASSERT(ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) == -ENETUNREACH, "another NIC");
	h = route_msg(&b, 1, false, RTN_LOCAL, IFX, RT_TABLE_LOCAL, NULL);
	UT_ASSERT(ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) == -ENETUNREACH, "local");
	h = route_msg(&b, 1, false, RTN_UNICAST, IFX, RT_TABLE_UNSPEC, NULL);
	UT_ASSERT(ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) == -ENETUNREACH, "no table");
	h = route_msg(&b, 1, true, RTN_UNICAST, IFX, RT_TABLE_MAIN, NULL);
	UT_ASSERT(ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) == -EPROTO, "IPv6 for IPv4");
	/* An IPv4 route via an IPv6 gateway (RFC 5549, RTA_VIA): the hop
	 * is the IPv6 one, and said so; a via of no family known refused. */
	memcpy(via, &fam, sizeof(fam));
	memcpy(via + sizeof(fam), gw6, 16);
	h = route_msg(&b, 1, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, NULL);
	ucm_nl_put_attr(h, RTA_VIA, via, sizeof(via));
	UT_ASSERT(!ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) && hv6 &&
		  !memcmp(hop, gw6, 16), "IPv4 via IPv6: hop %s", hv6 ? "IPv6" : "IPv4");
	fam = AF_PACKET;
	memcpy(via, &fam, sizeof(fam));
	h = route_msg(&b, 1, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, NULL);
	ucm_nl_put_attr(h, RTA_VIA, via, sizeof(via));
	UT_ASSERT(ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) == -EPROTO,
		  "a via of another family");
	/* An attribute longer than the message: the walk stops before it. */
	h = route_msg(&b, 1, false, RTN_UNICAST, IFX, RT_TABLE_MAIN, GW4);
	((struct rtattr *)((char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct rtmsg))))->rta_len =
		200;
	UT_ASSERT(ucm_neigh_parse_route(h, IFX, false, DST4, hop, &hv6) == -ENETUNREACH,
		  "a bad attribute read");
	return 0;
}

static int test_parse_neigh(void)
{
	struct msgbuf b = {};
	uint8_t mac[6];
	struct nlmsghdr *h;

	h = neigh_msg(&b, 1, false, IFX, NUD_REACHABLE, MAC, 6);
	UT_ASSERT(!ucm_neigh_parse_neigh(h, IFX, false, mac) && !memcmp(mac, MAC, 6), "reachable");
	h = neigh_msg(&b, 1, true, IFX, NUD_STALE, MAC, 6);
	UT_ASSERT(ucm_neigh_parse_neigh(h, IFX, true, mac) == 1, "stale");
	h = neigh_msg(&b, 1, false, IFX, NUD_INCOMPLETE, MAC, 6);
	UT_ASSERT(ucm_neigh_parse_neigh(h, IFX, false, mac) == -EAGAIN, "incomplete");
	h = neigh_msg(&b, 1, false, IFX, NUD_FAILED, NULL, 0);
	UT_ASSERT(ucm_neigh_parse_neigh(h, IFX, false, mac) == -EAGAIN, "failed");
	h = neigh_msg(&b, 1, false, IFX, NUD_REACHABLE, NULL, 0);
	UT_ASSERT(ucm_neigh_parse_neigh(h, IFX, false, mac) == -EAGAIN, "no address");
	h = neigh_msg(&b, 1, false, IFX, NUD_REACHABLE, MAC, 4);
	UT_ASSERT(ucm_neigh_parse_neigh(h, IFX, false, mac) == -EAGAIN, "a 4-byte address");
	h = neigh_msg(&b, 1, false, IFX + 1, NUD_REACHABLE, MAC, 6);
	UT_ASSERT(ucm_neigh_parse_neigh(h, IFX, false, mac) == -EPROTO, "another NIC's");
	h = neigh_msg(&b, 1, true, IFX, NUD_REACHABLE, MAC, 6);
	UT_ASSERT(ucm_neigh_parse_neigh(h, IFX, false, mac) == -EPROTO, "IPv6 for IPv4");
	return 0;
}

/* ---- the kernel's table read at start --------------------------------------------- */

struct seen {
	int n;
	bool v6;
	uint8_t mac[6];
};

static void seen_one(void *ctx, bool v6, const uint8_t *addr, const uint8_t *mac)
{
	struct seen *s = ctx;

	s->n++;
	s->v6 = v6;
	memcpy(s->mac, mac, 6);
}

/* A dump: only the usable entries of the NIC, to its NLMSG_DONE; an entry
 * preloaded is used at its first packet, and asked about then. */
static int test_dump_preload(void)
{
	struct ucm_neigh *n = ucm_neigh_create_detached(3);
	struct msgbuf b = {};
	struct seen s = {};
	struct nlmsghdr *h;
	uint8_t mac[6];
	uint64_t asks = 0, t = 1000 * MS;
	int r;

	neigh_msg(&b, 5, false, IFX, NUD_REACHABLE, MAC, 6);
	neigh_msg(&b, 5, false, IFX + 1, NUD_REACHABLE, MAC, 6);	/* another NIC's */
	neigh_msg(&b, 5, false, IFX, NUD_FAILED, NULL, 0);
	neigh_msg(&b, 4, true, IFX, NUD_REACHABLE, MAC, 6);		/* another question's */
	/* The subnet's broadcast (NOARP), and a multicast MAC: no stations. */
	h = neigh_msg(&b, 5, false, IFX, NUD_NOARP, BCAST, 6);
	((struct ndmsg *)NLMSG_DATA(h))->ndm_type = RTN_BROADCAST;
	neigh_msg(&b, 5, false, IFX, NUD_REACHABLE, MCAST, 6);
	r = ucm_neigh_nl_walk_dump(b.buf, b.len, 5, IFX, seen_one, &s);
	UT_ASSERT(r == 1 && s.n == 1 && !s.v6, "one usable entry: %d (%d)", r, s.n);
	h = msg_start(&b, NLMSG_DONE, 5, &r, sizeof(r));
	msg_end(&b, h);
	r = ucm_neigh_nl_walk_dump(b.buf, b.len, 5, IFX, seen_one, &s);
	UT_ASSERT(r == (1 | UCM_NEIGH_DUMP_DONE), "the end: %#x", r);
	b.len = 0;
	error_msg(&b, 5, -EINVAL, 0);
	UT_ASSERT(ucm_neigh_nl_walk_dump(b.buf, b.len, 5, IFX, seen_one, &s) == -EINVAL, "error");

	UT_ASSERT(n, "create");
	UT_ASSERT(!ucm_neigh_preload(n, false, GW4, MAC), "preload");
	ucm_neigh_sync(n, t);
	UT_ASSERT(!ucm_neigh_lookup(n, false, GW4, mac, t, &asks) && !memcmp(mac, MAC, 6),
		  "the first packet goes");
	UT_ASSERT(asks == 1, "and asks to confirm: %llu", (unsigned long long)asks);
	ucm_neigh_destroy(n);
	return 0;
}

/* ---- the cache, the test as its resolver ---------------------------------------- */

static void addr4(uint8_t *a, uint32_t i)
{
	uint32_t be = htonl(0x0a000000 | i);	/* 10.x.y.z */

	memcpy(a, &be, 4);
}

static int take_all(struct ucm_neigh *n, uint8_t (*got)[16], int max)
{
	bool v6;
	int k = 0;

	while (k < max && !ucm_neigh_take_request(n, &v6, got[k], NULL))
		k++;
	return k;
}

/* A miss asks once; the answer is used at the next batch; a known next
 * hop is asked about again after 1 s and used until the answer (the
 * kernel's STALE), which replaces it, a negative one too. A peek reads the
 * cache, asking nothing. */
static int test_cache_answer(void)
{
	struct ucm_neigh *n = ucm_neigh_create_detached(1);
	uint8_t a[4], mac[6], got[4][16];
	uint64_t asks = 0, t = 1000 * MS;

	UT_ASSERT(n, "create");
	addr4(a, 1);
	ucm_neigh_sync(n, t);
	UT_ASSERT(ucm_neigh_peek(n, false, a, mac) == -ENOENT, "peek: not cached");
	UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -EAGAIN, "miss");
	UT_ASSERT(ucm_neigh_peek(n, false, a, mac) == -EAGAIN, "peek: asked");
	UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -EAGAIN, "miss again");
	UT_ASSERT(asks == 1, "%llu questions for one address", (unsigned long long)asks);
	UT_ASSERT(take_all(n, got, 4) == 0, "a question before the kick");
	ucm_neigh_kick(n);
	UT_ASSERT(take_all(n, got, 4) == 1 && !memcmp(got[0], a, 4), "the question");
	ucm_neigh_put_answer(n, false, got[0], 0, MAC);
	UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -EAGAIN, "before the sync");
	t += MS;
	ucm_neigh_sync(n, t);
	memset(mac, 0, sizeof(mac));
	UT_ASSERT(!ucm_neigh_peek(n, false, a, mac) && !memcmp(mac, MAC, 6), "peek: known");
	UT_ASSERT(!ucm_neigh_lookup(n, false, a, mac, t, &asks) && !memcmp(mac, MAC, 6), "known");
	t += 1000 * MS;
	ucm_neigh_sync(n, t);
	UT_ASSERT(!ucm_neigh_lookup(n, false, a, mac, t, &asks), "used while refreshed");
	UT_ASSERT(!ucm_neigh_lookup(n, false, a, mac, t, &asks), "used while refreshed");
	UT_ASSERT(asks == 2, "%llu questions", (unsigned long long)asks);
	t += 5000 * MS;
	ucm_neigh_sync(n, t);
	UT_ASSERT(!ucm_neigh_lookup(n, false, a, mac, t, &asks), "used until the answer");
	UT_ASSERT(asks == 2, "asked twice at once");
	ucm_neigh_kick(n);
	UT_ASSERT(take_all(n, got, 4) == 1, "the refresh question");
	/* A refresh our own asking failed (no answer in time): the known
	 * MAC stays in use, and is asked about again within 25 ms. */
	ucm_neigh_put_answer(n, false, got[0], -ETIMEDOUT, NULL);
	ucm_neigh_sync(n, t);
	memset(mac, 0, sizeof(mac));
	UT_ASSERT(!ucm_neigh_lookup(n, false, a, mac, t, &asks) && !memcmp(mac, MAC, 6),
		  "a refresh that timed out dropped the known next hop");
	UT_ASSERT(asks == 2, "asked again at once");
	t += 25 * MS;
	ucm_neigh_sync(n, t);
	UT_ASSERT(!ucm_neigh_lookup(n, false, a, mac, t, &asks) && asks == 3,
		  "not asked again after 25 ms: %llu questions", (unsigned long long)asks);
	ucm_neigh_kick(n);
	UT_ASSERT(take_all(n, got, 4) == 1, "the refresh's retry");
	/* The kernel's word: no route through the NIC. */
	ucm_neigh_put_answer(n, false, got[0], -ENETUNREACH, NULL);
	ucm_neigh_sync(n, t);
	UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -ENETUNREACH, "gone");
	UT_ASSERT(ucm_neigh_peek(n, false, a, mac) == -ENETUNREACH, "peek: gone");
	UT_ASSERT(asks == 3, "a peek asked: %llu questions", (unsigned long long)asks);
	ucm_neigh_destroy(n);
	return 0;
}

/* A destination given up while asked about, then asked about again: the
 * first question's late answer is not the second's. The entry still
 * waits for its own (no second question while it is out, a peek says
 * "asked"), and takes it when it comes. */
static int test_cache_late_answer(void)
{
	struct ucm_neigh *n = ucm_neigh_create_detached(3);
	uint8_t a[16] = {}, b[4][4], mac[6], addr[16];	/* a: answers copy 16 bytes */
	uint32_t si, id, first = UINT32_MAX, second = UINT32_MAX;
	uint64_t asks = 0, t = 1000 * MS;
	bool v6;
	int k = 0;

	UT_ASSERT(n, "create");
	addr4(a, 1);
	si = ucm_neigh_set_of(n, false, a);
	for (uint32_t i = 2; k < 4 && i < 100000; i++) {
		addr4(b[k], i);
		if (ucm_neigh_set_of(n, false, b[k]) == si)
			k++;
	}
	UT_ASSERT(k == 4, "four more addresses in one set");
	ucm_neigh_sync(n, t);
	UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -EAGAIN, "asked");
	/* Three fill the set; the fourth takes the way asked about first. */
	for (k = 0; k < 4; k++)
		UT_ASSERT(ucm_neigh_lookup(n, false, b[k], mac, t, &asks) == -EAGAIN, "other %d", k);
	UT_ASSERT(ucm_neigh_peek(n, false, a, mac) == -ENOENT, "not given up");
	UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -EAGAIN, "asked again");
	UT_ASSERT(asks == 6, "%llu questions", (unsigned long long)asks);
	ucm_neigh_kick(n);
	while (!ucm_neigh_take_request(n, &v6, addr, &id))
		if (!memcmp(addr, a, 4))
			*(first == UINT32_MAX ? &first : &second) = id;
	UT_ASSERT(first != UINT32_MAX && second != UINT32_MAX && first != second,
		  "two questions about it: %u %u", first, second);
	ucm_neigh_put_answer_to(n, first, false, a, -EAGAIN, NULL);
	t += MS;
	ucm_neigh_sync(n, t);
	UT_ASSERT(ucm_neigh_peek(n, false, a, mac) == -EAGAIN,
		  "the first question's answer taken for the second's: %d",
		  ucm_neigh_peek(n, false, a, mac));
	t += 100 * MS;
	ucm_neigh_sync(n, t);
	UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -EAGAIN && asks == 6,
		  "asked a third time while the second is out: %llu", (unsigned long long)asks);
	ucm_neigh_put_answer_to(n, second, false, a, 0, MAC);
	ucm_neigh_sync(n, t);
	memset(mac, 0, sizeof(mac));
	UT_ASSERT(!ucm_neigh_lookup(n, false, a, mac, t, &asks) && !memcmp(mac, MAC, 6),
		  "the second answer");
	ucm_neigh_destroy(n);
	return 0;
}

/* Negative answers are kept and asked again after 25, 50, 100 ms ...; the
 * kernel's own errno is what the lookup returns. */
static int test_cache_negative(void)
{
	struct ucm_neigh *n = ucm_neigh_create_detached(2);
	uint8_t a[4], mac[6], got[4][16];
	uint64_t asks = 0, t = 1000 * MS, wait = 25 * MS;

	UT_ASSERT(n, "create");
	addr4(a, 2);
	ucm_neigh_sync(n, t);
	ucm_neigh_lookup(n, false, a, mac, t, &asks);
	for (int round = 0; round < 4; round++) {
		ucm_neigh_kick(n);
		UT_ASSERT(take_all(n, got, 4) == 1, "round %d: no question", round);
		ucm_neigh_put_answer(n, false, got[0], -ENETUNREACH, NULL);
		ucm_neigh_sync(n, t);
		UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t + wait - 1, &asks) == -ENETUNREACH,
			  "round %d: answer", round);
		UT_ASSERT(asks == (uint64_t)round + 1, "round %d: asked before %llu ms", round,
			  (unsigned long long)(wait / MS));
		t += wait;
		ucm_neigh_sync(n, t);
		UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -ENETUNREACH, "due");
		UT_ASSERT(asks == (uint64_t)round + 2, "round %d: not asked at %llu ms", round,
			  (unsigned long long)(wait / MS));
		wait *= 2;
	}
	/* A positive answer ends the backoff. */
	ucm_neigh_kick(n);
	UT_ASSERT(take_all(n, got, 4) == 1, "the last question");
	ucm_neigh_put_answer(n, false, got[0], 0, MAC);
	ucm_neigh_sync(n, t);
	UT_ASSERT(!ucm_neigh_lookup(n, false, a, mac, t, &asks), "resolved at last");
	/* Not resolved in the resolver's watch (its -EAGAIN): no question
	 * is out, so a packet waiting for it has nothing to wait for. */
	addr4(a, 3);
	ucm_neigh_lookup(n, false, a, mac, t, &asks);
	ucm_neigh_kick(n);
	UT_ASSERT(take_all(n, got, 4) == 1, "the new one's question");
	UT_ASSERT(ucm_neigh_peek(n, false, a, mac) == -EAGAIN, "peek: asked");
	ucm_neigh_put_answer(n, false, got[0], -EAGAIN, NULL);
	ucm_neigh_sync(n, t);
	UT_ASSERT(ucm_neigh_peek(n, false, a, mac) == -ENOENT, "peek: given up");
	UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -EAGAIN, "still unknown");
	ucm_neigh_destroy(n);
	return 0;
}

/* A burst of new destinations: 24 questions at once, then one per ms,
 * and never more than 48 unanswered: the last 8 of the budget's 32 and 16
 * of the 64 places in flight are kept for the next hops in use, whose
 * refresh still goes when new destinations cannot. */
static int test_cache_bounds(void)
{
	struct ucm_neigh *n = ucm_neigh_create_detached(3);
	uint8_t a[4], hot[4], mac[6], got[128][16];
	uint64_t asks = 0, t = 1000 * MS;
	int k;

	UT_ASSERT(n, "create");
	ucm_neigh_sync(n, t);
	addr4(hot, 7);
	ucm_neigh_lookup(n, false, hot, mac, t, &asks);
	ucm_neigh_kick(n);
	UT_ASSERT(take_all(n, got, 128) == 1, "the hot one's question");
	ucm_neigh_put_answer(n, false, got[0], 0, MAC);
	asks = 0;
	t += 100 * MS;
	ucm_neigh_sync(n, t);
	UT_ASSERT(!ucm_neigh_lookup(n, false, hot, mac, t, &asks), "hot known");
	for (uint32_t i = 0; i < 500; i++) {
		addr4(a, 100 + i);
		UT_ASSERT(ucm_neigh_lookup(n, false, a, mac, t, &asks) == -EAGAIN, "miss");
	}
	UT_ASSERT(asks == 24, "%llu questions in a burst", (unsigned long long)asks);
	ucm_neigh_kick(n);
	UT_ASSERT(take_all(n, got, 128) == 24, "questions handed over");
	t += 10 * MS;
	ucm_neigh_sync(n, t);
	for (uint32_t i = 0; i < 500; i++) {
		addr4(a, 1000 + i);
		ucm_neigh_lookup(n, false, a, mac, t, &asks);
	}
	UT_ASSERT(asks == 34, "%llu questions after 10 ms", (unsigned long long)asks);
	t += 1000 * MS;
	ucm_neigh_sync(n, t);
	for (uint32_t i = 0; i < 500; i++) {
		addr4(a, 2000 + i);
		ucm_neigh_lookup(n, false, a, mac, t, &asks);
	}
	UT_ASSERT(asks == 48, "%llu questions unanswered", (unsigned long long)asks);
	ucm_neigh_kick(n);
	k = take_all(n, got, 128);
	UT_ASSERT(k == 24, "%d more questions", k);
	/* The hot one is due: its refresh takes a kept place. */
	UT_ASSERT(!ucm_neigh_lookup(n, false, hot, mac, t, &asks) && asks == 49,
		  "the refresh of a next hop in use was not asked");
	ucm_neigh_kick(n);
	UT_ASSERT(take_all(n, got + 24, 104) == 1 && !memcmp(got[24], hot, 4), "the refresh");
	/* Answers make room again. */
	for (int i = 0; i < 49; i++)
		ucm_neigh_put_answer(n, false, got[i % 25], -EAGAIN, NULL);
	ucm_neigh_sync(n, t);
	addr4(a, 5000);
	ucm_neigh_lookup(n, false, a, mac, t, &asks);
	UT_ASSERT(asks == 50, "no question after the answers");
	ucm_neigh_destroy(n);
	return 0;
}

/* 512 destinations in 1024 places (4-way sets): 90% stay at least. */
static int test_cache_capacity(void)
{
	struct ucm_neigh *n = ucm_neigh_create_detached(0x9e3779b97f4a7c15ull);
	uint8_t a[4], mac[6], got[64][16];
	uint64_t asks = 0, t = 1000 * MS;
	uint32_t hits = 0, next = 0;

	UT_ASSERT(n, "create");
	while (next < 512) {
		int k;

		ucm_neigh_sync(n, t);
		for (uint32_t i = 0; i < 32 && next < 512; i++) {
			uint64_t before = asks;

			addr4(a, next);
			ucm_neigh_lookup(n, false, a, mac, t, &asks);
			if (asks == before)
				break;	/* the budget's: next time */
			next++;
		}
		ucm_neigh_kick(n);
		k = take_all(n, got, 64);
		for (int i = 0; i < k; i++)
			ucm_neigh_put_answer(n, false, got[i], 0, MAC);
		t += 32 * MS;
	}
	ucm_neigh_sync(n, t);
	for (uint32_t i = 0; i < 512; i++) {
		addr4(a, i);
		hits += !ucm_neigh_lookup(n, false, a, mac, t, &asks);
	}
	UT_ASSERT(hits >= 460, "%u of 512 destinations cached", hits);
	ucm_neigh_destroy(n);
	return 0;
}

/*
 * 10,000 new destinations, 20 a ms for 5 s (a scan, or replies to spoofed
 * sources), while 128 known next hops are each looked up every 10 ms: the
 * kernel holds each new one's question for 1 s (a neighbour that never
 * answers), a refresh is answered at once. The next hops in use are never
 * missed nor evicted, each is asked about again every second or so, and
 * the questions stay within the budget (a ms each, 32 saved). (128 in 256
 * sets of 4: no set is full with this seed; a fifth in a set rotates, as
 * the next test shows.)
 */
#define FLOOD_HOT	128
#define FLOOD_NEW	10000
#define FLOOD_MS	5000

struct flood_q {
	uint8_t addr[16];
	uint64_t due;
};

static int test_cache_flood(void)
{
	struct ucm_neigh *n = ucm_neigh_create_detached(0xc0ffee);
	static struct flood_q held[64];
	uint64_t asks = 0, hot_asks = 0, t = 1000 * MS, t0, req, evicted, refused;
	uint32_t nheld = 0, misses = 0, next = 0;
	uint8_t a[4], mac[6], got[64][16];
	int k;

	UT_ASSERT(n, "create");
	/* The next hops in use, known first. */
	for (uint32_t known = 0; known < FLOOD_HOT; t += MS) {
		ucm_neigh_sync(n, t);
		known = 0;
		for (uint32_t i = 0; i < FLOOD_HOT; i++) {
			addr4(a, i);
			known += !ucm_neigh_lookup(n, false, a, mac, t, &asks);
		}
		ucm_neigh_kick(n);
		k = take_all(n, got, 64);
		for (int j = 0; j < k; j++)
			ucm_neigh_put_answer(n, false, got[j], 0, MAC);
		UT_ASSERT(t < 2000 * MS, "only %u of %u known after 1 s", known, FLOOD_HOT);
	}
	asks = 0;
	t0 = t;
	for (; t < t0 + FLOOD_MS * MS; t += MS) {
		uint32_t step = (uint32_t)((t - t0) / MS);

		ucm_neigh_sync(n, t);
		for (uint32_t i = 0; i < 20; i++, next++) {
			addr4(a, 0x10000 + next % FLOOD_NEW);
			ucm_neigh_lookup(n, false, a, mac, t, &asks);
		}
		/* A tenth of the hot ones each ms: each every 10 ms. */
		for (uint32_t i = step % 10; i < FLOOD_HOT; i += 10) {
			addr4(a, i);
			misses += ucm_neigh_lookup(n, false, a, mac, t, &asks) != 0;
		}
		ucm_neigh_kick(n);
		k = take_all(n, got, 64);
		for (int j = 0; j < k; j++) {
			uint32_t be;

			memcpy(&be, got[j], 4);
			if (ntohl(be) - 0x0a000000 < FLOOD_HOT) {
				ucm_neigh_put_answer(n, false, got[j], 0, MAC);
				hot_asks++;
				continue;
			}
			UT_ASSERT(nheld < 64, "more than 64 questions unanswered");
			memcpy(held[nheld].addr, got[j], 16);
			held[nheld++].due = t + 1000 * MS;
		}
		for (uint32_t j = 0; j < nheld;) {
			if (held[j].due > t) {
				j++;
				continue;
			}
			ucm_neigh_put_answer(n, false, held[j].addr, -EAGAIN, NULL);
			held[j] = held[--nheld];
		}
	}
	ucm_neigh_counts(n, &req, &evicted, &refused);
	printf("# flood: %llu questions in %u ms (%llu refreshes of the %u in use), "
	       "%u misses of those, %llu evicted, %llu new ones refused a place\n",
	       (unsigned long long)asks, FLOOD_MS, (unsigned long long)hot_asks, FLOOD_HOT,
	       misses, (unsigned long long)evicted, (unsigned long long)refused);
	UT_ASSERT(misses == 0, "%u lookups of next hops in use missed", misses);
	UT_ASSERT(evicted == 0, "%llu next hops in use evicted", (unsigned long long)evicted);
	UT_ASSERT(asks <= 32 + FLOOD_MS, "%llu questions in %u ms", (unsigned long long)asks,
		  FLOOD_MS);
	UT_ASSERT(hot_asks >= FLOOD_HOT * (FLOOD_MS / 1000 - 1),
		  "%llu refreshes of %u next hops in %u ms", (unsigned long long)hot_asks,
		  FLOOD_HOT, FLOOD_MS);
	ucm_neigh_destroy(n);
	return 0;
}

/*
 * Six destinations in use that fall in one set of four ways, each looked
 * up every 10 ms and answered at once: none is starved, each is known at
 * some time, and the set gives a way in use up once per 100 ms at most
 * (the two that are out come again; a one-off newcomer would not).
 */
#define CROWD		6

static int test_cache_crowded_set(void)
{
	struct ucm_neigh *n = ucm_neigh_create_detached(0xfeed);
	uint64_t asks = 0, t = 1000 * MS, t0 = t, req, evicted, refused, lookups = 0;
	uint32_t crowd[CROWD], k = 0, hits = 0, seen[CROWD] = {}, si;
	uint8_t a[4], mac[6], got[64][16];

	UT_ASSERT(n, "create");
	addr4(a, 0);
	si = ucm_neigh_set_of(n, false, a);
	for (uint32_t i = 0; k < CROWD && i < 100000; i++) {
		addr4(a, i);
		if (ucm_neigh_set_of(n, false, a) == si)
			crowd[k++] = i;
	}
	UT_ASSERT(k == CROWD, "%u addresses in one set", k);
	for (; t < t0 + FLOOD_MS * MS; t += MS) {
		uint32_t step = (uint32_t)((t - t0) / MS);
		int m;

		ucm_neigh_sync(n, t);
		for (uint32_t i = 0; i < CROWD; i++) {
			if ((step + i) % 10)
				continue;	/* each every 10 ms, apart */
			addr4(a, crowd[i]);
			lookups++;
			if (!ucm_neigh_lookup(n, false, a, mac, t, &asks)) {
				seen[i]++;
				hits++;
			}
		}
		ucm_neigh_kick(n);
		m = take_all(n, got, 64);
		for (int j = 0; j < m; j++)
			ucm_neigh_put_answer(n, false, got[j], 0, MAC);
	}
	ucm_neigh_counts(n, &req, &evicted, &refused);
	printf("# crowded set: %u of %llu lookups hit, %llu questions, %llu evicted, "
	       "known %u %u %u %u %u %u times\n", hits, (unsigned long long)lookups,
	       (unsigned long long)asks, (unsigned long long)evicted, seen[0], seen[1],
	       seen[2], seen[3], seen[4], seen[5]);
	for (uint32_t i = 0; i < CROWD; i++)
		UT_ASSERT(seen[i], "destination %u of %u in one set never known", i, CROWD);
	UT_ASSERT(evicted <= FLOOD_MS / 100 + 1, "%llu ways in use given up in %u ms",
		  (unsigned long long)evicted, FLOOD_MS);
	ucm_neigh_destroy(n);
	return 0;
}

/* ---- a real resolver thread ------------------------------------------------------ */

/* Loopback addresses through lo: local, so no route through the NIC, as
 * the kernel answers without root. The worker never waits: it looks
 * again per batch until the answer is in. */
/* The thread hook: on the resolver's own thread, with its index, once
 * before it answers anything. Release pairs with the test's acquire. */
struct init_seen {
	pthread_t caller;
	int calls;		/* atomic */
	int other_thread;
	uint32_t idx;
};

static void resolver_init(void *ctx, uint32_t idx)
{
	struct init_seen *s = ctx;

	s->other_thread = !pthread_equal(pthread_self(), s->caller);
	s->idx = idx;
	__atomic_fetch_add(&s->calls, 1, __ATOMIC_RELEASE);
}

/* A sandbox without netlink (seccomp, an LSM): a skip, not a failure;
 * any other error is one. */
static bool netlink_denied(int err)
{
	return err == EPERM || err == EACCES || err == EAFNOSUPPORT || err == EPROTONOSUPPORT;
}

static int test_resolver_thread(void)
{
	static const uint8_t lo6[16] = { [15] = 1 };
	uint8_t lo4[4] = { 127, 0, 0, 1 }, mac[6];
	struct init_seen seen = { .caller = pthread_self() };
	struct ucm_neigh *n = ucm_neigh_create(1, resolver_init, &seen, 7);
	uint64_t asks = 0, deadline = ut_ms_now() + 2000, t0;
	int r4 = -EAGAIN, r6 = -EAGAIN;

	if (!n && netlink_denied(errno)) {
		ut_skip_reason("no netlink socket: %s", strerror(errno));
		return UT_SKIP;
	}
	UT_ASSERT(n, "ucm_neigh_create: %s", strerror(errno));
	while ((r4 == -EAGAIN || r6 == -EAGAIN) && ut_ms_now() < deadline) {
		uint64_t now = ucm_now_ns();

		ucm_neigh_sync(n, now);
		r4 = ucm_neigh_lookup(n, false, lo4, mac, now, &asks);
		r6 = ucm_neigh_lookup(n, true, lo6, mac, now, &asks);
		ucm_neigh_kick(n);
		ut_msleep(1);
	}
	UT_ASSERT(r4 == -ENETUNREACH, "127.0.0.1 via lo: %d", r4);
	UT_ASSERT(r6 == -ENETUNREACH || r6 == -EAFNOSUPPORT || r6 == -ENETDOWN,
		  "::1 via lo: %d", r6);
	UT_ASSERT(asks >= 2, "%llu questions for two addresses", (unsigned long long)asks);
	UT_ASSERT(__atomic_load_n(&seen.calls, __ATOMIC_ACQUIRE) == 1,
		  "the thread hook ran %d times before the answers (want once)", seen.calls);
	UT_ASSERT(seen.other_thread && seen.idx == 7,
		  "the hook ran on the %s thread with index %u (want the resolver's, 7)",
		  seen.other_thread ? "resolver's" : "caller's", seen.idx);
	t0 = ut_ms_now();
	ucm_neigh_destroy(n);
	UT_ASSERT(ut_ms_now() - t0 < 500, "destroy took %llu ms",
		  (unsigned long long)(ut_ms_now() - t0));
	return 0;
}

/* 300 destinations through the rings many times round, the worker and
 * the resolver on their own threads (TSan checks the pairs): every one
 * answered, none twice at once. */
static int test_resolver_many(void)
{
	struct ucm_neigh *n = ucm_neigh_create(1, NULL, NULL, 0);
	uint64_t asks = 0, deadline = ut_ms_now() + 5000;
	uint32_t done = 0, bad = 0;
	uint8_t mac[6], a[4];
	int ret[300];

	if (!n && netlink_denied(errno)) {
		ut_skip_reason("no netlink socket: %s", strerror(errno));
		return UT_SKIP;
	}
	UT_ASSERT(n, "ucm_neigh_create: %s", strerror(errno));
	for (int i = 0; i < 300; i++)
		ret[i] = -EAGAIN;
	while (done < 300 && ut_ms_now() < deadline) {
		uint64_t now = ucm_now_ns();

		ucm_neigh_sync(n, now);
		done = 0;
		for (int i = 0; i < 300; i++) {
			a[0] = 127;
			a[1] = 1;
			a[2] = i >> 8;
			a[3] = i & 0xff;
			if (ret[i] == -EAGAIN)
				ret[i] = ucm_neigh_lookup(n, false, a, mac, now, &asks);
			done += ret[i] != -EAGAIN;
		}
		ucm_neigh_kick(n);
		ut_msleep(1);
	}
	for (int i = 0; i < 300; i++)
		bad += ret[i] != -ENETUNREACH;
	ucm_neigh_destroy(n);
	UT_ASSERT(done == 300, "%u of 300 answered in 5 s", done);
	UT_ASSERT(!bad, "%u answers not -ENETUNREACH", bad);
	UT_ASSERT(asks >= 300 && asks < 400, "%llu questions for 300 addresses",
		  (unsigned long long)asks);
	return 0;
}

/* ---- the netdev family's replies (io/netdev.c) ---------------------------- */

/*
 * The kernel refusing to resolve a next hop is an answer, not a wait: in
 * a user namespace of its own (all capabilities there, none over the
 * network namespace) a child's NTF_USE gets -EPERM back, where without
 * the ACK the question was held a second for nothing.
 */
static int said_cap;

static int catch_print(enum ucm_log_level level, const char *fmt, va_list args)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, args);
	if (level == UCM_LOG_WARN && strstr(line, "127.0.0.2") && strstr(line, "CAP_NET_ADMIN"))
		said_cap++;
	return 0;
}

static int test_use_refused(void)
{
	static struct neigh_nl nl;
	uint8_t hop[4] = { 127, 0, 0, 2 };
	int fds[2], res[3] = { 0, 0, 0 }, status;
	pid_t pid;

	UT_ASSERT(!pipe(fds), "pipe: %s", strerror(errno));
	pid = fork();
	UT_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		int r[3] = { 1, 0, 0 };

		close(fds[0]);
		ucm_set_print(catch_print);
		nl.fd = -1;
		if (unshare(CLONE_NEWUSER)) {
			r[1] = errno;
		} else if ((r[1] = -ucm_neigh_nl_open(&nl, 1)) == 0) {
			r[0] = 0;
			r[1] = ucm_neigh_nl_use(&nl, false, hop);
			ucm_neigh_nl_use(&nl, false, hop);	/* said once */
			r[2] = said_cap;
		}
		if (write(fds[1], r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], res, sizeof(res)) != sizeof(res))
		res[0] = 2;
	close(fds[0]);
	waitpid(pid, &status, 0);
	UT_ASSERT(res[0] != 2 && WIFEXITED(status) && !WEXITSTATUS(status), "the child failed");
	if (res[0] == 1 && (res[1] == EPERM || res[1] == EINVAL || res[1] == ENOSPC ||
			    netlink_denied(res[1]))) {
		ut_skip_reason("no user namespace or netlink socket for the child: %s%s",
			       strerror(res[1]), res[1] == EINVAL ?
			       " (unshare() refuses a process with threads: a sanitizer's)" : "");
		return UT_SKIP;
	}
	UT_ASSERT(res[0] == 0, "netlink socket: %s", strerror(res[1]));
	UT_ASSERT(res[1] == -EPERM, "NTF_USE without CAP_NET_ADMIN: %d (want -EPERM)", res[1]);
	UT_ASSERT(res[2] == 1, "the refusal said %d times naming CAP_NET_ADMIN (want once)", res[2]);
	return 0;
}

/* A generic netlink reply of family @type: its header, then attributes. */
static struct nlmsghdr *gnl_msg(struct msgbuf *b, uint16_t type)
{
	struct genlmsghdr g = { .cmd = 1, .version = 1 };

	b->len = 0;
	return msg_start(b, type, 2, &g, GENL_HDRLEN);
}

static int test_netdev_parse(void)
{
	uint64_t xdp = 0x7f, xsk = UCM_NETDEV_XSK_TX_CHECKSUM, got = 0;
	uint32_t ifx = IFX, short4 = 2, zc = 5, segs = 0;
	struct msgbuf b;
	struct nlmsghdr *h;
	uint16_t id = 0, fam = 0x21;

	h = gnl_msg(&b, GENL_ID_CTRL);
	ucm_nl_put_attr(h, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	ucm_nl_put_attr(h, CTRL_ATTR_FAMILY_ID, &fam, sizeof(fam));
	UT_ASSERT(ucm_netdev_parse_family(h, &id) == 0 && id == 0x21, "family id %u", id);
	h = gnl_msg(&b, GENL_ID_CTRL);
	ucm_nl_put_attr(h, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	UT_ASSERT(ucm_netdev_parse_family(h, &id) == -EPROTO, "a reply without an id taken");

	/* ifindex, xdp-features (3), xsk-features (6): 4-byte aligned u64s */
	h = gnl_msg(&b, fam);
	ucm_nl_put_attr(h, 1, &ifx, sizeof(ifx));
	ucm_nl_put_attr(h, 3, &xdp, sizeof(xdp));
	ucm_nl_put_attr(h, 6, &xsk, sizeof(xsk));
	UT_ASSERT(ucm_netdev_parse_xsk(h, &got) == 0 && got == xsk, "xsk-features 0x%llx",
		  (unsigned long long)got);
	UT_ASSERT(ucm_netdev_parse_xdp(h, &got) == 0 && got == xdp, "xdp-features 0x%llx",
		  (unsigned long long)got);
	h = gnl_msg(&b, fam);	/* a kernel before 6.8 */
	ucm_nl_put_attr(h, 1, &ifx, sizeof(ifx));
	ucm_nl_put_attr(h, 3, &xdp, sizeof(xdp));
	UT_ASSERT(ucm_netdev_parse_xsk(h, &got) == -EOPNOTSUPP, "features where none are");
	h = gnl_msg(&b, fam);	/* too short to be a u64 */
	ucm_nl_put_attr(h, 6, &short4, sizeof(short4));
	UT_ASSERT(ucm_netdev_parse_xsk(h, &got) == -EPROTO, "a short xsk-features taken");
	UT_ASSERT(ucm_netdev_parse_xdp(h, &got) == -EPROTO, "a reply without xdp-features taken");
	ucm_nl_put_attr(h, 3, &short4, sizeof(short4));
	UT_ASSERT(ucm_netdev_parse_xdp(h, &got) == -EPROTO, "a short xdp-features taken");
	/* xdp-zc-max-segs (4), a u32; absent before 6.6 */
	h = gnl_msg(&b, fam);
	ucm_nl_put_attr(h, 1, &ifx, sizeof(ifx));
	ucm_nl_put_attr(h, 4, &zc, sizeof(zc));
	UT_ASSERT(ucm_netdev_parse_zc_segs(h, &segs) == 0 && segs == zc, "zc-max-segs %u", segs);
	h = gnl_msg(&b, fam);
	ucm_nl_put_attr(h, 1, &ifx, sizeof(ifx));
	UT_ASSERT(ucm_netdev_parse_zc_segs(h, &segs) == -EOPNOTSUPP, "segs where none are");
	h = gnl_msg(&b, fam);
	ucm_nl_put_attr(h, 4, &zc, 2);
	UT_ASSERT(ucm_netdev_parse_zc_segs(h, &segs) == -EPROTO, "a short zc-max-segs taken");
	h = gnl_msg(&b, fam);	/* an attribute running past the message */
	ucm_nl_put_attr(h, 3, &xdp, sizeof(xdp));
	((struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN))->nla_len = 200;
	UT_ASSERT(ucm_netdev_parse_xsk(h, &got) == -EPROTO, "an attribute past the end walked");
	return 0;
}

/* The kernel's own answer about lo (no root needed): no TX metadata
 * support there, and it takes no redirected frames; an unknown device is
 * -ENODEV. A kernel before 6.8 cannot
 * say (-EOPNOTSUPP), which is an answer too. */
/* An attribute @type of @len bytes at @data into @p: its aligned size. */
static size_t attr_put(char *p, uint16_t type, const void *data, size_t len)
{
	struct nlattr a = { .nla_len = NLA_HDRLEN + len, .nla_type = type };

	memcpy(p, &a, sizeof(a));
	memcpy(p + NLA_HDRLEN, data, len);
	return NLA_ALIGN(a.nla_len);
}

/* An RTM_NEWLINK whose AF_SPEC holds AF_INET's settings and, with @nconf
 * of them (0: none, as without IPv6), AF_INET6's, disable_ipv6 @off. */
static struct nlmsghdr *link_msg(struct msgbuf *b, int32_t off, size_t nconf)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = IFX };
	int32_t conf[64] = { 0 }, four = 4;
	char in4[64], in6[512], spec[1024];
	size_t n4, n6, ns = 0;

	b->len = 0;
	conf[DEVCONF_DISABLE_IPV6] = off;
	n4 = attr_put(in4, IFLA_INET_CONF, &four, sizeof(four));
	ns += attr_put(spec + ns, AF_INET, in4, n4);
	if (nconf) {
		n6 = attr_put(in6, IFLA_INET6_CONF, conf, nconf * sizeof(conf[0]));
		ns += attr_put(spec + ns, AF_INET6, in6, n6);
	}
	ucm_nl_put_attr(msg_start(b, RTM_NEWLINK, 1, &ifi, sizeof(ifi)), IFLA_AF_SPEC, spec, ns);
	return (struct nlmsghdr *)b->buf;
}

/* A link's IPv6 setting from its record: off, on, no IPv6 at all (off),
 * its settings too short, an attribute past the message. */
static int test_netdev_ipv6_parse(void)
{
	struct msgbuf b;
	struct nlmsghdr *h;

	UT_ASSERT(ucm_netdev_parse_ipv6_off(link_msg(&b, 1, 64)) == UCM_NETDEV_IPV6_OFF,
		  "off taken for on");
	UT_ASSERT(ucm_netdev_parse_ipv6_off(link_msg(&b, 0, 64)) == 0, "on taken for off");
	UT_ASSERT(ucm_netdev_parse_ipv6_off(link_msg(&b, 0, 0)) == UCM_NETDEV_IPV6_NONE,
		  "no IPv6 taken for on, or for off");
	UT_ASSERT(ucm_netdev_parse_ipv6_off(link_msg(&b, 1, DEVCONF_DISABLE_IPV6)) == -EPROTO,
		  "settings short of disable_ipv6 taken");
	h = link_msg(&b, 1, 64);
	h->nlmsg_len -= 8;	/* the last attribute runs past the message */
	UT_ASSERT(ucm_netdev_parse_ipv6_off(h) == -EPROTO, "a cut record taken");
	return 0;
}

static int test_netdev_live(void)
{
	struct ucm_netdev_info nd = { .xdp_features = ~0ull, .xsk_features = ~0ull };
	int err = ucm_netdev_info(1, &nd);

	UT_ASSERT(err == 0 || err == -EOPNOTSUPP, "lo: %d (%s)", err, strerror(-err));
	UT_ASSERT(err || !(nd.xdp_features & UCM_NETDEV_XDP_NDO_XMIT),
		  "lo takes redirected frames: 0x%llx", (unsigned long long)nd.xdp_features);
	if (!err)
		err = nd.xsk_err;
	UT_ASSERT(err == 0 || err == -EOPNOTSUPP, "lo's xsk-features: %d (%s)", err, strerror(-err));
	UT_ASSERT(err || !(nd.xsk_features & UCM_NETDEV_XSK_TX_CHECKSUM),
		  "lo takes TX checksum requests: 0x%llx", (unsigned long long)nd.xsk_features);
	if (!err) {
		err = ucm_netdev_info(0x7ffffff0, &nd);
		UT_ASSERT(err == -ENODEV, "no such device: %d (%s)", err, strerror(-err));
	}
	/* rtnetlink's record of lo: IPv6 on or off, read; none of no device */
	err = ucm_netdev_ipv6_off(1);
	UT_ASSERT(err >= 0 && err <= UCM_NETDEV_IPV6_NONE, "lo's IPv6: %d (%s)", err,
		  err < 0 ? strerror(-err) : "");
	err = ucm_netdev_ipv6_off(0x7ffffff0);
	UT_ASSERT(err == -ENODEV, "IPv6 of no such device: %d (%s)", err, strerror(-err));
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_find_good),
	UT_CASE(test_find_truncated),
	UT_CASE(test_find_wrong_type),
	UT_CASE(test_find_error),
	UT_CASE(test_find_foreign),
	UT_CASE(test_parse_route),
	UT_CASE(test_parse_neigh),
	UT_CASE(test_dump_preload),
	UT_CASE(test_cache_answer),
	UT_CASE(test_cache_late_answer),
	UT_CASE(test_cache_negative),
	UT_CASE(test_cache_bounds),
	UT_CASE(test_cache_capacity),
	UT_CASE(test_cache_flood),
	UT_CASE(test_cache_crowded_set),
	UT_CASE(test_resolver_thread),
	UT_CASE(test_resolver_many),
	UT_CASE(test_use_refused),
	UT_CASE(test_netdev_parse),
	UT_CASE(test_netdev_ipv6_parse),
	UT_CASE(test_netdev_live),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
