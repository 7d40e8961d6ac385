// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's least privilege: the capabilities it keeps, the user it
 * becomes (--user), the tun it agrees to attach to, and the files it
 * writes. man/ucpumapd.8, PRIVILEGES, says what is kept and why.
 *
 * Linux keeps capabilities, the bounding set and no_new_privs per thread,
 * and a thread starts with its creator's. The datapath starts its threads
 * (workers, the resolver, the RX threads) inside ucm_dp__create() and
 * ucm_dp__start(), so the daemon works in two steps:
 *
 *   priv_prepare()  before create, on the only thread: no_new_privs, the
 *                   bounding set down to what the run time keeps, the
 *                   permitted and effective sets down to what the set-up
 *                   needs (and, for --user, CAP_SETUID and CAP_SETGID, and
 *                   CAP_CHOWN when there), nothing inheritable or ambient.
 *                   Every thread the datapath starts inherits this.
 *   priv_thread()   on each thread the datapath starts, once its own
 *                   set-up is done (ucm_dp_opts.thread_init, before
 *                   create or start returns): the RX threads and workers
 *                   keep nothing, a resolver CAP_NET_ADMIN (it asks the
 *                   kernel to resolve next hops). No thread can set
 *                   another's capabilities (capset(2) refuses any pid but
 *                   its own): each drops its own.
 *   priv_drop()     after start: with --user, setgroups(), setresgid()
 *                   and setresuid(), which glibc applies to every thread;
 *                   leaving uid 0 empties each thread's capabilities.
 *                   Then this thread keeps what its run time needs
 *                   (nothing today), and a thread's failed drop is fatal.
 *   priv_confine()  the seccomp filter (seccomp.c) on every thread, the
 *                   last step of the start (after the metrics thread's):
 *                   before it, a start that fails can still take back the
 *                   tun it kept (tun_unkeep(), as the tun's owner).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon.h"
#include "journal.h"
#include "util.h"

#define CAP(c)		(1ull << (c))

/*
 * What the set-up needs (ucm_dp__create() and __start(), found by
 * dropping one at a time: tests/net/test-privileges.sh runs each mode):
 *   CAP_BPF, CAP_NET_ADMIN  load the program and its maps, attach it (a
 *                           bpf_link), create the tun, its MTU, link up,
 *                           each worker's TUNSETIFF, a tap's MAC
 *   CAP_NET_RAW             the AF_XDP sockets
 *   CAP_IPC_LOCK            pin the UMEM (more than RLIMIT_MEMLOCK)
 *   CAP_SYS_ADMIN           look up the links and programs already on
 *                           IFACE by id (BPF_LINK_GET_FD_BY_ID,
 *                           BPF_PROG_GET_FD_BY_ID): a second instance
 *                           refused, a stale program replaced
 */
#define CAPS_SETUP	(CAP(CAP_BPF) | CAP(CAP_NET_ADMIN) | CAP(CAP_NET_RAW) | \
			 CAP(CAP_IPC_LOCK) | CAP(CAP_SYS_ADMIN))
/* --user: every thread must be able to change its ids (glibc aborts the
 * process when one thread fails where another succeeded). */
#define CAPS_SWITCH	(CAP(CAP_SETUID) | CAP(CAP_SETGID))
/* --user, the main thread's set-up alone: the status socket given to that
 * user (ctl__open(), before priv_drop() empties the sets). Used when
 * permitted, never asked for: without it the socket is the user's group's
 * (its fsgid, by CAPS_SWITCH), which may ask all the same. */
#define CAPS_USER_SETUP	CAP(CAP_CHOWN)
/*
 * What the main thread's run time needs, and the bounding set keeps:
 * nothing. The statistics are getters, but for the XDP program's pass
 * counters, a map lookup by its fd; the stop takes the sockets out of the
 * XSK map through the map's fd (neither needs a capability since Linux
 * 5.19, which left kernel.unprivileged_bpf_disabled to map and program
 * creation; before, none only where that sysctl is 0: the counters are
 * then left out, said), detaches and closes the XDP link (the close
 * alone where bpf(2) is closed to it: it detaches unless another process
 * holds the link), the tun and the sockets.
 */
#define CAPS_RUN	0ull
/* A next-hop resolver's run time: RTM_NEWNEIGH, to have the kernel
 * resolve a next hop it does not know yet. */
#define CAPS_RESOLVER	CAP(CAP_NET_ADMIN)

/* ---- capabilities ------------------------------------------------------ */

static int caps_get(uint64_t *prm, uint64_t *eff)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct c[2] = {};

	if (syscall(SYS_capget, &h, c))
		return -errno;
	*prm = c[0].permitted | (uint64_t)c[1].permitted << 32;
	*eff = c[0].effective | (uint64_t)c[1].effective << 32;
	return 0;
}

