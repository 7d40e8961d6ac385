// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * XDP steering: pick the worker for each packet with one of xdp-bench
 * redirect-cpu's policies and hand the packet on.
 *
 *   ucm_xdp_steer   - writes the worker into the XDP metadata in front of
 *                     the packet and redirects to the XSK socket of the
 *                     receiving queue (ucpumap's path);
 *   ucm_xdp_nometa  - the same without metadata, for a kernel whose XDP
 *                     has no bpf_xdp_adjust_meta(): the RX thread picks
 *                     the worker itself;
 *   ucm_xdp_cpumap  - the same choice, redirected into a BPF cpumap served
 *                     by the kernel's own kthreads (the baseline the
 *                     benchmark sets ucpumap beside).
 *
 * A unicast frame to another station's MAC (where the interface's is
 * set: ucm_steer_mac) stays with the kernel, as it would there.
 * Control traffic stays with the kernel (XDP_PASS): ARP, IPv6 neighbour
 * discovery and multicast listener messages (unless UCM_STEER_F_LINK_CTRL
 * claims them for a tap behind ucpumap), and whatever the configuration
 * does not claim. Each frame left to the kernel is counted by its reason
 * (ucm_steer_pass).
 *
 * The flow hash and what goes into it mirror lib/proto/pkt.c exactly, so that
 * where metadata is missing (generic mode) userspace picks the same worker
 * from its own descriptor: addresses and protocol always; ports only for
 * UDP and TCP that are not fragments; for IPv6 fragments the protocol is the
 * fragment header's next header.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "ucpumap/steer.h"
#include "ucpumap/flowhash.h"

#define VLAN_MAX_DEPTH		2	/* as UCM_VLAN_MAX_DEPTH */
#define IPV6_EXT_MAX_CHAIN	6	/* as UCM_IPV6_EXT_MAX_CHAIN */

#define ETH_P_8021Q_	0x8100
#define ETH_P_8021AD_	0x88A8
#define ETH_P_ARP_	0x0806
#define ETH_P_IP_	0x0800
#define ETH_P_IPV6_	0x86DD

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ucm_steer_cfg);
} ucm_steer_cfg_map SEC(".maps");

/*
 * The interface's own MAC, bytes 0-5, and byte 6 non-zero once it is set
 * (ucm_dp writes it at attach, and again when it changes): a unicast
 * frame to another station's (a promiscuous NIC's, a bridge port's, a
 * macvlan child's) is the kernel's, as the kernel's own cpumap leaves it
 * by eth_type_trans(): dropped as otherhost, or given to its owner. Not
 * set (ucm_xdp alone): every frame is steered.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8[8]);
} ucm_steer_mac SEC(".maps");

/* Frames passed to the kernel, by reason (enum ucm_steer_pass), per CPU:
 * no shared counter to bounce. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UCM_STEER_PASS__MAX);
	__type(key, __u32);
	__type(value, __u64);
} ucm_steer_pass SEC(".maps");

/* Round-robin position, per receiving CPU: no shared counter to bounce. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ucm_steer_rr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, UCM_STEER_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} ucm_xsks SEC(".maps");

/* Baseline: worker index -> CPU + 1 (0: not configured), and the
 * kernel's cpumap keyed by CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UCM_STEER_MAX_WORKERS);
	__type(key, __u32);
	__type(value, __u32);
} ucm_worker_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} ucm_cpu_map SEC(".maps");

struct flow {
	__u32 saddr[4], daddr[4];
	__u16 sport, dport;	/* network order; 0 when not hashed */
	__u8 proto;
	__u8 v6;
	__u8 none;	/* no flow (ARP): worker 0, as the RX thread's pick */
	__u8 link;	/* link scope: link control once its flow is read */
};

/* Bounds-checked cursor: every header read goes through it. */
#define PULL(ptr, pos, end)						\
	({								\
		void *__p = (pos);					\
		(void *)(__p + sizeof(*(ptr))) > (end) ? NULL : __p;	\
	})

struct ethvlan { __be16 tci, proto; };
struct ip4 { __u8 vihl, tos; __be16 tot_len, id, frag; __u8 ttl, proto;
	     __be16 check; __be32 saddr, daddr; };
struct ip6 { __be32 vtcfl; __be16 plen; __u8 nexthdr, hlim;
	     __u32 saddr[4], daddr[4]; };
struct ext6 { __u8 nexthdr, hdrlen; __be16 fo; };
struct ports { __be16 sport, dport; };
struct icmp6h { __u8 type, code; };

