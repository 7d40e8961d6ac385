// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_txq tests: the channel that lends a pool's frames to a worker for the
 * way back and takes them back filled. Each case ends with the pool's
 * audit: every frame where the books say, none lost, none twice. Debug
 * builds (the ones `make check` links) also check every frame move.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/chain.h"
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
	UT_ASSERT(!ucm_umem__audit(u, &a, sizeof(a)), "audit failed");
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
	ucm_txq__stats(t, &st, sizeof(st));
	UT_ASSERT(st.lent == 64 && st.sent == 30 && st.collected == 30 &&
		  st.dropped == 10 && st.send_full == 0, "stats %llu %llu %llu %llu",
		  (unsigned long long)st.lent, (unsigned long long)st.sent,
		  (unsigned long long)st.collected, (unsigned long long)st.dropped);
	UT_ASSERT(ucm_txq__destroy(t) == -EBUSY, "destroy with 24 lent frames");
	return finish(u, p, t, 24);
}

/* The library's last message, for a case that checks what it said. */
static char last_said[256];

static int keep_last(enum ucm_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	vsnprintf(last_said, sizeof(last_said), fmt, ap);
	return 0;
}

/* Only the pool's owner may lend (its cache is owner-only). */
static int test_lend_needs_owner(void)
{
	struct ucm_umem *u = mk_umem(0), *u2;
	struct ucm_txq *t = ucm_txq__create(u, 64), *t2;
	struct ucm_pool *p2;

	UT_ASSERT(ucm_txq__lend(t, ucm_umem__pool(u, 0)) == -EPERM, "non-owner lent");
	/* Another UMEM's pool: its frames are not the channel's. */
	u2 = mk_umem(0);
	p2 = ucm_umem__pool(u2, 0);
	UT_ASSERT(!ucm_pool__set_owner(p2), "owner");
	UT_ASSERT(ucm_txq__lend(t, p2) == -EINVAL, "another UMEM's pool lent");
	UT_ASSERT(ucm_txq__available(t) == 0, "frames in the free ring");
	ucm_pool__clear_owner(p2);
	UT_ASSERT(!ucm_umem__destroy(u2, 100), "the other UMEM destroy");
	UT_ASSERT(ucm_txq__create(u, 100) == NULL && errno == EINVAL, "size 100 accepted");
	ucm_set_print(keep_last);
	t2 = ucm_txq__create(NULL, 64);
	ucm_set_print(NULL);
	UT_ASSERT(!t2 && errno == EINVAL && strstr(last_said, "no UMEM"),
		  "no UMEM: %s, said '%s'", t2 ? "accepted" : strerror(errno), last_said);
	UT_ASSERT(!ucm_txq__destroy(t), "destroy");
	UT_ASSERT(!ucm_umem__destroy(u, 100), "umem destroy");
	return 0;
}

/* A channel that only sends (the verdict's) is lent nothing: its free
 * ring stays empty, and what it sends comes out as ever. */
static int test_no_lend(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_txq *t = ucm_txq__create(u, 64);
	struct ucm_txq_stats st;
	uint64_t a, d;

	UT_ASSERT(t, "create: %s", strerror(errno));
	UT_ASSERT(!ucm_pool__set_owner(p), "owner");
	ucm_txq__set_lend(t, false);
	UT_ASSERT(ucm_txq__lend(t, p) == 0, "lent with lending off");
	UT_ASSERT(ucm_txq__available(t) == 0, "frames in the free ring");
	/* A received frame, sent back out. */
	UT_ASSERT(ucm_pool__alloc_bulk(p, &a, 1) == 1, "alloc");
	d = ucm_desc_make(a + 256, 60);
	UT_ASSERT(ucm_txq__send(t, &d, 1) == 1, "send");
	UT_ASSERT(ucm_txq__collect(t, &d, 1) == 1 && ucm_desc_addr(d) == a + 256, "collect");
	UT_ASSERT(!ucm_umem__put_bulk(u, &a, 1), "home");
	ucm_txq__set_lend(t, true);
	UT_ASSERT(ucm_txq__lend(t, p) == 64, "lending on again");
	ucm_txq__stats(t, &st, sizeof(st));
	UT_ASSERT(st.lent == 64 && st.sent == 1 && st.collected == 1, "stats %llu %llu %llu",
		  (unsigned long long)st.lent, (unsigned long long)st.sent,
		  (unsigned long long)st.collected);
	return finish(u, p, t, 64);
}

