// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_csum_add() against the definition (RFC 1071: the sum of big-endian
 * 16-bit words, the last odd byte padded with zero), for every length up to
 * 200 at even and odd start addresses, chained calls, and RFC 1071's own
 * example; ucm_csum_copy() likewise, and its copy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ucpumap/csum.h"
#include "utest.h"

static uint16_t ref_fold(const uint8_t *p, size_t len)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)p[i] << 8 | (i + 1 < len ? p[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int test_rfc1071_example(void)
{
	/* RFC 1071, 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2 */
	static const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

	UT_ASSERT(ucm_csum_fold(ucm_csum_add(0, b, 8)) == (uint16_t)~0xddf2, "got %04x",
		  ucm_csum_fold(ucm_csum_add(0, b, 8)));
	return 0;
}

static int test_against_definition(void)
{
	static uint8_t buf[256 + 1];
	uint32_t seed = 12345;

	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			seed = seed * 1103515245 + 12345;
			/* some all-ones runs: the carries' worst case */
			buf[i] = round % 4 == 0 ? 0xff : (uint8_t)(seed >> 16);
		}
		for (size_t off = 0; off < 2; off++)
			for (size_t len = 0; len <= 200; len++) {
				uint16_t want = ref_fold(buf + off, len);
				uint16_t got = ucm_csum_fold(ucm_csum_add(0, buf + off, len));

				UT_ASSERT(got == want, "len %zu off %zu: %04x, want %04x", len, off,
					  got, want);
			}
	}
	return 0;
}

/* A pseudo-header in pieces, then a header, then an odd payload. */
static int test_chained(void)
{
	uint8_t b[64];
	uint32_t sum = 0;
	size_t cuts[] = { 8, 2, 2, 8, 43 };
	size_t off = 0;

	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 37 + 11);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		sum = ucm_csum_add(sum, b + off, cuts[i]);
		off += cuts[i];
	}
	UT_ASSERT(ucm_csum_fold(sum) == ref_fold(b, off), "%04x, want %04x",
		  ucm_csum_fold(sum), ref_fold(b, off));
	return 0;
}

/* ucm_csum_copy(): the bytes copied exactly (nothing past them touched)
 * and the sum the definition gives, every length and both alignments. */
static int test_copy(void)
{
	static uint8_t src[256 + 1], dst[256 + 16];
	uint32_t seed = 777;

	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < sizeof(src); i++) {
			seed = seed * 1103515245 + 12345;
			src[i] = round % 4 == 0 ? 0xff : (uint8_t)(seed >> 16);
		}
		for (size_t off = 0; off < 2; off++)
			for (size_t len = 0; len <= 200; len++) {
				uint16_t want = ref_fold(src + off, len), got;

				memset(dst, 0xa5, sizeof(dst));
				got = ucm_csum_fold(ucm_csum_copy(dst + off, src + off, len, 0));
				UT_ASSERT(got == want, "len %zu off %zu: %04x, want %04x", len, off,
					  got, want);
				UT_ASSERT(!memcmp(dst + off, src + off, len) && dst[off + len] == 0xa5,
					  "len %zu off %zu: the copy is not the bytes", len, off);
			}
	}
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_rfc1071_example),
	UT_CASE(test_against_definition),
	UT_CASE(test_chained),
	UT_CASE(test_copy),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
