/*
 * test_gw_ipc - netd/gw/ipc.c, the messages between netd and its gateway
 * worker: every message encoded and decoded back equal (a verdict with
 * its credentials' hosts and values); the decoders strict (wrong types,
 * numbers out of range, missing fields, NUL inside strings, lists and
 * strings over their limits, messages over GW_IPC_MAX); and the wiping:
 * under ASan a free hook (run before the block is released, so reading it
 * is sound) sees every block freed, and none that held a secret or a key
 * still holds it once gw_ipc_wipe_allocators() is in force and
 * gw_ipc_verdict_clear() ran; with jansson's plain allocator it does.
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

#include <jansson.h>

#include "netd/gw/ipc.h"

#define SECRET "Bearer sk-WIPE-ME-0123456789abcdef"
#define KEY "-----BEGIN PRIVATE KEY-----\nKEY-WIPE-ME-fedcba9876543210\n-----END PRIVATE KEY-----\n"
#define CERT "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

/* ---- building and comparing ------------------------------------------------ */

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	assert_non_null(d);
	return d;
}

static char **xstrs(size_t n, const char *const *src)
{
	char **v = calloc(n, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(src[i]);
	return v;
}

/* A credential as netd/daemon/gwglue.c's cred_view() fills it: all owned. */
static void cred_fill(struct gw_cred *c, const char *name, const char *value,
		      size_t n_hosts, const char *const *hosts)
{
	c->name = xstrdup(name);
	c->header = xstrdup("Authorization");
	c->placeholder = xstrdup(name[0] == 'o' ? "netd-placeholder-openai-0001"
						: "netd-placeholder-github-0002");
	c->hosts = (const char *const *)(n_hosts ? xstrs(n_hosts, hosts) : NULL);
	c->n_hosts = n_hosts;
	if (value) {
		c->value = (const uint8_t *)xstrdup(value);
		c->value_len = strlen(value);
		/* "Bearer X": the secret is X */
		c->secret_off = strncmp(value, "Bearer ", 7) == 0 ? 7 : 0;
		c->secret_len = c->value_len - c->secret_off;
	}
}

/* A gateway verdict with everything set, owned as a decoded one is. */
static void verdict_full(struct gw_ipc_verdict *v)
{
	static const char *const methods[] = { "GET", "POST" };
	static const char *const paths[] = { "/v1/*", "/health" };
	static const char *const h1[] = { "api.openai.com", "*.openai.azure.com" };
	static const char *const h2[] = { "api.github.com" };

	memset(v, 0, sizeof(*v));
	v->id = UINT64_C(1) << 40;
	v->verdict = GW_IPC_GATEWAY;
	v->sandbox = xstrdup("sb1");
	v->policy = xstrdup("agent");
	v->rule = 3;
	v->cert_pem = xstrdup(CERT);
	v->key_pem = xstrdup(KEY);
	v->methods = xstrs(2, methods);
	v->n_methods = 2;
	v->paths = xstrs(2, paths);
	v->n_paths = 2;
	v->rate_milli = 5000;
	v->burst = 20;
	v->creds = calloc(2, sizeof(*v->creds));
	assert_non_null(v->creds);
	v->n_creds = 2;
	cred_fill(&v->creds[0], "openai", SECRET, 2, h1);
	cred_fill(&v->creds[1], "github", NULL, 1, h2);	/* not for this name: no value */
}

static void str_eq(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void verdict_eq(const struct gw_ipc_verdict *a, const struct gw_ipc_verdict *b)
{
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->verdict, b->verdict);
	str_eq(a->reason, b->reason);
	str_eq(a->sandbox, b->sandbox);
	str_eq(a->policy, b->policy);
	assert_int_equal(a->rule, b->rule);
	str_eq(a->cert_pem, b->cert_pem);
	str_eq(a->key_pem, b->key_pem);
	assert_int_equal(a->n_methods, b->n_methods);
	for (size_t i = 0; i < a->n_methods; i++)
		assert_string_equal(a->methods[i], b->methods[i]);
	assert_int_equal(a->n_paths, b->n_paths);
	for (size_t i = 0; i < a->n_paths; i++)
		assert_string_equal(a->paths[i], b->paths[i]);
	assert_int_equal(a->rate_milli, b->rate_milli);
	assert_int_equal(a->burst, b->burst);
	assert_int_equal(a->n_creds, b->n_creds);
	for (size_t i = 0; i < a->n_creds; i++) {
		const struct gw_cred *x = &a->creds[i], *y = &b->creds[i];

		assert_string_equal(x->name, y->name);
		assert_string_equal(x->header, y->header);
		assert_string_equal(x->placeholder, y->placeholder);
		assert_int_equal(x->n_hosts, y->n_hosts);
		for (size_t k = 0; k < x->n_hosts; k++)
			assert_string_equal(x->hosts[k], y->hosts[k]);
		assert_int_equal(x->value_len, y->value_len);
		assert_int_equal(x->secret_off, y->secret_off);
		assert_int_equal(x->secret_len, y->secret_len);
		if (!x->value || !y->value)
			assert_ptr_equal(x->value, y->value);
		else
			assert_memory_equal(x->value, y->value, x->value_len);
	}
}

/* Free an encoded message as gwglue.c's gw_send() does: wiped first. */
static void msg_free(char *msg, size_t len)
{
	explicit_bzero(msg, len);
	free(msg);
}

/* Encode @v, check the message's type, decode it into @out. */
static int verdict_trip(const struct gw_ipc_verdict *v, struct gw_ipc_verdict *out)
{
	char *msg = NULL;
	size_t len = 0;
	void *root = NULL;
	int r;

	assert_int_equal(gw_ipc_encode_verdict(v, &msg, &len), 0);
	assert_int_equal(strlen(msg), len);
	assert_true(len <= GW_IPC_MAX);
	assert_int_equal(gw_ipc_type(msg, len, &root), GW_IPC_CONN);
	msg_free(msg, len);
	r = gw_ipc_decode_verdict(root, out);
	json_decref(root);
	return r;
}

/* The message @text (JSON) through gw_ipc_type() and @decode; -EPROTO when the type is BAD. */
static int decode_text(const char *text, enum gw_ipc_type want,
		       int (*decode)(const void *, void *), void *out)
{
	void *root = NULL;
	enum gw_ipc_type t = gw_ipc_type(text, strlen(text), &root);
	int r;

	if (t == GW_IPC_BAD) {
		assert_null(root);
		return -EPROTO;
	}
	assert_int_equal(t, want);
	r = decode(root, out);
	json_decref(root);
	return r;
}

static int dec_ask(const void *root, void *out)
{
	return gw_ipc_decode_ask(root, out);
}

static int dec_config(const void *root, void *out)
{
	return gw_ipc_decode_config(root, out);
}

static int dec_http(const void *root, void *out)
{
	return gw_ipc_decode_http(root, out);
}

static int dec_verdict(const void *root, void *out)
{
	int r = gw_ipc_decode_verdict(root, out);

	gw_ipc_verdict_clear(out);	/* a failed decode left nothing to free: clear is safe */
	return r;
}

/*
 * The valid message @text with member @key (of the object itself, or with
 * @cred >= 0 of creds[@cred]) set to @val (NULL: removed), re-serialized;
 * caller frees.
 */
static char *mutate(const char *text, int cred, const char *key, json_t *val)
{
	json_t *o = json_loads(text, 0, NULL), *at;
	char *s;

	assert_non_null(o);
	at = cred >= 0 ? json_array_get(json_object_get(o, "creds"), (size_t)cred) : o;
	assert_non_null(at);
	if (val)
		assert_int_equal(json_object_set_new(at, key, val), 0);
	else
		assert_int_equal(json_object_del(at, key), 0);
	s = json_dumps(o, JSON_COMPACT);
	assert_non_null(s);
	json_decref(o);
	return s;
}

/* Decode @text mutated as mutate() says; the result of the decoder (or -EPROTO). */
static int try_mut(const char *text, int cred, const char *key, json_t *val, enum gw_ipc_type t,
		   int (*decode)(const void *, void *), void *out)
{
	char *s = mutate(text, cred, key, val);
	int r = decode_text(s, t, decode, out);

	free(s);
	return r;
}

/* As try_mut(), on the parsed object itself (no text: a string may hold a NUL). */
static int try_root(const char *text, int cred, const char *key, json_t *val,
		    int (*decode)(const void *, void *), void *out)
{
	json_t *o = json_loads(text, 0, NULL), *at;
	int r;

	assert_non_null(o);
	at = cred >= 0 ? json_array_get(json_object_get(o, "creds"), (size_t)cred) : o;
	assert_int_equal(json_object_set_new(at, key, val), 0);
	r = decode(o, out);
	json_decref(o);
	return r;
}

/* A string of @n bytes 'a' as a new JSON string. */
static json_t *jlong(size_t n)
{
	char *s = malloc(n + 1);
	json_t *j;

	assert_non_null(s);
	memset(s, 'a', n);
	s[n] = '\0';
	j = json_string(s);
	free(s);
	return j;
}

/* ---- round trips ------------------------------------------------------------- */

static void test_ask_roundtrip(void **state)
{
	static const char *const src[] = { "10.87.0.2", "fd00:87::2" };
	static const char *const dst[] = { "198.51.100.10", "2001:db8::10" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct gw_ipc_ask a = { .id = UINT64_C(0x7fffffffffffffff) - (uint64_t)i,
					.sport = 40000, .dport = 443, .alpn = 3 }, b;
		char *msg;
		size_t len;
		void *root;

		assert_int_equal(addr_parse(src[i], &a.src), 0);
		assert_int_equal(addr_parse(dst[i], &a.dst), 0);
		snprintf(a.sni, sizeof(a.sni), "api.openai.com");
		assert_int_equal(gw_ipc_encode_ask(&a, &msg, &len), 0);
		assert_int_equal(gw_ipc_type(msg, len, &root), GW_IPC_CONN);
		free(msg);
		assert_int_equal(gw_ipc_decode_ask(root, &b), 0);
		json_decref(root);
		assert_int_equal(b.id, a.id);
		assert_true(addr_equal(&b.src, &a.src));
		assert_true(addr_equal(&b.dst, &a.dst));
		assert_int_equal(b.sport, a.sport);
		assert_int_equal(b.dport, a.dport);
		assert_string_equal(b.sni, a.sni);
		assert_int_equal(b.alpn, a.alpn);
	}
}

static void test_verdict_roundtrip(void **state)
{
	struct gw_ipc_verdict v, w;

	(void)state;
	verdict_full(&v);
	assert_int_equal(verdict_trip(&v, &w), 0);
	verdict_eq(&v, &w);
	/* the hosts came through (refusal messages name them) */
	assert_int_equal(w.creds[0].n_hosts, 2);
	assert_string_equal(w.creds[0].hosts[1], "*.openai.azure.com");
	assert_string_equal(w.creds[1].hosts[0], "api.github.com");
	assert_null(w.creds[1].value);
	gw_ipc_verdict_clear(&w);
	/* a credential without hosts (NULL/0: the message names none) */
	{
		struct gw_cred *c = &v.creds[1];

		free((char *)c->hosts[0]);
		free((char **)c->hosts);
		c->hosts = NULL;
		c->n_hosts = 0;
	}
	assert_int_equal(verdict_trip(&v, &w), 0);
	verdict_eq(&v, &w);
	gw_ipc_verdict_clear(&w);
	gw_ipc_verdict_clear(&v);
	/* clear leaves an empty verdict, and clearing it again is harmless */
	assert_null(v.creds);
	assert_int_equal(v.rule, -1);
	gw_ipc_verdict_clear(&v);
}

static void test_verdict_refuse_pass(void **state)
{
	struct gw_ipc_verdict v = { .id = 7, .verdict = GW_IPC_REFUSE, .rule = -1 }, w;

	(void)state;
	v.reason = xstrdup("sni-not-pinned");
	v.sandbox = xstrdup("sb1");
	assert_int_equal(verdict_trip(&v, &w), 0);
	verdict_eq(&v, &w);
	gw_ipc_verdict_clear(&w);
	gw_ipc_verdict_clear(&v);

	v = (struct gw_ipc_verdict){ .id = 0, .verdict = GW_IPC_PASS, .rule = -1 };
	assert_int_equal(verdict_trip(&v, &w), 0);
	verdict_eq(&v, &w);
	gw_ipc_verdict_clear(&w);
}

static void test_config_http_roundtrip(void **state)
{
	struct gw_ipc_config c = { .connect_timeout_ms = 10000, .idle_timeout_ms = UINT32_MAX }, d;
	struct gw_ipc_http h = { .rule = 2, .status = 429, .bytes_in = UINT64_C(1) << 40,
				 .bytes_out = 0, .duration_us = 1234567, .ttfb_us = 99 }, g;
	char *msg;
	size_t len;
	void *root;

	(void)state;
	assert_int_equal(gw_ipc_encode_config(&c, &msg, &len), 0);
	assert_int_equal(gw_ipc_type(msg, len, &root), GW_IPC_CONFIG);
	free(msg);
	assert_int_equal(gw_ipc_decode_config(root, &d), 0);
	json_decref(root);
	assert_int_equal(d.connect_timeout_ms, c.connect_timeout_ms);
	assert_int_equal(d.idle_timeout_ms, c.idle_timeout_ms);

	snprintf(h.sandbox, sizeof(h.sandbox), "sb1");
	snprintf(h.policy, sizeof(h.policy), "agent");
	snprintf(h.method, sizeof(h.method), "POST");
	snprintf(h.host, sizeof(h.host), "api.openai.com");
	memset(h.path, 'p', sizeof(h.path) - 1);	/* the longest path the record holds */
	h.path[0] = '/';
	snprintf(h.cred, sizeof(h.cred), "openai");
	snprintf(h.reason, sizeof(h.reason), "rate-limited");
	snprintf(h.upstream, sizeof(h.upstream), "[2001:db8::10]:443");
	snprintf(h.proto, sizeof(h.proto), "h2");
	assert_int_equal(gw_ipc_encode_http(&h, &msg, &len), 0);
	assert_int_equal(gw_ipc_type(msg, len, &root), GW_IPC_HTTP);
	free(msg);
	assert_int_equal(gw_ipc_decode_http(root, &g), 0);
	json_decref(root);
	assert_int_equal(g.rule, h.rule);
	assert_int_equal(g.status, h.status);
	assert_int_equal(g.bytes_in, h.bytes_in);
	assert_int_equal(g.bytes_out, h.bytes_out);
	assert_int_equal(g.duration_us, h.duration_us);
	assert_int_equal(g.ttfb_us, h.ttfb_us);
	assert_string_equal(g.sandbox, h.sandbox);
	assert_string_equal(g.policy, h.policy);
	assert_string_equal(g.method, h.method);
	assert_string_equal(g.host, h.host);
	assert_string_equal(g.path, h.path);
	assert_string_equal(g.cred, h.cred);
	assert_string_equal(g.reason, h.reason);
	assert_string_equal(g.upstream, h.upstream);
	assert_string_equal(g.proto, h.proto);
}

/* ---- strict decoding ------------------------------------------------------------ */

/* "rotate": the new values of changed credentials, both ways, and strict. */
static void test_rotate(void **state)
{
	struct gw_cred in[2] = {
		{ .name = "openai", .value = (const uint8_t *)"Bearer sk-new-1", .value_len = 15,
		  .secret_off = 7, .secret_len = 8 },
		{ .name = "search", .value = (const uint8_t *)"k2", .value_len = 2, .secret_len = 2 },
	};
	struct gw_ipc_rotate r = { .creds = in, .n_creds = 2 }, out;
	char *msg;
	size_t len;
	void *root;

	(void)state;
	assert_int_equal(gw_ipc_encode_rotate(&r, &msg, &len), 0);
	assert_int_equal(gw_ipc_type(msg, len, &root), GW_IPC_ROTATE);
	assert_int_equal(gw_ipc_decode_rotate(root, &out), 0);
	assert_int_equal(out.n_creds, 2);
	assert_string_equal(out.creds[0].name, "openai");
	assert_int_equal(out.creds[0].value_len, 15);
	assert_memory_equal(out.creds[0].value, "Bearer sk-new-1", 15);
	assert_int_equal(out.creds[0].secret_off, 7);
	assert_int_equal(out.creds[0].secret_len, 8);
	assert_memory_equal(out.creds[1].value, "k2", 2);
	assert_int_equal(out.creds[1].secret_len, 2);
	gw_ipc_rotate_clear(&out);
	assert_null(out.creds);
	json_decref(root);
	free(msg);
	/* a value that would break a header, a missing name, not an array */
	static const char *const bad[] = {
		"{\"t\":\"rotate\",\"creds\":[{\"name\":\"a\",\"value\":\"x\\r\\nEvil: 1\"}]}",
		"{\"t\":\"rotate\",\"creds\":[{\"value\":\"x\"}]}",
		"{\"t\":\"rotate\",\"creds\":[{\"name\":\"a\",\"value\":\"\"}]}",
		"{\"t\":\"rotate\",\"creds\":{}}",
		/* the secret's span outside the value, or not two numbers */
		"{\"t\":\"rotate\",\"creds\":[{\"name\":\"a\",\"value\":\"xy\",\"secret\":[1,2]}]}",
		"{\"t\":\"rotate\",\"creds\":[{\"name\":\"a\",\"value\":\"xy\",\"secret\":[-1,1]}]}",
		"{\"t\":\"rotate\",\"creds\":[{\"name\":\"a\",\"value\":\"xy\",\"secret\":[0]}]}",
		"{\"t\":\"rotate\",\"creds\":[{\"name\":\"a\",\"value\":\"xy\",\"secret\":\"0,2\"}]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(gw_ipc_type(bad[i], strlen(bad[i]), &root), GW_IPC_ROTATE);
		assert_int_equal(gw_ipc_decode_rotate(root, &out), -EBADMSG);
		json_decref(root);
	}
}

static void test_type(void **state)
{
	static const char *const bad[] = {
		"", "{", "[]", "\"conn\"", "null", "{}", "{\"t\":1}", "{\"t\":null}",
		"{\"t\":\"connx\"}", "{\"t\":\"CONN\"}", "{\"t\":\"conn\",\"t\":\"conn\"}",
		"{\"t\":\"conn\\u0000\"}", "{\"t\":\"conn\"} x", "{\"t\":\"http\",\"x\":\"a\\u0000b\"}",
	};
	void *root = (void *)1;
	char *big;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(gw_ipc_type(bad[i], strlen(bad[i]), &root), GW_IPC_BAD);
		assert_null(root);
	}
	/* the length given is the message: a NUL inside it is not its end */
	assert_int_equal(gw_ipc_type("{\"t\":\"conn\"}\0", 13, &root), GW_IPC_BAD);
	assert_int_equal(gw_ipc_type("{\"t\":\"config\"}", 14, &root), GW_IPC_CONFIG);
	json_decref(root);
	/* GW_IPC_MAX bytes are a message; one more is one the receive buffer cut */
	big = malloc(GW_IPC_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', GW_IPC_MAX + 1);
	memcpy(big, "{\"t\":\"http\"}", 12);
	assert_int_equal(gw_ipc_type(big, GW_IPC_MAX, &root), GW_IPC_HTTP);
	json_decref(root);
	assert_int_equal(gw_ipc_type(big, GW_IPC_MAX + 1, &root), GW_IPC_BAD);
	assert_null(root);
	free(big);
}

static void test_strict_ask(void **state)
{
	static const char *const keys[] = { "id", "src", "sport", "dst", "dport", "sni", "alpn" };
	struct gw_ipc_ask a = { .id = 1, .sport = 1, .dport = 443 }, b;
	char *ok;
	size_t len;

	(void)state;
	assert_int_equal(addr_parse("10.87.0.2", &a.src), 0);
	assert_int_equal(addr_parse("198.51.100.10", &a.dst), 0);
	snprintf(a.sni, sizeof(a.sni), "api.openai.com");
	assert_int_equal(gw_ipc_encode_ask(&a, &ok, &len), 0);
	assert_int_equal(decode_text(ok, GW_IPC_CONN, dec_ask, &b), 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)	/* missing */
		assert_int_equal(try_mut(ok, -1, keys[i], NULL, GW_IPC_CONN, dec_ask, &b), -EBADMSG);
#define BAD(key, val) \
	assert_int_equal(try_mut(ok, -1, key, val, GW_IPC_CONN, dec_ask, &b), -EBADMSG)
	BAD("id", json_string("1"));		/* wrong types */
	BAD("id", json_real(1.0));
	BAD("sport", json_true());
	BAD("sni", json_integer(1));
	BAD("src", json_integer(167706626));
	BAD("id", json_integer(-1));		/* out of range */
	BAD("sport", json_integer(65536));
	BAD("sport", json_integer(-1));
	BAD("dport", json_integer(0));
	BAD("dport", json_integer(65536));
	BAD("alpn", json_integer(8));
	BAD("src", json_string("10.87.0.256"));	/* not an address */
	BAD("dst", json_string("198.51.100.10:443"));
	BAD("dst", json_string(""));
	BAD("sni", jlong(254));			/* over sni[254] with its NUL */
#undef BAD
	assert_int_equal(try_mut(ok, -1, "sni", jlong(253), GW_IPC_CONN, dec_ask, &b), 0);
	assert_int_equal(strlen(b.sni), 253);
	assert_int_equal(try_mut(ok, -1, "sni", json_string(""), GW_IPC_CONN, dec_ask, &b), 0);
	assert_int_equal(try_mut(ok, -1, "dport", json_integer(65535), GW_IPC_CONN, dec_ask, &b), 0);
	/* NUL inside a string (a parsed message never has one; a root may) */
	assert_int_equal(try_root(ok, -1, "sni", json_stringn("api\0x", 5), dec_ask, &b), -EBADMSG);
	assert_int_equal(try_root(ok, -1, "src", json_stringn("10.0.0.1\0", 9), dec_ask, &b),
			 -EBADMSG);
	free(ok);
}

static void test_strict_verdict(void **state)
{
	static const char *const top[] = { "id", "verdict", "rule", "cert", "key", "methods",
					   "paths", "rate_milli", "burst", "creds" };
	static const char *const cred[] = { "name", "header", "placeholder", "hosts" };
	struct gw_ipc_verdict v, w;
	char *ok;
	size_t len;
	json_t *arr;

	(void)state;
	verdict_full(&v);
	assert_int_equal(gw_ipc_encode_verdict(&v, &ok, &len), 0);
	gw_ipc_verdict_clear(&v);
	assert_int_equal(decode_text(ok, GW_IPC_CONN, dec_verdict, &w), 0);
#define BAD(c, key, val) \
	assert_int_equal(try_mut(ok, c, key, val, GW_IPC_CONN, dec_verdict, &w), -EBADMSG)
#define GOOD(c, key, val) \
	assert_int_equal(try_mut(ok, c, key, val, GW_IPC_CONN, dec_verdict, &w), 0)
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)	/* missing */
		BAD(-1, top[i], NULL);
	for (size_t i = 0; i < sizeof(cred) / sizeof(cred[0]); i++)
		BAD(1, cred[i], NULL);
	GOOD(-1, "policy", NULL);	/* optional: reason (none here), sandbox, policy, a value */
	GOOD(-1, "sandbox", NULL);
	GOOD(0, "value", NULL);
	BAD(-1, "verdict", json_string("allow"));	/* wrong words and types */
	BAD(-1, "verdict", json_integer(GW_IPC_GATEWAY));
	BAD(-1, "reason", json_integer(1));
	BAD(-1, "sandbox", json_null());
	BAD(-1, "cert", json_false());
	BAD(-1, "methods", json_string("GET"));
	BAD(-1, "paths", json_pack("[s, i]", "/v1/*", 1));
	BAD(-1, "methods", json_pack("[s]", ""));	/* an empty method matches nothing sane */
	BAD(-1, "creds", json_object());
	BAD(-1, "creds", json_pack("[s]", "openai"));
	BAD(0, "hosts", json_string("api.openai.com"));
	BAD(0, "hosts", json_pack("[s, n]", "api.openai.com"));
	BAD(0, "value", json_integer(42));
	BAD(-1, "rule", json_integer(-2));		/* out of range */
	BAD(-1, "rule", json_integer(65536));
	BAD(-1, "id", json_integer(-1));
	BAD(-1, "rate_milli", json_integer((json_int_t)UINT32_MAX + 1));
	BAD(-1, "burst", json_integer(-1));
	GOOD(-1, "rate_milli", json_integer(UINT32_MAX));
	/* a value goes into a header: no CR or LF (nor NUL, below) */
	BAD(0, "value", json_string("Bearer sk\r\nX-Evil: 1"));
	BAD(0, "value", json_string("Bearer sk\n"));
	/* lists: at most GW_IPC_LIST_MAX */
	arr = json_array();
	for (int i = 0; i < GW_IPC_LIST_MAX; i++)
		json_array_append_new(arr, json_string("h.example"));
	GOOD(0, "hosts", json_deep_copy(arr));
	GOOD(-1, "paths", json_deep_copy(arr));
	json_array_append_new(arr, json_string("h.example"));
	BAD(0, "hosts", json_deep_copy(arr));
	BAD(-1, "methods", json_deep_copy(arr));
	json_decref(arr);
#undef BAD
#undef GOOD
	/* NUL inside strings */
	assert_int_equal(try_root(ok, -1, "verdict", json_stringn("gateway\0", 8), dec_verdict, &w),
			 -EBADMSG);
	assert_int_equal(try_root(ok, -1, "policy", json_stringn("a\0b", 3), dec_verdict, &w),
			 -EBADMSG);
	assert_int_equal(try_root(ok, 0, "name", json_stringn("open\0ai", 7), dec_verdict, &w),
			 -EBADMSG);
	assert_int_equal(try_root(ok, 0, "value", json_stringn("Bearer \0sk", 10), dec_verdict,
				  &w), -EBADMSG);
	assert_int_equal(try_root(ok, 0, "hosts", json_pack("[o]", json_stringn("a\0.com", 6)),
				  dec_verdict, &w), -EBADMSG);
	assert_int_equal(try_root(ok, -1, "paths", json_pack("[o]", json_stringn("/v1\0", 4)),
				  dec_verdict, &w), -EBADMSG);
	/* a refusal needs none of the gateway's members */
	{
		struct gw_ipc_verdict r = { .verdict = GW_IPC_REFUSE, .rule = -1 };
		char *msg;

		assert_int_equal(gw_ipc_encode_verdict(&r, &msg, &len), 0);
		assert_int_equal(decode_text(msg, GW_IPC_CONN, dec_verdict, &w), 0);
		free(msg);
	}
	free(ok);
}

