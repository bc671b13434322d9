/*
 * cli_replay - `netd policy replay`: the proposed policy files parsed (as
 * `netd policy check` does), the audit logs read in the order given
 * (cli_audit_read_files(), as `netd policy suggest`), each record replayed
 * through netd/cli/pdiff.c, and what would change printed: a table, or the
 * report as JSON.  The exit status says whether a change --fail-on names
 * was found.  No daemon needed with --audit.
 */
#include "netd/cli/cli_replay.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "netd/cli/cli_args.h"
#include "netd/cli/cli_audit.h"
#include "netd/cli/cli_help.h"
#include "netd/cli/cli_table.h"
#include "netd/cli/pdiff.h"
#include "netd/model/policy.h"

#define REPLAY_FILES_MAX    64
#define REPLAY_POLICIES_MAX 256

#define FAIL_DENIED  (1u << 0)
#define FAIL_ALLOWED (1u << 1)

static const char usage_text[] =
	"usage: netd policy replay [--audit FILE]... [--since T] [--sandbox S | --policy P]\n"
	"                          [--json] [--fail-on newly-denied|newly-allowed]...\n"
	"                          POLICY.yaml...\n"
	"  replays the audit log's DNS decisions and connections against the proposed\n"
	"  policies (each against the records of sandboxes under its name) and says what\n"
	"  would change\n"
	"  T: RFC 3339 UTC (2026-11-30T06:00:00Z, or a prefix of it) or N[smhd] ago\n"
	"  FILE: default the log `netd audit` reads (repeat --audit for rotated files,\n"
	"  oldest first)\n";

/* cli_audit_fn for pdiff_add(). */
static int feed(void *arg, const json_t *rec, const char *file, unsigned long line)
{
	return pdiff_add(arg, rec);
}

/* A change's "what" for the table: the name, or "tcp 198.51.100.10:443 (name)". */
static const char *change_what(const json_t *c, char *buf, size_t sz)
{
	char a[300], b[80], n[300];

	if (strcmp(json_string_value(json_object_get(c, "kind")), "dns") == 0)
		return cli_audit_cell(json_string_value(json_object_get(c, "qname")), buf, sz);
	cli_audit_cell(json_string_value(json_object_get(c, "dst")), b, sizeof(b));
	snprintf(a, sizeof(a), "%s %s%s%s:%lld", json_string_value(json_object_get(c, "proto")),
		 strchr(b, ':') ? "[" : "", b, strchr(b, ':') ? "]" : "",
		 (long long)json_integer_value(json_object_get(c, "dport")));
	if (json_is_string(json_object_get(c, "domain")))
		snprintf(buf, sz, "%s (%s)", a,
			 cli_audit_cell(json_string_value(json_object_get(c, "domain")), n,
					sizeof(n)));
	else
		snprintf(buf, sz, "%s", a);
	return buf;
}

