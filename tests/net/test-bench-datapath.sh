#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumap-bench datapath in its tiny mode (one round of one second per row):
# every row present with a positive median (dpdk: skipped or positive), and
# ucpumapd's own delivered count (tun_packets) within 1% of the kernel's
# (Udp InDatagrams + RcvbufErrors at the sink). Never asserts speed.
#
# Root. One PASS/FAIL/SKIP line per case; the bench makes and removes its
# own namespaces (it is stopped by its pid if it overruns).
set -u
BUILD=${BUILD:-build}
name=test-bench-datapath
cd "$(dirname "$0")/../.."
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: $name: needs root (namespaces, XDP, tun)"
	exit 0
fi
if [ ! -x "$BUILD/ucpumap-bench" ] || [ ! -x "$BUILD/ucpumapd" ] || [ ! -x "$BUILD/ucpumap-gen" ]; then
	echo "FAIL: $name: $BUILD/ucpumap-bench, ucpumapd or ucpumap-gen is not built (run make)"
	exit 0
fi
command -v python3 > /dev/null || { echo "SKIP: $name: needs python3"; exit 0; }
tmp=$(mktemp -d)
bpid=
cleanup() {
	[ -n "$bpid" ] && kill "$bpid" 2>/dev/null && wait "$bpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "FAIL: $name: interrupted"; exit 1' HUP INT TERM

"$BUILD/ucpumap-bench" datapath --rounds 1 --seconds 1 --json "$tmp/out.json" \
	> "$tmp/out" 2>&1 &
bpid=$!
for _ in $(seq 500); do kill -0 "$bpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$bpid" 2>/dev/null; then
	echo "FAIL: $name/run: still running after 50 s"
	exit 0
fi
wait "$bpid"
rc=$?
bpid=
sed 's/^/# /' "$tmp/out"
if [ "$rc" -ne 0 ] || [ ! -s "$tmp/out.json" ]; then
	echo "FAIL: $name/run: exit $rc, no JSON"
else
	echo "PASS: $name/run"
fi
if ip netns list | grep -q "ucm-bench-"; then
	echo "FAIL: $name/cleanup: namespaces left: $(ip netns list | grep ucm-bench-)"
else
	echo "PASS: $name/cleanup"
fi
[ -s "$tmp/out.json" ] || exit 0
python3 - "$tmp/out.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
name = sys.argv[2]
rows = {r["name"]: r for r in d["rows"]}
for want in ["kernel-pass", "kernel-cpumap", "pass", "cpumap-no-recycle", "cpumap",
             "cpumap-no-batch", "tun-ceiling", "dpdk"]:
    r = rows.get(want)
    if r is None:
        print(f"FAIL: {name}/row-{want}: missing")
    elif "skipped" in r:
        if want == "dpdk":
            print(f"PASS: {name}/row-{want}: skipped: {r['skipped']}")
        else:
            print(f"FAIL: {name}/row-{want}: skipped: {r['skipped']}")
    elif not r.get("median", 0) > 0:
        print(f"FAIL: {name}/row-{want}: median {r.get('median')}")
    else:
        print(f"PASS: {name}/row-{want}")
    if r is not None and "daemon_tun_packets" in r:
        for own, rate in zip(r["daemon_tun_packets"], r["runs"]):
            kern = rate * d["seconds"]
            diff = abs(own - kern) / kern if kern else 1
            if diff <= 0.01:
                print(f"PASS: {name}/count-{want}: ucpumapd {own:.0f}, kernel {kern:.0f}")
            else:
                print(f"FAIL: {name}/count-{want}: ucpumapd {own:.0f}, kernel {kern:.0f} ({100*diff:.2f}%)")
    elif r is not None and want in ("pass", "cpumap-no-recycle", "cpumap", "cpumap-no-batch"):
        print(f"FAIL: {name}/count-{want}: no statistics from ucpumapd")
PY
