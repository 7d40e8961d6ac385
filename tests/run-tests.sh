#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Runs every test of ucpumap and ends with one line "N passed, N failed"
# (", N skipped" when some were skipped). Called by `make check`.
#
#   tests/run-tests.sh [NAME...]     NAME: a unit test binary (test-pool)
#                                    or a test script (tests/net/*.sh)
#
# Unit tests (tests/unit/test-*.c, built into $BUILD/tests/) and app tests
# (tests/apps/test-*.sh) need no root; each prints one PASS/FAIL/SKIP line
# per case. Network tests
# (tests/net/test-*.sh) need root and make their own namespaces; as
# non-root they are reported as skipped, with the reason. Every test runs
# under a time limit (TEST_TIMEOUT seconds, default 300); a timeout is a
# failure. test-cycles starts the daemon CYCLES times: here 10 by default,
# 18 s, enough for each run's own checks (and LeakSanitizer at each exit
# under ASan); `make check-long` runs the 200 that judge growth.

BUILD=${BUILD:-build}
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
trap 'rm -f "$log"' EXIT HUP INT TERM

count() {
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	s=$(grep -c '^SKIP: ' "$log")
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
}

run_one() {	# name, command...
	name=$1
	shift
	: > "$log"
	timeout -k 5 "$TEST_TIMEOUT" "$@" > "$log" 2>&1
	rc=$?
	cat "$log"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "FAIL: $name: timed out after ${TEST_TIMEOUT}s"
		fail=$((fail + 1))
	elif [ $rc -ne 0 ] && ! grep -q '^FAIL: ' "$log"; then
		# A crash or a non-zero exit without a FAIL line is a failure.
		echo "FAIL: $name: exited with status $rc"
		fail=$((fail + 1))
	fi
	count
}

want() {	# is $1 selected by the arguments? (none: everything is)
	[ -z "$SELECTED" ] && return 0
	for w in $SELECTED; do
		[ "$w" = "$1" ] && return 0
	done
	return 1
}
SELECTED="$*"

for t in "$BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	want "$name" || continue
	run_one "$name" "$t"
done

# App tests: no root.
for t in tests/apps/test-*.sh; do
	[ -f "$t" ] || continue
	want "$t" || want "$(basename "$t" .sh)" || continue
	run_one "$(basename "$t" .sh)" env BUILD="$BUILD" bash "$t"
done

for t in tests/net/test-*.sh; do
	[ -f "$t" ] || continue
	want "$t" || want "$(basename "$t" .sh)" || continue
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: $(basename "$t" .sh): network tests need root (they create namespaces and veth pairs)"
		skip=$((skip + 1))
		continue
	fi
	run_one "$(basename "$t" .sh)" env BUILD="$BUILD" bash "$t"
done

if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
