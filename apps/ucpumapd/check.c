// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd --check: what the start would refuse, found without starting.
 * Each check is the start's own (ucm_dp__validate() for the datapath's,
 * priv.c's for the user and the tun, metrics__open() for the port), run
 * with nothing attached, bound to a queue or created: one line each on
 * stdout, the reasons on stderr as the start would say them. Every check
 * runs; the exit status is the first failure's (ucpumapd(8), --check).
 *
 * Not covered, the set-up's alone: the driver's XDP and zero-copy
 * support, the interface held by another program or instance, the tun
 * served by another instance, --stats-json's file (not created here).
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/ethtool.h>

#include "daemon.h"
#include "journal.h"
#include "util.h"

/* /sys/class/net/NAME/tun_flags: the tun driver's IFF_* (if_tun.h). */
#define TUN_F_TAP		0x0002
#define TUN_F_MULTI_QUEUE	0x0100	/* ours: one queue a worker */

struct check {
	int status;	/* the first failure's exit status, or 0 */
	int failed;
};

static void __attribute__((format(printf, 4, 5)))
said(struct check *k, int status, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%-5s %s: ", status ? "FAIL" : "ok", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (status && !k->status)
		k->status = status;
	k->failed += !!status;
}

/* The interface: there. Down is no failure: the start binds to it as
 * it is and rides it out, nothing coming in until it is up (FAULTS). */
static void check_iface(struct check *k, const char *dev)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unsigned long mtu = iface_mtu(dev);
	unsigned int idx = if_nametoindex(dev);

	if (!idx) {
		said(k, EXIT_CONFIG, "interface", "no interface named '%s' (ip link shows the names)",
		     dev);
		goto out;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr)) {
		said(k, EXIT_SETUP, "interface", "%s: cannot read its flags: %s", dev,
		     strerror(errno));
		goto out;
	}
	if (!(ifr.ifr_flags & IFF_UP))
		said(k, 0, "interface", "%s, index %u, down: nothing comes in until it is up "
		     "(ip link set dev %s up), MTU %lu", dev, idx, dev, mtu);
	else
		said(k, 0, "interface", "%s, index %u, up%s, MTU %lu", dev, idx,
		     ifr.ifr_flags & IFF_RUNNING ? "" : " (no carrier yet)", mtu);
out:
	if (s >= 0)
		close(s);
}

/* The tun: to be created, or one that may be attached to (its type, its
 * owner: priv.c's check). */
