/*
 * policy_dns - struct decide_policy over struct policy: the qname matcher
 * and each rule's fields the decision reads, nothing copied but the few
 * scalars of one rule.
 */
#include "netd/model/policy_dns.h"

#include <errno.h>

static size_t view_match(const void *pol, const char *qname, uint16_t *out, size_t max)
{
	return policy_match(pol, qname, out, max);
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
	};
	return 0;
}

static const struct decide_policy_ops view_ops = {
	.match = view_match,
	.rule = view_rule,
};

struct decide_policy policy_dns_view(const struct policy *p)
{
	if (!p)
		return (struct decide_policy){ 0 };
	return (struct decide_policy){ .ops = &view_ops, .pol = p, .name = p->name };
}
