/*
 * test_policyview - a policy seen from outside (netd/daemon/policyview.c):
 * its JSON (GET /v1/policies/NAME, `netd policy show`) and its digest (the
 * reload's change detection, the state dir's digest files).  Every key a
 * policy has must show and must change the digest: a new user found a
 * reload that only added `tls: { sni: enforce }` reported "no sandbox
 * changed" and left the ruleset as it was (issue 32).  A policy without
 * the per-rule keys keeps the digest it always had, so upgrading does not
 * drop the pins of every sandbox (a wildcard rule's dns: defaults included).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/daemon/policyview.h"

#define BASE "name: web\negress:\n  - domains: [a.example]\n    ports: [443]\n"

static struct policy *pol(const char *yaml)
{
	struct policy *p = NULL;
	struct diag err = { 0 };

	if (policy_parse(yaml, strlen(yaml), "t.yaml", &p, &err) != 0)
		fail_msg("%s:%u:%u: %s", err.file, err.line, err.col, err.msg);
	return p;
}

static void digest_of(const char *yaml, char *buf)
{
	struct policy *p = pol(yaml);

	pview_digest(p, buf, PVIEW_DIGEST_LEN);
	assert_int_equal(strlen(buf), PVIEW_DIGEST_LEN - 1);
	policy_free(p);
}

/* @key's value in the first rule of @yaml's JSON, compact; "" if absent. */
static void rule_key(const char *yaml, const char *key, char *out, size_t sz)
{
	struct policy *p = pol(yaml);
	json_t *j = pview_json(p), *v;
	char *s;

	assert_non_null(j);
	v = json_object_get(json_array_get(json_object_get(j, "egress"), 0), key);
	s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS) : NULL;
	snprintf(out, sz, "%s", s ? s : "");
	free(s);
	json_decref(j);
	policy_free(p);
}

static void test_every_rule_key_shows(void **state)
{
	char v[256];

	(void)state;
	rule_key(BASE "    tls: { sni: enforce }\n", "tls", v, sizeof(v));
	assert_string_equal(v, "{\"sni\":\"enforce\"}");
	rule_key(BASE "    tls: { sni: log, ech: keep }\n", "tls", v, sizeof(v));
	assert_string_equal(v, "{\"ech\":\"keep\",\"sni\":\"log\"}");
	rule_key(BASE "    tls: { ech: strip }\n    http: { host: enforce }\n", "tls", v, sizeof(v));
	assert_string_equal(v, "{\"ech\":\"strip\"}");
	rule_key(BASE "    http: { host: log }\n", "http", v, sizeof(v));
	assert_string_equal(v, "{\"host\":\"log\"}");
	rule_key(BASE "    min_ttl: 300\n", "min_ttl", v, sizeof(v));
	assert_string_equal(v, "300");
	rule_key(BASE "    max_qname_length: 40\n", "max_qname_length", v, sizeof(v));
	assert_string_equal(v, "40");
	rule_key(BASE "    idle_grace: 0\n", "idle_grace", v, sizeof(v));
	assert_string_equal(v, "0");
	rule_key(BASE "    idle_grace: 90\n", "idle_grace", v, sizeof(v));
	assert_string_equal(v, "90");
	/* defaults are not shown (and so do not change old digests) */
	rule_key(BASE, "tls", v, sizeof(v));
	assert_string_equal(v, "");
	rule_key(BASE "    tls: { sni: off }\n", "tls", v, sizeof(v));
	assert_string_equal(v, "");
	rule_key(BASE, "idle_grace", v, sizeof(v));
	assert_string_equal(v, "");
	/* gateway: every key it has, the rate in its canonical form (issue 33) */
	rule_key(BASE "    gateway: { credentials: [openai], rate: 300/m, methods: [GET, post],"
		 " paths: [\"/v1/*\"] }\n", "gateway", v, sizeof(v));
	assert_string_equal(v, "{\"credentials\":[\"openai\"],\"methods\":[\"GET\",\"post\"],"
			    "\"paths\":[\"/v1/*\"],\"rate\":\"5/s burst 5\"}");
	rule_key(BASE "    gateway: { rate: 90/m burst 4 }\n", "gateway", v, sizeof(v));
	assert_string_equal(v, "{\"rate\":\"90/m burst 4\"}");
	rule_key(BASE "    gateway: {}\n", "gateway", v, sizeof(v));
	assert_string_equal(v, "{}");
	rule_key(BASE, "gateway", v, sizeof(v));
	assert_string_equal(v, "");
	/* dns: as written, canonical; a wildcard rule's defaults are not shown (issue 25) */
	rule_key(BASE "    dns: { budget: 60/3600s, encoded: log }\n", "dns", v, sizeof(v));
	assert_string_equal(v, "{\"budget\":\"60/1h\",\"encoded\":\"log\"}");
	rule_key(BASE "    dns: { budget: 0 }\n", "dns", v, sizeof(v));
	assert_string_equal(v, "{\"budget\":\"off\",\"encoded\":\"off\"}");
	rule_key("name: web\negress:\n  - domains: [\"*.a.example\"]\n    ports: [443]\n", "dns",
		 v, sizeof(v));
	assert_string_equal(v, "");
}

