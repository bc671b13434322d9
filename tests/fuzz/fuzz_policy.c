/*
 * fuzz_policy - policy_parse() on arbitrary bytes.  On success, checks the
 * matcher's contract against the parsed rules: every exact name matches
 * its own rule, every "*.suffix" matches "x.suffix" but not "suffix"
 * through that rule alone, and results are strictly ascending.  And the
 * issue 13 rules: an accepted input is UTF-8 without a byte-order mark or
 * NUL, no accepted pattern ends in a numeric label or parses as an IPv4
 * address, and no accepted wildcard covers a public suffix (libpsl, the
 * same data the parser uses).  And `except:` (issue 17): no excepted name
 * ("x.T" for "*.T") ever matches the rule that excepts it, and every
 * except lies strictly below one of its rule's wildcards.  And
 * policy_l7_gaps() (issue 30) answers in range.  And the rate and budget
 * texts (policy_rate_parse(), policy_budget_parse()) on the input's first
 * line: an accepted one is in range and formats to a text that reads back
 * as the same value; a refused one says why.  And no two budgeted rules of
 * an accepted policy share a policy_rule_key().
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include <libpsl.h>

#include "netd/model/policy.h"

/* The last label of @s is digits, or 0x and hex digits (an IPv4 number). */
static bool last_numeric(const char *s)
{
	const char *l = strrchr(s, '.');
	size_t i = 0;
	bool hex;

	l = l ? l + 1 : s;
	hex = l[0] == '0' && (l[1] == 'x' || l[1] == 'X');
	if (!*l)
		return false;
	for (i = hex ? 2 : 0; l[i]; i++)
		if (!((l[i] >= '0' && l[i] <= '9') ||
		      (hex && ((l[i] >= 'a' && l[i] <= 'f') || (l[i] >= 'A' && l[i] <= 'F')))))
			return false;
	return true;
}

static void check_pattern(const char *s)
{
	static const psl_ctx_t *psl;
	struct in_addr a;

	if (!psl)
		psl = psl_builtin();
	if (last_numeric(s) || (s[0] != '*' && inet_aton(s, &a)))
		abort();
	if (s[0] == '*' && psl && psl_is_public_suffix(psl, s + 2))
		abort();
}

static void check_ascending(const uint16_t *out, size_t n, size_t max)
{
	for (size_t i = 1; i < n && i < max; i++)
		if (out[i - 1] >= out[i])
			abort();
}

static bool contains(const uint16_t *out, size_t n, uint16_t r)
{
	for (size_t i = 0; i < n; i++)
		if (out[i] == r)
			return true;
	return false;
}

