#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd --status IFACE: the running instance's answer on its unix
# socket /run/ucpumap/IFACE.sock, on a veth pair between two namespaces
# (the generator's and the DUT's, where the daemon runs on vd).
#
#   none            no instance: exit 1, "no instance serves vd"
#   bad-name        --status a/b: exit 2, no socket looked for
#   answers         the instance's socket (mode 0660), and its answer:
#                   exit 0, one JSON line, state running, up 1, its pid,
#                   and after 760 datagrams rx, received and delivered
#                   760, no drops, the drops by cause listed; into a
#                   pipe whose reader is gone: exit 1, saying so
#   stopped-none    SIGTERM: exit 0, the socket gone, --status exit 1
#   stopping-gone   the socket goes as the stop begins, not at its end:
#                   with --stats-json into a pipe nobody reads, the stop
#                   waits on it, and the socket is gone while it does
#                   (an instance started meanwhile serves its own)
#   killed-replaced kill -9 leaves the socket: --status says no instance
#                   (exit 1); the next start replaces it and answers with
#                   its own pid; SIGTERM, exit 0, the socket gone
#   user-owned      --user nobody: the socket is nobody's and its group's,
#                   mode 0660 (CAP_CHOWN held for the set-up: the daemon
#                   then runs with no capability left), and nobody's
#                   --status is answered
#   other-namespace an instance on another namespace's vd while one
#                   answers: it runs without a socket, saying so; the
#                   first one's still answers, and stays at the second's
#                   stop; a --status from the second's namespace is
#                   refused, exit 1, naming the first's pid
#   long-answer     the answer larger than its socket takes at once
#                   (tests/progs/fault_shim.c short_send: 1000 bytes a
#                   turn): the rest goes in the next turns, --status
#                   prints all of it (one JSON line, exit 0); into
#                   /dev/full: exit 1, saying stdout refused it
#   cut-answer      an answer that ends before its newline (a fake
#                   instance): --status exits 1 saying it was cut
#   cleanup         nothing outlives the cleanup
#
# Root. Every case prints one PASS/FAIL/SKIP line; the script exits 0.
set -u
BUILD=${BUILD:-build}
name=test-status
cases="none bad-name answers stopped-none stopping-gone killed-replaced user-owned other-namespace long-answer cut-answer cleanup"
here=$(cd "$(dirname "$0")" && pwd)
daemon=$(cd "$BUILD" 2>/dev/null && pwd)/ucpumapd
shim_so=$(cd "$BUILD" 2>/dev/null && pwd)/tests/progs/libfault_shim.so
gen=ucmtg$$
dut=ucmtd$$
tun=ucmt1
sock=/run/ucpumap/vd.sock
. "$here/../lib.sh"
. "$here/daemon.sh"
traffic=$progs/ucpumapd_traffic.py
dpid=

setup() {
	daemon_veth 10.206.0.1 10.206.0.2
	# A socket another instance answers on is left to it: none may run.
	if [ -S "$sock" ] && ip netns exec "$dut" "$daemon" --status vd > /dev/null 2>&1; then
		skip all "another ucpumapd answers on $sock"
		exit 0
	fi
}

# status FILE: --status vd in the DUT, its answer in FILE, its exit status.
status() {
	ip netns exec "$dut" timeout 10 "$daemon" --status vd > "$1" 2> "$1.err"
}

# rm_stale: the socket removed, if no instance answers on it (another
# run's vd may have taken the host-wide path meanwhile).
rm_stale() {
	status "$tmp/stale" || [ $? != 1 ] || rm -f "$sock"
}

# start LOG ARGS...: the daemon on vd, $dpid; fails when it did not start.
start() {
	local log=$1
	shift
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun --cpus 0,1 --filter ipv4 --interval 0 \
		--duration 60 "$@" > "$log" 2> "$log.err" &
	dpid=$!
	lib_pid $dpid
	wait_line "$log" '^ucpumapd: ' 50 "$dpid"
}

