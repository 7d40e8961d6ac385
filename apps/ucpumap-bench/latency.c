// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the latency rows.
 *
 * A probe is a UDP datagram from the generator's namespace to the sink
 * address, answered at once by a responder in the DUT's namespace (this
 * process, a thread): through the kernel's cpumap (latency-kernel-cpumap),
 * through ucpumapd one way with the answer by the kernel's own path
 * (latency-cpumap), or both ways through ucpumapd (latency-two-way, the
 * answer routed into the tun). The round trip is taken from the kernel's
 * software timestamps on the generator's socket (SO_TIMESTAMPING): the
 * request's as veth sends it, the answer's as it is received. Neither
 * side's scheduling of the prober itself is in the figure, only the
 * path's, and the responder's wake-up: the responder runs where the
 * scheduler puts it, as an application does, or in the -pinned rows on
 * the first worker CPU (RESPOND_CPU_WHY). Beside it, alone, the round
 * trip as the prober sees it, on the timestamps' clock: from before its
 * send() to after the read of the answer, as sockperf's client times
 * it; the difference per probe is the prober's own part (the send call
 * up to veth's transmit, then its wake-up and read after the answer's
 * arrival), which sets the two tools' figures apart (report.c).
 *
 * One probe in flight at a time, PROBE_RATE a second, for --seconds:
 * alone, then under a background load of half the capacity the same
 * round measured (ucpumap-gen at --rate for a second, what reached the
 * sink), both directions' percentiles LAT_P. A probe unanswered within
 * PROBE_WAIT_MS is lost, counted, and in the percentiles as LAT_LOST_US:
 * a tail of the answered ones alone would read low where probes were
 * lost. The slots its wait ran past are skipped (the rate stays, no
 * burst after a loss), and PROBE_LOST_RUN lost in a row fail the round.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ucpumap/api.h"
#include "ucpumap/xdp.h"
#include "datapath.h"

#define PROBE_PORT	9002
#define PROBE_RATE	1000	/* a probe per ms: the low rate */
#define PROBE_WAIT_MS	((int)(LAT_LOST_US / 1000))	/* an answer waited for at most */
#define PROBE_WARMUP	20	/* first probes, not counted: ARP, caches */
/* Lost in a row, the path is taken for down: the row fails then, not
 * after 100 ms a probe for the rest of the round. */
#define PROBE_LOST_RUN	20
/* The capacity probe before the loaded run: long enough for a rate. */
#define CAPACITY_S	1.0

/* ---- the responder: the DUT's end ------------------------------------------ */

/*
 * RESPOND_CPU_WHY: in the -pinned rows the responder runs on the first
 * worker CPU. Left to the scheduler, its CPU is a coin flip that decides
 * a row's figure: the kernel's cpumap kthread is a per-CPU kthread, and
 * select_idle_sibling() stacks a task it wakes on its own CPU only when
 * the task last ran there; a responder that once ran on the prober's CPU
 * stays there, and every answer then waits for an idle vCPU's wake-up
 * (about 40 us here). Unpinned, the same row read 84 to 89 us a round
 * in two runs and 51 to 55 us in two others (docs/BENCHMARKING.md, "Where
 * the threads run").
 * Pinned where the kthread puts it, the kernel's row is at its best and
 * every row wakes its responder the same way: from the worker's CPU. An
 * application is not pinned so, which is why the rows without -pinned
 * leave it to the scheduler and take more rounds to read.
 */

struct responder {
	pthread_t thr;
	atomic_int stop;
	int fd;
	int cpu;		/* the first worker CPU (RESPOND_CPU_WHY), or -1 */
	int placed;		/* lat_placement() in the thread, read after the join */
	bool started;
};

