#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Clients of ucpumapd --metrics-listen for tests/net/test-metrics.sh: a
scraper with a strict parser of Prometheus' text format 0.0.4, and bad
clients. Every mode bounds itself in time and prints one JSON line.

  scrape       GET /metrics (again until --deadline on a refusal or a
               503): status, Content-Type, Content-Length, and the whole
               body through parse(); sums of the families the test checks
  http-errors  each wrong request and the answer it must get
  garbage      bytes that are no request: a 400, or a close
  slowloris    a request one byte per 300 ms: when the server cut it off,
               and how long a scrape took meanwhile
  storm        N connections at once, held while a scrape must still get
               through, then closed
  hold         N idle connections (every slot the server has), then one
               scrape, not retried: what it got; --answered: each asks
               first and reads nothing of its answer
  flood        idle connections opened without pause for --seconds
               (each closed after 1 s), every slot always younger than
               the server's eviction age; meanwhile a scrape every
               0.1 s, each tried once: how many got 200, what the
               others got
  big          a request of N bytes: 414/431, or a close
"""
import argparse
import errno
import json
import math
import multiprocessing
import os
import re
import resource
import select
import socket
import sys
import time

CTYPE = "text/plain; version=0.0.4; charset=utf-8"
NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
# Go's ParseFloat as Prometheus takes it, and the three specials.
VALUE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\Z|[+-]?Inf\Z|NaN\Z")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


# ---- the parser -----------------------------------------------------------------

def parse_labels(s, where):
    """'a="x",b="y\\"z"' -> {a: x, b: y"z}; ValueError on anything else."""
    out, i = {}, 0
    while i < len(s):
        m = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"").match(s, i)
        if not m:
            raise ValueError("%s: bad label at %r" % (where, s[i:i + 20]))
        name, i, val = m.group(1), m.end(), []
        while True:
            if i >= len(s):
                raise ValueError("%s: unterminated label value" % where)
            c = s[i]
            if c == "\\":
                e = s[i + 1:i + 2]
                if e not in ("\\", "\"", "n"):
                    raise ValueError("%s: bad escape \\%s" % (where, e))
                val.append("\n" if e == "n" else e)
                i += 2
            elif c == "\"":
                i += 1
                break
            elif c == "\n":
                raise ValueError("%s: newline in a label value" % where)
            else:
                val.append(c)
                i += 1
        if name.startswith("__"):
            raise ValueError("%s: reserved label name %s" % (where, name))
        if name in out:
            raise ValueError("%s: label %s twice" % (where, name))
        out[name] = "".join(val)
        if i < len(s):
            if s[i] != ",":
                raise ValueError("%s: ',' expected after label %s" % (where, name))
            i += 1
            if i == len(s):
                raise ValueError("%s: trailing ','" % where)
    return out


def family_of(name, types):
    """The family a sample belongs to: its name, or a histogram's base."""
    if name in types:
        return name
    for suf in ("_bucket", "_sum", "_count"):
        base = name[:-len(suf)]
        if name.endswith(suf) and types.get(base) in ("histogram", "summary"):
            if suf == "_bucket" and types[base] == "summary":
                break
            return base
    return None


