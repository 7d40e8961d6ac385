#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd as a two-way forwarder, with real clients, on a veth
# pair between two namespaces. Routes send both directions through the
# datapath only: the peer's packets to the DUT are all redirected to
# AF_XDP by the program on vd, and the DUT reaches the peer through the tun
# alone (a /32 route), so a broken direction fails every case.
#
#   neigh-resolve       --two-way, the peer unknown to the DUT's neighbour table:
#                       the first packet out makes the kernel resolve it and
#                       waits meanwhile: 10 of 10 pings answered (next hops
#                       from the kernel's tables)
#   ping-in, ping-out   ICMP echo, each side asking
#   iperf3-in/out       a 50 MB TCP transfer each way with iperf3: all sent,
#                       at least 75% counted by the server before the end message
#   file-in/out         4 MB each way, SHA-256 compared at the far end
#   download            50 MB by HTTP (curl in the peer's namespace, Python's
#                       http.server behind the tun), SHA-256 compared: the
#                       way back at a TCP sender's full speed
#   uso-csum            5 UDP_SEGMENT sends of 8 datagrams and a plain
#                       datagram from a DUT socket: 40 of 1200 bytes and the
#                       plain one arrive intact (their checksums, done by the
#                       way back or left to the kernel, checked by the far
#                       end's kernel), and the daemon's counters show it cut
#                       the 5 (where the kernel takes USO4) and completed the
#                       plain one's, or left all 41 to the kernel
#   stats               the way back's counters: tx, completions, direct share;
#                       not one packet dropped for a full TX channel over
#                       all of the above (the read path waits instead)
#   stats-read-agree    (of stats) /metrics' ucpumap_back_packets_total is
#                       the JSON's back_read: drops included
#   offloads            super-packets were cut and checksums completed
#   total-line          the total line at the stop: rx, delivered and the way
#                       back's pps, each its whole-run count over the run's time
#   spin                --spin-us 1000: ping each way, a clean stop
#   sw-csum             --no-tx-csum: a 4 MB file out, SHA-256 compared, every
#                       checksum the way back's own (none left to the kernel)
#   prewake             one worker: off by default (the banner); with
#                       --prewake on, ping each way (40 of 40: the first
#                       answer waits for the next hop's resolution),
#                       the worker woken by their arrivals in the tun's
#                       io_uring (prewakes > 0 over the pings alone), a 4 MB
#                       file out, SHA-256 compared, every frame home
#   neigh-known         the peer known to the kernel (pinged before the
#                       start): the way back's first packet to it goes
#                       (no_neigh 0, the one ping answered), its next hop
#                       read from the kernel's table at start; the tun's
#                       own IPv6 multicast (MLD, router solicitations)
#                       counted as link_local, not no_neigh
#   neigh-gateway       a destination behind a gateway the kernel does not
#                       know yet (a route through vd via the peer): 8
#                       datagrams sent at once wait for the route and the
#                       gateway's resolution and arrive, in order;
#                       no_neigh 0, held 1 or more (the first always: a
#                       route is asked on a destination's first packet)
#   neigh-v6            the same over IPv6 to a neighbour on vd's link the
#                       kernel has not solicited yet (fd04::1)
#   neigh-limits        destinations behind a gateway that never answers:
#                       12 datagrams to one (8 wait, a destination's
#                       limit), then, once their wait is over, 8 to each of
#                       five more (32 wait, a worker's limit; the last 8
#                       find no place): held 40, and all 52 dropped as
#                       no_neigh; then a ping to the peer answered, every
#                       frame home
#   multicast-out       5 datagrams to 239.1.2.3 and 5 to ff0e::1:3 routed
#                       into the tun, out to the group's Ethernet address
#                       (tcpdump on vg: veth takes any group's), received
#                       by a member behind vg
#   mtu-change          vd's MTU lowered under a running daemon: said,
#                       naming the tun's larger one and the fix; set back:
#                       said; raised within a frame, then past it (a
#                       restart needed): each said; a clean stop
#   mac-change          vd's MAC changed under a running daemon: said; ping
#                       each way, 10 of 10 (vg's ARP asked again), and
#                       every frame of the way back vg sees leaves from the
#                       new address (a VF's spoof check drops the old's);
#                       a clean stop
#   no-offload-kept     --no-offload on a kept tun whose offloads are on:
#                       they go off, a file goes out intact, nothing dropped
#                       for them; /metrics leaves the offload families out
#   sigterm             SIGTERM during a two-way transfer (--peer-mac, a fixed
#                       next hop, and --no-direct-bulk): exit 0, both
#                       conservation lines and the audit hold;
#                       peer-mac-metrics: its /metrics has no next-hop
#                       families
#   tap-*               --tap --two-way: the tap holds the DUT's address and
#                       vd's MAC (and its IPv6 link-local address is made of
#                       it), ARP goes through ucpumapd both ways; ping
#                       each way, a file each way; /metrics has no next-hop
#                       families; vd's MAC changed, pings to the tap's
#                       still come through; a clean stop
#   man-example-*       the two-way example of ucpumapd(8), EXAMPLES, its
#                       commands as the page prints them (eth0 vd, the peer
#                       10.204.0.1, the JSON in the test's directory): 50 MB
#                       by iperf3 each way; after SIGKILL the tun and its
#                       route are still there, and the page's first command
#                       alone makes a 4 MB file go out intact. Before tap,
#                       which takes the DUT's address off vd
#   bad-flags           --peer-mac errors, a spin too long, --prewake on with
#                       --pass, --no-offload or --no-tx-csum one way,
#                       --no-tx-csum with --no-offload: precise message,
#                       exit 2, nothing left attached
#
# The cases from neigh-resolve to total-line share one daemon, started at
# the first of them and stopped by clean-stop; a case after them that
# starts its own stops it first. neigh-resolve finds the next hop the
# others need (it runs first, on a fresh daemon); stats needs the traffic
# of file-out and uso-csum, total-line that of ping-out: each runs those
# first. The stats case's lines are stats
# and offloads, the tap case's tap-*.
#
# Root. One PASS/FAIL/SKIP line per case; the namespaces and every process
# started here go on exit, by pid.
set -u
BUILD=${BUILD:-build}
name=test-two-way
cases="neigh-resolve ping-in ping-out iperf3-in iperf3-out file-in file-out download uso-csum
stats clean-stop total-line spin sw-csum no-offload-kept prewake neigh-known neigh-gateway neigh-via6 neigh-v6 neigh-limits multicast-out mtu-change mac-change sigterm man-example tap bad-flags"
cd "$(dirname "$0")/../.."
. tests/lib.sh
helper=$progs/ucpumapd_traffic.py
g=ucm2g$$
d=ucm2d$$
dpid=

setup() {
	skip_unless_root "namespaces, XDP, tun"
	[ -x "$BUILD/ucpumapd" ] || { bad build "$BUILD/ucpumapd is not built (make)"; exit 0; }
	for t in python3 iperf3; do
		command -v $t > /dev/null || { echo "SKIP: $name: needs $t (scripts/install-deps.sh)"; exit 0; }
	done

	veth_pair "$g" "$d" vg vd 10.204.0.1/24 10.204.0.2/24 &&
		ip netns exec "$d" sysctl -qw net.ipv4.conf.all.rp_filter=0 || {
		bad setup "cannot build the namespaces"
		exit 0
	}
	gmac=$(mac_of "$g" vg)
	# The way back leaves L4 checksums to the device where the kernel takes AF_XDP
	# TX metadata. veth would carry them partial to vg, whose kernel trusts a
	# partial checksum. With vd's TX checksumming off the kernel finishes each one
	# in software from the partial sum the way back wrote, and vg's kernel checks
	# it: every byte-exact case below then checks those sums too.
	ip netns exec "$d" ethtool -K vd tx off > /dev/null || {
		bad setup "ethtool -K vd tx off failed"
		exit 0
	}
}

