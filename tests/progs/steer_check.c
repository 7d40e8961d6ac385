// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XDP steering program against its userspace twin. Each packet of a
 * table (IPv4/IPv6, UDP/TCP/ICMP, VLAN tags, IPv4 options, fragments, IPv6
 * extension headers, control traffic) runs through the loaded program with
 * BPF_PROG_TEST_RUN; the worker it writes into the metadata must equal
 * ucm_steer__pick() on ucm_pkt__parse() of the same bytes, for every
 * policy. Control traffic must pass without metadata. Where the kernel's
 * XDP has no bpf_xdp_adjust_meta(), the library loads ucm_xdp_nometa
 * instead: the cases that read the worker skip, and test_nometa checks
 * that every packet passes unchanged, without metadata. test_claims checks
 * which packets either program claims, with a socket in the map. Needs
 * root (CAP_BPF); run by tests/net/test-steer.sh.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdlib.h>

#include "ucpumap/xdp.h"
#include "ucpumap/log.h"
#include "utest.h"

#define MAX_PKT	256

struct tpkt {
	char name[48];
	uint8_t d[MAX_PKT];
	uint32_t len;
	int control;		/* must pass without metadata */
};

static struct tpkt pkts[512];
static int npkts;
static uint32_t rnd = 2463534242u;

static uint32_t xs(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 17;
	rnd ^= rnd << 5;
	return rnd;
}

static uint8_t *put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; return p + 2; }

static uint8_t *eth(uint8_t *p, uint16_t proto, int vlans)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };

	memcpy(p, macs, 12);
	p += 12;
	if (vlans == 2) {
		p = put16(p, 0x88a8);
		p = put16(p, 100);
	}
	if (vlans >= 1) {
		p = put16(p, 0x8100);
		p = put16(p, 200);
	}
	return put16(p, proto);
}

static uint8_t *l4(uint8_t *p, uint8_t proto, uint16_t sport, uint16_t dport,
		   uint32_t plen)
{
	memset(p, 0, 20);
	if (proto == IPPROTO_UDP) {
		put16(p, sport);
		put16(p + 2, dport);
		put16(p + 4, plen);
		return p + plen;
	}
	if (proto == IPPROTO_TCP) {
		put16(p, sport);
		put16(p + 2, dport);
		p[12] = 5 << 4;
		return p + plen;
	}
	p[0] = proto == IPPROTO_ICMPV6 ? 128 : 8;	/* echo request */
	return p + plen;
}

/* A random destination port, none of DHCP's (link control: 67, 68, 546,
 * 547), so only add_link_scope()'s packets are the link's own. */
static uint16_t any_port(void)
{
	uint16_t dp = 1 + xs() % 65000;

	return dp == 67 || dp == 68 || dp == 546 || dp == 547 ? dp + 1000 : dp;
}

/* IPv4 with @opt option words, fragment field @frag, then L4. */
static void add_v4(const char *name, int vlans, uint8_t proto, uint16_t frag,
		   int opt)
{
	struct tpkt *t = &pkts[npkts++];
	uint8_t *p = eth(t->d, 0x0800, vlans), *ip = p;
	uint32_t ihl = 20 + 4 * opt, plen = 20;
	uint32_t sa = htonl(0xc6120000 | (xs() & 0xffff));
	uint16_t sp, dp;
	uint32_t da = htonl(0xc6130000 | (xs() & 0xffff));

	snprintf(t->name, sizeof(t->name), "%s", name);
	memset(ip, 0, ihl);
	ip[0] = 0x40 | (ihl / 4);
	put16(ip + 2, ihl + plen);
	put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, &sa, 4);
	memcpy(ip + 16, &da, 4);
	for (int i = 0; i < opt; i++)
		ip[20 + 4 * i] = 1;	/* NOP options */
	sp = 1024 + xs() % 60000;
	dp = any_port();
	p = l4(ip + ihl, proto, sp, dp, plen);
	t->len = p - t->d < 60 ? 60 : p - t->d;
}

/* An extension header list's end: hop-by-hop is 0, so 0 cannot be. */
#define EXT_END		IPPROTO_RAW

/* IPv6 with a chain of extension headers @ext (a list of next header
 * numbers up to EXT_END), then L4. */
