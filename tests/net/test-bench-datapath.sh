#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumap-bench datapath in its tiny mode (one round of one second per row):
# every row present with a positive median (dpdk: positive when dpdk-testpmd
# and its drivers are installed, otherwise skipped with the reason), and
# ucpumapd's own delivered count (tun_packets) within 1% of the kernel's
# (Udp/Udp6 InDatagrams + RcvbufErrors at the sink) over ucpumapd's life;
# the two-way rows (and the tcp-back rows, udp-back) deliver on
# the way back too, the two-way ones with completions straight
# into the cache only when direct bulk recycling is on; the coalescing
# rows put nearly every datagram of 4 flows (and segment of the TCP
# stream) in a super-packet, and almost none of 1024 flows; the latency
# rows give ordered percentiles alone and under a load of half their
# measured capacity, nearly every probe answered, the prober's view no
# shorter than the kernel's stamps, each phase's CPU cost as busy
# shares, and where the responder ran (pinned in the -pinned rows only).
# Then IPv6, then --dev on a veth fed by a generator the bench does not
# start (what a NIC run looks like), then bad settings. Never asserts speed.
#
#   help           --help names every row
#   v4             every row (v4-run, row-*, back-*, latency-*, merged-*,
#                  count-*, pool-*, cost-*, prober-view-*, responder-*
#                  lines), and every child stopped cleanly (v4-stopped)
#   cleanup        after v4, no namespace and no DPDK runtime left
#                  (cleanup, cleanup-dpdk)
#   v6             IPv6, three rows, the generator's xsk engine (v6-gen-engine)
#   poll-pass      --poll with latency-pass alone: it runs, ordered percentiles
#   json-unwritable  --json /dev/full: said, exit 1
#   gen-bound      at a rate both rows deliver whole, the gain line says each
#                  measured the generator (the ratio a bound)
#   bad-settings   bad-*: each bad setting refused, nothing left
#   bad-xdp-present    a program already on the interface is refused
#   dev            --dev on a veth fed by a generator of its own (dev-run,
#                  the rows, offered-*, delivered-*, src-rx-*, dev-cleanup)
#   jumbo          --mtu 9000: the UDP rows in 9014-byte frames (the
#                  generator's packet engine, frags-aware programs, ucpumapd
#                  in packets of three frames) and one TCP stream, each
#                  positive; the table's Gbit/s column agrees with its Mpps,
#                  tun-ceiling's of 64-byte packets, its gain left out
#
# Root. One PASS/FAIL/SKIP line per case; the bench makes and removes its
# own namespaces; this script's own (--dev) are removed on exit, and every
# process it started is stopped by its pid.
set -u
BUILD=${BUILD:-build}
name=test-bench-datapath
cases="help v4 cleanup v6 poll-pass round-failed json-unwritable gen-bound latency-rate bad-settings bad-xdp-present dev jumbo"
cd "$(dirname "$0")/../.."
. tests/lib.sh
nsg=ucm-tbd-g-$$
nsd=ucm-tbd-d-$$

setup() {
	skip_unless_root "namespaces, XDP, tun"
	if [ ! -x "$BUILD/ucpumap-bench" ] || [ ! -x "$BUILD/ucpumapd" ] || [ ! -x "$BUILD/ucpumap-gen" ]; then
		echo "FAIL: $name: $BUILD/ucpumap-bench, ucpumapd or ucpumap-gen is not built (run make)"
		exit 0
	fi
	command -v python3 > /dev/null || { echo "SKIP: $name: needs python3"; exit 0; }
}

dpdk_ok=0
if command -v dpdk-testpmd > /dev/null &&
	ls /usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so* /usr/lib/*/dpdk/pmds-*/librte_net_tap.so* \
		> /dev/null 2>&1; then
	dpdk_ok=1
fi

# run_bench TAG TIMEOUT [ns] -- ARGS: the bench in the background, bounded
# (stopped at TIMEOUT: return 2, its output cut short).
run_bench() {
	local tag=$1 limit=$2 ns=$3 bpid rc
	shift 3
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$BUILD/ucpumap-bench" datapath "$@" > "$tmp/$tag.out" 2>&1 &
	else
		"$BUILD/ucpumap-bench" datapath "$@" > "$tmp/$tag.out" 2>&1 &
	fi
	bpid=$!
	lib_pid "$bpid"
	for _ in $(seq $((limit * 10))); do kill -0 "$bpid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$bpid" 2>/dev/null; then
		echo "FAIL: $name/$tag-run: still running after $limit s"
		stop_pid "$bpid" 100
		return 2
	fi
	wait "$bpid"
	rc=$?
	sed 's/^/# /' "$tmp/$tag.out"
	if [ "$rc" -ne 0 ] || [ ! -s "$tmp/$tag.json" ]; then
		echo "FAIL: $name/$tag-run: exit $rc, no JSON"
		return 1
	fi
	echo "PASS: $name/$tag-run"
}

