// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_gso tests: the merge rules of UDP coalescing on hand-built frames,
 * with their boundaries (128 segments, 64 KiB, a short last datagram, an
 * IPv4 ID gap, a bad checksum in a run), and the super-packet headers;
 * partial checksums (a sender's offload): what ucm_l4_csum_partial() takes
 * for one, and how they merge.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>

#include "proto/proto.h"
#include "ucpumap/csum.h"
#include "ucpumap/gso.h"
#include "ucpumap/pkt.h"
#include "utest.h"

#define MAXN	200
#define FLEN	1600

static uint8_t frame[MAXN][FLEN];
static struct ucm_pkt pkt[MAXN];
static const struct ucm_pkt *pp[MAXN];
static const uint8_t *dp[MAXN];
static struct ucm_gso_plan plan;

struct spec {
	bool v6;
	uint16_t sport;		/* the flow */
	uint16_t payload;
	uint16_t id;		/* IPv4 */
	bool df, bad_csum, zero_csum, ip_opts, frag, v6_ext;
	bool srcroute;		/* the option an LSRR, the header a routing one */
	bool evil;		/* IPv4's reserved flag set */
	uint8_t ttl;		/* 0: 64 */
	uint8_t tos;		/* IPv4 TOS, IPv6 traffic class */
	uint8_t dmac;		/* the destination MAC's last byte (0: 2) */
	uint16_t vid;		/* an 802.1Q tag with this VLAN ID */
	bool bad_iphdr;		/* IPv4 header checksum spoiled */
	bool partial;		/* L4 field: the pseudo-header sum, not inverted */
	uint16_t ulen_short;	/* UDP: its length field this much short of the datagram */
	/* TCP instead of UDP: sequence number, flags (0: ACK), ACK number,
	 * window (0: 500), and a timestamp option when tsval is set */
	bool tcp, empty;	/* empty: no payload at all */
	uint32_t seq, ack, tsval;
	uint8_t tflags;
	uint16_t win;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* Ethernet, IP, UDP to port 9000 with a payload of @s->payload bytes. */
static int build(int i, const struct spec *s)
{
	uint8_t *f = frame[i], *ip = f + 14 + (s->vid ? 4 : 0), *u;
	uint32_t l3h = s->v6 ? 40 + (s->v6_ext ? 8 : 0) : 20 + (s->ip_opts ? 4 : 0);
	uint32_t hl4 = s->tcp ? 20 + (s->tsval ? 12 : 0) : 8, ulen = hl4 + s->payload, sum;
	uint8_t ph[4] = { 0, s->tcp ? 6 : 17, ulen >> 8, ulen & 0xff };

	memset(f, 0, FLEN);
	memset(f, 2, 12);
	if (s->dmac)
		f[5] = s->dmac;
	if (s->vid) {
		put16(f + 12, 0x8100);
		put16(f + 14, s->vid);
	}
	put16(ip - 2, s->v6 ? 0x86dd : 0x0800);
	if (s->v6) {
		ip[0] = 0x60 | s->tos >> 4;
		ip[1] = (uint8_t)(s->tos << 4);
		put16(ip + 4, ulen + (s->v6_ext ? 8 : 0));
		/* destination options (or routing, 1 segment left), then L4 */
		ip[6] = s->v6_ext ? (s->srcroute ? 43 : 60) : s->tcp ? 6 : 17;
		ip[43] = s->v6_ext && s->srcroute;
		ip[7] = s->ttl ? s->ttl : 64;
		ip[8] = 0x20, ip[23] = 1;
		ip[24] = 0x20, ip[39] = 2;
		if (s->v6_ext)
			ip[40] = s->tcp ? 6 : 17;	/* its next header; hdrlen 0: 8 bytes */
	} else {
		ip[0] = s->ip_opts ? 0x46 : 0x45;
		put16(ip + 2, l3h + ulen);
		put16(ip + 4, s->id);
		ip[6] = s->df ? 0x40 : 0;
		if (s->frag)
			ip[6] |= 0x20;	/* MF */
		if (s->evil)
			ip[6] |= 0x80;
		ip[8] = s->ttl ? s->ttl : 64;
		ip[9] = s->tcp ? 6 : 17;
		ip[12] = 10, ip[15] = 1;
		ip[16] = 10, ip[19] = 2;
		ip[1] = s->tos;
		if (s->ip_opts && s->srcroute)	/* LSRR: type, length, pointer */
			ip[20] = 131, ip[21] = 3, ip[22] = 4;
		put16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, l3h)) ^ (s->bad_iphdr ? 0x0100 : 0));
	}
	u = ip + l3h;
	put16(u, s->sport);
	put16(u + 2, 9000);
	if (s->tcp) {
		put16(u + 4, s->seq >> 16);
		put16(u + 6, s->seq & 0xffff);
		put16(u + 8, s->ack >> 16);
		put16(u + 10, s->ack & 0xffff);
		u[12] = (hl4 / 4) << 4;
		u[13] = s->tflags ? s->tflags : 0x10;
		put16(u + 14, s->win ? s->win : 500);
		if (s->tsval) {
			u[20] = 1, u[21] = 1, u[22] = 8, u[23] = 10;	/* NOP NOP TS */
			put16(u + 24, s->tsval >> 16);
			put16(u + 26, s->tsval & 0xffff);
		}
	} else {
		put16(u + 4, ulen - s->ulen_short);
	}
	for (uint32_t k = 0; k < s->payload; k++)
		u[hl4 + k] = (uint8_t)(i + k);
	if (!s->zero_csum) {
		uint8_t *check = u + (s->tcp ? 16 : 6);

		ulen -= s->ulen_short;
		ph[2] = ulen >> 8, ph[3] = ulen & 0xff;
		sum = ucm_csum_add(0, s->v6 ? ip + 8 : ip + 12, s->v6 ? 32 : 8);
		sum = ucm_csum_add(sum, ph, 4);
		/* a sender's offload: the pseudo-header sum alone, the
		 * kernel's ~csum_tcpudp_magic(..., 0) */
		sum = s->partial ? ucm_csum_folded(sum) : ucm_csum_fold(ucm_csum_add(sum, u, ulen));
		ulen += s->ulen_short;
		if (!s->tcp && !sum)
			sum = 0xffff;
		put16(check, sum ^ (s->bad_csum ? 0x0101 : 0));
	}
	UT_ASSERT(ucm_pkt__parse(&pkt[i], f, (ip - f) + l3h + ulen) == UCM_DROP_NONE, "frame %d", i);
	pp[i] = &pkt[i];
	dp[i] = f;
	return 0;
}

