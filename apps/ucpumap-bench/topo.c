// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: the topology and the processes.
 *
 * On veth, a generator namespace (vg, 10.77.0.1, fd77::1) and a DUT
 * namespace (vd, 10.77.0.2, fd77::2) that the bench enters, with the sink
 * bound there and the way back's sink bound in the generator's. With --dev,
 * only checks that the NIC is fit for the rows, and the sink. The children
 * (ucpumapd, ucpumap-gen, iperf3, dpdk-testpmd) are started with spawn(),
 * kept in the topology's kids[] until reaped, and stopped by their pid;
 * the shell-outs go through sh(), have_prog() and have_files(), and a
 * child's last lines through show_tail(). The stop flag that SIGINT,
 * SIGTERM, SIGHUP and SIGPIPE set is here too, since reap() heeds it: a
 * reader of the table that goes away (| head) stops the run as ^C does,
 * and the topology is taken down. A child gets SIGTERM when the bench dies
 * of a signal it cannot catch (PR_SET_PDEATHSIG: the children are started
 * from the main thread only), so no ucpumapd outlives it on a NIC; the
 * namespaces such a death leaves carry its pid (ucm-bench-gen-PID,
 * ucm-bench-dut-PID) for ip netns del.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "datapath.h"

/* Set by a signal (or bench_stop()): every loop of the bench ends early. */
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	stopping = 1;
}

void topo_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
}

bool bench_stopped(void)
{
	return stopping;
}

void bench_stop(void)
{
	stopping = 1;
}

void bench_sleep(double s)
{
	struct timespec ts = {
		.tv_sec = (time_t)s,
		.tv_nsec = (long)((s - (time_t)s) * 1e9),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR && !stopping)
		;
}

/* ---- shell-outs ------------------------------------------------------------ */

/* Run a command line with /bin/sh: its exit status, -1 when it did not run
 * or was killed. */
int sh(const char *fmt, ...)
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

/* Is @name a command on the PATH? */
bool have_prog(const char *name)
{
	return !sh("command -v %s >/dev/null 2>&1", name);
}

/* Does some file match the glob @pattern? */
bool have_files(const char *pattern)
{
	glob_t g;
	int rc = glob(pattern, 0, NULL, &g);

	if (!rc)
		globfree(&g);
	return !rc;
}

static void tail_one(int n, const char *path)
{
	char *ring[16] = { 0 }, *line = NULL;
	size_t cap = 0;
	int k = 0;
	FILE *f = fopen(path, "r");

	if (n > 16)
		n = 16;
	if (!f) {
		fprintf(stderr, "datapath: cannot read %s: %s\n", path, strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) >= 0) {
		free(ring[k % n]);
		ring[k++ % n] = strdup(line);
	}
	free(line);
	fclose(f);
	for (int i = k > n ? k - n : 0; i < k; i++) {
		if (ring[i % n])
			fputs(ring[i % n], stderr);
		free(ring[i % n]);
		ring[i % n] = NULL;
	}
}

void show_tail(int n, const char *path, const char *path2)
{
	if (!path2) {
		tail_one(n, path);
		return;
	}
	fprintf(stderr, "==> %s <==\n", path);
	tail_one(n, path);
	fprintf(stderr, "\n==> %s <==\n", path2);
	tail_one(n, path2);
}

/* ---- children ---------------------------------------------------------------- */

static void kid_add(struct bench_topo *t, pid_t p)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (!t->kids[i]) {
			t->kids[i] = p;
			return;
		}
}

static void kid_del(struct bench_topo *t, pid_t p)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (t->kids[i] == p)
			t->kids[i] = 0;
}

/* In the child: stdin from /dev/null, stdout and stderr to @out. */
static void child_stdio(const char *out)
{
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
}

/* Start argv (NULL-terminated) in namespace @ns (empty: this one), output
 * to @out. */
