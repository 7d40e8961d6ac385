// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_ring tests.
 *
 * The stress cases follow DPDK's ring stress test: every handle carries a
 * stamp (producer id, sequence number) and a shared table of per-handle
 * states catches a handle that is lost, seen twice, or seen out of order
 * within its producer. Producers push random bulk sizes; the consumer
 * pulls random bulk sizes; the run ends after a fixed count, bounded in
 * time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "ucpumap/ring.h"
#include "utest.h"

static int test_create_rejects_bad_sizes(void)
{
	static const uint32_t bad[] = { 0, 1, 3, 1000, 0x80000001u, 0xffffffffu };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		UT_ASSERT(!ucm_ring__create(bad[i], UCM_RING_SP) && errno == EINVAL,
			  "size %u accepted", bad[i]);
	}
	errno = 0;
	UT_ASSERT(!ucm_ring__create(64, 0x80) && errno == EINVAL, "bad flags accepted");
	return 0;
}

/*
 * Walk ring @r (32 slots, empty) around its slot array several times with
 * uneven bulks, so that copies split at the end of the slots; order and
 * fill level checked at each step.
 */
static int walk_ring(struct ucm_ring *r, const char *what)
{
	uint64_t in[40], out[40], next_in = 0, next_out = 0;
	unsigned int round, i;

	UT_ASSERT(ucm_ring__empty(r), "%s: new ring not empty", what);
	UT_ASSERT(ucm_ring__consume(r, out, 8) == 0, "%s: consumed from empty", what);
	for (round = 0; round < 50; round++) {
		uint32_t want = 1 + round % 13, got;

		for (i = 0; i < want; i++)
			in[i] = next_in + i;
		got = ucm_ring__produce(r, in, want);
		UT_ASSERT(got == want, "%s: round %u: produced %u of %u", what, round, got, want);
		next_in += got;
		UT_ASSERT(ucm_ring__count(r) == next_in - next_out,
			  "%s: round %u: count %u, want %llu", what, round, ucm_ring__count(r),
			  (unsigned long long)(next_in - next_out));
		got = ucm_ring__consume(r, out, 1 + round % 7);
		for (i = 0; i < got; i++)
			UT_ASSERT(out[i] == next_out + i, "%s: round %u: got %llu want %llu",
				  what, round, (unsigned long long)out[i],
				  (unsigned long long)(next_out + i));
		next_out += got;
		UT_ASSERT(ucm_ring__count(r) == next_in - next_out,
			  "%s: round %u: count %u, want %llu", what, round, ucm_ring__count(r),
			  (unsigned long long)(next_in - next_out));
		/* drain when close to full */
		if (ucm_ring__count(r) > 20) {
			while ((got = ucm_ring__consume(r, out, 40))) {
				for (i = 0; i < got; i++)
					UT_ASSERT(out[i] == next_out + i, "%s: drain order", what);
				next_out += got;
			}
		}
	}
	while (ucm_ring__consume(r, out, 40))
		;
	return 0;
}

/* Overfill ring @r (32 slots, empty): only the free slots are taken. */
static int fill_ring(struct ucm_ring *r, const char *what)
{
	uint64_t in[40], out[40];
	unsigned int i;

	for (i = 0; i < 40; i++)
		in[i] = 1000 + i;
	UT_ASSERT(ucm_ring__produce(r, in, 40) == 32, "%s: overfill took != 32", what);
	UT_ASSERT(ucm_ring__produce(r, in, 1) == 0, "%s: full ring took more", what);
	UT_ASSERT(ucm_ring__count(r) == 32, "%s: count %u", what, ucm_ring__count(r));
	UT_ASSERT(ucm_ring__consume(r, out, 40) == 32, "%s: drain took != 32", what);
	for (i = 0; i < 32; i++)
		UT_ASSERT(out[i] == in[i], "%s: slot %u", what, i);
	UT_ASSERT(ucm_ring__empty(r) && !ucm_ring__count(r), "%s: not empty after drain", what);
	return 0;
}

static const uint32_t ring_kinds[] = { UCM_RING_SP, UCM_RING_MP };
static const char *const ring_kind_names[] = { "SP", "MP" };