static void add_v6(const char *name, int vlans, uint8_t proto, const uint8_t *ext,
		   uint16_t frag_fo)
{
	struct tpkt *t = &pkts[npkts++];
	uint8_t *p = eth(t->d, 0x86dd, vlans), *ip = p, *cur, *nhp;
	uint32_t plen = 20;

	snprintf(t->name, sizeof(t->name), "%s", name);
	memset(ip, 0, 40);
	ip[0] = 0x60;
	ip[7] = 64;
	for (int i = 0; i < 16; i++) {
		ip[8 + i] = xs();
		ip[24 + i] = xs();
	}
	ip[24] = 0x20 | (ip[24] & 0x1f);	/* global unicast: 2000::/3 */
	nhp = ip + 6;
	cur = ip + 40;
	for (; ext && *ext != EXT_END; ext++) {
		*nhp = *ext;
		memset(cur, 0, 8);
		if (*ext == IPPROTO_FRAGMENT)
			put16(cur + 2, frag_fo);
		else if (*ext == IPPROTO_AH)
			cur[1] = 0;	/* (0 + 2) * 4 = 8 bytes */
		nhp = cur;
		cur += 8;
	}
	*nhp = proto;
	p = l4(cur, proto, 1024 + xs() % 60000, any_port(), plen);
	put16(ip + 4, p - ip - 40);
	t->len = p - t->d;
}

static void add_raw(const char *name, uint16_t proto, int control)
{
	struct tpkt *t = &pkts[npkts++];
	uint8_t *p = eth(t->d, proto, 0);

	snprintf(t->name, sizeof(t->name), "%s", name);
	memset(p, 0, 46);
	t->len = 60;
	t->control = control;
}

/* The interface's own traffic, which the kernel takes on that interface
 * alone: DHCP's (to a client's or a server's port, unicast), 169.254/16,
 * multicast (224.0.0.0/24's and beyond) and IGMP, the limited broadcast;
 * DHCPv6's ports on a global address, fe80::/10, ff02::, ff05::.
 * LINK_SCOPE of them, IPv4's first. */
#define LINK_SCOPE	13
#define LINK_SCOPE_V4	7
static void add_link_scope(void)
{
	static const struct {
		uint8_t dst[4], proto;
		uint16_t dport;		/* 0: the random one */
	} v4[LINK_SCOPE_V4] = {
		{ { 198, 19, 0, 1 }, IPPROTO_UDP, 68 }, { { 198, 19, 0, 1 }, IPPROTO_UDP, 67 },
		{ { 169, 254, 7, 7 }, IPPROTO_UDP, 0 }, { { 224, 0, 0, 5 }, IPPROTO_UDP, 0 },
		{ { 239, 1, 2, 3 }, IPPROTO_UDP, 0 }, { { 255, 255, 255, 255 }, IPPROTO_UDP, 0 },
		{ { 198, 19, 0, 2 }, IPPROTO_IGMP, 0 } };
	static const struct {
		uint8_t dst[2];		/* 0: add_v6()'s global one */
		uint16_t dport;
	} v6[LINK_SCOPE - LINK_SCOPE_V4] = {
		{ { 0 }, 546 }, { { 0 }, 547 }, { { 0xfe, 0x80 }, 0 },
		{ { 0xff, 0x02 }, 0 }, { { 0xff, 0x05 }, 0 }, { { 0xfe, 0xbf }, 0 } };
	struct tpkt *t;
	int i;

	for (i = 0; i < LINK_SCOPE_V4; i++) {
		add_v4("v4 the link's own", 0, v4[i].proto, 0, 0);
		t = &pkts[npkts - 1];
		memcpy(t->d + 14 + 16, v4[i].dst, 4);
		if (v4[i].dport)
			put16(t->d + 14 + 20 + 2, v4[i].dport);
		t->control = 1;
	}
	for (i = 0; i < LINK_SCOPE - LINK_SCOPE_V4; i++) {
		add_v6("v6 the link's own", 0, IPPROTO_UDP, NULL, 0);
		t = &pkts[npkts - 1];
		if (v6[i].dst[0])
			memcpy(t->d + 14 + 24, v6[i].dst, 2);
		if (v6[i].dport)
			put16(t->d + 14 + 40 + 2, v6[i].dport);
		t->control = 1;
	}
}

