#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The main job without a NIC: two network namespaces joined by a veth pair.
# ucpumapd runs on the DUT end with a tun behind it and a receiver behind
# the tun (a UDP socket read by a small program that counts the datagrams);
# a generator in the other namespace sends UDP flows at it. Ten seconds of
# live statistics (a line a second), then the account in plain words: how
# many datagrams were sent, how many the receiver got, and where each of
# the rest went (ucpumapd's drops by cause, the kernel's before and after
# it), and everything is removed.
#
#   scripts/demo.sh [--seconds N] [--rate PPS] [ucpumapd options...]
#   scripts/demo.sh --help
#
# Needs root. Extra options go to ucpumapd (e.g. --extended, --steer round-robin,
# --no-batch, --xdp-mode skb). Exits 0 when ucpumapd stopped cleanly and
# datagrams arrived, 1 otherwise, 130 on Ctrl-C; everything is removed
# either way.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
secs=10
rate=200000
# whole OPTION VALUE: VALUE a whole number above 0, or exit 2 naming it.
whole() {
	case $2 in
	'' | *[!0-9]* | 0 | 0*) echo "demo: $1 takes a whole number above 0${2:+, not '$2'}" >&2; exit 2 ;;
	esac
}
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) whole "$1" "${2:-}"; secs=$2; shift 2 ;;
	--rate) whole "$1" "${2:-}"; rate=$2; shift 2 ;;
	-h | --help) sed -n '4,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) break ;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (namespaces, XDP, tun): run it with sudo" >&2
	exit 1
fi
{ [ -x "$BUILD/ucpumapd" ] && [ -x "$BUILD/ucpumap-gen" ]; } || make -s || exit 1

# What a demo killed by SIGKILL left: the namespaces of a pid that is gone,
# and what still runs in them.
for ns in $(ip netns list 2> /dev/null | awk '$1 ~ /^ucm-demo-(gen|dut)-[0-9]+$/ { print $1 }'); do
	kill -0 "${ns##*-}" 2> /dev/null && continue
	for p in $(ip netns pids "$ns" 2> /dev/null); do kill -9 "$p" 2> /dev/null; done
	ip netns del "$ns" 2> /dev/null
done

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
	gpid= dpid= spid=
	ip netns del "$gen" 2>/dev/null
	ip netns del "$dut" 2>/dev/null
	rm -rf "$tmp"
}
# The cleanup once, at the exit; a signal ends the script there.
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' HUP TERM

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
ip netns exec "$dut" python3 - "$tmp/rx" $((secs + 30)) <<'PY' &
import os, socket, struct, sys, time
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
n, end = 0, time.monotonic() + int(sys.argv[2])	# never past the demo's life
while time.monotonic() < end:
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

# Its lines to the terminal and to a file the start is read from.
ip netns exec "$dut" "$BUILD/ucpumapd" --dev vd --tun ucm0 --duration $((secs + 2)) \
	--stats-json "$tmp/stats.json" "$@" > >(tee "$tmp/d.out") &
