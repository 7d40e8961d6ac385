# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The test scripts' harness, sourced by tests/net/*.sh and tests/apps/*.sh:
# result lines, the root and plain-build checks, namespaces and veth pairs,
# waits, the processes a script starts, and a cleanup that runs on every
# exit (also on HUP, INT, TERM, which print a FAIL line first). The daemon
# tests' own helpers are in tests/net/daemon.sh.
#
# A script sets `name` (test-xsk) and `cases` (its case names, in order),
# defines a function per case (case_NAME, NAME's dashes as underscores)
# and may define `setup` (the checks and the set-up every case needs); it
# sources this file and ends with `lib_run_cases "$@"`.
#
#   lib_run_cases [CASE...]  setup, then the cases asked for (none: all),
#                      in the order of $cases; a CASE not in $cases is a
#                      FAIL line naming those there are, and nothing runs.
#                      Exits 0: the result lines are the verdict.
#   lib_need CASE...   run each CASE now unless it ran already (a case
#                      that needs what another leaves calls this first);
#                      one that printed no result line is a FAIL
#   lib_once FN        run FN (a set-up step several cases share) unless
#                      it ran already; its status, that of its one run
#
# What a script starts is registered (lib_pid PID), and it may add its own
# steps to the cleanup with lib_on_exit 'command'.
#
#   ok CASE [DETAIL]   bad CASE WHY   skip CASE WHY   skip_unless_root WHY
#   plain_build_only WHY   the whole script skips in a sanitizer build
#   netns NS...        namespaces as they come (lo down), removed on exit;
#                      the first call removes those a killed run left
#   veth_pair NS_A NS_B IF_A IF_B ADDR_A/LEN ADDR_B/LEN [LINK-OPTION...]
#                      (tx checksums off on IF_A; LINK-OPTIONs, such as
#                      numrxqueues 2, go to both ends)
#   mac_of NS IF       kernel_at_least MAJOR MINOR
#   wait_file FILE TENTHS   jget JSON-FILE PYTHON-EXPR
#   last_count FILE NAME    N of the last "NAME N" in FILE (a daemon's
#                      counter on its last statistics line)
#   back_sum FILE NAME  the sum over the workers of NAME N on the way
#                      back's lines (--extended's "back:", one a worker) of
#                      the daemon's closing block (from "total"); empty when
#                      there is none
#   closing_count FILE WHAT   N of a daemon's closing lines in its output
#                      FILE: WHAT received or delivered (the conservation
#                      line), read or sent (the way back's); empty when
#                      that line is not there
#   usr1_json PID FILE PYTHON-EXPR   SIGUSR1 to a daemon PID that writes
#                      its statistics to FILE (--stats-json), then jget
#                      FILE PYTHON-EXPR over the line that adds; empty (and
#                      status 1) when none came within 3 s
#   wait_line FILE REGEX TENTHS [PID]
#                      a line matching REGEX in FILE (a daemon's start
#                      line); fails at once when PID has exited
#   stop_pid PID [TENTHS]   SIGTERM, SIGKILL after TENTHS (30), reaped
#   lib_term PID [TENTHS]   the same, TENTHS 50, saying why it ended:
#                      its exit status (137: it hung)
#   lib_wait PID       wait for a registered process that ends by itself
#                      (its status); each forgets the pid
#   lib_run CMD...     CMD in the foreground as far as the script sees
#                      (its status; stdin and redirections as given), but
#                      registered: a signal interrupts the wait at once
#                      and the cleanup stops CMD by its pid (a foreground
#                      `timeout` would be out of reach in its own group)
#   left_in NS [DEV...]    what is left in NS: XDP programs on any device,
#                      devices other than lo and DEVs; empty when none
#   lib_cleanup_check  the cleanup now ($tmp goes too), in this shell
#                      (not in $(...)); $lib_left: what outlived it (our
#                      namespaces, registered processes), empty when
#                      nothing did, and then the status is 0
#   $tmp: a temporary directory, removed on exit (copied to $UCM_KEEP
#   first when that is set)
#   $PY: the Python interpreter itself, empty without python3 (not a
#   wrapper such as pyenv's shim: $! of a background run must be its pid,
#   and every start through the shim costs a fifth of a second)
#   $progs: tests/progs, the programs the scripts run, by absolute path
#   UCPUMAPD_TIMESTAMPS=no, exported: ucpumapd's lines as written, not
#   with their time in front (its default off journald), for the greps
#   anchored at a line's first word; a case about the times unsets it
#
# The cleanup, in order: the lib_on_exit steps; every registered process
# by its pid (stop_pid); whatever still runs in our namespaces, by pid
# (SIGKILL); the namespaces, with their devices and XDP programs. HUP, INT
# and TERM are ignored while it runs. It runs once: a second call does
# nothing.

