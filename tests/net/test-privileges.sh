#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd's least privilege (man/ucpumapd.8, PRIVILEGES) on a veth pair
# between two namespaces, the generator (g) and the DUT (d):
#
#   MODE-caps      while it runs, /proc/PID/status: nothing permitted or
#                  effective, an empty bounding set, NoNewPrivs 1, the
#                  seccomp filter on every thread; with
#                  --user every thread so, as that user; without, every
#                  thread so too but the next-hop resolver, which holds
#                  CAP_NET_ADMIN alone
#   MODE-tun-owned the tun it made belongs to the user it runs as; another
#                  user's attach of a queue of it is refused (EPERM)
#   MODE-forwards  a known count of datagrams through it, each read once
#                  behind its tun by a reader bound to the tun (one the
#                  kernel took in by vd, the XDP program's fallback when
#                  the daemon takes nothing, is never read); two-way, the
#                  route to the generator through the tun (checked) and
#                  pings out that way: 4 of 5 answered at least
#   MODE-stop      SIGTERM: exit 0, the conservation lines hold, every
#                  frame home, nothing left attached; the daemon's own
#                  count: received at least the datagrams sent (and the
#                  ping replies); two-way, the way back's line there, its
#                  read at least the 5 pings and its sent at least the
#                  replies
#     MODE: one-way, one-way-user, two-way (the kernel resolves a next hop
#     it did not know), peer-mac-user, tap-user, one-way-busy-poll (its
#     RX thread's polls of the device): each under the seccomp
#     allow-list (Seccomp 2 on every thread; a sanitizer build runs
#     without, and says so), and one-way-no-seccomp once without it
#   caps-named-*   as nobody without capabilities: refused (78), naming
#                  them; given exactly those (setpriv, ambient): caps,
#                  forwards and stop as the modes above, as nobody,
#                  saying that not root it has no status socket;
#                  caps-named-keep-tun: so, --keep-tun of a root's tun
#                  (nobody cannot take the tun's lock in /run): its owner
#                  stays root; caps-permitted-*: so, given as permitted
#                  alone (a copy with file capabilities, setcap +p), and
#                  its --check, port 81 with CAP_NET_BIND_SERVICE: exit 0
#   two-way-user-refused   --user --two-way over a tun without --peer-mac
#   uring-disabled  kernel.io_uring_disabled 1 (put back after): --check
#                  and the start say a writer's io_uring would not be
#                  rebuilt after the drop; the start runs
#   unknown-user   --user of nobody we know: exit 78 (the configuration's)
#   root-group-user  --user of a user whose group is root's (made for the
#                  case, removed at the cleanup): exit 78
#   user-switch-not-root  not root, with --user: refused (78) before any
#                  capability is named: from one user to another the
#                  threads would keep CAP_SETUID and CAP_SETGID
#   json-symlink   --stats-json to a symbolic link: exit 78, said, nothing
#                  attached, the link's target untouched
#   sighup-reopen  rename the file, SIGHUP: a new file gets the lines
#   sighup-user    --user, a directory it may not write: said at each
#                  SIGHUP, naming copytruncate; the lines go on into the
#                  open file
#   sigpipe        stdout a pipe whose reader left after the banner (the
#                  version line and the start line): runs on, SIGTERM exit 0
#   tun-owner      a tun owned by another uid refused (exit 78), naming the
#                  owner and --tun-any-owner; accepted with it (and --keep-tun:
#                  the operator's tun keeps its owner)
#   seccomp-refused-nothing  the kernel's log holds no call of the
#                  daemon's that the filter refused; a canary's refusal
#                  (tests/progs/seccomp_canary.c) first shows that the log
#                  holds such records at all, else SKIP. And each mode's
#                  -stop fails on an "Operation not permitted" in its output
#   nothing-left   nothing in d but vd, nothing outlives the cleanup
#
# The cases: the modes above (MODE-caps, -tun-owned, -forwards and -stop are lines of
# case MODE), caps-named, two-way-user-refused, uring-disabled, unknown-user, json-symlink,
# tun-owner (tun-owner-refused and tun-owner-flag), sighup-reopen,
# sighup-user, sigpipe, seccomp-refused-nothing, nothing-left.
#
# Root. One PASS/FAIL/SKIP line per case; the whole script stops itself
# after 280 s (a FAIL line); every process it starts is stopped by pid,
# the namespaces go on exit.
set -u
BUILD=${BUILD:-build}
name=test-privileges
cases="one-way one-way-user two-way peer-mac-user tap-user one-way-busy-poll one-way-no-seccomp
caps-named user-switch-not-root two-way-user-refused uring-disabled unknown-user root-group-user json-symlink tun-owner sighup-reopen sighup-user sigpipe
seccomp-refused-nothing nothing-left"
cd "$(dirname "$0")/../.."
. tests/lib.sh
helper=$progs/ucpumapd_traffic.py
daemon=$BUILD/ucpumapd
# A line of ours in the kernel's log: the filter's refusals of this run
# come after it (a count of lines would not do: a full log ring keeps its
# count while it wraps). Empty where the log cannot be written or read.
mark=
kmsg_mark() {	# TAG: a line of its own in the log; its text in $mark
	mark="ucpumap-$name-$$-$(date +%s%N)-$1"	# a pid comes round again
	echo "$mark" > /dev/kmsg 2> /dev/null && dmesg 2> /dev/null | grep -q -- "$mark" || mark=
}
# since_mark: the log after $mark; 1 when the mark is gone (the ring wrapped).
since_mark() {
	dmesg 2> /dev/null | sed -n "/$mark\$/,\$p" | tail -n +2 | grep . || true
	dmesg 2> /dev/null | grep -q -- "$mark"
}
kmsg_mark start
dmesg0=$mark

