// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The next-hop resolver's netlink reply parsers (lib/io/neigh_nl.c) on
 * arbitrary datagrams, as its resolver thread calls them: the reply to a
 * question found in a datagram (ucm_neigh_nl_find()), then read as a route
 * or a neighbour entry (and as a dump's entry, ucm_neigh_parse_entry());
 * and the datagram as one of the set-up dump (ucm_neigh_nl_walk_dump()).
 *
 * Input: a control byte, the question's sequence number and the NIC's
 * ifindex (4 bytes each, host order), then the datagram, copied to a heap
 * block of its exact size (ASan sees a read past it).
 *   control: bit 0 a neighbour question (else a route), bit 1 IPv6,
 *            bit 2 the datagram comes from a process (nl_pid 4242), not
 *            the kernel, bit 3 an ACK is asked for (NTF_USE's)
 * The seeds (tests/fuzz/corpus/fuzz-neigh/) are well-formed replies that the
 * fuzzer mutates.
 *
 * The oracle is neigh.h's contract: find returns 1, 0, -EPROTO or the
 * kernel's -errno, and never 1 for another sender; its message lies whole
 * inside the datagram, of the asked type and sequence number, long enough
 * for its fixed header. A route is 0, -ENETUNREACH or -EPROTO, and its hop
 * the destination or a gateway attribute's address; 0 only for a unicast
 * route of the asked family through the NIC, from a table. A neighbour
 * entry 0 or 1, -EAGAIN or -EPROTO, and its MAC a 6-byte link-layer
 * attribute's; 0 or 1 only for the asked family's entry on the NIC in a
 * state with an address, 1 for a stale one. A dump's entry is 0 only for
 * a station's on the NIC in such a state, its address and unicast MAC
 * attributes'; a dump's walk gives as many entries as it counts. The
 * parsers write nothing past the address's length.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "io/neigh.h"
#include "fuzz.h"

#define HDR_LEN	9	/* control, sequence number, ifindex */

static const uint8_t DST4[4] = { 192, 0, 2, 9 };
static const uint8_t DST6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 9 };

/* Neighbour states with an address (the kernel's NUD_VALID). */
#define NUD_HAS_ADDR	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | \
			 NUD_STALE | NUD_DELAY)

/* Does message @h hold an attribute of @type whose payload is @want
 * (@want NULL: any 4-byte payload but 0)? An attribute walk of the
 * oracle's own, bounded by the message. */
static bool has_attr(const struct nlmsghdr *h, uint16_t type, const uint8_t *want,
		     uint32_t len)
{
	const uint8_t *m = (const uint8_t *)h;
	uint32_t off = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct rtmsg)));
	static const uint8_t zero[4];

	/* rtmsg and ndmsg are both 12 bytes: the attributes start alike. */
	_Static_assert(sizeof(struct rtmsg) == sizeof(struct ndmsg), "fixed headers");
	while (off + 4 <= h->nlmsg_len) {
		uint16_t alen, atype;

		memcpy(&alen, m + off, 2);
		memcpy(&atype, m + off + 2, 2);
		if (alen < 4 || off + alen > h->nlmsg_len)
			return false;
		if (atype == type && !want && alen == 8 && memcmp(m + off + 4, zero, 4))
			return true;
		if (atype == type && want && alen - 4u == len && !memcmp(m + off + 4, want, len))
			return true;
		off += (alen + 3u) & ~3u;
	}
	return false;
}