tmp=$(mktemp -d)
progs=$(cd "$(dirname "${BASH_SOURCE[0]}")/progs" && pwd)
PY=${PY:-$(python3 -c 'import sys; print(sys.executable)' 2> /dev/null)}
# The tests' Python checks use assert: never optimized away.
unset PYTHONOPTIMIZE
export UCPUMAPD_TIMESTAMPS=no
lib_pids=()
declare -A lib_start	# a registered pid's start time (its /proc stat's 22nd field)
lib_ns=()
lib_exit=()

# One line a result, whatever the message holds: the runner counts lines
# (a message quoting another tool's FAIL lines would count them too).
ok() { local m=${2:-}; m=${m//$'\n'/ | }; echo "PASS: $name/$1${m:+: $m}"; }
bad() { local m=${2:-}; echo "FAIL: $name/$1: ${m//$'\n'/ | }"; }
skip() { local m=${2:-}; echo "SKIP: $name/$1: ${m//$'\n'/ | }"; }

# lib_started PID: its start time, from /proc (nothing: no such process).
lib_started() {
	local s
	{ s=$(< "/proc/$1/stat"); } 2> /dev/null || return 1
	s=${s##*) }	# past the name, which may hold spaces
	set -- $s
	echo "${20}"
}

# lib_pid PID: ours, to stop at the exit. Its start time with it: a pid
# the kernel gave another process since is not signalled (pid_max wraps
# in a long run beside others' tests).
lib_pid() {
	lib_pids+=("$1")
	lib_start[$1]=$(lib_started "$1") || lib_start[$1]=-
}
lib_on_exit() { lib_exit+=("$1"); }

lib_forget() {
	local p keep=()
	for p in "${lib_pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	lib_pids=("${keep[@]}")
	unset "lib_start[$1]"
}

# lib_ours PID: still the process registered as PID (a pid never
# registered is taken as the caller's).
lib_ours() {
	local now
	[ -z "${lib_start[$1]+x}" ] && return 0
	now=$(lib_started "$1") || return 1
	[ "$now" = "${lib_start[$1]}" ]
}

stop_pid() { lib_term "$1" "${2:-30}" 2> /dev/null; }

lib_wait() {
	local rc
	wait "$1"
	rc=$?
	lib_forget "$1"
	return $rc
}

# lib_term PID [TENTHS]: SIGTERM, TENTHS tenths of a second (50) to go,
# then SIGKILL; its exit status (137: it hung).
lib_term() {
	if ! lib_ours "$1"; then	# gone, its pid maybe another's now
		lib_wait "$1" 2> /dev/null
		return
	fi
	kill -TERM "$1" 2> /dev/null
	for _ in $(seq "${2:-50}"); do lib_ours "$1" || break; sleep 0.1; done
	lib_ours "$1" && kill -9 "$1"
	lib_wait "$1"
}

lib_run() {
	local p
	"$@" <&0 &
	p=$!
	lib_pid $p
	lib_wait $p
}

lib_cleanup() {
	local p c pids
	trap '' HUP INT TERM	# a second Ctrl-C must not cut it short
	for c in "${lib_exit[@]}"; do eval "$c"; done
	lib_exit=()
	# All told at once, then one wait of 3 s for all: the runner's time
	# limit leaves the cleanup 5 s before its SIGKILL.
	for p in "${lib_pids[@]}"; do lib_ours "$p" && kill -TERM "$p" 2> /dev/null; done
	for _ in $(seq 30); do
		c=
		for p in "${lib_pids[@]}"; do lib_ours "$p" && c=1 && break; done
		[ -z "$c" ] && break
		sleep 0.1
	done
	for p in "${lib_pids[@]}"; do
		lib_ours "$p" && kill -9 "$p" 2> /dev/null
		lib_wait "$p" 2> /dev/null
	done
	lib_pids=()
	for c in "${lib_ns[@]}"; do
		# Only processes inside our namespaces: ours.
		pids=$(ip netns pids "$c" 2> /dev/null)
		[ -n "$pids" ] && kill -9 $pids 2> /dev/null
		# A kept tun's lock file (and one a --user daemon may not
		# remove) names the namespace: it goes with it.
		p=$(stat -L -c %i "/run/netns/$c" 2> /dev/null) &&
			rm -f /run/ucpumap/tun-*@"$p".lock
		ip netns del "$c" 2> /dev/null
	done
	lib_ns=()
	if [ -d "$tmp" ]; then
		[ -n "${UCM_KEEP:-}" ] && mkdir -p "$UCM_KEEP" && cp -r "$tmp/." "$UCM_KEEP/"
		rm -rf "$tmp"
	fi
	lib_traps
}
# The script's own stdout, for a signal that comes while a function runs
# with its output redirected (lib_run CMD > FILE).
exec {lib_out}>&1
lib_traps() {
	trap lib_cleanup EXIT
	trap 'echo "FAIL: $name: interrupted" >&$lib_out; exit 1' HUP INT TERM
}
lib_traps

lib_cleanup_check() {
	local ns=("${lib_ns[@]}") pids=("${lib_pids[@]}") p q
	lib_left=
	# What the product left, before the cleanup takes it away: an XDP
	# program of ours (ucm_*: a test's own may stay), a tun, a ucpumapd
	# still running in our namespaces.
	for p in "${ns[@]}"; do
		lib_left="$lib_left$(ip -n "$p" -o link show 2> /dev/null | awk -v ns="$p" '
			{ d = $2; sub(/:$/, "", d); sub(/@.*/, "", d) }
			/prog\/xdp id [0-9]+ name ucm_/ { printf " an XDP program of ours on %s in %s;", d, ns }')"
		lib_left="$lib_left$(ip -n "$p" -o link show type tun 2> /dev/null | awk -v ns="$p" '
			{ d = $2; sub(/:$/, "", d); printf " tun %s left in %s;", d, ns }')"
		for q in $(ip netns pids "$p" 2> /dev/null); do
			[ "$(cat "/proc/$q/comm" 2> /dev/null)" = ucpumapd ] &&
				lib_left="$lib_left ucpumapd $q still runs in $p;"
		done
	done
	lib_cleanup
	for p in "${ns[@]}"; do
		ip netns list 2> /dev/null | grep -qE "^$p( |$)" && lib_left="$lib_left namespace $p left;"
	done
	for p in "${pids[@]}"; do
		kill -0 "$p" 2> /dev/null && lib_left="$lib_left process $p still runs;"
	done
	lib_left=${lib_left# }
	[ -z "$lib_left" ]
}

plain_build_only() {
	if [ -n "${SANITIZE:-}" ]; then
		echo "SKIP: $name: runs in the plain build only ($1)"
		exit 0
	fi
}

# first_pass_only CASE...: under a sanitizer (CI's second pass, against
# its 30 minutes) each CASE only says SKIP: the plain build's pass runs it.
# Call it before lib_run_cases, after the cases are defined.
first_pass_only() {
	local c
	[ -n "${SANITIZE:-}" ] || return 0
	for c in "$@"; do
		eval "case_${c//-/_}() { echo \"SKIP: \$name/$c: SANITIZE=$SANITIZE: the plain build's pass runs it (CI's time)\"; }"
	done
}

skip_unless_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: $name: needs root ($1)"
		exit 0
	fi
}

# Namespaces a killed run left behind: a SIGKILL (a session or CI job
# ended under it) reaches no trap. Ours are named ucm...PID after the
# script that made them; one whose PID is gone and that holds no process
# is an orphan, removed. A PID in use again keeps its namespace.
lib_reap_orphans() {
	local ns pid
	for ns in $(ip netns list 2> /dev/null | cut -d' ' -f1); do
		case $ns in ucm*[0-9]) ;; *) continue ;; esac
		pid=${ns##*[!0-9]}
		kill -0 "$pid" 2> /dev/null && continue
		[ -n "$(ip netns pids "$ns" 2> /dev/null)" ] && continue
		ip netns del "$ns" 2> /dev/null && echo "# $name: removed $ns, left by a run that was killed"
	done
	lib_reaped=1
}

netns() {
	local ns
	[ -n "${lib_reaped:-}" ] || lib_reap_orphans
	for ns in "$@"; do
		lib_ns+=("$ns")
		ip netns add "$ns" || return 1
	done
}

# Two namespaces joined by a veth pair, both ends up with their address and
# lo up. Full checksums leave IF_A, as a NIC's wire carries them.
veth_pair() {
	local a=$1 b=$2 ia=$3 ib=$4 aa=$5 ab=$6
	shift 6
	netns "$a" "$b" &&
		ip -n "$a" link add "$ia" "$@" type veth peer name "$ib" "$@" netns "$b" &&
		ip -n "$a" addr add "$aa" dev "$ia" && ip -n "$b" addr add "$ab" dev "$ib" &&
		ip -n "$a" link set "$ia" up && ip -n "$b" link set "$ib" up &&
		ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
		ip netns exec "$a" ethtool -K "$ia" tx off > /dev/null
}

# kernel_at_least MAJOR MINOR: the running kernel is that release or later.
kernel_at_least() {
	local v maj min
	v=$(uname -r)
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%[!0-9]*}
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}

# kernel_before MAJOR MINOR: the running kernel is older than MAJOR.MINOR.
kernel_before() {
	local maj min
	IFS=. read -r maj min _ <<< "$(uname -r)"
	min=${min%%[!0-9]*}
	[ "$maj" -lt "$1" ] || { [ "$maj" -eq "$1" ] && [ "${min:-0}" -lt "$2" ]; }
}

mac_of() {
	ip -n "$1" -o link show "$2" | sed 's/.*link\/ether \([^ ]*\).*/\1/'
}

last_count() {
	grep -o "$2 [0-9]*" "$1" | tail -1 | cut -d' ' -f2
}

back_sum() {
	awk -v k="$2" '/^total / { s = 0; n = 0; t = 1 }
		t && $1 == "back:" { for (i = 2; i < NF; i++) if ($i == k) { s += $(i + 1); n++ } }
		END { if (n) print s }' "$1"
}

closing_count() {
	case $2 in
	received) sed -n 's/^conservation: received \([0-9]*\) = .*/\1/p' "$1" ;;
	delivered) sed -n 's/^conservation: received [0-9]* = delivered \([0-9]*\) .*/\1/p' "$1" ;;
	read) sed -n 's/^conservation, way back: read \([0-9]*\) = .*/\1/p' "$1" ;;
	sent) sed -n 's/^conservation, way back: read [0-9]* = sent \([0-9]*\) .*/\1/p' "$1" ;;
	esac 2> /dev/null | tail -1
}