pid_t spawn(struct bench_topo *t, const char *ns, const char *out, char *const *argv)
{
	char *full[48];
	pid_t p, parent;
	int n = 0;

	if (ns[0]) {
		full[n++] = "ip";
		full[n++] = "netns";
		full[n++] = "exec";
		full[n++] = (char *)ns;
	}
	for (int i = 0; argv[i] && n < 47; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	parent = getpid();
	p = fork();
	if (p < 0)
		return -1;
	if (!p) {
		/* The bench's handlers would only set a flag here. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		/* SIGTERM when the bench dies; it may have died before this. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
			_exit(127);
		child_stdio(out);
		execvp(full[0], full);
		_exit(127);
	}
	kid_add(t, p);
	return p;
}

/* Wait up to @timeout s for @p: its exit status (128 + the signal when
 * killed), or -1 when it had to be killed. */
int reap(struct bench_topo *t, pid_t p, double timeout)
{
	double end = now_sec() + timeout;
	bool told = false;
	int st;

	while (now_sec() < end) {
		if (bench_stopped() && !told) {	/* interrupted: stop it now */
			kill(p, SIGTERM);
			told = true;
		}
		pid_t r = waitpid(p, &st, WNOHANG);

		if (r == p) {
			kid_del(t, p);
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		sleep_sec(0.02);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	kid_del(t, p);
	return -1;
}

/* Wait until child @pid (@what, output in @out) has made device @dev and
 * put an XDP program on the interface: 0; -1 when it exits first (its last
 * lines shown) or 20 s pass. */
int wait_ready(struct bench_run *br, pid_t pid, const char *dev, const char *what,
	       const char *out)
{
	uint32_t prog = 0;

	/* 20 s: testpmd without hugepages can take 10 on a loaded machine. */
	for (int i = 0; i < 400; i++) {
		if (if_nametoindex(dev) &&
		    !bpf_xdp_query_id(if_nametoindex(br->cfg.ifname), 0, &prog) && prog)
			return 0;
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			kid_del(&br->topo, pid);
			fprintf(stderr, "datapath: %s did not start:\n", what);
			show_tail(5, out, NULL);
			return -1;
		}
		sleep_sec(0.05);
	}
	fprintf(stderr, "datapath: %s did not come up within 20 s: stopped\n", what);
	kill(pid, SIGTERM);
	reap(&br->topo, pid, 5);
	return -1;
}

/* SIGTERM to child @pid (@what, run for row @row, output in @out): 0 when
 * it exits cleanly within 10 s; -1 otherwise, its last lines shown. */
int stop_child(struct bench_topo *t, pid_t pid, const char *row, const char *what,
	       const char *out)
{
	kill(pid, SIGTERM);
	if (reap(t, pid, 10) == 0)
		return 0;
	fprintf(stderr, "datapath: %s: %s did not stop cleanly:\n", row, what);
	show_tail(5, out, NULL);
	return -1;
}

/* ---- setting up and tearing down ----------------------------------------------- */

int set_sysctl(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(v, f);
	return fclose(f);
}

/* Nothing made yet: no fd, no child, no namespace, no folder. */
void topo_init(struct bench_topo *t)
{
	*t = (struct bench_topo){ .back_fd = -1, .gen_ns_fd = -1, .dut_ns_fd = -1 };
}

int topo_tmpdir(struct bench_topo *t)
{
	/* The pid, as the namespaces': a killed bench's is known by it. */
	snprintf(t->tmpdir, sizeof(t->tmpdir), "/tmp/ucm-bench-%d-XXXXXX", getpid());
	if (mkdtemp(t->tmpdir))
		return 0;
	t->tmpdir[0] = 0;
	return -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void topo_cleanup(struct bench_topo *t, bool dpdk)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (t->kids[i] > 0)
			kill(t->kids[i], SIGTERM);
	for (int i = 0; i < MAX_KIDS; i++)
		if (t->kids[i] > 0)
			reap(t, t->kids[i], 2);
	for (int i = 0; i < t->nsinks; i++)
		close_fd(&t->sink_fd[i]);
	t->nsinks = 0;
	close_fd(&t->back_fd);
	close_fd(&t->gen_ns_fd);
	close_fd(&t->dut_ns_fd);
	/* what is not there is not an error: the status is not asked */
	if (t->ns_gen[0])
		sh("ip netns del %s 2>/dev/null", t->ns_gen);
	if (t->ns_dut[0])
		sh("ip netns del %s 2>/dev/null", t->ns_dut);
	if (t->tmpdir[0])
		sh("rm -rf %s", t->tmpdir);
	if (dpdk)	/* testpmd's runtime directory (--file-prefix) */
		sh("rm -rf /var/run/dpdk/ucm-bench-%d", getpid());
	t->ns_gen[0] = t->ns_dut[0] = t->tmpdir[0] = 0;
}

int sink_steered(const char *cmd, const char *ip, unsigned long port)
{
	uint8_t a[16];
	const char *why = NULL;

	if (inet_pton(AF_INET6, ip, a) == 1) {
		if (a[0] == 0xff)
			why = "a multicast address";
		else if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
			why = "a link-local address";
		else if (port == 546 || port == 547)
			why = "DHCPv6's port";
	} else if (inet_pton(AF_INET, ip, a) == 1) {
		if ((a[0] & 0xf0) == 0xe0)
			why = "a multicast address";
		else if (a[0] == 169 && a[1] == 254)
			why = "a link-local address";
		else if (a[0] == 255 && a[1] == 255 && a[2] == 255 && a[3] == 255)
			why = "the limited broadcast";
		else if (port == 67 || port == 68)
			why = "DHCP's port";
	}
	if (!why)
		return 0;
	fprintf(stderr, "%s: --sink-ip %s port %lu: %s, which the steering program leaves to the kernel as the interface's own (xdp_pass link_ctrl): no row would measure ucpumap; give %s\n",
		cmd, ip, port, why, strstr(why, "port") ? "another --sink-port" :
		"a unicast address of this host that is not link-local");
	return -1;
}

/* Bind the sink: a UDP socket on --sink-ip, never read while traffic runs;
 * with cfg->nsinks, that many in one SO_REUSEPORT group, so that packets
 * delivered on several CPUs do not all meet at one socket's counters. */
static int sink_open(struct bench_topo *t, const struct bench_cfg *cfg)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	int n = cfg->nsinks > 0 ? cfg->nsinks : 1, one = 1, e;
	socklen_t len;

	if (inet_pton(AF_INET6, cfg->sink_ip, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(cfg->sink_port);
		len = sizeof(*a6);
	} else {
		inet_pton(AF_INET, cfg->sink_ip, &a4->sin_addr);
		a4->sin_family = AF_INET;
		a4->sin_port = htons(cfg->sink_port);
		len = sizeof(*a4);
	}
	for (t->nsinks = 0; t->nsinks < n && t->nsinks < MAX_SINKS; t->nsinks++) {
		int fd = socket(ss.ss_family, SOCK_DGRAM, 0);

		t->sink_fd[t->nsinks] = fd;
		if (fd < 0 || (n > 1 && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
						   sizeof(one))) ||
		    bind(fd, (struct sockaddr *)&ss, len))
			goto err;
	}
	return 0;
err:
	e = errno;
	t->nsinks++;	/* the failed one is closed with the others */
	fprintf(stderr, "datapath: cannot bind the sink to %s port %lu: %s%s\n",
		cfg->sink_ip, cfg->sink_port, strerror(e),
		e == EADDRNOTAVAIL ? " (--sink-ip must be an address of this host, the one "
				     "the generator sends to)" :
		e == EADDRINUSE ? " (choose another --sink-port)" : "");
	return -1;
}

/* The way back's sink (two-way rows): a UDP socket on 10.77.0.1:BACK_PORT in
 * the generator's namespace, made there by this thread and kept when it
 * goes back to the DUT's. */
static int back_sink_open(struct bench_topo *t)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(BACK_PORT) };
	char path[128];

	snprintf(path, sizeof(path), "/run/netns/%s", t->ns_gen);
	t->gen_ns_fd = open(path, O_RDONLY);
	if (t->gen_ns_fd < 0 || setns(t->gen_ns_fd, CLONE_NEWNET))
		goto err;
	inet_pton(AF_INET, GEN_IP4, &a.sin_addr);
	t->back_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (t->back_fd < 0 || bind(t->back_fd, (struct sockaddr *)&a, sizeof(a)))
		goto err;
	if (setns(t->dut_ns_fd, CLONE_NEWNET))
		goto err;
	return 0;
err:
	fprintf(stderr, "datapath: cannot make the way back's sink in %s: %s\n", t->ns_gen,
		strerror(errno));
	return -1;
}

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
	if (pclose(f))
		mac[0] = 0;
}

