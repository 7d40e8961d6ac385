/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Internet checksum (RFC 1071) over bytes in network order: add up
 * 16-bit words with ucm_csum_add() (a pseudo-header, then a header, then a
 * payload), then ucm_csum_fold() gives the field's value, host order.
 */
#ifndef UCPUMAP_CSUM_H
#define UCPUMAP_CSUM_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t ucm_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* Fold the carries and complement: the value to store in the field. */
static inline uint16_t ucm_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif /* UCPUMAP_CSUM_H */
