/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumap-bench datapath, its own header: the rows (rows.c: what each row
 * is and which kind; kinds.c and latency.c: how each kind of row runs),
 * ucpumapd as a row runs it (daemon.c), the topology and the processes
 * (topo.c), the traffic (traffic.c), the counters (measure.c), the results
 * (report.c), and the options and the run loop (datapath.c).
 *
 * These files share no variable: a struct bench_run, made by datapath.c,
 * holds the configuration, the topology and the rows, and is passed to
 * whatever needs them. The stop flag a signal sets is topo.c's own, read
 * through bench_stopped().
 */
#ifndef UCM_BENCH_DATAPATH_H
#define UCM_BENCH_DATAPATH_H

#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "opts.h"
#include "util.h"

#define MAX_ROUNDS	100
#define DPDK_TAP_MAC	"02:00:00:00:00:01"	/* testpmd's tap: its frames go to it */
#define BACK_PORT	9001	/* the way back's sink, in the generator's namespace */
#define GEN_IP4		"10.77.0.1"	/* vg's: the generator's, the way back's sink's */
#define BACK_BATCH	64	/* the way back's sender: datagrams per sendmmsg() */
#define TCP_PORT	5201	/* the TCP rows' iperf3 */

/* The generator's flows, in turn. */
#define DEFAULT_FLOWS	16
/* Few flows: each one's share of a 64-packet hold is 16 datagrams. */
#define FEW_FLOWS	4
/* Many flows: more than a hold's 64, so no two packets of a hand-over are
 * of one flow and nothing merges (the cost of trying). */
#define MANY_FLOWS	1024

/* ucpumapd's pool counters, summed over its queues (stats-json names, in
 * the order pool_key() gives them). */
#define NPOOL	7
const char *pool_key(int i);

struct bench_run;

/* ---- the configuration (datapath.c) -------------------------------------- */

struct bench_cfg {
	int rounds;
	double seconds;
	unsigned long rate;
	const char *json, *chart, *rowlist;
	char bindir[512];		/* ucpumap-gen's: this binary's folder */
	char daemon[600];		/* ucpumapd (bench_progs()) */
	const char *dev;		/* NULL: the veth topology */
	char ifname[IF_NAMESIZE];	/* where the rows run: vd or --dev */
	const char *sink_ip, *cpus, *queues, *rx_cpus;
	unsigned long sink_port;
	bool v6, zero_copy, busy_poll, poll;
	/* every selected row that starts ucpumapd runs it --pass (no workers) */
	bool pass_only;
	unsigned long spin_us;		/* ucpumapd's --spin-us (0: its default) */
	int wcpu[APP_MAX_CPUS], nwcpu;	/* the workers' CPUs */
	int q0, nq;			/* --queues as a range, for testpmd; nq 0: not one */
	int nqueues;			/* --queues' count: ucpumapd's RX threads (0: 1) */
	int rx_cpu[APP_MAX_CPUS], n_rx_cpu;	/* --rx-cpus, checked; ucpumapd takes the text */
	/* The veth pair's queues each way (0: the kernel's one), and the
	 * sink's sockets in one SO_REUSEPORT group (0: one socket): the
	 * scale bench's, N queues wide (scale.c). */
	int veth_queues, nsinks;
	/* --mtu: the veth pair's (0: its default); the UDP rows then send
	 * frames of mtu + 14 bytes (ucpumap-gen's packet engine past what a
	 * live frame holds) and the XDP programs are frags-aware */
	unsigned long mtu;
	/* --gen-engine: ucpumap-gen's --engine (GEN_ENGINE_AUTO: its own
	 * choice) */
	int gen_engine;
};

enum { GEN_ENGINE_AUTO, GEN_ENGINE_LIVE, GEN_ENGINE_LOOP, GEN_ENGINE_XSK, GEN_ENGINE_PACKET };
/* --gen-engine's names, for datapath's and scale's options */
#define GEN_ENGINE_NAMES						\
	{ "live", GEN_ENGINE_LIVE }, { "loop", GEN_ENGINE_LOOP },	\
	{ "xsk", GEN_ENGINE_XSK }, { "packet", GEN_ENGINE_PACKET }, { NULL }

/* ---- the rows (rows.c, kinds.c, latency.c) -------------------------------- */

