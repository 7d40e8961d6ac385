#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumap-gen on a veth pair between two namespaces: the generator (vg) and
# the receiver (vd), where a small XDP program compiled here counts what
# arrives for the generator's UDP port (per source port, per frame length,
# sequence numbers in order or not) and drops it; a second build of it
# passes the frames on to the stack instead, whose counters check the
# checksums.
#
#   arrives-*      every frame sent arrives (IPv4, IPv6), at the asked size
#   flows          --flows N: exactly N source ports, evenly
#   seq-*          --seq: 0, 1, 2, ... in order, none missing
#   checksum-*     the stack of the receiver takes every frame: no checksum
#                  error (IPv4 and IPv6, flows and sequence numbers on)
#   rate           --rate 20000 for 2 s: within 2x of what was asked
#   start-at       --start-at 1 s ahead waits for it; one past: at once,
#                  said (start-at-past)
#   xsk-*          the AF_XDP engine: arrives, flows, sequence, checksums
#   loop-*         the loop engine, the same
#   stamp-*        --stamp, each engine: a socket gets every datagram, its
#                  sequence number and a send time of this host's
#                  CLOCK_MONOTONIC at most a second old and not in the future
#   neighbour-*    the destination MAC from the neighbour table; a silent
#                  destination is an error naming --dst-mac
#   link-lost-*    the peer set down mid-run (vg loses its carrier): the
#                  default engine and the packet engine stop within 2.5 s,
#                  exit 1, saying so (they counted frames that never left,
#                  or the packet engine's sends failed for ever);
#                  link-lost-xdp-off: vd's XDP program taken off mid-run
#                  (veth then takes no redirected frames), the same
#   no-xmit-*      the live and loop engines refuse a device that takes no
#                  redirected frames (vd without a program: xdp-features
#                  without ndo-xmit, Linux 6.3); the xsk engine sends
#   sigterm, sigkill  a clean total on SIGTERM; nothing left after SIGKILL:
#                  the live engine's tap device, the loop engine's namespace
#                  (its traffic stops, its program goes)
#   engine-default the live engine by default; where the kernel refuses its
#                  live-frame test run, the loop engine, said on stderr, and
#                  --engine live an error naming the others (the live-only
#                  cases, stamp-live and sigkill-leaves-nothing, then skip)
#   bad-flag-*     a message and exit 2 (exit 1 for what depends on the
#                  machine: no such device, MTU, not root)
#   nothing-left   no device, program or namespace of ours at the end
#
# The cases: engine-default, arrives-ipv4 (and size-default-64), flows, seq-ipv4,
# arrives-ipv6 (and size-ipv6-200), ipv6-flag, size-ipv4-1514,
# size-over-mtu, checksum-ipv4, checksum-ipv6, rate (and duration),
# neighbour-resolved, neighbour-resolved-ipv6, neighbour-silent, xsk-ipv4,
# xsk-checksum-ipv6, loop-ipv4, loop-checksum-ipv6, stamp (stamp-live,
# stamp-loop, stamp-xsk, stamp-packet), link-lost (link-lost-default,
# link-lost-packet, link-lost-xdp-off), no-xmit (no-xmit-live,
# no-xmit-loop, no-xmit-xsk), sigterm, sigkill-leaves-nothing
# (after sigterm), sigkill-loop,
# bad-flags (bad-flag-*), cpu-flag, nothing-left.
#
# Root. Every case prints one PASS/FAIL/SKIP line; the script exits 0.
# Lines starting with '#' are figures and messages. Every generator run
# has a count or a duration and a timeout backstop.
set -u
BUILD=${BUILD:-build}
name=test-gen
cases="engine-default arrives-ipv4 flows seq-ipv4 arrives-ipv6 ipv6-flag size-ipv4-1514 size-over-mtu
checksum-ipv4 checksum-ipv6 rate start-at neighbour-resolved neighbour-resolved-ipv6 neighbour-silent
xsk-ipv4 xsk-checksum-ipv6 loop-ipv4 loop-checksum-ipv6 stamp link-lost no-xmit sigterm sigkill-leaves-nothing sigkill-loop
bad-flags cpu-flag nothing-left"
GEN=$(cd "$BUILD" 2>/dev/null && pwd)/ucpumap-gen
gen=ucmgg$$
dut=ucmgd$$
cd "$(dirname "$0")/../.."
. tests/lib.sh
T0=$(date +%s%N)
G4=10.204.0.1 D4=10.204.0.2 G6=fd00:204::1 D6=fd00:204::2
DPORT=7777

# The receiver's program, counting what comes to DPORT: sink.o drops it,
# sink-pass.o passes it on to the stack. The script skips without them.
sink_build() {
	local inc
	cat > "$tmp/sink.c" <<'EOF'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct stats {
	__u64 pkts, v4, v6, seq_next, seq_in_order, seq_gaps;
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stats);
} sink_stats SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u16);
	__type(value, __u64);
} sink_sports SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u16);
	__type(value, __u64);
} sink_lens SEC(".maps");

static __always_inline void bump(void *map, __u16 key)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(map, &key, &one, BPF_NOEXIST);
}

/* UDP to DPORT over IPv4 (no options) or IPv6 (no extension headers) is
 * counted; everything else (ARP, neighbour discovery) goes to the stack.
 * One veth queue: the counters are never updated concurrently. */
