#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Jumbo frames (multi-buffer AF_XDP): ucpumapd on a veth pair with MTU
# 9000 on both ends, a packet of up to three 4096-byte frames (issue 35):
# one-way, then two-way, where the way back sends them too. Root, its own
# namespaces, bounded in time; its namespaces, daemons and helpers go on
# every exit.
#
#   start          ucpumapd starts on vd at MTU 9000 and says it takes
#                  packets of several frames, and the frames per queue a
#                  worker ring of them needs; its tun's MTU is vd's
#   udp4           50 datagrams each of 1472, 4000 and 8972 bytes (one,
#                  two, three frames) through the daemon, each once and
#                  intact, read on the tun alone (SO_BINDTODEVICE); the
#                  daemon's rx grew by 150 at least
#   udp6           the same over IPv6 (1452, 3980, 8952)
#   tcp            50 MB over TCP into the DUT through the daemon (its
#                  segments up to 8948 bytes), sha256-exact; the daemon's
#                  rx grew by a packet a 9000 bytes at least
#
#                  What the daemon took in (rx) and its way back sent out
#                  (tx), read by SIGUSR1 from its JSON before and after a
#                  case (`through`), or from its closing lines, must cover
#                  what the case sent through it: the XDP program leaves to
#                  the kernel what no socket of the daemon takes
#                  (XDP_PASS), and a reader or server in the DUT would get
#                  it all the same by vd. TCP's ACKs, which the stack
#                  spaces as it likes: ten at least (ACKS)
#   load           a mixed flood of the sizes: 18000 datagrams at 30000 a
#                  second (about 0.6 s)
#   csum-offload   udp4's and udp6's datagrams with vg's TX checksum offload
#                  on (only the pseudo-header sum in each checksum, judged
#                  on a packet's first frame): each once and intact on the
#                  tun, the daemon's rx 300 more at least, no InCsumErrors
#                  behind the tun
#   stop           the run's end: conservation holds, every frame home,
#                  packets of several frames counted (rx_chains), none of
#                  them dropped, load's 18000 received and at least 95% of
#                  all delivered, tcp's segments of several frames
#                  coalesced (tun_super)
#   frames-given   --frames 8192, too few for a worker ring of packets of
#                  three frames: refused naming the number, exit 78
#   frame-2048     --frame-size 2048 (five frames for 8972 bytes):
#                  datagrams intact on the tun, the daemon received 150 at
#                  least (its conservation line), every frame home
#   max-frags      --max-frags 2: udp4's 1472- and 4000-byte datagrams
#                  intact, the 8972-byte ones (three frames) dropped and
#                  counted as chain drops (and in /metrics as chain_long),
#                  every frame home
#   gen-packet     ucpumap-gen's packet engine (an AF_PACKET socket):
#                  300 frames of 9014 bytes arrive at a socket behind vd,
#                  8972-byte datagrams whose checksums the stack took
#   gen-size-live  a frame past a page with the live engine: a message
#                  naming --engine packet, exit 2
#   tw-start       ucpumapd --two-way (next hop --peer-mac), the routes to
#                  the generator through its tun (as test-two-way's); the
#                  tun's MTU is vd's; vd's TX checksumming off, so that a
#                  checksum the way back leaves to the kernel is finished
#                  in software and checked by the generator's kernel
#   tw-ping        20 echoes of 8972 bytes each way (9000-byte packets,
#                  never fragmented), every reply intact; the daemon took
#                  40 in and sent 40 out at least
#   tw-ping6       the same over IPv6 (8952 bytes of ICMPv6 echo data)
#   tw-udp         the datagrams of udp4 and udp6 from the DUT out
#                  through the way back: each once and intact, the daemon
#                  sent 300 out at least
#   tw-tcp-in      50 MB into the DUT, sha256-exact (ACKs the way back);
#                  the daemon took a packet a 9000 bytes in, sent ACKS out
#   tw-tcp-out     50 MB out of the DUT through the way back, TSO
#                  super-packets cut into 8948-byte segments of three
#                  frames each: sha256-exact; the daemon sent a packet a
#                  9000 bytes out, took ACKS in
#   tw-tcp-in6, tw-tcp-out6   the same over IPv6 (8928-byte segments)
#   tw-iperf3-in   iperf3 -n 50M into the DUT (the client there, -R): its
#                  JSON counts every byte of 50 MiB received; through the
#                  daemon as tw-tcp-in
#   tw-iperf3-out  the same out of the DUT (the client in the generator's
#                  namespace, -R); as tw-tcp-out
#   tw-http-out    a 50 MB file over HTTP from a server in the DUT
#                  (python3's http.server) to curl in the generator's
#                  namespace, out through the way back: sha256-exact; as
#                  tw-tcp-out
#   tw-http-in     the same the other way: the server in the generator's
#                  namespace, curl in the DUT; as tw-tcp-in
#   tw-stop        both conservation lines hold over all of the above,
#                  every frame home, packets of several frames sent
#                  (tx_chains) and none refused; none lost: no drop
#                  inward, none for a full channel or TX ring on the way
#                  back; received and the way back's sent at least the
#                  sums the cases above wanted
#   tw-frame-2048  two-way with 2048-byte frames (five for 8972 bytes): the
#                  datagrams out intact, the way back sent 150 at least,
#                  every frame home
#   tw-sw-csum     --no-tx-csum: every checksum the way back's own, summed
#                  over a packet's frames (a datagram's over its read's
#                  frame and spill, a segment's as it is spread): tw-udp's
#                  datagrams and 50 MB out intact, every frame home; the
#                  way back sent them (300, and a packet a 9000 bytes),
#                  the daemon received the ACKs (ACKS)
#   tw-no-offload  --no-offload: 9000-byte reads, no super-packets: the
#                  same
#   tw-neigh       two-way with next hops from the kernel's tables (no
#                  --peer-mac), the generator unknown to the DUT: the first
#                  9000-byte echo request waits for its address in three
#                  frames; 20 of 20 answered (the way back sent 20, the
#                  daemon received the 20 replies at least), held 1 at
#                  least and no_neigh 0 summed over the workers, every
#                  frame home
#   refused        an MTU a packet of 18 frames cannot take (vd at 40000,
#                  2048-byte frames): exit 78 with the reason and the fix,
#                  nothing attached
#   cleanup        nothing left in the namespaces
set -u
BUILD=${BUILD:-build}
name=test-jumbo
cases="start udp4 udp6 tcp load csum-offload stop frames-given frame-2048 max-frags gen-packet gen-size-live
tw-start tw-ping tw-ping6 tw-udp tw-tcp-in tw-tcp-out tw-tcp-in6 tw-tcp-out6 tw-iperf3-in
tw-iperf3-out tw-http-out tw-http-in tw-stop tw-frame-2048 tw-sw-csum tw-no-offload tw-neigh refused
cleanup"
daemon=$BUILD/ucpumapd
gen=ucm-jg-$$
dut=ucm-jd-$$
tun=ucmj$$
G4=10.89.0.1 D4=10.89.0.2 G6=fd89::1 D6=fd89::2
# Packets through the daemon that 50 MB (50 MiB: iperf3's) take at least:
# one a 9000 bytes (the MTU); and the ACKs the other way, ten at least
# (the stack spaces them as it likes: 150 to 700 here).
SEGS=$((50000000 / 9000)) SEGS_MIB=$((52428800 / 9000)) ACKS=10
# A TCP client's time for 50 MB, at most. Under half a second here; a
# path that loses every super-packet's segments still delivers each byte,
# resent one segment at a time after timeouts, in minutes: a time bound
# fails it.
TCP_SECS=20
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/net/daemon.sh