static void check_tun(struct check *k, struct daemon *d)
{
	const char *tun = d->c.tun, *kind = d->c.tap ? "tap" : "tun";
	char path[128];
	unsigned int flags;
	FILE *f;
	int st;

	snprintf(path, sizeof(path), "/sys/class/net/%s/tun_flags", tun);
	if (!if_nametoindex(tun)) {
		said(k, 0, "tun", "%s: not there, to be created (a %s)", tun, kind);
		return;
	}
	f = fopen(path, "re");
	if (!f || fscanf(f, "%x", &flags) != 1) {
		said(k, EXIT_CONFIG, "tun", "device %s exists and is not a tun: name another (--tun)",
		     tun);
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	if (!!(flags & TUN_F_TAP) != d->c.tap) {
		said(k, EXIT_CONFIG, "tun", "%s is a %s, not a %s%s", tun,
		     flags & TUN_F_TAP ? "tap" : "tun", kind,
		     d->c.tap ? "" : " (a tap wants --tap)");
		return;
	}
	if (!(flags & TUN_F_MULTI_QUEUE)) {
		said(k, EXIT_CONFIG, "tun",
		     "%s is a single-queue %s: delete it (ip link del %s) or re-create it with 'ip tuntap add dev %s mode %s multi_queue vnet_hdr'",
		     tun, kind, tun, tun, kind);
		return;
	}
	st = priv_check_tun(d);
	if (st)
		said(k, st, "tun", "%s: its owner (above)", tun);
	else
		said(k, 0, "tun", "%s: a %s already there, to be attached to", tun, kind);
}

static void check_cpus(struct check *k, const struct cfg *c)
{
	int wk[UCM_CPUMAP_MAX_WORKERS], n, i;
	char list[UCM_CPUMAP_MAX_WORKERS * 5] = "";
	size_t at = 0;

	if (c->pass) {
		said(k, 0, "workers", "none (--pass: the RX threads write to the tun)");
		return;
	}
	n = c->ncpus ? c->ncpus : ucm_dp__default_cpus(c->dev, wk, UCM_CPUMAP_MAX_WORKERS);
	for (i = 0; i < n && at < sizeof(list); i++)
		at += snprintf(list + at, sizeof(list) - at, "%s%d", i ? "," : "",
			       c->ncpus ? c->cpus[i] : wk[i]);
	if (!(c->poll || c->spin_us || c->busy_poll))
		said(k, 0, "workers", "%d on CPUs %s%s, online", n, list,
		     c->ncpus ? "" : " (default)");
	else if (c->poll_placed > 0)
		said(k, 0, "workers", "%d on CPUs %s%s, online, none shared with a polling "
		     "thread", n, list, c->ncpus ? "" : " (default)");
	else if (c->poll_placed < 0)
		said(k, EXIT_USAGE, "workers", "%d on CPUs %s%s: the polling threads' placement is "
		     "refused (above)", n, list, c->ncpus ? "" : " (default)");
	else
		said(k, 0, "workers", "%d on CPUs %s%s, online; whether a polling thread "
		     "shares one not looked at (an option refused first, above)", n, list,
		     c->ncpus ? "" : " (default)");
}

/* RSS's queues: @used[q] for each queue of @have that the indirection
 * table names where the driver gives one (ethtool -X narrows it), else
 * for every queue. Return: whether there was a table. */
static bool rss_queues(const char *dev, bool *used, int have)
{
	struct ethtool_rxfh_indir head = { .cmd = ETHTOOL_GRXFHINDIR }, *t;
	bool table = false;
	uint32_t i;

	memset(used, 1, have);
	if (eth_ioctl(dev, &head) || !head.size)
		return false;
	t = calloc(1, sizeof(*t) + head.size * sizeof(t->ring_index[0]));
	if (!t)
		return false;
	t->cmd = ETHTOOL_GRXFHINDIR;
	t->size = head.size;
	if (!eth_ioctl(dev, t)) {
		memset(used, 0, have);
		for (i = 0; i < t->size; i++)
			if (t->ring_index[i] < (uint32_t)have)
				used[t->ring_index[i]] = true;
		table = true;
	}
	free(t);
	return table;
}

/* How ethtool -L counts @dev's RX queues: "combined", or "rx" (veth). */
static const char *channel_kind(const char *dev)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };

	return !eth_ioctl(dev, &ch) && !ch.combined_count && ch.rx_count ? "rx" : "combined";
}

/* Served: queues 0 to N-1, which the NIC narrowed to N keeps alone. */
static int served_prefix(const struct cfg *c)
{
	bool seen[UCM_XSK_MAX_QUEUES] = {};
	int q;

	for (q = 0; q < c->nqueues; q++)
		if (c->queues[q] >= (uint32_t)c->nqueues)
			return 0;
		else
			seen[c->queues[q]] = true;
	for (q = 0; q < c->nqueues; q++)
		if (!seen[q])
			return 0;
	return c->nqueues;
}

/*
 * The RX queues of --dev that RSS gives flows and --queues leaves out:
 * their flows go to the kernel past ucpumapd, counted only as xdp_pass
 * no_socket. The sentence naming them and the fix into @msg, "" when
 * there are none or the NIC does not say.
 */
