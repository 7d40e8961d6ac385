// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * AF_XDP sockets set up and closed: one UMEM per interface (a ucm_umem
 * carved per queue), one socket per RX queue sharing it (XDP_SHARED_UMEM),
 * each with its own fill and completion rings. The sockets are set up here
 * from the kernel's uapi; libxdp gives the rings' inline accessors
 * (<xdp/xsk.h>), and ucm_xdp attaches our program. libxdp's own socket
 * setup cannot register a UMEM with TX metadata (1.3.1, Debian 12), which
 * the way back's checksum offload needs (UCM_XSK_F_TX_CSUM). A queue's
 * operations on its RX thread are in queue.c (port_internal.h).
 */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_xdp.h>
#include <linux/mempolicy.h>
#include <linux/sockios.h>
#include <xdp/xsk.h>

#include "core/pool_internal.h"
#include "io/cpus.h"
#include "io/netdev.h"
#include "ucpumap/txq.h"
#include "port_internal.h"

_Static_assert(UCM_LOC_KERNEL < UCM_LOC__MAX, "the pool's audit counts every place");
/* Registered in aligned mode, a descriptor carrying an unaligned-mode
 * offset is past the UMEM: refused by ucm_umem_desc_check(). */
_Static_assert(UCM_UMEM_MAX_SIZE <= 1ull << XSK_UNALIGNED_BUF_OFFSET_SHIFT,
	       "no UMEM address reaches the unaligned-mode offset bits");

/* The name of our place in the pool's messages. */
__attribute__((constructor)) static void xsk_loc_name(void)
{
	ucm_frame_loc_name(UCM_LOC_KERNEL, "kernel");
}

_Static_assert(UCM_XSK_FRAMES_DEFAULT >= 3 * UCM_XSK_RX_RING_DEFAULT,
	       "the default frames cover the default fill and RX rings");

/* Busy-poll time per poll (SO_BUSY_POLL, microseconds); the budget
 * (SO_BUSY_POLL_BUDGET) is one RX batch. */
#define UCM_XSK_BUSY_POLL_US	20

/* Linux 6.11 (and 6.8's stable updates): a UMEM with TX metadata in front
 * of each packet. Older headers lack it. */
#ifndef XDP_UMEM_TX_METADATA_LEN
#define XDP_UMEM_TX_METADATA_LEN	(1 << 2)
#endif

/* struct xdp_umem_reg with the field older headers leave as padding. */
struct umem_reg {
	uint64_t addr;
	uint64_t len;
	uint32_t chunk_size;
	uint32_t headroom;
	uint32_t flags;
	uint32_t tx_metadata_len;
};
_Static_assert(sizeof(struct umem_reg) == 32, "the kernel's layout");
_Static_assert(UCM_XSK_MAX_FRAGS == UCM_CHAIN_MAX, "a packet's frames: one bound");
_Static_assert(UCM_TXQ_META_LEN % 8 == 0, "the kernel takes multiples of 8");
_Static_assert(sizeof(struct ucm_txq_meta) == UCM_TXQ_META_LEN, "the metadata fills its room");

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif

