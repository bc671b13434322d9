/*
 * gw/ipc - the messages between netd and its gateway worker, as JSON
 * (netd/gw/ipc.h).  Pure.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "netd/gw/ipc.h"

static void *wipe_malloc(size_t n)
{
	return malloc(n);
}

static void wipe_free(void *p)
{
	if (!p)
		return;
	explicit_bzero(p, malloc_usable_size(p));
	free(p);
}

void gw_ipc_wipe_allocators(void)
{
	json_set_alloc_funcs(wipe_malloc, wipe_free);
}

/* @root as compact JSON in a new buffer; checks the size. */
static int finish(json_t *root, char **out, size_t *len)
{
	char *s;
	size_t n;

	if (!root)
		return -ENOMEM;
	s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	if (n > GW_IPC_MAX) {
		explicit_bzero(s, n);
		free(s);
		return -EMSGSIZE;
	}
	*out = s;
	if (len)
		*len = n;
	return 0;
}

static json_t *jaddr(const struct addr *a)
{
	char buf[64];

	return json_string(addr_format(a, buf, sizeof(buf)) ? buf : "");
}

int gw_ipc_encode_ask(const struct gw_ipc_ask *a, char **out, size_t *len)
{
	return finish(json_pack("{s:s, s:I, s:o, s:i, s:o, s:i, s:s, s:i}", "t", "conn",
				"id", (json_int_t)a->id, "src", jaddr(&a->src), "sport", a->sport,
				"dst", jaddr(&a->dst), "dport", a->dport, "sni", a->sni,
				"alpn", (int)a->alpn), out, len);
}

static json_t *jstrs(const char *const *v, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		if (json_array_append_new(arr, json_string(v[i])) < 0) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

/* [offset, length] of @c's secret inside its value (netd/gw/scrub.h). */
static json_t *jspan(const struct gw_cred *c)
{
	return json_pack("[I, I]", (json_int_t)c->secret_off, (json_int_t)c->secret_len);
}

/*
 * The span jspan() wrote, checked against @c's value into @c; absent: none
 * (nothing to look for).  Return: false if malformed or outside the value.
 */
static bool get_span(const json_t *o, struct gw_cred *c)
{
	const json_t *a = json_object_get(o, "secret");
	json_int_t off, len;

	c->secret_off = c->secret_len = 0;
	if (!a)
		return true;
	if (!json_is_array(a) || json_array_size(a) != 2 ||
	    !json_is_integer(json_array_get(a, 0)) || !json_is_integer(json_array_get(a, 1)))
		return false;
	off = json_integer_value(json_array_get(a, 0));
	len = json_integer_value(json_array_get(a, 1));
	if (off < 0 || len < 0 || (uint64_t)off > c->value_len ||
	    (uint64_t)len > c->value_len - (uint64_t)off)
		return false;
	c->secret_off = (size_t)off;
	c->secret_len = (size_t)len;
	return true;
}

static json_t *jcreds(const struct gw_cred *c, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:o}", "name", c[i].name, "header",
				      c[i].header, "placeholder", c[i].placeholder,
				      "hosts", jstrs(c[i].hosts, c[i].n_hosts));

		if (o && c[i].value &&
		    (json_object_set_new(o, "value", json_stringn((const char *)c[i].value,
								  c[i].value_len)) < 0 ||
		     json_object_set_new(o, "secret", jspan(&c[i])) < 0)) {
			json_decref(o);
			o = NULL;
		}
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static const char *const verdict_words[] = {
	[GW_IPC_REFUSE] = "refuse", [GW_IPC_PASS] = "pass", [GW_IPC_GATEWAY] = "gateway",
};

