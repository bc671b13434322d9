/*
 * test_suggest - `netd policy suggest`'s core on synthetic audit logs:
 * the exact YAML for a small agent workload, wildcards only when asked
 * and only for several siblings under one registrable domain connected to
 * by name (never over a public suffix, never from connections by address),
 * CIDR rules only for nameless connections (never a never-pin address),
 * the names that share an address, live flows counted once, filters,
 * hostile names, and the same bytes for the same records in any order.
 * Every output is parsed back with policy_parse() and matched.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/model/policy.h"
#include "netd/cli/suggest.h"

/* Feed @log (JSON lines) to a collector for @f; render as @name with @flags; parse it back. */
static char *run_flags(const struct suggest_filter *f, const char *log, const char *name,
		       unsigned int flags, struct policy **ret)
{
	struct suggest *s;
	char *out, *copy = strdup(log), *save = NULL;
	size_t len;
	struct diag err = { 0 };
	char msg[1024];

	assert_int_equal(suggest_new(f, &s), 0);
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_error_t je;
		json_t *rec = json_loads(l, 0, &je);

		if (!rec)
			fail_msg("bad test line: %s (%s)", l, je.text);
		assert_true(suggest_add(s, rec) >= 0);
		json_decref(rec);
	}
	free(copy);
	assert_int_equal(suggest_render(s, name, "audit.jsonl", flags, &out, &len), 0);
	assert_int_equal(strlen(out), len);
	suggest_free(s);
	if (policy_parse(out, len, "suggested.yaml", ret, &err) != 0)
		fail_msg("suggestion does not parse: %s\n%s", diag_format(&err, msg, sizeof(msg)), out);
	return out;
}

/* As `netd policy suggest` by default: exact names only. */
static char *run(const struct suggest_filter *f, const char *log, const char *name,
		 struct policy **ret)
{
	return run_flags(f, log, name, 0, ret);
}

static size_t matches(const struct policy *p, const char *qname)
{
	uint16_t out[8];

	return policy_match(p, qname, out, 8);
}

#define SB "\"sandbox\":\"agent\",\"policy\":\"audit-all\""
#define DNS(ts, q, a) "{\"ts\":\"" ts "\",\"event\":\"dns\"," SB ",\"qname\":\"" q "\",\"qtype\":\"A\"," \
	"\"verdict\":\"allow\",\"reason\":\"audit-mode\",\"would_deny\":\"not-in-policy\",\"answers\":[" a "]}\n"
#define CONN(ts, proto, dst, port, dom, out, in) "{\"ts\":\"" ts "\",\"event\":\"conn\"," SB \
	",\"proto\":\"" proto "\",\"src\":\"10.87.0.2\",\"sport\":40000,\"dst\":\"" dst "\",\"dport\":" \
	#port ",\"domain\":" dom ",\"bytes_out\":" #out ",\"bytes_in\":" #in "}\n"

static const char agent_log[] =
	DNS("2026-11-30T07:00:00.100Z", "pypi.org", "\"198.51.100.10\"")
	DNS("2026-11-30T07:00:00.200Z", "files.pythonhosted.org", "\"198.51.100.11\"")
	DNS("2026-11-30T07:00:00.300Z", "files.pythonhosted.org", "\"198.51.100.11\"")
	DNS("2026-11-30T07:00:01.000Z", "api.openai.com", "\"198.51.100.20\",\"2001:db8::20\"")
	DNS("2026-11-30T07:00:01.500Z", "never.example.net", "\"198.51.100.30\"")
	CONN("2026-11-30T07:02:00.000Z", "tcp", "198.51.100.10", 443, "\"pypi.org\"", 2000, 90000)
	CONN("2026-11-30T07:02:00.100Z", "tcp", "198.51.100.11", 443, "\"files.pythonhosted.org\"", 3000, 900000)
	CONN("2026-11-30T07:02:00.200Z", "tcp", "2001:db8::20", 443, "\"api.openai.com\"", 1500, 6000)
	CONN("2026-11-30T07:02:00.300Z", "tcp", "203.0.113.50", 8080, "null", 120, 0)
	CONN("2026-11-30T07:02:00.400Z", "udp", "203.0.113.53", 5353, "null", 60, 0)
	CONN("2026-11-30T07:02:00.500Z", "tcp", "169.254.169.254", 80, "null", 60, 0)
	"{\"ts\":\"2026-11-30T07:02:01.000Z\",\"event\":\"conn\"," SB ",\"proto\":\"icmp\",\"src\":\"10.87.0.2\","
	"\"sport\":null,\"dst\":\"203.0.113.50\",\"dport\":null,\"icmp_type\":8,\"icmp_code\":0,\"domain\":null}\n"
	/* another sandbox: ignored */
	"{\"ts\":\"2026-11-30T07:00:00.000Z\",\"event\":\"dns\",\"sandbox\":\"other\",\"policy\":\"x\","
	"\"qname\":\"evil.example.org\",\"verdict\":\"allow\",\"reason\":\"policy\",\"answers\":[]}\n";

