// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench datapath: how each kind of row runs one round, and when it
 * cannot run here (rows.c's kinds table names these functions; the latency
 * rows' are latency.c's). kernel-pass and kernel-cpumap attach an XDP
 * program of their own; ucpumapd's rows (one-way, two-way, TCP) start the
 * daemon with the row's flags (daemon.c); the tun ceiling writes into a tun
 * itself; dpdk runs testpmd; tcp-kernel is the TCP stream with nothing
 * attached.
 */
#include <fcntl.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/if_link.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <liburing.h>

#include "ucpumap/xdp.h"
#include "datapath.h"

/* ---- kernel-pass, kernel-cpumap ------------------------------------------------- */

/* Past 1500 bytes the programs are frags-aware: veth refuses any other
 * once its MTU is more than a page holds, and a jumbo frame comes to
 * them in several buffers. */
static bool bench_frags(const struct bench_cfg *cfg)
{
	return cfg->mtu > 1500;
}

/* The program of xdp_const_attach() attached the old way (netlink, before
 * Linux 5.9's XDP links), which a killed bench would leave behind. */
static int const_netlink_fd = -1;

/* r0 = @action (XDP_PASS, XDP_DROP); exit. Through a bpf_link: the kernel
 * takes it off when the bench dies, even on --dev's NIC. Return its fd. */
static int xdp_const_attach(const struct bench_cfg *cfg, int ifindex, int action)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = action },	/* BPF_ALU64|BPF_MOV|BPF_K */
		{ .code = 0x95 },				/* BPF_JMP|BPF_EXIT */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po,
		    .prog_flags = bench_frags(cfg) ? BPF_F_XDP_HAS_FRAGS : 0);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "ucm_bench_pass", "GPL", insns, 2, &po);

	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_DRV_MODE);
	int link;

	if (fd < 0)
		return fd;
	link = bpf_link_create(fd, ifindex, BPF_XDP, &lo);
	if (link >= 0) {
		close(fd);	/* the link holds the program */
		return link;
	}
	if (errno != EINVAL ||
	    bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL)) {
		close(fd);
		return -1;
	}
	const_netlink_fd = fd;
	return fd;
}

static void xdp_const_detach(int ifindex, int fd)
{
	if (fd == const_netlink_fd) {
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
		const_netlink_fd = -1;
	}
	close(fd);	/* a link's: the kernel detaches */
}

/* The kernel's own cpumap, with ucpumapd's default steering, so both
 * spread flows alike. */
struct ucm_xdp *kernel_cpumap_attach(const struct bench_cfg *cfg, int ifindex)
{
	struct ucm_xdp_opts o = { .sz = sizeof(o), .nworkers = cfg->nwcpu,
				  .policy = UCM_STEER_L4_HASH,
				  .load_flags = bench_frags(cfg) ? UCM_XDP_F_FRAGS : 0 };
	struct ucm_xdp *x = ucm_xdp__load(&o);

	if (!x || ucm_xdp__set_kernel_cpumap(x, cfg->wcpu, cfg->nwcpu, 2048) ||
	    ucm_xdp__attach(x, ifindex, UCM_XDP_ATTACH_CPUMAP)) {
		fprintf(stderr, "datapath: kernel-cpumap: cannot attach\n");
		if (x)
			ucm_xdp__destroy(x);
		return NULL;
	}
	return x;
}

/* A row's delivered rate: on veth what the sink counted from before the
 * generator started to after the row drained (d0, d1); with --dev what
 * run_traffic() counted over the offered load's own window. */
static double delivered_rate(const struct bench_cfg *cfg, uint64_t d0, uint64_t d1,
			     double dev_dst)
{
	return (cfg->dev ? dev_dst : (double)(d1 - d0)) / cfg->seconds;
}

