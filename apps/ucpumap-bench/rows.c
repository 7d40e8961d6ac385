// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the rows, as data. A row is a kind (how it runs:
 * kinds.c) and its settings: ucpumapd's extra flag, coalescing, the
 * generator's flows. A new row of a known kind is a new entry of row_defs[]
 * (and of --rows' help in datapath.c); a gain to print is an entry of
 * row_gains[]. Rows run in this order, interleaved, round after round.
 * docs/BENCHMARKS.md says what each row measures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath.h"

#define ARRAY_SIZE(a)	((int)(sizeof(a) / sizeof((a)[0])))
#define xstr(x) str(x)
#define str(x) #x

static const struct row_def row_defs[] = {
	{ .name = "kernel-pass", .kind = K_KPASS },
	{ .name = "kernel-cpumap", .kind = K_KCPUMAP },
	{ .name = "pass", .kind = K_DAEMON, .flag = "--pass" },
	{ .name = "cpumap-no-recycle", .kind = K_DAEMON, .flag = "--no-recycle" },
	{ .name = "cpumap", .kind = K_DAEMON },
	{ .name = "cpumap-coalesce", .kind = K_DAEMON, .coalesce = true, .flows = FEW_FLOWS },
	{ .name = "cpumap-coalesce-many-flows", .kind = K_DAEMON, .coalesce = true,
	  .flows = MANY_FLOWS },
	{ .name = "cpumap-no-batch", .kind = K_DAEMON, .flag = "--no-batch" },
	/* the workers hand the tun each batch of 8, not up to 64 at once */
	{ .name = "cpumap-no-hold", .kind = K_DAEMON, .flag = "--no-hold" },
	/* the workers woken only by the RX thread: the pre-wake's cost at flood */
	{ .name = "cpumap-no-prewake", .kind = K_DAEMON, .flag = "--prewake", .flag_arg = "off" },
	/* the latency histograms' stamps off: cpumap against it is their cost */
	{ .name = "cpumap-no-latency", .kind = K_DAEMON, .flag = "--no-latency" },
	{ .name = "tun-ceiling", .kind = K_TUN },
	{ .name = "dpdk", .kind = K_DPDK },
	{ .name = "two-way", .kind = K_TWOWAY },
	/* with the pre-wake, off by default for two-way workers: two-way
	 * against it is what it costs at flood */
	{ .name = "two-way-prewake", .kind = K_TWOWAY, .flag = "--prewake", .flag_arg = "on" },
	{ .name = "two-way-no-direct-bulk", .kind = K_TWOWAY, .flag = "--no-direct-bulk" },
	/* one iperf3 TCP stream through ucpumapd; dst is bit/s */
	/* the same stream over the kernel's own path: no XDP program on vd */
	{ .name = "tcp-kernel", .kind = K_TCP_KERNEL },
	{ .name = "tcp", .kind = K_TCP },
	{ .name = "tcp-coalesce", .kind = K_TCP, .coalesce = true },
	/* the same stream through the kernel's cpumap (its kthread's GRO) */
	{ .name = "tcp-kernel-cpumap", .kind = K_TCP_KCPUMAP },
	/* one stream the other way: from the DUT through the tun, ucpumapd's
	 * way back and XSK TX (two-way; its ACKs come the forward way), with
	 * the tun's offloads (super-packets cut by ucpumapd) and without */
	{ .name = "tcp-back", .kind = K_TCP_BACK, .coalesce = true },
	/* the same with the pre-wake (its cost to one stream the way back) */
	{ .name = "tcp-back-prewake", .kind = K_TCP_BACK, .coalesce = true,
	  .flag = "--prewake", .flag_arg = "on" },
	{ .name = "tcp-back-no-offload", .kind = K_TCP_BACK, .coalesce = true,
	  .flag = "--no-offload" },
	/* the offloads, every checksum computed by the way back (none left
	 * to the kernel through AF_XDP TX metadata) */
	{ .name = "tcp-back-sw-csum", .kind = K_TCP_BACK, .coalesce = true,
	  .flag = "--no-tx-csum" },
	/* 64-byte UDP datagrams the way back alone (the two-way rows' sender):
	 * delivered in the generator's namespace, pps */
	{ .name = "udp-back", .kind = K_UDP_BACK },
	/* round trips of probes, us (latency.c): through the kernel's cpumap,
	 * through ucpumapd one way (its default, coalescing), both ways */
	{ .name = "latency-kernel-cpumap", .kind = K_LAT_KERNEL },
	{ .name = "latency-cpumap", .kind = K_LAT, .coalesce = true },
	/* the same without the worker's pre-wake (ucpumapd's default with
	 * one worker): latency-cpumap against it is its gain */
	{ .name = "latency-cpumap-no-prewake", .kind = K_LAT, .coalesce = true,
	  .flag = "--prewake", .flag_arg = "off" },
	/* the RX thread writes the tun itself (--pass, no cpumap): the floor
	 * of an AF_XDP-to-tun path, without the hand-over to a worker; the
	 * RX thread on the first --cpus CPU unless --rx-cpus (kinds.c) */
	{ .name = "latency-pass", .kind = K_LAT, .coalesce = true, .flag = "--pass",
	  .rx_on_wcpu = true },
	{ .name = "latency-two-way", .kind = K_LAT_TWOWAY, .coalesce = true },
	/* the same with the pre-wake (off by default for a two-way worker):
	 * against latency-two-way, its gain */
	{ .name = "latency-two-way-prewake", .kind = K_LAT_TWOWAY, .coalesce = true,
	  .flag = "--prewake", .flag_arg = "on" },
};

const int nrows = ARRAY_SIZE(row_defs);
struct row rows[ARRAY_SIZE(row_defs)];

/* The gains printed, in this order; a pair is shown when both rows ran. */
const struct row_gain row_gains[] = {
	{ .a = "cpumap", .b = "cpumap-no-recycle",
	  .note = "(seed 000)" },
	{ .a = "cpumap", .b = "cpumap-no-batch",
	  .note = "(seed 002)" },
	{ .a = "cpumap", .b = "kernel-cpumap",
	  .note = "(target >= 1.0)", .target = 1.0 },
	{ .a = "cpumap", .b = "cpumap-no-latency",
	  .note = "(the latency stamps' cost)" },
	{ .a = "cpumap", .b = "cpumap-no-hold",
	  .note = "(up to 64 in one submission, not 8)" },
	{ .a = "cpumap", .b = "cpumap-no-prewake",
	  .note = "(the pre-wake at flood)" },
	{ .a = "cpumap", .b = "tun-ceiling",
	  .note = "(target >= 0.95, issue 16)", .target = 0.95 },
	{ .a = "cpumap", .b = "dpdk",
	  .note = "(target >= 3.0)", .target = 3.0 },
	{ .a = "cpumap-coalesce", .b = "cpumap",
	  .note = "(coalescing, " xstr(FEW_FLOWS) " flows)" },
	{ .a = "cpumap-coalesce", .b = "kernel-cpumap",
	  .note = "(target >= 2.0, issue 16; 3.0, issue 6)", .target = 2.0 },
	{ .a = "cpumap-coalesce-many-flows", .b = "cpumap",
	  .note = "(target >= 0.95)", .target = 0.95 },
	{ .a = "tcp-coalesce", .b = "tcp",
	  .note = "(TCP throughput, target >= 2.0)" },
	{ .a = "tcp-coalesce", .b = "tcp-kernel",
	  .note = "(against the kernel's own path)" },
	{ .a = "tcp-coalesce", .b = "tcp-kernel-cpumap",
	  .note = "(target >= 1.0)" },
	{ .a = "tcp-back", .b = "tcp-back-no-offload",
	  .note = "(the way back's offloads, target >= 2.0)" },
	{ .a = "tcp-back", .b = "tcp-back-sw-csum",
	  .note = "(checksums left to the kernel: AF_XDP TX metadata)" },
	{ .a = "two-way", .b = "two-way-no-direct-bulk",
	  .note = "(seed 003, forward)" },
	{ .a = "two-way", .b = "two-way-no-direct-bulk",
	  .note = "(seed 003, way back)", .back = true },
	{ .a = "two-way", .b = "two-way-prewake",
	  .note = "(without the pre-wake, forward)" },
	{ .a = "two-way", .b = "two-way-prewake",
	  .note = "(without the pre-wake, way back)", .back = true },
	{ .a = "tcp-back", .b = "tcp-back-prewake",
	  .note = "(without the pre-wake)" },
};

const int nrow_gains = ARRAY_SIZE(row_gains);

/* A TCP row: Gbit/s of one iperf3 stream, not pps at the UDP sink. */
bool row_is_tcp(const struct row *r)
{
	return row_ops(r)->tcp;
}

struct row *row_by(const char *name)
{
	for (int i = 0; i < nrows; i++)
		if (!strcmp(row_defs[i].name, name))
			return &rows[i];
	return NULL;
}

/* Is a row of @kind selected? */
bool row_kind_on(enum row_kind kind)
{
	for (int i = 0; i < nrows; i++)
		if (rows[i].on && rows[i].def->kind == kind)
			return true;
	return false;
}

/* @list (comma-separated names; NULL: every row) into rows[].on. */
int rows_select(const char *list)
{
	char *l, *sp, *t;

	for (int i = 0; i < nrows; i++) {
		rows[i].def = &row_defs[i];
		rows[i].on = !list;
	}
	if (!list)
		return 0;
	l = strdup(list);
	for (t = strtok_r(l, ",", &sp); t; t = strtok_r(NULL, ",", &sp)) {
		struct row *r = row_by(t);

		if (!r) {
			fprintf(stderr, "datapath: unknown row '%s'\n", t);
			free(l);
			return -1;
		}
		r->on = true;
	}
	free(l);
	return 0;
}

/* Each selected row that cannot run here is skipped, with its kind's reason. */
void rows_skip(void)
{
	for (int i = 0; i < nrows; i++) {
		const struct row_kind_ops *k = row_ops(&rows[i]);

		if (rows[i].on && k->skip)
			rows[i].skipped = k->skip();
	}
}
