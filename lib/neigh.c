// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Next hops from the kernel (see neigh.h): a direct-mapped cache in front
 * of two netlink requests, RTM_GETROUTE (oif = the NIC) and RTM_GETNEIGH.
 * Every reply is checked by the pure functions below before it is read:
 * from the kernel, of our sequence number, its length within the
 * datagram, of the expected type and long enough for its header.
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
#define NL_WAIT_MS	100		/* a netlink answer's wait, */
#define NL_READS	8		/* and the datagrams read for one */
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
	struct timeval tv = { .tv_usec = NL_WAIT_MS * 1000 };
	struct ucm_neigh *n = calloc(1, sizeof(*n));
	int err, one = 1;

	if (!n)
		return ucm_err_ptr(-ENOMEM);
	n->ifindex = ifindex;
	n->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (n->fd < 0)
		goto err_free;
	if (bind(n->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(n->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		goto err_close;
	/* Errors without a copy of the request (best effort). */
	setsockopt(n->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return n;

err_close:
	err = -errno;
	close(n->fd);
	free(n);
	return ucm_err_ptr(err);
err_free:
	err = -errno;
	free(n);
	return ucm_err_ptr(err);
}

void ucm_neigh_destroy(struct ucm_neigh *n)
{
	if (!n)
		return;
	close(n->fd);
	free(n);
}

/* ---- netlink replies: pure functions over a buffer ----------------------- */

int ucm_neigh_nl_find(const void *buf, size_t len, uint32_t pid, uint32_t seq,
		      uint16_t type, size_t hdr, const struct nlmsghdr **msg)
{
	const char *p = buf;

	if (pid != 0)
		return 0;	/* only the kernel answers our questions */
	while (len >= NLMSG_HDRLEN) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)p;
		size_t step;

		if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > len)
			return -EPROTO;
		if (h->nlmsg_seq == seq) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) ||
				    e->error >= 0 || e->error < -4095)
					return -EPROTO;	/* short, or an ACK */
				return e->error;
			}
			if (h->nlmsg_type != type || h->nlmsg_len < NLMSG_LENGTH(hdr))
				return -EPROTO;
			*msg = h;
			return 1;
		}
		step = NLMSG_ALIGN(h->nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

/* The attributes after a fixed header of @hdr bytes, and their length. */
static const struct rtattr *attrs(const struct nlmsghdr *h, size_t hdr, int *len)
{
	*len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(NLMSG_ALIGN(hdr));
	return (const struct rtattr *)((const char *)NLMSG_DATA(h) + NLMSG_ALIGN(hdr));
}

int ucm_neigh_parse_route(const struct nlmsghdr *h, int ifindex, bool v6,
			  const uint8_t *dst, uint8_t *hop)
{
	const struct rtmsg *rt = NLMSG_DATA(h);
	unsigned int alen = v6 ? 16 : 4;
	const struct rtattr *a;
	uint32_t table;
	int len, oif = 0;

	if (h->nlmsg_type != RTM_NEWROUTE || h->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)) ||
	    rt->rtm_family != (v6 ? AF_INET6 : AF_INET))
		return -EPROTO;
	table = rt->rtm_table;
	memcpy(hop, dst, alen);
	for (a = attrs(h, sizeof(*rt), &len); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == alen)
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
	if (rt->rtm_type != RTN_UNICAST || oif != ifindex || table == RT_TABLE_UNSPEC)
		return -ENETUNREACH;
	return 0;
}

int ucm_neigh_parse_neigh(const struct nlmsghdr *h, int ifindex, bool v6, uint8_t *mac)
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	const struct rtattr *a;
	int len;

	if (h->nlmsg_type != RTM_NEWNEIGH || h->nlmsg_len < NLMSG_LENGTH(sizeof(*nd)) ||
	    nd->ndm_family != (v6 ? AF_INET6 : AF_INET) || nd->ndm_ifindex != ifindex)
		return -EPROTO;
	if (!(nd->ndm_state & NUD_USABLE))
		return -EAGAIN;
	for (a = attrs(h, sizeof(*nd), &len); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			return nd->ndm_state & NUD_STALE ? 1 : 0;
		}
	return -EAGAIN;
}

/* ---- questions to the kernel ------------------------------------------------- */

/* A request: room for a header and two addresses. */
union nl_req {
	struct nlmsghdr h;
	char buf[128];
};

