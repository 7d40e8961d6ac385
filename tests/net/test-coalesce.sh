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
cd "$(dirname "$0")/../.."
. tests/net/lib.sh

skip_unless_root "namespaces, XDP, tun"
daemon=$BUILD/ucpumapd
gen=$BUILD/ucpumap-gen
for b in "$daemon" "$gen"; do
	[ -x "$b" ] || { bad build "$b is not built (make)"; exit 0; }
done
PY=$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null)
[ -n "$PY" ] || { echo "SKIP: $name: needs python3"; exit 0; }

G=ucmcg$$
D=ucmcd$$
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

COUNT=20000
FLOWS=4

# The reader: each datagram's source port is its flow, its first 8 bytes
# the generator's sequence number (global, flows in turn), the rest zeros.
cat > "$tmp/reader.py" << 'EOF'
import json, os, select, socket, struct, sys, time
count, flows, size, ready, stop, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:7]
socks = []
for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)	# SO_RCVBUFFORCE
    s.bind((addr, 9000))
    s.setblocking(False)
    socks.append(s)
open(ready, "w").close()
seen, last, bad, dup, disorder, first = set(), {}, [], 0, 0, None
deadline, stopping = time.monotonic() + 25, False
while True:
    r, _, _ = select.select(socks, [], [], 0.05)
    got = False
    for s in r:
        while True:
            try:
                data, addr = s.recvfrom(65536)
            except BlockingIOError:
                break
            got = True
            if len(data) != size or data[8:] != bytes(size - 8):
                bad.append(len(data))
                continue
            seq = struct.unpack("!Q", data[:8])[0]
            flow = addr[1]
            if seq in seen:
                dup += 1
                continue
            seen.add(seq)
            if seq < last.get(flow, -1):
                disorder += 1
                first = first or "seq %d after %d in flow %d" % (seq, last[flow], flow)
            last[flow] = seq
    if stopping and not got:
        break
    if not stopping and (os.path.exists(stop) or time.monotonic() > deadline):
        stopping = True
missing = [i for i in range(count) if i not in seen]
res = {"received": len(seen), "missing": len(missing), "first_missing": missing[:3],
       "duplicated": dup, "corrupt": len(bad), "disorder": disorder, "first_disorder": first,
       "flows": len(last)}
with open(out + ".tmp", "w") as f:
    json.dump(res, f)
os.rename(out + ".tmp", out)
EOF

# daemon_start CASE ARGS...: ucpumapd on vd with tun ucmc0 and its
# addresses; $dpid. Non-zero, with $why, when it did not start.
daemon_start() {
	local c=$1
	shift
	ip netns exec $D "$daemon" --dev vd --tun ucmc0 --cpus 0,1 --interval 0 \
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
	kill -TERM $dpid
	wait $dpid
	r=$?
	[ "$r" = 0 ] || why="$why ucpumapd exit status $r;"
	grep -q '^conservation: .*: holds$' "$tmp/$c.out" || why="$why $(grep '^conservation' "$tmp/$c.out" || echo 'no conservation line');"
	grep -q '^audit: every frame came home$' "$tmp/$c.out" || why="$why $(grep '^audit' "$tmp/$c.out" || echo 'no audit line')"
}

# run CASE DST SIZE DAEMON-ARGS...: the daemon, the reader, the generator;
# sets $why to what went wrong (empty: the delivery was exact) and $super
# to the super-packets the daemon wrote.
run() {
	local c=$1 dst=$2 size=$3 rpid hl
	shift 3
	why=
	super=
	daemon_start $c "$@" || return
	hl=28
	case $dst in *:*) hl=48 ;; esac
	ip netns exec $D "$PY" "$tmp/reader.py" $COUNT $FLOWS $((size - 14 - hl)) \
		"$tmp/$c.ready" "$tmp/$c.stop" "$tmp/$c.res" > "$tmp/$c.reader" 2>&1 &
	rpid=$!
	lib_pid $rpid
	if ! wait_file "$tmp/$c.ready" 50; then
		why="the reader did not start: $(tail -2 "$tmp/$c.reader");"
		daemon_stop $c	# the next case needs vd free
		return
	fi
	if ! timeout 30 ip netns exec $G "$gen" --dev vg --dst-ip "$dst" --dst-port 9000 --flows $FLOWS \
		--seq --size "$size" --count $COUNT --rate 50000 > "$tmp/$c.gen" 2>&1; then
		why="ucpumap-gen failed: $(tail -2 "$tmp/$c.gen" | tr '\n' ' ')"
	fi
	sleep 0.5
	touch "$tmp/$c.stop"
	wait_file "$tmp/$c.res" 100
	daemon_stop $c
	[ -s "$tmp/$c.res" ] || { why="$why no result from the reader: $(tail -2 "$tmp/$c.reader")"; return; }
	read -r got miss dup cor dis fl <<< "$(jget "$tmp/$c.res" \
		'"%d %d %d %d %d %d" % (d["received"], d["missing"], d["duplicated"], d["corrupt"], d["disorder"], d["flows"])')"
	if [ "$got" != $COUNT ] || [ "$dup" != 0 ] || [ "$cor" != 0 ] || [ "$dis" != 0 ] || [ "$fl" != $FLOWS ]; then
		why="received $got of $COUNT in $fl flows: missing $miss $(jget "$tmp/$c.res" 'd["first_missing"]'), duplicated $dup, corrupt $cor, out of order $dis $(jget "$tmp/$c.res" 'd["first_disorder"]'); $why"
	fi
	awk '/^total / { t = 1 } t && /^    coalesce/' "$tmp/$c.out" | sed 's/^ */# /'
}

