// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen: UDP traffic out of one interface, for the benchmark and the
 * tests.
 *
 *   ucpumap-gen --dev IFACE [options]        (--help lists them)
 *
 * One Ethernet/IPv4-or-IPv6/UDP template frame (checksums complete) is sent
 * over and over, with the source port (the flows, in turn) and, when asked,
 * a sequence number rewritten per frame and the UDP checksum updated.
 *
 * The live engine (default) hands the template to BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES: the kernel runs our XDP program
 * (bpf/gen.bpf.c, embedded in this binary) once per frame; the program
 * rewrites the frame and redirects it out of IFACE. The generator must run
 * in IFACE's network namespace. On veth, the peer needs an XDP program of
 * its own (native mode), or the kernel drops the frames silently. While it
 * runs, a tap device of its own (ucmgenN) holds the program, so that the
 * calls do not wait for RCU (live_anchor()).
 *
 * The xsk engine (xsk_tx.c) puts the frames on an AF_XDP socket's TX ring.
 *
 * Either way the frames go out in calls sized to last about 10 ms; a rate
 * limit sleeps between them. "Sent" is what the engine counted out: frames
 * the program ran on (live), completions (xsk); what went to IFACE's
 * transmit, not what arrived.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if_arp.h>
#include <linux/if_tun.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"
#include "opts.h"
#include "util.h"

extern const char ucm_gen_bpf_obj[] __attribute__((visibility("hidden")));
extern const char ucm_gen_bpf_obj_end[] __attribute__((visibility("hidden")));

#define MAX_FRAME	3408	/* what a live frame holds (page - headroom - shinfo) */
#define ETH_HLEN_	14
#define IP4_HLEN	20
#define IP6_HLEN	40
#define UDP_HLEN	8
#define CALL_SEC	0.010	/* aim of one test-run call */
/* --rate makes up for a late wake-up or a short stall, up to this much:
 * any second then carries about 1.1 x the rate at most (this, and one
 * call's 10 ms); a second's catch-up made a receiver's second carry up to
 * twice it. */
#define PACE_CATCHUP_SEC	0.1
#define MIN_CHUNK	64
#define MAX_CHUNK	(1u << 22)

enum engine { ENGINE_LIVE, ENGINE_XSK };

struct cfg {
	const char *dev;
	const char *src_s, *dst_s;	/* --src-ip, --dst-ip as given */
	bool ipv6, have_dmac, have_src, have_dst, seq;
	bool size_set, queue_set;
	int verbose;
	uint8_t dmac[6];
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} src, dst;
	unsigned long size, flows, rate, batch, count, sport, dport, queue;
	double duration;
	int cpu;			/* -1: not pinned */
	enum engine engine;
};

static int verbose;
volatile sig_atomic_t gen_stop;

static void on_signal(int sig)
{
	gen_stop = 1;
}

static int gen_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const struct opt_enum engines[] = {
	{ "live", ENGINE_LIVE },
	{ "xsk", ENGINE_XSK },
	{ NULL }
};

