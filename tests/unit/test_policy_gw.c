/*
 * test_policy_gw - a domain rule's gateway: (netd/model/policy_gw.c): the
 * good forms and what they parse to, the rate's syntax and defaults, every
 * refusal at FILE:LINE:COL with its message, and policy_gateway_check()
 * against a netd.yaml's credentials.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/model/config.h"
#include "netd/model/policy.h"

#define RULE "name: t\negress:\n  - domains: [api.example.com]\n    ports: [443]\n"

static struct policy *parse_ok(const char *yaml)
{
	struct policy *p = NULL;
	struct diag err = { 0 };
	char msg[1024];
	int r = policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err);

	if (r != 0)
		print_error("unexpected error: %s\n", diag_format(&err, msg, sizeof(msg)));
	assert_int_equal(r, 0);
	assert_non_null(p);
	return p;
}

static void expect_bad(const char *yaml, unsigned int line, unsigned int col, const char *frag)
{
	struct policy *p = (struct policy *)1;
	struct diag err = { 0 };
	char msg[1024];
	int r = policy_parse(yaml, strlen(yaml), "bad.yaml", &p, &err);

	diag_format(&err, msg, sizeof(msg));
	if (r != -EINVAL || err.line != line || err.col != col || !strstr(err.msg, frag))
		fail_msg("r=%d got \"%s\", want %u:%u \"...%s...\" for:\n%s", r, msg, line, col,
			 frag, yaml);
	assert_null(p);
}

static void test_good(void **state)
{
	struct policy *p;
	const struct policy_gateway *g;

	(void)state;
	p = parse_ok(RULE "    gateway:\n      credentials: [openai, other.key_2]\n"
		     "      rate: 5/s burst 20\n      methods: [GET, POST, get, M-SEARCH]\n"
		     "      paths: [\"/v1/*\", /v1/models, \"/\"]\n");
	g = p->rules[0].gateway;
	assert_non_null(g);
	assert_int_equal(g->line, 6);
	assert_int_equal(g->col, 7);
	assert_int_equal(g->n_credentials, 2);
	assert_string_equal(g->credentials[0], "openai");
	assert_string_equal(g->credentials[1], "other.key_2");
	assert_int_equal(g->credential_pos[1].line, 6);
	assert_int_equal(g->credential_pos[1].col, 29);
	assert_int_equal(g->rate_milli, 5000);
	assert_int_equal(g->burst, 20);
	/* RFC 9110 9.1: case-sensitive, as written: "get" is not "GET" */
	assert_int_equal(g->n_methods, 4);
	assert_string_equal(g->methods[0], "GET");
	assert_string_equal(g->methods[2], "get");
	assert_int_equal(g->n_paths, 3);
	policy_free(p);
	(void)0;
}

static void test_good_forms(void **state)
{
	struct policy *p;

	(void)state;
	/* '*' alone is not a path: it does not start with '/' (see test_bad) */
	p = parse_ok(RULE "    gateway: {}\n");
	assert_non_null(p->rules[0].gateway);
	assert_int_equal(p->rules[0].gateway->rate_milli, 0);
	assert_int_equal(p->rules[0].gateway->n_credentials, 0);
	policy_free(p);
	p = parse_ok(RULE "    protocol: tcp\n    gateway: { rate: 300/m }\n");
	assert_int_equal(p->rules[0].gateway->rate_milli, 5000);
	assert_int_equal(p->rules[0].gateway->burst, 5);
	policy_free(p);
	/* a rule without gateway: has none */
	p = parse_ok(RULE);
	assert_null(p->rules[0].gateway);
	policy_free(p);
	/* other rules keep tls:/http: */
	p = parse_ok(RULE "    gateway: { credentials: [a] }\n  - domains: [b.example.com]\n"
		     "    ports: [443]\n    tls: { sni: enforce }\n");
	assert_non_null(p->rules[0].gateway);
	assert_null(p->rules[1].gateway);
	policy_free(p);
}

