// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPUs this process may run on (cpu.h).
 */
#include <errno.h>
#include <sched.h>

#include "core/cpu.h"

/* Mask lengths asked for past CPU_SETSIZE, doubling: a host has fewer
 * than 2^20 possible CPUs (CONFIG_NR_CPUS is at most 8192 today). */
#define AFFINITY_CPUS_MAX	(1 << 20)

int ucm_affinity(pid_t pid, cpu_set_t *set)
{
	size_t ncpus, size;
	cpu_set_t *big;
	int err = 0;

	if (!sched_getaffinity(pid, sizeof(*set), set))
		return 0;
	if (errno != EINVAL)
		return -errno;
	for (ncpus = 2 * CPU_SETSIZE; ncpus <= AFFINITY_CPUS_MAX; ncpus *= 2) {
		big = CPU_ALLOC(ncpus);
		if (!big)
			return -ENOMEM;
		size = CPU_ALLOC_SIZE(ncpus);
		if (!sched_getaffinity(pid, size, big)) {
			CPU_ZERO(set);
			for (int c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET_S(c, size, big))
					CPU_SET(c, set);
			CPU_FREE(big);
			return 0;
		}
		err = -errno;
		CPU_FREE(big);
		if (err != -EINVAL)
			return err;
	}
	return err;
}

bool ucm_cpu_allowed(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE || ucm_affinity(0, &set))
		return false;
	return CPU_ISSET(cpu, &set);
}
