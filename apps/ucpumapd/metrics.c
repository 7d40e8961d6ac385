// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's metrics: with --metrics-listen ADDR:PORT, GET /metrics in
 * Prometheus' text exposition format 0.0.4, from the server of
 * apps/common/httpd.h on a thread of its own (its bounds against bad
 * clients are there).
 *
 *   metrics__open()    the socket bound: after ucm_dp__create() (a second
 *                      instance is told the interface is served, not that
 *                      the port is in use), before ucm_dp__start(): a
 *                      port in use fails before anything is redirected
 *   metrics__start()   serving, once ucm_dp__start() succeeded
 *   metrics__stop()    the thread joined, before ucm_dp__stop()
 *   metrics__close()   sockets and memory (stops first)
 *
 * Concurrency: each scrape runs on the server's thread, one at a time,
 * and reads the datapath through ucm_dp's getters only (any thread, any
 * time, no lock the datapath's threads take) and the daemon's cfg, which
 * nothing writes after the parse. struct metrics' snapshot is the
 * thread's alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "httpd.h"
#include "opts.h"
#include "util.h"

/* The upper bounds of the tun's super-packet buckets (tun.h:
 * UCM_TUN_SEG_HIST: 2, 3-4, 5-8, ..., 65-128 packets). */
static const unsigned int seg_le[UCM_TUN_SEG_HIST] = { 2, 4, 8, 16, 32, 64, 128 };

/* One scrape's reading of the counters: every family then lists each
 * queue and worker from the same reading. */
struct snap {
	struct ucm_dp_stats t;
	uint32_t nq, nw;
	bool two_way, inline_;
	bool neigh;			/* the way back asks the kernel for next hops */
	bool offload;			/* the way back reads super-packets */
	uint32_t qid[UCM_XSK_MAX_QUEUES];
	struct ucm_xsk_stats xs[UCM_XSK_MAX_QUEUES];
	struct ucm_pool_stats ps[UCM_XSK_MAX_QUEUES];
	struct ucm_cpumap_enqueue_stats es[UCM_XSK_MAX_QUEUES][UCM_CPUMAP_MAX_WORKERS];
	bool es_ok[UCM_XSK_MAX_QUEUES][UCM_CPUMAP_MAX_WORKERS];
	struct ucm_cpumap_worker_stats ws[UCM_CPUMAP_MAX_WORKERS];
	struct ucm_tun_stats ts[UCM_CPUMAP_MAX_WORKERS];
	struct ucm_tun_back_stats rs[UCM_CPUMAP_MAX_WORKERS];
	uint64_t back_read[UCM_CPUMAP_MAX_WORKERS];	/* back_read_of(rs) */
};

struct metrics {
	struct httpd *srv;
	const struct daemon *d;
	struct snap snap;		/* the server's thread's */
};

/* --metrics-listen's OPT_CUSTOM parser. */
int metrics_parse_listen(const struct opt *o, const char *arg, void *cfg)
{
	return httpd_parse_addr(arg, "--metrics-listen", &((struct cfg *)cfg)->metrics);
}

/* ---- the exposition ------------------------------------------------------------- */

/*
 * A label value: backslash, double quote and newline escaped, and bytes
 * that are not UTF-8 as U+FFFD (the text format is UTF-8 throughout).
 */
static void label(struct tbuf *b, const char *name, const char *v)
{
	size_t n;

	tbuf_printf(b, "%s=\"", name);
	for (; *v; v += n) {
		n = utf8_seq_len(v);
		if (!n) {
			tbuf_printf(b, "\xef\xbf\xbd");
			n = 1;
		} else if (*v == '\\' || *v == '"') {
			tbuf_printf(b, "\\%c", *v);
		} else if (*v == '\n') {
			tbuf_printf(b, "\\n");
		} else {
			tbuf_append(b, v, n);
		}
	}
	tbuf_printf(b, "\"");
}

