/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers shared by the apps: CPU lists, clocks, run statistics, JSON. */
#ifndef UCM_APP_UTIL_H
#define UCM_APP_UTIL_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <time.h>
#include <sys/types.h>

#define APP_MAX_CPUS	64

/* "0,2-3" -> {0,2,3}. Return: the count, or -1 with a message on stderr
 * naming @what. */
int parse_cpu_list(const char *s, int *cpus, int max, const char *what);

/* A list of distinct numbers below @max in the syntax of CPU lists (0,2-3)
 * into @out (room for @max). Return: how many (at least 1), or -1 after a
 * message starting with @what. */
int parse_index_list(const char *s, uint32_t *out, int max, const char *what);
/* A whole non-negative integer in [lo, hi]; -1 with a message otherwise. */
int parse_uint(const char *s, unsigned long lo, unsigned long hi,
	       const char *what, unsigned long *out);
/* The same, and a power of two (the message suggests the one below). */
int parse_pow2(const char *s, unsigned long lo, unsigned long hi,
	       const char *what, unsigned long *out);
int cpu_online_count(void);
/* A comma-separated list with an item between every two commas: 0, or -1
 * with a message naming @what ("a,,b", ",a", "a," and "" are refused). */
int list_check(const char *s, const char *what);
/* Whether @path can be written: 0, or -1 with errno. Made and removed
 * again, or (there already) opened for appending and closed. */
int out_file_check(const char *path);

/* Whether this kernel runs XDP live-frame test runs
 * (BPF_F_TEST_XDP_LIVE_FRAMES: ucpumap-gen's live engine): 0, or the
 * -errno of its refusal: -EPERM where its BPF policy forbids them (seen:
 * 6.18.44-fc), -EINVAL or -EOPNOTSUPP before 5.18. Asked once, with a
 * program that drops its one frame: nothing leaves. Needs root. */
int xdp_live_frames(void);

/* "02:00:00:00:00:01" into 6 bytes: 0, or -1 for anything else. */
int parse_mac(const char *s, uint8_t *mac);

/* An IPv4 (20-byte header) or IPv6 header and a UDP header at @l3, for a
 * datagram of @len bytes from the IP header on: TTL/hop limit 64, IPv4 DF
 * with ID 0, a zeroed payload, complete checksums. @src/@dst: 4 or 16 bytes, network order. */
void udp_build(uint8_t *l3, size_t len, bool v6, const void *src, const void *dst,
	       uint16_t sport, uint16_t dport);

/* Thread or process @pid's affinity mask (0: the calling thread), as
 * the library reads it (a host's mask may be longer than a cpu_set_t).
 * Return: 0 or -errno. */
int cpu_affinity(pid_t pid, cpu_set_t *set);

bool cpu_usable(int cpu);

/* The CPUs this process may use (taskset, a cpuset), in increasing order,
 * the first @max of them into @cpus. Return: how many (0: none known). */
int cpus_usable(int *cpus, int max);

double now_sec(void);
/* CLOCK_MONOTONIC in ns: the clock of the kernel's bpf_ktime_get_ns(). */
uint64_t mono_ns(void);
uint32_t sleep_next_slot(struct timespec *next, uint64_t period);
unsigned long iface_mtu(const char *dev);
/* @ifname's primary name into @buf (IF_NAMESIZE) where @ifname is an
 * altname (udev gives NICs several): the kernel's calls take either, but
 * /proc/net/dev and /sys/class/net list only the primary. @ifname itself
 * where there is no such device or it is the primary. */
const char *if_primary_name(const char *ifname, char *buf);
/* An ethtool request (SIOCETHTOOL) of @ifname's: 0 or -errno. */
int eth_ioctl(const char *ifname, void *data);
/* The NIC's RX queues now: its combined channels and its RX-only ones;
 * where the driver reports none, its rx-N entries in sysfs. -1: unknown. */
int nic_rx_queues(const char *ifname);
/* Time the hypervisor took from @cpu since boot, in seconds (the steal
 * column of /proc/stat); -1 when unknown. */
double cpu_steal_sec(int cpu);
/* @cpu's time since boot, seconds: working (user, system, interrupts) and
 * in all (idle and steal included). 0, or -1 when unknown. */
int cpu_busy_sec(int cpu, double *busy, double *all);
void sleep_sec(double s);

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* Round trip of one cache line between two CPUs, in ns (a thread on each
 * bounces a counter for @seconds). On a virtual machine it moves with the
 * host's placement of the vCPUs, and with it every cross-CPU hand-off. */
double cpu_pingpong_ns(int cpu_a, int cpu_b, double seconds);

/* Pin the calling thread. Return 0 or -errno. */
int pin_self(int cpu);

/* Order statistics of an array of runs (copied, not reordered): at most
 * RUN_STATS_MAX of them, what the benches' --rounds allow at most. */
#define RUN_STATS_MAX	128
struct run_stats {
	double median, min, max;
};
void run_stats(const double *v, int n, struct run_stats *st);
/* run_stats()'s median of figures where @bound and above are lower bounds
 * (a lost probe's rank): of an even count, the upper middle one when it
 * is such a bound, not a mean of it and a measure (100 ms and 180 us are
 * not 50.09 ms). */
double run_median_bound(const double *v, int n, double bound);
/* @v's (@n > 0, sorted in place) quantiles @q[0..@nq) into @out, by
 * nearest rank. */
void quantiles(double *v, size_t n, const double *q, int nq, double *out);

/* A tiny JSON writer: enough for flat objects and arrays of numbers. */
struct json {
	FILE *f;
	int depth;
	bool first[16];
};
void json_begin(struct json *j, FILE *f);
void json_obj(struct json *j, const char *key);	/* key NULL inside arrays */
void json_obj_end(struct json *j);
void json_arr(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *v);
size_t utf8_seq_len(const char *s);
void json_num(struct json *j, const char *key, double v);	/* whole, or %.6g */
void json_sec(struct json *j, const char *key, double v);	/* %.6f */
void json_u64(struct json *j, const char *key, uint64_t v);
void json_end(struct json *j);
/* A results file, one at a time: open for writing, or NULL, said ("WHO:
 * cannot write PATH: why"). Its close: 0 once every byte is written, or
 * -1, said with the cause (a full disk shows at the end). */
FILE *json_file_open(const char *who, const char *path);
int json_file_close(FILE *f, const char *who, const char *path);

#endif /* UCM_APP_UTIL_H */