static void build_table(void)
{
	static const uint8_t hbh[] = { IPPROTO_HOPOPTS, EXT_END };
	static const uint8_t chain[] = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING, EXT_END };
	static const uint8_t ah[] = { IPPROTO_AH, EXT_END };
	static const uint8_t frag[] = { IPPROTO_FRAGMENT, EXT_END };
	static const uint8_t frag_dst[] = { IPPROTO_FRAGMENT, IPPROTO_DSTOPTS, EXT_END };
	static const uint8_t frag_frag[] = { IPPROTO_FRAGMENT, IPPROTO_FRAGMENT, EXT_END };
	int i;

	for (i = 0; i < 40; i++) {
		add_v4("v4 udp", i % 3, IPPROTO_UDP, 0x4000, 0);
		add_v4("v4 tcp", 0, IPPROTO_TCP, 0, 0);
		add_v6("v6 udp", i % 3, IPPROTO_UDP, NULL, 0);
		add_v6("v6 tcp", 0, IPPROTO_TCP, NULL, 0);
	}
	for (i = 0; i < 5; i++) {
		add_v4("v4 udp with options", 0, IPPROTO_UDP, 0, 3);
		add_v4("v4 icmp", 0, IPPROTO_ICMP, 0, 0);
		add_v4("v4 first fragment", 0, IPPROTO_UDP, 0x2000, 0);
		add_v4("v4 later fragment", 0, IPPROTO_UDP, 0x0010, 0);
		add_v4("v4 last fragment", 1, IPPROTO_UDP, 0x0020, 0);
		add_v6("v6 hbh udp", 0, IPPROTO_UDP, hbh, 0);
		add_v6("v6 hbh+dst+rt tcp", 1, IPPROTO_TCP, chain, 0);
		add_v6("v6 ah udp", 0, IPPROTO_UDP, ah, 0);
		add_v6("v6 first fragment", 0, IPPROTO_UDP, frag, 0x0001);
		add_v6("v6 later fragment", 0, IPPROTO_UDP, frag, 0x0100);
		add_v6("v6 atomic fragment", 0, IPPROTO_UDP, frag, 0);
		add_v6("v6 fragment+dst", 0, IPPROTO_UDP, frag_dst, 0x0001);
		add_v6("v6 two fragment headers", 0, IPPROTO_UDP, frag_frag, 0x0001);
		add_v6("v6 echo", 0, IPPROTO_ICMPV6, NULL, 0);
	}
	add_link_scope();
	add_raw("arp", 0x0806, 1);
	add_raw("lldp", 0x88cc, 1);
	/* IPv6 neighbour discovery and multicast listener messages. */
	{
		static const uint8_t types[] = { 133, 135, 136, 130, 143 };

		for (i = 0; i < (int)sizeof(types); i++) {
			add_v6("v6 nd/mld", 0, IPPROTO_ICMPV6, NULL, 0);
			pkts[npkts - 1].d[14 + 40] = types[i];
			pkts[npkts - 1].control = 1;
		}
	}
}

/* Run the program on one packet; return the XDP action, set *worker to the
 * metadata's worker or -1 when there is none. */
static int run_prog(int fd, const struct tpkt *t, int *worker)
{
	uint8_t out[MAX_PKT + 64];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = t->d, .data_size_in = t->len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	struct ucm_xdp_meta meta;

	if (bpf_prog_test_run_opts(fd, &o))
		return -errno;
	*worker = -1;
	/* The output starts at the metadata when the program wrote some. */
	if (o.data_size_out == t->len + sizeof(meta)) {
		memcpy(&meta, out, sizeof(meta));
		if (meta.magic == UCM_XDP_META_MAGIC)
			*worker = meta.worker;
	}
	return o.retval;
}

static struct ucm_xdp *x;
static bool nometa;	/* the loaded steering program is ucm_xdp_nometa */

/* For the cases that read the worker from the metadata. */
static int skip_nometa(void)
{
	ut_skip_reason("this kernel's XDP has no bpf_xdp_adjust_meta(): ucm_xdp_nometa carries no worker");
	return UT_SKIP;
}

static int check_policy(uint32_t policy, uint32_t n, uint32_t flags, uint32_t fixed)
{
	struct ucm_steer_cfg cfg = { .policy = policy, .nworkers = n, .flags = flags,
				     .fixed = fixed };
	int fd = ucm_xdp__steer_fd(x), i, spread[UCM_STEER_MAX_WORKERS] = {};
	uint32_t rr = 0;

	if (nometa)
		return skip_nometa();
	UT_ASSERT(!ucm_xdp__configure(x, &cfg), "configure: %s", strerror(errno));
	for (i = 0; i < npkts; i++) {
		const struct tpkt *t = &pkts[i];
		struct ucm_pkt pkt;
		int act, worker;
		uint32_t want;

		act = run_prog(fd, t, &worker);
		UT_ASSERT(act >= 0, "%s: test run failed: %s", t->name, strerror(-act));
		UT_ASSERT(act == XDP_PASS, "%s: action %d, want XDP_PASS (no socket)", t->name, act);
		if (t->control) {
			UT_ASSERT(worker == -1, "%s: control traffic got metadata", t->name);
			continue;
		}
		UT_ASSERT(worker >= 0, "%s: no metadata", t->name);
		UT_ASSERT(ucm_pkt__parse(&pkt, t->d, t->len) == UCM_DROP_NONE,
			  "%s: the table packet is malformed", t->name);
		want = ucm_steer__pick(&cfg, &pkt, &rr);
		if (policy == UCM_STEER_RR)
			continue;	/* checked below: one position per CPU */
		UT_ASSERT((uint32_t)worker == want, "%s (#%d): XDP picked %d, userspace %u",
			  t->name, i, worker, want);
		spread[worker]++;
	}
	if (policy == UCM_STEER_L4_HASH || policy == UCM_STEER_L4_SPORT ||
	    policy == UCM_STEER_L4_DPORT)
		for (i = 0; i < (int)n; i++)
			UT_ASSERT(spread[i] > 0, "worker %d got nothing: no spread", i);
	return 0;
}