# canary: a refusal of our own (the daemon's filter flags) before any
# daemon runs: a log that shows none (auditd takes them, audit=0) proves
# nothing, and after a flood of refusals the kernel's rate limit may drop
# it. canary_why: empty when it showed, else why not.
canary() {
	local c=$BUILD/tests/progs/seccomp_canary n
	canary_why="the kernel's log shows no seccomp refusal, not even a canary's (auditd takes them, or audit=0): nothing to look at"
	[ -n "$dmesg0" ] || return
	if [ "$FILTER" = 0 ]; then
		canary_why="a sanitizer build runs the daemon without the filter"
		return
	fi
	if ! lib_run timeout 10 "$c" > /dev/null 2> "$tmp/canary.err"; then
		canary_why="the canary's filter: $(head -1 "$tmp/canary.err")"
		return
	fi
	for _ in $(seq 20); do
		if since_mark | grep 'type=1326' | grep -q "exe=\"$(readlink -f "$c")\""; then
			canary_why=
			return
		fi
		sleep 0.1
	done
}
g=ucmpg$$
d=ucmpd$$
dpid=

setup() {
	skip_unless_root "namespaces, XDP, tun, users"
	[ -x "$daemon" ] || { bad build "$daemon is not built (make)"; exit 0; }
	[ -n "$PY" ] || { echo "SKIP: $name: needs python3"; exit 0; }
	id nobody > /dev/null 2>&1 || { echo "SKIP: $name: no user nobody"; exit 0; }

	# The whole script is bounded: tests/lib.sh's TERM trap prints a FAIL line and
	# cleans up.
	( trap 'kill $s 2> /dev/null; exit 0' TERM; sleep 280 & s=$!; wait $s && kill -TERM $$ ) &
	lib_pid $!

	# A high ifindex of our own: main's XDP-link lookup compares ifindex only,
	# and another test's vd in another namespace may have vd's usual one.
	idx=$((20000 + $$ % 20000))
	if ! veth_pair "$g" "$d" vg vd 10.206.0.1/24 10.206.0.2/24 index $idx 2> "$tmp/setup.err"; then
		bad setup "cannot build the namespaces: $(head -2 "$tmp/setup.err" | tr '\n' ' ')"
		exit 0
	fi
	ip netns exec "$d" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	gmac=$(mac_of "$g" vg)
	canary
}

# Capabilities: no thread keeps any but the next-hop resolver (two-way
# over a tun, root), which keeps CAP_NET_ADMIN.
NET_ADMIN=0000000000001000
NONE=0000000000000000
# The seccomp filter: on (2) but in a sanitizer build.
FILTER=2
[ -n "${SANITIZE:-}" ] && FILTER=0

# start LABEL ARGS...: the daemon on vd; 0 once its banner is out. D_WRAP:
# a command that execs it (setpriv), or env.
D_WRAP=(env)
start() {
	local label=$1
	shift
	D_OUT=$tmp/$label.out
	D_ERR=$tmp/$label.err
	ip netns exec "$d" "${D_WRAP[@]}" "$daemon" --dev vd --interval 0 --duration 60 "$@" \
		> "$D_OUT" 2> "$D_ERR" &
	dpid=$!
	lib_pid $dpid
	wait_line "$D_OUT" '^ucpumapd: ' 100 "$dpid" && return 0
	stop_pid "$dpid"
	dpid=
	return 1
}

