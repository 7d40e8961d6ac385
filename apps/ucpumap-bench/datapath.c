// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the whole path, row against row.
 *
 * On veth (the default), one topology for all rows: a generator namespace
 * (ucpumap-gen's live engine on vg, CPU 0) joined by a veth pair to a DUT
 * namespace (vd) that holds a bound UDP socket the bench never reads while
 * traffic runs. The bench itself enters the DUT namespace (setns), so the
 * sink socket, the kernel rows' XDP programs, the tun of the tun-ceiling row
 * and the /proc/net/snmp counters are all its own. ucpumapd, ucpumap-gen and
 * dpdk-testpmd run as child processes under `ip netns exec`.
 *
 * With --dev IFACE (a real NIC), there is no topology: an external generator
 * sends to --sink-ip, an address of this host, and the bench runs its rows on
 * IFACE in its own namespace, counting what the NIC received as offered.
 *
 * Delivered = delta of Udp and Udp6 InDatagrams + RcvbufErrors around a run,
 * the socket drained before and after (the kernel counts InDatagrams when a
 * datagram is read).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/if_link.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <liburing.h>

#include "ucpumap/xdp.h"
#include "bench.h"
#include "opts.h"
#include "util.h"

#define MAX_ROUNDS	100
#define DPDK_TAP_MAC	"02:00:00:00:00:01"	/* testpmd's tap: its frames go to it */

/* ucpumapd's pool counters, summed over its queues (stats-json names). */
static const char *const pool_keys[] = {
	"pool_alloc_fast", "pool_alloc_refill", "pool_alloc_slow",
	"pool_recycle_cached", "pool_recycle_ring", "pool_recycle_ring_full",
	"pool_recycle_released",
};
#define NPOOL ((int)(sizeof(pool_keys) / sizeof(pool_keys[0])))

enum row_kind { K_KPASS, K_KCPUMAP, K_DAEMON, K_TUN, K_DPDK, K_TWOWAY, K_TCP, K_TCP_KERNEL };

#define BACK_PORT	9001	/* the way back's sink, in the generator's namespace */
#define BACK_BATCH	64	/* the way back's sender: datagrams per sendmmsg() */
#define TCP_PORT	5201	/* the TCP rows' iperf3 */

struct row {
	const char *name;
	enum row_kind kind;
	const char *flag;		/* ucpumapd's extra flag */
	/* ucpumapd rows: coalescing on (the others run --no-coalesce, the
	 * design before it); the generator's flows (0: DEFAULT_FLOWS) */
	bool coalesce;
	int flows;
	bool on;
	const char *skipped;		/* why, when it did not run */
	double dst[MAX_ROUNDS];		/* delivered, pps */
	double sent[MAX_ROUNDS], src[MAX_ROUNDS];
	/* ucpumapd's delivered count and the kernel's over the same window: on
	 * veth ucpumapd's whole life; with --dev, where the outside generator's
	 * packets reach the stack directly before the program is attached and
	 * after it is gone, between two SIGUSR1 samples around the timed run */
	double daemon[MAX_ROUNDS], kernel_cmp[MAX_ROUNDS];
	double pool[NPOOL];		/* summed over the rounds */
	bool have_src, have_daemon, have_pool;
	/* two-way rows: the way back, pps; the share of completions that went
	 * straight into the cache, per round */
	double back_sent[MAX_ROUNDS], back_dst[MAX_ROUNDS], direct[MAX_ROUNDS];
	/* coalescing rows: datagrams per super-packet, and their share of
	 * what was written, per round */
	double segs[MAX_ROUNDS], merged[MAX_ROUNDS];
	bool have_segs;
	/* ucpumapd rows: the working share, everything on it, of the first
	 * worker CPU and of CPU 0 (on veth: the generator, the veth's
	 * receive, the RX thread) during the timed run: what a rate cost,
	 * and where it was bound */
	double busy[MAX_ROUNDS], busy_cpu0[MAX_ROUNDS];
	bool have_busy;
};

/* The generator's flows, in turn. */
#define DEFAULT_FLOWS	16
/* Few flows: each one's share of a 64-packet hold is 16 datagrams. */
#define FEW_FLOWS	4
/* Many flows: more than a hold's 64, so no two packets of a hand-over are
 * of one flow and nothing merges (the cost of trying). */
#define MANY_FLOWS	1024

static struct row rows[] = {
	{ .name = "kernel-pass", .kind = K_KPASS, .flag = NULL },
	{ .name = "kernel-cpumap", .kind = K_KCPUMAP, .flag = NULL },
	{ .name = "pass", .kind = K_DAEMON, .flag = "--pass" },
	{ .name = "cpumap-no-recycle", .kind = K_DAEMON, .flag = "--no-recycle" },
	{ .name = "cpumap", .kind = K_DAEMON, .flag = NULL },
	{ .name = "cpumap-coalesce", .kind = K_DAEMON, .coalesce = true, .flows = FEW_FLOWS },
	{ .name = "cpumap-coalesce-many-flows", .kind = K_DAEMON, .coalesce = true,
	  .flows = MANY_FLOWS },
	{ .name = "cpumap-no-batch", .kind = K_DAEMON, .flag = "--no-batch" },
	{ .name = "tun-ceiling", .kind = K_TUN, .flag = NULL },
	{ .name = "dpdk", .kind = K_DPDK, .flag = NULL },
	{ .name = "two-way", .kind = K_TWOWAY, .flag = NULL },
	{ .name = "two-way-no-direct-bulk", .kind = K_TWOWAY, .flag = "--no-direct-bulk" },
	/* one iperf3 TCP stream through ucpumapd; dst is bit/s */
	/* the same stream over the kernel's own path: no XDP program on vd */
	{ .name = "tcp-kernel", .kind = K_TCP_KERNEL },
	{ .name = "tcp", .kind = K_TCP },
	{ .name = "tcp-coalesce", .kind = K_TCP, .coalesce = true },
};
#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))

/* A TCP row: Gbit/s of one iperf3 stream, not pps at the UDP sink. */
static bool row_is_tcp(const struct row *r)
{
	return r->kind == K_TCP || r->kind == K_TCP_KERNEL;
}

static struct row *row_by(const char *name)
{
	for (int i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static struct dp_cfg {
	int rounds;
	double seconds;
	unsigned long rate;
	const char *json, *chart, *rowlist;
	char bindir[512];
	const char *dev;		/* NULL: the veth topology */
	char ifname[IF_NAMESIZE];	/* where the rows run: vd or --dev */
	const char *sink_ip, *cpus, *queues, *rx_cpus;
	unsigned long sink_port;
	bool v6, zero_copy, busy_poll;
	int wcpu[APP_MAX_CPUS], nwcpu;	/* the workers' CPUs */
	int q0, nq;			/* --queues as a range, for testpmd; nq 0: not one */
	int rx_cpu[APP_MAX_CPUS], n_rx_cpu;	/* --rx-cpus, checked; ucpumapd takes the text */
} cfg = { .rounds = 5, .seconds = 5, .sink_port = 9000, .cpus = "1", .queues = "0",
	    .nq = 1 };

static char ns_gen[64], ns_dut[64], tmpdir[128];
static int gen_ns_fd = -1, dut_ns_fd = -1, back_fd = -1;	/* the way back's sink */
static volatile sig_atomic_t stopping;
static pid_t kids[4];
static int sink_fd = -1;

static void on_signal(int sig)
{
	stopping = 1;
}

static void kid_add(pid_t p)
{
	for (int i = 0; i < 4; i++)
		if (!kids[i]) {
			kids[i] = p;
			return;
		}
}

static void kid_del(pid_t p)
{
	for (int i = 0; i < 4; i++)
		if (kids[i] == p)
			kids[i] = 0;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Start argv (NULL-terminated) in namespace @ns (empty: this one), output
 * to @out. */
static pid_t spawn(const char *ns, const char *out, char *const *argv)
{
	char *full[48];
	int n = 0;
	pid_t p;

	if (ns[0]) {
		full[n++] = "ip";
		full[n++] = "netns";
		full[n++] = "exec";
		full[n++] = (char *)ns;
	}
	for (int i = 0; argv[i] && n < 47; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	p = fork();
	if (p < 0)
		return -1;
	if (!p) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(full[0], full);
		_exit(127);
	}
	kid_add(p);
	return p;
}

static int reap(pid_t p, double timeout)
{
	double end = now_sec() + timeout;
	bool told = false;
	int st;

	while (now_sec() < end) {
		if (stopping && !told) {	/* interrupted: stop it now */
			kill(p, SIGTERM);
			told = true;
		}
		pid_t r = waitpid(p, &st, WNOHANG);

		if (r == p) {
			kid_del(p);
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		sleep_sec(0.02);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	kid_del(p);
	return -1;
}

static void cleanup(void)
{
	for (int i = 0; i < 4; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGTERM);
	for (int i = 0; i < 4; i++)
		if (kids[i] > 0)
			reap(kids[i], 2);
	if (back_fd >= 0)
		close(back_fd);
	if (gen_ns_fd >= 0)
		close(gen_ns_fd);
	if (dut_ns_fd >= 0)
		close(dut_ns_fd);
	back_fd = gen_ns_fd = dut_ns_fd = -1;
	if (ns_gen[0])
		sh("ip netns del %s 2>/dev/null", ns_gen);
	if (ns_dut[0])
		sh("ip netns del %s 2>/dev/null", ns_dut);
	if (tmpdir[0])
		sh("rm -rf %s", tmpdir);
	if (row_by("dpdk")->on)	/* testpmd's runtime directory (--file-prefix) */
		sh("rm -rf /var/run/dpdk/ucm-bench-%d", getpid());
	ns_gen[0] = ns_dut[0] = tmpdir[0] = 0;
}

static int set_sysctl(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(v, f);
	return fclose(f);
}

/* ---- the sink ------------------------------------------------------------ */

/* A counter of /proc/net/snmp's Udp table ("InDatagrams") or of
 * /proc/net/snmp6 ("Udp6InDatagrams"); 0 when absent. */
static uint64_t udp_counter(bool v6, const char *name)
{
	char hdr[1024], val[1024], *hs, *vs, *h, *v;
	FILE *f = fopen(v6 ? "/proc/net/snmp6" : "/proc/net/snmp", "r");
	uint64_t r = 0;

	if (!f)
		return 0;
	if (v6) {
		char key[64];
		unsigned long long x;

		while (fgets(hdr, sizeof(hdr), f))
			if (sscanf(hdr, "%63s %llu", key, &x) == 2 && !strcmp(key, name))
				r = x;
		fclose(f);
		return r;
	}
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

static uint64_t delivered_now(void)
{
	char buf[2048];

	while (recv(sink_fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
	return udp_counter(false, "InDatagrams") + udp_counter(false, "RcvbufErrors") +
	       udp_counter(true, "Udp6InDatagrams") + udp_counter(true, "Udp6RcvbufErrors");
}

/* Bind the sink: a UDP socket on --sink-ip, never read while traffic runs. */
static int sink_open(void)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;

	if (inet_pton(AF_INET6, cfg.sink_ip, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(cfg.sink_port);
		len = sizeof(*a6);
	} else {
		inet_pton(AF_INET, cfg.sink_ip, &a4->sin_addr);
		a4->sin_family = AF_INET;
		a4->sin_port = htons(cfg.sink_port);
		len = sizeof(*a4);
	}
	sink_fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (sink_fd < 0 || bind(sink_fd, (struct sockaddr *)&ss, len)) {
		int e = errno;

		fprintf(stderr, "datapath: cannot bind the sink to %s port %lu: %s%s\n",
			cfg.sink_ip, cfg.sink_port, strerror(e),
			e == EADDRNOTAVAIL ? " (--sink-ip must be an address of this host, the one "
					     "the generator sends to)" :
			e == EADDRINUSE ? " (choose another --sink-port)" : "");
		return -1;
	}
	return 0;
}

/* ---- the way back's sink (two-way rows) ------------------------------------ */

/* A UDP socket on 10.77.0.1:BACK_PORT in the generator's namespace, made
 * there by this thread and kept when it goes back to the DUT's. */
static int back_sink_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(BACK_PORT) };
	char path[128];

	snprintf(path, sizeof(path), "/run/netns/%s", ns_gen);
	gen_ns_fd = open(path, O_RDONLY);
	if (gen_ns_fd < 0 || setns(gen_ns_fd, CLONE_NEWNET))
		goto err;
	inet_pton(AF_INET, "10.77.0.1", &a.sin_addr);
	back_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (back_fd < 0 || bind(back_fd, (struct sockaddr *)&a, sizeof(a)))
		goto err;
	if (setns(dut_ns_fd, CLONE_NEWNET))
		goto err;
	return 0;
err:
	fprintf(stderr, "datapath: cannot make the way back's sink in %s: %s\n", ns_gen,
		strerror(errno));
	return -1;
}

/* Delivered on the way back: the generator namespace's UDP counters. */
static uint64_t back_delivered_now(void)
{
	char buf[2048];
	uint64_t v;

	while (recv(back_fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
	if (setns(gen_ns_fd, CLONE_NEWNET))
		return 0;
	v = udp_counter(false, "InDatagrams") + udp_counter(false, "RcvbufErrors");
	if (setns(dut_ns_fd, CLONE_NEWNET))
		stopping = 1;	/* cannot happen; never measure in the wrong place */
	return v;
}

/* The way back's traffic: 64-byte frames' worth of UDP from the DUT to the
 * generator's address, which the two-way rows route through the tun, in
 * sendmmsg() batches from CPU 0, until told to stop. */
struct back_sender {
	pthread_t thr;
	atomic_int stop;
	uint64_t sent;
	double secs;		/* how long it sent: its rates' time */
};

static void *back_send_main(void *arg)
{
	struct back_sender *b = arg;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(BACK_PORT) };
	static char payload[64 - 14 - 20 - 8];
	struct mmsghdr m[BACK_BATCH];
	struct iovec iov = { payload, sizeof(payload) };
	double t0;
	int fd, n;

	pin_self(0);
	inet_pton(AF_INET, "10.77.0.1", &dst.sin_addr);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return NULL;
	memset(m, 0, sizeof(m));
	for (int i = 0; i < BACK_BATCH; i++) {
		m[i].msg_hdr.msg_name = &dst;
		m[i].msg_hdr.msg_namelen = sizeof(dst);
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now_sec();
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		n = sendmmsg(fd, m, BACK_BATCH, 0);
		if (n > 0)
			b->sent += n;
		else
			sched_yield();	/* ENOBUFS: the tun's queue is full */
	}
	b->secs = now_sec() - t0;
	close(fd);
	return NULL;
}

/* ---- topology ------------------------------------------------------------ */

static char vd_mac[32], vg_mac[32];

/* An interface's MAC address, from `ip -o link` run in namespace @ns. */
static void ns_mac(const char *ns, const char *ifname, char *mac, size_t sz)
{
	char cmd[256], line[512], *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip -n %s -o link show %s", ns, ifname);
	f = popen(cmd, "r");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (p = strstr(line, "link/ether ")))
		snprintf(mac, sz, "%.17s", p + 11);
	pclose(f);
}

static int topology(void)
{
	char path[128];
	int fd;

	snprintf(ns_gen, sizeof(ns_gen), "ucm-bench-gen-%d", getpid());
	snprintf(ns_dut, sizeof(ns_dut), "ucm-bench-dut-%d", getpid());
	if (sh("ip netns add %s && ip netns add %s && "
	       "ip -n %s link add vg type veth peer name vd netns %s && "
	       "ip -n %s addr add 10.77.0.1/24 dev vg && ip -n %s addr add 10.77.0.2/24 dev vd && "
	       "ip -n %s addr add fd77::1/64 dev vg nodad && ip -n %s addr add fd77::2/64 dev vd nodad && "
	       "ip -n %s link set vg up && ip -n %s link set vd up && "
	       "ip -n %s link set lo up && ip -n %s link set lo up",
	       ns_gen, ns_dut, ns_gen, ns_dut, ns_gen, ns_dut, ns_gen, ns_dut, ns_gen, ns_dut,
	       ns_gen, ns_dut)) {
		fprintf(stderr, "datapath: cannot build the namespaces\n");
		return -1;
	}
	sh("ip netns exec %s ethtool -K vg tx off >/dev/null 2>&1", ns_gen);
	snprintf(path, sizeof(path), "/run/netns/%s", ns_dut);
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "datapath: cannot enter %s: %s\n", ns_dut, strerror(errno));
		return -1;
	}
	dut_ns_fd = fd;
	if (back_sink_open())
		return -1;
	set_sysctl("/proc/sys/net/ipv4/conf/all/rp_filter", "0");
	set_sysctl("/proc/sys/net/ipv4/conf/default/rp_filter", "0");
	/* /sys is still the old namespace's: ask ip. */
	ns_mac(ns_dut, "vd", vd_mac, sizeof(vd_mac));
	ns_mac(ns_gen, "vg", vg_mac, sizeof(vg_mac));
	if (!vd_mac[0] || !vg_mac[0]) {
		fprintf(stderr, "datapath: no MAC address on vd or vg\n");
		return -1;
	}
	return sink_open();
}

/* --dev: the rows run on a NIC of this host, fed by an external generator.
 * Nothing of the host's is changed; what would spoil a row is refused with
 * its fix. */
static int dev_setup(void)
{
	char path[128], v[16] = "";
	unsigned int ifindex = if_nametoindex(cfg.ifname);
	uint32_t prog = 0;
	FILE *f;

	if (!ifindex) {
		fprintf(stderr, "datapath: --dev %s: no such interface in this network namespace\n",
			cfg.ifname);
		return -1;
	}
	if (!bpf_xdp_query_id(ifindex, 0, &prog) && prog) {
		fprintf(stderr, "datapath: --dev %s already has an XDP program (id %u); the rows "
			"attach their own: detach it first (ip link set dev %s xdp off)\n",
			cfg.ifname, prog, cfg.ifname);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/all/rp_filter");
	f = fopen(path, "r");
	if (f) {
		if (!fgets(v, sizeof(v), f))
			v[0] = 0;
		fclose(f);
	}
	if (!cfg.v6 && atoi(v) == 1) {
		fprintf(stderr, "datapath: net.ipv4.conf.all.rp_filter is 1 (strict): packets that "
			"reach the stack through a tun would be dropped as martians; set it to 2 "
			"(loose) or 0 for the benchmark: sysctl -w net.ipv4.conf.all.rp_filter=2\n");
		return -1;
	}
	return sink_open();
}

/* What IFACE received, from /proc/net/dev (this namespace's): packets plus
 * the driver's drops, the offered load in --dev mode. */
static uint64_t nic_rx_now(void)
{
	char line[512];
	uint64_t r = 0;
	FILE *f = fopen("/proc/net/dev", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':'), *n = line;
		unsigned long long bytes, pkts, errs, drop;

		if (!c)
			continue;
		*c = 0;
		while (*n == ' ')
			n++;
		if (strcmp(n, cfg.ifname))
			continue;
		if (sscanf(c + 1, "%llu %llu %llu %llu", &bytes, &pkts, &errs, &drop) == 4)
			r = pkts + drop;
	}
	fclose(f);
	return r;
}

/* ---- the generator ------------------------------------------------------- */

static pid_t gen_start(const char *out, int flows)
{
	char dur[32], rate[32], gen[600], port[16], nflows[16];
	char *argv[] = { gen, "--dev", "vg", "--dst-ip", (char *)cfg.sink_ip, "--dst-mac", vd_mac,
			 "--dst-port", port, "--flows", nflows, "--cpu", "0",
			 "--duration", dur, "--rate", rate, NULL };

	snprintf(gen, sizeof(gen), "%s/ucpumap-gen", cfg.bindir);
	snprintf(nflows, sizeof(nflows), "%d", flows ? flows : DEFAULT_FLOWS);
	snprintf(dur, sizeof(dur), "%g", cfg.seconds);
	snprintf(rate, sizeof(rate), "%lu", cfg.rate);
	snprintf(port, sizeof(port), "%lu", cfg.sink_port);
	return spawn(ns_gen, out, argv);
}

static double gen_total(const char *out)
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

/* ---- the rows ------------------------------------------------------------ */

/* r0 = @action (XDP_PASS, XDP_DROP); exit. Return the program's fd. */
static int xdp_const_attach(int ifindex, int action)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = action },	/* BPF_ALU64|BPF_MOV|BPF_K */
		{ .code = 0x95 },				/* BPF_JMP|BPF_EXIT */
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "ucm_bench_pass", "GPL", insns, 2, NULL);

	if (fd < 0)
		return fd;
	if (bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Offer traffic to whatever is on the interface now, for cfg.seconds; fills
 * @sent. On veth the generator runs now; with --dev it is already running
 * outside, and what the NIC received stands for what was sent. */
static int run_traffic(const char *tag, int flows, double *sent)
{
	char out[256];
	pid_t g;

	if (cfg.dev) {
		uint64_t n0 = nic_rx_now();

		sleep_sec(cfg.seconds);
		*sent = nic_rx_now() - n0;
		return stopping ? -1 : 0;
	}
	snprintf(out, sizeof(out), "%s/gen-%s", tmpdir, tag);
	g = gen_start(out, flows);
	if (g < 0 || reap(g, cfg.seconds + 10) != 0) {
		fprintf(stderr, "datapath: %s: the generator failed:\n", tag);
		sh("tail -3 %s >&2", out);
		return -1;
	}
	*sent = gen_total(out);
	return 0;
}

static int row_kernel(struct row *r, int round)
{
	int ifindex = if_nametoindex(cfg.ifname), pfd = -1, rc;
	struct ucm_xdp *x = NULL;
	uint64_t d0, d1;

	if (r->kind == K_KPASS) {
		pfd = xdp_const_attach(ifindex, XDP_PASS);
		if (pfd < 0) {
			fprintf(stderr, "datapath: kernel-pass: cannot attach XDP_PASS\n");
			return -1;
		}
	} else {
		/* ucpumapd's default steering, so both spread flows alike */
		struct ucm_xdp_opts o = { .sz = sizeof(o), .nworkers = cfg.nwcpu,
					  .policy = UCM_STEER_L4_HASH };

		x = ucm_xdp__load(&o);
		if (!x || ucm_xdp__set_kernel_cpumap(x, cfg.wcpu, cfg.nwcpu, 2048) ||
		    ucm_xdp__attach(x, ifindex, UCM_XDP_ATTACH_CPUMAP)) {
			fprintf(stderr, "datapath: kernel-cpumap: cannot attach\n");
			if (x)
				ucm_xdp__destroy(x);
			return -1;
		}
	}
	sleep_sec(0.2);
	d0 = delivered_now();
	rc = run_traffic(r->name, r->flows, &r->sent[round]);
	sleep_sec(0.3);
	d1 = delivered_now();
	if (pfd >= 0) {
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
		close(pfd);
	}
	if (x) {
		ucm_xdp__detach(x);
		ucm_xdp__destroy(x);
	}
	r->dst[round] = (d1 - d0) / cfg.seconds;
	return rc;
}

static int json_u64_field(const char *line, const char *key, double *v)
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
static int json_sum_field(const char *line, const char *key, double *sum)
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

/* Wait until child @pid (@what, output in @out) has made device @dev and
 * put an XDP program on the interface: 0; -1 when it exits first (its last
 * lines shown) or 10 s pass. */
static int wait_ready(pid_t pid, const char *dev, const char *what, const char *out)
{
	uint32_t prog = 0;

	for (int i = 0; i < 200; i++) {
		if (if_nametoindex(dev) &&
		    !bpf_xdp_query_id(if_nametoindex(cfg.ifname), 0, &prog) && prog)
			return 0;
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			kid_del(pid);
			fprintf(stderr, "datapath: %s did not start:\n", what);
			sh("tail -5 %s >&2", out);
			return -1;
		}
		sleep_sec(0.05);
	}
	fprintf(stderr, "datapath: %s did not come up within 10 s: stopped\n", what);
	kill(pid, SIGTERM);
	reap(pid, 5);
	return -1;
}

/* ucpumapd's tun_packets now: SIGUSR1 makes it append a line to its
 * --stats-json file. -1 when no line came within a second. @kern: the
 * kernel's delivered count at about the same moment, the middle of two reads
 * that bracket the signal (the daemon counts a packet after the kernel has). */
static double daemon_sample(pid_t d, const char *js, double *kern)
{
	char line[16384];
	double v = -1;
	int n0 = 0, n;
	uint64_t k0;
	FILE *f;

	f = fopen(js, "r");
	while (f && fgets(line, sizeof(line), f))
		n0++;
	if (f)
		fclose(f);
	k0 = delivered_now();
	kill(d, SIGUSR1);
	for (int i = 0; i < 2000; i++) {	/* short steps: a narrow bracket */
		sleep_sec(0.0005);
		f = fopen(js, "r");
		n = 0;
		while (f && fgets(line, sizeof(line), f))
			if (++n > n0 && strchr(line, '\n'))
				json_u64_field(line, "tun_packets", &v);
		if (f)
			fclose(f);
		if (v >= 0) {
			*kern = (k0 + delivered_now()) / 2.0;
			return v;
		}
	}
	return -1;
}

/* A CPU's working share between a mark and now. */
struct busy_mark {
	int cpu;
	double busy, all;
	bool ok;
};

static void busy_mark(struct busy_mark *m, int cpu)
{
	m->cpu = cpu;
	m->ok = !cpu_busy_sec(cpu, &m->busy, &m->all);
}

static int busy_share(const struct busy_mark *m, double *share)
{
	double busy, all;

	if (!m->ok || cpu_busy_sec(m->cpu, &busy, &all) || all <= m->all)
		return -1;
	*share = (busy - m->busy) / (all - m->all);
	return 0;
}

/* Round @round's busy shares of @r; a row has them when every round has. */
static void busy_done(struct row *r, int round, const struct busy_mark *bw,
		      const struct busy_mark *bc0)
{
	bool ok = !busy_share(bw, &r->busy[round]) && !busy_share(bc0, &r->busy_cpu0[round]);

	r->have_busy = (round == 0 || r->have_busy) && ok;
}

/* One iperf3 TCP stream from the generator's namespace (CPU 0) to the
 * sink address, for cfg.seconds: its receiver's rate, bit/s, in @bps. */
static int run_tcp(const char *tag, double *bps)
{
	char sout[256], cout[256], port[16], secs[32], line[512];
	char *server[] = { "iperf3", "-s", "-1", "-B", (char *)cfg.sink_ip, "-p", port, NULL };
	char *client[] = { "iperf3", "-c", (char *)cfg.sink_ip, "-p", port, "-t", secs, "-A", "0",
			   "-J", NULL };
	bool in_end = false;
	pid_t s, c;
	FILE *f;
	int rc;

	snprintf(port, sizeof(port), "%d", TCP_PORT);
	snprintf(secs, sizeof(secs), "%g", cfg.seconds);
	snprintf(sout, sizeof(sout), "%s/iperf3-s-%s", tmpdir, tag);
	snprintf(cout, sizeof(cout), "%s/iperf3-c-%s", tmpdir, tag);
	*bps = 0;
	s = spawn(ns_dut, sout, server);
	if (s < 0)
		return -1;
	sleep_sec(0.3);		/* listening */
	c = spawn(ns_gen, cout, client);
	rc = c < 0 ? -1 : reap(c, cfg.seconds + 15);
	if (reap(s, 5) != 0)
		rc = rc ?: -1;
	if (rc) {
		fprintf(stderr, "datapath: %s: iperf3 failed:\n", tag);
		sh("tail -3 %s %s >&2", cout, sout);
		return -1;
	}
	/* The receiver's figure: "sum_received" of the "end" object. */
	f = fopen(cout, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "\"sum_received\""))
			in_end = true;
		if (in_end && strstr(line, "\"bits_per_second\"")) {
			*bps = strtod(strchr(line, ':') + 1, NULL);
			break;
		}
	}
	fclose(f);
	return *bps > 0 ? 0 : -1;
}

/* The TCP stream over the kernel's own path, nothing attached to vd: what
 * the sender and the stack reach without ucpumap in between. */
static int row_tcp_kernel(struct row *r, int round)
{
	struct busy_mark bw, bc0;
	int rc;

	busy_mark(&bw, cfg.wcpu[0]);
	busy_mark(&bc0, 0);
	rc = run_tcp(r->name, &r->dst[round]);
	busy_done(r, round, &bw, &bc0);
	return rc;
}

static int row_daemon(struct row *r, int round)
{
	char out[256], js[256], bin[600], line[16384], last[16384] = "";
	char *argv[32];
	int n = 0, rc;
	uint64_t l0, d0, d1, b0 = 0;
	double sent = 0, v, a_tun = -1, b_tun = -1, a_kern = 0, b_kern = 0;
	struct busy_mark bw, bc0;
	struct back_sender back = {};
	bool back_started = false;
	pid_t d;
	FILE *f;

	snprintf(out, sizeof(out), "%s/d-%s", tmpdir, r->name);
	snprintf(js, sizeof(js), "%s/d-%s.json", tmpdir, r->name);
	snprintf(bin, sizeof(bin), "%s/ucpumapd", cfg.bindir);
	unlink(js);
	argv[n++] = bin;
	argv[n++] = "--dev"; argv[n++] = cfg.ifname;
	argv[n++] = "--tun"; argv[n++] = "ucmb0";
	argv[n++] = "--cpus"; argv[n++] = (char *)cfg.cpus;
	argv[n++] = "--queues"; argv[n++] = (char *)cfg.queues;
	argv[n++] = "--interval"; argv[n++] = "0";
	argv[n++] = "--stats-json"; argv[n++] = js;
	if (cfg.rx_cpus) {
		argv[n++] = "--rx-cpus";
		argv[n++] = (char *)cfg.rx_cpus;
	}
	if (cfg.zero_copy)
		argv[n++] = "--zero-copy";
	if (cfg.busy_poll)
		argv[n++] = "--busy-poll";
	if (r->kind == K_TWOWAY) {
		argv[n++] = "--peer-mac";
		argv[n++] = vg_mac;
	}
	if (r->flag)
		argv[n++] = (char *)r->flag;
	if (!r->coalesce)
		argv[n++] = "--no-coalesce";
	argv[n] = NULL;
	l0 = delivered_now();
	d = spawn(ns_dut, out, argv);
	if (d < 0 || wait_ready(d, "ucmb0", "ucpumapd", out))
		return -1;
	set_sysctl("/proc/sys/net/ipv4/conf/ucmb0/rp_filter", "0");
	if (r->kind == K_TWOWAY)	/* the way back: through the tun only */
		sh("ip route replace 10.77.0.1/32 dev ucmb0");
	sleep_sec(0.3);
	d0 = delivered_now();
	if (cfg.dev)
		a_tun = daemon_sample(d, js, &a_kern);
	if (r->kind == K_TWOWAY) {
		b0 = back_delivered_now();
		back_started = !pthread_create(&back.thr, NULL, back_send_main, &back);
	}
	busy_mark(&bw, cfg.wcpu[0]);
	busy_mark(&bc0, 0);
	if (r->kind == K_TCP)
		rc = run_tcp(r->name, &r->dst[round]);
	else
		rc = run_traffic(r->name, r->flows, &sent);
	busy_done(r, round, &bw, &bc0);
	if (back_started) {
		atomic_store(&back.stop, 1);
		pthread_join(back.thr, NULL);
		sleep_sec(0.2);
		/* It runs from before the generator starts until after it
		 * is reaped: longer than cfg.seconds. */
		if (back.secs > 0) {
			r->back_sent[round] = back.sent / back.secs;
			r->back_dst[round] = (back_delivered_now() - b0) / back.secs;
		}
	}
	if (cfg.dev) {
		b_tun = daemon_sample(d, js, &b_kern);
	} else {
		sleep_sec(0.2);
	}
	kill(d, SIGTERM);
	if (reap(d, 10) != 0) {
		fprintf(stderr, "datapath: %s: ucpumapd did not stop cleanly:\n", r->name);
		sh("tail -5 %s >&2", out);
		rc = -1;
	}
	d1 = delivered_now();
	r->sent[round] = sent;
	if (r->kind != K_TCP)
		r->dst[round] = (d1 - d0) / cfg.seconds;
	if (!cfg.dev)
		r->kernel_cmp[round] = d1 - l0;
	f = fopen(js, "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			strcpy(last, line);
		fclose(f);
	}
	if (cfg.dev && a_tun >= 0 && b_tun >= 0) {
		r->daemon[round] = b_tun - a_tun;
		r->kernel_cmp[round] = b_kern - a_kern;
		r->have_daemon = true;
	} else if (!cfg.dev && r->kind != K_TCP && !json_u64_field(last, "tun_packets", &v)) {
		r->daemon[round] = v;
		r->have_daemon = true;
	}
	if (!json_u64_field(last, "rx", &v)) {
		r->src[round] = v / cfg.seconds;
		r->have_src = true;
	}
	for (int i = 0; i < NPOOL; i++) {
		double sum;

		if (json_sum_field(last, pool_keys[i], &sum))
			continue;
		r->pool[i] += sum;
		r->have_pool = true;
	}
	if (r->coalesce) {
		double super = 0, segs = 0, pkts = 0;

		bool ok = !json_u64_field(last, "tun_super", &super) &&
			  !json_u64_field(last, "tun_super_segs", &segs) &&
			  !json_u64_field(last, "tun_packets", &pkts);

		r->segs[round] = super > 0 ? segs / super : 0;
		r->merged[round] = pkts > 0 ? segs / pkts : 0;
		r->have_segs = (round == 0 || r->have_segs) && ok;
	}
	if (r->kind == K_TWOWAY) {
		double done = 0, direct = 0;

		json_u64_field(last, "tx_completed", &done);
		json_u64_field(last, "tx_comp_direct", &direct);
		r->direct[round] = done > 0 ? direct / done : 0;
	}
	return rc;
}

/* The tun-ceiling row's datagrams: 64-byte frames less the Ethernet header,
 * from 198.18.0.1 / 2001:2::1 (RFC 2544's and RFC 5180's benchmarking
 * ranges) to the sink, @n source ports, with a UDP checksum as ucpumap-gen's
 * carry (the kernel verifies it in every row alike). Return the length. */
static int ceiling_packets(uint8_t (*pkt)[64], int n)
{
	bool v6 = strchr(cfg.sink_ip, ':');
	uint8_t src[16], dst[16];
	int len = 64 - 14;

	inet_pton(v6 ? AF_INET6 : AF_INET, v6 ? "2001:2::1" : "198.18.0.1", src);
	inet_pton(v6 ? AF_INET6 : AF_INET, cfg.sink_ip, dst);
	for (int i = 0; i < n; i++)
		udp_build(pkt[i], len, v6, src, dst, 1024 + i, cfg.sink_port);
	return len;
}

/* One thread on the first worker CPU writes prebuilt UDP datagrams into a
 * tun queue in io_uring batches of 64: the sink's own limit. The traffic
 * runs meanwhile, dropped by XDP on the interface, so the other CPU works
 * as hard as in the other rows and none of it reaches the sink. */
static int row_tun(struct row *r, int round)
{
	enum { BATCH = 64, NPKT = 16 };
	uint8_t pkt[NPKT][64];
	struct ifreq ifr = { 0 };
	struct io_uring ring;
	uint64_t d0, d1, n = 0;
	int fd, s, len, xfd, rc = -1;
	char out[256];
	cpu_set_t old;
	pid_t g = 0;
	double end;

	len = ceiling_packets(pkt, NPKT);
	xfd = xdp_const_attach(if_nametoindex(cfg.ifname), XDP_DROP);
	if (xfd < 0) {
		fprintf(stderr, "datapath: tun-ceiling: cannot attach XDP_DROP to %s\n",
			cfg.ifname);
		return -1;
	}
	fd = open("/dev/net/tun", O_RDWR);
	if (fd < 0)
		goto err_xdp;
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	strcpy(ifr.ifr_name, "ucmb1");
	if (ioctl(fd, TUNSETIFF, &ifr))
		goto err_fd;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ioctl(s, SIOCSIFFLAGS, &ifr);
	close(s);
	set_sysctl("/proc/sys/net/ipv4/conf/ucmb1/rp_filter", "0");
	if (io_uring_queue_init(BATCH * 2, &ring, 0))
		goto err_fd;
	if (!cfg.dev) {
		snprintf(out, sizeof(out), "%s/gen-%s", tmpdir, r->name);
		g = gen_start(out, 0);
		if (g < 0)
			goto err_ring;
	}
	sched_getaffinity(0, sizeof(old), &old);
	pin_self(cfg.wcpu[0]);
	sleep_sec(0.1);
	d0 = delivered_now();
	end = now_sec() + cfg.seconds;
	while (now_sec() < end && !stopping) {
		struct io_uring_cqe *cqe;

		for (int i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_write(sqe, fd, pkt[i % NPKT], len, 0);
		}
		io_uring_submit_and_wait(&ring, BATCH);
		for (int i = 0; i < BATCH; i++) {
			if (io_uring_wait_cqe(&ring, &cqe))
				break;
			if (cqe->res == len)
				n++;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	sched_setaffinity(0, sizeof(old), &old);
	sleep_sec(0.1);
	d1 = delivered_now();
	r->sent[round] = n;
	r->dst[round] = (d1 - d0) / cfg.seconds;
	rc = 0;
	if (g > 0 && reap(g, 10) != 0) {
		fprintf(stderr, "datapath: tun-ceiling: the generator failed:\n");
		sh("tail -3 %s >&2", out);
		rc = -1;
	}
err_ring:
	io_uring_queue_exit(&ring);
err_fd:
	close(fd);
err_xdp:
	if (xfd >= 0) {
		bpf_xdp_detach(if_nametoindex(cfg.ifname), XDP_FLAGS_DRV_MODE, NULL);
		close(xfd);
	}
	return rc;
}

/* dpdk-testpmd: net_af_xdp on the interface's queues, forwarding in mac mode
 * to a net_tap whose kernel side has the MAC the frames are sent to. Its
 * forwarding cores are the workers' CPUs, its main core CPU 0 (idle: stats
 * only at exit). */
static int row_dpdk(struct row *r, int round)
{
	char out[256], lcores[256], vdev0[128], nq[16], ncores[16], line[256], prefix[32];
	/* No hugepages here: --no-huge and fewer mbufs than the default. --no-shconf
	 * and our own --file-prefix keep it apart from any other DPDK process;
	 * --stats-period keeps it running (and quiet) until SIGTERM. */
	char *argv[] = { "dpdk-testpmd", "--no-shconf", "--file-prefix", prefix, "--no-huge",
			 "-m", "1024", "--no-pci",
			 "-l", lcores, "--main-lcore", "0", "--vdev", vdev0, "--vdev",
			 "net_tap0,iface=ucmbt0,mac=" DPDK_TAP_MAC, "--log-level", "*:error", "--",
			 "--total-num-mbufs=32768", "--forward-mode=mac",
			 "--eth-peer=1," DPDK_TAP_MAC, "--nb-cores", ncores, "--rxq", nq, "--txq", nq,
			 "--auto-start", "--stats-period", "3600", NULL };
	double sent = 0, rx = -1;
	uint64_t d0, d1;
	int rc, l = 0, port = -1;
	pid_t d;
	FILE *f;

	l += snprintf(lcores + l, sizeof(lcores) - l, "0");
	for (int i = 0; i < cfg.nwcpu; i++)
		l += snprintf(lcores + l, sizeof(lcores) - l, ",%d", cfg.wcpu[i]);
	snprintf(vdev0, sizeof(vdev0), "net_af_xdp0,iface=%s,start_queue=%d,queue_count=%d",
		 cfg.ifname, cfg.q0, cfg.nq);
	snprintf(nq, sizeof(nq), "%d", cfg.nq);
	snprintf(prefix, sizeof(prefix), "ucm-bench-%d", getpid());
	snprintf(ncores, sizeof(ncores), "%d", cfg.nwcpu);
	snprintf(out, sizeof(out), "%s/dpdk-%d", tmpdir, round);
	d = spawn(ns_dut, out, argv);
	if (d < 0 || wait_ready(d, "ucmbt0", "dpdk-testpmd", out))
		return -1;
	sleep_sec(0.5);
	d0 = delivered_now();
	rc = run_traffic(r->name, r->flows, &sent);
	sleep_sec(0.2);
	kill(d, SIGTERM);
	if (reap(d, 10) != 0) {
		fprintf(stderr, "datapath: dpdk: dpdk-testpmd did not stop cleanly:\n");
		sh("tail -5 %s >&2", out);
		rc = -1;
	}
	d1 = delivered_now();
	r->sent[round] = sent;
	r->dst[round] = (d1 - d0) / cfg.seconds;
	/* "Forward statistics for port 0" then "RX-packets: N ..." */
	f = fopen(out, "r");
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
	if (rx >= 0) {
		r->src[round] = rx / cfg.seconds;
		r->have_src = true;
	}
	return rc;
}

/* ---- output ---------------------------------------------------------------- */

static void print_stats_col(const double *v, int n, bool have)
{
	struct run_stats st;

	if (!have) {
		printf(" %22s", "-");
		return;
	}
	run_stats(v, n, &st);
	printf(" %6.3f (%5.3f-%5.3f)", st.median / 1e6, st.min / 1e6, st.max / 1e6);
}

/* Row @a's rate over row @b's, round by round: dst rx, or with @back the
 * way back's delivered rate. */
static void print_gain_of(const char *a, const char *b, const char *note, int nr, bool back)
{
	struct row *ra = row_by(a), *rb = row_by(b);
	double g[MAX_ROUNDS];
	struct run_stats st;

	if (!ra->on || !rb->on || ra->skipped || rb->skipped)
		return;
	printf("  %-26s vs %-24s", a, b);
	for (int i = 0; i < nr; i++) {
		const double *x = back ? ra->back_dst : ra->dst, *y = back ? rb->back_dst : rb->dst;

		g[i] = y[i] > 0 ? x[i] / y[i] : 0;
		printf(" %5.3f", g[i]);
	}
	run_stats(g, nr, &st);
	printf("  median %.3f (%+.0f%%)  %s\n", st.median, (st.median - 1) * 100, note);
}

/* Where ucpumapd's frames came from and went back to, per row, as shares
 * of all allocations and returns over the rounds. A return reaches the
 * stack when recycling is off (released) or the recycle ring was full. */
static void print_pool(void)
{
	bool any = false;

	for (int i = 0; i < NROWS; i++)
		any |= rows[i].on && rows[i].have_pool;
	if (!any)
		return;
	printf("\nucpumapd's pools, all rounds (alloc: from the cache / refilled from the recycle "
	       "ring / from the backing stack; return: into the cache / the ring / the stack):\n");
	printf("  %-28s %12s %22s %12s %22s %12s\n", "row", "allocs", "cache/refill/stack %",
	       "returns", "cache/ring/stack %", "ring full");
	for (int i = 0; i < NROWS; i++) {
		const double *p = rows[i].pool;
		double a = p[0] + p[1] + p[2], stack = p[5] + p[6], f = p[3] + p[4] + stack;

		if (!rows[i].on || !rows[i].have_pool)
			continue;
		printf("  %-28s %12.0f %8.1f/%5.1f/%5.1f  %12.0f %8.1f/%5.1f/%5.1f  %12.0f\n",
		       rows[i].name, a, a ? 100 * p[0] / a : 0, a ? 100 * p[1] / a : 0,
		       a ? 100 * p[2] / a : 0, f, f ? 100 * p[3] / f : 0, f ? 100 * p[4] / f : 0,
		       f ? 100 * stack / f : 0, p[5]);
	}
}

static void print_gain(const char *a, const char *b, const char *note, int nr)
{
	print_gain_of(a, b, note, nr, false);
}

/* The two-way rows: both directions at once (seed 003's load). */
static void print_two_way(int nr)
{
	bool any = false;

	for (int i = 0; i < NROWS; i++)
		any |= rows[i].on && rows[i].kind == K_TWOWAY && !rows[i].skipped;
	if (!any)
		return;
	printf("\ntwo-way: forward as above, and the way back (DUT -> tun -> ucpumapd -> XSK TX -> "
	       "generator namespace) at the same time\n");
	printf("%-28s %22s %22s %22s %22s\n", "row", "forward dst rx", "back sent", "back dst rx",
	       "completions direct");
	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];
		double pct[MAX_ROUNDS];
		struct run_stats st;

		if (!r->on || r->kind != K_TWOWAY || r->skipped)
			continue;
		printf("%-28s", r->name);
		print_stats_col(r->dst, nr, true);
		print_stats_col(r->back_sent, nr, true);
		print_stats_col(r->back_dst, nr, true);
		for (int k = 0; k < nr; k++)
			pct[k] = 100 * r->direct[k];
		run_stats(pct, nr, &st);
		printf("  %5.1f%% (%5.1f-%5.1f)\n", st.median, st.min, st.max);
	}
	printf("(Mpps, median (min-max); completions direct: the share that went straight into "
	       "the RX thread's cache;\n the way back's sender shares CPU 0 with the generator, "
	       "so forward is not the one-way rows' figure)\n");
}

static void write_chart(int nr)
{
	char dat[256];
	FILE *f;

	if (sh("command -v gnuplot >/dev/null 2>&1")) {
		printf("chart: skipped, gnuplot is not installed\n");
		return;
	}
	snprintf(dat, sizeof(dat), "/tmp/ucm-bench-chart-%d.dat", getpid());
	f = fopen(dat, "w");
	if (!f)
		return;
	for (int i = 0; i < NROWS; i++) {
		struct run_stats st;

		if (!rows[i].on || rows[i].skipped)
			continue;
		run_stats(rows[i].dst, nr, &st);
		fprintf(f, "\"%s\" %f %f %f\n", rows[i].name, st.median / 1e6, st.min / 1e6,
			st.max / 1e6);
	}
	fclose(f);
	if (sh("gnuplot -e \"set terminal pngcairo size 900,500; set output '%s';"
	       "set title 'ucpumap datapath on veth: delivered at the UDP socket (median, min-max)';"
	       "set ylabel 'Mpps'; set yrange [0:*]; set style fill solid 0.6; set boxwidth 0.6;"
	       "set xtics rotate by -30; unset key;"
	       "plot '%s' using 0:2:xtic(1) with boxes, '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt -1\" 2>&1",
	       cfg.chart, dat))
		printf("chart: gnuplot failed\n");
	else
		printf("chart: %s\n", cfg.chart);
	unlink(dat);
}

/* One value per round. */
static void json_runs(struct json *j, const char *key, const double *v, int nr)
{
	json_arr(j, key);
	for (int k = 0; k < nr; k++)
		json_num(j, NULL, v[k]);
	json_arr_end(j);
}

static void write_json(int nr)
{
	FILE *f = fopen(cfg.json, "w");
	struct json j;

	if (!f) {
		fprintf(stderr, "datapath: %s: %s\n", cfg.json, strerror(errno));
		return;
	}
	json_begin(&j, f);
	json_str(&j, "bench", "datapath");
	json_str(&j, "dev", cfg.dev ? cfg.dev : "veth");
	json_str(&j, "sink_ip", cfg.sink_ip);
	json_str(&j, "cpus", cfg.cpus);
	json_num(&j, "seconds", cfg.seconds);
	json_u64(&j, "rate", cfg.rate);
	json_arr(&j, "rows");
	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];
		struct run_stats st;

		if (!r->on)
			continue;
		json_obj(&j, NULL);
		json_str(&j, "name", r->name);
		if (r->skipped) {
			json_str(&j, "skipped", r->skipped);
			json_obj_end(&j);
			continue;
		}
		json_str(&j, "unit", row_is_tcp(r) ? "bit/s" : "pps");
		json_runs(&j, "runs", r->dst, nr);	/* delivered, in "unit" */
		if (!row_is_tcp(r))
			json_runs(&j, "sent_packets", r->sent, nr);
		if (r->have_src)
			json_runs(&j, "src_rx_pps", r->src, nr);
		if (r->have_daemon) {
			json_runs(&j, "daemon_tun_packets", r->daemon, nr);
			json_str(&j, "count_window", cfg.dev ? "sigusr1-samples" : "daemon-life");
			json_runs(&j, "kernel_delivered_same_window", r->kernel_cmp, nr);
		}
		if (r->have_busy) {
			json_runs(&j, "worker_cpu_busy", r->busy, nr);
			json_runs(&j, "cpu0_busy", r->busy_cpu0, nr);
		}
		if (r->have_segs) {
			json_runs(&j, "super_segs_avg", r->segs, nr);
			json_runs(&j, "coalesced_share", r->merged, nr);
		}
		if (r->kind == K_TWOWAY) {
			json_runs(&j, "back_sent_pps", r->back_sent, nr);
			json_runs(&j, "back_runs", r->back_dst, nr);	/* the way back, delivered, pps */
			json_runs(&j, "completions_direct_share", r->direct, nr);
		}
		if (r->have_pool) {
			json_obj(&j, "pool");	/* summed over the rounds */
			for (int k = 0; k < NPOOL; k++)
				json_num(&j, pool_keys[k], r->pool[k]);
			json_obj_end(&j);
		}
		run_stats(r->dst, nr, &st);
		json_num(&j, "median", st.median);
		json_num(&j, "min", st.min);
		json_num(&j, "max", st.max);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_end(&j);
	fclose(f);
}

