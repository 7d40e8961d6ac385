// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Life cycles: a whole ucm_dp created, started,
 * stopped and destroyed ROUNDS times in one process, on a real interface
 * (a veth end in a namespace; tests/net/test-lifecycle.sh), alternating
 * one-way and two-way (whose next-hop resolver threads and TX channels
 * come and go too), and a third kind whose verdict sends packets back out
 * (UCM_DP_F_VERDICT_TX, its own TX channels). After WARMUP rounds (the
 * allocator's and the kernel's caches settle), nothing may grow:
 *
 *   lifecycle IFNAME ROUNDS
 *
 *   fds        the process's open files (/proc/self/fd)
 *   rss        its resident memory (VmRSS), within RSS_SLACK_KB (not in
 *              a sanitizer build, LIFECYCLE_NO_RSS: ASan holds freed memory
 *              in quarantine, and LeakSanitizer judges leaks there)
 *   bpf        BPF programs, maps and links on the system (by id)
 *   devices    the namespace's network devices
 *   threads    the process's threads (/proc/self/task)
 *   stop       every stop returned 0: counters added up, frames home
 *   census     a census taken while a datapath runs sees its files,
 *              program, maps, link, tun and threads (so the others
 *              could see them left behind)
 *   lend       in the warm-up's rounds, after two of the RX thread's
 *              idle turns: the verdict-only channels were lent no frame
 *              (they never take one: ucm_txq__set_lend()), the two-way
 *              ones were (so a lend is there to be seen)
 *
 * One PASS/FAIL line per check; exit 0 when all passed.
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "ucpumap/dp.h"
#include "ucpumap/log.h"
#include "census.h"

#define WARMUP		10
/* What glibc's arenas may still take after the warm-up: a round maps and
 * unmaps its UMEM (32 MB), so a leak of a round's worth shows at once. */
#define RSS_SLACK_KB	2048

static unsigned int warnings;

static int quiet(enum ucm_log_level level, const char *fmt, va_list ap)
{
	if (level != UCM_LOG_WARN)
		return 0;
	warnings++;
	return vfprintf(stderr, fmt, ap);
}

enum round_kind { ONE_WAY, TWO_WAY, VERDICT_TX, KINDS };

/* Frames lent to the TX channels in the rounds that looked (lend_look()):
 * the most a verdict-only round saw, the least a two-way one did. */
static uint64_t verdict_lent_max, two_way_lent_min = UINT64_MAX;
static uint32_t lend_looks[KINDS];

static int send_back(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	return UCM_VERDICT_TX;
}

/* After two of the RX thread's idle turns (10 ms each), the frames its
 * turns lent the workers' channels. */
static void lend_look(struct ucm_dp *dp, enum round_kind kind)
{
	struct ucm_txq_stats ts;
	uint64_t lent = 0;
	uint32_t w;

	usleep(30000);
	for (w = 0; w < ucm_dp__nworkers(dp); w++)
		if (!ucm_dp__txq_stats(dp, w, &ts, sizeof(ts)))
			lent += ts.lent;
	if (kind == VERDICT_TX && lent > verdict_lent_max)
		verdict_lent_max = lent;
	if (kind == TWO_WAY && lent < two_way_lent_min)
		two_way_lent_min = lent;
	lend_looks[kind]++;
}

/* One life: 0, or the step that failed (its errno in *err); @mid, when
 * not NULL, gets a census while it runs; @look: lend_look() too. */
static const char *one_round(const char *ifname, uint32_t round, int *err,
			     struct census *mid, bool look)
{
	static const int cpus[2] = { 0, 1 };
	static const uint32_t flags[KINDS] = {
		[ONE_WAY] = 0, [TWO_WAY] = UCM_DP_F_TWO_WAY, [VERDICT_TX] = UCM_DP_F_VERDICT_TX,
	};
	enum round_kind kind = round % KINDS;
	UCM_OPTS(ucm_dp_opts, o, .ifname = ifname, .tun_name = "ucmlc0", .cpus = cpus,
		 .ncpus = 2, .xsk_mode = UCM_XSK_COPY,
		 .flags = UCM_DP_F_COALESCE | flags[kind],
		 .verdict = kind == VERDICT_TX ? send_back : NULL);
	struct ucm_dp *dp = ucm_dp__create(&o);

	if (!dp) {
		*err = -errno;
		return "create";
	}
	*err = ucm_dp__start(dp);
	if (!*err && mid)
		census_take(mid);
	if (!*err && look && kind != ONE_WAY)
		lend_look(dp, kind);
	if (!*err)
		*err = ucm_dp__stop(dp, 1000);
	ucm_dp__destroy(dp);
	return *err ? "start or stop" : NULL;
}