# stop: SIGTERM, D_RC its status (137 when it had to be killed after 5 s).
stop() {
	lib_term "$dpid"
	D_RC=$?
	dpid=
}

field() { awk -v f="$2:" '$1 == f { print $2 }' "$1"; }

# caps_check USER-MODE: empty when the daemon's threads hold what the man
# page says, else what differs. USER-MODE: yes (every thread nothing, as
# nobody) or no (as root: the resolver CAP_NET_ADMIN, the others nothing).
caps_check() {
	local user=$1 filter=${2:-$FILTER} why= t comm prm eff bnd nnp uid want sc n=0
	for t in /proc/$dpid/task/*; do
		comm=$(cat "$t/comm" 2> /dev/null) || continue
		case $comm in iou-*) continue ;; esac	# io_uring's, the kernel's
		n=$((n + 1))
		prm=$(field "$t/status" CapPrm)
		eff=$(field "$t/status" CapEff)
		bnd=$(field "$t/status" CapBnd)
		nnp=$(field "$t/status" NoNewPrivs)
		uid=$(field "$t/status" Uid)
		sc=$(field "$t/status" Seccomp)
		want=$NONE
		[ "$user" = no ] && [ "$comm" = ucpumap/neigh ] && want=$NET_ADMIN
		[ "$prm" = "$want" ] && [ "$eff" = "$want" ] || why="$why $comm: CapPrm $prm CapEff $eff (want $want);"
		[ "$bnd" = $NONE ] || why="$why $comm: CapBnd $bnd;"
		[ "$nnp" = 1 ] || why="$why $comm: NoNewPrivs $nnp;"
		[ "$sc" = "$filter" ] || why="$why $comm: Seccomp $sc (want $filter);"
		if [ "$user" = yes ]; then
			[ "$uid" = 65534 ] || why="$why $comm: uid $uid;"
		else
			[ "$uid" = 0 ] || why="$why $comm: uid $uid;"
		fi
	done
	[ $n -gt 0 ] || why="no thread of $dpid to read (the daemon is gone)"
	echo "$why"
}

# forward COUNT: COUNT rounds of the ipv4 sizes from g through the tun,
# read on the tun (ucmpt) alone; prints "received expected".
forward() {
	rm -f "$tmp/r" "$tmp/s" "$tmp/res"
	ip netns exec "$d" "$PY" $helper exact-recv --paths ipv4 --count "$1" --dev ucmpt \
		--ready "$tmp/r" --stop "$tmp/s" --out "$tmp/res" --timeout 15 > "$tmp/recv.log" 2>&1 &
	local rp=$!
	lib_pid $rp
	wait_file "$tmp/r" 50 && lib_run ip netns exec "$g" "$PY" $helper exact-send --paths ipv4 \
		--count "$1" --rate 3000 --v4 10.206.0.2 --src4 10.206.0.1 > /dev/null 2>&1
	sleep 0.3
	touch "$tmp/s"
	wait_file "$tmp/res" 50
	stop_pid $rp
	jget "$tmp/res" "'%d %d' % (d['paths']['ipv4']['received'], d['paths']['ipv4']['expected'])"
}

pings() {	# from NS to ADDR: the replies of 5
	lib_run ip netns exec "$1" "$PY" $helper ping --dst "$2" --count 5 --interval 0.1 \
		--timeout 3 > "$tmp/ping" 2>&1
	jget "$tmp/ping" 'd["replies"]'
}

closing_ok() {	# TWO-WAY: empty when the stop was clean, else why not
	local why=
	[ "$D_RC" = 0 ] || why="exit status $D_RC;"
	grep -q '^conservation: .*: holds$' "$D_OUT" || why="$why no forward conservation that holds;"
	[ "$1" = yes ] && ! grep -q '^conservation, way back: .*: holds$' "$D_OUT" &&
		why="$why no way-back conservation that holds;"
	grep -q '^audit: every frame came home$' "$D_OUT" || why="$why no audit line;"
	why="$why$(left_in "$d" vd ${KEEP_DEV:-})"
	[ -n "$why" ] && why="$why stderr: $(tail -3 "$D_ERR" | tr '\n' ' ')"
	echo "$why"
}

# counted TWO-WAY SENT REPLIES: empty when the daemon's closing lines
# count what went through it (received at least SENT datagrams and
# REPLIES ping replies; two-way, its way back read at least the 5 pings
# and sent at least REPLIES), else what they say.
counted() {
	local why= rx rd sn want=$(($2 + ${3:-0}))
	rx=$(closing_count "$D_OUT" received)
	[ "${rx:-0}" -ge "$want" ] ||
		why="the daemon received ${rx:-?} (its conservation line), want $want at least: the datagrams${3:+ and ping replies} went around it;"
	if [ "$1" = yes ]; then
		rd=$(closing_count "$D_OUT" read)
		sn=$(closing_count "$D_OUT" sent)
		[ "${rd:-0}" -ge 5 ] && [ "${sn:-0}" -ge "${3:-0}" ] ||
			why="$why its way back read ${rd:-?}, sent ${sn:-?}: want 5 pings read and ${3:-0} sent at least;"
	fi
	echo "$why"
}

# run MODE USER(yes/no) TWO-WAY(yes/no) ARGS...: start, caps, traffic, stop.
run() {
	local mode=$1 user=$2 two=$3 why r e n= route= filter=$FILTER
	shift 3
	case " $* " in *" --no-seccomp "*) filter=0 ;; esac
	if ! start "$mode" "$@"; then
		bad "$mode" "did not start: $(tail -3 "$D_ERR" | tr '\n' ' ')"
		return
	fi
	why=$(caps_check "$user" "$filter")
	if [ -z "$why" ]; then
		ok "$mode-caps"
	else
		bad "$mode-caps" "$why"
	fi
	tun_owned "$mode" "$@"
	case $two in
	yes)
		# The way out through the tun, or the pings would leave by vd.
		if [ "$mode" != "${mode#tap}" ]; then
			ip -n "$d" addr add 10.206.0.2/24 dev ucmpt 2> "$tmp/route.err" ||
				route="ip addr add 10.206.0.2/24 dev ucmpt: $(head -1 "$tmp/route.err");"
		else
			ip -n "$d" route add 10.206.0.1/32 dev ucmpt 2> "$tmp/route.err" ||
				route="ip route add 10.206.0.1/32 dev ucmpt: $(head -1 "$tmp/route.err");"
			ip netns exec "$d" sysctl -qw net.ipv4.conf.ucmpt.rp_filter=0
		fi
		ip -n "$d" route get 10.206.0.1 2> /dev/null | grep -q " dev ucmpt " ||
			route="$route the route to 10.206.0.1: $(ip -n "$d" route get 10.206.0.1 2>&1 | head -1), not through ucmpt;"
		# Out first, to a peer neither side has met: the next hop must
		# be resolved for the way back (the kernel's, or --peer-mac).
		ip -n "$d" neigh flush dev vd
		ip -n "$g" neigh flush dev vg
		n=$(pings "$d" 10.206.0.1)
		;;
	esac
	read -r r e <<< "$(forward 20)"
	if [ "${r:-0}" = "${e:-x}" ] && { [ $two = no ] || { [ "${n:-0}" -ge 4 ] && [ -z "$route" ]; }; }; then
		ok "$mode-forwards" "$r of $e datagrams in, read on ucmpt${n:+, $n of 5 pings out through it}"
	else
		bad "$mode-forwards" "read ${r:-?} of ${e:-?} datagrams on ucmpt$([ -s "$tmp/recv.log" ] && echo " (the reader: $(tail -1 "$tmp/recv.log"))")${n:+, $n of 5 pings out$([ "$n" -ge 4 ] || echo " (want 4 at least)")}${route:+; $route}"
	fi
	stop
	why=$(closing_ok $two)
	why="$why$(counted $two "${e:-120}" $n)"
	# A call the filter refused is an EPERM its caller reports, also
	# where the kernel's log shows no refusal (seccomp-refused-nothing).
	grep -q "Operation not permitted" "$D_ERR" "$D_OUT" &&
		why="$why a call refused: $(grep -h "Operation not permitted" "$D_ERR" "$D_OUT" | head -1);"
	if [ -z "$why" ]; then
		ok "$mode-stop" "exit 0, conservation holds, every frame home; the daemon received $(closing_count "$D_OUT" received) (${e:-120} datagrams sent${n:+, $n ping replies})${n:+, its way back read $(closing_count "$D_OUT" read) and sent $(closing_count "$D_OUT" sent)}"
	else
		bad "$mode-stop" "$why"
	fi
}

# tun_owned MODE ARGS...: the tun the daemon made (ucmpt) belongs to the
# user it runs as, and another user cannot attach a queue of it (EPERM:
# an ownerless multi-queue tun takes any user's).
tun_owned() {
	local mode=$1 owner uid stranger flags=0x5101 got
	shift
	case " $* " in *" --tap "*) flags=0x5102 ;; esac
	uid=$(awk '/^Uid:/ { print $3 }' "/proc/$dpid/status")
	owner=$(ip netns exec "$d" cat /sys/class/net/ucmpt/owner 2> /dev/null)
	stranger=65533
	[ "$uid" = 65533 ] && stranger=65532
	got=$(ip netns exec "$d" setpriv --reuid=$stranger --regid=$stranger --clear-groups \
		"$PY" - ucmpt $flags <<'PY' 2>&1
import errno, fcntl, os, struct, sys
fd = os.open("/dev/net/tun", os.O_RDWR)
try:
    fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH22x", sys.argv[1].encode(), int(sys.argv[2], 16)))
    print("attached")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
PY
)
	if [ -n "$uid" ] && [ "$owner" = "$uid" ] && [ "$got" = EPERM ]; then
		ok "$mode-tun-owned" "ucmpt's owner is uid $owner; uid $stranger's attach: $got"
	else
		bad "$mode-tun-owned" "ucmpt's owner ${owner:-?} (the daemon runs as uid ${uid:-?}); uid $stranger's attach: ${got:-?}"
	fi
}

# ---- the modes --------------------------------------------------------------
# Not root, with exactly the capabilities its refusal names: refused
# without them (78), then as the modes run.
case_caps_named() {
	local names caps rc ids
	if ! command -v setpriv > /dev/null; then
		skip caps-named "no setpriv (util-linux)"
		return
	fi
	ids="--reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
	lib_run ip netns exec "$d" setpriv $ids -- "$daemon" --dev vd --tun ucmpt --duration 5 \
		> /dev/null 2> "$tmp/caps.err"
	rc=$?
	names=$(sed -n 's/^ucpumapd: needs \(.*\); missing .*/\1/p' "$tmp/caps.err")
	if [ $rc != 78 ] || [ -z "$names" ]; then
		bad caps-named-refused "as nobody without capabilities: exit $rc (want 78): $(head -2 "$tmp/caps.err" | tr '\n' ' ')"
		return
	fi
	ok caps-named-refused "exit 78, naming $names"
	caps=$(echo "$names" | tr -d ' ' | tr 'A-Z' 'a-z' | sed 's/cap_/+/g')
	D_WRAP=(setpriv $ids --inh-caps="$caps" --ambient-caps="$caps" --)
	run caps-named yes no --tun ucmpt
	# No status socket for it (/run/ucpumap is root's), and the reason.
	if grep -q "cannot serve --status on .*: not root: only root makes it" "$D_ERR"; then
		ok caps-named-status-said
	else
		bad caps-named-status-said "$(grep 'cannot serve' "$D_ERR" || echo 'no line')"
	fi
	ip -n "$d" tuntap add ucmpk mode tun multi_queue vnet_hdr user 0
	KEEP_DEV=ucmpk
	if start caps-named-keep-tun --tun ucmpk --keep-tun; then
		stop
		rc=$(ip netns exec "$d" cat /sys/class/net/ucmpk/owner 2> /dev/null)
		if [ "$rc" = 0 ] && [ "$D_RC" = 0 ]; then
			ok caps-named-keep-tun "root's tun kept, still root's"
		else
			bad caps-named-keep-tun "exit $D_RC; the tun's owner now ${rc:-none}, not 0: $(head -2 "$D_ERR" | tr '\n' ' ')"
		fi
	else
		bad caps-named-keep-tun "did not start: $(tail -2 "$D_ERR" | tr '\n' ' ')"
	fi
	ip -n "$d" link del ucmpk 2> /dev/null
	KEEP_DEV=
	# Those given as permitted alone (file capabilities, setcap +p): the
	# daemon makes them effective before it uses them.
	# --check too, binding a low port with the one it adds for that.
	if ! command -v setcap > /dev/null; then
		skip caps-permitted "no setcap (libcap2-bin)"
	elif findmnt -n -o OPTIONS -T "$tmp" 2> /dev/null | grep -qw nosuid; then
		skip caps-permitted "$tmp is on a nosuid mount: file capabilities are not given there"
	elif chmod 711 "$tmp" && cp "$daemon" "$tmp/ucpumapd-pcap" &&
		setcap "$(echo "$names" | tr -d ' ' | tr 'A-Z' 'a-z'),cap_net_bind_service+p" \
			"$tmp/ucpumapd-pcap"; then
		D_WRAP=(setpriv $ids --)
		local real=$daemon
		daemon=$tmp/ucpumapd-pcap
		run caps-permitted yes no --tun ucmpt
		ip netns exec "$d" setpriv $ids -- "$daemon" --check --dev vd --tun ucmpt \
			--metrics-listen 127.0.0.1:81 > "$tmp/pcheck.out" 2>&1
		rc=$?
		[ $rc = 0 ] && ok caps-permitted-check "exit 0, port 81 bound" ||
			bad caps-permitted-check "exit $rc: $(grep -E '^[^ ]* ?FAIL' "$tmp/pcheck.out" | head -2 | tr '\n' ' ')"
		daemon=$real
	else
		bad caps-permitted "no copy of the daemon with file capabilities in $tmp"
	fi
	D_WRAP=(env)
}
# Not root, with --user: refused (78) before the capabilities are named,
# for the switch from one user to another would leave each thread
# CAP_SETUID and CAP_SETGID whatever it was given; nothing attached.
case_user_switch_not_root() {
	if ! command -v setpriv > /dev/null; then
		skip user-switch-not-root "no setpriv (util-linux)"
		return
	fi
	D_WRAP=(setpriv "--reuid=$(id -u nobody)" "--regid=$(id -g nobody)" --clear-groups --)
	KEEP_DEV= refused user-switch-not-root 78 "--user daemon: started as user [0-9]+, not root" \
		--tun ucmpt --user daemon
	D_WRAP=(env)
	grep -q "needs CAP_" "$tmp/ref.err" &&
		bad user-switch-not-root-first "capabilities named before the refusal: $(head -2 "$tmp/ref.err" | tr '\n' ' ')"
}
case_one_way() { run one-way no no --tun ucmpt; }
case_one_way_user() { run one-way-user yes no --tun ucmpt --user nobody; }
case_two_way() { run two-way no yes --tun ucmpt --two-way; }
case_peer_mac_user() { run peer-mac-user yes yes --tun ucmpt --user nobody --peer-mac "$gmac"; }
# The tap holds the DUT's address; vd gets it back however the run went
# (the cases after this one send to it).
case_tap_user() {
	ip -n "$d" addr del 10.206.0.2/24 dev vd
	ip netns exec "$d" sysctl -qw net.ipv4.conf.vd.arp_ignore=1
	run tap-user yes yes --tun ucmpt --tap --two-way --user nobody
	ip -n "$d" addr replace 10.206.0.2/24 dev vd
	ip netns exec "$d" sysctl -qw net.ipv4.conf.vd.arp_ignore=0
}
# Busy polling's look holds its CPU: the RX thread on CPU 0, the workers
# (by default every CPU but 0) elsewhere.
case_one_way_busy_poll() {
	if [ "$(nproc)" -lt 2 ]; then
		skip one-way-busy-poll "--busy-poll needs a CPU for the RX thread alone"
		return
	fi
	run one-way-busy-poll no no --tun ucmpt --busy-poll --rx-cpus 0
}
case_one_way_no_seccomp() { run one-way-no-seccomp no no --tun ucmpt --no-seccomp; }

