/*
 * policy_parse - the egress policy schema checker: YAML (via common/yamlx)
 * in, struct policy or a located diagnostic (file:line:col) out.  Pure:
 * never logs, never touches the network; the policy file's read is
 * policy_load_file()'s.  Files that are not plain UTF-8 (a byte-order
 * mark, a NUL, a malformed sequence) are refused.
 *
 * Names and patterns are checked by netd/model/policy_names.c; the parsed policy
 * is indexed by netd/model/policy_index.c and queried through netd/model/policy.c.
 */
#include "netd/model/policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/yamlx.h"

#define DNS_NAME_MAX  POLICY_PATTERN_MAX

struct ctx {
	const char *file;
	struct diag *err;
	struct diag *more;	/* the caller's room for errors after the first; NULL: none */
	unsigned int more_max, n_more;
	bool bad;		/* go_on() took an error: the reading went on past it */
	struct diag first;	/* ... the first one, as the caller's *err had it */
};

/*
 * After a step that returned @r: does the reading go on past its error?
 * Only when the caller gave room for more (policy_parse_all()); the first
 * error is kept aside, each later one goes to more[] (*err is written by
 * each error, and set back to the first at the end).
 */
static bool go_on(struct ctx *cx, int r)
{
	if (r != -EINVAL || !cx->more || !cx->err)
		return false;
	if (!cx->bad)
		cx->first = *cx->err;
	else if (cx->n_more < cx->more_max)
		cx->more[cx->n_more++] = *cx->err;
	cx->bad = true;
	return true;
}

#define FAIL(cx, n, ...) diag_set((cx)->err, (cx)->file, (n)->line, (n)->col, __VA_ARGS__)

