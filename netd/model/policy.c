/*
 * policy - the egress policy model and its queries: which rule allows a
 * name or an address on a port, where an except is undone, which ports
 * the SNI/Host check covers; and policy_free().  Pure: memory in, answers
 * out; never logs.
 *
 * The YAML loader and its located errors are netd/model/policy_parse.c, name and
 * pattern validation netd/model/policy_names.c, the qname matcher (policy_match())
 * netd/model/policy_index.c.
 */
#include "netd/model/policy.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

const char *policy_l7_str(enum policy_l7 m)
{
	return m == POLICY_L7_ENFORCE ? "enforce" : m == POLICY_L7_LOG ? "log" : "off";
}

bool policy_rule_ech_strip(const struct policy_rule *r)
{
	if (r->gateway)
		return true;
	return (r->tls_sni != POLICY_L7_OFF || r->http_host != POLICY_L7_OFF) &&
	       r->tls_ech != POLICY_ECH_KEEP;
}

const char *policy_ech_str(enum policy_ech e)
{
	return e == POLICY_ECH_STRIP ? "strip" : e == POLICY_ECH_KEEP ? "keep" :
	       e == POLICY_ECH_OUTER ? "outer" : "";
}

bool policy_l7_port(const struct policy *p, uint16_t port, enum policy_l7 mode)
{
	for (size_t i = 0; p && i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		if ((r->tls_sni == mode || r->http_host == mode) &&
		    policy_rule_port(r, IPPROTO_TCP, port))
			return true;
	}
	return false;
}

bool policy_l7_port_proto(const struct policy *p, uint8_t proto, uint16_t port,
			  enum policy_l7 mode)
{
	if (proto == IPPROTO_TCP)
		return policy_l7_port(p, port, mode);
	for (size_t i = 0; p && i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		if (r->n_domains && r->tls_sni == mode && policy_rule_port(r, IPPROTO_UDP, port))
			return true;
	}
	return false;
}

bool policy_rule_port(const struct policy_rule *r, uint8_t proto, uint16_t port)
{
	if (r->proto != proto)
		return false;
	for (size_t k = 0; k < r->n_ports; k++)
		if (port >= r->ports[k].lo && port <= r->ports[k].hi)
			return true;
	return false;
}

/* The first rule with a CIDR holding @dst, on @proto/@port unless @any_port; -1: none. */
static ssize_t cidr_rule(const struct policy *p, const struct addr *dst, bool any_port,
			 uint8_t proto, uint16_t port)
{
	for (size_t i = 0; p && dst && i < p->n_rules; i++)
		for (size_t c = 0; c < p->rules[i].n_cidrs; c++)
			if (p->rules[i].cidrs[c].addr.family == dst->family &&
			    prefix_contains(&p->rules[i].cidrs[c], dst) &&
			    (any_port || policy_rule_port(&p->rules[i], proto, port)))
				return (ssize_t)i;
	return -1;
}

ssize_t policy_cidr_rule(const struct policy *p, const struct addr *dst, uint8_t proto,
			 uint16_t port)
{
	return cidr_rule(p, dst, false, proto, port);
}

bool policy_cidr_allows(const struct policy *p, const struct addr *dst, uint8_t proto,
			uint16_t port)
{
	return policy_cidr_rule(p, dst, proto, port) >= 0;
}

const char *policy_rule_pattern(const struct policy *p, const char *name, uint8_t proto,
				uint16_t port)
{
	uint16_t idx[16];
	size_t n = p ? policy_match(p, name, idx, 16) : 0;
	const struct policy_rule *best = NULL;
	const char *pat = NULL;

	if (n > 16)
		n = 16;
	for (size_t i = 0; i < n && !best; i++) {
		const struct policy_rule *r = &p->rules[idx[i]];

		if (policy_rule_port(r, proto, port))
			best = r;
	}
	if (!best && n)
		best = &p->rules[idx[0]];
	for (size_t k = 0; best && k < best->n_domains; k++) {
		const char *d = best->domains[k];

		if (strcmp(d, name) == 0)
			return d;	/* exact beats any wildcard */
		if (d[0] == '*' && d[1] == '.' && policy_name_below(name, d + 2) &&
		    (!pat || strlen(d) > strlen(pat)))
			pat = d;
	}
	return pat;
}