# ---- refusals before anything is attached -----------------------------------------
# refused CASE STATUS REGEX ARGS...
refused() {
	local c=$1 want=$2 re=$3 rc l
	shift 3
	lib_run ip netns exec "$d" timeout 10 "${D_WRAP[@]}" "$daemon" --dev vd --duration 5 "$@" \
		> "$tmp/ref.out" 2> "$tmp/ref.err"
	rc=$?
	l=$(left_in "$d" vd ${KEEP_DEV:-})
	if [ $rc = "$want" ] && grep -Eq -- "$re" "$tmp/ref.err" && [ -z "$l" ]; then
		ok "$c" "exit $rc: $(head -1 "$tmp/ref.err" | cut -c1-120)"
	else
		bad "$c" "exit $rc (want $want), said: $(head -2 "$tmp/ref.err" | tr '\n' ' ') (want /$re/)${l:+; left: $l}"
	fi
}
case_two_way_user_refused() {
	refused two-way-user-refused 2 "needs CAP_NET_ADMIN in the resolver thread.*--peer-mac" \
		--tun ucmpt --two-way --user nobody
}
# kernel.io_uring_disabled 1: the start and --check say that a writer's
# io_uring could not be rebuilt once the privileges are dropped, and the
# start runs. The sysctl is the host's: put back at once, and at the exit.
case_uring_disabled() {
	local old rc why=
	if ! old=$(cat /proc/sys/kernel/io_uring_disabled 2> /dev/null); then
		skip uring-disabled "no kernel.io_uring_disabled here (Linux 6.6 has it)"
		return
	fi
	lib_on_exit "sysctl -qw kernel.io_uring_disabled=$old"
	sysctl -qw kernel.io_uring_disabled=1
	ip netns exec "$d" timeout 10 "$daemon" --check --dev vd --tun ucmpt > "$tmp/ud.out" 2>&1
	ip netns exec "$d" timeout 10 "$daemon" --dev vd --tun ucmpt --duration 0.3 \
		> "$tmp/uds.out" 2>&1
	rc=$?
	sysctl -qw kernel.io_uring_disabled="$old"
	grep -q "^warn  io_uring: kernel.io_uring_disabled is 1: .*set it to 0" "$tmp/ud.out" ||
		why="--check: $(grep -i uring "$tmp/ud.out" || echo 'no io_uring line');"
	[ $rc = 0 ] && grep -q "ucpumapd: kernel.io_uring_disabled is 1: .*set it to 0" "$tmp/uds.out" ||
		why="$why start: exit $rc, $(grep -i uring "$tmp/uds.out" || echo 'no io_uring line')"
	[ -z "$why" ] && ok uring-disabled "said by --check and the start, which ran" ||
		bad uring-disabled "$why"
}
case_unknown_user() {
	refused unknown-user 78 "--user nosuchuser0: no such user" --tun ucmpt --user nosuchuser0
}
# A user of its own whose group is root's (as RHEL's operator, useradd -g
# 0), removed at the cleanup.
case_root_group_user() {
	local u=ucmg0$$
	if ! command -v useradd > /dev/null || ! command -v userdel > /dev/null; then
		skip root-group-user "no useradd or userdel here to make a user of group 0"
		return
	fi
	if ! useradd -r -M -N -g 0 -s /usr/sbin/nologin "$u" 2> "$tmp/useradd.err"; then
		skip root-group-user "useradd refused: $(head -1 "$tmp/useradd.err")"
		return
	fi
	lib_on_exit "userdel $u 2> /dev/null"
	refused root-group-user 78 "--user $u has root's group \\(gid 0\\)" --tun ucmpt --user "$u"
}

