// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-gen's loop engine, for kernels that refuse the live-frame test
 * run. A veth pair of its own (ucmloop0, ucmloop1) lives in a network
 * namespace of its own; the loop program (bpf/gen.bpf.c) sits on ucmloop1.
 * A few copies of the template go in through ucmloop0 (the packet engine);
 * each time one reaches the program it is rewritten and redirected with
 * BPF_F_BROADCAST to a devmap of two devices: ucmloop0, which brings it
 * back, and IFACE, which gets a copy (the kernel's xdp_frame clone). So
 * the frames go round inside one NAPI instance, on the CPU that put them
 * in, and no system call is made per frame or per batch.
 *
 * A send gives the program a limit of frames; the program drops the
 * loop's frames once it is reached, and the loop drains, so a send that
 * finds the limit reached puts new frames in. A send returns a little
 * before the limit (loop_send()), so that back-to-back sends keep the loop
 * going; the last call, with no frames, counts what went out after.
 * Nothing is left behind: the namespace goes when its last reference does,
 * the file descriptors of this process, and takes the devices, the
 * program's attachment and the frames with it, also after SIGKILL.
 *
 * As with the live engine, a frame counts as sent when the program
 * redirects it: a copy IFACE cannot take (down, or on veth a peer without
 * XDP) is dropped by the kernel and still counted, so the generator
 * refuses such an IFACE and stops when it becomes one (gen.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/membarrier.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"
#include "gen_opts.h"
#include "util.h"

#define LOOP_IN		"ucmloop0"	/* where the frames are put in */
#define LOOP_PROG	"ucmloop1"	/* the program's */
/* A send that sees no frame go out for this long puts frames in again
 * (the loop lost its own: a full ring, a failed clone); for 10 times this,
 * it returns what went out. */
#define LOOP_STALL_SEC	0.002
/* A send returns with this much of its frames still to go out: the time the
 * caller has to come back before the loop stops. */
#define LOOP_AHEAD_SEC	0.002
/* How long a program run that read the limit before we lowered it can take
 * to finish: a run is well under a microsecond, in softirq context. */
#define LOOP_GRACE_NS	100000

struct loop {
	struct gen_obj o;
	struct packet_tx *in;		/* the packet engine on LOOP_IN */
	struct bpf_link *link;		/* the program on LOOP_PROG */
	int ns_fd;			/* our namespace, or -1 */
	uint32_t inflight;
	uint64_t counted;		/* frames sent that a send returned */
	uint64_t limit;			/* the program's, as we set it */
	double per_frame;		/* seconds a frame takes, measured */
	const volatile sig_atomic_t *stop;
};

/* Our veth pair in the calling thread's namespace, up, one queue each way
 * (so one NAPI instance runs the program: gen.h's rule for its state), with
 * an MTU for frames of @size bytes. 0 or -errno. */
static int loop_veth(uint32_t size)
{
	struct {
		struct nlmsghdr n;
		struct ifinfomsg i;
		char buf[512];
	} req = {
		.n = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)), .nlmsg_type = RTM_NEWLINK,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL },
		.i = { .ifi_family = AF_UNSPEC, .ifi_flags = IFF_UP, .ifi_change = IFF_UP },
	};
	uint32_t mtu = size > 1514 ? size - 14 : 1500, one = 1;
	struct ifinfomsg peer = { .ifi_family = AF_UNSPEC };
	struct rtattr *info, *data, *p;
	int err, fd;
	struct ifreq ifr = {};

	gen_nl_add_attr(&req.n, IFLA_IFNAME, LOOP_IN, sizeof(LOOP_IN));
	gen_nl_add_attr(&req.n, IFLA_MTU, &mtu, 4);
	gen_nl_add_attr(&req.n, IFLA_NUM_TX_QUEUES, &one, 4);
	gen_nl_add_attr(&req.n, IFLA_NUM_RX_QUEUES, &one, 4);
	info = gen_nl_add_attr(&req.n, IFLA_LINKINFO, NULL, 0);
	gen_nl_add_attr(&req.n, IFLA_INFO_KIND, "veth", 5);
	data = gen_nl_add_attr(&req.n, IFLA_INFO_DATA, NULL, 0);
	p = gen_nl_add_attr(&req.n, VETH_INFO_PEER, &peer, sizeof(peer));
	gen_nl_add_attr(&req.n, IFLA_IFNAME, LOOP_PROG, sizeof(LOOP_PROG));
	gen_nl_add_attr(&req.n, IFLA_MTU, &mtu, 4);
	gen_nl_add_attr(&req.n, IFLA_NUM_TX_QUEUES, &one, 4);
	gen_nl_add_attr(&req.n, IFLA_NUM_RX_QUEUES, &one, 4);
	p->rta_len = (char *)&req.n + req.n.nlmsg_len - (char *)p;
	data->rta_len = (char *)&req.n + req.n.nlmsg_len - (char *)data;
	info->rta_len = (char *)&req.n + req.n.nlmsg_len - (char *)info;
	err = gen_nl_ack(&req.n);
	if (err)
		return err;
	/* The peer up: in the request, it would be opened before it has a
	 * peer of its own (-ENOTCONN). */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(ifr.ifr_name, LOOP_PROG);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		err = -errno;
	} else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr))
			err = -errno;
	}
	close(fd);
	return err;
}