static void test_paths(void **state)
{
	struct policy *p;

	(void)state;
	p = parse_ok(RULE "    gateway:\n      paths: [\"/v1/*\", /v1/models, \"/\", \"/*\"]\n");
	assert_int_equal(p->rules[0].gateway->n_paths, 4);
	assert_string_equal(p->rules[0].gateway->paths[0], "/v1/*");
	assert_string_equal(p->rules[0].gateway->paths[3], "/*");
	policy_free(p);
}

static void rate_ok(const char *s, uint32_t milli, uint32_t burst)
{
	uint32_t m = 0, b = 0;
	char why[300] = "";

	if (policy_gw_rate_parse(s, strlen(s), &m, &b, why, sizeof(why)) != 0)
		fail_msg("'%s': %s", s, why);
	if (m != milli || b != burst)
		fail_msg("'%s': %u milli burst %u, want %u burst %u", s, m, b, milli, burst);
}

static void rate_bad(const char *s, int want, const char *frag)
{
	uint32_t m = 7, b = 7;
	char why[300] = "";
	int r = policy_gw_rate_parse(s, strlen(s), &m, &b, why, sizeof(why));

	if (r != want || !strstr(why, frag))
		fail_msg("'%s': r=%d \"%s\", want %d \"...%s...\"", s, r, why, want, frag);
	assert_int_equal(m, 7);
	assert_int_equal(b, 7);
}

static void test_rate(void **state)
{
	(void)state;
	rate_ok("5/s", 5000, 5);
	rate_ok("5/s burst 20", 5000, 20);
	rate_ok("5/s  burst\t1", 5000, 1);
	rate_ok("1/s", 1000, 1);
	rate_ok("1/m", 17, 1);		/* 16.67 milli, rounded; burst max(1, ceil) */
	rate_ok("90/m", 1500, 2);	/* 1.5/s: burst ceil = 2 */
	rate_ok("60/m", 1000, 1);
	rate_ok("1000000/s", 1000000000u, 1000000);
	rate_ok("60000000/m", 1000000000u, 1000000);
	rate_ok("2/s burst 1000000", 2000, 1000000);
	rate_bad("0/s", -EINVAL, "a rate of 0");
	rate_bad("0/m", -EINVAL, "a rate of 0");
	rate_bad("5/h", -EINVAL, "per hour is not supported");
	rate_bad("5/d", -EINVAL, "per day");
	rate_bad("5 per s", -EINVAL, "did you mean 5/s?");
	rate_bad("5 / s", -EINVAL, "did you mean 5/s?");
	rate_bad("5/sec", -EINVAL, "did you mean 5/s?");
	rate_bad("5/minute", -EINVAL, "did you mean 5/m?");
	rate_bad("5/x", -EINVAL, "expected s or m");
	rate_bad("5", -EINVAL, "no unit: write 5/s");
	rate_bad("", -EINVAL, "empty");
	rate_bad("   ", -EINVAL, "empty");
	rate_bad("fast", -EINVAL, "expected N/s or N/m");
	rate_bad("/s", -EINVAL, "plain decimal");
	rate_bad("-5/s", -EINVAL, "plain decimal");
	rate_bad("05/s", -EINVAL, "plain decimal");
	rate_bad("5/s burst 0", -EINVAL, "burst 0");
	rate_bad("5/s burst", -EINVAL, "without a number");
	rate_bad("5/s burst x", -EINVAL, "plain decimal");
	rate_bad("5/s burst 20 extra", -EINVAL, "text after the burst");
	rate_bad("5/s bursts 20", -EINVAL, "only 'burst M'");
	rate_bad("1000001/s", -ERANGE, "too many");
	rate_bad("60000001/m", -ERANGE, "too many");
	rate_bad("99999999999999999999/s", -ERANGE, "too many");
	rate_bad("5/s burst 1000001", -ERANGE, "burst too large");
	rate_bad("5/s burst 99999999999999", -ERANGE, "burst too large");
}

