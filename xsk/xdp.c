// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loading and configuring the embedded XDP object (bpf/steer.bpf.c, built
 * by clang and linked into the library as bytes by bpf_obj.S).
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>

#include "core/internal.h"
#include "ucpumap/xdp.h"
#include "port_internal.h"

/* The object file's bytes, from bpf_obj.S. */
extern const char ucm_steer_bpf_obj[] __attribute__((visibility("hidden")));
extern const char ucm_steer_bpf_obj_end[] __attribute__((visibility("hidden")));

/* The kernel's cpumap rejects larger rings (-EOVERFLOW). */
#define UCM_KERNEL_CPUMAP_QSIZE_MAX	16384

struct ucm_xdp {
	struct bpf_object *obj;
	int attached_ifindex;		/* 0: not attached */
	int link_fd;			/* the XDP link; -1: netlink, or none */
	int attached_fd;
	uint32_t attached_mode;		/* XDP_FLAGS_DRV_MODE or _SKB_MODE */
	/* Another's program that UCM_XDP_ATTACH_REPLACE took off (-1:
	 * none), in its mode: put back at the detach, unless let go. */
	int other_fd;
	uint32_t other_mode;
	int steer_fd, cpumap_fd;
	int cfg_fd, xsks_fd, worker_cpu_fd, cpu_map_fd, mac_fd, pass_fd;
	int ncpus;			/* possible CPUs: a per-CPU value's */
	struct ucm_steer_cfg cfg;
	bool meta;			/* steer_fd writes the metadata */
};

/* libbpf's messages become ours, at debug level: the caller decides. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	char buf[512];
	int n = vsnprintf(buf, sizeof(buf), fmt, args);

	/* Cut (the verifier's log is longer), it still ends its line: a
	 * line-based sink (journald's priorities) starts the next afresh. */
	ucm_log(level == LIBBPF_WARN ? UCM_LOG_INFO : UCM_LOG_DEBUG, "libbpf: %s%s", buf,
		n >= (int)sizeof(buf) && buf[sizeof(buf) - 2] != '\n' ? " [cut]\n" : "");
	return 0;
}

static int cfg_check(const struct ucm_steer_cfg *c)
{
	if (c->policy >= UCM_STEER__MAX) {
		pr_warn("steering policy %u is unknown\n", c->policy);
		return -EINVAL;
	}
	if (!c->nworkers || c->nworkers > UCM_STEER_MAX_WORKERS) {
		pr_warn("%u workers: steering takes 1 to %u\n", c->nworkers,
			UCM_STEER_MAX_WORKERS);
		return -EINVAL;
	}
	if (c->fixed >= c->nworkers) {
		pr_warn("fixed worker %u, but there are only %u\n", c->fixed,
			c->nworkers);
		return -EINVAL;
	}
	if (c->flags & ~(UCM_STEER_F_SYMMETRIC | UCM_STEER_F_IPV4 |
			 UCM_STEER_F_IPV6 | UCM_STEER_F_LINK_CTRL | UCM_STEER_F_STAMP)) {
		pr_warn("unknown steering flags 0x%x\n", c->flags);
		return -EINVAL;
	}
	return 0;
}

int ucm_xdp__configure(struct ucm_xdp *x, const struct ucm_steer_cfg *cfg)
{
	struct ucm_steer_cfg c;
	uint32_t key = 0;
	int err;

	if (!x || !cfg)
		return ucm_err(-EINVAL);
	c = *cfg;
	if (!(c.flags & (UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6)))
		c.flags |= UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6;
	err = cfg_check(&c);
	if (err)
		return ucm_err(err);
	if (bpf_map_update_elem(x->cfg_fd, &key, &c, BPF_ANY))
		return ucm_err(-errno);
	x->cfg = c;
	return 0;
}

void ucm_xdp__config(const struct ucm_xdp *x, struct ucm_steer_cfg *cfg)
{
	*cfg = x->cfg;
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

static int prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	return p ? bpf_program__fd(p) : -ENOENT;
}

