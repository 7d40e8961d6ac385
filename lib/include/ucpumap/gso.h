/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_gso: coalescing same-flow UDP datagrams and TCP segments into one
 * GSO super-packet (GSO_UDP_L4, GSO_TCPV4, GSO_TCPV6) for a tun write (our
 * cpumap GRO). This is the planning half: which packets of a batch may
 * merge, and the headers of the super-packet. The tun sink's write path
 * (UCM_TUN_F_COALESCE) uses it.
 *
 * The merge rules follow the kernel's GRO, so that what the kernel's stack
 * cuts back out of a super-packet is what arrived. Unlike the kernel's GRO
 * (UDP only for a UDP_GRO socket or with rx-udp-gro-forwarding), every
 * UDP flow merges: netfilter and tc before the socket see one packet a
 * group. For both protocols:
 *   - over IPv4 without options or fragmentation, or over IPv6 without
 *     extension headers;
 *   - the same flow (addresses, protocol, ports, IPv6 flow label) and the
 *     same TTL/hop limit, TOS/traffic class and DF: a change of those
 *     ends the flow's group, the next packet starts a new one;
 *   - verified checksums, IPv4 header and L4 (for UDP also non-zero): a
 *     packet whose checksum is wrong is never merged, and goes through
 *     alone as it came, so the kernel drops it as it would have (checked
 *     only for packets about to share a write); an L4 checksum that holds
 *     the pseudo-header sum alone (partial: its sender's checksum offload)
 *     merges, as the kernel's GRO merges CHECKSUM_PARTIAL packets: the
 *     kernel completes it, merged or alone (the tun writes it NEEDS_CSUM);
 *   - a payload (an empty packet, such as a TCP pure ACK, goes alone);
 *   - equal payload sizes, but a shorter last one, which closes the group;
 *   - IPv4 IDs counting up by one, or with DF all equal; the group's
 *     second packet decides which, as in the kernel's GRO (the kernel's
 *     segmentation gives incrementing IDs back; for DF it does not care);
 *   - at most UCM_GSO_MAX_SEGS packets (UDP: UCM_GSO_MAX_UDP_SEGS) and
 *     UCM_GSO_MAX_BYTES of IP packet.
 * TCP also (tcp_gro_receive()'s tests):
 *   - the sequence number continues the group's last segment exactly;
 *   - the same ACK number, window, header length and options (so the same
 *     timestamps), and the same flags but PSH;
 *   - no SYN, FIN, RST, URG or CWR: such a segment goes alone;
 *   - PSH only on the last: a PSH segment joins a group and closes it, and
 *     the super-packet carries PSH.
 * Groups keep each flow's order: a flow's next group starts after its
 * previous one closed, groups are written in the order of their first
 * packet, and a packet that goes alone (a bad checksum, a fragment, a pure
 * ACK...) closes the open group of its flow (a fragment without ports:
 * every group of its addresses and protocol), so nothing of its flow that
 * came after it is written before it.
 */
#ifndef UCPUMAP_GSO_H
#define UCPUMAP_GSO_H

#include <stdbool.h>
#include <stdint.h>
#ifdef __cplusplus
struct virtio_net_hdr;	/* <linux/virtio_net.h> is C only: a field named class */
#else
#include <linux/virtio_net.h>
#endif
#include "ucpumap/api.h"
#include "ucpumap/pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Linux 5.18's UDP segmentation offload type; Debian 12's headers (6.1
 * uapi, older glibc copies) may lack it. */
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4	5
#endif

/* Packets per super-packet: tun refuses 129 UDP segments (kernel 6.18);
 * UDP_MAX_SEGMENTS was 64 before Linux 6.10, so UDP groups stop there,
 * which a hold of at most 71 packets hardly notices. */
#define UCM_GSO_MAX_SEGS	128
#define UCM_GSO_MAX_UDP_SEGS	64
/* The IP packet, header included: IPv4's total length is 16 bits; an
 * IPv6 group stops 40 bytes short of its payload length's limit. */
#define UCM_GSO_MAX_BYTES	65535
/* Packets one plan covers. */
#define UCM_GSO_MAX_BATCH	256

/**
 * struct ucm_gso_plan - the groups of a batch, in write order
 * @ngroups: groups (a packet that merges with nothing is a group of 1)
 * @head: each group's first packet (an index into the batch)
 * @nseg: each group's packet count
 * @push: TCP: each group's last segment carries PSH
 * @next: for each packet, the next one of its group, or -1
 */
struct ucm_gso_plan {
	uint32_t ngroups;
	uint16_t head[UCM_GSO_MAX_BATCH];
	uint16_t nseg[UCM_GSO_MAX_BATCH];
	bool push[UCM_GSO_MAX_BATCH];
	int16_t next[UCM_GSO_MAX_BATCH];
};

/* ucm_gso__plan() flags: leave a protocol alone (e.g. a kernel that
 * refuses its super-packets: UDP GSO from a tun needs Linux 6.2). */
#define UCM_GSO_F_NO_UDP	(1U << 0)
#define UCM_GSO_F_NO_TCP	(1U << 1)
/* Frames are written whole (a tap): packets merge only under the same
 * Ethernet header, and VLAN-tagged ones not at all. */
#define UCM_GSO_F_L2		(1U << 2)
/* UDP groups take only datagrams of their first one's size: a shorter one
 * starts a group of its own (a kernel that refuses a super-packet with a
 * short last segment, as Linux 6.6.44 did). */
#define UCM_GSO_F_UDP_EQUAL	(1U << 3)

/**
 * ucm_gso__plan() - decide which packets merge
 * @pkts: the parsed descriptors; @data: each packet's frame data (Ethernet
 *        header first, as ucm_pkt__parse() saw it); @n: at most
 *        UCM_GSO_MAX_BATCH; @flags: UCM_GSO_F_*
 *
 * Reads the packets (to verify checksums) and writes nothing to them.
 * Return: 0, or -EINVAL for too many packets or unknown flags.
 */
UCM_API int ucm_gso__plan(const struct ucm_pkt *const *pkts, const uint8_t *const *data,
			  uint32_t n, uint32_t flags, struct ucm_gso_plan *plan);

/**
 * ucm_gso__build() - turn a group's first packet into its super-packet's
 * headers
 * @pkt, @data: the group's first packet (its IP and L4 headers are
 *              rewritten in place: lengths, IPv4 header checksum, TCP PSH,
 *              and the L4 check field to the pseudo-header sum the kernel
 *              completes)
 * @nseg: packets in the group; @payload: their L4 payload bytes in all
 * @push: TCP: the group's last segment has PSH (plan->push)
 * @l2: the frame is written whole, from its Ethernet header (a tap): the
 *      vnet header's offsets count from there, not from the IP header
 * @vh: the virtio_net header to write before what is written
 *
 * For a group of 1 nothing is rewritten and @vh is zeroed.
 */
UCM_API void ucm_gso__build(const struct ucm_pkt *pkt, uint8_t *data, uint32_t nseg,
			    uint32_t payload, bool push, bool l2, struct virtio_net_hdr *vh);

#ifdef __cplusplus
}
#endif
#endif /* UCPUMAP_GSO_H */
