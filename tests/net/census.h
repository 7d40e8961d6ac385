/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a process holds, counted, for the tests that look for what grows
 * (lifecycle.c, setupfail.c): its open files, resident memory, threads and
 * the bytes malloc handed out; the BPF programs, maps and links on the
 * system (by id); the network namespace's devices.
 */
#ifndef UCM_TEST_CENSUS_H
#define UCM_TEST_CENSUS_H

#include <dirent.h>
#include <malloc.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>

#include <bpf/bpf.h>

struct census {
	long fds, rss_kb, progs, maps, links, devs, threads;
	size_t heap;
};

static inline long census_dir(const char *path)
{
	struct dirent *e;
	long n = 0;
	DIR *d = opendir(path);

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static inline long census_rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Objects of one kind on the system, by walking their ids. */
static inline long census_ids(int (*next)(__u32, __u32 *))
{
	__u32 id = 0;
	long n = 0;

	while (!next(id, &id))
		n++;
	return n;
}

static inline void census_take(struct census *c)
{
	struct if_nameindex *ifs = if_nameindex(), *i;

	c->devs = ifs ? 0 : -1;
	for (i = ifs; i && i->if_index; i++)
		c->devs++;
	if (ifs)
		if_freenameindex(ifs);
	c->fds = census_dir("/proc/self/fd");
	c->rss_kb = census_rss_kb();
	c->progs = census_ids(bpf_prog_get_next_id);
	c->maps = census_ids(bpf_map_get_next_id);
	c->links = census_ids(bpf_link_get_next_id);
	c->threads = census_dir("/proc/self/task");
	c->heap = mallinfo2().uordblks;
}

/* The same objects held (memory aside). */
static inline bool census_same(const struct census *a, const struct census *b)
{
	return a->fds == b->fds && a->progs == b->progs && a->maps == b->maps &&
	       a->links == b->links && a->devs == b->devs && a->threads == b->threads;
}

#endif /* UCM_TEST_CENSUS_H */
