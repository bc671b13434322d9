/*
 * h2 - the gateway's HTTP/2 engine (netd/gw/h2.h): an nghttp2 server
 * session facing the sandbox, an nghttp2 client session facing the
 * upstream, one upstream stream per client stream.  Bodies stream through
 * per-stream buffers that flow control bounds: neither session updates its
 * receive window by itself (no_auto_window_update); a body byte is
 * consumed (WINDOW_UPDATE to its sender) only when the other session's data
 * provider has taken it.  Pure apart from nghttp2; never logs.
 *
 * Reentrancy: nghttp2 callbacks only change state and submit frames;
 * nghttp2_session_mem_send() of either session runs only in pump(), after
 * mem_recv() returned, so no session is entered from its own callback.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "common/reason.h"
#include "netd/gw/h2.h"
#include "netd/gw/h2buf.h"
#include "netd/gw/scrub.h"

#define REFUSAL_MAX 2048
/* the upstream broke HTTP/2 or a stream */
#define UPSTREAM_FAILURE reason_gw_name(REASON_GW_UPSTREAM_FAILURE)

struct h2s {
	struct gw_h2 *h2;
	struct h2s *prev, *next;
	int32_t cl_sid, up_sid;		/* up_sid 0: never opened upstream */
	struct gw_hblock hdrs, trailers;	/* request's from the client (while
					 * forwarding: the upstream's response) */
	struct gw_hblock rhdrs, rtrailers;	/* the upstream's response */
	struct gw_body req_body, resp_body;
	struct gw_scrub scrub;		/* resp_body's: an echoed secret masked */
	char *method, *host, *path;	/* for the record */
	const char *credential, *reason;
	unsigned int status;
	uint64_t request_bytes, response_bytes, start_ns, first_byte_ns;
	uint32_t error_code;
	bool cl_open, up_open;		/* the stream is open in that session */
	bool req_eof, resp_eof;		/* that body is complete (in its buffer) */
	bool req_trailers, resp_trailers;	/* trailers follow the body */
	bool up_deferred, cl_deferred;	/* that data provider is waiting */
	bool resp_started;		/* final response headers submitted to the client */
	bool local;			/* the response is ours (refusal, 502/504) */
	bool refused;			/* answered by the checks */
	bool recorded;
};

struct gw_h2 {
	const struct gw_req_ctx *ctx;
	const struct gw_h2_ops *ops;
	void *user;
	uint16_t port;
	uint64_t now_ns;
	nghttp2_session *srv, *up;
	struct h2s *streams;
	bool client_bad;	/* the client broke HTTP/2: GOAWAY sent or session dead */
	bool srv_dead;		/* the server session failed fatally: no more calls */
	bool up_dead;		/* the upstream is gone: no more calls to up */
	bool goaway_client;	/* a graceful GOAWAY went to the client */
	int32_t hdr_sid;	/* a client HEADERS frame begun before its stream exists */
	size_t hdr_len;		/* ... its payload bytes, added when the stream is made */
	uint64_t rst_window_ns;	/* start of the current second of RST_STREAM counting */
	unsigned int rst_count;
	int op_err;		/* an op's error, returned by the next call */
};

/* ---- streams ------------------------------------------------------------ */

static struct h2s *h2s_new(struct gw_h2 *h2, int32_t sid)
{
	struct h2s *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->h2 = h2;
	s->cl_sid = sid;
	s->cl_open = true;
	s->start_ns = h2->now_ns;
	s->next = h2->streams;
	if (s->next)
		s->next->prev = s;
	h2->streams = s;
	return s;
}

static void h2s_free(struct h2s *s)
{
	struct gw_h2 *h2 = s->h2;

	if (s->prev)
		s->prev->next = s->next;
	else
		h2->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	gw_hblock_clear(&s->hdrs);
	gw_hblock_clear(&s->trailers);
	gw_hblock_clear(&s->rhdrs);
	gw_hblock_clear(&s->rtrailers);
	gw_body_free(&s->req_body);
	gw_body_free(&s->resp_body);
	gw_scrub_free(&s->scrub);
	free(s->method);
	free(s->host);
	free(s->path);
	free(s);
}

static void record(struct h2s *s)
{
	struct gw_h2_record r;

	if (s->recorded)
		return;
	s->recorded = true;
	if (!s->h2->ops->record)
		return;
	r = (struct gw_h2_record){
		.stream_id = s->cl_sid,
		.method = s->method ? s->method : "",
		.host = s->host ? s->host : "",
		.path = s->path ? s->path : "",
		.status = s->status,
		.request_bytes = s->request_bytes,
		.response_bytes = s->response_bytes,
		.start_ns = s->start_ns,
		.first_byte_ns = s->first_byte_ns,
		.end_ns = s->h2->now_ns,
		.credential = s->credential,
		.reason = s->reason,
		.refused = s->refused,
		.error_code = s->error_code,
	};
	s->h2->ops->record(s->h2->user, &r);
}