/* The canonical form reads back to the same numbers. */
static void test_rate_format(void **state)
{
	static const char *const in[] = { "5/s", "5/s burst 20", "1/m", "7/m burst 3", "90/m",
					  "60/m", "60000000/m", "1000000/s" };
	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct policy_gateway g = { 0 };
		uint32_t m, b;
		char buf[64], why[200];

		assert_int_equal(policy_gw_rate_parse(in[i], strlen(in[i]), &g.rate_milli,
						      &g.burst, why, sizeof(why)), 0);
		policy_gw_rate_format(&g, buf, sizeof(buf));
		assert_int_equal(policy_gw_rate_parse(buf, strlen(buf), &m, &b, why, sizeof(why)),
				 0);
		if (m != g.rate_milli || b != g.burst)
			fail_msg("%s -> %s -> %u/%u, want %u/%u", in[i], buf, m, b, g.rate_milli,
				 g.burst);
	}
	{
		struct policy_gateway g = { 0 };
		char buf[64];

		assert_string_equal(policy_gw_rate_format(&g, buf, sizeof(buf)), "");
		g.rate_milli = 5000;
		g.burst = 20;
		assert_string_equal(policy_gw_rate_format(&g, buf, sizeof(buf)), "5/s burst 20");
		g.rate_milli = 1500;
		g.burst = 2;
		assert_string_equal(policy_gw_rate_format(&g, buf, sizeof(buf)), "90/m burst 2");
	}
}

