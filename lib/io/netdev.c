// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The netdev family's answer about a device (netdev.h): its id from the
 * generic netlink controller, then the device's record, from which
 * xdp-features, xsk-features and xdp-zc-max-segs are read. Replies are found with
 * ucm_neigh_nl_find().
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

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

/* Send @r as question @seq and find its answer, a message of @type, in
 * @buf: 0 with @msg, or -errno. */
static int gnl_talk(int fd, struct gnl_req *r, uint32_t seq, uint16_t type, char *buf,
		    const struct nlmsghdr **msg)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	int err;

	r->h.nlmsg_seq = seq;
	if (sendto(fd, r, r->h.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	for (int i = 0; i < NETDEV_NL_READS; i++) {
		struct sockaddr_nl from = {};
		socklen_t flen = sizeof(from);
		ssize_t len;

		len = recvfrom(fd, buf, NETDEV_NL_BUF, MSG_TRUNC, (struct sockaddr *)&from, &flen);
		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (flen != sizeof(from) || from.nl_family != AF_NETLINK)
			continue;
		if (len > NETDEV_NL_BUF)
			return -EMSGSIZE;
		err = ucm_neigh_nl_find(buf, len, from.nl_pid, seq, type, GENL_HDRLEN, msg);
		if (err)
			return err < 0 ? err : 0;
	}
	return -ETIMEDOUT;
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
	struct timeval tv = { .tv_sec = NETDEV_NL_WAIT_MS / 1000,
			      .tv_usec = NETDEV_NL_WAIT_MS % 1000 * 1000 };
	char buf[NETDEV_NL_BUF] __attribute__((aligned(8)));
	const struct nlmsghdr *msg;
	uint32_t idx = (uint32_t)ifindex;
	struct gnl_req r;
	uint16_t family;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		err = -errno;
		goto out;
	}
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
