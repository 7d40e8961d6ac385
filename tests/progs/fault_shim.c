// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Faults on demand for a running ucpumapd (LD_PRELOAD=libfault_shim.so),
 * for tests/net/test-faults.sh: what nothing on this machine makes happen
 * by itself. UCM_SHIM_AFTER_MS after the process starts, and then
 * UCM_SHIM_COUNT times (default 1):
 *
 *   UCM_SHIM_FAULT=so_error      an AF_XDP socket's SO_ERROR reads ENETDOWN
 *                                (as when the kernel unbinds it)
 *   UCM_SHIM_FAULT=uring_submit  io_uring_submit() fails with -EIO (the
 *                                way back's reads submit with it; the tun
 *                                writer uses io_uring_submit_and_wait())
 *   UCM_SHIM_FAULT=stall_write   io_uring_submit_and_wait() (a worker's
 *                                batch into the tun) first sleeps
 *                                UCM_SHIM_STALL_MS: a stalled worker
 *   UCM_SHIM_FAULT=short_send    send() on a unix stream socket takes
 *                                at most SHIM_SEND_MAX bytes, then fails
 *                                with EAGAIN every other call: the
 *                                status socket's buffer full, each turn
 *   UCM_SHIM_FAULT=xsk_socket    socket(AF_XDP) fails with EMFILE: a
 *                                set-up that fails after the attach
 *   UCM_SHIM_FAULT=thread        pthread_create() fails with EAGAIN, after
 *                                UCM_SHIM_SKIP calls that go (with one
 *                                worker, 1: the first RX thread's, at the
 *                                datapath's start)
 *   UCM_SHIM_FAULT=mac_update    an update of the steering program's MAC
 *                                map (ucm_steer_mac) fails with EPERM, as
 *                                before Linux 5.19 without CAP_BPF, after
 *                                UCM_SHIM_SKIP that go (1: the load's)
 *   UCM_SHIM_FAULT=pass_lookup   a lookup in the steering program's pass
 *                                counters (ucm_steer_pass) fails with
 *                                EPERM, as before Linux 5.19 without
 *                                CAP_BPF
 *   UCM_SHIM_FAULT=tun_owner     ioctl(TUNSETOWNER) fails with EINVAL (a
 *                                uid the user namespace does not map),
 *                                after UCM_SHIM_SKIP that go (1: the
 *                                library's, at the tun's creation)
 *
 * Everything is read in the constructor, before the daemon's seccomp
 * filter: the calls themselves use only clock_gettime() (vDSO) and what
 * they wrap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_tun.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

enum {
	SHIM_NONE, SHIM_SO_ERROR, SHIM_URING_SUBMIT, SHIM_STALL_WRITE, SHIM_SHORT_SEND,
	SHIM_XSK_SOCKET, SHIM_THREAD, SHIM_MAC_UPDATE, SHIM_PASS_LOOKUP, SHIM_TUN_OWNER,
};

static int shim_fault;
static long shim_left = 1;
static long long shim_at_ns;
static int (*real_getsockopt)(int, int, int, void *, socklen_t *);
static int (*real_submit)(struct io_uring *);
static int (*real_submit_wait)(struct io_uring *, unsigned int);
static ssize_t (*real_send)(int, const void *, size_t, int);
static int (*real_socket)(int, int, int);
static int (*real_ioctl)(int, unsigned long, void *);
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				  void *);
static int (*real_map_update)(int, const void *, const void *, __u64);
static int (*real_map_lookup)(int, const void *, void *);
static long shim_stall_ms, shim_skip;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *f = getenv("UCM_SHIM_FAULT");
	const char *after = getenv("UCM_SHIM_AFTER_MS");
	const char *count = getenv("UCM_SHIM_COUNT");

	real_getsockopt = dlsym(RTLD_NEXT, "getsockopt");
	real_submit = dlsym(RTLD_NEXT, "io_uring_submit");
	real_submit_wait = dlsym(RTLD_NEXT, "io_uring_submit_and_wait");
	real_send = dlsym(RTLD_NEXT, "send");
	real_socket = dlsym(RTLD_NEXT, "socket");
	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
	real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	real_map_update = dlsym(RTLD_NEXT, "bpf_map_update_elem");
	real_map_lookup = dlsym(RTLD_NEXT, "bpf_map_lookup_elem");
	if (getenv("UCM_SHIM_SKIP"))
		shim_skip = atol(getenv("UCM_SHIM_SKIP"));
	if (getenv("UCM_SHIM_STALL_MS"))
		shim_stall_ms = atol(getenv("UCM_SHIM_STALL_MS"));
	if (f && !strcmp(f, "so_error"))
		shim_fault = SHIM_SO_ERROR;
	else if (f && !strcmp(f, "uring_submit"))
		shim_fault = SHIM_URING_SUBMIT;
	else if (f && !strcmp(f, "stall_write"))
		shim_fault = SHIM_STALL_WRITE;
	else if (f && !strcmp(f, "short_send"))
		shim_fault = SHIM_SHORT_SEND;
	else if (f && !strcmp(f, "xsk_socket"))
		shim_fault = SHIM_XSK_SOCKET;
	else if (f && !strcmp(f, "thread"))
		shim_fault = SHIM_THREAD;
	else if (f && !strcmp(f, "mac_update"))
		shim_fault = SHIM_MAC_UPDATE;
	else if (f && !strcmp(f, "pass_lookup"))
		shim_fault = SHIM_PASS_LOOKUP;
	else if (f && !strcmp(f, "tun_owner"))
		shim_fault = SHIM_TUN_OWNER;
	shim_at_ns = now_ns() + (after ? atoll(after) : 0) * 1000000LL;
	if (count)
		shim_left = atol(count);
}