/*
 * Whether this kernel's XDP programs may call bpf_xdp_adjust_meta(): 1,
 * 0 when its verifier refuses the helper, or -errno when that cannot be
 * told (the object's own load then says why). A kernel may be built
 * without it; libbpf_probe_bpf_helper() before libbpf 1.2 does not read
 * the verifier's words for that and says yes.
 */
static int xdp_has_meta(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_xdp_adjust_meta },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	/* all of it: a log cut short fails the load (ENOSPC) before 6.4 */
	char log[4096] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, po, .log_buf = log, .log_size = sizeof(log),
		    .log_level = 1);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &po);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (errno == EINVAL && (strstr(log, "cannot use helper") || strstr(log, "unknown func")))
		return 0;
	return -errno;
}

/* Load the steering program this kernel takes, and not the other. */
static int choose_steer(struct ucm_xdp *x)
{
	struct bpf_program *meta = bpf_object__find_program_by_name(x->obj, "ucm_xdp_steer");
	struct bpf_program *plain = bpf_object__find_program_by_name(x->obj, "ucm_xdp_nometa");

	if (!meta || !plain) {
		pr_warn("the embedded XDP object lacks a program\n");
		return -ENOENT;
	}
	x->meta = xdp_has_meta() != 0;
	if (!x->meta)
		pr_info("this kernel's XDP has no bpf_xdp_adjust_meta(): the RX threads pick each packet's worker themselves, and no packet carries its arrival time (no rx_hist)\n");
	bpf_program__set_autoload(meta, x->meta);
	bpf_program__set_autoload(plain, !x->meta);
	return 0;
}

int ucm_xdp_opts_check(const struct ucm_xdp_opts *opts, struct ucm_xdp_opts *o,
		       struct ucm_steer_cfg *cfg)
{
	int err = UCM_OPTS_COPY(o, opts, ucm_xdp_opts);

	if (err)
		return err;
	*cfg = (struct ucm_steer_cfg){
		.policy = o->policy,
		.nworkers = o->nworkers ? o->nworkers : 1,
		.fixed = o->fixed,
		.flags = o->flags ? o->flags : UCM_STEER_F_IPV4 | UCM_STEER_F_IPV6,
	};
	return cfg_check(cfg);
}

/* The kernel's cpumap (the bench's baseline) is made with every load: a
 * cpumap of more entries than the kernel's NR_CPUS is refused (E2BIG),
 * and that would refuse the whole program. One entry a possible CPU. */
static int size_cpu_map(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "ucm_cpu_map");
	int n = libbpf_num_possible_cpus(), err;

	if (!m || n <= 0) {
		pr_warn("the XDP object has no ucm_cpu_map, or the possible CPUs are unknown (%d)\n", n);
		return -EINVAL;
	}
	err = bpf_map__set_max_entries(m, n);
	if (err)
		pr_warn("ucm_cpu_map of %d entries: %s\n", n, strerror(-err));
	return err;
}