# Foreground only: in the background, $! would be a subshell's pid, and a
# signal meant for the program would miss it. Background programs are
# started with `ip netns exec` directly (it execs: $! is the program).
in_g() { ip netns exec "$g" "$@"; }
in_d() { ip netns exec "$d" "$@"; }
# replies JSON: the ping helper's count of answers
replies() { echo "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["replies"])' 2> /dev/null; }

# start [flags]: ucpumapd two-way (the flags say how), the /32 route to the
# peer through the tun. --duration: a backstop, each case stops it first.
start() {
	# Emptied here, not by the child's redirection: the wait below would
	# find the last daemon's banner in the file before the child opens it.
	: > "$tmp/d.out"
	: > "$tmp/d.err"
	ip netns exec "$d" "$BUILD/ucpumapd" --dev vd --tun ucm2 --interval 0 --duration 120 \
		--stats-json "$tmp/stats.json" "$@" > "$tmp/d.out" 2> "$tmp/d.err" &
	dpid=$!
	lib_pid "$dpid"
	# Its first line comes when everything is up (program, sockets, tun).
	for _ in $(seq 400); do
		grep -q "^ucpumapd: vd queues" "$tmp/d.out" 2> /dev/null && break
		kill -0 "$dpid" 2> /dev/null || return 1
		sleep 0.05
	done
	ip -n "$d" route add 10.204.0.1/32 dev ucm2 2> /dev/null
	in_d sysctl -qw net.ipv4.conf.ucm2.rp_filter=0
	ip -n "$d" route get 10.204.0.1 | grep -q "dev ucm2" && return 0
	# Not half up: the next case's start would find vd served.
	echo "the route to 10.204.0.1 does not go through ucm2" >> "$tmp/d.err"
	stop > /dev/null
	return 1
}
stop() {	# exit code of ucpumapd after SIGTERM, bounded
	local rc
	kill -TERM "$dpid"
	for _ in $(seq 100); do kill -0 "$dpid" 2> /dev/null || break; sleep 0.05; done
	if kill -0 "$dpid" 2> /dev/null; then
		kill -9 "$dpid"
		lib_wait "$dpid"
		dpid=
		return 124
	fi
	lib_wait "$dpid"
	rc=$?
	dpid=
	return $rc
}


# shared: the daemon the first cases share, two-way, its next hop unknown.
shared() {
	ip -n "$d" neigh flush dev vd
	if ! start --two-way --metrics-listen 127.0.0.1:9440; then
		bad start "ucpumapd did not come up or the route is not through the tun: $(head -c 400 "$tmp/d.err")"
		exit 0
	fi
	shared_up=1
}
shared_up=

# resolved: the shared daemon with its next hop to the peer known, as
# neigh-resolve leaves it.
resolved() {
	lib_need neigh-resolve
}

# own: a case that starts its own daemon stops the shared one first.
own() {
	[ -z "$shared_up" ] || lib_need clean-stop
}

# ---- the next hop from the kernel's tables, unknown at first ----------------------
case_neigh_resolve() {
	local r n
	lib_once shared
	r=$(in_d python3 "$helper" ping --dst 10.204.0.1 --count 10 --interval 0.1 --timeout 5)
	n=$(replies "$r")
	if [ "${n:-0}" = 10 ] && ip -n "$d" neigh show 10.204.0.1 dev vd | grep -q lladdr; then
		ok "neigh-resolve: $n of 10 replies, the peer resolved by the kernel on vd"
	else
		bad neigh-resolve "$r; neighbour: $(ip -n "$d" neigh show dev vd)"
	fi
}

# ---- ping, each side asking ----------------------------------------------------
case_ping_in() {
	local r
	resolved
	r=$(in_g python3 "$helper" ping --dst 10.204.0.2 --count 10 --timeout 5)
	[ "$(replies "$r")" = 10 ] &&
		ok "ping-in: 10 of 10" || bad ping-in "$r"
}
case_ping_out() {
	local r
	resolved
	r=$(in_d python3 "$helper" ping --dst 10.204.0.1 --count 10 --timeout 5)
	[ "$(replies "$r")" = 10 ] &&
		ok "ping-out: 10 of 10" || bad ping-out "$r"
}

# ---- iperf3, each way ------------------------------------------------------------
iperf() {	# tag, server ns, server addr, client ns
	local tag=$1 sns=$2 saddr=$3 cns=$4 spid
	ip netns exec "$sns" iperf3 -s -B "$saddr" -1 -J > "$tmp/$tag.s" 2>&1 &
	spid=$!
	lib_pid "$spid"
	sleep 0.5
	timeout 20 ip netns exec "$cns" iperf3 -c "$saddr" -n 50M -J > "$tmp/$tag.c" 2>&1
	# -1 ends the server after its one test; one whose client never came
	# is stopped
	for _ in $(seq 50); do kill -0 "$spid" 2> /dev/null || break; sleep 0.1; done
	stop_pid "$spid"
	python3 - "$tmp/$tag.c" "$tmp/$tag.s" "$name/$tag" <<'PY'
import json, sys
try:
    c, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    sent = c["end"]["sum_sent"]["bytes"]	# -n: what was asked, or a block more
    got = s["end"]["sum_received"]["bytes"]
except Exception as e:
    print(f"FAIL: {sys.argv[3]}: no result: {e}")
    sys.exit(0)
# iperf3's server stops counting when the client's end-of-test message
# comes, which can overtake the data still queued in the socket buffers:
# on a slower path it reports a few buffers less than arrived (7-8% of 50 MB
# seen here). The
# exact byte count is the file cases' (SHA-256 over every byte).
if "error" not in c and sent >= 50 << 20 and 0.75 * sent <= got <= sent:
    print(f"PASS: {sys.argv[3]}: {sent} bytes sent, {got} counted by the server before "
          f"the end message, {8 * sent / c['end']['sum_sent']['seconds'] / 1e6:.0f} Mbit/s")
else:
    print(f"FAIL: {sys.argv[3]}: sent {sent}, received {got}, error {c.get('error')}")
PY
}
case_iperf3_in() {
	resolved
	iperf iperf3-in "$d" 10.204.0.2 "$g"
}
case_iperf3_out() {
	resolved
	iperf iperf3-out "$g" 10.204.0.1 "$d"
}

# ---- a file each way, SHA-256 at the far end --------------------------------------
# The file each way: 4 MB, made once.
make_file() {
	head -c $((4 << 20)) /dev/urandom > "$tmp/file"
want=$(sha256sum "$tmp/file" | cut -d' ' -f1)
}
file() {	# tag, server ns, server addr, client ns
	local tag=$1 sns=$2 saddr=$3 cns=$4 spid got
	lib_once make_file
	rm -f "$tmp/ready"
	ip netns exec "$sns" python3 "$helper" tcp-server --addr "$saddr" --port 5002 \
		--ready "$tmp/ready" --out "$tmp/$tag.json" &
	spid=$!
	lib_pid "$spid"
	for _ in $(seq 50); do [ -e "$tmp/ready" ] && break; sleep 0.1; done
	ip netns exec "$cns" python3 "$helper" tcp-client --addr "$saddr" --port 5002 \
		--file "$tmp/file" > /dev/null
	wait "$spid"
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"])' "$tmp/$tag.json" 2>/dev/null)
	[ "$got" = "$want" ] && ok "$tag: 4 MB, SHA-256 matches" || bad "$tag" "sha256 $got, want $want"
}
case_file_in() {
	resolved
	file file-in "$d" 10.204.0.2 "$g"
}
case_file_out() {
	resolved
	file file-out "$g" 10.204.0.1 "$d"
}

# ---- a download by HTTP: the way back as fast as TCP goes --------------------------
case_download() {
	local bwant hpid bgot
	resolved
	if command -v curl > /dev/null; then
		head -c $((50 << 20)) /dev/urandom > "$tmp/big"
	bwant=$(sha256sum "$tmp/big" | cut -d' ' -f1)
	(cd "$tmp" && exec ip netns exec "$d" python3 -m http.server 5003 --bind 10.204.0.2 \
		> "$tmp/http.log" 2>&1) &
	hpid=$!
	lib_pid "$hpid"
	for _ in $(seq 50); do
		in_g curl -s --max-time 2 -o /dev/null "http://10.204.0.2:5003/" && break
		sleep 0.1
	done
	bgot=$(in_g timeout 60 curl -s "http://10.204.0.2:5003/big" | sha256sum | cut -d' ' -f1)
	kill "$hpid" 2> /dev/null
	wait "$hpid" 2> /dev/null
	[ "$bgot" = "$bwant" ] && ok "download: 50 MB by HTTP, SHA-256 matches" ||
		bad download "sha256 $bgot, want $bwant"
else
	echo "SKIP: $name/download: needs curl"
fi
}

# ---- USO and a partial checksum: datagrams from a DUT socket ----------------------
# With the tun's offloads on, a UDP_SEGMENT send reaches the way back as one
# super-packet (GSO_UDP_L4), and a plain datagram with its checksum left to
# the device (NEEDS_CSUM): the far end must get 40 datagrams of 1200 bytes,
# each its own bytes, and the plain one, whose checksum its kernel checks
# (a wrong one is dropped there, never delivered).
# The daemon's counters around it (SIGUSR1 writes a JSON line) say who
# cut and checksummed them: the way back, not the kernel before the tun.
case_uso_csum() {
	local upid uso txcsum want_txcsum
	resolved
	kill -USR1 "$dpid"
	sleep 0.3
	tail -n 1 "$tmp/stats.json" > "$tmp/uso.before"
	rm -f "$tmp/uso.ready"
	ip netns exec "$g" python3 - "$tmp/uso.ready" > "$tmp/uso.json" <<'PY' &
import json, os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.204.0.1", 5004))
s.settimeout(3)
open(sys.argv[1], "w").close()
sizes, good = [], 0
try:
    while len(sizes) < 41:
        d = s.recv(65536)
        sizes.append(len(d))
        good += d == bytes([d[0]]) * len(d)
except socket.timeout:
    pass
print(json.dumps({"sizes": sizes, "good": good}))
PY
	upid=$!
	lib_pid "$upid"
	for _ in $(seq 50); do [ -e "$tmp/uso.ready" ] && break; sleep 0.1; done
	in_d python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_UDP, 103, 1200)	# UDP_SEGMENT
for k in range(5):	# 5 sends of 8 datagrams each, each datagram its own byte
    s.sendto(b"".join(bytes([65 + 8 * k + i]) * 1200 for i in range(8)), ("10.204.0.1", 5004))
p = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
p.sendto(b"z" * 100, ("10.204.0.1", 5004))
PY
	wait "$upid"
	kill -USR1 "$dpid"
	sleep 0.3
	tail -n 1 "$tmp/stats.json" > "$tmp/uso.after"
	uso=0 txcsum=0 want_txcsum=0
	grep -q "offloads on the way back: .*USO4" "$tmp/d.err" && uso=1
	grep -q "TX checksum offload: on" "$tmp/d.err" && txcsum=1
	# Linux 6.11 takes TX metadata (XDP_UMEM_TX_METADATA_LEN), and veth's copy
	# path honours it: there the checksums must be left to the kernel.
	kernel_at_least 6 11 && want_txcsum=1
	python3 - "$tmp/uso.json" "$name" "$tmp/uso.before" "$tmp/uso.after" "$uso" "$txcsum" "$want_txcsum" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b, a = (json.load(open(f)) for f in sys.argv[3:5])
uso, txcsum, want_txcsum = sys.argv[5] == "1", sys.argv[6] == "1", sys.argv[7] == "1"
sz = r["sizes"]
cut = a.get("back_super", 0) - b.get("back_super", 0)
done = a.get("back_csum_completed", 0) - b.get("back_csum_completed", 0)
left = a.get("back_csum_offloaded", 0) - b.get("back_csum_offloaded", 0)
arrived = sz.count(1200) == 40 and sz.count(100) == 1 and r["good"] == 41
# Each UDP_SEGMENT send is a super-packet the way back cut, where the
# kernel took USO4 (Linux 6.2); the plain datagram a checksum it completed,
# or, with the TX checksum offload, all 41 checksums left to the kernel
# (which vd's settings make it finish in software, for vg to check).
ours = (left >= 41 if txcsum else done >= 1) and (cut >= 5 if uso else cut == 0) and \
    txcsum >= want_txcsum
how = f"left {left} checksums to the kernel" if txcsum else f"completed {done} checksums"
if arrived and ours:
    print(f"PASS: {sys.argv[2]}/uso-csum: 40 datagrams of 1200 bytes from 5 UDP_SEGMENT sends, and a plain one, each intact; the way back cut {cut} super-packets{'' if uso else ' (no USO4 here: the kernel cut them)'} and {how}")
else:
    print(f"FAIL: {sys.argv[2]}/uso-csum: got {len(sz)} datagrams ({sz.count(1200)} of 1200, {sz.count(100)} of 100), {r['good']} intact, want 40, 1 and 41; the way back cut {cut} super-packets (want {'5 or more' if uso else 0}) and {how} (want {'41' if txcsum else '1'} or more){'; the log does not say TX checksum offload: on, on Linux 6.11 or later' if want_txcsum and not txcsum else ''}")
PY
}