/* The client will get no more of this response: give its window back to the upstream. */
static void drop_resp_body(struct h2s *s)
{
	size_t n = gw_body_avail(&s->resp_body);

	if (n && !s->local && !s->h2->up_dead)
		nghttp2_session_consume(s->h2->up, s->up_sid, n);
	s->resp_body.off = s->resp_body.len = 0;
}

/* The upstream will get no more of this request: give its window back to the client. */
static void drop_req_body(struct h2s *s)
{
	size_t n = gw_body_avail(&s->req_body);

	if (n && !s->h2->srv_dead)
		nghttp2_session_consume(s->h2->srv, s->cl_sid, n);
	s->req_body.off = s->req_body.len = 0;
}

/* HTTP/2 error code for the other side: NO_ERROR mid-stream is a cancel there. */
static uint32_t map_code(uint32_t code)
{
	return code == NGHTTP2_NO_ERROR ? NGHTTP2_CANCEL : code;
}

/* ---- data providers ----------------------------------------------------- */

static ssize_t up_read(nghttp2_session *session, int32_t sid, uint8_t *buf, size_t length,
		       uint32_t *flags, nghttp2_data_source *src, void *user);
static ssize_t cl_read(nghttp2_session *session, int32_t sid, uint8_t *buf, size_t length,
		       uint32_t *flags, nghttp2_data_source *src, void *user);

static int submit_trailers(nghttp2_session *session, int32_t sid, const struct gw_hblock *b)
{
	nghttp2_nv *nva = calloc(b->n + 1, sizeof(*nva));
	int rv;

	if (!nva)
		return NGHTTP2_ERR_NOMEM;
	rv = nghttp2_submit_trailer(session, sid, nva, gw_h2_nva_fields(b, false, nva));
	free(nva);
	return rv;
}

/*
 * A body from @b into @buf: what is there now, DEFERRED when empty and more
 * is to come (resumed by resume()), EOF (or trailers) at the end.
 */
static ssize_t body_read(nghttp2_session *session, int32_t sid, struct gw_body *b, bool eof,
			 bool trailers, const struct gw_hblock *tb, bool *deferred,
			 uint8_t *buf, size_t length, uint32_t *flags)
{
	size_t n = gw_body_avail(b) < length ? gw_body_avail(b) : length;

	if (n)
		memcpy(buf, b->p + b->off, n);
	b->off += n;
	if (gw_body_avail(b) == 0) {
		if (!eof) {
			if (n)
				return (ssize_t)n;
			*deferred = true;
			return NGHTTP2_ERR_DEFERRED;
		}
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (trailers && tb->n) {
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
			if (submit_trailers(session, sid, tb) != 0)
				return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
		}
	}
	return (ssize_t)n;
}

/* The request body to the upstream; each byte taken is consumed on the client's window. */
static ssize_t up_read(nghttp2_session *session, int32_t sid, uint8_t *buf, size_t length,
		       uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct h2s *s = src->ptr;
	ssize_t n = body_read(session, sid, &s->req_body, s->req_eof, s->req_trailers,
			      &s->trailers, &s->up_deferred, buf, length, flags);

	if (n > 0 && !s->h2->srv_dead)
		nghttp2_session_consume(s->h2->srv, s->cl_sid, (size_t)n);
	return n;
}

/* The response body to the client; consumed on the upstream's window unless ours. */
static ssize_t cl_read(nghttp2_session *session, int32_t sid, uint8_t *buf, size_t length,
		       uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct h2s *s = src->ptr;
	ssize_t n = body_read(session, sid, &s->resp_body, s->resp_eof, s->resp_trailers,
			      &s->rtrailers, &s->cl_deferred, buf, length, flags);

	if (n > 0) {
		s->response_bytes += (uint64_t)n;
		if (!s->local && !s->h2->up_dead)
			nghttp2_session_consume(s->h2->up, s->up_sid, (size_t)n);
	}
	return n;
}

static void resume_up(struct h2s *s)
{
	if (s->up_deferred && s->up_open && !s->h2->up_dead) {
		s->up_deferred = false;
		nghttp2_session_resume_data(s->h2->up, s->up_sid);
	}
}

static void resume_cl(struct h2s *s)
{
	if (s->cl_deferred && s->cl_open && !s->h2->srv_dead) {
		s->cl_deferred = false;
		nghttp2_session_resume_data(s->h2->srv, s->cl_sid);
	}
}

/* ---- responses made here ------------------------------------------------- */

