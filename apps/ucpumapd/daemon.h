/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* ucpumapd's pieces: its configuration, its state, and what each file
 * gives the others. */
#ifndef UCPUMAPD_DAEMON_H
#define UCPUMAPD_DAEMON_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ucpumap/cpumap.h"
#include "ucpumap/dp.h"
#include "ucpumap/xdp.h"
#include "httpd.h"

/* The exit status: what a service manager and its operator act on
 * (ucpumapd(8), EXIT STATUS). 0-2 as every tool; each fault its own. */
enum {
	EXIT_SETUP = 1,		/* could not start: the message says why */
	EXIT_USAGE = 2,		/* a bad flag or setting */
	EXIT_UNCLEAN = 3,	/* the counters did not add up, or frames were
				 * missing at the stop: a bug to report */
	EXIT_IFACE_GONE = 4,	/* the interface was deleted */
	EXIT_TUN_GONE = 5,	/* the tun was deleted */
	EXIT_XSK = 6,		/* a socket failed (the kernel reported an error on it) */
	EXIT_THREAD = 7,	/* an RX thread failed */
	EXIT_BACK = 8,		/* the way back's reads failed */
	EXIT_STALLED = 9,	/* a worker or RX thread stalled */
	/* The configuration cannot work on this host (no such interface or
	 * queue, an MTU a frame cannot take, the port in use, no such
	 * --user): fix it, a restart will not. sysexits.h's EX_CONFIG, so
	 * systemd shows 78/CONFIG; the unit does not restart it. */
	EXIT_CONFIG = 78,
};

struct cfg {
	const char *dev, *tun, *stats_json;
	char dev_name[16];		/* --dev's primary name, where it is an
					 * altname (check_args()) */
	char tun_name[16];		/* --tun's, likewise */
	const char *user;		/* --user: who it runs as after set-up */
	const char *config;		/* --config: the file of options read */
	bool config_absent;		/* an optional one ('-FILE') not there, as
					 * the parse found it (the banner comes
					 * after the sandbox, which asks nothing) */
	bool check;			/* --check: check.c, then exit */
	bool lib_refused;		/* the library refused the options (said) */
	int poll_placed;		/* polling threads' placement: 1 fine,
					 * -1 refused, 0 not looked at */
	cpu_set_t poll_free;		/* placed: the CPUs no thread polls */
	int timestamps;			/* --(no-)timestamps: enum out_when (journal.h) */
	bool tun_any_owner, no_seccomp;
	bool keep_tun;			/* --keep-tun: persistent, left at the exit */
	bool version;			/* --version: print it, run nothing */
	const char *status;		/* --status IFACE: ask, run nothing */
	uint32_t queues[UCM_XSK_MAX_QUEUES];
	int nqueues;
	int cpus[UCM_CPUMAP_MAX_WORKERS], ncpus;
	int rx_cpus[UCM_XSK_MAX_QUEUES], n_rx_cpus;	/* RX thread i: rx_cpus[i % n] */
	bool tap, busy_poll, no_recycle, no_batch, no_direct_bulk, replace, pass;
	bool no_coalesce, copy, zero_copy, no_latency, no_hold, no_offload, no_tx_csum;
	bool no_fair_share;
	bool lanes;
	bool poll;			/* --poll (poll.c) */
	bool spin_set;			/* --spin-us given */
	bool rx_size_set;		/* --rx-size given: else the library's */
	bool frames_set;		/* --frames given: else the library's,
					 * which grows for jumbo frames */
	bool extended;			/* the per-queue and per-worker lines too */
	bool two_way;			/* two-way: --two-way or --peer-mac */
	bool peer_mac_set;		/* the next hop fixed, not from the kernel */
	bool fixed_set;			/* --fixed-worker given */
	uint8_t peer_mac[6];
	int skb_mode, policy, filter, verbose;
	unsigned long fixed, frames, frame_size, rx_size, qsize, mtu, spin_us, prewake;
	unsigned long max_frags;	/* --max-frags; the library's default */
	uint32_t steer_flags;
	double interval, duration;
	struct httpd_addr metrics;	/* --metrics-listen; .len 0: none */
};

/* The drops the statistics line sums, by cause (drops.c names them): the
 * way in's seven of its own and the workers' reasons, the way back's nine;
 * and the way in's chain cause by its four reasons (ucm_xsk_stats'
 * rx_chain_long, _cut, _bad, _nosg), which sum to it (read a moment
 * after it: exactly once the datapath has stopped). */
#define DROPS_IN	(7 + UCM_DROP_REASONS_MAX)
#define DROPS_BACK	9
#define DROPS_CHAIN	4
struct drops {
	uint64_t in[DROPS_IN], back[DROPS_BACK], chain[DROPS_CHAIN];
};

