// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cpumap tests: option checks, delivery, the sleep/wake protocol (with the
 * worker parked inside its race windows), drain on stop, ring-full drops,
 * malformed frames, the recycling switches, a multi-producer run whose
 * every frame is accounted for, and packets of several frames through each
 * of the map's drops.
 *
 * Every case bounds itself in time: waits poll with a deadline
 * (WAIT_MS) and fail instead of hanging.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <arpa/inet.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/txq.h"
#include "ucpumap/log.h"
#include "ucpumap/ring.h"
#include "engine/chain.h"
#include "engine/cpumap_internal.h"
#include "engine/cpumap_priv.h"
#include "utest.h"

#define WAIT_MS		2000
#define DATA_OFF	256
#define PKT_LEN		64
#define MAX_SEEN	(1 << 20)
/* A packet of several frames, as a 9000-byte one in 4096-byte frames
 * comes: PKT_LEN bytes in its first, CHAIN_MORE in each later one. */
#define CHAIN_FRAMES	3
#define CHAIN_MORE	1000

static int log_count;
static char log_last[256];
static int quiet_print(enum ucm_log_level level, const char *fmt, va_list ap)
{
	log_count++;
	vsnprintf(log_last, sizeof(log_last), fmt, ap);
	return 0;
}


/* Eth/IPv4/UDP with (producer, seq) in the payload. */
static void build_udp(uint8_t *p, uint32_t producer, uint32_t seq)
{
	static const uint8_t hdr[42] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, PKT_LEN - 14, 0, 0, 0x40, 0, 64, 17, 0, 0,
		198, 18, 0, 1, 198, 18, 0, 2,
		0x30, 0x39, 0x23, 0x28, 0, PKT_LEN - 34, 0, 0,
	};
	uint32_t v[2] = { htonl(producer), htonl(seq) };

	memset(p, 0, PKT_LEN);
	memcpy(p, hdr, sizeof(hdr));
	memcpy(p + 42, v, sizeof(v));
}

/* Write the packet where the "NIC" put it: DATA_OFF into the frame. The
 * frame header is the worker's to fill. */
static void frame_prep(struct ucm_umem *umem, uint64_t addr, uint32_t producer,
		       uint32_t seq)
{
	build_udp((uint8_t *)ucm_umem__frame(ucm_umem__area(umem), addr) + DATA_OFF,
		  producer, seq);
}

/* ---- a recording sink ------------------------------------------------------ */

struct rec_sink {
	pthread_mutex_t lock;
	uint64_t delivered;
	uint32_t max_prod;
	uint8_t *seen;			/* [producer << 16 | seq] */
	int errors;
	char why[256];
	/* Blocking: the sink waits while gate is closed. */
	atomic_int gate_closed;
	atomic_int in_xmit;
	unsigned int delay_us;
	/* KEEP sinks hand frames back here. */
	uint64_t *kept;
	uint32_t nkept;
	/* Waiting sinks (rec_wait_ops): the "other direction" is a pipe;
	 * poll() reads it, wait() sleeps on it and the wake eventfd. */
	int other[2];
	atomic_ulong polled, waits;
	/* Hand-over sizes, and (check_order: one producer, one worker)
	 * whether packets came in the order they were sent. */
	uint32_t max_n, xmits;
	bool check_order;
	uint32_t next_seq;
	/* check_pw_order: each producer's packets in the order it sent them
	 * on each worker (pw_next, the next sequence number each may take);
	 * last_pos[p]: how many packets had come when producer p's latest
	 * did. */
	bool check_pw_order;
	uint32_t pw_next[8][4];
	uint64_t last_pos[8];
	/* Packets of CHAIN_FRAMES frames delivered, their list intact. */
	uint64_t chains;
	/* ucm_now_ns() at the latest hand-over, on the worker. */
	uint64_t last_ns;
};

/* A packet of several frames as chain_prep() made it. */
static bool rec_chain(const struct ucm_frame_hdr *h)
{
	uint64_t part[UCM_FRAME_CHAIN_MAX];
	uint32_t i, n = ucm_frame_chain(h, part);

	if (n != CHAIN_FRAMES - 1 || h->head_len != PKT_LEN ||
	    h->len != PKT_LEN + n * CHAIN_MORE || !(h->pkt.flags & UCM_PKT_F_PARTIAL))
		return false;
	for (i = 0; i < n; i++)
		if (ucm_desc_len(part[i]) != CHAIN_MORE)
			return false;
	return true;
}

static int rec_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		    const uint64_t *addrs, uint32_t n)
{
	struct rec_sink *s = ctx;
	uint32_t i;

	atomic_fetch_add(&s->in_xmit, 1);
	while (atomic_load(&s->gate_closed))
		ut_msleep(1);
	if (s->delay_us)
		usleep(s->delay_us);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++) {
		struct ucm_frame_hdr *h = frames[i];
		const uint8_t *d = ucm_frame_data(h);
		uint32_t prod, seq, key;

		memcpy(&prod, d + 42, 4);
		memcpy(&seq, d + 46, 4);
		prod = ntohl(prod);
		seq = ntohl(seq);
		key = prod << 16 | (seq & 0xffff);
		if (!(h->pkt.flags & UCM_PKT_F_PORTS) || h->pkt.sport != 12345 ||
		    h->pkt.dport != 9000 || h->pkt.l4_proto != 17) {
			snprintf(s->why, sizeof(s->why), "descriptor not built: flags 0x%x sport %u",
				 h->pkt.flags, h->pkt.sport);
			s->errors++;
		} else if ((h->flags & UCM_FRAME_F_CHAIN) && !rec_chain(h)) {
			snprintf(s->why, sizeof(s->why), "packet %u/%u: its chain not as sent",
				 prod, seq);
			s->errors++;
		} else if (prod > s->max_prod || seq > 0xffff) {
			snprintf(s->why, sizeof(s->why), "bad stamp %u/%u", prod, seq);
			s->errors++;
		} else if (s->seen[key]++) {
			snprintf(s->why, sizeof(s->why), "packet %u/%u delivered twice", prod, seq);
			s->errors++;
		} else if (s->check_order && seq != s->next_seq) {
			snprintf(s->why, sizeof(s->why), "packet %u came when %u was due", seq,
				 s->next_seq);
			s->errors++;
		} else if (s->check_pw_order && prod < 8 && worker < 4 &&
			   seq < s->pw_next[prod][worker]) {
			snprintf(s->why, sizeof(s->why), "worker %u: packet %u/%u after %u",
				 worker, prod, seq, s->pw_next[prod][worker] - 1);
			s->errors++;
		}
		s->next_seq = seq + 1;
		if (prod < 8 && worker < 4) {
			s->pw_next[prod][worker] = seq + 1;
			s->last_pos[prod] = s->delivered + i;
		}
		if (s->kept)
			s->kept[s->nkept++] = addrs[i];
		s->chains += !!(h->flags & UCM_FRAME_F_CHAIN);
	}
	s->delivered += n;
	s->xmits++;
	s->last_ns = ucm_now_ns();
	if (n > s->max_n)
		s->max_n = n;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_sub(&s->in_xmit, 1);
	return 0;
}

static const struct ucm_sink_ops rec_ops = { .sz = sizeof(struct ucm_sink_ops), .xmit = rec_xmit };

static uint32_t rec_poll(void *ctx, uint32_t worker)
{
	struct rec_sink *s = ctx;
	char buf[64];
	ssize_t n = read(s->other[0], buf, sizeof(buf));

	if (n <= 0)
		return 0;
	atomic_fetch_add(&s->polled, n);
	return n;
}

/* Sleep on the wake fd and the other direction; read the wake when
 * @drain (a sink without UCM_SINK_F_POLL_WAKE). */
static int rec_wait_body(struct rec_sink *s, int wake_fd, bool drain)
{
	struct pollfd p[2] = { { .fd = wake_fd, .events = POLLIN },
			       { .fd = s->other[0], .events = POLLIN } };
	uint64_t v;

	atomic_fetch_add(&s->waits, 1);
	if (poll(p, 2, -1) < 0)
		return -1;
	if (drain && p[0].revents & POLLIN && read(wake_fd, &v, sizeof(v)) < 0)
		return -1;
	return 0;
}

static int rec_wait(void *ctx, uint32_t worker, int wake_fd)
{
	return rec_wait_body(ctx, wake_fd, true);
}

static int rec_poll_wait(void *ctx, uint32_t worker, int wake_fd)
{
	return rec_wait_body(ctx, wake_fd, false);
}

static const struct ucm_sink_ops rec_wait_ops = {
	.sz = sizeof(struct ucm_sink_ops),
	.xmit = rec_xmit, .poll = rec_poll, .wait = rec_wait,
};
/* The tun's kind: wait() polls the wake fd, the worker reads it. */
static const struct ucm_sink_ops rec_poll_wait_ops = {
	.sz = sizeof(struct ucm_sink_ops),
	.xmit = rec_xmit, .poll = rec_poll, .wait = rec_poll_wait,
	.flags = UCM_SINK_F_POLL_WAKE,
};
static const struct ucm_sink_ops rec_keep_ops = {
	.sz = sizeof(struct ucm_sink_ops),
	.xmit = rec_xmit, .flags = UCM_SINK_F_KEEP,
};

static void rec_init(struct rec_sink *s, uint32_t max_prod)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->max_prod = max_prod;
	s->seen = calloc(MAX_SEEN, 1);
	if (pipe2(s->other, O_NONBLOCK | O_CLOEXEC))
		s->other[0] = s->other[1] = -1;
}

static uint64_t rec_delivered(struct rec_sink *s)
{
	uint64_t v;

	pthread_mutex_lock(&s->lock);
	v = s->delivered;
	pthread_mutex_unlock(&s->lock);
	return v;
}

static bool wait_delivered(struct rec_sink *s, uint64_t want, unsigned int ms)
{
	uint64_t end = ut_ms_now() + ms;

	while (rec_delivered(s) < want) {
		if (ut_ms_now() > end)
			return false;
		ut_msleep(1);
	}
	return true;
}

/* Wait for worker w's processed counter to reach @want. */
static bool wait_processed(struct ucm_cpumap *map, uint32_t w, uint64_t want,
			   unsigned int ms)
{
	struct ucm_cpumap_worker_stats st;
	uint64_t end = ut_ms_now() + ms;

	for (;;) {
		ucm_cpumap__worker_stats(map, w, &st, sizeof(st));
		if (st.processed >= want)
			return true;
		if (ut_ms_now() > end)
			return false;
		ut_msleep(1);
	}
}

/*
 * Wait for pool @pool's statistic at @off (a struct ucm_pool_stats
 * member) to reach @want. A worker counts packets processed before their
 * frames go home: those come in bulks of 16, the last ones at its next
 * idle moment.
 */
static bool wait_pool_stat(struct ucm_pool *pool, size_t off, uint64_t want)
{
	struct ucm_pool_stats ps;
	uint64_t end = ut_ms_now() + WAIT_MS;

	for (;;) {
		ucm_pool__stats(pool, &ps, sizeof(ps));
		if (*(uint64_t *)((char *)&ps + off) >= want)
			return true;
		if (ut_ms_now() > end)
			return false;
		ut_msleep(1);
	}
}

struct fixture {
	struct ucm_umem *umem;
	struct ucm_pool *pool;
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer *prod;
	struct rec_sink sink;
	/* The frames of each packet enqueue_frames() makes: 0 or 1, one;
	 * CHAIN_FRAMES, a chain (chain_prep()). */
	uint32_t nframes;
};

/* The verdict the next fixture's map runs (NULL: none). */
static ucm_verdict_fn fx_verdict;

/* The fixture with @npools pools; its producer on pool 0. */
static int fixture_init_pools(struct fixture *f, int ncpus, uint32_t qsize,
			      const struct ucm_sink_ops *ops, uint32_t map_flags,
			      uint32_t umem_flags, uint32_t frames, uint32_t spin_us,
			      uint32_t npools)
{
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = frames,
		 .flags = umem_flags, .npools = npools);
	int cpus[4], n = ut_usable_cpus(cpus, 4);

	memset(f, 0, sizeof(*f));
	rec_init(&f->sink, 8);
	f->umem = ucm_umem__create(&uo);
	UT_ASSERT(f->umem, "umem: %s", strerror(errno));
	f->pool = ucm_umem__pool(f->umem, 0);
	ucm_pool__set_owner(f->pool);
	if (ncpus > n)
		ncpus = n;
	{
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = cpus, .ncpus = ncpus,
			 .qsize = qsize, .sink = ops, .sink_ctx = &f->sink,
			 .flags = map_flags, .spin_us = spin_us, .verdict = fx_verdict);

		f->map = ucm_cpumap__create(f->umem, &co);
	}
	UT_ASSERT(f->map, "cpumap: %s", strerror(errno));
	f->prod = ucm_cpumap__producer_create(f->map, f->pool);
	UT_ASSERT(f->prod, "producer");
	return 0;
}

static int fixture_init_spin(struct fixture *f, int ncpus, uint32_t qsize,
			     const struct ucm_sink_ops *ops, uint32_t map_flags,
			     uint32_t umem_flags, uint32_t frames, uint32_t spin_us)
{
	return fixture_init_pools(f, ncpus, qsize, ops, map_flags, umem_flags, frames,
				  spin_us, 1);
}

static int fixture_init(struct fixture *f, int ncpus, uint32_t qsize,
			const struct ucm_sink_ops *ops, uint32_t map_flags,
			uint32_t umem_flags, uint32_t frames)
{
	return fixture_init_spin(f, ncpus, qsize, ops, map_flags, umem_flags, frames, 0);
}

/* Destroy and prove that every frame came home. */
static int fixture_fini(struct fixture *f)
{
	struct ucm_pool_audit a;
	int err;

	ucm_cpumap__destroy(f->map);
	if (f->sink.kept && f->sink.nkept)
		UT_ASSERT(!ucm_umem__put_bulk(f->umem, f->sink.kept, f->sink.nkept),
			  "returning kept frames");
	err = ucm_umem__audit(f->umem, &a, sizeof(a));
	UT_ASSERT(!err, "audit failed");
	UT_ASSERT(a.loc[UCM_LOC_APP] + a.loc[UCM_LOC_BQ] + a.loc[UCM_LOC_WQ] +
		  a.loc[UCM_LOC_WORKER] + a.chain == 0, "%u frames still out (%u of a chain)",
		  a.frames - a.loc[UCM_LOC_STACK] - a.loc[UCM_LOC_CACHE] -
		  a.loc[UCM_LOC_RING], a.chain);
	UT_ASSERT(!ucm_umem__destroy(f->umem, 1000), "frames did not come home");
	free(f->sink.seen);
	free(f->sink.kept);
	close(f->sink.other[0]);
	close(f->sink.other[1]);
	return 0;
}

/*
 * A packet of CHAIN_FRAMES frames from the fixture's pool, as the RX
 * thread hands one on (engine/chain.h): its headers and stamp (seq) in
 * its first frame, the list of the later frames in that frame's
 * headroom, they tagged chain. Its descriptor into *@addr and *@len.
 */
static int chain_prep(struct fixture *f, uint32_t seq, uint64_t *addr, uint32_t *len)
{
	uint64_t fr[CHAIN_FRAMES];
	struct ucm_chain *c;
	uint8_t *p;
	uint32_t i;

	UT_ASSERT(ucm_pool__alloc_bulk(f->pool, fr, CHAIN_FRAMES) == CHAIN_FRAMES,
		  "alloc a chain: %s", strerror(errno));
	frame_prep(f->umem, fr[0], 0, seq);
	*len = PKT_LEN + (CHAIN_FRAMES - 1) * CHAIN_MORE;
	p = (uint8_t *)ucm_umem__frame(ucm_umem__area(f->umem), fr[0]) + DATA_OFF;
	p[16] = (*len - 14) >> 8;	/* the IP and UDP lengths: the whole packet's */
	p[17] = (*len - 14) & 0xff;
	p[38] = (*len - 34) >> 8;
	p[39] = (*len - 34) & 0xff;
	c = ucm_chain_of(ucm_umem__area(f->umem), fr[0]);
	c->nfrag = CHAIN_FRAMES - 1;
	c->head_len = PKT_LEN;
	for (i = 1; i < CHAIN_FRAMES; i++) {
		c->frag[i - 1] = ucm_desc_make(fr[i] + DATA_OFF, CHAIN_MORE);
		ucm_frame_move(f->umem, fr[i], UCM_LOC_APP, UCM_LOC_CHAIN);
	}
	*addr = (fr[0] + DATA_OFF) | UCM_DESC_CHAIN;
	return 0;
}