# ---- the way back's counters ------------------------------------------------------
case_stats() {
	lib_need file-out uso-csum
	kill -USR1 "$dpid"
	sleep 0.3
	in_d curl -s --max-time 5 http://127.0.0.1:9440/metrics > "$tmp/two-way.metrics"
	python3 - "$tmp/stats.json" "$name" "$tmp/two-way.metrics" <<'PY' || bad stats "no statistics line in $tmp/stats.json"
import json, re, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
# /metrics' read, scraped after the line, is the line's (the tun's own
# IPv6 packets may have come since: a few more) and counts its drops.
read = sum(int(m) for m in re.findall(r"^ucpumap_back_packets_total\{[^}]*\} (\d+)$", open(sys.argv[3]).read(), re.M))
jr, jd = last.get("back_read", -1), last.get("back_drop_bad", -1)
if jd > 0 and jr <= read <= jr + 5:
    print(f"PASS: {sys.argv[2]}/stats-read-agree: /metrics' back packets {read}, the JSON's back_read {jr} with its {jd} drops")
else:
    print(f"FAIL: {sys.argv[2]}/stats-read-agree: /metrics' back packets {read}, the JSON's back_read {jr} ({jd} drops; want them counted in both)")
tx, done, direct = last.get("tx", 0), last.get("tx_completed", 0), last.get("tx_comp_direct", 0)
full, waits = last.get("back_channel_full", -1), last.get("back_channel_waits", -1)
sup, segs, cs = last.get("back_super", 0), last.get("back_segments", 0), last.get("back_csum_completed", 0)
left = last.get("back_csum_offloaded", 0)
if tx > 1000 and done > 0 and 0 < direct <= done <= tx and full == 0:
    print(f"PASS: {sys.argv[2]}/stats: tx {tx}, completed {done}, {100 * direct / done:.0f}% straight into the cache, read from the tun {last.get('back_read')}, channel full 0 (the read path waited for room {waits} times)")
else:
    print(f"FAIL: {sys.argv[2]}/stats: tx {tx} completed {done} direct {direct} channel full {full} (want 0)")
# The offloads were used: super-packets cut (TSO, the USO sends) and
# checksums completed, or left to the kernel.
if sup >= 5 and segs > 2 * sup and cs + left > 0:
    print(f"PASS: {sys.argv[2]}/offloads: {sup} super-packets cut into {segs} segments, {cs} checksums completed, {left} left to the kernel")
else:
    print(f"FAIL: {sys.argv[2]}/offloads: super {sup} segments {segs} checksums {cs} completed, {left} left to the kernel: the way back cut nothing")
PY
}

case_clean_stop() {
	local rc
	lib_once shared
	stop
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q "^conservation: .*holds" "$tmp/d.out" &&
		grep -q "^conservation, way back: .*holds" "$tmp/d.out" &&
		grep -q "^audit: every frame came home" "$tmp/d.out"; then
		ok "clean-stop: exit 0, both directions conserved, every frame home"
	else
		bad clean-stop "exit $rc: $(grep -E '^(conservation|audit)' "$tmp/d.out") $(head -c 300 "$tmp/d.err")"
	fi
	shared_up=
}

# ---- the total line: both ways, averaged over the whole run ------------------------
case_total_line() {
	lib_need ping-out clean-stop
	python3 - "$tmp/d.out" "$tmp/stats.json" "$name" <<'PY'
import json, re, sys
out = open(sys.argv[1]).read().splitlines()
last = [json.loads(l) for l in open(sys.argv[2]) if l.strip()][-1]
TOTAL = re.compile(r"total vd, averaged over the whole run \(([0-9.]+) s\): rx (\d+) pps, "
                   r"delivered (\d+) pps, drops \d+/s( \(largest: [a-z0-9_]+ \d+/s\))?"
                   r", workers \d+% busy, RX threads \d+% busy"
                   r"(?:, to the kernel \d+/s \(largest: [a-z_]+ \d+/s\))?(?:, checksums left to the kernel \d+/s)? "
                   r"\| back: (\d+) pps, drops \d+/s( \(largest: [a-z0-9_]+ \d+/s\))?$")
t = [TOTAL.match(l) for l in out if l.startswith("total ")]
if len(t) != 1 or not t[0]:
    print(f"FAIL: {sys.argv[3]}/total-line: {[l for l in out if l.startswith('total ')]}")
    sys.exit(0)
secs = float(t[0].group(1))
why = []
# Each rate is rounded to the packet per second, the time to the ms.
for what, avg, n in (("rx", int(t[0].group(2)), last["rx"]),
                     ("delivered", int(t[0].group(3)), last["tun_packets"]),
                     ("back", int(t[0].group(5)), last["tx"])):
    if not n or abs(avg * secs - n) > 1 + 0.5 * secs + 0.0005 * avg:
        why.append(f"{what} {avg} pps over {secs:.3f} s, but {n} in all")
if why:
    print(f"FAIL: {sys.argv[3]}/total-line: {'; '.join(why)}")
else:
    print(f"PASS: {sys.argv[3]}/total-line: over {secs:.3f} s, {t[0].group(3)} pps in, "
          f"{t[0].group(5)} pps back: the whole run's counts")
PY
}

