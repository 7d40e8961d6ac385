#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# AF_XDP receive path on a veth pair between two namespaces: the steering
# program, the XSK socket, the RX thread and the cpumap
# (tests/progs/xsk_rx.c), with UDP sent by an ordinary socket from the peer
# namespace, in native and in generic (skb) XDP mode. Then: SIGKILL leaves
# no program (the kernel takes it off with the bpf_link) and a restart
# works; nothing is left attached.
#
#   recv                receive, steer, shut down: xsk_rx's own lines
#   no-program-left     after recv, nothing attached to vd
#   generic-mode        the same in generic (skb) mode
#   app-callbacks       the application's steering and verdict callbacks
#   own-program         the application's own XDP program and XSKMAP, kept
#   own-program-detached    after it, nothing attached to vd
#   rx-thread-fault     an RX thread that fails while running (the
#                       library's debug switch): ucm_dp__check() names it
#                       within a second, and the stop still accounts for
#                       every packet and frame
#   rx-thread-fault-own     the same with the application's XSKMAP: the
#                       failed thread's socket is out of it
#   rx-thread-fault-at-start    the RX thread failing at its first poll,
#                       while ucm_dp__start() fills the map: not put back
#   stop-drains-ring    what waits on the RX ring at the stop is delivered
#   stop-drains-long    the same at MTU 9000 with --max-frags 2: packets of
#                       three frames, each dropped as too long, so no batch
#                       delivers; the stop takes the whole ring, counts each
#                       (a packet half taken too) and every frame comes home
#   own-fault-detached  after the two own-map fault cases, nothing attached
#   busy-poll           UCM_DP_F_BUSY_POLL with the interrupts deferred
#   idle-stop           the stop wakes an idle RX thread's sleep: its wake
#                       counter says the stop ended it, not a timeout
#   no-program-after-sigkill    SIGKILL: the program goes with the link
#   restart-after-sigkill       after it, a new run delivers
set -u
BUILD=${BUILD:-build}
name=test-xsk
cases="recv no-program-left generic-mode app-callbacks own-program own-program-detached
rx-thread-fault rx-thread-fault-own rx-thread-fault-at-start stop-drains-ring stop-drains-long
own-fault-detached
busy-poll idle-stop no-program-after-sigkill restart-after-sigkill"
prog=$BUILD/tests/progs/xsk_rx
gen=ucmg$$
dut=ucmd$$
cd "$(dirname "$0")/../.."
. tests/lib.sh
pid=

setup() {
	skip_unless_root "namespaces, XDP"
	[ -x "$prog" ] || { bad build "$prog is not built (make tests)"; exit 0; }
	# Full checksums on the wire, as a NIC would deliver them (veth_pair).
	veth_pair "$gen" "$dut" vg vd 10.201.0.1/24 10.201.0.2/24 || {
		bad setup "cannot build the namespaces"
		exit 0
	}
	# The application's own program (own-program and the own-map fault
	# cases) takes ARP to its socket too: the generator knows vd's MAC from
	# the start, whichever case runs first.
	ip -n "$gen" neigh replace 10.201.0.2 lladdr "$(mac_of "$dut" vd)" dev vg nud permanent
}

