// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd: the forwarder. NIC queue -> XDP steering program -> XSK socket
 * -> RX thread (owner of the queue's pool) -> cpumap workers -> tun -> the
 * kernel's stack.
 *
 *   ucpumapd --dev IFACE [--tun NAME] [--config FILE] [options]   (--help lists them)
 *
 * The datapath is the library's ucm_dp (dp.h: its start and stop order);
 * the daemon is its options, its statistics and its signals. SIGINT,
 * SIGTERM or --duration stop it: the final counters, the conservation
 * lines and the audit close its output.
 */
#include <errno.h>
#include <stdarg.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/dp.h"
#include "ucpumap/log.h"
#include "daemon.h"
#include "journal.h"

#define xstr(x)	str(x)
#define str(x)	#x
#include "opts.h"
#include "util.h"

/* How long frames still out at the stop may take to come home. */
#define SHUTDOWN_TIMEOUT_MS	1500

/* The symbol map's version (the Makefile's VERSION). The library is
 * linked in from the same tree, so it is the library's too. */
#ifndef UCPUMAPD_VERSION
#error "UCPUMAPD_VERSION: the Makefile passes lib/libucpumap.map's version"
#endif
#define VERSION_LINE	"ucpumapd " UCPUMAPD_VERSION " (libucpumap " UCPUMAPD_VERSION ")"


static const struct opt_enum policies[] = {
	{ "fixed", UCM_STEER_FIXED }, { "round-robin", UCM_STEER_RR },
	{ "l4-hash", UCM_STEER_L4_HASH }, { "l4-sport", UCM_STEER_L4_SPORT },
	{ "l4-dport", UCM_STEER_L4_DPORT }, { NULL }
};
static const struct opt_enum xdp_modes[] = {
	{ "native", 0 }, { "skb", 1 }, { "drv", 0 }, { "generic", 1 }, { NULL }
};
static const struct opt_enum prewakes[] = {
	{ "auto", UCM_DP_PREWAKE_AUTO }, { "on", UCM_DP_PREWAKE_ON },
	{ "off", UCM_DP_PREWAKE_OFF }, { NULL }
};
static const struct opt_enum filters[] = {
	{ "all", 0 }, { "ipv4", UCM_STEER_F_IPV4 }, { "ipv6", UCM_STEER_F_IPV6 }, { NULL }
};

static int verbose;

/* The library's messages: warnings and notices always (what mode the
 * sockets got, a stale program replaced), libbpf's chatter with -v; each
 * with its priority under journald. */
static int daemon_print(enum ucm_log_level level, const char *fmt, va_list ap)
{
	if (level == UCM_LOG_DEBUG && !verbose)
		return 0;
	return out_vprint(out_prio(level), fmt, ap);
}

/* Any number is a candidate queue: whether IFACE has it is checked when
 * the sockets bind. */
static int parse_queues(const struct opt *o, const char *s, void *cfg)
{
	struct cfg *c = cfg;
	int n = parse_index_list(s, c->queues, UCM_XSK_MAX_QUEUES, "--queues");

	if (n < 0)
		return -1;
	c->nqueues = n;
	return 0;
}

/* --version stops the parse where it stands, as --help does: what is
 * required (--dev, --tun) is not asked for. parse_args() prints it. */
static int parse_version(const struct opt *o, const char *arg, void *cfg)
{
	((struct cfg *)cfg)->version = true;
	return -1;
}

/* --status IFACE stops the parse as --version does: a query, no daemon. */
static int parse_status(const struct opt *o, const char *arg, void *cfg)
{
	((struct cfg *)cfg)->status = arg;
	return -1;
}

/* --timestamps and --no-timestamps: .lo is the option's enum out_when,
 * and the last one given counts (the command line's over --config's). */
static int parse_timestamps(const struct opt *o, const char *arg, void *cfg)
{
	((struct cfg *)cfg)->timestamps = (int)o->lo;
	return 0;
}

#define D(name, kind, field, ...) OPT_DEF(name, kind, struct cfg, field, __VA_ARGS__)
static const struct opt d_opts[] = {
	D("dev", OPT_STRING, dev, .lo = 1, .hi = IF_NAMESIZE - 1, .flags = OPT_F_REQUIRED, .metavar = "IFACE",
	  .help = "the interface to receive on"),
	D("tun", OPT_STRING, tun, .lo = 1, .hi = IF_NAMESIZE - 1,
	  .metavar = "NAME", .help = "tun device to create or attach (at most 15 characters; "
	  "default ucm-IFACE)"),
	D("queues", OPT_CUSTOM, queues, .parse = parse_queues, .metavar = "LIST",
	  .help = "RX queues, e.g. 0 or 0-3 (default 0)"),
	D("cpus", OPT_CPUS, cpus, .count = OPT_REF(struct cfg, ncpus), .metavar = "LIST",
	  .help = "worker CPUs, e.g. 1 or 1,3 (default: all but CPU 0, on the device's NUMA node when it has some; or 0)"),
	D("rx-cpus", OPT_CPUS, rx_cpus, .count = OPT_REF(struct cfg, n_rx_cpus),
	  .metavar = "LIST", .help = "pin RX thread i to the i-th CPU of LIST (default: "
	  "unpinned; on a NIC, put each near its queue's interrupt)"),
	D("tap", OPT_FLAG, tap, .help = "a tap device: frames go whole (L2)"),
	D("steer", OPT_ENUM, policy, .vals = policies, .flags = OPT_F_DEFAULT,
	  .bad = "unknown policy '%s'; use fixed, round-robin, l4-hash, l4-sport or l4-dport",
	  .metavar = "POLICY", .help = "fixed, round-robin, l4-hash, l4-sport, l4-dport"),
	D("symmetric", OPT_BIT, steer_flags, .mask = UCM_STEER_F_SYMMETRIC,
	  .help = "l4-hash: both directions of a flow to one worker"),
	D("filter", OPT_ENUM, filter, .vals = filters, .bad = "'%s' is not ipv4, ipv6 or all",
	  .metavar = "WHAT", .help = "what goes to ucpumap: ipv4, ipv6 or all (default); ARP, "
	  "neighbour discovery and the rest stay with the kernel"),
	D("fixed-worker", OPT_UINT, fixed, .hi = UCM_STEER_MAX_WORKERS - 1, .metavar = "N",
	  .seen = OPT_REF(struct cfg, fixed_set),
	  .help = "the worker of --steer fixed (default 0)"),
	D("xdp-mode", OPT_ENUM, skb_mode, .vals = xdp_modes, .flags = OPT_F_DEFAULT,
	  .bad = "'%s' is neither native nor skb", .metavar = "MODE", .help = "native or skb"),
	D("copy", OPT_FLAG, copy, .help = "AF_XDP copy mode (default: zero-copy when the driver can)"),
	D("zero-copy", OPT_FLAG, zero_copy, .help = "AF_XDP zero-copy mode"),
	D("busy-poll", OPT_FLAG, busy_poll, .help = "busy-poll the device: an idle RX thread "
	  "runs its NAPI poll for --spin-us (" xstr(UCM_DP_BUSY_POLL_US) " without), so as "
	  "--poll a CPU of its own each"),
	D("spin-us", OPT_UINT, spin_us, .lo = 0, .hi = UCM_SPIN_US_MAX, .flags = OPT_F_DEFAULT,
	  .seen = OPT_REF(struct cfg, spin_set),
	  .metavar = "US", .help = "an idle RX thread and worker look again this long before "
	  "they sleep (a packet meanwhile costs no wake-up); 0: sleep at once, to save power; "
	  "more: as --poll, a CPU of its own each"),
	D("poll", OPT_FLAG, poll, .help = "RX threads and workers poll while traffic is recent "
	  "and sleep after --spin-us idle (with --poll its default is " xstr(UCM_SPIN_US_MAX)
	  "), the RX threads busy-polling the device: no wake-up per packet, for a CPU of its "
	  "own each (--rx-cpus, --cpus; refused when two would share one or they would take "
	  "every CPU)"),
	D("prewake", OPT_ENUM, prewake, .vals = prewakes, .flags = OPT_F_DEFAULT,
	  .bad = "'%s' is not auto, on or off", .metavar = "WHEN",
	  .help = "an idle worker also wakes at its queues' arrivals, with the RX thread and not "
	  "after it: on, off, or auto (on with one worker, one-way)"),
	D("replace", OPT_FLAG, replace, .help = "replace another XDP program already on IFACE"),
	D("frames", OPT_POW2, frames, .lo = 256, .hi = 1u << 18, .flags = OPT_F_DEFAULT,
	  .seen = OPT_REF(struct cfg, frames_set), .metavar = "N",
	  .help = "frames per queue, power of two (not given: more where packets take "
		  "several frames)"),
	D("frame-size", OPT_POW2, frame_size, .lo = 2048, .hi = 4096, .flags = OPT_F_DEFAULT,
	  .metavar = "N", .help = "2048 or 4096 bytes"),
	D("rx-size", OPT_POW2, rx_size, .lo = 64, .hi = 16384, .flags = OPT_F_DEFAULT,
	  .seen = OPT_REF(struct cfg, rx_size_set), .metavar = "N",
	  .help = "RX ring size, power of two; the fill ring twice (a jumbo MTU without --frames: 2048)"),
	D("qsize", OPT_POW2, qsize, .lo = UCM_CPUMAP_QSIZE_MIN, .hi = UCM_CPUMAP_QSIZE_MAX,
	  .flags = OPT_F_DEFAULT, .metavar = "N", .help = "worker ring size, power of two"),
	D("max-frags", OPT_UINT, max_frags, .lo = 1, .hi = UCM_XSK_MAX_FRAGS,
	  .flags = OPT_F_DEFAULT, .metavar = "N",
	  .help = "packets of several frames (IFACE's MTU more than a frame holds): at most N "
	  "frames each on the way in, longer ones dropped (chain); up to the kernel's "
	  "limit"),
	D("mtu", OPT_UINT, mtu, .lo = 68, .hi = UCM_DP_MTU_MAX, .metavar = "N",
	  .help = "tun MTU, at most " xstr(UCM_DP_MTU_MAX) " (default: what a frame holds, "
	  "or IFACE's MTU when more; two-way: at most IFACE's MTU, a larger N refused)"),
	D("no-recycle", OPT_FLAG, no_recycle, .help = "workers release frames to the backing stack"),
	D("no-batch", OPT_FLAG, no_batch, .help = "one write() per packet into tun"),
	D("no-coalesce", OPT_FLAG, no_coalesce, .help = "each packet its own write into tun "
	  "(default: a flow's UDP datagrams or TCP segments go as one GSO super-packet, our GRO)"),
	D("no-hold", OPT_FLAG, no_hold, .help = "with --no-coalesce: workers hand each batch of "
	  "up to 8 to the tun (default: they hold up to 64 for one submission)"),
	D("no-offload", OPT_FLAG, no_offload, .help = "two-way: the tun takes no offloads "
	  "(default: TSO/USO super-packets, cut into segments by the way back)"),
	D("no-tx-csum", OPT_FLAG, no_tx_csum, .help = "two-way: the way back computes every "
	  "checksum (default: left to the kernel or the device where AF_XDP takes TX metadata)"),
	D("no-direct-bulk", OPT_FLAG, no_direct_bulk,
	  .help = "bulk returns never use the owner's cache"),
	D("no-latency", OPT_FLAG, no_latency, .help = "no latency histograms (arrivals and "
	  "bulks go unstamped; their cost, for comparison)"),
	D("no-fair-share", OPT_FLAG, no_fair_share, .help = "several queues: a queue that "
	  "floods a worker may fill its ring for all (default: over its share of a ring three "
	  "quarters full, its bulks are refused; the kernel's cpumap has no share)"),
	D("lanes", OPT_FLAG, lanes, .help = "several queues: each RX thread flushes into a "
	  "ring of its own in every worker, taken in turn (default: one ring a worker, shared "
	  "by the RX threads, with the fair share)"),
	D("pass", OPT_FLAG, pass, .help = "no workers: each RX thread writes to tun itself "
	  "(the kernel's XDP_PASS, for comparison)"),
	D("two-way", OPT_FLAG, two_way, .help = "what the kernel routes into the tun leaves "
	  "through IFACE too, to the next hop from the kernel's tables; with --tap, the tap "
	  "takes IFACE's MAC, ARP and neighbour discovery (give it IFACE's addresses)"),
	D("peer-mac", OPT_MAC, peer_mac, .seen = OPT_REF(struct cfg, peer_mac_set),
	  .metavar = "MAC", .help = "two-way, to this next hop (e.g. the gateway's MAC)"),
	D("interval", OPT_SECONDS, interval, .flags = OPT_F_DEFAULT | OPT_F_ZERO_OFF,
	  .dlo = INTERVAL_MIN, .metavar = "SEC", .help = "statistics every SEC seconds (0: none)"),
	D("extended", OPT_FLAG, extended, .help = "after each statistics line, one per queue "
	  "and per worker"),
	D("stats-json", OPT_STRING, stats_json, .lo = 1, .metavar = "FILE",
	  .help = "the statistics as JSON lines too"),
	D("metrics-listen", OPT_CUSTOM, metrics, .parse = metrics_parse_listen,
	  .metavar = "ADDR:PORT", .help = "serve GET /metrics (Prometheus) on ADDR:PORT; "
	  "PORT or :PORT alone: on 127.0.0.1"),
	D("duration", OPT_SECONDS, duration, .metavar = "SEC",
	  .help = "stop after SEC seconds (0, the default: run until signalled)"),
	D("user", OPT_STRING, user, .lo = 1, .metavar = "NAME", .help = "after set-up, run as user NAME "
	  "(and its group, no supplementary groups), with no capabilities"),
	D("tun-any-owner", OPT_FLAG, tun_any_owner, .help = "attach to an existing tun or tap "
	  "even when another user or group owns it"),
	D("keep-tun", OPT_FLAG, keep_tun, .help = "make the tun persistent: it stays at the "
	  "exit with its addresses and routes, and takes no traffic until the next start"),
	D("no-seccomp", OPT_FLAG, no_seccomp, .help = "no seccomp allow-list while running"),
	D("verbose", OPT_COUNT, verbose, .short_opt = 'v',
	  .help = "the library's debug messages too (libbpf's among them)"),
	D("version", OPT_CUSTOM, version, .parse = parse_version,
	  .flags = OPT_F_NO_FILE | OPT_F_STOPS,
	  .help = "print the version and exit"),
	D("status", OPT_CUSTOM, status, .parse = parse_status, .metavar = "IFACE",
	  .flags = OPT_F_NO_FILE | OPT_F_STOPS,
	  .help = "print the state and counters of the instance serving IFACE (as JSON), and "
	  "exit: 0, or 1 when none does"),
	D("timestamps", OPT_CUSTOM, timestamps, .parse = parse_timestamps, .lo = OUT_TS_YES,
	  .help = "each line of output starts with the time, UTC with milliseconds: the "
	  "default, which " OUT_TS_ENV "=no in the environment turns off (under journald, "
	  "which has its own: a priority, <3> error to <7> debug, instead)"),
	D("no-timestamps", OPT_CUSTOM, timestamps, .parse = parse_timestamps, .lo = OUT_TS_NO,
	  .help = "each line as written, without the time"),
	D("check", OPT_FLAG, check, .flags = OPT_F_NO_FILE,
	  .help = "check the options, the interface (up), its queues and MTU, the CPUs, "
	  "the tun, --user and --metrics-listen's port, attaching nothing: a line each, "
	  "exit 0 when all are good, else the first failure's status"),
	D("config", OPT_STRING, config, .lo = 1, .metavar = "FILE", .help = "options from FILE, one a "
	  "line (\"queues 0-3\", a flag alone, '#' comments), read first: the command "
	  "line's override them; -FILE: the same, and no file is none"),
	{}
};
#undef D

static const struct opts_cmd d_cmd = {
	.name = "ucpumapd",
	.usage = "ucpumapd --dev IFACE [--tun NAME] [--config FILE] [options]",
	.doc = "Receives IPv4/IPv6 on IFACE's queues with AF_XDP, spreads it over worker\n"
	       "threads (one per CPU) and hands it to the kernel through the tun device NAME.\n",
	.tail = "SIGINT/SIGTERM stop it cleanly; SIGUSR1 prints the statistics now; SIGHUP\n"
		"reopens --stats-json's file.\n",
	.opts = d_opts,
	.config_opt = "config",
};

/* The library's options for what the flags say. */
static void dp_opts(const struct cfg *c, struct ucm_dp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->ifname = c->dev;
	o->tun_name = c->tun;
	o->queues = c->queues;
	o->nqueues = c->nqueues;
	o->cpus = c->pass ? NULL : c->cpus;
	o->ncpus = c->pass ? 0 : c->ncpus;
	o->rx_cpus = c->rx_cpus;
	o->n_rx_cpus = c->n_rx_cpus;
	o->steer_policy = c->policy;
	o->steer_flags = c->steer_flags;
	o->fixed_worker = c->fixed;
	o->xsk_mode = c->copy ? UCM_XSK_COPY : c->zero_copy ? UCM_XSK_ZEROCOPY : UCM_XSK_AUTO;
	o->frames_per_queue = c->frames_set ? c->frames : 0;
	o->frame_size = c->frame_size;
	o->rx_size = c->rx_size_set ? c->rx_size : 0;
	o->qsize = c->qsize;
	o->mtu = c->mtu;
	o->max_frags = c->max_frags;
	o->spin_us = c->poll && !c->spin_set ? UCM_SPIN_US_MAX : c->spin_us;
	o->prewake = c->prewake;
	o->peer_mac = c->peer_mac_set ? c->peer_mac : NULL;
	o->flags = (c->tap ? UCM_DP_F_TAP : 0) | (c->two_way ? UCM_DP_F_TWO_WAY : 0) |
		   (c->pass ? UCM_DP_F_INLINE : 0) |
		   (!c->no_coalesce ? UCM_DP_F_COALESCE : 0) |
		   (c->no_recycle ? UCM_DP_F_NO_RECYCLE : 0) |
		   (c->no_batch ? UCM_DP_F_NO_BATCH : 0) |
		   (c->no_direct_bulk ? UCM_DP_F_NO_DIRECT_BULK : 0) |
		   (c->busy_poll || c->poll ? UCM_DP_F_BUSY_POLL : 0) |
		   (c->skb_mode ? UCM_DP_F_XDP_SKB : 0) |
		   (c->replace ? UCM_DP_F_REPLACE : 0) |
		   (c->no_latency ? UCM_DP_F_NO_LATENCY : 0) |
		   (c->no_hold ? UCM_DP_F_NO_HOLD : 0) |
		   (c->no_offload ? UCM_DP_F_NO_OFFLOAD : 0) |
		   (c->no_tx_csum ? UCM_DP_F_NO_TX_CSUM : 0) |
		   (c->no_fair_share ? UCM_DP_F_NO_FAIR_SHARE : 0) |
		   (c->lanes ? UCM_DP_F_LANES : 0);
}

/* What depends on more than one option. */
static int check_args(struct cfg *c)
{
	int wk[UCM_CPUMAP_MAX_WORKERS] = { 0 };
	struct ucm_dp_opts o;
	unsigned long need, p2;
	int n;

	/* An altname names the device to the kernel's calls, not in
	 * /sys/class/net, which the library and the hints read. */
	if (c->dev && if_primary_name(c->dev, c->dev_name) != c->dev &&
	    strcmp(c->dev, c->dev_name)) {
		fprintf(stderr, "ucpumapd: --dev %s is an altname of %s: serving %s\n", c->dev,
			c->dev_name, c->dev_name);
		c->dev = c->dev_name;
	}
	/* The owner check and the one-instance lock read the tun's name. */
	if (c->tun && !strchr(c->tun, '%') && if_primary_name(c->tun, c->tun_name) != c->tun &&
	    strcmp(c->tun, c->tun_name)) {
		fprintf(stderr, "ucpumapd: --tun %s is an altname of %s: serving %s\n", c->tun,
			c->tun_name, c->tun_name);
		c->tun = c->tun_name;
	}
	if (args_exclusive(c))
		return -1;
	if (c->pass)
		n = c->nqueues;		/* the RX threads are the workers */
	else if (c->ncpus)
		n = c->ncpus;
	else	/* the library's default, near the device (and said by it) */
		n = ucm_dp__default_cpus(c->dev, wk, UCM_CPUMAP_MAX_WORKERS);
	/* A spin is polling for a while, and so is busy polling's look
	 * (UCM_DP_BUSY_POLL_US without a spin): the same placement. */
	if ((c->poll || c->spin_us || c->busy_poll) &&
	    (c->poll_placed = poll_check(c, c->ncpus ? c->cpus : wk, n) ? -1 : 1) < 0)
		return -1;
	/* Placed on the defaults: those, not the library's pick from a mask
	 * poll_confine() narrows. */
	if (c->poll_placed > 0 && !c->ncpus && !c->pass) {
		memcpy(c->cpus, wk, n * sizeof(*wk));
		c->ncpus = n;
	}
	if (c->poll || c->busy_poll)
		poll_napi_hint(c, c->poll && !c->spin_set ? UCM_SPIN_US_MAX :
				  c->spin_us ? c->spin_us : UCM_DP_BUSY_POLL_US);
	if (c->fixed >= (unsigned long)n) {
		fprintf(stderr, "ucpumapd: --fixed-worker %lu: there are only %d workers (%s)\n",
			c->fixed, n, c->pass ? "with --pass, one a queue: --queues" : "--cpus");
		return -1;
	}
	rx_cpus_said(c);
	/* Frames must cover the fill and RX rings, a worker ring, and two-way
	 * what each queue lends its workers' channels and keeps on its TX
	 * ring. */
	dp_opts(c, &o);
	need = ucm_dp__frames_needed(&o);
	if (!need) {	/* the library refused the options, and said why */
		c->lib_refused = true;
		return -1;
	}
	if (c->frames >= need || !c->frames_set)	/* not given: the library's */
		return 0;
	for (p2 = 1; p2 < need; p2 <<= 1)
		;
	fprintf(stderr, "--frames %lu cannot cover the fill ring (%lu), the RX ring (%lu), a worker ring (%lu)%s: give at least %lu (they need %lu; a power of two)\n",
		c->frames, 2 * c->rx_size, c->rx_size, c->qsize,
		c->two_way ? " and the way back (TX ring and lent frames)" : "", p2, need);
	return -1;
}

/* The tun the unit always named: ucm-IFACE, when that fits. */
static int default_tun(struct cfg *c)
{
	static char name[IF_NAMESIZE];

	if (c->tun)
		return 0;
	if (strlen("ucm-") + strlen(c->dev) > IF_NAMESIZE - 1) {
		fprintf(stderr, "ucpumapd: ucm-%s would be longer than %d characters: give --tun NAME\n",
			c->dev, IF_NAMESIZE - 1);
		return -1;
	}
	snprintf(name, sizeof(name), "ucm-%s", c->dev);
	c->tun = name;
	return 0;
}

/* Return: 0, 1 after --help or --version, -1 after a message (exit 2),
 * -2 when the file of --config cannot be read (exit 78), or -3 with
 * --check when options conflict (said; each option was taken). */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->policy = UCM_STEER_L4_HASH;
	c->frames = UCM_DP_FRAMES_DEFAULT;
	c->frame_size = 4096;
	c->rx_size = UCM_DP_RX_RING_DEFAULT;
	c->qsize = UCM_CPUMAP_QSIZE_DEFAULT;
	c->max_frags = UCM_XSK_MAX_FRAGS;
	c->spin_us = UCM_DP_SPIN_US_DEFAULT;
	c->prewake = UCM_DP_PREWAKE_AUTO;
	c->interval = 1;
	c->nqueues = 1;
	rc = opts_parse(&d_cmd, c, argc, argv);
	if (c->status)
		return 1;	/* main() asks */
	if (c->version) {
		printf("%s\n", VERSION_LINE);
		return 1;
	}
	if (rc)
		return rc == OPTS_HELP ? 1 : rc == OPTS_FILE_ERR ? -2 : -1;
	verbose = c->verbose;
	c->steer_flags |= c->filter;
	if (default_tun(c))
		return -1;
	if (check_args(c))	/* --check goes on: it lists every problem */
		return c->check ? -3 : -1;
	return 0;
}