/* The groups as "0,1,2|3|4,5": members in chain order, groups in order. */
static void groups_str(char *out, size_t sz)
{
	size_t o = 0;

	out[0] = 0;
	for (uint32_t g = 0; g < plan.ngroups; g++) {
		int i = plan.head[g];
		uint32_t k = 0;

		if (g)
			o += snprintf(out + o, sz - o, "|");
		for (; i >= 0 && o < sz; i = plan.next[i], k++)
			o += snprintf(out + o, sz - o, "%s%d", k ? "," : "", i);
		if (k != plan.nseg[g])
			o += snprintf(out + o, sz - o, "(nseg %u!)", plan.nseg[g]);
	}
}

static int run_flags(const struct spec *s, int n, uint32_t flags, const char *want)
{
	char got[4096];

	for (int i = 0; i < n; i++)
		if (build(i, &s[i]))
			return 1;
	UT_ASSERT(!ucm_gso__plan(pp, dp, n, flags, &plan), "plan");
	groups_str(got, sizeof(got));
	UT_ASSERT(!strcmp(got, want), "groups %s, want %s", got, want);
	return 0;
}

static int run(const struct spec *s, int n, const char *want)
{
	return run_flags(s, n, 0, want);
}

/* A datagram of flow A or B, 18 payload bytes (64-byte frames) unless said. */
static struct spec with_defaults(struct spec s)
{
	if (s.empty)
		s.payload = 0;
	else if (!s.payload)
		s.payload = 18;
	return s;
}
#define A(...) with_defaults((struct spec){ .sport = 1000, __VA_ARGS__ })
#define B(...) with_defaults((struct spec){ .sport = 2000, __VA_ARGS__ })
/* TCP segments of flow T: 100-byte payloads, DF, IDs counting up; the
 * arguments override these defaults. */
#pragma GCC diagnostic ignored "-Woverride-init"
#define T(sq, ...) with_defaults((struct spec){ .sport = 3000, .tcp = true, .payload = 100, \
					.df = true, .id = (uint16_t)(sq / 100), .seq = (sq), \
					.ack = 777, __VA_ARGS__ })

static int test_one_flow(void)
{
	struct spec s[] = { A(.id = 1), A(.id = 2), A(.id = 3), A(.id = 4) };

	return run(s, 4, "0,1,2,3");
}

static int test_two_flows_interleaved(void)
{
	struct spec s[] = { A(.id = 1), B(.id = 7), A(.id = 2), B(.id = 8), A(.id = 3) };

	return run(s, 5, "0,2,4|1,3");
}

static int test_short_last_closes(void)
{
	struct spec s[] = { A(.id = 1), A(.id = 2), A(.id = 3, .payload = 5), A(.id = 4),
			    A(.id = 5, .payload = 30) };

	/* the short one ends its group; a longer one cannot join a group */
	return run(s, 5, "0,1,2|3|4");
}

/* UCM_GSO_F_UDP_EQUAL: a shorter datagram goes alone, not at the end of
 * its flow's group (without the flag: "0,1,2|3,4"); TCP keeps its short
 * last segment. */
static int test_udp_equal(void)
{
	struct spec s[] = { A(.id = 1), A(.id = 2), A(.id = 3, .payload = 5), A(.id = 4),
			    A(.id = 5) };
	struct spec t[] = { T(1000), T(1100), T(1200, .payload = 50) };

	if (run_flags(s, 5, UCM_GSO_F_UDP_EQUAL, "0,1|2|3,4"))
		return 1;
	return run_flags(t, 3, UCM_GSO_F_UDP_EQUAL, "0,1,2");
}

static int test_bad_checksum_alone(void)
{
	struct spec s[] = { A(.id = 1), A(.id = 2), A(.id = 3, .bad_csum = true), A(.id = 4),
			    A(.id = 5) };

	return run(s, 5, "0,1|2|3,4");
}

/* Order holds around a packet that goes alone, even where the datagrams
 * after it could join the group before it (DF, equal IDs). */
static int test_order_around_a_loner(void)
{
	struct spec bad[] = { A(.df = true), A(.df = true), A(.df = true, .bad_csum = true),
			      A(.df = true), A(.df = true) };
	struct spec frag[] = { A(.df = true), A(.df = true), A(.df = true, .frag = true),
			       A(.df = true) };

	if (run(bad, 5, "0,1|2|3,4"))
		return 1;
	return run(frag, 4, "0,1|2|3");
}

