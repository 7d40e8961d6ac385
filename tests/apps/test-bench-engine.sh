#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumap-bench engine in a tiny mode: every row runs, its medians are
# positive, the JSON holds every run, frames come home (the bench fails a
# run whose audit or shutdown does not balance), and bad flags get a
# message and exit 2. Never asserts speed. No root needed.
#
# The P->W rows (pw-PxW: P producers into W workers, none sharing a CPU)
# run where the host has P + W CPUs; the others are skipped, with why.
# What fits is worked out from this host's CPUs (nproc: those we may use).
# pw-shared runs those of more than one producer that 2 CPUs can hold
# with --shared-cpus, so that they run on any host.
#
#   run            a tiny run of every row
#   table, json, gains    that run's table, JSON and gain lines
#   pw-skip        a P->W row that does not fit is skipped, saying why;
#                  one that fits is not
#   pw-workers     each P->W row that ran: every worker processed frames,
#                  none dropped, its line in the per-worker table
#   pw-shared      pw-2x2, pw-2x2-lanes and pw-4x1-lanes with --shared-cpus
#                  on two CPUs, so on any host they run with more than one
#                  producer: exit 0 (every frame came home: the audit), each
#                  worker processed frames in every run, none dropped, the
#                  output and the JSON saying the CPUs were shared
#   one-cpu-shared producer and worker on one CPU: the one-producer rows are
#                  shared in the JSON
#   bad-flags      bad-flag-*: a message naming the problem, exit 2 (one
#                  is a row asked for by name that one CPU cannot hold);
#                  and taskset-default-cpus: on one CPU the producer and
#                  worker default to it
#   bad-command    an unknown command: exit 2
set -u
BUILD=${BUILD:-build}
BENCH=$BUILD/ucpumap-bench
name=test-bench-engine
cases="run order table json json-unwritable gains pw-skip pw-workers pw-shared one-cpu-shared bad-flags
bad-command"
PW_ROWS="pw-1x1 pw-2x2 pw-4x4 pw-4x1 pw-1x4 pw-2x2-lanes pw-4x4-lanes pw-4x1-lanes"
NCPU=$(nproc)
cd "$(dirname "$0")/../.."
. tests/lib.sh

