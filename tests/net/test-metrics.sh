#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd --metrics-listen on a veth pair between two namespaces: the
# generator (vg) and the DUT (vd: the daemon, its tun, and the scrapes,
# on 127.0.0.1 there). Clients are tests/progs/metrics_client.py (with the
# strict text-format parser), traffic tests/progs/ucpumapd_traffic.py.
#
#   parser-self-check   the parser refuses broken expositions (else the
#                       format case below proves nothing)
#   bad-listen-*        each bad --metrics-listen: exit 2, its message
#   port-in-use         exit 78 (the configuration's) with a message, no XDP
#                       program, no tun
#   low-port            a port below 1024: bound and served as root (the
#                       set-up keeps CAP_NET_BIND_SERVICE until then);
#                       without that capability, the start and --check
#                       both say exit 78, naming it, nothing attached;
#                       the namespace's ip_unprivileged_port_start
#                       followed (80: port 81 served; 2000: 1500 refused);
#                       /proc/sys hidden (ProcSubset=pid), the bind decides
#                       (80: 81 served; 1024: 81 refused, exit 78, said)
#   scrape-format       200, Content-Type 0.0.4, every line valid (UTF-8
#                       too: the tun's name is not), the
#                       families there (the fair share's refusals among
#                       them: a drop reason and a family of their own),
#                       histograms cumulative, the build's version
#                       (--version's) in ucpumap_build_info; the
#                       kernel's causes among the drop reasons, and the
#                       chain drops' four (not their sum), up 1
#   scrape-counts       rx summed over queues and delivered summed over
#                       workers are exactly the datagrams sent
#   link-state          ucpumap_up and ucpumap_link_up{dev,role} are 1; 0
#                       (each its own role) while the tun, then the
#                       interface, is set down; 1 again once up
#   http-errors         wrong methods, paths and versions: 405, 404, 400
#   bad-client-*        garbage, a slowloris, 1000 connections at once,
#                       every slot held idle or answered and unread (a
#                       scrape gets in at once), a flood of idle
#                       connections (every scrape gets in, the evicted
#                       are counted), a
#                       100 KiB request: each answered or cut off in time,
#                       and after each, a scrape answers and a new batch
#                       of datagrams is counted, exactly
#   sigterm             exit 0, conservation holds, every frame home,
#                       nothing left, the port closed
#   ring-full           a daemon of its own with a 64-slot RX ring, under
#                       ucpumap-gen's 400 kpps: ucpumap_drops_total has
#                       the ring-full reason, and what was sent is what
#                       was delivered and the drops, exactly (less the
#                       veth's own drops, which it reports)
#   pass                a daemon of its own with --pass: no worker sleep
#                       families (an inline worker never sleeps: its busy
#                       share would read 100%), the worker's own families
#                       there; its --extended worker line says inline
#   cleanup             nothing outlives the cleanup (a line only when
#                       something does)
#
# The cases from scrape-counts on share one daemon (started at the first
# of them) and count what all of them sent; scrape-format judges
# scrape-counts' scrape.
#
# Root. Every case prints one PASS/FAIL/SKIP line; the script exits 0. The
# daemon has a --duration backstop and is stopped by its pid; each client
# runs under timeout. UCM_KEEP=DIR keeps the logs.
set -u
BUILD=${BUILD:-build}
name=test-metrics
cases="parser-self-check bad-listen port-in-use low-port scrape-counts scrape-format http-errors
bad-client-garbage bad-client-slowloris bad-client-1000-connections bad-client-held-slots bad-client-answered-held bad-client-flood bad-client-100k-request
link-state sigterm ring-full pass cleanup"
here=$(cd "$(dirname "$0")" && pwd)
daemon=$(cd "$BUILD" 2>/dev/null && pwd)/ucpumapd
genbin=$(dirname "$daemon")/ucpumap-gen
gen=ucmmg$$
dut=ucmmd$$
# The tun's name is not UTF-8 (the kernel takes any byte but '/', ':' and
# white space): its label must be U+FFFD there, or the body is not UTF-8.
tun=$'ucmm\xff'
tun_label='ucmm\ufffd'
port=9423
. "$here/../lib.sh"
traffic=$progs/ucpumapd_traffic.py
client=$progs/metrics_client.py
dpid=

setup() {
	skip_unless_root "namespaces, XDP, tun"
	if [ ! -x "$daemon" ]; then
		echo "FAIL: $name: $BUILD/ucpumapd is not built (run make)"
		exit 0
	fi
	if [ -z "$PY" ]; then
		echo "SKIP: $name: needs python3"
		exit 0
	fi
}

