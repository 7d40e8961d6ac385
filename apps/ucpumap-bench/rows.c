// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the rows, as data. A row is a kind (kinds[]: the
 * function that runs it, of kinds.c or latency.c, the one that says when it
 * cannot run, and what it reports) and its settings: ucpumapd's extra flag,
 * coalescing, the generator's flows. A new row of a known kind is a new
 * entry of row_defs[] (and of --rows' help in datapath.c); a gain to print
 * is an entry of gains[]. Rows run in this order, interleaved, round after
 * round. docs/BENCHMARKING.md says what each row measures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath.h"

#define ARRAY_SIZE(a)	((int)(sizeof(a) / sizeof((a)[0])))
#define xstr(x) str(x)
#define str(x) #x

static const struct row_kind_ops kinds[] = {
	[K_KPASS]	= { .kind = K_KPASS, .run = row_kernel },
	[K_KCPUMAP]	= { .kind = K_KCPUMAP, .run = row_kernel },
	[K_DAEMON]	= { .kind = K_DAEMON, .run = row_daemon, .count = true },
	[K_TUN]		= { .kind = K_TUN, .run = row_tun },
	[K_DPDK]	= { .kind = K_DPDK, .run = row_dpdk, .skip = skip_dpdk },
	[K_TWOWAY]	= { .kind = K_TWOWAY, .run = row_daemon, .skip = skip_two_way,
			    .count = true, .two_way = true },
	[K_TCP]		= { .kind = K_TCP, .run = row_daemon, .skip = skip_tcp, .tcp = true },
	[K_TCP_KERNEL]	= { .kind = K_TCP_KERNEL, .run = row_tcp_kernel, .skip = skip_tcp,
			    .tcp = true },
	[K_TCP_KCPUMAP]	= { .kind = K_TCP_KCPUMAP, .run = row_tcp_kernel, .skip = skip_tcp,
			    .tcp = true },
	[K_TCP_BACK]	= { .kind = K_TCP_BACK, .run = row_daemon, .skip = skip_tcp_back,
			    .tcp = true, .back = true },
	[K_UDP_BACK]	= { .kind = K_UDP_BACK, .run = row_daemon, .skip = skip_two_way,
			    .back = true },
	[K_LAT_KERNEL]	= { .kind = K_LAT_KERNEL, .run = row_latency, .skip = skip_latency,
			    .latency = true },
	[K_LAT]		= { .kind = K_LAT, .run = row_latency, .skip = skip_latency,
			    .latency = true },
	[K_LAT_TWOWAY]	= { .kind = K_LAT_TWOWAY, .run = row_latency, .skip = skip_latency,
			    .latency = true },
	[K_LAT_POLL]	= { .kind = K_LAT_POLL, .run = row_latency, .skip = skip_latency_poll,
			    .latency = true },
	[K_SOCKPERF_KERNEL] = { .kind = K_SOCKPERF_KERNEL, .run = row_sockperf,
				.skip = skip_sockperf, .latency = true },
	[K_SOCKPERF]	= { .kind = K_SOCKPERF, .run = row_sockperf, .skip = skip_sockperf,
			    .latency = true },
};

static const struct row_def row_defs[] = {
	{ .name = "kernel-pass", .ops = &kinds[K_KPASS] },
	{ .name = "kernel-cpumap", .ops = &kinds[K_KCPUMAP] },
	{ .name = "pass", .ops = &kinds[K_DAEMON], .flag = "--pass" },
	{ .name = "cpumap-no-recycle", .ops = &kinds[K_DAEMON], .flag = "--no-recycle" },
	{ .name = "cpumap", .ops = &kinds[K_DAEMON] },
	{ .name = "cpumap-coalesce", .ops = &kinds[K_DAEMON], .coalesce = true,
	  .flows = FEW_FLOWS },
	{ .name = "cpumap-coalesce-many-flows", .ops = &kinds[K_DAEMON], .coalesce = true,
	  .flows = MANY_FLOWS },
	{ .name = "cpumap-no-batch", .ops = &kinds[K_DAEMON], .flag = "--no-batch" },
	/* the workers hand the tun each batch of 8, not up to 64 at once */
	{ .name = "cpumap-no-hold", .ops = &kinds[K_DAEMON], .flag = "--no-hold" },
	/* the workers woken only by the RX thread: the pre-wake's cost at flood */
	{ .name = "cpumap-no-prewake", .ops = &kinds[K_DAEMON], .flag = "--prewake",
	  .flag_arg = "off" },
	/* the latency histograms' stamps off: cpumap against it is their cost */
	{ .name = "cpumap-no-latency", .ops = &kinds[K_DAEMON], .flag = "--no-latency" },
	{ .name = "tun-ceiling", .ops = &kinds[K_TUN] },
	{ .name = "dpdk", .ops = &kinds[K_DPDK] },
	{ .name = "two-way", .ops = &kinds[K_TWOWAY] },
	/* with the pre-wake, off by default for two-way workers: two-way
	 * against it is what it costs at flood */
	{ .name = "two-way-prewake", .ops = &kinds[K_TWOWAY], .flag = "--prewake",
	  .flag_arg = "on" },
	{ .name = "two-way-no-direct-bulk", .ops = &kinds[K_TWOWAY], .flag = "--no-direct-bulk" },
	/* one iperf3 TCP stream, dst in bit/s: over the kernel's own path (no
	 * XDP program on vd), then through ucpumapd */
	{ .name = "tcp-kernel", .ops = &kinds[K_TCP_KERNEL] },
	{ .name = "tcp", .ops = &kinds[K_TCP] },
	{ .name = "tcp-coalesce", .ops = &kinds[K_TCP], .coalesce = true },
	/* the same stream through the kernel's cpumap (its kthread's GRO) */
	{ .name = "tcp-kernel-cpumap", .ops = &kinds[K_TCP_KCPUMAP] },
	/* one stream the other way: from the DUT through the tun, ucpumapd's
	 * way back and XSK TX (two-way; its ACKs come the forward way), with
	 * the tun's offloads (super-packets cut by ucpumapd) and without */
	{ .name = "tcp-back", .ops = &kinds[K_TCP_BACK], .coalesce = true },
	/* the same with the pre-wake (its cost to one stream the way back) */
	{ .name = "tcp-back-prewake", .ops = &kinds[K_TCP_BACK], .coalesce = true,
	  .flag = "--prewake", .flag_arg = "on" },
	{ .name = "tcp-back-no-offload", .ops = &kinds[K_TCP_BACK], .coalesce = true,
	  .flag = "--no-offload" },
	/* the offloads, every checksum computed by the way back (none left
	 * to the kernel through AF_XDP TX metadata) */
	{ .name = "tcp-back-sw-csum", .ops = &kinds[K_TCP_BACK], .coalesce = true,
	  .flag = "--no-tx-csum" },
	/* 64-byte UDP datagrams the way back alone (the two-way rows' sender):
	 * delivered in the generator's namespace, pps */
	{ .name = "udp-back", .ops = &kinds[K_UDP_BACK] },
	/* round trips of probes, us (latency.c): through the kernel's cpumap,
	 * through ucpumapd one way (its default, coalescing), both ways */
	{ .name = "latency-kernel-cpumap", .ops = &kinds[K_LAT_KERNEL] },
	{ .name = "latency-cpumap", .ops = &kinds[K_LAT], .coalesce = true },
	/* the same two with the responder pinned beside the worker (latency.c,
	 * RESPOND_CPU_WHY): the path's own time, without the scheduler's */
	{ .name = "latency-kernel-cpumap-pinned", .ops = &kinds[K_LAT_KERNEL],
	  .pin_responder = true },
	{ .name = "latency-cpumap-pinned", .ops = &kinds[K_LAT], .coalesce = true,
	  .pin_responder = true },
	/* the first two as sockperf measures them (sockperf.c): the bench's
	 * figures checked by a tool of their own */
	{ .name = "sockperf-kernel-cpumap", .ops = &kinds[K_SOCKPERF_KERNEL] },
	{ .name = "sockperf-cpumap", .ops = &kinds[K_SOCKPERF], .coalesce = true },
	/* the same with its threads looking for a millisecond before they
	 * sleep, and polling (--poll: CPUs of their own, --rx-cpus) */
	{ .name = "latency-cpumap-spin", .ops = &kinds[K_LAT_POLL], .coalesce = true,
	  .flag = "--spin-us", .flag_arg = "1000" },
	{ .name = "latency-cpumap-poll", .ops = &kinds[K_LAT_POLL], .coalesce = true,
	  .flag = "--poll" },
	/* the same without the worker's pre-wake (ucpumapd's default with
	 * one worker): latency-cpumap against it is its gain */
	{ .name = "latency-cpumap-no-prewake", .ops = &kinds[K_LAT], .coalesce = true,
	  .flag = "--prewake", .flag_arg = "off" },
	/* the RX thread writes the tun itself (--pass, no cpumap): the floor
	 * of an AF_XDP-to-tun path, without the hand-over to a worker; the
	 * RX thread on the first --cpus CPU unless --rx-cpus (daemon.c) */
	{ .name = "latency-pass", .ops = &kinds[K_LAT], .coalesce = true, .flag = "--pass",
	  .rx_on_wcpu = true },
	{ .name = "latency-two-way", .ops = &kinds[K_LAT_TWOWAY], .coalesce = true },
	/* the same with the pre-wake (off by default for a two-way worker):
	 * against latency-two-way, its gain */
	{ .name = "latency-two-way-prewake", .ops = &kinds[K_LAT_TWOWAY], .coalesce = true,
	  .flag = "--prewake", .flag_arg = "on" },
};

/* The gains printed, in this order; a pair is shown when both rows ran. */
static const struct row_gain gains[] = {
	{ .a = "cpumap", .b = "cpumap-no-recycle",
	  .note = "(skb recycling into page_pool)" },
	{ .a = "cpumap", .b = "cpumap-no-batch",
	  .note = "(the batch handed over as one list)" },
	{ .a = "cpumap", .b = "kernel-cpumap",
	  .note = "(target >= 1.0)", .target = 1.0 },
	{ .a = "cpumap", .b = "cpumap-no-latency",
	  .note = "(the latency stamps' cost)" },
	{ .a = "cpumap", .b = "cpumap-no-hold",
	  .note = "(up to 64 in one submission, not 8)" },
	{ .a = "cpumap", .b = "cpumap-no-prewake",
	  .note = "(the pre-wake at flood)" },
	{ .a = "cpumap", .b = "tun-ceiling",
	  .note = "(target >= 0.95)", .target = 0.95 },
	{ .a = "cpumap", .b = "dpdk",
	  .note = "(target >= 3.0)", .target = 3.0 },
	{ .a = "cpumap-coalesce", .b = "cpumap",
	  .note = "(coalescing, " xstr(FEW_FLOWS) " flows)" },
	{ .a = "cpumap-coalesce", .b = "kernel-cpumap",
	  .note = "(target >= 2.0)", .target = 2.0 },
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
	  .note = "(direct bulk recycling, forward)" },
	{ .a = "two-way", .b = "two-way-no-direct-bulk",
	  .note = "(direct bulk recycling, way back)", .back = true },
	{ .a = "two-way", .b = "two-way-prewake",
	  .note = "(without the pre-wake, forward)" },
	{ .a = "two-way", .b = "two-way-prewake",
	  .note = "(without the pre-wake, way back)", .back = true },
	{ .a = "tcp-back", .b = "tcp-back-prewake",
	  .note = "(without the pre-wake)" },
};

