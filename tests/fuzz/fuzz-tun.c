// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tun read path's look at what a read brought (lib/io/tun_read.h,
 * ucm_tun_read_check(), which tun_read_tx.c's handle_slot() calls before it
 * gives a packet its Ethernet header and sends it out): a random
 * virtio_net header and packet, in tun and tap modes.
 *
 * Input: a control byte, the read's room (16 bits, big-endian), then what
 * the tun had: its vnet header and packet. The read takes as much as its
 * room (as a tun read does), into a heap block of exactly what it took
 * (ASan sees a look past it).
 *   control: bit 0 a tap (whole frames), bit 1 the read answered -EAGAIN,
 *            bit 2 it answered another error (-EIO)
 *
 * The oracle, from tun_read.h's contract: the result is one of its six;
 * -EAGAIN is DRAINED and other errors ERR; a packet is sent only when the
 * read brought more than a vnet header and less than its room (not
 * perhaps cut short), with no checksum or segmentation asked of us, and
 * in tun mode an IPv4 or IPv6 header's worth starting with its version;
 * its length is then the bytes read past the vnet header.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/tun_read.h"
#include "fuzz.h"

#define VNET	sizeof(struct virtio_net_hdr)

/* What a packet from a read of @res bytes in @buf must be, or not. */
static void check_packet(const uint8_t *buf, int32_t res, uint32_t room, bool tap,
			 uint32_t len, bool v6)
{
	const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)buf;
	uint8_t version;

	CHECK(res > (int32_t)VNET && (uint32_t)res < room && len == res - VNET);
	CHECK(!(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM));
	CHECK(vh->gso_type == VIRTIO_NET_HDR_GSO_NONE);
	if (tap)
		return;
	version = buf[VNET] >> 4;
	CHECK(v6 ? version == 6 && len >= 40 : version == 4 && len >= 20);
}

/* A read that is not a packet: for the reason it was given. */
static void check_refused(const uint8_t *buf, int32_t res, uint32_t room, bool tap,
			  enum ucm_tun_read ret)
{
	const struct virtio_net_hdr *vh = (const struct virtio_net_hdr *)buf;
	uint32_t version;

	if (res == -EAGAIN) {
		CHECK(ret == UCM_TUN_READ_DRAINED);
		return;
	}
	if (res <= (int32_t)VNET) {
		CHECK(ret == UCM_TUN_READ_ERR);
		return;
	}
	if ((uint32_t)res >= room) {
		CHECK(ret == UCM_TUN_READ_TOO_BIG);
		return;
	}
	if ((vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || vh->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
		CHECK(ret == UCM_TUN_READ_OFFLOAD);
		return;
	}
	/* All that is left to refuse: tun mode, not IP enough. */
	version = buf[VNET] >> 4;
	CHECK(!tap && ret == UCM_TUN_READ_NON_IP);
	CHECK(!(version == 4 && res - VNET >= 20) && !(version == 6 && res - VNET >= 40));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum ucm_tun_read ret;
	uint32_t room, len = 0;
	size_t took;
	int32_t res;
	bool tap, v6 = false;
	uint8_t *buf;

	if (size < 3)
		return 0;
	tap = data[0] & 1;
	room = (uint32_t)data[1] << 8 | data[2];
	took = size - 3 < room ? size - 3 : room;
	res = data[0] & 2 ? -EAGAIN : data[0] & 4 ? -EIO : (int32_t)took;
	buf = malloc(res > 0 ? (size_t)res : 0);
	CHECK(buf || res <= 0);
	if (res > 0)
		memcpy(buf, data + 3, res);

	ret = ucm_tun_read_check(buf, res, room, tap, &len, &v6);
	CHECK(ret >= UCM_TUN_READ_PACKET && ret <= UCM_TUN_READ_NON_IP);
	if (ret == UCM_TUN_READ_PACKET)
		check_packet(buf, res, room, tap, len, v6);
	else
		check_refused(buf, res, room, tap, ret);
	free(buf);
	return 0;
}