/* A datapath stopped before it ran: its sockets and pools are gone, so a
 * start after is refused (-EINVAL) before it touches any: no thread
 * starts to fail on them, nothing is said. Return the start's result
 * (1: it said something), or the create's -errno. */
static int start_after_stop(const char *ifname)
{
	unsigned int said;
	static const int cpus[1] = { 0 };
	UCM_OPTS(ucm_dp_opts, o, .ifname = ifname, .tun_name = "ucmlc0", .cpus = cpus,
		 .ncpus = 1, .xsk_mode = UCM_XSK_COPY);
	struct ucm_dp *dp = ucm_dp__create(&o);
	int err;

	if (!dp)
		return -errno;
	ucm_dp__stop(dp, 1000);
	said = warnings;
	err = ucm_dp__start(dp);
	ucm_dp__destroy(dp);
	return warnings != said ? 1 : err;
}

#define CHECK(name, cond, ...)						\
	do {								\
		if (cond) {						\
			printf("PASS: lifecycle/%s\n", name);		\
		} else {						\
			printf("FAIL: lifecycle/%s: ", name);		\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failed++;					\
		}							\
	} while (0)

int main(int argc, char **argv)
{
	struct census a = {}, b, m = {};
	const char *step = NULL;
	bool have_a = false;	/* a round before WARMUP may fail: no census then */
	uint32_t rounds, r;
	int failed = 0, err = 0, sas;

	if (argc != 3 || !(rounds = strtoul(argv[2], NULL, 0)) || rounds <= WARMUP) {
		fprintf(stderr, "usage: lifecycle IFNAME ROUNDS (more than %d)\n", WARMUP);
		return 2;
	}
	ucm_set_print(quiet);
	for (r = 0; r < rounds && !step; r++) {
		if (r == WARMUP) {
			census_take(&a);
			have_a = true;
		}
		step = one_round(argv[1], r, &err, r == WARMUP ? &m : NULL, r < WARMUP);
	}
	sas = start_after_stop(argv[1]);
	CHECK("start-after-stop", sas == -EINVAL,
	      "a start after a stop gave %d (want -EINVAL; 1: it started a thread, which said why it failed)",
	      sas);
	census_take(&b);
	CHECK("stop", !step, "round %u: %s failed: %s", r, step, strerror(-err));
	CHECK("census", m.fds > b.fds && m.progs > b.progs && m.maps > b.maps &&
	      m.links > b.links && m.devs > b.devs && m.threads > b.threads,
	      "running: fds %ld programs %ld maps %ld links %ld devices %ld threads %ld; after: %ld %ld %ld %ld %ld %ld",
	      m.fds, m.progs, m.maps, m.links, m.devs, m.threads,
	      b.fds, b.progs, b.maps, b.links, b.devs, b.threads);
	CHECK("lend", lend_looks[VERDICT_TX] && lend_looks[TWO_WAY] && !verdict_lent_max &&
	      two_way_lent_min,
	      "%u verdict-only rounds looked: lent up to %llu frames (want 0); %u two-way ones: at least %llu (want some)",
	      lend_looks[VERDICT_TX], (unsigned long long)verdict_lent_max, lend_looks[TWO_WAY],
	      (unsigned long long)(lend_looks[TWO_WAY] ? two_way_lent_min : 0));
	if (!have_a)
		printf("# no census after round %d: round %u failed before it; the comparisons fail\n",
		       WARMUP, r);
	CHECK("fds", have_a && a.fds == b.fds, "%ld open files after round %d, %ld after round %u",
	      a.fds, WARMUP, b.fds, r);
	if (getenv("LIFECYCLE_NO_RSS"))
		printf("SKIP: lifecycle/rss: a sanitizer build (VmRSS %ld -> %ld kB: ASan's quarantine)\n",
		       a.rss_kb, b.rss_kb);
	else
		CHECK("rss", have_a && b.rss_kb - a.rss_kb <= RSS_SLACK_KB,
		      "VmRSS %ld kB after round %d, %ld kB after round %u", a.rss_kb, WARMUP,
		      b.rss_kb, r);
	CHECK("bpf", have_a && a.progs == b.progs && a.maps == b.maps && a.links == b.links,
	      "programs %ld -> %ld, maps %ld -> %ld, links %ld -> %ld", a.progs, b.progs,
	      a.maps, b.maps, a.links, b.links);
	CHECK("devices", have_a && a.devs == b.devs, "%ld devices -> %ld", a.devs, b.devs);
	CHECK("threads", have_a && a.threads == b.threads, "%ld threads -> %ld", a.threads, b.threads);
	printf("# %u rounds: fds %ld, VmRSS %ld -> %ld kB, programs %ld, maps %ld, devices %ld\n",
	       r, b.fds, a.rss_kb, b.rss_kb, b.progs, b.maps, b.devs);
	return failed ? 1 : 0;
}