static const struct opt gen_opts[] = {
	OPT_DEF("dev", OPT_STRING, struct cfg, dev, .hi = IF_NAMESIZE - 1,
		.flags = OPT_F_REQUIRED, .metavar = "IFACE", .help = "the interface to send on"),
	OPT_DEF("dst-mac", OPT_MAC, struct cfg, dmac, .seen = OPT_REF(struct cfg, have_dmac),
		.metavar = "MAC",
		.help = "destination MAC (default: the neighbour table's entry for the next hop "
			"towards --dst-ip; if there is none, one empty UDP datagram to its port 9 "
			"makes the kernel resolve it)"),
	OPT_DEF("src-ip", OPT_ADDR, struct cfg, src_s, .metavar = "A",
		.help = "source address (default: the one the kernel would use towards --dst-ip "
			"on IFACE; 198.18.0.1 or 2001:2::1 without --dst-ip)"),
	OPT_DEF("dst-ip", OPT_ADDR, struct cfg, dst_s, .metavar = "B",
		.help = "destination address (default 198.18.0.2 or 2001:2::2, which then needs "
			"--dst-mac)"),
	OPT_DEF("ipv6", OPT_FLAG, struct cfg, ipv6, .short_opt = '6',
		.help = "IPv6 (implied by IPv6 addresses)"),
	OPT_DEF("src-port", OPT_UINT, struct cfg, sport, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "P", .help = "first source port"),
	OPT_DEF("dst-port", OPT_UINT, struct cfg, dport, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "P", .help = "destination port"),
	OPT_DEF("size", OPT_UINT, struct cfg, size, .lo = 14, .hi = MAX_FRAME,
		.seen = OPT_REF(struct cfg, size_set), .metavar = "BYTES",
		.help = "frame length from the Ethernet header to the end of the payload, no FCS "
			"(default 64, or 70 for IPv6 with --seq; 42-3408 for IPv4, 62-3408 for "
			"IPv6, 8 more with --seq; at most IFACE's MTU + 14)"),
	OPT_DEF("flows", OPT_UINT, struct cfg, flows, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "N",
		.help = "N source ports, in turn: P .. P+N-1"),
	OPT_DEF("seq", OPT_FLAG, struct cfg, seq,
		.help = "a sequence number in the first 8 bytes of the UDP payload, big-endian, "
			"counting from 0"),
	OPT_DEF("rate", OPT_UINT, struct cfg, rate, .lo = 0, .hi = 1000000000, .metavar = "PPS",
		.help = "at most PPS packets per second (default 0: as fast as it goes)"),
	OPT_DEF("duration", OPT_SECONDS, struct cfg, duration, .flags = OPT_F_POSITIVE,
		.metavar = "SEC", .help = "stop after SEC seconds (default: when signalled)"),
	OPT_DEF("count", OPT_UINT, struct cfg, count, .lo = 1, .hi = ~0ul >> 1, .metavar = "N",
		.help = "stop after N packets"),
	OPT_DEF("batch", OPT_UINT, struct cfg, batch, .lo = 1, .hi = 256, .metavar = "N",
		.help = "frames per batch, 1-256 (default 64): in the kernel's test run, or "
			"descriptors per TX ring update (xsk)"),
	OPT_DEF("cpu", OPT_CPUS, struct cfg, cpu, .metavar = "N",
		.help = "run on CPU N (default: where the scheduler puts it)"),
	OPT_DEF("engine", OPT_ENUM, struct cfg, engine, .vals = engines, .metavar = "ENGINE",
		.help = "live (default): the XDP live-frame test run;\n"
			"xsk: an AF_XDP socket's TX ring (zero-copy when the driver can; slower "
			"on veth, which copies)"),
	OPT_DEF("queue", OPT_UINT, struct cfg, queue, .lo = 0, .hi = 1023,
		.seen = OPT_REF(struct cfg, queue_set), .metavar = "Q",
		.help = "the TX queue of --engine xsk (default 0)"),
	OPT_DEF("verbose", OPT_COUNT, struct cfg, verbose, .short_opt = 'v',
		.help = "libbpf's debug messages too"),
	{}
};

static const struct opts_cmd gen_cmd = {
	.name = "ucpumap-gen",
	.usage = "ucpumap-gen --dev IFACE [options]",
	.doc =
"Sends UDP over IPv4 or IPv6 out of IFACE from an XDP program run by the\n"
"kernel's live-frame test run (BPF_F_TEST_XDP_LIVE_FRAMES), or from an AF_XDP\n"
"socket (--engine xsk). Run it in IFACE's network namespace, as root. With the\n"
"live engine on veth, the peer must have an XDP program (native mode), or the\n"
"kernel drops the frames without a word; while it runs, a tap device of its\n"
"own (ucmgenN) holds its program in the kernel, and goes with it.\n",
	.tail =
"Prints the packets sent in each second and the total at the end.\n"
"SIGINT/SIGTERM stop it (the total is printed).\n",
	.opts = gen_opts,
};