enum row_kind { K_KPASS, K_KCPUMAP, K_DAEMON, K_TUN, K_DPDK, K_TWOWAY, K_TCP, K_TCP_KERNEL,
		K_TCP_KCPUMAP, K_TCP_BACK, K_UDP_BACK, K_LAT_KERNEL, K_LAT, K_LAT_TWOWAY,
		K_SOCKPERF_KERNEL, K_SOCKPERF, K_LAT_POLL };

struct row;

/* What a kind of row does: one entry of rows.c's kinds table. */
struct row_kind_ops {
	enum row_kind kind;
	/* one round of row @r (kinds.c, latency.c): 0, or -1 when it failed */
	int (*run)(struct bench_run *br, struct row *r, int round);
	/* why rows of this kind cannot run with @cfg here, or NULL */
	const char *(*skip)(const struct bench_cfg *cfg);
	bool tcp;		/* Gbit/s of one iperf3 stream, not pps at the UDP sink */
	bool latency;		/* round trips in us (latency.c), not a rate */
	bool count;		/* ucpumapd's own count against the kernel's */
	bool two_way;		/* both directions at once */
	/* the row's traffic goes the way back only: from the DUT's
	 * namespace through the tun and XSK TX to the generator's */
	bool back;
};

/* What a row is: one entry of rows.c's table. */
struct row_def {
	const char *name;
	const struct row_kind_ops *ops;	/* its kind */
	const char *flag;		/* ucpumapd's extra flag */
	const char *flag_arg;		/* and its value, or NULL */
	/* ucpumapd rows: coalescing on (the others run --no-coalesce: the
	 * path without it); the generator's flows (0: DEFAULT_FLOWS) */
	bool coalesce;
	int flows;
	/* ucpumapd's RX thread on the first --cpus CPU unless --rx-cpus:
	 * with --pass it is the worker (latency-pass) */
	bool rx_on_wcpu;
	/* latency rows: the responder pinned to the first --cpus CPU, beside
	 * the worker (the -pinned rows); else where the scheduler puts it,
	 * as an application runs */
	bool pin_responder;
};

/* A row of this run: selected or not, skipped or not, and what it measured. */
struct row {
	const struct row_def *def;
	bool on;
	const char *skipped;		/* why, when it did not run */
	char failed_why[64];		/* skipped's text once a round failed */
	double dst[MAX_ROUNDS];		/* delivered, pps */
	double sent[MAX_ROUNDS], src[MAX_ROUNDS];
	/* ucpumapd's delivered count and the kernel's over the same window: on
	 * veth ucpumapd's whole life; with --dev, where the outside generator's
	 * packets reach the stack directly before the program is attached and
	 * after it is gone, between two SIGUSR1 samples around the timed run */
	double daemon[MAX_ROUNDS], kernel_cmp[MAX_ROUNDS];
	double pool[NPOOL];		/* summed over the rounds */
	bool have_src, have_daemon, have_pool;
	/* two-way rows: the way back, pps; the share of completions that went
	 * straight into the cache, per round */
	double back_sent[MAX_ROUNDS], back_dst[MAX_ROUNDS], direct[MAX_ROUNDS];
	/* coalescing rows: datagrams per super-packet, and their share of
	 * what was written, per round */
	double segs[MAX_ROUNDS], merged[MAX_ROUNDS];
	bool have_segs;
	/* ucpumapd rows: the working share, everything on it, of the first
	 * worker CPU and of CPU 0 (on veth: the generator, the veth's
	 * receive, the RX thread) during the timed run: what a rate cost,
	 * and where it was bound */
	double busy[MAX_ROUNDS], busy_cpu0[MAX_ROUNDS];
	bool have_busy;
	/* latency rows (dst: the p50 at the probes' rate alone, us): the
	 * percentiles LAT_P of the round trip alone and under a background
	 * load at half the capacity measured in the same round, that load,
	 * and the probes sent and answered in each */
	double lat[MAX_ROUNDS][4], lat_load[MAX_ROUNDS][4];
	/* the bench's latency rows, alone: the round trip as the prober
	 * sees it (its send call to its read; LAT_P), and the p50 and p99
	 * of its own part in it; -1 where none was timed so */
	double lat_app[MAX_ROUNDS][4], lat_own[MAX_ROUNDS][2];
	bool have_app;
	/* the capacity and the loaded phase: none in sockperf's rows */
	double capacity[MAX_ROUNDS], load_pps[MAX_ROUNDS];
	bool have_load;
	double probes[MAX_ROUNDS][2], answered[MAX_ROUNDS][2];
	/* ucpumapd's latency rows: its own histograms over the probes alone,
	 * the bucket bound (us) of each stage's median (0-2, LAT_STAGES) and
	 * 99th percentile (3-5) */
	double stage[MAX_ROUNDS][6];
	bool have_stage;
	/* latency rows: what each phase (0 alone, 1 under load) cost, as
	 * busy shares (COST_*): CPU 0 and the first worker CPU, everything
	 * on them; ucpumapd's RX threads and workers, their own (-1: none,
	 * or not ucpumapd) */
	double cost[MAX_ROUNDS][2][4];
	bool have_cost;
	/* latency rows: the CPU the responder (sockperf's server) was
	 * confined to in the last round it was read, as it found its own
	 * affinity; -1: more than one, where the scheduler puts it;
	 * LAT_NOT_PLACED: never read (the row failed before) */
	int responder_cpu;
};
#define LAT_NOT_PLACED	(-2)
enum { COST_CPU0, COST_WCPU, COST_RX, COST_WORKERS };
/* ucpumapd's histograms (stats-json names): arrival to flush, flush to
 * dequeue, dequeue to the tun's completion. */