case_json_symlink() {
	echo keep > "$tmp/target"
	ln -s "$tmp/target" "$tmp/link.json"
	refused json-symlink 78 "--stats-json .*link.json is a symbolic link: refused" \
		--tun ucmpt --stats-json "$tmp/link.json"
	[ "$(cat "$tmp/target")" = keep ] || bad json-symlink-target "the link's target was written to"
}

case_tun_owner() {
	local why
	ip -n "$d" tuntap add ucmpo mode tun multi_queue vnet_hdr user 1234
	KEEP_DEV=ucmpo	# the test's own, persistent: it stays
	refused tun-owner-refused 78 "ucmpo belongs to user 1234, not to root.*--tun-any-owner" --tun ucmpo
	if start tun-owner-flag --tun ucmpo --tun-any-owner --keep-tun; then
		stop
		why=$(closing_ok no)
		# The operator's, kept: its owner stays.
		[ "$(ip netns exec "$d" cat /sys/class/net/ucmpo/owner 2> /dev/null)" = 1234 ] ||
			why="$why its owner now $(ip netns exec "$d" cat /sys/class/net/ucmpo/owner 2> /dev/null), not 1234;"
		if [ -z "$why" ] && grep -q "belongs to user 1234" "$D_ERR"; then
			ok tun-owner-flag "attached with --tun-any-owner, said so, stopped cleanly"
		else
			bad tun-owner-flag "$why $(head -2 "$D_ERR" | tr '\n' ' ')"
		fi
	else
		bad tun-owner-flag "did not start with --tun-any-owner: $(tail -2 "$D_ERR" | tr '\n' ' ')"
	fi
	ip -n "$d" link del ucmpo 2> /dev/null
	KEEP_DEV=
}

