/*
 * fuzz_gw_ipc - the messages between netd and its gateway worker
 * (netd/gw/ipc.c) from arbitrary bytes: gw_ipc_type(), then every decoder
 * on whatever object it accepts (each must refuse what is not its
 * message, without leaking a half-decoded verdict).  Beyond the
 * sanitizers: GW_IPC_BAD leaves no root; a message decoded, encoded and
 * decoded again is equal to the first decoding (so nothing the worker
 * takes changes on the way back), and re-encoding never fails or grows
 * past GW_IPC_MAX; a decoded credential value has no NUL, CR or LF; lists
 * stay within GW_IPC_LIST_MAX.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "netd/gw/ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool verdict_eq(const struct gw_ipc_verdict *a, const struct gw_ipc_verdict *b)
{
	if (a->id != b->id || a->verdict != b->verdict || a->rule != b->rule ||
	    !str_eq(a->reason, b->reason) || !str_eq(a->sandbox, b->sandbox) ||
	    !str_eq(a->policy, b->policy) || !str_eq(a->cert_pem, b->cert_pem) ||
	    !str_eq(a->key_pem, b->key_pem) || a->n_methods != b->n_methods ||
	    a->n_paths != b->n_paths || a->rate_milli != b->rate_milli ||
	    a->burst != b->burst || a->n_creds != b->n_creds)
		return false;
	for (size_t i = 0; i < a->n_methods; i++)
		if (strcmp(a->methods[i], b->methods[i]))
			return false;
	for (size_t i = 0; i < a->n_paths; i++)
		if (strcmp(a->paths[i], b->paths[i]))
			return false;
	for (size_t i = 0; i < a->n_creds; i++) {
		const struct gw_cred *x = &a->creds[i], *y = &b->creds[i];

		if (strcmp(x->name, y->name) || strcmp(x->header, y->header) ||
		    strcmp(x->placeholder, y->placeholder) || x->n_hosts != y->n_hosts ||
		    x->value_len != y->value_len || !x->value != !y->value ||
		    (x->value && memcmp(x->value, y->value, x->value_len)))
			return false;
		for (size_t k = 0; k < x->n_hosts; k++)
			if (strcmp(x->hosts[k], y->hosts[k]))
				return false;
	}
	return true;
}

/* What a decoded verdict promises, whatever the bytes were. */
static void verdict_check(const struct gw_ipc_verdict *v)
{
	if (v->n_methods > GW_IPC_LIST_MAX || v->n_paths > GW_IPC_LIST_MAX ||
	    v->n_creds > GW_IPC_LIST_MAX || v->rule < -1 || v->rule > 65535)
		abort();
	if (v->verdict == GW_IPC_GATEWAY && (!v->cert_pem || !v->key_pem))
		abort();
	for (size_t i = 0; i < v->n_creds; i++) {
		const struct gw_cred *c = &v->creds[i];

		if (!c->name || !c->header || !c->placeholder || c->n_hosts > GW_IPC_LIST_MAX)
			abort();
		if (c->value && (memchr(c->value, '\0', c->value_len) ||
				 memchr(c->value, '\r', c->value_len) ||
				 memchr(c->value, '\n', c->value_len) || c->value[c->value_len]))
			abort();
	}
}

/* Parse @msg again as @want; abort unless it is. Caller json_decref()s. */
static void *reparse(char *msg, size_t len, enum gw_ipc_type want)
{
	void *root = NULL;

	if (len > GW_IPC_MAX || strlen(msg) != len || gw_ipc_type(msg, len, &root) != want)
		abort();
	explicit_bzero(msg, len);
	free(msg);
	return root;
}

static void try_ask(const void *root)
{
	struct gw_ipc_ask a, b;
	char *msg;
	size_t len;
	void *again;

	if (gw_ipc_decode_ask(root, &a) < 0)
		return;
	if (gw_ipc_encode_ask(&a, &msg, &len) < 0)
		abort();
	again = reparse(msg, len, GW_IPC_CONN);
	if (gw_ipc_decode_ask(again, &b) < 0 || a.id != b.id || !addr_equal(&a.src, &b.src) ||
	    !addr_equal(&a.dst, &b.dst) || a.sport != b.sport || a.dport != b.dport ||
	    strcmp(a.sni, b.sni) || a.alpn != b.alpn)
		abort();
	json_decref(again);
}

