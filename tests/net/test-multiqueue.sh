#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd on two RX queues: a veth pair with two queues each way, so the
# sender's flows land on both; two RX threads (one pool each, frames
# carved per queue) feed two workers. Every datagram must arrive, both
# queues must have received, and shutdown must bring every frame of both
# pools home. One run of the daemon; each case judges it:
#
#   exit           SIGTERM: exit 0
#   delivered      every datagram arrived behind the tun
#   in-order       no flow's datagrams were reordered (each carries its
#                  flow and sequence number; the reader counts a datagram
#                  older than its flow's last as a reorder), every flow
#                  complete
#   both-queues    both queues received
#   conservation, frames-home   its closing lines hold
#   nothing-left   no XDP program and no tun after it
#   lanes-*        the same cases for a second run with --lanes (each RX
#                  thread a ring of its own in each worker)
set -u
BUILD=${BUILD:-build}
name=test-multiqueue
plain="exit delivered in-order both-queues conservation frames-home nothing-left"
cases="$plain $(for c in $plain; do printf 'lanes-%s ' $c; done)"
daemon=$BUILD/ucpumapd
gen=ucmqg$$
dut=ucmqd$$
cd "$(dirname "$0")/../.."
. tests/lib.sh

setup() {
	skip_unless_root "namespaces, XDP, tun"
	[ -x "$daemon" ] || { bad build "$daemon is not built (make)"; exit 0; }
	if [ "$(nproc)" -lt 2 ]; then
		echo "SKIP: $name: needs two CPUs for two workers"
		exit 0
	fi
	veth_pair "$gen" "$dut" vg vd 10.79.0.1/24 10.79.0.2/24 numtxqueues 2 numrxqueues 2 || {
		bad setup "cannot build the namespaces"
		exit 0
	}
	ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
}

# A run's results, by its tag (plain, lanes): R[TAG.rc], R[TAG.sent],
# R[TAG.got], R[TAG.reorders], R[TAG.complete]; its files in $tmp/TAG/.
declare -A R

# The run the cases judge, tag $1, ucpumapd's extra options after it: a
# reader behind the tun, the daemon, 3200 datagrams, SIGTERM.
run_with() {
	local tag=$1 dpid end rc sent got reorders complete
	shift
	local tmp=$tmp/$tag
	mkdir -p "$tmp"
	# A reader behind the tun: counts datagrams until told to stop, and
	# per flow (the first 2 bytes) the reorders (a sequence number, the
	# next 4, below the flow's last) and the datagrams. Prints "N
	# REORDERS COMPLETE-FLOWS" and writes nothing else.
	ip netns exec "$dut" python3 - "$tmp/stop" > "$tmp/got" <<'PY' &
import os, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)  # SO_RCVBUFFORCE (SO_RCVBUF stops at rmem_max): room for all while this reader waits for a CPU
s.bind(("10.79.0.2", 9000))
s.settimeout(0.2)
n = reorders = 0
last, count = {}, {}
while True:
    try:
        d = s.recv(2048)
    except socket.timeout:
        if os.path.exists(sys.argv[1]):
            break
        continue
    n += 1
    flow, seq = struct.unpack("!HI", d[:6])
    if seq < last.get(flow, -1):
        reorders += 1
    last[flow] = max(seq, last.get(flow, -1))
    count[flow] = count.get(flow, 0) + 1
print(n, reorders, sum(1 for c in count.values() if c == 50))
PY
	lib_pid $!

	ip netns exec "$dut" "$daemon" --dev vd --tun ucmq0 --queues 0-1 --cpus 0,1 "$@" \
		--interval 0 --stats-json "$tmp/s.json" --duration 30 > "$tmp/out" 2> "$tmp/err" &
	dpid=$!
	lib_pid $dpid
	# Its start line comes once the tun is up.
	wait_line "$tmp/out" '^ucpumapd:' 50 $dpid || echo "ucpumapd did not start" >> "$tmp/err"
	ip netns exec "$dut" sysctl -qw net.ipv4.conf.ucmq0.rp_filter=0 2>/dev/null

	# 64 flows (source ports), 50 datagrams each, in bursts: 10 of one
	# flow back to back, then the next flow's, a pause of 3 ms after
	# every 4 flows' (40 datagrams a pause, as 64 flows of one each at
	# 5 ms were). A flow's datagrams microseconds apart, as a stream's
	# are: a flow sprayed over both workers is reordered (--steer
	# round-robin: some 1000 of the 3200), which 5 ms apart never was.
	ip netns exec "$gen" python3 - > "$tmp/sent" <<'PY'
