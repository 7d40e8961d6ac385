#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Jumbo frames in (multi-buffer AF_XDP): ucpumapd one-way on a veth pair
# with MTU 9000 on both ends, a packet of up to three 4096-byte frames
# (issue 35). Root, its own namespaces, bounded in time; its namespaces,
# daemons and helpers go on every exit.
#
#   start          ucpumapd starts on vd at MTU 9000 and says it takes
#                  packets of several frames, and the frames per queue a
#                  worker ring of them needs; its tun's MTU is vd's
#   udp4           50 datagrams each of 1472, 4000 and 8972 bytes (one,
#                  two, three frames) through the daemon, each once and
#                  intact
#   udp6           the same over IPv6 (1452, 3980, 8952)
#   tcp            20 MB over TCP into the DUT through the daemon (its
#                  segments up to 8948 bytes), sha256-exact
#   load           a mixed flood of the sizes for 2 s
#   stop           the run's end: conservation holds, every frame home,
#                  packets of several frames counted (rx_chains), no drops
#   two-way        refused at MTU 9000 with the reason and the fix, exit
#                  78 (the configuration's), nothing attached
#   frames-given   --frames 8192, too few for a worker ring of packets of
#                  three frames: refused naming the number, exit 78
#   frame-2048     --frame-size 2048 (five frames for 8972 bytes):
#                  datagrams intact, every frame home
#   gen-packet     ucpumap-gen's packet engine (an AF_PACKET socket):
#                  300 frames of 9014 bytes arrive at a socket behind vd,
#                  8972-byte datagrams whose checksums the stack took
#   gen-size-live  a frame past a page with the live engine: a message
#                  naming --engine packet, exit 2
#   cleanup        nothing left in the namespaces
set -u
BUILD=${BUILD:-build}
name=test-jumbo
cases="start udp4 udp6 tcp load stop two-way frames-given frame-2048 gen-packet gen-size-live cleanup"
daemon=$BUILD/ucpumapd
gen=ucm-jg-$$
dut=ucm-jd-$$
tun=ucmj$$
G4=10.89.0.1 D4=10.89.0.2 G6=fd89::1 D6=fd89::2
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/net/daemon.sh

setup() {
	daemon_veth $G4 $D4
	if ! { ip -n "$gen" link set vg mtu 9000 && ip -n "$dut" link set vd mtu 9000 &&
		ip -n "$gen" addr add $G6/64 dev vg nodad &&
		ip -n "$dut" addr add $D6/64 dev vd nodad; } 2> "$tmp/mtu.err"; then
		bad setup "MTU 9000 on veth: $(head -2 "$tmp/mtu.err" | tr '\n' ' ')"
		exit 0
	fi
	if ! kernel_at_least 6 6; then
		skip all "multi-buffer AF_XDP (XDP_USE_SG) needs Linux 6.6, this is $(uname -r)"
		exit 0
	fi
}

# start_daemon LABEL ARGS...: ucpumapd on vd, one-way; $dpid, $D_OUT, $D_ERR.
start_daemon() {
	D_OUT=$tmp/$1.out
	D_ERR=$tmp/$1.err
	shift
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun --interval 0 "$@" \
		> "$D_OUT" 2> "$D_ERR" &
	dpid=$!
	lib_pid $dpid
	wait_line "$D_OUT" '^ucpumapd: ' 50 "$dpid"
}

stop_daemon() {
	stop_pid "$dpid" 50
}

# exact PATH LABEL: 50 datagrams of each of PATH's sizes, each once and
# intact: empty, else what went wrong.
exact() {
	local r e g m du co rpid
	ip netns exec "$dut" "$PY" "$helper" exact-recv --paths "$1" --count 50 \
		--ready "$tmp/r-$2" --stop "$tmp/s-$2" --out "$tmp/res-$2" --timeout 20 \
		> "$tmp/recv-$2.log" 2>&1 &
	rpid=$!
	lib_pid $rpid
	wait_file "$tmp/r-$2" 50 &&
		lib_run ip netns exec "$gen" "$PY" "$helper" exact-send --paths "$1" --count 50 \
			--rate 2000 --v4 $D4 --src4 $G4 --v6 $D6 --src6 $G6 > "$tmp/send-$2.log" 2>&1
	sleep 0.3
	touch "$tmp/s-$2"
	wait_file "$tmp/res-$2" 50
	stop_pid "$rpid"
	r=$(jget "$tmp/res-$2" "'%d %d %d %d %d' % tuple(d['paths']['$1'][k] for k in ('expected', 'received', 'missing', 'duplicated', 'corrupt'))")
	read -r e g m du co <<< "${r:-0 0 0 0 0}"
	if [ "$e" = 0 ] || [ "$g" != "$e" ] || [ "$m" != 0 ] || [ "$du" != 0 ] || [ "$co" != 0 ]; then
		echo "expected $e datagrams, received $g (missing $m, duplicated $du, corrupt $co): $(jget "$tmp/res-$2" "d['paths']['$1']['problems']")"
	fi
}

