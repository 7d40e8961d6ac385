/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef UCM_BENCH_H
#define UCM_BENCH_H

/* Subcommands: each parses its own options; returns the exit status. */
int bench_engine(int argc, char **argv);
int bench_datapath(int argc, char **argv);
int bench_scale(int argc, char **argv);

#endif
