#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A soak: ucpumapd on the demo's topology (a veth pair
# between two namespaces, a UDP reader behind the tun) at a steady rate for
# N minutes, with one fault a minute in turn: the tun down 5 s, the link
# down 5 s (the generator's end), a burst of malformed frames. Every 10 s
# one line: the daemon's resident memory, open files, threads and counters.
# The generator stops when its link goes down; it is started again for
# the time left. At the end, SIGTERM: exit 0 within 5 s, the conservation
# lines and the audit, neither memory (after the first minute) nor files
# nor threads grown, and the daemon's rx grown in every 10 s between
# samples that no fault touched (traffic flowed all along).
#
#   scripts/soak.sh [--minutes N] [--rate PPS]     (root; N default 30)
#
# The last line is the verdict: "soak: PASS ..." or "soak: FAIL: why".
# Everything it makes (namespaces, processes) goes on exit, also on ^C.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
minutes=30
rate=50000
whole() {	# OPTION VALUE: a whole number above 0, or exit 2
	case $2 in
	'' | *[!0-9]* | 0 | 0*) echo "soak.sh: $1 takes a whole number above 0${2:+, not '$2'}" >&2; exit 2 ;;
	esac
}
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) whole "$1" "${2:-}"; minutes=$2; shift 2 ;;
	--rate) whole "$1" "${2:-}"; rate=$2; shift 2 ;;
	*) echo "soak.sh: unknown argument '$1'; use --minutes N, --rate PPS" >&2; exit 2 ;;
	esac
done
if [ "$(id -u)" != 0 ]; then
	echo "soak.sh: needs root (namespaces, XDP, tun)" >&2
	exit 1
fi
{ [ -x "$BUILD/ucpumapd" ] && [ -x "$BUILD/ucpumap-gen" ]; } || make -s || exit 1
name=soak
PY=${PY:-$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null)}
. tests/lib.sh
gen=ucm-soak-g$$
dut=ucm-soak-d$$
tun=ucmsoak0
secs=$((minutes * 60))
helper=$progs/ucpumapd_traffic.py

if ! veth_pair "$gen" "$dut" vg vd 10.78.0.1/24 10.78.0.2/24 2> "$tmp/setup.err"; then
	echo "soak: FAIL: cannot build the namespaces: $(head -2 "$tmp/setup.err" | tr '\n' ' ')"
	exit 1
fi
ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
gmac=$(mac_of "$gen" vg)
dmac=$(mac_of "$dut" vd)

# --stats-json: its writes over the soak count among the files and memory.
ip netns exec "$dut" "$BUILD/ucpumapd" --dev vd --tun $tun --interval 10 \
	--stats-json "$tmp/stats.json" --duration $((secs + 120)) > "$tmp/d.out" 2> "$tmp/d.err" &
dpid=$!
lib_pid $dpid
if ! wait_line "$tmp/d.out" '^ucpumapd: ' 50 "$dpid"; then
	echo "soak: FAIL: ucpumapd did not start: $(tail -2 "$tmp/d.err" | tr '\n' ' ')"
	exit 1
fi
ip -n "$dut" addr add 10.78.1.1/24 dev $tun
# A reader behind the tun, so that nothing piles up in a socket.
ip netns exec "$dut" "$PY" "$helper" sink --ports 9000 --ready "$tmp/r" --stop "$tmp/s" \
	--out "$tmp/sink" --timeout $((secs + 60)) --dev $tun > "$tmp/sink.log" 2>&1 &
lib_pid $!
if ! wait_file "$tmp/r" 50; then
	echo "soak: FAIL: the reader behind the tun did not start: $(tail -2 "$tmp/sink.log" | tr '\n' ' ')"
	exit 1
fi

# gen_start SECONDS: the generator for that long; gen_ended: whether it
# has, and its run judged (a failure outside a link fault is one).
gruns=0 gfail=
gen_start() {
	gruns=$((gruns + 1))
	ip netns exec "$gen" "$BUILD/ucpumap-gen" --dev vg --dst-ip 10.78.0.2 --dst-port 9000 \
		--flows 16 --rate "$rate" --duration "$1" > "$tmp/gen.$gruns" 2> "$tmp/gen.$gruns.err" &
	gpid=$!
	lib_pid $gpid
}
gen_ended() {
	local rc
	kill -0 $gpid 2> /dev/null && return 1
	lib_wait $gpid
	rc=$?
	if [ $rc != 0 ] && ! grep -q 'vg went down or lost its carrier' "$tmp/gen.$gruns.err"; then
		gfail="$gfail generator run $gruns: exit $rc: $(tail -1 "$tmp/gen.$gruns.err");"
	fi
	return 0
}
gen_start "$secs"