static void check_route(const struct nlmsghdr *h, int ifindex, bool v6)
{
	uint32_t alen = v6 ? 16 : 4;
	const uint8_t *dst = v6 ? DST6 : DST4;
	uint8_t hop[32], via[2 + 16];
	const struct rtmsg *rt;
	bool hv6 = !v6;
	uint16_t fam;
	int ret;

	memset(hop, 0xa5, sizeof(hop));
	ret = ucm_neigh_parse_route(h, ifindex, v6, dst, hop, &hv6);
	CHECK(ret == 0 || ret == -ENETUNREACH || ret == -EPROTO);
	/* An IPv6 hop (RTA_VIA) may be one of an IPv4 route: 16 bytes. */
	for (uint32_t i = 16; i < sizeof(hop); i++)
		CHECK(hop[i] == 0xa5);
	if (ret)
		return;
	/*
	 * A route is ours only when it is a unicast one of the asked family
	 * through the NIC (an RTA_OIF of its ifindex; 0, no NIC, is what no
	 * RTA_OIF reads as), from a table (the header's or an RTA_TABLE's):
	 * the kernel's on-link guess for an oif without a route has none.
	 */
	rt = NLMSG_DATA(h);
	CHECK(rt->rtm_family == (v6 ? AF_INET6 : AF_INET));
	CHECK(rt->rtm_type == RTN_UNICAST);
	CHECK(!ifindex || has_attr(h, RTA_OIF, (const uint8_t *)&ifindex, sizeof(ifindex)));
	CHECK(rt->rtm_table != RT_TABLE_UNSPEC || has_attr(h, RTA_TABLE, NULL, 4));
	/* The hop is the destination, a gateway of the route's family, or
	 * a via of the family it says. */
	fam = hv6 ? AF_INET6 : AF_INET;
	memcpy(via, &fam, sizeof(fam));
	memcpy(via + sizeof(fam), hop, hv6 ? 16 : 4);
	if (hv6 == v6)
		CHECK(!memcmp(hop, dst, alen) || has_attr(h, RTA_GATEWAY, hop, alen) ||
		      has_attr(h, RTA_VIA, via, sizeof(fam) + alen));
	else
		CHECK(has_attr(h, RTA_VIA, via, sizeof(fam) + (hv6 ? 16 : 4)));
}

static void check_neigh(const struct nlmsghdr *h, int ifindex, bool v6)
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	uint8_t mac[16];
	int ret;

	memset(mac, 0xa5, sizeof(mac));
	ret = ucm_neigh_parse_neigh(h, ifindex, v6, mac);
	CHECK(ret == 0 || ret == 1 || ret == -EAGAIN || ret == -EPROTO);
	for (uint32_t i = 6; i < sizeof(mac); i++)
		CHECK(mac[i] == 0xa5);
	if (ret != 0 && ret != 1)
		return;
	CHECK(has_attr(h, NDA_LLADDR, mac, 6));
	/* The asked family's entry on the NIC, in a state with an address;
	 * 1 says a stale one. */
	CHECK(nd->ndm_family == (v6 ? AF_INET6 : AF_INET) && nd->ndm_ifindex == ifindex);
	CHECK(nd->ndm_state & NUD_HAS_ADDR);
	CHECK((ret == 1) == !!(nd->ndm_state & NUD_STALE));
}

/* A dump's entry: usable only when it is a station's (unicast, a unicast
 * MAC) on the NIC, in a state with an address, of either family, with
 * its address and MAC from its attributes. */
static void check_entry(const struct nlmsghdr *h, int ifindex)
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	uint8_t addr[32], mac[16];
	bool v6 = false;
	uint32_t i;
	int ret;

	memset(addr, 0xa5, sizeof(addr));
	memset(mac, 0xa5, sizeof(mac));
	ret = ucm_neigh_parse_entry(h, ifindex, &v6, addr, mac);
	CHECK(ret == 0 || ret == -EAGAIN || ret == -EPROTO);
	for (i = 16; i < sizeof(addr); i++)
		CHECK(addr[i] == 0xa5);
	for (i = 6; i < sizeof(mac); i++)
		CHECK(mac[i] == 0xa5);
	if (ret)
		return;
	CHECK(h->nlmsg_type == RTM_NEWNEIGH);
	CHECK(nd->ndm_family == (v6 ? AF_INET6 : AF_INET) && nd->ndm_ifindex == ifindex);
	CHECK((nd->ndm_state & NUD_HAS_ADDR) && nd->ndm_type == RTN_UNICAST);
	CHECK(has_attr(h, NDA_DST, addr, v6 ? 16 : 4));
	CHECK(has_attr(h, NDA_LLADDR, mac, 6) && !(mac[0] & 1));
}

