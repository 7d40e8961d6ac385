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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"

struct live {
	struct gen_obj o;
	int prog_fd;
	int tap_fd;				/* the anchor device, or -1 */
	struct bpf_test_run_opts opts;
	struct bpf_link *anchor;		/* our program on it */
	uint64_t pending;			/* sent by a call that failed */
};

void live_close(struct live *l)
{
	if (!l)
		return;
	bpf_link__destroy(l->anchor);
	if (l->tap_fd >= 0)
		close(l->tap_fd);
	gen_obj_close(&l->o);
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

/* Send @n frames; return how many the program ran on, or -errno. */
int64_t live_send(void *arg, uint64_t n)
{
	struct live *l = arg;
	uint64_t before = gen_obj_frames(&l->o);
	int err;

	if (!n) {	/* a repeat of 0 would run once */
		before = l->pending;
		l->pending = 0;
		return (int64_t)before;
	}
	l->opts.repeat = (uint32_t)n;
	err = bpf_prog_test_run_opts(l->prog_fd, &l->opts);
	if (err && errno != EINTR) {
		err = -errno;
		/* What went before the failure: the last call's return. */
		l->pending += gen_obj_frames(&l->o) - before;
		fprintf(stderr, "ucpumap-gen: the live-frame test run failed: %s%s\n", strerror(-err),
			err == -EOPNOTSUPP || err == -EINVAL ?
			" (the kernel needs BPF_F_TEST_XDP_LIVE_FRAMES, 5.18 or later)" : "");
		return err;
	}
	/* The program's own count: exact, also when a signal cut the call
	 * short. */
	return (int64_t)(gen_obj_frames(&l->o) - before);
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
	if (gen_obj_open(&l->o, gc, "ucm_gen", verbose)) {
		live_close(l);
		return NULL;
	}
	l->prog_fd = bpf_program__fd(l->o.prog);
	live_anchor(l, l->o.prog);
	l->opts = (struct bpf_test_run_opts){
		.sz = sizeof(l->opts), .data_in = t->frame, .data_size_in = t->size,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = batch,
	};
	return l;
}
