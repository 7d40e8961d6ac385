// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The next-hop resolver's netlink (neigh.h, neigh_nl.h): the questions it
 * asks the kernel over rtnetlink (RTM_GETROUTE through the NIC, then
 * RTM_GETNEIGH, and RTM_NEWNEIGH with NTF_USE to have an entry resolved or
 * confirmed) and the parsers of the answers, pure functions over a buffer
 * that the unit test and the fuzz target feed. Synchronous and bounded: a
 * question's wait is SO_RCVTIMEO's. On the resolver's thread only; the
 * cache and the thread are neigh.c's.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "core/internal.h"
#include "io/neigh.h"
#include "io/neigh_nl.h"

#define NL_WAIT_MS	100		/* a netlink answer's wait, */
#define NL_READS	8		/* and the datagrams read for one */
/* Neighbour states with a usable address. */
#define NUD_USABLE	(NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | \
			 NUD_PERMANENT | NUD_NOARP)

/* ---- netlink replies: pure functions over a buffer -------------------- */

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
				    e->error > 0 || e->error < -4095)
					return -EPROTO;
				if (e->error < 0)
					return e->error;
				if (type != NLMSG_ERROR)
					return -EPROTO;	/* an ACK, where an answer was due */
				*msg = h;
				return 1;
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
			  const uint8_t *dst, uint8_t *hop, bool *hop_v6)
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
	*hop_v6 = v6;
	for (a = attrs(h, sizeof(*rt), &len); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == alen) {
			memcpy(hop, RTA_DATA(a), alen);
			*hop_v6 = v6;	/* the last gateway said is the hop */
		} else if (a->rta_type == RTA_VIA && RTA_PAYLOAD(a) >= sizeof(uint16_t)) {
			/* A gateway of the other family (an IPv4 route via
			 * an IPv6 next hop, RFC 5549): its neighbour is an
			 * IPv6 one. */
			uint16_t fam;

			memcpy(&fam, RTA_DATA(a), sizeof(fam));
			if (fam == AF_INET6 && RTA_PAYLOAD(a) == sizeof(fam) + 16) {
				memcpy(hop, (const uint8_t *)RTA_DATA(a) + sizeof(fam), 16);
				*hop_v6 = true;
			} else if (fam == AF_INET && RTA_PAYLOAD(a) == sizeof(fam) + 4) {
				memcpy(hop, (const uint8_t *)RTA_DATA(a) + sizeof(fam), 4);
				*hop_v6 = false;
			} else {
				return -EPROTO;
			}
		} else if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == sizeof(int))
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

int ucm_neigh_parse_entry(const struct nlmsghdr *h, int ifindex, bool *v6, uint8_t *addr,
			  uint8_t *mac)
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	const struct rtattr *a;
	bool have_dst = false, have_mac = false;
	int len;

	if (h->nlmsg_type != RTM_NEWNEIGH || h->nlmsg_len < NLMSG_LENGTH(sizeof(*nd)))
		return -EPROTO;
	/* A station's only: the kernel's NOARP entries for the subnet's
	 * broadcast (ff:ff:ff:ff:ff:ff) and multicast groups are not next
	 * hops, and the route's answer would refuse them afterwards. */
	if ((nd->ndm_family != AF_INET && nd->ndm_family != AF_INET6) ||
	    nd->ndm_ifindex != ifindex || !(nd->ndm_state & NUD_USABLE) ||
	    nd->ndm_type != RTN_UNICAST)
		return -EAGAIN;
	*v6 = nd->ndm_family == AF_INET6;
	for (a = attrs(h, sizeof(*nd), &len); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == (*v6 ? 16u : 4u)) {
			memcpy(addr, RTA_DATA(a), RTA_PAYLOAD(a));
			have_dst = true;
		} else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			have_mac = true;
		}
	}
	return have_dst && have_mac && !(mac[0] & 1) ? 0 : -EAGAIN;
}

/* ---- questions: synchronous, bounded ---------------------------------- */

/* A request: room for a header and two addresses. */
union nl_req {
	struct nlmsghdr h;
	char buf[128];
};

void ucm_nl_put_attr(struct nlmsghdr *h, int type, const void *data, int len)
{
	struct rtattr *a = (struct rtattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

int ucm_neigh_nl_open(struct neigh_nl *nl, int ifindex)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_usec = NL_WAIT_MS * 1000 };
	int one = 1;

	nl->ifindex = ifindex;
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	/* Errors without a copy of the request (best effort). */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
}