/* The two namespaces and the veth pair between them, @nq queues each way.
 * A frame the generator's live engine redirects out of vg lands on vd's
 * RX queue (sending CPU) % nq, and that queue's NAPI runs on the sending
 * CPU (veth's ndo_xdp_xmit): one generator per CPU feeds one queue. */
static int veth_pair(struct bench_topo *t, int nq, unsigned long mtu)
{
	const char *ns_gen = t->ns_gen, *ns_dut = t->ns_dut;

	snprintf(t->ns_gen, sizeof(t->ns_gen), "ucm-bench-gen-%d", getpid());
	snprintf(t->ns_dut, sizeof(t->ns_dut), "ucm-bench-dut-%d", getpid());
	if (sh("ip netns add %s && ip netns add %s && "
	       "ip -n %s link add vg numtxqueues %d numrxqueues %d type veth peer name vd "
	       "netns %s numtxqueues %d numrxqueues %d && "
	       "ip -n %s addr add 10.77.0.1/24 dev vg && ip -n %s addr add 10.77.0.2/24 dev vd && "
	       "ip -n %s addr add fd77::1/64 dev vg nodad && ip -n %s addr add fd77::2/64 dev vd nodad && "
	       "ip -n %s link set vg up && ip -n %s link set vd up && "
	       "ip -n %s link set lo up && ip -n %s link set lo up",
	       ns_gen, ns_dut, ns_gen, nq, nq, ns_dut, nq, nq, ns_gen, ns_dut, ns_gen, ns_dut,
	       ns_gen, ns_dut, ns_gen, ns_dut)) {
		fprintf(stderr, "datapath: cannot build the namespaces\n");
		return -1;
	}
	/* best effort: where ethtool is missing the rows still run */
	sh("ip netns exec %s ethtool -K vg tx off >/dev/null 2>&1", ns_gen);
	if (mtu && sh("ip -n %s link set vg mtu %lu && ip -n %s link set vd mtu %lu",
		      ns_gen, mtu, ns_dut, mtu)) {
		fprintf(stderr, "datapath: cannot set the veth pair's MTU to %lu\n", mtu);
		return -1;
	}
	return 0;
}

