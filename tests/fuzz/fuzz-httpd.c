// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The metrics server's request parser (apps/common/httpd.c's
 * request_status(), compiled in here), the one parser that faces
 * whoever reaches --metrics-listen, on requests that arrive in pieces.
 *
 * Input: a byte of piece sizes' seed, then the bytes a client sends, at
 * most HTTPD_REQ_MAX taken (the server reads no more). They are appended
 * to the connection's buffer piece by piece, as conn_read() does, the
 * parser asked after each, until it answers.
 *
 * The oracle: an answer is 0 (wait for more), 200, 400, 404, 405, 414 or
 * 431; 414 and 431 only with the buffer full; 200 only for a request
 * line "GET" or "HEAD", a target of the path alone or with a query, and
 * HTTP/1.0 or /1.1, once a blank line ended the headers; HEAD is said for
 * HEAD alone, and every such request whose headers ended is answered
 * 200. The answer does not depend on how the bytes were cut: the whole
 * at once gets the answer its first piece with one got (or none).
 */
#include <stdbool.h>
#include <string.h>

#include "../../apps/common/httpd.c"
#include "fuzz.h"

/* util.c's clock, which the parser does not use: not linked in. */
double now_sec(void)
{
	return 0;
}

void sleep_sec(double s)
{
	(void)s;
}


/* What the request's first line says, checked apart from the parser. */
static bool valid_get(const char *p, size_t len, bool *head)
{
	const char *nl = memchr(p, '\n', len), *t;
	size_t l;

	if (!nl)
		return false;
	l = nl - p;
	if (l && p[l - 1] == '\r')
		l--;
	if (l >= 4 && !memcmp(p, "GET ", 4))
		t = p + 4, *head = false;
	else if (l >= 5 && !memcmp(p, "HEAD ", 5))
		t = p + 5, *head = true;
	else
		return false;
	if (p + l - t < 8 + 9 || memcmp(t, "/metrics", 8) || (t[8] != ' ' && t[8] != '?'))
		return false;
	if (memcmp(p + l - 9, " HTTP/1.1", 9) && memcmp(p + l - 9, " HTTP/1.0", 9))
		return false;
	/* The target: printable, no blank, up to the version. */
	for (; t < p + l - 9; t++)
		if (*t <= ' ' || *t >= 0x7f)
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct httpd h = { .o = { .path = "/metrics", .content_type = "text/plain" } };
	static struct conn c, whole;
	bool head = false, head2 = false, vhead = false;
	uint32_t seed;
	size_t n, at = 0;
	int code = 0, code2;

	if (size < 1)
		return 0;
	seed = data[0] * 2654435761u;
	data++;
	size--;
	if (size > HTTPD_REQ_MAX)
		size = HTTPD_REQ_MAX;
	c.len = 0;
	while (at < size && !code) {
		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 64;
		if (n > size - at)
			n = size - at;
		memcpy(c.req + c.len, data + at, n);
		c.len += n;
		at += n;
		code = request_status(&h, &c, &head);
	}
	CHECK(code == 0 || code == 200 || code == 400 || code == 404 || code == 405 ||
	      code == 414 || code == 431);
	CHECK((code != 414 && code != 431) || c.len == HTTPD_REQ_MAX);
	if (code == 200) {
		CHECK(valid_get(c.req, c.len, &vhead) && head == vhead);
		CHECK(memmem(c.req, c.len, "\r\n\r\n", 4) || memmem(c.req, c.len, "\n\n", 2));
	}
	/* The whole at once: the answer of its first prefix that had one. */
	memcpy(whole.req, data, size);
	whole.len = size;
	code2 = request_status(&h, &whole, &head2);
	CHECK(code2 == code && (code != 200 || head2 == head));
	/* And a good request whose headers ended is answered. */
	if (valid_get(whole.req, size, &vhead) &&
	    (memmem(whole.req, size, "\r\n\r\n", 4) || memmem(whole.req, size, "\n\n", 2)))
		CHECK(code == 200 && head == vhead);
	return 0;
}