static const char agent_yaml[] =
	"# Suggested by `netd policy suggest` from what sandbox agent used, as the audit log\n"
	"# audit.jsonl shows (2026-11-30T07:00:00.100Z to 2026-11-30T07:02:01.000Z): 5 DNS records, 6 connections, 5 marked would_deny.\n"
	"# Review every line, then `netd policy check` it and install it in policy_dir.\n"
	"name: agent-suggested\n"
	"description: \"suggested from the audit log of sandbox agent\"\n"
	"egress:\n"
	"  - domains:\n"
	"      - \"api.openai.com\"          # 1 conn, 1500 B out, 6000 B in, 1 query\n"
	"      - \"files.pythonhosted.org\"  # 1 conn, 3000 B out, 900000 B in, 2 queries\n"
	"      - \"pypi.org\"                # 1 conn, 2000 B out, 90000 B in, 1 query\n"
	"    ports: [443]\n"
	"    protocol: tcp\n"
	"  - cidrs:\n"
	"      - \"203.0.113.50/32\"  # 1 conn, 120 B out, 0 B in; connected to without a name\n"
	"    ports: [8080]\n"
	"    protocol: tcp\n"
	"  - cidrs:\n"
	"      - \"203.0.113.53/32\"  # 1 conn, 60 B out, 0 B in; connected to without a name\n"
	"    ports: [5353]\n"
	"    protocol: udp\n"
	"#\n"
	"# Seen but not suggested (review):\n"
	"#   resolved, never connected to: never.example.net (1 query)\n"
	"#   never-pin address: 169.254.169.254 (in 169.254.169.254/32 of the never-pin table), 1 conn\n"
	"#   traffic other than TCP/UDP ports: icmp to 203.0.113.50 (1)\n";

static void test_agent(void **state)
{
	struct suggest_filter f = { .sandbox = "agent" };
	struct policy *p;
	char *out;

	(void)state;
	out = run(&f, agent_log, "agent-suggested", &p);
	if (strcmp(out, agent_yaml) != 0)
		printf("got:\n%s\n", out);
	assert_string_equal(out, agent_yaml);
	assert_int_equal(matches(p, "pypi.org"), 1);
	assert_int_equal(matches(p, "files.pythonhosted.org"), 1);
	assert_int_equal(matches(p, "api.openai.com"), 1);
	assert_int_equal(matches(p, "never.example.net"), 0);
	assert_int_equal(matches(p, "evil.example.org"), 0);
	assert_int_equal(p->rules[0].ports[0].lo, 443);
	assert_int_equal(p->rules[2].proto, IPPROTO_UDP);
	policy_free(p);
	free(out);
}

/* Several siblings under one registrable domain, same ports: one wildcard,
 * with SUGGEST_WILDCARDS (--wildcards) only. */