sample() {	# one line: time, VmRSS, files, threads, the last counters
	local rss fds thr
	rss=$(awk '$1 == "VmRSS:" { print $2 }' /proc/$dpid/status 2> /dev/null)
	fds=$(ls /proc/$dpid/fd 2> /dev/null | wc -l)
	thr=$(ls /proc/$dpid/task 2> /dev/null | wc -l)
	local rx counters
	# A live reading (SIGUSR1's line): the --interval lines are not in
	# step with these samples. Not --status: /run/ucpumap/vd.sock may be
	# another namespace's vd's.
	counters=$(usr1_json "$dpid" "$tmp/stats.json" \
		'"%s rx %s delivered %s drops %s" % (d["rx"], d["rx"], d["tun_packets"], d["enqueue_drops"] + d["worker_drops"])')
	rx=${counters%% *}
	echo "$1 $rss $fds $thr ${rx:-0}" >> "$tmp/samples"
	printf 'soak: %4d s  VmRSS %s kB  files %s  threads %s  %s\n' "$1" "$rss" "$fds" "$thr" \
		"${counters#* }"
}

fault() {	# the k-th fault, in turn
	case $(($1 % 3)) in
	0) echo "soak: fault: the tun down 5 s"
	   ip -n "$dut" link set $tun down; sleep 5; ip -n "$dut" link set $tun up
	   ip -n "$dut" addr add 10.78.1.1/24 dev $tun 2> /dev/null ;;
	1) echo "soak: fault: the link down 5 s (vg)"
	   ip -n "$gen" link set vg down; sleep 5; ip -n "$gen" link set vg up ;;
	2) echo "soak: fault: a burst of malformed frames"
	   ip netns exec "$gen" "$PY" "$helper" malformed --ifname vg --dst-mac "$dmac" \
		--src-mac "$gmac" --src 10.78.0.1 --dst 10.78.0.2 --src6 fd00:78::1 \
		--dst6 fd00:78::2 --count 1000 --rate 5000 > "$tmp/malformed.log" 2>&1 ;;
	esac
}

: > "$tmp/faults"
t0=$(date +%s)
k=0
while :; do
	now=$(($(date +%s) - t0))
	[ $now -ge $secs ] && break
	kill -0 $dpid 2> /dev/null || break
	if [ $((now % 10)) = 0 ]; then sample $now; fi
	if [ $now -gt 0 ] && [ $((now % 60)) = 30 ]; then
		echo "$now" >> "$tmp/faults"
		fault $k
		k=$((k + 1))
	fi
	# Stopped by a link fault (or ended early): again, for the time left.
	now=$(($(date +%s) - t0))
	if gen_ended && [ $((secs - now)) -gt 1 ]; then gen_start $((secs - now)); fi
	sleep 1
done
sample "$(($(date +%s) - t0))"
lib_term $dpid 50
rc=$?
lib_term $gpid 30 > /dev/null
touch "$tmp/s"
wait_file "$tmp/sink" 50
tail -4 "$tmp/d.out" | sed 's/^/soak: /'

why=$gfail
[ $rc = 0 ] || why="$why exit $rc (137: it did not stop within 5 s of SIGTERM);"
grep -q '^conservation: .*: holds$' "$tmp/d.out" || why="$why conservation violated or missing;"
grep -q '^audit: every frame came home$' "$tmp/d.out" || why="$why frames did not come home;"
# Delivered, not only received: the daemon's count and the reader's.
delivered=$(sed -n 's/^conservation: received [0-9]* = delivered \([0-9]*\) .*/\1/p' "$tmp/d.out")
[ "${delivered:-0}" -gt 0 ] || why="$why nothing delivered (${delivered:-no conservation line});"
got=$(jget "$tmp/sink" "d['total']" 2> /dev/null)
[ "${got:-0}" -gt 0 ] || why="$why the reader behind the tun got ${got:-nothing};"
# After the first minute (the allocator's warm-up), nothing grows.
why="$why$(awk 'NR == 1 { f = $3; t = $4 } $1 >= 60 && !r { r = $2 }
	{ lr = $2; lf = $3; lt = $4 }
	END {
		if (r && lr - r > 4096) printf " VmRSS %d -> %d kB;", r, lr
		if (lf != f) printf " open files %d -> %d;", f, lf
		if (lt != t) printf " threads %d -> %d;", t, lt
	}' "$tmp/samples")"
# Traffic all along: rx grew between any two samples that no fault (its
# 5 s and 10 s after, the generator's restart) came near.
why="$why$(awk -v faults="$(tr '\n' ' ' < "$tmp/faults")" 'BEGIN { n = split(faults, f, " ") }
	p != "" {
		near = 0
		for (i = 1; i <= n; i++)
			if (f[i] >= pt - 15 && f[i] <= $1)
				near = 1
		if (!near && $5 <= p)
			printf " no traffic from %d s to %d s (rx %d);", pt, $1, $5
	}
	{ p = $5; pt = $1 }' "$tmp/samples")"
faults=$k
if [ -z "$why" ]; then
	echo "soak: PASS: $minutes min at $rate pps, $faults faults, $gruns generator runs; exit 0, conservation holds, $delivered delivered ($got read behind the tun), every frame home, memory, files and threads flat, traffic all along"
else
	echo "soak: FAIL:$why"
	exit 1
fi
