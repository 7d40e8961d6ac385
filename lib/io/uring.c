// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* io_uring set-up for the io layer (see uring.h). */
#include <errno.h>
#include <string.h>

#include "core/internal.h"
#include "io/uring.h"

int ucm_uring_init(struct io_uring *ring, unsigned int entries)
{
	static const unsigned int setup[] = {
		IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |
			IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SINGLE_ISSUER,
		IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |
			IORING_SETUP_SINGLE_ISSUER,
		0,
	};
	struct io_uring_params p;
	unsigned int i;
	int err = -EINVAL;

	for (i = 0; i < ARRAY_SIZE(setup) && err == -EINVAL; i++) {
		memset(&p, 0, sizeof(p));
		p.flags = setup[i];
		err = io_uring_queue_init_params(entries, ring, &p);
	}
	return err;
}
