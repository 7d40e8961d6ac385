/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the cpumap shares with the layers above it, not public: its
 * options' check, the copy of a caller's sink ops, and the worker loop's
 * test hooks (debug builds). */
#ifndef UCM_CPUMAP_INTERNAL_H
#define UCM_CPUMAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ucpumap/cpumap.h"

/* Copy a caller's sink ops by the opts rules (cpumap.h, "Size"): @src not
 * NULL; -EINVAL, with a message naming the fix, for sz 0 or unknown
 * non-zero bytes. */
int ucm_sink_ops_copy(struct ucm_sink_ops *dst, const struct ucm_sink_ops *src);

/* The options that stand alone (CPUs, ring size, flags, spin), their
 * defaults filled in: what ucm_cpumap__create() refuses before it makes
 * anything, for ucm_dp to refuse before it attaches anything. 0 or
 * -EINVAL, said. */
int ucm_cpumap_opts_check(struct ucm_cpumap_opts *o);

/* A sink whose wait() reads its wake fd: its worker cannot pre-wake
 * (UCM_CPUMAP_F_PREWAKE needs a sink without wait() or one that only
 * polls, UCM_SINK_F_POLL_WAKE). */
static inline bool ucm_sink_reads_wake(const struct ucm_sink_ops *s)
{
	return s && s->wait && !(s->flags & UCM_SINK_F_POLL_WAKE);
}

/* The RX thread's (the producer's thread): the time the last RX batch's
 * bulks were stamped with, once; 0 when none was (stamps off, or asked
 * already): its caller reads the clock itself then. */
uint64_t ucm_cpumap_producer_flush_ns(struct ucm_cpumap_producer *prod);

/* Any thread: worker @w's rings' consumer indexes summed (they move as it
 * takes), and in *@waiting whether entries wait in one; a snapshot, for
 * ucm_dp's stall watch. -ENOENT for an inline map (no worker threads),
 * -EINVAL out of range. */
int ucm_cpumap_worker_look(const struct ucm_cpumap *map, uint32_t w, uint32_t *taken,
			   bool *waiting);

enum ucm_cpumap_hook_point {
	/* The worker found its ring empty and has not announced sleep yet. */
	UCM_CPUMAP_HOOK_EMPTY_SEEN,
	/* It announced sleep and re-checked the ring: empty. Next: sleep. */
	UCM_CPUMAP_HOOK_BEFORE_SLEEP,
	/* Between that re-check and its look at the stop. */
	UCM_CPUMAP_HOOK_STOP_CHECK,
};

#ifdef UCM_DEBUG
/* Called on the worker thread at each point when set; set and cleared
 * with atomic stores. */
extern void (*ucm_cpumap_test_hook)(uint32_t worker,
				    enum ucm_cpumap_hook_point where);
/* Tests: worker @w's ring's flags (UCM_RING_*), or -1 for no such ring
 * (inline, or @w out of range). */
int ucm_cpumap_test_ring_flags(const struct ucm_cpumap *map, uint32_t w);
#endif

#endif /* UCM_CPUMAP_INTERNAL_H */
