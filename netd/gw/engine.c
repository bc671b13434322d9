/*
 * gw/engine - one gateway connection's HTTP engine, HTTP/1.x or HTTP/2
 * (netd/gw/engine.h): builds the request check's context from netd's
 * verdict, calls the engine of the protocol, and turns its records into
 * the "http" messages netd writes to the audit log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/reason.h"
#include "netd/gw/engine.h"
#include "netd/gw/h1.h"
#include "netd/gw/h2.h"
#include "netd/gw/rate.h"

struct gw_engine {
	struct gw_engine_conf conf;
	struct gw_req_ctx ctx;
	struct gw_h1 *h1;
	struct gw_h2 *h2;
	bool h2_done;		/* the HTTP/2 engine failed: flush and close */
	bool upstream_failed;
};

/*
 * A request's field (method, Host, path) as the sandbox sent it, into a
 * record's @size bytes: as it is when it is printable ASCII without a
 * backslash; otherwise as log_quote() writes it (\xHH), so that every
 * record is valid UTF-8 and a field is never cut inside a character.
 */
static void field(char *dst, size_t size, const char *src)
{
	const unsigned char *p = (const unsigned char *)(src ? src : "");
	size_t n = strlen((const char *)p);

	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] >= 0x7f || p[i] == '\\') {
			log_quote(p, n, dst, size);
			return;
		}
	snprintf(dst, size, "%s", (const char *)p);
}

/* The record both engines give, as the "http" message (netd/gw/ipc.h). */
static void record(struct gw_engine *e, const char *method, const char *host, const char *path,
		   unsigned int status, uint64_t in, uint64_t out, uint64_t start_ns,
		   uint64_t first_ns, uint64_t end_ns, const char *cred, const char *reason)
{
	struct gw_ipc_http h = { .rule = e->ctx.rule, .status = status,
				 .bytes_in = in, .bytes_out = out };
	char a[64];

	snprintf(h.sandbox, sizeof(h.sandbox), "%s", e->ctx.sandbox ? e->ctx.sandbox : "");
	snprintf(h.policy, sizeof(h.policy), "%s", e->ctx.policy ? e->ctx.policy : "");
	field(h.method, sizeof(h.method), method);
	field(h.host, sizeof(h.host), host);
	snprintf(h.sni, sizeof(h.sni), "%s", e->ctx.sni ? e->ctx.sni : "");
	field(h.path, sizeof(h.path), path);
	snprintf(h.cred, sizeof(h.cred), "%s", cred ? cred : "");
	snprintf(h.reason, sizeof(h.reason), "%s", reason ? reason : "");
	snprintf(h.proto, sizeof(h.proto), "%s", e->conf.h2 ? "h2" : "h1");
	if (addr_format(e->conf.dst, a, sizeof(a)))
		snprintf(h.upstream, sizeof(h.upstream), e->conf.dst->family == AF_INET6 ? "[%s]:%u"
										       : "%s:%u",
			 a, e->conf.port);
	h.duration_us = end_ns > start_ns ? (end_ns - start_ns) / 1000 : 0;
	h.ttfb_us = first_ns > start_ns ? (first_ns - start_ns) / 1000 : 0;
	e->conf.io->record(e->conf.arg, &h);
}

static int h1_to_client(void *user, const uint8_t *buf, size_t len)
{
	struct gw_engine *e = user;

	return e->conf.io->to_client(e->conf.arg, buf, len);
}

static int h1_to_upstream(void *user, const uint8_t *buf, size_t len)
{
	struct gw_engine *e = user;

	if (e->upstream_failed)
		return 0;	/* nobody to send to: the requests get the failure's status */
	return e->conf.io->to_upstream(e->conf.arg, buf, len);
}

static void h1_record(void *user, const struct gw_h1_record *r)
{
	record(user, r->method, r->host, r->path, r->status, r->request_bytes,
	       r->response_bytes, r->start_ns, r->first_byte_ns, r->end_ns, r->credential,
	       r->reason);
}

static void h2_record(void *user, const struct gw_h2_record *r)
{
	record(user, r->method, r->host, r->path, r->status, r->request_bytes,
	       r->response_bytes, r->start_ns, r->first_byte_ns, r->end_ns, r->credential,
	       r->reason);
}

