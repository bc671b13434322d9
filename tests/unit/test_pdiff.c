/*
 * test_pdiff - `netd policy replay`'s core on a recorded audit log whose
 * answers are known: the log was written under policy "agent" (a wildcard
 * with an except, two ports, max_qname_length, a CIDR rule), and each
 * proposed policy changes one thing: the except removed (names newly
 * allowed), the ports narrowed and the CIDR rule dropped (flows newly
 * denied), everything widened (flows newly allowed, never-pin addresses
 * still denied unless a CIDR rule names them).  Counts and first/last
 * times, one connection counted once across conn_open/conn_update/conn,
 * a nameless connection named by an earlier answer, audit mode's
 * would_deny as a denial, records not replayed (other policies, decisions
 * not a policy's, ICMP), filters, and cli_replay()'s --fail-on statuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "netd/cli/cli_help.h"
#include "netd/cli/cli_replay.h"
#include "netd/cli/pdiff.h"
#include "netd/model/policy.h"

#define T(s) "\"ts\":\"2026-11-30T07:00:" s "Z\""
#define SB1 "\"sandbox\":\"sb1\",\"policy\":\"agent\""
#define SB3 "\"sandbox\":\"sb3\",\"policy\":\"agent\""
#define FLOW(sb, proto, sport, dst, port, dom) sb ",\"proto\":\"" proto "\",\"src\":\"10.87.0.2\"," \
	"\"sport\":" #sport ",\"dst\":\"" dst "\",\"dport\":" #port ",\"domain\":" dom

/* Recorded under the policy in force, `current` below (enforce mode, but sb3: audit). */
static const char log_text[] =
	"{" T("00.100") ",\"event\":\"dns\"," SB1 ",\"qname\":\"api.example.com\",\"qtype\":\"A\","
	"\"verdict\":\"allow\",\"reason\":\"policy\",\"answers\":[\"198.51.100.10\"]}\n"
	"{" T("00.200") ",\"event\":\"dns\"," SB1 ",\"qname\":\"uploads.example.com\",\"qtype\":\"A\","
	"\"verdict\":\"deny\",\"reason\":\"not-in-policy\",\"answers\":[]}\n"
	"{" T("00.300") ",\"event\":\"dns\"," SB1 ",\"qname\":\"pypi.org\",\"qtype\":\"AAAA\","
	"\"verdict\":\"allow\",\"reason\":\"policy\",\"answers\":[\"198.51.100.20\"]}\n"
	/* one connection, three records: counted once, at its conn_open's start */
	"{" T("01.000") ",\"event\":\"conn_open\"," FLOW(SB1, "tcp", 40000, "198.51.100.10", 8443,
	"\"api.example.com\"") ",\"start\":\"2026-11-30T07:00:01.000Z\"}\n"
	"{" T("02.000") ",\"event\":\"conn_update\"," FLOW(SB1, "tcp", 40000, "198.51.100.10", 8443,
	"\"api.example.com\"") ",\"start\":\"2026-11-30T07:00:01.001Z\",\"bytes_out\":10}\n"
	"{" T("03.000") ",\"event\":\"conn\"," FLOW(SB1, "tcp", 40000, "198.51.100.10", 8443,
	"\"api.example.com\"") ",\"start\":\"2026-11-30T07:00:01.001Z\",\"bytes_out\":20}\n"
	"{" T("04.000") ",\"event\":\"conn\"," FLOW(SB1, "tcp", 40001, "198.51.100.10", 443,
	"\"api.example.com\"") ",\"start\":\"2026-11-30T07:00:03.500Z\"}\n"
	"{" T("05.000") ",\"event\":\"dns\"," SB1 ",\"qname\":\"uploads.example.com\",\"qtype\":\"AAAA\","
	"\"verdict\":\"deny\",\"reason\":\"not-in-policy\",\"answers\":[]}\n"
	"{" T("06.000") ",\"event\":\"dns\"," SB1 ",\"qname\":"
	"\"a-very-long-label-for-tunnelling.example.com\",\"qtype\":\"TXT\",\"verdict\":\"deny\","
	"\"reason\":\"qname-too-long\",\"answers\":[]}\n"
	/* the same 5-tuple again after its conn: a new connection */
	"{" T("09.500") ",\"event\":\"conn\"," FLOW(SB1, "tcp", 40000, "198.51.100.10", 8443,
	"\"api.example.com\"") ",\"start\":\"2026-11-30T07:00:09.000Z\"}\n"
	"{" T("10.000") ",\"event\":\"deny\"," FLOW(SB1, "tcp", 40010, "198.51.100.20", 80,
	"\"pypi.org\"") ",\"reason\":\"not-pinned\",\"count\":3,\"first\":\"2026-11-30T07:00:07.000Z\","
	"\"last\":\"2026-11-30T07:00:10.000Z\"}\n"
	"{" T("11.000") ",\"event\":\"conn\"," FLOW(SB1, "tcp", 40011, "203.0.113.50", 8080,
	"\"203.0.113.50/32\"") ",\"start\":\"2026-11-30T07:00:10.500Z\"}\n"
	"{" T("12.000") ",\"event\":\"deny\"," FLOW(SB1, "tcp", 40012, "203.0.113.66", 22, "null")
	",\"reason\":\"not-pinned\",\"count\":1,\"first\":\"2026-11-30T07:00:12.000Z\"}\n"
	"{" T("13.000") ",\"event\":\"deny\"," FLOW(SB1, "tcp", 40013, "169.254.169.254", 80, "null")
	",\"reason\":\"internal\",\"count\":1,\"first\":\"2026-11-30T07:00:13.000Z\"}\n"
	/* pinned before a restart: no domain; pypi.org's answer names it */
	"{" T("14.000") ",\"event\":\"conn\"," FLOW(SB1, "tcp", 40014, "198.51.100.20", 443, "null")
	",\"start\":\"2026-11-30T07:00:13.500Z\"}\n"
	/* not the policy's decisions */
	"{" T("15.000") ",\"event\":\"dns\"," SB1 ",\"qname\":\"flood.example.com\",\"verdict\":\"deny\","
	"\"reason\":\"rate-limit\"}\n"
	"{" T("15.100") ",\"event\":\"deny\"," FLOW(SB1, "tcp", 40015, "198.51.100.99", 443, "null")
	",\"reason\":\"spoof\",\"count\":1}\n"
	"{" T("15.200") ",\"event\":\"conn\"," SB1 ",\"proto\":\"icmp\",\"dst\":\"198.51.100.10\"}\n"
	"{" T("15.300") ",\"event\":\"sandbox\",\"sandbox\":\"sb1\",\"action\":\"create\"}\n"
	/* audit mode: answered and let through, would_deny */
	"{" T("16.000") ",\"event\":\"dns\"," SB3 ",\"qname\":\"evil.org\",\"qtype\":\"A\","
	"\"verdict\":\"allow\",\"reason\":\"audit-mode\",\"would_deny\":\"not-in-policy\","
	"\"answers\":[\"203.0.113.80\"]}\n"
	"{" T("17.000") ",\"event\":\"conn_open\"," FLOW(SB3, "tcp", 41000, "203.0.113.80", 443,
	"\"evil.org\"") ",\"start\":\"2026-11-30T07:00:17.000Z\",\"would_deny\":\"not-in-policy\"}\n"
	/* another policy's sandbox: not replayed */
	"{" T("18.000") ",\"event\":\"dns\",\"sandbox\":\"sb2\",\"policy\":\"other\",\"qname\":\"x.org\","
	"\"verdict\":\"allow\",\"reason\":\"policy\",\"answers\":[]}\n";