# ---- the parser itself ---------------------------------------------------------
# Each broken exposition must be refused, the good one taken.
parser_case() {	# want (ok|bad), text
	printf '%b' "$2" > "$tmp/p.txt"
	r=$("$PY" "$client" parse "$tmp/p.txt" | "$PY" -c 'import json,sys; print("bad" if json.load(sys.stdin)["problems"] else "ok")')
	[ "$r" = "$1" ] || echo "want $1, parser said $r: $2;"
}
case_parser_self_check() {
	local G why=
	G='# HELP h x\n# TYPE h histogram\n'
	why+=$(parser_case ok '# HELP a_total x\n# TYPE a_total counter\na_total{q="0"} 1\na_total{q="1"} 2\n'"$G"'h_bucket{le="2"} 1\nh_bucket{le="+Inf"} 3\nh_sum 7\nh_count 3\n')
	why+=$(parser_case bad '# HELP a x\n# TYPE a gauge\na{q="0} 1\n')
	why+=$(parser_case bad '# HELP a x\n# TYPE a counter\na 1\n')
	why+=$(parser_case bad 'a_total 1\n')
	why+=$(parser_case bad '# HELP a x\n# TYPE a gauge\na 1')
	why+=$(parser_case bad '# HELP a x\n# TYPE a gauge\na 1\n# HELP b x\n# TYPE b gauge\nb 1\na{x="1"} 2\n')
	why+=$(parser_case bad '# HELP a x\n# TYPE a gauge\na 1\na 2\n')
	why+=$(parser_case bad '# HELP a x\n# TYPE a gauge\na one\n')
	why+=$(parser_case bad '# HELP a x\n# TYPE a gauge\n1a 1\n')
	why+=$(parser_case bad "$G"'h_bucket{le="2"} 5\nh_bucket{le="+Inf"} 3\nh_sum 1\nh_count 3\n')
	why+=$(parser_case bad "$G"'h_bucket{le="2"} 1\nh_bucket{le="+Inf"} 3\nh_sum 1\nh_count 4\n')
	why+=$(parser_case bad "$G"'h_bucket{le="2"} 1\nh_sum 1\nh_count 1\n')
	if [ -z "$why" ]; then ok parser-self-check; else bad parser-self-check "$why"; fi
}

# ---- topology ------------------------------------------------------------------
topology() {
	G4=10.204.0.1 D4=10.204.0.2
	if ! veth_pair "$gen" "$dut" vg vd $G4/24 $D4/24 2> "$tmp/setup.err"; then
		bad setup "cannot build the namespaces: $(head -3 "$tmp/setup.err" | tr '\n' ' ')"
		exit 0
	fi
	# Packets come back in through the tun, not vd: no reverse-path filter.
	ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
}

in_ns() {	# namespace, command...: in the foreground, registered
	local ns=$1
	shift
	lib_run ip netns exec "$ns" "$@"
}

bg() {	# namespace, log, command...: in the background; $last is its pid
	local ns=$1 log=$2
	shift 2
	ip netns exec "$ns" "$@" > "$log" 2>&1 &
	last=$!
	lib_pid $last
}

# A client of the metrics in the DUT: its JSON line into FILE.
mc() {	# file, mode args...
	local f=$1
	shift
	in_ns "$dut" timeout 20 "$PY" "$client" --port $port "$@" > "$f" 2> "$f.err"
}

leftovers() { left_in "$dut" vd; }

# ---- bad values ----------------------------------------------------------------
bad_listen() {	# case, value, message regex
	local rc
	in_ns "$dut" timeout 10 "$daemon" --dev vd --tun $tun --metrics-listen "$2" \
		--duration 5 > "$tmp/bl.out" 2> "$tmp/bl.err"
	rc=$?
	l=$(leftovers)
	if [ $rc = 2 ] && grep -Eq -- "$3" "$tmp/bl.err" && [ -z "$l" ]; then
		ok "bad-listen-$1" "$(head -1 "$tmp/bl.err")"
	else
		bad "bad-listen-$1" "--metrics-listen '$2' exited $rc (want 2), said: $(head -2 "$tmp/bl.err" | tr '\n' ' ')(want /$3/)${l:+; left: $l}"
	fi
}
case_bad_listen() {
	lib_once topology
	bad_listen no-port 10.0.0.1 "no port; give ADDR:PORT"
	bad_listen port-zero 127.0.0.1:0 "the port '0' is not a number from 1 to 65535"
	bad_listen port-too-big :70000 "the port '70000' is not a number from 1 to 65535"
	bad_listen name localhost:9423 "'localhost' is not a numeric IPv4 address"
	bad_listen ipv6-bare ::1:9423 "put an IPv6 address in brackets"
	bad_listen ipv6-no-port '[::1]' "no port after ']'"
	bad_listen ipv6-link-local '[fe80::1]:9423' "'fe80::1': a link-local address \\(or a zone\\) is not served"
	bad_listen ipv6-zone '[fe80::1%vd]:9423' "'fe80::1%vd': a link-local address \\(or a zone\\) is not served"
}