int ucm_xsk_parse_opts(const struct ucm_xsk_opts *in, struct ucm_xsk_opts *o)
{
	struct ucm_umem_opts uo, umem;
	int err = UCM_OPTS_COPY(o, in, ucm_xsk_opts);

	if (err)
		return err;
	if (!o->ifname || !*o->ifname) {
		pr_warn("xsk: no interface given\n");
		return -EINVAL;
	}
	if (!o->nqueues)
		o->nqueues = 1;
	if (o->nqueues > UCM_XSK_MAX_QUEUES) {
		pr_warn("xsk: %u queues: at most %u\n", o->nqueues, UCM_XSK_MAX_QUEUES);
		return -EINVAL;
	}
	if (o->nqueues > 1 && !o->queues) {
		pr_warn("xsk: %u queues and no list of them (queues): give their ids\n", o->nqueues);
		return -EINVAL;
	}
	for (uint32_t i = 0; o->queues && i < o->nqueues; i++)
		for (uint32_t j = 0; j < i; j++)
			if (o->queues[i] == o->queues[j]) {
				pr_warn("xsk: queue %u is listed twice: one socket a queue\n",
					o->queues[i]);
				return -EINVAL;
			}
	if (!o->frames_per_queue)
		o->frames_per_queue = UCM_XSK_FRAMES_DEFAULT;
	if (!o->rx_size)
		o->rx_size = UCM_XSK_RX_RING_DEFAULT;
	if (!o->fill_size)
		o->fill_size = 2 * o->rx_size;
	if (!is_pow2(o->rx_size) || o->rx_size > UCM_XSK_MAX_RING ||
	    !is_pow2(o->fill_size) || o->fill_size > 2 * UCM_XSK_MAX_RING) {
		pr_warn("xsk: ring sizes must be powers of two (RX %u, fill %u; RX at most %u)\n",
			o->rx_size, o->fill_size, UCM_XSK_MAX_RING);
		return -EINVAL;
	}
	/* The fill and RX rings can hold this many frames at once; the pool
	 * needs them plus room for the frames out in the cpumap. */
	if (o->frames_per_queue < o->fill_size + o->rx_size) {
		/* A pool's frames are a power of two (ucm_umem__create()). */
		pr_warn("xsk: %u frames per queue cannot cover a fill ring of %u and an RX ring of %u: give at least %u\n",
			o->frames_per_queue, o->fill_size, o->rx_size,
			pow2_up(o->fill_size + o->rx_size));
		return -EINVAL;
	}
	if (o->mode > UCM_XSK_ZEROCOPY ||
	    (o->flags & ~(UCM_XSK_F_NO_NEED_WAKEUP | UCM_XSK_F_BUSY_POLL |
			   UCM_XSK_F_TX_CSUM | UCM_XSK_F_SG))) {
		pr_warn("xsk: unknown mode %u or flags 0x%x\n", o->mode, o->flags);
		return -EINVAL;
	}
	if (!o->max_frags)
		o->max_frags = UCM_XSK_MAX_FRAGS;
	if (o->max_frags > UCM_XSK_MAX_FRAGS) {
		pr_warn("xsk: max_frags %u: a packet takes at most %u frames\n", o->max_frags,
			UCM_XSK_MAX_FRAGS);
		return -EINVAL;
	}
	if (o->umem_flags & UCM_UMEM_F_NUMA_NODE) {
		pr_warn("xsk: umem_flags: the NUMA node is the device's, taken by the open itself: leave UCM_UMEM_F_NUMA_NODE out\n");
		return -EINVAL;
	}
	/* The UMEM's own limits (a pool's least frames, its largest size):
	 * refused here, before the open touches anything. */
	uo = (struct ucm_umem_opts){ .sz = sizeof(uo), .frame_size = o->frame_size,
				     .npools = o->nqueues, .frames_per_pool = o->frames_per_queue,
				     .flags = o->umem_flags };
	return ucm_umem_parse_opts(&uo, &umem);
}

static int queue_exists(const char *ifname, const char *dir, uint32_t q)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues/%s-%u", ifname, dir, q);
	return access(path, F_OK) == 0;
}

/*
 * The node for the frames: the device's, as page_pool's; -1 for none: no
 * node known (a virtual device, one node), or the process has a memory
 * policy of its own (numactl), which wins.
 */
static int frames_node(const char *ifname)
{
	int mode = MPOL_DEFAULT;

	if (syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0) || mode != MPOL_DEFAULT)
		return -1;
	return ucm_dev_numa_node(ifname);
}

/* @dir: "rx" or "tx". */
static int count_queues(const char *ifname, const char *dir)
{
	int n = 0;

	while (n < 4096 && queue_exists(ifname, dir, n))
		n++;
	return n;
}

/* Best effort, each on its own: kernels before 5.11 lack the preference
 * and the budget. True when SO_BUSY_POLL took: without it a recvfrom
 * polls nothing, and the queue does not busy-poll. */