setup() {
	daemon_veth $G4 $D4
	if ! { ip -n "$gen" link set vg mtu 9000 && ip -n "$dut" link set vd mtu 9000 &&
		ip -n "$gen" addr add $G6/64 dev vg nodad &&
		ip -n "$dut" addr add $D6/64 dev vd nodad; } 2> "$tmp/mtu.err"; then
		bad setup "MTU 9000 on veth: $(head -2 "$tmp/mtu.err" | tr '\n' ' ')"
		exit 0
	fi
	if ! kernel_at_least 6 6; then
		skip all "multi-buffer AF_XDP (XDP_USE_SG) needs Linux 6.6, this is $(uname -r)"
		exit 0
	fi
}

# start_daemon LABEL ARGS...: ucpumapd on vd, one-way; $dpid, $D_OUT, $D_ERR.
start_daemon() {
	D_OUT=$tmp/$1.out
	D_ERR=$tmp/$1.err
	shift
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun --interval 0 "$@" \
		> "$D_OUT" 2> "$D_ERR" &
	dpid=$!
	lib_pid $dpid
	wait_line "$D_OUT" '^ucpumapd: ' 50 "$dpid" && return 0
	stop_pid "$dpid"
	dpid=
	return 1
}

# The daemon started and still runs: without it the datagrams would reach
# vd's address through the kernel's own path, and pass.
daemon_up() {
	[ -n "$dpid" ] && kill -0 "$dpid" 2> /dev/null
}

stop_daemon() {
	stop_pid "$dpid" 50
}

# exact_dir DIR PATH LABEL: 50 datagrams of each of PATH's sizes (a list),
# in (DIR in: from the generator into the DUT through the daemon, read on
# the tun alone) or out (from the DUT out through the way back), each once
# and intact: empty, else what went wrong.
exact_dir() {
	local rns=$dut sns=$gen to4=$D4 from4=$G4 to6=$D6 from6=$G6 r e g m du co rpid dev=(--dev $tun)
	if [ "$1" = out ]; then
		rns=$gen sns=$dut to4=$G4 from4=$D4 to6=$G6 from6=$D6 dev=()
	fi
	ip netns exec "$rns" "$PY" "$helper" exact-recv --paths "$2" --count 50 "${dev[@]}" \
		--ready "$tmp/r-$3" --stop "$tmp/s-$3" --out "$tmp/res-$3" --timeout 20 \
		> "$tmp/recv-$3.log" 2>&1 &
	rpid=$!
	lib_pid $rpid
	wait_file "$tmp/r-$3" 50 &&
		lib_run ip netns exec "$sns" "$PY" "$helper" exact-send --paths "$2" --count 50 \
			--rate 2000 --v4 $to4 --src4 $from4 --v6 $to6 --src6 $from6 \
			> "$tmp/send-$3.log" 2>&1
	sleep 0.3
	touch "$tmp/s-$3"
	wait_file "$tmp/res-$3" 50
	stop_pid "$rpid"
	r=$(jget "$tmp/res-$3" "'%d %d %d %d %d' % tuple(sum(d['paths'][p][k] for p in '$2'.split(',')) for k in ('expected', 'received', 'missing', 'duplicated', 'corrupt'))")
	read -r e g m du co <<< "${r:-0 0 0 0 0}"
	if [ "$e" = 0 ] || [ "$g" != "$e" ] || [ "$m" != 0 ] || [ "$du" != 0 ] || [ "$co" != 0 ]; then
		echo "expected $e datagrams, received $g (missing $m, duplicated $du, corrupt $co): $(jget "$tmp/res-$3" "[d['paths'][p]['problems'] for p in '$2'.split(',')]")$([ -s "$tmp/res-$3" ] || echo " (the reader: $(tail -1 "$tmp/recv-$3.log"))")"
	fi
}

