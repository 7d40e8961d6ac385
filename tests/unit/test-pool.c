// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_umem / ucm_pool tests: the userspace page_pool.
 *
 * The cases follow reliability.md §5.1-§5.2 (A1-A3, A6, B1-B4, B6, B7).
 * Most of them keep a model of what the test itself did (frames held,
 * frames returned through each path, per pool) and check the pool's
 * statistics and audit against it with exact numbers:
 *
 *   fast + refill + slow                 == frames allocated
 *   cached + cache_full                  == owner direct returns
 *   ring + ring_full                     == remote returns + cache_full
 *   released                             == release_bulk returns
 *   cached + ring + ring_full + released == all returns
 *   release                              == ring_full + released
 *   inflight == hold - release           == frames - audit.loc[STACK]
 *   audit.loc[APP]                       == frames the test holds
 *
 * The test uses only the public API. Debug builds (-DUCM_DEBUG, the
 * library `make check` links against) keep a tag per frame; cases that
 * need them skip in a release build. Some cases pin down bugs found while
 * writing them (see each case's comment): test_owner_not_inherited,
 * test_double_free_stack_overflow (release builds), and
 * test_destroy_waits_for_late_release (under TSan).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <linux/mempolicy.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "core/internal.h"
#include "core/pool_internal.h"
#include "ucpumap/log.h"
#include "ucpumap/pool.h"
#include "ucpumap/ring.h"
#include "utest.h"

#ifdef UCM_DEBUG
#define DEBUG_BUILD 1
#else
#define DEBUG_BUILD 0
#endif

/* Run a helper that fails through UT_ASSERT; prefix its reason. */
#define CHECK(call, fmt, ...)						\
	do {								\
		if (call) {						\
			char _w[sizeof(ut_why)];			\
			memcpy(_w, ut_why, sizeof(_w));			\
			ut_fail_reason(fmt ": %.400s", ##__VA_ARGS__, _w); \
			return 1;					\
		}							\
	} while (0)

/* ---- helpers ------------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint32_t rnd32(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (uint32_t)((*s * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Log capture: counts warnings and keeps their text, so a case can assert
 * what the library said. Thread-safe: remote threads may log too. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_nwarn, log_nall;
static char log_last[512];
static char log_text[8192];

static int capture_print(enum ucm_log_level level, const char *fmt,
			 va_list args)
{
	char line[512];
	size_t have;

	vsnprintf(line, sizeof(line), fmt, args);
	/* A debug build's bad frame move aborts right after logging: say
	 * why on stderr, the capture would die with the process. */
	if (strstr(line, "but it is in"))
		fputs(line, stderr);
	pthread_mutex_lock(&log_lock);
	log_nall++;
	if (level == UCM_LOG_WARN) {
		log_nwarn++;
		snprintf(log_last, sizeof(log_last), "%s", line);
		have = strlen(log_text);
		snprintf(log_text + have, sizeof(log_text) - have, "%s", line);
	}
	pthread_mutex_unlock(&log_lock);
	return 0;
}

static void log_capture(void)
{
	pthread_mutex_lock(&log_lock);
	log_nwarn = log_nall = 0;
	log_last[0] = log_text[0] = '\0';
	pthread_mutex_unlock(&log_lock);
	ucm_set_print(capture_print);
}

static int log_warnings(void)
{
	int n;

	pthread_mutex_lock(&log_lock);
	n = log_nwarn;
	pthread_mutex_unlock(&log_lock);
	return n;
}

/* How many captured warnings contain @needle. */
static int log_count(const char *needle)
{
	const char *p;
	int n = 0;

	pthread_mutex_lock(&log_lock);
	for (p = log_text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	pthread_mutex_unlock(&log_lock);
	return n;
}

static struct ucm_umem *mk_umem(uint32_t npools, uint32_t fpp,
				uint32_t ring_size, uint32_t flags)
{
	UCM_OPTS(ucm_umem_opts, o, .npools = npools, .frames_per_pool = fpp,
		 .ring_size = ring_size, .flags = flags);

	return ucm_umem__create(&o);
}

static uint64_t pool_span(struct ucm_umem *umem)
{
	return ucm_umem__size(umem) / ucm_umem__npools(umem);
}

static uint32_t pool_of(struct ucm_umem *umem, uint64_t addr)
{
	return (uint32_t)(addr / pool_span(umem));
}

static struct ucm_pool *pool_for(struct ucm_umem *umem, uint64_t addr)
{
	return ucm_umem__pool(umem, pool_of(umem, addr));
}

static void stats(struct ucm_umem *umem, uint32_t p, struct ucm_pool_stats *st)
{
	ucm_pool__stats(ucm_umem__pool(umem, p), st, sizeof(*st));
}

static uint32_t loc_sum(const struct ucm_pool_audit *a)
{
	uint32_t s = 0;

	for (int l = 0; l < UCM_LOC__MAX; l++)
		s += a->loc[l];
	return s;
}

/* Audit one pool: balanced, every frame in one place, @held in APP. */
static int audit_pool(struct ucm_umem *umem, uint32_t p, uint32_t held,
		      struct ucm_pool_audit *out)
{
	struct ucm_pool_audit a;
	int ret = ucm_pool__audit(ucm_umem__pool(umem, p), &a, sizeof(a));

	UT_ASSERT(ret == 0, "pool %u audit returned %d", p, ret);
	UT_ASSERT(a.frames == ucm_pool__frames(ucm_umem__pool(umem, p)),
		  "pool %u audit frames %u", p, a.frames);
	UT_ASSERT(loc_sum(&a) == a.frames, "pool %u: locations sum to %u, %u frames",
		  p, loc_sum(&a), a.frames);
	UT_ASSERT(a.loc[UCM_LOC_APP] == held, "pool %u: %u frames in APP, test holds %u",
		  p, a.loc[UCM_LOC_APP], held);
	UT_ASSERT(a.tagged == DEBUG_BUILD, "tagged %d in a %s build", a.tagged,
		  DEBUG_BUILD ? "debug" : "release");
	for (int l = UCM_LOC_USER; l < UCM_LOC__MAX; l++)
		UT_ASSERT(!a.loc[l], "pool %u: %u frames in place %s, which no user of the pool has",
			  p, a.loc[l], ucm_frame_loc_str(l));
	UT_ASSERT(ucm_pool__inflight(ucm_umem__pool(umem, p)) ==
		  (int64_t)a.frames - a.loc[UCM_LOC_STACK],
		  "pool %u: inflight %lld, %u frames off the stack", p,
		  (long long)ucm_pool__inflight(ucm_umem__pool(umem, p)),
		  a.frames - a.loc[UCM_LOC_STACK]);
	if (out)
		*out = a;
	return 0;
}

/* ---- helper threads: "remote" callers ----------------------------------- */

enum remote_op {
	R_PUT_BULK,	/* ucm_umem__put_bulk(addrs, n) */
	R_PUT_EACH,	/* ucm_pool__put() per frame */
	R_ALLOC,	/* ucm_pool__alloc_bulk(pool, addrs, n) */
	R_IS_OWNER,	/* ucm_pool__is_owner(pool) */
	R_SET_OWNER,	/* ucm_pool__set_owner(pool) */
	R_DELAYED_PUT,	/* sleep, then put_bulk in 4 bulks 10 ms apart */
	R_DELAYED_RELEASE, /* sleep, then release_bulk */
};

struct remote_job {
	enum remote_op op;
	struct ucm_umem *umem;
	struct ucm_pool *pool;
	uint64_t *addrs;
	uint32_t n;
	unsigned int delay_ms;
	int ret;
	int err;
	pthread_t thr;
};

static void sleep_ms(unsigned int ms)
{
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000,
				      .tv_nsec = (long)(ms % 1000) * 1000000 }, NULL);
}

static void *remote_fn(void *arg)
{
	struct remote_job *j = arg;
	uint32_t i, q;

	errno = 0;
	switch (j->op) {
	case R_PUT_BULK:
		j->ret = ucm_umem__put_bulk(j->umem, j->addrs, j->n);
		break;
	case R_PUT_EACH:
		j->ret = 0;
		for (i = 0; i < j->n; i++) {
			int r = ucm_pool__put(pool_for(j->umem, j->addrs[i]),
					      j->addrs[i]);
			if (r && !j->ret)
				j->ret = r;
		}
		break;
	case R_ALLOC:
		j->ret = ucm_pool__alloc_bulk(j->pool, j->addrs, j->n);
		break;
	case R_IS_OWNER:
		j->ret = ucm_pool__is_owner(j->pool);
		break;
	case R_SET_OWNER:
		j->ret = ucm_pool__set_owner(j->pool);
		break;
	case R_DELAYED_PUT:
		sleep_ms(j->delay_ms);
		j->ret = 0;
		for (i = 0; i < j->n; i += q) {
			int r;

			q = j->n - i < (j->n + 3) / 4 ? j->n - i : (j->n + 3) / 4;
			if (i)
				sleep_ms(10);
			r = ucm_umem__put_bulk(j->umem, j->addrs + i, q);
			if (r && !j->ret)
				j->ret = r;
		}
		break;
	case R_DELAYED_RELEASE:
		sleep_ms(j->delay_ms);
		j->ret = ucm_umem__release_bulk(j->umem, j->addrs, j->n);
		break;
	}
	j->err = errno;
	return NULL;
}

/* Run @j on a fresh thread and wait for it. */
static int run_remote(struct remote_job *j)
{
	if (pthread_create(&j->thr, NULL, remote_fn, j))
		return -1;
	pthread_join(j->thr, NULL);
	return j->ret;
}

static int remote_put_bulk(struct ucm_umem *umem, uint64_t *addrs, uint32_t n)
{
	struct remote_job j = { .op = R_PUT_BULK, .umem = umem, .addrs = addrs, .n = n };

	return run_remote(&j);
}

/* ---- 1. options ---------------------------------------------------------- */

static int expect_einval(const struct ucm_umem_opts *o, const char *what)
{
	struct ucm_umem *umem;

	errno = 0;
	umem = ucm_umem__create(o);
	if (umem)
		ucm_umem__destroy(umem, 0);
	UT_ASSERT(!umem, "%s accepted", what);
	UT_ASSERT(errno == EINVAL, "%s: errno %d, want EINVAL", what, errno);
	return 0;
}

static int expect_ok(const struct ucm_umem_opts *o, const char *what)
{
	struct ucm_umem *umem = ucm_umem__create(o);

	UT_ASSERT(umem, "%s rejected: errno %d", what, errno);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "%s: destroy", what);
	return 0;
}

