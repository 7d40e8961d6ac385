// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The netdev family's answer about a device (netdev.h): its id from the
 * generic netlink controller, then the device's record, from which
 * xdp-features, xsk-features and xdp-zc-max-segs are read; and from
 * rtnetlink, a device's IPv6 setting. Replies are found with
 * ucm_neigh_nl_find().
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/ipv6.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "io/neigh.h"
#include "io/netdev.h"

/* The netdev family's uapi (<linux/netdev.h>, Linux 6.3: Debian 12's
 * kernel headers are 6.1's). */
#define NETDEV_FAMILY_NAME		"netdev"
#define NETDEV_FAMILY_VERSION		1
#define NETDEV_CMD_DEV_GET		1
#define NETDEV_A_DEV_IFINDEX		1
#define NETDEV_A_DEV_XDP_FEATURES	3
#define NETDEV_A_DEV_XDP_ZC_MAX_SEGS	4
#define NETDEV_A_DEV_XSK_FEATURES	6

/* A device's record is a few attributes: a page holds it. */
#define NETDEV_NL_BUF		4096
#define NETDEV_NL_WAIT_MS	1000
/* Datagrams read past (another question's) before giving up. */
#define NETDEV_NL_READS		8

struct gnl_req {
	struct nlmsghdr h;
	struct genlmsghdr g;
	char attrs[64];
};

/* The payload of attribute @type after the generic header of @h, at least
 * @size bytes: NULL when there is none; -EPROTO in @err when it is short. */
static const void *gnl_attr(const struct nlmsghdr *h, uint16_t type, size_t size, int *err)
{
	const char *p = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN);

	*err = 0;
	while (len >= (int)NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len) {
			*err = -EPROTO;
			return NULL;
		}
		if ((a->nla_type & NLA_TYPE_MASK) == type) {
			if (a->nla_len < NLA_HDRLEN + size) {
				*err = -EPROTO;
				return NULL;
			}
			return p + NLA_HDRLEN;
		}
		p += NLA_ALIGN(a->nla_len);
		len -= NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* Attribute @type's @size bytes into @out (attributes are 4-byte aligned
 * only: copied). Return: 0, @absent without it, -EPROTO when short. */
static int gnl_get(const struct nlmsghdr *h, uint16_t type, void *out, size_t size,
		   int absent)
{
	const void *v;
	int err;

	v = gnl_attr(h, type, size, &err);
	if (!v)
		return err ? err : absent;
	memcpy(out, v, size);
	return 0;
}

int ucm_netdev_parse_family(const struct nlmsghdr *h, uint16_t *id)
{
	return gnl_get(h, CTRL_ATTR_FAMILY_ID, id, sizeof(*id), -EPROTO);
}

int ucm_netdev_parse_xdp(const struct nlmsghdr *h, uint64_t *features)
{
	return gnl_get(h, NETDEV_A_DEV_XDP_FEATURES, features, sizeof(*features), -EPROTO);
}

int ucm_netdev_parse_xsk(const struct nlmsghdr *h, uint64_t *features)
{
	return gnl_get(h, NETDEV_A_DEV_XSK_FEATURES, features, sizeof(*features), -EOPNOTSUPP);
}

int ucm_netdev_parse_zc_segs(const struct nlmsghdr *h, uint32_t *segs)
{
	return gnl_get(h, NETDEV_A_DEV_XDP_ZC_MAX_SEGS, segs, sizeof(*segs), -EOPNOTSUPP);
}

/* Send @h as question @seq and find its answer, a message of @type whose
 * family header is @hdr bytes, in @buf of @size: 0 with @msg, or -errno. */
