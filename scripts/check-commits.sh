#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Commit subjects of at most 72 characters (HACKING.md, "Commits"), for
# the commits after the rule came in:
#
#   scripts/check-commits.sh [BASE]
#
# BASE (default: the last commit before the rule, 9640a01) must be an
# ancestor of HEAD. Prints each subject that is too long, with its commit,
# and exits 1 when there is one; exits 2 when BASE is not in this clone's
# history (a shallow clone, an export without .git), saying so.

MAX=72
base=${1:-9640a01889ab298f9c36559f357fb1cde7cc5af7}
top=$(cd "$(dirname "$0")/.." && pwd)

if ! git -C "$top" rev-parse -q --verify "$base^{commit}" > /dev/null 2>&1 ||
	! git -C "$top" merge-base --is-ancestor "$base" HEAD 2> /dev/null; then
	echo "check-commits.sh: $base is not in this clone's history of HEAD" >&2
	exit 2
fi
# Characters, not bytes, in any awk (mawk has no multibyte support): in
# the C locale length() counts bytes, less UTF-8's continuation bytes
# (0x80-0xbf), which start no character.
long=$(git -C "$top" log --no-merges --format='%h %s' "$base..HEAD" |
	LC_ALL=C awk -v max=$MAX '{
		s = substr($0, index($0, " ") + 1); t = s
		n = length(s) - gsub(/[\200-\277]/, "", t)
	}
	n > max { printf "%s (%d characters)\n", $0, n }')
if [ -n "$long" ]; then
	echo "check-commits.sh: subjects over $MAX characters since ${base%"${base#???????}"}:"
	echo "$long"
	exit 1
fi
echo "check-commits.sh: $(git -C "$top" rev-list --count --no-merges "$base..HEAD") commits since ${base%"${base#???????}"}, every subject at most $MAX characters"
