// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's output lines (apps/ucpumapd/journal.c, compiled in here: the
 * daemon's files are not a library): the priorities, the prefixes, which
 * descriptor is the journal's, a stream's lines each with its prefix, and
 * when the lines get times (off journald by default, the options and
 * UCPUMAPD_TIMESTAMPS), each in a child whose stdout and stderr are a file.
 */
#include <fcntl.h>
#include <regex.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../../apps/ucpumapd/journal.c"
#include "utest.h"

static int test_prio(void)
{
	UT_ASSERT(out_prio(UCM_LOG_WARN) == 4, "warn: %d", out_prio(UCM_LOG_WARN));
	UT_ASSERT(out_prio(UCM_LOG_INFO) == 5, "info: %d", out_prio(UCM_LOG_INFO));
	UT_ASSERT(out_prio(UCM_LOG_DEBUG) == 7, "debug: %d", out_prio(UCM_LOG_DEBUG));
	UT_ASSERT(out_std[0].prio == 6 && out_std[1].prio == 3, "stdout %d, stderr %d",
		  out_std[0].prio, out_std[1].prio);
	return 0;
}

static int test_prefix(void)
{
	struct timespec ts = { .tv_sec = 1733354409, .tv_nsec = 243999999 };
	char buf[64];
	size_t n;

	n = out_prefix(buf, sizeof(buf), OUT_JOURNAL, 6, &ts);
	UT_ASSERT(n == 3 && !strcmp(buf, "<6>"), "journal: %zu '%s'", n, buf);
	n = out_prefix(buf, sizeof(buf), OUT_TIME, 3, &ts);
	UT_ASSERT(n == 25 && !strcmp(buf, "2024-12-04T23:20:09.243Z "), "time: %zu '%s'", n, buf);
	ts.tv_nsec = 7000000;
	out_prefix(buf, sizeof(buf), OUT_TIME, 3, &ts);
	UT_ASSERT(!strcmp(buf, "2024-12-04T23:20:09.007Z "), "milliseconds: '%s'", buf);
	n = out_prefix(buf, sizeof(buf), OUT_PLAIN, 3, &ts);
	UT_ASSERT(n == 0 && !buf[0], "plain: %zu", n);
	return 0;
}

static int test_is_journal(void)
{
	char path[] = "/tmp/test-journal-XXXXXX", env[64];
	int fd = mkstemp(path), other = open("/dev/null", O_WRONLY);
	struct stat st;

	UT_ASSERT(fd >= 0 && other >= 0 && !fstat(fd, &st), "files");
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	UT_ASSERT(out_is_journal(fd, env), "its own stream, %s", env);
	UT_ASSERT(!out_is_journal(other, env), "another file");
	UT_ASSERT(!out_is_journal(fd, NULL), "no JOURNAL_STREAM");
	UT_ASSERT(!out_is_journal(fd, "12"), "no inode");
	strcat(env, "x");
	UT_ASSERT(!out_is_journal(fd, env), "trailing garbage");
	close(other);
	close(fd);
	unlink(path);
	return 0;
}

/* A stream of ours: each line its prefix, a line written in pieces one,
 * a message's priority on each of its lines. */
static int test_stream(void)
{
	char path[] = "/tmp/test-journal-XXXXXX", got[256] = "";
	int fd = mkstemp(path);
	struct out_stream s = { .fd = fd, .prio = 6, .next_prio = -1, .at_start = true };
	FILE *dummy = fopen("/dev/null", "w"), *f = dummy;
	ssize_t n;

	UT_ASSERT(fd >= 0 && dummy, "files");
	UT_ASSERT(!out_wrap(&s, OUT_JOURNAL, &f) && f != dummy, "wrapped");
	fprintf(f, "one\ntw");
	fprintf(f, "o\n");
	s.next_prio = 4;
	fprintf(f, "three\nfour\n");
	fflush(f);
	s.next_prio = -1;
	fprintf(f, "five");
	fclose(f);
	n = pread(fd, got, sizeof(got) - 1, 0);
	UT_ASSERT(n > 0 && !strcmp(got, "<6>one\n<6>two\n<4>three\n<4>four\n<6>five"),
		  "got '%s'", got);
	fclose(dummy);
	close(fd);
	unlink(path);
	return 0;
}

/* A reader that takes nothing (a full pipe): each line waits at most
 * OUT_WAIT_MS, the first only, and is left out; once the reader takes
 * again, a line says how many were, then the next goes. */