/* Parse decimal port text @s/@n into @ret (1..65535). */
static int port_num(const char *s, size_t n, uint16_t *ret, char *why, size_t whysz)
{
	unsigned long v = 0;

	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			n = 0;
	if (n == 0) {
		snprintf(why, whysz, "not a number (expected 1-65535)");
		return -EINVAL;
	}
	if (n > 1 && s[0] == '0') {
		snprintf(why, whysz, "leading zero (write it in plain decimal)");
		return -EINVAL;
	}
	if (n > 5) {
		snprintf(why, whysz, "out of range (1-65535)");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (v == 0) {
		snprintf(why, whysz, "port 0 is not allowed (1-65535)");
		return -EINVAL;
	}
	if (v > 65535) {
		snprintf(why, whysz, "out of range (1-65535)");
		return -EINVAL;
	}
	*ret = (uint16_t)v;
	return 0;
}

/* ---- the schema ------------------------------------------------------ */

/* @n must be a list of 1..@max entries. */
static int check_list(struct ctx *cx, const struct yamlx_node *n, const char *where,
		      size_t max, const char *example)
{
	if (n->type != YAMLX_SEQ)
		return FAIL(cx, n, "%s: expected a list, got %s (e.g. %s)", where, yamlx_kind(n),
			    example);
	if (n->n_kids == 0)
		return FAIL(cx, n, "%s: empty list (e.g. %s)", where, example);
	if (n->n_kids > max)
		return FAIL(cx, n->kids[max], "%s: too many entries (the limit is %zu)", where, max);
	return 0;
}

/* domains: / except: -> @ret/@n_ret (normalized copies; freed with the policy);
 * @ret_pos (may be NULL): where each one is. */
static int parse_patterns(struct ctx *cx, const struct yamlx_node *n, const char *where,
			  const char *key, bool narrow, char ***ret, size_t *n_ret,
			  struct policy_pos **ret_pos)
{
	char w[64], q[300], why[400], buf[DNS_NAME_MAX + 2];
	int r;

	snprintf(w, sizeof(w), "%s.%s", where, key);
	r = check_list(cx, n, w, POLICY_MAX_ITEMS, narrow ? "except: [uploads.example.com]"
				: "domains: [example.com, \"*.example.com\"]");
	if (r < 0)
		return r;
	*ret = calloc(n->n_kids, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	if (ret_pos) {
		*ret_pos = calloc(n->n_kids, sizeof(**ret_pos));
		if (!*ret_pos)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct yamlx_node *d = n->kids[i];

		if (ret_pos)
			(*ret_pos)[i] = (struct policy_pos){ .line = d->line, .col = d->col };

		if (!yamlx_is_str(d))
			return FAIL(cx, d, "%s[%zu]: expected a domain name, got %s", w, i,
				    yamlx_kind(d));
		if (policy_pattern_norm(d->str, d->len, buf, why, sizeof(why), narrow) < 0)
			return FAIL(cx, d, "%s[%zu]: bad pattern '%s': %s", w, i,
				    yamlx_quote(d->str, d->len, q, sizeof(q)), why);
		(*ret)[i] = strdup(buf);
		if (!(*ret)[i])
			return -ENOMEM;
		(*n_ret)++;
	}
	return 0;
}

/*
 * An except narrows its own rule's wildcards, nothing else: it must lie
 * strictly inside one of them, and it must not cancel a whole domain
 * entry of the rule (that entry would silently allow nothing).
 */
static int check_excepts(struct ctx *cx, const struct yamlx_node *dn,
			 const struct yamlx_node *en, const char *where,
			 const struct policy_rule *rule)
{
	for (size_t i = 0; i < rule->n_excepts; i++) {
		const char *e = rule->excepts[i];
		const char *eh = e[0] == '*' ? e + 2 : e;	/* the name, or the wildcard's suffix */
		bool covered = false;

		for (size_t j = 0; j < rule->n_domains; j++) {
			const char *d = rule->domains[j];

			if (strcmp(d, e) == 0)
				return FAIL(cx, en->kids[i], "%s.except[%zu]: '%s' takes back all of "
					    "%s.domains[%zu]; remove both", where, i, e, where, j);
			if (d[0] == '*' && policy_name_below(eh, d + 2))
				covered = true;
			else if (d[0] != '*' && e[0] == '*' && policy_name_below(d, eh))
				return FAIL(cx, dn->kids[j], "%s.domains[%zu]: '%s' is inside "
					    "%s.except[%zu] '%s' of the same rule, so it is never "
					    "allowed; move it to a rule of its own", where, j, d,
					    where, i, e);
		}
		if (!covered)
			return FAIL(cx, en->kids[i], "%s.except[%zu]: '%s' is not inside any "
				    "wildcard of this rule's domains (an except only takes names "
				    "back from its own rule's '*.' patterns)", where, i, e);
	}
	return 0;
}

static int parse_cidrs(struct ctx *cx, const struct yamlx_node *n, const char *where,
		       struct policy_rule *rule)
{
	char w[64], q[300];
	int r;

	snprintf(w, sizeof(w), "%s.cidrs", where);
	r = check_list(cx, n, w, POLICY_MAX_ITEMS, "cidrs: [198.51.100.0/24]");
	if (r < 0)
		return r;
	rule->cidrs = calloc(n->n_kids, sizeof(*rule->cidrs));
	if (!rule->cidrs)
		return -ENOMEM;
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct yamlx_node *c = n->kids[i];
		struct prefix *pfx = &rule->cidrs[i];

		if (!yamlx_is_str(c))
			return FAIL(cx, c, "%s[%zu]: expected a CIDR, got %s", w, i, yamlx_kind(c));
		r = prefix_parse(c->str, pfx);
		if (r == -EDOM) {
			char fixed[PREFIX_STRLEN];

			/* prefix_parse() left addr and plen set: suggest the network. */
			for (size_t bit = pfx->plen; bit < addr_len(pfx->addr.family) * 8; bit++)
				pfx->addr.a[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
			return FAIL(cx, c, "%s[%zu]: bad CIDR '%s': host bits set (did you mean %s?)",
				    w, i, yamlx_quote(c->str, c->len, q, sizeof(q)),
				    prefix_format(pfx, fixed, sizeof(fixed)));
		}
		if (r < 0)
			return FAIL(cx, c, "%s[%zu]: bad CIDR '%s' (expected ADDR/LEN, e.g. "
				    "198.51.100.0/24 or 2001:db8::/32)", w, i,
				    yamlx_quote(c->str, c->len, q, sizeof(q)));
		rule->n_cidrs++;
	}
	return 0;
}

static int parse_ports(struct ctx *cx, const struct yamlx_node *n, const char *where,
		       struct policy_rule *rule, bool ranges_ok)
{
	char w[64], q[300], why[96];
	int r;

	snprintf(w, sizeof(w), "%s.ports", where);
	r = check_list(cx, n, w, POLICY_MAX_PORTS, "ports: [443]");
	if (r < 0)
		return r;
	rule->ports = calloc(n->n_kids, sizeof(*rule->ports));
	if (!rule->ports)
		return -ENOMEM;
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct yamlx_node *p = n->kids[i];
		struct port_range *pr = &rule->ports[i];
		const char *dash;

		if (!yamlx_is_str(p))
			return FAIL(cx, p, "%s[%zu]: expected a port number, got %s", w, i,
				    yamlx_kind(p));
		yamlx_quote(p->str, p->len, q, sizeof(q));
		dash = strchr(p->str, '-');
		if (dash && dash != p->str) {
			size_t lo_len = (size_t)(dash - p->str);

			if (!ranges_ok)
				return FAIL(cx, p, "%s[%zu]: port range '%s' in a domain rule; ranges "
					    "are allowed only in 'cidrs' rules", w, i, q);
			if (port_num(p->str, lo_len, &pr->lo, why, sizeof(why)) < 0 ||
			    port_num(dash + 1, p->len - lo_len - 1, &pr->hi, why, sizeof(why)) < 0)
				return FAIL(cx, p, "%s[%zu]: bad port range '%s': %s", w, i, q, why);
			if (pr->lo > pr->hi)
				return FAIL(cx, p, "%s[%zu]: bad port range '%s': reversed (write "
					    "%u-%u)", w, i, q, pr->hi, pr->lo);
		} else {
			if (port_num(p->str, p->len, &pr->lo, why, sizeof(why)) < 0)
				return FAIL(cx, p, "%s[%zu]: bad port '%s': %s", w, i, q, why);
			pr->hi = pr->lo;
		}
		rule->n_ports++;
	}
	return 0;
}

/* A plain decimal in [@lo, @hi] for key @key of rule @where. */
static int parse_rule_uint(struct ctx *cx, const struct yamlx_node *n, const char *where,
			   const char *key, unsigned long lo, unsigned long hi, uint32_t *ret)
{
	unsigned long v;
	char q[300];

	if (!yamlx_is_str(n))
		return FAIL(cx, n, "%s.%s: expected a number, got %s", where, key, yamlx_kind(n));
	if (yamlx_decimal(n, lo, hi, &v) == 0) {
		*ret = (uint32_t)v;
		return 0;
	}
	return FAIL(cx, n, "%s.%s: bad value '%s' (expected %lu-%lu)", where, key,
		    yamlx_quote(n->str, n->len, q, sizeof(q)), lo, hi);
}

/* The MODE of @w.@sub (off, log, enforce) at @v into @ret. */
static int l7_value(struct ctx *cx, const struct yamlx_node *v, const char *w, const char *sub,
		    uint8_t *ret)
{
	char q[300];

	for (int m = POLICY_L7_OFF; m <= POLICY_L7_ENFORCE; m++)
		if (yamlx_is_str(v) && strcmp(v->str, policy_l7_str((enum policy_l7)m)) == 0) {
			*ret = (uint8_t)m;
			return 0;
		}
	return FAIL(cx, v, "%s.%s: expected enforce, log or off, got '%s'", w, sub,
		    yamlx_is_str(v) ? yamlx_quote(v->str, v->len, q, sizeof(q)) : yamlx_kind(v));
}

/* http: { host: MODE } of rule @where (docs/sni.md); tls: is parse_tls(). */
static int parse_l7(struct ctx *cx, const struct yamlx_node *n, const char *where,
		    const char *key, const char *sub, uint8_t *ret)
{
	const struct yamlx_node *v;
	char w[64];
	int r;

	snprintf(w, sizeof(w), "%s.%s", where, key);
	if (n->type != YAMLX_MAP)
		return FAIL(cx, n, "%s: expected a mapping, got %s (e.g. %s: { %s: enforce })", w,
			    yamlx_kind(n), key, sub);
	r = yamlx_fields(n, cx->file, cx->err, w, &sub, 1, NULL, &v);
	if (r < 0 || !v)
		return r;
	return l7_value(cx, v, w, sub, ret);
}

/*
 * tls: { sni: MODE, ech: strip|keep|outer } of rule @where (docs/sni.md,
 * docs/dns.md).  Whether ech may be written (only where the SNI is
 * checked, and http.host counts) is known once http: is read too:
 * check_ech().
 */
static int parse_tls(struct ctx *cx, const struct yamlx_node *n, const char *where,
		     struct policy_rule *rule)
{
	static const char *const names[] = { "sni", "ech" };
	const struct yamlx_node *v[2];
	char w[64], q[300];
	int r;

	snprintf(w, sizeof(w), "%s.tls", where);
	if (n->type != YAMLX_MAP)
		return FAIL(cx, n, "%s: expected a mapping, got %s (e.g. tls: { sni: enforce })", w,
			    yamlx_kind(n));
	r = yamlx_fields(n, cx->file, cx->err, w, names, 2, NULL, v);
	if (r < 0)
		return r;
	if (v[0] && (r = l7_value(cx, v[0], w, "sni", &rule->tls_sni)) < 0)
		return r;
	if (!v[1])
		return 0;
	for (int e = POLICY_ECH_STRIP; e <= POLICY_ECH_OUTER; e++)
		if (yamlx_is_str(v[1]) && strcmp(v[1]->str, policy_ech_str((enum policy_ech)e)) == 0) {
			rule->tls_ech = (uint8_t)e;
			rule->ech_pos = (struct policy_pos){ v[1]->line, v[1]->col };
			return 0;
		}
	if (yamlx_is_str(v[1])) {
		static const char *const words[] = { "strip", "keep", "outer" };
		const char *near = yamlx_near_miss(v[1]->str, words, 3);

		return FAIL(cx, v[1], "%s.ech: expected strip, keep or outer, got '%s'%s%s%s", w,
			    yamlx_quote(v[1]->str, v[1]->len, q, sizeof(q)),
			    near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
	}
	return FAIL(cx, v[1], "%s.ech: expected strip, keep or outer, got %s", w,
		    yamlx_kind(v[1]));
}

/*
 * tls.ech of rule @idx (parsed by parse_tls()) has something to act on:
 * a check of the SNI, tls.sni or http.host at log or enforce.  Without
 * one, ECH hides nothing netd reads, and a key that does nothing is
 * refused rather than silently ignored.
 */
static int check_ech(struct ctx *cx, size_t idx, const struct policy_rule *rule)
{
	if (!rule->tls_ech || rule->tls_sni || rule->http_host)
		return 0;
	return diag_set(cx->err, cx->file, rule->ech_pos.line, rule->ech_pos.col,
			"egress[%zu].tls.ech: %s applies only to a rule that checks the SNI "
			"(tls.sni or http.host at log or enforce%s); without a check ECH is "
			"passed on as it is: add 'sni: enforce' or remove 'ech'", idx,
			policy_ech_str((enum policy_ech)rule->tls_ech),
			rule->proto == IPPROTO_UDP ? ", or a tcp rule's check on one of its "
			"ports, which a udp domain rule inherits" : "");
}

/*
 * check_ech() for the udp rules, once inherit_quic() gave each the check
 * of the tcp rules on its ports (a udp rule that inherits one may say how
 * ECH is treated without writing sni: itself).  Return: 0; -EINVAL.
 */
static int check_ech_udp(struct ctx *cx, struct policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		int r = p->rules[i].proto == IPPROTO_UDP ? check_ech(cx, i, &p->rules[i]) : 0;

		if (r < 0 && !go_on(cx, r))
			return r;
	}
	return cx->bad ? -EINVAL : 0;
}

/* Do port ranges @a and @b share a port? */
static bool ports_meet(const struct port_range *a, size_t na, const struct port_range *b,
		       size_t nb)
{
	for (size_t i = 0; i < na; i++)
		for (size_t k = 0; k < nb; k++)
			if (a[i].lo <= b[k].hi && b[k].lo <= a[i].hi)
				return true;
	return false;
}

/*
 * QUIC (docs/sni.md): a udp domain rule on a port where a tcp domain rule
 * checks the SNI or the Host is checked at least as strictly - its tls.sni
 * is raised to the strictest of those (tls_sni_inherited), so HTTP/3 is
 * no way around a check the policy puts on HTTPS.  Never lowered.
 *
 * Its tls.ech, when not written, follows the same tcp rules: outer when
 * every tcp domain rule that checks a port it shares says outer, so a
 * browser's GREASE ECH over HTTP/3 is judged as over HTTPS; otherwise the
 * default (an ECH hello refused).  Written on the udp rule, it is its own.
 */
static void inherit_quic(struct policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		struct policy_rule *u = &p->rules[i];
		bool outer = true;

		if (u->proto != IPPROTO_UDP || !u->n_domains)
			continue;
		for (size_t k = 0; k < p->n_rules; k++) {
			const struct policy_rule *t = &p->rules[k];
			uint8_t m = t->tls_sni > t->http_host ? t->tls_sni : t->http_host;

			if (t->proto != IPPROTO_TCP || !t->n_domains || m == POLICY_L7_OFF ||
			    !ports_meet(u->ports, u->n_ports, t->ports, t->n_ports))
				continue;
			if (t->tls_ech != POLICY_ECH_OUTER)
				outer = false;
			if (m > u->tls_sni) {
				u->tls_sni = m;
				u->tls_sni_inherited = true;
			}
		}
		if (u->tls_sni_inherited && u->tls_ech == POLICY_ECH_DEFAULT && outer)
			u->tls_ech = POLICY_ECH_OUTER;
	}
}