static void try_verdict(const void *root)
{
	struct gw_ipc_verdict v, w;
	char *msg;
	size_t len;
	void *again;
	int r = gw_ipc_decode_verdict(root, &v);

	if (r < 0) {
		/* a failed decode owns nothing: clear() finds it empty */
		if (v.reason || v.sandbox || v.policy || v.creds || v.methods || v.paths ||
		    v.cert_pem || v.key_pem)
			abort();
		return;
	}
	verdict_check(&v);
	r = gw_ipc_encode_verdict(&v, &msg, &len);
	if (r == -ENOMEM) {
		gw_ipc_verdict_clear(&v);
		return;
	}
	if (r < 0)
		abort();
	again = reparse(msg, len, GW_IPC_CONN);
	if (gw_ipc_decode_verdict(again, &w) < 0 || !verdict_eq(&v, &w))
		abort();
	json_decref(again);
	gw_ipc_verdict_clear(&w);
	gw_ipc_verdict_clear(&v);
}

static void try_config(const void *root)
{
	struct gw_ipc_config c, d;
	char *msg;
	size_t len;
	void *again;

	if (gw_ipc_decode_config(root, &c) < 0)
		return;
	if (!c.connect_timeout_ms || !c.idle_timeout_ms || gw_ipc_encode_config(&c, &msg, &len) < 0)
		abort();
	again = reparse(msg, len, GW_IPC_CONFIG);
	if (gw_ipc_decode_config(again, &d) < 0 || c.connect_timeout_ms != d.connect_timeout_ms ||
	    c.idle_timeout_ms != d.idle_timeout_ms)
		abort();
	json_decref(again);
}

static void try_http(const void *root)
{
	struct gw_ipc_http h, g;
	char *msg;
	size_t len;
	void *again;

	if (gw_ipc_decode_http(root, &h) < 0)
		return;
	if (gw_ipc_encode_http(&h, &msg, &len) < 0)
		abort();
	again = reparse(msg, len, GW_IPC_HTTP);
	if (gw_ipc_decode_http(again, &g) < 0 || h.rule != g.rule || h.status != g.status ||
	    h.bytes_in != g.bytes_in || h.bytes_out != g.bytes_out ||
	    h.duration_us != g.duration_us || h.ttfb_us != g.ttfb_us ||
	    strcmp(h.sandbox, g.sandbox) || strcmp(h.policy, g.policy) ||
	    strcmp(h.method, g.method) || strcmp(h.host, g.host) || strcmp(h.sni, g.sni) ||
	    strcmp(h.path, g.path) ||
	    strcmp(h.cred, g.cred) || strcmp(h.reason, g.reason) ||
	    strcmp(h.upstream, g.upstream) || strcmp(h.proto, g.proto))
		abort();
	json_decref(again);
}

static void try_rotate(const void *root)
{
	struct gw_ipc_rotate r, q;
	char *msg;
	size_t len;
	void *again;

	if (gw_ipc_decode_rotate(root, &r) < 0)
		return;
	if (gw_ipc_encode_rotate(&r, &msg, &len) < 0)
		abort();
	again = reparse(msg, len, GW_IPC_ROTATE);
	if (gw_ipc_decode_rotate(again, &q) < 0 || q.n_creds != r.n_creds)
		abort();
	for (size_t i = 0; i < r.n_creds; i++)
		if (strcmp(r.creds[i].name, q.creds[i].name) ||
		    r.creds[i].value_len != q.creds[i].value_len ||
		    memcmp(r.creds[i].value, q.creds[i].value, r.creds[i].value_len))
			abort();
	gw_ipc_rotate_clear(&r);
	gw_ipc_rotate_clear(&q);
	json_decref(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool once;
	void *root = (void *)1;
	enum gw_ipc_type t;

	if (!once) {
		gw_ipc_wipe_allocators();	/* as both processes run it */
		once = true;
	}
	t = gw_ipc_type((const char *)data, size, &root);
	if (t == GW_IPC_BAD) {
		if (root)
			abort();
		return 0;
	}
	if (!root)
		abort();
	/* every decoder on every message: each must refuse what is not its own */
	try_ask(root);
	try_verdict(root);
	try_config(root);
	try_http(root);
	try_rotate(root);
	json_decref(root);
	return 0;
}