static void family(struct tbuf *b, const char *name, const char *type, const char *help)
{
	tbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

#define ULL(x) ((unsigned long long)(x))

/* Per-queue and per-worker counters and gauges, by where they are read. */
enum src { SRC_XSK, SRC_POOL, SRC_WORKER, SRC_TUN, SRC_BACK, SRC_BACK_READ };

struct fam {
	const char *name, *type, *help;
	enum src src;
	size_t off;			/* a uint64_t in the source's struct */
	bool is_signed;			/* an int64_t instead */
	bool ns_to_s;			/* nanoseconds, shown in seconds */
	bool two_way;			/* only on a two-way datapath */
	bool neigh;			/* only where it resolves next hops: a tun, no --peer-mac */
	bool offload;			/* only with the way back's offloads (no --no-offload) */
	bool threads;			/* only where the workers are threads of
					 * their own: inline (--pass) ones never sleep */
};

#define C .type = "counter"
#define G .type = "gauge"
#define X(f) .src = SRC_XSK, .off = offsetof(struct ucm_xsk_stats, f)
#define P(f) .src = SRC_POOL, .off = offsetof(struct ucm_pool_stats, f)
#define W(f) .src = SRC_WORKER, .off = offsetof(struct ucm_cpumap_worker_stats, f)
#define T(f) .src = SRC_TUN, .off = offsetof(struct ucm_tun_stats, f)
#define R(f) .src = SRC_BACK, .off = offsetof(struct ucm_tun_back_stats, f)
static const struct fam fams[] = {
	{ .name = "ucpumap_rx_packets_total", C, X(rx_packets),
	  .help = "Packets taken from the queue's AF_XDP RX ring (one of several frames once)." },
	{ .name = "ucpumap_rx_descriptors_total", C, X(rx),
	  .help = "Descriptors taken from the queue's AF_XDP RX ring, one per frame." },
	{ .name = "ucpumap_rx_chain_more_total", C, X(rx_chain_more),
	  .help = "Of ucpumap_rx_descriptors_total, the descriptors after the first of each packet." },
	{ .name = "ucpumap_xsk_rx_dropped_total", C, X(kernel_rx_dropped),
	  .help = "The kernel's XDP_STATISTICS rx_dropped: packets the socket dropped." },
	{ .name = "ucpumap_xsk_rx_ring_full_total", C, X(kernel_rx_ring_full),
	  .help = "The kernel's rx_ring_full: packets dropped for a full RX ring." },
	{ .name = "ucpumap_xsk_fill_ring_empty_total", C, X(kernel_rx_fill_ring_empty_descs),
	  .help = "The kernel's rx_fill_ring_empty_descs: times the fill ring was empty." },
	{ .name = "ucpumap_xsk_rx_invalid_descs_total", C, X(kernel_rx_invalid_descs),
	  .help = "The kernel's rx_invalid_descs." },
	{ .name = "ucpumap_pool_alloc_fast_total", C, P(alloc_fast),
	  .help = "Frame allocations served from the pool's alloc cache." },
	{ .name = "ucpumap_pool_alloc_refill_total", C, P(alloc_refill),
	  .help = "Frame allocations served right after a refill from the recycle ring." },
	{ .name = "ucpumap_pool_alloc_slow_total", C, P(alloc_slow),
	  .help = "Frame allocations that took frames from the backing stack." },
	{ .name = "ucpumap_pool_recycle_cached_total", C, P(recycle_cached),
	  .help = "Frames returned straight into the alloc cache (owner only)." },
	{ .name = "ucpumap_pool_recycle_ring_total", C, P(recycle_ring),
	  .help = "Frames returned into the recycle ring." },
	{ .name = "ucpumap_pool_recycle_ring_full_total", C, P(recycle_ring_full),
	  .help = "Frame returns that found the recycle ring full and went to the backing stack." },
	{ .name = "ucpumap_pool_recycle_released_total", C, P(recycle_released),
	  .help = "Frames returned straight to the backing stack (recycling off)." },
	{ .name = "ucpumap_pool_inflight", G, P(inflight), .is_signed = true,
	  .help = "Frames of the pool outside its backing stack." },
	{ .name = "ucpumap_tx_packets_total", C, X(tx_packets), .two_way = true,
	  .help = "Two-way: packets put on the queue's AF_XDP TX ring (one of several frames once)." },
	{ .name = "ucpumap_tx_descriptors_total", C, X(tx), .two_way = true,
	  .help = "Two-way: descriptors put on the queue's AF_XDP TX ring, one per frame." },
	{ .name = "ucpumap_tx_chains_total", C, X(tx_chains), .two_way = true,
	  .help = "Two-way: packets of several frames put on the queue's AF_XDP TX ring (multi-buffer)." },
	{ .name = "ucpumap_tx_chain_more_total", C, X(tx_chain_more), .two_way = true,
	  .help = "Two-way: of ucpumap_tx_descriptors_total, the descriptors after the first of each packet." },
	{ .name = "ucpumap_tx_completed_total", C, X(tx_completed), .two_way = true,
	  .help = "Two-way: TX frames the kernel completed." },
	{ .name = "ucpumap_worker_processed_total", C, W(processed),
	  .help = "Packets the worker took from its ring." },
	{ .name = "ucpumap_worker_drops_total", C, W(drops),
	  .help = "Packets the worker dropped (malformed, or refused by the tun)." },
	{ .name = "ucpumap_worker_sleeps_total", C, W(sched), .threads = true,
	  .help = "Times the worker slept on an empty ring." },
	{ .name = "ucpumap_worker_sleep_seconds_total", C, W(sleep_ns), .ns_to_s = true, .threads = true,
	  .help = "Time the worker slept on an empty ring; the rest of the time it was busy." },
	{ .name = "ucpumap_worker_prewakes_total", C, W(prewakes), .threads = true,
	  .help = "Sleeps of the worker an arrival on its queues ended, before the RX thread's kick (--prewake)." },
	{ .name = "ucpumap_delivered_packets_total", C, T(packets),
	  .help = "Packets the tun took from the worker." },
	{ .name = "ucpumap_delivered_bytes_total", C, T(bytes),
	  .help = "Bytes the tun took from the worker." },
	{ .name = "ucpumap_delivered_csum_partial_total", C, T(csum_partial),
	  .help = "Packets the tun took with their checksum left to the kernel: their sender left it partial (its checksum offload)." },
	{ .name = "ucpumap_back_packets_total", C, .src = SRC_BACK_READ, .two_way = true,
	  .help = "Two-way: packets the worker read from the tun for the way back: handed to its TX channel, or dropped (ucpumap_drops_total{way=\"back\"})." },
	{ .name = "ucpumap_back_neigh_questions_total", C, R(neigh_asks), .two_way = true, .neigh = true,
	  .help = "Two-way: next-hop questions the worker queued for its resolver (misses, refreshes)." },
	{ .name = "ucpumap_back_neigh_held_total", C, R(neigh_held), .two_way = true, .neigh = true,
	  .help = "Two-way: packets that waited for their next hop to be resolved (sent then, or dropped as no_neigh, or as stopped at the stop)." },
	{ .name = "ucpumap_back_neigh_requests_total", C, R(neigh_requests), .two_way = true, .neigh = true,
	  .help = "Two-way: netlink messages the worker's resolver sent the kernel." },
	{ .name = "ucpumap_back_neigh_evicted_total", C, R(neigh_evicted), .two_way = true, .neigh = true,
	  .help = "Two-way: known next hops the cache gave up for another destination." },
	{ .name = "ucpumap_back_neigh_refused_total", C, R(neigh_refused), .two_way = true, .neigh = true,
	  .help = "Two-way: packets to new destinations not cached, every place in their set in use (each counts)." },
	{ .name = "ucpumap_back_channel_waits_total", C, R(channel_waits), .two_way = true,
	  .help = "Two-way: times the way back stopped reading the tun, its TX channel full (back-pressure, not drops)." },
	{ .name = "ucpumap_back_super_packets_total", C, R(super_packets), .two_way = true, .offload = true,
	  .help = "Two-way: GSO super-packets (TSO, USO) the way back read and cut into segments." },
	{ .name = "ucpumap_back_segments_total", C, R(segments), .two_way = true, .offload = true,
	  .help = "Two-way: segments the way back cut from super-packets (in ucpumap_back_packets_total)." },
	{ .name = "ucpumap_back_csum_completed_total", C, R(csum_completed), .two_way = true, .offload = true,
	  .help = "Two-way: partial checksums (NEEDS_CSUM) the way back completed." },
	{ .name = "ucpumap_back_csum_offloaded_total", C, R(csum_offloaded), .two_way = true, .offload = true,
	  .help = "Two-way: packets the way back sent with their checksum left to the kernel or the device (AF_XDP TX metadata)." },
};
#undef C
#undef G
#undef X
#undef P
#undef W
#undef T
#undef R

static const void *fam_base(const struct snap *s, enum src src, uint32_t i)
{
	switch (src) {
	case SRC_XSK: return &s->xs[i];
	case SRC_POOL: return &s->ps[i];
	case SRC_WORKER: return &s->ws[i];
	case SRC_TUN: return &s->ts[i];
	case SRC_BACK: return &s->rs[i];
	case SRC_BACK_READ: return &s->back_read[i];
	}
	return NULL;
}

static void render_fams(struct tbuf *b, const struct snap *s)
{
	const struct fam *f;
	uint32_t i, n;

	for (f = fams; f < fams + sizeof(fams) / sizeof(fams[0]); f++) {
		bool per_queue = f->src == SRC_XSK || f->src == SRC_POOL;

		if ((f->two_way && !s->two_way) || (f->threads && s->inline_) ||
		    (f->neigh && !s->neigh) || (f->offload && !s->offload))
			continue;
		family(b, f->name, f->type, f->help);
		n = per_queue ? s->nq : s->nw;
		for (i = 0; i < n; i++) {
			const char *v = (const char *)fam_base(s, f->src, i) + f->off;

			tbuf_printf(b, "%s{%s=\"%u\"} ", f->name, per_queue ? "queue" : "worker",
				    per_queue ? s->qid[i] : i);
			if (f->is_signed)
				tbuf_printf(b, "%lld\n", (long long)*(const int64_t *)v);
			else if (f->ns_to_s)
				tbuf_printf(b, "%.9f\n", *(const uint64_t *)v / 1e9);
			else
				tbuf_printf(b, "%llu\n", ULL(*(const uint64_t *)v));
		}
	}
}

/* Every drop, by the way it happened on and its reason, as the
 * statistics line and the conservation line count them (stats.c), chain
 * by its four reasons: the way in's, from the kernel's at the sockets on,
 * add up to received - delivered; the way back's to read - sent. */
static void render_drops(struct tbuf *b, const struct snap *s, const struct daemon *d)
{
	struct drop_named nm[DROPS_NAMED];
	struct drops n;
	int k, i;

	count_drops(d, &s->t, &n);
	k = drops_in_named(&n, true, nm);
	family(b, "ucpumap_drops_total", "counter",
	       "Packets dropped, by way (in: reached the sockets and not delivered; back: read from the tun and not sent) and reason.");
	for (i = 0; i < k; i++)
		tbuf_printf(b, "ucpumap_drops_total{way=\"in\",reason=\"%s\"} %llu\n", nm[i].name,
			    ULL(nm[i].v));
	if (!s->two_way)
		return;
	for (i = 0; i < DROPS_BACK; i++)
		tbuf_printf(b, "ucpumap_drops_total{way=\"back\",reason=\"%s\"} %llu\n",
			    cause_name(true, i), ULL(n.back[i]));
}

/* What the XDP program left to the kernel before it was ours: not in
 * ucpumap_rx_packets_total, never a drop of ours. */
static void render_pass(struct tbuf *b, const struct snap *s)
{
	uint32_t r;

	if (s->t.xdp_pass_err)	/* cannot be read: said at the start */
		return;
	family(b, "ucpumap_xdp_pass_total", "counter",
	       "Frames the XDP program left to the kernel (XDP_PASS), by reason: to another station's MAC, the link's control (ARP, neighbour discovery), a protocol or family not steered, cut short in its headers, steered where no socket took it (a queue not served, the start, the stop).");
	for (r = 0; r < UCM_STEER_PASS__MAX; r++)
		if (r != UCM_STEER_PASS_NO_CPU)	/* the baseline program's */
			tbuf_printf(b, "ucpumap_xdp_pass_total{reason=\"%s\"} %llu\n",
				    ucm_pass_reason_str(r), ULL(s->t.xdp_pass[r]));
}

static void render_enqueue(struct tbuf *b, const struct snap *s)
{
	static const char *const names[3] = {"ucpumap_enqueue_packets_total",
					     "ucpumap_enqueue_drops_total",
					     "ucpumap_enqueue_shed_total"};
	static const char *const helps[3] = {
		"Packets the queue's RX thread flushed towards the worker, drops included.",
		"Packets the worker's ring had no room for, or refused over the queue's fair share.",
		"Of ucpumap_enqueue_drops_total, the packets refused over the queue's fair share of the worker's ring."};
	uint32_t q, w;
	int k;

	for (k = 0; k < 3; k++) {
		family(b, names[k], "counter", helps[k]);
		for (q = 0; q < s->nq; q++) {
			for (w = 0; w < s->nw; w++) {
				const struct ucm_cpumap_enqueue_stats *e = &s->es[q][w];
				const uint64_t v[3] = {e->processed, e->drops,
						       e->shed};

				if (s->es_ok[q][w])
					tbuf_printf(
						b,
						"%s{queue=\"%u\",worker=\"%u\"} %llu\n",
						names[k], s->qid[q], w,
						ULL(v[k]));
			}
		}
	}
}

/* The tun's super-packet sizes as a histogram: cumulative buckets, and
 * the count from them (the counters are read one by one, not as a set:
 * @super may be a write ahead or behind), so that +Inf is the count. */
static void render_coalesce(struct tbuf *b, const struct snap *s)
{
	uint32_t w;
	int k;

	family(b, "ucpumap_coalesce_segments", "histogram",
	       "Packets in each GSO super-packet the worker wrote into the tun (our GRO).");
	for (w = 0; w < s->nw; w++) {
		uint64_t cum = 0;

		for (k = 0; k < UCM_TUN_SEG_HIST; k++) {
			cum += s->ts[w].super_hist[k];
			tbuf_printf(b, "ucpumap_coalesce_segments_bucket{worker=\"%u\",le=\"%u\"} %llu\n",
				    w, seg_le[k], ULL(cum));
		}
		tbuf_printf(b, "ucpumap_coalesce_segments_bucket{worker=\"%u\",le=\"+Inf\"} %llu\n",
			    w, ULL(cum));
		tbuf_printf(b, "ucpumap_coalesce_segments_sum{worker=\"%u\"} %llu\n", w,
			    ULL(s->ts[w].super_segs));
		tbuf_printf(b, "ucpumap_coalesce_segments_count{worker=\"%u\"} %llu\n", w, ULL(cum));
	}
}

/* One latency histogram series (api.h's buckets) in seconds. */
static void lat_series(struct tbuf *b, const char *name, const char *label, uint32_t id,
		       const uint64_t *h, uint64_t sum_ns)
{
	uint64_t cum = 0;
	uint32_t k;

	for (k = 0; k < UCM_LAT_BUCKETS - 1; k++) {
		cum += h[k];
		tbuf_printf(b, "%s_bucket{%s=\"%u\",le=\"%g\"} %llu\n", name, label, id,
			    ucm_lat_bucket_le_ns(k) / 1e9, ULL(cum));
	}
	cum += h[k];
	tbuf_printf(b, "%s_bucket{%s=\"%u\",le=\"+Inf\"} %llu\n", name, label, id, ULL(cum));
	tbuf_printf(b, "%s_sum{%s=\"%u\"} %.9f\n", name, label, id, sum_ns / 1e9);
	tbuf_printf(b, "%s_count{%s=\"%u\"} %llu\n", name, label, id, ULL(cum));
}

static void render_latency(struct tbuf *b, const struct snap *s)
{
	uint32_t i;

	family(b, "ucpumap_rx_latency_seconds", "histogram",
	       "Per RX batch: its first packet's arrival in the XDP program to the RX thread's flush towards the workers.");
	for (i = 0; i < s->nq; i++)
		lat_series(b, "ucpumap_rx_latency_seconds", "queue", s->qid[i], s->xs[i].rx_hist,
			   s->xs[i].rx_lat_ns);
	family(b, "ucpumap_worker_wait_seconds", "histogram",
	       "Per bulk: the RX thread's flush to the worker's dequeue.");
	for (i = 0; i < s->nw; i++)
		lat_series(b, "ucpumap_worker_wait_seconds", "worker", i, s->ws[i].wait_hist,
			   s->ws[i].wait_ns);
	family(b, "ucpumap_worker_sink_seconds", "histogram",
	       "Per bulk: the worker's dequeue to the sink's completion of its packets (or their drop).");
	for (i = 0; i < s->nw; i++)
		lat_series(b, "ucpumap_worker_sink_seconds", "worker", i, s->ws[i].sink_hist,
			   s->ws[i].sink_ns);
}

static void snap_read(struct snap *s, const struct daemon *d)
{
	uint32_t q, w;

	ucm_dp__stats(d->dp, &s->t, sizeof(s->t));
	s->two_way = ucm_dp__flags(d->dp) & UCM_DP_F_TWO_WAY;
	s->inline_ = ucm_dp__flags(d->dp) & UCM_DP_F_INLINE;
	s->neigh = s->two_way && !(ucm_dp__flags(d->dp) & UCM_DP_F_TAP) && !d->c.peer_mac_set;
	s->offload = s->two_way && !(ucm_dp__flags(d->dp) & UCM_DP_F_NO_OFFLOAD);
	s->nq = ucm_dp__nqueues(d->dp);
	s->nw = ucm_dp__nworkers(d->dp);
	for (q = 0; q < s->nq; q++) {
		s->qid[q] = ucm_dp__queue_id(d->dp, q);
		ucm_dp__xsk_stats(d->dp, q, &s->xs[q], sizeof(s->xs[q]));
		ucm_dp__pool_stats(d->dp, q, &s->ps[q], sizeof(s->ps[q]));
		for (w = 0; w < s->nw; w++)
			s->es_ok[q][w] = !ucm_dp__enqueue_stats(d->dp, q, w, &s->es[q][w],
								 sizeof(s->es[q][w]));
	}
	for (w = 0; w < s->nw; w++) {
		ucm_dp__worker_stats(d->dp, w, &s->ws[w], sizeof(s->ws[w]));
		ucm_dp__tun_stats(d->dp, w, &s->ts[w], sizeof(s->ts[w]));
		if (ucm_dp__back_stats(d->dp, w, &s->rs[w], sizeof(s->rs[w])))
			memset(&s->rs[w], 0, sizeof(s->rs[w]));
		s->back_read[w] = back_read_of(&s->rs[w]);
	}
}

/* The RX threads' CPU time (their CPU clocks): with the workers' sleep,
 * where the time goes; a polling thread's is its whole CPU while traffic
 * is recent. */
static void render_rx_cpu(struct tbuf *b, const struct snap *s, const struct daemon *d)
{
	uint64_t ns;

	family(b, "ucpumap_rx_thread_cpu_seconds_total", "counter",
	       "CPU time of the queue's RX thread (its CPU clock).");
	for (uint32_t q = 0; q < s->nq; q++)
		if (!rx_thread_cpu_ns(d, q, &ns))
			tbuf_printf(b, "ucpumap_rx_thread_cpu_seconds_total{queue=\"%u\"} %.9f\n",
				    s->qid[q], ns / 1e9);
}

/* Up: running, the interface up with a carrier and the tun up, as the
 * control thread's last check (within CHECK_SEC) found them; not before
 * its first. */
static void render_up(struct tbuf *b, const struct snap *s, const struct daemon *d)
{
	uint32_t l = __atomic_load_n(&d->links, __ATOMIC_RELAXED);
	bool seen = l & LINKS_SEEN, run = s->t.state & UCM_DP_S_RUNNING;
	const char *tun = ucm_dp__tun_name(d->dp);

	family(b, "ucpumap_up", "gauge",
	       "1: ucpumapd runs and forwards (running, the interface up with a carrier, the tun up); else 0.");
	tbuf_printf(b, "ucpumap_up %d\n",
		    run && seen && (l & UCM_DP_LINK_IFACE_UP) && (!tun || l & UCM_DP_LINK_TUN_UP));
	family(b, "ucpumap_link_up", "gauge",
	       "1: the link is up (the interface: with a carrier), as checked every 0.1 s; else 0.");
	tbuf_printf(b, "ucpumap_link_up{");
	label(b, "dev", d->c.dev);
	tbuf_printf(b, ",role=\"iface\"} %d\n", seen && (l & UCM_DP_LINK_IFACE_UP));
	if (!tun)
		return;
	tbuf_printf(b, "ucpumap_link_up{");
	label(b, "dev", tun);
	tbuf_printf(b, ",role=\"tun\"} %d\n", seen && (l & UCM_DP_LINK_TUN_UP));
}

/* What bad clients of this server cost (httpd.h): a scraper refused is
 * counted here, seen at the next scrape that gets in. */
static void render_server(struct tbuf *b, const struct metrics *m)
{
	struct httpd_stats hs;

	httpd__stats(m->srv, &hs);
	family(b, "ucpumap_metrics_connections_dropped_total", "counter",
	       "Connections this server closed to make room: evicted for a newcomer before their time limit (waiting for their request, or taking an answer for over a second), or refused (503: every slot an answer going out for less than a second).");
	tbuf_printf(b, "ucpumap_metrics_connections_dropped_total{reason=\"refused\"} %llu\n",
		    ULL(hs.refused));
	tbuf_printf(b, "ucpumap_metrics_connections_dropped_total{reason=\"evicted\"} %llu\n",
		    ULL(hs.evicted));
}

/* The whole exposition into @b. Return: 0 or -errno (@b's). */
static int render(struct metrics *m, struct tbuf *b)
{
	const struct daemon *d = m->d;
	struct snap *s = &m->snap;

	snap_read(s, d);
	render_up(b, s, d);
	family(b, "ucpumap_info", "gauge", "The interface and the tun, as labels; always 1.");
	tbuf_printf(b, "ucpumap_info{");
	label(b, "dev", d->c.dev);
	tbuf_printf(b, ",");
	label(b, "tun", ucm_dp__tun_name(d->dp) ?: "");
	tbuf_printf(b, "} 1\n");
	/* The Makefile's version (ucpumapd.c: the library's is the same). */
	family(b, "ucpumap_build_info", "gauge", "The version, as a label; always 1.");
	tbuf_printf(b, "ucpumap_build_info{");
	label(b, "version", UCPUMAPD_VERSION);
	tbuf_printf(b, "} 1\n");
	render_drops(b, s, d);
	render_pass(b, s);
	render_fams(b, s);
	render_rx_cpu(b, s, d);
	render_enqueue(b, s);
	render_coalesce(b, s);
	if (!d->c.no_latency)
		render_latency(b, s);
	render_server(b, m);
	return b->err;
}

/* ---- life cycle ------------------------------------------------------------------ */

static int metrics_render(struct tbuf *b, void *ctx)
{
	return render(ctx, b);
}

int metrics__open(struct metrics **mp, const struct httpd_addr *a)
{
	struct metrics *m;
	int err;

	*mp = NULL;
	if (!a->len)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m) {
		fprintf(stderr, "ucpumapd: --metrics-listen: out of memory\n");
		return -ENOMEM;
	}
	err = httpd__open(&m->srv, a);
	if (err) {
		free(m);
		return err;
	}
	*mp = m;
	return 0;
}

int metrics__start(struct metrics *m, const struct daemon *d)
{
	const struct httpd_opts o = {
		.path = "/metrics",
		.content_type = "text/plain; version=0.0.4; charset=utf-8",
		.render = metrics_render,
		.ctx = m,
	};

	if (!m)
		return 0;
	m->d = d;
	return httpd__start(m->srv, &o);
}

void metrics__stop(struct metrics *m)
{
	if (m)
		httpd__stop(m->srv);
}

void metrics__close(struct metrics *m)
{
	if (!m)
		return;
	httpd__close(m->srv);
	free(m);
}