static int nl_talk(int fd, struct nlmsghdr *h, uint32_t seq, uint16_t type, size_t hdr,
		   char *buf, size_t size, const struct nlmsghdr **msg)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	int err;

	h->nlmsg_seq = seq;
	if (sendto(fd, h, h->nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	for (int i = 0; i < NETDEV_NL_READS; i++) {
		struct sockaddr_nl from = {};
		socklen_t flen = sizeof(from);
		ssize_t len;

		len = recvfrom(fd, buf, size, MSG_TRUNC, (struct sockaddr *)&from, &flen);
		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (flen != sizeof(from) || from.nl_family != AF_NETLINK)
			continue;
		if ((size_t)len > size)
			return -EMSGSIZE;
		err = ucm_neigh_nl_find(buf, len, from.nl_pid, seq, type, hdr, msg);
		if (err)
			return err < 0 ? err : 0;
	}
	return -ETIMEDOUT;
}

static int gnl_talk(int fd, struct gnl_req *r, uint32_t seq, uint16_t type, char *buf,
		    const struct nlmsghdr **msg)
{
	return nl_talk(fd, &r->h, seq, type, GENL_HDRLEN, buf, NETDEV_NL_BUF, msg);
}

/* A netlink socket of @proto that waits NETDEV_NL_WAIT_MS for an answer:
 * its fd, or -errno. */
static int nl_open(int proto)
{
	struct timeval tv = { .tv_sec = NETDEV_NL_WAIT_MS / 1000,
			      .tv_usec = NETDEV_NL_WAIT_MS % 1000 * 1000 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto), err;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static void gnl_init(struct gnl_req *r, uint16_t type, uint8_t cmd, uint8_t version)
{
	memset(r, 0, sizeof(*r));
	r->h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->h.nlmsg_type = type;
	r->h.nlmsg_flags = NLM_F_REQUEST;
	r->g.cmd = cmd;
	r->g.version = version;
}

int ucm_netdev_info(int ifindex, struct ucm_netdev_info *info)
{
	char buf[NETDEV_NL_BUF] __attribute__((aligned(8)));
	const struct nlmsghdr *msg;
	uint32_t idx = (uint32_t)ifindex;
	struct gnl_req r;
	uint16_t family;
	int fd, err;

	fd = nl_open(NETLINK_GENERIC);
	if (fd < 0)
		return fd;
	gnl_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	ucm_nl_put_attr(&r.h, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME,
			sizeof(NETDEV_FAMILY_NAME));
	err = gnl_talk(fd, &r, 1, GENL_ID_CTRL, buf, &msg);
	if (err == -ENOENT)
		err = -EOPNOTSUPP;	/* no netdev family: before Linux 6.3 */
	if (!err)
		err = ucm_netdev_parse_family(msg, &family);
	if (err)
		goto out;
	gnl_init(&r, family, NETDEV_CMD_DEV_GET, NETDEV_FAMILY_VERSION);
	ucm_nl_put_attr(&r.h, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	err = gnl_talk(fd, &r, 2, family, buf, &msg);
	if (!err)
		err = ucm_netdev_parse_xdp(msg, &info->xdp_features);
	if (err)
		goto out;
	info->xsk_err = ucm_netdev_parse_xsk(msg, &info->xsk_features);
	if (ucm_netdev_parse_zc_segs(msg, &info->zc_max_segs))
		info->zc_max_segs = 0;
out:
	close(fd);
	return err;
}

/* ---- a device's IPv6, asked of rtnetlink ------------------------------ */

/* A link's record holds its statistics and each family's settings: a few
 * kB. */
#define LINK_NL_BUF		16384

/* Attribute @type among the @len bytes of attributes at @p: its payload,
 * its length in *@plen; NULL without it, with -EPROTO in *@err for a
 * malformed one (0 for none). */
static const char *nla_in(const char *p, int len, uint16_t type, int *plen, int *err)
{
	*err = 0;
	while (len >= (int)NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len) {
			*err = -EPROTO;
			return NULL;
		}
		if ((a->nla_type & NLA_TYPE_MASK) == type) {
			*plen = a->nla_len - NLA_HDRLEN;
			return p + NLA_HDRLEN;
		}
		p += NLA_ALIGN(a->nla_len);
		len -= NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

int ucm_netdev_parse_ipv6_off(const struct nlmsghdr *h)
{
	const char *p = (const char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct ifinfomsg));
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(struct ifinfomsg)), err;
	int32_t off;

	if (len < 0)
		return -EPROTO;
	p = nla_in(p, len, IFLA_AF_SPEC, &len, &err);
	if (p)		/* the families' settings, each nested in its own */
		p = nla_in(p, len, AF_INET6, &len, &err);
	if (!p)		/* no IPv6 on the device at all */
		return err ? err : UCM_NETDEV_IPV6_NONE;
	p = nla_in(p, len, IFLA_INET6_CONF, &len, &err);
	if (!p || len < (int)((DEVCONF_DISABLE_IPV6 + 1) * sizeof(off)))
		return err ? err : -EPROTO;
	memcpy(&off, p + DEVCONF_DISABLE_IPV6 * sizeof(off), sizeof(off));
	return off ? UCM_NETDEV_IPV6_OFF : 0;
}

int ucm_netdev_ipv6_off(int ifindex)
{
	char buf[LINK_NL_BUF] __attribute__((aligned(8)));
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} r = {
		.h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
		       .nlmsg_type = RTM_GETLINK, .nlmsg_flags = NLM_F_REQUEST },
		.i = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
	};
	const struct nlmsghdr *msg;
	int fd, err;

	fd = nl_open(NETLINK_ROUTE);
	if (fd < 0)
		return fd;
	err = nl_talk(fd, &r.h, 1, RTM_NEWLINK, sizeof(struct ifinfomsg), buf, sizeof(buf), &msg);
	if (!err)
		err = ucm_netdev_parse_ipv6_off(msg);
	close(fd);
	return err;
}
