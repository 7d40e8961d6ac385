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
 * The live engine (default, live.c) hands the template to BPF_PROG_TEST_RUN
 * with BPF_F_TEST_XDP_LIVE_FRAMES: the kernel runs our XDP program
 * (bpf/gen.bpf.c, embedded in this binary) once per frame; the program
 * rewrites the frame and redirects it out of IFACE. The generator must run
 * in IFACE's network namespace. IFACE must take redirected frames (on
 * veth, the peer needs an XDP program of its own, native mode), or the
 * kernel drops them silently: xmit_check() refuses such an IFACE.
 *
 * Where the kernel refuses live frames, the loop engine (loop.c) does the
 * same from frames that circulate on a veth pair of its own, each turn
 * sending a copy out of IFACE. The xsk engine (xsk_tx.c) puts the frames on
 * an AF_XDP socket's TX ring; the packet engine (packet.c) on an AF_PACKET
 * socket.
 *
 * Either way the frames go out in calls sized to last about 10 ms; a rate
 * limit sleeps between them (pace.c). "Sent" is what the engine counted
 * out: frames the program sent (live, loop), completions (xsk), frames the
 * calls took (packet); what went to IFACE's transmit, not what arrived. A
 * down IFACE is refused; a driver that refuses a redirect (no
 * ndo_xdp_xmit, or one that needs an XDP program of its own) still counts
 * as sent for live and loop: IFACE's own counters tell.
 *
 * This file: the options, the template frame, the interface's checks, and
 * main; the addresses not given come from resolve.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if_arp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gen_opts.h"
#include "io/netdev.h"
#include "opts.h"
#include "util.h"

#define MAX_FRAME	3408	/* what a live frame holds (page - headroom - shinfo) */
#define MAX_JUMBO	(9216 + 14)	/* the packet engine's: a jumbo MTU's frame */
#define ETH_HLEN_	14
#define IP4_HLEN	20
#define IP6_HLEN	40
#define UDP_HLEN	8

/* Set by SIGINT/SIGTERM: the engine and the sending loop return early. */
static volatile sig_atomic_t gen_stop;

static void on_signal(int sig)
{
	gen_stop = 1;
}

static const struct opt_enum engines[] = {
	{ "live", ENGINE_LIVE },
	{ "loop", ENGINE_LOOP },
	{ "xsk", ENGINE_XSK },
	{ "packet", ENGINE_PACKET },
	{ NULL }
};

