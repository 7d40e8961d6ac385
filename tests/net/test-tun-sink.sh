#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The tun sink end to end (tun_sink.c): cpumap workers write batches into a
# tun/tap, the kernel delivers them to UDP sockets. Root: it makes a network
# namespace, and the program makes its devices inside it. Bounded in time;
# the namespace, its devices and any process left in it go on every exit.
#
# Adds three checks of its own: the program did not crash or time out, the
# namespace's UDP counters (/proc/net/snmp, snmp6) grew by exactly the
# datagrams the program read, and no device is left in the namespace.
set -u
BUILD=${BUILD:-build}
name=test-tun-sink
prog=$BUILD/tests/net/tun_sink
NS=ucm-tun-$$
LIMIT=${TUN_SINK_TIMEOUT:-120}
tmp=$(mktemp -d)

runner=
cleanup() {
	local pids
	# timeout passes TERM on to the program and reaps it.
	if [ -n "$runner" ]; then
		kill -TERM "$runner" 2>/dev/null
		wait "$runner" 2>/dev/null
	fi
	pids=$(ip netns pids "$NS" 2>/dev/null)
	# Only processes inside our namespace: ours.
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "FAIL: $name: interrupted"; exit 1' HUP INT TERM

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: $name: needs root (network namespace, tun devices)"
	exit 0
fi
if [ ! -x "$prog" ]; then
	echo "FAIL: $name: $prog is not built (run make)"
	exit 0
fi
if ! ip netns add "$NS" 2> "$tmp/err"; then
	echo "FAIL: $name: ip netns add: $(cat "$tmp/err")"
	exit 0
fi

# Udp InDatagrams + RcvbufErrors, Udp6 likewise, inside the namespace.
udp_delivered() {
	ip netns exec "$NS" awk '
		FILENAME ~ /snmp6$/ { if ($1 == "Udp6InDatagrams" || $1 == "Udp6RcvbufErrors") s += $2; next }
		$1 == "Udp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Udp:" && hdr { s += $col["InDatagrams"] + $col["RcvbufErrors"] }
		END { print s + 0 }' /proc/net/snmp /proc/net/snmp6
}

before=$(udp_delivered)
# In the background: a signal to this script interrupts `wait` at once,
# and the trap takes the program down with the namespace.
timeout -k 5 "$LIMIT" ip netns exec "$NS" "$prog" > "$tmp/out" 2> "$tmp/err" &
runner=$!
wait $runner
rc=$?
runner=
after=$(udp_delivered)

grep -E '^(PASS|FAIL|SKIP): ' "$tmp/out"
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	echo "FAIL: $name: tun_sink timed out after ${LIMIT}s; stderr: $(tail -5 "$tmp/err" | tr '\n' ' ')"
elif [ $rc -ne 0 ] && ! grep -q '^FAIL: ' "$tmp/out"; then
	echo "FAIL: $name: tun_sink exited with status $rc; stderr: $(tail -5 "$tmp/err" | tr '\n' ' ')"
elif [ $rc -ne 0 ]; then
	# The program's FAIL lines say why; its log helps.
	sed 's/^/    /' "$tmp/err" | tail -20
fi

total=$(sed -n 's/^# udp_received_total //p' "$tmp/out")
if [ -z "$total" ]; then
	echo "FAIL: $name/snmp_total: the program did not report its count"
elif [ $((after - before)) -eq "$total" ]; then
	echo "PASS: $name/snmp_total"
else
	echo "FAIL: $name/snmp_total: the namespace's UDP counters grew by $((after - before)), the program read $total datagrams"
fi

left=$(ip netns exec "$NS" ip -o link show 2>/dev/null | awk -F': ' '$2 != "lo" { print $2 }' | tr '\n' ' ')
if [ -z "$left" ]; then
	echo "PASS: $name/no_leftovers"
else
	echo "FAIL: $name/no_leftovers: devices left in the namespace: $left"
fi
exit 0