usr1_json() {
	local n
	n=$(cat "$2" 2> /dev/null | grep -c .)
	kill -USR1 "$1" 2> /dev/null || return 1
	for _ in $(seq 30); do
		[ "$(cat "$2" 2> /dev/null | grep -c .)" -gt "$n" ] && { jget "$2" "$3"; return; }
		sleep 0.1
	done
	return 1
}

# Wait up to TENTHS tenths of a second for FILE (results appear whole:
# written aside, then renamed).
wait_file() {
	for _ in $(seq "$2"); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

wait_line() {
	for _ in $(seq "$3"); do
		grep -Eq -- "$2" "$1" 2> /dev/null && return 0
		[ -n "${4:-}" ] && ! kill -0 "$4" 2> /dev/null && break
		sleep 0.1
	done
	# It may have printed the line on its way out.
	grep -Eq -- "$2" "$1" 2> /dev/null
}

left_in() {
	local ns=$1 l
	shift
	l=$(ip -n "$ns" -o link show 2> /dev/null | awk -v keep=" lo $* " '
		{ dev = $2; sub(/:$/, "", dev); sub(/@.*/, "", dev) }
		/ xdp[a-z]* |prog\/xdp/ { xdp = xdp " " dev }
		index(keep, " " dev " ") == 0 { devs = devs " " dev }
		END {
			if (xdp != "") printf "an XDP program on%s;", xdp
			if (devs != "") printf " devices left:%s", devs
		}')
	echo "${l# }"
}

# A Python expression over d, the last JSON line of FILE.
jget() {
	"${PY:-python3}" -c 'import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
d = json.loads(lines[-1])
print(eval(sys.argv[2]))' "$1" "$2" 2> /dev/null
}

# ---- cases -------------------------------------------------------------------
lib_ran=

# The result lines written so far, where stdout is a file (run-tests.sh's
# log; not a pipe, which reading would drain); else nothing.
lib_said() {
	[ -f "/proc/$$/fd/1" ] && grep -c '^\(PASS\|FAIL\|SKIP\): ' "/proc/$$/fd/1"
}

# The lines said by the cases lib_need ran so far, each with the cases it
# needed: a case's own lines are its total less its needed cases'.
lib_sub_said=0

lib_need() {
	local c n m sub
	for c in "$@"; do
		[[ " $lib_ran " == *" $c "* ]] && continue
		lib_ran="$lib_ran $c"
		n=$(lib_said)
		sub=$lib_sub_said
		"case_${c//-/_}"
		[ -n "$n" ] || continue
		m=$(lib_said)
		# a case that says nothing of its own has checked nothing
		if [ $((m - n - (lib_sub_said - sub))) -le 0 ]; then
			echo "FAIL: $name/$c: the case gave no result"
			m=$((m + 1))
		fi
		lib_sub_said=$((sub + m - n))
	done
}

lib_once() {
	local v=lib_once_$1
	[ -n "${!v:-}" ] || { "$1"; printf -v "$v" '%d' $?; }
	return "${!v}"
}

lib_run_cases() {
	local c unknown=
	cases=$(echo $cases)	# one line, one space between names
	for c in $cases; do
		declare -F "case_${c//-/_}" > /dev/null ||
			echo "FAIL: $name/$c: the script defines no case_${c//-/_}"
	done
	for c in "$@"; do
		[[ " $cases " == *" $c "* ]] && continue
		echo "FAIL: $name/$c: no such case; the cases: $cases"
		unknown=1
	done
	[ -n "$unknown" ] && exit 0
	if declare -F setup > /dev/null; then
		setup
	fi
	for c in $cases; do
		[ $# -eq 0 ] || [[ " $* " == *" $c "* ]] && lib_need "$c"
	done
	exit 0
}
