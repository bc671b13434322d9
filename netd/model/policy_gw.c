/*
 * policy_gw - a domain rule's `gateway:` (struct policy_gateway,
 * docs/policies.md): its schema with FILE:LINE:COL errors, the rate's
 * syntax, and the check of the credentials it names against netd.yaml's.
 * Pure: never logs, reads no file.  Not here: what the gateway does with
 * it (netd/gw/), the rest of a rule (policy_parse.c).
 */
#include "netd/model/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/yamlx.h"
#include "netd/model/config.h"

#define FAIL(n, ...) diag_set(err, file, (n)->line, (n)->col, __VA_ARGS__)

bool policy_cred_name_valid(const char *s, size_t len)
{
	if (len == 0 || len > POLICY_CRED_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (!alnum && (i == 0 || (ch != '_' && ch != '.' && ch != '-')))
			return false;
	}
	return true;
}

/* RFC 9110 5.6.2: tchar. */
static bool tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Decimal digits @s/@n, no sign, no leading zero, at most 9 digits (yamlx_digits()). */
static int decimal(const char *s, size_t n, uint64_t *ret)
{
	return yamlx_digits(s, n, 999999999, ret);
}

/* The next word of @s/@len from *@i (spaces and tabs apart): *@w, *@wn. */
static bool next_word(const char *s, size_t len, size_t *i, const char **w, size_t *wn)
{
	while (*i < len && (s[*i] == ' ' || s[*i] == '\t'))
		(*i)++;
	if (*i >= len)
		return false;
	*w = s + *i;
	while (*i < len && s[*i] != ' ' && s[*i] != '\t')
		(*i)++;
	*wn = (size_t)(s + *i - *w);
	return true;
}