static bool queue_busy_poll(struct ucm_xsk_queue *q)
{
	int one = 1, us = UCM_XSK_BUSY_POLL_US, budget = UCM_XSK_RX_BATCH;

	if (setsockopt(q->fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us))) {
		pr_warn("xsk: queue %u: SO_BUSY_POLL refused: %s: no busy polling\n", q->id,
			strerror(errno));
		return false;
	}
	if (setsockopt(q->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)))
		pr_warn("xsk: queue %u: SO_PREFER_BUSY_POLL refused: %s\n", q->id,
			strerror(errno));
	if (setsockopt(q->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget)))
		pr_warn("xsk: queue %u: SO_BUSY_POLL_BUDGET refused: %s\n", q->id,
			strerror(errno));
	return true;
}

/* ---- sockets and their rings ---------------------------------------------- */

/* The UMEM, registered on queue 0's socket; with @meta_len bytes of TX
 * metadata in front of every packet sent. */
static int umem_register(struct ucm_xsk *x, int fd, uint32_t meta_len)
{
	struct umem_reg mr = {
		.addr = (uintptr_t)x->area,
		.len = x->size,
		.chunk_size = x->frame_size,
		.flags = meta_len ? XDP_UMEM_TX_METADATA_LEN : 0,
		.tx_metadata_len = meta_len,
	};

	return setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) ? -errno : 0;
}

/* The same fields for either direction: libxdp's two ring types agree. */
#define RING_INIT(r, m, off, n)	do {					\
	(r)->mask = (n) - 1;						\
	(r)->size = (n);						\
	(r)->producer = (void *)((char *)(m) + (off)->producer);	\
	(r)->consumer = (void *)((char *)(m) + (off)->consumer);	\
	(r)->flags = (void *)((char *)(m) + (off)->flags);		\
	(r)->ring = (char *)(m) + (off)->desc;				\
	(r)->cached_prod = *(r)->producer;				\
	(r)->cached_cons = *(r)->consumer;				\
} while (0)

/* Map ring @which of @n entries of @esz bytes, at @pgoff of @q's socket.
 * One of @prod and @cons is given: a producer's cached consumer runs a
 * ring ahead of the real one (xsk_prod_nb_free()). */
static int ring_map(struct ucm_xsk_queue *q, unsigned int which, uint64_t pgoff,
		    const struct xdp_ring_offset *off, uint32_t n, size_t esz,
		    struct xsk_ring_prod *prod, struct xsk_ring_cons *cons)
{
	size_t len = off->desc + (size_t)n * esz;
	void *m;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 q->fd, (off_t)pgoff);
	if (m == MAP_FAILED)
		return -errno;
	q->map[which] = m;
	q->map_len[which] = len;
	if (prod) {
		RING_INIT(prod, m, off, n);
		prod->cached_cons += n;
	} else {
		RING_INIT(cons, m, off, n);
	}
	return 0;
}

/* @q's four rings: sized, then mapped. The completion ring is twice the
 * RX ring, so at least twice the TX ring (xsk.h, UCM_XSK_TX_RING): a full
 * TX ring's completions have room beside those not reaped yet. */
static int queue_rings(struct ucm_xsk *x, struct ucm_xsk_queue *q, uint32_t rx_size,
		       uint32_t tx_size)
{
	struct xdp_mmap_offsets off;
	socklen_t len = sizeof(off);
	uint32_t comp_size = 2 * rx_size;
	int err;

	if (setsockopt(q->fd, SOL_XDP, XDP_UMEM_FILL_RING, &x->fill_size, sizeof(uint32_t)) ||
	    setsockopt(q->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &comp_size, sizeof(uint32_t)) ||
	    setsockopt(q->fd, SOL_XDP, XDP_RX_RING, &rx_size, sizeof(uint32_t)) ||
	    setsockopt(q->fd, SOL_XDP, XDP_TX_RING, &tx_size, sizeof(uint32_t)))
		return -errno;
	if (getsockopt(q->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len))
		return -errno;
	if (len < sizeof(off))
		return -EOPNOTSUPP;	/* before Linux 5.4: no ring flags */
	err = ring_map(q, RING_FILL, XDP_UMEM_PGOFF_FILL_RING, &off.fr, x->fill_size,
		       sizeof(uint64_t), &q->fill, NULL);
	if (!err)
		err = ring_map(q, RING_COMP, XDP_UMEM_PGOFF_COMPLETION_RING, &off.cr,
			       comp_size, sizeof(uint64_t), NULL, &q->comp);
	if (!err)
		err = ring_map(q, RING_RX, XDP_PGOFF_RX_RING, &off.rx, rx_size,
			       sizeof(struct xdp_desc), NULL, &q->rx);
	if (!err)
		err = ring_map(q, RING_TX, XDP_PGOFF_TX_RING, &off.tx, tx_size,
			       sizeof(struct xdp_desc), &q->tx, NULL);
	return err;
}

