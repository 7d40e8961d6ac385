/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private helpers shared by the library's modules. Nothing here is part of
 * the public API: the version script exports only ucm_* functions that are
 * marked UCM_API in include/ucpumap/.
 */
#ifndef UCM_INTERNAL_H
#define UCM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "core/cpu.h"
#include "ucpumap/log.h"

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#ifndef min
#define min(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a > _b ? _a : _b; })
#endif

/* Big-endian (network order) loads and stores of header fields. */
static inline uint16_t ld_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t ld_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void st_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* 64 bytes on every CPU we target (x86-64, arm64 Neoverse). */
#define UCM_CACHELINE	64
#define __cacheline_aligned	__attribute__((aligned(UCM_CACHELINE)))

#define __noinline	__attribute__((noinline))
#define __hot_inline	inline __attribute__((always_inline))
/* A static function of a header that some of its includers do not call. */
#define __maybe_unused	__attribute__((unused))

/*
 * Relaxed loads and stores of single-writer counters: the writer updates
 * them without a read-modify-write; readers on other threads see whole
 * values (no tearing) but no ordering. Mirrors READ_ONCE/WRITE_ONCE.
 */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/* Single-writer counter increment: a plain add, published relaxed. */
#define STAT_ADD(x, n)		WRITE_ONCE(x, READ_ONCE(x) + (n))

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* CLOCK_MONOTONIC in ns: the library's one clock (the vDSO's, no system
 * call; about 20 ns here), read per batch or bulk, never per packet. The
 * XDP program's bpf_ktime_get_ns() is the same clock. */
static inline uint64_t ucm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* The least power of two at or above @x (1 to 2^31). */
static inline uint32_t pow2_up(uint32_t x)
{
	return x <= 1 ? 1 : 1u << (32 - __builtin_clz(x - 1));
}

static inline unsigned int ilog2_u64(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

/* libbpf-style: set errno from a negative return and pass it through. */
static inline int ucm_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static inline void *ucm_err_ptr(int err)
{
	errno = -err;
	return NULL;
}

/*
 * Copy a caller's extensible options struct (libbpf OPTS_VALID): the caller
 * may be built against an older (smaller) or newer (larger) header. Fields
 * it does not know read as zero, i.e. default; bytes we do not know must
 * be zero. @src may be NULL (all defaults).
 */
int ucm_opts_copy(void *dst, size_t dst_sz, size_t known, const void *src,
		  const char *name);

#define offsetofend(TYPE, FIELD) \
	(offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
/* Bytes up to the end of the last field this library knows, padding after
 * it excluded: a caller's non-zero byte there is a field we do not know. */
#define UCM_OPTS_COPY(dst, src, TYPE)					\
	ucm_opts_copy(dst, sizeof(struct TYPE),				\
		      offsetofend(struct TYPE, TYPE##__last_field), src, #TYPE)

/*
 * Copy statistics out to a caller's @dst of @dst_sz bytes (libbpf's sz
 * discipline): a caller built against an older, smaller struct gets its
 * part, one built against a newer, larger one gets ours and zeroes past it.
 */
static inline void ucm_stats_out(void *dst, size_t dst_sz, const void *src,
				 size_t src_sz)
{
	memcpy(dst, src, dst_sz < src_sz ? dst_sz : src_sz);
	if (dst_sz > src_sz)
		memset((char *)dst + src_sz, 0, dst_sz - src_sz);
}

/* Logging goes through the user's print callback (see log.h). */
__attribute__((format(printf, 2, 3)))
void ucm_log(enum ucm_log_level level, const char *fmt, ...);

#define pr_warn(fmt, ...)	ucm_log(UCM_LOG_WARN, "ucpumap: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)	ucm_log(UCM_LOG_INFO, "ucpumap: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...)	ucm_log(UCM_LOG_DEBUG, "ucpumap: " fmt, ##__VA_ARGS__)

/* An allocation for @what failed: said in the log, as every failure is
 * (a caller may not know which of its parts ran out). -ENOMEM. */
static inline int ucm_oom(const char *what)
{
	pr_warn("out of memory: %s\n", what);
	return -ENOMEM;
}

#endif /* UCM_INTERNAL_H */
