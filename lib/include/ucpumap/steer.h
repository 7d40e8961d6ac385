/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the XDP steering program and userspace share: its configuration,
 * the metadata it writes in front of each packet, and the policies. Plain
 * fixed-size types only: this header is compiled for BPF and for the host.
 */
#ifndef UCPUMAP_STEER_H
#define UCPUMAP_STEER_H

#include <linux/types.h>

/* The policies of xdp-bench redirect-cpu. */
enum ucm_steer_policy {
	UCM_STEER_FIXED = 0,	/* every packet to one worker */
	UCM_STEER_RR,		/* round-robin, per receiving CPU */
	UCM_STEER_L4_HASH,	/* flow hash of addresses, protocol, ports */
	UCM_STEER_L4_SPORT,	/* L4 source port modulo the workers */
	UCM_STEER_L4_DPORT,	/* L4 destination port modulo the workers */
	UCM_STEER__MAX,
};

enum ucm_steer_flags {
	UCM_STEER_F_SYMMETRIC = 1 << 0,	/* L4_HASH: both directions alike */
	UCM_STEER_F_IPV4 = 1 << 1,	/* steer IPv4 to ucpumap */
	UCM_STEER_F_IPV6 = 1 << 2,	/* steer IPv6 to ucpumap */
	/* ARP, IPv6 neighbour discovery and multicast listener messages, and
	 * the interface's own IP (link scope, multicast, IGMP, DHCP's
	 * ports) to ucpumap too: when a tap behind it is the host's
	 * interface on this link (two-way tap), its stack must see them */
	UCM_STEER_F_LINK_CTRL = 1 << 3,
	/* Stamp each packet's arrival (bpf_ktime_get_ns(), CLOCK_MONOTONIC)
	 * in front of its metadata (struct ucm_xdp_stamp): the RX thread's
	 * rx_hist, from the RX ring to the workers */
	UCM_STEER_F_STAMP = 1 << 4,
};

/* The program's configuration: one entry of ucm_steer_cfg_map. */
struct ucm_steer_cfg {
	__u32 policy;		/* enum ucm_steer_policy */
	__u32 nworkers;		/* 1 .. UCM_STEER_MAX_WORKERS */
	__u32 fixed;		/* UCM_STEER_FIXED's worker */
	__u32 flags;		/* enum ucm_steer_flags */
};

#define UCM_STEER_MAX_WORKERS	64
#define UCM_STEER_MAX_QUEUES	64

/* Why the program left a frame to the kernel (XDP_PASS): each a per-CPU
 * counter, the key of ucm_steer_pass. */
enum ucm_steer_pass {
	UCM_STEER_PASS_OTHER_HOST = 0,	/* unicast to another station's MAC */
	/* ARP, neighbour discovery, MLD, and the interface's own IP: link
	 * scope, multicast, IGMP, UDP to ports 67, 68 (DHCP's) and 546,
	 * 547 (DHCPv6's) */
	UCM_STEER_PASS_LINK_CTRL,
	/* not IPv4, IPv6 or ARP (more than two VLAN tags included), or a
	 * family not steered (UCM_STEER_F_IPV4, _IPV6) */
	UCM_STEER_PASS_UNCLAIMED,
	UCM_STEER_PASS_SHORT,		/* cut in its Ethernet, VLAN or IP header
					 * (IPv4 options, IPv6 extension headers) */
	/* ucm_xdp_cpumap: the worker has no CPU, or its CPU no entry */
	UCM_STEER_PASS_NO_CPU,
	/* steered, but its queue has no socket in the XSK map (a queue
	 * nobody serves; any before the sockets are in, or once they are
	 * out): bpf_redirect_map()'s fallback */
	UCM_STEER_PASS_NO_SOCKET,
	UCM_STEER_PASS__MAX,
};
/* Counts by reason are arrays this long (ucm_dp_stats.xdp_pass): a new
 * reason changes no struct's size. */
#define UCM_STEER_PASS_SLOTS	8

/*
 * Written by the program just before the packet (XDP metadata), read by
 * the RX thread at [addr - sizeof(meta), addr). 8 bytes: metadata must be
 * a multiple of 4 and at most 32 bytes on older kernels.
 */
struct ucm_xdp_meta {
	__u32 magic;		/* UCM_XDP_META_MAGIC: the program ran */
	__u16 worker;		/* the chosen worker */
	__u16 rsvd;
};

#define UCM_XDP_META_MAGIC	0x75636d31	/* "ucm1" */
/* The same, with a struct ucm_xdp_stamp right in front (UCM_STEER_F_STAMP). */
#define UCM_XDP_META_MAGIC_STAMP 0x75636d32	/* "ucm2" */

/* The packet's arrival in the program, CLOCK_MONOTONIC ns: at
 * [addr - sizeof(meta) - 8, addr - sizeof(meta)) when the meta's magic is
 * UCM_XDP_META_MAGIC_STAMP. */
struct ucm_xdp_stamp {
	__u64 ns;
};

#ifndef __bpf__
#include <stdint.h>
#include "ucpumap/api.h"
#include "ucpumap/pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ucm_steer__pick() - the XDP program's choice, made in userspace
 * @cfg: the same configuration the program has
 * @pkt: a parsed packet
 * @rr: round-robin position, owned by the calling RX thread
 *
 * For packets that arrive without metadata (generic mode): the same
 * policy on the same inputs gives the same worker as ucm_xdp_steer
 * (round-robin excepted: the program keeps one position per CPU).
 */
UCM_API uint32_t ucm_steer__pick(const struct ucm_steer_cfg *cfg,
				 const struct ucm_pkt *pkt, uint32_t *rr);

/**
 * typedef ucm_steer_fn - the application picks each packet's worker
 * @ctx: the context given with it
 * @pkt: the packet, parsed
 * @data: its first byte (read only); @len: the bytes at @data: the whole
 *        packet, or of a packet of several frames its first frame's part
 *        (@pkt->len is then the whole packet's)
 *
 * Instead of the built-in policies and the XDP program's choice: runs on
 * the queue's RX thread for every packet that parses (one that does not
 * goes to worker 0, whose parse drops and counts it). Returns the worker,
 * 0 .. nworkers - 1; anything else is counted (rx_steer_err) and the frame
 * goes home. It must not block, nor keep @pkt or @data.
 */
typedef uint32_t (*ucm_steer_fn)(void *ctx, const struct ucm_pkt *pkt,
				 const uint8_t *data, uint32_t len);

#ifdef __cplusplus
}
#endif
#endif

#endif /* UCPUMAP_STEER_H */