# The CPUs P->W row $1 needs: P + W.
pw_need() { local pw=${1#pw-}; pw=${pw%-lanes}; echo $((${pw%x*} + ${pw#*x})); }

# The rows that run on this host, every classic one and the P->W ones that fit.
rows_run() {
	local row
	echo recycle no-recycle direct-bulk no-direct-bulk no-latency mp-ring
	for row in $PW_ROWS; do
		[ "$(pw_need $row)" -le "$NCPU" ] && echo $row
	done
}

case_run() {
	if "$BENCH" engine --rounds 2 --seconds 0.1 --warmup 0.05 --json "$tmp/e.json" \
		> "$tmp/out" 2> "$tmp/err"; then
		ok run
	else
		bad run "exit $?: $(tail -3 "$tmp/err")"
	fi
}

# Round 2 runs the rows in the reverse of round 1's order (A-B, B-A).
case_order() {
	local r1 r2 want
	lib_need run
	r1=$(awk '$1 == "round" && $2 == "1/2" { print $3 }' "$tmp/err" | tr '\n' ' ')
	r2=$(awk '$1 == "round" && $2 == "2/2" { print $3 }' "$tmp/err" | tr '\n' ' ')
	want=$(echo "$r1" | tr ' ' '\n' | sed '/^$/d' | tac | tr '\n' ' ')
	if [ -n "$r1" ] && [ "$(echo "$r1" | wc -w)" -gt 1 ] && [ "$r2" = "$want" ]; then
		ok order "round 2: $r2"
	else
		bad order "round 1: '$r1', round 2: '$r2' (want '$want')"
	fi
}

# The table has every row with a positive median.
case_table() {
	local miss="" row med
	lib_need run
	for row in $(rows_run); do
		med=$(awk -v r="$row" '$1 == r && NF >= 4 { print $4; exit }' "$tmp/out")
		if [ -z "$med" ] || ! awk -v m="$med" 'BEGIN { exit !(m > 0) }'; then
			miss="$miss $row(${med:-absent})"
		fi
	done
	[ -z "$miss" ] && ok table || bad table "rows without a positive median:$miss"
}

# The JSON: every row, 2 runs or more each, unit Mpps, min <= median <=
# max; a P->W row that does not fit only named, with why. A run may read 0:
# on a loaded host a 0.1 s window can pass with the producer, then the
# worker it woke, waiting for a CPU (tens of ms each with busy nice -5
# threads on 2 CPUs). The median must be positive: a row that moves
# nothing still fails.
# A --json file that cannot be written, larger than stdio's 4 KiB: said
# with the cause (the disk full), exit 1.
case_json_unwritable() {
	local rc
	"$BENCH" engine --rounds 5 --seconds 0.05 --warmup 0.02 --json /dev/full \
		> "$tmp/ju.out" 2> "$tmp/ju.err"
	rc=$?
	if [ $rc = 1 ] && grep -q '^engine: writing /dev/full failed: No space left on device' "$tmp/ju.err"; then
		ok json-unwritable "said, exit 1"
	else
		bad json-unwritable "exit $rc: $(tail -2 "$tmp/ju.err" | tr '\n' ' ')"
	fi
}

case_json() {
	lib_need run
	if python3 - "$tmp/e.json" "$NCPU" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ncpu = int(sys.argv[2])
rows = {r["name"]: r for r in d["rows"]}
pw = {"pw-1x1": (1, 1), "pw-2x2": (2, 2), "pw-4x4": (4, 4), "pw-4x1": (4, 1), "pw-1x4": (1, 4),
      "pw-2x2-lanes": (2, 2), "pw-4x4-lanes": (4, 4), "pw-4x1-lanes": (4, 1)}
assert set(rows) == {"recycle", "no-recycle", "direct-bulk", "no-direct-bulk", "no-latency",
                     "mp-ring"} | set(pw), rows.keys()
for name, r in rows.items():
    p, w = pw.get(name, (1, 1))
    assert (r["producers"], r["workers"]) == (p, w), r
    if p + w > ncpu:
        assert "skipped" in r and "runs" not in r, r
        continue
    assert "skipped" not in r, r
    assert r["unit"] == "Mpps" and len(r["runs"]) >= 2, r
    assert all(v >= 0 for v in r["runs"]), r
    assert r["min"] <= r["median"] <= r["max"], r
    assert r["median"] > 0, r
    assert len(r["producer_cpus"]) == p and len(r["worker_cpus"]) == w, r
    if name in pw:
        assert not set(r["producer_cpus"]) & set(r["worker_cpus"]), r
PY
	then ok json; else bad json "malformed or incomplete $tmp/e.json"; fi
}

# Gains are printed for the four pairs of one producer, and for each
# P->W pair whose rows both run here (engine_report.c's eng_pairs[]),
# pw-4x4 and pw-4x4-lanes against pw-1x1 with their target.
case_gains() {
	local n want=4 pair
	lib_need run
	for pair in pw-4x4:pw-1x1 pw-4x4-lanes:pw-1x1 pw-4x4-lanes:pw-4x4 \
		pw-4x1-lanes:pw-4x1 pw-2x2-lanes:pw-2x2; do
		[ "$(pw_need ${pair%:*})" -le "$NCPU" ] && [ "$(pw_need ${pair#*:})" -le "$NCPU" ] &&
			want=$((want + 1))
	done
	n=$(grep -c ' vs ' "$tmp/out")
	if [ "$n" -ne $want ]; then
		bad gains "$n gain lines, want $want"
	elif [ "$(pw_need pw-4x4)" -le "$NCPU" ] &&
		! grep -q 'pw-4x4-lanes .* vs pw-1x1 .*target >= 3.2x' "$tmp/out"; then
		bad gains "no pw-4x4-lanes vs pw-1x1 line with its target"
	else
		ok gains "$want lines"
	fi
}

# A P->W row needing more CPUs than this host has is skipped, the reason
# in the output and the JSON; one that fits runs. On a host of fewer than 8
# CPUs pw-4x4 is one of the skipped.
case_pw_skip() {
	local row need miss=""
	lib_need run
	for row in $PW_ROWS; do
		need=$(pw_need $row)
		if [ "$need" -gt "$NCPU" ]; then
			grep -q "^$row: skipped, needs $need CPUs .* this host has $NCPU\$" "$tmp/out" &&
				grep -q "^$row  *skipped: needs $need CPUs" "$tmp/out" ||
				miss="$miss $row(not said skipped)"
		elif grep -q "^$row.*skipped" "$tmp/out"; then
			miss="$miss $row(skipped on $NCPU CPUs)"
		fi
	done
	[ -z "$miss" ] && ok pw-skip "$NCPU CPUs" || bad pw-skip "$miss"
}

# Every P->W row that ran: each worker processed frames, its median over
# the runs above 0 (a steering that starves a worker shows; one window
# waited out for a CPU under load does not), nothing dropped (the pools
# are sized for the rings), a line in the per-worker table.
case_pw_workers() {
	lib_need run
	if ! python3 - "$tmp/e.json" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    if not r["name"].startswith("pw-") or "skipped" in r:
        continue
    assert len(r["worker_runs"]) == r["workers"], r
    # a window a worker waited out for a CPU reads 0 under load (as in
    # json); a worker that never gets frames reads 0 in every one
    assert all(v >= 0 and statistics.median(w) > 0 for w in r["worker_runs"] for v in w), \
        ("a worker idle", r)
    assert all(v == 0 for v in r["drop_runs"]), ("drops", r)
    assert abs(r["per_worker_median"] * r["workers"] - r["median"]) < 1e-3 * r["median"], r
PY
	then
		bad pw-workers "a worker without frames, drops, or malformed in $tmp/e.json"
	elif ! grep -q '^pw-1x1  *1  *1 ' "$tmp/out"; then
		bad pw-workers "no pw-1x1 line in the per-worker table"
	else
		ok pw-workers
	fi
}

# --producer-cpu and --worker-cpu the same: the rows of one producer
# measure time-sharing, and say so where a reader looks (the JSON).
case_one_cpu_shared() {
	local cpu
	cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
	if ! "$BENCH" engine --rows recycle --producer-cpu "$cpu" --worker-cpu "$cpu" --rounds 1 \
		--seconds 0.05 --warmup 0.01 --json "$tmp/o.json" > "$tmp/o.out" 2> "$tmp/o.err"; then
		bad one-cpu-shared "exit $?: $(tail -2 "$tmp/o.err")"
	elif python3 -c 'import json, sys
r = [r for r in json.load(open(sys.argv[1]))["rows"] if r["name"] == "recycle"][0]
sys.exit(r["shared_cpus"] != "yes")' "$tmp/o.json"; then
		ok one-cpu-shared "recycle on CPU $cpu alone: shared_cpus yes"
	else
		bad one-cpu-shared "recycle on CPU $cpu alone: $(grep -o '"shared_cpus": *"[a-z]*"' "$tmp/o.json" | head -2 | tr '\n' ' ')"
	fi
}

# The rows of more than one producer, on shared CPUs: a functional run,
# judged by the engine's own audit (exit 0) and the JSON.
case_pw_shared() {
	local cpus rows="pw-2x2 pw-2x2-lanes pw-4x1-lanes" row miss= rc
	if [ "$NCPU" -lt 2 ]; then
		echo "SKIP: $name/pw-shared: 2 workers need 2 CPUs, this host has $NCPU"
		return
	fi
	cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[:2])))')
	"$BENCH" engine --rows "${rows// /,}" --pw-cpus "$cpus" --shared-cpus --rounds 2 \
		--seconds 0.1 --warmup 0.05 --json "$tmp/s.json" > "$tmp/s.out" 2> "$tmp/s.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		bad pw-shared "exit $rc: $(tail -3 "$tmp/s.err")"
		return
	fi
	for row in $rows; do
		grep -q "^$row: on shared CPUs (--shared-cpus): a functional run, not a measure" \
			"$tmp/s.out" || miss="$miss $row(not said shared)"
	done
	if [ -n "$miss" ]; then
		bad pw-shared "$miss"
	elif python3 - "$tmp/s.json" $rows <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