/* This thread's permitted and effective sets; nothing inheritable. */
static int caps_set(uint64_t prm, uint64_t eff)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct c[2] = {
		{ .permitted = (uint32_t)prm, .effective = (uint32_t)eff },
		{ .permitted = (uint32_t)(prm >> 32), .effective = (uint32_t)(eff >> 32) },
	};

	return syscall(SYS_capset, &h, c) ? -errno : 0;
}

/* Drop every capability but @keep from this thread's bounding set (needs
 * CAP_SETPCAP). */
static int bounding_keep(uint64_t keep)
{
	for (int c = 0; c < 64; c++) {
		int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

		if (r < 0)		/* past the kernel's last capability */
			break;
		if (r == 1 && !(keep & CAP(c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0))
			return -errno;
	}
	return 0;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "ucpumapd: cannot drop privileges: %s: %s\n", what, strerror(-err));
	return -1;
}

/* What the daemon must be given, in the order ucpumapd(8) lists them:
 * the set-up's, CAP_SETPCAP to empty the bounding set, and --user's. */
static const struct {
	int cap;
	const char *name;
} cap_names[] = {
	{ CAP_NET_ADMIN, "CAP_NET_ADMIN" }, { CAP_NET_RAW, "CAP_NET_RAW" },
	{ CAP_IPC_LOCK, "CAP_IPC_LOCK" }, { CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
	{ CAP_BPF, "CAP_BPF" }, { CAP_SETPCAP, "CAP_SETPCAP" },
	{ CAP_SETUID, "CAP_SETUID" }, { CAP_SETGID, "CAP_SETGID" },
};

/* The names of @set's capabilities in @buf, ", " between them. */
static const char *cap_list(uint64_t set, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]) && n < len; i++)
		if (set & CAP(cap_names[i].cap))
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
				      cap_names[i].name);
	return buf;
}

/*
 * --user from root only: the kernel empties a thread's capabilities when
 * its user IDs leave 0; from one user to another it leaves them, and each
 * datapath thread would keep CAP_SETUID and CAP_SETGID for the run.
 * Before the capabilities are named: those would not make it right.
 */
static int user_from_root(const struct daemon *d)
{
	uid_t r, e, s;

	if (!d->c.user || (!getresuid(&r, &e, &s) && (!r || !e || !s)))
		return 0;
	fprintf(stderr, "ucpumapd: --user %s: started as user %u, not root: the switch would leave each thread CAP_SETUID and CAP_SETGID; start it as root, or as the user itself without --user\n",
		d->c.user, (unsigned)geteuid());
	return EXIT_CONFIG;
}

int priv_check(const struct daemon *d)
{
	uint64_t want = CAPS_SETUP | CAP(CAP_SETPCAP) | (d->c.user ? CAPS_SWITCH : 0);
	uint64_t prm, eff;
	char all[160], miss[160];
	int st = user_from_root(d);

	if (st)
		return st;
	if (caps_get(&prm, &eff))
		return 0;	/* the set-up's refusals will say */
	/* Before Linux 5.8 there is no CAP_BPF: CAP_SYS_ADMIN covers bpf(2). */
	if (prctl(PR_CAPBSET_READ, CAP_BPF, 0, 0, 0) < 0)
		want &= ~CAP(CAP_BPF);
	if (!(want & ~prm))
		return 0;
	fprintf(stderr, "ucpumapd: needs %s; missing %s: run it as root, or give it these (ambient: setpriv(1), systemd's AmbientCapabilities=)\n",
		cap_list(want, all, sizeof(all)), cap_list(want & ~prm, miss, sizeof(miss)));
	return EXIT_CONFIG;
}

/* ---- --user and the tun's owner ------------------------------------------ */

/* The first port any process may bind in this network namespace (IPv6's
 * too): its sysctl, or -1 where /proc/sys is hidden (the unit's
 * ProcSubset=pid) or unreadable. */
static int unprivileged_port_start(void)
{
	long start;

	return file_num("/proc/sys/net/ipv4/ip_unprivileged_port_start", &start) ? -1 : start;
}