/* priv.c's state. */
struct priv {
	uid_t uid;			/* who it runs as after set-up */
	gid_t gid;
	uint64_t run;			/* the capabilities its run time keeps */
	uint64_t setup;			/* what the set-up has */
	/* The first failed drop on a datapath thread (-errno): written
	 * there (release), read by priv_drop() (acquire). */
	int thread_err;
	int tun_lock_fd;		/* tunown.c's, held to the exit; -1: none */
	char tun_lock_path[96];		/* its file, while held; "": none */
	bool tun_marked;		/* it says "kept": it stays at the exit */
	bool tun_lock_read;		/* tun_lock() ran: tun_kept is known */
	bool tun_existed;		/* the tun was there before this start */
	bool tun_kept;			/* ... kept by an earlier start (its
					 * lock file's mark): ours to own */
};

/* How often the control thread looks for faults, whatever --interval: a
 * deleted device or a failed thread is noticed within this. */
#define CHECK_SEC	0.1
/* The shortest --interval: a hundred lines a second at most (a line takes
 * a fraction of a millisecond to make; much shorter and the control
 * thread would do nothing else). */
#define INTERVAL_MIN	0.01
/* A --stats-json trouble that lasts (a full disk, a lagging reader) said
 * at most this often: a line a minute, not one per statistics line. */
#define JSON_SAY_SEC	60.0

struct daemon {
	struct cfg c;
	struct priv priv;
	struct ucm_dp *dp;
	FILE *json;			/* --stats-json's file, written by its fd */
	/* The JSON line the file has not taken whole yet (a FIFO whose reader
	 * lags): the rest goes before any other line, so that none is cut;
	 * the lines made meanwhile are left out, counted. */
	char *json_line;
	size_t json_len, json_done;
	uint64_t json_lost, json_cut;	/* lines left out whole, cut short */
	/* When a lagging reader, a refused write was last said (now_sec();
	 * 0: never): at most once a JSON_SAY_SEC each, so a later episode is
	 * said too, a lasting one not each line. */
	double json_lag_at, json_err_at;
	bool json_mid_line;		/* the file ends inside a line a write cut */
	struct ucm_dp_stats last;
	/* Previous snapshots, for the per-line rates. */
	uint64_t last_q_rx[UCM_XSK_MAX_QUEUES], last_q_tx[UCM_XSK_MAX_QUEUES];
	uint64_t last_enq[UCM_XSK_MAX_QUEUES][UCM_CPUMAP_MAX_WORKERS][2];
	uint64_t last_w[UCM_CPUMAP_MAX_WORKERS][2];
	/* --extended's busy shares: each worker's sleep_ns, each RX
	 * thread's CPU time (rx_cpu_seen) */
	uint64_t last_w_sleep[UCM_CPUMAP_MAX_WORKERS], last_q_cpu[UCM_XSK_MAX_QUEUES];
	/* The same once the datapath starts (stats_start()): the sleeps
	 * and CPU time of the set-up are no interval's, the first's or the
	 * whole run's. */
	uint64_t base_w_sleep[UCM_CPUMAP_MAX_WORKERS], base_q_cpu[UCM_XSK_MAX_QUEUES];
	uint64_t base_sleep_ns, base_rx_cpu;
	/* and the program's passes so far: the set-up's, before the sockets
	 * were in its map (no_socket), are no interval's either */
	uint64_t base_pass[UCM_STEER_PASS_SLOTS];
	double last_pass_t;		/* when last.xdp_pass was read */
	uint64_t last_back[UCM_CPUMAP_MAX_WORKERS];
	struct drops last_drops;
	double last_t;
	double wd_period, wd_last;	/* systemd's watchdog: seconds; 0 off */
	double start_t, stop_t;		/* the run, for the final averages */
	/* The workers' sleeps at stop_t (stats_stop()): the final busy
	 * shares end there, as the RX threads' do, not after the drain. */
	uint64_t stop_sleep_ns, stop_w_sleep[UCM_CPUMAP_MAX_WORKERS];
	bool stop_read;
	struct metrics *metrics;	/* NULL without --metrics-listen */
	/* The RX threads (poll.c): each records itself in thread_init,
	 * before start returns (rx_thr_set: release there, acquire here);
	 * their CPU time's last readings (the control thread's), and its sum
	 * at the last line. rx_joined: after the datapath's stop, when the
	 * threads are gone and only the readings are left. */
	pthread_t rx_thr[UCM_XSK_MAX_QUEUES];
	bool rx_thr_set[UCM_XSK_MAX_QUEUES];
	uint64_t rx_cpu_seen[UCM_XSK_MAX_QUEUES];
	uint64_t last_rx_cpu;
	bool rx_joined;
	/* The links' states (UCM_DP_LINK_* | LINKS_SEEN): the control
	 * thread's last ucm_dp__check(), every CHECK_SEC; read by the
	 * metrics' thread. One word, read alone: relaxed, both sides. */
	uint32_t links;
	struct ctl *ctl;		/* the status socket (ctl.c) */
};