/* ---- start and stop ------------------------------------------------------------- */

static void print_banner(struct daemon *d)
{
	const struct cfg *c = &d->c;
	uint32_t i;

	printf("%s, pid %d\n", VERSION_LINE, (int)getpid());
	printf("ucpumapd: %s queues", c->dev);
	for (i = 0; i < ucm_dp__nqueues(d->dp); i++)
		printf("%s%u", i ? "," : " ", ucm_dp__queue_id(d->dp, i));
	printf(" (%s XDP, %s) -> ", c->skb_mode ? "generic" : "native",
	       ucm_dp__zerocopy(d->dp) ? "zero-copy" : "copy");
	if (c->pass) {
		printf("no workers (pass: RX threads write to tun)");
	} else {
		printf("%u workers on CPUs", ucm_dp__nworkers(d->dp));
		for (i = 0; i < ucm_dp__nworkers(d->dp); i++)
			printf("%s%d", i ? "," : " ", ucm_dp__worker_cpu(d->dp, i));
	}
	printf(" -> %s %s; steering %s%s%s%s%s%s%s%s%s%s\n", c->tap ? "tap" : "tun",
	       ucm_dp__tun_name(d->dp), policies[c->policy].name,
	       c->steer_flags & UCM_STEER_F_SYMMETRIC ? " (symmetric)" : "",
	       c->no_recycle ? ", recycling off" : "", c->no_batch ? ", no batching" : "",
	       c->no_direct_bulk ? ", no direct bulk recycling" : "",
	       !c->no_coalesce ? ", coalescing" : "", c->no_hold ? ", no hold" : "",
	       c->busy_poll || c->poll ? ", busy-poll" : "",
	       ucm_dp__prewake(d->dp) ? ", pre-wake" : "",
	       c->poll ? ", polling" : "");
	/* Which file the options came from: a unit's optional one (the '-')
	 * that is not where the operator put it is otherwise silent. */
	if (c->config_absent)
		printf("ucpumapd: options: no %s (optional): the command line's alone\n",
		       c->config + 1);
	else if (c->config)
		printf("ucpumapd: options: %s, then the command line's\n",
		       c->config + (c->config[0] == '-'));
	fflush(stdout);
}

