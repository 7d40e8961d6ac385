// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's statistics: one line every interval (with --extended, the
 * per-queue and per-worker lines after it), the JSON lines, and the
 * closing conservation lines. All from ucm_dp's getters, which any thread
 * may call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "journal.h"
#include "util.h"


#define ULL(x) ((unsigned long long)(x))

/* ---- the one line ---------------------------------------------------------- */

/* The conservation line names the causes up to enqueue_full even at 0,
 * the others when they occurred. */
#define IN_ALWAYS	5

/* "drops N/s", and the largest cause when there are drops. */
static void print_drops(bool back, const uint64_t *now, const uint64_t *then, int n, double dt)
{
	uint64_t sum = 0, most = 0;
	int i, which = 0;

	for (i = 0; i < n; i++) {
		sum += now[i] - then[i];
		if (now[i] - then[i] > most) {
			most = now[i] - then[i];
			which = i;
		}
	}
	printf("drops %.0f/s", sum / dt);
	if (sum)
		printf(" (largest: %s %.0f/s)", cause_name(back, which), most / dt);
}

/* @ns of @n threads' time over an interval of @dt s, in percent of it;
 * two clocks read a moment apart can say a little below 0 or above 100,
 * and a sleep's running total, read while the sleep goes on, can go back
 * a few ns: the callers pass differences as signed. */
static double share_pct(double ns, double dt, uint32_t n)
{
	double busy = dt * n > 0 ? 100.0 * ns / 1e9 / (dt * n) : 0;

	return busy < 0 ? 0 : busy > 100 ? 100 : busy;
}

/* The workers' busy share of the interval, in percent: what they did not
 * sleep of it (xdp-bench's per-CPU load, from the library's own clock),
 * averaged over them. */
static double busy_share(const struct daemon *d, const struct ucm_dp_stats *t, double dt)
{
	uint32_t n = ucm_dp__nworkers(d->dp);

	return n ? 100 - share_pct((int64_t)(t->worker_sleep_ns - d->last.worker_sleep_ns), dt, n) : 0;
}

/* The RX threads' busy share of the interval, in percent: their CPU time
 * over it (poll.c), @rx_cpu the sum now, averaged over them. */
static double rx_busy_share(const struct daemon *d, uint64_t rx_cpu, double dt)
{
	return share_pct((int64_t)(rx_cpu - d->last_rx_cpu), dt, ucm_dp__nqueues(d->dp));
}

/* The rate of a count read live that may dip (delivered, a difference of
 * counters): a dip reads 0, not a wrapped difference. */
static double dip_rate(uint64_t now, uint64_t then, double dt)
{
	return now > then ? (now - then) / dt : 0;
}

/* ", to the kernel N/s (largest: REASON N/s)": what the XDP program left
 * to the kernel (never in rx), said only where some was and it can be
 * read. */
static void print_pass(const struct ucm_dp_stats *t, const struct ucm_dp_stats *l, double dt)
{
	uint64_t sum = 0, most = 0, n;
	uint32_t r, which = 0;

	if (t->xdp_pass_err)
		return;
	for (r = 0; r < UCM_STEER_PASS__MAX; r++) {
		n = t->xdp_pass[r] > l->xdp_pass[r] ? t->xdp_pass[r] - l->xdp_pass[r] : 0;
		sum += n;
		if (n > most) {
			most = n;
			which = r;
		}
	}
	if (sum)
		printf(", to the kernel %.0f/s (largest: %s %.0f/s)", sum / dt,
		       ucm_pass_reason_str(which), most / dt);
}

/* The line: received, delivered, dropped; two-way, the way back's. */
static void print_line(const struct daemon *d, const struct ucm_dp_stats *t,
		       const struct drops *n, uint64_t rx_cpu, double dt, bool final)
{
	const struct ucm_dp_stats *l = &d->last;

	if (final)
		printf("total %s, averaged over the whole run (%.3f s): ", d->c.dev, dt);
	else
		printf("%s: ", d->c.dev);
	printf("rx %.0f pps, delivered %.0f pps, ", dip_rate(t->rx, l->rx, dt),
	       (t->delivered - l->delivered) / dt);
	print_drops(false, n->in, d->last_drops.in, DROPS_IN, dt);
	if (!d->c.pass)
		printf(", workers %.0f%% busy", busy_share(d, t, dt));
	printf(", RX threads %.0f%% busy", rx_busy_share(d, rx_cpu, dt));
	/* over the time since the passes were last read (a failed read
	 * keeps the reading before it) */
	print_pass(t, l, d->last_t + dt - d->last_pass_t);
	/* Said only where there are some: the senders' checksum offload. */
	if (t->tun_csum_partial != l->tun_csum_partial)
		printf(", checksums left to the kernel %.0f/s",
		       (t->tun_csum_partial - l->tun_csum_partial) / dt);
	if (d->c.two_way) {
		printf(" | back: %.0f pps, ", dip_rate(t->tx, l->tx, dt));
		print_drops(true, n->back, d->last_drops.back, DROPS_BACK, dt);
	}
	putchar('\n');
}

