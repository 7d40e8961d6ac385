# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The daemon tests' helpers (ucpumapd on a veth pair, traffic from
# tests/progs/ucpumapd_traffic.py), sourced after tests/lib.sh by the
# scripts that run ucpumapd between a generator's namespace ($gen) and the
# DUT's ($dut). Such a script sets $daemon, $gen and $dut; $helper is set
# here.
#
#   daemon_veth G4 D4  the daemon tests' start: root, $daemon and python3
#                      or the script skips; daemon_pair, or a FAIL line;
#                      either way the script ends (exit 0) unless all is
#                      there. Sets G4 and D4.
#   daemon_pair        $gen (vg, $G4/24) and $dut (vd, $D4/24) on a veth
#                      pair, reverse-path filtering off in $dut (its errors
#                      in $tmp/setup.err)
#   closing_lines FILE   empty when a daemon's output FILE ends with its
#                      conservation line holding (and the way back's, where
#                      it has one) and every frame home, else what it says
#   udp_flood SECS     $helper's flood from $gen ($G4) to $D4 for SECS, in
#                      the background, registered: $fpid
#   exact_ipv4 LABEL DST SRC [RATE]   100 datagrams of each size from $gen
#                      to DST (from SRC) at RATE a second (3000), received
#                      behind the daemon in $dut with $helper, on the tun
#                      $tun where the script names one (what vd's own stack
#                      took in past the daemon is not read): empty when
#                      each came once and intact, else what went wrong

helper=$progs/ucpumapd_traffic.py

exact_ipv4() {
	local r e g m du co rpid
	rm -f "$tmp/r-$1" "$tmp/s-$1" "$tmp/res-$1"
	ip netns exec "$dut" "$PY" "$helper" exact-recv --paths ipv4 --count 100 \
		--ready "$tmp/r-$1" --stop "$tmp/s-$1" --out "$tmp/res-$1" --timeout 20 \
		${tun:+--dev "$tun"} > "$tmp/recv-$1.log" 2>&1 &
	rpid=$!
	lib_pid $rpid
	wait_file "$tmp/r-$1" 50 &&
		lib_run ip netns exec "$gen" "$PY" "$helper" exact-send --paths ipv4 --count 100 \
			--rate "${4:-3000}" --v4 "$2" --src4 "$3" > "$tmp/send-$1.log" 2>&1
	sleep 0.3
	touch "$tmp/s-$1"
	wait_file "$tmp/res-$1" 50
	stop_pid "$rpid"
	r=$(jget "$tmp/res-$1" "'%d %d %d %d %d' % tuple(d['paths']['ipv4'][k] for k in ('expected', 'received', 'missing', 'duplicated', 'corrupt'))")
	read -r e g m du co <<< "${r:-0 0 0 0 0}"
	if [ "$e" = 0 ] || [ "$g" != "$e" ] || [ "$m" != 0 ] || [ "$du" != 0 ] || [ "$co" != 0 ]; then
		echo "expected $e datagrams, received $g (missing $m, duplicated $du, corrupt $co)"
	fi
}

# closing_lines FILE [two-way]: what is wrong with a run's closing lines
# (nothing: empty); with two-way, the way back's line must be there too.
closing_lines() {
	local why=
	grep -q '^conservation: .*: holds$' "$1" ||
		why="$(grep '^conservation: ' "$1" || echo 'no conservation line');"
	if [ "${2:-}" = two-way ] && ! grep -q '^conservation, way back' "$1"; then
		why="$why no way-back conservation line;"
	elif grep -q '^conservation, way back' "$1" && ! grep -q '^conservation, way back: .*: holds$' "$1"; then
		why="$why $(grep '^conservation, way back' "$1");"
	fi
	grep -q '^audit: every frame came home$' "$1" ||
		why="$why $(grep '^audit' "$1" || echo 'no audit line')"
	echo "$why"
}

daemon_veth() {
	skip_unless_root "namespaces, XDP, tun"
	if [ ! -x "$daemon" ] || [ -z "$PY" ]; then
		skip all "needs $daemon (make) and python3"
		exit 0
	fi
	G4=$1 D4=$2
	if ! daemon_pair; then
		bad setup "cannot build the namespaces: $(head -3 "$tmp/setup.err" | tr '\n' ' ')"
		exit 0
	fi
}

daemon_pair() {
	veth_pair "$gen" "$dut" vg vd "$G4/24" "$D4/24" 2> "$tmp/setup.err" &&
		ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0
}

udp_flood() {
	ip netns exec "$gen" "$PY" "$helper" flood --src "$G4" --dst "$D4" --secs "$1" \
		> "$tmp/flood.log" 2>&1 &
	fpid=$!
	lib_pid $fpid
}