static void *responder_main(void *arg)
{
	struct responder *rs = arg;
	struct pollfd p = { .fd = rs->fd, .events = POLLIN };
	struct sockaddr_in from;
	socklen_t fl;
	char buf[64];
	ssize_t n;

	if (rs->cpu >= 0 && pin_self(rs->cpu))	/* the figure would be the scheduler's */
		fprintf(stderr, "datapath: cannot pin the latency responder to CPU %d\n",
			rs->cpu);
	rs->placed = lat_placement(0);
	while (!atomic_load_explicit(&rs->stop, memory_order_relaxed)) {
		if (poll(&p, 1, 50) <= 0)
			continue;
		fl = sizeof(from);
		n = recvfrom(rs->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n > 0)
			sendto(rs->fd, buf, n, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

/* In this thread's namespace: the DUT's; its thread on @cpu (-1: where the
 * scheduler puts it). */
static int responder_start(struct responder *rs, int cpu)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PROBE_PORT) };

	rs->cpu = cpu;
	rs->placed = LAT_NOT_PLACED;
	rs->fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (rs->fd < 0 || bind(rs->fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "datapath: the latency responder: %s\n", strerror(errno));
		if (rs->fd >= 0)
			close(rs->fd);
		return -1;
	}
	rs->started = !pthread_create(&rs->thr, NULL, responder_main, rs);
	if (rs->started)	/* names scripts/latency-hops.sh looks for */
		pthread_setname_np(rs->thr, "ucmb-respond");
	return rs->started ? 0 : -1;
}

static void responder_stop(struct responder *rs)
{
	if (!rs->started)
		return;
	atomic_store(&rs->stop, 1);
	pthread_join(rs->thr, NULL);
	close(rs->fd);
}

/* ---- the prober: the generator's end ---------------------------------------- */

struct prober {
	int ns_fd;		/* the generator's namespace */
	const char *sink_ip;	/* the responder's address */
	double seconds;		/* how long, after the warm-up */
	double *rtt_us;		/* the answered probes' round trips */
	double *app_us;		/* the same, the prober's send call to its read */
	double *own_us;		/* their difference, the prober's own part */
	uint32_t n, n_app, sent;
	int err;
};

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

/* The software timestamp in @m's control messages, or 0. */
static uint64_t msg_ts(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING)
			return ts_ns(&((struct scm_timestamping *)CMSG_DATA(c))->ts[0]);
	return 0;
}

/* Read the error queue dry; the send timestamp of the probe the socket
 * counted @key into *@tx when it is there. Reading it as it comes matters:
 * a timestamp left queued makes poll() report POLLERR at once, and the
 * prober would spin on its CPU (where veth's softirq and, in ucpumapd's
 * rows, the RX thread run) until the answer came. */
static void tx_drain(int fd, uint32_t key, uint64_t *tx)
{
	char ctl[256];
	struct msghdr m;
	uint64_t t;

	for (;;) {
		memset(&m, 0, sizeof(m));
		m.msg_control = ctl;
		m.msg_controllen = sizeof(ctl);
		if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		t = msg_ts(&m);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct sock_extended_err *e = (void *)CMSG_DATA(c);

			if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) &&
			    e->ee_origin == SO_EE_ORIGIN_TIMESTAMPING && e->ee_data == key)
				*tx = t;
		}
	}
}

/* CLOCK_REALTIME, the clock of the sockets' software timestamps, ns. */
static uint64_t real_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return ts_ns(&t);
}

/* Wait, asleep, for probe @id's send timestamp (the socket's count @key)
 * and its answer's receive timestamp; either left 0 when it did not come
 * within PROBE_WAIT_MS. *@read: when the answer's read returned. */
static void probe_wait(int fd, uint32_t id, uint32_t key, uint64_t *tx, uint64_t *rx,
		       uint64_t *read)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	double end = now_sec() + PROBE_WAIT_MS / 1000.0;
	char ctl[256], buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr m;
	uint32_t got;
	int left;

	*tx = *rx = *read = 0;
	while (!(*tx && *rx) && (left = (int)((end - now_sec()) * 1000)) > 0) {
		if (poll(&p, 1, left) <= 0)
			continue;
		if (p.revents & POLLERR)
			tx_drain(fd, key, tx);
		if (!(p.revents & POLLIN))
			continue;
		memset(&m, 0, sizeof(m));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = ctl;
		m.msg_controllen = sizeof(ctl);
		if (recvmsg(fd, &m, MSG_DONTWAIT) < (ssize_t)sizeof(got))
			continue;
		memcpy(&got, buf, sizeof(got));
		if (got == id) {	/* else a late answer to a lost one */
			*read = real_ns();
			*rx = msg_ts(&m);
		}
	}
}

