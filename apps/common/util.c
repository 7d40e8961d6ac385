// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "core/cpu.h"
#include "ucpumap/csum.h"
#include "util.h"

int parse_uint(const char *s, unsigned long lo, unsigned long hi,
	       const char *what, unsigned long *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	/* Digits alone: strtoul() would skip blanks and take a sign after
	 * them (" -18446744073709551615" is 1). */
	if (!s || *s < '0' || *s > '9')
		goto bad;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "%s: '%s' is not a whole number between %lu and %lu\n",
		what, s ? s : "", lo, hi);
	return -1;
}

int parse_pow2(const char *s, unsigned long lo, unsigned long hi,
	       const char *what, unsigned long *out)
{
	if (parse_uint(s, lo, hi, what, out))
		return -1;
	if (*out & (*out - 1)) {
		fprintf(stderr, "%s: %lu is not a power of two; try %lu\n", what,
			*out, 1ul << (8 * sizeof(*out) - 1 - __builtin_clzl(*out)));
		return -1;
	}
	return 0;
}

int list_check(const char *s, const char *what)
{
	size_t n = strlen(s);

	if (n && s[0] != ',' && s[n - 1] != ',' && !strstr(s, ",,"))
		return 0;
	fprintf(stderr, "%s: '%s' has an empty item: give names or numbers between the commas\n",
		what, s);
	return -1;
}

int out_file_check(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd >= 0) {		/* made here: gone again */
		close(fd);
		unlink(path);
		return 0;
	}
	if (errno != EEXIST)
		return -1;
	/* There already (a FIFO without a reader: refused, not waited on) */
	fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int cpu_online_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

int cpu_affinity(pid_t pid, cpu_set_t *set)
{
	return ucm_affinity(pid, set);
}

bool cpu_usable(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE || ucm_affinity(0, &set))
		return false;
	return CPU_ISSET(cpu, &set);
}

int cpus_usable(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	if (ucm_affinity(0, &set))
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

int parse_index_list(const char *s, uint32_t *out, int max, const char *what)
{
	uint32_t tmp[APP_MAX_CPUS];
	int n = 0, i;
	char *end;

	if (max > APP_MAX_CPUS || list_check(s, what))
		return -1;
	for (const char *p = s; *p; p = end) {
		/* Digits only: strtoul() would take a sign or spaces. */
		unsigned long a = isdigit((unsigned char)*p) ? strtoul(p, &end, 10) : ULONG_MAX;
		unsigned long b = a;

		if (a >= (unsigned long)max)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			b = isdigit((unsigned char)*p) ? strtoul(p, &end, 10) : ULONG_MAX;
			if (b < a || b >= (unsigned long)max)
				goto bad;
		}
		for (; a <= b; a++) {
			for (i = 0; i < n; i++)
				if (tmp[i] == a)
					goto bad;
			tmp[n++] = (uint32_t)a;	/* distinct and below max: room */
		}
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
	}
	memcpy(out, tmp, n * sizeof(*out));
	return n;
bad:
	fprintf(stderr, "%s: '%s' is not a list of distinct numbers 0-%d, e.g. 0 or 0-3\n",
		what, s, max - 1);
	return -1;
}

/* The CPUs this process may use, as a list ("0-3,8-9"), into @buf. */
static void usable_str(char *buf, size_t len)
{
	cpu_set_t set;
	size_t k = 0;
	int c = 0, a;

	buf[0] = '\0';
	if (ucm_affinity(0, &set))
		return;
	while (c < CPU_SETSIZE && k < len) {
		for (; c < CPU_SETSIZE && !CPU_ISSET(c, &set); c++)
			;
		if (c == CPU_SETSIZE)
			break;
		for (a = c; c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, &set); c++)
			;
		k += snprintf(buf + k, len - k, a == c ? "%s%d" : "%s%d-%d", k ? "," : "", a, c);
		c++;
	}
}

/* One item of a CPU list: N or LOW-HIGH, digits only, below CPU_ID_MAX
 * (what no host has: past it, a typo, not a CPU). */
#define CPU_ID_MAX	(1ul << 20)

static bool cpu_item(const char *tok, unsigned long *a, unsigned long *b)
{
	char *end;

	if (!isdigit((unsigned char)*tok))
		return false;
	*a = strtoul(tok, &end, 10);
	*b = *a;
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			return false;
		*b = strtoul(end + 1, &end, 10);
	}
	/* A number too large for any CPU is the usable check's to refuse. */
	return !*end && *a <= *b && *b < CPU_ID_MAX;
}