# ---- files and signals ----------------------------------------------------------
lines() { [ -f "$1" ] && wc -l < "$1" || echo 0; }

# sighup CASE DIR USER-ARGS...: rename DIR/s.json, SIGHUP; $moved, $new: lines
# of each a while later.
sighup() {
	local c=$1 dir=$2 n0
	shift 2
	if ! start "$c" --tun ucmpt --interval 0.1 --stats-json "$dir/s.json" "$@"; then
		bad "$c" "did not start: $(tail -2 "$D_ERR" | tr '\n' ' ')"
		return 1
	fi
	wait_line "$dir/s.json" '"rx"' 30
	mv "$dir/s.json" "$dir/s.json.1"
	kill -HUP "$dpid"
	sleep 0.2
	n0=$(lines "$dir/s.json.1")
	kill -HUP "$dpid"	# a second one: said once at most
	sleep 0.6
	moved=$(( $(lines "$dir/s.json.1") - n0 ))
	new=$(lines "$dir/s.json")
	alive=yes
	kill -0 "$dpid" 2> /dev/null || alive=no
	stop
}
case_sighup_reopen() {
	local why
	if sighup sighup-reopen "$tmp"; then
		why=$(closing_ok no)
		if [ "$alive" = yes ] && [ "$new" -ge 3 ] && [ "$moved" = 0 ] && [ -z "$why" ]; then
			ok sighup-reopen "the new file got $new lines, the renamed one none after the SIGHUP"
		else
			bad sighup-reopen "alive $alive; new file $new lines, renamed file $moved more; $why"
		fi
	fi
}