static void test_strict_config_http(void **state)
{
	static const char *const hk[] = { "sandbox", "policy", "rule", "method", "host", "path",
					  "status", "bytes_in", "bytes_out", "duration_us",
					  "ttfb_us", "cred", "reason", "upstream", "proto" };
	struct gw_ipc_config c = { 1, 1 }, d;
	struct gw_ipc_http h = { .rule = -1 }, g;
	char *ok;
	size_t len;

	(void)state;
	assert_int_equal(gw_ipc_encode_config(&c, &ok, &len), 0);
	assert_int_equal(decode_text(ok, GW_IPC_CONFIG, dec_config, &d), 0);
#define BAD(key, val) \
	assert_int_equal(try_mut(ok, -1, key, val, GW_IPC_CONFIG, dec_config, &d), -EBADMSG)
	BAD("connect_timeout_ms", NULL);
	BAD("idle_timeout_ms", NULL);
	BAD("connect_timeout_ms", json_integer(0));
	BAD("idle_timeout_ms", json_integer((json_int_t)UINT32_MAX + 1));
	BAD("idle_timeout_ms", json_string("300"));
#undef BAD
	free(ok);

	assert_int_equal(gw_ipc_encode_http(&h, &ok, &len), 0);
	assert_int_equal(decode_text(ok, GW_IPC_HTTP, dec_http, &g), 0);
	for (size_t i = 0; i < sizeof(hk) / sizeof(hk[0]); i++)
		assert_int_equal(try_mut(ok, -1, hk[i], NULL, GW_IPC_HTTP, dec_http, &g), -EBADMSG);
#define BAD(key, val) \
	assert_int_equal(try_mut(ok, -1, key, val, GW_IPC_HTTP, dec_http, &g), -EBADMSG)
	BAD("status", json_integer(1000));
	BAD("status", json_integer(-1));
	BAD("rule", json_integer(-2));
	BAD("bytes_in", json_integer(-1));
	BAD("ttfb_us", json_real(0.5));
	BAD("sandbox", jlong(64));	/* each string within its field, NUL included */
	BAD("path", jlong(512));
	BAD("reason", jlong(32));
	BAD("proto", jlong(8));
	BAD("host", json_integer(1));
#undef BAD
	assert_int_equal(try_mut(ok, -1, "reason", jlong(31), GW_IPC_HTTP, dec_http, &g), 0);
	assert_int_equal(try_root(ok, -1, "path", json_stringn("/a\0b", 4), dec_http, &g),
			 -EBADMSG);
	free(ok);
}