dpid=$!
# Forwarding once it says so (its line "ucpumapd: vd queues ...", after
# its time unless UCPUMAPD_TIMESTAMPS=no; said after the start, when the
# kernel redirects to it): before, the steering
# program passes the datagrams to vd's own stack, past ucpumapd. Not its
# --status: /run/ucpumap/vd.sock may be another namespace's vd's.
for i in $(seq 100); do
	grep -qE '^([0-9T:.-]+Z )?ucpumapd: vd queues' "$tmp/d.out" 2> /dev/null && break
	kill -0 "$dpid" 2>/dev/null && [ "$i" -lt 100 ] ||
		{ echo "demo: ucpumapd did not start" >&2; exit 1; }
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
# Its frames need a native XDP program on vd (veth drops them without a
# word otherwise): with ucpumapd's --xdp-mode skb, an AF_XDP socket sends.
engine=()
case " $* " in
*" --xdp-mode skb "* | *" --xdp-mode=skb "*) engine=(--engine xsk) ;;
esac
ip netns exec "$gen" "$BUILD/ucpumap-gen" --dev vg --dst-ip 10.77.0.2 --dst-port 9000 \
	--flows 16 --rate "$rate" --duration "$secs" "${engine[@]}" > "$tmp/gen" 2> "$tmp/gen.err" &
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
# The account: what was sent, what arrived, and where each of the rest
# went, from the daemon's last JSON line (its conservation line's
# figures) and the receiver's count.
echo
python3 - "$tmp/stats.json" "$sent" "$got" "$ovf" "$rc" <<'PY'
import json, os, sys
path, sent, got, ovf, rc = sys.argv[1], *map(int, sys.argv[2:])
lines = [json.loads(l) for l in open(path) if l.strip()] if os.path.exists(path) else []
d = lines[-1] if lines else {}
why = {
    "kernel_rx_ring_full": "the RX ring was full: the RX thread fell behind (a larger --rx-size, --poll, more --queues)",
    "kernel_rx_dropped": "the socket had no free frame: workers and the tun held them all",
    "enqueue_full": "a worker's ring was full: the worker fell behind (more --cpus)",
    "fair_share": "over its queue's fair share of a worker ring",
    "sink": "the tun refused it",
}

def pct(n, of):
    """n of `of` in percent, never 100.0 while something is missing."""
    if not of:
        return "-"
    p = 100.0 * n / of
    if 0 < p < 0.1:
        return "<0.1%"
    if n < of:
        p = int(min(p, 99.9) * 10) / 10.0
    return "%.1f%%" % p

print("demo: sent %d UDP datagrams; the receiver behind the tun got %d (%s)"
      % (sent, got, pct(got, sent)))
rest = []
if d:
    rec, dlv = d["received"], d["delivered"]
    # More received than sent: the kernel's own (IPv6 neighbour
    # discovery), delivered with the rest and not the receiver's.
    other = max(0, rec - sent)
    if sent > rec:
        rest.append((sent - rec, "lost before ucpumapd's sockets (the veth's own drops)"))
    for name, n in sorted(d["drops_in"].items(), key=lambda kv: -kv[1]):
        if n:
            rest.append((n, "%s ucpumapd, %s: %s"
                         % ("at the sockets of" if name.startswith("kernel_") else "in",
                            name, why.get(name, "see ucpumapd(8), STATISTICS"))))
    if dlv - other > got:
        rest.append((dlv - other - got, "delivered to the tun, then lost in the kernel before "
                     "the receiver" + (" (its socket overflowed: Udp RcvbufErrors %d)" % ovf
                                       if ovf else "")))
elif got < sent:
    rest.append((sent - got, "unaccounted: ucpumapd left no statistics (its messages above)"))
# Each datagram the receiver got came through the tun, so ucpumapd
# delivered it: more is traffic that went around ucpumapd, to vd's own
# stack (its XDP program found no socket to redirect to).
around = got - d["delivered"] if d else 0
if around > 0:
    print("demo: the receiver got %d more than ucpumapd delivered (%d): they went around it, "
          "to vd's own stack" % (around, d["delivered"]))
lost = sent - got
if lost > 0:
    print("demo: %d (%s) did not arrive:" % (lost, pct(lost, sent)))
    for n, what in rest:
        print("  %10d  %s" % (n, what))
if rc:
    print("demo: ucpumapd exited %d (its messages above say why)" % rc)
elif not sent:
    print("demo: nothing was sent (the generator's message above says why)")
elif lost > 0:
    print("demo: ucpumapd stopped cleanly, but %d of %d datagrams (%s) were lost, as above"
          % (lost, sent, pct(lost, sent)))
elif around <= 0:
    print("demo: ucpumapd stopped cleanly; every datagram arrived")
sys.exit(3 if around > 0 else 0)
PY
[ $? = 0 ] && [ "$rc" = 0 ] && [ "$sent" -gt 0 ] && [ "$got" -gt 0 ] || exit 1
