// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd: --poll, and the RX threads' CPU time.
 *
 * --poll keeps the RX threads and the workers looking for packets for
 * --spin-us (its longest, UCM_SPIN_US_MAX, unless given) after the last
 * one before they sleep (a --spin-us of its own is the same, shorter): while traffic is recent nobody sleeps, so no
 * packet waits for a wake-up; an idle millisecond puts them back to
 * sleep, as NAPI's busy polling falls back to interrupts. A polling
 * thread holds its CPU for as long as it looks, so whatever else runs
 * there, the packet's other half included (the kernel's receive, the
 * application), waits behind it: poll_check() refuses a polling thread
 * that would share its CPU with another of ours, and polling threads that
 * would leave the machine no CPU of its own, and says which CPUs are not
 * isolated from the scheduler's other tasks.
 *
 * The RX threads' CPU time is each one's CPU clock
 * (pthread_getcpuclockid()): what the statistics line gives as their busy
 * share, beside the workers' (which the library counts as time not
 * asleep). A polling thread's is its whole CPU while it polls.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "util.h"

/* The CPUs the kernel keeps other tasks off (isolcpus=), as a bit set of
 * the first 1024; none when the file is missing or empty. */
static void isolated_cpus(uint64_t *set, size_t words)
{
	char buf[512], *tok, *save = NULL;
	FILE *f = fopen("/sys/devices/system/cpu/isolated", "r");

	memset(set, 0, words * sizeof(*set));
	if (!f)
		return;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		unsigned int a, b;

		if (sscanf(tok, "%u-%u", &a, &b) != 2) {
			if (sscanf(tok, "%u", &a) != 1)
				continue;
			b = a;
		}
		for (; a <= b && a < words * 64; a++)
			set[a / 64] |= 1ull << (a % 64);
	}
}

/* Each of the @n CPUs of @cpus that is not isolated, said in one line. */
static void say_not_isolated(const int *cpus, int n)
{
	uint64_t iso[16];
	int shown = 0;

	isolated_cpus(iso, 16);
	for (int i = 0; i < n; i++) {
		if (cpus[i] < 1024 && (iso[cpus[i] / 64] >> (cpus[i] % 64) & 1))
			continue;
		fprintf(stderr, "%s%d", shown++ ? "," : "ucpumapd: polling on CPU(s) ", cpus[i]);
	}
	if (shown)
		fprintf(stderr, " not isolated (isolcpus=, or a cpuset of their own): a task the "
			"scheduler puts there waits behind a polling thread, and the thread behind "
			"it\n");
}

int poll_check(const struct cfg *c, const int *wk, int nwk)
{
	int cpus[UCM_XSK_MAX_QUEUES + UCM_CPUMAP_MAX_WORKERS], n = 0;
	const char *who[UCM_XSK_MAX_QUEUES + UCM_CPUMAP_MAX_WORKERS];
	const char *flag = c->poll ? "--poll" : "--spin-us";
	int online = cpu_online_count();

	if (!c->n_rx_cpus) {
		fprintf(stderr, "ucpumapd: %s needs --rx-cpus: a polling RX thread holds its CPU "
			"while it looks, so each needs one of its own (e.g. --rx-cpus 2 for one queue, "
			"the CPU of its interrupt on a NIC)\n", flag);
		return -1;
	}
	for (int q = 0; q < c->nqueues; q++) {
		cpus[n] = c->rx_cpus[q % c->n_rx_cpus];
		who[n++] = "an RX thread";
	}
	for (int w = 0; !c->pass && w < nwk; w++) {
		cpus[n] = wk[w];
		who[n++] = "a worker";
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (cpus[i] == cpus[j]) {
				fprintf(stderr, "ucpumapd: %s: %s and %s would share CPU %d; a "
					"polling thread needs a CPU of its own: give --rx-cpus (one per "
					"queue) and --cpus that do not overlap\n", flag, who[j], who[i],
					cpus[i]);
				return -1;
			}
	if (n >= online) {
		fprintf(stderr, "ucpumapd: %s: %d polling threads would hold all %d CPUs of this "
			"machine, and the kernel's receive and the applications need one to run on: "
			"poll with CPUs to spare, or leave %s out (its threads then sleep when "
			"idle)\n", flag, n, online, flag);
		return -1;
	}
	say_not_isolated(cpus, n);
	return 0;
}

void rx_thread_seen(struct daemon *d, uint32_t idx)
{
	if (idx >= UCM_XSK_MAX_QUEUES)
		return;
	d->rx_thr[idx] = pthread_self();
	/* R: pairs with the acquire in rx_cpu_ns(); start's own order comes
	 * first (thread_init runs before it returns). */
	__atomic_store_n(&d->rx_thr_set[idx], true, __ATOMIC_RELEASE);
}

int rx_thread_cpu_ns(const struct daemon *d, uint32_t i, uint64_t *ns)
{
	struct timespec ts;
	clockid_t cid;

	/* Once the datapath stopped, its threads are joined: no clock. */
	if (i >= UCM_XSK_MAX_QUEUES || d->rx_joined ||
	    !__atomic_load_n(&d->rx_thr_set[i], __ATOMIC_ACQUIRE) ||
	    pthread_getcpuclockid(d->rx_thr[i], &cid) || clock_gettime(cid, &ts))
		return -1;
	*ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	return 0;
}

uint64_t rx_cpu_ns(struct daemon *d)
{
	uint64_t sum = 0;

	/* A thread whose clock cannot be read keeps its last reading. */
	for (uint32_t i = 0; i < UCM_XSK_MAX_QUEUES; i++) {
		rx_thread_cpu_ns(d, i, &d->rx_cpu_seen[i]);
		sum += d->rx_cpu_seen[i];
	}
	return sum;
}