static void unserved_msg(const struct cfg *c, char *msg, size_t len)
{
	bool served[UCM_XSK_MAX_QUEUES] = {}, *used, high = false, table;
	int have = nic_rx_queues(c->dev), q, n = 0, first = -1, k;
	size_t off = 0;
	char list[128];

	msg[0] = list[0] = '\0';
	if (have <= 0 || !(used = calloc(have, sizeof(*used))))
		return;
	table = rss_queues(c->dev, used, have);
	for (q = 0; q < c->nqueues; q++)
		if (c->queues[q] < UCM_XSK_MAX_QUEUES)
			served[c->queues[q]] = true;
	/* One past the last: a run of queues in hand ends there. */
	for (q = 0; q <= have; q++) {
		if (q < have && used[q] && (q >= UCM_XSK_MAX_QUEUES || !served[q])) {
			high |= q >= UCM_XSK_MAX_QUEUES;
			first = first < 0 ? q : first;
			n++;
			continue;
		}
		if (first >= 0 && off < sizeof(list))
			off += snprintf(list + off, sizeof(list) - off,
					first == q - 1 ? "%s%d" : "%s%d-%d", off ? "," : "", first, q - 1);
		first = -1;
	}
	free(used);
	if (!n)
		return;
	off = snprintf(msg, len, "%s has RX queues 0-%d, and RSS gives flows to %s, which %s not served: they go to the kernel past ucpumapd (xdp_pass no_socket); %s",
		       c->dev, have - 1, list, n > 1 ? "are" : "is",
		       high ? "ucpumapd serves queues 0-63 at most" : "add them to --queues");
	k = served_prefix(c);
	if (k && off < len)
		off += snprintf(msg + off, len - off, ", or narrow the NIC to those served: ethtool -L %s %s %d",
				c->dev, channel_kind(c->dev), k);
	if (k && table && off < len)
		off += snprintf(msg + off, len - off, " or ethtool -X %s equal %d", c->dev, k);
	if (k && off < len)
		snprintf(msg + off, len - off, " (not kept over a reboot)");
}

int file_num(const char *path, long *v)
{
	FILE *f = fopen(path, "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%ld", v);
	fclose(f);
	return n == 1 ? 0 : -EINVAL;
}

/*
 * kernel.io_uring_disabled 1 lets only CAP_SYS_ADMIN or the group
 * kernel.io_uring_group make an io_uring. The tun's writers make theirs in
 * the set-up, which holds it; one rebuilt after a fault (lib/io/tun.c) is
 * made by a thread that holds nothing. The sentence into @msg, "" when it
 * does not apply.
 */
static void uring_msg(const struct daemon *d, char *msg, size_t len)
{
	long disabled, group;

	msg[0] = '\0';
	if (d->c.no_batch || file_num("/proc/sys/kernel/io_uring_disabled", &disabled) ||
	    disabled != 1)
		return;
	if (!file_num("/proc/sys/kernel/io_uring_group", &group) && group == (long)d->priv.gid)
		return;
	snprintf(msg, len, "kernel.io_uring_disabled is 1: the tun's writers make their io_uring in the set-up, which may; one rebuilt after a fault is not made (no capability is held by then), and that writer sends a packet a write() until a restart: set it to 0, or make kernel.io_uring_group the group ucpumapd runs as (%u)",
		 (unsigned int)d->priv.gid);
}

void setup_warn(const struct daemon *d)
{
	char msg[512];

	unserved_msg(&d->c, msg, sizeof(msg));
	if (msg[0])
		out_warn("ucpumapd: %s\n", msg);
	uring_msg(d, msg, sizeof(msg));
	if (msg[0])
		out_warn("ucpumapd: %s\n", msg);
}

/* Queues left out: a warning, no failure (a start runs so, saying it). */
static void check_unserved(const struct cfg *c)
{
	char msg[512];

	unserved_msg(c, msg, sizeof(msg));
	if (msg[0])
		printf("%-5s %s: %s\n", "warn", "queues", msg);
}