static int prober_socket(const struct prober *pr)
{
	int flags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		    SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
		    SOF_TIMESTAMPING_OPT_TSONLY;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PROBE_PORT) };
	int fd;

	if (setns(pr->ns_fd, CLONE_NEWNET))	/* this thread only */
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, pr->sink_ip, &a.sin_addr);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void *prober_main(void *arg)
{
	struct prober *pr = arg;
	uint32_t total = PROBE_WARMUP + (uint32_t)(pr->seconds * PROBE_RATE);
	struct timespec next;
	uint32_t key = 0;	/* the socket's own count of sends (OPT_ID) */
	uint32_t lost_run = 0, tried = 0;
	uint64_t tx, rx, t0, t1;
	int fd;

	pin_self(0);
	fd = prober_socket(pr);
	if (fd < 0) {
		pr->err = errno ? errno : EIO;
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (uint32_t id = 0; id < total && !bench_stopped(); id++) {
		/* The warm-up is probes, not slots: a slot may be skipped. */
		bool counted = tried++ >= PROBE_WARMUP;

		t0 = real_ns();
		tx = rx = 0;
		if (send(fd, &id, sizeof(id), 0) == sizeof(id)) {
			probe_wait(fd, id, key++, &tx, &rx, &t1);
		} else {	/* lost; an ICMP error pends on the socket */
			int e;

			getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &(socklen_t){ sizeof(e) });
		}
		if (counted) {
			pr->sent++;
			if (rx && tx && rx > tx) {
				pr->rtt_us[pr->n++] = (rx - tx) / 1000.0;
				/* out of order: the clock stepped between */
				if (t1 > rx && tx > t0) {
					pr->app_us[pr->n_app] = (t1 - t0) / 1000.0;
					pr->own_us[pr->n_app++] = (t1 - rx + tx - t0) / 1000.0;
				}
			}
		}
		/* After the warm-up: ARP and a next hop may take a few. */
		lost_run = rx && tx ? 0 : lost_run + counted;
		if (lost_run == PROBE_LOST_RUN) {
			pr->err = ETIMEDOUT;
			break;
		}
		/* The next one a period after this one was due. The slots a
		 * lost one's wait ran past are skipped, not sent at once: a
		 * burst would time the path under a load no other row has. */
		id += sleep_next_slot(&next, 1000000000 / PROBE_RATE);
	}
	close(fd);
	return NULL;
}

/* Probe for @seconds; the percentiles LAT_P of the round trips into @p,
 * and when @app is not NULL those of the prober's view into it and the
 * p50 and p99 of its own part into @own (-1: no probe timed so). */
static int probe(const struct bench_run *br, double seconds, double p[4], double *sent,
		 double *answered, double app[4], double own[2])
{
	static const double q[4] = LAT_P, q_own[2] = { 0.5, 0.99 };
	struct prober pr = { .ns_fd = br->topo.gen_ns_fd, .sink_ip = br->cfg.sink_ip,
			     .seconds = seconds };
	size_t n = (size_t)(seconds * PROBE_RATE) + 1;
	pthread_t t;
	int err = -1;

	pr.rtt_us = calloc(3 * n, sizeof(double));
	if (!pr.rtt_us)
		return -1;
	pr.app_us = pr.rtt_us + n;
	pr.own_us = pr.app_us + n;
	if (pthread_create(&t, NULL, prober_main, &pr))
		goto out;
	pthread_setname_np(t, "ucmb-prober");
	pthread_join(t, NULL);
	*sent = pr.sent;
	*answered = pr.n;
	if (pr.err || !pr.n) {
		if (pr.err == ETIMEDOUT)
			fprintf(stderr, "datapath: latency probes: %d lost in a row: the path does not answer\n",
				PROBE_LOST_RUN);
		else
			fprintf(stderr, "datapath: latency probes: %s\n",
				pr.err ? strerror(pr.err) : "none answered");
		goto out;
	}
	/* The lost ones as at least the wait: pr.sent <= n. */
	for (size_t i = pr.n; i < (size_t)pr.sent; i++)
		pr.rtt_us[i] = LAT_LOST_US;
	quantiles(pr.rtt_us, pr.sent, q, 4, p);
	if (app && pr.n_app) {
		quantiles(pr.app_us, pr.n_app, q, 4, app);
		quantiles(pr.own_us, pr.n_app, q_own, 2, own);
	} else if (app) {
		app[0] = app[1] = app[2] = app[3] = own[0] = own[1] = -1;
	}
	err = 0;
out:
	free(pr.rtt_us);
	return err;
}