/*
 * A response of our own on the client's stream: @status, JSON @body,
 * x-netd-reason, retry-after when @retry_after_s (RFC 9110 10.2.3).  The
 * request's body, if any still comes, is read and dropped.
 */
static int respond_local(struct h2s *s, unsigned int status, const char *reason,
			 uint32_t retry_after_s, const char *body, size_t body_len)
{
	struct gw_h2 *h2 = s->h2;
	char st[8], ra[16], cl[24];
	nghttp2_nv nva[5];
	size_t n = 0;
	nghttp2_data_provider dp = { .source.ptr = s, .read_callback = cl_read };
	int rv;

	s->local = true;
	s->status = status;
	s->reason = reason;
	s->first_byte_ns = h2->now_ns;
	s->resp_started = true;
	s->resp_eof = true;
	drop_req_body(s);
	s->resp_body.off = s->resp_body.len = 0;
	if (gw_body_add(&s->resp_body, (const uint8_t *)body, body_len) < 0)
		return NGHTTP2_ERR_NOMEM;
	snprintf(st, sizeof(st), "%u", status);
	snprintf(cl, sizeof(cl), "%zu", body_len);
	nva[n++] = GW_H2_NV(":status", st, strlen(st), NGHTTP2_NV_FLAG_NONE);
	nva[n++] = GW_H2_NV("content-type", "application/json", 16, NGHTTP2_NV_FLAG_NONE);
	nva[n++] = GW_H2_NV("content-length", cl, strlen(cl), NGHTTP2_NV_FLAG_NONE);
	nva[n++] = GW_H2_NV("x-netd-reason", reason, strlen(reason), NGHTTP2_NV_FLAG_NONE);
	if (retry_after_s) {
		snprintf(ra, sizeof(ra), "%u", retry_after_s);
		nva[n++] = GW_H2_NV("retry-after", ra, strlen(ra), NGHTTP2_NV_FLAG_NONE);
	}
	rv = nghttp2_submit_response(h2->srv, s->cl_sid, nva, n, &dp);
	return rv == NGHTTP2_ERR_NOMEM ? rv : 0;
}

/* 502/504 for a stream whose upstream failed before its response headers. */
static int respond_upstream_failed(struct h2s *s, unsigned int status, const char *reason)
{
	char body[160];
	int len = snprintf(body, sizeof(body),
			   "{\"error\":\"%s\",\"detail\":\"no response from the upstream\"}",
			   reason);

	if (len < 0 || (size_t)len >= sizeof(body))
		len = 0;
	return respond_local(s, status, reason, 0, body, (size_t)len);
}

static int refuse(struct h2s *s, const struct gw_req_result *res, uint32_t retry_after_s)
{
	char body[REFUSAL_MAX];
	size_t len = gw_req_refusal(s->h2->ctx, res, body, sizeof(body));

	if (len >= sizeof(body))
		len = sizeof(body) - 1;
	s->credential = res->cred_name;
	s->refused = true;
	return respond_local(s, res->status, res->reason, retry_after_s, body, len);
}

/* ---- the request, checked and forwarded --------------------------------- */

static char *dup_n(const char *p, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, p, n);
		d[n] = '\0';
	}
	return d;
}

/*
 * request_verdict() - the request check (netd/gw/req.c) and the rule's rate
 * on the request's fields @hdrs (no pseudo-headers) into @res; a 429 gets
 * *@retry_after_s (at least 1).
 */
static void request_verdict(struct h2s *s, const struct gw_hfield *m, const struct gw_hfield *a,
			    const struct gw_hfield *p, const struct gw_hdr *hdrs, size_t n_hdrs,
			    struct gw_req_result *res, uint32_t *retry_after_s)
{
	struct gw_h2 *h2 = s->h2;

	gw_req_check(h2->ctx, m->value, m->value_len, a ? a->value : "", a ? a->value_len : 0,
		     h2->port, p->value, p->value_len, hdrs, n_hdrs, res);
	if (res->verdict == GW_REQ_OK && h2->ops->rate_take &&
	    h2->ops->rate_take(h2->user, h2->now_ns, retry_after_s) != 0) {
		res->verdict = GW_REQ_RATE;
		res->status = 429;
		res->reason = reason_gw_name(REASON_GW_RATE_LIMITED);
		if (!*retry_after_s)
			*retry_after_s = 1;
	}
}

