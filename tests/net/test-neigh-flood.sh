#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The way back asked for 10,000 new destinations: a
# server behind ucpumapd --two-way answers as many clients behind a router
# (the generator, which takes 10.99.0.0/16 as its own), 20,000 datagrams a
# second for 3 s, while one client in use (the generator's own address)
# gets every 40th datagram and the generator sends 2000 datagrams a second
# the other way. The next hops come from the kernel (lib/io/neigh.c); the
# DUT's stack routes 10.99/16 into the tun, the resolver finds it through
# vd (a second route, of a higher metric, via the generator).
#
#   questions-bounded   the questions the workers queued for their
#                       resolvers stay within the budget (32 saved, then
#                       one per ms per worker), and each costs at most
#                       three netlink messages (a route, a neighbour, a
#                       confirmation)
#   client-in-use       the client in use gets all its datagrams but 1%
#                       during the flood: the flood neither evicts its next
#                       hop nor takes the questions kept for its refresh;
#                       and the cache does not thrash: at most one question
#                       in 100 evicts a known next hop (each of the 10,000
#                       comes twice a second, so only one whose datagrams a
#                       stalled sender held back for a second is idle and
#                       may go; a build with no place kept for the ones in
#                       use evicted one per three questions: commit a48dc05)
#   forward-rate        the other way delivers at least 90% of what it
#                       delivered in the same time before the flood
#   stop                exit 0, both conservation lines hold, every frame
#                       home
#
# One daemon for all; the first three cases judge one run of the traffic
# (the other way alone, then with the flood), made at the first of them.
# Root. One PASS/FAIL/SKIP line per case; namespaces and processes go on
# exit (tests/lib.sh). UCM_KEEP=DIR keeps the logs.
set -u
BUILD=${BUILD:-build}
name=test-neigh-flood
cases="questions-bounded client-in-use forward-rate stop"
here=$(cd "$(dirname "$0")" && pwd)
daemon=$(cd "$BUILD" 2> /dev/null && pwd)/ucpumapd
gen=ucmng$$
dut=ucmnd$$
tun=ucmn0
port=9424
secs=3
. "$here/../lib.sh"
. "$here/daemon.sh"
client=$progs/metrics_client.py
dpid=

in_g() { ip netns exec "$gen" "$@"; }
in_d() { ip netns exec "$dut" "$@"; }
J() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2> /dev/null; }
scrape() { in_d timeout 15 "$PY" "$client" --port $port scrape --deadline 8 > "$1"; }

# sink NS LABEL PORTS: a UDP reader in NS, in the background ($spid)
sink() {
	ip netns exec "$1" "$PY" "$helper" sink --ports "$3" --ready "$tmp/$2.ready" \
		--stop "$tmp/$2.stop" --out "$tmp/$2.json" --timeout 30 &
	spid=$!
	lib_pid $spid
	wait_file "$tmp/$2.ready" 50
}
sink_end() {	# label pid: the sink's count
	touch "$tmp/$1.stop"
	lib_wait "$2"
}

# The daemon, two-way, and the routes that take 10.99/16 into its tun.
setup() {
	daemon_veth 10.214.0.1 10.214.0.2
	ip -n "$gen" route add local 10.99.0.0/16 dev lo
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun --two-way --cpus 0,1 --interval 0 --duration 60 \
		--metrics-listen 127.0.0.1:$port > "$tmp/d.out" 2> "$tmp/d.err" &
	dpid=$!
	lib_pid $dpid
	if ! wait_line "$tmp/d.out" '^ucpumapd: ' 50 "$dpid"; then
		bad start "ucpumapd did not come up: $(tail -2 "$tmp/d.err" | tr '\n' ' ')"
		exit 0
	fi
	ip -n "$dut" route add $G4/32 dev $tun &&
		ip -n "$dut" route add 10.99.0.0/16 dev $tun metric 10 &&
		ip -n "$dut" route add 10.99.0.0/16 via $G4 dev vd metric 100 &&
		in_d sysctl -qw net.ipv4.conf.$tun.rp_filter=0 || {
		bad setup "routes through $tun"
		exit 0
	}
}

# ---- the other way alone, then with the flood -----------------------------------------
# traffic: the other way alone, then with the flood; the scrapes before
# and after it.
traffic() {
	local base_pid back_pid fwd_pid ppid
	sink "$dut" base 9302
	base_pid=$spid
	in_g "$PY" "$helper" spray --base $D4 --port 9302 --rate 2000 --secs $secs > "$tmp/base.send"
	sink_end base $base_pid

	sink "$gen" back 9300,9301
	back_pid=$spid
	sink "$dut" fwd 9302
	fwd_pid=$spid
	scrape "$tmp/m0.json"
	t0=$(date +%s%N)
	# The client in use alone for a second first, known when the flood begins
	# (its first datagrams wait for the kernel's ARP: dropped and counted);
	# the other way from then on.
	ip netns exec "$dut" "$PY" "$helper" spray --base 10.99.0.0 --count 10000 --port 9300 \
		--hot $G4 --hot-port 9301 --hot-every 40 --warmup 1 --rate 20000 --secs $secs \
		> "$tmp/flood.send" &
	ppid=$!
	lib_pid $ppid
	sleep 1
	in_g "$PY" "$helper" spray --base $D4 --port 9302 --rate 2000 --secs $secs > "$tmp/fwd.send"
	lib_wait $ppid
	scrape "$tmp/m1.json"
	t1=$(date +%s%N)
	sleep 0.3	# the last datagrams on their way
	sink_end back $back_pid
	sink_end fwd $fwd_pid
}