static int test_stalled_reader(void)
{
	struct out_stream s = { .prio = 6, .next_prio = -1, .at_start = true };
	FILE *dummy = fopen("/dev/null", "w"), *f = dummy;
	char buf[4096], got[512] = "";
	struct timespec t0, t1;
	int p[2], fl;
	double ms;
	ssize_t n;

	UT_ASSERT(dummy && !pipe(p), "pipe");
	fl = fcntl(p[1], F_GETFL);
	fcntl(p[1], F_SETFL, fl | O_NONBLOCK);
	memset(buf, 'x', sizeof(buf));
	while (write(p[1], buf, sizeof(buf)) > 0)
		;
	fcntl(p[1], F_SETFL, fl);	/* blocking, as a stdout is */
	s.fd = p[1];
	UT_ASSERT(!out_wrap(&s, OUT_PLAIN, &f) && f != dummy, "wrapped");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	alarm(5);	/* a writer the full pipe holds: fail, not hang */
	fprintf(f, "one\n");
	fprintf(f, "two\nthr");
	fprintf(f, "ee\n");
	alarm(0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	UT_ASSERT(s.dropped == 3 && ms < 5 * OUT_WAIT_MS, "%lu lines left out in %.0f ms (want 3, "
		  "within %d ms)", s.dropped, ms, 5 * OUT_WAIT_MS);
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	while (read(p[0], buf, sizeof(buf)) > 0)
		;
	fprintf(f, "four\n");
	n = read(p[0], got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = '\0';
	UT_ASSERT(!strcmp(got, "ucpumapd: 3 lines left out here: their reader made no room for 200 ms\nfour\n"),
		  "got '%s'", got);
	UT_ASSERT(!s.dropped, "%lu still counted", s.dropped);
	fclose(f);
	fclose(dummy);
	close(p[0]);
	close(p[1]);
	return 0;
}

/* A terminal whose reader stopped reading (a frozen ssh session): its
 * POLLOUT promises some room, not a line's. Lines of 300 bytes past its
 * buffer still go or are left out within the wait, none holds the
 * writer; once read, the note comes on a line of its own (after a
 * newline where a line was cut), then the next line. */
static int test_stalled_terminal(void)
{
	struct out_stream s = { .prio = 6, .next_prio = -1, .at_start = true };
	FILE *dummy = fopen("/dev/null", "w"), *f = dummy;
	char line[301], got[65536], *note;
	int m = posix_openpt(O_RDWR | O_NOCTTY), sl = -1;
	struct timespec t0, t1;
	struct termios tio;
	size_t have = 0;
	ssize_t n;
	double ms;

	UT_ASSERT(dummy && m >= 0 && !grantpt(m) && !unlockpt(m), "a pty: %s", strerror(errno));
	sl = open(ptsname(m), O_WRONLY | O_NOCTTY);
	UT_ASSERT(sl >= 0 && !tcgetattr(sl, &tio), "its other end: %s", strerror(errno));
	cfmakeraw(&tio);	/* the bytes as written: no \r added */
	UT_ASSERT(!tcsetattr(sl, TCSANOW, &tio), "raw");
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	s.fd = sl;
	UT_ASSERT(!out_wrap(&s, OUT_PLAIN, &f) && f != dummy && s.wfd != sl, "wrapped, its own fd");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	alarm(5);	/* a writer the terminal holds: fail, not hang */
	for (int i = 0; i < 400; i++)
		fputs(line, f);
	alarm(0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	UT_ASSERT(s.dropped > 0 && ms < 5 * OUT_WAIT_MS, "%lu of 400 lines left out in %.0f ms "
		  "(want some, within %d ms)", s.dropped, ms, 5 * OUT_WAIT_MS);
	UT_ASSERT(!(fcntl(sl, F_GETFL) & O_NONBLOCK), "the descriptor given made non-blocking");
	fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
	while (read(m, got, sizeof(got)) > 0)
		;
	fputs("four\n", f);
	usleep(10000);
	while ((n = read(m, got + have, sizeof(got) - 1 - have)) > 0)
		have += n;
	got[have] = '\0';
	note = strstr(got, "ucpumapd: ");
	UT_ASSERT(note && strstr(note, " lines left out here: their reader made no room for 200 ms\nfour\n"),
		  "got '%.200s'", got);
	UT_ASSERT(note == got || note[-1] == '\n', "the note after a cut line's bytes: '%.200s'", got);
	fclose(f);
	fclose(dummy);
	close(sl);
	close(m);
	return 0;
}

/* At the exit (out_finish()): lines left out and not said yet are said
 * once the reader makes room, in a child whose stdout is a pipe filled
 * to the brim; the two pipes beside it say when each step is done. */
static int test_finish_says(void)
{
	int out[2], done[2], go[2], st;
	char buf[65536], got[4096] = "";
	size_t have = 0;
	ssize_t n;
	pid_t pid;

	UT_ASSERT(!pipe(out) && !pipe(done) && !pipe(go), "pipes");
	fflush(NULL);
	pid = fork();
	if (!pid) {
		close(out[0]);
		if (dup2(out[1], STDOUT_FILENO) < 0)
			_exit(1);
		fcntl(STDOUT_FILENO, F_SETFL, O_NONBLOCK);
		memset(buf, 'x', sizeof(buf));
		while (write(STDOUT_FILENO, buf, sizeof(buf)) > 0)
			;
		fcntl(STDOUT_FILENO, F_SETFL, 0);
		unsetenv("JOURNAL_STREAM");
		if (out_init() || out_timestamps(OUT_TS_NO))
			_exit(1);
		printf("one\ntwo\n");
		fflush(stdout);
		if (write(done[1], "d", 1) != 1 || read(go[0], buf, 1) != 1)
			_exit(1);
		_exit(out_finish() ? 2 : 0);
	}
	/* The child's ends closed here: its early exit is an EOF, not a
	 * wait; and a child the full pipe holds ends the test (fail, not
	 * hang). */
	close(out[1]);
	close(done[1]);
	close(go[0]);
	alarm(10);
	UT_ASSERT(pid > 0 && read(done[0], buf, 1) == 1, "the child's lines");
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	while (read(out[0], buf, sizeof(buf)) > 0)
		;
	UT_ASSERT(write(go[1], "g", 1) == 1, "go");
	UT_ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		  "the child: status %d", st);
	alarm(0);
	while ((n = read(out[0], got + have, sizeof(got) - 1 - have)) > 0)
		have += n;
	got[have] = '\0';
	UT_ASSERT(strstr(got, "ucpumapd: 2 lines left out here: their reader made no room for 200 ms\n"),
		  "at the exit: '%s'", got);
	close(out[0]);
	close(done[0]);
	close(go[1]);
	return 0;
}

/* No descriptor of its own to be had (EMFILE here; no /proc, a FIFO's
 * reader gone): the stream's own, blocking, then waits for room before
 * each write, and a full pipe still holds a line 200 ms, not for ever
 * (the child's alarm would end it). */
static int test_stalled_no_reopen(void)
{
	int out[2], st;
	char buf[65536];
	pid_t pid;

	UT_ASSERT(!pipe(out), "pipe");
	fflush(NULL);
	pid = fork();
	if (!pid) {
		struct rlimit rl = { 3, 3 };	/* 0-2: no descriptor past them */

		close(out[0]);
		if (dup2(out[1], STDOUT_FILENO) < 0)
			_exit(1);
		close(out[1]);
		fcntl(STDOUT_FILENO, F_SETFL, O_NONBLOCK);
		memset(buf, 'x', sizeof(buf));
		while (write(STDOUT_FILENO, buf, sizeof(buf)) > 0)
			;
		fcntl(STDOUT_FILENO, F_SETFL, 0);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(1);
		alarm(5);
		unsetenv("JOURNAL_STREAM");
		if (out_init() || out_timestamps(OUT_TS_NO))
			_exit(1);
		if (!out_std[0].blocking)
			_exit(3);
		printf("one\n");
		fflush(stdout);
		_exit(out_std[0].dropped == 1 ? 0 : 2);
	}
	UT_ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid, "the child");
	UT_ASSERT(WIFEXITED(st) && !WEXITSTATUS(st), "the child: %s %d (3: reopened all the same; "
		  "SIGALRM 14: held)", WIFEXITED(st) ? "exit" : "killed by",
		  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	close(out[0]);
	close(out[1]);
	return 0;
}

/* The options over the variable; the variable's words, systemd's. */
static int test_ts_wanted(void)
{
	static const struct {
		enum out_when when;
		const char *env;
		int want;
	} t[] = {
		{ OUT_TS_DEFAULT, NULL, 1 }, { OUT_TS_DEFAULT, "", 1 },
		{ OUT_TS_DEFAULT, "yes", 1 }, { OUT_TS_DEFAULT, "1", 1 },
		{ OUT_TS_DEFAULT, "On", 1 }, { OUT_TS_DEFAULT, "no", 0 },
		{ OUT_TS_DEFAULT, "0", 0 }, { OUT_TS_DEFAULT, "OFF", 0 },
		{ OUT_TS_DEFAULT, "false", 0 }, { OUT_TS_DEFAULT, "maybe", -1 },
		{ OUT_TS_DEFAULT, "no ", -1 }, { OUT_TS_YES, "no", 1 },
		{ OUT_TS_YES, NULL, 1 }, { OUT_TS_NO, NULL, 0 }, { OUT_TS_NO, "yes", 0 },
		{ OUT_TS_NO, "maybe", 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int got = out_ts_wanted(t[i].when, t[i].env);

		UT_ASSERT(got == t[i].want, "when %d, %s='%s': %d, want %d", t[i].when,
			  OUT_TS_ENV, t[i].env ?: "(unset)", got, t[i].want);
	}
	return 0;
}

/*
 * As the daemon's main() does, in a child whose stdout and stderr both go
 * to a file: out_init() (JOURNAL_STREAM naming that file when @journal),
 * out_timestamps(@when) with UCPUMAPD_TIMESTAMPS @env (NULL: unset), then
 * a line on each. The file's text into @got; 0, or -1.
 */
static int child_lines(bool journal, enum out_when when, const char *env, char *got,
		       size_t len)
{
	char path[] = "/tmp/test-journal-XXXXXX", js[64];
	int fd = mkstemp(path), st;
	struct stat sb;
	ssize_t n;
	pid_t pid;

	if (fd < 0 || fstat(fd, &sb))
		return -1;
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)sb.st_dev,
		 (unsigned long long)sb.st_ino);
	fflush(NULL);	/* nothing of ours written twice */
	pid = fork();
	if (!pid) {
		if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(1);
		if (journal)
			setenv("JOURNAL_STREAM", js, 1);
		else
			unsetenv("JOURNAL_STREAM");
		if (env)
			setenv(OUT_TS_ENV, env, 1);
		else
			unsetenv(OUT_TS_ENV);
		if (out_init() || out_timestamps(when))
			_exit(1);
		printf("out\n");
		fflush(stdout);	/* plain: a file's stdout is not line-buffered */
		fprintf(stderr, "err\n");
		fflush(stderr);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		close(fd);
		unlink(path);
		return -1;
	}
	n = pread(fd, got, len - 1, 0);
	got[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return 0;
}

#define STAMP	"[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}Z "

static bool matches(const char *text, const char *re)
{
	regex_t r;
	bool m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		return false;
	m = !regexec(&r, text, 0, NULL, 0);
	regfree(&r);
	return m;
}

/* Off journald every line its time by default; under journald its
 * priority and no time, whatever the options; the off switches, plain. */
static int test_ts_lines(void)
{
	static const char stamped[] = "^" STAMP "out\n" STAMP "err\n$";
	char got[512];

	UT_ASSERT(!child_lines(false, OUT_TS_DEFAULT, NULL, got, sizeof(got)), "child");
	UT_ASSERT(matches(got, stamped), "by default: '%s'", got);
	UT_ASSERT(!child_lines(true, OUT_TS_DEFAULT, NULL, got, sizeof(got)), "child");
	UT_ASSERT(!strcmp(got, "<6>out\n<3>err\n"), "under journald: '%s'", got);
	UT_ASSERT(!child_lines(true, OUT_TS_YES, NULL, got, sizeof(got)), "child");
	UT_ASSERT(!strcmp(got, "<6>out\n<3>err\n"), "under journald, --timestamps: '%s'", got);
	UT_ASSERT(!child_lines(false, OUT_TS_NO, NULL, got, sizeof(got)), "child");
	UT_ASSERT(!strcmp(got, "out\nerr\n"), "--no-timestamps: '%s'", got);
	UT_ASSERT(!child_lines(false, OUT_TS_DEFAULT, "no", got, sizeof(got)), "child");
	UT_ASSERT(!strcmp(got, "out\nerr\n"), "%s=no: '%s'", OUT_TS_ENV, got);
	UT_ASSERT(!child_lines(false, OUT_TS_YES, "no", got, sizeof(got)), "child");
	UT_ASSERT(matches(got, stamped), "--timestamps over %s=no: '%s'", OUT_TS_ENV, got);
	UT_ASSERT(!child_lines(false, OUT_TS_DEFAULT, "maybe", got, sizeof(got)), "child");
	UT_ASSERT(matches(got, "^" STAMP "ucpumapd: " OUT_TS_ENV "='maybe' is neither yes nor no"),
		  "a word it does not know, said: '%s'", got);
	UT_ASSERT(matches(got, "\n" STAMP "out\n" STAMP "err\n$"), "and the default: '%s'", got);
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_prio),
	UT_CASE(test_prefix),
	UT_CASE(test_is_journal),
	UT_CASE(test_stream),
	UT_CASE(test_stalled_reader),
	UT_CASE(test_stalled_terminal),
	UT_CASE(test_finish_says),
	UT_CASE(test_stalled_no_reopen),
	UT_CASE(test_ts_wanted),
	UT_CASE(test_ts_lines),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
