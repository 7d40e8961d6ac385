#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The man pages (man/*.3, man/*.8): each renders without a warning, with
# groff (`groff -man -ww -z`) and, when man-db is there, with
# `man --warnings -l`; the library page's example compiles against the
# headers; and each program's page agrees with its --help:
#   - every option --help lists (long and short) is an entry of the page
#     (the tag of a .TP paragraph);
#   - every entry of the page is an option --help lists;
#   - every --option the page mentions anywhere is one that --help text
#     names (ucpumap-bench's page may also name ucpumapd's options: its
#     rows are ucpumapd's modes).
#
# The cases: pages, render (render-PAGE, man-PAGE), example-compiles,
# options-ucpumapd, options-ucpumap-gen, options-ucpumap-bench.
# Needs no root and runs nothing but --help.
set -u
BUILD=${BUILD:-build}
name=test-man
cases="pages render example-compiles options-ucpumapd options-ucpumap-gen options-ucpumap-bench"
cd "$(dirname "$0")/../.."
. tests/lib.sh

PAGES="libucpumap.3 ucm_dp.3 ucpumapd.8 ucpumap-gen.8 ucpumap-bench.8"

case_pages() {
	local p miss
	miss=""
	for p in $PAGES; do
		[ -f "man/$p" ] || miss="$miss $p"
	done
	[ -z "$miss" ] && ok pages || bad pages "missing:$miss"
}

# ---- rendering -------------------------------------------------------------
case_render() {
	local f p out
	for f in man/*.3 man/*.8; do
		[ -f "$f" ] || continue
		p=$(basename "$f")
		if ! command -v groff > /dev/null 2>&1; then
			skip "render-$p" "groff is not installed (Debian: groff-base; scripts/install-deps.sh installs it)"
			continue
		fi
		out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$f" 2>&1)
		if [ -n "$out" ]; then
			bad "render-$p" "groff: $(echo "$out" | head -3 | tr '\n' ' ')"
			continue
		fi
		if ! command -v man > /dev/null 2>&1; then
			ok "render-$p"
			skip "man-$p" "man is not installed (Debian: man-db; scripts/install-deps.sh installs it)"
			continue
		fi
		out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 > /dev/null)
		if [ -n "$out" ]; then
			bad "render-$p" "man: $(echo "$out" | head -3 | tr '\n' ' ')"
		else
			ok "render-$p"
		fi
	done
}

# ---- the example of libucpumap(3) ----------------------------------------------
# The first .EX block of EXAMPLES, with roff's escapes undone.
case_example_compiles() {
	local out
	awk '/^\.SH EXAMPLES/ { f = 1 } f && /^\.EX/ { g = 1; next } g && /^\.EE/ { exit } g' \
		man/libucpumap.3 2>/dev/null | sed 's/\\e/\\/g; s/\\-/-/g; s/\\&//g' > "$tmp/example.c"
	if [ ! -s "$tmp/example.c" ]; then
		bad example-compiles "no example in man/libucpumap.3"
	elif out=$(${CC:-cc} -fsyntax-only -Wall -Wextra -Werror -Ilib/include "$tmp/example.c" 2>&1); then
		ok example-compiles
	else
		bad example-compiles "$(echo "$out" | head -5 | tr '\n' ' ')"
	fi
}

# ---- options ----------------------------------------------------------------

# The page's source with escapes undone: \- is -, fonts and \c, \& go.
plain() {
	grep -v '^\.\\"' "$1" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' \
		-e 's/\\c//g' -e 's/\\&//g'
}

# Long and short options in text on stdin, one per line, sorted.
longs() { grep -oE -- '--[a-z0-9][a-z0-9-]*[a-z0-9]' | sort -u; }
shorts() { grep -oE -- '(^|[^A-Za-z0-9-])-[A-Za-z0-9]([^A-Za-z0-9-]|$)' | grep -oE -- '-[A-Za-z0-9]' | sort -u; }

# The options a --help defines: its "  -x, --name ARG" lines.
heads() { grep -E -- '^  (-[A-Za-z0-9], )?--[a-z0-9-]+' | sed -E 's/^  ((-[A-Za-z0-9]), )?(--[a-z0-9-]+).*/\2 \3/'; }

# The tags of the page's .TP paragraphs.
tags() { plain "$1" | awk 'prev == ".TP" { print } { prev = $0 }'; }

# check PAGE CASE HELP_FILE OTHER_HELP_FILE (whose options the page may name)
check() {
	local page=$1 case=$2 help=$3 extra=$4 msg=""
	local defined_l defined_s tag_l tag_s mention known o

	defined_l=$(heads < "$help" | awk '{ print $NF }' | sort -u)
	defined_s=$(heads < "$help" | awk 'NF == 2 { print $1 }' | sort -u)
	tag_l=$(tags "$page" | longs)
	tag_s=$(tags "$page" | shorts)
	mention=$(plain "$page" | longs)
	known=$(cat "$help" "$extra" | longs)
	for o in $defined_l $defined_s; do
		echo "$tag_l $tag_s" | tr ' ' '\n' | grep -qx -- "$o" || msg="$msg not in the page: $o;"
	done
	for o in $tag_l; do
		echo "$defined_l" | grep -qx -- "$o" || msg="$msg an entry --help does not list: $o;"
	done
	for o in $tag_s; do
		echo "$defined_s" | grep -qx -- "$o" || msg="$msg an entry --help does not list: $o;"
	done
	for o in $mention; do
		echo "$known" | grep -qx -- "$o" || msg="$msg mentioned but unknown to --help: $o;"
	done
	if [ -z "$defined_l" ]; then
		bad "$case" "no options found in --help"
	elif [ -n "$msg" ]; then
		bad "$case" "$msg"
	else
		ok "$case"
	fi
}

help_of() {	# file, program, arguments...
	local f=$1 prog=$2
	shift 2
	"$BUILD/$prog" "$@" --help >> "$f" 2>&1
}

: > "$tmp/none"
# ucpumapd's --help, which ucpumap-bench's page may name too.
daemon_help() { [ -x "$BUILD/ucpumapd" ] && help_of "$tmp/ucpumapd" ucpumapd; }

case_options_ucpumapd() {
	if lib_once daemon_help; then
		check man/ucpumapd.8 options-ucpumapd "$tmp/ucpumapd" "$tmp/none"
	else
		bad options-ucpumapd "$BUILD/ucpumapd --help failed (make first)"
	fi
}

case_options_ucpumap_gen() {
	if [ -x "$BUILD/ucpumap-gen" ] && help_of "$tmp/gen" ucpumap-gen; then
		check man/ucpumap-gen.8 options-ucpumap-gen "$tmp/gen" "$tmp/none"
	else
		bad options-ucpumap-gen "$BUILD/ucpumap-gen --help failed (make first)"
	fi
}

case_options_ucpumap_bench() {
	lib_once daemon_help
	if [ -x "$BUILD/ucpumap-bench" ] && help_of "$tmp/bench" ucpumap-bench &&
	   help_of "$tmp/bench" ucpumap-bench engine && help_of "$tmp/bench" ucpumap-bench datapath &&
	   help_of "$tmp/bench" ucpumap-bench scale; then
		check man/ucpumap-bench.8 options-ucpumap-bench "$tmp/bench" "$tmp/ucpumapd"
	else
		bad options-ucpumap-bench "$BUILD/ucpumap-bench --help failed (make first)"
	fi
}

lib_run_cases "$@"