# A port in use: refused before the datapath, nothing attached.
case_port_in_use() {
	local holder rc l
	lib_once topology
	bg "$dut" "$tmp/holder.log" "$PY" -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
print("ready", flush=True)
time.sleep(30)' $port
	holder=$last
	if wait_line "$tmp/holder.log" '^ready' 50 "$holder"; then
		in_ns "$dut" timeout 10 "$daemon" --dev vd --tun $tun --metrics-listen 127.0.0.1:$port \
			--duration 5 > "$tmp/piu.out" 2> "$tmp/piu.err"
		rc=$?
		l=$(leftovers)
		if [ $rc = 78 ] && grep -q "127.0.0.1:$port: .*the port is in use" "$tmp/piu.err" &&
		   [ -z "$l" ] && ! grep -q '^ucpumapd: ' "$tmp/piu.out"; then
			ok port-in-use "$(head -1 "$tmp/piu.err")"
		else
			bad port-in-use "exited $rc (want 78), said: $(head -2 "$tmp/piu.err" | tr '\n' ' ')${l:+; left: $l}"
		fi
	else
		bad port-in-use "the holder did not listen: $(tail -2 "$tmp/holder.log")"
	fi
	stop_pid "$holder"
}

# A port below 1024 (the namespace's net.ipv4.ip_unprivileged_port_start)
# needs CAP_NET_BIND_SERVICE until the bind.
# no_bind TAG ARGS...: the daemon without that capability, its output in
# $tmp/TAG.out and .err; its exit status.
# HIDE=1: /proc/sys hidden from it, as the unit's ProcSubset=pid does.
no_bind() {
	local tag=$1 hide='exec "$@"'
	shift
	[ "${HIDE:-0}" = 1 ] && hide='mount -t proc -o subset=pid proc /proc && exec "$@"'
	in_ns "$dut" timeout 10 unshare -m --propagation private sh -c "$hide" sh \
		setpriv --inh-caps=-net_bind_service --bounding-set=-net_bind_service -- \
		"$daemon" "$@" > "$tmp/$tag.out" 2> "$tmp/$tag.err"
}
# no_bind_refused TAG PORT START: nothing when PORT was refused, exit 78,
# as below START, and nothing was left; else why not.
no_bind_refused() {
	local rc l
	no_bind "$1" --dev vd --tun $tun --metrics-listen "127.0.0.1:$2" --duration 1
	rc=$?
	l=$(leftovers)
	[ $rc = 78 ] && [ -z "$l" ] &&
		grep -q "127.0.0.1:$2: a port below $3 (net.ipv4.ip_unprivileged_port_start) needs CAP_NET_BIND_SERVICE" "$tmp/$1.err" ||
		echo " port $2, below $3, without the capability: exited $rc (want 78): $(head -2 "$tmp/$1.err" | tr '\n' ' ')${l:+; left: $l};"
}
case_low_port() {
	local rc why=
	lib_once topology
	in_ns "$dut" timeout 10 "$daemon" --dev vd --tun $tun --metrics-listen 127.0.0.1:81 \
		--duration 1 > "$tmp/lp.out" 2> "$tmp/lp.err"
	rc=$?
	[ $rc = 0 ] || why="as root: exited $rc (want 0): $(head -2 "$tmp/lp.err" | tr '\n' ' ');"
	if ! command -v setpriv > /dev/null; then
		skip low-port-no-cap "no setpriv to drop CAP_NET_BIND_SERVICE with"
	else
		why="$why$(no_bind_refused lpn 81 1024)"
		no_bind lpc --check --dev vd --tun $tun --metrics-listen 127.0.0.1:81
		rc=$?
		[ $rc = 78 ] && grep -q '^FAIL  metrics: 127.0.0.1:81: not with the capabilities it has' "$tmp/lpc.out" ||
			why="$why --check without the capability: exited $rc (want 78): $(grep metrics "$tmp/lpc.out");"
		# The namespace's own first unprivileged port, either way.
		in_ns "$dut" sysctl -qw net.ipv4.ip_unprivileged_port_start=80
		no_bind lp80 --dev vd --tun $tun --metrics-listen 127.0.0.1:81 --duration 1
		rc=$?
		[ $rc = 0 ] || why="$why port 81 from 80 on, without the capability: exited $rc (want 0): $(head -2 "$tmp/lp80.err" | tr '\n' ' ');"
		# /proc/sys hidden (the unit's ProcSubset=pid): the bind decides.
		HIDE=1 no_bind lph80 --dev vd --tun $tun --metrics-listen 127.0.0.1:81 --duration 1
		rc=$?
		[ $rc = 0 ] || why="$why /proc/sys hidden, port 81 from 80 on: exited $rc (want 0): $(head -2 "$tmp/lph80.err" | tr '\n' ' ');"
		in_ns "$dut" sysctl -qw net.ipv4.ip_unprivileged_port_start=1024
		HIDE=1 no_bind lph --dev vd --tun $tun --metrics-listen 127.0.0.1:81 --duration 1
		rc=$?
		l=$(leftovers)
		[ $rc = 78 ] && [ -z "$l" ] &&
			grep -q "127.0.0.1:81: Permission denied: a port below net.ipv4.ip_unprivileged_port_start needs CAP_NET_BIND_SERVICE" "$tmp/lph.err" ||
			why="$why /proc/sys hidden, port 81 below 1024: exited $rc (want 78): $(grep -v '^[0-9-]*T.*Z ucpumapd: vd' "$tmp/lph.err" | head -2 | tr '\n' ' ')${l:+; left: $l};"
		in_ns "$dut" sysctl -qw net.ipv4.ip_unprivileged_port_start=2000
		why="$why$(no_bind_refused lp2k 1500 2000)"
		in_ns "$dut" sysctl -qw net.ipv4.ip_unprivileged_port_start=1024
	fi
	[ -z "$why" ] && ok low-port "served as root; refused, named, without CAP_NET_BIND_SERVICE" ||
		bad low-port "$why"
}

