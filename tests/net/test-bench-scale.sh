#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumap-bench scale in its tiny mode: widths 1 and 2 (on CPUs shared
# when the machine has fewer than 6), one round of half a second per row.
# Never asserts speed: every row at every width runs and delivers, each of
# ucpumapd's queues and workers takes part, the light queues of the flood
# rows were offered traffic and their counts add up, the JSON and the
# chart's script are written, and nothing is left behind. Then bad
# settings, each refused with its message and nothing left.
#
#   run            the tiny run (run, rows, row-*, json-shape)
#   queues         every queue received and every worker processed, in
#                  each of ucpumapd's rows that has several (queues-*)
#   flood          the flood rows: light traffic offered and delivered,
#                  the flood's count and the light ones' within the total
#   chart          the chart's gnuplot script holds the three lines
#   cleanup        no namespace, no XDP program left after the run
#   bad-settings   bad-*: each refused with its message, exit status, and
#                  nothing left
#
# Root. The bench makes and removes its own namespaces.
set -u
BUILD=${BUILD:-build}
name=test-bench-scale
cases="run queues flood chart cleanup bad-settings"
cd "$(dirname "$0")/../.."
. tests/lib.sh

setup() {
	skip_unless_root "namespaces, XDP, tun"
	if [ ! -x "$BUILD/ucpumap-bench" ] || [ ! -x "$BUILD/ucpumapd" ] || [ ! -x "$BUILD/ucpumap-gen" ]; then
		bad build "$BUILD/ucpumap-bench, ucpumapd or ucpumap-gen is not built (run make)"
		exit 0
	fi
	if [ "$(nproc)" -lt 2 ]; then
		echo "SKIP: $name: width 2 needs two CPUs for its two generators' queues"
		exit 0
	fi
	command -v python3 > /dev/null || { echo "SKIP: $name: needs python3"; exit 0; }
}

ns_before=
# The bench's namespaces now, one name a line.
bench_ns() { ip netns list 2> /dev/null | awk '/^ucm-bench-/ {print $1}' | sort; }

# The tiny run, bounded: $rc, $tmp/run.out, $tmp/s.json, $tmp/s.png.gp.
tiny() {
	local shared= bpid
	[ "$(nproc)" -lt 6 ] && shared=--shared-cpus
	ns_before=$(bench_ns)
	"$BUILD/ucpumap-bench" scale --widths 1,2 --rounds 1 --seconds 0.5 $shared \
		--json "$tmp/s.json" --chart "$tmp/s.png" > "$tmp/run.out" 2>&1 &
	bpid=$!
	lib_pid "$bpid"
	for _ in $(seq 1200); do kill -0 "$bpid" 2> /dev/null || break; sleep 0.1; done
	kill -0 "$bpid" 2> /dev/null && { kill "$bpid"; sleep 2; }
	lib_wait "$bpid"
	rc=$?
	sed 's/^/# /' "$tmp/run.out"
}

# py CASE: the JSON judged by the Python that follows on stdin; it prints
# the PASS/FAIL lines.
py() {
	python3 - "$tmp/s.json" "$name" "$@"
}

case_run() {
	lib_once tiny
	if [ "$rc" -ne 0 ] || [ ! -s "$tmp/s.json" ]; then
		bad run "exit $rc, JSON $( [ -s "$tmp/s.json" ] && echo written || echo missing)"
		return
	fi
	ok run
	py <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name = sys.argv[2]
want = {(r, 1) for r in ("kernel-cpumap", "cpumap", "cpumap-coalesce")}
want |= {(r, 2) for r in ("kernel-cpumap", "cpumap", "cpumap-coalesce", "cpumap-no-fair",
                          "kernel-cpumap-fan-in", "cpumap-fan-in", "kernel-cpumap-fan-out",
                          "cpumap-fan-out", "kernel-cpumap-flood", "cpumap-flood",
                          "cpumap-flood-no-fair")}
got = {(r["row"], r["width"]): r for r in d["rows"]}
for key in sorted(want):
    r = got.get(key)
    tag = f"row-{key[0]}-w{key[1]}"
    if r is None:
        print(f"FAIL: {name}/{tag}: missing"); continue
    runs = r["runs"]
    good = r["ok"] == "yes" and runs and all(x["delivered_pps"] > 0 and x["offered_pps"] > 0 for x in runs)
    print(f"{'PASS' if good else 'FAIL'}: {name}/{tag}: {[x['delivered_pps'] for x in runs]} pps")
extra = set(got) - want
shape = not extra and all(len(r["gen_cpus"]) == r["queues"] and len(r["worker_cpus"]) == r["workers"]
                          and len(set(r["vd_queues"])) == r["queues"] for r in d["rows"])
print(f"{'PASS' if shape else 'FAIL'}: {name}/json-shape: extra rows {sorted(extra)}")
PY
}