static void test_bad(void **state)
{
	char big[8192];
	size_t n;

	(void)state;
	/* where gateway: may be */
	expect_bad("name: t\negress:\n  - cidrs: [198.51.100.0/24]\n    ports: [443]\n"
		   "    gateway: {}\n", 5, 5, "only a 'domains' rule goes through the gateway");
	expect_bad(RULE "    protocol: udp\n    gateway: {}\n", 6, 5,
		   "the gateway speaks HTTPS over tcp");
	expect_bad(RULE "    tls: { sni: enforce }\n    gateway: {}\n", 5, 5,
		   "egress[0].tls: not with gateway: the gateway checks the TLS server_name and "
		   "every request's Host itself");
	expect_bad(RULE "    gateway: {}\n    http: { host: log }\n", 6, 5,
		   "egress[0].http: not with gateway");
	expect_bad(RULE "    gateway:\n", 5, 13, "egress[0].gateway: expected a mapping, got null");
	expect_bad(RULE "    gateway: [openai]\n", 5, 14, "expected a mapping, got a list");
	/* keys: did you mean */
	expect_bad(RULE "    gateway: { credential: [a] }\n", 5, 16,
		   "did you mean 'credentials'");
	expect_bad(RULE "    gateway: { method: [GET] }\n", 5, 16, "did you mean 'methods'");
	expect_bad(RULE "    gatway: {}\n", 5, 5, "did you mean 'gateway'");
	/* credentials */
	expect_bad(RULE "    gateway: { credentials: [] }\n", 5, 29, "empty list");
	expect_bad(RULE "    gateway: { credentials: openai }\n", 5, 29, "expected a list");
	expect_bad(RULE "    gateway: { credentials: [OpenAI] }\n", 5, 30,
		   "bad entry 'OpenAI': a credential name is 1-64 bytes of a-z 0-9");
	expect_bad(RULE "    gateway: { credentials: [-x] }\n", 5, 30, "credential name");
	expect_bad(RULE "    gateway: { credentials: [a, b, a] }\n", 5, 36,
		   "credentials[2]: 'a' is listed twice (first at line 5, column 30)");
	expect_bad(RULE "    gateway: { credentials: [[a]] }\n", 5, 30, "expected a string");
	/* rate */
	expect_bad(RULE "    gateway: { rate: 0/s }\n", 5, 22, "bad rate '0/s': a rate of 0");
	expect_bad(RULE "    gateway: { rate: 5/h }\n", 5, 22, "per hour is not supported");
	expect_bad(RULE "    gateway: { rate: 5 per s }\n", 5, 22, "did you mean 5/s?");
	expect_bad(RULE "    gateway: { rate: 5/s burst 0 }\n", 5, 22, "burst 0");
	expect_bad(RULE "    gateway: { rate: 99999999999/s }\n", 5, 22, "too many requests");
	expect_bad(RULE "    gateway: { rate: [5/s] }\n", 5, 22, "expected N/s or N/m");
	/* methods */
	expect_bad(RULE "    gateway: { methods: [\"GET \"] }\n", 5, 26, "RFC 9110 token");
	expect_bad(RULE "    gateway: { methods: [\"G(T\"] }\n", 5, 26, "RFC 9110 token");
	expect_bad(RULE "    gateway: { methods: [\"\"] }\n", 5, 26, "bad entry ''");
	expect_bad(RULE "    gateway: { methods: [GET, POST, GET] }\n", 5, 37,
		   "'GET' is listed twice");
	expect_bad(RULE "    gateway: { methods: [AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA] }\n", 5, 26,
		   "longer than 32 bytes");
	expect_bad(RULE "    gateway: { methods: [] }\n", 5, 25, "empty list (leave the key out");
	/* paths */
	expect_bad(RULE "    gateway: { paths: [v1/models] }\n", 5, 24, "starts with '/'");
	expect_bad(RULE "    gateway: { paths: [\"*\"] }\n", 5, 24, "starts with '/'");
	expect_bad(RULE "    gateway: { paths: [\"/v1/*/x\"] }\n", 5, 24,
		   "'*' only as the last byte");
	expect_bad(RULE "    gateway: { paths: [\"/v1/**\"] }\n", 5, 24, "'*' only as the last");
	expect_bad(RULE "    gateway: { paths: [\"/v1?x=1\"] }\n", 5, 24, "query and fragment");
	expect_bad(RULE "    gateway: { paths: [\"/v1#a\"] }\n", 5, 24, "query and fragment");
	expect_bad(RULE "    gateway: { paths: [\"/a b\"] }\n", 5, 24, "not visible ASCII");
	expect_bad(RULE "    gateway: { paths: [\"/caf\xc3\xa9\"] }\n", 5, 24, "not visible ASCII");
	expect_bad(RULE "    gateway: { paths: [/a, /b, /a] }\n", 5, 32, "'/a' is listed twice");
	/* limits: POLICY_GW_MAX_ITEMS of each */
	n = (size_t)snprintf(big, sizeof(big), RULE "    gateway:\n      paths: [");
	for (unsigned int i = 0; i <= POLICY_GW_MAX_ITEMS; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%s/p%u", i ? ", " : "", i);
	snprintf(big + n, sizeof(big) - n, "]\n");
	expect_bad(big, 6, 389, "too many entries (the limit is 64)");
	/* a path too long */
	n = (size_t)snprintf(big, sizeof(big), RULE "    gateway:\n      paths: [/");
	for (unsigned int i = 0; i < POLICY_GW_PATH_MAX; i++)
		big[n++] = 'a';
	snprintf(big + n, sizeof(big) - n, "]\n");
	expect_bad(big, 6, 15, "longer than 1024 bytes");
}

/* The room for POLICY_GW_MAX_ITEMS is enough: exactly 64 pass. */
static void test_max_items(void **state)
{
	char big[8192];
	size_t n;
	struct policy *p;

	(void)state;
	n = (size_t)snprintf(big, sizeof(big), RULE "    gateway:\n      credentials: [");
	for (unsigned int i = 0; i < POLICY_GW_MAX_ITEMS; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%sc%u", i ? ", " : "", i);
	snprintf(big + n, sizeof(big) - n, "]\n");
	p = parse_ok(big);
	assert_int_equal(p->rules[0].gateway->n_credentials, POLICY_GW_MAX_ITEMS);
	policy_free(p);
}

/* policy check collects every rule's gateway error, as the others'. */
static void test_every_rule_error(void **state)
{
	static const char y[] = "name: t\negress:\n"
		"  - domains: [a.example.com]\n    ports: [443]\n    gateway: { rate: 5/h }\n"
		"  - domains: [b.example.com]\n    ports: [443]\n    gateway: { paths: [x] }\n";
	struct diag err = { 0 }, more[4];
	unsigned int n_more = 0;
	struct policy *p = NULL;

	(void)state;
	assert_int_equal(policy_parse_all(y, strlen(y), "m.yaml", &p, &err, more, 4, &n_more),
			 -EINVAL);
	assert_int_equal(err.line, 5);
	assert_int_equal(n_more, 1);
	assert_int_equal(more[0].line, 8);
	assert_non_null(strstr(more[0].msg, "egress[1].gateway.paths[0]"));
}

static void test_cred_name_valid(void **state)
{
	(void)state;
	assert_true(policy_cred_name_valid("openai", 6));
	assert_true(policy_cred_name_valid("0", 1));
	assert_true(policy_cred_name_valid("a.b_c-d", 7));
	assert_false(policy_cred_name_valid("", 0));
	assert_false(policy_cred_name_valid("_a", 2));
	assert_false(policy_cred_name_valid("A", 1));
	assert_false(policy_cred_name_valid("a b", 3));
	assert_false(policy_cred_name_valid("a/b", 3));
	assert_true(policy_cred_name_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
					   64));
	assert_false(policy_cred_name_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
					    65));
}

