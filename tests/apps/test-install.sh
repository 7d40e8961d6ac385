#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make install into a staging directory (the daemon in sbin, the tools in
# bin, the unit's sample IFACE.conf in /etc/ucpumap), then build a program against the installed headers and shared library
# through pkg-config and run it, and a C++ one that includes every public
# header and calls into the library; check that the shared library exports the
# public API and nothing else, that every global of the static archive
# carries the ucm_ prefix, that the version is one (the symbol map's,
# pkg-config's, NEWS'), that the pkg-config file names the install's
# prefix, and that install-lib installs the shared library alone.
#
# Also an install under another prefix: the unit, the sample and
# ucpumapd(8) all name that install's paths (paths); make uninstall takes
# away all it put there, and leaves the operator's IFACE.conf (uninstall).
#
# The installed bench finds ucpumapd in sbin, and names it when it is not
# there (bench-programs).
#
# The cases, in order: install, files, pc-prefix, install-lib, paths, uninstall,
# build-with-pkg-config, links-shared, run, build-cxx, static-link (cc -static as
# libucpumap(3) gives it, run), bench-programs, version,
# exports, static-exports. Each needs install's staging tree (install runs first);
# links-shared and run need the program build-with-pkg-config built.
set -u
BUILD=${BUILD:-build}
name=test-install
cases="install files pc-prefix install-lib paths uninstall build-with-pkg-config links-shared run build-cxx
static-link bench-programs version exports static-exports"
cd "$(dirname "$0")/../.."
. tests/lib.sh
pc="$tmp/stage/usr/lib/pkgconfig/libucpumap.pc"

setup() {
	plain_build_only "a sanitizer build's library needs its runtime in the user's program"
}

case_install() {
	# A pkg-config file made for another prefix first: install must remake it.
	make -s "$BUILD/libucpumap.pc" PREFIX=/opt/elsewhere > /dev/null 2>&1
	if make -s install PREFIX=/usr DESTDIR="$tmp/stage" > "$tmp/log" 2>&1; then
		ok install
	else
		bad install "$(tail -3 "$tmp/log")"
		exit 0
	fi
}

case_files() {
	local f miss=
	lib_need install
	for f in usr/include/ucpumap/cpumap.h usr/include/ucpumap/pool.h usr/include/ucpumap/ring.h \
		 usr/include/ucpumap/pkt.h usr/include/ucpumap/log.h usr/include/ucpumap/tun.h \
		 usr/include/ucpumap/xsk.h usr/include/ucpumap/xdp.h usr/lib/libucpumap.a \
		 usr/lib/libucpumap.so usr/lib/libucpumap.so.0 usr/lib/pkgconfig/libucpumap.pc \
		 usr/sbin/ucpumapd usr/bin/ucpumap-gen usr/bin/ucpumap-bench \
		 usr/lib/systemd/system/ucpumapd@.service etc/ucpumap/ucpumapd.conf.sample; do
		[ -e "$tmp/stage/$f" ] || miss="${miss:-} $f"
	done
	[ -e "$tmp/stage/usr/bin/ucpumapd" ] && miss="${miss:-} (ucpumapd in bin, not sbin)"
	grep -qx 'ExecStart=/usr/sbin/ucpumapd .*' "$tmp/stage/usr/lib/systemd/system/ucpumapd@.service" 2>/dev/null ||
		miss="${miss:-} (the unit's ExecStart is not /usr/sbin/ucpumapd)"
	# PREFIX=/usr: the unit's optional file and the sample in /etc, not /usr/etc.
	grep -qx 'ExecStart=.* --config -/etc/ucpumap/%I.conf' "$tmp/stage/usr/lib/systemd/system/ucpumapd@.service" 2>/dev/null ||
		miss="${miss:-} (the unit's --config is not -/etc/ucpumap/%I.conf)"
	[ -e "$tmp/stage/usr/etc" ] && miss="${miss:-} (usr/etc: SYSCONFDIR is /etc with PREFIX=/usr)"
	[ -z "${miss:-}" ] && ok files || bad files "missing:$miss"
}

