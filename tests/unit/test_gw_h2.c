/*
 * test_gw_h2 - netd/gw/h2.c between two real nghttp2 sessions in memory: a
 * client session as the sandbox and a server session as the upstream, the
 * engine between them, bytes moved by pump() until all three are quiet.
 * GET, POST with a body, the credential's placeholder rewritten to the
 * secret on its host only (and never in a byte to the client), 421, 429
 * with retry-after, a streamed response coming out DATA by DATA, flow
 * control holding a slow reader's upstream back, two streams with one
 * refused, 502/504, rapid reset and CONTINUATION floods ending in GOAWAY.
 *
 * The request check is netd/gw/req.c's own (as the worker links it): the
 * rule allows the paths below (so /denied/x is refused), the credential
 * may go to SNI only (a connection elsewhere gets no value for it).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <nghttp2/nghttp2.h>

#include "netd/gw/h2.h"
#include "netd/gw/req.h"

#define SNI "api.example.test"
#define PLACEHOLDER "netd-placeholder-openai-0001"
#define SECRET "Bearer sk-THE-REAL-SECRET-42"

/* The rule's paths and the credential's hosts (netd.yaml's, via netd's verdict). */
static const char *const paths[] = { "/", "/v1/*", "/echo", "/stream", "/big", "/hang" };
static const char *const cred_hosts[] = { SNI };

/* ---- the world ------------------------------------------------------------ */

struct bytes {
	uint8_t *p;
	size_t len;
};

static void bytes_add(struct bytes *b, const uint8_t *p, size_t n)
{
	b->p = realloc(b->p, b->len + n + 1);
	assert_non_null(b->p);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

#define MAX_SID 2048

struct cl_stream {		/* what the sandbox got on one stream */
	unsigned int status;
	char reason[64], retry_after[16], ctype[64], echo[64];
	struct bytes body;
	unsigned int chunks;
	bool closed;
	uint32_t code;
	uint64_t wire_out, wire_in;	/* header block and DATA payload bytes each way */
};

struct up_stream {		/* what the upstream got, and what it sends */
	bool seen, complete;
	char method[16], path[256], authority[128], auth[256];
	struct bytes body;
	struct bytes out;	/* response body the test feeds */
	size_t out_off;
	bool out_eof, hang;
	uint64_t sent;
};

struct world {
	struct gw_req_ctx ctx;
	struct gw_cred cred;
	struct gw_h2 *h2;
	nghttp2_session *cl, *us;
	struct bytes to_cl, to_up, all_to_client;
	int client_rc, upstream_rc;
	bool rate_over;
	struct cl_stream cs[MAX_SID];
	struct up_stream ups[MAX_SID];
	bool goaway;
	uint32_t goaway_code;
	struct gw_h2_record rec[64];
	char rec_method[64][16], rec_path[64][256], rec_auth[64][128];
	size_t n_rec;
	uint64_t now;
};

static struct world *W;

static int op_to_client(void *user, const uint8_t *buf, size_t len)
{
	struct world *w = user;

	bytes_add(&w->to_cl, buf, len);
	bytes_add(&w->all_to_client, buf, len);
	return 0;
}

static int op_to_upstream(void *user, const uint8_t *buf, size_t len)
{
	bytes_add(&((struct world *)user)->to_up, buf, len);
	return 0;
}

static int op_rate(void *user, uint64_t now_ns, uint32_t *retry_after_s)
{
	struct world *w = user;

	if (!w->rate_over)
		return 0;
	*retry_after_s = 7;
	return -EAGAIN;
}

static void op_record(void *user, const struct gw_h2_record *r)
{
	struct world *w = user;
	size_t i = w->n_rec++;

	if (i >= 64)
		return;	/* counted, not kept */
	w->rec[i] = *r;
	snprintf(w->rec_method[i], 16, "%s", r->method);
	snprintf(w->rec_path[i], 256, "%s", r->path);
	snprintf(w->rec_auth[i], 128, "%s", r->host);
	w->rec[i].method = w->rec_method[i];
	w->rec[i].path = w->rec_path[i];
	w->rec[i].host = w->rec_auth[i];
}

static const struct gw_h2_ops ops = { op_to_client, op_to_upstream, op_rate, op_record };

/* -- the sandbox's client session */

static int cl_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
		     size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
	struct cl_stream *c = &W->cs[f->hd.stream_id];

	if (!strcmp((const char *)name, ":status"))
		c->status = (unsigned int)atoi((const char *)value);
	else if (!strcmp((const char *)name, "x-netd-reason"))
		snprintf(c->reason, sizeof(c->reason), "%s", value);
	else if (!strcmp((const char *)name, "retry-after"))
		snprintf(c->retry_after, sizeof(c->retry_after), "%s", value);
	else if (!strcmp((const char *)name, "content-type"))
		snprintf(c->ctype, sizeof(c->ctype), "%s", value);
	else if (!strcmp((const char *)name, "x-echo"))
		snprintf(c->echo, sizeof(c->echo), "%s", value);
	return 0;
}

