/*
 * metrics_http - the metrics_listen TCP port: GET (or HEAD) /metrics in
 * the Prometheus text exposition format, and nothing else.  Read-only by
 * construction: the only thing it can do is call the exposition callback.
 * Other paths get 404, other methods 405 (Allow: GET, HEAD), malformed or
 * oversized requests 400; one request per connection (Connection: close).
 *
 * Limits: METRICS_HTTP_MAX_CONNS connections at once (more are accepted
 * and closed at once), a request head of at most METRICS_HTTP_HEAD_MAX
 * bytes, METRICS_HTTP_READ_TIMEOUT_S to send it and
 * METRICS_HTTP_WRITE_TIMEOUT_S to take the answer.  A body is never read.
 */
#ifndef NETD_METRICS_HTTP_H
#define NETD_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/addr.h"

#define METRICS_HTTP_MAX_CONNS       16
#define METRICS_HTTP_HEAD_MAX        8192	/* bytes: request line + headers */
#define METRICS_HTTP_READ_TIMEOUT_S  5
#define METRICS_HTTP_WRITE_TIMEOUT_S 10

struct event_base;
struct metrics_http;

/* What a request head asks for. */
enum metrics_http_verdict {
	METRICS_HTTP_OK = 200,		/* GET /metrics */
	METRICS_HTTP_BAD = 400,		/* not an HTTP/1.x request line */
	METRICS_HTTP_NOT_FOUND = 404,	/* another path */
	METRICS_HTTP_NO_METHOD = 405,	/* another method */
};

struct metrics_http_req {
	enum metrics_http_verdict verdict;
	int head;		/* HEAD: the answer has no body */
};

/*
 * metrics_http_parse() - classify the request head in @buf/@len (RFC 9112
 * 3: method SP request-target SP HTTP-version CRLF, headers, CRLF; bare
 * LF accepted).  The request-target's path must be exactly "/metrics"
 * (a query string is ignored).  Pure; @buf not retained.
 * Return: 1 and *@out filled (the head is complete); 0 need more bytes.
 */
int metrics_http_parse(const char *buf, size_t len, struct metrics_http_req *out);

/* The exposition, written to @out (an open_memstream() FILE). */
typedef void (*metrics_http_fn)(void *ctx, FILE *out);

/*
 * metrics_http_new() - listen on @addr:@port (TCP, SO_REUSEADDR) on
 * @base and answer with @fn(@ctx) (borrowed for the lifetime).
 * @ret: caller frees with metrics_http_free().
 * Return: 0; -errno (-EADDRINUSE, -EADDRNOTAVAIL, ...).
 */
int metrics_http_new(struct event_base *base, const struct addr *addr, uint16_t port,
		     metrics_http_fn fn, void *ctx, struct metrics_http **ret);

/* metrics_http_free() - close the listener and every connection; NULL-safe. */
void metrics_http_free(struct metrics_http *m);

#endif