struct ucm_xdp *ucm_xdp__load(const struct ucm_xdp_opts *opts)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "ucm_steer");
	struct ucm_xdp_opts o;
	struct ucm_steer_cfg cfg;
	libbpf_print_fn_t prev;
	struct ucm_xdp *x;
	int err;

	err = ucm_xdp_opts_check(opts, &o, &cfg);
	if (err)
		return ucm_err_ptr(err);

	x = calloc(1, sizeof(*x));
	if (!x)
		return ucm_err_ptr(ucm_oom("the XDP program"));
	x->link_fd = -1;
	x->other_fd = -1;
	/* libbpf's messages through our log while it opens and loads the
	 * object; the application's own printer back after. */
	prev = libbpf_set_print(libbpf_print);
	x->obj = bpf_object__open_mem(ucm_steer_bpf_obj,
				      ucm_steer_bpf_obj_end - ucm_steer_bpf_obj,
				      &oo);
	if (!x->obj) {
		err = -errno;
		pr_warn("cannot open the embedded XDP object: %s\n",
			strerror(-err));
		goto out_free;
	}
	if (o.load_flags & ~(uint32_t)UCM_XDP_F_FRAGS) {
		pr_warn("unknown XDP load flags 0x%x\n", o.load_flags);
		err = -EINVAL;
		goto out_obj;
	}
	if (o.load_flags & UCM_XDP_F_FRAGS) {
		struct bpf_program *p;

		bpf_object__for_each_program(p, x->obj)
			bpf_program__set_flags(p, bpf_program__flags(p) | BPF_F_XDP_HAS_FRAGS);
	}
	err = choose_steer(x);
	if (err)
		goto out_obj;
	err = size_cpu_map(x->obj);
	if (err)
		goto out_obj;
	err = bpf_object__load(x->obj);
	libbpf_set_print(prev);
	if (err) {
		err = err < 0 ? err : -EINVAL;
		if (err == -EPERM)
			pr_warn("loading the XDP program needs CAP_BPF and CAP_NET_ADMIN: run as root\n");
		else if (o.load_flags & UCM_XDP_F_FRAGS)
			pr_warn("cannot load the XDP program frags-aware, for packets of several frames: %s (the kernel needs BPF with BTF and XSK maps, and frags-aware XDP: Linux 5.18, multi-buffer AF_XDP 6.6; else lower the interface's MTU to what one frame holds)\n",
				strerror(-err));
		else
			pr_warn("cannot load the XDP program: %s (the kernel needs BPF with BTF and XSK maps)\n",
				strerror(-err));
		goto out_obj;
	}
	x->steer_fd = prog_fd(x->obj, x->meta ? "ucm_xdp_steer" : "ucm_xdp_nometa");
	x->cpumap_fd = prog_fd(x->obj, "ucm_xdp_cpumap");
	x->cfg_fd = map_fd(x->obj, "ucm_steer_cfg_map");
	x->xsks_fd = map_fd(x->obj, "ucm_xsks");
	x->worker_cpu_fd = map_fd(x->obj, "ucm_worker_cpu");
	x->cpu_map_fd = map_fd(x->obj, "ucm_cpu_map");
	x->mac_fd = map_fd(x->obj, "ucm_steer_mac");
	x->pass_fd = map_fd(x->obj, "ucm_steer_pass");
	/* Read here, before a caller's seccomp filter: libbpf keeps it. */
	x->ncpus = libbpf_num_possible_cpus();
	if (x->steer_fd < 0 || x->cpumap_fd < 0 || x->cfg_fd < 0 || x->xsks_fd < 0 ||
	    x->worker_cpu_fd < 0 || x->cpu_map_fd < 0 || x->mac_fd < 0 || x->pass_fd < 0) {
		pr_warn("the embedded XDP object lacks a program or map\n");
		err = -ENOENT;
		goto out_obj;
	}
	err = ucm_xdp__configure(x, &cfg);
	if (err)
		goto out_obj;
	return x;

out_obj:
	bpf_object__close(x->obj);
out_free:
	libbpf_set_print(prev);
	free(x);
	return ucm_err_ptr(err);
}

void ucm_xdp__destroy(struct ucm_xdp *x)
{
	if (!x)
		return;
	ucm_xdp__detach(x);
	bpf_object__close(x->obj);
	free(x);
}

int ucm_xdp__steer_fd(const struct ucm_xdp *x)
{
	return x->steer_fd;
}

int ucm_xdp__cpumap_fd(const struct ucm_xdp *x)
{
	return x->cpumap_fd;
}

int ucm_xdp__set_xsk(struct ucm_xdp *x, uint32_t queue, int xsk_fd)
{
	int err;

	if (queue >= UCM_STEER_MAX_QUEUES) {
		pr_warn("xdp: queue %u: the program's socket map holds queues 0 to %u\n", queue,
			UCM_STEER_MAX_QUEUES - 1);
		return ucm_err(-EINVAL);
	}
	if (xsk_fd < 0)
		err = bpf_map_delete_elem(x->xsks_fd, &queue);
	else
		err = bpf_map_update_elem(x->xsks_fd, &queue, &xsk_fd, BPF_ANY);
	if (err && !(xsk_fd < 0 && errno == ENOENT))
		return ucm_err(-errno);
	return 0;
}

