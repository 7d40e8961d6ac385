// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forward: the smallest ucpumap forwarder. Packets received on IFACE's
 * queue 0 are spread over worker threads (one per CPU but CPU 0) and
 * handed to the kernel through the tun TUN, coalesced; SIGINT or SIGTERM
 * (or SECONDS) stops it, and its last line says what it forwarded.
 *
 *   forward IFACE TUN [SECONDS]          (root: see libucpumap(3), PRIVILEGES)
 *
 * Build: cc forward.c $(pkg-config --cflags --libs libucpumap)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ucpumap/dp.h>
#include <ucpumap/log.h>

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	done = 1;
}

int main(int argc, char **argv)
{
	struct ucm_dp_health h;
	struct ucm_dp_stats st;
	struct ucm_dp *dp;
	int secs, err, fault = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: forward IFACE TUN [SECONDS]\n");
		return 2;
	}
	secs = argc > 3 ? atoi(argv[3]) : 0;
	UCM_OPTS(ucm_dp_opts, o, .ifname = argv[1], .tun_name = argv[2],
		 .steer_policy = UCM_STEER_L4_HASH, .flags = UCM_DP_F_COALESCE);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* NULL and errno on failure; the library's log (stderr) says why. */
	dp = ucm_dp__create(&o);
	if (!dp) {
		fprintf(stderr, "forward: %s\n", strerror(errno));
		return 1;
	}
	err = ucm_dp__start(dp);
	if (err) {
		fprintf(stderr, "forward: start: %s\n", strerror(-err));
		ucm_dp__destroy(dp);
		return 1;
	}
	printf("forward: %s -> %s, %u workers\n", argv[1], ucm_dp__tun_name(dp),
	       ucm_dp__nworkers(dp));
	fflush(stdout);
	/* Every 100 ms: the library looks for faults (the interface or tun
	 * deleted, a socket or thread failed) and logs them and link changes. */
	for (int t = 0; !done && (!secs || t < secs * 10); t++) {
		if (ucm_dp__check(dp, &h, sizeof(h)) == 1) {
			fprintf(stderr, "forward: stopping: %s\n", ucm_dp_fault_str(h.fault));
			fault = 1;
			break;
		}
		usleep(100000);
	}
	/* Drain, take everything down, prove every frame came home. */
	err = ucm_dp__stop(dp, 1500);
	ucm_dp__stats(dp, &st, sizeof(st));
	printf("forward: received %llu, delivered %llu, dropped %llu: %s\n",
	       (unsigned long long)st.rx, (unsigned long long)st.delivered,
	       (unsigned long long)(st.rx - st.delivered),
	       err ? strerror(-err) : "every frame came home");
	ucm_dp__destroy(dp);
	return err || fault ? 1 : 0;
}