static int test_options(void)
{
	static const struct {
		uint32_t frame_size, npools, fpp, ring, flags;
		const char *what;
	} bad[] = {
		{ 1000, 0, 0, 0, 0, "frame_size 1000" },
		{ 8192, 0, 0, 0, 0, "frame_size 8192" },
		{ 1024, 0, 0, 0, 0, "frame_size 1024" },
		{ 0, 0, 1000, 0, 0, "frames_per_pool 1000" },
		{ 0, 0, 128, 0, 0, "frames_per_pool 128" },
		{ 0, 0, 257, 0, 0, "frames_per_pool 257" },
		{ 0, 0, 0, 3, 0, "ring_size 3" },
		{ 0, 0, 0, 2, 0, "ring_size 2 (below a put bulk of 16)" },
		{ 0, 0, 0, 8, 0, "ring_size 8 (below a put bulk of 16)" },
		{ 0, 0, 0, 1000, 0, "ring_size 1000" },
		{ 0, 0, 0, 65536, 0, "ring_size 65536" },
		{ 0, 257, 256, 0, 0, "npools 257" },
		{ 0, 256, 1u << 21, 0, 0, "a UMEM over 1 TiB" },
		{ 0, 0, 0, 0, 1u << 2, "flags 0x4" },
		{ 0, 0, 0, 0, 1u << 31, "flags 0x80000000" },
	};
	static const struct {
		uint32_t frame_size, npools, fpp, ring, flags;
		const char *what;
	} good[] = {
		{ 2048, 0, 0, 0, 0, "frame_size 2048" },
		{ 4096, 1, 256, 16, 0, "the smallest pool and ring" },
		{ 0, 0, 256, 32768, 0, "ring_size 32768" },
		{ 0, 256, 256, 16, UCM_UMEM_F_NO_DIRECT_BULK, "npools 256" },
	};
	struct {
		struct ucm_umem_opts o;
		uint64_t extra[2];
	} big;
	struct ucm_umem *umem;
	unsigned int i;

	log_capture();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		UCM_OPTS(ucm_umem_opts, o, .frame_size = bad[i].frame_size,
			 .npools = bad[i].npools, .frames_per_pool = bad[i].fpp,
			 .ring_size = bad[i].ring, .flags = bad[i].flags);
		int before = log_warnings();

		CHECK(expect_einval(&o, bad[i].what), "bad option %u", i);
		/* "the log says which" */
		UT_ASSERT(log_warnings() == before + 1, "%s: %d warnings, want 1",
			  bad[i].what, log_warnings() - before);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		UCM_OPTS(ucm_umem_opts, o, .frame_size = good[i].frame_size,
			 .npools = good[i].npools, .frames_per_pool = good[i].fpp,
			 .ring_size = good[i].ring, .flags = good[i].flags);

		CHECK(expect_ok(&o, good[i].what), "good option %u", i);
	}

	/* sz too small to even hold itself. */
	{
		struct ucm_umem_opts o = { .sz = 4 };

		CHECK(expect_einval(&o, "sz 4"), "sz");
	}
	/* A newer caller: larger sz, unknown bytes zero -> fine; non-zero ->
	 * EINVAL, whichever byte it is. */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	CHECK(expect_ok(&big.o, "larger sz, zero tail"), "newer caller");
	for (i = 0; i < sizeof(big.extra); i += 5) {
		memset(&big, 0, sizeof(big));
		big.o.sz = sizeof(big);
		((unsigned char *)big.extra)[i] = 0x01;
		CHECK(expect_einval(&big.o, "larger sz, non-zero tail"), "tail byte %u", i);
	}
	/* An older caller: fields past its sz are not read (default), even if
	 * the memory there holds garbage. */
	{
		UCM_OPTS(ucm_umem_opts, o, .frames_per_pool = 512,
			 .flags = 0xdead0000);

		o.sz = offsetof(struct ucm_umem_opts, flags);
		umem = ucm_umem__create(&o);
		UT_ASSERT(umem, "older sz rejected, errno %d", errno);
		UT_ASSERT(ucm_umem__flags(umem) == 0, "flags %#x read past sz",
			  ucm_umem__flags(umem));
		UT_ASSERT(ucm_pool__frames(ucm_umem__pool(umem, 0)) == 512,
			  "frames_per_pool not read");
		UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	}

	/* NULL opts: the defaults. */
	umem = ucm_umem__create(NULL);
	UT_ASSERT(umem, "NULL opts: errno %d", errno);
	UT_ASSERT(ucm_umem__frame_size(umem) == 4096, "frame size %u",
		  ucm_umem__frame_size(umem));
	UT_ASSERT(ucm_umem__npools(umem) == 1, "npools %u", ucm_umem__npools(umem));
	UT_ASSERT(ucm_pool__frames(ucm_umem__pool(umem, 0)) == 4096, "frames %u",
		  ucm_pool__frames(ucm_umem__pool(umem, 0)));
	UT_ASSERT(ucm_umem__size(umem) == 4096ull * 4096, "size %zu",
		  ucm_umem__size(umem));
	UT_ASSERT(ucm_umem__flags(umem) == 0, "flags %#x", ucm_umem__flags(umem));
	UT_ASSERT(((uintptr_t)ucm_umem__area(umem) & 4095) == 0, "area not page-aligned");
	UT_ASSERT(ucm_pool__index(ucm_umem__pool(umem, 0)) == 0, "pool index");
	errno = 0;
	UT_ASSERT(!ucm_umem__pool(umem, 1) && errno == EINVAL, "pool 1 of 1 exists");
	CHECK(audit_pool(umem, 0, 0, NULL), "fresh umem");
	UT_ASSERT(ucm_pool__inflight(ucm_umem__pool(umem, 0)) == 0, "fresh inflight");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	UT_ASSERT(ucm_umem__destroy(NULL, 0) == 0, "destroy(NULL)");

	/* Layout: pool i's frames start at i * frames_per_pool * frame_size. */
	umem = mk_umem(3, 256, 0, 0);
	UT_ASSERT(umem, "3 pools");
	UT_ASSERT(ucm_umem__size(umem) == 3ull * 256 * 4096, "size %zu",
		  ucm_umem__size(umem));
	for (i = 0; i < 3; i++) {
		struct ucm_pool *p = ucm_umem__pool(umem, i);
		uint64_t a;

		UT_ASSERT(ucm_pool__index(p) == i, "index");
		ucm_pool__set_owner(p);
		UT_ASSERT(ucm_pool__alloc(p, &a) == 0, "alloc from pool %u", i);
		/* Fresh pools hand out their frames in address order. */
		UT_ASSERT(a == (uint64_t)i * 256 * 4096, "pool %u first frame 0x%llx",
			  i, (unsigned long long)a);
		UT_ASSERT(ucm_pool__put(p, a) == 0, "put");
	}
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	ucm_set_print(NULL);
	return 0;
}

/*
 * ring_size 1 is a power of two but no ring can have it (rings need >= 2
 * slots). It must be refused as a bad option (EINVAL, one log line), not
 * surface as ENOMEM from the ring allocation (the first version did that).
 */
static int test_options_ring_size_1(void)
{
	UCM_OPTS(ucm_umem_opts, o, .ring_size = 1);
	struct ucm_umem *umem;

	log_capture();
	errno = 0;
	umem = ucm_umem__create(&o);
	ucm_set_print(NULL);
	if (umem) {
		/* Accepting it (e.g. rounding up) would be fine too. */
		UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
		return 0;
	}
	UT_ASSERT(errno == EINVAL, "ring_size 1: errno %d (%s), want EINVAL",
		  errno, strerror(errno));
	UT_ASSERT(log_warnings() == 1, "ring_size 1: %d warnings, want 1", log_warnings());
	return 0;
}

/*
 * libbpf's OPTS_VALID checks every byte past offsetofend(last_field), so a
 * newer caller's field placed in today's tail padding (inside sizeof) is
 * refused, not silently ignored (the first version checked only from
 * sizeof on). On the copy every create does (UCM_OPTS_COPY()), with an
 * options struct of its own: ucm_umem_opts has no tail padding since
 * numa_node.
 */
struct padded_opts {
	size_t sz;
	uint16_t last;
};

static int test_options_tail_padding(void)
{
	size_t end = offsetof(struct padded_opts, last) + sizeof(uint16_t);
	struct padded_opts o, out;

	_Static_assert(sizeof(struct padded_opts) > offsetof(struct padded_opts, last) +
		       sizeof(uint16_t), "no tail padding to test");
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	UT_ASSERT(!ucm_opts_copy(&out, sizeof(out), end, &o, "padded_opts"), "clean opts refused");
	((unsigned char *)&o)[end] = 1;
	log_capture();
	UT_ASSERT(ucm_opts_copy(&out, sizeof(out), end, &o, "padded_opts") == -EINVAL,
		  "a non-zero byte after the last field accepted");
	ucm_set_print(NULL);
	return 0;
}

/* ---- 2. owner rule ----------------------------------------------------- */

static int test_owner_rule(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	struct ucm_pool_stats st0, st1;
	struct remote_job j;
	uint64_t a[4];

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);

	/* No owner yet: nobody may allocate. */
	UT_ASSERT(!ucm_pool__is_owner(pool), "owner before set_owner");
	errno = 0;
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 4) == -EPERM && errno == EPERM,
		  "alloc_bulk before set_owner");
	errno = 0;
	UT_ASSERT(ucm_pool__alloc(pool, a) == -EPERM && errno == EPERM,
		  "alloc before set_owner");

	UT_ASSERT(ucm_pool__set_owner(pool) == 0, "set_owner");
	UT_ASSERT(ucm_pool__is_owner(pool), "not owner after set_owner");
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 4) == 4, "owner alloc_bulk");

	/* Another thread is not the owner. */
	j = (struct remote_job){ .op = R_IS_OWNER, .pool = pool };
	UT_ASSERT(run_remote(&j) == 0, "other thread is owner");
	stats(umem, 0, &st0);
	j = (struct remote_job){ .op = R_ALLOC, .pool = pool, .addrs = a, .n = 2 };
	UT_ASSERT(run_remote(&j) == -EPERM && j.err == EPERM,
		  "non-owner alloc_bulk: %d errno %d", j.ret, j.err);
	stats(umem, 0, &st1);
	UT_ASSERT(!memcmp(&st0, &st1, sizeof(st0)), "a refused alloc changed the stats");
	CHECK(audit_pool(umem, 0, 4, NULL), "after refused alloc");

	/* A non-owner's return never goes to the cache (B6): it takes the
	 * ring, even for the pool's own frames. */
	j = (struct remote_job){ .op = R_PUT_EACH, .umem = umem, .addrs = a, .n = 1 };
	UT_ASSERT(run_remote(&j) == 0, "remote put");
	stats(umem, 0, &st1);
	UT_ASSERT(st1.recycle_ring == st0.recycle_ring + 1 &&
		  st1.recycle_cached == st0.recycle_cached,
		  "remote put: ring %llu cached %llu",
		  (unsigned long long)st1.recycle_ring,
		  (unsigned long long)st1.recycle_cached);

	/* Ownership moves: another thread takes it, this one loses it. */
	j = (struct remote_job){ .op = R_SET_OWNER, .pool = pool };
	UT_ASSERT(run_remote(&j) == 0, "remote set_owner");
	UT_ASSERT(!ucm_pool__is_owner(pool), "still owner after another set_owner");
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 1) == -EPERM, "alloc after losing ownership");
	UT_ASSERT(ucm_pool__set_owner(pool) == 0, "set_owner again");
	UT_ASSERT(ucm_pool__alloc(pool, &a[0]) == 0, "alloc after taking it back");

	/* clear_owner: no owner at all; the former owner's returns take the ring. */
	ucm_pool__clear_owner(pool);
	UT_ASSERT(!ucm_pool__is_owner(pool), "owner after clear_owner");
	UT_ASSERT(ucm_pool__alloc(pool, &a[0]) == -EPERM, "alloc after clear_owner");
	stats(umem, 0, &st0);
	UT_ASSERT(ucm_umem__put_bulk(umem, a, 4) == 0, "put_bulk without owner");
	stats(umem, 0, &st1);
	UT_ASSERT(st1.recycle_ring == st0.recycle_ring + 4 &&
		  st1.recycle_cached == st0.recycle_cached, "ownerless put went to the cache");
	CHECK(audit_pool(umem, 0, 0, NULL), "end");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

/*
 * Ownership belongs to the thread that called ucm_pool__set_owner(). When
 * that thread exits without clear_owner, a thread created later must not
 * find itself the owner (allowed to allocate and to recycle into the
 * lockless cache) without ever asking. glibc reuses a joined thread's
 * stack and TLS block for the next thread, so a token made from a TLS
 * address is inherited.
 */
static int test_owner_not_inherited(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	struct remote_job j;
	uint64_t a[2];
	int i, inherited = 0, allocs = 0;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	for (i = 0; i < 8; i++) {
		j = (struct remote_job){ .op = R_SET_OWNER, .pool = pool };
		UT_ASSERT(run_remote(&j) == 0, "set_owner in a thread that then exits");
		j = (struct remote_job){ .op = R_IS_OWNER, .pool = pool };
		inherited += run_remote(&j) == 1;
		j = (struct remote_job){ .op = R_ALLOC, .pool = pool, .addrs = a, .n = 1 };
		if (run_remote(&j) == 1) {
			allocs++;
			UT_ASSERT(ucm_umem__put_bulk(umem, a, 1) == 0, "put back");
		}
	}
	UT_ASSERT(!ucm_pool__is_owner(pool), "main became owner");
	/* The last owner exited without letting go: destroy refuses... */
	log_capture();
	UT_ASSERT(ucm_umem__destroy(umem, 0) == -EBUSY, "destroy with a foreign owner set");
	UT_ASSERT(log_count("owner thread") == 1, "no message naming the owner: %s", log_text);
	ucm_set_print(NULL);
	/* ...until someone who joined it clears the ownership. */
	ucm_pool__clear_owner(pool);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	UT_ASSERT(inherited == 0 && allocs == 0,
		  "a new thread found itself owner of a pool it never claimed "
		  "(%d of 8 times; %d allocations succeeded): the dead owner's token was reused",
		  inherited, allocs);
	return 0;
}

/* ---- 3/4. random workloads ---------------------------------------------- */

#define MAX_POOLS	2

struct books {
	uint64_t allocs, direct, remote, released, exhausted;
};

struct model {
	struct ucm_umem *umem;
	uint32_t npools, fpp, fs;
	uint64_t *held;		/* frames the test holds */
	uint32_t nheld;
	uint32_t held_p[MAX_POOLS];
	uint8_t *is_held;	/* per frame index */
	struct books b[MAX_POOLS];
	uint64_t seed;
};