run coalesce-ipv4 10.207.1.1 100
if [ -n "$why" ]; then
	bad coalesce-ipv4 "$why"
elif [ "${super:-0}" -gt 0 ]; then
	ok coalesce-ipv4 "$COUNT datagrams of $FLOWS flows, $super super-packets"
else
	bad coalesce-ipv4 "delivered, but ${super:-no} super-packets were written"
fi

run coalesce-ipv6 fd00:207:1::1 120
if [ -n "$why" ]; then
	bad coalesce-ipv6 "$why"
elif [ "${super:-0}" -gt 0 ]; then
	ok coalesce-ipv6 "$COUNT datagrams of $FLOWS flows, $super super-packets"
else
	bad coalesce-ipv6 "delivered, but ${super:-no} super-packets were written"
fi

# --pass: no workers, the RX thread holds and writes at the end of each RX
# batch (inline mode).
run pass-coalesce 10.207.1.1 100 --pass
if [ -n "$why" ]; then
	bad pass-coalesce "$why"
elif [ "${super:-0}" -gt 0 ]; then
	ok pass-coalesce "$COUNT datagrams of $FLOWS flows, $super super-packets"
else
	bad pass-coalesce "delivered, but ${super:-no} super-packets were written"
fi

run no-coalesce 10.207.1.1 100 --no-coalesce
if [ -n "$why" ]; then
	bad no-coalesce "$why"
elif [ "$super" = 0 ]; then
	ok no-coalesce
else
	bad no-coalesce "${super:-no count of} super-packets with --no-coalesce"
fi

# ---- TCP: a real stack's stream through the coalescing datapath ------------------
cat > "$tmp/tcp.py" << 'EOF'
import hashlib, os, socket, sys
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
if mode == "server":
    ready, out = sys.argv[4], sys.argv[5]
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1)
    s.settimeout(20)
    open(ready, "w").close()
    c, _ = s.accept()
    c.settimeout(20)
    h, n = hashlib.sha256(), 0
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        h.update(b)
        n += len(b)
    with open(out + ".tmp", "w") as f:
        f.write("%s %d\n" % (h.hexdigest(), n))
    os.rename(out + ".tmp", out)
else:
    s = socket.create_connection((addr, port), timeout=20)
    with open(sys.argv[4], "rb") as f:
        s.sendall(f.read())
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
EOF
head -c 8388608 /dev/urandom > "$tmp/blob"
want=$(sha256sum "$tmp/blob" | cut -d' ' -f1)

# tcp_case CASE ADDR: the daemon, a server behind the tun, a client in the
# generator's namespace.
tcp_case() {
	local c=$1 addr=$2 spid got n
	why=
	daemon_start $c || { bad $c "$why"; return; }
	ip netns exec $D "$PY" "$tmp/tcp.py" server "$addr" 5001 "$tmp/$c.ready" "$tmp/$c.res" \
		> "$tmp/$c.server" 2>&1 &
	spid=$!
	lib_pid $spid
	wait_file "$tmp/$c.ready" 50
	timeout 30 ip netns exec $G "$PY" "$tmp/tcp.py" client "$addr" 5001 "$tmp/blob" \
		> "$tmp/$c.client" 2>&1
	wait_file "$tmp/$c.res" 100
	daemon_stop $c
	read -r got n < "$tmp/$c.res" 2> /dev/null
	[ "$got" = "$want" ] || why="$why received ${n:-no} bytes, sha256 ${got:-none} (sent 8388608, $want); client: $(tail -1 "$tmp/$c.client") server: $(tail -1 "$tmp/$c.server");"
	[ "${super:-0}" -gt 0 ] || why="$why no super-packet (tun_super ${super:-?});"
	if [ -z "$why" ]; then
		ok $c "sha256 matches; $segs segments in $super super-packets"
	else
		bad $c "$why"
	fi
}

tcp_case tcp 10.207.1.1
tcp_case tcp-ipv6 fd00:207:1::1
