/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumapd's output lines (journal.c): under journald each line of stdout
 * and stderr starts with its priority, as sd-daemon(3) reads it ("<6>");
 * elsewhere with the time it was written (journald stamps its own lines,
 * a file, a pipe or another service manager's log does not), unless
 * --no-timestamps or UCPUMAPD_TIMESTAMPS=no says otherwise.
 *
 * Which stream journald reads: JOURNAL_STREAM holds "DEV:INO" of the
 * stream systemd connected (systemd.exec(5)); a descriptor whose fstat()
 * matches is the journal's (a redirection elsewhere is not), as
 * sd_journal_stream_fd's users check.
 */
#ifndef UCPUMAPD_JOURNAL_H
#define UCPUMAPD_JOURNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "ucpumap/log.h"

/* sd-daemon.h's priorities (syslog's). */
enum {
	OUT_ERR = 3,		/* the daemon's own stderr: refusals, faults */
	OUT_WARNING = 4,	/* warnings: the library's, and out_warn()'s */
	OUT_NOTICE = 5,		/* the library's notices (UCM_LOG_INFO) */
	OUT_INFO = 6,		/* stdout: the banner, the statistics, the closing lines */
	OUT_DEBUG = 7,		/* -v: the library's debug messages */
};

enum out_mode {
	OUT_PLAIN,		/* as written */
	OUT_JOURNAL,		/* "<N>" */
	OUT_TIME,		/* "2026-12-04T23:20:01.123Z " (UTC, milliseconds) */
};

/* When the lines off journald get times: the options' (--timestamps,
 * --no-timestamps; the last one given counts), else OUT_TS_ENV's. */
enum out_when {
	OUT_TS_DEFAULT,		/* neither option: OUT_TS_ENV, else yes */
	OUT_TS_YES,
	OUT_TS_NO,
};

/* The default's switch, as systemd's SYSTEMD_LOG_TIME: for what reads the
 * lines by their first word (the tests set it once, tests/lib.sh). */
#define OUT_TS_ENV	"UCPUMAPD_TIMESTAMPS"

/* The priority of a library message of @level. */
int out_prio(enum ucm_log_level level);
/* A line's prefix in @mode, given its priority and the time @ts
 * (CLOCK_REALTIME) into @buf: its length (0 in OUT_PLAIN). */
size_t out_prefix(char *buf, size_t len, enum out_mode mode, int prio,
		  const struct timespec *ts);
/* @fd is the stream JOURNAL_STREAM (@env, may be NULL) names. */
bool out_is_journal(int fd, const char *env);
/* Whether the lines off journald get times, given the options' @when and
 * OUT_TS_ENV's value @env (may be NULL): 1 or 0; -1 when @env is neither
 * a yes nor a no (1, the default, then holds). */
int out_ts_wanted(enum out_when when, const char *env);

/* Stdout and stderr each read by journald get priorities (before any
 * output: the parse's messages too); out_timestamps() gives the others
 * times as @when and OUT_TS_ENV say (after the parse: its messages,
 * --help, --version and --status's answer go as written). 0, or -errno
 * (left as they are). */
int out_init(void);
int out_timestamps(enum out_when when);
/* A library message at @prio: its lines carry it. */
int out_vprint(int prio, const char *fmt, va_list ap);
/* A message of ucpumapd's own after which it runs on: OUT_WARNING, where
 * the rest of stderr is OUT_ERR. */
void out_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* At the exit: each stream's lines left out said, within OUT_WAIT_MS.
 * Return: the lines left out that could not be said so. */
unsigned long out_finish(void);
/* Lines of stdout left out and not said yet (--status's answer). */
unsigned long out_lost(void);

#endif /* UCPUMAPD_JOURNAL_H */