case_start() {
	local mtu
	if ! start_daemon main --duration 60 --stats-json "$tmp/main.json"; then
		bad start "ucpumapd did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return
	fi
	ip -n "$dut" link set $tun up
	mtu=$(ip -n "$dut" -o link show $tun | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
	if ! grep -q "packets of up to 3 frames (multi-buffer AF_XDP)" "$D_ERR"; then
		bad start "no word of multi-buffer: $(tail -3 "$D_ERR" | tr '\n' ' ')"
	elif ! grep -q "16384 frames per queue: a worker ring of packets of up to 3 frames" "$D_ERR"; then
		bad start "no word of the frames per queue: $(grep -i frames "$D_ERR" | tr '\n' ' ')"
	elif [ "$mtu" != 9000 ]; then
		bad start "the tun's MTU is ${mtu:-unknown}, not vd's 9000"
	else
		ok start "$(grep 'multi-buffer' "$D_ERR")"
	fi
}

case_udp4() {
	local why
	lib_need start
	[ -n "$dpid" ] || { bad udp4 "no daemon"; return; }
	why=$(exact jumbo4 u4)
	[ -z "$why" ] && ok udp4 "150 datagrams of 1472, 4000, 8972 bytes" || bad udp4 "$why"
}

case_udp6() {
	local why
	lib_need start
	[ -n "$dpid" ] || { bad udp6 "no daemon"; return; }
	why=$(exact jumbo6 u6)
	[ -z "$why" ] && ok udp6 "150 datagrams of 1452, 3980, 8952 bytes" || bad udp6 "$why"
}

case_tcp() {
	local spid want got err
	lib_need start
	[ -n "$dpid" ] || { bad tcp "no daemon"; return; }
	head -c 20000000 /dev/urandom > "$tmp/blob"
	want=$(sha256sum < "$tmp/blob" | cut -d' ' -f1)
	ip netns exec "$dut" "$PY" "$helper" tcp-server --addr $D4 --port 5009 \
		--ready "$tmp/tr" --out "$tmp/tres" --timeout 20 > "$tmp/tsrv.log" 2>&1 &
	spid=$!
	lib_pid $spid
	wait_file "$tmp/tr" 50 &&
		lib_run ip netns exec "$gen" "$PY" "$helper" tcp-client --addr $D4 --port 5009 \
			--file "$tmp/blob" --timeout 20 > "$tmp/tcli.log" 2>&1
	wait_file "$tmp/tres" 100
	stop_pid "$spid"
	got=$(jget "$tmp/tres" "d['sha256']")
	err=$(jget "$tmp/tres" "d['error']")
	if [ "$got" = "$want" ]; then
		ok tcp "20 MB sha256-exact, $(jget "$tmp/tcli.log" "d['seconds']") s"
	else
		bad tcp "sha256 ${got:-none} of $(jget "$tmp/tres" "d['bytes']") bytes, want $want (error: $err; client: $(tail -1 "$tmp/tcli.log"))"
	fi
}

case_load() {
	local fp
	lib_need start
	[ -n "$dpid" ] || { bad load "no daemon"; return; }
	# Paced near what this machine's copy path takes: a flood would only
	# measure the kernel's ring-full drops, which stop accounts for.
	ip netns exec "$gen" "$PY" "$helper" exact-send --paths jumbo4,jumbo6 --count 3000 \
		--rate 30000 --v4 $D4 --src4 $G4 --v6 $D6 --src6 $G6 > "$tmp/load.log" 2>&1 &
	fp=$!
	lib_pid $fp
	lib_wait $fp
	if [ "$(jget "$tmp/load.log" "d['sent']")" = 18000 ]; then
		ok load "18000 datagrams of six sizes"
	else
		bad load "the generator: $(tail -2 "$tmp/load.log" | tr '\n' ' ')"
	fi
}

case_stop() {
	local why chains
	lib_need start udp4 udp6 tcp load
	[ -n "$dpid" ] || { bad stop "no daemon"; return; }
	ip netns exec "$dut" kill -USR1 "$dpid" 2> /dev/null
	sleep 0.5
	stop_daemon
	why=$(closing_lines "$D_OUT")
	tail -1 "$tmp/main.json" > "$tmp/last.json" 2> /dev/null
	chains=$(jget "$tmp/last.json" "d['rx_chains']")
	# udp4 and udp6 alone sent 200 datagrams of two or three frames.
	if [ -n "$why" ]; then
		bad stop "$why"
	elif grep -q '^conservation: .*chain [1-9]' "$D_OUT"; then
		bad stop "packets of several frames dropped: $(grep '^conservation' "$D_OUT")"
	elif [ "${chains:-0}" -lt 200 ]; then
		bad stop "rx_chains ${chains:-none} in the last JSON line, want at least 200"
	else
		ok stop "rx_chains $chains; $(grep '^conservation' "$D_OUT")"
	fi
}

case_two_way() {
	local rc attached
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun ${tun}b --two-way \
		--duration 2 > "$tmp/tw.out" 2> "$tmp/tw.err"
	rc=$?
	attached=$(ip -n "$dut" -d link show vd | grep -c 'prog/xdp')
	if [ "$rc" = 78 ] && grep -q "MTU 9000 is more than a 4096-byte frame holds .* the way back sends packets of one frame only: lower it (ip link set dev vd mtu 3818)" "$tmp/tw.err" &&
		[ "$attached" = 0 ] && ! ip -n "$dut" link show ${tun}b > /dev/null 2>&1; then
		ok two-way "$(grep 'MTU 9000' "$tmp/tw.err" | head -1)"
	else
		bad two-way "status $rc, XDP attached $attached: $(tail -2 "$tmp/tw.err" | tr '\n' ' ')"
	fi
}

case_frames_given() {
	local rc
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun ${tun}c --frames 8192 \
		--duration 2 > "$tmp/fg.out" 2> "$tmp/fg.err"
	rc=$?
	if [ "$rc" = 78 ] && grep -q "8192 frames per queue cannot cover the rings and a worker ring of packets of up to 3 frames (vd's MTU 9000): give at least 9216" "$tmp/fg.err" &&
		! ip -n "$dut" -d link show vd | grep -q 'prog/xdp'; then
		ok frames-given "$(grep 'cannot cover' "$tmp/fg.err")"
	else
		bad frames-given "status $rc: $(tail -2 "$tmp/fg.err" | tr '\n' ' ')"
	fi
}

case_frame_2048() {
	local why
	lib_need stop
	if ! start_daemon f2k --duration 30 --frame-size 2048; then
		bad frame-2048 "ucpumapd did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return
	fi
	ip -n "$dut" link set $tun up
	why=$(exact jumbo4 f2k)
	stop_daemon
	[ -z "$why" ] && why=$(closing_lines "$D_OUT")
	if [ -n "$why" ]; then
		bad frame-2048 "$why"
	elif ! grep -q "packets of up to 6 frames" "$D_ERR"; then
		bad frame-2048 "no word of 6 frames: $(grep multi-buffer "$D_ERR")"
	else
		ok frame-2048 "150 datagrams in 2048-byte frames; $(grep '^conservation' "$D_OUT")"
	fi
}

case_gen_packet() {
	local rpid got
	lib_need frame-2048	# no daemon on vd now: the stack receives
	ip netns exec "$dut" "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)
s.bind(("'$D4'", 7400)); s.settimeout(3); open(sys.argv[1], "w").close()
n = 0
try:
    while True:
        n += len(s.recv(65535)) == 8972
except socket.timeout:
    pass
print(n)' "$tmp/gp-ready" > "$tmp/gp.out" 2>&1 &
	rpid=$!
	lib_pid $rpid
	wait_file "$tmp/gp-ready" 50 &&
		lib_run ip netns exec "$gen" timeout 20 "$BUILD/ucpumap-gen" --dev vg --engine packet \
			--size 9014 --dst-ip $D4 --dst-port 7400 --count 300 --rate 3000 --flows 4 \
			> "$tmp/gp-gen.out" 2>&1
	lib_wait $rpid
	got=$(tail -1 "$tmp/gp.out")
	if [ "$got" = 300 ] && grep -q "packet engine" "$tmp/gp-gen.out"; then
		ok gen-packet "300 frames of 9014 bytes, $(grep '^total' "$tmp/gp-gen.out")"
	else
		bad gen-packet "received ${got:-nothing} of 300: $(tail -2 "$tmp/gp-gen.out" | tr '\n' ' ')"
	fi
}

case_gen_size_live() {
	local rc
	lib_run ip netns exec "$gen" timeout 10 "$BUILD/ucpumap-gen" --dev vg --size 5000 \
		--dst-ip $D4 --count 1 > "$tmp/gl.out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q "give --engine packet for larger ones" "$tmp/gl.out"; then
		ok gen-size-live "$(head -1 "$tmp/gl.out")"
	else
		bad gen-size-live "status $rc: $(head -2 "$tmp/gl.out" | tr '\n' ' ')"
	fi
}

case_cleanup() {
	local left
	lib_need stop two-way frame-2048
	left=$(left_in "$dut" vd)
	[ -z "$left" ] && ok cleanup || bad cleanup "left in $dut: $left"
}

lib_run_cases "$@"
