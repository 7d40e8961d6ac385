// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucm_dp's statistics: the getters of the parts' own counters, the
 * totals (ucm_dp__stats()) and their equations, and the final counters
 * that ucm_dp__stop() leaves. Every reading holds dp->lock: it reads the
 * live parts until UCM_DP_S_STOPPED, the final counters after
 * (dp_internal.h).
 */
#include <pthread.h>
#include <string.h>

#include "dp_internal.h"

/* The getters' lock is not the datapath's state: a const getter takes it. */
static pthread_mutex_t *dp_lock(const struct ucm_dp *dp)
{
	return (pthread_mutex_t *)&dp->lock;
}

static int check_qw(const struct ucm_dp *dp, uint32_t q, uint32_t w)
{
	return !dp || q >= dp->c.nqueues || w >= dp->c.nworkers ? -EINVAL : 0;
}

/* The readings, under dp->lock: the live parts, or the final counters.
 * Each fills the library's own struct, every byte of it. */
static void read_xsk(const struct ucm_dp *dp, uint32_t q, struct ucm_xsk_stats *xs)
{
	memset(xs, 0, sizeof(*xs));
	if (dp_stopped(dp))
		*xs = dp->fin->xs[q];
	else
		ucm_xsk_queue__stats(dp->rx[q].q, xs, sizeof(*xs));
}

static void read_pool(const struct ucm_dp *dp, uint32_t q, struct ucm_pool_stats *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (dp_stopped(dp))
		*ps = dp->fin->ps[q];
	else
		ucm_pool__stats(ucm_xsk_queue__pool(dp->rx[q].q), ps,
				    sizeof(*ps));
}

static int read_enqueue(const struct ucm_dp *dp, uint32_t q, uint32_t w,
			struct ucm_cpumap_enqueue_stats *es)
{
	struct ucm_cpumap_producer *prod;

	memset(es, 0, sizeof(*es));
	if (dp_stopped(dp)) {
		if (!dp->fin->es_ok[q * dp->c.nworkers + w])
			return -ENOENT;
		*es = dp->fin->es[q * dp->c.nworkers + w];
		return 0;
	}
	prod = dp_rx_prod(&dp->rx[q]);
	if (!prod || ucm_cpumap_producer__enqueue_stats(prod, w, es, sizeof(*es)))
		return -ENOENT;
	return 0;
}

static void read_worker(const struct ucm_dp *dp, uint32_t w,
			struct ucm_cpumap_worker_stats *ws)
{
	memset(ws, 0, sizeof(*ws));
	if (dp_stopped(dp))
		*ws = dp->fin->ws[w];
	else
		ucm_cpumap__worker_stats(dp->map, w, ws, sizeof(*ws));
}

/* Zero with a sink of one's own (no tun). */
static void read_tun(const struct ucm_dp *dp, uint32_t w, struct ucm_tun_stats *ts)
{
	memset(ts, 0, sizeof(*ts));
	if (dp_stopped(dp))
		*ts = dp->fin->ts[w];
	else if (dp->tun)
		ucm_tun__worker_stats(dp->tun, w, ts, sizeof(*ts));
}

int ucm_dp_read_back(const struct ucm_dp *dp, uint32_t w,
		    struct ucm_tun_back_stats *rs)
{
	memset(rs, 0, sizeof(*rs));
	if (!dp_has_channels(dp->c.flags))
		return -ENOENT;
	if (dp_stopped(dp))
		*rs = dp->fin->rs[w];
	else if (dp->c.flags & UCM_DP_F_TWO_WAY)
		ucm_tun__back_stats(dp->tun, w, rs, sizeof(*rs));
	return 0;
}

static int read_txq(const struct ucm_dp *dp, uint32_t w, struct ucm_txq_stats *qs)
{
	memset(qs, 0, sizeof(*qs));
	if (!dp_has_channels(dp->c.flags))
		return -ENOENT;
	if (dp_stopped(dp))
		*qs = dp->fin->qs[w];
	else
		ucm_txq__stats(dp->txq[w], qs, sizeof(*qs));
	return 0;
}