static int model_init(struct model *m, struct ucm_umem *umem, uint64_t seed)
{
	memset(m, 0, sizeof(*m));
	m->umem = umem;
	m->npools = ucm_umem__npools(umem);
	m->fpp = ucm_pool__frames(ucm_umem__pool(umem, 0));
	m->fs = ucm_umem__frame_size(umem);
	m->held = calloc((size_t)m->npools * m->fpp, sizeof(*m->held));
	m->is_held = calloc((size_t)m->npools * m->fpp, 1);
	m->seed = seed;
	UT_ASSERT(m->held && m->is_held && m->npools <= MAX_POOLS, "model");
	for (uint32_t p = 0; p < m->npools; p++)
		ucm_pool__set_owner(ucm_umem__pool(umem, p));
	return 0;
}

static void model_fini(struct model *m)
{
	free(m->held);
	free(m->is_held);
}

static int model_take(struct model *m, uint32_t p, const uint64_t *addrs,
		      uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = addrs[i], idx = a / m->fs;

		UT_ASSERT(a % m->fs == 0, "unaligned frame 0x%llx", (unsigned long long)a);
		UT_ASSERT(a < ucm_umem__size(m->umem), "frame 0x%llx outside",
			  (unsigned long long)a);
		UT_ASSERT(pool_of(m->umem, a) == p, "pool %u handed out 0x%llx of pool %u",
			  p, (unsigned long long)a, pool_of(m->umem, a));
		UT_ASSERT(!m->is_held[idx], "frame 0x%llx handed out twice",
			  (unsigned long long)a);
		m->is_held[idx] = 1;
		m->held[m->nheld++] = a;
		m->held_p[p]++;
	}
	return 0;
}

/* Remove @n random held frames into @out. */
static void model_pick(struct model *m, uint64_t *out, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = rnd32(&m->seed) % m->nheld;
		uint64_t a = m->held[k];

		m->held[k] = m->held[--m->nheld];
		m->is_held[a / m->fs] = 0;
		m->held_p[pool_of(m->umem, a)]--;
		out[i] = a;
	}
}

/* Stats and audit of every pool against the model. */
static int model_check(struct model *m)
{
	uint32_t held = 0;

	for (uint32_t p = 0; p < m->npools; p++) {
		struct ucm_pool_stats st;
		struct ucm_pool_audit a;
		const struct books *b = &m->b[p];

		stats(m->umem, p, &st);
		CHECK(audit_pool(m->umem, p, m->held_p[p], &a), "audit");
		held += m->held_p[p];
		UT_ASSERT(st.alloc_fast + st.alloc_refill + st.alloc_slow == b->allocs,
			  "pool %u: fast %llu + refill %llu + slow %llu != %llu allocated", p,
			  (unsigned long long)st.alloc_fast, (unsigned long long)st.alloc_refill,
			  (unsigned long long)st.alloc_slow, (unsigned long long)b->allocs);
		UT_ASSERT(st.alloc_exhausted == b->exhausted, "pool %u: exhausted %llu, want %llu",
			  p, (unsigned long long)st.alloc_exhausted,
			  (unsigned long long)b->exhausted);
		UT_ASSERT(st.recycle_cached + st.recycle_cache_full == b->direct,
			  "pool %u: cached %llu + cache_full %llu != %llu direct returns", p,
			  (unsigned long long)st.recycle_cached,
			  (unsigned long long)st.recycle_cache_full,
			  (unsigned long long)b->direct);
		UT_ASSERT(st.recycle_ring + st.recycle_ring_full ==
			  b->remote + st.recycle_cache_full,
			  "pool %u: ring %llu + ring_full %llu != remote %llu + cache_full %llu", p,
			  (unsigned long long)st.recycle_ring,
			  (unsigned long long)st.recycle_ring_full,
			  (unsigned long long)b->remote,
			  (unsigned long long)st.recycle_cache_full);
		UT_ASSERT(st.recycle_released == b->released, "pool %u: released %llu, want %llu",
			  p, (unsigned long long)st.recycle_released,
			  (unsigned long long)b->released);
		UT_ASSERT(st.recycle_cached + st.recycle_ring + st.recycle_ring_full +
			  st.recycle_released == b->direct + b->remote + b->released,
			  "pool %u: returns not counted exactly once", p);
		UT_ASSERT(st.release == st.recycle_ring_full + st.recycle_released,
			  "pool %u: release %llu != ring_full %llu + released %llu", p,
			  (unsigned long long)st.release,
			  (unsigned long long)st.recycle_ring_full,
			  (unsigned long long)st.recycle_released);
		UT_ASSERT(st.inflight == (int64_t)(st.hold - st.release),
			  "pool %u: inflight %lld != hold - release", p, (long long)st.inflight);
		UT_ASSERT(st.inflight == (int64_t)a.frames - a.loc[UCM_LOC_STACK],
			  "pool %u: inflight %lld, %u off the stack", p, (long long)st.inflight,
			  a.frames - a.loc[UCM_LOC_STACK]);
		UT_ASSERT(st.bad_addr == 0 && st.double_free == 0,
			  "pool %u: bad_addr %llu double_free %llu", p,
			  (unsigned long long)st.bad_addr, (unsigned long long)st.double_free);
	}
	{
		struct ucm_pool_audit sum;
		int ret = ucm_umem__audit(m->umem, &sum, sizeof(sum));

		UT_ASSERT(ret == 0, "umem audit %d", ret);
		UT_ASSERT(sum.frames == m->npools * m->fpp, "audit frames %u", sum.frames);
		UT_ASSERT(loc_sum(&sum) == sum.frames, "audit sum %u", loc_sum(&sum));
		UT_ASSERT(sum.loc[UCM_LOC_APP] == held && held == m->nheld,
			  "umem audit APP %u, test holds %u", sum.loc[UCM_LOC_APP], m->nheld);
	}
	return 0;
}

enum {
	OP_ALLOC,
	OP_PUT,
	OP_PUT_BULK,
	OP_RELEASE_BULK,
	OP_REMOTE_BULK,
	OP_REMOTE_EACH,
	OP__MAX,
};

/*
 * One random operation; the books follow what the test did. @fill biases
 * towards allocation (the pools run dry, allocations come up short),
 * otherwise towards returns (the pools refill).
 */
static int model_step(struct model *m, bool fill, uint32_t *opcount)
{
	uint64_t buf[96];
	uint32_t op, n, p, i;
	int ret;

	if (m->nheld < 8 || rnd32(&m->seed) % 10 < (fill ? 7u : 2u))
		op = OP_ALLOC;
	else
		op = OP_PUT + rnd32(&m->seed) % (OP__MAX - OP_PUT);
	opcount[op]++;

	switch (op) {
	case OP_ALLOC: {
		uint32_t free_frames;

		p = rnd32(&m->seed) % m->npools;
		n = 1 + rnd32(&m->seed) % 80;
		free_frames = m->fpp - m->held_p[p];
		ret = ucm_pool__alloc_bulk(ucm_umem__pool(m->umem, p), buf, n);
		UT_ASSERT(ret >= 0, "alloc_bulk: %d", ret);
		/* Every frame not held is in one of the tiers, and the
		 * allocator takes from all of them. */
		UT_ASSERT((uint32_t)ret == (n < free_frames ? n : free_frames),
			  "pool %u: alloc_bulk(%u) got %d with %u frames free", p, n, ret,
			  free_frames);
		m->b[p].allocs += ret;
		m->b[p].exhausted += n - ret;
		CHECK(model_take(m, p, buf, ret), "alloc");
		break;
	}
	case OP_PUT:
		model_pick(m, buf, 1);
		p = pool_of(m->umem, buf[0]);
		ret = ucm_pool__put(ucm_umem__pool(m->umem, p), buf[0]);
		UT_ASSERT(ret == 0, "put: %d", ret);
		m->b[p].direct++;
		break;
	case OP_PUT_BULK:
	case OP_RELEASE_BULK:
	case OP_REMOTE_BULK:
	case OP_REMOTE_EACH:
		n = 1 + rnd32(&m->seed) % 90;
		if (n > m->nheld)
			n = m->nheld;
		model_pick(m, buf, n);
		if (op == OP_PUT_BULK) {
			ret = ucm_umem__put_bulk(m->umem, buf, n);
		} else if (op == OP_RELEASE_BULK) {
			ret = ucm_umem__release_bulk(m->umem, buf, n);
		} else {
			struct remote_job j = {
				.op = op == OP_REMOTE_BULK ? R_PUT_BULK : R_PUT_EACH,
				.umem = m->umem, .addrs = buf, .n = n };
			ret = run_remote(&j);
		}
		UT_ASSERT(ret == 0, "op %u of %u frames: %d", op, n, ret);
		for (i = 0; i < n; i++) {
			struct books *b = &m->b[pool_of(m->umem, buf[i])];

			if (op == OP_PUT_BULK)
				b->direct++;
			else if (op == OP_RELEASE_BULK)
				b->released++;
			else
				b->remote++;
		}
		break;
	}
	return 0;
}

/* Give back everything held and check the pools are whole. */
static int model_drain(struct model *m)
{
	uint64_t buf[64];

	while (m->nheld) {
		uint32_t n = m->nheld < 64 ? m->nheld : 64;

		model_pick(m, buf, n);
		UT_ASSERT(ucm_umem__put_bulk(m->umem, buf, n) == 0, "drain");
		for (uint32_t i = 0; i < n; i++)
			m->b[pool_of(m->umem, buf[i])].direct++;
	}
	CHECK(model_check(m), "drained");
	return 0;
}

/*
 * B7: after a deterministic random workload on one pool (every return
 * path, the pool run dry now and then), every allocation is counted once
 * in fast/refill/slow and every return once in cached/ring/ring_full/
 * released; inflight matches the stack.
 */
static int test_stats_identities(void)
{
	static const uint64_t seeds[] = { 1, 0xdecafbad };
	uint32_t opcount[OP__MAX] = {};

	log_capture();
	for (unsigned int s = 0; s < 2; s++) {
		struct ucm_umem *umem = mk_umem(1, 1024, 256, 0);
		struct ucm_pool_stats st;
		struct model m;

		UT_ASSERT(umem, "create");
		CHECK(model_init(&m, umem, seeds[s]), "init");
		for (int step = 0; step < 6000; step++) {
			CHECK(model_step(&m, step / 300 % 2, opcount), "seed %u step %d", s, step);
			if (step % 500 == 499)
				CHECK(model_check(&m), "seed %u step %d", s, step);
		}
		CHECK(model_check(&m), "seed %u end", s);
		/* The workload must have reached every path it claims to test. */
		stats(umem, 0, &st);
		UT_ASSERT(st.alloc_fast && st.alloc_refill && st.alloc_slow &&
			  st.alloc_empty && st.alloc_exhausted && st.recycle_cached &&
			  st.recycle_cache_full &&
			  st.recycle_ring && st.recycle_ring_full && st.recycle_released,
			  "seed %u: a path was never taken: fast %llu refill %llu slow %llu "
			  "exhausted %llu cache_full %llu ring_full %llu released %llu", s,
			  (unsigned long long)st.alloc_fast, (unsigned long long)st.alloc_refill,
			  (unsigned long long)st.alloc_slow, (unsigned long long)st.alloc_exhausted,
			  (unsigned long long)st.recycle_cache_full,
			  (unsigned long long)st.recycle_ring_full,
			  (unsigned long long)st.recycle_released);
		CHECK(model_drain(&m), "seed %u drain", s);
		model_fini(&m);
		UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	}
	UT_ASSERT(log_warnings() == 0, "library warned: %s", log_last);
	ucm_set_print(NULL);
	return 0;
}

/*
 * A1: random operation sequences on 2 pools (one thread owns both; "remote"
 * returns run on a helper thread), the audit after every single step.
 */
static int test_random_ops_audit(void)
{
	static const uint64_t seeds[] = { 7, 42, 0x5eed5eed };
	uint32_t opcount[OP__MAX] = {};

	log_capture();
	for (unsigned int s = 0; s < 3; s++) {
		struct ucm_umem *umem = mk_umem(2, 256, 64, 0);
		struct model m;

		UT_ASSERT(umem, "create");
		CHECK(model_init(&m, umem, seeds[s]), "init");
		for (int step = 0; step < 2500; step++) {
			CHECK(model_step(&m, step / 250 % 2, opcount), "seed %u step %d", s, step);
			CHECK(model_check(&m), "seed %u step %d", s, step);
		}
		CHECK(model_drain(&m), "seed %u drain", s);
		model_fini(&m);
		UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	}
	for (int op = 0; op < OP__MAX; op++)
		UT_ASSERT(opcount[op] > 100, "op %d ran only %u times", op, opcount[op]);
	UT_ASSERT(log_warnings() == 0, "library warned: %s", log_last);
	ucm_set_print(NULL);
	return 0;
}

/* ---- 5. double free (A2) -------------------------------------------------- */