SEC("xdp")
int sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u8 *p = data, *udp;
	__u32 zero = 0;
	struct stats *st;
	__u64 seq;
	int v6;

	if (data + 14 > end)
		return XDP_PASS;
	if (p[12] == 0x08 && p[13] == 0x00) {
		if (data + 34 > end || p[14] != 0x45 || p[23] != 17)
			return XDP_PASS;
		udp = data + 34;
		v6 = 0;
	} else if (p[12] == 0x86 && p[13] == 0xdd) {
		if (data + 54 > end || p[20] != 17)
			return XDP_PASS;
		udp = data + 54;
		v6 = 1;
	} else {
		return XDP_PASS;
	}
	if ((void *)(udp + 8) > end || udp[2] != (DPORT >> 8) || udp[3] != (DPORT & 0xff))
		return XDP_PASS;
	st = bpf_map_lookup_elem(&sink_stats, &zero);
	if (!st)
		return XDP_PASS;
	st->pkts++;
	if (v6)
		st->v6++;
	else
		st->v4++;
	bump(&sink_sports, (__u16)(udp[0] << 8 | udp[1]));
	bump(&sink_lens, (__u16)(end - data));
	if ((void *)(udp + 16) <= end) {
		__builtin_memcpy(&seq, udp + 8, 8);
		seq = bpf_be64_to_cpu(seq);
		if (seq == st->seq_next)
			st->seq_in_order++;
		else
			st->seq_gaps++;
		st->seq_next = seq + 1;
	}
#ifdef PASS
	return XDP_PASS;
#else
	return XDP_DROP;
#endif
}
char _license[] SEC("license") = "GPL";
EOF
	inc=/usr/include/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
	if ! clang -O2 -g -target bpf -I"$inc" -DDPORT=$DPORT -c "$tmp/sink.c" -o "$tmp/sink.o" > "$tmp/cc.log" 2>&1 ||
	   ! clang -O2 -g -target bpf -I"$inc" -DDPORT=$DPORT -DPASS -c "$tmp/sink.c" -o "$tmp/sink-pass.o" >> "$tmp/cc.log" 2>&1; then
		echo "SKIP: $name: cannot build the receiver's XDP program: $(head -3 "$tmp/cc.log" | tr '\n' ' ')"
		exit 0
	fi
}

# The checks, the topology, the receiver's program (built, and attached
# once to see that it can be), the generator's addresses ($V4, $V6).
setup() {
	skip_unless_root "namespaces, XDP"
	if [ ! -x "$GEN" ]; then
		echo "FAIL: $name: $BUILD/ucpumap-gen is not built (run make)"
		exit 0
	fi
	for tool in clang bpftool; do
		if ! command -v $tool > /dev/null; then
			echo "SKIP: $name: needs $tool (the receiver's counting program)"
			exit 0
		fi
	done
	if [ -z "$PY" ]; then
		echo "SKIP: $name: needs python3"
		exit 0
	fi

	# The topology.
	if ! { veth_pair "$gen" "$dut" vg vd $G4/24 $D4/24 &&
		ip -n "$gen" addr add $G6/64 dev vg nodad && ip -n "$dut" addr add $D6/64 dev vd nodad; } 2> "$tmp/setup.err"
	then
		bad setup "cannot build the namespaces: $(head -3 "$tmp/setup.err")"
		exit 0
	fi
	vdmac=$(ip netns exec "$dut" cat /sys/class/net/vd/address)

	sink_build

	V4="--src-ip $G4 --dst-ip $D4 --dst-mac $vdmac --dst-port $DPORT"
	V6="--src-ip $G6 --dst-ip $D6 --dst-mac $vdmac --dst-port $DPORT"
	if ! sink_load; then
		echo "SKIP: $name: cannot attach an XDP program to vd: $(head -2 "$tmp/attach.err" | tr '\n' ' ')"
		exit 0
	fi
}

# sink_load [pass]: a fresh program (fresh counters) on vd, native mode.
sink_load() {
	local obj=$tmp/sink.o
	[ "${1:-}" = pass ] && obj=$tmp/sink-pass.o
	ip -n "$dut" link set vd xdp off 2>/dev/null
	ip -n "$dut" link set vd xdpdrv obj "$obj" sec xdp 2> "$tmp/attach.err"
}

