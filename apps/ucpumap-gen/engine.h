/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ucpumap-gen's engines. Each sends copies of one template frame, rewriting
 * per frame what varies (gen.h): the live and the loop engines (live.c,
 * loop.c) in their XDP programs (bpf/gen.bpf.c), the AF_XDP engine
 * (xsk_tx.c) with gen_rewrite() below; the packet engine (packet.c) sends
 * them unchanged. Each is called through a gen_send_fn by the sending loop
 * (pace.c).
 */
#ifndef UCM_GEN_ENGINE_H
#define UCM_GEN_ENGINE_H

#include <arpa/inet.h>
#include <stddef.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "gen.h"

struct gen_tmpl {
	const uint8_t *frame;
	uint32_t size;		/* bytes, Ethernet header to the end of the payload */
	uint32_t flags;		/* UCM_GEN_F_* */
	uint32_t flows;		/* >= 1 */
	uint16_t sport;		/* first source port, host order */
};

/* Send @n frames through @engine; return how many went out (fewer when
 * stopped, or more: some of an earlier call's), or -errno after a message.
 * @n 0, once at the end: those of earlier calls that went out since, a
 * failed call's among them (its frames before the failure). */
typedef int64_t (*gen_send_fn)(void *engine, uint64_t n);

static inline uint32_t gen_csum_add16(uint32_t sum, uint16_t old, uint16_t new)
{
	/* RFC 1624, eqn. 3, on 16-bit words as they sit in memory: the
	 * one's complement sum does not care about byte order. */
	return sum + (uint16_t)~old + new;
}

/* @v big-endian at @p, a 16-bit word at a time (the payload is only 2-byte
 * aligned): @sum, the checksum's running sum, updated. */
static inline uint32_t gen_put64(uint8_t *p, uint64_t v, uint32_t sum)
{
	uint16_t w, old;

	for (int i = 0; i < 4; i++) {
		w = htons((uint16_t)(v >> (48 - 16 * i)));
		__builtin_memcpy(&old, p + 2 * i, 2);
		sum = gen_csum_add16(sum, old, w);
		__builtin_memcpy(p + 2 * i, &w, 2);
	}
	return sum;
}

/*
 * Frame @n of flow @flow: the source port and, with UCM_GEN_F_SEQ, the
 * sequence number @n, with UCM_GEN_F_STAMP the send time @now, with the UDP
 * checksum updated from the values in the frame (whatever an earlier use of
 * it left there: they always match the checksum). What bpf/gen.bpf.c does.
 */
static inline void gen_rewrite(uint8_t *f, const struct gen_tmpl *t, uint64_t n, uint32_t flow,
			       uint64_t now)
{
	uint8_t *udp = f + (t->flags & UCM_GEN_F_IPV6 ? UCM_GEN_UDP_OFF_V6 : UCM_GEN_UDP_OFF_V4);
	uint16_t w, old, port = htons((uint16_t)(t->sport + flow));
	uint32_t sum;

	__builtin_memcpy(&w, udp + 6, 2);
	sum = (uint16_t)~w;
	__builtin_memcpy(&old, udp, 2);
	sum = gen_csum_add16(sum, old, port);
	__builtin_memcpy(udp, &port, 2);
	if (t->flags & UCM_GEN_F_SEQ)
		sum = gen_put64(udp + 8, n, sum);
	if (t->flags & UCM_GEN_F_STAMP)
		sum = gen_put64(udp + 8 + UCM_GEN_SEQ_LEN, now, sum);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	w = (uint16_t)~sum;
	if (!w)
		w = 0xffff;
	__builtin_memcpy(udp + 6, &w, 2);
}

/* ---- the XDP object (obj.c) ------------------------------------------------ */

struct bpf_object;
struct bpf_program;

struct gen_obj {
	struct bpf_object *obj;
	struct bpf_program *prog;	/* the one loaded */
	struct ucm_gen_state *st;	/* the programs' state, mapped */
	size_t st_len;
};

/* The embedded object opened with @gc and only its program @prog loaded;
 * @verbose: libbpf's debug messages too. 0, or -1 after a message (@o
 * then holds nothing). */
int gen_obj_open(struct gen_obj *o, const struct ucm_gen_cfg *gc, const char *prog, bool verbose);
void gen_obj_close(struct gen_obj *o);

/* The frames the program has sent so far. */
static inline uint64_t gen_obj_frames(const struct gen_obj *o)
{
	return __atomic_load_n(&o->st->frames, __ATOMIC_ACQUIRE);
}

/* ---- the live engine (live.c) ---------------------------------------------- */

struct live;

/* The embedded XDP program loaded with @gc, to send @t (@batch frames per
 * batch of the kernel's test run; 0: its default). @verbose: libbpf's debug
 * messages too. NULL with a message on stderr. */
struct live *live_open(const struct ucm_gen_cfg *gc, const struct gen_tmpl *t, uint32_t batch,
		       bool verbose);
/* A gen_send_fn: the frames the program ran on. */
int64_t live_send(void *l, uint64_t n);
void live_close(struct live *l);

/* ---- the loop engine (loop.c) ---------------------------------------------- */

struct loop;

/* A veth pair in a network namespace of its own, with the loop program
 * (loaded with @gc) on one end, sending @t out of @gc->ifindex, with
 * @inflight frames in the loop (0: 64; at most 256, a veth ring's room); a
 * send returns early once *@stop is set. NULL with a message on stderr. */
struct loop *loop_open(const struct ucm_gen_cfg *gc, const struct gen_tmpl *t, uint32_t inflight,
		       bool verbose, const volatile sig_atomic_t *stop);
/* A gen_send_fn: the frames the program sent out of IFACE. */
int64_t loop_send(void *l, uint64_t n);
void loop_close(struct loop *l);

/* ---- AF_XDP TX (xsk_tx.c) ------------------------------------------------ */

struct xsk_tx;

/* A TX-only AF_XDP socket on @dev's queue @queue (zero-copy when the driver
 * can, else copy); a send returns early once *@stop is set. NULL with a
 * message on stderr. */
struct xsk_tx *xsk_tx_open(const char *dev, uint32_t queue, const struct gen_tmpl *t,
			   uint32_t batch, const volatile sig_atomic_t *stop);
/* A gen_send_fn: the frames the kernel reported complete. */
int64_t xsk_tx_send(void *x, uint64_t n);
bool xsk_tx_zerocopy(const struct xsk_tx *x);
void xsk_tx_close(struct xsk_tx *x);

/* ---- AF_PACKET (packet.c) ---------------------------------------------- */

/* Frames per sendmmsg() at most: --batch's limit. */
#define PACKET_BATCH_MAX	256

struct packet_tx;

/* An AF_PACKET socket sending @t out of interface @ifindex, @batch frames a
 * call (0: 64); a send returns early once *@stop is set. NULL with a
 * message on stderr. */
struct packet_tx *packet_open(int ifindex, const struct gen_tmpl *t, uint32_t batch,
			      const volatile sig_atomic_t *stop);
/* A gen_send_fn: the frames the calls took. */
int64_t packet_send(void *p, uint64_t n);
void packet_close(struct packet_tx *p);

#endif /* UCM_GEN_ENGINE_H */