static void test_gateway_check(void **state)
{
	static const char cfg_yaml[] =
		"credentials:\n"
		"  openai:\n    header: Authorization\n    placeholder: netd-placeholder-openai-0001\n"
		"    hosts: [api.openai.com]\n    value: sk-1\n"
		"  github:\n    header: Authorization\n    placeholder: netd-placeholder-github-0001\n"
		"    hosts: [api.github.com]\n    value: gh-1\n";
	struct config c, empty;
	struct diag err = { 0 };
	struct policy *p;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_parse(&c, cfg_yaml, strlen(cfg_yaml), "netd.yaml", &err), 0);
	assert_int_equal(config_init(&empty), 0);

	p = parse_ok(RULE "    gateway: { credentials: [openai, github] }\n");
	assert_int_equal(policy_gateway_check(p, &c, &err), 0);
	policy_free(p);
	/* no gateway at all: nothing to check, even against a config without credentials */
	p = parse_ok(RULE);
	assert_int_equal(policy_gateway_check(p, &empty, &err), 0);
	policy_free(p);

	p = parse_ok(RULE "    gateway: { credentials: [openai, githbu] }\n");
	assert_int_equal(policy_gateway_check(p, &c, &err), -EINVAL);
	assert_string_equal(err.file, "t.yaml");
	assert_int_equal(err.line, 5);
	assert_int_equal(err.col, 38);
	assert_non_null(strstr(err.msg, "egress[0].gateway.credentials[1]: no credential "
				   "'githbu' in netd.yaml (did you mean 'github'?)"));
	policy_free(p);

	p = parse_ok(RULE "    gateway: { credentials: [zzzzzz] }\n");
	assert_int_equal(policy_gateway_check(p, &c, &err), -EINVAL);
	assert_null(strstr(err.msg, "did you mean"));
	assert_int_equal(policy_gateway_check(p, &empty, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "defines no credentials"));
	policy_free(p);
	config_done(&c);
	config_done(&empty);
}

/* gateway.port: 0 turns the gateway off: a gateway rule is refused, at its gateway: key. */
static void test_gateway_check_off(void **state)
{
	static const char off_yaml[] = "gateway:\n  port: 0\n";
	struct diag err = { 0 };
	struct policy *p;
	struct config c;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_parse(&c, off_yaml, strlen(off_yaml), "port0.yaml", &err), 0);
	assert_int_equal(c.gw_port, 0);
	p = parse_ok(RULE "    gateway: {}\n");
	assert_int_equal(policy_gateway_check(p, &c, &err), -EINVAL);
	assert_string_equal(err.file, "t.yaml");
	assert_int_equal(err.line, 5);
	assert_int_equal(err.col, 14);
	assert_non_null(strstr(err.msg, "egress[0].gateway: needs the API gateway, which "
				   "port0.yaml turns off (gateway.port: 0)"));
	policy_free(p);
	/* a policy without gateway: is fine with the gateway off */
	p = parse_ok(RULE);
	assert_int_equal(policy_gateway_check(p, &c, &err), 0);
	policy_free(p);
	config_done(&c);
}