/* Allocate, stamp and enqueue @n packets (of f->nframes frames) to
 * worker @w, no flush. */
static int enqueue_frames(struct fixture *f, uint32_t w, uint32_t first_seq, uint32_t n)
{
	uint32_t i, len = PKT_LEN;

	for (i = 0; i < n; i++) {
		uint64_t addr;

		if (f->nframes > 1) {
			if (chain_prep(f, first_seq + i, &addr, &len))
				return 1;
		} else {
			UT_ASSERT(!ucm_pool__alloc(f->pool, &addr), "alloc %u: %s", i,
				  strerror(errno));
			frame_prep(f->umem, addr, 0, first_seq + i);
			addr += DATA_OFF;
		}
		UT_ASSERT(!ucm_cpumap_producer__enqueue(f->prod, w, addr, len), "enqueue");
	}
	return 0;
}

/* The same, flushed every @batch and at the end. Callers that expect no
 * enqueue drops give the worker a ring of >= @n. */
static int send_frames(struct fixture *f, uint32_t w, uint32_t first_seq,
		       uint32_t n, uint32_t batch)
{
	uint32_t i, k;

	for (i = 0; i < n; i += k) {
		k = n - i < batch ? n - i : batch;
		if (enqueue_frames(f, w, first_seq + i, k))
			return 1;
		if (k == batch)
			ucm_cpumap_producer__flush(f->prod);
	}
	ucm_cpumap_producer__flush(f->prod);
	return 0;
}

/* The bulks counted in wait_hist and in sink_hist. */
static void lat_counts(const struct ucm_cpumap_worker_stats *ws, uint64_t *nw, uint64_t *ns)
{
	uint32_t b;

	*nw = *ns = 0;
	for (b = 0; b < UCM_LAT_BUCKETS; b++) {
		*nw += ws->wait_hist[b];
		*ns += ws->sink_hist[b];
	}
}

/* ---- cases ------------------------------------------------------------------- */

static int test_create_rejects_bad_options(void)
{
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = 256);
	struct ucm_umem *umem = ucm_umem__create(&uo);
	UCM_OPTS(ucm_sink_ops, no_xmit);
	int ok[1] = { 0 }, dup[2] = { 0, 0 }, far[1] = { 4095 }, neg[1] = { -1 };
	struct {
		const char *what;
		struct ucm_cpumap_opts o;
	} bad[] = {
		{ "no cpus", { .sz = sizeof(struct ucm_cpumap_opts) } },
		{ "qsize 1000", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = ok, .ncpus = 1, .qsize = 1000 } },
		{ "qsize 32768", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = ok, .ncpus = 1, .qsize = 32768 } },
		{ "qsize 4", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = ok, .ncpus = 1, .qsize = 4 } },
		/* A full bulk and its stamp take 9 entries. */
		{ "qsize 8", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = ok, .ncpus = 1, .qsize = 8 } },
		{ "spin 1001 us", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = ok, .ncpus = 1,
				    .spin_us = UCM_SPIN_US_MAX + 1 } },
		{ "duplicate cpu", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = dup, .ncpus = 2 } },
		{ "cpu 4095", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = far, .ncpus = 1 } },
		{ "cpu -1", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = neg, .ncpus = 1 } },
		{ "sink without xmit", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = ok, .ncpus = 1, .sink = &no_xmit } },
		{ "ncpus without cpus", { .sz = sizeof(struct ucm_cpumap_opts), .ncpus = 1 } },
		{ "unknown flags", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = ok, .ncpus = 1, .flags = 0x200 } },
		{ "one producer, two inline workers", { .sz = sizeof(struct ucm_cpumap_opts), .ncpus = 2,
				.flags = UCM_CPUMAP_F_INLINE | UCM_CPUMAP_F_ONE_PRODUCER } },
		{ "lanes, inline", { .sz = sizeof(struct ucm_cpumap_opts), .ncpus = 1,
				.flags = UCM_CPUMAP_F_INLINE | UCM_CPUMAP_F_LANES } },
		{ "lanes, one producer", { .sz = sizeof(struct ucm_cpumap_opts), .cpus = ok, .ncpus = 1,
				.flags = UCM_CPUMAP_F_ONE_PRODUCER | UCM_CPUMAP_F_LANES } },
	};
	unsigned int i;

	UT_ASSERT(umem, "umem");
	ut_usable_cpus(ok, 1);
	dup[0] = dup[1] = ok[0];
	log_count = 0;
	ucm_set_print(quiet_print);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		struct ucm_cpumap *m = ucm_cpumap__create(umem, &bad[i].o);

		if (m)
			ucm_cpumap__destroy(m);
		UT_ASSERT(!m && errno == EINVAL, "%s: accepted (errno %d)", bad[i].what, errno);
	}
	/* Every refusal says why. */
	UT_ASSERT(log_count >= (int)(sizeof(bad) / sizeof(bad[0])), "only %d messages", log_count);
	ucm_set_print(NULL);
	UT_ASSERT(!ucm_umem__destroy(umem, 100), "umem destroy");
	return 0;
}

static atomic_int sized_closes;
static void sized_close(void *ctx, uint32_t worker)
{
	atomic_fetch_add(&sized_closes, 1);
}

/* Create with @ops as the sink: NULL and errno when refused. */
static struct ucm_cpumap *sized_create(struct ucm_umem *umem, int *cpu,
				       const struct ucm_sink_ops *ops)
{
	UCM_OPTS(ucm_cpumap_opts, co, .cpus = cpu, .ncpus = 1, .sink = ops);

	log_last[0] = 0;
	errno = 0;
	return ucm_cpumap__create(umem, &co);
}

/*
 * The sink ops are copied by the opts rules: sz 0 refused with a message
 * naming the fix; non-zero bytes past ours refused, zero ones accepted;
 * callbacks past an older, smaller sz absent (close not called).
 */
static int test_sink_ops_sized(void)
{
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = 256);
	struct ucm_umem *umem = ucm_umem__create(&uo);
	struct {
		struct ucm_sink_ops ops;
		uint64_t more;
	} big;
	struct ucm_sink_ops ops;
	struct ucm_cpumap *m;
	int cpu[1];

	UT_ASSERT(umem, "umem");
	ut_usable_cpus(cpu, 1);
	ucm_set_print(quiet_print);

	memset(&ops, 0, sizeof(ops));
	ops.xmit = rec_xmit;
	m = sized_create(umem, cpu, &ops);
	UT_ASSERT(!m && errno == EINVAL, "sz 0 accepted (errno %d)", errno);
	UT_ASSERT(strstr(log_last, ".sz = sizeof(struct ucm_sink_ops)"),
		  "the message does not name the fix: '%s'", log_last);

	memset(&big, 0, sizeof(big));
	big.ops.sz = sizeof(big);
	big.ops.xmit = rec_xmit;
	big.more = 1;
	m = sized_create(umem, cpu, &big.ops);
	UT_ASSERT(!m && errno == EINVAL, "unknown non-zero bytes accepted (errno %d)", errno);
	UT_ASSERT(strstr(log_last, "non-zero extra bytes"), "message '%s'", log_last);
	big.more = 0;
	m = sized_create(umem, cpu, &big.ops);
	UT_ASSERT(m, "a newer, larger sink with zeros past ours refused: %s", log_last);
	ucm_cpumap__destroy(m);

	/* An older sink that knew open and xmit only: the bytes after are not
	 * its, whatever they hold. */
	ops.sz = offsetof(struct ucm_sink_ops, xmit) + sizeof(ops.xmit);
	ops.close = sized_close;
	atomic_store(&sized_closes, 0);
	m = sized_create(umem, cpu, &ops);
	UT_ASSERT(m, "an older, smaller sink refused: %s", log_last);
	ucm_cpumap__destroy(m);
	UT_ASSERT(atomic_load(&sized_closes) == 0, "close past its sz was called");
	ops.sz = sizeof(ops);
	m = sized_create(umem, cpu, &ops);
	UT_ASSERT(m, "the full sink refused: %s", log_last);
	ucm_cpumap__destroy(m);
	UT_ASSERT(atomic_load(&sized_closes) == 1, "close called %d times",
		  atomic_load(&sized_closes));

	ucm_set_print(NULL);
	UT_ASSERT(!ucm_umem__destroy(umem, 100), "umem destroy");
	return 0;
}

static int delivery_case(uint32_t map_flags)
{
	struct fixture f;
	struct ucm_cpumap_enqueue_stats es;
	struct ucm_cpumap_worker_stats ws;

	/* 1000 frames in bulks of 8 are 1125 ring entries with their
	 * latency stamps: a ring that holds them all delivers every frame
	 * however late the worker runs (ring_full_case() tests the drops). */
	if (fixture_init(&f, 1, 2048, &rec_ops, map_flags, 0, 4096))
		return 1;
	if (send_frames(&f, 0, 0, 1000, 64))
		return 1;
	ucm_cpumap_producer__enqueue_stats(f.prod, 0, &es, sizeof(es));
	UT_ASSERT(wait_delivered(&f.sink, 1000, WAIT_MS),
		  "delivered %llu of 1000 (enqueue drops %llu)",
		  (unsigned long long)rec_delivered(&f.sink),
		  (unsigned long long)es.drops);
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	UT_ASSERT(wait_processed(f.map, 0, 1000, WAIT_MS), "processed");
	ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
	UT_ASSERT(es.processed == 1000 && es.drops == 0, "enqueue %llu/%llu",
		  (unsigned long long)es.processed, (unsigned long long)es.drops);
	/* Bulks of 8 when full, plus the flush remainders: 1000 = 125 x 8. */
	UT_ASSERT(es.events == 125, "events %llu", (unsigned long long)es.events);
	UT_ASSERT(ws.processed == 1000 && ws.drops == 0, "worker %llu/%llu",
		  (unsigned long long)ws.processed, (unsigned long long)ws.drops);
	return fixture_fini(&f);
}

static int test_delivery_and_descriptors(void)
{
	return delivery_case(0);
}

/*
 * UCM_CPUMAP_F_ONE_PRODUCER: single-producer worker rings carry the same
 * traffic (delivery, a full ring's drops), and the map keeps a second
 * producer out while its first exists, not after it is gone.
 */
static int ring_full_case(uint32_t map_flags);

static int test_one_producer(void)
{
	struct ucm_cpumap_producer *p2;
	struct fixture f;

	if (delivery_case(UCM_CPUMAP_F_ONE_PRODUCER) ||
	    ring_full_case(UCM_CPUMAP_F_ONE_PRODUCER))
		return 1;
	/* Without it, multi-producer (producers come after the map). */
	if (fixture_init(&f, 1, 1024, &rec_ops, 0, 0, 4096))
		return 1;
	UT_ASSERT(ucm_cpumap_test_ring_flags(f.map, 0) == UCM_RING_MP, "ring flags %d, want MP",
		  ucm_cpumap_test_ring_flags(f.map, 0));
	if (fixture_fini(&f))
		return 1;
	if (fixture_init(&f, 1, 1024, &rec_ops, UCM_CPUMAP_F_ONE_PRODUCER, 0, 4096))
		return 1;
	/* What the flag is for: the worker's ring is single-producer. */
	UT_ASSERT(ucm_cpumap_test_ring_flags(f.map, 0) == UCM_RING_SP, "ring flags %d, want SP",
		  ucm_cpumap_test_ring_flags(f.map, 0));
	f.sink.check_order = true;
	log_count = 0;
	ucm_set_print(quiet_print);
	errno = 0;
	p2 = ucm_cpumap__producer_create(f.map, f.pool);
	ucm_set_print(NULL);
	UT_ASSERT(!p2 && errno == EBUSY, "a second producer: %p, errno %d", (void *)p2, errno);
	UT_ASSERT(log_count == 1 && strstr(log_last, "one producer"), "said: %s", log_last);
	{
		UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = 256);
		struct ucm_umem *other = ucm_umem__create(&uo);

		UT_ASSERT(other, "umem");
		ucm_set_print(quiet_print);
		errno = 0;
		p2 = ucm_cpumap__producer_create(f.map, ucm_umem__pool(other, 0));
		ucm_set_print(NULL);
		UT_ASSERT(!p2 && errno == EINVAL && strstr(log_last, "of the map's UMEM"),
			  "a pool of another UMEM: %p, errno %d, said: %s", (void *)p2, errno, log_last);
		UT_ASSERT(!ucm_umem__destroy(other, 100), "umem destroy");
	}
	if (send_frames(&f, 0, 0, 100, 8))
		return 1;
	UT_ASSERT(wait_delivered(&f.sink, 100, WAIT_MS), "delivered %llu of 100",
		  (unsigned long long)rec_delivered(&f.sink));
	/* Its producer gone (its thread done), the map takes a new one,
	 * which goes on from where the ring is. */
	ucm_cpumap_producer__destroy(f.prod);
	f.prod = ucm_cpumap__producer_create(f.map, f.pool);
	UT_ASSERT(f.prod, "a producer after the first's destroy: %s", strerror(errno));
	if (send_frames(&f, 0, 100, 100, 8))
		return 1;
	UT_ASSERT(wait_delivered(&f.sink, 200, WAIT_MS), "delivered %llu of 200",
		  (unsigned long long)rec_delivered(&f.sink));
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	return fixture_fini(&f);
}

/* A test hook that parks the worker once, at one point, when armed. */
static atomic_int hook_armed = -1;
static atomic_int hook_parked, hook_release;

static void park_hook(uint32_t worker, enum ucm_cpumap_hook_point where)
{
	int expect = where;

	if (!atomic_compare_exchange_strong(&hook_armed, &expect, -1))
		return;
	atomic_store(&hook_parked, 1);
	while (!atomic_load(&hook_release))
		ut_msleep(1);
}

/* Worker 0 asleep: its sleep time grows while we look (sleep_ns counts a
 * sleep going on). */
static bool wait_asleep(struct ucm_cpumap *map)
{
	struct ucm_cpumap_worker_stats a, b;
	uint64_t end = ut_ms_now() + WAIT_MS;

	while (ut_ms_now() < end) {
		ucm_cpumap__worker_stats(map, 0, &a, sizeof(a));
		ut_msleep(2);
		ucm_cpumap__worker_stats(map, 0, &b, sizeof(b));
		if (b.sleep_ns - a.sleep_ns >= 1000000)
			return true;
	}
	return false;
}

/*
 * Park worker 0 at @where: frame 0 in and delivered, the worker asleep
 * again, then armed, frame 1 makes it pass through @where, where the hook
 * holds it until hook_release. Frames 0 and 1 are the fixture's first.
 */
static int park_worker(struct fixture *f, enum ucm_cpumap_hook_point where)
{
	uint64_t end;

	atomic_store(&hook_parked, 0);
	atomic_store(&hook_release, 0);
	__atomic_store_n(&ucm_cpumap_test_hook, park_hook, __ATOMIC_RELEASE);
	if (send_frames(f, 0, 0, 1, 1))
		return 1;
	UT_ASSERT(wait_processed(f->map, 0, 1, WAIT_MS), "first frame");
	/* Asleep again first: armed earlier, the hook could park the worker
	 * on its way to that sleep, and the next frame's kick would then be
	 * the one the window's frame is meant to make. */
	UT_ASSERT(wait_asleep(f->map), "the worker never went back to sleep");
	atomic_store(&hook_armed, (int)where);
	/* Make it pass through the point again. */
	if (send_frames(f, 0, 1, 1, 1))
		return 1;
	end = ut_ms_now() + WAIT_MS;
	while (!atomic_load(&hook_parked) && ut_ms_now() < end)
		ut_msleep(1);
	UT_ASSERT(atomic_load(&hook_parked), "worker never reached the hook");
	return 0;
}

