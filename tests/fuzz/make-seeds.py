#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Write the fuzz targets' seeds: tests/fuzz/corpus/fuzz-NAME/, NAME one of
pkt, gso, neigh, tun, xskdesc, xskchain, split, xskrx, chainq, httpd,
tunwrite.

    python3 tests/fuzz/make-seeds.py [DIR]     (default: tests/fuzz/corpus)

The seeds are committed; this script says how they were made and makes
them again (the same bytes each time). pkt: single frames; gso: batches in
fuzz-gso.c's framing; neigh: netlink replies in fuzz-neigh.c's framing;
tun: tun reads in fuzz-tun.c's; xskdesc: RX batches in fuzz-xskdesc.c's;
xskchain: packets of several descriptors in fuzz-xskchain.c's; split:
offloaded tun reads in fuzz-split.c's; xskrx: the kernel's descriptors and
the RX thread's polls in fuzz-xskrx.c's; chainq: a library caller's
packets of several frames and flushes in fuzz-chainq.c's; httpd: requests
to the metrics server after fuzz-httpd.c's byte of piece sizes; tunwrite:
the tun's writes of gso's batches after fuzz-tunwrite.c's control byte.
"""
import os
import struct
import sys

SRC4, DST4 = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
SRC6 = bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [1])
DST6 = bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [2])


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def eth(proto, vlan=None):
    h = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1])
    if vlan is not None:
        h += struct.pack('!HH', 0x8100, vlan)
    return h + struct.pack('!H', proto)


def l4(proto, src, dst, sport, payload, seq=0, flags=0x10, opts=b'', bad=False):
    """A UDP datagram or TCP segment with its checksum over @src/@dst."""
    if proto == 17:
        hdr = struct.pack('!HHHH', sport, 9000, 8 + len(payload), 0)
    else:
        doff = (20 + len(opts)) // 4
        hdr = struct.pack('!HHIIBBHHH', sport, 9000, seq, 777, doff << 4, flags,
                          500, 0, 0) + opts
    seg = hdr + payload
    pseudo = src + dst + struct.pack('!BBH', 0, proto, len(seg))
    c = csum(pseudo + seg) or (0xffff if proto == 17 else 0)
    c ^= 0x0101 if bad else 0
    at = 6 if proto == 17 else 16
    return seg[:at] + struct.pack('!H', c) + seg[at + 2:]


def ipv4(proto, seg, ident=1, df=False, frag=0, src=SRC4, dst=DST4):
    hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(seg), ident,
                      (0x4000 if df else 0) | frag, 64, proto, 0, src, dst)
    hdr = hdr[:10] + struct.pack('!H', csum(hdr)) + hdr[12:]
    return eth(0x0800) + hdr + seg


def ipv6(proto, seg, label=0, ext=b''):
    """@ext: the first extension header's type, then its bytes."""
    nh = proto if not ext else ext[0]
    hdr = struct.pack('!IHBB16s16s', 0x60000000 | label, max(len(ext) - 1, 0) + len(seg),
                      nh, 64, SRC6, DST6)
    return eth(0x86dd) + hdr + ext[1:] + seg


def udp4(n, ident=1, sport=1000, **kw):
    return ipv4(17, l4(17, SRC4, DST4, sport, bytes(i & 0xff for i in range(n)), **kw), ident)


def udp6(n, sport=1000, label=0, **kw):
    return ipv6(17, l4(17, SRC6, DST6, sport, bytes(i & 0xff for i in range(n)), **kw), label)


TS = bytes([1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 0])      # NOP NOP timestamp