/*
 * gateway: (netd/model/policy_gw.c), k/v of parse_rule() (8 tls, 9 http, 3
 * protocol, 10 gateway): HTTPS over tcp, and never with tls:/http:, whose
 * checks the gateway does itself on every request.
 */
static int parse_rule_gateway(struct ctx *cx, const struct yamlx_node *const *k,
			      const struct yamlx_node *const *v, const char *where,
			      struct policy_rule *rule)
{
	if (rule->proto != IPPROTO_TCP)
		return FAIL(cx, k[10], "%s.gateway: the gateway speaks HTTPS over tcp; this rule "
			    "is protocol udp (drop 'protocol: udp' or the gateway)", where);
	for (size_t i = 8; i <= 9; i++)
		if (v[i])
			return FAIL(cx, k[i], "%s.%s: not with gateway: the gateway checks the "
				    "TLS server_name and every request's Host itself (a mismatch "
				    "is refused with 421); remove '%s'", where,
				    i == 8 ? "tls" : "http", i == 8 ? "tls" : "http");
	return policy_gw_parse(v[10], cx->file, cx->err, where, &rule->gateway);
}

static int parse_rule(struct ctx *cx, const struct yamlx_node *n, size_t idx,
		      struct policy_rule *rule)
{
	static const char *const names[] = { "domains", "cidrs", "ports", "protocol",
					     "min_ttl", "max_qname_length", "idle_grace",
					     "except", "tls", "http", "gateway", "dns", "budget" };
	const struct yamlx_node *k[13], *v[13];
	char where[32], q[300];
	int r;

