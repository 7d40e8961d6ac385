// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's output lines (journal.h): stdout and stderr replaced by
 * streams of ours (fopencookie(3); glibc's stdout and stderr are plain
 * variables) whose write puts the prefix in front of each line and hands
 * both to the descriptor in one writev(). Line-buffered, so each line
 * goes whole as it is finished, as the statistics' readers expect.
 *
 * Concurrency contract: a stream's state (struct out_stream) is written
 * only inside its FILE's lock: the cookie's write runs under it (stdio
 * takes it), and out_vprint() takes it with flockfile() around setting
 * next_prio, printing, flushing and clearing it; so a library message
 * from any thread gets its own priority on each of its lines, and another
 * thread's fprintf(stderr) waits. The streams are set up once, on the
 * main thread, before any other thread starts.
 *
 * Why the time is UTC with milliseconds (ISO 8601) and not seconds since
 * the start: it lines up with the kernel's, the peers' and the other
 * services' logs, and across restarts, which are what an operator reads
 * these lines against; milliseconds order the lines of one second. Why by
 * default off journald: a line of a file, a pipe or another service
 * manager's log has no other time (journald's has its own, so there the
 * priority goes in front instead).
 *
 * A reader that takes nothing (a pager nobody pages, a terminal stopped
 * with ^S, journald stalled) must not stop the thread that writes, the
 * control thread among them, which takes the signals, watches for faults
 * and answers --status: a line waits OUT_WAIT_MS for room, then is left
 * out, and so is every line after it until one goes (no wait then), after
 * a line that says how many were (out_finish() tries that line at the
 * exit). The waits are ours: a terminal or a pipe is written through a
 * descriptor of our own opened without blocking (its POLLOUT promises
 * some room, not a line's), a socket with MSG_DONTWAIT; the descriptor
 * the daemon was given stays as it was, the shell's too.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "journal.h"

struct out_stream {
	FILE *f;		/* ours, once made; NULL: the stream as it was */
	int fd;
	int wfd;		/* what out_write() writes to: @fd, or ours of it */
	bool sock;		/* @fd is a socket: MSG_DONTWAIT */
	bool blocking;		/* @wfd is @fd, a terminal's or a pipe's */
	bool mid;		/* a line left out after part of it went */
	enum out_mode mode;
	int prio;		/* its lines' priority */
	int next_prio;		/* -1, or a library message's (out_vprint) */
	bool at_start;		/* the next byte begins a line */
	bool cut;		/* the line being written is left out */
	unsigned long dropped;	/* lines left out since the last that went */
};

/* How long a line waits for its reader to make room: journald's writes
 * to disk take some ms; a reader gone for this long takes nothing. */
#define OUT_WAIT_MS	200

static struct out_stream out_std[2] = {
	{ .fd = STDOUT_FILENO, .prio = OUT_INFO, .next_prio = -1, .at_start = true },
	{ .fd = STDERR_FILENO, .prio = OUT_ERR, .next_prio = -1, .at_start = true },
};

int out_prio(enum ucm_log_level level)
{
	switch (level) {
	case UCM_LOG_WARN:
		return OUT_WARNING;
	case UCM_LOG_INFO:
		return OUT_NOTICE;
	default:
		return OUT_DEBUG;
	}
}

size_t out_prefix(char *buf, size_t len, enum out_mode mode, int prio,
		  const struct timespec *ts)
{
	struct tm tm;
	int n = 0;

	if (mode == OUT_JOURNAL) {
		n = snprintf(buf, len, "<%d>", prio);
	} else if (mode == OUT_TIME && gmtime_r(&ts->tv_sec, &tm)) {
		n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ ",
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			     tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000000);
	} else if (len) {
		buf[0] = '\0';
	}
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len ? len - 1 : 0;
}

bool out_is_journal(int fd, const char *env)
{
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (!env || sscanf(env, "%llu:%llu%c", &dev, &ino, &tail) != 2)
		return false;
	return !fstat(fd, &st) && st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

/* systemd's words for a boolean (parse_boolean()), so that its users'
 * habits work. */
static const char *const ts_yes[] = { "1", "yes", "y", "true", "t", "on", NULL };
static const char *const ts_no[] = { "0", "no", "n", "false", "f", "off", NULL };

static bool word_in(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (!strcasecmp(s, *words))
			return true;
	return false;
}

int out_ts_wanted(enum out_when when, const char *env)
{
	if (when != OUT_TS_DEFAULT)
		return when == OUT_TS_YES;
	if (!env || !*env || word_in(env, ts_yes))
		return 1;
	return word_in(env, ts_no) ? 0 : -1;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* All of @iov to the stream: 0, 1 when its reader made no room within
 * @wait_ms (what is left is not written; s->mid when part went), or -1. */
static int write_all(struct out_stream *s, struct iovec *iov, int n, int wait_ms)
{
	long long end = mono_ms() + wait_ms;
	bool some = false;

	while (n) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = n };
		struct pollfd p = { .fd = s->wfd, .events = POLLOUT };
		long long left = end - mono_ms();
		ssize_t w;

		/* Blocking (its reopening failed): a wait for room first, a
		 * pipe's at least is then a line's. */
		if (s->blocking && (left < 0 || !poll(&p, 1, (int)left))) {
			s->mid |= some;
			return 1;
		}
		w = s->sock ? sendmsg(s->wfd, &m, MSG_DONTWAIT) : writev(s->wfd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			left = end - mono_ms();
			if (left <= 0 || !poll(&p, 1, (int)left)) {
				s->mid |= some;
				return 1;
			}
			continue;
		}
		if (w <= 0)
			return -1;
		some = true;
		for (; n && (size_t)w >= iov->iov_len; iov++, n--)
			w -= iov->iov_len;
		if (n) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= w;
		}
	}
	return 0;
}