static void test_encode_oversized(void **state)
{
	struct gw_ipc_verdict v;
	char *msg = NULL, *big = malloc(GW_IPC_MAX + 1);
	size_t len;

	(void)state;
	assert_non_null(big);
	memset(big, 'A', GW_IPC_MAX);
	big[GW_IPC_MAX] = '\0';
	verdict_full(&v);
	free(v.cert_pem);
	v.cert_pem = big;
	assert_int_equal(gw_ipc_encode_verdict(&v, &msg, &len), -EMSGSIZE);
	assert_null(msg);
	gw_ipc_verdict_clear(&v);
}

/* ---- wiping ---------------------------------------------------------------------- */

#ifdef __SANITIZE_ADDRESS__
/* ASan's hooks (sanitizer/allocator_interface.h, which GCC 12 does not install). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
					      void (*free_hook)(const volatile void *));
size_t __sanitizer_get_allocated_size(const volatile void *p);

static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
}

static bool watching;
static unsigned int freed_secret, freed_key;

/* Runs before ASan releases the block (it is still allocated): reading it is sound. */
static void on_free(const volatile void *p)
{
	const char *b = (const char *)p;
	size_t n;

	if (!watching || !p)
		return;
	n = __sanitizer_get_allocated_size(p);
	if (memmem(b, n, "sk-WIPE-ME", 10))
		freed_secret++;
	if (memmem(b, n, "KEY-WIPE-ME", 11))
		freed_key++;
}

