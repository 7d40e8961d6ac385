/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A fuzz input into a batch of parsed packets, as fuzz-gso and
 * fuzz-tunwrite read it (the format: fuzz-gso.c's header), and the
 * oracles' look at one packet's fields and checksums.
 */
#ifndef UCM_FUZZ_BATCH_H
#define UCM_FUZZ_BATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "core/internal.h"
#include "ucpumap/gso.h"
#include "ucpumap/pkt.h"
#include "proto/proto.h"
#include "fuzz.h"

#define MAX_PKT		4096	/* a UMEM frame at most */
#define TCP_PSH		0x08
#define TCP_ALONE	0xa7	/* FIN SYN RST URG CWR */

struct batch {
	uint32_t n;
	uint32_t flags;
	uint8_t *data[UCM_GSO_MAX_BATCH];
	uint8_t *orig[UCM_GSO_MAX_BATCH];	/* the bytes as they came */
	uint32_t len[UCM_GSO_MAX_BATCH];
	struct ucm_pkt pkt[UCM_GSO_MAX_BATCH];
	const struct ucm_pkt *pp[UCM_GSO_MAX_BATCH];
	const uint8_t *dp[UCM_GSO_MAX_BATCH];
	int group[UCM_GSO_MAX_BATCH];		/* each packet's, in write order */
	struct ucm_gso_plan plan;
};

static inline uint16_t fold(uint64_t s)
{
	return (uint16_t)~fuzz_fold16(s);
}

/* ---- one packet's fields ------------------------------------------------- */

static inline bool is_v6(const struct ucm_pkt *p)
{
	return p->flags & UCM_PKT_F_IPV6;
}

static inline const uint8_t *ip_of(const struct batch *b, uint32_t i)
{
	return b->data[i] + b->pkt[i].l3_off;
}

static inline const uint8_t *l4_of(const struct batch *b, uint32_t i)
{
	return b->data[i] + b->pkt[i].l4_off;
}

/* L4 header and payload: the IP datagram past its headers. */
static inline uint32_t l4len(const struct ucm_pkt *p)
{
	return p->l3_len - (p->l4_off - p->l3_off);
}

static inline uint32_t payload(const struct ucm_pkt *p)
{
	return l4len(p) - p->l4_hlen;
}

static inline uint64_t pseudo(const uint8_t *ip, bool v6, uint8_t proto, uint32_t len)
{
	uint64_t s = v6 ? fuzz_sum16(0, ip + 8, 32) : fuzz_sum16(0, ip + 12, 8);

	return s + proto + len;
}

/* The IPv4 header's checksum (options included) and the L4 one. */
static inline bool ip_csum_ok(const struct batch *b, uint32_t i)
{
	const struct ucm_pkt *p = &b->pkt[i];

	return is_v6(p) || fold(fuzz_sum16(0, ip_of(b, i), p->l4_off - p->l3_off)) == 0;
}

/* Right over pseudo-header and segment, or partial: the field holds the
 * pseudo-header's sum alone, not inverted (its sender's offload). */
static inline bool l4_csum_ok(const struct batch *b, uint32_t i)
{
	const struct ucm_pkt *p = &b->pkt[i];
	uint64_t s = pseudo(ip_of(b, i), is_v6(p), p->l4_proto, l4len(p));
	uint16_t field = ld_be16(l4_of(b, i) + (p->l4_proto == IPPROTO_TCP ? 16 : 6));

	if (p->l4_proto == IPPROTO_UDP && !field)
		return false;	/* no checksum: nothing to carry over */
	return field == fuzz_fold16(s) || fold(fuzz_sum16(s, l4_of(b, i), l4len(p))) == 0;
}

/* ---- the input into a batch ----------------------------------------------- */

static inline void fix_csums(struct batch *b, uint32_t i)
{
	const struct ucm_pkt *p = &b->pkt[i];
	uint8_t *ip = b->data[i] + p->l3_off, *l4 = b->data[i] + p->l4_off;
	uint8_t *check;
	uint16_t c;

	if (!(p->flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6)))
		return;
	if (!is_v6(p)) {
		st_be16(ip + 10, 0);
		st_be16(ip + 10, fold(fuzz_sum16(0, ip, p->l4_off - p->l3_off)));
	}
	if (!(p->flags & UCM_PKT_F_PORTS) ||
	    ((p->flags & UCM_PKT_F_FRAG) && !(p->flags & UCM_PKT_F_FRAG_FIRST)))
		return;
	check = l4 + (p->l4_proto == IPPROTO_TCP ? 16 : 6);
	st_be16(check, 0);
	c = fold(fuzz_sum16(pseudo(ip, is_v6(p), p->l4_proto, l4len(p)), l4, l4len(p)));
	st_be16(check, p->l4_proto == IPPROTO_UDP && !c ? 0xffff : c);
}

/* Take @len bytes as the batch's next packet if the parser does. */
static inline void add(struct batch *b, const uint8_t *bytes, uint32_t len, bool fix)
{
	uint32_t i = b->n;
	uint8_t *d = malloc(len ? len : 1), *o = malloc(len ? len : 1);

	CHECK(d && o);
	memcpy(d, bytes, len);
	if (ucm_pkt__parse(&b->pkt[i], d, len) != UCM_DROP_NONE) {
		free(d);
		free(o);
		return;
	}
	b->data[i] = d;
	b->orig[i] = o;
	b->len[i] = len;
	if (fix)
		fix_csums(b, i);
	memcpy(o, d, len);
	b->pp[i] = &b->pkt[i];
	b->dp[i] = d;
	b->n++;
}

/* The last packet's next in its stream: IPv4 ID and TCP sequence moved on. */
static inline void add_next(struct batch *b, bool same_id, bool fix)
{
	const struct ucm_pkt *p = &b->pkt[b->n - 1];
	uint32_t len = b->len[b->n - 1];
	uint8_t buf[MAX_PKT];

	memcpy(buf, b->data[b->n - 1], len);
	if ((p->flags & UCM_PKT_F_IPV4) && !same_id)
		st_be16(buf + p->l3_off + 4, ld_be16(buf + p->l3_off + 4) + 1);
	if ((p->flags & UCM_PKT_F_L4) && p->l4_proto == IPPROTO_TCP) {
		uint8_t *seq = buf + p->l4_off + 4;
		uint32_t next = ld_be32(seq) + payload(p);

		st_be16(seq, next >> 16);
		st_be16(seq + 2, next & 0xffff);
	}
	add(b, buf, len, fix);
}

static inline void read_batch(struct batch *b, const uint8_t *in, size_t size)
{
	size_t off = 1;

	b->flags = in[0] & (UCM_GSO_F_NO_UDP | UCM_GSO_F_NO_TCP | UCM_GSO_F_L2 |
			    UCM_GSO_F_UDP_EQUAL);
	while (off + 3 <= size && b->n < UCM_GSO_MAX_BATCH) {
		uint8_t ctl = in[off];
		uint32_t n = ld_be16(in + off + 1);

		off += 3;
		if (ctl & 1) {
			for (uint32_t k = 0; k < n && b->n && b->n < UCM_GSO_MAX_BATCH; k++)
				add_next(b, ctl & 4, ctl & 2);
			continue;
		}
		n = n > MAX_PKT ? MAX_PKT : n;
		n = n > size - off ? (uint32_t)(size - off) : n;
		add(b, in + off, n, ctl & 2);
		off += n;
	}
}

#endif /* UCM_FUZZ_BATCH_H */