	snprintf(where, sizeof(where), "egress[%zu]", idx);
	rule->line = n->line;
	rule->col = n->col;
	rule->proto = IPPROTO_TCP;
	if (n->type != YAMLX_MAP)
		return FAIL(cx, n, "%s: expected a mapping with 'domains' or 'cidrs' and 'ports', "
			    "got %s", where, yamlx_kind(n));
	r = yamlx_fields(n, cx->file, cx->err, where, names, 13, k, v);
	if (r < 0)
		return r;
	if (v[0] && v[1]) {
		const struct yamlx_node *later = k[0]->line > k[1]->line ||
			(k[0]->line == k[1]->line && k[0]->col > k[1]->col) ? k[0] : k[1];

		return FAIL(cx, later, "%s: a rule has either 'domains' or 'cidrs', not both "
			    "(write two rules)", where);
	}
	if (!v[0] && !v[1])
		return FAIL(cx, n, "%s: missing required key 'domains' or 'cidrs'", where);
	if (!v[2])
		return FAIL(cx, n, "%s: missing required key 'ports'", where);
	r = v[0] ? parse_patterns(cx, v[0], where, "domains", false, &rule->domains,
				  &rule->n_domains, &rule->domain_pos)
		 : parse_cidrs(cx, v[1], where, rule);
	if (r < 0)
		return r;
	if (v[7]) {
		if (!v[0])
			return FAIL(cx, k[7], "%s.except: only a 'domains' rule has names to take "
				    "back", where);
		r = parse_patterns(cx, v[7], where, "except", true, &rule->excepts,
				   &rule->n_excepts, NULL);
		if (r < 0)
			return r;
		r = check_excepts(cx, v[0], v[7], where, rule);
		if (r < 0)
			return r;
	}
	r = parse_ports(cx, v[2], where, rule, v[1] != NULL);
	if (r < 0)
		return r;
	if (v[3]) {
		if (!yamlx_is_str(v[3]))
			return FAIL(cx, v[3], "%s.protocol: expected tcp or udp, got %s", where,
				    yamlx_kind(v[3]));
		if (strcasecmp(v[3]->str, "tcp") == 0)
			rule->proto = IPPROTO_TCP;
		else if (strcasecmp(v[3]->str, "udp") == 0)
			rule->proto = IPPROTO_UDP;
		else
			return FAIL(cx, v[3], "%s.protocol: bad protocol '%s' (expected tcp or udp)",
				    where, yamlx_quote(v[3]->str, v[3]->len, q, sizeof(q)));
	}
	if (v[10] && !v[0])
		return FAIL(cx, k[10], "%s.gateway: only a 'domains' rule goes through the "
			    "gateway (it steers the addresses its names' DNS answers pinned)", where);
	for (size_t i = 4; i < 12; i++)
		if (v[i] && !v[0] && i != 10)
			return FAIL(cx, k[i], "%s.%s: only a 'domains' rule has DNS answers to "
				    "apply it to", where, names[i]);
	/* dns: the tunnelling defences (netd/model/policy_dns.c); defaults first. */
	if (v[0])
		policy_dns_defaults(rule);
	if (v[11] && (r = policy_dns_parse(v[11], cx->file, cx->err, where, rule)) < 0)
		return r;
	if (v[4]) {
		r = parse_rule_uint(cx, v[4], where, "min_ttl", 1, POLICY_MIN_TTL_MAX,
				    &rule->min_ttl_s);
		if (r < 0)
			return r;
	}
	if (v[5]) {
		uint32_t x;

		/* RFC 1035 3.1: 255 octets on the wire = 253 characters. */
		r = parse_rule_uint(cx, v[5], where, "max_qname_length", 1, 253, &x);
		if (r < 0)
			return r;
		rule->max_qname_len = (uint16_t)x;
	}
	/* How long an expired pin stays after its last connection closed (netd/trail/grace.h). */
	if (v[6]) {
		r = parse_rule_uint(cx, v[6], where, "idle_grace", 0, POLICY_IDLE_GRACE_MAX,
				    &rule->idle_grace_s);
		if (r < 0)
			return r;
		rule->idle_grace_set = true;
	}
	if (v[8] && (r = parse_tls(cx, v[8], where, rule)) < 0)
		return r;
	if (v[9] && (r = parse_l7(cx, v[9], where, "http", "host", &rule->http_host)) < 0)
		return r;
	/* tls.sni on a udp rule is the QUIC check; HTTP/3 has no Host to read. */
	if (rule->http_host && rule->proto != IPPROTO_TCP)
		return FAIL(cx, k[9], "%s: http.host applies to tcp rules only (a udp rule "
			    "checks QUIC's SNI with tls: { sni: ... })", where);
	/* budget: netd/model/policy_bw.c (domain rules: policy_budget_node() says why). */
	if (v[12] && (r = policy_budget_node(v[12], cx->file, cx->err, where, rule)) < 0)
		return r;
	if (v[10])
		return parse_rule_gateway(cx, k, v, where, rule);
	return 0;
}

