// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the counters. Delivered = delta of Udp and Udp6
 * InDatagrams + RcvbufErrors around a run, the socket drained before and
 * after (the kernel counts InDatagrams when a datagram is read); the NIC's
 * received packets (--dev); CPU busy shares; and what the children wrote:
 * the fields of ucpumapd's --stats-json lines (daemon.c asks for them),
 * ucpumap-gen's total, iperf3's receiver, testpmd's forward statistics.
 */
#include <errno.h>
#include <glob.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath.h"

static const char *const pool_keys[NPOOL] = {
	"pool_alloc_fast", "pool_alloc_refill", "pool_alloc_slow",
	"pool_recycle_cached", "pool_recycle_ring", "pool_recycle_ring_full",
	"pool_recycle_released",
};

const char *pool_key(int i)
{
	return pool_keys[i];
}

/* ---- the kernel's counters ------------------------------------------------- */

/* A counter of /proc/net/snmp6 ("Udp6InDatagrams"); 0 when absent. */
static uint64_t udp6_counter(const char *name)
{
	char line[1024], key[64];
	unsigned long long x;
	uint64_t r = 0;
	FILE *f = fopen("/proc/net/snmp6", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %llu", key, &x) == 2 && !strcmp(key, name))
			r = x;
	fclose(f);
	return r;
}

/* A counter of /proc/net/snmp's Udp table ("InDatagrams"); 0 when absent. */
static uint64_t udp_counter(const char *name)
{
	char hdr[1024], val[1024], *hs, *vs, *h, *v;
	FILE *f = fopen("/proc/net/snmp", "r");
	uint64_t r = 0;

	if (!f)
		return 0;
	while (fgets(hdr, sizeof(hdr), f)) {
		if (strncmp(hdr, "Udp:", 4) || !fgets(val, sizeof(val), f))
			continue;
		h = strtok_r(hdr, " \n", &hs);
		v = strtok_r(val, " \n", &vs);
		while (h && v) {
			if (!strcmp(h, name))
				r = strtoull(v, NULL, 10);
			h = strtok_r(NULL, " \n", &hs);
			v = strtok_r(NULL, " \n", &vs);
		}
		break;
	}
	fclose(f);
	return r;
}

/*
 * A drain reads at most this many datagrams a socket: with --dev the far
 * side's generator does not stop, and datagrams arriving as fast as one
 * thread reads them would keep it going for ever. More than a full
 * receive buffer holds (4 MiB of 64-byte datagrams); what arrives past it
 * waits for the next reading.
 */
#define DRAIN_MAX	(1u << 17)

/* Delivered in this namespace: the @n sockets of @fd drained, then UDP's
 * (and with @v6 UDP6's) InDatagrams + RcvbufErrors. */
static uint64_t udp_delivered(const int *fd, int n_fd, bool v6)
{
	char buf[2048];
	uint64_t n;

	for (int i = 0; i < n_fd; i++)
		for (uint32_t k = 0; k < DRAIN_MAX; k++)
			if (recv(fd[i], buf, sizeof(buf), MSG_DONTWAIT) < 0)
				break;
	n = udp_counter("InDatagrams") + udp_counter("RcvbufErrors");
	if (v6)
		n += udp6_counter("Udp6InDatagrams") + udp6_counter("Udp6RcvbufErrors");
	return n;
}

/* Delivered at the sink, IPv4 and IPv6. */
uint64_t delivered_now(const struct bench_topo *t)
{
	return udp_delivered(t->sink_fd, t->nsinks, true);
}

/* Delivered on the way back: the generator namespace's UDP counters. */
uint64_t back_delivered_now(const struct bench_topo *t)
{
	uint64_t v;

	if (setns(t->gen_ns_fd, CLONE_NEWNET))
		return 0;
	v = udp_delivered(&t->back_fd, 1, false);
	if (setns(t->dut_ns_fd, CLONE_NEWNET))
		bench_stop();	/* cannot happen; never measure in the wrong place */
	return v;
}

/* What IFACE received, from /proc/net/dev (this namespace's): packets plus
 * the driver's drops, the offered load in --dev mode. A NIC's drops are
 * packets its ring never took, not in its packets. A veth (the tests'
 * stand-in for one) counts a packet its XDP program failed to redirect in
 * both (seen on 6.18: 222675 read where the generator sent about 200000
 * and the sockets took 177542), so there the offered load reads high by
 * the socket's drops. */
uint64_t nic_rx_now(const char *ifname)
{
	char line[512], prim[IF_NAMESIZE];
	uint64_t r = 0;
	FILE *f = fopen("/proc/net/dev", "r");

	if (!f)
		return 0;
	/* /proc/net/dev lists the primary names, not an altname */
	ifname = if_primary_name(ifname, prim);
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':'), *n = line;
		unsigned long long bytes, pkts, errs, drop;

		if (!c)
			continue;
		*c = 0;
		while (*n == ' ')
			n++;
		if (strcmp(n, ifname))
			continue;
		if (sscanf(c + 1, "%llu %llu %llu %llu", &bytes, &pkts, &errs, &drop) == 4)
			r = pkts + drop;
	}
	fclose(f);
	return r;
}

