/*
 * netd/api/ - the sockets clients talk to: the control API on its unix
 * socket (ctl.c; requests decoded by ctlreq.c, pure) and GET /metrics over
 * TCP (metrics_http.c).  Nothing here includes the daemon: it reaches it
 * through struct ctl_ops.
 */
/*
 * ctl - control API server (evhttp on a unix socket).  Routing and JSON
 * shaping only: every state change goes through struct ctl_ops, and every
 * byte of a request is decoded by ctlreq (pure, fuzzed).
 *
 * Connections are counted through evhttp's bufferevent hook (one call per
 * accepted connection) and its close callback, set right after the accept
 * (conn_bind()).  That gives the cap (CTL_MAX_CONNS: accepting
 * pauses at the cap and resumes below it, so the rest wait in the kernel's
 * backlog), and a per-request deadline that a slow client's trickle does
 * not reset (evhttp's own timeout is per read).  accept() failures
 * (EMFILE, ENFILE) pause the listener for CTL_ACCEPT_PAUSE_MS instead of
 * letting a level-triggered listener spin and log on every turn.
 */
#include "netd/api/ctl.h"
#include "netd/common/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "common/clock.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "common/tbucket.h"
#include "netd/api/ctlreq.h"

#define CTL_LOG_RATE  1		/* warnings a second about clients and accept() */
#define CTL_LOG_BURST 5

struct ctl;

/* One connection evhttp serves (its bufferevent is @bev). */
struct ctl_conn {
	struct ctl *c;
	struct bufferevent *bev;	/* evhttp's (ours too until conn_bind()) */
	struct evhttp_connection *evcon;	/* known once conn_bind() ran */
	struct event *bind_ev;		/* conn_bind(), right after the accept */
	struct event *deadline;
	struct ctl_async *pending;	/* a verify run answers this connection later */
	struct ctl_conn *prev, *next;
};

/* A request answered after its handler returned (POST /v1/verify). */
struct ctl_async {
	struct ctl *c;
	struct ctl_conn *k;
	struct evhttp_request *req;
};

struct ctl {
	struct evhttp *http;
	struct evconnlistener *listener;
	const struct ctl_ops *ops;
	void *ctx;
	struct ctl_conn *conns;		/* open connections */
	struct event *resume;		/* re-enables accepting after an accept() failure */
	bool accept_paused;		/* by an accept() failure */
	bool at_cap;			/* by CTL_MAX_CONNS */
	bool closing;			/* ctl_free() runs: evhttp frees the connections */
	struct ctl_stats stats;
	struct tbucket log_bucket;
	uint64_t log_suppressed;
	struct ctl *next_ctl;		/* every server, for the listener's error callback */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static struct ctl *ctl_all;	/* (evconnlistener's error callback gets evhttp's arg, not ours) */

/* A warning about clients or accept(), at most CTL_LOG_RATE a second; the rest counted. */
__attribute__((format(printf, 2, 3)))
static void ctl_warn(struct ctl *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!tbucket_take(&c->log_bucket, CTL_LOG_RATE, CTL_LOG_BURST, clock_mono_ms())) {
		c->log_suppressed++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->log_suppressed)
		log_warn("control socket: %s (%llu similar messages suppressed)", msg,
			 (unsigned long long)c->log_suppressed);
	else
		log_warn("control socket: %s", msg);
	c->log_suppressed = 0;
}

/* Accept again if neither the cap nor an accept() failure holds it back. */
static void accept_update(struct ctl *c)
{
	bool want = !c->closing && !c->accept_paused &&
		    c->stats.connections < CTL_MAX_CONNS;

	if (c->closing || !c->listener)
		return;
	if (want)
		evconnlistener_enable(c->listener);
	else
		evconnlistener_disable(c->listener);
}

static void deadline_arm(struct ctl_conn *k)
{
	struct timeval tv = { CTL_REQUEST_DEADLINE_S, 0 };

	evtimer_add(k->deadline, &tv);
}

/*
 * The connection did not deliver a whole request in time (a slow client,
 * or an idle one holding a slot): shut the socket down; evhttp then sees
 * the end of the stream and frees the connection itself.
 */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct ctl_conn *k = arg;
	evutil_socket_t sfd = bufferevent_getfd(k->bev);

	(void)fd;
	(void)what;
	k->c->stats.timed_out++;
	ctl_warn(k->c, "a client sent no complete request in %d s; closing it",
		 CTL_REQUEST_DEADLINE_S);
	if (sfd >= 0)
		shutdown(sfd, SHUT_RDWR);
}

