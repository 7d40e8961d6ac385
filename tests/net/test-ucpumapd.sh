#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd end to end on a veth pair between two namespaces: the generator
# (vg) and the DUT (vd, where the daemon runs with a tun behind it). Traffic
# and readers are tests/progs/ucpumapd_traffic.py. This kernel has no VLAN
# devices (CONFIG_VLAN_8021Q is off), so 802.1Q-tagged traffic is built and
# sent on a raw socket.
#
#   delivery-*     sequence-numbered UDP, 1 byte to the MTU, IPv4, IPv6 and
#                  both through a VLAN tag, read behind the tun: each datagram
#                  once, byte-identical
#   ping, tcp      ICMP echo and a 4 MB TCP transfer through the datapath
#                  (replies return over the kernel's own path)
#   csum-offload-* the sender's TX checksum offload on (veth's default: only
#                  the pseudo-header sum in each TCP and UDP checksum): UDP
#                  over IPv4 and IPv6 each once and intact, TCP over both
#                  intact (with coalescing, and without), no InCsumErrors
#                  behind the tun, and counted
#   steer-*        each policy over two workers, to the packet
#   sigterm-*      SIGTERM under a flood: exit 0 within 2 s, conservation,
#                  audit, nothing left attached
#   bad-flag-*     each bad flag: its message, its exit code (2 for the
#                  options, 78 for what this host cannot do with them: the
#                  unit does not restart either), nothing left; and somebody
#                  else's XDP program (left alone, or --replace: exit 1, it
#                  goes back when our attach or a later set-up step fails;
#                  --replace with a queue vd lacks: exit 78, it stays)
#   malformed-*    broken frames from a raw socket among valid traffic
#   second-instance-*  a second daemon on vd is refused, naming the first,
#                  which keeps forwarding
#   second-tun-*   a second daemon on another interface given the first's
#                  --tun is refused (78), naming the first's pid, and
#                  attaches nothing; the first keeps forwarding
#   keep-tun-*     --keep-tun: the tun, an address and a route on it stay
#                  after SIGTERM and after SIGKILL, the next start attaches
#                  to it and delivers; without --keep-tun the tun goes; the
#                  package's prerm leaves a running daemon's tun and deletes
#                  a kept one (keep-tun-package-removed); the kept tun
#                  belongs to the user each start runs as, --user or not
#                  (keep-tun-owner); the lock file of a tun not kept goes
#                  with the daemon (keep-tun-default-goes)
#   other-mac      frames to another station's MAC (a promiscuous NIC's,
#                  a bridge port's) are the kernel's: ucpumapd's rx does
#                  not grow, xdp_pass.other_host grows by each; after vd's
#                  MAC changes, frames to the new one are steered and to
#                  the old one not, said
#   link-scope     what the kernel takes on vd alone stays with it: a ping
#                  to vd's IPv6 link-local address is answered, datagrams
#                  to UDP ports 68 and 67 (a DHCP client's, a server's)
#                  reach sockets bound to vd, and to 239.1.2.3 a member
#                  of it on vd;
#                  xdp_pass.link_ctrl grows, rx does not
#   tap-one-way    --tap one way: the tap takes vd's MAC, and 5 datagrams
#                  to the DUT's address are read on it, delivered by the
#                  daemon; vd's MAC changed: said that the tap keeps its
#   ipv6-off-tun   IPv6 off on the tun (net.ipv6.conf.default at its
#                  making): said, IPv6 left to the kernel on vd (5 of 5
#                  datagrams read, unclaimed grows, rx does not);
#                  --filter ipv6 refused, exit 78
#   sigkill-*, restart-*  SIGKILL leaves no program (the XDP link goes with
#                  the process); a restart works; a stale program of ours
#                  attached the old way (netlink) is replaced
#
# The cases: delivery (delivery-*), path (ping, tcp, path-shutdown),
# csum-offload (csum-offload-*), steer (steer-*), sigterm (sigterm-*),
# bad-flags (bad-flag-*), check (check-*: --check, good and bad, a line per
# check, nothing left; RX queues --queues leaves out warned of, there and
# at the start), journal (journal-*: under journald, JOURNAL_STREAM
# naming the file its stdout and stderr go to, each line's priority and no
# time; elsewhere by default each line's time; --no-timestamps, none),
# stats-json-lag (a FIFO whose reader lags gets whole lines;
# stats-json-refused: a full disk's refusal said once, with its cause,
# the line after a cut one whole), stats-json-tmp (under /tmp with
# systemd's INVOCATION_ID: the unit's private /tmp said), stdout-stalled
# (a stdout nobody reads holds nothing up), foreign-program
# (bad-flag-foreign-program, replace-refused-keeps-foreign,
# replace-attach-fails-keeps-foreign, replace-setup-fails-keeps-foreign: put
# back, replace-foreign-program), malformed
# (malformed-*), second-instance (second-instance-*), second-tun
# (second-tun-*), keep-tun (keep-tun-*), sigkill
# (sigkill-leaves-no-program, restart-delivers), link-held
# (link-held-stop-detaches: a link fd held elsewhere), restart-stale
# (restart-replaces-stale-netlink), nothing-left.
#
# Root. Every case prints one PASS/FAIL/SKIP line; the script exits 0. Each
# daemon run has a --duration backstop and is stopped by its pid. Lines
# starting with '#' are timings and the daemon's messages. UCM_KEEP=DIR
# copies the run's logs (daemon output, JSON, results) there at the end.
set -u
BUILD=${BUILD:-build}
name=test-ucpumapd
cases="delivery poll path csum-offload steer sigterm sigusr1-flood bad-flags check journal stats-json-lag stats-json-tmp stdout-stalled foreign-program
malformed other-mac link-scope tap-one-way ipv6-off-tun second-instance second-tun keep-tun sigkill link-held restart-stale nothing-left"
here=$(cd "$(dirname "$0")" && pwd)
daemon=$(cd "$BUILD" 2>/dev/null && pwd)/ucpumapd
bpf_obj=$(dirname "$daemon")/bpf/steer.bpf.o	# the object ucm_dp embeds
shim_so=$(dirname "$daemon")/tests/progs/libfault_shim.so
gen=ucmug$$
dut=ucmud$$
tun=ucmt0
. "$here/../lib.sh"
. "$here/daemon.sh"
dpid=		# the daemon now running

T0=$(date +%s%N)
tstart=$T0
timing() {	# label: time since the last call
	local now
	now=$(date +%s%N)
	printf '# %s: %d.%02d s\n' "$1" $(((now - tstart) / 1000000000)) $(((now - tstart) / 10000000 % 100))
	tstart=$now
}

G4=10.203.0.1 D4=10.203.0.2 G6=fd00:203::1 D6=fd00:203::2
GV4=10.203.10.1 DV4=10.203.10.2 GV6=fd00:210::1 DV6=fd00:210::2

setup() {
	skip_unless_root "namespaces, XDP, tun"
	if [ ! -x "$daemon" ]; then
		echo "FAIL: $name: $BUILD/ucpumapd is not built (run make)"
		exit 0
	fi
	# $PY (tests/lib.sh): the interpreter itself, not a wrapper script: $! must be
	# its pid.
	if [ -z "$PY" ]; then
		echo "SKIP: $name: needs python3"
		exit 0
	fi

	# The topology. Full checksums on the wire, as a NIC delivers them
	# (veth_pair turns vg's checksum offload off; case_csum_offload turns
	# it on, for the pseudo-header sums alone).
	if ! { veth_pair "$gen" "$dut" vg vd $G4/24 $D4/24 &&
		ip -n "$gen" addr add $G6/64 dev vg nodad && ip -n "$dut" addr add $D6/64 dev vd nodad &&
		# VLAN 10's subnet: the DUT has no VLAN device (the daemon strips
		# the tag), its addresses there sit on vd.
		ip -n "$dut" addr add $DV4/24 dev vd && ip -n "$dut" addr add $DV6/64 dev vd nodad; } 2> "$tmp/setup.err"
	then
		bad setup "cannot build the namespaces: $(head -3 "$tmp/setup.err" | tr '\n' ' ')"
		exit 0
	fi
	vdmac=$(ip netns exec "$dut" cat /sys/class/net/vd/address)
	vgmac=$(ip netns exec "$gen" cat /sys/class/net/vg/address)
	# Packets come back in through the tun, not vd: no reverse-path filter.
	ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	timing setup
}

# ---- helpers -------------------------------------------------------------------
# wait_file, jget and stop_pid (helpers: SIGTERM, SIGKILL after 3 s) are
# tests/lib.sh's.
in_gen() { lib_run ip netns exec "$gen" "$@"; }

bg() {	# namespace, log, command...: in the background; $last is its pid
	local ns=$1 log=$2
	shift 2
	ip netns exec "$ns" "$@" > "$log" 2>&1 &
	last=$!
	lib_pid $last
}

# start_daemon LABEL ARGS...: runs ucpumapd on vd with tun $tun; 0 once it
# printed its start line. D_OUT, D_ERR: its stdout and stderr.
start_daemon() {
	local label=$1
	shift
	D_OUT=$tmp/$label.out
	D_ERR=$tmp/$label.err
	D_RC=
	# exec, not a wrapper: $dpid is the daemon itself.
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun "$@" > "$D_OUT" 2> "$D_ERR" &
	dpid=$!
	lib_pid $dpid
	wait_line "$D_OUT" '^ucpumapd: ' 50 "$dpid" && return 0
	if kill -0 "$dpid" 2>/dev/null; then
		kill -9 "$dpid"
		echo "ucpumapd printed no start line within 5 s" >> "$D_ERR"
	fi
	lib_wait "$dpid"
	D_RC=$?
	dpid=
	return 1
}

# stop_daemon: SIGTERM by pid; D_RC its status, D_MS how long it took to
# exit. After 5 s it is killed (D_RC 137).
stop_daemon() {
	local t0 t1
	[ -n "$dpid" ] || return 0
	t0=$(date +%s%N)
	kill -TERM "$dpid" 2>/dev/null
	for _ in $(seq 250); do
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.02
	done
	kill -0 "$dpid" 2>/dev/null && kill -9 "$dpid"
	lib_wait "$dpid"
	D_RC=$?
	t1=$(date +%s%N)
	D_MS=$(((t1 - t0) / 1000000))
	dpid=
}

why_start() {	# why the daemon did not start
	echo "ucpumapd did not start (status ${D_RC:-none}): $(tail -3 "$D_ERR" | tr '\n' ' ')"
}

# What the final counters say: conservation, audit, exit status.
final_ok() {	# empty when the run ended cleanly, else why not
	local why=
	[ "$D_RC" = 0 ] || why="exit status $D_RC;"
	grep -q '^conservation: .*: holds$' "$D_OUT" ||
		why="$why $(grep '^conservation' "$D_OUT" || echo 'no conservation line');"
	grep -q '^audit: every frame came home$' "$D_OUT" ||
		why="$why $(grep '^audit' "$D_OUT" || echo 'no audit line');"
	[ -n "$why" ] && why="$why stderr: $(tail -2 "$D_ERR" | tr '\n' ' ')"
	echo "$why"
}

received() {	# the conservation line's "received N"
	sed -n 's/^conservation: received \([0-9]*\) .*/\1/p' "$D_OUT"
}

worker_processed() {	# worker index: the "processed N" of its final line
	# (--extended)
	awk -v w="$1" '/^total / { t = 1 }
		t && $1 == "worker" && $2 == w {
			for (i = 3; i < NF; i++) if ($i == "processed") { print $(i + 1); exit }
		}' "$D_OUT"
}

leftovers() {	# empty when nothing of the daemon is left in the DUT: no XDP
	# program, no device but lo, vd and those a case made ($KEEP)
	left_in "$dut" vd ${KEEP:-}
}

# ---- 1. byte-exact delivery ----------------------------------------------------
case_delivery() {
	local paths count sent p c r e g m du co why rx rpid
	paths=ipv4,ipv6,vlan4,vlan6
	count=150
	if start_daemon delivery --cpus 0,1 --duration 30; then
		bg "$dut" "$tmp/recv1.log" "$PY" "$helper" exact-recv --paths $paths --count $count \
			--ready "$tmp/r1" --stop "$tmp/s1" --out "$tmp/res1" --timeout 20
		rpid=$last
		if wait_file "$tmp/r1" 50; then
			in_gen "$PY" "$helper" exact-send --paths $paths --count $count --rate 4000 \
				--v4 $D4 --v6 $D6 --vlan4 $DV4 --vlan6 $DV6 \
				--src4 $G4 --src6 $G6 --srcvlan4 $GV4 --srcvlan6 $GV6 \
				--ifname vg --src-mac "$vgmac" --dst-mac "$vdmac" --vid 10 > "$tmp/send1" 2> "$tmp/send1.err"
			sleep 0.3
		fi
		touch "$tmp/s1"
		wait_file "$tmp/res1" 50
		stop_pid "$rpid"
		stop_daemon
		sent=$(jget "$tmp/send1" 'd["sent"]')
		for p in ipv4 ipv6 vlan4 vlan6; do
			case $p in
			vlan4) c=delivery-vlan-ipv4 ;;
			vlan6) c=delivery-vlan-ipv6 ;;
			*) c=delivery-$p ;;
			esac
			if [ ! -s "$tmp/res1" ]; then
				bad $c "the reader gave no result: $(tail -2 "$tmp/recv1.log" | tr '\n' ' ') $(tail -2 "$tmp/send1.err" 2>/dev/null | tr '\n' ' ')"
				continue
			fi
			r=$(jget "$tmp/res1" "'%d %d %d %d %d' % tuple(d['paths']['$p'][k] for k in ('expected', 'received', 'missing', 'duplicated', 'corrupt'))")
			read -r e g m du co <<< "$r"
			if [ "$e" -gt 0 ] && [ "$g" = "$e" ] && [ "$m" = 0 ] && [ "$du" = 0 ] && [ "$co" = 0 ]; then
				ok $c
			else
				bad $c "expected $e, received $g: missing $m, duplicated $du, corrupt $co: $(jget "$tmp/res1" "'; '.join(d['paths']['$p']['problems'])")"
			fi
		done
		why=$(final_ok)
		rx=$(received)
		if [ -z "$why" ] && [ "$rx" = "$sent" ]; then
			ok delivery-counters
		else
			bad delivery-counters "${why:-} ucpumapd received ${rx:-?} frames, the generator sent ${sent:-?}"
		fi
	else
		bad delivery "$(why_start)"
	fi
	timing delivery
}