/* --queues as one range A or A-B (testpmd's start_queue/queue_count); a
 * list that is not one range leaves cfg.nq 0. Bad syntax: -1. */
static int queue_range(const char *s)
{
	unsigned long a, b;
	char *end;

	cfg.nq = 0;
	if (strspn(s, "0123456789,-") != strlen(s) || !*s) {
		fprintf(stderr, "datapath: --queues: give queue numbers, e.g. 0 or 0-3\n");
		return -1;
	}
	a = strtoul(s, &end, 10);
	b = a;
	if (*end == '-')
		b = strtoul(end + 1, &end, 10);
	if (*end || b < a || b > 1023)
		return 0;	/* a list: ucpumapd takes it, testpmd cannot */
	cfg.q0 = a;
	cfg.nq = b - a + 1;
	return 0;
}

/* The TCP rows: the receiver's rate, Gbit/s. */
static void print_tcp(int nr)
{
	bool any = false;

	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];
		double g[MAX_ROUNDS], b[MAX_ROUNDS], c[MAX_ROUNDS];

		if (!r->on || !row_is_tcp(r))
			continue;
		if (!any)
			printf("\n%-28s %22s %22s %22s   (one iperf3 stream, Gbit/s; busy\n"
			       "%-28s %22s %22s %22s    shares, all work: median (min-max))\n",
			       "row", "received", "worker CPU busy %", "CPU 0 busy %", "", "", "", "");
		any = true;
		if (r->skipped) {
			printf("%-28s skipped: %s\n", r->name, r->skipped);
			continue;
		}
		/* print_stats_col shows millions */
		for (int k = 0; k < nr; k++) {
			g[k] = r->dst[k] * 1e6 / 1e9;
			b[k] = r->busy[k] * 1e6 * 100;
			c[k] = r->busy_cpu0[k] * 1e6 * 100;
		}
		printf("%-28s", r->name);
		print_stats_col(g, nr, true);
		print_stats_col(b, nr, r->have_busy);
		print_stats_col(c, nr, r->have_busy);
		printf("\n");
	}
}

