/*
 * sni_match - the seen name against the patterns that pinned the address.
 * See sni_match.h.  policy_match() finds the rules of each pinned name in
 * O(labels); only those rules' patterns are then looked at.
 */
#include "netd/sni/sni_match.h"

#include <string.h>

#define SNI_MATCH_RULES 64	/* rules looked at per pinned name (as pinsrc) */

bool sni_pattern_covers(const char *pat, const char *name)
{
	size_t pl, nl;

	if (pat[0] != '*')
		return strcmp(pat, name) == 0;
	pat += 1;		/* ".x.y": name must end with it and have a label before */
	pl = strlen(pat);
	nl = strlen(name);
	return nl > pl && strcmp(name + nl - pl, pat) == 0;
}

static bool rule_has_port(const struct policy_rule *r, uint8_t proto, uint16_t port)
{
	if (r->proto != proto)
		return false;
	for (size_t k = 0; k < r->n_ports; k++)
		if (port >= r->ports[k].lo && port <= r->ports[k].hi)
			return true;
	return false;
}

bool sni_match(const struct policy *pol, const char *const *pinned, size_t n_pinned,
	       uint8_t proto, uint16_t port, const char *seen)
{
	uint16_t idx[SNI_MATCH_RULES];

	if (!pol || !seen || !seen[0])
		return false;
	for (size_t i = 0; i < n_pinned; i++) {
		size_t n = policy_match(pol, pinned[i], idx, SNI_MATCH_RULES);

		if (n > SNI_MATCH_RULES)
			n = SNI_MATCH_RULES;
		for (size_t k = 0; k < n; k++) {
			const struct policy_rule *r;

			if (idx[k] >= pol->n_rules)
				continue;
			r = &pol->rules[idx[k]];
			if (!rule_has_port(r, proto, port) ||
			    (r->max_qname_len && strlen(seen) > r->max_qname_len))
				continue;
			for (size_t d = 0; d < r->n_domains; d++)
				if (sni_pattern_covers(r->domains[d], pinned[i]) &&
				    sni_pattern_covers(r->domains[d], seen))
					return true;
		}
	}
	return false;
}
