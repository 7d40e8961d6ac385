// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's live engine: BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES runs our XDP program (bpf/gen.bpf.c, embedded
 * in this binary by gen_obj.S) once per frame on a copy of the template;
 * the program rewrites the frame and redirects it out of IFACE, and counts
 * it in its .bss, which we read mmapped. While it runs, a tap device of its
 * own (ucmgenN) holds the program, so that the calls do not wait for RCU
 * (live_anchor()).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"

extern const char ucm_gen_bpf_obj[] __attribute__((visibility("hidden")));
extern const char ucm_gen_bpf_obj_end[] __attribute__((visibility("hidden")));

/* -v: libbpf's debug messages too. libbpf's print callback takes no
 * context, hence a variable of this file. */
static bool live_verbose;

static int live_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !live_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

struct live {
	struct bpf_object *obj;
	int prog_fd;
	volatile const uint64_t *frames;	/* the program's counter, mmapped */
	size_t bss_len;
	int tap_fd;				/* the anchor device, or -1 */
	struct bpf_test_run_opts opts;
	struct bpf_link *anchor;		/* our program on it */
};

void live_close(struct live *l)
{
	if (!l)
		return;
	bpf_link__destroy(l->anchor);
	if (l->tap_fd >= 0)
		close(l->tap_fd);
	if (l->bss_len)
		munmap((void *)l->frames, l->bss_len);
	bpf_object__close(l->obj);
	free(l);
}

/*
 * A test run with repeat > 1 puts the program into the kernel's XDP
 * dispatcher for the call and takes it out after, and each change waits for
 * an RCU grace period: two per call, 8 to 40 ms here, whatever the call
 * sends. A program attached to a device stays in the dispatcher, so the
 * calls change nothing. We attach ours to a tap device of our own that
 * nobody writes to: not persistent, it goes away with its file descriptor,
 * so nothing is left behind even after SIGKILL; so does the attachment (a
 * bpf_link). Without it the generator still works, only slower.
 */
static void live_anchor(struct live *l, struct bpf_program *p)
{
	struct ifreq ifr = {};
	const char *why;
	int ifindex;

	l->tap_fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (l->tap_fd < 0) {
		why = "cannot open /dev/net/tun";
		goto fail;
	}
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	strcpy(ifr.ifr_name, "ucmgen%d");
	if (ioctl(l->tap_fd, TUNSETIFF, &ifr)) {
		why = "cannot create a tap device";
		goto fail;
	}
	ifindex = if_nametoindex(ifr.ifr_name);
	l->anchor = ifindex ? bpf_program__attach_xdp(p, ifindex) : NULL;
	if (!l->anchor) {
		l->anchor = NULL;
		why = "cannot attach the program to a tap device";
		goto fail;
	}
	return;
fail:
	fprintf(stderr, "ucpumap-gen: %s (%s): every call will wait for RCU, expect a lower rate\n",
		why, strerror(errno));
	if (l->tap_fd >= 0)
		close(l->tap_fd);
	l->tap_fd = -1;
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

static int live_load(struct live *l, const struct ucm_gen_cfg *gc)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "ucm_gen");
	struct bpf_map *ro, *bss;
	struct bpf_program *p;
	size_t sz;
	void *v;
	int err;

	libbpf_set_print(live_libbpf_print);
	l->obj = bpf_object__open_mem(ucm_gen_bpf_obj, ucm_gen_bpf_obj_end - ucm_gen_bpf_obj, &oo);
	if (!l->obj) {
		fprintf(stderr, "ucpumap-gen: cannot open the embedded XDP object: %s\n", strerror(errno));
		return -1;
	}
	ro = internal_map(l->obj, ".rodata");
	bss = internal_map(l->obj, ".bss");
	if (!ro || !bss || !bpf_map__initial_value(ro, &sz) || sz != sizeof(*gc) ||
	    bpf_map__set_initial_value(ro, gc, sizeof(*gc))) {
		fprintf(stderr, "ucpumap-gen: the embedded XDP object does not have the configuration this binary expects (rebuild it)\n");
		return -1;
	}
	err = bpf_object__load(l->obj);
	if (err) {
		fprintf(stderr, "ucpumap-gen: cannot load the XDP program: %s%s\n", strerror(-err),
			err == -EPERM ? " (needs CAP_BPF and CAP_NET_ADMIN: run as root)" : "");
		return -1;
	}
	p = bpf_object__find_program_by_name(l->obj, "ucm_gen");
	l->prog_fd = p ? bpf_program__fd(p) : -1;
	/* The counters, live: libbpf 1.1 maps .bss for skeletons only. */
	sz = bpf_map__value_size(bss);
	l->bss_len = (sz + 4095) & ~(size_t)4095;
	v = mmap(NULL, l->bss_len, PROT_READ, MAP_SHARED, bpf_map__fd(bss), 0);
	if (l->prog_fd < 0 || v == MAP_FAILED || sz < sizeof(uint64_t)) {
		fprintf(stderr, "ucpumap-gen: the embedded XDP object lacks its program or counter (%s)\n",
			v == MAP_FAILED ? strerror(errno) : "not found");
		l->bss_len = 0;
		return -1;
	}
	l->frames = v;
	live_anchor(l, p);
	return 0;
}

/* Send @n frames; return how many the program ran on, or -errno. */
int64_t live_send(void *arg, uint64_t n)
{
	struct live *l = arg;
	uint64_t before = *l->frames;
	int err;

	l->opts.repeat = (uint32_t)n;
	err = bpf_prog_test_run_opts(l->prog_fd, &l->opts);
	if (err && errno != EINTR) {
		err = -errno;
		fprintf(stderr, "ucpumap-gen: the live-frame test run failed: %s%s\n", strerror(-err),
			err == -EOPNOTSUPP || err == -EINVAL ?
			" (the kernel needs BPF_F_TEST_XDP_LIVE_FRAMES, 5.18 or later)" : "");
		return err;
	}
	/* The program's own count: exact, also when a signal cut the call
	 * short. */
	return (int64_t)(*l->frames - before);
}

struct live *live_open(const struct ucm_gen_cfg *gc, const struct gen_tmpl *t, uint32_t batch,
		       bool verbose)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l) {
		fprintf(stderr, "ucpumap-gen: out of memory\n");
		return NULL;
	}
	l->tap_fd = -1;
	live_verbose = verbose;
	if (live_load(l, gc)) {
		live_close(l);
		return NULL;
	}
	l->opts = (struct bpf_test_run_opts){
		.sz = sizeof(l->opts), .data_in = t->frame, .data_size_in = t->size,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = batch,
	};
	return l;
}
