// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench scale: the flood rows' light queues, what they got through
 * and how long it took.
 *
 * Each light queue's generator sends to a sink of its own, a socket bound
 * in the DUT's namespace that nobody reads while the row runs: its buffer
 * holds the whole run (LIGHT_RCVBUF), and what it could not hold the
 * kernel counts as dropped at the socket, delivered all the same. The
 * generator writes its send time in each datagram (ucpumap-gen --stamp,
 * CLOCK_MONOTONIC), and the socket keeps the time the stack took it
 * (SO_TIMESTAMPNS, CLOCK_REALTIME, taken as the packet entered the stack
 * from the kernel's cpumap or from ucpumapd's tun): the difference, less
 * the clocks' offset, is the path's one-way latency, read after the row.
 * One host, one clock in every namespace. The kernel takes receive times
 * only while some socket asks for them, and turns them on from a work
 * item: a socket of the run's own asks from before the first row to the
 * end, so no light datagram comes in unstamped.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "scale.h"

/* A light queue's sink holds a whole run unread: 64 MiB (the kernel
 * doubles it) is some 60000 small datagrams' truesize and more. */
#define LIGHT_RCVBUF	(64 << 20)
/* A latency longer than this is no packet of this run's: left out. */
#define LIGHT_MAX_AGE_NS	10000000000LL
/* The most datagrams a sink can hold unread, a small one's truesize
 * being at least 512 bytes of the doubled buffer: room for no more. */
#define LIGHT_MAX_HELD		(2 * (size_t)LIGHT_RCVBUF / 512)

int scale_light_open(const struct bench_cfg *bc, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), sz = LIGHT_RCVBUF, on = 1;

	inet_pton(AF_INET, bc->sink_ip, &a.sin_addr);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "scale: cannot bind a light sink to port %d: %s\n", port,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int scale_light_stamps_on(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), on = 1;

	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		fprintf(stderr, "scale: cannot turn the kernel's receive times on: %s\n",
			strerror(errno));
	return fd;
}

int scale_lat_init(struct scale_lat *la, double rate, double seconds, int nsinks)
{
	size_t per = (size_t)(rate * (seconds + 1)) + 64;
	struct timespec r, m;

	if (per > LIGHT_MAX_HELD)
		per = LIGHT_MAX_HELD;
	la->n = 0;
	la->cap = per * (nsinks > 0 ? nsinks : 1);
	la->us = calloc(la->cap, sizeof(double));
	if (!la->us) {
		fprintf(stderr, "scale: no memory for %zu light latencies\n", la->cap);
		return -ENOMEM;
	}
	/* The offset read once: the two clocks do not drift apart in a row's
	 * seconds by anything a microsecond shows. */
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	la->off_ns = (r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
	return 0;
}

/* Datagram @buf of @len bytes, received at @ts: its latency into @la. */
static void lat_add(struct scale_lat *la, const uint8_t *buf, ssize_t len,
		    const struct timespec *ts)
{
	uint64_t sent;
	int64_t age;

	if (!ts || len < 16 || la->n >= la->cap)
		return;
	memcpy(&sent, buf + 8, sizeof(sent));	/* after the sequence number */
	age = ts->tv_sec * 1000000000LL + ts->tv_nsec - la->off_ns - (int64_t)be64toh(sent);
	if (age >= 0 && age < LIGHT_MAX_AGE_NS)
		la->us[la->n++] = age / 1e3;
}

double scale_light_drain(int fd, struct scale_lat *la)
{
	uint32_t mem[SK_MEMINFO_VARS] = { 0 };
	union {
		char b[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} cb;
	socklen_t len = sizeof(mem);
	uint8_t buf[2048];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb.b };
	double n = 0;

	for (;;) {
		struct timespec tsv;
		struct cmsghdr *cm;
		bool ts = false;
		ssize_t r;

		m.msg_controllen = sizeof(cb.b);
		r = recvmsg(fd, &m, MSG_DONTWAIT);
		if (r < 0)
			break;
		n++;
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
				memcpy(&tsv, CMSG_DATA(cm), sizeof(tsv));
				ts = true;
			}
		if (la)
			lat_add(la, buf, r, ts ? &tsv : NULL);
	}
	if (!getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len))
		n += mem[SK_MEMINFO_DROPS];
	close(fd);
	return n;
}

void scale_lat_part(struct scale_lat *la, size_t from, double *p50, double *p99,
		    double *timed)
{
	static const double q[2] = { 0.5, 0.99 };
	double out[2] = { 0, 0 };

	/* Sorted in place: the whole run's quantiles do not mind the order. */
	if (la->n > from)
		quantiles(la->us + from, la->n - from, q, 2, out);
	*p50 = out[0];
	*p99 = out[1];
	*timed = la->n > from ? la->n - from : 0;
}

void scale_lat_done(struct scale_lat *la, double *p50, double *p99, double *timed)
{
	scale_lat_part(la, 0, p50, p99, timed);
	free(la->us);
	la->us = NULL;
}