/* request_refused_early() - refused before any check: too many fields, CONNECT. */
static bool request_refused_early(struct h2s *s, const struct gw_hfield *m,
				  const struct gw_hfield *p, int *rv)
{
	struct gw_req_result res;

	if (s->hdrs.over)
		/* RFC 6585 5: over SETTINGS_MAX_HEADER_LIST_SIZE or GW_H2_MAX_FIELDS */
		res = (struct gw_req_result){ .verdict = GW_REQ_BAD, .status = 431,
					      .reason = reason_gw_name(REASON_GW_BAD_REQUEST) };
	else if (!m || !p || !strcmp(m->value, "CONNECT"))
		/* CONNECT (RFC 9113 8.5) would be a tunnel past every check */
		res = (struct gw_req_result){ .verdict = GW_REQ_METHOD, .status = 405,
					      .reason = reason_gw_name(REASON_GW_METHOD_DENIED) };
	else
		return false;
	*rv = refuse(s, &res, 0);
	return true;
}

/*
 * request_ready() - a whole request head from the sandbox on @s: checked,
 * then submitted upstream with its secrets, or refused.  Return: 0, or an
 * nghttp2 error for the session.
 */
static int request_ready(struct h2s *s, bool end_stream)
{
	struct gw_h2 *h2 = s->h2;
	const struct gw_hfield *m = gw_hblock_get(&s->hdrs, ":method");
	const struct gw_hfield *p = gw_hblock_get(&s->hdrs, ":path");
	const struct gw_hfield *a = gw_hblock_get(&s->hdrs, ":authority");
	struct gw_req_result res = { 0 };
	const struct gw_cred *bad = NULL;
	struct gw_hdr *hdrs = NULL;
	nghttp2_nv *nva = NULL;
	size_t n_hdrs = 0, path_len;
	uint32_t retry_after_s = 0;
	nghttp2_data_provider dp = { .source.ptr = s, .read_callback = up_read };
	ssize_t n;
	int rv = 0;

	s->req_eof = end_stream;
	if (!a)
		a = gw_hblock_get(&s->hdrs, "host");	/* RFC 9113 8.3.1: Host when no :authority */
	path_len = p ? strcspn(p->value, "?") : 0;	/* the record's path has no query */
	s->method = dup_n(m ? m->value : "", m ? m->value_len : 0);
	s->host = dup_n(a ? a->value : "", a ? a->value_len : 0);
	s->path = dup_n(p ? p->value : "", path_len);
	if (!s->method || !s->host || !s->path)
		return NGHTTP2_ERR_NOMEM;
	if (request_refused_early(s, m, p, &rv))
		return rv;
	hdrs = calloc(s->hdrs.n + 1, sizeof(*hdrs));
	nva = calloc(s->hdrs.n + 5, sizeof(*nva));
	if (!hdrs || !nva) {
		rv = NGHTTP2_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->hdrs.n; i++)
		if (s->hdrs.f[i].name[0] != ':')
			hdrs[n_hdrs++] = (struct gw_hdr){ s->hdrs.f[i].name, s->hdrs.f[i].name_len,
							  s->hdrs.f[i].value, s->hdrs.f[i].value_len };
	request_verdict(s, m, a, p, hdrs, n_hdrs, &res, &retry_after_s);
	if (res.verdict != GW_REQ_OK) {
		rv = refuse(s, &res, res.verdict == GW_REQ_RATE ? retry_after_s : 0);
		goto out;
	}
	if (h2->up_dead) {
		rv = respond_upstream_failed(s, 502, UPSTREAM_FAILURE);
		goto out;
	}
	s->credential = res.cred_name;
	n = gw_h2_nva_request(nva, m, a, p, hdrs, n_hdrs, &res, &bad);
	if (n < 0) {
		res = (struct gw_req_result){ .verdict = GW_REQ_CRED_MISDIRECTED, .status = 403,
					      .reason = reason_gw_name(REASON_GW_CREDENTIAL_MISDIRECTED),
					      .cred_name = bad->name };
		rv = refuse(s, &res, 0);
		goto out;
	}
	rv = nghttp2_submit_request(h2->up, NULL, nva, (size_t)n, end_stream ? NULL : &dp, s);
	if (rv < 0) {
		rv = rv == NGHTTP2_ERR_NOMEM ? rv : respond_upstream_failed(s, 502, UPSTREAM_FAILURE);
		goto out;
	}
	s->up_sid = rv;
	s->up_open = true;
	rv = 0;
out:
	/* the request's fields are copied into nghttp2's frame by now (the secret excepted) */
	gw_hblock_clear(&s->hdrs);
	free(hdrs);
	free(nva);
	return rv;
}