/* ---- CPU busy shares ------------------------------------------------------- */

void busy_mark(struct busy_mark *m, int cpu)
{
	m->cpu = cpu;
	m->ok = !cpu_busy_sec(cpu, &m->busy, &m->all);
}

int busy_since(const struct busy_mark *m, double *share)
{
	double busy, all;

	if (!m->ok || cpu_busy_sec(m->cpu, &busy, &all) || all <= m->all)
		return -1;
	*share = (busy - m->busy) / (all - m->all);
	return 0;
}

/* Round @round's busy shares of @r; a row has them when every round has. */
void busy_done(struct row *r, int round, const struct busy_mark *bw,
	       const struct busy_mark *bc0)
{
	bool ok = !busy_since(bw, &r->busy[round]) && !busy_since(bc0, &r->busy_cpu0[round]);

	r->have_busy = (round == 0 || r->have_busy) && ok;
}

/* ---- what the children wrote --------------------------------------------------- */

/* The number after "@key": in @line. */
int json_u64_field(const char *line, const char *key, double *v)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	if (!p)
		return -1;
	p += strlen(k);
	while (*p == ' ')
		p++;
	*v = strtod(p, NULL);
	return 0;
}

/* The sum of every "@key": number in @line (one per queue). */
int json_sum_field(const char *line, const char *key, double *sum)
{
	char k[64];
	const char *p = line;
	int n = 0;

	snprintf(k, sizeof(k), "\"%s\":", key);
	*sum = 0;
	while ((p = strstr(p, k))) {
		p += strlen(k);
		*sum += strtod(p, NULL);
		n++;
	}
	return n ? 0 : -1;
}

/* The first array "@key": [...] in @line (the totals') into @v, @n
 * numbers at most: how many, or -1. */
int json_arr_field(const char *line, const char *key, double *v, int n)
{
	char k[64], *end;
	const char *p;
	int i = 0;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(line, k);
	if (!p)
		return -1;
	p = strchr(p, '[');
	if (!p)
		return -1;
	for (p++; i < n && *p && *p != ']'; i++) {
		v[i] = strtod(p, &end);
		if (end == p)
			return -1;
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return i;
}

/* The last line of @path, whatever its length (a statistics line grows
 * with the queues and workers), allocated: free() it; "" when there is
 * none, NULL when out of memory. */
char *last_line(const char *path)
{
	char *line = NULL, *last = NULL, *t;
	size_t cap = 0, last_cap = 0, c;
	FILE *f = fopen(path, "r");

	/* Each line read into the other buffer: no copy, no allocation once
	 * both are as long as the lines. */
	while (f && getline(&line, &cap, f) > 0) {
		t = last, last = line, line = t;
		c = last_cap, last_cap = cap, cap = c;
	}
	if (f)
		fclose(f);
	free(line);
	return last ? last : strdup("");
}

/* ucpumap-gen's "total:" packets; -1 when it wrote none. */
double gen_total(const char *out)
{
	char line[256];
	double v = -1;
	FILE *f = fopen(out, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "total:", 6))
			v = strtod(line + 6, NULL);
	fclose(f);
	return v;
}

double gen_late_sec(const char *out)
{
	static const char key[] = "ucpumap-gen: --start-at: ";
	char line[256];
	double v = 0;
	FILE *f = fopen(out, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, sizeof(key) - 1))
			v = strtod(line + sizeof(key) - 1, NULL);
	fclose(f);
	return v > 0 ? v : 0;
}

/* iperf3 -J's receiver: "bits_per_second" of "sum_received" in the "end"
 * object; 0 when absent. */
double iperf3_received(const char *out)
{
	char line[512];
	bool in_end = false;
	double bps = 0;
	FILE *f = fopen(out, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "\"sum_received\""))
			in_end = true;
		if (in_end && strstr(line, "\"bits_per_second\"")) {
			bps = strtod(strchr(line, ':') + 1, NULL);
			break;
		}
	}
	fclose(f);
	return bps;
}

/* testpmd's RX-packets of port 0 at exit ("Forward statistics for port 0"
 * then "RX-packets: N ..."); -1 when absent. */
double testpmd_rx(const char *out)
{
	char line[256];
	double rx = -1;
	int port = -1;
	FILE *f = fopen(out, "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "Forward statistics for port "))
			port = atoi(strstr(line, "port ") + 5);
		else if (port == 0 && strstr(line, "RX-packets:")) {
			rx = strtod(strstr(line, "RX-packets:") + 11, NULL);
			port = -1;
		}
	}
	if (f)
		fclose(f);
	return rx;
}

double window_scale(double seconds, double t0, double t1)
{
	return t1 > t0 ? seconds / (t1 - t0) : 1;
}