#ifdef UCM_DEBUG
static int test_double_free_debug(void)
{
	struct ucm_umem *umem = mk_umem(2, 256, 0, 0);
	struct ucm_pool *p0, *p1;
	struct ucm_pool_stats st0, st1;
	uint64_t a[8], b, dup[3];
	int ret;

	UT_ASSERT(umem, "create");
	p0 = ucm_umem__pool(umem, 0);
	p1 = ucm_umem__pool(umem, 1);
	ucm_pool__set_owner(p0);
	ucm_pool__set_owner(p1);
	UT_ASSERT(ucm_pool__alloc_bulk(p0, a, 8) == 8, "alloc");
	UT_ASSERT(ucm_pool__alloc(p1, &b) == 0, "alloc p1");
	log_capture();

	/* Owner put twice: the frame is in the cache the second time. */
	UT_ASSERT(ucm_pool__put(p0, a[0]) == 0, "first put");
	stats(umem, 0, &st0);
	errno = 0;
	ret = ucm_pool__put(p0, a[0]);
	UT_ASSERT(ret == -EALREADY && errno == EALREADY, "second put: %d errno %d", ret, errno);
	stats(umem, 0, &st1);
	UT_ASSERT(st1.double_free == st0.double_free + 1, "double_free %llu",
		  (unsigned long long)st1.double_free);
	UT_ASSERT(st1.recycle_cached == st0.recycle_cached &&
		  st1.recycle_ring == st0.recycle_ring, "the double free was recycled");
	UT_ASSERT(log_count("returned while in cache") == 1, "warning: %s", log_last);
	CHECK(audit_pool(umem, 0, 7, NULL), "after put twice");

	/* A frame sitting in the recycle ring, returned again. */
	UT_ASSERT(remote_put_bulk(umem, &a[1], 1) == 0, "remote put");
	UT_ASSERT(ucm_pool__put(p0, a[1]) == -EALREADY, "put of a frame in the ring");
	UT_ASSERT(log_count("returned while in ring") == 1, "warning: %s", log_last);
	/* A frame on the backing stack (never allocated), returned. */
	ret = ucm_pool__put(p0, 255 * 4096);
	UT_ASSERT(ret == -EALREADY, "put of a never-allocated frame: %d", ret);
	stats(umem, 0, &st1);
	UT_ASSERT(st1.double_free == st0.double_free + 3, "double_free %llu",
		  (unsigned long long)st1.double_free);
	CHECK(audit_pool(umem, 0, 6, NULL), "after ring/stack double puts");

	/* put_bulk: the same frame twice in one call, plus a frame already
	 * free, plus a good frame of the other pool. The good ones go home,
	 * the call says -EINVAL, each bad one counted on its own pool. */
	dup[0] = a[2];
	dup[1] = a[2];
	dup[2] = a[0];		/* in the cache */
	stats(umem, 0, &st0);
	errno = 0;
	ret = ucm_umem__put_bulk(umem, dup, 3);
	UT_ASSERT(ret == -EINVAL && errno == EINVAL, "put_bulk with duplicates: %d", ret);
	stats(umem, 0, &st1);
	UT_ASSERT(st1.double_free == st0.double_free + 2, "put_bulk double_free +%llu",
		  (unsigned long long)(st1.double_free - st0.double_free));
	UT_ASSERT(st1.recycle_cached == st0.recycle_cached + 1, "a[2] not returned once");
	{
		uint64_t mix[2] = { b, b };

		stats(umem, 1, &st0);
		UT_ASSERT(ucm_umem__put_bulk(umem, mix, 2) == -EINVAL, "pool 1 duplicate");
		stats(umem, 1, &st1);
		UT_ASSERT(st1.double_free == st0.double_free + 1 &&
			  st1.recycle_cached == st0.recycle_cached + 1,
			  "pool 1: double_free +%llu cached +%llu",
			  (unsigned long long)(st1.double_free - st0.double_free),
			  (unsigned long long)(st1.recycle_cached - st0.recycle_cached));
	}
	/* release_bulk of a frame already free. */
	UT_ASSERT(ucm_umem__release_bulk(umem, &a[0], 1) == -EINVAL, "release of a free frame");
	stats(umem, 0, &st1);
	UT_ASSERT(st1.recycle_released == 0, "released %llu",
		  (unsigned long long)st1.recycle_released);
	CHECK(audit_pool(umem, 0, 5, NULL), "end pool 0");
	CHECK(audit_pool(umem, 1, 0, NULL), "end pool 1");
	UT_ASSERT(ucm_umem__audit(umem, NULL, 0) == 0, "umem audit");

	UT_ASSERT(ucm_umem__put_bulk(umem, &a[3], 5) == 0, "return the rest");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	ucm_set_print(NULL);
	return 0;
}
#endif

/*
 * A2, the path release builds have: all frames back on the backing stack,
 * then one of them released again. The stack would overflow: the frame is
 * refused, double_free counted, the books still balance, and - as for any
 * rejected handle - ucm_umem__release_bulk() says -EINVAL. (Debug builds
 * catch it earlier, by the tag, with the same result.)
 */
static int test_double_free_stack_overflow(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	struct ucm_pool_stats st0, st1;
	uint64_t a[256];
	int ret, err;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 256) == 256, "alloc all");
	UT_ASSERT(ucm_umem__release_bulk(umem, a, 256) == 0, "release all");
	stats(umem, 0, &st0);
	UT_ASSERT(st0.inflight == 0 && st0.hold == 256 && st0.release == 256,
		  "inflight %lld hold %llu release %llu", (long long)st0.inflight,
		  (unsigned long long)st0.hold, (unsigned long long)st0.release);
	CHECK(audit_pool(umem, 0, 0, NULL), "all on the stack");

	log_capture();
	errno = 0;
	ret = ucm_umem__release_bulk(umem, &a[17], 1);
	err = errno;
	stats(umem, 0, &st1);
	UT_ASSERT(st1.double_free == 1, "double_free %llu", (unsigned long long)st1.double_free);
	UT_ASSERT(st1.release == 256 && st1.inflight == 0,
		  "refused frame counted: release %llu inflight %lld",
		  (unsigned long long)st1.release, (long long)st1.inflight);
	UT_ASSERT(log_warnings() == 1, "%d warnings", log_warnings());
	CHECK(audit_pool(umem, 0, 0, NULL), "after the double release");
	ucm_set_print(NULL);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	UT_ASSERT(ret == -EINVAL && err == EINVAL,
		  "release_bulk of a refused (double-freed) frame returned %d, want -EINVAL",
		  ret);
	return 0;
}

/*
 * A2 below the overflow: a frame released twice while the stack has room.
 * Debug: refused by its tag. Release: not detected at return time (by
 * design); the audit must catch the duplicate.
 */
static int test_double_release_audit(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	struct ucm_pool_stats st;
	uint64_t x;
	int ret;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc(pool, &x) == 0, "alloc");
	UT_ASSERT(ucm_umem__release_bulk(umem, &x, 1) == 0, "release");
	log_capture();
	ret = ucm_umem__release_bulk(umem, &x, 1);
	stats(umem, 0, &st);
#ifdef UCM_DEBUG
	UT_ASSERT(ret == -EINVAL, "second release: %d", ret);
	UT_ASSERT(st.double_free == 1 && st.recycle_released == 1 && st.release == 1,
		  "double_free %llu released %llu release %llu",
		  (unsigned long long)st.double_free, (unsigned long long)st.recycle_released,
		  (unsigned long long)st.release);
	CHECK(audit_pool(umem, 0, 0, NULL), "debug: books intact");
#else
	UT_ASSERT(ret == 0 && st.double_free == 0, "release build detected it? %d", ret);
	ret = ucm_pool__audit(pool, NULL, 0);
	UT_ASSERT(ret == -EUCLEAN, "audit missed a frame on the stack twice: %d", ret);
	UT_ASSERT(log_count("two places") == 1, "audit log: %s", log_text);
	/* Mended, one x off the stack: the owner's cache then fits on it
	 * at the destroy, which finds the books whole. */
	pthread_mutex_lock(&pool->stack.lock);
	for (uint32_t i = 0; i < pool->stack.top; i++) {
		if (pool->stack.frames[i] == x) {
			pool->stack.frames[i] = pool->stack.frames[--pool->stack.top];
			break;
		}
	}
	pool->stack.release--;
	pthread_mutex_unlock(&pool->stack.lock);
#endif
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	ucm_set_print(NULL);
	return 0;
}

/* ---- 6. bad addresses (A3) -------------------------------------------------- */

struct snapshot {
	struct ucm_pool_audit a[MAX_POOLS];
	struct ucm_pool_stats st[MAX_POOLS];
};

static int snap(struct ucm_umem *umem, struct snapshot *s)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t p = 0; p < ucm_umem__npools(umem); p++) {
		UT_ASSERT(ucm_pool__audit(ucm_umem__pool(umem, p), &s->a[p], sizeof(s->a[p])) == 0, "audit %u", p);
		stats(umem, p, &s->st[p]);
	}
	return 0;
}

/* Nothing moved; only pool @p's bad_addr grew by @bad (across all pools
 * when @p is -1). */
static int same_but_bad_addr(const struct snapshot *x, const struct snapshot *y,
			     int p, uint64_t bad)
{
	uint64_t total = 0;

	for (int i = 0; i < MAX_POOLS; i++) {
		struct ucm_pool_stats s = y->st[i];
		uint64_t d = s.bad_addr - x->st[i].bad_addr;

		UT_ASSERT(!memcmp(&x->a[i], &y->a[i], sizeof(x->a[i])),
			  "pool %d audit changed", i);
		if (p >= 0)
			UT_ASSERT(d == (i == p ? bad : 0), "pool %d bad_addr +%llu", i,
				  (unsigned long long)d);
		total += d;
		s.bad_addr = x->st[i].bad_addr;
		UT_ASSERT(!memcmp(&x->st[i], &s, sizeof(s)), "pool %d stats changed", i);
	}
	UT_ASSERT(total == bad, "bad_addr +%llu, want +%llu", (unsigned long long)total,
		  (unsigned long long)bad);
	return 0;
}

static int test_bad_addresses(void)
{
	struct ucm_umem *umem = mk_umem(2, 256, 0, 0);
	struct ucm_pool *p0, *p1;
	struct snapshot s0, s1;
	uint64_t a0, a1, size, bad[6];
	unsigned int i;
	int ret;

	UT_ASSERT(umem, "create");
	size = ucm_umem__size(umem);
	p0 = ucm_umem__pool(umem, 0);
	p1 = ucm_umem__pool(umem, 1);
	ucm_pool__set_owner(p0);
	ucm_pool__set_owner(p1);
	UT_ASSERT(ucm_pool__alloc(p0, &a0) == 0 && ucm_pool__alloc(p1, &a1) == 0, "alloc");
	UT_ASSERT(pool_of(umem, a0) == 0 && pool_of(umem, a1) == 1, "routing");
	log_capture();

	bad[0] = a1;		/* pool 1's frame, given to pool 0 */
	bad[1] = a0 + 1;	/* unaligned */
	bad[2] = a0 + 2048;	/* half a frame */
	bad[3] = size;		/* one past the end */
	bad[4] = size + 4096;
	bad[5] = UINT64_MAX & ~4095ull;
	for (i = 0; i < 6; i++) {
		CHECK(snap(umem, &s0), "before %u", i);
		errno = 0;
		ret = ucm_pool__put(p0, bad[i]);
		UT_ASSERT(ret == -EINVAL && errno == EINVAL, "put(p0, 0x%llx) = %d",
			  (unsigned long long)bad[i], ret);
		CHECK(snap(umem, &s1), "after %u", i);
		CHECK(same_but_bad_addr(&s0, &s1, 0, 1), "put(p0, 0x%llx)",
		      (unsigned long long)bad[i]);
	}
	/* And the other way round. */
	CHECK(snap(umem, &s0), "before");
	UT_ASSERT(ucm_pool__put(p1, a0) == -EINVAL, "pool 0's frame given to pool 1");
	UT_ASSERT(ucm_pool__put(p1, a1 + 64) == -EINVAL, "unaligned in pool 1");
	CHECK(snap(umem, &s1), "after");
	CHECK(same_but_bad_addr(&s0, &s1, 1, 2), "p1");

	/* Bulk paths: bad handles skipped and counted (on some pool), the
	 * call says -EINVAL, the pools unchanged. */
	for (i = 1; i < 6; i++) {
		CHECK(snap(umem, &s0), "bulk before %u", i);
		errno = 0;
		UT_ASSERT(ucm_umem__put_bulk(umem, &bad[i], 1) == -EINVAL && errno == EINVAL,
			  "put_bulk 0x%llx", (unsigned long long)bad[i]);
		UT_ASSERT(ucm_umem__release_bulk(umem, &bad[i], 1) == -EINVAL,
			  "release_bulk 0x%llx", (unsigned long long)bad[i]);
		CHECK(snap(umem, &s1), "bulk after %u", i);
		CHECK(same_but_bad_addr(&s0, &s1, -1, 2), "bulk 0x%llx",
		      (unsigned long long)bad[i]);
	}
	/* One inside the UMEM is counted on its frame's owner. */
	{
		uint64_t u = a1 + 1;

		CHECK(snap(umem, &s0), "owner before");
		UT_ASSERT(ucm_umem__put_bulk(umem, &u, 1) == -EINVAL &&
			  ucm_umem__release_bulk(umem, &u, 1) == -EINVAL, "unaligned in pool 1");
		CHECK(snap(umem, &s1), "owner after");
		CHECK(same_but_bad_addr(&s0, &s1, 1, 2), "unaligned in pool 1, bulk");
	}
	/* A bad handle in the middle of good ones: the good ones go home. */
	{
		uint64_t mix[3] = { a0, a1 + 1, a1 };
		struct ucm_pool_stats st0, st1;

		stats(umem, 0, &st0);
		UT_ASSERT(ucm_umem__put_bulk(umem, mix, 3) == -EINVAL, "mixed put_bulk");
		stats(umem, 0, &st1);
		UT_ASSERT(st1.recycle_cached == st0.recycle_cached + 1, "a0 not returned");
		stats(umem, 1, &st1);
		UT_ASSERT(st1.recycle_cached == 1, "a1 not returned");
		CHECK(audit_pool(umem, 0, 0, NULL), "p0");
		CHECK(audit_pool(umem, 1, 0, NULL), "p1");
	}
	UT_ASSERT(log_warnings() == 0, "bad addresses logged: %s", log_last);
	ucm_set_print(NULL);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

/* A return of two chunks of checks (64 handles each), the second of bad
 * handles alone: the path that holds one good frame back until every
 * check is done (the race it closes, with a destroy, is not run here).
 * Every good frame home, the bad ones counted, the call -EINVAL. */
static int test_bad_addresses_late(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	struct ucm_pool_stats st;
	uint64_t a[128], kept[64];
	uint32_t i;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	UT_ASSERT(!ucm_pool__set_owner(pool), "owner");
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 128) == 128, "alloc 128");
	for (i = 64; i < 128; i++) {
		kept[i - 64] = a[i];
		a[i] = (uint64_t)1 << 40;	/* outside the UMEM */
	}
	UT_ASSERT(ucm_umem__put_bulk(umem, a, 128) == -EINVAL, "64 good, 64 bad");
	stats(umem, 0, &st);
	UT_ASSERT(st.bad_addr == 64, "bad_addr %llu, want 64", (unsigned long long)st.bad_addr);
	CHECK(audit_pool(umem, 0, 64, NULL), "64 home, 64 kept");
	UT_ASSERT(!ucm_umem__put_bulk(umem, kept, 64), "the 64 kept");
	CHECK(audit_pool(umem, 0, 0, NULL), "all home");
	ucm_pool__clear_owner(pool);
	UT_ASSERT(!ucm_umem__destroy(umem, 0), "destroy");
	return 0;
}

