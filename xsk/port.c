// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * AF_XDP sockets: one UMEM per interface (a ucm_umem carved per queue), one
 * socket per RX queue sharing it (XDP_SHARED_UMEM), each with its own fill
 * and completion rings. The sockets are set up here from the kernel's uapi;
 * libxdp gives the rings' inline accessors (<xdp/xsk.h>), and ucm_xdp
 * attaches our program. libxdp's own socket setup cannot register a UMEM
 * with TX metadata (1.3.1, Debian 12), which the way back's checksum
 * offload needs (UCM_XSK_F_TX_CSUM).
 *
 * A frame's trip: pool -> fill ring (UCM_LOC_KERNEL) -> RX ring ->
 * validated and handed on (UCM_LOC_APP) -> cpumap -> back to the pool.
 * On the way out: pool -> filled by a worker (UCM_LOC_APP, see ucm_txq) ->
 * TX ring (UCM_LOC_KERNEL) -> completion ring -> back to the pool, in bulk,
 * by the queue's RX thread.
 * Each queue counts the frames it posted and took back, on both paths, so
 * that ucm_xsk__destroy can prove the ones it reclaims from the kernel are exactly the
 * ones the kernel held.
 */
#include <net/if.h>
#include <poll.h>
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
#include "engine/cpumap_internal.h"
#include "io/cpus.h"
#include "io/netdev.h"
#include "ucpumap/cpumap.h"
#include "ucpumap/txq.h"
#include "ucpumap/xsk.h"

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

#define UCM_XSK_DEFAULT_RING	2048
#define UCM_XSK_MAX_RING	16384
/* Busy-poll time per poll (SO_BUSY_POLL, microseconds); the budget
 * (SO_BUSY_POLL_BUDGET) is one RX batch. */
#define UCM_XSK_BUSY_POLL_US	20

/* Linux 6.11 (and 6.8's stable updates): a UMEM with TX metadata in front
 * of each packet, and a TX descriptor that says it carries some. Older
 * headers lack them. */
#ifndef XDP_UMEM_TX_METADATA_LEN
#define XDP_UMEM_TX_METADATA_LEN	(1 << 2)
#endif
#ifndef XDP_TX_METADATA
#define XDP_TX_METADATA			(1 << 1)
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
_Static_assert(UCM_TXQ_META_LEN % 8 == 0, "the kernel takes multiples of 8");
_Static_assert(sizeof(struct ucm_txq_meta) == UCM_TXQ_META_LEN, "the metadata fills its room");

/* A socket's mapped rings, unmapped when it closes. */
enum { RING_RX, RING_TX, RING_FILL, RING_COMP, RING__MAX };

#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif

/*
 * Concurrency contract: everything below is the queue's RX thread's, but
 * stats, which it publishes with WRITE_ONCE for any reader; the control
 * thread uses the rest only before the RX thread starts and after it
 * stopped.
 */
struct ucm_xsk_queue {
	struct ucm_xsk *x;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	struct xsk_ring_prod tx;
	struct ucm_pool *pool;
	uint32_t id;
	int fd;			/* queue 0's is the UMEM's */
	uint16_t bind_flags;	/* XDP_USE_NEED_WAKEUP or 0 */
	void *map[RING__MAX];
	size_t map_len[RING__MAX];
	uint64_t posted;	/* frames given to the fill ring, ever */
	uint64_t taken;		/* frames taken back from the RX ring, ever */
	uint64_t tx_posted;	/* frames given to the TX ring, ever */
	uint64_t tx_done;	/* frames taken back from the completion ring */
	ucm_steer_fn steer_fn;	/* the application's steering, or NULL */
	void *steer_ctx;
	uint64_t rx_stamp;	/* the last RX batch's first arrival stamp, or 0 */
	bool fill_dry;		/* the last refill found the pool short */
	bool busy_poll;		/* UCM_XSK_F_BUSY_POLL: the spin polls the device */
	struct ucm_xsk_stats stats;
};

struct ucm_xsk {
	struct ucm_umem *umem;
	void *area;
	uint64_t size;
	uint32_t frame_size;
	uint32_t fill_size;
	int ifindex;
	bool zerocopy;
	bool tx_meta;		/* the UMEM has UCM_TXQ_META_LEN in front of TX packets */
	bool tx_csum;		/* and the kernel finishes the checksums they ask for */
	bool copy_csum;		/* the driver's copy path is known to finish them */
	bool zc_csum;		/* the driver takes them in zero-copy (xsk-features) */
	uint32_t nqueues;
	struct ucm_xsk_queue *q;
};

