/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What every fuzz target shares: an oracle's check, which aborts (a crash
 * libFuzzer keeps the input of) when it does not hold. */
#ifndef UCM_FUZZ_H
#define UCM_FUZZ_H

#include <stdlib.h>

#define CHECK(cond)				\
	do {					\
		if (!(cond))			\
			abort();		\
	} while (0)

#endif /* UCM_FUZZ_H */