/* Fill, overfill, drain, underdrain, across the wrap, both kinds. */
static int test_bounds_and_wrap(void)
{
	unsigned int f;

	for (f = 0; f < 2; f++) {
		struct ucm_ring *r = ucm_ring__create(32, ring_kinds[f]);

		UT_ASSERT(r, "create");
		if (walk_ring(r, ring_kind_names[f]) || fill_ring(r, ring_kind_names[f]))
			return 1;
		ucm_ring__destroy(r);
	}
	return 0;
}

/*
 * Put an empty ring's indices at @at, as 2^32 handles through it would:
 * nothing but handles moves them, so the test writes the fields. Any
 * value is a valid empty ring (an MP ring's slots are all free).
 */
static void ring_set_index(struct ucm_ring *r, uint32_t at)
{
	r->prod.head = r->prod.tail = r->prod.cached_cons = at;
	r->cons.tail = r->cons.cached_prod = at;
}

/*
 * The indices are free-running u32 and the fill level and free count
 * their difference modulo 2^32 (ring.h): a ring's indices wrap after 2^32
 * handles, minutes at 10 Mpps. The walk and a fill of every slot, each
 * started just below 2^32, both kinds.
 */
static int test_index_wrap(void)
{
	unsigned int f;

	for (f = 0; f < 2; f++) {
		struct ucm_ring *r = ucm_ring__create(32, ring_kinds[f]);
		const char *what = ring_kind_names[f];

		UT_ASSERT(r, "create");
		ring_set_index(r, UINT32_MAX - 40);
		if (walk_ring(r, what))
			return 1;
		/* Some hundred handles went through: the walk crossed 2^32. */
		UT_ASSERT(r->cons.tail < UINT32_MAX - 40, "%s: indices at %u, not wrapped",
			  what, r->cons.tail);
		/* A full ring whose used slots straddle 2^32. */
		ring_set_index(r, UINT32_MAX - 15);
		if (fill_ring(r, what))
			return 1;
		UT_ASSERT(r->cons.tail == 16, "%s: cons.tail %u after the fill", what, r->cons.tail);
		ucm_ring__destroy(r);
	}
	return 0;
}

/*
 * An MP producer stalled between its reservation and its writes (a thread
 * preempted there) holds back no other producer: another bulk goes in at
 * once, from another thread, and only the consumer waits, at the stalled
 * bulk's first slot; once that is written, both come out in order.
 */
struct late_prod {
	struct ucm_ring *r;
	uint64_t v[4];
	_Atomic uint32_t n;
	_Atomic int done;
};

static void *late_prod_main(void *arg)
{
	struct late_prod *lp = arg;

	atomic_store(&lp->n, ucm_ring__produce(lp->r, lp->v, 4));
	atomic_store(&lp->done, 1);
	return NULL;
}

static int test_mp_stalled_producer(void)
{
	struct ucm_ring *r = ucm_ring__create(16, UCM_RING_MP);
	struct late_prod lp = { .v = { 20, 21, 22, 23 } };
	uint64_t first[4] = { 10, 11, 12, 13 }, out[16];
	struct timespec ms = { 0, 1000000 };
	uint32_t head = 0, i;
	pthread_t t;

	UT_ASSERT(r, "create");
	lp.r = r;
	/* The stalled producer: reserved, not written. */
	UT_ASSERT(ucm_ring_reserve_mp_(r, first, 4, &head) == 4, "reserve");
	UT_ASSERT(ucm_ring__count(r) == 4, "count %u of a reservation", ucm_ring__count(r));
	UT_ASSERT(!pthread_create(&t, NULL, late_prod_main, &lp), "thread");
	for (i = 0; i < 1000 && !atomic_load(&lp.done); i++)
		nanosleep(&ms, NULL);
	UT_ASSERT(atomic_load(&lp.done), "a producer waited 1 s for a stalled one");
	pthread_join(t, NULL);
	UT_ASSERT(atomic_load(&lp.n) == 4, "the second bulk: %u of 4", atomic_load(&lp.n));
	/* The consumer stops at the stalled bulk's first slot. */
	UT_ASSERT(ucm_ring__empty(r), "empty while the first bulk is unwritten");
	UT_ASSERT(ucm_ring__consume(r, out, 16) == 0, "consumed past an unwritten slot");
	ucm_ring_publish_mp_(r, head, first, 4);
	UT_ASSERT(!ucm_ring__empty(r), "empty after the first bulk was written");
	UT_ASSERT(ucm_ring__consume(r, out, 16) == 8, "both bulks");
	for (i = 0; i < 8; i++)
		UT_ASSERT(out[i] == (i < 4 ? first[i] : lp.v[i - 4]), "slot %u: %llu", i,
			  (unsigned long long)out[i]);
	UT_ASSERT(ucm_ring__empty(r) && !ucm_ring__count(r), "not empty after");
	ucm_ring__destroy(r);
	return 0;
}

