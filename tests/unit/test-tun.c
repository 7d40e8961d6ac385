// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tun sink's ways out of a batch the kernel has not finished, without a
 * tun (no root): a struct ucm_tun made by hand whose one queue is an end of
 * an AF_UNIX datagram socketpair. A blocking socket can keep an io_uring
 * request in the kernel, as a tun queue never does: a write into a full
 * one, a read of an empty one. The test switch ucm_tun_test_wait_fail
 * (debug builds) then makes the wait for that batch fail, as a dropped
 * completion would.
 *
 * What each case checks is what the kernel did with the frames: nothing
 * may reach the socket from a frame, nor be read into one, once the frame
 * has gone home; a batch's result and counters are its own writes', late
 * completions of an earlier batch aside; and every frame is home at the
 * end (the pool's audit). And what the write path puts in the vnet header
 * of a packet whose checksum its sender left partial.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "ucpumap/log.h"
#include "ucpumap/pool.h"
#include "ucpumap/txq.h"
#include "engine/chain.h"
#include "io/tun_internal.h"
#include "io/uring.h"
#include "utest.h"

#define FRAMES		256
#define DATA_OFF	256	/* where a packet starts in its frame */
#define NPKT		4
#define MAX_RINGS	8

/* ---- log capture --------------------------------------------------------- */

static char logbuf[4096];
static size_t loglen;

static int capture_print(enum ucm_log_level level, const char *fmt, va_list ap)
{
	int n;

	if (level > UCM_LOG_WARN || loglen >= sizeof(logbuf) - 1)
		return 0;
	n = vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen, fmt, ap);
	if (n > 0)
		loglen = loglen + n < sizeof(logbuf) ? loglen + n : sizeof(logbuf) - 1;
	return 0;
}

static void log_start(void)
{
	loglen = 0;
	logbuf[0] = '\0';
	ucm_set_print(capture_print);
}

/* ---- helpers --------------------------------------------------------------- */

static struct ucm_umem *mk_umem(void)
{
	struct ucm_umem_opts o = { .sz = sizeof(o), .frames_per_pool = FRAMES,
				   .npools = 1 };

	return ucm_umem__create(&o);
}

/* A tap of one queue, @fd: what ucm_tun__create() leaves, without the
 * device. ucm_tun__destroy() closes @fd and frees it. */
static struct ucm_tun *fake_tun(int fd)
{
	struct ucm_tun *tun = aligned_alloc(UCM_CACHELINE, sizeof(*tun));
	uint32_t q;

	if (!tun)
		return NULL;
	memset(tun, 0, sizeof(*tun));
	for (q = 0; q < UCM_TUN_MAX_QUEUES; q++)
		tun->fds[q] = -1;
	strcpy(tun->name, "fake0");
	tun->fds[0] = fd;
	tun->nqueues = 1;
	tun->flags = UCM_TUN_F_TAP;
	tun->rw_nowait = RWF_NOWAIT;	/* a socket takes it, as a tun does from 6.4 */
	return tun;
}

/* io_uring may be off where the tests run (a container's seccomp filter,
 * kernel.io_uring_disabled): the case is skipped then. */
#define OPEN_OR_SKIP(ops, tun)							\
	do {									\
		int err_ = (ops)->open((tun), 0);				\
										\
		if (err_ == -ENOSYS || err_ == -EPERM) {			\
			ut_skip_reason("no io_uring here: %s", strerror(-err_));\
			return UT_SKIP;						\
		}								\
		UT_ASSERT(!err_, "open: %s", strerror(-err_));			\
	} while (0)

/* A write path's case: the UMEM @u made, a datagram socket pair @s whose
 * s[0] is the fake tun @tun's queue, the pool @p ours, worker 0 open. */
#define WRITER_UP(ops, u, p, s, tun)						\
	do {									\
		UT_ASSERT(u, "umem");						\
		UT_ASSERT(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, s),\
			  "socketpair");					\
		tun = fake_tun(s[0]);						\
		UT_ASSERT(tun, "tun");						\
		ucm_pool__set_owner(p);						\
		OPEN_OR_SKIP(ops, tun);						\
	} while (0)

static bool is_ring(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[io_uring]");
}

/* The io_uring fds open now, as a bitmap of fds below 1024. */
static void rings_now(uint64_t map[16])
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int fd;

	memset(map, 0, 16 * sizeof(uint64_t));
	if (!d)
		return;
	while ((de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd < 1024 && fd != dirfd(d) && is_ring(fd))
			map[fd / 64] |= 1ull << (fd % 64);
	}
	closedir(d);
}

/*
 * A copy of each io_uring fd opened since @before: the rings then outlive
 * io_uring_queue_exit(), as they do whenever another reference is left (a
 * fork's) and, for a while, always: the kernel tears a ring down later,
 * on its own. A request left in one goes on. Return: how many, in @dups.
 */
static int hold_rings(const uint64_t before[16], int *dups)
{
	uint64_t now[16];
	int fd, n = 0;

	rings_now(now);
	for (fd = 0; fd < 1024 && n < MAX_RINGS; fd++)
		if ((now[fd / 64] & ~before[fd / 64]) & (1ull << (fd % 64)))
			dups[n++] = dup(fd);
	return n;
}

static void close_all(int *fds, int n)
{
	while (n--)
		close(fds[n]);
}

/* Is @pat anywhere in the UMEM? */
static bool umem_has(struct ucm_umem *u, const char *pat)
{
	return memmem(ucm_umem__area(u), ucm_umem__size(u), pat, strlen(pat));
}

/* Every frame home, none held: the pool's books and the UMEM freed. */
static int finish(struct ucm_umem *u, struct ucm_pool *p)
{
	struct ucm_pool_audit a;

	ucm_pool__clear_owner(p);
	UT_ASSERT(!ucm_umem__audit(u, &a, sizeof(a)), "audit failed");
	UT_ASSERT(a.loc[UCM_LOC_APP] == 0, "%u frames still held", a.loc[UCM_LOC_APP]);
	UT_ASSERT(!ucm_umem__destroy(u, 100), "umem destroy");
	return 0;
}

/* ---- the read path ----------------------------------------------------------- */

/*
 * The read path's set-up: a UMEM, a channel of 64 frames lent by the
 * test (the pool's owner), a tap at s[0] whose peer is s[1], the way back
 * set. @offload: the tap takes checksum and TSO as the kernel's tun would,
 * and the peer may send a super-packet (a send buffer of 1 MiB). The case
 * opens the sink itself.
 */
static int back_setup(struct ucm_umem **u, struct ucm_pool **p, struct ucm_txq **t,
		      struct ucm_tun **tun, int s[2], bool offload)
{
	int sz = 1 << 20;