static void test_every_key_changes_the_digest(void **state)
{
	static const char *const variants[] = {
		BASE,
		BASE "    tls: { sni: enforce }\n",
		BASE "    tls: { sni: log }\n",
		BASE "    tls: { sni: log, ech: strip }\n",
		BASE "    tls: { sni: log, ech: keep }\n",
		BASE "    http: { host: enforce }\n",
		BASE "    http: { host: log }\n",
		BASE "    min_ttl: 300\n",
		BASE "    max_qname_length: 40\n",
		BASE "    idle_grace: 0\n",
		BASE "    idle_grace: 90\n",
		BASE "    gateway: {}\n",
		BASE "    gateway: { credentials: [openai] }\n",
		BASE "    gateway: { credentials: [openai, other] }\n",
		BASE "    gateway: { rate: 5/s }\n",
		BASE "    gateway: { rate: 5/s burst 20 }\n",
		BASE "    gateway: { rate: 5/m }\n",
		BASE "    gateway: { methods: [GET] }\n",
		BASE "    gateway: { methods: [get] }\n",
		BASE "    gateway: { paths: [\"/v1/*\"] }\n",
		BASE "    gateway: { paths: [/v1/] }\n",
		BASE "    dns: {}\n",
		BASE "    dns: { budget: 500/10m }\n",
		BASE "    dns: { budget: 500/1h }\n",
		BASE "    dns: { encoded: log }\n",
	};
	char d[sizeof(variants) / sizeof(variants[0])][PVIEW_DIGEST_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		digest_of(variants[i], d[i]);
		for (size_t k = 0; k < i; k++)
			if (strcmp(d[i], d[k]) == 0)
				fail_msg("variants %zu and %zu have the same digest %s", k, i, d[i]);
	}
}

/*
 * A policy without the per-rule keys: the digest it had before they were
 * shown (computed on a613c00), so the digest files of a state dir stay valid.
 */
static void test_old_digests_stay(void **state)
{
	char d[PVIEW_DIGEST_LEN];

	(void)state;
	digest_of("name: web\negress:\n  - domains: [a.example, \"*.b.example\"]\n"
		  "    except: [x.b.example]\n    ports: [443, 8443]\n"
		  "  - cidrs: [198.51.100.0/24]\n    ports: [80, 8000-8080]\n    protocol: udp\n"
		  "limits: { egress_bytes: 5M, connections: 10 }\non_deny: reject\n", d);
	assert_string_equal(d, "5fa4a70620b5e71b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_rule_key_shows),
		cmocka_unit_test(test_every_key_changes_the_digest),
		cmocka_unit_test(test_old_digests_stay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
