// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's seccomp allow-list for the running phase, on every thread
 * (SECCOMP_FILTER_FLAG_TSYNC), loaded by priv_confine() once the set-up
 * is done and the privileges are gone; --no-seccomp leaves it off.
 *
 * What it allows is what the threads were seen to call once running
 * (strace -f of each mode: one-way, two-way with the kernel's next hops,
 * --peer-mac, --tap --two-way, --pass, --no-batch, --busy-poll, SIGHUP,
 * the fault checks, the stop), what glibc calls for them (malloc, stdio,
 * the clock, abort), the metrics listener's (accept4, poll, shutdown),
 * the status socket's (accept4, its file's unlink at the stop) and
 * sd_notify's datagram. Nothing creates a process, runs a program, loads
 * BPF, mounts, traces, or opens a socket other than a unix, route netlink
 * or IP datagram one. Seccomp is on by default, so every test that runs the
 * daemon tests the list too: a call it misses shows as that test's
 * failure (and in the kernel's log).
 *
 * Anything else fails with EPERM, and the kernel logs it
 * (SECCOMP_FILTER_FLAG_LOG: an audit record, "type=1326 ... syscall=N",
 * in the kernel's log). Not a kill: SIGSYS would end the daemon without
 * its closing lines (and on a thread that blocks every signal, as the
 * datapath's do, the kernel makes it fatal anyway), while an EPERM is an
 * error its caller reports: an RX thread stops and says so, and the
 * daemon stops cleanly.
 *
 * A sanitizer build runs without it: ASan's and TSan's runtimes make
 * system calls of their own (reading /proc/self/maps, their own threads).
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "daemon.h"
#include "journal.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

static const int allowed[] = {
	/* memory (mmap and mprotect: add_rules(), never executable), locks,
	 * time: every thread, glibc's malloc and clock */
	SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap),
	SCMP_SYS(madvise), SCMP_SYS(futex), SCMP_SYS(getrandom),
	SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity), SCMP_SYS(rseq),
	SCMP_SYS(set_robust_list), SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres),
	SCMP_SYS(gettimeofday), SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
	SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(capget),
	/* signals: the control thread's wait; abort()'s way out */
	SCMP_SYS(rt_sigtimedwait), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigaction),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(restart_syscall), SCMP_SYS(tgkill),
	SCMP_SYS(exit), SCMP_SYS(exit_group),
	/* the descriptors it has: statistics, the tun (workers), eventfds,
	 * the XSK sockets (RX threads), the resolver's netlink socket, the
	 * metrics listener's connections; SIGHUP's reopen (openat) */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
	SCMP_SYS(close), SCMP_SYS(fcntl), SCMP_SYS(lseek), SCMP_SYS(fstat),
	SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(openat), SCMP_SYS(poll),
	SCMP_SYS(ppoll), SCMP_SYS(recvfrom), SCMP_SYS(recvmsg), SCMP_SYS(sendto),
	SCMP_SYS(sendmsg), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
	SCMP_SYS(getsockname), SCMP_SYS(bind), SCMP_SYS(connect),
	SCMP_SYS(accept4), SCMP_SYS(shutdown),
	/* the kernel runs a ring's operations past this filter: the library's
	 * rings are restricted to reads, writes, polls and their cancels
	 * (lib/io/uring.c), so none opens or connects */
	SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
	/* a pre-woken worker's sleep (lib/engine/cpumap.c) */
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait),
	/* a worker rebuilds a failed ring (lib/io/tun.c, ring_reset) */
	SCMP_SYS(io_uring_setup),
	/* the status socket's file, removed at the stop (ctl.c) */
	SCMP_SYS(unlink), SCMP_SYS(unlinkat),
};

/* ioctl(2): stdio's question whether standard output is a terminal, and
 * the fault checks' reading of the interface's and the tun's state
 * (ucm_dp__check() every 100 ms: if_indextoname(), SIOCGIFFLAGS, the
 * carrier by SIOCETHTOOL, the interface's MTU by SIOCGIFMTU, its MAC by
 * SIOCGIFHWADDR); without these it would read every device as up, never
 * report one gone, and steer frames to a changed MAC past the program. */