static int xsk_parse_opts(const struct ucm_xsk_opts *in, struct ucm_xsk_opts *o)
{
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
	if (!o->frames_per_queue)
		o->frames_per_queue = 8192;	/* covers the default rings:
						 * xsk.h says why */
	if (!o->rx_size)
		o->rx_size = UCM_XSK_DEFAULT_RING;
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
		pr_warn("xsk: %u frames per queue cannot cover a fill ring of %u and an RX ring of %u: give at least %u\n",
			o->frames_per_queue, o->fill_size, o->rx_size,
			o->fill_size + o->rx_size);
		return -EINVAL;
	}
	if (o->mode > UCM_XSK_ZEROCOPY ||
	    (o->flags & ~(UCM_XSK_F_NO_NEED_WAKEUP | UCM_XSK_F_BUSY_POLL |
			   UCM_XSK_F_TX_CSUM))) {
		pr_warn("xsk: unknown mode %u or flags 0x%x\n", o->mode, o->flags);
		return -EINVAL;
	}
	if (o->umem_flags & UCM_UMEM_F_NUMA_NODE) {
		pr_warn("xsk: umem_flags: the NUMA node is the device's, taken by the open itself: leave UCM_UMEM_F_NUMA_NODE out\n");
		return -EINVAL;
	}
	return 0;
}

static int queue_exists(const char *ifname, uint32_t q)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u", ifname, q);
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

static int count_rx_queues(const char *ifname)
{
	int n = 0;

	while (n < 4096 && queue_exists(ifname, n))
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
		return "AF_XDP needs CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW: run as root";
	case ENETDOWN:
		return "the interface is down: ip link set dev IFACE up";
	case ENOMEM:
	case ENOBUFS:
		return "cannot pin the UMEM: raise RLIMIT_MEMLOCK (ulimit -l) or use fewer frames";
	default:
		return "see the kernel log";
	}
}