/* The policy the log was recorded under: replaying it changes nothing. */
static const char current[] =
	"name: agent\n"
	"egress:\n"
	"  - domains: [\"*.example.com\"]\n"
	"    except: [uploads.example.com]\n"
	"    ports: [443, 8443]\n"
	"    max_qname_length: 40\n"
	"  - domains: [pypi.org]\n"
	"    ports: [443]\n"
	"  - cidrs: [203.0.113.50/32]\n"
	"    ports: [8080]\n";

/* The wildcard's except removed. */
static const char noexcept[] =
	"name: agent\n"
	"egress:\n"
	"  - domains: [\"*.example.com\"]\n"
	"    ports: [443, 8443]\n"
	"    max_qname_length: 40\n"
	"  - domains: [pypi.org]\n"
	"    ports: [443]\n"
	"  - cidrs: [203.0.113.50/32]\n"
	"    ports: [8080]\n";

/* Ports narrowed, the CIDR rule and max_qname_length dropped. */
static const char narrow[] =
	"name: agent\n"
	"egress:\n"
	"  - domains: [\"*.example.com\"]\n"
	"    except: [uploads.example.com]\n"
	"    ports: [443]\n"
	"  - domains: [pypi.org]\n"
	"    ports: [443]\n";

/* Widened: a new name, a new port, the metadata address by a CIDR rule. */
static const char wide[] =
	"name: agent\n"
	"egress:\n"
	"  - domains: [\"*.example.com\"]\n"
	"    except: [uploads.example.com]\n"
	"    ports: [443, 8443]\n"
	"    max_qname_length: 40\n"
	"  - domains: [pypi.org]\n"
	"    ports: [443, 80]\n"
	"  - domains: [evil.org]\n"
	"    ports: [443]\n"
	"  - cidrs: [203.0.113.50/32]\n"
	"    ports: [8080]\n"
	"  - cidrs: [169.254.169.254/32]\n"
	"    ports: [80]\n";

