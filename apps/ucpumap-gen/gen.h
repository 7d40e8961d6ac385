/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What ucpumap-gen tells its XDP program (bpf/gen.bpf.c): shared by both,
 * so it builds as is with "clang -target bpf" (no libc).
 *
 * The live engine's program runs once per frame under BPF_PROG_TEST_RUN
 * with BPF_F_TEST_XDP_LIVE_FRAMES. The kernel copies the template into a
 * page only when the page is first used and then recycles the page with
 * whatever the last run left in it; the loop engine's program runs on the
 * same few frames again and again. So the programs rewrite every varying
 * field each time, and update the UDP checksum from the values they find
 * there (always consistent with the checksum beside them).
 *
 * Frame layout: Ethernet, IPv4 (20 bytes, no options) or IPv6 (40 bytes,
 * no extension headers), UDP; with UCM_GEN_F_SEQ the first 8 bytes of the
 * UDP payload hold the sequence number, big-endian, counting from 0; with
 * UCM_GEN_F_STAMP (which comes with UCM_GEN_F_SEQ) the next 8 the time the
 * frame was written, CLOCK_MONOTONIC in ns, big-endian: a receiver on the
 * same host takes its one-way latency from it.
 */
#ifndef UCM_GEN_H
#define UCM_GEN_H

#include <linux/types.h>

#define UCM_GEN_F_IPV6		(1U << 0)	/* IPv6, else IPv4 */
#define UCM_GEN_F_SEQ		(1U << 1)	/* sequence number in the payload */
#define UCM_GEN_F_STAMP		(1U << 2)	/* and the send time after it */

#define UCM_GEN_UDP_OFF_V4	(14 + 20)
#define UCM_GEN_UDP_OFF_V6	(14 + 40)
#define UCM_GEN_SEQ_LEN		8
#define UCM_GEN_STAMP_LEN	8

/* The programs' only read-only global (.rodata), set before load. */
struct ucm_gen_cfg {
	__u32 ifindex;		/* the live engine's bpf_redirect() target */
	__u32 flags;		/* UCM_GEN_F_* */
	__u32 flows;		/* source ports: sport .. sport + flows - 1 (>= 1) */
	__u16 sport;		/* first source port, host order */
	__u16 dport;		/* destination port, host order */
	__u32 size;		/* frame length: the loop engine takes no other */
};

/*
 * The programs' writable global (.bss), which ucpumap-gen maps. One
 * program run at a time writes @frames and @flow: the live engine's test
 * run is synchronous, and the loop engine's frames all pass through one
 * NAPI instance, which one CPU polls at a time. @limit is ucpumap-gen's
 * alone: the loop program sends while @frames is below it.
 */
struct ucm_gen_state {
	__u64 frames;		/* frames sent: the next sequence number */
	__u64 limit;		/* loop engine: send up to this count */
	__u32 flow;		/* the next flow, 0 .. flows - 1 */
	__u32 pad;
};

#define UCM_GEN_LOOP_DEVS	2	/* the loop program's devmap: the loop, IFACE */

#endif /* UCM_GEN_H */
