// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's resolver: with --dst-ip, the source address and the
 * destination MAC that were not given, as the kernel would pick them
 * towards --dst-ip out of IFACE. The source address comes from a UDP
 * socket connected there; the MAC from the neighbour table's entry for the
 * next hop (the route's gateway, or --dst-ip itself), asked over
 * rtnetlink. When the table has no entry yet, one empty datagram to the
 * discard port makes the kernel resolve it, and the table is read again
 * for up to a second.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gen_opts.h"
#include "util.h"

const char *mac_str(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

struct nl_reply {
	int family;
	int ifindex;
	uint8_t addr[16];	/* route: the next hop (in: the destination) */
	uint8_t mac[6];
	bool found;
};

static int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

struct rtattr *gen_nl_add_attr(struct nlmsghdr *n, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(rta->rta_len);
	return rta;
}

typedef void (*nl_cb)(struct nlmsghdr *n, struct nl_reply *r);

/* Send @req, feed every answer to @cb until done (or the single answer of a
 * non-dump request; none with a NULL @cb). Return 0 or -errno. */
static int nl_talk(struct nlmsghdr *req, nl_cb cb, struct nl_reply *r)
{
	char buf[16384] __attribute__((aligned(8)));
	int fd = nl_open(), err = 0;
	bool dump = req->nlmsg_flags & NLM_F_DUMP;

	if (fd < 0)
		return -errno;
	if (send(fd, req, req->nlmsg_len, 0) < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *n;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		for (n = (struct nlmsghdr *)buf; NLMSG_OK(n, len); n = NLMSG_NEXT(n, len)) {
			if (n->nlmsg_type == NLMSG_DONE)
				goto out;
			if (n->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(n);

				err = e->error;
				goto out;
			}
			if (cb)
				cb(n, r);
			if (!dump)
				goto out;
		}
	}
out:
	close(fd);
	return err;
}

int gen_nl_ack(struct nlmsghdr *req)
{
	req->nlmsg_flags |= NLM_F_ACK;
	return nl_talk(req, NULL, NULL);
}

static void route_cb(struct nlmsghdr *n, struct nl_reply *r)
{
	struct rtmsg *rt = NLMSG_DATA(n);
	int len = RTM_PAYLOAD(n), alen = r->family == AF_INET6 ? 16 : 4;
	struct rtattr *a;

	if (n->nlmsg_type != RTM_NEWROUTE)
		return;
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == (unsigned)alen)
			memcpy(r->addr, RTA_DATA(a), alen);
		else if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == 4)
			r->ifindex = *(int *)RTA_DATA(a);
	}
	r->found = true;
}

/* The next hop towards r->addr out of r->ifindex: r->addr becomes the
 * gateway when there is one. */
static int next_hop(struct nl_reply *r)
{
	uint64_t buf[32] = {};
	struct nlmsghdr *n = (struct nlmsghdr *)buf;
	struct rtmsg *rt = NLMSG_DATA(n);
	int oif = r->ifindex, err;

	n->nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	n->nlmsg_type = RTM_GETROUTE;
	n->nlmsg_flags = NLM_F_REQUEST;
	rt->rtm_family = r->family;
	rt->rtm_dst_len = r->family == AF_INET6 ? 128 : 32;
	gen_nl_add_attr(n, RTA_DST, r->addr, r->family == AF_INET6 ? 16 : 4);
	gen_nl_add_attr(n, RTA_OIF, &oif, 4);
	err = nl_talk(n, route_cb, r);
	if (!err && r->ifindex != oif)
		return -ENETUNREACH;
	return err ? err : r->found ? 0 : -ENETUNREACH;
}

static void neigh_cb(struct nlmsghdr *n, struct nl_reply *r)
{
	struct ndmsg *nd = NLMSG_DATA(n);
	int len = n->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)), alen = r->family == AF_INET6 ? 16 : 4;
	const uint8_t *dst = NULL, *ll = NULL;
	struct rtattr *a;

	if (n->nlmsg_type != RTM_NEWNEIGH || nd->ndm_ifindex != r->ifindex ||
	    nd->ndm_family != r->family ||
	    !(nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)))
		return;
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == (unsigned)alen)
			dst = RTA_DATA(a);
		else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6)
			ll = RTA_DATA(a);
	}
	if (dst && ll && !memcmp(dst, r->addr, alen)) {
		memcpy(r->mac, ll, 6);
		r->found = true;
	}
}

