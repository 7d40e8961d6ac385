#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The main job without a NIC: two network namespaces joined by a veth pair.
# ucpumapd runs on the DUT end with a tun behind it and a receiver behind
# the tun (a UDP socket read by a small program that counts the datagrams);
# a generator in the other namespace sends UDP flows at it. Ten seconds of
# live statistics (a line a second), then how many datagrams the receiver
# got of how many were sent, and everything is removed.
#
#   scripts/demo.sh [--seconds N] [--rate PPS] [ucpumapd options...]
#
# Needs root. Extra options go to ucpumapd (e.g. --extended, --steer round-robin,
# --no-batch, --xdp-mode skb).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
secs=10
rate=200000
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) secs=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (namespaces, XDP, tun): run it with sudo" >&2
	exit 1
fi
{ [ -x "$BUILD/ucpumapd" ] && [ -x "$BUILD/ucpumap-gen" ]; } || make -s || exit 1

gen=ucm-demo-gen-$$
dut=ucm-demo-dut-$$
tmp=$(mktemp -d)
dpid=
spid=
gpid=
cleanup() {
	for p in $gpid $dpid $spid; do kill "$p" 2>/dev/null; done
	sleep 0.3
	for p in $gpid $dpid $spid; do kill -9 "$p" 2>/dev/null; done
	ip netns del "$gen" 2>/dev/null
	ip netns del "$dut" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT HUP INT TERM

ip netns add "$gen" && ip netns add "$dut" &&
ip -n "$gen" link add vg type veth peer name vd netns "$dut" &&
ip -n "$gen" addr add 10.77.0.1/24 dev vg && ip -n "$dut" addr add 10.77.0.2/24 dev vd &&
ip -n "$gen" link set vg up && ip -n "$dut" link set vd up &&
ip -n "$gen" link set lo up && ip -n "$dut" link set lo up || {
	echo "demo: cannot build the namespaces" >&2
	exit 1
}
# Full checksums on the wire, as a NIC delivers them (veth offloads them).
ip netns exec "$gen" ethtool -K vg tx off > /dev/null 2>&1
# Packets come back in through the tun, not vd: no reverse-path filter.
ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0

# The receiver: reads the socket and counts the datagrams until told to
# stop. With UDP_GRO a super-packet of the tun (ucpumapd's coalescing)
# arrives whole, one read for all its datagrams, and says their size; a big
# receive buffer rides out the bursts.
ip netns exec "$dut" python3 - "$tmp/rx" <<'PY' &
import os, socket, struct, sys
UDP_GRO = getattr(socket, "UDP_GRO", 104)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)	# SO_RCVBUFFORCE
except OSError:
    pass
s.setsockopt(socket.IPPROTO_UDP, UDP_GRO, 1)
s.bind(("10.77.0.2", 9000))
s.settimeout(0.2)
open(sys.argv[1] + ".ready", "w").close()
n = 0
while True:
    try:
        data, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(4))
    except socket.timeout:
        if os.path.exists(sys.argv[1] + ".stop"):
            break	# told to stop, and nothing left to read
        continue
    seg = [struct.unpack("i", d[:4])[0] for l, t, d in anc
           if l == socket.IPPROTO_UDP and t == UDP_GRO]
    n += -(-len(data) // seg[0]) if seg and seg[0] else 1
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % n)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
PY
spid=$!
for _ in $(seq 50); do [ -e "$tmp/rx.ready" ] && break; sleep 0.1; done
if [ ! -e "$tmp/rx.ready" ]; then
	echo "demo: the receiver did not start (python3 with UDP_GRO: Linux 5.0 or later)" >&2
	exit 1
fi

ip netns exec "$dut" "$BUILD/ucpumapd" --dev vd --tun ucm0 --duration $((secs + 2)) "$@" &
dpid=$!
for _ in $(seq 50); do
	ip -n "$dut" link show ucm0 > /dev/null 2>&1 && break
	kill -0 "$dpid" 2>/dev/null || { echo "demo: ucpumapd did not start" >&2; exit 1; }
	sleep 0.1
done
ip netns exec "$dut" sysctl -qw net.ipv4.conf.ucm0.rp_filter=0 2>/dev/null

rcvbuf_errors() {	# Udp RcvbufErrors in the DUT namespace: the socket's overflows
	ip netns exec "$dut" awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 }
		else print $c["RcvbufErrors"] }' /proc/net/snmp
}
b_ovf=$(rcvbuf_errors)

# The generator: ucpumap-gen's live-frame engine (an XDP program the
# kernel runs in a loop, sending out of vg), 16 flows, paced to --rate.
ip netns exec "$gen" "$BUILD/ucpumap-gen" --dev vg --dst-ip 10.77.0.2 --dst-port 9000 \
	--flows 16 --rate "$rate" --duration "$secs" > "$tmp/gen" 2> "$tmp/gen.err" &
gpid=$!
wait "$gpid"
gpid=
# The daemon stops on its own (--duration) once everything is through;
# then the receiver reads what is queued and says how many it got.
wait "$dpid"
rc=$?
dpid=
touch "$tmp/rx.stop"
for _ in $(seq 50); do [ -e "$tmp/rx" ] && break; sleep 0.1; done
got=$(cat "$tmp/rx" 2>/dev/null)
ovf=$(($(rcvbuf_errors) - b_ovf))
sent=$(awk '/^total:/ { print $2 }' "$tmp/gen")
if [ -z "$sent" ]; then
	echo "demo: the generator failed: $(tail -3 "$tmp/gen.err")" >&2
	sent=0
fi
if [ -z "$got" ]; then
	echo "demo: the receiver gave no count" >&2
	got=0
fi
share=$(awk -v g="$got" -v s="$sent" 'BEGIN { if (s > 0) printf "%.1f%%", 100 * g / s; else print "-" }')
if [ "$rc" -eq 0 ]; then
	how="ucpumapd stopped cleanly"
else
	how="ucpumapd exited $rc (its messages above say why)"
fi
echo
if [ "$got" -lt "$sent" ]; then
	why="ucpumapd's total line above gives its drops and their largest cause"
	[ "$ovf" -gt 0 ] && why="$why; the receiver's socket overflowed for $ovf (Udp RcvbufErrors)"
	echo "demo: $((sent - got)) did not arrive: $why"
fi
echo "demo: sent $sent UDP datagrams, the receiver behind the tun got $got of them ($share); $how"