# ---- a spin before sleeping, both ways -------------------------------------------
# The RX thread and the worker look for work for a millisecond before they
# sleep: ping each way, every answer, and a clean stop. A spinning
# thread needs a CPU of its own and one left over: with fewer than three
# CPUs the case checks that ucpumapd refuses the spin, and says why.
case_spin() {
	local r1 r2 rc n1 n2
	own
	if [ "$(nproc)" -lt 3 ]; then
		start --two-way --spin-us 1000 --rx-cpus 0 --cpus 1
		# Refused at once; one that started is stopped, not waited for.
		for _ in $(seq 100); do kill -0 "$dpid" 2> /dev/null || break; sleep 0.05; done
		if kill -0 "$dpid" 2> /dev/null; then
			stop_pid "$dpid"
			rc="none: it started"
		else
			lib_wait "$dpid"
			rc=$?
		fi
		if [ "$rc" = 2 ] && grep -q "spin-us: 2 polling threads would hold every CPU" "$tmp/d.err"; then
			ok "spin: refused on $(nproc) CPUs: $(head -1 "$tmp/d.err" | cut -c1-90)"
		else
			bad spin "--spin-us 1000 on $(nproc) CPUs: exit $rc: $(head -c 300 "$tmp/d.err")"
		fi
		return
	fi
	if start --two-way --spin-us 1000 --rx-cpus 0 --cpus 1; then
		r1=$(in_g python3 "$helper" ping --dst 10.204.0.2 --count 10 --timeout 5)
		r2=$(in_d python3 "$helper" ping --dst 10.204.0.1 --count 10 --timeout 5)
		stop
		rc=$?
		n1=$(replies "$r1")
		n2=$(replies "$r2")
		if [ "${n1:-0}" = 10 ] && [ "${n2:-0}" = 10 ] && [ $rc = 0 ] &&
			[ "$(grep -c '^conservation.*holds' "$tmp/d.out")" = 2 ] &&
			grep -q "^audit: every frame came home" "$tmp/d.out"; then
			ok "spin: --spin-us 1000, ping $n1 and $n2 of 10, a clean stop"
		else
			bad spin "ping in $r1, out $r2, exit $rc: $(grep -E '^(conservation|audit)' "$tmp/d.out")"
		fi
	else
		bad spin "ucpumapd --spin-us 1000 did not start: $(head -c 300 "$tmp/d.err")"
	fi
}

# ---- every checksum the way back's own: --no-tx-csum -------------------------------
# The runs above leave checksums to the kernel (vd's TX checksumming off makes
# it finish them, for vg to check). Here the way back computes them all: the
# file arrives whole, and the counters show checksums done here, none left.
case_sw_csum() {
	local rc
	own
	if start --two-way --no-tx-csum; then
		file sw-csum-file-out "$g" 10.204.0.1 "$d"
		kill -USR1 "$dpid"
		sleep 0.3
		stop
		rc=$?
		python3 - "$tmp/stats.json" "$name" "$rc" "$tmp/d.err" <<'PY'
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
segs, left = last.get("back_segments", 0), last.get("back_csum_offloaded", -1)
said = "TX checksum offload: on" in open(sys.argv[4]).read()
if sys.argv[3] == "0" and segs > 0 and left == 0 and not said:
    print(f"PASS: {sys.argv[2]}/sw-csum: --no-tx-csum: {segs} segments cut, every checksum computed by the way back, none left to the kernel, a clean stop")
else:
    print(f"FAIL: {sys.argv[2]}/sw-csum: exit {sys.argv[3]}, {segs} segments, {left} checksums left to the kernel (want 0), offload said on: {said}")
PY
	else
		bad sw-csum "ucpumapd --no-tx-csum did not start: $(head -c 300 "$tmp/d.err")"
	fi
}

# A tun kept with its offloads on (as a --two-way --keep-tun run leaves it),
# then --no-offload on it: the offloads go off (the kernel would otherwise
# hand the way back super-packets and partial checksums it drops), and a
# file goes out intact.
case_no_offload_kept() {
	local rc tso drops
	own
	if ! in_d python3 - <<'PY'; then
import fcntl, struct
TUNSETIFF, TUNSETPERSIST, TUNSETOFFLOAD = 0x400454ca, 0x400454cb, 0x400454d0
IFF_TUN, IFF_NO_PI, IFF_MULTI_QUEUE, IFF_VNET_HDR = 0x1, 0x1000, 0x100, 0x4000
f = open("/dev/net/tun", "r+b", buffering=0)
fcntl.ioctl(f, TUNSETIFF, struct.pack("16sH", b"ucm2", IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE | IFF_VNET_HDR))
fcntl.ioctl(f, TUNSETOFFLOAD, 0x1 | 0x2 | 0x4)	# TUN_F_CSUM, TSO4, TSO6
fcntl.ioctl(f, TUNSETPERSIST, 1)
PY
		bad no-offload-kept "cannot make a kept tun with its offloads on"
		return
	fi
	if start --two-way --no-offload --metrics-listen 127.0.0.1:9441; then
		tso=$(in_d ethtool -k ucm2 | sed -n 's/^tcp-segmentation-offload: //p')
		file no-offload-kept-file-out "$g" 10.204.0.1 "$d"
		# No super-packet is read: its families are left out, not 0;
		# the next hops' stay (a tun, no --peer-mac).
		in_d curl -s --max-time 5 http://127.0.0.1:9441/metrics > "$tmp/no-offload.metrics"
		if ! grep -q "^ucpumap_back_super_packets_total" "$tmp/no-offload.metrics" &&
			grep -q "^ucpumap_back_neigh_questions_total" "$tmp/no-offload.metrics"; then
			ok no-offload-metrics "no offload families, the next-hop ones there"
		else
			bad no-offload-metrics "$(grep -c "^ucpumap_back_super_packets_total" "$tmp/no-offload.metrics") super-packet series (want 0), $(grep -c "^ucpumap_back_neigh_questions_total" "$tmp/no-offload.metrics") next-hop ones (want 1 or more)"
		fi
		kill -USR1 "$dpid"
		sleep 0.3
		stop
		rc=$?
		# The way back's drops are the tun's own IPv6 link-local
		# packets at most (a few); each of the file's 2800-odd
		# segments would be one.
		drops=$(tail -n 1 "$tmp/stats.json" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("back_drop_bad", 999999))')
		if [ "$rc" = 0 ] && [ "$tso" = off ] && [ "$drops" -lt 20 ]; then
			ok no-offload-kept "the kept tun's TSO off, $drops packets dropped on the way back, a clean stop"
		else
			bad no-offload-kept "exit $rc, TSO '$tso' (want off), back_drop_bad $drops (want under 20)"
		fi
	else
		bad no-offload-kept "ucpumapd --no-offload did not start: $(head -c 300 "$tmp/d.err")"
	fi
	ip -n "$d" link del ucm2 2> /dev/null
}

