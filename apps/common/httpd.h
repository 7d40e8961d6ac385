/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small HTTP/1.x server of one resource (GET or HEAD of one path), for
 * an app's metrics: a thread of its own, nonblocking sockets under one
 * poll(), one request per connection (Connection: close).
 *
 *   httpd_parse_addr()  ADDR:PORT from the command line, before anything
 *   httpd__open()       the socket bound and listening: a port in use
 *                       fails here, before the app sets anything else up
 *   httpd__start()      the thread; @render runs on it for each request
 *   httpd__stop()       the thread told and joined, the port closed
 *   httpd__close()      the sockets and the memory (stops first)
 *
 * Concurrency: between start and stop the server's thread owns struct
 * httpd; the calling thread only writes its stop eventfd and joins. The
 * thread blocks every signal (they stay with the app's threads) and sends
 * with MSG_NOSIGNAL (a client gone away costs no SIGPIPE). @render is
 * called on it, one request at a time; whatever it reads must be safe to
 * read from another thread.
 *
 * Bad clients cost little and never stop it: at most HTTPD_CONN_MAX
 * connections (when all are taken, a newcomer replaces one already
 * answered, else the one waiting longest for its request, else the answer
 * going out longest, after HTTPD_EVICT_WRITE_AGE; else it hears 503 and is
 * closed at once: httpd__stats() counts both outcomes), each with
 * HTTPD_REQ_TIMEOUT seconds to send a request of at most HTTPD_REQ_MAX
 * bytes; anything but GET or HEAD of the path is answered 400, 404, 405,
 * 414 or 431 and closed.
 *
 * Errors: 0 or -errno, after a message on stderr naming the fix.
 */
#ifndef UCM_APP_HTTPD_H
#define UCM_APP_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Where to listen, as httpd_parse_addr() read it. */
struct httpd_addr {
	struct sockaddr_storage ss;
	socklen_t len;			/* 0: not given */
	const char *what, *text;	/* the option and its value, for messages */
};

/*
 * @arg: ADDR:PORT (127.0.0.1:9423, 0.0.0.0:9423), [ADDR6]:PORT ([::1]:9423),
 * or :PORT or PORT alone for 127.0.0.1 (localhost only unless an address
 * is given). Numbers only: names are not looked up. Return: 0, or -1 after
 * a message starting with @what (the option: "--metrics-listen").
 */
int httpd_parse_addr(const char *arg, const char *what, struct httpd_addr *a);

/* A growing text: after a failed growth it keeps the error (-ENOMEM) and
 * drops what follows. Free ->p when done. */
struct tbuf {
	char *p;
	size_t len, cap;
	int err;
};
void tbuf_append(struct tbuf *b, const char *p, size_t n);
/* One line or a part of one, at most 1023 bytes (-EOVERFLOW past that). */
void tbuf_printf(struct tbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The body of the resource into @body. Return: 0, or -errno (the answer
 * is then 500). */
typedef int (*httpd_render_fn)(struct tbuf *body, void *ctx);

struct httpd_opts {
	const char *path;		/* "/metrics"; a query string is ignored */
	const char *content_type;
	httpd_render_fn render;
	void *ctx;
};

struct httpd;

/* *@hp: the server, or NULL when @a was not given (a->len 0). */
int httpd__open(struct httpd **hp, const struct httpd_addr *a);
/* @o is copied. NULL @h: nothing to start. */
int httpd__start(struct httpd *h, const struct httpd_opts *o);
void httpd__stop(struct httpd *h);

/* What bad clients cost, since the start. */
struct httpd_stats {
	uint64_t refused;	/* newcomers told 503: no slot to give */
	uint64_t evicted;	/* connections closed before their time for a
				 * newcomer (told 408 if they had not asked) */
};
/* On the server's thread (in @render), or after httpd__stop(). */
void httpd__stats(const struct httpd *h, struct httpd_stats *s);
void httpd__close(struct httpd *h);

#endif /* UCM_APP_HTTPD_H */
