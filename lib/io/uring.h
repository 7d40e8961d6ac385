/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The io layer's io_uring set-up, shared by the tun's write path (tun.c)
 * and its read path (tun_read.c). */
#ifndef UCM_IO_URING_H
#define UCM_IO_URING_H

#include <liburing.h>

/*
 * An io_uring of @entries for one worker's thread. SUBMIT_ALL: one bad SQE
 * does not strand the rest of the batch in the SQ; COOP_TASKRUN: the
 * thread that submits always waits for its completions itself. Not
 * SINGLE_ISSUER: an inline producer's sink is opened on the thread that
 * creates the producer, which need not be the one that submits (the
 * kernel would refuse that one's first batch, and a close on the
 * opener's); TASKRUN_FLAG: the kernel says when a completion
 * waits for this thread to enter it (ucm_uring_run_tasks()). Older kernels
 * refuse those flags: retry without.
 * Return: 0 or -errno (io_uring_queue_init_params()).
 */
int ucm_uring_init(struct io_uring *ring, unsigned int entries);

/*
 * With COOP_TASKRUN a completion from another context (a poll's wake-up)
 * is task work that runs only when this thread enters the kernel: one
 * that looks at its CQ without a system call (a spinning worker) would
 * not see it until its next one, or a tick. Enter when the kernel says
 * work waits (IORING_SQ_TASKRUN): a system call per such completion, none
 * otherwise.
 */
static inline void ucm_uring_run_tasks(struct io_uring *ring)
{
	if (IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_TASKRUN)
		io_uring_get_events(ring);
}

#endif /* UCM_IO_URING_H */