# ---- the pre-wake, asked for: the worker asleep in the tun's io_uring --------------
# Off by default for a two-way worker, even a single one (the banner); with
# --prewake on, the queues' arrivals wake the worker where it sleeps, in the
# tun's io_uring (counted over pings alone, where the tun ends no sleep with
# an arrival pending), and everything still flows and comes home.
case_prewake() {
	local banner_default r1 r2 rc
	own
	banner_default=
	if start --two-way --cpus 1; then
		banner_default=$(grep "^ucpumapd: vd queues" "$tmp/d.out")
		stop
	fi
	if start --two-way --cpus 1 --prewake on; then
		# 40 each way: the pre-wakes a run's pings make vary, 3 to 26 of
		# 40 (becb36c and after alike), and 0 of 40 was seen once.
		r1=$(in_g python3 "$helper" ping --dst 10.204.0.2 --count 40 --interval 0.05 --timeout 8)
		r2=$(in_d python3 "$helper" ping --dst 10.204.0.1 --count 40 --interval 0.05 --timeout 8)
		kill -USR1 "$dpid"
		sleep 0.3
		tail -n 1 "$tmp/stats.json" > "$tmp/pw.ping"
		file prewake-file-out "$g" 10.204.0.1 "$d"
		stop
		rc=$?
		python3 - "$tmp/pw.ping" "$name" "$rc" "$tmp/d.out" "$banner_default" "$r1" "$r2" <<'PY'
import json, sys
try:
    pw = sum(w["prewakes"] for w in json.loads(open(sys.argv[1]).read())["workers"])
except (ValueError, KeyError):
    pw = -1
out = open(sys.argv[4]).read()
banner = any(l.startswith("ucpumapd: vd queues") and l.endswith(", pre-wake")
             for l in out.splitlines())
home = "conservation, way back:" in out and "audit: every frame came home" in out
dflt = sys.argv[5]
off_by_default = dflt.startswith("ucpumapd: vd queues") and not dflt.endswith(", pre-wake")
def replies(r):
    try:
        return json.loads(r)["replies"]
    except (ValueError, KeyError):
        return -1
n1, n2 = replies(sys.argv[6]), replies(sys.argv[7])
# A fresh start resolves its next hop at the first answer: one may go.
if sys.argv[3] == "0" and banner and pw > 0 and home and n1 == 40 and n2 == 40 and off_by_default:
    print(f"PASS: {sys.argv[2]}/prewake: --prewake on: ping {n1} and {n2} of 40, the worker pre-woken {pw} times by them in the tun's io_uring, every frame home; off by default with one worker")
else:
    print(f"FAIL: {sys.argv[2]}/prewake: exit {sys.argv[3]}, banner says pre-wake: {banner}, {pw} pre-wakes over the pings, ping {n1} and {n2} of 40, every frame home: {home}, default banner {dflt!r} (want no pre-wake)")
PY
	else
		bad prewake "ucpumapd --prewake on did not start: $(head -c 300 "$tmp/d.err")"
	fi
}

# ---- SIGTERM during a two-way transfer --------------------------------------------
# ---- a next hop the kernel knows: no first packet lost ---------------------------
case_neigh_known() {
	local r n nn ll rc
	own
	ip -n "$d" route del 10.204.0.1/32 2> /dev/null
	in_d python3 "$helper" ping --dst 10.204.0.1 --count 1 --timeout 3 > /dev/null
	if ! ip -n "$d" neigh show 10.204.0.1 dev vd | grep -q lladdr; then
		bad neigh-known "the kernel did not learn the peer: $(ip -n "$d" neigh show dev vd)"
		return
	fi
	# IPv6 on the new tun: its own multicast (MLD, router solicitation)
	# goes the way back as link_local, not no_neigh.
	if ! start --two-way --extended; then
		bad neigh-known "ucpumapd did not start: $(head -c 300 "$tmp/d.err")"
		return
	fi
	r=$(in_d python3 "$helper" ping --dst 10.204.0.1 --count 1 --timeout 3)
	sleep 1	# the tun's own router solicitations and reports
	stop
	rc=$?
	n=$(replies "$r")
	nn=$(back_sum "$tmp/d.out" no_neigh)
	ll=$(back_sum "$tmp/d.out" link_local)
	if [ "${n:-0}" = 1 ] && [ "${nn:-x}" = 0 ] && [ "${ll:-0}" -ge 1 ] && [ $rc = 0 ]; then
		ok neigh-known "the first ping answered, no_neigh 0: the next hop from the kernel's table; the tun's own link's $ll packets link_local"
	else
		bad neigh-known "replies ${n:-?} of 1, no_neigh ${nn:-none}, link_local ${ll:-none} (want 1 or more), exit $rc: $r"
	fi
}

# burst ADDR PORT LABEL: 8 datagrams sent at once from the DUT to ADDR:PORT,
# where a receiver in the generator's namespace writes what came, in the
# order it came, as the last line of $tmp/LABEL.res.
burst() {
	local rpid
	in_g python3 - "$tmp/$3.ready" "$1" "$2" > "$tmp/$3.res" 2>&1 <<'PY' &
import socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.bind((sys.argv[2], int(sys.argv[3])))
open(sys.argv[1], "w").close()
s.settimeout(3)
got = []
try:
    while len(got) < 8:
        got.append(int(s.recv(64).split()[-1]))
except socket.timeout:
    pass
print(" ".join(map(str, got)))
PY
	rpid=$!
	lib_pid $rpid
	wait_file "$tmp/$3.ready" 50
	in_d python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
for i in range(8):
    s.sendto(b"ucpumap burst %d" % i, (sys.argv[1], int(sys.argv[2])))' "$1" "$2"
	lib_wait $rpid
}

# burst_judge CASE WHAT RC: the burst's 8 all in order, no_neigh 0, held 1
# or more (the first always: a route is asked on a destination's first
# packet), a clean exit RC.
burst_judge() {
	local got nn held
	got=$(tail -1 "$tmp/$1.res" 2> /dev/null)
	nn=$(back_sum "$tmp/d.out" no_neigh)
	held=$(back_sum "$tmp/d.out" held)
	if [ "$got" = "0 1 2 3 4 5 6 7" ] && [ "${nn:-x}" = 0 ] && [ "${held:-0}" -ge 1 ] &&
		[ "$3" = 0 ]; then
		ok "$1" "8 datagrams $2, all in order; $held held, no_neigh 0"
	else
		bad "$1" "received [${got:-}] of 0..7, no_neigh ${nn:-none}, held ${held:-none}, exit $3"
	fi
}

# ---- the first packets wait for their next hop -----------------------------------
case_neigh_gateway() {
	local rc=
	own
	ip -n "$g" addr add 10.205.0.1/32 dev lo &&
		ip -n "$d" route add 10.205.0.0/24 via 10.204.0.1 dev vd metric 500 || {
		bad neigh-gateway "cannot add the address behind the gateway and its route"
		return
	}
	ip -n "$d" neigh flush dev vd
	if start --two-way --extended && ip -n "$d" route add 10.205.0.0/24 dev ucm2; then
		burst 10.205.0.1 4998 neigh-gateway
		stop
		rc=$?
	else
		bad neigh-gateway "ucpumapd did not start: $(head -c 300 "$tmp/d.err")"
	fi
	ip -n "$d" route del 10.205.0.0/24 via 10.204.0.1 dev vd 2> /dev/null
	ip -n "$g" addr del 10.205.0.1/32 dev lo 2> /dev/null
	[ -z "$rc" ] || burst_judge neigh-gateway "behind an unresolved gateway" $rc
}

# A solicitation asked for by netlink (no packet to take a source from)
# leaves from vd's link-local address, which a fresh veth has only once
# its DAD is done: until then the kernel sends none. Up to 3 s.
wait_link_local() {
	for _ in $(seq 60); do
		ip -n "$d" -6 addr show dev vd scope link | grep -q tentative || break
		sleep 0.05
	done
}

# An IPv4 route via an IPv6 gateway (RFC 5549: 'via inet6', RTA_VIA):
# the next hop is resolved by neighbour discovery. The peer answers ARP
# only for its interface's own addresses (arp_ignore 1), so asking ARP
# for the destination behind it would get no answer.
case_neigh_via6() {
	local rc=
	own
	ip -n "$g" addr add fd05::1/64 dev vg nodad &&
		ip -n "$d" addr add fd05::2/64 dev vd nodad &&
		ip -n "$g" addr add 10.206.0.1/32 dev lo &&
		in_g sysctl -qw net.ipv4.conf.vg.arp_ignore=1 || {
		bad neigh-via6 "cannot add the addresses"
		return
	}
	wait_link_local
	if ! ip -n "$d" route add 10.206.0.0/24 via inet6 fd05::1 dev vd metric 500; then
		skip neigh-via6 "this kernel takes no IPv4 route via an IPv6 gateway (Linux 5.2)"
	else
		ip -n "$d" neigh flush dev vd
		ip -n "$d" -6 neigh flush dev vd
		if start --two-way --extended && ip -n "$d" route add 10.206.0.0/24 dev ucm2; then
			burst 10.206.0.1 4996 neigh-via6
			stop
			rc=$?
		else
			bad neigh-via6 "ucpumapd did not start: $(head -c 300 "$tmp/d.err")"
		fi
		ip -n "$d" route del 10.206.0.0/24 via inet6 fd05::1 dev vd 2> /dev/null
	fi
	in_g sysctl -qw net.ipv4.conf.vg.arp_ignore=0
	ip -n "$g" addr del 10.206.0.1/32 dev lo 2> /dev/null
	ip -n "$g" addr del fd05::1/64 dev vg 2> /dev/null
	ip -n "$d" addr del fd05::2/64 dev vd 2> /dev/null
	[ -z "$rc" ] || burst_judge neigh-via6 "behind an IPv6 gateway of an IPv4 route" $rc
}