# sink_read FILE: the counters as one JSON object: pkts, v4, v6, seq_next,
# seq_in_order, seq_gaps, ports {port: n}, lens {length: n}.
sink_read() {
	local id
	id=$(ip -n "$dut" link show vd | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	[ -n "$id" ] || { echo '{}' > "$1"; return 1; }
	"$PY" - "$id" > "$1" <<'PY'
import json, subprocess, sys
def bt(*a):
    return json.loads(subprocess.run(["bpftool", "-j"] + list(a), check=True,
                                     capture_output=True, text=True).stdout)
out = {}
for mid in bt("prog", "show", "id", sys.argv[1])["map_ids"]:
    name = bt("map", "show", "id", str(mid))["name"]
    ents = [e["formatted"] for e in bt("map", "dump", "id", str(mid))]
    if name == "sink_stats":
        out.update(ents[0]["value"])
    elif name == "sink_sports":
        out["ports"] = {e["key"]: e["value"] for e in ents}
    elif name == "sink_lens":
        out["lens"] = {e["key"]: e["value"] for e in ents}
print(json.dumps(out))
PY
}

sget() {	# file, python expression over d
	"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# run_gen LABEL ARGS...: the generator in its namespace; OUT, ERR, RC, TOTAL
# (its "total:" line), MS (how long it ran).
run_gen() {
	local label=$1 t0 t1
	shift
	OUT=$tmp/$label.out
	ERR=$tmp/$label.err
	t0=$(date +%s%N)
	lib_run ip netns exec "$gen" timeout 20 "$GEN" --dev vg "$@" > "$OUT" 2> "$ERR"
	RC=$?
	t1=$(date +%s%N)
	MS=$(((t1 - t0) / 1000000))
	TOTAL=$(sed -n 's/^total: \([0-9]*\) packets.*/\1/p' "$OUT")
}

why_gen() {
	echo "ucpumap-gen exited $RC: $(tail -2 "$ERR" | tr '\n' ' ')"
}

# Received within the sent count: never more, at most 1% fewer.
within() {	# received sent
	[ -n "$1" ] && [ -n "$2" ] && [ "$2" -gt 0 ] && [ "$1" -le "$2" ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]
}


# Frames veth could not hand to vd because its ring was full (the kernel's
# count, on the sending side): at full speed a host that takes the
# receiving CPU away for a moment costs some.
xmit_errors() {
	ip netns exec "$gen" ethtool -S vg 2> /dev/null |
		awk '/tx_queue_[0-9]+_xdp_xmit_errors:/ { s += $2 } END { print s + 0 }'
}

# ---- 1. everything arrives, IPv4, as fast as it goes -----------------------------
# Every frame accounted for: received, or refused by veth and counted by
# the kernel; never more received than sent.
# LIVE: what the kernel says to the live engine: "" (it runs), or why not.
LIVE=
case_engine_default() {
	local refused='this kernel refuses the XDP live-frame test run'
	run_gen engine-default $V4 --count 100
	if grep -q "$refused" "$ERR"; then
		LIVE=$(sed -n "s/.*$refused (\([^)]*\)).*/\1/p" "$ERR" | head -1)
		LIVE=${LIVE:-refused}
		# Not only before Linux 5.18: a 6.18 build may refuse it too
		# (6.18.44-fc-v1300 here, EPERM as root), so the refusal is
		# taken as said; the loop engine must then take over.
		if [ "$RC" != 0 ] || [ "$TOTAL" != 100 ] || ! grep -q 'loop engine' "$OUT" ||
		   ! grep -q 'sending with --engine loop' "$ERR"; then
			bad engine-default "refused ($LIVE), but the loop engine did not take over: sent ${TOTAL:-?} of 100; $(why_gen)"
			return
		fi
		run_gen engine-live $V4 --count 100 --engine live
		if [ "$RC" = 1 ] && [ -z "$TOTAL" ] && grep -q 'give --engine loop, xsk or packet' "$ERR"; then
			ok engine-default "the kernel refuses live frames ($LIVE): loop by default, --engine live refused"
		else
			bad engine-default "--engine live where the kernel refuses it: exit $RC (want 1 and a message naming loop, xsk and packet): $(tail -1 "$ERR")"
		fi
	elif [ "$RC" = 0 ] && [ "$TOTAL" = 100 ] && grep -q 'live engine' "$OUT"; then
		ok engine-default "the live engine"
	else
		bad engine-default "sent ${TOTAL:-?} of 100 with the default engine: $(head -1 "$OUT"); $(why_gen)"
	fi
}

case_arrives_ipv4() {
	local e0 got lost lens
	sink_load
	e0=$(xmit_errors)
	run_gen arrives4 $V4 --count 200000
	sink_read "$tmp/s1"
	got=$(sget "$tmp/s1" 'd["v4"]')
	lost=$(($(xmit_errors) - e0))
	if [ "$RC" = 0 ] && [ "$TOTAL" = 200000 ] && [ -n "$got" ] && [ "$got" -le "$TOTAL" ] &&
		{ within "$got" "$TOTAL" || [ $((got + lost)) = "$TOTAL" ]; }; then
		ok arrives-ipv4
		echo "# $(grep '^total' "$OUT") (no rate limit); the receiver counted $got, veth refused $lost (ring full)"
	else
		bad arrives-ipv4 "sent ${TOTAL:-?} of 200000, the receiver counted ${got:-?}, veth refused $lost; $(why_gen)"
	fi
	lens=$(sget "$tmp/s1" 'sorted(d["lens"].items())')
	if [ "$lens" = "[('64', $got)]" ]; then
		ok size-default-64
	else
		bad size-default-64 "frame lengths seen (length, count): $lens; want only 64"
	fi
}

# ---- 2. flows ------------------------------------------------------------------------
case_flows() {
	local ports want
	sink_load
	run_gen flows $V4 --count 8000 --flows 8 --src-port 5000 --rate 200000
	sink_read "$tmp/s2"
	ports=$(sget "$tmp/s2" 'sorted((int(k), v) for k, v in d["ports"].items())')
	want=$("$PY" -c 'print(sorted((5000 + i, 1000) for i in range(8)))')
	if [ "$RC" = 0 ] && [ "$TOTAL" = 8000 ] && [ "$ports" = "$want" ]; then
		ok flows
	else
		bad flows "(port, count) seen: ${ports:-none}; want $want; $(why_gen)"
	fi
}

# ---- 3. sequence numbers, IPv4 --------------------------------------------------------
case_seq_ipv4() {
	local r
	sink_load
	run_gen seq4 $V4 --count 5000 --seq --flows 3
	sink_read "$tmp/s3"
	r=$(sget "$tmp/s3" '"%d %d %d %d" % (d["pkts"], d["seq_in_order"], d["seq_gaps"], d["seq_next"])')
	if [ "$RC" = 0 ] && [ "$TOTAL" = 5000 ] && [ "$r" = "5000 5000 0 5000" ]; then
		ok seq-ipv4
	else
		bad seq-ipv4 "received, in order, out of order, next expected: ${r:-?} (want 5000 5000 0 5000); $(why_gen)"
	fi
}

# ---- 4. IPv6: arrives, sized, flows, sequence ------------------------------------------
case_arrives_ipv6() {
	local r lens
	sink_load
	run_gen ipv6 $V6 --count 3000 --seq --flows 4 --size 200 --rate 300000
	sink_read "$tmp/s4"
	r=$(sget "$tmp/s4" '"%d %d %d %d %d" % (d["v6"], d["seq_in_order"], d["seq_gaps"], len(d["ports"]), d["v4"])')
	lens=$(sget "$tmp/s4" 'sorted(d["lens"].items())')
	if [ "$RC" = 0 ] && [ "$TOTAL" = 3000 ] && [ "$r" = "3000 3000 0 4 0" ] && grep -q 'IPv6 UDP' "$OUT"; then
		ok arrives-ipv6
	else
		bad arrives-ipv6 "IPv6 received, in order, out of order, ports, IPv4 received: ${r:-?} (want 3000 3000 0 4 0); $(why_gen)"
	fi
	if [ "$lens" = "[('200', 3000)]" ]; then ok size-ipv6-200; else bad size-ipv6-200 "lengths seen: $lens"; fi
}


# -6 alone: the default (benchmarking) addresses, IPv6; with --seq the
# default size grows to the smallest that holds it.
case_ipv6_flag() {
	local got lens
	sink_load
	run_gen ipv6-flag -6 --seq --dst-mac "$vdmac" --dst-port $DPORT --count 100
	sink_read "$tmp/s4b"
	got=$(sget "$tmp/s4b" 'd["v6"]')
	lens=$(sget "$tmp/s4b" 'sorted(d["lens"].items())')
	if [ "$RC" = 0 ] && [ "$got" = 100 ] && grep -q '2001:2::1:1024 -> 2001:2::2:' "$OUT" &&
	   [ "$lens" = "[('70', 100)]" ]; then
		ok ipv6-flag
	else
		bad ipv6-flag "-6 --seq without addresses or size: IPv6 received ${got:-?} of 100, lengths $lens (want 70 only), start line: $(head -1 "$OUT"); $(why_gen)"
	fi
}

# ---- 5. sizes ---------------------------------------------------------------------------
case_size_ipv4_1514() {
	local lens
	sink_load
	run_gen size $V4 --count 1000 --size 1514 --seq
	sink_read "$tmp/s5"
	lens=$(sget "$tmp/s5" 'sorted(d["lens"].items())')
	if [ "$RC" = 0 ] && [ "$lens" = "[('1514', 1000)]" ]; then
		ok size-ipv4-1514
	else
		bad size-ipv4-1514 "lengths seen: ${lens:-none}; $(why_gen)"
	fi
}

case_size_over_mtu() {
	run_gen size-mtu $V4 --count 10 --size 1515
	if [ "$RC" = 1 ] && grep -q "MTU 1500 carries frames of at most 1514 bytes" "$ERR"; then
		ok size-over-mtu
		echo "#   exit 1: $(head -1 "$ERR")"
	else
		bad size-over-mtu "--size 1515 on MTU 1500: exit $RC (want 1), said: $(head -2 "$ERR" | tr '\n' ' ')"
	fi
}

# ---- 6. checksums: the receiver's stack checks them --------------------------------------
snmp() {	# the receiver's UDP counters NoPorts and InCsumErrors (4 or 6)
	if [ "$1" = 4 ]; then
		ip netns exec "$dut" awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) k[$i] = i; h = 1 }
			else print $k["NoPorts"], $k["InCsumErrors"], $k["InErrors"] }' /proc/net/snmp
	else
		ip netns exec "$dut" awk '$1 == "Udp6NoPorts" { n = $2 } $1 == "Udp6InCsumErrors" { c = $2 }
			$1 == "Udp6InErrors" { e = $2 } END { print n, c, e }' /proc/net/snmp6
	fi
}
# csum_case FAM: the stack of the receiver takes every frame of IPv$FAM.
csum_case() {
	local fam=$1 n0 c0 e0 n1 c1 e1 args
	sink_load pass
	read -r n0 c0 e0 <<< "$(snmp $fam)"
	if [ $fam = 4 ]; then args=$V4; else args=$V6; fi
	# Odd sizes and both varying fields: the incremental update must
	# hold whatever the template's sum.
	run_gen csum$fam $args --count 3000 --flows 7 --seq --size 301 --rate 50000
	sleep 0.2
	read -r n1 c1 e1 <<< "$(snmp $fam)"
	if [ "$RC" = 0 ] && [ "$TOTAL" = 3000 ] && [ $((n1 - n0)) = 3000 ] && [ $((c1 - c0)) = 0 ] &&
	   [ $((e1 - e0)) = 0 ]; then
		ok checksum-ipv$fam
	else
		bad checksum-ipv$fam "sent ${TOTAL:-?}; the stack took $((n1 - n0)) (NoPorts), checksum errors $((c1 - c0)), errors $((e1 - e0)); $(why_gen)"
	fi
}
case_checksum_ipv4() { csum_case 4; }
case_checksum_ipv6() { csum_case 6; }