int policy_parse_size(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0, mul = 1;
	size_t n = len;

	if (len == 0)
		return -EINVAL;
	switch (s[len - 1]) {
	case 'k': case 'K': mul = 1ull << 10; n--; break;
	case 'm': case 'M': mul = 1ull << 20; n--; break;
	case 'g': case 'G': mul = 1ull << 30; n--; break;
	default: break;
	}
	if (n == 0 || n > 16)	/* 16 digits keep v * mul far below 2^64 */
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > POLICY_EGRESS_MAX / mul || v == 0)
		return -ERANGE;
	*ret = v * mul;
	return 0;
}

/* limits.connections: N, 1..POLICY_CONNS_MAX (tracked connections of one sandbox). */
static int parse_limit_connections(struct ctx *cx, const struct yamlx_node *n, struct policy *p)
{
	return parse_rule_uint(cx, n, "limits", "connections", 1, POLICY_CONNS_MAX, &p->max_conns);
}

/* limits: { egress_bytes: SIZE, on_exceed: finish|cut, connections: N, bandwidth: {...} } */
static int parse_limits(struct ctx *cx, const struct yamlx_node *n, struct policy *p)
{
	static const char *const names[] = { "egress_bytes", "on_exceed", "connections",
					     "bandwidth" };
	const struct yamlx_node *v[4];
	char q[300];
	int r;

	if (n->type != YAMLX_MAP)
		return FAIL(cx, n, "limits: expected a mapping, got %s (e.g. limits: { egress_bytes: 500M })",
			    yamlx_kind(n));
	r = yamlx_fields(n, cx->file, cx->err, "limits", names, 4, NULL, v);
	if (r < 0)
		return r;
	p->limits_line = n->line;
	p->limits_col = n->col;
	if (v[2] && (r = parse_limit_connections(cx, v[2], p)) < 0)
		return r;
	/* limits.bandwidth: netd/model/policy_bw.c */
	if (v[3] && (r = policy_bw_parse(v[3], cx->file, cx->err, p)) < 0)
		return r;
	if (v[0]) {
		if (!yamlx_is_str(v[0]) || policy_parse_size(v[0]->str, v[0]->len, &p->egress_bytes) < 0)
			return FAIL(cx, v[0], "limits.egress_bytes: bad size '%s' (expected 1 to 2^50 bytes, "
				    "digits with an optional K, M or G suffix, e.g. 500M)",
				    yamlx_is_str(v[0]) ? yamlx_quote(v[0]->str, v[0]->len, q, sizeof(q))
						       : yamlx_kind(v[0]));
	}
	if (v[1]) {
		if (yamlx_is_str(v[1]) && strcmp(v[1]->str, "cut") == 0)
			p->quota_cut = true;
		else if (!(yamlx_is_str(v[1]) && strcmp(v[1]->str, "finish") == 0))
			return FAIL(cx, v[1], "limits.on_exceed: expected 'finish' or 'cut', got '%s'",
				    yamlx_is_str(v[1]) ? yamlx_quote(v[1]->str, v[1]->len, q, sizeof(q))
						       : yamlx_kind(v[1]));
		if (!v[0])
			return FAIL(cx, v[1], "limits.on_exceed: needs limits.egress_bytes");
	}
	return 0;
}

