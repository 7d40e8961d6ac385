// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Next hops from the kernel (see neigh.h): a direct-mapped cache in front
 * of two netlink requests, RTM_GETROUTE (oif = the NIC) and RTM_GETNEIGH.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "internal.h"
#include "neigh.h"

#define NEIGH_SLOTS	1024		/* destinations a worker sends to at once (40 KiB) */
#define NEIGH_TTL_NS	1000000000ull	/* follow the kernel's table every second */
#define NEIGH_NEG_NS	50000000ull	/* an unresolved one: ask again after 50 ms */
#define NL_BUF		8192
/* Neighbour states with a usable address. */
#define NUD_USABLE	(NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | \
			 NUD_PERMANENT | NUD_NOARP)

struct neigh_entry {
	uint8_t addr[16];
	uint8_t mac[6];
	bool used, v6, known;
	uint64_t expires;
};

/* Concurrency contract: one worker's, like the tun read path using it. */
struct ucm_neigh {
	int fd;
	int ifindex;
	uint32_t seq;
	struct neigh_entry slot[NEIGH_SLOTS];
};

uint64_t ucm_neigh_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct ucm_neigh *ucm_neigh_create(int ifindex)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct ucm_neigh *n = calloc(1, sizeof(*n));
	int err;

	if (!n)
		return ucm_err_ptr(-ENOMEM);
	n->ifindex = ifindex;
	n->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (n->fd < 0 || bind(n->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		if (n->fd >= 0)
			close(n->fd);
		free(n);
		return ucm_err_ptr(err);
	}
	return n;
}

void ucm_neigh_destroy(struct ucm_neigh *n)
{
	if (!n)
		return;
	close(n->fd);
	free(n);
}

static void put_attr(struct nlmsghdr *h, int type, const void *data, int len)
{
	struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/*
 * Send @req and read the answer into @buf: the first message of our
 * sequence number. Return its length, or -errno (from NLMSG_ERROR too);
 * 0 for an acknowledgement.
 */
static int nl_talk(struct ucm_neigh *n, struct nlmsghdr *req, char *buf)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	ssize_t len;

	req->nlmsg_seq = ++n->seq;
	if (sendto(n->fd, req, req->nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *h;

		len = recv(n->fd, buf, NL_BUF, 0);
		if (len < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != n->seq)
				continue;	/* a late answer to an older question */
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			memmove(buf, h, h->nlmsg_len);
			return h->nlmsg_len;
		}
	}
}

/* The next hop towards @dst through the NIC: its gateway, or @dst. */
static int route_next_hop(struct ucm_neigh *n, bool v6, const uint8_t *dst, uint8_t *hop)
{
	char buf[NL_BUF];
	union {
		struct {
			struct nlmsghdr h;
			struct rtmsg r;
		};
		char buf[128];
	} req = {};
	int alen = v6 ? 16 : 4, len, oif = 0;
	uint32_t table;
	struct rtmsg *rt;
	struct rtattr *a;

	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.r));
	req.h.nlmsg_type = RTM_GETROUTE;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.r.rtm_family = v6 ? AF_INET6 : AF_INET;
	req.r.rtm_dst_len = alen * 8;
	put_attr((struct nlmsghdr *)req.buf, RTA_DST, dst, alen);
	put_attr((struct nlmsghdr *)req.buf, RTA_OIF, &n->ifindex, sizeof(n->ifindex));
	len = nl_talk(n, (struct nlmsghdr *)req.buf, buf);
	if (len <= 0)
		return len ? len : -EPROTO;
	rt = NLMSG_DATA(buf);
	table = rt->rtm_table;
	memcpy(hop, dst, alen);
	len = RTM_PAYLOAD((struct nlmsghdr *)buf);
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == (unsigned int)alen)
			memcpy(hop, RTA_DATA(a), alen);
		else if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == sizeof(int))
			memcpy(&oif, RTA_DATA(a), sizeof(oif));
		else if (a->rta_type == RTA_TABLE && RTA_PAYLOAD(a) == sizeof(uint32_t))
			memcpy(&table, RTA_DATA(a), sizeof(table));
	}
	/* With an output interface and no route through it, the kernel
	 * answers anyway, assuming the destination is on-link, from no
	 * table: that is no route through the NIC. A local address is none
	 * either. */
	if (rt->rtm_type != RTN_UNICAST || oif != n->ifindex || table == RT_TABLE_UNSPEC)
		return -ENETUNREACH;
	return 0;
}