# ---- 7. rate limit and duration ------------------------------------------------------------
case_rate() {
	local got ticks
	sink_load
	run_gen rate $V4 --rate 20000 --duration 2
	sink_read "$tmp/s7"
	got=$(sget "$tmp/s7" 'd["pkts"]')
	ticks=$(grep -c ' pps (' "$OUT")
	echo "# --rate 20000 --duration 2: sent ${TOTAL:-?} in $MS ms, received ${got:-?}; per second: $(grep ' pps (' "$OUT" | sed 's/ (.*//' | tr -s ' ' | tr '\n' ';')"
	if [ "$RC" = 0 ] && [ -n "$TOTAL" ] && [ "$TOTAL" -ge 20000 ] && [ "$TOTAL" -le 80000 ] &&
	   within "$got" "$TOTAL" && [ "$ticks" -ge 2 ]; then
		ok rate
	else
		bad rate "sent ${TOTAL:-?} (want 20000-80000: 20000 pps for 2 s within 2x), received ${got:-?}, $ticks per-second lines; $(why_gen)"
	fi
	if [ "$MS" -ge 1800 ] && [ "$MS" -le 5000 ]; then
		ok duration
	else
		bad duration "--duration 2 ran $MS ms"
	fi
}

# --start-at: the sending waits for the time (generators started one by one
# send together); a time already past: at once, said.
case_start_at() {
	local at
	at=$(python3 -c 'import time; print("%.6f" % (time.monotonic() + 1.0))')
	run_gen start-at $V4 --rate 1000 --duration 0.3 --start-at "$at"
	if [ "$RC" = 0 ] && [ "$MS" -ge 1250 ] && [ "$MS" -le 4000 ] && ! grep -q 'late' "$ERR"; then
		ok start-at "1 s ahead: ran $MS ms (the wait, then 0.3 s)"
	else
		bad start-at "exit $RC, ran $MS ms (want 1300 or so), $(tail -1 "$ERR")"
	fi
	at=$(python3 -c 'import time; print("%.6f" % (time.monotonic() - 1.0))')
	run_gen start-late $V4 --rate 1000 --duration 0.3 --start-at "$at"
	if [ "$RC" = 0 ] && [ "$MS" -le 1200 ] && grep -q '^ucpumap-gen: --start-at: 1.[0-9]* s late' "$ERR"; then
		ok start-at-past "at once, said: $(grep -o 'start-at: [0-9.]* s late' "$ERR")"
	else
		bad start-at-past "exit $RC, ran $MS ms, said: $(tail -1 "$ERR")"
	fi
}

