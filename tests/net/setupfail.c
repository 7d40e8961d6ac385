// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Set-up failures (issue 14, group I): ucm_dp__create() with one call
 * failing, each in turn, through tests/net/setup_shim.c (LD_PRELOAD):
 *
 *   setupfail IFNAME KIND MAXN
 *
 * KIND: malloc, uring or xsk (the shim's). For n = 1, 2, ... up to MAXN,
 * or until a create no longer reaches its nth call of KIND: the nth call
 * fails, and the create either fails with an errno and a message, or
 * copes (a fallback) and then runs, stops and destroys cleanly; a failed
 * create says why (a warning in the log). After each, nothing is left:
 * open files, BPF programs, maps and links (the kernel frees a map a
 * little after its last fd: looked at again for up to a second), devices
 * and threads are what they were before it. The bytes malloc has handed
 * out (mallinfo2) are only reported: glibc keeps per-thread state of
 * threads that came and went, so a difference is not a leak by itself
 * (LeakSanitizer is the judge of that, and cannot run beside the shim).
 *
 * Prints one PASS/FAIL line and a '#' line with what the attempts did.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdbool.h>

#include <bpf/bpf.h>

#include "ucpumap/dp.h"
#include "ucpumap/log.h"
#include "census.h"

static int msgs;

static int count_msgs(enum ucm_log_level level, const char *fmt, va_list ap)
{
	if (level == UCM_LOG_WARN)
		msgs++;
	return 0;
}

static struct ucm_dp *create(const char *ifname)
{
	static const int cpus[2] = { 0, 1 };
	UCM_OPTS(ucm_dp_opts, o, .ifname = ifname, .tun_name = "ucmsf0", .cpus = cpus,
		 .ncpus = 2, .xsk_mode = UCM_XSK_COPY, .frames_per_queue = 8192,
		 .flags = UCM_DP_F_TWO_WAY | UCM_DP_F_COALESCE);

	return ucm_dp__create(&o);
}

int main(int argc, char **argv)
{
	void (*arm)(const char *, long);
	int (*fired)(void);
	long n, maxn, failed = 0, coped = 0, silent = 0, heap = 0;
	struct census a, b;
	char why[512] = "";
	struct ucm_dp *dp;

	if (argc != 4 || (maxn = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: setupfail IFNAME malloc|uring|xsk MAXN\n");
		return 2;
	}
	arm = (void (*)(const char *, long))dlsym(RTLD_DEFAULT, "ucm_setup_shim_arm");
	fired = (int (*)(void))dlsym(RTLD_DEFAULT, "ucm_setup_shim_fired");
	if (!arm || !fired) {
		printf("FAIL: setupfail/%s: run with LD_PRELOAD=libsetup_shim.so\n", argv[2]);
		return 1;
	}
	ucm_set_print(count_msgs);
	/* Warm up: what the first create leaves for good (libbpf's and
	 * glibc's one-time state) is not a leak. */
	for (int i = 0; i < 2; i++) {
		dp = create(argv[1]);
		if (dp)
			ucm_dp__destroy(dp);
	}
	for (n = 1; n <= maxn && !why[0]; n++) {
		int err = 0, m0 = msgs;

		census_take(&a);
		arm(argv[2], n);
		dp = create(argv[1]);
		err = dp ? 0 : errno;
		if (!fired()) {
			arm("", 0);
			if (dp)
				ucm_dp__destroy(dp);
			break;	/* the create makes fewer calls than n */
		}
		if (dp) {
			coped++;
			if (ucm_dp__start(dp) || ucm_dp__stop(dp, 1000))
				snprintf(why, sizeof(why), "call %ld failed, the create coped, but the datapath did not run and stop cleanly", n);
			ucm_dp__destroy(dp);
		} else {
			failed++;
			if (!err)
				snprintf(why, sizeof(why), "call %ld failed: the create failed without an errno", n);
			silent += msgs == m0;
		}
		if (!dp && msgs == m0 && !why[0])
			snprintf(why, sizeof(why), "call %ld failed: the create failed (%s) without a word in the log",
				 n, strerror(err));
		census_take(&b);
		for (int t = 0; t < 100 && !census_none_left(&a, &b); t++) {
			usleep(10000);
			census_take(&b);
		}
		heap += (long)(b.heap - a.heap);
		if (!why[0] && !census_none_left(&a, &b))
			snprintf(why, sizeof(why), "call %ld failed (%s): left fds %+ld, programs %+ld, maps %+ld, links %+ld, devices %+ld, threads %+ld, heap %+ld bytes",
				 n, dp ? "coped" : strerror(err), b.fds - a.fds, b.progs - a.progs,
				 b.maps - a.maps, b.links - a.links, b.devs - a.devs,
				 b.threads - a.threads, (long)(b.heap - a.heap));
	}
	if (!why[0] && n == 1)
		snprintf(why, sizeof(why), "not one call of it failed: the shim did not take %s (LD_PRELOAD?)",
			 argv[2]);
	if (why[0])
		printf("FAIL: setupfail/%s: %s\n", argv[2], why);
	else
		printf("PASS: setupfail/%s\n", argv[2]);
	printf("# %s: %ld calls made to fail: %ld creates failed (%ld without a warning), %ld coped; the heap's bytes in use moved by %+ld in all%s\n",
	       argv[2], n - 1, failed, silent, coped, heap, n > maxn ? " (stopped at the limit)" : "");
	return why[0] ? 1 : 0;
}
