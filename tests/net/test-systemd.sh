#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd as a systemd service (apps/ucpumapd/ucpumapd@.service):
#
#   unit-verify     systemd-analyze verify finds nothing wrong with the unit
#                   (its ExecStart pointed at the built daemon, its man page
#                   on MANPATH)
#   unit-install    enabled (systemctl --root, offline) for veth-a, escaped:
#                   wanted by its interface's device (at boot and when the
#                   interface comes back), not by multi-user.target (a
#                   missing interface would hold the boot)
#   sample-conf     the shipped ucpumapd.conf.sample: every line a comment
#                   or blank; each example line, uncommented alone into a
#                   file of options, and all of them in one, is taken by
#                   the daemon's --config (exit 78 for the interface that
#                   is not there, not 2)
#   unit-defaults   the unit's ExecStart without /etc/ucpumap/vd.conf (its
#                   --config optional): forwards on vd to tun ucm-vd, the
#                   version line before the start line, a line that says
#                   no vd.conf was read (with one there: its name);
#                   SIGTERM, exit 0
#   restart-prevent RestartPreventExitStatus= lists what a bad option (2,
#                   on the command line or a line of vd.conf, which names
#                   the file and line) and a configuration vd cannot take
#                   (78: a queue it lacks, from vd.conf) exit with, and not
#                   what may pass (1: vd served by another instance), each
#                   seen; the unit's tun served by another: 78
#   unit-security   systemd-analyze security --offline=yes: the unit's
#                   exposure at most 3.0
#   unit-sandbox    the unit's sandbox as this host can make it without
#                   systemd: a mount namespace with /proc as ProtectProc=
#                   invisible and ProcSubset=pid make it, /sys read-only
#                   (ProtectKernelTunables=), UMask=, the capability
#                   bounding set; under strace -f. Two-way, the route into
#                   the tun: pings each way, SIGUSR1, SIGHUP, a second
#                   instance on the tun, and one on vd, refused naming the
#                   first's pid (its lock; /proc as the sandbox shows it),
#                   SIGTERM exit 0 and the audit; --stats-json's file
#                   0600; every system call in the unit's
#                   SystemCallFilter=, no device but DeviceAllow='s, nothing
#                   written under /sys or /proc but its threads' names.
#                   Not made here: DevicePolicy= (a cgroup's), IPAddressDeny=,
#                   PrivateIPC=, PrivateMounts=
#   notify-ready    run as Type=notify runs it (NOTIFY_SOCKET, WATCHDOG_USEC,
#                   the unit's capability bounding set):
#                   READY=1 comes once forwarding starts, after the start
#                   line, with a STATUS naming the interface
#   notify-watchdog WATCHDOG=1 about twice per watchdog period while it runs
#   notify-stopping STOPPING=1 when SIGTERM stops it, exit 0 and the audit
#
# No systemd runs the unit here: the cases take its lines and run the
# daemon as it would. The notifications are read by a datagram socket of
# our own, as systemd's would. The notify cases share one run of the
# daemon, started at the first of them. Root for the daemon (namespaces,
# XDP, tun). One PASS/FAIL/SKIP line per case; the script exits 0.
set -u
BUILD=${BUILD:-build}
name=test-systemd
cases="unit-verify unit-install sample-conf unit-defaults restart-prevent unit-security unit-sandbox notify-ready notify-watchdog
notify-stopping"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
daemon=$(cd "$BUILD" 2>/dev/null && pwd)/ucpumapd
unit=$root/apps/ucpumapd/ucpumapd@.service
sample=$root/apps/ucpumapd/ucpumapd.conf.sample
gen=ucmsg$$
dut=ucmsd$$
. "$here/../lib.sh"