/* One of two words for key @key: *@ret = true for @yes, false for @no. */
static int parse_word(struct ctx *cx, const struct yamlx_node *n, const char *key,
		      const char *no, const char *yes, bool *ret)
{
	char q[300];

	if (yamlx_is_str(n) && strcmp(n->str, yes) == 0)
		*ret = true;
	else if (yamlx_is_str(n) && strcmp(n->str, no) == 0)
		*ret = false;
	else if (yamlx_is_str(n))
		return FAIL(cx, n, "%s: expected '%s' or '%s', got '%s'", key, no, yes,
			    yamlx_quote(n->str, n->len, q, sizeof(q)));
	else
		return FAIL(cx, n, "%s: expected '%s' or '%s', got %s", key, no, yes,
			    yamlx_kind(n));
	return 0;
}

/*
 * Every rule of @eg into @p; past a bad rule when go_on() says so, so that
 * `policy check` reports every rule to fix at once.  Return: 0; -EINVAL;
 * -ENOMEM.
 */
static int parse_rules(struct ctx *cx, const struct yamlx_node *eg, struct policy *p)
{
	for (size_t i = 0; i < eg->n_kids; i++) {
		int r;

		/* Count the rule first so policy_free() frees a half-built one. */
		p->n_rules++;
		r = parse_rule(cx, eg->kids[i], i, &p->rules[i]);
		/* A udp rule's check may be inherited: its ech is checked after
		 * inherit_quic() (check_ech_udp()). */
		if (r == 0 && p->rules[i].proto != IPPROTO_UDP)
			r = check_ech(cx, i, &p->rules[i]);
		if (r < 0 && !go_on(cx, r))
			return r;
	}
	return 0;
}