static const char *mac_str(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

/* 4 or 6 for an address of that family, 0 for none (NULL). */
static int parse_addr(const char *s, void *v4, void *v6)
{
	if (s && inet_pton(AF_INET, s, v4) == 1)
		return 4;
	if (s && inet_pton(AF_INET6, s, v6) == 1)
		return 6;
	return 0;
}

/* The family, from the addresses or -6, and the addresses not given. */
static int pick_family(struct cfg *c)
{
	struct in_addr s4, d4;
	struct in6_addr s6, d6;
	int sf = parse_addr(c->src_s, &s4, &s6), df = parse_addr(c->dst_s, &d4, &d6);

	if (sf && df && sf != df) {
		fprintf(stderr, "ucpumap-gen: --src-ip %s is IPv%d but --dst-ip %s is IPv%d; give two of one family\n",
			c->src_s, sf, c->dst_s, df);
		return -1;
	}
	if (c->ipv6 && (sf == 4 || df == 4)) {
		fprintf(stderr, "ucpumap-gen: -6 asks for IPv6 but %s is an IPv4 address\n",
			sf == 4 ? c->src_s : c->dst_s);
		return -1;
	}
	c->ipv6 |= sf == 6 || df == 6;
	c->have_src = sf;
	c->have_dst = df;
	if (c->ipv6) {
		c->src.v6 = s6;
		c->dst.v6 = d6;
		if (!sf)
			inet_pton(AF_INET6, "2001:2::1", &c->src.v6);
		if (!df)
			inet_pton(AF_INET6, "2001:2::2", &c->dst.v6);
	} else {
		c->src.v4 = s4;
		c->dst.v4 = d4;
		if (!sf)
			inet_pton(AF_INET, "198.18.0.1", &c->src.v4);
		if (!df)
			inet_pton(AF_INET, "198.18.0.2", &c->dst.v4);
	}
	return 0;
}

/* The options into @c, then what depends on more than one of them.
 * Return 0, OPTS_HELP, or -1 after a message. */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	unsigned long hdr;
	int err;

	memset(c, 0, sizeof(*c));
	c->size = 64;
	c->flows = 1;
	c->sport = 1024;
	c->dport = 9;
	c->cpu = -1;
	c->engine = ENGINE_LIVE;
	err = opts_parse(&gen_cmd, c, argc, argv);
	if (err)
		return err;
	verbose = c->verbose;
	if (c->queue_set && c->engine != ENGINE_XSK) {
		fprintf(stderr, "ucpumap-gen: --queue is for --engine xsk (the live engine sends where the kernel's XDP redirect puts it)\n");
		return -1;
	}
	if (pick_family(c))
		return -1;
	if (!c->have_dst && !c->have_dmac) {
		fprintf(stderr, "ucpumap-gen: give --dst-mac MAC, or --dst-ip B to take B's MAC (or its gateway's) from the neighbour table\n");
		return -1;
	}

	hdr = ETH_HLEN_ + (c->ipv6 ? IP6_HLEN : IP4_HLEN) + UDP_HLEN + (c->seq ? UCM_GEN_SEQ_LEN : 0);
	if (!c->size_set && c->size < hdr)
		c->size = hdr;		/* IPv6 with --seq: 70 */
	if (c->size < hdr) {
		fprintf(stderr, "--size %lu: an %s UDP frame%s needs at least %lu bytes\n", c->size,
			c->ipv6 ? "IPv6" : "IPv4", c->seq ? " with --seq" : "", hdr);
		return -1;
	}
	if (c->sport + c->flows - 1 > 65535) {
		fprintf(stderr, "--flows %lu from --src-port %lu runs past port 65535; lower one of them\n",
			c->flows, c->sport);
		return -1;
	}
	return 0;
}

/* ---- the interface, the route and the neighbour table ------------------------- */

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

static void nl_add_attr(struct nlmsghdr *n, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

typedef void (*nl_cb)(struct nlmsghdr *n, struct nl_reply *r);

/* Send @req, feed every answer to @cb until done (or the single answer of a
 * non-dump request). Return 0 or -errno. */
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
			cb(n, r);
			if (!dump)
				goto out;
		}
	}
out:
	close(fd);
	return err;
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
	nl_add_attr(n, RTA_DST, r->addr, r->family == AF_INET6 ? 16 : 4);
	nl_add_attr(n, RTA_OIF, &oif, 4);
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

