// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The coalescing plan against the kernel: frames of two UDP flows (one with
 * a corrupted checksum in its run) are planned with ucm_gso__plan(), each
 * group written to a tun (IFF_VNET_HDR) as one super-packet built by
 * ucm_gso__build() (writev: the first datagram whole, then the others'
 * payloads), and a socket behind the tun reads what the kernel cut back
 * out. Every good datagram must arrive exactly once, byte for byte and in
 * order within its flow; the corrupted one must not arrive. Run inside a
 * fresh network namespace (test-gso-tun.sh), as root.
 *
 * Prints "groups N segs-in-largest M", then one line per check; exit 0
 * when all hold.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/if_tun.h>

#include "ucpumap/csum.h"
#include "ucpumap/gso.h"
#include "ucpumap/pkt.h"

#define NA	40	/* flow A: 40 datagrams of 100 bytes, #17 corrupted */
#define NB	9	/* flow B: 8 of 300 bytes and a short last one */
#define N	(NA + NB)

static uint8_t frame[N][1600];
static uint32_t flen[N];
static struct ucm_pkt pkt[N];

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* Ethernet + IPv4 + UDP, payload: flow letter, sequence, then a pattern. */
static void build(int i, char flow, int seq, uint16_t sport, int payload, uint16_t id,
		  int corrupt)
{
	uint8_t *f = frame[i], *ip = f + 14, *u = ip + 20, ph[4] = { 0, 0, 0, 17 };
	uint32_t ulen = 8 + payload, sum;

	memset(f, 0, sizeof(frame[i]));
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, 20 + ulen);
	put16(ip + 4, id);
	ip[8] = 64;
	ip[9] = 17;
	inet_pton(AF_INET, "10.99.0.1", ip + 12);
	inet_pton(AF_INET, "10.99.0.2", ip + 16);
	put16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, 20)));
	put16(u, sport);
	put16(u + 2, 9000);
	put16(u + 4, ulen);
	u[8] = flow;
	put16(u + 9, seq);
	for (int k = 3; k < payload; k++)
		u[8 + k] = (uint8_t)(seq * 7 + k);
	sum = ucm_csum_add(0, ip + 12, 8);
	sum = ucm_csum_add(sum, u + 4, 2);
	sum = ucm_csum_add(sum, ph, 4);
	sum = ucm_csum_fold(ucm_csum_add(sum, u, ulen));
	put16(u + 6, (sum ? sum : 0xffff) ^ (corrupt ? 0x0100 : 0));
	flen[i] = 14 + 20 + ulen;
	if (ucm_pkt__parse(&pkt[i], f, flen[i]) != UCM_DROP_NONE) {
		fprintf(stderr, "frame %d does not parse\n", i);
		exit(1);
	}
}

int main(void)
{
	const struct ucm_pkt *pp[N];
	const uint8_t *dp[N];
	struct ucm_gso_plan plan;
	struct ifreq ifr = { 0 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9000) };
	int fd, s, i, j = 0, ka = 0, kb = 0, failed = 0, largest = 0;
	int next_a = 0, next_b = 0;
	char buf[2048];

	/* Interleaved: A B A A B ...; B's ports differ. */
	for (i = 0; i < N; i++) {
		bool b = (i % 5 == 1 && kb < NB) || ka >= NA;

		if (b) {
			build(i, 'B', kb, 2000, kb == NB - 1 ? 50 : 300, (uint16_t)(500 + kb), 0);
			kb++;
		} else {
			build(i, 'A', ka, 1000, 100, (uint16_t)(100 + ka), ka == 17);
			ka++;
		}
		pp[i] = &pkt[i];
		dp[i] = frame[i];
	}
	if (ucm_gso__plan(pp, dp, N, 0, &plan))
		return 1;

	fd = open("/dev/net/tun", O_RDWR);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
	strcpy(ifr.ifr_name, "ucmgso0");
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr)) {
		perror("tun");
		return 1;
	}
	if (system("ip addr add 10.99.0.2/24 dev ucmgso0 && ip link set ucmgso0 up && "
		   "sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.ucmgso0.rp_filter=0"))
		return 1;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, "10.99.0.2", &a.sin_addr);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a))) {
		perror("bind");
		return 1;
	}

	for (uint32_t g = 0; g < plan.ngroups; g++) {
		struct iovec iov[1 + UCM_GSO_MAX_SEGS + 1];
		struct virtio_net_hdr vh;
		uint32_t payload = 0;
		int h = plan.head[g], n = 0;

		for (i = h; i >= 0; i = plan.next[i])
			payload += pkt[i].l3_len - (pkt[i].l4_off - pkt[i].l3_off) - 8;
		ucm_gso__build(&pkt[h], frame[h], plan.nseg[g], payload, plan.push[g], false, &vh);
		iov[n].iov_base = &vh;
		iov[n++].iov_len = sizeof(vh);
		iov[n].iov_base = frame[h] + pkt[h].l3_off;
		iov[n++].iov_len = flen[h] - pkt[h].l3_off;
		for (i = plan.next[h]; i >= 0; i = plan.next[i]) {
			iov[n].iov_base = frame[i] + pkt[i].l4_off + 8;
			iov[n++].iov_len = flen[i] - pkt[i].l4_off - 8;
		}
		if (writev(fd, iov, n) < 0) {
			printf("FAIL: write of group %u (%u segments): %m\n", g, plan.nseg[g]);
			failed++;
		}
		if (plan.nseg[g] > largest)
			largest = plan.nseg[g];
	}
	printf("groups %u segs-in-largest %d\n", plan.ngroups, largest);

	/* What the kernel cut back out, in arrival order. */
	struct timeval tv = { .tv_sec = 1 };

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		ssize_t r = recv(s, buf, sizeof(buf), 0);
		int seq, want_len;

		if (r < 0)
			break;
		j++;
		seq = (uint8_t)buf[1] << 8 | (uint8_t)buf[2];
		if (buf[0] == 'A') {
			if (next_a == 17)
				next_a++;	/* the corrupted one never comes */
			want_len = 100;
			if (seq != next_a++) {
				printf("FAIL: flow A: datagram %d where %d was due\n", seq, next_a - 1);
				failed++;
			}
		} else {
			want_len = seq == NB - 1 ? 50 : 300;
			if (seq != next_b++) {
				printf("FAIL: flow B: datagram %d where %d was due\n", seq, next_b - 1);
				failed++;
			}
		}
		if (r != want_len) {
			printf("FAIL: %c%d: %zd bytes, want %d\n", buf[0], seq, r, want_len);
			failed++;
		}
		for (int k = 3; k < r; k++)
			if ((uint8_t)buf[k] != (uint8_t)(seq * 7 + k)) {
				printf("FAIL: %c%d: byte %d differs\n", buf[0], seq, k);
				failed++;
				break;
			}
	}
	if (next_a == 17)
		next_a++;
	printf("%s: %d datagrams read of %d sent good (A %d of %d, B %d of %d)\n",
	       j == N - 1 && next_a == NA && next_b == NB ? "PASS" : "FAIL", j, N - 1,
	       next_a - 1, NA - 1, next_b, NB);
	if (j != N - 1 || next_a != NA || next_b != NB)
		failed++;
	if (plan.ngroups >= (uint32_t)N || largest < 2) {
		printf("FAIL: nothing merged (%u groups)\n", plan.ngroups);
		failed++;
	}
	close(s);
	close(fd);
	return failed ? 1 : 0;
}
