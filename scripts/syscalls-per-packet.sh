#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# System calls per delivered packet, row against row: ucpumapd's whole
# process (every thread) at the datapath bench's flood.
#
#   scripts/syscalls-per-packet.sh [--split] [ROW...]
#                                          (default rows: cpumap cpumap-no-hold)
#
# Runs each row of `ucpumap-bench datapath` alone for 5 s; once the daemon's
# RX thread is up, counts its system calls (`perf stat -e
# raw_syscalls:sys_enter -p`, every thread that exists then) until it exits,
# and divides by the packets it delivered over its life (the bench's
# tun_packets line). Set-up and stop are in the count: a few thousand calls.
#
# --split (first): records the calls instead (`perf trace record`, entry
# and exit: more overhead than a count; the total is of the calls seen
# complete) and also prints them per thread and call (`perf trace -s`):
# each thread's calls made more than once per 10000 packets, most first.
#
# A row that measured nothing (ucpumapd did not come up, the bench failed
# or skipped the row, no count): the rows' reasons on stderr at the end,
# and exit 1.
#
# Root; needs perf (Debian's linux-perf) and a built tree (make). The rows
# run one after the other, never side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
split=
if [ "${1:-}" = --split ]; then
	split=1
	shift
fi
rows=("$@")
[ ${#rows[@]} -eq 0 ] && rows=(cpumap cpumap-no-hold)
. scripts/perf-lib.sh syscalls-per-packet
perf_lib_tracefs	# raw_syscalls:sys_enter
if pgrep -x ucpumapd > /dev/null; then
	echo "syscalls-per-packet: another ucpumapd runs: its count would mix in" >&2
	exit 1
fi

failed=()
for row in "${rows[@]}"; do
	"$BUILD/ucpumap-bench" datapath --rows "$row" --rounds 1 --seconds 5 > "$tmp/$row.out" 2>&1 &
	bpid=$!
	pid=
	for _ in $(seq 500); do
		pid=$(pgrep -x ucpumapd || true)
		[ -n "$pid" ] && grep -qs "ucpumap/rx" /proc/"$pid"/task/*/comm && break
		pid=
		sleep 0.02
	done
	brc=0
	if [ -z "$pid" ]; then
		wait "$bpid" || brc=$?
		bpid=
		failed+=("$row: ucpumapd did not come up in 10 s (bench exit $brc; $(bench_why "$row" "$tmp/$row.out"))")
		continue
	fi
	if [ -n "$split" ]; then
		perf trace record -q -p "$pid" -o "$tmp/$row.data" > "$tmp/$row.perr" 2>&1 || true
	else
		perf stat -x, -e raw_syscalls:sys_enter -p "$pid" -o "$tmp/$row.perf" 2> "$tmp/$row.perr" || true
	fi
	wait "$bpid" || brc=$?
	bpid=
	if [ "$brc" -ne 0 ]; then
		failed+=("$row: the bench failed (exit $brc; $(bench_why "$row" "$tmp/$row.out"))")
		continue
	fi
	if [ -n "$split" ]; then
		# perf trace -s (on stderr): a "comm (tid), N events" line per thread, then
		# "name calls errors ..." per call.
		perf trace -i "$tmp/$row.data" -s > "$tmp/$row.sum" 2>&1 || true
		calls=$(awk '$1 ~ /^[a-z_0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 8 { n += $2 }
			END { if (n) print n }' "$tmp/$row.sum")
	else
		calls=$(grep -s raw_syscalls "$tmp/$row.perf" | cut -d, -f1 || true)
	fi
	got=$(grep -o "ucpumapd [0-9]*, kernel" "$tmp/$row.out" | awk '{print $2}' | tr -d , || true)
	case $calls in
	''|*[!0-9]*)	# perf's "<not counted>", or no count at all
		perr=$(cat "$tmp/$row.perr" ${split:+"$tmp/$row.sum"} 2> /dev/null |
			grep -v '^[[:space:]]*$' | tail -n 1 || true)
		failed+=("$row: no count of calls ('$calls'; perf: $perr)")
		continue ;;
	esac
	if [ -z "$got" ] || [ "$got" = 0 ]; then
		failed+=("$row: no packets delivered ('$got'; $(bench_why "$row" "$tmp/$row.out"))")
		continue
	fi
	awk -v r="$row" -v c="$calls" -v d="$got" \
		'BEGIN { printf "%-24s %9d system calls, %9d delivered: %.4f per packet (1 per %.0f)\n", r, c, d, c / d, d / c }'
	[ -n "$split" ] || continue
	# Per thread (in perf's order), its calls by count.
	awk -v d="$got" '
		/^ .* \([0-9]+\), [0-9]+ events/ { t = $1; nt++; next }
		$1 ~ /^[a-z_0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 8 && $2 * 10000 > d {
			printf "%d %d %-16s %-16s %9d  (1 per %.0f packets)\n", nt, -$2, t, $1, $2, d / $2
		}' "$tmp/$row.sum" | sort -k1,1n -k2,2n | cut -d" " -f3- | sed 's/^/    /'
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "syscalls-per-packet: ${#failed[@]} row(s) measured nothing:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