/* The devmap's entry @key: the device @ifindex of the calling thread's
 * namespace. */
static int loop_dev_set(struct loop *l, uint32_t key, uint32_t ifindex)
{
	struct bpf_map *m = bpf_object__find_map_by_name(l->o.obj, "ucm_gen_out");

	if (!m)
		return -ENOENT;
	return bpf_map_update_elem(bpf_map__fd(m), &key, &ifindex, 0) ? -errno : 0;
}

/* Everything that lives in our namespace, the calling thread in it:
 * the devices, the program's devmap entry and attachment, the way in. */
static int loop_build(struct loop *l, const struct gen_tmpl *t, const char **what)
{
	int in, prog, err;

	*what = "cannot create its veth pair";
	err = loop_veth(t->size);
	if (err)
		return err;
	in = if_nametoindex(LOOP_IN);
	prog = if_nametoindex(LOOP_PROG);
	if (!in || !prog)
		return -ENODEV;
	*what = "cannot fill the program's devmap";
	err = loop_dev_set(l, 0, in);
	if (err)
		return err;
	*what = "cannot attach the program";
	l->link = bpf_program__attach_xdp(l->o.prog, prog);
	if (!l->link)
		return -errno;
	*what = "cannot open the way in";
	l->in = packet_open(in, t, l->inflight, l->stop);
	return l->in ? 0 : -EIO;
}

struct loop *loop_open(const struct ucm_gen_cfg *gc, const struct gen_tmpl *t, uint32_t inflight,
		       bool verbose, const volatile sig_atomic_t *stop)
{
	struct loop *l = calloc(1, sizeof(*l));
	const char *what;
	int home, err;

	if (!l) {
		fprintf(stderr, "ucpumap-gen: out of memory\n");
		return NULL;
	}
	l->ns_fd = -1;
	l->inflight = inflight ? inflight : 64;
	l->per_frame = 100e-9;
	l->stop = stop;
	if (gen_obj_open(&l->o, gc, "ucm_gen_loop", verbose))
		goto fail;
	home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0) {
		fprintf(stderr, "ucpumap-gen: cannot open this network namespace: %s\n", strerror(errno));
		goto fail;
	}
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "ucpumap-gen: cannot make the loop engine's network namespace: %s\n",
			strerror(errno));
		close(home);
		goto fail;
	}
	what = "cannot open its network namespace";
	l->ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	err = l->ns_fd < 0 ? -errno : loop_build(l, t, &what);
	/* Home again, whatever happened: the rest of the run lives there. */
	if (setns(home, CLONE_NEWNET)) {
		fprintf(stderr, "ucpumap-gen: cannot return to IFACE's network namespace: %s\n",
			strerror(errno));
		close(home);
		goto fail;
	}
	close(home);
	if (err) {
		fprintf(stderr, "ucpumap-gen: the loop engine %s: %s\n", what, strerror(-err));
		goto fail;
	}
	err = loop_dev_set(l, 1, gc->ifindex);
	if (err) {
		fprintf(stderr, "ucpumap-gen: the loop engine cannot send out of IFACE (ifindex %u): %s\n",
			gc->ifindex, strerror(-err));
		goto fail;
	}
	return l;