/* Steer it (flow filled in), or leave it to the kernel for a reason. */
#define STEER	(-1)

/* Link control: the kernel's to keep the interface reachable, unless a
 * tap behind ucpumap is the host's interface on this link. */
#define LINK_CTRL(cfg) \
	((cfg)->flags & UCM_STEER_F_LINK_CTRL ? STEER : UCM_STEER_PASS_LINK_CTRL)

/* The interface's own: the kernel takes it on the interface it came in on
 * alone, not on a tun. Link scope: 169.254/16, the limited broadcast,
 * fe80::/10; and multicast, whose groups are joined on the interface
 * (224.0.0.0/4 with its link-local 224.0.0.0/24: OSPF, VRRP; ff00::/8:
 * DHCPv6's servers, OSPFv3). */
static __always_inline int link_scope4(__be32 daddr)
{
	__u32 d = bpf_ntohl(daddr);

	return d == 0xffffffff || (d & 0xf0000000) == 0xe0000000 ||
	       (d & 0xffff0000) == 0xa9fe0000;
}

static __always_inline int link_scope6(const __u32 *daddr)
{
	const __u8 *d = (const __u8 *)daddr;

	return (d[0] == 0xfe && (d[1] & 0xc0) == 0x80) || d[0] == 0xff;
}

/* DHCP's ports: a client may not have its address yet, so its socket is
 * on the interface; a server or relay on the host reads on the interface
 * too (a raw socket there, or the arrival's ifindex naming its subnet),
 * its clients' unicast renewals and relayed requests included. */
#define DHCP_SERVER_PORT	67
#define DHCP_CLIENT_PORT	68
#define DHCP6_CLIENT_PORT	546
#define DHCP6_SERVER_PORT	547
static __always_inline int dhcp_port(__be16 dport, int v6)
{
	if (v6)
		return dport == bpf_htons(DHCP6_CLIENT_PORT) ||
		       dport == bpf_htons(DHCP6_SERVER_PORT);
	return dport == bpf_htons(DHCP_SERVER_PORT) || dport == bpf_htons(DHCP_CLIENT_PORT);
}

static __always_inline int parse(void *data, void *end,
				 const struct ucm_steer_cfg *cfg,
				 struct flow *f)
{
	void *pos = data + ETH_HLEN;
	__be16 proto;
	int i;

	if (data + ETH_HLEN > end)
		return UCM_STEER_PASS_SHORT;
	proto = *(__be16 *)(data + 12);

#pragma unroll
	for (i = 0; i < VLAN_MAX_DEPTH; i++) {
		struct ethvlan *v;

		if (proto != bpf_htons(ETH_P_8021Q_) &&
		    proto != bpf_htons(ETH_P_8021AD_))
			break;
		v = PULL(v, pos, end);
		if (!v)
			return UCM_STEER_PASS_SHORT;
		proto = v->proto;
		pos += sizeof(*v);
	}