/* Unmap @q's rings and close its socket; again is a no-op. */
static void queue_close(struct ucm_xsk_queue *q)
{
	for (unsigned int r = 0; r < RING__MAX; r++) {
		if (q->map[r])
			munmap(q->map[r], q->map_len[r]);
		q->map[r] = NULL;
	}
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
}

/* A socket closed a moment ago (a restart after a crash) leaves its
 * queue busy until the kernel has torn it down, asynchronously: retry for
 * up to a second, as the kernel's own selftests do. */
#define UCM_XSK_BIND_RETRIES	40
#define UCM_XSK_BIND_RETRY_US	25000

/* Bind @q, its rings set up. Queue 0 binds in the mode of @bind_flags
 * (neither XDP_ZEROCOPY nor XDP_COPY: the kernel's choice); the others
 * share its UMEM, and the kernel gives them its mode and need_wakeup. */
static int queue_bind(struct ucm_xsk *x, struct ucm_xsk_queue *q, uint16_t bind_flags)
{
	struct sockaddr_xdp sa = {
		.sxdp_family = AF_XDP,
		.sxdp_ifindex = (uint32_t)x->ifindex,
		.sxdp_queue_id = q->id,
		.sxdp_flags = bind_flags,
	};
	int err, tries = 0;

	if (q != &x->q[0]) {
		sa.sxdp_flags = XDP_SHARED_UMEM;
		sa.sxdp_shared_umem_fd = (uint32_t)x->q[0].fd;
	}
	for (;;) {
		err = bind(q->fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
		if (err != -EBUSY || ++tries > UCM_XSK_BIND_RETRIES)
			break;
		usleep(UCM_XSK_BIND_RETRY_US);
	}
	if (err)
		return err;
	q->bind_flags = bind_flags;
	/* A socket that shares the UMEM takes its first socket's mode,
	 * multi-buffer included. */
	q->sg = q == &x->q[0] ? !!(bind_flags & XDP_USE_SG) : x->q[0].sg;
	return 0;
}

static bool sock_zerocopy(int fd)
{
	struct xdp_options opt = {};
	socklen_t len = sizeof(opt);

	return !getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opt, &len) &&
	       (opt.flags & XDP_OPTIONS_ZEROCOPY);
}

static const char *bind_hint(int err, uint32_t mode)
{
	switch (-err) {
	case EOPNOTSUPP:
		return mode == UCM_XSK_ZEROCOPY ?
		       "the driver has no zero-copy AF_XDP support: use copy mode" :
		       "the driver has no AF_XDP support";
	case EBUSY:
		return "the queue is already bound to another AF_XDP socket (or its last one is still closing: retry)";
	case EPERM:
		return "an AF_XDP socket needs CAP_NET_RAW (the XDP program CAP_NET_ADMIN and CAP_BPF): run as root";
	case ENETDOWN:
		return "the interface is down: ip link set dev IFACE up";
	case ENOMEM:
	case ENOBUFS:
		return "cannot pin the UMEM: raise RLIMIT_MEMLOCK (ulimit -l) or use fewer frames";
	default:
		return "see the kernel log";
	}
}

/* The first of @queues (@nqueues; NULL: queue 0) at or past @have, or -1. */
static int64_t queue_missing(const uint32_t *queues, uint32_t nqueues, int have)
{
	for (uint32_t i = 0; i < nqueues; i++) {
		uint32_t qid = queues ? queues[i] : 0;

		if (have <= 0 || qid >= (uint32_t)have)
			return qid;
	}
	return -1;
}

/* Every queue of @queues is one of @ifname's RX queues, or (@tx) its TX
 * queues: 0, or -EINVAL after a message naming those it has. */
