/*
 * cli_check - the commands that check files without a daemon: `netd policy
 * check FILE...` (every bad rule with FILE:LINE:COL, then the warnings and
 * notes policy_check's helpers find) and `netd config check [FILE]`.
 */
#include "netd/cli/cli_check.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/diag.h"
#include "common/paths.h"
#include "common/special.h"
#include "dnsproxy/budget.h"
#include "netd/cli/cli_help.h"
#include "netd/gw/creds.h"
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
				fprintf(stderr, "%s:%u:%u: warning: egress[%zu].cidrs[%zu] %s opens "
					"%s %s (%s), which no DNS answer can pin\n", file,
					p->rules[r].line, p->rules[r].col, r, c, pfx, e[k]->cidr, e[k]->what,
					e[k]->source);
			if (n > 3)
				fprintf(stderr, "%s:%u:%u: warning: egress[%zu].cidrs[%zu] %s opens "
					"%zu more never-pin blocks (docs/security.md)\n", file,
					p->rules[r].line, p->rules[r].col, r, c, pfx, n - 3);
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

/*
 * What `policy check` says a valid policy means (its excepts, DNS defences,
 * limits) goes to stdout as notes, "FILE:LINE:COL: note: ...", the shape
 * of the notes and warnings on stderr, so no line reads as an error.
 * @fmt: the rest of the note (printf); its newline is the caller's.
 */
static void __attribute__((format(printf, 4, 5)))
note_out(const char *file, unsigned int line, unsigned int col, const char *fmt, ...)
{
	va_list ap;

	printf("%s:%u:%u: note: ", file, line, col);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* `policy check`: each rule's except list, and the excepts another rule undoes. */
static void show_excepts(const char *file, const struct policy *p)
{
	for (size_t r = 0; r < p->n_rules; r++) {
		const struct policy_rule *rule = &p->rules[r];

		if (!rule->n_excepts)
			continue;
		note_out(file, rule->line, rule->col, "egress[%zu]: except", r);
		for (size_t e = 0; e < rule->n_excepts; e++)
			printf("%s %s", e ? "," : "", rule->excepts[e]);
		printf(" (denied by this rule though its wildcards match)\n");
		for (size_t e = 0; e < rule->n_excepts; e++) {
			uint16_t o[1];

			if (policy_except_shadows(p, r, e, o, 1))
				fprintf(stderr, "%s:%u:%u: warning: egress[%zu].except[%zu] %s is "
					"still allowed by egress[%u] (line %u)\n", file, rule->line,
					rule->col, r, e, rule->excepts[e], o[0], p->rules[o[0]].line);
		}
	}
}

#define PSL_TEXT "/usr/share/publicsuffix/public_suffix_list.dat"

static char **psl_lines;	/* the list's ASCII rules, "*." stripped; no "!" exceptions */
static size_t n_psl_lines;
static bool psl_text_loaded;

static void psl_text_load(void)
{
	FILE *f = fopen(PSL_TEXT, "re");
	char line[512];
	size_t cap = 0;

	while (f && fgets(line, sizeof(line), f)) {
		char *s = line, **grown;

		s[strcspn(s, " \t\r\n")] = '\0';
		if (!*s || s[0] == '/' || s[0] == '!')
			continue;	/* blank, a comment, an exception (not a suffix) */
		if (s[0] == '*' && s[1] == '.')
			s += 2;
		if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(s))
			continue;	/* a U-label: patterns are A-labels */
		if (n_psl_lines == cap) {
			cap = cap ? cap * 2 : 1024;
			if (!(grown = realloc(psl_lines, cap * sizeof(*grown))))
				break;
			psl_lines = grown;
		}
		if (!(psl_lines[n_psl_lines] = strdup(s)))
			break;
		n_psl_lines++;
	}
	if (f)
		fclose(f);
}

/* Is @name equal to or below @suffix (both lower case)? */
static bool at_or_below(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n == k ? strcmp(name, suffix) == 0
		      : n > k && name[n - k - 1] == '.' && strcmp(name + n - k, suffix) == 0;
}