/* ---- --extended: per queue, per worker ------------------------------------- */

/* The cpumap's part of the totals: what reached the worker rings. */
static void print_cpumap(const struct daemon *d, const struct ucm_dp_stats *t, double dt)
{
	const struct ucm_dp_stats *l = &d->last;
	uint64_t ev = t->enqueue_events - l->enqueue_events;
	/* Read one after the other while a bulk is counted: a drop may be
	 * in where its bulk is not yet. */
	int64_t to = (int64_t)(t->enqueue_processed - l->enqueue_processed) -
		     (int64_t)(t->enqueue_drops - l->enqueue_drops);

	printf("  cpumap: to workers %.0f pps, enqueue drops %.0f/s, bulk-avg %.1f, worker drops %.0f/s\n",
	       to > 0 ? to / dt : 0,
	       (t->enqueue_drops - l->enqueue_drops) / dt,
	       ev ? (double)(t->enqueue_processed - l->enqueue_processed) / ev : 0,
	       (t->worker_drops - l->worker_drops) / dt);
}

/* "p50 <X p99 <Y" of a histogram (its buckets' upper bounds, us), into
 * @buf; ">131072" for the last bucket, which has none. */
static const char *lat_str(char *buf, size_t sz, const uint64_t *h)
{
	uint32_t q[2] = { ucm_lat_quantile(h, 0.5), ucm_lat_quantile(h, 0.99) };
	int n = 0;

	if (q[0] == UCM_LAT_BUCKETS) {
		snprintf(buf, sz, "none");
		return buf;
	}
	for (int k = 0; k < 2; k++)
		n += snprintf(buf + n, sz - n, "%sp%d %s%.0f", k ? " " : "", k ? 99 : 50,
			      q[k] == UCM_LAT_BUCKETS - 1 ? ">" : "<",
			      ucm_lat_bucket_le_ns(q[k] == UCM_LAT_BUCKETS - 1 ?
						   q[k] - 1 : q[k]) / 1000.0);
	return buf;
}

static uint64_t lat_count(const uint64_t *h)
{
	uint64_t n = 0;

	for (uint32_t b = 0; b < UCM_LAT_BUCKETS; b++)
		n += h[b];
	return n;
}

static void json_hist(struct json *j, const char *key, const uint64_t *h, uint64_t sum_ns)
{
	char k[64];

	json_arr(j, key);
	for (uint32_t b = 0; b < UCM_LAT_BUCKETS; b++)
		json_u64(j, NULL, h[b]);
	json_arr_end(j);
	snprintf(k, sizeof(k), "%s_sum_ns", key);
	json_u64(j, k, sum_ns);
}

