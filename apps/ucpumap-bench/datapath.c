// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the whole path on veth, row against row.
 *
 * One topology for all rows: a generator namespace (ucpumap-gen's live
 * engine on vg, CPU 0) joined by a veth pair to a DUT namespace (vd) that
 * holds a bound UDP socket the bench never reads while traffic runs. The
 * bench itself enters the DUT namespace (setns), so the sink socket, the
 * kernel rows' XDP programs, the tun of the tun-ceiling row and the
 * /proc/net/snmp counters are all its own. ucpumapd and ucpumap-gen run as
 * child processes under `ip netns exec`.
 *
 * Delivered = delta of Udp InDatagrams + RcvbufErrors around a run, the
 * socket drained before and after (the kernel counts InDatagrams when a
 * datagram is read).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/if_link.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
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
#include "util.h"

#define MAX_ROUNDS	100
#define SINK_PORT	9000

enum row_kind { K_KPASS, K_KCPUMAP, K_DAEMON, K_TUN, K_DPDK };

struct row {
	const char *name;
	enum row_kind kind;
	const char *flag;		/* ucpumapd's extra flag */
	bool on;
	const char *skipped;		/* why, when it did not run */
	double dst[MAX_ROUNDS];		/* delivered, pps */
	double sent[MAX_ROUNDS], src[MAX_ROUNDS], daemon[MAX_ROUNDS];
	bool have_src, have_daemon;
};

static struct row rows[] = {
	{ .name = "kernel-pass", .kind = K_KPASS, .flag = NULL },
	{ .name = "kernel-cpumap", .kind = K_KCPUMAP, .flag = NULL },
	{ .name = "pass", .kind = K_DAEMON, .flag = "--pass" },
	{ .name = "cpumap-no-recycle", .kind = K_DAEMON, .flag = "--no-recycle" },
	{ .name = "cpumap", .kind = K_DAEMON, .flag = NULL },
	{ .name = "cpumap-no-batch", .kind = K_DAEMON, .flag = "--no-batch" },
	{ .name = "tun-ceiling", .kind = K_TUN, .flag = NULL },
	{ .name = "dpdk", .kind = K_DPDK, .flag = NULL },
};
#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))

static struct {
	int rounds;
	double seconds;
	unsigned long rate;
	const char *json, *chart;
	char bindir[512];
} cfg = { .rounds = 5, .seconds = 5 };

static char ns_gen[64], ns_dut[64], tmpdir[128];
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