/* A loner of another flow (other ports) leaves the group open. */
static int test_other_flows_loner(void)
{
	struct spec s[] = { A(.id = 1), A(.id = 2), B(.id = 5, .bad_csum = true), A(.id = 3),
			    B(.id = 6, .frag = true), A(.id = 4) };

	return run(s, 6, "0,1,3,5|2|4");
}

/* A change of TOS/traffic class or DF ends the flow's group: nothing of
 * the flow is written out of order. */
static int test_ip_field_change(void)
{
	struct spec tos[] = { A(.id = 1), A(.id = 2, .tos = 4), A(.id = 3), A(.id = 4) };
	struct spec tc6[] = { A(.v6 = true), A(.v6 = true, .tos = 2), A(.v6 = true),
			      A(.v6 = true) };
	struct spec df[] = { A(.id = 1, .df = true), A(.id = 2), A(.id = 3) };

	if (run(tos, 4, "0|1|2,3") || run(tc6, 4, "0|1|2,3"))
		return 1;
	return run(df, 3, "0|1,2");
}

/* A bad IPv4 header checksum: never merged, as the head or later. */
static int test_bad_ip_header_alone(void)
{
	struct spec mid[] = { A(.id = 1), A(.id = 2), A(.id = 3, .bad_iphdr = true), A(.id = 4),
			      A(.id = 5) };
	struct spec head[] = { A(.id = 1, .bad_iphdr = true), A(.id = 2), A(.id = 3) };

	return run(mid, 5, "0,1|2|3,4") || run(head, 3, "0|1,2");
}

/* IPv4's reserved flag: alone, as any flag but DF is to the kernel's GRO;
 * the flow's order holds around it. */
static int test_reserved_flag_alone(void)
{
	struct spec s[] = { A(.id = 1), A(.id = 2), A(.id = 3, .evil = true), A(.id = 4),
			    A(.id = 5) };

	return run(s, 5, "0,1|2|3,4");
}

/* 100 flows twice over: every flow's pair found, however their hashes
 * share buckets. */
static int test_many_flows(void)
{
	static struct spec s[200];
	char want[2048];
	size_t o = 0;

	for (int i = 0; i < 200; i++)
		s[i] = with_defaults((struct spec){ .sport = (uint16_t)(5000 + i % 100),
						    .id = (uint16_t)(1 + i / 100) });
	for (int i = 0; i < 100; i++)
		o += snprintf(want + o, sizeof(want) - o, "%s%d,%d", i ? "|" : "", i, i + 100);
	return run(s, 200, want);
}

static int test_zero_checksum_alone(void)
{
	struct spec s[] = { A(.id = 1), A(.id = 2, .zero_csum = true), A(.id = 3), A(.id = 4) };

	return run(s, 4, "0|1|2,3");
}

static int test_not_mergeable(void)
{
	struct spec s[] = { A(.id = 1, .ip_opts = true), A(.id = 2, .ip_opts = true),
			    A(.id = 3, .frag = true), A(.id = 4, .frag = true),
			    A(.v6 = true, .v6_ext = true), A(.v6 = true, .v6_ext = true) };

	return run(s, 6, "0|1|2|3|4|5");
}

static int test_ipv4_ids(void)
{
	struct spec gap[] = { A(.id = 1), A(.id = 2), A(.id = 4), A(.id = 5) };
	struct spec df[] = { A(.id = 0, .df = true), A(.id = 0, .df = true),
			     A(.id = 0, .df = true) };
	struct spec nodf[] = { A(.id = 9), A(.id = 9) };

	/* the second packet decides: fixed, or counting up */
	struct spec fixed_then_inc[] = { A(.id = 7, .df = true), A(.id = 7, .df = true),
					 A(.id = 8, .df = true) };
	struct spec inc_then_fixed[] = { A(.id = 7, .df = true), A(.id = 8, .df = true),
					 A(.id = 8, .df = true) };

	if (run(gap, 4, "0,1|2,3") || run(df, 3, "0,1,2"))
		return 1;
	if (run(fixed_then_inc, 3, "0,1|2") || run(inc_then_fixed, 3, "0,1|2"))
		return 1;
	return run(nodf, 2, "0|1");
}

static int test_ttl_and_family(void)
{
	struct spec s[] = { A(.id = 1), A(.id = 2, .ttl = 9), A(.v6 = true), A(.v6 = true),
			    A(.v6 = true, .ttl = 3) };

	return run(s, 5, "0|1|2,3|4");
}

/* At most 64 UDP datagrams (older kernels' UDP_MAX_SEGMENTS), 128 TCP
 * segments. */
static int test_max_segments(void)
{
	static struct spec s[130];
	char want[1024];
	size_t o = 0;

	for (int i = 0; i < 130; i++)
		s[i] = A(.id = (uint16_t)(i + 1));
	for (int i = 0; i < 130; i++)
		o += snprintf(want + o, sizeof(want) - o, "%s%d", !i ? "" : i % 64 ? "," : "|", i);
	if (run(s, 130, want))
		return 1;
	o = 0;
	for (int i = 0; i < 130; i++)
		s[i] = T(1000 + 100 * i);
	for (int i = 0; i < 130; i++)
		o += snprintf(want + o, sizeof(want) - o, "%s%d", !i ? "" : i == 128 ? "|" : ",", i);
	return run(s, 130, want);
}

