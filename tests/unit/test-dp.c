// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_dp's options, without root: every bad combination is refused with
 * EINVAL and a message that names it, before anything is loaded, attached
 * or opened; an unknown interface is ENODEV; the frames a datapath needs
 * follow its rings, workers and way back, and with packets of several
 * frames their chains (xsk/dp_internal.h); the RX thread's poll
 * (ucm_xsk_queue__poll()) refuses a NULL argument. (The running datapath
 * is tested as root by tests/net: test-xsk runs tests/progs/xsk_rx.c on
 * it, and ucpumapd is built on it.)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ucpumap/dp.h"
#include "ucpumap/log.h"
#include "ucpumap/xsk.h"
#include "../../xsk/dp_internal.h"
#include "utest.h"

static char last_msg[512];

static int keep_msg(enum ucm_log_level level, const char *fmt, va_list ap)
{
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	return 0;
}

static int pass_all(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	return UCM_VERDICT_PASS;
}

static int xmit_none(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		     const uint64_t *addrs, uint32_t n)
{
	return (int)n;
}

static const uint32_t two_q[2] = { 0, 1 };
static const struct ucm_sink_ops null_sink = { .sz = sizeof(struct ucm_sink_ops), .xmit = xmit_none };
static const struct ucm_sink_ops keep_sink = { .sz = sizeof(struct ucm_sink_ops), .xmit = xmit_none,
					       .flags = UCM_SINK_F_KEEP };
static const struct ucm_sink_ops no_sz_sink = { .flags = 0 };	/* built without sz */
static const struct ucm_sink_ops no_xmit_sink = { .sz = sizeof(struct ucm_sink_ops) };
static const struct ucm_sink_ops new_flag_sink = { .sz = sizeof(struct ucm_sink_ops),
						   .xmit = xmit_none, .flags = 1u << 15 };

static int wait_never(void *ctx, uint32_t worker, int wake_fd)
{
	return 1;
}

/* A sink that sleeps on its own fds and reads its wake fd. */
static const struct ucm_sink_ops reading_wait_sink = {
	.sz = sizeof(struct ucm_sink_ops), .xmit = xmit_none, .wait = wait_never,
};
static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t zero_mac[6];
static const uint8_t mcast_mac[6] = { 1, 0, 0x5e, 0, 0, 1 };

/* create() with @o fails with @err, and its message holds @words; so
 * does validate(), which refuses what create() would. */
static int refused(const struct ucm_dp_opts *o, int err, const char *words)
{
	struct ucm_dp *dp;
	int v;

	last_msg[0] = 0;
	errno = 0;
	dp = ucm_dp__create(o);
	UT_ASSERT(!dp, "created");
	UT_ASSERT(errno == err, "errno %d (%s), want %d", errno, strerror(errno), err);
	UT_ASSERT(strstr(last_msg, words), "message '%s' does not say '%s'", last_msg, words);
	last_msg[0] = 0;
	v = ucm_dp__validate(o);
	UT_ASSERT(v == -err, "validate: %d (%s), create refused with %d", v, strerror(-v), err);
	UT_ASSERT(strstr(last_msg, words), "validate's message '%s' does not say '%s'", last_msg,
		  words);
	return 0;
}

/* refused(), and ucm_dp__frames_needed() refuses @o too (0). */
static int refused_sized(const struct ucm_dp_opts *o, int err, const char *words)
{
	if (refused(o, err, words))
		return 1;
	UT_ASSERT(!ucm_dp__frames_needed(o), "frames needed where create says '%s'", words);
	return 0;
}

