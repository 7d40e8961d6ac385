/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What one read from a tun queue brought (the read path, tun_read_tx.c): a
 * pure function of the bytes read, apart so that tests/fuzz/fuzz-tun.c
 * can give it any.
 */
#ifndef UCM_TUN_READ_H
#define UCM_TUN_READ_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/virtio_net.h>

enum ucm_tun_read {
	UCM_TUN_READ_PACKET,	/* a packet to send */
	UCM_TUN_READ_DRAINED,	/* -EAGAIN: nothing was waiting */
	UCM_TUN_READ_ERR,	/* an error, or nothing past the vnet header */
	UCM_TUN_READ_TOO_BIG,	/* the read filled its room: maybe cut short */
	UCM_TUN_READ_OFFLOAD,	/* a checksum or a segmentation left to us */
	UCM_TUN_READ_NON_IP,	/* tun mode: not IPv4 or IPv6, or shorter than its header */
};

/* Tun mode: the packet at @pkt of @len bytes starts an IPv4 or IPv6
 * header (@v6: which). */
static inline bool ucm_tun_read_ip(const uint8_t *pkt, uint32_t len, bool *v6)
{
	*v6 = pkt[0] >> 4 == 6;
	return (*v6 || pkt[0] >> 4 == 4) && len >= (*v6 ? 40u : 20u);
}

/*
 * A read's result @res (bytes, or -errno) into @buf, which then holds the
 * virtio_net header and the packet after it; @room is what the read could
 * take. Looks at the vnet header and, in tun mode (!@tap), the packet's
 * first byte, within the bytes read only. For UCM_TUN_READ_PACKET, @len
 * is the packet's length and @v6 (tun mode) its family.
 */
static inline enum ucm_tun_read ucm_tun_read_check(const uint8_t *buf, int32_t res,
						   uint32_t room, bool tap, uint32_t *len,
						   bool *v6)
{
	const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)buf;
	const uint8_t *pkt = buf + sizeof(*vh);

	if (res == -EAGAIN)
		return UCM_TUN_READ_DRAINED;	/* the poll says when it is not */
	if (res < 0 || (uint32_t)res <= sizeof(*vh))
		return UCM_TUN_READ_ERR;
	if ((uint32_t)res >= room)	/* maybe cut short: never send it */
		return UCM_TUN_READ_TOO_BIG;
	/* DATA_VALID is a hint (a checksum already checked), not work. */
	if ((vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) ||
	    vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		return UCM_TUN_READ_OFFLOAD;
	*len = res - sizeof(*vh);
	if (tap)
		return UCM_TUN_READ_PACKET;
	return ucm_tun_read_ip(pkt, *len, v6) ? UCM_TUN_READ_PACKET : UCM_TUN_READ_NON_IP;
}

#endif /* UCM_TUN_READ_H */