# through JSON IN OUT CASE CMD...: CMD, which prints CASE's result line,
# with the daemon's counters read before and after (SIGUSR1: the line it
# adds to JSON, its --stats-json): a PASS becomes a FAIL unless its rx
# (the packets it took from vd) grew by IN at least and its tx (those its
# way back put on vd's TX ring) by OUT. Status 0 when CMD said PASS
# (whatever the counters), else 1.
through() {
	local j=$1 in=$2 out=$3 c=$4 a b res drx dtx
	shift 4
	a=$(usr1_json "$dpid" "$j" "'%d %d' % (d['rx'], d.get('tx', 0))")
	"$@" > "$tmp/through.res"
	b=$(usr1_json "$dpid" "$j" "'%d %d' % (d['rx'], d.get('tx', 0))")
	res=$(cat "$tmp/through.res")
	case $res in
	PASS:*) ;;
	*) echo "$res"; return 1 ;;
	esac
	if [ -z "$a" ] || [ -z "$b" ]; then
		bad "$c" "no statistics line on SIGUSR1 in $j (before: ${a:-none}, after: ${b:-none}); ${res#PASS: $name/$c: }"
		return
	fi
	drx=$((${b% *} - ${a% *})) dtx=$((${b#* } - ${a#* }))
	if [ "$drx" -lt "$in" ] || [ "$dtx" -lt "$out" ]; then
		bad "$c" "the daemon took in $drx packets and sent out $dtx meanwhile, want $in and $out at least: the traffic went around it (${res#PASS: $name/$c: })"
	else
		echo "$res; the daemon took in $drx packets, sent out $dtx"
	fi
}

# The TCP and HTTP cases' 50 MB file, $tmp/blob50, and its sha256:
# $want50 (lib_once).
blob50() {
	head -c 50000000 /dev/urandom > "$tmp/blob50"
	want50=$(sha256sum < "$tmp/blob50" | cut -d' ' -f1)
}

# wait_listen NS PORT: a TCP socket listens on PORT in NS (within 5 s).
wait_listen() {
	for _ in $(seq 50); do
		ip netns exec "$1" ss -ltn "sport = :$2" 2> /dev/null | grep -q LISTEN && return 0
		sleep 0.1
	done
	return 1
}

case_start() {
	local mtu
	if ! start_daemon main --duration 60 --stats-json "$tmp/main.json"; then
		bad start "ucpumapd did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return
	fi
	ip -n "$dut" link set $tun up
	mtu=$(ip -n "$dut" -o link show $tun | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
	if ! grep -q "packets of up to 3 frames (multi-buffer AF_XDP)" "$D_ERR"; then
		bad start "no word of multi-buffer: $(tail -3 "$D_ERR" | tr '\n' ' ')"
	elif ! grep -q "16384 frames per queue: an RX ring of 2048 descriptors, a worker ring of packets of up to 3 frames" "$D_ERR"; then
		bad start "no word of the frames per queue: $(grep -i frames "$D_ERR" | tr '\n' ' ')"
	elif [ "$mtu" != 9000 ]; then
		bad start "the tun's MTU is ${mtu:-unknown}, not vd's 9000"
	else
		ok start "$(grep 'multi-buffer' "$D_ERR")"
	fi
}

udp4_exact() {
	local why
	why=$(exact_dir in jumbo4 u4)
	[ -z "$why" ] && ok udp4 "150 datagrams of 1472, 4000, 8972 bytes, read on $tun" || bad udp4 "$why"
}

case_udp4() {
	lib_need start
	daemon_up || { bad udp4 "no daemon"; return; }
	through "$tmp/main.json" 150 0 udp4 udp4_exact
}

udp6_exact() {
	local why
	why=$(exact_dir in jumbo6 u6)
	[ -z "$why" ] && ok udp6 "150 datagrams of 1452, 3980, 8952 bytes, read on $tun" || bad udp6 "$why"
}

case_udp6() {
	lib_need start
	daemon_up || { bad udp6 "no daemon"; return; }
	through "$tmp/main.json" 150 0 udp6 udp6_exact
}

case_tcp() {
	lib_need start
	daemon_up || { bad tcp "no daemon"; return; }
	through "$tmp/main.json" $SEGS 0 tcp tcp_file
}

tcp_file() {
	local spid want got err
	lib_once blob50
	want=$want50
	ip netns exec "$dut" "$PY" "$helper" tcp-server --addr $D4 --port 5009 \
		--ready "$tmp/tr" --out "$tmp/tres" --timeout 20 > "$tmp/tsrv.log" 2>&1 &
	spid=$!
	lib_pid $spid
	wait_file "$tmp/tr" 50 &&
		lib_run ip netns exec "$gen" timeout $TCP_SECS "$PY" "$helper" tcp-client \
			--addr $D4 --port 5009 --file "$tmp/blob50" --timeout 20 > "$tmp/tcli.log" 2>&1
	wait_file "$tmp/tres" 100
	stop_pid "$spid"
	got=$(jget "$tmp/tres" "d['sha256']")
	err=$(jget "$tmp/tres" "d['error']")
	if [ "$got" = "$want" ]; then
		ok tcp "50 MB sha256-exact, $(jget "$tmp/tcli.log" "d['seconds']") s"
	else
		bad tcp "sha256 ${got:-none} of $(jget "$tmp/tres" "d['bytes']") bytes, want $want (error: $err; client: $(tail -1 "$tmp/tcli.log" | grep . || echo "not done in $TCP_SECS s"))"
	fi
}

case_load() {
	local fp
	lib_need start
	daemon_up || { bad load "no daemon"; return; }
	# Paced near what this machine's copy path takes: a flood would only
	# measure the kernel's ring-full drops, which stop accounts for.
	ip netns exec "$gen" "$PY" "$helper" exact-send --paths jumbo4,jumbo6 --count 3000 \
		--rate 30000 --v4 $D4 --src4 $G4 --v6 $D6 --src6 $G6 > "$tmp/load.log" 2>&1 &
	fp=$!
	lib_pid $fp
	lib_wait $fp
	if [ "$(jget "$tmp/load.log" "d['sent']")" = 18000 ]; then
		ok load "18000 datagrams of six sizes"
	else
		bad load "the generator: $(tail -2 "$tmp/load.log" | tr '\n' ' ')"
	fi
}

case_csum_offload() {
	lib_need start
	daemon_up || { bad csum-offload "no daemon"; return; }
	through "$tmp/main.json" 300 0 csum-offload csum_offload_exact
}

csum_offload_exact() {
	local why e0 e1
	if ! ip netns exec "$gen" ethtool -K vg tx on > /dev/null 2>&1; then
		bad csum-offload "ethtool -K vg tx on failed"
		return
	fi
	e0=$(ip netns exec "$dut" nstat -asz | awk '$1 ~ /^Udp6?InCsumErrors$/ { n += $2 } END { print n + 0 }')
	why=$(exact_dir in jumbo4,jumbo6 co)
	e1=$(ip netns exec "$dut" nstat -asz | awk '$1 ~ /^Udp6?InCsumErrors$/ { n += $2 } END { print n + 0 }')
	ip netns exec "$gen" ethtool -K vg tx off > /dev/null
	[ -z "$why" ] && [ "$e1" != "$e0" ] && why="$((e1 - e0)) InCsumErrors behind the tun"
	[ -z "$why" ] && ok csum-offload "300 datagrams, their checksums partial, read on $tun" || bad csum-offload "$why"
}

case_stop() {
	local why chains super rcv dlv pk
	lib_need start udp4 udp6 tcp load
	daemon_up || { bad stop "no daemon"; return; }
	ip netns exec "$dut" kill -USR1 "$dpid" 2> /dev/null
	sleep 0.5
	stop_daemon
	why=$(closing_lines "$D_OUT")
	tail -1 "$tmp/main.json" > "$tmp/last.json" 2> /dev/null
	chains=$(jget "$tmp/last.json" "d['rx_chains']")
	super=$(jget "$tmp/last.json" "d['tun_super']")
	# a queue's rx counts descriptors: less rx_chain_more, the packets
	pk=$(jget "$tmp/last.json" "'%d %d' % (sum(q['rx'] - q['rx_chain_more'] for q in d['queues']), d['rx'])")
	read -r rcv dlv <<< "$(sed -n 's/^conservation: received \([0-9]*\) = delivered \([0-9]*\) .*/\1 \2/p' "$D_OUT")"
	# udp4 and udp6 alone sent 200 datagrams of two or three frames.
	if [ -n "$why" ]; then
		bad stop "$why"
	elif grep -q '^conservation: .*chain [1-9]' "$D_OUT"; then
		bad stop "packets of several frames dropped: $(grep '^conservation' "$D_OUT")"
	elif [ "${rcv:-0}" -lt 18000 ] || [ $((${dlv:-0} * 20)) -lt $((rcv * 19)) ]; then
		bad stop "received ${rcv:-none}, delivered ${dlv:-none}: want load's 18000 in, 95% out"
	elif [ -z "$pk" ] || [ "${pk% *}" != "${pk#* }" ]; then
		bad stop "the queues' rx less rx_chain_more, and the total rx: ${pk:-not in the JSON}"
	elif [ "${chains:-0}" -lt 200 ]; then
		bad stop "rx_chains ${chains:-none} in the last JSON line, want at least 200"
	elif [ "${super:-0}" -lt 1 ]; then
		bad stop "tun_super ${super:-none}: tcp's segments of three frames never coalesced"
	else
		ok stop "rx_chains $chains, super-packets $super; $(grep '^conservation' "$D_OUT")"
	fi
}

case_frames_given() {
	local rc
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun ${tun}c --frames 8192 \
		--duration 2 > "$tmp/fg.out" 2> "$tmp/fg.err"
	rc=$?
	if [ "$rc" = 78 ] && grep -q "8192 frames per queue cannot cover the rings and a worker ring of packets of up to 3 frames (vd's MTU 9000): give at least 16384 (they need 9216; a power of two)" "$tmp/fg.err" &&
		! ip -n "$dut" -d link show vd | grep -q 'prog/xdp'; then
		ok frames-given "$(grep 'cannot cover' "$tmp/fg.err")"
	else
		bad frames-given "status $rc: $(tail -2 "$tmp/fg.err" | tr '\n' ' ')"
	fi
}

case_frame_2048() {
	local why rx
	lib_need stop
	if ! start_daemon f2k --duration 30 --frame-size 2048; then
		bad frame-2048 "ucpumapd did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return
	fi
	ip -n "$dut" link set $tun up
	why=$(exact_dir in jumbo4 f2k)
	stop_daemon
	[ -z "$why" ] && why=$(closing_lines "$D_OUT")
	rx=$(closing_count "$D_OUT" received)
	[ -z "$why" ] && [ "${rx:-0}" -lt 150 ] &&
		why="the daemon received ${rx:-?} (its conservation line), want the 150 datagrams at least"
	if [ -n "$why" ]; then
		bad frame-2048 "$why"
	elif ! grep -q "packets of up to 6 frames" "$D_ERR"; then
		bad frame-2048 "no word of 6 frames: $(grep multi-buffer "$D_ERR")"
	else
		ok frame-2048 "150 datagrams in 2048-byte frames; $(grep '^conservation' "$D_OUT")"
	fi
}

case_max_frags() {
	local why long hist descs port=$((20000 + $$ % 10000))
	lib_need stop
	if ! start_daemon mf --duration 30 --max-frags 2 --metrics-listen 127.0.0.1:$port \
		--stats-json "$tmp/mf.json"; then
		bad max-frags "ucpumapd did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return
	fi
	ip -n "$dut" link set $tun up
	why=$(exact_dir in jumbo4 mf)
	# /metrics names the chain's reason: too long, here
	lib_run ip netns exec "$dut" timeout 15 "$PY" "$progs/metrics_client.py" --port $port scrape \
		--deadline 8 > "$tmp/mf.metrics" 2>&1
	long=$(jget "$tmp/mf.metrics" 'int(d["drops_by_reason"]["chain_long"])')
	# Packets, and descriptors: packets and the frames after each first.
	descs=$(jget "$tmp/mf.metrics" '"%d %d %d" % (d["rx"], d["rx_descs"], d["rx_chain_more"])')
	# A poll whose one packet was dropped flushed no batch: no RX-stage
	# sample either (rx_hist counts one per batch, where stamped).
	hist=$(usr1_json "$dpid" "$tmp/mf.json" \
		'"%d %d" % (sum(q["rx_hist"]) if sum(q["rx_hist"]) else -1, q["rx_batches"]) if (q := d["queues"][0]) else ""')
	stop_daemon
	if [ "${why%%:*}" != "expected 150 datagrams, received 100 (missing 50, duplicated 0, corrupt 0)" ]; then
		bad max-frags "want the 50 of 8972 bytes missing, the rest intact: ${why:-all 150 came}"
	elif ! grep -q "more than 2 frames (max_frags) are dropped" "$D_ERR"; then
		bad max-frags "no word of the limit: $(grep 'dp:' "$D_ERR" | tr '\n' ' ')"
	elif why=$(closing_lines "$D_OUT"); [ -n "$why" ]; then
		bad max-frags "$why"
	elif ! grep -q '^conservation: .*chain 50\b' "$D_OUT"; then
		bad max-frags "want 50 chain drops: $(grep '^conservation' "$D_OUT")"
	elif [ "$long" != 50 ]; then
		bad max-frags "/metrics: want chain_long 50, read '${long:-none}': $(head -c 300 "$tmp/mf.metrics")"
	elif [ "$descs" != "150 300 150" ]; then
		bad max-frags "/metrics: want packets 150, descriptors 300, chain_more 150 (50 of 1, 2 and 3 frames), read '${descs:-none}'"
	elif [ -z "$hist" ] || { [ "${hist% *}" != -1 ] && [ "${hist% *}" != "${hist#* }" ]; }; then
		bad max-frags "rx_hist and rx_batches (want equal, where stamped): '${hist:-no SIGUSR1 line}'"
	else
		ok max-frags "100 datagrams of 1472 and 4000 intact, 50 of 8972 dropped; /metrics: packets, descriptors, chain_more $descs; $(grep '^conservation' "$D_OUT")"
	fi
}

case_gen_packet() {
	local rpid got
	lib_need frame-2048	# no daemon on vd now: the stack receives
	ip netns exec "$dut" "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)
s.bind(("'$D4'", 7400)); s.settimeout(3); open(sys.argv[1], "w").close()
n = 0
try:
    while True:
        n += len(s.recv(65535)) == 8972
except socket.timeout:
    pass
print(n)' "$tmp/gp-ready" > "$tmp/gp.out" 2>&1 &
	rpid=$!
	lib_pid $rpid
	wait_file "$tmp/gp-ready" 50 &&
		lib_run ip netns exec "$gen" timeout 20 "$BUILD/ucpumap-gen" --dev vg --engine packet \
			--size 9014 --dst-ip $D4 --dst-port 7400 --count 300 --rate 3000 --flows 4 \
			> "$tmp/gp-gen.out" 2>&1
	lib_wait $rpid
	got=$(tail -1 "$tmp/gp.out")
	if [ "$got" = 300 ] && grep -q "packet engine" "$tmp/gp-gen.out"; then
		ok gen-packet "300 frames of 9014 bytes, $(grep '^total' "$tmp/gp-gen.out")"
	else
		bad gen-packet "received ${got:-nothing} of 300: $(tail -2 "$tmp/gp-gen.out" | tr '\n' ' ')"
	fi
}

case_gen_size_live() {
	local rc
	lib_run ip netns exec "$gen" timeout 10 "$BUILD/ucpumap-gen" --dev vg --size 5000 \
		--dst-ip $D4 --count 1 > "$tmp/gl.out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q "give --engine packet for larger ones" "$tmp/gl.out"; then
		ok gen-size-live "$(head -1 "$tmp/gl.out")"
	else
		bad gen-size-live "status $rc: $(head -2 "$tmp/gl.out" | tr '\n' ' ')"
	fi
}

# ---- two-way: the way back sends packets of several frames ------------------

# start_tw LABEL ARGS...: ucpumapd --two-way on vd, its next hop the
# generator's vg, the routes to the generator through the tun: $dpid. On
# failure the daemon is stopped.
start_tw() {
	local hop
	hop=(--peer-mac "$(mac_of "$gen" vg)")
	[ -z "${TW_NEIGH:-}" ] || hop=()	# next hops from the kernel's tables
	if ! start_daemon "$@" --two-way "${hop[@]}" ||
		! ip -n "$dut" link set $tun up ||
		! ip netns exec "$dut" sysctl -qw net.ipv4.conf.$tun.rp_filter=0 ||
		! ip -n "$dut" route add $G4/32 dev $tun ||
		! ip -n "$dut" -6 route add $G6/128 dev $tun ||
		! ip -n "$dut" route get $G4 | grep -q "dev $tun"; then
		stop_daemon
		return 1
	fi
}

case_tw_start() {
	local mtu
	lib_need frame-2048
	if ! ip netns exec "$dut" ethtool -K vd tx off > /dev/null; then
		bad tw-start "ethtool -K vd tx off failed"
		return
	fi
	if ! start_tw tw --duration 120 --stats-json "$tmp/tw.json"; then
		bad tw-start "ucpumapd --two-way did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		dpid=
		return
	fi
	mtu=$(ip -n "$dut" -o link show $tun | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
	if ! grep -q "packets of up to 3 frames (multi-buffer AF_XDP)" "$D_ERR"; then
		bad tw-start "no word of multi-buffer: $(tail -3 "$D_ERR" | tr '\n' ' ')"
	elif [ "$mtu" != 9000 ]; then
		bad tw-start "the tun's MTU is ${mtu:-unknown}, not vd's 9000"
	else
		ok tw-start "two-way at MTU 9000, the tun's MTU 9000"
	fi
}

# tw_ping NS DST [SIZE [INTERVAL]]: 20 echoes of SIZE bytes (8972; over
# IPv6, 8952 makes the same 9000-byte packets), INTERVAL seconds apart
# (0.05): empty when every reply came back intact, else the helper's
# answer.
tw_ping() {
	local r
	r=$(ip netns exec "$1" "$PY" "$helper" ping --dst "$2" --count 20 \
		--interval "${4:-0.05}" --size "${3:-8972}" --timeout 5 2>&1)
	[ "$(echo "$r" | jget /dev/stdin "d['replies']")" = 20 ] || echo "$r"
}

# tw_run CASE IN OUT FN ARGS...: FN CASE ARGS once the two-way daemon
# runs, through it: its rx must grow by IN at least, its tx by OUT
# (through); $tw_in, $tw_out: the sums over the cases whose own check
# passed, for tw-stop.
tw_in=0 tw_out=0
tw_run() {
	local c=$1 in=$2 out=$3 fn=$4
	shift 4
	lib_need tw-start
	daemon_up || { bad "$c" "no daemon"; return; }
	through "$tmp/tw.json" "$in" "$out" "$c" "$fn" "$c" "$@" &&
		tw_in=$((tw_in + in)) tw_out=$((tw_out + out))
}

# tw_pings CASE ADDR-GEN ADDR-DUT SIZE FAMILY: 20 pings each way.
tw_pings() {
	local in out
	in=$(tw_ping "$gen" "$3" "$4" 0.01)
	out=$(tw_ping "$dut" "$2" "$4" 0.01)
	if [ -z "$in$out" ]; then
		ok "$1" "20 of 20 echoes of 9000-byte $5packets each way, intact"
	else
		bad "$1" "asked by the generator: ${in:-all 20}; by the DUT: ${out:-all 20}"
	fi
}

# 20 echo requests and 20 replies each way: 40 in, 40 out.
case_tw_ping() { tw_run tw-ping 40 40 tw_pings $G4 $D4 8972 ""; }

case_tw_ping6() { tw_run tw-ping6 40 40 tw_pings $G6 $D6 8952 "IPv6 "; }

tw_udp() {
	local why
	why=$(exact_dir out jumbo4,jumbo6 tw-u)
	[ -z "$why" ] && ok tw-udp "300 datagrams of 1472 to 8972 bytes out, IPv4 and IPv6, intact" ||
		bad tw-udp "$why"
}

case_tw_udp() { tw_run tw-udp 0 300 tw_udp; }

# tw_tcp TAG SERVER-NS SERVER-ADDR CLIENT-NS: 50 MB, sha256 at the server.
tw_tcp() {
	local spid want got
	lib_once blob50
	want=$want50
	ip netns exec "$2" "$PY" "$helper" tcp-server --addr "$3" --port 5010 \
		--ready "$tmp/$1.r" --out "$tmp/$1.res" --timeout 30 > "$tmp/$1.srv" 2>&1 &
	spid=$!
	lib_pid $spid
	wait_file "$tmp/$1.r" 50 &&
		lib_run ip netns exec "$4" timeout $TCP_SECS "$PY" "$helper" tcp-client \
			--addr "$3" --port 5010 --file "$tmp/blob50" --timeout 30 > "$tmp/$1.cli" 2>&1
	wait_file "$tmp/$1.res" 100
	stop_pid "$spid"
	got=$(jget "$tmp/$1.res" "d['sha256']")
	if [ "$got" = "$want" ]; then
		ok "$1" "50 MB sha256-exact, $(jget "$tmp/$1.cli" "d['seconds']") s"
	else
		bad "$1" "sha256 ${got:-none} of $(jget "$tmp/$1.res" "d['bytes']") bytes, want $want (error: $(jget "$tmp/$1.res" "d['error']"); client: $(tail -1 "$tmp/$1.cli" | grep . || echo "not done in $TCP_SECS s"))"
	fi
}

case_tw_tcp_in() { tw_run tw-tcp-in $SEGS $ACKS tw_tcp "$dut" $D4 "$gen"; }

case_tw_tcp_out() { tw_run tw-tcp-out $ACKS $SEGS tw_tcp "$gen" $G4 "$dut"; }

case_tw_tcp_in6() { tw_run tw-tcp-in6 $SEGS $ACKS tw_tcp "$dut" $D6 "$gen"; }

case_tw_tcp_out6() { tw_run tw-tcp-out6 $ACKS $SEGS tw_tcp "$gen" $G6 "$dut"; }

# tw_iperf3 CASE SERVER-NS SERVER-ADDR CLIENT-NS: iperf3 -n 50M from the
# server to the client (-R). The receiver is then the client, which ends
# the test only once every byte has come; a receiving server stops
# counting at the client's end message, which can overtake data still in
# flight (a few MB short of 50 on a plain veth). The client's JSON must
# count 50 MiB received, and the server as many sent at least.
tw_iperf3() {
	local spid r sent got secs
	if ! command -v iperf3 > /dev/null; then
		skip "$1" "needs iperf3 (scripts/install-deps.sh installs it)"
		return
	fi
	ip netns exec "$2" iperf3 -s -1 -B "$3" -p 5211 > "$tmp/$1.s" 2>&1 &
	spid=$!
	lib_pid $spid
	wait_listen "$2" 5211 &&
		lib_run ip netns exec "$4" timeout 30 iperf3 -c "$3" -p 5211 -n 50M -R -J \
			> "$tmp/$1.c" 2>&1
	stop_pid "$spid"
	r=$("$PY" -c 'import json, sys
e = json.load(open(sys.argv[1]))["end"]
print(e["sum_sent"]["bytes"], e["sum_received"]["bytes"], round(e["sum_received"]["seconds"], 3))' \
		"$tmp/$1.c" 2> /dev/null)
	read -r sent got secs <<< "${r:-0 0 0}"
	if [ "$got" -ge $((50 << 20)) ] && [ "$sent" -ge "$got" ]; then
		ok "$1" "$got bytes received of $sent sent, $secs s"
	else
		bad "$1" "received ${got} bytes of ${sent} sent, want 52428800: $(grep -m1 '"error"' "$tmp/$1.c" || tail -1 "$tmp/$1.c")"
	fi
}

case_tw_iperf3_in() { tw_run tw-iperf3-in $SEGS_MIB $ACKS tw_iperf3 "$gen" $G4 "$dut"; }

case_tw_iperf3_out() { tw_run tw-iperf3-out $ACKS $SEGS_MIB tw_iperf3 "$dut" $D4 "$gen"; }

# tw_http CASE SERVER-NS SERVER-ADDR CLIENT-NS: blob50 over HTTP from
# python3's http.server to curl, sha256-exact.
tw_http() {
	local hpid got size
	if ! command -v curl > /dev/null; then
		skip "$1" "needs curl (scripts/install-deps.sh installs it)"
		return
	fi
	lib_once blob50
	ip netns exec "$2" "$PY" -m http.server 8089 --bind "$3" --directory "$tmp" \
		> "$tmp/$1.log" 2>&1 &
	hpid=$!
	lib_pid $hpid
	wait_listen "$2" 8089 &&
		lib_run ip netns exec "$4" curl -s --max-time 30 -o "$tmp/$1.dl" \
			"http://$3:8089/blob50" 2> "$tmp/$1.curl"
	stop_pid "$hpid"
	got=$(sha256sum < "$tmp/$1.dl" 2> /dev/null | cut -d' ' -f1)
	size=$(stat -c %s "$tmp/$1.dl" 2> /dev/null || echo no)
	rm -f "$tmp/$1.dl"
	if [ "$got" = "$want50" ]; then
		ok "$1" "50 MB over HTTP, sha256-exact"
	else
		bad "$1" "downloaded $size bytes, sha256 ${got:-none}, want $want50: $(head -2 "$tmp/$1.curl")"
	fi
}

# Out through the way back (the server in the DUT).
case_tw_http_out() { tw_run tw-http-out $ACKS $SEGS tw_http "$dut" $D4 "$gen"; }

# Into the DUT through the daemon (the server in the generator's namespace).
case_tw_http_in() { tw_run tw-http-in $SEGS $ACKS tw_http "$gen" $G4 "$dut"; }

case_tw_stop() {
	local why r chains more bad rx sn
	lib_need tw-start tw-ping tw-ping6 tw-udp tw-tcp-in tw-tcp-out tw-tcp-in6 tw-tcp-out6 \
		tw-iperf3-in tw-iperf3-out tw-http-out tw-http-in
	daemon_up || { bad tw-stop "no daemon"; return; }
	ip netns exec "$dut" kill -USR1 "$dpid" 2> /dev/null
	sleep 0.5
	stop_daemon
	why=$(closing_lines "$D_OUT")
	grep -q '^conservation, way back: .*: holds$' "$D_OUT" ||
		why="$why $(grep '^conservation, way back' "$D_OUT" || echo 'no way back line')"
	r=$(jget "$tmp/tw.json" "'%d %d %d' % (d['tx_chains'], d['tx_chain_more'], sum(q['tx_chain_long'] + q['tx_chain_bad'] + q['tx_chain_nosg'] for q in d['queues']))")
	read -r chains more bad <<< "${r:-0 0 0}"
	rx=$(closing_count "$D_OUT" received)
	sn=$(closing_count "$D_OUT" sent)
	# tw-ping's 20 replies and tw-udp's 200 datagrams of two or three
	# frames, and tw-tcp-out's segments, went out in several frames.
	if [ -n "${why// /}" ]; then
		bad tw-stop "$why"
	elif ! grep -Eq '^conservation: received [0-9]+ = delivered [0-9]+ \+ drops 0 ' "$D_OUT" ||
		! grep -q '^conservation, way back: .* channel_full 0, tx_full 0, tx_bad 0)' "$D_OUT"; then
		# The transfers' packets, none lost: inward, no drop at all; on
		# the way back, none for a full channel or TX ring, none refused
		# (what it cannot send at all, such as the tun's own link's,
		# aside).
		bad tw-stop "packets lost: $(grep '^conservation' "$D_OUT" | tr '\n' ' ')"
	elif [ "${chains:-0}" -lt 220 ] || [ "${more:-0}" -le "${chains:-0}" ] || [ "$bad" != 0 ]; then
		bad tw-stop "tx_chains ${chains:-none}, their later frames ${more:-none}, refused $bad: want 220 or more, more frames than packets, none refused"
	elif [ "${rx:-0}" -lt "$tw_in" ] || [ "${sn:-0}" -lt "$tw_out" ]; then
		bad tw-stop "the daemon received ${rx:-?}, its way back sent ${sn:-?}: want the cases' $tw_in and $tw_out at least (they went around it)"
	else
		ok tw-stop "tx_chains $chains ($more later frames); received $rx, $tw_in at least wanted; $(grep '^conservation, way back' "$D_OUT")"
	fi
}

case_tw_frame_2048() {
	local why sn
	lib_need tw-stop
	if ! start_tw tw2k --duration 30 --frame-size 2048; then
		bad tw-frame-2048 "ucpumapd did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return
	fi
	why=$(exact_dir out jumbo4 tw2k)
	stop_daemon
	[ -z "$why" ] && why=$(closing_lines "$D_OUT")
	grep -q '^conservation, way back: .*: holds$' "$D_OUT" ||
		why="$why $(grep '^conservation, way back' "$D_OUT" || echo 'no way back line')"
	sn=$(closing_count "$D_OUT" sent)
	[ "${sn:-0}" -ge 150 ] || why="$why the way back sent ${sn:-?}, want the 150 datagrams at least;"
	if [ -n "${why// /}" ]; then
		bad tw-frame-2048 "$why"
	else
		ok tw-frame-2048 "150 datagrams out in 2048-byte frames; $(grep '^conservation, way back' "$D_OUT")"
	fi
}

# tw_variant CASE ARGS...: ucpumapd two-way with ARGS: tw-udp's datagrams
# and 50 MB out, intact; both ways conserved, every frame home; through
# the daemon (its closing lines): the way back sent the 300 and the
# segments, it received the ACKs. Prints FAIL, or nothing.
tw_variant() {
	local c=$1 why rx sn
	shift
	if ! start_tw "$c" --duration 60 --stats-json "$tmp/$c.json" "$@"; then
		bad "$c" "ucpumapd $* did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return 1
	fi
	why=$(exact_dir out jumbo4,jumbo6 "$c-u")
	tw_tcp "$c-tcp" "$gen" $G4 "$dut" > "$tmp/$c.tcp"
	grep -q '^PASS' "$tmp/$c.tcp" || why="$why $(cat "$tmp/$c.tcp")"
	ip netns exec "$dut" kill -USR1 "$dpid" 2> /dev/null
	sleep 0.5
	stop_daemon
	why="$why $(closing_lines "$D_OUT")"
	grep -q '^conservation, way back: .*: holds$' "$D_OUT" ||
		why="$why $(grep '^conservation, way back' "$D_OUT" || echo 'no way back line')"
	rx=$(closing_count "$D_OUT" received)
	sn=$(closing_count "$D_OUT" sent)
	[ "${rx:-0}" -ge $ACKS ] && [ "${sn:-0}" -ge $((300 + SEGS)) ] ||
		why="$why the daemon received ${rx:-?}, its way back sent ${sn:-?}: want $ACKS and $((300 + SEGS)) at least (the ACKs; the datagrams and the segments);"
	if [ -n "${why// /}" ]; then
		bad "$c" "${why#"${why%%[! ]*}"}"
		return 1
	fi
}

case_tw_sw_csum() {
	local r done left chains
	lib_need tw-frame-2048
	tw_variant tw-sw-csum --no-tx-csum || return
	r=$(jget "$tmp/tw-sw-csum.json" "'%d %d %d' % (d['back_csum_completed'], d['back_csum_offloaded'], d['tx_chains'])")
	read -r done left chains <<< "${r:-0 -1 0}"
	if [ "${done:-0}" -ge 300 ] && [ "$left" = 0 ] && [ "${chains:-0}" -ge 200 ]; then
		ok tw-sw-csum "$done checksums completed, none left to the kernel, $chains packets in several frames; every byte intact"
	else
		bad tw-sw-csum "completed ${done:-none} (want 300 or more), left ${left:-none} to the kernel (want 0), tx_chains ${chains:-none}"
	fi
}

case_tw_no_offload() {
	local r sup chains
	lib_need tw-sw-csum
	tw_variant tw-no-offload --no-offload || return
	r=$(jget "$tmp/tw-no-offload.json" "'%d %d' % (d['back_super'], d['tx_chains'])")
	read -r sup chains <<< "${r:-1 0}"
	if [ "$sup" = 0 ] && [ "${chains:-0}" -ge 200 ]; then
		ok tw-no-offload "no super-packets, $chains packets of 9000 bytes read whole and sent in several frames; every byte intact"
	else
		bad tw-no-offload "super-packets ${sup:-none} (want 0), tx_chains ${chains:-none}"
	fi
}

case_tw_neigh() {
	local out held nn rx sn
	lib_need tw-no-offload
	ip -n "$dut" neigh flush dev vd
	if ! TW_NEIGH=1 start_tw tw-neigh --duration 30 --extended; then
		bad tw-neigh "ucpumapd did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return
	fi
	out=$(tw_ping "$dut" $G4)
	stop_daemon
	held=$(back_sum "$D_OUT" held)
	nn=$(back_sum "$D_OUT" no_neigh)
	rx=$(closing_count "$D_OUT" received)
	sn=$(closing_count "$D_OUT" sent)
	if [ -z "$out" ] && [ "${held:-0}" -ge 1 ] && [ "${nn:-x}" = 0 ] &&
		[ "${rx:-0}" -ge 20 ] && [ "${sn:-0}" -ge 20 ] &&
		grep -q "^audit: every frame came home" "$D_OUT"; then
		ok tw-neigh "20 of 20 echoes of 9000 bytes out, the first $held waiting in three frames for the generator's address; no_neigh 0 (the workers' sums); the way back sent $sn, the daemon received $rx; every frame home"
	else
		bad tw-neigh "echoes: ${out:-all 20}; held ${held:-none}, no_neigh ${nn:-none} (the workers' sums; want 1 at least and 0); the way back sent ${sn:-?}, the daemon received ${rx:-?} (want 20 and 20 at least); $(grep '^audit' "$D_OUT")"
	fi
}

case_refused() {
	local rc attached
	lib_need tw-no-offload
	if ! ip -n "$dut" link set vd mtu 40000 2> "$tmp/mtu40k.err"; then
		skip refused "vd takes no MTU of 40000: $(head -1 "$tmp/mtu40k.err")"
		return
	fi
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun ${tun}b --two-way \
		--frame-size 2048 --duration 2 > "$tmp/ref.out" 2> "$tmp/ref.err"
	rc=$?
	attached=$(ip -n "$dut" -d link show vd | grep -c 'prog/xdp')
	ip -n "$dut" link set vd mtu 9000
	if [ "$rc" = 78 ] && grep -q "MTU 40000 is more than a 2048-byte frame holds .* a packet would take more frames than the kernel gives one: lower it (ip link set dev vd mtu 32234), or give 4096-byte frames" "$tmp/ref.err" &&
		[ "$attached" = 0 ] && ! ip -n "$dut" link show ${tun}b > /dev/null 2>&1; then
		ok refused "$(grep 'MTU 40000' "$tmp/ref.err" | head -1)"
	else
		bad refused "status $rc, XDP attached $attached: $(tail -2 "$tmp/ref.err" | tr '\n' ' ')"
	fi
}

case_cleanup() {
	local left
	lib_need stop frame-2048 tw-frame-2048 tw-no-offload refused
	left=$(left_in "$dut" vd)
	[ -z "$left" ] && ok cleanup || bad cleanup "left in $dut: $left"
}

lib_run_cases "$@"