static struct policy *parse(const char *yaml, const char *file)
{
	struct policy *p = NULL;
	struct diag err = { 0 };
	char msg[512];

	if (policy_parse(yaml, strlen(yaml), file, &p, &err) < 0)
		fail_msg("%s", diag_format(&err, msg, sizeof(msg)));
	return p;
}

/* Replay @log against @yaml under @o (NULL: no filter); the report. */
static json_t *replay(const char *yaml, const struct pdiff_opts *o, const char *log)
{
	struct policy *p = parse(yaml, "proposed.yaml");
	const struct policy *pols[] = { p };
	char *copy = strdup(log), *save = NULL;
	struct pdiff *d;
	json_t *rep;

	assert_int_equal(pdiff_new(pols, 1, o, &d), 0);
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_error_t je;
		json_t *rec = json_loads(l, 0, &je);

		if (!rec)
			fail_msg("bad test line: %s (%s)", l, je.text);
		assert_true(pdiff_add(d, rec) >= 0);
		json_decref(rec);
	}
	free(copy);
	rep = pdiff_report(d);
	assert_non_null(rep);
	pdiff_free(d);
	policy_free(p);
	return rep;
}

static json_t *group(const json_t *rep, const char *sandbox)
{
	const json_t *g;
	size_t i;

	json_array_foreach(json_object_get(rep, "groups"), i, g)
		if (strcmp(json_string_value(json_object_get(g, "sandbox")), sandbox) == 0)
			return (json_t *)g;
	fail_msg("no group for sandbox %s", sandbox);
	return NULL;
}

static long long num(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static const char *txt(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "(null)";
}

/* The change of @sandbox that @dir ("newly-denied") and @what (a qname, or
 * "tcp 198.51.100.10:8443") name; NULL if none. */
static json_t *change(const json_t *rep, const char *sandbox, const char *dir, const char *what)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(group(rep, sandbox), "changes"), i, c) {
		char w[300];

		if (strcmp(txt(c, "kind"), "dns") == 0)
			snprintf(w, sizeof(w), "%s", txt(c, "qname"));
		else
			snprintf(w, sizeof(w), "%s %s:%lld", txt(c, "proto"), txt(c, "dst"),
				 num(c, "dport"));
		if (strcmp(txt(c, "direction"), dir) == 0 && strcmp(w, what) == 0)
			return (json_t *)c;
	}
	return NULL;
}

static size_t n_changes(const json_t *rep, const char *sandbox)
{
	return json_array_size(json_object_get(group(rep, sandbox), "changes"));
}

