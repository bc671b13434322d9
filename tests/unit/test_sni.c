/*
 * test_sni - the ClientHello / Host parser (netd/sni/sni.c) on what real
 * clients sent (tests/unit/sni/ *.bin, captured by tests/unit/sni/capture.sh:
 * curl, python ssl and http.client, openssl s_client, Go crypto/tls, and
 * Chromium 156, whose every hello carries a GREASE ECH extension), fed
 * whole, at every split point and a byte at a time; hand-built hellos for
 * what no client here sends (ECH, duplicates, bad names, oversize); and the
 * name match (netd/sni/sni_match.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "netd/sni/sni.h"
#include "netd/sni/sni_match.h"
#include "tests/unit/sni/vectors.h"

#define LONGL "llllllllllllllllllllllllllllllllllllllllllllllllllllllll"

static const struct {
	const char *vector;
	enum sni_status status;
	enum sni_proto proto;
	const char *name;
} want[] = {
	{ "curl_tls", SNI_NAME, SNI_PROTO_TLS, "allowed.example.com" },
	{ "curl_http", SNI_NAME, SNI_PROTO_HTTP1, "allowed.example.com" },	/* :8080 dropped */
	{ "curl_h2c", SNI_NO_NAME, SNI_PROTO_H2, "" },
	{ "python_tls", SNI_NAME, SNI_PROTO_TLS, "allowed.example.com" },
	{ "python_nosni", SNI_NO_NAME, SNI_PROTO_TLS, "" },
	{ "python_http", SNI_NAME, SNI_PROTO_HTTP1, "allowed.example.com" },
	{ "openssl_tls", SNI_NAME, SNI_PROTO_TLS, "allowed.example.com" },
	{ "openssl_tls12", SNI_NAME, SNI_PROTO_TLS, "allowed.example.com" },
	{ "openssl_frag", SNI_NAME, SNI_PROTO_TLS, LONGL "." LONGL "." LONGL "." LONGL ".example.com" },
	{ "openssl_nosni", SNI_NO_NAME, SNI_PROTO_TLS, "" },
	{ "go_tls", SNI_NAME, SNI_PROTO_TLS, "allowed.example.com" },
	/* GREASE ECH (draft-ietf-tls-esni 6.2): no config, its real name outside */
	{ "chromium_tls", SNI_ECH, SNI_PROTO_TLS, "allowed.example.com" },
};

static const unsigned char *vec(const char *name, unsigned int *len)
{
	for (size_t i = 0; i < sizeof(sni_vectors) / sizeof(sni_vectors[0]); i++)
		if (strcmp(sni_vectors[i].name, name) == 0) {
			*len = sni_vectors[i].len;
			return sni_vectors[i].buf;
		}
	fail_msg("no vector %s", name);
	return NULL;
}

static void check(const struct sni_result *r, enum sni_status s, enum sni_proto p, const char *name)
{
	assert_string_equal(sni_status_str(r->status), sni_status_str(s));
	assert_string_equal(sni_proto_str(r->proto), sni_proto_str(p));
	assert_string_equal(r->name, name);
}

/* Every capture: whole; every shorter prefix is undecided; two pieces at
 * every split point; one byte at a time. */
static void test_captures(void **state)
{
	static struct sni_stream st;
	struct sni_result r;

	(void)state;
	assert_int_equal(sizeof(sni_vectors) / sizeof(sni_vectors[0]), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		unsigned int len;
		const unsigned char *b = vec(want[i].vector, &len);
		unsigned int first = 0;

		print_message("  %s (%u bytes)\n", want[i].vector, len);
		sni_parse(b, len, &r);
		check(&r, want[i].status, want[i].proto, want[i].name);
		assert_int_equal(r.ech, want[i].status == SNI_ECH);
		/* the shortest prefix that decides */
		while (sni_parse(b, first, &r) == SNI_MORE)
			first++;
		check(&r, want[i].status, want[i].proto, want[i].name);
		assert_true(first > 0 && first <= len);
		for (unsigned int k = 1; k < len; k++) {
			sni_stream_init(&st);
			assert_int_equal(sni_stream_feed(&st, b, k, &r), k < first ? SNI_MORE : want[i].status);
			sni_stream_feed(&st, b + k, len - k, &r);
			check(&r, want[i].status, want[i].proto, want[i].name);
		}
		sni_stream_init(&st);
		for (unsigned int k = 0; k < len; k++)
			sni_stream_feed(&st, b + k, 1, &r);
		check(&r, want[i].status, want[i].proto, want[i].name);
	}
}

