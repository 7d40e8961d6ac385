// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's status socket: a running instance answers on the unix socket
 * CTL_DIR/IFACE.sock with one JSON line, the statistics' JSON object
 * (stats.c) with its state in front; ucpumapd --status IFACE prints it.
 *
 *   ctl__open()    after ucm_dp__start(), before the privileges drop: the
 *                  interface is ours (a second instance was refused at
 *                  its create), so a file there is a stale one (kill -9)
 *                  and is replaced, unless an instance of another network
 *                  namespace answers on it; bound, listening, owned by the
 *                  run user, mode 0660; without it (said) the daemon runs
 *                  on, forwarding matters more
 *   ctl_serve()    the control thread, each turn of its loop (at most
 *                  CHECK_SEC apart): answers the connections waiting
 *   ctl__close()   closed, and its file removed while it is still ours
 *   ctl_status()   the query
 *
 * Concurrency: the control thread's alone (open, serve, close); the
 * datapath is read through its getters, as the statistics lines read it.
 * Nothing blocks the loop: the listener and the connections are
 * nonblocking. An answer larger than the socket's send buffer (about
 * 200 KB: many queues and workers) goes on in the next turns; a client
 * that has not read it all in CTL_WAIT_SEC loses the rest. The answer
 * ends with a newline: the query says so when it was cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "journal.h"
#include "util.h"

/* Connections answered in one turn: a flood of them costs the loop at
 * most this many answers per turn. */
#define CTL_PER_TURN	16
/* How long the query waits for its answer (the loop turns every 0.1 s),
 * and the serving side for a client to read it. */
#define CTL_WAIT_SEC	5

/* An answer that did not fit the socket at once: the rest of it. */
struct ctl_conn {
	int fd;				/* -1: the slot is free */
	char *buf;
	size_t len, off;
	double t0;			/* accepted at */
};

struct ctl {
	int fd;
	struct ctl_conn conn[CTL_PER_TURN];	/* answers going on */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;			/* the file we bound: removed only if */
	ino_t ino;			/* it is still that one */
	bool bound;
};

static int ctl_addr(const char *dev, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* The kernel's rule for a device's name (dev_valid_name()). */
	if (!*dev || strlen(dev) >= IF_NAMESIZE || !strcmp(dev, ".") || !strcmp(dev, "..") ||
	    strpbrk(dev, "/: \t\n\v\f\r") ||
	    snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s.sock", CTL_DIR, dev) >=
	    (int)sizeof(sa->sun_path))
		return -EINVAL;
	return 0;
}

/* Whether an instance answers on @sa: a live one (in another network
 * namespace, whose interface has the same name) keeps its socket. */
static bool ctl_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { .tv_sec = CTL_WAIT_SEC };
	bool live;

	if (fd < 0)
		return false;
	/* A stopped instance's full backlog holds a connect for ever:
	 * bounded, it counts as live (its socket stays its own). */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	live = !connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) || errno == EAGAIN;
	close(fd);
	return live;
}

static int ctl_bind(struct ctl *c, struct daemon *d, const struct sockaddr_un *sa)
{
	int old_gid = 0, err;
	struct stat st;
	bool made;

	/* 0755 whatever the umask: the users --status serves look in it. */
	made = !mkdir(CTL_DIR, 0755);
	if (!made && errno != EEXIST)
		return -errno;
	if (made && chmod(CTL_DIR, 0755))
		return -errno;
	/* Only root may put a file there: else another user could have put
	 * the path the socket replaces, or answer in its place. */
	if (lstat(CTL_DIR, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid || (st.st_mode & 022))
		return -ENOTDIR;	/* not one only root may write to */
	if (ctl_live(sa))
		return -EADDRINUSE;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	/* A socket file left by a killed instance: this one has the interface. */
	if (unlink(sa->sun_path) && errno != ENOENT)
		return -errno;
	/* The file is made with the run user's group (its fsgid: the set-up
	 * keeps CAP_SETGID for --user), then given to the user where the
	 * set-up holds CAP_CHOWN (priv.c, CAPS_USER_SETUP); the group may
	 * ask either way. */
	if (d->priv.gid != getegid())
		old_gid = setfsgid(d->priv.gid);
	err = bind(c->fd, (const struct sockaddr *)sa, sizeof(*sa)) ? -errno : 0;
	if (d->priv.gid != getegid())
		setfsgid(old_gid);
	if (err)
		return err;
	c->bound = true;
	/* The mode first: once the file is the user's, a chmod() needs
	 * CAP_FOWNER, which the set-up does not hold. */
	if (chmod(sa->sun_path, 0660) || listen(c->fd, CTL_PER_TURN))
		return -errno;
	if (chown(sa->sun_path, d->priv.uid, d->priv.gid) && errno != EPERM)
		return -errno;
	if (stat(sa->sun_path, &st))
		return -errno;
	if (st.st_gid != d->priv.gid)
		return -EPERM;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	return 0;
}

void ctl__open(struct daemon *d)
{
	struct sockaddr_un sa;
	struct ctl *c;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c) {
		out_warn("ucpumapd: the status socket: out of memory; running without it\n");
		return;
	}
	c->fd = -1;
	for (int i = 0; i < CTL_PER_TURN; i++)
		c->conn[i].fd = -1;
	err = ctl_addr(d->c.dev, &sa);
	if (!err) {
		snprintf(c->path, sizeof(c->path), "%s", sa.sun_path);
		err = ctl_bind(c, d, &sa);
	}
	if (err) {
		/* Forwarding matters more: said, and run on without it. */
		out_warn("ucpumapd: cannot serve --status on %s: %s; running without it%s\n",
			c->path[0] ? c->path : CTL_DIR,
			err == -EADDRINUSE ? "another instance answers there (another network namespace's)" :
			err == -ENOTDIR ? CTL_DIR " is not a directory only root may write to" :
			err == -EACCES && geteuid() ? "not root: only root makes it, in root's " CTL_DIR :
			strerror(-err),
			err == -EROFS ? " (under systemd, the unit's RuntimeDirectory=ucpumap makes it)" :
			err == -EACCES && geteuid() ? " (start as root with --user, or under the unit)" : "");
		if (c->fd >= 0)
			close(c->fd);
		if (c->bound)
			unlink(c->path);
		free(c);
		return;
	}
	d->ctl = c;
}

