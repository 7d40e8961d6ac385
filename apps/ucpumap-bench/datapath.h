/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumap-bench datapath, its own header: the rows (rows.c: what each row
 * is; kinds.c: how each kind of row runs), the topology and the processes
 * (topo.c), the traffic (traffic.c), the counters (measure.c), the results
 * (report.c), and the options and the run loop (datapath.c).
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

#include "util.h"

#define MAX_ROUNDS	100
#define DPDK_TAP_MAC	"02:00:00:00:00:01"	/* testpmd's tap: its frames go to it */
#define BACK_PORT	9001	/* the way back's sink, in the generator's namespace */
#define BACK_BATCH	64	/* the way back's sender: datagrams per sendmmsg() */
#define TCP_PORT	5201	/* the TCP rows' iperf3 */

/* The generator's flows, in turn. */
#define DEFAULT_FLOWS	16
/* Few flows: each one's share of a 64-packet hold is 16 datagrams. */
#define FEW_FLOWS	4
/* Many flows: more than a hold's 64, so no two packets of a hand-over are
 * of one flow and nothing merges (the cost of trying). */
#define MANY_FLOWS	1024

/* ucpumapd's pool counters, summed over its queues (stats-json names). */
#define NPOOL	7
extern const char *const pool_keys[NPOOL];

/* ---- the rows (rows.c, kinds.c) ------------------------------------------ */

enum row_kind { K_KPASS, K_KCPUMAP, K_DAEMON, K_TUN, K_DPDK, K_TWOWAY, K_TCP, K_TCP_KERNEL,
		K_TCP_KCPUMAP, K_TCP_BACK, K_UDP_BACK, K_LAT_KERNEL, K_LAT, K_LAT_TWOWAY };

/* What a row is: one entry of rows.c's table. */
struct row_def {
	const char *name;
	enum row_kind kind;
	const char *flag;		/* ucpumapd's extra flag */
	const char *flag_arg;		/* and its value, or NULL */
	/* ucpumapd rows: coalescing on (the others run --no-coalesce, the
	 * design before it); the generator's flows (0: DEFAULT_FLOWS) */
	bool coalesce;
	int flows;
	/* ucpumapd's RX thread on the first --cpus CPU unless --rx-cpus:
	 * with --pass it is the worker (latency-pass) */
	bool rx_on_wcpu;
};

/* A row of this run: selected or not, skipped or not, and what it measured. */
struct row {
	const struct row_def *def;
	bool on;
	const char *skipped;		/* why, when it did not run */
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
	double capacity[MAX_ROUNDS], load_pps[MAX_ROUNDS];
	double probes[MAX_ROUNDS][2], answered[MAX_ROUNDS][2];
	/* ucpumapd's latency rows: its own histograms over the probes alone,
	 * the bucket bound (us) of each stage's median (0-2, LAT_STAGES) and
	 * 99th percentile (3-5) */
	double stage[MAX_ROUNDS][6];
	bool have_stage;
};
/* ucpumapd's histograms (stats-json names): arrival to flush, flush to
 * dequeue, dequeue to the tun's completion. */
#define LAT_STAGES	{ "rx_hist", "wait_hist", "sink_hist" }
/* The latency rows' percentiles. */
#define LAT_P	{ 0.5, 0.9, 0.99, 0.999 }

/* What a kind of row does (kinds.c). */
struct row_kind_ops {
	int (*run)(struct row *r, int round);
	/* why rows of this kind cannot run here, or NULL */
	const char *(*skip)(void);
	bool tcp;		/* Gbit/s of one iperf3 stream, not pps at the UDP sink */
	bool latency;		/* round trips in us (latency.c), not a rate */
	bool count;		/* ucpumapd's own count against the kernel's */
	bool two_way;		/* both directions at once */
	/* the row's traffic goes the way back only: from the DUT's
	 * namespace through the tun and XSK TX to the generator's */
	bool back;
};

/* Row @a's rate over row @b's, round by round (rows.c's gains table). */
struct row_gain {
	const char *a, *b, *note;
	bool back;		/* the way back's delivered rate, not dst rx */
	double target;		/* a's at least this times b's (the note's), or 0 */
};

/* A ucpumapd of a row (kinds.c). */
struct daemon_run {
	char out[256], js[256], bin[600], spin[24], rx_cpu[16];
	pid_t pid;
	uint64_t l0;			/* delivered before it started */
	double a_tun, b_tun, a_kern, b_kern, a_rx, b_rx;	/* --dev: SIGUSR1 samples */
	int rc;
};
int daemon_start(const struct row *r, struct daemon_run *d);
struct ucm_xdp *kernel_cpumap_attach(int ifindex);