int ucm_xdp__set_kernel_cpumap(struct ucm_xdp *x, const int *cpus,
			       uint32_t n, uint32_t qsize)
{
	struct bpf_cpumap_val val = { .qsize = qsize };
	uint32_t i, cpu, plus1;

	if (!n || n > UCM_STEER_MAX_WORKERS || !qsize ||
	    qsize > UCM_KERNEL_CPUMAP_QSIZE_MAX) {
		pr_warn("kernel cpumap: 1 to %u CPUs, queue size 1 to %u\n",
			UCM_STEER_MAX_WORKERS, UCM_KERNEL_CPUMAP_QSIZE_MAX);
		return ucm_err(-EINVAL);
	}
	for (i = 0; i < n; i++) {
		if (cpus[i] < 0) {
			pr_warn("kernel cpumap: CPU %d is not valid\n", cpus[i]);
			return ucm_err(-EINVAL);
		}
		cpu = cpus[i];
		plus1 = cpu + 1;	/* 0 marks an unconfigured worker */
		if (bpf_map_update_elem(x->cpu_map_fd, &cpu, &val, BPF_ANY) ||
		    bpf_map_update_elem(x->worker_cpu_fd, &i, &plus1, BPF_ANY)) {
			int err = -errno;

			pr_warn("kernel cpumap: CPU %u: %s%s\n", cpu, strerror(-err),
				err == -E2BIG ? " (past the CPUs this host may have)" : "");
			return ucm_err(err);
		}
	}
	/* Workers past @n from an earlier call: unconfigured (passed). */
	for (plus1 = 0; i < UCM_STEER_MAX_WORKERS; i++)
		if (bpf_map_update_elem(x->worker_cpu_fd, &i, &plus1, BPF_ANY))
			return ucm_err(-errno);
	return 0;
}

/* The name of program @id ("ucm_xdp_steer (id 40)"); whether it is one
 * of ours (from an earlier run, or another instance). */
static bool prog_is_ours(uint32_t id, char *name, size_t len)
{
	struct bpf_prog_info info = {};
	uint32_t ilen = sizeof(info);
	bool ours = false;
	int fd = bpf_prog_get_fd_by_id(id);

	snprintf(name, len, "id %u", id);
	if (fd < 0)
		return false;
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		snprintf(name, len, "%s (id %u)", info.name, id);
		ours = !strcmp(info.name, "ucm_xdp_steer") ||
		       !strcmp(info.name, "ucm_xdp_nometa") ||
		       !strcmp(info.name, "ucm_xdp_cpumap");
	}
	close(fd);
	return ours;
}

/* The XDP link that runs program @prog on @ifindex, if one does: its id
 * (0: none). The program too: an index is only unique in its network
 * namespace, and the link's does not show. */
static uint32_t xdp_link_on(int ifindex, uint32_t prog)
{
	uint32_t id = 0, found = 0;

	while (!found && !bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;	/* gone meanwhile */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_XDP && info.prog_id == prog &&
		    (int)info.xdp.ifindex == ifindex)
			found = id;
		close(fd);
	}
	return found;
}

/* Does fdinfo file @path name link @id? */
static bool fdinfo_names_link(const char *path, uint32_t id)
{
	char line[128];
	bool hit = false;
	FILE *f = fopen(path, "re");
	unsigned int v;

	if (!f)
		return false;
	while (!hit && fgets(line, sizeof(line), f))
		hit = sscanf(line, "link_id: %u", &v) == 1 && v == id;
	fclose(f);
	return hit;
}

/* The process holding link @id open, by its fdinfo (bpftool's way): its
 * pid and name in @who, or "no process we can see" (a pinned link, or
 * another pid namespace). */
static void link_holder(uint32_t id, char *who, size_t len)
{
	char path[600], comm[64] = "?";
	struct dirent *p, *fd;
	DIR *proc, *fds;
	FILE *f;

	snprintf(who, len, "held by a process we cannot inspect (another user's, or pinned)");
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fd = readdir(fds))) {
			if (fd->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s",
				 p->d_name, fd->d_name);
			if (fdinfo_names_link(path, id))
				break;
		}
		closedir(fds);
		if (!fd)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", p->d_name);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		snprintf(who, len, "held by pid %.20s (%.63s)", p->d_name, comm);
		break;
	}
	closedir(proc);
}

