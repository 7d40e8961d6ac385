#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The tree's shape (no root): the library's layers include and call only
# downward, no two of its files use each other's functions, no function is
# over 100 lines, and the daemon stays small. The rules and their reasons
# are in scripts/check-structure.py and docs/ARCHITECTURE.md ("Layers").
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
if ! command -v python3 > /dev/null || ! command -v nm > /dev/null; then
	echo "SKIP: test-structure: needs python3 and nm (scripts/install-deps.sh)"
	exit 0
fi
python3 scripts/check-structure.py "$BUILD"