case_neigh_v6() {
	local rc=
	own
	ip -n "$g" addr add fd04::1/64 dev vg nodad &&
		ip -n "$d" addr add fd04::2/64 dev vd nodad || {
		bad neigh-v6 "cannot add the IPv6 addresses"
		return
	}
	wait_link_local
	ip -n "$d" -6 neigh flush dev vd
	if start --two-way --extended && ip -n "$d" -6 route add fd04::1/128 dev ucm2; then
		burst fd04::1 4997 neigh-v6
		stop
		rc=$?
	else
		bad neigh-v6 "ucpumapd did not start: $(head -c 300 "$tmp/d.err")"
	fi
	ip -n "$g" addr del fd04::1/64 dev vg 2> /dev/null
	ip -n "$d" addr del fd04::2/64 dev vd 2> /dev/null
	[ -z "$rc" ] || burst_judge neigh-v6 "over IPv6 to a neighbour not solicited yet" $rc
}

# ---- the limits of the wait: a destination's, a worker's, its time ---------------
case_neigh_limits() {
	local rc= r n nn held
	own
	# The peer known beforehand: the closing ping waits for nothing.
	ip -n "$d" route del 10.204.0.1/32 2> /dev/null
	in_d python3 "$helper" ping --dst 10.204.0.1 --count 1 --timeout 3 > /dev/null
	ip -n "$d" route add 10.206.0.0/24 via 10.204.0.99 dev vd metric 500 || {
		bad neigh-limits "cannot add the route through a gateway nobody is"
		return
	}
	if start --two-way --extended --cpus 1 && ip -n "$d" route add 10.206.0.0/24 dev ucm2; then
		# to_each FIRST LAST N: N datagrams to each of 10.206.0.FIRST..LAST
		to_each() {
			in_d python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for dst in range(int(sys.argv[1]), int(sys.argv[2]) + 1):
    for i in range(int(sys.argv[3])):
        s.sendto(b"ucpumap limits %d" % i, ("10.206.0.%d" % dst, 4996))' "$@"
		}
		to_each 1 1 12
		sleep 2.5	# past the wait's 1.2 s: the 8 held are gone
		to_each 2 6 8
		sleep 2.5
		r=$(in_d python3 "$helper" ping --dst 10.204.0.1 --count 3 --interval 0.1 --timeout 3)
		stop
		rc=$?
	else
		bad neigh-limits "ucpumapd did not start: $(head -c 300 "$tmp/d.err")"
	fi
	ip -n "$d" route del 10.206.0.0/24 via 10.204.0.99 dev vd 2> /dev/null
	[ -n "$rc" ] || return
	n=$(replies "$r")
	nn=$(back_sum "$tmp/d.out" no_neigh)
	held=$(back_sum "$tmp/d.out" held)
	if [ "${held:-x}" = 40 ] && [ "${nn:-x}" = 52 ] && [ "${n:-0}" = 3 ] && [ "$rc" = 0 ] &&
		grep -q "^audit: every frame came home" "$tmp/d.out"; then
		ok neigh-limits "52 datagrams to 6 destinations never resolved: $held held, $nn no_neigh; the peer's 3 pings answered, every frame home"
	else
		bad neigh-limits "held ${held:-none} (want 8 + 32), no_neigh ${nn:-none} (want 52), ping ${n:-?} of 3, exit $rc, audit: $(grep '^audit' "$tmp/d.out")"
	fi
}

# group_out TAG GROUP: 5 datagrams from the DUT to GROUP (IPv4 or IPv6),
# sent on the tun, read by a member of it on vg; $TAG.res, how many came.
group_out() {
	local rpid
	in_g python3 - "$tmp/$1.ready" "$2" > "$tmp/$1.res" 2>&1 <<'PY' &
import socket, struct, sys
g = sys.argv[2]
v6 = ":" in g
s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((g, 4999))
if v6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, socket.inet_pton(socket.AF_INET6, g)
                 + struct.pack("@I", socket.if_nametoindex("vg")))
else:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 struct.pack("4s4s", socket.inet_aton(g), socket.inet_aton("10.204.0.1")))
open(sys.argv[1], "w").close()
s.settimeout(3)
n = 0
try:
    while n < 5:
        if s.recv(2048) == b"ucpumap group %d" % n:
            n += 1
except socket.timeout:
    pass
print(n)
PY
	rpid=$!
	lib_pid $rpid
	wait_file "$tmp/$1.ready" 50
	in_d python3 - "$2" <<'PY'
import socket, struct, sys, time
g = sys.argv[1]
if ":" in g:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF,
                 struct.pack("@i", socket.if_nametoindex("ucm2")))
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    s.sendto(b"ucpumap group %d" % i, (g, 4999))
    time.sleep(0.05)
PY
	lib_wait $rpid
}

# Multicast routed into the tun goes out to its group's Ethernet address.
case_multicast_out() {
	local got got6 rc cpid macs
	own
	if ! start --two-way; then
		bad multicast-out "ucpumapd did not start: $(head -c 300 "$tmp/d.err")"
		return
	fi
	command -v tcpdump > /dev/null || { skip multicast-out "needs tcpdump (scripts/install-deps.sh)"; stop > /dev/null; return; }
	ip -n "$d" route add 239.1.2.3/32 dev ucm2
	# vg takes any group's frames: what they were sent to, on the wire.
	ip netns exec "$g" tcpdump -nn -e -l -i vg 'udp port 4999' > "$tmp/mc.cap" 2> "$tmp/mc.cap.err" &
	cpid=$!
	lib_pid "$cpid"
	wait_line "$tmp/mc.cap.err" "listening on" 50 "$cpid"
	group_out mc 239.1.2.3
	# IPv6: a group of global scope, out to 33:33 and its last 32 bits;
	# sent on the tun by name (the local table's ff00::/8 routes would
	# send it on vd).
	ip -n "$d" addr add fd06::2/64 dev ucm2 nodad
	group_out mc6 ff0e::1:3
	sleep 0.2
	stop_pid "$cpid"
	stop
	rc=$?
	ip -n "$d" route del 239.1.2.3/32 dev ucm2 2> /dev/null
	got=$(tail -1 "$tmp/mc.res")
	got6=$(tail -1 "$tmp/mc6.res")
	macs="$(grep -c '> 01:00:5e:01:02:03,' "$tmp/mc.cap") $(grep -c '> 33:33:00:01:00:03,' "$tmp/mc.cap")"
	if [ "$got" = 5 ] && [ "$got6" = 5 ] && [ "$macs" = "5 5" ] && [ $rc = 0 ]; then
		ok multicast-out "5 datagrams to 239.1.2.3 and 5 to ff0e::1:3 out through the way back to 01:00:5e:01:02:03 and 33:33:00:01:00:03, received by members behind vg"
	else
		bad multicast-out "${got:-0} of 5 to 239.1.2.3, ${got6:-0} of 5 to ff0e::1:3 received, frames to the groups' addresses on vg: $macs (want 5 5), exit $rc: $(tail -2 "$tmp/mc.res" "$tmp/mc6.res" | tr '\n' ' ')"
	fi
}