/* The veth topology, entered: the bench runs in the DUT's namespace. */
int topo_veth(struct bench_topo *t, const struct bench_cfg *cfg)
{
	char path[128];
	int fd;

	if (veth_pair(t, cfg->veth_queues > 0 ? cfg->veth_queues : 1, cfg->mtu))
		return -1;
	snprintf(path, sizeof(path), "/run/netns/%s", t->ns_dut);
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "datapath: cannot enter %s: %s\n", t->ns_dut, strerror(errno));
		return -1;
	}
	t->dut_ns_fd = fd;
	if (back_sink_open(t))
		return -1;
	set_sysctl("/proc/sys/net/ipv4/conf/all/rp_filter", "0");
	set_sysctl("/proc/sys/net/ipv4/conf/default/rp_filter", "0");
	/* /sys is still that of the namespace the bench started in: ask ip. */
	ns_mac(t->ns_dut, "vd", t->vd_mac, sizeof(t->vd_mac));
	ns_mac(t->ns_gen, "vg", t->vg_mac, sizeof(t->vg_mac));
	if (!t->vd_mac[0] || !t->vg_mac[0]) {
		fprintf(stderr, "datapath: no MAC address on vd or vg\n");
		return -1;
	}
	return sink_open(t, cfg);
}

/* --dev: the rows run on a NIC of this host, fed by an external generator.
 * Nothing of the host's is changed; what would spoil a row is refused with
 * its fix. */
int topo_dev(struct bench_topo *t, const struct bench_cfg *cfg)
{
	unsigned int ifindex = if_nametoindex(cfg->ifname);
	int n, i, nq = nic_rx_queues(cfg->ifname);
	uint32_t prog = 0, q[64];
	char v[16] = "";
	FILE *f;

	if (!ifindex) {
		fprintf(stderr, "datapath: --dev %s: no such interface in this network namespace\n",
			cfg->ifname);
		return -1;
	}
	/* Before any row: ucpumapd and testpmd would refuse it in each.
	 * The scale bench places its queues itself, on the NIC's. */
	n = cfg->queues ? parse_index_list(cfg->queues, q, 64, "datapath: --queues") : 0;
	for (i = 0; nq > 0 && i < n; i++) {
		if (q[i] < (uint32_t)nq)
			continue;
		fprintf(stderr, "datapath: --queues %s: %s has RX queues 0-%d, not queue %u: give "
			"queues it has, or give it more (ethtool -L %s combined N)\n", cfg->queues,
			cfg->ifname, nq - 1, q[i], cfg->ifname);
		return -1;
	}
	if (!bpf_xdp_query_id(ifindex, 0, &prog) && prog) {
		fprintf(stderr, "datapath: --dev %s already has an XDP program (id %u); the rows "
			"attach their own: detach it first (ip link set dev %s xdp off)\n",
			cfg->ifname, prog, cfg->ifname);
		return -1;
	}
	f = fopen("/proc/sys/net/ipv4/conf/all/rp_filter", "r");
	if (f) {
		if (!fgets(v, sizeof(v), f))
			v[0] = 0;
		fclose(f);
	}
	if (!cfg->v6 && atoi(v) == 1) {
		fprintf(stderr, "datapath: net.ipv4.conf.all.rp_filter is 1 (strict): packets that "
			"reach the stack through a tun would be dropped as martians; set it to 2 "
			"(loose) or 0 for the benchmark: sysctl -w net.ipv4.conf.all.rp_filter=2\n");
		return -1;
	}
	return sink_open(t, cfg);
}