struct dump {
	const uint8_t *buf;
	size_t len;
	uint32_t given;
};

/* An entry a dump gives: a unicast MAC, it and the address bytes of the
 * datagram. */
static void dump_entry(void *ctx, bool v6, const uint8_t *addr, const uint8_t *mac)
{
	struct dump *d = ctx;

	CHECK(!(mac[0] & 1));
	CHECK(memmem(d->buf, d->len, addr, v6 ? 16 : 4) && memmem(d->buf, d->len, mac, 6));
	d->given++;
}

/* The datagram as one of a dump for question @seq: the entries counted as
 * given, each at least a message's fixed header long; an error the
 * walk's (-EPROTO) or one a message of the datagram says. */
static void check_dump(const uint8_t *buf, size_t len, uint32_t seq, int ifindex)
{
	struct dump d = { .buf = buf, .len = len };
	int ret;

	ret = ucm_neigh_nl_walk_dump(buf, len, seq, ifindex, dump_entry, &d);
	if (ret < 0) {
		CHECK(ret == -EPROTO || memmem(buf, len, &ret, sizeof(ret)));
		return;
	}
	CHECK((uint32_t)(ret & ~UCM_NEIGH_DUMP_DONE) == d.given);
	CHECK(d.given * NLMSG_LENGTH(sizeof(struct ndmsg)) <= len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct nlmsghdr *msg = NULL;
	bool neigh, v6, foreign;
	uint32_t seq, pid;
	uint16_t type;
	size_t len, hdr, off;
	int ifindex, ret;
	uint8_t *buf;

	if (size < HDR_LEN)
		return 0;
	neigh = data[0] & 1;
	v6 = data[0] & 2;
	foreign = data[0] & 4;
	memcpy(&seq, data + 1, 4);
	memcpy(&ifindex, data + 5, 4);
	len = size - HDR_LEN;
	buf = malloc(len ? len : 1);
	CHECK(buf);
	memcpy(buf, data + HDR_LEN, len);

	pid = foreign ? 4242 : 0;
	type = neigh ? RTM_NEWNEIGH : RTM_NEWROUTE;
	hdr = neigh ? sizeof(struct ndmsg) : sizeof(struct rtmsg);
	if (data[0] & 8) {	/* an ACK asked for (NTF_USE) */
		type = NLMSG_ERROR;
		hdr = sizeof(struct nlmsgerr);
	}
	ret = ucm_neigh_nl_find(buf, len, pid, seq, type, hdr, &msg);
	CHECK(ret == 1 || ret == 0 || ret == -EPROTO || (ret < 0 && ret >= -4095));
	if (foreign)
		CHECK(ret == 0);
	if (ret == 1) {
		off = (const uint8_t *)msg - buf;
		CHECK((const uint8_t *)msg >= buf && off < len && off % NLMSG_ALIGNTO == 0);
		CHECK(msg->nlmsg_len >= NLMSG_LENGTH(hdr) && msg->nlmsg_len <= len - off);
		CHECK(msg->nlmsg_type == type && msg->nlmsg_seq == seq);
		if (type == NLMSG_ERROR) {
			CHECK(((const struct nlmsgerr *)NLMSG_DATA(msg))->error == 0);
		} else if (neigh) {
			check_neigh(msg, ifindex, v6);
			check_entry(msg, ifindex);
		} else {
			check_route(msg, ifindex, v6);
		}
	}
	/* The set-up dump's walk reads the kernel's datagrams only: no
	 * sender to tell. */
	check_dump(buf, len, seq, ifindex);
	free(buf);
	return 0;
}