case_mtu_change() {
	local why= rc
	own
	if ! start --two-way; then
		bad mtu-change "ucpumapd did not start: $(head -c 300 "$tmp/d.err")"
		return
	fi
	ip -n "$d" link set vd mtu 1400
	wait_line "$tmp/d.err" "dp: vd's MTU is now 1400, below the tun ucm2's 1500: .*ip link set dev ucm2 mtu 1400" 20 ||
		why="no word of vd's MTU 1400;"
	ip -n "$d" link set vd mtu 1500
	wait_line "$tmp/d.err" "dp: vd's MTU is back to 1500, the start's" 20 || why="$why no word of it back to 1500;"
	# Raised within a frame: nothing to do, said; past it: said, a
	# restart to take it.
	ip -n "$d" link set vd mtu 3000
	wait_line "$tmp/d.err" "dp: vd's MTU is now 3000 \(1500 at the start\): its packets take no more frames" 20 ||
		why="$why no word of 3000;"
	if ip -n "$d" link set vd mtu 9000 2> /dev/null; then
		wait_line "$tmp/d.err" "dp: vd's MTU is now 9000 .*: its longer packets are dropped until a restart" 20 ||
			why="$why no word of 9000;"
	fi
	ip -n "$d" link set vd mtu 1500
	stop
	rc=$?
	[ "$rc" = 0 ] || why="$why exit $rc;"
	# Packets of several frames: raised past the start's frames, they
	# still come through (up to max_frags), said as such.
	if ip -n "$d" link set vd mtu 9000 2> /dev/null && ip -n "$g" link set vg mtu 9000 &&
	   start --two-way; then
		if ip -n "$d" link set vd mtu 16000 2> /dev/null; then
			wait_line "$tmp/d.err" "dp: vd's MTU is now 16000 \(9000 at the start\): its packets take up to 5 frames, 3 at the start; they come through" 20 ||
				why="$why no word of 16000 over 9000;"
		fi
		# Within max_frags' frames, but past 65535 bytes with its
		# Ethernet header: dropped, said so.
		if ip -n "$d" link set vd mtu 65535 2> /dev/null; then
			wait_line "$tmp/d.err" "dp: vd's MTU is now 65535 \(9000 at the start\): a packet of more than 18 frames \(max_frags\) or 65535 bytes is dropped" 20 ||
				why="$why no word of 65535 over 9000;"
		fi
		stop
		rc=$?
		[ "$rc" = 0 ] || why="$why exit $rc at 9000;"
	else
		why="$why no start at MTU 9000: $(head -c 200 "$tmp/d.err");"
	fi
	ip -n "$d" link set vd mtu 1500
	ip -n "$g" link set vg mtu 1500
	if [ -z "$why" ]; then
		ok mtu-change "each change said"
	else
		bad mtu-change "$why $(grep -h "MTU" "$tmp/d.err" | head -3 | tr '\n' ' ')"
	fi
}

case_mac_change() {
	local new=02:00:00:00:00:77 vmac why= cpid r n srcs rc
	command -v tcpdump > /dev/null || { skip mac-change "needs tcpdump (scripts/install-deps.sh)"; return; }
	own
	vmac=$(mac_of "$d" vd)
	if ! start --two-way; then
		bad mac-change "ucpumapd did not start: $(head -c 300 "$tmp/d.err")"
		return
	fi
	ip -n "$d" link set vd address $new
	wait_line "$tmp/d.err" "dp: vd's MAC is now $new: the way back's frames leave from it" 20 ||
		why="no word of the way back's new source;"
	ip -n "$g" neigh flush dev vg
	ip netns exec "$g" tcpdump -nn -e -l -i vg 'icmp and src host 10.204.0.2' \
		> "$tmp/mac.cap" 2> "$tmp/mac.cap.err" &
	cpid=$!
	lib_pid "$cpid"
	wait_line "$tmp/mac.cap.err" "listening on" 50 "$cpid" || why="$why tcpdump did not start;"
	r=$(in_d python3 "$helper" ping --dst 10.204.0.1 --count 10 --interval 0.05 --timeout 5)
	n=$(replies "$r")
	[ "${n:-0}" = 10 ] || why="$why ping out: $r;"
	r=$(in_g python3 "$helper" ping --dst 10.204.0.2 --count 10 --interval 0.05 --timeout 5)
	n=$(replies "$r")
	[ "${n:-0}" = 10 ] || why="$why ping in: $r;"
	sleep 0.2
	stop_pid "$cpid"
	# 10 echo requests and 10 replies from the DUT, each source once
	srcs=$(awk '{ print $2 }' "$tmp/mac.cap" | sort | uniq -c | tr -s ' \n' ' ')
	[ "$(grep -c " $new > " "$tmp/mac.cap")" -ge 20 ] && ! grep -v " $new > " "$tmp/mac.cap" | grep -q . ||
		why="$why vg saw the DUT's frames from: ${srcs:-none};"
	ip -n "$d" link set vd address "$vmac"
	stop
	rc=$?
	[ "$rc" = 0 ] || why="$why exit $rc;"
	if [ -z "$why" ]; then
		ok mac-change "said; 10 of 10 each way, all $(grep -c . "$tmp/mac.cap") frames vg saw from $new"
	else
		bad mac-change "$why $(grep -h "MAC" "$tmp/d.err" | head -3 | tr '\n' ' ')"
	fi
	ip -n "$g" neigh flush dev vg
}

case_sigterm() {
	local spid cpid running rc back fwd sent
	own
	if ! start --peer-mac "$gmac" --no-direct-bulk --metrics-listen 127.0.0.1:9443; then
		bad sigterm "ucpumapd did not restart: $(head -c 300 "$tmp/d.err")"
		kill -0 "$dpid" 2> /dev/null && stop > /dev/null
		return
	fi
	# A fixed next hop: nothing asked of the kernel, so no next-hop
	# families, the way back's there.
	in_d curl -s --max-time 5 http://127.0.0.1:9443/metrics > "$tmp/peer.metrics"
	if ! grep -q "^ucpumap_back_neigh_" "$tmp/peer.metrics" &&
		grep -q "^ucpumap_back_packets_total" "$tmp/peer.metrics"; then
		ok peer-mac-metrics "no next-hop families, the way back's there"
	else
		bad peer-mac-metrics "$(grep -c "^ucpumap_back_neigh_" "$tmp/peer.metrics") next-hop series (want 0), $(grep -c "^ucpumap_back_packets_total" "$tmp/peer.metrics") way-back ones (want 1 or more)"
	fi
	ip netns exec "$d" iperf3 -s -B 10.204.0.2 -1 > /dev/null 2>&1 &
	spid=$!
	lib_pid "$spid"
	sleep 0.5
	ip netns exec "$g" iperf3 -c 10.204.0.2 -t 10 --bidir > /dev/null 2>&1 &
	cpid=$!
	lib_pid "$cpid"
	sleep 1.5
	running=no
	kill -0 "$cpid" 2> /dev/null && running=yes	# the transfer is on when we stop
	stop
	rc=$?
	back=$(grep "^conservation, way back" "$tmp/d.out")
	fwd=$(sed -n 's/^conservation: received \([0-9]*\) .*/\1/p' "$tmp/d.out")
	sent=$(echo "$back" | sed -n 's/.* = sent \([0-9]*\) .*/\1/p')
	# 1.5 s of iperf3 both ways: thousands of packets each way
	if [ "$rc" -eq 0 ] && grep -q "^conservation: .*holds" "$tmp/d.out" &&
		echo "$back" | grep -q "holds" && grep -q "^audit: every frame came home" "$tmp/d.out" &&
		echo "$back" | grep -q "(0.0% straight into the cache)" && [ "$running" = yes ] &&
		[ "${fwd:-0}" -gt 1000 ] && [ "${sent:-0}" -gt 1000 ]; then
		ok "sigterm: exit 0 mid-transfer ($fwd in, $sent out), both directions conserved, every frame home (no-direct-bulk: 0% direct)"
	else
		bad sigterm "exit $rc, transfer running: $running, in ${fwd:-?}, out ${sent:-?}: $(grep -E '^(conservation|audit)' "$tmp/d.out") $(head -c 300 "$tmp/d.err")"
	fi
	kill "$cpid" "$spid" 2> /dev/null
	wait "$cpid" "$spid" 2> /dev/null
}

