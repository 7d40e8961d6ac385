// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd: --poll, where the RX threads go (--rx-cpus), and their CPU
 * time.
 *
 * --poll keeps the RX threads and the workers looking for packets for
 * --spin-us (its longest, UCM_SPIN_US_MAX, unless given) after the last
 * one before they sleep (a --spin-us of its own is the same, shorter;
 * --busy-poll alone, the RX threads' for UCM_DP_BUSY_POLL_US), and sets
 * --busy-poll: the RX threads' looks run the device's NAPI where the
 * socket has one (the library says which). While traffic is recent nobody
 * sleeps, so no packet waits for a wake-up; an idle millisecond puts them
 * back to sleep, as NAPI's busy polling falls back to interrupts. A
 * polling thread holds its CPU for as long as it looks, so whatever else
 * runs there, the packet's other half included (the kernel's receive, the
 * application), waits behind it: poll_check() refuses a polling thread
 * that would share its CPU with another of ours, and polling threads that
 * would leave the machine no CPU of its own, and says which CPUs are not
 * isolated from the scheduler's other tasks. Busy polling prefers the
 * threads' polls to the device's interrupts only while these are deferred
 * (sysfs): poll_napi_hint() says how when they are not; it never writes
 * them, they are the operator's.
 *
 * The RX threads' CPU time is each one's CPU clock
 * (pthread_getcpuclockid()): what the statistics line gives as their busy
 * share, beside the workers' (which the library counts as time not
 * asleep). A polling thread's is its whole CPU while it polls.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "journal.h"
#include "util.h"

/* The CPUs the kernel keeps out of its scheduling domains (isolcpus=), as
 * a bit set of the first 1024; none when the file is missing or empty. A
 * cpuset partition of their own isolates too, but is not listed there. */
static void isolated_cpus(uint64_t *set, size_t words)
{
	char *buf = NULL, *tok, *save = NULL;
	FILE *f = fopen("/sys/devices/system/cpu/isolated", "r");
	size_t cap = 0;

	memset(set, 0, words * sizeof(*set));
	if (!f)
		return;
	/* The whole line, however long a list of single CPUs makes it. */
	if (getline(&buf, &cap, f) < 0) {
		free(buf);
		fclose(f);
		return;
	}
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
	free(buf);
}

/* Each of the @n CPUs of @cpus not in the kernel's isolated list, said in
 * one line. */
static void say_not_isolated(const int *cpus, int n)
{
	char list[1024] = "";
	uint64_t iso[16];
	size_t len = 0;

	isolated_cpus(iso, 16);
	for (int i = 0; i < n && len < sizeof(list); i++) {
		if (cpus[i] < 1024 && (iso[cpus[i] / 64] >> (cpus[i] % 64) & 1))
			continue;
		len += snprintf(list + len, sizeof(list) - len, "%s%d", len ? "," : "", cpus[i]);
	}
	if (len)
		out_warn("ucpumapd: polling on CPU(s) %s not isolated (not in "
			 "/sys/devices/system/cpu/isolated, which isolcpus= fills; a cpuset "
			 "partition is not looked at): a task the scheduler puts there waits "
			 "behind a polling thread, and the thread behind it (isolated CPUs are "
			 "left out of every process's mask: start ucpumapd under taskset -c, or "
			 "give its unit CPUAffinity=, with them)\n", list);
}

/* Which flag polls, for the messages: --poll's spin, a --spin-us of its
 * own, or --busy-poll's look alone (the RX threads', UCM_DP_BUSY_POLL_US
 * after traffic; the workers then sleep when idle). */
static const char *poll_flag(const struct cfg *c)
{
	return c->poll ? "--poll" : c->spin_us ? "--spin-us" : "--busy-poll";
}

int poll_check(struct cfg *c, const int *wk, int nwk)
{
	int cpus[UCM_XSK_MAX_QUEUES + UCM_CPUMAP_MAX_WORKERS], n = 0, npoll = 0;
	int pcpus[UCM_XSK_MAX_QUEUES + UCM_CPUMAP_MAX_WORKERS];
	const char *who[UCM_XSK_MAX_QUEUES + UCM_CPUMAP_MAX_WORKERS];
	bool polls[UCM_XSK_MAX_QUEUES + UCM_CPUMAP_MAX_WORKERS];
	const char *flag = poll_flag(c);
	cpu_set_t free_set;
	bool wk_poll = c->poll || c->spin_us; /* the workers' spin */
	char note[320] = "";
	size_t len;

	/* Without --cpus the workers take the library's default CPUs, every
	 * one but CPU 0 on most machines: the messages name them. */
	if (!c->ncpus && !c->pass && nwk > 0) {
		len = snprintf(note, sizeof(note), " (the workers, without --cpus, are on CPU(s) ");
		for (int w = 0; w < nwk && len < sizeof(note); w++)
			len += snprintf(note + len, sizeof(note) - len, "%s%d", w ? "," : "", wk[w]);
		if (len < sizeof(note))
			snprintf(note + len, sizeof(note) - len, ": --cpus places them)");
	}

	if (!c->n_rx_cpus) {
		fprintf(stderr, "ucpumapd: %s needs --rx-cpus: a polling RX thread holds its CPU "
			"while it looks, so each needs one of its own (e.g. --rx-cpus 2 for one queue, "
			"the CPU of its interrupt on a NIC)\n", flag);
		return -1;
	}
	for (int q = 0; q < c->nqueues; q++) {
		cpus[n] = c->rx_cpus[q % c->n_rx_cpus];
		polls[n] = true;
		who[n++] = "an RX thread";
	}
	for (int w = 0; !c->pass && w < nwk; w++) {
		cpus[n] = wk[w];
		polls[n] = wk_poll;
		who[n++] = "a worker";
	}
	/* A thread that sleeps on a polling thread's CPU waits behind it. */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (cpus[i] == cpus[j] && (polls[i] || polls[j])) {
				fprintf(stderr, "ucpumapd: %s: %s and %s would share CPU %d; a "
					"polling thread needs a CPU of its own: give --rx-cpus (one per "
					"queue) and --cpus that do not overlap%s\n", flag, who[j], who[i],
					cpus[i], note);
				return -1;
			}
	for (int i = 0; i < n; i++)
		if (polls[i])
			pcpus[npoll++] = cpus[i];
	/* The CPUs ucpumapd may run on (taskset, a cpuset): its own other
	 * threads (control, metrics, next hops) are not pinned and need one
	 * that no thread polls, as do the kernel's receive and the rest. */
	if (cpu_affinity(0, &free_set))
		CPU_ZERO(&free_set);
	for (int i = 0; i < npoll; i++)
		if (pcpus[i] < CPU_SETSIZE)
			CPU_CLR(pcpus[i], &free_set);
	if (!CPU_COUNT(&free_set)) {
		fprintf(stderr,
			"ucpumapd: %s: %d polling threads would hold every CPU ucpumapd may run "
			"on (%d online; taskset or a cpuset may allow fewer), and its other threads, "
			"the kernel's receive and the applications need one to run on: poll with CPUs "
			"to spare, or leave %s out (its threads then sleep when idle)%s\n",
			flag, npoll, cpu_online_count(), flag, note);
		return -1;
	}
	say_not_isolated(pcpus, npoll);
	c->poll_free = free_set;
	return 0;
}

