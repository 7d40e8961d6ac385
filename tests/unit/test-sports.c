// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench scale's source ports (apps/ucpumap-bench/scale_sports.c,
 * compiled in here: the bench's files are not a library): the workers get
 * the flows evenly, the counts are the hash's, and every run of ports is
 * its own and below 65536, at the widest width and most flows too.
 */
#include <arpa/inet.h>

#include "../../apps/ucpumap-bench/scale_sports.c"
#include "utest.h"

#define SA	0x0a4d0001u	/* 10.77.0.1, the bench's generator */
#define DA	0x0a4d0002u
#define DPORT	9

/* The runs' ports, their order and bounds, and each worker's flows
 * counted again here. */
static int check_runs(int ngen, int nwk, int flows, unsigned int sport0,
		      const int *wflows, const unsigned int *sport)
{
	int cnt[SCALE_MAX_WIDTH] = { 0 }, sum = 0;

	for (int i = 0; i < ngen; i++) {
		UT_ASSERT(sport[i] >= (i ? sport[i - 1] + flows : sport0),
			  "run %d at %u overlaps or comes before", i, sport[i]);
		UT_ASSERT(sport[i] + flows - 1 <= 65535, "run %d ends at port %u",
			  i, sport[i] + flows - 1);
		for (int f = 0; f < flows; f++)
			cnt[ucm_flow_hash_v4(htonl(SA), htonl(DA), htons(sport[i] + f), htons(DPORT),
					     IPPROTO_UDP, 0) % nwk]++;
	}
	for (int w = 0; w < nwk; w++) {
		UT_ASSERT(cnt[w] == wflows[w], "worker %d: %d flows, said %d", w, cnt[w], wflows[w]);
		sum += wflows[w];
	}
	UT_ASSERT(sum == ngen * flows, "%d flows in all, not %d", sum, ngen * flows);
	return 0;
}

/* The busiest worker's flows, and with ports in a row from @sport0. */
static int busiest(int nwk, const int *wflows, int ngen, int flows, unsigned int sport0,
		   int *in_a_row)
{
	int cnt[SCALE_MAX_WIDTH] = { 0 }, hi = 0, row = 0;

	for (int f = 0; f < ngen * flows; f++)
		cnt[ucm_flow_hash_v4(htonl(SA), htonl(DA), htons(sport0 + f), htons(DPORT),
				     IPPROTO_UDP, 0) % nwk]++;
	for (int w = 0; w < nwk; w++) {
		hi = wflows[w] > hi ? wflows[w] : hi;
		row = cnt[w] > row ? cnt[w] : row;
	}
	*in_a_row = row;
	return hi;
}

/* Every width up to 16 and flows from the coalesce rows' 4 a queue to
 * --flows' most: the busiest worker has no more flows than with ports in a
 * row, and with 4 a queue exactly its even share (ports in a row: 16 flows
 * over 4 workers give one 6). */
static int test_even(void)
{
	static const int flows[] = { 4, 64, 256, 2048 };
	int wflows[SCALE_MAX_WIDTH], hi, row;
	unsigned int sport[SCALE_MAX_WIDTH];

	for (int w = 1; w <= SCALE_MAX_WIDTH; w *= 2) {
		for (size_t k = 0; k < sizeof(flows) / sizeof(flows[0]); k++) {
			UT_ASSERT(!scale_sports(htonl(SA), htonl(DA), DPORT, w, w, flows[k], 10000,
						wflows, sport), "width %d", w);
			if (check_runs(w, w, flows[k], 10000, wflows, sport))
				return -1;
			hi = busiest(w, wflows, w, flows[k], 10000, &row);
			UT_ASSERT(hi <= row, "width %d, %d flows a queue: the busiest worker %d, "
				  "in a row %d", w, flows[k], hi, row);
			UT_ASSERT(flows[k] > 4 || hi == flows[k], "width %d, 4 flows a queue: "
				  "the busiest worker has %d", w, hi);
		}
	}
	/* fan-in: every flow to the one worker */
	UT_ASSERT(!scale_sports(htonl(SA), htonl(DA), DPORT, 4, 1, 64, 10000, wflows, sport),
		  "fan-in");
	UT_ASSERT(wflows[0] == 256, "fan-in: %d", wflows[0]);
	return check_runs(4, 1, 64, 10000, wflows, sport);
}

/* Width 16 with --flows' most: the runs just fit, from 10000 and from the
 * last start that leaves them room. */
static int test_wide(void)
{
	int wflows[SCALE_MAX_WIDTH];
	unsigned int sport[SCALE_MAX_WIDTH], tight = 65536 - 16 * 2048;

	UT_ASSERT(!scale_sports(htonl(SA), htonl(DA), DPORT, 16, 16, 2048, 10000, wflows, sport),
		  "from 10000");
	if (check_runs(16, 16, 2048, 10000, wflows, sport))
		return -1;
	UT_ASSERT(!scale_sports(htonl(SA), htonl(DA), DPORT, 16, 16, 2048, tight, wflows, sport),
		  "from %u", tight);
	if (check_runs(16, 16, 2048, tight, wflows, sport))
		return -1;
	UT_ASSERT(sport[0] == tight && sport[15] == 65536 - 2048,
		  "no room to move, yet %u .. %u", sport[0], sport[15]);
	return 0;
}

static int test_range(void)
{
	int wflows[SCALE_MAX_WIDTH];
	unsigned int sport[SCALE_MAX_WIDTH];

	UT_ASSERT(scale_sports(htonl(SA), htonl(DA), DPORT, 16, 16, 2048, 65536 - 16 * 2048 + 1,
			       wflows, sport) == -ERANGE, "a port past 65535");
	UT_ASSERT(scale_sports(htonl(SA), htonl(DA), DPORT, 0, 1, 1, 10000, wflows, sport) ==
		  -ERANGE, "no generator");
	UT_ASSERT(scale_sports(htonl(SA), htonl(DA), DPORT, 1, SCALE_MAX_WIDTH + 1, 1, 10000,
			       wflows, sport) == -ERANGE, "too many workers");
	UT_ASSERT(scale_sports(htonl(SA), htonl(DA), DPORT, 1, 1, 0, 10000, wflows, sport) ==
		  -ERANGE, "no flow");
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_even),
	UT_CASE(test_wide),
	UT_CASE(test_range),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