/* struct daemon.links: a check has been made (before, nothing is known). */
#define LINKS_SEEN	(1u << 31)

/* poll.c: the placement of --poll, --spin-us and --busy-poll (0, or -1
 * after a message: exit 2), given the workers' @nwk CPUs (the CPUs left
 * free into poll_free); the threads that do not poll kept to those
 * (poll_confine(): after ucm_dp__create(), which checks the datapath's
 * CPUs against this thread's mask, before its threads start; -1 said);
 * with busy polling, what the device's interrupt deferral lacks (said,
 * not fixed), the RX threads looking @spin_us; the RX threads' CPU time. */
int poll_check(struct cfg *c, const int *wk, int nwk);
/* --rx-cpus CPUs past the queues' count: named (RX thread i takes the
 * i-th CPU), not refused. */
void rx_cpus_said(const struct cfg *c);
int poll_confine(const struct cfg *c);

/* args.c: options that exclude or need each other. */
int args_exclusive(struct cfg *c);
void poll_napi_hint(const struct cfg *c, unsigned int spin_us);
void rx_thread_seen(struct daemon *d, uint32_t idx);
uint64_t rx_cpu_ns(struct daemon *d);
/* RX thread @i's CPU time now, read only: 0, or -1 (none, or joined). */
int rx_thread_cpu_ns(const struct daemon *d, uint32_t i, uint64_t *ns);

/* stats.c: the statistics every interval (final: the totals, averaged
 * over start_t to stop_t), and the closing conservation lines. */
void print_stats(struct daemon *d, bool final);
/* After the privileges' drop: the XDP program's pass counters, where they
 * cannot be read any more, said once. */
void stats_pass_check(const struct daemon *d);
/* The run's start (its time) and the busy shares' starting points, as
 * the datapath starts. */
void stats_start(struct daemon *d);
/* The busy shares' end points as the stop begins, the datapath running:
 * the RX threads' CPU time and the workers' sleeps. */
void stats_stop(struct daemon *d);
void print_verdict(struct daemon *d);
/* priv.c: --stats-json's file. The pending line (struct daemon) out as
 * the file takes it: true once none is pending (a failed write gives it
 * up, counted); drained, waiting a second at most for the reader. Whether
 * the file is a regular one (what may be emptied). The close: the last
 * line drained, the lines left out said. */
bool json_line_flush(struct daemon *d);
bool json_line_drain(struct daemon *d);
bool json_is_file(struct daemon *d);
void json_close(struct daemon *d);
/* drops.c: every drop so far, by cause (the getters': any thread). The way in's by
 * name, merged (a worker reason named as a cause of the RX side adds to
 * it) into @out[DROPS_NAMED], their number returned: what the conservation
 * line and JSON's drops_in list, and with @chain_reasons, chain replaced
 * by its four, /metrics' ucpumap_drops_total{way="in"}. What reached the
 * sockets: rx and the kernel's drops there. */
#define DROPS_NAMED	(DROPS_IN + DROPS_CHAIN)
struct drop_named {
	const char *name;
	uint64_t v;
};
void count_drops(const struct daemon *d, const struct ucm_dp_stats *t, struct drops *n);
int drops_in_named(const struct drops *n, bool chain_reasons, struct drop_named *out);
/* The name of drop cause @i of the way back (@back) or in. */
const char *cause_name(bool back, int i);
uint64_t drops_arrived(const struct ucm_dp_stats *t, const struct drops *n);
uint64_t drops_sum(const uint64_t *v, int n);
/* What a worker's way back read of the tun: handed to its TX channel, or
 * dropped (the conservation line's "read"; the JSON's back_read sums it). */
struct ucm_tun_back_stats;
uint64_t back_read_of(const struct ucm_tun_back_stats *rs);
/* The JSON line's counters, without its time and shares (the status
 * query's too). */
struct json;
void stats_json(struct json *j, const struct daemon *d, const struct ucm_dp_stats *t,
		const struct drops *n, uint64_t rx_cpu);

/* ctl.c: the status socket CTL_DIR/IFACE.sock and --status IFACE. The
 * socket after ucm_dp__start(), before priv_drop() (0: one it cannot
 * make is said, and the daemon runs without it); ctl_serve() each turn
 * of the control loop; ctl__close() at the end (no-op on NULL).
 * ctl_status(): the query, its exit status (0, or 1 after a message). */
