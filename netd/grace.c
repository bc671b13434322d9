/*
 * grace - which grace a closed flow gets; conntrack ids already served.
 */
#include "netd/grace.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

static bool port_in(const struct policy_rule *r, uint16_t port)
{
	for (size_t i = 0; i < r->n_ports; i++)
		if (port >= r->ports[i].lo && port <= r->ports[i].hi)
			return true;
	return false;
}

uint32_t grace_timeout_s(const struct policy *p, const char *name, const struct addr *dst,
			 uint8_t proto, uint16_t port, uint32_t global_s)
{
	uint16_t idx[POLICY_MAX_RULES];
	size_t n;
	uint32_t best = 0;

	if (!p || !name || !dst || (proto != IPPROTO_TCP && proto != IPPROTO_UDP))
		return 0;
	/* Traffic a CIDR rule allows needs no pin, and gets none. */
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];

		if (r->proto != proto || !port_in(r, port))
			continue;
		for (size_t j = 0; j < r->n_cidrs; j++)
			if (r->cidrs[j].addr.family == dst->family &&
			    prefix_contains(&r->cidrs[j], dst))
				return 0;
	}
	n = policy_match(p, name, idx, POLICY_MAX_RULES);
	if (n > POLICY_MAX_RULES)
		n = POLICY_MAX_RULES;
	for (size_t i = 0; i < n; i++) {
		const struct policy_rule *r = &p->rules[idx[i]];
		uint32_t g;

		if (r->proto != proto || !port_in(r, port))
			continue;
		g = r->idle_grace_set ? r->idle_grace_s : global_s;
		if (g > best)
			best = g;
	}
	return best;
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