	if (proto == bpf_htons(ETH_P_IP_)) {
		struct ip4 *ip = PULL(ip, pos, end);
		__u32 ihl;

		if (!(cfg->flags & UCM_STEER_F_IPV4))
			return UCM_STEER_PASS_UNCLAIMED;
		if (!ip)
			return UCM_STEER_PASS_SHORT;
		ihl = (ip->vihl & 0xf) * 4;
		if (ihl < 20)
			return STEER;	/* malformed: the worker drops it */
		if (pos + ihl > end)
			return UCM_STEER_PASS_SHORT;	/* cut in its options */
		/* IGMP too: a group's query and v1/v2 reports go to the
		 * group. */
		f->link = link_scope4(ip->daddr) || ip->proto == IPPROTO_IGMP;
		f->saddr[0] = ip->saddr;
		f->daddr[0] = ip->daddr;
		f->proto = ip->proto;
		if (ip->frag & bpf_htons(0x3fff))
			return STEER;	/* fragment: addresses and protocol */
		pos += ihl;
	} else if (proto == bpf_htons(ETH_P_IPV6_)) {
		struct ip6 *ip = PULL(ip, pos, end);
		__u8 nh;

		if (!(cfg->flags & UCM_STEER_F_IPV6))
			return UCM_STEER_PASS_UNCLAIMED;
		if (!ip)
			return UCM_STEER_PASS_SHORT;
		f->link = link_scope6(ip->daddr);
		__builtin_memcpy(f->saddr, ip->saddr, 16);
		__builtin_memcpy(f->daddr, ip->daddr, 16);
		f->v6 = 1;
		nh = ip->nexthdr;
		pos += sizeof(*ip);

#pragma unroll
		for (i = 0; i < IPV6_EXT_MAX_CHAIN; i++) {
			struct ext6 *x;
			__u32 len;

			if (nh != IPPROTO_HOPOPTS && nh != IPPROTO_ROUTING &&
			    nh != IPPROTO_DSTOPTS && nh != IPPROTO_AH &&
			    nh != IPPROTO_FRAGMENT)
				break;
			x = PULL(x, pos, end);
			if (!x)
				return UCM_STEER_PASS_SHORT;	/* cut in its headers */
			if (nh == IPPROTO_FRAGMENT)
				len = 8;
			else if (nh == IPPROTO_AH)
				len = (x->hdrlen + 2) * 4;
			else
				len = (x->hdrlen + 1) * 8;
			if (pos + len > end)
				return UCM_STEER_PASS_SHORT;
			/* A real fragment: hash on its next header, no ports.
			 * An atomic one is just a header. */
			if (nh == IPPROTO_FRAGMENT && (x->fo & bpf_htons(0xfff9))) {
				f->proto = x->nexthdr;
				return STEER;
			}
			nh = x->nexthdr;
			pos += len;
		}
		f->proto = nh;
		if (nh == IPPROTO_ICMPV6) {
			struct icmp6h *ic = PULL(ic, pos, end);

			/* Neighbour discovery (133-137) and multicast
			 * listener messages (130-132, 143): link control the
			 * kernel must see to keep the interface reachable. */
			if (ic && ((ic->type >= 130 && ic->type <= 137) ||
				   ic->type == 143))
				return LINK_CTRL(cfg);
		}
	} else if (proto == bpf_htons(ETH_P_ARP_)) {
		/* No flow: one worker for all (worker 0 hashed, as the RX
		 * thread's pick of a packet without one). IPv4's
		 * link control, as neighbour discovery is IPv6's: with
		 * IPv4 left to the kernel, so is its ARP. */
		f->none = 1;
		if (!(cfg->flags & UCM_STEER_F_IPV4))
			return UCM_STEER_PASS_UNCLAIMED;
		return LINK_CTRL(cfg);
	} else {
		return UCM_STEER_PASS_UNCLAIMED;	/* every other protocol */
	}

	if (f->proto == IPPROTO_UDP || f->proto == IPPROTO_TCP) {
		struct ports *pt = PULL(pt, pos, end);

		if (pt) {
			f->sport = pt->sport;
			f->dport = pt->dport;
			if (f->proto == IPPROTO_UDP && dhcp_port(pt->dport, f->v6))
				f->link = 1;
		}
	}
	return STEER;
}

static __always_inline __u32 pick_worker(const struct ucm_steer_cfg *cfg,
					 const struct flow *f)
{
	__u32 n = cfg->nworkers, key = 0, *rr, h;

	if (n == 0 || n > UCM_STEER_MAX_WORKERS)
		return 0;
	switch (cfg->policy) {
	case UCM_STEER_RR:
		rr = bpf_map_lookup_elem(&ucm_steer_rr, &key);
		if (!rr)
			return 0;
		return (*rr)++ % n;
	case UCM_STEER_L4_HASH:
		if (f->none)	/* userspace's hash of no flow is 0 */
			return 0;
		if (f->v6)
			h = ucm_flow_hash_v6(f->saddr, f->daddr, f->sport,
					     f->dport, f->proto,
					     cfg->flags & UCM_STEER_F_SYMMETRIC);
		else
			h = ucm_flow_hash_v4(f->saddr[0], f->daddr[0], f->sport,
					     f->dport, f->proto,
					     cfg->flags & UCM_STEER_F_SYMMETRIC);
		return h % n;
	case UCM_STEER_L4_SPORT:
		return bpf_ntohs(f->sport) % n;
	case UCM_STEER_L4_DPORT:
		return bpf_ntohs(f->dport) % n;
	default:
		return cfg->fixed < n ? cfg->fixed : 0;
	}
}

/* Whether the frame is for this station: multicast and broadcast are,
 * a unicast one when its destination is the interface's MAC (or that is
 * not set). */
static __always_inline int ours(void *data, void *end)
{
	__u8 *d = data, *m;
	__u32 key = 0;

	if (data + ETH_HLEN > end || (d[0] & 1))
		return 1;	/* too short: parse() passes it */
	m = bpf_map_lookup_elem(&ucm_steer_mac, &key);
	if (!m || !m[6])
		return 1;
	return d[0] == m[0] && d[1] == m[1] && d[2] == m[2] && d[3] == m[3] &&
	       d[4] == m[4] && d[5] == m[5];
}

