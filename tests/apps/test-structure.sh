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
#   doc-commits    every commit the README, NEWS and docs/ cite (a hash of
#                  7 to 40 hex digits, not a results folder's name) is in
#                  the repository, and every results folder (DATE-HASH)
#                  names an ancestor of HEAD: a result names the tree it
#                  measured
#   doc-files      every source of lib/, xsk/ and apps/ has its row in
#                  docs/design/overview.md, the next engineer's map
set -u
BUILD=${BUILD:-build}
name=test-structure
cases="structure doc-commits doc-files"
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

case_doc_commits() {
	local f h n=0 missing=""
	if ! git rev-parse --git-dir > /dev/null 2>&1; then
		skip doc-commits "not a git checkout: no commits to look the hashes up in"
		return
	fi
	if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
		skip doc-commits "a shallow clone: the cited commits may be left out of it"
		return
	fi
	# A results folder's name (DATE-HASH) is not read as a citation
	# here: the folders are checked below, as ancestors of HEAD.
	for f in $( (echo README.md HACKING.md NEWS; git ls-files 'docs/*.md' '*/README.md') |
		   tr ' ' '\n' | sort -u); do
		for h in $(grep -oE '(^|[^-[:alnum:]_])[0-9a-f]{7,40}\b' "$f" | sed -E 's/^[^0-9a-f]//' |
			   grep '[a-f]' | grep '[0-9]' | sort -u); do
			n=$((n + 1))
			git cat-file -e "$h^{commit}" 2> /dev/null || missing="$missing $f:$h"
		done
	done
	for f in $(git ls-files docs/results | cut -d/ -f3 | sort -u); do
		h=${f##*-}
		n=$((n + 1))
		git merge-base --is-ancestor "$h" HEAD 2> /dev/null || missing="$missing docs/results/$f"
	done
	if [ -n "$missing" ]; then
		bad doc-commits "not in the repository (or not before HEAD):$missing"
	elif [ $n -eq 0 ]; then
		bad doc-commits "no hash found: the search is broken"
	else
		ok doc-commits "$n cited hashes, each a commit here"
	fi
}

case_doc_files() {
	local f n=0 missing=""
	for f in $(git ls-files lib xsk apps 2> /dev/null | grep -E '\.(c|h|S)$'); do
		n=$((n + 1))
		grep -q "\`\([a-z_/-]*/\)\?$(basename "$f")\`" docs/design/overview.md ||
			missing="$missing $f"
	done
	if [ $n -eq 0 ]; then
		skip doc-files "not a git checkout: no list of the sources"
	elif [ -n "$missing" ]; then
		bad doc-files "no row in docs/design/overview.md:$missing"
	else
		ok doc-files "$n sources, each in docs/design/overview.md"
	fi
}

lib_run_cases "$@"