static int park_case(enum ucm_cpumap_hook_point where,
		     const struct ucm_sink_ops *ops, uint32_t map_flags)
{
	struct ucm_cpumap_enqueue_stats es0, es1;
	struct fixture f;
	int ret;

	if (fixture_init(&f, 1, 256, ops, map_flags, 0, 4096) || park_worker(&f, where))
		return 1;

	/* The worker is inside the window: enqueue now. */
	ucm_cpumap_producer__enqueue_stats(f.prod, 0, &es0, sizeof(es0));
	if (send_frames(&f, 0, 2, 1, 1))
		return 1;
	ucm_cpumap_producer__enqueue_stats(f.prod, 0, &es1, sizeof(es1));
	atomic_store(&hook_release, 1);

	/* No lost wakeup: the frame must arrive without any further push. */
	ret = wait_delivered(&f.sink, 3, 1000);
	__atomic_store_n(&ucm_cpumap_test_hook, NULL, __ATOMIC_RELEASE);
	UT_ASSERT(ret, "frame enqueued in the window was not delivered within 1 s");
	if (where == UCM_CPUMAP_HOOK_BEFORE_SLEEP)
		/* It had announced sleep: the flush must have woken it. */
		UT_ASSERT(es1.wakeups == es0.wakeups + 1, "wakeups %llu -> %llu",
			  (unsigned long long)es0.wakeups, (unsigned long long)es1.wakeups);
	else
		/* Not yet announced: no wakeup, its own re-check finds it. */
		UT_ASSERT(es1.wakeups == es0.wakeups, "woken although it had not announced sleep");
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	return fixture_fini(&f);
}

/* Each window with every kind of worker ring: multi-producer,
 * single-producer (UCM_CPUMAP_F_ONE_PRODUCER: ucm_dp's with one queue),
 * and a producer's lane (UCM_CPUMAP_F_LANES). */
static int run_park_test_flags(enum ucm_cpumap_hook_point where,
			       const struct ucm_sink_ops *ops, uint32_t map_flags)
{
	return park_case(where, ops, map_flags) ||
	       park_case(where, ops, map_flags | UCM_CPUMAP_F_ONE_PRODUCER) ||
	       park_case(where, ops, map_flags | UCM_CPUMAP_F_LANES);
}

static int run_park_test(enum ucm_cpumap_hook_point where,
			 const struct ucm_sink_ops *ops)
{
	return run_park_test_flags(where, ops, 0);
}

static int test_no_lost_wakeup_before_sleep(void)
{
	return run_park_test(UCM_CPUMAP_HOOK_BEFORE_SLEEP, &rec_ops);
}

static int test_no_lost_wakeup_before_announce(void)
{
	return run_park_test(UCM_CPUMAP_HOOK_EMPTY_SEEN, &rec_ops);
}

/* The same two windows with a sink that sleeps on its own fds: the wake
 * goes through the worker's eventfd. */
static int test_wait_sink_no_lost_wakeup_before_sleep(void)
{
	return run_park_test(UCM_CPUMAP_HOOK_BEFORE_SLEEP, &rec_wait_ops);
}

static int test_wait_sink_no_lost_wakeup_before_announce(void)
{
	return run_park_test(UCM_CPUMAP_HOOK_EMPTY_SEEN, &rec_wait_ops);
}

/* The same two windows with a pre-wake: the worker sleeps in its epoll
 * set, the wake goes through its eventfd there. */
static int test_prewake_no_lost_wakeup_before_sleep(void)
{
	return run_park_test_flags(UCM_CPUMAP_HOOK_BEFORE_SLEEP, &rec_ops, UCM_CPUMAP_F_PREWAKE);
}

static int test_prewake_no_lost_wakeup_before_announce(void)
{
	return run_park_test_flags(UCM_CPUMAP_HOOK_EMPTY_SEEN, &rec_ops, UCM_CPUMAP_F_PREWAKE);
}

/* A sink that only polls its wake fd: the worker reads it; and with a
 * pre-wake, the sink polls the epoll set. */
static int test_poll_wait_sink_no_lost_wakeup_before_sleep(void)
{
	return run_park_test(UCM_CPUMAP_HOOK_BEFORE_SLEEP, &rec_poll_wait_ops);
}

static int test_poll_wait_sink_no_lost_wakeup_before_announce(void)
{
	return run_park_test(UCM_CPUMAP_HOOK_EMPTY_SEEN, &rec_poll_wait_ops);
}

static int test_poll_wait_prewake_no_lost_wakeup_before_sleep(void)
{
	return run_park_test_flags(UCM_CPUMAP_HOOK_BEFORE_SLEEP, &rec_poll_wait_ops,
				   UCM_CPUMAP_F_PREWAKE);
}

static int test_poll_wait_prewake_no_lost_wakeup_before_announce(void)
{
	return run_park_test_flags(UCM_CPUMAP_HOOK_EMPTY_SEEN, &rec_poll_wait_ops,
				   UCM_CPUMAP_F_PREWAKE);
}

static uint64_t worker_stat(struct ucm_cpumap *map, size_t off)
{
	struct ucm_cpumap_worker_stats ws;

	ucm_cpumap__worker_stats(map, 0, &ws, sizeof(ws));
	return *(uint64_t *)((char *)&ws + off);
}

/* Wait up to WAIT_MS for worker 0's counter at @off to reach @want. */
static bool wait_stat(struct ucm_cpumap *map, size_t off, uint64_t want)
{
	uint64_t end = ut_ms_now() + WAIT_MS;

	while (worker_stat(map, off) < want && ut_ms_now() < end)
		ut_msleep(1);
	return worker_stat(map, off) >= want;
}

/*
 * A pre-wake: an arrival fd (a pipe here, never read) wakes the sleeping
 * worker with no kick; edge-triggered, so a pipe that stays readable does
 * not keep it up (nor, with a sink that polls the epoll set, an edge left
 * in the set); frames are still delivered by the kick, the pre-woken
 * worker asleep again.
 */
static int prewake_case(const struct ucm_sink_ops *ops)
{
	const size_t pw = offsetof(struct ucm_cpumap_worker_stats, prewakes);
	const size_t sched = offsetof(struct ucm_cpumap_worker_stats, sched);
	const size_t slept = offsetof(struct ucm_cpumap_worker_stats, sleep_ns);
	int p[2];
	struct fixture f;
	uint64_t s0, n;
	uint32_t r;

	UT_ASSERT(!pipe2(p, O_CLOEXEC | O_NONBLOCK), "pipe");
	if (fixture_init(&f, 1, 256, ops, UCM_CPUMAP_F_PREWAKE, 0, 4096))
		return 1;
	UT_ASSERT(!ucm_cpumap__prewake_on(f.map, p[0]), "prewake_on: %s", strerror(errno));
	UT_ASSERT(ucm_cpumap__prewake_on(f.map, p[0]) == -EEXIST, "the same fd twice");
	/* sleep_ns counts a sleep going on; sched, the sleeps that ended. */
	UT_ASSERT(wait_stat(f.map, slept, 1), "the worker never slept");
	UT_ASSERT(worker_stat(f.map, pw) == 0, "a pre-wake with no arrival");
	s0 = worker_stat(f.map, sched);
	UT_ASSERT(write(p[1], "x", 1) == 1, "pipe write");
	UT_ASSERT(wait_stat(f.map, pw, 1), "an arrival did not wake the worker");
	/* That sleep ended; the next lasts: the byte stays in the pipe. */
	UT_ASSERT(wait_stat(f.map, sched, s0 + 1), "the pre-woken sleep is not counted");
	ut_msleep(20);
	n = worker_stat(f.map, pw);
	UT_ASSERT(n == 1, "%llu pre-wakes for one arrival (a level-triggered wait?)",
		  (unsigned long long)n);
	n = worker_stat(f.map, sched) - s0;
	UT_ASSERT(n <= 2, "%llu sleeps ended after one arrival (an edge left in the set?)",
		  (unsigned long long)n);
	/* A second arrival, a second pre-wake. */
	UT_ASSERT(write(p[1], "y", 1) == 1, "pipe write");
	UT_ASSERT(wait_stat(f.map, pw, 2), "a second arrival did not wake the worker");
	/* Frames come by the kick as ever, a few times over: each kick of a
	 * sleeping worker writes its eventfd, which nobody reads. */
	for (r = 0; r < 5; r++) {
		/* Asleep again: its time asleep grows. */
		UT_ASSERT(wait_stat(f.map, slept, worker_stat(f.map, slept) + 1),
			  "the worker did not sleep again before round %u", r);
		s0 = worker_stat(f.map, sched);
		if (send_frames(&f, 0, r * 20, 20, 8))
			return 1;
		UT_ASSERT(wait_delivered(&f.sink, 20 * (r + 1), WAIT_MS), "delivered %llu of %u",
			  (unsigned long long)rec_delivered(&f.sink), 20 * (r + 1));
		UT_ASSERT(wait_stat(f.map, sched, s0 + 1), "round %u's kick ended no sleep", r);
	}
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	/* An edge each: the unread count does not keep it up. */
	s0 = worker_stat(f.map, sched);
	ut_msleep(20);
	n = worker_stat(f.map, sched) - s0;
	UT_ASSERT(n <= 2, "%llu sleeps ended while idle after kicks (the wake fd level-triggered?)",
		  (unsigned long long)n);
	if (fixture_fini(&f))
		return 1;
	close(p[0]);
	close(p[1]);
	return 0;
}

/*
 * A kick behind many arrivals: with the worker parked just before its
 * sleep, every arrival fd turns readable and then a frame's kick comes,
 * so the one epoll_wait() finds PREWAKE_FDS arrivals ahead of the kick in
 * its ready list. That sleep was kicked: no pre-wake may be counted, and
 * the kick's edge must not be left to end the next sleep at once.
 */
#define PREWAKE_FDS	20	/* more than two of the worker's batches */

static int prewake_many_case(const struct ucm_sink_ops *ops)
{
	const size_t pw = offsetof(struct ucm_cpumap_worker_stats, prewakes);
	const size_t sched = offsetof(struct ucm_cpumap_worker_stats, sched);
	int p[PREWAKE_FDS][2];
	struct fixture f;
	uint64_t pw0, s0, n;
	int i;

	if (fixture_init(&f, 1, 256, ops, UCM_CPUMAP_F_PREWAKE, 0, 4096))
		return 1;
	for (i = 0; i < PREWAKE_FDS; i++) {
		UT_ASSERT(!pipe2(p[i], O_CLOEXEC | O_NONBLOCK), "pipe");
		UT_ASSERT(!ucm_cpumap__prewake_on(f.map, p[i][0]), "prewake_on: %s",
			  strerror(errno));
	}
	if (park_worker(&f, UCM_CPUMAP_HOOK_BEFORE_SLEEP))
		return 1;

	/* Parked after announcing its sleep: the arrivals, then the kick. */
	pw0 = worker_stat(f.map, pw);
	for (i = 0; i < PREWAKE_FDS; i++)
		UT_ASSERT(write(p[i][1], "x", 1) == 1, "pipe write");
	if (send_frames(&f, 0, 2, 1, 1))
		return 1;
	s0 = worker_stat(f.map, sched);
	atomic_store(&hook_release, 1);
	UT_ASSERT(wait_delivered(&f.sink, 3, 1000), "the kicked frame was not delivered");
	__atomic_store_n(&ucm_cpumap_test_hook, NULL, __ATOMIC_RELEASE);
	UT_ASSERT(wait_asleep(f.map), "the worker never went back to sleep");
	n = worker_stat(f.map, pw) - pw0;
	UT_ASSERT(n == 0, "%llu pre-wakes counted for a kicked sleep behind %d arrivals",
		  (unsigned long long)n, PREWAKE_FDS);
	/* The kicked sleep ended; no edge of it ended another. */
	n = worker_stat(f.map, sched) - s0;
	UT_ASSERT(n == 1, "%llu sleeps ended for one kick (an edge left in the set?)",
		  (unsigned long long)n);
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	if (fixture_fini(&f))
		return 1;
	for (i = 0; i < PREWAKE_FDS; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	return 0;
}

static int test_prewake_many_fds(void)
{
	return prewake_many_case(&rec_ops) || prewake_many_case(&rec_poll_wait_ops);
}

/* The pre-wake with a worker's own sleep and with a sink that polls; what
 * it refuses. */
static int test_prewake(void)
{
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = 256);
	int ok[1] = { 0 };
	struct ucm_umem *umem;
	struct ucm_cpumap *map;

	if (prewake_case(&rec_ops) || prewake_case(&rec_poll_wait_ops))
		return 1;

	/* Refused: no flag; a sink that reads its wake fd; inline; sink
	 * flags this library does not know. */
	umem = ucm_umem__create(&uo);
	UT_ASSERT(umem, "umem");
	{
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = ok, .ncpus = 1, .sink = &rec_ops);

		map = ucm_cpumap__create(umem, &co);
		UT_ASSERT(map, "cpumap: %s", strerror(errno));
		UT_ASSERT(ucm_cpumap__prewake_on(map, 0) == -EINVAL, "prewake_on without the flag");
		ucm_cpumap__destroy(map);
	}
	{
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = ok, .ncpus = 1, .sink = &rec_wait_ops,
			 .flags = UCM_CPUMAP_F_PREWAKE);

		UT_ASSERT(!ucm_cpumap__create(umem, &co) && errno == EINVAL,
			  "pre-wake with a sink that waits");
	}
	{
		UCM_OPTS(ucm_cpumap_opts, co, .ncpus = 1, .sink = &rec_ops,
			 .flags = UCM_CPUMAP_F_PREWAKE | UCM_CPUMAP_F_INLINE);

		UT_ASSERT(!ucm_cpumap__create(umem, &co) && errno == EINVAL, "pre-wake inline");
	}
	{
		struct ucm_sink_ops odd = rec_ops;
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = ok, .ncpus = 1, .sink = &odd);

		odd.flags = 1u << 7;
		UT_ASSERT(!ucm_cpumap__create(umem, &co) && errno == EINVAL,
			  "an unknown sink flag");
	}
	UT_ASSERT(!ucm_umem__destroy(umem, 1000), "umem");
	return 0;
}

/* A sleeping worker wakes for the other direction's work (the sink's fd)
 * as well as for frames, polls it after batches, and stops when told. */
static int other_direction_case(const struct ucm_sink_ops *ops, uint32_t flags)
{
	struct fixture f;
	uint64_t end, w0;

	if (fixture_init(&f, 1, 256, ops, flags, 0, 4096))
		return 1;
	if (send_frames(&f, 0, 0, 100, 8))
		return 1;
	UT_ASSERT(wait_delivered(&f.sink, 100, WAIT_MS), "frames");
	/* Let it fall asleep, then give it work on the other side only. */
	end = ut_ms_now() + WAIT_MS;
	while (atomic_load(&f.sink.waits) == 0 && ut_ms_now() < end)
		ut_msleep(1);
	UT_ASSERT(atomic_load(&f.sink.waits) > 0, "the worker never waited");
	/* Asleep for good: no wake left readable (a kick the worker owed a
	 * read, an edge in the pre-wake's set) ends its waits over and over. */
	ut_msleep(10);
	w0 = atomic_load(&f.sink.waits);
	ut_msleep(20);
	UT_ASSERT(atomic_load(&f.sink.waits) - w0 <= 1, "%lu waits in 20 ms asleep",
		  atomic_load(&f.sink.waits) - w0);
	UT_ASSERT(write(f.sink.other[1], "abcde", 5) == 5, "pipe");
	end = ut_ms_now() + WAIT_MS;
	while (atomic_load(&f.sink.polled) < 5 && ut_ms_now() < end)
		ut_msleep(1);
	UT_ASSERT(atomic_load(&f.sink.polled) == 5, "polled %lu of 5",
		  atomic_load(&f.sink.polled));
	/* Both directions at once: frames still flow. */
	UT_ASSERT(write(f.sink.other[1], "xyz", 3) == 3, "pipe");
	if (send_frames(&f, 0, 100, 100, 8))
		return 1;
	UT_ASSERT(wait_delivered(&f.sink, 200, WAIT_MS), "frames after");
	end = ut_ms_now() + WAIT_MS;
	while (atomic_load(&f.sink.polled) < 8 && ut_ms_now() < end)
		ut_msleep(1);
	UT_ASSERT(atomic_load(&f.sink.polled) == 8, "polled %lu of 8",
		  atomic_load(&f.sink.polled));
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	return fixture_fini(&f);	/* destroy must wake it through the eventfd */
}

/* A sink with the other direction: one that reads its wake, one that only
 * polls it, and that one polling a pre-wake's set (a two-way tun's). */
static int test_wait_sink_other_direction(void)
{
	return other_direction_case(&rec_wait_ops, 0) ||
	       other_direction_case(&rec_poll_wait_ops, 0) ||
	       other_direction_case(&rec_poll_wait_ops, UCM_CPUMAP_F_PREWAKE);
}