	*u = mk_umem();
	UT_ASSERT(*u, "umem");
	*p = ucm_umem__pool(*u, 0);
	*t = ucm_txq__create(*u, 64);
	UT_ASSERT(*t, "txq");
	UT_ASSERT(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, s), "socketpair");
	if (offload)
		setsockopt(s[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	*tun = fake_tun(s[0]);
	UT_ASSERT(*tun, "tun");
	if (offload) {
		(*tun)->offload_set = true;
		(*tun)->offload = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6;
	}
	ucm_pool__set_owner(*p);
	UT_ASSERT(ucm_txq__lend(*t, *p) == 64, "lend");
	UT_ASSERT(!ucm_tun__set_back(*tun, 0, *t, NULL), "set_back");
	return 0;
}

/* Undo back_setup() once the sink is closed: the channel gives back
 * @reclaim frames (-1: any number), and every frame is home. */
static int back_done(struct ucm_umem *u, struct ucm_pool *p, struct ucm_txq *t,
		     struct ucm_tun *tun, int s[2], int reclaim)
{
	uint32_t n;

	ucm_tun__destroy(tun);
	close(s[1]);
	n = ucm_txq__reclaim(t);
	UT_ASSERT(reclaim < 0 || n == (uint32_t)reclaim, "reclaim: %u frames, want %d", n, reclaim);
	UT_ASSERT(!ucm_txq__destroy(t), "txq destroy");
	return finish(u, p);
}

/* A worker given a way out (ucm_tun__set_back()) and opened by the
 * one-way ops: no read path. The channel may belong to a cpumap before,
 * gone since; the one-way worker never touches it. */
static int test_one_way_ignores_back(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	int s[2];

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	OPEN_OR_SKIP(ops, tun);
	UT_ASSERT(tun->wk[0].st && !tun->wk[0].st->back,
		  "the one-way worker opened the read path of a channel set before");
	ops->close(tun, 0);
	return back_done(u, p, t, tun, s, 64);
}

/*
 * The read path gives up on a batch whose reads are still in the kernel
 * (its wait failed): ucm_tun_back_close() must end those reads before their
 * frames go home. A datagram sent after close must still be in the socket,
 * and in no frame.
 */
static int test_back_close_ends_reads(void)
{
	static const char mark[] = "read-after-close";
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun_back_stats rs;
	struct ucm_txq_stats ts;
	uint64_t before[16];
	int s[2], dups[MAX_RINGS], ndup;
	struct ucm_tun *tun;
	char buf[256];
	ssize_t n;

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;

	rings_now(before);
	OPEN_OR_SKIP(ops, tun);
	ndup = hold_rings(before, dups);
	UT_ASSERT(ndup == 2, "%d new rings, want the writes' and the reads'", ndup);

	log_start();
	ucm_tun_test_wait_fail = 1;
	UT_ASSERT(ops->poll(tun, 0) == 0, "a batch of reads of an empty socket read something");
	UT_ASSERT(!ucm_tun_test_wait_fail, "the read path never waited for its batch");
	ops->close(tun, 0);
	ucm_set_print(NULL);

	/* What the reads of that batch would take, were they still there. */
	UT_ASSERT(send(s[1], mark, sizeof(mark), 0) == sizeof(mark), "send");
	ut_msleep(20);
	n = recv(s[0], buf, sizeof(buf), MSG_DONTWAIT);
	close_all(dups, ndup);
	UT_ASSERT(n == sizeof(mark),
		  "the datagram sent after close is not in the socket (recv: %s): a read left in the kernel took it%s",
		  n < 0 ? strerror(errno) : "short",
		  umem_has(u, mark) ? ", into a frame that had gone home" : "");
	UT_ASSERT(!umem_has(u, mark), "a frame holds the datagram too");

	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(rs.err == 1 && rs.packets == 0, "back stats: err %llu packets %llu",
		  (unsigned long long)rs.err, (unsigned long long)rs.packets);
	ucm_txq__stats(t, &ts, sizeof(ts));
	UT_ASSERT(ts.dropped == UCM_TUN_BACK_BATCH, "%llu frames home from the read path, want %u",
		  (unsigned long long)ts.dropped, UCM_TUN_BACK_BATCH);
	UT_ASSERT(strstr(logbuf, "reading stops"), "no word of the failed wait: '%s'", logbuf);

	return back_done(u, p, t, tun, s, 64 - UCM_TUN_BACK_BATCH);
}

/*
 * A sleep the ring refuses (not a signal, not its timeout) stops reading
 * for good, said and counted (stopped), as a batch's failed wait does;
 * the next sleep is on the wake alone, no spin on a wait that returns at
 * once.
 */
static int test_back_sleep_fails(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_tun_back_stats rs;
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	uint64_t one = 1;
	int s[2], efd, ret;

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	OPEN_OR_SKIP(ops, tun);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	UT_ASSERT(efd >= 0, "eventfd: %s", strerror(errno));
	UT_ASSERT(ops->poll(tun, 0) == 0, "a read of an empty socket read something");
	/* Woken already: the sleep's wait returns at once, then refused. */
	UT_ASSERT(write(efd, &one, sizeof(one)) == sizeof(one), "wake");
	log_start();
	ucm_tun_test_sleep_fail = 1;
	ret = ops->wait(tun, 0, efd);
	ucm_tun_test_sleep_fail = 0;
	ucm_set_print(NULL);
	UT_ASSERT(ret == 0, "the failed sleep returned %d", ret);
	UT_ASSERT(tun->wk[0].st->back->dead, "reading goes on after a refused sleep");
	UT_ASSERT(strstr(logbuf, "failed a sleep") && strstr(logbuf, "reading stops"),
		  "no word of the failed sleep: '%s'", logbuf);
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(rs.stopped == 1, "back stats: stopped %llu, want 1",
		  (unsigned long long)rs.stopped);
	/* Stopped: a sleep waits on the wake alone (here written: at once). */
	UT_ASSERT(ops->wait(tun, 0, efd) == 0, "the sleep after the stop");
	ops->close(tun, 0);
	close(efd);
	/* The batch's frames went home from the read path at close. */
	return back_done(u, p, t, tun, s, 64 - UCM_TUN_BACK_BATCH);
}

/*
 * The usual close: a turn read one packet and keeps the rest of its frames
 * for the next (no read in the kernel between turns); close sends them
 * home, and the packet goes out through the channel.
 */
static int test_back_close_keeps_order(void)
{
	static const char pkt[] = "one packet for the way back";
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	char wire[VNET_LEN + sizeof(pkt)] = {};	/* a zeroed vnet header first */
	struct ucm_txq_stats ts;
	struct ucm_tun *tun;
	uint64_t desc[4];
	int s[2];
	uint32_t n;

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	OPEN_OR_SKIP(ops, tun);

	memcpy(wire + VNET_LEN, pkt, sizeof(pkt));
	UT_ASSERT(send(s[1], wire, sizeof(wire), 0) == sizeof(wire), "send");
	UT_ASSERT(ops->poll(tun, 0) == 1, "the packet was not read");
	ops->close(tun, 0);

	n = ucm_txq__collect(t, desc, 4);
	UT_ASSERT(n == 1 && ucm_desc_len(desc[0]) == sizeof(pkt), "%u packets out", n);
	UT_ASSERT(!memcmp((char *)ucm_umem__area(u) + ucm_desc_addr(desc[0]), pkt, sizeof(pkt)),
		  "the packet out is not the one read");
	desc[0] = ucm_desc_addr(desc[0]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
	UT_ASSERT(!ucm_umem__put_bulk(u, desc, 1), "home after TX");
	ucm_txq__stats(t, &ts, sizeof(ts));
	UT_ASSERT(ts.dropped == UCM_TUN_BACK_BATCH - 1, "%llu frames home from the read path, want %u",
		  (unsigned long long)ts.dropped, UCM_TUN_BACK_BATCH - 1);

	return back_done(u, p, t, tun, s, 64 - UCM_TUN_BACK_BATCH);
}

/*
 * A kernel whose tun takes no RWF_NOWAIT (before 6.4): io_uring would
 * park each read of the empty tun and the turn would wait for a packet a
 * read. Here the fake's fd is O_NONBLOCK, as a tun's is: one packet, one
 * turn that returns, the packet out.
 */
static int test_back_no_nowait(void)
{
	static const char pkt[] = "a packet on an old kernel";
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	char wire[VNET_LEN + sizeof(pkt)] = {};
	struct ucm_tun *tun;
	uint64_t desc[4];
	int s[2], got;
	uint32_t n;

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	tun->rw_nowait = 0;
	UT_ASSERT(!fcntl(s[0], F_SETFL, O_NONBLOCK), "O_NONBLOCK");
	OPEN_OR_SKIP(ops, tun);
	memcpy(wire + VNET_LEN, pkt, sizeof(pkt));
	UT_ASSERT(send(s[1], wire, sizeof(wire), 0) == sizeof(wire), "send");
	alarm(5);	/* a parked read holds the turn: fail, not hang */
	got = ops->poll(tun, 0);
	alarm(0);
	UT_ASSERT(got == 1, "the packet was not read: %d", got);
	ops->close(tun, 0);
	n = ucm_txq__collect(t, desc, 4);
	UT_ASSERT(n == 1 && ucm_desc_len(desc[0]) == sizeof(pkt), "%u packets out", n);
	desc[0] = ucm_desc_addr(desc[0]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
	UT_ASSERT(!ucm_umem__put_bulk(u, desc, 1), "home after TX");
	return back_done(u, p, t, tun, s, 64 - UCM_TUN_BACK_BATCH);
}

/* A tap's TCPv4 super-packet as a tun with offloads gives it: vnet header
 * (GSO_TCPV4, NEEDS_CSUM), Ethernet, IPv4, TCP, @payload bytes of @c. */
static uint32_t super_tcp4(uint8_t *w, uint32_t payload, uint16_t mss, uint32_t seq, char c)
{
	struct virtio_net_hdr *vh = (struct virtio_net_hdr *)w;
	uint8_t *eth = w + VNET_LEN, *ip = eth + 14, *tcp = ip + 20;
	uint32_t len = 14 + 20 + 20 + payload;

	memset(w, 0, VNET_LEN + 54);
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh->gso_size = mss;
	vh->csum_start = 34;
	vh->csum_offset = 16;
	eth[12] = 0x08;
	ip[0] = 0x45;
	st_be16(ip + 2, 20 + 20 + payload);
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	tcp[4] = seq >> 24;
	tcp[5] = seq >> 16;
	tcp[6] = seq >> 8;
	tcp[7] = seq;
	tcp[12] = 5 << 4;
	tcp[13] = 0x18;
	memset(tcp + 20, c, payload);
	return VNET_LEN + len;
}

/* Two of them into @fd, 45 segments of 1448 bytes each, of 'a's then 'b's,
 * the second's sequence following the first's from 1000. */
static int send_two_supers(int fd)
{
	static uint8_t wire[VNET_LEN + 65536];
	uint32_t k, n;

	for (k = 0; k < 2; k++) {
		n = super_tcp4(wire, 45 * 1448, 1448, 1000 + k * 45 * 1448, 'a' + k);
		UT_ASSERT(send(fd, wire, n, 0) == (ssize_t)n, "send: %s", strerror(errno));
	}
	return 0;
}

/*
 * With offloads the read path cuts a super-packet into segments, each in a
 * frame of its own, in order. Two super-packets of 45 segments need more
 * frames than are lent and more room than the channel has: the turn stops
 * in the first, the next turns go on from there once the channel is
 * emptied and frames lent again, and every frame comes home.
 */
static int test_back_super_packets(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun_back_stats rs;
	uint32_t n, k, got = 0, turns = 0, seq = 1000;
	uint64_t desc[64];
	struct ucm_tun *tun;
	int s[2];

	if (back_setup(&u, &p, &t, &tun, s, true))
		return 1;
	OPEN_OR_SKIP(ops, tun);

	if (send_two_supers(s[1]))
		return 1;
	/* Turns until both are out: each collects what went out, sends those
	 * frames home, and lends again. */
	while (got < 90 && turns++ < 20) {
		ops->poll(tun, 0);
		while ((n = ucm_txq__collect(t, desc, 64))) {
			for (k = 0; k < n; k++, got++) {
				uint8_t *f = (uint8_t *)ucm_umem__area(u) + ucm_desc_addr(desc[k]);

				UT_ASSERT(ucm_desc_len(desc[k]) == 54 + 1448,
					  "segment %u: %u bytes", got, ucm_desc_len(desc[k]));
				UT_ASSERT(ld_be32(f + 38) == seq, "segment %u: sequence %u, want %u",
					  got, ld_be32(f + 38), seq);
				UT_ASSERT(f[54] == (got < 45 ? 'a' : 'b'), "segment %u out of order", got);
				seq += 1448;
				desc[k] = ucm_desc_addr(desc[k]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
			}
			UT_ASSERT(!ucm_umem__put_bulk(u, desc, n), "home after TX");
		}
		ucm_txq__lend(t, p);
	}
	UT_ASSERT(got == 90, "%u segments out in %u turns, want 90", got, turns);
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(rs.super_packets == 2 && rs.segments == 90 && rs.packets == 90,
		  "stats: super %llu segments %llu packets %llu",
		  (unsigned long long)rs.super_packets, (unsigned long long)rs.segments,
		  (unsigned long long)rs.packets);
	ops->close(tun, 0);
	return back_done(u, p, t, tun, s, -1);
}

/*
 * The next hops from the kernel (lo here, which routes nothing to
 * 10.0.0.2 out of it): a packet makes the resolver ask. A second open of
 * the worker, a new resolver, goes on from the first's count: a total
 * that went back would read as a counter reset.
 */
static int test_back_neigh_counts_go_on(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_tun_l2 l2 = { .resolve_ifindex = (int)if_nametoindex("lo") };
	static uint8_t wire[VNET_LEN + 256];
	struct ucm_tun_back_stats rs;
	uint64_t first;
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	uint32_t n, i;
	int s[2];

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	UT_ASSERT(l2.resolve_ifindex > 0, "no lo");
	tun->flags &= ~UCM_TUN_F_TAP;	/* a tun's packets: next hops to find */
	{
		struct ucm_tun_l2 none = l2;

		/* An index of no interface: every answer would be ENODEV. */
		none.resolve_ifindex = 0x7ffffff0;
		UT_ASSERT(ucm_tun__set_back(tun, 0, t, &none) == -EINVAL,
			  "set_back with next hops of no interface taken");
		/* A group source; no next hop, or a group one, without the
		 * kernel's tables: every frame would go out wrong. */
		none = l2;
		none.src[0] = 1;
		UT_ASSERT(ucm_tun__set_back(tun, 0, t, &none) == -EINVAL,
			  "set_back with a group source taken");
		none = l2;
		none.resolve_ifindex = 0;
		UT_ASSERT(ucm_tun__set_back(tun, 0, t, &none) == -EINVAL,
			  "set_back with no next hop taken");
		none.dst[0] = 0xff;
		UT_ASSERT(ucm_tun__set_back(tun, 0, t, &none) == -EINVAL,
			  "set_back with a group next hop taken");
	}
	UT_ASSERT(!ucm_tun__set_back(tun, 0, t, &l2), "set_back with next hops");
	OPEN_OR_SKIP(ops, tun);
	n = super_tcp4(wire, 100, 1448, 1, 'x') - 14;
	memset(wire, 0, VNET_LEN);	/* a plain packet, no offload asked */
	memmove(wire + VNET_LEN, wire + VNET_LEN + 14, n - VNET_LEN);	/* no Ethernet */
	UT_ASSERT(send(s[1], wire, n, 0) == (ssize_t)n, "send: %s", strerror(errno));
	for (i = 0; i < 100; i++) {
		ops->poll(tun, 0);
		ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
		if (rs.neigh_requests >= 2)	/* the start's dump, a question */
			break;
		ut_msleep(10);
	}
	ops->close(tun, 0);
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	first = rs.neigh_requests;
	UT_ASSERT(first >= 2, "no question about the next hop in 1 s (%llu messages)",
		  (unsigned long long)first);
	OPEN_OR_SKIP(ops, tun);
	ops->poll(tun, 0);
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(rs.neigh_requests >= first, "neigh_requests went back from %llu to %llu",
		  (unsigned long long)first, (unsigned long long)rs.neigh_requests);
	ops->close(tun, 0);
	ucm_txq__lend(t, p);
	return back_done(u, p, t, tun, s, -1);
}

/* Send one plain IPv4 packet (no offload asked) into the tun's socket,
 * take the turn, and return the source MAC of the frame that went out. */
static int back_one_src(const struct ucm_sink_ops *ops, struct ucm_tun *tun, struct ucm_txq *t,
			struct ucm_umem *u, int s, uint8_t *src)
{
	static uint8_t wire[VNET_LEN + 256];
	uint32_t n, i;
	uint64_t d;

	n = super_tcp4(wire, 100, 1448, 1, 'x') - 14;
	memset(wire, 0, VNET_LEN);
	memmove(wire + VNET_LEN, wire + VNET_LEN + 14, n - VNET_LEN);	/* no Ethernet */
	UT_ASSERT(send(s, wire, n, 0) == (ssize_t)n, "send: %s", strerror(errno));
	for (i = 0, n = 0; i < 100 && !n; i++) {
		ops->poll(tun, 0);
		n = ucm_txq__collect(t, &d, 1);
		if (!n)
			ut_msleep(1);
	}
	UT_ASSERT(n == 1, "the packet did not go out");
	memcpy(src, (uint8_t *)ucm_umem__area(u) + ucm_desc_addr(d) + 6, 6);
	d = ucm_desc_addr(d) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
	UT_ASSERT(!ucm_umem__put_bulk(u, &d, 1), "home after TX");
	return 0;
}

/*
 * A super-packet whose turn stopped in it goes on in the next turn: its
 * segments from then on leave from the source set meanwhile. Tun mode:
 * two 45-segment super-packets as a tun gives them (no Ethernet), more
 * segments than a turn sends.
 */
static int test_back_src_super_resumed(void)
{
	static const uint8_t a[6] = { 2, 0, 0, 0, 0, 0xa }, b[6] = { 2, 0, 0, 0, 0, 0xb };
	static uint8_t wire[VNET_LEN + 65536];
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_tun_l2 l2 = { .dst = { 2, 0, 0, 0, 0, 0xd } };
	struct virtio_net_hdr *vh = (struct virtio_net_hdr *)wire;
	uint32_t n, k, got = 0, first = 0, turns = 0, from_b = 0;
	uint64_t desc[64];
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	int s[2];

	if (back_setup(&u, &p, &t, &tun, s, true))
		return 1;
	tun->flags &= ~UCM_TUN_F_TAP;
	memcpy(l2.src, a, 6);
	UT_ASSERT(!ucm_tun__set_back(tun, 0, t, &l2), "set_back");
	OPEN_OR_SKIP(ops, tun);
	for (k = 0; k < 2; k++) {
		n = super_tcp4(wire, 45 * 1448, 1448, 1000 + k * 45 * 1448, 'a' + k) - 14;
		memmove(wire + VNET_LEN, wire + VNET_LEN + 14, n - VNET_LEN);
		vh->csum_start -= 14;
		UT_ASSERT(send(s[1], wire, n, 0) == (ssize_t)n, "send: %s", strerror(errno));
	}
	while (got < 90 && turns++ < 20) {
		ops->poll(tun, 0);
		if (turns == 1)
			UT_ASSERT(!ucm_tun__set_back_src(tun, b), "set_back_src");
		while ((n = ucm_txq__collect(t, desc, 64))) {
			for (k = 0; k < n; k++, got++) {
				uint8_t *f = (uint8_t *)ucm_umem__area(u) + ucm_desc_addr(desc[k]);

				if (turns == 1)
					first++;
				UT_ASSERT(!memcmp(f + 6, turns == 1 ? a : b, 6),
					  "segment %u (turn %u) from %02x", got, turns, f[11]);
				from_b += turns > 1;
				desc[k] = ucm_desc_addr(desc[k]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
			}
			UT_ASSERT(!ucm_umem__put_bulk(u, desc, n), "home after TX");
		}
		ucm_txq__lend(t, p);
	}
	/* One cut in the first turn, its header written before the change. */
	UT_ASSERT(got == 90 && first % 45, "%u segments out, %u in the first turn", got, first);
	UT_ASSERT(from_b == 90 - first, "%u segments from the new source, want %u", from_b, 90 - first);
	ops->close(tun, 0);
	return back_done(u, p, t, tun, s, -1);
}

/* ucm_tun__set_back_src(): the way back's frames leave from the new
 * address from the next turn on; what it refuses changes nothing. */
static int test_back_src_follows(void)
{
	static const uint8_t a[6] = { 2, 0, 0, 0, 0, 0xa }, b[6] = { 2, 0, 0, 0, 0, 0xb };
	static const uint8_t group[6] = { 1, 0, 0x5e, 0, 0, 1 };
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_tun_l2 l2 = { .dst = { 2, 0, 0, 0, 0, 0xd } };
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	uint8_t src[6];
	int s[2];

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	UT_ASSERT(ucm_tun__set_back_src(tun, b) == -EINVAL, "a tap's source taken");
	tun->flags &= ~UCM_TUN_F_TAP;
	memcpy(l2.src, a, 6);
	UT_ASSERT(!ucm_tun__set_back(tun, 0, t, &l2), "set_back");
	UT_ASSERT(ucm_tun__set_back_src(NULL, b) == -EINVAL && ucm_tun__set_back_src(tun, NULL) == -EINVAL &&
		  ucm_tun__set_back_src(tun, group) == -EINVAL, "a bad source taken");
	OPEN_OR_SKIP(ops, tun);
	if (back_one_src(ops, tun, t, u, s[1], src))
		return 1;
	UT_ASSERT(!memcmp(src, a, 6), "first frame from %02x, want set_back()'s", src[5]);
	UT_ASSERT(!ucm_tun__set_back_src(tun, b), "set_back_src");
	if (back_one_src(ops, tun, t, u, s[1], src))
		return 1;
	UT_ASSERT(!memcmp(src, b, 6), "frame after set_back_src() from %02x, want 0b", src[5]);
	ops->close(tun, 0);
	ucm_txq__lend(t, p);
	return back_done(u, p, t, tun, s, -1);
}

/*
 * The way back of back_setup()'s @tun in tun mode, next hops from lo, from
 * source @src, opened; one packet to 10.0.0.2 read, which waits for its
 * next hop (the question about it is out). 0 with its read path in @r,
 * UT_SKIP, or 1.
 */
static int back_one_held(const struct ucm_sink_ops *ops, struct ucm_tun *tun, struct ucm_txq *t,
			 const uint8_t *src, int s1, struct tun_back **r)
{
	struct ucm_tun_l2 l2 = { .resolve_ifindex = (int)if_nametoindex("lo") };
	static uint8_t wire[VNET_LEN + 256];
	uint32_t n;

	UT_ASSERT(l2.resolve_ifindex > 0, "no lo");
	tun->flags &= ~UCM_TUN_F_TAP;
	if (src)
		memcpy(l2.src, src, 6);
	UT_ASSERT(!ucm_tun__set_back(tun, 0, t, &l2), "set_back");
	OPEN_OR_SKIP(ops, tun);
	n = super_tcp4(wire, 100, 1448, 1, 'x') - 14;
	memset(wire, 0, VNET_LEN);
	memmove(wire + VNET_LEN, wire + VNET_LEN + 14, n - VNET_LEN);	/* no Ethernet */
	UT_ASSERT(send(s1, wire, n, 0) == (ssize_t)n, "send: %s", strerror(errno));
	*r = tun->wk[0].st->back;
	for (n = 0; n < 100 && !(*r)->nunres; n++) {
		ops->poll(tun, 0);
		if (!(*r)->nunres)
			ut_msleep(1);
	}
	UT_ASSERT((*r)->nunres == 1, "%u packets wait for a next hop, want 1", (*r)->nunres);
	return 0;
}

/*
 * A packet waiting for its next hop has its Ethernet header written: a
 * source set meanwhile reaches it too. Tun mode, next hops from lo (the
 * question about 10.0.0.2 is out: the packet waits); the worker's sync
 * called as its next turn would, before that turn can drop it.
 */
static int test_back_src_held(void)
{
	static const uint8_t a[6] = { 2, 0, 0, 0, 0, 0xa }, b[6] = { 2, 0, 0, 0, 0, 0xb };
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct tun_back *r;
	const uint8_t *eth;
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	int s[2], err;

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	err = back_one_held(ops, tun, t, a, s[1], &r);
	if (err)
		return err;
	eth = (const uint8_t *)r->area + r->unres[0].at;
	UT_ASSERT(!memcmp(eth + 6, a, 6), "held from %02x, want set_back()'s", eth[11]);
	UT_ASSERT(!ucm_tun__set_back_src(tun, b), "set_back_src");
	ucm_tun_back_src_sync(r, &tun->back_src);
	UT_ASSERT(!memcmp(eth + 6, b, 6), "held from %02x after set_back_src(), want 0b", eth[11]);
	ops->close(tun, 0);
	ucm_txq__lend(t, p);
	return back_done(u, p, t, tun, s, -1);
}

/*
 * A packet waiting for its next hop ages while the channel is full: past
 * BACK_UNRES_NS a turn with no room drops it (drop_no_neigh, its frame
 * home), where it used to wait for as long as the stall lasted. Next hops
 * from lo, as above; the channel filled from the test's own frames.
 */
static int test_back_unres_ages_full(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_tun_back_stats rs;
	uint64_t fill[64];
	struct tun_back *r;
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	uint32_t room;
	int s[2], err;

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	err = back_one_held(ops, tun, t, NULL, s[1], &r);
	if (err)
		return err;
	room = ucm_txq__room(t);
	UT_ASSERT(room <= 64 && ucm_pool__alloc_bulk(p, fill, room) == (int)room, "alloc %u", room);
	UT_ASSERT(ucm_txq__send(t, fill, room) == room && !ucm_txq__room(t), "fill the channel");
	r->unres[0].since -= BACK_UNRES_NS;	/* as if it had waited that long */
	ops->poll(tun, 0);
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(!r->nunres && rs.drop_no_neigh == 1, "channel full: %u wait, %llu dropped, want 0 and 1",
		  r->nunres, (unsigned long long)rs.drop_no_neigh);
	ops->close(tun, 0);
	ucm_txq__lend(t, p);
	return back_done(u, p, t, tun, s, -1);
}

/*
 * A stall for room whose first turn also had no frame in hand: counted in
 * channel_waits too (the "waits for room" an operator reads under
 * overload), once for the whole stall. 64 packets fill the channel and
 * take the 64 frames lent; a 65th finds neither a frame nor room; frames
 * lent again leave it waiting for room alone.
 */
static int test_back_channel_waits(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	static uint8_t wire[VNET_LEN + 256];
	struct ucm_tun_back_stats rs;
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	uint64_t desc[64];
	uint32_t n, i, k;
	int s[2];

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	OPEN_OR_SKIP(ops, tun);
	n = super_tcp4(wire, 100, 1448, 1, 'x');
	memset(wire, 0, VNET_LEN);	/* a plain packet, no offload asked */
	for (i = 0; i < 64; i++)
		UT_ASSERT(send(s[1], wire, n, 0) == (ssize_t)n, "send: %s", strerror(errno));
	for (i = 0; i < 20; i++) {
		ops->poll(tun, 0);
		ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
		if (rs.packets == 64)
			break;
	}
	UT_ASSERT(rs.packets == 64 && !rs.channel_waits, "%llu packets out, %llu waits",
		  (unsigned long long)rs.packets, (unsigned long long)rs.channel_waits);
	UT_ASSERT(send(s[1], wire, n, 0) == (ssize_t)n, "send: %s", strerror(errno));
	ops->poll(tun, 0);
	UT_ASSERT(ucm_txq__lend(t, p) > 0, "no frame lent");
	ops->poll(tun, 0);
	ops->poll(tun, 0);
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(rs.no_frame >= 1 && rs.channel_waits == 1,
		  "no frame %llu, waits for room %llu (want 1)",
		  (unsigned long long)rs.no_frame, (unsigned long long)rs.channel_waits);
	/* Room: the 65th goes out, and every frame comes home. */
	while ((k = ucm_txq__collect(t, desc, 64))) {
		for (i = 0; i < k; i++)
			desc[i] = ucm_desc_addr(desc[i]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
		UT_ASSERT(!ucm_umem__put_bulk(u, desc, k), "home after TX");
	}
	ops->poll(tun, 0);
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(rs.packets == 65 && rs.channel_waits == 1, "%llu packets out, %llu waits",
		  (unsigned long long)rs.packets, (unsigned long long)rs.channel_waits);
	ops->close(tun, 0);
	while ((k = ucm_txq__collect(t, desc, 64))) {
		for (i = 0; i < k; i++)
			desc[i] = ucm_desc_addr(desc[i]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
		UT_ASSERT(!ucm_umem__put_bulk(u, desc, k), "home after TX");
	}
	return back_done(u, p, t, tun, s, -1);
}

/*
 * A turn that stops in a super-packet (45 segments, fewer frames in hand)
 * keeps it and the read after it for the next turn; a close before that
 * turn counts both as drop_stopped, sends their frames home, and nothing
 * of them goes out.
 */
static int test_back_close_counts_waiting(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun_back_stats rs;
	uint64_t desc[64];
	struct ucm_tun *tun;
	uint32_t n, k, out;
	int s[2];

	if (back_setup(&u, &p, &t, &tun, s, true))
		return 1;
	OPEN_OR_SKIP(ops, tun);

	if (send_two_supers(s[1]))
		return 1;
	ops->poll(tun, 0);
	ops->close(tun, 0);

	out = 0;
	while ((n = ucm_txq__collect(t, desc, 64))) {
		for (k = 0; k < n; k++)
			desc[k] = ucm_desc_addr(desc[k]) & ~(uint64_t)(ucm_umem__frame_size(u) - 1);
		UT_ASSERT(!ucm_umem__put_bulk(u, desc, n), "home after TX");
		out += n;
	}
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(out > 0 && out < 45, "%u segments out before the close, want some of the first 45",
		  out);
	UT_ASSERT(rs.packets == out, "packets %llu, %u out", (unsigned long long)rs.packets, out);
	UT_ASSERT(rs.drop_stopped == 2, "drop_stopped %llu, want 2 (the super-packet sent in part, the one after it)",
		  (unsigned long long)rs.drop_stopped);
	return back_done(u, p, t, tun, s, -1);
}

/*
 * A failed batch's reads are still in the kernel when a packet comes: one
 * of them may take it before close's cancel. Whichever wins, the count
 * must say so: the datagram taken into a frame <=> drop_stopped 1 (its
 * frame goes home with the rest, the audit sees to that).
 */
static int test_back_close_counts_late(void)
{
	static const char pkt[] = "a packet for a read given up";
	const struct ucm_sink_ops *ops = ucm_tun__sink_back();
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	char wire[VNET_LEN + sizeof(pkt)] = {}, buf[256];
	struct ucm_tun_back_stats rs;
	struct ucm_tun *tun;
	bool taken;
	int s[2];

	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	OPEN_OR_SKIP(ops, tun);

	log_start();
	ucm_tun_test_wait_fail = 1;
	UT_ASSERT(ops->poll(tun, 0) == 0, "a batch of reads of an empty socket read something");
	memcpy(wire + VNET_LEN, pkt, sizeof(pkt));
	UT_ASSERT(send(s[1], wire, sizeof(wire), 0) == sizeof(wire), "send");
	ut_msleep(20);
	ops->close(tun, 0);
	ucm_set_print(NULL);

	taken = recv(s[0], buf, sizeof(buf), MSG_DONTWAIT) < 0;
	ucm_tun__back_stats(tun, 0, &rs, sizeof(rs));
	UT_ASSERT(rs.drop_stopped == (taken ? 1 : 0),
		  "the datagram was %s a read, drop_stopped %llu", taken ? "taken by" : "left to",
		  (unsigned long long)rs.drop_stopped);
	UT_ASSERT(rs.packets == 0, "packets %llu", (unsigned long long)rs.packets);
	printf("# test_back_close_counts_late: the datagram was %s\n",
	       taken ? "taken by a read before its cancel" : "left in the socket");

	return back_done(u, p, t, tun, s, 64 - UCM_TUN_BACK_BATCH);
}

/* A write case's end: the queue closed, its @n frames home, the tun and
 * the socket's peer gone, every frame in the pool (finish()). */
static int tun_done(const struct ucm_sink_ops *ops, struct ucm_tun *tun, struct ucm_umem *u,
		    uint64_t *addrs, uint32_t n, int peer)
{
	ops->close(tun, 0);
	UT_ASSERT(!ucm_umem__put_bulk(u, addrs, n), "home");
	ucm_tun__destroy(tun);
	close(peer);
	return finish(u, ucm_umem__pool(u, 0));
}

/* ---- io_uring's task work ------------------------------------------------------ */

struct tw_writer {
	int efd;
	_Atomic int written;
};

static void *tw_write(void *arg)
{
	struct tw_writer *w = arg;
	uint64_t v = 1;

	if (write(w->efd, &v, sizeof(v)) != sizeof(v))
		v = 0;
	atomic_store_explicit(&w->written, 1, memory_order_release);
	return NULL;
}

/*
 * A poll's completion caused on another thread (the tun made readable by
 * the stack) is task work of the ring's thread: one that only looks at
 * its CQ (a spinning worker) must find it without a system call of its
 * own in between, through ucm_uring_run_tasks(). This thread waits for the
 * write on a flag, entering the kernel nowhere, then runs the tasks.
 */
/* An io layer's ring runs what the layer asks (a NOP), and refuses what
 * seccomp would (an open, a socket): -EACCES in its completion. */
static int uring_res(struct io_uring *ring, struct io_uring_sqe *sqe, int *res)
{
	struct io_uring_cqe *cqe;
	int err;

	(void)sqe;
	err = io_uring_submit_and_wait(ring, 1);
	if (err < 0)
		return err;
	err = io_uring_peek_cqe(ring, &cqe);
	if (err)
		return err;
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

static int test_uring_restricted(void)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int err, res = 1;

	err = ucm_uring_init(&ring, 8);
	UT_ASSERT(!err, "ucm_uring_init: %s", strerror(-err));
	if (!(ring.flags & IORING_SETUP_R_DISABLED)) {
		io_uring_queue_exit(&ring);
		/* From Linux 5.10 the ring must come restricted: ucpumapd's
		 * seccomp list counts on it. */
		UT_ASSERT(!ut_kernel_at_least(5, 10), "an unrestricted ring on Linux 5.10 or later");
		ut_skip_reason("no restricted rings before Linux 5.10");
		return UT_SKIP;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	UT_ASSERT(!uring_res(&ring, sqe, &res) && res == 0, "a NOP: %d", res);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC, 0);
	UT_ASSERT(!uring_res(&ring, sqe, &res), "submit");
	if (res >= 0)
		close(res);
	UT_ASSERT(res == -EACCES, "an open: %d (want -EACCES)", res);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_socket(sqe, AF_INET, SOCK_STREAM, 0, 0);
	UT_ASSERT(!uring_res(&ring, sqe, &res), "submit");
	if (res >= 0)
		close(res);
	UT_ASSERT(res == -EACCES, "a socket: %d (want -EACCES)", res);
	/* A timed wait as liburing does it where the kernel has no
	 * IORING_FEAT_EXT_ARG (5.10, which restricts rings): with a timeout
	 * request of its own, which the ring must take, or the wait ends at
	 * once. (liburing 2.3 returns 1 either way: the time tells.) */
	{
		struct __kernel_timespec ts = { .tv_nsec = 20000000 };
		struct io_uring_cqe *cqe = NULL;
		uint64_t t0 = ucm_now_ns(), waited;

		ring.features &= ~IORING_FEAT_EXT_ARG;
		err = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		waited = ucm_now_ns() - t0;
		UT_ASSERT(!cqe && waited >= 15000000,
			  "a timed wait of 20 ms without EXT_ARG: %d after %llu us, a completion: %d",
			  err, (unsigned long long)waited / 1000, cqe != NULL);
	}
	io_uring_queue_exit(&ring);
	return 0;
}

static void *nop_on_other_thread(void *arg)
{
	struct io_uring *ring = arg;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int res = 1;

	io_uring_prep_nop(sqe);
	if (uring_res(ring, sqe, &res))
		res = -EIO;
	return (void *)(intptr_t)res;
}

/* A ring made on one thread, used from another: an inline producer's
 * sink is opened where ucm_cpumap__producer_create() is called, and its
 * batches come from the RX thread (a SINGLE_ISSUER ring refuses that
 * thread's submits with -EEXIST). */
static int test_uring_other_thread(void)
{
	struct io_uring ring;
	pthread_t t;
	void *res;
	int err;

	err = ucm_uring_init(&ring, 8);
	UT_ASSERT(!err, "ucm_uring_init: %s", strerror(-err));
	UT_ASSERT(!pthread_create(&t, NULL, nop_on_other_thread, &ring), "thread");
	pthread_join(t, &res);
	io_uring_queue_exit(&ring);
	UT_ASSERT((intptr_t)res == 0, "a NOP from another thread: %d",
		  (int)(intptr_t)res);
	return 0;
}

static int test_uring_task_work(void)
{
	struct tw_writer w = { .efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) };
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	cpu_set_t mine, one;
	pthread_attr_t attr;
	int cpu[2] = { -1, -1 };
	pthread_t t;
	unsigned int ready;
	int err;

	UT_ASSERT(w.efd >= 0, "eventfd: %s", strerror(errno));
	err = ucm_uring_init(&ring, 8);
	if (err || !(ring.flags & IORING_SETUP_TASKRUN_FLAG)) {
		close(w.efd);
		if (!err)
			io_uring_queue_exit(&ring);
		UT_ASSERT(!ut_kernel_at_least(5, 19), "%s on Linux 5.19 or later",
			  err ? strerror(-err) : "a ring without IORING_SETUP_TASKRUN_FLAG");
		ut_skip_reason("no io_uring with IORING_SETUP_TASKRUN_FLAG before Linux 5.19");
		return UT_SKIP;
	}
	/* Each on a CPU of its own: the writer taking this thread's CPU
	 * would send it through the kernel (a return from preemption runs
	 * its task work), and the test would prove nothing. */
	sched_getaffinity(0, sizeof(mine), &mine);
	for (int c = 0; c < CPU_SETSIZE && cpu[1] < 0; c++)
		if (CPU_ISSET(c, &mine))
			cpu[cpu[0] < 0 ? 0 : 1] = c;
	if (cpu[1] < 0) {
		io_uring_queue_exit(&ring);
		close(w.efd);
		ut_skip_reason("one CPU: the writer would share this thread's");
		return UT_SKIP;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu[0], &one);
	UT_ASSERT(!pthread_setaffinity_np(pthread_self(), sizeof(one), &one), "pin");
	CPU_ZERO(&one);
	CPU_SET(cpu[1], &one);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_poll_add(sqe, w.efd, POLLIN);
	UT_ASSERT(io_uring_submit(&ring) == 1, "submit");
	UT_ASSERT(!pthread_create(&t, &attr, tw_write, &w), "thread");
	pthread_attr_destroy(&attr);
	while (!atomic_load_explicit(&w.written, memory_order_acquire))
		;	/* no system call here */
	ucm_uring_run_tasks(&ring);
	ready = io_uring_cq_ready(&ring);
	pthread_join(t, NULL);
	sched_setaffinity(0, sizeof(mine), &mine);
	io_uring_queue_exit(&ring);
	close(w.efd);
	UT_ASSERT(ready == 1, "the poll's completion not seen without a system call: %u CQEs",
		  ready);
	return 0;
}

/* ---- the write path ---------------------------------------------------------- */

/* Fill @fd's way to its peer with one-byte datagrams; return how many. */
static int fill_socket(int fd)
{
	int n = 0;

	while (send(fd, "f", 1, MSG_DONTWAIT) == 1)
		n++;
	return n;
}

/* Take @n datagrams of the peer's, or all there are when @n < 0, each
 * into @buf; return how many. */
static int take_datagrams(int fd, int n, char *buf, size_t sz)
{
	int got = 0;

	while ((n < 0 || got < n) && recv(fd, buf, sz, MSG_DONTWAIT) >= 0)
		got++;
	return got;
}

/* @n frames from the pool laid out as the worker hands them to its sink:
 * packet i of @len + i bytes of @c at DATA_OFF. */
static int frames_get(struct ucm_umem *u, uint64_t *addrs, struct ucm_frame_hdr **hdrs,
		      uint32_t n, char c, uint16_t len)
{
	uint32_t i;

	if (ucm_pool__alloc_bulk(ucm_umem__pool(u, 0), addrs, n) != (int)n)
		return -1;
	for (i = 0; i < n; i++) {
		hdrs[i] = ucm_umem__frame(ucm_umem__area(u), addrs[i]);
		memset(hdrs[i], 0, sizeof(*hdrs[i]));
		hdrs[i]->data_off = DATA_OFF;
		hdrs[i]->len = len + i;
		memset(ucm_frame_data(hdrs[i]), c, len + i);
	}
	return 0;
}

/*
 * A batch whose wait fails while its writes are still in the kernel (a
 * full socket): they must be over when xmit returns, since the worker
 * sends their frames home then, and the frames go out again at once, as
 * the next batch's. Nothing of the first batch may reach the socket after
 * that, and the next batch's completions must be its own: its result and
 * counters exact.
 */
static int test_write_batch_given_up(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u = mk_umem();
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_frame_hdr *hdrs[NPKT];
	uint64_t addrs[NPKT], bytes = 0;
	struct ucm_tun_stats st;
	int s[2], nfill, late = 0, reused = 0, good = 0, other = 0, failed_a, failed_b;
	struct ucm_tun *tun;
	char buf[512];
	ssize_t n;
	uint32_t i;

	UT_ASSERT(u, "umem");
	UT_ASSERT(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, s), "socketpair");
	nfill = fill_socket(s[0]);
	tun = fake_tun(s[0]);
	UT_ASSERT(tun, "tun");
	ucm_pool__set_owner(p);
	OPEN_OR_SKIP(ops, tun);

	UT_ASSERT(!frames_get(u, addrs, hdrs, NPKT, 'A', 100), "alloc");
	ucm_tun_test_wait_fail = 1;
	failed_a = ops->xmit(tun, 0, hdrs, addrs, NPKT);
	UT_ASSERT(!ucm_tun_test_wait_fail, "the write path never waited for its batch");
	UT_ASSERT(failed_a == NPKT, "%d of %d failed in a batch the socket had no room for",
		  failed_a, NPKT);
	/* The worker's part: home, and out again with the next batch. */
	UT_ASSERT(!ucm_umem__put_bulk(u, addrs, NPKT), "home");
	UT_ASSERT(!frames_get(u, addrs, hdrs, NPKT, 'B', 200), "alloc again");

	/* Room again: what is left of the first batch would go out now. */
	UT_ASSERT(take_datagrams(s[1], nfill, buf, sizeof(buf)) == nfill, "drain");
	ut_msleep(10);
	while ((n = recv(s[1], buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		late++;
		reused += n > 0 && buf[n - 1] == 'B';
	}
	failed_b = ops->xmit(tun, 0, hdrs, addrs, NPKT);
	for (i = 0; i < NPKT + 4; i++) {
		n = recv(s[1], buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			break;
		if (n == (ssize_t)(VNET_LEN + 200 + good) && buf[n - 1] == 'B')
			good++;
		else
			other++;
	}
	ucm_tun__worker_stats(tun, 0, &st, sizeof(st));
	for (i = 0; i < NPKT; i++)
		bytes += 200 + i;
	UT_ASSERT(!late && !failed_b && good == NPKT && !other,
		  "%d writes of the given-up batch went out after their frames went home (%d with the next batch's bytes); the next batch: %d failed, %d of its %d packets came, %d other datagrams",
		  late, reused, failed_b, good, NPKT, other);
	UT_ASSERT(st.packets == NPKT && st.bytes == bytes && st.err_other == NPKT,
		  "stats: packets %llu bytes %llu err_other %llu, want %d %llu %d",
		  (unsigned long long)st.packets, (unsigned long long)st.bytes,
		  (unsigned long long)st.err_other, NPKT, (unsigned long long)bytes, NPKT);

	return tun_done(ops, tun, u, addrs, NPKT, s[1]);
}

/*
 * A ring whose rebuild fails (out of memory for a moment) leaves the
 * worker on write(2), one packet a call, until a rebuild a second later
 * brings batches back: every packet delivered meanwhile, none lost.
 */
static int test_write_ring_rebuilt(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u = mk_umem();
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_frame_hdr *hdrs[NPKT];
	uint64_t addrs[NPKT], submits[3];
	struct ucm_tun_stats st;
	int s[2], failed[3];
	struct ucm_tun *tun;
	char buf[512];

	UT_ASSERT(u, "umem");
	UT_ASSERT(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, s),
		  "socketpair");
	tun = fake_tun(s[0]);
	UT_ASSERT(tun, "tun");
	ucm_pool__set_owner(p);
	OPEN_OR_SKIP(ops, tun);
	UT_ASSERT(!frames_get(u, addrs, hdrs, NPKT, 'A', 100), "alloc");
	/* The submit fails, and so does the ring's rebuild. */
	ucm_tun_test_ring_fail = 1;
	for (int k = 0; k < 3; k++) {
		failed[k] = ops->xmit(tun, 0, hdrs, addrs, NPKT);
		ucm_tun__worker_stats(tun, 0, &st, sizeof(st));
		submits[k] = st.submits;
		if (k == 1)
			ut_msleep(1100);	/* past RING_RETRY_NS */
	}
	UT_ASSERT(!ucm_tun_test_ring_fail, "the switch was never used");
	UT_ASSERT(failed[0] == NPKT && !failed[1] && !failed[2],
		  "failed: %d (want all %d: the submit failed), %d, %d (want 0)", failed[0], NPKT,
		  failed[1], failed[2]);
	UT_ASSERT(take_datagrams(s[1], -1, buf, sizeof(buf)) == 2 * NPKT, "delivered");
	/* A write(2) a packet, then one submission for the batch. */
	UT_ASSERT(submits[1] == submits[0] + NPKT && submits[2] == submits[1] + 1,
		  "submits %llu, %llu, %llu: the ring not rebuilt a second after it failed",
		  (unsigned long long)submits[0], (unsigned long long)submits[1],
		  (unsigned long long)submits[2]);
	UT_ASSERT(st.err_other == NPKT && st.packets == 2 * NPKT,
		  "stats: err_other %llu packets %llu, want %d %d",
		  (unsigned long long)st.err_other, (unsigned long long)st.packets, NPKT, 2 * NPKT);
	return tun_done(ops, tun, u, addrs, NPKT, s[1]);
}

/*
 * A packet of two frames (5000 bytes: an IPv4/UDP frame of a tap) is one
 * write of both parts whose vnet header's hdr_len ends its headers (42):
 * past a page, the kernel makes that much of the skb linear, and puts the
 * rest in pages, rather than copy it all into one high-order buffer.
 */
static int test_write_chain_hdr_len(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u = mk_umem();
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	uint32_t fs, head, len = 5000;
	struct ucm_frame_hdr *hdrs[2];
	struct virtio_net_hdr vh;
	struct ucm_chain *c;
	uint64_t addrs[2];
	struct ucm_tun *tun;
	static char buf[8192];
	int s[2], failed;
	ssize_t n;

	UT_ASSERT(u, "umem");
	fs = ucm_umem__frame_size(u);
	head = fs - DATA_OFF;
	UT_ASSERT(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, s), "socketpair");
	tun = fake_tun(s[0]);
	UT_ASSERT(tun, "tun");
	ucm_pool__set_owner(p);
	OPEN_OR_SKIP(ops, tun);
	UT_ASSERT(!frames_get(u, addrs, hdrs, 2, 'C', 100), "alloc");
	memset(ucm_frame_data(hdrs[0]), 'C', head);
	hdrs[0]->len = len;
	hdrs[0]->head_len = head;
	hdrs[0]->flags |= UCM_FRAME_F_CHAIN;
	hdrs[0]->pkt.flags = UCM_PKT_F_IPV4 | UCM_PKT_F_L4;
	hdrs[0]->pkt.len = len;
	hdrs[0]->pkt.l3_off = 14;
	hdrs[0]->pkt.l4_off = 34;
	hdrs[0]->pkt.l4_hlen = 8;
	hdrs[0]->pkt.l3_len = len - 14;
	hdrs[0]->pkt.l4_proto = IPPROTO_UDP;
	c = (struct ucm_chain *)((char *)hdrs[0] + UCM_CHAIN_OFF);
	c->nfrag = 1;
	c->head_len = head;
	c->frag[0] = ucm_desc_make(addrs[1] + DATA_OFF, len - head);
	memset((char *)hdrs[1] + DATA_OFF, 'D', len - head);
	failed = ops->xmit(tun, 0, hdrs, addrs, 1);
	n = recv(s[1], buf, sizeof(buf), MSG_DONTWAIT);
	memcpy(&vh, buf, sizeof(vh));
	UT_ASSERT(!failed && n == (ssize_t)(VNET_LEN + len), "%d failed, a write of %zd bytes",
		  failed, n);
	UT_ASSERT(buf[VNET_LEN + head - 1] == 'C' && buf[VNET_LEN + head] == 'D' &&
		  buf[n - 1] == 'D', "the two parts, in order");
	UT_ASSERT(vh.hdr_len == 42 && !vh.flags && vh.gso_type == VIRTIO_NET_HDR_GSO_NONE,
		  "vnet header: hdr_len %u, flags %u, gso_type %u (want 42, 0, none)",
		  vh.hdr_len, vh.flags, vh.gso_type);
	return tun_done(ops, tun, u, addrs, 2, s[1]);
}

/*
 * A batch into a full non-blocking tun (the tun's fds are O_NONBLOCK): each
 * write is refused with EAGAIN and counted, the batch returns at once
 * (io_uring parks no write of a non-blocking file), and the next batch,
 * with room again, goes out whole. alarm() ends a batch that would wait.
 */
static int test_write_full_nonblocking(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u = mk_umem();
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_frame_hdr *hdrs[NPKT];
	uint64_t addrs[NPKT];
	struct ucm_tun_stats st;
	int s[2], nfill, failed, failed_b;
	struct ucm_tun *tun;
	char buf[512];

	UT_ASSERT(u, "umem");
	UT_ASSERT(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, s),
		  "socketpair");
	nfill = fill_socket(s[0]);
	tun = fake_tun(s[0]);
	UT_ASSERT(tun, "tun");
	ucm_pool__set_owner(p);
	OPEN_OR_SKIP(ops, tun);
	UT_ASSERT(!frames_get(u, addrs, hdrs, NPKT, 'A', 100), "alloc");
	alarm(5);
	failed = ops->xmit(tun, 0, hdrs, addrs, NPKT);
	UT_ASSERT(failed == NPKT, "%d of %d failed in a batch the socket had no room for",
		  failed, NPKT);
	UT_ASSERT(take_datagrams(s[1], nfill, buf, sizeof(buf)) == nfill, "drain");
	failed_b = ops->xmit(tun, 0, hdrs, addrs, NPKT);
	alarm(0);
	ucm_tun__worker_stats(tun, 0, &st, sizeof(st));
	UT_ASSERT(!failed_b && take_datagrams(s[1], -1, buf, sizeof(buf)) == NPKT,
		  "with room again: %d failed", failed_b);
	UT_ASSERT(st.err_eagain == NPKT && st.packets == NPKT,
		  "stats: err_eagain %llu packets %llu, want %d %d",
		  (unsigned long long)st.err_eagain, (unsigned long long)st.packets, NPKT, NPKT);
	return tun_done(ops, tun, u, addrs, NPKT, s[1]);
}

/*
 * A late completion of an earlier batch (here a NOP that carries what the
 * earlier batch's first write carried, as the kernel's late answer would)
 * must not pass for the write now in that slot: the next batch's result
 * and counters stay its own, and its every write is reaped.
 */
static int test_write_stale_completion(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u = mk_umem();
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_frame_hdr *hdrs[NPKT];
	struct io_uring_sqe *sqe;
	struct ucm_tun_stats st;
	struct tun_wstate *ws;
	uint64_t addrs[NPKT];
	int s[2], failed_a, failed_b, got;
	struct ucm_tun *tun;
	char buf[512];

	WRITER_UP(ops, u, p, s, tun);
	ws = tun->wk[0].st;

	UT_ASSERT(!frames_get(u, addrs, hdrs, NPKT, 'A', 100), "alloc");
	failed_a = ops->xmit(tun, 0, hdrs, addrs, NPKT);
	UT_ASSERT(!failed_a, "%d of the first batch failed", failed_a);
	sqe = io_uring_get_sqe(&ws->ring);
	UT_ASSERT(sqe, "sqe");
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, tun_write_ud(ws, 0));
	UT_ASSERT(io_uring_submit(&ws->ring) == 1, "submit the late answer");

	failed_b = ops->xmit(tun, 0, hdrs, addrs, NPKT);
	got = take_datagrams(s[1], -1, buf, sizeof(buf));
	ucm_tun__worker_stats(tun, 0, &st, sizeof(st));
	UT_ASSERT(!failed_b && got == 2 * NPKT && st.packets == 2 * NPKT && !st.err_other,
		  "the next batch: %d failed; %d of %d datagrams came; stats packets %llu err_other %llu",
		  failed_b, got, 2 * NPKT, (unsigned long long)st.packets,
		  (unsigned long long)st.err_other);
	/* Every write of it reaped: the CQ holds nothing of it now. */
	UT_ASSERT(!io_uring_cq_ready(&ws->ring), "%u completions left over",
		  io_uring_cq_ready(&ws->ring));

	return tun_done(ops, tun, u, addrs, NPKT, s[1]);
}

/*
 * The worker stops right after a batch given up: its frames are home and
 * the sink closes. Nothing of that batch may reach the socket afterwards,
 * even while the ring lives on (a copy of its fd here).
 */
static int test_write_close_after_given_up(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u = mk_umem();
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_frame_hdr *hdrs[NPKT];
	int s[2], dups[MAX_RINGS], ndup, nfill, late, failed;
	uint64_t addrs[NPKT], before[16];
	struct ucm_tun *tun;
	char buf[512];

	UT_ASSERT(u, "umem");
	UT_ASSERT(!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, s), "socketpair");
	nfill = fill_socket(s[0]);
	tun = fake_tun(s[0]);
	UT_ASSERT(tun, "tun");
	ucm_pool__set_owner(p);
	rings_now(before);
	OPEN_OR_SKIP(ops, tun);
	ndup = hold_rings(before, dups);
	UT_ASSERT(ndup == 1, "%d new rings, want the writes'", ndup);

	UT_ASSERT(!frames_get(u, addrs, hdrs, NPKT, 'A', 100), "alloc");
	ucm_tun_test_wait_fail = 1;
	failed = ops->xmit(tun, 0, hdrs, addrs, NPKT);
	UT_ASSERT(failed == NPKT, "%d of %d failed", failed, NPKT);
	UT_ASSERT(!ucm_umem__put_bulk(u, addrs, NPKT), "home");
	ops->close(tun, 0);

	UT_ASSERT(take_datagrams(s[1], nfill, buf, sizeof(buf)) == nfill, "drain");
	ut_msleep(10);
	late = take_datagrams(s[1], -1, buf, sizeof(buf));
	close_all(dups, ndup);
	UT_ASSERT(!late, "%d writes went out after their frames went home and the sink closed",
		  late);

	ucm_tun__destroy(tun);
	close(s[1]);
	return finish(u, p);
}

/* A frame at @f: UDP or TCP over IPv4 or IPv6, 20 bytes of payload, its
 * L4 checksum the pseudo-header sum alone (@partial, a sender's offload)
 * or full. Return: its length. */
static uint32_t mk_l4(uint8_t *f, bool v6, bool tcp, bool partial)
{
	uint32_t l3h = v6 ? 40 : 20, hl4 = tcp ? 20 : 8, l4len = hl4 + 20, sum;
	uint8_t *ip = f + 14, *l4 = ip + l3h, proto = tcp ? 6 : 17;

	memset(f, 0, 14 + l3h + l4len);
	memset(f, 2, 12);
	st_be16(f + 12, v6 ? 0x86dd : 0x0800);
	if (v6) {
		ip[0] = 0x60;
		st_be16(ip + 4, l4len);
		ip[6] = proto, ip[7] = 64;
		ip[8] = 0x20, ip[23] = 1, ip[24] = 0x20, ip[39] = 2;
	} else {
		ip[0] = 0x45;
		st_be16(ip + 2, 20 + l4len);
		ip[8] = 64, ip[9] = proto;
		ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
		st_be16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, 20)));
	}
	st_be16(l4, 1000);
	st_be16(l4 + 2, 9000);
	if (tcp)
		l4[12] = 5 << 4, l4[13] = 0x10;
	else
		st_be16(l4 + 4, l4len);
	memset(l4 + hl4, 'p', 20);
	sum = ucm_pseudo_sum(ip, v6, proto, l4len);
	st_be16(l4 + ucm_l4_check_off(proto),
		partial ? ucm_csum_folded(sum) : ucm_csum_fold(ucm_csum_add(sum, l4, l4len)));
	return 14 + l3h + l4len;
}

