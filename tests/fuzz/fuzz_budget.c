/*
 * fuzz_budget - DNS tunnelling's defences on what a sandbox and a policy
 * file choose: tunnel_score() (dnsproxy/limits.c) on any name,
 * policy_dns_budget_parse() (netd/model/policy_dns.c) on any budget text,
 * and budget_charge() (dnsproxy/budget.c) on any sequence of names, rules
 * and clock steps.  Input: lines; each line is a name, a budget text, and
 * one charge (its first byte picks the rule and how far the clock moves).
 * Beyond the sanitizers:
 *   - the score says why exactly when it flags, the same twice, within
 *     its bounds;
 *   - a budget that parses formats to a text that parses to the same
 *     values, within the maxima, zero only for off;
 *   - every charge's result equals a reference kept the naive way (per
 *     rule, a list of names and when each was last asked; a name leaves
 *     when its window passed), and budget_names() equals its count;
 *     expiring past every window leaves nothing.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsproxy/budget.h"
#include "netd/model/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LINES    256
#define LINE_MAX 300
#define RULES    4
#define NAMES    8	/* each rule's budget */

struct ref_name {
	char name[LINE_MAX + 1];
	uint32_t last_s;
};

struct ref_rule {
	struct ref_name n[NAMES];
	unsigned int count;
};

static uint32_t window_of(unsigned int rule)
{
	return 10 * (rule + 1);
}

/* The reference: drop what left the window, then look the name up. */
static enum budget_result ref_charge(struct ref_rule *r, uint32_t window, const char *name,
				     uint32_t now_s)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < r->count; i++)
		if (now_s - r->n[i].last_s < window)
			r->n[k++] = r->n[i];
	r->count = k;
	for (unsigned int i = 0; i < r->count; i++)
		if (strcmp(r->n[i].name, name) == 0) {
			r->n[i].last_s = now_s;
			return BUDGET_KNOWN;
		}
	if (r->count >= NAMES)
		return BUDGET_OVER;
	snprintf(r->n[r->count].name, sizeof(r->n[0].name), "%s", name);
	r->n[r->count++].last_s = now_s;
	return BUDGET_ADDED;
}

static void check_score(const char *name)
{
	struct tunnel_score a, b;
	bool fa = tunnel_score(name, &a), fb = tunnel_score(name, &b);

	if (fa != fb || memcmp(&a, &b, sizeof(a)) != 0)
		abort();
	if (fa != (a.why != TUNNEL_NONE) || a.why > TUNNEL_NAME || a.shape > TUNNEL_DIGITS)
		abort();
	if (fa && (a.chars == 0 || a.chars > strlen(name)))
		abort();
	if (a.why == TUNNEL_TOKEN && a.chars <= TUNNEL_TOKEN_MAX)
		abort();
	if (a.why == TUNNEL_NAME && a.ids <= TUNNEL_NAME_IDS)
		abort();
	if (!fa && a.ids > TUNNEL_NAME_IDS)
		abort();
	(void)tunnel_shape_name(a.shape);
}

static void check_budget_text(const char *s, size_t len)
{
	struct policy_rule r = { 0 };
	uint32_t n2, w2;
	char why[200], buf[32];

	if (policy_dns_budget_parse(s, len, &r.dns_budget, &r.dns_window_s, why, sizeof(why)) < 0) {
		if (!why[0])
			abort();	/* a refusal always says why */
		return;
	}
	if (r.dns_budget > POLICY_DNS_BUDGET_MAX || r.dns_window_s > POLICY_DNS_WINDOW_MAX ||
	    (r.dns_budget == 0) != (r.dns_window_s == 0))
		abort();
	policy_dns_budget_format(&r, buf, sizeof(buf));
	if (policy_dns_budget_parse(buf, strlen(buf), &n2, &w2, why, sizeof(why)) < 0 ||
	    n2 != r.dns_budget || w2 != r.dns_window_s)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t key[BUDGET_KEY_LEN] = { 7 };
	struct ref_rule *ref = calloc(RULES, sizeof(*ref));
	struct budget *b = NULL;
	uint32_t now_s = 1000;
	size_t at = 0;

	if (!ref || budget_new(key, &b) < 0)
		abort();
	for (unsigned int line = 0; line < LINES && at < size; line++) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
		char name[LINE_MAX + 1];
		unsigned int rule;
		size_t held = 0;

		if (len > LINE_MAX)
			len = LINE_MAX;
		memcpy(name, data + at, len);
		name[len] = '\0';
		at += (nl ? (size_t)(nl - (data + at)) : size - at) + 1;
		check_budget_text(name, len);
		check_score(name);
		/* The first byte: the rule (2 bits) and the clock's step (0..63 s). */
		rule = len ? (unsigned int)(uint8_t)name[0] % RULES : 0;
		now_s += len ? (uint8_t)name[0] >> 2 : 0;
		if (budget_charge(b, "sb", (uint16_t)rule, NAMES, window_of(rule), name,
				  (uint64_t)now_s * 1000, NULL) !=
		    ref_charge(&ref[rule], window_of(rule), name, now_s))
			abort();
		/* The reference drops expired names only from the rule it charged, as
		 * the budget does (budget_charge() expires the rule it counts for). */
		for (unsigned int r = 0; r < RULES; r++)
			held += ref[r].count;
		if (budget_names(b) != held)
			abort();
	}
	budget_expire(b, (uint64_t)(now_s + window_of(RULES - 1)) * 1000);
	if (budget_names(b) != 0)
		abort();
	budget_free(b);
	free(ref);
	return 0;
}