static void test_wildcards(void **state)
{
	static const char log[] =
		CONN("2026-11-30T07:00:00Z", "tcp", "198.51.100.1", 443, "\"a.example.com\"", 1, 2)
		CONN("2026-11-30T07:00:01Z", "tcp", "198.51.100.2", 443, "\"b.example.com\"", 1, 2)
		CONN("2026-11-30T07:00:02Z", "tcp", "198.51.100.3", 443, "\"c.d.example.com\"", 1, 2)
		CONN("2026-11-30T07:00:03Z", "tcp", "198.51.100.4", 443, "\"example.com\"", 1, 2)
		/* same registrable domain, other port: stays exact */
		CONN("2026-11-30T07:00:04Z", "tcp", "198.51.100.5", 8443, "\"e.example.com\"", 1, 2)
		/* two siblings only: exact */
		CONN("2026-11-30T07:00:05Z", "tcp", "198.51.100.6", 443, "\"x.example.org\"", 1, 2)
		CONN("2026-11-30T07:00:06Z", "tcp", "198.51.100.7", 443, "\"y.example.org\"", 1, 2)
		/* github.io is a public suffix: a.github.io etc. are registrable domains
		 * of their own, so never "*.github.io"; three below a.github.io collapse */
		CONN("2026-11-30T07:00:07Z", "tcp", "198.51.100.8", 443, "\"a.github.io\"", 1, 2)
		CONN("2026-11-30T07:00:08Z", "tcp", "198.51.100.9", 443, "\"b.github.io\"", 1, 2)
		CONN("2026-11-30T07:00:09Z", "tcp", "198.51.100.10", 443, "\"c.github.io\"", 1, 2)
		CONN("2026-11-30T07:00:10Z", "tcp", "198.51.100.11", 443, "\"x.a.github.io\"", 1, 2)
		CONN("2026-11-30T07:00:11Z", "tcp", "198.51.100.12", 443, "\"y.a.github.io\"", 1, 2)
		CONN("2026-11-30T07:00:12Z", "tcp", "198.51.100.13", 443, "\"z.a.github.io\"", 1, 2);
	struct suggest_filter f = { .sandbox = "agent" };
	struct policy *p;
	char *out;

	(void)state;
	/* By default a suggestion opens nothing more than what was seen. */
	out = run(&f, log, "w", &p);
	assert_null(strstr(out, "\"*."));
	assert_int_equal(matches(p, "zzz.example.com"), 0);
	assert_int_equal(matches(p, "a.example.com"), 1);
	assert_int_equal(matches(p, "x.a.github.io"), 1);
	policy_free(p);
	free(out);

	out = run_flags(&f, log, "w", SUGGEST_WILDCARDS, &p);
	assert_non_null(strstr(out, "      - \"*.example.com\"  # 3 conns, 3 B out, 6 B in, 0 queries; "
				    "3 names: a.example.com b.example.com c.d.example.com\n"));
	assert_non_null(strstr(out, "      - \"example.com\"  "));
	assert_null(strstr(out, "*.github.io"));
	assert_null(strstr(out, "*.example.org"));
	assert_non_null(strstr(out, "      - \"*.a.github.io\"  # 3 conns"));	/* x, y, z */
	assert_non_null(strstr(out, "      - \"a.github.io\"  "));	/* itself: exact */
	assert_int_equal(matches(p, "zzz.example.com"), 1);	/* what a wildcard means */
	assert_int_equal(matches(p, "example.com"), 1);
	assert_int_equal(matches(p, "e.example.com"), 2);	/* 8443 rule + the wildcard */
	assert_int_equal(matches(p, "x.example.org"), 1);
	assert_int_equal(matches(p, "z.example.org"), 0);
	assert_int_equal(matches(p, "evil.github.io"), 0);
	assert_int_equal(matches(p, "x.a.github.io"), 1);
	policy_free(p);
	free(out);
}

