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
#   maint-scripts      ucpumap's stop the template's instances on removal
#                      and delete the tuns they kept,
#                      restart them on upgrade, forget them on purge
set -u
name=test-deb
cases="build-and-lintian contents maint-scripts"
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

case_maint_scripts() {
	local deb why=
	lib_need build-and-lintian
	deb=$(ls "$tmp/out"/ucpumap_*.deb 2> /dev/null | head -n 1)
	if [ -z "$deb" ] || ! dpkg-deb -e "$deb" "$tmp/ctl" 2> "$tmp/ctl.err"; then
		bad maint-scripts "no control area: $(cat "$tmp/ctl.err" 2> /dev/null)"
		return
	fi
	grep -q "systemctl stop 'ucpumapd@\*.service'" "$tmp/ctl/prerm" 2> /dev/null ||
		why="$why prerm stops no instance;"
	grep -q "systemctl try-restart 'ucpumapd@\*.service'" "$tmp/ctl/postinst" 2> /dev/null ||
		why="$why postinst restarts no instance;"
	grep -q 'rm -f /etc/systemd/system/\*.wants/ucpumapd@\*.service' "$tmp/ctl/postrm" 2> /dev/null ||
		why="$why postrm forgets no instance;"
	grep -q 'ip link delete dev "$t"' "$tmp/ctl/prerm" 2> /dev/null ||
		why="$why prerm deletes no kept tun;"
	grep -q 'rm -rf /var/lib/ucpumap' "$tmp/ctl/postrm" 2> /dev/null ||
		why="$why postrm leaves /var/lib/ucpumap;"
	for f in prerm postinst postrm; do
		sh -n "$tmp/ctl/$f" 2> /dev/null || why="$why $f: not valid sh;"
	done
	[ -z "$why" ] && ok maint-scripts "prerm, postinst, postrm" || bad maint-scripts "$why"
}

lib_run_cases "$@"