/*
 * The getters: check, read under dp->lock into the library's own struct,
 * copy out to the caller's @st of @sz bytes (zeros when not there).
 */
#define DP_GETTER(name, TYPE, q, w, read)				\
int ucm_dp__##name##_stats(const struct ucm_dp *dp, uint32_t idx,	\
			   struct TYPE *st, size_t sz)			\
{									\
	struct TYPE o;							\
	int err;							\
									\
	if (check_qw(dp, q, w) || !st || !sz)				\
		return ucm_err(-EINVAL);				\
	pthread_mutex_lock(dp_lock(dp));				\
	err = read;							\
	pthread_mutex_unlock(dp_lock(dp));				\
	ucm_stats_out(st, sz, &o, sizeof(o));				\
	return ucm_err(err);						\
}

DP_GETTER(xsk, ucm_xsk_stats, idx, 0, (read_xsk(dp, idx, &o), 0))
DP_GETTER(pool, ucm_pool_stats, idx, 0, (read_pool(dp, idx, &o), 0))
DP_GETTER(worker, ucm_cpumap_worker_stats, 0, idx, (read_worker(dp, idx, &o), 0))
DP_GETTER(tun, ucm_tun_stats, 0, idx, (read_tun(dp, idx, &o), 0))
DP_GETTER(back, ucm_tun_back_stats, 0, idx, ucm_dp_read_back(dp, idx, &o))
DP_GETTER(txq, ucm_txq_stats, 0, idx, read_txq(dp, idx, &o))

/* @a less @b, 0 below: packets as one counter less another, which a live
 * reading can catch mid-batch (the later frames of a packet counted, the
 * batch's descriptors not yet; a packet the sink is still on dropped or
 * sent, not yet processed), a few tens low for a moment, never wrapped. */
static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The 0.2.0 name (dp.h). */
int ucm_dp__rev_stats(const struct ucm_dp *dp, uint32_t w,
		      struct ucm_tun_back_stats *st, size_t sz)
{
	return ucm_dp__back_stats(dp, w, st, sz);
}

int ucm_dp__enqueue_stats(const struct ucm_dp *dp, uint32_t q, uint32_t w,
			  struct ucm_cpumap_enqueue_stats *st, size_t sz)
{
	struct ucm_cpumap_enqueue_stats o;
	int err;

	if (check_qw(dp, q, w) || !st || !sz)
		return ucm_err(-EINVAL);
	pthread_mutex_lock(dp_lock(dp));
	err = read_enqueue(dp, q, w, &o);
	pthread_mutex_unlock(dp_lock(dp));
	ucm_stats_out(st, sz, &o, sizeof(o));
	return ucm_err(err);
}

static void add_queue(const struct ucm_dp *dp, uint32_t q, struct ucm_dp_stats *t)
{
	struct ucm_cpumap_enqueue_stats es;
	struct ucm_xsk_stats xs;
	uint32_t w;

	read_xsk(dp, q, &xs);
	t->rx += xs.rx_packets;
	t->rx_chains += xs.rx_chains;
	t->rx_chain_drops += xs.rx_chain_long + xs.rx_chain_cut + xs.rx_chain_bad +
			     xs.rx_chain_nosg;
	t->rx_bad_desc += xs.rx_bad_desc;
	t->rx_steer_err += xs.rx_steer_err;
	/* The queue counts TX descriptors, a frame each; the totals count
	 * packets in tx, frames in tx_completed and tx_pending. */
	t->tx += xs.tx_packets;
	t->tx_chains += xs.tx_chains;
	t->tx_chain_more += xs.tx_chain_more;
	t->tx_drops += xs.tx_ring_full + xs.tx_bad_desc;
	t->tx_completed += xs.tx_completed;
	t->tx_comp_direct += xs.tx_comp_direct;
	t->tx_comp_bulks += xs.tx_comp_bulks;
	/* The RX thread's own counters say the same; the TX ring's
	 * positions are read once it has stopped (ucm_dp_snapshot()). */
	t->tx_pending += xs.tx - xs.tx_completed;
	for (w = 0; w < UCM_LAT_BUCKETS; w++)
		t->rx_hist[w] += xs.rx_hist[w];
	t->rx_lat_ns += xs.rx_lat_ns;
	t->rx_sleeps += xs.sleeps;
	t->rx_wake_rx += xs.wake_rx;
	t->rx_wake_channel += xs.wake_tx;
	t->rx_wake_stop += xs.wake_fd;
	t->rx_wake_timeout += xs.wake_timeout;
	for (w = 0; w < dp->c.nworkers; w++) {
		if (read_enqueue(dp, q, w, &es))
			continue;
		t->enqueue_processed += es.processed;
		t->enqueue_drops += es.drops;
		t->enqueue_shed += es.shed;
		t->enqueue_events += es.events;
	}
}