/* A neighbour request about @hop on the NIC (@type, @flags, @ntf); the
 * answer in @buf, as nl_talk(). */
static int neigh_talk(struct ucm_neigh *n, int type, int flags, uint8_t ntf, bool v6,
		      const uint8_t *hop, char *buf)
{
	union {
		struct {
			struct nlmsghdr h;
			struct ndmsg nd;
		};
		char buf[128];
	} req = {};

	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.nd));
	req.h.nlmsg_type = type;
	req.h.nlmsg_flags = NLM_F_REQUEST | flags;
	req.nd.ndm_family = v6 ? AF_INET6 : AF_INET;
	req.nd.ndm_ifindex = n->ifindex;
	req.nd.ndm_flags = ntf;
	put_attr((struct nlmsghdr *)req.buf, NDA_DST, hop, v6 ? 16 : 4);
	return nl_talk(n, (struct nlmsghdr *)req.buf, buf);
}

/* The neighbour entry of @hop on the NIC: 0 with @mac (1: a stale one),
 * or -EAGAIN. */
static int neigh_get(struct ucm_neigh *n, bool v6, const uint8_t *hop, uint8_t *mac)
{
	char buf[NL_BUF];
	struct ndmsg *nd;
	struct rtattr *a;
	int len;

	len = neigh_talk(n, RTM_GETNEIGH, 0, 0, v6, hop, buf);
	if (len == -ENOENT)
		return -EAGAIN;
	if (len <= 0)
		return len ? len : -EPROTO;
	nd = NLMSG_DATA(buf);
	if (!(nd->ndm_state & NUD_USABLE))
		return -EAGAIN;
	len = RTM_PAYLOAD((struct nlmsghdr *)buf);
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			/* In use, but the kernel cannot see it: tell it, so
			 * a stale entry gets confirmed (or found gone). */
			return nd->ndm_state & NUD_STALE ? 1 : 0;
		}
	return -EAGAIN;
}

/* Make the kernel resolve @hop on the NIC, or confirm a stale entry
 * (NTF_USE: neigh_event_send(), what traffic through the kernel does). */
static void neigh_ask(struct ucm_neigh *n, bool v6, const uint8_t *hop)
{
	char buf[NL_BUF];

	/* best effort: the next miss asks again */
	neigh_talk(n, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_ACK, NTF_USE, v6, hop, buf);
}

int ucm_neigh_lookup(struct ucm_neigh *n, bool v6, const uint8_t *dst, uint8_t *mac,
		     uint64_t now, uint64_t *asks)
{
	int alen = v6 ? 16 : 4, err;
	uint32_t h = 2166136261u;
	struct neigh_entry *e;
	uint8_t hop[16];

	for (int i = 0; i < alen; i++)
		h = (h ^ dst[i]) * 16777619u;	/* FNV-1a */
	e = &n->slot[h % NEIGH_SLOTS];
	if (e->used && e->v6 == v6 && !memcmp(e->addr, dst, alen) && now < e->expires) {
		if (!e->known)
			return -EAGAIN;
		memcpy(mac, e->mac, 6);
		return 0;
	}
	(*asks)++;
	err = route_next_hop(n, v6, dst, hop);
	if (!err) {
		err = neigh_get(n, v6, hop, mac);
		if (err == -EAGAIN || err == 1)
			neigh_ask(n, v6, hop);
		if (err == 1)
			err = 0;
	}
	e->used = true;
	e->v6 = v6;
	memcpy(e->addr, dst, alen);
	e->known = !err;
	if (!err)
		memcpy(e->mac, mac, 6);
	e->expires = now + (err ? NEIGH_NEG_NS : NEIGH_TTL_NS);
	return err;
}