int policy_gw_rate_parse(const char *s, size_t len, uint32_t *rate_milli, uint32_t *burst,
			 char *why, size_t whysz)
{
	static const char *const units[] = { "sec", "second", "min", "minute" };
	const char *w, *slash, *unit;
	size_t i = 0, wn, un, nn;
	uint64_t n, b = 0, milli;
	bool per_min;
	int r;

	if (!next_word(s, len, &i, &w, &wn)) {
		snprintf(why, whysz, "empty (expected N/s or N/m, e.g. 5/s burst 20)");
		return -EINVAL;
	}
	slash = memchr(w, '/', wn);
	if (!slash) {
		const char *w2;
		size_t wn2, j = i;

		if (decimal(w, wn, &n) == 0 && next_word(s, len, &j, &w2, &wn2) &&
		    ((wn2 == 3 && memcmp(w2, "per", 3) == 0) || (wn2 == 1 && *w2 == '/')))
			snprintf(why, whysz, "write the rate as N/s or N/m, no spaces "
				 "(did you mean %.*s/s?)", (int)wn, w);
		else if (decimal(w, wn, &n) == 0)
			snprintf(why, whysz, "no unit: write %.*s/s (per second) or %.*s/m "
				 "(per minute)", (int)wn, w, (int)wn, w);
		else
			snprintf(why, whysz, "expected N/s or N/m, e.g. 5/s burst 20");
		return -EINVAL;
	}
	nn = (size_t)(slash - w);
	unit = slash + 1;
	un = wn - nn - 1;
	r = decimal(w, nn, &n);
	if (r == -ERANGE) {
		snprintf(why, whysz, "too many requests (at most %u/s or %u/m)", POLICY_GW_RATE_MAX,
			 POLICY_GW_RATE_MAX * 60);
		return -ERANGE;
	}
	if (r < 0) {
		snprintf(why, whysz, "the count before '/' must be a plain decimal number "
			 "(e.g. 5/s)");
		return -EINVAL;
	}
	if (un == 1 && (*unit == 's' || *unit == 'm')) {
		per_min = *unit == 'm';
	} else {
		for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++)
			if (un == strlen(units[k]) && memcmp(unit, units[k], un) == 0) {
				snprintf(why, whysz, "unknown unit (did you mean %llu/%c?)",
					 (unsigned long long)n, units[k][0]);
				return -EINVAL;
			}
		if (un == 1 && (*unit == 'h' || *unit == 'd'))
			snprintf(why, whysz, "per %s is not supported: the rate is per second "
				 "or per minute (N/s, N/m)", *unit == 'h' ? "hour" : "day");
		else
			snprintf(why, whysz, "unknown unit (expected s or m: N/s or N/m)");
		return -EINVAL;
	}
	if (n == 0) {
		snprintf(why, whysz, "a rate of 0 lets nothing through (leave 'rate' out for no "
			 "limit)");
		return -EINVAL;
	}
	if (n > (per_min ? POLICY_GW_RATE_MAX * 60ull : POLICY_GW_RATE_MAX)) {
		snprintf(why, whysz, "too many requests (at most %u/s or %u/m)", POLICY_GW_RATE_MAX,
			 POLICY_GW_RATE_MAX * 60);
		return -ERANGE;
	}
	/* A minute's rate to the nearest milli-request a second, never 0. */
	milli = per_min ? (n * 1000 + 30) / 60 : n * 1000;
	if (milli == 0)
		milli = 1;
	if (next_word(s, len, &i, &w, &wn)) {
		if (wn != 5 || memcmp(w, "burst", 5) != 0) {
			snprintf(why, whysz, "after the rate only 'burst M' may follow "
				 "(e.g. 5/s burst 20)");
			return -EINVAL;
		}
		if (!next_word(s, len, &i, &w, &wn)) {
			snprintf(why, whysz, "'burst' without a number (e.g. 5/s burst 20)");
			return -EINVAL;
		}
		r = decimal(w, wn, &b);
		if (r == -EINVAL) {
			snprintf(why, whysz, "burst must be a plain decimal number (e.g. burst 20)");
			return -EINVAL;
		}
		if (r == -ERANGE || b > POLICY_GW_BURST_MAX) {
			snprintf(why, whysz, "burst too large (at most %u)", POLICY_GW_BURST_MAX);
			return -ERANGE;
		}
		if (b == 0) {
			snprintf(why, whysz, "burst 0 lets nothing through (at least 1)");
			return -EINVAL;
		}
		if (next_word(s, len, &i, &w, &wn)) {
			snprintf(why, whysz, "text after the burst (expected N/s burst M)");
			return -EINVAL;
		}
	} else {
		b = (milli + 999) / 1000;	/* ceil(per second), >= 1 */
	}
	*rate_milli = (uint32_t)milli;
	*burst = (uint32_t)b;
	return 0;
}

const char *policy_gw_rate_format(const struct policy_gateway *g, char *buf, size_t sz)
{
	if (!g || !g->rate_milli)
		snprintf(buf, sz, "%s", "");
	else if (g->rate_milli % 1000 == 0)
		snprintf(buf, sz, "%u/s burst %u", g->rate_milli / 1000, g->burst);
	else	/* a minute's rate: (n * 1000 + 30) / 60 comes back to n */
		snprintf(buf, sz, "%llu/m burst %u",
			 ((unsigned long long)g->rate_milli * 60 + 500) / 1000, g->burst);
	return buf;
}

