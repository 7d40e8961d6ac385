// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The metrics server (apps/common/httpd.c, compiled in here: the apps'
 * files are not a library) on 127.0.0.1, a port of the kernel's choice:
 * its answers, a full table of readers that stall, and no connection
 * taken once stopped. test-metrics drives the rest through ucpumapd (idle
 * and answered connections, a slowloris, a storm).
 */
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "../../apps/common/httpd.c"
#include "utest.h"

/* An answer the socket buffers cannot hold while its reader stalls: a
 * tiny receive window and segment leave the kernel well under 100 KiB in
 * flight and queued. */
#define BODY		(512 * 1024)
#define REQ		"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n"
#define READ_MS		3000

static int render_err;	/* non-zero: render_big() fails with it */

static int render_big(struct tbuf *body, void *ctx)
{
	static char chunk[4096];

	(void)ctx;
	if (render_err)
		return render_err;
	memset(chunk, 'x', sizeof(chunk));
	for (size_t n = 0; n < BODY; n += sizeof(chunk))
		tbuf_append(body, chunk, sizeof(chunk));
	return body->err;
}

/* Whether a connection to 127.0.0.1 goes through: 0, or -ENETUNREACH
 * where the loopback is down (a build's empty network namespace). */
static int loopback_up(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&sa, &len) ||
	    connect(c, (struct sockaddr *)&sa, sizeof(sa)))
		err = -errno;
	if (l >= 0)
		close(l);
	if (c >= 0)
		close(c);
	return err;
}

/* The server on 127.0.0.1, a port of the kernel's choice: 0 or -errno. */
static int serve(struct httpd **hp, int *port)
{
	struct httpd_addr a = { .len = sizeof(struct sockaddr_in), .what = "test", .text = "lo:0" };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&a.ss, got;
	struct httpd_opts o = { .path = "/metrics", .content_type = "text/plain",
				.render = render_big };
	socklen_t len = sizeof(got);
	struct httpd *h;
	int err;

	err = loopback_up();
	if (err)
		return err;
	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	err = httpd__open(&h, &a);
	if (err)
		return err;
	if (getsockname(h->lfd, (struct sockaddr *)&got, &len) || httpd__start(h, &o)) {
		httpd__close(h);
		return -EIO;
	}
	*port = ntohs(got.sin_port);
	*hp = h;
	return 0;
}

#define SERVE(h, port)								\
	do {									\
		int err_ = serve(&(h), &(port));				\
									\
		if (err_ == -ENETUNREACH) {					\
			ut_skip_reason("127.0.0.1 is not up here (a network namespace of its own?)"); \
			return UT_SKIP;						\
		}								\
		UT_ASSERT(!err_, "no server: %s", strerror(-err_));		\
	} while (0)

/* A client that asked @req: its socket, or -1. @stall: a reader that
 * takes little at a time. */
static int ask(int port, const char *req, bool stall)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), small = 4096, mss = 536;

	if (fd < 0)
		return -1;
	if ((stall && (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) ||
		       setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)))) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Everything until the server closes (or READ_MS of silence): the bytes
 * read, the status line's code into @code (0: none). Closes @fd. */
static size_t take(int fd, int *code, size_t *body)
{
	static char buf[64 * 1024];
	size_t got = 0, hdr = 0;
	char head[256] = "";
	ssize_t n;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, READ_MS) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		if (got < sizeof(head) - 1)
			memcpy(head + got, buf, sizeof(head) - 1 - got < (size_t)n ?
			       sizeof(head) - 1 - got : (size_t)n);
		got += n;
	}
	close(fd);
	*code = 0;
	sscanf(head, "HTTP/1.1 %d", code);
	if (strstr(head, "\r\n\r\n"))
		hdr = strstr(head, "\r\n\r\n") + 4 - head;
	*body = got - hdr;
	return got;
}