# term: SIGTERM to the daemon; its exit status.
term() {
	local rc
	lib_term "$dpid"
	rc=$?
	dpid=
	return $rc
}

J() { jget "$1" "$2"; }

case_none() {
	local rc
	status "$tmp/none"
	rc=$?
	if [ $rc = 1 ] && grep -q "no instance serves vd" "$tmp/none.err" && [ ! -s "$tmp/none" ]; then
		ok none "$(cat "$tmp/none.err")"
	else
		bad none "exit $rc (want 1): $(cat "$tmp/none.err")"
	fi
}

case_bad_name() {
	local rc n why=
	for n in a/b eth0:1 'a b' abcdefghijklmnop; do
		ip netns exec "$dut" "$daemon" --status "$n" > "$tmp/bad" 2> "$tmp/bad.err"
		rc=$?
		[ $rc = 2 ] && grep -q "not an interface name" "$tmp/bad.err" ||
			why="$why '$n': exit $rc (want 2): $(cat "$tmp/bad.err");"
	done
	if [ -z "$why" ]; then ok bad-name "$(cat "$tmp/bad.err")"; else bad bad-name "$why"; fi
}

case_answers() {
	local why= rc sent mode r
	if ! start "$tmp/a.out"; then
		bad answers "ucpumapd did not start: $(tail -3 "$tmp/a.out.err" | tr '\n' ' ')"
		return
	fi
	# At once after the banner (READY=1): the links as they are.
	status "$tmp/a0.json"
	[ "$(J "$tmp/a0.json" 'd["up"]')" = 1 ] || why="right after the start, up $(J "$tmp/a0.json" 'd["up"]') (want 1);"
	mode=$(stat -c %a "$sock" 2> /dev/null)
	[ "$mode" = 660 ] || why="$why $sock: mode ${mode:-none} (want 660);"
	ip netns exec "$gen" timeout 20 "$PY" "$traffic" flows-send --src $G4 --dst $D4 > "$tmp/batch" 2>&1
	sent=$(jget "$tmp/batch" 'd["sent"]')
	for _ in $(seq 30); do
		status "$tmp/a.json"
		rc=$?
		[ "$(J "$tmp/a.json" 'd["delivered"]')" = "${sent:-x}" ] && break
		sleep 0.2
	done
	[ $rc = 0 ] || why="$why exit $rc: $(cat "$tmp/a.json.err");"
	[ "$(wc -l < "$tmp/a.json")" = 1 ] || why="$why $(wc -l < "$tmp/a.json") lines (want 1);"
	r=$(J "$tmp/a.json" '"%s %d %d %d %d %d %d %d" % (d["state"], d["up"], d["pid"], d["rx"], d["received"], d["delivered"], d["drops"], len(d["drops_in"]))')
	[ "$r" = "running 1 $dpid $sent $sent $sent 0 22" ] ||
		[[ "$r" =~ ^running\ 1\ $dpid\ $sent\ $sent\ $sent\ 0\ [1-9][0-9]$ ]] ||
		why="$why answer '$r' (want: running 1 $dpid, rx, received, delivered $sent, 0 drops, the causes);"
	# Its reader gone (--status vd | head, ended): said, exit 1, not a
	# silent death by SIGPIPE (141).
	ip netns exec "$dut" sh -c 'sleep 0.3; exec timeout 10 "$0" --status vd' "$daemon" \
		2> "$tmp/pipe.err" | true
	rc=${PIPESTATUS[0]}
	[ $rc = 1 ] && grep -q "cannot write the answer to standard output: Broken pipe" "$tmp/pipe.err" ||
		why="$why into a closed pipe: exit $rc, $(head -2 "$tmp/pipe.err" | tr '\n' ' ');"
	if [ -z "$why" ] && [ -n "$sent" ]; then
		ok answers "$r"
	else
		bad answers "sent ${sent:-?}: $why"
	fi
}

