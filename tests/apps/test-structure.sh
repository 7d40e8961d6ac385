#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The tree's shape (no root): the library's layers include and call only
# downward, no two of its files use each other's functions, no function is
# over 100 lines and no source file over 800, the apps' headers declare no
# variable, the daemon stays small and on ucm_dp's API, and no name of ours
# is reserved. The rules and their reasons are in scripts/check-structure.py
# and docs/design/overview.md ("Layers").
#
#   structure      scripts/check-structure.py: a line per rule
set -u
BUILD=${BUILD:-build}
name=test-structure
cases="structure"
cd "$(dirname "$0")/../.."
. tests/lib.sh

setup() {
	if ! command -v python3 > /dev/null || ! command -v nm > /dev/null; then
		echo "SKIP: test-structure: needs python3 and nm (scripts/install-deps.sh)"
		exit 0
	fi
}

case_structure() {
	local rc
	python3 scripts/check-structure.py "$BUILD" > "$tmp/out" 2>&1
	rc=$?
	cat "$tmp/out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL: ' "$tmp/out"; then
		echo "FAIL: test-structure: check-structure.py exited with status $rc"
	fi
}

lib_run_cases "$@"