# ---- the unit ---------------------------------------------------------------
case_unit_install() {
	local r=$tmp/root i w why=
	if ! command -v systemctl > /dev/null || ! command -v systemd-escape > /dev/null; then
		skip unit-install "no systemctl here"
		return
	fi
	mkdir -p "$r/etc/systemd/system" "$r/usr/lib/systemd/system"
	cp "$unit" "$r/usr/lib/systemd/system/"
	i="ucpumapd@$(systemd-escape veth-a).service"
	systemctl --root="$r" enable "$i" > "$tmp/enable.log" 2>&1 ||
		why="systemctl enable failed: $(tail -2 "$tmp/enable.log");"
	[ -L "$r/etc/systemd/system/sys-subsystem-net-devices-veth\x2da.device.wants/$i" ] ||
		why="$why not wanted by its device;"
	[ -e "$r/etc/systemd/system/multi-user.target.wants/$i" ] &&
		why="$why wanted by multi-user.target;"
	[ -z "$why" ] && ok unit-install "$i wanted by its device only" ||
		bad unit-install "$why $(ls -R "$r/etc/systemd/system" | tr '\n' ' ')"
}

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

# conf_status FILE: the daemon's exit status with --config FILE (into
# rc), on an interface that is not there: 78 when the file is taken.
conf_status() {
	timeout 20 "$daemon" --dev nosuchif0 --config "$1" --duration 1 > /dev/null 2> "$tmp/one.err"
	rc=$?
	# A CPU list of a bigger machine than this one is the sample's right.
	[ $rc = 2 ] && grep -q "is not online" "$tmp/one.err" && rc=78
}

case_sample_conf() {
	local n=0 why= rc line
	if [ ! -f "$sample" ] || [ ! -x "$daemon" ]; then
		bad sample-conf "needs $sample and $daemon (make)"
		return
	fi
	grep -nvE '^(#|$)' "$sample" > "$tmp/active" &&
		why="lines that are not comments: $(head -2 "$tmp/active" | tr '\n' ' ');"
	: > "$tmp/all.conf"
	# The examples: '#' and the option's name, no blank between.
	while IFS= read -r line; do
		n=$((n + 1))
		echo "${line#\#}" | tee -a "$tmp/all.conf" > "$tmp/one.conf"
		conf_status "$tmp/one.conf"
		[ $rc = 78 ] || why="$why '${line#\#}': exit $rc, $(head -1 "$tmp/one.err");"
	done < <(grep -E '^#[a-z-]+( |$)' "$sample")
	conf_status "$tmp/all.conf"
	[ $rc = 78 ] || why="$why all $n at once: exit $rc, $(head -1 "$tmp/one.err");"
	if [ -z "$why" ] && [ $n -ge 4 ]; then
		ok sample-conf "$n example lines, each and all at once taken by --config"
	else
		bad sample-conf "${why:-only $n example lines}"
	fi
}

# ---- the unit's command line ------------------------------------------------------
topology() {
	skip_unless_root "namespaces, XDP, tun"
	if [ ! -x "$daemon" ] || [ -z "$PY" ]; then
		skip daemon "needs $daemon (make) and python3"
		exit 0
	fi
	if ! veth_pair "$gen" "$dut" vg vd 10.205.0.1/24 10.205.0.2/24 2> "$tmp/setup.err"; then
		bad setup "cannot build the namespaces: $(head -3 "$tmp/setup.err" | tr '\n' ' ')"
		exit 0
	fi
}

# unit_cmd WORD...: the unit's ExecStart for ucpumapd@vd into cmd[], the
# built daemon for /usr/sbin/ucpumapd, $tmp/etc/ for /etc/ucpumap/ (vd.conf
# there: the unit's file of options), the WORDs after it.
unit_cmd() {
	local w words
	read -ra words <<< "$(sed -n 's/^ExecStart=//p' "$unit")"
	cmd=()
	for w in "${words[@]}"; do
		case $w in
		/usr/sbin/ucpumapd) cmd+=("$daemon") ;;
		*) w=${w//%I/vd}; cmd+=("${w//\/etc\/ucpumap\//$tmp/etc/}") ;;
		esac
	done
	cmd+=("$@")
}

# unit_start OUT WORD...: the unit's command in the DUT, in the background
# ($upid); 0 once its start line came.
unit_start() {
	local out=$1
	shift
	unit_cmd "$@"
	ip netns exec "$dut" "${cmd[@]}" > "$out" 2> "$out.err" &
	upid=$!
	lib_pid $upid
	wait_line "$out" '^ucpumapd: ' 50 "$upid"
}

