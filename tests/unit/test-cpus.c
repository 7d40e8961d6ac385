// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The default worker CPUs (lib/io/cpus.c, ucm_dp__default_cpus()): the
 * kernel's CPU lists parsed, the pick with and without a device's node
 * (synthetic sets: this machine has one node and veth has none), and the
 * library's default on this machine against the rule written out here.
 */
#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "io/cpus.h"
#include "ucpumap/cpumap.h"
#include "ucpumap/dp.h"
#include "ucpumap/log.h"
#include "utest.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* @set as "0-3,8"-like text, for messages. */
static const char *set_str(const cpu_set_t *set)
{
	static char buf[256];
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < CPU_SETSIZE && len < sizeof(buf) - 8; i++)
		if (CPU_ISSET(i, set))
			len += snprintf(buf + len, sizeof(buf) - len, "%s%d", len ? "," : "", i);
	return buf;
}

static void set_of(cpu_set_t *set, const int *cpus, int n)
{
	CPU_ZERO(set);
	while (n--)
		CPU_SET(cpus[n], set);
}

static int test_parse_cpulist(void)
{
	static const struct {
		const char *s;
		int cpus[8], n;
	} good[] = {
		{ "0\n", { 0 }, 1 },
		{ "0-3\n", { 0, 1, 2, 3 }, 4 },
		{ "0-1,8,10-11", { 0, 1, 8, 10, 11 }, 5 },
		{ "5-5", { 5 }, 1 },
		{ "\n", { 0 }, 0 },		/* a node without CPUs */
		{ "", { 0 }, 0 },
		{ "1023", { 1023 }, 1 },
		{ "0-3\nx", { 0, 1, 2, 3 }, 4 },	/* one line: the rest unread */
	};
	static const char *const bad[] = {
		"a", "0-", "-1", "3-1", "0,,1", "0 1", "1024", "0-1024", "1,x", "0,",
		"99999999999999999999", "0-99999999999999999999",
	};
	cpu_set_t set, want;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		UT_ASSERT(!ucm_parse_cpulist(good[i].s, &set), "'%s' refused", good[i].s);
		set_of(&want, good[i].cpus, good[i].n);
		UT_ASSERT(CPU_EQUAL(&set, &want), "'%s' gave %s", good[i].s, set_str(&set));
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int err = ucm_parse_cpulist(bad[i], &set);

		UT_ASSERT(err == -EINVAL, "'%s' taken (%d: %s)", bad[i], err, set_str(&set));
	}
	return 0;
}

/* The pick: all allowed CPUs but 0, narrowed to the device's node when it
 * has some of them, CPU 0 alone when nothing is left. */