rows = {r["name"]: r for r in d["rows"]}
assert d["shared_cpus"] == "yes" and sorted(rows) == sorted(sys.argv[2:]), rows.keys()
for r in rows.values():
    assert r["shared_cpus"] == "yes" and "skipped" not in r, r
    assert set(r["producer_cpus"]) & set(r["worker_cpus"]), ("not shared", r)
    assert len(r["runs"]) == 2 and all(v >= 0 for v in r["runs"]) and r["median"] > 0, r
    assert len(r["worker_runs"]) == r["workers"], r
    assert all(v >= 0 and statistics.median(w) > 0 for w in r["worker_runs"] for v in w), \
        ("a worker idle", r)
    assert all(v == 0 for v in r["drop_runs"]), ("drops", r)
PY
	then
		ok pw-shared "$(echo $rows) on CPUs $cpus"
	else
		bad pw-shared "a row not run, a worker without frames, drops, or malformed in $tmp/s.json"
	fi
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
	local rc
	check_bad rounds "--rounds" --rounds 0
	check_bad seconds "--seconds" --seconds abc
	check_bad row "unknown row 'fast'" --rows fast
	check_bad pw-row "unknown row 'pw-3x3'" --rows pw-1x1,pw-3x3
	check_bad rows-empty-item "'pw-1x1,,recycle' has an empty item" --rows pw-1x1,,recycle
	check_bad pw-cpus-short "pw-1x1 needs 2 (1 producer, then 1 worker" --rows pw-1x1 --pw-cpus 0
	check_bad pw-cpus-shared "pw-2x2 has 2 workers, a CPU each even with --shared-cpus" \
		--rows pw-2x2 --pw-cpus 0 --shared-cpus
	check_bad pw-cpus-cpu "CPU 4095" --pw-cpus 0,4095
	check_bad cpu "CPU 4095" --worker-cpu 4095
	check_bad frames "power of two" --frames 3000
	check_bad qsize "--qsize" --qsize 65536
	check_bad extra "unexpected argument" extra
	# A row asked for by name that this process's CPUs cannot hold is
	# refused, not skipped with exit 0 (on one CPU: pw-1x1 needs 2).
	rc=0
	taskset -c "$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')" \
		"$BENCH" engine --rows pw-1x1 > "$tmp/o" 2> "$tmp/e" || rc=$?
	if [ $rc -eq 2 ] && grep -q -- "--rows pw-1x1: it needs 2 CPUs (1 producer, 1 worker, none shared), and this process may use 1: take it out of --rows, or add --shared-cpus" "$tmp/e"; then
		ok bad-flag-rows-short
	else
		bad bad-flag-rows-short "exit $rc, stderr: $(head -2 "$tmp/e")"
	fi
	# The producer's and the worker's CPUs by default are ones this
	# process may use: under taskset -c 1, both on CPU 1.
	rc=0
	taskset -c "$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')" \
		"$BENCH" engine --rows recycle --rounds 1 --seconds 0.05 \
		--warmup 0.01 > "$tmp/o" 2> "$tmp/e" || rc=$?
	if [ $rc -eq 0 ] && grep -q '^recycle ' "$tmp/o"; then
		ok taskset-default-cpus
	else
		bad taskset-default-cpus "exit $rc, stderr: $(head -2 "$tmp/e")"
	fi
}

case_bad_command() {
	local rc
	"$BENCH" nosuch > /dev/null 2> "$tmp/e"
	rc=$?
	[ $rc -eq 2 ] && grep -q "unknown command" "$tmp/e" && ok bad-command || bad bad-command "exit $rc"
}

lib_run_cases "$@"