/* What is the same whatever is proposed: counts of records and what is not replayed. */
static void check_counts(const json_t *rep)
{
	const json_t *g = group(rep, "sb1"), *nr = json_object_get(rep, "not_replayed");

	/* dns: api, uploads x2, pypi, long (not rate-limit) */
	assert_int_equal(num(json_object_get(g, "dns"), "replayed"), 5);
	/* flows: 8443 (one connection of three records), 443, 8443 again, pypi:80,
	 * cidr 8080, :22, metadata, nameless pypi:443 (not spoof, not icmp) */
	assert_int_equal(num(json_object_get(g, "flows"), "replayed"), 8);
	assert_int_equal(num(nr, "not_policy_decisions"), 2);	/* rate-limit, spoof */
	assert_int_equal(num(nr, "other_protocols"), 1);	/* icmp */
	assert_int_equal(json_array_size(json_object_get(nr, "policies")), 1);
	assert_string_equal(txt(json_array_get(json_object_get(nr, "policies"), 0), "policy"),
			    "other");
	assert_int_equal(num(json_array_get(json_object_get(nr, "policies"), 0), "records"), 1);
	assert_int_equal(json_array_size(json_object_get(rep, "groups")), 2);	/* sb1, sb3 */
}

static void test_unchanged(void **state)
{
	json_t *rep = replay(current, NULL, log_text);

	check_counts(rep);
	/* sb3 ran in audit mode: what it did is what enforce would have denied. */
	assert_int_equal(num(rep, "newly_denied"), 0);
	assert_int_equal(num(rep, "newly_allowed"), 0);
	assert_int_equal(n_changes(rep, "sb1"), 0);
	assert_int_equal(num(json_object_get(group(rep, "sb1"), "dns"), "unchanged"), 5);
	assert_int_equal(num(json_object_get(group(rep, "sb1"), "flows"), "unchanged"), 8);
	json_decref(rep);
}

static void test_except_removed(void **state)
{
	json_t *rep = replay(noexcept, NULL, log_text), *c;

	check_counts(rep);
	c = change(rep, "sb1", "newly-allowed", "uploads.example.com");
	assert_non_null(c);
	assert_int_equal(num(c, "count"), 2);
	assert_string_equal(txt(c, "first"), "2026-11-30T07:00:00.200Z");
	assert_string_equal(txt(c, "last"), "2026-11-30T07:00:05.000Z");
	assert_int_equal(num(c, "rule"), 0);
	assert_int_equal(num(c, "line"), 3);
	/* The long name is still over max_qname_length. */
	assert_null(change(rep, "sb1", "newly-allowed",
			   "a-very-long-label-for-tunnelling.example.com"));
	assert_int_equal(n_changes(rep, "sb1"), 1);
	assert_int_equal(num(rep, "newly_allowed"), 2);
	assert_int_equal(num(rep, "newly_denied"), 0);
	json_decref(rep);
}

static void test_ports_narrowed(void **state)
{
	json_t *rep = replay(narrow, NULL, log_text), *c;

	check_counts(rep);
	/* Two connections to 8443: the first of three records, and the 5-tuple reused. */
	c = change(rep, "sb1", "newly-denied", "tcp 198.51.100.10:8443");
	assert_non_null(c);
	assert_int_equal(num(c, "count"), 2);
	assert_string_equal(txt(c, "domain"), "api.example.com");
	assert_string_equal(txt(c, "why"), "port");
	assert_string_equal(txt(c, "first"), "2026-11-30T07:00:01.000Z");
	assert_string_equal(txt(c, "last"), "2026-11-30T07:00:09.000Z");
	/* The CIDR rule went: made without a name, nothing pins it now. */
	c = change(rep, "sb1", "newly-denied", "tcp 203.0.113.50:8080");
	assert_non_null(c);
	assert_int_equal(num(c, "count"), 1);
	assert_string_equal(txt(c, "why"), "not-pinned");
	assert_false(json_is_string(json_object_get(c, "domain")));	/* null */
	/* max_qname_length went too: the long name is allowed now. */
	c = change(rep, "sb1", "newly-allowed", "a-very-long-label-for-tunnelling.example.com");
	assert_non_null(c);
	assert_int_equal(num(c, "count"), 1);
	/* Unchanged: 443 by name, and by the address pypi.org's answer gave. */
	assert_null(change(rep, "sb1", "newly-denied", "tcp 198.51.100.10:443"));
	assert_null(change(rep, "sb1", "newly-denied", "tcp 198.51.100.20:443"));
	assert_int_equal(n_changes(rep, "sb1"), 3);
	assert_int_equal(num(rep, "newly_denied"), 3);
	assert_int_equal(num(rep, "newly_allowed"), 1);
	json_decref(rep);
}