static int test_fixed(void) { return check_policy(UCM_STEER_FIXED, 4, 0, 2); }
static int test_l4_hash(void) { return check_policy(UCM_STEER_L4_HASH, 3, 0, 0); }
static int test_l4_hash_symmetric(void)
{
	return check_policy(UCM_STEER_L4_HASH, 3, UCM_STEER_F_SYMMETRIC, 0);
}
static int test_l4_sport(void) { return check_policy(UCM_STEER_L4_SPORT, 3, 0, 0); }
static int test_l4_dport(void) { return check_policy(UCM_STEER_L4_DPORT, 4, 0, 0); }

/* Round-robin: the program keeps one position per CPU; pinned, the
 * workers come in turn. */
static int test_round_robin(void)
{
	struct ucm_steer_cfg cfg = { .policy = UCM_STEER_RR, .nworkers = 3 };
	int i, worker, prev = -1, act;
	cpu_set_t set;

	if (nometa)
		return skip_nometa();
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	for (i = 0; !CPU_ISSET(i, &set); i++)
		;
	CPU_ZERO(&set);
	CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
	UT_ASSERT(!ucm_xdp__configure(x, &cfg), "configure");
	for (i = 0; i < 30; i++) {
		act = run_prog(ucm_xdp__steer_fd(x), &pkts[0], &worker);
		UT_ASSERT(act == XDP_PASS && worker >= 0, "run %d: action %d worker %d", i, act, worker);
		if (prev >= 0)
			UT_ASSERT(worker == (prev + 1) % 3, "run %d: %d after %d", i, worker, prev);
		prev = worker;
	}
	return 0;
}

/* Only IPv6 claimed: IPv4 passes without metadata. */
static int test_family_filter(void)
{
	struct ucm_steer_cfg cfg = { .policy = UCM_STEER_FIXED, .nworkers = 2,
				     .flags = UCM_STEER_F_IPV6 };
	int worker, act;

	if (nometa)
		return skip_nometa();
	UT_ASSERT(!ucm_xdp__configure(x, &cfg), "configure");
	act = run_prog(ucm_xdp__steer_fd(x), &pkts[0], &worker);	/* v4 */
	UT_ASSERT(act == XDP_PASS && worker == -1, "IPv4 steered although only IPv6 is claimed");
	act = run_prog(ucm_xdp__steer_fd(x), &pkts[2], &worker);	/* v6 */
	UT_ASSERT(act == XDP_PASS && worker == 0, "IPv6 not steered (worker %d)", worker);
	return 0;
}

/* UCM_STEER_F_LINK_CTRL: ARP and neighbour discovery get a worker (for a
 * tap behind ucpumap); other non-IP still passes. Without it: see
 * check_policy(), control traffic never gets metadata. */
static int test_link_ctrl(void)
{
	struct ucm_steer_cfg cfg = { .policy = UCM_STEER_L4_HASH, .nworkers = 3,
				     .flags = UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6 |
					      UCM_STEER_F_LINK_CTRL };
	int i, act, worker, steered = 0;
	struct ucm_pkt pkt;
	uint32_t rr = 0;

	if (nometa)
		return skip_nometa();
	UT_ASSERT(!ucm_xdp__configure(x, &cfg), "configure: %s", strerror(errno));
	for (i = 0; i < npkts; i++) {
		const struct tpkt *t = &pkts[i];

		act = run_prog(ucm_xdp__steer_fd(x), t, &worker);
		UT_ASSERT(act == XDP_PASS, "%s: action %d", t->name, act);
		if (!strcmp(t->name, "lldp")) {
			UT_ASSERT(worker == -1, "lldp got metadata");
		} else if (t->control) {
			UT_ASSERT(worker >= 0 && worker < 3, "%s: not steered (%d)", t->name, worker);
			steered++;
			/* The worker the RX thread would pick without the
			 * metadata: the flow read whole, not left empty. */
			if (ucm_pkt__parse(&pkt, t->d, t->len) == UCM_DROP_NONE)
				UT_ASSERT((uint32_t)worker == ucm_steer__pick(&cfg, &pkt, &rr),
					  "%s (#%d): XDP picked %d, userspace %u", t->name, i,
					  worker, ucm_steer__pick(&cfg, &pkt, &rr));
		}
	}
	UT_ASSERT(steered == 6 + LINK_SCOPE, "%d of %d control packets steered (arp, 5 nd/mld, %d the link's own)",
		  steered, 6 + LINK_SCOPE, LINK_SCOPE);
	return 0;
}

/* ucm_xdp_nometa, where it is loaded: every packet, steered or not,
 * stamped or not, passes (no socket in the map) with no byte in front of
 * it; the RX thread picks its worker (the twin's own tests cover that). */