static int test_pick(void)
{
	static const struct {
		const char *what;
		int allowed[8], nallowed;
		long online;
		int near[8], nnear;	/* -1: no node */
		int want[8], nwant;
		bool narrowed;
	} cases[] = {
		{ "no node", { 0, 1, 2, 3 }, 4, 4, { 0 }, -1, { 1, 2, 3 }, 3, false },
		{ "node 1 of two", { 0, 1, 2, 3, 4, 5, 6, 7 }, 8, 8, { 4, 5, 6, 7 }, 4,
		  { 4, 5, 6, 7 }, 4, true },
		{ "node 0 of two: CPU 0 stays out", { 0, 1, 2, 3, 4, 5, 6, 7 }, 8, 8,
		  { 0, 1, 2, 3 }, 4, { 1, 2, 3 }, 3, true },
		{ "one node: all on it", { 0, 1, 2, 3 }, 4, 4, { 0, 1, 2, 3 }, 4, { 1, 2, 3 }, 3, false },
		{ "the node's only CPU is 0: all others", { 0, 1, 2, 3 }, 4, 4, { 0 }, 1,
		  { 1, 2, 3 }, 3, false },
		{ "the node's CPUs not allowed: all others", { 0, 1, 2 }, 3, 8, { 4, 5 }, 2,
		  { 1, 2 }, 2, false },
		{ "a node without CPUs", { 0, 1, 2, 3 }, 4, 4, { 0 }, 0, { 1, 2, 3 }, 3, false },
		{ "node and affinity", { 0, 2, 5, 6 }, 4, 8, { 4, 5, 6, 7 }, 4, { 5, 6 }, 2, true },
		{ "one CPU", { 0 }, 1, 1, { 0 }, 1, { 0 }, 1, false },
		{ "only CPU 0 allowed of four", { 0 }, 1, 4, { 0 }, -1, { 0 }, 1, false },
		{ "past online", { 0, 1, 2, 3 }, 4, 2, { 0 }, -1, { 1 }, 1, false },
	};
	cpu_set_t allowed, near;
	int got[UCM_CPUMAP_MAX_WORKERS];
	bool narrowed;
	uint32_t n, j;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		set_of(&allowed, cases[i].allowed, cases[i].nallowed);
		if (cases[i].nnear >= 0)
			set_of(&near, cases[i].near, cases[i].nnear);
		n = ucm_pick_worker_cpus(&allowed, cases[i].online,
					 cases[i].nnear >= 0 ? &near : NULL, got, ARRAY_SIZE(got),
					 &narrowed);
		UT_ASSERT(n == (uint32_t)cases[i].nwant, "%s: %u CPUs, not %d", cases[i].what, n,
			  cases[i].nwant);
		UT_ASSERT(narrowed == cases[i].narrowed, "%s: narrowed %d", cases[i].what, narrowed);
		for (j = 0; j < n; j++)
			UT_ASSERT(got[j] == cases[i].want[j], "%s: CPU %u is %d, not %d",
				  cases[i].what, j, got[j], cases[i].want[j]);
	}
	/* At most max, the lowest first. */
	set_of(&allowed, (int[]){ 0, 1, 2, 3 }, 4);
	n = ucm_pick_worker_cpus(&allowed, 4, NULL, got, 2, NULL);
	UT_ASSERT(n == 2 && got[0] == 1 && got[1] == 2, "max 2: %u CPUs", n);
	UT_ASSERT(ucm_pick_worker_cpus(&allowed, 4, NULL, got, 0, NULL) == 0, "max 0");
	/* Narrowed past the first max candidates: still said. */
	CPU_ZERO(&allowed);
	CPU_ZERO(&near);
	for (j = 0; j < 256; j++) {
		CPU_SET(j, &allowed);
		if (j >= 128)
			CPU_SET(j, &near);
	}
	n = ucm_pick_worker_cpus(&allowed, 256, &near, got, ARRAY_SIZE(got), &narrowed);
	UT_ASSERT(n == ARRAY_SIZE(got) && got[0] == 128 && narrowed,
		  "node 1 of 256 CPUs: %u CPUs from %d, narrowed %d", n, got[0], narrowed);
	return 0;
}

/* ucm_dp__default_cpus() here, where no interface has a node (lo has no
 * device; a machine of one node has all on it): the rule without one. */
static int test_default_cpus(void)
{
	const char *const names[] = { NULL, "lo", "no-such-if", "../../x" };
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int want[UCM_CPUMAP_MAX_WORKERS], got[UCM_CPUMAP_MAX_WORKERS];
	uint32_t nwant = 0, k;
	cpu_set_t allowed;
	size_t i;
	int n, c;

	UT_ASSERT(!sched_getaffinity(0, sizeof(allowed), &allowed), "affinity: %s",
		  strerror(errno));
	for (c = online > 1 ? 1 : 0; c < online && nwant < ARRAY_SIZE(want); c++)
		if (CPU_ISSET(c, &allowed))
			want[nwant++] = c;
	if (!nwant)
		want[nwant++] = 0;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		n = ucm_dp__default_cpus(names[i], got, ARRAY_SIZE(got));
		UT_ASSERT(n == (int)nwant, "%s: %d CPUs, not %u", names[i] ? names[i] : "NULL",
			  n, nwant);
		for (k = 0; k < nwant; k++)
			UT_ASSERT(got[k] == want[k], "%s: CPU %u is %d, not %d",
				  names[i] ? names[i] : "NULL", k, got[k], want[k]);
	}
	UT_ASSERT(ucm_dp__default_cpus("lo", NULL, 4) == -EINVAL, "no array taken");
	UT_ASSERT(ucm_dp__default_cpus("lo", got, 0) == -EINVAL, "max 0 taken");
	UT_ASSERT(ucm_dev_numa_node("lo") == -1, "lo has a node");
	UT_ASSERT(ucm_dev_numa_node("../../x") == -1, "a path taken for a name");
	UT_ASSERT(ucm_node_cpus(1023, &allowed) == -ENOENT, "node 1023 exists here");
	UT_ASSERT(ucm_node_cpus(-1, &allowed) == -ENOENT, "node -1");
	return 0;
}

