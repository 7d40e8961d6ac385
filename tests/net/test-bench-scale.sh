#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumap-bench scale in its tiny mode: widths 1 and 2 (on CPUs shared
# when the machine has fewer than 6), one round of half a second per row.
# Never asserts speed: every row at every width runs and delivers, each of
# ucpumapd's queues and workers takes part, the light queues of the flood
# rows were offered traffic and their counts add up, the JSON and the
# chart's script are written, and nothing is left behind. Then bad
# settings, each refused with its message and nothing left. Then --dev,
# on a veth of 2 queues in namespaces of this script's own standing in
# for a NIC, fed by generators the bench does not start (one per queue:
# veth puts a redirected frame on queue (sending CPU) % 2).
#
#   run            the tiny run (run, rows, row-*, json-shape)
#   queues         every queue received and every worker processed, in
#                  each of ucpumapd's rows that has several (queues-*);
#                  each worker got as many flows as the others, give or
#                  take one (flows-even-*)
#   flood          the flood rows: light traffic offered and delivered,
#                  the flood's count and the light ones' within the total;
#                  the light datagrams' one-way latency (flood-latency-*),
#                  each light queue's own (flood-queue-latency-*: at width
#                  2 there is one, so only its wiring is checked here)
#   chart          the chart's gnuplot script holds the three lines
#   cleanup        no namespace, no XDP program left after the run
#   bad-settings   bad-*: each refused with its message, exit status, and
#                  nothing left; among them bad-width-cpus: --widths up to
#                  the first width this host's CPUs cannot place without
#                  --shared-cpus, refused (not skipped) before any
#                  namespace, no namespace or link left
#   shared-default  --shared-cpus without --widths on one CPU: width 1
#                  runs, the wider ones skipped, saying why
#   sigpipe        the bench's reader goes away (| head -1): it stops and
#                  leaves no namespace and no ucpumapd
#   dev-bad-settings  dev-bad-*: --dev's bad settings (a width above the
#                  queues, no traffic, the generators' options, flood rows
#                  alone, a width its --cpus cannot place, ...), each
#                  refused, nothing left on vd; dev-altname: --dev by an
#                  altname of vd runs (the probe finds the traffic)
#   dev-w2         traffic on both queues, widths 1 and 2: the wide,
#                  no-fair, lanes and fan-in rows at width 2, each queue offered
#                  and received, the rest skipped with the reason
#                  (dev-w2-run, dev-w2-rows, dev-w2-row-*, dev-w2-skip-*,
#                  dev-w2-left)
#   dev-w1         traffic on queue 0, widths 1 and 2: the wide rows at
#                  width 1, fan-out at 2, both workers at work; the
#                  fan-in and lanes rows skipped at every width, saying
#                  they need 2 queues (dev-w1-*)
#   dev-moved      a second queue's traffic starting mid-run: the cells
#                  after it fail, saying the traffic moved; --chart then
#                  draws nothing, saying so (dev-moved-*)
#
# Root. The bench makes and removes its own namespaces; those of --dev
# and the generators are this script's, removed and stopped on exit.
set -u
BUILD=${BUILD:-build}
name=test-bench-scale
cases="run queues flood chart cleanup bad-settings shared-default sigpipe dev-bad-settings dev-w2 dev-w1 dev-moved"
cd "$(dirname "$0")/../.."
. tests/lib.sh
nsg=ucm-tbs-g-$$
nsd=ucm-tbs-d-$$

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

run_pid=
# The bench's namespaces now, one name a line; with a pid, only those of
# that bench (ucm-bench-*-PID): another bench running meanwhile is not ours.
bench_ns() {
	ip netns list 2> /dev/null | awk -v p="${1:-}" \
		'/^ucm-bench-/ && (p == "" || $1 ~ ("-" p "$")) {print $1}' | sort
}