# The pkg-config file names the install's prefix, not the one `make` built
# with before.
case_pc_prefix() {
	lib_need install
	if grep -qx 'prefix=/usr' "$pc" 2>/dev/null && grep -qx 'libdir=/usr/lib' "$pc"; then
		ok pc-prefix
	else
		bad pc-prefix "$(grep -E '^(prefix|libdir)=' "$pc" 2>&1 | tr '\n' ' ')"
	fi
}

# The split targets: install-lib installs the shared library and nothing else.
case_install_lib() {
	lib_need install
	if make -s install-lib PREFIX=/usr DESTDIR="$tmp/lib" > "$tmp/log" 2>&1 &&
	   [ "$(cd "$tmp/lib" && find . ! -type d | sort | tr '\n' ' ')" = \
	     "./usr/lib/libucpumap.so ./usr/lib/libucpumap.so.0 ./usr/lib/libucpumap.so.$(sed -n 's/^Version: //p' "$pc") " ]; then
		ok install-lib
	else
		bad install-lib "$(tail -3 "$tmp/log"; cd "$tmp/lib" 2>/dev/null && find . ! -type d | tr '\n' ' ')"
	fi
}

# PREFIX=/opt/ucm: the unit reads /opt/ucm/etc/ucpumap/IFACE.conf, and the
# man page the operator reads says so (and no bare /etc/ucpumap/).
case_paths() {
	local d="$tmp/opt" why=
	lib_need install
	if ! make -s install-bin install-man PREFIX=/opt/ucm DESTDIR="$d" > "$tmp/log" 2>&1; then
		bad paths "$(tail -3 "$tmp/log")"
		return
	fi
	for f in lib/systemd/system/ucpumapd@.service share/man/man8/ucpumapd.8 \
		 etc/ucpumap/ucpumapd.conf.sample; do
		grep -q '/opt/ucm/etc/ucpumap/' "$d/opt/ucm/$f" || why="$why $f names no /opt/ucm/etc/ucpumap/;"
		grep -Eq '(^|[^m])/etc/ucpumap/' "$d/opt/ucm/$f" && why="$why $f names /etc/ucpumap/;"
	done
	grep -q '/opt/ucm/sbin/ucpumapd' "$d/opt/ucm/lib/systemd/system/ucpumapd@.service" ||
		why="$why the unit does not run /opt/ucm/sbin/ucpumapd;"
	grep -q '/opt/ucm/lib/systemd/system/ucpumapd@.service' "$d/opt/ucm/share/man/man8/ucpumapd.8" ||
		why="$why the man page does not name the unit's path;"
	[ -z "$why" ] && ok paths "unit, sample and man page name /opt/ucm's" || bad paths "$why"
}

case_uninstall() {
	local d="$tmp/un" left lib
	lib_need install
	if ! make -s install PREFIX=/opt/ucm DESTDIR="$d" > "$tmp/log" 2>&1; then
		bad uninstall "install: $(tail -3 "$tmp/log")"
		return
	fi
	echo 'queues 0' > "$d/opt/ucm/etc/ucpumap/eth1.conf"
	# An earlier version's library, left by an install over it.
	lib=$(cd "$d" && find . -name 'libucpumap.so.*.*.*' | head -1)
	[ -n "$lib" ] && cp "$d/$lib" "$d/${lib%.*.*}.0.0"
	if ! make -s uninstall PREFIX=/opt/ucm DESTDIR="$d" > "$tmp/log" 2>&1; then
		bad uninstall "$(tail -3 "$tmp/log")"
		return
	fi
	left=$(cd "$d" && find . ! -type d | sort | tr '\n' ' ')
	if [ "$left" = "./opt/ucm/etc/ucpumap/eth1.conf " ]; then
		ok uninstall "every file it installed gone, an earlier version's library too, the operator's eth1.conf kept"
	else
		bad uninstall "left: $left"
	fi
}

# The staged install's pkg-config file, for what follows (after the make
# runs above: the Makefile asks pkg-config too).
pc_env() {
	export PKG_CONFIG_SYSROOT_DIR="$tmp/stage" PKG_CONFIG_PATH="$tmp/stage/usr/lib/pkgconfig"
}