/* The latency rows (latency.c). */
int row_latency(struct row *r, int round);
const char *skip_latency(void);

extern struct row rows[];
extern const int nrows;
extern const struct row_gain row_gains[];
extern const int nrow_gains;

const struct row_kind_ops *row_ops(const struct row *r);
struct row *row_by(const char *name);
bool row_is_tcp(const struct row *r);
bool row_kind_on(enum row_kind kind);
int rows_select(const char *list);
void rows_skip(void);

/* ---- the configuration (datapath.c) -------------------------------------- */

struct dp_cfg {
	int rounds;
	double seconds;
	unsigned long rate;
	const char *json, *chart, *rowlist;
	char bindir[512];
	const char *dev;		/* NULL: the veth topology */
	char ifname[IF_NAMESIZE];	/* where the rows run: vd or --dev */
	const char *sink_ip, *cpus, *queues, *rx_cpus;
	unsigned long sink_port;
	bool v6, zero_copy, busy_poll;
	unsigned long spin_us;		/* ucpumapd's --spin-us (0: its default) */
	int wcpu[APP_MAX_CPUS], nwcpu;	/* the workers' CPUs */
	int q0, nq;			/* --queues as a range, for testpmd; nq 0: not one */
	int rx_cpu[APP_MAX_CPUS], n_rx_cpu;	/* --rx-cpus, checked; ucpumapd takes the text */
};
extern struct dp_cfg cfg;

/* ---- the topology and the processes (topo.c) ----------------------------- */

extern volatile sig_atomic_t stopping;
extern char ns_gen[64], ns_dut[64], tmpdir[128];
extern char vd_mac[32], vg_mac[32];
/* The sink (a bound UDP socket, never read while traffic runs) and the
 * way back's, made in the generator's namespace; the namespaces' fds. */
extern int sink_fd, back_fd, gen_ns_fd, dut_ns_fd;

void topo_signals(void);
int topo_tmpdir(void);
int topology(void);
int dev_setup(void);
void cleanup(void);
int set_sysctl(const char *path, const char *v);

/* The shell-outs: each says what failed. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool have_prog(const char *name);
bool have_files(const char *pattern);
/* The last @n lines of @path (and of @path2 when not NULL), on stderr. */
void show_tail(int n, const char *path, const char *path2);

pid_t spawn(const char *ns, const char *out, char *const *argv);
int reap(pid_t p, double timeout);
int wait_ready(pid_t pid, const char *dev, const char *what, const char *out);
int stop_child(pid_t pid, const char *row, const char *what, const char *out);

/* ---- the traffic (traffic.c) ---------------------------------------------- */

#define GEN_OUT	256	/* the generator's output file name */
int run_traffic(const char *tag, int flows, double *sent, double *dev_dst);
pid_t gen_start(const char *tag, int flows, char *out);
pid_t gen_start_at(const char *tag, int flows, double rate, double seconds, char *out);
int gen_wait(pid_t g, const char *tag, const char *out, double timeout);
int run_tcp(const char *tag, bool back, double *bps);

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
void back_start(struct back_sender *b);
void back_stop(struct back_sender *b, double *sent_pps, double *dst_pps);

/* ---- the counters (measure.c) ---------------------------------------------- */

uint64_t delivered_now(void);
uint64_t back_delivered_now(void);
uint64_t nic_rx_now(void);

/* A CPU's working share between a mark and now. */
struct busy_mark {
	int cpu;
	double busy, all;
	bool ok;
};
void busy_mark(struct busy_mark *m, int cpu);
void busy_done(struct row *r, int round, const struct busy_mark *bw,
	       const struct busy_mark *bc0);

int json_u64_field(const char *line, const char *key, double *v);
int json_sum_field(const char *line, const char *key, double *sum);
double daemon_sample(pid_t d, const char *js, double *kern, double *rx);
void last_line(const char *path, char *line, size_t sz);
int daemon_json_line(pid_t d, const char *js, char *line, size_t sz);
int json_arr_field(const char *line, const char *key, double *v, int n);
double gen_total(const char *out);
double iperf3_received(const char *out);
double testpmd_rx(const char *out);

/* ---- the results (report.c) ------------------------------------------------- */

/* The tables, after @nr rounds. */
void print_tables(int nr);
/* Every run of every row to --json's file. */
void write_json(int nr);
/* --chart's PNG, by gnuplot. */
void write_chart(int nr);

#endif /* UCM_BENCH_DATAPATH_H */
