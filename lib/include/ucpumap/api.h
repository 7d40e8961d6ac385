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

/*
 * Latency histograms (ucm_cpumap_worker_stats.wait_hist and sink_hist,
 * ucm_xsk_stats.rx_hist): counts in log2 buckets of microseconds, one
 * count per bulk of packets (never per packet). Bucket 0 counts times
 * under 1 us; bucket i, 1 <= i < UCM_LAT_BUCKETS - 1, times in
 * [2^(i-1), 2^i) us; the last, 2^17 us (131 ms) and more. The times are
 * CLOCK_MONOTONIC's.
 */
#define UCM_LAT_BUCKETS 19

static inline uint32_t ucm_lat_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	uint32_t b = us ? 64 - (uint32_t)__builtin_clzll(us) : 0;

	return b < UCM_LAT_BUCKETS - 1 ? b : UCM_LAT_BUCKETS - 1;
}

/* The upper bound of bucket @b, in ns (exclusive; 0 for the last: none). */
static inline uint64_t ucm_lat_bucket_le_ns(uint32_t b)
{
	return b < UCM_LAT_BUCKETS - 1 ? 1000ull << b : 0;
}

/* The bucket of histogram @h where its cumulative count first reaches the
 * fraction @f of the total (0.5: the median's); UCM_LAT_BUCKETS when @h is
 * empty. */
static inline uint32_t ucm_lat_quantile(const uint64_t *h, double f)
{
	uint64_t total = 0, sum = 0;
	uint32_t b;

	for (b = 0; b < UCM_LAT_BUCKETS; b++)
		total += h[b];
	if (!total)
		return UCM_LAT_BUCKETS;
	for (b = 0; b < UCM_LAT_BUCKETS - 1; b++)
		if ((sum += h[b]) >= f * total)
			break;
	return b;
}

#endif /* UCPUMAP_API_H */
