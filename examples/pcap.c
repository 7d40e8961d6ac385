// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pcap: a sink of one's own. The workers hand their batches to this
 * program's sink instead of a tun: it writes every packet to FILE in the
 * pcap format (tcpdump -r FILE reads it), and the frames go home after.
 *
 *   pcap IFACE FILE [SECONDS]            (root: see libucpumap(3), PRIVILEGES)
 *
 * Its last line: "pcap: wrote N packets to FILE".
 * Build: cc pcap.c $(pkg-config --cflags --libs libucpumap)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ucpumap/dp.h>

#define SNAPLEN		65535
#define LINKTYPE_ETHERNET 1

struct pcap_sink {
	pthread_mutex_t lock;	/* the workers share the file: one lock per batch */
	FILE *f;
	unsigned long packets;
	bool broken;		/* a write failed: what follows would not parse */
};

/* The file's header, in the host's order (its magic tells a reader). */
struct pcap_hdr {
	uint32_t magic;
	uint16_t major, minor;
	int32_t zone;
	uint32_t sigfigs, snaplen, linktype;
};

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	done = 1;
}

/* A packet's bytes: a packet of several frames (UCM_FRAME_F_CHAIN, an MTU
 * past a frame) holds head_len of them in its first frame, the rest in
 * the frames its list names (ucm_frame_chain(): their places in the UMEM,
 * which starts @addr before @h). */
static int write_packet(FILE *f, struct ucm_frame_hdr *h, uint64_t addr)
{
	const char *umem = (const char *)h - addr;
	uint64_t part[UCM_FRAME_CHAIN_MAX];
	uint32_t n = ucm_frame_chain(h, part), k;

	if (fwrite(ucm_frame_data(h), n ? h->head_len : h->len, 1, f) != 1)
		return -1;
	for (k = 0; k < n; k++)
		if (fwrite(umem + ucm_desc_addr(part[k]), ucm_desc_len(part[k]), 1, f) != 1)
			return -1;
	return 0;
}

/* The sink contract (cpumap.h): on the worker, the whole batch; return how
 * many were not delivered; the frames go home afterwards, ours to read
 * only until we return. */
static int pcap_xmit(void *ctx, uint32_t worker, struct ucm_frame_hdr **frames,
		     const uint64_t *addrs, uint32_t n)
{
	struct pcap_sink *s = ctx;
	struct timespec now;
	uint32_t i, failed = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++) {
		uint32_t rec[4] = { (uint32_t)now.tv_sec, (uint32_t)(now.tv_nsec / 1000),
				    frames[i]->len, frames[i]->len };

		/* A record half written: nothing after it would parse. */
		if (s->broken || fwrite(rec, sizeof(rec), 1, s->f) != 1 ||
		    write_packet(s->f, frames[i], addrs[i])) {
			s->broken = true;
			failed++;
		}
	}
	s->packets += n - failed;
	pthread_mutex_unlock(&s->lock);
	return failed;
}

static const struct ucm_sink_ops pcap_ops = {
	.sz = sizeof(struct ucm_sink_ops),	/* the ops are extensible */
	.xmit = pcap_xmit,
};

int main(int argc, char **argv)
{
	static const struct pcap_hdr hdr = { 0xa1b2c3d4, 2, 4, 0, 0, SNAPLEN,
					     LINKTYPE_ETHERNET };
	struct pcap_sink s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct ucm_dp_health h;
	struct ucm_dp *dp;
	int secs, err, fault = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: pcap IFACE FILE [SECONDS]\n");
		return 2;
	}
	secs = argc > 3 ? atoi(argv[3]) : 0;
	s.f = fopen(argv[2], "wx");	/* never over an existing file */
	if (!s.f) {
		fprintf(stderr, "pcap: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (fwrite(&hdr, sizeof(hdr), 1, s.f) != 1) {
		fprintf(stderr, "pcap: %s: %s\n", argv[2], strerror(errno));
		goto out_file;
	}
	UCM_OPTS(ucm_dp_opts, o, .ifname = argv[1], .steer_policy = UCM_STEER_L4_HASH,
		 .sink = &pcap_ops, .sink_ctx = &s);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	dp = ucm_dp__create(&o);
	if (!dp) {
		fprintf(stderr, "pcap: %s\n", strerror(errno));
		goto out_file;
	}
	err = ucm_dp__start(dp);
	if (!err) {
		printf("pcap: %s -> %s\n", argv[1], argv[2]);
		fflush(stdout);
		/* Every 100 ms: faults (the interface or tun deleted, a socket
		 * or thread failed) end the run; the library logs them. */
		for (int t = 0; !done && (!secs || t < secs * 10); t++) {
			if (ucm_dp__check(dp, &h, sizeof(h)) == 1) {
				fprintf(stderr, "pcap: stopping: %s\n", ucm_dp_fault_str(h.fault));
				fault = 1;
				break;
			}
			usleep(100000);
		}
	}
	/* Stopping drains the workers: every batch is written before it returns. */
	if (ucm_dp__stop(dp, 1500) && !err)
		err = -errno;
	ucm_dp__destroy(dp);
	if (!s.packets && err) {	/* the start failed: no capture */
		fprintf(stderr, "pcap: %s\n", strerror(-err));
		goto out_file;
	}
	if (fclose(s.f))
		err = -errno;
	printf("pcap: wrote %lu packets to %s%s%s%s\n", s.packets, argv[2],
	       s.broken ? ", then a write failed: the capture is cut there" : "",
	       err ? ": " : "", err ? strerror(-err) : "");
	return err || fault || s.broken ? 1 : 0;

out_file:	/* nothing captured: no file left to refuse the next run */
	fclose(s.f);
	unlink(argv[2]);
	return 1;
}
