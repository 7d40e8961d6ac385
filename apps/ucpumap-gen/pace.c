// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's sending loop: an engine is called with about 10 ms of
 * frames at a time, at the speed measured so far, or with --rate 1 ms of
 * the rate (64 frames at least, or 10 ms' worth where that is fewer),
 * sleeping between calls to keep to its schedule; --count and
 * --duration end it, and so does a signal. A line per second, and the
 * total at the end.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "gen_opts.h"
#include "util.h"

#define CALL_SEC	0.010	/* aim of one call */
/* A --start-at missed by more than this is said: the generators' windows
 * then differ by that much. */
#define START_LATE_SEC	0.005
/* --rate's quantum: a call sends this much of the rate at once, as fast as
 * the engine goes (the loop engine: several Mpps), so a receiver's ring
 * takes bursts of this on time: at 200000 pps 200 frames, where 10 ms made
 * 2000, more than ucpumapd's default RX ring of 1024 holds. A late
 * wake-up is made up in one call (PACE_CATCHUP_SEC's worth at most, and no
 * more than a call of CALL_SEC at the engine's speed: at 200000 pps a
 * 50 ms stall sends 10000 at once), which a small ring drops. But not less
 * than a NAPI poll's budget of frames (what a NIC hands over at once
 * anyway), or CALL_SEC's worth where that is fewer: low rates keep calls
 * of 10 ms. */
#define RATE_CALL_SEC	0.001
#define RATE_MIN_BURST	64
/* --rate makes up for a late wake-up or a short stall, up to this much:
 * any second then carries about 1.1 x the rate at most (this, and one
 * call's 1 ms), where making up a whole second would let a receiver's
 * second carry up to twice it. */
#define PACE_CATCHUP_SEC	0.1
/* The link looked at this often: one down or without a carrier, or one
 * that no longer takes redirected frames (a veth whose peer lost its XDP
 * program), makes the engines that redirect count frames that never leave
 * (and the packet engine's sends fail), so the run stops, said, within
 * this. */
#define LINK_LOOK_SEC	1.0
#define MIN_CHUNK	64
#define MAX_CHUNK	(1u << 22)

static void print_tick(double t, uint64_t n, double dt)
{
	printf("%7.2f s: %llu pps (%llu sent)\n", t, (unsigned long long)(dt > 0 ? n / dt + 0.5 : 0),
	       (unsigned long long)n);
	fflush(stdout);
}

/* Where the sending loop is, in time and in frames. */
struct pace {
	double t0, end, next_print, last_print;
	double next_link;		/* when to look at the link again */
	double pace0, quantum;		/* --rate: the schedule's start, frames per call */
	double per_frame;		/* seconds a frame took, measured so far */
	uint64_t sent, last_sent;
};

static void pace_init(const struct gen_opts *c, struct pace *p)
{
	/* The first call's guess: a live frame's 20 Mpps, the loop's 2 Mpps
	 * (1.4 to 2.3 measured), a packet socket's 500 kpps, an AF_XDP
	 * socket's 1 Mpps (a first call sized for the live engine would run
	 * the others for seconds past --duration, the loop 10x its 10 ms). */
	*p = (struct pace){ .per_frame = c->engine == ENGINE_PACKET ? 2e-6 :
					 c->engine == ENGINE_XSK ? 1e-6 :
					 c->engine == ENGINE_LOOP ? 500e-9 : 50e-9 };
	p->t0 = now_sec();
	p->end = c->duration > 0 ? p->t0 + c->duration : 0;
	p->next_print = p->t0 + 1;
	p->next_link = p->t0 + LINK_LOOK_SEC;
	p->last_print = p->t0;
	if (c->rate) {
		/* RATE_CALL_SEC of packets per call, the first call at once;
		 * at least RATE_MIN_BURST, or CALL_SEC's worth if fewer, or 1. */
		double least = fmin(RATE_MIN_BURST, c->rate * CALL_SEC);

		p->quantum = fmax(fmax(c->rate * RATE_CALL_SEC, least), 1);
		p->pace0 = p->t0 - p->quantum / c->rate;
	}
}

/* A line per second. */
static void pace_tick(struct pace *p, double t)
{
	if (t < p->next_print)
		return;
	print_tick(t - p->t0, p->sent - p->last_sent, t - p->last_print);
	p->last_sent = p->sent;
	p->last_print = t;
	p->next_print += 1;
	if (p->next_print <= t)
		p->next_print = t + 1;
}

/* With --rate: how many frames are due, at most @want; 0 after sleeping
 * until a quantum is due (or a tick, or the end). */
static double pace_due(const struct gen_opts *c, struct pace *p, double t, double want)
{
	double due = (t - p->pace0) * c->rate - (double)p->sent;
	double need = p->quantum;

	if (c->count && need > c->count - p->sent)
		need = c->count - p->sent;
	if (due < need) {
		double wake = p->pace0 + (p->sent + need) / c->rate;
		struct timespec ts;

		if (wake > p->next_print)
			wake = p->next_print;
		if (p->end && wake > p->end)
			wake = p->end;
		ts.tv_sec = (time_t)wake;
		ts.tv_nsec = (long)((wake - ts.tv_sec) * 1e9);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		return 0;
	}
	if (due > c->rate * PACE_CATCHUP_SEC) {
		/* Further behind (stopped, or the rate is out of reach): do
		 * not make it up in a burst. */
		p->pace0 = t - (p->sent + p->quantum) / (double)c->rate;
		due = p->quantum;
	}
	return want > due ? due : want;
}

/* Frames to send now: about 10 ms at the speed measured so far, paced by
 * --rate and bounded by --count; 0 when it slept instead. */
static uint64_t pace_want(const struct gen_opts *c, struct pace *p, double t)
{
	double want = CALL_SEC / p->per_frame;
	uint64_t n;

	/* No call past --duration, at the speed measured so far. */
	if (p->end && want > (p->end - t) / p->per_frame)
		want = (p->end - t) / p->per_frame;
	if (want < MIN_CHUNK)
		want = MIN_CHUNK;
	if (want > MAX_CHUNK)
		want = MAX_CHUNK;
	if (c->rate) {
		want = pace_due(c, p, t, want);
		if (want == 0)
			return 0;
	}
	if (c->count && want > c->count - p->sent)
		want = c->count - p->sent;
	n = (uint64_t)want;
	return n ? n : 1;
}

/* Until --start-at, or a signal; one past already is said. */
static void start_wait(double at, const volatile sig_atomic_t *stop)
{
	struct timespec ts = { .tv_sec = (time_t)at,
			       .tv_nsec = (long)((at - (double)(time_t)at) * 1e9) };
	double late = now_sec() - at;

	if (late > START_LATE_SEC) {
		fprintf(stderr, "ucpumap-gen: --start-at: %.3f s late (the set-up took longer): sending from now\n",
			late);
		return;
	}
	while (!*stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int pace_run(const struct gen_opts *c, gen_send_fn send, void *engine,
	     const volatile sig_atomic_t *stop)
{
	struct pace p;
	int status = 0, idle = 0;
	int64_t got_end;
	double t;

	if (c->start_at > 0)
		start_wait(c->start_at, stop);
	pace_init(c, &p);
	while (!*stop) {
		uint64_t n;
		int64_t got;

		t = now_sec();
		pace_tick(&p, t);
		if (p.end && t >= p.end)
			break;
		if (t >= p.next_link) {
			p.next_link = t + LINK_LOOK_SEC;
			const char *why = gen_link_lost(c);

			if (why) {
				fprintf(stderr, "ucpumap-gen: after %.1f s, %s %s: frames counted in the last second may not have left; stopping\n",
					t - p.t0, c->dev, why);
				status = 1;
				break;
			}
		}
		if (c->count && p.sent >= c->count)
			break;
		n = pace_want(c, &p, t);
		if (!n)
			continue;
		got = send(engine, n);
		if (got < 0) {
			status = 1;
			break;
		}
		n = (uint64_t)got;
		p.sent += n;
		/* (AF_XDP in zero-copy mode may report completions a call late.) */
		idle = n || *stop ? 0 : idle + 1;
		if (idle == 100) {
			fprintf(stderr, "ucpumap-gen: nothing went out in 100 calls; giving up\n");
			status = 1;
			break;
		}
		if (n >= MIN_CHUNK)
			p.per_frame = 0.7 * p.per_frame + 0.3 * ((now_sec() - t) / n);
	}
	/* The frames still on their way: the loop's last, xsk's late
	 * completions. */
	got_end = send(engine, 0);
	if (got_end > 0)
		p.sent += (uint64_t)got_end;
	t = now_sec();
	if (t - p.last_print > 0.05 && p.sent > p.last_sent)
		print_tick(t - p.t0, p.sent - p.last_sent, t - p.last_print);
	printf("total: %llu packets in %.3f s, %llu pps\n", (unsigned long long)p.sent, t - p.t0,
	       (unsigned long long)(t > p.t0 ? p.sent / (t - p.t0) + 0.5 : 0));
	fflush(stdout);
	return status;
}