/* A name that resolved to an address another name's connection used gets its port. */
static void test_shared_address(void **state)
{
	static const char log[] =
		DNS("2026-11-30T07:00:00Z", "files.pythonhosted.org", "\"198.51.100.11\"")
		DNS("2026-11-30T07:00:01Z", "cdn.example.net", "\"198.51.100.11\"")
		CONN("2026-11-30T07:00:02Z", "tcp", "198.51.100.11", 443, "\"cdn.example.net\"", 5, 5)
		/* domain null but a name resolved to it: no CIDR rule */
		CONN("2026-11-30T07:00:03Z", "tcp", "198.51.100.11", 80, "null", 5, 5)
		/* a CIDR rule allowed it (domain is the rule): an exact /32 */
		CONN("2026-11-30T07:00:04Z", "tcp", "203.0.113.7", 22, "\"203.0.113.0/24\"", 5, 5);
	struct suggest_filter f = { .policy = "audit-all" };
	struct policy *p;
	char *out;

	(void)state;
	out = run(&f, log, "s", &p);
	assert_non_null(strstr(out, "      - \"files.pythonhosted.org\"  # 0 conns, 1 query\n"));
	assert_non_null(strstr(out, "    ports: [80, 443]\n"));
	assert_non_null(strstr(out, "      - \"203.0.113.7/32\"  "));
	assert_null(strstr(out, "198.51.100.11/32"));
	assert_int_equal(p->n_rules, 2);
	policy_free(p);
	free(out);
}

/*
 * A connection by address made before any name answered that address: the
 * name that answered it later does not account for it (enforced, it would
 * have found no pin), so it needs its own /32; one made after the answer
 * is the name's.  (A new user's suggestion dropped the /32 and the
 * enforced workload was denied.)
 */
static void test_name_after_connection(void **state)
{
	static const char log[] =
		CONN("2026-11-30T07:00:01Z", "tcp", "203.0.113.66", 80, "null", 5, 5)
		DNS("2026-11-30T07:00:02Z", "example.com", "\"203.0.113.66\"")
		CONN("2026-11-30T07:00:03Z", "tcp", "203.0.113.66", 8443, "null", 5, 5);
	struct suggest_filter f = { .policy = "audit-all" };
	struct policy *p;
	char *out;

	(void)state;
	out = run(&f, log, "s", &p);
	assert_non_null(strstr(out, "      - \"203.0.113.66/32\"  # 1 conn"));
	assert_non_null(strstr(out, "    ports: [80]\n"));	/* the /32: only the early one */
	assert_non_null(strstr(out, "      - \"example.com\"  # 0 conns, 1 query\n    ports: [8443]\n"));
	assert_int_equal(p->n_rules, 2);
	policy_free(p);
	free(out);
}

/*
 * Issue 30, finding 6: five names resolved (to two addresses) and two
 * connections made by address, with no name ("domain": null).  The
 * per-address credit in render_dest() gives port 443 to every name that
 * resolved to a connected address, and collapse() then folded the five
 * siblings into "*.dt.example": a wildcard no connection asked for.  A
 * connection by address never contributes to a wildcard.
 */
static void test_no_wildcard_from_addresses(void **state)
{
	static const char log[] =
		DNS("2026-11-30T07:00:00Z", "a.dt.example", "\"198.51.100.40\"")
		DNS("2026-11-30T07:00:01Z", "b.dt.example", "\"198.51.100.40\"")
		DNS("2026-11-30T07:00:02Z", "c.dt.example", "\"198.51.100.40\"")
		DNS("2026-11-30T07:00:03Z", "d.dt.example", "\"198.51.100.46\"")
		DNS("2026-11-30T07:00:04Z", "e.dt.example", "\"198.51.100.46\"")
		CONN("2026-11-30T07:00:05Z", "tcp", "198.51.100.40", 443, "null", 1, 2)
		CONN("2026-11-30T07:00:06Z", "tcp", "198.51.100.46", 443, "null", 1, 2);
	struct suggest_filter f = { .sandbox = "agent" };
	struct policy *p;
	char *out;

	(void)state;
	out = run(&f, log, "a", &p);
	if (strstr(out, "\"*."))
		printf("got:\n%s\n", out);
	assert_null(strstr(out, "\"*."));
	assert_int_equal(matches(p, "zzz.dt.example"), 0);
	assert_int_equal(matches(p, "a.dt.example"), 1);
	assert_int_equal(matches(p, "e.dt.example"), 1);
	/* the addresses are accounted for by the names: no CIDR rule either */
	assert_null(strstr(out, "/32\""));
	policy_free(p);
	free(out);

	/* Even when asked to widen: a name credited only through an address
	 * it resolved to was not seen used, and never counts for a wildcard. */
	out = run_flags(&f, log, "a", SUGGEST_WILDCARDS, &p);
	if (strstr(out, "\"*."))
		printf("got:\n%s\n", out);
	assert_null(strstr(out, "\"*."));
	assert_int_equal(matches(p, "zzz.dt.example"), 0);
	assert_int_equal(matches(p, "c.dt.example"), 1);
	policy_free(p);
	free(out);
}