static int test_bad_options(void)
{
	static const uint32_t many[UCM_XSK_MAX_QUEUES + 1];
	static const int far_cpu[1] = { 1000 };
	static const uint32_t q70[1] = { 70 }, q00[2] = { 0, 0 };
	static const int cpus8[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	UCM_OPTS(ucm_dp_opts, o, .ifname = "lo", .tun_name = "ucmt0");
	struct ucm_dp_opts b;

	b = o; b.ifname = NULL;
	if (refused(&b, EINVAL, "interface (ifname) is required"))
		return 1;
	/* No options at all: the same, not a crash. */
	if (refused(NULL, EINVAL, "interface (ifname) is required"))
		return 1;
	UT_ASSERT(ucm_dp__frames_needed(NULL) == 0, "frames needed of no options");
	b = o; b.tun_name = "a-tun-name-of-16";
	if (refused(&b, EINVAL, "longer than 15"))
		return 1;
	/* The kernel's template rule: one %d, no other '%'. */
	b = o; b.tun_name = "ucm%s";
	if (refused(&b, EINVAL, "a template's one %d"))
		return 1;
	b = o; b.tun_name = "ucm%";
	if (refused(&b, EINVAL, "a template's one %d"))
		return 1;
	b = o; b.tun_name = "t%d%d";
	if (refused(&b, EINVAL, "a template's one %d"))
		return 1;
	b = o; b.flags = UCM_DP_F_INLINE | UCM_DP_F_TWO_WAY;
	if (refused(&b, EINVAL, "inline has no workers"))
		return 1;
	/* Options frames_needed() refuses too (0), not create() alone; the
	 * steering flags the library sets itself among them. */
	b = o; b.steer_flags = UCM_STEER_F_LINK_CTRL;
	if (refused_sized(&b, EINVAL, "steer_flags 0x8 unknown: the flags are SYMMETRIC, IPV4 and IPV6"))
		return 1;
	b = o; b.steer_flags = UCM_STEER_F_STAMP;
	if (refused_sized(&b, EINVAL, "steer_flags 0x10 unknown"))
		return 1;
	b = o; b.steer_policy = 99;
	if (refused_sized(&b, EINVAL, "steer_policy 99 unknown: UCM_STEER_FIXED, _RR"))
		return 1;
	b = o; b.xsk_mode = 7;
	if (refused_sized(&b, EINVAL, "xsk_mode 7 unknown"))
		return 1;
	b = o; b.qsize = 32768;
	if (refused_sized(&b, EINVAL, "qsize 32768: a power of two, 16 to 16384"))
		return 1;
	b = o; b.qsize = 8;
	if (refused_sized(&b, EINVAL, "qsize 8: a power of two, 16 to 16384"))
		return 1;
	b = o; b.flags = UCM_DP_F_LANES << 1;
	if (refused(&b, EINVAL, "unknown flags 0x40000"))
		return 1;
	b = o; b.flags = UCM_DP_F_NO_OFFLOAD;
	if (refused(&b, EINVAL, "NO_OFFLOAD is about the way back"))
		return 1;
	b = o; b.flags = UCM_DP_F_NO_TX_CSUM;
	if (refused(&b, EINVAL, "NO_TX_CSUM is about the way back's offloads"))
		return 1;
	b = o; b.flags = UCM_DP_F_NO_TX_CSUM | UCM_DP_F_TWO_WAY | UCM_DP_F_NO_OFFLOAD;
	if (refused(&b, EINVAL, "without UCM_DP_F_NO_OFFLOAD"))
		return 1;
	b = o; b.peer_mac = mac;
	if (refused(&b, EINVAL, "peer_mac"))
		return 1;
	b = o; b.peer_mac = mac; b.flags = UCM_DP_F_TWO_WAY | UCM_DP_F_TAP;
	if (refused(&b, EINVAL, "peer_mac"))
		return 1;
	b = o; b.peer_mac = zero_mac; b.flags = UCM_DP_F_TWO_WAY;
	if (refused(&b, EINVAL, "peer_mac 00:00:00:00:00:00 is not a station's"))
		return 1;
	b = o; b.peer_mac = mcast_mac; b.flags = UCM_DP_F_TWO_WAY;
	if (refused(&b, EINVAL, "peer_mac 01:00:5e:00:00:01 is not a station's"))
		return 1;
	b = o; b.sink = &null_sink; b.flags = UCM_DP_F_COALESCE;
	if (refused(&b, EINVAL, "sink of one's own"))
		return 1;
	b = o; b.sink = &keep_sink;
	if (refused(&b, EINVAL, "keeps frames"))
		return 1;
	b = o; b.sink = &no_sz_sink;
	if (refused(&b, EINVAL, ".sz = sizeof(struct ucm_sink_ops)"))
		return 1;
	/* validate() refuses these too, before anything is attached. */
	b = o; b.sink = &no_xmit_sink;
	if (refused(&b, EINVAL, "a sink needs an xmit callback"))
		return 1;
	b = o; b.sink = &new_flag_sink;
	if (refused(&b, EINVAL, "sink flags 0x8000: unknown to this library"))
		return 1;
	b = o; b.flags = UCM_DP_F_VERDICT_TX;
	if (refused(&b, EINVAL, "it needs a verdict"))
		return 1;
	b = o; b.flags = UCM_DP_F_VERDICT_TX; b.verdict = pass_all; b.queues = two_q; b.nqueues = 2;
	if (refused(&b, EINVAL, "takes one queue"))
		return 1;
	/* A program built against 0.2.0 (its struct ends at flags) with a
	 * callback, on lo, whose MTU needs packets of several frames: its
	 * callbacks were promised one frame. Built against 0.3.0: the MTU's
	 * own refusal (more than 65535 bytes). */
	b = o; b.sz = offsetof(struct ucm_dp_opts, thread_init); b.verdict = pass_all;
	if (refused(&b, ERANGE, "built against libucpumap 0.2.0, whose callbacks"))
		return 1;
	b = o; b.verdict = pass_all;
	if (refused(&b, ERANGE, "could be longer than 65535 bytes: lower it (ip link set dev lo mtu 65513)\n"))
		return 1;
	b = o; b.flags = UCM_DP_F_OWN_XDP | UCM_DP_F_XDP_SKB;
	if (refused(&b, EINVAL, "attach our program"))
		return 1;
	b = o; b.flags = UCM_DP_F_OWN_XDP; b.xsks_map_fd = 0;	/* stdin: no map */
	if (refused(&b, EINVAL, "is not an XSKMAP"))
		return 1;
	b = o; b.prewake = UCM_DP_PREWAKE_AUTO + 1;
	if (refused(&b, EINVAL, "prewake 3"))
		return 1;
	b = o; b.prewake = UCM_DP_PREWAKE_ON; b.sink = &reading_wait_sink;
	if (refused(&b, EINVAL, "the sink reads its wake fd"))
		return 1;
	b = o; b.prewake = UCM_DP_PREWAKE_ON; b.flags = UCM_DP_F_INLINE;
	if (refused(&b, EINVAL, "inline workers never sleep"))
		return 1;
	b = o; b.steer_policy = UCM_STEER_FIXED; b.fixed_worker = 64;
	if (refused(&b, EINVAL, "fixed worker 64"))
		return 1;
	b = o; b.rx_size = 1000;
	if (refused(&b, EINVAL, "rx_size 1000: a power of two, at most 16384"))
		return 1;
	/* A power of two, but more than a ring takes: refused before the
	 * frames are sized for it. */
	b = o; b.rx_size = 32768;
	if (refused(&b, EINVAL, "rx_size 32768: a power of two, at most 16384"))
		return 1;
	b = o; b.frame_size = 3000;
	if (refused(&b, EINVAL, "frame_size 3000: 2048 or 4096"))
		return 1;
	b = o; b.qsize = 3000;
	if (refused(&b, EINVAL, "qsize 3000: a power of two"))
		return 1;
	b = o; b.frames_per_queue = 5000;
	if (refused(&b, EINVAL, "frames_per_queue 5000: a power of two"))
		return 1;
	b = o; b.mtu = UCM_DP_MTU_MAX + 1;
	if (refused(&b, EINVAL, "mtu 9001: the tun's is 68 to 9000"))
		return 1;
	/* Below the kernel's least: refused here, not by the tun's ioctl
	 * once the program is attached. */
	b = o; b.mtu = 50;
	if (refused(&b, EINVAL, "mtu 50: the tun's is 68 to 9000"))
		return 1;
	b = o; b.frames_per_queue = 4096;
	if (refused(&b, EINVAL, "4096 frames per queue cannot cover"))
		return 1;
	/* Two-way with 8 workers on a queue needs 10240: not given, the
	 * frames grow (lo's MTU is then what is refused); given, 8192 is
	 * refused. */
	b = o; b.flags = UCM_DP_F_TWO_WAY; b.cpus = cpus8; b.ncpus = 8;
	if (refused(&b, ERANGE, "is more than a 4096-byte frame holds"))
		return 1;
	b.frames_per_queue = UCM_DP_FRAMES_DEFAULT;
	if (refused(&b, EINVAL, "8192 frames per queue cannot cover the rings, a worker ring and the way back: give at least 16384 (they need 10240; a power of two)"))
		return 1;
	/* lo's MTU (65536) is more than any frame holds. */
	b = o;
	if (refused(&b, ERANGE, "is more than a 4096-byte frame holds (3818"))
		return 1;
	b = o; b.queues = q70; b.nqueues = 1;
	if (refused(&b, EINVAL, "queue 70: the XDP program's socket map holds queues 0-63"))
		return 1;
	b = o; b.queues = q00; b.nqueues = 2;
	if (refused(&b, EINVAL, "queue 0 is listed twice"))
		return 1;
	b = o; b.rx_cpus = far_cpu; b.n_rx_cpus = 1;
	if (refused(&b, EINVAL, "RX CPU 1000 is not online or not in the calling thread's affinity mask, which new threads inherit (") ||
	    refused(&b, EINVAL, "online; taskset -c or a unit's CPUAffinity= sets the mask"))
		return 1;
	b = o; b.queues = many; b.nqueues = UCM_XSK_MAX_QUEUES + 1;
	if (refused(&b, EINVAL, "65 queues, 0 worker CPUs, 0 RX CPUs: at most 64, 64 and 64"))
		return 1;
	b = o; b.nqueues = 2;
	if (refused(&b, EINVAL, "a count without its list: nqueues 2 without queues"))
		return 1;
	b = o; b.ifname = "ucm-no-such-if";
	return refused(&b, ENODEV, "no interface named 'ucm-no-such-if'");
}

/* The sockets' own options, for a caller of ucm_xsk__open(): refused
 * before anything is made, saying why. */
static int test_xsk_bad_options(void)
{
	static const uint32_t dup[2] = { 0, 0 };
	UCM_OPTS(ucm_xsk_opts, o, .ifname = "lo", .nqueues = 2);
	struct ucm_xsk *x;

	last_msg[0] = 0;
	x = ucm_xsk__open(&o);
	UT_ASSERT(!x && errno == EINVAL && strstr(last_msg, "no list of them"),
		  "2 queues, no list: errno %d, '%s'", errno, last_msg);
	o.queues = dup;
	last_msg[0] = 0;
	x = ucm_xsk__open(&o);
	UT_ASSERT(!x && errno == EINVAL && strstr(last_msg, "queue 0 is listed twice"),
		  "queue 0 twice: errno %d, '%s'", errno, last_msg);
	/* Too few frames: the least it names is a power of two, which a
	 * pool's frames must be (fill 8192 + RX 4096: 16384, not 12288). */
	o.nqueues = 1;
	o.queues = NULL;
	o.rx_size = 4096;
	o.fill_size = 8192;
	o.frames_per_queue = 4096;
	last_msg[0] = 0;
	x = ucm_xsk__open(&o);
	UT_ASSERT(!x && errno == EINVAL && strstr(last_msg, "give at least 16384"),
		  "too few frames: errno %d, '%s'", errno, last_msg);
	return 0;
}

/* A caller's bytes past the fields this library knows must be zero. */
static int test_opts_unknown_bytes(void)
{
	struct {
		struct ucm_dp_opts o;
		uint64_t future;
	} big = { .o = { .sz = sizeof(big), .ifname = "lo", .tun_name = "t" },
		  .future = 1 };

	return refused(&big.o, EINVAL, "ucm_dp_opts has non-zero extra bytes");
}

static int test_frames_needed(void)
{
	static const int cpus4[4] = { 0, 1, 2, 3 };
	static const uint32_t q2[2] = { 0, 1 };
	UCM_OPTS(ucm_dp_opts, o, .ifname = "lo", .tun_name = "t", .cpus = cpus4,
		 .ncpus = 1);
	uint32_t n;

	/* Fill (2 x 1024) + RX (1024) + a worker ring (2048). */
	n = ucm_dp__frames_needed(&o);
	UT_ASSERT(n == 5120, "one-way: %u", n);
	/* Two-way, one worker on the queue: + the TX ring + two channel
	 * rings' worth. */
	o.flags = UCM_DP_F_TWO_WAY;
	n = ucm_dp__frames_needed(&o);
	UT_ASSERT(n == 5120 + UCM_XSK_TX_RING + 2 * UCM_TXQ_DEFAULT_SIZE, "two-way: %u", n);
	/* Four workers on two queues: two channels each. */
	o.ncpus = 4;
	o.queues = q2;
	o.nqueues = 2;
	n = ucm_dp__frames_needed(&o);
	UT_ASSERT(n == 5120 + UCM_XSK_TX_RING + 4 * UCM_TXQ_DEFAULT_SIZE,
		  "two-way, 2 workers per queue: %u", n);
	/* Only the verdict sends (one queue): its channels are lent
	 * nothing, so each needs its out ring alone. */
	o.flags = UCM_DP_F_VERDICT_TX;
	o.verdict = pass_all;
	o.queues = q2;
	o.nqueues = 1;
	n = ucm_dp__frames_needed(&o);
	UT_ASSERT(n == 5120 + UCM_XSK_TX_RING + 4 * UCM_TXQ_DEFAULT_SIZE,
		  "verdict TX, 4 workers on a queue: %u", n);
	o.verdict = NULL;
	/* Bigger rings, bigger needs; bad options need nothing (0). */
	o.flags = 0;
	o.rx_size = 4096;
	o.qsize = 8192;
	n = ucm_dp__frames_needed(&o);
	UT_ASSERT(n == 3 * 4096 + 8192, "big rings: %u", n);
	o.rx_size = 1000;
	n = ucm_dp__frames_needed(&o);
	UT_ASSERT(n == 0, "bad options: %u", n);
	return 0;
}

/* Packets of 3 frames (MTU 9000, 4096-byte frames): @o's frames given as
 * @need - 1 are refused naming @need, @need itself taken. */
static int chain_need(const struct ucm_dp_opts *o, uint32_t need, const char *words)
{
	struct dp_cfg c;
	int err;

	UT_ASSERT(!ucm_dp_resolve(o, &c), "options refused");
	c.if_mtu = 9000;
	c.sg = true;
	c.frames_set = true;
	c.frames = need - 1;
	last_msg[0] = 0;
	err = ucm_dp_chain_frames(&c);
	UT_ASSERT(err == -EINVAL, "%u frames taken: %d", need - 1, err);
	UT_ASSERT(strstr(last_msg, words), "message '%s' does not say '%s'", last_msg, words);
	c.frames = need;
	err = ucm_dp_chain_frames(&c);
	UT_ASSERT(!err, "%u frames refused: %d", need, err);
	return 0;
}

/* A worker ring holds packets of several frames, so does each TX
 * channel's out ring (its free ring a frame an entry); max_frags bounds
 * the way in's alone. */
static int test_frames_chains(void)
{
	static const int cpus4[4] = { 0, 1, 2, 3 };
	static const uint32_t q2[2] = { 0, 1 };
	UCM_OPTS(ucm_dp_opts, o, .ifname = "lo", .tun_name = "t", .cpus = cpus4,
		 .ncpus = 1);
	char words[128];
	struct dp_cfg c;

	/* Fill and RX (3072) + a worker ring of three frames an entry. */
	if (chain_need(&o, 3072 + 3 * 2048,
		       "a worker ring of packets of up to 3 frames (lo's MTU 9000): give at least 16384 (they need 9216; a power of two)"))
		return 1;
	/* Two-way: + the TX ring + an out ring of three frames an entry
	 * and a free ring of one. */
	o.flags = UCM_DP_F_TWO_WAY;
	snprintf(words, sizeof(words),
		 "up to 3 frames, TX channels of up to 3 (lo's MTU 9000): give at least 16384 (they need %u", 9216 + UCM_XSK_TX_RING + 4 * UCM_TXQ_DEFAULT_SIZE);
	if (chain_need(&o, 9216 + UCM_XSK_TX_RING + 4 * UCM_TXQ_DEFAULT_SIZE, words))
		return 1;
	/* Two workers on each of two queues: two channels each. */
	o.ncpus = 4;
	o.queues = q2;
	o.nqueues = 2;
	if (chain_need(&o, 9216 + UCM_XSK_TX_RING + 8 * UCM_TXQ_DEFAULT_SIZE, "; a power of two)"))
		return 1;
	/* max_frags 2: the worker ring's packets two frames, the way
	 * back's still three. */
	o.max_frags = 2;
	if (chain_need(&o, 3072 + 2 * 2048 + UCM_XSK_TX_RING + 8 * UCM_TXQ_DEFAULT_SIZE,
		       "up to 2 frames, TX channels of up to 3"))
		return 1;
	/* The verdict's sends, one queue: an out ring each, nothing lent. */
	o.max_frags = 0;
	o.flags = UCM_DP_F_VERDICT_TX;
	o.verdict = pass_all;
	o.nqueues = 1;
	if (chain_need(&o, 9216 + UCM_XSK_TX_RING + 4 * 3 * UCM_TXQ_DEFAULT_SIZE,
		       "TX channels of up to 3"))
		return 1;
	/* An RX ring smaller than a packet's descriptors: refused. */
	UT_ASSERT(!ucm_dp_resolve(&o, &c), "options refused");
	c.if_mtu = 9000;
	c.sg = true;
	c.rx_size = 2;
	last_msg[0] = 0;
	UT_ASSERT(ucm_dp_chain_frames(&c) == -EINVAL, "an RX ring of 2 taken for packets of 3 frames");
	UT_ASSERT(strstr(last_msg, "an RX ring of 2 descriptors cannot hold a packet of 3 frames (lo's MTU 9000): give rx_size 4 at least"),
		  "message '%s'", last_msg);
	/* Not given: the frames grow to the next power of two, said. */
	UT_ASSERT(!ucm_dp_resolve(&o, &c), "options refused");
	c.if_mtu = 9000;
	c.sg = true;
	last_msg[0] = 0;
	UT_ASSERT(!ucm_dp_chain_frames(&c), "the default refused");
	UT_ASSERT(c.frames == 16384, "frames %u", c.frames);
	/* And the RX ring holds as many packets as they are frames. */
	UT_ASSERT(c.rx_size == UCM_DP_RX_RING_CHAIN, "RX ring %u", c.rx_size);
	UT_ASSERT(strstr(last_msg, "16384 frames per queue: an RX ring of 2048 descriptors, a "
			  "worker ring of packets of up to 3 frames, TX channels of up to 3"),
		  "message '%s'", last_msg);
	/* An RX ring given stays as given. */
	o.rx_size = 512;
	UT_ASSERT(!ucm_dp_resolve(&o, &c), "options refused");
	c.if_mtu = 9000;
	c.sg = true;
	UT_ASSERT(!ucm_dp_chain_frames(&c), "the default refused");
	UT_ASSERT(c.rx_size == 512, "RX ring %u, given 512", c.rx_size);
	return 0;
}

/* The equations on totals with drops of packets of several frames, and a
 * packet of three frames sent: they hold for a caller that knows those
 * counters; one built before them (a struct cut before rx_chains) is
 * not told of a violation its struct cannot show. */
static int test_violations_sized(void)
{
	struct ucm_dp_stats t = { .rx = 10, .delivered = 8, .rx_chain_drops = 2,
				  .tx = 1, .tx_chain_more = 2, .tx_completed = 3,
				  .back_read = 1, .back_channel_sent = 1,
				  .back_channel_collected = 1 };
	size_t old = offsetof(struct ucm_dp_stats, rx_chains);

	UT_ASSERT(!ucm_dp_stats__violations(&t, sizeof(t)), "violations %#x on exact totals",
		  ucm_dp_stats__violations(&t, sizeof(t)));
	UT_ASSERT(!ucm_dp_stats__violations(&t, old), "an older caller is told %#x",
		  ucm_dp_stats__violations(&t, old));
	t.delivered = 7;
	UT_ASSERT(ucm_dp_stats__violations(&t, sizeof(t)) == UCM_DP_V_FORWARD, "a lost packet: %#x",
		  ucm_dp_stats__violations(&t, sizeof(t)));
	return 0;
}

/* ucm_dp__check() refuses what it cannot look at; every fault has a
 * name, and past the last one reads "unknown". */
static int test_check_args(void)
{
	struct ucm_dp_health h;
	uint32_t f;

	UT_ASSERT(ucm_dp__check(NULL, &h, sizeof(h)) == -EINVAL, "NULL datapath");
	UT_ASSERT(errno == EINVAL, "errno %d", errno);
	errno = 0;
	UT_ASSERT(ucm_dp__err(NULL, NULL) == -EINVAL && errno == EINVAL,
		  "ucm_dp__err(NULL): errno %d", errno);
	UT_ASSERT(ucm_dp_stats__violations(NULL, 0) == 0, "no totals: no violation");
	UT_ASSERT(!ucm_dp__zerocopy(NULL), "zero-copy without a datapath");
	UT_ASSERT(ucm_xdp__configure(NULL, NULL) == -EINVAL, "configure NULL");
	for (f = 0; f < UCM_DP_FAULT__MAX; f++)
		UT_ASSERT(strcmp(ucm_dp_fault_str(f), "unknown"), "fault %u has no name", f);
	UT_ASSERT(!strcmp(ucm_dp_fault_str(UCM_DP_FAULT__MAX), "unknown"), "past the last: '%s'",
		  ucm_dp_fault_str(UCM_DP_FAULT__MAX));
	UT_ASSERT(!strcmp(ucm_dp_fault_str(UCM_DP_FAULT_TUN_GONE), "tun gone"), "'%s'",
		  ucm_dp_fault_str(UCM_DP_FAULT_TUN_GONE));
	return 0;
}

/* UCM_DP_F_MASK names every flag (a flag left out of it would leave a
 * hole), and every bit outside it is refused as unknown. */
static int test_flags_mask(void)
{
	UCM_OPTS(ucm_dp_opts, o, .ifname = "lo", .tun_name = "t");
	uint32_t bit;

	UT_ASSERT(UCM_DP_F_MASK & UCM_DP_F_NO_TX_CSUM, "mask 0x%x",
		  UCM_DP_F_MASK);
	UT_ASSERT(!(UCM_DP_F_MASK & (UCM_DP_F_MASK + 1)), "a hole in mask 0x%x",
		  UCM_DP_F_MASK);
	for (bit = 1; bit; bit <<= 1) {
		char words[64];

		if (UCM_DP_F_MASK & bit)
			continue;
		o.flags = bit;
		snprintf(words, sizeof(words), "unknown flags 0x%x", bit);
		last_msg[0] = 0;
		UT_ASSERT(!ucm_dp__frames_needed(&o), "flag 0x%x taken", bit);
		UT_ASSERT(strstr(last_msg, words),
			  "message '%s' does not say '%s'", last_msg, words);
	}
	return 0;
}

/* The RX thread's poll refuses a NULL argument before it touches any: the
 * queue and producer here are never read. */
static int test_xsk_poll_args(void)
{
	struct ucm_steer_cfg cfg = { .nworkers = 1 };
	uint64_t never[8] = {};
	struct ucm_xsk_queue *q = (struct ucm_xsk_queue *)never;
	struct ucm_cpumap_producer *prod = (struct ucm_cpumap_producer *)never;
	uint32_t rr = 0;
	int ret;

	errno = 0;
	ret = ucm_xsk_queue__poll(q, prod, NULL, &rr);
	UT_ASSERT(ret == -EINVAL, "NULL cfg: %d", ret);
	UT_ASSERT(errno == EINVAL, "errno %d", errno);
	ret = ucm_xsk_queue__poll(NULL, prod, &cfg, &rr);
	UT_ASSERT(ret == -EINVAL, "NULL queue: %d", ret);
	ret = ucm_xsk_queue__poll(q, NULL, &cfg, &rr);
	UT_ASSERT(ret == -EINVAL, "NULL producer: %d", ret);
	ret = ucm_xsk_queue__poll(q, prod, &cfg, NULL);
	UT_ASSERT(ret == -EINVAL, "NULL rr: %d", ret);
	/* The sleep's extra fd: refused before the queue is touched. */
	ret = ucm_xsk_queue__set_wake_fd(NULL, -1);
	UT_ASSERT(ret == -EINVAL, "set_wake_fd on NULL: %d", ret);
	ret = ucm_xsk_queue__set_wake_fd(q, -2);
	UT_ASSERT(ret == -EINVAL, "set_wake_fd -2: %d", ret);
	/* The sleep: channels said and not given, or no queue. */
	ret = ucm_xsk_queue__sleep(q, NULL, 1, 0);
	UT_ASSERT(ret == -EINVAL, "sleep, 1 channel and none given: %d", ret);
	ret = ucm_xsk_queue__sleep(NULL, NULL, 0, 0);
	UT_ASSERT(ret == -EINVAL, "sleep on NULL: %d", ret);
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_check_args),
	UT_CASE(test_flags_mask),
	UT_CASE(test_xsk_poll_args),
	UT_CASE(test_bad_options),
	UT_CASE(test_violations_sized),
	UT_CASE(test_xsk_bad_options),
	UT_CASE(test_opts_unknown_bytes),
	UT_CASE(test_frames_needed),
	UT_CASE(test_frames_chains),
	{}
};

int main(int argc, char **argv)
{
	ucm_set_print(keep_msg);
	return ut_main(argc, argv, cases);
}
