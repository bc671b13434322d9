/*
 * policy_dns - netd's policies as the DNS proxy sees them: struct
 * decide_policy over struct policy (the qname matcher, and each rule's
 * fields the decision reads, nothing copied but the few scalars of one
 * rule); and the rule key those fields come from that is the DNS proxy's
 * alone, `dns:` (the tunnelling defences: its parser, its defaults, its
 * words).  Pure.
 */
#include "netd/model/policy_dns.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/yamlx.h"
#include "dnsproxy/budget.h"

/* The parser's limits are the proxy's. */
_Static_assert(POLICY_DNS_BUDGET_MAX == BUDGET_NAMES_MAX, "dns.budget's maximum");
_Static_assert(POLICY_DNS_WINDOW_MAX == BUDGET_WINDOW_MAX, "dns.budget's window");
_Static_assert(POLICY_DNS_BUDGET_DEF == BUDGET_DEF_NAMES &&
	       POLICY_DNS_WINDOW_DEF == BUDGET_DEF_WINDOW, "dns.budget's default");
_Static_assert((int)POLICY_ENCODED_LOG == (int)DECIDE_ENCODED_LOG &&
	       (int)POLICY_ENCODED_REFUSE == (int)DECIDE_ENCODED_REFUSE, "dns.encoded");

/* ---- the decision's view ---------------------------------------------------- */

static size_t view_match(const void *pol, const char *qname, uint16_t *out, size_t max)
{
	return policy_match(pol, qname, out, max);
}

/* The rule's first wildcard, else its first domain: what its EDE text names. */
static const char *rule_pattern(const struct policy_rule *r)
{
	for (size_t i = 0; i < r->n_domains; i++)
		if (r->domains[i][0] == '*')
			return r->domains[i];
	return r->n_domains ? r->domains[0] : NULL;
}

static int view_rule(const void *pol, uint16_t i, struct decide_rule *out)
{
	const struct policy *p = pol;
	const struct policy_rule *r;

	if (i >= p->n_rules)
		return -ENOENT;
	r = &p->rules[i];
	*out = (struct decide_rule){
		.by_name = r->n_domains > 0,
		.ech_strip = r->n_domains > 0 && policy_rule_ech_strip(r),
		.proto = r->proto,
		.min_ttl_s = r->min_ttl_s,
		.max_qname_len = r->max_qname_len,
		.ports = r->ports,
		.n_ports = r->n_ports,
		.gateway = r->gateway != NULL,
		.budget_names = r->dns_budget,
		.budget_window_s = r->dns_window_s,
		.encoded = r->dns_encoded,
		.pattern = rule_pattern(r),
	};
	return 0;
}

static const struct decide_policy_ops view_ops = {
	.match = view_match,
	.rule = view_rule,
};

/* policy_match() less the rules @m leaves out; the count is of the rest. */
static size_t masked_match(const void *pol, const char *qname, uint16_t *out, size_t max)
{
	const struct policy_dns_masked *m = pol;
	uint16_t all[POLICY_MAX_RULES];
	size_t n = policy_match(m->p, qname, all, POLICY_MAX_RULES), k = 0;

	for (size_t i = 0; i < n && i < POLICY_MAX_RULES; i++) {
		if ((m->off[all[i] / 64] >> (all[i] % 64)) & 1)
			continue;
		if (k < max)
			out[k] = all[i];
		k++;
	}
	return k;
}

static int masked_rule(const void *pol, uint16_t i, struct decide_rule *out)
{
	return view_rule(((const struct policy_dns_masked *)pol)->p, i, out);
}

static const struct decide_policy_ops masked_ops = {
	.match = masked_match,
	.rule = masked_rule,
};

struct decide_policy policy_dns_view_masked(const struct policy_dns_masked *m)
{
	if (!m || !m->p)
		return (struct decide_policy){ 0 };
	if (!m->off)
		return policy_dns_view(m->p);
	return (struct decide_policy){ .ops = &masked_ops, .pol = m, .name = m->p->name };
}

struct decide_policy policy_dns_view(const struct policy *p)
{
	if (!p)
		return (struct decide_policy){ 0 };
	return (struct decide_policy){ .ops = &view_ops, .pol = p, .name = p->name };
}

/* ---- dns: { budget, encoded } ------------------------------------------------ */

const char *policy_encoded_str(enum policy_encoded e)
{
	return e == POLICY_ENCODED_REFUSE ? "refuse" : e == POLICY_ENCODED_LOG ? "log" : "off";
}