/* Forget @k: its connection is gone. */
static void conn_gone(struct ctl_conn *k)
{
	struct ctl *c = k->c;

	if (k->prev)
		k->prev->next = k->next;
	else
		c->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	event_free(k->deadline);
	if (k->bind_ev)
		event_free(k->bind_ev);
	free(k);
	c->stats.connections--;
	if (c->at_cap && c->stats.connections < CTL_MAX_CONNS)
		c->at_cap = false;
	accept_update(c);
}

/* evhttp_connection_set_closecb(): evhttp is freeing the connection. */
static void conn_closed(struct evhttp_connection *evcon, void *arg)
{
	struct ctl_conn *k = arg;

	evhttp_connection_set_closecb(evcon, NULL, NULL);	/* once */
	if (k->pending) {
		/* Its request goes with it: the run must not answer it. */
		k->c->ops->verify_cancel(k->c->ctx, k->pending);
		free(k->pending);
		k->pending = NULL;
	}
	conn_gone(k);
}

/*
 * Right after evhttp made the connection around our bufferevent (same loop
 * turn): learn its evhttp_connection, the callbacks' argument, to be told
 * when it closes.  Our reference kept the bufferevent valid meanwhile; if
 * evhttp already gave up on it, its callbacks are cleared.
 */
static void conn_bind(evutil_socket_t fd, short what, void *arg)
{
	struct ctl_conn *k = arg;
	struct bufferevent *bev = k->bev;
	bufferevent_data_cb rcb = NULL, wcb = NULL;
	bufferevent_event_cb ecb = NULL;
	void *cbarg = NULL;

	(void)fd;
	(void)what;
	event_free(k->bind_ev);
	k->bind_ev = NULL;
	bufferevent_getcb(bev, &rcb, &wcb, &ecb, &cbarg);
	if (cbarg && (rcb || wcb || ecb)) {
		k->evcon = cbarg;
		evhttp_connection_set_closecb(k->evcon, conn_closed, k);
	} else {
		conn_gone(k);
	}
	bufferevent_decref(bev);	/* evhttp's reference is the one that remains */
}

/* evhttp's bufferevent hook: one per accepted connection. */
static struct bufferevent *conn_new(struct event_base *base, void *arg)
{
	struct ctl *c = arg;
	struct ctl_conn *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;	/* evhttp makes its own: served, not counted */
	k->c = c;
	k->deadline = evtimer_new(base, on_deadline, k);
	k->bind_ev = event_new(base, -1, 0, conn_bind, k);
	k->bev = k->deadline && k->bind_ev ?
		 bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE) : NULL;
	if (!k->bev) {
		if (k->deadline)
			event_free(k->deadline);
		if (k->bind_ev)
			event_free(k->bind_ev);
		free(k);
		return NULL;
	}
	bufferevent_incref(k->bev);	/* until conn_bind() */
	event_active(k->bind_ev, 0, 0);
	k->next = c->conns;
	if (c->conns)
		c->conns->prev = k;
	c->conns = k;
	c->stats.connections++;
	c->stats.accepted++;
	deadline_arm(k);
	if (c->stats.connections >= CTL_MAX_CONNS && !c->at_cap) {
		c->at_cap = true;
		c->stats.at_cap++;
		ctl_warn(c, "%d connections open; new ones wait until one closes", CTL_MAX_CONNS);
	}
	accept_update(c);
	return k->bev;
}

/*
 * The connection @con (of a request just handled): its deadline starts
 * again, for the reply to leave and the next request to come.  Armed after
 * the handler, not when the request arrived: a handler that runs longer
 * than the deadline (a reload at thousands of sandboxes) must not have its
 * reply cut by a timer that expired while it ran.  @con may be gone by now:
 * then it is no longer in c->conns and nothing happens.
 */
static void conn_rearm(struct ctl *c, const struct evhttp_connection *con)
{
	for (struct ctl_conn *k = c->conns; con && k; k = k->next)
		if (k->evcon == con) {
			/* A request still being answered has no deadline (verify's own is bounded). */
			if (k->pending)
				evtimer_del(k->deadline);
			else
				deadline_arm(k);
			return;
		}
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct ctl *c = arg;

	(void)fd;
	(void)what;
	c->accept_paused = false;
	accept_update(c);
}