/* The upstream's response headers are complete: pass them to the client. */
static int response_ready(struct h2s *s, bool end_stream)
{
	struct gw_h2 *h2 = s->h2;
	const struct gw_hfield *st = gw_hblock_get(&s->rhdrs, ":status");
	nghttp2_data_provider dp = { .source.ptr = s, .read_callback = cl_read };
	nghttp2_nv *nva;
	unsigned int status = st ? (unsigned int)atoi(st->value) : 0;
	size_t n = 0;
	int rv;

	if (!s->cl_open || s->resp_started)
		goto out;
	if (s->rhdrs.over || status < 100 || status > 999) {
		/* a response the client could not be given: 502, the upstream stream cancelled */
		nghttp2_submit_rst_stream(h2->up, NGHTTP2_FLAG_NONE, s->up_sid, NGHTTP2_CANCEL);
		gw_hblock_clear(&s->rhdrs);
		return respond_upstream_failed(s, 502, UPSTREAM_FAILURE);
	}
	gw_scrub_hblock(h2->ctx, &s->rhdrs);
	nva = calloc(s->rhdrs.n + 1, sizeof(*nva));
	if (!nva)
		return NGHTTP2_ERR_NOMEM;
	nva[n++] = GW_H2_NV(":status", st->value, st->value_len, NGHTTP2_NV_FLAG_NONE);
	n += gw_h2_nva_fields(&s->rhdrs, false, nva + n);
	if (status < 200) {	/* informational (RFC 9110 15.2): more headers follow */
		rv = nghttp2_submit_headers(h2->srv, NGHTTP2_FLAG_NONE, s->cl_sid, NULL, nva, n,
					    NULL);
	} else {
		s->status = status;
		s->first_byte_ns = h2->now_ns;
		s->resp_started = true;
		s->resp_eof = end_stream;
		rv = nghttp2_submit_response(h2->srv, s->cl_sid, nva, n, end_stream ? NULL : &dp);
	}
	free(nva);
	if (rv == NGHTTP2_ERR_NOMEM)
		return rv;
out:
	gw_hblock_clear(&s->rhdrs);
	return 0;
}

/* ---- nghttp2 callbacks: both sessions ----------------------------------- */

static struct h2s *stream_of(nghttp2_session *session, int32_t sid)
{
	return sid > 0 ? nghttp2_session_get_stream_user_data(session, sid) : NULL;
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
	struct gw_h2 *h2 = user;
	struct h2s *s;