/* Is it time, and is a fault left? Takes one. */
static int shim_take(int which)
{
	if (shim_fault != which || now_ns() < shim_at_ns)
		return 0;
	return __atomic_fetch_sub(&shim_left, 1, __ATOMIC_RELAXED) > 0;
}

#define SHIM_API __attribute__((visibility("default")))

SHIM_API int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	int domain = 0;
	socklen_t dlen = sizeof(domain);

	if (level == SOL_SOCKET && name == SO_ERROR && val && len && *len >= sizeof(int) &&
	    shim_fault == SHIM_SO_ERROR &&
	    !real_getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) &&
	    domain == AF_XDP && shim_take(SHIM_SO_ERROR)) {
		*(int *)val = ENETDOWN;
		*len = sizeof(int);
		return 0;
	}
	return real_getsockopt(fd, level, name, val, len);
}

SHIM_API int io_uring_submit(struct io_uring *ring)
{
	if (shim_take(SHIM_URING_SUBMIT))
		return -EIO;
	return real_submit(ring);
}

SHIM_API int io_uring_submit_and_wait(struct io_uring *ring, unsigned int wait_nr)
{
	if (shim_take(SHIM_STALL_WRITE)) {
		struct timespec ts = { shim_stall_ms / 1000, shim_stall_ms % 1000 * 1000000 };

		nanosleep(&ts, NULL);
	}
	return real_submit_wait(ring, wait_nr);
}

/* Below any answer's size: each one needs several turns. */
#define SHIM_SEND_MAX	1000

SHIM_API ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	static __thread bool full;
	int domain = 0, type = 0;
	socklen_t dlen = sizeof(domain), tlen = sizeof(type);

	if (shim_fault == SHIM_SHORT_SEND &&
	    !real_getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) && domain == AF_UNIX &&
	    !real_getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) && type == SOCK_STREAM &&
	    shim_take(SHIM_SHORT_SEND)) {
		full = !full;
		if (!full) {
			errno = EAGAIN;
			return -1;
		}
		if (len > SHIM_SEND_MAX)
			len = SHIM_SEND_MAX;
	}
	return real_send(fd, buf, len, flags);
}

SHIM_API int socket(int domain, int type, int protocol)
{
	if (domain == AF_XDP && shim_take(SHIM_XSK_SOCKET)) {
		errno = EMFILE;
		return -1;
	}
	return real_socket(domain, type, protocol);
}

SHIM_API int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			    void *arg)
{
	if (shim_fault == SHIM_THREAD &&
	    __atomic_fetch_sub(&shim_skip, 1, __ATOMIC_RELAXED) <= 0 && shim_take(SHIM_THREAD))
		return EAGAIN;
	return real_pthread_create(t, attr, fn, arg);
}

/* The steering program's map @name, by its name (BPF_OBJ_GET_INFO_BY_FD,
 * which the daemon's seccomp filter lets through). */
static bool is_map(int fd, const char *name)
{
	struct bpf_map_info info = {};
	union bpf_attr attr = {};

	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (__u64)(unsigned long)&info;
	if (syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)))
		return false;
	return !strcmp(info.name, name);
}

SHIM_API int bpf_map_update_elem(int fd, const void *key, const void *value, __u64 flags)
{
	if (shim_fault == SHIM_MAC_UPDATE && is_map(fd, "ucm_steer_mac") &&
	    __atomic_fetch_sub(&shim_skip, 1, __ATOMIC_RELAXED) <= 0 && shim_take(SHIM_MAC_UPDATE)) {
		errno = EPERM;
		return -EPERM;
	}
	return real_map_update(fd, key, value, flags);
}

SHIM_API int bpf_map_lookup_elem(int fd, const void *key, void *value)
{
	if (shim_fault == SHIM_PASS_LOOKUP && is_map(fd, "ucm_steer_pass") &&
	    shim_take(SHIM_PASS_LOOKUP)) {
		errno = EPERM;
		return -EPERM;
	}
	return real_map_lookup(fd, key, value);
}

/* Every ioctl's argument is one word: a pointer, or a number as one. */
SHIM_API int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == TUNSETOWNER && shim_fault == SHIM_TUN_OWNER &&
	    __atomic_fetch_sub(&shim_skip, 1, __ATOMIC_RELAXED) <= 0 && shim_take(SHIM_TUN_OWNER)) {
		errno = EINVAL;
		return -1;
	}
	return real_ioctl(fd, req, arg);
}