# check TAG ROWS...: each row positive, ucpumapd's count within 1%.
check() {
	local tag=$1
	shift
	python3 - "$tmp/$tag.json" "$name/$tag" "$dpdk_ok" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
name, dpdk_ok, want_rows = sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
rows = {r["name"]: r for r in d["rows"]}

def lat_keys(o):
    return ("p50", "p90", "p99", "p999") if "p999" in o else ("p50", "p90", "p99")

for want in want_rows:
    r = rows.get(want)
    if r is None:
        print(f"FAIL: {name}/row-{want}: missing")
        continue
    if "skipped" in r:
        # no dpdk here: nothing measured; polling without --rx-cpus: the
        # refusal under test
        if want == "dpdk" and not dpdk_ok:
            print(f"SKIP: {name}/row-{want}: {r['skipped']}")
            continue
        ok = want in ("latency-cpumap-poll", "latency-cpumap-spin") and "polling" in r["skipped"]
        print(f"{'PASS' if ok else 'FAIL'}: {name}/row-{want}: skipped: {r['skipped']}")
        continue
    if r.get("median", 0) > 0 and r.get("runs") and all(x > 0 for x in r["runs"]):
        print(f"PASS: {name}/row-{want}")
    else:
        print(f"FAIL: {name}/row-{want}: runs {r.get('runs')}")
    if want.startswith("two-way"):
        back, share = r.get("back_runs", []), r.get("completions_direct_share", [])
        # Only the no-direct-bulk row returns no completion straight.
        direct_ok = share and (all(x == 0 for x in share) if want == "two-way-no-direct-bulk"
                               else all(x > 0 for x in share))
        if back and all(x > 0 for x in back) and direct_ok:
            print(f"PASS: {name}/back-{want}: way back {back} pps, direct share {share}")
        else:
            print(f"FAIL: {name}/back-{want}: way back {back} pps, direct share {share}")
    if want.startswith("latency-"):
        # round trips in us: ordered percentiles alone and under load, the
        # load half a measured capacity (the JSON's rates have 6 significant
        # digits: 1331364.4 is 1.33136e+06), and nearly every probe answered
        # (a p99.9 only where every round had 1000 answers: lat_keys)
        ps = [r.get(k, []) for k in lat_keys(r)]
        ld = r.get("load", {})
        lps = [ld.get(k, []) for k in lat_keys(ld)]
        ok = r.get("unit") == "us" and all(len(x) == len(r["runs"]) for x in ps + lps) and \
            len(lps) >= 3 and \
            all(a <= b for x in (ps, lps) for k in range(len(x) - 1) for a, b in zip(x[k], x[k + 1])) and \
            all(0 < l <= c / 2 * 1.001 + 1 for l, c in zip(ld.get("pps", [0]), r.get("capacity_pps", [0]))) and \
            all(x <= 100 for x in r.get("lost", [1e9]) + ld.get("lost", [1e9]))
        print(f"{'PASS' if ok else 'FAIL'}: {name}/latency-{want}: p50 {r.get('p50')} p99 {r.get('p99')} us, "
              f"under {ld.get('pps')} pps p50 {ld.get('p50')}, lost {r.get('lost')} {ld.get('lost')}")
        # the prober's view alone: each probe's send call to its read
        # holds the kernel's stamps of it, so no percentile is below the
        # kernel's (a hair for a probe whose clock stepped); its own part
        # in it is more than nothing
        pv = r.get("prober_view", {})
        aps = [pv.get(k, []) for k in lat_keys(pv)]
        own = pv.get("own_p50", []), pv.get("own_p99", [])
        ok = all(len(x) == len(r["runs"]) for x in aps + list(own)) and len(aps) == len(ps) and \
            all(a <= b for k in range(len(aps) - 1) for a, b in zip(aps[k], aps[k + 1])) and \
            all(a >= k * 0.99 for x, y in zip(aps, ps) for a, k in zip(x, y)) and \
            all(0 < a <= b for a, b in zip(*own))
        print(f"{'PASS' if ok else 'FAIL'}: {name}/prober-view-{want}: p50 {pv.get('p50')} p99 {pv.get('p99')} us, "
              f"its own part p50 {own[0]} p99 {own[1]}")
        # each phase's CPU cost, a busy share per round: CPU 0's and the
        # worker CPU's (/proc/stat) within [0, 1]; ucpumapd's RX thread's
        # and workers' too, give or take two of its clocks read a moment
        # apart, and -1 where there are none (the kernel's rows; no worker
        # in latency-pass)
        bad = []
        for ph in ("cost_alone", "cost_load"):
            c = r.get(ph, {})
            for k in ("cpu0", "worker_cpu", "rx_threads", "workers"):
                none = ("kernel" in want and k in ("rx_threads", "workers")) or \
                    (want == "latency-pass" and k == "workers")
                v = c.get(k, [])
                lo, hi = (0, 1) if k in ("cpu0", "worker_cpu") else (-0.01, 1.01)
                if len(v) != len(r["runs"]) or not all(x == -1 if none else lo <= x <= hi for x in v):
                    bad.append(f"{ph} {k} {v}")
        print(f"{'FAIL' if bad else 'PASS'}: {name}/cost-{want}: " +
              (", ".join(bad) if bad else f"alone {r.get('cost_alone')}, under load {r.get('cost_load')}"))
    if want.startswith(("latency-", "sockperf-")):
        # where the responder ran (the sockperf rows': its server), as it
        # found its own affinity: beside the worker, on the first --cpus
        # CPU (1 unless given) in the -pinned rows; else where the
        # scheduler puts it
        pin = "pinned to CPU 1" if want.endswith("-pinned") else "unpinned"
        print(f"{'PASS' if r.get('responder') == pin else 'FAIL'}: {name}/responder-{want}: "
              f"{r.get('responder')} (want {pin})")
    if want.startswith("sockperf-"):
        # sockperf's round trips, us: ordered percentiles, nearly every
        # message answered; no loaded run, so no load and no capacity
        ps = [r.get(k, []) for k in lat_keys(r)]
        ok = r.get("unit") == "us" and all(len(x) == len(r["runs"]) for x in ps) and \
            all(x > 0 for x in ps[0]) and "load" not in r and "capacity_pps" not in r and \
            all(a <= b for k in range(len(ps) - 1) for a, b in zip(ps[k], ps[k + 1])) and \
            all(x <= 10 for x in r.get("lost", [1e9]))
        print(f"{'PASS' if ok else 'FAIL'}: {name}/sockperf-{want}: p50 {r.get('p50')} p99 {r.get('p99')} us, "
              f"lost {r.get('lost')}")
    if want.startswith("cpumap-coalesce") or want == "tcp-coalesce":
        # 4 flows in holds of up to 64: nearly all datagrams share a write;
        # 1024 flows: no two of a hold are of one flow (a burst lost in
        # between could make a rare pair)
        share, segs = r.get("coalesced_share", []), r.get("super_segs_avg", [])
        few = want in ("cpumap-coalesce", "tcp-coalesce")
        # and the hold at work: without it a batch of 8 gives pairs
        ok = share and all((x > 0.5) if few else (x < 0.05) for x in share) and \
            (not few or (segs and all(x >= 8 for x in segs)))
        print(f"{'PASS' if ok else 'FAIL'}: {name}/merged-{want}: share of datagrams in super-packets {share}, "
              f"{r.get('super_segs_avg')} per super-packet")
    if want in ("pass", "cpumap-no-recycle", "cpumap", "cpumap-no-batch", "cpumap-no-latency", "two-way",
                "two-way-no-direct-bulk", "cpumap-coalesce", "cpumap-coalesce-many-flows"):
        if "daemon_tun_packets" not in r:
            print(f"FAIL: {name}/count-{want}: no statistics from ucpumapd")
            continue
        for own, kern in zip(r["daemon_tun_packets"], r["kernel_delivered_same_window"]):
            diff = abs(own - kern) / kern if kern else 1
            res = "PASS" if diff <= 0.01 else "FAIL"
            print(f"{res}: {name}/count-{want}: ucpumapd {own:.0f}, kernel {kern:.0f} ({100*diff:.2f}%)")
        p = r.get("pool", {})
        allocs = p.get("pool_alloc_fast", 0) + p.get("pool_alloc_refill", 0) + p.get("pool_alloc_slow", 0)
        print(f"{'PASS' if allocs > 0 else 'FAIL'}: {name}/pool-{want}: {allocs:.0f} allocations")
PY
	# A traceback loses the lines after it: a FAIL of its own.
	[ $? = 0 ] || echo "FAIL: $name/$tag-judge: the judge failed (its traceback above)"
}

