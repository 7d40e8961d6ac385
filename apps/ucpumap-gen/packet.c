// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's packet engine: the template frame through an AF_PACKET
 * socket on the interface, the qdisc bypassed, a batch of frames per
 * sendmmsg(). Slower per frame than the live engine (a copy and an skb
 * each), but any frame up to the interface's MTU: jumbo frames, which a
 * live frame (a page) and our AF_XDP frames cannot hold. Each frame of a
 * batch is a copy of the template of its own, rewritten per send
 * (gen_rewrite()): the kernel copies it in the call, so the next batch may
 * write over it. "Sent" is what the calls took.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "engine.h"
#include "util.h"

struct packet_tx {
	int fd;
	uint32_t batch, flow;
	uint64_t seq;
	const struct gen_tmpl *t;
	const volatile sig_atomic_t *stop;
	uint8_t *frames;			/* batch copies of the template */
	struct iovec iov[PACKET_BATCH_MAX];
	struct mmsghdr msg[PACKET_BATCH_MAX];
	struct sockaddr_ll to;
	uint64_t pending;			/* sent by a call that failed */
};

struct packet_tx *packet_open(int ifindex, const struct gen_tmpl *t, uint32_t batch,
			      const volatile sig_atomic_t *stop)
{
	struct packet_tx *p = calloc(1, sizeof(*p));
	int one = 1;
	uint32_t i;

	if (!p)
		return NULL;
	p->batch = batch ? batch : 64;
	p->t = t;
	p->stop = stop;
	p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		fprintf(stderr, "ucpumap-gen: no AF_PACKET socket: %s (needs CAP_NET_RAW: run as root)\n",
			strerror(errno));
		goto err;
	}
	/* Straight to the driver, as the other engines send: no qdisc. */
	if (setsockopt(p->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)))
		fprintf(stderr, "ucpumap-gen: PACKET_QDISC_BYPASS refused (%s): through the qdisc\n",
			strerror(errno));
	p->frames = malloc((size_t)p->batch * t->size);
	if (!p->frames) {
		fprintf(stderr, "ucpumap-gen: no memory for %u frames\n", p->batch);
		goto err;
	}
	p->to = (struct sockaddr_ll){ .sll_family = AF_PACKET, .sll_ifindex = ifindex,
				      .sll_halen = 6 };
	memcpy(p->to.sll_addr, t->frame, 6);
	for (i = 0; i < p->batch; i++) {
		memcpy(p->frames + (size_t)i * t->size, t->frame, t->size);
		p->iov[i] = (struct iovec){ p->frames + (size_t)i * t->size, t->size };
		p->msg[i].msg_hdr = (struct msghdr){ .msg_name = &p->to,
						     .msg_namelen = sizeof(p->to),
						     .msg_iov = &p->iov[i], .msg_iovlen = 1 };
	}
	return p;
err:
	packet_close(p);
	return NULL;
}

/* A call that the device's queue takes nothing from for this long ends
 * with what it sent: the sending loop's own limits then apply. */
#define PACKET_STUCK_NS	10000000ull

int64_t packet_send(void *arg, uint64_t n)
{
	struct packet_tx *p = arg;
	uint64_t sent = 0, now, stuck = 0;
	uint32_t k, i;
	int r;

	if (!n) {	/* the last call: what a failed one sent */
		sent = p->pending;
		p->pending = 0;
		return (int64_t)sent;
	}
	while (sent < n && !*p->stop) {
		k = n - sent < p->batch ? (uint32_t)(n - sent) : p->batch;
		/* The flows in turn from where the last call ended: frames
		 * it did not take are written again. */
		now = p->t->flags & UCM_GEN_F_STAMP ? mono_ns() : 0;
		for (i = 0; i < k; i++)
			gen_rewrite(p->iov[i].iov_base, p->t, p->seq + i,
				    (p->flow + i) % p->t->flows, now);
		r = sendmmsg(p->fd, p->msg, k, 0);
		if (r < 0) {
			if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR) {
				/* The device's queue is full: wait, but not for
				 * ever (a link gone takes nothing): the loop
				 * looks at the link between calls. */
				if (!stuck)
					stuck = mono_ns() + PACKET_STUCK_NS;
				else if (mono_ns() > stuck)
					break;
				sched_yield();
				continue;
			}
			r = -errno;
			fprintf(stderr, "ucpumap-gen: AF_PACKET send: %s\n", strerror(-r));
			p->pending += sent;	/* gone: the last call's return */
			return r;
		}
		stuck = 0;
		p->seq += r;
		p->flow = (p->flow + r) % p->t->flows;
		sent += r;
	}
	return sent;
}

void packet_close(struct packet_tx *p)
{
	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	free(p->frames);
	free(p);
}
