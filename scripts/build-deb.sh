#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Build the Debian packages (libucpumap0, libucpumap-dev, ucpumap) from a
# clean clone of this tree's HEAD in a temporary directory, as
# `dpkg-buildpackage -us -uc -b` (the unit tests run in it), then run lintian
# on the .changes. Exits non-zero when the build fails, a package is missing
# or lintian reports an error. Only committed work is built.
#
#   scripts/build-deb.sh             build, list the packages, lintian; clean up
#   scripts/build-deb.sh -o DIR      ... and copy the .debs, .changes and
#                                    .buildinfo to DIR
#
# Needs the build dependencies (debian/control; `apt-get build-dep .`) and
# dpkg-dev, debhelper, fakeroot, git and lintian (scripts/install-deps.sh).

set -euo pipefail

usage()
{
    sed -n '4,15p' "$0" | sed 's/^# \{0,1\}//'
}

out=
while [ $# -gt 0 ]; do
    case "$1" in
        -o) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "build-deb.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

top=$(cd "$(dirname "$0")/.." && pwd)
for tool in git dpkg-buildpackage dh fakeroot lintian; do
    if ! command -v "$tool" > /dev/null; then
        echo "build-deb.sh: $tool not found (scripts/install-deps.sh installs it)" >&2
        exit 1
    fi
done

head=$(git -C "$top" rev-parse HEAD)
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
    echo "build-deb.sh: note: uncommitted changes are not built (HEAD ${head:0:12} is)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ucpumap-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src="$tmp/ucpumap"
git clone -q --no-checkout "$top" "$src"
git -C "$src" checkout -q --detach "$head"

echo "build-deb.sh: dpkg-buildpackage -us -uc -b in $src (HEAD ${head:0:12})"
start=$(date +%s)
# The build sees neither a calling make (make check) nor its variables.
if ! (cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
        -u CFLAGS -u CPPFLAGS -u LDFLAGS -u BUILD -u SANITIZE -u V -u WERROR -u CI \
        dpkg-buildpackage -us -uc -b) > "$tmp/build.log" 2>&1; then
    tail -n 40 "$tmp/build.log"
    echo "build-deb.sh: dpkg-buildpackage failed (the last 40 lines of its log are above)" >&2
    exit 1
fi
echo "build-deb.sh: built in $(( $(date +%s) - start )) s; $(grep -E '^[0-9]+ passed' "$tmp/build.log" || echo 'unit tests not run')"

missing=
for pkg in libucpumap0 libucpumap-dev ucpumap; do
    deb=$(compgen -G "$tmp/${pkg}_*.deb" | head -n 1 || true)
    if [ -z "$deb" ]; then
        missing="$missing $pkg"
        continue
    fi
    echo "== $(basename "$deb")"
    dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print "   ", $6, $7, $8 }'
done
if [ -n "$missing" ]; then
    echo "build-deb.sh: packages not built:$missing" >&2
    exit 1
fi

changes=$(ls "$tmp"/ucpumap_*.changes)
echo "== lintian $(basename "$changes")"
rc=0
lintian --fail-on error "$changes" > "$tmp/lintian.log" 2>&1 || rc=$?
grep -v '^running with root privileges' "$tmp/lintian.log" || echo "    (nothing)"
if [ -n "$out" ]; then
    mkdir -p "$out"
    cp "$tmp"/*.deb "$tmp"/*.changes "$tmp"/*.buildinfo "$out"/
    echo "build-deb.sh: packages copied to $out"
fi
if [ $rc -ne 0 ]; then
    echo "build-deb.sh: lintian reports errors" >&2
    exit 1
fi
echo "build-deb.sh: ok"
