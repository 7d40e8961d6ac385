#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The Debian packages: scripts/build-deb.sh builds them from a clean clone of
# HEAD (dpkg-buildpackage -us -uc -b, the unit tests included) and runs
# lintian; then check that the three packages hold what they should. About a
# minute; no root needed.
#
#   build-and-lintian  the build and lintian
#   contents           contents-PACKAGE: each package holds its files
set -u
name=test-deb
cases="build-and-lintian contents"
cd "$(dirname "$0")/../.."
. tests/lib.sh

setup() {
	local tool unmet
	plain_build_only "the packages do not depend on the sanitizer"
	for tool in git dpkg-buildpackage dh fakeroot lintian dpkg-checkbuilddeps; do
		if ! command -v "$tool" > /dev/null; then
			echo "SKIP: $name: $tool not found (scripts/install-deps.sh installs the packaging tools)"
			exit 0
		fi
	done
	if ! unmet=$(dpkg-checkbuilddeps 2>&1); then
		echo "SKIP: $name: build dependencies missing: ${unmet#*: }"
		exit 0
	fi
	if ! git rev-parse HEAD > /dev/null 2>&1; then
		echo "SKIP: $name: not a git checkout (scripts/build-deb.sh builds from a clone of HEAD)"
		exit 0
	fi
}

case_build_and_lintian() {
	if scripts/build-deb.sh -o "$tmp/out" > "$tmp/log" 2>&1; then
		ok build-and-lintian
	else
		bad build-and-lintian "$(grep -E '^(E: |build-deb.sh: )' "$tmp/log" | tail -8; tail -5 "$tmp/log")"
		exit 0
	fi
	sed -n 's/^build-deb.sh: \(built in .*\)/    \1/p' "$tmp/log"
	grep -E '^[EW]: ' "$tmp/log" | sed 's/^/    lintian /'
}

# What each package must hold (a path in `dpkg-deb -c`, as a pattern).
check() {	# package, pattern...
	local pkg=$1 deb list miss p
	shift
	deb=$(ls "$tmp/out/${pkg}"_*.deb 2> /dev/null | head -n 1)
	if [ -z "$deb" ]; then
		bad "contents-$pkg" "no ${pkg}_*.deb"
		return
	fi
	list=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
	miss=""
	for p in "$@"; do
		echo "$list" | grep -qE "^\./$p\$" || miss="$miss $p"
	done
	[ -z "$miss" ] && ok "contents-$pkg" || bad "contents-$pkg" "missing:$miss"
}

case_contents() {
	lib_need build-and-lintian
	check libucpumap0 'usr/lib/[^/]+/libucpumap\.so\.0' 'usr/lib/[^/]+/libucpumap\.so\.[0-9]+\.[0-9]+\.[0-9]+'
	check libucpumap-dev 'usr/include/ucpumap/dp\.h' 'usr/lib/[^/]+/libucpumap\.a' \
		'usr/lib/[^/]+/libucpumap\.so' 'usr/lib/[^/]+/pkgconfig/libucpumap\.pc'
	check ucpumap 'usr/sbin/ucpumapd' 'usr/bin/ucpumap-gen' 'usr/bin/ucpumap-bench' \
		'lib/systemd/system/ucpumapd@\.service' 'etc/ucpumap/ucpumapd\.conf\.sample'
}

lib_run_cases "$@"