/* A list of 1..POLICY_GW_MAX_ITEMS strings, each checked by @ok; copies in *@ret. */
static int gw_list(const struct yamlx_node *n, const char *file, struct diag *err,
		   const char *w, const char *example,
		   bool (*ok)(const struct yamlx_node *, char *, size_t), char ***ret,
		   size_t *n_ret, struct policy_pos **ret_pos)
{
	char q[300], why[200];

	if (n->type != YAMLX_SEQ)
		return FAIL(n, "%s: expected a list, got %s (e.g. %s)", w, yamlx_kind(n), example);
	if (n->n_kids == 0)
		return FAIL(n, "%s: empty list (leave the key out for no restriction; e.g. %s)", w,
			    example);
	if (n->n_kids > POLICY_GW_MAX_ITEMS)
		return FAIL(n->kids[POLICY_GW_MAX_ITEMS], "%s: too many entries (the limit is %u)",
			    w, POLICY_GW_MAX_ITEMS);
	*ret = calloc(n->n_kids, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	if (ret_pos && !(*ret_pos = calloc(n->n_kids, sizeof(**ret_pos))))
		return -ENOMEM;
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct yamlx_node *d = n->kids[i];

		if (!yamlx_is_str(d))
			return FAIL(d, "%s[%zu]: expected a string, got %s", w, i, yamlx_kind(d));
		yamlx_quote(d->str, d->len, q, sizeof(q));
		if (!ok(d, why, sizeof(why)))
			return FAIL(d, "%s[%zu]: bad entry '%s': %s", w, i, q, why);
		for (size_t k = 0; k < i; k++)
			if (strcmp((*ret)[k], d->str) == 0)
				return FAIL(d, "%s[%zu]: '%s' is listed twice (first at line %u, "
					    "column %u)", w, i, q, n->kids[k]->line, n->kids[k]->col);
		if (ret_pos)
			(*ret_pos)[i] = (struct policy_pos){ .line = d->line, .col = d->col };
		(*ret)[i] = strdup(d->str);
		if (!(*ret)[i])
			return -ENOMEM;
		(*n_ret)++;
	}
	return 0;
}

static bool cred_ok(const struct yamlx_node *d, char *why, size_t whysz)
{
	if (policy_cred_name_valid(d->str, d->len))
		return true;
	snprintf(why, whysz, "a credential name is 1-%u bytes of a-z 0-9 _ . -, starting with "
		 "a letter or digit (a name under netd.yaml's credentials:)", POLICY_CRED_NAME_MAX);
	return false;
}

/* RFC 9110 9.1: a method is a token, case-sensitive; taken as written. */
static bool method_ok(const struct yamlx_node *d, char *why, size_t whysz)
{
	if (d->len > POLICY_GW_METHOD_MAX) {
		snprintf(why, whysz, "longer than %u bytes", POLICY_GW_METHOD_MAX);
		return false;
	}
	for (size_t i = 0; i < d->len; i++)
		if (!tchar(d->str[i])) {
			snprintf(why, whysz, "a method is an RFC 9110 token (letters, digits and "
				 "!#$%%&'*+-.^_`|~), e.g. GET or POST");
			return false;
		}
	return d->len > 0;
}

/* An origin-form path (RFC 9110 4.2.1, 7.1) without query: '/' first, '*' only last. */
static bool path_ok(const struct yamlx_node *d, char *why, size_t whysz)
{
	if (d->len == 0 || d->str[0] != '/') {
		snprintf(why, whysz, "a path starts with '/' (e.g. \"/v1/*\")");
		return false;
	}
	if (d->len > POLICY_GW_PATH_MAX) {
		snprintf(why, whysz, "longer than %u bytes", POLICY_GW_PATH_MAX);
		return false;
	}
	for (size_t i = 0; i < d->len; i++) {
		unsigned char ch = (unsigned char)d->str[i];

		if (ch == '*' && i + 1 != d->len) {
			snprintf(why, whysz, "'*' only as the last byte (a prefix: \"/v1/*\")");
			return false;
		}
		if (ch == '?' || ch == '#') {
			snprintf(why, whysz, "the query and fragment are not matched: the path "
				 "ends before '%c'", ch);
			return false;
		}
		if (ch <= 0x20 || ch >= 0x7f) {
			snprintf(why, whysz, "byte %zu is not visible ASCII (percent-encode it as "
				 "the request does)", i);
			return false;
		}
	}
	return true;
}

