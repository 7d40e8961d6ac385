// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One ucpumapd per tun. A tun is multi-queue: a second instance given the
 * same --tun would attach as more queues of it, and the kernel would then
 * spread what it routes into the tun over both instances' queues. The
 * interface has the kernel's guarantee (one XDP link); the tun has none,
 * so the daemon takes a lock before the set-up touches anything:
 *
 *   /run/ucpumap/tun-NAME@NETNS.lock, a POSIX record lock (fcntl F_SETLK)
 *
 * A lock, not a scan of /proc/PID/fdinfo for the tun's "iff:" line: two
 * instances starting at once cannot both pass it, and F_GETLK names the
 * holder's pid without reading its /proc entry, which an instance that
 * changed user (--user: not dumpable), a unit's ProtectProc= or another
 * pid namespace hide. POSIX, not an OFD lock: only POSIX gives the
 * holder's pid. The kernel drops it with the process, SIGKILL included,
 * or when the process closes any fd of the file: this file opens it once
 * and keeps it to the exit. NETNS is the network namespace's inode: a tun
 * of the same name in another namespace is another device. The exit
 * removes the file, holding the lock, unless it marks a kept tun (below):
 * whoever opened it meanwhile finds it is not the path's file any more,
 * and opens the path again.
 *
 * What it does not see: a tun's queue held by a program other than
 * ucpumapd (ucpumapd(8), ONE INSTANCE PER TUN).
 *
 * And --keep-tun: the tun made persistent once the set-up has it, so that
 * it outlives the daemon with the operator's addresses, routes and
 * sysctls, and the next start attaches to it (ucpumapd(8), THE TUN KEPT).
 * A tun a daemon created and kept has "kept" as the lock file's second
 * line, carried over by each start that finds the tun there: the
 * package's removal deletes those tuns, and no other (an operator's,
 * or one a refused start named).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <linux/if_tun.h>

#include "daemon.h"
#include "journal.h"

/* The unit's RuntimeDirectory= (kept between instances). */
#define RUN_DIR		"/run/ucpumap"
/* The lock file's second line: a tun this daemon created and kept, by its
 * index and its network namespace's cookie ("kept IFINDEX COOKIE"): a tun
 * an operator makes later under the name is another device, with another
 * index, and not ours to delete; nor is one of a namespace made later
 * whose inode (the file's name) and indexes came round again. The cookie
 * is never reused; "kept IFINDEX" alone is an earlier version's, or a
 * kernel's without cookies (before Linux 5.14). */
#define KEPT_FMT	"kept %u %llu\n"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71
#endif

/* This network namespace's cookie, or 0 where the kernel has none. */
static unsigned long long netns_cookie(void)
{
	unsigned long long c = 0;
	socklen_t len = sizeof(c);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s >= 0 && getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len))
		c = 0;
	if (s >= 0)
		close(s);
	return c;
}

/* The index the lock file's @text marks kept in this namespace, or 0. */
static unsigned int kept_index(const char *text)
{
	const char *m = strstr(text, "\nkept ");
	unsigned long long cookie, ours;
	unsigned int idx;
	int n;

	n = m ? sscanf(m + 6, "%u %llu", &idx, &cookie) : 0;
	if (n < 1)
		return 0;
	ours = netns_cookie();
	return n == 2 && ours && cookie != ours ? 0 : idx;
}