#define LAT_STAGES	{ "rx_hist", "wait_hist", "sink_hist" }
/* The latency rows' percentiles, over every probe sent: one not answered
 * within PROBE_WAIT_MS counts as LAT_LOST_US, a lower bound (shown so). */
#define LAT_P	{ 0.5, 0.9, 0.99, 0.999 }
#define LAT_LOST_US	100000.0

static inline enum row_kind row_kind(const struct row *r)
{
	return r->def->ops->kind;
}

/* A TCP row: Gbit/s of one iperf3 stream, not pps at the UDP sink. */
static inline bool row_is_tcp(const struct row *r)
{
	return r->def->ops->tcp;
}

/* Row @a's rate over row @b's, round by round (rows.c's gains table). */
struct row_gain {
	const char *a, *b, *note;
	bool back;		/* the way back's delivered rate, not dst rx */
	double target;		/* a's at least this times b's (the note's), or 0 */
};

/* rows.c */
int rows_select(struct bench_run *br, const char *list);
void rows_skip(struct bench_run *br);
struct row *row_by(const struct bench_run *br, const char *name);
bool row_kind_on(const struct bench_run *br, enum row_kind kind);
/* The gains to print, in order: *@n of them. */
const struct row_gain *row_gains(int *n);

/* How each kind runs (kinds.c). */
int row_kernel(struct bench_run *br, struct row *r, int round);
int row_tcp_kernel(struct bench_run *br, struct row *r, int round);
int row_daemon(struct bench_run *br, struct row *r, int round);
int row_tun(struct bench_run *br, struct row *r, int round);
int row_dpdk(struct bench_run *br, struct row *r, int round);
const char *skip_dpdk(const struct bench_cfg *cfg);
const char *skip_two_way(const struct bench_cfg *cfg);
const char *skip_tcp(const struct bench_cfg *cfg);
const char *skip_tcp_back(const struct bench_cfg *cfg);
struct ucm_xdp *kernel_cpumap_attach(const struct bench_cfg *cfg, int ifindex);

/* The latency rows (latency.c), and sockperf's beside them (sockperf.c). */
int row_latency(struct bench_run *br, struct row *r, int round);
const char *skip_latency(const struct bench_cfg *cfg);
const char *skip_latency_poll(const struct bench_cfg *cfg);
int row_sockperf(struct bench_run *br, struct row *r, int round);
const char *skip_sockperf(const struct bench_cfg *cfg);

/* ---- the topology and the processes (topo.c) ----------------------------- */

/* ucpumapd and a generator per queue (scale.c: up to SCALE_MAX_WIDTH). */
#define MAX_KIDS	20
/* The sink's sockets, one per queue at most. */
#define MAX_SINKS	16

/* The veth topology's namespaces and sinks, or with --dev the sink alone;
 * and the children running. */
struct bench_topo {
	char ns_gen[64], ns_dut[64], tmpdir[128];	/* "": none */
	char vd_mac[32], vg_mac[32];
	/* The sink (a bound UDP socket, never read while traffic runs) and the
	 * way back's, made in the generator's namespace; the namespaces' fds
	 * (-1: none). */
	int sink_fd[MAX_SINKS], nsinks, back_fd, gen_ns_fd, dut_ns_fd;
	pid_t kids[MAX_KIDS];		/* started and not reaped (0: free) */
};