def tcp4(seq, n=100, flags=0x10, **kw):
    return ipv4(6, l4(6, SRC4, DST4, 3000, bytes(n), seq, flags, TS, **kw),
                ident=seq // 100 & 0xffff, df=True)


def tcp6(seq, n=100, flags=0x10):
    return ipv6(6, l4(6, SRC6, DST6, 3000, bytes(n), seq, flags, TS))


def pkt_seeds():
    frag_hdr = bytes([44, 17, 0, 0, 8, 0, 0, 0, 1])         # offset 1: a later one
    dstopts = bytes([60, 17, 0, 0, 0, 0, 0, 0, 0])
    qinq = eth(0x88a8)[:12] + struct.pack('!HHHHH', 0x88a8, 7, 0x8100, 9, 0x0800) + \
        udp4(10)[14:]
    return {
        'udp4': udp4(18),
        'tcp4-ts': tcp4(1000),
        'udp6': udp6(18, label=0x12345),
        'tcp6': tcp6(5000),
        'ipv6-dstopts-udp': ipv6(17, l4(17, SRC6, DST6, 1, b'x' * 8), ext=dstopts),
        'ipv6-frag-later': ipv6(17, b'y' * 16, ext=frag_hdr),
        'ipv4-frag-first': ipv4(17, l4(17, SRC4, DST4, 1, b'z' * 16), frag=0x2000),
        'ipv4-frag-later': ipv4(17, b'z' * 16, frag=0x0003),
        'icmp4': ipv4(1, bytes([8, 0, 0xf7, 0xff, 0, 0, 0, 0])),
        'qinq-udp4': qinq,
        'arp': eth(0x0806) + bytes(28),
        'ipv4-padded': udp4(1) + bytes(17),
    }


def rec(frame, fix=False):
    """fuzz-gso.c's record: a packet."""
    return struct.pack('!BH', 2 if fix else 0, len(frame)) + frame


def clone(n, same_id=False, fix=True):
    """fuzz-gso.c's record: @n next packets of the last one's stream."""
    return struct.pack('!BH', 1 | (2 if fix else 0) | (4 if same_id else 0), n)


def gso_seeds():
    tcp_psh = [tcp4(1000 + 100 * i, flags=0x18 if i == 2 else 0x10) for i in range(5)]
    return {
        'udp4-one-flow': b'\0' + b''.join(rec(udp4(18, i + 1)) for i in range(4)),
        'udp6-two-flows': b'\0' + b''.join(rec(udp6(18, sport=1000 + 1000 * (i % 2)))
                                           for i in range(5)),
        'udp4-short-last': b'\0' + b''.join(rec(udp4(n, i + 1))
                                            for i, n in enumerate([18, 18, 5, 18])),
        'udp4-bad-csum': b'\0' + b''.join(rec(udp4(18, i + 1, bad=i == 2)) for i in range(5)),
        'tcp4-push': b'\0' + b''.join(rec(f) for f in tcp_psh),
        'tcp6-stream': b'\0' + b''.join(rec(tcp6(1000 + 100 * i)) for i in range(4)),
        'udp4-64k': b'\0' + rec(udp4(1400)) + clone(50),
        'tcp4-130-segments': b'\0' + rec(tcp4(1000, n=10)) + clone(130),
        'udp4-df-fixed-id': b'\0' + rec(ipv4(17, l4(17, SRC4, DST4, 1000, bytes(18)), 7,
                                             df=True)) + clone(3, same_id=True),
        'tap-udp4-fragment': b'\x04' + rec(udp4(18, 1)) + rec(udp4(18, 2)) +
        rec(ipv4(17, b'z' * 16, frag=0x0003)) + rec(udp4(18, 3)),
        'tap-mixed': b'\x84' + rec(eth(0x0806) + bytes(28)) + rec(udp4(18, 1)) +
        rec(tcp4(1000)) + rec(udp4(18, 2)) + rec(tcp4(1100)),
    }


def tunwrite_seeds():
    """fuzz-tunwrite.c: its control byte, then fuzz-gso.c's records."""
    g = {k: v[1:] for k, v in gso_seeds().items()}
    return {
        'tun-alone-udp6': b'\x00' + g['udp6-two-flows'],
        'tun-merged-udp4': b'\x02' + g['udp4-one-flow'],
        'tun-merged-tcp4-refused': b'\x06' + g['tcp4-push'],
        'tun-tcp6-refused-v6': b'\x0a' + g['tcp6-stream'],
        'tun-udp4-short-refused': b'\x12' + g['udp4-short-last'],
        'tun-64k': b'\x02' + g['udp4-64k'],
        'tun-arp-not-written': b'\x02' + rec(eth(0x0806) + bytes(28)) + g['udp4-one-flow'],
        'tap-merged-mixed': b'\x03' + g['tap-mixed'],
    }


def tun_read(ctl, room, vnet_flags, gso_type, frame):
    """fuzz-tun.c's input: control, room, then the vnet header and packet."""
    vnet = struct.pack('=BBHHHH', vnet_flags, gso_type, 0, 0, 0, 0)
    return struct.pack('!BH', ctl, room) + vnet + frame


def tun_seeds():
    ip4, ip6 = udp4(18)[14:], tcp6(1000)[14:]
    return {
        'tun-udp4': tun_read(0, 2048, 0, 0, ip4),
        'tun-tcp6': tun_read(0, 2048, 0, 0, ip6),
        'tun-data-valid': tun_read(0, 2048, 2, 0, ip4),
        'tun-needs-csum': tun_read(0, 2048, 1, 0, ip4),
        'tun-gso-tcpv4': tun_read(0, 2048, 1, 1, tcp4(1000)[14:]),
        'tun-filled-room': tun_read(0, 10 + len(ip4), 0, 0, ip4),
        'tun-arp': tun_read(0, 2048, 0, 0, bytes(28)),
        'tap-udp4': tun_read(1, 2048, 0, 0, udp4(18)),
        'tap-gso-udp': tun_read(1, 2048, 1, 5, udp4(18)),
        'eagain': tun_read(2, 2048, 0, 0, b''),
        'vnet-only': tun_read(0, 2048, 0, 0, b''),
    }


# ---- XSK descriptors -----------------------------------------------------

AT_RAW, AT_UMEM, AT_POOL, AT_END, AT_TOP, AT_UNALIGNED, LEN_ROOM = 0, 1, 2, 3, 4, 8, 16


def rx_batch(frame_2k, log_frames, npools, pool, descs):
    """fuzz-xskdesc.c's input: the geometry, then (control, addr, len)s."""
    geom = struct.pack('=BBBB', 1 if frame_2k else 0, log_frames, npools - 1, pool)
    return geom + b''.join(struct.pack('=BQI', c, a, n) for c, a, n in descs)


def xskdesc_seeds():
    f4, f2 = 4096, 2048
    span4 = f4 << 12                                    # 4096 frames a pool
    return {
        # Pool 0 of 2: a packet after headroom, the whole frame and a byte
        # more, length 0, the frame's last byte and one past it.
        'pool0-edges': rx_batch(False, 12, 2, 0, [
            (AT_POOL, 3 * f4 + 256, 1000), (AT_POOL, 3 * f4, f4),
            (AT_POOL, 3 * f4, f4 + 1), (AT_POOL, 3 * f4 + 256, 0),
            (AT_POOL, 4 * f4 - 1, 1), (AT_POOL, 4 * f4 - 1, 2),
            (AT_POOL | LEN_ROOM, 5 * f4 + 256, 0), (AT_POOL | LEN_ROOM, 6 * f4 + 256, 1),
            (AT_POOL | LEN_ROOM, 7 * f4 + 64, 0xff)]),
        # Pool 1 of 4 given the other pools' frames, and its own.
        'pool1-others': rx_batch(False, 12, 4, 1, [
            (AT_RAW, 256, 100), (AT_RAW, span4 + 256, 100), (AT_RAW, 2 * span4 + 256, 100),
            (AT_RAW, 2 * span4 - 1, 1), (AT_RAW, 2 * span4, 1), (AT_UMEM, 3 * span4 + 64, 64)]),
        # The UMEM's end, UINT64_MAX and a wrapping addr + len, frames of 2048.
        'end-and-top-2k': rx_batch(True, 8, 3, 2, [
            (AT_END, 32768 - f2, f2), (AT_END, 32768 - 1, 1), (AT_END, 32768, 1),
            (AT_END, 32768 + f2 + 64, 64), (AT_TOP, 0, 1), (AT_TOP, 63, 64),
            (AT_TOP, f2 - 1, f2), (AT_RAW, 0xffffffffffffffff, 0xffffffff)]),
        # Unaligned-mode offsets over good packets.
        'unaligned': rx_batch(False, 10, 1, 0, [
            (AT_POOL | AT_UNALIGNED, (256 << 48) | 3 * f4, 100),
            (AT_UMEM | AT_UNALIGNED, f4, 100), (AT_RAW, (1 << 48) | 256, 100)]),
        # The smallest UMEM (one pool of one frame) and the largest (clamped).
        'one-frame': rx_batch(True, 0, 1, 0, [
            (AT_RAW, 0, f2), (AT_RAW, 0, f2 + 1), (AT_RAW, f2, 1), (AT_RAW, 8, 0)]),
        'largest': rx_batch(False, 28, 256, 255, [
            (AT_END, 32768 - 1, 1), (AT_END, 32768, 1), (AT_POOL | LEN_ROOM, 12345678, 0)]),
        # A full batch of 64 and more: the rest is not read.
        'full-batch': rx_batch(False, 12, 2, 0, [
            (AT_POOL | (LEN_ROOM if i % 3 else 0), i * f4 + 16 * i, 60 + i) for i in range(70)]),
    }


# fuzz-xskchain.c's control byte: where the address points, XDP_PKT_CONTD,
# the room left in the frame as the length, the ring run dry after it, the
# offset at the list's edge (UCM_CHAIN_HEAD_ROOM + the top byte).
C_RAW, C_POOL, C_HEAD, C_NEXT, C_CONTD, C_ROOM, C_DRY, C_EDGE = 0, 1, 2, 3, 4, 8, 16, 32


def rx_chain(frame_2k, log_frames, npools, pool, sg, descs, max_frags=0):
    """fuzz-xskchain.c's input: the geometry, the socket (SG, max_frags; 0: 18),
    (control, addr, len)s."""
    sock = (1 if sg else 0) | max_frags << 1
    return rx_batch(frame_2k, log_frames, npools, pool, []) + bytes([sock]) + \
        b''.join(struct.pack('=BQI', c, a, n) for c, a, n in descs)


def chain(first, lens, ctl=C_HEAD):
    """One packet: frames @first, @first + 1, ... at the headroom, one each of @lens."""
    return [(ctl | (C_CONTD if i < len(lens) - 1 else 0), first + i, n)
            for i, n in enumerate(lens)]


def xskchain_seeds():
    f4 = 4096
    room = f4 - 256                                     # a frame's bytes after the headroom
    jumbo = [room, room, 9014 - 2 * room]               # an MTU-9000 frame in three
    return {
        # Whole, then a packet of one: the next packet fine.
        'whole-3': rx_chain(False, 12, 2, 0, True, chain(3, jumbo) + [(C_HEAD, 9, 60)]),
        # The ring runs dry after two of three; the next packet whole.
        'cut': rx_chain(False, 12, 2, 1, True, [
            (C_HEAD | C_CONTD, 3, room), (C_HEAD | C_CONTD | C_DRY, 4, room)] +
            chain(7, [room, 100])),
        # 19 descriptors: one past UCM_CHAIN_MAX; then 18 exactly, whole.
        'long-frames': rx_chain(False, 12, 1, 0, True, chain(0, [100] * 19) +
                                chain(20, [100] * 18)),
        # max_frags 2: three frames long, two whole; max_frags 1: every
        # packet of several long.
        'max-frags-2': rx_chain(False, 12, 1, 0, True, chain(0, jumbo) + chain(4, [room, 60]),
                                max_frags=2),
        'max-frags-1': rx_chain(False, 12, 1, 0, True, chain(0, [room, 60]) + [(C_HEAD, 3, 60)],
                                max_frags=1),
        # 18 frames full to the end: more than 65535 bytes; 65535 whole,
        # then 65536.
        'long-bytes': rx_chain(False, 12, 1, 0, True, chain(0, [0] * 18, C_HEAD | C_ROOM)),
        'bytes-edge': rx_chain(False, 12, 1, 0, True, chain(0, [room] * 17 + [255]) +
                               chain(20, [room] * 17 + [256])),
        # The first frame's packet right after the list's room, then a
        # byte into it.
        'room-edge': rx_chain(False, 12, 2, 0, True, chain(1, [1000, 100], C_HEAD | C_EDGE) +
                              chain(3 | 0xff << 56, [1000, 100], C_HEAD | C_EDGE)),
        # The middle descriptor another pool's frame: left, the rest home.
        'foreign-middle': rx_chain(False, 12, 4, 2, True, [
            (C_HEAD | C_CONTD, 5, room), (C_NEXT | C_CONTD, 5 * f4 + 256, room),
            (C_HEAD, 6, 500)]),
        # A chain on a socket bound without XDP_USE_SG.
        'nosg': rx_chain(False, 12, 2, 0, False, chain(3, jumbo) + [(C_HEAD, 9, 60)]),
        # A length one byte past its frame's end; a first frame with no
        # room for the list (64 in); frames of 2048, one pool, the next
        # descriptor past the UMEM's end.
        'bad-len': rx_chain(False, 12, 2, 0, True, [
            (C_HEAD | C_CONTD, 1, room), (C_HEAD | C_CONTD | C_ROOM, 2, 1), (C_HEAD, 3, 10)]),
        'no-room': rx_chain(False, 12, 2, 0, True, [
            (C_POOL | C_CONTD, 4 * f4 + 64, f4 - 64), (C_HEAD, 5, 100)]),
        'one-pool-2k': rx_chain(True, 6, 1, 0, True, chain(1, [1792, 1792, 400]) + [
            (C_HEAD | C_CONTD, 10, 1792), (C_NEXT, 0, 100)]),
    }


# fuzz-xskrx.c's records: a descriptor the kernel writes (its frame: the
# fill ring's next, another queue's, none; XDP_PKT_CONTD; the offset given,
# else 256; the length the room left plus a delta, else given; the
# metadata), and the operations: the RX thread's poll (its most, no
# refill, the packets back at once), packets back (how many, newest first,
# as a TX refusal), a socket's settings, what the thread does idle (its
# look at the RX ring, a refill).
X_OURS, X_OTHER, X_NONE = 0, 2, 3
X_META_ZERO, X_META_WORKER, X_META_STAMP, X_META_OTHER = 0, 1, 2, 3


def xsock(sg=True, max_frags=0, frames_2k=False, stop=False):
    """fuzz-xskrx.c's socket byte."""
    return bytes([(1 if sg else 0) | max_frags << 1 | (0x40 if frames_2k else 0) |
                  (0x80 if stop else 0)])


def xdesc(length=100, contd=False, where=X_OURS, off=None, room=None, meta=X_META_ZERO):
    """A descriptor; @room: the length is the room left in the frame plus this."""
    ctl = where | (4 if contd else 0) | (8 if off is not None else 0) | \
        (16 if room is not None else 0) | meta << 5
    n = (room & 0xff) if room is not None else length
    return struct.pack('=BHH', ctl, off or 0, n)


def xrx(most=64, refill=True, back=False):
    return bytes([0x80, (most - 1) | (0 if refill else 0x40) | (0x80 if back else 0)])


def xback(n=0, newest=False, tx=False):
    return bytes([0x81, n | (0x40 if newest else 0) | (0x80 if tx else 0)])


def xconfig(sg=True, max_frags=0, wakeup=False):
    return bytes([0x82, (1 if sg else 0) | max_frags << 1 | (0x40 if wakeup else 0)])


def xidle(look=True, refill=False):
    return bytes([0x83, (1 if look else 0) | (2 if refill else 0)])


def xpacket(lens, **kw):
    """One packet of len(@lens) descriptors at the kernel's headroom."""
    return b''.join(xdesc(n, contd=i < len(lens) - 1, **kw) for i, n in enumerate(lens))


def xskrx_seeds():
    per = 4096 - 256                                    # a frame's bytes after the headroom
    return {
        # test-xskchain's cases, in this target's terms.
        'whole-3': xsock() + xpacket([per, per, 1334]) + xrx() + xback(),
        'across-calls': xsock() + xpacket([per, per, 100]) + xrx(2) + xrx(2) + xback(),
        'cut': xsock() + xdesc(per, True) + xdesc(per, True) + xrx() + xdesc(60) + xrx(back=True),
        'cut-full-call': xsock() + xdesc(60) + xdesc(per, True) + xrx(2) +
        xpacket([per, 70]) + xrx(back=True),
        'too-long': xsock() + xpacket([10] * 19) + xpacket([per, 10]) + xrx(back=True),
        'max-frags-2': xsock(max_frags=2) + xpacket([per, per, 10]) + xpacket([per, 20]) +
        xrx(back=True) + xconfig() + xpacket([per, per, 30]) + xrx(back=True),
        'too-many-bytes': xsock() + xpacket([per] * 18) + xrx() + xpacket([per] * 17 + [100]) +
        xrx(back=True),
        # 65535 bytes whole, 65536 long.
        'bytes-edge': xsock() + xpacket([per] * 17 + [255]) + xrx(back=True) +
        xpacket([per] * 17 + [256]) + xrx(back=True),
        'foreign-middle': xsock() + xdesc(per, True) + xdesc(100, True, X_OTHER) + xdesc(100) +
        xrx() + xdesc(60) + xrx(back=True),
        'bad-length': xsock() + xdesc(per, True) + xdesc(contd=True, room=1) + xdesc(100) +
        xrx() + xdesc(60) + xrx(back=True),
        'no-room': xsock() + xdesc(1000, True, off=64) + xdesc(100) + xrx() + xdesc(60) + xrx(),
        # A first frame's packet right at the list's end
        # (UCM_CHAIN_HEAD_ROOM, 200 with this build's headers), then 4
        # bytes into the list.
        'room-edge': xsock() + xdesc(1000, True, off=200) + xdesc(100) + xdesc(1000, True, off=196) +
        xdesc(100) + xrx(back=True),
        'nosg': xsock(sg=False) + xpacket([per, 100]) + xdesc(64) + xrx(back=True) +
        xdesc(64, True) + xrx(),
        'stop-mid-packet': xsock(stop=True) + xpacket([per, per, 100]) + xrx(2),
        'mixed': xsock() + xdesc(64) + xpacket([per, per, 5]) + xdesc(1500) + xpacket([per, 1]) +
        xdesc(64) + xrx() + xback(2, newest=True) + xback(tx=True),
        # Bad descriptors of one: empty, a byte past the frame, another
        # queue's, past the UMEM, at UINT64_MAX.
        'bad-singles': xsock() + xdesc(0) + xdesc(room=1) + xdesc(room=0) + xdesc(where=X_OTHER) +
        xdesc(where=X_NONE) + xdesc(where=X_NONE, off=0) + xrx(back=True),
        # The consumer's cached producer: a packet's first part published
        # alone, its end after the call that saw the part: that call takes
        # the part, all it had seen, and cuts it; the end is a packet of
        # one.
        'stale-producer': xsock() + xdesc(60) + xdesc(per, True) + xrx(1) + xdesc(100) + xrx(2) +
        xrx(back=True),
        # The same where the idle look read the index between the part and
        # its end: the next poll takes the part alone and cuts it.
        'stale-producer-look': xsock() + xdesc(60) + xrx(1) + xdesc(per, True) + xidle() +
        xdesc(100) + xrx() + xrx(back=True),
        # The metadata: a worker's, a stamp, another magic, none; a packet
        # with room for the magic alone, then for the stamp too.
        'meta': xsock() + xdesc(60, meta=X_META_WORKER) + xdesc(60, meta=X_META_STAMP) +
        xdesc(60, meta=X_META_OTHER) + xpacket([per, 60], meta=X_META_STAMP) +
        xdesc(60, off=8, meta=X_META_STAMP) + xdesc(60, off=16, meta=X_META_STAMP) +
        xrx(back=True),
        # The pool runs dry: packets held, the fill ring short; then home
        # as TX refusals, the fill ring asking for wake-ups.
        'pool-dry': xsock() + xconfig(wakeup=True) +
        b''.join(xpacket([per, per, 100]) + xrx() for _ in range(50)) + xidle(False, True) +
        xback(tx=True) + xidle(False, True),
        # Frames of 2048: a packet of three, one of 18 too long in bytes.
        'frames-2k': xsock(frames_2k=True) + xpacket([1792, 1792, 400]) +
        xpacket([1792] * 18) + xrx(back=True),
    }


# fuzz-chainq.c: a set-up byte, then packets a library caller enqueues
# (or a TX refusal sends home) with the list it wrote, and flushes.
CQ_OURS, CQ_OTHER, CQ_NONE = 0, 2, 3
CQ_FRESH, CQ_REPEAT, CQ_FIRST, CQ_OTHER_POOL, CQ_OUTSIDE = 0, 4, 5, 6, 7
CQ_PER = 4096 - 256                                     # a part filling its frame


def cq_setup(frames_2k=False, hold=False, no_recycle=False, no_lat=False, abandon=False):
    return bytes([(1 if frames_2k else 0) | (2 if hold else 0) | (4 if no_recycle else 0) |
                  (8 if no_lat else 0) | (16 if abandon else 0)])


def cq_ent(plen, kind=CQ_FRESH, poff=256, ref=0, high=False):
    """An entry: its frame's kind, the part's offset and length."""
    return struct.pack('=BHH', kind | ref << 3 | (8 if high else 0), poff, plen)


def cq_pkt(ents, chain=True, first=CQ_OURS, nfrag=None, length=None, fill=True, tx=False,
           verdict=0, tun=False, off=256, head=0, worker=0):
    """A packet: @ents its list's entries (cq_ent()); @nfrag, @length: the
    list's count and the packet's length as given, else the entries'."""
    ctl = (1 if chain else 0) | first << 1 | (8 if nfrag is not None else 0) | \
        (16 if length is not None else 0) | (32 if fill else 0) | (64 if tx else 0)
    n = len(ents) | verdict << 5 | (0x80 if tun else 0)
    return struct.pack('=BBBHHH', ctl, n, nfrag or 0, off | worker << 12, head,
                       length or 0) + b''.join(ents)


def cq_rx(nparts, last=1334, **kw):
    """A packet as the RX path makes one: parts filling their frames."""
    return cq_pkt([cq_ent(CQ_PER)] * (nparts - 1) + [cq_ent(last)], **kw)


CQ_FLUSH = b'\x80'


def chainq_seeds():
    room = 200                                          # UCM_CHAIN_HEAD_ROOM in this build
    return {
        'rx-3': cq_setup() + cq_rx(2) + CQ_FLUSH,
        'rx-18': cq_setup() + cq_rx(17, 100) + CQ_FLUSH,
        'bulk-9': cq_setup() + cq_rx(2, 100) * 9 + CQ_FLUSH + cq_rx(3) * 3,
        # 70 held: a hand-over at 64, the rest at the flush.
        'hold-70': cq_setup(hold=True) + cq_rx(1, 200, worker=3) * 70 + CQ_FLUSH,
        # One packet held while 140 others come and are dropped.
        'hold-long': cq_setup(hold=True) + cq_rx(2) +
        cq_pkt([], chain=False, off=0) * 140 + CQ_FLUSH,
        'tun-tap': cq_setup() + cq_rx(2, tun=True) + cq_rx(2) + cq_rx(1, 1, tun=True) +
        CQ_FLUSH,
        'verdicts': cq_setup() + b''.join(cq_rx(2, verdict=v) for v in range(4)) + CQ_FLUSH,
        # The worker's drops: the head past its frame, a runt, no
        # Ethernet header in the first frame.
        'worker-drops': cq_setup() + cq_pkt([cq_ent(100)], fill=False, head=4000) +
        cq_pkt([cq_ent(5)], fill=False, head=5) + cq_pkt([cq_ent(100)], fill=False, head=10) +
        cq_pkt([cq_ent(100)], fill=False, head=10, length=12) + CQ_FLUSH,
        # The guard's refusals, each then sent home as a TX refusal.
        'no-room': cq_setup() + cq_rx(2, off=room) + cq_rx(2, off=room - 1) + cq_rx(2, off=64),
        'empty-list': cq_setup() + cq_pkt([], nfrag=0) + cq_pkt([cq_ent(10)], nfrag=0),
        'too-long': cq_setup() + cq_pkt([cq_ent(10)] * 17, nfrag=18) +
        cq_pkt([cq_ent(10)], nfrag=200),
        'dup': cq_setup() + cq_pkt([cq_ent(100), cq_ent(100, CQ_REPEAT, 512)]) +
        cq_pkt([cq_ent(100), cq_ent(100), cq_ent(100, CQ_REPEAT, ref=1)]),
        'first-listed': cq_setup() + cq_pkt([cq_ent(100, CQ_FIRST, 2048)]) +
        cq_pkt([cq_ent(100, CQ_REPEAT)]),
        'other-pool': cq_setup() + cq_pkt([cq_ent(100), cq_ent(100, CQ_OTHER_POOL)]) +
        cq_rx(2, first=CQ_OTHER),
        'outside': cq_setup() + cq_pkt([cq_ent(100, CQ_OUTSIDE, 0)]) +
        cq_pkt([cq_ent(100, CQ_OUTSIDE, 0, high=True)]) + cq_rx(2, first=CQ_NONE),
        # A chain whose one part is empty: its head is the whole packet,
        # not partial, through the verdict as through the parse.
        'empty-part': cq_setup() + cq_pkt([cq_ent(0)]) + CQ_FLUSH,
        # A part filling its frame to the byte, then one byte past it.
        'part-edge': cq_setup() + cq_pkt([cq_ent(CQ_PER)]) + cq_pkt([cq_ent(CQ_PER + 1)]) +
        cq_pkt([cq_ent(1, poff=4095)]) + CQ_FLUSH,
        # 65535 bytes, then 65536.
        'bytes-edge': cq_setup() + cq_rx(17, 65535 - 16 * CQ_PER - CQ_PER) +
        cq_rx(17, 65536 - 16 * CQ_PER - CQ_PER) + CQ_FLUSH,
        # Lists that do not hold the packet's bytes, or hold more.
        'short-parts': cq_setup() + cq_rx(3, length=20000) + cq_rx(3, length=5000, tun=True) +
        cq_pkt([cq_ent(100)], fill=False, head=3000, length=1000) + CQ_FLUSH,
        # A list read no further than its count: the entries past it the
        # caller's still.
        'nfrag-short': cq_setup() + cq_pkt([cq_ent(100), cq_ent(100), cq_ent(100, CQ_FIRST)],
                                          nfrag=2) + CQ_FLUSH,
        'single-with-list': cq_setup() + cq_pkt([cq_ent(100)] * 3, chain=False, length=500) +
        cq_pkt([], chain=False, off=64, fill=False, head=100) + CQ_FLUSH,
        # TX refusals of any list: twice, the first, past the UMEM, too
        # long, no chain bit, a checksum request.
        'tx-home': cq_setup() + cq_pkt([cq_ent(100), cq_ent(1, CQ_REPEAT, ref=0),
                                       cq_ent(1, CQ_FIRST), cq_ent(1, CQ_OUTSIDE),
                                       cq_ent(1, CQ_OTHER_POOL)], tx=True, tun=True) +
        cq_pkt([cq_ent(10)] * 3, nfrag=200, tx=True) + cq_pkt([cq_ent(10)] * 3, nfrag=1, tx=True) +
        cq_pkt([cq_ent(10)], chain=False, tx=True) + cq_rx(2, first=CQ_NONE, tx=True),
        # The map stopped with packets staged and held.
        'abandon': cq_setup(hold=True, abandon=True) + cq_rx(2) * 10 + CQ_FLUSH + cq_rx(2) * 12,
        'frames-2k': cq_setup(frames_2k=True, no_recycle=True, no_lat=True) +
        cq_pkt([cq_ent(1792)] * 2 + [cq_ent(400)]) + cq_pkt([cq_ent(1793)]) + CQ_FLUSH,
    }


# ---- netlink -------------------------------------------------------------

RTM_NEWROUTE, RTM_NEWNEIGH, NLMSG_ERROR, NLMSG_DONE = 24, 28, 2, 3
RTA_OIF, RTA_GATEWAY, RTA_TABLE = 4, 5, 15
NDA_DST, NDA_LLADDR = 1, 2
NUD_REACHABLE, NUD_STALE, NUD_FAILED, NUD_NOARP = 0x02, 0x04, 0x20, 0x40
RTN_UNICAST, RTN_BROADCAST = 1, 3
IFX = 7


def attr(t, data):
    a = struct.pack('=HH', 4 + len(data), t) + data
    return a + bytes(-len(a) % 4)


def nlmsg(t, seq, body):
    return struct.pack('=IHHII', 16 + len(body), t, 0, seq, 0) + body


def route(seq, v6, gw=None, oif=IFX, table=254, rtype=1):
    body = struct.pack('=BBBBBBBBI', 10 if v6 else 2, 128 if v6 else 32, 0, 0,
                       table if table < 256 else 252, 0, 0, rtype, 0)
    body += attr(RTA_TABLE, struct.pack('=I', table))
    if gw:
        body += attr(RTA_GATEWAY, gw)
    return nlmsg(RTM_NEWROUTE, seq, body + attr(RTA_OIF, struct.pack('=i', oif)))


def neigh(seq, v6, state, mac=b'\x02\0\0\0\0\x42', ifx=IFX, ntype=0, dst=None):
    body = struct.pack('=BxxxiHBB', 10 if v6 else 2, ifx, state, 0, ntype)
    body += attr(NDA_DST, dst or (DST6 if v6 else DST4))
    return nlmsg(RTM_NEWNEIGH, seq, body + attr(NDA_LLADDR, mac))


def done(seq):
    return nlmsg(NLMSG_DONE, seq, struct.pack('=i', 0))


def error(seq, err):
    return nlmsg(NLMSG_ERROR, seq, struct.pack('=i', err) + struct.pack('=IHHII', 16, 26, 5,
                                                                         seq, 0))


def question(ctl, seq, datagram):
    return struct.pack('=BIi', ctl, seq, IFX) + datagram


def neigh_seeds():
    gw6 = bytes([0xfe, 0x80] + [0] * 13 + [1])
    return {
        'route4-gateway': question(0, 5, route(4, False) + route(5, False, gw=SRC4)),
        'route4-other-nic': question(0, 5, route(5, False, oif=IFX + 1)),
        'route6-onlink': question(2, 9, route(9, True)),
        'route6-gateway-table1000': question(2, 9, route(9, True, gw=gw6, table=1000)),
        'route4-local': question(0, 3, route(3, False, table=255, rtype=2)),
        'neigh4-reachable': question(1, 2, neigh(2, False, NUD_REACHABLE)),
        'neigh6-stale': question(3, 2, neigh(2, True, NUD_STALE)),
        'neigh4-after-error': question(1, 2, error(1, -16) + neigh(2, False, NUD_REACHABLE)),
        'error-netunreach': question(0, 2, error(2, -101)),
        'ack': question(1, 2, error(2, 0)),
        'ack-asked': question(8 | 1, 2, error(2, 0)),
        'use-refused': question(8, 2, error(1, 0) + error(2, -1)),
        'foreign': question(4, 7, route(7, False, gw=SRC4)),
        # A set-up dump's datagram: two stations, the subnet's broadcast
        # (NOARP, not a station's), one on another NIC, one failed.
        'dump': question(1, 11, neigh(11, False, NUD_REACHABLE, ntype=RTN_UNICAST) +
                         neigh(11, True, NUD_STALE, ntype=RTN_UNICAST) +
                         neigh(11, False, NUD_NOARP, mac=b'\xff' * 6, ntype=RTN_BROADCAST,
                               dst=bytes([10, 0, 0, 255])) +
                         neigh(11, False, NUD_REACHABLE, ifx=IFX + 1, ntype=RTN_UNICAST) +
                         neigh(11, True, NUD_FAILED, ntype=RTN_UNICAST) + done(11)),
        'dump-error': question(1, 11, neigh(11, True, NUD_REACHABLE, ntype=RTN_UNICAST) +
                               error(11, -105)),
    }


def split_read(ctl, head, room, gso_type, gso_size, frame, csum_start, csum_off):
    """fuzz-split.c's input: control, head, room, vnet header, packet."""
    vnet = struct.pack('=BBHHHH', 1, gso_type, 0, gso_size, csum_start, csum_off)
    return struct.pack('!BHH', ctl, head, room) + vnet + frame


def with_lsrr(ip4):
    """@ip4 with a NOP and a loose source route of two hops (RFC 791)."""
    b = bytearray(ip4[:20] + bytes([1, 131, 11, 4, 10, 0, 0, 9, 10, 0, 0, 3]) + ip4[20:])
    b[0] = 0x48
    struct.pack_into('!H', b, 2, len(b))
    return bytes(b)


def split_seeds():
    # Super-packets with full checksums in place: the cut must not care.
    t4, t6 = tcp4(1000, n=4000)[14:], tcp6(1000, n=3000)[14:]
    u4, u6 = udp4(2900)[14:], udp6(2000)[14:]
    return {
        'tcp4-gso': split_read(0, 2000, 1600, 1, 1448, t4, 20, 16),
        'tcp6-gso': split_read(0, 100, 1600, 4, 1428, t6, 40, 16),
        'udp4-uso': split_read(0, 1500, 1600, 5, 1400, u4, 20, 6),
        'udp6-uso-short': split_read(0, 48, 1600, 5, 999, u6, 40, 6),
        'tap-tcp4-gso': split_read(1, 3000, 1600, 1, 1448, tcp4(7, n=2000), 34, 16),
        'needs-csum-udp4': split_read(0, 2000, 1600, 0, 0, udp4(100)[14:], 20, 6),
        'gso-size-0': split_read(0, 2000, 1600, 1, 0, t4, 20, 16),
        # Packets longer than their head: the tail summed apart, from an
        # odd offset of the sum (61 - 20) or an even one.
        'needs-csum-udp4-tail-odd': split_read(0, 61, 1600, 0, 0, udp4(100)[14:], 20, 6),
        'needs-csum-tcp6-tail': split_read(0, 80, 1600, 0, 0, tcp6(300)[14:], 40, 16),
        'tap-needs-csum-udp4-tail': split_read(1, 50, 1600, 0, 0, udp4(100), 34, 6),
        'tcp4-gso-lsrr': split_read(0, 2000, 1600, 1, 1448, with_lsrr(t4), 32, 16),
    }


def httpd_seeds():
    """fuzz-httpd.c: a byte that seeds the piece sizes, then the request."""
    return {
        'get': b'\x07GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n',
        'head-query': b'\x03HEAD /metrics?x=1 HTTP/1.0\n\n',
        'post': b'\x01POST /metrics HTTP/1.1\r\n\r\n',
        'other-path': b'\x09GET /metricsx HTTP/1.1\r\n\r\n',
        'bad-version': b'\x05GET /metrics HTTP/9.9\r\n\r\n',
        'no-end': b'\x02GET /metrics HTTP/1.1\r\nHost: x\r\n',
    }


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             'corpus')
    for name, seeds in (('pkt', pkt_seeds()), ('gso', gso_seeds()),
                        ('neigh', neigh_seeds()), ('tun', tun_seeds()),
                        ('xskdesc', xskdesc_seeds()), ('xskchain', xskchain_seeds()),
                        ('split', split_seeds()), ('xskrx', xskrx_seeds()),
                        ('chainq', chainq_seeds()), ('httpd', httpd_seeds()),
                        ('tunwrite', tunwrite_seeds())):
        d = os.path.join(top, 'fuzz-' + name)
        os.makedirs(d, exist_ok=True)
        for f, data in seeds.items():
            with open(os.path.join(d, f), 'wb') as out:
                out.write(data)


if __name__ == '__main__':
    main()
