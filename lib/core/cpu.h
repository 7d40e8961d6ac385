/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CPUs this process may run on, read as the kernel holds them.
 * Internal to lib/, its tests and the programs (apps/common/util.c).
 */
#ifndef UCM_CORE_CPU_H
#define UCM_CORE_CPU_H

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * Thread or process @pid's affinity mask (0: the calling thread), its CPUs
 * below CPU_SETSIZE, into @set. sched_getaffinity() refuses a mask
 * shorter than the kernel's, whose length is the host's possible CPUs
 * (past 1024 on the largest): then asked again with one that long. CPUs
 * past CPU_SETSIZE are left out, as every CPU list here refuses them.
 * Set-up only: a system call, an allocation. Return: 0 or -errno.
 */
int ucm_affinity(pid_t pid, cpu_set_t *set);

/*
 * A thread of this process may be pinned to @cpu: it is online and in the
 * calling thread's affinity mask, which the threads it makes inherit
 * (what taskset or a cgroup's cpuset left it, or the caller narrowed with
 * pthread_setaffinity_np(); a CPU going offline leaves the mask).
 * Set-up only.
 */
bool ucm_cpu_allowed(int cpu);

#endif /* UCM_CORE_CPU_H */
