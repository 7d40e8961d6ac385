#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Coalescing through the daemon: ucpumap-gen sends sequence-numbered UDP of
# four flows in bursts of 64 over a veth pair into ucpumapd, whose workers
# hold up to 64 packets and write each flow's run as one GSO super-packet
# into the tun; a socket behind the tun reads them one by one.
#
#   coalesce-ipv4, -ipv6   every datagram once, intact, in order within its
#                          flow; super-packets were written; conservation
#                          and audit hold
#   pass-coalesce          the same with --pass: the RX thread holds and
#                          merges itself (inline mode)
#   no-coalesce            the same traffic with --no-coalesce: delivered,
#                          and not one super-packet
#   tcp, tcp-ipv6          an 8 MB file over TCP through the daemon: its
#                          SHA-256 at the far end matches, and super-packets
#                          (TCPV4/TCPV6 GSO) carried it; conservation, audit
#
# Root; two namespaces, removed on exit with everything started in them.
set -u
BUILD=${BUILD:-build}
name=test-coalesce
cases="coalesce-ipv4 coalesce-ipv6 pass-coalesce no-coalesce tcp tcp-ipv6"
cd "$(dirname "$0")/../.."
. tests/lib.sh
daemon=$BUILD/ucpumapd
gen=$BUILD/ucpumap-gen
G=ucmcg$$
D=ucmcd$$

setup() {
	skip_unless_root "namespaces, XDP, tun"
	for b in "$daemon" "$gen"; do
		[ -x "$b" ] || { bad build "$b is not built (make)"; exit 0; }
	done
	PY=$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null)
	[ -n "$PY" ] || { echo "SKIP: $name: needs python3"; exit 0; }
	if ! veth_pair $G $D vg vd 10.207.0.1/24 10.207.0.2/24 2> "$tmp/setup.err" ||
		! ip -n $G addr add fd00:207::1/64 dev vg nodad ||
		! ip -n $D addr add fd00:207::2/64 dev vd nodad ||
		! ip -n $G route add 10.207.1.0/24 via 10.207.0.2 ||
		! ip -n $G -6 route add fd00:207:1::/64 via fd00:207::2; then
		bad setup "$(head -3 "$tmp/setup.err")"
		exit 0
	fi
	# Packets come in through the tun, not vd: no reverse-path filter.
	ip netns exec $D sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
}

COUNT=20000
FLOWS=4

# Readers and the TCP ends: sockets behind the tun, a client in the
# generator's namespace.
helper=$progs/ucpumapd_traffic.py

# Rings large enough for this machine's stalls: an RX ring of 16384 (330
# ms at 50,000 datagrams a second), each worker's 8192, frames to match.
# With the default rings a fresh-clone CI run lost 1800 in a row (9%, each
# counted), over the 5% allowed; with an RX ring of 4096 (80 ms) CI runs
# lost 1287 and 1761 in a row in two cases of one run (2026-12-02), and a
# TSan build 1000 to 5000 here, starting 7000 to 11000 in, each counted.
# With 16384 the TSan build lost none in 4 runs of the first case and 2 of
# the whole test, and its CI runs none since.
RX_SIZE=16384
FRAMES=65536

# daemon_start CASE ARGS...: ucpumapd on vd with tun ucmc0 and its
# addresses, its per-worker lines on (--extended: run shows the final
# coalesce lines); $dpid. Non-zero, with $why, when it did not start.
daemon_start() {
	local c=$1
	shift
	ip netns exec $D "$daemon" --dev vd --tun ucmc0 --cpus 0,1 --interval 0 --extended \
		--rx-size $RX_SIZE --qsize 8192 --frames $FRAMES \
		--stats-json "$tmp/$c.json" --duration 40 "$@" > "$tmp/$c.out" 2> "$tmp/$c.err" &
	dpid=$!
	lib_pid $dpid
	for _ in $(seq 100); do
		grep -q '^ucpumapd: ' "$tmp/$c.out" && break
		kill -0 $dpid 2> /dev/null || break
		sleep 0.05
	done
	if ! grep -q '^ucpumapd: ' "$tmp/$c.out"; then
		why="ucpumapd did not start: $(tail -2 "$tmp/$c.err" | tr '\n' ' ')"
		return 1
	fi
	ip -n $D addr add 10.207.1.1/24 dev ucmc0 && ip -n $D -6 addr add fd00:207:1::1/64 dev ucmc0 nodad
}