void rx_cpus_said(const struct cfg *c)
{
	char extra[256] = "";
	size_t len = 0;

	if (c->n_rx_cpus <= c->nqueues)
		return;
	for (int i = c->nqueues; i < c->n_rx_cpus && len < sizeof(extra); i++)
		len += snprintf(extra + len, sizeof(extra) - len, "%s%d", len ? "," : "",
				c->rx_cpus[i]);
	out_warn("ucpumapd: --rx-cpus lists %d CPUs for %d queue%s: CPU(s) %s go unused "
		 "(--queues names the queues; RX thread i takes the i-th CPU)\n",
		 c->n_rx_cpus, c->nqueues, c->nqueues == 1 ? "" : "s", extra);
}

int poll_confine(const struct cfg *c)
{
	if (c->poll_placed <= 0)
		return 0;
	/* This thread's mask is what the threads it makes from now on start
	 * with; the datapath's are pinned, and the resolvers, which
	 * ucm_dp__create() started, narrow their own (daemon_thread()). */
	if (sched_setaffinity(0, sizeof(c->poll_free), &c->poll_free)) {
		fprintf(stderr, "ucpumapd: cannot keep the threads that do not poll off the polling CPUs: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* A sysfs number of @dev's, or -1 when it cannot be read. */
static long dev_sysfs(const char *dev, const char *name)
{
	char path[128];
	long v;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", dev, name);
	return file_num(path, &v) ? -1 : v;
}

/* The gro_flush_timeout poll_napi_hint() suggests, in ns: what the NIC
 * runbook gives, or the threads' look when that is shorter (a deferred
 * interrupt must come back within it). */
#define POLL_FLUSH_NS	200000

void poll_napi_hint(const struct cfg *c, unsigned int spin_us)
{
	long defer = dev_sysfs(c->dev, "napi_defer_hard_irqs");
	long flush = dev_sysfs(c->dev, "gro_flush_timeout");
	unsigned long want = (unsigned long)spin_us * 1000 < POLL_FLUSH_NS ?
			     (unsigned long)spin_us * 1000 : POLL_FLUSH_NS;

	char path[128];

	/* Unreadable (before Linux 5.10 the first is missing): nothing to say. */
	if (defer < 0 || flush < 0)
		return;
	/* A virtual device (veth: no device behind it) has no interrupts to
	 * defer, and copy mode's socket there no NAPI to busy-poll: the
	 * writes would gain nothing. */
	snprintf(path, sizeof(path), "/sys/class/net/%s/device", c->dev);
	if (access(path, F_OK))
		return;
	if (defer && flush) {
		/* Deferred past the look: what comes after it waits for
		 * the timer. */
		if ((unsigned long)flush > (unsigned long)spin_us * 1000)
			out_warn("ucpumapd: %s busy-polls %s for %u us at a time, and its interrupts are deferred for %ld ns (/sys/class/net/%s/gro_flush_timeout): a packet after a look waits up to that long. As root: echo %lu > /sys/class/net/%s/gro_flush_timeout, or a longer --spin-us\n",
				 poll_flag(c), c->dev, spin_us, flush, c->dev,
				 (unsigned long)spin_us * 1000, c->dev);
		return;
	}
	out_warn("ucpumapd: %s busy-polls %s, whose interrupts are not deferred "
		"(/sys/class/net/%s/napi_defer_hard_irqs %ld, /sys/class/net/%s/gro_flush_timeout "
		"%ld): they keep running its NAPI beside the polls (SO_PREFER_BUSY_POLL holds them "
		"off only while deferred). To defer them (as root; 0 and 0 undo it): echo 2 > "
		"/sys/class/net/%s/napi_defer_hard_irqs; echo %lu > "
		"/sys/class/net/%s/gro_flush_timeout (ns, within the RX threads' %u us look)\n",
		poll_flag(c), c->dev, c->dev, defer, c->dev, flush, c->dev,
		want, c->dev, spin_us);
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