/* Start argv (NULL-terminated) in namespace @ns, output to @out. */
static pid_t spawn(const char *ns, const char *out, char *const *argv)
{
	char *full[40];
	int n = 0;
	pid_t p;

	full[n++] = "ip";
	full[n++] = "netns";
	full[n++] = "exec";
	full[n++] = (char *)ns;
	for (int i = 0; argv[i] && n < 39; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	p = fork();
	if (p < 0)
		return -1;
	if (!p) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

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
	if (ns_gen[0])
		sh("ip netns del %s 2>/dev/null", ns_gen);
	if (ns_dut[0])
		sh("ip netns del %s 2>/dev/null", ns_dut);
	if (tmpdir[0])
		sh("rm -rf %s", tmpdir);
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

static uint64_t delivered_now(void)
{
	char buf[2048];

	while (recv(sink_fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
	return udp_counter("InDatagrams") + udp_counter("RcvbufErrors");
}

/* ---- topology ------------------------------------------------------------ */

static char vd_mac[32];

static int topology(void)
{
	char path[128];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SINK_PORT) };
	int fd;

	snprintf(ns_gen, sizeof(ns_gen), "ucm-bench-gen-%d", getpid());
	snprintf(ns_dut, sizeof(ns_dut), "ucm-bench-dut-%d", getpid());
	if (sh("ip netns add %s && ip netns add %s && "
	       "ip -n %s link add vg type veth peer name vd netns %s && "
	       "ip -n %s addr add 10.77.0.1/24 dev vg && ip -n %s addr add 10.77.0.2/24 dev vd && "
	       "ip -n %s link set vg up && ip -n %s link set vd up && "
	       "ip -n %s link set lo up && ip -n %s link set lo up",
	       ns_gen, ns_dut, ns_gen, ns_dut, ns_gen, ns_dut, ns_gen, ns_dut, ns_gen, ns_dut)) {
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
	close(fd);
	set_sysctl("/proc/sys/net/ipv4/conf/all/rp_filter", "0");
	set_sysctl("/proc/sys/net/ipv4/conf/default/rp_filter", "0");
	{
		/* /sys is still the old namespace's: ask ip, in the DUT's. */
		FILE *f = popen("ip -o link show vd", "r");

		if (f) {
			char line[512], *p;

			if (fgets(line, sizeof(line), f) && (p = strstr(line, "link/ether ")))
				sscanf(p + 11, "%31s", vd_mac);
			pclose(f);
		}
	}
	if (!vd_mac[0]) {
		fprintf(stderr, "datapath: no MAC address on vd\n");
		return -1;
	}
	sink_fd = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, "10.77.0.2", &a.sin_addr);
	if (sink_fd < 0 || bind(sink_fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "datapath: cannot bind the sink: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the generator ------------------------------------------------------- */

static pid_t gen_start(const char *out)
{
	char dur[32], rate[32], gen[600];
	char *argv[] = { gen, "--dev", "vg", "--dst-ip", "10.77.0.2", "--dst-mac", vd_mac,
			 "--dst-port", "9000", "--flows", "16", "--cpu", "0",
			 "--duration", dur, "--rate", rate, NULL };

	snprintf(gen, sizeof(gen), "%s/ucpumap-gen", cfg.bindir);
	snprintf(dur, sizeof(dur), "%g", cfg.seconds);
	snprintf(rate, sizeof(rate), "%lu", cfg.rate);
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

/* XDP_PASS: r0 = 2; exit. */
static int kernel_pass_attach(int ifindex)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 2 },	/* BPF_ALU64|BPF_MOV|BPF_K */
		{ .code = 0x95 },				/* BPF_JMP|BPF_EXIT */
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "ucm_bench_pass", "GPL", insns, 2, NULL);

	if (fd < 0)
		return fd;
	if (bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Run the generator against whatever is on vd now; fills @sent. */
static int run_gen(const char *tag, double *sent)
{
	char out[256];
	pid_t g;

	snprintf(out, sizeof(out), "%s/gen-%s", tmpdir, tag);
	g = gen_start(out);
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
	int ifindex = if_nametoindex("vd"), pfd = -1, rc;
	struct ucm_xdp *x = NULL;
	uint64_t d0, d1;

	if (r->kind == K_KPASS) {
		pfd = kernel_pass_attach(ifindex);
		if (pfd < 0) {
			fprintf(stderr, "datapath: kernel-pass: cannot attach XDP_PASS\n");
			return -1;
		}
	} else {
		struct ucm_xdp_opts o = { .sz = sizeof(o), .nworkers = 1 };
		int cpu = 1;

		x = ucm_xdp__load(&o);
		if (!x || ucm_xdp__set_kernel_cpumap(x, &cpu, 1, 2048) ||
		    ucm_xdp__attach(x, ifindex, UCM_XDP_ATTACH_CPUMAP)) {
			fprintf(stderr, "datapath: kernel-cpumap: cannot attach\n");
			if (x)
				ucm_xdp__destroy(x);
			return -1;
		}
	}
	sleep_sec(0.2);
	d0 = delivered_now();
	rc = run_gen(r->name, &r->sent[round]);
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

static int row_daemon(struct row *r, int round)
{
	char out[256], js[256], bin[600], line[8192], last[8192] = "";
	char *argv[16];
	int n = 0, rc;
	uint64_t d0, d1;
	double sent = 0, v;
	pid_t d;
	FILE *f;

	snprintf(out, sizeof(out), "%s/d-%s", tmpdir, r->name);
	snprintf(js, sizeof(js), "%s/d-%s.json", tmpdir, r->name);
	snprintf(bin, sizeof(bin), "%s/ucpumapd", cfg.bindir);
	unlink(js);
	argv[n++] = bin;
	argv[n++] = "--dev"; argv[n++] = "vd";
	argv[n++] = "--tun"; argv[n++] = "ucmb0";
	argv[n++] = "--cpus"; argv[n++] = "1";
	argv[n++] = "--interval"; argv[n++] = "0";
	argv[n++] = "--stats-json"; argv[n++] = js;
	if (r->flag)
		argv[n++] = (char *)r->flag;
	argv[n] = NULL;
	d = spawn(ns_dut, out, argv);
	if (d < 0)
		return -1;
	for (int i = 0; i < 100 && !if_nametoindex("ucmb0"); i++) {
		if (waitpid(d, NULL, WNOHANG) == d) {
			kid_del(d);
			fprintf(stderr, "datapath: %s: ucpumapd did not start:\n", r->name);
			sh("tail -5 %s >&2", out);
			return -1;
		}
		sleep_sec(0.05);
	}
	set_sysctl("/proc/sys/net/ipv4/conf/ucmb0/rp_filter", "0");
	/* The tun comes before the program: wait for XDP on vd too. */
	for (int i = 0; i < 100 && sh("ip link show vd | grep -q xdp"); i++)
		sleep_sec(0.05);
	sleep_sec(0.3);
	d0 = delivered_now();
	rc = run_gen(r->name, &sent);
	sleep_sec(0.2);
	kill(d, SIGTERM);
	if (reap(d, 10) != 0) {
		fprintf(stderr, "datapath: %s: ucpumapd did not stop cleanly:\n", r->name);
		sh("tail -5 %s >&2", out);
		rc = -1;
	}
	d1 = delivered_now();
	r->sent[round] = sent;
	r->dst[round] = (d1 - d0) / cfg.seconds;
	f = fopen(js, "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			strcpy(last, line);
		fclose(f);
	}
	if (!json_u64_field(last, "tun_packets", &v)) {
		r->daemon[round] = v;
		r->have_daemon = true;
	}
	if (!json_u64_field(last, "rx", &v)) {
		r->src[round] = v / cfg.seconds;
		r->have_src = true;
	}
	/* The daemon's count covers its whole life; the kernel's the run. The
	 * generator sends only during the run, so they cover the same packets. */

	return rc;
}

/* One thread writes prebuilt IPv4/UDP datagrams into a tun queue in
 * io_uring batches of 64: the sink's own limit. */
static uint16_t csum(const void *p, int len)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (int i = 0; i + 1 < len; i += 2)
		s += b[i] << 8 | b[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

static int row_tun(struct row *r, int round)
{
	enum { BATCH = 64, NPKT = 16, LEN = 50 };	/* 64-byte frames less the Ethernet header */
	uint8_t pkt[NPKT][LEN];
	struct ifreq ifr = { 0 };
	struct io_uring ring;
	uint64_t d0, d1, n = 0;
	double end;
	int fd, s;

	fd = open("/dev/net/tun", O_RDWR);
	if (fd < 0)
		return -1;
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	strcpy(ifr.ifr_name, "ucmb1");
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		close(fd);
		return -1;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ioctl(s, SIOCSIFFLAGS, &ifr);
	close(s);
	set_sysctl("/proc/sys/net/ipv4/conf/ucmb1/rp_filter", "0");
	for (int i = 0; i < NPKT; i++) {
		uint8_t *p = pkt[i];

		memset(p, 0, LEN);
		p[0] = 0x45;
		p[2] = LEN >> 8; p[3] = LEN & 0xff;
		p[8] = 64; p[9] = 17;
		p[12] = 10; p[13] = 77; p[14] = 0; p[15] = 1;
		p[16] = 10; p[17] = 77; p[18] = 0; p[19] = 2;
		uint16_t c = csum(p, 20);
		p[10] = c >> 8; p[11] = c & 0xff;
		p[20] = (1024 + i) >> 8; p[21] = (1024 + i) & 0xff;
		p[22] = SINK_PORT >> 8; p[23] = SINK_PORT & 0xff;
		p[24] = (LEN - 20) >> 8; p[25] = (LEN - 20) & 0xff;
		/* UDP checksum 0: none, which IPv4 allows */
	}
	if (io_uring_queue_init(BATCH * 2, &ring, 0)) {
		close(fd);
		return -1;
	}
	pin_self(1);
	sleep_sec(0.1);
	d0 = delivered_now();
	end = now_sec() + cfg.seconds;
	while (now_sec() < end && !stopping) {
		struct io_uring_cqe *cqe;

		for (int i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_write(sqe, fd, pkt[i % NPKT], LEN, 0);
		}
		io_uring_submit_and_wait(&ring, BATCH);
		for (int i = 0; i < BATCH; i++) {
			if (io_uring_wait_cqe(&ring, &cqe))
				break;
			if (cqe->res == LEN)
				n++;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
	close(fd);
	{
		cpu_set_t all;

		CPU_ZERO(&all);
		for (int c = 0; c < cpu_online_count(); c++)
			CPU_SET(c, &all);
		sched_setaffinity(0, sizeof(all), &all);
	}
	sleep_sec(0.1);
	d1 = delivered_now();
	r->sent[round] = n;
	r->dst[round] = (d1 - d0) / cfg.seconds;
	return 0;
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

static struct row *row_by(const char *name)
{
	for (int i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static void print_gain(const char *a, const char *b, const char *note, int nr)
{
	struct row *ra = row_by(a), *rb = row_by(b);
	double g[MAX_ROUNDS];
	struct run_stats st;

	if (!ra->on || !rb->on || ra->skipped || rb->skipped)
		return;
	printf("  %-8s vs %-18s", a, b);
	for (int i = 0; i < nr; i++) {
		g[i] = rb->dst[i] > 0 ? ra->dst[i] / rb->dst[i] : 0;
		printf(" %5.3f", g[i]);
	}
	run_stats(g, nr, &st);
	printf("  median %.3f (%+.0f%%)  %s\n", st.median, (st.median - 1) * 100, note);
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
		json_str(&j, "unit", "pps");
		json_arr(&j, "runs");	/* delivered, pps */
		for (int k = 0; k < nr; k++)
			json_num(&j, NULL, r->dst[k]);
		json_arr_end(&j);
		json_arr(&j, "sent_packets");
		for (int k = 0; k < nr; k++)
			json_num(&j, NULL, r->sent[k]);
		json_arr_end(&j);
		if (r->have_daemon) {
			json_arr(&j, "daemon_tun_packets");
			for (int k = 0; k < nr; k++)
				json_num(&j, NULL, r->daemon[k]);
			json_arr_end(&j);
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

static void usage(FILE *f)
{
	fprintf(f,
"Usage: ucpumap-bench datapath [options]\n"
"\n"
"The whole datapath on a veth pair between two namespaces: ucpumap-gen on CPU 0\n"
"sends 64-byte UDP (16 flows) to a bound, never-read socket in the DUT\n"
"namespace; each row forwards it its own way; delivered = Udp InDatagrams +\n"
"RcvbufErrors at the sink. Rows run interleaved, round after round. Needs root.\n"
"\n"
"  --rounds N      rounds (default 5)\n"
"  --seconds S     seconds per row and round (default 5)\n"
"  --rows LIST     comma-separated rows (default all): kernel-pass, kernel-cpumap,\n"
"                  pass, cpumap-no-recycle, cpumap, cpumap-no-batch, tun-ceiling, dpdk\n"
"  --rate PPS      the generator's rate (default 0: as fast as it goes)\n"
"  --json FILE     every run of every row as JSON\n"
"  --chart FILE    a PNG chart of the rows (gnuplot)\n");
}

int bench_datapath(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ "rows", required_argument, NULL, 'R' },
		{ "rate", required_argument, NULL, 'p' },
		{ "json", required_argument, NULL, 'j' },
		{ "chart", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *rowlist = NULL;
	unsigned long v;
	int c, nr = 0, failed = 0;
	char self[512];
	ssize_t sl;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_uint(optarg, 1, MAX_ROUNDS, "--rounds", &v))
				return 2;
			cfg.rounds = v;
			break;
		case 's':
			cfg.seconds = strtod(optarg, NULL);
			if (cfg.seconds < 0.2 || cfg.seconds > 3600) {
				fprintf(stderr, "datapath: --seconds: 0.2 to 3600\n");
				return 2;
			}
			break;
		case 'R': rowlist = optarg; break;
		case 'p':
			if (parse_uint(optarg, 0, 1000000000, "--rate", &v))
				return 2;
			cfg.rate = v;
			break;
		case 'j': cfg.json = optarg; break;
		case 'c': cfg.chart = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	for (int i = 0; i < NROWS; i++)
		rows[i].on = !rowlist;
	if (rowlist) {
		char *l = strdup(rowlist), *sp, *t;

		for (t = strtok_r(l, ",", &sp); t; t = strtok_r(NULL, ",", &sp)) {
			struct row *r = row_by(t);

			if (!r) {
				fprintf(stderr, "datapath: unknown row '%s'\n", t);
				free(l);
				return 2;
			}
			r->on = true;
		}
		free(l);
	}
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
		row_by("dpdk")->skipped =
			"dpdk-testpmd not installed (Debian packages dpdk and librte-net-af-xdp23)";
	else if (row_by("dpdk")->on)
		row_by("dpdk")->skipped = "dpdk-testpmd found, but this bench does not drive it yet";

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
	if (topology()) {
		cleanup();
		return 1;
	}
	libbpf_set_print(NULL);
	printf("datapath: veth vg (ns %s, ucpumap-gen live, CPU 0) -> vd (ns %s), 64-byte UDP, "
	       "16 flows, rate %s, %d round(s) x %g s per row; workers on CPU 1\n",
	       ns_gen, ns_dut, cfg.rate ? "fixed" : "as fast as it goes", cfg.rounds, cfg.seconds);
	if (cfg.rate)
		printf("datapath: offered rate %lu pps\n", cfg.rate);
	fflush(stdout);

	for (int k = 0; k < cfg.rounds && !stopping; k++) {
		for (int i = 0; i < NROWS && !stopping; i++) {
			struct row *r = &rows[i];
			int rc = 0;

			if (!r->on || r->skipped)
				continue;
			switch (r->kind) {
			case K_KPASS:
			case K_KCPUMAP: rc = row_kernel(r, k); break;
			case K_DAEMON: rc = row_daemon(r, k); break;
			case K_TUN: rc = row_tun(r, k); break;
			case K_DPDK: break;
			}
			if (rc) {
				failed++;
				fprintf(stderr, "datapath: round %d, row %s failed\n", k + 1, r->name);
			}
			printf("  round %d %-18s %7.3f Mpps delivered\n", k + 1, r->name, r->dst[k] / 1e6);
			fflush(stdout);
		}
		nr = k + 1;
	}
	if (stopping) {
		fprintf(stderr, "datapath: interrupted\n");
		return 1;
	}

	printf("\n%-18s %22s %22s %22s %22s   (Mpps: median (min-max) over %d round(s))\n",
	       "row", "sent", "src rx", "drops", "dst rx", nr);
	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];
		double sent[MAX_ROUNDS], drops[MAX_ROUNDS];

		if (!r->on)
			continue;
		if (r->skipped) {
			printf("%-18s skipped: %s\n", r->name, r->skipped);
			continue;
		}
		for (int k = 0; k < nr; k++) {
			sent[k] = r->sent[k] / cfg.seconds;
			drops[k] = sent[k] - r->dst[k];
		}
		printf("%-18s", r->name);
		print_stats_col(sent, nr, true);
		print_stats_col(r->src, nr, r->have_src);
		print_stats_col(drops, nr, true);
		print_stats_col(r->dst, nr, true);
		printf("\n");
	}
	printf("\ngains (dst rx, round by round):\n");
	print_gain("cpumap", "cpumap-no-recycle", "(seed 000)", nr);
	print_gain("cpumap", "cpumap-no-batch", "(seed 002)", nr);
	print_gain("cpumap", "kernel-cpumap", "(target >= 1.0)", nr);
	print_gain("cpumap", "tun-ceiling", "(target >= 0.9)", nr);

	printf("\nucpumapd's tun_packets against the kernel's count at the socket:\n");
	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];

		if (!r->on || r->kind != K_DAEMON)
			continue;
		printf("  %-18s", r->name);
		if (!r->have_daemon) {
			printf(" no statistics from ucpumapd\n");
			continue;
		}
		for (int k = 0; k < nr; k++) {
			double kern = r->dst[k] * cfg.seconds;

			printf(" ucpumapd %.0f, kernel %.0f: %+.0f (%+.3f%%);", r->daemon[k], kern,
			       r->daemon[k] - kern, kern > 0 ? 100 * (r->daemon[k] - kern) / kern : 0);
		}
		printf("\n");
	}
	if (cfg.json)
		write_json(nr);
	if (cfg.chart)
		write_chart(nr);
	cleanup();
	return failed ? 1 : 0;
}