/* The people's report: a row per change, a line per group, what was not replayed. */
static int print_table(const json_t *rep)
{
	static const char *const head[] = { "POLICY", "SANDBOX", "CHANGE", "KIND", "WHAT",
					    "COUNT", "FIRST", "LAST", "WHY" };
	struct cli_table *t = cli_table_new(9, head, "lllllrlll");
	const json_t *g, *c, *groups = json_object_get(rep, "groups");
	const json_t *nr = json_object_get(rep, "not_replayed");
	size_t i, j, rows = 0;

	if (!t)
		return -ENOMEM;
	json_array_foreach(groups, i, g) {
		json_array_foreach(json_object_get(g, "changes"), j, c) {
			char pol[80], sb[80], what[700], count[24], why[120], first[48], last[48];
			const char *row[9];

			if (json_is_string(json_object_get(c, "why")))
				cli_audit_cell(json_string_value(json_object_get(c, "why")), why,
					       sizeof(why));
			else	/* which rule allows it, FILE:LINE */
				snprintf(why, sizeof(why), "egress[%lld] (%s:%lld)",
					 (long long)json_integer_value(json_object_get(c, "rule")),
					 cli_audit_cell(json_string_value(json_object_get(g, "file")),
							pol, 60),
					 (long long)json_integer_value(json_object_get(c, "line")));
			snprintf(count, sizeof(count), "%lld",
				 (long long)json_integer_value(json_object_get(c, "count")));
			row[0] = cli_audit_cell(json_string_value(json_object_get(g, "policy")), pol,
						sizeof(pol));
			row[1] = cli_audit_cell(json_string_value(json_object_get(g, "sandbox")), sb,
						sizeof(sb));
			row[2] = json_string_value(json_object_get(c, "direction"));
			row[3] = json_string_value(json_object_get(c, "kind"));
			row[4] = change_what(c, what, sizeof(what));
			row[5] = count;
			row[6] = cli_audit_cell(json_string_value(json_object_get(c, "first")), first,
						sizeof(first));
			row[7] = cli_audit_cell(json_string_value(json_object_get(c, "last")), last,
						sizeof(last));
			row[8] = why;
			if (cli_table_add(t, row) < 0) {
				cli_table_free(t);
				return -ENOMEM;
			}
			rows++;
		}
	}
	if (rows)
		cli_table_print(t, stdout);
	cli_table_free(t);
	if (rows)
		putchar('\n');
	json_array_foreach(groups, i, g) {
		const json_t *dns = json_object_get(g, "dns"), *fl = json_object_get(g, "flows");
		char pol[80], rec[80], sb[80];

		printf("policy %s, sandbox %s", cli_audit_cell(json_string_value(
			json_object_get(g, "policy")), pol, sizeof(pol)),
		       cli_audit_cell(json_string_value(json_object_get(g, "sandbox")), sb, sizeof(sb)));
		if (strcmp(json_string_value(json_object_get(g, "policy")),
			   json_string_value(json_object_get(g, "recorded_policy"))) != 0)
			printf(" (which ran under %s)", cli_audit_cell(json_string_value(
				json_object_get(g, "recorded_policy")), rec, sizeof(rec)));
		printf(": %lld DNS records replayed, %lld unchanged; %lld connections, %lld "
		       "unchanged\n", (long long)json_integer_value(json_object_get(dns, "replayed")),
		       (long long)json_integer_value(json_object_get(dns, "unchanged")),
		       (long long)json_integer_value(json_object_get(fl, "replayed")),
		       (long long)json_integer_value(json_object_get(fl, "unchanged")));
	}
	json_array_foreach(json_object_get(nr, "policies"), i, g) {
		char pol[80];

		printf("not replayed: %lld records of policy %s (no proposed policy of that name)\n",
		       (long long)json_integer_value(json_object_get(g, "records")),
		       cli_audit_cell(json_string_value(json_object_get(g, "policy")), pol,
				      sizeof(pol)));
	}
	if (json_integer_value(json_object_get(nr, "not_policy_decisions")))
		printf("not replayed: %lld records not decided by a policy (rate limits, upstream "
		       "failures, local answers, spoofing, the host, quotas)\n",
		       (long long)json_integer_value(json_object_get(nr, "not_policy_decisions")));
	if (json_integer_value(json_object_get(nr, "other_protocols")))
		printf("not replayed: %lld connections other than TCP/UDP\n",
		       (long long)json_integer_value(json_object_get(nr, "other_protocols")));
	if (json_integer_value(json_object_get(nr, "unusable")))
		printf("not replayed: %lld records without a sandbox, policy, name or address\n",
		       (long long)json_integer_value(json_object_get(nr, "unusable")));
	if (json_integer_value(json_object_get(nr, "over_limits")))
		printf("not replayed in full: %lld records over replay's limits\n",
		       (long long)json_integer_value(json_object_get(nr, "over_limits")));
	printf("%lld newly denied, %lld newly allowed\n",
	       (long long)json_integer_value(json_object_get(rep, "newly_denied")),
	       (long long)json_integer_value(json_object_get(rep, "newly_allowed")));
	return 0;
}

/* Load @paths as policies into @pols.  Return: CLI_OK; CLI_REJECTED (said why); CLI_FAILED. */
static int load_policies(char **paths, size_t n, struct policy **pols)
{
	for (size_t i = 0; i < n; i++) {
		struct diag err = { 0 };
		char msg[1024];
		int r = policy_load_file(paths[i], &pols[i], &err);

		if (r < 0) {
			fprintf(stderr, "%s\n", diag_format(&err, msg, sizeof(msg)));
			return r == -ENOMEM ? CLI_FAILED : CLI_REJECTED;
		}
		for (size_t k = 0; k < i; k++)
			if (strcmp(pols[k]->name, pols[i]->name) == 0) {
				fprintf(stderr, "%s:%u:%u: name: policy name '%s' is also used by "
					"%s:%u\n", paths[i], pols[i]->name_line, pols[i]->name_col,
					pols[i]->name, paths[k], pols[k]->name_line);
				return CLI_REJECTED;
			}
	}
	return CLI_OK;
}