void policy_dns_defaults(struct policy_rule *rule)
{
	bool wildcard = false;

	for (size_t i = 0; i < rule->n_domains; i++)
		wildcard |= rule->domains[i][0] == '*';
	rule->dns_budget = wildcard ? POLICY_DNS_BUDGET_DEF : 0;
	rule->dns_window_s = wildcard ? POLICY_DNS_WINDOW_DEF : 0;
	rule->dns_encoded = wildcard ? POLICY_ENCODED_REFUSE : POLICY_ENCODED_OFF;
}

/* Digits @s/@n as a number up to @max (yamlx_digits()).  Return: 0; -EINVAL; -ERANGE. */
static int decimal(const char *s, size_t n, uint32_t max, uint32_t *ret)
{
	uint64_t v;
	int r = yamlx_digits(s, n, max, &v);

	if (r == 0)
		*ret = (uint32_t)v;
	return r;
}

/* The seconds of window unit @u/@un: 1, 60, 3600; 0 and a hint in @why if unknown. */
static uint32_t window_unit(const char *u, size_t un, uint32_t names, uint32_t count,
			    char *why, size_t whysz)
{
	static const struct {
		const char *word;
		char unit;
	} near[] = { { "sec", 's' }, { "secs", 's' }, { "second", 's' }, { "seconds", 's' },
		     { "min", 'm' }, { "mins", 'm' }, { "minute", 'm' }, { "minutes", 'm' },
		     { "hr", 'h' }, { "hrs", 'h' }, { "hour", 'h' }, { "hours", 'h' } };

	if (un == 1 && (*u == 's' || *u == 'm' || *u == 'h' || *u == 'd'))
		return *u == 's' ? 1 : *u == 'm' ? 60 : *u == 'h' ? 3600 : 86400;
	for (size_t k = 0; k < sizeof(near) / sizeof(near[0]); k++)
		if (un == strlen(near[k].word) && memcmp(u, near[k].word, un) == 0) {
			snprintf(why, whysz, "unknown unit '%.*s' (did you mean %u/%u%c?)", (int)un,
				 u, names, count, near[k].unit);
			return 0;
		}
	if (un == 1 && *u == 'w')
		snprintf(why, whysz, "a window of weeks is too long: at most 24h (1d)");
	else if (un == 0)
		snprintf(why, whysz, "the window needs a unit: s, m, h or d (e.g. %u/%um)", names,
			 count);
	else
		snprintf(why, whysz, "unknown unit (expected s, m, h or d: e.g. 500/10m)");
	return 0;
}

/* The window after '/': "10m", "m", "90s", "1h".  Return: 0; -EINVAL; -ERANGE. */
static int window_parse(const char *w, size_t wn, uint32_t names, uint32_t *ret,
			char *why, size_t whysz)
{
	size_t dn = 0;
	uint32_t count = 1, unit;
	int r;

	if (wn && *w == '-') {
		snprintf(why, whysz, "a negative window (write a window of 1s to 24h, e.g. "
			 "%u/10m)", names);
		return -EINVAL;
	}
	while (dn < wn && w[dn] >= '0' && w[dn] <= '9')
		dn++;
	if (dn && (r = decimal(w, dn, POLICY_DNS_WINDOW_MAX, &count)) < 0) {
		snprintf(why, whysz, r == -ERANGE ? "the window is too long: at most 24h"
			 : "the window's count must be a plain decimal number (e.g. %u/10m)",
			 names);
		return r;
	}
	if (!(unit = window_unit(w + dn, wn - dn, names, count, why, whysz)))
		return -EINVAL;
	if (count == 0) {
		snprintf(why, whysz, "a zero window counts nothing (write 1s to 24h, or "
			 "'budget: 0' to turn the budget off)");
		return -EINVAL;
	}
	if ((uint64_t)count * unit > POLICY_DNS_WINDOW_MAX) {
		snprintf(why, whysz, "the window is too long: at most 24h");
		return -ERANGE;
	}
	*ret = count * unit;
	return 0;
}