/* A program attached the old way (netlink) is on @ifindex: take it off
 * when it is a stale one of ours or @flags says replace; -EBUSY else.
 * *@old_fd keeps another's (or -1), in *@old_mode, for an attach that
 * fails: a stale one of ours stays off. */
static int netlink_prog_off(int ifindex, const char *ifname,
			    const struct bpf_xdp_query_opts *q, uint32_t flags,
			    int *old_fd, uint32_t *old_mode)
{
	uint32_t id = q->drv_prog_id ? q->drv_prog_id : q->skb_prog_id;
	uint32_t mode = q->drv_prog_id ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
	char name[64];
	bool ours = prog_is_ours(id, name, sizeof(name));
	int err, fd;

	if (!ours && !(flags & UCM_XDP_ATTACH_REPLACE)) {
		pr_warn("%s already runs XDP program %s: detach it (ip link set dev %s xdp off) or ask to replace it\n",
			ifname, name, ifname);
		return -EBUSY;
	}
	if (ours)
		/* SIGKILL of an older version, which attached through
		 * netlink: nothing detached it. */
		pr_info("replacing our stale XDP program %s on %s (attached the old way, by a process now gone)\n",
			name, ifname);
	/* Only that program: another may have come meanwhile. Without a
	 * hold on it, a detach would take whatever is there, and nothing
	 * could be put back. */
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0) {
		err = -errno;
		pr_warn("cannot take hold of XDP program %s (id %u) on %s to replace it: %s%s\n",
			name, id, ifname, strerror(-err),
			err == -ENOENT ? " (it went meanwhile: try again)" :
			err == -EPERM ? " (it takes CAP_SYS_ADMIN)" : "");
		return err;
	}
	/* libbpf takes any non-zero old_prog_fd for "replace only this". */
	ao.old_prog_fd = fd;
	err = bpf_xdp_detach(ifindex, mode | XDP_FLAGS_REPLACE, &ao);
	if (err && err != -ENOENT) {
		pr_warn("cannot take XDP program %s off %s: %s\n", name, ifname,
			strerror(-err));
		close(fd);
		return err;
	}
	if (ours) {
		close(fd);
		fd = -1;
	}
	*old_fd = fd;
	*old_mode = mode;
	return 0;
}

/* Our attach failed after netlink_prog_off(): the program it took off
 * goes back, unless another came meanwhile. */
static void netlink_prog_back(int ifindex, const char *ifname, int old_fd, uint32_t mode)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	int err;

	bpf_obj_get_info_by_fd(old_fd, &info, &len);
	err = bpf_xdp_attach(ifindex, old_fd, mode | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err)
		pr_warn("cannot put XDP program %s back on %s: %s; %s runs none of it now\n",
			info.name, ifname, strerror(-err), ifname);
	else
		pr_info("XDP program %s is back on %s, as it was\n", info.name, ifname);
}

/* XDP links came in Linux 5.9. Before, BPF_LINK_CREATE refuses the
 * attach type with EINVAL; after, EINVAL is the driver's (an MTU too big
 * for XDP, say) and the netlink attach must not hide it (it would lose
 * the one-instance guarantee without a word). */
static bool kernel_has_xdp_links(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return true;
	return major > 5 || (major == 5 && minor >= 9);
}

/* The old way, for kernels without XDP links (before 5.9): the program
 * stays on the interface if we are killed, until the next start. */
static int attach_netlink(struct ucm_xdp *x, int ifindex, int fd, uint32_t mode)
{
	int err = bpf_xdp_attach(ifindex, fd, mode | XDP_FLAGS_UPDATE_IF_NOEXIST,
				 NULL);

	if (err)
		return err < 0 ? err : -EINVAL;
	pr_info("this kernel has no XDP links: the program is attached through netlink and outlives a killed process (the next start replaces it)\n");
	x->attached_ifindex = ifindex;
	x->attached_fd = fd;
	x->attached_mode = mode;
	return 0;
}

