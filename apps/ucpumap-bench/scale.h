/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumap-bench scale, its own header: the options, the placement and the
 * run loop (scale.c), the results (scale_report.c), the NIC form
 * (scale_dev.c). It runs on datapath's topology, processes and counters
 * (datapath.h): on a veth pair as many queues wide as its widest row, or
 * with --dev on a NIC's own queues, fed by an external generator.
 */
#ifndef UCM_BENCH_SCALE_H
#define UCM_BENCH_SCALE_H

#include <stddef.h>
#include <stdint.h>

#include "datapath.h"

/* Widths 1..16: a generator per queue beside ucpumapd under MAX_KIDS, and
 * the sink's sockets. */
#define SCALE_MAX_WIDTH		16
#define SCALE_MAX_ROUNDS	20
/* The rows scale.c defines, at most (its rowdefs[] checks). */
#define SCALE_MAX_ROWS		16
/* The light queues' sinks of the flood rows: port LIGHT_PORT0 + queue. */
#define LIGHT_PORT0		9100
/* --dev: the NIC's queues whose counters it follows (ucpumapd serves as
 * many at most: UCM_STEER_MAX_QUEUES). */
#define SCALE_DEV_MAX_QUEUES	64

/* What a row feeds where, at width w. */
enum scale_shape {
	SH_WIDE,	/* w queues into w workers */
	SH_FAN_IN,	/* w queues into 1 worker */
	SH_FAN_OUT,	/* 1 queue into w workers */
	SH_FLOOD,	/* w queues into 1 worker: queue 0 floods, the rest light */
};

struct scale_rowdef {
	const char *name;
	bool kernel;		/* the kernel's cpumap; else ucpumapd */
	enum scale_shape shape;
	bool coalesce;		/* ucpumapd with coalescing (the rest: --no-coalesce) */
	const char *flag;	/* ucpumapd's extra flag, or NULL */
	int min_width;		/* the narrowest width it means something at */
};

/* Where a cell's threads run: generators (each feeds queue cpu % the
 * veth's queues), ucpumapd's RX threads (one per queue, in order) and the
 * workers. With --dev there is no generator of ours: ngen counts the
 * NIC's queues the cell serves (queue[]), gen[] is unused. */
struct scale_place {
	int gen[SCALE_MAX_WIDTH], rx[SCALE_MAX_WIDTH], wk[SCALE_MAX_WIDTH];
	int queue[SCALE_MAX_WIDTH];
	int ngen, nwk;
};