int policy_gw_parse(const struct yamlx_node *n, const char *file, struct diag *err,
		    const char *where, struct policy_gateway **ret)
{
	static const char *const names[] = { "credentials", "rate", "methods", "paths" };
	const struct yamlx_node *v[4];
	struct policy_gateway *g;
	char w[64], q[300], why[300];
	int r;

	*ret = NULL;
	snprintf(w, sizeof(w), "%s.gateway", where);
	if (n->type != YAMLX_MAP)
		return FAIL(n, "%s: expected a mapping, got %s (e.g. gateway: { credentials: "
			    "[openai], rate: 5/s burst 20 }; '{}' for checks and audit only)", w,
			    yamlx_kind(n));
	r = yamlx_fields(n, file, err, w, names, 4, NULL, v);
	if (r < 0)
		return r;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	*ret = g;	/* the caller frees a half-built one */
	g->line = n->line;
	g->col = n->col;
	if (v[0]) {
		char w2[80];

		snprintf(w2, sizeof(w2), "%s.credentials", w);
		r = gw_list(v[0], file, err, w2, "credentials: [openai]", cred_ok, &g->credentials,
			    &g->n_credentials, &g->credential_pos);
		if (r < 0)
			return r;
	}
	if (v[1]) {
		if (!yamlx_is_str(v[1]))
			return FAIL(v[1], "%s.rate: expected N/s or N/m (e.g. 5/s burst 20), got %s",
				    w, yamlx_kind(v[1]));
		if (policy_gw_rate_parse(v[1]->str, v[1]->len, &g->rate_milli, &g->burst, why,
					 sizeof(why)) < 0)
			return FAIL(v[1], "%s.rate: bad rate '%s': %s", w,
				    yamlx_quote(v[1]->str, v[1]->len, q, sizeof(q)), why);
	}
	if (v[2]) {
		char w2[80];

		snprintf(w2, sizeof(w2), "%s.methods", w);
		r = gw_list(v[2], file, err, w2, "methods: [GET, POST]", method_ok, &g->methods,
			    &g->n_methods, &g->method_pos);
		if (r < 0)
			return r;
	}
	if (v[3]) {
		char w2[80];

		snprintf(w2, sizeof(w2), "%s.paths", w);
		r = gw_list(v[3], file, err, w2, "paths: [\"/v1/*\"]", path_ok, &g->paths,
			    &g->n_paths, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

int policy_gateway_check(const struct policy *p, const struct config *c, struct diag *err)
{
	const char *file = p->file ? p->file : "<input>";
	const char **names = NULL;

	/* No gateway to steer to: the daemon would refuse this policy at load. */
	if (!c->gw_port)
		for (size_t i = 0; i < p->n_rules; i++)
			if (p->rules[i].gateway) {
				diag_set(err, file, p->rules[i].gateway->line,
					 p->rules[i].gateway->col, "egress[%zu].gateway: needs the API "
					 "gateway, which %s turns off (gateway.port: 0)", i,
					 c->src_file ? c->src_file : "netd.yaml");
				return -EINVAL;
			}
	if (c->n_creds) {
		names = calloc(c->n_creds, sizeof(*names));
		if (!names)
			return -ENOMEM;
		for (size_t k = 0; k < c->n_creds; k++)
			names[k] = c->creds[k].name;
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_gateway *g = p->rules[i].gateway;

		for (size_t j = 0; g && j < g->n_credentials; j++) {
			const char *want = g->credentials[j], *near;
			struct policy_pos at = g->credential_pos ? g->credential_pos[j]
				: (struct policy_pos){ .line = g->line, .col = g->col };
			size_t k;

			for (k = 0; k < c->n_creds && strcmp(c->creds[k].name, want) != 0; k++)
				;
			if (k < c->n_creds)
				continue;
			near = names ? yamlx_near_miss(want, names, c->n_creds) : NULL;
			diag_set(err, file, at.line, at.col, "egress[%zu].gateway.credentials[%zu]: "
				 "no credential '%s' in %s%s%s%s", i, j, want,
				 c->src_file ? c->src_file : "netd.yaml",
				 near ? " (did you mean '" : c->n_creds ? "" :
				 " (it defines no credentials:)", near ? near : "", near ? "'?)" : "");
			free(names);
			return -EINVAL;
		}
	}
	free(names);
	return 0;
}

/* Is @name (a normalized name, no wildcard) strictly below @suffix? */
static bool below(const char *name, const char *suffix)
{
	size_t nl = strlen(name), sl = strlen(suffix);

	return nl > sl + 1 && name[nl - sl - 1] == '.' && strcmp(name + nl - sl, suffix) == 0;
}

/*
 * Can one name match both patterns (a name or "*.suffix", any depth below,
 * not the suffix itself; as gw_creds_host_ok() and policy_match() read them)?
 */
static bool patterns_overlap(const char *a, const char *b)
{
	bool wa = a[0] == '*' && a[1] == '.', wb = b[0] == '*' && b[1] == '.';

	if (wa && wb)	/* *.x.s and *.s share every name below x.s */
		return strcmp(a + 2, b + 2) == 0 || below(a + 2, b + 2) || below(b + 2, a + 2);
	if (wa)
		return below(b, a + 2);
	if (wb)
		return below(a, b + 2);
	return strcmp(a, b) == 0;
}

/* RFC 9110 9.3 and RFC 5789's methods: what a lower-case one surely meant. */
static const char *standard_method(const char *m, char *upper, size_t sz)
{
	static const char *const std[] = { "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT",
					   "OPTIONS", "TRACE", "PATCH" };
	size_t n = strlen(m);
	bool lower = false;

	if (n >= sz)
		return NULL;
	for (size_t i = 0; i <= n; i++) {
		lower |= m[i] >= 'a' && m[i] <= 'z';
		upper[i] = m[i] >= 'a' && m[i] <= 'z' ? (char)(m[i] - 'a' + 'A') : m[i];
	}
	for (size_t i = 0; lower && i < sizeof(std) / sizeof(std[0]); i++)
		if (strcmp(upper, std[i]) == 0)
			return std[i];
	return NULL;
}

__attribute__((format(printf, 5, 6)))
static void warn(struct policy_gw_warning *out, size_t max, size_t *n, struct policy_pos at,
		 const char *fmt, ...)
{
	va_list ap;

	if (*n < max) {
		out[*n].at = at;
		va_start(ap, fmt);
		vsnprintf(out[*n].msg, sizeof(out[*n].msg), fmt, ap);
		va_end(ap);
	}
	(*n)++;
}

size_t policy_gateway_warnings(const struct policy *p, const struct config *c,
			       struct policy_gw_warning *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		const struct policy_gateway *g = r->gateway;
		struct policy_pos gat;

		if (!g)
			continue;
		gat = (struct policy_pos){ .line = g->line, .col = g->col };
		for (size_t k = 0; k < g->n_methods; k++) {
			char upper[POLICY_GW_METHOD_MAX + 1];
			const char *m = standard_method(g->methods[k], upper, sizeof(upper));

			if (m)
				warn(out, max, &n, g->method_pos ? g->method_pos[k] : gat,
				     "egress[%zu].gateway.methods[%zu]: '%s': methods are "
				     "case-sensitive (RFC 9110 9.1); did you mean %s?", i, k,
				     g->methods[k], m);
		}
		for (size_t k = 0; k < r->n_ports; k++) {	/* a domain rule's: no ranges */
			if (r->ports[k].lo == 443)
				continue;
			warn(out, max, &n, gat, "egress[%zu].gateway: port %u is steered to the "
			     "gateway, which terminates TLS only: plain HTTP there is reset (HTTPS "
			     "is port 443; give a plain-HTTP port a rule without gateway:)", i,
			     r->ports[k].lo);
		}
		for (size_t k = 0; c && k < g->n_credentials; k++) {
			const struct config_credential *cr = config_find_credential(c,
										  g->credentials[k]);
			bool any = false;

			if (!cr)
				continue;	/* policy_gateway_check()'s error */
			for (size_t d = 0; !any && d < r->n_domains; d++)
				for (size_t h = 0; !any && h < cr->n_hosts; h++)
					any = patterns_overlap(r->domains[d], cr->hosts[h]);
			if (!any)
				warn(out, max, &n, g->credential_pos ? g->credential_pos[k] : gat,
				     "egress[%zu].gateway.credentials[%zu]: the hosts of credential "
				     "'%s' (%s%s) cover none of this rule's domains: every request "
				     "using it would be refused (credential-misdirected)", i, k,
				     cr->name, cr->hosts[0], cr->n_hosts > 1 ? ", ..." : "");
		}
	}
	return n;
}