bool policy_allows(const struct policy *p, const char *name, const struct addr *dst,
		   uint8_t proto, uint16_t port)
{
	uint16_t idx[POLICY_MAX_RULES];
	size_t n;

	if (!p)
		return false;
	n = name ? policy_match(p, name, idx, POLICY_MAX_RULES) : 0;
	for (size_t i = 0; i < n && i < POLICY_MAX_RULES; i++)
		if (policy_rule_port(&p->rules[idx[i]], proto, port))
			return true;
	return policy_cidr_allows(p, dst, proto, port);
}

bool policy_port_refused(const struct policy *p, const char *name, const struct addr *dst,
			 uint8_t proto, uint16_t port)
{
	uint16_t idx[1];

	if (!p || policy_allows(p, name, dst, proto, port))
		return false;
	if (name)
		return policy_match(p, name, idx, 1) > 0;
	return cidr_rule(p, dst, true, 0, 0) >= 0;
}

/* The mode a TLS stream (@http false) or an HTTP/1 one gets from rule @r
 * alone: its own key, else the other (sni_mode_for(), netd/sni/). */
static enum policy_l7 l7_eff(const struct policy_rule *r, bool http)
{
	uint8_t own = http ? r->http_host : r->tls_sni, other = http ? r->tls_sni : r->http_host;

	return (enum policy_l7)(own != POLICY_L7_OFF ? own : other);
}

/* Is @o's check weaker than @c's for either kind of stream? */
static bool l7_weaker(const struct policy_rule *o, const struct policy_rule *c)
{
	return l7_eff(o, false) < l7_eff(c, false) || l7_eff(o, true) < l7_eff(c, true);
}

/* Does rule @r allow every name pattern @pat (normalized) matches? */
static bool rule_covers(const struct policy_rule *r, const char *pat)
{
	const char *t = pat[0] == '*' ? pat + 2 : pat;	/* the name, or the wildcard's suffix */
	bool in = false;

	for (size_t d = 0; d < r->n_domains && !in; d++) {
		const char *dn = r->domains[d];

		if (dn[0] != '*')
			in = pat[0] != '*' && strcmp(dn, pat) == 0;
		else
			in = policy_name_below(t, dn + 2) ||
			     (pat[0] == '*' && strcmp(t, dn + 2) == 0);
	}
	for (size_t e = 0; e < r->n_excepts && in; e++) {
		const char *ex = r->excepts[e], *xt = ex[0] == '*' ? ex + 2 : ex;

		if (pat[0] != '*')	/* a name: taken back if an except covers it */
			in = !(ex[0] == '*' ? policy_name_below(t, xt) : strcmp(ex, t) == 0);
		else	/* a subtree: taken back in part if an except meets it */
			in = !(strcmp(xt, t) == 0 || policy_name_below(xt, t) ||
			       (ex[0] == '*' && policy_name_below(t, xt)));
	}
	return in;
}

/* Is every name @pat matches allowed on tcp @port by a rule at least as strict as @c? */
static bool checked_anyway(const struct policy *p, const char *pat, uint16_t port,
			   const struct policy_rule *c)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		if (!l7_weaker(r, c) && policy_rule_port(r, IPPROTO_TCP, port) && rule_covers(r, pat))
			return true;
	}
	return false;
}

/* Are the names of patterns @a and @b likely one site's: one registrable
 * domain, or (no list data, or a public suffix) one under the other? */
static bool names_related(const char *a, const char *b)
{
	const char *ta = a[0] == '*' ? a + 2 : a, *tb = b[0] == '*' ? b + 2 : b;
	const char *ra = policy_registrable_domain(ta), *rb = policy_registrable_domain(tb);

	if (ra && rb)
		return strcmp(ra, rb) == 0;
	return strcmp(ta, tb) == 0 || policy_name_below(ta, tb) || policy_name_below(tb, ta);
}

/* The gap between checked rule @ci and rule @oi on tcp @port, if any, in *@g.
 * Return: found. */
static bool l7_gap_port(const struct policy *p, size_t ci, size_t oi, uint16_t port,
			struct policy_l7_gap *g)
{
	const struct policy_rule *c = &p->rules[ci], *o = &p->rules[oi];
	bool port_only = false;