/* Whether CPU @c is online (cpu0 may have no online file: it is). */
static bool cpu_online(int c)
{
	char path[64];
	FILE *f;
	int v = 1;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", c);
	if (access(path, F_OK))
		return false;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", c);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v == 1;
}

/* Node 0's list as sysfs has it: every CPU online here is on it when the
 * kernel has NUMA (this machine has one node). */
static int test_node0(void)
{
	cpu_set_t set;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int err = ucm_node_cpus(0, &set), c;

	if (err == -ENOENT) {
		ut_skip_reason("no /sys/devices/system/node/node0: a kernel without NUMA");
		return UT_SKIP;
	}
	UT_ASSERT(!err, "node 0: %s", strerror(-err));
	if (!access("/sys/devices/system/node/node1", F_OK)) {
		ut_skip_reason("more than one node: which CPUs node 0 has is the machine's (parsed: %s)",
			       set_str(&set));
		return UT_SKIP;
	}
	/* One node: every CPU online is on it. */
	for (c = 0; c < CPU_SETSIZE && online > 0; c++) {
		if (!cpu_online(c))
			continue;
		online--;
		UT_ASSERT(CPU_ISSET(c, &set), "one node, and CPU %d is not on it (%s)", c,
			  set_str(&set));
	}
	return 0;
}

/* The affinity mask as the kernel has it, the calling thread's: the whole
 * one, then pinned to one CPU. (A host whose mask is longer than
 * CPU_SETSIZE, where the second ask runs, is not to be had here.) */
static int test_affinity(void)
{
	cpu_set_t sys, got, one;
	int c, first = -1, n = 0;

	UT_ASSERT(!sched_getaffinity(0, sizeof(sys), &sys), "sched_getaffinity");
	UT_ASSERT(!ucm_affinity(0, &got) && CPU_EQUAL(&sys, &got), "the mask: %s, want %s",
		  set_str(&got), set_str(&sys));
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &sys) && !n++)
			first = c;
	UT_ASSERT(ucm_cpu_allowed(first) && !ucm_cpu_allowed(-1) &&
		  !ucm_cpu_allowed(CPU_SETSIZE), "CPU %d, -1 or CPU_SETSIZE", first);
	UT_ASSERT(ucm_affinity(-1, &got) == -EINVAL || ucm_affinity(-1, &got) == -ESRCH,
		  "pid -1 taken");
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	UT_ASSERT(!sched_setaffinity(0, sizeof(one), &one), "pin to %d", first);
	c = ucm_affinity(0, &got);
	if (n > 1) {
		for (int o = first + 1; o < CPU_SETSIZE; o++)
			if (CPU_ISSET(o, &sys)) {
				UT_ASSERT(!ucm_cpu_allowed(o), "CPU %d allowed, pinned to %d",
					  o, first);
				break;
			}
	}
	UT_ASSERT(!sched_setaffinity(0, sizeof(sys), &sys), "unpin");
	UT_ASSERT(!c && CPU_EQUAL(&got, &one), "pinned to %d: %s", first, set_str(&got));
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_parse_cpulist),
	UT_CASE(test_pick),
	UT_CASE(test_default_cpus),
	UT_CASE(test_node0),
	UT_CASE(test_affinity),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
