#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The examples (examples/*.c) as an application author gets them: the
# library installed into a staging tree, each example built from its one
# .c file with `pkg-config --cflags --libs libucpumap` only, then run on a
# veth pair between two namespaces with ucpumap-gen's traffic, checked to
# the packet:
#
#   build      all four build against the staged install
#   readme-program  the README's complete program builds the same way
#   forward    N datagrams to a socket behind the tun: all N arrive, it
#              exits 0 saying every frame came home
#   filter     N to port 9000 and M to 9001, 9001 dropped by its verdict
#              callback: it counts exactly M dropped, the socket gets N,
#              and nothing reached port 9001
#   pcap       N datagrams into its own sink: the file tcpdump reads back
#              holds all N, the count it printed
#   echo       N requests to UDP port 7, each answered exactly (same bytes,
#              from port 7) through XSK TX by its verdict callback
#   echo-fragment  a request in two fragments: neither answered nor counted
#              answered; a whole one after it is
#   echo-jumbo the same at MTU 9000: requests of 1472, 4000 and 8972 bytes
#              (one, two, three frames), each answered exactly, a packet
#              of several frames sent back as one
#   tun-gone   filter's tun deleted under it: it stops by itself (within
#              10 s), saying why (ucm_dp__check()), and exits 1
#   nothing-left   after them, no XDP program and no device but vd
#
# Every case but build needs build's staged install (the case runs it
# first); the examples run on one veth pair, made at the first that needs
# it. Root (namespaces, XDP, tun). One PASS/FAIL/SKIP line per case; the
# namespaces and every process started here go on exit.
set -u
BUILD=${BUILD:-build}
name=test-examples
cases="build readme-program forward filter pcap pcap-jumbo echo echo-fragment echo-jumbo tun-gone nothing-left"
cd "$(dirname "$0")/../.."
. tests/lib.sh
g=ucmxg$$
d=ucmxd$$

setup() {
	skip_unless_root "namespaces, XDP, tun"
	plain_build_only "a sanitizer build's library needs its runtime in the program"
	for t in pkg-config tcpdump; do
		command -v $t > /dev/null || { echo "SKIP: $name: needs $t (scripts/install-deps.sh)"; exit 0; }
	done
	[ -x "$BUILD/ucpumap-gen" ] || { bad build "$BUILD/ucpumap-gen is not built (make)"; exit 0; }
}

# ---- build ---------------------------------------------------------------------
stage=$tmp/stage
case_build() {
	if ! make -s install PREFIX=/usr DESTDIR="$stage" > "$tmp/install.log" 2>&1; then
		bad build "make install: $(tail -3 "$tmp/install.log")"
		exit 0
	fi
	if PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage/usr/lib/pkgconfig" \
		make -s -C examples O="$tmp" CFLAGS="-O2 -Werror" > "$tmp/build.log" 2>&1; then
		ok build "forward, filter, pcap, echo built with pkg-config against the staged install"
	else
		bad build "$(tail -5 "$tmp/build.log")"
		exit 0
	fi
	export LD_LIBRARY_PATH="$stage/usr/lib"
}

# The README's complete program ("Using the library"), as it stands there.
case_readme_program() {
	lib_need build
	sed -n '/^## Using the library/,/^## /p' README.md | sed -n '/^```c$/,/^```$/p' |
		sed '1d;/^```$/,$d' > "$tmp/readme.c"
	if [ -s "$tmp/readme.c" ] && grep -q 'int main' "$tmp/readme.c" &&
		PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage/usr/lib/pkgconfig" \
		sh -c 'cc -O2 -Wall -Werror -o "$1/readme" "$1/readme.c" $(pkg-config --cflags --libs libucpumap) -lpthread' \
		_ "$tmp" > "$tmp/readme.log" 2>&1; then
		ok readme-program "the README's forwarder builds with pkg-config only"
	else
		bad readme-program "$(head -5 "$tmp/readme.log") ($(wc -l < "$tmp/readme.c") lines taken from README.md)"
	fi
}

# The veth pair the examples run on.
pair() {
	veth_pair "$g" "$d" vg vd 10.205.0.1/24 10.205.0.2/24 &&
		ip netns exec "$d" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 || {
		bad setup "cannot build the namespaces"
		exit 0
	}
}

# An example's case: the build, then the pair.
needs() {
	lib_need build
	lib_once pair
}