static void print_queue(struct daemon *d, uint32_t q, double dt)
{
	struct ucm_cpumap_enqueue_stats es;
	struct ucm_xsk_stats xs;
	struct ucm_pool_stats ps;
	uint32_t id = ucm_dp__queue_id(d->dp, q), w;
	char lat[64];
	uint64_t rxp;

	ucm_dp__xsk_stats(d->dp, q, &xs, sizeof(xs));
	ucm_dp__pool_stats(d->dp, q, &ps, sizeof(ps));
	rxp = xs.rx_packets;
	/* its RX thread's CPU time: rx_cpu_seen, read for this line */
	printf("  queue %u: %.0f pps, RX thread %.0f%% busy, rx %llu (in several frames %llu) bad-desc %llu | kernel: rx_dropped %llu ring_full %llu fill_empty %llu invalid %llu | pool: fast %llu refill %llu slow %llu cached %llu ring %llu ring_full %llu released %llu inflight %lld\n",
	       id, dip_rate(rxp, d->last_q_rx[q], dt),
	       share_pct(d->rx_cpu_seen[q] - d->last_q_cpu[q], dt, 1),
	       ULL(rxp), ULL(xs.rx_chains), ULL(xs.rx_bad_desc),
	       ULL(xs.kernel_rx_dropped), ULL(xs.kernel_rx_ring_full),
	       ULL(xs.kernel_rx_fill_ring_empty_descs), ULL(xs.kernel_rx_invalid_descs),
	       ULL(ps.alloc_fast), ULL(ps.alloc_refill), ULL(ps.alloc_slow),
	       ULL(ps.recycle_cached), ULL(ps.recycle_ring), ULL(ps.recycle_ring_full),
	       ULL(ps.recycle_released), (long long)ps.inflight);
	d->last_q_rx[q] = rxp;
	d->last_q_cpu[q] = d->rx_cpu_seen[q];
	if (!d->c.no_latency)
		printf("    latency (us): arrival to flush %s (%llu batches)\n",
		       lat_str(lat, sizeof(lat), xs.rx_hist), ULL(lat_count(xs.rx_hist)));
	if (d->c.two_way && q < ucm_dp__nworkers(d->dp)) {	/* it has channels */
		/* Packets; the ring's descriptors and completions are frames. */
		uint64_t txp = xs.tx_packets;

		printf("    tx: %.0f pps, tx %llu (in several frames %llu) drops (ring full) %llu (bad) %llu | completions %llu frames, bulk-avg %.1f, direct %.1f%% | kicks %llu kick_err %llu\n",
		       dip_rate(txp, d->last_q_tx[q], dt), ULL(txp), ULL(xs.tx_chains),
		       ULL(xs.tx_ring_full), ULL(xs.tx_bad_desc),
		       ULL(xs.tx_completed),
		       xs.tx_comp_bulks ? (double)xs.tx_completed / xs.tx_comp_bulks : 0,
		       xs.tx_completed ? 100.0 * xs.tx_comp_direct / xs.tx_completed : 0,
		       ULL(xs.tx_kicks), ULL(xs.tx_kick_err));
		d->last_q_tx[q] = txp;
	}
	for (w = 0; w < ucm_dp__nworkers(d->dp); w++) {
		if (ucm_dp__enqueue_stats(d->dp, q, w, &es, sizeof(es)))
			continue;
		printf("    enqueue %u->%u: %.0f pps, drops %.0f/s, processed %llu drops %llu (fair share %llu) bulk-avg %.1f\n",
		       id, w, (es.processed - d->last_enq[q][w][0]) / dt,
		       (es.drops - d->last_enq[q][w][1]) / dt,
		       ULL(es.processed), ULL(es.drops), ULL(es.shed),
		       es.events ? (double)es.processed / es.events : 0);
		d->last_enq[q][w][0] = es.processed;
		d->last_enq[q][w][1] = es.drops;
	}
}

static void print_back(struct daemon *d, uint32_t w, double dt)
{
	struct ucm_tun_back_stats rs;
	struct ucm_txq_stats qs;
	uint64_t read;

	if (ucm_dp__back_stats(d->dp, w, &rs, sizeof(rs)) || ucm_dp__txq_stats(d->dp, w, &qs, sizeof(qs)))
		return;
	read = back_read_of(&rs);
	printf("    back: read %llu (%.0f pps) in %llu reads, no_frame %llu, drops offload %llu too_big %llu non_ip %llu no_neigh %llu link_local %llu stopped %llu, neigh asks %llu held %llu requests %llu evicted %llu refused %llu, err %llu | to queue %u: sent %llu full %llu, waits for room %llu\n",
	       ULL(read), (read - d->last_back[w]) / dt, ULL(rs.reads),
	       ULL(rs.no_frame), ULL(rs.drop_offload), ULL(rs.drop_too_big),
	       ULL(rs.drop_non_ip), ULL(rs.drop_no_neigh), ULL(rs.drop_link_local),
	       ULL(rs.drop_stopped),
	       ULL(rs.neigh_asks), ULL(rs.neigh_held),
	       ULL(rs.neigh_requests), ULL(rs.neigh_evicted), ULL(rs.neigh_refused), ULL(rs.err),
	       ucm_dp__queue_id(d->dp, w % ucm_dp__nqueues(d->dp)), ULL(qs.sent),
	       ULL(qs.send_full), ULL(rs.channel_waits));
	if (rs.super_packets || rs.csum_completed || rs.csum_offloaded || rs.drop_offload)
		printf("    back offloads: %llu super-packets cut into %llu segments, %llu checksums completed, %llu left to the kernel; refused: bad type %llu, bad header %llu, too big %llu\n",
		       ULL(rs.super_packets), ULL(rs.segments), ULL(rs.csum_completed),
		       ULL(rs.csum_offloaded),
		       ULL(rs.offload_bad_type), ULL(rs.offload_bad_header),
		       ULL(rs.offload_too_big));
	if (rs.chains)
		printf("    back jumbo: %llu packets sent in several frames (multi-buffer)\n",
		       ULL(rs.chains));
	d->last_back[w] = read;
}