#define xstr(x) str(x)
#define str(x) #x

/* What coalescing made of the rows' traffic. */
static void print_coalesce(int nr)
{
	bool any = false;

	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];

		if (!r->on || r->skipped || !r->have_segs)
			continue;
		if (!any)
			printf("\ncoalescing (per round: datagrams per super-packet, share of datagrams in one):\n");
		any = true;
		if (r->kind == K_TCP)
			printf("  %-28s  1 stream:", r->name);
		else
			printf("  %-28s %5d flows:", r->name, r->flows ? r->flows : DEFAULT_FLOWS);
		for (int k = 0; k < nr; k++)
			printf(" %.1f %.0f%%;", r->segs[k], 100 * r->merged[k]);
		if (r->have_busy) {
			printf(" busy, worker CPU / CPU 0:");
			for (int k = 0; k < nr; k++)
				printf(" %.0f/%.0f%%", 100 * r->busy[k], 100 * r->busy_cpu0[k]);
		}
		printf("\n");
	}
}

static void print_tables(int nr)
{
	bool flat = false;

	for (int i = 0; i < NROWS; i++)
		flat |= rows[i].on && !row_is_tcp(&rows[i]);
	if (flat)
		printf("\n%-28s %22s %22s %22s %22s   (Mpps: median (min-max) over %d round(s))\n",
		       "row", cfg.dev ? "offered" : "sent", "src rx", "drops", "dst rx", nr);
	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];
		double sent[MAX_ROUNDS], drops[MAX_ROUNDS];

		if (!r->on)
			continue;
		if (row_is_tcp(r))
			continue;	/* their own table */
		if (r->skipped) {
			printf("%-28s skipped: %s\n", r->name, r->skipped);
			continue;
		}
		for (int k = 0; k < nr; k++) {
			sent[k] = r->sent[k] / cfg.seconds;
			drops[k] = sent[k] - r->dst[k];
		}
		printf("%-28s", r->name);
		print_stats_col(sent, nr, true);
		print_stats_col(r->src, nr, r->have_src);
		print_stats_col(drops, nr, true);
		print_stats_col(r->dst, nr, true);
		printf("\n");
	}
	print_two_way(nr);
	print_tcp(nr);
	printf("\ngains (dst rx, round by round):\n");
	print_gain("cpumap", "cpumap-no-recycle", "(seed 000)", nr);
	print_gain("cpumap", "cpumap-no-batch", "(seed 002)", nr);
	print_gain("cpumap", "kernel-cpumap", "(target >= 1.0)", nr);
	print_gain("cpumap", "tun-ceiling", "(target >= 0.9)", nr);
	print_gain("cpumap", "dpdk", "(target >= 3.0)", nr);
	print_gain("cpumap-coalesce", "cpumap", "(coalescing, " xstr(FEW_FLOWS) " flows)", nr);
	print_gain("cpumap-coalesce", "kernel-cpumap", "(target >= 3.0)", nr);
	print_gain("cpumap-coalesce-many-flows", "cpumap", "(target >= 0.95)", nr);
	print_gain("tcp-coalesce", "tcp", "(TCP throughput, target >= 2.0)", nr);
	print_gain("tcp-coalesce", "tcp-kernel", "(against the kernel's own path)", nr);
	print_gain_of("two-way", "two-way-no-direct-bulk", "(seed 003, forward)", nr, false);
	print_gain_of("two-way", "two-way-no-direct-bulk", "(seed 003, way back)", nr, true);
	print_pool();
	print_coalesce(nr);

	printf("\nucpumapd's tun_packets against the kernel's count at the socket, both over %s:\n",
	       cfg.dev ? "the timed run (SIGUSR1 samples)" : "ucpumapd's life");
	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];

		if (!r->on || (r->kind != K_DAEMON && r->kind != K_TWOWAY))
			continue;
		printf("  %-28s", r->name);
		if (!r->have_daemon) {
			printf(" no statistics from ucpumapd\n");
			continue;
		}
		for (int k = 0; k < nr; k++) {
			double kern = r->kernel_cmp[k];

			printf(" ucpumapd %.0f, kernel %.0f: %+.0f (%+.3f%%);", r->daemon[k], kern,
			       r->daemon[k] - kern, kern > 0 ? 100 * (r->daemon[k] - kern) / kern : 0);
		}
		printf("\n");
	}
}