static const struct opt gen_opts[] = {
	OPT_DEF("dev", OPT_STRING, struct gen_opts, dev, .lo = 1, .hi = IF_NAMESIZE - 1,
		.flags = OPT_F_REQUIRED, .metavar = "IFACE", .help = "the interface to send on"),
	OPT_DEF("dst-mac", OPT_MAC, struct gen_opts, dmac, .seen = OPT_REF(struct gen_opts, have_dmac),
		.metavar = "MAC",
		.help = "destination MAC (default: the neighbour table's entry for the next hop "
			"towards --dst-ip; if there is none, one empty UDP datagram to its port 9 "
			"makes the kernel resolve it)"),
	OPT_DEF("src-ip", OPT_ADDR, struct gen_opts, src_s, .metavar = "A",
		.help = "source address (default: the one the kernel would use towards --dst-ip "
			"on IFACE; 198.18.0.1 or 2001:2::1 without --dst-ip)"),
	OPT_DEF("dst-ip", OPT_ADDR, struct gen_opts, dst_s, .metavar = "B",
		.help = "destination address (default 198.18.0.2 or 2001:2::2, which then needs "
			"--dst-mac)"),
	OPT_DEF("ipv6", OPT_FLAG, struct gen_opts, ipv6, .short_opt = '6',
		.help = "IPv6 (implied by IPv6 addresses)"),
	OPT_DEF("src-port", OPT_UINT, struct gen_opts, sport, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "P", .help = "first source port"),
	OPT_DEF("dst-port", OPT_UINT, struct gen_opts, dport, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "P", .help = "destination port"),
	OPT_DEF("size", OPT_UINT, struct gen_opts, size, .lo = 14, .hi = MAX_JUMBO,
		.seen = OPT_REF(struct gen_opts, size_set), .metavar = "BYTES",
		.help = "frame length from the Ethernet header to the end of the payload, no FCS "
			"(default 64, or 70 for IPv6 with --seq, 78 with --stamp; 42-3408 for "
			"IPv4, 62-3408 for IPv6, 8 more with --seq, 16 with --stamp; up to 9230 "
			"with --engine packet; at most IFACE's MTU + 14)"),
	OPT_DEF("flows", OPT_UINT, struct gen_opts, flows, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "N",
		.help = "N source ports, in turn: P .. P+N-1"),
	OPT_DEF("seq", OPT_FLAG, struct gen_opts, seq,
		.help = "a sequence number in the first 8 bytes of the UDP payload, big-endian, "
			"counting from 0"),
	OPT_DEF("stamp", OPT_FLAG, struct gen_opts, stamp,
		.help = "--seq, and in the next 8 bytes the time the frame was written "
			"(CLOCK_MONOTONIC, ns, big-endian): a receiver on this host takes the "
			"one-way latency from it"),
	OPT_DEF("rate", OPT_UINT, struct gen_opts, rate, .lo = 0, .hi = 1000000000, .metavar = "PPS",
		.help = "at most PPS packets per second (default 0: as fast as it goes)"),
	OPT_DEF("duration", OPT_SECONDS, struct gen_opts, duration, .flags = OPT_F_POSITIVE,
		.metavar = "SEC", .help = "stop after SEC seconds (default: when signalled)"),
	OPT_DEF("start-at", OPT_SECONDS, struct gen_opts, start_at, .flags = OPT_F_POSITIVE,
		.dhi = 1e12, .metavar = "T", .help = "send from when CLOCK_MONOTONIC reads T seconds, "
		"after the set-up (generators started one by one send together; a T past "
		"by then: at once, said)"),
	OPT_DEF("count", OPT_UINT, struct gen_opts, count, .lo = 1, .hi = ~0ul >> 1, .metavar = "N",
		.help = "stop after N packets"),
	OPT_DEF("batch", OPT_UINT, struct gen_opts, batch, .lo = 1, .hi = 256, .metavar = "N",
		.help = "frames per batch, 1-256 (default 64): in the kernel's test run, "
			"in the loop (loop), descriptors per TX ring update (xsk), frames per "
			"sendmmsg() (packet)"),
	OPT_DEF("cpu", OPT_CPUS, struct gen_opts, cpu, .metavar = "N",
		.help = "run on CPU N (default: where the scheduler puts it)"),
	OPT_DEF("engine", OPT_ENUM, struct gen_opts, engine, .vals = engines, .metavar = "ENGINE",
		.seen = OPT_REF(struct gen_opts, engine_set),
		.help = "live (default; loop where the kernel refuses it): the XDP live-frame "
			"test run;\n"
			"loop: frames going round a veth pair of its own, each turn a copy out of "
			"IFACE (a CPU busy while it sends);\n"
			"xsk: an AF_XDP socket's TX ring (zero-copy when the driver can; slower "
			"on veth, which copies);\n"
			"packet: an AF_PACKET socket, sendmmsg() (slower still; frames past 3408 "
			"bytes: jumbo frames)"),
	OPT_DEF("queue", OPT_UINT, struct gen_opts, queue, .lo = 0, .hi = 1023,
		.seen = OPT_REF(struct gen_opts, queue_set), .metavar = "Q",
		.help = "the TX queue of --engine xsk (default 0)"),
	OPT_DEF("verbose", OPT_COUNT, struct gen_opts, verbose, .short_opt = 'v',
		.help = "libbpf's debug messages too"),
	{}
};

