// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tun sink end to end, run by test-tun-sink.sh inside a fresh network
 * namespace (root): frames go through a ucm_cpumap (2 workers) into a
 * tun/tap made by ucm_tun__create(), and come out of the kernel's stack at
 * UDP sockets bound on the device's addresses. Every datagram must arrive
 * once with its payload intact; the kernel's own counters (/proc/net/snmp,
 * /proc/net/dev) must agree with ours; every frame must come home.
 *
 * Each case makes its own device (subnet 10.99.<case>.0/24 and
 * fd00:99:<case>::/64) and removes it again. Time is bounded: every wait
 * polls against a deadline. The last line, "# udp_received_total N", is
 * the script's cross-check against the namespace's UDP counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/if_tun.h>

#include "ucpumap/csum.h"
#include "ucpumap/cpumap.h"
#include "ucpumap/log.h"
#include "ucpumap/tun.h"
#include "utest.h"

#define WAIT_MS		3000
#define DATA_OFF	256	/* where the "NIC" puts the packet in a frame */
#define PACE		32	/* frames per flush, then wait for the workers */
#define MAX_SEQ		8192
#define UDP_PORT	9000
#define MAGIC		0x75636d74u	/* "ucmt" */

static uint64_t udp_received_total;

/* ---- log capture --------------------------------------------------------- */

static char logbuf[8192];
static size_t loglen;

static int cap_print(enum ucm_log_level level, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	/* Warnings, and the one notice a test counts (gso_taken()'s). */
	if (level > UCM_LOG_WARN && !strstr(fmt, "super-packets again"))
		return 0;
	va_copy(ap2, ap);
	if (loglen < sizeof(logbuf) - 1) {
		n = vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen, fmt, ap);
		if (n > 0)
			loglen = loglen + n < sizeof(logbuf) ? loglen + n : sizeof(logbuf) - 1;
	}
	fputs("# ", stderr);
	vfprintf(stderr, fmt, ap2);
	va_end(ap2);
	return 0;
}

static void log_reset(void)
{
	loglen = 0;
	logbuf[0] = '\0';
}

/* ---- small helpers ------------------------------------------------------- */


static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = system(cmd);
	if (ret != 0)
		fprintf(stderr, "# '%s' failed: status %d\n", cmd, ret);
	return ret;
}

/* Field @field of the "@mib:" lines of /proc/net/snmp in this namespace
 * (/proc/net follows the reader's namespace). */
static uint64_t snmp_get(const char *mib, const char *field)
{
	char hdr[1024], val[1024], *hs, *vs, *h, *v;
	size_t ml = strlen(mib);
	uint64_t sum = 0;
	FILE *f = fopen("/proc/net/snmp", "r");

	if (!f)
		return 0;
	while (fgets(hdr, sizeof(hdr), f) && fgets(val, sizeof(val), f)) {
		if (strncmp(hdr, mib, ml) || hdr[ml] != ':')
			continue;
		h = strtok_r(hdr, " \n", &hs);
		v = strtok_r(val, " \n", &vs);
		while (h && v) {
			if (!strcmp(h, field))
				sum += strtoull(v, NULL, 10);
			h = strtok_r(NULL, " \n", &hs);
			v = strtok_r(NULL, " \n", &vs);
		}
		break;
	}
	fclose(f);
	return sum;
}

/* Udp <field> + Udp6<field> of this namespace. */
static uint64_t snmp_udp(const char *field)
{
	uint64_t sum = snmp_get("Udp", field);
	FILE *f = fopen("/proc/net/snmp6", "r");

	if (f) {
		char name[128];
		unsigned long long x;

		while (fscanf(f, "%127s %llu", name, &x) == 2)
			if (!strncmp(name, "Udp6", 4) && !strcmp(name + 4, field))
				sum += x;
		fclose(f);
	}
	return sum;
}

/* What the kernel handed to a socket (or dropped at a full one). */
static uint64_t snmp_udp_delivered(void)
{
	return snmp_udp("InDatagrams") + snmp_udp("RcvbufErrors");
}

/* rx_packets of a device from /proc/net/dev (per namespace). */
static int64_t dev_rx_packets(const char *dev)
{
	char line[512];
	int64_t ret = -1;
	FILE *f = fopen("/proc/net/dev", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *colon;
		unsigned long long bytes, pkts;

		while (*p == ' ')
			p++;
		colon = strchr(p, ':');
		if (!colon)
			continue;
		*colon = '\0';
		if (strcmp(p, dev))
			continue;
		if (sscanf(colon + 1, "%llu %llu", &bytes, &pkts) == 2)
			ret = pkts;
		break;
	}
	fclose(f);
	return ret;
}

static int dev_exists(const char *dev)
{
	return if_nametoindex(dev) != 0;
}

/* ---- packets -------------------------------------------------------------- */

enum kind {
	K_V4,
	K_V4_VLAN,	/* one 802.1Q tag */
	K_V4_QINQ,	/* 802.1ad + 802.1Q */
	K_V6,
	K_V6_VLAN,
	K_V4_OPTS,	/* IPv4 with 4 bytes of options (NOPs) */
	K_V4_FRAG,	/* IPv4 in two fragments: two frames */
	K_V6_EXT,	/* IPv6 with a destination options header */
	K_NONIP,	/* an EtherType no stack handles (local experimental) */
	K_ARP,		/* an ARP request for nobody */
};

/* What makes a frame of a datagram: its flow (source port), IPv4 ID, and
 * a checksum spoiled on purpose. */
struct fspec {
	uint16_t sport;
	uint16_t id;
	bool bad_csum;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint32_t payload_len(uint32_t seq, uint32_t maxp)
{
	return 12 + (seq * 37) % (maxp - 11);
}

static void payload_fill(uint8_t *p, uint32_t seq, uint32_t len)
{
	uint32_t i;

	put32(p, MAGIC);
	put32(p + 4, seq);
	put32(p + 8, len);
	for (i = 12; i < len; i++)
		p[i] = (uint8_t)(seq * 31 + i);
}

struct addrs {
	uint8_t src4[4], dst4[4];
	uint8_t src6[16], dst6[16];
	uint8_t dmac[6];
};

static void addrs_init(struct addrs *a, int sub, const uint8_t *dmac)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	memset(a, 0, sizeof(*a));
	a->src4[0] = a->dst4[0] = 10;
	a->src4[1] = a->dst4[1] = 99;
	a->src4[2] = a->dst4[2] = sub;
	a->src4[3] = 2;
	a->dst4[3] = 1;
	a->src6[0] = a->dst6[0] = 0xfd;
	a->src6[3] = a->dst6[3] = 0x99;
	a->src6[5] = a->dst6[5] = sub;
	a->src6[15] = 2;
	a->dst6[15] = 1;
	memcpy(a->dmac, dmac ? dmac : bcast, 6);
}

/* Build a frame at @p; return its length (padded to 60 like a wire
 * frame). K_V4_FRAG builds the whole datagram: frag_split() cuts it. */