int cli_replay(int argc, char **argv, const char *socket_path)
{
	static const struct option opts[] = {
		{ "audit", required_argument, NULL, 'a' },
		{ "since", required_argument, NULL, 't' },
		{ "sandbox", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "fail-on", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct pdiff_opts o = { 0 };
	const char *files[REPLAY_FILES_MAX];
	struct policy *pols[REPLAY_POLICIES_MAX] = { 0 };
	size_t n_files = 0, n_pols;
	unsigned int fail_on = 0;
	struct pdiff *d = NULL;
	json_t *rep = NULL;
	bool json = false;
	const char *seen[128] = { 0 };
	int c, rc;

	optind = 1;
	while ((c = cli_opt_next("policy replay", argc, argv, opts, "aF", seen)) != -1) {
		switch (c) {
		case 's': o.sandbox = optarg; break;
		case 'p': o.policy = optarg; break;
		case 'j': json = true; break;
		case 'a':
			if (n_files == REPLAY_FILES_MAX) {
				fprintf(stderr, "netd: policy replay: at most %d --audit\n",
					REPLAY_FILES_MAX);
				return CLI_USAGE;
			}
			files[n_files++] = optarg;
			break;
		case 'F':
			if (strcmp(optarg, "newly-denied") == 0) {
				fail_on |= FAIL_DENIED;
			} else if (strcmp(optarg, "newly-allowed") == 0) {
				fail_on |= FAIL_ALLOWED;
			} else {
				fprintf(stderr, "netd: policy replay: --fail-on takes newly-denied or "
					"newly-allowed, not \"%s\"\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 't':
			if (cli_audit_time(optarg, (long long)time(NULL), o.since,
					   sizeof(o.since)) < 0) {
				fprintf(stderr, "netd: policy replay: bad --since \"%s\"\n%s", optarg,
					usage_text);
				return CLI_USAGE;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:	/* cli_opt_next() said what */
			fprintf(stderr, "\n%s", usage_text);
			return CLI_USAGE;
		}
	}
	n_pols = (size_t)(argc - optind);
	if (n_pols == 0 || n_pols > REPLAY_POLICIES_MAX || (o.sandbox && o.policy)) {
		fprintf(stderr, "netd: policy replay wants 1-%d POLICY.yaml files and at most one "
			"of --sandbox and --policy\n%s", REPLAY_POLICIES_MAX, usage_text);
		return CLI_USAGE;
	}
	if ((o.sandbox && !policy_name_valid(o.sandbox)) ||
	    (o.policy && !policy_name_valid(o.policy))) {
		fprintf(stderr, "netd: policy replay: invalid name \"%s\"\n",
			o.sandbox ? o.sandbox : o.policy);
		return CLI_USAGE;
	}
	/* One policy for a chosen sandbox or policy: "what if it had run under this". */
	o.any_policy = (o.sandbox || o.policy) && n_pols == 1;
	rc = load_policies(argv + optind, n_pols, pols);
	if (rc != CLI_OK)
		goto out;
	rc = CLI_FAILED;
	if (pdiff_new((const struct policy *const *)pols, n_pols, &o, &d) < 0)
		goto out;
	rc = cli_audit_read_files("policy replay", files, n_files, socket_path, feed, d, NULL, 0);
	if (rc != CLI_OK)
		goto out;
	rc = CLI_FAILED;
	rep = pdiff_report(d);
	if (!rep)
		goto out;
	if (json) {
		if (json_dumpf(rep, stdout, JSON_INDENT(2)) < 0)
			goto out;
		putchar('\n');
	} else if (print_table(rep) < 0) {
		goto out;
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "netd: policy replay: writing: %s\n", strerror(errno));
		goto out;
	}
	rc = CLI_OK;
	if (((fail_on & FAIL_DENIED) && json_integer_value(json_object_get(rep, "newly_denied"))) ||
	    ((fail_on & FAIL_ALLOWED) && json_integer_value(json_object_get(rep, "newly_allowed"))))
		rc = CLI_CHANGED;
out:
	json_decref(rep);
	pdiff_free(d);
	for (size_t i = 0; i < n_pols && i < REPLAY_POLICIES_MAX; i++)
		policy_free(pols[i]);
	return rc;
}