case_build_with_pkg_config() {
	local flags
	lib_need install
	lib_once pc_env
	flags=$(pkg-config --cflags --libs libucpumap 2>&1)
	if ${CC:-cc} -Wall -Werror -o "$tmp/link_test" "$progs/link_test.c" $flags -lpthread > "$tmp/cc" 2>&1; then
		ok build-with-pkg-config
	else
		bad build-with-pkg-config "$(head -5 "$tmp/cc")"
	fi
}

case_links_shared() {
	lib_need build-with-pkg-config
	if ldd "$tmp/link_test" 2>/dev/null | grep -q "libucpumap.so.0 => $tmp/stage" ||
	   LD_LIBRARY_PATH="$tmp/stage/usr/lib" ldd "$tmp/link_test" | grep -q "libucpumap.so.0 => $tmp/stage"; then
		ok links-shared
	else
		bad links-shared "not linked against the staged libucpumap.so.0"
	fi
}

# Every public header from C++ (their extern "C", nothing C only), and a
# call of a function of steer.h, linked and run.
case_build_cxx() {
	local flags cxx=${CXX:-c++} h
	lib_need install
	lib_once pc_env
	if ! command -v "$cxx" > /dev/null; then
		skip build-cxx "no C++ compiler ($cxx)"
		return
	fi
	{
		for h in "$tmp"/stage/usr/include/ucpumap/*.h; do
			echo "#include <ucpumap/$(basename "$h")>"
		done
		cat <<'CXX'
int main()
{
	struct ucm_steer_cfg cfg = {};
	struct ucm_pkt pkt = {};
	uint32_t rr = 0, w = 7;

	cfg.nworkers = 1;
	return ucm_steer__pick(&cfg, &pkt, &rr) != 0 || ucm_csum_add(0, &w, sizeof(w)) == 0;
}
CXX
	} > "$tmp/all.cc"
	flags=$(pkg-config --cflags --libs libucpumap 2>&1)
	if ! "$cxx" -Wall -Werror -o "$tmp/all_cxx" "$tmp/all.cc" $flags -lpthread > "$tmp/cxx" 2>&1; then
		bad build-cxx "$(head -5 "$tmp/cxx")"
	elif ! LD_LIBRARY_PATH="$tmp/stage/usr/lib" timeout 20 "$tmp/all_cxx" > "$tmp/cxx.run" 2>&1; then
		bad build-cxx "the C++ program exited $?: $(head -3 "$tmp/cxx.run")"
	else
		ok build-cxx "$(ls "$tmp"/stage/usr/include/ucpumap/*.h | wc -l) headers from C++, ucm_steer__pick() called"
	fi
}

# The static link libucpumap(3) gives, run: the archive and what its
# pkg-config file's Libs.private name are all a program needs.
case_static_link() {
	local flags
	lib_need install
	lib_once pc_env
	flags=$(pkg-config --static --cflags --libs libucpumap 2>&1)
	if ! ${CC:-cc} -static -Wall -Werror -o "$tmp/link_static" "$progs/link_test.c" $flags -lpthread \
		> "$tmp/cc-static" 2>&1; then
		bad static-link "$(head -5 "$tmp/cc-static")"
	elif ldd "$tmp/link_static" 2>&1 | grep -q "=>"; then
		bad static-link "linked dynamically: $(ldd "$tmp/link_static" | head -3)"
	elif ! timeout 20 "$tmp/link_static" > "$tmp/static.run" 2>&1; then
		bad static-link "exit $?: $(head -3 "$tmp/static.run")"
	else
		ok static-link "$(tail -1 "$tmp/static.run")"
	fi
}

case_run() {
	local out
	lib_need build-with-pkg-config
	if out=$(LD_LIBRARY_PATH="$tmp/stage/usr/lib" timeout 20 "$tmp/link_test" 2>&1); then
		ok run
	else
		bad run "exit $?: $out"
	fi
}

# The installed bench finds ucpumapd in ../sbin (a staged copy without it:
# named, before anything is made): it gets past that to the interface.
case_bench_programs() {
	local b=$tmp/stage/usr/bin/ucpumap-bench out1 out2 why=
	lib_need install
	if [ "$(id -u)" != 0 ]; then
		skip bench-programs "the bench checks root first"
		return
	fi
	out1=$(timeout 20 "$b" datapath --dev nosuchif0 --sink-ip 198.18.9.9 --rounds 1 2>&1)
	echo "$out1" | grep -q "nosuchif0: no such interface" || why="installed: $out1;"
	mv "$tmp/stage/usr/sbin/ucpumapd" "$tmp/ucpumapd.away"
	out2=$(timeout 20 "$b" scale --dev nosuchif0 --sink-ip 198.18.9.9 --rounds 1 2>&1)
	mv "$tmp/ucpumapd.away" "$tmp/stage/usr/sbin/ucpumapd"
	echo "$out2" | grep -q "scale: no ucpumapd beside this program .* or in .*/sbin/ucpumapd" ||
		why="$why without ucpumapd: $out2"
	if [ -z "$why" ]; then ok bench-programs "ucpumapd found in sbin; named when missing"; else bad bench-programs "$why"; fi
}

# One version: the symbol map's last node (UCPUMAP_x.y.z), which the
# Makefile reads, is what pkg-config answers, names the installed library
# file, and heads NEWS.
case_version() {
	local map_v pc_v news_v so_v
	lib_need install
	lib_once pc_env
	map_v=$(sed -n 's/^UCPUMAP_\([0-9]*\.[0-9]*\.[0-9]*\) {.*/\1/p' lib/libucpumap.map | tail -n 1)
	pc_v=$(pkg-config --modversion libucpumap 2>&1)
	news_v=$(sed -n 's/^ucpumap \([0-9][0-9.]*\) .*/\1/p' NEWS | head -n 1)
	so_v=$(cd "$tmp/stage/usr/lib" && ls libucpumap.so.*.*.* 2>/dev/null | sed 's/^libucpumap\.so\.//')
	if [ -n "$map_v" ] && [ "$pc_v" = "$map_v" ] && [ "$news_v" = "$map_v" ] && [ "$so_v" = "$map_v" ]; then
		ok version
	else
		bad version "map '$map_v', pkg-config '$pc_v', NEWS '$news_v', installed libucpumap.so.'$so_v'"
	fi
}

# Exports: exactly the ucm_ symbols the headers declare, nothing internal.
case_exports() {
	local exports stray internal undeclared s
	lib_need install
	exports=$(nm -D --defined-only "$tmp/stage/usr/lib/libucpumap.so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort)
	stray=$(echo "$exports" | grep -v '^ucm_' || true)
	internal=$(echo "$exports" | grep -E '^(ucm_log|ucm_opts_copy|ucm_pool_stack_push|ucm_self_slow|ucm_umem_put_bulk_from|__ucm_)' || true)
	undeclared=""
	for s in $exports; do
		grep -q "\b$s\b" lib/include/ucpumap/*.h || undeclared="$undeclared $s"
	done
	if [ -z "$stray$internal$undeclared" ] && [ -n "$exports" ]; then
		ok exports
	else
		bad exports "stray: $stray internal: $internal undeclared:$undeclared"
	fi
}

# The static archive hides nothing from a static link: each of its globals
# (internal ones too) must carry the ucm_ prefix, so none can collide with
# a name of the program or of another library.
case_static_exports() {
	local globals stray
	lib_need install
	globals=$(nm -g --defined-only "$tmp/stage/usr/lib/libucpumap.a" 2>/dev/null |
		  awk 'NF == 3 { print $3 }' | sort -u)
	stray=$(echo "$globals" | grep -v '^ucm_' | paste -sd ' ')
	if [ -n "$globals" ] && [ -z "$stray" ]; then
		ok static-exports
	else
		bad static-exports "globals of libucpumap.a without the ucm_ prefix: ${stray:-(no globals found)}"
	fi
}

lib_run_cases "$@"