# daemon_stop CASE: its statistics now ($super, $segs), then SIGTERM; $why
# gains its exit status, conservation and audit if they are wrong.
daemon_stop() {
	local c=$1 r
	kill -USR1 $dpid
	for _ in $(seq 40); do [ -s "$tmp/$c.json" ] && break; sleep 0.05; done
	super=$(jget "$tmp/$c.json" 'd["tun_super"]')
	segs=$(jget "$tmp/$c.json" 'd["tun_super_segs"]')
	lib_term $dpid	# 137 when it had to be killed after 5 s
	r=$?
	[ "$r" = 0 ] || why="$why ucpumapd exit status $r;"
	grep -q '^conservation: .*: holds$' "$tmp/$c.out" || why="$why $(grep '^conservation' "$tmp/$c.out" || echo 'no conservation line');"
	grep -q '^audit: every frame came home$' "$tmp/$c.out" || why="$why $(grep '^audit' "$tmp/$c.out" || echo 'no audit line')"
}

# What the DUT's UDP layer dropped so far, IPv4 and IPv6: InErrors, which
# counts a full receive buffer (RcvbufErrors) and the rest alike (the
# protocol's memory limit, MemErrors; a super-packet the socket could not
# cut, a checksum).
udp_errors() {
	ip netns exec $D awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { n += $4 } $1 == "Udp6InErrors" { n += $2 } END { print n + 0 }' \
		/proc/net/snmp /proc/net/snmp6
}

# What the veth itself dropped on the generator's side so far: with vg's
# default qdisc (noqueue) a datagram that finds vd's XDP ring full (vd's
# NAPI held off by a stalled vCPU) is dropped there and counted as vg's
# tx_dropped (veth_xmit()); it never reaches vd, so no counter of the
# daemon's can see it.
veth_drops() {
	ip netns exec $G cat /sys/class/net/vg/statistics/tx_dropped
}

# The kernel's counters in $D, as NAME VALUE lines: the failure message
# names the drop counters among them that moved, to explain a loss no one
# above counted.
kernel_counts() {
	ip netns exec $D sh -c 'for i in vd ucmc0; do
		echo "$i.rx_dropped $(cat /sys/class/net/$i/statistics/rx_dropped)"; done
		awk '\''$1 == "Ip:" || $1 == "Udp:" { if ($2 ~ /^[0-9]/) { for (i = 2; i <= NF; i++) print $1 h[$1, i], $i } else for (i = 2; i <= NF; i++) h[$1, i] = $i }'\'' /proc/net/snmp
		grep -E "^(Ip6In|Udp6In)" /proc/net/snmp6'
}