case_unit_defaults() {
	local v
	lib_once topology
	if ! unit_start "$tmp/u.out"; then
		bad unit-defaults "${cmd[*]}: did not start: $(tail -2 "$tmp/u.out.err" | tr '\n' ' ')"
		return
	fi
	stop_pid $upid
	v=$(head -1 "$tmp/u.out" | sed -n 's/^\(ucpumapd [0-9.]* (libucpumap [0-9.]*)\), pid [0-9]*$/\1/p')
	# With vd.conf there: its name (the line comes after the sandbox).
	mkdir -p "$tmp/etc"
	echo 'interval 1' > "$tmp/etc/vd.conf"
	unit_start "$tmp/u2.out" && sleep 0.2
	stop_pid $upid
	rm -f "$tmp/etc/vd.conf"
	if grep -q '^ucpumapd: vd queues 0 .* -> tun ucm-vd; ' "$tmp/u.out" &&
	   grep -q "^ucpumapd: options: no $tmp/etc/vd.conf (optional): the command line's alone$" "$tmp/u.out" &&
	   grep -q "^ucpumapd: options: $tmp/etc/vd.conf, then the command line's$" "$tmp/u2.out" &&
	   [ -n "$v" ] && [ "$v" = "$("$daemon" --version)" ] &&
	   grep -q '^audit: every frame came home$' "$tmp/u.out"; then
		ok unit-defaults "$(head -1 "$tmp/u.out"); $(sed -n 2p "$tmp/u.out" | cut -c1-60)..."
	else
		bad unit-defaults "${cmd[*]}: $(head -3 "$tmp/u.out" | tr '\n' ' '); $(tail -1 "$tmp/u.out"); with vd.conf: $(grep '^ucpumapd: options' "$tmp/u2.out")"
	fi
}

# status_of WORD...: the unit's command's exit status, the WORDs after it (a
# backstop --duration before them).
status_of() {
	unit_cmd --duration 5 "$@"
	lib_run ip netns exec "$dut" timeout 10 "${cmd[@]}" > "$tmp/st.out" 2> "$tmp/st.err"
}

case_restart_prevent() {
	local prevent why= bad_opt conf busy= tun_busy= line
	lib_once topology
	prevent=" $(sed -n 's/^RestartPreventExitStatus=//p' "$unit") "
	status_of --no-such-option
	bad_opt=$?
	mkdir -p "$tmp/etc"
	printf '# vd lacks it\n\nqueues 3\n' > "$tmp/etc/vd.conf"
	status_of
	conf=$?
	grep -q "vd has RX queues 0-0, not queue 3" "$tmp/st.err" ||
		why="$why queues 3 in vd.conf said: $(head -1 "$tmp/st.err");"
	printf 'interval 1\nqueues three\n' > "$tmp/etc/vd.conf"
	status_of
	line=$?
	grep -q "^$tmp/etc/vd.conf:2: --queues: 'three' is not" "$tmp/st.err" ||
		why="$why a bad line said: $(head -1 "$tmp/st.err");"
	rm -f "$tmp/etc/vd.conf"
	if unit_start "$tmp/first.out"; then
		status_of --tun ucm-vd2
		busy=$?
		grep -q "vd is served already" "$tmp/st.err" ||
			why="$why a second instance said: $(head -1 "$tmp/st.err");"
		status_of
		tun_busy=$?
		grep -q "tun ucm-vd is served already, held by pid $upid" "$tmp/st.err" ||
			why="$why a second instance on the tun said: $(head -1 "$tmp/st.err");"
		stop_pid $upid
	else
		why="$why the first instance did not start: $(tail -1 "$tmp/first.out.err");"
	fi
	[ "$bad_opt" = 2 ] && [[ "$prevent" == *" 2 "* ]] || why="$why a bad option: exit $bad_opt;"
	[ "$line" = 2 ] || why="$why a bad line in vd.conf: exit $line;"
	[ "$conf" = 78 ] && [[ "$prevent" == *" 78 "* ]] || why="$why a queue vd lacks: exit $conf;"
	[ "$busy" = 1 ] && [[ "$prevent" != *" 1 "* ]] || why="$why vd served: exit ${busy:-none};"
	[ "$tun_busy" = 78 ] || why="$why ucm-vd served: exit ${tun_busy:-none};"
	if [ -z "$why" ]; then
		ok restart-prevent "RestartPreventExitStatus=$(echo $prevent): bad option $bad_opt (a bad line $line), no such queue $conf; vd served already $busy (restarted), its tun $tun_busy"
	else
		bad restart-prevent "RestartPreventExitStatus=$(echo $prevent):$why"
	fi
}