int gw_ipc_encode_verdict(const struct gw_ipc_verdict *v, char **out, size_t *len)
{
	json_t *o = json_pack("{s:s, s:I, s:s, s:i}", "t", "conn", "id", (json_int_t)v->id,
			      "verdict", verdict_words[v->verdict], "rule", v->rule);
	int bad = 0;	/* a member not set (out of memory, a string not UTF-8): no message */

	if (!o)
		return -ENOMEM;
	if (v->reason)
		bad |= json_object_set_new(o, "reason", json_string(v->reason));
	if (v->sandbox)
		bad |= json_object_set_new(o, "sandbox", json_string(v->sandbox));
	if (v->policy)
		bad |= json_object_set_new(o, "policy", json_string(v->policy));
	if (v->verdict == GW_IPC_GATEWAY) {
		bad |= json_object_set_new(o, "cert", json_string(v->cert_pem ? v->cert_pem : ""));
		bad |= json_object_set_new(o, "key", json_string(v->key_pem ? v->key_pem : ""));
		bad |= json_object_set_new(o, "methods",
					   jstrs((const char *const *)v->methods, v->n_methods));
		bad |= json_object_set_new(o, "paths",
					   jstrs((const char *const *)v->paths, v->n_paths));
		bad |= json_object_set_new(o, "rate_milli", json_integer(v->rate_milli));
		bad |= json_object_set_new(o, "burst", json_integer(v->burst));
		bad |= json_object_set_new(o, "creds", jcreds(v->creds, v->n_creds));
	}
	if (bad) {
		json_decref(o);	/* the wiping allocator clears what it held */
		return -ENOMEM;
	}
	return finish(o, out, len);
}

int gw_ipc_encode_config(const struct gw_ipc_config *c, char **out, size_t *len)
{
	return finish(json_pack("{s:s, s:I, s:I}", "t", "config",
				"connect_timeout_ms", (json_int_t)c->connect_timeout_ms,
				"idle_timeout_ms", (json_int_t)c->idle_timeout_ms), out, len);
}

int gw_ipc_encode_http(const struct gw_ipc_http *h, char **out, size_t *len)
{
	return finish(json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:I,"
				" s:I, s:s, s:s, s:s, s:s}", "t", "http",
				"sandbox", h->sandbox, "policy", h->policy, "rule", h->rule,
				"method", h->method, "host", h->host, "sni", h->sni, "path", h->path,
				"status", (int)h->status, "bytes_in", (json_int_t)h->bytes_in,
				"bytes_out", (json_int_t)h->bytes_out,
				"duration_us", (json_int_t)h->duration_us,
				"ttfb_us", (json_int_t)h->ttfb_us, "cred", h->cred,
				"reason", h->reason, "upstream", h->upstream, "proto", h->proto),
		      out, len);
}

int gw_ipc_encode_rotate(const struct gw_ipc_rotate *r, char **out, size_t *len)
{
	json_t *arr = json_array(), *o;

	for (size_t i = 0; arr && i < r->n_creds; i++) {
		o = json_pack("{s:s, s:s%, s:o}", "name", r->creds[i].name, "value",
			      (const char *)r->creds[i].value, r->creds[i].value_len, "secret",
			      jspan(&r->creds[i]));
		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return -ENOMEM;
		}
	}
	return finish(json_pack("{s:s, s:o}", "t", "rotate", "creds", arr), out, len);
}

enum gw_ipc_type gw_ipc_type(const char *buf, size_t len, void **root)
{
	/* over GW_IPC_MAX: a datagram the receiver's buffer cut (SOCK_SEQPACKET truncates) */
	json_t *o = len <= GW_IPC_MAX ? json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
	const char *t = json_string_value(json_object_get(o, "t"));
	enum gw_ipc_type type = GW_IPC_BAD;

	if (json_is_object(o) && t) {
		if (!strcmp(t, "conn"))
			type = GW_IPC_CONN;
		else if (!strcmp(t, "config"))
			type = GW_IPC_CONFIG;
		else if (!strcmp(t, "http"))
			type = GW_IPC_HTTP;
		else if (!strcmp(t, "rotate"))
			type = GW_IPC_ROTATE;
	}
	if (type == GW_IPC_BAD) {
		json_decref(o);
		o = NULL;
	}
	*root = o;
	return type;
}