int row_kernel(struct bench_run *br, struct row *r, int round)
{
	const struct bench_cfg *cfg = &br->cfg;
	int ifindex = if_nametoindex(cfg->ifname), pfd = -1, rc;
	struct ucm_xdp *x = NULL;
	double dev_dst = 0;
	uint64_t d0, d1;

	if (row_kind(r) == K_KPASS) {
		pfd = xdp_const_attach(cfg, ifindex, XDP_PASS);
		if (pfd < 0) {
			fprintf(stderr, "datapath: kernel-pass: cannot attach XDP_PASS\n");
			return -1;
		}
	} else {
		x = kernel_cpumap_attach(cfg, ifindex);
		if (!x)
			return -1;
	}
	sleep_sec(0.2);
	d0 = delivered_now(&br->topo);
	rc = run_traffic(br, r->def->name, r->def->flows, &r->sent[round], &dev_dst);
	sleep_sec(0.3);
	d1 = delivered_now(&br->topo);
	if (pfd >= 0)
		xdp_const_detach(ifindex, pfd);
	if (x) {
		ucm_xdp__detach(x);
		ucm_xdp__destroy(x);
	}
	r->dst[round] = delivered_rate(cfg, d0, d1, dev_dst);
	return rc;
}

/* ---- tcp-kernel, tcp-kernel-cpumap ------------------------------------------------ */

/* The TCP stream over the kernel's own path, nothing attached to vd: what
 * the sender and the stack reach without ucpumap in between; or through
 * the kernel's cpumap to the worker CPU (tcp-kernel-cpumap: its kthread
 * runs GRO since Linux 6.14), the kernel's design at its best. */
int row_tcp_kernel(struct bench_run *br, struct row *r, int round)
{
	const struct bench_cfg *cfg = &br->cfg;
	struct busy_mark bw, bc0;
	struct ucm_xdp *x = NULL;
	int rc;

	if (row_kind(r) == K_TCP_KCPUMAP) {
		x = kernel_cpumap_attach(cfg, if_nametoindex(cfg->ifname));
		if (!x)
			return -1;
		sleep_sec(0.2);
	}
	busy_mark(&bw, cfg->wcpu[0]);
	busy_mark(&bc0, 0);
	rc = run_tcp(br, r->def->name, false, &r->dst[round]);
	busy_done(r, round, &bw, &bc0);
	if (x) {
		ucm_xdp__detach(x);
		ucm_xdp__destroy(x);
	}
	return rc;
}

/* ---- ucpumapd's rows ------------------------------------------------------------- */

/* The coalescing rows' figures from ucpumapd's last statistics line. */
static void daemon_segs(struct row *r, int round, const char *last)
{
	double super = 0, segs = 0, pkts = 0;
	bool ok = !json_u64_field(last, "tun_super", &super) &&
		  !json_u64_field(last, "tun_super_segs", &segs) &&
		  !json_u64_field(last, "tun_packets", &pkts);

	r->segs[round] = super > 0 ? segs / super : 0;
	r->merged[round] = pkts > 0 ? segs / pkts : 0;
	r->have_segs = (round == 0 || r->have_segs) && ok;
}

/* What ucpumapd counted, from its last statistics line (or, with --dev,
 * from the two samples around the timed run). */
static void daemon_results(const struct bench_cfg *cfg, struct row *r, int round,
			   const struct daemon_run *d)
{
	char *last = last_line(d->js);
	bool got_daemon = false, got_src = false, got_pool = false;
	double v, sum;

	if (!last)
		goto out;
	if (cfg->dev && d->a_tun >= 0 && d->b_tun >= 0) {
		r->daemon[round] = d->b_tun - d->a_tun;
		r->kernel_cmp[round] = d->b_kern - d->a_kern;
		got_daemon = true;
	} else if (!cfg->dev && !row_is_tcp(r) && !json_u64_field(last, "tun_packets", &v)) {
		r->daemon[round] = v;
		got_daemon = true;
	}
	if (cfg->dev) {
		/* Over the timed run, as the offered load (the far side's
		 * generator also ran while the daemon started and stopped),
		 * by the two lines' own times: the samples bracket the sink's
		 * drains too. */
		if (d->a_rx >= 0 && d->b_rx >= d->a_rx && d->b_when > d->a_when && d->a_when >= 0) {
			r->src[round] = (d->b_rx - d->a_rx) / (d->b_when - d->a_when);
			got_src = true;
		}
	} else if (!row_is_tcp(r) && !json_u64_field(last, "rx", &v)) {
		/* Not a TCP row's: iperf3 ran whole seconds, its own rate. */
		r->src[round] = v / cfg->seconds;
		got_src = true;
	}
	for (int i = 0; i < NPOOL; i++) {
		if (json_sum_field(last, pool_key(i), &sum))
			continue;
		r->pool[i] += sum;
		got_pool = true;
	}
	if (r->def->coalesce)
		daemon_segs(r, round, last);
	if (r->def->ops->two_way) {
		double done = 0, direct = 0;

		json_u64_field(last, "tx_completed", &done);
		json_u64_field(last, "tx_comp_direct", &direct);
		r->direct[round] = done > 0 ? direct / done : 0;
	}
	free(last);
out:
	/* A figure is shown where every round read it: a round without
	 * would show its 0 as a measure. */
	r->have_daemon = (round == 0 || r->have_daemon) && got_daemon;
	r->have_src = (round == 0 || r->have_src) && got_src;
	r->have_pool = (round == 0 || r->have_pool) && got_pool;
}