# A bound socket on 9000 that reads nothing until told (then drains): the
# kernel counts what reached it as Udp InDatagrams + RcvbufErrors.
sink_start() {
	rm -f "$tmp/drain" "$tmp/drain.bound" "$tmp/drain.done"
	ip netns exec "$d" "$PY" - "$tmp/drain" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("10.205.0.2", 9000))
open(sys.argv[1] + ".bound", "w").close()
for _ in range(600):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.1)
s.setblocking(False)
try:
    while True:
        s.recv(2048)
except BlockingIOError:
    pass
open(sys.argv[1] + ".done", "w").close()
PY
	spid=$!
	lib_pid $spid
	wait_file "$tmp/drain.bound" 50
}
sink_stop() {
	touch "$tmp/drain"
	wait_file "$tmp/drain.done" 50
	stop_pid $spid
}
snmp() {	# Udp counter $1 in the DUT namespace
	ip netns exec "$d" awk -v f="$1" '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 }
		else print $c[f] }' /proc/net/snmp
}
udp_in() { echo $(($(snmp InDatagrams) + $(snmp RcvbufErrors))); }

send() {	# count port: paced, 16 flows; prints what the generator sent
	ip netns exec "$g" "$BUILD/ucpumap-gen" --dev vg --dst-ip 10.205.0.2 --dst-port "$2" \
		--count "$1" --rate 20000 > "$tmp/gen" 2> "$tmp/gen.err"
	awk '/^total:/ { print $2 }' "$tmp/gen"
}

# run EXAMPLE ARGS...: started in the DUT, up when it printed its first line
run() {
	ip netns exec "$d" "$tmp/$1" "${@:2}" > "$tmp/$1.out" 2> "$tmp/$1.err" &
	xpid=$!
	lib_pid $xpid
	if ! wait_line "$tmp/$1.out" "^$1: " 100 $xpid; then
		bad "$1" "did not start: $(tail -3 "$tmp/$1.err")"
		stop_pid $xpid
		return 1
	fi
	ip netns exec "$d" sysctl -qw net.ipv4.conf.ucmx0.rp_filter=0 2> /dev/null
	return 0
}
finish() {	# SIGTERM; the example's exit status (SIGKILL after 5 s: a failure)
	kill -TERM $xpid
	for _ in $(seq 50); do kill -0 $xpid 2> /dev/null || break; sleep 0.1; done
	kill -9 $xpid 2> /dev/null
	lib_wait $xpid
}

# ---- forward ---------------------------------------------------------------------
case_forward() {
	local before sent got fwd rc
	needs
	sink_start
	before=$(udp_in)
	if run forward vd ucmx0; then
		sent=$(send 5000 9000)
		sleep 0.5
		finish
		rc=$?
		sink_stop
		got=$(($(udp_in) - before))
		# Through the tun, not around it: what it delivered counts them.
		fwd=$(sed -n 's/^forward: received [0-9]*, delivered \([0-9]*\),.*/\1/p' "$tmp/forward.out")
		if [ "$rc" = 0 ] && [ "${sent:-0}" = 5000 ] && [ "$got" = 5000 ] && [ "${fwd:-0}" -ge 5000 ] &&
			grep -q "every frame came home" "$tmp/forward.out"; then
			ok forward "5000 sent, 5000 at the socket; $(tail -1 "$tmp/forward.out")"
		else
			bad forward "exit $rc, sent ${sent:-?}, $got at the socket: $(tail -1 "$tmp/forward.out") $(tail -2 "$tmp/forward.err")"
		fi
	else
		sink_stop
	fi
}

# ---- filter ----------------------------------------------------------------------
case_filter() {
	local before noports pass drop rc got np
	needs
	sink_start
	before=$(udp_in)
	noports=$(snmp NoPorts)
	if run filter vd ucmx0 9001; then
		pass=$(send 3000 9000)
		drop=$(send 2000 9001)
		sleep 0.5
		finish
		rc=$?
		sink_stop
		got=$(($(udp_in) - before))
		np=$(($(snmp NoPorts) - noports))
		if [ "$rc" = 0 ] && [ "${pass:-0}" = 3000 ] && [ "${drop:-0}" = 2000 ] && [ "$got" = 3000 ] &&
			[ "$np" = 0 ] && grep -q "^filter: dropped 2000 to port 9001," "$tmp/filter.out"; then
			ok filter "3000 to 9000 at the socket, 2000 to 9001 dropped by the verdict and counted"
		else
			bad filter "exit $rc, sent ${pass:-?}/${drop:-?}, $got at the socket, $np to no port: $(tail -1 "$tmp/filter.out") $(tail -2 "$tmp/filter.err")"
		fi
	else
		sink_stop
	fi
}