# ---- the sandbox --------------------------------------------------------------
case_unit_security() {
	local e
	if ! command -v systemd-analyze > /dev/null; then
		skip unit-security "no systemd-analyze (Debian's systemd package)"
		return
	fi
	cp "$unit" "$tmp/ucpumapd@vd.service"
	systemd-analyze security --offline=yes "$tmp/ucpumapd@vd.service" > "$tmp/sec.log" 2>&1
	e=$(sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p' "$tmp/sec.log")
	if [ -n "$e" ] && awk -v e="$e" 'BEGIN { exit !(e <= 3.0) }'; then
		ok unit-security "exposure $e"
	else
		bad unit-security "exposure ${e:-unknown} (at most 3.0): $(grep '✗' "$tmp/sec.log" | head -5 | tr -s ' ' | tr '\n' ';')"
	fi
}

# The system calls SystemCallFilter= allows, one a line (groups expanded).
unit_syscalls() {
	local w
	expand() {
		systemd-analyze syscall-filter "$1" | awk '!/^ *#/ && NF && $1 != "'"$1"'" { print $1 }' |
			while read -r w; do case $w in @*) expand "$w" ;; *) echo "$w" ;; esac; done
	}
	for w in $(sed -n 's/^SystemCallFilter=//p' "$unit"); do
		case $w in @*) expand "$w" ;; *) echo "$w" ;; esac
	done | sort -u
}

# in_sandbox CMD...: CMD in the DUT as the unit's sandbox is made here,
# within the unit's capability bounding set. sandboxed CMD...: so, under
# strace ($tmp/sb.trace).
in_sandbox() {
	local caps
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z ' 'a-z\n' | sed -n 's/^cap_/+/p' | paste -sd, -)
	ip netns exec "$dut" unshare -m --propagation private bash -c '
		mount -t proc -o hidepid=invisible,subset=pid proc /proc &&
		mount --bind /sys /sys && mount -o remount,bind,ro /sys &&
		umask 0077 && exec "$@"' sandbox \
		setpriv --bounding-set "-all,$caps" -- "$@"
}
sandboxed() {
	in_sandbox strace -f -qq -o "$tmp/sb.trace" "$@"
}

