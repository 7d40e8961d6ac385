// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_txq tests: the channel that lends a pool's frames to a worker for the
 * reverse path and takes them back filled. Each case ends with the pool's
 * audit: every frame where the books say, none lost, none twice. Debug
 * builds (the ones `make check` links) also check every frame move.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ucpumap/log.h"
#include "ucpumap/pool.h"
#include "ucpumap/txq.h"
#include "utest.h"

#define FRAMES	1024

static struct ucm_umem *mk_umem(uint32_t flags)
{
	struct ucm_umem_opts o = { .sz = sizeof(o), .frames_per_pool = FRAMES,
				   .npools = 1, .flags = flags };

	return ucm_umem__create(&o);
}

/* The end of every case: the channel's frames home (@want of them, or any
 * number when -1), the channel gone, every frame in the stack, cache or
 * ring and none held, the UMEM freed. */
static int finish(struct ucm_umem *u, struct ucm_pool *p, struct ucm_txq *t, int want)
{
	struct ucm_pool_audit a;
	uint32_t got = ucm_txq__reclaim(t);

	UT_ASSERT(want < 0 || got == (uint32_t)want, "reclaimed %u, want %d", got, want);
	UT_ASSERT(!ucm_txq__destroy(t), "destroy");
	ucm_pool__clear_owner(p);
	UT_ASSERT(!ucm_umem__audit(u, &a), "audit failed");
	UT_ASSERT(a.loc[UCM_LOC_APP] == 0, "%u frames still held", a.loc[UCM_LOC_APP]);
	UT_ASSERT(!ucm_umem__destroy(u, 100), "umem destroy");
	return 0;
}

/* Lend, take, fill, send, collect, and home as the owner would after TX
 * completion: every frame accounted for, the stats exact. */
static int test_round_trip(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_txq *t = ucm_txq__create(u, 64);
	uint64_t addrs[64], desc[64];
	struct ucm_txq_stats st;
	uint32_t n, k;
	int lent;

	UT_ASSERT(t, "create: %s", strerror(errno));
	UT_ASSERT(!ucm_pool__set_owner(p), "owner");
	lent = ucm_txq__lend(t, p);
	UT_ASSERT(lent == 64, "lent %d of 64", lent);
	UT_ASSERT(ucm_txq__lend(t, p) == 0, "a full free ring lends nothing");
	n = ucm_txq__take(t, addrs, 40);
	UT_ASSERT(n == 40, "took %u", n);
	for (uint32_t i = 0; i < n; i++) {
		char *f = ucm_umem__frame(ucm_umem__area(u), addrs[i]);

		f[256] = (char)i;	/* "the packet" */
		desc[i] = ucm_desc_make(addrs[i] + 256, 60);
	}
	UT_ASSERT(ucm_txq__send(t, desc, 30) == 30, "send");
	ucm_txq__drop(t, addrs + 30, 10);	/* unused */
	k = ucm_txq__collect(t, desc, 64);
	UT_ASSERT(k == 30, "collected %u", k);
	for (uint32_t i = 0; i < k; i++) {
		char *f = ucm_umem__frame(ucm_umem__area(u), ucm_desc_addr(desc[i]));

		UT_ASSERT(*f == (char)i && ucm_desc_len(desc[i]) == 60, "desc %u", i);
		addrs[i] = ucm_desc_addr(desc[i]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
	}
	UT_ASSERT(!ucm_umem__put_bulk(u, addrs, k), "home");	/* "completed" */
	ucm_txq__stats(t, &st);
	UT_ASSERT(st.lent == 64 && st.sent == 30 && st.collected == 30 &&
		  st.dropped == 10 && st.send_full == 0, "stats %llu %llu %llu %llu",
		  (unsigned long long)st.lent, (unsigned long long)st.sent,
		  (unsigned long long)st.collected, (unsigned long long)st.dropped);
	UT_ASSERT(ucm_txq__destroy(t) == -EBUSY, "destroy with 24 lent frames");
	return finish(u, p, t, 24);
}

/* Only the pool's owner may lend (its cache is owner-only). */
static int test_lend_needs_owner(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_txq *t = ucm_txq__create(u, 64);

	UT_ASSERT(ucm_txq__lend(t, ucm_umem__pool(u, 0)) == -EPERM, "non-owner lent");
	UT_ASSERT(ucm_txq__create(u, 100) == NULL && errno == EINVAL, "size 100 accepted");
	UT_ASSERT(!ucm_txq__destroy(t), "destroy");
	UT_ASSERT(!ucm_umem__destroy(u, 100), "umem destroy");
	return 0;
}

/* A full out ring (the RX thread behind): the rest go home unsent and are
 * counted, never lost. */
static int test_send_full(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_txq *t = ucm_txq__create(u, 16);
	uint64_t addrs[16], desc[16];
	struct ucm_txq_stats st;
	uint32_t n;

	ucm_pool__set_owner(p);
	for (int round = 0; round < 2; round++) {
		ucm_txq__lend(t, p);
		n = ucm_txq__take(t, addrs, 16);
		UT_ASSERT(n == 16, "took %u", n);
		for (uint32_t i = 0; i < n; i++)
			desc[i] = ucm_desc_make(addrs[i] + 256, 64);
		n = ucm_txq__send(t, desc, 16);
		UT_ASSERT(n == (round ? 0 : 16), "round %d: sent %u", round, n);
	}
	ucm_txq__stats(t, &st);
	UT_ASSERT(st.sent == 16 && st.send_full == 16 && st.dropped == 16, "stats");
	return finish(u, p, t, 16);
}

/* The owner and a worker run side by side for a while; at the end, after
 * reclaim, every frame is home and each filled frame came back intact. */
struct duo {
	struct ucm_umem *u;
	struct ucm_txq *t;
	atomic_bool stop;
	uint64_t sent, bad;
};

static void *worker(void *arg)
{
	struct duo *d = arg;
	uint64_t addrs[32], desc[32];
	uint32_t n, k, seq = 0;

	while (!atomic_load(&d->stop)) {
		n = ucm_txq__take(d->t, addrs, 32);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t *f = ucm_umem__frame(ucm_umem__area(d->u), addrs[i] + 256);

			*f = seq;
			desc[i] = ucm_desc_make(addrs[i] + 256, 64 + (seq++ & 63));
		}
		k = ucm_txq__send(d->t, desc, n);
		d->sent += k;
		seq -= n - k;	/* the unsent ones (at the end) went home */
	}
	return NULL;
}

