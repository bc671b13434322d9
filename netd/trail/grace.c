/*
 * grace - which grace a closed flow gets; conntrack ids already served.
 */
#include "netd/trail/grace.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

uint32_t grace_timeout_s(const struct policy *p, const char *name, const struct addr *dst,
			 uint8_t proto, uint16_t port, uint32_t global_s)
{
	uint16_t idx[POLICY_MAX_RULES];
	size_t n;
	uint32_t best = 0;

	if (!p || !name || !dst || (proto != IPPROTO_TCP && proto != IPPROTO_UDP))
		return 0;
	/* Traffic a CIDR rule allows needs no pin, and gets none. */
	if (policy_cidr_allows(p, dst, proto, port))
		return 0;
	n = policy_match(p, name, idx, POLICY_MAX_RULES);
	if (n > POLICY_MAX_RULES)
		n = POLICY_MAX_RULES;
	for (size_t i = 0; i < n; i++) {
		const struct policy_rule *r = &p->rules[idx[i]];
		uint32_t g;

		if (!policy_rule_port(r, proto, port))
			continue;
		g = r->idle_grace_set ? r->idle_grace_s : global_s;
		if (g > best)
			best = g;
	}
	return best;
}

bool grace_gateway(const struct policy *p, const char *name, uint8_t proto, uint16_t port)
{
	uint16_t idx[POLICY_MAX_RULES];
	size_t n;

	if (!p || !name)
		return false;
	n = policy_match(p, name, idx, POLICY_MAX_RULES);
	if (n > POLICY_MAX_RULES)
		n = POLICY_MAX_RULES;
	for (size_t i = 0; i < n; i++)
		if (p->rules[idx[i]].gateway && policy_rule_port(&p->rules[idx[i]], proto, port))
			return true;
	return false;
}

bool grace_policy_wants(const struct policy *p, uint32_t global_s)
{
	if (global_s)
		return true;
	for (size_t i = 0; p && i < p->n_rules; i++)
		if (p->rules[i].n_domains && p->rules[i].idle_grace_set &&
		    p->rules[i].idle_grace_s)
			return true;
	return false;
}

static size_t seen_slot(uint32_t id)
{
	return (size_t)((id * 2654435761u) >> 16) & (GRACE_SEEN_SLOTS - 1);
}

void grace_seen_mark(struct grace_seen *s, uint32_t id)
{
	if (id)
		s->id[seen_slot(id)] = id;
}

bool grace_seen_has(const struct grace_seen *s, uint32_t id)
{
	return id && s->id[seen_slot(id)] == id;
}

bool grace_seen_take(struct grace_seen *s, uint32_t id)
{
	size_t i = seen_slot(id);

	if (!id || s->id[i] != id)
		return false;
	s->id[i] = 0;
	return true;
}