int policy_dns_budget_parse(const char *s, size_t len, uint32_t *names, uint32_t *window_s,
			    char *why, size_t whysz)
{
	const char *slash = memchr(s, '/', len);
	size_t nn = slash ? (size_t)(slash - s) : len;
	uint32_t n = 0, w = 0;
	int r;

	if ((len == 1 && *s == '0') || (len == 3 && memcmp(s, "off", 3) == 0)) {
		*names = *window_s = 0;
		return 0;
	}
	if (nn && *s == '-') {
		snprintf(why, whysz, "a negative count (write 1-%u names per window, or 0 to "
			 "turn the budget off)", POLICY_DNS_BUDGET_MAX);
		return -EINVAL;
	}
	r = decimal(s, nn, POLICY_DNS_BUDGET_MAX, &n);
	if (r == -ERANGE) {
		snprintf(why, whysz, "too many names (at most %u: a sandbox holds no more)",
			 POLICY_DNS_BUDGET_MAX);
		return r;
	}
	if (r < 0 || (!slash && n == 0)) {
		snprintf(why, whysz, "expected N/WINDOW, e.g. 500/10m (N names per window), or "
			 "0 to turn the budget off");
		return -EINVAL;
	}
	if (!slash) {
		snprintf(why, whysz, "no window: write %u/10m (names per 10 minutes), %u/1h, ...",
			 n, n);
		return -EINVAL;
	}
	if (n == 0) {
		snprintf(why, whysz, "a budget of 0 names: write 'budget: 0' (or off) to turn it "
			 "off, or 1-%u names", POLICY_DNS_BUDGET_MAX);
		return -EINVAL;
	}
	r = window_parse(slash + 1, len - nn - 1, n, &w, why, whysz);
	if (r < 0)
		return r;
	*names = n;
	*window_s = w;
	return 0;
}

const char *policy_dns_budget_format(const struct policy_rule *r, char *buf, size_t sz)
{
	char w[BUDGET_WINDOW_STRLEN];

	if (!r->dns_budget)
		snprintf(buf, sz, "off");
	else
		snprintf(buf, sz, "%u/%s", r->dns_budget,
			 budget_window_format(r->dns_window_s, w, sizeof(w)));
	return buf;
}

#define FAIL(n, ...) diag_set(err, file, (n)->line, (n)->col, __VA_ARGS__)

/* encoded: refuse | log | off, with a did-you-mean. */
static int parse_encoded(const struct yamlx_node *v, const char *file, struct diag *err,
			 const char *where, struct policy_rule *rule)
{
	static const char *const words[] = { "off", "log", "refuse" };
	const char *near;
	char q[300];

	for (int e = POLICY_ENCODED_OFF; e <= POLICY_ENCODED_REFUSE; e++)
		if (yamlx_is_str(v) && strcmp(v->str, words[e]) == 0) {
			rule->dns_encoded = (uint8_t)e;
			return 0;
		}
	if (!yamlx_is_str(v))
		return FAIL(v, "%s.dns.encoded: expected refuse, log or off, got %s", where,
			    yamlx_kind(v));
	near = yamlx_near_miss(v->str, words, 3);
	return FAIL(v, "%s.dns.encoded: expected refuse, log or off, got '%s'%s%s%s", where,
		    yamlx_quote(v->str, v->len, q, sizeof(q)), near ? " (did you mean '" : "",
		    near ? near : "", near ? "'?)" : "");
}

int policy_dns_parse(const struct yamlx_node *n, const char *file, struct diag *err,
		     const char *where, struct policy_rule *rule)
{
	static const char *const names[] = { "budget", "encoded" };
	const struct yamlx_node *v[2];
	char w[64], q[300], why[200];
	int r;

	snprintf(w, sizeof(w), "%s.dns", where);
	if (n->type != YAMLX_MAP)
		return FAIL(n, "%s: expected a mapping, got %s (e.g. dns: { budget: 500/10m, "
			    "encoded: refuse })", w, yamlx_kind(n));
	r = yamlx_fields(n, file, err, w, names, 2, NULL, v);
	if (r < 0)
		return r;
	rule->dns_set = true;
	if (v[0]) {
		if (!yamlx_is_str(v[0]))
			return FAIL(v[0], "%s.budget: expected N/WINDOW (e.g. 500/10m) or 0, got %s",
				    w, yamlx_kind(v[0]));
		if (policy_dns_budget_parse(v[0]->str, v[0]->len, &rule->dns_budget,
					    &rule->dns_window_s, why, sizeof(why)) < 0)
			return FAIL(v[0], "%s.budget: bad budget '%s': %s", w,
				    yamlx_quote(v[0]->str, v[0]->len, q, sizeof(q)), why);
	}
	if (v[1])
		return parse_encoded(v[1], file, err, where, rule);
	return 0;
}