static int test_threads(void)
{
	struct duo d = { .u = mk_umem(0) };
	struct ucm_pool *p = ucm_umem__pool(d.u, 0);
	uint64_t desc[64], base[64], got = 0, deadline = ut_ms_now() + 300;
	uint32_t expect = 0, fsz;
	pthread_t th;

	d.t = ucm_txq__create(d.u, 64);
	fsz = ucm_umem__frame_size(d.u);
	ucm_pool__set_owner(p);
	pthread_create(&th, NULL, worker, &d);
	while (ut_ms_now() < deadline) {
		uint32_t n;

		ucm_txq__lend(d.t, p);
		n = ucm_txq__collect(d.t, desc, 64);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t *f = ucm_umem__frame(ucm_umem__area(d.u), ucm_desc_addr(desc[i]));

			if (*f != expect || ucm_desc_len(desc[i]) != 64 + (expect & 63))
				d.bad++;
			expect++;
			base[i] = ucm_desc_addr(desc[i]) & ~(uint64_t)(fsz - 1);
		}
		ucm_umem__put_bulk(d.u, base, n);	/* as TX completion */
		got += n;
	}
	atomic_store(&d.stop, true);
	pthread_join(th, NULL);
	{
		uint32_t n;

		while ((n = ucm_txq__collect(d.t, desc, 64))) {
			for (uint32_t i = 0; i < n; i++)
				base[i] = ucm_desc_addr(desc[i]) & ~(uint64_t)(fsz - 1);
			ucm_umem__put_bulk(d.u, base, n);
			got += n;
		}
	}
	UT_ASSERT(got == d.sent, "collected %llu, sent %llu", (unsigned long long)got,
		  (unsigned long long)d.sent);
	UT_ASSERT(!d.bad, "%llu frames out of order or changed", (unsigned long long)d.bad);
	UT_ASSERT(got > 1000, "only %llu frames went round", (unsigned long long)got);
	return finish(d.u, p, d.t, -1);
}

static const struct ut_case cases[] = {
	UT_CASE(test_round_trip),
	UT_CASE(test_lend_needs_owner),
	UT_CASE(test_send_full),
	UT_CASE(test_threads),
	{}
};

int main(int argc, char **argv)
{
	ucm_set_print(NULL);
	return ut_main(argc, argv, cases);
}