# ---- questions and messages ------------------------------------------------------------
# counts: the resolvers' counts over the flood ($dq questions, $dr
# messages, $dev evicted, $drf refused; $nocounts when the scrapes had none),
# and the budget of questions ($qmax).
counts() {
	local q r ev rf q0 r0 ev0 rf0
	lib_once traffic
	nocounts=
	ms=$(((t1 - t0) / 1000000))
	read -r q r ev rf <<< "$(J "$tmp/m1.json" '" ".join(str(int(d["neigh"][k])) for k in ("questions", "requests", "evicted", "refused"))')"
	read -r q0 r0 ev0 rf0 <<< "$(J "$tmp/m0.json" '" ".join(str(int(d["neigh"][k])) for k in ("questions", "requests", "evicted", "refused"))')"
	if [ -z "${q:-}" ] || [ -z "${q0:-}" ]; then
		nocounts=1
	else
		dq=$((q - q0)) dr=$((r - r0)) dev=$((ev - ev0)) drf=$((rf - rf0))
		# Two workers, each a question per ms and 32 saved; a question in
		# flight at either scrape counts its messages on one side only.
		qmax=$((2 * (32 + ms + 100)))
		echo "# flood: ${ms} ms, $dq questions, $dr netlink messages, $dev evicted, $drf new ones refused a place; sent $(J "$tmp/flood.send" 'd["sent"]') to 10,000 destinations"
	fi
}

case_questions_bounded() {
	lib_once counts
	if [ -n "$nocounts" ]; then
		bad questions-bounded "no counts in the scrapes: $(head -c 300 "$tmp/m1.json")"
	elif [ $dq -le $qmax ] && [ $dr -le $((3 * dq + 3 * 2 * 64)) ] && [ $dq -gt 0 ]; then
		ok questions-bounded "$dq questions in $ms ms (at most $qmax), $dr messages"
	else
		bad questions-bounded "$dq questions in $ms ms (at most $qmax), $dr messages (at most 3 each)"
	fi
}

# ---- the client in use -------------------------------------------------------------------
case_client_in_use() {
	local hs hg fg
	lib_once counts
	hs=$(J "$tmp/flood.send" 'd["hot_sent"]')
	hg=$(J "$tmp/back.json" 'd["per_tag"].get("9301:s", 0)')
	fg=$(J "$tmp/back.json" 'd["per_port"].get("9300", 0)')
	echo "# client in use: $hg of $hs; the 10,000: $fg datagrams arrived"
	if [ -n "$hs" ] && [ "$hs" -gt 0 ] && [ $((hg * 100)) -ge $((hs * 99)) ] &&
	   [ -n "${dev:-}" ] && [ $((dev * 100)) -le "${dq:-0}" ]; then
		ok client-in-use "$hg of $hs, $dev next hops evicted for $dq questions"
	else
		bad client-in-use "$hg of $hs arrived, ${dev:-?} next hops evicted for ${dq:-?} questions"
	fi
}

# ---- the other way -----------------------------------------------------------------------
case_forward_rate() {
	local bs bg fs fwd dl
	lib_once traffic
	bs=$(J "$tmp/base.send" 'd["sent"]')
	bg=$(J "$tmp/base.json" 'd["total"]')
	fs=$(J "$tmp/fwd.send" 'd["sent"]')
	fwd=$(J "$tmp/fwd.json" 'd["total"]')
	# The sink reads on vd's address: what vd's own stack took in past
	# the daemon would count too. The daemon's own delivered count, from
	# the scrapes around the flood, must cover what the sink read.
	dl=$(J "$tmp/m1.json" 'int(d["delivered"])')
	dl=$((${dl:-0} - $(J "$tmp/m0.json" 'int(d["delivered"])' || echo 0)))
	echo "# the other way: $bg of $bs before the flood, $fwd of $fs with it; the daemon delivered $dl meanwhile"
	if [ -n "$bs" ] && [ -n "$fs" ] && [ "${bg:-0}" -gt 0 ] && [ "$fs" -gt 0 ] &&
	   [ $((fwd * bs * 10)) -ge $((bg * fs * 9)) ] && [ "$dl" -ge "${fwd:-1}" ]; then
		ok forward-rate "$fwd of $fs with the flood, $bg of $bs before; the daemon delivered $dl meanwhile"
	else
		bad forward-rate "$fwd of $fs with the flood, $bg of $bs before; the daemon delivered $dl meanwhile (want $fwd at least)"
	fi
}

# ---- stop ----------------------------------------------------------------------------------
case_stop() {
	local rc why
	lib_term $dpid
	rc=$?
	dpid=
	why=$(closing_lines "$tmp/d.out")
	[ $rc = 0 ] || why="exit $rc; $why"
	grep -q '^conservation, way back' "$tmp/d.out" || why="$why no way-back conservation line"
	if [ -z "$(echo "$why" | tr -d ' ')" ]; then
		ok stop "$(grep '^conservation, way back' "$tmp/d.out" | cut -c1-100)"
	else
		bad stop "$why"
	fi
}

lib_run_cases "$@"