int parse_cpu_list(const char *s, int *cpus, int max, const char *what)
{
	char here[256];
	char *copy, *tok, *save = NULL;
	int n = 0, i;

	if (!s || !*s) {
		fprintf(stderr, "%s: empty CPU list; give e.g. 1 or 0,2-3\n", what);
		return -1;
	}
	if (list_check(s, what))
		return -1;
	copy = strdup(s);
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long a, b;

		if (!cpu_item(tok, &a, &b)) {
			fprintf(stderr, "%s: '%s' is not a CPU or a range LOW-HIGH of them, as 2 or 1-3\n",
				what, tok);
			goto bad;
		}
		for (; a <= b; a++) {
			if (!cpu_usable((int)a)) {
				usable_str(here, sizeof(here));
				fprintf(stderr, "%s: CPU %lu is not online or not allowed here (this process may use CPUs %s; one isolcpus= leaves out is allowed by starting under taskset -c, or by a unit's CPUAffinity=; one a cpuset leaves out, by its cpuset.cpus, or a unit's AllowedCPUs=)\n",
					what, a, here);
				goto bad;
			}
			for (i = 0; i < n; i++) {
				if (cpus[i] == (int)a) {
					fprintf(stderr, "%s: CPU %lu is listed twice\n", what, a);
					goto bad;
				}
			}
			if (n == max) {
				fprintf(stderr, "%s: more than %d CPU%s\n", what, max,
					max == 1 ? "" : "s");
				goto bad;
			}
			cpus[n++] = (int)a;
		}
	}
	free(copy);
	return n;
bad:
	free(copy);
	return -1;
}

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* @cpu's line of /proc/stat: user nice system idle iowait irq softirq
 * steal, in clock ticks. */
static int cpu_stat(int cpu, unsigned long long v[8])
{
	char name[32], want[32];
	int ret = -1;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "cpu%d", cpu);
	while (fscanf(f, "%31s %llu %llu %llu %llu %llu %llu %llu %llu%*[^\n]",
		      name, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
		      &v[7]) == 9) {
		if (!strcmp(name, want)) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

double cpu_steal_sec(int cpu)
{
	unsigned long long v[8];

	return cpu_stat(cpu, v) ? -1 : (double)v[7] / sysconf(_SC_CLK_TCK);
}

int cpu_busy_sec(int cpu, double *busy, double *all)
{
	unsigned long long v[8];
	double tck = sysconf(_SC_CLK_TCK);

	if (cpu_stat(cpu, v))
		return -1;
	*busy = (v[0] + v[1] + v[2] + v[5] + v[6]) / tck;
	*all = (v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]) / tck;
	return 0;
}

