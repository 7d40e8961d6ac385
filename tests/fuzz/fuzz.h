/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What every fuzz target shares: an oracle's check, which aborts (a crash
 * libFuzzer keeps the input of) when it does not hold. */
#ifndef UCM_FUZZ_H
#define UCM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define CHECK(cond)				\
	do {					\
		if (!(cond))			\
			abort();		\
	} while (0)

/* RFC 1071 over @n bytes at an even offset of the sum, a word at a time:
 * the oracles' own, not the library's csum.h. */
static inline uint64_t fuzz_sum16(uint64_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

/* The sum folded to 16 bits, not complemented. */
static inline uint16_t fuzz_fold16(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

#endif /* UCM_FUZZ_H */