/* accept() failed with something other than EAGAIN/EINTR/ECONNABORTED. */
static void on_accept_error(struct evconnlistener *lev, void *arg)
{
	int e = EVUTIL_SOCKET_ERROR();
	struct timeval tv = { 0, CTL_ACCEPT_PAUSE_MS * 1000 };
	struct ctl *c = ctl_all;

	(void)arg;	/* evhttp's, not ours */
	while (c && c->listener != lev)
		c = c->next_ctl;
	if (!c)
		return;
	c->stats.accept_errors++;
	ctl_warn(c, "accept: %s; not accepting for %d ms", strerror(e), CTL_ACCEPT_PAUSE_MS);
	c->accept_paused = true;
	evconnlistener_disable(lev);
	evtimer_add(c->resume, &tv);
}

/* @body (taken) as the reply, compact if @compact (a large report), else indented. */
static void reply_json_as(struct evhttp_request *req, int status, json_t *body, bool compact)
{
	struct evbuffer *buf = evbuffer_new();
	char *text = body ? json_dumps(body, (compact ? JSON_COMPACT : JSON_INDENT(2)) |
					     JSON_PRESERVE_ORDER) : NULL;

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/json");
	if (buf && text) {
		evbuffer_add(buf, text, strlen(text));
		evbuffer_add(buf, "\n", 1);
	}
	evhttp_send_reply(req, status, NULL, buf);
	if (buf)
		evbuffer_free(buf);
	free(text);
	json_decref(body);
}

static void reply_json(struct evhttp_request *req, int status, json_t *body)
{
	reply_json_as(req, status, body, false);
}

