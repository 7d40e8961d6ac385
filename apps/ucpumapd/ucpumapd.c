// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd: the forwarder. NIC queue -> XDP steering program -> XSK socket
 * -> RX thread (owner of the queue's pool) -> cpumap workers -> tun -> the
 * kernel's stack.
 *
 *   ucpumapd --dev IFACE --tun NAME [options]       (--help lists them)
 *
 * Start order: program first (it replaces a stale one of ours, whose XSK
 * map would otherwise keep the queues busy), then sockets, tun, workers,
 * RX threads, and last the sockets into the XSK map. Stop order
 * (SIGINT/SIGTERM, or --duration): sockets out of the map, RX threads
 * stop (flushing their bulk queues), workers drain, program off, tun
 * closed, and the sockets closed with every frame brought home and
 * audited; the final counters end with the conservation line.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/log.h"
#include "ucpumap/tun.h"
#include "ucpumap/txq.h"
#include "ucpumap/xdp.h"
#include "ucpumap/xsk.h"
#include "util.h"

#define DEFAULT_FRAMES		8192
#define DEFAULT_RX_RING		1024
/* Frames must cover fill + RX rings and what is out in the cpumap. */
#define SHUTDOWN_TIMEOUT_MS	1500
/* An idle RX thread sleeps this long at most in poll(2); with frames on
 * the TX path, this long (completions come without a wakeup). */
#define RX_IDLE_MS		10
#define RX_TX_PENDING_MS	1

struct cfg {
	const char *dev, *tun, *stats_json;
	uint32_t queues[UCM_XSK_MAX_QUEUES];
	int nqueues;
	int cpus[APP_MAX_CPUS];
	int ncpus;
	int rx_cpus[APP_MAX_CPUS];	/* RX thread i on rx_cpus[i % n_rx_cpus] */
	int n_rx_cpus;
	bool tap, busy_poll, no_recycle, no_batch, no_direct_bulk, replace, pass;
	bool no_coalesce;
	bool skb_mode;
	bool reverse;			/* two-way: --two-way or --peer-mac */
	bool peer_mac_set;		/* the next hop fixed, not from the kernel */
	bool mtu_auto;			/* --mtu not given */
	uint8_t peer_mac[6];
	uint32_t xsk_mode;
	struct ucm_steer_cfg steer;
	unsigned long frames, frame_size, rx_size, fill_size, qsize, mtu;
	double interval, duration;
};

/* Our GRO, unless turned off. */
static bool coalescing(const struct cfg *c)
{
	return !c->no_coalesce;
}

struct rx_thread {
	pthread_t thr;
	struct ucm_xsk_queue *q;
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer *_Atomic prod;
	const struct ucm_steer_cfg *steer;
	int cpu;		/* -1: not pinned */
	_Atomic int err;	/* set by the RX thread when it gives up */
	bool started;
	/* The reverse path: the TX channels of the workers that send on
	 * this queue (worker w on queue w % nqueues). */
	struct ucm_txq *txq[UCM_CPUMAP_MAX_WORKERS];
	int ntxq;
	struct ucm_umem *umem;
	_Atomic uint64_t tx_drops;	/* TX ring full after the retry */
};

static atomic_int stop_rx;

static const char *const policy_names[UCM_STEER__MAX] = {
	[UCM_STEER_FIXED] = "fixed",
	[UCM_STEER_RR] = "round-robin",
	[UCM_STEER_L4_HASH] = "l4-hash",
	[UCM_STEER_L4_SPORT] = "l4-sport",
	[UCM_STEER_L4_DPORT] = "l4-dport",
};

static int verbose;

/* The library's messages: warnings and notices always (what mode the
 * sockets got, a stale program replaced), libbpf's chatter with -v. */
static int daemon_print(enum ucm_log_level level, const char *fmt, va_list ap)
{
	if (level == UCM_LOG_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: ucpumapd --dev IFACE --tun NAME [options]\n"
"\n"
"Receives IPv4/IPv6 on IFACE's queues with AF_XDP, spreads it over worker\n"
"threads (one per CPU) and hands it to the kernel through the tun device NAME.\n"
"\n"
"  --dev IFACE           the interface to receive on\n"
"  --tun NAME            tun device to create or attach (at most 15 characters)\n"
"  --queues LIST         RX queues, e.g. 0 or 0-3 (default 0)\n"
"  --cpus LIST           worker CPUs, e.g. 1 or 1,3 (default: all but CPU 0, or 0)\n"
"  --rx-cpus LIST        pin RX thread i to the i-th CPU of LIST (default: unpinned;\n"
"                        on a NIC, put each near its queue's interrupt)\n"
"  --tap                 a tap device: frames go whole (L2)\n"
"  --steer POLICY        fixed, round-robin, l4-hash, l4-sport, l4-dport\n"
"                        (default l4-hash)\n"
"  --symmetric           l4-hash: both directions of a flow to one worker\n"
"  --filter WHAT         what goes to ucpumap: ipv4, ipv6 or all (default);\n"
"                        ARP, neighbour discovery and the rest stay with the kernel\n"
"  --fixed-worker N      the worker of --steer fixed (default 0)\n"
"  --xdp-mode MODE       native (default) or skb\n"
"  --copy | --zero-copy  AF_XDP mode (default: zero-copy when the driver can)\n"
"  --busy-poll           busy-poll the sockets\n"
"  --replace             replace another XDP program already on IFACE\n"
"  --frames N            frames per queue, power of two (default %d)\n"
"  --frame-size N        2048 or 4096 bytes (default 4096)\n"
"  --rx-size N           RX ring size, power of two (default %d; fill: twice)\n"
"  --qsize N             worker ring size, power of two (default %d)\n"
"  --mtu N               tun MTU (default: what a frame holds, at most 9000;\n"
"                        two-way: and at most IFACE's MTU)\n"
"  --no-recycle          workers release frames to the backing stack\n"
"  --no-batch            one write() per packet into tun\n"
"  --no-coalesce         each packet its own write into tun (default: a flow's\n"
"                        UDP datagrams or TCP segments go as one GSO\n"
"                        super-packet, our GRO)\n"
"  --no-direct-bulk      bulk returns never use the owner's cache\n"
"  --pass                no workers: each RX thread writes to tun itself\n"
"                        (the kernel's XDP_PASS, for comparison)\n"
"  --two-way             the workers also read the tun and send what the kernel\n"
"                        routes into it out of IFACE, to the next hop the\n"
"                        kernel's routing and neighbour tables give for IFACE;\n"
"                        with --tap, frames go as they are, the tap takes\n"
"                        IFACE's MAC address and ARP and neighbour discovery\n"
"                        go to the tap (give the tap IFACE's addresses)\n"
"  --peer-mac MAC        two-way, to this next hop (e.g. the gateway's MAC)\n"
"  --interval SEC        statistics every SEC seconds (default 1; 0: none)\n"
"  --stats-json FILE     the statistics as JSON lines too\n"
"  --duration SEC        stop after SEC seconds (default: run until signalled)\n"
"  -v, --verbose         the library's debug messages too (libbpf's among them)\n"
"  -h, --help            this text\n"
"\n"
"SIGINT/SIGTERM stop it cleanly; SIGUSR1 prints the statistics now.\n",
		DEFAULT_FRAMES, DEFAULT_RX_RING, UCM_CPUMAP_QSIZE_DEFAULT);
}

static int parse_queue_list(const char *s, struct cfg *c)
{
	int tmp[APP_MAX_CPUS], n, i;
	char *end;

	/* Same syntax as CPU lists, but any number is a candidate queue:
	 * whether IFACE has it is checked when the sockets bind. */
	n = 0;
	for (const char *p = s; *p; ) {
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p || a >= UCM_XSK_MAX_QUEUES)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p || b < a || b >= UCM_XSK_MAX_QUEUES)
				goto bad;
		}
		for (; a <= b; a++) {
			for (i = 0; i < n; i++)
				if (tmp[i] == (int)a)
					goto bad;
			if (n == UCM_XSK_MAX_QUEUES)
				goto bad;
			tmp[n++] = (int)a;
		}
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	if (!n)
		goto bad;
	for (i = 0; i < n; i++)
		c->queues[i] = tmp[i];
	c->nqueues = n;
	return 0;