static int cl_data(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *data,
		   size_t len, void *user)
{
	bytes_add(&W->cs[sid].body, data, len);
	W->cs[sid].chunks++;
	return 0;
}

static int cl_close(nghttp2_session *s, int32_t sid, uint32_t code, void *user)
{
	W->cs[sid].closed = true;
	W->cs[sid].code = code;
	return 0;
}

/*
 * What the client's session put on the wire for each stream and got: the
 * HEADERS/CONTINUATION payloads (a sent HEADERS frame's hd.length is its
 * whole block) and DATA bytes, the record's meaning of bytes.
 */
static int cl_sent(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	if (f->hd.type == NGHTTP2_HEADERS && f->hd.stream_id > 0 && f->hd.stream_id < MAX_SID)
		W->cs[f->hd.stream_id].wire_out += f->hd.length;
	return 0;
}

static int cl_begin(nghttp2_session *s, const nghttp2_frame_hd *hd, void *user)
{
	if ((hd->type == NGHTTP2_HEADERS || hd->type == NGHTTP2_CONTINUATION ||
	     hd->type == NGHTTP2_DATA) && hd->stream_id > 0 && hd->stream_id < MAX_SID)
		W->cs[hd->stream_id].wire_in += hd->length;	/* no padding in these tests */
	return 0;
}

static int cl_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	if (f->hd.type == NGHTTP2_GOAWAY) {
		W->goaway = true;
		W->goaway_code = f->goaway.error_code;
	}
	return 0;
}

/* -- the upstream's server session */

static ssize_t us_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
		       uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct up_stream *u = &W->ups[sid];
	size_t n = u->out.len - u->out_off;

	if (n > length)
		n = length;
	if (!n && !u->out_eof)
		return NGHTTP2_ERR_DEFERRED;
	if (n)
		memcpy(buf, u->out.p + u->out_off, n);
	u->out_off += n;
	u->sent += n;
	if (u->out_eof && u->out_off == u->out.len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static void us_respond(nghttp2_session *s, int32_t sid)
{
	struct up_stream *u = &W->ups[sid];
	nghttp2_nv nva[] = {
		{ (uint8_t *)":status", (uint8_t *)"200", 7, 3, 0 },
		{ (uint8_t *)"content-type", (uint8_t *)"text/plain", 12, 10, 0 },
		{ (uint8_t *)"x-echo", (uint8_t *)u->auth, 6, strlen(u->auth), 0 },
	};
	nghttp2_data_provider dp = { .read_callback = us_read };

	if (u->hang)
		return;
	if (!strcmp(u->path, "/v1/echo-auth")) {
		/* an upstream that shows the request's credential back, header and body */
		bytes_add(&u->out, (const uint8_t *)"auth=", 5);
		bytes_add(&u->out, (const uint8_t *)u->auth, strlen(u->auth));
		u->out_eof = true;
		assert_int_equal(nghttp2_submit_response(s, sid, nva, 3, &dp), 0);
		return;
	}
	if (!strcmp(u->path, "/echo")) {
		bytes_add(&u->out, u->body.p ? u->body.p : (const uint8_t *)"", u->body.len);
		u->out_eof = true;
	} else if (!strcmp(u->path, "/stream") || !strcmp(u->path, "/big")) {
		/* the test feeds it */
	} else {
		bytes_add(&u->out, (const uint8_t *)"hello", 5);
		u->out_eof = true;
	}
	assert_int_equal(nghttp2_submit_response(s, sid, nva, 2, &dp), 0);
}

static int us_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
		     size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
	struct up_stream *u = &W->ups[f->hd.stream_id];

	u->seen = true;
	if (!strcmp((const char *)name, ":method"))
		snprintf(u->method, sizeof(u->method), "%s", value);
	else if (!strcmp((const char *)name, ":path"))
		snprintf(u->path, sizeof(u->path), "%s", value);
	else if (!strcmp((const char *)name, ":authority"))
		snprintf(u->authority, sizeof(u->authority), "%s", value);
	else if (!strcmp((const char *)name, "authorization"))
		snprintf(u->auth, sizeof(u->auth), "%s", value);
	return 0;
}

