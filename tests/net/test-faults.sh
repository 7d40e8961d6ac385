#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd's policy for faults at run time (ucpumapd(8), FAULTS), each under
# a flood from the generator's namespace (vg) into the DUT's (vd, the
# daemon and its tun):
#
#   link-down-up        vg down for 2 s (vd loses its carrier), then up: the
#                       daemon says so once each way and goes on; 100
#                       datagrams after it arrive, each once
#   tun-down-up         the same with the tun
#   link-flap           vg down and up 5 times in 4 s: 4 changes said,
#                       then that the rest are said together, and their
#                       count at the stop; a clean stop
#   iface-down-two-way  two-way, vd set down for 2 s while the DUT floods
#                       the peer through the tun (copy mode: the kernel
#                       refuses every send, ENETDOWN): the RX thread sleeps
#                       (under half a CPU over 1 s, not a spin), and after
#                       vd is up 5 of 5 pings through the tun are answered
#   tun-gone[-two-way]  the tun deleted: the daemon stops within 3 s, exit 5,
#                       with its closing lines (conservation holds, every
#                       frame home) and nothing left on vd
#   iface-gone          vd deleted: within 3 s, exit 4, closing lines
#   iface-gone-two-way  the same under the way back's flood, its TX ring
#                       and channels holding packets
#   socket-error        a socket's error (SO_ERROR ENETDOWN, from
#                       tests/progs/fault_shim.c, LD_PRELOAD): exit 6
#   way-back-dead       two-way, the read path's io_uring refused
#                       (fault_shim.c) while the DUT sends into the tun:
#                       exit 8, not a silent switch to one way
#   worker-stalled      both workers stall 7 s in their tun writes
#                       (fault_shim.c) under a flood: after 5 s of nothing
#                       taken with packets waiting, exit 9
#   rx-stalled          the same with --pass: the RX thread stalls
#   keep-tun-start-fails  --keep-tun, the RX thread's start refused
#                       (pthread_create, fault_shim.c): exit 1, and the tun
#                       the start made and kept is gone with it
#   keep-tun-owner-fails  --keep-tun, its TUNSETOWNER refused (EINVAL,
#                       fault_shim.c) after the library's went: exit 1,
#                       and the tun the start made is not left persistent
#   keep-tun-late-fails  --keep-tun, the metrics thread's start refused,
#                       after the privileges are dropped (as root, and with
#                       --user nobody): exit 1, the tun gone as above, the
#                       closing total over the run's own seconds
#   mac-refused         vd's MAC changed, the program's map update refused
#                       (EPERM, fault_shim.c, as before Linux 5.19 without
#                       CAP_BPF): said once; changed back to the MAC the
#                       program holds: said so, no refusal, and datagrams
#                       to it forwarded exactly
#   pass-unread         the pass counters' lookups refused (EPERM, as
#                       before Linux 5.19 without CAP_BPF): said once at the
#                       start, xdp_pass left out of the JSON, and the
#                       datagrams forwarded exactly all the same
#   (the shim's cases skip in a sanitizer build: its runtime must be first)
#   nothing-left        the cleanup leaves no namespace and no process
#
# A case after iface-gone builds the veth pair again. Root. Every case
# prints one PASS/FAIL/SKIP line; the script exits 0. Each daemon run has
# a --duration backstop and is stopped by its pid.
set -u
BUILD=${BUILD:-build}
name=test-faults
cases="link-down-up tun-down-up link-flap iface-down-two-way tun-gone tun-gone-two-way iface-gone iface-gone-two-way socket-error way-back-dead
worker-stalled rx-stalled keep-tun-start-fails keep-tun-owner-fails keep-tun-late-fails mac-refused pass-unread nothing-left"
here=$(cd "$(dirname "$0")" && pwd)
daemon=$(cd "$BUILD" 2>/dev/null && pwd)/ucpumapd
shim_so=$(cd "$BUILD" 2>/dev/null && pwd)/tests/progs/libfault_shim.so
gen=ucmfg$$
dut=ucmfd$$
tun=ucmft0
. "$here/../lib.sh"
. "$here/daemon.sh"
dpid=
D_TWO=

setup() { daemon_veth 10.204.0.1 10.204.0.2; }