static int check_queues(const char *ifname, const uint32_t *queues, uint32_t nqueues, bool tx)
{
	int have = count_queues(ifname, tx ? "tx" : "rx");
	int64_t q = queue_missing(queues, nqueues, have);
	const char *dir = tx ? "TX" : "RX";

	if (q < 0)
		return 0;
	if (have <= 0)
		pr_warn("xsk: %s shows no %s queue in /sys/class/net/%s/queues%s\n", ifname, dir,
			ifname, tx ? ", and the way back sends on its queues" : "");
	else
		pr_warn("xsk: %s has %s queues 0-%d, not queue %u%s (ethtool -L %s combined N%s)\n",
			ifname, dir, have - 1, (uint32_t)q,
			tx ? ", where the way back would send: the kernel sends nothing there" : "",
			ifname, tx ? ", a veth's numtxqueues, or fewer queues" : " adds more");
	return -EINVAL;
}

int ucm_xsk_check_queues(const char *ifname, const uint32_t *queues, uint32_t nqueues)
{
	return check_queues(ifname, queues, nqueues, false);
}

int ucm_xsk_check_tx_queues(const char *ifname, const uint32_t *queues, uint32_t nqueues)
{
	return check_queues(ifname, queues, nqueues, true);
}

/* Queue @i's socket (queue 0's exists: it holds the UMEM), its rings, and
 * its bind in the mode asked for: auto lets the kernel try zero-copy on the
 * first queue and fall back to copy; the rest follow the mode it got, since
 * they share its UMEM. */
static int queue_open(struct ucm_xsk *x, const struct ucm_xsk_opts *o, uint32_t i)
{
	uint16_t bind = o->flags & UCM_XSK_F_NO_NEED_WAKEUP ? 0 : XDP_USE_NEED_WAKEUP;
	struct ucm_xsk_queue *q = &x->q[i];
	uint32_t mode = o->mode;
	int err;

	q->x = x;
	q->id = o->queues ? o->queues[i] : 0;
	q->chain.max = o->max_frags;
	q->pool = ucm_umem__pool(x->umem, i);
	if (i > 0) {
		q->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
		if (q->fd < 0) {
			err = -errno;
			pr_warn("xsk: no AF_XDP socket for %s queue %u: %s (%s)\n",
				o->ifname, q->id, strerror(-err), bind_hint(err, mode));
			return err;
		}
	}
	err = queue_rings(x, q, o->rx_size, min(o->rx_size, (uint32_t)UCM_XSK_TX_RING));
	if (err) {
		pr_warn("xsk: cannot set up the rings of %s queue %u: %s (%s)\n",
			o->ifname, q->id, strerror(-err), bind_hint(err, mode));
		return err;
	}
	if (i > 0 && mode == UCM_XSK_AUTO)
		mode = x->zerocopy ? UCM_XSK_ZEROCOPY : UCM_XSK_COPY;
	/* Auto: neither mode flag; the kernel tries zero-copy and falls back
	 * to copy itself, in one bind, and XDP_OPTIONS says which it took. */
	if (mode != UCM_XSK_AUTO)
		bind |= mode == UCM_XSK_ZEROCOPY ? XDP_ZEROCOPY : XDP_COPY;
	if (o->flags & UCM_XSK_F_SG)
		bind |= XDP_USE_SG;
	err = queue_bind(x, q, bind);
	if (err == -EOPNOTSUPP && (o->flags & UCM_XSK_F_SG) && mode == UCM_XSK_ZEROCOPY) {
		pr_warn("xsk: cannot bind %s queue %u in zero-copy with multi-buffer (XDP_USE_SG): the driver has no zero-copy AF_XDP%s; use copy mode, or lower %s's MTU to what one frame holds\n",
			o->ifname, q->id, x->zc_max_segs == 1 ? " for packets of several frames (its netdev record: 1 segment)" :
			", or none for packets of several frames", o->ifname);
		return err;
	}
	if (err == -EINVAL && (o->flags & UCM_XSK_F_SG)) {
		pr_warn("xsk: cannot bind %s queue %u with multi-buffer (XDP_USE_SG): the kernel has no multi-buffer AF_XDP (Linux 6.6 and later), or the driver none in this mode; lower %s's MTU to what one frame holds, so that no packet needs several\n",
			o->ifname, q->id, o->ifname);
		return err;
	}
	if (err) {
		pr_warn("xsk: cannot bind %s queue %u: %s (%s)\n", o->ifname,
			q->id, strerror(-err), bind_hint(err, mode));
		return err;
	}
	if (i == 0) {
		x->zerocopy = sock_zerocopy(q->fd);
		if (mode == UCM_XSK_AUTO && !x->zerocopy)
			pr_info("xsk: %s: the driver gave no zero-copy: copy mode\n", o->ifname);
		/* The kernel took the bind: it has multi-buffer zero-copy
		 * (Linux 6.6), whose netdev record says the driver's bound. */
		if (x->zerocopy && q->sg)
			pr_info("xsk: %s: zero-copy with multi-buffer: packets of %u descriptors at most%s\n",
				o->ifname, ucm_xsk_tx_frames(x),
				x->zc_max_segs ? "" : " (the driver's bound unknown: the kernel's)");
	}
	if (o->flags & UCM_XSK_F_BUSY_POLL)
		q->busy_poll = queue_busy_poll(q);
	return 0;
}