static void print_worker(struct daemon *d, uint32_t w, double dt)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_tun_stats ts;
	char l1[64], l2[64];

	ucm_dp__worker_stats(d->dp, w, &ws, sizeof(ws));
	ucm_dp__tun_stats(d->dp, w, &ts, sizeof(ts));
	if (d->stop_read)
		ws.sleep_ns = d->stop_w_sleep[w];
	/* An inline worker (--pass) never sleeps: no busy share of its own. */
	if (d->c.pass)
		snprintf(l1, sizeof(l1), "inline");
	else
		snprintf(l1, sizeof(l1), "%.0f%% busy",
			 100 - share_pct((int64_t)(ws.sleep_ns - d->last_w_sleep[w]), dt, 1));
	printf("  worker %u (cpu %d): %.0f pps, %s, drops %.0f/s, processed %llu drops %llu sched %llu | tun: packets %llu submits %llu non_ip %llu eio %llu ebadfd %llu eagain %llu other %llu csum_partial %llu\n",
	       w, ucm_dp__worker_cpu(d->dp, w), (ws.processed - d->last_w[w][0]) / dt, l1,
	       (ws.drops - d->last_w[w][1]) / dt, ULL(ws.processed), ULL(ws.drops),
	       ULL(ws.sched), ULL(ts.packets), ULL(ts.submits), ULL(ts.non_ip),
	       ULL(ts.err_eio), ULL(ts.err_ebadfd), ULL(ts.err_eagain), ULL(ts.err_other),
	       ULL(ts.csum_partial));
	if (!d->c.no_coalesce)
		printf("    coalesce: super-packets %llu of %.1f on average (2 %llu, 3-4 %llu, 5-8 %llu, 9-16 %llu, 17-32 %llu, 33-64 %llu, 65-128 %llu), refused %llu | hand-overs %llu: ring empty %llu, 64 held %llu\n",
		       ULL(ts.super), ts.super ? (double)ts.super_segs / ts.super : 0,
		       ULL(ts.super_hist[0]), ULL(ts.super_hist[1]), ULL(ts.super_hist[2]),
		       ULL(ts.super_hist[3]), ULL(ts.super_hist[4]), ULL(ts.super_hist[5]),
		       ULL(ts.super_hist[6]), ULL(ts.super_refused), ULL(ws.xmits),
		       ULL(ws.flush_empty), ULL(ws.flush_full));
	if (!d->c.no_latency && !d->c.pass)
		printf("    latency (us): flush to dequeue %s, dequeue to the sink's completion %s (%llu bulks)\n",
		       lat_str(l1, sizeof(l1), ws.wait_hist), lat_str(l2, sizeof(l2), ws.sink_hist),
		       ULL(lat_count(ws.wait_hist)));
	if (ucm_dp__prewake(d->dp))
		printf("    pre-wakes %llu (sleeps an arrival ended before the RX thread's kick)\n",
		       ULL(ws.prewakes));
	d->last_w[w][0] = ws.processed;
	d->last_w[w][1] = ws.drops;
	d->last_w_sleep[w] = ws.sleep_ns;
	print_back(d, w, dt);
}

