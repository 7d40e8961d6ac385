/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Flow hash shared by the userspace parser (lib/proto/pkt.c) and the XDP program
 * that steers frames to CPUs: both must agree bit for bit, so this header
 * is self-contained, libc-free and loop-free, and builds as is with
 * "clang -target bpf".
 *
 * Mixing is Bob Jenkins' lookup3 "mix" and "final" (the algorithm behind
 * the kernel's jhash), written out here for fixed-size inputs. Addresses and
 * ports are taken in network byte order, exactly as they sit in the packet,
 * so neither side needs to byte-swap. A hash is never 0: struct ucm_pkt
 * uses 0 for "no hash" (non-IP frames).
 *
 * A symmetric hash puts the endpoints in a canonical order first: the
 * (address, port) pair with the smaller address, or with the smaller port
 * when the addresses are equal, goes first. A->B and B->A then hash alike,
 * which keeps both directions of a connection on one CPU.
 */
#ifndef UCPUMAP_FLOWHASH_H
#define UCPUMAP_FLOWHASH_H

#include <linux/types.h>

/* lookup3's starting value; also this file's fixed seed. */
#define UCM_FLOWHASH_INIT	0xdeadbeefU

#define UCM__FH_INLINE	static inline __attribute__((always_inline))

UCM__FH_INLINE __u32 ucm__fh_rol32(__u32 w, unsigned int s)
{
	return (w << s) | (w >> (32 - s));
}

/* lookup3 mix(): folds three more input words into the state. */
UCM__FH_INLINE void ucm__fh_mix(__u32 *a, __u32 *b, __u32 *c)
{
	*a -= *c; *a ^= ucm__fh_rol32(*c, 4);  *c += *b;
	*b -= *a; *b ^= ucm__fh_rol32(*a, 6);  *a += *c;
	*c -= *b; *c ^= ucm__fh_rol32(*b, 8);  *b += *a;
	*a -= *c; *a ^= ucm__fh_rol32(*c, 16); *c += *b;
	*b -= *a; *b ^= ucm__fh_rol32(*a, 19); *a += *c;
	*c -= *b; *c ^= ucm__fh_rol32(*b, 4);  *b += *a;
}

/* lookup3 final(): avalanches the state; the result is c. */
UCM__FH_INLINE void ucm__fh_final(__u32 *a, __u32 *b, __u32 *c)
{
	*c ^= *b; *c -= ucm__fh_rol32(*b, 14);
	*a ^= *c; *a -= ucm__fh_rol32(*c, 11);
	*b ^= *a; *b -= ucm__fh_rol32(*a, 25);
	*c ^= *b; *c -= ucm__fh_rol32(*b, 16);
	*a ^= *c; *a -= ucm__fh_rol32(*c, 4);
	*b ^= *a; *b -= ucm__fh_rol32(*a, 14);
	*c ^= *b; *c -= ucm__fh_rol32(*b, 24);
}

UCM__FH_INLINE __u32 ucm__fh_ports(__u16 sport, __u16 dport)
{
	return ((__u32)sport << 16) | dport;
}

/* Any total order works for canonicalising; compare the raw words. */
UCM__FH_INLINE int ucm__fh_addr6_cmp(const __u32 *x, const __u32 *y)
{
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	if (x[1] != y[1])
		return x[1] < y[1] ? -1 : 1;
	if (x[2] != y[2])
		return x[2] < y[2] ? -1 : 1;
	if (x[3] != y[3])
		return x[3] < y[3] ? -1 : 1;
	return 0;
}

/**
 * ucm_flow_hash_v4() - hash an IPv4 flow
 * @saddr: source address, network order
 * @daddr: destination address, network order
 * @sport: source port, network order (0 when there is none)
 * @dport: destination port, network order (0 when there is none)
 * @proto: IPPROTO_* of the transport
 * @symmetric: nonzero to hash both directions of the flow alike
 *
 * Return: a nonzero 32-bit hash.
 */
UCM__FH_INLINE __u32 ucm_flow_hash_v4(__u32 saddr, __u32 daddr, __u16 sport,
				      __u16 dport, __u8 proto, int symmetric)
{
	__u32 a, b, c;

	if (symmetric &&
	    (saddr > daddr || (saddr == daddr && sport > dport))) {
		__u32 t32 = saddr;
		__u16 t16 = sport;

		saddr = daddr;
		daddr = t32;
		sport = dport;
		dport = t16;
	}

	/* Protocol goes in through the seed, as lookup3's initval. */
	a = b = c = UCM_FLOWHASH_INIT + (3 << 2) + proto;
	a += saddr;
	b += daddr;
	c += ucm__fh_ports(sport, dport);
	ucm__fh_final(&a, &b, &c);
	return c ? c : 1;
}

/**
 * ucm_flow_hash_v6() - hash an IPv6 flow
 * @saddr: source address, four words in network order
 * @daddr: destination address, four words in network order
 * @sport: source port, network order (0 when there is none)
 * @dport: destination port, network order (0 when there is none)
 * @proto: IPPROTO_* of the transport
 * @symmetric: nonzero to hash both directions of the flow alike
 *
 * Return: a nonzero 32-bit hash.
 */
UCM__FH_INLINE __u32 ucm_flow_hash_v6(const __u32 saddr[4],
				      const __u32 daddr[4], __u16 sport,
				      __u16 dport, __u8 proto, int symmetric)
{
	const __u32 *s = saddr, *d = daddr;
	__u32 a, b, c;

	if (symmetric) {
		int cmp = ucm__fh_addr6_cmp(saddr, daddr);

		if (cmp > 0 || (cmp == 0 && sport > dport)) {
			__u16 t16 = sport;

			s = daddr;
			d = saddr;
			sport = dport;
			dport = t16;
		}
	}

	/* Nine words: two mix rounds and the final, like lookup3's hashword(). */
	a = b = c = UCM_FLOWHASH_INIT + (9 << 2) + proto;
	a += s[0];
	b += s[1];
	c += s[2];
	ucm__fh_mix(&a, &b, &c);
	a += s[3];
	b += d[0];
	c += d[1];
	ucm__fh_mix(&a, &b, &c);
	a += d[2];
	b += d[3];
	c += ucm__fh_ports(sport, dport);
	ucm__fh_final(&a, &b, &c);
	return c ? c : 1;
}

#endif /* UCPUMAP_FLOWHASH_H */
