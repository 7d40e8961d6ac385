#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The rules of the tree's shape (docs/design/overview.md, "Layers"), checked.

  check-structure.py BUILD_DIR

Prints one "PASS: test-structure/RULE" or "FAIL: test-structure/RULE: WHY"
line per rule:
  includes       a file of a layer includes only its own layer's and lower
                 layers' headers, private ("core/internal.h") or public
                 ("ucpumap/pool.h"); a public header likewise
  symbols        an object of a layer calls only functions of its own layer
                 and lower ones (nm on BUILD_DIR's release objects)
  no-mutual      no two files of the library call each other's functions
  function-size  no function over 100 lines in lib/, xsk/ or apps/
  file-size      no source file over 800 lines in lib/, xsk/ or apps/: a
                 file that grows past it holds two concerns, and splits
                 at their seam
  app-globals    no header of apps/ declares a variable: a program's files
                 pass what they share (the bench's struct bench_run)
  daemon-api     the datapath is not in the daemon: apps/ucpumapd/ calls
                 only ucm_dp's API (ucm_dp_*: ucm_dp__*, ucm_dp_stats__*,
                 ucm_dp_fault_str), the log's, the latency buckets' (api.h)
                 and the names of drop and pass reasons, and no file of it
                 is over 700 lines
  reserved-names no name of ours in lib/ or xsk/ begins with an underscore
                 (_ucm, __ucm, _UCM, ...: reserved in C, C11 7.1.3), and no
                 public header defines a macro that does; a static inline helper
                 that is not API ends in one instead (ucm_ring_copy_in_)
"""
import glob
import os
import re
import subprocess
import sys

LAYERS = ["lib/core", "lib/proto", "lib/engine", "lib/io", "xsk"]
# The public headers, each in the layer whose code it describes.
PUBLIC = {
    "api": 0, "log": 0, "ring": 0, "pool": 0,
    "pkt": 1, "gso": 1, "steer": 1, "csum": 1, "flowhash": 1,
    "cpumap": 2, "txq": 2,
    "tun": 3,
    "xsk": 4, "xdp": 4, "dp": 4,
}
PRIVATE = {"core": 0, "proto": 1, "engine": 2, "io": 3}
FUNC_MAX = 100
FILE_MAX = 800
DAEMON_MAX = 700

fails = 0


def verdict(rule, problems):
    global fails
    if problems:
        fails += 1
        print("FAIL: test-structure/%s: %s" % (rule, "; ".join(problems[:12])))
    else:
        print("PASS: test-structure/%s" % rule)


def layer_of(path):
    for i, l in enumerate(LAYERS):
        if path.startswith(l + "/"):
            return i
    if path.startswith("lib/include/ucpumap/"):
        return PUBLIC.get(os.path.basename(path)[:-2])
    return None


def check_includes():
    problems = []
    files = glob.glob("lib/*/*.[ch]") + glob.glob("xsk/*.[ch]") + \
        glob.glob("lib/include/ucpumap/*.h")
    for f in sorted(files):
        me = layer_of(f)
        if me is None:
            problems.append("%s belongs to no layer" % f)
            continue
        text = open(f).read()
        incs = re.findall(r'#include "([^"]+)"', text)
        incs += re.findall(r'#include <(ucpumap/[^>]+)>', text)
        for inc in incs:
            top, _, name = inc.partition("/")
            if not name and os.path.exists(os.path.join(os.path.dirname(f), inc)):
                their = me      # a private header beside the file: its layer
            elif top == "ucpumap":
                their = PUBLIC.get(name[:-2])
            else:
                their = PRIVATE.get(top)
            if their is None:
                problems.append("%s includes %s, of no layer" % (f, inc))
            elif their > me:
                problems.append("%s (%s) includes %s, a layer above" %
                                (f, LAYERS[me], inc))
    verdict("includes", problems)


def nm(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def check_symbols(build):
    objs = {}
    for i, l in enumerate(LAYERS):
        for src in glob.glob(l + "/*.c"):
            obj = os.path.join(build, src[:-2] + ".o")
            if not os.path.exists(obj):
                verdict("symbols", ["%s is not built (make)" % obj])
                return
            objs[src] = (i, ) + nm(obj)
    owner = {}
    for src, (i, defined, _) in objs.items():
        for s in defined:
            owner[s] = src
    uses = {}
    layering = []
    for src, (i, _, used) in sorted(objs.items()):
        for s in used:
            other = owner.get(s)
            if not other or other == src:
                continue
            uses.setdefault(src, set()).add(other)
            if objs[other][0] > i:
                layering.append("%s calls %s of %s, a layer above" % (src, s, other))
    verdict("symbols", sorted(set(layering)))
    mutual = sorted("%s <-> %s" % (a, b) for a in uses for b in uses[a]
                    if a < b and a in uses.get(b, ()))
    verdict("no-mutual", mutual)


def check_functions():
    problems = []
    files = glob.glob("lib/*/*.c") + glob.glob("xsk/*.c") + glob.glob("apps/*/*.c")
    for f in sorted(files):
        lines = open(f).read().split("\n")
        start = None
        for i, line in enumerate(lines):
            if line == "{":
                start = i
            elif line == "}" and start is not None:
                if i - start + 1 > FUNC_MAX:
                    j = start - 1
                    while j > 0 and not re.match(r"^[A-Za-z_].*\(", lines[j]):
                        j -= 1
                    name = re.search(r"(\w+)\s*\(", lines[j])
                    problems.append("%s:%d %s is %d lines" % (
                        f, j + 1, name.group(1) if name else "?", i - start + 1))
                start = None
    verdict("function-size", problems)


def check_files():
    problems = []
    files = glob.glob("lib/*/*.c") + glob.glob("xsk/*.c") + glob.glob("apps/*/*.c")
    for f in sorted(files):
        n = open(f).read().count("\n")
        if n > FILE_MAX:
            problems.append("%s is %d lines" % (f, n))
    verdict("file-size", problems)


def check_app_globals():
    problems = []
    decl = re.compile(r"^extern\s+(?!\"C\")[^(]*;", re.M)
    for f in sorted(glob.glob("apps/*/*.h")):
        text = open(f).read()
        for m in decl.finditer(text):
            problems.append("%s:%d %s" % (f, text.count("\n", 0, m.start()) + 1,
                                          m.group(0)))
    verdict("app-globals", problems)


DAEMON_CALLS = re.compile(r"^(ucm_dp_|ucm_set_print$|"
                          r"ucm_drop_reason_str$|ucm_pass_reason_str$|ucm_lat_)")


def check_daemon():
    problems = []
    for f in sorted(glob.glob("apps/ucpumapd/*.[ch]")):
        text = open(f).read()
        n = text.count("\n")
        # Comments may name anything; the newlines stay for line numbers.
        text = re.sub(r"/\*.*?\*/|//[^\n]*",
                      lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        if n > DAEMON_MAX:
            problems.append("%s is %d lines, more than %d" % (f, n, DAEMON_MAX))
        for m in re.finditer(r"\b(ucm_\w+)\s*\(", text):
            if not DAEMON_CALLS.match(m.group(1)):
                problems.append("%s:%d calls %s" % (
                    f, text.count("\n", 0, m.start()) + 1, m.group(1)))
    verdict("daemon-api", problems)


def check_reserved():
    problems = []
    ours = re.compile(r"(?<![\w])_+(ucm|ucpumap)\w*", re.I)
    macro = re.compile(r"^\s*#\s*define\s+(_\w*)", re.M)
    files = glob.glob("lib/include/ucpumap/*.h") + glob.glob("lib/*/*.[ch]") + \
        glob.glob("xsk/*.[ch]")
    for f in sorted(files):
        text = open(f).read()
        for m in ours.finditer(text):
            problems.append("%s:%d %s" % (f, text.count("\n", 0, m.start()) + 1,
                                          m.group(0)))
        if f.startswith("lib/include/"):
            for m in macro.finditer(text):
                problems.append("%s:%d #define %s" % (
                    f, text.count("\n", 0, m.start()) + 1, m.group(1)))
    verdict("reserved-names", problems)


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    # The file lists are the tree's: read from its top, wherever called.
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    check_includes()
    check_symbols(build)
    check_functions()
    check_files()
    check_app_globals()
    check_daemon()
    check_reserved()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
