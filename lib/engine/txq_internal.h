/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A TX channel's ask for frames, for the library's own polling loops
 * (txq.c's contract: want, F1-F3). Not part of the public API. */
#ifndef UCM_TXQ_INTERNAL_H
#define UCM_TXQ_INTERNAL_H

#include <stdbool.h>

struct ucm_txq;

/* RX thread: whether the worker asked for frames (a spin ends for it, as
 * a sleep does: ucm_txq__sleep_begin()); relaxed, a hint. */
bool ucm_txq_wanted(struct ucm_txq *t);
/* Worker: ask for frames unless the ask is still standing: at most one
 * ask, and one kick, per lend of the RX thread's. */
void ucm_txq_ask(struct ucm_txq *t);

#endif