# ---- 8. the neighbour table ------------------------------------------------------------------
case_neighbour_resolved() {
	local got
	sink_load
	ip -n "$gen" neigh flush dev vg 2>/dev/null
	run_gen neigh --dst-ip $D4 --dst-port $DPORT --count 1000
	sink_read "$tmp/s8"
	got=$(sget "$tmp/s8" 'd["pkts"]')
	if [ "$RC" = 0 ] && grep -q "^ucpumap-gen: vg -> $vdmac: IPv4 UDP $G4:1024 -> $D4:$DPORT" "$OUT" &&
	   [ "$got" = 1000 ]; then
		ok neighbour-resolved
		echo "#   $(head -1 "$ERR")"
	else
		bad neighbour-resolved "want $vdmac from $G4 (the route's source): $(head -1 "$OUT"); received ${got:-?} of 1000; $(why_gen)"
	fi
}

case_neighbour_resolved_ipv6() {
	ip -n "$gen" -6 neigh flush dev vg 2>/dev/null
	run_gen neigh6 --dst-ip $D6 --dst-port $DPORT --count 10
	if [ "$RC" = 0 ] && grep -q "^ucpumap-gen: vg -> $vdmac: IPv6 UDP $G6:1024 -> $D6:" "$OUT"; then
		ok neighbour-resolved-ipv6
	else
		bad neighbour-resolved-ipv6 "$(head -1 "$OUT"); $(why_gen)"
	fi
}

case_neighbour_silent() {
	run_gen neigh-silent --dst-ip 10.204.0.99 --count 10
	if [ "$RC" = 1 ] && grep -q "10.204.0.99 did not answer on vg.*give --dst-mac" "$ERR" && [ "$MS" -lt 5000 ]; then
		ok neighbour-silent
		echo "#   exit 1 after $MS ms: $(head -1 "$ERR")"
	else
		bad neighbour-silent "a destination that does not answer: exit $RC after $MS ms (want 1), said: $(head -2 "$ERR" | tr '\n' ' ')"
	fi
}

# ---- 9. the AF_XDP and the loop engines ----------------------------------------------------
# engine_ipv4 ENGINE BANNER: every frame, in order, each flow its share.
engine_ipv4() {
	local e=$1 banner=$2 r ports want
	sink_load
	run_gen $e-4 $V4 --engine $e --count 20000 --flows 8 --seq --src-port 6000
	sink_read "$tmp/s9$e"
	r=$(sget "$tmp/s9$e" '"%d %d %d" % (d["v4"], d["seq_in_order"], d["seq_gaps"])')
	ports=$(sget "$tmp/s9$e" 'sorted((int(k), v) for k, v in d["ports"].items())')
	want=$("$PY" -c 'print(sorted((6000 + i, 2500) for i in range(8)))')
	if [ "$RC" = 0 ] && [ "$TOTAL" = 20000 ] && [ "$r" = "20000 20000 0" ] && [ "$ports" = "$want" ] &&
	   grep -q "$banner" "$OUT"; then
		ok $e-ipv4
		echo "# $(grep '^total' "$OUT") ($(grep -o "$banner.*" "$OUT"))"
	else
		bad $e-ipv4 "sent ${TOTAL:-?} of 20000; received, in order, out of order: ${r:-?} (want 20000 20000 0); ports ${ports:-none}; $(why_gen)"
	fi
}
case_xsk_ipv4() { engine_ipv4 xsk 'xsk engine on queue 0'; }
case_loop_ipv4() { engine_ipv4 loop 'loop engine'; }

# ---- 10. send times ------------------------------------------------------------------------
# A socket in the receiver reads each datagram: sequence number in the first
# 8 bytes, send time in the next 8; CLOCK_MONOTONIC is one clock for both
# namespaces. Any datagram with a bad checksum never reaches it.
stamp_rx() {
	cat > "$tmp/stamp_rx.py" <<'EOF'
import json, os, socket, struct, sys, time
host, port, want, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind((host, port))
s.settimeout(10)
open(out + ".ready", "w").close()
seqs, ages = set(), []
try:
    while len(seqs) < want:
        b = s.recv(2048)
        now = time.monotonic_ns()
        seq, sent = struct.unpack("!QQ", b[:16])
        seqs.add(seq)
        ages.append(now - sent)
except socket.timeout:
    pass
r = {"got": len(ages), "distinct": len(seqs), "max_seq": max(seqs, default=-1),
     "min_age": min(ages, default=-1), "max_age": max(ages, default=-1)}
json.dump(r, open(out + ".tmp", "w"))
os.rename(out + ".tmp", out)
EOF
}
case_stamp() {
	local e r p n=2000
	lib_need engine-default
	stamp_rx
	for e in live loop xsk packet; do
		if [ "$e" = live ] && [ -n "$LIVE" ]; then
			skip stamp-live "this kernel refuses the live-frame test run ($LIVE)"
			continue
		fi
		sink_load pass
		rm -f "$tmp/stamp-$e.json" "$tmp/stamp-$e.json.ready"
		ip netns exec "$dut" "$PY" "$tmp/stamp_rx.py" $D4 $DPORT $n "$tmp/stamp-$e.json" &
		p=$!
		lib_pid $p
		wait_file "$tmp/stamp-$e.json.ready" 50
		run_gen stamp-$e $V4 --engine $e --count $n --stamp --rate 50000
		lib_wait $p
		r=$(jget "$tmp/stamp-$e.json" '"%d %d %d %d" % (d["got"], d["distinct"], d["max_seq"], 0 <= d["min_age"] and d["max_age"] < 10**9)')
		if [ "$RC" = 0 ] && [ "$TOTAL" = $n ] && [ "$r" = "$n $n $((n - 1)) 1" ] &&
		   grep -q 'send times' "$OUT"; then
			ok stamp-$e "$(jget "$tmp/stamp-$e.json" '"send to socket %.0f to %.0f us" % (d["min_age"] / 1e3, d["max_age"] / 1e3)')"
		else
			bad stamp-$e "got, distinct, last sequence, ages within [0, 1 s): ${r:-?} (want $n $n $((n - 1)) 1); $(cat "$tmp/stamp-$e.json" 2> /dev/null); $(why_gen)"
		fi
	done
}