# ---- the daemon ----------------------------------------------------------------
# daemon_up: ucpumapd on vd, its metrics on 127.0.0.1:$port; a sink behind
# its tun ($sink); $sent, the datagrams sent so far.
daemon_up() {
	lib_once topology
	# --filter ipv4 and IPv4 traffic only: the kernel's own IPv6 (neighbour
	# discovery, MLD) never reaches ucpumapd, and the counts can be exact.
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun --cpus 0,1 --filter ipv4 --interval 0 \
		--metrics-listen 127.0.0.1:$port --duration 120 > "$tmp/d.out" 2> "$tmp/d.err" &
	dpid=$!
	lib_pid $dpid
	if ! wait_line "$tmp/d.out" '^ucpumapd: ' 50 "$dpid"; then
		bad start "ucpumapd did not start: $(tail -3 "$tmp/d.err" | tr '\n' ' ')"
		exit 0
	fi

	bg "$dut" "$tmp/sink.log" "$PY" "$traffic" sink --ports 9000-9007 \
		--ready "$tmp/sr" --stop "$tmp/ss" --out "$tmp/sink" --timeout 100
	sink=$last
	wait_file "$tmp/sr" 50
	sent=0		# datagrams sent so far
}

# batch: 16 flows, 760 datagrams, through the datapath; $sent grows.
batch() {
	local n
	in_ns "$gen" timeout 20 "$PY" "$traffic" flows-send --src $G4 --dst $D4 > "$tmp/batch" 2>&1
	n=$(jget "$tmp/batch" 'd["sent"]')
	sent=$((sent + ${n:-0}))
	[ -n "$n" ]
}

J() { jget "$1" "$2"; }

# scrape_until FILE: scrapes until rx and delivered reach $sent (the
# workers may still be on the last packets), at most 5 s; the last one's
# JSON in FILE.
scrape_until() {
	for _ in $(seq 25); do
		mc "$1" scrape --deadline 8
		[ "$(J "$1" 'int(d.get("rx", -1))')" = "$sent" ] &&
			[ "$(J "$1" 'int(d.get("delivered", -1))')" = "$sent" ] && return 0
		sleep 0.2
	done
	return 1
}

counts() {	# the scrape's counts, for messages
	J "$1" '"status %s, rx %s, delivered %s, in-drops %s; %s" % (d["status"], d.get("rx"), d.get("delivered"), d.get("drops_in"), "; ".join(d["problems"]))'
}

# still_serving CASE: a new batch is counted, exactly, by a scrape; why
# not in $why (not in a subshell: $sent must grow).
still_serving() {
	why=
	if ! kill -0 "$dpid" 2> /dev/null; then
		why="ucpumapd died: $(tail -3 "$tmp/d.err" | tr '\n' ' ')"
	elif ! batch; then
		why="the generator failed: $(tail -2 "$tmp/batch" | tr '\n' ' ')"
	elif ! scrape_until "$tmp/$1.scrape"; then
		why="after $sent datagrams sent: $(counts "$tmp/$1.scrape")"
	fi
}

# ---- scrapes ---------------------------------------------------------------------
case_scrape_counts() {
	lib_once daemon_up
	if batch && scrape_until "$tmp/s1"; then
		ok scrape-counts "rx $sent = delivered $sent = sent $sent"
	else
		bad scrape-counts "sent ${sent}: $(counts "$tmp/s1")"
	fi
}

