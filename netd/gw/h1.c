/*
 * gw/h1 - the HTTP/1.x engine (netd/gw/h1.h).
 *
 * Framing is read twice and must agree: by our own strict reader
 * (netd/gw/h1_head.c: heads, chunked bodies) and by Debian's http-parser,
 * fed exactly the slices our reader cut.  A disagreement is a refusal (400,
 * or 502 for a response), since a disagreement between two parsers is
 * what request smuggling is made of; we forward raw bytes, so what we
 * counted as one message must be what the upstream counts.
 *
 * Requests are answered in order: a queue of at most GW_H1_QUEUE_MAX
 * entries, each either forwarded (answered by the upstream, in order, as
 * HTTP/1.1 requires) or local (answered by us: a refusal or an error),
 * written out when it reaches the front.  Pure: no I/O, no clock, no log.
 */
#include "netd/gw/h1.h"

#include <errno.h>
#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/reason.h"
#include "netd/gw/h1_head.h"
#include "netd/gw/scrub.h"

enum body_kind { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_CLOSE };
enum cl_state { CL_HEAD, CL_BODY, CL_STOP, CL_RAW };
enum up_state { UP_HEAD, UP_BODY, UP_RAW };

#define EMPTY_LINES_MAX 8	/* CRLFs taken before a request line (RFC 9112 2.2) */

struct entry {
	char *strs;		/* owned: method, host, path, each NUL-terminated */
	const char *method, *host, *path;
	const char *cred_name;
	const struct gw_cred *cred;
	const char *reason;
	enum gw_req_verdict verdict;
	unsigned int status;	/* the status the client got (or will get, local) */
	uint32_t retry_after_s;
	bool local;		/* we answer it */
	bool refused;		/* ... by policy */
	bool close_after;	/* the connection ends after its answer */
	bool answered;		/* local: the answer is out */
	bool head_req;		/* HEAD: the answer has no body */
	bool upgrade;		/* forwarded with Upgrade: websocket */
	bool req_done;		/* the whole request was read */
	bool final_started;	/* a non-1xx answer began reaching the client */
	bool resp_done;		/* the whole answer came before the whole request */
	uint64_t req_bytes, resp_bytes, start_ns, first_ns, end_ns;
};

/* One direction's message being read. */
struct side {
	char *head;		/* owned; grows to GW_H1_HEAD_MAX */
	size_t head_len, head_cap, scanned;
	unsigned int empty_lines;
	bool cr_pending;	/* a CR of an empty line before a request line */
	http_parser parser;
	bool parser_done;	/* http-parser called on_message_complete */
	bool skip_body;		/* tell http-parser there is no body (responses) */
	enum body_kind body;
	uint64_t left;		/* BODY_LENGTH: bytes to go */
	struct gw_h1_chunks chunks;
	bool keep_alive;	/* of the message just read */
};

struct gw_h1 {
	const struct gw_req_ctx *ctx;
	uint16_t port;
	struct gw_rate *rate;
	const struct gw_h1_ops *ops;
	void *user;
	struct entry q[GW_H1_QUEUE_MAX];
	size_t q_first, q_len;
	struct entry *cur;	/* the request whose body is being read */
	struct side cl, up;
	struct gw_scrub scrub;	/* the upstream's bytes: an echoed secret masked */
	enum cl_state cl_state;
	enum up_state up_state;
	uint64_t cl_start_ns;	/* first byte of the head being read */
	bool done, wait_upgrade, up_closing;
	unsigned int up_fail_status;	/* the upstream failed: the next request gets this */
	const char *up_fail_reason;
};

/* ---- http-parser: the second reading ------------------------------------ */

static int on_headers_complete(http_parser *p)
{
	const struct side *s = p->data;

	return s->skip_body ? 1 : 0;	/* 1: no body (HEAD, 1xx, 204, 304) */
}

static int on_message_complete(http_parser *p)
{
	struct side *s = p->data;

	s->parser_done = true;
	/* stop right after the message: what follows is the next one's, ours to cut */
	http_parser_pause(p, 1);
	return 0;
}