case_unit_sandbox() {
	local spid dpid2 why= r1 r2 rc calls
	lib_once topology
	if [ -n "${SANITIZE:-}" ]; then
		skip unit-sandbox "a sanitizer build: its runtime makes system calls the unit's filter does not list, and LeakSanitizer does not run under strace"
		return
	fi
	for t in strace unshare setpriv systemd-analyze; do
		command -v $t > /dev/null || { skip unit-sandbox "no $t"; return; }
	done
	unit_syscalls > "$tmp/allowed"
	sandboxed "$daemon" --dev vd --tun ucmsb --two-way --keep-tun --interval 0 --duration 30 \
		--stats-json "$tmp/sb.json" > "$tmp/sb.out" 2> "$tmp/sb.err" &
	spid=$!
	lib_pid $spid
	if ! wait_line "$tmp/sb.out" '^ucpumapd: vd queues' 100 "$spid"; then
		bad unit-sandbox "did not start: $(tail -3 "$tmp/sb.err" | tr '\n' ' ')"
		return
	fi
	# The daemon: strace's first tracee (setpriv execs it).
	dpid2=$(awk 'NR == 1 { print $1; exit }' "$tmp/sb.trace")
	ip -n "$dut" route add 10.205.0.1/32 dev ucmsb
	ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.ucmsb.rp_filter=0
	r1=$(ip netns exec "$dut" "$PY" "$progs/ucpumapd_traffic.py" ping --dst 10.205.0.1 --count 5 --timeout 3)
	r2=$(ip netns exec "$gen" "$PY" "$progs/ucpumapd_traffic.py" ping --dst 10.205.0.2 --count 5 --timeout 3)
	[[ "$r1" == *'"replies": '[45]* ]] || why="$why pings out: $r1;"
	[[ "$r2" == *'"replies": 5'* ]] || why="$why pings in: $r2;"
	kill -USR1 "$dpid2"
	kill -HUP "$dpid2"
	# Others in the sandbox: the holder found, by its lock and through /proc.
	in_sandbox "$daemon" --dev lo --tun ucmsb --duration 2 > /dev/null 2> "$tmp/sb2.err"
	grep -q "tun ucmsb is served already, held by pid $dpid2 (ucpumapd)" "$tmp/sb2.err" ||
		why="$why a second instance on the tun said: $(head -1 "$tmp/sb2.err");"
	in_sandbox "$daemon" --dev vd --tun ucmsb2 --duration 2 > /dev/null 2> "$tmp/sb3.err"
	grep -Eq "vd is served already: .*, held by pid $dpid2 \(ucpumapd\)" "$tmp/sb3.err" ||
		why="$why a second instance on vd said: $(head -1 "$tmp/sb3.err");"
	kill -TERM "$dpid2"
	for _ in $(seq 50); do kill -0 "$spid" 2> /dev/null || break; sleep 0.1; done
	kill -0 "$spid" 2> /dev/null && kill -9 "$dpid2"	# its status then says so
	lib_wait "$spid"
	rc=$?
	[ "$rc" = 0 ] && grep -q '^audit: every frame came home$' "$tmp/sb.out" ||
		why="$why exit $rc, $(tail -1 "$tmp/sb.out");"
	[ "$(stat -c %a "$tmp/sb.json" 2> /dev/null)" = 600 ] ||
		why="$why --stats-json's file is $(stat -c %a "$tmp/sb.json" 2>&1), not 600;"
	calls=$(sed -E 's/^[0-9]+ +//; s/^<\.\.\. ([a-z_0-9]+) resumed>.*/\1(/' "$tmp/sb.trace" |
		sed -n 's/^\([a-z_0-9]*\)(.*/\1/p' | sort -u | grep -vxF -f "$tmp/allowed" | grep -vx 'execve' | paste -sd' ' -)
	[ -z "$calls" ] || why="$why calls outside SystemCallFilter=: $calls;"
	calls=$(grep -o 'open[a-z]*([^"]*"/dev/[^"]*"' "$tmp/sb.trace" | sed 's/.*"\(.*\)"/\1/' | sort -u |
		grep -vx '/dev/net/tun' | paste -sd' ' -)
	[ -z "$calls" ] || why="$why devices opened: $calls;"
	calls=$(grep -E 'open[a-z]*\([^"]*"/(sys|proc)/[^"]*", O_(WRONLY|RDWR)' "$tmp/sb.trace" |
		sed 's/.*"\(.*\)".*/\1/' | grep -vE '^/proc/self/task/[0-9]+/comm$' | sort -u | paste -sd' ' -)
	[ -z "$calls" ] || why="$why written under /sys or /proc: $calls;"
	ip -n "$dut" link del ucmsb 2> /dev/null
	if [ -z "$why" ]; then
		ok unit-sandbox "two-way in the sandbox, $(grep -vxF -f /dev/null "$tmp/allowed" | wc -l) calls allowed, all it made among them"
	else
		bad unit-sandbox "$why stderr: $(grep -v '^#' "$tmp/sb.err" | tail -2 | tr '\n' ' ')"
	fi
}

# ---- the protocol -------------------------------------------------------------
# notify_run: the daemon as systemd runs it, a listener on its notify
# socket ($tmp/notes); back once READY=1 came (or 2 s).
notify_run() {
	local caps lpid
	lib_once topology

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
	lib_term "$dpid"
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
