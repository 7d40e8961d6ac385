// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cpumap's packets of several frames (engine/chain.h): a caller's
 * list checked before it is trusted, a chain's later frames taken, lent
 * and sent home by its worker, and ucm_frame_chain() for the sinks. Apart
 * from cpumap.c's hot path: only chains come here.
 */
#include <string.h>

#include "engine/cpumap_priv.h"

/*
 * A chain's list, read before anything trusts it: the bit comes from a
 * caller, not only from ucm_xsk_queue__rx(), and the worker and the drop
 * paths copy nfrag entries onto their stacks. Its form only: room for the
 * list in front of the packet, 1..UCM_CHAIN_MAX - 1 later frames, each in
 * the UMEM, the producer's pool's, its part inside it (the sinks write the
 * parts as they are), none twice and none the first, and the parts adding
 * up to the packet's @len (a tun would write fewer bytes than counted).
 */
bool ucm_cpumap_chain_list_ok(const struct ucm_cpumap *map, const struct ucm_pool *pool,
			       uint64_t addr, uint64_t base, uint32_t len)
{
	const struct ucm_chain *c = ucm_chain_of(map->umem->area, base);
	uint64_t f[UCM_CHAIN_MAX];
	uint32_t i, j, n = c->nfrag, sum = c->head_len;

	if (addr - base < UCM_CHAIN_HEAD_ROOM || !n || n >= UCM_CHAIN_MAX)
		return false;
	f[0] = base;
	for (i = 0; i < n; i++) {
		uint64_t a = ucm_desc_addr(c->frag[i]);

		if (a >= map->umem->size)
			return false;
		f[i + 1] = ucm_umem_base(map->umem, a);
		if (ucm_umem_owner(map->umem, f[i + 1]) != pool ||
		    a - f[i + 1] + ucm_desc_len(c->frag[i]) > map->umem->frame_size)
			return false;
		for (j = 0; j <= i; j++)
			if (f[j] == f[i + 1])
				return false;
		sum += ucm_desc_len(c->frag[i]);
	}
	return sum == len;
}

/* A packet of several frames taken from the ring: its later frames are
 * the worker's too. Return: its bytes in frame @base. */
__noinline uint32_t ucm_cpumap_chain_take(struct ucm_worker *w, uint64_t base)
{
	const struct ucm_cpumap *map = w->map;
	uint64_t frag[UCM_CHAIN_MAX - 1];
	uint32_t k = ucm_chain_frames(map->area, base, map->frame_size - 1, frag);

	ucm_frame_move_bulk(map->umem, frag, k, UCM_LOC_CHAIN, UCM_LOC_WORKER);
	return ucm_chain_of(map->area, base)->head_len;
}

/* A packet of several frames the verdict sends out: its later frames
 * are listed as the TX channel reads a chain (the list the RX thread
 * wrote), and go with it where it goes (UCM_LOC_CHAIN). False: the
 * channel's sockets take fewer frames a packet; the frames stay. */
__noinline bool ucm_cpumap_chain_lend(struct ucm_worker *w, uint64_t base,
				      const struct ucm_txq *t)
{
	const struct ucm_cpumap *map = w->map;
	uint64_t frag[UCM_CHAIN_MAX - 1];
	uint32_t k = ucm_chain_frames(map->area, base, map->frame_size - 1, frag);

	if (k + 1 > ucm_txq__max_frames(t))
		return false;
	ucm_frame_move_bulk(map->umem, frag, k, UCM_LOC_WORKER, UCM_LOC_CHAIN);
	return true;
}

/* A dropped packet's later frames home (before its first frame). */
__noinline void ucm_cpumap_chain_ret(struct ucm_worker *w, uint64_t base)
{
	const struct ucm_cpumap *map = w->map;
	uint64_t frag[UCM_CHAIN_MAX - 1];

	worker_ret_add(w, frag, ucm_chain_frames(map->area, base, map->frame_size - 1, frag));
}

uint32_t ucm_frame_chain(const struct ucm_frame_hdr *hdr, uint64_t *part)
{
	const struct ucm_chain *c;

	if (!hdr || !part || !(hdr->flags & UCM_FRAME_F_CHAIN))
		return 0;
	c = (const void *)((const char *)hdr + UCM_CHAIN_OFF);
	memcpy(part, c->frag, c->nfrag * sizeof(*part));
	return c->nfrag;
}