static socklen_t sockaddr_of(const struct cfg *c, const void *addr, uint16_t port,
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
static int connect_udp(const struct cfg *c, uint16_t port)
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

static const char *addr_str(const struct cfg *c, const void *a, char *buf)
{
	return inet_ntop(c->ipv6 ? AF_INET6 : AF_INET, a, buf, INET6_ADDRSTRLEN);
}

/* --src-ip and --dst-mac when not given. Return 0, or -1 with a message. */
static int resolve(struct cfg *c, int ifindex)
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
				if (send(fd, "", 0, 0) < 0 && verbose)
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

/* ---- the template frame --------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* Ethernet, IP, UDP with the first source port, sequence number 0, a
 * zero payload and correct checksums. */
static void build_template(const struct cfg *c, const uint8_t *smac, uint8_t *f)
{
	memcpy(f, c->dmac, 6);
	memcpy(f + 6, smac, 6);
	put16(f + 12, c->ipv6 ? 0x86dd : 0x0800);
	udp_build(f + ETH_HLEN_, c->size - ETH_HLEN_, c->ipv6,
		  c->ipv6 ? (const void *)&c->src.v6 : (const void *)&c->src.v4,
		  c->ipv6 ? (const void *)&c->dst.v6 : (const void *)&c->dst.v4, c->sport, c->dport);
}

/* ---- the live engine ------------------------------------------------------------ */

struct live {
	struct bpf_object *obj;
	int prog_fd;
	volatile const uint64_t *frames;	/* the program's counter, mmapped */
	size_t bss_len;
	int tap_fd;				/* the anchor device, or -1 */
	struct bpf_test_run_opts *opts;
	struct bpf_link *anchor;		/* our program on it */
};

static void live_close(struct live *l)
{
	bpf_link__destroy(l->anchor);
	if (l->tap_fd >= 0)
		close(l->tap_fd);
	if (l->bss_len)
		munmap((void *)l->frames, l->bss_len);
	bpf_object__close(l->obj);
}

/*
 * A test run with repeat > 1 puts the program into the kernel's XDP
 * dispatcher for the call and takes it out after, and each change waits for
 * an RCU grace period: two per call, 8 to 40 ms here, whatever the call
 * sends. A program attached to a device stays in the dispatcher, so the
 * calls change nothing. We attach ours to a tap device of our own that
 * nobody writes to: not persistent, it goes away with its file descriptor,
 * so nothing is left behind even after SIGKILL; so does the attachment (a
 * bpf_link). Without it the generator still works, only slower.
 */
static void live_anchor(struct live *l, struct bpf_program *p)
{
	struct ifreq ifr = {};
	const char *why;
	int ifindex;

	l->tap_fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (l->tap_fd < 0) {
		why = "cannot open /dev/net/tun";
		goto fail;
	}
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	strcpy(ifr.ifr_name, "ucmgen%d");
	if (ioctl(l->tap_fd, TUNSETIFF, &ifr)) {
		why = "cannot create a tap device";
		goto fail;
	}
	ifindex = if_nametoindex(ifr.ifr_name);
	l->anchor = ifindex ? bpf_program__attach_xdp(p, ifindex) : NULL;
	if (!l->anchor) {
		l->anchor = NULL;
		why = "cannot attach the program to a tap device";
		goto fail;
	}
	return;
fail:
	fprintf(stderr, "ucpumap-gen: %s (%s): every call will wait for RCU, expect a lower rate\n",
		why, strerror(errno));
	if (l->tap_fd >= 0)
		close(l->tap_fd);
	l->tap_fd = -1;
}

static struct bpf_map *internal_map(struct bpf_object *obj, const char *suffix)
{
	struct bpf_map *m;
	size_t sl = strlen(suffix);

	bpf_object__for_each_map(m, obj) {
		const char *n = bpf_map__name(m);
		size_t nl = strlen(n);

		if (nl >= sl && !strcmp(n + nl - sl, suffix))
			return m;
	}
	return NULL;
}

static int live_load(struct live *l, const struct ucm_gen_cfg *gc)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "ucm_gen");
	struct bpf_map *ro, *bss;
	struct bpf_program *p;
	size_t sz;
	void *v;
	int err;

	libbpf_set_print(gen_libbpf_print);
	l->obj = bpf_object__open_mem(ucm_gen_bpf_obj, ucm_gen_bpf_obj_end - ucm_gen_bpf_obj, &oo);
	if (!l->obj) {
		fprintf(stderr, "ucpumap-gen: cannot open the embedded XDP object: %s\n", strerror(errno));
		return -1;
	}
	ro = internal_map(l->obj, ".rodata");
	bss = internal_map(l->obj, ".bss");
	if (!ro || !bss || !bpf_map__initial_value(ro, &sz) || sz != sizeof(*gc) ||
	    bpf_map__set_initial_value(ro, gc, sizeof(*gc))) {
		fprintf(stderr, "ucpumap-gen: the embedded XDP object does not have the configuration this binary expects (rebuild it)\n");
		return -1;
	}
	err = bpf_object__load(l->obj);
	if (err) {
		fprintf(stderr, "ucpumap-gen: cannot load the XDP program: %s%s\n", strerror(-err),
			err == -EPERM ? " (needs CAP_BPF and CAP_NET_ADMIN: run as root)" : "");
		return -1;
	}
	p = bpf_object__find_program_by_name(l->obj, "ucm_gen");
	l->prog_fd = p ? bpf_program__fd(p) : -1;
	/* The counters, live: libbpf 1.1 maps .bss for skeletons only. */
	sz = bpf_map__value_size(bss);
	l->bss_len = (sz + 4095) & ~(size_t)4095;
	v = mmap(NULL, l->bss_len, PROT_READ, MAP_SHARED, bpf_map__fd(bss), 0);
	if (l->prog_fd < 0 || v == MAP_FAILED || sz < sizeof(uint64_t)) {
		fprintf(stderr, "ucpumap-gen: the embedded XDP object lacks its program or counter (%s)\n",
			v == MAP_FAILED ? strerror(errno) : "not found");
		l->bss_len = 0;
		return -1;
	}
	l->frames = v;
	live_anchor(l, p);
	return 0;
}