all="kernel-pass kernel-cpumap pass cpumap-no-recycle cpumap cpumap-coalesce
cpumap-coalesce-many-flows cpumap-no-batch cpumap-no-hold cpumap-no-prewake cpumap-no-latency tun-ceiling dpdk two-way two-way-no-direct-bulk two-way-prewake
tcp-kernel tcp tcp-coalesce tcp-kernel-cpumap tcp-back tcp-back-no-offload tcp-back-sw-csum tcp-back-prewake udp-back
latency-kernel-cpumap latency-cpumap latency-cpumap-spin latency-cpumap-poll
latency-kernel-cpumap-pinned latency-cpumap-pinned
latency-cpumap-no-prewake latency-pass latency-two-way latency-two-way-prewake
sockperf-kernel-cpumap sockperf-cpumap"
# Under a sanitizer (CI's second pass, against its 30 minutes) v4 runs a
# row for each of ucpumapd's code paths the rows take (a mode, or a switch
# that changes what runs), not their variants (a pre-wake, more flows, the
# kernel's and the other tools' rows): the first pass runs every row.
san_rows="pass cpumap-no-recycle cpumap cpumap-coalesce cpumap-no-batch cpumap-no-hold
cpumap-no-latency two-way two-way-no-direct-bulk tcp-coalesce tcp-back tcp-back-no-offload
tcp-back-sw-csum udp-back latency-cpumap"
case_v4() {
	local rows=$all rc

	if [ -n "${SANITIZE:-}" ]; then
		rows=$san_rows
		echo "# $SANITIZE build: $(echo $rows | wc -w) rows of $(echo $all | wc -w), one a code path"
	fi
	# shellcheck disable=SC2086
	run_bench v4 120 "" --rounds 1 --seconds 1 --rows "$(echo $rows | tr ' ' ,)" \
		--json "$tmp/v4.json"
	rc=$?
	[ $rc = 0 ] && check v4 $rows
	# every child stopped as asked (sockperf's server dies of its SIGTERM)
	if [ $rc = 2 ]; then
		bad v4-stopped "the bench was stopped at its time limit: its children not seen to stop"
	elif grep -q "did not stop cleanly\|after SIGTERM" "$tmp/v4.out"; then
		bad v4-stopped "$(grep -m2 "did not stop cleanly\|after SIGTERM" "$tmp/v4.out")"
	else
		ok v4-stopped
	fi
}

