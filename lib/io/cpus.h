/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where a device is, and which CPUs are near it: the device's NUMA node
 * (as page_pool takes its pages from the device's node) and the default
 * worker CPUs drawn from it. Read once at set-up from sysfs: no hot path.
 * Internal to lib/ and its tests.
 */
#ifndef UCM_IO_CPUS_H
#define UCM_IO_CPUS_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The NUMA node of @ifname's device (/sys/class/net/IF/device/numa_node),
 * or -1: none known (a virtual device, a machine without NUMA, an
 * interface that does not exist).
 */
int ucm_dev_numa_node(const char *ifname);

/*
 * The CPUs of NUMA node @node (/sys/devices/system/node/nodeN/cpulist)
 * into @set. Return: 0, -ENOENT (no such node), or -EINVAL (a list that
 * does not parse).
 */
int ucm_node_cpus(int node, cpu_set_t *set);

/*
 * A kernel CPU list ("0-3,8,10-11", a newline allowed at the end, empty
 * for a node without CPUs) into @set. Return: 0 or -EINVAL (anything
 * else, or a CPU past CPU_SETSIZE).
 */
int ucm_parse_cpulist(const char *s, cpu_set_t *set);

/*
 * The default worker CPUs into @cpus (at most @max, in increasing order):
 * the CPUs of @allowed below @online but CPU 0, which takes the RX work
 * (and, on veth, the sender's NAPI); of those, only the ones in @near when
 * @near (the device's node) holds any; CPU 0 alone when nothing else is
 * left. *@narrowed (when not NULL): @near left some of them out. Return:
 * how many, at least 1 when @max is.
 */
uint32_t ucm_pick_worker_cpus(const cpu_set_t *allowed, long online,
			      const cpu_set_t *near, int *cpus, uint32_t max,
			      bool *narrowed);

#endif /* UCM_IO_CPUS_H */