static long long efd_count(int fd);

/* A worker short of frames asks: an awake RX thread's re-check sees the
 * ask (no sleep until a lend answers it, even an empty one: no spin on
 * a dry pool), and a sleeping one is woken once. */
static int test_want(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_txq *t = ucm_txq__create(u, 64);
	uint64_t hold[FRAMES];
	int fd = ucm_txq__wake_fd(t), n;

	UT_ASSERT(!ucm_pool__set_owner(p), "owner");
	/* The RX thread awake: the ask comes before its W1. */
	ucm_txq__want(t);
	UT_ASSERT(efd_count(fd) == 0, "awake, yet written: %lld", efd_count(fd));
	UT_ASSERT(!ucm_txq__sleep_begin(t), "slept with an ask waiting");
	ucm_txq__sleep_end(t);
	UT_ASSERT(ucm_txq__lend(t, p) == 64, "lend");
	UT_ASSERT(ucm_txq__sleep_begin(t), "the lend did not answer the ask");
	/* Asleep: the ask writes the eventfd, once. */
	ucm_txq__want(t);
	ucm_txq__want(t);
	UT_ASSERT(efd_count(fd) == 1, "asleep: count %lld", efd_count(fd));
	ucm_txq__sleep_end(t);
	UT_ASSERT(efd_count(fd) == 0, "left readable: %lld", efd_count(fd));
	/* A dry pool: the lend brings nothing but answers the ask. */
	UT_ASSERT(ucm_txq__take(t, hold, 64) == 64, "take");
	n = ucm_pool__alloc_bulk(p, hold + 64, FRAMES - 64);
	UT_ASSERT(n == FRAMES - 64, "drained %d", n);
	ucm_txq__want(t);
	UT_ASSERT(ucm_txq__lend(t, p) == 0, "lent from a dry pool");
	UT_ASSERT(ucm_txq__sleep_begin(t), "an answered ask kept the RX thread up");
	ucm_txq__sleep_end(t);
	ucm_txq__drop(t, hold, 64);
	UT_ASSERT(!ucm_umem__put_bulk(u, hold + 64, FRAMES - 64), "home");
	return finish(u, p, t, 0);
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
	ucm_txq__stats(t, &st, sizeof(st));
	UT_ASSERT(st.sent == 16 && st.send_full == 16 && st.dropped == 16, "stats");
	return finish(u, p, t, 16);
}

/* Packets of several frames, as the read path lays them out from the
 * frames it took: a full out ring sends every frame of each home, and so
 * does the reclaim of those still in it. */
static int test_chain_home(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_txq *t = ucm_txq__create(u, 2);
	uint64_t a[9], desc[3];
	struct ucm_txq_stats st;
	struct ucm_pool_audit au;

	UT_ASSERT(t, "create: %s", strerror(errno));
	UT_ASSERT(ucm_txq__max_frames(t) == 1, "packets of several at create");
	ucm_set_print(keep_last);
	last_said[0] = 0;
	UT_ASSERT(ucm_txq__set_max_frames(t, UCM_CHAIN_MAX + 1) == -EINVAL &&
		  ucm_txq__set_max_frames(t, 0) == -EINVAL, "a bad count taken");
	ucm_set_print(NULL);
	UT_ASSERT(strstr(last_said, "0 frames a packet: give between 1 and"), "said '%s'", last_said);
	UT_ASSERT(!ucm_txq__set_max_frames(t, 3) && ucm_txq__max_frames(t) == 3, "set");
	ucm_pool__set_owner(p);
	UT_ASSERT(ucm_pool__alloc_bulk(p, a, 9) == 9, "alloc");
	for (uint32_t i = 0; i < 3; i++) {	/* three packets of three frames */
		struct ucm_chain *c = ucm_chain_of(ucm_umem__area(u), a[3 * i]);

		c->nfrag = 2;
		c->head_len = 100;
		for (uint32_t j = 0; j < 2; j++) {
			c->frag[j] = ucm_desc_make(a[3 * i + 1 + j] + 16, 50);
			ucm_frame_move(u, a[3 * i + 1 + j], UCM_LOC_APP, UCM_LOC_CHAIN);
		}
		desc[i] = ucm_desc_make(a[3 * i] + 242, 200) | UCM_DESC_CHAIN;
	}
	desc[2] |= UCM_TXQ_DESC_CSUM;	/* its frame found all the same */
	UT_ASSERT(ucm_txq__send(t, desc + 1, 2) == 2, "send");
	UT_ASSERT(ucm_txq__send(t, desc, 1) == 0, "a full ring took one");
	ucm_txq__stats(t, &st, sizeof(st));
	UT_ASSERT(st.sent == 2 && st.send_full == 1 && st.dropped == 3,
		  "sent %llu full %llu dropped %llu", (unsigned long long)st.sent,
		  (unsigned long long)st.send_full, (unsigned long long)st.dropped);
	UT_ASSERT(!ucm_umem__audit(u, &au, sizeof(au)) && au.loc[UCM_LOC_APP] == 2 &&
		  au.chain == 4, "app %u chain %u", au.loc[UCM_LOC_APP], au.chain);
	return finish(u, p, t, 6);
}