static void reply_error(struct evhttp_request *req, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void reply_error(struct evhttp_request *req, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	reply_json(req, status, json_pack("{s:{s:i, s:s}}", "error", "code", status, "message", msg));
}

static int errno_to_status(int r)
{
	switch (-r) {
	case EINVAL:
	case ENAMETOOLONG:
		return 400;
	case ENOENT:
		return 404;
	case EEXIST:
	case EBUSY:
		return 409;
	case ENOSPC:
		return 507;
	default:
		return 500;
	}
}

static void handle_sandbox_create(struct ctl *c, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	struct sandbox_request sr;
	char err[512] = "";
	json_t *obj = NULL, *out = NULL;
	char *text;
	int r;

	if (len > CTL_MAX_BODY) {
		reply_error(req, 413, "request body over %d bytes", CTL_MAX_BODY);
		return;
	}
	text = malloc(len ? len : 1);
	if (!text) {
		reply_error(req, 503, "out of memory");
		return;
	}
	evbuffer_copyout(in, text, len);
	/* All parsing and validation of the body is ctlreq's (fuzzed). */
	r = ctlreq_sandbox(text, len, &sr, &obj, err, sizeof(err));
	free(text);
	if (r < 0) {
		reply_error(req, r == -ENOMEM ? 503 : 400, "%s", err[0] ? err : strerror(-r));
		return;
	}
	r = c->ops->sandbox_create(c->ctx, &sr, &out, err, sizeof(err));
	if (r < 0)
		reply_error(req, errno_to_status(r), "%s", err[0] ? err : strerror(-r));
	else
		reply_json(req, 201, out);
	json_decref(obj);
}

/* GET /metrics, /v1/metrics: Prometheus text exposition format 0.0.4. */
static void reply_metrics(struct ctl *c, struct evhttp_request *req)
{
	struct evbuffer *buf = evbuffer_new();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f) {
		c->ops->metrics(c->ctx, f);
		/* (on the unix socket only: the control API's own health) */
		metrics_family(f, "netd_control_connections", "gauge",
			       "Control API connections open now.");
		metrics_u64(f, "netd_control_connections", NULL, c->stats.connections);
		metrics_family(f, "netd_control_timed_out_total", "counter",
			       "Control API connections closed by a timeout.");
		metrics_u64(f, "netd_control_timed_out_total", NULL, c->stats.timed_out);
		metrics_family(f, "netd_control_accept_errors_total", "counter",
			       "Control API accept() failures.");
		metrics_u64(f, "netd_control_accept_errors_total", NULL, c->stats.accept_errors);
		fclose(f);
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; version=0.0.4");
	if (buf && text)
		evbuffer_add(buf, text, len);
	evhttp_send_reply(req, f && buf ? 200 : 500, NULL, buf);
	if (buf)
		evbuffer_free(buf);
	free(text);
}

/* GET /v1/status: the daemon's, and the control socket's own counters. */
static void reply_status(struct ctl *c, struct evhttp_request *req)
{
	json_t *o = c->ops->status(c->ctx);

	if (o)
		json_object_set_new(o, "control", json_pack("{s:I, s:i, s:I, s:I, s:I, s:I}",
				    "connections", (json_int_t)c->stats.connections,
				    "max_connections", CTL_MAX_CONNS,
				    "accepted", (json_int_t)c->stats.accepted,
				    "timed_out", (json_int_t)c->stats.timed_out,
				    "at_cap", (json_int_t)c->stats.at_cap,
				    "accept_errors", (json_int_t)c->stats.accept_errors));
	reply_json(req, 200, o);
}

/* A verify run is over: answer the request that started it. */
static void verify_done(void *arg, json_t *report)
{
	struct ctl_async *a = arg;

	if (report)
		reply_json_as(a->req, 200, report, true);	/* a row per sandbox and probe */
	else
		reply_error(a->req, 500, "out of memory");
	if (a->k) {
		a->k->pending = NULL;
		deadline_arm(a->k);
	}
	free(a);
}

/* POST /v1/verify: started here, answered by verify_done(). */
static void handle_verify(struct ctl *c, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	const struct evhttp_connection *con = evhttp_request_get_connection(req);
	size_t len = evbuffer_get_length(in);
	struct verify_request vr;
	struct ctl_async *a;
	struct ctl_conn *k = c->conns;
	char err[512] = "";
	json_t *obj = NULL;
	char *text;
	int r;

	if (len > CTL_MAX_BODY) {
		reply_error(req, 413, "request body over %d bytes", CTL_MAX_BODY);
		return;
	}
	while (k && k->evcon != con)
		k = k->next;
	text = malloc(len ? len : 1);
	a = calloc(1, sizeof(*a));
	if (!text || !a || !k || k->pending) {
		reply_error(req, k && k->pending ? 409 : 503, k && k->pending ?
			    "a verify run is under way on this connection" : "out of memory");
		free(text);
		free(a);
		return;
	}
	evbuffer_copyout(in, text, len);
	r = ctlreq_verify(text, len, &vr, &obj, err, sizeof(err));
	free(text);
	if (r < 0) {
		reply_error(req, r == -ENOMEM ? 503 : 400, "%s", err[0] ? err : strerror(-r));
		free(a);
		return;
	}
	a->c = c;
	a->k = k;
	a->req = req;
	r = c->ops->verify(c->ctx, &vr, verify_done, a, err, sizeof(err));
	json_decref(obj);
	if (r < 0) {
		reply_error(req, errno_to_status(r), "%s", err[0] ? err : strerror(-r));
		free(a);
		return;
	}
	k->pending = a;
}

/* GET /v1/gateway/ca: {"certificate": PEM}; the daemon makes the CA on the first request. */
static void reply_gateway_ca(struct ctl *c, struct evhttp_request *req)
{
	char err[512] = "", *pem = NULL;
	int r = c->ops->gateway_ca(c->ctx, &pem, err, sizeof(err));

	if (r < 0)
		reply_error(req, r == -ENOMEM ? 503 : 500, "gateway CA: %s",
			    err[0] ? err : strerror(-r));
	else
		reply_json(req, 200, json_pack("{s:s}", "certificate", pem));
	free(pem);
}

/* /v1/sandboxes/NAME */
static void handle_sandbox(struct ctl *c, struct evhttp_request *req, const char *name)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	json_t *sb = c->ops->sandbox_get(c->ctx, name);
	char q[160];
	int r;

	if (!sb) {
		reply_error(req, 404, "no sandbox \"%s\"", log_quote(name, strlen(name), q, sizeof(q)));
	} else if (cmd == EVHTTP_REQ_GET) {
		reply_json(req, 200, sb);
		sb = NULL;
	} else if (cmd == EVHTTP_REQ_DELETE) {
		r = c->ops->sandbox_delete(c->ctx, name);
		if (r < 0)
			reply_error(req, errno_to_status(r), "delete failed: %s", strerror(-r));
		else
			reply_json(req, 200, json_pack("{s:s}", "deleted", name));
	} else {
		reply_error(req, 405, "use GET or DELETE on /v1/sandboxes/NAME");
	}
	json_decref(sb);
}