static int h2_rate(void *user, uint64_t now_ns, uint32_t *retry_after_s)
{
	struct gw_engine *e = user;

	return gw_rate_take(e->conf.rate, e->ctx.sandbox, e->ctx.rule, e->ctx.rate_milli,
			    e->ctx.burst, now_ns / 1000000, retry_after_s);
}

static const struct gw_h1_ops h1_ops = {
	.to_client = h1_to_client, .to_upstream = h1_to_upstream, .record = h1_record,
};

static const struct gw_h2_ops h2_ops = {
	.to_client = h1_to_client, .to_upstream = h1_to_upstream, .rate_take = h2_rate,
	.record = h2_record,
};

struct gw_engine *gw_engine_new(const struct gw_engine_conf *conf)
{
	struct gw_engine *e = calloc(1, sizeof(*e));
	const struct gw_ipc_verdict *v = conf->v;

	if (!e)
		return NULL;
	e->conf = *conf;
	e->upstream_failed = conf->no_upstream;
	e->ctx = (struct gw_req_ctx){
		.sni = conf->sni, .sandbox = v->sandbox, .policy = v->policy, .rule = v->rule,
		.methods = (const char *const *)v->methods, .n_methods = v->n_methods,
		.paths = (const char *const *)v->paths, .n_paths = v->n_paths,
		.creds = v->creds, .n_creds = v->n_creds,
		.rate_milli = v->rate_milli, .burst = v->burst,
	};
	if (conf->h2) {
		e->h2 = gw_h2_new(&e->ctx, conf->port, &h2_ops, e, 0);
		if (!e->h2 || gw_h2_start(e->h2, 0) < 0) {
			gw_engine_free(e);
			return NULL;
		}
	} else if (!(e->h1 = gw_h1_new(&e->ctx, conf->port, conf->rate, &h1_ops, e))) {
		gw_engine_free(e);
		return NULL;
	}
	return e;
}

unsigned int gw_engine_flags(const struct gw_engine *e)
{
	unsigned int f = 0, h;

	if (e->h1) {
		h = gw_h1_flags(e->h1);
		if (h & GW_H1_READ_CLIENT)
			f |= GW_ENGINE_READ_CLIENT;
		if (h & GW_H1_DONE)
			f |= GW_ENGINE_DONE;
		return f;
	}
	if (e->h2_done || gw_h2_finished(e->h2))
		return GW_ENGINE_DONE;
	return GW_ENGINE_READ_CLIENT;
}

size_t gw_engine_from_client(struct gw_engine *e, const uint8_t *buf, size_t len, uint64_t now_ns)
{
	if (e->h1)
		return gw_h1_from_client(e->h1, buf, len, now_ns);
	if (!e->h2_done && gw_h2_from_client(e->h2, buf, len, now_ns) < 0)
		e->h2_done = true;
	return len;
}

void gw_engine_from_upstream(struct gw_engine *e, const uint8_t *buf, size_t len, uint64_t now_ns)
{
	if (e->h1)
		gw_h1_from_upstream(e->h1, buf, len, now_ns);
	else if (!e->h2_done && gw_h2_from_upstream(e->h2, buf, len, now_ns) < 0)
		e->h2_done = true;
}

void gw_engine_upstream_failed(struct gw_engine *e, unsigned int status, const char *reason,
			       uint64_t now_ns)
{
	e->upstream_failed = true;
	if (e->h1)
		gw_h1_upstream_error(e->h1, status, reason, now_ns);
	else if (gw_h2_upstream_failed(e->h2, status, reason, now_ns) < 0)
		e->h2_done = true;
}

void gw_engine_upstream_eof(struct gw_engine *e, uint64_t now_ns)
{
	if (e->h1)
		gw_h1_upstream_eof(e->h1, now_ns);
	else if (gw_h2_upstream_failed(e->h2, 502, reason_gw_name(REASON_GW_UPSTREAM_CLOSED),
				       now_ns) < 0)
		e->h2_done = true;
}

void gw_engine_client_eof(struct gw_engine *e, uint64_t now_ns)
{
	if (e->h1)
		gw_h1_client_eof(e->h1, now_ns);
	else
		e->h2_done = true;
}

void gw_engine_abort(struct gw_engine *e, const char *reason, uint64_t now_ns)
{
	if (e && e->h1)
		gw_h1_abort(e->h1, reason, now_ns);
}

void gw_engine_free(struct gw_engine *e)
{
	if (!e)
		return;
	gw_h1_free(e->h1);
	gw_h2_free(e->h2);
	free(e);
}