static int test_nometa(void)
{
	static const struct ucm_steer_cfg cfgs[] = {
		{ .policy = UCM_STEER_L4_HASH, .nworkers = 3 },
		{ .policy = UCM_STEER_FIXED, .nworkers = 2, .fixed = 1,
		  .flags = UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6 | UCM_STEER_F_LINK_CTRL |
			   UCM_STEER_F_STAMP },
	};
	uint8_t out[MAX_PKT + 64];
	unsigned int c;
	int i;

	if (!nometa) {
		ut_skip_reason("ucm_xdp_steer is loaded: the metadata cases check it");
		return UT_SKIP;
	}
	for (c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		UT_ASSERT(!ucm_xdp__configure(x, &cfgs[c]), "configure %u: %s", c,
			  strerror(errno));
		for (i = 0; i < npkts; i++) {
			const struct tpkt *t = &pkts[i];
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = t->d,
				    .data_size_in = t->len, .data_out = out,
				    .data_size_out = sizeof(out), .repeat = 1);

			UT_ASSERT(!bpf_prog_test_run_opts(ucm_xdp__steer_fd(x), &o),
				  "%s: test run failed: %s", t->name, strerror(errno));
			UT_ASSERT(o.retval == XDP_PASS, "config %u, %s: action %u, want XDP_PASS",
				  c, t->name, o.retval);
			UT_ASSERT(o.data_size_out == t->len && !memcmp(out, t->d, t->len),
				  "config %u, %s: %u bytes out of %u in: metadata or a change",
				  c, t->name, o.data_size_out, t->len);
		}
	}
	return 0;
}

/*
 * What the program claims, whichever is loaded: with a socket in queue 0's
 * slot (an unbound AF_XDP socket: the test run does not deliver), a claimed
 * packet is XDP_REDIRECT and the rest XDP_PASS. Without a socket both pass,
 * so this is the nometa program's only view of its choice.
 */
static int claims(const struct ucm_steer_cfg *cfg, const struct tpkt *t)
{
	uint8_t out[MAX_PKT + 64];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = t->d, .data_size_in = t->len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

	if (ucm_xdp__configure(x, cfg) || bpf_prog_test_run_opts(ucm_xdp__steer_fd(x), &o))
		return -errno;
	return o.retval == XDP_REDIRECT ? 1 : o.retval == XDP_PASS ? 0 : -EPROTO;
}

static int test_claims(void)
{
	const struct ucm_steer_cfg both = { .policy = UCM_STEER_L4_HASH, .nworkers = 3 };
	const struct ucm_steer_cfg v6 = { .policy = UCM_STEER_FIXED, .nworkers = 2,
					  .flags = UCM_STEER_F_IPV6 };
	const struct ucm_steer_cfg v6ctrl = { .policy = UCM_STEER_FIXED, .nworkers = 2,
					      .flags = UCM_STEER_F_IPV6 | UCM_STEER_F_LINK_CTRL };
	const struct ucm_steer_cfg ctrl = { .policy = UCM_STEER_L4_HASH, .nworkers = 3,
					    .flags = UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6 |
						     UCM_STEER_F_LINK_CTRL };
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), i, c, n = 0, ctl = 0, err = 0, want;

	UT_ASSERT(fd >= 0, "no AF_XDP socket: %s", strerror(errno));
	if (ucm_xdp__set_xsk(x, 0, fd)) {
		close(fd);
		UT_ASSERT(0, "the socket into queue 0's slot: %s", strerror(errno));
	}
	for (i = 0; i < npkts && !err; i++) {
		const struct tpkt *t = &pkts[i];

		c = claims(&both, t);
		if (c != !t->control) {
			ut_fail_reason("%s: claimed %d, want %d (control traffic stays with the kernel)",
				    t->name, c, !t->control);
			err = -1;
		}
		n += c == 1;
		c = claims(&ctrl, t);
		if (t->control && c == 1)
			ctl++;
		else if (!t->control && c != 1) {
			ut_fail_reason("%s: not claimed with UCM_STEER_F_LINK_CTRL (%d)", t->name, c);
			err = -1;
		}
	}
	if (!err && (claims(&v6, &pkts[0]) != 0 || claims(&v6, &pkts[2]) != 1)) {
		ut_fail_reason("IPv6 alone claimed: IPv4 %d (want 0), IPv6 %d (want 1)",
			    claims(&v6, &pkts[0]), claims(&v6, &pkts[2]));
		err = -1;
	}
	/* IPv6 and its link control: ARP and IPv4's link scope stay with
	 * the kernel as IPv4 does; neighbour discovery and IPv6's link scope
	 * are claimed. */
	for (i = 0; i < npkts && !err; i++) {
		const struct tpkt *t = &pkts[i];

		if (!t->control)
			continue;
		want = !strncmp(t->name, "v6 ", 3);
		c = claims(&v6ctrl, t);
		if (c != want) {
			ut_fail_reason("%s with IPv6 and its link control only: claimed %d, want %d",
				    t->name, c, want);
			err = -1;
		}
	}
	ucm_xdp__set_xsk(x, 0, -1);
	close(fd);
	if (err)
		return 1;
	UT_ASSERT(ctl == 6 + LINK_SCOPE,
		  "%d of %d control packets claimed with UCM_STEER_F_LINK_CTRL (arp, 5 nd/mld, %d the link's own)",
		  ctl, 6 + LINK_SCOPE, LINK_SCOPE);
	UT_ASSERT(n > 0, "no packet claimed");
	return 0;
}