/* /v1/policies... (@p: the decoded path, at least "v1", "policies"). */
static void handle_policies(struct ctl *c, struct evhttp_request *req,
			    const struct ctlreq_path *p)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	char q[160];

	if (p->n == 2) {
		if (cmd == EVHTTP_REQ_GET)
			reply_json(req, 200, json_pack("{s:o}", "policies", c->ops->policies(c->ctx)));
		else
			reply_error(req, 405, "use GET on /v1/policies");
	} else if (p->n == 3 && strcmp(p->seg[2], "reload") == 0 && cmd == EVHTTP_REQ_POST) {
		/* Validated whole first: a bad file is a 400 with FILE:LINE:COL, nothing changes. */
		char msg[1200];
		json_t *report = NULL;
		int r = c->ops->policy_reload(c->ctx, &report, msg, sizeof(msg));

		if (r < 0)
			reply_error(req, r == -EINVAL || r == -EEXIST || r == -E2BIG || r == -ENOENT ?
					 400 : 500, "%s", msg);
		else {
			json_t *reply = json_pack("{s:o}", "changed", report);
			json_t *info = c->ops->reload_info ? c->ops->reload_info(c->ctx) : NULL;

			if (reply && info)
				json_object_update(reply, info);
			json_decref(info);
			reply_json(req, 200, reply);
		}
	} else if (p->n == 3 && p->seg[2][0]) {
		json_t *pol;

		if (cmd != EVHTTP_REQ_GET) {
			reply_error(req, 405, "use GET on /v1/policies/NAME");
			return;
		}
		pol = c->ops->policy(c->ctx, p->seg[2]);
		if (!pol)
			reply_error(req, 404, "no policy \"%s\"",
				    log_quote(p->seg[2], strlen(p->seg[2]), q, sizeof(q)));
		else
			reply_json(req, 200, pol);
	} else {
		reply_error(req, 404, "no such endpoint (see /v1/policies, /v1/policies/NAME)");
	}
}

static void handle_request(struct ctl *c, struct evhttp_request *req)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *raw = uri ? evhttp_uri_get_path(uri) : NULL;
	struct ctlreq_path p;
	char err[160], q[160];

	/* Decoded strictly, segment by segment: a name is what the client meant or a 400. */
	if (ctlreq_path(raw, &p, err, sizeof(err)) < 0) {
		reply_error(req, 400, "bad request path: %s", err);
		return;
	}
	if (p.n >= 2 && strcmp(p.seg[0], "v1") == 0 && strcmp(p.seg[1], "policies") == 0) {
		handle_policies(c, req, &p);
	} else if (p.n == 2 && strcmp(p.seg[0], "v1") == 0 && strcmp(p.seg[1], "status") == 0) {
		if (cmd == EVHTTP_REQ_GET)
			reply_status(c, req);
		else
			reply_error(req, 405, "use GET on /v1/status");
	} else if ((p.n == 2 && strcmp(p.seg[0], "v1") == 0 && strcmp(p.seg[1], "metrics") == 0) ||
		   (p.n == 1 && strcmp(p.seg[0], "metrics") == 0)) {
		/* /metrics too: where Prometheus looks by default. */
		if (cmd == EVHTTP_REQ_GET)
			reply_metrics(c, req);
		else
			reply_error(req, 405, "use GET on /metrics");
	} else if (p.n == 2 && strcmp(p.seg[0], "v1") == 0 && strcmp(p.seg[1], "sandboxes") == 0) {
		if (cmd == EVHTTP_REQ_GET)
			reply_json(req, 200, json_pack("{s:o}", "sandboxes", c->ops->sandboxes(c->ctx)));
		else if (cmd == EVHTTP_REQ_POST)
			handle_sandbox_create(c, req);
		else
			reply_error(req, 405, "use GET or POST on /v1/sandboxes");
	} else if (p.n == 3 && strcmp(p.seg[0], "v1") == 0 && strcmp(p.seg[1], "sandboxes") == 0 &&
		   p.seg[2][0]) {
		handle_sandbox(c, req, p.seg[2]);
	} else if (p.n == 2 && strcmp(p.seg[0], "v1") == 0 && strcmp(p.seg[1], "verify") == 0) {
		if (cmd == EVHTTP_REQ_POST)
			handle_verify(c, req);
		else
			reply_error(req, 405, "use POST on /v1/verify");
	} else if (p.n == 3 && strcmp(p.seg[0], "v1") == 0 && strcmp(p.seg[1], "gateway") == 0 &&
		   strcmp(p.seg[2], "ca") == 0) {
		if (cmd == EVHTTP_REQ_GET)
			reply_gateway_ca(c, req);
		else
			reply_error(req, 405, "use GET on /v1/gateway/ca");
	} else {
		reply_error(req, 404, "no such endpoint \"%s\" (see /v1/status, /v1/sandboxes, /v1/policies, /v1/verify)",
			    log_quote(raw, strlen(raw), q, sizeof(q)));
	}
}