# pair_ready CASE: the veth pair, built again when a case deleted vd; a
# FAIL line for CASE when it cannot be.
pair_ready() {
	ip -n "$dut" link show vd > /dev/null 2>&1 && return 0
	ip netns del "$gen" 2> /dev/null
	ip netns del "$dut" 2> /dev/null
	daemon_pair && return 0
	bad "$1" "cannot build the namespaces again: $(head -2 "$tmp/setup.err" | tr '\n' ' ')"
	return 1
}

start_daemon() {	# label, options...: the daemon, in the background
	D_OUT=$tmp/$1.out D_ERR=$tmp/$1.err D_RC= D_TWO=
	shift
	case " $* " in *" --two-way "*) D_TWO=two-way ;; esac
	ip netns exec "$dut" env ${SHIM:+LD_PRELOAD=$SHIM} "$daemon" --dev vd --tun $tun \
		--cpus 0,1 --interval 0 --duration 30 "$@" > "$D_OUT" 2> "$D_ERR" &
	dpid=$!
	lib_pid $dpid
	wait_line "$D_OUT" '^ucpumapd: ' 50 "$dpid" && return 0
	stop_pid "$dpid"
	dpid=
	echo "ucpumapd did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')" >> "$D_ERR"
	return 1
}

# wait_exit SECONDS: the daemon's own end; D_RC its status, D_MS the time
# it took. Past SECONDS it is stopped (D_RC then says so).
wait_exit() {
	local t0 t1
	t0=$(date +%s%N)
	for _ in $(seq $(($1 * 50))); do
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.02
	done
	t1=$(date +%s%N)
	D_MS=$(((t1 - t0) / 1000000))
	if kill -0 "$dpid" 2>/dev/null; then
		stop_pid "$dpid"
		D_RC="still running after $1 s"
	else
		lib_wait "$dpid"
		D_RC=$?
	fi
	dpid=
}

closing_ok() { closing_lines "$D_OUT" $D_TWO; }
flood() { udp_flood "$1"; }

# down_up CASE DOWN-CMD UP-CMD DOWN-RE UP-RE: under a flood, down for 2 s,
# then up; both said once, and the daemon still forwards.
down_up() {
	local c=$1 down=$2 up=$3 dre=$4 ure=$5 why=
	pair_ready "$c" || return
	if ! start_daemon "$c"; then
		bad "$c" "$(tail -1 "$D_ERR")"
		return
	fi
	flood 5
	sleep 1
	eval "$down"
	sleep 2
	eval "$up"
	sleep 1
	stop_pid "$fpid"
	sleep 0.5
	kill -0 "$dpid" 2>/dev/null || why="the daemon ended (stderr: $(tail -2 "$D_ERR" | tr '\n' ' '));"
	[ "$(grep -Ec "$dre" "$D_ERR")" = 1 ] || why="$why want one line /$dre/ on stderr, got $(grep -Ec "$dre" "$D_ERR");"
	[ "$(grep -Ec "$ure" "$D_ERR")" = 1 ] || why="$why want one line /$ure/ on stderr, got $(grep -Ec "$ure" "$D_ERR");"
	[ -n "$why" ] || why=$(exact_ipv4 "$c" $D4 $G4)
	stop_pid "$dpid"
	dpid=
	why="$why$(closing_ok)"
	if [ -z "$why" ]; then ok "$c"; else bad "$c" "$why"; fi
}

case_link_down_up() {
	down_up link-down-up "ip -n $gen link set vg down" "ip -n $gen link set vg up" \
		'vd is down or has no carrier' 'vd is up again'
}
case_tun_down_up() {
	down_up tun-down-up "ip -n $dut link set $tun down" "ip -n $dut link set $tun up" \
		"tun $tun is down" "tun $tun is up again"
}

