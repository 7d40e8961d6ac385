#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd as a systemd service (apps/ucpumapd/ucpumapd@.service):
#
#   unit-verify     systemd-analyze verify finds nothing wrong with the unit
#                   (its ExecStart pointed at the built daemon, its man page
#                   on MANPATH)
#   notify-ready    run as Type=notify runs it (NOTIFY_SOCKET, WATCHDOG_USEC,
#                   the unit's capability bounding set):
#                   READY=1 comes once forwarding starts, after the start
#                   line, with a STATUS naming the interface
#   notify-watchdog WATCHDOG=1 about twice per watchdog period while it runs
#   notify-stopping STOPPING=1 when SIGTERM stops it, exit 0 and the audit
#
# The notifications are read by a datagram socket of our own, as systemd's
# would. The notify cases share one run of the daemon, started at the
# first of them. Root for the daemon (namespaces, XDP, tun). One
# PASS/FAIL/SKIP line per case; the script exits 0.
set -u
BUILD=${BUILD:-build}
name=test-systemd
cases="unit-verify notify-ready notify-watchdog notify-stopping"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
daemon=$(cd "$BUILD" 2>/dev/null && pwd)/ucpumapd
unit=$root/apps/ucpumapd/ucpumapd@.service
gen=ucmsg$$
dut=ucmsd$$
. "$here/../lib.sh"

# ---- the unit ---------------------------------------------------------------
case_unit_verify() {
	if ! command -v systemd-analyze > /dev/null; then
		skip unit-verify "no systemd-analyze (Debian's systemd package)"
	elif [ ! -x "$daemon" ]; then
		skip unit-verify "no $daemon (make)"
	else
		mkdir -p "$tmp/man/man8"
		cp "$root/man/ucpumapd.8" "$tmp/man/man8/"
		sed "s|/usr/sbin/ucpumapd|$daemon|" "$unit" > "$tmp/ucpumapd@vd.service"
		if MANPATH=$tmp/man systemd-analyze verify "$tmp/ucpumapd@vd.service" > "$tmp/verify.log" 2>&1; then
			ok unit-verify
		else
			bad unit-verify "$(head -3 "$tmp/verify.log" | tr '\n' ' ')"
		fi
	fi
}

# ---- the protocol -------------------------------------------------------------
# notify_run: the daemon as systemd runs it, a listener on its notify
# socket ($tmp/notes); back once READY=1 came (or 2 s).
notify_run() {
	local caps lpid
	skip_unless_root "namespaces, XDP, tun"
	if [ ! -x "$daemon" ] || [ -z "$PY" ]; then
		skip notify "needs $daemon (make) and python3"
		exit 0
	fi
	if ! veth_pair "$gen" "$dut" vg vd 10.205.0.1/24 10.205.0.2/24 2> "$tmp/setup.err"; then
		bad setup "cannot build the namespaces: $(head -3 "$tmp/setup.err" | tr '\n' ' ')"
		exit 0
	fi

	# Each datagram on the socket, one line per field, after the seconds since
	# the listener began ("0.512 WATCHDOG=1"); the listener ends by itself.
	sock=$tmp/notify.sock
	"$PY" - "$sock" "$tmp/notes" > "$tmp/listen.log" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.5)
t0 = time.monotonic()
with open(sys.argv[2], "w", buffering=1) as out:
    while time.monotonic() - t0 < 20:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            continue
        for field in msg.split("\n"):
            if field:
                out.write("%.3f %s\n" % (time.monotonic() - t0, field))
EOF
	lpid=$!
	lib_pid $lpid
	wait_file "$sock" 50
	# The watchdog at 0.4 s: WATCHDOG=1 every 0.2 s. Within the unit's
	# capability bounding set, as systemd would start it (setpriv's spelling:
	# CAP_NET_ADMIN -> +net_admin).
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z ' 'a-z\n' | sed -n 's/^cap_/+/p' | paste -sd, -)
	NOTIFY_SOCKET=$sock WATCHDOG_USEC=400000 ip netns exec "$dut" setpriv --bounding-set "-all,$caps" \
		"$daemon" --dev vd --tun ucmst0 --cpus 0,1 --interval 0 --duration 20 > "$tmp/d.out" 2> "$tmp/d.err" &
	dpid=$!
	lib_pid $dpid
	if ! wait_line "$tmp/d.out" '^ucpumapd: ' 50 "$dpid"; then
		bad notify-ready "ucpumapd did not start: $(tail -3 "$tmp/d.err" | tr '\n' ' ')"
		exit 0
	fi
	wait_line "$tmp/notes" 'READY=1' 20
}

case_notify_ready() {
	lib_once notify_run
	if grep -q ' READY=1$' "$tmp/notes" && grep -q ' STATUS=forwarding vd to ucmst0$' "$tmp/notes"; then
		ok notify-ready
	else
		bad notify-ready "want READY=1 and STATUS=forwarding vd to ucmst0; got: $(tr '\n' ' ' < "$tmp/notes")"
	fi
}

case_notify_watchdog() {
	local n
	lib_once notify_run
	sleep 1.2
	n=$(grep -c ' WATCHDOG=1$' "$tmp/notes")
	# 1.2 s at one per 0.2 s: 6, give or take the loop's 0.1 s steps.
	if [ "$n" -ge 4 ] && [ "$n" -le 9 ]; then
		ok notify-watchdog "$n in 1.2 s at WATCHDOG_USEC=400000"
	else
		bad notify-watchdog "$n WATCHDOG=1 in 1.2 s at WATCHDOG_USEC=400000 (want about 6)"
	fi
}

case_notify_stopping() {
	local rc
	lib_once notify_run
	kill -TERM "$dpid"
	for _ in $(seq 50); do kill -0 "$dpid" 2> /dev/null || break; sleep 0.1; done
	lib_wait "$dpid"
	rc=$?
	sleep 0.6
	if grep -q ' STOPPING=1$' "$tmp/notes" && grep -q ' STATUS=stopping: SIGTERM$' "$tmp/notes" &&
	   [ "$rc" = 0 ] && grep -q '^audit: every frame came home$' "$tmp/d.out"; then
		ok notify-stopping
	else
		bad notify-stopping "want STOPPING=1, STATUS=stopping: SIGTERM, exit 0 and the audit line; got: $(tail -3 "$tmp/notes" | tr '\n' ' '); exit $rc; $(tail -1 "$tmp/d.out")"
	fi
}

lib_run_cases "$@"
