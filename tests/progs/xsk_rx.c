// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end up to the workers: XDP steering program -> XSK socket -> RX
 * thread -> cpumap -> a recording sink, on a real interface (a veth end in
 * a namespace; tests/net/test-xsk.sh sets it up and sends the traffic).
 *
 *   xsk_rx IFNAME COUNT [skb|app|own|fault|own-fault|own-start-fault|busy-poll|
 *                        idle-stop|drain SENT_FILE|drain-long SENT_FILE]
 *
 * own: the application's XDP program and XSKMAP (UCM_DP_F_OWN_XDP); the
 * checks add that the program is still there when the datapath stopped.
 * app: the application picks the workers (a steering callback: flow f to
 * worker f % 2) and passes only the test's datagrams, marked (a verdict
 * callback); the checks add that both held for every packet.
 *
 * A ucm_dp with a sink of the test's own. Prints "READY" once attached,
 * then waits for COUNT UDP datagrams carrying (flow, seq) to reach the
 * sink, stops the datapath (socket out of the XSK map, RX thread stopped,
 * cpumap drained, program detached, sockets closed with the kernel's
 * frames reclaimed) and prints one PASS/FAIL line per check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <stddef.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/dp.h"
#include "ucpumap/log.h"
#include "ucpumap/ring.h"
#include "engine/cpumap_internal.h"
#include "utest.h"

#define MAX_FLOWS	64
#define MAX_SEQ		65536
#define NWORKERS	2

static uint8_t seen[MAX_FLOWS][MAX_SEQ];
static int flow_worker[MAX_FLOWS];
static atomic_ulong delivered, bad_payload, dups, flow_split, unmarked;
static bool app_mode;	/* the application's steering and verdict */
static bool own_mode;	/* the application's XDP program and XSKMAP */
/* fault mode: after the traffic, the RX thread's next poll fails (the
 * library's debug switch, xsk/queue.c): ucm_dp__check() must name it within
 * a second, and the stop must still account for every frame. own-fault:
 * the same with own's XSKMAP, where the queue's socket must be gone once
 * the thread gave up (its traffic to the kernel's stack). own-start-fault:
 * the same with the RX thread's first poll failing, inside
 * ucm_dp__start(), which puts the sockets into the map: nothing is
 * delivered, and the socket must be out all the same. drain: the RX
 * thread takes nothing (the library's debug switch) until the stop, which
 * must deliver what waits on the ring; argv[4] is a file the script makes
 * once it sent everything. drain-long: the same with max_frags 2 and
 * COUNT packets of three frames each (IFNAME's MTU 9000), every one
 * dropped as too long: the stop must take the whole ring though no batch
 * delivers anything, and count a packet it took part of. busy-poll: UCM_DP_F_BUSY_POLL (the script defers
 * the device's interrupts as the NIC runbook does): the socket must carry
 * the options and the idle RX thread must have polled the device.
 * idle-stop: no traffic (COUNT 0, IPv4 only, so the kernel's own IPv6
 * stays with it), an idle sleep no timeout ends (the library's debug
 * switch), and the stop: the RX thread's sleep must have ended for it
 * (its wake counter), not for a timeout. */
static bool fault_mode;
static bool start_fault;
static bool drain_mode;
static bool long_mode;
static bool busy_mode;
static bool idle_mode;
extern int ucm_xsk_test_poll_fail;
extern int ucm_dp_test_rx_hold;
extern int ucm_dp_test_rx_idle_ms;
extern struct ucm_cpumap *ucm_dp_test_map(struct ucm_dp *dp);
static atomic_ulong per_worker[NWORKERS];