# engine_checksum_ipv6 ENGINE: the receiver's stack takes every frame.
engine_checksum_ipv6() {
	local e=$1 n0 c0 e0 n1 c1 e1
	sink_load pass
	read -r n0 c0 e0 <<< "$(snmp 6)"
	run_gen $e-csum6 $V6 --engine $e --count 2000 --flows 5 --seq --size 301 --rate 50000
	sleep 0.2
	read -r n1 c1 e1 <<< "$(snmp 6)"
	if [ "$RC" = 0 ] && [ "$TOTAL" = 2000 ] && [ $((n1 - n0)) = 2000 ] && [ $((c1 - c0)) = 0 ] && [ $((e1 - e0)) = 0 ]; then
		ok $e-checksum-ipv6
	else
		bad $e-checksum-ipv6 "sent ${TOTAL:-?}; the stack took $((n1 - n0)) (NoPorts), checksum errors $((c1 - c0)), errors $((e1 - e0)); $(why_gen)"
	fi
}
case_xsk_checksum_ipv6() { engine_checksum_ipv6 xsk; }
case_loop_checksum_ipv6() { engine_checksum_ipv6 loop; }

# ---- 10. signals ------------------------------------------------------------------------------
# link_lost TAG HOW ENGINE-ARGS...: 1.2 s into an 8 s run, the peer set
# down (HOW down), its XDP program taken off (HOW xdp: veth then takes
# no redirected frames) or vg's MTU lowered below the frames (HOW mtu).
link_lost() {
	local tag=$1 how=$2 gpid t0 rc ms want="vg went down or lost its carrier"
	shift 2
	[ "$how" = xdp ] && want="vg no longer takes redirected frames"
	[ "$how" = mtu ] && want="vg now has MTU 1000, too small for frames of --size 1400"
	ip netns exec "$gen" timeout 20 "$GEN" --dev vg $V4 --rate 100000 --duration 8 "$@" \
		> "$tmp/ll.out" 2> "$tmp/ll.err" &
	gpid=$!
	lib_pid $gpid
	sleep 1.2
	t0=$(date +%s%N)
	case $how in
	xdp) ip -n "$dut" link set vd xdp off ;;
	mtu) ip -n "$gen" link set vg mtu 1000 ;;
	*) ip -n "$dut" link set vd down ;;
	esac
	lib_wait "$gpid"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	ip -n "$dut" link set vd up
	ip -n "$gen" link set vg mtu 1500
	[ "$how" = xdp ] && sink_load
	if [ "$rc" = 1 ] && [ "$ms" -lt 2500 ] && grep -q "$want" "$tmp/ll.err"; then
		ok "link-lost-$tag" "exit 1, $ms ms after the peer's change ($how)"
	else
		bad "link-lost-$tag" "exit $rc after $ms ms (want 1 within 2.5 s): $(tail -2 "$tmp/ll.err" | tr '\n' ' ')"
	fi
	# The carrier back before the next case.
	for _ in $(seq 50); do
		ip -n "$gen" link show vg | grep -q 'LOWER_UP' && break
		sleep 0.1
	done
}
case_link_lost() {
	sink_load
	link_lost default down
	link_lost packet down --engine packet
	link_lost mtu mtu --size 1400
	if kernel_at_least 6 3; then
		link_lost xdp-off xdp
	else
		skip link-lost-xdp-off "xdp-features need Linux 6.3, this is $(uname -r)"
	fi
}

# The live and loop engines refuse a device that takes no redirected
# frames (vd without its program: veth's xdp-features lack ndo-xmit),
# where the kernel says (Linux 6.3); the xsk engine sends there.
case_no_xmit() {
	local e
	lib_need engine-default	# LIVE
	ip -n "$dut" link set vd xdp off
	for e in live loop; do
		if [ "$e" = live ] && [ -n "$LIVE" ]; then
			skip "no-xmit-$e" "this kernel refuses the live engine ($LIVE)"
			continue
		fi
		if ! kernel_at_least 6 3; then
			skip "no-xmit-$e" "xdp-features need Linux 6.3, this is $(uname -r)"
			continue
		fi
		run_gen no-xmit-$e $V4 --engine $e --count 1000
		if [ "$RC" = 1 ] && grep -q "vg takes no frames redirected by XDP" "$ERR" && [ -z "$TOTAL" ]; then
			ok "no-xmit-$e" "refused: $(head -c 90 "$ERR")"
		else
			bad "no-xmit-$e" "$(why_gen)"
		fi
	done
	run_gen no-xmit-xsk $V4 --engine xsk --count 1000
	if [ "$RC" = 0 ] && [ "$TOTAL" = 1000 ]; then
		ok "no-xmit-xsk" "the xsk engine sends: $TOTAL"
	else
		bad "no-xmit-xsk" "$(why_gen)"
	fi
	sink_load
}