# run CASE DST SIZE DAEMON-ARGS...: the daemon, the reader, the generator;
# sets $why to what went wrong (empty: the delivery was exact) and $super
# to the super-packets the daemon wrote.
run() {
	local c=$1 dst=$2 size=$3 rpid hl udp0 veth0 veth lost
	shift 3
	why=
	super=
	daemon_start $c "$@" || return
	hl=28
	case $dst in *:*) hl=48 ;; esac
	# Bound to the tun: what the XDP program passed to vd's own stack
	# (no socket for its queue) does not reach the reader.
	ip netns exec $D "$PY" $helper seq-recv --count $COUNT --size $((size - 14 - hl)) --dev ucmc0 \
		--ready "$tmp/$c.ready" --stop "$tmp/$c.stop" --out "$tmp/$c.res" > "$tmp/$c.reader" 2>&1 &
	rpid=$!
	lib_pid $rpid
	if ! wait_file "$tmp/$c.ready" 50; then
		why="the reader did not start: $(tail -2 "$tmp/$c.reader");"
		daemon_stop $c	# the next case needs vd free
		return
	fi
	udp0=$(udp_errors)
	veth0=$(veth_drops)
	kernel_counts > "$tmp/$c.k0"
	if ! timeout 30 ip netns exec $G "$gen" --dev vg --dst-ip "$dst" --dst-port 9000 --flows $FLOWS \
		--seq --size "$size" --count $COUNT --rate 50000 > "$tmp/$c.gen" 2>&1; then
		why="ucpumap-gen failed: $(tail -2 "$tmp/$c.gen" | tr '\n' ' ')"
	fi
	sleep 0.5
	touch "$tmp/$c.stop"
	wait_file "$tmp/$c.res" 100
	kernel_counts > "$tmp/$c.k1"	# before the tun goes with the daemon
	daemon_stop $c
	[ -s "$tmp/$c.res" ] || { why="$why no result from the reader: $(tail -2 "$tmp/$c.reader")"; return; }
	read -r got miss dup cor dis fl stopped <<< "$(jget "$tmp/$c.res" \
		'"%d %d %d %d %d %d %s" % (d["received"], d["missing"], d["duplicated"], d["corrupt"], d["disorder"], d["flows"], d["stopped"])')"
	# On a loaded machine a few may be lost, but never silently: each
	# missing datagram must be a drop the daemon counted (its own, or the
	# kernel's at its sockets), the DUT's UDP layer dropped it, or the veth
	# dropped it before vd.
	veth=$(( $(veth_drops) - veth0 ))
	counted=$(( $(jget "$tmp/$c.json" 'd["rx_bad_desc"] + d["rx_steer_err"] + d["enqueue_drops"] + d["worker_drops"] + sum(q["kernel_rx_dropped"] + q["kernel_rx_ring_full"] for q in d["queues"])') + $(udp_errors) - udp0 + veth ))
	# At most 5% lost. Under a sanitizer the veth's own drops are left out
	# of that share: a fresh-clone CI run's TSan pass lost 2426 (12%), all
	# of them vg's tx_dropped, vd's NAPI starved by the slowed threads on 2
	# CPUs (2026-12-05); what this test checks is every one counted.
	lost=$miss
	[ -z "${SANITIZE:-}" ] || lost=$((miss - veth))
	if [ "$got" != $COUNT ] && [ "$dup" = 0 ] && [ "$cor" = 0 ] && [ "$dis" = 0 ] &&
		[ "$fl" = $FLOWS ] && [ "$stopped" = True ] && [ "$miss" -le "$counted" ] &&
		[ $((lost * 20)) -le $COUNT ]; then
		echo "# $c: $miss of $COUNT lost under load, each counted ($counted drops counted, $veth of them by the veth)"
	elif [ "$got" != $COUNT ] || [ "$dup" != 0 ] || [ "$cor" != 0 ] || [ "$dis" != 0 ] ||
		[ "$fl" != $FLOWS ] || [ "$stopped" != True ]; then
		[ "$miss" -gt "$counted" ] &&
			why="${why}moved in $D: $(awk 'NR == FNR { a[$1] = $2; next } $1 ~ /Err|Discard|dropped|NoPorts|Trunc/ && $2 != a[$1] { printf "%s %+d ", $1, $2 - a[$1] }' "$tmp/$c.k0" "$tmp/$c.k1")"
		why="$counted drops counted ($veth by the veth); $why"
		why="received $got of $COUNT in $fl flows: missing $miss $(jget "$tmp/$c.res" 'd["first_missing"]'), duplicated $dup, corrupt $cor, out of order $dis $(jget "$tmp/$c.res" 'd["first_disorder"]'), stopped in time: $stopped; $why"
	fi
	awk '/^total / { t = 1 } t && /^    coalesce/' "$tmp/$c.out" | sed 's/^ */# /'
}