static int rec_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		    const uint64_t *addrs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ucm_pkt *p = &frames[i]->pkt;
		const uint8_t *d = ucm_frame_data(frames[i]);
		uint32_t flow, seq;

		/* Not the test's traffic (the kernel's own IPv6 chatter). */
		if (p->l4_proto != IPPROTO_UDP || !(p->flags & UCM_PKT_F_PORTS) ||
		    p->dport != 9000)
			continue;
		if (p->l4_off + 16u > p->len) {
			atomic_fetch_add(&bad_payload, 1);
			continue;
		}
		memcpy(&flow, d + p->l4_off + 8, 4);
		memcpy(&seq, d + p->l4_off + 12, 4);
		flow = ntohl(flow);
		seq = ntohl(seq);
		if (flow >= MAX_FLOWS || seq >= MAX_SEQ) {
			atomic_fetch_add(&bad_payload, 1);
			continue;
		}
		/* Each flow is one worker's (seen[] is per flow, written
		 * only by that worker unless steering is broken). */
		{
			int old = __atomic_exchange_n(&flow_worker[flow],
						      (int)worker + 1,
						      __ATOMIC_RELAXED);

			if (old && old != (int)worker + 1)
				atomic_fetch_add(&flow_split, 1);
		}
		if (__atomic_fetch_add(&seen[flow][seq], 1, __ATOMIC_RELAXED))
			atomic_fetch_add(&dups, 1);
		if (app_mode && (p->l4_off + 17u > p->len || d[p->l4_off + 16] != 'V'))
			atomic_fetch_add(&unmarked, 1);
		atomic_fetch_add(&per_worker[worker], 1);
		atomic_fetch_add(&delivered, 1);
	}
	return 0;
}

static const struct ucm_sink_ops rec_sink = { .sz = sizeof(struct ucm_sink_ops), .xmit = rec_xmit };

/* app mode: the test's traffic's flow f to worker f % 2; the rest to 0. */
static uint32_t app_steer(void *ctx, const struct ucm_pkt *p, const uint8_t *d, uint32_t len)
{
	uint32_t flow;

	if (p->l4_proto != IPPROTO_UDP || !(p->flags & UCM_PKT_F_PORTS) ||
	    p->dport != 9000 || p->l4_off + 12u > len)
		return 0;
	memcpy(&flow, d + p->l4_off + 8, 4);
	return ntohl(flow) % NWORKERS;
}

/* app mode: only the test's traffic passes, marked ('V' after the stamp). */
static atomic_ulong verdict_drops;

static int app_verdict(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	struct ucm_pkt *p = &frame->pkt;

	if (p->l4_proto != IPPROTO_UDP || !(p->flags & UCM_PKT_F_PORTS) ||
	    p->dport != 9000 || p->l4_off + 17u > p->len) {
		atomic_fetch_add(&verdict_drops, 1);
		return UCM_VERDICT_DROP;
	}
	((uint8_t *)ucm_frame_data(frame))[p->l4_off + 16] = 'V';
	return UCM_VERDICT_PASS;
}

/*
 * own mode: the application's XDP program and XSKMAP. The program is the
 * least there is, loaded from its instructions:
 *
 *	r2 = ctx->rx_queue_index
 *	r1 = &xsks_map
 *	r3 = XDP_PASS
 *	return bpf_redirect_map(r1, r2, r3)
 *
 * It writes no metadata: the worker comes from the policy, in userspace.
 */
static int own_prog(int map_fd)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_W | BPF_MEM, .dst_reg = BPF_REG_2,
		  .src_reg = BPF_REG_1, .off = offsetof(struct xdp_md, rx_queue_index) },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect_map },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_XDP, "xsk_rx_own", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
}

/* Reads every statistic of the datapath in a loop, as an exporter thread
 * would, until told to stop: through ucm_dp__stop() too. */
static atomic_int reading;
static atomic_ulong readings, went_down;

static void *stats_reader(void *arg)
{
	struct ucm_dp *dp = arg;
	struct ucm_cpumap_worker_stats ws;
	struct ucm_xsk_stats xs;
	struct ucm_dp_stats t;

	uint64_t last = 0;

	while (atomic_load(&reading)) {
		ucm_dp__stats(dp, &t, sizeof(t));
		if (t.rx < last)
			atomic_fetch_add(&went_down, 1);
		last = t.rx;
		ucm_dp__xsk_stats(dp, 0, &xs, sizeof(xs));
		for (uint32_t w = 0; w < NWORKERS; w++)
			ucm_dp__worker_stats(dp, w, &ws, sizeof(ws));
		atomic_fetch_add(&readings, 1);
	}
	return NULL;
}