/* The --metrics-listen port, 0 for none (or the kernel's choice). */
static uint16_t metrics_port(const struct daemon *d)
{
	const struct sockaddr_storage *ss = &d->c.metrics.ss;

	if (!d->c.metrics.len)
		return 0;
	return ntohs(ss->ss_family == AF_INET6 ?
		     ((const struct sockaddr_in6 *)ss)->sin6_port :
		     ((const struct sockaddr_in *)ss)->sin_port);
}

/* Its port may need CAP_NET_BIND_SERVICE: below @start, the sysctl's
 * first unprivileged port, or below 1024 where that cannot be read (-1). */
static bool metrics_port_low(const struct daemon *d, int start)
{
	uint16_t port = metrics_port(d);

	return port && port < (start < 0 ? 1024 : start);
}

/* Each of these: 0, or the exit status after a message. */
static int lookup_user(struct daemon *d)
{
	struct priv *p = &d->priv;
	struct passwd *pw;
	bool none;

	p->uid = geteuid();
	p->gid = getegid();
	if (!d->c.user)
		return 0;
	errno = 0;
	pw = getpwnam(d->c.user);
	if (!pw) {
		/* getpwnam(3): these say "not found"; another, that the
		 * lookup failed (a directory service away), which may pass. */
		none = !errno || errno == ENOENT || errno == ESRCH || errno == EBADF ||
		       errno == EPERM;
		fprintf(stderr, "ucpumapd: --user %s: %s\n", d->c.user, none ?
			"no such user (getent passwd shows the users)" : strerror(errno));
		return none ? EXIT_CONFIG : EXIT_SETUP;
	}
	if (pw->pw_uid == 0) {
		fprintf(stderr, "ucpumapd: --user %s is root (uid 0): give a user without privileges, or no --user\n",
			d->c.user);
		return EXIT_CONFIG;
	}
	/* Root's group reads what root's does (/etc/sudoers, root's
	 * home): not a user without privileges either. */
	if (pw->pw_gid == 0) {
		fprintf(stderr, "ucpumapd: --user %s has root's group (gid 0) as its own: give a user whose group is not root's, or no --user\n",
			d->c.user);
		return EXIT_CONFIG;
	}
	p->uid = pw->pw_uid;
	p->gid = pw->pw_gid;
	return 0;
}

/* /sys/class/net/@dev/@attr as a number: 0, -ENOENT (no such device or
 * attribute) or another -errno. */
static int sys_net_num(const char *dev, const char *attr, long *v)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", dev, attr);
	return file_num(path, v);
}

/* An existing tun or tap may be attached to when nobody else owns it: its
 * owner (and group) unset (-1), or the user the daemon runs as. */
static int check_tun_owner(struct daemon *d)
{
	const char *dev = d->c.tun;
	long flags, owner = -1, group = -1;

	if (strchr(dev, '%') || sys_net_num(dev, "tun_flags", &flags))
		return 0;	/* to be created, or not a tun: the library says */
	if (sys_net_num(dev, "owner", &owner) || sys_net_num(dev, "group", &group)) {
		fprintf(stderr, "ucpumapd: cannot read the owner of %s in /sys/class/net\n", dev);
		return EXIT_SETUP;
	}
	/* A tun a start kept gets an owner from this one (tun_keep()). */
	if (owner == -1 && group == -1 && !tun_kept_mark(d)) {
		out_warn("ucpumapd: %s has no owner: any user may open queues of it, read its traffic and write into it; delete it (ip link del %s) and let ucpumapd create it, or give it one (ip tuntap add dev %s mode %s multi_queue vnet_hdr user USER)\n",
			 dev, dev, dev, d->c.tap ? "tap" : "tun");
		return 0;
	}
	/* A tun a start kept is ours: the start gives it to the user it
	 * runs as, said where that changes it (root's to --user's too). */
	if (tun_kept_mark(d)) {
		if (owner != -1 && owner != (long)d->priv.uid)
			out_warn("ucpumapd: %s, kept by an earlier start as user %ld, goes to uid %u\n",
				 dev, owner, (unsigned int)d->priv.uid);
		return 0;
	}
	/* Root's: root opens queues of any tun all the same. */
	if ((owner == -1 || owner == 0 || owner == (long)d->priv.uid) &&
	    (group == -1 || group == 0 || group == (long)d->priv.gid))
		return 0;
	if (d->c.tun_any_owner) {
		out_warn("ucpumapd: %s belongs to user %ld, group %ld (--tun-any-owner): they can open queues of it too\n",
			dev, owner, group);
		return 0;
	}
	if (owner != -1 && owner != (long)d->priv.uid)
		fprintf(stderr, "ucpumapd: %s belongs to user %ld, not to %s (uid %u): that user can open queues of it and read its traffic; --tun-any-owner attaches all the same\n",
			dev, owner, d->c.user ? d->c.user : "root", (unsigned)d->priv.uid);
	else
		fprintf(stderr, "ucpumapd: %s belongs to group %ld, not to %s's (gid %u): that group can open queues of it and read its traffic; --tun-any-owner attaches all the same\n",
			dev, group, d->c.user ? d->c.user : "root", (unsigned)d->priv.gid);
	return EXIT_CONFIG;
}