/* Destroy right after a burst: the worker drains its ring first. */
static int test_drain_on_stop(void)
{
	struct fixture f;

	if (fixture_init(&f, 1, 2048, &rec_ops, 0, 0, 4096))
		return 1;
	/* The closed gate holds the worker in its first hand-over while all
	 * 1500 go in, however slowly we send: a backlog for certain. The
	 * slow sink keeps one when the gate opens, as the stop comes. */
	atomic_store(&f.sink.gate_closed, 1);
	f.sink.delay_us = 200;
	if (send_frames(&f, 0, 0, 1500, 64)) {
		atomic_store(&f.sink.gate_closed, 0);
		return 1;
	}
	UT_ASSERT(rec_delivered(&f.sink) == 0, "delivered %llu through a closed gate",
		  (unsigned long long)rec_delivered(&f.sink));
	atomic_store(&f.sink.gate_closed, 0);
	ucm_cpumap__destroy(f.map);
	f.map = NULL;
	UT_ASSERT(f.sink.delivered == 1500, "delivered %llu of 1500 before exit",
		  (unsigned long long)f.sink.delivered);
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	f.map = NULL;
	{
		struct ucm_pool_audit a;

		UT_ASSERT(!ucm_umem__audit(f.umem, &a, sizeof(a)), "audit");
		UT_ASSERT(a.loc[UCM_LOC_STACK] + a.loc[UCM_LOC_CACHE] + a.loc[UCM_LOC_RING] ==
			  a.frames, "frames out after drain");
		UT_ASSERT(!ucm_umem__destroy(f.umem, 1000), "umem destroy");
	}
	free(f.sink.seen);
	return 0;
}

/*
 * The stop's own flush racing the worker: parked after its re-check found
 * the ring empty and before its look at the stop, the worker must still
 * deliver what ucm_cpumap__stop() flushes (frames a producer staged) and
 * then sets the stop behind: the stop comes after them, not instead.
 */
static void *stop_main(void *arg)
{
	ucm_cpumap__stop(arg);
	return NULL;
}

static int stop_flush_case(uint32_t map_flags)
{
	struct fixture f;
	pthread_t t;
	uint64_t addr;
	uint32_t i;

	if (fixture_init(&f, 1, 256, &rec_ops, map_flags, 0, 4096) ||
	    park_worker(&f, UCM_CPUMAP_HOOK_STOP_CHECK))
		return 1;
	for (i = 0; i < 5; i++) {	/* fewer than a bulk: staged, not flushed */
		UT_ASSERT(!ucm_pool__alloc(f.pool, &addr), "alloc");
		frame_prep(f.umem, addr, 0, 2 + i);
		UT_ASSERT(!ucm_cpumap_producer__enqueue(f.prod, 0, addr + DATA_OFF, PKT_LEN),
			  "enqueue");
	}
	UT_ASSERT(!pthread_create(&t, NULL, stop_main, f.map), "thread");
	/* The stop flushes, kicks, sets the flag and waits for the worker:
	 * a moment, then the worker goes on to its look at the stop. (Were
	 * the flag not set yet, the kick would wake it: no false failure.) */
	ut_msleep(100);
	atomic_store(&hook_release, 1);
	pthread_join(t, NULL);
	__atomic_store_n(&ucm_cpumap_test_hook, NULL, __ATOMIC_RELEASE);
	UT_ASSERT(f.sink.delivered == 7, "delivered %llu of 7 by the stop",
		  (unsigned long long)f.sink.delivered);
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	return fixture_fini(&f);
}

static int test_stop_flush_in_window(void)
{
	return stop_flush_case(0) || stop_flush_case(UCM_CPUMAP_F_ONE_PRODUCER) ||
	       stop_flush_case(UCM_CPUMAP_F_LANES);
}

/* Staged frames that were never flushed are flushed by destroy. */
static int test_destroy_flushes_bulk_queues(void)
{
	struct fixture f;
	uint64_t addr;
	uint32_t i;

	if (fixture_init(&f, 1, 256, &rec_ops, 0, 0, 4096))
		return 1;
	for (i = 0; i < 5; i++) {	/* fewer than a bulk: nothing flushed */
		UT_ASSERT(!ucm_pool__alloc(f.pool, &addr), "alloc");
		frame_prep(f.umem, addr, 0, i);
		UT_ASSERT(!ucm_cpumap_producer__enqueue(f.prod, 0, addr + DATA_OFF, PKT_LEN), "enqueue");
	}
	ut_msleep(20);
	UT_ASSERT(rec_delivered(&f.sink) == 0, "delivered before a flush");
	ucm_cpumap__destroy(f.map);
	f.map = NULL;
	UT_ASSERT(f.sink.delivered == 5, "delivered %llu of 5", (unsigned long long)f.sink.delivered);
	UT_ASSERT(!ucm_umem__destroy(f.umem, 1000), "frames did not come home");
	free(f.sink.seen);
	return 0;
}

/*
 * A producer used after ucm_cpumap__stop(): its packets have no worker to
 * take them. The destroy sends them home (a flushed bulk in the ring, a
 * staged one, a chain's every frame), so the UMEM can go, also where the
 * producer is destroyed before the map (@prod_first); a producer made on
 * the stopped map is refused.
 */
static const struct ucm_sink_ops inline_ops;

static int enqueue_after_stop_case(uint32_t map_flags, uint32_t nframes, bool prod_first)
{
	struct fixture f;

	if (fixture_init(&f, 1, 256, map_flags & UCM_CPUMAP_F_INLINE ? &inline_ops : &rec_ops,
			 map_flags, 0, 4096))
		return 1;
	f.nframes = nframes;
	ucm_cpumap__stop(f.map);
	if (prod_first)		/* and its own stop before its last packets */
		ucm_cpumap_producer__stop(f.prod);
	errno = 0;
	UT_ASSERT(!ucm_cpumap__producer_create(f.map, f.pool) && errno == EINVAL,
		  "flags 0x%x: a producer on a stopped map: %s", map_flags, strerror(errno));
	/* Two bulks flushed at enqueue into the ring, 4 staged; inline,
	 * the full bulks and a flush run no worker (its held packets went
	 * home at the stop, its sink may be closed): home at once. */
	if (enqueue_frames(&f, 0, 0, 2 * UCM_CPUMAP_BULK_SIZE + 4))
		return 1;
	if (map_flags & UCM_CPUMAP_F_INLINE && !prod_first)
		ucm_cpumap_producer__flush(f.prod);
	UT_ASSERT(rec_delivered(&f.sink) == 0, "delivered after the stop");
	if (prod_first) {	/* the 4 staged still go home */
		ucm_cpumap_producer__destroy(f.prod);
		f.prod = NULL;
	}
	return fixture_fini(&f);
}

/* The queries: a worker's CPU, -1 inline (its producer's thread), and a
 * NULL map or a worker out of range refused, not read. */
static int test_worker_cpu(void)
{
	struct fixture f;
	int cpu;

	UT_ASSERT(ucm_cpumap__nworkers(NULL) == 0, "NULL map: %u workers", ucm_cpumap__nworkers(NULL));
	UT_ASSERT(ucm_cpumap__worker_cpu(NULL, 0) == -EINVAL, "NULL map");
	if (fixture_init(&f, 1, 256, &rec_ops, 0, 0, 1024))
		return 1;
	cpu = ucm_cpumap__worker_cpu(f.map, 0);
	UT_ASSERT(cpu >= 0 && ucm_cpumap__worker_cpu(f.map, 1) == -EINVAL,
		  "worker 0 on %d, worker 1 (none): %d", cpu, ucm_cpumap__worker_cpu(f.map, 1));
	if (fixture_fini(&f))
		return 1;
	if (fixture_init(&f, 1, 0, &inline_ops, UCM_CPUMAP_F_INLINE, 0, 1024))
		return 1;
	UT_ASSERT(ucm_cpumap__worker_cpu(f.map, 0) == -1, "inline: %d",
		  ucm_cpumap__worker_cpu(f.map, 0));
	ucm_cpumap_producer__stop(f.prod);
	return fixture_fini(&f);
}

static int test_enqueue_after_stop(void)
{
	return enqueue_after_stop_case(0, 1, false) ||
	       enqueue_after_stop_case(0, CHAIN_FRAMES, false) ||
	       enqueue_after_stop_case(UCM_CPUMAP_F_LANES, 1, false) ||
	       enqueue_after_stop_case(UCM_CPUMAP_F_ONE_PRODUCER, CHAIN_FRAMES, false) ||
	       enqueue_after_stop_case(UCM_CPUMAP_F_INLINE, CHAIN_FRAMES, false) ||
	       enqueue_after_stop_case(UCM_CPUMAP_F_INLINE | UCM_CPUMAP_F_HOLD, 1, false) ||
	       enqueue_after_stop_case(0, CHAIN_FRAMES, true) ||
	       enqueue_after_stop_case(UCM_CPUMAP_F_INLINE, CHAIN_FRAMES, true);
}

/*
 * A full worker ring: the overflow is a counted drop, recycled directly
 * into the producer's own cache. The ring's 16 entries take each bulk's
 * packets after its latency stamp: bulks of 8 leave room for 8 and then
 * 6; bulks of 5 for 5, 5 and 3; bulks of 2 for five whole bulks and a
 * stamp alone, which the histograms count as a bulk all dropped. Without
 * stamps (UCM_CPUMAP_F_NO_LATENCY) 16 packets go in, and nothing is
 * counted. Packets of @nframes frames (chain_prep()'s, or one): a
 * dropped one's every frame goes into the cache.
 */
static int ring_full_run(uint32_t map_flags, uint32_t bulk, uint32_t kept,
			 uint32_t stamps, uint32_t nframes)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_cpumap_enqueue_stats es;
	struct ucm_pool_stats ps0, ps1;
	uint64_t end, wait, sink;
	struct fixture f;

	if (fixture_init(&f, 1, 16, &rec_ops, map_flags, 0, 4096))
		return 1;
	f.nframes = nframes;
	atomic_store(&f.sink.gate_closed, 1);	/* the worker blocks in xmit */
	if (send_frames(&f, 0, 0, 8, 8))
		return 1;
	end = ut_ms_now() + WAIT_MS;
	while (!atomic_load(&f.sink.in_xmit) && ut_ms_now() < end)
		ut_msleep(1);
	UT_ASSERT(atomic_load(&f.sink.in_xmit), "worker never entered the sink");

	ucm_pool__stats(f.pool, &ps0, sizeof(ps0));
	/* The worker holds 8 in its batch; the ring is empty. */
	if (send_frames(&f, 0, 8, 100, bulk))
		return 1;
	ucm_pool__stats(f.pool, &ps1, sizeof(ps1));
	ucm_cpumap_producer__enqueue_stats(f.prod, 0, &es, sizeof(es));
	UT_ASSERT(es.processed == 108, "processed %llu", (unsigned long long)es.processed);
	UT_ASSERT(es.drops == 100 - kept, "bulks of %u: drops %llu, want %u", bulk,
		  (unsigned long long)es.drops, 100 - kept);
	UT_ASSERT(ps1.recycle_cached - ps0.recycle_cached == es.drops * nframes,
		  "drops of %u frames went %llu to the cache", nframes,
		  (unsigned long long)(ps1.recycle_cached - ps0.recycle_cached));
	atomic_store(&f.sink.gate_closed, 0);
	UT_ASSERT(wait_delivered(&f.sink, 8 + kept, WAIT_MS), "delivered %llu of %u",
		  (unsigned long long)rec_delivered(&f.sink), 8 + kept);
	ucm_cpumap__stop(f.map);
	ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
	lat_counts(&ws, &wait, &sink);
	UT_ASSERT(wait == stamps && sink == stamps,
		  "bulks of %u: %llu waits and %llu sink times, want %u", bulk,
		  (unsigned long long)wait, (unsigned long long)sink, stamps);
	UT_ASSERT(rec_delivered(&f.sink) == 8 + kept, "delivered %llu of %u",
		  (unsigned long long)rec_delivered(&f.sink), 8 + kept);
	UT_ASSERT(!f.sink.errors && f.sink.chains == (nframes > 1 ? 8 + kept : 0),
		  "%llu chains delivered: %s", (unsigned long long)f.sink.chains, f.sink.why);
	return fixture_fini(&f);
}

static int ring_full_case(uint32_t map_flags)
{
	return ring_full_run(map_flags, 8, 14, 3, 1) ||
	       ring_full_run(map_flags, 5, 13, 4, 1) ||
	       ring_full_run(map_flags, 2, 10, 7, 1) ||
	       ring_full_run(map_flags | UCM_CPUMAP_F_NO_LATENCY, 8, 16, 0, 1);
}

static int test_ring_full_drops(void)
{
	return ring_full_case(0) || ring_full_case(UCM_CPUMAP_F_LANES);
}

/*
 * The fair share: with the worker stuck in its sink, producer 1 sends a
 * bulk (it sends lately), producer 0 floods 400 frames in bulks of 8 (9
 * ring entries each with the stamp) into a ring of 256, then producer 1
 * sends 3 bulks. Shared: the flood fills the ring and every later light
 * frame is dropped. Fair: the flood is refused from three quarters (192
 * entries; its 21st bulk ends at 198 after the light one), the light
 * bulks all go in, and every frame comes home either way.
 */
/*
 * A flood beside a light producer, for fair_case() and
 * test_lanes_in_turn(): the fixture's producer (pool 0) sends 8 frames
 * that the worker takes into its sink, whose gate stays closed; *@light
 * (pool 1, *@lpool) sends @warm in a bulk; the fixture's floods 400 into
 * a ring (or lane) of 256, its first bulk of @first frames, the others
 * of 8, all of them packets of @nframes frames; *@light sends 24 more in
 * 3 bulks.
 */
static int light_send(struct fixture *f, struct ucm_cpumap_producer *light,
		      struct ucm_pool *lpool, uint32_t seq, uint32_t n)
{
	uint64_t addr;

	for (uint32_t i = seq; i < seq + n; i++) {
		UT_ASSERT(!ucm_pool__alloc(lpool, &addr), "light alloc %u", i);
		frame_prep(f->umem, addr, 1, i);
		UT_ASSERT(!ucm_cpumap_producer__enqueue(light, 0, addr + DATA_OFF, PKT_LEN),
			  "light enqueue");
		if (i % 8 == 7 || i + 1 == seq + n)
			ucm_cpumap_producer__flush(light);
	}
	return 0;
}

static int flood_beside_light(struct fixture *f, uint32_t map_flags, uint32_t first,
			      uint32_t nframes, uint32_t warm,
			      struct ucm_cpumap_producer **light, struct ucm_pool **lpool)
{
	uint64_t end;

	if (fixture_init_pools(f, 1, 256, &rec_ops, map_flags, 0, 4096, 0, 2))
		return 1;
	f->nframes = nframes;
	f->sink.check_pw_order = true;
	*lpool = ucm_umem__pool(f->umem, 1);
	ucm_pool__set_owner(*lpool);
	*light = ucm_cpumap__producer_create(f->map, *lpool);
	UT_ASSERT(*light, "the second producer");
	atomic_store(&f->sink.gate_closed, 1);
	if (send_frames(f, 0, 0, 8, 8))
		return 1;
	end = ut_ms_now() + WAIT_MS;
	while (!atomic_load(&f->sink.in_xmit) && ut_ms_now() < end)
		ut_msleep(1);
	UT_ASSERT(atomic_load(&f->sink.in_xmit), "worker never entered the sink");
	if (light_send(f, *light, *lpool, 0, warm) ||
	    send_frames(f, 0, 8, first, first) || send_frames(f, 0, 8 + first, 400 - first, 8))
		return 1;
	return light_send(f, *light, *lpool, warm, 24);
}

/* The gate opened: @want packets delivered, none twice nor out of order,
 * and the map stopped. */
static int open_and_stop(struct fixture *f, uint64_t want)
{
	atomic_store(&f->sink.gate_closed, 0);
	UT_ASSERT(wait_delivered(&f->sink, want, WAIT_MS), "delivered %llu of %llu",
		  (unsigned long long)rec_delivered(&f->sink), (unsigned long long)want);
	ucm_cpumap__stop(f->map);
	UT_ASSERT(rec_delivered(&f->sink) == want && !f->sink.errors, "delivered %llu of %llu: %s",
		  (unsigned long long)rec_delivered(&f->sink), (unsigned long long)want,
		  f->sink.why);
	return 0;
}

