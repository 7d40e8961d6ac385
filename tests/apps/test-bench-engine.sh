#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumap-bench engine in a tiny mode: every row runs, its figures are
# positive, the JSON holds every run, frames come home (the bench fails a
# run whose audit or shutdown does not balance), and bad flags get a
# message and exit 2. Never asserts speed. No root needed.
#
#   run            a tiny run of every row
#   table, json, gains    that run's table, JSON and gain lines
#   bad-flags      bad-flag-*: a message naming the problem, exit 2
#   bad-command    an unknown command: exit 2
set -u
BUILD=${BUILD:-build}
BENCH=$BUILD/ucpumap-bench
name=test-bench-engine
cases="run table json gains bad-flags bad-command"
cd "$(dirname "$0")/../.."
. tests/lib.sh

case_run() {
	if "$BENCH" engine --rounds 2 --seconds 0.1 --warmup 0.05 --json "$tmp/e.json" \
		> "$tmp/out" 2> "$tmp/err"; then
		ok run
	else
		bad run "exit $?: $(tail -3 "$tmp/err")"
	fi
}

# The table has every row with a positive median.
case_table() {
	local miss="" row med
	lib_need run
	for row in recycle no-recycle direct-bulk no-direct-bulk no-latency mp-ring; do
		med=$(awk -v r="$row" '$1 == r && NF >= 4 { print $4; exit }' "$tmp/out")
		if [ -z "$med" ] || ! awk -v m="$med" 'BEGIN { exit !(m > 0) }'; then
			miss="$miss $row(${med:-absent})"
		fi
	done
	[ -z "$miss" ] && ok table || bad table "rows without a positive median:$miss"
}

# The JSON: every row, 2 runs each, all positive, unit Mpps.
case_json() {
	lib_need run
	if python3 - "$tmp/e.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["name"]: r for r in d["rows"]}
assert set(rows) == {"recycle", "no-recycle", "direct-bulk", "no-direct-bulk", "no-latency", "mp-ring"}, rows.keys()
for r in rows.values():
    assert r["unit"] == "Mpps" and len(r["runs"]) == 2, r
    assert all(v > 0 for v in r["runs"]), r
    assert r["min"] <= r["median"] <= r["max"], r
PY
	then ok json; else bad json "malformed or incomplete $tmp/e.json"; fi
}

# Gains are printed for the four pairs.
case_gains() {
	local n
	lib_need run
	n=$(grep -c ' vs ' "$tmp/out")
	[ "$n" -eq 4 ] && ok gains || bad gains "$n gain lines, want 4"
}

# Bad flags: a message naming the problem, exit 2.
check_bad() {	# label, expected text, args...
	local label=$1 want=$2 rc
	shift 2
	"$BENCH" engine "$@" > "$tmp/o" 2> "$tmp/e"
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$want" "$tmp/e"; then
		ok "bad-flag-$label"
	else
		bad "bad-flag-$label" "exit $rc, stderr: $(head -2 "$tmp/e")"
	fi
}

case_bad_flags() {
	check_bad rounds "--rounds" --rounds 0
	check_bad seconds "--seconds" --seconds abc
	check_bad row "unknown row 'fast'" --rows fast
	check_bad cpu "CPU 4095" --worker-cpu 4095
	check_bad frames "power of two" --frames 3000
	check_bad qsize "--qsize" --qsize 65536
	check_bad extra "unexpected argument" extra
}

case_bad_command() {
	local rc
	"$BENCH" nosuch > /dev/null 2> "$tmp/e"
	rc=$?
	[ $rc -eq 2 ] && grep -q "unknown command" "$tmp/e" && ok bad-command || bad bad-command "exit $rc"
}

lib_run_cases "$@"