/* Why testpmd cannot run with these settings, or NULL. */
static const char *dpdk_settings_problem(void)
{
	if (!cfg.nq)
		return "testpmd's net_af_xdp takes one range of queues; give --queues as A or A-B";
	for (int i = 0; i < cfg.nwcpu; i++)
		if (cfg.wcpu[i] == 0)
			return "testpmd's main core is CPU 0, which --cpus gives a worker";
	return NULL;
}

static int opt_queues(const struct opt *o, const char *arg, void *c)
{
	return queue_range(arg);
}

static const struct opt dp_opts[] = {
	OPT_DEF("rounds", OPT_UINT, struct dp_cfg, rounds, .lo = 1, .hi = MAX_ROUNDS,
		.flags = OPT_F_DEFAULT, .metavar = "N", .help = "rounds"),
	OPT_DEF("seconds", OPT_SECONDS, struct dp_cfg, seconds, .dlo = 0.2, .dhi = 3600,
		.flags = OPT_F_DEFAULT, .metavar = "S", .help = "seconds per row and round"),
	OPT_DEF("rows", OPT_STRING, struct dp_cfg, rowlist, .metavar = "LIST",
		.help = "comma-separated rows (default all): kernel-pass, kernel-cpumap, pass, "
			"cpumap-no-recycle, cpumap, cpumap-coalesce (4 flows), "
			"cpumap-coalesce-many-flows (1024 flows), cpumap-no-batch, tun-ceiling, "
			"dpdk, two-way, two-way-no-direct-bulk (both directions at once: seed "
			"003), tcp-kernel, tcp, tcp-coalesce (one iperf3 TCP stream, Gbit/s: the "
			"kernel's own path, then through ucpumapd); every ucpumapd row but the "
			"*-coalesce ones runs --no-coalesce"),
	OPT_DEF("rate", OPT_UINT, struct dp_cfg, rate, .lo = 0, .hi = 1000000000,
		.metavar = "PPS",
		.help = "the generator's rate (default 0: as fast as it goes)"),
	OPT_DEF("ipv6", OPT_FLAG, struct dp_cfg, v6, .short_opt = '6',
		.help = "IPv6 traffic (fd77::1 -> fd77::2) instead of IPv4"),
	OPT_DEF("cpus", OPT_CPUS, struct dp_cfg, wcpu, .count = OPT_REF(struct dp_cfg, nwcpu),
		.text = OPT_REF(struct dp_cfg, cpus), .flags = OPT_F_DEFAULT, .metavar = "LIST",
		.help = "the workers' CPUs (ucpumapd, kernel cpumap, testpmd's forwarding "
			"cores; the tun ceiling writes from the first)"),
	OPT_DEF("json", OPT_STRING, struct dp_cfg, json, .metavar = "FILE",
		.help = "every run of every row as JSON"),
	OPT_DEF("chart", OPT_STRING, struct dp_cfg, chart, .metavar = "FILE",
		.help = "a PNG chart of the rows (gnuplot)"),
	OPT_DEF("dev", OPT_STRING, struct dp_cfg, dev, .hi = IF_NAMESIZE - 1,
		.metavar = "IFACE",
		.heading = "On a real NIC, fed by an external generator (see docs/BENCHMARKS.md):",
		.help = "run the rows on IFACE, in this namespace; no veth, no ucpumap-gen; the "
			"NIC's received packets stand for sent"),
	OPT_DEF("sink-ip", OPT_ADDR, struct dp_cfg, sink_ip, .metavar = "ADDR",
		.help = "the address the generator sends to, one of this host's (required with "
			"--dev)"),
	OPT_DEF("sink-port", OPT_UINT, struct dp_cfg, sink_port, .lo = 1, .hi = 65535,
		.flags = OPT_F_DEFAULT, .metavar = "P", .help = "the UDP port it sends to"),
	OPT_DEF("queues", OPT_CUSTOM, struct dp_cfg, queues, .parse = opt_queues,
		.text = OPT_REF(struct dp_cfg, queues), .flags = OPT_F_DEFAULT, .metavar = "LIST",
		.help = "the RX queues the rows use; testpmd needs one range, like 0-3"),
	OPT_DEF("rx-cpus", OPT_CPUS, struct dp_cfg, rx_cpu,
		.count = OPT_REF(struct dp_cfg, n_rx_cpu), .text = OPT_REF(struct dp_cfg, rx_cpus),
		.metavar = "LIST", .help = "ucpumapd's --rx-cpus"),
	OPT_DEF("zero-copy", OPT_FLAG, struct dp_cfg, zero_copy, .help = "ucpumapd's --zero-copy"),
	OPT_DEF("busy-poll", OPT_FLAG, struct dp_cfg, busy_poll, .help = "ucpumapd's --busy-poll"),
	{}
};