bad:
	fprintf(stderr, "--queues: '%s' is not a list of distinct queues 0-%d, e.g. 0 or 0-3\n",
		s, UCM_XSK_MAX_QUEUES - 1);
	return -1;
}

static int parse_args(int argc, char **argv, struct cfg *c)
{
	enum {
		O_DEV = 256, O_TUN, O_QUEUES, O_CPUS, O_TAP, O_STEER, O_SYM, O_FIXED,
		O_XDPMODE, O_COPY, O_ZC, O_BUSY, O_REPLACE, O_FRAMES, O_RXSIZE,
		O_QSIZE, O_MTU, O_NORECYCLE, O_NOBATCH, O_NOCOALESCE, O_NODIRECT, O_INTERVAL,
		O_JSON, O_DURATION, O_FILTER, O_FRAMESIZE, O_PASS, O_RXCPUS,
		O_PEERMAC, O_TWOWAY,
	};
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, O_DEV },
		{ "tun", required_argument, NULL, O_TUN },
		{ "queues", required_argument, NULL, O_QUEUES },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "tap", no_argument, NULL, O_TAP },
		{ "steer", required_argument, NULL, O_STEER },
		{ "symmetric", no_argument, NULL, O_SYM },
		{ "fixed-worker", required_argument, NULL, O_FIXED },
		{ "xdp-mode", required_argument, NULL, O_XDPMODE },
		{ "copy", no_argument, NULL, O_COPY },
		{ "zero-copy", no_argument, NULL, O_ZC },
		{ "busy-poll", no_argument, NULL, O_BUSY },
		{ "replace", no_argument, NULL, O_REPLACE },
		{ "frames", required_argument, NULL, O_FRAMES },
		{ "rx-size", required_argument, NULL, O_RXSIZE },
		{ "qsize", required_argument, NULL, O_QSIZE },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "no-recycle", no_argument, NULL, O_NORECYCLE },
		{ "no-batch", no_argument, NULL, O_NOBATCH },
		{ "no-coalesce", no_argument, NULL, O_NOCOALESCE },
		{ "no-direct-bulk", no_argument, NULL, O_NODIRECT },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ "stats-json", required_argument, NULL, O_JSON },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "filter", required_argument, NULL, O_FILTER },
		{ "frame-size", required_argument, NULL, O_FRAMESIZE },
		{ "pass", no_argument, NULL, O_PASS },
		{ "rx-cpus", required_argument, NULL, O_RXCPUS },
		{ "peer-mac", required_argument, NULL, O_PEERMAC },
		{ "two-way", no_argument, NULL, O_TWOWAY },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned long v;
	bool copy = false, zc = false;
	int opt, i;

	memset(c, 0, sizeof(*c));
	c->steer.policy = UCM_STEER_L4_HASH;
	c->frames = DEFAULT_FRAMES;
	c->frame_size = 4096;
	c->rx_size = DEFAULT_RX_RING;
	c->qsize = UCM_CPUMAP_QSIZE_DEFAULT;
	c->interval = 1;
	c->nqueues = 1;

	while ((opt = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
		switch (opt) {
		case O_DEV: c->dev = optarg; break;
		case O_TUN: c->tun = optarg; break;
		case O_QUEUES:
			if (parse_queue_list(optarg, c))
				return -1;
			break;
		case O_CPUS:
			c->ncpus = parse_cpu_list(optarg, c->cpus, UCM_CPUMAP_MAX_WORKERS, "--cpus");
			if (c->ncpus < 0)
				return -1;
			break;
		case O_TAP: c->tap = true; break;
		case O_STEER:
			for (i = 0; i < UCM_STEER__MAX; i++)
				if (!strcmp(optarg, policy_names[i]))
					break;
			if (i == UCM_STEER__MAX) {
				fprintf(stderr, "--steer: unknown policy '%s'; use fixed, round-robin, l4-hash, l4-sport or l4-dport\n",
					optarg);
				return -1;
			}
			c->steer.policy = i;
			break;
		case O_SYM: c->steer.flags |= UCM_STEER_F_SYMMETRIC; break;
		case O_FIXED:
			if (parse_uint(optarg, 0, UCM_STEER_MAX_WORKERS - 1, "--fixed-worker", &v))
				return -1;
			c->steer.fixed = v;
			break;
		case O_XDPMODE:
			if (!strcmp(optarg, "skb") || !strcmp(optarg, "generic")) {
				c->skb_mode = true;
			} else if (strcmp(optarg, "native") && strcmp(optarg, "drv")) {
				fprintf(stderr, "--xdp-mode: '%s' is neither native nor skb\n", optarg);
				return -1;
			}
			break;
		case O_COPY: copy = true; break;
		case O_ZC: zc = true; break;
		case O_BUSY: c->busy_poll = true; break;
		case O_REPLACE: c->replace = true; break;
		case O_FRAMES:
			if (parse_pow2(optarg, 256, 1u << 18, "--frames", &c->frames))
				return -1;
			break;
		case O_RXSIZE:
			if (parse_pow2(optarg, 64, 16384, "--rx-size", &c->rx_size))
				return -1;
			break;
		case O_QSIZE:
			if (parse_pow2(optarg, UCM_CPUMAP_BULK_SIZE, UCM_CPUMAP_QSIZE_MAX, "--qsize", &c->qsize))
				return -1;
			break;
		case O_MTU:
			if (parse_uint(optarg, 68, 65535, "--mtu", &c->mtu))
				return -1;
			break;
		case O_NORECYCLE: c->no_recycle = true; break;
		case O_NOBATCH: c->no_batch = true; break;
		case O_NOCOALESCE: c->no_coalesce = true; break;
		case O_NODIRECT: c->no_direct_bulk = true; break;
		case O_INTERVAL:
		case O_DURATION: {
			char *end;
			double d;

			errno = 0;
			d = strtod(optarg, &end);
			if (errno || *end || !(d >= 0) || d > 1e7) {
				fprintf(stderr, "--%s: '%s' is not a number of seconds\n",
					opt == O_INTERVAL ? "interval" : "duration", optarg);
				return -1;
			}
			if (opt == O_INTERVAL)
				c->interval = d;
			else
				c->duration = d;
			break;
		}
		case O_JSON: c->stats_json = optarg; break;
		case O_PASS: c->pass = true; break;
		case O_PEERMAC:
			if (parse_mac(optarg, c->peer_mac)) {
				fprintf(stderr, "--peer-mac: '%s' is not a MAC address like 02:00:00:00:00:01\n",
					optarg);
				return -1;
			}
			c->reverse = true;
			c->peer_mac_set = true;
			break;
		case O_TWOWAY: c->reverse = true; break;
		case O_RXCPUS:
			c->n_rx_cpus = parse_cpu_list(optarg, c->rx_cpus, APP_MAX_CPUS, "--rx-cpus");
			if (c->n_rx_cpus < 0)
				return -1;
			break;
		case O_FRAMESIZE:
			if (parse_uint(optarg, 2048, 4096, "--frame-size", &c->frame_size))
				return -1;
			if (c->frame_size != 2048 && c->frame_size != 4096) {
				fprintf(stderr, "--frame-size: %lu; AF_XDP frames are 2048 or 4096 bytes\n",
					c->frame_size);
				return -1;
			}
			break;
		case O_FILTER:
			c->steer.flags &= ~(UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6);
			if (!strcmp(optarg, "ipv4"))
				c->steer.flags |= UCM_STEER_F_IPV4;
			else if (!strcmp(optarg, "ipv6"))
				c->steer.flags |= UCM_STEER_F_IPV6;
			else if (strcmp(optarg, "all")) {
				fprintf(stderr, "--filter: '%s' is not ipv4, ipv6 or all\n", optarg);
				return -1;
			}
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "Try 'ucpumapd --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ucpumapd: unexpected argument '%s'; try --help\n", argv[optind]);
		return -1;
	}
	if (!c->dev || !c->tun) {
		fprintf(stderr, "ucpumapd: --dev IFACE and --tun NAME are required; try --help\n");
		return -1;
	}
	if (copy && zc) {
		fprintf(stderr, "ucpumapd: --copy and --zero-copy exclude each other\n");
		return -1;
	}
	c->xsk_mode = copy ? UCM_XSK_COPY : zc ? UCM_XSK_ZEROCOPY : UCM_XSK_AUTO;
	if (strlen(c->tun) >= IF_NAMESIZE) {
		fprintf(stderr, "--tun: '%s' is longer than %d characters\n", c->tun, IF_NAMESIZE - 1);
		return -1;
	}
	if (!c->ncpus) {
		/* CPU 0 takes the RX work (and, on veth, the sender's NAPI). */
		int n = cpu_online_count();

		for (i = n > 1 ? 1 : 0; i < n && c->ncpus < UCM_CPUMAP_MAX_WORKERS; i++)
			if (cpu_usable(i))
				c->cpus[c->ncpus++] = i;
	}
	if (c->peer_mac_set && c->tap) {
		fprintf(stderr, "ucpumapd: --peer-mac is for a tun: a tap's frames carry their own Ethernet header; use --two-way\n");
		return -1;
	}
	if (c->reverse && c->tap)
		/* The tap is the host's interface on this link: its stack
		 * must see ARP and neighbour discovery. */
		c->steer.flags |= UCM_STEER_F_LINK_CTRL;
	if (c->reverse && c->pass) {
		fprintf(stderr, "ucpumapd: --pass has no workers to read the tun: drop --pass, or --two-way and --peer-mac\n");
		return -1;
	}
	if (c->pass) {
		/* The RX threads are the workers: one "worker" per queue. */
		c->ncpus = c->nqueues;
		for (i = 0; i < c->ncpus; i++)
			c->cpus[i] = -1;
	}
	c->steer.nworkers = c->ncpus;
	if (c->steer.fixed >= c->steer.nworkers) {
		fprintf(stderr, "--fixed-worker %u: there are only %d workers (--cpus)\n",
			c->steer.fixed, c->ncpus);
		return -1;
	}
	if (!c->mtu) {
		/* What a frame holds after the 256-byte XDP headroom, Ethernet
		 * and two VLAN tags. */
		c->mtu = c->frame_size - 256 - 14 - 8;
		c->mtu_auto = true;
	}
	if (c->mtu > 9000)
		c->mtu = 9000;
	c->fill_size = 2 * c->rx_size;
	{
		/* Two-way: each queue also lends its workers' channels two
		 * rings' worth and keeps a TX ring in flight. */
		unsigned long wpq = (c->ncpus + c->nqueues - 1) / c->nqueues;
		unsigned long tx = c->reverse ? UCM_XSK_TX_RING + wpq * 2 * UCM_TXQ_DEFAULT_SIZE : 0;
		unsigned long need = c->fill_size + c->rx_size + c->qsize + tx;

		if (c->frames < need) {
			fprintf(stderr, "--frames %lu cannot cover the fill ring (%lu), the RX ring (%lu), a worker ring (%lu)%s: give at least %lu (a power of two)\n",
				c->frames, c->fill_size, c->rx_size, c->qsize,
				tx ? " and the way back (TX ring and lent frames)" : "", need);
			return -1;
		}
	}
	return 0;
}