# The tiny run, bounded: $rc, $tmp/run.out, $tmp/s.json, $tmp/s.png.gp.
tiny() {
	local shared= bpid
	[ "$(nproc)" -lt 6 ] && shared=--shared-cpus
	"$BUILD/ucpumap-bench" scale --widths 1,2 --rounds 1 --seconds 1 $shared \
		--json "$tmp/s.json" --chart "$tmp/s.png" > "$tmp/run.out" 2>&1 &
	bpid=$!
	run_pid=$bpid
	lib_pid "$bpid"
	for _ in $(seq 1200); do kill -0 "$bpid" 2> /dev/null || break; sleep 0.1; done
	lib_term "$bpid" 20
	rc=$?
	sed 's/^/# /' "$tmp/run.out"
}

# py CASE: the JSON judged by the Python that follows on stdin; it prints
# the PASS/FAIL lines. A judge that fails (a traceback: the lines after it
# lost) is CASE's FAIL.
py() {
	python3 - "$tmp/s.json" "$name" || bad "$1" "the judge failed (exit $?, its traceback above)"
}

case_run() {
	lib_once tiny
	if [ "$rc" -ne 0 ] || [ ! -s "$tmp/s.json" ]; then
		bad run "exit $rc, JSON $( [ -s "$tmp/s.json" ] && echo written || echo missing)"
		return
	fi
	ok run
	py run-judge <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name = sys.argv[2]
want = {(r, 1) for r in ("kernel-cpumap", "cpumap", "cpumap-coalesce")}
want |= {(r, 2) for r in ("kernel-cpumap", "cpumap", "cpumap-coalesce", "cpumap-no-fair",
                          "kernel-cpumap-fan-in", "cpumap-fan-in", "kernel-cpumap-fan-out",
                          "cpumap-fan-out", "kernel-cpumap-flood", "cpumap-flood",
                          "cpumap-flood-no-fair", "cpumap-lanes", "cpumap-flood-lanes")}
got = {(r["row"], r["width"]): r for r in d["rows"]}
for key in sorted(want):
    r = got.get(key)
    tag = f"row-{key[0]}-w{key[1]}"
    if r is None:
        print(f"FAIL: {name}/{tag}: missing"); continue
    runs = r.get("runs", [])	# none where a round failed
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
	py queues <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name = sys.argv[2]
for r in d["rows"]:
    if "rx_cpus" not in r or (r["queues"] < 2 and r["workers"] < 2):
        continue
    tag = f"queues-{r['row']}-w{r['width']}"
    runs = r.get("runs", [])
    good = runs and all(len(x.get("queue_rx", [])) == r["queues"] and all(q > 0 for q in x["queue_rx"])
                        and len(x.get("worker_processed", [])) == r["workers"]
                        and all(w > 0 for w in x["worker_processed"])
                        and len(x.get("queue_xsk_drops", [])) == r["queues"]
                        and len(x.get("queue_enqueue_drops", [])) == r["queues"] for x in runs)
    print(f"{'PASS' if good else 'FAIL'}: {name}/{tag}: rx per queue "
          f"{[x.get('queue_rx') for x in runs]}, per worker {[x.get('worker_processed') for x in runs]}")
# The generators' source ports give each worker as many flows as the
# others, give or take one (the hash alone: 5 and 3 at width 2, coalesce).
for r in d["rows"]:
    if r["workers"] < 2:
        continue
    fw, fq = r.get("flows_per_worker", []), r.get("flows_per_queue", 0)
    good = len(fw) == r["workers"] and sum(fw) == fq * r["queues"] and max(fw) - min(fw) <= 1
    print(f"{'PASS' if good else 'FAIL'}: {name}/flows-even-{r['row']}-w{r['width']}: "
          f"{fq} flows a queue, per worker {fw}")
PY
}