static int nl_send(struct neigh_nl *nl, struct nlmsghdr *req)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	req->nlmsg_seq = ++nl->seq;
	STAT_ADD(nl->requests, 1);
	if (sendto(nl->fd, req, req->nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

/*
 * Send @req and find its answer, a @type message with @hdr bytes of
 * payload, in nl->buf: 0 with @msg, or -errno. Each read waits NL_WAIT_MS
 * at most (SO_RCVTIMEO); late answers to older questions, and datagrams
 * from anyone but the kernel, are read past, NL_READS at most.
 */
static int nl_talk(struct neigh_nl *nl, struct nlmsghdr *req, uint16_t type, size_t hdr,
		   const struct nlmsghdr **msg)
{
	int err = nl_send(nl, req);

	nl->kernel_said = false;
	for (int i = 0; !err && i < NL_READS; i++) {
		struct sockaddr_nl from = {};
		socklen_t flen = sizeof(from);
		ssize_t len;

		len = recvfrom(nl->fd, nl->buf, NL_BUF, MSG_TRUNC, (struct sockaddr *)&from, &flen);
		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (flen != sizeof(from) || from.nl_family != AF_NETLINK)
			continue;
		if (len > NL_BUF)
			return -EMSGSIZE;	/* cut: may have been ours */
		err = ucm_neigh_nl_find(nl->buf, len, from.nl_pid, nl->seq, type, hdr, msg);
		nl->kernel_said = err < 0 && err != -EPROTO;
		if (err)
			return err < 0 ? err : 0;
	}
	return err ? err : -ETIMEDOUT;
}

/* The next hop towards @dst through the NIC: its gateway, or @dst. */
static int route_get(struct neigh_nl *nl, bool v6, const uint8_t *dst, uint8_t *hop,
		     bool *hop_v6)
{
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
	ucm_nl_put_attr(h, RTA_DST, dst, alen);
	ucm_nl_put_attr(h, RTA_OIF, &nl->ifindex, sizeof(nl->ifindex));
	err = nl_talk(nl, h, RTM_NEWROUTE, sizeof(struct rtmsg), &msg);
	return err ? err : ucm_neigh_parse_route(msg, nl->ifindex, v6, dst, hop, hop_v6);
}

/* A neighbour message about @hop on the NIC (@type, @flags, @ntf). */
static void neigh_req(struct neigh_nl *nl, struct nlmsghdr *h, int type, int flags,
		      uint8_t ntf, bool v6, const uint8_t *hop)
{
	struct ndmsg *nd = NLMSG_DATA(h);

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*nd));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	nd->ndm_family = v6 ? AF_INET6 : AF_INET;
	nd->ndm_ifindex = nl->ifindex;
	nd->ndm_flags = ntf;
	ucm_nl_put_attr(h, NDA_DST, hop, v6 ? 16 : 4);
}

/* The neighbour entry of @hop: 0 with @mac (1: a stale one), or -errno
 * (-EAGAIN: none usable yet). */
int ucm_neigh_nl_get(struct neigh_nl *nl, bool v6, const uint8_t *hop, uint8_t *mac)
{
	union nl_req req = {};
	const struct nlmsghdr *msg;
	int err;

	neigh_req(nl, (struct nlmsghdr *)req.buf, RTM_GETNEIGH, 0, 0, v6, hop);
	err = nl_talk(nl, (struct nlmsghdr *)req.buf, RTM_NEWNEIGH, sizeof(struct ndmsg), &msg);
	if (err == -ENOENT)
		return -EAGAIN;
	return err ? err : ucm_neigh_parse_neigh(msg, nl->ifindex, v6, mac);
}

/*
 * Make the kernel resolve @hop, or confirm a stale entry (NTF_USE:
 * neigh_event_send(), what traffic through the kernel does). The kernel
 * acts inside our send, so its ACK or refusal is waiting when we read:
 * -EPERM without CAP_NET_ADMIN over the namespace, -ENOBUFS with its
 * neighbour table full. The first refusal is logged. A failure of our
 * own (no answer in time, a cut one) is no refusal: 0.
 */