/* Return: 0 when every check passed, else the first failure's status. */
int check_run(struct daemon *d, const struct ucm_dp_opts *o, int opts_status)
{
	struct check k = {};
	struct metrics *m;
	char msg[512];
	int err, st;

	if (opts_status)
		said(&k, opts_status, "options", "each taken, together refused (above)");
	else if (d->c.config_absent)
		said(&k, 0, "options", "taken; %s (optional, the '-') is not there: none read from it",
		     d->c.config + 1);
	else if (d->c.config)
		said(&k, 0, "options", "taken, with those of %s",
		     d->c.config + (d->c.config[0] == '-'));
	else
		said(&k, 0, "options", "taken");
	/* As the start does; were it refused, the steps below say what
	 * they then cannot do. */
	(void)priv_effective();
	st = priv_check(d);
	if (st)
		said(&k, st, "privileges", "the capabilities the set-up needs (above)");
	else
		said(&k, 0, "privileges", "%s", geteuid() ? "the capabilities the set-up needs" : "root");
	check_iface(&k, d->c.dev);
	err = d->c.lib_refused ? 0 : ucm_dp__validate(o);
	if (d->c.lib_refused)	/* one refusal, counted once: the options' */
		printf("%-5s %s: %s\n", "-", "datapath", "not looked at: the library refused the options (above)");
	else if (err)
		said(&k, setup_exit(err), "datapath", "refused (above): %s", strerror(-err));
	else
		said(&k, 0, "datapath", "%d queue%s there, the MTU and the frames fit", d->c.nqueues,
		     d->c.nqueues > 1 ? "s" : "");
	if (!d->c.lib_refused && !err)
		check_unserved(&d->c);
	check_cpus(&k, &d->c);
	st = priv_check_user(d);	/* first: the tun's owner is compared with it */
	if (st)
		said(&k, st, "user", "--user %s (above)", d->c.user);
	else if (d->c.user)
		said(&k, 0, "user", "%s", d->c.user);
	else
		said(&k, 0, "user", "none: stays uid %u%s, with no capabilities", (unsigned int)geteuid(),
		     geteuid() ? "" : " (root)");
	uring_msg(d, msg, sizeof(msg));
	if (msg[0])
		printf("%-5s %s: %s\n", "warn", "io_uring", msg);
	check_tun(&k, d);
	if (!d->c.metrics.len) {
		said(&k, 0, "metrics", "none (--metrics-listen)");
	} else if ((st = priv_check_metrics(d))) {
		said(&k, st, "metrics", "%s: not with the capabilities it has (above)",
		     d->c.metrics.text);
	} else {
		err = metrics__open(&m, &d->c.metrics);
		metrics__close(m);
		if (err)
			said(&k, setup_exit(err), "metrics", "%s cannot be bound (above)",
			     d->c.metrics.text);
		else
			said(&k, 0, "metrics", "%s can be bound (and was let go)", d->c.metrics.text);
	}
	if (k.status)
		printf("ucpumapd --check: %d problem%s, exit %d\n", k.failed,
		       k.failed > 1 ? "s" : "", k.status);
	else
		printf("ucpumapd --check: all good\n");
	return k.status;
}

/* The exit status of a set-up the library refused with @err (-errno or
 * errno): what no restart can change is the configuration's. EBUSY (the
 * interface held by another instance or program) and EADDRNOTAVAIL (an
 * address not assigned yet, at boot) may pass; the rest is set-up. */
int setup_exit(int err)
{
	switch (err < 0 ? -err : err) {
	case ENODEV:		/* no such interface */
	case EINVAL:		/* an option it cannot take: a queue it lacks, too few frames */
	case ERANGE:		/* its MTU: more than a frame holds, or XDP takes */
	case EOPNOTSUPP:	/* zero-copy asked, and the driver has none */
	case EPERM:		/* a privilege missing */
	case EADDRINUSE:	/* --metrics-listen's port in use */
	case EACCES:		/* a privileged port; a program the verifier refused */
	case EAFNOSUPPORT:	/* no IPv6 (or AF_XDP) in this kernel */
		return EXIT_CONFIG;
	default:
		return EXIT_SETUP;
	}
}