/*
 * Where TX checksum requests can work, asked before the UMEM is registered
 * (its metadata room is for every packet sent, so it is only taken where a
 * request can be honoured). Copy mode hands the driver an skb with the
 * checksum partial but no network header, which a NIC driver's checksum
 * offload reads: only veth's copy path is known to be right (it hands the
 * skb to its peer as it is; the stack finishes it where the peer's side
 * does not offload), and it is the one tested. Zero-copy: the driver says
 * so in its xsk-features (Linux 6.8).
 */
static void tx_csum_where(struct ucm_xsk *x, const struct ucm_xsk_opts *o,
			  const struct ucm_netdev_info *nd)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { .ifr_data = (void *)&info };
	int fd;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	x->copy_csum = fd >= 0 && !ioctl(fd, SIOCETHTOOL, &ifr) && !strcmp(info.driver, "veth");
	if (fd >= 0)
		close(fd);
	x->zc_csum = !nd->xsk_err && (nd->xsk_features & UCM_NETDEV_XSK_TX_CHECKSUM);
}

/* What the driver says (netdev.h), asked once where it matters: TX
 * checksum requests, and the descriptors a packet may take in zero-copy
 * with multi-buffer (x->zc_max_segs: what ucm_xsk_tx_frames() reads, in
 * that mode only). Not said: no checksum requests, no bound. */
static void netdev_ask(struct ucm_xsk *x, const struct ucm_xsk_opts *o)
{
	struct ucm_netdev_info nd = { .xsk_err = -EOPNOTSUPP };

	if (!(o->flags & (UCM_XSK_F_TX_CSUM | UCM_XSK_F_SG)))
		return;
	if (ucm_netdev_info(x->ifindex, &nd))
		nd = (struct ucm_netdev_info){ .xsk_err = -EOPNOTSUPP };
	x->zc_max_segs = nd.zc_max_segs;
	if (o->flags & UCM_XSK_F_TX_CSUM)
		tx_csum_where(x, o, &nd);
}

/* The UMEM on queue 0's new socket: with TX metadata when asked for, where
 * a request can be honoured and the kernel has it (Linux 6.11, or 6.8's
 * stable updates), else without. */
static int umem_open(struct ucm_xsk *x, const struct ucm_xsk_opts *o)
{
	int fd, err;

	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		pr_warn("xsk: no AF_XDP socket: %s (%s)\n", strerror(-err),
			bind_hint(err, o->mode));
		return err;
	}
	x->q[0].fd = fd;
	netdev_ask(x, o);
	if (x->copy_csum || x->zc_csum) {
		err = umem_register(x, fd, UCM_TXQ_META_LEN);
		x->tx_meta = !err;
		if (err == -EINVAL)
			pr_info("xsk: %s: the kernel takes no TX metadata (Linux 6.11 has it): checksums in software\n",
				o->ifname);
	}
	err = x->tx_meta ? 0 : umem_register(x, fd, 0);
	if (err)
		pr_warn("xsk: cannot register a UMEM of %llu bytes: %s (%s)\n",
			(unsigned long long)x->size, strerror(-err),
			bind_hint(err, o->mode));
	return err;
}

