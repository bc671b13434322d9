/*
 * cli_suggest - `netd policy suggest`: the audit log files in, in the
 * order given, one JSON object per line (lines that are not are skipped
 * and counted on stderr), through netd/cli/suggest.c, and the policy out on
 * stdout.  The output is parsed back with policy_parse() before it is
 * printed: what this prints always passes `netd policy check`.
 */
#include "netd/cli/cli_suggest.h"

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
#include "netd/model/policy.h"
#include "netd/cli/suggest.h"

#define SUGGEST_DEFAULT_LOG "/var/log/netd/audit.jsonl"	/* as `netd audit` */
#define SUGGEST_FILES_MAX   64

static const char suggest_usage[] =
	"usage: netd policy suggest --sandbox NAME | --policy NAME [--since T]\n"
	"                           [--file AUDIT]... [--name NEW] [--wildcards]\n"
	"  writes a policy allowing what the audit log shows was used (stdout)\n"
	"  --wildcards: fold 3 or more sibling names connected to by name into *.DOMAIN\n"
	"  T: RFC 3339 UTC (2026-11-30T06:00:00Z, or a prefix of it) or N[smhd] ago\n"
	"  AUDIT: default the log `netd audit` reads: $NETD_AUDIT_LOG, else the running\n"
	"  daemon's, else the config's audit_log, else " SUGGEST_DEFAULT_LOG "\n";

/* cli_audit_fn for suggest_add(). */
static int feed(void *arg, const json_t *rec, const char *file, unsigned long line)
{
	return suggest_add(arg, rec);
}

/* Render, check that it parses as a policy, print.  Return: exit status. */
static int emit(struct suggest *s, const char *name, const char *source, unsigned int flags)
{
	struct policy *p = NULL;
	struct diag err = { 0 };
	char msg[1024], *out;
	size_t len;
	int r = suggest_render(s, name, source, flags, &out, &len);

	if (r < 0) {
		fprintf(stderr, "netd: policy suggest: %s\n", strerror(-r));
		return CLI_FAILED;
	}
	/* Fail closed: a suggestion netd would not load is never printed. */
	if (policy_parse(out, len, "<suggested>", &p, &err) < 0) {
		fprintf(stderr, "netd: policy suggest: internal error, the suggestion does not "
			"parse: %s\n", diag_format(&err, msg, sizeof(msg)));
		free(out);
		return CLI_FAILED;
	}
	policy_free(p);
	r = fwrite(out, 1, len, stdout) == len && fflush(stdout) == 0 ? CLI_OK : CLI_FAILED;
	if (r)
		fprintf(stderr, "netd: policy suggest: writing: %s\n", strerror(errno));
	free(out);
	return r;
}

int cli_suggest(int argc, char **argv, const char *socket_path)
{
	static const struct option opts[] = {
		{ "sandbox", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "since", required_argument, NULL, 't' },
		{ "file", required_argument, NULL, 'f' },
		{ "name", required_argument, NULL, 'n' },
		{ "wildcards", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct suggest_filter flt = { 0 };
	const char *files[SUGGEST_FILES_MAX], *name = NULL;
	char defname[POLICY_NAME_MAX + 1], source[512] = "";
	struct suggest *s;
	size_t n_files = 0;
	unsigned int flags = 0;
	const char *seen[128] = { 0 };
	int c, rc;

	optind = 1;
	while ((c = cli_opt_next("policy suggest", argc, argv, opts, "f", seen)) != -1) {
		switch (c) {
		case 's': flt.sandbox = optarg; break;
		case 'p': flt.policy = optarg; break;
		case 'n': name = optarg; break;
		case 'w': flags |= SUGGEST_WILDCARDS; break;
		case 'f':
			if (n_files == SUGGEST_FILES_MAX) {
				fprintf(stderr, "netd: policy suggest: at most %d --file\n",
					SUGGEST_FILES_MAX);
				return CLI_USAGE;
			}
			files[n_files++] = optarg;
			break;
		case 't':
			if (cli_audit_time(optarg, (long long)time(NULL), flt.since,
					   sizeof(flt.since)) < 0) {
				fprintf(stderr, "netd: policy suggest: bad --since \"%s\"\n%s", optarg,
					suggest_usage);
				return CLI_USAGE;
			}
			break;
		case 'h':
			fputs(suggest_usage, stdout);
			return 0;
		default:	/* cli_opt_next() said what */
			fprintf(stderr, "\n%s", suggest_usage);
			return CLI_USAGE;
		}
	}
	if (optind != argc || !flt.sandbox == !flt.policy) {
		fprintf(stderr, "netd: policy suggest wants exactly one of --sandbox and --policy\n%s",
			suggest_usage);
		return CLI_USAGE;
	}
	if (!policy_name_valid(flt.sandbox ? flt.sandbox : flt.policy)) {
		fprintf(stderr, "netd: policy suggest: invalid name \"%s\"\n",
			flt.sandbox ? flt.sandbox : flt.policy);
		return CLI_USAGE;
	}
	if (!name) {
		/* "<sandbox>-suggested", cut to a valid policy name. */
		snprintf(defname, sizeof(defname), "%.*s-suggested", POLICY_NAME_MAX - 10,
			 flt.sandbox ? flt.sandbox : flt.policy);
		name = defname;
	}
	if (!policy_name_valid(name)) {
		fprintf(stderr, "netd: policy suggest: invalid --name \"%s\" (1-%u bytes of A-Z "
			"a-z 0-9 _ . -, starting with a letter or digit)\n", name, POLICY_NAME_MAX);
		return CLI_USAGE;
	}
	if (suggest_new(&flt, &s) < 0)
		return CLI_FAILED;
	rc = cli_audit_read_files("policy suggest", files, n_files, socket_path, feed, s, source,
				  sizeof(source));
	if (rc != CLI_OK) {
		suggest_free(s);
		return rc;
	}
	rc = emit(s, name, source, flags);
	suggest_free(s);
	return rc;
}