static int test_answers(void)
{
	struct httpd *h;
	size_t body;
	int port, code, fd;

	SERVE(h, port);
	fd = ask(port, REQ, false);
	UT_ASSERT(fd >= 0, "connect: %s", strerror(errno));
	take(fd, &code, &body);
	UT_ASSERT(code == 200 && body == BODY, "GET: %d, %zu bytes", code, body);
	fd = ask(port, "HEAD /metrics HTTP/1.1\r\n\r\n", false);
	UT_ASSERT(fd >= 0, "connect");
	take(fd, &code, &body);
	UT_ASSERT(code == 200 && body == 0, "HEAD: %d, %zu bytes", code, body);
	fd = ask(port, "GET /other HTTP/1.0\r\n\r\n", false);
	UT_ASSERT(fd >= 0, "connect");
	take(fd, &code, &body);
	UT_ASSERT(code == 404, "GET /other: %d", code);
	httpd__close(h);
	return 0;
}

/* A render that fails: 500, its reason in the body (not the text of a
 * wrong path). */
static int test_render_fails(void)
{
	char buf[1024] = "";
	struct httpd *h;
	size_t got = 0;
	int port, fd;
	ssize_t n;

	SERVE(h, port);
	render_err = -ENOMEM;
	fd = ask(port, REQ, false);
	UT_ASSERT(fd >= 0, "connect: %s", strerror(errno));
	while (got < sizeof(buf) - 1 && (n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
		got += n;
	close(fd);
	render_err = 0;
	httpd__close(h);
	UT_ASSERT(!strncmp(buf, "HTTP/1.1 500 ", 13) &&
		  strstr(buf, "the answer could not be made (Cannot allocate memory)") &&
		  !strstr(buf, "answers GET"), "answered: %.200s", buf);
	return 0;
}

/*
 * Every slot an answer going out to a reader that stalls: a newcomer
 * hears 503 until the oldest has gone on HTTPD_EVICT_WRITE_AGE, then takes
 * its place and gets the whole answer; the one cut off gets less; the
 * others, read at last, get theirs whole. One refused, one evicted.
 */
static int test_stalled_readers(void)
{
	int fd[HTTPD_CONN_MAX], port, code, whole = 0, cut = 0;
	double t0, t503;
	struct httpd_stats hs;
	struct httpd *h;
	size_t body;

	SERVE(h, port);
	t0 = now_sec();
	for (int i = 0; i < HTTPD_CONN_MAX; i++) {
		fd[i] = ask(port, REQ, true);
		UT_ASSERT(fd[i] >= 0, "connect %d: %s", i, strerror(errno));
	}
	sleep_sec(0.2);
	take(ask(port, REQ, false), &code, &body);
	t503 = now_sec() - t0;
	UT_ASSERT(t503 < HTTPD_EVICT_WRITE_AGE, "the set-up took %.2f s: the oldest could go", t503);
	UT_ASSERT(code == 503, "a newcomer within %.2f s: %d, not 503", t503, code);
	sleep_sec(t0 + HTTPD_EVICT_WRITE_AGE + 0.3 - now_sec());
	take(ask(port, REQ, false), &code, &body);
	UT_ASSERT(code == 200 && body == BODY, "a newcomer after %.2f s: %d, %zu bytes",
		  now_sec() - t0, code, body);
	for (int i = 0; i < HTTPD_CONN_MAX; i++) {
		take(fd[i], &code, &body);
		if (code == 200 && body == BODY)
			whole++;
		else if (code == 200)
			cut++;
	}
	httpd__stop(h);
	httpd__stats(h, &hs);
	httpd__close(h);
	UT_ASSERT(cut == 1 && whole == HTTPD_CONN_MAX - 1, "%d cut off, %d whole", cut, whole);
	UT_ASSERT(hs.refused == 1 && hs.evicted == 1, "counted %llu refused, %llu evicted",
		  (unsigned long long)hs.refused, (unsigned long long)hs.evicted);
	return 0;
}

/* Stopped, the server takes no connection: a scraper is refused at once
 * while the app goes on stopping, not left waiting in a backlog. */
static int test_stopped_refuses(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int port, fd, err;
	struct httpd *h;

	SERVE(h, port);
	httpd__stop(h);
	sa.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	UT_ASSERT(fd >= 0, "socket: %s", strerror(errno));
	err = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	close(fd);
	httpd__close(h);
	UT_ASSERT(err == ECONNREFUSED, "a connect after the stop: %s, not refused",
		  err ? strerror(err) : "taken");
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_answers),
	UT_CASE(test_stopped_refuses),
	UT_CASE(test_render_fails),
	UT_CASE(test_stalled_readers),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