/* UCM_RING_NO_HANDLE marks an MP ring's free slot: produce stops before
 * it; an SP ring carries any value. */
static int test_mp_no_handle(void)
{
	uint64_t in[4] = { 1, 2, UCM_RING_NO_HANDLE, 4 }, out[4];
	struct ucm_ring *mp = ucm_ring__create(8, UCM_RING_MP);
	struct ucm_ring *sp = ucm_ring__create(8, UCM_RING_SP);

	UT_ASSERT(mp && sp, "create");
	UT_ASSERT(ucm_ring__produce(mp, in, 4) == 2, "MP took past its free mark");
	UT_ASSERT(ucm_ring__produce(mp, in + 2, 2) == 0, "MP took its free mark");
	UT_ASSERT(ucm_ring__consume(mp, out, 4) == 2 && out[0] == 1 && out[1] == 2, "MP out");
	UT_ASSERT(ucm_ring__produce(sp, in, 4) == 4, "SP refused a value");
	UT_ASSERT(ucm_ring__consume(sp, out, 4) == 4 && out[2] == UCM_RING_NO_HANDLE, "SP out");
	ucm_ring__destroy(mp);
	ucm_ring__destroy(sp);
	return 0;
}

/* ---- stress ---------------------------------------------------------------- */

#define STRESS_PRODUCERS	4
/* ThreadSanitizer makes each atomic a call (a tiny ring's 8M handles
 * took over 60 s on 2 CPUs): a quarter there, whose races show in the
 * first thousands as well. */
#ifdef __SANITIZE_THREAD__
#define STRESS_PER_PRODUCER	500000
#else
#define STRESS_PER_PRODUCER	2000000
#endif
/* Stuck: no handle for this long. A producer preempted between its
 * reservation and its publication holds the consumer until it runs
 * again: on 2 CPUs shared with a busy loop, a consumer spinning on the
 * slot made the tiny ring's case take 145 s (1 s alone), slow but
 * moving; it yields now. The bound on the whole is looser. */
#define STRESS_STALL_S		20
#define STRESS_TIMEOUT_S	180

struct stress {
	struct ucm_ring *r;
	int nprod;
	_Atomic uint32_t go;
	/* seen[p][seq]: 0 not yet, 1 consumed */
	uint8_t *seen[STRESS_PRODUCERS];
	uint32_t full_retries[STRESS_PRODUCERS];
};

struct prod_arg {
	struct stress *s;
	uint32_t id;
};

static uint64_t stamp(uint32_t p, uint32_t seq)
{
	/* A recognisable pattern in the top bits catches a torn slot. */
	return (0xA5ull << 56) | ((uint64_t)p << 32) | seq;
}

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void *stress_producer(void *arg)
{
	struct prod_arg *a = arg;
	struct stress *s = a->s;
	uint32_t seq = 0, rnd = 0x9e3779b9u * (a->id + 1);
	uint64_t buf[64];

	while (!atomic_load(&s->go))
		;
	while (seq < STRESS_PER_PRODUCER) {
		/* Random bursts of 1..44, DPDK-style. */
		uint32_t n = 1 + xorshift(&rnd) % 44, i, done = 0;

		if (n > STRESS_PER_PRODUCER - seq)
			n = STRESS_PER_PRODUCER - seq;
		for (i = 0; i < n; i++)
			buf[i] = stamp(a->id, seq + i);
		while (done < n) {
			uint32_t k = ucm_ring__produce(s->r, buf + done, n - done);

			if (!k) {
				s->full_retries[a->id]++;
				sched_yield();
			}
			done += k;
		}
		seq += n;
	}
	return NULL;
}