/* The owner and a worker run side by side for a while; at the end, after
 * reclaim, every frame is home and each filled frame came back intact.
 * "A while" is at least THREADS_MS and THREADS_FRAMES frames round: on a
 * quiet machine millions go round in THREADS_MS, on a loaded one the two
 * threads may share a CPU and a few hundred do. THREADS_SAFETY_MS only
 * ends a channel that stopped moving. */
#define THREADS_MS		300
#define THREADS_FRAMES		(16 * FRAMES)	/* each frame 16 times round */
#define THREADS_SAFETY_MS	60000

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
	uint64_t desc[64], base[64], got = 0, start = ut_ms_now(), now = start;
	uint32_t expect = 0, fsz;
	pthread_t th;

	d.t = ucm_txq__create(d.u, 64);
	fsz = ucm_umem__frame_size(d.u);
	ucm_pool__set_owner(p);
	pthread_create(&th, NULL, worker, &d);
	while ((got < THREADS_FRAMES || now - start < THREADS_MS) &&
	       now - start < THREADS_SAFETY_MS) {
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
		now = ut_ms_now();
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
	UT_ASSERT(got >= THREADS_FRAMES, "only %llu frames went round in %llu ms",
		  (unsigned long long)got, (unsigned long long)(now - start));
	return finish(d.u, p, d.t, -1);
}

