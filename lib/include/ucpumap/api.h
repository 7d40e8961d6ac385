/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every public header needs: the export marker and the options macro.
 *
 * Conventions of the whole API: functions return 0 or a negative errno
 * (also stored in errno); functions that return a pointer return NULL and
 * set errno. Options structs are extensible the libbpf way: `sz` first,
 * declared with UCM_OPTS() so the struct and its padding start zeroed;
 * the library treats fields past the caller's `sz` as defaults and refuses
 * non-zero bytes it does not know.
 */
#ifndef UCPUMAP_API_H
#define UCPUMAP_API_H

#include <string.h>

#define UCM_API __attribute__((visibility("default")))

#define UCM_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

#include <stdint.h>

/*
 * A thread the library starts, on that thread, once its own set-up is done
 * and before its loop (@idx: its worker or queue index): for the
 * application to drop the thread's capabilities, name it, set its
 * scheduling. It must not block; it cannot fail the thread (record a
 * failure and act on it from the control thread).
 */
typedef void (*ucm_thread_fn)(void *ctx, uint32_t idx);

#endif /* UCPUMAP_API_H */
