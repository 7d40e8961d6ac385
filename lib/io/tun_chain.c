// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tun's write path for packets of several frames (UCM_FRAME_F_CHAIN):
 * the iovecs of one, and where a batch's lie for the coalescing plan.
 * Apart from tun.c's hot path: only batches that hold such packets come
 * here.
 */
#include <sys/uio.h>

#include "io/tun_internal.h"

/*
 * A packet of several frames (UCM_FRAME_F_CHAIN), @len bytes to write
 * from iov[0].iov_base (pkt_buf()'s: the vnet header on): the part in its
 * first frame, then its later frames', the last cut to @len (a tun writes
 * the IP datagram, without any trailer). Return: the iovecs.
 */
uint32_t ucm_tun_chain_iov(struct ucm_frame_hdr *hdr, uint64_t base, struct iovec *iov,
			   uint32_t len)
{
	char *area = (char *)hdr - base, *end = (char *)ucm_frame_data(hdr) + hdr->head_len;
	uint64_t part[UCM_FRAME_CHAIN_MAX];
	uint32_t n = ucm_frame_chain(hdr, part), i, k = 1, left, l;

	iov[0].iov_len = min((uint32_t)(end - (char *)iov[0].iov_base), len);
	left = len - iov[0].iov_len;
	for (i = 0; i < n && left; i++) {
		l = min(ucm_desc_len(part[i]), left);
		iov[k].iov_base = area + ucm_desc_addr(part[i]);
		iov[k++].iov_len = l;
		left -= l;
	}
	return k;
}

/* Where a batch's packets of several frames lie, for the plan. */
void ucm_tun_frags_fill(struct tun_wstate *st, struct ucm_frame_hdr **frames, uint32_t n)
{
	uint64_t part[UCM_FRAME_CHAIN_MAX];
	uint32_t i, k;

	for (i = 0; i < n; i++) {
		struct ucm_frame_hdr *h = frames[i];
		struct ucm_gso_frags *fr = &st->frags[i];
		const uint8_t *area = (const uint8_t *)h - st->addrs[i];

		st->fragp[i] = NULL;
		if (!(h->flags & UCM_FRAME_F_CHAIN))
			continue;
		fr->n = ucm_frame_chain(h, part);
		fr->head = h->head_len;
		for (k = 0; k < fr->n; k++) {
			fr->part[k] = area + ucm_desc_addr(part[k]);
			fr->len[k] = ucm_desc_len(part[k]);
		}
		st->fragp[i] = fr;
	}
}
