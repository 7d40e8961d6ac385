// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's XDP programs: ucm_gen, run by BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES over the template frame (the live engine),
 * and ucm_gen_loop, run on a veth device of the generator's own by the
 * frames that circulate through it (the loop engine, apps/ucpumap-gen/
 * loop.c). Both send each frame out of IFACE.
 *
 * Per frame they rewrite what varies: the UDP source port (the flows, in
 * turn) and, when asked, the sequence number at the start of the payload
 * and the send time after it (bpf_ktime_get_ns(): CLOCK_MONOTONIC);
 * the UDP checksum is updated incrementally (RFC 1624) from the values
 * found in the frame, always consistent with the checksum beside them
 * (gen.h); nothing else in the frame changes.
 *
 * The state is a plain global, not per-CPU: one program run at a time
 * writes it (gen.h), so the sequence stays consecutive when the sending
 * CPU changes.
 */
#include <linux/bpf.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "gen.h"

/* Set by ucpumap-gen before load; the verifier sees constants. */
const volatile struct ucm_gen_cfg ucm_gen_cfg = {};

struct ucm_gen_state ucm_gen_st = {};

/* The loop program's destinations, both sent a copy (BPF_F_BROADCAST):
 * the loop's other end, which brings the frame back, and IFACE. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, UCM_GEN_LOOP_DEVS);
	__type(key, __u32);
	__type(value, __u32);
} ucm_gen_out SEC(".maps");

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

/* The next frame's varying fields written into the frame at @ctx, counted.
 * Return 0, or -1 for a frame too short for them. */
static __always_inline int rewrite(struct xdp_md *ctx)
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
		return -1;
	if ((ucm_gen_cfg.flags & UCM_GEN_F_SEQ) && (void *)(udp + 1) + UCM_GEN_SEQ_LEN > data_end)
		return -1;
	if ((ucm_gen_cfg.flags & UCM_GEN_F_STAMP) &&
	    (void *)(udp + 1) + UCM_GEN_SEQ_LEN + UCM_GEN_STAMP_LEN > data_end)
		return -1;

	/* An atomic add, a full barrier (lock xadd on x86): our count before
	 * the next run's read of the limit, which loop_send() pairs with. One
	 * run at a time writes it (gen.h), so the value read is the one
	 * added to. */
	n = ucm_gen_st.frames;
	__sync_fetch_and_add(&ucm_gen_st.frames, 1);
	flow = ucm_gen_st.flow;
	ucm_gen_st.flow = flow + 1 < ucm_gen_cfg.flows ? flow + 1 : 0;

	sum = (__u16)~udp->check;
	port = bpf_htons((__u16)(ucm_gen_cfg.sport + flow));
	sum = csum_add16(sum, udp->source, port);
	udp->source = port;

	if (ucm_gen_cfg.flags & UCM_GEN_F_SEQ) {
		seq = (__u16 *)(udp + 1);
		if ((void *)(seq + 4) > data_end)
			return -1;
		sum = put64(seq, n, sum);
	}
	if (ucm_gen_cfg.flags & UCM_GEN_F_STAMP) {
		seq = (__u16 *)(udp + 1) + 4;
		if ((void *)(seq + 4) > data_end)
			return -1;
		sum = put64(seq, bpf_ktime_get_ns(), sum);
	}
	/* A computed 0 goes out as 0xffff (0 means "no checksum" in UDP). */
	udp->check = csum_fold(sum) ?: 0xffff;
	return 0;
}

SEC("xdp")
int ucm_gen(struct xdp_md *ctx)
{
	if (rewrite(ctx))
		return XDP_ABORTED;
	return bpf_redirect(ucm_gen_cfg.ifindex, 0);
}

/*
 * The loop engine: each frame that comes round is rewritten and sent both
 * out of IFACE and back into the loop, until @limit frames went out; then
 * the loop's frames are dropped and it drains. Anything else the loop's
 * devices carry (the kernel's own IPv6 router and listener messages) is not
 * the template's length and destination port, and is dropped.
 */
SEC("xdp")
int ucm_gen_loop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct udphdr *udp;

	if (data + ucm_gen_cfg.size != data_end)
		return XDP_DROP;
	udp = data + (ucm_gen_cfg.flags & UCM_GEN_F_IPV6 ? UCM_GEN_UDP_OFF_V6 : UCM_GEN_UDP_OFF_V4);
	if ((void *)(udp + 1) > data_end || udp->dest != bpf_htons(ucm_gen_cfg.dport))
		return XDP_DROP;
	if (ucm_gen_st.frames >= *(volatile __u64 *)&ucm_gen_st.limit)
		return XDP_DROP;
	if (rewrite(ctx))
		return XDP_DROP;
	return bpf_redirect_map(&ucm_gen_out, 0, BPF_F_BROADCAST);
}

char _license[] SEC("license") = "Dual BSD/GPL";
