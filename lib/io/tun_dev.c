// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tun device's set-up: create opens its queues (TUNSETIFF with
 * IFF_MULTI_QUEUE and IFF_VNET_HDR, every refusal explained), sets the
 * vnet header's size, the MTU and the link up, and with coalescing asks
 * the kernel which super-packets it takes; set_back gives a worker its
 * way back and turns on the offloads the read path does in software;
 * destroy closes the queues. All of it on the control thread, before the
 * workers open (tun_worker.c) or after they closed. And the readers of the
 * writes' counters, any thread.
 *
 * The write path is tun.c, the read path tun_read.c and tun_read_tx.c;
 * they share tun_internal.h, and this file calls none of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <ctype.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <netinet/in.h>

#include "io/tun_internal.h"
#include "ucpumap/csum.h"

#define TUN_DEV		"/dev/net/tun"
#define TUN_IFF_COMMON	(IFF_NO_PI | IFF_MULTI_QUEUE | IFF_VNET_HDR)

#ifdef UCM_DEBUG
/* The tests' switches (tun_internal.h), for the write path, the read
 * path and the probe below alike. */
int ucm_tun_test_refuse_super;
int ucm_tun_test_wait_fail;
int ucm_tun_test_ring_fail;
int ucm_tun_test_sleep_fail;
#endif

/* ---- the device ------------------------------------------------------- */

static const char *tun_kind(bool tap)
{
	return tap ? "tap" : "tun";
}

/* Any socket reaches the interface ioctls; AF_INET is there almost always,
 * AF_UNIX is the fallback and needs no privilege either. */
static int ctl_socket(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return s < 0 ? -errno : s;
}

/* Names are checked against IFNAMSIZ before they get here. */
static void ifname_copy(char *dst, const char *src)
{
	size_t n = strnlen(src, IFNAMSIZ - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int ifreq_ioctl(int s, const char *name, unsigned long req,
		       struct ifreq *ifr)
{
	ifname_copy(ifr->ifr_name, name);
	return ioctl(s, req, ifr) ? -errno : 0;
}

/* The kernel's dev_valid_name(), so a bad name gets its own message. */
static int check_name(const char *name)
{
	size_t len = strlen(name), i;
	const char *p;

	if (len >= IFNAMSIZ) {
		pr_warn("tun: name '%s' is %zu characters; the limit is %d (IFNAMSIZ - 1)\n",
			name, len, IFNAMSIZ - 1);
		return -EINVAL;
	}
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		pr_warn("tun: '%s' is not a valid interface name\n", name);
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		if (name[i] == '/' || name[i] == ':' || isspace((unsigned char)name[i])) {
			pr_warn("tun: interface name '%s' contains '/', ':' or a space\n",
				name);
			return -EINVAL;
		}
	}
	/* A template takes one %d (__dev_alloc_name()), nothing else. */
	p = strchr(name, '%');
	if (p && (p[1] != 'd' || strchr(p + 2, '%'))) {
		pr_warn("tun: name '%s': its '%%' is a template's one %%d (ucm%%d), no other\n",
			name);
		return -EINVAL;
	}
	return 0;
}

/*
 * TUNSETIFF said EINVAL for a name that may exist: say which mismatch it
 * is. The ethtool driver info is per network namespace, unlike a sysfs
 * mount: the tun driver reports driver "tun" and bus "tun" or "tap".
 */
static void explain_einval(int s, const char *name, bool tap)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = {};
	const char *want = tun_kind(tap);
	int err;

	ifr.ifr_data = (void *)&di;
	err = ifreq_ioctl(s, name, SIOCETHTOOL, &ifr);
	if (err == -ENODEV) {
		pr_warn("tun: the kernel refused to create %s '%s' (EINVAL)\n",
			want, name);
		return;
	}
	if (err || strcmp(di.driver, "tun")) {
		pr_warn("tun: device %s exists and is not a tun/tap device (driver %s); delete it or pick another name\n",
			name, err ? "unknown" : di.driver);
		return;
	}
	if (!strcmp(di.bus_info, "tap") != tap) {
		pr_warn("tun: device %s exists as a %s; delete it (ip link del %s) or %s\n",
			name, tun_kind(!tap), name,
			tap ? "open it as a tun (no --tap)" : "open it as a tap (--tap, UCM_TUN_F_TAP)");
		return;
	}
	pr_warn("tun: device %s exists as a single-queue %s; delete it (ip link del %s) or re-create it with 'ip tuntap add dev %s mode %s multi_queue vnet_hdr'\n",
		name, want, name, name, want);
}