case_scrape_format() {
	local why fams q w r f reason v b
	lib_need scrape-counts
	why=$(J "$tmp/s1" '"; ".join(d["problems"])')
	fams=$(J "$tmp/s1" '" ".join("%s:%s" % kv for kv in sorted(d.get("families", {}).items()))')
	for f in ucpumap_up:gauge ucpumap_rx_packets_total:counter ucpumap_rx_descriptors_total:counter \
		 ucpumap_delivered_packets_total:counter \
		 ucpumap_drops_total:counter ucpumap_coalesce_segments:histogram ucpumap_pool_inflight:gauge \
		 ucpumap_pool_alloc_fast_total:counter ucpumap_pool_alloc_refill_total:counter \
		 ucpumap_pool_alloc_slow_total:counter ucpumap_pool_recycle_cached_total:counter \
		 ucpumap_pool_recycle_ring_total:counter ucpumap_pool_recycle_ring_full_total:counter \
		 ucpumap_pool_recycle_released_total:counter ucpumap_xsk_rx_dropped_total:counter \
		 ucpumap_xsk_rx_ring_full_total:counter ucpumap_xsk_fill_ring_empty_total:counter \
		 ucpumap_xsk_rx_invalid_descs_total:counter ucpumap_worker_processed_total:counter \
		 ucpumap_worker_drops_total:counter ucpumap_worker_sleep_seconds_total:counter \
		 ucpumap_rx_thread_cpu_seconds_total:counter ucpumap_enqueue_packets_total:counter \
		 ucpumap_enqueue_drops_total:counter ucpumap_enqueue_shed_total:counter \
		 ucpumap_build_info:gauge ucpumap_link_up:gauge \
		 ucpumap_metrics_connections_dropped_total:counter; do
		[[ " $fams " == *" $f "* ]] || why="$why missing $f;"
	done
	q=$(J "$tmp/s1" '",".join(d.get("queues", []))')
	w=$(J "$tmp/s1" '",".join(d.get("workers", []))')
	r=$(J "$tmp/s1" '",".join(d.get("reasons", []))')
	[ "$q" = 0 ] || why="$why queues '$q' (want 0);"
	[ "$w" = 0,1 ] || why="$why workers '$w' (want 0,1);"
	for reason in kernel_rx_ring_full kernel_rx_dropped bad_desc steer enqueue_full fair_share \
		      chain_long chain_cut chain_bad chain_nosg ip_len l4_hdr sink; do
		[[ ",$r," == *",$reason,"* ]] || why="$why no drop reason $reason;"
	done
	# What the program left to the kernel, by the five reasons the page
	# names (the baseline program's no_cpu not among them); none where
	# the start said they cannot be read, before Linux 5.19 alone.
	r=$(J "$tmp/s1" '",".join(sorted(d.get("xdp_pass", {})))')
	if grep -q "left to the kernel cannot be read" "$tmp/d.err" && kernel_before 5 19; then
		[[ " $fams " == *" ucpumap_xdp_pass_total:"* ]] && why="$why ucpumap_xdp_pass_total, said unread;"
	else
		[[ " $fams " == *" ucpumap_xdp_pass_total:counter "* ]] || why="$why missing ucpumap_xdp_pass_total;"
		[ "$r" = link_ctrl,no_socket,other_host,short,unclaimed ] || why="$why xdp_pass reasons '$r';"
	fi
	r=$(J "$tmp/s1" '",".join(d.get("reasons", []))')
	# The chain drops by their reason, not their sum beside them too.
	[[ ",$r," == *",chain,"* ]] && why="$why drop reason chain beside its parts;"
	[ "$(J "$tmp/s1" 'int(d.get("drops_in", -1))')" = 0 ] || why="$why drops where none should be;"
	r=$(J "$tmp/s1" '",".join("%s=%d" % kv for kv in sorted(d.get("conn_dropped", {}).items()))')
	[ "$r" = evicted=0,refused=0 ] || why="$why metrics connections dropped '$r' (want evicted=0,refused=0: no bad client yet);"
	[ "$(J "$tmp/s1" 'int(d.get("up", -1))')" = 1 ] || why="$why ucpumap_up $(J "$tmp/s1" 'd.get("up")') (want 1);"
	# The version --version prints, as the one build_info sample's label.
	v=$("$daemon" --version | sed -n 's/^ucpumapd \([^ ]*\) .*/\1/p')
	b=$(J "$tmp/s1" '" ".join(d.get("build_info", []))')
	[ -n "$v" ] && [ "$b" = "$v=1" ] || why="$why build_info '$b' (want version '$v' = 1);"
	if [ -z "$why" ]; then
		ok scrape-format "$(J "$tmp/s1" '"%d families, %d samples, %d ms" % (len(d["families"]), d["samples"], d["ms"])')"
	else
		bad scrape-format "$why"
	fi
}

case_http_errors() {
	local why
	lib_once daemon_up
	mc "$tmp/he" http-errors
	why=$(J "$tmp/he" '"; ".join(d["problems"])' || echo "no result: $(tail -2 "$tmp/he.err")")
	if [ -n "$(J "$tmp/he" 'd["cases"]')" ] && [ -z "$why" ]; then
		ok http-errors "$(J "$tmp/he" 'd["cases"]') requests, each its answer"
	else
		bad http-errors "${why:-no result: $(tail -2 "$tmp/he.err" | tr '\n' ' ')}"
	fi
}