/* A string member into @dst (@size bytes, NUL-terminated); false if absent, not a string or too long. */
static bool get_str(const json_t *o, const char *key, char *dst, size_t size)
{
	const json_t *v = json_object_get(o, key);
	size_t n;

	if (!json_is_string(v) || (n = json_string_length(v)) >= size ||
	    memchr(json_string_value(v), '\0', n))
		return false;
	memcpy(dst, json_string_value(v), n + 1);
	return true;
}

/* An integer member in [@lo, @hi]. */
static bool get_int(const json_t *o, const char *key, json_int_t lo, json_int_t hi,
		    json_int_t *ret)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return false;
	*ret = json_integer_value(v);
	return true;
}

static bool get_addr(const json_t *o, const char *key, struct addr *a)
{
	char buf[64];

	return get_str(o, key, buf, sizeof(buf)) && addr_parse(buf, a) == 0;
}

int gw_ipc_decode_ask(const void *root, struct gw_ipc_ask *a)
{
	json_int_t id, sport, dport, alpn;

	memset(a, 0, sizeof(*a));
	if (!get_int(root, "id", 0, INT64_MAX, &id) || !get_addr(root, "src", &a->src) ||
	    !get_addr(root, "dst", &a->dst) || !get_int(root, "sport", 0, 65535, &sport) ||
	    !get_int(root, "dport", 1, 65535, &dport) || !get_int(root, "alpn", 0, 7, &alpn) ||
	    !get_str(root, "sni", a->sni, sizeof(a->sni)))
		return -EBADMSG;
	a->id = (uint64_t)id;
	a->sport = (uint16_t)sport;
	a->dport = (uint16_t)dport;
	a->alpn = (unsigned int)alpn;
	return 0;
}

/* A new copy of string member @key, or NULL (absent, or out of memory: *@bad set). */
static char *dup_str(const json_t *o, const char *key, bool *bad)
{
	const json_t *v = json_object_get(o, key);
	char *s;

	if (!v)
		return NULL;
	if (!json_is_string(v) || memchr(json_string_value(v), '\0', json_string_length(v)) ||
	    !(s = strdup(json_string_value(v)))) {
		*bad = true;
		return NULL;
	}
	return s;
}

/* Copies of array @arr's strings: each non-empty, no NUL; at most GW_IPC_LIST_MAX. */
static char **dup_strs(const json_t *arr, size_t *n, bool *bad)
{
	char **v;
	size_t k = json_array_size(arr);

	*n = 0;
	if (!json_is_array(arr) || k > GW_IPC_LIST_MAX) {
		*bad = true;
		return NULL;
	}
	if (!k)
		return NULL;
	if (!(v = calloc(k, sizeof(*v)))) {
		*bad = true;
		return NULL;
	}
	for (size_t i = 0; i < k; i++) {
		const json_t *s = json_array_get(arr, i);

		if (!json_is_string(s) || !json_string_length(s) ||
		    memchr(json_string_value(s), '\0', json_string_length(s)) ||
		    !(v[i] = strdup(json_string_value(s)))) {
			*bad = true;
			break;
		}
		(*n)++;
	}
	return v;
}

/*
 * One credential of a verdict; strings owned (cast away in clear()).  The
 * value goes into a header: no NUL, CR or LF (netd/gw/creds.c refuses such
 * a secret; a worker never trusts that it did).
 */
static bool dup_cred(const json_t *o, struct gw_cred *c)
{
	bool bad = false;
	const json_t *val = json_object_get(o, "value");
	char **hosts;

	c->name = dup_str(o, "name", &bad);
	c->header = dup_str(o, "header", &bad);
	c->placeholder = dup_str(o, "placeholder", &bad);
	hosts = dup_strs(json_object_get(o, "hosts"), &c->n_hosts, &bad);
	c->hosts = (const char *const *)hosts;
	if (val) {
		const char *s = json_string_value(val);
		size_t n = json_string_length(val);
		uint8_t *b;

		if (!s || strcspn(s, "\r\n") != n || !(b = malloc(n + 1)))
			return false;
		memcpy(b, s, n + 1);
		c->value = b;
		c->value_len = n;
		if (!get_span(o, c))
			return false;
	}
	return !bad && c->name && c->header && c->placeholder;
}

