/*
 * test_gw_req - netd/gw/req.c (the per-request check both HTTP engines
 * share) and netd/gw/rate.c (the per-(sandbox, rule) buckets): Host against
 * the SNI and port, one Host, origin-form only, traversal tricks under path
 * rules, methods case-sensitive, path patterns, placeholder brokering (its
 * own header to its own host rewritten; anywhere else misdirected, also
 * beside another credential's rewrite), the refusal body (valid, complete,
 * no secret, no placeholder); buckets: burst then rate, N/m exact,
 * Retry-After rounded up, keys apart, the LRU bound, a reload refilling.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "netd/gw/rate.h"
#include "netd/gw/req.h"

#define SECRET "Bearer sk-real-secret-0123456789"
#define PH_A "netd-placeholder-openai-0001"
#define PH_B "netd-placeholder-github-0002"

static const char *const hosts_a[] = { "api.openai.com" };
static const char *const hosts_b[] = { "api.github.com" };
static const struct gw_cred creds[] = {
	{ .name = "openai", .header = "Authorization", .placeholder = PH_A,
	  .value = (const uint8_t *)SECRET, .value_len = sizeof(SECRET) - 1,
	  .hosts = hosts_a, .n_hosts = 1 },
	{ .name = "github", .header = "Authorization", .placeholder = PH_B,
	  .value = NULL, .hosts = hosts_b, .n_hosts = 1 },
};
static const char *const methods[] = { "GET", "POST" };
static const char *const paths[] = { "/v1/*", "/health" };

static struct gw_req_ctx ctx(void)
{
	struct gw_req_ctx c = {
		.sni = "api.openai.com", .sandbox = "sb1", .policy = "openai-only", .rule = 2,
		.creds = creds, .n_creds = 2,
	};
	return c;
}

#define H(n, v) { n, sizeof(n) - 1, v, sizeof(v) - 1 }

static void check(const struct gw_req_ctx *c, const char *method, const char *path,
		  const struct gw_hdr *hdrs, size_t n, struct gw_req_result *res)
{
	gw_req_check(c, method, strlen(method), NULL, 0, 443, path, strlen(path), hdrs, n, res);
}

static void test_host(void **state)
{
	struct gw_req_ctx c = ctx();
	struct gw_req_result r;
	struct gw_hdr ok[] = { H("Host", "API.OpenAI.com") };
	struct gw_hdr port[] = { H("Host", "api.openai.com:443") };
	struct gw_hdr other_port[] = { H("Host", "api.openai.com:8443") };
	struct gw_hdr empty_port[] = { H("Host", "api.openai.com:") };
	struct gw_hdr fronted[] = { H("Host", "other.allowed.test") };
	struct gw_hdr dot[] = { H("Host", "api.openai.com.") };
	struct gw_hdr two[] = { H("Host", "api.openai.com"), H("host", "api.openai.com") };
	struct gw_hdr none[] = { H("Accept", "*/*") };
	struct gw_hdr empty[] = { H("Host", "") };

	(void)state;
	check(&c, "GET", "/", ok, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	assert_int_equal(r.status, 0);
	check(&c, "GET", "/", port, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	check(&c, "GET", "/", other_port, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_MISDIRECTED);
	assert_int_equal(r.status, 421);
	assert_string_equal(r.reason, "host-mismatch");
	check(&c, "GET", "/", empty_port, 1, &r);
	assert_int_equal(r.status, 421);
	check(&c, "GET", "/", fronted, 1, &r);
	assert_int_equal(r.status, 421);
	check(&c, "GET", "/", dot, 1, &r);
	assert_int_equal(r.status, 421);
	check(&c, "GET", "/", two, 2, &r);
	assert_int_equal(r.verdict, GW_REQ_BAD);
	assert_int_equal(r.status, 400);
	check(&c, "GET", "/", none, 1, &r);
	assert_int_equal(r.status, 400);
	check(&c, "GET", "/", empty, 1, &r);
	assert_int_equal(r.status, 400);
	/* HTTP/2: :authority given; a Host beside it must be the same */
	gw_req_check(&c, "GET", 3, "api.openai.com", 14, 443, "/", 1, NULL, 0, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	gw_req_check(&c, "GET", 3, "api.openai.com", 14, 443, "/", 1, fronted, 1, &r);
	assert_int_equal(r.status, 400);
	gw_req_check(&c, "GET", 3, "evil.test", 9, 443, "/", 1, NULL, 0, &r);
	assert_int_equal(r.status, 421);
}

static void test_target(void **state)
{
	struct gw_req_ctx c = ctx();
	struct gw_req_result r;
	struct gw_hdr h[] = { H("Host", "api.openai.com") };
	const char *bad_always[] = { "*", "http://api.openai.com/v1/x", "api.openai.com:443",
				     "", "/v1/a b", "/v1/#frag", "/v1/\x7f" };
	const char *tricks[] = { "/v1/../admin", "/v1/%2e%2e/admin", "/v1/%2E%2e/admin",
				 "/v1/..%2fadmin", "/v1%2F../admin", "/v1/..;/admin",
				 "/v1/./x", "/v1/..", "/v1\\..\\admin", "/v1/%5c" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad_always) / sizeof(*bad_always); i++) {
		check(&c, "GET", bad_always[i], h, 1, &r);
		assert_int_equal(r.status, 400);
	}
	/* without path rules the upstream's own paths are its business */
	for (size_t i = 0; i < sizeof(tricks) / sizeof(*tricks); i++) {
		check(&c, "GET", tricks[i], h, 1, &r);
		assert_int_equal(r.verdict, GW_REQ_OK);
	}
	c.paths = paths;
	c.n_paths = 2;
	for (size_t i = 0; i < sizeof(tricks) / sizeof(*tricks); i++) {
		check(&c, "GET", tricks[i], h, 1, &r);
		assert_int_equal(r.status, 400);
	}
	check(&c, "GET", "/v1/models?x=/../..", h, 1, &r);	/* the query is not the path */
	assert_int_equal(r.verdict, GW_REQ_OK);
	check(&c, "GET", "/v1/...x/..a", h, 1, &r);	/* dots in a name are no segment */
	assert_int_equal(r.verdict, GW_REQ_OK);
}

static void test_methods_paths(void **state)
{
	struct gw_req_ctx c = ctx();
	struct gw_req_result r;
	struct gw_hdr h[] = { H("Host", "api.openai.com") };

	(void)state;
	c.methods = methods;
	c.n_methods = 2;
	c.paths = paths;
	c.n_paths = 2;
	check(&c, "POST", "/v1/chat/completions", h, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	check(&c, "post", "/v1/chat/completions", h, 1, &r);	/* RFC 9110 9.1 */
	assert_int_equal(r.verdict, GW_REQ_METHOD);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.reason, "method-denied");
	check(&c, "DELETE", "/v1/x", h, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_METHOD);
	check(&c, "GET", "/health", h, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	check(&c, "GET", "/health?full=1", h, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	check(&c, "GET", "/healthz", h, 1, &r);	/* exact */
	assert_int_equal(r.verdict, GW_REQ_PATH);
	assert_string_equal(r.reason, "path-denied");
	check(&c, "GET", "/v1", h, 1, &r);	/* "/v1/" + star needs the slash */
	assert_int_equal(r.verdict, GW_REQ_PATH);
	check(&c, "GET", "/v1/", h, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	check(&c, "GET", "/V1/x", h, 1, &r);	/* paths are case-sensitive */
	assert_int_equal(r.verdict, GW_REQ_PATH);
}

static void test_placeholders(void **state)
{
	struct gw_req_ctx c = ctx();
	struct gw_req_result r;
	struct gw_hdr own[] = { H("Host", "api.openai.com"), H("authorization", "Bearer " PH_A) };
	struct gw_hdr other_hdr[] = { H("Host", "api.openai.com"), H("X-Api-Key", PH_A) };
	struct gw_hdr b_own[] = { H("Host", "api.openai.com"), H("Authorization", PH_B) };
	struct gw_hdr both[] = { H("Host", "api.openai.com"), H("Authorization", "Bearer " PH_A),
				 H("X-Other", PH_B) };
	struct gw_hdr one_hdr_two[] = { H("Host", "api.openai.com"),
					H("Authorization", PH_A " " PH_B) };
	struct gw_hdr twice[] = { H("Host", "api.openai.com"), H("Authorization", PH_A),
				  H("Authorization", PH_A) };

	(void)state;
	check(&c, "POST", "/v1/x", own, 2, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	assert_int_equal(r.n_rewrites, 1);
	assert_int_equal(r.rewrites[0].index, 1);
	assert_ptr_equal(r.rewrites[0].cred, &creds[0]);
	assert_string_equal(r.cred_name, "openai");
	/* in another header: misdirected */
	check(&c, "POST", "/v1/x", other_hdr, 2, &r);
	assert_int_equal(r.verdict, GW_REQ_CRED_MISDIRECTED);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.reason, "credential-misdirected");
	assert_string_equal(r.cred_name, "openai");
	/* in the path or the query */
	check(&c, "GET", "/v1/" PH_A, own, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_CRED_MISDIRECTED);
	check(&c, "GET", "/v1/x?key=" PH_A, own, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_CRED_MISDIRECTED);
	/* another credential's placeholder on this host (value NULL): misdirected */
	check(&c, "GET", "/v1/x", b_own, 2, &r);
	assert_int_equal(r.verdict, GW_REQ_CRED_MISDIRECTED);
	assert_string_equal(r.cred_name, "github");
	/* ... even beside a rewrite of this host's own credential */
	check(&c, "GET", "/v1/x", both, 3, &r);
	assert_int_equal(r.verdict, GW_REQ_CRED_MISDIRECTED);
	assert_string_equal(r.cred_name, "github");
	check(&c, "GET", "/v1/x", one_hdr_two, 2, &r);
	assert_int_equal(r.verdict, GW_REQ_CRED_MISDIRECTED);
	/* the same header twice: both rewritten */
	check(&c, "GET", "/v1/x", twice, 3, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	assert_int_equal(r.n_rewrites, 2);
	/* the connection to github's host has github's value, not openai's */
	{
		struct gw_cred cg[2] = { creds[0], creds[1] };
		struct gw_hdr gh[] = { H("Host", "api.github.com"), H("Authorization", PH_A) };

		cg[0].value = NULL;
		cg[1].value = (const uint8_t *)"token x";
		cg[1].value_len = 7;
		c.creds = cg;
		c.sni = "api.github.com";
		check(&c, "GET", "/", gh, 2, &r);
		assert_int_equal(r.verdict, GW_REQ_CRED_MISDIRECTED);
		assert_string_equal(r.cred_name, "openai");
	}
	/* host mismatch comes first: nothing is rewritten for a fronted request */
	c = ctx();
	{
		struct gw_hdr fr[] = { H("Host", "evil.test"), H("Authorization", PH_A) };

		check(&c, "GET", "/", fr, 2, &r);
		assert_int_equal(r.status, 421);
		assert_int_equal(r.n_rewrites, 0);
	}
}

/* RFC 9110 9.3.8: a TRACE comes back as sent; the secret would too. */
static void test_trace_with_credential(void **state)
{
	struct gw_req_ctx c = ctx();
	struct gw_req_result r;
	struct gw_hdr own[] = { H("Host", "api.openai.com"), H("Authorization", "Bearer " PH_A) };
	struct gw_hdr none[] = { H("Host", "api.openai.com") };

	(void)state;
	c.methods = NULL;
	c.n_methods = 0;	/* any method: only the credential refuses it */
	check(&c, "TRACE", "/v1/x", own, 2, &r);
	assert_int_equal(r.verdict, GW_REQ_CRED_MISDIRECTED);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.cred_name, "openai");
	check(&c, "TRACE", "/v1/x", none, 1, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
	check(&c, "GET", "/v1/x", own, 2, &r);
	assert_int_equal(r.verdict, GW_REQ_OK);
}

static void test_refusal_body(void **state)
{
	struct gw_req_ctx c = ctx();
	struct gw_req_result r;
	struct gw_hdr h[] = { H("Host", "api.openai.com"), H("X-Key", PH_A) };
	char buf[GW_REQ_REFUSAL_MAX];
	json_t *j;
	json_error_t err;
	size_t n;

	(void)state;
	c.sandbox = "sb\"1\n";	/* escaped, not broken */
	check(&c, "GET", "/", h, 2, &r);
	n = gw_req_refusal(&c, &r, buf, sizeof(buf));
	assert_int_equal(n, strlen(buf));
	j = json_loads(buf, 0, &err);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "error")),
			    "credential-misdirected");
	assert_int_equal(json_integer_value(json_object_get(j, "status")), 403);
	assert_string_equal(json_string_value(json_object_get(j, "sandbox")), "sb\"1\n");
	assert_string_equal(json_string_value(json_object_get(j, "policy")), "openai-only");
	assert_int_equal(json_integer_value(json_object_get(j, "rule")), 2);
	assert_string_equal(json_string_value(json_object_get(j, "docs")), "docs/gateway.md");
	assert_non_null(strstr(json_string_value(json_object_get(j, "message")),
			       "api.openai.com"));
	json_decref(j);
	assert_null(strstr(buf, "sk-real"));
	assert_null(strstr(buf, PH_A));
	/* truncated: still NUL-terminated, within size */
	n = gw_req_refusal(&c, &r, buf, 10);
	assert_int_equal(n, 9);
	assert_int_equal(strlen(buf), 9);
	assert_int_equal(gw_req_refusal(&c, &r, buf, 0), 0);
	/* every verdict makes valid JSON, the engines' own ones too */
	for (int v = GW_REQ_MISDIRECTED; v <= GW_REQ_UPSTREAM; v++) {
		gw_req_result_set(&r, (enum gw_req_verdict)v, 504, "upstream-timeout");
		gw_req_refusal(&c, &r, buf, sizeof(buf));
		j = json_loads(buf, 0, &err);
		assert_non_null(j);
		json_decref(j);
	}
	assert_int_equal(r.status, 504);
}

/* A 502/504's message says what failed and whether retrying can help, by reason. */
static void test_upstream_message(void **state)
{
	static const struct {
		unsigned int status;
		const char *reason, *has, *hasnt;
	} t[] = {
		{ 502, "upstream-untrusted", "the upstream's certificate is not trusted by the "
		  "gateway (gateway.upstream_ca_file, or the system store); retrying will not help",
		  "may be retried" },
		{ 502, "upstream-tls", "retrying will not help", "may be retried" },
		{ 502, "upstream-connect", "may be retried later", "will not help" },
		{ 504, "upstream-timeout", "gateway.connect_timeout; the request may be retried",
		  "will not help" },
		{ 502, "upstream-closed", "safe to repeat", "will not help" },
		{ 502, "upstream-failure", "safe to repeat", "will not help" },
	};
	struct gw_req_ctx c = ctx();
	struct gw_req_result r;
	char buf[2048];
	json_error_t err;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *j;
		const char *msg;

		gw_req_result_set(&r, GW_REQ_UPSTREAM, t[i].status, t[i].reason);
		gw_req_refusal(&c, &r, buf, sizeof(buf));
		j = json_loads(buf, 0, &err);
		assert_non_null(j);
		assert_string_equal(json_string_value(json_object_get(j, "error")), t[i].reason);
		msg = json_string_value(json_object_get(j, "message"));
		if (!strstr(msg, t[i].has) || strstr(msg, t[i].hasnt))
			fail_msg("%s: \"%s\"", t[i].reason, msg);
		json_decref(j);
	}
}

/* ---- rate ---- */

static void test_rate_burst_then_rate(void **state)
{
	struct gw_rate *r = gw_rate_new(8);
	uint32_t ra = 0;

	(void)state;
	assert_non_null(r);
	for (int i = 0; i < 3; i++)
		assert_int_equal(gw_rate_take(r, "sb1", 0, 2000, 3, 1000, &ra), 0);
	assert_int_equal(gw_rate_take(r, "sb1", 0, 2000, 3, 1000, &ra), -EAGAIN);
	assert_int_equal(ra, 1);	/* 500 ms, rounded up to a whole second */
	assert_int_equal(gw_rate_take(r, "sb1", 0, 2000, 3, 1499, &ra), -EAGAIN);
	assert_int_equal(gw_rate_take(r, "sb1", 0, 2000, 3, 1500, &ra), 0);
	/* another sandbox, another rule: their own buckets */
	assert_int_equal(gw_rate_take(r, "sb2", 0, 2000, 3, 1500, &ra), 0);
	assert_int_equal(gw_rate_take(r, "sb1", 1, 2000, 3, 1500, &ra), 0);
	assert_int_equal(gw_rate_count(r), 3);
	/* no rate: always, no key */
	assert_int_equal(gw_rate_take(r, "sb3", 0, 0, 0, 1500, &ra), 0);
	assert_int_equal(gw_rate_count(r), 3);
	assert_int_equal(gw_rate_take(r, NULL, 0, 1000, 1, 0, &ra), -EINVAL);
	gw_rate_free(r);
	gw_rate_free(NULL);
	assert_null(gw_rate_new(0));
}

static void test_rate_per_minute(void **state)
{
	struct gw_rate *r = gw_rate_new(4);
	uint32_t ra = 0;
	uint32_t per_min = 5 * 1000 / 60;	/* 5/m as the policy parser stores it: 83 */

	(void)state;
	assert_int_equal(gw_rate_take(r, "sb", 0, per_min, 1, 0, &ra), 0);
	assert_int_equal(gw_rate_take(r, "sb", 0, per_min, 1, 0, &ra), -EAGAIN);
	assert_int_equal(ra, 13);	/* 1e6 / 83 = 12049 ms -> 13 s */
	assert_int_equal(gw_rate_take(r, "sb", 0, per_min, 1, 12048, &ra), -EAGAIN);
	assert_int_equal(ra, 1);
	assert_int_equal(gw_rate_take(r, "sb", 0, per_min, 1, 12049, &ra), 0);
	/* backwards earns nothing */
	assert_int_equal(gw_rate_take(r, "sb", 0, per_min, 1, 5, &ra), -EAGAIN);
	/* huge gaps and rates do not overflow */
	assert_int_equal(gw_rate_take(r, "sb", 0, UINT32_MAX, UINT32_MAX, UINT64_MAX, &ra), 0);
	assert_int_equal(gw_rate_take(r, "sb", 0, UINT32_MAX, UINT32_MAX, UINT64_MAX, &ra), 0);
	gw_rate_free(r);
}

static void test_rate_lru_and_reload(void **state)
{
	struct gw_rate *r = gw_rate_new(2);
	uint32_t ra = 0;
	char name[80];

	(void)state;
	assert_int_equal(gw_rate_take(r, "a", 0, 1000, 1, 0, &ra), 0);
	assert_int_equal(gw_rate_take(r, "b", 0, 1000, 1, 0, &ra), 0);
	assert_int_equal(gw_rate_take(r, "a", 0, 1000, 1, 0, &ra), -EAGAIN);	/* a is newest */
	assert_int_equal(gw_rate_take(r, "c", 0, 1000, 1, 0, &ra), 0);	/* b goes */
	assert_int_equal(gw_rate_count(r), 2);
	assert_int_equal(gw_rate_take(r, "a", 0, 1000, 1, 0, &ra), -EAGAIN);	/* a kept */
	assert_int_equal(gw_rate_take(r, "b", 0, 1000, 1, 0, &ra), 0);	/* b came back full */
	/* a reload changing the rule's rate: a fresh bucket */
	assert_int_equal(gw_rate_take(r, "b", 0, 1000, 1, 0, &ra), -EAGAIN);
	assert_int_equal(gw_rate_take(r, "b", 0, 2000, 1, 0, &ra), 0);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(gw_rate_take(r, name, 0, 1000, 1, 0, &ra), -EINVAL);
	/* many keys through a small table: bounded */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "sb%d", i);
		assert_int_equal(gw_rate_take(r, name, i, 1000, 1, 0, &ra), 0);
	}
	assert_int_equal(gw_rate_count(r), 2);
	gw_rate_free(r);
}

