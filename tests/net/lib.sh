# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by network tests: result lines, the root check, a veth pair
# between two namespaces, and a cleanup that runs on every exit. A script
# sets `name` first, registers what it starts (lib_pid PID), and may add
# its own steps with lib_on_exit 'command'.
#
#   ok CASE [DETAIL]   bad CASE WHY   skip_unless_root WHY
#   veth_pair NS_A NS_B IF_A IF_B ADDR_A/LEN ADDR_B/LEN   (tx checksums off on IF_A)
#   mac_of NS IF
#   wait_file FILE TENTHS   jget JSON-FILE PYTHON-EXPR
#   $tmp: a temporary directory, removed on exit

tmp=$(mktemp -d)
lib_pids=()
lib_ns=()
lib_exit=()

ok() { echo "PASS: $name/$1${2:+: $2}"; }
bad() { echo "FAIL: $name/$1: $2"; }

lib_pid() { lib_pids+=("$1"); }
lib_on_exit() { lib_exit+=("$1"); }

lib_cleanup() {
	local p c
	for c in "${lib_exit[@]}"; do eval "$c"; done
	for p in "${lib_pids[@]}"; do
		kill "$p" 2> /dev/null && wait "$p" 2> /dev/null
	done
	for p in "${lib_ns[@]}"; do ip netns del "$p" 2> /dev/null; done
	rm -rf "$tmp"
}
trap lib_cleanup EXIT
trap 'echo "FAIL: $name: interrupted"; exit 1' HUP INT TERM

skip_unless_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: $name: needs root ($1)"
		exit 0
	fi
}

# Two namespaces joined by a veth pair, both ends up with their address and
# lo up. Full checksums leave IF_A, as a NIC's wire carries them.
veth_pair() {
	lib_ns+=("$1" "$2")
	ip netns add "$1" && ip netns add "$2" &&
		ip -n "$1" link add "$3" type veth peer name "$4" netns "$2" &&
		ip -n "$1" addr add "$5" dev "$3" && ip -n "$2" addr add "$6" dev "$4" &&
		ip -n "$1" link set "$3" up && ip -n "$2" link set "$4" up &&
		ip -n "$1" link set lo up && ip -n "$2" link set lo up &&
		ip netns exec "$1" ethtool -K "$3" tx off > /dev/null
}

mac_of() {
	ip -n "$1" -o link show "$2" | sed 's/.*link\/ether \([^ ]*\).*/\1/'
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

# A Python expression over d, the last JSON line of FILE.
jget() {
	python3 -c 'import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
d = json.loads(lines[-1])
print(eval(sys.argv[2]))' "$1" "$2" 2> /dev/null
}