def parse(text):
    """Strict text format 0.0.4. Return (families {name: type}, samples
    [(name, labels, value)], problems [str])."""
    problems, types, helps, samples = [], {}, set(), []
    seen_series, done, current = set(), set(), None
    if not text.endswith("\n"):
        problems.append("the body does not end with a newline")
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d" % n
        try:
            if line.startswith("#"):
                parts = line.split(" ", 3)
                if len(parts) < 3 or parts[0] != "#" or parts[1] not in ("HELP", "TYPE"):
                    raise ValueError("%s: a comment that is neither HELP nor TYPE: %r" % (where, line))
                name = parts[2]
                if not NAME.match(name):
                    raise ValueError("%s: bad metric name %r" % (where, name))
                if parts[1] == "HELP":
                    if name in helps:
                        raise ValueError("%s: HELP for %s twice" % (where, name))
                    if len(parts) < 4 or not parts[3].strip():
                        raise ValueError("%s: empty HELP for %s" % (where, name))
                    if re.search(r"\\[^\\n]", parts[3]):
                        raise ValueError("%s: bad escape in HELP" % where)
                    if name in done or name == current:
                        raise ValueError("%s: HELP for %s after its samples" % (where, name))
                    helps.add(name)
                else:
                    if len(parts) != 4 or parts[3] not in TYPES:
                        raise ValueError("%s: bad TYPE line %r" % (where, line))
                    if name in types:
                        raise ValueError("%s: TYPE for %s twice" % (where, name))
                    if name in done or any(s[0] == name for s in samples):
                        raise ValueError("%s: TYPE for %s after its samples" % (where, name))
                    types[name] = parts[3]
                continue
            if not line:
                raise ValueError("%s: an empty line" % where)
            m = re.match(r"([^{ ]+)(\{(.*)\})? ([^ ]+)( (-?\d+))?\Z", line)
            if not m:
                raise ValueError("%s: not 'name{labels} value': %r" % (where, line))
            name, labels, value = m.group(1), parse_labels(m.group(3) or "", where), m.group(4)
            if not NAME.match(name):
                raise ValueError("%s: bad metric name %r" % (where, name))
            if not VALUE.match(value):
                raise ValueError("%s: bad value %r" % (where, value))
            fam = family_of(name, types)
            if fam is None:
                raise ValueError("%s: sample %s without a TYPE before it" % (where, name))
            if fam != current:
                if fam in done:
                    raise ValueError("%s: family %s again after others" % (where, fam))
                if current:
                    done.add(current)
                current = fam
            key = (name, tuple(sorted(labels.items())))
            if key in seen_series:
                raise ValueError("%s: series %s%s twice" % (where, name, labels))
            seen_series.add(key)
            if types[fam] == "counter" and not name.endswith("_total"):
                raise ValueError("%s: counter %s does not end in _total" % (where, name))
            if types[fam] == "histogram" and name.endswith("_bucket") and "le" not in labels:
                raise ValueError("%s: bucket without le" % where)
            samples.append((name, labels, float(value)))
        except ValueError as e:
            problems.append(str(e))
    problems += check_histograms(types, samples)
    for name in types:
        if name not in helps:
            problems.append("no HELP for %s" % name)
    return types, samples, problems


def check_histograms(types, samples):
    problems = []
    for fam, t in types.items():
        if t != "histogram":
            continue
        series = {}
        for name, labels, v in samples:
            if family_of(name, types) != fam:
                continue
            rest = tuple(sorted((k, x) for k, x in labels.items() if k != "le"))
            s = series.setdefault(rest, {"buckets": [], "sum": None, "count": None})
            if name == fam + "_bucket":
                le = labels["le"]
                if not VALUE.match(le):
                    problems.append("%s%s: le %r is not a number" % (fam, dict(rest), le))
                    continue
                s["buckets"].append((float(le), v))
            elif name == fam + "_sum":
                s["sum"] = v
            elif name == fam + "_count":
                s["count"] = v
        for rest, s in series.items():
            where = "%s%s" % (fam, dict(rest))
            b = s["buckets"]
            if [x[0] for x in b] != sorted(x[0] for x in b):
                problems.append("%s: buckets not in increasing le" % where)
            if any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
                problems.append("%s: buckets not cumulative: %s" % (where, b))
            if not b or not math.isinf(b[-1][0]):
                problems.append("%s: no le=\"+Inf\" bucket" % where)
            elif s["count"] is None or s["sum"] is None:
                problems.append("%s: _count or _sum missing" % where)
            elif b[-1][1] != s["count"]:
                problems.append("%s: +Inf %d != _count %d" % (where, b[-1][1], s["count"]))
    return problems


# ---- HTTP -----------------------------------------------------------------------

def connect(a, timeout):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect((a.addr, a.port))
    return s


