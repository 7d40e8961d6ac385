// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A call refused by a seccomp filter loaded as ucpumapd loads its own
 * (apps/ucpumapd/seccomp.c: SECCOMP_FILTER_FLAG_LOG, EPERM), so that a test
 * can see whether this host's kernel log shows such refusals at all: where
 * auditd takes them, or the kernel runs with audit=0, it shows none, and a
 * log without the daemon's refusals proves nothing (test-privileges,
 * seccomp-refused-nothing).
 *
 * Refuses acct(2) and calls it: a call no runtime makes behind our back
 * (LeakSanitizer's exit waits on getppid(), for one). Prints "refused"
 * when the call failed with EPERM (the filter is on), exit 0; anything
 * else, exit 1.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_acct, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
	long r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_LOG, &prog)) {
		fprintf(stderr, "seccomp_canary: cannot load the filter: %s\n", strerror(errno));
		return 1;
	}
	r = syscall(__NR_acct, NULL);
	if (r != -1 || errno != EPERM) {
		fprintf(stderr, "seccomp_canary: acct() was not refused (%ld)\n", r);
		return 1;
	}
	printf("refused\n");
	return 0;
}