/* The answer: the instance, its links, the statistics' counters. */
static char *ctl_answer(struct daemon *d, size_t *len)
{
	uint32_t l = __atomic_load_n(&d->links, __ATOMIC_RELAXED);
	const char *tun = ucm_dp__tun_name(d->dp);
	bool iface_up = (l & LINKS_SEEN) && (l & UCM_DP_LINK_IFACE_UP);
	bool tun_up = (l & LINKS_SEEN) && (!tun || (l & UCM_DP_LINK_TUN_UP));
	struct ucm_dp_stats t;
	struct drops n;
	struct json j;
	char *buf = NULL;
	FILE *f;

	f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	ucm_dp__stats(d->dp, &t, sizeof(t));
	count_drops(d, &t, &n);
	json_begin(&j, f);
	json_str(&j, "version", UCPUMAPD_VERSION);
	json_u64(&j, "pid", getpid());
	json_str(&j, "state", t.state & UCM_DP_S_RUNNING ? "running" : "stopping");
	json_u64(&j, "up", (t.state & UCM_DP_S_RUNNING) && iface_up && tun_up);
	json_str(&j, "tun", tun ?: "");
	json_obj(&j, "link_up");
	json_u64(&j, "iface", iface_up);
	json_u64(&j, "tun", tun_up);
	json_obj_end(&j);
	json_sec(&j, "uptime", now_sec() - d->start_t);
	stats_json(&j, d, &t, &n, rx_cpu_ns(d));
	json_end(&j);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void ctl_conn_end(struct ctl_conn *k)
{
	close(k->fd);
	free(k->buf);
	k->fd = -1;
	k->buf = NULL;
}

/* Sends what the socket takes: true while some of the answer is left. */
static bool ctl_conn_send(struct ctl_conn *k)
{
	ssize_t r;

	while (k->off < k->len) {
		r = send(k->fd, k->buf + k->off, k->len - k->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0)
			return errno == EAGAIN || errno == EINTR;
		k->off += r;
	}
	return false;
}

/* The answers going on: the rest of each, or its end. */
static void ctl_serve_rest(struct ctl *c, double now)
{
	for (int i = 0; i < CTL_PER_TURN; i++) {
		struct ctl_conn *k = &c->conn[i];

		if (k->fd >= 0 && (!ctl_conn_send(k) || now - k->t0 > CTL_WAIT_SEC))
			ctl_conn_end(k);
	}
}

static struct ctl_conn *ctl_conn_free(struct ctl *c)
{
	for (int i = 0; i < CTL_PER_TURN; i++)
		if (c->conn[i].fd < 0)
			return &c->conn[i];
	return NULL;
}

void ctl_serve(struct daemon *d)
{
	struct ctl *c = d->ctl;
	struct ctl_conn one, *k;
	double now = now_sec();
	char *buf = NULL;
	size_t len = 0;
	int i, fd;

	if (!c)
		return;
	ctl_serve_rest(c, now);
	for (i = 0; i < CTL_PER_TURN; i++) {
		/* Each slot busy: the next turn (the backlog holds them). */
		k = ctl_conn_free(c);
		if (!k)
			break;
		fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			break;	/* EAGAIN: none waiting; else the next turn */
		if (!buf)
			buf = ctl_answer(d, &len);
		one = (struct ctl_conn){ .fd = fd, .buf = buf, .len = len, .t0 = now };
		if (!buf || !ctl_conn_send(&one)) {
			close(fd);
			continue;
		}
		/* The rest in the next turns, from a copy of its own. */
		k->buf = malloc(len - one.off);
		if (!k->buf) {
			close(fd);	/* cut: the query says so */
			continue;
		}
		memcpy(k->buf, buf + one.off, len - one.off);
		k->len = len - one.off;
		k->off = 0;
		k->t0 = now;
		k->fd = fd;
	}
	free(buf);
}

void ctl__close(struct ctl *c)
{
	struct stat st;

	if (!c)
		return;
	for (int i = 0; i < CTL_PER_TURN; i++)
		if (c->conn[i].fd >= 0)
			ctl_conn_end(&c->conn[i]);
	close(c->fd);
	/* Another's by now (ours replaced): leave it. Without the right to
	 * the directory (--user): left, and the query says no instance. */
	if (!stat(c->path, &st) && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
	free(c);
}

/* The sockets' directory is the host's, not the network namespace's: an
 * instance serving an interface of the same name in another namespace
 * may be the one that answers. Its pid (SO_PEERCRED) says where it runs,
 * where this process may look (root, or the same user); true only when
 * it is seen to be elsewhere. */
static bool ctl_peer_elsewhere(int fd, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct stat mine, theirs;
	char path[64];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || cr.pid <= 0)
		return false;
	*pid = cr.pid;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)cr.pid);
	if (stat("/proc/self/ns/net", &mine) || stat(path, &theirs))
		return false;
	return mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev;
}