/*
 * suffixes_below() - how many public suffixes of the Public Suffix List's
 * text (Debian's publicsuffix: libpsl answers "is this one a suffix", not
 * "which lie below") sit strictly below @base, leaving out those a
 * wildcard of @excepts takes back.  @example: the shortest (static
 * storage), or NULL.  Return: the count; 0 when the list cannot be read.
 */
static size_t suffixes_below(const char *base, char *const *excepts, size_t n_excepts,
			     const char **example)
{
	size_t count = 0, blen = strlen(base);

	*example = NULL;
	if (!psl_text_loaded) {
		psl_text_loaded = true;
		psl_text_load();
	}
	for (size_t i = 0; i < n_psl_lines; i++) {
		const char *s = psl_lines[i];
		bool taken = false;

		if (strlen(s) <= blen || !at_or_below(s, base))
			continue;
		for (size_t e = 0; e < n_excepts && !taken; e++)
			taken = excepts[e][0] == '*' && at_or_below(s, excepts[e] + 2);
		if (taken)
			continue;
		count++;
		if (!*example || strlen(s) < strlen(*example))
			*example = s;
	}
	return count;
}

/*
 * `policy check`: a wildcard over a domain with public suffixes below it
 * ("*.amazonaws.com" and s3.amazonaws.com): valid, and it allows every
 * owner's site under them; the suffixes an except takes back do not count.
 */
static void warn_suffixes_below(const char *file, const struct policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		for (size_t d = 0; d < r->n_domains; d++) {
			const char *example;
			struct policy_pos at = domain_at(r, d);
			size_t n;

			if (r->domains[d][0] != '*')
				continue;
			n = suffixes_below(r->domains[d] + 2, r->excepts, r->n_excepts, &example);
			if (n)
				fprintf(stderr, "%s:%u:%u: warning: egress[%zu].domains[%zu] %s covers "
					"%zu public suffix%s below it (%s%s): each name directly "
					"under one is a site of its own owner, and the wildcard allows "
					"every owner's; list the hosts, or take them back with except: "
					"['*.%s'%s] (docs/policies.md)\n", file, at.line, at.col, i, d,
					r->domains[d], n, n == 1 ? "" : "es", example,
					n == 1 ? "" : ", ...", example, n == 1 ? "" : ", ...");
		}
	}
}

/*
 * `policy check`: each domain rule's DNS tunnelling defences (dns:, or the
 * defaults of a wildcard rule) on stdout; a warning on stderr for a domain
 * the encoded-label score flags under encoded: refuse (a wildcard's
 * suffix: every name below it would be refused; an exact name: itself).
 */
static void show_dns(const char *file, const struct policy *p)
{
	static const char *const enc[] = { "not scored", "logged", "refused" };

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		char w[BUDGET_WINDOW_STRLEN], budget[96];

		if (!r->n_domains || (!r->dns_budget && !r->dns_encoded && !r->dns_set))
			continue;
		if (r->dns_budget)
			snprintf(budget, sizeof(budget), "%u names per %s a sandbox", r->dns_budget,
				 budget_window_format(r->dns_window_s, w, sizeof(w)));
		else
			snprintf(budget, sizeof(budget), "no name budget");
		note_out(file, r->line, r->col, "egress[%zu]: DNS tunnelling: %s, encoded names %s%s\n",
			 i, budget, enc[r->dns_encoded % 3],
			 r->dns_set ? "" : " (the defaults of a wildcard rule)");
		for (size_t d = 0; r->dns_encoded == POLICY_ENCODED_REFUSE && d < r->n_domains; d++) {
			const char *name = r->domains[d][0] == '*' ? r->domains[d] + 2 : r->domains[d];
			struct tunnel_score sc;
			struct policy_pos at = domain_at(r, d);

			if (tunnel_score(name, &sc))
				fprintf(stderr, "%s:%u:%u: warning: egress[%zu].domains[%zu] %s looks "
					"encoded to the tunnelling score (%s): %s; write dns: { "
					"encoded: log } on this rule (docs/dns.md)\n", file, at.line,
					at.col, i, d, r->domains[d], tunnel_shape_name(sc.shape),
					r->domains[d][0] == '*' ? "every name below it is refused"
								 : "it is refused");
		}
	}
}

