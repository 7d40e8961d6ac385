// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * End to end up to the workers: XDP steering program -> XSK socket -> RX
 * thread -> cpumap -> a recording sink, on a real interface (a veth end in
 * a namespace; tests/net/test-xsk.sh sets it up and sends the traffic).
 *
 *   xsk_rx IFNAME COUNT [skb]
 *
 * Prints "READY" once attached, then waits for COUNT UDP datagrams carrying
 * (flow, seq) to reach the sink, shuts down the way the daemon will (socket
 * out of the XSK map, RX thread stopped, cpumap drained, program detached,
 * sockets closed with the kernel's frames reclaimed) and prints one
 * PASS/FAIL line per check.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/log.h"
#include "ucpumap/xdp.h"
#include "ucpumap/xsk.h"
#include "utest.h"

#define MAX_FLOWS	64
#define MAX_SEQ		65536
#define NWORKERS	2

static uint8_t seen[MAX_FLOWS][MAX_SEQ];
static int flow_worker[MAX_FLOWS];
static atomic_ulong delivered, bad_payload, dups, flow_split;
static atomic_ulong per_worker[NWORKERS];
static atomic_int stop_rx;

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
		atomic_fetch_add(&per_worker[worker], 1);
		atomic_fetch_add(&delivered, 1);
	}
	return 0;
}

static const struct ucm_sink_ops rec_sink = { .xmit = rec_xmit };

struct rx_arg {
	struct ucm_xsk_queue *q;
	struct ucm_cpumap *map;
	struct ucm_steer_cfg cfg;
	int err;
};

static void *rx_thread(void *arg)
{
	struct rx_arg *a = arg;
	struct ucm_cpumap_producer *prod;
	uint32_t rr = 0;
	int n;

	ucm_pool__set_owner(ucm_xsk_queue__pool(a->q));
	prod = ucm_cpumap__producer_create(a->map, ucm_xsk_queue__pool(a->q));
	if (!prod) {
		a->err = -errno;
		return NULL;
	}
	while (!atomic_load(&stop_rx)) {
		n = ucm_xsk_queue__poll(a->q, prod, &a->cfg, &rr);
		if (n < 0) {
			a->err = n;
			break;
		}
		if (!n)
			ucm_xsk_queue__wait(a->q, 10);
	}
	ucm_cpumap__producer_destroy(prod);
	ucm_pool__clear_owner(ucm_xsk_queue__pool(a->q));
	return NULL;
}