static void test_widened(void **state)
{
	json_t *rep = replay(wide, NULL, log_text), *c;

	check_counts(rep);
	c = change(rep, "sb1", "newly-allowed", "tcp 198.51.100.20:80");
	assert_non_null(c);
	assert_int_equal(num(c, "rule"), 1);
	assert_string_equal(txt(c, "first"), "2026-11-30T07:00:07.000Z");	/* the deny's "first" */
	/* A never-pin address only through a CIDR rule (the chain's order). */
	c = change(rep, "sb1", "newly-allowed", "tcp 169.254.169.254:80");
	assert_non_null(c);
	assert_int_equal(num(c, "rule"), 4);
	assert_null(change(rep, "sb1", "newly-allowed", "tcp 203.0.113.66:22"));
	/* Audit mode's would_deny: now allowed by the name and its connection. */
	assert_non_null(c = change(rep, "sb3", "newly-allowed", "evil.org"));
	assert_int_equal(num(c, "rule"), 2);
	assert_non_null(c = change(rep, "sb3", "newly-allowed", "tcp 203.0.113.80:443"));
	assert_int_equal(num(c, "count"), 1);
	assert_int_equal(num(rep, "newly_denied"), 0);
	assert_int_equal(num(rep, "newly_allowed"), 4);
	json_decref(rep);
}

/* A never-pin address named by an answer stays denied: no answer pins it. */
static void test_never_pin(void **state)
{
	static const char log[] =
		"{" T("00.000") ",\"event\":\"dns\"," SB1 ",\"qname\":\"meta.example.com\","
		"\"verdict\":\"allow\",\"reason\":\"policy\",\"answers\":[\"169.254.169.254\"]}\n"
		"{" T("01.000") ",\"event\":\"deny\"," FLOW(SB1, "tcp", 1, "169.254.169.254", 443,
		"null") ",\"reason\":\"internal\",\"count\":1}\n";
	json_t *rep = replay(current, NULL, log), *g = group(rep, "sb1");

	assert_int_equal(num(json_object_get(g, "flows"), "unchanged"), 1);
	assert_int_equal(num(rep, "newly_allowed"), 0);
	json_decref(rep);
	rep = replay(narrow, NULL, log);
	assert_int_equal(num(rep, "newly_allowed") + num(rep, "newly_denied"), 0);
	json_decref(rep);
}

static void test_filters(void **state)
{
	struct pdiff_opts o = { .sandbox = "sb3", .any_policy = true };
	struct policy *p = parse(wide, "w.yaml"), *q = parse(narrow, "n.yaml");
	const struct policy *two[] = { p, q };
	struct pdiff *d;
	json_t *rep;
	char *renamed = strdup(wide);

	/* With one policy and a sandbox chosen, its name does not matter. */
	memcpy(renamed + strlen("name: "), "other", 5);	/* "agent" -> "other" */
	rep = replay(renamed, &o, log_text);
	assert_int_equal(json_array_size(json_object_get(rep, "groups")), 1);
	assert_string_equal(txt(group(rep, "sb3"), "recorded_policy"), "agent");
	assert_string_equal(txt(group(rep, "sb3"), "policy"), "other");
	assert_int_equal(num(rep, "newly_allowed"), 2);
	json_decref(rep);
	free(renamed);
	/* --since: only from 07:00:16 on. */
	o = (struct pdiff_opts){ .since = "2026-11-30T07:00:16.500Z" };
	rep = replay(wide, &o, log_text);
	assert_int_equal(num(rep, "newly_allowed"), 1);	/* the conn_open only */
	json_decref(rep);
	/* Two policies of one name, or any_policy with two: refused. */
	two[1] = p;
	assert_int_equal(pdiff_new(two, 2, NULL, &d), -EINVAL);
	two[1] = q;
	o = (struct pdiff_opts){ .any_policy = true };
	assert_int_equal(pdiff_new(two, 2, &o, &d), -EINVAL);
	assert_int_equal(pdiff_new(two, 0, NULL, &d), -EINVAL);
	policy_free(p);
	policy_free(q);
}

