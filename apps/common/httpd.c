// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A small HTTP/1.x server of one resource: httpd.h says what it does and
 * what it bounds. Each connection is a little state machine:
 *
 *   READ    the request, until its headers end (HTTPD_REQ_TIMEOUT)
 *   WRITE   the answer, as the socket takes it (HTTPD_RESP_TIMEOUT)
 *   LINGER  our side shut; what the client still sends is read and
 *           dropped until it closes (HTTPD_LINGER)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "httpd.h"
#include "util.h"

/* Scrapers come one at a time: 64 leaves room for a few of them and a
 * curl, and bounds what a flood of idle connections holds (a request
 * buffer each). */
#define HTTPD_CONN_MAX		64
/* A request is a line and a few headers: Prometheus sends about 300 bytes. */
#define HTTPD_REQ_MAX		4096
/* Seconds to send the whole request: a slowloris client is cut off then. */
#define HTTPD_REQ_TIMEOUT	2.0
/* Seconds to take the response: a reader that stalls is cut off then. */
#define HTTPD_RESP_TIMEOUT	5.0
/* A full table takes a newcomer in place of an answer still going out
 * once that one has gone on this long: a scrape of a loopback or LAN
 * reader takes milliseconds; readers that stall cannot keep one out. */
#define HTTPD_EVICT_WRITE_AGE	1.0
/* Seconds after the response during which what the client still sends is
 * read and dropped: a close with unread data resets the connection, and
 * the reset could reach the client before it read the answer. */
#define HTTPD_LINGER		1.0
/* Out of descriptors (EMFILE), accept() again after this many seconds,
 * rather than spin on a listening socket that stays readable. */
#define HTTPD_ACCEPT_PAUSE	0.1
/* The listen backlog, and the most accepted in one turn: a flood of
 * connections cannot keep the thread from the ones it has. */
#define HTTPD_BACKLOG		128

enum conn_state { CONN_FREE, CONN_READ, CONN_WRITE, CONN_LINGER };

struct conn {
	int fd;
	enum conn_state state;
	double deadline;		/* now_sec() by which this state ends */
	size_t len;			/* request bytes so far */
	char *out;			/* the response (malloc) */
	size_t out_len, out_off;
	char req[HTTPD_REQ_MAX];
};

struct httpd {
	int lfd;			/* the listening socket */
	int stop_fd;			/* eventfd: httpd__stop() */
	bool started;
	pthread_t thread;
	struct httpd_opts o;
	double accept_after;		/* now_sec(): accept() paused until */
	const char *what, *where;	/* the option, ADDR:PORT: for messages */
	struct httpd_stats stats;
	struct conn conn[HTTPD_CONN_MAX];
};

