// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device's NUMA node and the CPUs near it (cpus.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/cpus.h"

/* Reads the first line of @path into @buf. Return: 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = ferror(f) ? -EIO : -EINVAL;
	fclose(f);
	return err;
}

int ucm_dev_numa_node(const char *ifname)
{
	char path[128], line[32], *end;
	long node;

	if (!ifname || !*ifname || strchr(ifname, '/'))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", ifname);
	if (read_line(path, line, sizeof(line)))
		return -1;
	node = strtol(line, &end, 10);
	/* -1 is what the kernel says for a device on no node. */
	if (end == line || node < 0 || node >= CPU_SETSIZE)
		return -1;
	return (int)node;
}

int ucm_parse_cpulist(const char *s, cpu_set_t *set)
{
	char *end;
	long a, b;

	CPU_ZERO(set);
	while (*s && *s != '\n') {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return -EINVAL;
			b = strtol(s, &end, 10);
		}
		if (a > b || b >= CPU_SETSIZE)
			return -EINVAL;
		for (; a <= b; a++)
			CPU_SET((int)a, set);
		s = end;
		if (*s == ',' && (s[1] < '0' || s[1] > '9'))
			return -EINVAL;		/* a comma ends nothing */
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

int ucm_node_cpus(int node, cpu_set_t *set)
{
	/* A line of up to CPU_SETSIZE CPUs, each apart: 1024 * 5 bytes. */
	char path[96], line[5 * CPU_SETSIZE + 2];
	int err;

	if (node < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
	err = read_line(path, line, sizeof(line));
	if (err == -EINVAL) {		/* empty: a node without CPUs */
		CPU_ZERO(set);
		return 0;
	}
	if (err)
		return err;
	return ucm_parse_cpulist(line, set);
}

uint32_t ucm_pick_worker_cpus(const cpu_set_t *allowed, long online,
			      const cpu_set_t *near, int *cpus, uint32_t max,
			      bool *narrowed)
{
	bool some_near = false, some_far = false;
	uint32_t n = 0;
	int i, first;

	if (narrowed)
		*narrowed = false;
	if (!max)
		return 0;
	if (online < 1)
		online = 1;
	if (online > CPU_SETSIZE)
		online = CPU_SETSIZE;
	first = online > 1 ? 1 : 0;
	for (i = first; near && i < online; i++) {
		if (!CPU_ISSET(i, allowed))
			continue;
		if (CPU_ISSET(i, near))
			some_near = true;
		else
			some_far = true;
	}
	for (i = first; i < online && n < max; i++)
		if (CPU_ISSET(i, allowed) && (!some_near || CPU_ISSET(i, near)))
			cpus[n++] = i;
	if (!n)
		cpus[n++] = 0;
	if (narrowed)
		*narrowed = some_near && some_far;
	return n;
}