static int test_64k(void)
{
	static struct spec s[50];
	char want[1024];
	size_t o = 0;

	/* 1428-byte IP packets: 1428 + 45 x 1400 = 64428 fits, one more not */
	for (int i = 0; i < 50; i++)
		s[i] = A(.id = (uint16_t)(i + 1), .payload = 1400);
	for (int i = 0; i < 46; i++)
		o += snprintf(want + o, sizeof(want) - o, "%s%d", i ? "," : "", i);
	snprintf(want + o, sizeof(want) - o, "|46,47,48,49");
	return run(s, 50, want);
}

/* The super-packet's headers: lengths, the IPv4 header checksum, the
 * pseudo-header sum in the UDP check field, the vnet header. */
static int test_build(void)
{
	for (int v6 = 0; v6 < 2; v6++) {
		struct spec s[] = { A(.v6 = v6, .id = 1), A(.v6 = v6, .id = 2),
				    A(.v6 = v6, .id = 3, .payload = 7) };
		struct virtio_net_hdr vh;
		uint8_t *ip = frame[0] + 14, *u = ip + (v6 ? 40 : 20);
		uint8_t ph[4] = { 0, 0, 0, 17 };
		uint32_t sum, total = 18 + 18 + 7, l3h = v6 ? 40 : 20;

		if (run(s, 3, "0,1,2"))
			return 1;
		ucm_gso__build(&pkt[0], frame[0], 3, total, false, false, &vh);
		UT_ASSERT(vh.flags == VIRTIO_NET_HDR_F_NEEDS_CSUM &&
			  vh.gso_type == VIRTIO_NET_HDR_GSO_UDP_L4 && vh.gso_size == 18 &&
			  vh.hdr_len == l3h + 8 && vh.csum_start == l3h && vh.csum_offset == 6,
			  "v6 %d: vnet header %u %u %u %u %u %u", v6, vh.flags, vh.gso_type,
			  vh.gso_size, vh.hdr_len, vh.csum_start, vh.csum_offset);
		UT_ASSERT((uint32_t)((u[4] << 8) | u[5]) == 8 + total, "UDP length");
		if (v6) {
			UT_ASSERT((uint32_t)((ip[4] << 8) | ip[5]) == 8 + total, "payload length");
		} else {
			UT_ASSERT((uint32_t)((ip[2] << 8) | ip[3]) == 20 + 8 + total, "total length");
			UT_ASSERT(ucm_csum_fold(ucm_csum_add(0, ip, 20)) == 0, "IP header checksum");
		}
		sum = ucm_csum_add(0, v6 ? ip + 8 : ip + 12, v6 ? 32 : 8);
		sum = ucm_csum_add(sum, u + 4, 2);
		sum = ucm_csum_add(sum, ph, 4);
		UT_ASSERT(((u[6] << 8) | u[7]) == (uint16_t)~ucm_csum_fold(sum),
			  "UDP check field: not the pseudo-header sum");
	}
	{
		struct virtio_net_hdr vh;
		struct spec one[] = { A(.id = 1) };

		if (run(one, 1, "0"))
			return 1;
		ucm_gso__build(&pkt[0], frame[0], 1, 18, false, false, &vh);
		UT_ASSERT(!vh.flags && !vh.gso_type, "a group of 1 got offloads");
	}
	return 0;
}

/* ---- TCP --------------------------------------------------------------------- */

static int test_tcp_stream(void)
{
	struct spec s[] = { T(1000), T(1100), T(1200), T(1300) };

	return run(s, 4, "0,1,2,3");
}

/* A gap, a retransmission, a different ACK, window or timestamp: a new
 * group (the next may start one). */
static int test_tcp_breaks(void)
{
	struct spec gap[] = { T(1000), T(1100), T(1300), T(1400) };
	struct spec back[] = { T(1000), T(1100), T(1100), T(1200) };
	struct spec ack[] = { T(1000), T(1100), T(1200, .ack = 900), T(1300, .ack = 900) };
	struct spec win[] = { T(1000), T(1100, .win = 200), T(1200, .win = 200) };
	struct spec ts[] = { T(1000, .tsval = 5), T(1100, .tsval = 5), T(1200, .tsval = 6),
			     T(1300, .tsval = 6) };

	if (run(gap, 4, "0,1|2,3") || run(back, 4, "0,1|2,3") || run(ack, 4, "0,1|2,3"))
		return 1;
	return run(win, 3, "0|1,2") || run(ts, 4, "0,1|2,3");
}

/* PSH ends a group (and does not start one); a shorter segment ends it. */
static int test_tcp_push_and_short(void)
{
	struct spec psh[] = { T(1000), T(1100), T(1200, .tflags = 0x18), T(1300), T(1400) };
	struct spec first[] = { T(1000, .tflags = 0x18), T(1100), T(1200) };
	struct spec shortl[] = { T(1000), T(1100, .payload = 40), T(1140) };

	if (run(psh, 5, "0,1,2|3,4") || run(first, 3, "0|1,2"))
		return 1;
	UT_ASSERT(plan.push[0] && !plan.push[1], "push flags %d %d", plan.push[0], plan.push[1]);
	return run(shortl, 3, "0,1|2");
}

/* SYN, FIN, RST, URG, CWR, a pure ACK and a bad checksum go alone and
 * close their flow's group; another flow's do not. */