/* The exit status of each fault (the man page lists them). */
static const int fault_exit[UCM_DP_FAULT__MAX] = {
	[UCM_DP_FAULT_IFACE_GONE] = EXIT_IFACE_GONE,
	[UCM_DP_FAULT_TUN_GONE] = EXIT_TUN_GONE,
	[UCM_DP_FAULT_XSK] = EXIT_XSK,
	[UCM_DP_FAULT_RX_THREAD] = EXIT_THREAD,
	[UCM_DP_FAULT_BACK] = EXIT_BACK,
	[UCM_DP_FAULT_WORKER_STALLED] = EXIT_STALLED,
	[UCM_DP_FAULT_RX_STALLED] = EXIT_STALLED,
};

/* A fault stops the daemon (the library said what it was). Return: its
 * exit status, or 0 while there is none. */
static int check_faults(struct daemon *d)
{
	struct ucm_dp_health h;
	int r = ucm_dp__check(d->dp, &h, sizeof(h));

	if (r >= 0)	/* for /metrics and --status (daemon.h: links) */
		__atomic_store_n(&d->links, h.links | LINKS_SEEN, __ATOMIC_RELAXED);
	if (r != 1) {
		svc_tick(d);	/* the watchdog is fed only while all is well */
		return 0;
	}
	fprintf(stderr, "ucpumapd: stopping: %s (exit %d)\n", ucm_dp_fault_str(h.fault),
		fault_exit[h.fault]);
	svc_stopping(ucm_dp_fault_str(h.fault));
	return fault_exit[h.fault];
}