# ---- a tap, both ways: it is the DUT's interface on the link ---------------------
case_tap() {
	local vmac tmac r n rc ll
	own
	ip -n "$d" addr del 10.204.0.2/24 dev vd
	# vd's own stack must not answer ARP for the tap's address in its place.
	in_d sysctl -qw net.ipv4.conf.vd.arp_ignore=1
	ip -n "$g" neigh flush dev vg
	: > "$tmp/d.out"	# as in start(): no earlier banner to find
	: > "$tmp/d.err"
	ip netns exec "$d" "$BUILD/ucpumapd" --dev vd --tun ucmt2 --tap --two-way --interval 0 \
		--metrics-listen 127.0.0.1:9442 > "$tmp/d.out" 2> "$tmp/d.err" &
	dpid=$!
	lib_pid "$dpid"
	for _ in $(seq 200); do
		grep -q "^ucpumapd: vd queues" "$tmp/d.out" 2> /dev/null && break
		kill -0 "$dpid" 2> /dev/null || break
		sleep 0.05
	done
	if ! ip -n "$d" addr add 10.204.0.2/24 dev ucmt2; then
		bad tap-start "ucpumapd with a tap did not come up: $(head -c 300 "$tmp/d.err")"
	else
		vmac=$(mac_of "$d" vd)
		tmac=$(mac_of "$d" ucmt2)
		[ "$vmac" = "$tmac" ] && ok "tap-mac: the tap took vd's address" ||
			bad tap-mac "vd $vmac, tap $tmac"
		# Its IPv6 link-local address is made of vd's MAC (EUI-64), the
		# one the peers know the interface by.
		ll=$(python3 -c 'import sys; m = [int(x, 16) for x in sys.argv[1].split(":")]
print("fe80::%x:%x:%x:%x" % ((m[0] ^ 2) << 8 | m[1], m[2] << 8 | 0xff, 0xfe00 | m[3], m[4] << 8 | m[5]))' "$vmac")
		ip -n "$d" -6 addr show dev ucmt2 scope link | grep -q "inet6 $ll/64" &&
			ok tap-link-local "$ll, of vd's MAC" ||
			bad tap-link-local "want $ll: $(ip -n "$d" -6 addr show dev ucmt2 scope link | grep inet6)"
		r=$(in_g python3 "$helper" ping --dst 10.204.0.2 --count 10 --interval 0.1 --timeout 5)
		n=$(replies "$r")
		[ "${n:-0}" -ge 8 ] && ok "tap-ping-in: $n of 10 (ARP answered by the tap's stack)" ||
			bad tap-ping-in "$r"
		r=$(in_d python3 "$helper" ping --dst 10.204.0.1 --count 10 --interval 0.1 --timeout 5)
		n=$(replies "$r")
		[ "${n:-0}" -ge 8 ] && ok "tap-ping-out: $n of 10" || bad tap-ping-out "$r"
		file tap-file-in "$d" 10.204.0.2 "$g"
		file tap-file-out "$g" 10.204.0.1 "$d"
		# A tap's frames carry their own MAC: no next-hop families,
		# the way back's own there.
		in_d curl -s --max-time 5 http://127.0.0.1:9442/metrics > "$tmp/tap.metrics"
		if ! grep -q "^ucpumap_back_neigh_" "$tmp/tap.metrics" &&
			grep -q "^ucpumap_back_packets_total" "$tmp/tap.metrics"; then
			ok tap-metrics "no next-hop families, the way back's there"
		else
			bad tap-metrics "$(grep -c "^ucpumap_back_neigh_" "$tmp/tap.metrics") next-hop series (want 0), $(grep -c "^ucpumap_back_packets_total" "$tmp/tap.metrics") way-back ones (want 1 or more)"
		fi
		# vd's address changed under it: the peers still send to the
		# tap's (which answered their ARP), and the program follows
		# the tap's, not vd's.
		ip -n "$d" link set vd address 02:00:00:00:00:77
		sleep 0.5
		r=$(in_g python3 "$helper" ping --dst 10.204.0.2 --count 10 --interval 0.1 --timeout 5)
		n=$(replies "$r")
		ip -n "$d" link set vd address "$vmac"
		[ "${n:-0}" -ge 8 ] && ok "tap-iface-mac-change: $n of 10 to the tap's address after vd's changed" ||
			bad tap-iface-mac-change "$r"
		stop
		rc=$?
		if [ "$rc" -eq 0 ] && grep -q "^conservation: .*holds" "$tmp/d.out" &&
			grep -q "^conservation, way back: .*holds" "$tmp/d.out" &&
			grep -q "^audit: every frame came home" "$tmp/d.out"; then
			ok "tap-clean-stop: exit 0, both directions conserved, every frame home"
		else
			bad tap-clean-stop "exit $rc: $(grep -E '^(conservation|audit)' "$tmp/d.out") $(head -c 300 "$tmp/d.err")"
		fi
	fi
}

# ---- bad flags ----------------------------------------------------------------------
badflag() {	# tag, expected message, flags...
	local tag=$1 msg=$2 rc
	shift 2
	in_d timeout 10 "$BUILD/ucpumapd" --dev vd --tun ucm2 "$@" > "$tmp/b.out" 2>&1
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q -- "$msg" "$tmp/b.out" &&
		! ip -n "$d" link show vd | grep -q xdp && ! ip -n "$d" link show ucm2 > /dev/null 2>&1; then
		ok "bad-flags/$tag"
	else
		bad "bad-flags/$tag" "exit $rc: $(head -c 300 "$tmp/b.out")"
	fi
}
# The page's commands: the EX block after "Everything, in this order", its
# groff escapes undone, continuation lines joined, one command a line.
man_cmds() {
	awk '/^Everything, in this order/ { on = 1 } on && /^\.EX/ { ex = 1; next }
		ex && /^\.EE/ { exit } ex { print }' man/ucpumapd.8 |
		sed -e 's/\\-/-/g' -e 's/\\e/\\/g' | sed -e ':a' -e '/\\$/N; s/\\\n */ /; ta' |
		sed -e "s|eth0|vd|g" -e "s|192\.0\.2\.1|10.204.0.1|g" \
			-e "s|/var/log/ucpumapd.json|$tmp/man.json|g" -e "s|^ucpumapd |$BUILD/ucpumapd |"
}
man_start() {	# the page's first command (its "&" ours), up when it printed its start line
	local c=${1% &}
	# exec: $dpid is the daemon.
	ip netns exec "$d" bash -c "exec $c" > "$tmp/man.out" 2> "$tmp/man.err" &
	dpid=$!
	lib_pid "$dpid"
	for _ in $(seq 200); do
		grep -q "^ucpumapd: vd queues" "$tmp/man.out" 2> /dev/null && return 0
		kill -0 "$dpid" 2> /dev/null || return 1
		sleep 0.05
	done
	return 1
}
case_man_example() {
	local cmds first line why=
	own
	mapfile -t cmds < <(man_cmds)
	first=${cmds[0]:-}
	if [ ${#cmds[@]} -lt 3 ] || [[ "$first" != *"--two-way"*"--keep-tun"*"&" ]]; then
		bad man-example "the page's example is not three commands, the first --two-way --keep-tun in the background: $(printf '%s; ' "${cmds[@]}")"
		return
	fi
	echo "# the page's commands: $(printf '%s; ' "${cmds[@]}")"
	if ! man_start "$first"; then
		bad man-example "$first: $(head -c 300 "$tmp/man.err")"
		return
	fi
	for line in "${cmds[@]:1}"; do
		in_d bash -c "$line" > /dev/null 2>> "$tmp/man.cmd.err" || why="$why '$line' failed;"
	done
	if [ -n "$why" ]; then
		bad man-example "$why $(head -c 200 "$tmp/man.cmd.err")"
	else
		iperf man-example-in "$d" 10.204.0.2 "$g"
		iperf man-example-out "$g" 10.204.0.1 "$d"
	fi
	kill -9 "$dpid"
	lib_wait "$dpid" 2> /dev/null
	dpid=
	ip -n "$d" route show 10.204.0.1/32 dev ucm0 2> /dev/null | grep -q . ||
		why="$why after SIGKILL the route into ucm0 is gone;"
	if [ -n "$why" ]; then
		bad man-example-restart "$why"
	elif man_start "$first"; then
		file man-example-restart "$g" 10.204.0.1 "$d"
		stop
	else
		bad man-example-restart "the page's first command again: $(head -c 300 "$tmp/man.err")"
	fi
	ip -n "$d" link del ucm0 2> /dev/null
}

case_bad_flags() {
	own
	badflag peer-mac-syntax "is not a MAC address" --peer-mac 02:00:00:00:01
	badflag peer-mac-tap "--peer-mac is for a tun" --peer-mac "$gmac" --tap
	badflag peer-mac-pass "--pass has no workers" --peer-mac "$gmac" --pass
	badflag spin-too-long "--spin-us: '1001' is not a whole number between 0 and 1000" --two-way --spin-us 1001
	badflag prewake-pass "prewake on: --pass has no workers" --pass --prewake on
	badflag no-offload-one-way "--no-offload is about the way back" --no-offload
	badflag no-tx-csum-one-way "--no-tx-csum is about the way back.*: add --two-way, or drop --no-tx-csum" --no-tx-csum
	badflag no-tx-csum-no-offload "--no-offload computes every checksum already; drop one of them" \
		--two-way --no-offload --no-tx-csum
}

lib_run_cases "$@"