	*g = (struct policy_l7_gap){ .kind = POLICY_GAP_CIDR, .checked = ci, .other = oi,
				     .port = port };
	if (o->n_cidrs)
		return true;	/* accepted before the check looks */
	if (!l7_weaker(o, c))
		return false;
	for (size_t od = 0; od < o->n_domains; od++) {
		/* A name a rule as strict also allows gets its check when it pins. */
		if (checked_anyway(p, o->domains[od], port, c))
			continue;
		if (!port_only) {
			port_only = true;
			g->kind = POLICY_GAP_PORT;
			g->od = od;
		}
		for (size_t cd = 0; cd < c->n_domains; cd++)
			if (names_related(c->domains[cd], o->domains[od])) {
				g->kind = POLICY_GAP_RELATED;
				g->cd = cd;
				g->od = od;
				return true;
			}
	}
	return port_only;
}

/* The gap between checked rule @ci and rule @oi on the first tcp port of
 * @ci's that has one (a RELATED one on any port before a PORT one). */
static bool l7_gap(const struct policy *p, size_t ci, size_t oi, struct policy_l7_gap *g)
{
	const struct policy_rule *c = &p->rules[ci];
	struct policy_l7_gap x;
	bool found = false;

	for (size_t k = 0; k < c->n_ports; k++) {
		if (!policy_rule_port(&p->rules[oi], IPPROTO_TCP, c->ports[k].lo) ||
		    !l7_gap_port(p, ci, oi, c->ports[k].lo, &x))
			continue;
		if (!found || (x.kind == POLICY_GAP_RELATED && g->kind != POLICY_GAP_RELATED))
			*g = x;
		found = true;
		if (g->kind != POLICY_GAP_PORT)
			break;
	}
	return found;
}

size_t policy_l7_gaps(const struct policy *p, struct policy_l7_gap *out, size_t max)
{
	size_t n = 0;

	for (size_t ci = 0; p && ci < p->n_rules; ci++) {
		const struct policy_rule *c = &p->rules[ci];

		/* Checked rules are tcp domain rules: a udp rule's check is its
		 * QUIC one (inherited from the tcp rules on its ports, docs/sni.md),
		 * and every udp rule on such a port inherits it, so a udp rule is
		 * never one side of a gap on a tcp port; counting it would repeat
		 * each of its tcp twin's gaps. */
		if (c->proto != IPPROTO_TCP ||
		    (c->tls_sni == POLICY_L7_OFF && c->http_host == POLICY_L7_OFF))
			continue;
		for (size_t oi = 0; oi < p->n_rules; oi++) {
			struct policy_l7_gap g;

			if (oi == ci || !l7_gap(p, ci, oi, &g))
				continue;
			if (n < max)
				out[n] = g;
			n++;
		}
	}
	return n;
}

size_t policy_except_shadows(const struct policy *p, size_t rule, size_t ex, uint16_t *out,
			     size_t max)
{
	const char *e = p->rules[rule].excepts[ex];
	const char *t = e + 2;	/* for "*.T" */
	size_t n = 0;

	if (e[0] != '*')	/* the matcher already leaves @rule out */
		return policy_match(p, e, out, max);
	for (size_t r = 0; r < p->n_rules; r++) {
		const struct policy_rule *o = &p->rules[r];
		bool hit = false;

		for (size_t d = 0; r != rule && d < o->n_domains && !hit; d++) {
			const char *dn = o->domains[d];

			if (dn[0] != '*')
				hit = policy_name_below(dn, t);
			else	/* "*.S": the two subtrees overlap */
				hit = strcmp(dn + 2, t) == 0 || policy_name_below(dn + 2, t) ||
				      policy_name_below(t, dn + 2);
		}
		if (hit) {
			if (n < max)
				out[n] = (uint16_t)r;
			n++;
		}
	}
	return n;
}

void policy_gateway_free(struct policy_gateway *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_credentials; i++)
		free(g->credentials[i]);
	free(g->credentials);
	free(g->credential_pos);
	free(g->method_pos);
	for (size_t i = 0; i < g->n_methods; i++)
		free(g->methods[i]);
	free(g->methods);
	for (size_t i = 0; i < g->n_paths; i++)
		free(g->paths[i]);
	free(g->paths);
	free(g);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t r = 0; r < p->n_rules; r++) {
		struct policy_rule *rule = &p->rules[r];

		for (size_t d = 0; d < rule->n_domains; d++)
			free(rule->domains[d]);
		free(rule->domains);
		free(rule->domain_pos);
		for (size_t d = 0; d < rule->n_excepts; d++)
			free(rule->excepts[d]);
		free(rule->excepts);
		free(rule->cidrs);
		free(rule->ports);
		policy_gateway_free(rule->gateway);
	}
	free(p->rules);
	policy_index_free(p->index);
	free(p->name);
	free(p->description);
	free(p->file);
	free(p);
}