# A row that fails in one round (here its ucpumapd, a wrapper that runs
# the real one the first time and fails the second) is left out whole,
# said why: what the failed round left (zeros) is in no median, gain or
# JSON figure; the bench exits 1.
# At a rate both rows deliver whole, the gain says each measured the
# generator: the ratio a bound, not a lead.
case_gen_bound() {
	timeout 120 "$BUILD/ucpumap-bench" datapath --rows kernel-cpumap,cpumap --rounds 2 --seconds 0.5 \
		--rate 10000 > "$tmp/gb.out" 2>&1
	if grep -q "kernel-cpumap delivered what the generator sent in most rounds: .*(the ratio is an upper bound)" "$tmp/gb.out" &&
		grep -q "^    cpumap delivered what the generator sent in most rounds: .*(the ratio is a lower bound)" "$tmp/gb.out"; then
		ok gen-bound "$(grep -c 'measured the generator' "$tmp/gb.out") rows bound, said"
	else
		bad gen-bound "$(grep -A3 '^gains' "$tmp/gb.out" | tr '\n' ' ')"
	fi
}

case_round_failed() {
	local dir=$tmp/rf rc
	mkdir -p "$dir"
	cp "$BUILD/ucpumap-bench" "$BUILD/ucpumap-gen" "$dir/"
	cat > "$dir/ucpumapd" <<SH
#!/bin/sh
[ -e "$dir/once" ] && { echo "ucpumapd (test): failing this round" >&2; exit 1; }
: > "$dir/once"
exec "$(cd "$BUILD" && pwd)/ucpumapd" "\$@"
SH
	chmod +x "$dir/ucpumapd"
	timeout 120 "$dir/ucpumap-bench" datapath --rows kernel-cpumap,cpumap --rounds 2 --seconds 0.3 \
		--json "$tmp/rf.json" > "$tmp/rf.out" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q "round 2, row cpumap failed" "$tmp/rf.out" &&
		grep -Eq "^cpumap +skipped: failed in round 2 \(its figures left out\)" "$tmp/rf.out" &&
		"$PY" -c 'import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["rows"]}
c, k = rows["cpumap"], rows["kernel-cpumap"]
sys.exit(not (c.get("skipped", "").startswith("failed in round 2") and "runs" not in c and
	      len(k["runs"]) == 2))' "$tmp/rf.json"; then
		ok round-failed "the row left out, said why; exit 1"
	else
		bad round-failed "exit $rc: $(grep -E 'failed|cpumap ' "$tmp/rf.out" | head -4 | tr '\n' ' ')"
	fi
}

# A --json file that cannot be written (a full disk: /dev/full takes the
# open, refuses the bytes): said, exit 1, though every row ran.
case_json_unwritable() {
	local rc
	timeout 60 "$BUILD/ucpumap-bench" datapath --rows kernel-pass --rounds 1 --seconds 0.2 \
		--json /dev/full > "$tmp/ju.out" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q "^datapath: writing /dev/full failed: No space left on device" "$tmp/ju.out"; then
		ok json-unwritable "said, exit 1"
	else
		bad json-unwritable "exit $rc: $(grep -v '^ ' "$tmp/ju.out" | tail -3 | tr '\n' ' ')"
	fi
}