static const unsigned long ioctls[] = {
	TCGETS, SIOCGIFNAME, SIOCGIFINDEX, SIOCGIFFLAGS, SIOCETHTOOL, SIOCGIFMTU,
	SIOCGIFHWADDR,
};

/* bpf(2): the XSK map's elements (the stop, or an RX thread that gives
 * up, takes its socket out), the MAC map's, the pass counters read, an
 * object's info, our link's detach at the stop (another process may
 * hold a fd of it); no load, no map creation, no look-up of others'
 * objects by id. */
static const int bpf_cmds[] = {
	BPF_MAP_UPDATE_ELEM, BPF_MAP_DELETE_ELEM, BPF_MAP_LOOKUP_ELEM, BPF_OBJ_GET_INFO_BY_FD,
	BPF_LINK_DETACH,
};

/* clone(2)'s flags: the first argument, but on s390 the second. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG		1
#else
#define CLONE_FLAGS_ARG		0
#endif

/* Argument @arg equal to @v; masked by @mask, equal to @v. (libseccomp's
 * SCMP_A0() leaves a field out, which clang's -Wextra names.) */
static struct scmp_arg_cmp arg_eq(unsigned int arg, uint64_t v)
{
	return (struct scmp_arg_cmp){ .arg = arg, .op = SCMP_CMP_EQ, .datum_a = v };
}

static struct scmp_arg_cmp arg_masked(unsigned int arg, uint64_t mask, uint64_t v)
{
	return (struct scmp_arg_cmp){ .arg = arg, .op = SCMP_CMP_MASKED_EQ,
				      .datum_a = mask, .datum_b = v };
}

static int add_rules(scmp_filter_ctx ctx)
{
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* Memory, never executable once running: nothing loads code then. */
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				       arg_masked(2, PROT_EXEC, 0));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				       arg_masked(2, PROT_EXEC, 0));
	for (i = 0; !err && i < sizeof(bpf_cmds) / sizeof(bpf_cmds[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bpf), 1,
				       arg_eq(0, bpf_cmds[i]));
	/* sd_notify's datagram and glibc's socket for interface ioctls
	 * (unix), libbpf's netlink, the fault checks' ioctls (an IP
	 * datagram socket, never bound); no other socket. */
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				       arg_eq(0, AF_UNIX));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
				       arg_eq(0, AF_NETLINK), arg_eq(2, NETLINK_ROUTE));
	for (i = 0; !err && i < 2; i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
				       arg_eq(0, i ? AF_INET6 : AF_INET),
				       arg_masked(1, 0xf, SOCK_DGRAM));
	/* A thread, never a process; clone3's flags are out of the filter's
	 * reach: ENOSYS makes glibc use clone. */
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				       arg_masked(CLONE_FLAGS_ARG, CLONE_THREAD, CLONE_THREAD));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	for (i = 0; !err && i < sizeof(ioctls) / sizeof(ioctls[0]); i++)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       arg_eq(1, ioctls[i]));
	return err;
}

int seccomp_start(struct daemon *d)
{
	scmp_filter_ctx ctx;
	int err;

	(void)d;
#ifdef SANITIZED
	out_warn("ucpumapd: no seccomp allow-list in a sanitizer build (its runtime makes system calls of its own)\n");
	return 0;
#endif
#if __SIZEOF_POINTER__ != 8
	/* A 32-bit ABI's calls (mmap2, the *_time64 ones, socketcall) are not
	 * in the list, and glibc falls back only on ENOSYS, not EPERM. */
	out_warn("ucpumapd: no seccomp allow-list in a 32-bit build (its list is the 64-bit calls')\n");
	return 0;
#endif
	ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx) {
		fprintf(stderr, "ucpumapd: seccomp: cannot make a filter (out of memory)\n");
		return -1;
	}
	err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
	/* Another architecture's call (int 0x80 on x86_64): the process, not
	 * one thread, which would leave the daemon half running. */
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (!err)
		err = add_rules(ctx);
	if (!err)
		err = seccomp_load(ctx);
	seccomp_release(ctx);
	if (err) {
		fprintf(stderr, "ucpumapd: seccomp: cannot load the allow-list on every thread: %s (--no-seccomp runs without it)\n",
			strerror(-err));
		return -1;
	}
	return 0;
}
