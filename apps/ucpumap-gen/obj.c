// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's XDP object (bpf/gen.bpf.c, embedded in this binary by
 * gen_obj.S): opened with the configuration, one of its programs loaded,
 * and its state mapped, for the live and the loop engines.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"

extern const char ucm_gen_bpf_obj[] __attribute__((visibility("hidden")));
extern const char ucm_gen_bpf_obj_end[] __attribute__((visibility("hidden")));

/* -v: libbpf's debug messages too. libbpf's print callback takes no
 * context, hence a variable of this file. */
static bool obj_verbose;

static int obj_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !obj_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static struct bpf_map *internal_map(struct bpf_object *obj, const char *suffix)
{
	struct bpf_map *m;
	size_t sl = strlen(suffix);

	bpf_object__for_each_map(m, obj) {
		const char *n = bpf_map__name(m);
		size_t nl = strlen(n);

		if (nl >= sl && !strcmp(n + nl - sl, suffix))
			return m;
	}
	return NULL;
}

void gen_obj_close(struct gen_obj *o)
{
	if (o->st_len)
		munmap((void *)o->st, o->st_len);
	o->st_len = 0;
	bpf_object__close(o->obj);
	o->obj = NULL;
}

int gen_obj_open(struct gen_obj *o, const struct ucm_gen_cfg *gc, const char *prog, bool verbose)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "ucm_gen");
	struct bpf_program *p;
	struct bpf_map *ro, *bss;
	size_t sz;
	void *v;
	int err;

	memset(o, 0, sizeof(*o));
	obj_verbose = verbose;
	libbpf_set_print(obj_libbpf_print);
	o->obj = bpf_object__open_mem(ucm_gen_bpf_obj, ucm_gen_bpf_obj_end - ucm_gen_bpf_obj, &oo);
	if (!o->obj) {
		fprintf(stderr, "ucpumap-gen: cannot open the embedded XDP object: %s\n", strerror(errno));
		return -1;
	}
	ro = internal_map(o->obj, ".rodata");
	bss = internal_map(o->obj, ".bss");
	if (!ro || !bss || !bpf_map__initial_value(ro, &sz) || sz != sizeof(*gc) ||
	    bpf_map__set_initial_value(ro, gc, sizeof(*gc)) ||
	    bpf_map__value_size(bss) != sizeof(struct ucm_gen_state))
		goto mismatch;
	bpf_object__for_each_program(p, o->obj) {
		if (!strcmp(bpf_program__name(p), prog))
			o->prog = p;
		else
			bpf_program__set_autoload(p, false);
	}
	if (!o->prog)
		goto mismatch;
	err = bpf_object__load(o->obj);
	if (err) {
		fprintf(stderr, "ucpumap-gen: cannot load the XDP program: %s%s\n", strerror(-err),
			err == -EPERM ? " (needs CAP_BPF and CAP_NET_ADMIN: run as root)" : "");
		goto fail;
	}
	/* The state, live: libbpf 1.1 maps .bss for skeletons only. */
	o->st_len = (sizeof(struct ucm_gen_state) + 4095) & ~(size_t)4095;
	v = mmap(NULL, o->st_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(bss), 0);
	if (v == MAP_FAILED) {
		fprintf(stderr, "ucpumap-gen: cannot map the XDP program's state: %s\n", strerror(errno));
		o->st_len = 0;
		goto fail;
	}
	o->st = v;
	return 0;
mismatch:
	fprintf(stderr, "ucpumap-gen: the embedded XDP object is not the one this binary expects (rebuild it)\n");
fail:
	gen_obj_close(o);
	return -1;
}
