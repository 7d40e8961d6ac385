// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Creation and release of ucm_ring; the hot operations are inline in ring.h. */
#include <stdlib.h>

#include "core/internal.h"
#include "ucpumap/ring.h"

/* Indices are u32 and the fill level is their difference. */
#define UCM_RING_MAX_SIZE	(1u << 31)

struct ucm_ring *ucm_ring__create(uint32_t size, uint32_t flags)
{
	struct ucm_ring *r;
	size_t bytes;

	if (size < 2 || size > UCM_RING_MAX_SIZE || !is_pow2(size) ||
	    (flags & ~UCM_RING_MP))
		return ucm_err_ptr(-EINVAL);

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
