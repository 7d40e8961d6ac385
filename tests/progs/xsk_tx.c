// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The way out, on a veth: a "worker" thread fills frames lent through a
 * ucm_txq with UDP datagrams (a sequence number each), the queue's "RX
 * thread" (this main thread, the pool's owner) collects them, puts them on
 * the XSK TX ring and reaps the completion ring. test-xsk-tx.sh counts what
 * the peer namespace's UDP stack received.
 *
 *   xsk_tx IFACE SRC_MAC DST_MAC SRC_IP DST_IP COUNT MODE
 *
 * MODE: direct (default bulk returns), no-direct (UCM_UMEM_F_NO_DIRECT_BULK),
 * leave (post COUNT without reaping or kicking again, then close: the close
 * must reclaim the frames the kernel still holds), full (one post larger
 * than the TX ring), csum (UCM_XSK_F_TX_CSUM: every other datagram's UDP
 * checksum left partial for the kernel to finish, then 4 packets posted at
 * their frames' start, where the TX metadata would be: refused, home),
 * late (leave, and 4 frames an application thread still holds: a destroy
 * with no time to wait says -EBUSY; one with a second waits for the
 * thread to return them 100 ms later, then frees: close_early, late_ms).
 * Prints "key value" lines: sent, completed, direct, ring_full, tx_csum,
 * bad, audit (ucm_umem__audit()'s result before the close: 0 when every
 * frame of the pools is accounted for; its log lines say what is not),
 * close; the idle sleeps', and the sleeps' with the pool dry and fed
 * again (dry_sleeps()). Exits 1 when the audit or the close fails.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ucpumap/log.h"
#include "ucpumap/pool.h"
#include "ucpumap/txq.h"
#include "ucpumap/xsk.h"

#define PORT	9000
#define PAYLOAD	18	/* 64-byte frames */
#define OFF	256	/* packet offset in the frame */

static uint8_t smac[6], dmac[6];
static uint32_t sip, dip;
static struct ucm_umem *umem;
static struct ucm_txq *txq;
static uint32_t count;
static atomic_uint filled;
static bool csum;	/* ask for every other UDP checksum */

static int parse_mac(const char *s, uint8_t *m)
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &m[0], &m[1], &m[2], &m[3], &m[4],
		      &m[5]) == 6 ? 0 : -1;
}

static uint16_t csum16(const uint8_t *p, int len, uint32_t sum)
{
	for (int i = 0; i + 1 < len; i += 2)
		sum += p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* Ethernet + IPv4 + UDP with @seq in the payload; returns the length. */
static uint32_t build(uint8_t *f, uint32_t seq)
{
	uint8_t *ip = f + 14, *u = ip + 20;
	uint16_t c;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08; f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45; ip[3] = 20 + 8 + PAYLOAD; ip[8] = 64; ip[9] = 17;
	memcpy(ip + 12, &sip, 4);
	memcpy(ip + 16, &dip, 4);
	c = csum16(ip, 20, 0);
	ip[10] = c >> 8; ip[11] = c;
	u[0] = 0x30; u[1] = 0x39; u[2] = PORT >> 8; u[3] = PORT & 0xff;
	u[4] = 0; u[5] = 8 + PAYLOAD; u[6] = 0; u[7] = 0;	/* no UDP checksum */
	memset(u + 8, 0, PAYLOAD);
	memcpy(u + 8, &seq, 4);
	return 14 + 20 + 8 + PAYLOAD;
}

/* The UDP checksum left partial: the pseudo-header's sum in the field,
 * the rest asked of the kernel (vd's TX checksumming is off: the stack
 * finishes it, and the peer's UDP checks it). */
static uint64_t ask_csum(uint8_t *f, uint64_t desc)
{
	uint8_t ph[12], *u = f + 14 + 20;
	uint16_t v;

	memcpy(ph, &sip, 4);
	memcpy(ph + 4, &dip, 4);
	ph[8] = 0; ph[9] = 17; ph[10] = 0; ph[11] = 8 + PAYLOAD;
	v = ~csum16(ph, sizeof(ph), 0);
	u[6] = v >> 8; u[7] = v;
	return ucm_txq_meta_csum(f, desc, 14 + 20, 6);
}

static void *worker(void *arg)
{
	uint64_t addrs[32], desc[32];
	uint32_t seq = 0, n, k;

	while (seq < count) {
		n = ucm_txq__take(txq, addrs, count - seq < 32 ? count - seq : 32);
		if (!n) {
			sched_yield();
			continue;
		}
		for (uint32_t i = 0; i < n; i++) {
			uint8_t *f = ucm_umem__frame(ucm_umem__area(umem), addrs[i] + OFF);

			desc[i] = ucm_desc_make(addrs[i] + OFF, build(f, seq + i));
			if (csum && !((seq + i) & 1))
				desc[i] = ask_csum(f, desc[i]);
		}
		k = ucm_txq__send(txq, desc, n);
		seq += k;	/* the unsent went home: sent again next time */
	}
	atomic_store(&filled, seq);
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * The RX thread's sleep with its pool dry: every frame taken, a refill
 * finds none, and a sleep of 200 ms lasts about 1 (frames coming home
 * would wake nobody); with them home and the fill ring refilled, a sleep
 * of 50 ms lasts its time. Prints each sleep's result and length in ms.
 */
/* late: the frames an application thread holds past the stop. */
static uint64_t late_frames[4];
static int late_n;

static void *late_returner(void *arg)
{
	(void)arg;
	nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000000 }, NULL);
	ucm_umem__put_bulk(umem, late_frames, late_n);
	return NULL;
}