/* ---- RX threads --------------------------------------------------------------- */

/*
 * The RX thread's turn of the way out, as a driver's NAPI poll does its TX
 * completions: lend its workers frames of its pool, put what they filled on
 * the TX ring, and bring completed frames home, in bulk, straight into its
 * own cache (seed 003). Completions are reaped before each send, so the TX
 * ring has all the room it can; what it still cannot take is dropped and
 * counted (once: the library's tx_ring_full): the RX direction never waits
 * on TX.
 */
static int tx_turn(struct rx_thread *t)
{
	struct ucm_pool *pool = ucm_xsk_queue__pool(t->q);
	uint64_t desc[UCM_XSK_RX_BATCH], drop[UCM_XSK_RX_BATCH];
	uint32_t n, k, done = 0;
	int i;

	for (i = 0; i < t->ntxq; i++) {
		ucm_txq__lend(t->txq[i], pool);
		n = ucm_txq__collect(t->txq[i], desc, UCM_XSK_RX_BATCH);
		if (!n)
			continue;
		done += ucm_xsk_queue__complete(t->q);
		k = ucm_xsk_queue__tx(t->q, desc, n);
		if (k < n) {
			uint64_t base = ~(uint64_t)(ucm_umem__frame_size(t->umem) - 1);

			for (uint32_t j = k; j < n; j++)
				drop[j - k] = ucm_desc_addr(desc[j]) & base;
			/* Our own pool's frames: home as the owner. */
			ucm_umem__put_bulk(t->umem, drop, n - k);
			atomic_fetch_add_explicit(&t->tx_drops, n - k, memory_order_relaxed);
		}
		done += n;
	}
	done += ucm_xsk_queue__complete(t->q);
	return done;
}

