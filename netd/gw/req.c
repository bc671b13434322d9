/*
 * gw/req - the gateway's check of one HTTP request, shared by the HTTP/1.x
 * and HTTP/2 engines (netd/gw/req.h says what is decided and why), and the
 * JSON body of a refusal.  Pure: no allocation, no I/O, no clock; the rate
 * is netd/gw/rate.c's.  Never copies a credential's value anywhere.
 */
#include "netd/gw/req.h"

#include "common/reason.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool eq_nocase(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

/* @s, @n with the optional whitespace around a field value dropped (RFC 9110 5.5). */
static void trim_ows(const char **s, size_t *n)
{
	while (*n && is_ows(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && is_ows((*s)[*n - 1]))
		(*n)--;
}

static bool is_host_header(const struct gw_hdr *h)
{
	return eq_nocase(h->name, h->name_len, "host", 4);
}

bool gw_req_field_dropped(const struct gw_req_result *res, const char *name, size_t name_len,
			  const char *value, size_t value_len)
{
	if (!res->n_rewrites)
		return false;
	if (eq_nocase(name, name_len, GW_REQ_IDENTITY_NAME, strlen(GW_REQ_IDENTITY_NAME)) ||
	    eq_nocase(name, name_len, "sec-websocket-extensions", 24))
		return true;
	if (!eq_nocase(name, name_len, "te", 2))
		return false;
	trim_ows(&value, &value_len);
	return !eq_nocase(value, value_len, "trailers", 8);
}

void gw_req_result_set(struct gw_req_result *res, enum gw_req_verdict verdict,
		       unsigned int status, const char *reason)
{
	static const struct {
		unsigned int status;
		enum reason_gw reason;
	} tab[] = {
		[GW_REQ_OK] = { 0, REASON_GW_OTHER },	/* no reason: NULL */
		[GW_REQ_MISDIRECTED] = { 421, REASON_GW_HOST_MISMATCH },
		[GW_REQ_METHOD] = { 403, REASON_GW_METHOD_DENIED },
		[GW_REQ_PATH] = { 403, REASON_GW_PATH_DENIED },
		[GW_REQ_RATE] = { 429, REASON_GW_RATE_LIMITED },
		[GW_REQ_CRED_MISDIRECTED] = { 403, REASON_GW_CREDENTIAL_MISDIRECTED },
		[GW_REQ_BAD] = { 400, REASON_GW_BAD_REQUEST },
		[GW_REQ_UPSTREAM] = { 502, REASON_GW_UPSTREAM_FAILURE },
	};

	memset(res, 0, sizeof(*res));
	res->verdict = verdict;
	res->status = tab[verdict].status;
	res->reason = verdict == GW_REQ_OK ? NULL : reason_gw_name(tab[verdict].reason);
	if (verdict == GW_REQ_UPSTREAM) {
		if (status)
			res->status = status;
		if (reason)
			res->reason = reason;
	}
}

/*
 * The authority against the SNI and the connection's port (RFC 9110 7.2:
 * uri-host [":" port]).  Return: GW_REQ_OK, GW_REQ_BAD (empty) or
 * GW_REQ_MISDIRECTED.
 */
static enum gw_req_verdict check_authority(const struct gw_req_ctx *ctx, const char *a,
					   size_t n, uint16_t port)
{
	const char *colon;
	size_t host_len;

	trim_ows(&a, &n);
	if (n == 0)
		return GW_REQ_BAD;
	colon = memchr(a, ':', n);
	host_len = colon ? (size_t)(colon - a) : n;
	if (!ctx->sni || !eq_nocase(a, host_len, ctx->sni, strlen(ctx->sni)))
		return GW_REQ_MISDIRECTED;
	if (colon) {
		const char *p = colon + 1;
		size_t plen = n - host_len - 1;
		uint32_t v = 0;

		/* an empty port (RFC 3986 3.2.3 allows one) or leading zeros: not ours */
		if (plen == 0 || plen > 5 || p[0] == '0')
			return GW_REQ_MISDIRECTED;
		for (size_t i = 0; i < plen; i++) {
			if (p[i] < '0' || p[i] > '9')
				return GW_REQ_MISDIRECTED;
			v = v * 10 + (uint32_t)(p[i] - '0');
		}
		if (v != port)
			return GW_REQ_MISDIRECTED;
	}
	return GW_REQ_OK;
}

/* Origin-form (RFC 9112 3.2.1): '/' then visible ASCII, no fragment. */
static bool origin_form(const char *p, size_t n)
{
	if (n == 0 || p[0] != '/')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c <= 0x20 || c >= 0x7f || c == '#')
			return false;
	}
	return true;
}

