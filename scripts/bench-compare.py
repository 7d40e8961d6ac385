#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Two builds' `ucpumap-bench datapath --json` runs, row by row.

  bench-compare.py BEFORE.json[,BEFORE2.json...] AFTER.json[,AFTER2.json...]

Prints a Markdown table: per row, the median of every run of every file on
each side (the runs in brackets) and after / before. Rows that run no
ucpumap code (kernel-*, tcp-kernel, dpdk) show the machine's drift between
the sides: read the others against them. Rates are in Mpps or Gbit/s,
latencies (unit us) in microseconds, where after / before above 1 is slower.
"""
import json
import statistics
import sys


def load(files):
    rows, order = {}, []
    for path in files.split(","):
        for r in json.load(open(path))["rows"]:
            if "runs" not in r:
                continue
            if r["name"] not in rows:
                order.append(r["name"])
            rows.setdefault(r["name"], (r.get("unit", "pps"), []))[1].extend(r["runs"])
    return rows, order


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, order = load(sys.argv[1])
    after, _ = load(sys.argv[2])
    print("| row | unit | before: median (runs) | after: median (runs) | after / before |")
    print("|---|---|---|---|---|")
    for name in order:
        unit, bv = before[name]
        av = after.get(name, (unit, []))[1]
        scale, label = {"pps": (1e6, "Mpps"), "us": (1, "us")}.get(unit, (1e9, "Gbit/s"))
        if not bv or not av:
            print("| %s | %s | missing on one side | | |" % (name, label))
            continue
        mb, ma = statistics.median(bv) / scale, statistics.median(av) / scale
        fmt = lambda v: ", ".join("%.3f" % (x / scale) for x in v)
        print("| %s | %s | %.3f (%s) | %.3f (%s) | %.2f |" %
              (name, label, mb, fmt(bv), ma, fmt(av), ma / mb if mb else 0))


if __name__ == "__main__":
    main()
