#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/run-tests.sh's count, the line `make check` ends with, run on fake
# unit tests in a build folder of this test's own:
#
#   crash-after-fail   a test that fails a case, then crashes (SIGSEGV):
#                      the crash is a failure too, said (2 failed)
#   plain-fail         a test that fails a case and exits 1: 1 failed,
#                      nothing more
#   timeout-once       a test that says "interrupted" when the time limit
#                      ends it: one failure, not two
#   timeout-silent     one the time limit ends that says nothing: one
#                      failure
#   aborted-script     a script's status other than 0 after a FAIL line
#                      (set -u's abort): a failure
#   asan-after-fail    a test built with ASan that fails a case, then
#                      reads past a block: the report is a failure too
#                      (ASan exits 1 on its own, as a failed case does)
#   self-bounded       a script that stops itself (its TERM trap's
#                      "interrupted" line, exit 1): one failure, not two
#   path-not-run       a word that names a file but no test as the runner
#                      picks them (a unit test's path): a failure, said,
#                      beside the test named rightly (1 passed, 1 failed)
#   stale-pid          tests/lib.sh's cleanup stops a process it started,
#                      and leaves one whose pid it registered but whose
#                      start time differs (the pid given to another since)
#
# No root. One PASS/FAIL/SKIP line per case.
set -u
BUILD=${BUILD:-build}
name=test-runner
cases="crash-after-fail plain-fail timeout-once timeout-silent aborted-script asan-after-fail self-bounded path-not-run stale-pid"
cd "$(dirname "$0")/../.."
. tests/lib.sh

# fake NAME BODY: an executable test NAME in $tmp/b/tests running BODY.
fake() {
	mkdir -p "$tmp/b/tests"
	printf '#!/bin/bash\n%s\n' "$2" > "$tmp/b/tests/$1"
	chmod +x "$tmp/b/tests/$1"
}

# runner CASE WANT TIMEOUT TEST: run-tests' last line for TEST is WANT.
runner() {
	local last
	BUILD=$tmp/b TEST_TIMEOUT=$3 timeout 30 sh tests/run-tests.sh "$4" > "$tmp/$1.log" 2>&1
	last=$(tail -1 "$tmp/$1.log")
	if [ "$last" = "$2" ]; then
		ok "$1" "$last"
	else
		bad "$1" "'$last', want '$2': $(grep -v '^#' "$tmp/$1.log" | tr '\n' '|')"
	fi
}

case_crash_after_fail() {
	fake test-zz1 'echo "PASS: test-zz1/a"; echo "FAIL: test-zz1/b: no"; kill -SEGV $$'
	runner crash-after-fail "1 passed, 2 failed" 10 test-zz1
}

case_plain_fail() {
	fake test-zz2 'echo "PASS: test-zz2/a"; echo "FAIL: test-zz2/b: no"; exit 1'
	runner plain-fail "1 passed, 1 failed" 10 test-zz2
}

# A test the time limit ends that says nothing itself (a hung unit test):
# still one failure.
case_timeout_silent() {
	fake test-zz6 'echo "PASS: test-zz6/a"; sleep 20'
	runner timeout-silent "1 passed, 1 failed" 1 test-zz6
}

case_timeout_once() {
	fake test-zz3 'trap "echo \"FAIL: test-zz3: interrupted\"; exit 1" TERM
echo "PASS: test-zz3/a"; sleep 20 & wait'
	runner timeout-once "1 passed, 1 failed" 1 test-zz3
}

case_aborted_script() {
	mkdir -p "$tmp/apps"
	printf '#!/bin/bash\nset -u\necho "FAIL: test-zz4/a: no"\necho "$nosuch"\necho "PASS: test-zz4/b"\n' \
		> "$tmp/apps/test-zz4.sh"
	UCM_TEST_APPS=$tmp/apps runner aborted-script "0 passed, 2 failed" 10 test-zz4
}

case_asan_after_fail() {
	mkdir -p "$tmp/b/tests"
	printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' \
		'int main(void) { volatile char *p = malloc(8); puts("PASS: test-zz5/a");' \
		'puts("FAIL: test-zz5/b: no"); fflush(stdout); return p[8]; }' > "$tmp/zz5.c"
	if ! ${CC:-cc} -fsanitize=address -g -o "$tmp/b/tests/test-zz5" "$tmp/zz5.c" 2> "$tmp/zz5.log"; then
		skip asan-after-fail "${CC:-cc} cannot build with -fsanitize=address: $(head -1 "$tmp/zz5.log")"
		return
	fi
	runner asan-after-fail "1 passed, 2 failed" 30 test-zz5
}

# alive PID: running (a zombie is not: no one may reap an orphan here).
alive() {
	local st
	st=$(ps -o stat= -p "$1") && [ "${st:0:1}" != Z ]
}

case_self_bounded() {
	mkdir -p "$tmp/apps"
	printf '#!/bin/bash\nname=test-zz8\n. tests/lib.sh\necho "PASS: test-zz8/a"\nkill -TERM $$\necho "PASS: test-zz8/b"\n' \
		> "$tmp/apps/test-zz8.sh"
	UCM_TEST_APPS=$tmp/apps runner self-bounded "1 passed, 1 failed" 10 test-zz8
}

case_path_not_run() {
	fake test-zz7 'echo "PASS: test-zz7/a"'
	runner path-not-run "1 passed, 1 failed" 10 "test-zz7 $tmp/b/tests/test-zz7"
}

case_stale_pid() {
	local a b t0 why=
	sleep 20 &
	a=$!
	lib_pid $a
	# Not this shell's child, as a process that took a stale pid is not.
	b=$(sleep 30 > /dev/null 2>&1 & echo $!)
	lib_pid $b
	lib_start[$b]=1	# as if ours had ended and its pid gone to this one
	# Stopped, not waited for: stop_pid ends in a wait, which a
	# process never signalled would hold for its 20 s.
	t0=$SECONDS
	stop_pid $a 10
	[ $((SECONDS - t0)) -le 3 ] || why="the registered process was not signalled (waited $((SECONDS - t0)) s);"
	stop_pid $b 10
	alive $a && why="$why the registered process lives on;"
	alive $b || why="$why a pid registered for another start time was signalled;"
	kill $b 2> /dev/null
	if [ -z "$why" ]; then ok stale-pid; else bad stale-pid "$why"; fi
}

lib_run_cases "$@"