int row_daemon(struct bench_run *br, struct row *r, int round)
{
	struct daemon_run d = { .a_tun = -1, .b_tun = -1, .a_rx = -1, .b_rx = -1,
				 .a_when = -1, .b_when = -1 };
	const struct row_kind_ops *k = r->def->ops;
	const struct bench_cfg *cfg = &br->cfg;
	struct bench_topo *t = &br->topo;
	struct back_sender back = {};
	struct busy_mark bw, bc0;
	double sent = 0, dev_dst = 0;
	uint64_t d0, d1;
	int rc;

	if (daemon_start(br, r, &d))
		return -1;
	sleep_sec(0.3);
	d0 = delivered_now(t);
	if (cfg->dev)
		d.a_tun = daemon_sample(t, &d, &d.a_kern, &d.a_rx, &d.a_when);
	if (k->two_way || (k->back && !k->tcp))
		back_start(t, &back);
	busy_mark(&bw, cfg->wcpu[0]);
	busy_mark(&bc0, 0);
	if (k->tcp) {
		rc = run_tcp(br, r->def->name, k->back, &r->dst[round]);
	} else if (k->back) {	/* udp-back: the way back's sender alone */
		bench_sleep(cfg->seconds);
		rc = bench_stopped() ? -1 : 0;
	} else {
		rc = run_traffic(br, r->def->name, r->def->flows, &sent, &dev_dst);
	}
	busy_done(r, round, &bw, &bc0);
	back_stop(t, &back, &r->back_sent[round], &r->back_dst[round]);
	if (cfg->dev)
		d.b_tun = daemon_sample(t, &d, &d.b_kern, &d.b_rx, &d.b_when);
	else
		sleep_sec(0.2);
	if (daemon_stop(br, r, &d))
		rc = -1;
	d1 = delivered_now(t);
	r->sent[round] = sent;
	if (k->back && !k->tcp) {	/* its rate is the way back's */
		r->sent[round] = r->back_sent[round] * cfg->seconds;	/* a count, as sent */
		r->dst[round] = r->back_dst[round];
	} else if (!k->tcp) {
		r->dst[round] = delivered_rate(cfg, d0, d1, dev_dst);
	}
	if (!cfg->dev)
		r->kernel_cmp[round] = d1 - d.l0;
	daemon_results(cfg, r, round, &d);
	return rc ?: d.rc;
}

/* ---- tun-ceiling ------------------------------------------------------------------ */

/* The tun-ceiling row's datagrams: 64-byte frames less the Ethernet header,
 * from 198.18.0.1 / 2001:2::1 (RFC 2544's and RFC 5180's benchmarking
 * ranges) to the sink, @n source ports, with a UDP checksum as ucpumap-gen's
 * carry (the kernel verifies it in every row alike). Return the length. */
static int ceiling_packets(const struct bench_cfg *cfg, uint8_t (*pkt)[64], int n)
{
	bool v6 = strchr(cfg->sink_ip, ':');
	uint8_t src[16], dst[16];
	int len = 64 - 14;

	inet_pton(v6 ? AF_INET6 : AF_INET, v6 ? "2001:2::1" : "198.18.0.1", src);
	inet_pton(v6 ? AF_INET6 : AF_INET, cfg->sink_ip, dst);
	for (int i = 0; i < n; i++)
		udp_build(pkt[i], len, v6, src, dst, 1024 + i, cfg->sink_port);
	return len;
}

