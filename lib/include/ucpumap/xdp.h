/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucm_xdp: the XDP steering program, embedded in the library (no file on
 * disk is needed), loaded with libbpf and configured from here.
 *
 * Programs in the object:
 *   ucm_xdp__steer_fd()  - picks the worker, writes it into the XDP
 *                          metadata (where the kernel's XDP has
 *                          bpf_xdp_adjust_meta(); else a program without
 *                          it is loaded), redirects to the XSK socket of
 *                          the receiving queue (ucpumap's path);
 *   ucm_xdp__cpumap_fd() - the same choice into the kernel's own cpumap
 *                          (the benchmark's baseline).
 * The kernel keeps (XDP_PASS): ARP and every other non-IP EtherType (ARP
 * claimed with UCM_STEER_F_LINK_CTRL, for a tap), a family the
 * configuration does not claim, a frame too short for its Ethernet
 * header, a VLAN tag or its fixed IP header, one with more than two VLAN
 * tags, IPv6 neighbour discovery and multicast listener messages, and
 * the interface's own IP (link scope, multicast, IGMP, DHCP's ports)
 * (these unless UCM_STEER_F_LINK_CTRL): docs/design/xsk.md, "What the
 * kernel keeps".
 *
 * Threads: control path only; one thread at a time per object.
 * Errors: 0 or a negative errno; pointers NULL with errno set.
 */
#ifndef UCPUMAP_XDP_H
#define UCPUMAP_XDP_H

#include <stddef.h>
#include <stdint.h>

#include "ucpumap/api.h"
#include "ucpumap/steer.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ucm_xdp;

struct ucm_xdp_opts {
	size_t sz;
	uint32_t policy;	/* enum ucm_steer_policy; default UCM_STEER_FIXED */
	uint32_t nworkers;	/* 1 .. UCM_STEER_MAX_WORKERS; default 1 */
	uint32_t fixed;		/* UCM_STEER_FIXED's worker */
	uint32_t flags;		/* enum ucm_steer_flags; neither IPV4 nor IPV6: both */
	uint32_t load_flags;	/* enum ucm_xdp_load_flags */
	size_t :0;
};
#define ucm_xdp_opts__last_field load_flags

enum ucm_xdp_load_flags {
	/* Load the programs frags-aware (BPF_F_XDP_HAS_FRAGS, Linux 5.18):
	 * they see a packet of several buffers by its first (its headers
	 * are there), and a driver lets them run at an MTU above a page
	 * (veth refuses other programs there). Needed by UCM_XSK_F_SG. */
	UCM_XDP_F_FRAGS = 1 << 0,
};

/**
 * ucm_xdp__load() - load the embedded programs and configure them
 *
 * Needs CAP_BPF and CAP_NET_ADMIN (the XDP program, its XSKMAP and
 * CPUMAP), and CAP_PERFMON or CAP_SYS_ADMIN for the verifier; root has
 * them (libucpumap(3), PRIVILEGES). Return: the object, or NULL with
 * errno: EINVAL for a bad option, EPERM without privileges; the log says
 * which.
 */
UCM_API struct ucm_xdp *ucm_xdp__load(const struct ucm_xdp_opts *opts);

/**
 * ucm_xdp__destroy() - detach, unload and free
 *
 * Detaches what ucm_xdp__attach() attached, if it is still there (as
 * ucm_xdp__detach() does), then closes the programs and their maps. NULL
 * is fine.
 */
UCM_API void ucm_xdp__destroy(struct ucm_xdp *x);

/**
 * ucm_xdp__configure() - replace the steering configuration
 * @cfg: the new one; neither UCM_STEER_F_IPV4 nor _IPV6 means both
 *
 * Takes effect for the next packet. Return: 0, or -EINVAL for a bad
 * configuration (the log says which) or -errno when the map refused it;
 * the current configuration stays then.
 */
UCM_API int ucm_xdp__configure(struct ucm_xdp *x, const struct ucm_steer_cfg *cfg);

/**
 * ucm_xdp__config() - read the current steering configuration
 * @cfg: filled with what ucm_xdp__load() or the last successful
 *       ucm_xdp__configure() set (both families flagged where neither was)
 *
 * Reads only: ucm_xdp__configure() is the one that replaces it.
 */
UCM_API void ucm_xdp__config(const struct ucm_xdp *x, struct ucm_steer_cfg *cfg);

UCM_API int ucm_xdp__steer_fd(const struct ucm_xdp *x);
UCM_API int ucm_xdp__cpumap_fd(const struct ucm_xdp *x);

/**
 * ucm_xdp__pass_stats() - the frames the program left to the kernel
 * @counts: filled with the count of each reason (enum ucm_steer_pass),
 *          summed over the CPUs, from the load on
 * @n: @counts' length; reasons past it are not read, slots past
 *     UCM_STEER_PASS__MAX are zeroed
 *
 * A bpf(2) map lookup. Any thread. Return: 0 or -errno (-EINVAL: @x or
 * @counts NULL).
 */
UCM_API int ucm_xdp__pass_stats(const struct ucm_xdp *x, uint64_t *counts, uint32_t n);
/* A reason's short name ("other_host", "link_ctrl", "unclaimed", "short",
 * "no_cpu", "no_socket"), or "unknown". */
UCM_API const char *ucm_pass_reason_str(uint32_t reason);

/* Point queue @queue at an XSK socket; @xsk_fd < 0 takes it out. */
UCM_API int ucm_xdp__set_xsk(struct ucm_xdp *x, uint32_t queue, int xsk_fd);

/**
 * ucm_xdp__set_kernel_cpumap() - worker i -> CPU @cpus[i] for the
 * baseline program, each CPU's kthread with a ring of @qsize (1..16384)
 */
UCM_API int ucm_xdp__set_kernel_cpumap(struct ucm_xdp *x, const int *cpus,
				       uint32_t n, uint32_t qsize);

enum ucm_xdp_attach_flags {
	UCM_XDP_ATTACH_SKB = 1 << 0,	/* generic (skb) mode, not native */
	UCM_XDP_ATTACH_CPUMAP = 1 << 1,	/* the kernel-cpumap baseline program */
	UCM_XDP_ATTACH_REPLACE = 1 << 2,/* replace another program */
};

/**
 * ucm_xdp__attach() - attach a program to @ifindex, as a bpf_link
 *
 * The kernel detaches a link when its last fd closes (also when the process
 * is killed) and refuses everybody else meanwhile: an interface an XDP link
 * holds (another instance) is refused with -EBUSY before anything is
 * touched, the message naming the link, its program and its holder's pid.
 * A program attached the old way (netlink) is replaced when it is a stale
 * one of ours, refused with -EBUSY otherwise unless UCM_XDP_ATTACH_REPLACE.
 * The program that flag took off is held, and put back (through netlink,
 * CAP_NET_ADMIN) when this attach fails or at ucm_xdp__detach(), unless a
 * third came meanwhile.
 * Kernels without XDP links (before 5.9) get the netlink attach, said so
 * in the log. Flags outside enum ucm_xdp_attach_flags: -EINVAL.
 * Return: 0 or -errno.
 */
UCM_API int ucm_xdp__attach(struct ucm_xdp *x, int ifindex, uint32_t flags);

/* Detach what ucm_xdp__attach() attached (the link's fd closed), if it is
 * still there, and put back what UCM_XDP_ATTACH_REPLACE took off. */
UCM_API int ucm_xdp__detach(struct ucm_xdp *x);

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_XDP_H */