static int fair_case(uint32_t map_flags, bool fair, uint32_t nframes)
{
	struct ucm_cpumap_enqueue_stats fl, li;
	struct ucm_cpumap_producer *light, *flood;
	struct ucm_pool *lpool;
	struct fixture f;
	uint64_t want;

	if (flood_beside_light(&f, map_flags, 8, nframes, 8, &light, &lpool))
		return 1;
	flood = f.prod;
	ucm_cpumap_producer__enqueue_stats(flood, 0, &fl, sizeof(fl));
	ucm_cpumap_producer__enqueue_stats(light, 0, &li, sizeof(li));
	if (fair) {
		UT_ASSERT(li.drops == 0 && ucm_cpumap_producer__shed(light, 0) == 0,
			  "light: %llu dropped", (unsigned long long)li.drops);
		UT_ASSERT(fl.drops == 400 - 21 * 8 && ucm_cpumap_producer__shed(flood, 0) == fl.drops,
			  "flood: %llu dropped, %llu shed, want 232 both",
			  (unsigned long long)fl.drops,
			  (unsigned long long)ucm_cpumap_producer__shed(flood, 0));
		/* The enqueue statistics say it too (ucm_dp's, ucpumapd's). */
		UT_ASSERT(fl.shed == fl.drops && !li.shed,
			  "enqueue stats: flood shed %llu, light %llu",
			  (unsigned long long)fl.shed,
			  (unsigned long long)li.shed);
	} else {
		UT_ASSERT(li.drops == 24 && ucm_cpumap_producer__shed(light, 0) == 0,
			  "light: %llu dropped, want all 24", (unsigned long long)li.drops);
		UT_ASSERT(ucm_cpumap_producer__shed(flood, 0) == 0 &&
				  !fl.shed && !li.shed,
			  "shed without a share");
	}
	want = 8 + (400 - fl.drops) + (8 + 24 - li.drops);
	if (open_and_stop(&f, want))
		return 1;
	UT_ASSERT(f.sink.chains == (nframes > 1 ? 8 + 400 - fl.drops : 0),
		  "%llu chains delivered", (unsigned long long)f.sink.chains);
	ucm_cpumap_producer__destroy(light);
	ucm_pool__clear_owner(lpool);
	return fixture_fini(&f);
}

/*
 * Who counts as a sender, alone (white-box, ucm_cpumap_fair_over()): a
 * producer whose mark is behind the caller's view of the ring's head by
 * less than FAIR_RECENT rings, or a moment ahead of it (it moved the head
 * on after the caller read it); one 9 rings behind does not. The caller
 * has 30 of the window's 40 entries, the ring 56 of 64 full: alone within
 * its share, over it beside a sender.
 */
static int test_fair_senders(void)
{
	static const struct { int32_t ahead; bool over; } c[] = {
		{ -10, true }, { 9, true }, { -9 * 64, false },
	};
	struct ucm_ring *ring = ucm_ring__create(64, UCM_RING_MP);
	struct ucm_worker *wk = aligned_alloc(64, (sizeof(*wk) + 63) / 64 * 64);
	struct ucm_cpumap map = { .fair_slots = 3, .workers = &wk };
	struct ucm_cpumap_producer prod = { .map = &map, .fair_slot = 0 };
	const uint32_t head = 0xfffffff0u;	/* the window across the wrap */
	struct ucm_fair fair;

	UT_ASSERT(ring && wk, "no memory");
	memset(wk, 0, sizeof(*wk));
	prod.fair = &fair;
	ring->prod.head = head;
	ring->cons.tail = head - 56;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		fair = (struct ucm_fair){ .head0 = head - 40, .mine = 30, .mark = head };
		wk->fair_mark[1] = head + c[i].ahead;
		UT_ASSERT(ucm_cpumap_fair_over(&prod, 0, ring) == c[i].over,
			  "the other's mark %d from the head: over %d, want %d", c[i].ahead,
			  !c[i].over, c[i].over);
	}
	fair = (struct ucm_fair){ .head0 = head - 40, .mine = 30, .mark = head };
	map.fair_slots = 1;	/* alone */
	UT_ASSERT(!ucm_cpumap_fair_over(&prod, 0, ring), "alone, over its share");
	free(wk);
	ucm_ring__destroy(ring);
	return 0;
}

static int test_fair_share(void)
{
	return fair_case(0, true, 1) || fair_case(UCM_CPUMAP_F_NO_FAIR, false, 1);
}

/* A producer that has not sent lately does not count: beside one made
 * but silent (a queue without traffic, an RX thread that gave up) the
 * flood is alone, sheds nothing and fills the ring (28 bulks and 3
 * packets of the 29th: 227 of 400), as with one producer; the silent
 * one's first bulks then find it full. But it tried, so it counts now:
 * the flood's next bulk is over its share, shed, not left to the full
 * ring, and the room the worker frees is not all the flood's again. */
static int test_fair_share_silent(void)
{
	struct ucm_cpumap_enqueue_stats fl, li, fl2;
	struct ucm_cpumap_producer *light;
	struct ucm_pool *lpool;
	struct fixture f;

	if (flood_beside_light(&f, 0, 8, 1, 0, &light, &lpool))
		return 1;
	ucm_cpumap_producer__enqueue_stats(f.prod, 0, &fl, sizeof(fl));
	ucm_cpumap_producer__enqueue_stats(light, 0, &li, sizeof(li));
	UT_ASSERT(!fl.shed && fl.drops == 400 - 227 && li.drops == 24 && !li.shed,
		  "flood: %llu dropped, %llu shed (want 173, 0); light %llu dropped",
		  (unsigned long long)fl.drops, (unsigned long long)fl.shed,
		  (unsigned long long)li.drops);
	if (send_frames(&f, 0, 408, 8, 8))
		return 1;
	ucm_cpumap_producer__enqueue_stats(f.prod, 0, &fl2, sizeof(fl2));
	UT_ASSERT(fl2.shed == 8 && fl2.drops == fl.drops + 8,
		  "the flood's bulk after the light one tried: %llu shed (want 8), %llu dropped",
		  (unsigned long long)fl2.shed, (unsigned long long)(fl2.drops - fl.drops));
	if (open_and_stop(&f, 8 + 227))
		return 1;
	ucm_cpumap_producer__destroy(light);
	ucm_pool__clear_owner(lpool);
	return fixture_fini(&f);
}

static int test_malformed_frames_are_counted(void)
{
	struct ucm_cpumap_worker_stats ws;
	struct fixture f;
	uint64_t addr;

	if (fixture_init(&f, 1, 256, &rec_ops, 0, 0, 4096))
		return 1;
	/* 1: offset + len past the end of the frame */
	UT_ASSERT(!ucm_pool__alloc(f.pool, &addr), "alloc");
	UT_ASSERT(!ucm_cpumap_producer__enqueue(f.prod, 0, addr + 4090, PKT_LEN), "enqueue");
	/* 2: no headroom left for the frame header */
	UT_ASSERT(!ucm_pool__alloc(f.pool, &addr), "alloc");
	frame_prep(f.umem, addr, 0, 1);
	UT_ASSERT(!ucm_cpumap_producer__enqueue(f.prod, 0, addr + 4, PKT_LEN), "enqueue");
	/* 3: a 10-byte runt */
	UT_ASSERT(!ucm_pool__alloc(f.pool, &addr), "alloc");
	frame_prep(f.umem, addr, 0, 2);
	UT_ASSERT(!ucm_cpumap_producer__enqueue(f.prod, 0, addr + DATA_OFF, 10), "enqueue");
	/* 4: a good one */
	UT_ASSERT(!ucm_pool__alloc(f.pool, &addr), "alloc");
	frame_prep(f.umem, addr, 0, 3);
	UT_ASSERT(!ucm_cpumap_producer__enqueue(f.prod, 0, addr + DATA_OFF, PKT_LEN), "enqueue");
	ucm_cpumap_producer__flush(f.prod);

	UT_ASSERT(wait_processed(f.map, 0, 4, WAIT_MS), "processed");
	ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
	UT_ASSERT(ws.drops == 3, "drops %llu", (unsigned long long)ws.drops);
	UT_ASSERT(ws.drop_reason[UCM_DROP_FRAME_BOUNDS] == 2, "frame_bounds %llu",
		  (unsigned long long)ws.drop_reason[UCM_DROP_FRAME_BOUNDS]);
	UT_ASSERT(ws.drop_reason[UCM_DROP_RUNT] == 1, "runt %llu",
		  (unsigned long long)ws.drop_reason[UCM_DROP_RUNT]);
	UT_ASSERT(rec_delivered(&f.sink) == 1, "delivered %llu", (unsigned long long)rec_delivered(&f.sink));
	return fixture_fini(&f);
}

/*
 * The latency histograms count every bulk, once each: bulks of @bulk
 * packets and one of runts (all dropped) through a sink that takes 3 ms
 * per batch; with a hold too, where the bulks wait for the ring to run
 * empty; none with UCM_CPUMAP_F_NO_LATENCY. Bulks of 3 pile up while
 * the sink works, so that a worker's take of 9 entries ends with a
 * bulk's stamp and the bulk's packets come with the next one.
 */
static int lat_run(uint32_t flags, uint32_t bulk)
{
	uint32_t good = (40 + bulk - 1) / bulk;
	struct ucm_cpumap_worker_stats ws;
	struct ucm_cpumap_enqueue_stats es;
	uint64_t wait = 0, sink = 0, slow = 0, addr;
	struct fixture f;
	uint32_t b;

	if (fixture_init(&f, 1, 256, &rec_ops, flags, 0, 4096))
		return 1;
	f.sink.delay_us = 3000;
	if (send_frames(&f, 0, 0, 40, bulk))
		return 1;
	for (int i = 0; i < 8; i++) {
		UT_ASSERT(!ucm_pool__alloc(f.pool, &addr), "alloc");
		frame_prep(f.umem, addr, 0, 100 + i);
		UT_ASSERT(!ucm_cpumap_producer__enqueue(f.prod, 0, addr + DATA_OFF, 10), "runt");
	}
	ucm_cpumap_producer__flush(f.prod);
	UT_ASSERT(wait_processed(f.map, 0, 48, WAIT_MS), "processed");
	ucm_cpumap__stop(f.map);
	ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
	ucm_cpumap_producer__enqueue_stats(f.prod, 0, &es, sizeof(es));
	for (b = 0; b < UCM_LAT_BUCKETS; b++) {
		wait += ws.wait_hist[b];
		sink += ws.sink_hist[b];
		if (b >= ucm_lat_bucket(3000000))
			slow += ws.sink_hist[b];
	}
	UT_ASSERT(es.events == good + 1, "%llu bulks flushed", (unsigned long long)es.events);
	if (flags & UCM_CPUMAP_F_NO_LATENCY) {
		UT_ASSERT(!wait && !sink, "unstamped, yet %llu waits and %llu sink times counted",
			  (unsigned long long)wait, (unsigned long long)sink);
	} else {
		UT_ASSERT(wait == es.events, "%llu waits counted for %llu bulks",
			  (unsigned long long)wait, (unsigned long long)es.events);
		UT_ASSERT(sink == es.events, "%llu sink times counted for %llu bulks",
			  (unsigned long long)sink, (unsigned long long)es.events);
		/* The good bulks each waited for a 3 ms hand-over. */
		UT_ASSERT(slow >= good, "%llu sink times of 3 ms or more, %u expected",
			  (unsigned long long)slow, good);
	}
	return fixture_fini(&f);
}

static int test_latency_hist(void)
{
	return lat_run(0, 8) || lat_run(0, 3);
}

static int test_latency_hist_hold(void)
{
	return lat_run(UCM_CPUMAP_F_HOLD, 8) || lat_run(UCM_CPUMAP_F_HOLD, 3);
}

static int test_latency_hist_off(void)
{
	return lat_run(UCM_CPUMAP_F_NO_LATENCY, 8);
}

/*
 * A worker with a spin looks again before it sleeps: a bulk that comes
 * within the spin finds it awake (it sleeps before at most one in two of
 * them; without a spin, before about every one), and each is delivered.
 * One bulk at a time, 20 us after the worker delivered the one before:
 * the gap from that delivery (the worker's clock) to the flush bounds the
 * time the worker spun without work. On a loaded machine the producer may
 * be off its CPU for longer than the spin, and a sleep there is no fault:
 * only the gaps shorter than the spin are judged, up to SPIN_GAPS of them
 * and at least SPIN_GAPS_MIN, in at most SPIN_BULKS_MAX bulks (beside
 * two busy loops a CPU, 40 such gaps took up to 443 bulks).
 */
#define SPIN_GAPS	40
#define SPIN_GAPS_MIN	10
#define SPIN_BULKS_MAX	2000
#define SPIN_POLL_NS	200000	/* then the worker may share our CPU: yield */

struct spin_count {
	uint32_t bulks, gaps, slept;	/* @gaps under UCM_SPIN_US_MAX, @slept in them */
};

/* Wait for @want delivered, not sleeping: a sleep of ours is a gap. */
static bool spin_wait_delivered(struct rec_sink *s, uint64_t want, uint64_t *last_ns)
{
	uint64_t start = ucm_now_ns(), now;

	for (;;) {
		pthread_mutex_lock(&s->lock);
		*last_ns = s->last_ns;
		if (s->delivered >= want) {
			pthread_mutex_unlock(&s->lock);
			return true;
		}
		pthread_mutex_unlock(&s->lock);
		now = ucm_now_ns();
		if (now - start > (uint64_t)WAIT_MS * 1000000)
			return false;
		if (now - start > SPIN_POLL_NS)
			sched_yield();
	}
}

static int spin_run(uint32_t spin_us, struct spin_count *c)
{
	struct ucm_cpumap_worker_stats ws;
	uint64_t sched, last_ns = 0, t, gap;
	struct fixture f;
	uint32_t b;

	memset(c, 0, sizeof(*c));
	if (fixture_init_spin(&f, 1, 256, &rec_ops, 0, 0, 4096, spin_us))
		return 1;
	for (b = 0; b < SPIN_BULKS_MAX && c->gaps < SPIN_GAPS; b++) {
		ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
		sched = ws.sched;
		for (t = ucm_now_ns(); b && ucm_now_ns() - t < 20000;)
			;	/* 20 us, awake: a usleep() may end late */
		if (send_frames(&f, 0, b * 8, 8, 8))
			return 1;
		gap = ucm_now_ns() - last_ns;
		UT_ASSERT(spin_wait_delivered(&f.sink, (b + 1) * 8, &last_ns),
			  "bulk %u: delivered %llu of %u", b,
			  (unsigned long long)rec_delivered(&f.sink), (b + 1) * 8);
		if (!b || gap >= (uint64_t)UCM_SPIN_US_MAX * 1000)
			continue;
		ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
		c->gaps++;
		c->slept += ws.sched != sched;
	}
	c->bulks = b;
	return fixture_fini(&f);
}

static int test_spin(void)
{
	struct spin_count with, without;

	if (spin_run(UCM_SPIN_US_MAX, &with) || spin_run(0, &without))
		return 1;
	printf("# bulks after gaps under 1 ms: the worker slept before %u of %u "
	       "(of %u bulks) with a 1 ms spin, %u of %u (of %u) without\n",
	       with.slept, with.gaps, with.bulks, without.slept, without.gaps, without.bulks);
	UT_ASSERT(with.gaps >= SPIN_GAPS_MIN, "only %u gaps under 1 ms in %u bulks",
		  with.gaps, with.bulks);
	UT_ASSERT(with.slept <= with.gaps / 2,
		  "slept before %u of %u bulks that came within a 1 ms spin",
		  with.slept, with.gaps);
	return 0;
}