static const struct opts_cmd dp_cmd = {
	.name = "datapath",
	.invoked = "ucpumap-bench datapath",
	.usage = "ucpumap-bench datapath [options]",
	.doc =
"The whole datapath on a veth pair between two namespaces: ucpumap-gen on CPU 0\n"
"sends 64-byte UDP (16 flows; the coalescing rows: 4 and 1024) to a bound,\n"
"never-read socket in the DUT namespace; each row forwards it its own way;\n"
"delivered = Udp and Udp6 InDatagrams + RcvbufErrors at the sink. Rows run\n"
"interleaved, round after round. Needs root.\n",
	.opts = dp_opts,
};

/* --rows into rows[].on. */
static int select_rows(void)
{
	char *l, *sp, *t;

	for (int i = 0; i < NROWS; i++)
		rows[i].on = !cfg.rowlist;
	if (!cfg.rowlist)
		return 0;
	l = strdup(cfg.rowlist);
	for (t = strtok_r(l, ",", &sp); t; t = strtok_r(NULL, ",", &sp)) {
		struct row *r = row_by(t);

		if (!r) {
			fprintf(stderr, "datapath: unknown row '%s'\n", t);
			free(l);
			return -1;
		}
		r->on = true;
	}
	free(l);
	return 0;
}

/* Options into cfg and rows[].on. Return 0 to go on, OPTS_HELP when the
 * help was asked for, or -1 after a message (usage). */