# vg down and up 5 times, 0.4 s each way (10 changes): the first 4 said,
# then that the rest are said together (at the minute's end, after the
# case), and the daemon goes on and stops cleanly.
case_link_flap() {
	local why= n
	pair_ready link-flap || return
	if ! start_daemon link-flap; then
		bad link-flap "$(tail -1 "$D_ERR")"
		return
	fi
	for _ in 1 2 3 4 5; do
		ip -n "$gen" link set vg down
		sleep 0.4
		ip -n "$gen" link set vg up
		sleep 0.4
	done
	kill -0 "$dpid" 2>/dev/null || why="the daemon ended (stderr: $(tail -2 "$D_ERR" | tr '\n' ' '));"
	n=$(grep -Ec 'vd is down or has no carrier|vd is up again' "$D_ERR")
	[ "$n" = 4 ] || why="$why $n link lines (want 4);"
	[ "$(grep -c "vd's links change often: this minute's later changes are said together" "$D_ERR")" = 1 ] ||
		why="$why no line saying the rest are said together;"
	stop_pid "$dpid"
	# The minute not over: the stop says how many went unsaid.
	grep -Eq "[0-9]+ more link changes in the last minute, not said one by one: vd is up" "$D_ERR" ||
		why="$why no count of the changes not said, at the stop;"
	dpid=
	why="$why$(closing_ok)"
	if [ -z "$why" ]; then ok link-flap "4 of 10 changes said, the rest counted"; else bad link-flap "$why"; fi
}

# The CPU time (ticks) of the daemon's thread named $1; -1 for none.
thread_ticks() {
	local t
	for t in /proc/"$dpid"/task/*; do
		[ "$(cat "$t/comm" 2> /dev/null)" = "$1" ] || continue
		awk '{ print $14 + $15 }' "$t/stat"
		return
	done
	echo -1
}

# back_flood CASE [options...]: a two-way daemon, and a flood from the DUT
# through the tun out of vd for 6 s (its pid in wpid), 1 s along; 1 when
# either did not start (said).
back_flood() {
	local c=$1
	shift
	pair_ready "$c" || return 1
	if ! start_daemon "$c" --two-way "$@"; then
		bad "$c" "$(tail -1 "$D_ERR")"
		return 1
	fi
	ip -n "$dut" route replace "$G4/32" dev $tun
	lib_run ip netns exec "$dut" "$PY" "$helper" ping --dst "$G4" --count 1 --timeout 2 > /dev/null
	ip netns exec "$dut" "$PY" "$helper" flood --src "$D4" --dst "$G4" --secs 6 > /dev/null 2>&1 &
	wpid=$!
	lib_pid $wpid
	sleep 1
}

case_iface_down_two_way() {
	local c=iface-down-two-way why= t0 t1 hz wpid r
	back_flood "$c" || return
	ip -n "$dut" link set vd down
	sleep 0.5
	hz=$(getconf CLK_TCK)
	t0=$(thread_ticks ucpumap/rx0)
	sleep 1
	t1=$(thread_ticks ucpumap/rx0)
	ip -n "$dut" link set vd up
	stop_pid "$wpid"
	if [ "$t0" -lt 0 ] || [ "$t1" -lt 0 ]; then
		why="no thread ucpumap/rx0 to measure;"
	elif [ $((t1 - t0)) -ge $((hz / 2)) ]; then
		why="the RX thread took $((t1 - t0)) of $hz ticks in 1 s with vd down (a spin);"
	fi
	grep -q "vd is down" "$D_ERR" || why="$why stderr does not say vd is down;"
	sleep 1
	r=$(ip netns exec "$dut" "$PY" "$helper" ping --dst "$G4" --count 5 --interval 0.05 --timeout 3)
	echo "$r" | grep -q '"replies": 5' || why="$why after vd is up: $r;"
	stop_pid "$dpid"
	dpid=
	why="$why$(closing_ok)"
	if [ -z "$why" ]; then ok "$c" "RX thread $((t1 - t0)) of $hz ticks"; else bad "$c" "$why"; fi
}

# gone CASE WHAT-CMD STATUS RE [options...]: under a flood, WHAT-CMD
# deletes a device; the daemon ends by itself within 3 s with STATUS and
# its closing lines.
gone() {
	local c=$1 cmd=$2 want=$3 re=$4 why= l
	shift 4
	pair_ready "$c" || return
	if ! start_daemon "$c" "$@"; then
		bad "$c" "$(tail -1 "$D_ERR")"
		return
	fi
	flood 6
	sleep 1.5
	eval "$cmd"
	wait_exit 3
	stop_pid "$fpid"
	[ "$D_RC" = "$want" ] || why="exit $D_RC after $D_MS ms (want $want within 3 s);"
	grep -Eq "$re" "$D_ERR" || why="$why stderr does not say /$re/: $(tail -2 "$D_ERR" | tr '\n' ' ');"
	why="$why$(closing_ok)"
	l=$(left_in "$dut" vd)
	[ -z "$l" ] || why="$why left: $l"
	if [ -z "$why" ]; then
		ok "$c" "exit $D_RC after $D_MS ms"
	else
		bad "$c" "$why"
	fi
}

case_tun_gone() { gone tun-gone "ip -n $dut link del $tun" 5 "tun $tun was deleted"; }
case_tun_gone_two_way() {
	gone tun-gone-two-way "ip -n $dut link del $tun" 5 "tun $tun was deleted" --two-way
}
case_iface_gone() { gone iface-gone "ip -n $dut link del vd" 4 "interface vd was deleted"; }

# vd deleted under the way back's flood (copy mode): its socket unbound
# with descriptors on its TX ring and in its channels; the daemon ends as
# above, its closing lines whole.
case_iface_gone_two_way() {
	local c=iface-gone-two-way why= wpid kerr l
	back_flood "$c" --extended || return
	ip -n "$dut" link del vd
	wait_exit 3
	stop_pid "$wpid"
	[ "$D_RC" = 4 ] || why="exit $D_RC after $D_MS ms (want 4 within 3 s);"
	kerr=$(sed -n 's/.* kick_err \([0-9]*\).*/\1/p' "$D_OUT" | tail -1)
	[ -n "$kerr" ] || why="$why no tx line in the closing lines;"
	why="$why$(closing_ok)"
	l=$(left_in "$dut" vd)
	[ -z "$l" ] || why="$why left: $l"
	if [ -z "$why" ]; then ok "$c" "exit $D_RC after $D_MS ms, $kerr refused kicks"; else bad "$c" "$why"; fi
}

