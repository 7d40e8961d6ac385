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
set -u
BUILD=${BUILD:-build}
name=test-multiqueue
cases="exit delivered in-order both-queues conservation frames-home nothing-left"
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

# The run every case judges: a reader behind the tun, the daemon, 3200
# datagrams, SIGTERM. $rc, $sent, $got, $reorders, $complete.
run() {
	local dpid end
	# A reader behind the tun: counts datagrams until told to stop, and
	# per flow (the first 2 bytes) the reorders (a sequence number, the
	# next 4, below the flow's last) and the datagrams. Prints "N
	# REORDERS COMPLETE-FLOWS" and writes nothing else.
	ip netns exec "$dut" python3 - "$tmp/stop" > "$tmp/got" <<'PY' &
import os, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 4 << 20)  # SO_RCVBUFFORCE: SO_RCVBUF stops at rmem_max
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

	ip netns exec "$dut" "$daemon" --dev vd --tun ucmq0 --queues 0-1 --cpus 0,1 \
		--interval 0 --stats-json "$tmp/s.json" --duration 30 > "$tmp/out" 2> "$tmp/err" &
	dpid=$!
	lib_pid $dpid
	# Its start line comes once the tun is up.
	wait_line "$tmp/out" '^ucpumapd:' 50 $dpid
	ip netns exec "$dut" sysctl -qw net.ipv4.conf.ucmq0.rp_filter=0 2>/dev/null

	# 64 flows (source ports), 50 datagrams each, paced.
	ip netns exec "$gen" python3 - > "$tmp/sent" <<'PY'
import socket, struct, time
socks = []
for f in range(64):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.79.0.1", 30000 + f))
    socks.append(s)
n = 0
for i in range(50):
    for f, s in enumerate(socks):
        s.sendto(struct.pack("!HI", f, i) + b"m" * 26, ("10.79.0.2", 9000))
        n += 1
    time.sleep(0.005)
print(n)
PY
	sleep 0.5
	kill -USR1 "$dpid" 2>/dev/null	# one JSON line with the per-queue counters
	sleep 0.3
	kill -TERM "$dpid"
	end=$((SECONDS + 5))
	while kill -0 "$dpid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.05; done
	kill -0 "$dpid" 2>/dev/null && kill -9 "$dpid"
	lib_wait "$dpid"
	rc=$?
	touch "$tmp/stop"
	sleep 0.5
	sent=$(cat "$tmp/sent")
	read -r got reorders complete 2> /dev/null < "$tmp/got"
}

case_exit() {
	lib_once run
	[ "$rc" -eq 0 ] && ok exit || bad exit "ucpumapd exited $rc: $(tail -3 "$tmp/err")"
}

case_delivered() {
	lib_once run
	[ "${got:-0}" -eq "$sent" ] && ok delivered ||
		bad delivered "$got of $sent datagrams arrived; ucpumapd: $(grep -E 'conservation|drops' "$tmp/out" | tr '\n' ' ')"
}

case_in_order() {
	lib_once run
	if [ "${reorders:-x}" = 0 ] && [ "${complete:-0}" -eq 64 ]; then
		ok in-order "64 flows of 50, none reordered"
	else
		bad in-order "reordered ${reorders:-?} datagrams; ${complete:-?} of 64 flows complete"
	fi
}

case_both_queues() {
	local q
	lib_once run
	q=$(python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(" ".join(str(x["rx"]) for x in d["queues"]))' "$tmp/s.json" 2>/dev/null)
	set -- $q
	if [ $# -eq 2 ] && [ "$1" -gt 0 ] && [ "$2" -gt 0 ]; then
		ok both-queues
	else
		bad both-queues "per-queue rx: '${q}' (the flows did not spread over the queues)"
	fi
}

case_conservation() {
	lib_once run
	grep -q 'conservation: .*holds' "$tmp/out" && ok conservation ||
		bad conservation "$(grep conservation "$tmp/out")"
}

case_frames_home() {
	lib_once run
	grep -q 'audit: every frame came home' "$tmp/out" && ok frames-home ||
		bad frames-home "$(grep audit "$tmp/out") $(tail -2 "$tmp/err")"
}

case_nothing_left() {
	local l
	lib_once run
	l=$(left_in "$dut" vd)
	if [ -n "$l" ]; then
		bad nothing-left "$l (want no XDP program and no tun)"
	else
		ok nothing-left
	fi
}

lib_run_cases "$@"