def read_all(s, deadline):
    """Everything until the server closes (or the deadline): bytes, and
    how it ended: 'eof', 'reset' or 'timeout'."""
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return data, "timeout"
        s.settimeout(left)
        try:
            b = s.recv(65536)
        except socket.timeout:
            return data, "timeout"
        except ConnectionResetError:
            return data, "reset"
        if not b:
            return data, "eof"
        data += b


def split_response(data):
    """(status, {header: value}, body), or (None, {}, b'') if not HTTP."""
    head, sep, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3}) ", lines[0] + " ")
    if not sep or not m:
        return None, {}, b""
    hdrs = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return int(m.group(1)), hdrs, body


def request(a, raw, timeout=3.0):
    s = connect(a, timeout)
    try:
        s.sendall(raw)
        data, how = read_all(s, time.monotonic() + timeout)
    finally:
        s.close()
    return split_response(data) + (how,)


def scrape_once(a):
    t0 = time.monotonic()
    status, hdrs, body, how = request(a, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    return status, hdrs, body, how, time.monotonic() - t0


def scrape_retry(a, deadline):
    """Until a 200 (a 503 or a refusal: again, every 0.2 s)."""
    tries = 0
    while True:
        tries += 1
        try:
            r = scrape_once(a)
            if r[0] == 200 or time.monotonic() > deadline:
                return r + (tries,)
        except OSError as e:
            if time.monotonic() > deadline:
                return (None, {}, b"", "error: %s" % e, 0, tries)
        time.sleep(0.2)


def summarize(r):
    status, hdrs, body, how, secs, tries = r
    res = {"status": status, "how": how, "ms": round(secs * 1000), "tries": tries,
           "problems": []}
    p = res["problems"]
    if status != 200:
        p.append("status %s (%s)" % (status, how))
        return res
    if hdrs.get("content-type") != CTYPE:
        p.append("Content-Type %r, want %r" % (hdrs.get("content-type"), CTYPE))
    if hdrs.get("content-length") != str(len(body)):
        p.append("Content-Length %s, body %d bytes" % (hdrs.get("content-length"), len(body)))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        p.append("not UTF-8: %s" % e)
        return res
    types, samples, problems = parse(text)
    p += problems[:10]
    res["families"] = types
    res["samples"] = len(samples)

    def total(name, **match):
        return sum(v for n, l, v in samples
                   if n == name and all(l.get(k) == x for k, x in match.items()))
    res["rx"] = total("ucpumap_rx_packets_total")
    res["rx_descs"] = total("ucpumap_rx_descriptors_total")
    res["rx_chain_more"] = total("ucpumap_rx_chain_more_total")
    res["delivered"] = total("ucpumap_delivered_packets_total")
    res["drops_in"] = total("ucpumap_drops_total", way="in")
    res["queues"] = sorted(l["queue"] for n, l, v in samples if n == "ucpumap_rx_packets_total")
    res["workers"] = sorted(l["worker"] for n, l, v in samples
                            if n == "ucpumap_delivered_packets_total")
    res["coalesce_count"] = total("ucpumap_coalesce_segments_count")
    res["neigh"] = {k: total("ucpumap_back_neigh_%s_total" % k)
                    for k in ("questions", "requests", "evicted", "refused")}
    res["back_drops"] = {l["reason"]: v for n, l, v in samples
                         if n == "ucpumap_drops_total" and l.get("way") == "back"}
    res["reasons"] = sorted(l["reason"] for n, l, v in samples
                            if n == "ucpumap_drops_total" and l.get("way") == "in")
    res["build_info"] = ["%s=%g" % (l.get("version"), v) for n, l, v in samples
                         if n == "ucpumap_build_info"]
    res["drops_by_reason"] = {l["reason"]: v for n, l, v in samples
                              if n == "ucpumap_drops_total" and l.get("way") == "in"}
    res["xdp_pass"] = {l["reason"]: v for n, l, v in samples
                       if n == "ucpumap_xdp_pass_total"}
    res["conn_dropped"] = {l["reason"]: v for n, l, v in samples
                           if n == "ucpumap_metrics_connections_dropped_total"}
    res["up"] = total("ucpumap_up")
    res["link_up"] = {"%s:%s" % (l.get("role"), l.get("dev")): v for n, l, v in samples
                      if n == "ucpumap_link_up"}
    return res


def cmd_scrape(a):
    emit(summarize(scrape_retry(a, time.monotonic() + a.deadline)))


# ---- bad clients ----------------------------------------------------------------

def cmd_http_errors(a):
    cases = [("POST /metrics HTTP/1.1\r\n\r\n", 405), ("GET /nope HTTP/1.1\r\n\r\n", 404),
             ("GET /metricsx HTTP/1.1\r\n\r\n", 404), ("GET /metrics HTTP/9.9\r\n\r\n", 400),
             ("GET /metrics\r\n\r\n", 400), ("get /metrics HTTP/1.1\r\n\r\n", 400),
             ("GET  /metrics HTTP/1.1\r\n\r\n", 400), ("HEAD /metrics HTTP/1.0\r\n\r\n", 200),
             ("GET /metrics?x=1 HTTP/1.0\n\n", 200)]
    bad = []
    for req, want in cases:
        try:
            status, hdrs, body, how = request(a, req.encode())
        except OSError as e:
            status, body, how = None, b"", str(e)
        if status != want:
            bad.append("%r: %s (%s), want %d" % (req, status, how, want))
        elif req.startswith("HEAD") and (body or int(hdrs.get("content-length", 0)) < 100):
            bad.append("HEAD: a body of %d bytes, Content-Length %s" % (len(body), hdrs.get("content-length")))
        elif want == 405 and hdrs.get("allow") != "GET, HEAD":
            bad.append("405 without 'Allow: GET, HEAD'")
    emit({"cases": len(cases), "problems": bad})


def cmd_garbage(a):
    junk = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(400) + b"\r\n\r\n"
    t0 = time.monotonic()
    s = connect(a, 3)
    try:
        s.sendall(junk)
        data, how = read_all(s, t0 + 4)
    finally:
        s.close()
    status = split_response(data)[0]
    emit({"status": status, "how": how, "ms": round((time.monotonic() - t0) * 1000)})


def cmd_slowloris(a):
    req = b"GET /metrics HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"a" * 64
    t0 = time.monotonic()
    s = connect(a, 3)
    sent, how, scrape_ms = 0, "timeout", None
    while time.monotonic() - t0 < 8 and sent < len(req):
        try:
            s.send(req[sent:sent + 1])
            sent += 1
        except OSError as e:
            how = "send: %s" % e.__class__.__name__
            break
        if scrape_ms is None and time.monotonic() - t0 > 0.6:
            r = scrape_once(a)
            scrape_ms = round(r[4] * 1000) if r[0] == 200 else -1
        r, _, _ = select.select([s], [], [], 0.3)
        if r:
            try:
                b = s.recv(4096)
                how = "eof" if not b else "answer %s" % split_response(b)[0]
            except ConnectionResetError:
                how = "reset"
            break
    cut = time.monotonic() - t0
    s.close()
    emit({"cut_after_ms": round(cut * 1000), "how": how, "bytes_sent": sent,
          "scrape_meanwhile_ms": scrape_ms})


def cmd_storm(a):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.n + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(want, soft), max(want, hard)))
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    socks, t0 = [], time.monotonic()
    for _ in range(a.n):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((a.addr, a.port))
        socks.append(s)
    # Let the handshakes finish (or fail) for up to 2 s.
    pending, connected = set(socks), 0
    while pending and time.monotonic() - t0 < 2:
        _, w, _ = select.select([], list(pending)[:500], [], 0.1)
        for s in w:
            pending.discard(s)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected += 1
    held = time.monotonic()
    r = summarize(scrape_retry(a, held + 6))
    emit({"opened": a.n, "connected": connected, "scrape_while_held": r["status"],
          "scrape_ms_after_storm": round((time.monotonic() - held) * 1000),
          "problems": r["problems"]})
    for s in socks:
        s.close()