static int us_data(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *data,
		   size_t len, void *user)
{
	bytes_add(&W->ups[sid].body, data, len);
	return 0;
}

static int us_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
	    (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
		W->ups[f->hd.stream_id].complete = true;
		us_respond(s, f->hd.stream_id);
	}
	return 0;
}

static nghttp2_session *session(bool server, bool manual_window)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	nghttp2_session *s;

	assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
	assert_int_equal(nghttp2_option_new(&opt), 0);
	nghttp2_option_set_no_auto_window_update(opt, manual_window);
	nghttp2_session_callbacks_set_on_header_callback(cb, server ? us_header : cl_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, server ? us_data : cl_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, server ? us_frame : cl_frame);
	if (!server) {
		nghttp2_session_callbacks_set_on_stream_close_callback(cb, cl_close);
		nghttp2_session_callbacks_set_on_frame_send_callback(cb, cl_sent);
		nghttp2_session_callbacks_set_on_begin_frame_callback(cb, cl_begin);
	}
	if (server)
		assert_int_equal(nghttp2_session_server_new2(&s, cb, NULL, opt), 0);
	else
		assert_int_equal(nghttp2_session_client_new2(&s, cb, NULL, opt), 0);
	assert_int_equal(nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0), 0);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	return s;
}

static struct world *world_new(const char *sni, bool cred_here, bool manual_client_window)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	W = w;
	w->cred = (struct gw_cred){ .name = "openai", .header = "authorization",
				    .placeholder = PLACEHOLDER,
				    .value = cred_here ? (const uint8_t *)SECRET : NULL,
				    .value_len = cred_here ? strlen(SECRET) : 0,
				    .secret_off = 7, .secret_len = cred_here ? strlen(SECRET) - 7 : 0,
				    .hosts = cred_hosts, .n_hosts = 1 };
	w->ctx = (struct gw_req_ctx){ .sni = sni, .sandbox = "sb1", .policy = "p.yaml",
				      .rule = 2, .paths = paths,
				      .n_paths = sizeof(paths) / sizeof(paths[0]),
				      .creds = &w->cred, .n_creds = 1 };
	w->now = 1000000000ull;
	w->h2 = gw_h2_new(&w->ctx, 443, &ops, w, w->now);
	assert_non_null(w->h2);
	w->cl = session(false, manual_client_window);
	w->us = session(true, false);
	assert_int_equal(gw_h2_start(w->h2, w->now), 0);
	return w;
}

/* Moves bytes between the three until nobody has anything to say. */
static void pump(struct world *w)
{
	bool moved;

	do {
		const uint8_t *data;
		ssize_t n;

		moved = false;
		while (w->client_rc == 0 && (n = nghttp2_session_mem_send(w->cl, &data)) > 0) {
			w->client_rc = gw_h2_from_client(w->h2, data, (size_t)n, w->now);
			moved = true;
		}
		if (w->to_up.len) {
			assert_int_equal(nghttp2_session_mem_recv(w->us, w->to_up.p, w->to_up.len),
					 (ssize_t)w->to_up.len);
			w->to_up.len = 0;
			moved = true;
		}
		while ((n = nghttp2_session_mem_send(w->us, &data)) > 0) {
			w->upstream_rc = gw_h2_from_upstream(w->h2, data, (size_t)n, w->now);
			moved = true;
		}
		if (w->to_cl.len) {
			assert_true(nghttp2_session_mem_recv(w->cl, w->to_cl.p, w->to_cl.len) >= 0);
			w->to_cl.len = 0;
			moved = true;
		}
	} while (moved);
}