static const http_parser_settings hp_settings = {
	.on_headers_complete = on_headers_complete,
	.on_message_complete = on_message_complete,
};

/* Feed http-parser the @len bytes our reader cut; true if it took them all. */
static bool hp_feed(struct side *s, const char *buf, size_t len)
{
	size_t n = http_parser_execute(&s->parser, &hp_settings, buf, len);
	enum http_errno e = HTTP_PARSER_ERRNO(&s->parser);

	return (e == HPE_OK || e == HPE_PAUSED) && n == len;
}

static void hp_start(struct side *s, enum http_parser_type type)
{
	http_parser_init(&s->parser, type);
	s->parser.data = s;
	s->parser_done = false;
}

/* ---- the queue ------------------------------------------------------------ */

static struct entry *q_at(struct gw_h1 *h, size_t i)
{
	return &h->q[(h->q_first + i) % GW_H1_QUEUE_MAX];
}

static struct entry *q_front(struct gw_h1 *h)
{
	return h->q_len ? q_at(h, 0) : NULL;
}

/* A new entry at the back; the caller made sure there is room. */
static struct entry *q_push(struct gw_h1 *h, uint64_t start_ns)
{
	struct entry *e = q_at(h, h->q_len++);

	memset(e, 0, sizeof(*e));
	e->method = e->host = e->path = "";
	e->start_ns = start_ns;
	return e;
}

static void q_pop(struct gw_h1 *h)
{
	struct entry *e = q_front(h);

	if (h->cur == e)
		h->cur = NULL;
	free(e->strs);
	memset(e, 0, sizeof(*e));
	h->q_first = (h->q_first + 1) % GW_H1_QUEUE_MAX;
	h->q_len--;
}

static void record(struct gw_h1 *h, const struct entry *e)
{
	struct gw_h1_record r = {
		.method = e->method, .host = e->host, .path = e->path,
		.status = e->status, .request_bytes = e->req_bytes,
		.response_bytes = e->resp_bytes, .start_ns = e->start_ns,
		.first_byte_ns = e->first_ns, .end_ns = e->end_ns,
		.credential = e->cred_name, .reason = e->reason, .refused = e->refused,
	};

	h->ops->record(h->user, &r);
}

/* The connection is over: every pending request gets its record, then DONE. */
static void finish(struct gw_h1 *h, uint64_t now_ns, const char *reason)
{
	if (h->done)
		return;
	h->done = true;
	while (h->q_len) {
		struct entry *e = q_front(h);

		if (!e->end_ns)
			e->end_ns = now_ns;
		if (!e->reason)	/* every entry left is unfinished: say why */
			e->reason = reason ? reason : reason_gw_name(REASON_GW_CONNECTION_CLOSED);
		if (e->local && !e->answered)
			e->status = 0;
		record(h, e);
		q_pop(h);
	}
}

/* ---- output ---------------------------------------------------------------- */

static bool out_client(struct gw_h1 *h, const void *buf, size_t len, uint64_t now_ns)
{
	if (h->done || len == 0)
		return !h->done;
	if (h->ops->to_client(h->user, buf, len) < 0) {
		finish(h, now_ns, reason_gw_name(REASON_GW_INTERNAL));
		return false;
	}
	return true;
}

/* gw_scrub_pass()'s way out: the ops' to_client (out_client() judges the result). */
static int scrub_emit(void *arg, const uint8_t *p, size_t n)
{
	struct gw_h1 *h = arg;

	return h->ops->to_client(h->user, p, n);
}

/* The upstream's bytes to the client, a secret in them masked; @end: its message ends. */
static bool up_out(struct gw_h1 *h, const uint8_t *buf, size_t len, bool end, uint64_t now_ns)
{
	if (h->done)
		return false;
	if (gw_scrub_pass(&h->scrub, h->ctx, buf, len, end, scrub_emit, h) < 0) {
		finish(h, now_ns, reason_gw_name(REASON_GW_INTERNAL));
		return false;
	}
	return true;
}

static bool out_upstream(struct gw_h1 *h, const void *buf, size_t len, uint64_t now_ns)
{
	if (h->done || len == 0)
		return !h->done;
	if (h->ops->to_upstream(h->user, buf, len) < 0) {
		finish(h, now_ns, reason_gw_name(REASON_GW_INTERNAL));
		return false;
	}
	return true;
}

