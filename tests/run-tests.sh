#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Runs every test of ucpumap and ends with one line "N passed, N failed"
# (", N skipped" when some were skipped). Called by `make check`.
#
#   tests/run-tests.sh [NAME[:CASE]...]
#
#   NAME       a unit test binary (test-pool) or a test script (test-xsk,
#              or its path tests/net/test-xsk.sh): all of its cases
#   NAME:CASE  that case alone; several NAME:CASE words of one NAME run
#              together, in the test's own order. A unit test's cases
#              are its functions (test-pool:test_ring_full, `BIN -l` lists
#              them), a script's the case functions it defines (its
#              header lists them; test-xsk:recv). A case that needs
#              another runs that one first; a CASE the test does not
#              have is a FAIL line that lists those it has.
#   (none)     every test
#
# Unit tests (tests/unit/test-*.c, built into $BUILD/tests/) and app tests
# (tests/apps/test-*.sh) need no root; each prints one PASS/FAIL/SKIP line
# per case. Network tests
# (tests/net/test-*.sh) need root and make their own namespaces; as
# non-root they are reported as skipped, with the reason. Every test runs
# under a time limit (TEST_TIMEOUT seconds, default 300); a timeout is a
# failure, one. A test that ends otherwise than its way is a failure too,
# whatever it printed before: a script's status other than 0 (each ends
# with lib_run_cases, which exits 0: another is an abort, as set -u's),
# a unit binary's other than 0 or 1 (a crash: an abort() of a debug
# build's frame check, a segfault, a stall's SIGALRM). Each test's output comes when it ends, after a "# start: NAME"
# line when it starts. An interrupt (SIGINT, SIGTERM, SIGHUP) ends the
# test that runs with SIGTERM (its own cleanup then runs), prints what it
# said and the counts so far, and exits 130. test-cycles starts the daemon CYCLES times: here 10 by default,
# 18 s, enough for each run's own checks (and LeakSanitizer at each exit
# under ASan); `make check-long` runs the 200 that judge growth.

BUILD=${BUILD:-build}
# A sanitizer's report is not a test's own failure: its exit status says
# so (ASan and UBSan exit 1 otherwise, as a failed case does; TSan's is 66).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86"
# The app tests' folder (tests/apps; test-runner gives fakes of its own).
APPS=${UCM_TEST_APPS:-tests/apps}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
CYCLES=${CYCLES:-10}
export CYCLES
# Sanitizer builds run slower, and TSan wants more room.
case "${SANITIZE:-}" in
thread) TEST_TIMEOUT=$((TEST_TIMEOUT * 4)) ;;
?*) TEST_TIMEOUT=$((TEST_TIMEOUT * 2)) ;;
esac

pass=0
fail=0
skip=0
log=$(mktemp)
child=
interrupted=
trap 'rm -f "$log"' EXIT
# timeout(1) runs a test in a process group of its own, so a terminal's
# ^C reaches only this script: the test hears of it from here.
on_signal() {
	interrupted=$1
	[ -z "$child" ] || kill -TERM "$child" 2> /dev/null
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

count() {
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	s=$(grep -c '^SKIP: ' "$log")
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
}

summary() {
	if [ "$skip" -gt 0 ]; then
		echo "$pass passed, $fail failed, $skip skipped"
	else
		echo "$pass passed, $fail failed"
	fi
}

run_one() {	# name, kind (unit or script), command...
	name=$1
	kind=$2
	shift 2
	if [ -n "$interrupted" ]; then
		echo "FAIL: interrupted (SIG$interrupted) before $name; it and the tests after it did not run"
		fail=$((fail + 1))
		summary
		exit 130
	fi
	: > "$log"
	t0=$(date +%s)
	echo "# start: $name"
	timeout -k 5 "$TEST_TIMEOUT" "$@" > "$log" 2>&1 &
	child=$!
	wait "$child"
	rc=$?
	# A signal ends the wait, not the test: wait for its cleanup.
	while [ -n "$interrupted" ] && kill -0 "$child" 2> /dev/null; do
		wait "$child"
		rc=$?
	done
	child=
	cat "$log"
	# Its time, for CI's budget (30 minutes for every pass).
	echo "# time: $name $(($(date +%s) - t0)) s"
	if [ -n "$interrupted" ]; then
		count
		echo "FAIL: $name: interrupted (SIG$interrupted); the tests after it did not run"
		fail=$((fail + 1))
		summary
		exit 130
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		# A script's trap says "interrupted" itself: one failure.
		if grep -q "^FAIL: $name: interrupted" "$log"; then
			echo "# $name: that interruption was the time limit, ${TEST_TIMEOUT}s"
		else
			echo "FAIL: $name: timed out after ${TEST_TIMEOUT}s"
			fail=$((fail + 1))
		fi
	elif [ $rc -ne 0 ] && ! grep -q "^FAIL: $name: interrupted" "$log" &&
		{ [ "$kind" = script ] || [ $rc -ne 1 ] || ! grep -q '^FAIL: ' "$log"; }; then
		# (A script that bounds itself says "interrupted": one failure.)
		echo "FAIL: $name: ended with status $rc after its last line above (the cases after it did not run)"
		fail=$((fail + 1))
	fi
	count
}

# picked NAME [PATH]: is the test selected by the arguments (none: every
# test is)? $cases: the cases asked for, empty for all of them.
picked() {
	cases=
	[ -z "$SELECTED" ] && return 0
	hit=1
	for w in $SELECTED; do
		case $w in
		"$1" | "${2:-$1}") cases= && return 0 ;;
		"$1":* | "${2:-$1}":*) cases="$cases ${w#*:}" hit=0 ;;
		*) continue ;;
		esac
	done
	return $hit
}
SELECTED="$*"
# Every argument must name a test as picked() takes it: a test's name, or
# a script's path as the loops below see it (any other path would pass a
# file test and then run nothing).
for w in $SELECTED; do
	t=${w%%:*}
	case $t in
	"$APPS"/test-*.sh | tests/net/test-*.sh) [ -f "$t" ] ;;
	*/*) false ;;
	*) [ -f "$BUILD/tests/$t" ] || [ -f "$APPS/$t.sh" ] || [ -f "tests/net/$t.sh" ] ;;
	esac || {
		echo "FAIL: $t: no such test (give a test's name, test-NAME, or tests/net/test-NAME.sh)"
		fail=$((fail + 1))
	}
done

for t in "$BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	picked "$name" || continue
	# $cases unquoted: the case names, one word each.
	run_one "$name" unit "$t" $cases
done

# App tests: no root.
for t in "$APPS"/test-*.sh; do
	[ -f "$t" ] || continue
	picked "$(basename "$t" .sh)" "$t" || continue
	run_one "$(basename "$t" .sh)" script env BUILD="$BUILD" bash "$t" $cases
done

for t in tests/net/test-*.sh; do
	[ -f "$t" ] || continue
	picked "$(basename "$t" .sh)" "$t" || continue
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: $(basename "$t" .sh): network tests need root (they create namespaces and veth pairs)"
		skip=$((skip + 1))
		continue
	fi
	run_one "$(basename "$t" .sh)" script env BUILD="$BUILD" bash "$t" $cases
done

summary
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
