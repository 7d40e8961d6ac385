#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Starvation and back-pressure, ucpumapd on a veth pair
# under a flood from the generator's namespace:
#
#   few-frames      --frames at the least the rings allow (256): no
#                   deadlock (after the flood, datagrams sent at 1000/s
#                   arrive: at least nine in ten, none twice; rings of 64
#                   may drop some, each counted: the daemon's drops, the
#                   veth's and the UDP layer's meanwhile cover every one
#                   missing; and through the daemon: its
#                   own received and delivered, read by SIGUSR1 from its
#                   JSON before and after, grew by at least as many as
#                   arrived, for the reader also gets what the kernel takes
#                   in by vd when the daemon takes nothing: the XDP
#                   program's fallback, or an RX thread that gave up),
#                   SIGTERM exits 0, the counters add up, every frame home
#   worker-stall    both workers stall 2 s in their write into the tun
#                   (tests/progs/fault_shim.c) while the flood goes on: the
#                   worker rings fill and what they cannot take is counted
#                   (enqueue_full; then, every frame held, the kernel's
#                   fill_ring_empty), nothing is lost (the counters add
#                   up, every frame home), and delivery is back to half the
#                   rate before within a second of the stall's end
#   fill-ring-dry   in that stall the workers hold every frame the fill
#                   ring could get: the RX thread does not spin (under a
#                   fifth of a CPU meanwhile) and recovers (a line of the
#                   worker-stall case)
#   nothing-left    the cleanup leaves no namespace and no process
#
# Root. One PASS/FAIL/SKIP line per case; the script exits 0. The shim's
# cases skip in a sanitizer build (its runtime must come first).
set -u
BUILD=${BUILD:-build}
name=test-backpressure
cases="few-frames worker-stall nothing-left"
here=$(cd "$(dirname "$0")" && pwd)
daemon=$(cd "$BUILD" 2>/dev/null && pwd)/ucpumapd
shim_so=$(cd "$BUILD" 2>/dev/null && pwd)/tests/progs/libfault_shim.so
gen=ucmbg$$
dut=ucmbd$$
tun=ucmbt0
. "$here/../lib.sh"
. "$here/daemon.sh"
dpid=

setup() { daemon_veth 10.209.0.1 10.209.0.2; }

start_daemon() {	# label, options...
	D_OUT=$tmp/$1.out D_ERR=$tmp/$1.err D_RC=
	shift
	ip netns exec "$dut" env ${SHIM:+LD_PRELOAD=$SHIM} "$daemon" --dev vd --tun $tun \
		--cpus 0,1 --duration 40 "$@" > "$D_OUT" 2> "$D_ERR" &
	dpid=$!
	lib_pid $dpid
	wait_line "$D_OUT" '^ucpumapd: ' 50 "$dpid" && return 0
	stop_pid "$dpid"
	dpid=
	return 1
}

stop_daemon() {	# SIGTERM; D_RC the status, D_MS how long it took
	local t0=$(date +%s%N)
	lib_term "$dpid"
	D_RC=$?
	D_MS=$((($(date +%s%N) - t0) / 1000000))
	dpid=
}

closing_ok() {	# empty when exit 0 and the closing lines hold
	local why=
	[ "$D_RC" = 0 ] || why="exit $D_RC;"
	echo "$why$(closing_lines "$D_OUT")"
}
flood() { udp_flood "$1"; }

