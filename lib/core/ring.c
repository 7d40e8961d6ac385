// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Creation and release of ucm_ring; the hot operations are inline in ring.h. */
#include <stdlib.h>

#include "core/internal.h"
#include "ucpumap/ring.h"

/* Indices are u32 and the fill level is their difference. */
#define UCM_RING_MAX_SIZE	(1u << 31)

/*
 * Two versions, one function. 0.3.0's ring.h reads an MP ring's free
 * marks, which only this create writes: a binary built against it links
 * ucm_ring__create@@UCPUMAP_0.3.0, so a 0.2.0 library, whose create
 * leaves the slots unset, refuses to load it. A binary built against
 * 0.2.0's header keeps ucm_ring__create@UCPUMAP_0.2.0, the same function
 * (its inline code never reads the marks).
 */
UCM_API __attribute__((symver("ucm_ring__create@@UCPUMAP_0.3.0")))
struct ucm_ring *ucm_ring_create_v0_3_0(uint32_t size, uint32_t flags);
UCM_API __attribute__((symver("ucm_ring__create@UCPUMAP_0.2.0"), alias("ucm_ring_create_v0_3_0")))
struct ucm_ring *ucm_ring_create_v0_2_0(uint32_t size, uint32_t flags);

struct ucm_ring *ucm_ring_create_v0_3_0(uint32_t size, uint32_t flags)
{
	struct ucm_ring *r;
	size_t bytes;

	if (size < 2 || size > UCM_RING_MAX_SIZE || !is_pow2(size) ||
	    (flags & ~UCM_RING_MP))
		return ucm_err_ptr(-EINVAL);
#if SIZE_MAX <= UINT32_MAX
	/* A 32-bit build: the slots' bytes must fit its size_t. */
	if (size > (SIZE_MAX - sizeof(*r) - UCM_CACHELINE) / sizeof(r->slots[0]))
		return ucm_err_ptr(-EINVAL);
#endif

	bytes = sizeof(*r) + (size_t)size * sizeof(r->slots[0]);
	bytes = (bytes + UCM_CACHELINE - 1) & ~(size_t)(UCM_CACHELINE - 1);
	r = aligned_alloc(UCM_CACHELINE, bytes);
	if (!r)
		return ucm_err_ptr(ucm_oom("a ring"));
	memset(r, 0, sizeof(*r));
	if (flags & UCM_RING_MP)	/* every slot free (ring.h) */
		memset(r->slots, 0xff, (size_t)size * sizeof(r->slots[0]));
	r->size = size;
	r->mask = size - 1;
	r->flags = flags;
	return r;
}

void ucm_ring__destroy(struct ucm_ring *r)
{
	free(r);
}
