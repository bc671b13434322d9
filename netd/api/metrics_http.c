/*
 * metrics_http - a deliberately tiny HTTP/1.x responder on libevent
 * (evconnlistener + bufferevent): one request head per connection, one
 * answer, close.  libevent's evhttp is not used here because 2.1 cannot
 * bound its connections; the parser is ours, pure and fuzzed
 * (tests/fuzz/fuzz_metrics_http.c).
 */
#include "netd/api/metrics_http.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "common/log.h"

struct mconn {
	struct metrics_http *m;
	struct bufferevent *bev;
	struct mconn *next, **pprev;
};

struct metrics_http {
	struct evconnlistener *lis;
	metrics_http_fn fn;
	void *ctx;
	struct mconn *conns;
	unsigned int n_conns;
	unsigned long long refused;
};

/* RFC 9110 5.6.2: tchar. */
static int is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The end of the head (just past the empty line), or 0 if not there yet. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

int metrics_http_parse(const char *buf, size_t len, struct metrics_http_req *out)
{
	size_t end = head_end(buf, len), i = 0, m, t0, t1;

	out->verdict = METRICS_HTTP_BAD;
	out->head = 0;
	if (!end)
		return 0;
	/* method */
	while (i < end && is_tchar(buf[i]))
		i++;
	m = i;
	if (m == 0 || i >= end || buf[i] != ' ')
		return 1;
	t0 = ++i;
	while (i < end && buf[i] != ' ' && buf[i] != '\r' && buf[i] != '\n' &&
	       (unsigned char)buf[i] > ' ' && (unsigned char)buf[i] < 0x7f)
		i++;
	t1 = i;
	if (t1 == t0 || i >= end || buf[i] != ' ')
		return 1;
	i++;
	if (end - i < 9 || memcmp(buf + i, "HTTP/1.", 7) != 0 || buf[i + 7] < '0' ||
	    buf[i + 7] > '9' || (buf[i + 8] != '\r' && buf[i + 8] != '\n'))
		return 1;
	if (!((m == 3 && memcmp(buf, "GET", 3) == 0) || (m == 4 && memcmp(buf, "HEAD", 4) == 0))) {
		out->verdict = METRICS_HTTP_NO_METHOD;
		return 1;
	}
	out->head = m == 4;
	{
		size_t plen = t1 - t0;
		const char *q = memchr(buf + t0, '?', plen);

		if (q)
			plen = (size_t)(q - (buf + t0));
		out->verdict = plen == 8 && memcmp(buf + t0, "/metrics", 8) == 0 ?
				       METRICS_HTTP_OK : METRICS_HTTP_NOT_FOUND;
	}
	return 1;
}

static void conn_free(struct mconn *c)
{
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	c->m->n_conns--;
	bufferevent_free(c->bev);
	free(c);
}

static void on_event(struct bufferevent *bev, short what, void *arg);

static void on_written(struct bufferevent *bev, void *arg)
{
	(void)bev;
	conn_free(arg);	/* everything is out: close */
}

static void respond(struct mconn *c, const struct metrics_http_req *rq)
{
	struct evbuffer *o = bufferevent_get_output(c->bev);
	char *text = NULL;
	size_t len = 0;
	const char *reason = "Bad Request", *body = "bad request\n";
	int code = rq->verdict;

	if (code == METRICS_HTTP_OK) {
		FILE *f = open_memstream(&text, &len);

		if (f) {
			c->m->fn(c->m->ctx, f);
			if (fclose(f) != 0) {
				free(text);
				text = NULL;
			}
		}
		if (!text)
			code = 500, reason = "Internal Server Error", body = "out of memory\n";
	} else if (code == METRICS_HTTP_NOT_FOUND) {
		reason = "Not Found", body = "only /metrics here\n";
	} else if (code == METRICS_HTTP_NO_METHOD) {
		reason = "Method Not Allowed", body = "use GET\n";
	}
	if (code == METRICS_HTTP_OK) {
		evbuffer_add_printf(o, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
				    "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
				    len);
		if (!rq->head)
			evbuffer_add(o, text, len);
	} else {
		evbuffer_add_printf(o, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
				    "Content-Length: %zu\r\n%sConnection: close\r\n\r\n", code, reason,
				    strlen(body), code == 405 ? "Allow: GET, HEAD\r\n" : "");
		if (!rq->head)
			evbuffer_add(o, body, strlen(body));
	}
	free(text);
	/* Nothing more is read; close once the answer is out. */
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setcb(c->bev, NULL, on_written, on_event, c);
	bufferevent_enable(c->bev, EV_WRITE);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct mconn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in);
	struct metrics_http_req rq;
	const char *buf;

	if (len > METRICS_HTTP_HEAD_MAX)
		len = METRICS_HTTP_HEAD_MAX;
	buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)len);
	if (buf && metrics_http_parse(buf, len, &rq) == 1) {
		respond(c, &rq);
		return;
	}
	if (!buf || len >= METRICS_HTTP_HEAD_MAX) {
		rq = (struct metrics_http_req){ .verdict = METRICS_HTTP_BAD };
		respond(c, &rq);
	}
}

/* EOF, an error or a timeout, reading or writing: the connection is done. */
static void on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	conn_free(arg);
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
		      int salen, void *arg)
{
	struct metrics_http *m = arg;
	struct timeval rt = { .tv_sec = METRICS_HTTP_READ_TIMEOUT_S };
	struct timeval wt = { .tv_sec = METRICS_HTTP_WRITE_TIMEOUT_S };
	struct mconn *c;

	(void)sa;
	(void)salen;
	if (m->n_conns >= METRICS_HTTP_MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
		m->refused++;
		close(fd);
		return;
	}
	c->m = m;
	c->bev = bufferevent_socket_new(evconnlistener_get_base(lis), fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		close(fd);
		free(c);
		return;
	}
	c->next = m->conns;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &m->conns;
	m->conns = c;
	m->n_conns++;
	bufferevent_setwatermark(c->bev, EV_READ, 0, METRICS_HTTP_HEAD_MAX);
	bufferevent_set_timeouts(c->bev, &rt, &wt);
	bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
	bufferevent_enable(c->bev, EV_READ);
}

int metrics_http_new(struct event_base *base, const struct addr *addr, uint16_t port,
		     metrics_http_fn fn, void *ctx, struct metrics_http **ret)
{
	struct metrics_http *m = calloc(1, sizeof(*m));
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;

	if (!m)
		return -ENOMEM;
	if (addr->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, addr->a, 4);
		sl = sizeof(*s4);
	} else if (addr->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, addr->a, 16);
		sl = sizeof(*s6);
	} else {
		free(m);
		return -EAFNOSUPPORT;
	}
	m->fn = fn;
	m->ctx = ctx;
	m->lis = evconnlistener_new_bind(base, on_accept, m,
					 LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
						 LEV_OPT_CLOSE_ON_EXEC,
					 METRICS_HTTP_MAX_CONNS, (struct sockaddr *)&ss, (int)sl);
	if (!m->lis) {
		int r = errno ? -errno : -EIO;

		free(m);
		return r;
	}
	*ret = m;
	return 0;
}

void metrics_http_free(struct metrics_http *m)
{
	if (!m)
		return;
	while (m->conns)
		conn_free(m->conns);
	evconnlistener_free(m->lis);
	free(m);
}