/* With SUGGEST_WILDCARDS, only names connected to by name (their conn's
 * "domain"), on every port of their line, make and join a wildcard. */
static void test_wildcard_members_by_name(void **state)
{
	static const char log[] =
		DNS("2026-11-30T07:00:00Z", "a.example.com", "\"198.51.100.1\"")
		DNS("2026-11-30T07:00:00Z", "b.example.com", "\"198.51.100.2\"")
		DNS("2026-11-30T07:00:00Z", "c.example.com", "\"198.51.100.3\"")
		DNS("2026-11-30T07:00:00Z", "d.example.com", "\"198.51.100.3\"")
		CONN("2026-11-30T07:00:01Z", "tcp", "198.51.100.1", 443, "\"a.example.com\"", 1, 2)
		CONN("2026-11-30T07:00:02Z", "tcp", "198.51.100.2", 443, "\"b.example.com\"", 1, 2)
		CONN("2026-11-30T07:00:03Z", "tcp", "198.51.100.3", 443, "\"c.example.com\"", 1, 2)
		/* d.example.com only shares c's address: credited, but not a member */
		CONN("2026-11-30T07:00:04Z", "tcp", "198.51.100.3", 443, "null", 1, 2)
		/* e: by name on 443, and 8080 only through an address: not a member */
		DNS("2026-11-30T07:00:05Z", "e.example.com", "\"198.51.100.5\"")
		CONN("2026-11-30T07:00:06Z", "tcp", "198.51.100.5", 443, "\"e.example.com\"", 1, 2)
		CONN("2026-11-30T07:00:07Z", "tcp", "198.51.100.5", 8080, "null", 1, 2);
	struct suggest_filter f = { .sandbox = "agent" };
	struct policy *p;
	char *out;

	(void)state;
	out = run_flags(&f, log, "m", SUGGEST_WILDCARDS, &p);
	assert_non_null(strstr(out, "      - \"*.example.com\"  # 3 conns, 3 B out, 6 B in, 3 queries; "
				    "3 names: a.example.com b.example.com c.example.com\n"));
	assert_non_null(strstr(out, "      - \"d.example.com\"  "));
	assert_non_null(strstr(out, "      - \"e.example.com\"  "));
	assert_non_null(strstr(out, "    ports: [443, 8080]\n"));
	assert_int_equal(matches(p, "e.example.com"), 2);	/* its own line + the wildcard */
	policy_free(p);
	free(out);
}

#define UPD(ev, ts, sport, out) "{\"ts\":\"" ts "\",\"event\":\"" ev "\"," SB ",\"proto\":\"tcp\"," \
	"\"src\":\"10.87.0.2\",\"sport\":" #sport ",\"dst\":\"203.0.113.9\",\"dport\":443,\"domain\":null," \
	"\"bytes_out\":" #out ",\"bytes_in\":0}\n"

/* conn_open: an audit-mode sandbox's, no counters (trail.c write_open()). */
#define OPEN(ts, sport) "{\"ts\":\"" ts "\",\"event\":\"conn_open\"," SB ",\"proto\":\"tcp\"," \
	"\"src\":\"10.87.0.2\",\"sport\":" #sport ",\"dst\":\"203.0.113.9\",\"dport\":443,\"domain\":null," \
	"\"start\":\"" ts "\",\"would_deny\":\"not-pinned\"}\n"