static int test_tcp_alone(void)
{
	struct spec fin[] = { T(1000), T(1100), T(1200, .tflags = 0x11), T(1300), T(1400) };
	struct spec ack0[] = { T(1000), T(1100), T(1200, .empty = true), T(1200), T(1300) };
	struct spec bad[] = { T(1000), T(1100), T(1200, .bad_csum = true), T(1300), T(1400) };
	struct spec other[] = { T(1000), T(1100), B(.id = 1, .bad_csum = true), T(1200) };
	const uint8_t flags[] = { 0x12, 0x14, 0x30, 0x90 };	/* SYN RST URG CWR */

	if (run(fin, 5, "0,1|2|3,4") || run(ack0, 5, "0,1|2|3,4") || run(bad, 5, "0,1|2|3,4"))
		return 1;
	if (run(other, 4, "0,1,3|2"))
		return 1;
	for (int f = 0; f < 4; f++) {
		struct spec s[] = { T(1000), T(1100), T(1200, .tflags = flags[f]), T(1300) };

		if (run(s, 4, "0,1|2|3"))
			return 1;
	}
	return 0;
}

/* The super-segment's headers: lengths, PSH from the last, the
 * pseudo-header sum in the TCP check field, the vnet header. */
static int test_tcp_build(void)
{
	for (int v6 = 0; v6 < 2; v6++) {
		struct spec s[] = { T(1000, .v6 = v6, .tsval = 9), T(1100, .v6 = v6, .tsval = 9),
				    T(1200, .v6 = v6, .tsval = 9, .tflags = 0x18) };
		struct virtio_net_hdr vh;
		uint32_t l3h = v6 ? 40 : 20, l4len = 32 + 300, sum;
		uint8_t *ip = frame[0] + 14, *t = ip + l3h;
		uint8_t ph[4] = { 0, 6, l4len >> 8, l4len & 0xff };

		if (run(s, 3, "0,1,2"))
			return 1;
		ucm_gso__build(&pkt[0], frame[0], 3, 300, plan.push[0], false, &vh);
		UT_ASSERT(vh.flags == VIRTIO_NET_HDR_F_NEEDS_CSUM &&
			  vh.gso_type == (v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4) &&
			  vh.gso_size == 100 && vh.hdr_len == l3h + 32 && vh.csum_start == l3h &&
			  vh.csum_offset == 16,
			  "v6 %d: vnet header %u %u %u %u %u %u", v6, vh.flags, vh.gso_type,
			  vh.gso_size, vh.hdr_len, vh.csum_start, vh.csum_offset);
		UT_ASSERT(t[13] == 0x18, "flags 0x%x: the last segment's PSH", t[13]);
		if (v6) {
			UT_ASSERT((uint32_t)((ip[4] << 8) | ip[5]) == l4len, "payload length");
		} else {
			UT_ASSERT((uint32_t)((ip[2] << 8) | ip[3]) == 20 + l4len, "total length");
			UT_ASSERT(ucm_csum_fold(ucm_csum_add(0, ip, 20)) == 0, "IP header checksum");
		}
		sum = ucm_csum_add(0, v6 ? ip + 8 : ip + 12, v6 ? 32 : 8);
		sum = ucm_csum_add(sum, ph, 4);
		UT_ASSERT(((t[16] << 8) | t[17]) == (uint16_t)~ucm_csum_fold(sum),
			  "TCP check field: not the pseudo-header sum");
	}
	return 0;
}

/* Whole frames (a tap): one Ethernet header per super-packet, and a
 * VLAN-tagged frame goes alone, closing its flow's group; without the
 * flag (a tun, which strips both) they merge. */
static int test_l2(void)
{
	struct spec mac[] = { A(.id = 1), A(.id = 2), A(.id = 3, .dmac = 9), A(.id = 4, .dmac = 9) };
	struct spec vlan[] = { A(.id = 1), A(.id = 2), A(.id = 3, .vid = 5), A(.id = 4) };

	if (run_flags(mac, 4, UCM_GSO_F_L2, "0,1|2,3") || run_flags(vlan, 4, UCM_GSO_F_L2, "0,1|2|3"))
		return 1;
	if (run_flags(mac, 4, 0, "0,1,2,3") || run_flags(vlan, 4, 0, "0,1,2,3"))
		return 1;
	/* the other protocol's flag leaves this one alone */
	if (run_flags(mac, 4, UCM_GSO_F_NO_UDP, "0|1|2|3"))
		return 1;
	return run_flags(mac, 4, UCM_GSO_F_NO_TCP, "0,1,2,3");
}

/* A tap's super-packet: the vnet header's offsets count from the
 * Ethernet header. */
static int test_build_l2(void)
{
	struct spec s[] = { T(1000), T(1100) };
	struct virtio_net_hdr vh;

	if (run_flags(s, 2, UCM_GSO_F_L2, "0,1"))
		return 1;
	ucm_gso__build(&pkt[0], frame[0], 2, 200, false, true, &vh);
	UT_ASSERT(vh.csum_start == 14 + 20 && vh.hdr_len == 14 + 20 + 20 && vh.csum_offset == 16 &&
		  vh.gso_size == 100, "vnet header %u %u %u %u", vh.csum_start, vh.hdr_len,
		  vh.csum_offset, vh.gso_size);
	return 0;
}

/*
 * What the write path saves before the build and puts back when the kernel
 * refuses a super-packet reads nothing past the first packet: a UDP
 * datagram of 5 payload bytes ends 13 bytes into its L4 header. Found by
 * tests/fuzz/fuzz-gso.c: the save read TCP's flags byte (the 14th) of UDP
 * datagrams too. The packet ends against a page nothing may touch, so
 * such a read faults in any build, not only under ASan.
 */