case_sighup_user() {
	local said why
	# Root's 0700 directory: nobody may not create a file in it.
	mkdir -m 0700 "$tmp/private"
	if sighup sighup-user "$tmp/private" --user nobody; then
		said=$(grep -c "SIGHUP: cannot reopen .*as user nobody: Permission denied; the statistics go on into the file already open (rotate it with copytruncate instead)" "$D_ERR")
		why=$(closing_ok no)
		if [ "$alive" = yes ] && [ "$said" = 2 ] && [ "$moved" -ge 3 ] && [ "$new" = 0 ] && [ -z "$why" ]; then
			ok sighup-user "said at each of two SIGHUPs; the open file got $moved more lines"
		else
			bad sighup-user "alive $alive; said $said times; open file $moved more lines, new file $new; $why"
		fi
	fi
}

# stdout a pipe whose reader leaves after the banner.
case_sigpipe() {
	local hpid
	mkfifo "$tmp/pipe"
	head -n 2 "$tmp/pipe" > "$tmp/first" &
	hpid=$!
	lib_pid $hpid
	ip netns exec "$d" "$daemon" --dev vd --tun ucmpt --interval 0.05 --duration 60 \
		> "$tmp/pipe" 2> "$tmp/pipe.err" &
	dpid=$!
	lib_pid $dpid
	lib_wait $hpid
	sleep 1	# twenty statistics blocks into a closed pipe
	alive=yes
	kill -0 "$dpid" 2> /dev/null || alive=no
	stop
	if grep -q '^ucpumapd [0-9.]* (libucpumap ' "$tmp/first" && grep -q '^ucpumapd: ' "$tmp/first" && [ $alive = yes ] && [ "$D_RC" = 0 ] &&
	   [ -z "$(left_in "$d" vd)" ]; then
		ok sigpipe "ran on after its reader left, SIGTERM: exit 0"
	else
		bad sigpipe "banner read: $(head -c 80 "$tmp/first"); alive $alive; exit $D_RC; stderr: $(tail -2 "$tmp/pipe.err" | tr '\n' ' ')"
	fi
}