/* Refuse an interface a link holds: another instance of ours, or a
 * program attached as ours is. A link cannot be replaced. */
static int refuse_link(uint32_t link, int ifindex, const char *ifname)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char name[64] = "?", who[128];
	bool ours = false;

	if (!bpf_xdp_query(ifindex, 0, &q) && (q.drv_prog_id || q.skb_prog_id))
		ours = prog_is_ours(q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id,
				    name, sizeof(name));
	link_holder(link, who, sizeof(who));
	if (ours)
		pr_warn("%s is served already: XDP link %u runs our %s, %s; one instance per interface: stop that one first\n",
			ifname, link, name, who);
	else
		pr_warn("%s is taken: XDP link %u runs program %s, %s; a link cannot be replaced: stop its holder first\n",
			ifname, link, name, who);
	return -EBUSY;
}

static int xdp_attach(struct ucm_xdp *x, int ifindex, uint32_t flags)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	uint32_t mode = flags & UCM_XDP_ATTACH_SKB ? XDP_FLAGS_SKB_MODE :
						     XDP_FLAGS_DRV_MODE;
	int fd = flags & UCM_XDP_ATTACH_CPUMAP ? x->cpumap_fd : x->steer_fd;
	char ifname[IF_NAMESIZE] = "?";
	uint32_t link, old_mode = 0;
	int err, old_fd = -1;

	if (x->attached_ifindex)
		return ucm_err(-EALREADY);
	if_indextoname(ifindex, ifname);
	if (bpf_xdp_query(ifindex, 0, &q)) {
		err = -errno;
		pr_warn("cannot query XDP on %s: %s\n", ifname, strerror(-err));
		return ucm_err(err);
	}
	if (q.drv_prog_id || q.skb_prog_id) {
		/* Before anything is touched: the holder of a link keeps it. */
		link = xdp_link_on(ifindex, q.drv_prog_id ? q.drv_prog_id :
							  q.skb_prog_id);
		if (link)
			return ucm_err(refuse_link(link, ifindex, ifname));
		err = netlink_prog_off(ifindex, ifname, &q, flags, &old_fd, &old_mode);
		if (err)
			return ucm_err(err);
	}
	/* A link: the kernel takes the program off when our last fd to it
	 * closes, SIGKILL included, and refuses anybody else meanwhile. */
	lo.flags = mode;
	err = bpf_link_create(fd, ifindex, BPF_XDP, &lo);
	if (err == -EINVAL && !kernel_has_xdp_links())
		err = attach_netlink(x, ifindex, fd, mode);
	else if (err >= 0)
		x->link_fd = err, err = 0;
	if (err) {
		pr_warn("cannot attach the XDP program to %s in %s mode: %s%s\n",
			ifname, mode == XDP_FLAGS_SKB_MODE ? "generic" : "native",
			strerror(-err),
			err == -EOPNOTSUPP ? " (the driver has no native XDP: use generic mode, UCM_DP_F_XDP_SKB or ucpumapd's --xdp-mode skb)" :
			err == -EBUSY ? " (another program came meanwhile)" :
			err == -ERANGE ? " (an MTU over the driver's limit for XDP: lower it; a veth counts its peer's)" : "");
		if (old_fd >= 0) {
			netlink_prog_back(ifindex, ifname, old_fd, old_mode);
			close(old_fd);
		}
	} else {
		x->attached_ifindex = ifindex;
		x->other_fd = old_fd;
		x->other_mode = old_mode;
	}
	return ucm_err(err);
}

void ucm_xdp_let_other_go(struct ucm_xdp *x)
{
	if (x && x->other_fd >= 0) {
		close(x->other_fd);
		x->other_fd = -1;
	}
}

