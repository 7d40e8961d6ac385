/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A very small unit-test harness. Each test binary holds a table of cases;
 * every case prints exactly one line, "PASS: <binary>/<case>",
 * "FAIL: <binary>/<case>: <why>" or "SKIP: <binary>/<case>: <why>", which
 * tests/run-tests.sh counts. The exit code is 1 when any case failed.
 *
 *	static int test_foo(void) { UT_ASSERT(x == 1, "x is %d", x); return 0; }
 *	static const struct ut_case cases[] = { UT_CASE(test_foo), {} };
 *	int main(int argc, char **argv) { return ut_main(argc, argv, cases); }
 *
 * A case returns 0 to pass, UT_SKIP after ut_skip_reason() to skip, and
 * anything else (UT_ASSERT does it) to fail. `<binary> -l` lists the cases,
 * `<binary> NAME...` runs only those; a NAME it does not have is a FAIL
 * line listing the ones it has, and then nothing runs.
 */
#ifndef UCM_UTEST_H
#define UCM_UTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <errno.h>
#include <libgen.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <stdbool.h>
#include <sys/utsname.h>

#define UT_SKIP	77

struct ut_case {
	const char *name;
	int (*fn)(void);
};

#define UT_CASE(f)	{ #f, f }

static char ut_why[512];

static inline void ut_fail_reason(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ut_why, sizeof(ut_why), fmt, ap);
	va_end(ap);
}

#define ut_skip_reason ut_fail_reason

#define UT_ASSERT(cond, fmt, ...)					\
	do {								\
		if (!(cond)) {						\
			ut_fail_reason("%s:%d: %s: " fmt, __FILE__,	\
				       __LINE__, #cond, ##__VA_ARGS__);	\
			return 1;					\
		}							\
	} while (0)

/* Helpers the threaded tests share: a millisecond clock, a sleep, and the
 * CPUs this process may run on. */
static inline uint64_t ut_ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void ut_msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Whether the running kernel is MAJ.MIN or later (uname's release): a
 * skip for a kernel feature is taken only where the kernel lacks it. */
static inline bool ut_kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > maj || (a == maj && b >= min);
}

static inline int ut_usable_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0, c;

	sched_getaffinity(0, sizeof(set), &set);
	for (c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

/* The names asked for that are no case: a FAIL line each, with the cases. */
static inline int ut_unknown(const char *prog, int argc, char **argv,
			     const struct ut_case *cases)
{
	int bad = 0, i, j;

	for (j = 1; j < argc; j++) {
		for (i = 0; cases[i].name && strcmp(argv[j], cases[i].name); i++)
			;
		if (cases[i].name)
			continue;
		printf("FAIL: %s/%s: no such case; the cases:", prog, argv[j]);
		for (i = 0; cases[i].name; i++)
			printf(" %s", cases[i].name);
		printf("\n");
		bad++;
	}
	return bad;
}

static inline int ut_main(int argc, char **argv, const struct ut_case *cases)
{
	const char *prog = basename(argv[0]);
	int failed = 0, i, j;

	if (argc > 1 && !strcmp(argv[1], "-l")) {
		for (i = 0; cases[i].name; i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	if (ut_unknown(prog, argc, argv, cases))
		return 1;
	for (i = 0; cases[i].name; i++) {
		int ret, want = argc <= 1;

		for (j = 1; j < argc && !want; j++)
			want = !strcmp(argv[j], cases[i].name);
		if (!want)
			continue;
		ut_why[0] = '\0';
		ret = cases[i].fn();
		if (ret == 0) {
			printf("PASS: %s/%s\n", prog, cases[i].name);
		} else if (ret == UT_SKIP) {
			printf("SKIP: %s/%s: %s\n", prog, cases[i].name, ut_why);
		} else {
			printf("FAIL: %s/%s: %s\n", prog, cases[i].name,
			       ut_why[0] ? ut_why : "failed");
			failed++;
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#endif /* UCM_UTEST_H */