static int test_enqueue_rejects_bad_input(void)
{
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = 256, .npools = 2);
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer *prod;
	struct ucm_umem *umem = ucm_umem__create(&uo);
	struct ucm_pool *p0, *p1;
	int cpu;
	uint64_t a0, a1, a2;

	UT_ASSERT(umem, "umem");
	ut_usable_cpus(&cpu, 1);
	{
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = &cpu, .ncpus = 1, .sink = &ucm_sink_null);

		map = ucm_cpumap__create(umem, &co);
	}
	UT_ASSERT(map, "map");
	p0 = ucm_umem__pool(umem, 0);
	p1 = ucm_umem__pool(umem, 1);
	ucm_pool__set_owner(p0);
	ucm_pool__set_owner(p1);
	prod = ucm_cpumap__producer_create(map, p0);
	UT_ASSERT(prod, "producer");
	UT_ASSERT(!ucm_pool__alloc(p0, &a0) && !ucm_pool__alloc(p1, &a1), "alloc");
	UT_ASSERT(ucm_cpumap_producer__enqueue(prod, 1, a0 + DATA_OFF, PKT_LEN) == -EINVAL,
		  "worker 1 of 1 accepted");
	UT_ASSERT(ucm_cpumap_producer__enqueue(prod, 0, a1 + DATA_OFF, PKT_LEN) == -EINVAL,
		  "another pool's frame accepted");
	UT_ASSERT(ucm_cpumap_producer__enqueue(prod, 0, ucm_umem__size(umem), PKT_LEN) == -EINVAL,
		  "out of range accepted");
	UT_ASSERT(ucm_cpumap_producer__enqueue(prod, 0, a0 + DATA_OFF, 65536) == -EINVAL,
		  "length 65536 accepted");
	UT_ASSERT(ucm_cpumap_producer__shed(prod, 1) == 0 && ucm_cpumap_producer__shed(NULL, 0) == 0,
		  "shed of worker 1 of 1, or of no producer");
	UT_ASSERT(!ucm_pool__alloc(p0, &a2), "alloc");
	/* The chain bit on a frame whose headroom holds no list of ours:
	 * refused before the worker copies nfrag entries onto its stack. */
	{
		struct ucm_chain *c = ucm_chain_of(ucm_umem__area(umem), a0);
		const uint64_t chain = (a0 + DATA_OFF) | UCM_DESC_CHAIN;
		const struct {
			const char *what;
			uint16_t nfrag;
			uint64_t frag[2];
			uint64_t addr;
			uint32_t len;	/* the first later part's */
			int32_t more;	/* bytes counted beyond the parts' */
		} bad[] = {
			{ "a list of 100 frames", 100, { a2, 0 }, chain, 100, 0 },
			{ "an empty list", 0, { 0, 0 }, chain, 100, 0 },
			{ "another pool's frame listed", 1, { a1, 0 }, chain, 100, 0 },
			{ "a frame outside the UMEM listed", 1, { ucm_umem__size(umem), 0 }, chain, 100, 0 },
			{ "the first frame listed", 1, { a0, 0 }, chain, 100, 0 },
			{ "a frame listed twice", 2, { a2, a2 }, chain, 100, 0 },
			{ "no room for the list", 1, { a2, 0 }, (a0 + 64) | UCM_DESC_CHAIN, 100, 0 },
			{ "a part past its frame's end", 1, { a2, 0 }, chain,
			  ucm_umem__frame_size(umem) - DATA_OFF + 1, 0 },
			{ "parts short of the length", 1, { a2, 0 }, chain, 100, 1 },
			{ "parts beyond the length", 1, { a2, 0 }, chain, 100, -1 },
		};

		c->head_len = PKT_LEN;
		for (uint32_t i = 0; i < ARRAY_SIZE(bad); i++) {
			uint32_t len = PKT_LEN + bad[i].more + bad[i].len +
				       (bad[i].nfrag > 1 ? 100 : 0);

			c->nfrag = bad[i].nfrag;
			c->frag[0] = ucm_desc_make(bad[i].frag[0] + DATA_OFF, bad[i].len);
			c->frag[1] = ucm_desc_make(bad[i].frag[1] + DATA_OFF, 100);
			UT_ASSERT(ucm_cpumap_producer__enqueue(prod, 0, bad[i].addr, len) == -EINVAL,
				  "the chain bit with %s accepted", bad[i].what);
		}
	}
	/* Refused frames stayed with us: give them back. */
	UT_ASSERT(!ucm_pool__put(p0, a0) && !ucm_pool__put(p1, a1) && !ucm_pool__put(p0, a2),
		  "put back");
	ucm_cpumap__destroy(map);
	UT_ASSERT(!ucm_umem__destroy(umem, 100), "umem destroy");
	return 0;
}

/* Recycling off: worker returns bypass cache and ring. */
static int test_no_recycle_switch(void)
{
	struct ucm_pool_stats ps;
	struct fixture f;

	/* 1024: the 500 frames and their 63 latency stamps all fit, so none
	 * is dropped however late the worker runs (as in delivery_case()). */
	if (fixture_init(&f, 1, 1024, &rec_ops, UCM_CPUMAP_F_NO_RECYCLE, 0, 4096))
		return 1;
	if (send_frames(&f, 0, 0, 500, 64))
		return 1;
	UT_ASSERT(wait_processed(f.map, 0, 500, WAIT_MS), "processed");
	/* Every frame home, then no worker left to move one: the figures
	 * below are final. */
	UT_ASSERT(wait_pool_stat(f.pool, offsetof(struct ucm_pool_stats, recycle_released), 500),
		  "not all 500 released in %d ms", WAIT_MS);
	ucm_cpumap__stop(f.map);
	ucm_pool__stats(f.pool, &ps, sizeof(ps));
	UT_ASSERT(ps.recycle_released == 500, "released %llu", (unsigned long long)ps.recycle_released);
	UT_ASSERT(ps.recycle_ring == 0 && ps.recycle_cached == 0, "ring %llu cached %llu",
		  (unsigned long long)ps.recycle_ring, (unsigned long long)ps.recycle_cached);
	/* Every frame went back to the stack: only what the last slow-path
	 * bulk left in the cache is off it. */
	{
		struct ucm_pool_audit a;

		UT_ASSERT(!ucm_umem__audit(f.umem, &a, sizeof(a)), "audit");
		UT_ASSERT(ucm_pool__inflight(f.pool) == a.loc[UCM_LOC_CACHE] &&
			  a.loc[UCM_LOC_RING] == 0, "inflight %lld, cache %u, ring %u",
			  (long long)ucm_pool__inflight(f.pool), a.loc[UCM_LOC_CACHE],
			  a.loc[UCM_LOC_RING]);
		UT_ASSERT(ps.alloc_refill == 0 && ps.alloc_slow >= 500 / 64,
			  "refill %llu slow %llu", (unsigned long long)ps.alloc_refill,
			  (unsigned long long)ps.alloc_slow);
	}
	return fixture_fini(&f);
}

/* Recycling on: worker returns come back through the recycle ring. */
static int test_recycle_via_ring(void)
{
	struct ucm_pool_stats ps;
	struct fixture f;

	if (fixture_init(&f, 1, 1024, &rec_ops, 0, 0, 4096))
		return 1;
	if (send_frames(&f, 0, 0, 500, 64))
		return 1;
	UT_ASSERT(wait_processed(f.map, 0, 500, WAIT_MS), "processed");
	/* As test_no_recycle_switch(): all home, then final. */
	UT_ASSERT(wait_pool_stat(f.pool, offsetof(struct ucm_pool_stats, recycle_ring), 500),
		  "not all 500 back through the ring in %d ms", WAIT_MS);
	ucm_cpumap__stop(f.map);
	ucm_pool__stats(f.pool, &ps, sizeof(ps));
	UT_ASSERT(ps.recycle_ring == 500 && ps.recycle_released == 0 && ps.recycle_cached == 0,
		  "ring %llu released %llu cached %llu", (unsigned long long)ps.recycle_ring,
		  (unsigned long long)ps.recycle_released, (unsigned long long)ps.recycle_cached);
	return fixture_fini(&f);
}

/* A keeping sink owns the frames until it returns them. */
static int test_keep_sink(void)
{
	struct ucm_pool_audit a;
	struct fixture f;

	if (fixture_init(&f, 1, 512, &rec_keep_ops, 0, 0, 4096))
		return 1;
	f.sink.kept = calloc(4096, sizeof(uint64_t));
	if (send_frames(&f, 0, 0, 300, 64))
		return 1;
	UT_ASSERT(wait_processed(f.map, 0, 300, WAIT_MS), "processed");
	UT_ASSERT(!ucm_umem__audit(f.umem, &a, sizeof(a)), "audit");
	UT_ASSERT(a.loc[UCM_LOC_WORKER] == 300, "%u frames with the sink, want 300",
		  a.loc[UCM_LOC_WORKER]);
	return fixture_fini(&f);	/* returns the kept frames, then checks */
}

/*
 * UCM_CPUMAP_F_HOLD: with the ring full the worker hands the sink 64 at a
 * time, in order; what is left when the ring runs empty goes at once.
 * Without it, never more than a batch of 8.
 */
static int run_hold(uint32_t flags)
{
	struct ucm_cpumap_worker_stats ws;
	struct fixture f;
	bool hold = flags & UCM_CPUMAP_F_HOLD;

	if (fixture_init(&f, 1, 512, &rec_ops, flags, 0, 4096))
		return 1;
	f.sink.check_order = true;
	/* The first packet parks the worker in the sink, so the next 200
	 * are all in its ring when it comes back. */
	atomic_store(&f.sink.gate_closed, 1);
	if (send_frames(&f, 0, 0, 1, 1))
		return 1;
	{
		uint64_t end = ut_ms_now() + WAIT_MS;

		while (!atomic_load(&f.sink.in_xmit) && ut_ms_now() < end)
			ut_msleep(1);
		if (!atomic_load(&f.sink.in_xmit)) {
			atomic_store(&f.sink.gate_closed, 0);
			UT_ASSERT(0, "the first packet never reached the sink");
		}
	}
	if (send_frames(&f, 0, 1, 200, 8))
		return 1;
	atomic_store(&f.sink.gate_closed, 0);
	UT_ASSERT(wait_delivered(&f.sink, 201, WAIT_MS), "delivered %llu of 201",
		  (unsigned long long)rec_delivered(&f.sink));
	/* The worker counts a hand-over once the sink has returned, after
	 * the sink's own count woke us: stop it before reading either. */
	ucm_cpumap__stop(f.map);
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
	UT_ASSERT(ws.xmits == f.sink.xmits, "xmits %llu, the sink saw %u",
		  (unsigned long long)ws.xmits, f.sink.xmits);
	if (hold) {
		/* 1, then 64 64 64 (full), then 8 (empty). */
		UT_ASSERT(f.sink.max_n == UCM_CPUMAP_HOLD_MAX, "largest hand-over %u",
			  f.sink.max_n);
		UT_ASSERT(ws.flush_full == 3 && ws.flush_empty == 2 && ws.xmits == 5,
			  "full %llu empty %llu xmits %llu, want 3 2 5",
			  (unsigned long long)ws.flush_full, (unsigned long long)ws.flush_empty,
			  (unsigned long long)ws.xmits);
	} else {
		UT_ASSERT(f.sink.max_n == UCM_CPUMAP_BATCH, "largest hand-over %u",
			  f.sink.max_n);
		UT_ASSERT(!ws.flush_full && !ws.flush_empty, "hold counters move without hold");
	}
	return fixture_fini(&f);
}

static int test_hold_hands_over_64(void)
{
	return run_hold(UCM_CPUMAP_F_HOLD);
}

static int test_no_hold_hands_over_8(void)
{
	return run_hold(0);
}

/* A lone held packet does not wait for company. */
static int test_hold_idle_flush(void)
{
	struct fixture f;

	if (fixture_init(&f, 1, 512, &rec_ops, UCM_CPUMAP_F_HOLD, 0, 4096))
		return 1;
	if (send_frames(&f, 0, 0, 3, 8))
		return 1;
	UT_ASSERT(wait_delivered(&f.sink, 3, 1000), "3 packets held past an idle moment");
	return fixture_fini(&f);
}

/* ---- several producers, several workers, random bursts ---------------------- */

#define MP_PRODUCERS	3
#define MP_FRAMES	4096
#define MP_PER_PRODUCER	60000

struct mp_arg {
	struct ucm_umem *umem;
	struct ucm_cpumap *map;
	struct ucm_cpumap_producer *prod;
	uint32_t id;
	uint32_t nworkers;
	uint64_t sent;
	int err;
	char why[128];
};

static uint32_t xs(uint32_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 17;
	*r ^= *r << 5;
	return *r;
}

static void *mp_producer(void *arg)
{
	struct mp_arg *a = arg;
	struct ucm_pool *pool = ucm_umem__pool(a->umem, a->id);
	uint32_t seq = 0, rnd = 2463534242u + a->id;
	uint64_t addrs[64];
	uint64_t end = ut_ms_now() + 20000;

	ucm_pool__set_owner(pool);
	while (seq < MP_PER_PRODUCER && ut_ms_now() < end && !a->err) {
		uint32_t want = 1 + xs(&rnd) % 64;
		int n, i;

		if (want > MP_PER_PRODUCER - seq)
			want = MP_PER_PRODUCER - seq;
		n = ucm_pool__alloc_bulk(pool, addrs, want);
		if (n < 0) {
			a->err = 1;
			snprintf(a->why, sizeof(a->why), "alloc_bulk: %d", n);
			break;
		}
		for (i = 0; i < n; i++) {
			frame_prep(a->umem, addrs[i], a->id, seq++);
			if (ucm_cpumap_producer__enqueue(a->prod, xs(&rnd) % a->nworkers,
						addrs[i] + DATA_OFF, PKT_LEN)) {
				a->err = 1;
				snprintf(a->why, sizeof(a->why), "enqueue refused");
			}
		}
		ucm_cpumap_producer__flush(a->prod);
		if (!n)
			sched_yield();	/* every frame is out: let the workers run */
	}
	a->sent = seq;
	return NULL;
}

/*
 * Three producers (one pool each) spray random bursts over the workers
 * through small rings, so drops happen. Afterwards every frame is
 * accounted for: each producer's sent == processed (flushed), the sink got
 * exactly sum(processed - drops) packets, none twice, each producer's in
 * its order on each worker, and every frame is home. With @map_flags
 * UCM_CPUMAP_F_LANES, through a lane per producer and worker.
 */
static int multi_producer_case(uint32_t map_flags)
{
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = MP_FRAMES, .npools = MP_PRODUCERS);
	struct mp_arg args[MP_PRODUCERS];
	pthread_t thr[MP_PRODUCERS];
	struct ucm_cpumap_enqueue_stats es;
	struct ucm_pool_audit a;
	struct rec_sink sink;
	struct ucm_umem *umem;
	struct ucm_cpumap *map;
	uint64_t accepted = 0, drops = 0;
	int cpus[2], ncpu = ut_usable_cpus(cpus, 2), p;
	uint32_t w;

	rec_init(&sink, MP_PRODUCERS);
	sink.check_pw_order = true;
	umem = ucm_umem__create(&uo);
	UT_ASSERT(umem, "umem");
	{
		UCM_OPTS(ucm_cpumap_opts, co, .cpus = cpus, .ncpus = ncpu, .qsize = 64,
			 .sink = &rec_ops, .sink_ctx = &sink, .flags = map_flags);

		map = ucm_cpumap__create(umem, &co);
	}
	UT_ASSERT(map, "map");
	for (p = 0; p < MP_PRODUCERS; p++) {
		args[p] = (struct mp_arg){ .umem = umem, .map = map, .id = (uint32_t)p,
					   .nworkers = (uint32_t)ncpu };
		args[p].prod = ucm_cpumap__producer_create(map, ucm_umem__pool(umem, p));
		UT_ASSERT(args[p].prod, "producer");
	}
	for (p = 0; p < MP_PRODUCERS; p++)
		UT_ASSERT(!pthread_create(&thr[p], NULL, mp_producer, &args[p]), "thread");
	for (p = 0; p < MP_PRODUCERS; p++)
		pthread_join(thr[p], NULL);
	for (p = 0; p < MP_PRODUCERS; p++) {
		uint64_t processed = 0;

		UT_ASSERT(!args[p].err, "producer %d: %s", p, args[p].why);
		UT_ASSERT(args[p].sent == MP_PER_PRODUCER, "producer %d sent %llu (timeout?)",
			  p, (unsigned long long)args[p].sent);
		for (w = 0; w < (uint32_t)ncpu; w++) {
			ucm_cpumap_producer__enqueue_stats(args[p].prod, w, &es, sizeof(es));
			processed += es.processed;
			drops += es.drops;
			accepted += es.processed - es.drops;
		}
		/* Flushed at the end of every batch: nothing staged. */
		UT_ASSERT(processed == args[p].sent, "producer %d: processed %llu of %llu",
			  p, (unsigned long long)processed, (unsigned long long)args[p].sent);
	}
	/* The rings drain on destroy; after it, the books must close. */
	for (p = 0; p < MP_PRODUCERS; p++)
		ucm_pool__clear_owner(ucm_umem__pool(umem, p));
	ucm_cpumap__destroy(map);
	UT_ASSERT(!sink.errors, "%s", sink.why);
	UT_ASSERT(sink.delivered == accepted, "delivered %llu, accepted %llu (drops %llu)",
		  (unsigned long long)sink.delivered, (unsigned long long)accepted,
		  (unsigned long long)drops);
	UT_ASSERT(!ucm_umem__audit(umem, &a, sizeof(a)), "audit");
	UT_ASSERT(a.loc[UCM_LOC_STACK] + a.loc[UCM_LOC_CACHE] + a.loc[UCM_LOC_RING] == a.frames,
		  "frames out after destroy");
	UT_ASSERT(!ucm_umem__destroy(umem, 1000), "frames did not come home");
	free(sink.seen);
	return 0;
}

