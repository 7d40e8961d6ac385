#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Where a probe's round trip goes between threads: the wake-ups of the
# latency rows, probe by probe, from the scheduler's own trace.
#
#   scripts/latency-hops.sh [ROWS]
#       (default latency-kernel-cpumap,latency-cpumap,latency-cpumap-no-prewake)
#
# Runs `ucpumap-bench datapath --rows ROWS --rounds 1 --seconds 3` under
# `perf sched record -a` and follows each probe sent alone (not under load)
# from the prober's send (the prober, on the generator's side, wakes the
# first thread of the path: the RX thread, or the kernel's cpumap kthread)
# along each thread that wakes the next, until the responder is woken and
# until it wakes the prober with the answer. Prints, per row, each hop's
# time from the send (us: p50, p90, p99). The trace slows every path alike;
# compare rows within one run, not with the bench's own figures.
#
# Each row's prober threads are the bench's run order's, whatever the
# order of ROWS: its "round 1 ROW" lines. A row that got no hops (skipped
# by the bench, sockperf's, not a latency row, no probe in the trace):
# the rows' reasons on stderr at the end, and exit 1.
#
# Root; needs perf (Debian's linux-perf) and python3, and a built tree.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
rows=${1:-latency-kernel-cpumap,latency-cpumap,latency-cpumap-no-prewake}
. scripts/perf-lib.sh latency-hops
perf_lib_tracefs

if ! perf sched record -a -o "$tmp/sched.data" -- \
	"$BUILD/ucpumap-bench" datapath --rows "$rows" --rounds 1 --seconds 3 > "$tmp/bench.out" 2>&1; then
	echo "latency-hops: perf sched record or the bench failed:" >&2
	tail -5 "$tmp/bench.out" >&2
	exit 1
fi
grep -E "^latency|^row  " "$tmp/bench.out" | sed 's/^/# /' || true
if ! perf sched timehist -w -i "$tmp/sched.data" > "$tmp/th.txt" 2> "$tmp/th.err"; then
	echo "latency-hops: perf sched timehist failed:" >&2
	cat "$tmp/th.err" >&2
	exit 1
fi

python3 - "$tmp/th.txt" "$tmp/bench.out" "$rows" <<'PY'
import bisect, re, sys

# "time [cpu] waker[tid/pid] awakened: wakee[tid/pid]"
WAKE = re.compile(r"\s*([\d.]+) \[\d+\]\s+(\S+)\s+awakened: (\S+)")
ev = []
for line in open(sys.argv[1]):
    m = WAKE.match(line)
    if m:
        ev.append((float(m.group(1)), m.group(2), m.group(3)))
times = [e[0] for e in ev]
rows = list(dict.fromkeys(r for r in sys.argv[3].split(",") if r))
name = lambda t: t.split("[")[0]

# The rows that ran, in the bench's run order (datapath.c, run_round():
# round 1 in its table's order, whatever the order of --rows): a
# "  round 1 NAME ..." line each, none for a row skipped or failed. A row
# the bench probes itself ("NN us p50 alone, NN us under NN pps") ran two
# prober threads, one after the other: alone, then under load; sockperf's
# rows ("NN us p50" only) none.
ran, probed, skipped = {}, [], {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*round 1 (\S+)\s+(.*?)\s*$", line)
    if m:
        ran[m.group(1)] = m.group(2)
        if re.match(r"[\d.]+ us p50 alone, ", m.group(2)):
            probed.append(m.group(1))
        continue
    m = re.match(r"(\S+)\s+skipped: (.*?)\s*$", line)
    if m:
        skipped.setdefault(m.group(1), m.group(2))

# The prober threads in the order they first show in the trace: each
# phase's own thread, joined before the next starts.
probers = []
for _, w, b in ev:
    for t in (w, b):
        if name(t) == "ucmb-prober" and t not in probers:
            probers.append(t)
if len(probers) != 2 * len(probed):
    sys.exit("latency-hops: %d prober threads in the trace for %d probed row(s) (%s), "
             "two each: cannot tell whose is whose" %
             (len(probers), len(probed), ", ".join(probed) or "none"))
alone = {row: probers[2 * k] for k, row in enumerate(probed)}

pct = lambda v, q: v[min(len(v) - 1, int(len(v) * q))]
nothing = []
for row in rows:
    if row not in alone:
        if row in skipped:
            why = "skipped by the bench: " + skipped[row]
        elif row in ran and " us p50" in ran[row]:
            why = "probed by sockperf's client, not the bench's prober: " + ran[row]
        elif row in ran:
            why = "not a latency row: " + ran[row]
        else:
            why = "did not run (no \"round 1 %s\" line in the bench's output)" % row
        nothing.append("%s: %s" % (row, why))
        continue
    prober = alone[row]
    hops, n, last = {}, 0, -1.0
    for i, (t0, w, first) in enumerate(ev):
        # A probe: the prober's first wake-up after the last probe's answer
        # (the send's softirq may wake more than one thread: all follow).
        if w != prober or name(first) == "ucmb-prober" or t0 - last < 0.0002:
            continue
        n += 1
        woken, seen = {prober}, set()
        for t, a, b in ev[i:bisect.bisect_right(times, t0 + 0.01)]:
            if a not in woken or b == a:
                continue
            label = "%s -> %s" % (name(a), name(b))
            if label not in seen:	# its first time in this probe
                seen.add(label)
                hops.setdefault(label, []).append((t - t0) * 1e6)
            if b == prober:
                break
            woken.add(b)
        last = t
    print("%s (%d probes): each hop's time from the send, us" % (row, n))
    for label, v in sorted(hops.items(), key=lambda x: sorted(x[1])[len(x[1]) // 2]):
        if len(v) < 100:
            continue	# a hop of a few probes: not the path
        v.sort()
        print("  %-40s p50 %6.1f  p90 %6.1f  p99 %7.1f  (%d)" %
              (label, pct(v, .5), pct(v, .9), pct(v, .99), len(v)))
    if not n:
        nothing.append("%s: no probe of its prober (%s) in the trace" % (row, prober))
if nothing:
    sys.exit("latency-hops: %d row(s) without hops:\n  %s" % (len(nothing), "\n  ".join(nothing)))
PY