/* The answer to stdout: 0, -errno of the socket (-EPIPE: cut before its
 * newline, a timeout too once some came), 1 when stdout refused it
 * (errno says why), 2 when its reader took nothing for a while (under
 * journald: journal.c leaves such lines out). */
static int ctl_read(int fd, size_t *got_out)
{
	char buf[65536];
	size_t got = 0;
	char last = 0;
	ssize_t r;

	while ((r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return got && (errno == EAGAIN || errno == EWOULDBLOCK) ? -EPIPE : -errno;
		}
		if (fwrite(buf, 1, r, stdout) != (size_t)r || fflush(stdout))
			return 1;
		if (out_lost())
			return 2;
		got += r;
		last = buf[r - 1];
		*got_out = got;
	}
	if (!got)
		return -ENODATA;
	return last == '\n' ? 0 : -EPIPE;
}

int ctl_status(const char *dev)
{
	struct timeval tv = { .tv_sec = CTL_WAIT_SEC };
	char prim[IF_NAMESIZE];
	struct sockaddr_un sa;
	size_t got = 0;
	pid_t peer = 0;
	int fd, err;

	dev = if_primary_name(dev, prim);	/* the socket has the daemon's name */

	if (ctl_addr(dev, &sa)) {
		fprintf(stderr, "ucpumapd: --status '%s': not an interface name\n", dev);
		return EXIT_USAGE;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "ucpumapd: --status: socket: %s\n", strerror(errno));
		return EXIT_SETUP;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* A connect waits while the instance's backlog is full (stopped, or
	 * its control thread held): bounded as the answer is. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = errno;
		close(fd);
		if (err == EACCES || err == EPERM) {
			fprintf(stderr, "ucpumapd: %s: permission denied: the instance's user, its group, or root may ask\n",
				sa.sun_path);
			return EXIT_SETUP;
		}
		if (err == EAGAIN) {
			fprintf(stderr, "ucpumapd: %s: the instance does not answer: its backlog stayed full for %d s (stopped, or stopping)\n",
				sa.sun_path, CTL_WAIT_SEC);
			return EXIT_SETUP;
		}
		/* ENOENT: none; ECONNREFUSED: a killed one's file. */
		fprintf(stderr, "ucpumapd: no instance serves %s (%s: %s)\n", dev, sa.sun_path,
			strerror(err));
		return EXIT_SETUP;
	}
	if (ctl_peer_elsewhere(fd, &peer)) {
		close(fd);
		fprintf(stderr, "ucpumapd: the instance answering on %s (pid %d) serves a %s of another network namespace: ask there (ip netns exec NAME ucpumapd --status %s)\n",
			sa.sun_path, (int)peer, dev, dev);
		return EXIT_SETUP;
	}
	err = ctl_read(fd, &got);
	close(fd);
	if (err == 1 || err == 2) {
		fprintf(stderr, "ucpumapd: --status %s: cannot write the answer to standard output: %s\n",
			dev, err == 1 ? strerror(errno) : "its reader took nothing for a while");
		return EXIT_SETUP;
	}
	if (err == -EPIPE) {
		fprintf(stderr, "\nucpumapd: %s: the answer was cut after %zu bytes (the instance stopped, or found this query slow to read for %d s)\n",
			sa.sun_path, got, CTL_WAIT_SEC);
		return EXIT_SETUP;
	}
	if (err) {
		fprintf(stderr, "ucpumapd: %s: no answer from the instance on %s: %s\n", sa.sun_path,
			dev, err == -ENODATA ? "it closed the connection (stopping?)" : strerror(-err));
		return EXIT_SETUP;
	}
	return 0;
}
