// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A program built only against the installed headers and libucpumap.so,
 * through pkg-config, as a user's would be: it runs frames through a
 * cpumap to a counting sink and checks that every frame came home; the
 * datapath object's header and symbols are there too (its sizing, which
 * needs no root).
 */
#include <stdio.h>
#include <string.h>
#include <ucpumap/cpumap.h>
#include <ucpumap/dp.h>

static unsigned long seen;

static int count_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		      const uint64_t *addrs, uint32_t n)
{
	__atomic_fetch_add(&seen, n, __ATOMIC_RELAXED);
	return 0;
}

static const struct ucm_sink_ops count_sink = {
	.sz = sizeof(struct ucm_sink_ops),	/* the ops are extensible */
	.xmit = count_xmit,
};

int main(void)
{
	static const unsigned char pkt[60] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0x30, 0x39, 0x23, 0x28, 0, 26, 0, 0,
	};
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = 1024);
	struct ucm_umem *umem = ucm_umem__create(&uo);
	struct ucm_pool *pool;
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer *prod;
	int cpu = 0, i;

	if (!umem)
		return 1;
	pool = ucm_umem__pool(umem, 0);
	ucm_pool__set_owner(pool);
	{
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = &cpu, .ncpus = 1,
			 .sink = &count_sink);

		map = ucm_cpumap__create(umem, &co);
	}
	if (!map)
		return 2;
	prod = ucm_cpumap__producer_create(map, pool);
	for (i = 0; i < 500; i++) {
		uint64_t addr;

		if (ucm_pool__alloc(pool, &addr))
			return 3;
		memcpy((char *)ucm_umem__frame(ucm_umem__area(umem), addr) + 256,
		       pkt, sizeof(pkt));
		if (ucm_cpumap_producer__enqueue(prod, 0, addr + 256, sizeof(pkt)))
			return 4;
		if (i % 64 == 63)
			ucm_cpumap_producer__flush(prod);
	}
	ucm_cpumap_producer__destroy(prod);
	ucm_cpumap__destroy(map);
	ucm_pool__clear_owner(pool);
	if (ucm_umem__audit(umem, NULL, 0) || ucm_umem__destroy(umem, 1000))
		return 5;
	printf("delivered %lu of 500 (the rest dropped at a full ring)\n", seen);
	if (!seen)
		return 6;
	{
		/* Fill (2 x 1024) + RX (1024) + a worker ring (2048). */
		UCM_OPTS(ucm_dp_opts, dpo, .ifname = "lo", .tun_name = "ucm0");

		if (ucm_dp__frames_needed(&dpo) != 5120)
			return 7;
	}
	return 0;
}
