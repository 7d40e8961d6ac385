// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The way back's cut alone, warm in cache: ns per segment of
 * ucm_split_seg() (lib/proto/split.c) on a 64 KiB TCPv4 super-packet of
 * 45 segments of 1448 bytes, the read's head 3840 bytes and the rest its
 * tail, as the read path has them. Build and run from the tree's top:
 *
 *   cc -O2 -D_GNU_SOURCE -Ilib/include -Ilib -o /tmp/split-bench \
 *      scripts/split-bench.c lib/proto/split.c && /tmp/split-bench
 *
 * Prints the median of 5 runs of 20000 super-packets each. Not a test:
 * compare builds on one machine, one after the other.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/virtio_net.h>

#include "proto/split.h"

#define HEAD	3840	/* a 4 KiB frame less the headroom */
#define RUNS	5
#define SUPERS	20000

static uint8_t pkt[65600], seg[4096];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	struct virtio_net_hdr vh = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				     .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .gso_size = 1448,
				     .csum_start = 20, .csum_offset = 16 };
	uint32_t len = 40 + 45 * 1448, i, k;
	volatile uint32_t sink = 0;
	struct ucm_split s;
	double ns[RUNS], t0;

	pkt[0] = 0x45;
	pkt[2] = len >> 8;
	pkt[3] = len & 0xff;
	pkt[9] = 6;
	pkt[32] = 5 << 4;
	for (i = 40; i < len; i++)
		pkt[i] = (uint8_t)(i * 7);
	if (ucm_split_plan(&vh, pkt, HEAD, len, false, HEAD, &s)) {
		fprintf(stderr, "split-bench: the plan was refused\n");
		return 1;
	}
	for (int r = 0; r < RUNS; r++) {
		t0 = now();
		for (int n = 0; n < SUPERS; n++)
			for (k = 0; k < s.nseg; k++)
				sink += ucm_split_seg(&s, k, pkt, HEAD, pkt + HEAD, seg);
		ns[r] = (now() - t0) / SUPERS / s.nseg * 1e9;
	}
	qsort(ns, RUNS, sizeof(ns[0]), cmp);
	printf("ucm_split_seg: %.1f ns per segment of 1448 bytes (median of %d runs; %.1f-%.1f)\n",
	       ns[RUNS / 2], RUNS, ns[0], ns[RUNS - 1]);
	return 0;
}