# ---- faults nothing here makes by itself: tests/progs/fault_shim.c ----------
# shim_case CASE FAULT STATUS RE CMD [options...]: the daemon with the shim's
# FAULT from AFTER ms on (2500); CMD (in the background) gives it work meanwhile;
# it ends by itself with STATUS and its closing lines, within WAIT seconds
# (default 5). WORK_RE: what CMD's output must show (that the work ran).
shim_case() {
	local c=$1 fault=$2 want=$3 re=$4 cmd=$5 why= wpid
	shift 5
	if [ -n "${SANITIZE:-}" ]; then
		skip "$c" "a sanitizer build: its runtime must come first in LD_PRELOAD"
		return
	fi
	if [ ! -f "$shim_so" ]; then
		bad "$c" "no $shim_so (make tests)"
		return
	fi
	pair_ready "$c" || return
	export UCM_SHIM_FAULT=$fault UCM_SHIM_AFTER_MS=${AFTER:-2500} UCM_SHIM_COUNT=${COUNT:-1}
	SHIM=$shim_so
	if ! start_daemon "$c" "$@"; then
		unset SHIM UCM_SHIM_FAULT UCM_SHIM_AFTER_MS UCM_SHIM_COUNT
		bad "$c" "$(tail -1 "$D_ERR")"
		return
	fi
	unset SHIM UCM_SHIM_FAULT UCM_SHIM_AFTER_MS UCM_SHIM_COUNT
	why=$(exact_ipv4 "$c" $D4 $G4)
	bash -c "$cmd" > "$tmp/$c.work" 2>&1 &
	wpid=$!
	lib_pid $wpid
	wait_exit "${WAIT:-5}"
	stop_pid "$wpid"
	[ -z "${WORK_RE:-}" ] || grep -Eq "$WORK_RE" "$tmp/$c.work" ||
		why="$why the traffic did not run: $(tail -2 "$tmp/$c.work" | tr '\n' ' ');"
	[ "$D_RC" = "$want" ] || why="$why exit $D_RC (want $want);"
	grep -Eq "$re" "$D_ERR" || why="$why stderr does not say /$re/: $(tail -2 "$D_ERR" | tr '\n' ' ');"
	why="$why$(closing_ok)"
	if [ -z "$why" ]; then ok "$c" "exit $D_RC"; else bad "$c" "$why"; fi
}
# An idle RX thread asks its socket for an error each time its poll times
# out; the datagrams first show that it forwarded.
case_socket_error() { shim_case socket-error so_error 6 "socket error" "sleep 3"; }
# The DUT sends into the tun (echoes, $helper's: no ping(8) needed): the
# way back's reads submit. At least one echo must have gone.
case_way_back_dead() {
	COUNT=1000000 WORK_RE='"sent": 1' shim_case way-back-dead uring_submit 8 "way back is dead" \
		"for i in \$(seq 60); do ip -n $dut route replace 10.204.9.0/24 dev $tun 2>/dev/null; ip netns exec $dut $PY $helper ping --dst 10.204.9.1 --count 1 --timeout 0.05; sleep 0.05; done" --two-way
}
# Both workers stall 7 s in their write into the tun, under a flood (from
# 5 s on: the exact datagrams before it are well through first): once
# nothing has moved in their rings for UCM_DP_STALL_MS (5 s) with packets
# waiting, the daemon names a stuck worker and stops, exit 9, with its
# closing lines when the writes come back.
case_worker_stalled() {
	UCM_SHIM_STALL_MS=7000 COUNT=2 AFTER=5000 WAIT=15 shim_case worker-stalled stall_write 9 \
		"worker [01] has taken nothing from its ring for 5 s with packets waiting" \
		"ip netns exec $gen $PY $helper flood --src $G4 --dst $D4 --secs 10"
}
# --pass: the RX thread writes into the tun itself and stalls there; the
# kernel's RX ring fills behind it.
case_rx_stalled() {
	UCM_SHIM_STALL_MS=7000 COUNT=1 AFTER=5000 WAIT=15 shim_case rx-stalled stall_write 9 \
		"vd queue 0: its RX thread has taken nothing from the RX ring for 5 s with packets waiting: it is stuck \\(inline" \
		"ip netns exec $gen $PY $helper flood --src $G4 --dst $D4 --secs 10" --pass
}