static uint32_t build_frame(uint8_t *p, const struct addrs *a, enum kind k,
			    uint32_t seq, uint32_t plen, const struct fspec *fs)
{
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	uint8_t *l3, *udp;
	uint32_t off = 12, len, sum, ext = 0;

	memcpy(p, a->dmac, 6);
	memcpy(p + 6, smac, 6);
	if (k == K_V4_QINQ) {
		put16(p + off, 0x88a8);
		put16(p + off + 2, 100);
		off += 4;
	}
	if (k == K_V4_VLAN || k == K_V4_QINQ || k == K_V6_VLAN) {
		put16(p + off, 0x8100);
		put16(p + off + 2, 200 + seq % 8);
		off += 4;
	}
	switch (k) {
	case K_NONIP:
		put16(p + off, 0x88b5);
		memset(p + off + 2, 0xab, 46);
		return off + 2 + 46;
	case K_ARP:
		put16(p + off, 0x0806);
		memset(p + off + 2, 0, 28);
		put16(p + off + 2, 1);		/* Ethernet */
		put16(p + off + 4, 0x0800);
		p[off + 6] = 6;
		p[off + 7] = 4;
		put16(p + off + 8, 1);		/* request */
		memcpy(p + off + 10, smac, 6);
		memcpy(p + off + 16, a->src4, 4);
		memcpy(p + off + 26, a->src4, 4);
		p[off + 29] = 77;		/* nobody */
		return off + 2 + 28 + 18;	/* padded to 60 */
	case K_V6:
	case K_V6_VLAN:
	case K_V6_EXT:
		ext = k == K_V6_EXT ? 8 : 0;
		put16(p + off, 0x86dd);
		l3 = p + off + 2;
		memset(l3, 0, 40 + ext);
		l3[0] = 0x60;
		put16(l3 + 4, ext + 8 + plen);
		l3[6] = ext ? 60 : 17;	/* destination options, then UDP */
		l3[7] = 64;
		memcpy(l3 + 8, a->src6, 16);
		memcpy(l3 + 24, a->dst6, 16);
		if (ext) {
			l3[40] = 17;	/* length 0: 8 bytes, PadN fills them */
			l3[42] = 1;
			l3[43] = 4;
		}
		udp = l3 + 40 + ext;
		len = 40 + ext + 8 + plen;
		sum = ucm_csum_add(0, l3 + 8, 32);
		break;
	default:
		ext = k == K_V4_OPTS ? 4 : 0;
		put16(p + off, 0x0800);
		l3 = p + off + 2;
		memset(l3, 0, 20);
		l3[0] = 0x45 + ext / 4;
		put16(l3 + 2, 20 + ext + 8 + plen);
		put16(l3 + 4, fs->id);
		put16(l3 + 6, 0x4000);
		l3[8] = 64;
		l3[9] = 17;
		memcpy(l3 + 12, a->src4, 4);
		memcpy(l3 + 16, a->dst4, 4);
		memset(l3 + 20, 1, ext);	/* NOP options */
		put16(l3 + 10, ucm_csum_fold(ucm_csum_add(0, l3, 20 + ext)));
		udp = l3 + 20 + ext;
		len = 20 + ext + 8 + plen;
		sum = ucm_csum_add(0, l3 + 12, 8);
		break;
	}
	put16(udp, fs->sport);
	put16(udp + 2, UDP_PORT);
	put16(udp + 4, 8 + plen);
	put16(udp + 6, 0);
	payload_fill(udp + 8, seq, plen);
	sum += 17 + 8 + plen;
	sum = ucm_csum_fold(ucm_csum_add(sum, udp, 8 + plen));
	put16(udp + 6, (sum ? sum : 0xffff) ^ (fs->bad_csum ? 0x0100 : 0));
	len += l3 - p;
	if (len < 60) {
		memset(p + len, 0, 60 - len);	/* Ethernet padding: not IP */
		len = 60;
	}
	return len;
}

static bool kind_is_ip(enum kind k)
{
	return k <= K_V6_EXT;
}

static bool kind_is_v6(enum kind k)
{
	return k == K_V6 || k == K_V6_VLAN || k == K_V6_EXT;
}

/* Cut the untagged IPv4 datagram in frame @p (@len bytes) into two
 * fragments: @p keeps the first 24 bytes of its payload (UDP header
 * included, MF set), @q gets the rest at offset 3 (x 8 bytes). Returns
 * @q's length; @len becomes @p's. */
static uint32_t frag_split(uint8_t *p, uint32_t *len, uint8_t *q)
{
	uint8_t *ip = p + 14, *ip2 = q + 14;
	uint32_t tot = (uint32_t)ip[2] << 8 | ip[3], first = 24;

	memcpy(q, p, 14 + 20);
	memcpy(ip2 + 20, ip + 20 + first, tot - 20 - first);
	put16(ip2 + 2, tot - first);
	put16(ip2 + 6, first / 8);	/* DF off, MF off, offset 3 */
	put16(ip2 + 10, 0);
	put16(ip2 + 10, ucm_csum_fold(ucm_csum_add(0, ip2, 20)));
	put16(ip + 2, 20 + first);
	put16(ip + 6, 0x2000);		/* MF */
	put16(ip + 10, 0);
	put16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, 20)));
	*len = 14 + 20 + first < 60 ? 60 : 14 + 20 + first;
	return 14 + tot - first < 60 ? 60 : 14 + tot - first;
}

/* ---- the rig: tun + sockets + umem + cpumap ------------------------------- */

struct rig {
	struct ucm_tun *tun;
	struct ucm_umem *umem;
	struct ucm_pool *pool;
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer *prod;
	uint32_t nworkers;
	bool persistent;	/* made by `ip tuntap add`: delete it ourselves */
	char name[IFNAMSIZ];
	int s4, s6;
	struct addrs a;
	uint32_t maxp;		/* largest UDP payload we send */
	uint64_t enq;		/* frames enqueued, all workers */
	uint64_t snmp0;
	/* what must arrive: per seq, 0 = nothing, 4 or 6 = that socket */
	uint8_t want[MAX_SEQ];
	uint8_t seen[MAX_SEQ];
	uint64_t expected, rx, dups, bad;
	char why[256];
	/* Coalescing cases: @flows flows (source ports), each on one worker,
	 * IPv4 IDs counting up per flow; every datagram @plen bytes; each
	 * @bad_every'th one with a spoiled checksum (not expected), each
	 * @short_every'th of a flow half as long (closing its group); @pace
	 * frames between waits. 0: the other cases' mix (64 flows, sizes
	 * and IDs by seq, PACE). */
	uint32_t flows, plen, bad_every, short_every, pace;
	uint32_t next[64];	/* per flow: the least seq that may come next */
	uint64_t disorder;
};

static int udp_socket(int family, const void *addr)
{
	int s = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, rcvbuf = 8 << 20;

	if (s < 0)
		return -1;
	/* Room for more than a pacing step even if we read late. */
	setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (family == AF_INET) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(UDP_PORT) };

		memcpy(&sa.sin_addr, addr, 4);
		if (bind(s, (struct sockaddr *)&sa, sizeof(sa)))
			goto err;
	} else {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(UDP_PORT) };

		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		memcpy(&sa.sin6_addr, addr, 16);
		if (bind(s, (struct sockaddr *)&sa, sizeof(sa)))
			goto err;
	}
	return s;
err:
	fprintf(stderr, "# bind: %s\n", strerror(errno));
	close(s);
	return -1;
}

/*
 * @name: device; @pre: if set, the shell command that pre-creates it
 * (the rig attaches and deletes it at the end); @sub: subnet index.
 */
static int rig_init(struct rig *r, const char *name, const char *pre,
		    uint32_t tflags, uint32_t nqueues, uint32_t mtu, int sub)
{
	UCM_OPTS(ucm_tun_opts, to, .name = name, .nqueues = nqueues,
		 .flags = tflags, .mtu = mtu);
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = 2048);
	char a4[INET_ADDRSTRLEN], a6[INET6_ADDRSTRLEN];
	int cpus[2];
	bool tap = tflags & UCM_TUN_F_TAP;

	memset(r, 0, sizeof(*r));
	r->s4 = r->s6 = -1;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->maxp = mtu ? mtu - 48 - 100 : 1400;
	if (pre) {
		UT_ASSERT(!sh("%s", pre), "pre-creating %s", name);
		r->persistent = true;
	}
	log_reset();
	r->tun = ucm_tun__create(&to);
	UT_ASSERT(r->tun, "ucm_tun__create(%s): %s; log: %s", name,
		  strerror(errno), logbuf);
	UT_ASSERT(!strcmp(ucm_tun__name(r->tun), name), "name %s",
		  ucm_tun__name(r->tun));
	UT_ASSERT(ucm_tun__ifindex(r->tun) == (int)if_nametoindex(name),
		  "ifindex %d vs %u", ucm_tun__ifindex(r->tun),
		  if_nametoindex(name));
	UT_ASSERT(ucm_tun__nqueues(r->tun) == nqueues, "nqueues");

	if (tap) {
		struct ifreq ifr = {};
		int s = socket(AF_INET, SOCK_DGRAM, 0);

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		UT_ASSERT(s >= 0 && !ioctl(s, SIOCGIFHWADDR, &ifr), "hwaddr");
		close(s);
		addrs_init(&r->a, sub, (uint8_t *)ifr.ifr_hwaddr.sa_data);
	} else {
		addrs_init(&r->a, sub, NULL);
	}
	inet_ntop(AF_INET, r->a.dst4, a4, sizeof(a4));
	inet_ntop(AF_INET6, r->a.dst6, a6, sizeof(a6));
	UT_ASSERT(!sh("ip addr add %s/24 dev %s", a4, name), "ip addr add");
	/* nodad: a tentative address would not take the datagrams. */
	UT_ASSERT(!sh("ip -6 addr add %s/64 dev %s nodad", a6, name), "ip -6 addr add");
	r->s4 = udp_socket(AF_INET, r->a.dst4);
	r->s6 = udp_socket(AF_INET6, r->a.dst6);
	UT_ASSERT(r->s4 >= 0 && r->s6 >= 0, "UDP sockets");

	r->umem = ucm_umem__create(&uo);
	UT_ASSERT(r->umem, "umem: %s", strerror(errno));
	r->pool = ucm_umem__pool(r->umem, 0);
	ucm_pool__set_owner(r->pool);
	r->nworkers = ut_usable_cpus(cpus, 2);
	{
		/* Coalescing sees what the worker holds: up to 64. */
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = cpus, .ncpus = r->nworkers,
			 .sink = ucm_tun__sink(), .sink_ctx = r->tun,
			 .flags = tflags & UCM_TUN_F_COALESCE ? UCM_CPUMAP_F_HOLD : 0);

		r->map = ucm_cpumap__create(r->umem, &co);
	}
	UT_ASSERT(r->map, "cpumap: %s; log: %s", strerror(errno), logbuf);
	r->prod = ucm_cpumap__producer_create(r->map, r->pool);
	UT_ASSERT(r->prod, "producer");
	r->snmp0 = snmp_udp_delivered();
	return 0;
}