#define CTL_DIR		"/run/ucpumap"
struct ctl;
void ctl__open(struct daemon *d);
void ctl_serve(struct daemon *d);
void ctl__close(struct ctl *c);
int ctl_status(const char *dev);

/* service.c: systemd's notifications (nothing without NOTIFY_SOCKET). */
void svc_ready(struct daemon *d);
void svc_tick(struct daemon *d);	/* every turn of the control loop */
void svc_stopping(const char *why);

/* metrics.c: --metrics-listen, GET /metrics (Prometheus) on a thread of
 * its own. Open between ucm_dp__create() and __start() (a second
 * instance hears that the interface is served; a port in use fails
 * before anything is redirected), start after ucm_dp__start(), stop before ucm_dp__stop(). Each is a
 * no-op on NULL; 0 or -errno after a message. */
struct opt;
struct metrics;
int metrics_parse_listen(const struct opt *o, const char *arg, void *cfg);
int metrics__open(struct metrics **mp, const struct httpd_addr *a);
int metrics__start(struct metrics *m, const struct daemon *d);
void metrics__stop(struct metrics *m);
void metrics__close(struct metrics *m);

/* priv.c: least privilege (man/ucpumapd.8, PRIVILEGES) and the files it
 * writes. priv_prepare() before ucm_dp__create() (the exit status after
 * a message, EXIT_SETUP, _USAGE or _CONFIG: nothing attached),
 * priv_drop() once ucm_dp__start() succeeded and priv_confine() (the
 * seccomp filter) last (-1 after a message: stop, exit 1), priv_reopen()
 * on SIGHUP. */
/* Before it: the capabilities it must be given, whoever runs it (0, or
 * EXIT_CONFIG after a message naming them). */
int priv_check(const struct daemon *d);
int priv_prepare(struct daemon *d);
int priv_drop(struct daemon *d);
int priv_confine(struct daemon *d);
void priv_thread(void *ctx, uint32_t kind, uint32_t idx);	/* ucm_dp_thread_fn */
void priv_reopen(struct daemon *d);
/* tunown.c: one instance per tun, before the set-up attaches anything:
 * 0, or the exit status after a message (EXIT_CONFIG: another ucpumapd
 * holds it). */
int tun_lock(struct daemon *d);
/* At the exit: the lock let go, its file removed unless it marks a kept
 * tun. Nothing where none was taken. */
void tun_unlock(struct daemon *d);
/* --keep-tun, or a tun an earlier start kept, once the set-up has the tun
 * @name: persistent, and the user's the daemon runs as. 0, or -1 after a
 * message. */
int tun_keep(struct daemon *d, const char *name);
/* A start that failed after tun_keep() made a tun of its own persistent:
 * not persistent again (it goes with the daemon's queues), its mark out
 * of the lock file. Before priv_confine(); after priv_drop() as the tun's
 * owner. Where it cannot, said with the fix, and the mark stays. */
void tun_unkeep(struct daemon *d, const char *name);
/* Whether the existing tun --tun names is one a start kept (its lock
 * file's mark, read without the lock: --check's and the owner check's). */
bool tun_kept_mark(const struct daemon *d);
/* seccomp.c: the running phase's allow-list, on every thread. 0, or -1
 * after a message. */
int seccomp_start(struct daemon *d);

/* check.c: --check, the start's checks with nothing attached (@o: the
 * datapath's options; @opts_status: EXIT_USAGE when options conflict,
 * said, else 0). Return: 0 when all passed, else the first failure's
 * exit status. priv.c's part of it (0 or the exit status after
 * a message), and the exit status of a set-up refused with -errno
 * (setup_exit(): the start's too). */
int check_run(struct daemon *d, const struct ucm_dp_opts *o, int opts_status);
/* Capabilities given as permitted alone (setcap's +p, a supervisor's
 * empty effective set) made effective, for the set-up or --check to use:
 * 0 or -errno. */
int priv_effective(void);
int priv_check_user(struct daemon *d);
int priv_check_metrics(const struct daemon *d);
int priv_check_tun(struct daemon *d);
int setup_exit(int err);
/* The number a file (/proc/sys, sysfs) holds: 0, -ENOENT (no such file),
 * -EINVAL (no number) or another -errno. */
int file_num(const char *path, long *v);
/* The start's words (stderr), each with its fix: the RX queues of --dev
 * that RSS gives flows and --queues leaves out; an io_uring that could not
 * be rebuilt once the privileges are dropped. --check prints them as warn
 * lines. Before the seccomp filter: it reads sysfs, /proc and ethtool. */
void setup_warn(const struct daemon *d);

#endif /* UCPUMAPD_DAEMON_H */