/*
 * Does the path (query already cut) hold something an upstream may decode or
 * normalize into another path than the rule compared?  Dot segments, also
 * with ";params" (Tomcat's "/..;/"), percent-encoded '.', '/', '\' and '\'.
 */
static bool traversal(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\')
			return true;
		if (p[i] == '%' && i + 2 < n) {
			char a = p[i + 1], b = lower(p[i + 2]);

			if ((a == '2' && (b == 'e' || b == 'f')) || (a == '5' && b == 'c'))
				return true;
		}
		if (p[i] == '/') {
			size_t j = i + 1, k;

			for (k = j; k < n && p[k] != '/' && p[k] != ';'; k++)
				;
			if ((k - j == 1 && p[j] == '.') || (k - j == 2 && p[j] == '.' && p[j + 1] == '.'))
				return true;
		}
	}
	return false;
}

static bool path_allowed(const struct gw_req_ctx *ctx, const char *p, size_t n)
{
	if (!ctx->paths || !ctx->n_paths)
		return true;
	for (size_t i = 0; i < ctx->n_paths; i++) {
		const char *pat = ctx->paths[i];
		size_t plen = strlen(pat);

		if (plen && pat[plen - 1] == '*') {
			if (n >= plen - 1 && memcmp(p, pat, plen - 1) == 0)
				return true;
		} else if (n == plen && memcmp(p, pat, n) == 0) {
			return true;
		}
	}
	return false;
}

static bool method_allowed(const struct gw_req_ctx *ctx, const char *m, size_t n)
{
	if (!ctx->methods || !ctx->n_methods)
		return true;
	for (size_t i = 0; i < ctx->n_methods; i++)
		if (strlen(ctx->methods[i]) == n && memcmp(ctx->methods[i], m, n) == 0)
			return true;
	return false;
}

/*
 * Placeholders: every header value, the path and query.  Return the first
 * credential misdirected, or NULL; rewrites go into @res (at most one per
 * header, at most GW_REQ_MAX_CREDS: past that the request is refused as
 * misdirected too, since the engine could not replace them all).
 */
static const struct gw_cred *find_placeholders(const struct gw_req_ctx *ctx, const char *path,
					       size_t path_len, const struct gw_hdr *hdrs,
					       size_t n, struct gw_req_result *res)
{
	for (size_t c = 0; c < ctx->n_creds; c++) {
		const struct gw_cred *cred = &ctx->creds[c];
		size_t plen = cred->placeholder ? strlen(cred->placeholder) : 0;

		if (plen == 0)
			continue;
		if (memmem(path, path_len, cred->placeholder, plen))
			return cred;
		for (size_t i = 0; i < n; i++) {
			bool rewritten = false;

			if (!memmem(hdrs[i].value, hdrs[i].value_len, cred->placeholder, plen))
				continue;
			if (!cred->value || !cred->header ||
			    !eq_nocase(hdrs[i].name, hdrs[i].name_len, cred->header,
				       strlen(cred->header)))
				return cred;
			for (size_t r = 0; r < res->n_rewrites; r++)
				if (res->rewrites[r].index == i)
					rewritten = true;
			/* one header, two credentials: only one value can replace it */
			if (rewritten || res->n_rewrites == GW_REQ_MAX_CREDS)
				return cred;
			res->rewrites[res->n_rewrites].index = i;
			res->rewrites[res->n_rewrites].cred = cred;
			res->n_rewrites++;
		}
	}
	return NULL;
}

/* The authority to check: :authority (HTTP/2) or the one Host. GW_REQ_BAD if ambiguous. */
static enum gw_req_verdict pick_authority(const char **a, size_t *alen, const struct gw_hdr *hdrs,
					  size_t n)
{
	const struct gw_hdr *host = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!is_host_header(&hdrs[i]))
			continue;
		if (host)
			return GW_REQ_BAD;	/* RFC 9112 3.2: exactly one Host */
		host = &hdrs[i];
	}
	if (*a) {
		if (host && (host->value_len != *alen || memcmp(host->value, *a, *alen) != 0))
			return GW_REQ_BAD;
		return GW_REQ_OK;
	}
	if (!host)
		return GW_REQ_BAD;
	*a = host->value;
	*alen = host->value_len;
	return GW_REQ_OK;
}