# ---- what the filter refused -----------------------------------------------------
# Every refusal is in the kernel's log (SECCOMP_FILTER_FLAG_LOG): none may
# come from our runs (every thread is made before the filter goes on: not
# even clone3's ENOSYS).
case_seccomp_refused_nothing() {
	local refused
	if [ -z "$dmesg0" ]; then
		skip seccomp-refused-nothing "cannot write and read back the kernel's log (/dev/kmsg, dmesg)"
	elif [ -n "$canary_why" ]; then
		skip seccomp-refused-nothing "$canary_why"
	elif ! since_mark > "$tmp/kmsg"; then
		skip seccomp-refused-nothing "the kernel's log wrapped past this run's start (its mark gone): its refusals cannot be told"
	else
		refused=$(grep 'type=1326' "$tmp/kmsg" | grep "exe=\"$(readlink -f "$daemon")\"" |
			sed -n 's/.*\(syscall=[0-9]*\).*/\1/p' | sort | uniq -c | tr '\n' ' ')
		if [ -z "$refused" ]; then
			ok seccomp-refused-nothing
		else
			bad seccomp-refused-nothing "the filter refused calls the daemon made (the allow-list misses them): $refused"
		fi
	fi
}

# ---- the end -----------------------------------------------------------------------
case_nothing_left() {
	local l
	l=$(left_in "$d" vd)
	lib_cleanup_check
	if [ -z "$l" ] && [ -z "$lib_left" ]; then
		ok nothing-left
	else
		bad nothing-left "${l:-}${lib_left:+ after the cleanup: $lib_left}"
	fi
}

lib_run_cases "$@"