/* Every queue asked for must be one the interface has. */
static int check_queues(const struct ucm_xsk_opts *o)
{
	int nrx = count_rx_queues(o->ifname);
	uint32_t i, qid;

	for (i = 0; i < o->nqueues; i++) {
		qid = o->queues ? o->queues[i] : 0;
		if ((int)qid >= nrx) {
			pr_warn("xsk: %s has RX queues 0-%d, not queue %u (ethtool -L %s combined N adds more)\n",
				o->ifname, nrx - 1, qid, o->ifname);
			return -EINVAL;
		}
	}
	return 0;
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
	err = queue_bind(x, q, bind);
	if (err) {
		pr_warn("xsk: cannot bind %s queue %u: %s (%s)\n", o->ifname,
			q->id, strerror(-err), bind_hint(err, mode));
		return err;
	}
	if (i == 0) {
		x->zerocopy = sock_zerocopy(q->fd);
		if (mode == UCM_XSK_AUTO && !x->zerocopy)
			pr_info("xsk: %s: the driver gave no zero-copy: copy mode\n", o->ifname);
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
static void tx_csum_where(struct ucm_xsk *x, const struct ucm_xsk_opts *o)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { .ifr_data = (void *)&info };
	uint64_t feat = 0;
	int fd;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	x->copy_csum = fd >= 0 && !ioctl(fd, SIOCETHTOOL, &ifr) && !strcmp(info.driver, "veth");
	if (fd >= 0)
		close(fd);
	x->zc_csum = !ucm_netdev_xsk_features(x->ifindex, &feat) &&
		     (feat & UCM_NETDEV_XSK_TX_CHECKSUM);
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
	if (o->flags & UCM_XSK_F_TX_CSUM)
		tx_csum_where(x, o);
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

struct ucm_xsk *ucm_xsk__open(const struct ucm_xsk_opts *opts)
{
	struct ucm_xsk_opts o;
	struct ucm_xsk *x;
	uint32_t i;
	int err;

	err = xsk_parse_opts(opts, &o);
	if (err)
		return ucm_err_ptr(err);
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
	err = check_queues(&o);
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
			 * mbind, a cpuset the node): as before, then. */
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

	for (i = 0; i < o.nqueues; i++)
		x->q[i].fd = -1;
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

int ucm_xsk__destroy(struct ucm_xsk *x, unsigned int timeout_ms)
{
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
	/* The kernel lets go of the fill and RX rings with the sockets. Each
	 * step is done once: a destroy that failed can be called again. */
	for (i = x->nqueues; i--;)
		queue_close(&x->q[i]);	/* queue 0's, the UMEM's, last */
	for (i = 0; i < x->nqueues; i++) {
		struct ucm_xsk_queue *q = &x->q[i];
		uint64_t held = (q->posted - q->taken) + (q->tx_posted - q->tx_done);

		if (!held)
			continue;
		ret = ucm_pool_reclaim(q->pool, (uint32_t)held, UCM_LOC_KERNEL);
		if (ret)
			return ucm_err(ret);	/* nothing freed: see the log */
		q->taken = q->posted;
		q->tx_done = q->tx_posted;
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

int ucm_xsk_queue__fd(const struct ucm_xsk_queue *q)
{
	return q->fd;
}

uint32_t ucm_xsk_queue__id(const struct ucm_xsk_queue *q)
{
	return q->id;
}

struct ucm_pool *ucm_xsk_queue__pool(struct ucm_xsk_queue *q)
{
	return q->pool;
}

int ucm_xsk_queue__stats(const struct ucm_xsk_queue *q, struct ucm_xsk_stats *st,
			 size_t sz)
{
	struct xdp_statistics ks = {};
	socklen_t len = sizeof(ks);
	struct ucm_xsk_stats o = {};
	int err = 0;

	if (!q || !st || !sz)
		return ucm_err(-EINVAL);

	o.rx = READ_ONCE(q->stats.rx);
	o.rx_bad_desc = READ_ONCE(q->stats.rx_bad_desc);
	o.fill = READ_ONCE(q->stats.fill);
	o.fill_short = READ_ONCE(q->stats.fill_short);
	o.wakeups = READ_ONCE(q->stats.wakeups);
	o.rx_steer_err = READ_ONCE(q->stats.rx_steer_err);
	/* Completions before sends: tx_completed never passes tx, so a live
	 * reader's tx - tx_completed (pending) cannot wrap. S2: pairs with S1
	 * in ucm_xsk_queue__complete(). */
	o.tx_completed = __atomic_load_n(&q->stats.tx_completed, __ATOMIC_ACQUIRE);
	o.tx = READ_ONCE(q->stats.tx);
	o.tx_ring_full = READ_ONCE(q->stats.tx_ring_full);
	o.tx_bad_desc = READ_ONCE(q->stats.tx_bad_desc);
	o.tx_kicks = READ_ONCE(q->stats.tx_kicks);
	o.tx_kick_err = READ_ONCE(q->stats.tx_kick_err);
	o.tx_comp_bulks = READ_ONCE(q->stats.tx_comp_bulks);
	o.tx_comp_direct = READ_ONCE(q->stats.tx_comp_direct);
	for (int b = 0; b < UCM_LAT_BUCKETS; b++)
		o.rx_hist[b] = READ_ONCE(q->stats.rx_hist[b]);
	o.rx_lat_ns = READ_ONCE(q->stats.rx_lat_ns);
	o.rx_batches = READ_ONCE(q->stats.rx_batches);
	o.busy_polls = READ_ONCE(q->stats.busy_polls);
	if (q->fd < 0 || getsockopt(q->fd, SOL_XDP, XDP_STATISTICS, &ks, &len)) {
		/* The queue's own counters all the same; the kernel's read 0. */
		err = q->fd < 0 ? -EBADF : -errno;
		goto out;
	}
	o.kernel_rx_dropped = ks.rx_dropped;
	o.kernel_rx_invalid_descs = ks.rx_invalid_descs;
	o.kernel_tx_invalid_descs = ks.tx_invalid_descs;
	/* Older kernels return the first three fields only. */
	if (len >= offsetofend(struct xdp_statistics, tx_ring_empty_descs)) {
		o.kernel_rx_ring_full = ks.rx_ring_full;
		o.kernel_rx_fill_ring_empty_descs = ks.rx_fill_ring_empty_descs;
		o.kernel_tx_ring_empty_descs = ks.tx_ring_empty_descs;
	}
out:
	ucm_stats_out(st, sz, &o, sizeof(o));
	return ucm_err(err);
}

/* ---- the RX thread's side ------------------------------------------------- */

int ucm_xsk_queue__refill(struct ucm_xsk_queue *q)
{
	uint64_t addrs[UCM_XSK_RX_BATCH];
	uint32_t room, idx = 0, i, total = 0;
	int n;

	room = xsk_prod_nb_free(&q->fill, q->x->fill_size);
	q->fill_dry = false;
	while (room) {
		uint32_t want = min(room, (uint32_t)UCM_XSK_RX_BATCH);

		n = ucm_pool__alloc_bulk(q->pool, addrs, want);
		if (n < 0)
			return n;
		if ((uint32_t)n < want) {
			STAT_ADD(q->stats.fill_short, 1);
			q->fill_dry = true;
		}
		if (!n)
			break;
		/* nb_free said there is room, so reserve takes all n; if it
		 * ever did not, the frames go straight back, never lost. */
		if (xsk_ring_prod__reserve(&q->fill, n, &idx) != (uint32_t)n) {
			for (i = 0; i < (uint32_t)n; i++)
				ucm_pool__put(q->pool, addrs[i]);
			break;
		}
		for (i = 0; i < (uint32_t)n; i++)
			*xsk_ring_prod__fill_addr(&q->fill, idx + i) = addrs[i];
		ucm_frame_move_bulk(q->x->umem, addrs, n, UCM_LOC_APP,
				    UCM_LOC_KERNEL);
		xsk_ring_prod__submit(&q->fill, n);
		room -= n;
		total += n;
	}
	if (total) {
		q->posted += total;
		STAT_ADD(q->stats.fill, total);
	}
	if (xsk_ring_prod__needs_wakeup(&q->fill)) {
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		STAT_ADD(q->stats.wakeups, 1);
	}
	return total;
}

/*
 * Fetch the metadata line of the packet RX_PREFETCH places ahead. The
 * kernel wrote it (the NIC, or the copy on the softirq's CPU, often not
 * ours), so each read of it is a miss; fetched early, a batch's misses
 * overlap instead of following one another, as the worker's do (and
 * drivers' for headers). For write: we clear the magic. 4 in flight: 8
 * measured the same (the commit that brought it gives both profiles).
 * Only an address in the UMEM.
 */
#define RX_PREFETCH	4

static inline void rx_prefetch(const struct ucm_xsk *x, const struct ucm_umem_geom *g,
			       const struct xdp_desc *rd)
{
	if (rd->addr >= sizeof(struct ucm_xdp_meta) && rd->addr < g->size)
		__builtin_prefetch((char *)x->area + rd->addr - sizeof(struct ucm_xdp_meta), 1);
}

uint32_t ucm_xsk_queue__rx(struct ucm_xsk_queue *q, struct ucm_xsk_desc *d,
			   uint32_t max)
{
	struct ucm_xsk *x = q->x;
	const struct ucm_umem_geom g = ucm_umem_geom_of(x->umem);
	const uint32_t pool = q->pool->idx;
	uint32_t idx = 0, n, i, good = 0, bad = 0;
	enum ucm_umem_desc v;

	q->rx_stamp = 0;
	n = xsk_ring_cons__peek(&q->rx, max, &idx);
	for (i = 0; i < n && i < RX_PREFETCH; i++)
		rx_prefetch(x, &g, xsk_ring_cons__rx_desc(&q->rx, idx + i));
	for (i = 0; i < n; i++) {
		const struct xdp_desc *rd = xsk_ring_cons__rx_desc(&q->rx, idx + i);
		uint64_t addr = rd->addr, base;
		struct ucm_xdp_meta *meta;
		struct ucm_xdp_stamp *st;

		if (i + RX_PREFETCH < n)
			rx_prefetch(x, &g, xsk_ring_cons__rx_desc(&q->rx, idx + i + RX_PREFETCH));
		/* umem_desc.h says what a good one is. A bad one is counted;
		 * its frame, if it is ours, goes straight back to the pool. */
		v = ucm_umem_desc_check(&g, pool, addr, rd->len, &base);
		if (unlikely(v != UCM_UMEM_DESC_GOOD)) {
			bad++;
			if (v == UCM_UMEM_DESC_BAD) {
				q->taken++;
				ucm_frame_move(x->umem, base, UCM_LOC_KERNEL,
					       UCM_LOC_APP);
				ucm_pool__put(q->pool, base);
			}
			continue;
		}
		q->taken++;
		ucm_frame_move(x->umem, base, UCM_LOC_KERNEL, UCM_LOC_APP);
		d[good].addr = addr;
		d[good].len = rd->len;
		d[good].worker = -1;
		if (addr - base >= sizeof(*meta)) {
			meta = ucm_umem__frame(x->area, addr - sizeof(*meta));
			if (meta->magic == UCM_XDP_META_MAGIC ||
			    meta->magic == UCM_XDP_META_MAGIC_STAMP) {
				d[good].worker = meta->worker;
				/* The batch's first arrival: one stamp per
				 * batch, not per packet. */
				if (meta->magic == UCM_XDP_META_MAGIC_STAMP && !q->rx_stamp &&
				    addr - base >= sizeof(*meta) + sizeof(*st)) {
					st = (void *)((char *)meta - sizeof(*st));
					q->rx_stamp = st->ns;
				}
				/* A recycled frame must not show it again
				 * if the next packet comes without one. */
				meta->magic = 0;
			}
		}
		good++;
	}
	if (n) {
		xsk_ring_cons__release(&q->rx, n);
		STAT_ADD(q->stats.rx, n);
		if (bad)
			STAT_ADD(q->stats.rx_bad_desc, bad);
	}
	return good;
}

/* ---- the way out: TX and completions (the RX thread's too) --------------- */

/* Kick the kernel into sending: copy mode sends in this syscall; zero-copy
 * drivers are woken. EAGAIN/EBUSY/ENOBUFS: the kernel is busy, the next
 * kick sends what is left. */
static void tx_kick(struct ucm_xsk_queue *q)
{
	STAT_ADD(q->stats.tx_kicks, 1);
	if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
	    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
		STAT_ADD(q->stats.tx_kick_err, 1);
}

/* Without need_wakeup the kernel must be kicked every time; with busy
 * polling too: each kick is a busy poll, which runs the driver's TX while
 * its interrupts are deferred (need_wakeup tells of the interrupt-driven
 * path only; xdpsock kicks every time then as well). */
static bool tx_wants_kick(struct ucm_xsk_queue *q)
{
	return !(q->bind_flags & XDP_USE_NEED_WAKEUP) || q->busy_poll ||
	       xsk_ring_prod__needs_wakeup(&q->tx);
}

/* A descriptor the kernel would take without ever completing it, losing
 * its frame (or, for a request it cannot honour, stall the ring on):
 * with TX metadata, a packet less than UCM_TXQ_META_LEN into its frame;
 * a checksum request where there is none to make. */
static bool tx_desc_bad(const struct ucm_xsk *x, uint64_t d)
{
	uint64_t addr = ucm_desc_addr(ucm_txq_desc_plain(d));

	if ((d & UCM_TXQ_DESC_CSUM) && !x->tx_csum)
		return true;
	return x->tx_meta && addr - ucm_umem_base(x->umem, addr) < UCM_TXQ_META_LEN;
}

uint32_t ucm_xsk_queue__tx(struct ucm_xsk_queue *q, const uint64_t *desc,
			   uint32_t n)
{
	struct ucm_xsk *x = q->x;
	uint32_t idx = 0, k, i, used = 0;

	/* reserve() is all or nothing: ask for what there is room for. */
	k = n ? xsk_prod_nb_free(&q->tx, n) : 0;
	if (k > n)
		k = n;
	if (k && xsk_ring_prod__reserve(&q->tx, k, &idx) != k)
		k = 0;
	for (i = 0; i < n && used < k; i++) {
		uint64_t d = desc[i], addr = ucm_desc_addr(ucm_txq_desc_plain(d));
		struct xdp_desc *td;

		if (unlikely(tx_desc_bad(x, d))) {
			ucm_umem_put_bulk_from(x->umem, (uint64_t[]){ ucm_umem_base(x->umem, addr) },
					       1, UCM_LOC_APP, false);
			STAT_ADD(q->stats.tx_bad_desc, 1);
			continue;
		}
		/* A zero-copy driver may read the metadata of every packet,
		 * asked for or not: no stale request. */
		if (x->tx_meta && x->zerocopy && !(d & UCM_TXQ_DESC_CSUM))
			memset((char *)x->area + addr - UCM_TXQ_META_LEN, 0, sizeof(uint64_t));
		td = xsk_ring_prod__tx_desc(&q->tx, idx + used++);
		td->addr = addr;
		td->len = ucm_desc_len(d);
		td->options = d & UCM_TXQ_DESC_CSUM ? XDP_TX_METADATA : 0;
		ucm_frame_move(x->umem, ucm_umem_base(x->umem, addr), UCM_LOC_APP,
			       UCM_LOC_KERNEL);
	}
	q->tx.cached_prod -= k - used;	/* the slots bad ones left: not ours */
	if (used) {
		xsk_ring_prod__submit(&q->tx, used);
		q->tx_posted += used;
		STAT_ADD(q->stats.tx, used);
	}
	if (i < n)
		STAT_ADD(q->stats.tx_ring_full, n - i);
	if (used && tx_wants_kick(q))
		tx_kick(q);
	return i;
}

uint32_t ucm_xsk_queue__complete(struct ucm_xsk_queue *q)
{
	struct ucm_xsk *x = q->x;
	uint64_t addrs[UCM_XSK_RX_BATCH];
	uint32_t idx = 0, n, i, total = 0;
	uint64_t cached;

	/* Copy mode sends only when kicked; a kick that met a busy kernel
	 * left descriptors on the TX ring. Taken but not completed yet is
	 * the driver's business (zero-copy): no kick for that. */
	if (xsk_prod_nb_free(&q->tx, q->tx.size) < q->tx.size && tx_wants_kick(q))
		tx_kick(q);
	while ((n = xsk_ring_cons__peek(&q->comp, UCM_XSK_RX_BATCH, &idx))) {
		for (i = 0; i < n; i++)
			addrs[i] = ucm_umem_base(x->umem,
						 *xsk_ring_cons__comp_addr(&q->comp, idx + i));
		xsk_ring_cons__release(&q->comp, n);
		q->tx_done += n;
		/* Our xdp_return_frame_bulk(): the owner's bulk goes
		 * straight into its cache (unless NO_DIRECT_BULK); what
		 * reached the cache is the direct share. */
		cached = q->pool->owner_stats.cached;
		ucm_umem_put_bulk_from(x->umem, addrs, n, UCM_LOC_KERNEL,
				       false);
		STAT_ADD(q->stats.tx_comp_direct, q->pool->owner_stats.cached - cached);
		STAT_ADD(q->stats.tx_comp_bulks, 1);
		total += n;
	}
	/* S1: release, so a reader that sees these completions sees the
	 * sends before them (S2 in ucm_xsk_queue__stats()). */
	if (total)
		__atomic_store_n(&q->stats.tx_completed,
				 READ_ONCE(q->stats.tx_completed) + total, __ATOMIC_RELEASE);
	return total;
}

uint32_t ucm_xsk_queue__tx_pending(const struct ucm_xsk_queue *q)
{
	return (uint32_t)(q->tx_posted - q->tx_done);
}

/*
 * The RX thread's turn of the way out, as a driver's NAPI poll does its TX
 * completions: lend the workers frames of its pool, put what they filled
 * on the TX ring, and bring completed frames home, in bulk, straight into
 * its own cache (seed 003). Completions are reaped before each send, so the
 * TX ring has all the room it can; what it still cannot take is dropped
 * (counted once, in tx_ring_full): the RX direction never waits on TX.
 */
uint32_t ucm_xsk_queue__tx_turn(struct ucm_xsk_queue *q,
				struct ucm_txq *const *txq, uint32_t ntxq)
{
	uint64_t desc[UCM_XSK_RX_BATCH];
	uint32_t n, k, i, j, done = 0;

	for (i = 0; i < ntxq; i++) {
		ucm_txq__lend(txq[i], q->pool);
		n = ucm_txq__collect(txq[i], desc, UCM_XSK_RX_BATCH);
		if (!n)
			continue;
		done += ucm_xsk_queue__complete(q);
		k = ucm_xsk_queue__tx(q, desc, n);
		if (k < n) {
			for (j = k; j < n; j++)
				desc[j - k] = ucm_umem_desc_base(q->x->umem,
								 ucm_txq_desc_plain(desc[j]));
			/* Home to their pools (ours straight into the cache:
			 * we are its owner), from the channel's hands. */
			ucm_umem_put_bulk_from(q->x->umem, desc, n - k, UCM_LOC_APP, false);
		}
		done += n;
	}
	return done + ucm_xsk_queue__complete(q);
}

/* After an idle sleep: the socket's pending error, 0 for none. An XSK's
 * poll does not report sk_err (the kernel sets ENETDOWN when the device
 * goes), so an idle RX thread asks: one syscall per idle timeout. */
static int idle_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return 0;
	return -err;
}

/* The error a socket reports (SO_ERROR): -errno, -EIO when it has none
 * to give (a hang-up, or an fd no longer open). */
static int sock_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || !err)
		return -EIO;
	return -err;
}

/*
 * An RX thread whose last refill found the pool short sleeps this long at
 * most: the frames that come home meanwhile (the recycle ring) wake
 * nobody, and the socket is not readable while the device has no buffer,
 * so it looks again soon, as a driver that could not allocate keeps its
 * NAPI scheduled. A millisecond: a dry pool costs a thousand cheap looks
 * a second, not a spin (test-backpressure), and the device's loss to a
 * pool that has frames again is a millisecond's, not the idle timeout's.
 */
#define XSK_DRY_SLEEP_MS	1

int ucm_xsk_queue__sleep(struct ucm_xsk_queue *q, struct ucm_txq *const *txq,
			 uint32_t ntxq, int timeout_ms)
{
	struct pollfd p[1 + UCM_XSK_MAX_TXQ];
	bool busy = false;
	uint32_t i;
	int ret = 1;	/* a channel has descriptors: work, no sleep */

	if (ntxq > UCM_XSK_MAX_TXQ)
		return ucm_err(-EINVAL);
	if (q->fill_dry && (timeout_ms < 0 || timeout_ms > XSK_DRY_SLEEP_MS))
		timeout_ms = XSK_DRY_SLEEP_MS;
	for (i = 0; i < ntxq; i++)
		busy |= !ucm_txq__sleep_begin(txq[i]);
	if (!busy) {
		p[0].fd = q->fd;
		p[0].events = POLLIN;
		for (i = 0; i < ntxq; i++) {
			p[1 + i].fd = ucm_txq__wake_fd(txq[i]);
			p[1 + i].events = POLLIN;
		}
		ret = poll(p, 1 + ntxq, timeout_ms);
		if (ret < 0)
			ret = -errno;
		else if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL))
			ret = sock_error(q->fd);
		else if (ret > 0)
			ret = 1;	/* poll's count of ready fds: not ours */
		else
			ret = idle_error(q->fd);
	}
	for (i = 0; i < ntxq; i++)
		ucm_txq__sleep_end(txq[i]);
	return ucm_err(ret);
}