import socket, struct, time
socks = []
for f in range(64):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.79.0.1", 30000 + f))
    socks.append(s)
n = 0
for i in range(0, 50, 10):
    for f, s in enumerate(socks):
        for seq in range(i, i + 10):
            s.sendto(struct.pack("!HI", f, seq) + b"m" * 26, ("10.79.0.2", 9000))
            n += 1
        if f % 4 == 3:
            time.sleep(0.003)
print(n)
PY
	sleep 0.5
	kill -USR1 "$dpid" 2>/dev/null	# one JSON line with the per-queue counters
	sleep 0.3
	lib_term "$dpid"
	rc=$?
	touch "$tmp/stop"
	sleep 0.5
	sent=$(cat "$tmp/sent")
	read -r got reorders complete 2> /dev/null < "$tmp/got"
	R[$tag.rc]=$rc R[$tag.sent]=$sent R[$tag.got]=${got:-0}
	R[$tag.reorders]=${reorders:-x} R[$tag.complete]=${complete:-0}
}

run_plain() { run_with plain; }
run_lanes() { run_with lanes --lanes; }

# Each case for both runs: case_NAME judges run $t (files in $d), named
# $p-NAME (lanes-NAME for the run with --lanes).
each() {
	local c=$1 t=${2:-plain}
	local d=$tmp/$t p=
	[ "$t" = lanes ] && p=lanes-
	lib_once "run_$t"
	"judge_${c//-/_}"
}

judge_exit() {
	if [ "${R[$t.rc]}" -ne 0 ]; then
		bad ${p}exit "ucpumapd exited ${R[$t.rc]}: $(tail -3 "$d/err")"
	elif [ "$t" = lanes ] && ! grep -q "lanes: each of the 2 RX threads" "$d/out" "$d/err"; then
		bad ${p}exit "no line saying the lanes were made"
	else
		ok ${p}exit
	fi
}

# Every datagram arrived, and through ucpumapd: without its program they
# reach vd's address by the kernel's own path.
judge_delivered() {
	local rx
	rx=$(python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(sum(x["rx"] for x in d["queues"]))' "$d/s.json" 2>/dev/null)
	if [ "${R[$t.got]}" -eq "${R[$t.sent]}" ] && [ "${rx:-0}" -ge "${R[$t.sent]}" ]; then
		ok ${p}delivered "${R[$t.got]} of ${R[$t.sent]}, the queues took $rx"
	else
		bad ${p}delivered "${R[$t.got]} of ${R[$t.sent]} datagrams arrived, the queues took ${rx:-none}; ucpumapd: $(grep -E 'conservation|drops' "$d/out" | tr '\n' ' ')"
	fi
}

judge_in_order() {
	# In order through ucpumapd, which ran to a clean stop.
	if [ "${R[$t.reorders]}" = 0 ] && [ "${R[$t.complete]}" -eq 64 ] && [ "${R[$t.rc]}" = 0 ]; then
		ok ${p}in-order "64 flows of 50, none reordered"
	else
		bad ${p}in-order "reordered ${R[$t.reorders]} datagrams; ${R[$t.complete]} of 64 flows complete; ucpumapd exited ${R[$t.rc]}"
	fi
}

judge_both_queues() {
	local q
	q=$(python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(" ".join(str(x["rx"]) for x in d["queues"]))' "$d/s.json" 2>/dev/null)
	set -- $q
	if [ $# -eq 2 ] && [ "$1" -gt 0 ] && [ "$2" -gt 0 ]; then
		ok ${p}both-queues
	else
		bad ${p}both-queues "per-queue rx: '${q}' (the flows did not spread over the queues)"
	fi
}

judge_conservation() {
	grep -q 'conservation: .*holds' "$d/out" && ok ${p}conservation ||
		bad ${p}conservation "$(grep conservation "$d/out")"
}

judge_frames_home() {
	grep -q 'audit: every frame came home' "$d/out" && ok ${p}frames-home ||
		bad ${p}frames-home "$(grep audit "$d/out") $(tail -2 "$d/err")"
}

judge_nothing_left() {
	local l
	l=$(left_in "$dut" vd)
	if [ -n "$l" ]; then
		bad ${p}nothing-left "$l (want no XDP program and no tun)"
	else
		ok ${p}nothing-left
	fi
}

for c in $plain; do
	eval "case_${c//-/_}() { each $c; }"
	eval "case_lanes_${c//-/_}() { each $c lanes; }"
done

lib_run_cases "$@"