static bool excepted_exact(const struct policy_rule *rule, const char *name)
{
	for (size_t e = 0; e < rule->n_excepts; e++)
		if (strcmp(rule->excepts[e], name) == 0)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The rate and budget parsers on @s[0..@len): see the top of the file. */
static void check_units(const char *s, size_t len)
{
	char why[256], buf[POLICY_BUDGET_STRLEN + POLICY_RATE_STRLEN];
	uint64_t v = 0, back = 0;
	uint32_t per = 0, per2 = 0;
	int r;

	why[0] = '\0';
	r = policy_rate_parse(s, len, &v, why, sizeof(why));
	if (r == 0) {
		if (v < POLICY_RATE_MIN || v > POLICY_RATE_MAX)
			abort();
		policy_rate_format(v, buf, sizeof(buf));
		if (policy_rate_parse(buf, strlen(buf), &back, why, sizeof(why)) != 0 || back != v)
			abort();
	} else if ((r != -EINVAL && r != -ERANGE) || !why[0]) {
		abort();
	}
	why[0] = '\0';
	r = policy_budget_parse(s, len, &v, &per, why, sizeof(why));
	if (r == 0) {
		if (v == 0 || v > POLICY_BUDGET_MAX || (per != 3600 && per != 86400))
			abort();
		policy_budget_format(v, per, buf, sizeof(buf));
		if (policy_budget_parse(buf, strlen(buf), &back, &per2, why, sizeof(why)) != 0 ||
		    back != v || per2 != per)
			abort();
	} else if ((r != -EINVAL && r != -ERANGE) || !why[0]) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t out[POLICY_MAX_RULES];
	struct policy *p = NULL;
	struct diag err;
	char name[300];
	const char *nl = memchr(data, '\n', size);
	int r;

	check_units((const char *)data, nl ? (size_t)(nl - (const char *)data) : size);
	r = policy_parse((const char *)data, size, "fuzz.yaml", &p, &err);
	if (r < 0) {
		if (p || (r == -EINVAL && err.msg[0] == '\0'))
			abort();
		return 0;
	}
	if (!policy_name_valid(p->name) || p->n_rules > POLICY_MAX_RULES)
		abort();
	/* UTF-8 only: no NUL, no byte-order mark of any kind. */
	if (memchr(data, 0, size) || (size >= 2 && (data[0] == 0xff || data[0] == 0xfe)) ||
	    (size >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0))
		abort();
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *rule = &p->rules[i];

		if ((rule->n_domains == 0) == (rule->n_cidrs == 0) || rule->n_ports == 0 ||
		    rule->n_ports > POLICY_MAX_PORTS)
			abort();
		for (size_t k = 0; k < rule->n_ports; k++)
			if (rule->ports[k].lo == 0 || rule->ports[k].lo > rule->ports[k].hi ||
			    (rule->n_domains && rule->ports[k].lo != rule->ports[k].hi))
				abort();
		for (size_t d = 0; d < rule->n_domains; d++) {
			const char *s = rule->domains[d];
			size_t n;

			if (strlen(s) > 253)
				abort();
			check_pattern(s);
			if (s[0] == '*') {
				snprintf(name, sizeof(name), "x%s", s + 1);
				n = policy_match(p, name, out, POLICY_MAX_RULES);
				check_ascending(out, n, POLICY_MAX_RULES);
				/* ... unless the rule excepts exactly that name. */
				if (!contains(out, n, (uint16_t)i) && !excepted_exact(rule, name))
					abort();
				/* The bare suffix is not matched by this wildcard; it may be
				 * by an exact entry of the same rule. */
				n = policy_match(p, s + 2, out, POLICY_MAX_RULES);
				check_ascending(out, n, POLICY_MAX_RULES);
			} else {
				n = policy_match(p, s, out, POLICY_MAX_RULES);
				check_ascending(out, n, POLICY_MAX_RULES);
				if (!contains(out, n, (uint16_t)i))
					abort();
			}
		}
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *rule = &p->rules[i];

		if (rule->n_excepts && !rule->n_domains)
			abort();
		for (size_t e = 0; e < rule->n_excepts; e++) {
			const char *s = rule->excepts[e];
			const char *h = s[0] == '*' ? s + 2 : s;
			size_t n, hl = strlen(h);
			bool below = false;

			if (s[0] == '*')
				snprintf(name, sizeof(name), "x%s", s + 1);
			else
				snprintf(name, sizeof(name), "%s", s);
			n = policy_match(p, name, out, POLICY_MAX_RULES);
			check_ascending(out, n, POLICY_MAX_RULES);
			if (contains(out, n < POLICY_MAX_RULES ? n : POLICY_MAX_RULES, (uint16_t)i))
				abort();
			for (size_t d = 0; d < rule->n_domains; d++) {
				const char *w = rule->domains[d];
				size_t wl = strlen(w) - 1;	/* ".suffix" */

				if (w[0] == '*' && hl > wl && strcmp(h + hl - wl, w + 1) == 0)
					below = true;
			}
			if (!below)
				abort();
		}
	}
	/* Raw input as a qname, too (bounded, NUL-terminated). */
	if (size < sizeof(name)) {
		memcpy(name, data, size);
		name[size] = '\0';
		check_ascending(out, policy_match(p, name, out, POLICY_MAX_RULES), POLICY_MAX_RULES);
	}
	/* policy check's SNI gap pairs (issue 30): indexes in range, a checked
	 * rule on one side, the same count with and without room, a position
	 * for every domain. */
	{
		struct policy_l7_gap g[16];
		size_t ng = policy_l7_gaps(p, g, 16);

		if (policy_l7_gaps(p, NULL, 0) != ng)
			abort();
		for (size_t i = 0; i < ng && i < 16; i++) {
			const struct policy_rule *c = &p->rules[g[i].checked], *o;

			if (g[i].checked >= p->n_rules || g[i].other >= p->n_rules ||
			    g[i].checked == g[i].other || (!c->tls_sni && !c->http_host))
				abort();
			o = &p->rules[g[i].other];
			if (g[i].cd >= (c->n_domains ? c->n_domains : 1) ||
			    g[i].od >= (o->n_domains ? o->n_domains : 1) ||
			    !policy_rule_port(o, IPPROTO_TCP, g[i].port))
				abort();
		}
		for (size_t k = 0; k < p->n_rules; k++)
			for (size_t d = 0; d < p->rules[k].n_domains; d++)
				if (!p->rules[k].domain_pos || !p->rules[k].domain_pos[d].line)
					abort();
	}
	/* tls.ech (issue 25): only on a rule that checks the SNI, with its
	 * position unless a udp rule inherited outer with its tls.sni; a rule
	 * strips ECH exactly when it checks and does not keep, or goes
	 * through the gateway. */
	for (size_t k = 0; k < p->n_rules; k++) {
		const struct policy_rule *ru = &p->rules[k];
		bool checks = ru->tls_sni || ru->http_host;
		bool inherited = ru->proto == IPPROTO_UDP && ru->tls_sni_inherited &&
				 ru->tls_ech == POLICY_ECH_OUTER;

		if (ru->tls_ech > POLICY_ECH_OUTER || (ru->tls_ech && !checks) ||
		    (ru->tls_ech && !ru->ech_pos.line && !inherited) ||
		    policy_rule_ech_strip(ru) !=
			    (ru->gateway || (checks && ru->tls_ech != POLICY_ECH_KEEP)))
			abort();
	}
	/* One counter per key (policy_budget_check()). */
	for (size_t k = 0; k < p->n_rules; k++) {
		char a[POLICY_RULE_KEY_MAX], b[POLICY_RULE_KEY_MAX];

		for (size_t j = 0; j < k && p->rules[k].budget_bytes; j++)
			if (p->rules[j].budget_bytes &&
			    strcmp(policy_rule_key(&p->rules[k], a, sizeof(a)),
				   policy_rule_key(&p->rules[j], b, sizeof(b))) == 0)
				abort();
	}
	policy_free(p);
	return 0;
}
