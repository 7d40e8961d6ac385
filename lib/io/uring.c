// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* io_uring set-up for the io layer (see uring.h). */
#include <errno.h>
#include <string.h>

#include "core/internal.h"
#include "io/uring.h"

/*
 * All a ring may do once enabled: what the io layer asks of it. The
 * kernel runs a ring's operations past seccomp, so a ring that could open
 * a file or connect a socket would step around an application's
 * allow-list (ucpumapd's).
 */
static const struct io_uring_restriction uring_allowed[] = {
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_WRITE },
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_WRITEV },
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READ },
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READV },
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_POLL_ADD },
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_ASYNC_CANCEL },
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_NOP },
	/* A timed wait without IORING_FEAT_EXT_ARG (Linux 5.10): liburing
	 * queues a timeout for it. */
	{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_TIMEOUT },
	{ .opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED, .sqe_flags = IOSQE_FIXED_FILE },
	{ .opcode = IORING_RESTRICTION_REGISTER_OP, .register_op = IORING_REGISTER_FILES },
	{ .opcode = IORING_RESTRICTION_REGISTER_OP, .register_op = IORING_UNREGISTER_FILES },
};

int ucm_uring_init(struct io_uring *ring, unsigned int entries)
{
	static const unsigned int setup[] = {
		IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |
			IORING_SETUP_TASKRUN_FLAG,
		IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
		0,
	};
	struct io_uring_params p;
	unsigned int i, r;
	int err = -EINVAL;

	/* Disabled until restricted (Linux 5.10); before, unrestricted. */
	for (r = 0; r < 2 && err == -EINVAL; r++)
		for (i = 0; i < ARRAY_SIZE(setup) && err == -EINVAL; i++) {
			memset(&p, 0, sizeof(p));
			p.flags = setup[i] | (r ? 0 : IORING_SETUP_R_DISABLED);
			err = io_uring_queue_init_params(entries, ring, &p);
		}
	if (err || !(p.flags & IORING_SETUP_R_DISABLED))
		return err;
	/* io_uring_register() itself: Debian's liburing 2.3 exports neither
	 * io_uring_register_restrictions() nor io_uring_enable_rings(). */
	err = io_uring_register(ring->ring_fd, IORING_REGISTER_RESTRICTIONS, uring_allowed,
				ARRAY_SIZE(uring_allowed));
	if (!err)
		err = io_uring_register(ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	if (err)
		io_uring_queue_exit(ring);
	return err;
}