/* Statistics every interval until a signal, the duration, or a fault.
 * Return: the exit status so far. */
static int serve(struct daemon *d, const sigset_t *sigs)
{
	double end = d->c.duration > 0 ? now_sec() + d->c.duration : 0;
	int status;

	/* The links as they are before anybody is answered: a --status
	 * right after READY=1 reads them, not the 0 of "not looked yet". */
	status = check_faults(d);
	if (status)
		return status;
	for (;;) {
		double next = d->c.interval > 0 ? d->last_t + d->c.interval : now_sec() + 3600;
		double until = next, wait;
		struct timespec ts;
		int sig;

		if (end && end < until)
			until = end;
		wait = until - now_sec();
		if (wait > CHECK_SEC)
			wait = CHECK_SEC;
		if (wait < 0)
			wait = 0;
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - ts.tv_sec) * 1e9);
		sig = sigtimedwait(sigs, NULL, &ts);
		ctl_serve(d);
		if (sig == SIGINT || sig == SIGTERM) {
			svc_stopping(sig == SIGINT ? "SIGINT" : "SIGTERM");
			return 0;
		}
		/* Then the checks all the same: signals as often as
		 * CHECK_SEC must not starve them (nor the watchdog). */
		if (sig == SIGUSR1)
			print_stats(d, false);
		else if (sig == SIGHUP)
			priv_reopen(d);
		status = check_faults(d);
		if (status)
			return status;
		if (end && now_sec() >= end) {
			svc_stopping("--duration reached");
			return 0;
		}
		if (sig != SIGUSR1 && d->c.interval > 0 && now_sec() >= next)
			print_stats(d, false);
	}
}