case_stopped_none() {
	local rc why=
	lib_need answers
	[ -n "$dpid" ] || { bad stopped-none "no daemon from answers"; return; }
	term
	rc=$?
	[ $rc = 0 ] || why="the daemon exited $rc: $(tail -2 "$tmp/a.out.err" | tr '\n' ' ');"
	[ -e "$sock" ] && why="$why $sock is still there;"
	status "$tmp/s"
	rc=$?
	[ $rc = 1 ] && grep -q "no instance serves vd" "$tmp/s.err" ||
		why="$why --status exited $rc: $(cat "$tmp/s.err");"
	if [ -z "$why" ]; then ok stopped-none; else bad stopped-none "$why"; fi
}

case_stopping_gone() {
	local rpid k gone= why=
	mkfifo "$tmp/sg.fifo"
	# Opened at once (a writer's open needs a reader), read never.
	"$PY" -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
open(sys.argv[2], "w").close()
time.sleep(10)' "$tmp/sg.fifo" "$tmp/sg.ready" &
	rpid=$!
	lib_pid $rpid
	wait_file "$tmp/sg.ready" 30
	if ! start "$tmp/sg.out" --stats-json "$tmp/sg.fifo" --interval 0.01; then
		stop_pid "$rpid"
		bad stopping-gone "ucpumapd did not start: $(tail -3 "$tmp/sg.out.err" | tr '\n' ' ')"
		return
	fi
	sleep 2		# the pipe's 64 KiB full of lines
	kill -TERM "$dpid"
	for k in $(seq 40); do
		kill -0 "$dpid" 2> /dev/null || break
		[ -e "$sock" ] || { gone=$k; break; }
		sleep 0.05
	done
	if [ -z "$gone" ]; then
		if kill -0 "$dpid" 2> /dev/null; then
			why="$sock still there $((k * 50)) ms into the stop;"
		else
			why="$sock stayed until the daemon's end, $((k * 50)) ms into the stop;"
		fi
	fi
	lib_wait "$dpid" > /dev/null 2>&1
	dpid=
	stop_pid "$rpid"
	rm_stale
	if [ -z "$why" ]; then ok stopping-gone "the socket gone within $((gone * 50)) ms of SIGTERM, the stop still draining"; else bad stopping-gone "$why"; fi
}

case_killed_replaced() {
	local why= rc old new
	if ! start "$tmp/k1.out"; then
		bad killed-replaced "ucpumapd did not start: $(tail -3 "$tmp/k1.out.err" | tr '\n' ' ')"
		return
	fi
	old=$dpid
	kill -9 "$dpid"
	{ lib_wait "$dpid"; } 2> /dev/null
	dpid=
	[ -S "$sock" ] || why="no socket left after kill -9 (nothing to replace);"
	status "$tmp/k1"
	rc=$?
	[ $rc = 1 ] && grep -q "no instance serves vd" "$tmp/k1.err" ||
		why="$why after kill -9, --status exited $rc: $(cat "$tmp/k1.err");"
	if ! start "$tmp/k2.out"; then
		bad killed-replaced "$why the second start failed: $(tail -3 "$tmp/k2.out.err" | tr '\n' ' ')"
		rm_stale	# the killed one's
		return
	fi
	status "$tmp/k2"
	rc=$?
	[ $rc = 0 ] && [ "$(J "$tmp/k2" 'd["pid"]')" = "$dpid" ] ||
		why="$why the new instance: --status exited $rc, pid $(J "$tmp/k2" 'd["pid"]') (want $dpid, the killed one $old): $(cat "$tmp/k2.err");"
	grep -q "cannot serve --status" "$tmp/k2.out.err" && why="$why $(grep 'cannot serve' "$tmp/k2.out.err");"
	new=$dpid
	term
	rc=$?
	[ $rc = 0 ] || why="$why the second exited $rc;"
	[ -e "$sock" ] && why="$why $sock left at the stop;"
	if [ -z "$why" ]; then
		ok killed-replaced "pid $old killed, $new answered in its place"
	else
		bad killed-replaced "$why"
	fi
}

