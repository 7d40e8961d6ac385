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

python3 - "$tmp/th.txt" "$rows" <<'PY'
import bisect, re, sys

# "time [cpu] waker[tid/pid] awakened: wakee[tid/pid]"
WAKE = re.compile(r"\s*([\d.]+) \[\d+\]\s+(\S+)\s+awakened: (\S+)")
ev = []
for line in open(sys.argv[1]):
    m = WAKE.match(line)
    if m:
        ev.append((float(m.group(1)), m.group(2), m.group(3)))
times = [e[0] for e in ev]
rows = sys.argv[2].split(",")
name = lambda t: t.split("[")[0]

# Each phase has a prober thread of its own, in the order the bench runs
# them: row 1 alone, row 1 loaded, row 2 alone, ... Alone: the even ones.
probers = []
for _, w, _ in ev:
    if name(w) == "ucmb-prober" and w not in probers:
        probers.append(w)
pct = lambda v, q: v[min(len(v) - 1, int(len(v) * q))]
for k, row in enumerate(rows):
    if 2 * k >= len(probers):
        print("%s: no probes in the trace" % row)
        continue
    prober = probers[2 * k]
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
PY