def cmd_hold(a):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    socks = []
    for _ in range(a.n):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect((a.addr, a.port))
        if a.answered:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        socks.append(s)
    time.sleep(0.5)		# each has waited, sending nothing more
    try:
        r = scrape_once(a)
        res = {"status": r[0], "how": r[3], "ms": round(r[4] * 1000)}
    except OSError as e:
        res = {"status": None, "how": "error: %s" % e, "ms": 0}
    # What the held ones heard: the evicted got a 408, or a close.
    evicted = 0
    for s in socks:
        s.settimeout(0)
        try:
            if s.recv(64).startswith(b"HTTP/1.1 408"):
                evicted += 1
        except OSError:
            pass
        s.close()
    res["held"] = a.n
    res["evicted_408"] = evicted
    emit(res)


def cmd_flood(a):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 65536:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(65536, hard), hard))
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    # The flood is a process of its own: as a thread it would hold the
    # interpreter's lock for up to 5 ms between a scrape's connect and
    # its request, longer than the 64 slots last at 15000 connections a
    # second (the grace the server gives); a scraper (Prometheus) asks as
    # soon as it is connected.
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    opened = ctx.Array("q", 2)	# connections opened, connect errors

    def flood():
        held = []		# (when, socket), oldest first
        n = [0, 0]
        # Beside the scraper on a small test host, not before it: a
        # scraper's host seldom runs the attacker.
        os.nice(10)
        while not stop.is_set():
            now = time.monotonic()
            while held and now - held[0][0] > 1.0:
                held.pop(0)[1].close()
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setblocking(False)
            if s.connect_ex((a.addr, a.port)) not in (0, errno.EINPROGRESS):
                n[1] += 1
                s.close()
                continue
            n[0] += 1
            held.append((now, s))
        for _, s in held:
            s.close()
        opened[0], opened[1] = n

    p = ctx.Process(target=flood)
    p.start()
    time.sleep(0.3)		# the table full of young connections
    t0, got = time.monotonic(), {}
    try:
        while time.monotonic() - t0 < a.seconds:
            try:
                r = scrape_once(a)
                k = str(r[0]) if r[0] else r[3]
            except OSError as e:
                k = "error: %s" % e.__class__.__name__
            got[k] = got.get(k, 0) + 1
            time.sleep(0.1)
    finally:
        stop.set()
        p.join(10)
        if p.is_alive():
            p.kill()
            p.join()
    secs = time.monotonic() - t0 + 0.3
    emit({"scrapes": sum(got.values()), "ok": got.get("200", 0), "got": got,
          "flood_per_s": round(opened[0] / secs), "connect_errors": opened[1]})