/*
 * `policy check`: the limits the policy enforces on each sandbox, on
 * stdout as show_dns() says a rule's defences: limits.bandwidth (a
 * create's own rate overrides its direction), limits.connections,
 * limits.egress_bytes, and each rule's byte budget.
 */
static void show_limits(const char *file, const struct policy *p)
{
	char a[POLICY_RATE_STRLEN], b[POLICY_RATE_STRLEN], bud[POLICY_BUDGET_STRLEN];

	if (p->bw_egress_bps || p->bw_ingress_bps)
		note_out(file, p->limits_line, p->limits_col, "limits: bandwidth egress %s, ingress %s "
			 "a sandbox (its create's --egress-rate/--ingress-rate overrides either)\n",
			 p->bw_egress_bps ? policy_rate_format(p->bw_egress_bps, a, sizeof(a))
					  : "unlimited",
			 p->bw_ingress_bps ? policy_rate_format(p->bw_ingress_bps, b, sizeof(b))
					   : "unlimited");
	if (p->max_conns)
		note_out(file, p->limits_line, p->limits_col, "limits: connections %u a sandbox "
			 "(tracked at once; new ones over it are dropped)\n", p->max_conns);
	if (p->egress_bytes)
		note_out(file, p->limits_line, p->limits_col, "limits: egress_bytes %llu bytes sent a "
			 "sandbox, then new connections are refused and open ones %s\n",
			 (unsigned long long)p->egress_bytes,
			 p->quota_cut ? "cut (on_exceed: cut)" : "finish (on_exceed: finish)");
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		if (r->budget_bytes)
			note_out(file, r->line, r->col, "egress[%zu]: budget %s a sandbox (bytes both "
				 "ways; then the rule is closed until the %s ends, UTC)\n", i,
				 policy_budget_format(r->budget_bytes, r->budget_period_s, bud,
						      sizeof(bud)),
				 r->budget_period_s == 86400 ? "day" : "hour");
	}
}

/*
 * `policy check`: gateway rules that load but cannot work as written
 * (policy_gateway_warnings(); the credentials' hosts only with @cfg).
 */
static void warn_gateway(const char *file, const struct policy *p, const struct config *cfg)
{
	size_t n = policy_gateway_warnings(p, cfg, NULL, 0);
	struct policy_gw_warning *w = n ? calloc(n, sizeof(*w)) : NULL;

	if (!w)
		return;
	n = policy_gateway_warnings(p, cfg, w, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s:%u:%u: warning: %s\n", file, w[i].at.line, w[i].at.col,
			w[i].msg);
	free(w);
}

/*
 * `policy check` without --config: the credentials a gateway rule names
 * are the daemon's netd.yaml's, which was not read; say so once per file.
 */
static void note_gateway_unchecked(const char *file, const struct policy *p)
{
	for (size_t r = 0; r < p->n_rules; r++) {
		const struct policy_gateway *g = p->rules[r].gateway;

		if (!g || !g->n_credentials)
			continue;
		fprintf(stderr, "%s:%u:%u: note: egress[%zu].gateway names credentials; they "
			"were not checked against a netd.yaml (add --config /etc/netd/netd.yaml)\n",
			file, g->line, g->col, r);
		return;
	}
}

/*
 * --config FILE of `policy check` (@implicit: no FILE and no --config, so
 * NETD_DEFAULT_CONFIG, whose absence means the defaults, as for `netd run`):
 * netd.yaml into @cfg.  Return: CLI_OK or an exit status.
 */
