/*
 * test_policy_bw - a policy's bandwidth limits and rule budgets
 * (netd/model/policy_bw.c): the rate and budget syntax, their canonical
 * forms, the YAML keys with FILE:LINE:COL errors (the fixtures under
 * tests/policy/ are test_policy's), the rule key; and the budget counters
 * (netd/model/rbudget.c): windows, closing at the budget, carrying over a
 * reload and a restart.
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

#include "netd/api/ctlreq.h"
#include "netd/model/rbudget.h"
#include "netd/model/policy.h"

static struct policy *parse(const char *yaml, struct diag *err)
{
	struct policy *p = NULL;

	memset(err, 0, sizeof(*err));
	if (policy_parse(yaml, strlen(yaml), "t.yaml", &p, err) < 0)
		return NULL;
	return p;
}

static void test_rate_parse(void **state)
{
	static const struct {
		const char *in;
		int r;
		uint64_t bps;
		const char *why;
	} t[] = {
		{ "20mbit", 0, 20000000, NULL }, { "100mbit", 0, 100000000, NULL }, { "8kbit", 0, 8000, NULL },
		{ "100gbit", 0, 100000000000ull, NULL }, { "1.5gbit", 0, 1500000000, NULL },
		{ "20Mbit", 0, 20000000, NULL }, { "64000bit", 0, 64000, NULL }, { "0.5mbit", 0, 500000, NULL },
		{ "20 mbps", -EINVAL, 0, "'mbps' is not a unit" },
		{ "20 mbps", -EINVAL, 0, "write 20mbit" },
		{ "20 mbit", -EINVAL, 0, "no space" },
		{ "20mbps", -EINVAL, 0, "write 20mbit" },
		{ "20MB", -EINVAL, 0, "write 20mbit" },
		{ "-5mbit", -EINVAL, 0, "positive" },
		{ "0mbit", -ERANGE, 0, "zero" }, { "0bit", -ERANGE, 0, "zero" },
		{ "7999bit", -ERANGE, 0, "under the minimum 8kbit" },
		{ "101gbit", -ERANGE, 0, "over the limit 100gbit" },
		{ "100000000001bit", -ERANGE, 0, "over the limit" },
		{ "99999999999999999999gbit", -ERANGE, 0, "over the limit" },
		{ "20000000", -EINVAL, 0, "needs a unit" },
		{ "mbit", -EINVAL, 0, "expected a number" },
		{ "", -EINVAL, 0, "expected a number" },
		{ "20furlong", -EINVAL, 0, "unknown unit" },
		{ "1.5bit", -EINVAL, 0, "whole number" },
		{ "1.0000000001gbit", -EINVAL, 0, "9 digits" },
		/* A bare prefix is no bps slip: no word of tc's 'mbps' then. */
		{ "10m", -EINVAL, 0, "write 10mbit)" },
		{ "10k", -EINVAL, 0, "write 10kbit)" },
		{ "20mbps", -EINVAL, 0, "tc reads 'mbps' as megabytes" },
		{ "20MB", -EINVAL, 0, "'MB' is bytes" },
		/* A bare 0: the zero answer at once, not "needs a unit". */
		{ "0", -ERANGE, 0, "zero: a rate is at least 8kbit (to set no limit, leave the key out)" },
		{ "0.0", -ERANGE, 0, "zero" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t v = 0;
		char why[256] = "";
		int r = policy_rate_parse(t[i].in, strlen(t[i].in), &v, why, sizeof(why));

		if (r != t[i].r || (r == 0 && v != t[i].bps) ||
		    (t[i].why && !strstr(why, t[i].why)) ||
		    (strstr(why, "tc reads") && !strstr(t[i].in, "ps") && !strstr(t[i].in, "/s")))
			fail_msg("'%s': r=%d v=%llu why=\"%s\"", t[i].in, r, (unsigned long long)v, why);
	}
}

static void test_rate_format(void **state)
{
	char b[POLICY_RATE_STRLEN];

	(void)state;
	assert_string_equal(policy_rate_format(20000000, b, sizeof(b)), "20mbit");
	assert_string_equal(policy_rate_format(1500000000, b, sizeof(b)), "1500mbit");
	assert_string_equal(policy_rate_format(100000000000ull, b, sizeof(b)), "100gbit");
	assert_string_equal(policy_rate_format(8001, b, sizeof(b)), "8001bit");
	/* What it writes reads back as the same rate. */
	for (uint64_t v = 8000; v < 100000000000ull; v = v * 7 + 13) {
		uint64_t back = 0;
		char why[128];

		policy_rate_format(v, b, sizeof(b));
		assert_int_equal(policy_rate_parse(b, strlen(b), &back, why, sizeof(why)), 0);
		assert_true(back == v);
	}
}