void gw_req_check(const struct gw_req_ctx *ctx, const char *method, size_t method_len,
		  const char *authority, size_t authority_len, uint16_t port,
		  const char *path, size_t path_len, const struct gw_hdr *hdrs, size_t n,
		  struct gw_req_result *res)
{
	const char *q;
	size_t plen;
	const struct gw_cred *bad;
	enum gw_req_verdict v;

	gw_req_result_set(res, GW_REQ_OK, 0, NULL);
	if (!origin_form(path, path_len)) {
		gw_req_result_set(res, GW_REQ_BAD, 0, NULL);
		return;
	}
	q = memchr(path, '?', path_len);
	plen = q ? (size_t)(q - path) : path_len;
	if (ctx->paths && ctx->n_paths && traversal(path, plen)) {
		gw_req_result_set(res, GW_REQ_BAD, 0, NULL);
		return;
	}
	v = pick_authority(&authority, &authority_len, hdrs, n);
	if (v == GW_REQ_OK)
		v = check_authority(ctx, authority, authority_len, port);
	if (v != GW_REQ_OK) {
		gw_req_result_set(res, v, 0, NULL);
		return;
	}
	bad = find_placeholders(ctx, path, path_len, hdrs, n, res);
	/*
	 * A TRACE is answered with the request as the server received it
	 * (RFC 9110 9.3.8, which says not to send credentials in one): the
	 * secret we put in would come back to the sandbox.
	 */
	if (!bad && res->n_rewrites && method_len == 5 && memcmp(method, "TRACE", 5) == 0)
		bad = res->rewrites[0].cred;
	if (bad) {
		gw_req_result_set(res, GW_REQ_CRED_MISDIRECTED, 0, NULL);
		res->cred = bad;
		res->cred_name = bad->name;
		return;
	}
	if (!method_allowed(ctx, method, method_len))
		v = GW_REQ_METHOD;
	else if (!path_allowed(ctx, path, plen))
		v = GW_REQ_PATH;
	if (v != GW_REQ_OK) {
		gw_req_result_set(res, v, 0, NULL);
		return;
	}
	if (res->n_rewrites) {
		res->cred = res->rewrites[0].cred;
		res->cred_name = res->cred->name;
	}
}

/* ---- the refusal's body ------------------------------------------------ */

/* A bounded string writer: never past @size - 1, always NUL-terminated. */
struct out {
	char *buf;
	size_t size, len;
};

static void out_raw(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && o->len + 1 < o->size; i++)
		o->buf[o->len++] = s[i];
	if (o->size)
		o->buf[o->len] = '\0';
}

static void out_str(struct out *o, const char *s)
{
	out_raw(o, s, strlen(s));
}

/* @s as a JSON string (RFC 8259 7), at most @cap bytes of it. */
static void out_json(struct out *o, const char *s, size_t cap)
{
	out_raw(o, "\"", 1);
	for (size_t i = 0; s && s[i] && i < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			out_raw(o, esc, 2);
		} else if (c < 0x20 || c >= 0x7f) {
			/* non-ASCII too: a name cut at @cap never splits a UTF-8 sequence badly */
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			out_raw(o, esc, 6);
		} else {
			out_raw(o, (const char *)&s[i], 1);
		}
	}
	out_raw(o, "\"", 1);
}

/* Append "a, b, c" of @list to the message @m (bounded by its size). */
static void msg_list(struct out *m, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			out_str(m, ", ");
		out_str(m, list[i]);
	}
}

/*
 * A 502/504's message by its reason (docs/audit.md's gateway reasons): what
 * failed and whether a retry can help.  Only a request that never reached
 * the upstream, or one safe to repeat (RFC 9110 9.2.2), may be retried.
 */