/* ---- hand-built ClientHellos -------------------------------------------- */

struct hb {
	uint8_t b[SNI_STREAM_MAX + 64];
	size_t n;
};

static void put(struct hb *h, const void *p, size_t n)
{
	assert_true(h->n + n <= sizeof(h->b));
	memcpy(h->b + h->n, p, n);
	h->n += n;
}

static void put16(struct hb *h, size_t v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(h, x, 2);
}

/* An extension of @type with body @body/@n. */
static void ext(struct hb *e, unsigned int type, const void *body, size_t n)
{
	put16(e, type);
	put16(e, n);
	put(e, body, n);
}

/* A server_name extension with host_name(s) @names (NULL-terminated). */
static void ext_sni(struct hb *e, const char *const *names)
{
	struct hb l = { .n = 0 }, body = { .n = 0 };

	for (size_t i = 0; names[i]; i++) {
		uint8_t t = 0;

		put(&l, &t, 1);
		put16(&l, strlen(names[i]));
		put(&l, names[i], strlen(names[i]));
	}
	put16(&body, l.n);
	put(&body, l.b, l.n);
	ext(e, SNI_EXT_SERVER_NAME, body.b, body.n);
}

/* One record (or @frag-byte records) holding a ClientHello with extensions @e. */
static void hello(struct hb *out, const struct hb *e, size_t frag)
{
	static const uint8_t cs[] = { 0x00, 0x02, 0x13, 0x01 }, comp[] = { 0x01, 0x00 };
	struct hb ch = { .n = 0 }, hs = { .n = 0 };
	uint8_t rnd[32] = { 0 }, sid = 0;

	put16(&ch, 0x0303);
	put(&ch, rnd, 32);
	put(&ch, &sid, 1);
	put(&ch, cs, sizeof(cs));
	put(&ch, comp, sizeof(comp));
	if (e) {
		put16(&ch, e->n);
		put(&ch, e->b, e->n);
	}
	hs.b[0] = 1;
	hs.b[1] = (uint8_t)(ch.n >> 16);
	hs.b[2] = (uint8_t)(ch.n >> 8);
	hs.b[3] = (uint8_t)ch.n;
	hs.n = 4;
	put(&hs, ch.b, ch.n);
	out->n = 0;
	if (!frag)
		frag = hs.n;
	for (size_t off = 0; off < hs.n; off += frag) {
		size_t k = hs.n - off < frag ? hs.n - off : frag;
		uint8_t rh[3] = { 22, 3, 1 };

		put(out, rh, 3);
		put16(out, k);
		put(out, hs.b + off, k);
	}
}

static enum sni_status parse_hb(const struct hb *h, struct sni_result *r)
{
	return sni_parse(h->b, h->n, r);
}