/* Open one queue of @name (an empty name: the kernel picks one and
 * @name receives it). */
static int queue_open(int s, char *name, bool tap, bool existed)
{
	int want = (tap ? IFF_TAP : IFF_TUN) | TUN_IFF_COMMON;
	struct ifreq ifr = {};
	int fd, err;

	fd = open(TUN_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT || err == -ENODEV)
			pr_warn("tun: %s is missing: load the tun module (modprobe tun) or create the node (mknod %s c 10 200)\n",
				TUN_DEV, TUN_DEV);
		else
			pr_warn("tun: cannot open %s: %s\n", TUN_DEV,
				strerror(-err));
		return err;
	}
	ifname_copy(ifr.ifr_name, name);
	ifr.ifr_flags = want;
	if (ioctl(fd, TUNSETIFF, &ifr)) {
		err = -errno;
		switch (err) {
		case -EPERM:
			if (existed)
				pr_warn("tun: not allowed to attach to %s: it belongs to another user or group and CAP_NET_ADMIN is missing\n",
					name);
			else
				pr_warn("tun: creating %s %s needs CAP_NET_ADMIN: run as root or grant the capability\n",
					tun_kind(tap), name[0] ? name : "device");
			break;
		case -EINVAL:
			explain_einval(s, name, tap);
			break;
		case -EBUSY:
			pr_warn("tun: device %s is busy: attached elsewhere as a single queue; stop that user or delete it\n",
				name);
			break;
		case -E2BIG:
			pr_warn("tun: device %s has no free queue (256 at most per device)\n",
				name);
			break;
		default:
			pr_warn("tun: cannot attach to %s: %s\n", name,
				strerror(-err));
		}
		close(fd);
		return err;
	}
	/* A device that other programs hold keeps their flags: ours are
	 * applied only by the first queue. Writes without the vnet header
	 * layout we use would be garbage. */
	if (ioctl(fd, TUNGETIFF, &ifr) || (ifr.ifr_flags & want) != want) {
		pr_warn("tun: device %s is in use with other flags (0x%x, want 0x%x: vnet_hdr and no packet info); stop its other user or pick another name\n",
			ifr.ifr_name, (unsigned int)(uint16_t)ifr.ifr_flags,
			want);
		close(fd);
		return -EBUSY;
	}
	/* The real name, when the kernel picked it ("" or a "%d" template):
	 * the other queues attach to that device. */
	memcpy(name, ifr.ifr_name, IFNAMSIZ);
	name[IFNAMSIZ - 1] = '\0';
	return fd;
}

/* MTU (when asked) and link up, each only if it is not so already, so a
 * prepared device can be attached without CAP_NET_ADMIN. */
