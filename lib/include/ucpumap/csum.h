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
#include <string.h>

/* A 64-bit sum of native-order words, folded to 16 bits and swapped to
 * network order. */
static inline uint32_t ucm_csum_acc(uint64_t acc)
{
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	acc = __builtin_bswap16((uint16_t)acc);
#endif
	return (uint32_t)acc;
}

/*
 * Add @len bytes at @data to @sum. Each call's bytes must start at an even
 * offset of the checksummed stream (an odd length only at its end). Four
 * bytes at a time in native order into 64 bits, folded and swapped to
 * network order at the end: the one's complement sum does not depend on
 * byte order (RFC 1071, 2.(B)), so this equals adding the 16-bit words.
 */
static inline uint32_t ucm_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = (const uint8_t *)data;
	uint64_t acc = 0;
	uint32_t w;
	uint16_t h;

	for (; len >= 4; p += 4, len -= 4) {
		memcpy(&w, p, 4);	/* unaligned: packets are 2-byte aligned */
		acc += w;
	}
	if (len >= 2) {
		memcpy(&h, p, 2);
		acc += h;
		p += 2;
		len -= 2;
	}
	if (len) {	/* the last byte is the high half of a zero-padded word */
		h = 0;
		memcpy(&h, p, 1);
		acc += h;
	}
	return sum + ucm_csum_acc(acc);
}

/*
 * Copy @len bytes from @src to @dst and add them to @sum, as
 * ucm_csum_add(@sum, @src, @len) would: one pass over the bytes, not a
 * copy and then a sum (the way back's segments, split.c). Eight bytes at a
 * time, their two halves added into 64 bits.
 */
static inline uint32_t ucm_csum_copy(void *dst, const void *src, size_t len, uint32_t sum)
{
	const uint8_t *s = (const uint8_t *)src;
	uint8_t *d = (uint8_t *)dst;
	uint64_t acc = 0, w;

	for (; len >= 8; s += 8, d += 8, len -= 8) {
		memcpy(&w, s, 8);
		memcpy(d, &w, 8);
		acc += (uint32_t)w;
		acc += w >> 32;
	}
	/* The last few bytes start at an even offset: the plain sum's. */
	memcpy(d, s, len);
	return ucm_csum_add(sum + ucm_csum_acc(acc), s, len);
}

/* Fold the carries and complement: the value to store in the field. */
static inline uint16_t ucm_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif /* UCPUMAP_CSUM_H */
