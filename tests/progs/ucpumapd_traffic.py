#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Traffic for tests/net/test-ucpumapd.sh: senders on the generator side,
readers behind the daemon's tun, raw malformed frames, ping, TCP.

Every mode is bounded in time (a deadline of its own) and prints its result
as one line of JSON on stdout, or writes it to --out.

  exact-send  sequence-numbered UDP of every size, per address family/path
              (the VLAN paths as tagged frames on a raw socket)
  exact-recv  reads them behind the tun: each once, byte-identical; with
              --dev IF (SO_BINDTODEVICE) only what arrives on IF, the tun:
              a datagram the kernel took in by another way (the XDP
              program's fallback, XDP_PASS) is never read, so none that
              went around the daemon counts
  flows-send  16 flows with distinct counts; prints the expected split of
              each steering policy over two workers
  sink        binds UDP ports and reads (counts) until told to stop
  flood       UDP from 16 flows as fast as it can, for at most N seconds
  spray       UDP at a steady rate to N destinations in turn (a /16 and
              up from --base), a --hot destination every --hot-every
  malformed   raw AF_PACKET frames with broken headers, mixed with valid UDP
  ping        ICMP echo over a raw socket (ICMPv6 to an IPv6 --dst)
  seq-recv    reads ucpumap-gen's --seq datagrams of N flows: each once,
              intact (zeros after the number), in order within its flow
  tcp-server / tcp-client   a file over TCP (IPv4 or IPv6), SHA-256 at the
              far end
"""
import argparse
import errno
import hashlib
import json
import os
import select
import socket
import struct
import sys
import time

PORT = 9000
SIZES4 = [1, 18, 100, 512, 1000, 1472]	# 1472 + 28 = 1500, the MTU
SIZES6 = [1, 18, 100, 512, 1000, 1452]	# 1452 + 48 = 1500
# MTU 9000 (test-jumbo): one frame, two, three (8972 + 28 = 9000)
SIZESJ4 = [1472, 4000, 8972]
SIZESJ6 = [1452, 3980, 8952]
# path name -> (family, sizes, first source port)
PATHS = {
    "ipv4": (socket.AF_INET, SIZES4, 31000),
    "ipv6": (socket.AF_INET6, SIZES6, 32000),
    "vlan4": (socket.AF_INET, SIZES4, 33000),
    "vlan6": (socket.AF_INET6, SIZES6, 34000),
    "jumbo4": (socket.AF_INET, SIZESJ4, 35000),
    "jumbo6": (socket.AF_INET6, SIZESJ6, 36000),
}


# bytes(range(256)) repeated past the largest datagram a test sends
CYCLE = bytes(range(256)) * 260


def payload(cls, size, i):
    """Deterministic payload of datagram i of class cls (distinct for i < 256
    even at 1 byte; from 8 bytes on it starts with (class, index))."""
    if size < 8:
        return bytes((i + 31 * k + cls) & 0xff for k in range(size))
    head = struct.pack("!II", cls, i)
    # byte k of the body is (i * 7 + cls + k) & 0xff: a slice of the
    # 256-byte cycle, not a byte at a time (a 9000-byte body took 1 ms)
    o = (i * 7 + cls) & 0xff
    return head + CYCLE[o:o + size - 8]


def classes(paths):
    """[(path, class id = source port, size)] for the given paths."""
    out = []
    for p in paths:
        _, sizes, base = PATHS[p]
        for j, size in enumerate(sizes):
            out.append((p, base + j, size))
    return out


def emit(obj, out=None):
    line = json.dumps(obj, sort_keys=True)
    if out:
        with open(out + ".tmp", "w") as f:
            f.write(line + "\n")
        os.rename(out + ".tmp", out)
    else:
        print(line, flush=True)


class Pacer:
    def __init__(self, rate):
        self.rate, self.t0, self.n = rate, time.monotonic(), 0

    def tick(self):
        self.n += 1
        if self.rate and self.n % 8 == 0:
            ahead = self.t0 + self.n / self.rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)


# ---- exact delivery -----------------------------------------------------------

def udp_frame(smac, dmac, vid, src, dst, sport, dport, data):
    """An Ethernet frame, 802.1Q-tagged with vid, carrying UDP with full
    checksums (IPv4 or IPv6 after the addresses)."""
    ulen = 8 + len(data)
    if ":" in src:
        s6, d6 = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
        pseudo = s6 + d6 + struct.pack("!IxxxB", ulen, 17)
        ck = csum(pseudo + struct.pack("!HHHH", sport, dport, ulen, 0) + data) or 0xffff
        l3 = struct.pack("!IHBB", 6 << 28, ulen, 17, 64) + s6 + d6
        proto = 0x86dd
    else:
        pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!xBH", 17, ulen)
        ck = csum(pseudo + struct.pack("!HHHH", sport, dport, ulen, 0) + data) or 0xffff
        l3 = ipv4_hdr(src, dst, 20 + ulen)
        proto = 0x0800
    return (dmac + smac + struct.pack("!HHH", 0x8100, vid, proto) + l3
            + struct.pack("!HHHH", sport, dport, ulen, ck) + data)


class RawUdp:
    """sendto() of a UDP socket, as 802.1Q-tagged frames on a raw socket
    (this kernel has no VLAN devices: CONFIG_VLAN_8021Q is off)."""

    def __init__(self, ifname, smac, dmac, vid, src, sport):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.s.bind((ifname, 0))
        self.smac = bytes.fromhex(smac.replace(":", ""))
        self.dmac = bytes.fromhex(dmac.replace(":", ""))
        self.vid, self.src, self.sport = vid, src, sport

    def sendto(self, data, dst):
        self.s.send(udp_frame(self.smac, self.dmac, self.vid, self.src, dst[0],
                              self.sport, dst[1], data))


def exact_send(a):
    dst = {"ipv4": a.v4, "ipv6": a.v6, "vlan4": a.vlan4, "vlan6": a.vlan6,
           "jumbo4": a.v4, "jumbo6": a.v6}
    src = {"ipv4": a.src4, "ipv6": a.src6, "vlan4": a.srcvlan4, "vlan6": a.srcvlan6,
           "jumbo4": a.src4, "jumbo6": a.src6}
    paths = [p for p in a.paths.split(",") if p]
    socks = {}
    for p, cls, size in classes(paths):
        if p.startswith("vlan"):
            s = RawUdp(a.ifname, a.src_mac, a.dst_mac, a.vid, src[p], cls)
        else:
            s = socket.socket(PATHS[p][0], socket.SOCK_DGRAM)
            s.bind((src[p], cls))
        socks[cls] = (s, (dst[p], PORT), size)
    pacer = Pacer(a.rate)
    sent, errs = 0, 0
    for i in range(a.count):
        for cls, (s, d, size) in socks.items():
            try:
                s.sendto(payload(cls, size, i), d)
                sent += 1
            except OSError as e:
                errs += 1
                if errs < 4:
                    print("send error %s class %d: %s" % (d, cls, e), file=sys.stderr)
            pacer.tick()
        if i == 0:
            time.sleep(0.05)	# neighbours resolved before the stream
    emit({"sent": sent, "send_errors": errs})


def wait_stop_loop(socks, stop, deadline, on_dgram):
    """Read until the stop file exists (then drain) or the deadline."""
    for s in socks:
        s.setblocking(False)
    stopping, timed_out = False, False
    while True:
        r, _, _ = select.select(socks, [], [], 0.05)
        got = False
        for s in r:
            while True:
                try:
                    data, addr = s.recvfrom(65536)
                except BlockingIOError:
                    break
                got = True
                on_dgram(s, data, addr)
        if stopping and not got:
            return not timed_out
        if not stopping and (os.path.exists(stop) or time.monotonic() > deadline):
            stopping = True	# one more pass drains what is queued
            timed_out = not os.path.exists(stop)


def bind_udp(family, port, dev=None):
    s = socket.socket(family, socket.SOCK_DGRAM)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    if dev:
        # Only what arrives on dev (the tun): no other way in reaches it.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
    # Room for everything, so that a slow reader loses nothing.
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 32 << 20)	# SO_RCVBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
    return s


def exact_recv(a):
    paths = [p for p in a.paths.split(",") if p]
    cls_info = {cls: (p, size) for p, cls, size in classes(paths)}
    got = {cls: {} for cls in cls_info}
    stray = []
    s4, s6 = bind_udp(socket.AF_INET, PORT, a.dev), bind_udp(socket.AF_INET6, PORT, a.dev)
    open(a.ready, "w").close()

    def on(s, data, addr):
        cls = addr[1]
        if cls not in got:
            stray.append((addr[0], addr[1], len(data)))
            return
        got[cls][data] = got[cls].get(data, 0) + 1

    ok = wait_stop_loop([s4, s6], a.stop, time.monotonic() + a.timeout, on)
    res = {}
    for p in paths:
        res[p] = {"expected": 0, "received": 0, "missing": 0, "duplicated": 0,
                  "corrupt": 0, "problems": []}
    for cls, (p, size) in cls_info.items():
        r = res[p]
        expect = {payload(cls, size, i) for i in range(a.count)}
        r["expected"] += len(expect)
        for data, n in got[cls].items():
            r["received"] += n
            if data not in expect:
                r["corrupt"] += n
                if len(r["problems"]) < 3:
                    r["problems"].append("size %d: a %d-byte payload that was never sent"
                                         % (size, len(data)))
            elif n > 1:
                r["duplicated"] += n - 1
                if len(r["problems"]) < 3:
                    r["problems"].append("size %d: a datagram %d times" % (size, n))
        miss = [i for i in range(a.count) if payload(cls, size, i) not in got[cls]]
        r["missing"] += len(miss)
        if miss and len(r["problems"]) < 3:
            r["problems"].append("size %d: %d missing (first seq %d)" % (size, len(miss), miss[0]))
    emit({"paths": res, "stray": stray[:5], "nstray": len(stray), "stopped": ok}, a.out)


def seq_recv(a):
    """ucpumap-gen --seq: the first 8 bytes a sequence number counting
    over all flows, the source port the flow, the rest zeros."""
    socks = [bind_udp(socket.AF_INET, PORT, a.dev), bind_udp(socket.AF_INET6, PORT, a.dev)]
    open(a.ready, "w").close()
    st = {"seen": set(), "last": {}, "corrupt": 0, "dup": 0, "disorder": 0, "first": None}

    def on(s, data, addr):
        if len(data) != a.size or data[8:] != bytes(a.size - 8):
            st["corrupt"] += 1
            return
        seq, flow = struct.unpack("!Q", data[:8])[0], addr[1]
        if seq in st["seen"]:
            st["dup"] += 1
            return
        st["seen"].add(seq)
        if seq < st["last"].get(flow, -1):
            st["disorder"] += 1
            st["first"] = st["first"] or "seq %d after %d in flow %d" % (seq, st["last"][flow], flow)
        st["last"][flow] = seq

    ok = wait_stop_loop(socks, a.stop, time.monotonic() + a.timeout, on)
    missing = [i for i in range(a.count) if i not in st["seen"]]
    emit({"received": len(st["seen"]), "missing": len(missing), "first_missing": missing[:3],
          "duplicated": st["dup"], "corrupt": st["corrupt"], "disorder": st["disorder"],
          "first_disorder": st["first"], "flows": len(st["last"]), "stopped": ok}, a.out)


# ---- steering flows -----------------------------------------------------------

M32 = 0xffffffff


def rol(w, s):
    return ((w << s) | (w >> (32 - s))) & M32


def fh_final(a, b, c):
    c ^= b; c = (c - rol(b, 14)) & M32
    a ^= c; a = (a - rol(c, 11)) & M32
    b ^= a; b = (b - rol(a, 25)) & M32
    c ^= b; c = (c - rol(b, 16)) & M32
    a ^= c; a = (a - rol(c, 4)) & M32
    b ^= a; b = (b - rol(a, 14)) & M32
    c ^= b; c = (c - rol(b, 24)) & M32
    return a, b, c


def flow_hash_v4(saddr, daddr, sport, dport, proto):
    """lib/include/ucpumap/flowhash.h, ucm_flow_hash_v4, non-symmetric: the
    words are the packet's bytes as a little-endian host loads them."""
    s = int.from_bytes(socket.inet_aton(saddr), "little")
    d = int.from_bytes(socket.inet_aton(daddr), "little")
    sp = int.from_bytes(struct.pack("!H", sport), "little")
    dp = int.from_bytes(struct.pack("!H", dport), "little")
    a = b = c = (0xdeadbeef + (3 << 2) + proto) & M32
    a = (a + s) & M32
    b = (b + d) & M32
    c = (c + ((sp << 16) | dp)) & M32
    _, _, c = fh_final(a, b, c)
    return c or 1


def flows(nflows):
    """(source port, destination port, count): distinct counts, and
    destination ports whose parity differs from the source ports', so that
    every policy has its own split."""
    return [(20000 + f, PORT + f // 2, 40 + f) for f in range(nflows)]


def flows_send(a):
    fl = flows(16)
    socks = []
    for sport, dport, n in fl:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((a.src, sport))
        socks.append([s, dport, n])
    pacer = Pacer(a.rate)
    sent, i = 0, 0
    while any(x[2] > 0 for x in socks):
        for x in socks:
            if x[2] > 0:
                x[0].sendto(struct.pack("!I", i) + b"f" * 28, (a.dst, x[1]))
                x[2] -= 1
                sent += 1
                i += 1
                pacer.tick()
    split = {"fixed": [0, 0], "l4-sport": [0, 0], "l4-dport": [0, 0], "l4-hash": [0, 0]}
    split["fixed"][a.fixed] = sent
    for sport, dport, n in fl:
        split["l4-sport"][sport % 2] += n
        split["l4-dport"][dport % 2] += n
        split["l4-hash"][flow_hash_v4(a.src, a.dst, sport, dport, 17) % 2] += n
    emit({"sent": sent, "split": split})


def sink(a):
    ports = []
    for part in a.ports.split(","):
        lo, _, hi = part.partition("-")
        ports += range(int(lo), int(hi or lo) + 1)
    socks = [bind_udp(socket.AF_INET, p, a.dev) for p in ports]
    count, tags = {}, {}
    open(a.ready, "w").close()

    def on(s, data, addr):
        p = s.getsockname()[1]
        count[p] = count.get(p, 0) + 1
        t = "%d:%s" % (p, chr(data[0]) if data else "")
        tags[t] = tags.get(t, 0) + 1

    ok = wait_stop_loop(socks, a.stop, time.monotonic() + a.timeout, on)
    emit({"total": sum(count.values()), "per_port": count, "per_tag": tags, "stopped": ok},
         a.out)


def flood(a):
    socks = []
    for f in range(16):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((a.src, 21000 + f))
        socks.append(s)
    msg = b"z" * 64
    sent, end = 0, time.monotonic() + a.secs
    while time.monotonic() < end:
        for s in socks:
            for _ in range(16):
                try:
                    s.sendto(msg, (a.dst, PORT))
                    sent += 1
                except OSError:
                    pass
    emit({"sent": sent})


def spray(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    base = struct.unpack("!I", socket.inet_aton(a.base))[0]
    dsts = [socket.inet_ntoa(struct.pack("!I", base + i)) for i in range(a.count)]
    msg, warm = b"s" * 32, 0
    # The hot destination alone first, from the same socket (one flow:
    # the same tun queue and worker), marked apart.
    t0 = time.monotonic()
    while a.hot and time.monotonic() < t0 + a.warmup:
        try:
            s.sendto(b"w" * 32, (a.hot, a.hot_port))
        except OSError:
            pass
        warm += 1
        time.sleep(0.002)
    sent = hot = errs = i = 0
    t0 = time.monotonic()
    end = t0 + a.secs
    while True:
        now = time.monotonic()
        if now >= end:
            break
        # Catch up with the rate in bursts of at most 64.
        due = min(int((now - t0) * a.rate) - sent - hot, 64)
        if due <= 0:
            time.sleep(0.0005)
            continue
        for _ in range(due):
            is_hot = a.hot and (sent + hot) % a.hot_every == 0
            to = (a.hot, a.hot_port) if is_hot else (dsts[i % a.count], a.port)
            try:
                s.sendto(msg, to)
            except OSError:
                errs += 1
            if is_hot:
                hot += 1
            else:
                sent += 1
                i += 1
    emit({"sent": sent, "hot_sent": hot, "warm_sent": warm, "send_errors": errs,
          "secs": time.monotonic() - t0})


# ---- malformed frames ---------------------------------------------------------

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4_hdr(src, dst, tot_len, vihl=0x45, proto=17):
    h = struct.pack("!BBHHHBBH4s4s", vihl, 0, tot_len, 0x1234, 0x4000, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:]


def malformed(a):
    """Each kind of broken frame, interleaved with valid datagrams from an
    ordinary socket. Malformed frames that carry UDP or TCP aim at
    --bad-port, so a reader there would show any that got through. Prints
    how many of each kind were sent and the drop reason each must be
    counted under."""
    dmac = bytes.fromhex(a.dst_mac.replace(":", ""))
    smac = bytes.fromhex(a.src_mac.replace(":", ""))
    eth = lambda proto: dmac + smac + struct.pack("!H", proto)
    udp = lambda ulen, pl: struct.pack("!HHHH", 40000, a.bad_port, ulen, 0) + pl
    pl = b"m" * 32
    ulen = 8 + len(pl)
    v6src = socket.inet_pton(socket.AF_INET6, a.src6)
    v6dst = socket.inet_pton(socket.AF_INET6, a.dst6)
    v6hdr = lambda plen, nh: struct.pack("!IHBB", 6 << 28, plen, nh, 64) + v6src + v6dst
    # Each kind: the frame, and the worker drop reason it must be counted
    # under (None: the XDP program leaves it to the kernel, and ucpumapd
    # must never see it).
    kinds = {
        # IHL 4 (16 bytes): the XDP program steers it, the worker drops it.
        "ipv4_ihl": (eth(0x0800) + ipv4_hdr(a.src, a.dst, 20 + ulen, vihl=0x44) + udp(ulen, pl),
                     "ipv4_ihl"),
        # tot_len claims 200 bytes more than the frame carries.
        "ip_len": (eth(0x0800) + ipv4_hdr(a.src, a.dst, 20 + ulen + 200) + udp(ulen, pl), "ip_len"),
        # IPv6 payload length past the frame end.
        "ip6_len": (eth(0x86dd) + v6hdr(ulen + 300, 17) + udp(ulen, pl), "ip_len"),
        # UDP length larger than the IP datagram ("oversize in the header").
        "udp_len": (eth(0x0800) + ipv4_hdr(a.src, a.dst, 20 + ulen) + udp(2000, pl), "l4_hdr"),
        # TCP data offset 4 (16 bytes): below the minimum header.
        "tcp_doff": (eth(0x0800) + ipv4_hdr(a.src, a.dst, 40, proto=6)
                     + struct.pack("!HHIIBBHHH", 40001, a.bad_port, 1, 0, 4 << 4, 0x02, 512, 0, 0),
                     "l4_hdr"),
        # EtherType IPv4, version 6 in the header.
        "ip_version": (eth(0x0800) + ipv4_hdr(a.src, a.dst, 20 + ulen, vihl=0x65) + udp(ulen, pl),
                       "ip_version"),
        # IHL 15 (60 bytes of header) in a frame that ends 20 bytes in: cut
        # in its options, the program passes it to the kernel (short).
        "ihl_past_end": (eth(0x0800) + ipv4_hdr(a.src, a.dst, 60, vihl=0x4f), None),
        # UDP cut after 4 bytes, tot_len agreeing.
        "udp_cut": (eth(0x0800) + ipv4_hdr(a.src, a.dst, 24) + struct.pack("!HH", 40000, a.bad_port),
                    "l4_trunc"),
        # A hop-by-hop header claiming 2048 bytes, past the frame's end:
        # cut in its headers, the program passes it to the kernel (short).
        "ext_past_end": (eth(0x86dd) + v6hdr(8 + ulen, 0) + struct.pack("!BB6x", 17, 255)
                         + udp(ulen, pl), None),
        # Seven destination options headers: a chain past the limit (6).
        "ipv6_ext": (eth(0x86dd) + v6hdr(7 * 8 + ulen, 60)
                     + b"".join(struct.pack("!BB6x", 60 if i < 6 else 17, 0) for i in range(7))
                     + udp(ulen, pl), "ipv6_ext"),
        # Not IP: the program passes it to the kernel.
        "non_ip": (eth(0x88b5) + b"\x00" * 46, None),
        # Ethernet header alone, EtherType IPv4.
        "eth_only": (eth(0x0800), None),
        # IPv4 header cut at 10 bytes.
        "ip_cut": (eth(0x0800) + ipv4_hdr(a.src, a.dst, 20 + ulen)[:10], None),
        # An 802.1Q tag cut in half (16 bytes).
        "vlan_cut": (eth(0x8100) + b"\x00\x0a", None),
    }
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((a.ifname, 0))
    res = {"sent": {k: 0 for k in kinds}, "reason": {k: r for k, (_, r) in kinds.items()}}
    # A 10-byte runt: shorter than an Ethernet header.
    try:
        s.send(dmac[:6] + smac[:4])
        res["runt10"] = 1
        res["runt10_error"] = None
    except OSError as e:
        res["runt10"] = 0
        res["runt10_error"] = "%s (%s)" % (errno.errorcode.get(e.errno, e.errno), e.strerror)
    v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    v.bind((a.src, 41000))
    pacer = Pacer(a.rate)
    valid = 0
    for i in range(a.count):
        v.sendto(struct.pack("!I", i) + b"v" * 60, (a.dst, a.valid_port))
        valid += 1
        pacer.tick()
        for k, (frame, _) in kinds.items():
            s.send(frame)
            res["sent"][k] += 1
            pacer.tick()
    res["valid"] = valid
    emit(res)


# ---- ping and TCP -------------------------------------------------------------

def ping_data(seq, size):
    """Echo data of @size bytes (at least the tag): a reply must carry it
    back intact to count."""
    data = b"ucpumapd-ping-%04d" % seq
    return data + bytes((seq * 13 + k) & 0xff for k in range(max(0, size - len(data))))


def ping(a):
    v6 = ":" in a.dst
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    if v6:
        # The kernel sums an ICMPv6 socket's checksums (RFC 3542 3.1) and
        # gives it no IP header.
        s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        s.setsockopt(socket.IPPROTO_IPV6, 23, 2)	# IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO
        s.setsockopt(socket.IPPROTO_IPV6, 62, 1)	# IPV6_DONTFRAG
        req, rep = 128, 129
    else:
        s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        # Whole or not at all: a packet larger than the path is an error
        # here, never fragments that would hide it.
        s.setsockopt(socket.IPPROTO_IP, 10, 2)	# IP_MTU_DISCOVER, IP_PMTUDISC_DO
        req, rep = 8, 0
    dst = socket.inet_pton(fam, a.dst.split("%")[0])	# fe80::1%vg: its zone
    ident = os.getpid() & 0xffff
    replies, bad = set(), 0
    end = time.monotonic() + a.timeout

    def take():
        nonlocal bad
        pkt, addr = s.recvfrom(65536)
        ihl = 0 if v6 else (pkt[0] & 0xf) * 4
        if len(pkt) < ihl + 8:
            return
        t, _, _, pid, sq = struct.unpack("!BBHHH", pkt[ihl:ihl + 8])
        if t == rep and pid == ident and socket.inet_pton(fam, addr[0].split("%")[0]) == dst:
            if pkt[ihl + 8:] == ping_data(sq, a.size):
                replies.add(sq)
            else:
                bad += 1

    for seq in range(a.count):
        data = ping_data(seq, a.size)
        h = struct.pack("!BBHHH", req, 0, 0, ident, seq)
        if not v6:
            h = h[:2] + struct.pack("!H", csum(h + data)) + h[4:]
        s.sendto(h + data, (a.dst, 0))
        nxt = time.monotonic() + a.interval
        while time.monotonic() < nxt:
            r, _, _ = select.select([s], [], [], max(0, nxt - time.monotonic()))
            if r:
                take()
    while len(replies) < a.count and time.monotonic() < end:
        r, _, _ = select.select([s], [], [], 0.1)
        if r:
            take()
    emit({"sent": a.count, "replies": len(replies), "corrupt": bad})


def tcp_server(a):
    ls = socket.socket(socket.AF_INET6 if ":" in a.addr else socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.addr, a.port))
    ls.listen(1)
    ls.settimeout(a.timeout)
    open(a.ready, "w").close()
    res = {"bytes": 0, "sha256": None, "error": None}
    try:
        c, _ = ls.accept()
        c.settimeout(a.timeout)
        h = hashlib.sha256()
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            h.update(b)
            res["bytes"] += len(b)
        res["sha256"] = h.hexdigest()
        c.close()
    except OSError as e:
        res["error"] = str(e)
    emit(res, a.out)


def tcp_client(a):
    res = {"error": None, "seconds": None}
    t0 = time.monotonic()
    try:
        c = socket.create_connection((a.addr, a.port), timeout=a.timeout)
        with open(a.file, "rb") as f:
            while True:
                b = f.read(1 << 16)
                if not b:
                    break
                c.sendall(b)
        c.shutdown(socket.SHUT_WR)
        c.recv(1)	# the server's close
        c.close()
    except OSError as e:
        res["error"] = str(e)
    res["seconds"] = round(time.monotonic() - t0, 3)
    emit(res)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("exact-send")
    p.add_argument("--paths", required=True)
    for k in ("v4", "v6", "vlan4", "vlan6", "src4", "src6", "srcvlan4", "srcvlan6",
              "ifname", "src-mac", "dst-mac"):
        p.add_argument("--" + k)
    p.add_argument("--vid", type=int, default=10)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--rate", type=float, default=3000)
    p = sub.add_parser("exact-recv")
    p.add_argument("--paths", required=True)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--dev", help="read only what arrives on this device (the tun)")
    for k in ("ready", "stop", "out"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("seq-recv")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--size", type=int, required=True, help="UDP payload bytes")
    p.add_argument("--dev", help="read only what arrives on this device (the tun)")
    for k in ("ready", "stop", "out"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--timeout", type=float, default=25)
    p = sub.add_parser("flows-send")
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--fixed", type=int, default=1)
    p.add_argument("--rate", type=float, default=4000)
    p = sub.add_parser("sink")
    p.add_argument("--ports", required=True)
    for k in ("ready", "stop", "out"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--timeout", type=float, default=30)
    p.add_argument("--dev", help="only what arrives on this device (the tun)")
    p = sub.add_parser("flood")
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--secs", type=float, default=5)
    p = sub.add_parser("spray")
    p.add_argument("--base", required=True)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--port", type=int, default=9300)
    p.add_argument("--hot")
    p.add_argument("--hot-port", type=int, default=9301)
    p.add_argument("--hot-every", type=int, default=40)
    p.add_argument("--warmup", type=float, default=0)
    p.add_argument("--rate", type=float, default=1000)
    p.add_argument("--secs", type=float, default=3)
    p = sub.add_parser("malformed")
    for k in ("ifname", "dst-mac", "src-mac", "src", "dst", "src6", "dst6"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--valid-port", type=int, default=9100)
    p.add_argument("--bad-port", type=int, default=9101)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--rate", type=float, default=3000)
    p = sub.add_parser("ping")
    p.add_argument("--dst", required=True)
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--interval", type=float, default=0.05)
    p.add_argument("--timeout", type=float, default=3)
    p.add_argument("--size", type=int, default=0, help="echo data bytes (8972, IPv6 8952: 9000 in all)")
    p = sub.add_parser("tcp-server")
    p.add_argument("--addr", required=True)
    p.add_argument("--port", type=int, default=5001)
    for k in ("ready", "out"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--timeout", type=float, default=15)
    p = sub.add_parser("tcp-client")
    p.add_argument("--addr", required=True)
    p.add_argument("--port", type=int, default=5001)
    p.add_argument("--file", required=True)
    p.add_argument("--timeout", type=float, default=15)
    a = ap.parse_args()
    {"exact-send": exact_send, "exact-recv": exact_recv, "seq-recv": seq_recv,
     "flows-send": flows_send,
     "sink": sink, "flood": flood, "spray": spray, "malformed": malformed, "ping": ping,
     "tcp-server": tcp_server, "tcp-client": tcp_client}[a.mode](a)


if __name__ == "__main__":
    main()