static int link_setup(int s, const char *name, uint32_t mtu)
{
	struct ifreq ifr = {};
	int err;

	if (mtu) {
		err = ifreq_ioctl(s, name, SIOCGIFMTU, &ifr);
		if (!err && (uint32_t)ifr.ifr_mtu != mtu) {
			ifr.ifr_mtu = mtu;
			err = ifreq_ioctl(s, name, SIOCSIFMTU, &ifr);
		}
		if (err) {
			if (err == -EINVAL)
				pr_warn("tun: MTU %u is out of range for %s (68..65535 for a tun, less for a tap)\n",
					mtu, name);
			else
				pr_warn("tun: cannot set the MTU of %s to %u: %s%s\n",
					name, mtu, strerror(-err),
					err == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
			return err;
		}
	}
	err = ifreq_ioctl(s, name, SIOCGIFFLAGS, &ifr);
	if (!err && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		err = ifreq_ioctl(s, name, SIOCSIFFLAGS, &ifr);
	}
	if (err)
		pr_warn("tun: cannot bring %s up: %s%s\n", name, strerror(-err),
			err == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
	return err;
}

/* ---- what the kernel takes of our super-packets ----------------------- */

/* A probe: 2 segments of GSO_PROBE_SEG bytes, the last @short_last less. */
#define GSO_PROBE_SEG	64

/*
 * Write one probe super-packet of @proto: an IPv4 packet from 192.0.2.1
 * to 192.0.2.2 (TEST-NET-1, RFC 5737) whose header checksum is wrong, so
 * that the stack drops it as the first thing it checks (Ip InHdrErrors);
 * the tun has taken or refused its GSO header by then. Return 1 taken, 0
 * refused (EINVAL), -1 unknown (another error: the run time finds out).
 */
static int gso_probe_one(int fd, uint8_t proto, uint32_t short_last)
{
	uint8_t buf[VNET_LEN + 20 + 20 + 2 * GSO_PROBE_SEG] = { 0 };
	struct virtio_net_hdr *vh = (struct virtio_net_hdr *)buf;
	uint8_t *ip = buf + VNET_LEN, *l4 = ip + 20;
	bool tcp = proto == IPPROTO_TCP;
	uint32_t l4h = tcp ? 20 : 8, l4len = l4h + 2 * GSO_PROBE_SEG - short_last;

	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->gso_type = tcp ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_UDP_L4;
	vh->gso_size = GSO_PROBE_SEG;
	vh->hdr_len = 20 + l4h;
	vh->csum_start = 20;
	vh->csum_offset = tcp ? 16 : 6;
	ip[0] = 0x45;
	st_be16(ip + 2, 20 + l4len);
	ip[8] = 1;
	ip[9] = proto;
	memcpy(ip + 12, "\xc0\x00\x02\x01\xc0\x00\x02\x02", 8);
	st_be16(ip + 10, ucm_csum_fold(ucm_csum_add(0, ip, 20)) ^ 0xffff);
	st_be16(l4, 9);		/* discard */
	st_be16(l4 + 2, 9);
	if (tcp) {
		l4[12] = 5 << 4;
		l4[13] = 0x10;	/* ACK */
	} else {
		st_be16(l4 + 4, l4len);
	}
#ifdef UCM_DEBUG
	/* Relaxed, no pair: a test's switch, set before the create. */
	if (!tcp && (__atomic_load_n(&ucm_tun_test_refuse_super, __ATOMIC_RELAXED) & 2))
		vh->gso_type = 0x7f;	/* a kernel without UDP GSO in a tun */
#endif
	if (write(fd, buf, VNET_LEN + 20 + l4len) >= 0)
		return 1;
	return errno == EINVAL ? 0 : -1;
}

/*
 * Does the device take RWF_NOWAIT? A tun is marked FMODE_NOWAIT from
 * Linux 6.4; before, the VFS refuses such a read or write (EOPNOTSUPP),
 * and so would every io_uring one. Asked by a write of one byte, shorter
 * than the vnet header, which the tun itself refuses (EINVAL) once the
 * flag has passed: no packet. Without it, a write to a full tun waits in
 * io_uring (its worker held), as before 6.4 any would.
 */
static void nowait_probe(struct ucm_tun *tun)
{
	struct iovec iov = { .iov_base = "", .iov_len = 1 };

	if (pwritev2(tun->fds[0], &iov, 1, -1, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP) {
		tun->rw_nowait = 0;
		pr_info("tun: %s: the kernel takes no RWF_NOWAIT on a tun (Linux 6.4 does): a full tun holds a worker's writes until it has room\n",
			tun->name);
		return;
	}
	tun->rw_nowait = RWF_NOWAIT;
}

/*
 * At create, with coalescing in tun mode: does the kernel take a TCP
 * super-packet, a UDP one (Linux 6.2), a UDP one whose last segment is
 * short (6.6.44 refused it)? What it refuses is never planned
 * (gso_refused: UCM_GSO_F_NO_TCP, _NO_UDP, _UDP_EQUAL), and said once.
 * UDP groups stop at 64 segments, what every kernel with UDP GSO in a tun
 * takes; a hold of at most 71 packets would gain little from 128.
 */
static void gso_probe(struct ucm_tun *tun)
{
	int t = gso_probe_one(tun->fds[0], IPPROTO_TCP, 0), err = errno;
	int u = gso_probe_one(tun->fds[0], IPPROTO_UDP, 0);
	int us = u == 1 ? gso_probe_one(tun->fds[0], IPPROTO_UDP, GSO_PROBE_SEG / 2) : u;

	tun->gso_refused = (t == 0 ? UCM_GSO_F_NO_TCP : 0) | (u == 0 ? UCM_GSO_F_NO_UDP : 0) |
			   (u == 1 && us == 0 ? UCM_GSO_F_UDP_EQUAL : 0);
	if (t < 0 || u < 0 || us < 0)
		pr_info("tun: %s: could not ask the kernel which super-packets it takes (%s): the first refused one will say\n",
			tun->name, strerror(t < 0 ? err : errno));
	else
		pr_info("tun: %s: the kernel takes %s super-packets%s%s\n", tun->name,
			t && u ? "TCP and UDP" : t ? "TCP (not UDP: Linux 6.2 does)" :
			u ? "UDP (not TCP)" : "no", u && !us ?
			", but not a UDP one with a short last segment" : "",
			t && u && us ? "" : ": what it refuses is written packet by packet");
}

/*
 * Per device: every queue takes this header before each packet. A device
 * there before us with another size is another user's (as QEMU's 12
 * bytes): changing it would break that user's queues. Return: 0 or -errno.
 */
static int vnet_hdr_set(const struct ucm_tun *tun, bool existed)
{
	int sz = sizeof(struct virtio_net_hdr), cur = sz, err;

	if (existed && !ioctl(tun->fds[0], TUNGETVNETHDRSZ, &cur) && cur != sz) {
		pr_warn("tun: %s has a vnet header of %d bytes, set by another user of it (ours is %d): give a tun of its own\n",
			tun->name, cur, sz);
		return -EBUSY;
	}
	if (ioctl(tun->fds[0], TUNSETVNETHDRSZ, &sz)) {
		err = -errno;
		pr_warn("tun: %s: TUNSETVNETHDRSZ: %s\n", tun->name, strerror(-err));
		return err;
	}
	return 0;
}

/* The tun we created belongs to @uid: 0, or -errno after a message. Our
 * own uid (@named false) that the user namespace does not map (EINVAL: a
 * namespace without a uid map, where geteuid() is the overflow uid)
 * leaves it without an owner, as the kernel made it, said; an owner the
 * caller named is refused so. */
static int owner_set(const struct ucm_tun *tun, uint32_t uid, bool named)
{
	int err;

	if (!ioctl(tun->fds[0], TUNSETOWNER, (unsigned long)uid))
		return 0;
	err = -errno;
	if (err == -EINVAL && named) {
		pr_warn("tun: owner %u is no user of this user namespace: %s would have none, and any user could open queues of it; name one it maps\n",
			uid, tun->name);
		return err;
	}
	if (err == -EINVAL) {
		pr_warn("tun: user %u is not mapped in this user namespace: %s has no owner, and any user may open queues of it\n",
			uid, tun->name);
		return 0;
	}
	pr_warn("tun: cannot make user %u the owner of %s: %s\n", uid, tun->name,
		strerror(-err));
	return err;
}

struct ucm_tun *ucm_tun__create(const struct ucm_tun_opts *opts)
{
	struct ucm_tun_opts o;
	struct ucm_tun *tun;
	struct ifreq ifr = {};
	bool tap, existed = false;
	uint32_t q;
	int s, err;

	err = UCM_OPTS_COPY(&o, opts, ucm_tun_opts);
	if (err)
		return ucm_err_ptr(err);
	if (o.flags & ~(UCM_TUN_F_TAP | UCM_TUN_F_NO_BATCH | UCM_TUN_F_COALESCE |
			UCM_TUN_F_NO_OFFLOAD)) {
		pr_warn("tun: unknown flags 0x%x\n", o.flags);
		return ucm_err_ptr(-EINVAL);
	}
	if (!o.nqueues)
		o.nqueues = 1;
	if (o.nqueues > UCM_TUN_MAX_QUEUES) {
		pr_warn("tun: %u queues: give between 1 and %u (one per worker)\n",
			o.nqueues, UCM_TUN_MAX_QUEUES);
		return ucm_err_ptr(-EINVAL);
	}
	if (o.name) {
		err = check_name(o.name);
		if (err)
			return ucm_err_ptr(err);
	}
	tap = o.flags & UCM_TUN_F_TAP;

	tun = aligned_alloc(UCM_CACHELINE, sizeof(*tun));
	if (!tun)
		return ucm_err_ptr(ucm_oom("the tun"));
	memset(tun, 0, sizeof(*tun));
	for (q = 0; q < UCM_TUN_MAX_QUEUES; q++)
		tun->fds[q] = -1;
	if (o.name)
		ifname_copy(tun->name, o.name);
	tun->flags = o.flags;
	tun->nqueues = o.nqueues;
	tun->resolver_init = o.resolver_init;
	tun->resolver_init_ctx = o.resolver_init_ctx;

	s = ctl_socket();
	if (s < 0) {
		err = s;
		pr_warn("tun: no socket for interface ioctls: %s\n",
			strerror(-err));
		goto err_free;
	}
	/* Only for the messages: whether a refusal concerns a device that
	 * was there before us. */
	if (tun->name[0] && !strchr(tun->name, '%'))
		existed = !ifreq_ioctl(s, tun->name, SIOCGIFINDEX, &ifr);

	for (q = 0; q < o.nqueues; q++) {
		err = queue_open(s, tun->name, tap, existed || q > 0);
		if (err < 0)
			goto err_close;
		tun->fds[q] = err;
		/* Ours before the next queue opens: an ownerless multi-queue
		 * tun takes any user's queues. */
		if (!q && !existed) {
			err = owner_set(tun, o.owner ? o.owner : geteuid(), o.owner);
			if (err)
				goto err_close;
		}
	}
	err = vnet_hdr_set(tun, existed);
	if (err)
		goto err_close;
	err = link_setup(s, tun->name, o.mtu);
	if (err)
		goto err_close;
	err = ifreq_ioctl(s, tun->name, SIOCGIFINDEX, &ifr);
	if (err) {
		pr_warn("tun: %s vanished while being set up: %s\n", tun->name,
			strerror(-err));
		goto err_close;
	}
	tun->ifindex = ifr.ifr_ifindex;
	close(s);
	nowait_probe(tun);
	if ((o.flags & UCM_TUN_F_COALESCE) && !tap)
		gso_probe(tun);
	pr_debug("tun: %s %s %s, %u queue%s, ifindex %d\n",
		 existed ? "attached to" : "created", tun_kind(tap), tun->name,
		 tun->nqueues, tun->nqueues > 1 ? "s" : "", tun->ifindex);
	return tun;

err_close:
	/* Our device is not persistent: it goes with its last fd. */
	for (q = 0; q < o.nqueues; q++)
		if (tun->fds[q] >= 0)
			close(tun->fds[q]);
	close(s);
err_free:
	free(tun);
	return ucm_err_ptr(err);
}

void ucm_tun__destroy(struct ucm_tun *tun)
{
	uint32_t q, w;

	if (!tun)
		return;
	for (w = 0; w < UCM_TUN_MAX_WORKERS; w++)
		/* O3: pairs with O2 in ucm_tun_close() (tun_worker.c): a slot seen
		 * free was torn down before. */
		if (__atomic_load_n(&tun->wk[w].open, __ATOMIC_ACQUIRE))
			pr_warn("tun: %s destroyed while worker %u still uses it: destroy the cpumap first\n",
				tun->name, w);
	for (q = 0; q < tun->nqueues; q++)
		close(tun->fds[q]);
	free(tun);
}

int ucm_tun__ifindex(const struct ucm_tun *tun)
{
	return tun->ifindex;
}

const char *ucm_tun__name(const struct ucm_tun *tun)
{
	return tun->name;
}

uint32_t ucm_tun__nqueues(const struct ucm_tun *tun)
{
	return tun->nqueues;
}

/* ---- the way back ----------------------------------------------------- */

/* The offloads' names, in the log line. */
static const struct {
	uint32_t bit;
	const char *name;
} offload_names[] = {
	{ TUN_F_CSUM, "checksum" }, { TUN_F_TSO4, "TSO4" }, { TUN_F_TSO6, "TSO6" },
	{ TUN_F_USO4, "USO4" }, { TUN_F_USO6, "USO6" },
};

/*
 * Turn on the offloads the read path does in software: all five where the
 * kernel has USO (6.2), else the three older ones, else none. The tun's
 * features are the device's, so any queue's fd does; the kernel may then
 * hand every reader super-packets and partial checksums.
 */
static void offload_on(struct ucm_tun *tun)
{
	static const uint32_t tries[] = {
		TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_USO4 | TUN_F_USO6,
		TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6,
	};
	char what[64] = "";
	size_t i;
	int err = 0;

	tun->offload_set = true;
	for (i = 0; !(tun->flags & UCM_TUN_F_NO_OFFLOAD) && i < ARRAY_SIZE(tries); i++) {
		if (!ioctl(tun->fds[0], TUNSETOFFLOAD, (unsigned long)tries[i])) {
			tun->offload = tries[i];
			break;
		}
		err = -errno;
	}
	/* None wanted or none taken: off, said so to the kernel, since a
	 * kept tun holds what its last user turned on, and the read path
	 * drops what it did not ask for. */
	if (!tun->offload && ioctl(tun->fds[0], TUNSETOFFLOAD, 0UL))
		pr_warn("tun: %s: cannot turn its offloads off (%s): packets the kernel leaves to it are dropped on the way back\n",
			tun->name, strerror(errno));
	if (tun->flags & UCM_TUN_F_NO_OFFLOAD)
		return;
	if (!tun->offload) {
		pr_info("tun: %s: no offloads on the way back (%s): the kernel cuts and checksums every packet before the tun\n",
			tun->name, strerror(-err));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(offload_names); i++)
		if (tun->offload & offload_names[i].bit)
			snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s%s",
				 *what ? ", " : "", offload_names[i].name);
	pr_info("tun: %s: offloads on the way back: %s (super-packets cut and checksums completed in software)\n",
		tun->name, what);
}

int ucm_tun__set_back(struct ucm_tun *tun, uint32_t worker,
		      struct ucm_txq *txq, const struct ucm_tun_l2 *l2)
{
	char name[IF_NAMESIZE];
	struct tun_worker *wk;

	if (!tun || !txq || worker >= UCM_TUN_MAX_WORKERS)
		return ucm_err(-EINVAL);
	if ((!l2 && !(tun->flags & UCM_TUN_F_TAP))) {
		pr_warn("tun: %s: a tun's packets need an Ethernet header to go out: give one\n",
			tun->name);
		return ucm_err(-EINVAL);
	}
	if (l2 && !(tun->flags & UCM_TUN_F_TAP) && (l2->src[0] & 1)) {
		pr_warn("tun: %s: the way back's source MAC is a group address: give the interface's\n",
			tun->name);
		return ucm_err(-EINVAL);
	}
	if (l2 && !(tun->flags & UCM_TUN_F_TAP) && l2->resolve_ifindex <= 0 &&
	    ((l2->dst[0] & 1) || !memcmp(l2->dst, "\0\0\0\0\0\0", 6))) {
		pr_warn("tun: %s: the next hop's MAC %s: give a station's (l2.dst), or resolve_ifindex\n",
			tun->name, l2->dst[0] & 1 ? "is a group address" : "is all zeros");
		return ucm_err(-EINVAL);
	}
	if (l2 && l2->resolve_ifindex > 0 && !if_indextoname(l2->resolve_ifindex, name)) {
		/* Every route question would say ENODEV: all no_neigh. */
		pr_warn("tun: %s: resolve_ifindex %d names no interface (ip link shows the indexes)\n",
			tun->name, l2->resolve_ifindex);
		return ucm_err(-EINVAL);
	}
	wk = &tun->wk[worker];
	/* O3 (tun_internal.h): pairs with O2 in ucm_tun_close() (tun_worker.c). The
	 * worker's open() reads txq and l2 later: its thread starts after
	 * this. */
	if (__atomic_load_n(&wk->open, __ATOMIC_ACQUIRE))
		return ucm_err(-EBUSY);
	wk->txq = txq;
	if (l2)
		wk->l2 = *l2;
	if (!tun->offload_set)
		offload_on(tun);
	return 0;
}

int ucm_tun__set_back_src(struct ucm_tun *tun, const uint8_t *mac)
{
	uint64_t v = TUN_SRC_SET;
	int i;

	if (!tun || !mac || (tun->flags & UCM_TUN_F_TAP) || (mac[0] & 1))
		return ucm_err(-EINVAL);
	for (i = 0; i < 6; i++)
		v |= (uint64_t)mac[i] << (8 * i);
	/* S1 (tun_internal.h): pairs with S2 in the read path's turn. */
	__atomic_store_n(&tun->back_src, v, __ATOMIC_RELAXED);
	return 0;
}

/* The 0.2.0 name (tun.h). */
int ucm_tun__set_reverse(struct ucm_tun *tun, uint32_t worker,
			 struct ucm_txq *txq, const struct ucm_tun_l2 *l2)
{
	return ucm_tun__set_back(tun, worker, txq, l2);
}

/* ---- the writes' statistics (tun.c counts them) ---------------------- */

/* One batch's counts into the worker's: STAT_ADD, relaxed and without a
 * pair (tun_worker's contract). */
void ucm_tun_stats_publish(struct ucm_tun_stats *s, const struct ucm_tun_stats *a)
{
	if (a->packets) {
		STAT_ADD(s->packets, a->packets);
		STAT_ADD(s->bytes, a->bytes);
	}
	if (a->submits)
		STAT_ADD(s->submits, a->submits);
	if (unlikely(a->csum_partial))
		STAT_ADD(s->csum_partial, a->csum_partial);
	if (unlikely(a->super_refused))
		STAT_ADD(s->super_refused, a->super_refused);
	if (a->super) {
		uint32_t b;

		STAT_ADD(s->super, a->super);
		STAT_ADD(s->super_segs, a->super_segs);
		for (b = 0; b < UCM_TUN_SEG_HIST; b++)
			if (a->super_hist[b])
				STAT_ADD(s->super_hist[b], a->super_hist[b]);
	}
	if (unlikely(a->non_ip))
		STAT_ADD(s->non_ip, a->non_ip);
	if (unlikely(a->err_eio))
		STAT_ADD(s->err_eio, a->err_eio);
	if (unlikely(a->err_ebadfd))
		STAT_ADD(s->err_ebadfd, a->err_ebadfd);
	if (unlikely(a->err_eagain))
		STAT_ADD(s->err_eagain, a->err_eagain);
	if (unlikely(a->err_other))
		STAT_ADD(s->err_other, a->err_other);
}

/* READ_ONCE: relaxed, no pair; each counter is whole, the set is not a
 * snapshot. */
static void stats_add(struct ucm_tun_stats *dst, const struct ucm_tun_stats *s)
{
	uint32_t b;

	dst->packets += READ_ONCE(s->packets);
	dst->bytes += READ_ONCE(s->bytes);
	dst->submits += READ_ONCE(s->submits);
	dst->super += READ_ONCE(s->super);
	dst->super_segs += READ_ONCE(s->super_segs);
	dst->super_refused += READ_ONCE(s->super_refused);
	for (b = 0; b < UCM_TUN_SEG_HIST; b++)
		dst->super_hist[b] += READ_ONCE(s->super_hist[b]);
	dst->non_ip += READ_ONCE(s->non_ip);
	dst->err_eio += READ_ONCE(s->err_eio);
	dst->err_ebadfd += READ_ONCE(s->err_ebadfd);
	dst->err_eagain += READ_ONCE(s->err_eagain);
	dst->err_other += READ_ONCE(s->err_other);
	dst->csum_partial += READ_ONCE(s->csum_partial);
}

int ucm_tun__queue_stats(const struct ucm_tun *tun, uint32_t q,
			 struct ucm_tun_stats *st, size_t sz)
{
	struct ucm_tun_stats o = {};
	uint32_t w;

	if (!tun || !st || !sz || q >= tun->nqueues)
		return ucm_err(-EINVAL);
	for (w = q; w < UCM_TUN_MAX_WORKERS; w += tun->nqueues)
		stats_add(&o, &tun->wk[w].stats);
	ucm_stats_out(st, sz, &o, sizeof(o));
	return 0;
}

int ucm_tun__worker_stats(const struct ucm_tun *tun, uint32_t w,
			  struct ucm_tun_stats *st, size_t sz)
{
	struct ucm_tun_stats o = {};

	if (!tun || !st || !sz || w >= UCM_TUN_MAX_WORKERS)
		return ucm_err(-EINVAL);
	stats_add(&o, &tun->wk[w].stats);
	ucm_stats_out(st, sz, &o, sizeof(o));
	return 0;
}