# merged CASE: super-packets of 4 datagrams or more on average: the hold
# at work (4 flows in a hold of 64 make 16; without it a batch of 8 makes
# pairs, and not merging gives 1). Not 8: at --rate 50000 ucpumap-gen sends
# bursts of 64 frames, 16 a flow, which the RX thread often takes in more
# than one batch: pass-coalesce read 5.3 to 6.0 a super-packet here with
# the loop engine, 6.5 under ASan, 15.9 under TSan.
merged() {
	local min=4
	if [ -n "$why" ]; then
		bad $1 "$why"
	elif [ "${super:-0}" -gt 0 ] && [ "${segs:-0}" -ge $((min * super)) ]; then
		ok $1 "$COUNT datagrams of $FLOWS flows, $segs of them in $super super-packets"
	else
		bad $1 "delivered, but ${segs:-no} datagrams in ${super:-no} super-packets (want $min or more each)"
	fi
}

case_coalesce_ipv4() {
	run coalesce-ipv4 10.207.1.1 100
	merged coalesce-ipv4
}

case_coalesce_ipv6() {
	run coalesce-ipv6 fd00:207:1::1 120
	merged coalesce-ipv6
}

# --pass: no workers, the RX thread holds and writes at the end of each RX
# batch (inline mode), so a super-packet holds at most one batch's share of
# its flow.
case_pass_coalesce() {
	run pass-coalesce 10.207.1.1 100 --pass
	merged pass-coalesce
}

case_no_coalesce() {
	run no-coalesce 10.207.1.1 100 --no-coalesce
	if [ -n "$why" ]; then
		bad no-coalesce "$why"
	elif [ "$super" = 0 ]; then
		ok no-coalesce
	else
		bad no-coalesce "${super:-no count of} super-packets with --no-coalesce"
	fi
}

# ---- TCP: a real stack's stream through the coalescing datapath ------------------
# The file the TCP cases send: 8 MB, made once.
blob() {
	head -c 8388608 /dev/urandom > "$tmp/blob"
	want=$(sha256sum "$tmp/blob" | cut -d' ' -f1)
}

# tcp_case CASE ADDR: the daemon, a server behind the tun, a client in the
# generator's namespace.
tcp_case() {
	local c=$1 addr=$2 spid got n
	lib_once blob
	why=
	daemon_start $c || { bad $c "$why"; return; }
	ip netns exec $D "$PY" $helper tcp-server --addr "$addr" --ready "$tmp/$c.ready" \
		--out "$tmp/$c.res" --timeout 20 > "$tmp/$c.server" 2>&1 &
	spid=$!
	lib_pid $spid
	wait_file "$tmp/$c.ready" 50
	timeout 30 ip netns exec $G "$PY" $helper tcp-client --addr "$addr" --file "$tmp/blob" \
		--timeout 20 > "$tmp/$c.client" 2>&1
	wait_file "$tmp/$c.res" 100
	daemon_stop $c
	read -r got n <<< "$(jget "$tmp/$c.res" '"%s %d" % (d["sha256"], d["bytes"])')"
	[ "$got" = "$want" ] && [ "$n" = 8388608 ] || why="$why received ${n:-no} bytes, sha256 ${got:-none} (sent 8388608, $want); client: $(tail -1 "$tmp/$c.client") server: $(tail -1 "$tmp/$c.server");"
	[ "${super:-0}" -gt 0 ] || why="$why no super-packet (tun_super ${super:-?});"
	if [ -z "$why" ]; then
		ok $c "sha256 matches; $segs segments in $super super-packets"
	else
		bad $c "$why"
	fi
}

case_tcp() { tcp_case tcp 10.207.1.1; }
case_tcp_ipv6() { tcp_case tcp-ipv6 fd00:207:1::1; }

lib_run_cases "$@"