static const struct opts_cmd gen_cmd = {
	.name = "ucpumap-gen",
	.usage = "ucpumap-gen --dev IFACE [options]",
	.doc =
"Sends UDP over IPv4 or IPv6 out of IFACE from an XDP program run by the\n"
"kernel's live-frame test run (BPF_F_TEST_XDP_LIVE_FRAMES) or, where the kernel\n"
"refuses that, by frames that go round a veth pair of its own (--engine loop);\n"
"or from an AF_XDP socket (--engine xsk). Run it in IFACE's network namespace,\n"
"as root. The live and loop engines refuse an interface that takes no\n"
"redirected frames (on veth: a peer without an XDP program in native mode).\n"
"What they need while they run goes with the process, also when it is killed:\n"
"the live engine's tap device (ucmgenN), the loop engine's network namespace.\n",
	.tail =
"Prints the packets sent in each second and the total at the end.\n"
"SIGINT/SIGTERM stop it (the total is printed).\n",
	.opts = gen_opts,
};

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
static int pick_family(struct gen_opts *c)
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

static const char *engine_name(enum gen_engine e)
{
	const struct opt_enum *v;

	for (v = engines; v->name; v++)
		if (v->val == (int)e)
			return v->name;
	return "?";
}

/* The options into @c, then what depends on more than one of them.
 * Return 0, OPTS_HELP, or -1 after a message. */
static int parse_args(int argc, char **argv, struct gen_opts *c)
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

	c->seq |= c->stamp;
	hdr = ETH_HLEN_ + (c->ipv6 ? IP6_HLEN : IP4_HLEN) + UDP_HLEN + (c->seq ? UCM_GEN_SEQ_LEN : 0) +
	      (c->stamp ? UCM_GEN_STAMP_LEN : 0);
	if (!c->size_set && c->size < hdr)
		c->size = hdr;		/* IPv6 with --seq: 70 */
	if (c->size < hdr) {
		fprintf(stderr, "--size %lu: an %s UDP frame%s needs at least %lu bytes\n", c->size,
			c->ipv6 ? "IPv6" : "IPv4", c->stamp ? " with --stamp" : c->seq ? " with --seq" : "", hdr);
		return -1;
	}
	if (c->size > MAX_FRAME && c->engine != ENGINE_PACKET) {
		fprintf(stderr, "--size %lu: the %s engine's frames hold %d bytes at most: give --engine packet for larger ones\n",
			c->size, engine_name(c->engine), MAX_FRAME);
		return -1;
	}
	if (c->sport + c->flows - 1 > 65535) {
		fprintf(stderr, "--flows %lu from --src-port %lu runs past port 65535; lower one of them\n",
			c->flows, c->sport);
		return -1;
	}
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
static void build_template(const struct gen_opts *c, const uint8_t *smac, uint8_t *f)
{
	memcpy(f, c->dmac, 6);
	memcpy(f + 6, smac, 6);
	put16(f + 12, c->ipv6 ? 0x86dd : 0x0800);
	udp_build(f + ETH_HLEN_, c->size - ETH_HLEN_, c->ipv6,
		  c->ipv6 ? (const void *)&c->src.v6 : (const void *)&c->src.v4,
		  c->ipv6 ? (const void *)&c->dst.v6 : (const void *)&c->dst.v4, c->sport, c->dport);
}

/* ---- main ------------------------------------------------------------------------- */

/* @dev's MAC, MTU, and whether it is up with a carrier (the driver's
 * own, at once; the operational state follows it later). */
static int dev_info(const char *dev, uint8_t *mac, int *mtu, bool *up, bool *carrier)
{
	struct ethtool_value link = { .cmd = ETHTOOL_GLINK };
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
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		err = -errno;
		goto out;
	}
	*up = ifr.ifr_flags & IFF_UP;
	*carrier = ifr.ifr_flags & IFF_RUNNING;
	ifr.ifr_data = (void *)&link;
	if (!ioctl(fd, SIOCETHTOOL, &ifr))
		*carrier = link.data;
out:
	close(fd);
	return err;
}

/* Whether @dev takes frames an XDP program redirects to it (netdev's
 * xdp-features: the kernel drops them, uncounted by us, where it lacks
 * ndo_xdp_xmit): 1, 0, or -1 where the kernel cannot say (no netdev
 * family before Linux 6.3, or no answer). */
static int dev_takes_xdp(const char *dev)
{
	struct ucm_netdev_info nd;
	int ifindex = if_nametoindex(dev);

	if (!ifindex || ucm_netdev_info(ifindex, &nd))
		return -1;
	return !!(nd.xdp_features & UCM_NETDEV_XDP_NDO_XMIT);
}