static void test_tls_built(void **state)
{
	static struct hb e, h;
	struct sni_result r;
	static const uint8_t ech_body[] = { 0x00, 0x00, 0x01, 0x00, 0x01, 0x42 };

	(void)state;
	/* plain, upper case and a trailing dot normalized */
	e.n = 0;
	ext_sni(&e, (const char *[]){ "Allowed.Example.COM.", NULL });
	hello(&h, &e, 0);
	parse_hb(&h, &r);
	check(&r, SNI_NAME, SNI_PROTO_TLS, "allowed.example.com");
	/* many 7-byte records, split anywhere */
	hello(&h, &e, 7);
	parse_hb(&h, &r);
	check(&r, SNI_NAME, SNI_PROTO_TLS, "allowed.example.com");
	/* ECH: the outer name is reported, marked ECH (either order) */
	ext(&e, SNI_EXT_ECH, ech_body, sizeof(ech_body));
	hello(&h, &e, 0);
	parse_hb(&h, &r);
	check(&r, SNI_ECH, SNI_PROTO_TLS, "allowed.example.com");
	assert_true(r.ech);
	e.n = 0;
	ext(&e, SNI_EXT_ECH, ech_body, sizeof(ech_body));
	hello(&h, &e, 0);
	parse_hb(&h, &r);
	check(&r, SNI_ECH, SNI_PROTO_TLS, "");
	assert_true(r.ech);
	/* ECH with an outer name that is no host name: a bad name, still ECH */
	ext_sni(&e, (const char *[]){ "bad..example", NULL });
	hello(&h, &e, 0);
	parse_hb(&h, &r);
	check(&r, SNI_BAD_NAME, SNI_PROTO_TLS, "");
	assert_true(r.ech);
	/* no extensions at all (TLS 1.2 allows it) */
	hello(&h, NULL, 0);
	parse_hb(&h, &r);
	check(&r, SNI_NO_NAME, SNI_PROTO_TLS, "");
	/* two server_name extensions; two host_names in one */
	e.n = 0;
	ext_sni(&e, (const char *[]){ "a.example", NULL });
	ext_sni(&e, (const char *[]){ "b.example", NULL });
	hello(&h, &e, 0);
	assert_int_equal(parse_hb(&h, &r), SNI_GARBAGE);
	e.n = 0;
	ext_sni(&e, (const char *[]){ "a.example", "b.example", NULL });
	hello(&h, &e, 0);
	assert_int_equal(parse_hb(&h, &r), SNI_GARBAGE);
	/* names we refuse: U-label bytes, IP-literal brackets, empty label, 64-byte label */
	static const char *const bad[] = { "b\xc3\xbc" "cher.example", "[2001:db8::1]", "a..example",
					   "x.", LONGL "12345678.example", "a b.example" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.n = 0;
		ext_sni(&e, (const char *[]){ bad[i], NULL });
		hello(&h, &e, 0);
		assert_int_equal(parse_hb(&h, &r), i == 3 ? SNI_NAME : SNI_BAD_NAME);
	}
	/* a handshake declared longer than the bound: too long, at once */
	hello(&h, &e, 0);
	h.b[6] = 0x01;		/* length 0x01xxxx > 16 KiB */
	assert_int_equal(sni_parse(h.b, 12, &r), SNI_TOO_LONG);
	/* not a ClientHello (a ServerHello), not a handshake record, bad version */
	hello(&h, &e, 0);
	h.b[5] = 2;
	assert_int_equal(parse_hb(&h, &r), SNI_GARBAGE);
	hello(&h, &e, 0);
	h.b[0] = 23;
	assert_int_equal(parse_hb(&h, &r), SNI_GARBAGE);
	hello(&h, &e, 0);
	h.b[1] = 2;
	assert_int_equal(sni_parse(h.b, 2, &r), SNI_GARBAGE);
	/* zero-length record; an extension running past the hello */
	assert_int_equal(sni_parse((const uint8_t *)"\x16\x03\x01\x00\x00", 5, &r), SNI_GARBAGE);
	e.n = 0;
	ext_sni(&e, (const char *[]){ "a.example", NULL });
	hello(&h, &e, 0);
	h.b[h.n - 16] = 0x7f;	/* the server_name extension's length */
	assert_int_equal(parse_hb(&h, &r), SNI_GARBAGE);
	/* an unknown NameType is skipped: no host_name, no name */
	hello(&h, &e, 0);
	h.b[h.n - 12] = 0x7f;
	assert_int_equal(parse_hb(&h, &r), SNI_NO_NAME);
}

/* An ALPN extension offering @protos (NULL-terminated). */
static void ext_alpn(struct hb *e, const char *const *protos)
{
	struct hb l = { .n = 0 }, body = { .n = 0 };

	for (size_t i = 0; protos[i]; i++) {
		uint8_t n = (uint8_t)strlen(protos[i]);

		put(&l, &n, 1);
		put(&l, protos[i], n);
	}
	put16(&body, l.n);
	put(&body, l.b, l.n);
	ext(e, SNI_EXT_ALPN, body.b, body.n);
}

