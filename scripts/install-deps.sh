#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Install the Debian (12, bookworm) packages ucpumap needs, and only those that
# are missing. When everything is installed it changes nothing and does not
# call apt-get at all.
#
#   scripts/install-deps.sh               build + test/run/ABI check/benchmark + packaging
#   scripts/install-deps.sh --build-only  only what `make` needs
#
# Must run as root when something is missing.

set -euo pipefail

# What configure and `make` need.
BUILD_PKGS="gcc make libxdp-dev libbpf-dev libelf-dev zlib1g-dev liburing-dev libsystemd-dev libseccomp-dev clang llvm pkg-config"
# What the tests, benchmarks and scripts run: veth/netns setup, traffic,
# capture, plots, BPF inspection, file capabilities (setcap), python3 for
# the tests' JSON checks, and
# for `make fuzz` clang 14's libFuzzer and sanitizer runtimes
# (libclang-rt-14-dev; without it the fuzz targets do not link).
TEST_PKGS="iproute2 ethtool iperf3 sockperf socat curl tcpdump gnuplot-nox bpftool libcap2-bin python3 groff-base man-db libclang-rt-14-dev procps strace linux-perf"
# `make check-abi`: libabigail's abidw and abidiff.
ABI_PKGS="abigail-tools"
# The benchmark's dpdk row: dpdk-testpmd (in dpdk-dev) with its AF_XDP and
# tap drivers. Without them the row says it was skipped.
BENCH_PKGS="dpdk-dev librte-net-af-xdp23 librte-net-tap23"
# Building and checking the Debian packages (debian/, scripts/build-deb.sh,
# tests/apps/test-deb.sh); dpkg-buildpackage requires build-essential itself,
# and build-deb.sh builds a git clone of HEAD.
PACKAGE_PKGS="build-essential debhelper dpkg-dev fakeroot git lintian"

usage()
{
    sed -n '4,11p' "$0" | sed 's/^# \{0,1\}//'
}

pkgs="$BUILD_PKGS $TEST_PKGS $ABI_PKGS $BENCH_PKGS $PACKAGE_PKGS"
for arg in "$@"; do
    case "$arg" in
        --build-only) pkgs="$BUILD_PKGS" ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install-deps.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
    esac
done

installed()
{
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

missing=()
for pkg in $pkgs; do
    if ! installed "$pkg"; then
        missing+=("$pkg")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps.sh: all dependencies present"
    exit 0
fi

echo "install-deps.sh: missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps.sh: installing them needs root; run:" >&2
    echo "  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}" >&2
    echo "or run this script as root." >&2
    exit 1
fi

apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"

# Verify: apt-get can succeed without installing a package that is on hold.
still=()
for pkg in "${missing[@]}"; do
    installed "$pkg" || still+=("$pkg")
done
if [ ${#still[@]} -ne 0 ]; then
    echo "install-deps.sh: still not installed: ${still[*]}" >&2
    exit 1
fi
echo "install-deps.sh: installed ${missing[*]}"
