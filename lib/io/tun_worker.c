// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A tun sink's workers: each one's state, opened on the worker's thread
 * (its CPU's memory), with its write ring and, for the way back's ops, its
 * read path; closed there. The write path that uses it is tun.c.
 */
#include <stdlib.h>
#include <string.h>
#include <liburing.h>

#include "io/tun_internal.h"
#include "io/uring.h"

int ucm_tun_ring_init(struct tun_wstate *st)
{
	int err = ucm_uring_init(&st->ring, UCM_TUN_BATCH_MAX);

	if (err)
		return err;
	/* A registered file spares the fd lookup per write; optional. */
	if (!io_uring_register_files(&st->ring, &st->fd, 1)) {
		st->sqe_fd = 0;
		st->sqe_flags = IOSQE_FIXED_FILE;
	} else {
		st->sqe_fd = st->fd;
		st->sqe_flags = 0;
	}
	st->ring_ok = true;
	return 0;
}

/*
 * The ring is torn down asynchronously by the kernel, and until then its
 * registered file keeps the queue open (and a device we created alive).
 * Unregistering first drops that reference now: nothing of ours is
 * waited for between batches (reap() heard every write, or gave the
 * ring's up with it: reap_give_up()).
 */
void ucm_tun_ring_exit(struct tun_wstate *st)
{
	if (st->sqe_flags & IOSQE_FIXED_FILE)
		io_uring_unregister_files(&st->ring);
	io_uring_queue_exit(&st->ring);
	st->ring_ok = false;
}

/* A worker's state; with @back (ucm_tun__sink_back()'s) and a way out
 * set, its read path too. One-way ops never read: a channel set for an
 * earlier cpumap may be gone by now. */
static int tun_open_ops(void *ctx, uint32_t w, bool back)
{
	struct ucm_tun *tun = ctx;
	struct tun_worker *wk;
	struct tun_wstate *st;
	int err;

	if (w >= UCM_TUN_MAX_WORKERS)
		return -EINVAL;
	wk = &tun->wk[w];
	/* O1: pairs with O2 in ucm_tun_close() (and its error path below): the
	 * last owner's teardown of this slot happens before we take it. */
	if (__atomic_exchange_n(&wk->open, 1, __ATOMIC_ACQ_REL)) {
		pr_warn("tun: %s: worker %u is already open: one cpumap per tun at a time\n",
			tun->name, w);
		return -EBUSY;
	}
	/* Allocated here, on the worker's CPU, so its memory is local. */
	st = aligned_alloc(UCM_CACHELINE,
			   (sizeof(*st) + UCM_CACHELINE - 1) & ~(size_t)(UCM_CACHELINE - 1));
	if (!st) {
		err = ucm_oom("a worker's tun state");
		goto err_open;
	}
	memset(st, 0, sizeof(*st));
	st->fd = tun->fds[w % tun->nqueues];
	st->coalesce = tun->flags & UCM_TUN_F_COALESCE;
	/* A tap's frames go whole: merged under one Ethernet header only. */
	st->gso_flags = tun->flags & UCM_TUN_F_TAP ? UCM_GSO_F_L2 : 0;
	/* What the kernel refused at create is never tried again. */
	st->gso_flags |= tun->gso_refused;
	for (int p = 0; p < 2; p++)
		st->gso_retry_at[p] = UINT64_MAX;
	if (!(tun->flags & UCM_TUN_F_NO_BATCH)) {
		err = ucm_tun_ring_init(st);
		if (err) {
			pr_warn("tun: %s: worker %u: no io_uring: %s (check the kernel.io_uring_disabled sysctl and RLIMIT_MEMLOCK, or write without batching: --no-batch, UCM_TUN_F_NO_BATCH)\n",
				tun->name, w, strerror(-err));
			goto err_free;
		}
	}
	if (back && wk->txq) {
		err = ucm_tun_back_open(tun, w, st);
		if (err)
			goto err_ring;
	}
	wk->st = st;
	return 0;

err_ring:
	if (st->ring_ok)
		ucm_tun_ring_exit(st);
err_free:
	free(st);
err_open:
	/* O2: pairs with O1 of the next open() and O3 in tun_dev.c */
	__atomic_store_n(&wk->open, 0, __ATOMIC_RELEASE);
	return err;
}

int ucm_tun_open(void *ctx, uint32_t w)
{
	return tun_open_ops(ctx, w, false);
}

int ucm_tun_open_back(void *ctx, uint32_t w)
{
	return tun_open_ops(ctx, w, true);
}

void ucm_tun_close(void *ctx, uint32_t w)
{
	struct ucm_tun *tun = ctx;
	struct tun_worker *wk = &tun->wk[w];
	struct tun_wstate *st = wk->st;

	if (!st)
		return;
	if (st->back)
		ucm_tun_back_close(tun, w, st);
	if (st->ring_ok)
		ucm_tun_ring_exit(st);
	free(st);
	wk->st = NULL;
	/* O2: pairs with O1 of the next open() and O3 in tun_dev.c */
	__atomic_store_n(&wk->open, 0, __ATOMIC_RELEASE);
}