/* SIGINT, SIGTERM and SIGHUP set the stop flag; bench_stopped() reads it,
 * bench_stop() sets it from the bench itself. */
void topo_signals(void);
bool bench_stopped(void);
void bench_stop(void);
/* Sleep @s seconds, or less when the stop flag is set meanwhile (a
 * signal): a row's window ends at Ctrl-C, not after it. */
void bench_sleep(double s);

/* --sink-ip and --sink-port with --dev: where the steering program would
 * leave the generator's datagrams to the kernel as the interface's own
 * (link_ctrl: link-local, multicast, the limited broadcast, DHCP's
 * ports), so that no row measures ucpumap. 0, or -1 after a message
 * naming @cmd. */
int sink_steered(const char *cmd, const char *ip, unsigned long port);
void topo_init(struct bench_topo *t);
int topo_tmpdir(struct bench_topo *t);
int topo_veth(struct bench_topo *t, const struct bench_cfg *cfg);
int topo_dev(struct bench_topo *t, const struct bench_cfg *cfg);
/* Stop the children, remove the namespaces and the temporary folder, and
 * with @dpdk testpmd's runtime folder too. */
void topo_cleanup(struct bench_topo *t, bool dpdk);
int set_sysctl(const char *path, const char *v);

/* The shell-outs: each says what failed. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool have_prog(const char *name);
bool have_files(const char *pattern);
/* The last @n lines of @path (and of @path2 when not NULL), on stderr. */
void show_tail(int n, const char *path, const char *path2);

pid_t spawn(struct bench_topo *t, const char *ns, const char *out, char *const *argv);
int reap(struct bench_topo *t, pid_t p, double timeout);
int wait_ready(struct bench_run *br, pid_t pid, const char *dev, const char *what,
	       const char *out);
int stop_child(struct bench_topo *t, pid_t pid, const char *row, const char *what,
	       const char *out);

/* ---- the run (datapath.c) -------------------------------------------------- */

/* Why ucpumapd would refuse to poll (--poll, --spin-us) with @cfg's
 * placement (a CPU of its own for the RX thread, one left over), or NULL. */
const char *bench_poll_refused(const struct bench_cfg *cfg);
bool rows_pass_only(const struct bench_run *br);
/* row @d runs ucpumapd --pass (no workers) */
bool row_is_pass(const struct row_def *d);
/* every selected row is a latency row (sockperf's too) */
bool rows_latency_only(const struct bench_run *br);
/* Where ucpumap-gen (this binary's folder) and ucpumapd (that folder, as
 * in the build tree, or ../sbin, as installed) are, into cfg->bindir and
 * cfg->daemon. 0, or -1 after a message naming @who. */
int bench_progs(struct bench_cfg *cfg, const char *who);

/* One run of the datapath bench: what its files are given. */
struct bench_run {
	struct bench_cfg cfg;
	struct bench_topo topo;
	struct row *rows;		/* nrows, in rows.c's order (rows_select()) */
	int nrows;
};

/* ---- ucpumapd as a row runs it (daemon.c) ---------------------------------- */

struct daemon_run {
	char out[256], js[256], bin[600], spin[24], rx_cpu[16];
	pid_t pid;
	uint64_t l0;			/* delivered before it started */
	double a_tun, b_tun, a_kern, b_kern, a_rx, b_rx;	/* --dev: SIGUSR1 samples */
	double a_when, b_when;				/* their lines' "time" */
	int rc;
};
/* Start ucpumapd for row @r and wait until it is on the interface. */
int daemon_start(struct bench_run *br, const struct row *r, struct daemon_run *d);
/* Stop it: 0 when it exits cleanly, -1 otherwise (its last lines shown). */
int daemon_stop(struct bench_run *br, const struct row *r, const struct daemon_run *d);
double daemon_sample(const struct bench_topo *t, const struct daemon_run *d, double *kern,
		     double *rx, double *when);

/* A latency row's path (latency.c, sockperf.c use it): the kernel's
 * cpumap on the rows' interface, or ucpumapd with row @r's flags. */
struct lat_path {
	struct ucm_xdp *x;		/* the kernel's, or NULL */
	struct daemon_run d;
};
/* Up, and a moment to settle: 0, or -1 after a message. */
int lat_path_up(struct bench_run *br, const struct row *r, bool kernel, struct lat_path *p);
/* Down: @rc, or -1 when ucpumapd did not stop cleanly or reported a fault. */
int lat_path_down(struct bench_run *br, const struct row *r, struct lat_path *p, int rc);
/* The one CPU task @pid (0: this thread) may run on, or -1 when more. */
int lat_placement(pid_t pid);
/* ucpumapd's statistics now, the line SIGUSR1 makes it append to its
 * --stats-json file, allocated (free() it); NULL when none came within a
 * second. */