	if (frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (session == h2->srv && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
		s = h2s_new(h2, frame->hd.stream_id);
		if (!s)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, s);
		/* on_begin_frame() saw this HEADERS frame before the stream was made */
		if (h2->hdr_sid == frame->hd.stream_id)
			s->request_bytes += h2->hdr_len;
		h2->hdr_sid = 0;
	} else if (session == h2->up && (s = stream_of(session, frame->hd.stream_id)) &&
		   !s->resp_started) {
		gw_hblock_clear(&s->rhdrs);	/* a final response after 1xx */
	}
	return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame,
		     const uint8_t *name, size_t name_len, const uint8_t *value, size_t value_len,
		     uint8_t flags, void *user)
{
	struct gw_h2 *h2 = user;
	struct h2s *s = stream_of(session, frame->hd.stream_id);
	struct gw_hblock *b;

	if (!s || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (session == h2->srv)
		b = frame->headers.cat == NGHTTP2_HCAT_REQUEST ? &s->hdrs : &s->trailers;
	else	/* nghttp2 says HCAT_HEADERS for a final response after 1xx too */
		b = s->resp_started ? &s->rtrailers : &s->rhdrs;
	return gw_hblock_add(b, name, name_len, value, value_len) ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t sid,
			 const uint8_t *data, size_t len, void *user)
{
	struct gw_h2 *h2 = user;
	struct h2s *s = stream_of(session, sid);

	if (session == h2->srv) {
		if (s)
			s->request_bytes += len;
		if (!s || !s->up_open || s->local || h2->up_dead) {
			nghttp2_session_consume(session, sid, len);	/* read and dropped */
			return 0;
		}
		if (gw_body_add(&s->req_body, data, len) < 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		resume_up(s);
	} else {
		if (!s || !s->cl_open || s->local || !s->resp_started) {
			nghttp2_session_consume(session, sid, len);
			return 0;
		}
		if (gw_scrub_body_add(&s->scrub, h2->ctx, &s->resp_body, data, len, false) < 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		resume_cl(s);
	}
	return 0;
}

/* RFC 9113 10.5 (CVE-2023-44487, rapid reset): the client's RST_STREAM per second of now_ns. */
static void count_client_reset(struct gw_h2 *h2)
{
	if (h2->now_ns - h2->rst_window_ns >= 1000000000ull) {
		h2->rst_window_ns = h2->now_ns;
		h2->rst_count = 0;
	}
	if (++h2->rst_count > GW_H2_MAX_RST_PER_S && !h2->client_bad) {
		h2->client_bad = true;
		nghttp2_session_terminate_session(h2->srv, NGHTTP2_ENHANCE_YOUR_CALM);
	}
}

static void upstream_goaway(struct gw_h2 *h2)
{
	if (h2->goaway_client || h2->srv_dead)
		return;
	h2->goaway_client = true;
	/* the client opens a new connection for what this one will not take */
	nghttp2_submit_goaway(h2->srv, NGHTTP2_FLAG_NONE,
			      nghttp2_session_get_last_proc_stream_id(h2->srv), NGHTTP2_NO_ERROR,
			      NULL, 0);
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
	struct gw_h2 *h2 = user;
	struct h2s *s = stream_of(session, frame->hd.stream_id);
	bool end = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
	bool from_client = session == h2->srv;

	switch (frame->hd.type) {
	case NGHTTP2_HEADERS:
		if (!s)
			return 0;
		if (from_client && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
			return request_ready(s, end);
		if (!from_client && !s->resp_started)
			return response_ready(s, end);
		if (frame->headers.cat != NGHTTP2_HCAT_HEADERS || s->local)
			return 0;
		/* trailers (RFC 9113 8.1): end the body, follow it */
		if (from_client) {
			if (s->trailers.over || gw_h2_has_placeholder(h2->ctx, &s->trailers)) {
				s->reason = reason_gw_name(s->trailers.over ? REASON_GW_BAD_REQUEST
						   : REASON_GW_CREDENTIAL_MISDIRECTED);
				nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, s->cl_sid,
							  NGHTTP2_REFUSED_STREAM);
				return 0;
			}
			s->req_trailers = s->req_eof = true;
			resume_up(s);
		} else {
			if (s->rtrailers.over)
				gw_hblock_clear(&s->rtrailers);
			gw_scrub_hblock(h2->ctx, &s->rtrailers);
			if (gw_scrub_body_add(&s->scrub, h2->ctx, &s->resp_body, NULL, 0, true) < 0)
				return NGHTTP2_ERR_CALLBACK_FAILURE;
			s->resp_trailers = s->resp_eof = true;
			resume_cl(s);
		}
		return 0;
	case NGHTTP2_DATA:
		if (s && end) {
			if (from_client) {
				s->req_eof = true;
				resume_up(s);
			} else if (gw_scrub_body_add(&s->scrub, h2->ctx, &s->resp_body, NULL, 0,
						     true) < 0) {
				return NGHTTP2_ERR_CALLBACK_FAILURE;
			} else {
				s->resp_eof = true;
				resume_cl(s);
			}
		}
		return 0;
	case NGHTTP2_RST_STREAM:
		if (from_client)
			count_client_reset(h2);
		return 0;
	case NGHTTP2_GOAWAY:
		if (!from_client)
			upstream_goaway(h2);
		return 0;
	default:
		return 0;
	}
}

static int on_stream_close(nghttp2_session *session, int32_t sid, uint32_t code, void *user)
{
	struct gw_h2 *h2 = user;
	struct h2s *s = stream_of(session, sid);

	if (!s)
		return 0;
	if (session == h2->srv) {
		/* the client's stream is over: record it; cancel the upstream's */
		s->cl_open = false;
		if (code && !s->error_code)
			s->error_code = code;
		if (s->up_open && !h2->up_dead)
			nghttp2_submit_rst_stream(h2->up, NGHTTP2_FLAG_NONE, s->up_sid,
						  map_code(code));
		drop_resp_body(s);
		record(s);
		if (!s->up_open)
			h2s_free(s);
		return 0;
	}
	/* the upstream's stream is over */
	s->up_open = false;
	drop_req_body(s);
	if (s->cl_open && !s->resp_started) {
		if (code == NGHTTP2_REFUSED_STREAM) {	/* not processed: the client may retry */
			s->error_code = code;
			nghttp2_submit_rst_stream(h2->srv, NGHTTP2_FLAG_NONE, s->cl_sid, code);
		} else if (respond_upstream_failed(s, 502, UPSTREAM_FAILURE) != 0) {
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		}
	} else if (s->cl_open && !s->resp_eof) {
		s->error_code = code ? code : NGHTTP2_INTERNAL_ERROR;
		nghttp2_submit_rst_stream(h2->srv, NGHTTP2_FLAG_NONE, s->cl_sid,
					  code ? code : NGHTTP2_INTERNAL_ERROR);
	}
	if (!s->cl_open)
		h2s_free(s);
	return 0;
}

/*
 * The client's header blocks count in the request's bytes: every HEADERS
 * and CONTINUATION frame's payload (RFC 9113 6.2, 6.10; the request's
 * head and trailers, HPACK-compressed), as DATA payloads do for the body.
 * nghttp2 reports CONTINUATION frames only here.  A stream's first HEADERS
 * begins before on_begin_headers() makes the stream: kept until then.
 */
static int on_begin_frame(nghttp2_session *session, const nghttp2_frame_hd *hd, void *user)
{
	struct gw_h2 *h2 = user;
	struct h2s *s;

	if (session != h2->srv ||
	    (hd->type != NGHTTP2_HEADERS && hd->type != NGHTTP2_CONTINUATION))
		return 0;
	if ((s = stream_of(session, hd->stream_id))) {
		s->request_bytes += hd->length;
	} else if (hd->type == NGHTTP2_HEADERS) {
		h2->hdr_sid = hd->stream_id;
		h2->hdr_len = hd->length;
	}
	return 0;
}

static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
	struct gw_h2 *h2 = user;
	struct h2s *s;

	/*
	 * The response's header blocks to the client count in its bytes, as
	 * its DATA does: for a HEADERS frame sent, nghttp2's hd.length is the
	 * whole block, CONTINUATION frames included (they are not reported).
	 */
	if (session == h2->srv && frame->hd.type == NGHTTP2_HEADERS &&
	    (s = stream_of(session, frame->hd.stream_id)))
		s->response_bytes += frame->hd.length;

	/* nghttp2 found a connection error (RFC 9113 5.4.1) and said so */
	if (session == h2->srv && frame->hd.type == NGHTTP2_GOAWAY &&
	    frame->goaway.error_code != NGHTTP2_NO_ERROR)
		h2->client_bad = true;
	return 0;
}

/* ---- the engine --------------------------------------------------------- */

static int session_new(struct gw_h2 *h2, bool server)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	int rv;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return -ENOMEM;
	if (nghttp2_option_new(&opt) != 0) {
		nghttp2_session_callbacks_del(cb);
		return -ENOMEM;
	}
	nghttp2_session_callbacks_set_on_begin_frame_callback(cb, on_begin_frame);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	/* flow control by hand: bytes are consumed when passed on (see h2.h) */
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_max_send_header_block_length(opt, GW_H2_MAX_HEADER_LIST);
	/* CVE-2024-28182: Debian's 1.52.0-1+deb12u2 has this backported */
	nghttp2_option_set_max_continuations(opt, GW_H2_MAX_CONTINUATIONS);
	if (server)
		/*
		 * CVE-2023-44487, backported to 1.52.0-1+deb12u1; on the wall
		 * clock, so count_client_reset() is the tighter bound on the
		 * caller's clock and this one a backstop.
		 */
		nghttp2_option_set_stream_reset_rate_limit(opt, 2 * GW_H2_MAX_RST_PER_S,
							   GW_H2_MAX_RST_PER_S);
	rv = server ? nghttp2_session_server_new2(&h2->srv, cb, h2, opt)
		    : nghttp2_session_client_new2(&h2->up, cb, h2, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	return rv ? -ENOMEM : 0;
}

struct gw_h2 *gw_h2_new(const struct gw_req_ctx *ctx, uint16_t port,
			const struct gw_h2_ops *ops, void *user, uint64_t now_ns)
{
	struct gw_h2 *h2 = calloc(1, sizeof(*h2));

	if (!h2)
		return NULL;
	h2->ctx = ctx;
	h2->ops = ops;
	h2->user = user;
	h2->port = port;
	h2->now_ns = now_ns;
	h2->rst_window_ns = now_ns;
	if (session_new(h2, true) < 0 || session_new(h2, false) < 0) {
		gw_h2_free(h2);
		return NULL;
	}
	return h2;
}

/* Everything either session has to send, through the ops, until both are quiet. */
static int pump(struct gw_h2 *h2)
{
	bool more;

	do {
		more = false;
		for (int side = 0; side < 2; side++) {
			nghttp2_session *session = side ? h2->up : h2->srv;
			int (*out)(void *, const uint8_t *, size_t) =
				side ? h2->ops->to_upstream : h2->ops->to_client;

			if (side ? h2->up_dead : h2->srv_dead)
				continue;
			for (;;) {
				const uint8_t *data;
				ssize_t n = nghttp2_session_mem_send(session, &data);
				int rv;

				if (n < 0)
					return n == NGHTTP2_ERR_NOMEM ? -ENOMEM : -EPROTO;
				if (n == 0)
					break;
				more = true;
				rv = out(h2->user, data, (size_t)n);
				if (rv < 0)
					return rv;
			}
		}
	} while (more);
	return 0;
}

int gw_h2_start(struct gw_h2 *h2, uint64_t now_ns)
{
	const nghttp2_settings_entry srv_iv[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, GW_H2_MAX_STREAMS },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, GW_H2_MAX_HEADER_LIST },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, GW_H2_STREAM_WINDOW },
	};
	const nghttp2_settings_entry up_iv[] = {
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, GW_H2_MAX_STREAMS },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, GW_H2_MAX_HEADER_LIST },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, GW_H2_STREAM_WINDOW },
	};

	h2->now_ns = now_ns;
	if (nghttp2_submit_settings(h2->srv, NGHTTP2_FLAG_NONE, srv_iv, 3) != 0 ||
	    nghttp2_submit_settings(h2->up, NGHTTP2_FLAG_NONE, up_iv, 4) != 0 ||
	    nghttp2_session_set_local_window_size(h2->srv, NGHTTP2_FLAG_NONE, 0,
						  GW_H2_CONN_WINDOW) != 0 ||
	    nghttp2_session_set_local_window_size(h2->up, NGHTTP2_FLAG_NONE, 0,
						  GW_H2_CONN_WINDOW) != 0)
		return -ENOMEM;
	return pump(h2);
}