/* ---- the files it writes ------------------------------------------------ */

/* @path for writing, never through a symbolic link, never waited on (a
 * FIFO without a reader fails, ENXIO; one whose reader lags loses lines,
 * it does not hold the control thread): a FILE, or NULL with errno. */
static FILE *out_open(const char *path, int how)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | how,
		      0644);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, how & O_APPEND ? "a" : "w");
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}

static int open_files(struct daemon *d)
{
	const char *path = d->c.stats_json;
	struct stat st;
	int err;

	if (!path)
		return 0;
	/* Not truncated yet: an instance refused for a served interface
	 * must not empty the running one's file (main() truncates it once
	 * the datapath is ours). */
	d->json = out_open(path, O_APPEND);	/* a copytruncate leaves no hole */
	/* The unit's /tmp and /var/tmp are its own (PrivateTmp=): what is
	 * written there is nobody else's to read, and goes at the stop. */
	if (d->json && getenv("INVOCATION_ID") &&
	    (!strncmp(path, "/tmp/", 5) || !strncmp(path, "/var/tmp/", 9)))
		out_warn("ucpumapd: --stats-json %s: under systemd, a unit's /tmp and /var/tmp may be its own (the unit's PrivateTmp=): the file is then no one else's and goes at the stop; put it under /var/lib/ucpumap\n",
			 path);
	if (d->json)
		return 0;
	err = errno;
	if (err == ELOOP && !lstat(path, &st) && S_ISLNK(st.st_mode))
		fprintf(stderr, "ucpumapd: --stats-json %s is a symbolic link: refused (it could point at any file root may write); give the file's own path\n",
			path);
	else if (err == ENXIO)
		fprintf(stderr, "ucpumapd: --stats-json %s is a FIFO with no reader: start its reader first\n",
			path);
	else
		fprintf(stderr, "ucpumapd: cannot write %s: %s%s\n", path, strerror(err),
			err == EROFS ? " (under the unit only /var/lib/ucpumap is writable: put the file there, or add ReadWritePaths= to the unit)" : "");
	/* The path's, until somebody changes it; ENOSPC, EIO, a FIFO's
	 * reader may pass. */
	return err == ELOOP || err == EACCES || err == EROFS || err == ENOENT ||
	       err == ENOTDIR || err == EISDIR ? EXIT_CONFIG : EXIT_SETUP;
}

/* The pending JSON line given up, counted: left out whole, or cut short
 * (a part of it went out). */
static void json_line_drop(struct daemon *d)
{
	/* A leading newline (the end of a line cut before) is not its own. */
	bool cut = d->json_done > (uint32_t)(d->json_line[0] == '\n');

	*(cut ? &d->json_cut : &d->json_lost) += 1;
	free(d->json_line);
	d->json_line = NULL;
}

