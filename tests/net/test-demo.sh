#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# scripts/demo.sh, the README's main job: its run, its account, its exit
# status, and what it leaves (nothing).
#
#   run       2 s at 20000 datagrams a second: exit 0, the account (sent,
#             received by the receiver behind the tun), ucpumapd's clean
#             stop, its namespaces gone
#   skb       the same with ucpumapd's --xdp-mode skb, as the script's
#             header offers it: the datagrams arrive (the generator sends
#             from an AF_XDP socket: veth drops live frames without a
#             native program on the peer)
#   bad-flag  an option ucpumapd refuses: exit 1, ucpumapd's message, its
#             namespaces gone
#   bad-value --seconds and --rate not whole numbers above 0, or missing:
#             exit 2 at once, naming the option, no namespace made
#   gen-fails a generator that refuses its rate: exit 1 (no datagram sent
#             is no demo), saying so, its namespaces gone
#   sigint    SIGINT 3 s into a 30 s run: exit 130 within 5 s, its
#             namespaces and processes gone
#   stale     the namespaces of a demo that died by SIGKILL (a pid that
#             is gone, a process still in one): the next run removes them
#
# Root. Every case prints one PASS/FAIL/SKIP line; the script exits 0.
set -u
BUILD=${BUILD:-build}
name=test-demo
cases="run skb bad-flag bad-value gen-fails sigint stale"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
demo=$root/scripts/demo.sh
. "$here/../lib.sh"

setup() {
	skip_unless_root "namespaces, XDP, tun"
	if [ ! -x "$BUILD/ucpumapd" ] || [ ! -x "$BUILD/ucpumap-gen" ] || [ -z "$PY" ]; then
		skip all "needs $BUILD/ucpumapd and ucpumap-gen (make) and python3"
		exit 0
	fi
	export BUILD=$(cd "$BUILD" && pwd)
}

# demo_ns PID: the namespaces demo PID made that are still there.
demo_ns() { ip netns list 2> /dev/null | awk -v p="$1" '$1 ~ "^ucm-demo-(gen|dut)-" p "$" { print $1 }'; }

# run_demo TAG LIMIT ARGS...: the demo in the background, bounded by LIMIT
# seconds; $dmpid, its exit status in $drc (124: still running at LIMIT).
# As a user runs it: ucpumapd's lines with their times (lib.sh's
# UCPUMAPD_TIMESTAMPS=no is the tests' alone).
run_demo() {
	local tag=$1 limit=$2
	shift 2
	env -u UCPUMAPD_TIMESTAMPS "$demo" "$@" > "$tmp/$tag.out" 2>&1 &
	dmpid=$!
	lib_pid "$dmpid"
	for _ in $(seq $((limit * 10))); do kill -0 "$dmpid" 2> /dev/null || break; sleep 0.1; done
	if kill -0 "$dmpid" 2> /dev/null; then
		stop_pid "$dmpid" 100
		drc=124
		return
	fi
	lib_wait "$dmpid"
	drc=$?
}

case_run() {
	local why=
	run_demo run 60 --seconds 2 --rate 20000
	[ "$drc" = 0 ] || why="exit $drc;"
	grep -q '^demo: sent [1-9][0-9]* UDP datagrams; the receiver behind the tun got [1-9]' "$tmp/run.out" ||
		why="$why no account;"
	grep -q '^demo: ucpumapd stopped cleanly' "$tmp/run.out" || why="$why no clean stop;"
	[ -z "$(demo_ns "$dmpid")" ] || why="$why left: $(demo_ns "$dmpid" | tr '\n' ' ');"
	[ -z "$why" ] && ok run "$(grep '^demo: sent' "$tmp/run.out")" ||
		bad run "$why $(tail -5 "$tmp/run.out" | tr '\n' ' ')"
}

case_skb() {
	local why=
	run_demo skb 60 --seconds 2 --rate 20000 --xdp-mode skb
	[ "$drc" = 0 ] || why="exit $drc;"
	grep -q '^demo: sent [1-9][0-9]* UDP datagrams; the receiver behind the tun got [1-9]' "$tmp/skb.out" ||
		why="$why no datagram arrived;"
	[ -z "$(demo_ns "$dmpid")" ] || why="$why left: $(demo_ns "$dmpid" | tr '\n' ' ');"
	[ -z "$why" ] && ok skb "$(grep '^demo: sent' "$tmp/skb.out")" ||
		bad skb "$why $(tail -5 "$tmp/skb.out" | tr '\n' ' ')"
}