case_user_owned() {
	local why= own grp caps
	if ! id nobody > /dev/null 2>&1; then
		skip user-owned "no user nobody"
		return
	fi
	grp=$(id -gn nobody)
	if ! start "$tmp/u.out" --user nobody; then
		bad user-owned "ucpumapd --user nobody did not start: $(tail -3 "$tmp/u.out.err" | tr '\n' ' ')"
		return
	fi
	own=$(stat -c '%U:%G %a' "$sock" 2> /dev/null)
	[ "$own" = "nobody:$grp 660" ] || why="$sock: ${own:-none} (want nobody:$grp 660);"
	caps=$(awk '$1 == "CapPrm:" || $1 == "CapEff:" { printf "%s ", $2 }' /proc/$dpid/status)
	[ "$caps" = "0000000000000000 0000000000000000 " ] ||
		why="$why CapPrm, CapEff while running: ${caps:-none} (want nothing);"
	# nobody asks: the group's right.
	ip netns exec "$dut" setpriv --reuid nobody --regid "$grp" --clear-groups \
		"$daemon" --status vd > "$tmp/u" 2> "$tmp/u.err" ||
		why="$why --status as nobody: $(cat "$tmp/u.err");"
	[ "$(J "$tmp/u" 'd["state"]')" = running ] || why="$why the answer: $(head -c 200 "$tmp/u");"
	term || why="$why exit status $?: $(tail -2 "$tmp/u.out.err" | tr '\n' ' ');"
	status "$tmp/u2"
	[ $? = 1 ] || why="$why --status after the stop: $(cat "$tmp/u2.err");"
	rm_stale	# a user that may not remove it from /run/ucpumap leaves it
	if [ -z "$why" ]; then ok user-owned "$own; nobody asked"; else bad user-owned "$why"; fi
}

case_other_namespace() {
	local why= first rc
	if ! start "$tmp/o1.out"; then
		bad other-namespace "ucpumapd did not start: $(tail -3 "$tmp/o1.out.err" | tr '\n' ' ')"
		return
	fi
	first=$dpid
	if ! veth_pair ${gen}b ${dut}b vg vd 10.207.0.1/24 10.207.0.2/24 2> "$tmp/o.setup"; then
		bad other-namespace "cannot build the second pair: $(head -2 "$tmp/o.setup" | tr '\n' ' ')"
		term
		return
	fi
	ip netns exec ${dut}b "$daemon" --dev vd --tun $tun --cpus 0,1 --interval 0 --duration 60 \
		> "$tmp/o2.out" 2> "$tmp/o2.out.err" &
	dpid=$!
	lib_pid $dpid
	if wait_line "$tmp/o2.out" '^ucpumapd: ' 50 "$dpid"; then
		grep -q "cannot serve --status on $sock: another instance answers there" "$tmp/o2.out.err" ||
			why="the second said: $(grep 'status' "$tmp/o2.out.err" || echo nothing);"
		# Asked from the second's namespace, the first (elsewhere)
		# answers: not taken for this namespace's vd.
		ip netns exec ${dut}b timeout 10 "$daemon" --status vd > "$tmp/ob" 2> "$tmp/ob.err"
		rc=$?
		[ $rc = 1 ] && [ ! -s "$tmp/ob" ] &&
			grep -q "(pid $first) serves a vd of another network namespace: ask there" "$tmp/ob.err" ||
			why="$why --status from the second's namespace: exit $rc, $(head -c 300 "$tmp/ob.err");"
		term || why="$why the second exited $?;"
	else
		why="the second did not start: $(tail -2 "$tmp/o2.out.err" | tr '\n' ' ');"
		stop_pid "$dpid"
	fi
	dpid=$first
	status "$tmp/o"
	rc=$?
	[ $rc = 0 ] && [ "$(J "$tmp/o" 'd["pid"]')" = "$first" ] ||
		why="$why the first's socket after the second's stop: exit $rc, $(cat "$tmp/o.err");"
	term || why="$why the first exited $?;"
	if [ -z "$why" ]; then ok other-namespace "$(grep -o 'cannot serve.*' "$tmp/o2.out.err")"; else bad other-namespace "$why"; fi
}