static void add_worker(const struct ucm_dp *dp, uint32_t w, struct ucm_dp_stats *t)
{
	struct ucm_cpumap_worker_stats ws;
	struct ucm_tun_back_stats rs;
	struct ucm_tun_stats ts;
	struct ucm_txq_stats qs;
	uint64_t bad;
	int r;

	read_worker(dp, w, &ws);
	read_tun(dp, w, &ts);
	t->worker_processed += ws.processed;
	t->verdict_tx += ws.tx;
	t->worker_drops += ws.drops;
	t->worker_sleep_ns += ws.sleep_ns;
	for (r = 0; r < UCM_DROP__MAX; r++)
		t->worker_drop_reason[r] += ws.drop_reason[r];
	for (r = 0; r < UCM_LAT_BUCKETS; r++) {
		t->wait_hist[r] += ws.wait_hist[r];
		t->sink_hist[r] += ws.sink_hist[r];
	}
	t->wait_ns += ws.wait_ns;
	t->sink_ns += ws.sink_ns;
	t->prewakes += ws.prewakes;
	t->tun_packets += ts.packets;
	t->tun_non_ip += ts.non_ip;
	t->tun_err_eio += ts.err_eio;
	t->tun_err_ebadfd += ts.err_ebadfd;
	t->tun_err_eagain += ts.err_eagain;
	t->tun_err_other += ts.err_other;
	t->tun_super += ts.super;
	t->tun_super_segs += ts.super_segs;
	t->tun_csum_partial += ts.csum_partial;
	if (ucm_dp_read_back(dp, w, &rs) || read_txq(dp, w, &qs))
		return;
	bad = rs.drop_offload + rs.drop_too_big + rs.drop_non_ip + rs.drop_no_neigh +
	      rs.drop_link_local + rs.drop_stopped;
	t->back_read += rs.packets + bad;
	t->back_drop_bad += bad;
	t->back_read_err += rs.err;
	t->back_channel_sent += qs.sent;
	t->back_channel_full += qs.send_full;
	t->back_channel_waits += rs.channel_waits;
	t->back_super += rs.super_packets;
	t->back_segments += rs.segments;
	t->back_csum_completed += rs.csum_completed;
	t->back_csum_offloaded += rs.csum_offloaded;
	t->back_channel_collected += qs.collected;
}

/* The totals of the live parts, under dp->lock. */
static void gather(const struct ucm_dp *dp, struct ucm_dp_stats *t)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < dp->c.nqueues; i++)
		add_queue(dp, i, t);
	for (i = 0; i < dp->c.nworkers; i++)
		add_worker(dp, i, t);
	/* A sink of one's own took what the workers processed and neither
	 * dropped nor sent back out. */
	t->delivered = dp->c.sink ? sub0(t->worker_processed, t->worker_drops + t->verdict_tx) :
				    t->tun_packets;
	t->xdp_pass_err = dp->xdp ? ucm_xdp__pass_stats(dp->xdp, t->xdp_pass,
							 UCM_STEER_PASS_SLOTS) : 0;
	if (t->xdp_pass_err)
		memset(t->xdp_pass, 0, sizeof(t->xdp_pass));
}