/* ---- the rows ------------------------------------------------------------------------ */

/* ucpumapd's own view of the probes alone: each stage's median and 99th
 * percentile bucket bounds, from the statistics line SIGUSR1 makes (the histograms hold
 * nothing else yet). */
static void daemon_stages(struct row *r, int round, const struct daemon_run *d)
{
	static const char *const keys[3] = LAT_STAGES;
	double v[UCM_LAT_BUCKETS];
	uint64_t h[UCM_LAT_BUCKETS];
	char *line = daemon_json_line(d);
	uint32_t b;

	/* Shown where every round read them (a missing round's would be 0). */
	r->have_stage = (round == 0 || r->have_stage) && line;
	if (!line)
		return;
	for (int k = 0; k < 3; k++) {
		if (json_arr_field(line, keys[k], v, UCM_LAT_BUCKETS) != UCM_LAT_BUCKETS) {
			r->have_stage = false;
			free(line);
			return;
		}
		for (b = 0; b < UCM_LAT_BUCKETS; b++)
			h[b] = (uint64_t)v[b];
		for (int q = 0; q < 2; q++) {	/* the median, the 99th */
			b = ucm_lat_quantile(h, q ? 0.99 : 0.5);
			/* None: 0; the last bucket, which has no bound: its
			 * lower one. */
			r->stage[round][k + 3 * q] = b == UCM_LAT_BUCKETS ? 0 :
				ucm_lat_bucket_le_ns(b < UCM_LAT_BUCKETS - 1 ? b : b - 1) / 1000.0;
		}
	}
	free(line);
}

/* ---- what a phase cost ------------------------------------------------------------ */

/* The start of a phase: the two CPUs' counters, and ucpumapd's own from a
 * statistics line (its time, its RX threads' CPU time, its workers'
 * sleep). */
struct cost_mark {
	struct busy_mark c0, cw;
	double t, rx_ns, sleep_ns;
	bool daemon;
};

static bool daemon_cost(const struct daemon_run *d, double *t, double *rx_ns, double *sleep_ns)
{
	char *line = d ? daemon_json_line(d) : NULL;
	bool ok = line && !json_u64_field(line, "time", t) &&
		  !json_u64_field(line, "rx_cpu_ns", rx_ns) &&
		  (json_sum_field(line, "sleep_ns", sleep_ns), true);

	free(line);
	return ok;
}

static void cost_begin(const struct bench_run *br, const struct daemon_run *d,
		       struct cost_mark *m)
{
	busy_mark(&m->c0, 0);
	busy_mark(&m->cw, br->cfg.wcpu[0]);
	m->daemon = daemon_cost(d, &m->t, &m->rx_ns, &m->sleep_ns);
}

/* Phase @ph of round @round ends: its cost into @r (COST_*). */
static void cost_end(const struct bench_run *br, const struct daemon_run *d,
		     const struct cost_mark *m, struct row *r, int round, int ph)
{
	double *c = r->cost[round][ph], t, rx_ns, sleep_ns;
	int nw = row_is_pass(r->def) ? 0 : br->cfg.nwcpu;

	c[COST_RX] = c[COST_WORKERS] = -1;
	if (busy_since(&m->c0, &c[COST_CPU0]) || busy_since(&m->cw, &c[COST_WCPU])) {
		r->have_cost = false;
		return;
	}
	r->have_cost = round == 0 && ph == 0 ? true : r->have_cost;
	if (!m->daemon || !daemon_cost(d, &t, &rx_ns, &sleep_ns) || t <= m->t)
		return;
	/* one RX thread on veth: its queue */
	c[COST_RX] = (rx_ns - m->rx_ns) / 1e9 / (t - m->t);
	if (nw)
		c[COST_WORKERS] = 1 - (sleep_ns - m->sleep_ns) / 1e9 / (t - m->t) / nw;
}