/* A tun named @name, up, without reverse-path filtering: its fd, or -1. */
static int tun_open(const char *name)
{
	struct ifreq ifr = { 0 };
	char path[128];
	int fd, s;

	fd = open("/dev/net/tun", O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "datapath: tun-ceiling: /dev/net/tun: %s\n", strerror(errno));
		return -1;
	}
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		fprintf(stderr, "datapath: tun-ceiling: cannot make the tun %s: %s\n", name,
			strerror(errno));
		close(fd);
		return -1;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ioctl(s, SIOCSIFFLAGS, &ifr);
	close(s);
	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/rp_filter", name);
	set_sysctl(path, "0");
	return fd;
}

enum { TUN_BATCH = 64, TUN_NPKT = 16 };

/* Write @pkt's datagrams of @len bytes into tun @fd in io_uring batches for
 * @seconds: how many were written. */
static uint64_t tun_write_loop(int fd, struct io_uring *ring, uint8_t (*pkt)[64], int len,
			       double seconds)
{
	double end = now_sec() + seconds;
	uint64_t n = 0;

	while (now_sec() < end && !bench_stopped()) {
		struct io_uring_cqe *cqe;

		for (int i = 0; i < TUN_BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			io_uring_prep_write(sqe, fd, pkt[i % TUN_NPKT], len, 0);
		}
		io_uring_submit_and_wait(ring, TUN_BATCH);
		for (int i = 0; i < TUN_BATCH; i++) {
			if (io_uring_wait_cqe(ring, &cqe))
				break;
			if (cqe->res == len)
				n++;
			io_uring_cqe_seen(ring, cqe);
		}
	}
	return n;
}

/* One thread on the first worker CPU writes prebuilt UDP datagrams into a
 * tun queue in io_uring batches of 64: the sink's own limit. The traffic
 * runs meanwhile, dropped by XDP on the interface, so the other CPU works
 * as hard as in the other rows and none of it reaches the sink. */
int row_tun(struct bench_run *br, struct row *r, int round)
{
	const struct bench_cfg *cfg = &br->cfg;
	int ifindex = if_nametoindex(cfg->ifname), fd, len, xfd, err, rc = -1;
	uint8_t pkt[TUN_NPKT][64];
	struct io_uring ring;
	uint64_t d0, d1;
	char out[GEN_OUT];
	cpu_set_t old;
	bool have_old;
	pid_t g = 0;

	len = ceiling_packets(cfg, pkt, TUN_NPKT);
	xfd = xdp_const_attach(cfg, ifindex, XDP_DROP);
	if (xfd < 0) {
		fprintf(stderr, "datapath: tun-ceiling: cannot attach XDP_DROP to %s\n",
			cfg->ifname);
		return -1;
	}
	fd = tun_open("ucmb1");
	if (fd < 0)
		goto err_xdp;
	err = io_uring_queue_init(TUN_BATCH * 2, &ring, 0);
	if (err) {
		fprintf(stderr, "datapath: tun-ceiling: no io_uring: %s%s\n", strerror(-err),
			err == -EPERM ? " (kernel.io_uring_disabled?)" : "");
		goto err_fd;
	}
	if (!cfg->dev) {
		g = gen_start(br, r->def->name, r->def->flows, out);
		if (g < 0) {
			fprintf(stderr, "datapath: tun-ceiling: the generator did not start\n");
			goto err_ring;
		}
	}
	have_old = !cpu_affinity(0, &old);
	pin_self(cfg->wcpu[0]);
	sleep_sec(0.1);
	d0 = delivered_now(&br->topo);
	r->sent[round] = tun_write_loop(fd, &ring, pkt, len, cfg->seconds);
	if (have_old)
		sched_setaffinity(0, sizeof(old), &old);
	sleep_sec(0.1);
	d1 = delivered_now(&br->topo);
	r->dst[round] = (d1 - d0) / cfg->seconds;
	rc = 0;
	if (g > 0 && gen_wait(br, g, r->def->name, out, 10))
		rc = -1;
err_ring:
	io_uring_queue_exit(&ring);
err_fd:
	close(fd);
err_xdp:
	xdp_const_detach(ifindex, xfd);
	return rc;
}

/* ---- dpdk --------------------------------------------------------------------------- */