static int test_save_restore_short_udp(void)
{
	struct spec s[] = { A(.id = 1, .payload = 5), A(.id = 2, .payload = 5) };
	const uint32_t len = 14 + 20 + 8 + 5;
	long pg = sysconf(_SC_PAGESIZE);
	struct ucm_gso_undo undo;
	struct virtio_net_hdr vh;
	struct ucm_pkt p;
	uint8_t *map, *data;
	bool same;

	if (run(s, 2, "0,1"))
		return 1;
	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	UT_ASSERT(map != MAP_FAILED, "mmap: %s", strerror(errno));
	if (mprotect(map + pg, pg, PROT_NONE)) {
		munmap(map, 2 * pg);
		UT_ASSERT(0, "mprotect: %s", strerror(errno));
	}
	data = map + pg - len;
	memcpy(data, frame[0], len);
	UT_ASSERT(ucm_pkt__parse(&p, data, len) == UCM_DROP_NONE, "parse");
	ucm_gso_save(&p, data, &undo);
	ucm_gso__build(&p, data, 2, 10, false, false, &vh);
	ucm_gso_restore(&p, data, &undo);
	same = !memcmp(data, frame[0], len);
	munmap(map, 2 * pg);
	UT_ASSERT(same, "the restore gave other bytes back");
	return 0;
}

/* Packets of several frames (ucm_gso_plan_frags() with their parts): packet i
 * laid out again as its first @head bytes in its frame, the rest in parts
 * of @step bytes elsewhere, the frame's bytes after @head spoiled so that
 * the plan cannot read them there. */
#define NPARTS	8
static uint8_t part_buf[MAXN][NPARTS][FLEN];
static struct ucm_gso_frags frg[MAXN];
static const struct ucm_gso_frags *fp[MAXN];

static int split(int i, uint32_t head, uint32_t step)
{
	uint32_t len = pkt[i].l3_off + pkt[i].l3_len, off = head, k = 0, l;

	fp[i] = NULL;
	if (head >= len)
		return 0;	/* one frame holds it: a packet of one */
	while (off < len) {
		UT_ASSERT(k < NPARTS, "packet %d: more than %d parts", i, NPARTS);
		l = len - off < step ? len - off : step;
		memcpy(part_buf[i][k], frame[i] + off, l);
		frg[i].part[k] = part_buf[i][k];
		frg[i].len[k++] = l;
		off += l;
	}
	frg[i].n = k;
	frg[i].head = head;
	memset(frame[i] + head, 0xee, FLEN - head);
	l = ucm_pkt_parse_head(&pkt[i], frame[i], head, len);
	UT_ASSERT(l == UCM_DROP_NONE && (pkt[i].flags & UCM_PKT_F_PARTIAL),
		  "packet %d cut at %u of %u: head parse %u, flags 0x%x", i, head, len, l,
		  pkt[i].flags);
	fp[i] = &frg[i];
	return 0;
}

/* The plan of @s's packets split (@head, @step) is the plan of the same
 * packets whole (@want); packet @spoil (or -1) with one payload byte changed after
 * its checksum, in its last part. Without their parts, each goes alone. */
static int chains_plan(const struct spec *s, int n, uint32_t head, uint32_t step, int spoil,
		       const char *want)
{
	char whole[4096], got[4096];
	int i;

	for (i = 0; i < n; i++)
		if (build(i, &s[i]))
			return 1;
	if (spoil >= 0)
		frame[spoil][pkt[spoil].l3_off + pkt[spoil].l3_len - 3] ^= 0x40;
	UT_ASSERT(!ucm_gso__plan(pp, dp, n, 0, &plan), "plan");
	groups_str(whole, sizeof(whole));
	UT_ASSERT(!strcmp(whole, want), "whole: groups %s, want %s", whole, want);
	for (i = 0; i < n; i++)
		if (build(i, &s[i]))
			return 1;
	if (spoil >= 0)
		frame[spoil][pkt[spoil].l3_off + pkt[spoil].l3_len - 3] ^= 0x40;
	for (i = 0; i < n; i++)
		if (split(i, head, step))
			return 1;
	UT_ASSERT(!ucm_gso_plan_frags(pp, dp, fp, n, 0, &plan), "plan");
	groups_str(got, sizeof(got));
	UT_ASSERT(!strcmp(got, whole), "split at %u by %u: groups %s, whole %s", head, step,
		  got, whole);
	for (i = 0; i < n && fp[i]; i++)
		;
	UT_ASSERT(i < n || (!ucm_gso_plan_frags(pp, dp, NULL, n, 0, &plan) && plan.ngroups == (uint32_t)n),
		  "without their parts: %u groups of %d packets", plan.ngroups, n);
	return 0;
}