const char *gen_link_lost(const struct gen_opts *c)
{
	static char why[96];
	bool up = false, carrier = false;
	uint8_t mac[6];
	int mtu;

	if (dev_info(c->dev, mac, &mtu, &up, &carrier) || !up || !carrier)
		return "went down or lost its carrier";
	/* Lowered under us: the kernel drops what no longer fits. */
	if (c->size > (unsigned long)mtu + ETH_HLEN_) {
		snprintf(why, sizeof(why), "now has MTU %d, too small for frames of --size %lu",
			 mtu, c->size);
		return why;
	}
	if ((c->engine == ENGINE_LIVE || c->engine == ENGINE_LOOP) && !dev_takes_xdp(c->dev))
		return "no longer takes redirected frames (on veth: the peer's XDP program went)";
	return NULL;
}

/* The engines that redirect (live, loop) need a device that takes
 * redirected frames. 0, or -1 after a message. */
static int xmit_check(const struct gen_opts *c)
{
	if ((c->engine != ENGINE_LIVE && c->engine != ENGINE_LOOP) || dev_takes_xdp(c->dev))
		return 0;
	fprintf(stderr, "ucpumap-gen: %s takes no frames redirected by XDP (its xdp-features lack ndo-xmit): the %s engine's would be counted and dropped; on veth, give the peer an XDP program (native mode) or GRO (ethtool -K PEER gro on), or send with --engine xsk or packet\n",
		c->dev, c->engine == ENGINE_LIVE ? "live" : "loop");
	return -1;
}

/* The interface: its index and MAC, and --size against its MTU. 0, or -1
 * after a message. */
static int dev_check(const struct gen_opts *c, int *ifindex, uint8_t *smac)
{
	bool up = false, carrier = false;
	int mtu = 0, err;

	*ifindex = if_nametoindex(c->dev);
	if (!*ifindex) {
		fprintf(stderr, "ucpumap-gen: no interface named '%s' here (ip link shows the names; run the generator in the interface's network namespace)\n",
			c->dev);
		return -1;
	}
	err = dev_info(c->dev, smac, &mtu, &up, &carrier);
	if (err) {
		fprintf(stderr, "ucpumap-gen: %s: %s\n", c->dev,
			err == -EPFNOSUPPORT ? "not an Ethernet device" : strerror(-err));
		return -1;
	}
	/* Down, a redirect out of it fails in the kernel after the program
	 * counted the frame: it would be "sent" and never leave. */
	if (!up || !carrier) {
		fprintf(stderr, "ucpumap-gen: %s is %s: nothing sent would leave; ip link set %s up%s\n",
			c->dev, up ? "up but has no carrier" : "down", c->dev,
			up ? " (a veth's peer too)" : "");
		return -1;
	}
	if (c->size > (unsigned long)mtu + ETH_HLEN_) {
		fprintf(stderr, "ucpumap-gen: --size %lu: %s's MTU %d carries frames of at most %d bytes; ask for less, or raise the MTU (ip link set %s mtu %lu)\n",
			c->size, c->dev, mtu, mtu + ETH_HLEN_, c->dev, c->size - ETH_HLEN_);
		return -1;
	}
	return 0;
}

/*
 * The live engine where the kernel runs live frames; else, unless it was
 * asked for, the loop engine, said on stderr: its frames leave from the
 * CPU that put them in, as the live engine's do, so they take the same TX
 * queue. 0, or -1 after a message.
 */
static int pick_engine(struct gen_opts *c)
{
	int err;

	if (c->engine != ENGINE_LIVE || !(err = xdp_live_frames()))
		return 0;
	if (c->engine_set) {
		fprintf(stderr, "ucpumap-gen: this kernel refuses the XDP live-frame test run (%s): give --engine loop, xsk or packet\n",
			strerror(-err));
		return -1;
	}
	c->engine = ENGINE_LOOP;
	fprintf(stderr, "ucpumap-gen: this kernel refuses the XDP live-frame test run (%s): sending with --engine loop\n",
		strerror(-err));
	return 0;
}

/* What sends: one engine's state, its send call and its name. */
struct sender {
	gen_send_fn send;
	void *ctx;
	char name[64];
};