/* ---- 7. exhaustion (B2) ---------------------------------------------------- */

static int test_exhaustion(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	struct ucm_pool_stats st0, st1;
	uint64_t a[256], extra[16];
	int ret;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 256) == 256, "alloc all");
	stats(umem, 0, &st0);
	UT_ASSERT(st0.alloc_exhausted == 0 && st0.hold == 256 && st0.alloc_slow == 4,
		  "exhausted %llu hold %llu slow %llu", (unsigned long long)st0.alloc_exhausted,
		  (unsigned long long)st0.hold, (unsigned long long)st0.alloc_slow);

	ret = ucm_pool__alloc_bulk(pool, extra, 8);
	UT_ASSERT(ret == 0, "alloc_bulk on an empty pool: %d", ret);
	errno = 0;
	ret = ucm_pool__alloc(pool, extra);
	UT_ASSERT(ret == -ENOBUFS && errno == ENOBUFS, "alloc on an empty pool: %d", ret);
	stats(umem, 0, &st1);
	UT_ASSERT(st1.alloc_exhausted == 9, "exhausted %llu, want 8 + 1",
		  (unsigned long long)st1.alloc_exhausted);
	UT_ASSERT(st1.alloc_empty == st0.alloc_empty + 2, "empty +%llu",
		  (unsigned long long)(st1.alloc_empty - st0.alloc_empty));
	UT_ASSERT(st1.alloc_fast + st1.alloc_slow + st1.alloc_refill == 256,
		  "a failed allocation was counted as served");
	CHECK(audit_pool(umem, 0, 256, NULL), "exhausted");

	/* Give 10 back (owner: into the cache); a bulk of 16 gets 10. */
	UT_ASSERT(ucm_umem__put_bulk(umem, &a[100], 10) == 0, "put 10");
	ret = ucm_pool__alloc_bulk(pool, extra, 16);
	UT_ASSERT(ret == 10, "partial alloc_bulk: %d", ret);
	stats(umem, 0, &st1);
	UT_ASSERT(st1.alloc_exhausted == 15, "exhausted %llu, want 9 + 6",
		  (unsigned long long)st1.alloc_exhausted);
	memcpy(&a[100], extra, 10 * sizeof(*extra));

	/* Returned through the ring by another thread: allocation works again. */
	UT_ASSERT(remote_put_bulk(umem, &a[200], 5) == 0, "remote put");
	UT_ASSERT(ucm_pool__alloc(pool, &a[200]) == 0, "alloc after remote return");
	UT_ASSERT(ucm_pool__alloc_bulk(pool, &a[201], 8) == 4, "the other 4");
	stats(umem, 0, &st1);
	UT_ASSERT(st1.alloc_refill == 1 && st1.alloc_exhausted == 19,
		  "refill %llu exhausted %llu", (unsigned long long)st1.alloc_refill,
		  (unsigned long long)st1.alloc_exhausted);
	/* Released to the stack: slow path again. */
	UT_ASSERT(ucm_umem__release_bulk(umem, a, 256) == 0, "release all");
	CHECK(audit_pool(umem, 0, 0, NULL), "all home");
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 256) == 256, "alloc all again");
	UT_ASSERT(ucm_pool__alloc(pool, extra) == -ENOBUFS, "exhausted again");
	UT_ASSERT(ucm_umem__put_bulk(umem, a, 256) == 0, "put all");
	CHECK(audit_pool(umem, 0, 0, NULL), "end");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

/* ---- 8. cache size and refill (B1) ------------------------------------------ */

static int expect_stats(const struct ucm_pool_stats *s, uint64_t fast, uint64_t slow,
			uint64_t empty, uint64_t refill, uint64_t cached,
			uint64_t cache_full, uint64_t ring, uint64_t ring_full,
			uint64_t hold, uint64_t release)
{
	UT_ASSERT(s->alloc_fast == fast && s->alloc_slow == slow && s->alloc_empty == empty &&
		  s->alloc_refill == refill,
		  "alloc fast %llu slow %llu empty %llu refill %llu, want %llu %llu %llu %llu",
		  (unsigned long long)s->alloc_fast, (unsigned long long)s->alloc_slow,
		  (unsigned long long)s->alloc_empty, (unsigned long long)s->alloc_refill,
		  (unsigned long long)fast, (unsigned long long)slow,
		  (unsigned long long)empty, (unsigned long long)refill);
	UT_ASSERT(s->recycle_cached == cached && s->recycle_cache_full == cache_full &&
		  s->recycle_ring == ring && s->recycle_ring_full == ring_full,
		  "recycle cached %llu cache_full %llu ring %llu ring_full %llu, "
		  "want %llu %llu %llu %llu",
		  (unsigned long long)s->recycle_cached, (unsigned long long)s->recycle_cache_full,
		  (unsigned long long)s->recycle_ring, (unsigned long long)s->recycle_ring_full,
		  (unsigned long long)cached, (unsigned long long)cache_full,
		  (unsigned long long)ring, (unsigned long long)ring_full);
	UT_ASSERT(s->hold == hold && s->release == release &&
		  s->inflight == (int64_t)(hold - release),
		  "hold %llu release %llu inflight %lld, want %llu %llu",
		  (unsigned long long)s->hold, (unsigned long long)s->release,
		  (long long)s->inflight, (unsigned long long)hold, (unsigned long long)release);
	return 0;
}

static int expect_locs(struct ucm_umem *umem, uint32_t p, uint32_t stack, uint32_t cache,
		       uint32_t ring, uint32_t app)
{
	struct ucm_pool_audit a;

	CHECK(audit_pool(umem, p, app, &a), "audit");
	UT_ASSERT(a.loc[UCM_LOC_STACK] == stack && a.loc[UCM_LOC_CACHE] == cache &&
		  a.loc[UCM_LOC_RING] == ring,
		  "stack %u cache %u ring %u, want %u %u %u", a.loc[UCM_LOC_STACK],
		  a.loc[UCM_LOC_CACHE], a.loc[UCM_LOC_RING], stack, cache, ring);
	return 0;
}

static int test_cache_and_refill(void)
{
	struct ucm_umem *umem = ucm_umem__create(NULL);
	struct ucm_pool *pool;
	struct ucm_pool_stats st;
	uint64_t a[256], one;
	int i;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);

	/* First frame from a fresh pool: the slow path takes a bulk of 64. */
	UT_ASSERT(ucm_pool__alloc(pool, &one) == 0, "alloc");
	UT_ASSERT(one == 0, "first frame 0x%llx", (unsigned long long)one);
	stats(umem, 0, &st);
	CHECK(expect_stats(&st, 0, 1, 1, 0, 0, 0, 0, 0, 64, 0), "first alloc");
	CHECK(expect_locs(umem, 0, 4096 - 64, 63, 0, 1), "first alloc");
	/* The next 63 come from the cache, one at a time, in address order. */
	for (i = 1; i < 64; i++) {
		UT_ASSERT(ucm_pool__alloc(pool, &a[i]) == 0, "alloc %d", i);
		UT_ASSERT(a[i] == (uint64_t)i * 4096, "frame %d is 0x%llx", i,
			  (unsigned long long)a[i]);
	}
	a[0] = one;
	stats(umem, 0, &st);
	CHECK(expect_stats(&st, 63, 1, 1, 0, 0, 0, 0, 0, 64, 0), "64 allocs");
	/* 192 more: three more slow bulks, the cache ends empty. */
	UT_ASSERT(ucm_pool__alloc_bulk(pool, &a[64], 192) == 192, "alloc 192");
	stats(umem, 0, &st);
	CHECK(expect_stats(&st, 252, 4, 4, 0, 0, 0, 0, 0, 256, 0), "256 allocs");
	CHECK(expect_locs(umem, 0, 4096 - 256, 0, 0, 256), "256 allocs");

	/* The owner returns 200 one by one: 128 fill the cache, 72 overflow
	 * into the recycle ring. */
	for (i = 0; i < 200; i++)
		UT_ASSERT(ucm_pool__put(pool, a[i]) == 0, "put %d", i);
	stats(umem, 0, &st);
	CHECK(expect_stats(&st, 252, 4, 4, 0, 128, 72, 72, 0, 256, 0), "200 direct returns");
	CHECK(expect_locs(umem, 0, 4096 - 256, 128, 72, 56), "200 direct returns");

	/* LIFO: the last frame cached is the first handed out. */
	UT_ASSERT(ucm_pool__alloc(pool, &one) == 0 && one == a[127],
		  "got 0x%llx, want the hot 0x%llx", (unsigned long long)one,
		  (unsigned long long)a[127]);
	UT_ASSERT(ucm_pool__put(pool, one) == 0, "put it back");
	stats(umem, 0, &st);
	CHECK(expect_stats(&st, 253, 4, 4, 0, 129, 72, 72, 0, 256, 0), "LIFO");

	/* 200 allocations: 128 from the cache, then a refill of 64 from the
	 * ring (1 refill + 63 fast), then the last 8 (1 refill + 7 fast). */
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 200) == 200, "realloc 200");
	stats(umem, 0, &st);
	CHECK(expect_stats(&st, 253 + 198, 4, 4, 2, 129, 72, 72, 0, 256, 0), "realloc 200");
	CHECK(expect_locs(umem, 0, 4096 - 256, 0, 0, 256), "realloc 200");
	/* Ring and cache dry: the next one is slow again. */
	UT_ASSERT(ucm_pool__alloc(pool, &one) == 0, "alloc");
	stats(umem, 0, &st);
	CHECK(expect_stats(&st, 451, 5, 5, 2, 129, 72, 72, 0, 320, 0), "slow again");
	UT_ASSERT(ucm_umem__release_bulk(umem, &one, 1) == 0, "release");
	stats(umem, 0, &st);
	UT_ASSERT(st.recycle_released == 1 && st.release == 1, "released %llu release %llu",
		  (unsigned long long)st.recycle_released, (unsigned long long)st.release);

	/* The owner's put_bulk (16 per group) with 63 frames in the cache:
	 * 65 fill it, 135 overflow into the ring. */
	UT_ASSERT(ucm_umem__put_bulk(umem, a, 200) == 0, "put_bulk 200");
	stats(umem, 0, &st);
	UT_ASSERT(st.recycle_cached == 129 + 65 && st.recycle_cache_full == 72 + 135 &&
		  st.recycle_ring == 72 + 135, "put_bulk: cached %llu cache_full %llu ring %llu",
		  (unsigned long long)st.recycle_cached,
		  (unsigned long long)st.recycle_cache_full,
		  (unsigned long long)st.recycle_ring);
	CHECK(expect_locs(umem, 0, 4096 - 320 + 1, 128, 135, 56), "put_bulk 200");
	UT_ASSERT(ucm_umem__put_bulk(umem, &a[200], 56) == 0, "put the rest");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