/* dpdk-testpmd: net_af_xdp on the interface's queues, forwarding in mac mode
 * to a net_tap whose kernel side has the MAC the frames are sent to. Its
 * forwarding cores are the workers' CPUs, its main core CPU 0 (idle: stats
 * only at exit). */
int row_dpdk(struct bench_run *br, struct row *r, int round)
{
	const struct bench_cfg *cfg = &br->cfg;
	struct bench_topo *t = &br->topo;
	char out[256], lcores[256], vdev0[128], nq[16], ncores[16], prefix[32];
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
	double sent = 0, rx, dev_dst = 0;
	uint64_t d0, d1;
	int rc, l = 0;
	pid_t d;

	l += snprintf(lcores + l, sizeof(lcores) - l, "0");
	for (int i = 0; i < cfg->nwcpu; i++)
		l += snprintf(lcores + l, sizeof(lcores) - l, ",%d", cfg->wcpu[i]);
	snprintf(vdev0, sizeof(vdev0), "net_af_xdp0,iface=%s,start_queue=%d,queue_count=%d",
		 cfg->ifname, cfg->q0, cfg->nq);
	snprintf(nq, sizeof(nq), "%d", cfg->nq);
	snprintf(prefix, sizeof(prefix), "ucm-bench-%d", getpid());
	snprintf(ncores, sizeof(ncores), "%d", cfg->nwcpu);
	snprintf(out, sizeof(out), "%s/dpdk-%d", t->tmpdir, round);
	d = spawn(t, t->ns_dut, out, argv);
	if (d < 0 || wait_ready(br, d, "ucmbt0", "dpdk-testpmd", out))
		return -1;
	sleep_sec(0.5);
	d0 = delivered_now(t);
	rc = run_traffic(br, r->def->name, r->def->flows, &sent, &dev_dst);
	sleep_sec(0.2);
	if (stop_child(t, d, r->def->name, "dpdk-testpmd", out))
		rc = -1;
	d1 = delivered_now(t);
	r->sent[round] = sent;
	r->dst[round] = delivered_rate(cfg, d0, d1, dev_dst);
	rx = testpmd_rx(out);
	/* testpmd's count is its whole run's: with --dev the far side's
	 * generator ran all along, so it is no rate of the timed run. */
	if (rx >= 0 && !cfg->dev)
		r->src[round] = rx / cfg->seconds;
	r->have_src = (round == 0 || r->have_src) && rx >= 0 && !cfg->dev;
	return rc;
}

/* ---- when a kind cannot run ---------------------------------------------------------- */

/* Why testpmd cannot run here, or NULL; the first reason stands. */
const char *skip_dpdk(const struct bench_cfg *cfg)
{
	if (!have_prog("dpdk-testpmd"))
		return "dpdk-testpmd is not installed (Debian's dpdk-dev; "
		       "scripts/install-deps.sh installs it)";
	if (!have_files("/usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so*") ||
	    !have_files("/usr/lib/*/dpdk/pmds-*/librte_net_tap.so*"))
		return "DPDK's af_xdp or tap driver is not installed (Debian's "
		       "librte-net-af-xdp23 and librte-net-tap23)";
	if (!cfg->nq)
		return "testpmd's net_af_xdp takes one range of queues; give --queues as A or A-B";
	for (int i = 0; i < cfg->nwcpu; i++)
		if (cfg->wcpu[i] == 0)
			return "testpmd's main core is CPU 0, which --cpus gives a worker";
	return NULL;
}

const char *skip_two_way(const struct bench_cfg *cfg)
{
	if (cfg->dev)
		return "the way back's traffic comes from the veth topology's generator "
		       "namespace: veth only";
	if (cfg->v6)
		return "the way back's sender is IPv4 only";
	return NULL;
}

const char *skip_tcp(const struct bench_cfg *cfg)
{
	if (cfg->dev)
		return "needs a TCP sender on the far side of IFACE: run iperf3 -c "
		       "there against iperf3 -s here, with and without --no-coalesce";
	if (!have_prog("iperf3"))
		return "iperf3 is not installed (scripts/install-deps.sh installs it)";
	return NULL;
}

/* The way back's TCP stream: both reasons. */
const char *skip_tcp_back(const struct bench_cfg *cfg)
{
	return skip_two_way(cfg) ?: skip_tcp(cfg);
}