case_long_answer() {
	local why= rc size
	if [ -n "${SANITIZE:-}" ]; then
		skip long-answer "a sanitizer build: its runtime must come first in LD_PRELOAD"
		return
	fi
	[ -f "$shim_so" ] || { bad long-answer "no $shim_so (make tests)"; return; }
	if ! UCM_SHIM_FAULT=short_send UCM_SHIM_COUNT=1000 LD_PRELOAD=$shim_so \
		start "$tmp/l.out"; then
		bad long-answer "ucpumapd did not start: $(tail -3 "$tmp/l.out.err" | tr '\n' ' ')"
		return
	fi
	status "$tmp/l"
	rc=$?
	size=$(stat -c %s "$tmp/l")
	[ $rc = 0 ] || why="exit $rc: $(cat "$tmp/l.err");"
	[ "$(wc -l < "$tmp/l")" = 1 ] || why="$why $(wc -l < "$tmp/l") lines (want 1);"
	[ "$(J "$tmp/l" 'd["pid"]')" = "$dpid" ] || why="$why the answer does not parse: $(tail -c 100 "$tmp/l");"
	# Above the shim's 1000 a turn: else nothing went on to a second.
	[ "${size:-0}" -gt 2000 ] || why="$why $size bytes: too short to need a third turn;"
	# Its stdout full: said as that, not as the instance's silence.
	ip netns exec "$dut" timeout 10 "$daemon" --status vd > /dev/full 2> "$tmp/full.err"
	rc=$?
	[ $rc = 1 ] && grep -q "^ucpumapd: --status vd: cannot write the answer to standard output: No space left on device" "$tmp/full.err" ||
		why="$why to /dev/full: exit $rc, $(head -2 "$tmp/full.err" | tr '\n' ' ');"
	term || why="$why exit status $?: $(tail -2 "$tmp/l.out.err" | tr '\n' ' ');"
	if [ -z "$why" ]; then ok long-answer "$size bytes"; else bad long-answer "$why"; fi
}

case_cut_answer() {
	local why= rc fname=ucmcut$$ fsock
	fsock=/run/ucpumap/$fname.sock
	mkdir -p /run/ucpumap
	"$PY" - "$fsock" > "$tmp/c.srv" 2>&1 <<'PYEOF' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
s.settimeout(10)
print("listening", flush=True)
try:
    c, _ = s.accept()
    c.sendall(b'{"version": "x", "pid": 1')
    c.close()
finally:
    os.unlink(sys.argv[1])
PYEOF
	lib_pid $!
	wait_line "$tmp/c.srv" listening 50 $! || { bad cut-answer "the fake instance: $(cat "$tmp/c.srv")"; return; }
	timeout 10 "$daemon" --status "$fname" > "$tmp/c" 2> "$tmp/c.err"
	rc=$?
	[ $rc = 1 ] || why="exit $rc (want 1);"
	grep -q "the answer was cut after 25 bytes" "$tmp/c.err" || why="$why said: $(cat "$tmp/c.err");"
	[ -e "$fsock" ] && { rm -f "$fsock"; why="$why the fake's socket left;"; }
	if [ -z "$why" ]; then ok cut-answer "$(tail -1 "$tmp/c.err")"; else bad cut-answer "$why"; fi
}

case_cleanup() {
	lib_cleanup_check && ok cleanup "nothing left" || bad cleanup "$lib_left"
}

lib_run_cases "$@"
