#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Compare the ABI of the built libucpumap.so with the committed baseline;
# `make check-abi` runs it.
#
#   scripts/check-abi.sh BASELINE CURRENT
#
# Both files are abidw's (libabigail) descriptions of the shared library:
# its exported functions and variables, their symbol versions, and the
# public types they reach (lib/include/ucpumap/). The Makefile writes
# CURRENT from build/libucpumap.so with the same options as the baseline.
#
# Exit 0: no change, or only additions (new functions or variables; they
# are printed, and the next `make abi-baseline` takes them in).
# Exit 1: anything else: a function or variable removed, a parameter or
# return type changed, a public struct's size or a member's offset
# changed, ... with abidiff's report. If the change is meant, write the
# baseline again (`make abi-baseline`) and commit it on its own, saying why.
#
# abidiff's exit status is a bit mask: 1 error, 2 usage error, 4 the ABIs
# differ, 8 the change is known to be incompatible (a removed symbol). A
# struct whose layout changed is only 4, like an added function; so an
# added-only change is told apart by comparing again with the additions
# left out (--no-added-syms), which must then find nothing.

set -u
base=$1
cur=$2
name=check-abi

if ! command -v abidiff > /dev/null 2>&1; then
	echo "$name: abidiff not found (Debian: abigail-tools; scripts/install-deps.sh installs it)" >&2
	exit 1
fi
if [ ! -f "$base" ]; then
	echo "$name: no baseline $base (make abi-baseline writes one)" >&2
	exit 1
fi

report=$(abidiff "$base" "$cur" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
	echo "$name: no ABI change against $base"
	exit 0
fi
if [ $((rc & 3)) -ne 0 ]; then
	echo "$report"
	echo "$name: abidiff failed (exit $rc)" >&2
	exit 1
fi

abidiff --no-added-syms "$base" "$cur" > /dev/null 2>&1
rc_changed=$?
echo "$report"
if [ $((rc & 8)) -eq 0 ] && [ $rc_changed -eq 0 ]; then
	echo "$name: additions only, compatible with $base (make abi-baseline records them)"
	exit 0
fi
echo "$name: FAIL: the ABI changed, not only grew, against $base (abidiff exit $rc)." >&2
echo "$name: if this is meant, 'make abi-baseline' and commit $base saying why." >&2
exit 1