# keep_fails CASE FAULT RE: --keep-tun with fault_shim.c's FAULT after
# the first call it wraps; the start exits 1 saying RE, and the tun it
# made and kept is gone with it.
keep_fails() {
	local c=$1 why= rc l
	if [ -n "${SANITIZE:-}" ]; then
		skip "$c" "a sanitizer build: its runtime must come first in LD_PRELOAD"
		return
	fi
	pair_ready "$c" || return
	lib_run ip netns exec "$dut" env UCM_SHIM_FAULT=$2 UCM_SHIM_SKIP=1 LD_PRELOAD="$shim_so" \
		timeout 10 "$daemon" --dev vd --tun ucmfk0 --cpus 1 --keep-tun --duration 5 \
		> "$tmp/$c.out" 2> "$tmp/$c.err"
	rc=$?
	[ $rc = 1 ] || why="exit $rc (want 1);"
	grep -q "$3" "$tmp/$c.err" || why="$why not /$3/: $(tail -2 "$tmp/$c.err" | tr '\n' ' ');"
	ip -n "$dut" link show ucmfk0 > /dev/null 2>&1 && why="$why ucmfk0 stays;"
	ip -n "$dut" link del ucmfk0 2> /dev/null
	l=$(left_in "$dut" vd)
	[ -z "$l" ] || why="$why left: $l"
	if [ -z "$why" ]; then ok "$c" "exit 1, the tun gone"; else bad "$c" "$why"; fi
}

case_keep_tun_start_fails() { keep_fails keep-tun-start-fails thread "cannot start the RX thread"; }
case_keep_tun_owner_fails() {
	keep_fails keep-tun-owner-fails tun_owner "keep-tun: cannot make ucmfk0 persistent.*Invalid argument"
}

case_keep_tun_late_fails() {
	local c=keep-tun-late-fails why= rc l user
	if [ -n "${SANITIZE:-}" ]; then
		skip "$c" "a sanitizer build: its runtime must come first in LD_PRELOAD"
		return
	fi
	pair_ready "$c" || return
	for user in "" nobody; do
		# The worker's and the RX thread's starts go; the metrics
		# thread's, after priv_drop(), is refused.
		lib_run ip netns exec "$dut" env UCM_SHIM_FAULT=thread UCM_SHIM_SKIP=2 \
			LD_PRELOAD="$shim_so" timeout 10 "$daemon" --dev vd --tun ucmfk0 --cpus 1 \
			--keep-tun ${user:+--user $user} --metrics-listen 127.0.0.1:9431 --duration 5 \
			> "$tmp/$c.out" 2> "$tmp/$c.err"
		rc=$?
		[ $rc = 1 ] || why="$why ${user:-root}: exit $rc (want 1);"
		grep -q "no thread to serve it" "$tmp/$c.err" ||
			why="$why ${user:-root}: not the metrics thread's start: $(tail -2 "$tmp/$c.err" | tr '\n' ' ');"
		ip -n "$dut" link show ucmfk0 > /dev/null 2>&1 && why="$why ${user:-root}: ucmfk0 stays;"
		ip -n "$dut" link del ucmfk0 2> /dev/null
		# The closing total is over the run's own seconds (under 10).
		l=$(sed -n 's/.*averaged over the whole run (\([0-9]*\)\..*/\1/p' "$tmp/$c.out")
		[ -n "$l" ] && [ "$l" -lt 10 ] ||
			why="$why ${user:-root}: the total's seconds '$l' (want under 10): $(grep -m1 'whole run' "$tmp/$c.out");"
	done
	l=$(left_in "$dut" vd)
	[ -z "$l" ] || why="$why left: $l"
	if [ -z "$why" ]; then ok "$c" "exit 1 as root and as nobody, the tun gone"; else bad "$c" "$why"; fi
}