const struct row_gain *row_gains(int *n)
{
	*n = ARRAY_SIZE(gains);
	return gains;
}

struct row *row_by(const struct bench_run *br, const char *name)
{
	for (int i = 0; i < br->nrows; i++)
		if (!strcmp(br->rows[i].def->name, name))
			return &br->rows[i];
	return NULL;
}

/* Is a row of @kind selected? */
bool row_kind_on(const struct bench_run *br, enum row_kind kind)
{
	for (int i = 0; i < br->nrows; i++)
		if (br->rows[i].on && row_kind(&br->rows[i]) == kind)
			return true;
	return false;
}

/* Row @d starts ucpumapd: the kernel's rows, the tun ceiling's and testpmd's
 * do not. */
static bool row_runs_daemon(const struct row_def *d)
{
	switch (d->ops->kind) {
	case K_KPASS: case K_KCPUMAP: case K_TUN: case K_DPDK: case K_TCP_KERNEL:
	case K_TCP_KCPUMAP: case K_LAT_KERNEL: case K_SOCKPERF_KERNEL:
		return false;
	default:
		return true;
	}
}

bool row_is_pass(const struct row_def *d)
{
	return d->flag && !strcmp(d->flag, "--pass");
}

bool rows_latency_only(const struct bench_run *br)
{
	for (int i = 0; i < br->nrows; i++)
		if (br->rows[i].on && !br->rows[i].def->ops->latency)
			return false;
	return true;
}