/* On each thread the datapath starts: an RX thread is recorded (its CPU
 * time), a resolver kept off the polling CPUs (ucm_dp__create() starts
 * it, before poll_confine() narrows the mask it copies), then every
 * thread drops its privileges. */
static void daemon_thread(void *ctx, uint32_t kind, uint32_t idx)
{
	struct daemon *d = ctx;

	if (kind == UCM_DP_THREAD_RX)
		rx_thread_seen(ctx, idx);
	if (kind == UCM_DP_THREAD_RESOLVER && d->c.poll_placed > 0 &&
	    sched_setaffinity(0, sizeof(d->c.poll_free), &d->c.poll_free))
		out_warn("ucpumapd: cannot keep next-hop resolver %u off the polling CPUs: %s\n",
			 idx, strerror(errno));
	priv_thread(ctx, kind, idx);
}

/* Drain, the final counters and the closing lines (when it ran). */
static int stop(struct daemon *d, int status)
{
	struct ucm_dp_stats t;
	int err;

	d->stop_t = now_sec();
	/* No more answers: an instance started meanwhile makes its own. */
	ctl__close(d->ctl);
	d->ctl = NULL;
	metrics__stop(d->metrics);
	ucm_dp__stats(d->dp, &t, sizeof(t));
	if (t.state & UCM_DP_S_RUNNING)
		stats_stop(d);	/* the busy shares end here */
	d->rx_joined = true;
	err = ucm_dp__stop(d->dp, SHUTDOWN_TIMEOUT_MS);
	if (t.state & UCM_DP_S_RUNNING) {
		print_stats(d, true);
		print_verdict(d);
		ucm_dp__stats(d->dp, &t, sizeof(t));
		printf(t.state & UCM_DP_S_FRAMES_HOME ? "audit: every frame came home\n" :
		       "audit: frames did not come home (see above)\n");
	}
	ucm_dp__destroy(d->dp);
	/* A fault's status stands (the audit line says what is missing:
	 * a zero-copy driver may free the frames of a device that went). */
	return status ? status : err ? EXIT_UNCLEAN : 0;
}