/* Every stream still waiting on the upstream gets 502/504 or RST_STREAM; up is not used again. */
static int fail_upstream(struct gw_h2 *h2, unsigned int status, const char *reason)
{
	struct h2s *s, *next;

	if (h2->up_dead)
		return 0;
	h2->up_dead = true;
	for (s = h2->streams; s; s = next) {
		next = s->next;
		if (!s->up_open)
			continue;
		s->up_open = false;
		s->req_body.off = s->req_body.len = 0;
		if (!s->cl_open) {
			h2s_free(s);
			continue;
		}
		if (!s->resp_started) {
			if (respond_upstream_failed(s, status, reason) != 0)
				return -ENOMEM;
		} else if (!s->resp_eof && !h2->srv_dead) {
			s->error_code = NGHTTP2_INTERNAL_ERROR;
			s->reason = reason;
			nghttp2_submit_rst_stream(h2->srv, NGHTTP2_FLAG_NONE, s->cl_sid,
						  NGHTTP2_INTERNAL_ERROR);
		}
	}
	upstream_goaway(h2);
	return 0;
}

int gw_h2_from_client(struct gw_h2 *h2, const uint8_t *buf, size_t len, uint64_t now_ns)
{
	ssize_t n;
	int rv;

	h2->now_ns = now_ns;
	if (h2->srv_dead)
		return -EPROTO;
	n = nghttp2_session_mem_recv(h2->srv, buf, len);
	if (n < 0) {
		if (n == NGHTTP2_ERR_NOMEM)
			return -ENOMEM;
		/*
		 * Fatal (bad preface, flood, too many CONTINUATION frames,
		 * CVE-2024-28182): nghttp2 queued a GOAWAY where it could;
		 * make sure, send it, and take nothing more from the client.
		 */
		h2->client_bad = true;
		nghttp2_session_terminate_session(h2->srv, NGHTTP2_ENHANCE_YOUR_CALM);
		rv = pump(h2);
		h2->srv_dead = true;
		return rv < 0 ? rv : -EPROTO;
	}
	rv = pump(h2);
	if (rv < 0)
		return rv;
	return h2->client_bad ? -EPROTO : 0;
}