/* One row at one width: what it measured, round by round. */
struct scale_cell {
	const struct scale_rowdef *def;
	int width;
	char name[48];		/* "cpumap-w4": its files' names */
	struct scale_place pl;
	bool failed;		/* a round failed: its figures are left out */
	/* On veth: each generator's flows, and how many of them the hash
	 * gives each worker (scale_sports()) */
	int flows, wflows[SCALE_MAX_WIDTH];
	double sent[SCALE_MAX_ROUNDS], dst[SCALE_MAX_ROUNDS];
	/* seconds a generator missed --start-at by: the round's traffic
	 * took --seconds and that, offered as delivered (scale_offered()) */
	double late[SCALE_MAX_ROUNDS];
	/* ucpumapd's: each queue's received share, each worker's processed */
	double qrx[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	double wproc[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	/* and where each queue lost what it did not hand on: the kernel's
	 * drops at its XSK socket (RX ring full, and the rest it counts),
	 * and the worker rings' refusals (full, or the fair share) */
	double qxsk[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	double qenq[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	bool have_daemon;
	/* flood rows: each light queue's offered and delivered datagrams, and
	 * the flooding queue's */
	double light_sent[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	double light_dst[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	double flood_sent[SCALE_MAX_ROUNDS], flood_dst[SCALE_MAX_ROUNDS];
	/* and the light queues' one-way latency, us, all light queues
	 * together: p50, p99, and how many datagrams were timed */
	double light_p50[SCALE_MAX_ROUNDS], light_p99[SCALE_MAX_ROUNDS];
	double light_timed[SCALE_MAX_ROUNDS];
	/* and each light queue's own (index as light_sent's) */
	double lq_p50[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	double lq_p99[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	double lq_timed[SCALE_MAX_ROUNDS][SCALE_MAX_WIDTH];
	/* --dev: what each of the NIC's queues received in the window, by
	 * its own counter (have_qoff: every round had them) */
	double qoff[SCALE_MAX_ROUNDS][SCALE_DEV_MAX_QUEUES];
	bool have_qoff;
};

struct scale_cfg {
	int rounds;
	double seconds;
	const char *json, *chart, *widths_s, *rowlist, *cpus_s;
	int widths[SCALE_MAX_WIDTH], nwidths;
	int cpus[APP_MAX_CPUS], ncpus;
	unsigned long flows, light_rate;
	bool shared, want[SCALE_MAX_ROWS];
	bool flows_set, light_set;	/* given: the generators' (not with --dev) */
	int gen_engine;			/* --gen-engine: GEN_ENGINE_* (not with --dev) */
	/* --dev IFACE: the NIC's form (scale_dev.c), its sink and ucpumapd's
	 * flags for a NIC */
	const char *dev, *sink_ip;
	unsigned long sink_port;
	bool zero_copy, busy_poll;
};

/* What did not run, and why: a whole width (@width, its CPUs), or rows
 * at some widths (@width 0: @rows at @widths, "" for every width). */
struct scale_skip {
	int width;
	char rows[256], widths[64];
	char why[384];
};
/* The widths' skips, and the row skips of --dev (three reasons). */
#define SCALE_MAX_SKIPS		(SCALE_MAX_WIDTH + 4)

struct scale_run {
	struct scale_cfg cfg;
	struct bench_run br;		/* the topology, the processes, the counters */
	struct scale_cell *cells;
	int ncells, nrounds;
	struct scale_skip skip[SCALE_MAX_SKIPS];
	int nskip;
	int veth_queues;
	/* --dev (scale_dev.c): the NIC's RX queues; the queues the probe
	 * found the traffic on, in order, each a cell's RX thread; where each
	 * queue's received count is among the NIC's ethtool statistics (-1:
	 * none; have_qstats: every queue has one) and the probe's shares */
	int nic_queues, traffic[SCALE_MAX_WIDTH], ntraffic;
	int qstat[SCALE_DEV_MAX_QUEUES], nstats;
	bool have_qstats;
	double probe_share[SCALE_DEV_MAX_QUEUES];
	/* The running cell's CPU lists as text, for ucpumapd's command line
	 * (place_cfg()) */
	char wk_s[256], rx_s[256], q_s[256];
};

/* scale.c */
const struct scale_rowdef *scale_rowdefs(int *n);
/* Whether row @i of scale_rowdefs() is wanted: named in --rows, or none is. */
bool scale_row_wanted(const struct scale_cfg *cfg, int i);
/* The cell of row @name at width @w, or NULL. */
const struct scale_cell *scale_cell_of(const struct scale_run *sr, const char *name, int w);

/* "0,1,2" into @buf: 0, or -1 when it does not fit. */
int scale_cpu_list(char *buf, size_t sz, const int *v, int n);

/* scale_place.c */
/* The widths that fit, into sr->cfg.widths (the others skipped, with
 * why; one of --widths that does not fit refused): 0, or -1 after a
 * message. On veth, sets sr->veth_queues. */
int scale_pick_widths(struct scale_run *sr);
/* The cells: every wanted row at every width it applies to, placed: 0, or
 * -1 after a message. */
int scale_make_cells(struct scale_run *sr);
/* Row @row skipped at width @w (0: at every width) for @why: added to the
 * skip with the same reason, or a new one. */
void scale_skip_row(struct scale_run *sr, const char *row, int w, const char *why);

/* scale_light.c: the flood rows' light sinks */
/* One-way latencies, us, of one round's light datagrams. */
struct scale_lat {
	double *us;
	size_t n, cap;
	int64_t off_ns;		/* CLOCK_REALTIME less CLOCK_MONOTONIC */
};
/* A socket on the sink's address, port @port, that keeps each datagram's
 * receive time: its fd, or -1 after a message. */
int scale_light_open(const struct bench_cfg *bc, int port);
/* The kernel's receive times on for the run: a socket that asks for them,
 * to close at the end, or -1 after a message. */
int scale_light_stamps_on(void);
/* Room for the latencies of @nsinks light sinks at @rate for @seconds
 * (capped at what a sink holds): 0, or -ENOMEM after a message. */
int scale_lat_init(struct scale_lat *la, double rate, double seconds, int nsinks);
/* What light sink @fd got: the datagrams read and those its full buffer
 * dropped; each read one's latency into @la (NULL: none). Closes @fd. */
double scale_light_drain(int fd, struct scale_lat *la);
/* The p50 and p99 of @la's latencies from index @from on (0 when none
 * was timed) and how many they are: one sink's, drained last. */
void scale_lat_part(struct scale_lat *la, size_t from, double *p50, double *p99,
		    double *timed);
/* @la's p50 and p99 (0 when none was timed) and how many were; frees it. */
void scale_lat_done(struct scale_lat *la, double *p50, double *p99, double *timed);

/* scale_sports.c */
/* Each of @ngen generators' first source port (@flows in a row from
 * there, the first at @sport0 or later) so that @nwk workers get the flows
 * as evenly as the hash allows, and how many each worker gets (@wflows):
 * 0, or -ERANGE when the runs do not fit below port 65536. */
int scale_sports(uint32_t saddr, uint32_t daddr, unsigned int dport, int ngen, int nwk,
		 int flows, unsigned int sport0, int *wflows, unsigned int *sport);

/* Round @k's offered rate: what the generators sent over the window the
 * delivered rate is taken over. */
static inline double scale_offered(const struct scale_run *sr, const struct scale_cell *c, int k)
{
	return c->sent[k] / (sr->cfg.seconds + c->late[k]);
}

/* scale_report.c */
void scale_report(const struct scale_run *sr);
/* The skips, a line each, every line after @prefix. */
void scale_print_skips(const struct scale_run *sr, FILE *f, const char *prefix);
int scale_json(const struct scale_run *sr);
void scale_chart(const struct scale_run *sr);

/* scale_dev.c: the NIC form, --dev IFACE */
/* The options' combinations with --dev, and without it: 0, or -1 after a
 * message (usage). */
int scale_dev_opts(const struct scale_cfg *cfg);
/* The NIC checked and its traffic probed, the sink bound, the default
 * widths set: 0, or -1 after a message, nothing left attached. */
int scale_dev_setup(struct scale_run *sr);
/* Why row @def cannot run at width @w on the NIC (*@every: at no width),
 * or NULL. */
const char *scale_dev_skip(const struct scale_run *sr, const struct scale_rowdef *def, int w,
			   bool *every);
void scale_dev_place(const struct scale_run *sr, const struct scale_rowdef *def, int w,
		     struct scale_place *pl);
/* Round @k of cell @c's timed window on the NIC: offered, delivered, each
 * queue's share. 0, or -1 after a message. */
int scale_dev_window(struct scale_run *sr, struct scale_cell *c, int k);
void scale_dev_header(const struct scale_run *sr);
/* The NIC's queues' shares of what cell @c was offered. */
void scale_dev_shares(const struct scale_run *sr, const struct scale_cell *c);

#endif /* UCM_BENCH_SCALE_H */