/* conn_update / conn_open of a live flow count once; its conn replaces them. */
static void test_live_flows(void **state)
{
	static const char log[] =
		OPEN("2026-11-30T07:00:00Z", 1000)
		UPD("conn_update", "2026-11-30T07:01:00Z", 1000, 500)
		UPD("conn_update", "2026-11-30T07:02:00Z", 1000, 900)
		UPD("conn", "2026-11-30T07:03:00Z", 1000, 1000)
		OPEN("2026-11-30T07:04:00Z", 1001)
		UPD("conn_update", "2026-11-30T07:05:00Z", 1001, 70)
		OPEN("2026-11-30T07:05:30Z", 1001)	/* adds nothing */
		/* an audit-mode connection whose conn record is not in yet */
		"{\"ts\":\"2026-11-30T07:06:00Z\",\"event\":\"conn_open\"," SB ",\"proto\":\"udp\","
		"\"src\":\"10.87.0.2\",\"sport\":5,\"dst\":\"203.0.113.10\",\"dport\":9,\"domain\":null,"
		"\"start\":\"2026-11-30T07:06:00Z\",\"would_deny\":\"not-pinned\"}\n";
	struct suggest_filter f = { .sandbox = "agent" };
	struct policy *p;
	char *out;

	(void)state;
	out = run(&f, log, "l", &p);
	assert_non_null(strstr(out, "      - \"203.0.113.9/32\"  # 2 conns, 1070 B out, 0 B in;"));
	assert_non_null(strstr(out, "      - \"203.0.113.10/32\"  # 1 conn (no byte counts yet);"));
	assert_non_null(strstr(out, "3 connections, 4 marked would_deny."));
	policy_free(p);
	free(out);
}

/* Hostile or odd log contents: never in the policy, comments stay comments. */
static void test_hostile(void **state)
{
	static const char log[] =
		DNS("2026-11-30T07:00:00Z", "evil\\n- domains: [\\\"*.com\\\"]", "\"198.51.100.1\"")
		DNS("2026-11-30T07:00:00Z", "1.2.3.4", "\"198.51.100.2\"")
		DNS("2026-11-30T07:00:00Z", "x.10", "\"198.51.100.3\"")
		CONN("2026-11-30T07:00:01Z", "tcp", "198.51.100.1", 443, "\"evil\\n- domains: [\\\"*.com\\\"]\"", 1, 1)
		CONN("2026-11-30T07:00:01Z", "tcp", "not-an-address", 443, "null", 1, 1)
		CONN("2026-11-30T07:00:01Z", "tcp", "198.51.100.4", 0, "null", 1, 1)
		CONN("2026-11-30T07:00:01Z", "tcp", "198.51.100.4", 70000, "null", 1, 1)
		"{\"ts\":\"bad\\ntime\",\"event\":\"dns\"," SB ",\"qname\":\"ok.example.com\",\"verdict\":\"allow\","
		"\"reason\":\"policy\",\"answers\":[\"::ffff:1.2.3.4\",7,\"x\"]}\n"
		"[1,2]\n" "{\"event\":7}\n";
	struct suggest_filter f = { .sandbox = "agent" };
	struct policy *p;
	char *out;

	(void)state;
	out = run(&f, log, "h", &p);
	for (const char *l = out; *l; l = strchr(l, '\n') + 1)
		assert_true(l[0] == '#' || strncmp(l, "name:", 5) == 0 ||
			    strncmp(l, "description:", 12) == 0 || strncmp(l, "egress", 6) == 0 ||
			    l[0] == ' ');
	assert_null(strstr(out, "\"*.com\""));
	assert_non_null(strstr(out, "names no policy can list: evil?-?domains:?[?*.com?] (not a policy name)"));
	assert_non_null(strstr(out, "names no policy can list: 1.2.3.4 (not a policy name)"));
	assert_null(strstr(out, "bad"));	/* an odd ts is not echoed */
	/* 198.51.100.1:443 was used through the bad name only: a CIDR rule */
	assert_non_null(strstr(out, "\"198.51.100.1/32\""));
	assert_non_null(strstr(out, "#   resolved, never connected to: ok.example.com (1 query)\n"));
	policy_free(p);
	free(out);
}

