// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's AF_XDP engine: one TX-only socket on one queue of the
 * interface. Every UMEM frame holds a copy of the template; a frame taken
 * for sending is rewritten (gen_rewrite()) and goes on the TX ring; the
 * completion ring gives it back. No XDP program: nothing is received.
 *
 * In copy mode (veth, and drivers without zero-copy) each sendto() makes
 * the kernel transmit up to 32 descriptors as skbs, so the ring is kicked
 * until it is empty. "Sent" is what the completion ring reported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "engine.h"
#include "util.h"

#define NFRAMES		4096
#define RING_SIZE	2048
#define BIND_RETRIES	40		/* a socket closed a moment ago keeps the queue busy */
#define BIND_RETRY_US	25000

struct xsk_tx {
	struct xsk_umem *umem;
	struct xsk_socket *sock;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp;
	void *area;
	size_t area_len;
	uint32_t frame_size, batch;
	uint64_t free[NFRAMES];		/* frame addresses not on the rings */
	uint32_t nfree;
	uint64_t seq, completed, outstanding;
	uint64_t pending;		/* completed in a call that failed */
	uint32_t flow;
	const struct gen_tmpl *t;
	const volatile sig_atomic_t *stop;	/* a send returns when set */
	int fd;
	bool zc;
};

static const char *bind_hint(int err)
{
	switch (err) {
	case EOPNOTSUPP:
		return " (the driver has no AF_XDP support)";
	case EBUSY:
		return " (another AF_XDP socket is bound to the queue)";
	case EINVAL:
		return " (no such queue? ethtool -l shows the queues)";
	case EPERM:
		return " (needs CAP_NET_RAW and CAP_BPF: run as root)";
	default:
		return "";
	}
}

struct xsk_tx *xsk_tx_open(const char *dev, uint32_t queue, const struct gen_tmpl *t,
			   uint32_t batch, const volatile sig_atomic_t *stop)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.comp_size = RING_SIZE,
		.frame_headroom = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = 0,
		.tx_size = RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	struct xdp_options opt = {};
	socklen_t len = sizeof(opt);
	struct xsk_tx *x;
	int err, tries = 0;
	uint32_t i;

	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->t = t;
	x->stop = stop;
	x->batch = batch ? batch : 64;
	x->frame_size = t->size <= 2048 ? 2048 : 4096;
	x->area_len = (size_t)NFRAMES * x->frame_size;
	x->area = mmap(NULL, x->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		fprintf(stderr, "ucpumap-gen: cannot map %zu bytes for the UMEM: %s\n", x->area_len,
			strerror(errno));
		free(x);
		return NULL;
	}
	for (i = 0; i < NFRAMES; i++) {
		x->free[i] = (uint64_t)i * x->frame_size;
		memcpy((uint8_t *)x->area + x->free[i], t->frame, t->size);
	}
	x->nfree = NFRAMES;
	ucfg.frame_size = x->frame_size;
	err = xsk_umem__create(&x->umem, x->area, x->area_len, &x->fill, &x->comp, &ucfg);
	if (err) {
		err = err < 0 ? -err : err;
		fprintf(stderr, "ucpumap-gen: cannot register a UMEM of %zu bytes: %s%s\n",
			x->area_len, strerror(err), bind_hint(err));
		goto fail;
	}
	for (;;) {
		err = xsk_socket__create(&x->sock, dev, queue, x->umem, NULL, &x->tx, &scfg);
		err = err < 0 ? -err : err;
		if (err != EBUSY || ++tries > BIND_RETRIES)
			break;
		usleep(BIND_RETRY_US);
	}
	if (err) {
		x->sock = NULL;
		fprintf(stderr, "ucpumap-gen: cannot bind an AF_XDP socket to %s queue %u: %s%s\n",
			dev, queue, strerror(err), bind_hint(err));
		goto fail;
	}
	x->fd = xsk_socket__fd(x->sock);
	x->zc = !getsockopt(x->fd, SOL_XDP, XDP_OPTIONS, &opt, &len) &&
		(opt.flags & XDP_OPTIONS_ZEROCOPY);
	return x;