static int decode_gateway(const json_t *root, struct gw_ipc_verdict *v)
{
	bool bad = false;
	json_int_t rate, burst;
	const json_t *creds = json_object_get(root, "creds");

	v->cert_pem = dup_str(root, "cert", &bad);
	v->key_pem = dup_str(root, "key", &bad);
	v->methods = dup_strs(json_object_get(root, "methods"), &v->n_methods, &bad);
	v->paths = dup_strs(json_object_get(root, "paths"), &v->n_paths, &bad);
	if (bad || !v->cert_pem || !v->key_pem || !json_is_array(creds) ||
	    json_array_size(creds) > GW_IPC_LIST_MAX ||
	    !get_int(root, "rate_milli", 0, UINT32_MAX, &rate) ||
	    !get_int(root, "burst", 0, UINT32_MAX, &burst))
		return -EBADMSG;
	v->rate_milli = (uint32_t)rate;
	v->burst = (uint32_t)burst;
	if (json_array_size(creds) &&
	    !(v->creds = calloc(json_array_size(creds), sizeof(*v->creds))))
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(creds); i++) {
		v->n_creds++;
		if (!json_is_object(json_array_get(creds, i)) ||
		    !dup_cred(json_array_get(creds, i), &v->creds[i]))
			return -EBADMSG;
	}
	return 0;
}

int gw_ipc_decode_verdict(const void *root, struct gw_ipc_verdict *v)
{
	char w[16];
	json_int_t id, rule;
	bool bad = false;
	int r = -EBADMSG;

	memset(v, 0, sizeof(*v));
	v->rule = -1;
	if (!get_str(root, "verdict", w, sizeof(w)) || !get_int(root, "id", 0, INT64_MAX, &id) ||
	    !get_int(root, "rule", -1, 65535, &rule))
		return -EBADMSG;
	v->id = (uint64_t)id;
	v->rule = (int)rule;
	for (size_t i = 0; i < sizeof(verdict_words) / sizeof(verdict_words[0]); i++)
		if (!strcmp(w, verdict_words[i])) {
			v->verdict = (enum gw_ipc_action)i;
			r = 0;
		}
	if (r < 0)
		return r;
	v->reason = dup_str(root, "reason", &bad);
	v->sandbox = dup_str(root, "sandbox", &bad);
	v->policy = dup_str(root, "policy", &bad);
	if (!bad && v->verdict == GW_IPC_GATEWAY)
		r = decode_gateway(root, v);
	if (bad || r < 0) {
		gw_ipc_verdict_clear(v);
		return r < 0 ? r : -EBADMSG;
	}
	return 0;
}

int gw_ipc_decode_config(const void *root, struct gw_ipc_config *c)
{
	json_int_t ct, it;

	if (!get_int(root, "connect_timeout_ms", 1, UINT32_MAX, &ct) ||
	    !get_int(root, "idle_timeout_ms", 1, UINT32_MAX, &it))
		return -EBADMSG;
	c->connect_timeout_ms = (uint32_t)ct;
	c->idle_timeout_ms = (uint32_t)it;
	return 0;
}