static int test_chains(void)
{
	struct spec tcp[] = { T(1000, .payload = 1400, .id = 1), T(2400, .payload = 1400, .id = 2),
			      T(3800, .payload = 1400, .id = 3), T(5200, .payload = 1400, .id = 4) };
	struct spec udp[] = { A(.payload = 1400, .id = 1), A(.payload = 1400, .id = 2),
			      A(.payload = 900, .id = 3) };
	struct spec v6[] = { T(1000, .payload = 1300, .v6 = true),
			     T(2300, .payload = 1300, .v6 = true) };
	/* Even and odd first parts (IPv4's L4 at 34: 67 bytes of it in
	 * 101) and parts; the headers alone first (IPv6's end at 74). */
	static const uint32_t cut[][2] = { { 101, 500 }, { 100, 333 }, { 80, 1 << 12 },
					   { 1001, 77 } };

	for (uint32_t c = 0; c < sizeof(cut) / sizeof(cut[0]); c++) {
		uint32_t step = cut[c][1];

		if (chains_plan(tcp, 4, cut[c][0], step, -1, "0,1,2,3") ||
		    chains_plan(tcp, 4, cut[c][0], step, 2, "0,1|2|3") ||
		    chains_plan(udp, 3, cut[c][0], step, -1, "0,1,2") ||
		    chains_plan(udp, 3, cut[c][0], step, 1, "0|1|2") ||
		    chains_plan(v6, 2, cut[c][0], step, -1, "0,1"))
			return 1;
	}
	if (build(0, &tcp[0]) || build(1, &tcp[1]) || split(0, 101, 500) || split(1, 101, 500))
		return 1;
	UT_ASSERT(!ucm_gso_plan_frags(pp, dp, fp, 2, 0, &plan) && plan.ngroups == 1 && plan.nseg[0] == 2,
		  "two split segments: %u groups", plan.ngroups);
	/* Parts that do not cover the packet: alone. */
	frg[1].len[frg[1].n - 1]--;
	UT_ASSERT(!ucm_gso_plan_frags(pp, dp, fp, 2, 0, &plan) && plan.ngroups == 2,
		  "a part short: %u groups", plan.ngroups);
	return 0;
}

static int test_too_many(void)
{
	UT_ASSERT(ucm_gso__plan(pp, dp, UCM_GSO_MAX_BATCH + 1, 0, &plan) == -EINVAL, "accepted");
	return 0;
}


/* ---- partial checksums ----------------------------------------------------- */

/* Did ucm_l4_csum_partial() take frame @i for partial as @want says? */
static int partial_is(int i, bool want, const char *what)
{
	bool got = ucm_l4_csum_partial(&pkt[i], frame[i]);

	UT_ASSERT(got == want, "%s: partial %d, want %d", what, got, want);
	return 0;
}

/* IPv4 and IPv6, UDP and TCP: the pseudo-header sum is partial; a full
 * good checksum, a spoiled partial one, UDP's zero, a fragment are not. */
static int test_partial_detect(void)
{
	for (int v6 = 0; v6 < 2; v6++) {
		struct spec s[] = { A(.v6 = v6, .partial = true), T(1000, .v6 = v6, .partial = true),
				    A(.v6 = v6), T(1000, .v6 = v6),
				    A(.v6 = v6, .partial = true, .bad_csum = true),
				    T(1000, .v6 = v6, .partial = true, .bad_csum = true),
				    A(.v6 = v6, .partial = true, .v6_ext = v6, .ip_opts = !v6),
				    T(1000, .v6 = v6, .partial = true, .tsval = 7, .empty = true) };
		const bool want[] = { true, true, false, false, false, false, true, true };

		for (int i = 0; i < 8; i++) {
			char what[32];

			snprintf(what, sizeof(what), "v6 %d, case %d", v6, i);
			if (build(i, &s[i]) || partial_is(i, want[i], what))
				return 1;
		}
	}
	{
		/* A source route: its sender summed the final destination,
		 * not this header's, so the field equal to this header's
		 * pseudo-header sum says nothing (a plain option's does). */
		struct spec s[] = { A(.partial = true, .ip_opts = true, .srcroute = true),
				    T(1000, .v6 = true, .partial = true, .v6_ext = true,
				      .srcroute = true) };

		for (int i = 0; i < 2; i++)
			if (build(i, &s[i]) ||
			    partial_is(i, false, i ? "an IPv6 routing header" : "an IPv4 LSRR"))
				return 1;
		UT_ASSERT((pkt[0].flags & UCM_PKT_F_SRCROUTE) && (pkt[1].flags & UCM_PKT_F_SRCROUTE),
			  "not parsed as source routes: %#x %#x", pkt[0].flags, pkt[1].flags);
	}
	{
		/* the pseudo-header sum, then an MF fragment: not partial */
		struct spec s[] = { A(.zero_csum = true), A(.partial = true, .frag = true) };

		if (build(0, &s[0]) || partial_is(0, false, "UDP over IPv4, no checksum"))
			return 1;
		if (build(1, &s[1]) || partial_is(1, false, "a first fragment"))
			return 1;
	}
	return 0;
}

/*
 * Lengths: a UDP length short of the datagram (trailing bytes the sender
 * did not sum) is never partial, though its field holds the pseudo-header
 * sum over that length: the kernel's completion sums to the datagram's
 * end, trailing bytes and all, and a full checksum that looked partial
 * would come out wrong (no sender's offload makes such a datagram). A
 * packet whose parse stopped short (its L4 header past what was read, or
 * past the datagram) has no ports and is never partial, whatever is there.
 */
