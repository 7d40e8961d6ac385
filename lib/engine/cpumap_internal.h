/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test hooks of the cpumap worker loop: debug builds only, not public. */
#ifndef UCM_CPUMAP_INTERNAL_H
#define UCM_CPUMAP_INTERNAL_H

#include <stdint.h>

enum ucm_cpumap_hook_point {
	/* The worker found its ring empty and has not announced sleep yet. */
	UCM_CPUMAP_HOOK_EMPTY_SEEN,
	/* It announced sleep and re-checked the ring: empty. Next: sleep. */
	UCM_CPUMAP_HOOK_BEFORE_SLEEP,
};

#ifdef UCM_DEBUG
/* Called on the worker thread at each point when set; set and cleared
 * with atomic stores. */
extern void (*ucm_cpumap_test_hook)(uint32_t worker,
				    enum ucm_cpumap_hook_point where);
#endif

#endif /* UCM_CPUMAP_INTERNAL_H */