# ---- bad clients -----------------------------------------------------------------
case_bad_client_garbage() {
	local st ms
	lib_once daemon_up
	mc "$tmp/garbage" garbage
	st=$(J "$tmp/garbage" 'd["status"]')
	ms=$(J "$tmp/garbage" 'd["ms"]')
	still_serving garbage
	if [ "$st" = 400 ] && [ "${ms:-9999}" -lt 1000 ] && [ -z "$why" ]; then
		ok bad-client-garbage "400 in $ms ms; still counting ($sent)"
	else
		bad bad-client-garbage "answer ${st:-?} ($(J "$tmp/garbage" 'd["how"]')) after ${ms:-?} ms (want 400 at once); $why"
	fi
}

case_bad_client_slowloris() {
	local cut sm
	lib_once daemon_up
	mc "$tmp/slow" slowloris
	cut=$(J "$tmp/slow" 'd["cut_after_ms"]')
	sm=$(J "$tmp/slow" 'd["scrape_meanwhile_ms"]')
	still_serving slow
	if [ "${cut:-0}" -ge 1500 ] && [ "${cut:-9999}" -le 3500 ] && [ "${sm:--1}" -ge 0 ] &&
	   [ "${sm:-9999}" -lt 1000 ] && [ -z "$why" ]; then
		ok bad-client-slowloris "cut off after $cut ms ($(J "$tmp/slow" 'd["how"]'), $(J "$tmp/slow" 'd["bytes_sent"]') bytes); a scrape meanwhile took $sm ms; still counting"
	else
		bad bad-client-slowloris "cut off after ${cut:-?} ms (want 2000 +- 500; $(J "$tmp/slow" 'd["how"]')), a scrape meanwhile ${sm:-?} ms; $why $(tail -2 "$tmp/slow.err" | tr '\n' ' ')"
	fi
}

case_bad_client_1000_connections() {
	local held
	lib_once daemon_up
	mc "$tmp/storm" storm --n 1000
	held=$(J "$tmp/storm" 'd["scrape_while_held"]')
	still_serving storm
	if [ "$held" = 200 ] && [ -z "$why" ]; then
		ok bad-client-1000-connections "$(J "$tmp/storm" '"%d of %d connected; a scrape got through %d ms after, while they were held" % (d["connected"], d["opened"], d["scrape_ms_after_storm"])'); still counting"
	else
		bad bad-client-1000-connections "scrape while held: ${held:-?} ($(J "$tmp/storm" '"; ".join(d["problems"])')); $why $(tail -2 "$tmp/storm.err" | tr '\n' ' ')"
	fi
}

# Every slot held by an idle connection (64): a scrape still gets in at
# once, in the place of the one that waited longest.
case_bad_client_held_slots() {
	local st
	lib_once daemon_up
	mc "$tmp/hold" hold --n 64
	st=$(J "$tmp/hold" 'd["status"]')
	still_serving hold
	if [ "$st" = 200 ] && [ "$(J "$tmp/hold" 'd["evicted_408"]')" -ge 1 ] && [ -z "$why" ]; then
		ok bad-client-held-slots "200 in $(J "$tmp/hold" 'd["ms"]') ms with 64 held, $(J "$tmp/hold" 'd["evicted_408"]') of them closed with 408; still counting"
	else
		bad bad-client-held-slots "answer ${st:-?} ($(J "$tmp/hold" '"%s, %s evicted" % (d["how"], d["evicted_408"])')); $why $(tail -2 "$tmp/hold.err" | tr '\n' ' ')"
	fi
}

# Every slot held by a connection that asked, was answered and reads
# nothing (its answer sits in its buffers): a scrape still gets in, in the
# place of an answered one.
case_bad_client_answered_held() {
	local st
	lib_once daemon_up
	mc "$tmp/ahold" hold --n 64 --answered
	st=$(J "$tmp/ahold" 'd["status"]')
	still_serving ahold
	if [ "$st" = 200 ] && [ -z "$why" ]; then
		ok bad-client-answered-held "200 in $(J "$tmp/ahold" 'd["ms"]') ms with 64 answered and held; still counting"
	else
		bad bad-client-answered-held "answer ${st:-?} ($(J "$tmp/ahold" 'd["how"]')); $why $(tail -2 "$tmp/ahold.err" | tr '\n' ' ')"
	fi
}