# --rate paces the throughput rows; a latency row's capacity run is at
# full speed all the same (its load is half of what the path carries).
case_latency_rate() {
	if run_bench lr 60 "" --rows latency-kernel-cpumap --rate 1000 --rounds 1 --seconds 0.3 \
		--json "$tmp/lr.json"; then
		"$PY" -c 'import json, sys
r = [r for r in json.load(open(sys.argv[1]))["rows"] if r["name"] == "latency-kernel-cpumap"][0]
print(r["capacity_pps"][0])
sys.exit(r["capacity_pps"][0] < 20000)' "$tmp/lr.json" > "$tmp/lr.cap" 2>&1 &&
			ok latency-rate "capacity $(cat "$tmp/lr.cap") pps with --rate 1000" ||
			bad latency-rate "capacity $(cat "$tmp/lr.cap") pps with --rate 1000 (want the path's, far above)"
		# 300 probes a phase: a p99.9 would only be their largest
		"$PY" -c 'import json, sys
r = [r for r in json.load(open(sys.argv[1]))["rows"] if r["name"] == "latency-kernel-cpumap"][0]
sys.exit(any("p999" in o for o in (r, r["load"], r["prober_view"])) or "p99" not in r["load"])' \
			"$tmp/lr.json" && ok few-probes "no p99.9 of 300 probes" ||
			bad few-probes "a p99.9 of 300 probes in the JSON (or no p99 under load)"
		grep -E '^latency-kernel-cpumap +[0-9.]+ +[0-9.]+ +[0-9.]+ +- \|' "$tmp/lr.out" > /dev/null &&
			ok few-probes-table "the table's p99.9 is -" ||
			bad few-probes-table "$(grep '^latency-kernel-cpumap ' "$tmp/lr.out")"
	fi
}

# --help names every row: the list is longer than any line buffer.
case_help() {
	local missing=
	"$BUILD/ucpumap-bench" datapath --help > "$tmp/help" 2>&1
	for r in $all; do
		tr ' ,()' '\n\n\n\n' < "$tmp/help" | grep -qx -- "$r" || missing="$missing $r"
	done
	if [ -z "$missing" ]; then
		ok help "$(echo $all | wc -w) rows named"
	else
		bad help "not named:$missing"
	fi
}

case_cleanup() {
	lib_need v4
	if ip netns list | grep -q "ucm-bench-"; then
		echo "FAIL: $name/cleanup: namespaces left: $(ip netns list | grep ucm-bench-)"
	else
		echo "PASS: $name/cleanup"
	fi
	if ls -d /var/run/dpdk/ucm-bench-* > /dev/null 2>&1; then
		echo "FAIL: $name/cleanup-dpdk: testpmd's runtime directory left: $(ls -d /var/run/dpdk/ucm-bench-*)"
	else
		echo "PASS: $name/cleanup-dpdk"
	fi
}

# --poll with --pass rows alone: the RX thread is ucpumapd's one polling
# thread, on a CPU of its own (on 2 CPUs the one --poll ucpumapd takes).
case_poll_pass() {
	if run_bench poll-pass 40 "" --poll --rx-cpus 1 --rounds 1 --seconds 0.5 \
		--rows latency-pass --json "$tmp/poll-pass.json"; then
		check poll-pass latency-pass
	fi
}

# With --gen-engine xsk: each row fails unless the generator's own banner
# names the engine the bench's names.
# two-way, IPv4 only, is skipped: no table but the main one names it (its
# counts were printed as "no statistics from ucpumapd").
case_v6() {
	if run_bench v6 30 "" --ipv6 --rounds 1 --seconds 1 \
		--rows kernel-cpumap,cpumap,tun-ceiling,two-way --gen-engine xsk --json "$tmp/v6.json"; then
		check v6 kernel-cpumap cpumap tun-ceiling
		if grep -q 'ucpumap-gen xsk' "$tmp/v6.out"; then
			echo "PASS: $name/v6-gen-engine"
		else
			echo "FAIL: $name/v6-gen-engine: the banner does not name the xsk engine: $(head -1 "$tmp/v6.out")"
		fi
		if [ "$(grep -c '^ *two-way ' "$tmp/v6.out")" = 1 ] &&
			grep -q '^two-way .*skipped' "$tmp/v6.out"; then
			echo "PASS: $name/v6-skipped-row: named once, as skipped"
		else
			echo "FAIL: $name/v6-skipped-row: $(grep '^ *two-way ' "$tmp/v6.out" | tr '\n' '|')"
		fi
	fi
}

# --dev: a veth standing in for a NIC, an outside generator sending all along.
# vd takes the generator's frames as a NIC does, with or without an XDP
# program: GRO on (veth takes redirected frames only with the peer's
# program or GRO; ucpumap-gen refuses, and stops, otherwise).
dev_pair() {
	veth_pair "$nsg" "$nsd" vg vd 10.78.0.1/24 10.78.0.2/24 &&
		ip netns exec "$nsd" sysctl -qw net.ipv4.conf.all.rp_filter=0 &&
		ip netns exec "$nsd" ethtool -K vd gro on > /dev/null || {
		echo "FAIL: $name/dev-setup: cannot build the namespaces"
		exit 0
	}
	mac=$(mac_of "$nsd" vd)
}