static int parse_doc(struct ctx *cx, const struct yamlx_node *root, struct policy *p)
{
	static const char *const names[] = { "name", "description", "egress", "limits", "mode",
					     "on_deny" };
	const struct yamlx_node *v[6], *eg;
	char q[300];
	int r;

	if (!root)
		return diag_set(cx->err, cx->file, 1, 1,
				"empty policy; expected a mapping with 'name' and 'egress'");
	if (root->type != YAMLX_MAP)
		return FAIL(cx, root, "policy: expected a mapping with 'name' and 'egress', got %s",
			    yamlx_kind(root));
	r = yamlx_fields(root, cx->file, cx->err, "policy", names, 6, NULL, v);
	if (r < 0)
		return r;
	if (!v[0])
		return FAIL(cx, root, "policy: missing required key 'name'");
	if (!v[2])
		return FAIL(cx, root, "policy: missing required key 'egress' (write 'egress: []' "
			    "to deny everything)");

	if (!yamlx_is_str(v[0]))
		return FAIL(cx, v[0], "name: expected a string, got %s", yamlx_kind(v[0]));
	if (!policy_name_valid(v[0]->str))
		return FAIL(cx, v[0], "name: bad policy name '%s' (1-%u bytes of A-Z a-z 0-9 _ . -, "
			    "starting with a letter or digit)",
			    yamlx_quote(v[0]->str, v[0]->len, q, sizeof(q)), POLICY_NAME_MAX);
	p->name = strdup(v[0]->str);
	if (!p->name)
		return -ENOMEM;
	p->name_line = v[0]->line;
	p->name_col = v[0]->col;

	if (v[1] && !yamlx_is_null(v[1])) {
		if (!yamlx_is_str(v[1]))
			return FAIL(cx, v[1], "description: expected a string, got %s",
				    yamlx_kind(v[1]));
		if (v[1]->len > POLICY_DESCRIPTION_MAX)
			return FAIL(cx, v[1], "description: %zu bytes long; the limit is %u",
				    v[1]->len, POLICY_DESCRIPTION_MAX);
		p->description = strdup(v[1]->str);
		if (!p->description)
			return -ENOMEM;
	}

	/* Past a bad one of these, the rules are still read (go_on()). */
	if (v[3] && !yamlx_is_null(v[3]) && (r = parse_limits(cx, v[3], p)) < 0 && !go_on(cx, r))
		return r;
	if (v[4] && (r = parse_word(cx, v[4], "mode", "enforce", "audit", &p->audit)) < 0 &&
	    !go_on(cx, r))
		return r;
	if (v[5] && (r = parse_word(cx, v[5], "on_deny", "drop", "reject", &p->reject)) < 0 &&
	    !go_on(cx, r))
		return r;

	eg = v[2];
	if (eg->type != YAMLX_SEQ)
		return FAIL(cx, eg, "egress: expected a list, got %s (write 'egress: []' to deny "
			    "everything)", yamlx_kind(eg));
	if (eg->n_kids > POLICY_MAX_RULES)
		return FAIL(cx, eg->kids[POLICY_MAX_RULES], "egress: too many rules (the limit is %u)",
			    POLICY_MAX_RULES);
	if (eg->n_kids) {
		p->rules = calloc(eg->n_kids, sizeof(*p->rules));
		if (!p->rules)
			return -ENOMEM;
	}
	r = parse_rules(cx, eg, p);
	if (r < 0)
		return r;
	if (cx->bad)
		return -EINVAL;	/* the errors are in *cx->err and more[] */
	r = policy_budget_check(p, eg, cx->file, cx->err);
	if (r < 0)
		return r;
	inherit_quic(p);
	r = check_ech_udp(cx, p);
	if (r < 0)
		return r;
	return policy_index_build(p);
}

/*
 * A policy is UTF-8 text, nothing else: no byte-order mark (libyaml would
 * take UTF-16 or UTF-32 from one, and a file that reads one way in an
 * editor and another way here is how rules hide), no NUL, no malformed
 * sequence.  Columns count characters, as libyaml's do.
 */