/* The datapath's one AF_XDP socket among the process's fds, or -1. */
static int xsk_fd(void)
{
	int fd, dom;
	socklen_t len;

	for (fd = 3; fd < 1024; fd++) {
		len = sizeof(dom);
		if (!getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) && dom == AF_XDP)
			return fd;
	}
	return -1;
}

static int logp(enum ucm_log_level level, const char *fmt, va_list ap)
{
	return level <= UCM_LOG_INFO ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	struct ucm_dp_health health = {};
	bool unredirected = false;
	unsigned long held = 0;
	long fault_ms = -1;
	int probe_err = 1;
	UCM_OPTS(ucm_dp_opts, o, .steer_policy = UCM_STEER_L4_HASH,
		 .xsk_mode = UCM_XSK_COPY, .sink = &rec_sink, .ncpus = NWORKERS);
	struct ucm_xsk_stats st;
	struct ucm_dp_stats ds;
	struct ucm_dp *dp;
	unsigned long count;
	int cpus[NWORKERS], ncpu = 0, c, err, rx_err, failed = 0, map_fd = -1, prog_fd = -1;
	pthread_t reader;
	struct timespec s0, s1;
	unsigned long r0 = 0, r1 = 0;
	cpu_set_t set;
	time_t end;

	if (argc < 3) {
		fprintf(stderr,
			"usage: xsk_rx IFNAME COUNT [skb|app|own|fault|own-fault|own-start-fault|busy-poll|idle-stop|drain SENT_FILE]\n");
		return 2;
	}
	count = strtoul(argv[2], NULL, 0);
	ucm_set_print(logp);
	o.ifname = argv[1];
	if (argc > 3 && !strcmp(argv[3], "skb"))
		o.flags |= UCM_DP_F_XDP_SKB;
	app_mode = argc > 3 && !strcmp(argv[3], "app");
	start_fault = argc > 3 && !strcmp(argv[3], "own-start-fault");
	own_mode = start_fault ||
		   (argc > 3 && (!strcmp(argv[3], "own") || !strcmp(argv[3], "own-fault")));
	fault_mode = start_fault ||
		     (argc > 3 && (!strcmp(argv[3], "fault") || !strcmp(argv[3], "own-fault")));
	long_mode = argc > 4 && !strcmp(argv[3], "drain-long");
	drain_mode = long_mode || (argc > 4 && !strcmp(argv[3], "drain"));
	if (long_mode)
		o.max_frags = 2;
	busy_mode = argc > 3 && !strcmp(argv[3], "busy-poll");
	if (busy_mode)
		o.flags |= UCM_DP_F_BUSY_POLL;
	idle_mode = argc > 3 && !strcmp(argv[3], "idle-stop");
	if (idle_mode) {
		o.steer_flags |= UCM_STEER_F_IPV4;
		__atomic_store_n(&ucm_dp_test_rx_idle_ms, 60000,
				 __ATOMIC_RELAXED);
	}
	if (drain_mode)
		__atomic_store_n(&ucm_dp_test_rx_hold, 1, __ATOMIC_RELAXED);
	if (own_mode) {
		/* Ours, attached before the datapath exists, as an
		 * application with its own program does. */
		map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "own_xsks", 4, 4, 64, NULL);
		prog_fd = map_fd < 0 ? -1 : own_prog(map_fd);
		if (prog_fd < 0 || bpf_xdp_attach(if_nametoindex(argv[1]), prog_fd,
						  XDP_FLAGS_DRV_MODE, NULL)) {
			printf("FAIL: xsk_rx/own-program: cannot load or attach: %s\n",
			       strerror(errno));
			return 1;
		}
		o.xsks_map_fd = map_fd;
		o.flags |= UCM_DP_F_OWN_XDP;
	}
	if (app_mode) {
		o.steer_fn = app_steer;
		o.verdict = app_verdict;
	}
	/* Two pinned workers on two CPUs: steering is what is tested. */
	sched_getaffinity(0, sizeof(set), &set);
	for (c = 0; c < CPU_SETSIZE && ncpu < NWORKERS; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpu++] = c;
	if (ncpu < NWORKERS) {
		printf("SKIP: xsk_rx: needs two CPUs for two pinned workers\n");
		return 0;
	}
	o.cpus = cpus;
	dp = ucm_dp__create(&o);
	if (!dp) {
		printf("FAIL: xsk_rx/create: %s\n", strerror(errno));
		return 1;
	}
	if (start_fault)
		__atomic_store_n(&ucm_xsk_test_poll_fail, 1, __ATOMIC_RELAXED);
	err = ucm_dp__start(dp);
	if (err) {
		printf("FAIL: xsk_rx/start: %s\n", strerror(-err));
		ucm_dp__destroy(dp);
		return 1;
	}
	printf("READY %s\n", ucm_dp__zerocopy(dp) ? "zero-copy" : "copy");
	fflush(stdout);

	end = time(NULL) + 20;
	if (drain_mode) {
		/* Everything sent (veth delivers in the sender's own call),
		 * and a moment more; the thread must have taken none. */
		while (access(argv[4], F_OK) && time(NULL) < end)
			usleep(10000);
		usleep(200000);
		held = atomic_load(&delivered);
	}
	while (atomic_load(&delivered) < count && time(NULL) < end && !ucm_dp__err(dp, NULL) &&
	       !drain_mode)
		usleep(10000);
	usleep(200000);		/* anything extra would show as too many */
	/* The RX thread asleep: its first sleep counted, and a moment more. */
	for (c = 0; idle_mode && c < 200; c++) {
		ucm_dp__stats(dp, &ds, sizeof(ds));
		if (ds.rx_sleeps)
			break;
		usleep(10000);
	}

	if (fault_mode) {
		struct timespec t0, t1;
		int i;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (!start_fault)	/* it failed at its first poll */
			__atomic_store_n(&ucm_xsk_test_poll_fail, 1, __ATOMIC_RELAXED);
		for (i = 0; i < 100 && ucm_dp__check(dp, &health, sizeof(health)) != 1; i++)
			usleep(10000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fault_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (own_mode) {
			__u32 key = 0;	/* queue 0's */
			int xfd = xsk_fd();

			/* The thread takes its socket out right after it
			 * reports. An update that must find the entry
			 * (BPF_EXIST) fails with ENOENT then, and changes
			 * nothing (an XSKMAP's delete says 0 either way). */
			usleep(100000);
			probe_err = xfd < 0 ? -EBADF :
				  bpf_map_update_elem(map_fd, &key, &xfd, BPF_EXIST) ? -errno : 0;
			unredirected = probe_err == -ENOENT;
		}
	}

#define CHECK(name, cond, ...)						\
	do {								\
		if (cond) {						\
			printf("PASS: xsk_rx/%s\n", name);		\
		} else {						\
			printf("FAIL: xsk_rx/%s: ", name);		\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failed++;					\
		}							\
	} while (0)

	/* One queue: its RX thread is the map's one producer, and every
	 * worker ring is single-producer (UCM_CPUMAP_F_ONE_PRODUCER). */
	for (c = 0; c < NWORKERS - 1; c++)	/* the first that is not, or the last */
		if (ucm_cpumap_test_ring_flags(ucm_dp_test_map(dp), c) != UCM_RING_SP)
			break;
	CHECK("one-producer-rings",
	      ucm_cpumap_test_ring_flags(ucm_dp_test_map(dp), c) == UCM_RING_SP,
	      "worker %d's ring flags %d, want SP", c,
	      ucm_cpumap_test_ring_flags(ucm_dp_test_map(dp), c));

	if (busy_mode) {
		int fd = xsk_fd(), us = 0, prefer = 0;
		socklen_t len = sizeof(us);

		getsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, &len);
		len = sizeof(prefer);
		getsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &prefer, &len);
		ucm_dp__xsk_stats(dp, 0, &st, sizeof(st));
		CHECK("busy-poll", us > 0 && prefer && st.busy_polls,
		      "SO_BUSY_POLL %d us, SO_PREFER_BUSY_POLL %d, %llu busy polls of the device (want all three non-zero)",
		      us, prefer, (unsigned long long)st.busy_polls);
	}
	rx_err = ucm_dp__err(dp, NULL);
	/* Stop with a statistics reader at work on another thread. */
	atomic_store(&reading, 1);
	if (pthread_create(&reader, NULL, stats_reader, dp))
		atomic_store(&reading, 0);
	usleep(20000);
	r0 = atomic_load(&readings);
	clock_gettime(CLOCK_MONOTONIC, &s0);
	err = ucm_dp__stop(dp, 1000);
	clock_gettime(CLOCK_MONOTONIC, &s1);
	r1 = atomic_load(&readings);
	usleep(20000);
	if (atomic_exchange(&reading, 0))
		pthread_join(reader, NULL);
	ucm_dp__xsk_stats(dp, 0, &st, sizeof(st));
	ucm_dp__stats(dp, &ds, sizeof(ds));

	if (fault_mode)
		CHECK("rx-fault", health.fault == UCM_DP_FAULT_RX_THREAD && health.err == -EIO &&
		      health.where == 0 && rx_err == -EIO && fault_ms <= 1000,
		      "after %ld ms: fault '%s' (%d), queue %u, RX thread's error %d (want '%s', -EIO, queue 0, within 1 s)",
		      fault_ms, ucm_dp_fault_str(health.fault), health.err, health.where, rx_err,
		      ucm_dp_fault_str(UCM_DP_FAULT_RX_THREAD));
	else
		CHECK("rx-thread", !rx_err, "RX thread failed: %s", strerror(-rx_err));
	if (drain_mode)
		CHECK("drain", !held, "%lu delivered while the RX thread held off its ring (want 0)",
		      held);
	if (long_mode) {
		CHECK("drain-long", !err && !ucm_dp_stats__violations(&ds, sizeof(ds)) &&
		      st.rx_chain_long == count && !st.rx_chain_cut && !atomic_load(&delivered),
		      "stop: %s; chain drops: too long %llu (want %lu), cut %llu; delivered %lu",
		      strerror(-err), (unsigned long long)st.rx_chain_long, count,
		      (unsigned long long)st.rx_chain_cut, atomic_load(&delivered));
		goto home;
	}

	if (fault_mode && own_mode)
		CHECK("fault-unredirected", unredirected,
		      "queue 0's entry in the XSKMAP after the fault: %s (want ENOENT: the failed RX thread's socket out of it)",
		      probe_err ? strerror(-probe_err) : "still there (the queue's traffic goes to nobody)");
	if (idle_mode)
		CHECK("stop-wakes-sleep",
		      ds.rx_sleeps && ds.rx_wake_stop == 1 &&
			      !ds.rx_wake_timeout,
		      "%llu sleeps, ended by the stop %llu, by a timeout %llu, by arrivals %llu "
		      "(want the last ended by the stop, none by a timeout); the stop took %ld ms",
		      (unsigned long long)ds.rx_sleeps,
		      (unsigned long long)ds.rx_wake_stop,
		      (unsigned long long)ds.rx_wake_timeout,
		      (unsigned long long)ds.rx_wake_rx,
		      (s1.tv_sec - s0.tv_sec) * 1000 +
			      (s1.tv_nsec - s0.tv_nsec) / 1000000);
	/* Nothing to deliver, to steer or to count. */
	if (start_fault || idle_mode)
		goto counted;
	CHECK("delivered", atomic_load(&delivered) == count && !atomic_load(&dups) &&
	      !atomic_load(&bad_payload),
	      "%lu of %lu delivered, %lu twice, %lu bad; the kernel dropped %llu (fill ring empty %llu, RX ring full %llu)",
	      atomic_load(&delivered), count, atomic_load(&dups), atomic_load(&bad_payload),
	      (unsigned long long)st.kernel_rx_dropped,
	      (unsigned long long)st.kernel_rx_fill_ring_empty_descs,
	      (unsigned long long)st.kernel_rx_ring_full);
	CHECK("steering", atomic_load(&per_worker[0]) && atomic_load(&per_worker[1]) &&
	      !atomic_load(&flow_split), "worker 0 got %lu, worker 1 got %lu, %lu flows split",
	      atomic_load(&per_worker[0]), atomic_load(&per_worker[1]),
	      atomic_load(&flow_split));
	CHECK("xsk-stats", st.rx >= count && !st.rx_bad_desc && !st.rx_steer_err &&
	      st.fill >= st.rx, "rx %llu (want >= %lu), bad %llu, steer errors %llu, fill %llu",
	      (unsigned long long)st.rx, count, (unsigned long long)st.rx_bad_desc,
	      (unsigned long long)st.rx_steer_err, (unsigned long long)st.fill);