bool rows_pass_only(const struct bench_run *br)
{
	for (int i = 0; i < br->nrows; i++) {
		const struct row_def *d = br->rows[i].def;

		if (br->rows[i].on && row_runs_daemon(d) && !row_is_pass(d))
			return false;
	}
	return true;
}

/* The rows of the run, in row_defs[]' order, into br->rows (the caller
 * frees it); @list (comma-separated names; NULL: every row) into their
 * .on. 0, or -1 after a message. */
int rows_select(struct bench_run *br, const char *list)
{
	char *l, *sp, *t;

	br->rows = calloc(ARRAY_SIZE(row_defs), sizeof(*br->rows));
	if (!br->rows) {
		fprintf(stderr, "datapath: out of memory\n");
		return -1;
	}
	br->nrows = ARRAY_SIZE(row_defs);
	for (int i = 0; i < br->nrows; i++) {
		br->rows[i].def = &row_defs[i];
		br->rows[i].on = !list;
		br->rows[i].responder_cpu = LAT_NOT_PLACED;
	}
	if (!list)
		return 0;
	if (list_check(list, "datapath: --rows"))
		return -1;
	l = strdup(list);
	if (!l)
		return -1;
	for (t = strtok_r(l, ",", &sp); t; t = strtok_r(NULL, ",", &sp)) {
		struct row *r = row_by(br, t);

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
void rows_skip(struct bench_run *br)
{
	for (int i = 0; i < br->nrows; i++) {
		const struct row_kind_ops *k = br->rows[i].def->ops;

		if (br->rows[i].on && k->skip)
			br->rows[i].skipped = k->skip(&br->cfg);
	}
}