/* Sleep until RX, a worker's send (its channel's eventfd), or a timeout. */
static void rx_sleep(struct rx_thread *t)
{
	struct pollfd p[1 + UCM_CPUMAP_MAX_WORKERS];
	bool busy = false;
	int i;

	for (i = 0; i < t->ntxq; i++)
		busy |= !ucm_txq__sleep_begin(t->txq[i]);
	if (!busy) {
		p[0].fd = ucm_xsk_queue__fd(t->q);
		p[0].events = POLLIN;
		for (i = 0; i < t->ntxq; i++) {
			p[1 + i].fd = ucm_txq__wake_fd(t->txq[i]);
			p[1 + i].events = POLLIN;
		}
		poll(p, 1 + t->ntxq,
		     ucm_xsk_queue__tx_pending(t->q) ? RX_TX_PENDING_MS : RX_IDLE_MS);
	}
	for (i = 0; i < t->ntxq; i++)
		ucm_txq__sleep_end(t->txq[i]);
}

static void *rx_main(void *arg)
{
	struct rx_thread *t = arg;
	struct ucm_pool *pool = ucm_xsk_queue__pool(t->q);
	struct ucm_cpumap_producer *prod;
	uint32_t rr = 0;
	int n;

	if (t->cpu >= 0) {
		int err = pin_self(t->cpu);

		if (err)
			fprintf(stderr, "ucpumapd: cannot pin an RX thread to CPU %d: %s\n",
				t->cpu, strerror(-err));
	}
	ucm_pool__set_owner(pool);
	prod = ucm_cpumap__producer_create(t->map, pool);
	if (!prod) {
		t->err = -errno;
		ucm_pool__clear_owner(pool);
		return NULL;
	}
	atomic_store(&t->prod, prod);
	while (!atomic_load_explicit(&stop_rx, memory_order_relaxed)) {
		n = ucm_xsk_queue__poll(t->q, prod, t->steer, &rr);
		if (n < 0) {
			t->err = n;
			break;
		}
		if (t->ntxq)
			n += tx_turn(t);
		if (!n) {
			if (t->ntxq)
				rx_sleep(t);
			else	/* idle: sleep in poll(2) */
				ucm_xsk_queue__wait(t->q, RX_IDLE_MS);
		}
	}
	/* What is on its way out gets a moment to complete. */
	for (int i = 0; i < 100 && t->ntxq && ucm_xsk_queue__tx_pending(t->q); i++) {
		ucm_xsk_queue__complete(t->q);
		sleep_sec(0.001);
	}
	/* Flush what is staged (and, with --pass, close our tun queue on
	 * this thread); the producer stays registered with the cpumap, its
	 * stats are read at the end, and is freed with it. */
	ucm_cpumap__producer_stop(prod);
	/* Last act of an owner. */
	ucm_pool__clear_owner(pool);
	return NULL;
}

/* ---- statistics --------------------------------------------------------------- */

struct totals {
	uint64_t rx, bad_desc, steer_err, enq_processed, enq_drops, events;
	uint64_t w_processed, w_drops, w_reason[UCM_DROP__MAX];
	uint64_t tun_packets, tun_eio, tun_ebadfd, tun_eagain, tun_other, tun_non_ip;
	uint64_t tun_super, tun_super_segs;
	/* the way back */
	uint64_t rev_read, rev_drop_bad, rev_err, txq_sent, txq_full;
	uint64_t txq_collected, tx, tx_drops, tx_completed, tx_direct, tx_bulks;
};

struct daemon {
	struct cfg c;
	struct ucm_xdp *xdp;
	struct ucm_xsk *xsk;
	struct ucm_tun *tun;
	struct ucm_cpumap *map;
	struct rx_thread rx[UCM_XSK_MAX_QUEUES];
	struct ucm_txq *txq[UCM_CPUMAP_MAX_WORKERS];	/* two-way: per worker */
	FILE *json;
	struct totals last;
	/* Previous snapshots, for the per-line rates. */
	uint64_t last_q_rx[UCM_XSK_MAX_QUEUES];
	uint64_t last_enq[UCM_XSK_MAX_QUEUES][UCM_CPUMAP_MAX_WORKERS][2];
	uint64_t last_w[UCM_CPUMAP_MAX_WORKERS][2];
	uint64_t last_q_tx[UCM_XSK_MAX_QUEUES];
	uint64_t last_rev[UCM_CPUMAP_MAX_WORKERS];
	double last_t;
	bool running;		/* set up completely: there are counters */
};

static void gather(struct daemon *d, struct totals *t)
{
	int q, w, r;

	memset(t, 0, sizeof(*t));
	for (q = 0; q < d->c.nqueues; q++) {
		struct ucm_cpumap_producer *prod = atomic_load(&d->rx[q].prod);
		struct ucm_xsk_stats xs;

		ucm_xsk_queue__stats(d->rx[q].q, &xs);
		t->rx += xs.rx;
		t->bad_desc += xs.rx_bad_desc;
		t->steer_err += xs.rx_steer_err;
		t->tx += xs.tx;
		t->tx_completed += xs.tx_completed;
		t->tx_direct += xs.tx_comp_direct;
		t->tx_bulks += xs.tx_comp_bulks;
		t->tx_drops += atomic_load_explicit(&d->rx[q].tx_drops, memory_order_relaxed);
		for (w = 0; prod && w < d->c.ncpus; w++) {
			struct ucm_cpumap_enqueue_stats es;

			ucm_cpumap__enqueue_stats(prod, w, &es);
			t->enq_processed += es.processed;
			t->enq_drops += es.drops;
			t->events += es.events;
		}
	}
	for (w = 0; w < d->c.ncpus; w++) {
		struct ucm_cpumap_worker_stats ws;
		struct ucm_tun_stats ts;

		ucm_cpumap__worker_stats(d->map, w, &ws);
		t->w_processed += ws.processed;
		t->w_drops += ws.drops;
		for (r = 0; r < UCM_DROP__MAX; r++)
			t->w_reason[r] += ws.drop_reason[r];
		ucm_tun__worker_stats(d->tun, w, &ts);
		t->tun_packets += ts.packets;
		t->tun_eio += ts.err_eio;
		t->tun_ebadfd += ts.err_ebadfd;
		t->tun_eagain += ts.err_eagain;
		t->tun_other += ts.err_other;
		t->tun_non_ip += ts.non_ip;
		t->tun_super += ts.super;
		t->tun_super_segs += ts.super_segs;
		if (d->txq[w]) {
			struct ucm_tun_rev_stats rs;
			struct ucm_txq_stats qs;

			ucm_tun__rev_stats(d->tun, w, &rs);
			ucm_txq__stats(d->txq[w], &qs);
			t->rev_read += rs.packets + rs.drop_offload + rs.drop_too_big +
				       rs.drop_non_ip + rs.drop_no_neigh;
			t->rev_drop_bad += rs.drop_offload + rs.drop_too_big + rs.drop_non_ip +
					   rs.drop_no_neigh;
			t->rev_err += rs.err;
			t->txq_sent += qs.sent;
			t->txq_full += qs.send_full;
			t->txq_collected += qs.collected;
		}
	}
}