case_mac_refused() {
	local c=mac-refused why= a new=02:00:00:00:00:78
	if [ -n "${SANITIZE:-}" ]; then
		skip "$c" "a sanitizer build: its runtime must come first in LD_PRELOAD"
		return
	fi
	pair_ready "$c" || return
	a=$(mac_of "$dut" vd)
	export UCM_SHIM_FAULT=mac_update UCM_SHIM_SKIP=1 UCM_SHIM_COUNT=100
	SHIM=$shim_so
	if ! start_daemon "$c"; then
		unset SHIM UCM_SHIM_FAULT UCM_SHIM_SKIP UCM_SHIM_COUNT
		bad "$c" "$(tail -1 "$D_ERR")"
		return
	fi
	unset SHIM UCM_SHIM_FAULT UCM_SHIM_SKIP UCM_SHIM_COUNT
	ip -n "$dut" link set vd address $new
	wait_line "$D_ERR" "vd's MAC is now $new, which the XDP program cannot be told \\(Operation not permitted" 30 ||
		why="no word of the refusal;"
	ip -n "$dut" link set vd address "$a"
	wait_line "$D_ERR" "vd's MAC is back to $a, the XDP program's" 30 || why="$why no word of it back;"
	[ "$(grep -c "cannot be told" "$D_ERR")" = 1 ] ||
		why="$why $(grep -c "cannot be told" "$D_ERR") refusals said (want 1);"
	ip -n "$gen" neigh flush dev vg
	why="$why$(exact_ipv4 "$c" $D4 $G4)"
	stop_pid "$dpid"
	dpid=
	why="$why$(closing_ok)"
	if [ -z "$why" ]; then ok "$c" "refused once, back to the program's: forwarded"; else bad "$c" "$why $(grep MAC "$D_ERR" | tr '\n' ' ')"; fi
}

case_pass_unread() {
	local c=pass-unread why= n j
	if [ -n "${SANITIZE:-}" ]; then
		skip "$c" "a sanitizer build: its runtime must come first in LD_PRELOAD"
		return
	fi
	pair_ready "$c" || return
	export UCM_SHIM_FAULT=pass_lookup UCM_SHIM_COUNT=1000000
	SHIM=$shim_so
	if ! start_daemon "$c" --stats-json "$tmp/$c.json"; then
		unset SHIM UCM_SHIM_FAULT UCM_SHIM_COUNT
		bad "$c" "$(tail -1 "$D_ERR")"
		return
	fi
	unset SHIM UCM_SHIM_FAULT UCM_SHIM_COUNT
	why=$(exact_ipv4 "$c" $D4 $G4)
	j=$(usr1_json "$dpid" "$tmp/$c.json" '"%d %s" % (d["rx"], "xdp_pass" in d)')
	[ "${j#* }" = False ] && [ "${j% *}" -gt 0 ] || why="$why JSON rx, xdp_pass there: '$j' (want rx, False);"
	stop_pid "$dpid"
	dpid=
	n=$(grep -c "counts of frames left to the kernel cannot be read (Operation not permitted" "$D_ERR")
	[ "$n" = 1 ] || why="$why said $n times (want 1);"
	why="$why$(closing_ok)"
	if [ -z "$why" ]; then ok "$c" "said once, left out, forwarded"; else bad "$c" "$why"; fi
}

case_nothing_left() {
	lib_cleanup_check
	if [ -z "$lib_left" ]; then ok nothing-left; else bad nothing-left "$lib_left"; fi
}

lib_run_cases "$@"