/* Send @n frames; return how many the program ran on, or -errno. */
static int64_t live_send(void *arg, uint64_t n)
{
	struct live *l = arg;
	uint64_t before = *l->frames;
	int err;

	l->opts->repeat = (uint32_t)n;
	err = bpf_prog_test_run_opts(l->prog_fd, l->opts);
	if (err && errno != EINTR) {
		err = -errno;
		fprintf(stderr, "ucpumap-gen: the live-frame test run failed: %s%s\n", strerror(-err),
			err == -EOPNOTSUPP || err == -EINVAL ?
			" (the kernel needs BPF_F_TEST_XDP_LIVE_FRAMES, 5.18 or later)" : "");
		return err;
	}
	/* The program's own count: exact, also when a signal cut the call
	 * short. */
	return (int64_t)(*l->frames - before);
}

static void print_tick(double t, uint64_t n, double dt)
{
	printf("%7.2f s: %llu pps (%llu sent)\n", t, (unsigned long long)(dt > 0 ? n / dt + 0.5 : 0),
	       (unsigned long long)n);
	fflush(stdout);
}

typedef int64_t (*send_fn)(void *engine, uint64_t n);

/* Where the sending loop is, in time and in frames. */
struct pace {
	double t0, end, next_print, last_print;
	double pace0, quantum;		/* --rate: the schedule's start, frames per call */
	double per_frame;		/* seconds a frame took, measured so far */
	uint64_t sent, last_sent;
};

static void pace_init(const struct cfg *c, struct pace *p)
{
	*p = (struct pace){ .per_frame = 50e-9 };
	p->t0 = now_sec();
	p->end = c->duration > 0 ? p->t0 + c->duration : 0;
	p->next_print = p->t0 + 1;
	p->last_print = p->t0;
	if (c->rate) {
		/* About 10 ms of packets per call, the first call at once. */
		p->quantum = c->rate * CALL_SEC;
		if (p->quantum < 1)
			p->quantum = 1;
		p->pace0 = p->t0 - p->quantum / c->rate;
	}
}

/* A line per second. */
static void pace_tick(struct pace *p, double t)
{
	if (t < p->next_print)
		return;
	print_tick(t - p->t0, p->sent - p->last_sent, t - p->last_print);
	p->last_sent = p->sent;
	p->last_print = t;
	p->next_print += 1;
	if (p->next_print <= t)
		p->next_print = t + 1;
}

/* With --rate: how many frames are due, at most @want; 0 after sleeping
 * until a quantum is due (or a tick, or the end). */
