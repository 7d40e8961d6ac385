// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdarg.h>
#include <string.h>

#include "core/internal.h"

static int default_print(enum ucm_log_level level, const char *fmt,
			 va_list args)
{
	if (level > UCM_LOG_WARN)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* Set once at start-up by the application; read on rare, slow paths only. */
static ucm_print_fn_t print_fn = default_print;

ucm_print_fn_t ucm_set_print(ucm_print_fn_t fn)
{
	return __atomic_exchange_n(&print_fn, fn, __ATOMIC_ACQ_REL);
}

void ucm_log(enum ucm_log_level level, const char *fmt, ...)
{
	ucm_print_fn_t fn = __atomic_load_n(&print_fn, __ATOMIC_ACQUIRE);
	va_list args;

	if (!fn)
		return;
	va_start(args, fmt);
	fn(level, fmt, args);
	va_end(args);
}

int ucm_opts_copy(void *dst, size_t dst_sz, size_t known, const void *src,
		  const char *name)
{
	size_t sz, i;

	memset(dst, 0, dst_sz);
	if (!src) {
		*(size_t *)dst = dst_sz;
		return 0;
	}
	sz = *(const size_t *)src;
	if (sz < sizeof(size_t)) {
		ucm_log(UCM_LOG_WARN, "ucpumap: %s: sz %zu is too small\n",
			name, sz);
		return -EINVAL;
	}
	for (i = known; i < sz; i++) {
		if (((const char *)src)[i]) {
			ucm_log(UCM_LOG_WARN,
				"ucpumap: %s has non-zero extra bytes\n", name);
			return -EINVAL;
		}
	}
	memcpy(dst, src, min(sz, known));
	*(size_t *)dst = dst_sz;
	return 0;
}