/* The eventfd's counter, without reading it (which would take the wake). */
static long long efd_count(int fd)
{
	char path[64], line[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "eventfd-count: %llx", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Back home as TX completion would bring them. */
static void complete(struct ucm_umem *u, uint64_t *desc, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		desc[i] = ucm_desc_addr(desc[i]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
	ucm_umem__put_bulk(u, desc, n);
}

/* The wake's system calls: a send writes the eventfd only when the RX
 * thread announced a sleep and no send has signalled it yet; sleep_end
 * takes what was written, so the fd is never left readable. */
static int test_wake_once(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_txq *t = ucm_txq__create(u, 64);
	uint64_t addrs[8], desc[8];
	int fd = ucm_txq__wake_fd(t);
	uint32_t n;

	UT_ASSERT(!ucm_pool__set_owner(p), "owner");
	UT_ASSERT(ucm_txq__lend(t, p) == 64, "lend");
	UT_ASSERT(ucm_txq__take(t, addrs, 8) == 8, "take");
	for (uint32_t i = 0; i < 8; i++)
		desc[i] = ucm_desc_make(addrs[i] + 256, 60);
	UT_ASSERT(efd_count(fd) == 0, "count %lld at start", efd_count(fd));

	UT_ASSERT(ucm_txq__send(t, desc, 1) == 1, "send");
	UT_ASSERT(efd_count(fd) == 0, "awake, yet written: %lld", efd_count(fd));
	UT_ASSERT(!ucm_txq__sleep_begin(t), "slept with a descriptor waiting");
	ucm_txq__sleep_end(t);
	UT_ASSERT(ucm_txq__collect(t, desc, 8) == 1, "collect");
	complete(u, desc, 1);

	UT_ASSERT(ucm_txq__sleep_begin(t), "no sleep on an empty channel");
	for (uint32_t i = 1; i < 4; i++) {
		desc[0] = ucm_desc_make(addrs[i] + 256, 60);
		UT_ASSERT(ucm_txq__send(t, desc, 1) == 1, "send %u", i);
		UT_ASSERT(efd_count(fd) == 1, "send %u while asleep: count %lld", i,
			  efd_count(fd));
	}
	ucm_txq__sleep_end(t);
	UT_ASSERT(efd_count(fd) == 0, "the wake is still there: %lld", efd_count(fd));
	n = ucm_txq__collect(t, desc, 8);
	UT_ASSERT(n == 3, "collected %u of 3", n);
	complete(u, desc, n);

	/* A sleep nobody signalled; a send after it, awake again. */
	UT_ASSERT(ucm_txq__sleep_begin(t), "no sleep on an empty channel");
	ucm_txq__sleep_end(t);
	desc[0] = ucm_desc_make(addrs[4] + 256, 60);
	UT_ASSERT(ucm_txq__send(t, desc, 1) == 1, "send");
	UT_ASSERT(efd_count(fd) == 0, "awake, yet written: %lld", efd_count(fd));
	UT_ASSERT(ucm_txq__collect(t, desc, 8) == 1, "collect");
	complete(u, desc, 1);
	ucm_txq__drop(t, addrs + 5, 3);
	return finish(u, p, t, 56);
}

/*
 * Back-pressure: a full out ring has no room; the worker's wait for room
 * is signalled once by the collect that frees some (the eventfd written
 * only when it announced a wait), read back by room_wait_end; a wait
 * announced with room already there is no wait; collects with nobody
 * waiting write nothing.
 */
static int test_room_wait(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_txq *t = ucm_txq__create(u, 16);
	uint64_t addrs[16], desc[16];
	int fd = ucm_txq__room_fd(t);
	uint32_t n;

	UT_ASSERT(!ucm_pool__set_owner(p), "owner");
	UT_ASSERT(ucm_txq__room(t) == 16, "room %u in an empty channel of 16", ucm_txq__room(t));
	UT_ASSERT(ucm_txq__lend(t, p) == 16, "lend");
	UT_ASSERT(ucm_txq__take(t, addrs, 16) == 16, "take");
	for (uint32_t i = 0; i < 16; i++)
		desc[i] = ucm_desc_make(addrs[i] + 256, 60);
	UT_ASSERT(ucm_txq__send(t, desc, 16) == 16, "send 16");
	UT_ASSERT(ucm_txq__room(t) == 0, "room %u in a full channel", ucm_txq__room(t));

	/* Nobody waits: a collect writes nothing. */
	UT_ASSERT(ucm_txq__collect(t, desc, 2) == 2, "collect");
	complete(u, desc, 2);
	UT_ASSERT(efd_count(fd) == 0, "written with nobody waiting: %lld", efd_count(fd));
	UT_ASSERT(ucm_txq__room(t) == 2, "room %u after 2 collected", ucm_txq__room(t));
	/* A wait with room: no wait. */
	UT_ASSERT(!ucm_txq__room_wait_begin(t), "waited with room");
	ucm_txq__room_wait_end(t);

	/* Full again, a wait announced: the next collect writes once. */
	UT_ASSERT(ucm_txq__lend(t, p) > 0, "lend");
	UT_ASSERT(ucm_txq__take(t, addrs, 2) == 2, "take 2");
	desc[0] = ucm_desc_make(addrs[0] + 256, 60);
	desc[1] = ucm_desc_make(addrs[1] + 256, 60);
	UT_ASSERT(ucm_txq__send(t, desc, 2) == 2, "send 2");
	UT_ASSERT(ucm_txq__room_wait_begin(t), "no wait in a full channel");
	UT_ASSERT(ucm_txq__collect(t, desc, 4) == 4, "collect 4");
	complete(u, desc, 4);
	{
		struct pollfd pf = { .fd = fd, .events = POLLIN };

		UT_ASSERT(poll(&pf, 1, 0) == 1, "the room fd is not readable after a collect");
	}
	UT_ASSERT(ucm_txq__collect(t, desc, 4) == 4, "collect 4 more");
	complete(u, desc, 4);
	UT_ASSERT(efd_count(fd) == 1, "count %lld: one write per wait", efd_count(fd));
	ucm_txq__room_wait_end(t);
	UT_ASSERT(efd_count(fd) == 0, "the wake is still there: %lld", efd_count(fd));
	n = ucm_txq__collect(t, desc, 16);
	UT_ASSERT(n == 8, "collected %u of the last 8", n);
	complete(u, desc, n);
	UT_ASSERT(efd_count(fd) == 0, "written after the wait: %lld", efd_count(fd));
	return finish(u, p, t, -1);
}

/*
 * Ping-pong: the worker sends a burst only once the previous one is
 * collected, after a random pause, so the RX thread is falling asleep,
 * announcing, re-checking or asleep when it comes. A lost wake-up is a
 * poll that times out although a send had returned (its kick done) well
 * before: a worker that was merely not scheduled is not one.
 */
#define PINGPONG_ROUNDS	1000

struct pingpong {
	struct ucm_txq *t;
	atomic_uint sent, collected;
	atomic_uint done;		/* sent, counted after send() returned */
	atomic_ullong done_ms;		/* when, stored before done */
	atomic_bool last, stop;
};

static void *pingpong_worker(void *arg)
{
	struct pingpong *pp = arg;
	uint64_t addrs[4], desc[4];
	unsigned int seed = 1;

	for (uint32_t r = 0; r < PINGPONG_ROUNDS && !atomic_load(&pp->stop); r++) {
		uint32_t want = 1 + rand_r(&seed) % 4, n = 0;

		while (atomic_load(&pp->collected) != atomic_load(&pp->sent) &&
		       !atomic_load(&pp->stop))
			sched_yield();
		usleep(rand_r(&seed) % 200);
		while (n < want && !atomic_load(&pp->stop))
			n += ucm_txq__take(pp->t, addrs + n, want - n);
		for (uint32_t i = 0; i < n; i++)
			desc[i] = ucm_desc_make(addrs[i] + 256, 60);
		/* Counted first: the RX thread may collect them at once. */
		if (r == PINGPONG_ROUNDS - 1)
			atomic_store(&pp->last, true);
		atomic_fetch_add(&pp->sent, n);
		if (ucm_txq__send(pp->t, desc, n) != n)
			return (void *)1;	/* the out ring is never full here */
		atomic_store(&pp->done_ms, ut_ms_now());
		atomic_store(&pp->done, atomic_load(&pp->sent));
	}
	return NULL;
}

static int test_wake_threads(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct pingpong pp = { .t = ucm_txq__create(u, 64) };
	uint32_t sleeps = 0, lost = 0;
	bool finished = false;
	uint64_t deadline = ut_ms_now() + 60000;
	uint64_t desc[64];
	pthread_t th;
	void *wret;

	UT_ASSERT(!ucm_pool__set_owner(p), "owner");
	ucm_txq__lend(pp.t, p);
	pthread_create(&th, NULL, pingpong_worker, &pp);
	while (!lost && ut_ms_now() < deadline) {
		struct pollfd pfd = { .fd = ucm_txq__wake_fd(pp.t), .events = POLLIN };
		uint32_t n;

		ucm_txq__lend(pp.t, p);
		n = ucm_txq__collect(pp.t, desc, 64);
		if (n) {
			complete(u, desc, n);
			atomic_fetch_add(&pp.collected, n);
			continue;
		}
		if (atomic_load(&pp.last) &&
		    atomic_load(&pp.collected) == atomic_load(&pp.sent)) {
			finished = true;	/* the last burst is in */
			break;
		}
		if (ucm_txq__sleep_begin(pp.t)) {
			sleeps++;
			/* done first: done_ms is then its send's or later. */
			if (poll(&pfd, 1, 1000) == 0 &&
			    atomic_load(&pp.done) > atomic_load(&pp.collected) &&
			    atomic_load(&pp.done_ms) + 100 < ut_ms_now())
				lost++;
		}
		ucm_txq__sleep_end(pp.t);
	}
	atomic_store(&pp.stop, true);
	pthread_join(th, &wret);
	UT_ASSERT(!wret, "worker failed");
	UT_ASSERT(!lost, "a sleep of 1 s with a send done waiting (lost wake-up)");
	UT_ASSERT(finished, "not done in 60 s");
	UT_ASSERT(sleeps > 0, "the RX thread never slept");
	/* A write that landed after the last sleep's end is still owed: the
	 * next sleep's end takes it, and the fd is quiet again. */
	UT_ASSERT(ucm_txq__sleep_begin(pp.t), "no sleep on an empty channel");
	ucm_txq__sleep_end(pp.t);
	UT_ASSERT(efd_count(ucm_txq__wake_fd(pp.t)) == 0, "the fd stays readable: %lld",
		  efd_count(ucm_txq__wake_fd(pp.t)));
	return finish(u, p, pp.t, -1);
}

/*
 * The ask's ping-pong: the worker empties the free ring, asks for frames
 * after a random pause and waits for them, so the ask finds the RX thread
 * lending, announcing, re-checking or asleep. A lost ask is a poll that
 * times out although an ask was made well before and not yet answered.
 */
struct askpong {
	struct ucm_txq *t;
	atomic_uint asked, answered;	/* rounds */
	atomic_ullong asked_ms;		/* stored before asked */
	atomic_bool stop;
};

static void *askpong_worker(void *arg)
{
	struct askpong *ap = arg;
	uint64_t addrs[64];
	unsigned int seed = 2;

	for (uint32_t r = 1; r <= PINGPONG_ROUNDS && !atomic_load(&ap->stop); r++) {
		usleep(rand_r(&seed) % 200);
		ucm_txq__drop(ap->t, addrs, ucm_txq__take(ap->t, addrs, 64));
		atomic_store(&ap->asked_ms, ut_ms_now());
		atomic_store(&ap->asked, r);
		ucm_txq__want(ap->t);
		while (!ucm_txq__available(ap->t) && !atomic_load(&ap->stop))
			sched_yield();
		atomic_store(&ap->answered, r);
	}
	return NULL;
}

static int test_want_threads(void)
{
	struct ucm_umem *u = mk_umem(0);
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct askpong ap = { .t = ucm_txq__create(u, 64) };
	uint64_t deadline = ut_ms_now() + 60000;
	uint32_t sleeps = 0, lost = 0;
	pthread_t th;

	UT_ASSERT(!ucm_pool__set_owner(p), "owner");
	pthread_create(&th, NULL, askpong_worker, &ap);
	while (!lost && ut_ms_now() < deadline) {
		struct pollfd pfd = { .fd = ucm_txq__wake_fd(ap.t), .events = POLLIN };

		if (ucm_txq__lend(ap.t, p) > 0)
			continue;
		if (atomic_load(&ap.answered) == PINGPONG_ROUNDS)
			break;
		if (ucm_txq__sleep_begin(ap.t)) {
			sleeps++;
			if (poll(&pfd, 1, 1000) == 0 &&
			    atomic_load(&ap.asked) > atomic_load(&ap.answered) &&
			    atomic_load(&ap.asked_ms) + 100 < ut_ms_now())
				lost++;
		}
		ucm_txq__sleep_end(ap.t);
	}
	atomic_store(&ap.stop, true);
	pthread_join(th, NULL);
	UT_ASSERT(!lost, "a sleep of 1 s with an ask waiting (lost wake-up)");
	UT_ASSERT(atomic_load(&ap.answered) == PINGPONG_ROUNDS, "%u of %u asks answered in 60 s",
		  atomic_load(&ap.answered), PINGPONG_ROUNDS);
	UT_ASSERT(sleeps > 0, "the RX thread never slept");
	ucm_txq__sleep_begin(ap.t);
	ucm_txq__sleep_end(ap.t);
	UT_ASSERT(efd_count(ucm_txq__wake_fd(ap.t)) == 0, "the fd stays readable: %lld",
		  efd_count(ucm_txq__wake_fd(ap.t)));
	return finish(u, p, ap.t, -1);
}

static const struct ut_case cases[] = {
	UT_CASE(test_round_trip),
	UT_CASE(test_lend_needs_owner),
	UT_CASE(test_no_lend),
	UT_CASE(test_want),
	UT_CASE(test_send_full),
	UT_CASE(test_chain_home),
	UT_CASE(test_threads),
	UT_CASE(test_wake_once),
	UT_CASE(test_room_wait),
	UT_CASE(test_wake_threads),
	UT_CASE(test_want_threads),
	{}
};

int main(int argc, char **argv)
{
	ucm_set_print(NULL);
	return ut_main(argc, argv, cases);
}