static int parse_args(int argc, char **argv)
{
	int rc = opts_parse(&dp_cmd, &cfg, argc, argv);

	if (rc)
		return rc;
	if (!cfg.nwcpu) {
		cfg.wcpu[0] = 1;
		cfg.nwcpu = 1;
	}
	if (cfg.dev) {
		if (!cfg.sink_ip) {
			fprintf(stderr, "datapath: --dev needs --sink-ip, the address of this host "
				"that the external generator sends to\n");
			return -1;
		}
		if (cfg.rate || cfg.v6) {
			fprintf(stderr, "datapath: --rate and --ipv6 are the generator's: with --dev "
				"it runs outside, set them there (the sink's family follows "
				"--sink-ip)\n");
			return -1;
		}
		snprintf(cfg.ifname, sizeof(cfg.ifname), "%s", cfg.dev);
		cfg.v6 = strchr(cfg.sink_ip, ':');
	} else {
		if (cfg.sink_ip || cfg.sink_port != 9000 || cfg.rx_cpus || cfg.zero_copy ||
		    cfg.busy_poll || strcmp(cfg.queues, "0")) {
			fprintf(stderr, "datapath: --sink-ip, --sink-port, --queues, --rx-cpus, "
				"--zero-copy and --busy-poll go with --dev; on veth the sink is "
				"10.77.0.2 (fd77::2 with --ipv6) port 9000, queue 0\n");
			return -1;
		}
		for (int i = 0; i < cfg.nwcpu; i++)
			if (cfg.wcpu[i] == 0) {
				fprintf(stderr, "datapath: --cpus: CPU 0 carries the generator and the "
					"veth's receive work; give the workers other CPUs\n");
				return -1;
			}
		snprintf(cfg.ifname, sizeof(cfg.ifname), "vd");
		cfg.sink_ip = cfg.v6 ? "fd77::2" : "10.77.0.2";
	}
	return select_rows();
}