/* Valid, but surely not meant: policy_gateway_warnings(). */
static void test_gateway_warnings(void **state)
{
	static const char cfg_yaml[] =
		"credentials:\n"
		"  openai:\n    header: Authorization\n    placeholder: netd-placeholder-openai-0001\n"
		"    hosts: [api.openai.com]\n    value: sk-1\n"
		"  wide:\n    header: Authorization\n    placeholder: netd-placeholder-wide-00001\n"
		"    hosts: [\"*.example.com\"]\n    value: w-1\n";
	struct policy_gw_warning w[8];
	struct diag err = { 0 };
	struct policy *p;
	struct config c;
	size_t n;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_parse(&c, cfg_yaml, strlen(cfg_yaml), "netd.yaml", &err), 0);

	/* nothing to say: 443, upper-case methods, hosts that cover the domain */
	p = parse_ok(RULE "    gateway: { credentials: [wide], methods: [GET, M-SEARCH, x] }\n");
	assert_int_equal(policy_gateway_warnings(p, &c, NULL, 0), 0);
	policy_free(p);

	/* a credential whose hosts cover none of the domains: at the name */
	p = parse_ok(RULE "    gateway: { credentials: [wide, openai] }\n");
	n = policy_gateway_warnings(p, &c, w, 8);
	assert_int_equal(n, 1);
	assert_int_equal(w[0].at.line, 5);
	assert_int_equal(w[0].at.col, 36);
	assert_non_null(strstr(w[0].msg, "egress[0].gateway.credentials[1]: the hosts of "
				  "credential 'openai' (api.openai.com) cover none of this rule's "
				  "domains"));
	assert_non_null(strstr(w[0].msg, "credential-misdirected"));
	/* without a netd.yaml: not checked */
	assert_int_equal(policy_gateway_warnings(p, NULL, NULL, 0), 0);
	policy_free(p);
	/* wildcards overlap either way; a suffix is not below itself */
	p = parse_ok("name: t\negress:\n  - domains: [\"*.a.example.com\", example.com]\n"
		     "    ports: [443]\n    gateway: { credentials: [wide] }\n");
	assert_int_equal(policy_gateway_warnings(p, &c, NULL, 0), 0);
	policy_free(p);
	p = parse_ok("name: t\negress:\n  - domains: [example.com, \"*.openai.com\"]\n"
		     "    ports: [443]\n    gateway: { credentials: [openai] }\n");
	assert_int_equal(policy_gateway_warnings(p, &c, NULL, 0), 0);
	policy_free(p);
	p = parse_ok("name: t\negress:\n  - domains: [example.com]\n"
		     "    ports: [443]\n    gateway: { credentials: [wide] }\n");
	assert_int_equal(policy_gateway_warnings(p, &c, NULL, 0), 1);
	policy_free(p);

	/* methods: [get]: case-sensitive, at the method */
	p = parse_ok(RULE "    gateway: { methods: [GET, get, Post] }\n");
	n = policy_gateway_warnings(p, NULL, w, 8);
	assert_int_equal(n, 2);
	assert_int_equal(w[0].at.line, 5);
	assert_int_equal(w[0].at.col, 31);
	assert_non_null(strstr(w[0].msg, "egress[0].gateway.methods[1]: 'get': methods are "
				  "case-sensitive (RFC 9110 9.1); did you mean GET?"));
	assert_non_null(strstr(w[1].msg, "did you mean POST?"));
	policy_free(p);

	/* a port but 443: the gateway terminates TLS only */
	p = parse_ok("name: t\negress:\n  - domains: [api.example.com]\n"
		     "    ports: [80, 443, 8080]\n    gateway: {}\n");
	n = policy_gateway_warnings(p, NULL, w, 1);
	assert_int_equal(n, 2);	/* counted past @max */
	assert_int_equal(w[0].at.line, 5);
	assert_non_null(strstr(w[0].msg, "egress[0].gateway: port 80 is steered to the gateway, "
				  "which terminates TLS only"));
	n = policy_gateway_warnings(p, NULL, w, 8);
	assert_non_null(strstr(w[1].msg, "port 8080 is steered"));
	policy_free(p);
	config_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_good_forms),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_rate_format),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_max_items),
		cmocka_unit_test(test_every_rule_error),
		cmocka_unit_test(test_cred_name_valid),
		cmocka_unit_test(test_gateway_check),
		cmocka_unit_test(test_gateway_check_off),
		cmocka_unit_test(test_gateway_warnings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