static void upstream_message(const char *sni, const char *reason, struct out *m)
{
	switch (reason_gw_of(reason ? reason : "")) {
	case REASON_GW_UPSTREAM_UNTRUSTED:
		out_str(m, "the upstream's certificate is not trusted by the gateway "
			   "(gateway.upstream_ca_file, or the system store); retrying will not "
			   "help");
		break;
	case REASON_GW_UPSTREAM_TLS:
		out_str(m, "the TLS handshake with ");
		out_str(m, sni);
		out_str(m, " failed (no protocol version or cipher in common, or a TLS "
			   "error); retrying will not help");
		break;
	case REASON_GW_UPSTREAM_CONNECT:
		out_str(m, "the gateway could not open a TCP connection to ");
		out_str(m, sni);
		out_str(m, " (refused or unreachable); the request never reached it and may "
			   "be retried later");
		break;
	case REASON_GW_UPSTREAM_TIMEOUT:
		out_str(m, "the gateway got no connection to ");
		out_str(m, sni);
		out_str(m, " within gateway.connect_timeout; the request may be retried");
		break;
	case REASON_GW_UPSTREAM_CLOSED:
		out_str(m, sni);
		out_str(m, " closed the connection before its answer was whole; retry only "
			   "a request that is safe to repeat (RFC 9110 9.2.2)");
		break;
	default:	/* upstream-failure: it broke HTTP/2 or reset the stream */
		out_str(m, "the gateway could not get an answer from ");
		out_str(m, sni);
		out_str(m, " (it broke the HTTP exchange); retry only a request that is safe "
			   "to repeat (RFC 9110 9.2.2)");
		break;
	}
}

/* What happened, for the agent; from the config and policy only. */
static void message(const struct gw_req_ctx *ctx, const struct gw_req_result *res, struct out *m)
{
	const char *sni = ctx->sni ? ctx->sni : "";

	switch (res->verdict) {
	case GW_REQ_MISDIRECTED:
		out_str(m, "this connection was opened to ");
		out_str(m, sni);
		out_str(m, ": the Host header (or :authority) must name it; open a connection "
			   "to the other name instead");
		break;
	case GW_REQ_METHOD:
		out_str(m, "this rule allows only the methods ");
		msg_list(m, ctx->methods, ctx->n_methods);
		break;
	case GW_REQ_PATH:
		out_str(m, "this rule allows only the paths ");
		msg_list(m, ctx->paths, ctx->n_paths);
		break;
	case GW_REQ_RATE:
		out_str(m, "this sandbox is over the rule's request rate; retry after the "
			   "Retry-After header's seconds");
		break;
	case GW_REQ_CRED_MISDIRECTED:
		out_str(m, "the placeholder of credential ");
		out_str(m, res->cred_name ? res->cred_name : "?");
		out_str(m, " was sent where it is never replaced; it may only be sent in its ");
		out_str(m, res->cred && res->cred->header ? res->cred->header : "own");
		out_str(m, " header");
		if (res->cred && res->cred->hosts && res->cred->n_hosts) {
			out_str(m, " to ");
			msg_list(m, res->cred->hosts, res->cred->n_hosts);
		}
		out_str(m, ", never in a TRACE (RFC 9110 9.3.8: the server sends it back)");
		break;
	case GW_REQ_BAD:
		out_str(m, "the request is malformed or ambiguous (RFC 9110, RFC 9112): one Host "
			   "equal to the connection's name, an origin-form target without dot "
			   "segments or encoded slashes, unambiguous framing");
		break;
	case GW_REQ_UPSTREAM:
		upstream_message(sni, res->reason, m);
		break;
	case GW_REQ_OK:
		break;
	}
}

size_t gw_req_refusal(const struct gw_req_ctx *ctx, const struct gw_req_result *res,
		      char *buf, size_t size)
{
	struct out o = { buf, size, 0 };
	char msgbuf[513], num[24];
	struct out m = { msgbuf, sizeof(msgbuf), 0 };

	if (size == 0)
		return 0;
	message(ctx, res, &m);
	out_str(&o, "{\"error\":");
	out_json(&o, res->reason ? res->reason : reason_gw_name(REASON_GW_BAD_REQUEST), 64);
	snprintf(num, sizeof(num), "%u", res->status);
	out_str(&o, ",\"status\":");
	out_str(&o, num);
	out_str(&o, ",\"sandbox\":");
	out_json(&o, ctx->sandbox, 128);
	out_str(&o, ",\"policy\":");
	out_json(&o, ctx->policy, 128);
	snprintf(num, sizeof(num), "%d", ctx->rule);
	out_str(&o, ",\"rule\":");
	out_str(&o, num);
	out_str(&o, ",\"message\":");
	out_json(&o, msgbuf, 512);
	out_str(&o, ",\"docs\":\"docs/gateway.md\"}");
	return o.len;
}