/* Tear down and prove that every frame came home and the device went. */
static int rig_fini(struct rig *r)
{
	struct ucm_pool_audit a;

	ucm_cpumap__destroy(r->map);
	r->map = NULL;
	UT_ASSERT(!ucm_umem__audit(r->umem, &a, sizeof(a)), "audit failed");
	UT_ASSERT(a.loc[UCM_LOC_APP] + a.loc[UCM_LOC_BQ] + a.loc[UCM_LOC_WQ] +
		  a.loc[UCM_LOC_WORKER] == 0, "frames still out");
	UT_ASSERT(!ucm_umem__destroy(r->umem, 1000), "frames did not come home");
	ucm_tun__destroy(r->tun);
	close(r->s4);
	close(r->s6);
	if (r->persistent) {
		UT_ASSERT(dev_exists(r->name), "attached device %s vanished", r->name);
		UT_ASSERT(!sh("ip link del %s", r->name), "ip link del");
	} else {
		/* Not persistent: gone with its last fd. */
		UT_ASSERT(!dev_exists(r->name), "%s still exists after destroy", r->name);
	}
	return 0;
}

/* Read whatever the sockets hold and check each datagram. */
static void rig_drain(struct rig *r)
{
	static uint8_t buf[65536];
	int socks[2] = { r->s4, r->s6 }, fam[2] = { 4, 6 }, i;

	for (i = 0; i < 2; i++) {
		for (;;) {
			ssize_t n = recv(socks[i], buf, sizeof(buf), MSG_DONTWAIT);
			uint32_t seq, len, j;

			if (n < 0)
				break;
			udp_received_total++;
			if (n < 12 || ((uint32_t)buf[0] << 24 | buf[1] << 16 | buf[2] << 8 | buf[3]) != MAGIC) {
				r->bad++;
				snprintf(r->why, sizeof(r->why), "a %zd-byte datagram without our stamp", n);
				continue;
			}
			seq = (uint32_t)buf[4] << 24 | buf[5] << 16 | buf[6] << 8 | buf[7];
			len = (uint32_t)buf[8] << 24 | buf[9] << 16 | buf[10] << 8 | buf[11];
			if (seq >= MAX_SEQ || r->want[seq] != fam[i] || len != (uint32_t)n) {
				r->bad++;
				snprintf(r->why, sizeof(r->why), "seq %u: %zd bytes on the IPv%d socket, not expected there",
					 seq, n, fam[i]);
				continue;
			}
			for (j = 12; j < len; j++)
				if (buf[j] != (uint8_t)(seq * 31 + j))
					break;
			if (j < len) {
				r->bad++;
				snprintf(r->why, sizeof(r->why), "seq %u: payload differs at byte %u", seq, j);
				continue;
			}
			if (r->seen[seq]++) {
				r->dups++;
				snprintf(r->why, sizeof(r->why), "seq %u arrived twice", seq);
				continue;
			}
			if (r->flows) {
				uint32_t f = seq % r->flows;

				if (seq < r->next[f]) {
					r->disorder++;
					snprintf(r->why, sizeof(r->why), "seq %u after seq %u of its flow",
						 seq, r->next[f] - r->flows);
				}
				r->next[f] = seq + r->flows;
			}
			r->rx++;
		}
	}
}

static uint64_t rig_processed(struct rig *r)
{
	struct ucm_cpumap_worker_stats st;
	uint64_t sum = 0;
	uint32_t w;

	for (w = 0; w < r->nworkers; w++) {
		ucm_cpumap__worker_stats(r->map, w, &st, sizeof(st));
		sum += st.processed;
	}
	return sum;
}

static uint64_t rig_sink_drops(struct rig *r)
{
	struct ucm_cpumap_worker_stats st;
	uint64_t sum = 0;
	uint32_t w;

	for (w = 0; w < r->nworkers; w++) {
		ucm_cpumap__worker_stats(r->map, w, &st, sizeof(st));
		sum += st.drop_reason[UCM_DROP_SINK];
	}
	return sum;
}

/* Flush and wait until the workers have taken everything enqueued. */
static int rig_settle(struct rig *r)
{
	uint64_t end = ut_ms_now() + WAIT_MS;

	ucm_cpumap_producer__flush(r->prod);
	while (rig_processed(r) < r->enq) {
		UT_ASSERT(ut_ms_now() < end, "workers processed %llu of %llu",
			  (unsigned long long)rig_processed(r),
			  (unsigned long long)r->enq);
		ut_msleep(1);
	}
	rig_drain(r);
	return 0;
}

/*
 * Send seqs [first, first + n), the kind of each chosen round-robin from
 * @kinds; IP ones are expected at a socket when @deliver.
 */
static int rig_feed(struct rig *r, uint32_t first, uint32_t n,
		    const enum kind *kinds, uint32_t nkinds, bool deliver)
{
	void *area = ucm_umem__area(r->umem);
	uint32_t i;

	UT_ASSERT(first + n <= MAX_SEQ, "too many");
	for (i = 0; i < n; i++) {
		uint32_t seq = first + i, len, w, plen, pace = r->pace ? r->pace : PACE;
		enum kind k = kinds[seq % nkinds];
		struct fspec fs = { .sport = 40000 + seq % 64, .id = seq };
		uint8_t *p;
		uint64_t addr;

		if (r->flows) {
			fs.sport = 40000 + seq % r->flows;
			fs.id = seq / r->flows;
			fs.bad_csum = r->bad_every && seq % r->bad_every == r->bad_every / 2;
		}
		/* A flow stays on one worker, as steering keeps it. */
		w = (r->flows ? seq % r->flows : seq) % r->nworkers;
		UT_ASSERT(!ucm_pool__alloc(r->pool, &addr), "alloc: %s", strerror(errno));
		p = (uint8_t *)ucm_umem__frame(area, addr) + DATA_OFF;
		plen = r->plen ? r->plen : payload_len(seq, r->maxp);
		if (r->flows && r->short_every && fs.id % r->short_every == r->short_every - 1)
			plen /= 2;
		if (k == K_V4_FRAG && plen < 40)
			plen += 40;	/* room for a second fragment */
		len = build_frame(p, &r->a, k, seq, plen, &fs);
		if (deliver && kind_is_ip(k) && !fs.bad_csum) {
			r->want[seq] = kind_is_v6(k) ? 6 : 4;
			r->expected++;
		}
		if (k == K_V4_FRAG) {
			uint64_t addr2;
			uint32_t len2;

			UT_ASSERT(!ucm_pool__alloc(r->pool, &addr2), "alloc: %s", strerror(errno));
			len2 = frag_split(p, &len, (uint8_t *)ucm_umem__frame(area, addr2) + DATA_OFF);
			UT_ASSERT(!ucm_cpumap_producer__enqueue(r->prod, w, addr + DATA_OFF, len), "enqueue");
			addr = addr2;
			len = len2;
			r->enq++;
		}
		UT_ASSERT(!ucm_cpumap_producer__enqueue(r->prod, w, addr + DATA_OFF, len), "enqueue");
		r->enq++;
		if ((i + 1) % pace == 0 && rig_settle(r))
			return 1;
	}
	return rig_settle(r);
}