# ---- pcap ------------------------------------------------------------------------
case_pcap() {
	local sent rc wrote read_back all
	needs
	run pcap vd "$tmp/cap.pcap" || return
	sent=$(send 1000 9000)
	sleep 0.5
	finish
	rc=$?
	wrote=$(sed -n 's/^pcap: wrote \([0-9]*\) packets.*/\1/p' "$tmp/pcap.out")
	read_back=$(tcpdump -nn -r "$tmp/cap.pcap" 'udp and dst port 9000' 2> /dev/null | wc -l)
	all=$(tcpdump -nn -r "$tmp/cap.pcap" 2> /dev/null | wc -l)
	if [ "$rc" = 0 ] && [ "${sent:-0}" = 1000 ] && [ "$read_back" = 1000 ] && [ "${wrote:-x}" = "$all" ]; then
		ok pcap "1000 sent, tcpdump reads 1000 back ($wrote packets in the file)"
	else
		bad pcap "exit $rc, sent ${sent:-?}, tcpdump reads $read_back to port 9000 and $all in all, it says it wrote ${wrote:-?}: $(tail -2 "$tmp/pcap.err")"
	fi
}

# At MTU 9000 a datagram spans frames (multi-buffer, on by itself): the
# file holds each whole, its bytes from every frame, exactly as sent.
case_pcap_jumbo() {
	local rc got
	needs
	if ! kernel_at_least 6 6; then
		skip pcap-jumbo "multi-buffer AF_XDP needs Linux 6.6, this is $(uname -r)"
		return
	fi
	if ! { ip -n "$g" link set vg mtu 9000 && ip -n "$d" link set vd mtu 9000; } 2> "$tmp/mtu.err"; then
		bad pcap-jumbo "MTU 9000 on veth: $(head -1 "$tmp/mtu.err")"
		return
	fi
	if run pcap vd "$tmp/jumbo.pcap"; then
		ip netns exec "$g" "$PY" - <<'PY' > "$tmp/jsend" 2>&1
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(50):
    n = (1472, 4000, 8972)[i % 3]
    s.sendto(bytes((i + k) % 251 for k in range(n)), ("10.205.0.2", 9000))
    time.sleep(0.002)
print("sent 50")
PY
		sleep 0.5
		finish
		rc=$?
		got=$("$PY" - "$tmp/jumbo.pcap" <<'PY' 2>&1
import struct, sys
b = open(sys.argv[1], "rb").read()
off, good, bad = 24, 0, 0
while off + 16 <= len(b):
    _, _, incl, orig = struct.unpack_from("<IIII", b, off)
    p = b[off + 16:off + 16 + incl]
    off += 16 + incl
    if len(p) < 42 or p[12:14] != b"\x08\x00" or p[23] != 17 or p[36:38] != b"\x23\x28":
        continue
    data = p[42:]
    i = (data[0] - 0) % 251 if data else -1
    n = (1472, 4000, 8972)[i % 3] if i >= 0 else -1
    ok = incl == orig and len(data) == n and data == bytes((i + k) % 251 for k in range(n))
    good += ok
    bad += not ok
print(good, bad)
PY
)
		if [ "$rc" = 0 ] && [ "$got" = "50 0" ]; then
			ok pcap-jumbo "50 datagrams of 1472, 4000 and 8972 bytes, each in the file exactly"
		else
			bad pcap-jumbo "exit $rc; exact, not: ${got:-?}; $(cat "$tmp/jsend"; tail -2 "$tmp/pcap.err")"
		fi
	fi
	ip -n "$g" link set vg mtu 1500
	ip -n "$d" link set vd mtu 1500
}