static void test_budget_parse(void **state)
{
	static const struct {
		const char *in;
		int r;
		uint64_t bytes;
		uint32_t per;
		const char *why;
	} t[] = {
		{ "1GB/day", 0, 1000000000, 86400, NULL }, { "500MB/hour", 0, 500000000, 3600, NULL },
		{ "1GiB/day", 0, 1ull << 30, 86400, NULL }, { "10KiB/hour", 0, 10240, 3600, NULL },
		{ "1024B/day", 0, 1024, 86400, NULL }, { "2TB/day", 0, 2000000000000ull, 86400, NULL },
		{ "1gB/day", 0, 1000000000, 86400, NULL },
		{ "1GB/week", -EINVAL, 0, 0, "/hour or /day" },
		{ "1GB", -EINVAL, 0, 0, "needs a window" },
		{ "1Gb/day", -EINVAL, 0, 0, "'b' is bits" },
		{ "1 GB/day", -EINVAL, 0, 0, "no spaces" },
		{ "1/day", -EINVAL, 0, 0, "no unit" },
		{ "0GB/day", -ERANGE, 0, 0, "zero" },
		{ "-1GB/day", -EINVAL, 0, 0, "positive" },
		{ "2000TB/day", -ERANGE, 0, 0, "over the limit" },
		{ "GB/day", -EINVAL, 0, 0, "expected bytes" },
		/* GB is fine; the fraction is not, and the same budget in whole bytes is named. */
		{ "1.5GB/day", -EINVAL, 0, 0, "a whole number of bytes: write 1500MB/day" },
		{ "1.5GiB/hour", -EINVAL, 0, 0, "write 1536MiB/hour" },
		{ "0.5B/day", -EINVAL, 0, 0, "a whole number of bytes" },
		{ "1.5XB/day", -EINVAL, 0, 0, "unknown unit" },
		/* Up to 1PiB, inclusive, in any unit: PB and PiB too. */
		{ "1PB/day", 0, 1000000000000000ull, 86400, NULL },
		{ "1PiB/day", 0, 1ull << 50, 86400, NULL },
		{ "1024TiB/hour", 0, 1ull << 50, 3600, NULL },
		{ "1125899906842624B/day", 0, 1ull << 50, 86400, NULL },
		{ "1125899906842625B/day", -ERANGE, 0, 0, "over the limit 1PiB" },
		{ "1025TiB/day", -ERANGE, 0, 0, "over the limit 1PiB" },
		{ "2PB/day", -ERANGE, 0, 0, "over the limit 1PiB" },
		{ "2PiB/day", -ERANGE, 0, 0, "over the limit 1PiB" },
		{ "99999999999999999999B/day", -ERANGE, 0, 0, "over the limit 1PiB" },
		/* A bare 0: the zero answer, not "needs a window". */
		{ "0", -ERANGE, 0, 0, "zero: a budget is at least 1B" },
		{ "0.0GB/day", -ERANGE, 0, 0, "zero" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t v = 0;
		uint32_t per = 0;
		char why[256] = "";
		int r = policy_budget_parse(t[i].in, strlen(t[i].in), &v, &per, why, sizeof(why));

		if (r != t[i].r || (r == 0 && (v != t[i].bytes || per != t[i].per)) ||
		    (t[i].why && !strstr(why, t[i].why)))
			fail_msg("'%s': r=%d v=%llu per=%u why=\"%s\"", t[i].in, r,
				 (unsigned long long)v, per, why);
	}
}

static void test_budget_format(void **state)
{
	char b[POLICY_BUDGET_STRLEN];

	(void)state;
	assert_string_equal(policy_budget_format(1000000000, 86400, b, sizeof(b)), "1GB/day");
	assert_string_equal(policy_budget_format(1ull << 30, 3600, b, sizeof(b)), "1GiB/hour");
	assert_string_equal(policy_budget_format(1500, 86400, b, sizeof(b)), "1500B/day");
	assert_string_equal(policy_budget_format(3000000, 3600, b, sizeof(b)), "3MB/hour");
	assert_string_equal(policy_budget_format(1ull << 50, 86400, b, sizeof(b)), "1PiB/day");
	assert_string_equal(policy_budget_format(1000000000000000ull, 86400, b, sizeof(b)),
			    "1PB/day");
	assert_string_equal(policy_budget_format(3000000000000000ull, 86400, b, sizeof(b)),
			    "3PB/day");
}

static void test_policy_keys(void **state)
{
	static const char yaml[] =
		"name: bw\n"
		"egress:\n"
		"  - domains: [api.openai.com]\n    ports: [443]\n    budget: 1GB/day\n"
		"  - domains: [pypi.org]\n    ports: [443]\n"
		"  - domains: [dns.example]\n    ports: [53]\n    protocol: udp\n"
		"    budget: 10MiB/hour\n"
		"  - cidrs: [198.51.100.7/32]\n    ports: [8080]\n"
		"limits: { bandwidth: { egress: 20mbit, ingress: 100mbit }, connections: 10 }\n";
	char key[POLICY_RULE_KEY_MAX];
	struct diag err;
	struct policy *p = parse(yaml, &err);

	(void)state;
	assert_non_null(p);
	assert_true(p->bw_egress_bps == 20000000);
	assert_true(p->bw_ingress_bps == 100000000);
	assert_int_equal(p->max_conns, 10);
	assert_true(p->rules[0].budget_bytes == 1000000000);
	assert_int_equal(p->rules[0].budget_period_s, 86400);
	assert_true(p->rules[1].budget_bytes == 0);
	assert_true(p->rules[2].budget_bytes == 10u << 20);
	assert_int_equal(p->rules[2].budget_period_s, 3600);
	assert_string_equal(policy_rule_key(&p->rules[0], key, sizeof(key)), "api.openai.com tcp");
	assert_string_equal(policy_rule_key(&p->rules[2], key, sizeof(key)), "dns.example udp");
	assert_string_equal(policy_rule_key(&p->rules[3], key, sizeof(key)),
			    "198.51.100.7/32 tcp");
	policy_free(p);

	/* One direction alone is fine; neither is an error, as is an unknown key. */
	p = parse("name: a\negress: []\nlimits: { bandwidth: { ingress: 1gbit } }\n", &err);
	assert_non_null(p);
	assert_true(p->bw_egress_bps == 0 && p->bw_ingress_bps == 1000000000);
	policy_free(p);
	assert_null(parse("name: a\negress: []\nlimits: { bandwidth: {} }\n", &err));
	assert_int_equal(err.line, 3);
	assert_non_null(strstr(err.msg, "expected egress and/or ingress"));
	assert_null(parse("name: a\negress: []\nlimits: { bandwidth: { upload: 1mbit } }\n", &err));
	assert_int_equal(err.line, 3);
	assert_int_equal(err.col, 24);
	assert_null(parse("name: a\negress: []\nlimits: { bandwidth: 20mbit }\n", &err));
	assert_non_null(strstr(err.msg, "limits.bandwidth: expected a mapping"));
	assert_null(parse("name: a\negress:\n  - cidrs: [192.0.2.0/24]\n    ports: [1]\n"
			  "    budget: 1GB/day\n", &err));
	assert_int_equal(err.line, 5);
	assert_non_null(strstr(err.msg, "only a 'domains' rule has a budget"));
	assert_null(parse("name: a\negress: []\nlimits: { bandwidth: 20mbit }\n", &err));
	assert_non_null(strstr(err.msg, "limits.bandwidth: expected a mapping"));
	assert_null(parse("name: a\negress:\n  - domains: [a.example]\n    ports: [1]\n"
			  "    budget: [1GB/day]\n", &err));
	assert_int_equal(err.line, 5);
	assert_non_null(strstr(err.msg, "egress[0].budget: expected bytes per window"));
}

/* At most POLICY_BUDGET_RULES rules may have a budget: the next is the error. */
static void test_budget_rules_max(void **state)
{
	char *yaml = malloc(64 * 1024);
	size_t n = (size_t)sprintf(yaml, "name: many\negress:\n");
	struct diag err;

	(void)state;
	for (int i = 0; i <= POLICY_BUDGET_RULES; i++)
		n += (size_t)sprintf(yaml + n, "  - domains: [h%d.example]\n    ports: [443]\n"
				     "    budget: 1MB/hour\n", i);
	assert_null(parse(yaml, &err));
	assert_int_equal(err.line, 3 + 3 * POLICY_BUDGET_RULES);
	assert_non_null(strstr(err.msg, "more than 64 rules with a budget"));
	free(yaml);
}

/*
 * Two budgeted rules of one policy may not share a key: their counters
 * would be one state-file entry, one metric series.  The second rule is
 * the error, and the message names the first.
 */
static void test_budget_key_unique(void **state)
{
	static const char dup[] =
		"name: k\n"
		"egress:\n"
		"  - domains: [api.openai.com]\n    ports: [443]\n    budget: 1MB/day\n"
		"  - domains: [pypi.org]\n    ports: [443]\n    budget: 1MB/day\n"
		"  - domains: [api.openai.com, other.example]\n    ports: [80]\n"
		"    budget: 2MB/day\n";
	struct diag err;
	struct policy *p;

	(void)state;
	assert_null(parse(dup, &err));
	assert_int_equal(err.line, 9);
	assert_int_equal(err.col, 5);
	assert_non_null(strstr(err.msg, "egress[2]: its budget would share the key "
				       "'api.openai.com tcp' with egress[0]'s"));
	assert_non_null(strstr(err.msg, "put both ports in one rule or list another domain first"));
	/* Another protocol, or no budget on one of them: two keys, or one counter. */
	p = parse("name: k\negress:\n"
		  "  - domains: [api.openai.com]\n    ports: [443]\n    budget: 1MB/day\n"
		  "  - domains: [api.openai.com]\n    ports: [443]\n    protocol: udp\n"
		  "    budget: 1MB/day\n"
		  "  - domains: [api.openai.com]\n    ports: [80]\n", &err);
	assert_non_null(p);
	policy_free(p);
}

#define DAY 86400
#define T0 ((int64_t)20000 * DAY + 3600)	/* 01:00 UTC of some day */

static struct policy *two_budgets(const char *a, const char *b)
{
	char yaml[512];
	struct diag err;

	snprintf(yaml, sizeof(yaml), "name: b\negress:\n"
		 "  - domains: [api.example]\n    ports: [443]\n    budget: %s\n"
		 "  - domains: [free.example]\n    ports: [443]\n"
		 "  - domains: [\"*.cdn.example\"]\n    ports: [80]\n    budget: %s\n", a, b);
	return parse(yaml, &err);
}

static void test_budget_counters(void **state)
{
	struct policy *p = two_budgets("1000B/day", "100B/hour");
	struct rbudget_set *s = NULL;

	(void)state;
	assert_non_null(p);
	assert_int_equal(rbudget_sync(&s, p, T0, NULL, 0), 0);
	assert_non_null(s);
	assert_int_equal(s->n, 2);
	assert_int_equal(s->c[0].rule, 0);
	assert_int_equal(s->c[1].rule, 2);
	assert_true(s->c[0].window_s == T0 - 3600);	/* midnight UTC */
	assert_true(s->c[1].window_s == T0);
	assert_int_equal(rbudget_add(s, 1, 10, T0), -ENOENT);	/* no budget there */
	assert_int_equal(rbudget_add(s, 0, 999, T0), 0);
	assert_false(rbudget_closed(s, 0));
	assert_int_equal(rbudget_add(s, 0, 1, T0 + 5), 1);	/* exactly the budget: closed */
	assert_true(rbudget_closed(s, 0));
	assert_int_equal(rbudget_add(s, 0, 500, T0 + 6), 0);	/* counted, not closed twice */
	assert_true(rbudget_of(s, 0)->used == 1500);
	assert_true(rbudget_of(s, 0)->exceeded == 1);
	assert_false(rbudget_closed(s, 2));
	/* The hour rolls for rule 2, not the day for rule 0. */
	assert_int_equal(rbudget_add(s, 2, 100, T0 + 10), 1);
	assert_true(rbudget_closed(s, 2));
	assert_int_equal(rbudget_roll(s, T0 + 3599), 0);
	assert_int_equal(rbudget_roll(s, T0 + 3600), 1);
	assert_false(rbudget_closed(s, 2));
	assert_true(rbudget_of(s, 2)->used == 0);
	assert_true(rbudget_closed(s, 0));
	/* The next day opens rule 0 again. */
	assert_int_equal(rbudget_roll(s, T0 - 3600 + DAY), 1);
	assert_false(rbudget_closed(s, 0));
	rbudget_free(s);
	policy_free(p);
}

/* A reload keeps counters by the rule's key; a raised budget opens a closed rule. */
static void test_budget_reload_restart(void **state)
{
	struct policy *p = two_budgets("1000B/day", "100B/hour"), *q;
	struct rbudget_set *s = NULL, *r = NULL;
	struct rbudget_saved saved[2];

	(void)state;
	assert_int_equal(rbudget_sync(&s, p, T0, NULL, 0), 0);
	assert_int_equal(rbudget_add(s, 0, 1000, T0), 1);
	assert_int_equal(rbudget_add(s, 2, 40, T0), 0);
	q = two_budgets("2000B/day", "100B/hour");
	assert_int_equal(rbudget_sync(&s, q, T0 + 1, NULL, 0), 0);
	assert_true(rbudget_of(s, 0)->used == 1000);
	assert_false(rbudget_closed(s, 0));
	assert_true(rbudget_of(s, 2)->used == 40);
	/* The window's length changed: a fresh counter. */
	policy_free(p);
	p = two_budgets("2000B/day", "100B/day");
	assert_int_equal(rbudget_sync(&s, p, T0 + 2, NULL, 0), 0);
	assert_true(rbudget_of(s, 2)->used == 0);
	assert_int_equal(rbudget_add(s, 0, 1000, T0 + 3), 1);
	/* A restart: the state file's counters, same window; another day's are dropped. */
	for (size_t i = 0; i < 2; i++)
		saved[i] = (struct rbudget_saved){ .key = s->c[i].key, .period_s = s->c[i].period_s,
						  .window_s = s->c[i].window_s,
						  .used = s->c[i].used };
	saved[1].window_s -= DAY;
	assert_int_equal(rbudget_sync(&r, p, T0 + 4, saved, 2), 0);
	assert_true(rbudget_closed(r, 0));
	assert_true(rbudget_of(r, 0)->used == 2000);
	assert_true(rbudget_of(r, 2)->used == 0);
	/* A policy without budgets: no set. */
	policy_free(q);
	q = parse("name: n\negress: []\n", &(struct diag){ 0 });
	assert_int_equal(rbudget_sync(&r, q, T0, NULL, 0), 0);
	assert_null(r);
	assert_true(rbudget_window(-1, 3600) == -3600);
	rbudget_free(s);
	policy_free(p);
	policy_free(q);
}

/* POST /v1/sandboxes {"bandwidth": {...}}: rates read as a policy's; 400 otherwise. */
static void test_request_bandwidth(void **state)
{
	static const struct {
		const char *body;
		int r;
		uint64_t eg, in;
		const char *err;
	} t[] = {
		{ "{\"name\":\"a\",\"policy\":\"p\"}", 0, 0, 0, NULL },
		{ "{\"name\":\"a\",\"policy\":\"p\",\"bandwidth\":null}", 0, 0, 0, NULL },
		{ "{\"name\":\"a\",\"policy\":\"p\",\"bandwidth\":{\"egress\":\"20mbit\","
		  "\"ingress\":\"1gbit\"}}", 0, 20000000, 1000000000, NULL },
		{ "{\"name\":\"a\",\"policy\":\"p\",\"bandwidth\":{\"ingress\":\"64kbit\"}}", 0, 0,
		  64000, NULL },
		{ "{\"name\":\"a\",\"policy\":\"p\",\"bandwidth\":{\"egress\":\"20 mbps\"}}", -EINVAL,
		  0, 0, "\"bandwidth.egress\": bad rate \"20 mbps\": 'mbps' is not a unit" },
		{ "{\"name\":\"a\",\"policy\":\"p\",\"bandwidth\":{\"egress\":20000000}}", -EINVAL,
		  0, 0, "must be a string" },
		{ "{\"name\":\"a\",\"policy\":\"p\",\"bandwidth\":{\"upload\":\"1mbit\"}}", -EINVAL,
		  0, 0, "egress, ingress" },
		{ "{\"name\":\"a\",\"policy\":\"p\",\"bandwidth\":\"20mbit\"}", -EINVAL, 0, 0,
		  "must be an object" },
		{ "{\"name\":\"a\",\"policy\":\"p\",\"bandwidth\":{\"ingress\":\"-1mbit\"}}", -EINVAL,
		  0, 0, "positive" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sandbox_request sr;
		json_t *obj = NULL;
		char err[512] = "";
		int r = ctlreq_sandbox(t[i].body, strlen(t[i].body), &sr, &obj, err, sizeof(err));

		if (r != t[i].r || (r == 0 && (sr.bw_egress_bps != t[i].eg ||
					       sr.bw_ingress_bps != t[i].in)) ||
		    (t[i].err && !strstr(err, t[i].err)))
			fail_msg("%s: r=%d err=\"%s\"", t[i].body, r, err);
		json_decref(obj);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_parse),
		cmocka_unit_test(test_rate_format),
		cmocka_unit_test(test_budget_parse),
		cmocka_unit_test(test_budget_format),
		cmocka_unit_test(test_policy_keys),
		cmocka_unit_test(test_budget_rules_max),
		cmocka_unit_test(test_budget_key_unique),
		cmocka_unit_test(test_budget_counters),
		cmocka_unit_test(test_budget_reload_restart),
		cmocka_unit_test(test_request_bandwidth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