/* A verdict's whole way, as netd and the worker take it, watched. */
static void one_way(void)
{
	struct gw_ipc_verdict v, w;

	verdict_full(&v);
	assert_int_equal(verdict_trip(&v, &w), 0);	/* encode, wipe message, parse, decode */
	gw_ipc_verdict_clear(&w);
	gw_ipc_verdict_clear(&v);
}

static void test_wipe(void **state)
{
	struct gw_ipc_verdict v;
	char *msg = NULL, *p;
	size_t len;

	(void)state;
	assert_true(__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) > 0);
	/* the watch sees what a plain free() leaves */
	watching = true;
	p = xstrdup(SECRET);
	free(p);
	assert_int_equal(freed_secret, 1);
	/* jansson's own allocator leaves the secret in the JSON values it frees */
	freed_secret = freed_key = 0;
	json_set_alloc_funcs(malloc, free);
	one_way();
	assert_true(freed_secret > 0);
	assert_true(freed_key > 0);
	/* the wiping allocators: nothing freed holds either */
	freed_secret = freed_key = 0;
	gw_ipc_wipe_allocators();
	one_way();
	assert_int_equal(freed_secret, 0);
	assert_int_equal(freed_key, 0);
	/* a message too large for the channel: the text dropped is wiped too */
	verdict_full(&v);
	p = malloc(GW_IPC_MAX + 1);
	assert_non_null(p);
	memset(p, 'A', GW_IPC_MAX);
	p[GW_IPC_MAX] = '\0';
	free(v.cert_pem);
	v.cert_pem = p;
	assert_int_equal(gw_ipc_encode_verdict(&v, &msg, &len), -EMSGSIZE);
	gw_ipc_verdict_clear(&v);
	assert_int_equal(freed_secret, 0);
	assert_int_equal(freed_key, 0);
	/* gw_ipc_verdict_clear() alone, on a verdict built as gwglue.c builds one */
	verdict_full(&v);
	gw_ipc_verdict_clear(&v);
	assert_int_equal(freed_secret, 0);
	assert_int_equal(freed_key, 0);
	watching = false;
}
#else
static void test_wipe(void **state)
{
	(void)state;
	skip();	/* the free hook is ASan's: the tests run in build/asan */
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ask_roundtrip),
		cmocka_unit_test(test_verdict_roundtrip),
		cmocka_unit_test(test_verdict_refuse_pass),
		cmocka_unit_test(test_config_http_roundtrip),
		cmocka_unit_test(test_rotate),
		cmocka_unit_test(test_type),
		cmocka_unit_test(test_strict_ask),
		cmocka_unit_test(test_strict_verdict),
		cmocka_unit_test(test_strict_config_http),
		cmocka_unit_test(test_encode_oversized),
		cmocka_unit_test(test_wipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
