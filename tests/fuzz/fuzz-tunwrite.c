// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tun's write path (lib/io/tun.c: batch_layout(), pkt_buf(),
 * super_build(), super_refused(), slot_result()) on random batches, the
 * device replaced by a writev() that keeps what each write would have
 * handed the kernel. tun.c is compiled in, its writev() renamed.
 *
 * Input: a control byte, then fuzz-gso's records (fuzz-batch.h): the
 * packets, each copied into a frame of its own after the sink's headroom,
 * its end the block's (ASan sees a read past it).
 *   control: bit 0 a tap (whole frames), bit 1 coalescing, bit 2 the
 *            "kernel" refuses every super-packet (EINVAL), bit 3 IPv6
 *            ones, bit 4 UDP ones with a short last segment; bits 5-7
 *            the worker's UCM_GSO_F_NO_TCP, _NO_UDP, _UDP_EQUAL
 *
 * The oracle, independent of tun.c: the writes come in the plan's order,
 * one per group; a packet written alone is its vnet header and then its
 * bytes as they came (tun: the IP datagram, no padding; tap: the frame),
 * no GSO asked, NEEDS_CSUM only with the offsets of its L4 checksum; a
 * group is one write of the first packet's headers, with the IP length of
 * the whole, and every member's payload in order, its vnet header asking
 * the GSO of its protocol and family, a segment of the first's payload,
 * the checksum at its protocol's offset; a refused one is
 * followed by each member alone, as it came (the first put back). In tun
 * mode a non-IP packet is not written and is the only failure counted.
 * Packets of one frame each: a chain's iovecs are fuzz-chainq's. Not
 * checked: that a packet whose checksum is partial asks NEEDS_CSUM (that
 * takes tun.c's own reading of it), and writes failing otherwise than by
 * a refusal.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "fuzz-batch.h"

static ssize_t fuzz_writev(int fd, const struct iovec *iov, int iovcnt);
#define writev fuzz_writev
#include "../../lib/io/tun.c"
#undef writev

/* tun.c's calls into files not compiled in: none is reached here. */
int ucm_tun_test_refuse_super, ucm_tun_test_wait_fail, ucm_tun_test_ring_fail;
int ucm_tun_open(void *ctx, uint32_t w) { (void)ctx; (void)w; abort(); }
int ucm_tun_open_back(void *ctx, uint32_t w) { (void)ctx; (void)w; abort(); }
void ucm_tun_close(void *ctx, uint32_t w) { (void)ctx; (void)w; abort(); }
int ucm_tun_ring_init(struct tun_wstate *st) { (void)st; abort(); }
void ucm_tun_ring_exit(struct tun_wstate *st) { (void)st; abort(); }
uint32_t ucm_tun_back_poll(void *ctx, uint32_t w) { (void)ctx; (void)w; abort(); }
int ucm_tun_back_wait(void *ctx, uint32_t w, int fd) { (void)ctx; (void)w; (void)fd; abort(); }
void ucm_tun_stats_publish(struct ucm_tun_stats *s, const struct ucm_tun_stats *a)
{
	(void)s;
	(void)a;
	abort();
}

#define HEAD		256	/* the frame's header and headroom */
#define MAX_WRITES	(2 * UCM_TUN_BATCH_MAX)
#define GSO_REFUSED	0x7f	/* what the test switch writes, tun.c */

_Static_assert(HEAD >= UCM_FRAME_HDR_ROOM, "a tap's vnet header fits the headroom");

/* What each write handed the "kernel". */
static struct {
	uint32_t n;
	uint32_t len[MAX_WRITES];
	uint8_t *bytes[MAX_WRITES];
} w;

static ssize_t fuzz_writev(int fd, const struct iovec *iov, int iovcnt)
{
	uint32_t len = 0, off = 0;
	uint8_t *b;

	(void)fd;
	CHECK(w.n < MAX_WRITES && iovcnt > 0);
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	b = malloc(len ? len : 1);
	CHECK(b);
	for (int i = 0; i < iovcnt; i++) {
		memcpy(b + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	w.bytes[w.n] = b;
	w.len[w.n++] = len;
	CHECK(len >= VNET_LEN);
	if (((const struct virtio_net_hdr *)b)->gso_type == GSO_REFUSED) {
		errno = EINVAL;
		return -1;
	}
	return len;
}

/* Where packet @i's written bytes start in its frame: tun, its IP header. */
static uint32_t start_of(const struct batch *b, uint32_t i, bool tap)
{
	return tap ? 0 : b->pkt[i].l3_off;
}

/* Written alone: its vnet header, then its bytes as they came. */
static void check_alone(const struct batch *b, uint32_t i, bool tap, uint32_t k)
{
	const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)w.bytes[k];
	const struct ucm_pkt *p = &b->pkt[i];
	uint32_t start = start_of(b, i, tap), len = tap ? b->len[i] : p->l3_len;

	CHECK(w.len[k] == VNET_LEN + len);
	CHECK(!memcmp(w.bytes[k] + VNET_LEN, b->orig[i] + start, len));
	CHECK(vh->gso_type == VIRTIO_NET_HDR_GSO_NONE && !vh->gso_size);
	if (vh->flags) {
		CHECK(vh->flags == VIRTIO_NET_HDR_F_NEEDS_CSUM && (p->flags & UCM_PKT_F_L4));
		CHECK(vh->csum_start == p->l4_off - start);
		CHECK(vh->csum_offset == (p->l4_proto == IPPROTO_TCP ? 16 : 6));
	} else {
		CHECK(!vh->csum_start && !vh->csum_offset);
	}
}

/* A group's super-packet: the first's headers, the members' payloads. */
static void check_super(const struct batch *b, const struct ucm_gso_plan *pl, uint32_t g,
			bool tap, uint32_t k)
{
	const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)w.bytes[k];
	uint32_t h = pl->head[g], start = start_of(b, h, tap);
	const struct ucm_pkt *p = &b->pkt[h];
	uint32_t hlen = p->l4_off - start + p->l4_hlen, off = VNET_LEN + hlen, ip_len;
	const uint8_t *ip = w.bytes[k] + VNET_LEN + p->l3_off - start;

	bool tcp = p->l4_proto == IPPROTO_TCP;

	CHECK(vh->gso_type == (!tcp ? VIRTIO_NET_HDR_GSO_UDP_L4 :
			       is_v6(p) ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4));
	CHECK(vh->flags == VIRTIO_NET_HDR_F_NEEDS_CSUM && vh->csum_start == p->l4_off - start);
	CHECK(vh->csum_offset == (tcp ? 16 : 6) && vh->gso_size == payload(p));
	CHECK(w.len[k] >= off);
	/* The addresses as they came. */
	if (is_v6(p))
		CHECK(!memcmp(ip + 8, b->orig[h] + p->l3_off + 8, 32));
	else
		CHECK(!memcmp(ip + 12, b->orig[h] + p->l3_off + 12, 8));
	for (int32_t m = h; m >= 0; m = pl->next[m]) {
		const struct ucm_pkt *q = &b->pkt[m];
		uint32_t from = q->l4_off + q->l4_hlen, n = q->l3_off + q->l3_len - from;

		CHECK(off + n <= w.len[k] && !memcmp(w.bytes[k] + off, b->orig[m] + from, n));
		off += n;
	}
	CHECK(off == w.len[k]);
	ip_len = w.len[k] - VNET_LEN - (p->l3_off - start);
	CHECK(is_v6(p) ? ld_be16(ip + 4) == ip_len - 40 : ld_be16(ip + 2) == ip_len);
}

static void run(struct batch *b, uint8_t ctl)
{
	struct ucm_frame_hdr *frames[UCM_TUN_BATCH_MAX];
	uint64_t addrs[UCM_TUN_BATCH_MAX] = { 0 };
	struct ucm_tun tun = { .name = "fz" };
	bool tap = ctl & 1, coalesce = ctl & 2;
	struct ucm_tun_stats a = { 0 };
	uint32_t n = b->n, i, g, k = 0, failed, want_failed = 0, sent = 0, refused = 0;
	struct tun_wstate *st = calloc(1, sizeof(*st));
	const struct ucm_gso_plan *pl;

	CHECK(st);
	tun.flags = tap ? UCM_TUN_F_TAP : 0;
	st->fd = -1;
	st->coalesce = coalesce;
	st->gso_flags = (tap ? UCM_GSO_F_L2 : 0) | (ctl & 0x20 ? UCM_GSO_F_NO_TCP : 0) |
			(ctl & 0x40 ? UCM_GSO_F_NO_UDP : 0) | (ctl & 0x80 ? UCM_GSO_F_UDP_EQUAL : 0);
	st->gso_retry_at[0] = st->gso_retry_at[1] = UINT64_MAX;
	st->addrs = addrs;
	ucm_tun_test_refuse_super = (ctl & 4 ? 1 : 0) | (ctl & 8 ? 4 : 0) | (ctl & 0x10 ? 8 : 0);
	for (i = 0; i < n; i++) {
		frames[i] = malloc(HEAD + b->len[i]);
		CHECK(frames[i]);
		memset(frames[i], 0, HEAD);
		frames[i]->data_off = HEAD;
		frames[i]->len = frames[i]->head_len = b->len[i];
		frames[i]->pkt = b->pkt[i];
		memcpy((uint8_t *)frames[i] + HEAD, b->orig[i], b->len[i]);
	}
	w.n = 0;
	failed = xmit_write(&tun, st, frames, n, &a);

	pl = &st->plan;
	for (g = 0; g < (coalesce ? pl->ngroups : n); g++) {
		uint32_t h = coalesce ? pl->head[g] : g;

		if (!coalesce || pl->nseg[g] == 1) {
			if (!tap && !(b->pkt[h].flags & (UCM_PKT_F_IPV4 | UCM_PKT_F_IPV6))) {
				want_failed++;
				continue;
			}
			CHECK(k < w.n);
			check_alone(b, h, tap, k++);
			sent++;
			continue;
		}
		CHECK(k < w.n);
		if (((const struct virtio_net_hdr *)w.bytes[k])->gso_type != GSO_REFUSED) {
			check_super(b, pl, g, tap, k++);
			sent += pl->nseg[g];
			continue;
		}
		/* Refused: each member alone, the first as it came. */
		k++;
		refused++;
		for (int32_t m = h; m >= 0; m = pl->next[m]) {
			CHECK(k < w.n);
			check_alone(b, m, tap, k++);
			sent++;
		}
	}
	CHECK(k == w.n);
	CHECK(failed == want_failed && a.non_ip == want_failed);
	CHECK(a.packets == sent && a.super_refused == refused);
	for (i = 0; i < w.n; i++)
		free(w.bytes[i]);
	for (i = 0; i < n; i++)
		free(frames[i]);
	free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct batch *b;

	if (size < 1)
		return 0;
	b = calloc(1, sizeof(*b));
	CHECK(b);
	read_batch(b, data, size);
	if (b->n > UCM_TUN_BATCH_MAX)
		b->n = UCM_TUN_BATCH_MAX;	/* a worker's batch at most */
	run(b, data[0]);
	for (uint32_t i = 0; i < UCM_GSO_MAX_BATCH; i++) {
		free(b->data[i]);
		free(b->orig[i]);
	}
	free(b);
	return 0;
}
