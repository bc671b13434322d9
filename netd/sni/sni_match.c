/*
 * sni_match - the seen name against the patterns that pinned the address.
 * See sni_match.h.  policy_match() finds the rules of each pinned name in
 * O(labels); only those rules' patterns are then looked at.
 */
#include "netd/sni/sni_match.h"

#include <string.h>

#define SNI_MATCH_RULES 64	/* rules looked at per pinned name (as pinreg) */

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

/*
 * The rules of @pol for @proto/@port that a policy_match() of @name finds
 * (at most SNI_MATCH_RULES), into @out.  Return: how many.
 */
static size_t pinned_rules(const struct policy *pol, const char *name, uint8_t proto,
			   uint16_t port, const struct policy_rule **out)
{
	uint16_t idx[SNI_MATCH_RULES];
	size_t n = policy_match(pol, name, idx, SNI_MATCH_RULES), m = 0;

	if (n > SNI_MATCH_RULES)
		n = SNI_MATCH_RULES;
	for (size_t k = 0; k < n; k++)
		if (idx[k] < pol->n_rules && policy_rule_port(&pol->rules[idx[k]], proto, port))
			out[m++] = &pol->rules[idx[k]];
	return m;
}

bool sni_match(const struct policy *pol, const char *const *pinned, size_t n_pinned,
	       uint8_t proto, uint16_t port, const char *seen)
{
	const struct policy_rule *rs[SNI_MATCH_RULES];

	if (!pol || !seen || !seen[0])
		return false;
	for (size_t i = 0; i < n_pinned; i++) {
		size_t n = pinned_rules(pol, pinned[i], proto, port, rs);

		for (size_t k = 0; k < n; k++) {
			if (rs[k]->max_qname_len && strlen(seen) > rs[k]->max_qname_len)
				continue;
			for (size_t d = 0; d < rs[k]->n_domains; d++)
				if (sni_pattern_covers(rs[k]->domains[d], pinned[i]) &&
				    sni_pattern_covers(rs[k]->domains[d], seen))
					return true;
		}
	}
	return false;
}

/*
 * The stricter of *@tls, *@http and @r's modes, kept; and *@refuse set if
 * @r checks something and refuses an ECH hello (any tls.ech but outer).
 */
static void raise_modes(const struct policy_rule *r, enum policy_l7 *tls, enum policy_l7 *http,
			bool *refuse)
{
	if (r->tls_sni > *tls)
		*tls = (enum policy_l7)r->tls_sni;
	if (r->http_host > *http)
		*http = (enum policy_l7)r->http_host;
	if ((r->tls_sni != POLICY_L7_OFF || r->http_host != POLICY_L7_OFF) &&
	    r->tls_ech != POLICY_ECH_OUTER)
		*refuse = true;
}

void sni_modes(const struct policy *pol, const char *const *pinned, size_t n_pinned,
	       uint8_t proto, uint16_t port, enum policy_l7 *tls, enum policy_l7 *http,
	       bool *ech_outer)
{
	const struct policy_rule *rs[SNI_MATCH_RULES];
	bool refuse = false;

	*tls = *http = POLICY_L7_OFF;
	for (size_t i = 0; pol && i < n_pinned; i++) {
		size_t n = pinned_rules(pol, pinned[i], proto, port, rs);

		for (size_t k = 0; k < n; k++) {
			raise_modes(rs[k], tls, http, &refuse);
		}
	}
	*ech_outer = !refuse && (*tls != POLICY_L7_OFF || *http != POLICY_L7_OFF);
}

void sni_modes_port(const struct policy *pol, uint8_t proto, uint16_t port,
		    enum policy_l7 *tls, enum policy_l7 *http, bool *ech_outer)
{
	bool refuse = false;

	*tls = *http = POLICY_L7_OFF;
	for (size_t i = 0; pol && i < pol->n_rules; i++) {
		const struct policy_rule *r = &pol->rules[i];

		if (r->n_domains && policy_rule_port(r, proto, port))
			raise_modes(r, tls, http, &refuse);
	}
	*ech_outer = !refuse && (*tls != POLICY_L7_OFF || *http != POLICY_L7_OFF);
}

enum policy_l7 sni_mode_for(enum sni_proto proto, enum policy_l7 tls, enum policy_l7 http)
{
	if (proto == SNI_PROTO_TLS || proto == SNI_PROTO_QUIC)
		return tls != POLICY_L7_OFF ? tls : http;
	if (proto == SNI_PROTO_HTTP1)
		return http != POLICY_L7_OFF ? http : tls;
	return tls > http ? tls : http;
}

void sni_ech_outer(struct sni_result *res)
{
	if (res->status != SNI_ECH)
		return;
	/* The outer name was normalized by the parser like any SNI (sni.c),
	 * and a bad one is SNI_BAD_NAME already, never SNI_ECH. */
	res->status = res->name[0] ? SNI_NAME : SNI_NO_NAME;
}

struct sni_verdict sni_decide(enum policy_l7 mode, const struct sni_result *res, bool matched)
{
	bool ok = res->status == SNI_NAME && matched;

	if (mode == POLICY_L7_OFF)
		return (struct sni_verdict){ .accept = true, .audit = false };
	if (ok)	/* SNI_NAME with ech only from sni_ech_outer() */
		return (struct sni_verdict){ .accept = true, .audit = res->ech,
					     .ech_outer = res->ech };
	return (struct sni_verdict){ .accept = mode == POLICY_L7_LOG, .audit = true };
}