static int test_partial_lengths(void)
{
	struct spec s[] = { A(.partial = true, .ulen_short = 4),
			    A(.v6 = true, .partial = true, .ulen_short = 10) };
	struct spec whole = A(.partial = true);
	uint32_t len = 14 + 20 + 8 + 18;
	struct ucm_pkt p;

	if (build(0, &s[0]) || partial_is(0, false, "UDP length short of the datagram"))
		return 1;
	if (build(1, &s[1]) || partial_is(1, false, "IPv6, UDP length short"))
		return 1;
	if (build(0, &whole))
		return 1;
	/* the head of a packet of several frames: its headers are enough */
	UT_ASSERT(ucm_pkt_parse_head(&p, frame[0], 14 + 20 + 8, len) == UCM_DROP_NONE, "head");
	UT_ASSERT(ucm_l4_csum_partial(&p, frame[0]), "a head with the whole headers: not partial");
	for (uint32_t rd = 0; rd < 14 + 20 + 8; rd++) {
		ucm_pkt_parse_head(&p, frame[0], rd, len);
		UT_ASSERT(!ucm_l4_csum_partial(&p, frame[0]), "headers cut at %u: partial", rd);
	}
	for (uint32_t l = 0; l < len; l++) {
		ucm_pkt__parse(&p, frame[0], l);
		UT_ASSERT(!ucm_l4_csum_partial(&p, frame[0]), "cut at %u bytes: partial", l);
	}
	return 0;
}

/*
 * A full, correct checksum F that happens to equal the pseudo-header sum P
 * (one packet in 2^16) is taken for partial, and that is harmless: the
 * kernel completes it (the sum from csum_start, the field included,
 * inverted: skb_checksum_help()) to F again, and a checksum that is
 * right stays right. Found by trying the payload's first word.
 */
static int test_partial_equal_full(void)
{
	for (int tcp = 0; tcp < 2; tcp++) {
		struct spec s = tcp ? T(1000, .payload = 18) : A(.id = 1);
		uint8_t *ip = frame[0] + 14, *l4 = ip + 20, *check = l4 + (tcp ? 16 : 6);
		uint32_t hl4 = tcp ? 20 : 8, l4len = hl4 + 18, w, psum;
		uint16_t f = 0;

		for (w = 0; w < 0x10000; w++) {
			s.sport = (uint16_t)w;
			if (build(0, &s))
				return 1;
			psum = ucm_pseudo_sum(ip, false, tcp ? 6 : 17, l4len);
			f = (uint16_t)(check[0] << 8 | check[1]);
			if (f == ucm_csum_folded(psum))
				break;
		}
		UT_ASSERT(w < 0x10000, "tcp %d: no port gives a full checksum equal to P", tcp);
		UT_ASSERT(ucm_csum_fold(ucm_csum_add(psum, l4, l4len)) == 0, "not a right checksum");
		if (partial_is(0, true, "full checksum equal to the pseudo-header sum"))
			return 1;
		/* the kernel's completion: over the segment, the field as it is */
		UT_ASSERT(ucm_csum_fold(ucm_csum_add(0, l4, l4len)) == f,
			  "tcp %d: completed to 0x%04x, was 0x%04x", tcp,
			  ucm_csum_fold(ucm_csum_add(0, l4, l4len)), f);
	}
	return 0;
}

/* Partial packets merge, with each other and with full good ones (the
 * super-packet's checksum is the kernel's anyway); a spoiled one still
 * goes alone. */
static int test_partial_merge(void)
{
	struct spec udp[] = { A(.id = 1, .partial = true), A(.id = 2, .partial = true), A(.id = 3),
			      A(.id = 4, .partial = true, .bad_csum = true),
			      A(.id = 5, .partial = true), A(.id = 6, .partial = true) };
	struct spec tcp[] = { T(1000, .partial = true), T(1100, .partial = true), T(1200),
			      T(1300, .partial = true), T(1400, .partial = true, .bad_csum = true),
			      T(1500, .partial = true) };
	struct spec v6[] = { T(1000, .v6 = true, .partial = true), T(1100, .v6 = true, .partial = true),
			     A(.v6 = true, .partial = true), A(.v6 = true, .partial = true) };
	struct spec iphdr[] = { A(.id = 1, .partial = true),
				A(.id = 2, .partial = true, .bad_iphdr = true),
				A(.id = 3, .partial = true) };

	if (run(udp, 6, "0,1,2|3|4,5") || run(tcp, 6, "0,1,2,3|4|5"))
		return 1;
	return run(v6, 4, "0,1|2,3") || run(iphdr, 3, "0|1|2");
}

static const struct ut_case cases[] = {
	UT_CASE(test_one_flow),
	UT_CASE(test_two_flows_interleaved),
	UT_CASE(test_short_last_closes),
	UT_CASE(test_udp_equal),
	UT_CASE(test_bad_checksum_alone),
	UT_CASE(test_order_around_a_loner),
	UT_CASE(test_other_flows_loner),
	UT_CASE(test_ip_field_change),
	UT_CASE(test_many_flows),
	UT_CASE(test_bad_ip_header_alone),
	UT_CASE(test_reserved_flag_alone),
	UT_CASE(test_zero_checksum_alone),
	UT_CASE(test_not_mergeable),
	UT_CASE(test_ipv4_ids),
	UT_CASE(test_ttl_and_family),
	UT_CASE(test_max_segments),
	UT_CASE(test_64k),
	UT_CASE(test_build),
	UT_CASE(test_tcp_stream),
	UT_CASE(test_tcp_breaks),
	UT_CASE(test_tcp_push_and_short),
	UT_CASE(test_tcp_alone),
	UT_CASE(test_tcp_build),
	UT_CASE(test_l2),
	UT_CASE(test_build_l2),
	UT_CASE(test_save_restore_short_udp),
	UT_CASE(test_chains),
	UT_CASE(test_too_many),
	UT_CASE(test_partial_detect),
	UT_CASE(test_partial_lengths),
	UT_CASE(test_partial_equal_full),
	UT_CASE(test_partial_merge),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