static int xdp_detach(struct ucm_xdp *x)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, ao, .old_prog_fd = x->attached_fd);
	int ifindex = x->attached_ifindex, err;

	if (!ifindex)
		return 0;
	x->attached_ifindex = 0;
	err = 0;
	if (x->link_fd >= 0) {
		/* Detached, not only closed: a link fd another process took
		 * by id (bpftool, an agent) would keep the program on, and a
		 * replaced program could not go back. ENOLINK: the device
		 * went, and the program with it. EPERM: bpf(2) closed to a
		 * process without capabilities (before Linux 5.19 with
		 * kernel.unprivileged_bpf_disabled): the close alone, which
		 * detaches where no other process holds the link. */
		err = bpf_link_detach(x->link_fd);
		if (err && err != -ENOLINK && err != -ENODEV && err != -EPERM)
			pr_warn("detaching the XDP link: %s\n", strerror(-err));
		err = 0;
		close(x->link_fd);
		x->link_fd = -1;
	} else {
		/* XDP_FLAGS_REPLACE with our fd: only our program is taken off. */
		err = bpf_xdp_detach(ifindex, x->attached_mode | XDP_FLAGS_REPLACE, &ao);
		if (err == -ENOENT || err == -EEXIST || err == -ENODEV)
			err = 0;
		if (err)
			pr_warn("detaching the XDP program: %s\n", strerror(-err));
	}
	if (x->other_fd >= 0) {
		char ifname[IF_NAMESIZE] = "?";

		if_indextoname(ifindex, ifname);
		netlink_prog_back(ifindex, ifname, x->other_fd, x->other_mode);
		ucm_xdp_let_other_go(x);
	}
	return ucm_err(err);
}

int ucm_xdp_set_mac(struct ucm_xdp *x, const uint8_t *mac)
{
	uint8_t v[8] = { [6] = 1 };	/* byte 6: set (steer.bpf.c) */
	uint32_t key = 0;

	memcpy(v, mac, 6);
	return bpf_map_update_elem(x->mac_fd, &key, v, BPF_ANY) ? -errno : 0;
}

static const char *const pass_names[UCM_STEER_PASS__MAX] = {
	"other_host", "link_ctrl", "unclaimed", "short", "no_cpu", "no_socket",
};
_Static_assert(UCM_STEER_PASS__MAX <= UCM_STEER_PASS_SLOTS, "room for every pass reason");

const char *ucm_pass_reason_str(uint32_t reason)
{
	return reason < UCM_STEER_PASS__MAX ? pass_names[reason] : "unknown";
}

int ucm_xdp__pass_stats(const struct ucm_xdp *x, uint64_t *counts, uint32_t n)
{
	uint64_t *v;
	uint32_t r;
	int c, err = 0;

	if (!x || !counts)
		return ucm_err(-EINVAL);
	if (x->ncpus <= 0)
		return ucm_err(x->ncpus ? x->ncpus : -EINVAL);
	v = calloc(x->ncpus, sizeof(*v));
	if (!v)
		return ucm_err(-ENOMEM);
	for (r = 0; r < n; r++) {
		counts[r] = 0;
		if (r >= UCM_STEER_PASS__MAX || err)
			continue;
		if (bpf_map_lookup_elem(x->pass_fd, &r, v)) {
			err = -errno;
			continue;
		}
		for (c = 0; c < x->ncpus; c++)
			counts[r] += v[c];
	}
	free(v);
	return err ? ucm_err(err) : 0;
}

/* libbpf's messages of an attach or a detach (the kernel's netlink
 * errors) through our log, as at the load; the application's printer
 * back after. */
int ucm_xdp__attach(struct ucm_xdp *x, int ifindex, uint32_t flags)
{
	const uint32_t known = UCM_XDP_ATTACH_SKB | UCM_XDP_ATTACH_CPUMAP |
			       UCM_XDP_ATTACH_REPLACE;
	libbpf_print_fn_t prev;
	int err;

	if (flags & ~known) {
		pr_warn("unknown XDP attach flags 0x%x\n", flags & ~known);
		return ucm_err(-EINVAL);
	}
	prev = libbpf_set_print(libbpf_print);
	err = xdp_attach(x, ifindex, flags);
	libbpf_set_print(prev);
	return err;
}

int ucm_xdp__detach(struct ucm_xdp *x)
{
	libbpf_print_fn_t prev = libbpf_set_print(libbpf_print);
	int err = xdp_detach(x);

	libbpf_set_print(prev);
	return err;
}