static int neigh_lookup(struct nl_reply *r)
{
	struct {
		struct nlmsghdr n;
		struct ndmsg nd;
	} req = {
		.n = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
		       .nlmsg_type = RTM_GETNEIGH, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.nd = { .ndm_family = r->family },
	};

	r->found = false;
	return nl_talk(&req.n, neigh_cb, r);
}

static socklen_t sockaddr_of(const struct gen_opts *c, const void *addr, uint16_t port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (c->ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, addr, 16);
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	memcpy(&s4->sin_addr, addr, 4);
	return sizeof(*s4);
}

/* A UDP socket on IFACE connected to --dst-ip port @port: the kernel's
 * route, source address, and (when something is sent) neighbour resolution.
 * Return the socket or -errno. */
static int connect_udp(const struct gen_opts *c, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(c, &c->dst, port, &ss);
	int fd = socket(c->ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->dev, strlen(c->dev)) ||
	    connect(fd, (struct sockaddr *)&ss, len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

const char *addr_str(const struct gen_opts *c, const void *a, char *buf)
{
	return inet_ntop(c->ipv6 ? AF_INET6 : AF_INET, a, buf, INET6_ADDRSTRLEN);
}

int resolve_addrs(struct gen_opts *c, int ifindex)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], m[18];
	struct nl_reply r = { .family = c->ipv6 ? AF_INET6 : AF_INET, .ifindex = ifindex };
	int fd, err, i;

	if (!c->have_dst)
		return 0;	/* --dst-mac given; the default addresses go as they are */
	if (!c->have_src) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		fd = connect_udp(c, 9);
		if (fd < 0) {
			fprintf(stderr, "ucpumap-gen: no route to %s on %s (%s): give --src-ip, or add an address and route on %s\n",
				addr_str(c, &c->dst, a), c->dev, strerror(-fd), c->dev);
			return -1;
		}
		getsockname(fd, (struct sockaddr *)&ss, &len);
		close(fd);
		if (c->ipv6)
			c->src.v6 = ((struct sockaddr_in6 *)&ss)->sin6_addr;
		else
			c->src.v4 = ((struct sockaddr_in *)&ss)->sin_addr;
	}
	if (c->have_dmac)
		return 0;

	memcpy(r.addr, &c->dst, c->ipv6 ? 16 : 4);
	err = next_hop(&r);
	if (err) {
		fprintf(stderr, "ucpumap-gen: no route to %s out of %s (%s): give --dst-mac MAC, or add a route\n",
			addr_str(c, &c->dst, a), c->dev, strerror(-err));
		return -1;
	}
	r.ifindex = ifindex;
	for (i = 0; i < 100; i++) {
		err = neigh_lookup(&r);
		if (err) {
			fprintf(stderr, "ucpumap-gen: cannot read the neighbour table: %s; give --dst-mac MAC\n",
				strerror(-err));
			return -1;
		}
		if (r.found)
			break;
		if (i == 0) {
			/* Nothing known yet: one empty datagram to the discard
			 * port makes the kernel resolve the next hop. */
			fd = connect_udp(c, 9);
			if (fd >= 0) {
				if (send(fd, "", 0, 0) < 0 && c->verbose)
					fprintf(stderr, "ucpumap-gen: the probe to resolve %s: %s\n",
						addr_str(c, r.addr, b), strerror(errno));
				close(fd);
			}
		}
		sleep_sec(0.01);
	}
	if (!r.found) {
		bool gw = memcmp(r.addr, &c->dst, c->ipv6 ? 16 : 4);

		fprintf(stderr, "ucpumap-gen: %s%s%s%s did not answer on %s: no neighbour entry after 1 s; give --dst-mac MAC (ip neigh shows the table)\n",
			addr_str(c, r.addr, b), gw ? " (the gateway to " : "",
			gw ? addr_str(c, &c->dst, a) : "", gw ? ")" : "", c->dev);
		return -1;
	}
	memcpy(c->dmac, r.mac, 6);
	c->have_dmac = true;
	fprintf(stderr, "ucpumap-gen: destination MAC %s: the neighbour table's entry for %s on %s\n",
		mac_str(c->dmac, m), addr_str(c, r.addr, a), c->dev);
	return 0;
}