static double pace_due(const struct cfg *c, struct pace *p, double t, double want)
{
	double due = (t - p->pace0) * c->rate - (double)p->sent;
	double need = p->quantum;

	if (c->count && need > c->count - p->sent)
		need = c->count - p->sent;
	if (due < need) {
		double wake = p->pace0 + (p->sent + need) / c->rate;
		struct timespec ts;

		if (wake > p->next_print)
			wake = p->next_print;
		if (p->end && wake > p->end)
			wake = p->end;
		ts.tv_sec = (time_t)wake;
		ts.tv_nsec = (long)((wake - ts.tv_sec) * 1e9);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		return 0;
	}
	if (due > c->rate * PACE_CATCHUP_SEC) {
		/* Further behind (stopped, or the rate is out of reach): do
		 * not make it up in a burst. */
		p->pace0 = t - (p->sent + p->quantum) / (double)c->rate;
		due = p->quantum;
	}
	return want > due ? due : want;
}

/* Frames to send now: about 10 ms at the speed measured so far, paced by
 * --rate and bounded by --count; 0 when it slept instead. */
static uint64_t pace_want(const struct cfg *c, struct pace *p, double t)
{
	double want = CALL_SEC / p->per_frame;
	uint64_t n;

	if (want < MIN_CHUNK)
		want = MIN_CHUNK;
	if (want > MAX_CHUNK)
		want = MAX_CHUNK;
	if (c->rate) {
		want = pace_due(c, p, t, want);
		if (want == 0)
			return 0;
	}
	if (c->count && want > c->count - p->sent)
		want = c->count - p->sent;
	n = (uint64_t)want;
	return n ? n : 1;
}

/* Send in chunks of about 10 ms, paced by --rate; a line per second. */
static int run(const struct cfg *c, send_fn send, void *engine)
{
	struct pace p;
	int status = 0, idle = 0;
	double t;

	pace_init(c, &p);
	while (!gen_stop) {
		uint64_t n;
		int64_t got;

		t = now_sec();
		pace_tick(&p, t);
		if (p.end && t >= p.end)
			break;
		if (c->count && p.sent >= c->count)
			break;
		n = pace_want(c, &p, t);
		if (!n)
			continue;
		got = send(engine, n);
		if (got < 0) {
			status = 1;
			break;
		}
		n = (uint64_t)got;
		p.sent += n;
		/* (AF_XDP in zero-copy mode may report completions a call late.) */
		idle = n || gen_stop ? 0 : idle + 1;
		if (idle == 100) {
			fprintf(stderr, "ucpumap-gen: nothing went out in 100 calls; giving up\n");
			status = 1;
			break;
		}
		if (n >= MIN_CHUNK)
			p.per_frame = 0.7 * p.per_frame + 0.3 * ((now_sec() - t) / n);
	}
	t = now_sec();
	if (t - p.last_print > 0.05 && p.sent > p.last_sent)
		print_tick(t - p.t0, p.sent - p.last_sent, t - p.last_print);
	printf("total: %llu packets in %.3f s, %llu pps\n", (unsigned long long)p.sent, t - p.t0,
	       (unsigned long long)(t > p.t0 ? p.sent / (t - p.t0) + 0.5 : 0));
	fflush(stdout);
	return status;
}

/* ---- main ------------------------------------------------------------------------- */

static int dev_info(const char *dev, uint8_t *mac, int *mtu)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	strncpy(ifr.ifr_name, dev, IF_NAMESIZE - 1);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		err = -errno;
		goto out;
	}
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		err = -EPFNOSUPPORT;
		goto out;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr)) {
		err = -errno;
		goto out;
	}
	*mtu = ifr.ifr_mtu;
out:
	close(fd);
	return err;
}

/* The interface: its index and MAC, and --size against its MTU. 0, or -1
 * after a message. */
static int dev_check(const struct cfg *c, int *ifindex, uint8_t *smac)
{
	int mtu = 0, err;

	*ifindex = if_nametoindex(c->dev);
	if (!*ifindex) {
		fprintf(stderr, "ucpumap-gen: no interface named '%s' here (ip link shows the names; run the generator in the interface's network namespace)\n",
			c->dev);
		return -1;
	}
	err = dev_info(c->dev, smac, &mtu);
	if (err) {
		fprintf(stderr, "ucpumap-gen: %s: %s\n", c->dev,
			err == -EPFNOSUPPORT ? "not an Ethernet device" : strerror(-err));
		return -1;
	}
	if (c->size > (unsigned long)mtu + ETH_HLEN_) {
		fprintf(stderr, "ucpumap-gen: --size %lu: %s's MTU %d carries frames of at most %d bytes; ask for less, or raise the MTU (ip link set %s mtu %lu)\n",
			c->size, c->dev, mtu, mtu + ETH_HLEN_, c->dev, c->size - ETH_HLEN_);
		return -1;
	}
	return 0;
}

