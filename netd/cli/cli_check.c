/*
 * cli_check - the commands that check files without a daemon: `netd policy
 * check FILE...` (every bad rule with FILE:LINE:COL, then the warnings and
 * notes policy_check's helpers find) and `netd config check [FILE]`.
 */
#include "netd/cli/cli_check.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/paths.h"
#include "common/special.h"
#include "netd/cli/cli_help.h"
#include "netd/model/config.h"
#include "netd/model/policy.h"

#define POLICY_CHECK_ERRORS 20	/* errors `policy check` lists per file */

/* `policy check`: a CIDR rule that opens part of the never-pin table is
 * allowed (the only way past it) but said aloud, on stderr. */
static void warn_never_pin(const char *file, const struct policy *p)
{
	for (size_t r = 0; r < p->n_rules; r++)
		for (size_t c = 0; c < p->rules[r].n_cidrs; c++) {
			const struct special_entry *e[3];
			char pfx[PREFIX_STRLEN];
			size_t n = special_overlaps(&p->rules[r].cidrs[c], 0, e, 3);

			prefix_format(&p->rules[r].cidrs[c], pfx, sizeof(pfx));
			for (size_t k = 0; k < n && k < 3; k++)
				fprintf(stderr, "%s:%u: warning: egress[%zu].cidrs[%zu] %s opens %s "
					"%s (%s), which no DNS answer can pin\n", file,
					p->rules[r].line, r, c, pfx, e[k]->cidr, e[k]->what,
					e[k]->source);
			if (n > 3)
				fprintf(stderr, "%s:%u: warning: egress[%zu].cidrs[%zu] %s opens %zu "
					"more never-pin blocks (docs/security.md)\n", file,
					p->rules[r].line, r, c, pfx, n - 3);
		}
}

/* "tls.sni enforce, http.host off" for rule @r, in @buf. */
static const char *l7_desc(const struct policy_rule *r, char *buf, size_t sz)
{
	snprintf(buf, sz, "tls.sni %s, http.host %s", policy_l7_str((enum policy_l7)r->tls_sni),
		 policy_l7_str((enum policy_l7)r->http_host));
	return buf;
}

/* Where domain @d of rule @r is: its own position, else the rule's. */
static struct policy_pos domain_at(const struct policy_rule *r, size_t d)
{
	if (r->domain_pos && d < r->n_domains)
		return r->domain_pos[d];
	return (struct policy_pos){ .line = r->line, .col = r->col };
}

/*
 * `policy check`: a checked rule and one that checks less which can admit
 * one address on one tcp port (policy_l7_gaps(), docs/sni.md "What the
 * check proves").  Warnings and notes on stderr; the exit status stays 0:
 * the policy is valid, the operator decides.
 */
static void warn_l7_gaps(const char *file, const struct policy *p)
{
	size_t n = policy_l7_gaps(p, NULL, 0);
	struct policy_l7_gap *g = n ? calloc(n, sizeof(*g)) : NULL;

	if (!g)
		return;
	n = policy_l7_gaps(p, g, n);
	for (size_t i = 0; i < n; i++) {
		const struct policy_rule *c = &p->rules[g[i].checked], *o = &p->rules[g[i].other];
		struct policy_pos cp = domain_at(c, g[i].cd), op = domain_at(o, g[i].od);
		char cm[64], om[64], pfx[PREFIX_STRLEN];
		const char *reg;

		l7_desc(c, cm, sizeof(cm));
		l7_desc(o, om, sizeof(om));
		switch (g[i].kind) {
		case POLICY_GAP_RELATED:
			reg = policy_registrable_domain(o->domains[g[i].od][0] == '*'
							? o->domains[g[i].od] + 2
							: o->domains[g[i].od]);
			fprintf(stderr, "%s:%u:%u: warning: egress[%zu].domains[%zu] %s (%s) and "
				"egress[%zu].domains[%zu] %s at %s:%u:%u (%s) share tcp port %u and "
				"are likely one site's (%s%s): if they resolve to one address, "
				"whichever rule's answer pinned it decides whether the check runs "
				"there; put the same tls/http check on both rules (docs/sni.md)\n",
				file, op.line, op.col, g[i].other, g[i].od, o->domains[g[i].od], om,
				g[i].checked, g[i].cd, c->domains[g[i].cd], file, cp.line, cp.col, cm,
				g[i].port, reg ? "both under " : "one under the other", reg ? reg : "");
			break;
		case POLICY_GAP_PORT:
			fprintf(stderr, "%s:%u:%u: note: egress[%zu] (%s) shares tcp port %u with "
				"egress[%zu] at %s:%u:%u (%s): if a name of egress[%zu] such as %s is "
				"served from an address of egress[%zu]'s names (one CDN or load "
				"balancer), whichever rule's answer pinned it decides whether the "
				"check runs there; the file cannot tell, netd does not resolve "
				"(docs/sni.md)\n", file, o->line, o->col, g[i].other, om, g[i].port,
				g[i].checked, file, c->line, c->col, cm, g[i].other,
				o->domains[g[i].od], g[i].checked);
			break;
		case POLICY_GAP_CIDR:
			prefix_format(&o->cidrs[0], pfx, sizeof(pfx));
			fprintf(stderr, "%s:%u:%u: warning: egress[%zu] (cidrs %s%s) gives tcp port "
				"%u, where egress[%zu] at %s:%u:%u checks (%s): connections to its "
				"addresses are accepted before the check, even where egress[%zu]'s "
				"names pinned them; narrow its ports or addresses (docs/sni.md)\n",
				file, o->line, o->col, g[i].other, pfx, o->n_cidrs > 1 ? ", ..." : "",
				g[i].port, g[i].checked, file, c->line, c->col, cm, g[i].checked);
			break;
		}
	}
	free(g);
}

