/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The proto layer's private interface: what gso.c lends the io layer's
 * write path, beside the public gso.h. */
#ifndef UCM_PROTO_H
#define UCM_PROTO_H

#include <stdint.h>

#include "ucpumap/gso.h"
#include "ucpumap/pkt.h"

struct ucm_pkt;

/* ucm_pkt__parse() of a packet of @len bytes of which only the first @rd
 * are at @data (the first frame of a packet of several): the lengths are
 * checked against @len, the headers must lie in the @rd (else
 * UCM_DROP_L3_TRUNC or UCM_DROP_L4_TRUNC). */
enum ucm_drop_reason ucm_pkt_parse_head(struct ucm_pkt *pkt, const void *data,
					uint32_t rd, uint32_t len);

/* What ucm_gso__build() overwrites in a group's first packet and cannot
 * work out again (the L4 check field, TCP's flags), saved before it and
 * put back with the lengths by ucm_gso_restore(). */
struct ucm_gso_undo {
	uint16_t check;		/* as stored: network order */
	uint8_t tflags;
};
void ucm_gso_save(const struct ucm_pkt *pkt, const uint8_t *data,
		  struct ucm_gso_undo *u);
void ucm_gso_restore(const struct ucm_pkt *pkt, uint8_t *data,
		     const struct ucm_gso_undo *u);

/* A packet of several frames, for ucm_gso_plan(): @head bytes of it at
 * its data[] (the first frame's), the rest in @n later parts. */
#define UCM_GSO_FRAGS_MAX	17	/* UCM_FRAME_CHAIN_MAX */
struct ucm_gso_frags {
	uint32_t head;
	uint32_t n;
	const uint8_t *part[UCM_GSO_FRAGS_MAX];
	uint32_t len[UCM_GSO_FRAGS_MAX];
};

/* ucm_gso__plan() where some packets are of several frames: @frags[i]
 * says where packet i's bytes lie (NULL: all at data[i], as @frags NULL
 * says of every packet). A packet of several frames merges as any other
 * (its checksum summed over its parts); one marked UCM_PKT_F_PARTIAL
 * without its parts goes alone. */
int ucm_gso_plan(const struct ucm_pkt *const *pkts, const uint8_t *const *data,
		 const struct ucm_gso_frags *const *frags, uint32_t n, uint32_t flags,
		 struct ucm_gso_plan *plan);

#endif /* UCM_PROTO_H */