static void put_attr(struct nlmsghdr *h, int type, const void *data, int len)
{
	struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static int nl_send(struct ucm_neigh *n, struct nlmsghdr *req)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	req->nlmsg_seq = ++n->seq;
	if (sendto(n->fd, req, req->nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

/*
 * Send @req and find its answer, a @type message with @hdr bytes of
 * payload, in @buf (NL_BUF bytes): 0 with @msg, or -errno. Each read waits
 * NL_WAIT_MS at most (SO_RCVTIMEO); late answers to older questions, and
 * datagrams from anyone but the kernel, are read past, NL_READS at most.
 */
static int nl_talk(struct ucm_neigh *n, struct nlmsghdr *req, uint16_t type, size_t hdr,
		   char *buf, const struct nlmsghdr **msg)
{
	int err = nl_send(n, req);

	for (int i = 0; !err && i < NL_READS; i++) {
		struct sockaddr_nl from = {};
		socklen_t flen = sizeof(from);
		ssize_t len;

		len = recvfrom(n->fd, buf, NL_BUF, MSG_TRUNC, (struct sockaddr *)&from, &flen);
		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (flen != sizeof(from) || from.nl_family != AF_NETLINK)
			continue;
		if (len > NL_BUF)
			return -EMSGSIZE;	/* cut: may have been ours */
		err = ucm_neigh_nl_find(buf, len, from.nl_pid, n->seq, type, hdr, msg);
		if (err)
			return err < 0 ? err : 0;
	}
	return err ? err : -ETIMEDOUT;
}

/* The next hop towards @dst through the NIC: its gateway, or @dst. */
static int route_next_hop(struct ucm_neigh *n, bool v6, const uint8_t *dst, uint8_t *hop)
{
	char buf[NL_BUF] __attribute__((aligned(8)));
	union nl_req req = {};
	struct nlmsghdr *h = (struct nlmsghdr *)req.buf;
	struct rtmsg *rt = NLMSG_DATA(h);
	const struct nlmsghdr *msg;
	int alen = v6 ? 16 : 4, err;

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*rt));
	h->nlmsg_type = RTM_GETROUTE;
	h->nlmsg_flags = NLM_F_REQUEST;
	rt->rtm_family = v6 ? AF_INET6 : AF_INET;
	rt->rtm_dst_len = alen * 8;
	put_attr(h, RTA_DST, dst, alen);
	put_attr(h, RTA_OIF, &n->ifindex, sizeof(n->ifindex));
	err = nl_talk(n, h, RTM_NEWROUTE, sizeof(struct rtmsg), buf, &msg);
	return err ? err : ucm_neigh_parse_route(msg, n->ifindex, v6, dst, hop);
}

/* A neighbour message about @hop on the NIC (@type, @flags, @ntf). */
static void neigh_req(struct ucm_neigh *n, struct nlmsghdr *h, int type, int flags,
		      uint8_t ntf, bool v6, const uint8_t *hop)
{
	struct ndmsg *nd = NLMSG_DATA(h);

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*nd));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	nd->ndm_family = v6 ? AF_INET6 : AF_INET;
	nd->ndm_ifindex = n->ifindex;
	nd->ndm_flags = ntf;
	put_attr(h, NDA_DST, hop, v6 ? 16 : 4);
}

/* The neighbour entry of @hop on the NIC: 0 with @mac (1: a stale one),
 * or -errno (-EAGAIN: none usable yet). */
static int neigh_get(struct ucm_neigh *n, bool v6, const uint8_t *hop, uint8_t *mac)
{
	char buf[NL_BUF] __attribute__((aligned(8)));
	union nl_req req = {};
	const struct nlmsghdr *msg;
	int err;

	neigh_req(n, (struct nlmsghdr *)req.buf, RTM_GETNEIGH, 0, 0, v6, hop);
	err = nl_talk(n, (struct nlmsghdr *)req.buf, RTM_NEWNEIGH, sizeof(struct ndmsg), buf,
		      &msg);
	if (err == -ENOENT)
		return -EAGAIN;
	return err ? err : ucm_neigh_parse_neigh(msg, n->ifindex, v6, mac);
}

/* Make the kernel resolve @hop on the NIC, or confirm a stale entry
 * (NTF_USE: neigh_event_send(), what traffic through the kernel does).
 * No ACK is asked for; an error the kernel sends anyway is read past
 * later. */
static void neigh_ask(struct ucm_neigh *n, bool v6, const uint8_t *hop)
{
	union nl_req req = {};

	neigh_req(n, (struct nlmsghdr *)req.buf, RTM_NEWNEIGH, NLM_F_CREATE, NTF_USE, v6, hop);
	nl_send(n, (struct nlmsghdr *)req.buf);	/* best effort: the next miss asks again */
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