static int load_check_config(const char *path, bool implicit, struct config *cfg)
{
	struct diag err = { 0 };
	char msg[1024];
	int r;

	if (config_init(cfg) < 0)
		return CLI_FAILED;
	r = config_load_file(cfg, path, &err);
	if (r < 0)
		config_done(cfg);
	if (r == -ENOENT && implicit) {
		/* As `netd run` without a netd.yaml: the built-in defaults. */
		if (config_init(cfg) < 0)
			return CLI_FAILED;
		fprintf(stderr, "netd: policy check: no %s, so the default policy_dir %s "
			"(as `netd run` without a netd.yaml)\n", path, cfg->policy_dir);
		return CLI_OK;
	}
	if (r == -ENOENT) {
		fprintf(stderr, "netd: policy check: --config %s: %s\n", path, strerror(-r));
		return CLI_NOT_FOUND;
	}
	if (r < 0) {
		fprintf(stderr, "%s\n", diag_format(&err, msg, sizeof(msg)));
		return r == -EINVAL ? CLI_REJECTED : CLI_FAILED;
	}
	return CLI_OK;
}

/* Each of @files[0..@n) checked; *@bad set if one is bad.  Return: CLI_OK; CLI_FAILED. */
static int policy_check_files(char *const *files, size_t n, const struct config *cfg, int *bad)
{
	/* Kept to catch one name in two files, which the daemon refuses. */
	struct policy **seen = calloc(n ? n : 1, sizeof(*seen));
	size_t n_seen = 0;
	char *const *argv = files;

	if (!seen)
		return CLI_FAILED;
	for (size_t i = 0; i < n; i++) {
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
			*bad = 1;
			continue;
		}
		/* A credential the daemon's netd.yaml does not define: refused at load too. */
		if (cfg && policy_gateway_check(p, cfg, &err) < 0) {
			fprintf(stderr, "%s\n", diag_format(&err, msg, sizeof(msg)));
			*bad = 1;
			policy_free(p);
			continue;
		}
		for (k = 0; k < n_seen && strcmp(seen[k]->name, p->name) != 0; k++)
			;
		if (k < n_seen) {
			fprintf(stderr, "%s:%u:%u: name: policy name '%s' is also used by %s:%u\n",
				argv[i], p->name_line, p->name_col, p->name, seen[k]->file,
				seen[k]->name_line);
			*bad = 1;
			policy_free(p);
			continue;
		}
		printf("%s: ok (policy %s, %zu rule%s)\n", argv[i], p->name, p->n_rules,
		       p->n_rules == 1 ? "" : "s");
		warn_never_pin(argv[i], p);
		show_excepts(argv[i], p);
		show_dns(argv[i], p);
		show_limits(argv[i], p);
		warn_suffixes_below(argv[i], p);
		warn_l7_gaps(argv[i], p);
		warn_gateway(argv[i], p, cfg);
		if (!cfg)
			note_gateway_unchecked(argv[i], p);
		seen[n_seen++] = p;
	}
	for (size_t k = 0; k < n_seen; k++)
		policy_free(seen[k]);
	free(seen);
	return CLI_OK;
}

/* A policy file of policy_dir, as the daemon picks them: *.yaml, *.yml, no dot file. */
static bool policy_file_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && ((n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
				  (n > 4 && strcmp(name + n - 4, ".yml") == 0));
}

/* @v[0..@n) and @v, as policy_dir_files() and expand_dirs() make them; NULL-safe. */
static void paths_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The policy files of @dir, "DIR/NAME" in name order as `netd run` reads
 * them, into *@ret (caller frees each and the array).  Return: CLI_OK;
 * CLI_NOT_FOUND (no such directory); CLI_FAILED.
 */
