/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A descriptor the kernel hands back (an XSK RX descriptor: address and
 * length) checked against the UMEM's carving: a pure function of a few
 * integers, apart so that tests/fuzz/fuzz-xskdesc.c can give it any, and
 * inline so that the RX path (xsk/queue.c, ucm_xsk_queue__rx()) pays no
 * call for it.
 */
#ifndef UCM_UMEM_DESC_H
#define UCM_UMEM_DESC_H

#include <stdint.h>

/* The largest UMEM ucm_umem__create() makes (1 TiB): far below bit 48,
 * where an unaligned-mode descriptor keeps its offset
 * (XSK_UNALIGNED_BUF_OFFSET_SHIFT) and ucm_desc_make() its length, so
 * an address with anything up there is in no UMEM of ours. */
#define UCM_UMEM_MAX_SIZE	(1ull << 40)

/*
 * What the check needs of a UMEM (struct ucm_umem's fields of the same
 * names): @frame_size a power of two, @pool_shift at least its log2, and
 * @size whole pools, npools << @pool_shift, at most UCM_UMEM_MAX_SIZE.
 */
struct ucm_umem_geom {
	uint64_t size;
	uint32_t frame_size;
	uint32_t pool_shift;	/* a frame's pool index is its address >> this */
};

enum ucm_umem_desc {
	UCM_UMEM_DESC_GOOD,	/* whole in one frame of the pool: hand it on */
	UCM_UMEM_DESC_BAD,	/* the pool's frame, a bad packet: take it back */
	UCM_UMEM_DESC_FOREIGN,	/* no frame of the pool: leave it alone */
};

/*
 * Never trust a descriptor: its frame must be one of pool @pool's before
 * the pool sees it again, and the packet (@addr, @len) must lie whole in
 * that frame before a worker reads it. Aligned chunks only (the only mode
 * we register): the offset is in @addr's low bits. For GOOD and BAD,
 * *@base is the frame's handle, the one frame to take; FOREIGN leaves it
 * untouched: that frame, if it is one, is not ours to take.
 */
static inline enum ucm_umem_desc ucm_umem_desc_check(const struct ucm_umem_geom *g,
						     uint32_t pool, uint64_t addr,
						     uint32_t len, uint64_t *base)
{
	uint64_t b = addr & ~(uint64_t)(g->frame_size - 1);

	/* The size test also keeps a @pool past the UMEM's pools from
	 * owning the bytes after it. */
	if (addr >= g->size || b >> g->pool_shift != pool)
		return UCM_UMEM_DESC_FOREIGN;
	*base = b;
	/* In 64 bits: a length near UINT32_MAX must not wrap the sum. */
	if (!len || addr - b + len > g->frame_size)
		return UCM_UMEM_DESC_BAD;
	return UCM_UMEM_DESC_GOOD;
}

#endif /* UCM_UMEM_DESC_H */