static void json_totals(struct json *j, const struct daemon *d, const struct ucm_dp_stats *t)
{
	json_u64(j, "rx", t->rx);
	json_u64(j, "rx_bad_desc", t->rx_bad_desc);
	json_u64(j, "rx_steer_err", t->rx_steer_err);
	json_u64(j, "rx_chains", t->rx_chains);
	json_u64(j, "rx_chain_drops", t->rx_chain_drops);
	if (d->c.two_way) {
		json_u64(j, "back_read", t->back_read);
		json_u64(j, "back_drop_bad", t->back_drop_bad);
		json_u64(j, "back_read_err", t->back_read_err);
		json_u64(j, "back_channel_sent", t->back_channel_sent);
		json_u64(j, "back_channel_full", t->back_channel_full);
		json_u64(j, "back_channel_waits", t->back_channel_waits);
		json_u64(j, "back_super", t->back_super);
		json_u64(j, "back_segments", t->back_segments);
		json_u64(j, "back_csum_completed", t->back_csum_completed);
		json_u64(j, "back_csum_offloaded", t->back_csum_offloaded);
		json_u64(j, "tx", t->tx);
		json_u64(j, "tx_chains", t->tx_chains);
		json_u64(j, "tx_chain_more", t->tx_chain_more);
		json_u64(j, "tx_drops", t->tx_drops);
		json_u64(j, "tx_completed", t->tx_completed);
		json_u64(j, "tx_comp_direct", t->tx_comp_direct);
		json_u64(j, "tx_comp_bulks", t->tx_comp_bulks);
	}
	json_u64(j, "enqueue_processed", t->enqueue_processed);
	json_u64(j, "enqueue_drops", t->enqueue_drops);
	json_u64(j, "enqueue_shed", t->enqueue_shed);
	json_u64(j, "enqueue_events", t->enqueue_events);
	json_u64(j, "worker_processed", t->worker_processed);
	json_u64(j, "worker_drops", t->worker_drops);
	json_obj(j, "worker_drop_reasons");
	for (int r = 1; r < UCM_DROP__MAX; r++)
		json_u64(j, ucm_drop_reason_str(r), t->worker_drop_reason[r]);
	json_obj_end(j);
	json_u64(j, "tun_packets", t->tun_packets);
	json_u64(j, "tun_non_ip", t->tun_non_ip);
	json_u64(j, "tun_err_eio", t->tun_err_eio);
	json_u64(j, "tun_err_ebadfd", t->tun_err_ebadfd);
	json_u64(j, "tun_err_eagain", t->tun_err_eagain);
	json_u64(j, "tun_err_other", t->tun_err_other);
	json_u64(j, "tun_super", t->tun_super);
	json_u64(j, "tun_super_segs", t->tun_super_segs);
	json_u64(j, "tun_csum_partial", t->tun_csum_partial);
	/* Before the datapath: the kernel's, never ours to count in rx.
	 * Left out where they cannot be read (said at the start). */
	if (!t->xdp_pass_err) {
		json_obj(j, "xdp_pass");
		for (uint32_t r = 0; r < UCM_STEER_PASS__MAX; r++)
			if (r != UCM_STEER_PASS_NO_CPU)	/* the baseline program's */
				json_u64(j, ucm_pass_reason_str(r), t->xdp_pass[r]);
		json_obj_end(j);
	}
	json_hist(j, "rx_hist", t->rx_hist, t->rx_lat_ns);
	json_hist(j, "wait_hist", t->wait_hist, t->wait_ns);
	json_hist(j, "sink_hist", t->sink_hist, t->sink_ns);
}