/* ---- 9. recycle ring full (B3) ---------------------------------------------- */

static int ring_full_case(uint32_t ring_size, uint32_t n, bool bulk)
{
	UCM_OPTS(ucm_umem_opts, o, .ring_size = ring_size);
	struct ucm_umem *umem = ucm_umem__create(&o);
	uint32_t want_ring = ring_size ? ring_size : UCM_POOL_RING_DEFAULT;
	uint32_t slow = (n + 63) / 64, cache_left = slow * 64 - n;
	struct ucm_pool *pool;
	struct ucm_pool_stats st;
	struct remote_job j;
	uint64_t *a = calloc(4096, sizeof(*a));

	UT_ASSERT(umem && a, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, n) == (int)n, "alloc %u", n);
	j = (struct remote_job){ .op = bulk ? R_PUT_BULK : R_PUT_EACH, .umem = umem,
				 .addrs = a, .n = n };
	UT_ASSERT(run_remote(&j) == 0, "remote returns");
	stats(umem, 0, &st);
	CHECK(expect_stats(&st, n - slow, slow, slow, 0, 0, 0, want_ring, n - want_ring,
			   slow * 64, n - want_ring), "ring %u, %u returns", want_ring, n);
	CHECK(expect_locs(umem, 0, 4096 - slow * 64 + (n - want_ring), cache_left, want_ring, 0),
	      "ring %u", want_ring);

	/* No frame lost: all 4096 can be allocated, the ring is drained by
	 * refills. */
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 4096) == 4096, "alloc everything");
	stats(umem, 0, &st);
	UT_ASSERT(st.alloc_refill == want_ring / 64, "refills %llu",
		  (unsigned long long)st.alloc_refill);
	CHECK(expect_locs(umem, 0, 0, 0, 0, 4096), "all out");
	UT_ASSERT(ucm_umem__put_bulk(umem, a, 4096) == 0, "put all");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	free(a);
	return 0;
}

static int test_ring_full(void)
{
	CHECK(ring_full_case(256, 300, true), "ring 256, put_bulk");
	CHECK(ring_full_case(256, 300, false), "ring 256, single puts");
	CHECK(ring_full_case(0, 1100, true), "default ring");
	return 0;
}

/* ---- 10. direct bulk switch ------------------------------------------------- */

static int direct_bulk_case(uint32_t flags)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, flags);
	bool nodirect = flags & UCM_UMEM_F_NO_DIRECT_BULK;
	struct ucm_pool *pool;
	struct ucm_pool_stats st;
	uint64_t a[64];

	UT_ASSERT(umem, "create");
	UT_ASSERT(ucm_umem__flags(umem) == flags, "flags %#x", ucm_umem__flags(umem));
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 64) == 64, "alloc");

	/* The owner's bulk return. */
	UT_ASSERT(ucm_umem__put_bulk(umem, a, 40) == 0, "put_bulk");
	stats(umem, 0, &st);
	UT_ASSERT(st.recycle_cached == (nodirect ? 0 : 40) &&
		  st.recycle_ring == (nodirect ? 40 : 0) && st.recycle_cache_full == 0,
		  "flags %#x: owner put_bulk: cached %llu ring %llu", flags,
		  (unsigned long long)st.recycle_cached, (unsigned long long)st.recycle_ring);
	CHECK(expect_locs(umem, 0, 192, nodirect ? 0 : 40, nodirect ? 40 : 0, 24), "put_bulk");
	/* The owner's single put always takes the cache. */
	UT_ASSERT(ucm_pool__put(pool, a[40]) == 0, "put");
	stats(umem, 0, &st);
	UT_ASSERT(st.recycle_cached == (nodirect ? 1 : 41) &&
		  st.recycle_ring == (nodirect ? 40 : 0),
		  "flags %#x: owner put: cached %llu ring %llu", flags,
		  (unsigned long long)st.recycle_cached, (unsigned long long)st.recycle_ring);
	/* Another thread's bulk: the ring either way. */
	UT_ASSERT(remote_put_bulk(umem, &a[41], 23) == 0, "remote");
	stats(umem, 0, &st);
	UT_ASSERT(st.recycle_cached == (nodirect ? 1 : 41) &&
		  st.recycle_ring == (nodirect ? 63 : 23), "flags %#x: remote put_bulk", flags);
	CHECK(audit_pool(umem, 0, 0, NULL), "end");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

static int test_direct_bulk_switch(void)
{
	CHECK(direct_bulk_case(0), "direct bulk on");
	CHECK(direct_bulk_case(UCM_UMEM_F_NO_DIRECT_BULK), "NO_DIRECT_BULK");
	return 0;
}

/*
 * One bulk, two pools, a caller that owns only one of them: an RX thread
 * returning TX completions that hold another queue's frames. Locality is
 * each pool's own: pool 0's frames go into its cache, pool 1's into its
 * recycle ring (its cache is its owner's alone), whichever pool's frame
 * comes first. 20 frames of each pool a bulk: a pool group crosses
 * UCM_POOL_PUT_BULK.
 */
#define MIXED_N		20

static int mixed_put(struct ucm_umem *umem, const uint64_t *a, const char *what,
		     struct ucm_pool_stats *st0)
{
	struct ucm_pool_stats st[2];
	uint32_t p;

	UT_ASSERT(ucm_umem__put_bulk(umem, a, 2 * MIXED_N) == 0, "%s: put_bulk", what);
	for (p = 0; p < 2; p++) {
		uint64_t cached, ring;

		stats(umem, p, &st[p]);
		cached = st[p].recycle_cached - st0[p].recycle_cached;
		ring = st[p].recycle_ring - st0[p].recycle_ring;
		UT_ASSERT(cached == (p ? 0 : MIXED_N) && ring == (p ? MIXED_N : 0) &&
			  st[p].recycle_cache_full == st0[p].recycle_cache_full &&
			  st[p].recycle_ring_full == st0[p].recycle_ring_full,
			  "%s: pool %u (%s): cached +%llu ring +%llu, want +%u +%u", what, p,
			  p ? "not ours" : "ours", (unsigned long long)cached,
			  (unsigned long long)ring, p ? 0 : MIXED_N, p ? MIXED_N : 0);
		st0[p] = st[p];
	}
	return 0;
}

static int test_mixed_pool_bulk_one_owner(void)
{
	struct ucm_umem *umem = mk_umem(2, 256, 0, 0);
	uint64_t f[2][2 * MIXED_N], a[2 * MIXED_N];
	struct ucm_pool_stats st0[2];
	struct ucm_pool *pool[2];
	uint32_t p, i;

	UT_ASSERT(umem, "create");
	for (p = 0; p < 2; p++) {
		pool[p] = ucm_umem__pool(umem, p);
		ucm_pool__set_owner(pool[p]);
		UT_ASSERT(ucm_pool__alloc_bulk(pool[p], f[p], 2 * MIXED_N) == 2 * MIXED_N,
			  "pool %u: alloc", p);
		for (i = 0; i < 2 * MIXED_N; i++)
			UT_ASSERT(pool_of(umem, f[p][i]) == p, "frame 0x%llx not of pool %u",
				  (unsigned long long)f[p][i], p);
	}
	/* Pool 1 is another thread's (none here): we keep pool 0 only. */
	ucm_pool__clear_owner(pool[1]);
	UT_ASSERT(ucm_pool__is_owner(pool[0]) && !ucm_pool__is_owner(pool[1]), "owners");
	stats(umem, 0, &st0[0]);
	stats(umem, 1, &st0[1]);

	/* Pool 1's frame first: 1 0 0 1 1 0 0 1 ... */
	for (i = 0; i < 2 * MIXED_N; i++)
		a[i] = f[(i + 1) / 2 % 2 ? 0 : 1][i / 2];
	CHECK(mixed_put(umem, a, "pool 1 first", st0), "pool 1 first");
	/* Pool 0's frame first: 0 1 0 1 ... */
	for (i = 0; i < 2 * MIXED_N; i++)
		a[i] = f[i % 2][MIXED_N + i / 2];
	CHECK(mixed_put(umem, a, "pool 0 first", st0), "pool 0 first");

	/* Each pool's slow path took 64 and left 24 in its cache; the 40
	 * returned are in pool 0's cache, in pool 1's ring. */
	CHECK(expect_locs(umem, 0, 256 - 64, 24 + 2 * MIXED_N, 0, 0), "pool 0");
	CHECK(expect_locs(umem, 1, 256 - 64, 24, 2 * MIXED_N, 0), "pool 1");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

/* ---- 11. destroy with frames out (A6) ---------------------------------------- */

static int test_destroy_busy(void)
{
	struct ucm_umem *umem = mk_umem(2, 256, 0, 0);
	struct ucm_pool *p0, *p1;
	uint64_t a[16], t0, ms;
	unsigned char *area;
	int ret, i;

	UT_ASSERT(umem, "create");
	p0 = ucm_umem__pool(umem, 0);
	p1 = ucm_umem__pool(umem, 1);
	ucm_pool__set_owner(p0);
	ucm_pool__set_owner(p1);
	UT_ASSERT(ucm_pool__alloc_bulk(p0, a, 10) == 10, "alloc p0");
	UT_ASSERT(ucm_pool__alloc_bulk(p1, &a[10], 5) == 5, "alloc p1");
	/* Some frames parked in the cache and the ring too: destroy must
	 * take those home and count only the 15 really out. */
	UT_ASSERT(ucm_pool__alloc(p0, &a[15]) == 0, "alloc");
	UT_ASSERT(remote_put_bulk(umem, &a[15], 1) == 0, "remote put");

	log_capture();
	t0 = now_ns();
	errno = 0;
	ret = ucm_umem__destroy(umem, 50);
	ms = (now_ns() - t0) / 1000000;
	UT_ASSERT(ret == -EBUSY && errno == EBUSY, "destroy with frames out: %d", ret);
	UT_ASSERT(ms >= 45 && ms < 1000, "destroy gave up after %llu ms, timeout 50",
		  (unsigned long long)ms);
	UT_ASSERT(log_count("stalled pool shutdown") == 2, "warnings: %s", log_text);
	UT_ASSERT(log_count("pool 0, 10 frames inflight") == 1, "pool 0 count: %s", log_text);
	UT_ASSERT(log_count("pool 1, 5 frames inflight") == 1, "pool 1 count: %s", log_text);

	/* Nothing was freed: the frames are still memory, the books intact,
	 * the cache and ring drained to the stack. */
	area = ucm_umem__area(umem);
	for (i = 0; i < 15; i++)
		memset(area + a[i], 0xa5, ucm_umem__frame_size(umem));
	CHECK(expect_locs(umem, 0, 246, 0, 0, 10), "pool 0 after -EBUSY");
	CHECK(expect_locs(umem, 1, 251, 0, 0, 5), "pool 1 after -EBUSY");
	/* Direct recycling is off now; the pool still allocates once it has
	 * an owner again. */
	UT_ASSERT(!ucm_pool__is_owner(p0), "destroy left the owner set");
	UT_ASSERT(ucm_pool__set_owner(p0) == 0 && ucm_pool__alloc(p0, &a[15]) == 0,
		  "alloc after -EBUSY");
	UT_ASSERT(ucm_umem__put_bulk(umem, &a[15], 1) == 0, "put it back");

	/* A second attempt with everything still out fails the same way. */
	UT_ASSERT(ucm_umem__destroy(umem, 0) == -EBUSY, "second destroy");
	UT_ASSERT(log_count("stalled pool shutdown") == 4, "warnings: %s", log_text);

	/* Bring them home: destroy succeeds, without a warning. */
	UT_ASSERT(ucm_umem__put_bulk(umem, a, 15) == 0, "return all");
	i = log_warnings();
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy after the returns");
	UT_ASSERT(log_warnings() == i, "warned: %s", log_last);
	ucm_set_print(NULL);
	return 0;
}

/*
 * destroy() while a thread returns the last @n frames late (@op: through
 * the ring, or released straight to the backing stack): it must wait for
 * them, and must not free the pool while the returner may still be inside
 * it (page_pool takes and releases the producer lock before it trusts
 * inflight; under TSan a missing synchronisation shows as a race between
 * destroy's free() and the returner's writes). The job starts after 30 ms
 * and returns in bulks 10 ms apart: destroy must take at least @min_ms.
 */
static int run_late_destroy(int op, uint32_t n, uint64_t min_ms)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	struct remote_job j;
	uint64_t a[200], t0, ms;
	int ret;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, n) == (int)n, "alloc");
	j = (struct remote_job){ .op = op, .umem = umem, .addrs = a, .n = n,
				 .delay_ms = 30 };
	log_capture();
	t0 = now_ns();
	UT_ASSERT(pthread_create(&j.thr, NULL, remote_fn, &j) == 0, "thread");
	ret = ucm_umem__destroy(umem, 2000);
	ms = (now_ns() - t0) / 1000000;
	pthread_join(j.thr, NULL);
	ucm_set_print(NULL);
	UT_ASSERT(ret == 0, "destroy: %d after %llu ms", ret, (unsigned long long)ms);
	UT_ASSERT(j.ret == 0, "late return: %d", j.ret);
	UT_ASSERT(ms >= min_ms && ms < 2000, "destroy returned after %llu ms",
		  (unsigned long long)ms);
	UT_ASSERT(log_count("stalled") == 0, "warnings: %s", log_text);
	return 0;
}

