/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The io layer's io_uring set-up, shared by the tun's write path (tun.c)
 * and its read path (tun_read.c). */
#ifndef UCM_IO_URING_H
#define UCM_IO_URING_H

#include <liburing.h>

/*
 * An io_uring of @entries for one worker's thread. SUBMIT_ALL: one bad SQE
 * does not strand the rest of the batch in the SQ; SINGLE_ISSUER and
 * COOP_TASKRUN: only this thread submits, and it always waits for its
 * completions itself. Older kernels refuse those flags: retry without.
 * Return: 0 or -errno (io_uring_queue_init_params()).
 */
int ucm_uring_init(struct io_uring *ring, unsigned int entries);

#endif /* UCM_IO_URING_H */