bool json_line_flush(struct daemon *d)
{
	while (d->json_line && d->json_done < d->json_len) {
		ssize_t w = write(fileno(d->json), d->json_line + d->json_done,
				  d->json_len - d->json_done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return false;
		if (w <= 0) {	/* the reader gone, a full disk: given up */
			double now = now_sec();

			if (!d->json_err_at || now - d->json_err_at >= JSON_SAY_SEC) {
				out_warn("ucpumapd: --stats-json %s: a write failed: %s; its lines are left out while writes fail (said at most once a minute)\n",
					 d->c.stats_json, w < 0 ? strerror(errno) : "no byte taken");
				d->json_err_at = now;
			}
			json_line_drop(d);
			return true;
		}
		d->json_done += w;
		/* Not where a cut came right after the newline that ended the
		 * last cut line. */
		d->json_mid_line = d->json_done < d->json_len &&
				   d->json_line[d->json_done - 1] != '\n';
	}
	free(d->json_line);
	d->json_line = NULL;
	return true;
}

/* How long the pending line may hold the control thread when it must go
 * out (the final one, a reopen, the stop): 100 looks of 10 ms. */
#define JSON_DRAIN_LOOKS	100

bool json_line_drain(struct daemon *d)
{
	for (int i = 0; i < JSON_DRAIN_LOOKS && !json_line_flush(d); i++)
		poll(&(struct pollfd){ .fd = fileno(d->json), .events = POLLOUT }, 1, 10);
	return !d->json_line;
}

bool json_is_file(struct daemon *d)
{
	struct stat st;

	return !fstat(fileno(d->json), &st) && S_ISREG(st.st_mode);
}

void json_close(struct daemon *d)
{
	if (!json_line_drain(d))
		json_line_drop(d);
	if (d->json_lost || d->json_cut)
		out_warn("ucpumapd: --stats-json %s: %llu lines left out whole, %llu cut short\n",
			 d->c.stats_json, (unsigned long long)d->json_lost,
			 (unsigned long long)d->json_cut);
	fclose(d->json);
}

static bool same_file(FILE *a, FILE *b)
{
	struct stat sa, sb;

	return !fstat(fileno(a), &sa) && !fstat(fileno(b), &sb) &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* SIGHUP: the files again by their names (a log rotation renamed them),
 * appended to. A file that cannot be opened now, for one because --user
 * may not write in its directory, is said at each SIGHUP, and the one open
 * goes on. */
void priv_reopen(struct daemon *d)
{
	FILE *f;

	if (!d->c.stats_json || !d->json)
		return;
	f = out_open(d->c.stats_json, O_APPEND);
	if (!f) {	/* each SIGHUP's answer: said every time */
		out_warn("ucpumapd: SIGHUP: cannot reopen %s%s%s: %s; the statistics go on into the file already open%s\n",
			 d->c.stats_json, d->c.user ? " as user " : "",
			 d->c.user ? d->c.user : "", strerror(errno),
			 d->c.user ? " (rotate it with copytruncate instead)" : "");
		return;
	}
	/* A line partly written ends where it began: the same file (a FIFO
	 * opened again is the same pipe) takes the rest through the new
	 * descriptor; another gets it on the old one first (a second at
	 * most). One not begun goes to the new file. */
	if (!same_file(d->json, f)) {
		if (d->json_line && d->json_done && !json_line_drain(d))
			json_line_drop(d);
		/* a pending line's first byte ends the old file's cut line */
		if (d->json_line && d->json_mid_line)
			d->json_done = 1;
		d->json_mid_line = false;
	}
	fclose(d->json);
	d->json = f;
}

/* ---- the two steps ------------------------------------------------------ */

int priv_effective(void)
{
	uint64_t prm, eff;
	int err = caps_get(&prm, &eff);

	return err || eff == prm ? err : caps_set(prm, prm);
}

/* Return: 0, or the exit status after a message. */
int priv_prepare(struct daemon *d)
{
	uint64_t prm, eff, setup;
	int err, status;

	err = priv_effective();
	if (err)
		return -fail("capset", err);
	err = caps_get(&prm, &eff);
	if (err)
		return -fail("capget", err);
	status = priv_check_user(d);
	if (!status)
		status = priv_check_metrics(d);
	/* The lock first: a tun another instance serves is refused as
	 * that, whoever that instance made its owner. */
	if (!status)
		status = tun_lock(d);
	if (!status)
		status = check_tun_owner(d);
	if (!status)
		status = open_files(d);
	if (status)
		return status;
	/* What the set-up needs, of what we have: a capability missing is
	 * the set-up's to report, with its fix. */
	setup = (CAPS_SETUP | (d->c.user ? CAPS_SWITCH | CAPS_USER_SETUP : 0) |
		 (metrics_port_low(d, unprivileged_port_start()) ?
		  CAP(CAP_NET_BIND_SERVICE) : 0)) & prm;
	d->priv.setup = setup;
	d->priv.run = CAPS_RUN & prm;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -fail("PR_SET_NO_NEW_PRIVS", -errno);
	err = bounding_keep(d->priv.run);
	if (err)
		return -fail("PR_CAPBSET_DROP", err);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -fail("PR_CAP_AMBIENT_CLEAR_ALL", -errno);
	err = caps_set(setup, setup);
	return err ? -fail("capset", err) : 0;
}

/* --check's (check.c) and the start's: the user, the metrics' port and
 * the tun's owner alone, changing nothing. Each: 0, or the exit status
 * after a message. */
int priv_check_user(struct daemon *d)
{
	if (d->c.user && d->c.two_way && !d->c.tap && !d->c.peer_mac_set) {
		/* Seen: 0 of 5 pings to a peer the DUT had not met. */
		fprintf(stderr, "ucpumapd: --user with --two-way over a tun: asking the kernel to resolve a next hop (RTM_NEWNEIGH) needs CAP_NET_ADMIN in the resolver thread, which the change of user takes from every thread; give --peer-mac, or run without --user\n");
		return EXIT_USAGE;
	}
	return lookup_user(d);
}

int priv_check_metrics(const struct daemon *d)
{
	int start = unprivileged_port_start();
	uint64_t prm, eff;

	/* The sysctl unread, the bind decides (EACCES: exit 78, said). */
	if (start < 0 || !metrics_port_low(d, start) || caps_get(&prm, &eff) ||
	    (prm & CAP(CAP_NET_BIND_SERVICE)))
		return 0;
	fprintf(stderr, "ucpumapd: --metrics-listen %s: a port below %d (net.ipv4.ip_unprivileged_port_start) needs CAP_NET_BIND_SERVICE, which this process does not have (the unit's CapabilityBoundingSet leaves it out): take a port from %d\n",
		d->c.metrics.text, start, start);
	return EXIT_CONFIG;
}

int priv_check_tun(struct daemon *d)
{
	return check_tun_owner(d);
}

/* On each thread the datapath starts (ucm_dp_thread_fn): down to what its
 * run time needs. A failure is kept for priv_drop() (the first errno;
 * release pairs with its acquire). */
void priv_thread(void *ctx, uint32_t kind, uint32_t idx)
{
	struct daemon *d = ctx;
	uint64_t keep = kind == UCM_DP_THREAD_RESOLVER ? CAPS_RESOLVER : 0;
	int err;

	(void)idx;
	/* --user: the change of ids reaches every thread, and glibc aborts
	 * the process when it fails on one; leaving uid 0 then empties
	 * them all. */
	if (d->c.user)
		keep |= CAPS_SWITCH;
	err = caps_set(keep & d->priv.setup, keep & d->priv.setup);
	if (err) {
		int zero = 0;

		__atomic_compare_exchange_n(&d->priv.thread_err, &zero, err, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}

/* --user: the ids of every thread (glibc's set*id apply to them all). This
 * thread keeps its permitted set across it (PR_SET_KEEPCAPS is its own);
 * the others lose theirs. */
static int switch_user(struct daemon *d)
{
	const struct priv *p = &d->priv;
	int err = 0;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return fail("PR_SET_KEEPCAPS", -errno);
	if (setgroups(0, NULL))
		err = fail("setgroups", -errno);
	else if (setresgid(p->gid, p->gid, p->gid))
		err = fail("setresgid", -errno);
	else if (setresuid(p->uid, p->uid, p->uid))
		err = fail("setresuid", -errno);
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) && !err)
		err = fail("PR_SET_KEEPCAPS", -errno);
	return err;
}

int priv_drop(struct daemon *d)
{
	uint64_t prm, eff;
	int err;

	/* Each datapath thread dropped its own before create or start
	 * returned (pairs with priv_thread()'s release). */
	err = __atomic_load_n(&d->priv.thread_err, __ATOMIC_ACQUIRE);
	if (err)
		return fail("capset on a datapath thread", err);
	if (d->c.user && switch_user(d))
		return -1;
	err = caps_set(d->priv.run, 0);
	if (err)
		return fail("capset", err);
	/* Read back: never run with more than man/ucpumapd.8 says. */
	err = caps_get(&prm, &eff);
	if (err)
		return fail("capget", err);
	if (prm != d->priv.run || eff) {
		fprintf(stderr, "ucpumapd: cannot drop privileges: still permitted %#llx, effective %#llx\n",
			(unsigned long long)prm, (unsigned long long)eff);
		return -1;
	}
	return 0;
}

int priv_confine(struct daemon *d)
{
	return d->c.no_seccomp ? 0 : seccomp_start(d);
}