/* RFC 7301 3.1: the offered protocols come back as bits (the gateway offers them upstream). */
static void test_tls_alpn(void **state)
{
	static struct hb e, h;
	struct sni_result r;

	(void)state;
	e.n = 0;
	ext_sni(&e, (const char *[]){ "api.example", NULL });
	hello(&h, &e, 0);
	parse_hb(&h, &r);
	assert_int_equal(r.alpn, 0);
	ext_alpn(&e, (const char *[]){ "h2", "http/1.1", NULL });
	hello(&h, &e, 5);
	parse_hb(&h, &r);
	check(&r, SNI_NAME, SNI_PROTO_TLS, "api.example");
	assert_int_equal(r.alpn, SNI_ALPN_H2 | SNI_ALPN_HTTP11);
	e.n = 0;
	ext_alpn(&e, (const char *[]){ "http/1.1", "spdy/3", NULL });
	hello(&h, &e, 0);
	assert_int_equal(parse_hb(&h, &r), SNI_NO_NAME);
	assert_int_equal(r.alpn, SNI_ALPN_HTTP11 | SNI_ALPN_OTHER);
	/* an empty list, an empty name, a list running past the extension */
	e.n = 0;
	ext(&e, SNI_EXT_ALPN, "\x00\x00", 2);
	hello(&h, &e, 0);
	assert_int_equal(parse_hb(&h, &r), SNI_GARBAGE);
	e.n = 0;
	ext(&e, SNI_EXT_ALPN, "\x00\x01\x00", 3);
	hello(&h, &e, 0);
	assert_int_equal(parse_hb(&h, &r), SNI_GARBAGE);
	e.n = 0;
	ext(&e, SNI_EXT_ALPN, "\x00\x09\x02h2", 5);
	hello(&h, &e, 0);
	assert_int_equal(parse_hb(&h, &r), SNI_GARBAGE);
	/* plain HTTP has no ALPN */
	assert_int_equal(sni_parse((const uint8_t *)"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", 35, &r),
			 SNI_NAME);
	assert_int_equal(r.alpn, 0);
}

/* ---- HTTP -------------------------------------------------------------- */

static enum sni_status http(const char *s, struct sni_result *r)
{
	return sni_parse((const uint8_t *)s, strlen(s), r);
}

static void test_http(void **state)
{
	static const struct {
		const char *req;
		enum sni_status st;
		const char *name;
	} c[] = {
		{ "GET / HTTP/1.1\r\nHost: A.example:80\r\n\r\n", SNI_NAME, "a.example" },
		{ "GET / HTTP/1.1\r\nhOsT:a.example.\t\r\nX: y\r\n\r\n", SNI_NAME, "a.example" },
		{ "GET / HTTP/1.1\r\nHost: a.example\r\n\r\nbody\0with NUL", SNI_NAME, "a.example" },
		{ "GET http://a.example:8080/x HTTP/1.1\r\nHost: a.example\r\n\r\n", SNI_NAME, "a.example" },
		{ "GET http://a.example/x HTTP/1.1\r\nHost: b.example\r\n\r\n", SNI_GARBAGE, "" },
		{ "CONNECT b.example:443 HTTP/1.1\r\nHost: b.example:443\r\n\r\n", SNI_NAME, "b.example" },
		{ "GET / HTTP/1.0\r\n\r\n", SNI_NO_NAME, "" },
		{ "GET / HTTP/1.1\r\n\r\n", SNI_GARBAGE, "" },
		{ "GET / HTTP/1.1\r\nHost:\r\n\r\n", SNI_NO_NAME, "" },
		{ "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n", SNI_GARBAGE, "" },
		{ "GET / HTTP/1.1\r\nHost : a.example\r\n\r\n", SNI_GARBAGE, "" },
		{ "GET / HTTP/1.1\r\nX: y\r\n Host: a.example\r\n\r\n", SNI_GARBAGE, "" },
		{ "GET / HTTP/1.1\nHost: a.example\n\n", SNI_GARBAGE, "" },
		{ "GET / HTTP/1.1\r\nHost: a.exa\rmple\r\n\r\n", SNI_GARBAGE, "" },
		{ "GET / HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n", SNI_BAD_NAME, "" },
		{ "GET / HTTP/1.1\r\nHost: user@a.example\r\n\r\n", SNI_GARBAGE, "" },
		{ "GET / HTTP/1.1\r\nHost: a.example:8x\r\n\r\n", SNI_GARBAGE, "" },
		{ "GET / HTTP/2.0\r\nHost: a.example\r\n\r\n", SNI_GARBAGE, "" },
		{ "GET  / HTTP/1.1\r\nHost: a.example\r\n\r\n", SNI_GARBAGE, "" },
		{ "SSH-2.0-OpenSSH_9.2\r\n", SNI_GARBAGE, "" },
		{ "\x00\x01\x02", SNI_GARBAGE, "" },
		{ "GET / HTTP/1.1\r\nHost: a.example\r\n", SNI_MORE, "" },
		{ "PRI * HTTP/2.0\r\n", SNI_MORE, "" },
		{ "PRIX / HTTP/1.1\r\nHost: a.example\r\n\r\n", SNI_NAME, "a.example" },
	};
	struct sni_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t len = strlen(c[i].req);

		if (i == 2)
			len += sizeof("with NUL");	/* past the NUL */
		if (i == 20)
			len = 3;
		sni_parse((const uint8_t *)c[i].req, len, &r);
		assert_string_equal(sni_status_str(r.status), sni_status_str(c[i].st));
		assert_string_equal(r.name, c[i].name);
	}
	(void)http;
}