/* The same records give the same report, in any order of the unrelated ones. */
static void test_hostile(void **state)
{
	static const char log[] =
		"{\"event\":\"dns\"," SB1 ",\"qname\":\"UPPER.example.com\",\"reason\":\"policy\"}\n"
		"{\"event\":\"dns\"," SB1 ",\"qname\":\"a\\\\032b.example.com\",\"reason\":\"policy\"}\n"
		"{\"event\":\"dns\"," SB1 ",\"qname\":\"..example.com\",\"reason\":\"policy\"}\n"
		"{\"event\":\"dns\"," SB1 ",\"qname\":\"\",\"reason\":\"policy\"}\n"
		"{\"event\":\"dns\"," SB1 ",\"qname\":7,\"reason\":\"policy\"}\n"
		"{\"event\":\"conn\"," SB1 ",\"proto\":\"tcp\",\"dst\":\"not-an-address\",\"dport\":1}\n"
		"{\"event\":\"conn\"," SB1 ",\"proto\":\"tcp\",\"dst\":\"198.51.100.1\",\"dport\":70000}\n"
		"{\"event\":\"conn\",\"proto\":\"tcp\",\"dst\":\"198.51.100.1\",\"dport\":1}\n"
		"[1,2]\n";
	json_t *rep = replay(current, NULL, log), *nr = json_object_get(rep, "not_replayed");

	/* Names with odd bytes never match: all four newly denied, none allowed. */
	assert_int_equal(num(rep, "newly_denied"), 4);
	assert_string_equal(txt(change(rep, "sb1", "newly-denied", "UPPER.example.com"), "why"),
			    "bad-name");
	assert_int_equal(num(nr, "unusable"), 3);	/* qname 7, bad dst, no sandbox */
	assert_int_equal(num(nr, "other_protocols"), 1);	/* port 70000 */
	json_decref(rep);
}

/* Run cli_replay() on @log and @yaml files, stdout to /dev/null.  Return: its status. */
static int cli(const char *dir, const char *yaml, const char *fail_on)
{
	char lpath[256], ppath[256];
	char *argv[8];
	int argc = 0, out = dup(1), null = open("/dev/null", O_WRONLY), r;
	FILE *f;

	snprintf(lpath, sizeof(lpath), "%s/audit.jsonl", dir);
	snprintf(ppath, sizeof(ppath), "%s/proposed.yaml", dir);
	assert_non_null(f = fopen(lpath, "w"));
	fputs(log_text, f);
	fputs("not json\n", f);	/* counted, never fatal */
	fclose(f);
	assert_non_null(f = fopen(ppath, "w"));
	fputs(yaml, f);
	fclose(f);
	argv[argc++] = "replay";
	argv[argc++] = "--audit";
	argv[argc++] = lpath;
	if (fail_on) {
		argv[argc++] = "--fail-on";
		argv[argc++] = (char *)fail_on;
	}
	argv[argc++] = ppath;
	argv[argc] = NULL;
	fflush(stdout);
	dup2(null, 1);
	r = cli_replay(argc, argv, "/nonexistent/socket");
	fflush(stdout);
	dup2(out, 1);
	close(out);
	close(null);
	return r;
}

static void test_fail_on(void **state)
{
	char dir[] = "/tmp/test_pdiff.XXXXXX", path[300];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(cli(dir, current, "newly-denied"), CLI_OK);
	assert_int_equal(cli(dir, noexcept, NULL), CLI_OK);	/* changes, no --fail-on */
	assert_int_equal(cli(dir, noexcept, "newly-denied"), CLI_OK);	/* only allowed */
	assert_int_equal(cli(dir, noexcept, "newly-allowed"), CLI_CHANGED);
	assert_int_equal(cli(dir, narrow, "newly-denied"), CLI_CHANGED);
	assert_int_equal(cli(dir, narrow, "sometimes"), CLI_USAGE);
	assert_int_equal(cli(dir, "name: agent\negress: [\n", NULL), CLI_REJECTED);
	assert_int_equal(CLI_CHANGED, 7);	/* documented: docs/install.md */
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proposed.yaml", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_except_removed),
		cmocka_unit_test(test_ports_narrowed),
		cmocka_unit_test(test_widened),
		cmocka_unit_test(test_never_pin),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_fail_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