static void json_queue(struct json *j, const struct daemon *d, uint32_t q)
{
	struct ucm_cpumap_enqueue_stats es;
	struct ucm_xsk_stats xs;
	struct ucm_pool_stats ps;

	ucm_dp__xsk_stats(d->dp, q, &xs, sizeof(xs));
	ucm_dp__pool_stats(d->dp, q, &ps, sizeof(ps));
	json_obj(j, NULL);
	json_u64(j, "queue", ucm_dp__queue_id(d->dp, q));
	json_u64(j, "rx", xs.rx);
	json_u64(j, "rx_bad_desc", xs.rx_bad_desc);
	json_u64(j, "rx_chains", xs.rx_chains);
	json_u64(j, "rx_chain_more", xs.rx_chain_more);
	json_u64(j, "rx_chain_long", xs.rx_chain_long);
	json_u64(j, "rx_chain_cut", xs.rx_chain_cut);
	json_u64(j, "rx_chain_bad", xs.rx_chain_bad);
	json_u64(j, "rx_chain_nosg", xs.rx_chain_nosg);
	json_u64(j, "tx_chains", xs.tx_chains);
	json_u64(j, "tx_chain_more", xs.tx_chain_more);
	json_u64(j, "tx_chain_long", xs.tx_chain_long);
	json_u64(j, "tx_chain_bad", xs.tx_chain_bad);
	json_u64(j, "tx_chain_nosg", xs.tx_chain_nosg);
	json_u64(j, "fill", xs.fill);
	json_u64(j, "kernel_rx_dropped", xs.kernel_rx_dropped);
	json_u64(j, "kernel_rx_ring_full", xs.kernel_rx_ring_full);
	json_u64(j, "kernel_rx_fill_ring_empty_descs", xs.kernel_rx_fill_ring_empty_descs);
	json_u64(j, "kernel_rx_invalid_descs", xs.kernel_rx_invalid_descs);
	json_u64(j, "pool_alloc_fast", ps.alloc_fast);
	json_u64(j, "pool_alloc_refill", ps.alloc_refill);
	json_u64(j, "pool_alloc_slow", ps.alloc_slow);
	json_u64(j, "pool_recycle_cached", ps.recycle_cached);
	json_u64(j, "pool_recycle_ring", ps.recycle_ring);
	json_u64(j, "pool_recycle_ring_full", ps.recycle_ring_full);
	json_u64(j, "pool_recycle_released", ps.recycle_released);
	json_num(j, "pool_inflight", ps.inflight);
	json_u64(j, "rx_batches", xs.rx_batches);
	json_u64(j, "busy_polls", xs.busy_polls);
	json_u64(j, "sleeps", xs.sleeps);
	json_obj(j, "wakes");
	json_u64(j, "rx", xs.wake_rx);
	json_u64(j, "channel", xs.wake_tx);
	json_u64(j, "stop", xs.wake_fd);
	json_u64(j, "timeout", xs.wake_timeout);
	json_obj_end(j);
	json_hist(j, "rx_hist", xs.rx_hist, xs.rx_lat_ns);
	json_arr(j, "enqueue");
	for (uint32_t w = 0; w < ucm_dp__nworkers(d->dp); w++) {
		if (ucm_dp__enqueue_stats(d->dp, q, w, &es, sizeof(es)))
			continue;
		json_obj(j, NULL);
		json_u64(j, "worker", w);
		json_u64(j, "processed", es.processed);
		json_u64(j, "drops", es.drops);
		json_u64(j, "shed", es.shed);
		json_u64(j, "events", es.events);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void json_worker(struct json *j, const struct daemon *d, uint32_t w)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_tun_stats ts;

	ucm_dp__worker_stats(d->dp, w, &ws, sizeof(ws));
	ucm_dp__tun_stats(d->dp, w, &ts, sizeof(ts));
	json_obj(j, NULL);
	json_u64(j, "worker", w);
	json_num(j, "cpu", ucm_dp__worker_cpu(d->dp, w));
	json_u64(j, "processed", ws.processed);
	json_u64(j, "drops", ws.drops);
	json_u64(j, "sched", ws.sched);
	json_u64(j, "sleep_ns", ws.sleep_ns);
	json_u64(j, "prewakes", ws.prewakes);
	json_u64(j, "tun_packets", ts.packets);
	json_u64(j, "tun_submits", ts.submits);
	json_u64(j, "xmits", ws.xmits);
	json_u64(j, "flush_empty", ws.flush_empty);
	json_u64(j, "flush_full", ws.flush_full);
	json_u64(j, "tun_super", ts.super);
	json_u64(j, "tun_super_segs", ts.super_segs);
	json_u64(j, "tun_super_refused", ts.super_refused);
	json_u64(j, "tun_csum_partial", ts.csum_partial);
	json_arr(j, "tun_super_hist");
	for (int b = 0; b < UCM_TUN_SEG_HIST; b++)
		json_u64(j, NULL, ts.super_hist[b]);
	json_arr_end(j);
	json_hist(j, "wait_hist", ws.wait_hist, ws.wait_ns);
	json_hist(j, "sink_hist", ws.sink_hist, ws.sink_ns);
	json_obj_end(j);
}

/* The way in's drops by reason (drops_in_named()'s), their sum, and
 * what reached the sockets. */
static void json_drops(struct json *j, const struct daemon *d, const struct ucm_dp_stats *t,
		       const struct drops *n)
{
	struct drop_named nm[DROPS_NAMED];
	int k = drops_in_named(n, false, nm);

	json_u64(j, "received", drops_arrived(t, n));
	json_u64(j, "delivered", t->delivered);
	json_u64(j, "drops", drops_sum(n->in, DROPS_IN));
	json_obj(j, "drops_in");
	for (int i = 0; i < k; i++)
		json_u64(j, nm[i].name, nm[i].v);
	json_obj_end(j);
	if (!d->c.two_way)
		return;
	json_obj(j, "drops_back");
	for (int i = 0; i < DROPS_BACK; i++)
		json_u64(j, cause_name(true, i), n->back[i]);
	json_obj_end(j);
}

void stats_json(struct json *j, const struct daemon *d, const struct ucm_dp_stats *t,
		const struct drops *n, uint64_t rx_cpu)
{
	uint32_t i;

	json_str(j, "dev", d->c.dev);
	json_drops(j, d, t, n);
	json_totals(j, d, t);
	json_u64(j, "rx_cpu_ns", rx_cpu);
	json_arr(j, "queues");
	for (i = 0; i < ucm_dp__nqueues(d->dp); i++)
		json_queue(j, d, i);
	json_arr_end(j);
	json_arr(j, "workers");
	for (i = 0; i < ucm_dp__nworkers(d->dp); i++)
		json_worker(j, d, i);
	json_arr_end(j);
}

/* One JSON line: the counters, and the interval's busy shares as the
 * line has them. Whole or not at all: while the last one is still going
 * out, this one is left out; the final one waits for it (a second). */
static void print_json(struct daemon *d, const struct ucm_dp_stats *t, const struct drops *n,
		       uint64_t rx_cpu, double now, double dt, bool final)
{
	struct json j;
	FILE *m;

	if (!(final ? json_line_drain(d) : json_line_flush(d))) {
		d->json_lost++;
		if (!d->json_lag_at || now - d->json_lag_at >= JSON_SAY_SEC) {
			out_warn("ucpumapd: --stats-json %s: its reader lags: lines are left out, whole, until it catches up (%llu so far; said at most once a minute)\n",
				 d->c.stats_json, (unsigned long long)d->json_lost);
			d->json_lag_at = now;
		}
		return;
	}
	m = open_memstream(&d->json_line, &d->json_len);
	if (!m) {
		d->json_lost++;
		return;
	}
	/* A line a full disk cut ends here: the next stays whole. */
	if (d->json_mid_line)
		fputc('\n', m);
	json_begin(&j, m);
	json_sec(&j, "time", now);
	if (!d->c.pass)
		json_num(&j, "workers_busy", busy_share(d, t, dt));
	json_num(&j, "rx_threads_busy", rx_busy_share(d, rx_cpu, dt));
	stats_json(&j, d, t, n, rx_cpu);
	json_end(&j);
	d->json_done = 0;
	if (fclose(m)) {
		free(d->json_line);
		d->json_line = NULL;
		d->json_lost++;
		return;
	}
	json_line_flush(d);
}

/* With the privileges gone, whether the XDP program's pass counters can
 * still be read: where they cannot, they never will, said once. */
void stats_pass_check(const struct daemon *d)
{
	struct ucm_dp_stats t;

	if (!ucm_dp__stats(d->dp, &t, sizeof(t)) && t.xdp_pass_err)
		out_warn("ucpumapd: the XDP program's counts of frames left to the kernel cannot be read (%s; before Linux 5.19 a bpf(2) lookup needs CAP_BPF, CAP_SYS_ADMIN before 5.8, where kernel.unprivileged_bpf_disabled is set): the JSON and /metrics leave them out\n",
			 strerror(-t.xdp_pass_err));
}

void stats_start(struct daemon *d)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_dp_stats t;
	uint32_t w;

	d->start_t = d->last_t = d->last_pass_t = now_sec();
	ucm_dp__stats(d->dp, &t, sizeof(t));
	d->base_sleep_ns = d->last.worker_sleep_ns = t.worker_sleep_ns;
	memcpy(d->base_pass, t.xdp_pass, sizeof(d->base_pass));
	memcpy(d->last.xdp_pass, t.xdp_pass, sizeof(d->last.xdp_pass));
	for (w = 0; w < ucm_dp__nworkers(d->dp) && w < UCM_CPUMAP_MAX_WORKERS; w++)
		if (!ucm_dp__worker_stats(d->dp, w, &ws, sizeof(ws)))
			d->base_w_sleep[w] = d->last_w_sleep[w] = ws.sleep_ns;
	d->base_rx_cpu = d->last_rx_cpu = rx_cpu_ns(d);
	memcpy(d->base_q_cpu, d->rx_cpu_seen, sizeof(d->base_q_cpu));
	memcpy(d->last_q_cpu, d->rx_cpu_seen, sizeof(d->last_q_cpu));
}

