#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Builds and runs the libFuzzer targets; called by `make fuzz`, which sets
# MAKE, FUZZ_CC and FUZZ_BUILD.
#
#   tests/fuzz/run-fuzz.sh SECONDS NAME...
#
# Each target NAME (fuzz-pkt: build/fuzz/fuzz-pkt, from tests/fuzz/fuzz-pkt.c)
# runs for SECONDS (-max_total_time) from its seeds, tests/fuzz/corpus/NAME/
# (read only: what it finds goes to build/fuzz/corpus/NAME/, kept for the
# next run), with tests/fuzz/NAME.dict if there is one. For each the
# script prints libFuzzer's own "Done N runs in S second(s)" line and a
# PASS or FAIL line; it ends with "N passed, N failed" and exits 1 when a
# target crashed, leaked or hung (an input over 10 s). The input that did
# it is kept as build/fuzz/crashes/NAME-*; to reproduce, run the target on
# it: build/fuzz/NAME build/fuzz/crashes/NAME-crash-...
#
# No clang, or a clang without libFuzzer (Debian: libclang-rt-14-dev), is
# a SKIP line and exit status 0.

set -u
seconds=${1:-}
# libFuzzer reads 0, or what is not a number, as no time limit at all.
case $seconds in
'' | *[!0-9]* | 0)
	echo "run-fuzz.sh: SECONDS must be a whole number of seconds above 0, not '$seconds' (make fuzz FUZZ_SECONDS=10)" >&2
	exit 2 ;;
esac
shift
MAKE=${MAKE:-make}
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_BUILD=${FUZZ_BUILD:-build/fuzz}

# Can this clang link a fuzz target? Compile the smallest one.
probe=$(mktemp -d)
# A signal ends the whole run (sh carries on after a trap's action
# otherwise: the next target would start).
trap 'rm -rf "$probe"' EXIT
trap 'echo "fuzz: interrupted"; exit 130' HUP INT TERM
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n > 1 && d[0] == 1; }' \
	> "$probe/probe.c"
if ! command -v "$FUZZ_CC" > /dev/null 2>&1; then
	echo "SKIP: fuzz: no $FUZZ_CC (Debian: clang-14; scripts/install-deps.sh installs it)"
	exit 0
fi
if ! "$FUZZ_CC" -fsanitize=fuzzer,address,undefined -o "$probe/probe" "$probe/probe.c" \
	> "$probe/log" 2>&1; then
	echo "SKIP: fuzz: $FUZZ_CC cannot link a libFuzzer target (Debian: libclang-rt-14-dev):"
	sed 's/^/    /' "$probe/log" | head -n 5
	exit 0
fi

$MAKE fuzz-build || exit 1

pass=0
fail=0
mkdir -p "$FUZZ_BUILD/crashes"
for name in "$@"; do
	bin=$FUZZ_BUILD/$name
	seeds=tests/fuzz/corpus/$name
	work=$FUZZ_BUILD/corpus/$name
	log=$FUZZ_BUILD/$name.log
	dict=
	[ -f "tests/fuzz/$name.dict" ] && dict=-dict=tests/fuzz/$name.dict
	mkdir -p "$work"
	echo "  FUZZ     $name: ${seconds}s from $seeds${dict:+, ${dict#-dict=}}"
	# $dict unquoted: empty, or one word.
	"$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=0 \
		-artifact_prefix="$FUZZ_BUILD/crashes/$name-" $dict "$work" "$seeds" \
		> "$log" 2>&1
	rc=$?
	done_line=$(grep '^Done [0-9]* runs' "$log")
	if [ $rc -eq 0 ] && [ -n "$done_line" ]; then
		echo "$done_line"
		echo "PASS: $name"
		pass=$((pass + 1))
		continue
	fi
	# The top of the sanitizer's or libFuzzer's report, and where the
	# input went.
	grep -v -e '^#[0-9]' -e '^INFO: ' "$log" | head -n 30 | sed 's/^/    /'
	artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
	echo "FAIL: $name: exit status $rc${artifact:+; reproduce: $bin $artifact}" \
		"(the whole log: $log)"
	fail=$((fail + 1))
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
