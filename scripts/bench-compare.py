#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Two builds' `ucpumap-bench datapath --json` runs, row by row.

  bench-compare.py BEFORE.json[,BEFORE2.json...] AFTER.json[,AFTER2.json...]

Prints a Markdown table: per row of either side (in the order first seen),
the median of every run of every file on each side (the runs in brackets)
and after / before; a row with runs on one side only says "missing on one
side". Other benches' files (engine, scale), an unreadable file or one
without the keys, runs made under other conditions, or other arguments:
a message and exit 2. Rows that run no
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


# The units of a datapath row's "runs": how to print them.
UNITS = {"pps": (1e6, "Mpps"), "bit/s": (1e9, "Gbit/s"), "us": (1, "us")}


# A latency a lost probe's rank gave: 100 ms, a lower bound (the bench's
# LAT_LOST_US, its JSON's "lost_probe_us").
LOST_US = 100000


def median(unit, runs):
    """The median; of an even count of latencies whose upper middle is a
    lost probe's bound, that bound (not its mean with a measure)."""
    if unit == "us" and len(runs) % 2 == 0 and statistics.median_high(runs) >= LOST_US:
        return statistics.median_high(runs)
    return statistics.median(runs)


def fail(msg):
    print("bench-compare.py: " + msg, file=sys.stderr)
    sys.exit(2)


def load(files, rows, order):
    """Each file's runs into @rows (name: (unit, runs)), every row's name
    into @order the first time it is seen (skipped rows too); the files'
    conditions."""
    conds = {}
    for path in files.split(","):
        try:
            with open(path) as f:
                d = json.load(f)
        except OSError as e:
            fail(f"{path}: {e.strerror}")
        except ValueError as e:
            fail(f"{path}: not JSON: {e}")
        if not isinstance(d, dict) or "bench" not in d:
            fail(f"{path}: no \"bench\" key: not a ucpumap-bench --json file")
        if d["bench"] != "datapath":
            fail(f"{path}: \"bench\" is {d['bench']!r}, not 'datapath': this "
                 f"compares `ucpumap-bench datapath --json` files only")
        if not isinstance(d.get("rows"), list):
            fail(f"{path}: no \"rows\" list")
        c = {k: (d.get("conditions") or {}).get(k) for k in SAME}
        c.update({k: d.get(k) for k in ("dev", "cpus", "mtu", "rate")})
        conds[path] = c
        for i, r in enumerate(d["rows"]):
            if not isinstance(r, dict) or not isinstance(r.get("name"), str):
                fail(f"{path}: row {i + 1} has no \"name\"")
            name = r["name"]
            if name not in order:
                order.append(name)
            if "runs" not in r:
                continue  # skipped, or failed: no figure
            unit, runs = r.get("unit"), r["runs"]
            if unit not in UNITS:
                fail(f"{path}: row {name}: unit {unit!r}, not one of {', '.join(UNITS)}")
            if not isinstance(runs, list) or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in runs):
                fail(f"{path}: row {name}: \"runs\" is not a list of numbers")
            have = rows.setdefault(name, (unit, []))
            if have[0] != unit:
                fail(f"{path}: row {name} in {unit!r}, elsewhere in {have[0]!r}")
            have[1].extend(runs)
    return conds


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    before, after, order = {}, {}, []
    cb = load(sys.argv[1], before, order)
    ca = load(sys.argv[2], after, order)
    runs = [(p, c) for p, c in cb.items()] + [(p, c) for p, c in ca.items()]
    # Each condition against the first file that recorded it (files from
    # before the JSON recorded its conditions have none: unchecked).
    for k in runs[0][1]:
        have = [(p, c[k]) for p, c in runs if c[k] is not None]
        for p, v in have[1:]:
            if v != have[0][1]:
                fail(f"{p} was run otherwise: {k} {v!r}, {have[0][0]} {have[0][1]!r}")
    print("| row | unit | before: median (runs) | after: median (runs) | after / before |")
    print("|---|---|---|---|---|")
    # Every row of either side, in the order first seen: a row skipped or
    # absent on one side says so.
    for name in order:
        unit, bv = before.get(name, (None, []))
        unit, av = after.get(name, (unit, []))
        if unit is None:
            print("| %s | | skipped on both sides | | |" % name)
            continue
        if before.get(name, (unit,))[0] != unit:
            fail(f"row {name}: {before[name][0]!r} before, {unit!r} after")
        scale, label = UNITS[unit]
        if not bv or not av:
            print("| %s | %s | missing on one side: no runs %s | | |" %
                  (name, label, "before" if not bv else "after"))
            continue
        mb, ma = median(unit, bv) / scale, median(unit, av) / scale
        fmt = lambda v: ", ".join("%.3f" % (x / scale) for x in v)
        print("| %s | %s | %.3f (%s) | %.3f (%s) | %.2f |" %
              (name, label, mb, fmt(bv), ma, fmt(av), ma / mb if mb else 0))


if __name__ == "__main__":
    main()