/* Idle probes, the capacity, then probes under half of it. */
static int latency_round(struct bench_run *br, struct row *r, int round,
			 const struct daemon_run *d)
{
	const struct bench_cfg *cfg = &br->cfg;
	struct bench_topo *t = &br->topo;
	char out[GEN_OUT], tag[64];
	struct cost_mark m;
	uint64_t d0;
	pid_t g;
	int rc;

	cost_begin(br, d, &m);
	if (probe(br, cfg->seconds, r->lat[round], &r->probes[round][0], &r->answered[round][0],
		  r->lat_app[round], r->lat_own[round]))
		return -1;
	r->have_app = true;
	cost_end(br, d, &m, r, round, 0);
	if (d)
		daemon_stages(r, round, d);
	snprintf(tag, sizeof(tag), "%s-capacity", r->def->name);
	d0 = delivered_now(t);
	/* At full speed, --rate or not: the load is half of what the
	 * path carries, not of a pace the throughput rows were given. */
	g = gen_start_at(br, tag, 0, 0, CAPACITY_S, out);
	if (gen_wait(br, g, tag, out, CAPACITY_S + 10))
		return -1;
	sleep_sec(0.2);
	r->capacity[round] = (delivered_now(t) - d0) / CAPACITY_S;
	r->load_pps[round] = r->capacity[round] / 2;
	if (r->load_pps[round] < 1) {
		fprintf(stderr, "datapath: %s: its capacity run delivered nothing in %g s (%.0f sent): no load to measure under\n",
			r->def->name, CAPACITY_S, gen_total(out));
		return -1;
	}
	r->have_load = true;
	snprintf(tag, sizeof(tag), "%s-load", r->def->name);
	g = gen_start_at(br, tag, 0, r->load_pps[round], cfg->seconds + 1, out);
	sleep_sec(0.5);
	cost_begin(br, d, &m);
	rc = probe(br, cfg->seconds, r->lat_load[round], &r->probes[round][1],
		   &r->answered[round][1], NULL, NULL);
	cost_end(br, d, &m, r, round, 1);
	if (gen_wait(br, g, tag, out, cfg->seconds + 10))
		rc = -1;
	return rc;
}

int lat_placement(pid_t pid)
{
	cpu_set_t set;

	if (cpu_affinity(pid, &set) || CPU_COUNT(&set) != 1)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return -1;
}

int lat_path_up(struct bench_run *br, const struct row *r, bool kernel, struct lat_path *p)
{
	*p = (struct lat_path){ .d = { .a_tun = -1, .b_tun = -1 } };
	if (kernel) {
		p->x = kernel_cpumap_attach(&br->cfg, if_nametoindex(br->cfg.ifname));
		if (!p->x)
			return -1;
	} else if (daemon_start(br, r, &p->d)) {
		return -1;
	}
	sleep_sec(0.3);
	return 0;
}

int lat_path_down(struct bench_run *br, const struct row *r, struct lat_path *p, int rc)
{
	if (p->x) {
		ucm_xdp__detach(p->x);
		ucm_xdp__destroy(p->x);
		return rc;
	}
	if (daemon_stop(br, r, &p->d))
		rc = -1;
	return rc ?: p->d.rc;
}

int row_latency(struct bench_run *br, struct row *r, int round)
{
	struct responder rs = {};
	struct lat_path p;
	int rc;

	if (lat_path_up(br, r, row_kind(r) == K_LAT_KERNEL, &p))
		return -1;
	rc = responder_start(&rs, r->def->pin_responder ? br->cfg.wcpu[0] : -1) ?:
	     latency_round(br, r, round, p.x ? NULL : &p.d);
	responder_stop(&rs);
	if (rs.placed != LAT_NOT_PLACED)
		r->responder_cpu = rs.placed;
	r->dst[round] = r->lat[round][0];
	return lat_path_down(br, r, &p, rc);
}

const char *skip_latency(const struct bench_cfg *cfg)
{
	if (cfg->dev)
		return "needs the prober on the far side of IFACE: veth only";
	if (cfg->v6)
		return "the probes are IPv4 only";
	return NULL;
}

/* latency-cpumap-spin and -poll: ucpumapd refuses a spin or --poll unless
 * each polling thread has a CPU of its own and one is left over; said
 * here instead of failing the row. */
const char *skip_latency_poll(const struct bench_cfg *cfg)
{
	const char *why = skip_latency(cfg);

	return why ? why : bench_poll_refused(cfg);
}