static void holder_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(comm, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/* The lock is taken: say who holds it. EXIT_CONFIG. */
static int refuse(struct daemon *d, int fd)
{
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char comm[64];

	if (fcntl(fd, F_GETLK, &l) || l.l_type == F_UNLCK) {
		fprintf(stderr, "ucpumapd: tun %s was served by another ucpumapd a moment ago: start again\n",
			d->c.tun);
		return EXIT_SETUP;
	}
	if (l.l_pid <= 0) {
		fprintf(stderr, "ucpumapd: tun %s is served already, by a ucpumapd in another pid namespace; one instance per tun: stop that one first, or give this one its own --tun\n",
			d->c.tun);
		return EXIT_CONFIG;
	}
	holder_comm(l.l_pid, comm, sizeof(comm));
	fprintf(stderr, "ucpumapd: tun %s is served already, held by pid %d (%s); one instance per tun: stop that one first, or give this one its own --tun\n",
		d->c.tun, (int)l.l_pid, comm);
	return EXIT_CONFIG;
}

/* The lock file of --tun in this network namespace, into @path. */
static void lock_path(const struct daemon *d, char *path, size_t sz)
{
	struct stat ns = {};

	stat("/proc/self/ns/net", &ns);
	snprintf(path, sz, RUN_DIR "/tun-%s@%lu.lock", d->c.tun, (unsigned long)ns.st_ino);
}

bool tun_kept_mark(const struct daemon *d)
{
	char path[sizeof(RUN_DIR) + 64], old[96];
	unsigned int idx;
	int fd, n;

	if (!d->c.tun[0] || strchr(d->c.tun, '%') || !(idx = if_nametoindex(d->c.tun)))
		return false;
	/* Read as the lock was taken: a close of any other descriptor of
	 * the file would let go of the lock (fcntl's record locks). */
	if (d->priv.tun_lock_read)
		return d->priv.tun_kept;
	lock_path(d, path, sizeof(path));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = pread(fd, old, sizeof(old) - 1, 0);
	close(fd);
	old[n > 0 ? n : 0] = 0;
	return kept_index(old) == idx;
}

int tun_lock(struct daemon *d)
{
	struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[sizeof(RUN_DIR) + 64], pid[80], old[96];
	unsigned int idx;
	int fd, err, n;

	d->priv.tun_lock_fd = -1;
	if (!d->c.tun[0] || strchr(d->c.tun, '%'))
		return 0;	/* the kernel picks a name nobody holds */
	/* Whether the lock is had or not: tun_keep() leaves an operator's
	 * tun its owner. */
	d->priv.tun_existed = if_nametoindex(d->c.tun) != 0;
	lock_path(d, path, sizeof(path));
	/* 0755 whatever the umask: the users --status serves look in it. */
	if (!mkdir(RUN_DIR, 0755))
		chmod(RUN_DIR, 0755);
	else if (errno != EEXIST)
		goto unchecked;
	for (int tries = 0;; tries++) {
		struct stat held, now;

		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			goto unchecked;
		if (fcntl(fd, F_SETLK, &l)) {
			err = errno;
			if (err == EAGAIN || err == EACCES) {
				n = refuse(d, fd);
				close(fd);
				return n;
			}
			close(fd);
			errno = err;
			goto unchecked;
		}
		/* The file a stopping instance removed (tun_unlock()) while
		 * we opened it is no lock: take the path's again. */
		if (fstat(fd, &held) || stat(path, &now) || held.st_ino != now.st_ino ||
		    held.st_dev != now.st_dev) {
			close(fd);
			if (tries < 8)
				continue;
			errno = ESTALE;
			goto unchecked;
		}
		break;
	}
	/* The pid for the operator's eyes (cat): the lock is what counts.
	 * The mark of a kept tun stays while the tun does. */
	idx = if_nametoindex(d->c.tun);
	d->priv.tun_existed = idx != 0;
	n = pread(fd, old, sizeof(old) - 1, 0);
	old[n > 0 ? n : 0] = 0;
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	d->priv.tun_kept = idx && kept_index(old) == idx;
	d->priv.tun_lock_read = true;
	if (d->priv.tun_kept)
		n += snprintf(pid + n, sizeof(pid) - n, KEPT_FMT, idx, netns_cookie());
	d->priv.tun_marked = d->priv.tun_kept;
	/* Written over, then cut: a kill between the two leaves the mark. */
	if (pwrite(fd, pid, n, 0) != n || ftruncate(fd, n))
		out_warn("ucpumapd: cannot write %s: %s\n", path, strerror(errno));
	d->priv.tun_lock_fd = fd;
	snprintf(d->priv.tun_lock_path, sizeof(d->priv.tun_lock_path), "%s", path);
	return 0;

unchecked:
	out_warn("ucpumapd: cannot lock %s (%s): whether another ucpumapd serves tun %s is not checked\n",
		path, strerror(errno), d->c.tun);
	return 0;
}

void tun_unlock(struct daemon *d)
{
	if (!d->priv.tun_lock_path[0])
		return;
	/* Removed while held, so that no one takes a lock on it meanwhile.
	 * A kept tun's mark stays for the next start and the package's
	 * removal; --user may not remove it (the directory is root's). */
	if (!d->priv.tun_marked)
		(void)unlink(d->priv.tun_lock_path);
	close(d->priv.tun_lock_fd);
	d->priv.tun_lock_fd = -1;
	d->priv.tun_lock_path[0] = 0;
}

/*
 * TUNSETPERSIST needs a queue of the device: one more is opened with the
 * flags the library's have (so the kernel takes it), the device made
 * persistent, and the queue closed again, before any packet is
 * redirected. 0, or -1 after a message.
 */
int tun_keep(struct daemon *d, const char *name)
{
	struct ifreq ifr = {};
	int fd, err = 0;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		goto out;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = (d->c.tap ? IFF_TAP : IFF_TUN) | IFF_NO_PI | IFF_MULTI_QUEUE |
			IFF_VNET_HDR;
	/* The user the daemon runs as owns a tun of ours, as the library's
	 * owns a tun it creates: a kept one goes to a new --user. An
	 * operator's keeps its owner. The owner first: a refusal then
	 * leaves the tun as it was, not persistent and unmarked. */
	if (ioctl(fd, TUNSETIFF, &ifr) ||
	    ((!d->priv.tun_existed || d->priv.tun_kept) &&
	     ioctl(fd, TUNSETOWNER, (unsigned long)d->priv.uid)) ||
	    ioctl(fd, TUNSETPERSIST, 1UL))
		err = errno;
	close(fd);
out:
	if (err) {
		fprintf(stderr, "ucpumapd: --keep-tun: cannot make %s persistent and uid %u's: %s\n",
			name, (unsigned int)d->priv.uid, strerror(err));
		return -1;
	}
	/* Ours to remove with the package: the start created it. */
	if (!d->priv.tun_existed && d->priv.tun_lock_fd >= 0) {
		char line[80];
		int n = snprintf(line, sizeof(line), "%d\n" KEPT_FMT, (int)getpid(),
				 if_nametoindex(name), netns_cookie());

		if (pwrite(d->priv.tun_lock_fd, line, n, 0) != n)
			out_warn("ucpumapd: cannot mark tun %s kept in its lock file: %s; the package's removal will leave it\n",
				 name, strerror(errno));
		d->priv.tun_marked = true;	/* a mark cut short is one too */
	}
	return 0;
}

void tun_unkeep(struct daemon *d, const char *name)
{
	struct ifreq ifr = {};
	char line[24];
	int fd, n;

	if (d->priv.tun_existed)
		return;		/* the operator's, or kept by an earlier start */
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = (d->c.tap ? IFF_TAP : IFF_TUN) | IFF_NO_PI | IFF_MULTI_QUEUE |
			IFF_VNET_HDR;
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) || ioctl(fd, TUNSETPERSIST, 0UL)) {
		out_warn("ucpumapd: the start failed, and %s stays persistent: %s; ip link del %s\n",
			 name, strerror(errno), name);
		if (fd >= 0)
			close(fd);
		return;	/* still kept: the mark stays for the package's removal */
	}
	close(fd);
	if (d->priv.tun_lock_fd >= 0) {
		n = snprintf(line, sizeof(line), "%d\n", (int)getpid());
		if (pwrite(d->priv.tun_lock_fd, line, n, 0) != n || ftruncate(d->priv.tun_lock_fd, n))
			out_warn("ucpumapd: cannot take the kept mark of %s out of its lock file: %s\n",
				 name, strerror(errno));
		else
			d->priv.tun_marked = false;
	}
}