/* Whether TX checksum requests are taken in the mode the sockets got
 * (ucm_xsk__tx_csum()), said once. */
static void tx_csum_decide(struct ucm_xsk *x, const struct ucm_xsk_opts *o)
{
	if (!(o->flags & UCM_XSK_F_TX_CSUM))
		return;
	x->tx_csum = x->tx_meta && (x->zerocopy ? x->zc_csum : x->copy_csum);
	if (!x->tx_meta && (x->copy_csum || x->zc_csum))
		return;	/* the kernel refused the metadata: said then */
	if (x->tx_csum)
		pr_info("xsk: %s: TX checksum offload: on (%s)\n", o->ifname,
			x->zerocopy ? "zero-copy: the driver takes checksum requests" :
			"copy mode on veth: the kernel finishes each checksum");
	else if (x->zerocopy)
		pr_info("xsk: %s: zero-copy, and the driver takes no TX checksum requests (netdev xsk-features): checksums in software\n",
			o->ifname);
	else if (!x->copy_csum)
		pr_info("xsk: %s: copy mode: TX checksum requests are trusted on veth only (a NIC driver's offload needs what the copy path leaves out): checksums in software\n",
			o->ifname);
}

const char *ucm_if_primary(const char *ifname, char *buf)
{
	unsigned int idx = if_nametoindex(ifname);

	if (!idx || !if_indextoname(idx, buf) || !strcmp(buf, ifname))
		return ifname;
	pr_info("xsk: %s is an altname of %s\n", ifname, buf);
	return buf;
}

struct ucm_xsk *ucm_xsk__open(const struct ucm_xsk_opts *opts)
{
	char ifname[IF_NAMESIZE];
	struct ucm_xsk_opts o;
	struct ucm_xsk *x;
	uint32_t i;
	int err;

	err = ucm_xsk_parse_opts(opts, &o);
	if (err)
		return ucm_err_ptr(err);
	o.ifname = ucm_if_primary(o.ifname, ifname);
	x = calloc(1, sizeof(*x));
	if (!x)
		return ucm_err_ptr(ucm_oom("the sockets"));
	x->ifindex = if_nametoindex(o.ifname);
	if (!x->ifindex) {
		pr_warn("xsk: no interface named '%s' (ip link shows the names)\n",
			o.ifname);
		err = -ENODEV;
		goto out_free;
	}
	err = ucm_xsk_check_queues(o.ifname, o.queues, o.nqueues);
	if (err)
		goto out_free;
	{
		int node = frames_node(o.ifname);
		UCM_OPTS(ucm_umem_opts, uo, .frame_size = o.frame_size,
			 .npools = o.nqueues, .frames_per_pool = o.frames_per_queue,
			 .flags = o.umem_flags | (node >= 0 ? UCM_UMEM_F_NUMA_NODE : 0),
			 .numa_node = node >= 0 ? node : 0);

		x->umem = ucm_umem__create(&uo);
		if (!x->umem && node >= 0) {
			/* A preference, not a need (a container may forbid
			 * mbind, a cpuset the node): without a node, then. */
			pr_warn("xsk: %s: the frames go where the kernel puts them\n", o.ifname);
			uo.flags &= ~UCM_UMEM_F_NUMA_NODE;
			x->umem = ucm_umem__create(&uo);
		} else if (node >= 0) {
			pr_info("xsk: %s: the frames on NUMA node %d, the device's\n", o.ifname, node);
		}
	}
	if (!x->umem) {
		err = -errno;
		goto out_free;
	}
	x->area = ucm_umem__area(x->umem);
	x->size = ucm_umem__size(x->umem);
	x->frame_size = ucm_umem__frame_size(x->umem);
	x->fill_size = o.fill_size;
	x->nqueues = o.nqueues;
	x->q = calloc(o.nqueues, sizeof(*x->q));
	if (!x->q) {
		err = ucm_oom("the sockets' queues");
		goto out_umem;	/* nothing of x->q to close */
	}