case_sigterm() {
	local gpid t0 rc ms got total
	sink_load
	ip netns exec "$gen" timeout 20 "$GEN" --dev vg $V4 --rate 100000 > "$tmp/term.out" 2> "$tmp/term.err" &
	gpid=$!
	lib_pid $gpid
	sleep 1.2
	tap=$(ip -n "$gen" -o link show | grep -c ': ucmgen')
	t0=$(date +%s%N)
	kill -TERM "$gpid" 2>/dev/null
	# timeout(1) passes SIGTERM on to the generator.
	lib_wait "$gpid"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	sink_read "$tmp/s9"
	got=$(sget "$tmp/s9" 'd["pkts"]')
	total=$(sed -n 's/^total: \([0-9]*\) packets.*/\1/p' "$tmp/term.out")
	if [ "$rc" = 0 ] && [ -n "$total" ] && [ "$total" -gt 0 ] && [ "$ms" -lt 2000 ] && within "$got" "$total"; then
		ok sigterm
	else
		bad sigterm "exit $rc after $ms ms (want 0 within 2 s), total ${total:-none}, received ${got:-?}: $(tail -2 "$tmp/term.err" | tr '\n' ' ')"
	fi
}

# The tap device that keeps the program in the kernel's XDP dispatcher
# lives only as long as the generator, also when it is killed.
case_sigkill_leaves_nothing() {
	local gpid during after
	lib_need engine-default sigterm
	if [ -n "$LIVE" ]; then
		skip sigkill-leaves-nothing "only the live engine makes a tap, and this kernel refuses its test run ($LIVE)"
		return
	fi
	ip netns exec "$gen" "$GEN" --dev vg $V4 --rate 1000 --duration 20 > /dev/null 2>&1 &
	gpid=$!
	lib_pid $gpid
	sleep 0.5
	during=$(ip -n "$gen" -o link show | grep -c ': ucmgen')
	kill -9 "$gpid"
	lib_wait "$gpid" 2>/dev/null
	sleep 0.2
	after=$(ip -n "$gen" -o link show | grep -c ': ucmgen')
	if [ "$tap" = 1 ] && [ "$during" = 1 ] && [ "$after" = 0 ]; then
		ok sigkill-leaves-nothing
	else
		bad sigkill-leaves-nothing "ucmgen* devices while running: $tap and $during (want 1), after SIGKILL: $after (want 0)"
	fi
}

# The loop engine's devices, program and frames live in a network
# namespace that only the generator's file descriptors hold: killed, it
# goes, and the traffic stops at once.
case_sigkill_loop() {
	local gpid during a b progs seen
	lib_need sigterm
	sink_load
	ip netns exec "$gen" "$GEN" --dev vg $V4 --engine loop --rate 100000 --duration 20 > /dev/null 2>&1 &
	gpid=$!
	lib_pid $gpid
	sleep 0.5
	seen=$(ip -n "$gen" -o link show | grep -c ': ucmloop')
	sink_read "$tmp/sk1"
	during=$(sget "$tmp/sk1" 'd["pkts"]')
	kill -9 "$gpid"
	lib_wait "$gpid" 2>/dev/null
	sleep 0.5
	sink_read "$tmp/sk2"
	sleep 0.5
	sink_read "$tmp/sk3"
	a=$(sget "$tmp/sk2" 'd["pkts"]')
	b=$(sget "$tmp/sk3" 'd["pkts"]')
	progs=unknown
	if command -v bpftool > /dev/null; then
		progs=$(bpftool prog show 2> /dev/null | grep -c 'name ucm_gen_loop')
	fi
	if [ -n "$during" ] && [ "$during" -gt 0 ] && [ -n "$a" ] && [ "$a" = "$b" ] && [ "$seen" = 0 ] &&
	   { [ "$progs" = 0 ] || [ "$progs" = unknown ]; }; then
		ok sigkill-loop "received $during while it ran, nothing from 0.5 s after SIGKILL; loop programs left: $progs"
	else
		bad sigkill-loop "received ${during:-?} while it ran (want some); after SIGKILL ${a:-?} then ${b:-?} (want no change); loop programs left: $progs (want 0); its devices in vg's namespace: $seen (want 0)"
	fi
}