static int test_multi_producer_accounting(void)
{
	return multi_producer_case(0) || multi_producer_case(UCM_CPUMAP_F_LANES);
}

/*
 * Lanes, taken in turn: with the worker stuck in its sink, producer 0
 * floods 400 frames into its lane of 256 entries and producer 1 sends 24
 * into its own. The light producer loses nothing and nothing is shed (no
 * fair share needed); once the worker runs again it takes a batch from
 * each lane in turn, so the light packets are out within the first 7
 * batches, where behind one shared ring they would wait for the 200 or
 * so flooded ahead of them (fair_case()). The flood's first bulk is of 7
 * (@first), so that its takes of 9 entries end on its next bulk's
 * stamp: a turn still moves on to the next lane.
 */
static int lanes_in_turn_case(uint32_t first)
{
	struct ucm_cpumap_enqueue_stats fl, li;
	struct ucm_cpumap_producer *light;
	struct ucm_pool *lpool;
	struct fixture f;
	uint64_t want;

	if (flood_beside_light(&f, UCM_CPUMAP_F_LANES, first, 1, 0, &light, &lpool))
		return 1;
	UT_ASSERT(ucm_cpumap_test_ring_flags(f.map, 0) == -1, "a shared ring beside the lanes");
	ucm_cpumap_producer__enqueue_stats(f.prod, 0, &fl, sizeof(fl));
	ucm_cpumap_producer__enqueue_stats(light, 0, &li, sizeof(li));
	/* 28 bulks and their stamps fill 252 of the flood's 256 entries,
	 * the next takes 3 packets: 227 of 400 in. */
	UT_ASSERT(li.drops == 0 && fl.drops == 400 - 227 && !fl.shed && !li.shed,
		  "drops: flood %llu (want 173), light %llu; shed %llu, %llu",
		  (unsigned long long)fl.drops, (unsigned long long)li.drops,
		  (unsigned long long)fl.shed, (unsigned long long)li.shed);
	want = 8 + 227 + 24;
	if (open_and_stop(&f, want))
		return 1;
	UT_ASSERT(f.sink.last_pos[1] < 7 * 8, "flood's first bulk %u: the light producer's last packet came %lluth",
		  first, (unsigned long long)f.sink.last_pos[1] + 1);
	/* Every stamp in a lane counted once, waited and finished: the
	 * flood's first bulk, 29 more in its lane (with a first of 7: it,
	 * 27 full and one cut short), the light 3. */
	{
		struct ucm_cpumap_worker_stats ws;
		uint64_t wait, sink;

		ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
		lat_counts(&ws, &wait, &sink);
		UT_ASSERT(wait == 33 && sink == 33, "%llu waits, %llu sink times, want 33",
			  (unsigned long long)wait, (unsigned long long)sink);
	}
	ucm_cpumap_producer__destroy(light);
	ucm_pool__clear_owner(lpool);
	return fixture_fini(&f);
}

static int test_lanes_in_turn(void)
{
	return lanes_in_turn_case(8) || lanes_in_turn_case(7);
}

/*
 * A lane outlives its producer: what a destroyed producer flushed is
 * delivered, and its lane goes to the next one. UCM_CPUMAP_MAX_LANES
 * producers at a time, the next refused (ENOSPC, with a message) until
 * one is destroyed.
 */
static int test_lanes_handed_on(void)
{
	struct ucm_cpumap_producer *p[UCM_CPUMAP_MAX_LANES], *extra;
	struct fixture f;
	uint32_t i;

	if (fixture_init(&f, 2, 64, &rec_ops, UCM_CPUMAP_F_LANES, 0, 4096))
		return 1;
	atomic_store(&f.sink.gate_closed, 1);
	if (send_frames(&f, 0, 0, 16, 8))
		return 1;
	ucm_cpumap_producer__destroy(f.prod);
	f.prod = ucm_cpumap__producer_create(f.map, f.pool);
	UT_ASSERT(f.prod, "a producer after the first: %s", strerror(errno));
	if (send_frames(&f, 0, 16, 16, 8))
		return 1;
	atomic_store(&f.sink.gate_closed, 0);
	UT_ASSERT(wait_delivered(&f.sink, 32, WAIT_MS), "delivered %llu of 32",
		  (unsigned long long)rec_delivered(&f.sink));

	p[0] = f.prod;
	for (i = 1; i < UCM_CPUMAP_MAX_LANES; i++) {
		p[i] = ucm_cpumap__producer_create(f.map, f.pool);
		UT_ASSERT(p[i], "producer %u: %s", i, strerror(errno));
	}
	log_count = 0;
	ucm_set_print(quiet_print);
	errno = 0;
	extra = ucm_cpumap__producer_create(f.map, f.pool);
	ucm_set_print(NULL);
	UT_ASSERT(!extra && errno == ENOSPC && log_count == 1,
		  "producer %u: errno %d, %d messages", UCM_CPUMAP_MAX_LANES, errno, log_count);
	ucm_cpumap_producer__destroy(p[17]);
	p[17] = ucm_cpumap__producer_create(f.map, f.pool);
	UT_ASSERT(p[17], "a producer in a lane let go: %s", strerror(errno));
	/* The last lane made works as the first. */
	f.prod = p[UCM_CPUMAP_MAX_LANES - 1];
	if (send_frames(&f, 1, 32, 8, 8))
		return 1;
	UT_ASSERT(wait_delivered(&f.sink, 40, WAIT_MS), "delivered %llu of 40",
		  (unsigned long long)rec_delivered(&f.sink));
	for (i = 0; i < UCM_CPUMAP_MAX_LANES; i++)
		if (p[i] != f.prod)
			ucm_cpumap_producer__destroy(p[i]);
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	return fixture_fini(&f);
}

/* Inline mode: no threads; the producer's flush runs the batch, on the
 * producer's thread, including the sink's open and close. */
static int inline_opens, inline_closes;
static pthread_t inline_thread;
static int inline_open(void *ctx, uint32_t worker)
{
	inline_opens++;
	inline_thread = pthread_self();
	return 0;
}
static void inline_close(void *ctx, uint32_t worker)
{
	if (pthread_equal(inline_thread, pthread_self()))
		inline_closes++;
}
static int inline_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		       const uint64_t *addrs, uint32_t n)
{
	if (!pthread_equal(inline_thread, pthread_self()))
		return -EPERM;	/* counted as sink drops: the test fails */
	return rec_xmit(ctx, worker, frames, addrs, n);
}
static const struct ucm_sink_ops inline_ops = {
	.sz = sizeof(struct ucm_sink_ops),
	.open = inline_open, .xmit = inline_xmit, .close = inline_close,
};

static int run_inline(uint32_t flags)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_cpumap_producer *extra;
	struct fixture f;
	uint64_t nw, ns, want = flags & UCM_CPUMAP_F_NO_LATENCY ? 0 : 20;
	uint32_t i;

	inline_opens = inline_closes = 0;
	if (fixture_init(&f, 1, 0, &inline_ops, UCM_CPUMAP_F_INLINE | flags, 0, 1024))
		return 1;
	UT_ASSERT(inline_opens == 1, "producer: sink opened %d times", inline_opens);
	extra = ucm_cpumap__producer_create(f.map, f.pool);
	UT_ASSERT(!extra && errno == ENOSPC, "a second producer for one inline worker");
	for (i = 0; i < 100; i += 10) {
		if (send_frames(&f, 0, i, 10, 10))
			return 1;
		/* Synchronous: delivered by the time flush returns. */
		UT_ASSERT(f.sink.delivered == i + 10, "after flush %u: %llu delivered",
			  i + 9, (unsigned long long)f.sink.delivered);
	}
	ucm_cpumap_producer__stop(f.prod);
	UT_ASSERT(inline_closes == 1, "sink closed %d times on its thread", inline_closes);
	ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
	UT_ASSERT(ws.processed == 100 && ws.drops == 0, "worker %llu/%llu",
		  (unsigned long long)ws.processed, (unsigned long long)ws.drops);
	/* Flushes of 10: held, one hand-over each; else bulks of 8 and 2. */
	if (flags & UCM_CPUMAP_F_HOLD)
		UT_ASSERT(f.sink.xmits == 10 && f.sink.max_n == 10 && ws.flush_empty == 10,
			  "%u hand-overs, largest %u, %llu at idle: want 10, 10, 10", f.sink.xmits,
			  f.sink.max_n, (unsigned long long)ws.flush_empty);
	else
		UT_ASSERT(f.sink.xmits == 20 && f.sink.max_n == 8,
			  "%u hand-overs, largest %u: want 20, 8", f.sink.xmits, f.sink.max_n);
	/* The latency histograms count every bulk inline too (a bulk of 8
	 * and one of 2 per flush), all without a wait: there is no ring. */
	lat_counts(&ws, &nw, &ns);
	UT_ASSERT(nw == want && ns == want && ws.wait_hist[0] == want && !ws.wait_ns,
		  "%llu waits (%llu none, %llu ns) and %llu sink times, want %llu bulks",
		  (unsigned long long)nw, (unsigned long long)ws.wait_hist[0],
		  (unsigned long long)ws.wait_ns, (unsigned long long)ns,
		  (unsigned long long)want);
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	return fixture_fini(&f);
}

static int test_inline_mode(void)
{
	return run_inline(0);
}

/* A destroyed inline producer's worker goes to the next producer made:
 * it runs its packets as the first did. */
static int test_inline_worker_reused(void)
{
	struct fixture f;

	inline_opens = inline_closes = 0;
	if (fixture_init(&f, 1, 0, &inline_ops, UCM_CPUMAP_F_INLINE, 0, 1024))
		return 1;
	ucm_cpumap_producer__destroy(f.prod);
	f.prod = ucm_cpumap__producer_create(f.map, f.pool);
	UT_ASSERT(f.prod, "no producer after the first was destroyed: %s", strerror(errno));
	UT_ASSERT(inline_opens == 2 && inline_closes == 1, "sink opened %d, closed %d times",
		  inline_opens, inline_closes);
	if (send_frames(&f, 0, 0, 10, 10))
		return 1;
	UT_ASSERT(f.sink.delivered == 10, "%llu of 10 delivered",
		  (unsigned long long)f.sink.delivered);
	ucm_cpumap_producer__stop(f.prod);
	UT_ASSERT(!f.sink.errors, "%s", f.sink.why);
	return fixture_fini(&f);
}

/* Held packets go at the end of each RX batch (the producer's flush). */
static int test_inline_mode_hold(void)
{
	return run_inline(UCM_CPUMAP_F_HOLD);
}

/* No stamps: the histograms stay empty. */
static int test_inline_mode_no_latency(void)
{
	return run_inline(UCM_CPUMAP_F_NO_LATENCY);
}

/* A map stopped under an inline producer that never flushed: its staged
 * packet goes home, a sink drop as a held bulk's packets are, and the bulk
 * wait_hist counted is in sink_hist too. Packets of @nframes frames:
 * every frame of each comes home. */
static int run_inline_not_stopped(uint32_t flags, uint32_t nframes)
{
	struct ucm_cpumap_worker_stats ws;
	struct fixture f;
	uint64_t nw, ns, held = flags & UCM_CPUMAP_F_HOLD ? 8 : 0;

	inline_opens = inline_closes = 0;
	if (fixture_init(&f, 1, 0, &inline_ops, UCM_CPUMAP_F_INLINE | flags, 0, 1024))
		return 1;
	f.nframes = nframes;
	/* The ninth runs the first eight as a bulk and stays staged. */
	if (enqueue_frames(&f, 0, 0, 9))
		return 1;
	ucm_cpumap__stop(f.map);
	/* Its sink closed all the same: every open has its close. */
	UT_ASSERT(inline_opens == 1 && inline_closes == 1, "sink opened %d, closed %d times",
		  inline_opens, inline_closes);
	ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
	lat_counts(&ws, &nw, &ns);
	UT_ASSERT(nw == 1 && ns == 1, "%llu waits and %llu sink times, want 1 bulk",
		  (unsigned long long)nw, (unsigned long long)ns);
	UT_ASSERT(f.sink.delivered == 8 - held && ws.drop_reason[UCM_DROP_SINK] == held + 1 &&
		  ws.drops == held + 1,
		  "%llu delivered, %llu sink drops (%llu drops): want %llu, %llu",
		  (unsigned long long)f.sink.delivered,
		  (unsigned long long)ws.drop_reason[UCM_DROP_SINK],
		  (unsigned long long)ws.drops,
		  (unsigned long long)(8 - held), (unsigned long long)held + 1);
	UT_ASSERT(!f.sink.errors && f.sink.chains == (nframes > 1 ? 8 - held : 0),
		  "%llu chains delivered: %s", (unsigned long long)f.sink.chains, f.sink.why);
	return fixture_fini(&f);
}

static int test_inline_not_stopped(void)
{
	return run_inline_not_stopped(0, 1);
}

static int test_inline_not_stopped_hold(void)
{
	return run_inline_not_stopped(UCM_CPUMAP_F_HOLD, 1);
}

/* ---- packets of several frames ----------------------------------------- */

/*
 * Each of the map's drops with packets of CHAIN_FRAMES frames (a 9000-byte
 * one's three): the drop sends every frame of a packet home, not only its
 * first, and fixture_fini()'s audit finds none left out, of a chain or
 * elsewhere. Those delivered reach the sink with their list intact.
 */

/* The worker ring full (and a lane full): the overflow, chains. */
static int test_chain_ring_full(void)
{
	return ring_full_run(0, 8, 14, 3, CHAIN_FRAMES) ||
	       ring_full_run(UCM_CPUMAP_F_LANES, 8, 14, 3, CHAIN_FRAMES);
}

/* Past a producer's fair share of a filling ring: the bulks it sheds. */
static int test_chain_fair_share(void)
{
	return fair_case(0, true, CHAIN_FRAMES);
}

/* The worker's own drops: a chain whose first frame's bytes would run
 * past that frame, one with a bad IP header; the good one after them is
 * delivered. */
static int test_chain_worker_drops(void)
{
	struct ucm_cpumap_worker_stats ws;
	void *area;
	struct fixture f;
	uint64_t addr[3], base;
	uint32_t len, i;

	if (fixture_init(&f, 1, 256, &rec_ops, 0, 0, 4096))
		return 1;
	area = ucm_umem__area(f.umem);
	for (i = 0; i < 3; i++)
		if (chain_prep(&f, i, &addr[i], &len))
			return 1;
	base = (addr[0] & ~UCM_DESC_CHAIN) & ~(uint64_t)4095;
	ucm_chain_of(area, base)->head_len = 4096 - DATA_OFF + 1;
	((uint8_t *)area)[(addr[1] & ~UCM_DESC_CHAIN) + 14] = 0x65;	/* IP version 6 */
	for (i = 0; i < 3; i++)
		UT_ASSERT(!ucm_cpumap_producer__enqueue(f.prod, 0, addr[i],
							len + (i ? 0 : 4096 - DATA_OFF + 1 - PKT_LEN)),
			  "enqueue");
	ucm_cpumap_producer__flush(f.prod);
	UT_ASSERT(wait_processed(f.map, 0, 3, WAIT_MS), "processed");
	ucm_cpumap__worker_stats(f.map, 0, &ws, sizeof(ws));
	UT_ASSERT(ws.drops == 2 && ws.drop_reason[UCM_DROP_FRAME_BOUNDS] == 1 &&
		  ws.drop_reason[UCM_DROP_IP_VERSION] == 1,
		  "drops %llu (frame_bounds %llu, ip_version %llu), want 2 (1, 1)",
		  (unsigned long long)ws.drops,
		  (unsigned long long)ws.drop_reason[UCM_DROP_FRAME_BOUNDS],
		  (unsigned long long)ws.drop_reason[UCM_DROP_IP_VERSION]);
	UT_ASSERT(wait_delivered(&f.sink, 1, WAIT_MS) && f.sink.chains == 1 && !f.sink.errors,
		  "delivered %llu, %llu chains, want 1: %s",
		  (unsigned long long)rec_delivered(&f.sink), (unsigned long long)f.sink.chains,
		  f.sink.why);
	return fixture_fini(&f);
}

