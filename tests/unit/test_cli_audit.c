/*
 * test_cli_audit - `netd audit`'s record filters (netd/cli/cli_audit.c):
 * --verdict (what a record without a "verdict" counts as), --reason,
 * --dst ADDR|CIDR (dst, and a DNS record's answers), --port.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "netd/cli/cli_audit.h"
#include "netd/cli/cli_help.h"

static json_t *rec(const char *text)
{
	json_t *r = json_loads(text, 0, NULL);

	assert_non_null(r);
	return r;
}

static const char conn[] = "{\"event\":\"conn\",\"sandbox\":\"sb1\",\"proto\":\"tcp\","
			   "\"dst\":\"198.51.100.10\",\"dport\":443,\"domain\":\"pypi.org\"}";
static const char deny[] = "{\"event\":\"deny\",\"sandbox\":\"sb1\",\"proto\":\"tcp\","
			   "\"dst\":\"203.0.113.66\",\"dport\":80,\"reason\":\"not-pinned\","
			   "\"count\":3}";
static const char dns[] = "{\"event\":\"dns\",\"sandbox\":\"sb1\",\"qname\":\"pypi.org\","
			  "\"qtype\":\"A\",\"verdict\":\"allow\",\"reason\":\"policy\","
			  "\"rcode\":\"NOERROR\",\"answers\":[\"198.51.100.10\"]}";
static const char life[] = "{\"event\":\"sandbox\",\"sandbox\":\"sb1\",\"action\":\"create\"}";

static void test_verdict(void **state)
{
	struct audit_filter f = { .port = -1, .verdict = "deny" };
	json_t *c = rec(conn), *d = rec(deny), *q = rec(dns), *l = rec(life);

	(void)state;
	assert_string_equal(cli_audit_verdict(c), "allow");
	assert_string_equal(cli_audit_verdict(d), "deny");
	assert_string_equal(cli_audit_verdict(q), "allow");
	assert_null(cli_audit_verdict(l));
	assert_false(cli_audit_match(&f, c));
	assert_true(cli_audit_match(&f, d));
	assert_false(cli_audit_match(&f, q));
	assert_false(cli_audit_match(&f, l));	/* no verdict: not a match */
	f.verdict = "allow";
	assert_true(cli_audit_match(&f, c));
	assert_true(cli_audit_match(&f, q));
	json_decref(c), json_decref(d), json_decref(q), json_decref(l);
}

static void test_reason_port(void **state)
{
	struct audit_filter f = { .port = -1, .reason = "not-pinned" };
	json_t *c = rec(conn), *d = rec(deny);

	(void)state;
	assert_false(cli_audit_match(&f, c));
	assert_true(cli_audit_match(&f, d));
	f.reason = "to-host";
	assert_false(cli_audit_match(&f, d));
	f.reason = NULL;
	f.port = 443;
	assert_true(cli_audit_match(&f, c));
	assert_false(cli_audit_match(&f, d));
	f.port = 0;	/* a port filter never matches records without dport */
	assert_false(cli_audit_match(&f, c));
	json_decref(c), json_decref(d);
}

static void test_dst(void **state)
{
	struct audit_filter f = { .port = -1, .has_dst = true };
	json_t *c = rec(conn), *d = rec(deny), *q = rec(dns), *l = rec(life);

	(void)state;
	assert_int_equal(prefix_parse("198.51.100.0/24", &f.dst), 0);
	assert_true(cli_audit_match(&f, c));
	assert_false(cli_audit_match(&f, d));
	assert_true(cli_audit_match(&f, q));	/* by its answer */
	assert_false(cli_audit_match(&f, l));
	assert_int_equal(prefix_parse("203.0.113.66/32", &f.dst), 0);
	assert_false(cli_audit_match(&f, c));
	assert_true(cli_audit_match(&f, d));
	assert_int_equal(prefix_parse("2001:db8::/32", &f.dst), 0);
	assert_false(cli_audit_match(&f, d));	/* other family */
	json_decref(c), json_decref(d), json_decref(q), json_decref(l);
}