static void print_stats(struct daemon *d, bool final)
{
	double now = now_sec(), dt = now - d->last_t;
	struct totals t, *l = &d->last;
	int q, w;

	gather(d, &t);
	if (dt <= 0)
		dt = 1;
#define RATE(f) ((t.f - l->f) / dt)
	printf("%s%s: rx %.0f pps | to workers %.0f pps, enqueue drops %.0f, bulk-avg %.1f | delivered %.0f pps, worker drops %.0f\n",
	       final ? "total " : "", d->c.dev, RATE(rx), RATE(enq_processed) - RATE(enq_drops),
	       RATE(enq_drops),
	       t.events - l->events ? (double)(t.enq_processed - l->enq_processed) /
				       (t.events - l->events) : 0,
	       RATE(tun_packets), RATE(w_drops));
	for (q = 0; q < d->c.nqueues; q++) {
		struct ucm_xsk_stats xs;
		struct ucm_pool_stats ps;

		ucm_xsk_queue__stats(d->rx[q].q, &xs);
		ucm_pool__get_stats(ucm_xsk_queue__pool(d->rx[q].q), &ps);
		printf("  queue %u: %.0f pps, rx %llu bad-desc %llu | kernel: rx_dropped %llu ring_full %llu fill_empty %llu invalid %llu | pool: fast %llu refill %llu slow %llu cached %llu ring %llu ring_full %llu released %llu inflight %lld\n",
		       ucm_xsk_queue__id(d->rx[q].q), (xs.rx - d->last_q_rx[q]) / dt,
		       (unsigned long long)xs.rx, (unsigned long long)xs.rx_bad_desc,
		       (unsigned long long)xs.kernel_rx_dropped,
		       (unsigned long long)xs.kernel_rx_ring_full,
		       (unsigned long long)xs.kernel_rx_fill_ring_empty_descs,
		       (unsigned long long)xs.kernel_rx_invalid_descs,
		       (unsigned long long)ps.alloc_fast, (unsigned long long)ps.alloc_refill,
		       (unsigned long long)ps.alloc_slow, (unsigned long long)ps.recycle_cached,
		       (unsigned long long)ps.recycle_ring, (unsigned long long)ps.recycle_ring_full,
		       (unsigned long long)ps.recycle_released, (long long)ps.inflight);
		d->last_q_rx[q] = xs.rx;
		if (d->rx[q].ntxq) {
			uint64_t drops = atomic_load_explicit(&d->rx[q].tx_drops,
							      memory_order_relaxed);

			printf("    tx: %.0f pps, tx %llu drops %llu (ring full %llu) | completions %llu bulk-avg %.1f, direct %.1f%% | kicks %llu kick_err %llu\n",
			       (xs.tx - d->last_q_tx[q]) / dt, (unsigned long long)xs.tx,
			       (unsigned long long)drops, (unsigned long long)xs.tx_ring_full,
			       (unsigned long long)xs.tx_completed,
			       xs.tx_comp_bulks ? (double)xs.tx_completed / xs.tx_comp_bulks : 0,
			       xs.tx_completed ? 100.0 * xs.tx_comp_direct / xs.tx_completed : 0,
			       (unsigned long long)xs.tx_kicks, (unsigned long long)xs.tx_kick_err);
			d->last_q_tx[q] = xs.tx;
		}
		for (w = 0; w < d->c.ncpus; w++) {
			struct ucm_cpumap_producer *prod = atomic_load(&d->rx[q].prod);
			struct ucm_cpumap_enqueue_stats es;

			if (!prod || ucm_cpumap__enqueue_stats(prod, w, &es))
				continue;
			printf("    enqueue %u->%d: %.0f pps, drops %.0f/s, processed %llu drops %llu bulk-avg %.1f\n",
			       ucm_xsk_queue__id(d->rx[q].q), w,
			       (es.processed - d->last_enq[q][w][0]) / dt,
			       (es.drops - d->last_enq[q][w][1]) / dt,
			       (unsigned long long)es.processed, (unsigned long long)es.drops,
			       es.events ? (double)es.processed / es.events : 0);
			d->last_enq[q][w][0] = es.processed;
			d->last_enq[q][w][1] = es.drops;
		}
	}
	for (w = 0; w < d->c.ncpus; w++) {
		struct ucm_cpumap_worker_stats ws;
		struct ucm_tun_stats ts;

		ucm_cpumap__worker_stats(d->map, w, &ws);
		ucm_tun__worker_stats(d->tun, w, &ts);
		printf("  worker %d (cpu %d): %.0f pps, drops %.0f/s, processed %llu drops %llu sched %llu | tun: packets %llu submits %llu non_ip %llu eio %llu ebadfd %llu eagain %llu other %llu\n",
		       w, d->c.cpus[w], (ws.processed - d->last_w[w][0]) / dt,
		       (ws.drops - d->last_w[w][1]) / dt, (unsigned long long)ws.processed,
		       (unsigned long long)ws.drops, (unsigned long long)ws.sched,
		       (unsigned long long)ts.packets, (unsigned long long)ts.submits,
		       (unsigned long long)ts.non_ip, (unsigned long long)ts.err_eio,
		       (unsigned long long)ts.err_ebadfd, (unsigned long long)ts.err_eagain,
		       (unsigned long long)ts.err_other);
		if (coalescing(&d->c))
			printf("    coalesce: super-packets %llu of %.1f on average (2 %llu, 3-4 %llu, 5-8 %llu, 9-16 %llu, 17-32 %llu, 33-64 %llu, 65-128 %llu), refused %llu | hand-overs %llu: ring empty %llu, 64 held %llu\n",
			       (unsigned long long)ts.super,
			       ts.super ? (double)ts.super_segs / ts.super : 0,
			       (unsigned long long)ts.super_hist[0], (unsigned long long)ts.super_hist[1],
			       (unsigned long long)ts.super_hist[2], (unsigned long long)ts.super_hist[3],
			       (unsigned long long)ts.super_hist[4], (unsigned long long)ts.super_hist[5],
			       (unsigned long long)ts.super_hist[6], (unsigned long long)ts.super_refused,
			       (unsigned long long)ws.xmits,
			       (unsigned long long)ws.flush_empty, (unsigned long long)ws.flush_full);
		d->last_w[w][0] = ws.processed;
		d->last_w[w][1] = ws.drops;
		if (d->txq[w]) {
			struct ucm_tun_rev_stats rs;
			struct ucm_txq_stats qs;

			ucm_tun__rev_stats(d->tun, w, &rs);
			ucm_txq__stats(d->txq[w], &qs);
			printf("    back: read %llu (%.0f pps) in %llu reads, no_frame %llu, drops offload %llu too_big %llu non_ip %llu no_neigh %llu, neigh_asks %llu, err %llu | to queue %u: sent %llu full %llu\n",
			       (unsigned long long)rs.packets, (rs.packets - d->last_rev[w]) / dt,
			       (unsigned long long)rs.reads, (unsigned long long)rs.no_frame,
			       (unsigned long long)rs.drop_offload, (unsigned long long)rs.drop_too_big,
			       (unsigned long long)rs.drop_non_ip, (unsigned long long)rs.drop_no_neigh,
			       (unsigned long long)rs.neigh_asks, (unsigned long long)rs.err,
			       d->c.queues[w % d->c.nqueues], (unsigned long long)qs.sent,
			       (unsigned long long)qs.send_full);
			d->last_rev[w] = rs.packets;
		}
	}
	if (d->json) {
		struct json j;

		json_begin(&j, d->json);
		json_num(&j, "time", now);
		json_str(&j, "dev", d->c.dev);
		json_u64(&j, "rx", t.rx);
		json_u64(&j, "rx_bad_desc", t.bad_desc);
		json_u64(&j, "rx_steer_err", t.steer_err);
		if (d->c.reverse) {
			json_u64(&j, "back_read", t.rev_read);
			json_u64(&j, "back_drop_bad", t.rev_drop_bad);
			json_u64(&j, "back_read_err", t.rev_err);
			json_u64(&j, "back_channel_sent", t.txq_sent);
			json_u64(&j, "back_channel_full", t.txq_full);
			json_u64(&j, "tx", t.tx);
			json_u64(&j, "tx_drops", t.tx_drops);
			json_u64(&j, "tx_completed", t.tx_completed);
			json_u64(&j, "tx_comp_direct", t.tx_direct);
			json_u64(&j, "tx_comp_bulks", t.tx_bulks);
		}
		json_u64(&j, "enqueue_processed", t.enq_processed);
		json_u64(&j, "enqueue_drops", t.enq_drops);
		json_u64(&j, "enqueue_events", t.events);
		json_u64(&j, "worker_processed", t.w_processed);
		json_u64(&j, "worker_drops", t.w_drops);
		json_obj(&j, "worker_drop_reasons");
		for (int r = 1; r < UCM_DROP__MAX; r++)
			json_u64(&j, ucm_drop_reason_str(r), t.w_reason[r]);
		json_obj_end(&j);
		json_u64(&j, "tun_packets", t.tun_packets);
		json_u64(&j, "tun_non_ip", t.tun_non_ip);
		json_u64(&j, "tun_err_eio", t.tun_eio);
		json_u64(&j, "tun_err_ebadfd", t.tun_ebadfd);
		json_u64(&j, "tun_err_eagain", t.tun_eagain);
		json_u64(&j, "tun_err_other", t.tun_other);
		json_u64(&j, "tun_super", t.tun_super);
		json_u64(&j, "tun_super_segs", t.tun_super_segs);
		json_arr(&j, "queues");
		for (q = 0; q < d->c.nqueues; q++) {
			struct ucm_cpumap_producer *prod = atomic_load(&d->rx[q].prod);
			struct ucm_xsk_stats xs;
			struct ucm_pool_stats ps;

			ucm_xsk_queue__stats(d->rx[q].q, &xs);
			ucm_pool__get_stats(ucm_xsk_queue__pool(d->rx[q].q), &ps);
			json_obj(&j, NULL);
			json_u64(&j, "queue", ucm_xsk_queue__id(d->rx[q].q));
			json_u64(&j, "rx", xs.rx);
			json_u64(&j, "rx_bad_desc", xs.rx_bad_desc);
			json_u64(&j, "fill", xs.fill);
			json_u64(&j, "kernel_rx_dropped", xs.kernel_rx_dropped);
			json_u64(&j, "kernel_rx_ring_full", xs.kernel_rx_ring_full);
			json_u64(&j, "kernel_rx_fill_ring_empty_descs", xs.kernel_rx_fill_ring_empty_descs);
			json_u64(&j, "kernel_rx_invalid_descs", xs.kernel_rx_invalid_descs);
			json_u64(&j, "pool_alloc_fast", ps.alloc_fast);
			json_u64(&j, "pool_alloc_refill", ps.alloc_refill);
			json_u64(&j, "pool_alloc_slow", ps.alloc_slow);
			json_u64(&j, "pool_recycle_cached", ps.recycle_cached);
			json_u64(&j, "pool_recycle_ring", ps.recycle_ring);
			json_u64(&j, "pool_recycle_ring_full", ps.recycle_ring_full);
			json_u64(&j, "pool_recycle_released", ps.recycle_released);
			json_num(&j, "pool_inflight", ps.inflight);
			json_arr(&j, "enqueue");
			for (w = 0; prod && w < d->c.ncpus; w++) {
				struct ucm_cpumap_enqueue_stats es;

				ucm_cpumap__enqueue_stats(prod, w, &es);
				json_obj(&j, NULL);
				json_u64(&j, "worker", w);
				json_u64(&j, "processed", es.processed);
				json_u64(&j, "drops", es.drops);
				json_u64(&j, "events", es.events);
				json_obj_end(&j);
			}
			json_arr_end(&j);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_arr(&j, "workers");
		for (w = 0; w < d->c.ncpus; w++) {
			struct ucm_cpumap_worker_stats ws;
			struct ucm_tun_stats ts;

			ucm_cpumap__worker_stats(d->map, w, &ws);
			ucm_tun__worker_stats(d->tun, w, &ts);
			json_obj(&j, NULL);
			json_u64(&j, "worker", w);
			json_num(&j, "cpu", d->c.cpus[w]);
			json_u64(&j, "processed", ws.processed);
			json_u64(&j, "drops", ws.drops);
			json_u64(&j, "sched", ws.sched);
			json_u64(&j, "tun_packets", ts.packets);
			json_u64(&j, "tun_submits", ts.submits);
			json_u64(&j, "xmits", ws.xmits);
			json_u64(&j, "flush_empty", ws.flush_empty);
			json_u64(&j, "flush_full", ws.flush_full);
			json_u64(&j, "tun_super", ts.super);
			json_u64(&j, "tun_super_segs", ts.super_segs);
			json_u64(&j, "tun_super_refused", ts.super_refused);
			json_arr(&j, "tun_super_hist");
			for (int b = 0; b < UCM_TUN_SEG_HIST; b++)
				json_u64(&j, NULL, ts.super_hist[b]);
			json_arr_end(&j);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_end(&j);
		fflush(d->json);
	}
	fflush(stdout);
	d->last = t;
	d->last_t = now;
}

/* Frames on the TX path of every queue, posted and not completed. */
static uint64_t tx_pending_all(struct daemon *d)
{
	uint64_t n = 0;

	for (int q = 0; q < d->c.nqueues; q++)
		n += ucm_xsk_queue__tx_pending(d->rx[q].q);
	return n;
}

/* received = delivered + every drop, by reason. */
static bool conservation(struct daemon *d)
{
	struct totals t;
	uint64_t drops;
	bool ok;
	int r;

	gather(d, &t);
	drops = t.bad_desc + t.steer_err + t.enq_drops + t.w_drops;
	ok = t.rx == t.tun_packets + drops;
	printf("conservation: received %llu = delivered %llu + drops %llu (bad_desc %llu, steer %llu, enqueue_full %llu",
	       (unsigned long long)t.rx, (unsigned long long)t.tun_packets,
	       (unsigned long long)drops, (unsigned long long)t.bad_desc,
	       (unsigned long long)t.steer_err, (unsigned long long)t.enq_drops);
	for (r = 1; r < UCM_DROP__MAX; r++)
		if (t.w_reason[r])
			printf(", %s %llu", ucm_drop_reason_str(r),
			       (unsigned long long)t.w_reason[r]);
	printf("): %s\n", ok ? "holds" : "VIOLATED");
	if (d->c.reverse) {
		/* Read from the tun = handed on + dropped there; handed on =
		 * sent on the TX ring + TX drops + left in the channel at the
		 * end (counted here, brought home by the reclaim). */
		uint64_t left = t.txq_sent - t.txq_collected;
		bool back = t.rev_read == t.txq_sent + t.txq_full + t.rev_drop_bad &&
			    t.txq_collected == t.tx + t.tx_drops &&
			    t.tx == t.tx_completed + tx_pending_all(d);

		printf("conservation, way back: read %llu = sent %llu + drops %llu (unsendable or no next hop %llu, channel_full %llu, tx_full %llu) + left in the channel %llu; completed %llu of %llu (%.1f%% straight into the cache): %s\n",
		       (unsigned long long)t.rev_read, (unsigned long long)(t.tx),
		       (unsigned long long)(t.rev_drop_bad + t.txq_full + t.tx_drops),
		       (unsigned long long)t.rev_drop_bad, (unsigned long long)t.txq_full,
		       (unsigned long long)t.tx_drops, (unsigned long long)left,
		       (unsigned long long)t.tx_completed, (unsigned long long)t.tx,
		       t.tx_completed ? 100.0 * t.tx_direct / t.tx_completed : 0,
		       back ? "holds" : "VIOLATED");
		ok &= back;
	}
	return ok;
}

/* ---- start and stop ------------------------------------------------------------- */

static int if_mtu(const char *ifname)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0), mtu = -1;

	if (s < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(s, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(s);
	return mtu;
}

static int if_mac(const char *ifname, uint8_t *mac)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (s < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(s, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
	return err;
}

/* Two-way tap: the tap answers for IFACE on the link, with its address. */
static int tap_take_mac(struct daemon *d)
{
	struct ifreq ifr = {};
	uint8_t mac[6];
	int s, err;

	err = if_mac(d->c.dev, mac);
	if (err)
		return err;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ucm_tun__name(d->tun));
	ifr.ifr_hwaddr.sa_family = 1;	/* ARPHRD_ETHER */
	memcpy(ifr.ifr_hwaddr.sa_data, mac, 6);
	err = ioctl(s, SIOCSIFHWADDR, &ifr) ? -errno : 0;
	close(s);
	if (err)
		fprintf(stderr, "ucpumapd: cannot give %s the address of %s: %s\n",
			ucm_tun__name(d->tun), d->c.dev, strerror(-err));
	return err;
}

/* Two-way: a TX channel per worker to its queue's RX thread (worker w
 * sends on queue w % nqueues), and the tun's read path on each worker. */
static int reverse_setup(struct daemon *d)
{
	struct ucm_tun_l2 l2;
	int w, err;

	err = if_mac(d->c.dev, l2.src);
	if (err) {
		fprintf(stderr, "ucpumapd: no MAC address on %s: %s\n", d->c.dev, strerror(-err));
		return err;
	}
	memcpy(l2.dst, d->c.peer_mac, 6);
	l2.resolve_ifindex = d->c.peer_mac_set || d->c.tap ? 0 : (int)if_nametoindex(d->c.dev);
	for (w = 0; w < d->c.ncpus; w++) {
		struct rx_thread *t = &d->rx[w % d->c.nqueues];

		d->txq[w] = ucm_txq__create(ucm_xsk__umem(d->xsk), 0);
		if (!d->txq[w])
			return -errno;
		err = ucm_tun__set_reverse(d->tun, w, d->txq[w], &l2);
		if (err)
			return err;
		t->txq[t->ntxq++] = d->txq[w];
	}
	return 0;
}

static void stop_all(struct daemon *d, int *status)
{
	int q;

	/* 1. The kernel stops redirecting to us. */
	for (q = 0; q < d->c.nqueues; q++)
		if (d->rx[q].q && d->xdp)
			ucm_xdp__set_xsk(d->xdp, ucm_xsk_queue__id(d->rx[q].q), -1);
	/* 2. RX threads flush their bulk queues and let go of their pools. */
	atomic_store(&stop_rx, 1);
	for (q = 0; q < d->c.nqueues; q++)
		if (d->rx[q].started)
			pthread_join(d->rx[q].thr, NULL);
	if (d->map) {
		/* 3. Workers drain into tun; final counters. */
		ucm_cpumap__stop(d->map);
		if (d->running) {
			print_stats(d, true);
			if (!conservation(d))
				*status = 1;
		}
		ucm_cpumap__destroy(d->map);
	}
	/* 4. The way back's channels: what the workers left in them (lent,
	 * or filled and not collected) goes home. */
	for (q = 0; q < d->c.ncpus; q++) {
		if (!d->txq[q])
			continue;
		ucm_txq__reclaim(d->txq[q]);
		ucm_txq__destroy(d->txq[q]);
		d->txq[q] = NULL;
	}
	/* 5. Program off, tun closed. */
	if (d->xdp) {
		ucm_xdp__detach(d->xdp);
		ucm_xdp__destroy(d->xdp);
	}
	ucm_tun__destroy(d->tun);
	/* 6. Sockets closed: every frame home (fill, RX, TX and completion
	 * rings included), or the count of those missing. */
	if (d->xsk) {
		if (ucm_xsk__close(d->xsk, SHUTDOWN_TIMEOUT_MS)) {
			printf("audit: frames did not come home (see above)\n");
			*status = 1;
		} else {
			printf("audit: every frame came home\n");
		}
	}
	if (d->json)
		fclose(d->json);
}

int main(int argc, char **argv)
{
	struct daemon d = {};
	sigset_t sigs;
	double end;
	int q, err, status = 0;

	ucm_set_print(daemon_print);
	if (parse_args(argc, argv, &d.c))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "ucpumapd: needs root (CAP_NET_ADMIN and CAP_BPF): run it with sudo\n");
		return 1;
	}
	if (!if_nametoindex(d.c.dev)) {
		fprintf(stderr, "ucpumapd: no interface named '%s' (ip link shows the names)\n", d.c.dev);
		return 1;
	}
	if (d.c.reverse && d.c.mtu_auto) {
		/* What the kernel routes into the tun leaves through IFACE:
		 * no larger than IFACE takes. */
		int mtu = if_mtu(d.c.dev);

		if (mtu > 0 && (unsigned long)mtu < d.c.mtu)
			d.c.mtu = mtu;
	}
	if (d.c.stats_json) {
		d.json = fopen(d.c.stats_json, "w");
		if (!d.json) {
			fprintf(stderr, "ucpumapd: cannot write %s: %s\n", d.c.stats_json, strerror(errno));
			return 1;
		}
	}
	/* Signals go to the main thread only: every thread started below
	 * inherits this mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	{
		UCM_OPTS(ucm_xdp_opts, xo, .policy = d.c.steer.policy,
			 .nworkers = d.c.steer.nworkers, .fixed = d.c.steer.fixed,
			 .flags = d.c.steer.flags);

		d.xdp = ucm_xdp__load(&xo);
	}
	if (!d.xdp)
		goto fail;
	ucm_xdp__config(d.xdp, &d.c.steer);
	err = ucm_xdp__attach(d.xdp, if_nametoindex(d.c.dev),
			      (d.c.skb_mode ? UCM_XDP_ATTACH_SKB : 0) |
			      (d.c.replace ? UCM_XDP_ATTACH_REPLACE : 0));
	if (err)
		goto fail;
	{
		UCM_OPTS(ucm_xsk_opts, so, .ifname = d.c.dev, .queues = d.c.queues,
			 .nqueues = d.c.nqueues, .frames_per_queue = d.c.frames,
			 .frame_size = d.c.frame_size,
			 .rx_size = d.c.rx_size, .fill_size = d.c.fill_size,
			 .mode = d.c.xsk_mode,
			 .flags = d.c.busy_poll ? UCM_XSK_F_BUSY_POLL : 0,
			 .umem_flags = d.c.no_direct_bulk ? UCM_UMEM_F_NO_DIRECT_BULK : 0);

		d.xsk = ucm_xsk__open(&so);
	}
	if (!d.xsk)
		goto fail;
	{
		UCM_OPTS(ucm_tun_opts, to, .name = d.c.tun, .nqueues = d.c.ncpus,
			 .flags = (d.c.tap ? UCM_TUN_F_TAP : 0) |
				  (d.c.no_batch ? UCM_TUN_F_NO_BATCH : 0) |
				  (coalescing(&d.c) ? UCM_TUN_F_COALESCE : 0),
			 .mtu = d.c.mtu);

		d.tun = ucm_tun__create(&to);
	}
	if (!d.tun)
		goto fail;
	if (d.c.reverse && d.c.tap && tap_take_mac(&d))
		goto fail;
	if (d.c.reverse && reverse_setup(&d))
		goto fail;
	{
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = d.c.cpus, .ncpus = d.c.ncpus,
			 .qsize = d.c.qsize,
			 .sink = d.c.reverse ? ucm_tun__sink_duplex() : ucm_tun__sink(),
			 .sink_ctx = d.tun,
			 .flags = (d.c.no_recycle ? UCM_CPUMAP_F_NO_RECYCLE : 0) |
				  (d.c.pass ? UCM_CPUMAP_F_INLINE : 0) |
				  /* a coalescing sink sees up to 64 at once */
				  (coalescing(&d.c) ? UCM_CPUMAP_F_HOLD : 0));

		d.map = ucm_cpumap__create(ucm_xsk__umem(d.xsk), &co);
	}
	if (!d.map)
		goto fail;
	for (q = 0; q < d.c.nqueues; q++) {
		struct rx_thread *t = &d.rx[q];

		t->q = ucm_xsk__queue(d.xsk, q);
		t->umem = ucm_xsk__umem(d.xsk);
		t->map = d.map;
		t->steer = &d.c.steer;
		t->cpu = d.c.n_rx_cpus ? d.c.rx_cpus[q % d.c.n_rx_cpus] : -1;
		if (pthread_create(&t->thr, NULL, rx_main, t)) {
			fprintf(stderr, "ucpumapd: cannot start an RX thread\n");
			goto fail;
		}
		t->started = true;
	}
	for (q = 0; q < d.c.nqueues; q++) {
		while (!atomic_load(&d.rx[q].prod) && !d.rx[q].err)
			sleep_sec(0.001);
		if (d.rx[q].err) {
			fprintf(stderr, "ucpumapd: RX thread %d: %s\n", q, strerror(-d.rx[q].err));
			goto fail;
		}
		if (ucm_xdp__set_xsk(d.xdp, ucm_xsk_queue__id(d.rx[q].q),
				     ucm_xsk_queue__fd(d.rx[q].q)))
			goto fail;
	}

	printf("ucpumapd: %s queues", d.c.dev);
	for (q = 0; q < d.c.nqueues; q++)
		printf("%s%u", q ? "," : " ", d.c.queues[q]);
	printf(" (%s XDP, %s) -> ", d.c.skb_mode ? "generic" : "native",
	       ucm_xsk__zerocopy(d.xsk) ? "zero-copy" : "copy");
	if (d.c.pass) {
		printf("no workers (pass: RX threads write to tun)");
	} else {
		printf("%d workers on CPUs", d.c.ncpus);
		for (q = 0; q < d.c.ncpus; q++)
			printf("%s%d", q ? "," : " ", d.c.cpus[q]);
	}
	printf(" -> %s %s; steering %s%s%s%s%s%s\n", d.c.tap ? "tap" : "tun", ucm_tun__name(d.tun),
	       policy_names[d.c.steer.policy],
	       d.c.steer.flags & UCM_STEER_F_SYMMETRIC ? " (symmetric)" : "",
	       d.c.no_recycle ? ", recycling off" : "", d.c.no_batch ? ", no batching" : "",
	       d.c.no_direct_bulk ? ", no direct bulk recycling" : "",
	       coalescing(&d.c) ? ", coalescing" : "");
	fflush(stdout);

	d.running = true;
	d.last_t = now_sec();
	end = d.c.duration > 0 ? now_sec() + d.c.duration : 0;
	for (;;) {
		double next = d.c.interval > 0 ? d.last_t + d.c.interval : now_sec() + 3600;
		double until = end && end < next ? end : next, wait = until - now_sec();
		struct timespec ts;
		int sig;

		if (wait < 0)
			wait = 0;
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - ts.tv_sec) * 1e9);
		sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			break;
		if (sig == SIGUSR1) {
			print_stats(&d, false);
			continue;
		}
		for (q = 0; q < d.c.nqueues; q++) {
			err = atomic_load(&d.rx[q].err);
			if (err) {
				fprintf(stderr, "ucpumapd: RX thread of queue %u stopped: %s\n",
					ucm_xsk_queue__id(d.rx[q].q), strerror(-err));
				status = 1;
				break;
			}
		}
		if (status)
			break;
		if (end && now_sec() >= end)
			break;
		if (d.c.interval > 0 && now_sec() >= next)
			print_stats(&d, false);
	}
	stop_all(&d, &status);
	return status;

fail:
	/* Whatever was set up is taken down; nothing is left attached. */
	status = 1;
	stop_all(&d, &status);
	return status;
}