/* A verdict that breaks the rule on a chain: parses it as one buffer of
 * its whole length (UCM_PKT_F_PARTIAL gone) and shortens its length. */
static int reparse_whole(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	(void)ctx;
	(void)worker;
	if (ucm_pkt__parse(&frame->pkt, ucm_frame_data(frame), frame->len) != UCM_DROP_NONE)
		return UCM_VERDICT_DROP;
	frame->len = frame->head_len;
	frame->head_len = frame->len + 1;
	return UCM_VERDICT_PASS;
}

/* 16 packets of @nframes frames through @verdict, which breaks the rule:
 * what it did to the frames' start, lengths and flags is undone, so the
 * sink gets each as it came (rec_xmit(), rec_chain()), never a length that
 * would read past its first frame. */
static int verdict_undone(ucm_verdict_fn verdict, uint32_t nframes)
{
	uint64_t want = nframes > 1 ? 16 : 0;
	struct fixture f;
	int err;

	fx_verdict = verdict;
	err = fixture_init(&f, 1, 256, &rec_ops, 0, 0, 4096);
	fx_verdict = NULL;
	if (err)
		return 1;
	f.nframes = nframes;
	if (send_frames(&f, 0, 0, 16, 8))
		return 1;
	UT_ASSERT(wait_delivered(&f.sink, 16, WAIT_MS) && f.sink.chains == want && !f.sink.errors,
		  "delivered %llu, %llu chains, want 16 and %llu: %s",
		  (unsigned long long)rec_delivered(&f.sink), (unsigned long long)f.sink.chains,
		  (unsigned long long)want, f.sink.why);
	return fixture_fini(&f);
}

static int test_chain_verdict_reparse(void)
{
	return verdict_undone(reparse_whole, CHAIN_FRAMES);
}

/* A verdict that moves a packet of one frame's start and end and marks it
 * a chain, all against the rule. */
static int move_and_mark(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	(void)ctx;
	(void)worker;
	frame->data_off += 4;
	frame->len -= 4;
	frame->flags |= UCM_FRAME_F_CHAIN;
	return UCM_VERDICT_PASS;
}

static int test_verdict_bounds_restored(void)
{
	return verdict_undone(move_and_mark, 1);
}

/* A stop with chains held: an inline worker's held bulk (sink drops)
 * and its producer's staged packet; without the hold, the staged one. */
static int test_chain_stop_held(void)
{
	return run_inline_not_stopped(UCM_CPUMAP_F_HOLD, CHAIN_FRAMES) ||
	       run_inline_not_stopped(0, CHAIN_FRAMES);
}

/* The pool names only its own places; the cpumap names its own. */
static int test_loc_names(void)
{
	UT_ASSERT(!strcmp(ucm_frame_loc_str(UCM_LOC_CACHE), "cache"), "cache");
	UT_ASSERT(!strcmp(ucm_frame_loc_str(UCM_LOC_BQ), "bulkq"), "%s",
		  ucm_frame_loc_str(UCM_LOC_BQ));
	UT_ASSERT(!strcmp(ucm_frame_loc_str(UCM_LOC_WQ), "worker-ring"), "%s",
		  ucm_frame_loc_str(UCM_LOC_WQ));
	UT_ASSERT(!strcmp(ucm_frame_loc_str(UCM_LOC_WORKER), "worker"), "%s",
		  ucm_frame_loc_str(UCM_LOC_WORKER));
	UT_ASSERT(!strcmp(ucm_frame_loc_str(UCM_LOC__MAX - 1), "unknown"), "unnamed");
	/* Past the audit's places, the one the pool itself names. */
	UT_ASSERT(!strcmp(ucm_frame_loc_str(UCM_LOC_CHAIN), "chain"), "%s",
		  ucm_frame_loc_str(UCM_LOC_CHAIN));
	UT_ASSERT(!strcmp(ucm_frame_loc_str(UCM_LOC_CHAIN + 1), "unknown"), "out of range");
	return 0;
}

/* ---- the application's verdict ---------------------------------------- */

/* Drop every third packet; on the others, move the destination port from
 * 9000 to 9001 (a rewrite the descriptor records: parsed again) and mark
 * the payload after the stamp. The sink checks all three. */
struct verdict_ctx {
	atomic_ulong calls, dropped, bad_worker;
	uint32_t nworkers;
};

static int drop_thirds(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	struct verdict_ctx *v = ctx;
	uint8_t *d = ucm_frame_data(frame);
	uint32_t seq;

	atomic_fetch_add(&v->calls, 1);
	if (worker >= v->nworkers)
		atomic_fetch_add(&v->bad_worker, 1);
	memcpy(&seq, d + 46, 4);
	if (ntohl(seq) % 3 == 0) {
		atomic_fetch_add(&v->dropped, 1);
		return UCM_VERDICT_DROP;
	}
	d[frame->pkt.l4_off + 3] = 9001 & 0xff;	/* 9000 = 0x2328 -> 0x2329 */
	d[50] = 0xab;
	return ucm_pkt__parse(&frame->pkt, d, frame->len) == UCM_DROP_NONE ?
	       UCM_VERDICT_PASS : UCM_VERDICT_DROP;
}

struct verdict_sink {
	atomic_ulong delivered, wrong;
};

static int verdict_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
			const uint64_t *addrs, uint32_t n)
{
	struct verdict_sink *s = ctx;

	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *d = ucm_frame_data(frames[i]);
		uint32_t seq;

		memcpy(&seq, d + 46, 4);
		if (ntohl(seq) % 3 == 0 || frames[i]->pkt.dport != 9001 || d[50] != 0xab)
			atomic_fetch_add(&s->wrong, 1);
	}
	atomic_fetch_add(&s->delivered, n);
	return 0;
}

static const struct ucm_sink_ops verdict_ops = { .sz = sizeof(struct ucm_sink_ops), .xmit = verdict_xmit };

static int count_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		      const uint64_t *addrs, uint32_t n)
{
	atomic_fetch_add(&((struct verdict_sink *)ctx)->delivered, n);
	return 0;
}

static const struct ucm_sink_ops rec_count_ops = { .sz = sizeof(struct ucm_sink_ops), .xmit = count_xmit };

/* A verdict case: a UMEM and its pool (vrun_init), then two workers with
 * @co's sink, verdict and channels and @n packets of sequence 0.. spread
 * over them, flushed every 8, and stopped: the counters are final
 * (vrun_run); at the end, the cpumap gone, every frame home (vrun_home). */
struct vrun {
	struct ucm_umem *umem;
	struct ucm_pool *pool;
	struct ucm_cpumap *map;
};

static int vrun_init(struct vrun *r)
{
	UCM_OPTS(ucm_umem_opts, uo, .frames_per_pool = 4096);

	r->umem = ucm_umem__create(&uo);
	UT_ASSERT(r->umem, "umem");
	r->pool = ucm_umem__pool(r->umem, 0);
	ucm_pool__set_owner(r->pool);
	return 0;
}

static int vrun_run(struct vrun *r, struct ucm_cpumap_opts *co, uint32_t n)
{
	struct ucm_cpumap_producer *prod;
	int cpus[2];
	uint64_t addr;
	uint32_t i;

	if (ut_usable_cpus(cpus, 2) < 2)
		cpus[1] = cpus[0];
	co->cpus = cpus;
	co->ncpus = 2;
	co->qsize = 1024;
	r->map = ucm_cpumap__create(r->umem, co);
	UT_ASSERT(r->map, "cpumap: %s", strerror(errno));
	prod = ucm_cpumap__producer_create(r->map, r->pool);
	UT_ASSERT(prod, "producer");
	for (i = 0; i < n; i++) {
		UT_ASSERT(!ucm_pool__alloc(r->pool, &addr), "alloc");
		frame_prep(r->umem, addr, 0, i);
		UT_ASSERT(!ucm_cpumap_producer__enqueue(prod, i % 2, addr + DATA_OFF, PKT_LEN), "enqueue");
		if (i % 8 == 7)
			ucm_cpumap_producer__flush(prod);
	}
	ucm_cpumap_producer__flush(prod);
	ucm_cpumap_producer__stop(prod);
	ucm_cpumap__stop(r->map);
	return 0;
}

static int vrun_home(struct vrun *r)
{
	ucm_pool__clear_owner(r->pool);
	UT_ASSERT(!ucm_umem__audit(r->umem, NULL, 0), "audit");
	UT_ASSERT(!ucm_umem__destroy(r->umem, 1000), "frames did not come home");
	return 0;
}

static int run_verdict(uint32_t map_flags)
{
	struct verdict_ctx v = { .nworkers = 2 };
	struct verdict_sink vs = {};
	struct ucm_cpumap_worker_stats ws;
	uint64_t drops = 0, reason = 0;
	struct vrun r;
	uint32_t w;
	UCM_OPTS(ucm_cpumap_opts, co, .sink = &verdict_ops, .sink_ctx = &vs,
		 .flags = map_flags, .verdict = drop_thirds, .verdict_ctx = &v);

	if (vrun_init(&r) || vrun_run(&r, &co, 300))
		return 1;
	for (w = 0; w < 2; w++) {
		ucm_cpumap__worker_stats(r.map, w, &ws, sizeof(ws));
		drops += ws.drops;
		reason += ws.drop_reason[UCM_DROP_VERDICT];
	}
	UT_ASSERT(atomic_load(&v.calls) == 300 && !atomic_load(&v.bad_worker),
		  "verdict called %lu times (want 300), %lu on a worker out of range",
		  atomic_load(&v.calls), atomic_load(&v.bad_worker));
	UT_ASSERT(atomic_load(&vs.delivered) == 200 && !atomic_load(&vs.wrong),
		  "sink got %lu (want 200), %lu of them not as the verdict left them",
		  atomic_load(&vs.delivered), atomic_load(&vs.wrong));
	UT_ASSERT(drops == 100 && reason == 100, "drops %llu, by verdict %llu (want 100)",
		  (unsigned long long)drops, (unsigned long long)reason);
	UT_ASSERT(!strcmp(ucm_drop_reason_str(UCM_DROP_VERDICT), "verdict"), "name");
	ucm_cpumap__destroy(r.map);
	return vrun_home(&r);
}

static int test_verdict(void)
{
	return run_verdict(0);
}

/* Inline: the verdict runs on the producer's thread, as "worker" k. */
static int test_verdict_inline(void)
{
	return run_verdict(UCM_CPUMAP_F_INLINE);
}

/* With the hold: the verdict runs as packets arrive, before they wait. */
static int test_verdict_hold(void)
{
	return run_verdict(UCM_CPUMAP_F_HOLD);
}

/* UCM_VERDICT_TX: odd packets back out through each worker's TX channel
 * (collected here as the RX thread would), even ones on to the sink. */
static int tx_odd(void *ctx, uint32_t worker, struct ucm_frame_hdr *frame)
{
	uint32_t seq;

	memcpy(&seq, (uint8_t *)ucm_frame_data(frame) + 46, 4);
	if (!(ntohl(seq) & 1))
		return UCM_VERDICT_PASS;
	((uint8_t *)ucm_frame_data(frame))[50] = 0x7e;	/* as it is now */
	return UCM_VERDICT_TX;
}

static int test_verdict_tx(void)
{
	struct verdict_sink vs = {};
	struct ucm_cpumap_worker_stats ws;
	struct ucm_txq *txq[2];
	uint64_t desc[64], base[64], tx = 0;
	uint32_t i, w, n, got = 0, wrong = 0;
	struct vrun r;
	UCM_OPTS(ucm_cpumap_opts, co, .sink = &rec_count_ops, .sink_ctx = &vs,
		 .verdict = tx_odd, .txqs = txq);

	if (vrun_init(&r))
		return 1;
	for (w = 0; w < 2; w++) {
		txq[w] = ucm_txq__create(r.umem, 256);
		UT_ASSERT(txq[w], "txq");
	}
	if (vrun_run(&r, &co, 200))
		return 1;
	/* The RX thread's side: what came out on the channels, home. */
	for (w = 0; w < 2; w++) {
		ucm_cpumap__worker_stats(r.map, w, &ws, sizeof(ws));
		tx += ws.tx;
		while ((n = ucm_txq__collect(txq[w], desc, 64))) {
			for (i = 0; i < n; i++) {
				const uint8_t *d = ucm_umem__frame(ucm_umem__area(r.umem),
								   ucm_desc_addr(desc[i]));
				uint32_t seq;

				memcpy(&seq, d + 46, 4);
				wrong += !(ntohl(seq) & 1) || d[50] != 0x7e ||
					 ucm_desc_len(desc[i]) != PKT_LEN;
				base[i] = ucm_desc_addr(desc[i]) & ~(uint64_t)4095;
			}
			UT_ASSERT(!ucm_umem__put_bulk(r.umem, base, n), "home");
			got += n;
		}
	}
	UT_ASSERT(got == 100 && !wrong && tx == 100, "out on the channels %u (want 100, %u wrong), tx %llu",
		  got, wrong, (unsigned long long)tx);
	UT_ASSERT(atomic_load(&vs.delivered) == 100, "sink got %lu, want the 100 even ones",
		  atomic_load(&vs.delivered));
	ucm_cpumap__destroy(r.map);
	for (w = 0; w < 2; w++)
		UT_ASSERT(!ucm_txq__destroy(txq[w]), "txq destroy");
	return vrun_home(&r);
}

static const struct ut_case cases[] = {
	UT_CASE(test_enqueue_after_stop),
	UT_CASE(test_worker_cpu),
	UT_CASE(test_latency_hist),
	UT_CASE(test_spin),
	UT_CASE(test_latency_hist_hold),
	UT_CASE(test_latency_hist_off),
	UT_CASE(test_verdict),
	UT_CASE(test_verdict_tx),
	UT_CASE(test_verdict_inline),
	UT_CASE(test_verdict_hold),
	UT_CASE(test_loc_names),
	UT_CASE(test_inline_mode),
	UT_CASE(test_inline_worker_reused),
	UT_CASE(test_inline_mode_hold),
	UT_CASE(test_inline_mode_no_latency),
	UT_CASE(test_inline_not_stopped),
	UT_CASE(test_inline_not_stopped_hold),
	UT_CASE(test_chain_ring_full),
	UT_CASE(test_chain_fair_share),
	UT_CASE(test_chain_worker_drops),
	UT_CASE(test_chain_verdict_reparse),
	UT_CASE(test_verdict_bounds_restored),
	UT_CASE(test_chain_stop_held),
	UT_CASE(test_create_rejects_bad_options),
	UT_CASE(test_sink_ops_sized),
	UT_CASE(test_delivery_and_descriptors),
	UT_CASE(test_no_lost_wakeup_before_sleep),
	UT_CASE(test_no_lost_wakeup_before_announce),
	UT_CASE(test_wait_sink_no_lost_wakeup_before_sleep),
	UT_CASE(test_wait_sink_no_lost_wakeup_before_announce),
	UT_CASE(test_wait_sink_other_direction),
	UT_CASE(test_prewake_no_lost_wakeup_before_sleep),
	UT_CASE(test_prewake_no_lost_wakeup_before_announce),
	UT_CASE(test_poll_wait_sink_no_lost_wakeup_before_sleep),
	UT_CASE(test_poll_wait_sink_no_lost_wakeup_before_announce),
	UT_CASE(test_poll_wait_prewake_no_lost_wakeup_before_sleep),
	UT_CASE(test_poll_wait_prewake_no_lost_wakeup_before_announce),
	UT_CASE(test_prewake),
	UT_CASE(test_prewake_many_fds),
	UT_CASE(test_drain_on_stop),
	UT_CASE(test_stop_flush_in_window),
	UT_CASE(test_destroy_flushes_bulk_queues),
	UT_CASE(test_ring_full_drops),
	UT_CASE(test_fair_share),
	UT_CASE(test_fair_senders),
	UT_CASE(test_fair_share_silent),
	UT_CASE(test_one_producer),
	UT_CASE(test_malformed_frames_are_counted),
	UT_CASE(test_enqueue_rejects_bad_input),
	UT_CASE(test_no_recycle_switch),
	UT_CASE(test_recycle_via_ring),
	UT_CASE(test_keep_sink),
	UT_CASE(test_hold_hands_over_64),
	UT_CASE(test_no_hold_hands_over_8),
	UT_CASE(test_hold_idle_flush),
	UT_CASE(test_multi_producer_accounting),
	UT_CASE(test_lanes_in_turn),
	UT_CASE(test_lanes_handed_on),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