/* From a created datapath to a running one: the queues left out said,
 * the tun kept, the datapath started, the status socket (made before the
 * privileges drop), the privileges dropped, the metrics served, the
 * seccomp filter on. Nonzero: a step failed, said. */
static int start_run(struct daemon *d)
{
	bool keep = d->c.keep_tun || d->priv.tun_kept;

	setup_warn(d);
	if (keep && tun_keep(d, ucm_dp__tun_name(d->dp)))
		return -1;
	if (ucm_dp__start(d->dp))
		goto err_unkeep;
	stats_start(d);	/* a later step's failure closes over its seconds */
	ctl__open(d);
	if (priv_drop(d) || metrics__start(d->metrics, d) || priv_confine(d))
		goto err_unkeep;
	stats_pass_check(d);
	return 0;

err_unkeep:
	/* A tun this start made stays no more than it would have. */
	if (keep)
		tun_unkeep(d, ucm_dp__tun_name(d->dp));
	return -1;
}

int main(int argc, char **argv)
{
	struct daemon d = {};
	struct ucm_dp_opts o;
	sigset_t sigs;
	int status, err;
	bool started = false;

	/* An operator's SIGUSR1 or a log rotation's SIGHUP while it starts
	 * must not end it (their default): held until the loop takes them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	/* A reader of stdout gone (--status | head) costs a write's EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	out_init();	/* under journald: priorities, the parse's messages too */
	ucm_set_print(daemon_print);
	status = parse_args(argc, argv, &d.c);
	d.c.config_absent = d.c.config && d.c.config[0] == '-' && access(d.c.config + 1, F_OK);
	if (d.c.status)
		return ctl_status(d.c.status);
	if (status && status != -3)
		return status > 0 ? 0 : status == -2 ? EXIT_CONFIG : EXIT_USAGE;
	out_timestamps(d.c.timestamps);	/* off journald: times, unless told not */
	if (d.c.check) {
		dp_opts(&d.c, &o);
		return check_run(&d, &o, status ? EXIT_USAGE : 0);
	}
	status = priv_check(&d);	/* root, or the capabilities it names */
	if (status)
		return status;
	if (!if_nametoindex(d.c.dev)) {
		fprintf(stderr, "ucpumapd: no interface named '%s' (ip link shows the names)\n", d.c.dev);
		return EXIT_CONFIG;
	}
	status = priv_prepare(&d);	/* files, and what the set-up needs */
	if (status) {
		tun_unlock(&d);
		return status;
	}
	/* Signals go to this thread: sigtimedwait() takes them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	dp_opts(&d.c, &o);
	o.thread_init = daemon_thread;	/* each thread drops its own */
	o.thread_init_ctx = &d;
	o.tun_owner = d.priv.uid;	/* --user's may attach, no other */
	d.dp = ucm_dp__create(&o);	/* a failure takes down what it set up */
	err = d.dp ? 0 : errno;
	if (d.dp && d.json && json_is_file(&d) && ftruncate(fileno(d.json), 0))
		out_warn("ucpumapd: cannot empty %s: %s\n", d.c.stats_json, strerror(errno));
	if (!d.dp) {
		status = setup_exit(err);
	} else if (poll_confine(&d.c)) {	/* the datapath's CPUs checked */
		status = stop(&d, EXIT_SETUP);
	} else if ((err = metrics__open(&d.metrics, &d.c.metrics))) {	/* the interface ours */
		status = stop(&d, setup_exit(err));
	} else if (start_run(&d)) {
		status = stop(&d, EXIT_SETUP);
	} else {
		print_banner(&d);
		svc_ready(&d);
		status = stop(&d, serve(&d, &sigs));
		started = true;
	}
	/* The reasons above may all be the library's warnings (<4>): one
	 * error line, so that journalctl -p err shows the failed start. */
	if (!started && status)
		fprintf(stderr, "ucpumapd: not started (exit %d): the reason is above\n", status);
	if (d.json)
		json_close(&d);
	metrics__close(d.metrics);
	ctl__close(d.ctl);
	tun_unlock(&d);
	out_finish();	/* the lines a stalled reader left out, said */
	return status;
}