# ---- echo ------------------------------------------------------------------------
# echo_exact CASE N SIZES PORT: the echo example on vd, N requests to port 7
# from PORT, their sizes SIZES (a comma list) in turn, each answered
# exactly (the same bytes, from port 7), and the example's own count.
echo_exact() {
	local rc answered sent good
	run echo vd || return
	ip netns exec "$g" "$PY" - "$2" "$3" "$4" > "$tmp/$1.res" 2>&1 <<'PY'
import socket, sys
n, sizes, port = int(sys.argv[1]), [int(x) for x in sys.argv[2].split(",")], int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.205.0.1", port))
s.settimeout(2)
good = 0
for i in range(n):
    msg = (b"ucpumap echo %05d " % i * 600)[:sizes[i % len(sizes)]]
    s.sendto(msg, ("10.205.0.2", 7))
    try:
        data, peer = s.recvfrom(9000)
    except socket.timeout:
        continue
    good += data == msg and peer == ("10.205.0.2", 7)
print(good)
PY
	finish
	rc=$?
	answered=$(sed -n 's/^echo: answered \([0-9]*\),.*/\1/p' "$tmp/echo.out")
	# Packets, as answered: not the frames of a jumbo answer's chain.
	sent=$(sed -n 's/^echo: answered [0-9]*, sent \([0-9]*\),.*/\1/p' "$tmp/echo.out")
	good=$(tail -1 "$tmp/$1.res")
	if [ "$rc" = 0 ] && [ "$good" = "$2" ] && [ "${answered:-0}" -ge "$2" ] &&
	   [ "${sent:-0}" -ge "$2" ] && [ "$sent" -le "$answered" ]; then
		ok "$1" "$2 requests of $3 bytes to port 7, $2 exact answers sent back through XSK TX by the verdict"
	else
		bad "$1" "exit $rc, $good of $2 answered exactly, it says it answered ${answered:-?}: $(tail -1 "$tmp/echo.out") $(tail -2 "$tmp/echo.err")"
	fi
}

case_echo() {
	needs
	echo_exact echo 500 49 7007
}

# A request in two fragments (2000 bytes at MTU 1500): not answered, nor
# counted answered (its first fragment alone, turned round, the sender
# could never reassemble); one whole request after it is.
case_echo_fragment() {
	local rc answered r
	needs
	run echo vd || return
	r=$(ip netns exec "$g" "$PY" - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.205.0.1", 7009))
s.settimeout(1)
got = []
for size in (2000, 49):
    s.sendto(b"f" * size, ("10.205.0.2", 7))
    try:
        got.append(len(s.recvfrom(9000)[0]))
    except socket.timeout:
        got.append(0)
print(*got)
PY
)
	finish
	rc=$?
	answered=$(sed -n 's/^echo: answered \([0-9]*\), sent \([0-9]*\),.*/\1 \2/p' "$tmp/echo.out")
	if [ "$rc" = 0 ] && [ "$r" = "0 49" ] && [ "$answered" = "1 1" ]; then
		ok echo-fragment "the fragmented request unanswered and not counted, the whole one answered"
	else
		bad echo-fragment "exit $rc, replies '$r' (want '0 49'), answered and sent '$answered' (want '1 1'): $(tail -1 "$tmp/echo.out")"
	fi
}

case_echo_jumbo() {
	needs
	if ! { ip -n "$g" link set vg mtu 9000 && ip -n "$d" link set vd mtu 9000; } 2> "$tmp/mtu.err"; then
		bad echo-jumbo "MTU 9000 on veth: $(head -1 "$tmp/mtu.err")"
		return
	fi
	if ! kernel_at_least 6 6; then
		skip echo-jumbo "multi-buffer AF_XDP needs Linux 6.6, this is $(uname -r)"
	else
		echo_exact echo-jumbo 150 1472,4000,8972 7008
	fi
	ip -n "$g" link set vg mtu 1500
	ip -n "$d" link set vd mtu 1500
}

# ---- a fault ends a run ---------------------------------------------------------
case_tun_gone() {
	local rc=
	needs
	rm -f "$tmp/filter.out" "$tmp/filter.err"
	run filter vd ucmx1 9001 || return
	ip netns exec "$d" ip link del ucmx1
	# It looks every 100 ms, then stops (1.5 s at most for frames out):
	# 10 s on a loaded machine.
	for _ in $(seq 100); do kill -0 $xpid 2> /dev/null || break; sleep 0.1; done
	if kill -0 $xpid 2> /dev/null; then
		finish
		bad tun-gone "still running 10 s after its tun was deleted: $(tail -2 "$tmp/filter.err" | tr '\n' ' ')"
		return
	fi
	lib_wait $xpid
	rc=$?
	if [ "$rc" = 1 ] && grep -q "^filter: stopping: tun gone" "$tmp/filter.err"; then
		ok tun-gone "exit $rc: $(grep '^filter: stopping' "$tmp/filter.err")"
	else
		bad tun-gone "exit $rc: $(tail -2 "$tmp/filter.err" | tr '\n' ' ')"
	fi
}

case_nothing_left() {
	local l
	lib_once pair
	l=$(left_in "$d" vd)
	[ -z "$l" ] && ok nothing-left || bad nothing-left "$l"
}

lib_run_cases "$@"