int gw_ipc_decode_http(const void *root, struct gw_ipc_http *h)
{
	json_int_t rule, status, bi, bo, du, tt;

	memset(h, 0, sizeof(*h));
	if (!get_str(root, "sandbox", h->sandbox, sizeof(h->sandbox)) ||
	    !get_str(root, "policy", h->policy, sizeof(h->policy)) ||
	    !get_int(root, "rule", -1, 65535, &rule) ||
	    !get_str(root, "method", h->method, sizeof(h->method)) ||
	    !get_str(root, "host", h->host, sizeof(h->host)) ||
	    !get_str(root, "sni", h->sni, sizeof(h->sni)) ||
	    !get_str(root, "path", h->path, sizeof(h->path)) ||
	    !get_int(root, "status", 0, 999, &status) ||
	    !get_int(root, "bytes_in", 0, INT64_MAX, &bi) ||
	    !get_int(root, "bytes_out", 0, INT64_MAX, &bo) ||
	    !get_int(root, "duration_us", 0, INT64_MAX, &du) ||
	    !get_int(root, "ttfb_us", 0, INT64_MAX, &tt) ||
	    !get_str(root, "cred", h->cred, sizeof(h->cred)) ||
	    !get_str(root, "reason", h->reason, sizeof(h->reason)) ||
	    !get_str(root, "upstream", h->upstream, sizeof(h->upstream)) ||
	    !get_str(root, "proto", h->proto, sizeof(h->proto)))
		return -EBADMSG;
	h->rule = (int)rule;
	h->status = (unsigned int)status;
	h->bytes_in = (uint64_t)bi;
	h->bytes_out = (uint64_t)bo;
	h->duration_us = (uint64_t)du;
	h->ttfb_us = (uint64_t)tt;
	return 0;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void gw_ipc_verdict_clear(struct gw_ipc_verdict *v)
{
	free(v->reason);
	free(v->sandbox);
	free(v->policy);
	free(v->cert_pem);
	if (v->key_pem) {
		explicit_bzero(v->key_pem, strlen(v->key_pem));
		free(v->key_pem);
	}
	free_strs(v->methods, v->n_methods);
	free_strs(v->paths, v->n_paths);
	for (size_t i = 0; i < v->n_creds; i++) {
		struct gw_cred *c = &v->creds[i];

		free((char *)c->name);
		free((char *)c->header);
		free((char *)c->placeholder);
		free_strs((char **)c->hosts, c->n_hosts);
		if (c->value) {
			explicit_bzero((uint8_t *)c->value, c->value_len);
			free((uint8_t *)c->value);
		}
	}
	free(v->creds);
	memset(v, 0, sizeof(*v));
	v->rule = -1;
}

int gw_ipc_decode_rotate(const void *root, struct gw_ipc_rotate *r)
{
	const json_t *arr = json_object_get(root, "creds");

	memset(r, 0, sizeof(*r));
	if (!json_is_array(arr) || json_array_size(arr) > GW_REQ_MAX_CREDS)
		return -EBADMSG;
	if (json_array_size(arr) && !(r->creds = calloc(json_array_size(arr), sizeof(*r->creds))))
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *o = json_array_get(arr, i);
		const json_t *val = json_object_get(o, "value");
		const char *name = json_string_value(json_object_get(o, "name"));
		struct gw_cred *c = &r->creds[r->n_creds++];
		size_t n = json_string_length(val);
		uint8_t *b;

		if (!json_is_object(o) || !name || !*name || !json_is_string(val) || !n ||
		    memchr(json_string_value(val), '\0', n) ||
		    strcspn(json_string_value(val), "\r\n") != n ||
		    !(c->name = strdup(name)) || !(b = malloc(n + 1))) {
			gw_ipc_rotate_clear(r);
			return -EBADMSG;
		}
		memcpy(b, json_string_value(val), n + 1);
		c->value = b;
		c->value_len = n;
		if (!get_span(o, c)) {
			gw_ipc_rotate_clear(r);
			return -EBADMSG;
		}
	}
	return 0;
}

void gw_ipc_rotate_clear(struct gw_ipc_rotate *r)
{
	for (size_t i = 0; i < r->n_creds; i++) {
		free((char *)r->creds[i].name);
		if (r->creds[i].value) {
			explicit_bzero((uint8_t *)r->creds[i].value, r->creds[i].value_len);
			free((uint8_t *)r->creds[i].value);
		}
	}
	free(r->creds);
	memset(r, 0, sizeof(*r));
}