int ucm_dp__stats(const struct ucm_dp *dp, struct ucm_dp_stats *st, size_t sz)
{
	struct ucm_dp_stats t;

	if (!dp || !st || !sz)
		return ucm_err(-EINVAL);
	pthread_mutex_lock(dp_lock(dp));
	if (dp_stopped(dp))
		t = dp->fin->tot;
	else
		gather(dp, &t);
	t.state = dp->state;
	pthread_mutex_unlock(dp_lock(dp));
	ucm_stats_out(st, sz, &t, sizeof(t));
	return 0;
}

/* The size a caller's struct has when it knows @field. */
#define STATS_HAS(field)	(offsetof(struct ucm_dp_stats, field) + \
				 sizeof(((struct ucm_dp_stats *)0)->field))

uint32_t ucm_dp_stats__violations(const struct ucm_dp_stats *st, size_t sz)
{
	struct ucm_dp_stats t = {};
	uint64_t drops;
	uint32_t v = 0;

	/* A caller's older, smaller struct: the fields it lacks read 0
	 * (none at all: nothing to violate), and an equation that needs one
	 * it lacks is not asked (it could not hold where that one counts). */
	if (st)
		memcpy(&t, st, sz < sizeof(t) ? sz : sizeof(t));
	drops = t.rx_bad_desc + t.rx_chain_drops + t.rx_steer_err + t.enqueue_drops +
		t.worker_drops;
	if (t.rx != t.delivered + drops + t.verdict_tx && sz >= STATS_HAS(rx_chain_drops))
		v |= UCM_DP_V_FORWARD;
	/* Read from the tun + sent by the verdict = handed to the channels +
	 * dropped there; handed on = sent + channel full; sent = collected +
	 * left in the channel (brought home at stop); collected = on the TX
	 * ring + ring full, in packets; on it = completed + pending, in
	 * frames (a packet of several has tx_chain_more more). */
	if (t.back_read + t.verdict_tx != t.back_channel_sent + t.back_channel_full +
					  t.back_drop_bad ||
	    t.back_channel_collected != t.tx + t.tx_drops ||
	    (t.tx + t.tx_chain_more != t.tx_completed + t.tx_pending &&
	     sz >= STATS_HAS(tx_chain_more)))
		v |= UCM_DP_V_BACK;
	return v;
}

/* The counters, as the stopped parts leave them; under dp->lock. */
void ucm_dp_snapshot(struct ucm_dp *dp)
{
	struct dp_final *f = dp->fin;
	uint32_t q, w, nw = dp->c.nworkers;

	for (q = 0; q < dp->c.nqueues; q++) {
		read_xsk(dp, q, &f->xs[q]);
		read_pool(dp, q, &f->ps[q]);
		for (w = 0; w < nw; w++)
			f->es_ok[q * nw + w] =
				!read_enqueue(dp, q, w, &f->es[q * nw + w]);
	}
	for (w = 0; w < nw; w++) {
		read_worker(dp, w, &f->ws[w]);
		read_tun(dp, w, &f->ts[w]);
		ucm_dp_read_back(dp, w, &f->rs[w]);
		read_txq(dp, w, &f->qs[w]);
	}
	gather(dp, &f->tot);
	/* The RX threads are joined: what is on the TX path by the queues'
	 * own counts of frames posted and reaped, which the statistics must
	 * agree with (the audit at close then checks the counts against the
	 * frames the kernel gives back). */
	f->tot.tx_pending = 0;
	for (q = 0; q < dp->c.nqueues; q++)
		f->tot.tx_pending += ucm_xsk_queue__tx_pending(dp->rx[q].q);
}