/* The kernel's cpumap has an entry a possible CPU: more than the
 * kernel's NR_CPUS would refuse the whole object. */
static int cpu_map_entries(void)
{
	uint32_t ids[8], i, n;
	struct bpf_prog_info pi = {};
	struct bpf_map_info mi;
	uint32_t len = sizeof(pi), mlen;
	int fd, found = 0;

	pi.nr_map_ids = 8;
	pi.map_ids = (uintptr_t)ids;
	UT_ASSERT(!bpf_obj_get_info_by_fd(ucm_xdp__cpumap_fd(x), &pi, &len), "prog info: %s",
		  strerror(errno));
	n = pi.nr_map_ids < 8 ? pi.nr_map_ids : 8;
	for (i = 0; i < n; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		mlen = sizeof(mi);
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen) && mi.type == BPF_MAP_TYPE_CPUMAP) {
			found = 1;
			UT_ASSERT(mi.max_entries == (uint32_t)libbpf_num_possible_cpus(),
				  "ucm_cpu_map: %u entries, want %d (the possible CPUs)",
				  mi.max_entries, libbpf_num_possible_cpus());
		}
		close(fd);
	}
	UT_ASSERT(found, "no cpumap among the baseline program's %u maps", n);
	return 0;
}

/* The baseline program redirects into the kernel's cpumap. */
static int test_kernel_cpumap(void)
{
	struct ucm_steer_cfg cfg = { .policy = UCM_STEER_L4_HASH, .nworkers = 1 };
	int cpus[1] = { 0 }, cpus2[2], worker, act, i;
	cpu_set_t set;

	sched_getaffinity(0, sizeof(set), &set);
	for (i = 0; !CPU_ISSET(i, &set); i++)
		;
	cpus[0] = i;
	UT_ASSERT(!ucm_xdp__configure(x, &cfg), "configure");
	UT_ASSERT(!ucm_xdp__set_kernel_cpumap(x, cpus, 1, 2048), "cpumap: %s", strerror(errno));
	act = run_prog(ucm_xdp__cpumap_fd(x), &pkts[0], &worker);
	UT_ASSERT(act == XDP_REDIRECT, "action %d, want XDP_REDIRECT", act);
	act = run_prog(ucm_xdp__cpumap_fd(x), &pkts[npkts - 7], &worker);	/* arp */
	UT_ASSERT(act == XDP_PASS, "arp: action %d, want XDP_PASS", act);
	errno = 0;
	UT_ASSERT(ucm_xdp__set_kernel_cpumap(x, cpus, 1, 20000) == -EINVAL,
		  "queue size 20000 accepted");
	/* Worker 1 of an earlier call is unconfigured by a call for one. */
	cfg = (struct ucm_steer_cfg){ .policy = UCM_STEER_FIXED, .nworkers = 2, .fixed = 1 };
	UT_ASSERT(!ucm_xdp__configure(x, &cfg), "configure");
	cpus2[0] = cpus2[1] = cpus[0];
	UT_ASSERT(!ucm_xdp__set_kernel_cpumap(x, cpus2, 2, 2048), "cpumap: %s", strerror(errno));
	act = run_prog(ucm_xdp__cpumap_fd(x), &pkts[0], &worker);
	UT_ASSERT(act == XDP_REDIRECT, "worker 1 of 2: action %d, want XDP_REDIRECT", act);
	UT_ASSERT(!ucm_xdp__set_kernel_cpumap(x, cpus, 1, 2048), "cpumap: %s", strerror(errno));
	act = run_prog(ucm_xdp__cpumap_fd(x), &pkts[0], &worker);
	UT_ASSERT(act == XDP_PASS, "worker 1 after a call for one: action %d, want XDP_PASS", act);
	return cpu_map_entries();
}

