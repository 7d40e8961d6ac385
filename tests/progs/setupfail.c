// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Set-up failures: ucm_dp__create() with one call
 * failing, each in turn:
 *
 *   setupfail IFNAME KIND[+] MAXN
 *
 *   malloc   malloc, calloc, realloc, aligned_alloc, posix_memalign,
 *            strdup: NULL, ENOMEM; pthread_attr_setaffinity_np (glibc's
 *            allocates): ENOMEM
 *   uring    io_uring_queue_init_params: -ENOMEM
 *   socket   socket (libxdp's AF_XDP ones, libbpf's netlink ones, ours),
 *            eventfd, epoll_create1: EMFILE (the open files' limit)
 *   bpf      bpf_map_create, bpf_prog_load, bpf_btf_load, bpf_link_create:
 *            -ENOMEM
 *   thread   pthread_create: EAGAIN
 *
 * KIND fails the nth call alone; KIND+ the nth and every later one (the
 * resource is gone: a fallback fails too, and libbpf's second try of a
 * map without BTF).
 *
 * The linker takes the calls: this program is linked with the library
 * and with libxdp, libbpf, libelf, zlib and liburing from their archives,
 * and -Wl,--wrap=SYM (Makefile) sends each of their calls of SYM to
 * __wrap_SYM here, whose __real_SYM is the one it would have reached (the
 * sanitizer's malloc in a sanitizer build). glibc's calls inside itself
 * (fopen's malloc) are out of reach: of those, only
 * pthread_attr_setaffinity_np's is on the create's path, and taken whole.
 *
 * For n = 1, 2, ... up to MAXN, or until a create no longer reaches its
 * nth call of KIND: the nth call fails (and the later ones, with +), and
 * the create either fails with an errno and a warning in the log, or
 * copes (a fallback) and then runs, stops and destroys cleanly. After
 * each, nothing is left: open files, BPF programs, maps and links (the
 * kernel frees a map a little after its last fd: looked at again for up
 * to a second), devices and threads are what they were before it, and in
 * an ASan build LeakSanitizer finds no memory leaked. The plain build
 * reports the bytes glibc's malloc has handed out (mallinfo2), no more:
 * glibc keeps state of threads that came and went, so a difference is
 * not a leak by itself.
 *
 * Prints one PASS/FAIL line and a '#' line with what the attempts did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdbool.h>

#include <bpf/bpf.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>

#include "ucpumap/dp.h"
#include "ucpumap/log.h"
#include "census.h"

/* An ASan build: gcc says so, clang has it as a feature. */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD
#endif
#endif

#ifdef ASAN_BUILD
#include <sanitizer/lsan_interface.h>
#define LSAN		1
/* Leaks now, reported on stderr; the check at the exit is not affected. */
#define leaked()	(__lsan_do_recoverable_leak_check() != 0)
#else
#define LSAN		0
#define leaked()	false
#endif

enum { K_NONE, K_MALLOC, K_URING, K_SOCKET, K_BPF, K_THREAD };

static const char *const kinds[] = {
	[K_MALLOC] = "malloc", [K_URING] = "uring", [K_SOCKET] = "socket",
	[K_BPF] = "bpf", [K_THREAD] = "thread",
};

/* Set by the main thread; calls may come from any (a worker sets up its
 * io_uring in its own thread). */
static int armed;
static bool sticky;		/* every call from the nth on fails */
static long left;		/* calls before the failing one */
static int fired;

static void arm(int kind, long nth)
{
	__atomic_store_n(&fired, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&left, nth, __ATOMIC_RELAXED);
	__atomic_store_n(&armed, kind, __ATOMIC_RELEASE);
}

/* Is this call of @kind to fail? */
static bool take(int kind)
{
	long l;

	if (__atomic_load_n(&armed, __ATOMIC_ACQUIRE) != kind)
		return false;
	/* Below 0: another thread's call, after the one that failed. */
	l = __atomic_sub_fetch(&left, 1, __ATOMIC_RELAXED);
	if (l > 0 || (l < 0 && !sticky))
		return false;
	if (!sticky)
		__atomic_store_n(&armed, K_NONE, __ATOMIC_RELAXED);
	__atomic_store_n(&fired, 1, __ATOMIC_RELAXED);
	return true;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
char *__real_strdup(const char *s);
int __real_io_uring_queue_init_params(unsigned int entries, struct io_uring *ring,
				      struct io_uring_params *p);
int __real_socket(int domain, int type, int proto);
int __real_eventfd(unsigned int initval, int flags);
int __real_epoll_create1(int flags);
int __real_bpf_map_create(enum bpf_map_type type, const char *name, __u32 key_size,
			  __u32 value_size, __u32 max_entries,
			  const struct bpf_map_create_opts *opts);
int __real_bpf_prog_load(enum bpf_prog_type type, const char *name, const char *license,
			 const struct bpf_insn *insns, size_t insn_cnt,
			 struct bpf_prog_load_opts *opts);
int __real_bpf_btf_load(const void *data, size_t size, struct bpf_btf_load_opts *opts);
int __real_bpf_link_create(int prog_fd, int target_fd, enum bpf_attach_type type,
			   const struct bpf_link_create_opts *opts);
int __real_pthread_attr_setaffinity_np(pthread_attr_t *attr, size_t size,
				       const cpu_set_t *set);
int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);

/* An allocation fails as glibc's does: NULL, ENOMEM. */
#define FAIL_NULL_IF(kind)			\
	do {					\
		if (take(kind)) {		\
			errno = ENOMEM;		\
			return NULL;		\
		}				\
	} while (0)

/* libbpf's calls say an error as -errno, and set errno too. */
#define FAIL_NEG_IF(kind)			\
	do {					\
		if (take(kind)) {		\
			errno = ENOMEM;		\
			return -ENOMEM;		\
		}				\
	} while (0)

void *__wrap_malloc(size_t n)
{
	FAIL_NULL_IF(K_MALLOC);
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
	FAIL_NULL_IF(K_MALLOC);
	return __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
	FAIL_NULL_IF(K_MALLOC);
	return __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	FAIL_NULL_IF(K_MALLOC);
	return __real_aligned_alloc(align, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	if (take(K_MALLOC))
		return ENOMEM;	/* errno untouched, as glibc's */
	return __real_posix_memalign(p, align, n);
}

char *__wrap_strdup(const char *s)
{
	FAIL_NULL_IF(K_MALLOC);
	return __real_strdup(s);
}

int __wrap_io_uring_queue_init_params(unsigned int entries, struct io_uring *ring,
				      struct io_uring_params *p)
{
	if (take(K_URING))
		return -ENOMEM;	/* liburing's way: errno untouched */
	return __real_io_uring_queue_init_params(entries, ring, p);
}

int __wrap_socket(int domain, int type, int proto)
{
	if (take(K_SOCKET)) {
		errno = EMFILE;
		return -1;
	}
	return __real_socket(domain, type, proto);
}

int __wrap_eventfd(unsigned int initval, int flags)
{
	if (take(K_SOCKET)) {
		errno = EMFILE;
		return -1;
	}
	return __real_eventfd(initval, flags);
}

int __wrap_epoll_create1(int flags)
{
	if (take(K_SOCKET)) {
		errno = EMFILE;
		return -1;
	}
	return __real_epoll_create1(flags);
}

int __wrap_bpf_map_create(enum bpf_map_type type, const char *name, __u32 key_size,
			  __u32 value_size, __u32 max_entries,
			  const struct bpf_map_create_opts *opts)
{
	FAIL_NEG_IF(K_BPF);
	return __real_bpf_map_create(type, name, key_size, value_size, max_entries, opts);
}

int __wrap_bpf_prog_load(enum bpf_prog_type type, const char *name, const char *license,
			 const struct bpf_insn *insns, size_t insn_cnt,
			 struct bpf_prog_load_opts *opts)
{
	FAIL_NEG_IF(K_BPF);
	return __real_bpf_prog_load(type, name, license, insns, insn_cnt, opts);
}

int __wrap_bpf_btf_load(const void *data, size_t size, struct bpf_btf_load_opts *opts)
{
	FAIL_NEG_IF(K_BPF);
	return __real_bpf_btf_load(data, size, opts);
}

int __wrap_bpf_link_create(int prog_fd, int target_fd, enum bpf_attach_type type,
			   const struct bpf_link_create_opts *opts)
{
	FAIL_NEG_IF(K_BPF);
	return __real_bpf_link_create(prog_fd, target_fd, type, opts);
}

int __wrap_pthread_attr_setaffinity_np(pthread_attr_t *attr, size_t size,
				       const cpu_set_t *set)
{
	if (take(K_MALLOC))
		return ENOMEM;
	return __real_pthread_attr_setaffinity_np(attr, size, set);
}

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	if (take(K_THREAD))
		return EAGAIN;	/* a thread limit, or no memory for its stack */
	return __real_pthread_create(thread, attr, fn, arg);
}

static int msgs;

static int count_msgs(enum ucm_log_level level, const char *fmt, va_list ap)
{
	if (level == UCM_LOG_WARN)
		msgs++;
	return 0;
}

static struct ucm_dp *create(const char *ifname)
{
	static const int cpus[2] = { 0, 1 };
	UCM_OPTS(ucm_dp_opts, o, .ifname = ifname, .tun_name = "ucmsf0", .cpus = cpus,
		 .ncpus = 2, .xsk_mode = UCM_XSK_COPY, .frames_per_queue = 8192,
		 .flags = UCM_DP_F_TWO_WAY | UCM_DP_F_COALESCE);

	return ucm_dp__create(&o);
}

int main(int argc, char **argv)
{
	long n, maxn, failed = 0, coped = 0, silent = 0, heap = 0;
	int kind = K_NONE;
	struct census a, b;
	char why[512] = "", mem[64];
	struct ucm_dp *dp;

	for (int k = K_MALLOC; k <= K_THREAD && argc == 4; k++) {
		size_t len = strlen(kinds[k]);
		const char *rest = argv[2] + len;

		if (!strncmp(argv[2], kinds[k], len) && (!*rest || !strcmp(rest, "+"))) {
			kind = k;
			sticky = *rest;
		}
	}
	if (argc != 4 || kind == K_NONE || (maxn = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: setupfail IFNAME malloc|uring|socket|bpf|thread[+] MAXN\n");
		return 2;
	}
	/* LeakSanitizer's verdict at the exit ends the process before stdio
	 * flushes: our lines must be out by then. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ucm_set_print(count_msgs);
	/* Warm up: what the first create leaves for good (libbpf's and
	 * glibc's one-time state) is not a leak. */
	for (int i = 0; i < 2; i++) {
		dp = create(argv[1]);
		if (dp)
			ucm_dp__destroy(dp);
	}
	if (leaked())
		snprintf(why, sizeof(why), "a create and destroy with nothing failing leaked memory (LeakSanitizer's report on stderr)");
	for (n = 1; n <= maxn && !why[0]; n++) {
		int err = 0, m0 = msgs;
		bool hit;

		census_take(&a);
		arm(kind, n);
		dp = create(argv[1]);
		err = dp ? 0 : errno;
		hit = __atomic_load_n(&fired, __ATOMIC_RELAXED);
		arm(K_NONE, 0);	/* the rest runs as it would */
		if (!hit) {
			if (dp)
				ucm_dp__destroy(dp);
			break;	/* the create makes fewer calls than n */
		}
		if (dp) {
			coped++;
			if (ucm_dp__start(dp) || ucm_dp__stop(dp, 1000))
				snprintf(why, sizeof(why), "call %ld failed, the create coped, but the datapath did not run and stop cleanly", n);
			ucm_dp__destroy(dp);
		} else {
			failed++;
			if (!err)
				snprintf(why, sizeof(why), "call %ld failed: the create failed without an errno", n);
			silent += msgs == m0;
		}
		if (!dp && msgs == m0 && !why[0])
			snprintf(why, sizeof(why), "call %ld failed: the create failed (%s) without a word in the log",
				 n, strerror(err));
		census_take(&b);
		for (int t = 0; t < 100 && !census_none_left(&a, &b); t++) {
			usleep(10000);
			census_take(&b);
		}
		heap += (long)(b.heap - a.heap);
		if (!why[0] && !census_none_left(&a, &b))
			snprintf(why, sizeof(why), "call %ld failed (%s): left fds %+ld, programs %+ld, maps %+ld, links %+ld, devices %+ld, threads %+ld, heap %+ld bytes",
				 n, dp ? "coped" : strerror(err), b.fds - a.fds, b.progs - a.progs,
				 b.maps - a.maps, b.links - a.links, b.devs - a.devs,
				 b.threads - a.threads, (long)(b.heap - a.heap));
		if (!why[0] && leaked())
			snprintf(why, sizeof(why), "call %ld failed (%s): memory leaked (LeakSanitizer's report on stderr)",
				 n, dp ? "coped" : strerror(err));
	}
	if (!why[0] && n == 1)
		snprintf(why, sizeof(why), "not one call of it failed: the create made none, or the link did not wrap %s (Makefile)",
			 kinds[kind]);
	if (why[0])
		printf("FAIL: setupfail/%s: %s\n", argv[2], why);
	else
		printf("PASS: setupfail/%s\n", argv[2]);
	if (LSAN)
		snprintf(mem, sizeof(mem), "LeakSanitizer looked after each");
	else
		snprintf(mem, sizeof(mem), "the heap's bytes in use moved by %+ld in all", heap);
	printf("# %s: %ld calls made to fail: %ld creates failed (%ld without a warning), %ld coped; %s%s\n",
	       argv[2], n - 1, failed, silent, coped, mem, n > maxn ? " (stopped at the limit)" : "");
	return why[0] ? 1 : 0;
}