/* evhttp's callback: one request, then its connection's deadline anew. */
static void handle(struct evhttp_request *req, void *arg)
{
	struct ctl *c = arg;
	const struct evhttp_connection *con = evhttp_request_get_connection(req);

	conn_rearm(c, con);	/* the whole request came in time */
	handle_request(c, req);	/* @req may be freed once its reply is sent */
	conn_rearm(c, con);
}

/* Is something answering on @path?  (A stale file refuses the connect.) */
static bool socket_alive(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool alive;

	if (fd < 0)
		return false;
	alive = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	return alive;
}

/* The evhttp server on the bound, listening @fd (taken).  Return: 0; -ENOMEM. */
static int ctl_serve(struct ctl *c, struct event_base *base, int fd)
{
	c->listener = evconnlistener_new(base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE, CTL_BACKLOG, fd);
	if (!c->listener) {
		close(fd);
		return -ENOMEM;
	}
	c->http = evhttp_new(base);
	c->resume = evtimer_new(base, on_resume, c);
	if (!c->http || !c->resume || !evhttp_bind_listener(c->http, c->listener))
		return -ENOMEM;
	/* After the bind (which sets the accept callback): ours only sees errors. */
	evconnlistener_set_error_cb(c->listener, on_accept_error);
	evhttp_set_bevcb(c->http, conn_new, c);
	evhttp_set_max_body_size(c->http, CTL_MAX_BODY);
	evhttp_set_max_headers_size(c->http, CTL_MAX_HEADERS);
	evhttp_set_timeout(c->http, CTL_REQUEST_DEADLINE_S);
	evhttp_set_allowed_methods(c->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE);
	evhttp_set_gencb(c->http, handle, c);
	return 0;
}

int ctl_new(struct event_base *base, const char *path, const struct ctl_ops *ops, void *ctx,
	    struct ctl **ret)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ctl *c;
	int fd = -1, r;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (socket_alive(&sun))
		return -EADDRINUSE;
	r = fs_mkdir_parent(path, 0755);
	if (r < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->ops = ops;
	c->ctx = ctx;
	tbucket_init(&c->log_bucket, CTL_LOG_BURST, clock_mono_ms());
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	unlink(path);		/* stale: nobody answered above */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(path, 0660) < 0 ||
	    listen(fd, CTL_BACKLOG) < 0) {
		r = -errno;
		close(fd);
		unlink(path);
		goto fail;
	}
	r = ctl_serve(c, base, fd);
	if (r < 0) {
		unlink(path);
		goto fail;
	}
	c->next_ctl = ctl_all;
	ctl_all = c;
	*ret = c;
	return 0;
fail:
	if (c->http)
		evhttp_free(c->http);	/* frees the bound listener too */
	else if (c->listener)
		evconnlistener_free(c->listener);
	if (c->resume)
		event_free(c->resume);
	free(c);
	return r;
}

void ctl_get_stats(const struct ctl *c, struct ctl_stats *out)
{
	*out = c->stats;
}

void ctl_free(struct ctl *c)
{
	struct ctl **pp;

	if (!c)
		return;
	for (pp = &ctl_all; *pp; pp = &(*pp)->next_ctl)
		if (*pp == c) {
			*pp = c->next_ctl;
			break;
		}
	c->closing = true;	/* conn_closed() runs inside evhttp_free() */
	evhttp_free(c->http);
	/* Connections evhttp made this very turn: conn_bind() never ran. */
	while (c->conns) {
		struct bufferevent *bev = c->conns->bev;
		bool unbound = c->conns->bind_ev != NULL;

		conn_gone(c->conns);
		if (unbound)
			bufferevent_decref(bev);
	}
	if (c->resume)
		event_free(c->resume);
	unlink(c->path);
	free(c);
}
