/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Library logging. The library never writes to stdout or stderr itself:
 * every message goes through one print callback, as in libbpf and libxdp.
 * The default callback prints warnings to stderr.
 */
#ifndef UCPUMAP_LOG_H
#define UCPUMAP_LOG_H

#include <stdarg.h>

#include "ucpumap/api.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ucm_log_level {
	UCM_LOG_WARN,
	UCM_LOG_INFO,
	UCM_LOG_DEBUG,
};

typedef int (*ucm_print_fn_t)(enum ucm_log_level level, const char *fmt,
			      va_list args);

/**
 * ucm_set_print() - install a print callback
 * @fn: the new callback, or NULL to silence the library
 *
 * Return: the previous callback.
 */
UCM_API ucm_print_fn_t ucm_set_print(ucm_print_fn_t fn);

#ifdef __cplusplus
}
#endif

#endif /* UCPUMAP_LOG_H */