static int policy_dir_files(const char *dir, char ***ret, size_t *n_ret)
{
	char **v = NULL, **nv;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *dh = opendir(dir);
	int rc = CLI_OK;

	*ret = NULL;
	*n_ret = 0;
	if (!dh) {
		fprintf(stderr, "netd: policy check: policy_dir %s: %s\n", dir, strerror(errno));
		return errno == ENOENT ? CLI_NOT_FOUND : CLI_FAILED;
	}
	while ((e = readdir(dh))) {
		if (!policy_file_name(e->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if (!(nv = realloc(v, cap * sizeof(*v)))) {
				rc = CLI_FAILED;
				break;
			}
			v = nv;
		}
		if (asprintf(&v[n], "%s/%s", dir, e->d_name) < 0) {
			rc = CLI_FAILED;
			break;
		}
		n++;
	}
	closedir(dh);
	if (rc != CLI_OK) {
		paths_free(v, n);
		return rc;
	}
	if (n)
		qsort(v, n, sizeof(*v), path_cmp);
	*ret = v;
	*n_ret = n;
	return CLI_OK;
}

/*
 * `policy check FILE...`: a FILE that is a directory stands for its policy
 * files, as `netd run` reads its policy_dir (policy_dir_files()); the rest
 * as given.  *@ret, *@n_ret: the paths; the caller frees each and the
 * array.  Return: CLI_OK; CLI_FAILED; as policy_dir_files().
 */
static int expand_dirs(char *const *files, size_t n, char ***ret, size_t *n_ret)
{
	char **v = NULL;
	size_t nv = 0;
	int rc = CLI_OK;

	for (size_t i = 0; i < n && rc == CLI_OK; i++) {
		char *one, **grown, **sub = NULL;
		size_t n_sub = 0;
		struct stat st;

		if (stat(files[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			one = strdup(files[i]);
			if (one && (sub = malloc(sizeof(*sub))))
				sub[n_sub++] = one;
			else
				free(one);
			rc = sub ? CLI_OK : CLI_FAILED;
		} else if (!(one = strdup(files[i]))) {
			rc = CLI_FAILED;
		} else {
			for (size_t len = strlen(one); len > 1 && one[len - 1] == '/'; len--)
				one[len - 1] = '\0';	/* "dir/" -> "dir/a.yaml", not "dir//a.yaml" */
			rc = policy_dir_files(one, &sub, &n_sub);
			if (rc == CLI_OK && !n_sub)
				fprintf(stderr, "netd: policy check: %s: a directory without policy "
					"files (*.yaml, *.yml)\n", one);
			free(one);
		}
		if (rc == CLI_OK && n_sub) {
			grown = realloc(v, (nv + n_sub) * sizeof(*v));
			if (grown) {
				v = grown;
				memcpy(v + nv, sub, n_sub * sizeof(*sub));
				nv += n_sub;
				n_sub = 0;
			} else {
				rc = CLI_FAILED;
			}
		}
		paths_free(sub, n_sub);	/* the array, and what did not join @v */
	}
	if (rc != CLI_OK) {
		paths_free(v, nv);
		return rc;
	}
	*ret = v;
	*n_ret = nv;
	return CLI_OK;
}

int cli_policy_check(int argc, char **argv)
{
	const char *config_path = NULL;
	char **files, **dir_files = NULL;
	size_t n_files = 0, n_dir = 0;
	bool opts = true, implicit;
	struct config cfg;
	int bad = 0, rc;

	/* [--config NETD_YAML | --config=NETD_YAML] [FILE...], options anywhere before "--" */
	files = calloc((size_t)argc, sizeof(*files));
	if (!files)
		return CLI_FAILED;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (opts && strcmp(a, "--") == 0) {
			opts = false;
		} else if (opts && (strncmp(a, "--config=", 9) == 0 || strcmp(a, "--config") == 0)) {
			const char *v = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : NULL;

			if (!v || config_path) {
				if (!v)
					fprintf(stderr, "netd: policy check: --config wants a FILE "
						"(netd.yaml)\n");
				else
					fprintf(stderr, "netd: policy check: --config given twice "
						"(\"%s\", then \"%s\"): give it once\n", config_path, v);
				free(files);
				return CLI_USAGE;
			}
			config_path = v;
		} else if (opts && a[0] == '-' && a[1]) {
			fprintf(stderr, "netd: policy check: unknown option '%s' (usage: netd "
				"policy check [--config NETD_YAML] [FILE...])\n", a);
			free(files);
			return CLI_USAGE;
		} else {
			files[n_files++] = argv[i];
		}
	}
	if (config_path && !config_path[0]) {
		fprintf(stderr, "netd: policy check: --config wants a FILE (netd.yaml)\n");
		free(files);
		return CLI_USAGE;
	}
	/* No FILE and no --config: the default netd.yaml's policy_dir (no env var). */
	implicit = !n_files && !config_path;
	if (implicit)
		config_path = NETD_DEFAULT_CONFIG;
	if (config_path && (rc = load_check_config(config_path, implicit, &cfg)) != CLI_OK) {
		free(files);
		return rc;
	}
	/* No FILE: every policy `netd run` with this netd.yaml would load. */
	if (!n_files) {
		rc = policy_dir_files(cfg.policy_dir, &dir_files, &n_dir);
		if (rc == CLI_OK && !n_dir)
			fprintf(stderr, "netd: policy check: no policy files (*.yaml, *.yml) in "
				"policy_dir %s\n", cfg.policy_dir);
		if (rc == CLI_OK)
			rc = policy_check_files(dir_files, n_dir, &cfg, &bad);
	} else {
		rc = expand_dirs(files, n_files, &dir_files, &n_dir);
		if (rc == CLI_OK)
			rc = policy_check_files(dir_files, n_dir, config_path ? &cfg : NULL, &bad);
	}
	paths_free(dir_files, n_dir);
	free(files);
	if (config_path)
		config_done(&cfg);
	if (rc != CLI_OK)
		return rc;
	return bad ? CLI_REJECTED : CLI_OK;
}

/*
 * `config check`: every credential's secret read as the daemon reads it
 * (unreadable, bad mode or owner, bad bytes: an error), then dropped; a
 * warning when an inline value: sits in a netd.yaml group or others may
 * read.  Return: 0; as gw_creds_load().
 */
static int check_secrets(const struct config *cfg, const char *path, struct diag *err)
{
	struct gw_creds *cs = NULL;
	struct stat st;
	int r;

	if (!cfg->n_creds)
		return 0;
	r = gw_creds_load(cfg, &cs, err);
	gw_creds_free(cs);
	if (r < 0)
		return r;
	if (stat(path, &st) < 0 || !(st.st_mode & (S_IRGRP | S_IROTH)))
		return 0;
	for (size_t i = 0; i < cfg->n_creds; i++)
		if (cfg->creds[i].src == CONFIG_CRED_VALUE)
			fprintf(stderr, "%s:%u:%u: warning: credentials.%s.value: a secret inline in "
				"a file of mode %04o, which %s may read: chmod 0600 %s, or move it to "
				"file: or systemd:\n", path, cfg->creds[i].src_line,
				cfg->creds[i].src_col, cfg->creds[i].name,
				(unsigned int)(st.st_mode & 07777),
				st.st_mode & S_IROTH ? "every user" : "its group", path);
	return 0;
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
	if (r == -ENOENT && argc == 2) {
		/* What netd run does without the default file: the defaults. */
		config_done(&cfg);
		printf("%s: not present: netd run uses the built-in defaults "
		       "(docs/configuration.md)\n", path);
		return CLI_OK;
	}
	if (r == -ENOENT) {
		config_done(&cfg);
		fprintf(stderr, "netd: config check: %s: %s\n", path, strerror(-r));
		return CLI_NOT_FOUND;
	}
	if (r < 0) {
		config_done(&cfg);
		fprintf(stderr, "%s\n", diag_format(&err, msg, sizeof(msg)));
		return r == -EINVAL ? CLI_REJECTED : CLI_FAILED;
	}
	/* What the text cannot show: the CA file, the user, the secrets themselves. */
	if ((r = config_gateway_check(&cfg, &err)) == 0)
		r = check_secrets(&cfg, path, &err);
	if (r == 0 && cfg.ipfix.n_collectors && cfg.ipfix.enterprise == 32473)
		fprintf(stderr, "%s: note: ipfix.enterprise is 32473, RFC 5612's number for "
			"documentation: set your organisation's Private Enterprise Number "
			"(docs/flows.md)\n", path);
	config_done(&cfg);
	if (r < 0) {
		fprintf(stderr, "%s\n", diag_format(&err, msg, sizeof(msg)));
		return r == -ENOMEM ? CLI_FAILED : CLI_REJECTED;
	}
	printf("%s: ok\n", path);
	return CLI_OK;
}