case_flood() {
	lib_need run
	py flood <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name = sys.argv[2]; secs = d["seconds"]
for r in d["rows"]:
    if "-flood" not in r["row"]:
        continue
    if "runs" not in r:
        print(f"FAIL: {name}/flood-{r['row']}-w{r['width']}: a round failed"); continue
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
        # each light datagram read timed from its send time to the
        # stack: a latency, not the time the bench read it, after the row
        # (then its p99 would be the row's length, or more). Under the
        # flood on shared CPUs the rings hold a light datagram up to 292 ms
        # (the loop engine): the bound is half a row.
        # (no percentiles where none was timed)
        p50, p99, n = x.get("light_latency_p50_us", 0), x.get("light_latency_p99_us", 0), x.get("light_latency_timed", 0)
        good = n >= 0.9 * sum(ld) and 1 < p50 <= p99 < secs * 1e6 / 2
        print(f"{'PASS' if good else 'FAIL'}: {name}/flood-latency-{r['row']}-w{r['width']}: "
              f"{n:.0f} of {sum(ld):.0f} timed, p50 {p50:.1f} us, p99 {p99:.1f} us")
        # each light queue's own: its timed count its share of the pool's
        qt, q50, q99 = x.get("light_queue_timed", []), x.get("light_queue_p50_us", []), x.get("light_queue_p99_us", [])
        good = len(qt) == len(q50) == len(q99) == r["queues"] - 1 and sum(qt) == n and \
            all(t > 0 and 1 < a <= b for t, a, b in zip(qt, q50, q99))
        print(f"{'PASS' if good else 'FAIL'}: {name}/flood-queue-latency-{r['row']}-w{r['width']}: "
              f"timed {qt}, p50 {q50}, p99 {q99}")
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
	local left
	left=$(bench_ns "$run_pid")
	if [ -z "$left" ]; then
		ok cleanup
	else
		bad cleanup "namespaces left: $(echo $left)"
	fi
}

# The bench's links in this namespace, one name a line: there should be none
# (its veth pair and tun live in its namespaces).
bench_links() {
	ip -o link show 2> /dev/null | awk -F': ' '{ sub(/@.*/, "", $2) }
		$2 == "vg" || $2 == "vd" || $2 == "ucmb0" { print $2 }'
}

# bad_setting TAG STATUS TEXT ARGS...: refused with STATUS and TEXT (each
# of its lines found), no namespace of the bench's and no link left.
bad_setting() {
	local tag=$1 want=$2 text=$3 rc before t miss=
	shift 3
	before=$(bench_ns)
	timeout 30 "$BUILD/ucpumap-bench" scale "$@" > "$tmp/bad" 2>&1
	rc=$?
	while read -r t; do
		grep -qF -- "$t" "$tmp/bad" || miss="$miss '$t'"
	done <<< "$text"
	if [ "$rc" -eq "$want" ] && [ -z "$miss" ] && [ "$(bench_ns)" = "$before" ] &&
		[ -z "$(bench_links)" ]; then
		ok "bad-$tag" "$(head -1 "$tmp/bad")"
	else
		bad "bad-$tag" "exit $rc (want $want), want$miss; namespaces $(echo $(bench_ns)), links $(echo $(bench_links)): $(head -c 300 "$tmp/bad")"
	fi
}

# The widths 1, 2, 4, ... up to the first this host cannot place without
# --shared-cpus (3 CPUs a width), comma-separated; none on 48 CPUs or more.
unplaceable_widths() {
	local w=1 l=
	while [ $w -le 16 ]; do
		l=$l${l:+,}$w
		[ $((3 * w)) -gt "$(nproc)" ] && { echo "$l"; return; }
		w=$((w * 2))
	done
}