int gw_h2_from_upstream(struct gw_h2 *h2, const uint8_t *buf, size_t len, uint64_t now_ns)
{
	ssize_t n;
	int rv;

	h2->now_ns = now_ns;
	if (h2->srv_dead)
		return -EPROTO;
	if (h2->up_dead)
		return 0;	/* what was in flight is answered already */
	n = nghttp2_session_mem_recv(h2->up, buf, len);
	if (n == NGHTTP2_ERR_NOMEM)
		return -ENOMEM;
	if (n < 0 || (!nghttp2_session_want_read(h2->up) && !nghttp2_session_want_write(h2->up))) {
		/* the upstream broke HTTP/2 or said GOAWAY and finished: its open streams fail */
		if (n >= 0 && (rv = pump(h2)) < 0)	/* the GOAWAY nghttp2 queued for it */
			return rv;
		if (fail_upstream(h2, 502, UPSTREAM_FAILURE) < 0)
			return -ENOMEM;
	}
	return pump(h2);
}

int gw_h2_upstream_failed(struct gw_h2 *h2, unsigned int status, const char *reason,
			  uint64_t now_ns)
{
	h2->now_ns = now_ns;
	if (fail_upstream(h2, status, reason) < 0)
		return -ENOMEM;
	return pump(h2);
}

bool gw_h2_finished(const struct gw_h2 *h2)
{
	return h2->srv_dead ||
	       (!nghttp2_session_want_read(h2->srv) && !nghttp2_session_want_write(h2->srv));
}

void gw_h2_free(struct gw_h2 *h2)
{
	if (!h2)
		return;
	while (h2->streams) {
		struct h2s *s = h2->streams;

		if (!s->recorded && !s->error_code)
			s->error_code = NGHTTP2_CANCEL;
		record(s);
		h2s_free(s);
	}
	nghttp2_session_del(h2->srv);
	nghttp2_session_del(h2->up);
	free(h2);
}
