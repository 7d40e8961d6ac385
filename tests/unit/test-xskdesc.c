// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The check of a descriptor the kernel gives back, ucm_umem_desc_check()
 * (lib/core/umem_desc.h), which ucm_xsk_queue__rx() applies to every RX
 * descriptor: the edges a table can name (the UMEM's end, addresses near
 * UINT64_MAX, a zero length, a packet that fills its frame and one byte
 * more, another pool's frame, an unaligned-mode address), in both frame
 * sizes; its geometry against a real UMEM's carving; and each verdict
 * handled as the RX path does, with every frame's tag checked.
 *
 * The completion ring's addresses take another road: any pool's frame
 * may come back there (ucm_xsk_queue__tx() sends this UMEM's frames), so
 * ucm_xsk_queue__complete() gives them to ucm_umem_put_bulk_from(), whose
 * own check refuses an address outside the UMEM before it looks for an
 * owner. test_completion_guard pins that down: such an address reaches
 * no pool.
 */
#include <errno.h>
#include <stdint.h>
#include <linux/if_xdp.h>

#include "core/pool_internal.h"
#include "ucpumap/xsk.h"
#include "utest.h"

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

/* Untouched by FOREIGN: the check must not say which frame that is. */
#define NO_BASE		0xdeadbeefull

static const char *verdict_str(enum ucm_umem_desc v)
{
	switch (v) {
	case UCM_UMEM_DESC_GOOD:
		return "good";
	case UCM_UMEM_DESC_BAD:
		return "bad (take back)";
	case UCM_UMEM_DESC_FOREIGN:
		return "foreign (leave)";
	}
	return "?";
}

/* Two pools of 256 frames of @frame_size, as ucm_umem__create() carves. */
static struct ucm_umem_geom geom(uint32_t frame_size)
{
	uint32_t shift = __builtin_ctz(frame_size) + 8;

	return (struct ucm_umem_geom){ .size = 2ull << shift, .frame_size = frame_size,
				       .pool_shift = shift };
}

struct row {
	const char *what;
	uint32_t pool;
	uint64_t addr;
	uint32_t len;
	enum ucm_umem_desc want;
	uint64_t base;		/* for GOOD and BAD */
};

static int check_row(const struct ucm_umem_geom *g, const struct row *r)
{
	uint64_t base = NO_BASE;
	enum ucm_umem_desc v = ucm_umem_desc_check(g, r->pool, r->addr, r->len, &base);
	uint64_t want_base = r->want == UCM_UMEM_DESC_FOREIGN ? NO_BASE : r->base;

	UT_ASSERT(v == r->want && base == want_base,
		  "frames of %u, %s (pool %u, addr 0x%llx, len %u): %s, base 0x%llx; want %s, 0x%llx",
		  g->frame_size, r->what, r->pool, (unsigned long long)r->addr, r->len,
		  verdict_str(v), (unsigned long long)base, verdict_str(r->want),
		  (unsigned long long)want_base);
	return 0;
}

#define GOOD	UCM_UMEM_DESC_GOOD
#define BAD	UCM_UMEM_DESC_BAD
#define FOREIGN	UCM_UMEM_DESC_FOREIGN

/* The edges, for one frame size: F a frame, P a pool's span (pool 1
 * starts there), S the UMEM's size; frame 3 of pool 0 is at 3F. */
static int test_edges_one(uint32_t frame_size)
{
	const struct ucm_umem_geom g = geom(frame_size);
	const uint64_t F = frame_size, P = 1ull << g.pool_shift, S = g.size;
	const uint64_t unaligned = 256ull << XSK_UNALIGNED_BUF_OFFSET_SHIFT;
	const struct row rows[] = {
		{ "headroom, then a packet", 0, 3 * F + 256, 1000, GOOD, 3 * F },
		{ "one byte at the frame's start", 0, 3 * F, 1, GOOD, 3 * F },
		{ "the whole frame", 0, 3 * F, F, GOOD, 3 * F },
		{ "the whole frame and one byte", 0, 3 * F, F + 1, BAD, 3 * F },
		{ "filled after 256 B of headroom", 0, 3 * F + 256, F - 256, GOOD, 3 * F },
		{ "filled after headroom, one byte more", 0, 3 * F + 256, F - 255, BAD, 3 * F },
		{ "the frame's last byte", 0, 4 * F - 1, 1, GOOD, 3 * F },
		{ "the last byte and the next frame's first", 0, 4 * F - 1, 2, BAD, 3 * F },
		{ "length 0", 0, 3 * F + 256, 0, BAD, 3 * F },
		{ "length 0 at the frame's start", 0, 3 * F, 0, BAD, 3 * F },
		{ "length UINT32_MAX", 0, 4 * F - 1, UINT32_MAX, BAD, 3 * F },
		{ "the UMEM's first frame", 0, 0, 64, GOOD, 0 },
		{ "pool 0's last frame, filled", 0, P - F, F, GOOD, P - F },
		{ "pool 1's first frame, filled", 1, P, F, GOOD, P },
		{ "the UMEM's last frame, filled", 1, S - F, F, GOOD, S - F },
		{ "the UMEM's last byte", 1, S - 1, 1, GOOD, S - F },
		{ "the UMEM's last byte and one past", 1, S - 1, 2, BAD, S - F },
		{ "at the UMEM's end", 1, S, 1, FOREIGN, 0 },
		{ "at the UMEM's end, length 0", 1, S, 0, FOREIGN, 0 },
		{ "past the end, a frame in", 1, S + F + 64, 64, FOREIGN, 0 },
		{ "UINT64_MAX", 1, UINT64_MAX, 1, FOREIGN, 0 },
		{ "UINT64_MAX for pool 0", 0, UINT64_MAX, 1, FOREIGN, 0 },
		{ "the address space's last frame", 1, UINT64_MAX - F + 1, F, FOREIGN, 0 },
		{ "addr + len wraps to 0", 0, UINT64_MAX - 63, 64, FOREIGN, 0 },
		{ "addr + len wraps into the UMEM", 0, UINT64_MAX - 63, 64 + 3 * F + 100,
		  FOREIGN, 0 },
		{ "pool 1's good packet, checked for pool 0", 0, P + 256, 100, FOREIGN, 0 },
		{ "pool 1's bad packet, checked for pool 0", 0, P + 256, 0, FOREIGN, 0 },
		{ "pool 0's good packet, checked for pool 1", 1, 3 * F + 256, 100, FOREIGN, 0 },
		{ "pool 0's last byte, checked for pool 1", 1, P - 1, 1, FOREIGN, 0 },
		/* We register aligned chunks: the kernel never gives such
		 * an address, and it is in no frame of ours. */
		{ "an unaligned-mode address (offset 256)", 0, unaligned | 3 * F, 100, FOREIGN, 0 },
		{ "an unaligned-mode address, pool 1", 1, unaligned | P, 100, FOREIGN, 0 },
		{ "offset bits only", 0, unaligned, 100, FOREIGN, 0 },
		/* Not a caller's mistake we make, but no pool owns the
		 * bytes past the UMEM. */
		{ "a pool past the last, past the end", 2, S + 256, 100, FOREIGN, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		CHECK(check_row(&g, &rows[i]), "row %zu", i);
	return 0;
}

static int test_edges(void)
{
	CHECK(test_edges_one(2048), "2048");
	CHECK(test_edges_one(4096), "4096");
	return 0;
}

/*
 * The geometry a real UMEM gives (three pools: not a power of two) says
 * what the UMEM itself says: a frame is good for its owner pool
 * (ucm_umem_owner()) and foreign for every other, its base is
 * ucm_umem_base()'s, and nothing at or past the end is anyone's.
 */
static int check_carving(uint32_t frame_size)
{
	UCM_OPTS(ucm_umem_opts, o, .frame_size = frame_size, .npools = 3,
		 .frames_per_pool = 256);
	struct ucm_umem *umem = ucm_umem__create(&o);
	struct ucm_umem_geom g;
	uint64_t f, base;

	UT_ASSERT(umem, "create: %s", strerror(errno));
	g = ucm_umem_geom_of(umem);
	UT_ASSERT(g.size == ucm_umem__size(umem) && g.frame_size == frame_size &&
		  g.size == 3ull << g.pool_shift, "geometry %llu %u %u",
		  (unsigned long long)g.size, g.frame_size, g.pool_shift);
	for (f = 0; f < g.size; f += frame_size) {
		uint64_t addr = f + 256;

		for (uint32_t p = 0; p < 3; p++) {
			bool mine = ucm_umem_owner(umem, f) == ucm_umem__pool(umem, p);
			enum ucm_umem_desc v;

			base = NO_BASE;
			v = ucm_umem_desc_check(&g, p, addr, 64, &base);
			UT_ASSERT(v == (mine ? GOOD : FOREIGN), "frame 0x%llx, pool %u: %s",
				  (unsigned long long)f, p, verdict_str(v));
			UT_ASSERT(base == (mine ? ucm_umem_base(umem, addr) : NO_BASE),
				  "frame 0x%llx, pool %u: base 0x%llx", (unsigned long long)f, p,
				  (unsigned long long)base);
		}
	}
	for (uint32_t p = 0; p < 3; p++)
		UT_ASSERT(ucm_umem_desc_check(&g, p, g.size, 1, &base) == FOREIGN,
			  "the end, pool %u", p);
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

static int test_real_carving(void)
{
	CHECK(check_carving(2048), "2048");
	CHECK(check_carving(4096), "4096");
	return 0;
}

#if UCM_HAVE_TAGS
/* Two pools of 256 frames of 4096 bytes. */
static struct ucm_umem *mk_umem(void)
{
	UCM_OPTS(ucm_umem_opts, o, .npools = 2, .frames_per_pool = 256);

	return ucm_umem__create(&o);
}

static int expect_loc(struct ucm_umem *umem, uint64_t addr, enum ucm_frame_loc want)
{
	enum ucm_frame_loc loc = ucm_frame_loc(umem, addr);

	UT_ASSERT(loc == want, "frame 0x%llx is in %s, not %s", (unsigned long long)addr,
		  ucm_frame_loc_str(loc), ucm_frame_loc_str(want));
	return 0;
}

/*
 * One RX batch handled as ucm_xsk_queue__rx() does, on a real UMEM whose
 * frames were posted (tagged kernel): a good descriptor's frame is taken
 * (kernel -> app), a bad one's taken and put back in its pool, a foreign
 * one's left where it was. A wrong frame taken would abort on its tag.
 */
static int test_rx_batch(void)
{
	struct ucm_umem *umem;
	struct ucm_pool *p0, *p1;
	struct ucm_umem_geom g;
	struct ucm_pool_stats st;
	uint64_t fr[6], other, base;
	uint32_t i, F, good = 0, bad = 0, taken = 0;

	umem = mk_umem();
	UT_ASSERT(umem, "create: %s", strerror(errno));
	g = ucm_umem_geom_of(umem);
	F = g.frame_size;
	p0 = ucm_umem__pool(umem, 0);
	p1 = ucm_umem__pool(umem, 1);
	ucm_pool__set_owner(p0);
	ucm_pool__set_owner(p1);
	UT_ASSERT(ucm_pool__alloc_bulk(p0, fr, 6) == 6 && ucm_pool__alloc(p1, &other) == 0,
		  "alloc");
	/* ucm_xsk_queue__refill(): posted to the fill rings. */
	ucm_frame_move_bulk(umem, fr, 6, UCM_LOC_APP, UCM_LOC_KERNEL);
	ucm_frame_move(umem, other, UCM_LOC_APP, UCM_LOC_KERNEL);

	const struct {
		uint64_t addr;
		uint32_t len;
		enum ucm_umem_desc want;
	} batch[] = {
		{ fr[0] + 256, 100, GOOD },
		{ fr[1] + 256, 0, BAD },
		{ fr[2] + 256, F, BAD },		/* 256 bytes too long */
		{ other + 256, 100, FOREIGN },		/* pool 1's queue's */
		{ g.size + 256, 100, FOREIGN },
		{ UINT64_MAX, 1, FOREIGN },
		{ (64ull << XSK_UNALIGNED_BUF_OFFSET_SHIFT) | fr[3], 100, FOREIGN },
		{ fr[4] + F - 1, 1, GOOD },
	};
	for (i = 0; i < ARRAY_SIZE(batch); i++) {
		enum ucm_umem_desc v = ucm_umem_desc_check(&g, 0, batch[i].addr,
							   batch[i].len, &base);

		UT_ASSERT(v == batch[i].want, "descriptor %u: %s", i, verdict_str(v));
		if (v == FOREIGN) {
			bad++;
			continue;
		}
		taken++;
		ucm_frame_move(umem, base, UCM_LOC_KERNEL, UCM_LOC_APP);
		if (v == BAD) {
			bad++;
			UT_ASSERT(ucm_pool__put(p0, base) == 0, "take back 0x%llx",
				  (unsigned long long)base);
		} else {
			good++;
		}
	}
	UT_ASSERT(good == 2 && bad == 6 && taken == 4, "good %u bad %u taken %u", good, bad,
		  taken);
	CHECK(expect_loc(umem, fr[0], UCM_LOC_APP), "good");
	CHECK(expect_loc(umem, fr[4], UCM_LOC_APP), "good at the frame's end");
	CHECK(expect_loc(umem, fr[1], UCM_LOC_CACHE), "length 0, taken back");
	CHECK(expect_loc(umem, fr[2], UCM_LOC_CACHE), "too long, taken back");
	CHECK(expect_loc(umem, fr[3], UCM_LOC_KERNEL), "under an unaligned-mode address");
	CHECK(expect_loc(umem, fr[5], UCM_LOC_KERNEL), "not in the batch");
	CHECK(expect_loc(umem, other, UCM_LOC_KERNEL), "pool 1's");
	UT_ASSERT(ucm_pool__stats(p0, &st, sizeof(st)) == 0 && st.bad_addr == 0 &&
		  st.double_free == 0 && st.recycle_cached == 2, "pool 0: cached %llu",
		  (unsigned long long)st.recycle_cached);

	/* The kernel lets go of the rest; every frame goes home. */
	ucm_frame_move(umem, fr[3], UCM_LOC_KERNEL, UCM_LOC_APP);
	ucm_frame_move(umem, fr[5], UCM_LOC_KERNEL, UCM_LOC_APP);
	ucm_frame_move(umem, other, UCM_LOC_KERNEL, UCM_LOC_APP);
	UT_ASSERT(ucm_pool__put(p0, fr[0]) == 0 && ucm_pool__put(p0, fr[3]) == 0 &&
		  ucm_pool__put(p0, fr[4]) == 0 && ucm_pool__put(p0, fr[5]) == 0 &&
		  ucm_pool__put(p1, other) == 0, "home");
	UT_ASSERT(ucm_umem__audit(umem, NULL, 0) == 0, "audit");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

/*
 * The completion ring, as ucm_xsk_queue__complete() reads it: each
 * address to its frame (ucm_umem_base()), then one bulk return from the
 * kernel's hands. Our frames go home, pool 1's through its ring (its RX
 * thread is another); an address outside the UMEM (past the end, near
 * UINT64_MAX, an unaligned-mode offset) is refused and counted, and no
 * pool takes it.
 */
static int test_completion_guard(void)
{
	struct ucm_umem *umem;
	struct ucm_pool *p0, *p1;
	struct ucm_pool_stats s0, s1;
	struct ucm_pool_audit a0, a1;
	uint64_t mine, other, size, comp[6], addrs[6];
	uint32_t i;

	umem = mk_umem();
	UT_ASSERT(umem, "create: %s", strerror(errno));
	size = ucm_umem__size(umem);
	p0 = ucm_umem__pool(umem, 0);
	p1 = ucm_umem__pool(umem, 1);
	ucm_pool__set_owner(p0);
	ucm_pool__set_owner(p1);
	UT_ASSERT(ucm_pool__alloc(p0, &mine) == 0 && ucm_pool__alloc(p1, &other) == 0, "alloc");
	ucm_pool__clear_owner(p1);
	/* ucm_xsk_queue__tx(): on the TX ring. */
	ucm_frame_move(umem, mine, UCM_LOC_APP, UCM_LOC_KERNEL);
	ucm_frame_move(umem, other, UCM_LOC_APP, UCM_LOC_KERNEL);

	comp[0] = mine + 256;
	comp[1] = size + 256;
	comp[2] = other + 512;
	comp[3] = UINT64_MAX;
	comp[4] = (256ull << XSK_UNALIGNED_BUF_OFFSET_SHIFT) | mine;
	comp[5] = size;
	for (i = 0; i < 6; i++)
		addrs[i] = ucm_umem_base(umem, comp[i]);
	UT_ASSERT(ucm_umem_put_bulk_from(umem, addrs, 6, UCM_LOC_KERNEL, false) == -EINVAL,
		  "the bad addresses not reported");
	UT_ASSERT(ucm_pool__stats(p0, &s0, sizeof(s0)) == 0 &&
		  ucm_pool__stats(p1, &s1, sizeof(s1)) == 0, "stats");
	UT_ASSERT(s0.recycle_cached == 1 && s0.recycle_ring == 0 && s1.recycle_ring == 1 &&
		  s1.recycle_cached == 0, "homes: pool 0 cached %llu ring %llu, pool 1 cached %llu ring %llu",
		  (unsigned long long)s0.recycle_cached, (unsigned long long)s0.recycle_ring,
		  (unsigned long long)s1.recycle_cached, (unsigned long long)s1.recycle_ring);
	/* Counted on pool 0 (an address outside has no owner), once each. */
	UT_ASSERT(s0.bad_addr == 4 && s1.bad_addr == 0 && !s0.double_free && !s1.double_free,
		  "bad_addr %llu and %llu", (unsigned long long)s0.bad_addr,
		  (unsigned long long)s1.bad_addr);
	UT_ASSERT(ucm_pool__audit(p0, &a0, sizeof(a0)) == 0 &&
		  ucm_pool__audit(p1, &a1, sizeof(a1)) == 0, "audit");
	UT_ASSERT(a0.loc[UCM_LOC_APP] + a0.loc[UCM_LOC_KERNEL] == 0 &&
		  a1.loc[UCM_LOC_APP] + a1.loc[UCM_LOC_KERNEL] == 0, "frames out of the pools");
	UT_ASSERT(ucm_umem__destroy(umem, 0) == 0, "destroy");
	return 0;
}

#else
/* Both follow the frames' tags, which only a debug build keeps. */
static int test_rx_batch(void)
{
	ut_skip_reason("a release build keeps no frame tags");
	return UT_SKIP;
}

static int test_completion_guard(void)
{
	ut_skip_reason("a release build keeps no frame tags");
	return UT_SKIP;
}
#endif /* UCM_HAVE_TAGS */

static const struct ut_case cases[] = {
	UT_CASE(test_edges),
	UT_CASE(test_real_carving),
	UT_CASE(test_rx_batch),
	UT_CASE(test_completion_guard),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
