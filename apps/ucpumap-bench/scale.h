/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumap-bench scale, its own header: the options, the placement and the
 * run loop (scale.c), the results (scale_report.c). It runs on datapath's
 * topology, processes and counters (datapath.h), on a veth pair as many
 * queues wide as its widest row.
 */
#ifndef UCM_BENCH_SCALE_H
#define UCM_BENCH_SCALE_H

#include "datapath.h"

/* Widths 1..16: a generator per queue beside ucpumapd under MAX_KIDS, and
 * the sink's sockets. */
#define SCALE_MAX_WIDTH		16
#define SCALE_MAX_ROUNDS	20
/* The rows scale.c defines, at most (its rowdefs[] checks). */
#define SCALE_MAX_ROWS		16
/* The light queues' sinks of the flood rows: port LIGHT_PORT0 + queue. */
#define LIGHT_PORT0		9100

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
 * workers. */
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
	double sent[SCALE_MAX_ROUNDS], dst[SCALE_MAX_ROUNDS];
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
};

struct scale_cfg {
	int rounds;
	double seconds;
	const char *json, *chart, *widths_s, *rowlist, *cpus_s;
	int widths[SCALE_MAX_WIDTH], nwidths;
	int cpus[APP_MAX_CPUS], ncpus;
	unsigned long flows, light_rate;
	bool shared, want[SCALE_MAX_ROWS];
};

/* A width that did not run, and why. */
struct scale_skip {
	int width;
	char why[160];
};

struct scale_run {
	struct scale_cfg cfg;
	struct bench_run br;		/* the topology, the processes, the counters */
	struct scale_cell *cells;
	int ncells, nrounds;
	struct scale_skip skip[SCALE_MAX_WIDTH];
	int nskip;
	int veth_queues;
	/* The running cell's CPU lists as text, for ucpumapd's command line
	 * (place_cfg()) */
	char wk_s[256], rx_s[256], q_s[256];
};

/* scale.c */
const struct scale_rowdef *scale_rowdefs(int *n);
/* The cell of row @name at width @w, or NULL. */
const struct scale_cell *scale_cell_of(const struct scale_run *sr, const char *name, int w);

/* scale_report.c */
void scale_report(const struct scale_run *sr);
int scale_json(const struct scale_run *sr);
void scale_chart(const struct scale_run *sr);

#endif /* UCM_BENCH_SCALE_H */
