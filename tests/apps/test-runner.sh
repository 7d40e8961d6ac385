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
#   aborted-script     a script's status other than 0 after a FAIL line
#                      (set -u's abort): a failure
#
# No root. One PASS/FAIL/SKIP line per case.
set -u
BUILD=${BUILD:-build}
name=test-runner
cases="crash-after-fail plain-fail timeout-once aborted-script"
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

lib_run_cases "$@"