fail:
	xsk_tx_close(x);
	return NULL;
}

bool xsk_tx_zerocopy(const struct xsk_tx *x)
{
	return x->zc;
}

static void reap(struct xsk_tx *x)
{
	uint32_t idx, n, i;

	n = xsk_ring_cons__peek(&x->comp, RING_SIZE, &idx);
	for (i = 0; i < n; i++)
		x->free[x->nfree++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	if (n) {
		xsk_ring_cons__release(&x->comp, n);
		x->completed += n;
		x->outstanding -= n;
	}
}

/* 0, or -errno for an error that retrying will not cure. */
static int kick(struct xsk_tx *x)
{
	if (!xsk_ring_prod__needs_wakeup(&x->tx))
		return 0;
	if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	switch (errno) {
	case EAGAIN:	/* the kernel's budget per call: more to do */
	case EBUSY:
	case ENOBUFS:	/* the device queue is full: a moment later */
	case EINTR:
		return 0;
	default:
		return -errno;
	}
}

int64_t xsk_tx_send(void *arg, uint64_t n)
{
	struct xsk_tx *x = arg;
	uint64_t queued = 0, done0 = x->completed, now;
	uint32_t idx, k, i, idle = 0;
	bool last = !n;		/* the sending loop's final call */
	int err;

	/* What the last call left on its way counts when it completes, in
	 * this call's return: asking for it again would send it twice over
	 * --count. */
	n = n > x->outstanding ? n - x->outstanding : 0;
	while (queued < n && !*x->stop) {
		reap(x);
		k = n - queued < x->batch ? (uint32_t)(n - queued) : x->batch;
		if (k > x->nfree)
			k = x->nfree;
		k = k ? xsk_ring_prod__reserve(&x->tx, k, &idx) : 0;
		now = k && x->t->flags & UCM_GEN_F_STAMP ? mono_ns() : 0;
		for (i = 0; i < k; i++) {
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);
			uint64_t addr = x->free[--x->nfree];

			gen_rewrite((uint8_t *)x->area + addr, x->t, x->seq++, x->flow, now);
			if (++x->flow >= x->t->flows)
				x->flow = 0;
			d->addr = addr;
			d->len = x->t->size;
		}
		if (k) {
			xsk_ring_prod__submit(&x->tx, k);
			queued += k;
			x->outstanding += k;
			idle = 0;
		} else if (++idle > 1000000) {
			fprintf(stderr, "ucpumap-gen: the AF_XDP TX ring does not move (is the interface up?)\n");
			err = -EIO;
			goto err;
		}
		err = kick(x);
		if (err)
			goto err_kick;
	}
	/* What is on the ring goes out now (copy mode sends only when kicked);
	 * in zero-copy mode the driver may report it a little later. */
	for (i = 0; x->outstanding && i < 100000; i++) {
		err = kick(x);
		if (err)
			goto err_kick;
		reap(x);
	}
	done0 -= x->pending;	/* a failed call's, in the last call's return */
	x->pending = 0;
	return (int64_t)(x->completed - done0);

err_kick:
	fprintf(stderr, "ucpumap-gen: AF_XDP transmit: %s\n", strerror(-err));
err:
	x->pending += x->completed - done0;
	if (!last)
		return err;
	/* The final call's count is all there is left to give. */
	n = x->pending;
	x->pending = 0;
	return (int64_t)n;
}

void xsk_tx_close(struct xsk_tx *x)
{
	if (!x)
		return;
	if (x->sock)
		xsk_socket__delete(x->sock);
	if (x->umem)
		xsk_umem__delete(x->umem);
	munmap(x->area, x->area_len);
	free(x);
}