# Idle connections opened without pause (above 1000 a second the 64 slots
# are all taken by connections younger than 64 ms): a scrape still gets
# in, every time, in the place of one that never asked.
case_bad_client_flood() {
	local n okn rate dr
	lib_once daemon_up
	mc "$tmp/flood" flood --seconds 2
	n=$(J "$tmp/flood" 'd["scrapes"]')
	okn=$(J "$tmp/flood" 'd["ok"]')
	rate=$(J "$tmp/flood" 'd["flood_per_s"]')
	still_serving flood
	# The flood's connections evicted for one another, counted; none
	# refused (no answer stalls).
	dr=$(J "$tmp/flood.scrape" '"evicted %d refused %d" % (d["conn_dropped"]["evicted"], d["conn_dropped"]["refused"])')
	if [ -n "$rate" ] && [ "$rate" -lt 1000 ]; then
		echo "SKIP: $name: bad-client-flood: the client opened $rate connections a second, fewer than the 1000 that fill the slots faster than a scrape"
	elif [ -n "$n" ] && [ "$n" -ge 5 ] && [ "$okn" = "$n" ] && [ -z "$why" ] &&
	     [[ "$dr" =~ ^evicted\ [1-9][0-9]*\ refused\ 0$ ]]; then
		ok bad-client-flood "$okn of $n scrapes answered 200 under $rate idle connections a second; $dr; still counting"
	else
		bad bad-client-flood "$(J "$tmp/flood" '"%d of %d scrapes 200 (%s) under %d connections a second" % (d["ok"], d["scrapes"], d["got"], d["flood_per_s"])'); ${dr:-no counts} (want evicted above 0, refused 0); $why $(tail -2 "$tmp/flood.err" | tr '\n' ' ')"
	fi
}

case_bad_client_100k_request() {
	local st
	lib_once daemon_up
	mc "$tmp/big" big --size 102400
	st=$(J "$tmp/big" 'd["status"]')
	still_serving big
	if [ "$st" = 431 ] && [ -z "$why" ]; then
		ok bad-client-100k-request "431 in $(J "$tmp/big" 'd["ms"]') ms; still counting"
	else
		bad bad-client-100k-request "answer ${st:-?} ($(J "$tmp/big" '"%s, send error %s" % (d["how"], d["send_error"])')); $why $(tail -2 "$tmp/big.err" | tr '\n' ' ')"
	fi
}

# ---- the links -------------------------------------------------------------------
# links FILE: "up U iface I tun T" of a scrape.
links() {
	J "$1" '"up %d iface %d tun %d" % (d["up"], d["link_up"].get("iface:vd", -1), d["link_up"].get("tun:'$tun_label'", -1))'
}