/* The bound: a header section that never ends, a TLS hello never finished. */
static void test_too_long(void **state)
{
	static uint8_t b[SNI_STREAM_MAX + 100];
	static struct sni_stream st;
	struct sni_result r;
	const char *req = "GET / HTTP/1.1\r\nX-Pad: ";

	(void)state;
	memset(b, 'a', sizeof(b));
	memcpy(b, req, strlen(req));
	assert_int_equal(sni_parse(b, SNI_STREAM_MAX - 1, &r), SNI_MORE);
	assert_int_equal(sni_parse(b, SNI_STREAM_MAX, &r), SNI_TOO_LONG);
	assert_int_equal(sni_parse(b, sizeof(b), &r), SNI_TOO_LONG);
	sni_stream_init(&st);
	for (size_t off = 0; off < sizeof(b); off += 1000)
		sni_stream_feed(&st, b + off, sizeof(b) - off < 1000 ? sizeof(b) - off : 1000, &r);
	assert_int_equal(r.status, SNI_TOO_LONG);
	/* a hello of 16380 bytes, sent a record at a time, never quite complete */
	memcpy(b, "\x16\x03\x01\x40\x00\x01\x00\x3f\xf8", 9);
	assert_int_equal(sni_parse(b, 16000, &r), SNI_MORE);
	assert_int_equal(sni_parse(b, SNI_STREAM_MAX, &r), SNI_TOO_LONG);
	/* and the result sticks once decided */
	sni_stream_init(&st);
	assert_int_equal(sni_stream_feed(&st, (const uint8_t *)"\x01", 1, &r), SNI_GARBAGE);
	assert_int_equal(sni_stream_feed(&st, (const uint8_t *)"\x16\x03", 2, &r), SNI_GARBAGE);
}

static void test_name_norm(void **state)
{
	char out[SNI_NAME_MAX + 1];
	char big[SNI_NAME_MAX + 3];

	(void)state;
	assert_int_equal(sni_name_norm("XN--BCHER-KVA.Example.", 22, out), 0);
	assert_string_equal(out, "xn--bcher-kva.example");
	assert_int_equal(sni_name_norm(".", 1, out), -EINVAL);
	assert_int_equal(sni_name_norm("a.*.b", 5, out), -EINVAL);
	assert_string_equal(out, "");
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (i % 50 == 49) ? '.' : 'a';
	assert_int_equal(sni_name_norm(big, SNI_NAME_MAX, out), 0);
	assert_int_equal(sni_name_norm(big, SNI_NAME_MAX + 1, out), -EINVAL);
}

/* ---- the match ----------------------------------------------------------- */