int ucm_neigh_nl_use(struct neigh_nl *nl, bool v6, const uint8_t *hop)
{
	union nl_req req = {};
	const struct nlmsghdr *msg;
	char a[INET6_ADDRSTRLEN];
	int err;

	neigh_req(nl, (struct nlmsghdr *)req.buf, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_ACK,
		  NTF_USE, v6, hop);
	err = nl_talk(nl, (struct nlmsghdr *)req.buf, NLMSG_ERROR, sizeof(struct nlmsgerr), &msg);
	if (err && !nl->kernel_said)
		return 0;
	if (err && !nl->use_refused) {
		nl->use_refused = true;
		inet_ntop(v6 ? AF_INET6 : AF_INET, hop, a, sizeof(a));
		pr_warn("next hops: the kernel refused to resolve %s (RTM_NEWNEIGH: %s)%s\n",
			a, strerror(-err), err == -EPERM ?
			": the resolver thread needs CAP_NET_ADMIN in the interface's network namespace" :
			err == -ENOBUFS ? ": its neighbour table is full (the gc_thresh3 sysctl)" : "");
	}
	return err;
}

/* The answer to a question: 0 with @mac, -EAGAIN with @hop when the
 * kernel was asked to resolve it, or -errno. */
int ucm_neigh_nl_resolve(struct neigh_nl *nl, bool v6, const uint8_t *dst, uint8_t *hop,
			 bool *hop_v6, uint8_t *mac)
{
	int err, use;

	err = route_get(nl, v6, dst, hop, hop_v6);
	if (err)
		return err == -EAGAIN ? -EBUSY : err;
	err = ucm_neigh_nl_get(nl, *hop_v6, hop, mac);
	if (err == 1) {
		ucm_neigh_nl_use(nl, *hop_v6, hop);	/* refused: the stale MAC still serves */
		return 0;
	}
	if (err == -EAGAIN) {
		use = ucm_neigh_nl_use(nl, *hop_v6, hop);
		/* Refused, the kernel will not resolve it: no use waiting.
		 * Its full table is its word, not a failure of our asking
		 * (neigh.c's -ENOBUFS): an answer, backed off. */
		if (use)
			return use == -ENOBUFS ? -ENOSPC : use == -EAGAIN ? -EBUSY : use;
	}
	return err;
}

/*
 * The kernel's neighbour table for the NIC, both families (RTM_GETNEIGH
 * with NLM_F_DUMP): @fn(@ctx, ...) per usable entry. At set-up only, on
 * the creator's thread. Return: the entries given, or -errno.
 */
int ucm_neigh_nl_dump(struct neigh_nl *nl, ucm_neigh_entry_fn fn, void *ctx)
{
	union nl_req req = {};
	struct nlmsghdr *h = (struct nlmsghdr *)req.buf;
	struct ndmsg *nd = NLMSG_DATA(h);
	int given = 0, sent;

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*nd));
	h->nlmsg_type = RTM_GETNEIGH;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nd->ndm_family = AF_UNSPEC;
	/* The kernel filters a dump by the attribute, not the header (whose
	 * ndm_ifindex a strict socket must leave 0). */
	ucm_nl_put_attr(h, NDA_IFINDEX, &nl->ifindex, sizeof(nl->ifindex));
	sent = nl_send(nl, h);
	if (sent)
		return sent;
	for (;;) {
		struct sockaddr_nl from = {};
		socklen_t flen = sizeof(from);
		ssize_t len = recvfrom(nl->fd, nl->buf, NL_BUF, MSG_TRUNC,
				       (struct sockaddr *)&from, &flen);
		int err;

		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (len > NL_BUF)
			return -EMSGSIZE;
		if (flen != sizeof(from) || from.nl_pid != 0)
			continue;
		err = ucm_neigh_nl_walk_dump(nl->buf, len, nl->seq, nl->ifindex, fn, ctx);
		if (err < 0)
			return err;
		given += err & ~UCM_NEIGH_DUMP_DONE;
		if (err & UCM_NEIGH_DUMP_DONE)
			return given;
	}
}

int ucm_neigh_nl_walk_dump(const void *buf, size_t len, uint32_t seq, int ifindex,
			   ucm_neigh_entry_fn fn, void *ctx)
{
	const char *p = buf;
	int given = 0;

	while (len >= NLMSG_HDRLEN) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)p;
		uint8_t addr[16] = {}, mac[6];
		size_t step;
		bool v6;

		if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > len)
			return -EPROTO;
		if (h->nlmsg_seq == seq) {
			if (h->nlmsg_type == NLMSG_DONE)
				return given | UCM_NEIGH_DUMP_DONE;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				return e->error < 0 ? e->error : given | UCM_NEIGH_DUMP_DONE;
			}
			if (!ucm_neigh_parse_entry(h, ifindex, &v6, addr, mac)) {
				fn(ctx, v6, addr, mac);
				given++;
			}
		}
		step = NLMSG_ALIGN(h->nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return given;
}