char *daemon_json_line(const struct daemon_run *d);

/* ---- the traffic (traffic.c) ---------------------------------------------- */

#define GEN_OUT	256	/* the generator's output file name */
#define GEN_LIVE_MAX	3408	/* ucpumap-gen's live frames hold this much */
/* The generator's frame on veth (--mtu's, else its default, 64 bytes) and
 * its engine: past what a live frame holds, the packet engine. */
unsigned long gen_frame_size(const struct bench_cfg *cfg);
const char *gen_engine(const struct bench_cfg *cfg);
int run_traffic(struct bench_run *br, const char *tag, int flows, double *sent,
		double *dev_dst);
pid_t gen_start(struct bench_run *br, const char *tag, int flows, char *out);
pid_t gen_start_at(struct bench_run *br, const char *tag, int flows, double rate,
		   double seconds, char *out);
/* One of several generators: on @cpu, @flows source ports from @sport, to
 * @dport. */
struct gen_spec {
	int cpu, flows;
	unsigned int sport, dport;
	double rate, seconds;
	double start_at;	/* ucpumap-gen --start-at (now_sec()'s clock), or 0 */
	bool stamp;		/* ucpumap-gen --stamp: the send time in each */
};
pid_t gen_start_spec(struct bench_run *br, const char *tag, const struct gen_spec *g,
		     char *out);
int gen_wait(struct bench_run *br, pid_t g, const char *tag, const char *out, double timeout);
int run_tcp(struct bench_run *br, const char *tag, bool back, double *bps);

/* The way back's traffic: 64-byte frames' worth of UDP from the DUT to the
 * generator's address, which the two-way rows route through the tun, in
 * sendmmsg() batches from CPU 0, until told to stop. */
struct back_sender {
	pthread_t thr;
	atomic_int stop;
	bool started;
	uint64_t d0;		/* delivered on the way back before it started */
	uint64_t sent;
	double secs;		/* how long it sent: its rates' time */
};
void back_start(const struct bench_topo *t, struct back_sender *b);
void back_stop(const struct bench_topo *t, struct back_sender *b, double *sent_pps,
	       double *dst_pps);

/* ---- the counters (measure.c) ---------------------------------------------- */

uint64_t delivered_now(const struct bench_topo *t);
uint64_t back_delivered_now(const struct bench_topo *t);
uint64_t nic_rx_now(const char *ifname);
/* What makes a count read between @t0 and @t1 (now_sec()) one over
 * @seconds: 1 where the reads are not in order. */
double window_scale(double seconds, double t0, double t1);

/* A CPU's working share between a mark and now. */
struct busy_mark {
	int cpu;
	double busy, all;
	bool ok;
};
void busy_mark(struct busy_mark *m, int cpu);
/* Its share since the mark into *@share: 0, or -1 without one. */
int busy_since(const struct busy_mark *m, double *share);
void busy_done(struct row *r, int round, const struct busy_mark *bw,
	       const struct busy_mark *bc0);

int json_u64_field(const char *line, const char *key, double *v);
int json_sum_field(const char *line, const char *key, double *sum);
char *last_line(const char *path);
int json_arr_field(const char *line, const char *key, double *v, int n);
double gen_total(const char *out);
/* How late a generator's --start-at was (its line in @out), 0 if not. */
double gen_late_sec(const char *out);
double iperf3_received(const char *out);
double testpmd_rx(const char *out);

/* ---- the results (report.c, report_json.c) ------------------------------------ */

/* The tables, after @nr rounds. */
void report_tables(const struct bench_run *br, int nr);
/* Whether phase @ph (0 alone, 1 loaded) of latency row @r has a p99.9:
 * enough answers in every round. */
bool p999_measured(const struct row *r, int ph, int nr);
/* The JSON's name of a latency row's cost COST_*. */
const char *cost_name(int c);
/* Every run of every row to --json's file. */
int report_json(const struct bench_run *br, int nr);
/* --chart's PNG, by gnuplot. */
void report_chart(const struct bench_run *br, int nr);

#endif /* UCM_BENCH_DATAPATH_H */