fail:
	loop_close(l);
	return NULL;
}

/* No more frames: the limit lowered to what went out, and the count once
 * no program run that read the old limit can still be going. Runs are in
 * NAPI, RCU readers: a global membarrier waits for them (synchronize_rcu());
 * where it is refused, LOOP_GRACE_NS, each a fraction of a microsecond. */
static uint64_t loop_cut(struct loop *l)
{
	struct timespec ts = { 0, LOOP_GRACE_NS };

	l->limit = gen_obj_frames(&l->o);
	__atomic_store_n(&l->o.st->limit, l->limit, __ATOMIC_SEQ_CST);
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	return gen_obj_frames(&l->o);
}

static void loop_sleep(double sec)
{
	struct timespec ts;

	if (sec < 10e-6)
		sec = 10e-6;
	if (sec > LOOP_STALL_SEC)
		sec = LOOP_STALL_SEC;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(sec * 1e9);
	nanosleep(&ts, NULL);
}

/*
 * Send @n frames: the limit raised to @n past those counted, frames put in
 * when the loop had drained, and a wait until all but the last
 * LOOP_AHEAD_SEC of them (at most half) went out. So the loop still sends
 * while the caller comes back, and only a rate limit's pause drains it.
 * @n 0: no more; the limit lowered to what went out. Return the frames sent
 * since the last call.
 */
int64_t loop_send(void *arg, uint64_t n)
{
	struct loop *l = arg;
	uint64_t base = l->counted, old = l->limit, limit = base + n, target, f, f0, last;
	uint32_t fill = n < l->inflight ? (uint32_t)n : l->inflight;
	double t0 = now_sec(), moved = t0, filled = t0, t, ahead;
	bool stalled = false;
	int64_t err;

	if (!n) {
		f = loop_cut(l);
		l->counted = f;
		return (int64_t)(f - base);
	}
	l->limit = limit;
	/* Seen by the program before we read its count, whose atomic add
	 * pairs with this: a loop that reads the old limit and stops is one
	 * whose count we then read as stopped, and fill. */
	__atomic_store_n(&l->o.st->limit, limit, __ATOMIC_SEQ_CST);
	f0 = last = gen_obj_frames(&l->o);
	if (f0 >= old && (err = packet_send(l->in, fill)) < 0)
		goto fail;
	ahead = LOOP_AHEAD_SEC / l->per_frame;
	target = limit - (ahead < n / 2 ? (uint64_t)ahead : n / 2);
	for (;;) {
		f = gen_obj_frames(&l->o);
		if (f >= target)
			break;
		t = now_sec();
		stalled = t - moved > 10 * LOOP_STALL_SEC;
		if (*l->stop || stalled) {
			f = loop_cut(l);
			break;
		}
		if (f != last) {
			last = f;
			moved = t;
		} else if (t - moved > LOOP_STALL_SEC && t - filled > LOOP_STALL_SEC) {
			/* The loop lost its frames, or runs slow: once a stall. */
			filled = t;
			err = packet_send(l->in, fill);
			if (err < 0)
				goto fail;
		}
		loop_sleep((double)(target - f) * l->per_frame * 0.8);
	}
	/* The speed of the loop while it ran, a pause to fill it excepted. */
	if (f - f0 >= 1024 && f0 < old && !stalled)
		l->per_frame = 0.7 * l->per_frame + 0.3 * (now_sec() - t0) / (double)(f - f0);
	l->counted = f;
	return (int64_t)(f - base);
fail:
	/* What went out is counted by the last call, send(0). */
	loop_cut(l);
	return err;
}

void loop_close(struct loop *l)
{
	if (!l)
		return;
	if (l->o.st)
		loop_cut(l);
	bpf_link__destroy(l->link);
	packet_close(l->in);
	if (l->ns_fd >= 0)
		close(l->ns_fd);
	gen_obj_close(&l->o);
	free(l);
}