static void dry_sleeps(struct ucm_xsk_queue *q, struct ucm_txq **t)
{
	static uint64_t all[1 << 16];
	struct ucm_pool *pool = ucm_xsk_queue__pool(q);
	int n = 0, k, r;
	double t0;

	while (n + 64 <= (int)(sizeof(all) / sizeof(all[0])) &&
	       (k = ucm_pool__alloc_bulk(pool, all + n, 64)) > 0)
		n += k;
	ucm_xsk_queue__refill(q);
	t0 = now();
	r = ucm_xsk_queue__sleep(q, t, 1, 200);
	printf("dry_sleep %d\ndry_sleep_ms %.0f\n", r, (now() - t0) * 1000);
	ucm_umem__put_bulk(umem, all, n);
	ucm_xsk_queue__refill(q);
	t0 = now();
	r = ucm_xsk_queue__sleep(q, t, 1, 50);
	printf("fed_sleep %d\nfed_sleep_ms %.0f\n", r, (now() - t0) * 1000);
}

int main(int argc, char **argv)
{
	struct ucm_xsk_opts o = { .sz = sizeof(o), .mode = UCM_XSK_COPY };
	struct ucm_xsk_stats st;
	struct ucm_pool_audit a;
	struct ucm_xsk_queue *q;
	struct ucm_xsk *x;
	const char *mode;
	uint64_t txed = 0;
	pthread_t th;
	double end;
	int rc, audit;

	if (argc != 8 || parse_mac(argv[2], smac) || parse_mac(argv[3], dmac) ||
	    inet_pton(AF_INET, argv[4], &sip) != 1 || inet_pton(AF_INET, argv[5], &dip) != 1) {
		fprintf(stderr, "usage: xsk_tx IFACE SRC_MAC DST_MAC SRC_IP DST_IP COUNT MODE\n");
		return 2;
	}
	count = strtoul(argv[6], NULL, 10);
	mode = argv[7];
	o.ifname = argv[1];
	if (!strcmp(mode, "no-direct"))
		o.umem_flags = UCM_UMEM_F_NO_DIRECT_BULK;
	csum = !strcmp(mode, "csum");
	if (csum)
		o.flags = UCM_XSK_F_TX_CSUM;
	/* As xsk.h says: 4096 frames cannot cover the default rings (a fill
	 * ring of 4096 and an RX ring of 2048), the default (8192) can. */
	o.frames_per_queue = 4096;
	x = ucm_xsk__open(&o);
	printf("open_4096 %d\n", x ? 0 : -errno);
	if (x)
		return 1;
	o.frames_per_queue = 0;
	x = ucm_xsk__open(&o);
	if (!x) {
		fprintf(stderr, "open: %s\n", strerror(errno));
		return 1;
	}
	umem = ucm_xsk__umem(x);
	q = ucm_xsk__queue(x, 0);
	ucm_pool__set_owner(ucm_xsk_queue__pool(q));

	if (!strcmp(mode, "full") || !strcmp(mode, "leave") || !strcmp(mode, "late")) {
		/* No worker: the owner fills and posts all at once. */
		static uint64_t big[4096];
		uint32_t n = count > 4096 ? 4096 : count;
		int got = ucm_pool__alloc_bulk(ucm_xsk_queue__pool(q), big, n);

		for (int i = 0; i < got; i++)
			big[i] = ucm_desc_make(big[i] + OFF,
					       build(ucm_umem__frame(ucm_umem__area(umem),
								     big[i] + OFF), i));
		txed = ucm_xsk_queue__tx(q, big, got);
		/* The caller keeps what did not fit: home. */
		for (int i = txed; i < got; i++)
			ucm_pool__put(ucm_xsk_queue__pool(q),
				      ucm_desc_addr(big[i]) & ~(uint64_t)4095);
		if (!strcmp(mode, "full")) {
			end = now() + 5;
			while (ucm_xsk_queue__tx_pending(q) && now() < end)
				ucm_xsk_queue__complete(q);
		}
	} else {
		txq = ucm_txq__create(umem, 256);
		/* Idle: no program sends to this socket, no worker yet. The
		 * sleeps return 0 (timed out), not poll(2)'s count. */
		printf("wait_idle %d\nsleep_idle %d\nsleep_many %d\n",
		       ucm_xsk_queue__wait(q, 20),
		       ucm_xsk_queue__sleep(q, &txq, 1, 20),
		       ucm_xsk_queue__sleep(q, &txq, UCM_XSK_MAX_TXQ + 1, 20));
		dry_sleeps(q, &txq);
		pthread_create(&th, NULL, worker, NULL);
		end = now() + 15;
		while (now() < end) {
			struct ucm_xsk_stats now_st;

			/* The RX thread's turn of the way out, as ucm_dp runs
			 * it: what the ring cannot take is a counted drop
			 * (the test sends slowly enough for none). */
			ucm_xsk_queue__tx_turn(q, &txq, 1);
			ucm_xsk_queue__stats(q, &now_st, sizeof(now_st));
			if (atomic_load(&filled) == count &&
			    now_st.tx + now_st.tx_ring_full == count &&
			    !ucm_xsk_queue__tx_pending(q))
				break;
		}
		pthread_join(th, NULL);
		ucm_txq__reclaim(txq);
		ucm_txq__destroy(txq);
	}
	if (csum) {	/* no room for the metadata in front: refused, home */
		uint64_t bad[4];
		int got = ucm_pool__alloc_bulk(ucm_xsk_queue__pool(q), bad, 4);

		for (int i = 0; i < got; i++)
			bad[i] = ucm_desc_make(bad[i], 60);
		printf("tx_csum %d\nbad_taken %u\n", ucm_xsk__tx_csum(x),
		       ucm_xsk_queue__tx(q, bad, got));
	}
	ucm_xsk_queue__stats(q, &st, sizeof(st));
	printf("sent %llu\ncompleted %llu\ndirect %llu\nring_full %llu\nbad %llu\npending %u\n",
	       (unsigned long long)st.tx, (unsigned long long)st.tx_completed,
	       (unsigned long long)st.tx_comp_direct, (unsigned long long)st.tx_ring_full,
	       (unsigned long long)st.tx_bad_desc, ucm_xsk_queue__tx_pending(q));
	if (!strcmp(mode, "late"))
		late_n = ucm_pool__alloc_bulk(ucm_xsk_queue__pool(q), late_frames, 4);
	ucm_pool__clear_owner(ucm_xsk_queue__pool(q));
	audit = ucm_umem__audit(umem, &a, sizeof(a));
	printf("audit %d\n", audit);
	if (late_n) {
		double t0;

		printf("close_early %d\n", ucm_xsk__destroy(x, 0));
		pthread_create(&th, NULL, late_returner, NULL);
		t0 = now();
		rc = ucm_xsk__destroy(x, 1000);
		printf("late_ms %.0f\n", (now() - t0) * 1000);
		pthread_join(th, NULL);
	} else {
		rc = ucm_xsk__destroy(x, 1000);
	}
	printf("close %d\n", rc);
	fflush(stdout);
	return rc || audit ? 1 : 0;
}