/* The line that says how many lines @s left out (after a newline, where
 * one was cut), within @wait_ms: 0 once it went. */
static int note_dropped(struct out_stream *s, int wait_ms)
{
	struct timespec ts = {};
	char note[192];
	struct iovec v = { note, 0 };

	if (s->mid)
		note[v.iov_len++] = '\n';
	if (s->mode == OUT_TIME)
		clock_gettime(CLOCK_REALTIME, &ts);
	v.iov_len += out_prefix(note + v.iov_len, sizeof(note) - v.iov_len, s->mode, OUT_WARNING,
				&ts);
	v.iov_len += snprintf(note + v.iov_len, sizeof(note) - v.iov_len,
			      "ucpumapd: %lu lines left out here: their reader made no room for %d ms\n",
			      s->dropped, OUT_WAIT_MS);
	if (write_all(s, &v, 1, wait_ms))
		return -1;
	s->dropped = 0;
	s->mid = false;
	return 0;
}

/* The cookie's write: each line with its prefix. */
static ssize_t out_write(void *cookie, const char *buf, size_t size)
{
	struct out_stream *s = cookie;
	size_t done = 0;
	int r;

	while (done < size) {
		const char *nl = memchr(buf + done, '\n', size - done);
		size_t n = nl ? (size_t)(nl - (buf + done)) + 1 : size - done;
		char pre[64];
		struct timespec ts = {};
		struct iovec iov[2];
		int k = 0;

		if (s->at_start) {
			if (s->mode == OUT_TIME)
				clock_gettime(CLOCK_REALTIME, &ts);
			iov[k].iov_base = pre;
			iov[k++].iov_len = out_prefix(pre, sizeof(pre), s->mode,
						      s->next_prio >= 0 ? s->next_prio : s->prio,
						      &ts);
		}
		iov[k].iov_base = (char *)buf + done;
		iov[k++].iov_len = n;
		if (s->at_start)
			s->cut = false;
		if (s->at_start && s->dropped)
			note_dropped(s, 0);
		r = s->cut || s->dropped ? 1 : write_all(s, iov, k, OUT_WAIT_MS);
		if (r < 0)
			return done ? (ssize_t)done : -1;
		if (r > 0 && !s->cut) {
			s->cut = true;
			s->dropped++;
		}
		done += n;
		s->at_start = nl != NULL;
	}
	return size;
}

/* Stream @s in @mode from now on: the stdio stream it replaces is flushed
 * first, so nothing written before comes after. */
static int out_wrap(struct out_stream *s, enum out_mode mode, FILE **std)
{
	static const cookie_io_functions_t io = { .write = out_write };
	FILE *f;

	if (s->f) {
		s->mode = mode;
		return 0;
	}
	struct stat st;
	char path[32];

	f = fopencookie(s, "w", io);
	if (!f)
		return -errno;
	setvbuf(f, NULL, _IOLBF, 0);
	s->wfd = s->fd;
	if (fstat(s->fd, &st)) {
		/* unknown: written as it is */
	} else if (S_ISSOCK(st.st_mode)) {
		s->sock = true;
	} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		/* A file description of our own: O_NONBLOCK on @fd's would
		 * be the shell's too. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", s->fd);
		s->wfd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		s->blocking = s->wfd < 0;	/* no /proc, no descriptor left */
		if (s->blocking)
			s->wfd = s->fd;
	}
	fflush(*std);
	s->mode = mode;
	s->f = f;
	*std = f;
	return 0;
}

int out_init(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	int err = 0;

	if (out_is_journal(STDOUT_FILENO, env))
		err = out_wrap(&out_std[0], OUT_JOURNAL, &stdout);
	if (!err && out_is_journal(STDERR_FILENO, env))
		err = out_wrap(&out_std[1], OUT_JOURNAL, &stderr);
	return err;
}

int out_timestamps(enum out_when when)
{
	const char *env = getenv(OUT_TS_ENV);
	int want = out_ts_wanted(when, env), err = 0;
	enum out_mode m = want ? OUT_TIME : OUT_PLAIN;

	/* Wrapped without times too: the wait for the reader is ours. */
	if (out_std[0].mode == OUT_PLAIN)
		err = out_wrap(&out_std[0], m, &stdout);
	if (!err && out_std[1].mode == OUT_PLAIN)
		err = out_wrap(&out_std[1], m, &stderr);
	if (want < 0)	/* after the wrap: stamped as the lines it is about */
		out_warn("ucpumapd: %s='%s' is neither yes nor no: taken as yes, the default (off journald each line gets its time; --no-timestamps: none)\n",
			OUT_TS_ENV, env);
	return err;
}

int out_vprint(int prio, const char *fmt, va_list ap)
{
	struct out_stream *s = &out_std[1];
	int n;

	if (!s->f)
		return vfprintf(stderr, fmt, ap);
	flockfile(s->f);
	s->next_prio = prio;
	n = vfprintf(s->f, fmt, ap);
	fflush(s->f);
	s->next_prio = -1;
	funlockfile(s->f);
	return n;
}

void out_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vprint(OUT_WARNING, fmt, ap);
	va_end(ap);
}

unsigned long out_finish(void)
{
	unsigned long lost = 0;

	for (int i = 0; i < 2; i++) {
		struct out_stream *s = &out_std[i];

		if (!s->f)
			continue;
		fflush(s->f);
		flockfile(s->f);
		if (s->dropped && note_dropped(s, OUT_WAIT_MS))
			lost += s->dropped;
		funlockfile(s->f);
	}
	return lost;
}

unsigned long out_lost(void)
{
	return out_std[0].dropped;
}