void sleep_sec(double s)
{
	struct timespec ts = {
		.tv_sec = (time_t)s,
		.tv_nsec = (long)((s - (time_t)s) * 1e9),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void run_stats(const double *v, int n, struct run_stats *st)
{
	double s[RUN_STATS_MAX];
	int i;

	memset(st, 0, sizeof(*st));
	if (n <= 0)
		return;
	if (n > RUN_STATS_MAX)	/* more rounds than any bench takes */
		n = RUN_STATS_MAX;
	for (i = 0; i < n; i++)
		s[i] = v[i];
	qsort(s, n, sizeof(double), cmp_double);
	st->min = s[0];
	st->max = s[n - 1];
	st->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double run_median_bound(const double *v, int n, double bound)
{
	double s[RUN_STATS_MAX];
	struct run_stats st;

	run_stats(v, n, &st);
	if (n <= 0 || n % 2 || n > RUN_STATS_MAX)
		return st.median;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(double), cmp_double);
	return s[n / 2] >= bound ? s[n / 2] : st.median;
}

void quantiles(double *v, size_t n, const double *q, int nq, double *out)
{
	qsort(v, n, sizeof(double), cmp_double);
	for (int k = 0; k < nq; k++) {
		double x = q[k] * n;
		size_t r = (size_t)x;

		r += r < x;		/* the rank: x rounded up */
		out[k] = v[r ? r - 1 : 0];
	}
}

static void json_sep(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key)
		fprintf(j->f, "\"%s\":", key);
}

void json_begin(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
	fputc('{', f);
}

static void json_open(struct json *j, const char *key, char c)
{
	json_sep(j, key);
	fputc(c, j->f);
	j->first[++j->depth] = true;
}

void json_obj(struct json *j, const char *key) { json_open(j, key, '{'); }
void json_arr(struct json *j, const char *key) { json_open(j, key, '['); }
void json_obj_end(struct json *j) { fputc('}', j->f); j->depth--; }
void json_arr_end(struct json *j) { fputc(']', j->f); j->depth--; }

/*
 * The length of the well-formed UTF-8 sequence at @s (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or 0 where
 * @s does not start one. An interface's name is bytes: the kernel
 * takes any but '/', ':' and white space.
 */
size_t utf8_seq_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* the second byte's range rules out the overlong and surrogate forms */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* Bytes that are not UTF-8 become U+FFFD: a JSON text is UTF-8 (RFC 8259). */
void json_str(struct json *j, const char *key, const char *v)
{
	size_t n;

	json_sep(j, key);
	fputc('"', j->f);
	for (; *v; v += n) {
		n = utf8_seq_len(v);
		if (!n) {
			fputs("\\ufffd", j->f);
			n = 1;
			continue;
		}
		/* an interface's name may hold control characters */
		if ((unsigned char)*v < 0x20) {
			fprintf(j->f, "\\u%04x", (unsigned char)*v);
			continue;
		}
		if (*v == '"' || *v == '\\')
			fputc('\\', j->f);
		fwrite(v, 1, n, j->f);
	}
	fputc('"', j->f);
}

/* A count whole, to the unit (below 2^53, where a double holds every
 * integer): %g's six digits made 1767512 packets 1.76751e+06. */
#define JSON_EXACT	9007199254740992.0

void json_num(struct json *j, const char *key, double v)
{
	json_sep(j, key);
	if (v > -JSON_EXACT && v < JSON_EXACT && v == (double)(long long)v)
		fprintf(j->f, "%lld", (long long)v);
	else
		fprintf(j->f, "%.6g", v);
}

/* Seconds in fixed point, to the microsecond: %g's six digits would
 * round a clock's seconds since boot to the second. */
void json_sec(struct json *j, const char *key, double v)
{
	json_sep(j, key);
	fprintf(j->f, "%.6f", v);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_sep(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_end(struct json *j)
{
	fputs("}\n", j->f);
}

/* The results file being written, one at a time: its descriptor, and the
 * first write's failure (stdio keeps a flag only, so a full disk seen at a
 * flush mid-file would be said as EIO). */
static struct {
	int fd;
	int err;
} json_out = { .fd = -1 };

static ssize_t json_out_write(void *cookie, const char *buf, size_t n)
{
	size_t done = 0;

	(void)cookie;
	while (done < n) {
		ssize_t w = write(json_out.fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!json_out.err)
				json_out.err = w < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += w;
	}
	return n;
}

static int json_out_close(void *cookie)
{
	int ret = close(json_out.fd);

	(void)cookie;
	if (ret && !json_out.err)
		json_out.err = errno;
	json_out.fd = -1;
	return ret;
}

FILE *json_file_open(const char *who, const char *path)
{
	static const cookie_io_functions_t io = { .write = json_out_write,
						  .close = json_out_close };
	FILE *f = NULL;

	json_out.err = 0;
	json_out.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (json_out.fd >= 0 && !(f = fopencookie(NULL, "w", io))) {
		close(json_out.fd);
		json_out.fd = -1;
	}
	if (!f)
		fprintf(stderr, "%s: cannot write %s: %s\n", who, path, strerror(errno));
	return f;
}

int json_file_close(FILE *f, const char *who, const char *path)
{
	int bad = fclose(f), err = json_out.err;

	if (bad && !err)
		err = errno;
	if (err)
		fprintf(stderr, "%s: writing %s failed: %s\n", who, path, strerror(err));
	return err ? -1 : 0;
}

struct pingpong {
	int cpu;
	uint64_t *word;
	uint64_t rounds;
};

static void *pingpong_peer(void *arg)
{
	struct pingpong *p = arg;
	uint64_t v;

	pin_self(p->cpu);
	for (v = 1; v < 2 * p->rounds; v += 2) {
		while (__atomic_load_n(p->word, __ATOMIC_ACQUIRE) != v)
			cpu_relax();
		__atomic_store_n(p->word, v + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

double cpu_pingpong_ns(int cpu_a, int cpu_b, double seconds)
{
	static uint64_t word __attribute__((aligned(64)));
	struct pingpong p = { .cpu = cpu_b, .word = &word };
	uint64_t v, n = 0;
	pthread_t thr;
	double t0, t;
	cpu_set_t old;

	if (cpu_a == cpu_b)
		return 0;
	if (ucm_affinity(0, &old))
		return -1;
	pin_self(cpu_a);
	/* Calibrate: rounds for about @seconds at 200 ns a round trip. */
	p.rounds = (uint64_t)(seconds / 200e-9) + 1;
	__atomic_store_n(&word, 0, __ATOMIC_RELAXED);
	if (pthread_create(&thr, NULL, pingpong_peer, &p))
		return -1;
	t0 = now_sec();
	for (v = 0; v < 2 * p.rounds; v += 2, n++) {
		__atomic_store_n(&word, v + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) != v + 2)
			cpu_relax();
	}
	t = now_sec() - t0;
	pthread_join(thr, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	return t / n * 1e9;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

int parse_mac(const char *s, uint8_t *mac)
{
	uint8_t b[6];

	/* Exactly xx:xx:xx:xx:xx:xx (sscanf's %x would take a sign). */
	if (strlen(s) != 17)
		return -1;
	for (int i = 0; i < 6; i++) {
		const char *p = s + 3 * i;

		if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]) ||
		    (i < 5 && p[2] != ':'))
			return -1;
		b[i] = (uint8_t)strtoul((char[3]){ p[0], p[1], 0 }, NULL, 16);
	}
	memcpy(mac, b, 6);
	return 0;
}

void udp_build(uint8_t *l3, size_t len, bool v6, const void *src, const void *dst,
	       uint16_t sport, uint16_t dport)
{
	size_t hlen = v6 ? 40 : 20, ulen = len - hlen;
	uint8_t *u = l3 + hlen;
	uint32_t sum;

	memset(l3, 0, len);
	if (v6) {
		l3[0] = 0x60;
		put16(l3 + 4, ulen);
		l3[6] = IPPROTO_UDP;
		l3[7] = 64;
		memcpy(l3 + 8, src, 16);
		memcpy(l3 + 24, dst, 16);
		sum = ucm_csum_add(0, l3 + 8, 32);
	} else {
		l3[0] = 0x45;
		put16(l3 + 2, len);
		/* DF, ID 0: what a connected UDP socket sends when path MTU
		 * discovery is on; a flow's datagrams may then coalesce (the
		 * kernel's GRO takes equal IDs only with DF). */
		l3[6] = 0x40;
		l3[8] = 64;
		l3[9] = IPPROTO_UDP;
		memcpy(l3 + 12, src, 4);
		memcpy(l3 + 16, dst, 4);
		put16(l3 + 10, ucm_csum_fold(ucm_csum_add(0, l3, 20)));
		sum = ucm_csum_add(0, l3 + 12, 8);
	}
	put16(u, sport);
	put16(u + 2, dport);
	put16(u + 4, ulen);
	/* Pseudo-header: addresses (above), protocol, UDP length. */
	sum += IPPROTO_UDP + ulen;
	sum = ucm_csum_add(sum, u, ulen);
	put16(u + 6, ucm_csum_fold(sum) ?: 0xffff);
}

int xdp_live_frames(void)
{
	static int known = 1;	/* 1: not asked yet */
	const struct bpf_insn drop[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	uint8_t frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .repeat = 1);
	int fd;

	if (known <= 0)
		return known;
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", drop, 2, NULL);
	if (fd < 0)
		return known = -errno;
	known = bpf_prog_test_run_opts(fd, &o) ? -errno : 0;
	close(fd);
	return known;
}

/* The slot after *@next (CLOCK_MONOTONIC, @period ns apart), past those
 * already gone by, into *@next; asleep until it. A sender that fell
 * behind (a lost probe's wait) goes on at its rate, not in a burst.
 * Return: the slots skipped. */
uint32_t sleep_next_slot(struct timespec *next, uint64_t period)
{
	uint64_t due = (uint64_t)next->tv_sec * 1000000000 + next->tv_nsec + period;
	uint64_t now = mono_ns();
	uint32_t skipped = 0;

	for (; due + period <= now; due += period)
		skipped++;
	next->tv_sec = due / 1000000000;
	next->tv_nsec = due % 1000000000;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
	return skipped;
}

/* @dev's MTU in this network namespace (sysfs shows the namespace of
 * whoever mounted it), 0 when it cannot be read. */
unsigned long iface_mtu(const char *dev)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unsigned long v = 0;

	if (fd < 0)
		return 0;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (!ioctl(fd, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0)
		v = ifr.ifr_mtu;
	close(fd);
	return v;
}

const char *if_primary_name(const char *ifname, char *buf)
{
	unsigned int idx = if_nametoindex(ifname);

	return idx && if_indextoname(idx, buf) ? buf : ifname;
}

/* An ethtool request of @ifname's: 0 or -errno. */
int eth_ioctl(const char *ifname, void *data)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	rc = ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
	close(fd);
	return rc;
}

/* The NIC's RX queues now: its combined channels and its RX-only ones;
 * where the driver reports none, its rx-N entries in sysfs. -1: unknown. */
int nic_rx_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	char pat[128], prim[IF_NAMESIZE];
	glob_t g;
	int n;

	if (!eth_ioctl(ifname, &ch) && ch.combined_count + ch.rx_count > 0)
		return ch.combined_count + ch.rx_count;
	snprintf(pat, sizeof(pat), "/sys/class/net/%s/queues/rx-*", if_primary_name(ifname, prim));
	if (glob(pat, 0, NULL, &g))
		return -1;
	n = g.gl_pathc;
	globfree(&g);
	return n;
}