# ---- 11. bad flags ---------------------------------------------------------------------------
# bad_flag CASE STATUS REGEX [runner...] -- ARGS...
bad_flag() {
	local c=$1 want=$2 re=$3 rc
	shift 3
	local runner=()
	while [ "$1" != -- ]; do runner+=("$1"); shift; done
	shift
	lib_run ip netns exec "$gen" timeout 10 "${runner[@]}" "$GEN" "$@" > "$tmp/bf.out" 2> "$tmp/bf.err"
	rc=$?
	if [ $rc = "$want" ] && grep -Eq -- "$re" "$tmp/bf.err" && ! grep -q '^total' "$tmp/bf.out"; then
		ok bad-flag-$c
		echo "#   exit $rc: $(head -1 "$tmp/bf.err")"
	else
		bad bad-flag-$c "ucpumap-gen $* exited $rc (want $want), said: $(head -3 "$tmp/bf.err" | tr '\n' ' ')(want /$re/)"
	fi
}
case_bad_flags() {
	local M
	M="--dst-mac $vdmac"
	bad_flag missing-dev 2 "--dev IFACE is required" -- $M
	bad_flag unknown-option 2 "unrecognized option|Try 'ucpumap-gen --help'" -- --dev vg $M --frobnicate
	bad_flag extra-argument 2 "unexpected argument 'extra'" -- --dev vg $M extra
	bad_flag size-too-small 2 "--size: '10' is not a whole number between 14 and 9230" -- --dev vg $M --size 10
	bad_flag size-too-big 2 "--size 4000: the live engine's frames hold 3408 bytes at most: give --engine packet" -- --dev vg $M --size 4000
	bad_flag size-too-big-packet 2 "--size: '9231' is not a whole number between 14 and 9230" -- --dev vg $M --engine packet --size 9231
	bad_flag size-below-ipv4-udp 2 "an IPv4 UDP frame needs at least 42 bytes" -- --dev vg $M --size 41
	bad_flag size-below-ipv6-udp 2 "an IPv6 UDP frame needs at least 62 bytes" -- --dev vg $M -6 --size 61
	bad_flag size-below-seq 2 "with --seq needs at least 50 bytes" -- --dev vg $M --seq --size 49
	bad_flag flows-zero 2 "--flows: '0' is not a whole number between 1 and 65535" -- --dev vg $M --flows 0
	bad_flag flows-past-65535 2 "runs past port 65535" -- --dev vg $M --src-port 65535 --flows 2
	bad_flag batch-zero 2 "--batch: '0' is not a whole number between 1 and 256" -- --dev vg $M --batch 0
	bad_flag batch-257 2 "--batch: '257' is not a whole number between 1 and 256" -- --dev vg $M --batch 257
	bad_flag rate-negative 2 "--rate: '-5' is not a whole number" -- --dev vg $M --rate -5
	bad_flag duration-zero 2 "--duration: '0' is not a positive number of seconds" -- --dev vg $M --duration 0
	bad_flag count-zero 2 "--count: '0' is not a whole number" -- --dev vg $M --count 0
	bad_flag bad-mac 2 "--dst-mac: '02:00:zz:00:00:01' is not a MAC address" -- --dev vg --dst-mac 02:00:zz:00:00:01
	bad_flag bad-ip 2 "--dst-ip: '10.1.2' is not an IPv4 or IPv6 address" -- --dev vg --dst-ip 10.1.2
	bad_flag mixed-families 2 "is IPv4 but --dst-ip fd00::1 is IPv6" -- --dev vg --src-ip 10.0.0.1 --dst-ip fd00::1 $M
	bad_flag ipv6-flag-with-ipv4 2 "-6 asks for IPv6 but 10.0.0.2 is an IPv4 address" -- --dev vg -6 --dst-ip 10.0.0.2 $M
	bad_flag no-destination 2 "give --dst-mac MAC, or --dst-ip B" -- --dev vg
	bad_flag queue-without-xsk 2 "--queue is for --engine xsk" -- --dev vg $M --queue 1
	bad_flag engine-unknown 2 "--engine: 'dpdk' is not live, loop, xsk or packet" -- --dev vg $M --engine dpdk
	bad_flag size-too-big-loop 2 "--size 4000: the loop engine's frames hold 3408 bytes at most" -- --dev vg $M --engine loop --size 4000
	bad_flag cpu-out-of-range 2 "--cpu: CPU 999 is not online" -- --dev vg $M --cpu 999
	bad_flag unknown-interface 1 "no interface named 'nosuchif0'" -- --dev nosuchif0 $M
	bad_flag not-ethernet 1 "lo: not an Ethernet device" -- --dev lo $M
	bad_flag xsk-missing-queue 1 "cannot bind an AF_XDP socket to vg queue 5.*no such queue" -- --dev vg $M --engine xsk --queue 5 --count 10
	# Down, or its peer down: a redirect out of vg would fail after the
	# program counted it sent.
	ip -n "$dut" link set vd down
	bad_flag peer-down 1 "vg is up but has no carrier: nothing sent would leave" -- --dev vg $M --count 10
	ip -n "$gen" link set vg down
	bad_flag dev-down 1 "vg is down: nothing sent would leave; ip link set vg up" -- --dev vg $M --count 10
	ip -n "$gen" link set vg up
	ip -n "$dut" link set vd up
	for _ in $(seq 50); do
		[ "$(ip netns exec "$gen" cat /sys/class/net/vg/carrier 2> /dev/null)" = 1 ] && break
		sleep 0.1
	done
	if command -v setpriv > /dev/null; then
		bad_flag not-root 1 "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups -- --dev vg $M
		bad_flag loop-no-namespace 1 "cannot make the loop engine's network namespace" \
			setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin -- --dev vg $M --engine loop --count 10
	else
		skip bad-flag-not-root "no setpriv to drop root with"
		skip bad-flag-loop-no-namespace "no setpriv to drop CAP_SYS_ADMIN with"
	fi
}

case_cpu_flag() {
	run_gen cpu $V4 --cpu 0 --count 100
	if [ "$RC" = 0 ] && [ "$TOTAL" = 100 ] && grep -q 'on CPU 0$' "$OUT"; then
		ok cpu-flag
	else
		bad cpu-flag "--cpu 0: $(head -1 "$OUT"); $(why_gen)"
	fi
}

# ---- the end: nothing left ---------------------------------------------------------------
case_nothing_left() {
	local l p now
	sleep 0.2
	# In the generator's namespace: no ucmgen tap device, no XDP program, no
	# process; then the cleanup must take both namespaces.
	l=$(left_in "$gen" vg)
	l="${l:+$l; }"
	p=$(ip netns pids "$gen" 2>/dev/null | tr '\n' ' ')
	[ -n "$p" ] && l="$l processes in the generator's namespace: $p;"
	lib_cleanup_check
	if [ -z "$l" ] && [ -z "$lib_left" ]; then
		ok nothing-left
	else
		bad nothing-left "${l}${lib_left:+ after the cleanup: $lib_left}"
	fi
	now=$(date +%s%N)
	printf '# total: %d.%02d s\n' $(((now - T0) / 1000000000)) $(((now - T0) / 10000000 % 100))
}

lib_run_cases "$@"