# Bad settings: a precise message, exit 2 (usage) or 1 (refused), nothing left.
bad_setting() {
	local tag=$1 want_rc=$2 want_msg=$3 rc
	shift 3
	# $RUN_PREFIX: a command before the bench (taskset)
	ip netns exec "$nsd" timeout 20 ${RUN_PREFIX:-} "$BUILD/ucpumap-bench" datapath "$@" > "$tmp/bad" 2>&1
	rc=$?
	if [ "$rc" -eq "$want_rc" ] && grep -q -- "$want_msg" "$tmp/bad" &&
		! ip -n "$nsd" link show vd | grep -q xdp; then
		echo "PASS: $name/bad-$tag"
	else
		echo "FAIL: $name/bad-$tag: exit $rc (want $want_rc): $(head -c 300 "$tmp/bad")"
	fi
}
case_bad_settings() {
	lib_once dev_pair
	bad_setting dev-no-sink 2 "needs --sink-ip" --dev vd
	bad_setting sink-ip-veth 2 "go with --dev" --sink-ip 10.78.0.2
	bad_setting sink-ip-syntax 2 "not an IPv4 or IPv6" --dev vd --sink-ip 10.78.0
	bad_setting dev-missing 1 "no such interface" --dev nosuch0 --sink-ip 10.78.0.2
	bad_setting sink-not-local 1 "must be an address of this host" --dev vd --sink-ip 10.78.0.9
	# The interface's own, left to the kernel (link_ctrl): no row would
	# measure ucpumap.
	bad_setting sink-link-local 2 "--sink-ip 169.254.7.7 port 9000: a link-local address, .*link_ctrl" \
		--dev vd --sink-ip 169.254.7.7
	bad_setting sink-multicast6 2 "--sink-ip ff02::1 port 9000: a multicast address" --dev vd --sink-ip ff02::1
	bad_setting sink-dhcp-port 2 "port 67: DHCP's port, .*give another --sink-port" \
		--dev vd --sink-ip 10.78.0.2 --sink-port 67
	bad_setting rate-with-dev 2 "the generator's" --dev vd --sink-ip 10.78.0.2 --rate 1000
	bad_setting mtu-with-dev 2 "the NIC's MTU is yours" --dev vd --sink-ip 10.78.0.2 --mtu 9000
	bad_setting gen-engine-with-dev 2 "--gen-engine are the" --dev vd --sink-ip 10.78.0.2 --gen-engine xsk
	bad_setting gen-engine-unknown 2 "--gen-engine: .dpdk. is not live, loop, xsk or packet" --gen-engine dpdk
	bad_setting mtu-range 2 "mtu" --mtu 9001
	bad_setting gen-engine-mtu 2 "--gen-engine live: --mtu 9000 makes 9014-byte frames, and its frames hold 3408 bytes: give --gen-engine packet" \
		--mtu 9000 --gen-engine live
	bad_setting busy-poll-no-rx-cpus 2 "needs ucpumapd.s RX thread on a CPU of its own: give --rx-cpus" --dev vd --sink-ip 10.78.0.2 --busy-poll
	bad_setting cpus-zero-veth 2 "CPU 0 carries the generator" --cpus 0
	# The generator's CPU 0, the default worker's CPU 1, out of reach
	# (a cpuset): refused before any row, not failed in each.
	RUN_PREFIX="taskset -c 1" bad_setting cpu0-not-allowed 2 "CPU 0 is not one this process may run on" \
		--rows kernel-cpumap
	RUN_PREFIX="taskset -c 0" bad_setting cpu1-not-allowed 2 "the default worker's CPU 1 is not one this process may run on.*give --cpus" \
		--rows kernel-cpumap
	bad_setting queues-syntax 2 "--queues: 'x' is not a list of distinct numbers 0-63" --dev vd --sink-ip 10.78.0.2 --queues x
	bad_setting queues-backwards 2 "--queues: '3-1' is not a list of distinct numbers 0-63" --dev vd --sink-ip 10.78.0.2 --queues 3-1
	# vd has one RX queue: refused before any row, not in each.
	bad_setting dev-queue-missing 1 "--queues 0-3: vd has RX queues 0-0, not queue 1: .*ethtool -L vd combined N" \
		--dev vd --sink-ip 10.78.0.2 --queues 0-3 --cpus 1 --rows kernel-pass,cpumap --seconds 30
	bad_setting unknown-row 2 "unknown row" --rows cpumap,nosuch
	# --dev with several queues and the workers left to the default:
	# said, before the run (here refused for its row).
	bad_setting dev-queues-one-worker 2 "--queues 0-1 and no --cpus: every queue feeds one worker, on CPU 1" \
		--dev vd --sink-ip 10.78.0.2 --queues 0-1 --rows nosuch
	bad_setting spin-no-rx-cpus 2 "needs ucpumapd's RX thread on a CPU of its own" --spin-us 200
	bad_setting poll-shared-cpu 2 "--rx-cpus and --cpus share a CPU" --poll --rx-cpus 1 --cpus 1 --rows latency-cpumap
	bad_setting poll-generator-cpu 2 "the generator's CPU" --poll --rx-cpus 0 --rows latency-pass
	bad_setting busy-poll-generator-cpu 2 "the generator's CPU" --busy-poll --rx-cpus 0 --rows latency-pass
	# Every queue's RX thread, as ucpumapd places them (queue q on the
	# q-th --rx-cpus CPU, in turn), not the first alone.
	bad_setting busy-poll-queue1-on-worker 2 "--busy-poll: --rx-cpus and --cpus share a CPU .0." \
		--dev vd --sink-ip 10.78.0.2 --queues 0-1 --rx-cpus 1,0 --cpus 0 --busy-poll --rows cpumap
	bad_setting busy-poll-queues-one-cpu 2 "--busy-poll: two queues' RX threads share a CPU .1." \
		--dev vd --sink-ip 10.78.0.2 --queues 0-1 --rx-cpus 1 --cpus 0 --busy-poll --rows kernel-pass
	bad_setting cpus-zero-not-latency 2 "latency rows alone may share it" --cpus 0 --rows latency-cpumap,cpumap
	ip netns exec "$nsd" sysctl -qw net.ipv4.conf.all.rp_filter=1
	bad_setting rp-filter-strict 1 "rp_filter is 1" --dev vd --sink-ip 10.78.0.2
	ip netns exec "$nsd" sysctl -qw net.ipv4.conf.all.rp_filter=0
}