# --poll with --pass: one polling thread (queue 0's, the worker too) on CPU
# 1, which leaves CPU 0 to the rest: every datagram arrives, the banner
# says it polls and busy-polls, the statistics lines give its busy share,
# and it stops cleanly with every frame home. Busy polling's notes:
# whether the socket has a NAPI to poll (veth in copy mode: none), no word
# of deferring vd's interrupts (a veth has none); and CPU 1's warning
# unless the kernel's isolated list has it.
case_poll() {
	local count=300 sent why lines idle sleeps rxw batches t aff where=
	if start_daemon poll --pass --poll --rx-cpus 1 --interval 0.5 --duration 30 \
		--stats-json "$tmp/poll.json"; then
		# Only the polling thread may run on CPU 1: the others (main,
		# control, metrics, next hops) are kept to the CPUs left free.
		for t in /proc/$dpid/task/*; do
			aff=$(awk '$1 == "Cpus_allowed_list:" { print $2 }' "$t/status" 2> /dev/null) || continue
			where="$where $(cat "$t/comm" 2> /dev/null):$aff"
		done
		bg "$dut" "$tmp/recvp.log" "$PY" "$helper" exact-recv --paths ipv4 --count $count --dev $tun \
			--ready "$tmp/rp" --stop "$tmp/sp" --out "$tmp/resp" --timeout 20
		if wait_file "$tmp/rp" 50; then
			in_gen "$PY" "$helper" exact-send --paths ipv4 --count $count --rate 16000 \
				--v4 $D4 --src4 $G4 --ifname vg --src-mac "$vgmac" --dst-mac "$vdmac" \
				> "$tmp/sendp" 2> "$tmp/sendp.err"
			sleep 1.2	# an idle line or two after the traffic
		fi
		touch "$tmp/sp"
		wait_file "$tmp/resp" 50
		stop_daemon
		sent=$(jget "$tmp/sendp" 'd["sent"]')
		why=$(final_ok)
		echo "$where" | grep -q ' ucpumap/rx0:1\b' || why="$why the RX thread not on CPU 1:$where;"
		[ "$(echo "$where" | tr ' ' '\n' | grep -v '^ucpumap/rx0:' | grep -c ':0$')" = \
			"$(echo "$where" | tr ' ' '\n' | grep -vc '^ucpumap/rx0:\|^$')" ] ||
			why="$why a thread that does not poll may run on CPU 1:$where;"
		grep -q "^ucpumapd: .*, busy-poll.*, polling$" "$D_OUT" ||
			why="$why no ', busy-poll' and ', polling' in the banner;"
		! grep -q "napi_defer_hard_irqs" "$D_ERR" ||
			why="$why a hint to defer a veth's interrupts: $(grep -m1 napi_defer_hard_irqs "$D_ERR");"
		grep -Eq "queue 0: (busy polling the device's NAPI [0-9]+|no NAPI to busy-poll)" "$D_ERR" ||
			why="$why no word of queue 0's NAPI;"
		if ! awk -F, '{ for (i = 1; i <= NF; i++) { split($i, r, "-"); f = f || (1 >= r[1] && 1 <= (r[2] == "" ? r[1] : r[2])) } }
			END { exit !f }' /sys/devices/system/cpu/isolated 2> /dev/null; then
			grep -q "^ucpumapd: polling on CPU(s) 1 not isolated (not in /sys/devices/system/cpu/isolated, which isolcpus= fills" "$D_ERR" ||
				why="$why no word of CPU 1 not isolated;"
		fi
		lines=$(grep -cE "^vd: rx [0-9]+ pps, .*, RX threads [0-9]+% busy(, to the kernel [0-9]+/s \(largest: [a-z_]+ [0-9]+/s\))?(, checksums left to the kernel [0-9]+/s)?$" "$D_OUT")
		[ "$lines" -ge 2 ] || why="$why $lines statistics lines with the RX threads' share;"
		# The last line is idle: a sleep that timed out is not followed
		# by a spin (that would be a tenth of the CPU).
		idle=$(grep -E "^vd: rx 0 pps, " "$D_OUT" | tail -1 | grep -oE 'RX threads [0-9]+' | grep -oE '[0-9]+$')
		[ "${idle:-100}" -le 5 ] || why="$why idle, the polling thread is ${idle:-?}% busy;"
		# And while the datagrams came (bursts of 8 every 0.5 ms, inside
		# its 1 ms look), it polled: an arrival seldom ended a sleep of
		# its, where a sleeping thread wakes for one burst after another.
		# The sleeps themselves are mostly the idle ones, timed out, and
		# tell nothing. Counted against the datagrams sent, not the
		# batches: a thread kept off its CPU takes fewer, bigger
		# batches, and its sender's pauses past the look are the
		# machine's. Measured on veth here: polling 2 to 8 arrival wakes
		# for 1800 datagrams, without --poll 58 and 97. At most one
		# in sixty (30) tells them apart with room on both sides.
		tail -1 "$tmp/poll.json" > "$tmp/poll.last" 2> /dev/null
		sleeps=$(jget "$tmp/poll.last" "d['queues'][0]['sleeps']")
		rxw=$(jget "$tmp/poll.last" "d['queues'][0]['wakes']['rx']")
		batches=$(jget "$tmp/poll.last" "d['queues'][0]['rx_batches']")
		[ "${batches:-0}" -ge 1 ] && [ $((60 * ${rxw:-999999})) -le "${sent:-0}" ] ||
			why="$why ${rxw:-?} sleeps ended by an arrival for ${sent:-?} datagrams in ${batches:-?} RX batches (want at most one in sixty; a thread that sleeps: about one in twenty);"
		[ -s "$tmp/resp" ] && [ "$(jget "$tmp/resp" "d['paths']['ipv4']['received']")" = "${sent:-x}" ] ||
			why="$why received $(jget "$tmp/resp" "d['paths']['ipv4']['received']" 2>/dev/null) of ${sent:-?};"
		if [ -z "$why" ]; then
			ok poll "threads (comm:CPUs)$where; $sent datagrams in $batches batches, $rxw of $sleeps sleeps ended by an arrival; $(grep -E '^vd: ' "$D_OUT" | grep -oE 'RX threads [0-9]+% busy' | tr '\n' ' ')"
		else
			bad poll "$why $(tail -2 "$D_ERR" | tr '\n' ' ')"
		fi
	else
		bad poll "$(why_start)"
	fi
	# Two-way with the kernel's next hops: the resolver, which the
	# datapath's create starts, is kept off the polling CPU too.
	where=
	if start_daemon poll2 --two-way --busy-poll --rx-cpus 1 --cpus 0 --duration 10; then
		for t in /proc/$dpid/task/*; do
			aff=$(awk '$1 == "Cpus_allowed_list:" { print $2 }' "$t/status" 2> /dev/null) || continue
			where="$where $(cat "$t/comm" 2> /dev/null):$aff"
		done
		stop_daemon
		why=$(final_ok)
		echo "$where" | grep -q ' ucpumap/neigh' || why="$why no resolver thread:$where;"
		# Each thread's CPU list expanded: CPU 1 exactly, not a digit.
		echo "$where" | tr ' ' '\n' | grep -v '^ucpumap/rx0:' | "$PY" -c '
import sys
for t in sys.stdin.read().split():
    name, cpus = t.rsplit(":", 1)
    for r in cpus.split(","):
        a, _, b = r.partition("-")
        if int(a) <= 1 <= int(b or a):
            sys.exit(1)' || why="$why a thread that does not poll may run on CPU 1:$where;"
		if [ -z "$why" ]; then ok poll-resolver "threads (comm:CPUs)$where"; else bad poll-resolver "$why"; fi
	else
		bad poll-resolver "$(why_start)"
	fi
	timing poll
}

# ---- 2. ping and TCP -----------------------------------------------------------
case_path() {
	local replies prx ptun want spid got bytes frx why
	if start_daemon path --cpus 0,1 --interval 0 --stats-json "$tmp/path.json" --duration 30; then
		in_gen "$PY" "$helper" ping --dst $D4 --count 10 > "$tmp/ping" 2>&1
		kill -USR1 "$dpid"
		for _ in $(seq 40); do [ -s "$tmp/path.json" ] && break; sleep 0.05; done
		replies=$(jget "$tmp/ping" 'd["replies"]')
		prx=$(jget "$tmp/path.json" 'd["rx"]')
		ptun=$(jget "$tmp/path.json" 'd["tun_packets"]')
		if [ "${replies:-0}" = 10 ] && [ "${prx:-0}" -ge 10 ] && [ "${ptun:-0}" -ge 10 ]; then
			ok ping
		else
			bad ping "10 echo requests: ${replies:-?} replies; ucpumapd received ${prx:-?}, delivered ${ptun:-?} ($(tail -1 "$tmp/ping"))"
		fi

		head -c 4194304 /dev/urandom > "$tmp/blob"
		want=$(sha256sum "$tmp/blob" | cut -d' ' -f1)
		bg "$dut" "$tmp/tcps.log" "$PY" "$helper" tcp-server --addr $D4 --port 5001 \
			--ready "$tmp/tr" --out "$tmp/tcp.res" --timeout 15
		spid=$last
		wait_file "$tmp/tr" 50
		in_gen "$PY" "$helper" tcp-client --addr $D4 --port 5001 --file "$tmp/blob" --timeout 15 > "$tmp/tcpc" 2>&1
		wait_file "$tmp/tcp.res" 50
		stop_pid "$spid"
		stop_daemon
		got=$(jget "$tmp/tcp.res" 'd["sha256"]')
		bytes=$(jget "$tmp/tcp.res" 'd["bytes"]')
		frx=$(received)
		# 4 MB in segments of at most 1448 bytes: at least 2897 of them.
		if [ "$got" = "$want" ] && [ "${frx:-0}" -ge $((${prx:-0} + 4194304 / 1448)) ]; then
			ok tcp
		else
			bad tcp "server read ${bytes:-?} bytes, sha256 ${got:-?} (sent 4194304, $want); ucpumapd received ${frx:-?} frames, ${prx:-?} of them before the transfer; client: $(tail -1 "$tmp/tcpc") server: $(tail -1 "$tmp/tcps.log")"
		fi
		why=$(final_ok)
		if [ -z "$why" ]; then ok path-shutdown; else bad path-shutdown "$why"; fi
	else
		bad ping "$(why_start)"
		bad tcp "$(why_start)"
	fi
	timing "ping and tcp"
}

# ---- 2b. partial checksums: the sender's offload on ------------------------------
# The DUT's TCP and UDP checksum errors, IPv4 and IPv6, summed (nstat's
# absolute counters, its history left alone).
csum_errors() {
	ip netns exec "$dut" nstat -asz 2>/dev/null |
		awk '$1 ~ /^(Udp|Udp6|Tcp|UdpLite)InCsumErrors$/ { n += $2 } END { print n + 0 }'
}

# tcp_through LABEL ADDR: 2 MB from $gen to ADDR:5002 through the daemon;
# empty when they came intact, else what went wrong.
tcp_through() {
	local want got spid
	head -c 2097152 /dev/urandom > "$tmp/blob-$1"
	want=$(sha256sum "$tmp/blob-$1" | cut -d' ' -f1)
	rm -f "$tmp/tr-$1"
	bg "$dut" "$tmp/tcps-$1.log" "$PY" "$helper" tcp-server --addr "$2" --port 5002 \
		--ready "$tmp/tr-$1" --out "$tmp/tcp-$1.res" --timeout 10
	spid=$last
	wait_file "$tmp/tr-$1" 50
	in_gen "$PY" "$helper" tcp-client --addr "$2" --port 5002 --file "$tmp/blob-$1" \
		--timeout 10 > "$tmp/tcpc-$1" 2>&1
	wait_file "$tmp/tcp-$1.res" 50
	stop_pid "$spid"
	got=$(jget "$tmp/tcp-$1.res" 'd["sha256"]')
	[ "$got" = "$want" ] ||
		echo "server read $(jget "$tmp/tcp-$1.res" 'd["bytes"]') bytes, sha256 ${got:-?} (sent 2097152); client: $(tail -1 "$tmp/tcpc-$1")"
}

# veth's default, TX checksum offload on in $gen (veth_pair turns it off):
# each TCP and UDP packet carries only its pseudo-header sum
# (CHECKSUM_PARTIAL), which AF_XDP hands over as it is. The daemon must
# leave it to the kernel to complete (NEEDS_CSUM), with coalescing on.
case_csum_offload() {
	local rpid r e g m du co p why e0 e1 n
	if ! ip netns exec "$gen" ethtool -K vg tx on > /dev/null 2>&1; then
		bad csum-offload "ethtool -K vg tx on failed"
		return
	fi
	e0=$(csum_errors)
	if start_daemon csum --cpus 0,1 --interval 0 --stats-json "$tmp/csum.json" --duration 40; then
		bg "$dut" "$tmp/recvc.log" "$PY" "$helper" exact-recv --paths ipv4,ipv6 --count 100 --dev $tun \
			--ready "$tmp/rc" --stop "$tmp/sc" --out "$tmp/resc" --timeout 20
		rpid=$last
		if wait_file "$tmp/rc" 50; then
			in_gen "$PY" "$helper" exact-send --paths ipv4,ipv6 --count 100 --rate 4000 \
				--v4 $D4 --v6 $D6 --src4 $G4 --src6 $G6 > "$tmp/sendc" 2> "$tmp/sendc.err"
			sleep 0.3
		fi
		touch "$tmp/sc"
		wait_file "$tmp/resc" 50
		stop_pid "$rpid"
		for p in ipv4 ipv6; do
			r=$(jget "$tmp/resc" "'%d %d %d %d %d' % tuple(d['paths']['$p'][k] for k in ('expected', 'received', 'missing', 'duplicated', 'corrupt'))")
			read -r e g m du co <<< "${r:-0 0 0 0 0}"
			if [ "$e" -gt 0 ] && [ "$g" = "$e" ] && [ "$m" = 0 ] && [ "$du" = 0 ] && [ "$co" = 0 ]; then
				ok csum-offload-udp-$p
			else
				bad csum-offload-udp-$p "expected $e, received $g: missing $m, duplicated $du, corrupt $co"
			fi
		done
		why=$(tcp_through v4 $D4)
		if [ -z "$why" ]; then ok csum-offload-tcp-ipv4; else bad csum-offload-tcp-ipv4 "$why"; fi
		why=$(tcp_through v6 $D6)
		if [ -z "$why" ]; then ok csum-offload-tcp-ipv6; else bad csum-offload-tcp-ipv6 "$why"; fi
		stop_daemon
		e1=$(csum_errors)
		n=$(grep '"tun_csum_partial"' "$tmp/csum.json" | tail -1 | "$PY" -c 'import json, sys; print(json.loads(sys.stdin.read())["tun_csum_partial"])' 2>/dev/null)
		why=$(final_ok)
		if [ "$e1" = "$e0" ] && [ "${n:-0}" -gt 0 ] && [ -z "$why" ]; then
			ok csum-offload-counted
		else
			bad csum-offload-counted "InCsumErrors behind the tun: $((e1 - e0)); tun_csum_partial ${n:-?}; ${why}"
		fi
	else
		bad csum-offload "$(why_start)"
	fi
	# Every packet alone: the write path's own NEEDS_CSUM, no super-packet.
	if start_daemon csum-alone --cpus 0,1 --interval 0 --no-coalesce --duration 30; then
		why=$(tcp_through alone $D4)
		stop_daemon
		[ -z "$why" ] && why=$(final_ok)
		if [ -z "$why" ]; then ok csum-offload-tcp-alone; else bad csum-offload-tcp-alone "$why"; fi
	else
		bad csum-offload-tcp-alone "$(why_start)"
	fi
	ip netns exec "$gen" ethtool -K vg tx off > /dev/null
	timing csum-offload
}

# ---- 3. steering policies over two workers ---------------------------------------
case_steer() {
	local sink3 pol extra sent e0 e1 w0 w1 rx why detail d
	bg "$dut" "$tmp/sink3.log" "$PY" "$helper" sink --ports 9000-9007 \
		--ready "$tmp/r3" --stop "$tmp/s3" --out "$tmp/sink3" --timeout 40
	sink3=$last
	wait_file "$tmp/r3" 50
	for pol in round-robin l4-hash l4-sport l4-dport fixed; do
		extra=
		[ $pol = fixed ] && extra="--fixed-worker 1"
		if ! start_daemon steer-$pol --cpus 0,1 --steer $pol $extra --extended --duration 20; then
			bad steer-$pol "$(why_start)"
			continue
		fi
		in_gen "$PY" "$helper" flows-send --src $G4 --dst $D4 --fixed 1 > "$tmp/flows-$pol" 2>&1
		sleep 0.2
		stop_daemon
		sent=$(jget "$tmp/flows-$pol" 'd["sent"]')
		read -r e0 e1 <<< "$(jget "$tmp/flows-$pol" "'%d %d' % tuple(d['split']['$pol'])" 2>/dev/null)"
		w0=$(worker_processed 0)
		w1=$(worker_processed 1)
		rx=$(received)
		why=$(final_ok)
		detail="sent ${sent:-?} in 16 flows, received ${rx:-?}; workers processed ${w0:-?} / ${w1:-?}"
		if [ -n "$why" ] || [ -z "$sent" ] || [ -z "$w0" ] || [ -z "$w1" ]; then
			bad steer-$pol "$detail; $why"
		elif [ "$rx" != "$sent" ] || [ $((w0 + w1)) != "$sent" ]; then
			bad steer-$pol "$detail: frames lost or counted twice"
		elif [ $pol = round-robin ]; then
			# One position per receiving CPU: each is at most one off.
			d=$((w0 - w1))
			if [ ${d#-} -le 2 ]; then
				ok steer-$pol
			else
				bad steer-$pol "$detail: round-robin should split evenly (within one per CPU)"
			fi
		elif [ "$w0" = "$e0" ] && [ "$w1" = "$e1" ]; then
			ok steer-$pol
		else
			bad steer-$pol "$detail; expected $e0 / $e1"
		fi
	done
	touch "$tmp/s3"
	wait_file "$tmp/sink3" 30
	stop_pid "$sink3"
	timing steering
}

# ---- 4. SIGTERM under load -------------------------------------------------------
case_sigterm() {
	local sink4 fpid loaded why rx l
	bg "$dut" "$tmp/sink4.log" "$PY" "$helper" sink --ports 9000 \
		--ready "$tmp/r4" --stop "$tmp/s4" --out "$tmp/sink4" --timeout 30
	sink4=$last
	wait_file "$tmp/r4" 50
	if start_daemon sigterm --cpus 0,1 --duration 20; then
		bg "$gen" "$tmp/flood" "$PY" "$helper" flood --src $G4 --dst $D4 --secs 8
		fpid=$last
		sleep 1.5
		loaded=yes
		kill -0 "$fpid" 2>/dev/null || loaded="no: the generator stopped early: $(tail -2 "$tmp/flood" | tr '\n' ' ')"
		stop_daemon
		stop_pid "$fpid"
		why=$(final_ok)
		rx=$(received)
		if [ "$D_RC" = 0 ] && [ "$D_MS" -lt 2000 ] && [ "$loaded" = yes ]; then
			ok sigterm-exit
		else
			bad sigterm-exit "status $D_RC after ${D_MS} ms (want 0 within 2000 ms); under load: $loaded"
		fi
		echo "# sigterm under load: received ${rx:-?} frames in ~1.5 s, exit after ${D_MS} ms"
		if grep -q '^conservation: .*: holds$' "$D_OUT" && [ "${rx:-0}" -gt 1000 ]; then
			ok sigterm-conservation
		else
			bad sigterm-conservation "$(grep '^conservation' "$D_OUT" || echo 'no conservation line') (received ${rx:-?}: a flood should bring thousands)"
		fi
		if grep -q '^audit: every frame came home$' "$D_OUT"; then
			ok sigterm-audit
		else
			bad sigterm-audit "$(grep '^audit' "$D_OUT" || echo 'no audit line'); stderr: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		fi
		l=$(leftovers)
		if [ -z "$l" ]; then ok sigterm-nothing-left; else bad sigterm-nothing-left "$l"; fi
	else
		bad sigterm-exit "$(why_start)"
	fi
	touch "$tmp/s4"
	wait_file "$tmp/sink4" 30
	stop_pid "$sink4"
	timing "sigterm under load"
}

# ---- 5. bad flags ----------------------------------------------------------------
# bad_flag CASE STATUS REGEX [runner...] -- ARGS...: the daemon with ARGS
# exits with STATUS, says REGEX on stderr, and leaves nothing behind.
bad_flag() {
	local c=$1 want=$2 re=$3 rc l
	shift 3
	local runner=()
	while [ "$1" != -- ]; do runner+=("$1"); shift; done
	shift
	lib_run ip netns exec "$dut" timeout 10 "${runner[@]}" "$daemon" "$@" --duration 5 > "$tmp/bf.out" 2> "$tmp/bf.err"
	rc=$?
	l=$(leftovers)
	if [ $rc = "$want" ] && grep -Eq -- "$re" "$tmp/bf.err" && [ -z "$l" ]; then
		ok bad-flag-$c
		echo "#   exit $rc: $(head -2 "$tmp/bf.err" | tr '\n' ' ')"
	else
		bad bad-flag-$c "ucpumapd $* exited $rc (want $want), said: $(head -3 "$tmp/bf.err" | tr '\n' ' ')(want /$re/)${l:+; left: $l}"
	fi
	# Whatever a failing case left must not spoil the next one.
	[ -n "$l" ] && { ip -n "$dut" link set vd xdp off 2>/dev/null; ip -n "$dut" link del $tun 2>/dev/null; }
}
case_bad_flags() {
	local rc l
	bad_flag unknown-interface 78 "nosuchif0" -- --dev nosuchif0 --tun $tun
	bad_flag missing-queue 78 "vd has RX queues 0-0, not queue 5" -- --dev vd --tun $tun --queues 5
	# No Ethernet header (an L3 tun, as wireguard or ipip): the program
	# would read the IP header as one. Refused before anything is made.
	if ip -n "$dut" tuntap add l3t mode tun && ip -n "$dut" link set l3t up; then
		KEEP=l3t
		bad_flag not-ethernet 78 "l3t is not an Ethernet device \(link type 65534" -- \
			--dev l3t --tun $tun --xdp-mode skb
		bad_flag check-not-ethernet 78 "l3t is not an Ethernet device" -- --check --dev l3t --tun $tun
		KEEP=
		ip -n "$dut" link del l3t
	else
		bad bad-flag-not-ethernet "cannot make an L3 tun"
	fi
	# Two RX queues, one TX queue: the way back would send nothing on
	# queue 1 (copy mode skips a queue the device has no TX queue of).
	if ip -n "$dut" link add vt numrxqueues 2 numtxqueues 1 type veth peer name vtp \
		numrxqueues 1 numtxqueues 2; then
		ip -n "$dut" link set vt up
		ip -n "$dut" link set vtp up
		KEEP="vt vtp"
		bad_flag two-way-no-tx-queue 78 "vt has TX queues 0-0, not queue 1, .*numtxqueues" -- \
			--dev vt --tun $tun --queues 0-1 --two-way
		bad_flag check-two-way-no-tx-queue 78 "vt has TX queues 0-0, not queue 1" -- \
			--check --dev vt --tun $tun --queues 0-1 --two-way
		KEEP=
		ip -n "$dut" link del vt
	else
		bad bad-flag-two-way-no-tx-queue "cannot make a veth of 2 RX queues and 1 TX queue"
	fi
	bad_flag cpu-out-of-range 2 "CPU 99 is not online" -- --dev vd --tun $tun --cpus 99
	bad_flag cpu-list-empty-item 2 "'0,,1' has an empty item" -- --dev vd --tun $tun --cpus 0,,1
	bad_flag rx-size-not-power-of-two 2 "rx-size: 1000 is not a power of two" -- --dev vd --tun $tun --rx-size 1000
	bad_flag frames-too-few 2 "frames 256 cannot cover the fill ring .*: give at least ([0-9]+) \\(they need [0-9]+; a power of two\\)" \
		-- --dev vd --tun $tun --frames 256
	bad_flag tun-name-too-long 2 "longer than 15 characters" -- --dev vd --tun ucm-tun-name-16c
	bad_flag tun-name-invalid 2 "'ucm:0' cannot be a device's name" -- --dev vd --tun ucm:0
	bad_flag unknown-steer 2 "unknown policy 'sideways'" -- --dev vd --tun $tun --steer sideways
	bad_flag missing-dev 2 "--dev IFACE is required" -- --tun $tun
	bad_flag empty-dev 2 "^--dev: the value is empty" -- --dev '' --tun $tun
	# Empty values refused as the file of options refuses them, at once.
	bad_flag empty-user 2 "^--user: the value is empty" -- --dev vd --tun $tun --user=
	bad_flag empty-stats-json 2 "^--stats-json: the value is empty" -- --dev vd --tun $tun --stats-json ''
	bad_flag empty-config 2 "^--config: the file's name is empty" -- --dev vd --tun $tun --config=-
	bad_flag keep-tun-picked-name 2 "--keep-tun needs a fixed --tun name: with ucmk%d the kernel picks" -- \
		--dev vd --tun 'ucmk%d' --keep-tun
	bad_flag mtu-ipv6-off 2 "--mtu 1000: below 1280 the kernel turns IPv6 off on the tun.*or --filter ipv4" -- \
		--dev vd --tun $tun --mtu 1000
	# Two-way, the tun takes IFACE's MTU: the same, without --mtu.
	ip -n "$dut" link set vd mtu 1000
	bad_flag two-way-mtu-ipv6-off 2 "--two-way: the tun's MTU is at most vd's, 1000: below 1280 .*raise vd's \(ip link set dev vd mtu 1280\), or give --filter ipv4" -- \
		--dev vd --tun $tun --two-way
	# Given too: not sent to a --mtu 1280 that two-way refuses.
	bad_flag two-way-mtu-given-ipv6-off 2 "--two-way: the tun's MTU is at most vd's, 1000" -- \
		--dev vd --tun $tun --two-way --mtu 1000
	ip -n "$dut" link set vd mtu 1500
	bad_flag default-tun-too-long 2 "ucm-vd-twelve-ch would be longer than 15 characters: give --tun" -- --dev vd-twelve-ch
	# --config: a file of options, read before the command line.
	bad_flag config-missing 78 "--config $tmp/none.conf: No such file" -- --dev vd --config $tmp/none.conf
	# --version needs nothing else: the file is not read.
	if "$daemon" --config "$tmp/none.conf" --version 2> "$tmp/cv.err" | grep -q '^ucpumapd [0-9]'; then
		ok bad-flag-config-version "--version with a --config that is not there: the version"
	else
		bad bad-flag-config-version "$(cat "$tmp/cv.err")"
	fi
	# ... nor an option before it.
	if "$daemon" --frames 3 --version 2> "$tmp/fv.err" | grep -q '^ucpumapd [0-9]'; then
		ok bad-flag-bad-option-version "--version after a bad --frames: the version"
	else
		bad bad-flag-bad-option-version "$(cat "$tmp/fv.err")"
	fi
	printf '# queues\n\ninterval 1\nqueues x  # no\n' > "$tmp/bad.conf"
	bad_flag config-bad-line 2 "^$tmp/bad.conf:4: --queues: 'x' is not a list" -- --dev vd --config $tmp/bad.conf
	printf 'two-way yes\n' > "$tmp/bad.conf"
	bad_flag config-flag-value 2 "^$tmp/bad.conf:1: --two-way takes no value" -- --dev vd --config $tmp/bad.conf
	printf -- '--dev vd\ntun=%s\nqueues 5\n' $tun > "$tmp/q5.conf"
	bad_flag config-queue 78 "vd has RX queues 0-0, not queue 5" -- --config $tmp/q5.conf
	printf 'interval 5\nframes 8192\n' > "$tmp/iv.conf"
	"$daemon" --interval 7 --config "$tmp/iv.conf" --dev vd --help | tr -s ' \n' ' ' > "$tmp/iv.help"
	if grep -q 'every SEC seconds (0: none) (default 7)' "$tmp/iv.help" &&
	   grep -q 'several frames) (default 8192)' "$tmp/iv.help" &&
	   "$daemon" --config "$tmp/iv.conf" --dev vd --help | tr -s ' \n' ' ' |
		grep -q 'every SEC seconds (0: none) (default 5)'; then
		ok bad-flag-config-override "the command line's --interval over the file's, wherever --config stands"
	else
		bad bad-flag-config-override "$("$daemon" --interval 7 --config "$tmp/iv.conf" --dev vd --help | grep -A1 interval)"
	fi
	if "$daemon" --help | tr -s ' \n' ' ' | grep -q "up to the kernel's limit (default 18)"; then
		ok bad-flag-help-max-frags "--max-frags' default as a number"
	else
		bad bad-flag-help-max-frags "$("$daemon" --help | grep -A3 max-frags)"
	fi
	# --mtu: the tun's largest is the option's limit, not a silent cap;
	# two-way, IFACE's MTU is the tun's largest (what the kernel routes
	# into the tun leaves through it).
	bad_flag mtu-over-max 2 "^--mtu: '9001' is not a whole number between 68 and 9000" -- --dev vd --tun $tun --mtu 9001
	bad_flag two-way-mtu-over-iface 78 "two-way, the tun's MTU 3000 is more than vd's 1500: .*give an MTU of at most 1500, or raise vd's \(ip link set dev vd mtu 3000\)" -- \
		--dev vd --tun $tun --two-way --mtu 3000
	bad_flag copy-and-zero-copy 2 "exclude each other" -- --dev vd --tun $tun --copy --zero-copy
	bad_flag no-hold-coalescing 2 "--no-hold: coalescing holds up to 64 packets to merge them; add --no-coalesce" -- --dev vd --tun $tun --no-hold
	bad_flag fixed-worker-without-fixed 2 "--fixed-worker is the worker of --steer fixed" -- \
		--dev vd --tun $tun --cpus 0,1 --fixed-worker 1
	bad_flag symmetric-not-l4-hash 2 "--symmetric is l4-hash's" -- \
		--dev vd --tun $tun --steer round-robin --symmetric
	bad_flag queues-trailing-comma 2 "--queues: '0,' has an empty item" -- --dev vd --tun $tun --queues 0,
	bad_flag queues-sign 2 "--queues: '\+0' is not a list of distinct numbers 0-63" -- \
		--dev vd --tun $tun --queues +0
	bad_flag peer-mac-sign 2 "--peer-mac: '-1:-1:-1:-1:-1:-1' is not a MAC address" -- \
		--dev vd --tun $tun --two-way --peer-mac -1:-1:-1:-1:-1:-1
	# The library's refusal: a bad setting (2), before anything is made.
	bad_flag peer-mac-multicast 2 "peer_mac 01:00:5e:00:00:01 is not a station's" -- \
		--dev vd --tun $tun --two-way --peer-mac 01:00:5e:00:00:01
	bad_flag fixed-worker-out-of-range 2 "only 2 workers" -- --dev vd --tun $tun --cpus 0,1 --steer fixed --fixed-worker 2
	# A FIFO with no reader: refused at once, not waited on for ever.
	mkfifo "$tmp/stats.fifo"
	bad_flag stats-json-fifo-no-reader 1 "stats.fifo is a FIFO with no reader: start its reader first" -- \
		--dev vd --tun $tun --stats-json "$tmp/stats.fifo"
	# A tun there before us whose vnet header another user set (QEMU's
	# 12 bytes): refused, its size left as it was.
	if ip netns exec "$dut" "$PY" - ucmvh0 12 set <<'PY'
import fcntl, struct, sys
TUNSETIFF, TUNSETPERSIST, TUNSETVNETHDRSZ = 0x400454ca, 0x400454cb, 0x400454d8
f = open("/dev/net/tun", "r+b", buffering=0)
fcntl.ioctl(f, TUNSETIFF, struct.pack("16sH", sys.argv[1].encode(), 0x0001 | 0x1000 | 0x4000 | 0x0100))
fcntl.ioctl(f, TUNSETVNETHDRSZ, struct.pack("i", int(sys.argv[2])))
fcntl.ioctl(f, TUNSETPERSIST, 1)
PY
	then
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun ucmvh0 --duration 5 \
			> "$tmp/vh.out" 2> "$tmp/vh.err"
		rc=$?
		l=$(left_in "$dut" vd ucmvh0)	# the tun was there before
		[ $rc = 1 ] && [ -z "$l" ] &&
			grep -q "ucmvh0 has a vnet header of 12 bytes, set by another user of it" "$tmp/vh.err" &&
			ok bad-flag-tun-vnet-hdr-other-user ||
			bad bad-flag-tun-vnet-hdr-other-user "exit $rc (want 1)${l:+, left: $l}: $(tail -2 "$tmp/vh.err" | tr '\n' ' ')"
		ip netns exec "$dut" "$PY" - ucmvh0 <<'PY' > "$tmp/vh.sz" 2>&1
import fcntl, struct, sys
TUNSETIFF, TUNGETVNETHDRSZ = 0x400454ca, 0x800454d7
f = open("/dev/net/tun", "r+b", buffering=0)
fcntl.ioctl(f, TUNSETIFF, struct.pack("16sH", sys.argv[1].encode(), 0x0001 | 0x1000 | 0x4000 | 0x0100))
print(struct.unpack("i", fcntl.ioctl(f, TUNGETVNETHDRSZ, struct.pack("i", 0)))[0])
PY
		[ "$(cat "$tmp/vh.sz")" = 12 ] && ok tun-vnet-hdr-kept ||
			bad tun-vnet-hdr-kept "ucmvh0's vnet header now: $(cat "$tmp/vh.sz")"
		ip -n "$dut" link del ucmvh0
	else
		bad bad-flag-tun-vnet-hdr-other-user "cannot make a tun with a 12-byte vnet header"
	fi
	bad_flag interval-too-short 2 "--interval: '0.00001' is neither 0 \(off\) nor a number of seconds from 0.01" -- \
		--dev vd --tun $tun --interval 0.00001
	bad_flag poll-no-rx-cpus 2 "--poll needs --rx-cpus" -- --dev vd --tun $tun --poll --cpus 1
	bad_flag poll-shared-cpu 2 "--poll: an RX thread and a worker would share CPU 1" -- \
		--dev vd --tun $tun --poll --rx-cpus 1 --cpus 1
	# Without --cpus: the default workers' CPUs named, and --cpus.
	bad_flag poll-default-workers 2 "--poll: an RX thread and a worker would share CPU 1.*the workers, without --cpus, are on CPU\(s\) 1[,:].*--cpus places them" -- \
		--dev vd --tun $tun --poll --rx-cpus 1
	bad_flag poll-every-cpu 2 "--poll: $(nproc) polling threads would hold every CPU ucpumapd may run on \($(nproc) online" -- \
		--dev vd --tun $tun --poll --rx-cpus 0 --cpus 1-$(($(nproc) - 1))
	# Fewer CPUs allowed than online: its unpinned threads need one.
	bad_flag poll-every-allowed-cpu 2 "--poll: 1 polling threads would hold every CPU ucpumapd may run on" taskset -c 1 -- \
		--dev vd --tun $tun --poll --pass --rx-cpus 1
	bad_flag spin-no-rx-cpus 2 "--spin-us needs --rx-cpus" -- --dev vd --tun $tun --spin-us 200 --cpus 1
	bad_flag busy-poll-no-rx-cpus 2 "--busy-poll needs --rx-cpus" -- --dev vd --tun $tun --busy-poll --cpus 1
	bad_flag busy-poll-shared-cpu 2 "--busy-poll: an RX thread and a worker would share CPU 1" -- \
		--dev vd --tun $tun --busy-poll --rx-cpus 1 --cpus 1
	bad_flag poll-spin-zero 2 "--poll with --spin-us 0 would never poll" -- \
		--dev vd --tun $tun --poll --spin-us 0 --rx-cpus 1 --cpus 0
	if command -v setpriv > /dev/null; then
		bad_flag not-root 78 "needs CAP_NET_ADMIN, .*; missing CAP_NET_ADMIN" setpriv --reuid=65534 --regid=65534 --clear-groups -- --dev vd --tun $tun
	else
		skip bad-flag-not-root "no setpriv to drop root with"
	fi
	# veth has no zero-copy: asked for explicitly, that is an error naming it.
	bad_flag zero-copy-unsupported 78 "[Zz]ero-copy|copy mode" -- --dev vd --tun $tun --zero-copy
	# The tun name is a device of another kind: fails after the program and the
	# sockets are up, which must all go again.
	bad_flag tun-name-taken 78 "device lo exists and is not a tun" -- --dev vd --tun lo
	# An MTU over what a packet may take in frames (18 of 2048 bytes; a
	# smaller one comes in several frames, test-jumbo): said with the fix
	# before anything is attached; one the driver refuses (veth: its
	# peer's) names the MTU too.
	if ip -n "$dut" link set vd mtu 40000; then
		bad_flag iface-mtu-over-frame 78 "vd's MTU 40000 is more than a 2048-byte frame holds .*ip link set dev vd mtu 32234\\), or give 4096-byte frames" -- --dev vd --tun $tun --frame-size 2048
		ip -n "$dut" link set vd mtu 1500
	else
		bad bad-flag-iface-mtu-over-frame "cannot set vd's MTU to 40000"
	fi
	if ip -n "$gen" link set vg mtu 9000; then
		bad_flag iface-mtu-over-driver 78 "cannot attach the XDP program to vd .*an MTU over the driver's limit for XDP" -- --dev vd --tun $tun
		ip -n "$gen" link set vg mtu 1500
	else
		bad bad-flag-iface-mtu-over-driver "cannot set vg's MTU to 9000"
	fi
	timing "bad flags"
}

# SIGUSR1 every 20 ms (a statistics line each): the control thread's
# checks go on between them. The tun deleted 1 s into the flood: it stops
# with that fault's status (5) within 2 s, not once the signals end (6 s).
case_sigusr1_flood() {
	local t0 ms rc n=0
	if start_daemon usr1 --duration 20 --interval 0; then
		t0=$(date +%s%N)
		while [ $n -lt 300 ] && kill -USR1 "$dpid" 2>/dev/null; do
			sleep 0.02
			n=$((n + 1))
			[ $n = 40 ] && ip -n "$dut" link del $tun && t0=$(date +%s%N)
		done
		lib_wait "$dpid"
		rc=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		dpid=
		if [ $rc = 5 ] && [ $ms -lt 2000 ] && [ $n -gt 40 ]; then
			ok sigusr1-flood "the tun's deletion seen after $ms ms, $n signals"
		else
			bad sigusr1-flood "exit $rc $ms ms after the tun's deletion, $n signals (want 5, within 2000 ms, more than 40 signals)"
		fi
	else
		bad sigusr1-flood "$(why_start)"
	fi
	timing sigusr1-flood
}

# ---- --check: the start's checks, nothing attached ---------------------------------
# check_run TAG WANT ARGS...: ucpumapd --check ARGS exits WANT and leaves
# nothing; its lines in $tmp/TAG.out, its reasons in $tmp/TAG.err.
check_run() {
	local tag=$1 want=$2 rc l
	shift 2
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --check "$@" > "$tmp/$tag.out" 2> "$tmp/$tag.err"
	rc=$?
	l=$(leftovers)
	[ $rc = "$want" ] && [ -z "$l" ] && return 0
	bad check-$tag "exit $rc (want $want)${l:+, left: $l}: $(tr '\n' ' ' < "$tmp/$tag.out" | cut -c1-300)"
	return 1
}
case_check() {
	local n l
	if check_run good 0 --dev vd --tun $tun --metrics-listen 9431; then
		n=$(grep -c '^ok ' "$tmp/good.out")
		if [ "$n" -ge 8 ] && ! grep -q '^FAIL' "$tmp/good.out" &&
			grep -qx 'ucpumapd --check: all good' "$tmp/good.out" &&
			grep -q '^ok    metrics: 9431 can be bound' "$tmp/good.out"; then
			ok check-good "$n lines ok, no program, no tun left"
		else
			bad check-good "$(tr '\n' ' ' < "$tmp/good.out")"
		fi
	fi
	# Every problem listed, the first one's status: a queue vd lacks, no
	# such user, a tun name that is another device's.
	if check_run bad 78 --dev vd --queues 5 --user nosuchuser0 --tun lo; then
		if [ "$(grep -c '^FAIL' "$tmp/bad.out")" = 3 ] &&
			grep -q '^FAIL  datapath' "$tmp/bad.out" && grep -q '^FAIL  user' "$tmp/bad.out" &&
			grep -q '^FAIL  tun: device lo exists and is not a tun' "$tmp/bad.out" &&
			grep -q 'vd has RX queues 0-0, not queue 5' "$tmp/bad.err" &&
			grep -q 'nosuchuser0: no such user' "$tmp/bad.err" &&
			grep -qx 'ucpumapd --check: 3 problems, exit 78' "$tmp/bad.out"; then
			ok check-bad "3 problems, each on its line, exit 78"
		else
			bad check-bad "$(tr '\n' ' ' < "$tmp/bad.out") / $(tr '\n' ' ' < "$tmp/bad.err")"
		fi
	fi
	# --user two-way over a tun, no --peer-mac: refused as the start
	# refuses it (its resolver would lack CAP_NET_ADMIN).
	if check_run user-two-way 2 --dev vd --tun $tun --user nobody --two-way; then
		grep -q '^FAIL  user' "$tmp/user-two-way.out" &&
			grep -q 'give --peer-mac, or run without --user' "$tmp/user-two-way.err" &&
			ok check-user-two-way ||
			bad check-user-two-way "$(tr '\n' ' ' < "$tmp/user-two-way.out")"
	fi
	# Options that conflict: said, and the other checks all the same.
	if check_run conflict 2 --dev vd --tun $tun --copy --zero-copy --queues 5; then
		if grep -q '^FAIL  options' "$tmp/conflict.out" && grep -q '^FAIL  datapath' "$tmp/conflict.out" &&
			grep -q 'exclude each other' "$tmp/conflict.err" &&
			grep -qx 'ucpumapd --check: 2 problems, exit 2' "$tmp/conflict.out"; then
			ok check-conflict "the conflict and the queue, exit 2"
		else
			bad check-conflict "$(tr '\n' ' ' < "$tmp/conflict.out")"
		fi
	fi
	# Polling threads placed on a worker's CPU: the options refused and
	# the workers' line says so, not "none shared".
	if check_run poll-shared 2 --dev vd --tun $tun --poll --rx-cpus 1 --cpus 1; then
		if grep -q '^FAIL  workers: 1 on CPUs 1: the polling threads. placement is refused' "$tmp/poll-shared.out" &&
			! grep -q 'none shared with a polling thread' "$tmp/poll-shared.out"; then
			ok check-poll-shared
		else
			bad check-poll-shared "$(tr '\n' ' ' < "$tmp/poll-shared.out")"
		fi
	fi
	# Busy polling on a veth: no interrupts to defer, so no word of
	# deferring them (the hint, within the look, is for a NIC's).
	if check_run busy-hint 0 --dev vd --tun $tun --busy-poll --spin-us 100 --rx-cpus 1 --cpus 0 --pass; then
		! grep -q 'gro_flush_timeout' "$tmp/busy-hint.err" &&
			ok check-busy-hint || bad check-busy-hint "$(tr '\n' ' ' < "$tmp/busy-hint.err")"
	fi
	# More RX CPUs than queues: the extra ones named, and it runs on.
	if check_run rx-extra 0 --dev vd --tun $tun --rx-cpus 0,1 --cpus 1; then
		grep -q '^ucpumapd: --rx-cpus lists 2 CPUs for 1 queue: CPU(s) 1 go unused' "$tmp/rx-extra.err" &&
			ok check-rx-cpus-extra || bad check-rx-cpus-extra "$(tr '\n' ' ' < "$tmp/rx-extra.err")"
	fi
	# With a file of options, the command line's over it.
	printf 'dev vd\nqueues 5\n' > "$tmp/ck.conf"
	if check_run conf 0 --config "$tmp/ck.conf" --queues 0 --tun $tun; then
		grep -q "^ok    options: taken, with those of $tmp/ck.conf" "$tmp/conf.out" &&
			ok check-config "--queues 0 over the file's queues 5" ||
			bad check-config "$(tr '\n' ' ' < "$tmp/conf.out")"
	fi
	# An optional file ('-') that is not there: said, not "taken with".
	if check_run confopt 0 --config "-$tmp/none.conf" --dev vd --tun $tun; then
		grep -q "^ok    options: taken; $tmp/none.conf (optional, the '-') is not there" "$tmp/confopt.out" &&
			ok check-config-optional-absent ||
			bad check-config-optional-absent "$(tr '\n' ' ' < "$tmp/confopt.out")"
	fi
	# An operator's tun of one queue: refused, as the start refuses it
	# (EINVAL: ours has one a worker); one of several queues without an
	# owner: taken, with a word that any user may open queues of it.
	ip -n "$dut" tuntap add ucmsq0 mode tun && ip -n "$dut" tuntap add ucmsq1 mode tun multi_queue vnet_hdr
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --check --dev vd --tun ucmsq0 \
		> "$tmp/single-queue.out" 2> "$tmp/single-queue.err"
	if [ $? = 78 ] && grep -q "^FAIL  tun: ucmsq0 is a single-queue tun: delete it" "$tmp/single-queue.out"; then
		ok check-tun-single-queue
	else
		bad check-tun-single-queue "$(tr '\n' ' ' < "$tmp/single-queue.out")"
	fi
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --check --dev vd --tun ucmsq1 \
		> "$tmp/ownerless.out" 2> "$tmp/ownerless.err"
	if [ $? = 0 ] && grep -q "^ucpumapd: ucmsq1 has no owner: any user may open queues of it" "$tmp/ownerless.err"; then
		ok check-tun-ownerless
	else
		bad check-tun-ownerless "$(tr '\n' ' ' < "$tmp/ownerless.err")"
	fi
	# --tun by an altname of another user's tun: the owner check reads
	# sysfs, which knows the primary name only; refused as that is.
	if ip -n "$dut" tuntap add ucmsq2 mode tun multi_queue vnet_hdr user 1234 &&
	   ip -n "$dut" link property add dev ucmsq2 altname ucmtalt0 2> /dev/null; then
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --check --dev vd --tun ucmtalt0 \
			> "$tmp/tun-alt.out" 2> "$tmp/tun-alt.err"
		if [ $? = 78 ] && grep -q "^ucpumapd: --tun ucmtalt0 is an altname of ucmsq2: serving ucmsq2" "$tmp/tun-alt.err" &&
		   grep -q "ucmsq2 belongs to user 1234" "$tmp/tun-alt.out" "$tmp/tun-alt.err"; then
			ok check-tun-altname
		else
			bad check-tun-altname "$(cat "$tmp/tun-alt.err" "$tmp/tun-alt.out" | tr '\n' ' ')"
		fi
	else
		skip check-tun-altname "this kernel or ip(8) makes no altnames"
	fi
	# Another namespace's kept mark, its inode and the tun's index come
	# round again here (a namespace deleted, another made): not ours, so
	# user 1234's tun is refused as that.
	if ! kernel_at_least 5 14; then
		skip check-tun-other-ns-mark "no SO_NETNS_COOKIE before Linux 5.14: a mark is taken by its index alone"
	elif ip -n "$dut" tuntap add ucmsq3 mode tun multi_queue vnet_hdr user 1234; then
		local ino idx lk
		ino=$(ip netns exec "$dut" stat -L -c %i /proc/self/ns/net)
		idx=$(ip -n "$dut" -o link show ucmsq3 | cut -d: -f1)
		lk=/run/ucpumap/tun-ucmsq3@$ino.lock
		mkdir -p /run/ucpumap
		printf '1\nkept %s 18446744073709551615\n' "$idx" > "$lk"
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --check --dev vd --tun ucmsq3 \
			> "$tmp/tun-mark.out" 2> "$tmp/tun-mark.err"
		if [ $? = 78 ] && grep -q "ucmsq3 belongs to user 1234" "$tmp/tun-mark.err"; then
			ok check-tun-other-ns-mark
		else
			bad check-tun-other-ns-mark "$(cat "$tmp/tun-mark.err" "$tmp/tun-mark.out" | tr '\n' ' ')"
		fi
		rm -f "$lk"
	else
		bad check-tun-other-ns-mark "cannot make ucmsq3"
	fi
	ip -n "$dut" link del ucmsq0 2> /dev/null
	ip -n "$dut" link del ucmsq1 2> /dev/null
	ip -n "$dut" link del ucmsq2 2> /dev/null
	ip -n "$dut" link del ucmsq3 2> /dev/null
	l=$(leftovers)
	[ -z "$l" ] || bad check-tun-left "$l"
	# --dev by an altname (udev gives NICs several): the kernel's calls
	# take it, /sys/class/net does not list it; vd it is, said.
	if ip -n "$dut" link property add dev vd altname ucmvdalt0 2> /dev/null; then
		if check_run altname 0 --dev ucmvdalt0 --tun $tun; then
			grep -q "^ucpumapd: --dev ucmvdalt0 is an altname of vd: serving vd" "$tmp/altname.err" &&
				grep -q "^ok    datapath: 1 queue there" "$tmp/altname.out" &&
				ok check-altname || bad check-altname "$(tr '\n' ' ' < "$tmp/altname.out")"
		fi
		ip -n "$dut" link property del dev vd altname ucmvdalt0
	else
		skip check-altname "this kernel or ip(8) makes no altnames"
	fi
	# vd down: the start takes it (and rides it out), so --check does.
	ip -n "$dut" link set vd down
	if check_run down 0 --dev vd --tun $tun; then
		grep -q "^ok    interface: vd, index [0-9]*, down: nothing comes in until it is up" "$tmp/down.out" &&
			ok check-iface-down || bad check-iface-down "$(tr '\n' ' ' < "$tmp/down.out")"
	fi
	ip -n "$dut" link set vd up
	sleep 0.3	# its carrier, for the next case
	check_unserved
	timing check
}

# RX queues that --queues leaves out (RSS gives them flows that pass
# ucpumapd by): a warning line in --check (no failure) and at the start,
# naming them and the fix; none where every queue is served.
check_unserved() {
	local why=
	if ! ip -n "$dut" link add vq numrxqueues 3 numtxqueues 3 type veth peer name vqp \
		numrxqueues 3 numtxqueues 3; then
		bad check-queues-unserved "cannot make a veth of 3 queues"
		return
	fi
	ip -n "$dut" link set vq up
	ip -n "$dut" link set vqp up
	KEEP="vq vqp"
	# (A veth has no RSS table, so no ethtool -X: every queue takes
	# flows; ethtool -L counts its queues as rx.)
	if check_run unserved 0 --dev vq --tun $tun --queues 0; then
		grep -q "^warn  queues: vq has RX queues 0-2, and RSS gives flows to 1-2, which are not served: .*add them to --queues, or narrow the NIC to those served: ethtool -L vq rx 1 (not kept over a reboot)\$" "$tmp/unserved.out" &&
			grep -qx 'ucpumapd --check: all good' "$tmp/unserved.out" ||
			why="--queues 0: $(tr '\n' ' ' < "$tmp/unserved.out");"
	fi
	if check_run served 0 --dev vq --tun $tun --queues 0-2; then
		grep -q "^warn" "$tmp/served.out" && why="$why --queues 0-2: $(grep '^warn' "$tmp/served.out");"
	fi
	# The start says it too (before the seccomp filter: no refusal in
	# the kernel's log), and runs.
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vq --tun $tun --queues 2 --cpus 1 \
		--duration 0.5 > "$tmp/unserved-run.out" 2> "$tmp/unserved-run.err"
	[ $? = 0 ] && grep -q "^ucpumapd: vq has RX queues 0-2, and RSS gives flows to 0-1, which are not served: .*add them to --queues\$" "$tmp/unserved-run.err" ||
		why="$why the start with --queues 2: $(tr '\n' ' ' < "$tmp/unserved-run.err" | cut -c1-300);"
	KEEP=
	ip -n "$dut" link del vq
	# More queues than ucpumapd serves (64): those past them named.
	if ip -n "$dut" link add vq numrxqueues 70 numtxqueues 70 type veth peer name vqp \
		numrxqueues 70 numtxqueues 70; then
		ip -n "$dut" link set vq up
		ip -n "$dut" link set vqp up
		KEEP="vq vqp"
		if check_run unserved70 0 --dev vq --tun $tun --queues 0-63; then
			grep -q "^warn  queues: vq has RX queues 0-69, and RSS gives flows to 64-69, which are not served: .*; ucpumapd serves queues 0-63 at most, or narrow the NIC to those served: ethtool -L vq rx 64" "$tmp/unserved70.out" ||
				why="$why 70 queues, --queues 0-63: $(grep -v '^ok' "$tmp/unserved70.out" | tr '\n' ' ');"
		fi
		KEEP=
		ip -n "$dut" link del vq
	else
		why="$why cannot make a veth of 70 queues;"
	fi
	[ -z "$(leftovers)" ] || why="$why left: $(leftovers)"
	if [ -z "$why" ]; then ok check-queues-unserved "said in --check and at the start, with the fix"; else bad check-queues-unserved "$why"; fi
}

# --stats-json under /tmp with INVOCATION_ID set (as systemd sets it for a
# service, whose /tmp is its own with the unit's PrivateTmp=): said.
case_stats_json_tmp() {
	local f=/tmp/ucm-json-$$.json rc
	lib_run ip netns exec "$dut" env INVOCATION_ID=0123 timeout 10 "$daemon" --dev vd --tun $tun \
		--interval 0 --duration 1 --stats-json "$f" > "$tmp/jt.out" 2> "$tmp/jt.err"
	rc=$?
	rm -f "$f"
	if [ $rc = 0 ] && grep -q "stats-json $f: under systemd, a unit's /tmp and /var/tmp may be its own" "$tmp/jt.err"; then
		ok stats-json-tmp
	else
		bad stats-json-tmp "exit $rc: $(head -3 "$tmp/jt.err" | tr '\n' ' ')"
	fi
}

# late_reader FIFO OUT SECS: FIFO made and opened at once (a writer's open
# needs a reader), read SECS later, what came into OUT; $rpid its pid.
late_reader() {
	mkfifo "$1"
	"$PY" - "$1" "$2" "$3" <<'PY' &
import sys, time
f = open(sys.argv[1], "rb")
time.sleep(float(sys.argv[3]))
open(sys.argv[2], "wb").write(f.read())
PY
	rpid=$!
	lib_pid $rpid
}

# ---- a reader that takes nothing ---------------------------------------------------
# stdout into a pipe nobody reads for 8 s (a pager not paged, a terminal
# stopped with ^S), its 64 KiB full within a second of --extended lines
# every 10 ms: the control thread goes on, and a SIGTERM at 3 s ends the
# run within 2 s, exit 0.
case_stdout_stalled() {
	local rpid pid why= rc
	late_reader "$tmp/st.fifo" "$tmp/st.lines" 8
	ip netns exec "$dut" "$daemon" --dev vd --tun $tun --interval 0.01 --extended \
		--duration 30 > "$tmp/st.fifo" 2> "$tmp/st.err" &
	pid=$!
	lib_pid $pid
	sleep 3
	lib_term "$pid" 20
	rc=$?
	[ "$rc" = 0 ] || why="exit $rc (137: still running 2 s after SIGTERM);"
	stop_pid "$rpid"
	[ -z "$(leftovers)" ] || why="$why left: $(leftovers)"
	if [ -z "$why" ]; then ok stdout-stalled; else bad stdout-stalled "$why $(tail -2 "$tmp/st.err" | tr '\n' ' ')"; fi
}

# ---- journald's priorities, or the time -------------------------------------------
# journal_run TAG ARGS...: the daemon's stdout and stderr into $tmp/TAG.log,
# the JOURNAL_STREAM that names that file given (as systemd does); as the
# daemon is by default (tests/lib.sh's UCPUMAPD_TIMESTAMPS=no unset).
journal_run() {
	local tag=$1 ino
	shift
	: > "$tmp/$tag.log"
	ino=$(stat -c '%d:%i' "$tmp/$tag.log")
	JOURNAL_STREAM=$ino lib_run ip netns exec "$dut" env -u UCPUMAPD_TIMESTAMPS ${J_ENV:-} \
		timeout 10 "$daemon" "$@" >> "$tmp/$tag.log" 2>&1
}
# plain_run TAG ARGS...: the same into a file that is not the journal's.
plain_run() {
	local tag=$1
	shift
	lib_run ip netns exec "$dut" env -u UCPUMAPD_TIMESTAMPS -u JOURNAL_STREAM \
		timeout 10 "$daemon" "$@" > "$tmp/$tag.log" 2>&1
}
STAMP='^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{3}Z '
case_journal() {
	local rc other
	journal_run jrun --dev vd --tun $tun --cpus 0 --interval 0.3 --duration 1
	rc=$?
	other=$(grep -cv '^<[3-7]>' "$tmp/jrun.log")
	if [ $rc = 0 ] && [ "$other" = 0 ] &&
		grep -q '^<5>ucpumap: xsk: vd: the driver gave no zero-copy' "$tmp/jrun.log" &&
		grep -q '^<6>ucpumapd [0-9.]* (libucpumap' "$tmp/jrun.log" &&
		grep -q '^<6>vd: rx ' "$tmp/jrun.log" &&
		grep -q '^<6>audit: every frame came home$' "$tmp/jrun.log"; then
		ok journal-priorities "$(wc -l < "$tmp/jrun.log") lines, each with its priority: notices <5>, the statistics <6>"
	else
		bad journal-priorities "exit $rc, $other lines without one: $(head -4 "$tmp/jrun.log" | tr '\n' ' ')"
	fi
	J_ENV=UCPUMAPD_TIMESTAMPS=maybe journal_run jerr --dev vd --tun $tun --user nosuchuser0
	rc=$?
	if [ $rc = 78 ] && grep -q '^<3>ucpumapd: --user nosuchuser0: no such user' "$tmp/jerr.log"; then
		ok journal-error "a refusal is <3>, exit 78"
	else
		bad journal-error "exit $rc: $(head -3 "$tmp/jerr.log" | tr '\n' ' ')"
	fi
	# The library's refusal is a warning (<4>): the failed start has an
	# error line of its own, for journalctl -p err.
	journal_run jq --dev vd --tun $tun --queues 7
	rc=$?
	if [ $rc = 78 ] && grep -q '^<4>ucpumap: xsk: vd has RX queues 0-0, not queue 7' "$tmp/jq.log" &&
	   grep -q '^<3>ucpumapd: not started (exit 78): the reason is above$' "$tmp/jq.log"; then
		ok journal-error-library "the library's <4>, then a <3> line, exit 78"
	else
		bad journal-error-library "exit $rc: $(head -4 "$tmp/jq.log" | tr '\n' ' ')"
	fi
	# A warning of its own, after which it would run on: <4>, not stderr's <3>.
	if grep -q "^<4>ucpumapd: UCPUMAPD_TIMESTAMPS='maybe' is neither yes nor no: taken as yes" "$tmp/jerr.log"; then
		ok journal-warning "its own warning is <4>"
	else
		bad journal-warning "no <4> line of UCPUMAPD_TIMESTAMPS='maybe': $(head -3 "$tmp/jerr.log" | tr '\n' ' ')"
	fi
	# Not the journal's, by default: each line its time, UTC with
	# milliseconds, the library's notices too.
	plain_run jtime --dev vd --tun $tun --cpus 0 --interval 0.3 --duration 1
	rc=$?
	other=$(grep -cvE "$STAMP" "$tmp/jtime.log")
	if [ $rc = 0 ] && [ "$other" = 0 ] && grep -q 'Z audit: every frame came home$' "$tmp/jtime.log" &&
		grep -qE "${STAMP}ucpumap: xsk: vd: the driver gave no zero-copy" "$tmp/jtime.log" &&
		grep -qE "${STAMP}vd: rx " "$tmp/jtime.log"; then
		ok journal-timestamps "by default, $(wc -l < "$tmp/jtime.log") lines: $(head -1 "$tmp/jtime.log" | cut -c1-60)..."
	else
		bad journal-timestamps "exit $rc, $other lines without a time: $(head -3 "$tmp/jtime.log" | tr '\n' ' ')"
	fi
	# The switch off: each line as written.
	plain_run jplain --dev vd --tun $tun --cpus 0 --interval 0.3 --duration 1 --no-timestamps
	rc=$?
	other=$(grep -cE "$STAMP|^<[0-7]>" "$tmp/jplain.log")
	if [ $rc = 0 ] && [ "$other" = 0 ] && grep -q '^ucpumapd [0-9.]* (libucpumap' "$tmp/jplain.log" &&
		grep -q '^vd: rx ' "$tmp/jplain.log" &&
		grep -q '^audit: every frame came home$' "$tmp/jplain.log"; then
		ok journal-no-timestamps "$(wc -l < "$tmp/jplain.log") lines, as written"
	else
		bad journal-no-timestamps "exit $rc, $other lines with a prefix: $(head -3 "$tmp/jplain.log" | tr '\n' ' ')"
	fi
	timing journal
}

# --stats-json into a FIFO whose reader lags: each line it gets is whole
# (a line is longer than stdio's 4096-byte buffer, which a full pipe
# would cut), those made while the pipe is full are left out, counted;
# the stop's line, the whole run's, is the last (the stop waits for the
# reader a second); a SIGHUP meanwhile (the FIFO opened again, a line
# half out) cuts none.
case_stats_json_lag() {
	local rpid rc why= t_exit
	# Read after 4.5 s: within the second the stop waits.
	late_reader "$tmp/lag.fifo" "$tmp/lag.lines" 4.5
	# Four queues: a line of about 5 KB.
	ip -n "$dut" link add vq numrxqueues 4 numtxqueues 4 type veth peer name vqp \
		numrxqueues 4 numtxqueues 4 && ip -n "$dut" link set vq up &&
		ip -n "$dut" link set vqp up || why="no veth of 4 queues;"
	sleep 0.5
	if ! start_daemon lag --dev vq --queues 0-3 --interval 0.01 --duration 4 \
		--stats-json "$tmp/lag.fifo" ||
	   ! { sleep 1; kill -HUP "$dpid"; }; then
		bad stats-json-lag "$why $(why_start)"
		kill "$rpid" 2> /dev/null
		lib_wait "$rpid"
		ip -n "$dut" link del vq 2> /dev/null
		return
	fi
	lib_wait "$dpid"
	rc=$?
	t_exit=$("$PY" -c 'import time; print(time.monotonic())')
	dpid=
	lib_wait "$rpid"
	ip -n "$dut" link del vq
	why=$why$("$PY" - "$tmp/lag.lines" "$t_exit" <<'PY'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
if lines and lines[-1] == b"":
    lines.pop()
bad, last = 0, None
for l in lines:
    try:
        last = json.loads(l)
    except ValueError:
        bad += 1
if not lines or bad:
    print(f"{bad} of {len(lines)} lines are not JSON;")
elif float(sys.argv[2]) - last["time"] > 2:
    print(f"the last line is of {float(sys.argv[2]) - last['time']:.1f} s before the exit, not the stop's;")
PY
)
	[ "$rc" = 0 ] || why="$why exit $rc;"
	grep -q "stats-json .*lag.fifo: its reader lags: lines are left out, whole" "$D_ERR" ||
		why="$why no word of the lag;"
	grep -qE "stats-json .*lag.fifo: [0-9]+ lines left out whole, 0 cut short" "$D_ERR" ||
		why="$why no count of the lines left out, or some cut;"
	! grep -q "cannot empty" "$D_ERR" || why="$why a FIFO 'emptied';"
	if [ -z "$why" ]; then
		ok stats-json-lag "$(wc -l < "$tmp/lag.lines") lines, each whole; $(grep -oE '[0-9]+ lines left out' "$D_ERR")"
	else
		bad stats-json-lag "$why $(tail -2 "$D_ERR" | tr '\n' ' ')"
	fi
	# A disk that fills (a tmpfs of two pages, one a filler's): the
	# refusal said once, with its cause, not taken for a reader that lags;
	# once the filler goes, the lines go on, the first after the cut one
	# whole; the run ends well.
	# One worker: a line of about 1.5 KB, which a page takes whole.
	local small=$tmp/small ncut pg
	why=
	pg=$(getconf PAGESIZE)
	mkdir -p "$small" && mount -t tmpfs -o size=$((2 * pg)) ucm-full "$small" &&
		lib_on_exit "umount -l '$small' 2> /dev/null" &&
		head -c "$pg" /dev/zero > "$small/filler" || why="no small tmpfs;"
	if [ -z "$why" ] &&
	   start_daemon full --cpus 0 --interval 0.01 --duration 2 --stats-json "$small/s.json"; then
		wait_line "$D_ERR" 'a write failed' 30 "$dpid" && rm "$small/filler"
		lib_wait "$dpid"
		rc=$?
		dpid=
		[ "$rc" = 0 ] || why="exit $rc;"
		[ "$(grep -c 'stats-json .*s.json: a write failed: No space left on device' "$D_ERR")" = 1 ] ||
			why="$why the failure not said once with its cause;"
		! grep -q 'reader lags' "$D_ERR" || why="$why said to lag;"
		ncut=$(grep -oE '[0-9]+ cut short' "$D_ERR" | cut -d' ' -f1)
		why=$why$("$PY" - "$small/s.json" "${ncut:-0}" <<'PY'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
if lines and lines[-1] == b"":
    lines.pop()
ok = []
for l in lines:
    try:
        json.loads(l)
        ok.append(True)
    except ValueError:
        ok.append(False)
bad = ok.count(False)
if any(l.count(b'{"time"') > 1 for l in lines):
    print("a cut line and the next one run together;")
elif bad != int(sys.argv[2]) or not bad:
    print(f"{bad} of {len(lines)} lines not JSON, {sys.argv[2]} said cut;")
elif not any(ok[ok.index(False):]):
    print("no whole line after the cut one;")
PY
)
		umount -l "$small"
		if [ -z "$why" ]; then
			ok stats-json-refused "$ncut cut, the next whole; $(grep -oE '[0-9]+ lines left out whole' "$D_ERR")"
		else
			bad stats-json-refused "$why $(tail -2 "$D_ERR" | tr '\n' ' ')"
		fi
	else
		bad stats-json-refused "$why $(why_start)"
	fi
}

# Somebody else's XDP program on vd: ucpumapd says so and leaves it alone;
# with --replace it takes over, and takes its own program off at the end.
case_foreign_program() {
	local rc prog devs why l
	cat > "$tmp/foreign.c" <<'EOF'
#include <linux/bpf.h>
__attribute__((section("xdp"), used)) int foreign_pass(struct xdp_md *ctx) { return XDP_PASS; }
char _license[] __attribute__((section("license"), used)) = "GPL";
EOF
	xdp_prog() {	# the name of the XDP program on vd, if any
		ip -n "$dut" link show vd | sed -n 's/.*prog\/xdp id [0-9]* name \([^ ]*\).*/\1/p'
	}
	if ! clang -O2 -target bpf -I/usr/include/"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)" \
		-c "$tmp/foreign.c" -o "$tmp/foreign.o" > "$tmp/foreign.log" 2>&1 ||
	   ! ip -n "$dut" link set vd xdp obj "$tmp/foreign.o" sec xdp 2>> "$tmp/foreign.log"; then
		skip bad-flag-foreign-program "cannot attach a program of our own making: $(tail -2 "$tmp/foreign.log" | tr '\n' ' ')"
		for l in replace-refused-keeps-foreign replace-attach-fails-keeps-foreign \
			 replace-setup-fails-keeps-foreign replace-foreign-program; do
			skip $l "no foreign program"
		done
	else
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun $tun --duration 5 > "$tmp/bf.out" 2> "$tmp/bf.err"
		rc=$?
		prog=$(xdp_prog)
		devs=$(ip -n "$dut" -o link show | awk -F': ' '{ sub(/@.*/, "", $2); if ($2 != "lo" && $2 != "vd") print $2 }')
		if [ $rc = 1 ] && grep -q "vd already runs XDP program foreign_pass" "$tmp/bf.err" &&
		   [ "$prog" = foreign_pass ] && [ -z "$devs" ]; then
			ok bad-flag-foreign-program
			echo "#   exit $rc: $(head -1 "$tmp/bf.err")"
		else
			bad bad-flag-foreign-program "exit $rc (want 1), said: $(head -2 "$tmp/bf.err" | tr '\n' ' '); program on vd now: '${prog:-none}' (want foreign_pass)${devs:+; devices left: $devs}"
		fi
		# A queue vd lacks: refused before anything is touched, so
		# --replace has not taken the other program off.
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun $tun --queues 7 --replace \
			--duration 5 > "$tmp/rq.out" 2> "$tmp/rq.err"
		rc=$?
		prog=$(xdp_prog)
		if [ $rc = 78 ] && grep -q "queue 7" "$tmp/rq.err" && [ "$prog" = foreign_pass ]; then
			ok replace-refused-keeps-foreign "exit $rc: $(grep -m1 'queue 7' "$tmp/rq.err")"
		else
			bad replace-refused-keeps-foreign "exit $rc (want 78), said: $(head -2 "$tmp/rq.err" | tr '\n' ' '); program on vd now: '${prog:-none}' (want foreign_pass)"
			[ -n "$prog" ] || ip -n "$dut" link set vd xdp obj "$tmp/foreign.o" sec xdp
		fi
		# An attach that fails once --replace took the other program off
		# (vg's MTU over what veth's native XDP takes for a peer; the
		# other program in generic mode, which takes it): it goes back.
		ip -n "$dut" link set vd xdp off
		ip -n "$gen" link set vg mtu 4000
		ip -n "$dut" link set vd xdpgeneric obj "$tmp/foreign.o" sec xdp
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun $tun --replace \
			--duration 5 > "$tmp/ra.out" 2> "$tmp/ra.err"
		rc=$?
		prog=$(xdp_prog)
		ip -n "$dut" link set vd xdpgeneric off
		ip -n "$gen" link set vg mtu 1500
		ip -n "$dut" link set vd xdp obj "$tmp/foreign.o" sec xdp
		if [ $rc != 0 ] && grep -q "foreign_pass is back on vd" "$tmp/ra.err" &&
		   [ "$prog" = foreign_pass ]; then
			ok replace-attach-fails-keeps-foreign "exit $rc: $(grep -m1 'cannot attach' "$tmp/ra.err")"
		else
			bad replace-attach-fails-keeps-foreign "exit $rc (want non-zero), said: $(grep -m2 'XDP' "$tmp/ra.err" | tr '\n' ' '); program on vd now: '${prog:-none}' (want foreign_pass)"
		fi
		# A set-up that fails once ours is on (no AF_XDP socket: the
		# fault shim): the other program goes back too.
		if [ -n "${SANITIZE:-}" ]; then
			skip replace-setup-fails-keeps-foreign "a sanitizer build: its runtime must come first in LD_PRELOAD"
		elif [ ! -f "$shim_so" ]; then
			bad replace-setup-fails-keeps-foreign "no $shim_so (make tests)"
		else
			lib_run ip netns exec "$dut" env LD_PRELOAD="$shim_so" UCM_SHIM_FAULT=xsk_socket \
				UCM_SHIM_COUNT=1000 timeout 10 "$daemon" --dev vd --tun $tun --replace \
				--duration 5 > "$tmp/rs.out" 2> "$tmp/rs.err"
			rc=$?
			prog=$(xdp_prog)
			l=$(leftovers)
			if [ $rc != 0 ] && grep -q "no AF_XDP socket" "$tmp/rs.err" &&
			   grep -q "foreign_pass is back on vd" "$tmp/rs.err" && [ "$prog" = foreign_pass ] &&
			   [ "$l" = "an XDP program on vd;" ]; then
				ok replace-setup-fails-keeps-foreign "exit $rc: $(grep -m1 'no AF_XDP socket' "$tmp/rs.err")"
			else
				bad replace-setup-fails-keeps-foreign "exit $rc (want non-zero), said: $(grep -m3 'XDP' "$tmp/rs.err" | tr '\n' ' '); program on vd now: '${prog:-none}' (want foreign_pass); left: $l"
				[ -n "$prog" ] || ip -n "$dut" link set vd xdp obj "$tmp/foreign.o" sec xdp
			fi
		fi
		if start_daemon replace --cpus 0,1 --replace --duration 20; then
			prog=$(xdp_prog)
			stop_daemon
			why=$(final_ok)
			l=$(leftovers)
			# Let go once started: the stop tries nothing.
			! grep -q "XDP program foreign_pass" "$D_ERR" ||
				why="$why the stop tried to put it back: $(grep -m1 'XDP program foreign_pass' "$D_ERR");"
			# ucm_xdp_nometa where the kernel's XDP has no metadata
			if [[ "$prog" =~ ^ucm_xdp_(steer|nometa)$ ]] && [ -z "$why$l" ]; then
				ok replace-foreign-program
			else
				bad replace-foreign-program "with --replace, the program on vd was '${prog:-none}' (want ucm_xdp_steer or ucm_xdp_nometa); $why $l"
			fi
		else
			bad replace-foreign-program "$(why_start)"
		fi
		ip -n "$dut" link set vd xdp off 2>/dev/null
	fi
	timing "foreign program"
}