/* `policy check`: each rule's except list, and the excepts another rule undoes. */
static void show_excepts(const char *file, const struct policy *p)
{
	for (size_t r = 0; r < p->n_rules; r++) {
		const struct policy_rule *rule = &p->rules[r];

		if (!rule->n_excepts)
			continue;
		printf("%s:%u: egress[%zu]: except", file, rule->line, r);
		for (size_t e = 0; e < rule->n_excepts; e++)
			printf("%s %s", e ? "," : "", rule->excepts[e]);
		printf(" (denied by this rule though its wildcards match)\n");
		for (size_t e = 0; e < rule->n_excepts; e++) {
			uint16_t o[1];

			if (policy_except_shadows(p, r, e, o, 1))
				fprintf(stderr, "%s:%u: warning: egress[%zu].except[%zu] %s is still "
					"allowed by egress[%u] (line %u)\n", file, rule->line, r, e,
					rule->excepts[e], o[0], p->rules[o[0]].line);
		}
	}
}

int cli_policy_check(int argc, char **argv)
{
	int bad = 0;

	if (argc < 3) {
		fprintf(stderr, "netd: policy check wants one or more FILEs\n");
		return CLI_USAGE;
	}
	/* Kept to catch one name in two files, which the daemon refuses. */
	struct policy **seen = calloc((size_t)argc, sizeof(*seen));
	size_t n_seen = 0;

	if (!seen)
		return 1;
	for (int i = 2; i < argc; i++) {
		struct diag err = { 0 }, more[POLICY_CHECK_ERRORS - 1];
		unsigned int n_more = 0;
		struct policy *p;
		char msg[1024];
		size_t k;

		if (policy_load_file_all(argv[i], &p, &err, more, POLICY_CHECK_ERRORS - 1,
					 &n_more) < 0) {
			/* Every bad rule, not only the first (issue 32). */
			fprintf(stderr, "%s\n", diag_format(&err, msg, sizeof(msg)));
			for (unsigned int m = 0; m < n_more; m++)
				fprintf(stderr, "%s\n", diag_format(&more[m], msg, sizeof(msg)));
			bad = 1;
			continue;
		}
		for (k = 0; k < n_seen && strcmp(seen[k]->name, p->name) != 0; k++)
			;
		if (k < n_seen) {
			fprintf(stderr, "%s:%u:%u: name: policy name '%s' is also used by %s:%u\n",
				argv[i], p->name_line, p->name_col, p->name, seen[k]->file,
				seen[k]->name_line);
			bad = 1;
			policy_free(p);
			continue;
		}
		printf("%s: ok (policy %s, %zu rule%s)\n", argv[i], p->name, p->n_rules,
		       p->n_rules == 1 ? "" : "s");
		warn_never_pin(argv[i], p);
		show_excepts(argv[i], p);
		warn_l7_gaps(argv[i], p);
		seen[n_seen++] = p;
	}
	for (size_t k = 0; k < n_seen; k++)
		policy_free(seen[k]);
	free(seen);
	return bad ? CLI_REJECTED : CLI_OK;
}

/*
 * `netd config check [FILE]`: netd.yaml(5) read as `netd run` would, without
 * starting anything; FILE:LINE:COL on an error.  Default: the packaged
 * config.  Exit: 0 valid; 6 invalid; 3 no such file; 2 usage.
 */
int cli_config_check(int argc, char **argv, const char *usage_text)
{
	const char *path = argc == 3 ? argv[2] : NETD_DEFAULT_CONFIG;
	struct diag err = { 0 };
	struct config cfg;
	char msg[1024];
	int r;

	if (argc < 2 || strcmp(argv[1], "check") != 0 || argc > 3)
	{
		fputs(usage_text, stderr);
		return CLI_USAGE;
	}
	if (config_init(&cfg) < 0)
		return CLI_FAILED;
	r = config_load_file(&cfg, path, &err);
	config_done(&cfg);
	if (r == -ENOENT) {
		fprintf(stderr, "netd: config check: %s: %s\n", path, strerror(-r));
		return CLI_NOT_FOUND;
	}
	if (r < 0) {
		fprintf(stderr, "%s\n", diag_format(&err, msg, sizeof(msg)));
		return r == -EINVAL ? CLI_REJECTED : CLI_FAILED;
	}
	printf("%s: ok\n", path);
	return CLI_OK;
}