static void test_match(void **state)
{
	static const char yaml[] =
		"name: p\n"
		"egress:\n"
		"  - domains: [allowed.example.com, \"*.cdn.example\"]\n"
		"    ports: [443]\n"
		"  - domains: [other.example.org]\n"
		"    ports: [443, 8443]\n"
		"  - domains: [short.example]\n"
		"    ports: [80]\n"
		"    max_qname_length: 13\n";
	struct policy *p = NULL;
	struct diag err = { 0 };
	const char *pin_a[] = { "allowed.example.com" };
	const char *pin_cdn[] = { "img.cdn.example" };
	const char *pin_two[] = { "nothing.example", "other.example.org" };

	(void)state;
	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err), 0);
	/* exact pattern: only itself */
	assert_true(sni_match(p, pin_a, 1, IPPROTO_TCP, 443, "allowed.example.com"));
	assert_false(sni_match(p, pin_a, 1, IPPROTO_TCP, 443, "blocked.example.net"));
	/* allowed by the policy, but it did not pin this address */
	assert_false(sni_match(p, pin_a, 1, IPPROTO_TCP, 443, "other.example.org"));
	assert_false(sni_match(p, pin_a, 1, IPPROTO_TCP, 443, "x.cdn.example"));
	/* wildcard that pinned it: any name under it, not the apex */
	assert_true(sni_match(p, pin_cdn, 1, IPPROTO_TCP, 443, "video.eu.cdn.example"));
	assert_false(sni_match(p, pin_cdn, 1, IPPROTO_TCP, 443, "cdn.example"));
	assert_false(sni_match(p, pin_cdn, 1, IPPROTO_TCP, 443, "allowed.example.com"));
	/* port and protocol of the rule */
	assert_false(sni_match(p, pin_a, 1, IPPROTO_TCP, 8443, "allowed.example.com"));
	assert_false(sni_match(p, pin_a, 1, IPPROTO_UDP, 443, "allowed.example.com"));
	assert_true(sni_match(p, pin_two, 2, IPPROTO_TCP, 8443, "other.example.org"));
	/* no name never matches; a name the policy no longer has never matches */
	assert_false(sni_match(p, pin_a, 1, IPPROTO_TCP, 443, ""));
	assert_false(sni_match(p, pin_a, 1, IPPROTO_TCP, 443, NULL));
	assert_false(sni_match(p, pin_two, 1, IPPROTO_TCP, 443, "nothing.example"));
	/* max_qname_length */
	{
		const char *pin_s[] = { "short.example" };

		assert_true(sni_match(p, pin_s, 1, IPPROTO_TCP, 80, "short.example"));
	}
	assert_true(sni_pattern_covers("*.a.b", "x.y.a.b"));
	assert_false(sni_pattern_covers("*.a.b", "xa.b"));
	assert_false(sni_pattern_covers("*.a.b", "a.b"));
	assert_false(sni_pattern_covers("a.b", "x.a.b"));
	policy_free(p);
}

/* Which mode applies, and the verdict table. */
static void test_decide(void **state)
{
	struct sni_result name = { .status = SNI_NAME, .proto = SNI_PROTO_TLS, .name = "a.example" };
	struct sni_result ech = { .status = SNI_ECH, .proto = SNI_PROTO_TLS, .name = "a.example" };
	struct sni_result none = { .status = SNI_NO_NAME, .proto = SNI_PROTO_H2 };
	struct sni_result more = { .status = SNI_MORE };
	struct sni_verdict v;

	(void)state;
	assert_int_equal(sni_mode_for(SNI_PROTO_TLS, POLICY_L7_LOG, POLICY_L7_ENFORCE), POLICY_L7_LOG);
	assert_int_equal(sni_mode_for(SNI_PROTO_TLS, POLICY_L7_OFF, POLICY_L7_ENFORCE),
			 POLICY_L7_ENFORCE);
	assert_int_equal(sni_mode_for(SNI_PROTO_HTTP1, POLICY_L7_ENFORCE, POLICY_L7_LOG), POLICY_L7_LOG);
	assert_int_equal(sni_mode_for(SNI_PROTO_HTTP1, POLICY_L7_ENFORCE, POLICY_L7_OFF),
			 POLICY_L7_ENFORCE);
	assert_int_equal(sni_mode_for(SNI_PROTO_H2, POLICY_L7_LOG, POLICY_L7_ENFORCE), POLICY_L7_ENFORCE);
	assert_int_equal(sni_mode_for(SNI_PROTO_UNKNOWN, POLICY_L7_OFF, POLICY_L7_LOG), POLICY_L7_LOG);
	v = sni_decide(POLICY_L7_ENFORCE, &name, true);
	assert_true(v.accept && !v.audit);
	v = sni_decide(POLICY_L7_ENFORCE, &name, false);
	assert_true(!v.accept && v.audit);
	v = sni_decide(POLICY_L7_ENFORCE, &ech, true);	/* the outer name proves nothing */
	assert_true(!v.accept && v.audit);
	v = sni_decide(POLICY_L7_ENFORCE, &none, false);
	assert_true(!v.accept && v.audit);
	v = sni_decide(POLICY_L7_ENFORCE, &more, false);
	assert_true(!v.accept && v.audit);
	v = sni_decide(POLICY_L7_LOG, &name, false);
	assert_true(v.accept && v.audit);
	v = sni_decide(POLICY_L7_LOG, &name, true);
	assert_true(v.accept && !v.audit);
	v = sni_decide(POLICY_L7_OFF, &none, false);
	assert_true(v.accept && !v.audit);
	assert_false(v.ech_outer);
}