static int test_bad_config(void)
{
	static const struct ucm_steer_cfg bad[] = {
		{ .policy = UCM_STEER__MAX, .nworkers = 1 },
		{ .policy = UCM_STEER_FIXED, .nworkers = 0 },
		{ .policy = UCM_STEER_FIXED, .nworkers = 65 },
		{ .policy = UCM_STEER_FIXED, .nworkers = 2, .fixed = 2 },
		{ .policy = UCM_STEER_FIXED, .nworkers = 2, .flags = 0x80 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		UT_ASSERT(ucm_xdp__configure(x, &bad[i]) == -EINVAL, "bad config %u accepted", i);
	/* An attach flag the library does not know: refused before anything
	 * is touched (lo's index, which it would otherwise attach to). */
	UT_ASSERT(ucm_xdp__attach(x, 1, 1u << 7) == -EINVAL && errno == EINVAL,
		  "attach flag 1 << 7 accepted");
	return 0;
}

/* xsk/port_internal.h's, linked in from the debug archive. */
int ucm_xdp_set_mac(struct ucm_xdp *x, const uint8_t *mac);

/* One run of @t through @fd: its action into @act, and in @grew how much
 * each pass counter grew. 0, or 1 after a failure said. */
static int pass_after(int fd, const struct tpkt *t, int *act, uint64_t *grew)
{
	uint64_t before[UCM_STEER_PASS_SLOTS], after[UCM_STEER_PASS_SLOTS];
	int worker, r;

	UT_ASSERT(!ucm_xdp__pass_stats(x, before, UCM_STEER_PASS_SLOTS), "pass stats: %s",
		  strerror(errno));
	*act = run_prog(fd, t, &worker);
	UT_ASSERT(*act >= 0, "the test run: %s", strerror(-*act));
	UT_ASSERT(!ucm_xdp__pass_stats(x, after, UCM_STEER_PASS_SLOTS), "pass stats");
	for (r = 0; r < UCM_STEER_PASS_SLOTS; r++)
		grew[r] = after[r] - before[r];
	return 0;
}

/* The table's packet @name cut to @len bytes, into *@cut: 0, or 1 (a
 * failure said) when the table has none of that name. */
static int cut_of(const char *name, uint32_t len, struct tpkt *cut)
{
	for (int i = 0; i < npkts; i++) {
		if (strcmp(pkts[i].name, name))
			continue;
		*cut = pkts[i];
		cut->len = len;
		return 0;
	}
	ut_fail_reason("no \"%s\" in the table", name);
	return 1;
}

/* One run of @t counts one pass, for @want, and passes it; -1: counts
 * none, and is redirected (steered). */
static int pass_is(int fd, const struct tpkt *t, int want, const char *what)
{
	uint64_t grew[UCM_STEER_PASS_SLOTS];
	int r, act;

	if (pass_after(fd, t, &act, grew))
		return 1;
	for (r = 0; r < UCM_STEER_PASS_SLOTS; r++)
		UT_ASSERT(grew[r] == (r == want), "%s: %s grew by %llu", what,
			  ucm_pass_reason_str(r), (unsigned long long)grew[r]);
	UT_ASSERT(act == (want < 0 ? XDP_REDIRECT : XDP_PASS), "%s: action %d, want %s", what, act,
		  want < 0 ? "XDP_REDIRECT" : "XDP_PASS");
	return 0;
}

/* Each frame the program leaves to the kernel is counted once, by its
 * reason; a steered one is not (a socket in queue 0's slot, which the test
 * run takes from; the steered without it: no_socket). Last: it leaves the
 * MAC map set to the table's destination. */
static int test_pass_counts(void)
{
	static const uint8_t other[6] = { 2, 0, 0, 0, 0, 9 }, dst[6] = { 2, 0, 0, 0, 0, 2 };
	struct ucm_steer_cfg cfg = { .policy = UCM_STEER_FIXED, .nworkers = 64, .fixed = 63 };
	int fd = ucm_xdp__steer_fd(x), xsk, i, err = 1;
	struct tpkt cut = pkts[0];
	char what[64];

	UT_ASSERT(!strcmp(pkts[npkts - 7].name, "arp") && !strcmp(pkts[npkts - 6].name, "lldp"),
		  "the table's order changed");
	UT_ASSERT(!ucm_xdp__configure(x, &cfg), "configure");
	if (pass_is(fd, &pkts[0], UCM_STEER_PASS_NO_SOCKET, "v4 udp, no socket"))
		return 1;
	xsk = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	UT_ASSERT(xsk >= 0, "no AF_XDP socket: %s", strerror(errno));
	if (ucm_xdp__set_xsk(x, 0, xsk)) {
		close(xsk);
		UT_ASSERT(0, "the socket into queue 0's slot: %s", strerror(errno));
	}
	if (pass_is(fd, &pkts[0], -1, "v4 udp") ||
	    pass_is(fd, &pkts[npkts - 7], UCM_STEER_PASS_LINK_CTRL, "arp") ||
	    pass_is(fd, &pkts[npkts - 6], UCM_STEER_PASS_UNCLAIMED, "lldp"))
		goto out;
	for (i = npkts - 5; i < npkts; i++) {
		snprintf(what, sizeof(what), "%s %u", pkts[i].name, pkts[i].d[14 + 40]);
		if (pass_is(fd, &pkts[i], UCM_STEER_PASS_LINK_CTRL, what))
			goto out;
	}
	for (i = npkts - 7 - LINK_SCOPE; i < npkts - 7; i++) {
		snprintf(what, sizeof(what), "%s %d", pkts[i].name, i - (npkts - 7 - LINK_SCOPE));
		if (pass_is(fd, &pkts[i], UCM_STEER_PASS_LINK_CTRL, what))
			goto out;
	}
	cut.len = 14 + 10;	/* within the IPv4 header */
	/* (A frame shorter than Ethernet's header: the test run takes none.) */
	if (pass_is(fd, &cut, UCM_STEER_PASS_SHORT, "v4 cut in its header"))
		goto out;
	/* Past the fixed header, within its 12 bytes of options; IPv6 within
	 * a hop-by-hop header's first 2 bytes, within its 8, and within a
	 * real fragment's header. */
	if (cut_of("v4 udp with options", 14 + 24, &cut) ||
	    pass_is(fd, &cut, UCM_STEER_PASS_SHORT, "v4 cut in its options") ||
	    cut_of("v6 hbh udp", 14 + 40 + 1, &cut) ||
	    pass_is(fd, &cut, UCM_STEER_PASS_SHORT, "v6 cut in a hop-by-hop header's start") ||
	    cut_of("v6 hbh udp", 14 + 40 + 4, &cut) ||
	    pass_is(fd, &cut, UCM_STEER_PASS_SHORT, "v6 cut in a hop-by-hop header") ||
	    cut_of("v6 first fragment", 14 + 40 + 6, &cut) ||
	    pass_is(fd, &cut, UCM_STEER_PASS_SHORT, "v6 cut in a fragment header"))
		goto out;
	/* ucm_xdp_cpumap: worker 63 has no CPU. */
	if (pass_is(ucm_xdp__cpumap_fd(x), &pkts[0], UCM_STEER_PASS_NO_CPU, "cpumap, no CPU"))
		goto out;
	cfg.flags = UCM_STEER_F_IPV6;
	if (ucm_xdp__configure(x, &cfg)) {
		ut_fail_reason("configure: %s", strerror(errno));
		goto out;
	}
	if (pass_is(fd, &pkts[0], UCM_STEER_PASS_UNCLAIMED, "v4, IPv6 alone steered") ||
	    pass_is(fd, &pkts[npkts - 7], UCM_STEER_PASS_UNCLAIMED, "arp, IPv6 alone steered") ||
	    pass_is(fd, &pkts[2], -1, "v6 udp, IPv6 alone steered"))
		goto out;
	if (ucm_xdp_set_mac(x, other)) {
		ut_fail_reason("set the MAC: %s", strerror(errno));
		goto out;
	}
	if (pass_is(fd, &pkts[2], UCM_STEER_PASS_OTHER_HOST, "v6 udp to another MAC"))
		goto out;
	if (ucm_xdp_set_mac(x, dst)) {
		ut_fail_reason("set the MAC: %s", strerror(errno));
		goto out;
	}
	err = pass_is(fd, &pkts[2], -1, "v6 udp to the MAC");
out:
	ucm_xdp__set_xsk(x, 0, -1);
	close(xsk);
	return err;
}

static const struct ut_case cases[] = {
	UT_CASE(test_fixed),
	UT_CASE(test_l4_hash),
	UT_CASE(test_l4_hash_symmetric),
	UT_CASE(test_l4_sport),
	UT_CASE(test_l4_dport),
	UT_CASE(test_round_robin),
	UT_CASE(test_family_filter),
	UT_CASE(test_link_ctrl),
	UT_CASE(test_nometa),
	UT_CASE(test_claims),
	UT_CASE(test_kernel_cpumap),
	UT_CASE(test_bad_config),
	UT_CASE(test_pass_counts),
	{}
};

static int quiet(enum ucm_log_level level, const char *fmt, va_list ap)
{
	return level == UCM_LOG_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* The application's own libbpf printer. */
static int app_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	libbpf_print_fn_t after;

	ucm_set_print(quiet);
	libbpf_set_print(app_print);
	x = ucm_xdp__load(NULL);
	if (!x) {
		printf("FAIL: steer_check/load: %s\n", strerror(errno));
		return 1;
	}
	after = libbpf_set_print(NULL);
	printf("%s: steer_check/libbpf-print: the application's libbpf printer %s after the load\n",
	       after == app_print ? "PASS" : "FAIL", after == app_print ? "back" : "replaced");
	/* Which steering program the library chose for this kernel. */
	if (bpf_obj_get_info_by_fd(ucm_xdp__steer_fd(x), &info, &len)) {
		printf("FAIL: steer_check/load: the steering program's info: %s\n",
		       strerror(errno));
		return 1;
	}
	nometa = !strcmp(info.name, "ucm_xdp_nometa");
	if (!nometa && strcmp(info.name, "ucm_xdp_steer")) {
		printf("FAIL: steer_check/load: steering program '%s', want ucm_xdp_steer or ucm_xdp_nometa\n",
		       info.name);
		return 1;
	}
	build_table();
	return ut_main(argc, argv, cases);
}
