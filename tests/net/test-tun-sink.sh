#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The tun sink end to end (tests/progs/tun_sink.c): cpumap workers write
# batches into a tun/tap, the kernel delivers them to UDP sockets. Root: it
# makes a network namespace, and the program makes its devices inside it.
# Bounded in time; the namespace, its devices and any process left in it
# go on every exit.
#
#   tun-sink       tun_sink's run: its cases, one line each; it did not
#                  crash or time out
#   snmp_total     the namespace's UDP counters (/proc/net/snmp, snmp6)
#                  grew by exactly the datagrams the program read
#   no_leftovers   no device is left in the namespace after it
set -u
BUILD=${BUILD:-build}
name=test-tun-sink
cases="tun-sink snmp_total no_leftovers"
prog=$BUILD/tests/progs/tun_sink
NS=ucm-tun-$$
LIMIT=${TUN_SINK_TIMEOUT:-120}
cd "$(dirname "$0")/../.."
. tests/lib.sh

setup() {
	skip_unless_root "network namespace, tun devices"
	if [ ! -x "$prog" ]; then
		echo "FAIL: $name: $prog is not built (run make)"
		exit 0
	fi
	# As it comes, lo down: the program wants it so.
	if ! netns "$NS" 2> "$tmp/err"; then
		echo "FAIL: $name: ip netns add: $(cat "$tmp/err")"
		exit 0
	fi
}

# Udp InDatagrams + RcvbufErrors, Udp6 likewise, inside the namespace.
udp_delivered() {
	ip netns exec "$NS" awk '
		FILENAME ~ /snmp6$/ { if ($1 == "Udp6InDatagrams" || $1 == "Udp6RcvbufErrors") s += $2; next }
		$1 == "Udp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Udp:" && hdr { s += $col["InDatagrams"] + $col["RcvbufErrors"] }
		END { print s + 0 }' /proc/net/snmp /proc/net/snmp6
}

case_tun_sink() {
	local runner rc
	before=$(udp_delivered)
	# In the background: a signal to this script interrupts `wait` at once,
	# and the cleanup takes the program down (timeout passes SIGTERM on to it;
	# whatever is left in the namespace goes with it).
	timeout -k 5 "$LIMIT" ip netns exec "$NS" "$prog" > "$tmp/out" 2> "$tmp/err" &
	runner=$!
	lib_pid $runner
	lib_wait $runner
	rc=$?
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
}

case_snmp_total() {
	local total
	lib_need tun-sink
	total=$(sed -n 's/^# udp_received_total //p' "$tmp/out")
	if [ -z "$total" ]; then
		bad snmp_total "the program did not report its count"
	elif [ $((after - before)) -eq "$total" ]; then
		ok snmp_total
	else
		bad snmp_total "the namespace's UDP counters grew by $((after - before)), the program read $total datagrams"
	fi
}

case_no_leftovers() {
	local left
	lib_need tun-sink
	left=$(left_in "$NS")
	if [ -z "$left" ]; then
		ok no_leftovers
	else
		bad no_leftovers "in the namespace: $left"
	fi
}

lib_run_cases "$@"
