/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a process holds, counted, for the tests that look for what grows
 * (lifecycle.c, setupfail.c): its open files, resident memory, threads and
 * the bytes malloc handed out; the BPF programs, maps and links on the
 * system (by id) but those another process holds open (a test running
 * beside ours loads and unloads its own); the network namespace's devices.
 */
#ifndef UCM_TEST_CENSUS_H
#define UCM_TEST_CENSUS_H

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

enum { CENSUS_PROG, CENSUS_MAP, CENSUS_LINK, CENSUS__KINDS };

/* BPF object ids by kind; more than fit are left out. */
#define CENSUS_IDS_MAX	1024

struct census_ids {
	unsigned int n[CENSUS__KINDS];
	__u32 id[CENSUS__KINDS][CENSUS_IDS_MAX];
};

static inline void census_ids_add(struct census_ids *s, int kind, __u32 id)
{
	if (s->n[kind] < CENSUS_IDS_MAX)
		s->id[kind][s->n[kind]++] = id;
}

/* The ids file @path (an fdinfo) names: a link's names its program too. */
static inline void census_fdinfo(struct census_ids *s, const char *path)
{
	static const char *const keys[CENSUS__KINDS] = { "\nprog_id:", "\nmap_id:",
							 "\nlink_id:" };
	char buf[1024];
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return;
	buf[len] = 0;
	for (int k = 0; k < CENSUS__KINDS; k++) {
		const char *at = strstr(buf, keys[k]);

		if (at)
			census_ids_add(s, k, strtoul(at + strlen(keys[k]), NULL, 10));
	}
}

/* The BPF objects processes other than this one hold open, added to @s. */
static inline void census_theirs(struct census_ids *s)
{
	char self[16], path[64];
	struct dirent *p, *f;
	DIR *proc, *fds;

	snprintf(self, sizeof(self), "%d", getpid());
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9' || !strcmp(p->d_name, self))
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/fdinfo", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%.16s/fdinfo/%.16s", p->d_name,
				 f->d_name);
			census_fdinfo(s, path);
		}
		closedir(fds);
	}
	closedir(proc);
}

/* The BPF objects on the system, by walking their ids. */
static inline void census_all(struct census_ids *s)
{
	static int (*const next[CENSUS__KINDS])(__u32, __u32 *) = {
		bpf_prog_get_next_id, bpf_map_get_next_id, bpf_link_get_next_id,
	};

	for (int k = 0; k < CENSUS__KINDS; k++) {
		__u32 id = 0;

		s->n[k] = 0;
		while (!next[k](id, &id))
			census_ids_add(s, k, id);
	}
}

/* Objects of @kind in @all but not in @theirs. */
static inline long census_ours(const struct census_ids *all, const struct census_ids *theirs,
			       int kind)
{
	long n = 0;

	for (unsigned int i = 0; i < all->n[kind]; i++) {
		unsigned int j = 0;

		while (j < theirs->n[kind] && theirs->id[kind][j] != all->id[kind][i])
			j++;
		n += j == theirs->n[kind];
	}
	return n;
}

static inline void census_take(struct census *c)
{
	static struct census_ids all, theirs;
	struct if_nameindex *ifs = if_nameindex(), *i;

	c->devs = ifs ? 0 : -1;
	for (i = ifs; i && i->if_index; i++)
		c->devs++;
	if (ifs)
		if_freenameindex(ifs);
	c->fds = census_dir("/proc/self/fd");
	c->rss_kb = census_rss_kb();
	/* Theirs: held before the walk (closed meanwhile) or after it (made
	 * meanwhile). */
	memset(theirs.n, 0, sizeof(theirs.n));
	census_theirs(&theirs);
	census_all(&all);
	census_theirs(&theirs);
	c->progs = census_ours(&all, &theirs, CENSUS_PROG);
	c->maps = census_ours(&all, &theirs, CENSUS_MAP);
	c->links = census_ours(&all, &theirs, CENSUS_LINK);
	c->threads = census_dir("/proc/self/task");
	c->heap = mallinfo2().uordblks;
}

/* Nothing left from @a to @b (memory aside): the same files, devices and
 * threads, and no more BPF objects. Fewer are another process's, gone
 * between its last fd and the kernel's freeing, when none of ours are
 * open at @a. */
static inline bool census_none_left(const struct census *a, const struct census *b)
{
	return a->fds == b->fds && b->progs <= a->progs && b->maps <= a->maps &&
	       b->links <= a->links && a->devs == b->devs && a->threads == b->threads;
}

#endif /* UCM_TEST_CENSUS_H */