/* ---- the address ---------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int addr_bad(const char *what, const char *arg, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: '%s': ", what, arg);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

int httpd_parse_addr(const char *arg, const char *what, struct httpd_addr *a)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a->ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&a->ss;
	const char *given = arg, *port = arg, *colon, *end;
	char host[INET6_ADDRSTRLEN];
	unsigned long p;
	bool v6 = false;
	size_t hl = 0;

	memset(a, 0, sizeof(*a));
	if (arg[0] == '[') {
		end = strchr(arg, ']');
		if (!end)
			return addr_bad(what, given, "no ']' after the IPv6 address; give e.g. [::1]:9423");
		if (end[1] != ':')
			return addr_bad(what, given, "no port after ']'; give e.g. [::1]:9423");
		v6 = true;
		hl = end - arg - 1;
		arg++;
		port = end + 2;
	} else if ((colon = strrchr(arg, ':'))) {
		if (memchr(arg, ':', colon - arg))
			return addr_bad(what, given, "put an IPv6 address in brackets: [::1]:9423");
		hl = colon - arg;
		port = colon + 1;
	} else if (!*arg || strspn(arg, "0123456789") != strlen(arg)) {
		return addr_bad(what, given, "no port; give ADDR:PORT (127.0.0.1:9423, [::1]:9423, 0.0.0.0:9423) or PORT alone for 127.0.0.1");
	}
	if (!*port || strspn(port, "0123456789") != strlen(port) ||
	    (p = strtoul(port, NULL, 10)) < 1 || p > 65535 || strlen(port) > 5)
		return addr_bad(what, given, "the port '%s' is not a number from 1 to 65535", port);
	if (hl >= sizeof(host))
		return addr_bad(what, given, "the address is too long for one; give a numeric IPv4 address or [IPv6]");
	memcpy(host, arg, hl);
	host[hl] = '\0';
	if (v6) {
		/* A link-local address needs its interface (a scope id),
		 * which bind() asks for and this form does not carry. */
		if (strchr(host, '%') || (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1 &&
					  IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)))
			return addr_bad(what, given, "'%s': a link-local address (or a zone) is not served; give a global address, [::1] or [::]", host);
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return addr_bad(what, given, "'%s' is not a numeric IPv6 address", host);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(p);
		a->len = sizeof(*s6);
	} else {
		if (!hl)	/* localhost only, unless an address is given */
			s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		else if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return addr_bad(what, given, "'%s' is not a numeric IPv4 address (names are not looked up; IPv6 goes in brackets: [::1]:9423)", host);
		s4->sin_family = AF_INET;
		s4->sin_port = htons(p);
		a->len = sizeof(*s4);
	}
	a->what = what;
	a->text = given;
	return 0;
}

/* ---- the answer ----------------------------------------------------------------- */