# ---- frames to other stations -------------------------------------------------------
# mac_send MAC: 600 IPv4 datagrams from vg to D4, to Ethernet address MAC
# (ucpumap-gen: a socket would take the neighbour's); then the daemon's rx
# (a SIGUSR1 line).
# mac_send MAC: 600 frames to MAC; prints the daemon's rx and its count
# of frames passed to the kernel as another station's (0 where the start
# said it cannot read them: before Linux 5.19), after them.
mac_send() {
	[ -z "$1" ] || in_gen "$(dirname "$daemon")/ucpumap-gen" --dev vg --dst-ip $D4 --dst-mac "$1" \
		--engine packet --count 600 --rate 20000 > /dev/null 2>&1
	sleep 0.2
	usr1_json "$dpid" "$tmp/om.json" '"%d %d" % (d["rx"], d.get("xdp_pass", {}).get("other_host", 0))'
}

case_other_mac() {
	local other=02:00:00:00:00:99 r0 r1 r2 r3 why= p=600
	if ! start_daemon om --cpus 0,1 --stats-json "$tmp/om.json" --interval 0 --duration 30; then
		bad other-mac "$(why_start)"
		return
	fi
	# Unreadable only before Linux 5.19: from it on, a refusal fails.
	grep -q "left to the kernel cannot be read" "$D_ERR" && kernel_before 5 19 && p=0
	r0=$(mac_send "")
	r1=$(mac_send $other)
	# rx the same, other_host 600 more
	[ -n "$r0" ] && [ "${r1% *}" = "${r0% *}" ] && [ $((${r1#* } - ${r0#* })) = $p ] ||
		why="to another MAC: rx, other_host $r0 -> $r1 (want $p more passed, none received);"
	# vd takes that address: the daemon follows within a check (100 ms)
	ip -n "$dut" link set vd address $other
	sleep 0.5
	r2=$(mac_send $other)
	[ -n "$r2" ] && [ $((${r2% *} - ${r1% *})) = 600 ] && [ "${r2#* }" = "${r1#* }" ] ||
		why="$why to vd's new MAC: rx, other_host $r1 -> $r2 (want 600 more received);"
	r3=$(mac_send "$vdmac")
	[ "${r3% *}" = "${r2% *}" ] && [ $((${r3#* } - ${r2#* })) = $p ] ||
		why="$why to vd's old MAC: rx, other_host $r2 -> $r3 (want $p more passed);"
	ip -n "$dut" link set vd address "$vdmac"
	# vg's neighbour may have learnt the passing address (an ARP request
	# of vd's meanwhile): the cases after this one send to vd's own.
	ip -n "$gen" neigh flush dev vg
	grep -q "vd's MAC is now $other" "$D_ERR" || why="$why the change not said;"
	sleep 0.3
	stop_daemon
	# The total line says what went to the kernel, and why most of it.
	[ $p = 0 ] || grep -qE "^total vd, .*, to the kernel [0-9]+/s \(largest: other_host [0-9]+/s\)" "$D_OUT" ||
		why="$why the total line: $(grep '^total vd' "$D_OUT") (want 'to the kernel N/s (largest: other_host N/s)');"
	why="$why$(final_ok)$(leftovers)"
	if [ -z "$why" ]; then ok other-mac "rx, other_host: $r0; $r1; $r2; $r3"; else bad other-mac "$why"; fi
}

# What the kernel takes on the interface it came in on alone, steered
# into the tun, would be lost there: a DHCP client's replies, a DHCP
# server's renewals, link-local peers.
case_link_scope() {
	local ll r0 r1 got why= rpid p
	if ! start_daemon ls --cpus 0,1 --stats-json "$tmp/ls.json" --interval 0 --duration 30; then
		bad link-scope "$(why_start)"
		return
	fi
	# A link-local address of its own, without duplicate detection's wait.
	ll=fe80::203:2
	ip -n "$dut" addr add $ll/64 dev vd nodad 2> /dev/null
	r0=$(usr1_json "$dpid" "$tmp/ls.json" '"%d %d" % (d["rx"], d.get("xdp_pass", {}).get("link_ctrl", -1))')
	in_gen "$PY" "$helper" ping --dst "$ll%vg" --count 3 --interval 0.2 > "$tmp/ls.ping" 2>&1
	[ "$(jget "$tmp/ls.ping" 'd["replies"]')" = 3 ] ||
		why="ping $ll%vg: $(tail -2 "$tmp/ls.ping" | tr '\n' ' ') (want 3 replies);"
	# A DHCP client's socket and a server's, bound to vd, ports 68 and 67;
	# a member of 239.1.2.3 on vd.
	bg "$dut" "$tmp/ls.rx" "$PY" -c '
import socket, sys
def dhcp(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"vd")
    s.bind(("0.0.0.0", port))
    return s
s, v = dhcp(68), dhcp(67)
m = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
m.bind(("239.1.2.3", 5400))
m.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton("239.1.2.3") + socket.inet_aton(sys.argv[2]))
n = []
open(sys.argv[1], "w").close()
for sk in (s, v, m):
    sk.settimeout(3)
    k = 0
    try:
        while k < 3:
            sk.recv(2048)
            k += 1
    except socket.timeout:
        pass
    n.append(k)
print("%d %d %d" % tuple(n))' "$tmp/ls.ready" $D4
	rpid=$last
	wait_file "$tmp/ls.ready" 30
	in_gen "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(sys.argv[2]))
for _ in range(3):
    s.sendto(b"offer", (sys.argv[1], 68))
    s.sendto(b"renew", (sys.argv[1], 67))
    s.sendto(b"group", ("239.1.2.3", 5400))' $D4 $G4
	lib_wait "$rpid"
	got=$(tail -1 "$tmp/ls.rx")
	[ "$got" = "3 3 3" ] ||
		why="$why '$got' of '3 3 3' datagrams read on vd, to ports 68 and 67 and to 239.1.2.3 ($(tail -2 "$tmp/ls.rx" | tr '\n' ' '));"
	r1=$(usr1_json "$dpid" "$tmp/ls.json" '"%d %d" % (d["rx"], d.get("xdp_pass", {}).get("link_ctrl", -1))')
	# rx the same; link_ctrl at least the 3 pings and 9 datagrams more
	# (neighbour discovery's and IGMP's too), unless the counters cannot
	# be read (before Linux 5.19 alone)
	p=12
	grep -q "left to the kernel cannot be read" "$D_ERR" && kernel_before 5 19 && p=0
	[ -n "$r0" ] && [ -n "$r1" ] && [ "${r1% *}" = "${r0% *}" ] && [ $((${r1#* } - ${r0#* })) -ge $p ] ||
		why="$why rx, link_ctrl $r0 -> $r1 (want rx the same, link_ctrl $p more at least);"
	stop_daemon
	ip -n "$dut" addr del $ll/64 dev vd 2> /dev/null
	why="$why$(final_ok)$(leftovers)"
	if [ -z "$why" ]; then ok link-scope "ping $ll%vg answered, 3 of 3 to port 68, 67 and 239.1.2.3 each read on vd; rx, link_ctrl: $r0 -> $r1"; else bad link-scope "$why"; fi
}

# IPv6 off on the tun (its making inherits net.ipv6.conf.default): what
# the program steered of IPv6 the kernel would drop in the tun. It stays
# with the kernel on vd, said, and arrives there; IPv6 alone is refused.
case_ipv6_off_tun() {
	local r0 r1 r got why=
	# (bad-flags' MTU of 1000 took IPv6, and with it $D6, off vd.)
	ip -n "$dut" addr replace $D6/64 dev vd nodad
	ip netns exec "$dut" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	if ! start_daemon v6off --cpus 0,1 --stats-json "$tmp/v6off.json" --interval 0 --duration 30; then
		ip netns exec "$dut" sysctl -qw net.ipv6.conf.default.disable_ipv6=0
		bad ipv6-off-tun "$(why_start)"
		return
	fi
	grep -q "IPv6 is off on the tun $tun .*: IPv6 stays with the kernel on vd, IPv4 alone is steered" "$D_ERR" ||
		why="no line saying IPv6 stays with the kernel;"
	r0=$(usr1_json "$dpid" "$tmp/v6off.json" '"%d %d" % (d["rx"], d.get("xdp_pass", {}).get("unclaimed", -1))')
	got=$(recv5 v6off $D6 9300)
	[ "$got" = 5 ] || why="$why $got of 5 IPv6 datagrams to $D6 read on the DUT;"
	r1=$(usr1_json "$dpid" "$tmp/v6off.json" '"%d %d" % (d["rx"], d.get("xdp_pass", {}).get("unclaimed", -1))')
	[ -n "$r0" ] && [ -n "$r1" ] && [ "${r1% *}" = "${r0% *}" ] && [ $((${r1#* } - ${r0#* })) -ge 5 ] ||
		why="$why rx, unclaimed $r0 -> $r1 (want rx the same, unclaimed 5 more at least);"
	stop_daemon
	why="$why$(final_ok)"
	ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun $tun --filter ipv6 --duration 1 \
		> "$tmp/v6only.out" 2>&1
	r=$?
	[ $r = 78 ] && grep -q "IPv6 is off on the tun $tun .*IPv6 alone is steered: the kernel would drop all of it" "$tmp/v6only.out" ||
		why="$why --filter ipv6: exit $r (want 78): $(grep -i ipv6 "$tmp/v6only.out" | head -1);"
	ip netns exec "$dut" sysctl -qw net.ipv6.conf.default.disable_ipv6=0
	why="$why$(leftovers)"
	if [ -z "$why" ]; then ok ipv6-off-tun "said; 5 of 5 read through vd; rx, unclaimed: $r0 -> $r1; --filter ipv6 refused"; else bad ipv6-off-tun "$why"; fi
}

# recv5 TAG ADDR PORT: 5 datagrams from the generator to ADDR:PORT (IPv4
# or IPv6), read by a socket of the DUT's bound to it: how many came.
recv5() {
	local rpid
	bg "$dut" "$tmp/$1.rx" "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[2] else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[2], int(sys.argv[3])))
s.settimeout(3)
open(sys.argv[1], "w").close()
k = 0
try:
    while k < 5:
        s.recv(2048)
        k += 1
except socket.timeout:
    pass
print(k)' "$tmp/$1.ready" "$2" "$3"
	rpid=$last
	wait_file "$tmp/$1.ready" 30
	in_gen "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(5):
    s.sendto(b"five", (sys.argv[1], int(sys.argv[2])))' "$2" "$3"
	lib_wait "$rpid"
	tail -1 "$tmp/$1.rx"
}

# One way through a tap: it takes vd's MAC, so its stack takes the frames
# steered into it (addressed to vd's), which it would drop as another
# station's; and it reads them, not the kernel on vd.
case_tap_one_way() {
	local r0 r1 got why=
	if ! start_daemon tap1 --tap --cpus 0,1 --stats-json "$tmp/tap1.json" --interval 0 --duration 30; then
		bad tap-one-way "$(why_start)"
		return
	fi
	[ "$(ip netns exec "$dut" cat /sys/class/net/$tun/address)" = "$vdmac" ] ||
		why="the tap's MAC $(ip netns exec "$dut" cat /sys/class/net/$tun/address), not vd's $vdmac;"
	r0=$(usr1_json "$dpid" "$tmp/tap1.json" '"%d" % d["delivered"]')
	got=$(recv5 tap1 $D4 9301)
	[ "$got" = 5 ] || why="$why $got of 5 datagrams to $D4 read on the DUT;"
	r1=$(usr1_json "$dpid" "$tmp/tap1.json" '"%d" % d["delivered"]')
	[ -n "$r0" ] && [ -n "$r1" ] && [ $((r1 - r0)) -ge 5 ] ||
		why="$why delivered $r0 -> $r1 (want 5 more at least: through the tap);"
	# vd's MAC changed: the tap keeps its own (the run may not change it),
	# said.
	ip -n "$dut" link set vd address 02:00:00:00:00:78
	wait_line "$D_ERR" "vd's MAC is now 02:00:00:00:00:78; the tap $tun keeps $vdmac" 30 "$dpid" ||
		why="$why vd's new MAC not said;"
	ip -n "$dut" link set vd address "$vdmac"
	stop_daemon
	why="$why$(final_ok)$(leftovers)"
	if [ -z "$why" ]; then ok tap-one-way "the tap has vd's MAC; 5 of 5 read through it, delivered $r0 -> $r1"; else bad tap-one-way "$why"; fi
}

# ---- 6. malformed frames ---------------------------------------------------------
case_malformed() {
	local sink6 alive valid vgot leak verdict r err why
	bg "$dut" "$tmp/sink6.log" "$PY" "$helper" sink --ports 9100,9101 \
		--ready "$tmp/r6" --stop "$tmp/s6" --out "$tmp/sink6" --timeout 30
	sink6=$last
	wait_file "$tmp/r6" 50
	if start_daemon malformed --cpus 0,1 --stats-json "$tmp/mal.json" --interval 0 --duration 30; then
		in_gen "$PY" "$helper" malformed --ifname vg --dst-mac "$vdmac" --src-mac "$vgmac" \
			--src $G4 --dst $D4 --src6 $G6 --dst6 $D6 --count 100 --rate 3000 > "$tmp/mal.sent" 2>&1
		sleep 0.3
		alive=yes
		kill -0 "$dpid" 2>/dev/null || alive=no
		touch "$tmp/s6"
		wait_file "$tmp/sink6" 30
		stop_pid "$sink6"
		stop_daemon
		if [ ! -s "$tmp/mal.sent" ] || ! jget "$tmp/mal.sent" 'd["valid"]' > /dev/null; then
			bad malformed "the raw sender failed: $(tail -3 "$tmp/mal.sent" | tr '\n' ' ')"
		else
			S() { jget "$tmp/mal.sent" "d['$1']"; }
			J() { jget "$tmp/mal.json" "d['worker_drop_reasons']['$1']"; }
			if [ $alive = yes ]; then
				ok malformed-keeps-running
			else
				bad malformed-keeps-running "ucpumapd died (status $D_RC): $(tail -3 "$D_ERR" | tr '\n' ' ')"
			fi
			valid=$(S valid)
			vgot=$(jget "$tmp/sink6" "d['per_port'].get('9100', 0)")
			leak=$(jget "$tmp/sink6" "d['per_port'].get('9101', 0)")
			if [ "$vgot" = "$valid" ] && [ "$leak" = 0 ]; then
				ok malformed-valid-traffic
			else
				bad malformed-valid-traffic "$valid valid datagrams sent among the broken frames, ${vgot:-?} arrived; ${leak:-?} broken ones reached a socket"
			fi
			# Every drop reason counted exactly as often as its frames were
			# sent, and the daemon received exactly the valid and the
			# IP-shaped ones: non-IP and cut-short frames are the kernel's.
			verdict=$("$PY" - "$tmp/mal.sent" "$tmp/mal.json" <<'PY'
import json, sys
sent = json.loads(open(sys.argv[1]).read())
d = json.loads([l for l in open(sys.argv[2]) if l.strip()][-1])
got = d["worker_drop_reasons"]
want = {}
for k, n in sent["sent"].items():
    r = sent["reason"][k]
    if r:
        want[r] = want.get(r, 0) + n
bad = ["%s %d/%d" % (r, want.get(r, 0), got.get(r, 0))
       for r in sorted(set(want) | set(got)) if want.get(r, 0) != got.get(r, 0)]
print("reasons", "ok" if not bad else "sent/counted: " + ", ".join(bad))
steered = sent["valid"] + sum(want.values())
kernel = ["%s %d" % (k, n) for k, n in sorted(sent["sent"].items()) if not sent["reason"][k]]
print("rx", "ok" if d["rx"] == steered else
      "ucpumapd received %d frames, want %d (the valid and IP-shaped ones); the kernel's: %s"
      % (d["rx"], steered, ", ".join(kernel)))
PY
	)
			r=$(sed -n 's/^reasons //p' <<< "$verdict")
			if [ "$r" = ok ]; then ok malformed-counted-by-reason; else bad malformed-counted-by-reason "${r:-no verdict}"; fi
			r=$(sed -n 's/^rx //p' <<< "$verdict")
			if [ "$r" = ok ] && [ "$(J non_ip)" = 0 ] && [ "$(J runt)" = 0 ]; then
				ok malformed-non-ip-not-received
			else
				bad malformed-non-ip-not-received "${r:-no verdict}; counted non_ip $(J non_ip), runt $(J runt)"
			fi
			why=$(final_ok)
			if [ -z "$why" ]; then ok malformed-conservation; else bad malformed-conservation "$why"; fi
			err=$(S runt10_error)
			if [ "$(S runt10)" = 0 ]; then
				skip malformed-runt "the kernel will not send a 10-byte frame on Ethernet ($err from an AF_PACKET socket): a frame shorter than its 14-byte header cannot be made here. Cut-short frames were sent instead (14-byte Ethernet-only, a 16-byte half VLAN tag, a 10-byte IPv4 header): the XDP program passes them to the kernel, and ucpumapd did not receive them (malformed-non-ip-not-received)"
			elif [ "$(sed -n 's/^rx //p' <<< "$verdict")" = ok ]; then
				ok malformed-runt
			else
				bad malformed-runt "a 10-byte frame went out; see malformed-non-ip-not-received"
			fi
		fi
	else
		bad malformed "$(why_start)"
		touch "$tmp/s6"
		stop_pid "$sink6"
	fi
	timing "malformed frames"
}

# ---- 7. one instance per interface; SIGKILL and restart ---------------------------
# A second instance on a served interface is refused before it touches
# anything, naming the holder; the first keeps forwarding.
case_second_instance() {
	local first rc why
	if start_daemon first --cpus 0,1 --duration 30; then
		first=$dpid
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun ${tun}b --duration 5 \
			> "$tmp/second.out" 2> "$tmp/second.err"
		rc=$?
		if [ $rc = 1 ] && grep -Eq "vd is served already: XDP link [0-9]+ runs our ucm_xdp_(steer|nometa) \(id [0-9]+\), held by pid $first \(ucpumapd\)" "$tmp/second.err" &&
		   ! ip -n "$dut" link show ${tun}b > /dev/null 2>&1; then
			ok second-instance-refused
			echo "#   $(head -1 "$tmp/second.err")"
		else
			bad second-instance-refused "exit $rc (want 1), said: $(head -2 "$tmp/second.err" | tr '\n' ' ')(want the link, our program and pid $first)"
		fi
		# With the first one's tun too (two starts of one unit): the
		# tun's lock first, 78, as ucpumapd(8) says.
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun $tun --duration 5 \
			> "$tmp/second2.out" 2> "$tmp/second2.err"
		rc=$?
		if [ $rc = 78 ] && grep -q "tun $tun is served already, held by pid $first (ucpumapd)" "$tmp/second2.err"; then
			ok second-instance-same-tun "exit 78, the tun's holder named"
		else
			bad second-instance-same-tun "exit $rc (want 78), said: $(head -2 "$tmp/second2.err" | tr '\n' ' ')"
		fi
		why=$(exact_ipv4 first $D4 $G4)
		stop_daemon
		why="$why$(final_ok)"
		if [ -z "$why" ]; then ok second-instance-first-forwards; else bad second-instance-first-forwards "$why"; fi
	else
		bad second-instance-refused "$(why_start)"
	fi
}

# The same --tun on another interface: refused before anything is
# attached (the tun would get a second instance's queues), naming the
# holder; the first keeps forwarding, its tun with its own queues only.
case_second_tun() {
	local first rc why q0 q1
	if ! { ip -n "$dut" link add vd2 type veth peer name vd2p &&
		ip -n "$dut" link set vd2 up && ip -n "$dut" link set vd2p up; } 2> "$tmp/vd2.err"; then
		bad second-tun-refused "cannot make vd2: $(head -1 "$tmp/vd2.err")"
		return
	fi
	# The first as nobody: its tun is nobody's, and the second (root)
	# meets the lock before the owner.
	if start_daemon firsttun --cpus 0,1 --duration 30 --user nobody; then
		first=$dpid
		q0=$(ip netns exec "$dut" ls /sys/class/net/$tun/queues | tr '\n' ' ')
		lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd2 --tun $tun --duration 5 \
			> "$tmp/secondtun.out" 2> "$tmp/secondtun.err"
		rc=$?
		q1=$(ip netns exec "$dut" ls /sys/class/net/$tun/queues | tr '\n' ' ')
		why=
		[ $rc = 78 ] || why="exit $rc (want 78);"
		grep -Eq "tun $tun is served already, held by pid $first \(ucpumapd\)" "$tmp/secondtun.err" ||
			why="$why said: $(head -2 "$tmp/secondtun.err" | tr '\n' ' ')(want tun $tun held by pid $first);"
		ip -n "$dut" link show vd2 | grep -q ' xdp' && why="$why a program was left on vd2;"
		[ "$q0" = "$q1" ] || why="$why the tun's queues went from '$q0' to '$q1';"
		if [ -z "$why" ]; then
			ok second-tun-refused
			echo "#   $(head -1 "$tmp/secondtun.err")"
		else
			bad second-tun-refused "$why"
		fi
		why=$(exact_ipv4 firsttun $D4 $G4)
		stop_daemon
		why="$why$(final_ok)"
		if [ -z "$why" ]; then ok second-tun-first-forwards; else bad second-tun-first-forwards "$why"; fi
	else
		bad second-tun-refused "$(why_start)"
	fi
	ip -n "$dut" link del vd2 2> /dev/null
}

# --keep-tun: what the operator put on the tun outlives each way of
# ending; the next start takes the tun as it is. The trap's left_in
# check (nothing-left) sees the tun deleted at the end.
kept() {	# empty when the tun, its address and its route are there
	ip -n "$dut" -br addr show dev $tun 2> /dev/null | grep -q 10.203.77.1 ||
		echo "after $1: the tun or its address is gone;"
	ip -n "$dut" route show dev $tun 2> /dev/null | grep -q 10.203.78.0/24 ||
		echo "after $1: the route is gone;"
}
case_keep_tun() {
	local why= l o
	if ! start_daemon keep1 --cpus 0,1 --keep-tun --duration 30; then
		bad keep-tun-survives "$(why_start)"
		return
	fi
	ip -n "$dut" addr add 10.203.77.1/24 dev $tun &&
		ip -n "$dut" route add 10.203.78.0/24 dev $tun || why="cannot set up the tun;"
	stop_daemon
	why="$why$(final_ok)$(kept SIGTERM)"
	if start_daemon keep2 --cpus 0,1 --keep-tun --duration 30; then
		why="$why$(kept restart)"
		kill -9 "$dpid"
		lib_wait "$dpid" 2> /dev/null
		dpid=
		why="$why$(kept SIGKILL)"
	else
		why="$why the start after SIGTERM: $(why_start);"
	fi
	if [ -z "$why" ]; then ok keep-tun-survives; else bad keep-tun-survives "$why"; fi
	why=
	if start_daemon keep3 --cpus 0,1 --duration 30; then
		why="$(kept restart)$(exact_ipv4 keep3 $D4 $G4)"
		stop_daemon
		why="$why$(final_ok)"
	else
		why="the start after SIGKILL: $(why_start)"
	fi
	if [ -z "$why" ]; then ok keep-tun-restart-delivers; else bad keep-tun-restart-delivers "$why"; fi
	# The kept tun goes to the user each start runs as: root's, then
	# --user nobody's, then root's again (the kept mark, said).
	why=
	o=$(ip netns exec "$dut" cat /sys/class/net/$tun/owner 2> /dev/null)
	[ "$o" = 0 ] || why="the kept tun's owner ${o:-?}, not root's;"
	if start_daemon keepu --cpus 0,1 --keep-tun --user nobody --duration 30; then
		o=$(ip netns exec "$dut" cat /sys/class/net/$tun/owner 2> /dev/null)
		[ "$o" = "$(id -u nobody)" ] || why="$why under --user nobody its owner ${o:-?};"
		grep -q "ucpumapd: $tun, kept by an earlier start as user 0, goes to uid $(id -u nobody)" "$D_ERR" ||
			why="$why root's to nobody's not said: $(grep -h kept "$D_ERR" | head -1);"
		stop_daemon
		why="$why$(final_ok)"
	else
		why="$why --user nobody on the kept tun: $(why_start);"
	fi
	if start_daemon keepr --cpus 0,1 --keep-tun --duration 30; then
		o=$(ip netns exec "$dut" cat /sys/class/net/$tun/owner 2> /dev/null)
		[ "$o" = 0 ] || why="$why back as root its owner ${o:-?};"
		grep -q "ucpumapd: $tun, kept by an earlier start as user $(id -u nobody), goes to uid 0" "$D_ERR" ||
			why="$why not said: $(grep -h kept "$D_ERR" | head -1);"
		stop_daemon
		why="$why$(final_ok)$(kept 'the changes of user')"
	else
		why="$why root again on the kept tun: $(why_start);"
	fi
	if [ -z "$why" ]; then ok keep-tun-owner "root's, nobody's, root's again"; else bad keep-tun-owner "$why"; fi
	# The package's removal (its prerm; systemctl a no-op here): a tun
	# whose daemon runs stays, with its lock; a kept one without goes.
	why=
	mkdir -p "$tmp/bin" && printf '#!/bin/sh\nexit 0\n' > "$tmp/bin/systemctl" &&
		chmod +x "$tmp/bin/systemctl"
	if start_daemon keep5 --cpus 0,1 --keep-tun --duration 30; then
		PATH=$tmp/bin:$PATH ip netns exec "$dut" sh debian/ucpumap.prerm remove
		why="$(kept 'prerm under a running daemon')"
		[ -e "/run/ucpumap/tun-$tun@$(ip netns exec "$dut" stat -L -c %i /proc/self/ns/net).lock" ] ||
			why="$why its lock file is gone;"
		stop_daemon
		PATH=$tmp/bin:$PATH ip netns exec "$dut" sh debian/ucpumap.prerm remove
		ip -n "$dut" link show $tun > /dev/null 2>&1 && why="$why the kept tun stays after the prerm;"
	else
		why="$(why_start)"
	fi
	# An operator's tun that a start named and was refused (single
	# queue), and one a start kept: both the operator's, both stay.
	ip -n "$dut" tuntap add ucmop0 mode tun && ip -n "$dut" tuntap add ucmop1 mode tun multi_queue vnet_hdr ||
		why="$why no operator's tuns;"
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun ucmop0 --duration 1 \
		> "$tmp/op0.out" 2> "$tmp/op0.err" && why="$why a single-queue tun taken;"
	lib_run ip netns exec "$dut" timeout 10 "$daemon" --dev vd --tun ucmop1 --keep-tun \
		--duration 0.3 > "$tmp/op1.out" 2> "$tmp/op1.err" || why="$why ucmop1: $(tail -1 "$tmp/op1.err");"
	PATH=$tmp/bin:$PATH ip netns exec "$dut" sh debian/ucpumap.prerm remove
	for t in ucmop0 ucmop1; do
		ip -n "$dut" link show $t > /dev/null 2>&1 || why="$why the operator's $t deleted by the prerm;"
		ip -n "$dut" link del $t 2> /dev/null
	done
	# A kept tun the operator replaced by one of the same name (another
	# index): the operator's, it stays; and a later start on it does not
	# mark it kept.
	replaced() {	# LABEL: a kept tun made by a start, then replaced
		start_daemon "$1" --cpus 0,1 --keep-tun --duration 30 || { echo "$(why_start);"; return; }
		stop_daemon
		ip -n "$dut" link del $tun && ip -n "$dut" tuntap add $tun mode tun multi_queue vnet_hdr ||
			echo "cannot replace the kept tun;"
	}
	why="$why$(replaced keep6)"
	PATH=$tmp/bin:$PATH ip netns exec "$dut" sh debian/ucpumap.prerm remove
	ip -n "$dut" link show $tun > /dev/null 2>&1 ||
		why="$why the operator's $tun (made after the kept one went) deleted by the prerm;"
	ip -n "$dut" link del $tun 2> /dev/null
	why="$why$(replaced keep7)"
	if start_daemon keep8 --cpus 0,1 --keep-tun --duration 30; then
		stop_daemon
		l=/run/ucpumap/tun-$tun@$(ip netns exec "$dut" stat -L -c %i /proc/self/ns/net).lock
		# Not marked, its lock file goes with the daemon.
		[ ! -e "$l" ] ||
			why="$why a start on the operator's $tun marked it kept or left its lock file: $(tr '\n' ' ' < "$l");"
	else
		why="$why the start on the operator's $tun: $(why_start);"
	fi
	PATH=$tmp/bin:$PATH ip netns exec "$dut" sh debian/ucpumap.prerm remove
	ip -n "$dut" link show $tun > /dev/null 2>&1 ||
		why="$why the operator's $tun (a start served it since) deleted by the prerm;"
	ip -n "$dut" link del $tun 2> /dev/null
	if [ -z "$why" ]; then ok keep-tun-package-removed; else bad keep-tun-package-removed "$why"; fi
	# Kept by the first start: the flag stays until the tun goes.
	ip -n "$dut" link del $tun 2> /dev/null
	why=
	if start_daemon keep4 --cpus 0,1 --duration 30; then
		l=/run/ucpumap/tun-$tun@$(ip netns exec "$dut" stat -L -c %i /proc/self/ns/net).lock
		[ -e "$l" ] || why="no lock file while it runs;"
		stop_daemon
		ip -n "$dut" link show $tun > /dev/null 2>&1 && why="$why the tun is left after a stop;"
		[ -e "$l" ] && why="$why its lock file is left after a stop;"
		why="$why$(final_ok)"
	else
		why="$(why_start)"
	fi
	if [ -z "$why" ]; then ok keep-tun-default-goes; else bad keep-tun-default-goes "$why"; fi
	ip -n "$dut" link del $tun 2> /dev/null
}

# SIGKILL: the kernel takes the program off with the link's last fd.
case_sigkill() {
	local why
	if start_daemon killed --cpus 0,1 --duration 30; then
		kill -9 "$dpid"
		lib_wait "$dpid" 2>/dev/null
		dpid=
		if ip -n "$dut" link show vd | grep -q ' xdp'; then
			bad sigkill-leaves-no-program "after SIGKILL: $(ip -n "$dut" link show vd | grep -o 'prog/xdp.*')"
			ip -n "$dut" link set vd xdp off
		else
			ok sigkill-leaves-no-program
		fi
		if start_daemon restart --cpus 0,1 --duration 30; then
			why=$(exact_ipv4 restart $D4 $G4)
			stop_daemon
			why="$why$(final_ok)$(leftovers)"
			if [ -z "$why" ]; then ok restart-delivers; else bad restart-delivers "$why"; fi
		else
			bad restart-delivers "the restart failed: $(why_start)"
		fi
	else
		bad sigkill-leaves-no-program "$(why_start)"
	fi
}

# Another process holds a fd of the daemon's XDP link (bpftool, an agent
# walking links): the stop still takes the program off.
case_link_held() {
	local why= id hpid f
	if ! start_daemon held --cpus 0,1 --duration 30; then
		bad link-held-stop-detaches "$(why_start)"
		return
	fi
	for f in /proc/$dpid/fdinfo/*; do
		id=$(sed -n 's/^link_id:[[:space:]]*//p' "$f" 2> /dev/null)
		[ -n "$id" ] && break
	done
	if [ -z "$id" ]; then
		stop_daemon
		bad link-held-stop-detaches "no XDP link among the daemon's fds (attached by netlink?)"
		return
	fi
	# BPF_LINK_GET_FD_BY_ID (30): a fd of our own on the link.
	"$PY" - "$id" > "$tmp/held.out" 2>&1 <<'PY' &
import ctypes, os, struct, sys, time
nr = {"x86_64": 321, "aarch64": 280}[os.uname().machine]
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(struct.pack("III", int(sys.argv[1]), 0, 0), 16)
fd = libc.syscall(nr, 30, attr, 12)
print("held" if fd >= 0 else "error %d" % ctypes.get_errno(), flush=True)
time.sleep(20 if fd >= 0 else 0)
PY
	hpid=$!
	lib_pid $hpid
	wait_line "$tmp/held.out" '^(held|error)' 50 "$hpid"
	stop_daemon
	if ! grep -q '^held' "$tmp/held.out"; then
		why="cannot hold link $id: $(cat "$tmp/held.out")"
	elif ip -n "$dut" link show vd | grep -q 'xdp'; then
		why="the program stayed on vd while another process held link $id: $(ip -n "$dut" link show vd | grep -o 'prog/xdp.*')"
	fi
	kill "$hpid" 2> /dev/null
	lib_wait "$hpid"
	! grep -q "detaching the XDP link" "$D_ERR" || why="$why $(grep -m1 'detaching the XDP link' "$D_ERR");"
	why="$why$(final_ok)"
	ip -n "$dut" link set vd xdp off 2> /dev/null
	if [ -z "$why" ]; then ok link-held-stop-detaches "link $id held elsewhere, the program off vd at the stop"
	else bad link-held-stop-detaches "$why"; fi
}

# A stale program of ours attached the old way (netlink, as versions
# before 0.3 did, left behind by a SIGKILL) is replaced, and said so.
case_restart_stale() {
	local why
	if ! ip -n "$dut" link set vd xdp obj "$bpf_obj" sec xdp 2> "$tmp/stale.log"; then
		skip restart-replaces-stale-netlink "ip cannot attach $bpf_obj: $(tail -1 "$tmp/stale.log")"
	elif start_daemon stale --cpus 0,1 --duration 30; then
		why=$(exact_ipv4 stale $D4 $G4)
		stop_daemon
		why="$why$(final_ok)$(leftovers)"
		grep -Eiq 'replacing our stale XDP program' "$D_ERR" ||
			why="$why the restarted ucpumapd replaced the stale program without a word (stderr: '$(head -3 "$D_ERR" | tr '\n' ' ')')"
		if [ -z "$why" ]; then ok restart-replaces-stale-netlink; else bad restart-replaces-stale-netlink "$why"; fi
	else
		bad restart-replaces-stale-netlink "$(why_start)"
	fi
	timing restart
}

# ---- the end: nothing left ---------------------------------------------------------
case_nothing_left() {
	local l now
	l=$(leftovers)
	lib_cleanup_check	# the logs go to $UCM_KEEP here, when it is set
	if [ -z "$l" ] && [ -z "$lib_left" ]; then
		ok nothing-left
	else
		bad nothing-left "${l:-}${lib_left:+ after the cleanup: $lib_left}"
	fi
	now=$(date +%s%N)
	printf '# total: %d.%02d s\n' $(((now - T0) / 1000000000)) $(((now - T0) / 10000000 % 100))
}

lib_run_cases "$@"