send() {	# count: (flow, seq) datagrams from 16 source ports, paced
	ip netns exec "$gen" python3 - "$1" <<'PY'
import socket, struct, sys, time
n = int(sys.argv[1])
socks = []
for f in range(16):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.201.0.1", 20000 + f))
    socks.append(s)
for i in range(n):
    f = i % 16
    socks[f].sendto(struct.pack("!II", f, i // 16) + b"x" * 24, ("10.201.0.2", 9000))
    if i % 64 == 63:
        time.sleep(0.002)
PY
}

start() {	# count [skb]: wait for READY, at most 10 s
	# exec, not a wrapper: $pid must be the program itself (it bounds
	# its own run to 20 s), so that SIGKILL reaches it.
	ip netns exec "$dut" "$prog" vd "$@" > "$tmp/out" 2> "$tmp/err" &
	pid=$!
	lib_pid "$pid"
	wait_line "$tmp/out" READY 100 "$pid" && return 0
	stop_pid "$pid"	# the next case needs vd free
	return 1
}

# detached CASE: CASE passes when nothing is attached to vd.
detached() {
	local l
	l=$(left_in "$dut" vd)
	[ -z "$l" ] && ok "$1" || bad "$1" "$l"
}

case_recv() {
	local rc
	if start 3000; then
		send 3000
		lib_wait "$pid"
		rc=$?
		pid=
		grep -E '^(PASS|FAIL|SKIP): ' "$tmp/out"
		[ $rc -ne 0 ] && ! grep -q '^FAIL' "$tmp/out" &&
			bad run "xsk_rx exited $rc: $(tail -3 "$tmp/err")"
	else
		bad start "xsk_rx did not get ready: $(tail -3 "$tmp/err") $(cat "$tmp/out")"
	fi
}

case_no_program_left() {
	lib_need recv
	detached no-program-left
}

# judge CASE RC CHECK...: CASE passes when each xsk_rx CHECK passed, none
# of its checks failed and it exited 0 (RC, lib_wait's).
judge() {
	local c=$1 rc=$2 k missing=
	shift 2
	for k in "$@"; do
		grep -q "^PASS: xsk_rx/$k\$" "$tmp/out" || missing="$missing $k"
	done
	grep -q '^FAIL' "$tmp/out" && missing="$missing (and a FAIL)"
	[ "$rc" = 0 ] || missing="$missing (exit $rc)"
	if [ -z "$missing" ]; then
		ok "$c"
	else
		bad "$c" "not passed:$missing: $(grep -E '^FAIL' "$tmp/out" | head -3) $(tail -2 "$tmp/err")"
	fi
}

# mode_case CASE MODE CHECK...: xsk_rx in MODE on 1000 datagrams, judged.
mode_case() {
	local c=$1 mode=$2 rc
	shift 2
	rm -f "$tmp/sent"
	if ! start 1000 "$mode" "$tmp/sent"; then
		bad "$c" "xsk_rx did not get ready in mode $mode: $(tail -3 "$tmp/err") $(cat "$tmp/out")"
		return
	fi
	send 1000
	touch "$tmp/sent"	# drain mode waits for it
	lib_wait "$pid"
	rc=$?
	pid=
	judge "$c" $rc "$@"
}

# Generic (skb) mode: metadata or the userspace policy.
case_generic_mode() { mode_case generic-mode skb delivered steering frames-home; }
# The application's steering and verdict callbacks (ucm_dp's options).
case_app_callbacks() {
	mode_case app-callbacks app delivered app-steering app-verdict conservation frames-home
}
# The application's own XDP program and XSKMAP, left in place.
case_own_program() {
	mode_case own-program own delivered steering own-program-kept conservation frames-home
}
case_own_program_detached() {
	lib_need own-program
	detached own-program-detached
}
# An RX thread that fails while running (the library's debug switch):
# ucm_dp__check() names it within a second, and the stop still accounts
# for every packet and frame.
case_rx_thread_fault() {
	mode_case rx-thread-fault fault delivered rx-fault conservation frames-home
}
# The same with the application's XSKMAP: the failed thread's socket is
# out of it (the queue's traffic goes to the kernel's stack, not to nobody).
case_rx_thread_fault_own() {
	mode_case rx-thread-fault-own own-fault delivered rx-fault fault-unredirected \
		own-program-kept conservation frames-home
}
# The same with the RX thread failing at its first poll, while
# ucm_dp__start() puts the sockets into the map: it must not put it back.
case_rx_thread_fault_at_start() {
	mode_case rx-thread-fault-at-start own-start-fault rx-fault fault-unredirected \
		own-program-kept conservation frames-home
}
# What waits on the RX ring when the stop comes (the RX thread held off it
# by the library's debug switch) is delivered by the stop.
case_stop_drains_ring() {
	mode_case stop-drains-ring drain drain delivered conservation frames-home
}
case_stop_drains_long() {
	local c=stop-drains-long rc
	rm -f "$tmp/sent"
	ip -n "$gen" link set vg mtu 9000 && ip -n "$dut" link set vd mtu 9000 || {
		bad $c "cannot set an MTU of 9000 on the veth pair"
		return
	}
	if start 300 drain-long "$tmp/sent"; then
		# 300 datagrams of 8000 bytes: three 4096-byte frames each, 900
		# descriptors on the RX ring (2048) at the stop
		ip netns exec "$gen" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(300):
    s.sendto(b"x" * 8000, ("10.201.0.2", 9000))
    if i % 32 == 31:
        time.sleep(0.002)'
		touch "$tmp/sent"
		lib_wait "$pid"
		rc=$?
		pid=
		judge $c $rc drain-long frames-home
	else
		bad $c "xsk_rx did not get ready: $(tail -3 "$tmp/err") $(cat "$tmp/out")"
	fi
	ip -n "$gen" link set vg mtu 1500
	ip -n "$dut" link set vd mtu 1500
}
case_own_fault_detached() {
	lib_need rx-thread-fault-own rx-thread-fault-at-start
	detached own-fault-detached
}

# Busy polling (UCM_DP_F_BUSY_POLL), the device's interrupts deferred as
# docs/BENCHMARKING.md's NIC runbook has them: the socket carries the
# options, the idle RX thread polls the device, and everything arrives.
case_busy_poll() {
	local vdsys=/sys/class/net/vd
	if ! ip netns exec "$dut" test -e $vdsys/napi_defer_hard_irqs; then
		skip busy-poll "this kernel cannot defer a device's interrupts (no napi_defer_hard_irqs: before 5.10)"
	elif ip netns exec "$dut" sh -c "echo 2 > $vdsys/napi_defer_hard_irqs && echo 200000 > $vdsys/gro_flush_timeout"; then
		mode_case busy-poll busy-poll delivered steering busy-poll conservation frames-home
		ip netns exec "$dut" sh -c "echo 0 > $vdsys/napi_defer_hard_irqs; echo 0 > $vdsys/gro_flush_timeout"
	else
		bad busy-poll "cannot defer vd's interrupts (napi_defer_hard_irqs, gro_flush_timeout)"
	fi
}

# The stop wakes an idle RX thread at once: with no traffic and a sleep no
# timeout ends (a minute, the library's debug switch), the wake counter
# must say the stop ended it. No timing is judged; the stop's time is in
# the message.
case_idle_stop() {
	local rc
	if ! start 0 idle-stop; then
		bad idle-stop "xsk_rx did not get ready: $(tail -3 "$tmp/err") $(cat "$tmp/out")"
		return
	fi
	lib_wait "$pid"
	rc=$?
	pid=
	judge idle-stop $rc stop-wakes-sleep conservation frames-home stop-twice
}

# SIGKILL: the kernel takes the program off with the link's last fd.
case_no_program_after_sigkill() {
	if ! start 100000; then
		bad no-program-after-sigkill "xsk_rx did not get ready: $(tail -3 "$tmp/err")"
		return
	fi
	kill -9 "$pid"
	lib_wait "$pid" 2>/dev/null
	pid=
	if ip -n "$dut" link show vd | grep -q ' xdp'; then
		bad no-program-after-sigkill "left: $(ip -n "$dut" link show vd | grep -o 'prog/xdp.*')"
		ip -n "$dut" link set vd xdp off
	else
		ok no-program-after-sigkill
	fi
}

# The next run starts on a clean interface.
case_restart_after_sigkill() {
	local rc
	lib_need no-program-after-sigkill
	if start 500; then
		send 500
		lib_wait "$pid"
		rc=$?
		pid=
		judge restart-after-sigkill $rc delivered conservation frames-home
	else
		bad restart-after-sigkill "restart did not get ready: $(tail -3 "$tmp/err")"
	fi
}

lib_run_cases "$@"