/* Wait (bounded) for what is still in flight, then compare. */
static int rig_check_delivery(struct rig *r)
{
	uint64_t end = ut_ms_now() + 1000, snmp;

	while (r->rx + r->bad + r->dups < r->expected && ut_ms_now() < end) {
		struct pollfd p[2] = { { r->s4, POLLIN, 0 }, { r->s6, POLLIN, 0 } };

		poll(p, 2, 50);
		rig_drain(r);
	}
	UT_ASSERT(!r->bad && !r->dups && !r->disorder, "%s", r->why);
	UT_ASSERT(r->rx == r->expected, "received %llu of %llu datagrams",
		  (unsigned long long)r->rx, (unsigned long long)r->expected);
	/* The kernel's own count, in this namespace: every datagram it
	 * handed to a socket (or dropped at a full one). */
	snmp = snmp_udp_delivered() - r->snmp0;
	UT_ASSERT(snmp == r->rx, "/proc/net/snmp says %llu delivered, we read %llu",
		  (unsigned long long)snmp, (unsigned long long)r->rx);
	return 0;
}

static void tun_stats_sum(struct rig *r, struct ucm_tun_stats *t);

/*
 * The tun's counters once its writes have settled: a worker counts a write
 * when it reaps its completion, which can come after the kernel delivered
 * the packet (what the delivery checks wait for), and frames that go
 * nowhere (a tap's tagged ones) are not waited for at all. Settled: the
 * same for 20 ms running, within 2 s.
 */
static void tun_stats_total(struct rig *r, struct ucm_tun_stats *t)
{
	struct ucm_tun_stats prev;
	uint64_t end = ut_ms_now() + 2000;

	tun_stats_sum(r, t);
	do {
		prev = *t;
		ut_msleep(20);
		tun_stats_sum(r, t);
	} while (memcmp(&prev, t, sizeof(*t)) && ut_ms_now() < end);
}

static void tun_stats_sum(struct rig *r, struct ucm_tun_stats *t)
{
	struct ucm_tun_stats q;
	uint32_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < ucm_tun__nqueues(r->tun); i++) {
		ucm_tun__queue_stats(r->tun, i, &q, sizeof(q));
		t->packets += q.packets;
		t->bytes += q.bytes;
		t->submits += q.submits;
		t->non_ip += q.non_ip;
		t->err_eio += q.err_eio;
		t->err_ebadfd += q.err_ebadfd;
		t->err_eagain += q.err_eagain;
		t->err_other += q.err_other;
		t->super += q.super;
		t->super_segs += q.super_segs;
		t->super_refused += q.super_refused;
	}
}

static uint64_t tun_errors(const struct ucm_tun_stats *t)
{
	return t->err_eio + t->err_ebadfd + t->err_eagain + t->err_other;
}

static const enum kind ip_mix[] = { K_V4, K_V6, K_V4_VLAN, K_V6_VLAN, K_V4_QINQ, K_V4 };

/* ---- cases ---------------------------------------------------------------- */

/* v4 and v6, tagged and not, sizes up to the MTU we set, 2 queues: one
 * io_uring submission per worker batch. */