static int logp(enum ucm_log_level level, const char *fmt, va_list ap)
{
	return level <= UCM_LOG_INFO ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	UCM_OPTS(ucm_xsk_opts, xo, .frames_per_queue = 4096, .rx_size = 1024,
		 .fill_size = 2048, .mode = UCM_XSK_COPY);
	UCM_OPTS(ucm_xdp_opts, po, .policy = UCM_STEER_L4_HASH, .nworkers = NWORKERS);
	struct ucm_xsk_stats st;
	struct rx_arg ra = {};
	struct ucm_xsk *x;
	struct ucm_xdp *xdp;
	pthread_t thr;
	unsigned long count;
	int cpus[NWORKERS], ncpu = 0, c, err, failed = 0;
	cpu_set_t set;
	time_t end;

	if (argc < 3) {
		fprintf(stderr, "usage: xsk_rx IFNAME COUNT [skb]\n");
		return 2;
	}
	count = strtoul(argv[2], NULL, 0);
	ucm_set_print(logp);
	xo.ifname = argv[1];

	/*
	 * Program first: a stale one of ours (a killed run) still holds its
	 * XSK map and, through it, the old socket, which keeps the queue
	 * busy. Replacing the program lets the old socket go; until ours has
	 * a socket in its map, it passes everything to the kernel.
	 */
	xdp = ucm_xdp__load(&po);
	if (!xdp) {
		printf("FAIL: xsk_rx/load: %s\n", strerror(errno));
		return 1;
	}
	err = ucm_xdp__attach(xdp, if_nametoindex(argv[1]),
			      argc > 3 && !strcmp(argv[3], "skb") ? UCM_XDP_ATTACH_SKB : 0);
	if (err) {
		printf("FAIL: xsk_rx/attach: %s\n", strerror(-err));
		return 1;
	}
	x = ucm_xsk__open(&xo);
	if (!x) {
		printf("FAIL: xsk_rx/open: %s\n", strerror(errno));
		ucm_xdp__destroy(xdp);
		return 1;
	}
	sched_getaffinity(0, sizeof(set), &set);
	for (c = 0; c < CPU_SETSIZE && ncpu < NWORKERS; c++)
		if (CPU_ISSET(c, &set))
			cpus[ncpu++] = c;
	while (ncpu < NWORKERS)
		cpus[ncpu] = cpus[0], ncpu++;
	{
		/* Two workers even on one CPU: steering is what is tested. */
		int wcpus[NWORKERS] = { cpus[0], cpus[1] != cpus[0] ? cpus[1] : cpus[0] };
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = wcpus, .ncpus = NWORKERS,
			 .sink = &rec_sink);

		if (wcpus[0] == wcpus[1]) {
			printf("SKIP: xsk_rx: needs two CPUs for two pinned workers\n");
			return 0;
		}
		ra.map = ucm_cpumap__create(ucm_xsk__umem(x), &co);
	}
	if (!ra.map) {
		printf("FAIL: xsk_rx/cpumap: %s\n", strerror(errno));
		return 1;
	}
	ucm_xdp__config(xdp, &ra.cfg);
	ra.q = ucm_xsk__queue(x, 0);
	if (ucm_xdp__set_xsk(xdp, ucm_xsk_queue__id(ra.q), ucm_xsk_queue__fd(ra.q))) {
		printf("FAIL: xsk_rx/xskmap: %s\n", strerror(errno));
		return 1;
	}
	if (pthread_create(&thr, NULL, rx_thread, &ra)) {
		printf("FAIL: xsk_rx/thread\n");
		return 1;
	}
	printf("READY %s\n", ucm_xsk__zerocopy(x) ? "zero-copy" : "copy");
	fflush(stdout);

	end = time(NULL) + 20;
	while (atomic_load(&delivered) < count && time(NULL) < end)
		usleep(10000);
	usleep(200000);		/* anything extra would show as too many */

	/* Shutdown, in the daemon's order. */
	ucm_xdp__set_xsk(xdp, ucm_xsk_queue__id(ra.q), -1);
	atomic_store(&stop_rx, 1);
	pthread_join(thr, NULL);
	ucm_xsk_queue__stats(ra.q, &st);
	ucm_cpumap__destroy(ra.map);
	err = ucm_xdp__detach(xdp);
	ucm_xdp__destroy(xdp);

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

	CHECK("rx-thread", !ra.err, "RX thread failed: %s", strerror(-ra.err));
	CHECK("delivered", atomic_load(&delivered) == count && !atomic_load(&dups) &&
	      !atomic_load(&bad_payload), "%lu of %lu delivered, %lu twice, %lu bad",
	      atomic_load(&delivered), count, atomic_load(&dups), atomic_load(&bad_payload));
	CHECK("steering", atomic_load(&per_worker[0]) && atomic_load(&per_worker[1]) &&
	      !atomic_load(&flow_split), "worker 0 got %lu, worker 1 got %lu, %lu flows split",
	      atomic_load(&per_worker[0]), atomic_load(&per_worker[1]),
	      atomic_load(&flow_split));
	CHECK("xsk-stats", st.rx >= count && !st.rx_bad_desc && !st.rx_steer_err &&
	      st.fill >= st.rx, "rx %llu (want >= %lu), bad %llu, steer errors %llu, fill %llu",
	      (unsigned long long)st.rx, count, (unsigned long long)st.rx_bad_desc,
	      (unsigned long long)st.rx_steer_err, (unsigned long long)st.fill);
	CHECK("detach", !err, "%s", strerror(-err));
	err = ucm_xsk__close(x, 1000);
	CHECK("frames-home", !err, "close: %s", strerror(-err));
	return failed ? 1 : 0;
}