/*
 * tls.ech: outer (GREASE ECH): an ECH hello judged by its outer name.  It
 * passes where that name matches and is audited as such (ech_outer); it is
 * reset where it does not, as any other name; an ECH hello without an
 * outer name has no name.  Without outer, the table above: always refused.
 */
static void test_decide_ech_outer(void **state)
{
	struct sni_result r;
	struct sni_verdict v;
	const struct sni_result ech = { .status = SNI_ECH, .proto = SNI_PROTO_TLS,
					.name = "a.example", .ech = true };
	const struct sni_result ech_none = { .status = SNI_ECH, .proto = SNI_PROTO_TLS,
					     .ech = true };
	const struct sni_result plain = { .status = SNI_NAME, .proto = SNI_PROTO_TLS,
					  .name = "a.example" };

	(void)state;
	/* the transformation */
	r = ech;
	sni_ech_outer(&r);
	assert_int_equal(r.status, SNI_NAME);
	assert_string_equal(r.name, "a.example");
	assert_true(r.ech);
	r = ech_none;
	sni_ech_outer(&r);
	assert_int_equal(r.status, SNI_NO_NAME);
	assert_true(r.ech);
	r = plain;	/* anything else is left alone */
	sni_ech_outer(&r);
	assert_int_equal(r.status, SNI_NAME);
	assert_false(r.ech);
	r = (struct sni_result){ .status = SNI_BAD_NAME, .proto = SNI_PROTO_TLS, .ech = true };
	sni_ech_outer(&r);
	assert_int_equal(r.status, SNI_BAD_NAME);
	r = (struct sni_result){ .status = SNI_MORE };
	sni_ech_outer(&r);
	assert_int_equal(r.status, SNI_MORE);

	/* enforce, outer name matches: passes, audited as ech-outer */
	r = ech;
	sni_ech_outer(&r);
	v = sni_decide(POLICY_L7_ENFORCE, &r, true);
	assert_true(v.accept && v.audit && v.ech_outer);
	/* enforce, outer name of another site on the address: reset, a mismatch */
	v = sni_decide(POLICY_L7_ENFORCE, &r, false);
	assert_true(!v.accept && v.audit && !v.ech_outer);
	/* log: both pass; the match as ech-outer, the other as a mismatch */
	v = sni_decide(POLICY_L7_LOG, &r, true);
	assert_true(v.accept && v.audit && v.ech_outer);
	v = sni_decide(POLICY_L7_LOG, &r, false);
	assert_true(v.accept && v.audit && !v.ech_outer);
	/* off: nothing */
	v = sni_decide(POLICY_L7_OFF, &r, true);
	assert_true(v.accept && !v.audit && !v.ech_outer);
	/* no outer name: reset */
	r = ech_none;
	sni_ech_outer(&r);
	v = sni_decide(POLICY_L7_ENFORCE, &r, false);
	assert_true(!v.accept && v.audit && !v.ech_outer);
	/* without outer, the same hello, even with a matching outer name */
	v = sni_decide(POLICY_L7_ENFORCE, &ech, true);
	assert_true(!v.accept && v.audit && !v.ech_outer);
	/* a plain hello that matches is not recorded */
	v = sni_decide(POLICY_L7_ENFORCE, &plain, true);
	assert_true(v.accept && !v.audit && !v.ech_outer);
	/* Chromium's own hello: refused by default, passed under outer */
	{
		unsigned int len;
		const unsigned char *b = vec("chromium_tls", &len);

		assert_int_equal(sni_parse(b, len, &r), SNI_ECH);
		v = sni_decide(POLICY_L7_ENFORCE, &r, true);
		assert_false(v.accept);
		sni_ech_outer(&r);
		check(&r, SNI_NAME, SNI_PROTO_TLS, "allowed.example.com");
		v = sni_decide(POLICY_L7_ENFORCE, &r, true);
		assert_true(v.accept && v.ech_outer);
	}
}