case_bad_flag() {
	local why=
	run_demo bf 30 --seconds 1 --frobnicate
	[ "$drc" = 1 ] || why="exit $drc (want 1);"
	grep -q "frobnicate" "$tmp/bf.out" || why="$why ucpumapd's message not shown;"
	[ -z "$(demo_ns "$dmpid")" ] || why="$why left: $(demo_ns "$dmpid" | tr '\n' ' ');"
	[ -z "$why" ] && ok bad-flag "exit 1: $(grep -m1 frobnicate "$tmp/bf.out")" ||
		bad bad-flag "$why $(tail -3 "$tmp/bf.out" | tr '\n' ' ')"
}

case_bad_value() {
	local why= a rc
	for a in "--seconds 1.5" "--seconds 0" "--rate abc" "--seconds -5" "--seconds"; do
		# shellcheck disable=SC2086
		timeout 10 "$demo" $a > "$tmp/bv.out" 2>&1
		rc=$?
		[ $rc = 2 ] && grep -q "^demo: ${a%% *} takes a whole number above 0" "$tmp/bv.out" ||
			why="$why '$a': exit $rc: $(head -1 "$tmp/bv.out");"
	done
	[ -z "$(ip netns list 2> /dev/null | grep '^ucm-demo-')" ] || why="$why a namespace made;"
	[ -z "$why" ] && ok bad-value "5 bad values, each exit 2 naming its option" || bad bad-value "$why"
}

case_gen_fails() {
	local why=
	# A rate the demo takes (a whole number) and the generator refuses.
	run_demo gf 30 --seconds 1 --rate 2000000000
	[ "$drc" = 1 ] || why="exit $drc (want 1);"
	grep -q "^demo: the generator failed" "$tmp/gf.out" || why="$why not said;"
	grep -q "^demo: nothing was sent" "$tmp/gf.out" || why="$why the account does not say nothing was sent;"
	[ -z "$(demo_ns "$dmpid")" ] || why="$why left: $(demo_ns "$dmpid" | tr '\n' ' ');"
	[ -z "$why" ] && ok gen-fails "exit 1: $(grep -m1 '^demo: the generator failed' "$tmp/gf.out" | cut -c1-120)" ||
		bad gen-fails "$why $(tail -3 "$tmp/gf.out" | tr '\n' ' ')"
}

case_sigint() {
	local why= t0 ms left
	# As at a terminal: a script's background job has SIGINT ignored,
	# which bash could not trap; the exec puts it back.
	"$PY" -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$demo" --seconds 30 --rate 20000 > "$tmp/int.out" 2>&1 &
	dmpid=$!
	lib_pid "$dmpid"
	sleep 3
	t0=$(date +%s%N)
	kill -INT "$dmpid"
	for _ in $(seq 50); do kill -0 "$dmpid" 2> /dev/null || break; sleep 0.1; done
	ms=$((($(date +%s%N) - t0) / 1000000))
	if kill -0 "$dmpid" 2> /dev/null; then
		stop_pid "$dmpid"
		why="still running 5 s after SIGINT;"
	else
		lib_wait "$dmpid"
		drc=$?
		[ "$drc" = 130 ] || why="exit $drc (want 130);"
	fi
	left=$(demo_ns "$dmpid")
	[ -z "$left" ] || why="$why left: $(echo $left);"
	[ -z "$why" ] && ok sigint "exit 130 after $ms ms, nothing left" ||
		bad sigint "$why $(tail -3 "$tmp/int.out" | tr '\n' ' ')"
}

case_stale() {
	local dead ns why=
	# A pid that is gone: a child that has exited.
	sleep 0 &
	dead=$!
	wait "$dead"
	ns=ucm-demo-dut-$dead
	ip netns add "$ns" || { bad stale "cannot make $ns"; return; }
	lib_ns+=("$ns")		# the cleanup's, should the demo leave it
	ip netns exec "$ns" sleep 600 &
	lib_pid $!
	run_demo stale 60 --seconds 1 --rate 1000
	[ "$drc" = 0 ] || why="exit $drc;"
	ip netns list | grep -q "^$ns\b" && why="$why $ns still there;"
	[ -z "$why" ] && ok stale "$ns and its process removed by the next run" ||
		bad stale "$why $(tail -3 "$tmp/stale.out" | tr '\n' ' ')"
}

lib_run_cases "$@"