static int run_stress(uint32_t flags, int nprod, uint32_t size)
{
	struct stress s = { .nprod = nprod };
	struct prod_arg args[STRESS_PRODUCERS];
	pthread_t thr[STRESS_PRODUCERS];
	uint32_t next[STRESS_PRODUCERS] = {};
	uint64_t total = 0, want = (uint64_t)nprod * STRESS_PER_PRODUCER;
	uint32_t rnd = 12345;
	time_t start = time(NULL), moved = start;
	uint64_t buf[64];
	int p, err = 0;

	s.r = ucm_ring__create(size, flags);
	UT_ASSERT(s.r, "create");
	for (p = 0; p < nprod; p++) {
		s.seen[p] = calloc(STRESS_PER_PRODUCER, 1);
		UT_ASSERT(s.seen[p], "calloc");
		args[p] = (struct prod_arg){ &s, (uint32_t)p };
		UT_ASSERT(!pthread_create(&thr[p], NULL, stress_producer, &args[p]), "thread");
	}
	atomic_store(&s.go, 1);

	/* After the first error keep draining (unchecked) so the producers
	 * can finish and be joined. */
	while (total < want) {
		uint32_t n = ucm_ring__consume(s.r, buf, 1 + xorshift(&rnd) % 64), i;

		for (i = 0; i < n && !err; i++) {
			uint64_t v = buf[i];
			uint32_t pid = (v >> 32) & 0xffffff, seq = (uint32_t)v;

			if ((v >> 56) != 0xA5 || pid >= (uint32_t)nprod ||
			    seq >= STRESS_PER_PRODUCER) {
				ut_fail_reason("corrupt handle 0x%llx", (unsigned long long)v);
				err = 1;
			} else if (s.seen[pid][seq]) {
				ut_fail_reason("handle p%u/%u consumed twice", pid, seq);
				err = 1;
			} else if (seq != next[pid]) {
				/* Per producer, handles arrive in the order sent. */
				ut_fail_reason("p%u: got seq %u, expected %u (lost or reordered)",
					       pid, seq, next[pid]);
				err = 1;
			} else {
				s.seen[pid][seq] = 1;
				next[pid]++;
			}
		}
		total += n;
		if (n) {
			moved = time(NULL);
			continue;
		}
		/* Empty, or a slot still being written: let its producer,
		 * preempted between reservation and publication, run. */
		sched_yield();
		if (time(NULL) - moved > STRESS_STALL_S ||
		    time(NULL) - start > STRESS_TIMEOUT_S) {
			/* Producers may be stuck: leave them, report. */
			ut_fail_reason("timeout: %llu of %llu handles after %lld s, none for the last %lld s",
				       (unsigned long long)total, (unsigned long long)want,
				       (long long)(time(NULL) - start),
				       (long long)(time(NULL) - moved));
			return 1;
		}
	}
	for (p = 0; p < nprod; p++)
		pthread_join(thr[p], NULL);
	if (err)
		return 1;
	UT_ASSERT(ucm_ring__empty(s.r), "ring not empty at the end");
	for (p = 0; p < nprod; p++)
		UT_ASSERT(next[p] == STRESS_PER_PRODUCER, "p%d: %u consumed", p, next[p]);
	for (p = 0; p < nprod; p++)
		free(s.seen[p]);
	ucm_ring__destroy(s.r);
	return 0;
}

static int test_spsc_stress(void)
{
	return run_stress(UCM_RING_SP, 1, 256);
}

static int test_mpsc_stress(void)
{
	return run_stress(UCM_RING_MP, STRESS_PRODUCERS, 256);
}

/* A tiny ring forces producers to contend on every reservation and to wait
 * on each other's publication (P3). */
static int test_mpsc_stress_tiny_ring(void)
{
	return run_stress(UCM_RING_MP, STRESS_PRODUCERS, 16);
}

static const struct ut_case cases[] = {
	UT_CASE(test_create_rejects_bad_sizes),
	UT_CASE(test_bounds_and_wrap),
	UT_CASE(test_index_wrap),
	UT_CASE(test_mp_stalled_producer),
	UT_CASE(test_mp_no_handle),
	UT_CASE(test_spsc_stress),
	UT_CASE(test_mpsc_stress),
	UT_CASE(test_mpsc_stress_tiny_ring),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