# link_wait FILE WANT: scrapes until links says WANT, at most 3 s.
link_wait() {
	for _ in $(seq 15); do
		mc "$1" scrape --deadline 8
		[ "$(links "$1")" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}

case_link_state() {
	local why= step
	lib_once daemon_up
	link_wait "$tmp/l0" "up 1 iface 1 tun 1" || why="at the start: $(links "$tmp/l0");"
	ip -n "$dut" link set $tun down
	link_wait "$tmp/l1" "up 0 iface 1 tun 0" || why="$why the tun down: $(links "$tmp/l1");"
	ip -n "$dut" link set $tun up
	link_wait "$tmp/l2" "up 1 iface 1 tun 1" || why="$why the tun up again: $(links "$tmp/l2");"
	ip -n "$dut" link set vd down
	link_wait "$tmp/l3" "up 0 iface 0 tun 1" || why="$why vd down: $(links "$tmp/l3");"
	ip -n "$dut" link set vd up
	link_wait "$tmp/l4" "up 1 iface 1 tun 1" || why="$why vd up again: $(links "$tmp/l4");"
	if [ -z "$why" ]; then
		ok link-state "1, 0 with the tun down, 0 with vd down, 1 again each time"
	else
		bad link-state "$why"
	fi
}

# ---- the stop --------------------------------------------------------------------
case_sigterm() {
	local rc rx got why l
	lib_once daemon_up
	lib_term "$dpid"
	rc=$?
	dpid=
	touch "$tmp/ss"
	wait_file "$tmp/sink" 30
	stop_pid "$sink"
	rx=$(sed -n 's/^conservation: received \([0-9]*\) .*/\1/p' "$tmp/d.out")
	got=$(jget "$tmp/sink" 'd["total"]')
	why=
	[ "$rc" = 0 ] || why="exit status $rc;"
	grep -q '^conservation: .*: holds$' "$tmp/d.out" ||
		why="$why $(grep '^conservation' "$tmp/d.out" || echo 'no conservation line');"
	grep -q '^audit: every frame came home$' "$tmp/d.out" ||
		why="$why $(grep '^audit' "$tmp/d.out" || echo 'no audit line');"
	[ "$rx" = "$sent" ] || why="$why received ${rx:-?}, sent $sent;"
	[ "$got" = "$sent" ] || why="$why the sink behind the tun read ${got:-?} of $sent;"
	l=$(leftovers)
	[ -z "$l" ] || why="$why left: $l;"
	if in_ns "$dut" "$PY" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' $port 2> /dev/null; then
		why="$why the metrics port still answers;"
	fi
	if [ -z "$why" ]; then
		ok sigterm "exit 0, $(grep '^conservation' "$tmp/d.out" | cut -c1-60)..., audit"
	else
		bad sigterm "$why stderr: $(tail -3 "$tmp/d.err" | tr '\n' ' ')"
	fi
}

# ---- the RX ring overflowing --------------------------------------------------------
# veth_drops: the veth pair's drops so far (vg's tx, vd's rx). vd's count
# the XDP redirects the sockets refused too (the kernel's two causes):
# the rest were lost before the sockets.
veth_drops() {
	{ ip -n "$gen" -s -j link show vg; ip -n "$dut" -s -j link show vd; } |
		"$PY" -c 'import json, sys
t = 0
for l in sys.stdin:
    s = json.loads(l)[0]["stats64"]
    t += s["tx"]["dropped"] + s["rx"]["dropped"]
print(t)'
}

case_ring_full() {
	local why= v0 v1 sent vdmac r dl dr full kd before
	lib_once topology
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun --cpus 0,1 --filter ipv4 --interval 0 \
		--rx-size 64 --metrics-listen 127.0.0.1:$port --duration 60 > "$tmp/rf.out" 2> "$tmp/rf.err" &
	dpid=$!
	lib_pid $dpid
	if ! wait_line "$tmp/rf.out" '^ucpumapd: ' 50 "$dpid"; then
		bad ring-full "ucpumapd did not start: $(tail -3 "$tmp/rf.err" | tr '\n' ' ')"
		return
	fi
	vdmac=$(mac_of "$dut" vd)
	v0=$(veth_drops)
	lib_run ip netns exec "$gen" "$genbin" --dev vg --dst-ip $D4 --dst-mac "$vdmac" \
		--dst-port 9000 --flows 4 --rate 400000 --duration 1 > "$tmp/rf.gen" 2>&1
	sent=$(awk '/^total:/ { print $2 }' "$tmp/rf.gen")
	v1=$(veth_drops)
	# The workers finish what they hold; then the account is still.
	sleep 1
	mc "$tmp/rf" scrape --deadline 8
	stop_pid "$dpid" 50
	dpid=
	r=$(J "$tmp/rf" '"%d %d %d %d" % (d["delivered"], d["drops_in"], d["drops_by_reason"].get("kernel_rx_ring_full", 0), d["drops_by_reason"].get("kernel_rx_dropped", 0))')
	read -r dl dr full kd <<< "${r:-0 0 0 0}"
	[ -n "$sent" ] || why="ucpumap-gen failed: $(tail -2 "$tmp/rf.gen" | tr '\n' ' ');"
	[ "${full:-0}" -gt 0 ] || why="$why no kernel_rx_ring_full drops (the ring did not overflow?): $(counts "$tmp/rf");"
	# Sent: delivered, a counted drop, or lost before the sockets (the
	# veth's own drops, which it counts: at most those).
	before=$((${sent:-0} - dl - dr))
	if [ "$before" -lt 0 ] || [ "$before" -gt $((v1 - v0 - full - kd)) ]; then
		why="$why sent ${sent:-?}, delivered $dl + drops $dr: $before missing, the veth's own drops $((v1 - v0 - full - kd));"
	fi
	grep -q '^conservation: .*kernel_rx_ring_full [1-9].*: holds$' "$tmp/rf.out" ||
		why="$why $(grep '^conservation' "$tmp/rf.out" || echo 'no conservation line');"
	if [ -z "$why" ]; then
		ok ring-full "sent $sent = delivered $dl + drops $dr (kernel_rx_ring_full $full) + $before lost before the sockets"
	else
		bad ring-full "$why"
	fi
}

case_pass() {
	local why= fams f
	lib_once topology
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun --pass --extended --interval 1 \
		--metrics-listen 127.0.0.1:$port --duration 60 > "$tmp/pa.out" 2> "$tmp/pa.err" &
	dpid=$!
	lib_pid $dpid
	if ! wait_line "$tmp/pa.out" '^  worker 0 ' 50 "$dpid"; then
		bad pass "no worker line: $(tail -3 "$tmp/pa.err" | tr '\n' ' ')"
		return
	fi
	mc "$tmp/pa" scrape --deadline 8
	stop_pid "$dpid" 50
	dpid=
	why=$(J "$tmp/pa" '"; ".join(d["problems"])')
	fams=$(J "$tmp/pa" '" ".join(sorted(d.get("families", {})))')
	[[ " $fams " == *" ucpumap_worker_processed_total "* ]] ||
		why="$why no ucpumap_worker_processed_total (fams: $fams);"
	for f in ucpumap_worker_sleep_seconds_total ucpumap_worker_sleeps_total \
		 ucpumap_worker_prewakes_total; do
		[[ " $fams " == *" $f "* ]] && why="$why $f under --pass;"
	done
	grep -Eq '^  worker 0 \(cpu -?[0-9]+\): [0-9]+ pps, inline, drops' "$tmp/pa.out" ||
		why="$why worker line: $(grep -m1 '^  worker 0 ' "$tmp/pa.out");"
	if [ -z "$why" ]; then
		ok pass "no worker sleep families; the worker line says inline"
	else
		bad pass "$why"
	fi
}

case_cleanup() {
	lib_cleanup_check && ok cleanup "nothing left" || bad cleanup "$lib_left"
}

lib_run_cases "$@"