/* Denied (enforce mode) names and packets are comments; nothing used: egress []. */
static void test_enforce_denials(void **state)
{
	static const char log[] =
		"{\"ts\":\"2026-11-30T07:00:00Z\",\"event\":\"dns\"," SB ",\"qname\":\"blocked.example.com\","
		"\"verdict\":\"deny\",\"reason\":\"not-in-policy\",\"answers\":[]}\n"
		"{\"ts\":\"2026-11-30T07:00:00Z\",\"event\":\"dns\"," SB ",\"qname\":\"x.example.com\","
		"\"verdict\":\"deny\",\"reason\":\"rate-limit\",\"answers\":[]}\n"
		"{\"ts\":\"2026-11-30T07:00:01Z\",\"event\":\"deny\"," SB ",\"proto\":\"tcp\",\"src\":\"10.87.0.2\","
		"\"sport\":1,\"dst\":\"203.0.113.5\",\"dport\":25,\"domain\":null,\"reason\":\"not-pinned\"}\n";
	struct suggest_filter f = { .sandbox = "agent" };
	struct policy *p;
	char *out;

	(void)state;
	out = run(&f, log, "d", &p);
	assert_int_equal(p->n_rules, 0);
	assert_non_null(strstr(out, "egress: []"));
	assert_non_null(strstr(out, "#   denied by the policy in force: blocked.example.com (1 query)\n"));
	assert_non_null(strstr(out, "#   dropped by netd: tcp 203.0.113.5:25 (not-pinned) (1)\n"));
	assert_null(strstr(out, "x.example.com"));	/* rate-limited: not about the policy */
	policy_free(p);
	free(out);
}

/* --since, and a bad --name. */
static void test_filters(void **state)
{
	struct suggest_filter f = { .sandbox = "agent", .since = "2026-11-30T07:02:00.2" };
	struct suggest *s;
	struct policy *p;
	char *out;
	size_t len;

	(void)state;
	out = run(&f, agent_log, "since", &p);
	assert_null(strstr(out, "pypi.org"));
	assert_non_null(strstr(out, "\"api.openai.com\""));	/* the conn names it */
	policy_free(p);
	free(out);
	assert_int_equal(suggest_new(&f, &s), 0);
	assert_int_equal(suggest_render(s, "-bad", "", 0, &out, &len), -EINVAL);
	assert_int_equal(suggest_render(s, "ok", "", 1u << 7, &out, &len), -EINVAL);
	assert_int_equal(suggest_render(s, "ok", "", 0, &out, &len), 0);
	free(out);
	suggest_free(s);
}

/* Same records, any order: the same bytes. */
static void test_stable(void **state)
{
	struct suggest_filter f = { .sandbox = "agent" };
	char *lines[64], *copy = strdup(agent_log), *save = NULL, *a, *b, rev[sizeof(agent_log) + 64];
	struct policy *p;
	size_t n = 0;

	(void)state;
	for (char *l = strtok_r(copy, "\n", &save); l && n < 64; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	rev[0] = '\0';
	for (size_t i = n; i-- > 0;) {
		strcat(rev, lines[i]);
		strcat(rev, "\n");
	}
	a = run(&f, agent_log, "agent-suggested", &p);
	policy_free(p);
	b = run(&f, rev, "agent-suggested", &p);
	policy_free(p);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent),
		cmocka_unit_test(test_wildcards),
		cmocka_unit_test(test_shared_address),
		cmocka_unit_test(test_name_after_connection),
		cmocka_unit_test(test_no_wildcard_from_addresses),
		cmocka_unit_test(test_wildcard_members_by_name),
		cmocka_unit_test(test_live_flows),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_enforce_denials),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_stable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