int bench_datapath(int argc, char **argv)
{
	int nr = 0, failed = 0, rc;
	char self[512];
	ssize_t sl;

	rc = parse_args(argc, argv);
	if (rc)
		return rc == OPTS_HELP ? 0 : 2;
	if (geteuid()) {
		fprintf(stderr, "datapath: needs root (namespaces, XDP, tun)\n");
		return 1;
	}
	if (cpu_online_count() < 2) {
		fprintf(stderr, "datapath: needs CPUs 0 and 1\n");
		return 1;
	}
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return 1;
	self[sl] = 0;
	if (strrchr(self, '/'))
		*strrchr(self, '/') = 0;
	snprintf(cfg.bindir, sizeof(cfg.bindir), "%s", self);
	if (row_by("dpdk")->on && sh("command -v dpdk-testpmd >/dev/null 2>&1"))
		row_by("dpdk")->skipped = "dpdk-testpmd is not installed (Debian's dpdk-dev; "
					  "scripts/install-deps.sh installs it)";
	else if (row_by("dpdk")->on &&
		 sh("ls /usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so* "
		    "/usr/lib/*/dpdk/pmds-*/librte_net_tap.so* >/dev/null 2>&1"))
		row_by("dpdk")->skipped = "DPDK's af_xdp or tap driver is not installed (Debian's "
					  "librte-net-af-xdp23 and librte-net-tap23)";
	for (int i = 0; i < NROWS; i++)
		if (rows[i].on && rows[i].kind == K_TWOWAY && (cfg.dev || cfg.v6))
			rows[i].skipped = cfg.dev ? "the way back's traffic comes from the veth "
						    "topology's generator namespace: veth only" :
						    "the way back's sender is IPv4 only";
	for (int i = 0; i < NROWS; i++) {
		if (!rows[i].on || !row_is_tcp(&rows[i]))
			continue;
		if (cfg.dev)
			rows[i].skipped = "needs a TCP sender on the far side of IFACE: run iperf3 -c "
					  "there against iperf3 -s here, with and without --no-coalesce";
		else if (sh("command -v iperf3 >/dev/null 2>&1"))
			rows[i].skipped = "iperf3 is not installed (scripts/install-deps.sh installs it)";
	}
	if (row_by("dpdk")->on && !row_by("dpdk")->skipped)	/* the first reason stands */
		row_by("dpdk")->skipped = dpdk_settings_problem();

	{
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ucm-bench-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		tmpdir[0] = 0;
		return 1;
	}
	atexit(cleanup);
	if (cfg.dev ? dev_setup() : topology()) {
		cleanup();
		return 1;
	}
	libbpf_set_print(NULL);
	if (cfg.dev)
		printf("datapath: %s queue(s) %s, external generator to %s port %lu, %d round(s) x "
		       "%g s per row; workers on CPU(s) %s\n", cfg.dev, cfg.queues, cfg.sink_ip,
		       cfg.sink_port, cfg.rounds, cfg.seconds, cfg.cpus);
	else
		printf("datapath: veth vg (ns %s, ucpumap-gen live, CPU 0) -> vd (ns %s), 64-byte "
		       "%s UDP, 16 flows, rate %s, %d round(s) x %g s per row; workers on CPU(s) "
		       "%s\n", ns_gen, ns_dut, cfg.v6 ? "IPv6" : "IPv4",
		       cfg.rate ? "fixed" : "as fast as it goes", cfg.rounds, cfg.seconds, cfg.cpus);
	if (cfg.rate)
		printf("datapath: offered rate %lu pps\n", cfg.rate);
	fflush(stdout);

	for (int k = 0; k < cfg.rounds && !stopping; k++) {
		for (int i = 0; i < NROWS && !stopping; i++) {
			struct row *r = &rows[i];

			if (!r->on || r->skipped)
				continue;
			rc = 0;
			switch (r->kind) {
			case K_KPASS:
			case K_KCPUMAP: rc = row_kernel(r, k); break;
			case K_DAEMON:
			case K_TWOWAY:
			case K_TCP: rc = row_daemon(r, k); break;
			case K_TCP_KERNEL: rc = row_tcp_kernel(r, k); break;
			case K_TUN: rc = row_tun(r, k); break;
			case K_DPDK: rc = row_dpdk(r, k); break;
			}
			if (rc) {
				failed++;
				fprintf(stderr, "datapath: round %d, row %s failed\n", k + 1, r->name);
			}
			if (row_is_tcp(r))
				printf("  round %d %-18s %7.3f Gbit/s received\n", k + 1, r->name,
				       r->dst[k] / 1e9);
			else
				printf("  round %d %-18s %7.3f Mpps delivered\n", k + 1, r->name,
				       r->dst[k] / 1e6);
			fflush(stdout);
		}
		nr = k + 1;
	}
	if (stopping) {
		fprintf(stderr, "datapath: interrupted\n");
		return 1;
	}

	print_tables(nr);
	if (cfg.json)
		write_json(nr);
	if (cfg.chart)
		write_chart(nr);
	cleanup();
	return failed ? 1 : 0;
}