# ---- few frames ------------------------------------------------------------------
# Drops no counter of the daemon's has: vg's (vd's ring full) and the UDP
# layer's behind the tun (InErrors, RcvbufErrors among them), summed.
few_unseen() {
	echo $(($(ip netns exec "$gen" cat /sys/class/net/vg/statistics/tx_dropped) +
		$(ip netns exec "$dut" awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { print $4 }' /proc/net/snmp)))
}

case_few_frames() {
	local why keep_pct got a b rx dl miss v0 v1 ra da xa rb db xb
	if start_daemon few --frames 256 --rx-size 64 --qsize 64 --interval 0 \
		--stats-json "$tmp/few.json"; then
		flood 3
		lib_wait "$fpid"
		# The daemon's own counts before the datagrams and after, and
		# what could drop one where the daemon does not see it: the
		# veth before vd, the UDP layer behind the tun.
		a=$(usr1_json "$dpid" "$tmp/few.json" "'%d %d %d' % (d['received'], d['delivered'], d['drops'])")
		v0=$(few_unseen)
		# At 1000 a second: the sender catches up after a pause of its
		# own in one burst, and at 3000 a pause of 25 ms made a burst
		# larger than the rings of 64 (70 of 600 lost, counted, in one
		# fresh-clone CI run).
		why=$(exact_ipv4 few $D4 $G4 1000)
		b=$(usr1_json "$dpid" "$tmp/few.json" "'%d %d %d' % (d['received'], d['delivered'], d['drops'])")
		v1=$(few_unseen)
		got=600	# exact_ipv4's 100 of each of 6 sizes, when all came
		# Rings of 64 may drop some of a burst (counted; more in a slower
		# sanitizer build, which lost 20 of 600 once, and 97 in a fresh-clone
		# CI run whose plain build lost none): none duplicated or corrupt, and
		# at most a tenth missing, a quarter in a sanitizer build.
		keep_pct=90
		[ -n "${SANITIZE:-}" ] && keep_pct=75
		miss=0
		if [[ $why =~ ^expected\ ([0-9]+)\ datagrams,\ received\ ([0-9]+)\ \(missing\ [0-9]+,\ duplicated\ 0,\ corrupt\ 0\)$ ]] &&
		   [ "${BASH_REMATCH[1]}" -gt 0 ] &&
		   [ $((BASH_REMATCH[2] * 100)) -ge $((BASH_REMATCH[1] * keep_pct)) ]; then
			echo "# few-frames: $why (counted drops at rings of 64)"
			got=${BASH_REMATCH[2]}
			miss=$((BASH_REMATCH[1] - got))
			why=
		fi
		if [ -z "$a" ] || [ -z "$b" ]; then
			why="$why no statistics line on SIGUSR1 in $tmp/few.json (before: ${a:-none}, after: ${b:-none});"
		else
			read -r ra da xa <<< "$a"
			read -r rb db xb <<< "$b"
			rx=$((rb - ra)) dl=$((db - da))
			[ "$rx" -ge "$got" ] && [ "$dl" -ge "$got" ] ||
				why="$why the daemon received $rx and delivered $dl meanwhile, want the $got that arrived at least: they went around it;"
			# Each one missing was dropped where it is counted.
			[ "$miss" -le $((xb - xa + v1 - v0)) ] ||
				why="$why $miss missing, but the daemon counted $((xb - xa)) drops meanwhile and the veth and UDP $((v1 - v0));"
		fi
		stop_daemon
		why="$why$(closing_ok)"
		[ "$D_MS" -le 3000 ] || why="$why the stop took $D_MS ms;"
		why=${why# }
		if [ -z "$why" ]; then ok few-frames "$got datagrams after the flood, $rx received and $dl delivered by the daemon meanwhile; $(grep '^conservation' "$D_OUT" | cut -c1-90)"; else bad few-frames "$why"; fi
	else
		bad few-frames "did not start: $(tail -2 "$D_ERR" | tr '\n' ' ')"
	fi
}

# ---- a stalled worker ----------------------------------------------------------------
# rx_cpu TID-FILE: the RX thread's CPU time so far, in clock ticks.
rx_ticks() {
	local t
	for t in /proc/$dpid/task/*; do
		[ "$(cat "$t/comm" 2> /dev/null)" = ucpumap/rx0 ] || continue
		awk '{ print $14 + $15 }' "$t/stat"
		return
	done
	echo -1
}

case_worker_stall() {
	local started c0 c1 why verdict info swhy dry ticks
	if [ -n "${SANITIZE:-}" ]; then
		skip worker-stall "a sanitizer build: its runtime must come first in LD_PRELOAD"
		skip fill-ring-dry "a sanitizer build"
	elif [ ! -f "$shim_so" ]; then
		bad worker-stall "no $shim_so (make tests)"
	else
		# Two workers, their rings (2048 each) able to hold every frame
		# (4096): both stall from 2.5 s for 2 s.
		export UCM_SHIM_FAULT=stall_write UCM_SHIM_AFTER_MS=2500 UCM_SHIM_STALL_MS=2000 UCM_SHIM_COUNT=2
		SHIM=$shim_so
		started=no
		start_daemon stall --frames 4096 --rx-size 256 --qsize 2048 --interval 0.25 \
			--stats-json "$tmp/stall.json" && started=yes
		unset SHIM UCM_SHIM_FAULT UCM_SHIM_AFTER_MS UCM_SHIM_STALL_MS UCM_SHIM_COUNT
		if [ $started = yes ]; then
			flood 7
			sleep 2.4	# the stall begins at about 2.5 s of the daemon's life
			sleep 0.4
			c0=$(rx_ticks)
			sleep 1.0
			c1=$(rx_ticks)
			lib_wait "$fpid"
			sleep 0.5
			stop_daemon
			why=$(closing_ok)
			verdict=$("$PY" - "$tmp/stall.json" 2>&1 <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
iv = []
for a, b in zip(lines, lines[1:]):
    dt = b["time"] - a["time"]
    kd = lambda d: sum(q["kernel_rx_ring_full"] + q["kernel_rx_dropped"] for q in d["queues"])
    iv.append((a["time"], b["time"], (b["tun_packets"] - a["tun_packets"]) / dt,
               (b["enqueue_drops"] - a["enqueue_drops"]) / dt,
               sum(q["kernel_rx_fill_ring_empty_descs"] for q in b["queues"]) -
               sum(q["kernel_rx_fill_ring_empty_descs"] for q in a["queues"]),
               kd(b) - kd(a)))
busy = [r for r in iv if r[2] > 1000]
if not busy:
    print("stall no traffic was delivered at all"); sys.exit()
pre = sorted(r[2] for r in busy[:4])[len(busy[:4]) // 2]
# The stall: the longest run of intervals delivering under a tenth of pre.
best, cur = [], []
for r in iv:
    if r[2] < pre / 10 and (cur or r in iv[iv.index(busy[0]):]):
        cur.append(r)
    else:
        if len(cur) > len(best):
            best = cur
        cur = []
if len(cur) > len(best):
    best = cur
why = []
if sum(r[1] - r[0] for r in best) < 1.5:
    why.append("no stall of 1.5 s seen (delivered pps: %s)" % " ".join("%.0f" % r[2] for r in iv))
else:
    end = best[-1][1]
    after = [r for r in iv if r[0] >= end - 1e-6]
    back = next((r for r in after if r[2] >= pre / 2), None)
    if not back or back[1] - end > 1.0:
        why.append("not back to half the rate (%.0f pps) within 1 s of the stall's end: %s"
                   % (pre / 2, " ".join("%.0f" % r[2] for r in after[:6])))
    # From the interval the stall began in (the rings filling) to its end.
    win = iv[max(0, iv.index(best[0]) - 1):iv.index(best[-1]) + 1]
    enq = sum(r[3] * (r[1] - r[0]) for r in win)
    dry = sum(r[4] for r in win)
    kern = sum(r[5] for r in win)
    if enq <= 0 or enq + dry + kern <= 0:
        why.append("the stall's drops not counted: enqueue_full %.0f, fill_ring_empty %d, "
                   "ring full or dropped %d" % (enq, dry, kern))
    print("dry %d" % dry)
    print("info before %.0f pps; stalled %.2f s; counted then: enqueue_full %.0f, the kernel's "
          "fill_ring_empty %d; back to %.0f pps %.2f s after"
          % (pre, sum(r[1] - r[0] for r in best), enq, dry, back[2] if back else 0,
             back[1] - end if back else -1))
print("stall " + "; ".join(why))
PY
	)
			info=$(sed -n 's/^info //p' <<< "$verdict")
			swhy=$(sed -n 's/^stall //p' <<< "$verdict")
			grep -q '^stall' <<< "$verdict" ||
				swhy="the judge gave no verdict: $(tail -1 <<< "$verdict")"
			dry=$(sed -n 's/^dry //p' <<< "$verdict")
			if [ -z "$why$swhy" ]; then ok worker-stall "$info"; else bad worker-stall "$why $swhy"; fi
			# The RX thread in the stall: a second, in ticks of 1/100 s.
			ticks=$((c1 - c0))
			if [ "$c0" = -1 ] || [ "$c1" = -1 ]; then
				bad fill-ring-dry "no thread ucpumap/rx0 found"
			elif [ "${dry:-0}" -le 0 ]; then
				skip fill-ring-dry "the fill ring did not run dry in the stall (no fill_ring_empty): the case tests nothing this run"
			elif [ "$ticks" -le 20 ] && [ -z "$swhy" ]; then
				ok fill-ring-dry "fill ring empty $dry times; the RX thread used $ticks/100 s of CPU in 1 s of it"
			else
				bad fill-ring-dry "the RX thread used $ticks/100 s of CPU in 1 s of the stall (want at most 0.20); $swhy"
			fi
		else
			bad worker-stall "did not start: $(tail -2 "$D_ERR" | tr '\n' ' ')"
		fi
	fi
}

case_nothing_left() {
	lib_cleanup_check
	if [ -z "$lib_left" ]; then ok nothing-left; else bad nothing-left "$lib_left"; fi
}

lib_run_cases "$@"