/* What sends: the live frames' program or an AF_XDP socket. */
struct sender {
	send_fn send;
	void *ctx;
	char name[64];
	struct live l;
	struct bpf_test_run_opts to;
	struct xsk_tx *x;
};

static int sender_open(const struct cfg *c, int ifindex, const struct gen_tmpl *t,
		       struct sender *s)
{
	struct ucm_gen_cfg gc = {};

	s->l.tap_fd = -1;
	if (c->engine == ENGINE_XSK) {
		s->x = xsk_tx_open(c->dev, c->queue, t, c->batch);
		if (!s->x)
			return -1;
		s->send = xsk_tx_send;
		s->ctx = s->x;
		snprintf(s->name, sizeof(s->name), "xsk engine on queue %lu (%s)", c->queue,
			 xsk_tx_zerocopy(s->x) ? "zero-copy" : "copy");
		return 0;
	}
	gc.ifindex = ifindex;
	gc.flags = t->flags;
	gc.flows = c->flows;
	gc.sport = c->sport;
	if (live_load(&s->l, &gc)) {
		live_close(&s->l);
		return -1;
	}
	s->to = (struct bpf_test_run_opts){
		.sz = sizeof(s->to), .data_in = t->frame, .data_size_in = c->size,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = c->batch,
	};
	s->l.opts = &s->to;
	s->send = live_send;
	s->ctx = &s->l;
	snprintf(s->name, sizeof(s->name), "live engine");
	return 0;
}

static void sender_close(const struct cfg *c, struct sender *s)
{
	if (c->engine == ENGINE_LIVE)
		live_close(&s->l);
	else
		xsk_tx_close(s->x);
}

static void print_banner(const struct cfg *c, const char *ename)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], m[18];

	printf("ucpumap-gen: %s -> %s: %s UDP %s:%lu", c->dev, mac_str(c->dmac, m),
	       c->ipv6 ? "IPv6" : "IPv4", addr_str(c, &c->src, a), c->sport);
	if (c->flows > 1)
		printf("-%lu", c->sport + c->flows - 1);
	printf(" -> %s:%lu, %lu-byte frames, %lu flow%s%s, ", addr_str(c, &c->dst, b), c->dport,
	       c->size, c->flows, c->flows > 1 ? "s" : "", c->seq ? ", sequence numbers" : "");
	if (c->rate)
		printf("at most %lu pps", c->rate);
	else
		printf("no rate limit");
	printf(", batch %lu, %s", c->batch ? c->batch : 64, ename);
	if (c->cpu >= 0)
		printf(" on CPU %d", c->cpu);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sender snd = {};
	uint8_t smac[6], *frame;
	struct gen_tmpl t;
	int ifindex, err, status;
	struct cfg c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	err = parse_args(argc, argv, &c);
	if (err)
		return err == OPTS_HELP ? 0 : 2;
	if (geteuid() != 0) {
		fprintf(stderr, "ucpumap-gen: needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo\n");
		return 1;
	}
	if (dev_check(&c, &ifindex, smac) || resolve(&c, ifindex))
		return 1;
	if (c.cpu >= 0 && (err = pin_self(c.cpu))) {
		fprintf(stderr, "ucpumap-gen: cannot run on CPU %d: %s\n", c.cpu, strerror(-err));
		return 1;
	}

	frame = calloc(1, MAX_FRAME);
	if (!frame)
		return 1;
	build_template(&c, smac, frame);
	t = (struct gen_tmpl){
		.frame = frame, .size = c.size, .flows = c.flows, .sport = c.sport,
		.flags = (c.ipv6 ? UCM_GEN_F_IPV6 : 0) | (c.seq ? UCM_GEN_F_SEQ : 0),
	};
	if (sender_open(&c, ifindex, &t, &snd)) {
		free(frame);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	print_banner(&c, snd.name);
	status = run(&c, snd.send, snd.ctx);
	sender_close(&c, &snd);
	free(frame);
	return status;
}