case_bad_settings() {
	local ws w
	bad_setting width-zero 2 "--widths: '0' is not a whole number between 1 and 16" --widths 0
	bad_setting width-twice 2 "--widths: 2 given twice" --widths 1,2,2
	bad_setting width-syntax 2 "--widths" --widths 1,x
	bad_setting unknown-row 2 "no row 'nosuch'; the rows: kernel-cpumap" --rows cpumap,nosuch
	bad_setting gen-engine-xsk 2 "--gen-engine: live or loop" --gen-engine xsk
	bad_setting no-width-fits 1 "no width fits 1 CPUs: width 1 needs 3" --cpus 0
	bad_setting fan-at-1 1 "the fan, flood, no-fair and lanes rows need a width of 2" --rows cpumap-fan-in \
		--widths 1 --shared-cpus
	bad_setting one-queue 1 "width 2 needs 2 CPUs for its generators, one per queue, even with --shared-cpus; 1 given
give more --cpus" --cpus 0 --widths 2 --shared-cpus
	bad_setting width-empty-item 2 "--widths: '1,,2' has an empty item" --widths 1,,2
	# each ucpumapd cell would refuse a busy-polling RX thread beside a worker
	bad_setting busy-poll-shared 2 "--busy-poll with --shared-cpus: a busy-polling RX thread needs a CPU of its own" \
		--dev nosuch0 --sink-ip 10.9.9.9 --busy-poll --shared-cpus
	bad_setting rows-empty 2 "--rows: '' has an empty item" --rows ""
	bad_setting rows-comma 2 "--rows: 'cpumap,' has an empty item" --rows cpumap,
	# the output files are tried before the run, not found bad after it
	bad_setting json-unwritable 2 "cannot write '/nonexistent-ucm/s.json'" --json /nonexistent-ucm/s.json
	bad_setting chart-quote 2 "give a file name without '" --chart "$tmp/a'b.png"
	ws=$(unplaceable_widths)
	w=${ws##*,}
	if [ -z "$ws" ]; then
		echo "SKIP: $name/bad-width-cpus: every width up to 16 fits $(nproc) CPUs"
	else
		# a width asked for is refused, not skipped; the rest never runs
		bad_setting width-cpus 1 "--widths: width $w needs $((3 * w)) CPUs
--shared-cpus" --widths "$ws" --rounds 1 --seconds 0.2
	fi
}

# --shared-cpus without --widths on one CPU: width 1 runs, the wider ones
# (a generator's CPU each, even shared) are skipped, saying why.
case_shared_default() {
	local rc
	timeout 60 "$BUILD/ucpumap-bench" scale --shared-cpus --cpus 0 --rows cpumap --rounds 1 \
		--seconds 0.2 > "$tmp/sd.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^cpumap  *1 ' "$tmp/sd.out" &&
		grep -q "width 2 skipped: needs 2 CPUs for its generators, one per queue, even with --shared-cpus; 1 given" "$tmp/sd.out"; then
		ok shared-default "$(grep -c 'skipped' "$tmp/sd.out") widths skipped"
	else
		bad shared-default "exit $rc: $(head -c 400 "$tmp/sd.out")"
	fi
}

# A reader of the table that goes away (| head -1): the bench stops as on
# ^C, and takes its namespaces and ucpumapd with it.
case_sigpipe() {
	local pid left procs hpid
	rm -f "$tmp/sp.pid"
	( echo $BASHPID > "$tmp/sp.pid"; exec "$BUILD/ucpumap-bench" scale --shared-cpus \
		--widths 1 --rows cpumap --rounds 20 --seconds 0.5 2> "$tmp/sp.err" ) |
		head -1 > /dev/null &
	hpid=$!
	lib_pid "$hpid"
	for _ in $(seq 50); do [ -s "$tmp/sp.pid" ] && break; sleep 0.1; done
	pid=$(cat "$tmp/sp.pid" 2> /dev/null)
	[ -z "$pid" ] || lib_pid "$pid"
	for _ in $(seq 600); do kill -0 "${pid:-0}" 2> /dev/null || break; sleep 0.1; done
	left=$(bench_ns "$pid")
	procs=$(pgrep -f "ucpumapd --dev vd --tun ucmb0" || true)
	if [ -z "$pid" ] || kill -0 "$pid" 2> /dev/null; then
		bad sigpipe "the bench ${pid:+($pid) }still runs 60 s after its reader left"
	elif ! grep -q "^scale: interrupted" "$tmp/sp.err"; then
		bad sigpipe "not stopped by its reader's going: $(tail -2 "$tmp/sp.err")"
	elif [ -n "$left$procs" ]; then
		bad sigpipe "left: namespaces $(echo $left), ucpumapd $(echo $procs)"
	else
		ok sigpipe "stopped, nothing left"
	fi
	[ -z "$pid" ] || stop_pid "$pid"
	stop_pid "$hpid"
}

# ---- --dev --------------------------------------------------------------------

# The stand-in NIC: vd (2 RX queues) in $nsd, its peer vg in $nsg.
# vd takes the generator's frames as a NIC does, with or without an XDP
# program: GRO on (veth takes redirected frames only with the peer's
# program or GRO; ucpumap-gen refuses, and stops, otherwise).
dev_pair() {
	veth_pair "$nsg" "$nsd" vg vd 10.78.0.1/24 10.78.0.2/24 numrxqueues 2 numtxqueues 2 &&
		ip netns exec "$nsd" sysctl -qw net.ipv4.conf.all.rp_filter=0 &&
		ip netns exec "$nsd" ethtool -K vd gro on > /dev/null || {
		bad dev-setup "cannot build the namespaces"
		return 1
	}
	mac=$(mac_of "$nsd" vd)
}

# dev_gens CPU...: a generator on each CPU, feeding vd's queue CPU % 2 with
# 64 flows of its own at 100000 pps, until dev_gens_stop; a moment to start.
gens=
dev_gens() {
	local c
	for c in "$@"; do
		ip netns exec "$nsg" "$BUILD/ucpumap-gen" --dev vg --dst-ip 10.78.0.2 \
			--dst-mac "$mac" --dst-port 9100 --flows 64 --src-port $((10000 + 64 * c)) \
			--cpu "$c" --rate 100000 --duration 120 > "$tmp/gen-$c" 2>&1 &
		lib_pid $!
		gens="$gens $!"
	done
	sleep 0.5
}
dev_gens_stop() {
	local p
	for p in $gens; do stop_pid "$p"; done
	gens=
}

# What the bench left in $nsd: XDP on vd, a device (its tun), a ucpumapd.
dev_left() {
	local l p
	l=$(left_in "$nsd" vd)
	for p in $(ip netns pids "$nsd" 2> /dev/null); do
		[ "$(cat "/proc/$p/comm" 2> /dev/null)" = ucpumapd ] && l="$l ucpumapd $p still runs;"
	done
	echo "$l"
}

# dev_bench TAG LIMIT ARGS...: scale --dev vd in $nsd, bounded by LIMIT s;
# its status in $rc, its output in $tmp/TAG.out.
dev_bench() {
	local tag=$1 limit=$2 bpid
	shift 2
	ip netns exec "$nsd" "$BUILD/ucpumap-bench" scale --dev vd --sink-ip 10.78.0.2 \
		--sink-port 9100 "$@" > "$tmp/$tag.out" 2>&1 &
	bpid=$!
	lib_pid "$bpid"
	for _ in $(seq $((limit * 10))); do kill -0 "$bpid" 2> /dev/null || break; sleep 0.1; done
	if kill -0 "$bpid" 2> /dev/null; then
		bad "$tag-run" "still running after $limit s: stopped"
		stop_pid "$bpid" 100
		rc=124
		return 1
	fi
	lib_wait "$bpid"
	rc=$?
	sed 's/^/# /' "$tmp/$tag.out"
}

# dev_bad TAG STATUS TEXT ARGS...: the bench in $nsd with ARGS (no --dev of
# its own), refused with STATUS and TEXT, nothing left.
dev_bad() {
	local tag=$1 want=$2 text=$3 rc left
	shift 3
	ip netns exec "$nsd" timeout 30 "$BUILD/ucpumap-bench" scale "$@" > "$tmp/bad" 2>&1
	rc=$?
	left=$(dev_left)
	if [ "$rc" -eq "$want" ] && grep -qF -- "$text" "$tmp/bad" && [ -z "$left" ]; then
		ok "dev-bad-$tag" "$(head -1 "$tmp/bad")"
	else
		bad "dev-bad-$tag" "exit $rc (want $want), want '$text'${left:+, left: $left}: $(head -c 300 "$tmp/bad")"
	fi
}

case_dev_bad_settings() {
	local d="--dev vd --sink-ip 10.78.0.2"
	lib_once dev_pair || return
	dev_bad no-sink-ip 2 "--dev needs --sink-ip" --dev vd
	dev_bad sink-ip-veth 2 "go with --dev" --sink-ip 10.78.0.2
	dev_bad zero-copy-veth 2 "go with --dev" --zero-copy
	dev_bad flows 2 "--flows, --light-rate and --gen-engine are the bench's own generators'" $d --flows 8
	dev_bad light-rate 2 "--flows, --light-rate and --gen-engine are the bench's own generators'" $d \
		--light-rate 100
	dev_bad gen-engine 2 "--flows, --light-rate and --gen-engine are the bench's own generators'" $d \
		--gen-engine loop
	dev_bad flood-only 2 "no row runs with --dev: the flood rows need the bench's own" $d \
		--rows cpumap-flood,kernel-cpumap-flood
	dev_bad no-such-dev 1 "--dev nosuch0: no such interface" --dev nosuch0 --sink-ip 10.78.0.2
	dev_bad sink-broadcast 2 "--sink-ip 255.255.255.255 port 9000: the limited broadcast, which the steering program leaves to the kernel" \
		--dev vd --sink-ip 255.255.255.255
	dev_bad width-above-queues 1 "it has 2: \`ethtool -L vd combined 4\`" $d --widths 4
	# no generator runs yet: the probe finds nothing
	dev_bad no-traffic 1 "no traffic; start the external generator" $d --widths 2 --shared-cpus
	# traffic on queue 0: width 1 (an RX thread, a worker) fits 2 CPUs,
	# width 2 (fan-out: an RX thread, 2 workers) does not, and is refused
	dev_gens 0
	dev_bad width-cpus 1 "--widths: width 2 needs 3 CPUs" $d --sink-port 9100 \
		--widths 1,2 --cpus 0,1 --rounds 1 --seconds 0.2
	dev_altname
	dev_gens_stop
}

# --dev by an altname (as udev names NICs): /proc/net/dev and sysfs list
# the primary name only, and the probe still finds the traffic.
dev_altname() {
	local rc left
	if ! ip -n "$nsd" link property add dev vd altname ucmvdalt0 2> /dev/null; then
		skip dev-altname "this kernel or ip(8) makes no altnames"
		return
	fi
	ip netns exec "$nsd" timeout 60 "$BUILD/ucpumap-bench" scale --dev ucmvdalt0 \
		--sink-ip 10.78.0.2 --sink-port 9100 --widths 1 --rows cpumap --cpus 0,1 \
		--rounds 1 --seconds 0.2 > "$tmp/alt" 2>&1
	rc=$?
	ip -n "$nsd" link property del dev vd altname ucmvdalt0
	left=$(dev_left)
	if [ "$rc" = 0 ] && grep -q "^cpumap" "$tmp/alt" && [ -z "$left" ]; then
		ok dev-altname "ran on ucmvdalt0 (vd)"
	else
		bad dev-altname "exit $rc${left:+, left: $left}: $(head -c 300 "$tmp/alt")"
	fi
}

# dev_judge TAG TRAFFIC ROWS: the run's JSON against what it should hold:
# traffic on queues TRAFFIC ("0,1"), exactly ROWS ("row@width,..."), each
# delivering no more than offered, each queue it serves offered and (in
# ucpumapd's rows) received, every worker at work, nothing elsewhere; and
# the skips: flood always, fan-out (TRAFFIC 2 queues) or the rows of other
# widths.
dev_judge() {
	python3 - "$tmp/$1.json" "$name/$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); name = sys.argv[2]
traffic = [int(q) for q in sys.argv[3].split(",")]
want = {(r.split("@")[0], int(r.split("@")[1])) for r in sys.argv[4].split(",")}
secs = d["seconds"]
got = {(r["row"], r["width"]): r for r in d["rows"]}
good = d.get("dev") == "vd" and d.get("nic_rx_queues") == 2 and d.get("traffic_queues") == traffic \
    and d.get("nic_queue_counters") == "yes"
print(f"{'PASS' if good else 'FAIL'}: {name}-traffic: {d.get('traffic_queues')} of {d.get('nic_rx_queues')} queues")
print(f"{'PASS' if set(got) == want else 'FAIL'}: {name}-rows: {sorted(got)}")
for (row, w), r in sorted(got.items()):
    runs = r.get("runs", [])
    good = r["ok"] == "yes" and r["nic_queues"] == traffic and bool(runs)
    for x in runs:
        off = x["offered_pps"] * secs
        # vd is a veth: what its program failed to redirect it counts
        # twice (measure.c, nic_rx_now()), so offered may read high
        good &= 0 < x["delivered_pps"] * secs <= off * 1.02 + 5000
        good &= len(x.get("nic_queue_offered", [])) == len(traffic) and \
            all(q > 0 for q in x["nic_queue_offered"])
        good &= x.get("nic_offered_elsewhere", 1e9) <= 0.02 * sum(x.get("nic_queue_offered", []))
        # the queues' counts over the window alone, as offered is
        good &= sum(x.get("nic_queue_offered", [])) <= off * 1.05 + 5000
        if not row.startswith("kernel"):
            good &= len(x.get("queue_rx", [])) == len(traffic) and all(q > 0 for q in x["queue_rx"])
            # ucpumapd's counts over the window alone: the generators
            # run before it starts and after it stops
            good &= sum(x.get("queue_rx", [])) <= off * 1.05 + 5000
            good &= len(x.get("worker_processed", [])) == r["workers"] and \
                all(p > 0 for p in x["worker_processed"])
    print(f"{'PASS' if good else 'FAIL'}: {name}-row-{row}-w{w}: "
          f"{[(x['delivered_pps'], x['offered_pps'], x.get('nic_queue_offered'), x.get('queue_rx'), x.get('worker_processed')) for x in runs]}")
skips = d["skipped"]
# the skip of @row whose reason says @text (at @widths), or None
def skip(row, text, widths=None):
    return next((s for s in skips if row in s.get("rows", "").split(", ") and text in s["why"]
                 and widths in (None, s.get("widths"))), None)
for row in ("kernel-cpumap-flood", "cpumap-flood", "cpumap-flood-no-fair", "cpumap-flood-lanes"):
    s = skip(row, "need the bench's own generators", "all")
    print(f"{'PASS' if s else 'FAIL'}: {name}-skip-{row}: {s['why'] if s else skips}")
if len(traffic) > 1:
    s = skip("cpumap-fan-out", "needs the traffic on one queue", "all") and \
        skip("cpumap", "width w needs the traffic on w queues", "1")
else:
    s = skip("cpumap-fan-in", "need the traffic on 2 queues or more", "all") and \
        skip("cpumap-lanes", "need the traffic on 2 queues or more", "all") and \
        skip("cpumap", "these rows run at width 1 here", "2")
print(f"{'PASS' if s else 'FAIL'}: {name}-skip-widths: {s['rows'] + ': ' + s['why'] if s else skips}")
PY
	[ $? = 0 ] || bad "$1-judge" "the judge failed (its traceback above)"
}

# A run of widths 1 and 2 fed on queues CPUS: judged, nothing left.
dev_run() {
	local tag=$1 traffic=$2 rows=$3 left
	shift 3
	lib_once dev_pair || return
	dev_gens "$@"
	dev_bench "$tag" 120 --widths 1,2 --rounds 1 --seconds 0.5 --shared-cpus \
		--json "$tmp/$tag.json"
	dev_gens_stop
	if [ "$rc" -ne 0 ] || [ ! -s "$tmp/$tag.json" ]; then
		bad "$tag-run" "exit $rc, JSON $([ -s "$tmp/$tag.json" ] && echo written || echo missing)"
	else
		ok "$tag-run"
		dev_judge "$tag" "$traffic" "$rows"
		if grep -q "skipped at every width: they need the bench's own generators" "$tmp/$tag.out"; then
			ok "$tag-flood-said"
		else
			bad "$tag-flood-said" "no line saying why the flood rows were skipped"
		fi
	fi
	left=$(dev_left)
	[ -z "$left" ] && ok "$tag-left" || bad "$tag-left" "$left"
}

case_dev_w2() {
	dev_run dev-w2 0,1 "kernel-cpumap@2,cpumap@2,cpumap-coalesce@2,cpumap-no-fair@2,cpumap-lanes@2,kernel-cpumap-fan-in@2,cpumap-fan-in@2" 0 1
}

case_dev_w1() {
	dev_run dev-w1 0 "kernel-cpumap@1,cpumap@1,cpumap-coalesce@1,kernel-cpumap-fan-out@2,cpumap-fan-out@2" 0
}

# The probe finds queue 0 alone; queue 1's generator starts after the
# first row: the rows after it see traffic where they serve none.
case_dev_moved() {
	local bpid left
	lib_once dev_pair || return
	dev_gens 0
	ip netns exec "$nsd" "$BUILD/ucpumap-bench" scale --dev vd --sink-ip 10.78.0.2 \
		--sink-port 9100 --widths 1 --rows kernel-cpumap,cpumap --rounds 2 --seconds 0.5 \
		--shared-cpus --chart "$tmp/moved.png" > "$tmp/moved.out" 2>&1 &
	bpid=$!
	lib_pid "$bpid"
	if wait_line "$tmp/moved.out" "round 1 kernel-cpumap-w1" 300 "$bpid"; then
		dev_gens 1
	fi
	for _ in $(seq 600); do kill -0 "$bpid" 2> /dev/null || break; sleep 0.1; done
	kill -0 "$bpid" 2> /dev/null && stop_pid "$bpid" 100
	lib_wait "$bpid"
	rc=$?
	dev_gens_stop
	sed 's/^/# /' "$tmp/moved.out"
	if [ "$rc" -eq 1 ] && grep -q "arrived on queues other than 0.*the traffic moved since the probe" \
		"$tmp/moved.out" && grep -q "round 2, row cpumap-w1 failed" "$tmp/moved.out" &&
		grep -q "^chart: no figure of .*: no chart in" "$tmp/moved.out" && [ ! -e "$tmp/moved.png.gp" ]; then
		ok dev-moved
	else
		bad dev-moved "exit $rc (want 1), no 'the traffic moved' for the rows after it, or a chart of none: $(grep '^chart' "$tmp/moved.out")"
	fi
	left=$(dev_left)
	[ -z "$left" ] && ok dev-moved-left || bad dev-moved-left "$left"
}

# Under a sanitizer (CI's second pass, against its 30 minutes) the --dev
# cases run in the first pass only: they run the same ucpumapd as the tiny
# run, and add the bench's code, not ours.
first_pass_only dev-bad-settings dev-w2 dev-w1 dev-moved

lib_run_cases "$@"