# A program already on the interface is refused, and stays.
case_bad_xdp_present() {
	local hpid rc
	lib_once dev_pair
	ip netns exec "$nsd" "$BUILD/ucpumapd" --dev vd --tun ucmt0 --interval 0 > "$tmp/holder" 2>&1 &
	hpid=$!
	lib_pid "$hpid"
	for _ in $(seq 50); do ip -n "$nsd" link show vd | grep -q xdp && break; sleep 0.1; done
	ip netns exec "$nsd" timeout 20 "$BUILD/ucpumap-bench" datapath --dev vd --sink-ip 10.78.0.2 \
		> "$tmp/bad" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "already has an XDP program" "$tmp/bad" &&
		ip -n "$nsd" link show vd | grep -q xdp; then
		echo "PASS: $name/bad-xdp-present"
	else
		echo "FAIL: $name/bad-xdp-present: exit $rc: $(head -c 300 "$tmp/bad")"
	fi
	kill "$hpid" && wait "$hpid"
}

case_dev() {
	local dev_rows dpdk_args
	lib_once dev_pair
	ip netns exec "$nsg" "$BUILD/ucpumap-gen" --dev vg --dst-ip 10.78.0.2 --dst-mac "$mac" \
		--dst-port 9100 --flows 16 --cpu 0 --rate 200000 --duration 60 > "$tmp/gen" 2>&1 &
	lib_pid "$!"
	dev_rows="kernel-pass kernel-cpumap cpumap tun-ceiling"
	dpdk_args=
	[ "$dpdk_ok" = 1 ] && dev_rows="$dev_rows dpdk"
	# The JSON names the NIC's MTU (not --mtu's default) and an outside
	# generator.
	ip -n "$nsd" link set vd mtu 2000
	if run_bench dev 40 "$nsd" --dev vd --sink-ip 10.78.0.2 --sink-port 9100 --rounds 1 \
		--seconds 1 --rows "$(echo $dev_rows | tr ' ' ,)" --json "$tmp/dev.json"; then
		check dev $dev_rows
		# offered = what vd received, which the generator's pace bounds
		python3 - "$tmp/dev.json" "$name/dev" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["mtu"] == 2000 and d["conditions"]["gen_engine"] == "external"
print(f"{'PASS' if ok else 'FAIL'}: {sys.argv[2]}/conditions: mtu {d['mtu']}, generator {d['conditions']['gen_engine']}")
for r in d["rows"]:
    if "skipped" in r or r["name"] == "tun-ceiling":	# its own writes, not the NIC's
        continue
    s = r["sent_packets"][0]
    # vd is a veth: a packet its XDP program failed to redirect (a full
    # socket ring) is counted in its packets and again in its drops
    # (measure.c, nic_rx_now()); a NIC counts it once. Where the sockets'
    # count is known, half of what vd read beyond it is at most what the
    # generator sent beyond it: the pace bounds that.
    g = s
    if "src_rx_pps" in r:
        g = (s + r["src_rx_pps"][0] * d["seconds"]) / 2
    ok = 0 < g <= 200000 * 1.2 * d["seconds"] + 1000
    print(f"{'PASS' if ok else 'FAIL'}: {sys.argv[2]}/offered-{r['name']}: {s:.0f} packets at vd ({g:.0f} sent)")
    # The far side's generator runs on: what was delivered (and what the
    # sockets took) is counted over the offered load's window, not over the
    # row's set-up and drain; a ring's worth may come from before it.
    for key, what in (("runs", "delivered"), ("src_rx_pps", "src-rx")):
        if key not in r:
            continue
        v = r[key][0] * d["seconds"]
        ok = 0 < v <= s * 1.02 + 5000
        print(f"{'PASS' if ok else 'FAIL'}: {sys.argv[2]}/{what}-{r['name']}: {v:.0f} of {s:.0f} offered")
PY
		[ $? = 0 ] || echo "FAIL: $name/dev-offered-judge: the judge failed (its traceback above)"
	fi
	ip -n "$nsd" link set vd mtu 1500
	if ip -n "$nsd" link show vd | grep -q xdp || ip -n "$nsd" link show ucmb0 > /dev/null 2>&1; then
		echo "FAIL: $name/dev-cleanup: XDP or the tun left on the interface"
	else
		echo "PASS: $name/dev-cleanup"
	fi
	dev_stop kill KILL
	dev_stop int INT
}

