// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Set-up failures on demand, for tests/net/setupfail.c (LD_PRELOAD): the
 * program arms one kind of call to fail at its Nth use from now, then
 * asks whether it did. Resolved by the program with dlsym():
 *
 *   void ucm_setup_shim_arm(const char *kind, long nth);   "" disarms
 *   int ucm_setup_shim_fired(void);
 *
 * Kinds: "malloc" (malloc, calloc, realloc: NULL, ENOMEM), "uring"
 * (io_uring_queue_init_params: -ENOMEM), "xsk" (socket(AF_XDP): EMFILE).
 * Each call counts only while armed; one failure per arming.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <liburing.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define SHIM_API __attribute__((visibility("default")))

enum { K_NONE, K_MALLOC, K_URING, K_XSK };

static int armed;
static long left;		/* calls before the failing one */
static int fired;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_uring_init)(unsigned int, struct io_uring *, struct io_uring_params *);
static int (*real_socket)(int, int, int);
static void (*real_free)(void *);

/* dlsym() may calloc before real_calloc is known: from here, never freed. */
static char boot[4096];
static size_t boot_used;

static void resolve(void)
{
	static int busy;

	if (real_malloc || busy)
		return;
	busy = 1;
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_uring_init = dlsym(RTLD_NEXT, "io_uring_queue_init_params");
	real_socket = dlsym(RTLD_NEXT, "socket");
	real_free = dlsym(RTLD_NEXT, "free");
	busy = 0;
}

/* Is this call of @kind the one to fail? */
static int take(int kind)
{
	if (__atomic_load_n(&armed, __ATOMIC_RELAXED) != kind)
		return 0;
	if (__atomic_sub_fetch(&left, 1, __ATOMIC_RELAXED) != 0)
		return 0;
	__atomic_store_n(&armed, K_NONE, __ATOMIC_RELAXED);
	__atomic_store_n(&fired, 1, __ATOMIC_RELAXED);
	return 1;
}

SHIM_API void ucm_setup_shim_arm(const char *kind, long nth)
{
	int k = !strcmp(kind, "malloc") ? K_MALLOC : !strcmp(kind, "uring") ? K_URING :
		!strcmp(kind, "xsk") ? K_XSK : K_NONE;

	resolve();
	__atomic_store_n(&fired, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&left, nth, __ATOMIC_RELAXED);
	__atomic_store_n(&armed, k, __ATOMIC_RELAXED);
}

SHIM_API int ucm_setup_shim_fired(void)
{
	return __atomic_load_n(&fired, __ATOMIC_RELAXED);
}

SHIM_API void *malloc(size_t n)
{
	resolve();
	if (take(K_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return real_malloc(n);
}

SHIM_API void *calloc(size_t n, size_t sz)
{
	resolve();
	if (!real_calloc) {
		void *p = boot + boot_used;

		if (n && sz > (sizeof(boot) - boot_used) / n)
			return NULL;
		boot_used += (n * sz + 15) & ~(size_t)15;
		return p;	/* zeroed: static */
	}
	if (take(K_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return real_calloc(n, sz);
}

SHIM_API void *realloc(void *p, size_t n)
{
	resolve();
	if (take(K_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return real_realloc(p, n);
}

SHIM_API void free(void *p)
{
	if ((char *)p >= boot && (char *)p < boot + sizeof(boot))
		return;
	resolve();
	if (real_free)		/* else freed while resolving: kept */
		real_free(p);
}

SHIM_API int io_uring_queue_init_params(unsigned int entries, struct io_uring *ring,
					struct io_uring_params *p)
{
	resolve();
	if (take(K_URING))
		return -ENOMEM;
	return real_uring_init(entries, ring, p);
}

SHIM_API int socket(int domain, int type, int proto)
{
	resolve();
	if (domain == AF_XDP && take(K_XSK)) {
		errno = EMFILE;
		return -1;
	}
	return real_socket(domain, type, proto);
}