int ucm_xsk_queue__spin(struct ucm_xsk_queue *q, struct ucm_txq *const *txq,
			uint32_t ntxq, uint32_t spin_us)
{
	uint64_t end;
	uint32_t i;

	if (!q || ntxq > UCM_XSK_MAX_TXQ || (ntxq && !txq) || spin_us > UCM_SPIN_US_MAX)
		return ucm_err(-EINVAL);
	end = ucm_now_ns() + (uint64_t)spin_us * 1000;
	do {
		if (xsk_cons_nb_avail(&q->rx, 1))
			return 1;
		for (i = 0; i < ntxq; i++)
			if (ucm_txq__pending(txq[i]))
				return 1;
		if (q->busy_poll) {
			/* The kernel runs the device's NAPI poll here
			 * (sk_busy_loop(), SO_BUSY_POLL_BUDGET): with
			 * SO_PREFER_BUSY_POLL and the device's interrupts
			 * deferred, nothing else would until its
			 * gro_flush_timeout. Its errors are the sleep's to
			 * report (SO_ERROR), as without busy polling. */
			recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
			STAT_ADD(q->stats.busy_polls, 1);
		} else {
			cpu_relax();
		}
	} while (ucm_now_ns() < end);
	return 0;
}

int ucm_xsk_queue__set_steer(struct ucm_xsk_queue *q, ucm_steer_fn fn, void *ctx)
{
	if (!q)
		return ucm_err(-EINVAL);
	q->steer_fn = fn;
	q->steer_ctx = ctx;
	return 0;
}