counted:
	CHECK("conservation", !ucm_dp_stats__violations(&ds, sizeof(ds)) && ds.rx == st.rx &&
	      ds.delivered == ds.rx, "received %llu, delivered %llu, drops %llu + %llu",
	      (unsigned long long)ds.rx, (unsigned long long)ds.delivered,
	      (unsigned long long)ds.enqueue_drops, (unsigned long long)ds.worker_drops);
home:
	CHECK("frames-home", !err && (ds.state & UCM_DP_S_FRAMES_HOME),
	      "stop: %s", strerror(-err));
	if (own_mode) {
		__u32 id = 0;
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);

		bpf_obj_get_info_by_fd(prog_fd, &pi, &len);
		bpf_xdp_query_id(if_nametoindex(argv[1]), XDP_FLAGS_DRV_MODE, &id);
		CHECK("own-program-kept", id && id == pi.id,
		      "after the datapath stopped, the program on the interface is %u, ours %u",
		      id, pi.id);
		bpf_xdp_detach(if_nametoindex(argv[1]), XDP_FLAGS_DRV_MODE, NULL);
		close(prog_fd);
		close(map_fd);
	}
	if (app_mode) {
		int split = 0;

		for (int f = 0; f < MAX_FLOWS; f++)
			split += flow_worker[f] && flow_worker[f] != f % NWORKERS + 1;
		CHECK("app-steering", !split, "%d flows not on the worker the callback chose", split);
		CHECK("app-verdict", !atomic_load(&unmarked) &&
		      ds.worker_drop_reason[UCM_DROP_VERDICT] == atomic_load(&verdict_drops),
		      "%lu delivered unmarked; drops by verdict %llu, the callback dropped %lu",
		      atomic_load(&unmarked),
		      (unsigned long long)ds.worker_drop_reason[UCM_DROP_VERDICT],
		      atomic_load(&verdict_drops));
	}
	CHECK("stats-during-stop", r1 > r0 && !atomic_load(&went_down) &&
	      (ds.state & UCM_DP_S_STOPPED) && !(ds.state & UCM_DP_S_RUNNING),
	      "%lu readings while it stopped, rx went down %lu times, state %#x",
	      r1 - r0, atomic_load(&went_down), ds.state);
	err = ucm_dp__start(dp);
	CHECK("start-once", err == -EINVAL, "a second start: %s", strerror(-err));
	err = ucm_dp__stop(dp, 1000);
	CHECK("stop-twice", !err, "a second stop: %s", strerror(-err));
	ucm_dp__destroy(dp);
	return failed ? 1 : 0;
}