/*
 * The write path leaves a partial checksum to the kernel: such a packet
 * goes with NEEDS_CSUM, csum_start at its L4 header (from the IP header
 * in a tun, from the Ethernet header in a tap) and csum_offset at its
 * field, its bytes as they came, and counts in csum_partial; a full
 * checksum goes with no offload, as before.
 */
static int test_write_partial_csum(void)
{
	/* v6, tcp, partial */
	static const bool c[NPKT][3] = { { 0, 0, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, { 0, 1, 0 } };
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u = mk_umem();
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_frame_hdr *hdrs[NPKT];
	uint8_t copy[NPKT][128], buf[512];
	uint64_t addrs[NPKT];
	struct ucm_tun_stats st;
	struct ucm_tun *tun;
	int s[2], failed;
	uint32_t i, len[NPKT];
	ssize_t n;

	WRITER_UP(ops, u, p, s, tun);
	UT_ASSERT(ucm_pool__alloc_bulk(p, addrs, NPKT) == NPKT, "alloc");
	for (int tap = 1; tap >= 0; tap--) {
		tun->flags = tap ? UCM_TUN_F_TAP : 0;
		for (i = 0; i < NPKT; i++) {
			uint8_t *d;

			hdrs[i] = ucm_umem__frame(ucm_umem__area(u), addrs[i]);
			memset(hdrs[i], 0, sizeof(*hdrs[i]));
			hdrs[i]->data_off = DATA_OFF;
			d = ucm_frame_data(hdrs[i]);
			len[i] = hdrs[i]->len = mk_l4(d, c[i][0], c[i][1], c[i][2]);
			memcpy(copy[i], d, len[i]);
			UT_ASSERT(ucm_pkt__parse(&hdrs[i]->pkt, d, len[i]) == UCM_DROP_NONE, "parse");
		}
		failed = ops->xmit(tun, 0, hdrs, addrs, NPKT);
		UT_ASSERT(!failed, "tap %d: %d failed", tap, failed);
		for (i = 0; i < NPKT; i++) {
			const struct virtio_net_hdr *vh = (const void *)buf;
			uint32_t skip = tap ? 0 : 14, l3h = c[i][0] ? 40 : 20;

			n = recv(s[1], buf, sizeof(buf), MSG_DONTWAIT);
			UT_ASSERT(n == (ssize_t)(VNET_LEN + len[i] - skip) &&
				  !memcmp(buf + VNET_LEN, copy[i] + skip, len[i] - skip),
				  "tap %d, packet %u: %zd bytes, not the packet as it came", tap, i, n);
			if (!c[i][2]) {
				UT_ASSERT(!vh->flags && !vh->gso_type && !vh->csum_start,
					  "tap %d, packet %u: a full checksum went with offloads", tap, i);
				continue;
			}
			UT_ASSERT(vh->flags == VIRTIO_NET_HDR_F_NEEDS_CSUM && !vh->gso_type &&
				  vh->csum_start == 14 - skip + l3h &&
				  vh->csum_offset == (c[i][1] ? 16 : 6),
				  "tap %d, packet %u: vnet header flags %u gso %u start %u offset %u",
				  tap, i, vh->flags, vh->gso_type, vh->csum_start, vh->csum_offset);
		}
	}
	ucm_tun__worker_stats(tun, 0, &st, sizeof(st));
	UT_ASSERT(st.packets == 2 * NPKT && st.csum_partial == 4, "stats: packets %llu csum_partial %llu",
		  (unsigned long long)st.packets, (unsigned long long)st.csum_partial);

	return tun_done(ops, tun, u, addrs, NPKT, s[1]);
}

/*
 * A field that holds the pseudo-header's sum where the kernel's
 * completion would sum more than its sender did goes without NEEDS_CSUM:
 * a tap frame with bytes past its datagram (Ethernet padding), a UDP
 * length short of the datagram (tun and tap). A full checksum that looks
 * partial (one in 2^16) would come out wrong there.
 */
static int test_write_partial_lookalike(void)
{
	const struct ucm_sink_ops *ops = ucm_tun__sink();
	struct ucm_umem *u = mk_umem();
	struct ucm_pool *p = ucm_umem__pool(u, 0);
	struct ucm_frame_hdr *hdrs[2];
	uint64_t addrs[2];
	struct ucm_tun_stats st;
	struct ucm_tun *tun;
	uint8_t buf[512], *d, *l4;
	int s[2], failed, tap;
	uint32_t i, len;

	WRITER_UP(ops, u, p, s, tun);
	UT_ASSERT(ucm_pool__alloc_bulk(p, addrs, 2) == 2, "alloc");
	for (tap = 1; tap >= 0; tap--) {
		tun->flags = tap ? UCM_TUN_F_TAP : 0;
		for (i = 0; i < 2; i++) {
			hdrs[i] = ucm_umem__frame(ucm_umem__area(u), addrs[i]);
			memset(hdrs[i], 0, sizeof(*hdrs[i]));
			hdrs[i]->data_off = DATA_OFF;
			d = ucm_frame_data(hdrs[i]);
			len = mk_l4(d, false, false, true);	/* IPv4 UDP, field = P */
			l4 = d + 14 + 20;
			if (i == 0) {
				memset(d + len, 0xee, 6);	/* padding past the datagram */
				len += 6;
			} else {
				/* UDP 4 bytes short of the datagram, P over its length */
				st_be16(l4 + 4, 24);
				st_be16(l4 + 6, ucm_csum_folded(ucm_pseudo_sum(d + 14, false, 17, 24)));
			}
			hdrs[i]->len = len;
			UT_ASSERT(ucm_pkt__parse(&hdrs[i]->pkt, d, len) == UCM_DROP_NONE, "parse %u", i);
		}
		failed = ops->xmit(tun, 0, hdrs, addrs, 2);
		UT_ASSERT(!failed, "tap %d: %d failed", tap, failed);
		for (i = 0; i < 2; i++) {
			const struct virtio_net_hdr *vh = (const void *)buf;
			ssize_t n = recv(s[1], buf, sizeof(buf), MSG_DONTWAIT);

			UT_ASSERT(n > (ssize_t)VNET_LEN, "tap %d, packet %u: recv %zd", tap, i, n);
			/* The padding of a tun's write is left out: its UDP
			 * length alone is the look-alike there. */
			UT_ASSERT(!vh->flags || (!tap && i == 0),
				  "tap %d, packet %u: NEEDS_CSUM for a sum over more than its sender's",
				  tap, i);
		}
	}
	ucm_tun__worker_stats(tun, 0, &st, sizeof(st));
	UT_ASSERT(st.csum_partial == 1, "csum_partial %llu, want 1 (the tun's padded one)",
		  (unsigned long long)st.csum_partial);
	return tun_done(ops, tun, u, addrs, 2, s[1]);
}

/* The way back's 0.2.0 names (tun.h) reach the same functions. */
static int test_back_old_names(void)
{
	struct ucm_umem *u;
	struct ucm_pool *p;
	struct ucm_txq *t;
	struct ucm_tun *tun;
	struct ucm_tun_back_stats a, b;
	int s[2];

	UT_ASSERT(ucm_tun__sink_duplex() == ucm_tun__sink_back(), "sink_duplex");
	UT_ASSERT(UCM_TUN_REV_BATCH == UCM_TUN_BACK_BATCH &&
		  UCM_TUN_REV_HEADROOM == UCM_TUN_BACK_HEADROOM, "constants");
	if (back_setup(&u, &p, &t, &tun, s, false))
		return 1;
	/* The old name gives worker 0 its channel again, as back_setup()'s
	 * ucm_tun__set_back() did, and refuses what the new name refuses. */
	tun->wk[0].txq = NULL;
	UT_ASSERT(ucm_tun__set_reverse(tun, 0, t, NULL) == 0 && tun->wk[0].txq == t,
		  "set_reverse did not set worker 0's channel");
	UT_ASSERT(ucm_tun__set_reverse(tun, UCM_TUN_MAX_WORKERS, t, NULL) == -EINVAL &&
		  ucm_tun__set_reverse(tun, 0, NULL, NULL) == -EINVAL,
		  "set_reverse accepted a bad worker or no channel");
	memset(&a, 0xa5, sizeof(a));
	memset(&b, 0x5a, sizeof(b));
	UT_ASSERT(ucm_tun__rev_stats(tun, 0, &a, sizeof(a)) == 0 &&
		  ucm_tun__back_stats(tun, 0, &b, sizeof(b)) == 0 &&
		  !memcmp(&a, &b, sizeof(a)), "rev_stats");
	UT_ASSERT(ucm_tun__rev_stats(tun, UCM_TUN_MAX_WORKERS, &a, sizeof(a)) ==
		  -EINVAL, "rev_stats out of range");
	return back_done(u, p, t, tun, s, -1);
}

static const struct ut_case cases[] = {
	UT_CASE(test_uring_other_thread),
	UT_CASE(test_back_old_names),
	UT_CASE(test_one_way_ignores_back),
	UT_CASE(test_back_close_ends_reads),
	UT_CASE(test_back_sleep_fails),
	UT_CASE(test_back_close_keeps_order),
	UT_CASE(test_back_no_nowait),
	UT_CASE(test_back_super_packets),
	UT_CASE(test_back_neigh_counts_go_on),
	UT_CASE(test_back_src_follows),
	UT_CASE(test_back_src_super_resumed),
	UT_CASE(test_back_src_held),
	UT_CASE(test_back_unres_ages_full),
	UT_CASE(test_back_channel_waits),
	UT_CASE(test_back_close_counts_waiting),
	UT_CASE(test_back_close_counts_late),
	UT_CASE(test_uring_task_work),
	UT_CASE(test_uring_restricted),
	UT_CASE(test_write_batch_given_up),
	UT_CASE(test_write_full_nonblocking),
	UT_CASE(test_write_ring_rebuilt),
	UT_CASE(test_write_chain_hdr_len),
	UT_CASE(test_write_stale_completion),
	UT_CASE(test_write_close_after_given_up),
	UT_CASE(test_write_partial_csum),
	UT_CASE(test_write_partial_lookalike),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
