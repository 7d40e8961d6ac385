// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench scale: each generator's first source port, so that the
 * workers get the flows evenly. No I/O: tests/unit/test-sports.c compiles
 * it in.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>

#include "scale.h"
#include "ucpumap/flowhash.h"

/* Windows of source ports scale_sports() looks at for each generator. */
#define SPORT_SCAN	8192

/* The worker of a generator's flow from @sport (l4-hash, as ucpumapd's
 * and the kernel row's programs pick it); addresses in network order. */
static int sport_worker(uint32_t saddr, uint32_t daddr, unsigned int sport,
			unsigned int dport, int nwk)
{
	return ucm_flow_hash_v4(saddr, daddr, htons(sport), htons(dport), IPPROTO_UDP, 0) % nwk;
}

/*
 * @ngen generators each send @flows flows, from @sport[i] up; the first at
 * @sport0 or later. With a few flows a queue, ports in a row leave the
 * spread to the hash's luck (16 flows over 4 workers: 6, 6, 3 and 1), and
 * a row then measures the busiest worker. For each generator: the first
 * window that keeps every worker within an even share so far, else the
 * most even of up to SPORT_SCAN. The ports to spare below 65536 are shared
 * out, so that the later generators have windows to choose from too: at
 * wide widths and many flows not quite even, yet never less even than
 * ports in a row: test-sports checks the busiest worker at every width.
 * @wflows[w] gets worker w's flows. 0, or -ERANGE when the runs do not
 * fit below port 65536.
 */
int scale_sports(uint32_t saddr, uint32_t daddr, unsigned int dport, int ngen, int nwk,
		 int flows, unsigned int sport0, int *wflows, unsigned int *sport)
{
	unsigned int base = sport0;
	int total = 0;

	if (ngen < 1 || ngen > SCALE_MAX_WIDTH || nwk < 1 || nwk > SCALE_MAX_WIDTH ||
	    flows < 1 || sport0 + (uint64_t)flows * ngen > 65536)
		return -ERANGE;
	for (int w = 0; w < nwk; w++)
		wflows[w] = 0;
	for (int i = 0; i < ngen; i++) {
		int even = (total + flows + nwk - 1) / nwk, best_max = INT32_MAX;
		/* the ports to spare, shared with the later generators */
		unsigned int room = (65536 - base - (unsigned int)flows * (ngen - i)) / (ngen - i);
		unsigned int best = base, end = base + (room < SPORT_SCAN ? room : SPORT_SCAN - 1);

		for (unsigned int b = base; b <= end; b++) {
			int add[SCALE_MAX_WIDTH] = { 0 }, most = 0;

			for (int f = 0; f < flows; f++) {
				int w = sport_worker(saddr, daddr, b + f, dport, nwk);

				if (wflows[w] + ++add[w] > most)
					most = wflows[w] + add[w];
			}
			if (most < best_max) {
				best_max = most;
				best = b;
			}
			if (most <= even)
				break;
		}
		for (int f = 0; f < flows; f++)
			wflows[sport_worker(saddr, daddr, best + f, dport, nwk)]++;
		total += flows;
		sport[i] = best;
		base = best + flows;
	}
	return 0;
}