static const char *status_text(unsigned int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 421: return "Misdirected Request";
	case 429: return "Too Many Requests";
	case 502: return "Bad Gateway";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

/* Our own answer to @e: status, JSON body (netd/gw/req.h), X-Netd-Reason. */
static void answer_local(struct gw_h1 *h, struct entry *e, uint64_t now_ns)
{
	struct gw_req_result res;
	char body[GW_REQ_REFUSAL_MAX], head[512], retry[48] = "";
	size_t blen;
	int hlen;

	gw_req_result_set(&res, e->verdict, e->status, e->reason);
	res.cred = e->cred;
	res.cred_name = e->cred_name;
	res.retry_after_s = e->retry_after_s;
	blen = gw_req_refusal(h->ctx, &res, body, sizeof(body));
	if (e->status == 429)
		snprintf(retry, sizeof(retry), "Retry-After: %u\r\n", e->retry_after_s);
	hlen = snprintf(head, sizeof(head),
			"HTTP/1.1 %u %s\r\nContent-Type: application/json\r\n"
			"Content-Length: %zu\r\nX-Netd-Reason: %s\r\n%s%s\r\n",
			e->status, status_text(e->status), blen, e->reason, retry,
			e->close_after ? "Connection: close\r\n" : "");
	e->answered = true;
	e->first_ns = now_ns;
	e->end_ns = now_ns;
	e->final_started = true;
	if (hlen < 0 || (size_t)hlen >= sizeof(head)) {
		finish(h, now_ns, reason_gw_name(REASON_GW_INTERNAL));
		return;
	}
	if (!e->head_req)
		e->resp_bytes = blen;
	e->resp_bytes += (size_t)hlen;
	if (out_client(h, head, (size_t)hlen, now_ns) && !e->head_req)
		out_client(h, body, blen, now_ns);
}

/* Turn @e into a local answer: a refusal or an error of ours. */
static void make_local(struct entry *e, enum gw_req_verdict v, unsigned int status,
		       const char *reason, bool refused)
{
	struct gw_req_result res;

	gw_req_result_set(&res, v, status, reason);
	e->local = true;
	e->verdict = v;
	e->status = res.status;
	e->reason = res.reason;
	e->refused = refused;
}

/*
 * Write out what is owed at the front of the queue, in order, and end the
 * connection when nothing more can come.  Called after anything that may
 * have changed the front.
 */
static void drain(struct gw_h1 *h, uint64_t now_ns)
{
	struct entry *e;

	while (!h->done && (e = q_front(h)) != NULL) {
		if (!e->local) {
			/* the upstream said close: nothing more will be answered */
			if (h->up_closing)
				finish(h, now_ns, reason_gw_name(REASON_GW_UPSTREAM_CLOSED));
			return;
		}
		if (!e->answered)
			answer_local(h, e, now_ns);
		if (h->done)
			return;
		if (e->close_after) {
			finish(h, now_ns, NULL);
			return;
		}
		if (!e->req_done)
			return;	/* its body is still being skipped */
		record(h, e);
		q_pop(h);
	}
	if (!h->done && !h->q_len && (h->cl_state == CL_STOP || h->up_closing))
		finish(h, now_ns, NULL);
}

/* ---- reading heads -------------------------------------------------------- */

static int side_grow(struct side *s, size_t need)
{
	size_t cap = s->head_cap ? s->head_cap : 1024;
	char *p;

	while (cap < need)
		cap *= 2;
	if (cap > GW_H1_HEAD_MAX)
		cap = GW_H1_HEAD_MAX;
	if (cap <= s->head_cap)
		return 0;
	p = realloc(s->head, cap);
	if (!p)
		return -ENOMEM;
	s->head = p;
	s->head_cap = cap;
	return 0;
}

/*
 * Take bytes of a head.  @skip_empty: drop empty lines before it (requests).
 * Return the bytes taken; *@res: 1 the head is complete (s->head_len is its
 * length), 0 more needed, < 0 refused.
 */
static size_t head_take(struct side *s, const uint8_t *buf, size_t len, bool skip_empty,
			int *res)
{
	size_t i = 0, take, old = s->head_len;
	long end;

	*res = 0;
	while (skip_empty && s->head_len == 0 && i < len) {
		if (buf[i] == '\r' && !s->cr_pending) {
			s->cr_pending = true;
		} else if (buf[i] == '\n' && s->cr_pending) {
			s->cr_pending = false;
			if (++s->empty_lines > EMPTY_LINES_MAX) {
				*res = -EBADMSG;
				return i;
			}
		} else if (s->cr_pending || buf[i] == '\n') {
			*res = -EBADMSG;
			return i;
		} else {
			break;
		}
		i++;
	}
	if (i == len)
		return i;
	take = len - i;
	if (take > GW_H1_HEAD_MAX - old)
		take = GW_H1_HEAD_MAX - old;
	if (side_grow(s, old + take) < 0) {
		*res = -ENOMEM;
		return i;
	}
	memcpy(s->head + old, buf + i, take);
	s->head_len = old + take;
	end = gw_h1_head_end(s->head, s->head_len, s->scanned);
	if (end < 0) {
		*res = (int)end;
		return i + take;
	}
	if (end == 0) {
		s->scanned = s->head_len;
		if (s->head_len == GW_H1_HEAD_MAX)
			*res = -EMSGSIZE;
		return i + take;
	}
	s->head_len = (size_t)end;
	*res = 1;
	return i + ((size_t)end - old);
}

static void head_reset(struct side *s)
{
	s->head_len = 0;
	s->scanned = 0;
	s->empty_lines = 0;
	s->cr_pending = false;
}

/* ---- requests ----------------------------------------------------------------- */

/* Copy method, host and path (query cut) of @hd into @e for its record. */
static int entry_strings(struct entry *e, const struct gw_h1_head *hd)
{
	const char *q = memchr(hd->target, '?', hd->target_len);
	size_t plen = q ? (size_t)(q - hd->target) : hd->target_len;
	const char *host = hd->host >= 0 ? hd->hdrs[hd->host].value : "";
	size_t hlen = hd->host >= 0 ? hd->hdrs[hd->host].value_len : 0;
	char *p = malloc(hd->method_len + hlen + plen + 3);

	if (!p)
		return -ENOMEM;
	e->strs = p;
	e->method = p;
	memcpy(p, hd->method, hd->method_len);
	p += hd->method_len;
	*p++ = '\0';
	e->host = p;
	memcpy(p, host, hlen);
	p += hlen;
	*p++ = '\0';
	e->path = p;
	memcpy(p, hd->target, plen);
	p[plen] = '\0';
	return 0;
}

/* The head as the upstream gets it (gw_h1_head_forward()); its buffer held a secret: wiped. */
static bool forward_head(struct gw_h1 *h, const struct gw_h1_head *hd,
			 const struct gw_req_result *res, uint64_t now_ns)
{
	size_t size = gw_h1_head_forward(h->cl.head, hd, res, NULL);
	char *p = malloc(size);
	bool ok;

	if (!p) {
		finish(h, now_ns, reason_gw_name(REASON_GW_INTERNAL));
		return false;
	}
	ok = out_upstream(h, p, gw_h1_head_forward(h->cl.head, hd, res, p), now_ns);
	explicit_bzero(p, size);	/* a credential's value: never left in freed memory */
	free(p);
	return ok;
}

/* The whole request is read: what may the client send next? */
static void request_done(struct gw_h1 *h, uint64_t now_ns)
{
	struct entry *e = h->cur;
	/* Connection: close, HTTP/1.0 without keep-alive, an error: no more requests */
	bool stop = e->close_after || !h->cl.keep_alive;
	/* nothing more is HTTP until the answer to an upgrade says so */
	bool upgrade = !e->local && e->upgrade;

	e->req_done = true;
	h->cur = NULL;
	if (e->resp_done) {
		/* answered early (RFC 9110 15.5, e.g. 413): it is over now */
		upgrade = false;
		record(h, e);
		q_pop(h);
	}
	h->cl_state = stop ? CL_STOP : CL_HEAD;
	if (upgrade)
		h->wait_upgrade = true;
	drain(h, now_ns);
}

/* A request refused before we could read it whole: 400 in its turn, then close. */
static void request_bad(struct gw_h1 *h, struct entry *e, uint64_t now_ns)
{
	make_local(e, GW_REQ_BAD, 0, NULL, true);
	e->close_after = true;
	e->req_done = true;
	if (h->cur == e)
		h->cur = NULL;
	h->cl_state = CL_STOP;
	drain(h, now_ns);
}

/* Decide a checked, framed request: refuse (in its turn) or forward now. */
static void request_decide(struct gw_h1 *h, struct entry *e, const struct gw_h1_head *hd,
			   uint64_t now_ns)
{
	struct gw_req_result res;
	uint32_t retry = 0;

	if (hd->upgrade && (!hd->upgrade_websocket || h->cl.body != BODY_NONE)) {
		gw_req_result_set(&res, GW_REQ_BAD, 0, NULL);	/* only WebSocket passes */
	} else {
		gw_req_check(h->ctx, hd->method, hd->method_len, NULL, 0, h->port, hd->target,
			     hd->target_len, hd->hdrs, hd->n_hdrs, &res);
		if (res.verdict == GW_REQ_OK && h->rate) {
			int r = gw_rate_take(h->rate, h->ctx->sandbox, h->ctx->rule,
					     h->ctx->rate_milli, h->ctx->burst,
					     now_ns / 1000000u, &retry);

			if (r == -EAGAIN)
				gw_req_result_set(&res, GW_REQ_RATE, 0, NULL);
			else if (r < 0)
				gw_req_result_set(&res, GW_REQ_BAD, 0, NULL);
		}
	}
	e->cred_name = res.cred_name;
	e->cred = res.cred;
	if (res.verdict != GW_REQ_OK) {
		make_local(e, res.verdict, 0, NULL, true);
		e->retry_after_s = retry;
		/* the body may never come after a refusal the client awaited */
		e->close_after = !h->cl.keep_alive ||
				 (hd->expect_continue && h->cl.body != BODY_NONE);
		return;
	}
	if (h->up_fail_status) {
		make_local(e, GW_REQ_UPSTREAM, h->up_fail_status, h->up_fail_reason, false);
		e->close_after = true;
		return;
	}
	e->upgrade = hd->upgrade;
	forward_head(h, hd, &res, now_ns);
}

/* A complete request head is in h->cl.head. */
static void request_head(struct gw_h1 *h, uint64_t now_ns)
{
	struct side *s = &h->cl;
	struct gw_h1_head hd;
	struct entry *e = q_push(h, h->cl_start_ns);

	h->cur = e;
	e->req_bytes = s->head_len;
	if (gw_h1_head_parse(s->head, s->head_len, true, &hd) < 0 ||
	    entry_strings(e, &hd) < 0) {
		request_bad(h, e, now_ns);
		return;
	}
	e->head_req = hd.method_len == 4 && memcmp(hd.method, "HEAD", 4) == 0;
	s->body = hd.chunked ? BODY_CHUNKED : hd.has_length && hd.length ? BODY_LENGTH : BODY_NONE;
	s->left = hd.length;
	memset(&s->chunks, 0, sizeof(s->chunks));
	hp_start(s, HTTP_REQUEST);
	s->skip_body = false;
	/* the second reading: all of the head, and done exactly when there is no body */
	if (!hp_feed(s, s->head, s->head_len) || s->parser_done != (s->body == BODY_NONE)) {
		request_bad(h, e, now_ns);
		return;
	}
	s->keep_alive = http_should_keep_alive(&s->parser) != 0;
	request_decide(h, e, &hd, now_ns);
	head_reset(s);
	if (h->done)
		return;
	if (s->body == BODY_NONE) {
		request_done(h, now_ns);
		return;
	}
	h->cl_state = CL_BODY;
	drain(h, now_ns);	/* a refusal at the front goes out before its body is skipped */
}

/* Body bytes of the current request: forwarded raw, or skipped if refused. */
static size_t request_body(struct gw_h1 *h, const uint8_t *buf, size_t len, uint64_t now_ns)
{
	struct side *s = &h->cl;
	struct entry *e = h->cur;
	size_t used;
	bool end;

	if (s->body == BODY_LENGTH) {
		used = len < s->left ? len : (size_t)s->left;
		s->left -= used;
		end = s->left == 0;
	} else {
		int r = gw_h1_chunks_scan(&s->chunks, buf, len, &used);

		if (r < 0)
			goto bad;
		end = r == 1;
	}
	if (!hp_feed(s, (const char *)buf, used) || s->parser_done != end)
		goto bad;
	e->req_bytes += used;
	if (!e->local && !out_upstream(h, buf, used, now_ns))
		return len;
	if (end)
		request_done(h, now_ns);
	return used;
bad:
	if (e->local) {
		e->close_after = true;	/* refused anyway: its answer, then close */
		e->req_done = true;
		h->cur = NULL;
		h->cl_state = CL_STOP;
		drain(h, now_ns);
	} else {
		/* the upstream has half a request */
		finish(h, now_ns, reason_gw_name(REASON_GW_BAD_REQUEST));
	}
	return len;
}

static bool client_paused(const struct gw_h1 *h)
{
	return h->q_len >= GW_H1_QUEUE_MAX || h->wait_upgrade;
}

size_t gw_h1_from_client(struct gw_h1 *h, const uint8_t *buf, size_t len, uint64_t now_ns)
{
	size_t off = 0;

	while (off < len && !h->done) {
		int res;

		switch (h->cl_state) {
		case CL_RAW:
			out_upstream(h, buf + off, len - off, now_ns);
			return len;
		case CL_STOP:
			return len;	/* after the last request: dropped */
		case CL_BODY:
			off += request_body(h, buf + off, len - off, now_ns);
			break;
		case CL_HEAD:
			if (client_paused(h))
				return off;
			if (h->cl.head_len == 0)
				h->cl_start_ns = now_ns;
			off += head_take(&h->cl, buf + off, len - off, true, &res);
			if (res < 0) {
				request_bad(h, q_push(h, h->cl_start_ns), now_ns);
				return len;
			}
			if (res == 1)
				request_head(h, now_ns);
			break;
		}
	}
	return h->done ? len : off;
}

/* ---- responses ------------------------------------------------------------------ */

/*
 * The answer to @e cannot be read or did not come: @status (502/504) if the
 * client got nothing of the answer yet, then the connection ends.
 */
static void response_fail(struct gw_h1 *h, struct entry *e, unsigned int status,
			  const char *reason, uint64_t now_ns)
{
	if (!e->final_started) {
		make_local(e, GW_REQ_UPSTREAM, status, reason, false);
		e->close_after = true;
		answer_local(h, e, now_ns);
		if (!h->done) {
			record(h, e);
			q_pop(h);
		}
	} else {
		e->reason = reason;
	}
	finish(h, now_ns, reason);
}

static void response_done(struct gw_h1 *h, struct entry *e, uint64_t now_ns)
{
	struct side *s = &h->up;

	h->up_state = UP_HEAD;
	if (e->status < 200)
		return;	/* an interim answer: the final one follows */
	e->end_ns = now_ns;
	if (!s->keep_alive)
		h->up_closing = true;
	if (!e->req_done) {
		/* the request's body is still coming: it goes on, recorded when done */
		e->resp_done = true;
		return;
	}
	record(h, e);
	q_pop(h);
	drain(h, now_ns);
}

/* A complete response head to @e is in h->up.head. */
static void response_head(struct gw_h1 *h, struct entry *e, uint64_t now_ns)
{
	struct side *s = &h->up;
	struct gw_h1_head hd;
	bool no_body;

	if (gw_h1_head_parse(s->head, s->head_len, false, &hd) < 0 ||
	    (hd.status == 101 && !e->upgrade)) {
		response_fail(h, e, 502, reason_gw_name(REASON_GW_BAD_RESPONSE), now_ns);
		return;
	}
	no_body = e->head_req || hd.status < 200 || hd.status == 204 || hd.status == 304;
	s->body = no_body ? BODY_NONE : hd.chunked ? BODY_CHUNKED :
		  hd.has_length ? (hd.length ? BODY_LENGTH : BODY_NONE) : BODY_CLOSE;
	s->left = hd.length;
	memset(&s->chunks, 0, sizeof(s->chunks));
	hp_start(s, HTTP_RESPONSE);
	s->skip_body = no_body;
	if (!hp_feed(s, s->head, s->head_len) || s->parser_done != (s->body == BODY_NONE)) {
		response_fail(h, e, 502, reason_gw_name(REASON_GW_BAD_RESPONSE), now_ns);
		return;
	}
	s->keep_alive = http_should_keep_alive(&s->parser) != 0;
	e->resp_bytes += s->head_len;
	if (hd.status >= 200 || hd.status == 101) {
		e->final_started = true;
		e->status = hd.status;
	}
	if (!up_out(h, (const uint8_t *)s->head, s->head_len, false, now_ns))
		return;
	head_reset(s);
	if (hd.status == 101) {
		/* RFC 9110 15.2.2: from here on both ways are the new protocol's */
		e->end_ns = now_ns;
		record(h, e);
		q_pop(h);
		h->up_state = UP_RAW;
		h->cl_state = CL_RAW;
		h->wait_upgrade = false;
		return;
	}
	if (e->upgrade && hd.status >= 200)
		h->wait_upgrade = false;	/* refused upgrade: HTTP goes on */
	if (s->body == BODY_NONE)
		response_done(h, e, now_ns);
	else
		h->up_state = UP_BODY;
}

/* Body bytes of the current response: to the client as they come. */
static size_t response_body(struct gw_h1 *h, struct entry *e, const uint8_t *buf, size_t len,
			    uint64_t now_ns)
{
	struct side *s = &h->up;
	size_t used = len;
	bool end = false;

	if (s->body == BODY_LENGTH) {
		used = len < s->left ? len : (size_t)s->left;
		s->left -= used;
		end = s->left == 0;
	} else if (s->body == BODY_CHUNKED) {
		int r = gw_h1_chunks_scan(&s->chunks, buf, len, &used);

		if (r < 0) {
			/* the client has half an answer */
			finish(h, now_ns, reason_gw_name(REASON_GW_BAD_RESPONSE));
			return len;
		}
		end = r == 1;
	}
	if (!hp_feed(s, (const char *)buf, used) || s->parser_done != end) {
		finish(h, now_ns, reason_gw_name(REASON_GW_BAD_RESPONSE));
		return len;
	}
	e->resp_bytes += used;
	if (!up_out(h, buf, used, end, now_ns))
		return len;
	if (end)
		response_done(h, e, now_ns);
	return used;
}

void gw_h1_from_upstream(struct gw_h1 *h, const uint8_t *buf, size_t len, uint64_t now_ns)
{
	size_t off = 0;

	while (off < len && !h->done) {
		struct entry *e = q_front(h);
		int res;

		if (h->up_state == UP_RAW) {
			up_out(h, buf + off, len - off, false, now_ns);
			return;
		}
		if (!e || e->local || e->resp_done) {
			/* an answer to nothing asked */
			finish(h, now_ns, reason_gw_name(REASON_GW_BAD_RESPONSE));
			return;
		}
		if (!e->first_ns)
			e->first_ns = now_ns;
		if (h->up_state == UP_BODY) {
			off += response_body(h, e, buf + off, len - off, now_ns);
			continue;
		}
		off += head_take(&h->up, buf + off, len - off, false, &res);
		if (res < 0)
			response_fail(h, e, 502, reason_gw_name(REASON_GW_BAD_RESPONSE), now_ns);
		else if (res == 1)
			response_head(h, e, now_ns);
	}
}

/* ---- ends and errors ----------------------------------------------------------------- */

void gw_h1_client_eof(struct gw_h1 *h, uint64_t now_ns)
{
	if (h->done)
		return;
	switch (h->cl_state) {
	case CL_RAW:
		finish(h, now_ns, NULL);
		return;
	case CL_HEAD:
		if (h->cl.head_len || h->cl.cr_pending) {
			request_bad(h, q_push(h, h->cl_start_ns), now_ns);	/* half a head */
			return;
		}
		break;
	case CL_BODY:
		if (!h->cur->local) {
			finish(h, now_ns, reason_gw_name(REASON_GW_CLIENT_CLOSED));
			return;
		}
		h->cur->close_after = true;
		h->cur->req_done = true;
		h->cur = NULL;
		break;
	case CL_STOP:
		break;
	}
	h->cl_state = CL_STOP;
	h->wait_upgrade = false;
	drain(h, now_ns);
}

/* The first request still waiting for the upstream's answer, or NULL. */
static struct entry *waiting(struct gw_h1 *h)
{
	for (size_t i = 0; i < h->q_len; i++)
		if (!q_at(h, i)->local)
			return q_at(h, i);
	return NULL;
}

void gw_h1_upstream_error(struct gw_h1 *h, unsigned int status, const char *reason,
			  uint64_t now_ns)
{
	struct entry *e;

	if (h->done)
		return;
	if (h->up_state == UP_RAW) {
		finish(h, now_ns, reason);
		return;
	}
	e = waiting(h);
	if (e && e == q_front(h)) {
		response_fail(h, e, status, reason, now_ns);
		return;
	}
	if (e) {
		finish(h, now_ns, reason);	/* refusals still owed before it: cut short */
		return;
	}
	h->up_fail_status = status;	/* nothing asked yet: the next request gets it */
	h->up_fail_reason = reason;
}

void gw_h1_upstream_eof(struct gw_h1 *h, uint64_t now_ns)
{
	struct entry *e;

	if (h->done)
		return;
	e = q_front(h);
	if (h->up_state == UP_BODY && h->up.body == BODY_CLOSE && e && !e->local) {
		/* a close-delimited answer (RFC 9112 6.3 (8)) ends here */
		if (!hp_feed(&h->up, NULL, 0) || !h->up.parser_done) {
			finish(h, now_ns, reason_gw_name(REASON_GW_BAD_RESPONSE));
			return;
		}
		h->up.keep_alive = false;
		if (up_out(h, NULL, 0, true, now_ns))	/* what was held back */
			response_done(h, e, now_ns);
		return;
	}
	if (h->up_state == UP_RAW || (!h->q_len && h->cl_state != CL_BODY && !h->cl.head_len)) {
		up_out(h, NULL, 0, true, now_ns);
		finish(h, now_ns, NULL);
		return;
	}
	gw_h1_upstream_error(h, 502, reason_gw_name(REASON_GW_UPSTREAM_CLOSED), now_ns);
	if (!h->done)
		h->up_closing = true;
}

/* ---- life ----------------------------------------------------------------------- */

struct gw_h1 *gw_h1_new(const struct gw_req_ctx *ctx, uint16_t port, struct gw_rate *rate,
			const struct gw_h1_ops *ops, void *user)
{
	struct gw_h1 *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->ctx = ctx;
	h->port = port;
	h->rate = rate;
	h->ops = ops;
	h->user = user;
	h->cl_state = CL_HEAD;
	h->up_state = UP_HEAD;
	return h;
}

void gw_h1_abort(struct gw_h1 *h, const char *reason, uint64_t now_ns)
{
	finish(h, now_ns, reason);
}

void gw_h1_free(struct gw_h1 *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->q_len; i++)
		free(q_at(h, i)->strs);
	free(h->cl.head);
	if (h->up.head)
		explicit_bzero(h->up.head, h->up.head_cap);	/* an upstream may echo a key */
	free(h->up.head);
	gw_scrub_free(&h->scrub);
	free(h);
}

unsigned int gw_h1_flags(const struct gw_h1 *h)
{
	unsigned int f = 0;

	if (h->done)
		return GW_H1_DONE | (h->up_state == UP_RAW ? GW_H1_UPGRADED : 0);
	if (h->up_state == UP_RAW)
		f |= GW_H1_UPGRADED;
	if (!(h->cl_state == CL_HEAD && client_paused(h)))
		f |= GW_H1_READ_CLIENT;
	return f;
}