/* The application's choice (ucm_steer_fn) for one packet. */
static uint32_t steer_app(struct ucm_xsk_queue *q, const struct ucm_xsk_desc *d)
{
	const uint8_t *data = ucm_umem__frame(q->x->area, d->addr);
	struct ucm_pkt pkt;

	if (ucm_pkt__parse(&pkt, data, d->len) != UCM_DROP_NONE)
		return 0;
	return q->steer_fn(q->steer_ctx, &pkt, data, d->len);
}

/*
 * The RX thread's poll: the userspace NAPI poll of one queue. Refill the
 * fill ring first (the kernel cannot receive into frames it does not
 * have), take one batch, stage every packet for its worker, flush once.
 */
#ifdef UCM_DEBUG
/* Tests: non-zero makes the next poll of any queue fail with -EIO, as an
 * RX thread's own failure would (tests/net/xsk_rx.c, fault mode). Used up
 * by that poll; relaxed, no pair. */
int ucm_xsk_test_poll_fail;
#endif

int ucm_xsk_queue__poll(struct ucm_xsk_queue *q,
			struct ucm_cpumap_producer *prod,
			const struct ucm_steer_cfg *cfg, uint32_t *rr)
{
	struct ucm_xsk_desc d[UCM_XSK_RX_BATCH];
	uint32_t n, i, nw = cfg->nworkers ? cfg->nworkers : 1;
	int err;

#ifdef UCM_DEBUG
	if (__atomic_load_n(&ucm_xsk_test_poll_fail, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&ucm_xsk_test_poll_fail, 0, __ATOMIC_RELAXED))
		return ucm_err(-EIO);
#endif
	err = ucm_xsk_queue__refill(q);
	if (err < 0)
		return err;
	n = ucm_xsk_queue__rx(q, d, UCM_XSK_RX_BATCH);
	for (i = 0; i < n; i++) {
		uint32_t w = d[i].worker;

		if (q->steer_fn) {
			w = steer_app(q, &d[i]);
		} else if (d[i].worker < 0 || w >= nw) {
			/* No metadata: the program's policy, here. A frame
			 * that does not parse may go anywhere: its worker
			 * drops and counts it. */
			struct ucm_pkt pkt;

			w = 0;
			if (ucm_pkt__parse(&pkt, ucm_umem__frame(q->x->area, d[i].addr),
					   d[i].len) == UCM_DROP_NONE)
				w = ucm_steer__pick(cfg, &pkt, rr);
		}
		if (unlikely(ucm_cpumap_producer__enqueue(prod, w, d[i].addr, d[i].len))) {
			/* A steering configuration with more workers than
			 * the cpumap: count it, keep the frame. */
			STAT_ADD(q->stats.rx_steer_err, 1);
			ucm_pool__put(q->pool, ucm_umem_base(q->x->umem, d[i].addr));
		}
	}
	if (n) {
		ucm_cpumap_producer__flush(prod);
		STAT_ADD(q->stats.rx_batches, 1);
	}
	if (q->rx_stamp) {
		/* The flush's own stamp: no clock read of ours. */
		uint64_t now = ucm_cpumap_producer_flush_ns(prod) ?: ucm_now_ns();
		/* One clock on every CPU: a stamp from the future would be a
		 * torn metadata, counted as no wait. */
		uint64_t dt = now > q->rx_stamp ? now - q->rx_stamp : 0;

		STAT_ADD(q->stats.rx_hist[ucm_lat_bucket(dt)], 1);
		STAT_ADD(q->stats.rx_lat_ns, dt);
		q->rx_stamp = 0;
	}
	return n;
}

int ucm_xsk_queue__wait(struct ucm_xsk_queue *q, int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	int ret;

	if (!q || q->fd < 0)
		return ucm_err(-EBADF);
	p.fd = q->fd;
	ret = poll(&p, 1, timeout_ms);
	if (ret < 0)
		return ucm_err(-errno);
	if (p.revents & POLLNVAL)
		return ucm_err(-EBADF);
	return (p.revents & POLLIN) ? 1 : 0;
}