	for (i = 0; i < o.nqueues; i++) {
		x->q[i].fd = -1;
		x->q[i].wake_fd = -1;
	}
	err = umem_open(x, &o);
	if (err)
		goto out_socks;
	for (i = 0; i < o.nqueues; i++) {
		err = queue_open(x, &o, i);
		if (err)
			goto out_socks;
	}
	tx_csum_decide(x, &o);
	return x;

out_socks:
	for (i = o.nqueues; i--;)
		queue_close(&x->q[i]);
	free(x->q);
out_umem:
	ucm_umem__destroy(x->umem, 0);
out_free:
	free(x);
	return ucm_err_ptr(err);
}

/* How often a destroy looks again for frames still out. */
#define XSK_RECLAIM_RETRY_MS	10

int ucm_xsk__destroy(struct ucm_xsk *x, unsigned int timeout_ms)
{
	struct ucm_pool *pools[UCM_XSK_MAX_QUEUES];
	uint64_t held;
	uint32_t i;
	int ret;

	if (!x)
		return 0;
	/* The RX threads must be done: reclaiming drains their caches. */
	for (i = 0; i < x->nqueues; i++) {
		uint64_t owner = __atomic_load_n(&x->q[i].pool->owner,
						 __ATOMIC_ACQUIRE);

		if (owner && owner != ucm_self()) {
			pr_warn("xsk: queue %u's RX thread still owns its pool: stop it (it clears its ownership last) before destroying\n",
				x->q[i].id);
			return ucm_err(-EBUSY);
		}
	}
	/* A packet half taken when its RX thread stopped goes home. */
	for (i = 0; i < x->nqueues; i++)
		ucm_xsk_queue_chain_end(&x->q[i]);
	/* The kernel lets go of the fill and RX rings with the sockets. Each
	 * step is done once: a destroy that failed can be called again. */
	for (i = x->nqueues; i--;)
		queue_close(&x->q[i]);	/* queue 0's, the UMEM's, last */
	/* All pools at once: a TX ring may hold another queue's frames (a
	 * worker's verdict sends on its own queue whatever the packet's). */
	for (i = 0, held = 0; i < x->nqueues; i++) {
		struct ucm_xsk_queue *q = &x->q[i];

		pools[i] = q->pool;
		held += (q->posted - q->taken) + (q->tx_posted - q->tx_done);
	}
	/* Frames an application's thread still holds, or returns on their
	 * way, make more off the pools than the kernel held: they are
	 * waited for, @timeout_ms at most, as the UMEM's destroy waits. */
	for (uint64_t end = ucm_now_ns() + timeout_ms * 1000000ull; held;) {
		bool last = ucm_now_ns() >= end;

		ret = ucm_pools_reclaim(pools, x->nqueues, held, UCM_LOC_KERNEL, !last);
		if (ret == -EBUSY && !last) {
			nanosleep(&(struct timespec){ .tv_nsec = XSK_RECLAIM_RETRY_MS * 1000000 },
				  NULL);
			continue;
		}
		if (ret)
			return ucm_err(ret);	/* nothing freed: see the log */
		for (i = 0; i < x->nqueues; i++) {
			x->q[i].taken = x->q[i].posted;
			x->q[i].tx_done = x->q[i].tx_posted;
		}
		break;
	}
	ret = ucm_umem__destroy(x->umem, timeout_ms);
	if (ret)
		return ucm_err(ret);	/* memory stays: frames are out */
	free(x->q);
	free(x);
	return 0;
}

struct ucm_umem *ucm_xsk__umem(struct ucm_xsk *x)
{
	return x->umem;
}

uint32_t ucm_xsk__nqueues(const struct ucm_xsk *x)
{
	return x->nqueues;
}

int ucm_xsk__ifindex(const struct ucm_xsk *x)
{
	return x->ifindex;
}

bool ucm_xsk__zerocopy(const struct ucm_xsk *x)
{
	return x->zerocopy;
}

bool ucm_xsk__tx_csum(const struct ucm_xsk *x)
{
	return x->tx_csum;
}

struct ucm_xsk_queue *ucm_xsk__queue(struct ucm_xsk *x, uint32_t i)
{
	return i < x->nqueues ? &x->q[i] : ucm_err_ptr(-EINVAL);
}