def cmd_big(a):
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * a.size + b"\r\n\r\n"
    t0 = time.monotonic()
    s = connect(a, 3)
    err = None
    try:
        s.sendall(req)
    except OSError as e:
        err = e.__class__.__name__
    data, how = read_all(s, t0 + 5)
    s.close()
    emit({"status": split_response(data)[0], "how": how, "send_error": err,
          "ms": round((time.monotonic() - t0) * 1000)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=9423)
    sub = ap.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("scrape")
    p.add_argument("--deadline", type=float, default=5)
    sub.add_parser("http-errors")
    sub.add_parser("garbage")
    sub.add_parser("slowloris")
    p = sub.add_parser("storm")
    p.add_argument("--n", type=int, default=1000)
    p = sub.add_parser("hold")
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--answered", action="store_true")
    p = sub.add_parser("flood")
    p.add_argument("--seconds", type=float, default=2)
    p = sub.add_parser("big")
    p.add_argument("--size", type=int, default=100 * 1024)
    p = sub.add_parser("parse")
    p.add_argument("file")
    a = ap.parse_args()
    if a.mode == "parse":	# a file: the parser's own check
        types, samples, problems = parse(open(a.file).read())
        emit({"families": len(types), "samples": len(samples), "problems": problems})
        return
    {"scrape": cmd_scrape, "http-errors": cmd_http_errors, "garbage": cmd_garbage,
     "slowloris": cmd_slowloris, "storm": cmd_storm, "hold": cmd_hold,
     "flood": cmd_flood, "big": cmd_big}[a.mode](a)


if __name__ == "__main__":
    main()
