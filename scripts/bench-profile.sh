#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Where the worker CPU's time goes, per delivered packet, row against row.
#
#   scripts/bench-profile.sh [ROW...]     (default: cpumap tun-ceiling kernel-cpumap)
#
# Runs each row of `ucpumap-bench datapath` alone for 6 s, samples CPU 1
# (where workers, the cpumap kthread and the ceiling's writer run; CPU=0
# in the environment samples CPU 0 instead: the generator, veth's receive
# and the RX thread; CPU=all samples every CPU, so that a thread's cost per
# packet does not depend on where the scheduler put it) with
# `perf record -e cpu-clock` for 3 s in the middle, and prints the top kernel
# and user symbols as ns per delivered packet (share of samples / delivered
# rate), with the first row's figure against each other row's, then each
# row's share of the CPU's samples by thread. A TCP row's packet is 1448
# bytes of its stream (an MSS at MTU 1500; MSS=N for another). TOP=N: the
# first N symbols (default 30). ARGS="...": more of the bench's options for
# every row (ARGS="--mtu 9000" MSS=8948: the rows at a jumbo MTU).
#
# A row that measured nothing (the bench failed or skipped it, no rate,
# no sample) is left out of the tables; the rows' reasons go to stderr at
# the end, and the exit is 1.
#
# Root; needs perf (Debian's linux-perf) and a built tree (make). The rows
# run one after the other, never side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CPU=${CPU:-1}
case "$CPU" in
0|1) where=(-C "$CPU"); ncpu=1 ;;
all) where=(-a); ncpu=$(getconf _NPROCESSORS_ONLN) ;;
*) echo "bench-profile: CPU=$CPU: give 0, 1 or all" >&2; exit 1 ;;
esac
rows=("$@")
[ ${#rows[@]} -eq 0 ] && rows=(cpumap tun-ceiling kernel-cpumap)
. scripts/perf-lib.sh bench-profile

failed=()
measured=()
for row in "${rows[@]}"; do
	# shellcheck disable=SC2086 # ARGS is a list of words
	"$BUILD/ucpumap-bench" datapath --rounds 1 --seconds 6 --rows "$row" ${ARGS:-} \
		> "$tmp/$row.bench" 2>&1 &
	bpid=$!
	sleep 3
	if ! perf record -q "${where[@]}" -e cpu-clock -o "$tmp/$row.data" -- sleep 3 > "$tmp/$row.perr" 2>&1; then
		echo "bench-profile: perf record failed for $row:" >&2
		cat "$tmp/$row.perr" >&2
		exit 1
	fi
	brc=0
	wait "$bpid" || brc=$?
	bpid=
	if [ "$brc" -ne 0 ]; then
		echo "bench-profile: the $row row failed:" >&2
		cat "$tmp/$row.bench" >&2
		failed+=("$row: the bench failed (exit $brc; its output above)")
		continue
	fi
	# Its rate, as the table below reads it: none, or 0, is no figure.
	if ! awk -v r="$row" '$1 == "round" && $2 == 1 && $3 == r && $4 > 0 &&
			($5 " " $6 == "Mpps delivered" || $5 " " $6 == "Gbit/s received") { ok = 1 }
			END { exit !ok }' "$tmp/$row.bench"; then
		failed+=("$row: no rate: $(bench_why "$row" "$tmp/$row.bench")")
		continue
	fi
	perf report -i "$tmp/$row.data" --no-children --sort comm,sym --stdio 2> /dev/null |
		grep '%' > "$tmp/$row.sym" || true
	perf report -i "$tmp/$row.data" --no-children --sort comm --stdio 2> /dev/null |
		grep '%' > "$tmp/$row.comm" || true
	if [ ! -s "$tmp/$row.sym" ]; then
		failed+=("$row: perf report found no samples in $row's 3 s")
		continue
	fi
	measured+=("$row")
	echo "$row: $(grep "round 1 $row " "$tmp/$row.bench" | sed 's/^ *round 1 //')"
done
[ ${#measured[@]} -eq 0 ] ||
TOP=${TOP:-30} MSS=${MSS:-1448} python3 - "$tmp" "$CPU" "$ncpu" "${measured[@]}" <<'PY'
import os, re, sys
tmp, cpu, ncpu, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
where = "all CPUs" if cpu == "all" else f"CPU {cpu}"
rate, ns = {}, {}
for row in rows:
    for l in open(f"{tmp}/{row}.bench"):
        m = re.match(r"\s*round 1 (\S+)\s+([\d.]+) (Mpps delivered|Gbit/s received)", l)
        if m and m.group(1) == row:
            # pps; a TCP row's Gbit/s in segments of 1448 bytes (an MSS
            # at MTU 1500 with timestamps) a second
            v = float(m.group(2))
            mss = int(os.environ["MSS"])
            rate[row] = v * 1e6 if m.group(3).startswith("Mpps") else v * 1e9 / 8 / mss
    for l in open(f"{tmp}/{row}.sym"):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(\S+)", l)
        if m and rate.get(row):
            key = ("user " if m.group(3) == "." else "") + m.group(4)
            ns.setdefault(key, {})[row] = ns.get(key, {}).get(row, 0) + \
                float(m.group(1)) / 100 * ncpu / rate[row] * 1e9
print(f"\nns per delivered packet on {where} (cpu-clock samples / delivered rate; a TCP row's"
      f" packet: {os.environ['MSS']} bytes received)")
print(f"{'symbol':44s}" + "".join(f"{r:>15s}" for r in rows))
first = rows[0]
order = sorted(ns, key=lambda k: -max(ns[k].values()))
for k in order[:int(os.environ["TOP"])]:
    print(f"{k[:44]:44s}" + "".join(f"{ns[k].get(r, 0):15.1f}" for r in rows))
print(f"{'total':44s}" + "".join(f"{sum(v.get(r, 0) for v in ns.values()):15.1f}" for r in rows))
print(f"\nshare of {where}' samples by thread (the first 5 of each row)" if cpu == "all" else
      f"\nshare of {where}'s samples by thread (the first 5 of each row)")
for row in rows:
    shares = []
    for l in open(f"{tmp}/{row}.comm"):
        m = re.match(r"\s*([\d.]+)%\s+(.+?)\s*$", l)
        if m:
            shares.append(f"{m.group(2)} {float(m.group(1)):.1f}%")
    print(f"{row:28s} " + ", ".join(shares[:5]))
PY
if [ ${#failed[@]} -gt 0 ]; then
	echo "bench-profile: ${#failed[@]} row(s) measured nothing:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