/* Through the ring: 30 ms, then 4 bulks 10 ms apart. */
static int test_destroy_waits_for_late_returns(void)
{
	return run_late_destroy(R_DELAYED_PUT, 100, 55);
}

static int test_destroy_waits_for_late_release(void)
{
	return run_late_destroy(R_DELAYED_RELEASE, 200, 25);
}

#ifdef UCM_DEBUG
/* A return that names where its frames are is checked against their
 * tags, a chain frame's place (UCM_LOC_CHAIN, the audit's count past its
 * places) as any other: a frame still allocated, returned as a chain's,
 * aborts (in a child); the same frame returned from anywhere is taken. */
static int test_put_from_chain_checked(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	uint64_t a;
	int status = 0;
	pid_t pid;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(!ucm_pool__alloc(pool, &a), "alloc");
	fflush(NULL);
	pid = fork();
	UT_ASSERT(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		ucm_set_print(NULL);
		/* Only the abort is asked for: no core file. */
		signal(SIGABRT, SIG_DFL);
		(void)setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
		ucm_umem_put_bulk_from(umem, &a, 1, UCM_LOC_CHAIN, false);
		_exit(0);
	}
	UT_ASSERT(waitpid(pid, &status, 0) == pid, "waitpid");
	UT_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		  "an allocated frame returned as a chain's: %s %d, want killed by SIGABRT",
		  WIFSIGNALED(status) ? "killed by" : "exit", WIFSIGNALED(status) ?
		  WTERMSIG(status) : WEXITSTATUS(status));
	UT_ASSERT(!ucm_umem__put_bulk(umem, &a, 1), "the same frame from anywhere");
	UT_ASSERT(!ucm_umem__destroy(umem, 100), "destroy");
	return 0;
}
#endif

/*
 * A frame given back twice where nothing checks each return (a release
 * build: put here by hand, as that build's stack would take it while it
 * has room): the counts say none is out while one is. The destroy finds
 * the frame twice on the stack and frees nothing (-EUCLEAN); once the
 * stack is mended and the frame home, it frees.
 */
static int test_destroy_double_release(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	uint64_t a[256];
	int ret;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc_bulk(pool, a, 256) == 256, "alloc all");
	UT_ASSERT(!ucm_umem__release_bulk(umem, a, 1) && !ucm_umem__release_bulk(umem, a + 2, 254),
		  "release all but a[1]");
	pthread_mutex_lock(&pool->stack.lock);
	pool->stack.frames[pool->stack.top++] = a[0];	/* a[0] again */
	pool->stack.release++;
	pthread_mutex_unlock(&pool->stack.lock);
	ucm_pool__clear_owner(pool);
	UT_ASSERT(ucm_pool__inflight(pool) == 0, "inflight %lld", (long long)ucm_pool__inflight(pool));
	log_capture();
	ret = ucm_umem__destroy(umem, 0);
	ucm_set_print(NULL);
	UT_ASSERT(ret == -EUCLEAN, "destroy with a[1] still out: %d, want -EUCLEAN", ret);
	/* One a[0] out (the destroy's look sorted the stack in place). */
	pthread_mutex_lock(&pool->stack.lock);
	for (uint32_t i = 0; i < pool->stack.top; i++) {
		if (pool->stack.frames[i] == a[0]) {
			pool->stack.frames[i] = pool->stack.frames[--pool->stack.top];
			break;
		}
	}
	pool->stack.release--;
	pthread_mutex_unlock(&pool->stack.lock);
	UT_ASSERT(!ucm_umem__release_bulk(umem, a + 1, 1), "a[1] home");
	UT_ASSERT(!ucm_umem__destroy(umem, 0), "destroy");
	return 0;
}

/* ---- inflight read while the owner takes and gives back ---------------------- */

struct churn {
	struct ucm_umem *umem;
	_Atomic int stop;
	uint64_t rounds;
};

/* The owner: 64 frames taken (the stack's pops, hold) and given straight
 * back (its pushes, release), over and over. */
static void *churn_fn(void *arg)
{
	struct churn *c = arg;
	struct ucm_pool *p = ucm_umem__pool(c->umem, 0);
	uint64_t a[64];
	int n;

	ucm_pool__set_owner(p);
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		n = ucm_pool__alloc_bulk(p, a, 64);
		if (n > 0)
			ucm_umem__release_bulk(c->umem, a, n);
		c->rounds++;
	}
	ucm_pool__clear_owner(p);
	return NULL;
}

/* Read without the lock, inflight is never below 0 (a take and its
 * return between the reader's two loads must not show). */
static int test_inflight_never_negative(void)
{
	struct churn c = { .umem = mk_umem(1, 256, 0, 0) };
	struct ucm_pool_stats st;
	int64_t low = 0, v;
	uint64_t reads = 0, end;
	pthread_t t;

	UT_ASSERT(c.umem, "umem");
	UT_ASSERT(!pthread_create(&t, NULL, churn_fn, &c), "thread");
	end = now_ns() + 300000000ull;
	while (now_ns() < end) {
		v = ucm_pool__inflight(ucm_umem__pool(c.umem, 0));
		low = v < low ? v : low;
		ucm_pool__stats(ucm_umem__pool(c.umem, 0), &st, sizeof(st));
		low = st.inflight < low ? st.inflight : low;
		reads++;
	}
	atomic_store_explicit(&c.stop, 1, memory_order_relaxed);
	pthread_join(t, NULL);
	UT_ASSERT(low >= 0, "inflight read as %lld (%llu reads, %llu rounds)",
		  (long long)low, (unsigned long long)reads, (unsigned long long)c.rounds);
	UT_ASSERT(!ucm_umem__destroy(c.umem, 0), "destroy");
	return 0;
}

/* ---- 12. concurrent remote returns (B4) -------------------------------------- */

#define CC_REMOTES	3
#define CC_MAX_FRAMES	16000000
#define CC_MAX_NS	1500000000ull

struct cc_remote {
	struct ucm_umem *umem;
	struct ucm_ring *r;	/* SPSC: the owner produces, this thread consumes */
	_Atomic int stop;
	uint64_t seed;
	uint64_t got, returned, bulks;
	char err[256];
	pthread_t thr;
};

/* Frame stamp: word 0 = its own address, word 1 = generation (0 = free). */
static void *cc_remote_fn(void *arg)
{
	struct cc_remote *c = arg;
	uint64_t *area = ucm_umem__area(c->umem);
	uint64_t in[64], pend[128];
	uint32_t npend = 0, n, i;

	for (;;) {
		n = ucm_ring__consume(c->r, in, 1 + rnd32(&c->seed) % 64);
		if (!n) {
			if (npend) {
				/* Nothing new: return what we have. */
				goto flush;
			}
			if (atomic_load_explicit(&c->stop, memory_order_acquire) &&
			    ucm_ring__empty(c->r))
				break;
			sched_yield();
			continue;
		}
		for (i = 0; i < n; i++) {
			uint64_t a = in[i], *w = (uint64_t *)((char *)area + a);

			if (!c->err[0] && (w[0] != a || w[1] == 0))
				snprintf(c->err, sizeof(c->err),
					 "frame 0x%llx stamped 0x%llx gen %llu: handed out twice?",
					 (unsigned long long)a, (unsigned long long)w[0],
					 (unsigned long long)w[1]);
			w[1] = 0;
			pend[npend++] = a;
		}
		c->got += n;
flush:
		/* Random bulk sizes, 1..40, possibly several per round. */
		while (npend) {
			uint32_t k = 1 + rnd32(&c->seed) % 40;

			if (k > npend)
				k = npend;
			if (ucm_umem__put_bulk(c->umem, pend + npend - k, k) && !c->err[0])
				snprintf(c->err, sizeof(c->err), "put_bulk failed");
			npend -= k;
			c->returned += k;
			c->bulks++;
			if (npend < 64 && rnd32(&c->seed) % 2)
				break;	/* keep a few for the next round */
		}
	}
	return NULL;
}

static int test_concurrent_remote_returns(void)
{
	struct ucm_umem *umem = mk_umem(2, 1024, 256, 0);
	struct cc_remote rem[CC_REMOTES];
	struct ucm_pool *pools[2];
	uint64_t allocs[2] = {}, direct[2] = {}, handed = 0, total = 0, gen = 0;
	uint64_t seed = 0xabcdef, t0, buf[64], *area;
	uint64_t returned = 0, ring = 0, ring_full = 0, cache_full = 0, cached = 0;
	int r, ret = 0;

	UT_ASSERT(umem, "create");
	area = ucm_umem__area(umem);
	for (int p = 0; p < 2; p++) {
		pools[p] = ucm_umem__pool(umem, p);
		ucm_pool__set_owner(pools[p]);
	}
	log_capture();
	for (r = 0; r < CC_REMOTES; r++) {
		memset(&rem[r], 0, sizeof(rem[r]));
		rem[r].umem = umem;
		rem[r].seed = 0x1234567ull * (r + 1);
		rem[r].r = ucm_ring__create(256, UCM_RING_SP);
		UT_ASSERT(rem[r].r, "ring");
		UT_ASSERT(pthread_create(&rem[r].thr, NULL, cc_remote_fn, &rem[r]) == 0, "thread");
	}

	t0 = now_ns();
	while (total < CC_MAX_FRAMES && !ret) {
		uint32_t p = rnd32(&seed) % 2, k = 1 + rnd32(&seed) % 48, i, done;
		int got = ucm_pool__alloc_bulk(pools[p], buf, k);

		if (got < 0) {
			ut_fail_reason("alloc_bulk: %d", got);
			ret = 1;
			break;
		}
		if (!got) {
			/* Everything is with the remotes: let them work. */
			sched_yield();
			if (now_ns() - t0 > CC_MAX_NS)
				break;
			continue;
		}
		allocs[p] += got;
		total += got;
		for (i = 0; i < (uint32_t)got; i++) {
			uint64_t *w = (uint64_t *)((char *)area + buf[i]);

			if (pool_of(umem, buf[i]) != p || w[1] != 0) {
				ut_fail_reason("pool %u handed out 0x%llx (pool %u), gen %llu: "
					       "not free", p, (unsigned long long)buf[i],
					       pool_of(umem, buf[i]), (unsigned long long)w[1]);
				ret = 1;
			}
			w[0] = buf[i];
			w[1] = ++gen;
		}
		if (rnd32(&seed) % 8 == 0) {
			/* The owner drops these itself: the direct path. */
			for (i = 0; i < (uint32_t)got; i++) {
				((uint64_t *)((char *)area + buf[i]))[1] = 0;
				if (ucm_pool__put(pools[p], buf[i])) {
					ut_fail_reason("owner put");
					ret = 1;
				}
			}
			direct[p] += got;
			continue;
		}
		r = rnd32(&seed) % CC_REMOTES;
		for (done = 0; done < (uint32_t)got;) {
			uint32_t q = ucm_ring__produce(rem[r].r, buf + done, got - done);

			done += q;
			if (!q) {
				r = (r + 1) % CC_REMOTES;	/* try another */
				sched_yield();
			}
		}
		handed += got;
		if (now_ns() - t0 > CC_MAX_NS)
			break;
	}
	for (r = 0; r < CC_REMOTES; r++)
		atomic_store_explicit(&rem[r].stop, 1, memory_order_release);
	for (r = 0; r < CC_REMOTES; r++) {
		pthread_join(rem[r].thr, NULL);
		ucm_ring__destroy(rem[r].r);
	}
	if (ret)
		return ret;
	for (r = 0; r < CC_REMOTES; r++) {
		UT_ASSERT(!rem[r].err[0], "remote %d: %s", r, rem[r].err);
		UT_ASSERT(rem[r].got == rem[r].returned, "remote %d kept frames", r);
		UT_ASSERT(rem[r].bulks > 0, "remote %d idle", r);
		returned += rem[r].returned;
	}
	UT_ASSERT(returned == handed, "remotes returned %llu of %llu",
		  (unsigned long long)returned, (unsigned long long)handed);
	UT_ASSERT(total > 20000, "only %llu frames in %.1f s", (unsigned long long)total,
		  CC_MAX_NS / 1e9);

	/* All frames home, every allocation and return accounted. */
	for (int p = 0; p < 2; p++) {
		struct ucm_pool_stats st;

		stats(umem, p, &st);
		CHECK(audit_pool(umem, p, 0, NULL), "pool %d at the end", p);
		UT_ASSERT(st.alloc_fast + st.alloc_refill + st.alloc_slow == allocs[p],
			  "pool %d: %llu allocations counted, %llu made", p,
			  (unsigned long long)(st.alloc_fast + st.alloc_refill + st.alloc_slow),
			  (unsigned long long)allocs[p]);
		UT_ASSERT(st.recycle_cached + st.recycle_cache_full == direct[p],
			  "pool %d: direct returns", p);
		UT_ASSERT(st.release == st.recycle_ring_full, "pool %d: release", p);
		UT_ASSERT(st.bad_addr == 0 && st.double_free == 0, "pool %d: bad %llu double %llu",
			  p, (unsigned long long)st.bad_addr, (unsigned long long)st.double_free);
		ring += st.recycle_ring;
		ring_full += st.recycle_ring_full;
		cache_full += st.recycle_cache_full;
		cached += st.recycle_cached;
	}
	UT_ASSERT(ring + ring_full == handed + cache_full,
		  "ring %llu + ring_full %llu != %llu remote + %llu cache_full",
		  (unsigned long long)ring, (unsigned long long)ring_full,
		  (unsigned long long)handed, (unsigned long long)cache_full);
	UT_ASSERT(cached + ring + ring_full == total,
		  "%llu returns counted, %llu frames allocated and returned",
		  (unsigned long long)(cached + ring + ring_full), (unsigned long long)total);
	UT_ASSERT(ucm_umem__audit(umem, NULL, 0) == 0, "umem audit");
	UT_ASSERT(log_warnings() == 0, "library warned: %s", log_last);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	ucm_set_print(NULL);
	return 0;
}