static int sender_open(const struct gen_opts *c, int ifindex, const struct gen_tmpl *t,
		       struct sender *s)
{
	struct ucm_gen_cfg gc = {
		.ifindex = ifindex, .flags = t->flags, .flows = c->flows, .sport = c->sport,
		.dport = c->dport, .size = t->size,
	};

	switch (c->engine) {
	case ENGINE_LIVE:
		s->ctx = live_open(&gc, t, c->batch, c->verbose);
		s->send = live_send;
		break;
	case ENGINE_LOOP:
		s->ctx = loop_open(&gc, t, c->batch, c->verbose, &gen_stop);
		s->send = loop_send;
		break;
	case ENGINE_XSK:
		s->ctx = xsk_tx_open(c->dev, c->queue, t, c->batch, &gen_stop);
		s->send = xsk_tx_send;
		break;
	case ENGINE_PACKET:
		s->ctx = packet_open(ifindex, t, c->batch, &gen_stop);
		s->send = packet_send;
		break;
	}
	if (!s->ctx)
		return -1;
	if (c->engine == ENGINE_XSK)
		snprintf(s->name, sizeof(s->name), "xsk engine on queue %lu (%s)", c->queue,
			 xsk_tx_zerocopy(s->ctx) ? "zero-copy" : "copy");
	else
		snprintf(s->name, sizeof(s->name), "%s engine", engine_name(c->engine));
	return 0;
}

static void sender_close(const struct gen_opts *c, struct sender *s)
{
	switch (c->engine) {
	case ENGINE_LIVE:
		live_close(s->ctx);
		break;
	case ENGINE_LOOP:
		loop_close(s->ctx);
		break;
	case ENGINE_XSK:
		xsk_tx_close(s->ctx);
		break;
	case ENGINE_PACKET:
		packet_close(s->ctx);
		break;
	}
}

static void print_banner(const struct gen_opts *c, const char *ename)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], m[18];

	printf("ucpumap-gen: %s -> %s: %s UDP %s:%lu", c->dev, mac_str(c->dmac, m),
	       c->ipv6 ? "IPv6" : "IPv4", addr_str(c, &c->src, a), c->sport);
	if (c->flows > 1)
		printf("-%lu", c->sport + c->flows - 1);
	printf(" -> %s:%lu, %lu-byte frames, %lu flow%s%s, ", addr_str(c, &c->dst, b), c->dport,
	       c->size, c->flows, c->flows > 1 ? "s" : "", c->stamp ? ", sequence numbers, send times" : c->seq ? ", sequence numbers" : "");
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
	struct gen_opts c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	err = parse_args(argc, argv, &c);
	if (err)
		return err == OPTS_HELP ? 0 : 2;
	if (geteuid() != 0) {
		fprintf(stderr, "ucpumap-gen: needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo\n");
		return 1;
	}
	if (dev_check(&c, &ifindex, smac) || resolve_addrs(&c, ifindex) || pick_engine(&c) ||
	    xmit_check(&c))
		return 1;
	if (c.cpu >= 0 && (err = pin_self(c.cpu))) {
		fprintf(stderr, "ucpumap-gen: cannot run on CPU %d: %s\n", c.cpu, strerror(-err));
		return 1;
	}

	frame = calloc(1, MAX_JUMBO);
	if (!frame)
		return 1;
	build_template(&c, smac, frame);
	t = (struct gen_tmpl){
		.frame = frame, .size = c.size, .flows = c.flows, .sport = c.sport,
		.flags = (c.ipv6 ? UCM_GEN_F_IPV6 : 0) | (c.seq ? UCM_GEN_F_SEQ : 0) |
			 (c.stamp ? UCM_GEN_F_STAMP : 0),
	};
	if (sender_open(&c, ifindex, &t, &snd)) {
		if (c.engine == ENGINE_LOOP)
			fprintf(stderr, "ucpumap-gen: --engine xsk or --engine packet sends without a namespace and devices of its own\n");
		free(frame);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	print_banner(&c, snd.name);
	status = pace_run(&c, snd.send, snd.ctx, &gen_stop);
	sender_close(&c, &snd);
	free(frame);
	return status;
}
