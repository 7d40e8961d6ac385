/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumapd's output lines (journal.c): under journald each line of stdout
 * and stderr starts with its priority, as sd-daemon(3) reads it ("<6>");
 * elsewhere, with --timestamps, with the time it was written; otherwise
 * the streams are left as they are.
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
	OUT_WARNING = 4,	/* the library's warnings */
	OUT_NOTICE = 5,		/* the library's notices (UCM_LOG_INFO) */
	OUT_INFO = 6,		/* stdout: the banner, the statistics, the closing lines */
	OUT_DEBUG = 7,		/* -v: the library's debug messages */
};

enum out_mode {
	OUT_PLAIN,		/* as written */
	OUT_JOURNAL,		/* "<N>" */
	OUT_TIME,		/* "2026-12-04T23:20:01.123Z " (UTC, milliseconds) */
};

/* The priority of a library message of @level. */
int out_prio(enum ucm_log_level level);
/* A line's prefix in @mode, given its priority and the time @ts
 * (CLOCK_REALTIME) into @buf: its length (0 in OUT_PLAIN). */
size_t out_prefix(char *buf, size_t len, enum out_mode mode, int prio,
		  const struct timespec *ts);
/* @fd is the stream JOURNAL_STREAM (@env, may be NULL) names. */
bool out_is_journal(int fd, const char *env);

/* Stdout and stderr each read by journald get priorities (before any
 * output: the parse's messages too); out_timestamps() gives the others
 * times (after the parse: --timestamps). 0, or -errno (left as they are). */
int out_init(void);
int out_timestamps(void);
/* A library message at @prio: its lines carry it. */
int out_vprint(int prio, const char *fmt, va_list ap);

#endif /* UCPUMAPD_JOURNAL_H */