static int test_batched_v4_v6(void)
{
	struct ucm_tun_stats t;
	struct rig r;
	struct ifreq ifr = {};
	int s;

	if (rig_init(&r, "ucmtun1", NULL, 0, 2, 2048, 1))
		return 1;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "ucmtun1");
	UT_ASSERT(!ioctl(s, SIOCGIFMTU, &ifr) && ifr.ifr_mtu == 2048, "MTU %d", ifr.ifr_mtu);
	close(s);
	if (rig_feed(&r, 0, 3000, ip_mix, 6, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	UT_ASSERT(t.packets == 3000 && !tun_errors(&t) && !t.non_ip,
		  "tun: %llu packets, %llu errors", (unsigned long long)t.packets,
		  (unsigned long long)tun_errors(&t));
	/* Batched: fewer submissions than packets (worker batches up to 8). */
	UT_ASSERT(t.submits < t.packets, "%llu submits for %llu packets",
		  (unsigned long long)t.submits, (unsigned long long)t.packets);
	fprintf(stderr, "# batched: %llu packets in %llu submissions\n",
		(unsigned long long)t.packets, (unsigned long long)t.submits);
	UT_ASSERT(rig_sink_drops(&r) == 0, "sink drops");
	return rig_fini(&r);
}

/* NO_BATCH: one write() per packet. One queue for two workers: they
 * share it, and the queue's counters add both up. */
static int test_no_batch_shared_queue(void)
{
	struct ucm_tun_stats t, w0, w1;
	struct rig r;

	if (rig_init(&r, "ucmtun2", NULL, UCM_TUN_F_NO_BATCH, 1, 0, 2))
		return 1;
	if (rig_feed(&r, 0, 1500, ip_mix, 6, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	UT_ASSERT(t.packets == 1500 && !tun_errors(&t), "tun: %llu packets",
		  (unsigned long long)t.packets);
	UT_ASSERT(t.submits == t.packets, "%llu writes for %llu packets",
		  (unsigned long long)t.submits, (unsigned long long)t.packets);
	ucm_tun__worker_stats(r.tun, 0, &w0, sizeof(w0));
	ucm_tun__worker_stats(r.tun, 1, &w1, sizeof(w1));
	UT_ASSERT(w0.packets + w1.packets == t.packets, "per-worker sums");
	if (r.nworkers > 1)
		UT_ASSERT(w0.packets && w1.packets, "both workers wrote");
	UT_ASSERT(ucm_tun__queue_stats(r.tun, 1, &t, sizeof(t)) == -EINVAL, "queue 1 of 1");
	return rig_fini(&r);
}

/* Tap: frames whole, VLAN tags and non-IP included. The untagged IP ones
 * reach the sockets (addressed to the tap's MAC); the kernel counts every
 * frame in the tap's rx_packets. */
static int test_tap_whole_frames(void)
{
	/* Nothing here has anywhere to go: the tags name no VLAN device. */
	static const enum kind mix[] = { K_V4_VLAN, K_NONIP, K_V6_VLAN, K_ARP, K_V4_QINQ };
	static const enum kind ip[] = { K_V4, K_V6 };
	struct ucm_tun_stats t;
	struct rig r;
	int64_t rx0, rx1;

	if (rig_init(&r, "ucmtap3", NULL, UCM_TUN_F_TAP, 2, 0, 3))
		return 1;
	rx0 = dev_rx_packets("ucmtap3");
	UT_ASSERT(rx0 >= 0, "no rx_packets for ucmtap3 in /proc/net/dev");
	if (rig_feed(&r, 0, 600, ip, 2, true) || rig_feed(&r, 600, 600, mix, 5, false))
		return 1;
	if (rig_check_delivery(&r))
		return 1;
	rx1 = dev_rx_packets("ucmtap3");
	tun_stats_total(&r, &t);
	UT_ASSERT(t.packets == 1200 && !t.non_ip && !tun_errors(&t),
		  "tap: %llu packets, %llu non_ip", (unsigned long long)t.packets,
		  (unsigned long long)t.non_ip);
	UT_ASSERT(rx1 - rx0 == 1200, "rx_packets grew by %lld, want 1200",
		  (long long)(rx1 - rx0));
	return rig_fini(&r);
}

/* Tun mode: non-IP frames are counted and not written. */
static int test_tun_non_ip_dropped(void)
{
	static const enum kind mix[] = { K_V4, K_NONIP, K_V6, K_ARP, K_V4_VLAN };
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun4", NULL, 0, 2, 0, 4))
		return 1;
	if (rig_feed(&r, 0, 1000, mix, 5, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	UT_ASSERT(t.non_ip == 400 && t.packets == 600 && !tun_errors(&t),
		  "non_ip %llu packets %llu", (unsigned long long)t.non_ip,
		  (unsigned long long)t.packets);
	UT_ASSERT(rig_sink_drops(&r) == 400, "worker sink drops %llu",
		  (unsigned long long)rig_sink_drops(&r));
	return rig_fini(&r);
}

/* Link down: writes fail with EIO, the frames still come home; link up:
 * delivery resumes. IPv4 only (IPv6 addresses go away with the link). */
static int test_link_down_eio(void)
{
	static const enum kind v4[] = { K_V4, K_V4_VLAN };
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun5", NULL, 0, 2, 0, 5))
		return 1;
	if (rig_feed(&r, 0, 200, v4, 2, true))
		return 1;
	UT_ASSERT(!sh("ip link set dev ucmtun5 down"), "link down");
	if (rig_feed(&r, 200, 500, v4, 2, false))
		return 1;
	tun_stats_total(&r, &t);
	UT_ASSERT(t.err_eio == 500 && t.err_ebadfd + t.err_eagain + t.err_other == 0,
		  "eio %llu other errors %llu", (unsigned long long)t.err_eio,
		  (unsigned long long)(tun_errors(&t) - t.err_eio));
	UT_ASSERT(rig_sink_drops(&r) == 500, "sink drops %llu",
		  (unsigned long long)rig_sink_drops(&r));
	UT_ASSERT(!sh("ip link set dev ucmtun5 up"), "link up");
	if (rig_feed(&r, 700, 300, v4, 2, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	UT_ASSERT(t.packets == 500 && t.err_eio == 500, "packets %llu",
		  (unsigned long long)t.packets);
	return rig_fini(&r);
}

/* The device deleted under the workers: EBADFD, frames come home. */
static int test_device_gone_ebadfd(void)
{
	static const enum kind v4[] = { K_V4 };
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun6", NULL, 0, 2, 0, 6))
		return 1;
	if (rig_feed(&r, 0, 100, v4, 1, true) || rig_check_delivery(&r))
		return 1;
	UT_ASSERT(!sh("ip link del ucmtun6"), "ip link del");
	if (rig_feed(&r, 100, 300, v4, 1, false))
		return 1;
	tun_stats_total(&r, &t);
	UT_ASSERT(t.err_ebadfd == 300 && t.packets == 100, "ebadfd %llu packets %llu",
		  (unsigned long long)t.err_ebadfd, (unsigned long long)t.packets);
	return rig_fini(&r);
}

/* Attach to a device made beforehand by `ip tuntap add`, and it stays. */
static int test_attach_existing(void)
{
	struct rig r;

	if (rig_init(&r, "ucmtun7",
		     "ip tuntap add dev ucmtun7 mode tun multi_queue vnet_hdr",
		     0, 2, 0, 7))
		return 1;
	if (rig_feed(&r, 0, 500, ip_mix, 6, true) || rig_check_delivery(&r))
		return 1;
	return rig_fini(&r);
}

static int expect_refusal(const char *what, const struct ucm_tun_opts *o,
			  int want_errno, const char *msg)
{
	struct ucm_tun *tun;

	log_reset();
	errno = 0;
	tun = ucm_tun__create(o);
	if (tun)
		ucm_tun__destroy(tun);
	UT_ASSERT(!tun && errno == want_errno, "%s: got %s (errno %d, want %d)",
		  what, tun ? "a device" : "NULL", errno, want_errno);
	UT_ASSERT(strstr(logbuf, msg), "%s: message '%s' lacks '%s'", what,
		  logbuf, msg);
	return 0;
}

static int test_bad_options(void)
{
	UCM_OPTS(ucm_tun_opts, o, .name = "ucm-sixteen-char");
	UCM_OPTS(ucm_tun_opts, q, .name = "ucmtun8", .nqueues = 65);
	UCM_OPTS(ucm_tun_opts, f, .name = "ucmtun8", .flags = 0x80);
	UCM_OPTS(ucm_tun_opts, sl, .name = "ucm/tun");
	UCM_OPTS(ucm_tun_opts, ow, .name = "ucmtun8", .owner = (uint32_t)-1);

	UT_ASSERT(strlen(o.name) == 16, "name length");
	if (expect_refusal("16-char name", &o, EINVAL, "the limit is 15"))
		return 1;
	if (expect_refusal("65 queues", &q, EINVAL, "between 1 and 64"))
		return 1;
	if (expect_refusal("unknown flag", &f, EINVAL, "unknown flags"))
		return 1;
	if (expect_refusal("slash", &sl, EINVAL, "contains '/'"))
		return 1;
	if (expect_refusal("no user's owner", &ow, EINVAL, "owner 4294967295 is no user"))
		return 1;
	UT_ASSERT(!dev_exists("ucmtun8"), "a refused create left a device");
	return 0;
}

/* An existing tap opened in tun mode, a single-queue tun, a device that is
 * not a tun: NULL, and a message that names the fix. */
static int test_attach_mismatch(void)
{
	UCM_OPTS(ucm_tun_opts, tun_mode, .name = "ucmtap9");
	UCM_OPTS(ucm_tun_opts, sq, .name = "ucmsq9");
	UCM_OPTS(ucm_tun_opts, lo, .name = "lo");
	UCM_OPTS(ucm_tun_opts, tap_mode, .name = "ucmsq9", .flags = UCM_TUN_F_TAP);
	int ret = 0;

	UT_ASSERT(!sh("ip tuntap add dev ucmtap9 mode tap multi_queue vnet_hdr"), "tuntap add");
	UT_ASSERT(!sh("ip tuntap add dev ucmsq9 mode tun vnet_hdr"), "tuntap add");
	ret = ret ?: expect_refusal("tap as tun", &tun_mode, EINVAL,
				    "device ucmtap9 exists as a tap; delete it");
	ret = ret ?: expect_refusal("single-queue tun", &sq, EINVAL,
				    "exists as a single-queue tun");
	ret = ret ?: expect_refusal("tun as tap", &tap_mode, EINVAL,
				    "exists as a tun");
	ret = ret ?: expect_refusal("lo", &lo, EINVAL, "not a tun/tap device");
	/* Held by another user without vnet_hdr: its flags stay, so no. */
	if (!ret) {
		UCM_OPTS(ucm_tun_opts, busy, .name = "ucmbusy9");
		struct ifreq ifr = {};
		int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "ucmbusy9");
		ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE;
		UT_ASSERT(fd >= 0 && !ioctl(fd, TUNSETIFF, &ifr), "holder: %s",
			  strerror(errno));
		ret = expect_refusal("in use without vnet_hdr", &busy, EBUSY,
				     "in use with other flags");
		close(fd);
	}
	/* The refusals left the devices as they were. */
	ret = ret ?: (dev_exists("ucmtap9") && dev_exists("ucmsq9") ? 0 :
		      (ut_fail_reason("a refused attach removed a device"), 1));
	sh("ip link del ucmtap9");
	sh("ip link del ucmsq9");
	return ret;
}

/* No name, or a template: the kernel names the device, and every queue
 * attaches to that one device. */
static int test_kernel_named(void)
{
	UCM_OPTS(ucm_tun_opts, none, .nqueues = 2);
	UCM_OPTS(ucm_tun_opts, tmpl, .name = "ucmk%d", .nqueues = 3,
		 .flags = UCM_TUN_F_TAP);
	const struct ucm_tun_opts *opts[2] = { &none, &tmpl };
	const char *prefix[2] = { "tun", "ucmk" };
	int i;

	for (i = 0; i < 2; i++) {
		struct ucm_tun *tun = ucm_tun__create(opts[i]);
		char name[IFNAMSIZ];

		UT_ASSERT(tun, "create: %s", strerror(errno));
		snprintf(name, sizeof(name), "%s", ucm_tun__name(tun));
		UT_ASSERT(!strncmp(name, prefix[i], strlen(prefix[i])) &&
			  !strchr(name, '%'), "name %s", name);
		UT_ASSERT(ucm_tun__ifindex(tun) == (int)if_nametoindex(name),
			  "ifindex");
		/* One device: a second one would be <prefix>1. */
		snprintf(name + strlen(prefix[i]), sizeof(name) - strlen(prefix[i]), "1");
		UT_ASSERT(!dev_exists(name), "a second device %s appeared", name);
		snprintf(name, sizeof(name), "%s", ucm_tun__name(tun));
		ucm_tun__destroy(tun);
		UT_ASSERT(!dev_exists(name), "%s still exists", name);
	}
	return 0;
}

/* Without CAP_NET_ADMIN: EPERM and a message, nothing created. */
static int test_no_cap_net_admin(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	UT_ASSERT(pid >= 0, "fork");
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		UCM_OPTS(ucm_tun_opts, o, .name = "ucmtun10");
		struct ucm_tun *tun;

		if (syscall(SYS_capget, &h, d))
			_exit(3);
		d[0].effective &= ~(1u << CAP_NET_ADMIN);
		if (syscall(SYS_capset, &h, d))
			_exit(3);
		log_reset();
		errno = 0;
		tun = ucm_tun__create(&o);
		if (tun)
			_exit(1);
		if (errno != EPERM)
			_exit(2);
		_exit(strstr(logbuf, "needs CAP_NET_ADMIN") ? 0 : 4);
	}
	UT_ASSERT(waitpid(pid, &status, 0) == pid, "waitpid");
	UT_ASSERT(WIFEXITED(status), "child died");
	switch (WEXITSTATUS(status)) {
	case 0:
		break;
	case 1:
		UT_ASSERT(0, "created a device without CAP_NET_ADMIN");
		break;
	case 2:
		UT_ASSERT(0, "failed, but not with EPERM");
		break;
	case 3:
		ut_skip_reason("cannot drop CAP_NET_ADMIN here");
		return UT_SKIP;
	default:
		UT_ASSERT(0, "no message naming CAP_NET_ADMIN");
	}
	UT_ASSERT(!dev_exists("ucmtun10"), "device left behind");
	return 0;
}

/* ---- coalescing (UCM_TUN_F_COALESCE with a holding cpumap) --------------- */

static void print_super(const char *what, const struct ucm_tun_stats *t)
{
	fprintf(stderr, "# %s: %llu packets, %llu super-packets of %.1f on average, %llu writes in %llu submissions\n",
		what, (unsigned long long)t->packets, (unsigned long long)t->super,
		t->super ? (double)t->super_segs / t->super : 0.0,
		(unsigned long long)(t->packets - t->super_segs + t->super),
		(unsigned long long)t->submits);
}

/* A few flows of equal-sized datagrams, IPv4 and IPv6: they go as
 * super-packets, and every datagram comes out once, intact, in its flow's
 * order. */
static int test_coalesce_flows(void)
{
	static const enum kind mix[] = { K_V4, K_V6 };	/* flow f: mix[f % 2] */
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun11", NULL, UCM_TUN_F_COALESCE, 2, 0, 11))
		return 1;
	r.flows = 4;
	r.plen = 100;
	r.pace = 512;
	if (rig_feed(&r, 0, 6000, mix, 2, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	print_super("coalesce", &t);
	UT_ASSERT(t.packets == 6000 && !tun_errors(&t), "tun: %llu packets, %llu errors",
		  (unsigned long long)t.packets, (unsigned long long)tun_errors(&t));
	/* Hand-overs of up to 64 with 2 flows per worker: most datagrams
	 * share a write. */
	UT_ASSERT(t.super && t.super_segs >= t.packets / 2,
		  "%llu of %llu datagrams in %llu super-packets",
		  (unsigned long long)t.super_segs, (unsigned long long)t.packets,
		  (unsigned long long)t.super);
	return rig_fini(&r);
}

/* NO_BATCH with coalescing: each super-packet its own writev(). */
static int test_coalesce_no_batch(void)
{
	static const enum kind mix[] = { K_V4, K_V6 };
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun17", NULL, UCM_TUN_F_COALESCE | UCM_TUN_F_NO_BATCH, 2, 0, 17))
		return 1;
	r.flows = 4;
	r.plen = 100;
	r.pace = 512;
	if (rig_feed(&r, 0, 3000, mix, 2, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	print_super("no batch", &t);
	UT_ASSERT(t.packets == 3000 && !tun_errors(&t) && t.super, "%llu packets, %llu super",
		  (unsigned long long)t.packets, (unsigned long long)t.super);
	/* one syscall per write: a super-packet or a lone packet */
	UT_ASSERT(t.submits == t.packets - t.super_segs + t.super, "%llu writes for %llu",
		  (unsigned long long)t.submits,
		  (unsigned long long)(t.packets - t.super_segs + t.super));
	return rig_fini(&r);
}

/* A tap: frames whole, merged under their Ethernet header (the tap's
 * MAC); VLAN-tagged ones go alone and, with no VLAN device, nowhere. */
static int test_coalesce_tap(void)
{
	static const enum kind mix[] = { K_V4, K_V6, K_V4_VLAN, K_V4, K_V6, K_V6_VLAN };
	struct ucm_tun_stats t;
	struct rig r;
	uint32_t i;

	if (rig_init(&r, "ucmtap16", NULL, UCM_TUN_F_TAP | UCM_TUN_F_COALESCE, 2, 0, 16))
		return 1;
	r.flows = 6;	/* flow f: mix[f], so each flow has one kind */
	r.plen = 100;
	r.pace = 512;
	if (rig_feed(&r, 0, 3000, mix, 6, true))
		return 1;
	/* the tagged ones have nowhere to go */
	for (i = 0; i < 3000; i++)
		if (mix[i % 6] == K_V4_VLAN || mix[i % 6] == K_V6_VLAN) {
			r.want[i] = 0;
			r.expected--;
		}
	if (rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	print_super("tap", &t);
	UT_ASSERT(t.packets == 3000 && !tun_errors(&t), "tap: %llu packets, %llu errors",
		  (unsigned long long)t.packets, (unsigned long long)tun_errors(&t));
	/* the untagged two-thirds merge, the tagged third goes alone */
	UT_ASSERT(t.super && t.super_segs >= 1000 && t.super_segs <= 2000,
		  "%llu of %llu frames in %llu super-packets", (unsigned long long)t.super_segs,
		  (unsigned long long)t.packets, (unsigned long long)t.super);
	return rig_fini(&r);
}

/* Spoiled checksums inside same-flow runs: never merged, so the kernel
 * drops exactly those (InCsumErrors) and delivers their neighbours. */
static int test_coalesce_bad_checksum(void)
{
	static const enum kind mix[] = { K_V4, K_V6 };
	uint64_t csum0, csum;
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun12", NULL, UCM_TUN_F_COALESCE, 2, 0, 12))
		return 1;
	r.flows = 2;
	r.plen = 64;
	r.pace = 512;
	r.bad_every = 10;
	csum0 = snmp_udp("InCsumErrors");
	if (rig_feed(&r, 0, 4000, mix, 2, true) || rig_check_delivery(&r))
		return 1;
	csum = snmp_udp("InCsumErrors") - csum0;
	tun_stats_total(&r, &t);
	print_super("bad checksums", &t);
	UT_ASSERT(csum == 400, "the kernel counted %llu bad checksums, we spoiled 400",
		  (unsigned long long)csum);
	UT_ASSERT(t.packets == 4000 && t.super, "%llu packets, %llu super-packets",
		  (unsigned long long)t.packets, (unsigned long long)t.super);
	return rig_fini(&r);
}

/* What must not merge goes through as it came: IPv4 options, fragments,
 * IPv6 extension headers; and 64 flows of mixed sizes whose IPv4 IDs do
 * not follow each other. */
static int test_coalesce_unmergeable(void)
{
	static const enum kind mix[] = { K_V4_OPTS, K_V4_FRAG, K_V6_EXT, K_V4 };
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun13", NULL, UCM_TUN_F_COALESCE, 2, 0, 13))
		return 1;
	r.pace = 512;
	if (rig_feed(&r, 0, 2000, mix, 4, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	print_super("unmergeable", &t);
	/* 500 fragmented datagrams are two frames each. */
	UT_ASSERT(t.packets == 2500 && !tun_errors(&t), "tun: %llu packets, %llu errors",
		  (unsigned long long)t.packets, (unsigned long long)tun_errors(&t));
	UT_ASSERT(!t.super, "%llu super-packets from packets that may not merge",
		  (unsigned long long)t.super);
	return rig_fini(&r);
}

#ifdef UCM_DEBUG
extern int ucm_tun_test_refuse_super;	/* lib/io/tun_internal.h */
#endif

/* A kernel that refuses the super-packets (as Linux before 6.2 refuses
 * UDP GSO from a tun): the first refused one is written packet by packet,
 * merging stops on that worker (for longer than this test: its retry is
 * a second later), and every datagram arrives, in order. */
#ifdef UCM_DEBUG
/* 3000 datagrams (4 flows of 100 bytes, IPv4 and IPv6 in turn) through
 * @r with the kernel's refusal @hook on (ucm_tun_test_refuse_super):
 * each delivered, in order, none lost to an error; the tun's counters in
 * *@t, printed as @what. */
static int refused_feed(struct rig *r, int hook, const char *what, struct ucm_tun_stats *t)
{
	static const enum kind mix[] = { K_V4, K_V6 };
	int ret;

	r->flows = 4;
	r->plen = 100;
	r->pace = 512;
	__atomic_store_n(&ucm_tun_test_refuse_super, hook, __ATOMIC_RELAXED);
	ret = rig_feed(r, 0, 3000, mix, 2, true) || rig_check_delivery(r);
	__atomic_store_n(&ucm_tun_test_refuse_super, 0, __ATOMIC_RELAXED);
	if (ret)
		return 1;
	tun_stats_total(r, t);
	print_super(what, t);
	UT_ASSERT(t->packets == 3000 && !tun_errors(t), "tun: %llu packets, %llu errors",
		  (unsigned long long)t->packets, (unsigned long long)tun_errors(t));
	return 0;
}
#endif

static int test_coalesce_refused(void)
{
#ifdef UCM_DEBUG
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun15", NULL, UCM_TUN_F_COALESCE, 2, 0, 15) ||
	    refused_feed(&r, 1, "refused", &t))
		return 1;
	/* Refused: the super-packets of each worker's first hand-over (a
	 * few flows'), then none is tried again. */
	UT_ASSERT(t.super_refused >= 1 && t.super_refused <= 8 * r.nworkers && !t.super,
		  "%llu refused, %llu accepted", (unsigned long long)t.super_refused,
		  (unsigned long long)t.super);
	{
		const char *p = logbuf;
		uint32_t warned = 0;

		while ((p = strstr(p, "refused a UDP super-packet")))
			warned++, p++;
		UT_ASSERT(warned >= 1 && warned <= r.nworkers, "%u warnings for %u workers: %s",
			  warned, r.nworkers, logbuf);
	}
	return rig_fini(&r);
#else
	ut_skip_reason("needs the debug library's test hook");
	return UT_SKIP;
#endif
}

/* A kernel that refused a super-packet takes them again: merging comes
 * back after the retry's wait (1 s), not before, and nothing is lost on
 * the way. */
static int test_coalesce_reprobe(void)
{
#ifdef UCM_DEBUG
	static const enum kind mix[] = { K_V4, K_V6 };
	struct ucm_tun_stats t;
	uint64_t refused, t0;
	struct rig r;
	int ret;

	if (rig_init(&r, "ucmtun18", NULL, UCM_TUN_F_COALESCE, 1, 0, 18))
		return 1;
	r.flows = 4;
	r.plen = 100;
	r.pace = 512;
	t0 = ut_ms_now();	/* before the refusal: its wait ends after t0 + 1 s */
	__atomic_store_n(&ucm_tun_test_refuse_super, 1, __ATOMIC_RELAXED);
	ret = rig_feed(&r, 0, 1000, mix, 2, true);
	__atomic_store_n(&ucm_tun_test_refuse_super, 0, __ATOMIC_RELAXED);
	if (ret)
		return 1;
	tun_stats_total(&r, &t);
	refused = t.super_refused;
	UT_ASSERT(refused >= 1 && !t.super, "before: %llu refused, %llu accepted",
		  (unsigned long long)refused, (unsigned long long)t.super);
	/* Within the wait: still packet by packet. Judged only when both
	 * feeds ended well within it (a stalled machine may pass the second
	 * before they end). */
	if (rig_feed(&r, 1000, 1000, mix, 2, true))
		return 1;
	tun_stats_total(&r, &t);
	UT_ASSERT(ut_ms_now() - t0 >= 800 || (!t.super && t.super_refused == refused),
		  "merged again before the retry's wait: %llu accepted",
		  (unsigned long long)t.super);
	ut_msleep(1100);
	if (rig_feed(&r, 2000, 1000, mix, 2, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	print_super("re-probed", &t);
	UT_ASSERT(t.packets == 3000 && !tun_errors(&t), "tun: %llu packets, %llu errors",
		  (unsigned long long)t.packets, (unsigned long long)tun_errors(&t));
	UT_ASSERT(t.super > 0 && t.super_refused == refused,
		  "after the wait: %llu accepted, %llu refused (want more than 0, %llu)",
		  (unsigned long long)t.super, (unsigned long long)t.super_refused,
		  (unsigned long long)refused);
	return rig_fini(&r);
#else
	ut_skip_reason("needs the debug library's test hook");
	return UT_SKIP;
#endif
}

/* A kernel that refuses one shape (IPv6 UDP super-packets) and takes
 * another (IPv4's): the takes do not undo the refusals' waits, which
 * double (1 s, 2 s, ...), and the kernel is never said to take them
 * "again"; every datagram arrives. */
static int test_coalesce_refused_shape(void)
{
#ifdef UCM_DEBUG
	/* Flow f is seq % 4, on worker f % 2: each worker gets an IPv4 flow
	 * and an IPv6 one. */
	static const enum kind mix[] = { K_V4, K_V4, K_V6, K_V6 };
	struct ucm_tun_stats t;
	uint64_t t0;
	uint32_t seq = 0;
	struct rig r;
	int ret = 0;

	if (rig_init(&r, "ucmtun21", NULL, UCM_TUN_F_COALESCE, 1, 0, 21))
		return 1;
	r.flows = 4;
	r.plen = 100;
	r.pace = 512;
	log_reset();
	__atomic_store_n(&ucm_tun_test_refuse_super, 4, __ATOMIC_RELAXED);
	/* Past the first two retries (1 s, then 2 s more). */
	for (t0 = ut_ms_now(); !ret && ut_ms_now() - t0 < 3500 && seq + 128 <= MAX_SEQ;
	     seq += 128) {
		ret = rig_feed(&r, seq, 128, mix, 4, true);
		ut_msleep(100);
	}
	__atomic_store_n(&ucm_tun_test_refuse_super, 0, __ATOMIC_RELAXED);
	if (ret || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	print_super("one shape refused", &t);
	UT_ASSERT(t.packets == seq && !tun_errors(&t), "tun: %llu of %u packets, %llu errors",
		  (unsigned long long)t.packets, seq, (unsigned long long)tun_errors(&t));
	UT_ASSERT(t.super > 0 && t.super_refused > 0, "%llu taken, %llu refused (want both)",
		  (unsigned long long)t.super, (unsigned long long)t.super_refused);
	UT_ASSERT(!strstr(logbuf, "super-packets again"),
		  "said to take them again while it refuses one shape: %s", logbuf);
	return rig_fini(&r);
#else
	ut_skip_reason("needs the debug library's test hook");
	return UT_SKIP;
#endif
}

/* A kernel that refuses only a UDP super-packet with a short last segment
 * (Linux 6.6.44), unknown to the create (a tap is not probed): the first
 * refusal makes the worker merge equal sizes only, for good; merging goes
 * on, and every datagram arrives. */
static int test_coalesce_refused_short(void)
{
#ifdef UCM_DEBUG
	struct ucm_tun_stats t;
	struct rig r;

	if (rig_init(&r, "ucmtun22", NULL, UCM_TUN_F_COALESCE, 1, 0, 22))
		return 1;
	r.short_every = 8;
	log_reset();
	if (refused_feed(&r, 8, "short last refused", &t))
		return 1;
	/* Each worker's first hand-over's short-last groups refused (at
	 * most 71 packets, two or more a group), then equal groups taken. */
	UT_ASSERT(t.super_refused >= 1 && t.super_refused <= 36 * r.nworkers && t.super > 10,
		  "%llu refused, %llu accepted (want 1-%u, more than 10)",
		  (unsigned long long)t.super_refused, (unsigned long long)t.super,
		  36 * r.nworkers);
	UT_ASSERT(strstr(logbuf, "one size only") && !strstr(logbuf, "one by one"),
		  "want equal sizes said, UDP not stopped: %s", logbuf);
	return rig_fini(&r);
#else
	ut_skip_reason("needs the debug library's test hook");
	return UT_SKIP;
#endif
}

/* A kernel that refused the UDP probe at create: UDP is never merged (no
 * refused write at run time), TCP would be, and every datagram arrives. */
static int test_coalesce_probe_refused(void)
{
#ifdef UCM_DEBUG
	static const enum kind mix[] = { K_V4, K_V6 };
	struct ucm_tun_stats t;
	struct rig r;
	int ret;

	__atomic_store_n(&ucm_tun_test_refuse_super, 2, __ATOMIC_RELAXED);
	ret = rig_init(&r, "ucmtun19", NULL, UCM_TUN_F_COALESCE, 2, 0, 19);
	__atomic_store_n(&ucm_tun_test_refuse_super, 0, __ATOMIC_RELAXED);
	if (ret)
		return 1;
	r.flows = 4;
	r.plen = 100;
	r.pace = 512;
	if (rig_feed(&r, 0, 2000, mix, 2, true) || rig_check_delivery(&r))
		return 1;
	tun_stats_total(&r, &t);
	print_super("probe refused", &t);
	UT_ASSERT(t.packets == 2000 && !tun_errors(&t), "tun: %llu packets, %llu errors",
		  (unsigned long long)t.packets, (unsigned long long)tun_errors(&t));
	UT_ASSERT(!t.super && !t.super_refused, "%llu super-packets, %llu refused: UDP was merged",
		  (unsigned long long)t.super, (unsigned long long)t.super_refused);
	return rig_fini(&r);
#else
	ut_skip_reason("needs the debug library's test hook");
	return UT_SKIP;
#endif
}

/* A TCP segment of flow @sport (no connection behind it: the kernel
 * checks the checksum before it looks for a socket), @plen payload bytes
 * at stream offset @tseq. Returns the frame's length. */
static uint32_t build_tcp(uint8_t *p, const struct addrs *a, bool v6, uint16_t sport,
			  uint16_t id, uint32_t tseq, uint32_t plen, bool bad)
{
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	uint32_t l3h = v6 ? 40 : 20, tl = 20 + plen, sum;
	uint8_t *l3 = p + 14, *t = l3 + l3h;
	uint8_t ph[4] = { 0, 6, tl >> 8, tl & 0xff };

	memcpy(p, a->dmac, 6);
	memcpy(p + 6, smac, 6);
	put16(p + 12, v6 ? 0x86dd : 0x0800);
	memset(l3, 0, l3h + 20);
	if (v6) {
		l3[0] = 0x60;
		put16(l3 + 4, tl);
		l3[6] = 6;
		l3[7] = 64;
		memcpy(l3 + 8, a->src6, 16);
		memcpy(l3 + 24, a->dst6, 16);
	} else {
		l3[0] = 0x45;
		put16(l3 + 2, 20 + tl);
		put16(l3 + 4, id);
		put16(l3 + 6, 0x4000);
		l3[8] = 64;
		l3[9] = 6;
		memcpy(l3 + 12, a->src4, 4);
		memcpy(l3 + 16, a->dst4, 4);
		put16(l3 + 10, ucm_csum_fold(ucm_csum_add(0, l3, 20)));
	}
	put16(t, sport);
	put16(t + 2, 5999);	/* nobody listens */
	put32(t + 4, tseq);
	put32(t + 8, 1);
	t[12] = 5 << 4;
	t[13] = 0x10;		/* ACK */
	put16(t + 14, 1000);
	payload_fill(t + 20, tseq, plen);
	sum = ucm_csum_add(0, v6 ? l3 + 8 : l3 + 12, v6 ? 32 : 8);
	sum = ucm_csum_add(sum, ph, 4);
	put16(t + 16, ucm_csum_fold(ucm_csum_add(sum, t, tl)) ^ (bad ? 0x0100 : 0));
	return 14 + l3h + tl;
}

/* TCP runs of two flows (IPv4, IPv6) with a spoiled checksum every
 * tenth segment: the good ones go as super-packets, the spoiled ones
 * alone, so the kernel counts exactly those as bad (TCP InCsumErrors; a
 * spoiled segment merged into a super-packet would pass unchecked). */
static int test_coalesce_tcp_bad_checksum(void)
{
	void *area;
	uint64_t csum0, csum, nbad = 0;
	struct ucm_tun_stats t;
	struct rig r;
	uint32_t i;

	if (rig_init(&r, "ucmtun14", NULL, UCM_TUN_F_COALESCE, 2, 0, 14))
		return 1;
	area = ucm_umem__area(r.umem);
	csum0 = snmp_get("Tcp", "InCsumErrors");
	for (i = 0; i < 2000; i++) {
		uint32_t flow = i % 2, n = i / 2, len;
		bool bad = n % 10 == 5;
		uint64_t addr;

		UT_ASSERT(!ucm_pool__alloc(r.pool, &addr), "alloc: %s", strerror(errno));
		len = build_tcp((uint8_t *)ucm_umem__frame(area, addr) + DATA_OFF, &r.a, flow,
				41000 + flow, n, n * 200, 200, bad);
		nbad += bad;
		UT_ASSERT(!ucm_cpumap_producer__enqueue(r.prod, flow % r.nworkers, addr + DATA_OFF, len),
			  "enqueue");
		r.enq++;
		if ((i + 1) % 256 == 0 && rig_settle(&r))
			return 1;
	}
	if (rig_settle(&r))
		return 1;
	/* the last hold goes when the ring is empty: wait for the writes */
	for (i = 0; i < 1000; i++) {
		tun_stats_total(&r, &t);
		if (t.packets + tun_errors(&t) >= 2000)
			break;
		ut_msleep(1);
	}
	csum = snmp_get("Tcp", "InCsumErrors") - csum0;
	print_super("tcp bad checksums", &t);
	UT_ASSERT(t.packets == 2000 && !tun_errors(&t), "tun: %llu packets, %llu errors",
		  (unsigned long long)t.packets, (unsigned long long)tun_errors(&t));
	UT_ASSERT(t.super > 0, "no super-packet");
	UT_ASSERT(csum == nbad, "the kernel counted %llu bad TCP checksums, we spoiled %llu",
		  (unsigned long long)csum, (unsigned long long)nbad);
	return rig_fini(&r);
}

static const struct ut_case cases[] = {
	UT_CASE(test_batched_v4_v6),
	UT_CASE(test_no_batch_shared_queue),
	UT_CASE(test_tap_whole_frames),
	UT_CASE(test_tun_non_ip_dropped),
	UT_CASE(test_link_down_eio),
	UT_CASE(test_device_gone_ebadfd),
	UT_CASE(test_attach_existing),
	UT_CASE(test_bad_options),
	UT_CASE(test_attach_mismatch),
	UT_CASE(test_kernel_named),
	UT_CASE(test_no_cap_net_admin),
	UT_CASE(test_coalesce_flows),
	UT_CASE(test_coalesce_bad_checksum),
	UT_CASE(test_coalesce_unmergeable),
	UT_CASE(test_coalesce_tcp_bad_checksum),
	UT_CASE(test_coalesce_refused),
	UT_CASE(test_coalesce_reprobe),
	UT_CASE(test_coalesce_refused_shape),
	UT_CASE(test_coalesce_refused_short),
	UT_CASE(test_coalesce_probe_refused),
	UT_CASE(test_coalesce_tap),
	UT_CASE(test_coalesce_no_batch),
	{}
};

int main(int argc, char **argv)
{
	int ret;

	if (geteuid() != 0) {
		printf("SKIP: tun_sink: needs root (run it through tests/net/test-tun-sink.sh)\n");
		return 0;
	}
	ucm_set_print(cap_print);
	/* The loopback is needed by nothing here, but a fresh namespace
	 * has it down; leave it so. Our UDP never goes back out. */
	ret = ut_main(argc, argv, cases);
	printf("# udp_received_total %llu\n", (unsigned long long)udp_received_total);
	return ret;
}
