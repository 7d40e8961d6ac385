// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's live-frame engine: run by BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES over the template frame that ucpumap-gen
 * built, once per frame, and sent out of the configured interface by
 * bpf_redirect().
 *
 * Per frame it rewrites what varies: the UDP source port (the flows, in
 * turn) and, when asked, the sequence number at the start of the payload
 * and the send time after it (bpf_ktime_get_ns(): CLOCK_MONOTONIC);
 * the UDP checksum is updated incrementally (RFC 1624) from the values
 * found in the frame. The kernel keeps the data of a recycled page as the
 * last run left it, so these are whatever was last written there, always
 * consistent with the checksum beside them; nothing else in the frame
 * changes.
 *
 * The counters are plain globals, not per-CPU: one generator thread runs
 * the program at a time (the test run is synchronous), so nothing is
 * shared, and the sequence stays consecutive when the thread moves to
 * another CPU.
 */
#include <linux/bpf.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "gen.h"

/* Set by ucpumap-gen before load; the verifier sees constants. */
const volatile struct ucm_gen_cfg ucm_gen_cfg = {};

/* Frames the program has run on: the next sequence number. */
__u64 ucm_gen_frames = 0;
/* The next flow, 0 .. flows - 1. */
__u32 ucm_gen_flow = 0;

static __always_inline __u32 csum_add16(__u32 sum, __u16 old, __u16 new)
{
	/* RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m'). */
	return sum + (__u16)~old + new;
}

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* @v big-endian at @p, a 16-bit word at a time (the payload is only 2-byte
 * aligned), into the checksum's running sum @sum. The caller checked that
 * the 8 bytes are in the frame. */
static __always_inline __u32 put64(__u16 *p, __u64 v, __u32 sum)
{
	__u16 w0 = bpf_htons((__u16)(v >> 48)), w1 = bpf_htons((__u16)(v >> 32));
	__u16 w2 = bpf_htons((__u16)(v >> 16)), w3 = bpf_htons((__u16)v);

	sum = csum_add16(sum, p[0], w0);
	sum = csum_add16(sum, p[1], w1);
	sum = csum_add16(sum, p[2], w2);
	sum = csum_add16(sum, p[3], w3);
	p[0] = w0;
	p[1] = w1;
	p[2] = w2;
	p[3] = w3;
	return sum;
}

SEC("xdp")
int ucm_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct udphdr *udp;
	__u16 *seq, port;
	__u32 sum, flow;
	__u64 n;

	if (ucm_gen_cfg.flags & UCM_GEN_F_IPV6)
		udp = data + UCM_GEN_UDP_OFF_V6;
	else
		udp = data + UCM_GEN_UDP_OFF_V4;
	if ((void *)(udp + 1) > data_end)
		return XDP_ABORTED;

	n = ucm_gen_frames++;
	flow = ucm_gen_flow;
	ucm_gen_flow = flow + 1 < ucm_gen_cfg.flows ? flow + 1 : 0;

	sum = (__u16)~udp->check;
	port = bpf_htons((__u16)(ucm_gen_cfg.sport + flow));
	sum = csum_add16(sum, udp->source, port);
	udp->source = port;

	if (ucm_gen_cfg.flags & UCM_GEN_F_SEQ) {
		seq = (__u16 *)(udp + 1);
		if ((void *)(seq + 4) > data_end)
			return XDP_ABORTED;
		sum = put64(seq, n, sum);
	}
	if (ucm_gen_cfg.flags & UCM_GEN_F_STAMP) {
		seq = (__u16 *)(udp + 1) + 4;
		if ((void *)(seq + 4) > data_end)
			return XDP_ABORTED;
		sum = put64(seq, bpf_ktime_get_ns(), sum);
	}
	/* A computed 0 goes out as 0xffff (0 means "no checksum" in UDP). */
	udp->check = csum_fold(sum) ?: 0xffff;

	return bpf_redirect(ucm_gen_cfg.ifindex, 0);
}

char _license[] SEC("license") = "Dual BSD/GPL";