void tbuf_append(struct tbuf *b, const char *p, size_t n)
{
	size_t cap;
	char *q;

	if (b->err || !n)
		return;
	if (b->cap - b->len < n) {
		for (cap = b->cap ?: 16384; cap - b->len < n; cap *= 2)
			;
		q = realloc(b->p, cap);
		if (!q) {
			b->err = -ENOMEM;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* One line or part of one: ours are far shorter than the room. */
void tbuf_printf(struct tbuf *b, const char *fmt, ...)
{
	char part[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(part, sizeof(part), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(part)) {
		b->err = b->err ?: -EOVERFLOW;
		return;
	}
	tbuf_append(b, part, n);
}

static const char *status_text(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	free(c->out);
	c->out = NULL;
	c->fd = -1;
	c->state = CONN_FREE;
}

/* A short answer without waiting: for a connection about to be closed. */
static void answer_now(int fd, int code)
{
	char r[160];
	int n;

	n = snprintf(r, sizeof(r), "HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
		     code, status_text(code));
	(void)!send(fd, r, n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Send what the socket takes; all of it: shut our side, linger. */
static void conn_write(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->out_off += n;
	}
	free(c->out);
	c->out = NULL;
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_LINGER;
	c->deadline = now_sec() + HTTPD_LINGER;
}

/* Answer @code: 200 with the resource (its header alone for HEAD). */
static void respond(struct httpd *h, struct conn *c, int code, bool head)
{
	const char *type = "text/plain; charset=utf-8";
	struct tbuf body = {}, r = {};
	int err = 0;

	if (code == 200)
		err = h->o.render(&body, h->o.ctx);
	if (err) {
		free(body.p);
		body = (struct tbuf){};
		code = 500;
		tbuf_printf(&body, "500 %s: the answer could not be made (%s)\n",
			    status_text(code), strerror(err < 0 ? -err : err));
	} else if (code == 200) {
		type = h->o.content_type;
	} else {
		tbuf_printf(&body, "%d %s: this server answers GET %s only\n", code,
			    status_text(code), h->o.path);
	}
	tbuf_printf(&r, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
		    "Connection: close\r\n\r\n", code, status_text(code), type, body.len,
		    code == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (!head)
		tbuf_append(&r, body.p, body.len);
	free(body.p);
	if (r.err) {
		free(r.p);
		conn_close(c);
		return;
	}
	c->out = r.p;
	c->out_len = r.len;
	c->out_off = 0;
	c->state = CONN_WRITE;
	c->deadline = now_sec() + HTTPD_RESP_TIMEOUT;
	conn_write(c);
}

/*
 * What to answer the request so far: 0 while it is not complete. The
 * request line (METHOD SP TARGET SP HTTP/1.x) is judged as soon as it is
 * whole; GET or HEAD of the path waits for the end of the headers, which
 * it does not read.
 */
static int request_status(const struct httpd *h, const struct conn *c, bool *head)
{
	const char *p = c->req, *nl = memchr(p, '\n', c->len), *end, *target, *sp;
	size_t mlen, tlen, plen = strlen(h->o.path);

	if (!nl)
		return c->len == HTTPD_REQ_MAX ? 414 : 0;
	end = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
	for (mlen = 0; p + mlen < end && p[mlen] >= 'A' && p[mlen] <= 'Z'; mlen++)
		;
	target = p + mlen + 1;
	if (!mlen || target >= end || target[-1] != ' ' || *target != '/')
		return 400;
	for (sp = target; sp < end && *sp > ' ' && *sp < 0x7f; sp++)
		;
	if (sp == end || *sp != ' ' || end - sp - 1 != 8 ||
	    (memcmp(sp + 1, "HTTP/1.1", 8) && memcmp(sp + 1, "HTTP/1.0", 8)))
		return 400;
	*head = mlen == 4 && !memcmp(p, "HEAD", 4);
	if (!*head && (mlen != 3 || memcmp(p, "GET", 3)))
		return 405;
	tlen = sp - target;
	if (tlen < plen || memcmp(target, h->o.path, plen) ||
	    (tlen > plen && target[plen] != '?'))
		return 404;
	if (memmem(p, c->len, "\r\n\r\n", 4) || memmem(p, c->len, "\n\n", 2))
		return 200;
	return c->len == HTTPD_REQ_MAX ? 431 : 0;
}

/* What the client sent, added to its request. Return: the bytes read (0:
 * nothing yet), or -1 after closing a client that went away. */
static ssize_t conn_recv(struct conn *c)
{
	ssize_t n;

	n = recv(c->fd, c->req + c->len, HTTPD_REQ_MAX - c->len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (n <= 0) {		/* gone before asking, or an error */
		conn_close(c);
		return -1;
	}
	c->len += n;
	return n;
}

static void conn_read(struct httpd *h, struct conn *c)
{
	bool head = false;
	int code;

	if (conn_recv(c) <= 0)
		return;
	code = request_status(h, c, &head);
	if (code)
		respond(h, c, code, head);
}

/* After the answer: read and drop until the client closes, at most a few
 * reads per turn (a client streaming on loopback would hold the thread). */
#define LINGER_READS	4
static void conn_linger(struct conn *c)
{
	char sink[4096];
	ssize_t n;
	int i = 0;

	do
		n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
	while ((n > 0 && ++i < LINGER_READS) || (n < 0 && errno == EINTR));
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
		conn_close(c);
}

/* The slot in @state with the earliest deadline, if that is @by or
 * sooner; -1: none. */
static int oldest(const struct httpd *h, enum conn_state state, double by)
{
	int i, old = -1;

	for (i = 0; i < HTTPD_CONN_MAX; i++)
		if (h->conn[i].state == state && h->conn[i].deadline <= by &&
		    (old < 0 || h->conn[i].deadline < h->conn[old].deadline))
			old = i;
	return old;
}

/* A connection closed before its time to make room for a newcomer. */
static void evict(struct httpd *h, struct conn *c, int code)
{
	if (code)
		answer_now(c->fd, code);
	conn_close(c);
	h->stats.evicted++;
}

/* A slot for a new connection when all are taken: an answered one's
 * (LINGER: its answer is out), else that of the connection waiting
 * longest for its request, however young (told 408: connections that
 * never ask, opened faster than they could age, must not keep out one
 * that asks), else that of the answer going out longest if for
 * HTTPD_EVICT_WRITE_AGE (a reader that stalls: cut off). -1: none. */
static int free_slot(struct httpd *h, double now)
{
	int i;

	for (i = 0; i < HTTPD_CONN_MAX; i++)
		if (h->conn[i].state == CONN_FREE)
			return i;
	i = oldest(h, CONN_LINGER, INFINITY);
	if (i >= 0) {
		conn_close(&h->conn[i]);
		return i;
	}
	/* Its request may have come since it was admitted (a client slow
	 * to send behind its connect, or newcomers admitted in the same
	 * turn): read first; one answered is spared. Each turn takes a
	 * connection out of READ: at most HTTPD_CONN_MAX turns. */
	while ((i = oldest(h, CONN_READ, INFINITY)) >= 0) {
		conn_read(h, &h->conn[i]);
		if (h->conn[i].state == CONN_READ) {
			evict(h, &h->conn[i], 408);
			return i;
		}
		if (h->conn[i].state == CONN_FREE)
			return i;	/* it closed, or its answer failed */
		if (h->conn[i].state == CONN_LINGER) {
			conn_close(&h->conn[i]);
			return i;	/* answered whole */
		}
	}
	i = oldest(h, CONN_WRITE, now + HTTPD_RESP_TIMEOUT - HTTPD_EVICT_WRITE_AGE);
	if (i >= 0)
		evict(h, &h->conn[i], 0);
	return i;
}

/* A new connection: in a slot, what it sent with its connection read at
 * once (most clients ask at once) and answered if whole, so that the next
 * newcomers find it answered, not waiting. */
static void admit(struct httpd *h, int fd)
{
	double now = now_sec();
	int i = free_slot(h, now);

	if (i < 0) {
		answer_now(fd, 503);
		close(fd);
		h->stats.refused++;
		return;
	}
	h->conn[i] = (struct conn){ .fd = fd, .state = CONN_READ,
				    .deadline = now + HTTPD_REQ_TIMEOUT };
	conn_read(h, &h->conn[i]);
}

static void accept_all(struct httpd *h)
{
	int fd, k;

	for (k = 0; k < HTTPD_BACKLOG; k++) {
		fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				h->accept_after = now_sec() + HTTPD_ACCEPT_PAUSE;
			return;	/* EAGAIN: all taken */
		}
		admit(h, fd);
	}
}

/* Connections past their deadline: a request not sent in time hears 408. */
static void expire(struct httpd *h, double now)
{
	struct conn *c;

	for (c = h->conn; c < h->conn + HTTPD_CONN_MAX; c++) {
		if (c->state == CONN_FREE || now < c->deadline)
			continue;
		if (c->state == CONN_READ)
			answer_now(c->fd, 408);
		conn_close(c);
	}
}

static void *httpd_thread(void *arg)
{
	struct pollfd pfd[2 + HTTPD_CONN_MAX];
	struct conn *who[2 + HTTPD_CONN_MAX];
	struct httpd *h = arg;
	int i, n, ms;

	for (;;) {
		double now = now_sec(), next = now + 1;
		bool listening = now >= h->accept_after;

		n = 0;
		pfd[n++] = (struct pollfd){ .fd = h->stop_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = listening ? h->lfd : -1, .events = POLLIN };
		if (!listening && h->accept_after < next)
			next = h->accept_after;
		for (i = 0; i < HTTPD_CONN_MAX; i++) {
			struct conn *c = &h->conn[i];

			if (c->state == CONN_FREE)
				continue;
			who[n] = c;
			pfd[n++] = (struct pollfd){ .fd = c->fd,
				.events = c->state == CONN_WRITE ? POLLOUT : POLLIN };
			if (c->deadline < next)
				next = c->deadline;
		}
		ms = next > now ? (int)((next - now) * 1000) + 1 : 0;
		if (poll(pfd, n, ms) < 0) {
			if (errno != EINTR)
				sleep_sec(HTTPD_ACCEPT_PAUSE);	/* ENOMEM: later */
			continue;
		}
		if (pfd[0].revents)
			break;
		for (i = 2; i < n; i++) {
			struct conn *c = who[i];

			if (!pfd[i].revents)
				continue;
			if (c->state == CONN_READ)
				conn_read(h, c);
			else if (c->state == CONN_WRITE)
				conn_write(c);
			else
				conn_linger(c);
		}
		if (pfd[1].revents)
			accept_all(h);
		expire(h, now_sec());
	}
	for (i = 0; i < HTTPD_CONN_MAX; i++)
		if (h->conn[i].state != CONN_FREE)
			conn_close(&h->conn[i]);
	return NULL;
}

/* ---- life cycle ------------------------------------------------------------------ */

void httpd__stats(const struct httpd *h, struct httpd_stats *s)
{
	*s = h->stats;
}

int httpd__open(struct httpd **hp, const struct httpd_addr *a)
{
	const char *fix = "";
	struct httpd *h;
	int one = 1, err, i;

	*hp = NULL;
	if (!a->len)
		return 0;
	h = calloc(1, sizeof(*h));
	if (!h) {
		err = -ENOMEM;
		goto out_msg;
	}
	h->what = a->what;
	h->where = a->text;
	h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->stop_fd < 0) {
		err = -errno;
		goto out_free;
	}
	h->lfd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0) {
		err = -errno;
		goto out_stop_fd;
	}
	/* A restart while the last run's connections sit in TIME_WAIT; it
	 * does not let two listen on one port. */
	setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(h->lfd, (const struct sockaddr *)&a->ss, a->len) ||
	    listen(h->lfd, HTTPD_BACKLOG)) {
		err = -errno;
		goto out_lfd;
	}
	for (i = 0; i < HTTPD_CONN_MAX; i++)
		h->conn[i].fd = -1;
	*hp = h;
	return 0;

out_lfd:
	close(h->lfd);
out_stop_fd:
	close(h->stop_fd);
out_free:
	free(h);
out_msg:
	if (err == -EADDRINUSE)
		fix = ": the port is in use (ss -ltnp says by whom); pick another one";
	else if (err == -EADDRNOTAVAIL)
		fix = ": the address is not one of this host's (ip addr shows them)";
	else if (err == -EACCES)
		fix = ": a port below net.ipv4.ip_unprivileged_port_start needs CAP_NET_BIND_SERVICE; pick a port from there";
	else if (err == -EAFNOSUPPORT)
		fix = ": the host has no such address family (IPv6 off?); listen on an IPv4 address";
	fprintf(stderr, "%s: %s %s: %s%s\n", program_invocation_short_name, a->what, a->text,
		strerror(-err), fix);
	return err;
}

int httpd__start(struct httpd *h, const struct httpd_opts *o)
{
	sigset_t all, old;
	int err;

	if (!h)
		return 0;
	h->o = *o;
	/* Signals stay with the app's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&h->thread, NULL, httpd_thread, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fprintf(stderr, "%s: %s %s: no thread to serve it: %s\n",
			program_invocation_short_name, h->what, h->where, strerror(err));
		return -err;
	}
	h->started = true;
	return 0;
}

void httpd__stop(struct httpd *h)
{
	uint64_t one = 1;

	if (!h)
		return;
	if (h->started) {
		(void)!write(h->stop_fd, &one, sizeof(one));
		pthread_join(h->thread, NULL);
		h->started = false;
	}
	/* Served no more: a scraper's connect is refused from now on, not
	 * taken into a backlog that nobody answers while the app stops. */
	if (h->lfd >= 0)
		close(h->lfd);
	h->lfd = -1;
}

void httpd__close(struct httpd *h)
{
	if (!h)
		return;
	httpd__stop(h);
	close(h->stop_fd);
	free(h);
}