# dev_stop TAG SIG: kernel-pass on --dev vd with a 30 s window, SIG 2 s in.
# SIGINT ends the window at once (a clean exit within 3 s); SIGKILL leaves
# nothing on the NIC (the program through a bpf_link the kernel takes off).
dev_stop() {
	local bpid t0 ms attached=
	ip netns exec "$nsd" "$BUILD/ucpumap-bench" datapath --dev vd --sink-ip 10.78.0.2 \
		--sink-port 9100 --rounds 1 --seconds 30 --rows kernel-pass > "$tmp/ds-$1.out" 2>&1 &
	bpid=$!
	lib_pid "$bpid"
	# The row's program on vd first: else the signal tests nothing.
	for _ in $(seq 100); do
		ip -n "$nsd" link show vd | grep -q xdp && { attached=1; break; }
		sleep 0.05
	done
	sleep 0.5
	t0=$(date +%s%N)
	kill -"$2" "$bpid"
	for _ in $(seq 100); do kill -0 "$bpid" 2> /dev/null || break; sleep 0.05; done
	ms=$((($(date +%s%N) - t0) / 1000000))
	lib_wait "$bpid"
	sleep 0.3
	# a killed bench leaves its scratch folder, named by its pid
	rm -rf /tmp/ucm-bench-"$bpid"-*
	if [ -z "$attached" ]; then
		echo "FAIL: $name/dev-sig$1: the row's XDP program not on vd within 5 s: SIG$2 tested nothing ($(tail -2 "$tmp/ds-$1.out" | tr '\n' ' '))"
	elif ip -n "$nsd" link show vd | grep -q xdp; then
		echo "FAIL: $name/dev-sig$1: an XDP program left on vd after SIG$2"
		ip -n "$nsd" link set vd xdp off
	elif [ "$2" = INT ] && [ $ms -gt 3000 ]; then
		echo "FAIL: $name/dev-sig$1: SIGINT took $ms ms to end the 30 s window"
	else
		echo "PASS: $name/dev-sig$1: gone after $ms ms, nothing on vd"
	fi
}

case_jumbo() {
	local line mpps gbps
	if run_bench jumbo 90 "" --mtu 9000 --rounds 1 --seconds 1 \
		--rows kernel-pass,kernel-cpumap,cpumap,tun-ceiling,tcp-kernel-cpumap,tcp \
		--json "$tmp/jumbo.json"; then
		check jumbo kernel-pass kernel-cpumap cpumap tun-ceiling tcp-kernel-cpumap tcp
		# cpumap's dst rx (Mpps) and Gbit/s: 9014-byte frames
		line=$(grep '^cpumap ' "$tmp/jumbo.out" | head -1)
		mpps=$(echo "$line" | awk '{print $(NF-2)}')
		gbps=$(echo "$line" | awk '{print $NF}')
		if [ "$(jget "$tmp/jumbo.json" "d['mtu']")" = 9000 ] &&
			awk -v m="$mpps" -v g="$gbps" 'BEGIN { e = m * 9014 * 8 / 1e3; exit !(m > 0 && g > e * 0.98 && g < e * 1.02) }'; then
			ok jumbo-gbps "cpumap $mpps Mpps, $gbps Gbit/s"
		else
			bad jumbo-gbps "the table says '$line', the JSON mtu $(jget "$tmp/jumbo.json" "d['mtu']")"
		fi
		# The ceiling still writes 64-byte packets: its Gbit/s are of
		# those, and cpumap's ratio to it is left out.
		line=$(grep '^tun-ceiling ' "$tmp/jumbo.out" | head -1)
		mpps=$(echo "$line" | awk '{print $(NF-2)}')
		gbps=$(echo "$line" | awk '{print $NF}')
		if awk -v m="$mpps" -v g="$gbps" 'BEGIN { e = m * 64 * 8 / 1e3; exit !(m > 0 && g > e * 0.9 - 0.01 && g < e * 1.1 + 0.01) }' &&
			grep -q "cpumap *vs tun-ceiling *left out" "$tmp/jumbo.out"; then
			ok jumbo-ceiling "tun-ceiling $mpps Mpps, $gbps Gbit/s of 64-byte packets; its gain left out"
		else
			bad jumbo-ceiling "'$line'; $(grep 'vs tun-ceiling' "$tmp/jumbo.out")"
		fi
	fi
}

# Under a sanitizer these run in the first pass only: IPv6, the jumbo
# frames and ucpumapd's paths under them are test-ucpumapd's, test-jumbo's
# and test-two-way's there too; --dev adds the bench's code, not ours.
first_pass_only v6 dev jumbo

lib_run_cases "$@"