static int check_encoding(const char *buf, size_t len, const char *file, struct diag *err)
{
	static const struct {
		const char *bom;
		size_t len;
		const char *name;
	} boms[] = {
		{ "\x00\x00\xfe\xff", 4, "UTF-32BE" }, { "\xff\xfe\x00\x00", 4, "UTF-32LE" },
		{ "\xef\xbb\xbf", 3, "UTF-8" }, { "\xfe\xff", 2, "UTF-16BE" },
		{ "\xff\xfe", 2, "UTF-16LE" },
	};
	const unsigned char *b = (const unsigned char *)buf;
	unsigned int line = 1, col = 1;

	for (size_t i = 0; i < sizeof(boms) / sizeof(boms[0]); i++) {
		if (len < boms[i].len || memcmp(buf, boms[i].bom, boms[i].len) != 0)
			continue;
		if (strcmp(boms[i].name, "UTF-8") == 0)
			return diag_set(err, file, 1, 1, "a UTF-8 byte-order mark: a policy is "
					"UTF-8 without one (delete the first 3 bytes)");
		return diag_set(err, file, 1, 1, "a %s byte-order mark: a policy is UTF-8 "
				"(convert it with iconv -f %s -t UTF-8, then delete the mark)",
				boms[i].name, boms[i].name);
	}
	for (size_t i = 0; i < len;) {
		size_t n = b[i] < 0x80 ? 1 : (b[i] & 0xe0) == 0xc0 ? 2 : (b[i] & 0xf0) == 0xe0 ? 3
			 : (b[i] & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = n == 1 ? b[i] : n == 2 ? b[i] & 0x1fu : n == 3 ? b[i] & 0x0fu
			      : b[i] & 0x07u;
		static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };

		if (b[i] == 0)
			return diag_set(err, file, line, col, "a NUL byte: a policy is UTF-8 text "
					"(is the file UTF-16? re-save it as UTF-8)");
		if (n == 0 || i + n > len)
			goto bad;
		for (size_t k = 1; k < n; k++) {
			if ((b[i + k] & 0xc0) != 0x80)
				goto bad;
			cp = cp << 6 | (b[i + k] & 0x3fu);
		}
		/* RFC 3629 3: no overlong forms, no surrogates, nothing past U+10FFFF. */
		if (cp < min[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			goto bad;
		if (b[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
		i += n;
		continue;
bad:
		return diag_set(err, file, line, col, "malformed UTF-8 (byte 0x%02x): a policy "
				"is UTF-8 text (RFC 3629); re-save it as UTF-8", b[i]);
	}
	return 0;
}

/* Is @a later in the file than @b?  (No line: after every located one.) */
static bool diag_after(const struct diag *a, const struct diag *b)
{
	if (!a->line || !b->line)
		return !a->line && b->line;
	return a->line > b->line || (a->line == b->line && a->col > b->col);
}

/*
 * @first and @more[0..@n) in file order, as a reader fixes them: the
 * reading meets limits: and mode: before the rules above them.  Stable
 * (an insertion sort of at most a few dozen): the earliest into @first.
 */
static void diags_in_order(struct diag *first, struct diag *more, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct diag t = more[i];
		unsigned int j = i;

		for (; j > 0 && diag_after(&more[j - 1], &t); j--)
			more[j] = more[j - 1];
		more[j] = t;
	}
	if (n && diag_after(first, &more[0])) {
		struct diag t = *first;
		unsigned int j = 0;

		*first = more[0];
		for (; j + 1 < n && diag_after(&t, &more[j + 1]); j++)
			more[j] = more[j + 1];
		more[j] = t;
	}
}

int policy_parse_all(const char *buf, size_t len, const char *file, struct policy **ret,
		     struct diag *err, struct diag *more, unsigned int more_max,
		     unsigned int *n_more)
{
	struct ctx cx = { .file = file ? file : "<input>", .err = err, .more = more,
			  .more_max = more ? more_max : 0 };
	struct yamlx_doc *doc = NULL;
	struct policy *p;
	int r;

	*ret = NULL;
	if (n_more)
		*n_more = 0;
	if (len > POLICY_FILE_MAX)
		return diag_set(err, cx.file, 0, 0, "policy is %zu bytes; the limit is %u", len,
				POLICY_FILE_MAX);
	r = check_encoding(buf, len, cx.file, err);
	if (r < 0)
		return r;
	r = yamlx_load(buf, len, cx.file, &doc, err);
	if (r < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p) {
		yamlx_free(doc);
		return -ENOMEM;
	}
	r = parse_doc(&cx, doc->root, p);
	yamlx_free(doc);
	if (cx.bad) {
		/* *err holds the last error written: the first goes back there, and
		 * a last one go_on() did not take (a step that stops) joins more[]. */
		struct diag last = *err;
		const struct diag *kept = cx.n_more ? &cx.more[cx.n_more - 1] : &cx.first;

		*err = cx.first;
		if (r == -EINVAL && memcmp(&last, kept, sizeof(last)) != 0 &&
		    memcmp(&last, &cx.first, sizeof(last)) != 0 && cx.n_more < cx.more_max)
			cx.more[cx.n_more++] = last;
		if (r == 0)
			r = -EINVAL;
		diags_in_order(err, cx.more, cx.n_more);
	}
	if (n_more)
		*n_more = cx.n_more;
	if (r == 0 && file) {
		p->file = strdup(file);
		if (!p->file)
			r = -ENOMEM;
	}
	if (r < 0) {
		policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

int policy_parse(const char *buf, size_t len, const char *file, struct policy **ret,
		 struct diag *err)
{
	return policy_parse_all(buf, len, file, ret, err, NULL, 0, NULL);
}

int policy_load_file_all(const char *path, struct policy **ret, struct diag *err,
			 struct diag *more, unsigned int more_max, unsigned int *n_more)
{
	char *buf;
	size_t len;
	int r;

	*ret = NULL;
	if (n_more)
		*n_more = 0;
	r = yamlx_load_file(path, POLICY_FILE_MAX, &buf, &len, err);
	if (r < 0)
		return r;
	r = policy_parse_all(buf, len, path, ret, err, more, more_max, n_more);
	free(buf);
	return r;
}

int policy_load_file(const char *path, struct policy **ret, struct diag *err)
{
	return policy_load_file_all(path, ret, err, NULL, 0, NULL);
}