/*
 * The getters take the caller's struct size: an older, smaller struct gets
 * its part and nothing past it is written; a newer, larger one gets ours
 * and zeros past it; no struct or size 0 is refused.
 */
static int test_stats_sized(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool *pool;
	struct {
		struct ucm_pool_stats st;
		uint8_t more[16];
	} big;
	struct {
		struct ucm_pool_audit a;
		uint8_t more[16];
	} bigger;
	struct ucm_pool_stats st, full;
	struct ucm_pool_audit a;
	size_t part = offsetof(struct ucm_pool_stats, hold);
	uint64_t addr;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc(pool, &addr) == 0, "alloc");
	UT_ASSERT(ucm_pool__stats(pool, &full, sizeof(full)) == 0, "full size");
	UT_ASSERT(full.hold && full.inflight > 0, "hold %llu inflight %lld",
		  (unsigned long long)full.hold, (long long)full.inflight);

	memset(&st, 0xa5, sizeof(st));
	UT_ASSERT(ucm_pool__stats(pool, &st, part) == 0, "older, smaller");
	UT_ASSERT(!memcmp(&st, &full, part), "the older struct's part");
	for (size_t i = part; i < sizeof(st); i++)
		UT_ASSERT(((uint8_t *)&st)[i] == 0xa5, "byte %zu past its size written", i);

	memset(&big, 0xa5, sizeof(big));
	UT_ASSERT(ucm_pool__stats(pool, &big.st, sizeof(big)) == 0, "newer, larger");
	UT_ASSERT(!memcmp(&big.st, &full, sizeof(full)), "ours in the newer struct");
	for (size_t i = 0; i < sizeof(big.more); i++)
		UT_ASSERT(big.more[i] == 0, "byte %zu past ours not zeroed", i);

	UT_ASSERT(ucm_pool__stats(pool, &st, 0) == -EINVAL && errno == EINVAL, "sz 0");
	UT_ASSERT(ucm_pool__stats(pool, NULL, sizeof(st)) == -EINVAL, "no struct");

	memset(&bigger, 0xa5, sizeof(bigger));
	UT_ASSERT(ucm_pool__audit(pool, &bigger.a, sizeof(bigger)) == 0, "audit, larger");
	UT_ASSERT(bigger.a.loc[UCM_LOC_APP] == 1, "the frame held is in APP");
	for (size_t i = 0; i < sizeof(bigger.more); i++)
		UT_ASSERT(bigger.more[i] == 0, "audit: byte %zu past ours not zeroed", i);
	UT_ASSERT(ucm_pool__audit(pool, &a, 0) == -EINVAL, "audit: sz 0");
	UT_ASSERT(ucm_pool__audit(pool, NULL, 0) == 0, "audit: no struct, sz ignored");
	UT_ASSERT(ucm_umem__audit(umem, &a, 0) == -EINVAL, "umem audit: sz 0");
	memset(&a, 0xa5, sizeof(a));
	UT_ASSERT(ucm_umem__audit(umem, &a, offsetof(struct ucm_pool_audit, loc)) == 0,
		  "umem audit, smaller");
	UT_ASSERT(a.frames == 256 && a.loc[0] == 0xa5a5a5a5u, "umem audit: the part only");

	UT_ASSERT(ucm_pool__put(pool, addr) == 0, "put");
	ucm_pool__clear_owner(pool);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

/* ucm_pool__get_stats(), the old name of ucm_pool__stats(): the same
 * answers, sizes and errors. */
static int test_stats_old_name(void)
{
	struct ucm_umem *umem = mk_umem(1, 256, 0, 0);
	struct ucm_pool_stats st, old;
	size_t part = offsetof(struct ucm_pool_stats, hold);
	struct ucm_pool *pool;
	uint64_t addr;

	UT_ASSERT(umem, "create");
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	UT_ASSERT(ucm_pool__alloc(pool, &addr) == 0, "alloc");
	memset(&st, 0xa5, sizeof(st));
	memset(&old, 0x5a, sizeof(old));
	UT_ASSERT(ucm_pool__stats(pool, &st, sizeof(st)) == 0, "stats");
	UT_ASSERT(ucm_pool__get_stats(pool, &old, sizeof(old)) == 0, "get_stats");
	UT_ASSERT(!memcmp(&st, &old, sizeof(st)), "the same counters");
	UT_ASSERT(st.hold && st.inflight > 0, "hold %llu inflight %lld",
		  (unsigned long long)st.hold, (long long)st.inflight);

	memset(&st, 0xa5, sizeof(st));
	memset(&old, 0xa5, sizeof(old));
	UT_ASSERT(ucm_pool__stats(pool, &st, part) == 0 &&
		  ucm_pool__get_stats(pool, &old, part) == 0, "older, smaller");
	UT_ASSERT(!memcmp(&st, &old, sizeof(st)), "the same part, the rest untouched");

	errno = 0;
	UT_ASSERT(ucm_pool__get_stats(pool, &old, 0) == -EINVAL && errno == EINVAL, "sz 0");
	UT_ASSERT(ucm_pool__get_stats(NULL, &old, sizeof(old)) == -EINVAL, "no pool");
	UT_ASSERT(ucm_pool__stats(pool, NULL, sizeof(st)) == -EINVAL, "no struct");

	UT_ASSERT(ucm_pool__put(pool, addr) == 0, "put");
	ucm_pool__clear_owner(pool);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

/* ---- NUMA placement -------------------------------------------------------- */

/* The area's policy as the kernel keeps it (get_mempolicy(MPOL_F_ADDR)). */
static int area_policy(struct ucm_umem *umem, int *mode, unsigned long *mask, size_t bits)
{
	return syscall(SYS_get_mempolicy, mode, mask, bits + 1, ucm_umem__area(umem),
		       MPOL_F_ADDR) ? -errno : 0;
}

/*
 * Whether @err from placing a UMEM on node 0 is this host's, not the
 * code's: no NUMA in the kernel, mbind forbidden (a container's seccomp),
 * or node 0 outside the process's cpuset. EINVAL while node 0 is ours is
 * the code's, and fails.
 */
static bool numa_unavailable(int err)
{
	unsigned long allowed[UCM_UMEM_NUMA_NODES / (8 * sizeof(unsigned long))] = {};

	if (err == ENOSYS)
		ut_skip_reason("a kernel without NUMA (mbind: ENOSYS)");
	else if (err == EPERM)
		ut_skip_reason("mbind is not allowed here (EPERM)");
	else if (err == EINVAL &&
		 !syscall(SYS_get_mempolicy, NULL, allowed, 8 * sizeof(allowed) + 1, NULL,
			  MPOL_F_MEMS_ALLOWED) && !(allowed[0] & 1))
		ut_skip_reason("node 0 is not this process's to use (its cpuset)");
	else
		return false;
	return true;
}

/*
 * UCM_UMEM_F_NUMA_NODE: the area prefers the node (page_pool's nid); its
 * pages, made later, come from there. Without it the area keeps the
 * process's default. A node the machine does not have is refused, said.
 */
static int test_numa_node(void)
{
	UCM_OPTS(ucm_umem_opts, o, .flags = UCM_UMEM_F_NUMA_NODE, .numa_node = 0);
	UCM_OPTS(ucm_umem_opts, plain);
	unsigned long mask[UCM_UMEM_NUMA_NODES / (8 * sizeof(unsigned long))];
	struct ucm_umem *umem;
	int mode = -1;

	umem = ucm_umem__create(&o);
	if (!umem && numa_unavailable(errno))
		return UT_SKIP;
	UT_ASSERT(umem, "node 0: %s", strerror(errno));
	memset(mask, 0, sizeof(mask));
	UT_ASSERT(!area_policy(umem, &mode, mask, 8 * sizeof(mask)), "get_mempolicy: %s",
		  strerror(errno));
	UT_ASSERT(mode == MPOL_PREFERRED && mask[0] == 1,
		  "node 0: the area's policy %d, nodes 0x%lx (want MPOL_PREFERRED %d, 0x1)",
		  mode, mask[0], MPOL_PREFERRED);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");

	umem = ucm_umem__create(&plain);
	UT_ASSERT(umem, "no node: %s", strerror(errno));
	UT_ASSERT(!area_policy(umem, &mode, mask, 8 * sizeof(mask)), "get_mempolicy");
	UT_ASSERT(mode == MPOL_DEFAULT, "no node: the area's policy %d (want MPOL_DEFAULT)", mode);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");

	/* The last node a mask can name: no machine here has it. */
	o.numa_node = UCM_UMEM_NUMA_NODES - 1;
	log_capture();
	CHECK(expect_einval(&o, "node 1023, not on this machine"), "node 1023");
	UT_ASSERT(log_warnings() == 1, "node 1023: %d warnings, want 1", log_warnings());
	o.numa_node = UCM_UMEM_NUMA_NODES;
	CHECK(expect_einval(&o, "node 1024, over the most"), "node 1024");
	ucm_set_print(NULL);
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_options),
	UT_CASE(test_numa_node),
	UT_CASE(test_options_ring_size_1),
	UT_CASE(test_options_tail_padding),
	UT_CASE(test_owner_rule),
	UT_CASE(test_owner_not_inherited),
	UT_CASE(test_stats_identities),
	UT_CASE(test_stats_sized),
	UT_CASE(test_stats_old_name),
	UT_CASE(test_random_ops_audit),
#ifdef UCM_DEBUG
	UT_CASE(test_double_free_debug),
#endif
	UT_CASE(test_double_free_stack_overflow),
	UT_CASE(test_double_release_audit),
	UT_CASE(test_bad_addresses),
	UT_CASE(test_bad_addresses_late),
	UT_CASE(test_exhaustion),
	UT_CASE(test_cache_and_refill),
	UT_CASE(test_ring_full),
	UT_CASE(test_direct_bulk_switch),
	UT_CASE(test_mixed_pool_bulk_one_owner),
	UT_CASE(test_destroy_busy),
	UT_CASE(test_destroy_waits_for_late_returns),
	UT_CASE(test_destroy_waits_for_late_release),
	UT_CASE(test_concurrent_remote_returns),
	UT_CASE(test_inflight_never_negative),
	UT_CASE(test_destroy_double_release),
#ifdef UCM_DEBUG
	UT_CASE(test_put_from_chain_checked),
#endif
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