/* An http record: DESTINATION is its upstream, DOMAIN its host; the filters read them. */
static void test_http(void **state)
{
	static const char http4[] = "{\"event\":\"http\",\"sandbox\":\"sb1\","
		"\"method\":\"GET\",\"host\":\"api.gw.dt.example\",\"path\":\"/v1/models\","
		"\"status\":200,\"upstream\":\"198.51.100.60:443\"}";
	static const char http6[] = "{\"event\":\"http\",\"host\":\"v6.gw.dt.example\","
		"\"upstream\":\"[2001:db8::60]:8443\"}";
	struct audit_filter f = { .port = -1, .domain = "api.gw.dt.example" };
	json_t *h = rec(http4), *h6 = rec(http6), *c = rec(conn);

	(void)state;
	assert_true(cli_audit_match(&f, h));
	assert_false(cli_audit_match(&f, h6));
	f.domain = "*.dt.example";
	assert_true(cli_audit_match(&f, h));
	assert_true(cli_audit_match(&f, h6));
	f.domain = NULL;
	f.has_dst = true;
	assert_int_equal(prefix_parse("198.51.100.60/32", &f.dst), 0);
	assert_true(cli_audit_match(&f, h));
	assert_false(cli_audit_match(&f, h6));
	assert_int_equal(prefix_parse("2001:db8::/32", &f.dst), 0);
	assert_true(cli_audit_match(&f, h6));
	f.has_dst = false;
	f.port = 443;
	assert_true(cli_audit_match(&f, h));
	assert_true(cli_audit_match(&f, c));
	assert_false(cli_audit_match(&f, h6));
	f.port = 8443;
	assert_true(cli_audit_match(&f, h6));
	json_decref(h), json_decref(h6), json_decref(c);
}

/* --event takes what the help lists, http among them. */
static void test_events(void **state)
{
	(void)state;
	assert_true(cli_audit_event_known("http"));
	assert_true(cli_audit_event_known("dns"));
	assert_true(cli_audit_event_known("netd"));
	assert_true(cli_audit_event_known("conn_late"));
	assert_true(cli_audit_event_known("budget"));	/* netd/daemon/rbudgetglue.c writes it */
	assert_false(cli_audit_event_known("htt"));
	assert_false(cli_audit_event_known(""));
	assert_false(cli_audit_event_known("dns,"));
	assert_non_null(strstr(CLI_AUDIT_EVENTS, "http"));
}

/* Record @text's DETAIL is @want. */
static void detail_is(const char *text, const char *want)
{
	char det[512];
	json_t *r = rec(text);

	assert_string_equal(cli_audit_detail(r, det, sizeof(det)), want);
	json_decref(r);
}

/* The table's DETAIL: what each kind of record says there. */
static void test_detail(void **state)
{
	static const char closed[] =
		"{\"event\":\"budget\",\"sandbox\":\"sb1\",\"policy\":\"p\","
		"\"rule\":\"api.openai.com tcp\",\"action\":\"closed\",\"budget\":\"1GB/day\","
		"\"budget_bytes\":1000000000,\"used_bytes\":1000291816,\"window_start\":0,"
		"\"window_end\":86400,\"pins_removed\":2,\"connections_cut\":1}";
	static const char opened[] =
		"{\"event\":\"budget\",\"sandbox\":\"sb1\",\"rule\":\"dns.example udp\","
		"\"action\":\"opened\",\"budget\":\"10MiB/hour\",\"used_bytes\":0}";
	static const char odd[] = "{\"event\":\"budget\",\"rule\":\"a\\u0001b c\"}";

	(void)state;
	detail_is(closed, "closed api.openai.com tcp: 1000291816 of 1GB/day");
	detail_is(opened, "opened dns.example udp: 0 of 10MiB/hour");
	/* The log is not trusted: one cell per word, '?' for the rest. */
	detail_is(odd, "- a?b c: - of -");
	detail_is("{\"event\":\"budget\"}", "- -: - of -");
	/* The others, as before. */
	detail_is(deny, "not-pinned x3");
	detail_is(dns, "allow");
	detail_is(life, "create");
	detail_is(conn, "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_reason_port),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_detail),
		cmocka_unit_test(test_dst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
