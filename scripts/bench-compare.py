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


# What two runs must hold equal to be compared (the JSON's "conditions",
# from 2026-12-06 on; rounds and the kernel may differ).
SAME = ("gen_engine", "ip", "rx_cpus", "queues", "wait", "spin_us", "zero_copy")


def load(files):
    rows, order, conds = {}, [], {}
    for path in files.split(","):
        d = json.load(open(path))
        c = {k: d.get("conditions", {}).get(k) for k in SAME}
        c.update({k: d.get(k) for k in ("dev", "cpus", "mtu", "rate")})
        conds[path] = c
        for r in d["rows"]:
            if "runs" not in r:
                continue
            if r["name"] not in rows:
                order.append(r["name"])
            rows.setdefault(r["name"], (r.get("unit", "pps"), []))[1].extend(r["runs"])
    return rows, order, conds


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, order, cb = load(sys.argv[1])
    after, _, ca = load(sys.argv[2])
    runs = [(p, c) for p, c in cb.items()] + [(p, c) for p, c in ca.items()]
    # Each condition against the first file that recorded it (files from
    # before the JSON recorded its conditions have none: unchecked).
    for k in runs[0][1]:
        have = [(p, c[k]) for p, c in runs if c[k] is not None]
        for p, v in have[1:]:
            if v != have[0][1]:
                sys.exit(f"bench-compare.py: {p} was run otherwise: {k} {v!r}, "
                         f"{have[0][0]} {have[0][1]!r}")
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
