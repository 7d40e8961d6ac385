#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# docs/host-plan (or $HOST_PLAN) on a lent many-core host, from the root of a tree that
# holds .devkit/ (the workplace's ../shared/device/pack.sh, run here after
# make): each line's bench output and JSON, packed into one file,
# $OUT/host-run.tar.gz, since the host returns at most 8 files and the
# plan writes more. Bounded at HOST_RUN_SECONDS (default 440, inside the
# 480 s a call may take with a retry to spare): at the bound the bench in
# progress gets SIGTERM, takes its topology down, and what ran comes
# back. Exit 3 on a kernel that is not the host's 6.x (a machine with no
# veth or XDP would fail every line), 2 without .devkit or $OUT.
set -u
case $(uname -r) in
6.* | [7-9].*) ;;
*)
	echo "host-run: kernel $(uname -r): not the many-core host (Linux 6.x); nothing run" >&2
	exit 3
	;;
esac
[ -x .devkit/run.sh ] || {
	echo "host-run: no .devkit/run.sh: run ../shared/device/pack.sh after make, and carry .devkit" >&2
	exit 2
}
[ -n "${OUT:-}" ] && [ -d "$OUT" ] || {
	echo "host-run: \$OUT is not a folder: where the results go" >&2
	exit 2
}
for p in ucpumap-bench ucpumapd ucpumap-gen ip iperf3 sockperf; do
	[ -x ".devkit/bin/$p" ] || echo "host-run: .devkit/bin/$p missing: its rows fail or skip" >&2
done
dest=$OUT
res=$(mktemp -d /tmp/ucm-host.XXXXXX) || exit 2
{
	echo "host: $(uname -r), $(nproc) CPUs,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
	echo "command: bash scripts/host-run.sh (plan ${HOST_PLAN:-docs/host-plan}) at $(git rev-parse --short HEAD 2> /dev/null || echo '?')"
	echo "started: $(date -u '+%F %T') UTC"
} | tee "$res/host.txt"
OUT=$res timeout -s TERM "${HOST_RUN_SECONDS:-440}" bash .devkit/run.sh -f "${HOST_PLAN:-docs/host-plan}"
rc=$?
echo "host-run: the plan's runner exited $rc$([ $rc = 124 ] && echo ', cut at its bound')"
# Cut, the runner goes at once and the bench takes its topology down
# after it (a few seconds): its last words are waited for, 20 s at most.
for _ in $(seq 40); do
	grep -qsx ucpumap-bench /proc/[0-9]*/comm || break
	sleep 0.5
done
ls -l "$res"
tar -C "$res" -czf "$dest/host-run.tar.gz" . || exit 1
exit $rc
