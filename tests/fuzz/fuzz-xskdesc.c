// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The RX path's check of a descriptor (lib/core/umem_desc.h,
 * ucm_umem_desc_check(), which xsk/queue.c's ucm_xsk_queue__rx() applies
 * to every descriptor of the RX ring before a pool or a worker sees its
 * frame): one batch of random descriptors against a random UMEM geometry.
 *
 * Input: a 4-byte geometry, then up to one RX batch (UCM_XSK_RX_BATCH) of
 * 13-byte descriptors: a control byte, the address (8 bytes) and the
 * length (4), host order.
 *   geometry: byte 0 bit 0 frames of 2048 (else 4096), byte 1 log2 of the
 *             frames per pool (mod 29, less while the UMEM would pass
 *             UCM_UMEM_MAX_SIZE), byte 2 the pools less one, byte 3 the
 *             queue's pool (mod the pools)
 *   control:  bits 0-1 where the address points: as given, anywhere in
 *             the UMEM (mod its size), in the queue's pool (mod its span),
 *             or within 32 KiB either side of the UMEM's end; bit 2 below
 *             UINT64_MAX instead (by the address mod 64 Ki); bit 3 an
 *             unaligned-mode offset on top (bits 48-63); bit 4 the length
 *             is the room left in the address's frame plus the length's
 *             low byte as a signed delta (at least 0)
 * The seeds (tests/fuzz/corpus/fuzz-xskdesc/) are batches at the edges.
 *
 * The oracle is umem_desc.h's promise, worked out with ranges and
 * division rather than masks and shifts: an address in no frame of the
 * pool is FOREIGN and names no frame; one in a frame of the pool is GOOD
 * when its packet, at least a byte, lies whole in that frame, else BAD;
 * GOOD and BAD name that frame and no other, so each descriptor takes at
 * most one frame, the one its address lies in, and only the pool's (a
 * frame is taken twice only when the kernel named it twice; the frames'
 * tags catch that in debug builds, the stateless check cannot). Also the
 * decision ucm_xsk_queue__rx() made before the check was split out (the
 * UMEM's pools as an array, the owner a pointer compare), verdict for
 * verdict, and the same answer twice.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_xdp.h>

#include "core/umem_desc.h"
#include "ucpumap/xsk.h"
#include "fuzz.h"

#define GEOM_LEN	4
#define DESC_LEN	13	/* control, address, length */
#define MAX_POOLS	256	/* ucm_umem__create()'s limit */
#define NO_BASE		0xdeadbeefcafeull	/* FOREIGN leaves it */

enum {
	AT_RAW,
	AT_UMEM,
	AT_POOL,
	AT_END,
	AT_MASK = 3,
	AT_TOP = 1 << 2,
	AT_UNALIGNED = 1 << 3,
	LEN_ROOM = 1 << 4,
};

struct geom {
	struct ucm_umem_geom g;
	uint32_t npools;
	uint32_t pool;		/* the queue's */
	uint64_t span;		/* a pool's bytes */
};

static void geom_read(struct geom *G, const uint8_t *in)
{
	uint32_t fshift = in[0] & 1 ? 11 : 12, log = in[1] % 29;

	G->npools = in[2] + 1u;
	while (((uint64_t)G->npools << (fshift + log)) > UCM_UMEM_MAX_SIZE)
		log--;
	G->g.frame_size = 1u << fshift;
	G->g.pool_shift = fshift + log;
	G->span = 1ull << G->g.pool_shift;
	G->g.size = G->npools * G->span;
	G->pool = in[3] % G->npools;
}

/* The descriptor a record stands for, steered to the edges. */
static void desc_read(const struct geom *G, const uint8_t *rec, uint64_t *addr, uint32_t *len)
{
	uint8_t ctl = rec[0];
	uint64_t raw, a;
	uint32_t l;

	memcpy(&raw, rec + 1, sizeof(raw));
	memcpy(&l, rec + 9, sizeof(l));
	switch (ctl & AT_MASK) {
	case AT_RAW:
		a = raw;
		break;
	case AT_UMEM:
		a = raw % G->g.size;
		break;
	case AT_POOL:
		a = G->pool * G->span + raw % G->span;
		break;
	default:
		a = G->g.size - 32768 + raw % 65536;	/* may wrap below 0: fine */
		break;
	}
	if (ctl & AT_TOP)
		a = UINT64_MAX - raw % 65536;
	if (ctl & AT_UNALIGNED)
		a |= (raw >> XSK_UNALIGNED_BUF_OFFSET_SHIFT | 1) << XSK_UNALIGNED_BUF_OFFSET_SHIFT;
	if (ctl & LEN_ROOM) {
		int64_t room = (int64_t)(G->g.frame_size - a % G->g.frame_size) + (int8_t)l;

		l = room > 0 ? (uint32_t)room : 0;
	}
	*addr = a;
	*len = l;
}

/* What the check must say, from the pool's range and its frames' grid. */
static enum ucm_umem_desc oracle(const struct geom *G, uint64_t addr, uint32_t len,
				 uint64_t *frame)
{
	uint64_t lo = G->pool * G->span, fs = G->g.frame_size;

	if (addr < lo || addr - lo >= G->span || addr >= G->g.size)
		return UCM_UMEM_DESC_FOREIGN;
	*frame = lo + (addr - lo) / fs * fs;
	/* addr - *frame < 4096 and len < 2^32: no wrap in 64 bits. */
	if (len == 0 || addr - *frame + len > fs)
		return UCM_UMEM_DESC_BAD;
	return UCM_UMEM_DESC_GOOD;
}

/*
 * ucm_xsk_queue__rx()'s decision before the split, as it was written
 * there: the pools an array indexed by address >> pool_shift, looked at
 * only for an address inside the UMEM.
 */
static char pools[MAX_POOLS];

static enum ucm_umem_desc old_rx(const struct geom *G, uint64_t addr, uint32_t len)
{
	uint64_t base = addr & ~(uint64_t)(G->g.frame_size - 1);
	const char *mine = &pools[G->pool];

	if (addr >= G->g.size || &pools[base >> G->g.pool_shift] != mine ||
	    (addr - base) + len > G->g.frame_size || !len) {
		if (addr < G->g.size && &pools[base >> G->g.pool_shift] == mine)
			return UCM_UMEM_DESC_BAD;
		return UCM_UMEM_DESC_FOREIGN;
	}
	return UCM_UMEM_DESC_GOOD;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct geom G;
	uint32_t n, i;

	if (size < GEOM_LEN)
		return 0;
	geom_read(&G, data);
	n = (size - GEOM_LEN) / DESC_LEN;
	if (n > UCM_XSK_RX_BATCH)
		n = UCM_XSK_RX_BATCH;
	for (i = 0; i < n; i++) {
		uint64_t addr, base = NO_BASE, again = NO_BASE, frame = NO_BASE;
		enum ucm_umem_desc v, want;
		uint32_t len;

		desc_read(&G, data + GEOM_LEN + i * DESC_LEN, &addr, &len);
		v = ucm_umem_desc_check(&G.g, G.pool, addr, len, &base);
		want = oracle(&G, addr, len, &frame);
		CHECK(v == want && v == old_rx(&G, addr, len));
		CHECK(ucm_umem_desc_check(&G.g, G.pool, addr, len, &again) == v && again == base);
		if (v == UCM_UMEM_DESC_FOREIGN) {
			CHECK(base == NO_BASE);	/* nothing to take */
			continue;
		}
		/* One frame to take, the address's, of the pool, inside the
		 * UMEM: for BAD (take it back) as for GOOD. */
		CHECK(base == frame && base % G.g.frame_size == 0);
		CHECK(base <= addr && addr - base < G.g.frame_size);
		CHECK(base / G.span == G.pool && base < G.g.size);
		/* A good packet whole in its frame: [addr, addr + len) in it. */
		if (v == UCM_UMEM_DESC_GOOD)
			CHECK(len > 0 && addr + len <= base + G.g.frame_size);
	}
	return 0;
}