static void world_free(struct world *w)
{
	/* the secret never reaches the sandbox, in any byte */
	if (w->all_to_client.len)
		assert_null(memmem(w->all_to_client.p, w->all_to_client.len, "sk-THE-REAL", 11));
	gw_h2_free(w->h2);
	nghttp2_session_del(w->cl);
	nghttp2_session_del(w->us);
	for (size_t i = 0; i < MAX_SID; i++) {
		free(w->cs[i].body.p);
		free(w->ups[i].body.p);
		free(w->ups[i].out.p);
	}
	free(w->to_cl.p);
	free(w->to_up.p);
	free(w->all_to_client.p);
	free(w);
}

/* -- requests from the sandbox */

struct body_src {
	const uint8_t *p;
	size_t len, off;
};

static ssize_t body_read(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
			 uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct body_src *b = src->ptr;
	size_t n = b->len - b->off < length ? b->len - b->off : length;

	memcpy(buf, b->p + b->off, n);
	b->off += n;
	if (b->off == b->len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int32_t request(struct world *w, const char *method, const char *authority,
		       const char *path, const char *auth, struct body_src *body)
{
	nghttp2_nv nva[5] = {
		{ (uint8_t *)":method", (uint8_t *)method, 7, strlen(method), 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"https", 7, 5, 0 },
		{ (uint8_t *)":authority", (uint8_t *)authority, 10, strlen(authority), 0 },
		{ (uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0 },
	};
	size_t n = 4;
	nghttp2_data_provider dp = { .source.ptr = body, .read_callback = body_read };
	int32_t sid;

	if (auth)
		nva[n++] = (nghttp2_nv){ (uint8_t *)"authorization", (uint8_t *)auth, 13,
					 strlen(auth), 0 };
	sid = nghttp2_submit_request(w->cl, NULL, nva, n, body ? &dp : NULL, NULL);
	assert_true(sid > 0 && sid < MAX_SID);
	return sid;
}

static const struct gw_h2_record *record_of(struct world *w, int32_t sid)
{
	for (size_t i = 0; i < w->n_rec && i < 64; i++)
		if (w->rec[i].stream_id == sid)
			return &w->rec[i];
	fail_msg("no record for stream %d", sid);
	return NULL;
}

/* ---- the tests ------------------------------------------------------------ */

static void test_get(void **state)
{
	struct world *w = world_new(SNI, true, false);
	int32_t sid = request(w, "GET", SNI, "/v1/models?limit=2&key=x", NULL, NULL);
	const struct gw_h2_record *r;

	pump(w);
	assert_int_equal(w->client_rc, 0);
	assert_int_equal(w->cs[sid].status, 200);
	assert_true(w->cs[sid].closed);
	assert_int_equal(w->cs[sid].code, 0);
	assert_int_equal(w->cs[sid].body.len, 5);
	assert_memory_equal(w->cs[sid].body.p, "hello", 5);
	assert_string_equal(w->ups[1].method, "GET");
	assert_string_equal(w->ups[1].path, "/v1/models?limit=2&key=x");
	assert_string_equal(w->ups[1].authority, SNI);
	r = record_of(w, sid);
	assert_string_equal(r->method, "GET");
	assert_string_equal(r->host, SNI);
	assert_string_equal(r->path, "/v1/models");	/* no query in the record */
	assert_int_equal(r->status, 200);
	/* bytes are head and body, as over HTTP/1: a GET's request is its HEADERS */
	assert_true(w->cs[sid].wire_out > 0);
	assert_int_equal(r->request_bytes, w->cs[sid].wire_out);
	assert_int_equal(r->response_bytes, w->cs[sid].wire_in);
	assert_true(r->response_bytes > 5);
	assert_null(r->reason);
	assert_null(r->credential);
	assert_false(r->refused);
	assert_true(r->start_ns && r->first_byte_ns >= r->start_ns && r->end_ns >= r->first_byte_ns);
	world_free(w);
}

/* A request head over one frame: HEADERS and CONTINUATION both count in its bytes. */
static void test_bytes_continuation(void **state)
{
	size_t len = 40000;
	char *big = malloc(len + 1);
	struct world *w;
	int32_t sid;

	assert_non_null(big);
	for (size_t i = 0; i < len; i++)
		big[i] = (char)('!' + (i * 31) % 90);	/* printable, HPACK's Huffman cannot halve it */
	big[len] = '\0';
	w = world_new(SNI, true, false);
	sid = request(w, "GET", SNI, "/v1/models", big, NULL);
	pump(w);
	assert_int_equal(w->cs[sid].status, 200);
	assert_true(w->cs[sid].wire_out > 16384);	/* past SETTINGS_MAX_FRAME_SIZE's default */
	assert_int_equal(record_of(w, sid)->request_bytes, w->cs[sid].wire_out);
	assert_int_equal(record_of(w, sid)->response_bytes, w->cs[sid].wire_in);
	world_free(w);
	free(big);
}

static void test_post_body(void **state)
{
	size_t len = 300 * 1024;	/* past every window on the way */
	uint8_t *data = malloc(len);
	struct body_src b = { data, len, 0 };
	struct world *w;
	int32_t sid;

	for (size_t i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 7 + i / 251);
	w = world_new(SNI, true, false);
	sid = request(w, "POST", SNI, "/echo", NULL, &b);
	pump(w);
	assert_int_equal(w->client_rc, 0);
	assert_int_equal(w->ups[1].body.len, len);
	assert_memory_equal(w->ups[1].body.p, data, len);
	assert_int_equal(w->cs[sid].status, 200);
	assert_int_equal(w->cs[sid].body.len, len);
	assert_memory_equal(w->cs[sid].body.p, data, len);
	assert_int_equal(record_of(w, sid)->request_bytes, w->cs[sid].wire_out + len);
	assert_int_equal(record_of(w, sid)->response_bytes, w->cs[sid].wire_in);
	assert_true(record_of(w, sid)->response_bytes > len);
	world_free(w);
	free(data);
}

static void test_credential_rewritten(void **state)
{
	struct world *w = world_new(SNI, true, false);
	int32_t sid = request(w, "GET", SNI, "/v1/models", "Bearer " PLACEHOLDER, NULL);

	pump(w);
	assert_int_equal(w->cs[sid].status, 200);
	assert_string_equal(w->ups[1].auth, SECRET);	/* the whole value replaced */
	assert_string_equal(record_of(w, sid)->credential, "openai");
	world_free(w);	/* and checks no byte to the client held it */
}

/* An upstream that echoes the secret: the sandbox gets it masked, in the header and the body. */
static void test_echo_masked(void **state)
{
	struct world *w = world_new(SNI, true, false);
	int32_t sid = request(w, "GET", SNI, "/v1/echo-auth", "Bearer " PLACEHOLDER, NULL);

	(void)state;
	pump(w);
	assert_string_equal(w->ups[1].auth, SECRET);
	assert_int_equal(w->cs[sid].status, 200);
	assert_string_equal(w->cs[sid].echo, "Bearer *********************");
	assert_int_equal(w->cs[sid].body.len, strlen("auth=" SECRET));
	assert_memory_equal(w->cs[sid].body.p, "auth=Bearer *********************",
			    strlen("auth=" SECRET));
	assert_true(w->cs[sid].closed);
	world_free(w);
}

static void test_credential_misdirected(void **state)
{
	/* another host: netd sent no value for this connection */
	struct world *w = world_new("other.example.test", false, false);
	int32_t sid = request(w, "GET", "other.example.test", "/", "Bearer " PLACEHOLDER, NULL);

	pump(w);
	assert_int_equal(w->cs[sid].status, 403);
	assert_string_equal(w->cs[sid].reason, "credential-misdirected");
	assert_string_equal(w->cs[sid].ctype, "application/json");
	assert_non_null(memmem(w->cs[sid].body.p, w->cs[sid].body.len, "credential-misdirected", 22));
	assert_false(w->ups[1].seen);	/* nothing went upstream */
	assert_string_equal(record_of(w, sid)->reason, "credential-misdirected");
	assert_string_equal(record_of(w, sid)->credential, "openai");
	assert_true(record_of(w, sid)->refused);
	/* req.c's body: the rule, and where the credential may go (its hosts) */
	assert_non_null(memmem(w->cs[sid].body.p, w->cs[sid].body.len,
			       "\"policy\":\"p.yaml\",\"rule\":2", 24));
	assert_non_null(memmem(w->cs[sid].body.p, w->cs[sid].body.len,
			       "authorization header to " SNI, strlen("authorization header to " SNI)));
	assert_null(memmem(w->cs[sid].body.p, w->cs[sid].body.len, PLACEHOLDER,
			   strlen(PLACEHOLDER)));
	world_free(w);
}

/* Checks only the real gw_req_check() makes, through the engine. */
static void test_request_checks(void **state)
{
	struct world *w = world_new(SNI, true, false);
	int32_t dots = request(w, "GET", SNI, "/v1/../denied", NULL, NULL);
	int32_t inpath = request(w, "GET", SNI, "/v1/x?key=" PLACEHOLDER, NULL, NULL);
	int32_t port = request(w, "GET", SNI ":443", "/v1/models", NULL, NULL);
	int32_t other_port = request(w, "GET", SNI ":8443", "/v1/models", NULL, NULL);

	pump(w);
	/* a dot segment under path rules: the upstream might resolve it elsewhere */
	assert_int_equal(w->cs[dots].status, 400);
	assert_string_equal(w->cs[dots].reason, "bad-request");
	/* the placeholder outside its header, even on its own host */
	assert_int_equal(w->cs[inpath].status, 403);
	assert_string_equal(w->cs[inpath].reason, "credential-misdirected");
	/* :authority with the connection's port is the SNI; another port is not */
	assert_int_equal(w->cs[port].status, 200);
	assert_int_equal(w->cs[other_port].status, 421);
	assert_int_equal(w->n_rec, 4);
	world_free(w);
}

static void test_misdirected_authority(void **state)
{
	struct world *w = world_new(SNI, true, false);
	int32_t sid = request(w, "GET", "other.allowed.test", "/v1/models", NULL, NULL);

	pump(w);
	assert_int_equal(w->cs[sid].status, 421);
	assert_string_equal(w->cs[sid].reason, "host-mismatch");
	assert_false(w->ups[1].seen);
	assert_int_equal(record_of(w, sid)->status, 421);
	world_free(w);
}

static void test_rate_limited(void **state)
{
	struct world *w = world_new(SNI, true, false);
	int32_t sid;

	w->rate_over = true;
	sid = request(w, "GET", SNI, "/v1/models", NULL, NULL);
	pump(w);
	assert_int_equal(w->cs[sid].status, 429);
	assert_string_equal(w->cs[sid].reason, "rate-limited");
	assert_string_equal(w->cs[sid].retry_after, "7");
	assert_non_null(memmem(w->cs[sid].body.p, w->cs[sid].body.len, "rate-limited", 12));
	assert_false(w->ups[1].seen);
	/* the connection goes on: the next request, under the rate, is forwarded */
	w->rate_over = false;
	sid = request(w, "GET", SNI, "/v1/models", NULL, NULL);
	pump(w);
	assert_int_equal(w->cs[sid].status, 200);
	world_free(w);
}

static void test_streamed_response(void **state)
{
	struct world *w = world_new(SNI, true, false);
	int32_t sid = request(w, "GET", SNI, "/stream", NULL, NULL);
	struct up_stream *u = &w->ups[1];
	const char *events[] = { "data: one\n\n", "data: two\n\n", "data: three\n\n" };
	size_t want = 0;

	pump(w);
	assert_int_equal(w->cs[sid].status, 200);
	assert_int_equal(w->cs[sid].chunks, 0);
	for (unsigned int i = 0; i < 3; i++) {
		bytes_add(&u->out, (const uint8_t *)events[i], strlen(events[i]));
		want += strlen(events[i]);
		assert_int_equal(nghttp2_session_resume_data(w->us, 1), 0);
		pump(w);
		/* each event is at the client as soon as it left the upstream */
		assert_int_equal(w->cs[sid].chunks, i + 1);
		assert_int_equal(w->cs[sid].body.len, want);
		assert_memory_equal(w->cs[sid].body.p + want - strlen(events[i]), events[i],
				    strlen(events[i]));
		assert_false(w->cs[sid].closed);
	}
	u->out_eof = true;
	assert_int_equal(nghttp2_session_resume_data(w->us, 1), 0);
	pump(w);
	assert_true(w->cs[sid].closed);
	assert_int_equal(w->cs[sid].code, 0);
	world_free(w);
}

static void test_slow_reader(void **state)
{
	/* the sandbox reads nothing (never consumes): the upstream is held back */
	struct world *w = world_new(SNI, true, true);
	int32_t sid = request(w, "GET", SNI, "/big", NULL, NULL);
	struct up_stream *u = &w->ups[1];
	static uint8_t mib[1 << 20];

	pump(w);
	bytes_add(&u->out, mib, sizeof(mib));
	u->out_eof = true;
	assert_int_equal(nghttp2_session_resume_data(w->us, 1), 0);
	pump(w);
	/* the client's window (65535) plus what the engine may hold (its window) */
	assert_true(u->sent <= 65535 + GW_H2_STREAM_WINDOW);
	assert_true(w->cs[sid].body.len <= 65535);
	assert_true(w->cs[sid].body.len > 0);
	/* the sandbox reads: everything flows, a window at a time */
	for (size_t consumed = 0; !w->cs[sid].closed;) {
		size_t before = u->sent, had = w->cs[sid].body.len;

		assert_int_equal(nghttp2_session_consume(w->cl, sid, had - consumed), 0);
		consumed = had;
		pump(w);
		assert_true(u->sent > before || w->cs[sid].body.len > had || w->cs[sid].closed);
	}
	assert_int_equal(w->cs[sid].body.len, sizeof(mib));
	assert_int_equal(u->sent, sizeof(mib));
	world_free(w);
}

static void test_two_streams_one_refused(void **state)
{
	struct world *w = world_new(SNI, true, false);
	struct body_src b = { (const uint8_t *)"{\"q\":1}", 7, 0 };
	int32_t ok = request(w, "POST", SNI, "/echo", NULL, &b);
	int32_t no = request(w, "GET", SNI, "/denied/x", NULL, NULL);

	pump(w);
	assert_int_equal(w->client_rc, 0);
	assert_int_equal(w->cs[ok].status, 200);
	assert_int_equal(w->cs[ok].body.len, 7);
	assert_int_equal(w->cs[no].status, 403);
	assert_string_equal(w->cs[no].reason, "path-denied");
	/* the body names the paths the rule allows */
	assert_non_null(memmem(w->cs[no].body.p, w->cs[no].body.len, "allows only the paths /, /v1/*",
			       strlen("allows only the paths /, /v1/*")));
	assert_true(w->cs[ok].closed && w->cs[no].closed);
	assert_false(w->goaway);
	assert_int_equal(w->n_rec, 2);
	world_free(w);
}

static void test_upstream_failed(void **state)
{
	for (int timeout = 0; timeout < 2; timeout++) {
		struct world *w = world_new(SNI, true, false);
		int32_t sid;

		sid = request(w, "GET", SNI, "/hang", NULL, NULL);
		w->ups[1].hang = true;
		pump(w);
		assert_true(w->ups[1].complete);
		assert_false(w->cs[sid].closed);
		assert_int_equal(gw_h2_upstream_failed(w->h2, timeout ? 504 : 502,
						       timeout ? "upstream-timeout" : "upstream-failure",
						       w->now), 0);
		pump(w);
		assert_int_equal(w->cs[sid].status, timeout ? 504 : 502);
		assert_string_equal(w->cs[sid].reason, timeout ? "upstream-timeout"
							       : "upstream-failure");
		assert_true(w->goaway);
		assert_int_equal(w->goaway_code, NGHTTP2_NO_ERROR);
		assert_true(gw_h2_finished(w->h2) || !w->cs[sid].closed);
		world_free(w);
	}
}

static void test_rapid_reset(void **state)
{
	struct world *w = world_new(SNI, true, false);
	int i;

	for (i = 0; i < 1000 && w->client_rc == 0; i++) {
		int32_t sid = request(w, "GET", SNI, "/hang", NULL, NULL);

		w->ups[sid].hang = true;
		pump(w);	/* the HEADERS out (nghttp2 drops a request reset before) */
		assert_int_equal(nghttp2_submit_rst_stream(w->cl, NGHTTP2_FLAG_NONE, sid,
							   NGHTTP2_CANCEL), 0);
		pump(w);
	}
	pump(w);
	assert_int_equal(w->client_rc, -EPROTO);
	assert_true(w->goaway);
	assert_int_equal(w->goaway_code, NGHTTP2_ENHANCE_YOUR_CALM);
	assert_true(i <= GW_H2_MAX_RST_PER_S + 20);
	assert_true(gw_h2_finished(w->h2));
	assert_int_equal(w->n_rec, (size_t)i);	/* one record a stream */
	world_free(w);	/* nothing leaked */
}

/* A frame header (RFC 9113 4.1). */
static void frame(struct bytes *b, size_t len, uint8_t type, uint8_t flags, uint32_t sid)
{
	uint8_t h[9] = { (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, type, flags,
			 (uint8_t)(sid >> 24), (uint8_t)(sid >> 16), (uint8_t)(sid >> 8),
			 (uint8_t)sid };

	bytes_add(b, h, 9);
}

static void test_continuation_flood(void **state)
{
	struct world *w = world_new(SNI, true, false);
	/* literal without indexing, new name (RFC 7541 6.2.2): "x-a: b" */
	static const uint8_t field[] = { 0x00, 3, 'x', '-', 'a', 1, 'b' };
	static const uint8_t get[] = { 0x82, 0x87, 0x84 };	/* GET, https, / */
	struct bytes raw = { 0 };

	pump(w);	/* the preface and SETTINGS, from the client session */
	frame(&raw, sizeof(get), NGHTTP2_HEADERS, NGHTTP2_FLAG_END_STREAM, 1);
	bytes_add(&raw, get, sizeof(get));
	for (int i = 0; i < 1000; i++) {
		frame(&raw, sizeof(field), NGHTTP2_CONTINUATION, 0, 1);
		bytes_add(&raw, field, sizeof(field));
	}
	w->client_rc = gw_h2_from_client(w->h2, raw.p, raw.len, w->now);
	assert_int_equal(w->client_rc, -EPROTO);
	pump(w);
	assert_true(w->goaway);
	assert_int_not_equal(w->goaway_code, NGHTTP2_NO_ERROR);
	assert_false(w->ups[1].seen);
	assert_true(gw_h2_finished(w->h2));
	free(raw.p);
	world_free(w);
}

static void test_bad_frame(void **state)
{
	struct world *w = world_new(SNI, true, false);
	struct bytes raw = { 0 };
	static const uint8_t junk[8] = { 0 };

	pump(w);
	frame(&raw, sizeof(junk), NGHTTP2_DATA, 0, 0);	/* DATA on stream 0: PROTOCOL_ERROR */
	bytes_add(&raw, junk, sizeof(junk));
	w->client_rc = gw_h2_from_client(w->h2, raw.p, raw.len, w->now);
	assert_int_equal(w->client_rc, -EPROTO);
	pump(w);
	assert_true(w->goaway);
	assert_int_equal(w->goaway_code, NGHTTP2_PROTOCOL_ERROR);
	free(raw.p);
	world_free(w);
}

static void test_connect_refused(void **state)
{
	struct world *w = world_new(SNI, true, false);
	nghttp2_nv nva[] = {
		{ (uint8_t *)":method", (uint8_t *)"CONNECT", 7, 7, 0 },
		{ (uint8_t *)":authority", (uint8_t *)SNI ":443", 10, strlen(SNI ":443"), 0 },
	};
	int32_t sid = nghttp2_submit_request(w->cl, NULL, nva, 2, NULL, NULL);

	pump(w);
	assert_int_equal(w->cs[sid].status, 405);
	assert_string_equal(w->cs[sid].reason, "method-denied");
	assert_false(w->ups[1].seen);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_bytes_continuation),
		cmocka_unit_test(test_post_body),
		cmocka_unit_test(test_credential_rewritten),
		cmocka_unit_test(test_echo_masked),
		cmocka_unit_test(test_credential_misdirected),
		cmocka_unit_test(test_misdirected_authority),
		cmocka_unit_test(test_request_checks),
		cmocka_unit_test(test_rate_limited),
		cmocka_unit_test(test_streamed_response),
		cmocka_unit_test(test_slow_reader),
		cmocka_unit_test(test_two_streams_one_refused),
		cmocka_unit_test(test_upstream_failed),
		cmocka_unit_test(test_rapid_reset),
		cmocka_unit_test(test_continuation_flood),
		cmocka_unit_test(test_bad_frame),
		cmocka_unit_test(test_connect_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