/* With a credential rewritten, the codings the masking cannot read are not asked for. */
static void test_fields_dropped(void **state)
{
	struct gw_req_result none = { 0 }, with = { .n_rewrites = 1 };
	static const struct { const char *name, *value; bool dropped; } cases[] = {
		{ "Accept-Encoding", "gzip, br", true },
		{ "accept-encoding", "identity", true },	/* the engine sends its own */
		{ "ACCEPT-ENCODING", "", true },
		{ "TE", "gzip", true },
		{ "te", "trailers, deflate", true },
		{ "te", "trailers", false },
		{ "TE", " \tTrailers ", false },
		{ "Accept-Encodings", "gzip", false },
		{ "Accept", "*/*", false },
		{ "Authorization", "Bearer x", false },
		{ "t", "gzip", false },
		{ "Sec-WebSocket-Extensions", "permessage-deflate", true },
		{ "sec-websocket-extensions", "", true },
		{ "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *n = cases[i].name, *v = cases[i].value;

		assert_int_equal(gw_req_field_dropped(&with, n, strlen(n), v, strlen(v)),
				 cases[i].dropped);
		assert_false(gw_req_field_dropped(&none, n, strlen(n), v, strlen(v)));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_methods_paths),
		cmocka_unit_test(test_placeholders),
		cmocka_unit_test(test_trace_with_credential),
		cmocka_unit_test(test_fields_dropped),
		cmocka_unit_test(test_refusal_body),
		cmocka_unit_test(test_upstream_message),
		cmocka_unit_test(test_rate_burst_then_rate),
		cmocka_unit_test(test_rate_per_minute),
		cmocka_unit_test(test_rate_lru_and_reload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