void stats_stop(struct daemon *d)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_dp_stats t;
	uint32_t w;

	rx_cpu_ns(d);
	ucm_dp__stats(d->dp, &t, sizeof(t));
	d->stop_sleep_ns = t.worker_sleep_ns;
	for (w = 0; w < ucm_dp__nworkers(d->dp) && w < UCM_CPUMAP_MAX_WORKERS; w++)
		if (!ucm_dp__worker_stats(d->dp, w, &ws, sizeof(ws)))
			d->stop_w_sleep[w] = ws.sleep_ns;
	d->stop_read = true;
}

/* The final block's rates are the whole run's: from zero (the busy
 * shares from the datapath's start), over start to stop. */
static void whole_run(struct daemon *d)
{
	memset(&d->last, 0, sizeof(d->last));
	memset(d->last_q_rx, 0, sizeof(d->last_q_rx));
	memset(d->last_q_tx, 0, sizeof(d->last_q_tx));
	memset(d->last_enq, 0, sizeof(d->last_enq));
	memset(d->last_w, 0, sizeof(d->last_w));
	memset(d->last_w_sleep, 0, sizeof(d->last_w_sleep));
	memset(d->last_q_cpu, 0, sizeof(d->last_q_cpu));
	memset(d->last_back, 0, sizeof(d->last_back));
	memset(&d->last_drops, 0, sizeof(d->last_drops));
	d->last.worker_sleep_ns = d->base_sleep_ns;
	memcpy(d->last.xdp_pass, d->base_pass, sizeof(d->last.xdp_pass));
	memcpy(d->last_w_sleep, d->base_w_sleep, sizeof(d->last_w_sleep));
	memcpy(d->last_q_cpu, d->base_q_cpu, sizeof(d->last_q_cpu));
	d->last_rx_cpu = d->base_rx_cpu;
	d->last_t = d->last_pass_t = d->start_t;
}

