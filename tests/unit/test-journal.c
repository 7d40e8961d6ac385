// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's output lines (apps/ucpumapd/journal.c, compiled in here: the
 * daemon's files are not a library): the priorities, the prefixes, which
 * descriptor is the journal's, and a stream's lines each with its prefix.
 */
#include <fcntl.h>
#include <sys/stat.h>
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

static const struct ut_case cases[] = {
	UT_CASE(test_prio),
	UT_CASE(test_prefix),
	UT_CASE(test_is_journal),
	UT_CASE(test_stream),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
