/*
 * policy - the egress policy model and its queries: which rule allows a
 * name or an address on a port, where an except is undone, which ports
 * the SNI/Host check covers; and policy_free().  Pure: memory in, answers
 * out; never logs.
 *
 * The YAML loader and its located errors are netd/policy_parse.c, name and
 * pattern validation netd/policy_names.c, the qname matcher (policy_match())
 * netd/policy_index.c.
 */
#include "netd/policy.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

const char *policy_l7_str(enum policy_l7 m)
{
	return m == POLICY_L7_ENFORCE ? "enforce" : m == POLICY_L7_LOG ? "log" : "off";
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

bool policy_rule_port(const struct policy_rule *r, uint8_t proto, uint16_t port)
{
	if (r->proto != proto)
		return false;
	for (size_t k = 0; k < r->n_ports; k++)
		if (port >= r->ports[k].lo && port <= r->ports[k].hi)
			return true;
	return false;
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
	for (size_t i = 0; dst && i < p->n_rules; i++)
		for (size_t c = 0; c < p->rules[i].n_cidrs; c++)
			if (p->rules[i].cidrs[c].addr.family == dst->family &&
			    prefix_contains(&p->rules[i].cidrs[c], dst) &&
			    policy_rule_port(&p->rules[i], proto, port))
				return true;
	return false;
}

size_t policy_l7_gaps(const struct policy *p, struct policy_l7_gap *out, size_t max)
{
	(void)p;
	(void)out;
	(void)max;
	return 0;	/* not implemented yet */
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

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t r = 0; r < p->n_rules; r++) {
		struct policy_rule *rule = &p->rules[r];

		for (size_t d = 0; d < rule->n_domains; d++)
			free(rule->domains[d]);
		free(rule->domains);
		for (size_t d = 0; d < rule->n_excepts; d++)
			free(rule->excepts[d]);
		free(rule->excepts);
		free(rule->cidrs);
		free(rule->ports);
	}
	free(p->rules);
	policy_index_free(p->index);
	free(p->name);
	free(p->description);
	free(p->file);
	free(p);
}