void print_stats(struct daemon *d, bool final)
{
	double now = now_sec(), end = now, dt;
	struct ucm_dp_stats t;
	uint64_t rx_cpu;
	struct drops n;
	uint32_t i;

	ucm_dp__stats(d->dp, &t, sizeof(t));
	if (d->stop_read)
		t.worker_sleep_ns = d->stop_sleep_ns;
	rx_cpu = rx_cpu_ns(d);
	count_drops(d, &t, &n);
	if (final) {
		whole_run(d);
		if (d->stop_t > 0)
			end = d->stop_t;
	}
	dt = end > d->last_t ? end - d->last_t : 1;
	print_line(d, &t, &n, rx_cpu, dt, final);
	if (d->c.extended) {
		print_cpumap(d, &t, dt);
		for (i = 0; i < ucm_dp__nqueues(d->dp); i++)
			print_queue(d, i, dt);
		for (i = 0; i < ucm_dp__nworkers(d->dp); i++)
			print_worker(d, i, dt);
	}
	if (d->json)
		print_json(d, &t, &n, rx_cpu, now, dt, final);
	fflush(stdout);
	d->last_rx_cpu = rx_cpu;
	/* A read of the passes that failed (zeros) is no base for the next
	 * line's rate: the last good one stays. */
	if (t.xdp_pass_err)
		memcpy(t.xdp_pass, d->last.xdp_pass, sizeof(t.xdp_pass));
	else
		d->last_pass_t = now;
	d->last = t;
	d->last_drops = n;
	d->last_t = now;
}

/* The closing lines: received = delivered + every drop, by reason; the
 * way back's own; and whether every frame came home. */
void print_verdict(struct daemon *d)
{
	struct drop_named nm[DROPS_NAMED];
	struct ucm_dp_stats t;
	struct drops n;
	uint32_t v;
	int k, i;

	ucm_dp__stats(d->dp, &t, sizeof(t));
	count_drops(d, &t, &n);
	k = drops_in_named(&n, false, nm);
	v = ucm_dp_stats__violations(&t, sizeof(t));
	/* The sum the library's equation checks, and the kernel's two. */
	printf("conservation: received %llu = delivered %llu + drops %llu (",
	       ULL(drops_arrived(&t, &n)), ULL(t.delivered),
	       ULL(drops_sum(n.in, DROPS_IN)));
	for (i = 0; i < k; i++)
		if (i < IN_ALWAYS || nm[i].v)
			printf("%s%s %llu", i ? ", " : "", nm[i].name, ULL(nm[i].v));
	printf("): %s\n", v & UCM_DP_V_FORWARD ? "VIOLATED" : "holds");
	if (d->c.two_way)
		printf("conservation, way back: read %llu = sent %llu + drops %llu (unsendable, no next hop, the tun's own link or stopped %llu, channel_full %llu, tx_full %llu, tx_bad %llu) + left in the channel %llu; completed %llu of %llu frames (%llu packets in several) (%.1f%% straight into the cache): %s\n",
		       ULL(t.back_read), ULL(t.tx),
		       ULL(t.back_drop_bad + t.back_channel_full + t.tx_drops),
		       ULL(t.back_drop_bad), ULL(t.back_channel_full), ULL(n.back[5]),
		       ULL(n.back[8]),
		       ULL(t.back_channel_sent - t.back_channel_collected),
		       ULL(t.tx_completed), ULL(t.tx + t.tx_chain_more), ULL(t.tx_chains),
		       t.tx_completed ? 100.0 * t.tx_comp_direct / t.tx_completed : 0,
		       v & UCM_DP_V_BACK ? "VIOLATED" : "holds");
}