/* sni_modes(): the strictest of the rules that pinned the destination. */
static void test_modes(void **state)
{
	static const char yaml[] =
		"name: p\n"
		"egress:\n"
		"  - domains: [a.x.example]\n    ports: [443]\n    tls: { sni: log }\n"
		"  - domains: [\"*.x.example\"]\n    ports: [443]\n    tls: { sni: enforce }\n"
		"    http: { host: log }\n"
		"  - domains: [b.test]\n    ports: [443]\n";
	struct policy *p = NULL;
	struct diag err = { 0 };
	const char *pa[] = { "a.x.example" }, *pb[] = { "b.test" };
	enum policy_l7 tls, http;
	bool outer;

	(void)state;
	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err), 0);
	sni_modes(p, pa, 1, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_int_equal(tls, POLICY_L7_ENFORCE);	/* *.x.example covers a.x.example too */
	assert_int_equal(http, POLICY_L7_LOG);
	assert_false(outer);
	sni_modes(p, pb, 1, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_int_equal(tls, POLICY_L7_OFF);
	assert_int_equal(http, POLICY_L7_OFF);
	assert_false(outer);
	sni_modes(p, pa, 1, IPPROTO_TCP, 80, &tls, &http, &outer);
	assert_int_equal(tls, POLICY_L7_OFF);
	policy_free(p);
}

/*
 * sni_modes()' ech_outer: only when every checking rule that pinned the
 * destination says tls.ech: outer; a rule that checks nothing does not
 * count; sni_modes_port() over the port's domain rules alike.
 */
static void test_modes_ech(void **state)
{
	static const char yaml[] =
		"name: p\n"
		"egress:\n"
		"  - domains: [\"*.o.example\"]\n    ports: [443]\n"
		"    tls: { sni: enforce, ech: outer }\n"
		"  - domains: [s.o.example]\n    ports: [443]\n    tls: { sni: log }\n"
		"  - domains: [k.o.example]\n    ports: [443]\n"
		"    tls: { sni: enforce, ech: keep }\n"
		"  - domains: [u.o.example, plain.test]\n    ports: [443, 8443]\n"
		"  - domains: [h.test]\n    ports: [8443]\n"
		"    http: { host: enforce }\n    tls: { ech: outer }\n"
		"  - domains: [a.o.example]\n    ports: [443]\n    protocol: udp\n";
	struct policy *p = NULL;
	struct diag err = { 0 };
	const char *po[] = { "w.o.example" }, *ps[] = { "s.o.example" }, *pk[] = { "k.o.example" },
		   *pu[] = { "u.o.example" }, *pp[] = { "plain.test" }, *ph[] = { "h.test" },
		   *pa[] = { "a.o.example" }, *two[] = { "w.o.example", "s.o.example" };
	enum policy_l7 tls, http;
	bool outer;

	(void)state;
	assert_int_equal(policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err), 0);
	sni_modes(p, po, 1, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_int_equal(tls, POLICY_L7_ENFORCE);
	assert_true(outer);
	/* s.o.example: *.o.example (outer) and its own rule (strip): refused */
	sni_modes(p, ps, 1, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_int_equal(tls, POLICY_L7_ENFORCE);
	assert_false(outer);
	sni_modes(p, pk, 1, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_false(outer);
	/* one of two pinning names is under a rule that refuses ECH */
	sni_modes(p, two, 2, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_false(outer);
	/* a rule without a check beside the outer one: outer */
	sni_modes(p, pu, 1, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_true(outer);
	/* nothing checked: nothing to judge */
	sni_modes(p, pp, 1, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_int_equal(tls, POLICY_L7_OFF);
	assert_false(outer);
	/* http.host alone with outer */
	sni_modes(p, ph, 1, IPPROTO_TCP, 8443, &tls, &http, &outer);
	assert_int_equal(http, POLICY_L7_ENFORCE);
	assert_true(outer);
	/* the udp rule inherited enforce and outer from the tcp rules of 443?
	 * No: s.o.example's and k.o.example's rules check 443 without outer. */
	sni_modes(p, pa, 1, IPPROTO_UDP, 443, &tls, &http, &outer);
	assert_int_equal(tls, POLICY_L7_ENFORCE);
	assert_false(outer);
	/* unknown pinning names: every domain rule of the port */
	sni_modes_port(p, IPPROTO_TCP, 443, &tls, &http, &outer);
	assert_int_equal(tls, POLICY_L7_ENFORCE);
	assert_false(outer);
	sni_modes_port(p, IPPROTO_TCP, 8443, &tls, &http, &outer);
	assert_int_equal(http, POLICY_L7_ENFORCE);
	assert_true(outer);
	sni_modes_port(p, IPPROTO_TCP, 80, &tls, &http, &outer);
	assert_false(outer);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captures),
		cmocka_unit_test(test_tls_built),
		cmocka_unit_test(test_tls_alpn),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_name_norm),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_decide_ech_outer),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_modes_ech),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