static __always_inline void count_pass(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&ucm_steer_pass, &why);

	if (n)
		(*n)++;
}

/* Return 1, the worker and the configuration when the packet is ours; 0
 * to pass it, counted by its reason. */
static __always_inline int steer(struct xdp_md *ctx, __u32 *worker, __u32 *flags)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ucm_steer_cfg *cfg;
	struct flow f = {};
	__u32 key = 0;
	int r;

	cfg = bpf_map_lookup_elem(&ucm_steer_cfg_map, &key);
	if (!cfg)
		return 0;
	r = ours(data, end) ? parse(data, end, cfg, &f) : UCM_STEER_PASS_OTHER_HOST;
	/* Its flow read whole, so that a tap's worker is the RX thread's pick
	 * of the same packet (ucm_steer__pick()). */
	if (r == STEER && f.link)
		r = LINK_CTRL(cfg);
	if (r != STEER) {
		count_pass(r);
		return 0;
	}
	*worker = pick_worker(cfg, &f);
	*flags = cfg->flags;
	return 1;
}

/* The metadata with its arrival stamp in front (UCM_STEER_F_STAMP). */
struct meta_stamped {
	struct ucm_xdp_stamp stamp;
	struct ucm_xdp_meta meta;
};

/* The worker (and with UCM_STEER_F_STAMP the arrival time) in front of
 * the packet. Without room for it (some generic-mode paths), the RX thread
 * applies the same policy itself: no magic, no trust. */
static __always_inline void put_meta(struct xdp_md *ctx, __u32 worker, __u32 flags)
{
	struct meta_stamped *ms;
	struct ucm_xdp_meta *meta;
	void *data;

	if (flags & UCM_STEER_F_STAMP) {
		if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*ms)))
			return;
		ms = (void *)(long)ctx->data_meta;
		data = (void *)(long)ctx->data;
		if ((void *)(ms + 1) <= data) {
			ms->stamp.ns = bpf_ktime_get_ns();
			ms->meta.magic = UCM_XDP_META_MAGIC_STAMP;
			ms->meta.worker = worker;
			ms->meta.rsvd = 0;
		}
		return;
	}
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*meta)))
		return;
	meta = (void *)(long)ctx->data_meta;
	data = (void *)(long)ctx->data;
	if ((void *)(meta + 1) <= data) {
		meta->magic = UCM_XDP_META_MAGIC;
		meta->worker = worker;
		meta->rsvd = 0;
	}
}

static __always_inline int steer_xsk(struct xdp_md *ctx, int with_meta)
{
	__u32 worker, flags;
	long act;

	if (!steer(ctx, &worker, &flags))
		return XDP_PASS;
	if (with_meta)
		put_meta(ctx, worker, flags);
	/* No socket on this queue: the kernel keeps the packet. */
	act = bpf_redirect_map(&ucm_xsks, ctx->rx_queue_index, XDP_PASS);
	if (act == XDP_PASS)
		count_pass(UCM_STEER_PASS_NO_SOCKET);
	return act;
}

SEC("xdp")
int ucm_xdp_steer(struct xdp_md *ctx)
{
	return steer_xsk(ctx, 1);
}

/* A kernel's verifier refuses a program that calls a helper its XDP lacks,
 * whether the call runs or not: a program of its own. */
SEC("xdp")
int ucm_xdp_nometa(struct xdp_md *ctx)
{
	return steer_xsk(ctx, 0);
}

SEC("xdp")
int ucm_xdp_cpumap(struct xdp_md *ctx)
{
	__u32 worker, flags, *cpu;
	long act;

	if (!steer(ctx, &worker, &flags))
		return XDP_PASS;
	/* Entries hold CPU + 1: 0 is a worker nobody configured. */
	cpu = bpf_map_lookup_elem(&ucm_worker_cpu, &worker);
	if (!cpu || !*cpu) {
		count_pass(UCM_STEER_PASS_NO_CPU);
		return XDP_PASS;
	}
	act = bpf_redirect_map(&ucm_cpu_map, *cpu - 1, XDP_PASS);
	if (act == XDP_PASS)
		count_pass(UCM_STEER_PASS_NO_CPU);
	return act;
}

char _license[] SEC("license") = "Dual BSD/GPL";