case_queues() {
	lib_need run
	py <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name = sys.argv[2]
for r in d["rows"]:
    if "rx_cpus" not in r or (r["queues"] < 2 and r["workers"] < 2):
        continue
    tag = f"queues-{r['row']}-w{r['width']}"
    runs = r["runs"]
    good = runs and all(len(x.get("queue_rx", [])) == r["queues"] and all(q > 0 for q in x["queue_rx"])
                        and len(x.get("worker_processed", [])) == r["workers"]
                        and all(w > 0 for w in x["worker_processed"])
                        and len(x.get("queue_xsk_drops", [])) == r["queues"]
                        and len(x.get("queue_enqueue_drops", [])) == r["queues"] for x in runs)
    print(f"{'PASS' if good else 'FAIL'}: {name}/{tag}: rx per queue "
          f"{[x.get('queue_rx') for x in runs]}, per worker {[x.get('worker_processed') for x in runs]}")
PY
}

case_flood() {
	lib_need run
	py <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name = sys.argv[2]; secs = d["seconds"]
for r in d["rows"]:
    if "-flood" not in r["row"]:
        continue
    for x in r["runs"]:
        lo, ld = x["light_offered"], x["light_delivered"]
        # the light ones at their rate (10 ms pacing steps: within 20%),
        # none delivered more than offered, and the flood's own count the
        # rest of the total
        total = x["delivered_pps"] * secs
        good = len(lo) == r["queues"] - 1 and all(o > 0.8 * d["light_rate"] * secs for o in lo) and \
            all(0 < g <= o for g, o in zip(ld, lo)) and x["flood_offered"] > sum(lo) and \
            abs(x["flood_delivered"] + sum(ld) - total) <= 1
        print(f"{'PASS' if good else 'FAIL'}: {name}/flood-{r['row']}-w{r['width']}: light offered {lo} "
              f"delivered {ld}; flood {x['flood_delivered']} of {x['flood_offered']}")
PY
}

case_chart() {
	lib_need run
	local n
	n=$(grep -c "with linespoints" "$tmp/s.png.gp" 2> /dev/null)
	if [ "${n:-0}" -eq 1 ] && grep -q "title 'cpumap-coalesce'" "$tmp/s.png.gp" &&
		[ "$(grep -c '^e$' "$tmp/s.png.gp")" -eq 3 ]; then
		ok chart "$(grep -E '^chart' "$tmp/run.out")"
	else
		bad chart "no three-line script in $tmp/s.png.gp: $(head -c 300 "$tmp/s.png.gp" 2>/dev/null)"
	fi
}

case_cleanup() {
	lib_need run
	if [ "$(bench_ns)" = "$ns_before" ]; then
		ok cleanup
	else
		bad cleanup "namespaces left: $(comm -13 <(echo "$ns_before") <(bench_ns) | tr '\n' ' ')"
	fi
}

# bad_setting TAG STATUS TEXT ARGS...
bad_setting() {
	local tag=$1 want=$2 text=$3 rc before
	shift 3
	before=$(bench_ns)
	timeout 30 "$BUILD/ucpumap-bench" scale "$@" > "$tmp/bad" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -qF -- "$text" "$tmp/bad" && [ "$(bench_ns)" = "$before" ]; then
		ok "bad-$tag" "$(head -1 "$tmp/bad")"
	else
		bad "bad-$tag" "exit $rc (want $want), want '$text': $(head -c 300 "$tmp/bad")"
	fi
}

case_bad_settings() {
	bad_setting width-zero 2 "--widths: '0' is not a whole number between 1 and 16" --widths 0
	bad_setting width-twice 2 "--widths: 2 given twice" --widths 1,2,2
	bad_setting width-syntax 2 "--widths" --widths 1,x
	bad_setting unknown-row 2 "no row 'nosuch'; the rows: kernel-cpumap" --rows cpumap,nosuch
	bad_setting no-width-fits 1 "no width fits 1 CPUs: width 1 needs 3" --cpus 0
	bad_setting fan-at-1 1 "the fan, flood and no-fair rows need a width of 2" --rows cpumap-fan-in \
		--widths 1 --shared-cpus
	bad_setting one-queue 1 "generator CPUs 0 and 0 feed one queue" --cpus 0 --widths 2 \
		--shared-cpus
}

lib_run_cases "$@"
