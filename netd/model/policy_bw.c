/*
 * policy_bw - the policy's bandwidth and byte budgets (docs/policies.md):
 * `limits.bandwidth: { egress: 20mbit, ingress: 100mbit }` and a rule's
 * `budget: 1GB/day`, their syntax with FILE:LINE:COL errors and their
 * canonical forms, and the key a rule's budget counter is kept under.
 * Pure: never logs, reads no file.  Not here: the shaping itself
 * (netd/link/shape.c), the counting and the cut (netd/model/rbudget.c,
 * netd/daemon/rbudgetglue.c).
 */
#include "netd/model/policy.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/yamlx.h"

#define FAIL(n, ...) diag_set(err, file, (n)->line, (n)->col, __VA_ARGS__)

/* Rate units, decimal as tc(8)'s: bits per second. */
static const struct unit {
	const char *name;
	uint64_t mul;
} rate_units[] = {
	{ "gbit", 1000000000ull }, { "mbit", 1000000ull }, { "kbit", 1000ull }, { "bit", 1ull },
};

/* Byte units of a budget: decimal, then binary, largest first (policy_budget_format()). */
static const struct unit byte_units[] = {
	{ "PB", 1000000000000000ull }, { "TB", 1000000000000ull }, { "GB", 1000000000ull },
	{ "MB", 1000000ull }, { "KB", 1000ull }, { "PiB", 1ull << 50 }, { "TiB", 1ull << 40 },
	{ "GiB", 1ull << 30 }, { "MiB", 1ull << 20 }, { "KiB", 1ull << 10 }, { "B", 1ull },
};

#define N_RATE_UNITS (sizeof(rate_units) / sizeof(rate_units[0]))
#define N_BYTE_UNITS (sizeof(byte_units) / sizeof(byte_units[0]))

/* Digits of @s[*i..@len) into *@v (at most @max of them, <= 19), *@n of them. */
static int digits(const char *s, size_t len, size_t *i, uint64_t *v, size_t *n, size_t max)
{
	*v = 0;
	*n = 0;
	while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
		if (++*n > max)
			return -ERANGE;
		*v = *v * 10 + (uint64_t)(s[*i] - '0');
		(*i)++;
	}
	return 0;
}

/* Is @u (@ulen bytes) one of @words (case aside)? */
static bool one_of(const char *u, size_t ulen, const char *const *words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(words[i]) == ulen && strncasecmp(u, words[i], ulen) == 0)
			return true;
	return false;
}

/*
 * Why unit @u (@ulen bytes, after the number @s[0..@nlen)) is no rate
 * unit, into @why: "20mbps" is tc's megabytes per second, "20MB" bytes,
 * "20m" a prefix without its "bit"; each is told the bits it meant.
 */
static void rate_slip(const char *s, size_t nlen, const char *u, size_t ulen, char *why,
		      size_t whysz)
{
	static const char *const per_s[] = { "bps", "kbps", "mbps", "gbps", "b/s", "kb/s", "mb/s",
					     "gb/s" };
	static const char *const tc_bytes[] = { "bytes", "kilobytes", "megabytes", "gigabytes" };
	static const char *const bytes[] = { "kb", "mb", "gb", "kib", "mib", "gib" };
	static const char *const bare[] = { "k", "m", "g" };
	char want[8] = "bit", tail[80] = "";
	int show = (int)(ulen > 16 ? 16 : ulen);

	/* The prefix the writer meant, in bits. */
	if (strchr("kmg", u[0] | 0x20))
		snprintf(want, sizeof(want), "%cbit", u[0] | 0x20);
	/* tc(8)'s words for bytes per second: named only to a writer who used them. */
	for (size_t k = 0; k < 4; k++)
		if (one_of(u, ulen, per_s + k, 1))
			snprintf(tail, sizeof(tail), "; tc reads '%.*s' as %s per second", show, u,
				 tc_bytes[k]);
	if (one_of(u, ulen, bytes, 6))
		snprintf(tail, sizeof(tail), "; '%.*s' is bytes", show, u);
	if (one_of(u, ulen, per_s, 8) || one_of(u, ulen, bytes, 6) || one_of(u, ulen, bare, 3))
		snprintf(why, whysz, "'%.*s' is not a unit: a rate is in bits per second, written "
			 "bit, kbit, mbit or gbit without a space (write %.*s%s%s)", show, u,
			 (int)nlen, s, want, tail);
	else
		snprintf(why, whysz, "unknown unit '%.*s' (expected bit, kbit, mbit or gbit, "
			 "e.g. 20mbit)", show, u);
}

/* A zero rate's refusal.  Return: -ERANGE. */
static int rate_zero(char *why, size_t whysz)
{
	snprintf(why, whysz, "zero: a rate is at least 8kbit (to set no limit, leave the key out)");
	return -ERANGE;
}

/* A zero budget's refusal.  Return: -ERANGE. */
static int budget_zero(char *why, size_t whysz)
{
	snprintf(why, whysz, "zero: a budget is at least 1B (to set none, leave the key out)");
	return -ERANGE;
}

int policy_rate_parse(const char *s, size_t len, uint64_t *bps, char *why, size_t whysz)
{
	uint64_t whole = 0, frac = 0, pow10 = 1, mul;
	size_t i = 0, nw = 0, nf = 0, ulen;
	const struct unit *unit = NULL;
	bool spaced = false;
	const char *u;

	if (len && s[0] == '-') {
		snprintf(why, whysz, "a rate is a positive number of bits per second");
		return -EINVAL;
	}
	if (digits(s, len, &i, &whole, &nw, 15) < 0) {
		snprintf(why, whysz, "over the limit %s", "100gbit");
		return -ERANGE;
	}
	if (i < len && s[i] == '.') {
		i++;
		if (digits(s, len, &i, &frac, &nf, 15) < 0 || nf > 9) {
			snprintf(why, whysz, "at most 9 digits after the point");
			return -EINVAL;
		}
		for (size_t k = 0; k < nf; k++)
			pow10 *= 10;
	}
	if (nw == 0 && nf == 0) {
		snprintf(why, whysz, "expected a number and a unit bit, kbit, mbit or gbit, "
			 "e.g. 20mbit");
		return -EINVAL;
	}
	u = s + i;
	ulen = len - i;
	while (ulen && (u[0] == ' ' || u[0] == '\t')) {
		spaced = true;
		u++;
		ulen--;
	}
	if (ulen == 0 && whole == 0 && frac == 0)
		return rate_zero(why, whysz);	/* "0": zero, not a missing unit */
	if (ulen == 0) {
		snprintf(why, whysz, "a rate needs a unit: bit, kbit, mbit or gbit (e.g. 20mbit)");
		return -EINVAL;
	}
	for (size_t k = 0; k < N_RATE_UNITS && !unit; k++)
		if (strlen(rate_units[k].name) == ulen && strncasecmp(u, rate_units[k].name, ulen) == 0)
			unit = &rate_units[k];
	if (!unit) {
		rate_slip(s, i, u, ulen, why, whysz);
		return -EINVAL;
	}
	if (spaced) {
		snprintf(why, whysz, "no space between the number and the unit (write %.*s%s)",
			 (int)i, s, unit->name);
		return -EINVAL;
	}
	mul = unit->mul;
	if (whole > POLICY_RATE_MAX / mul) {
		snprintf(why, whysz, "over the limit 100gbit");
		return -ERANGE;
	}
	/* The fraction must come out in whole bits: 1.5gbit yes, 1.5bit no
	 * (frac < 10^9 and mul <= 10^9: the product fits). */
	if (frac * mul % pow10) {
		snprintf(why, whysz, "not a whole number of bits per second");
		return -EINVAL;
	}
	*bps = whole * mul + frac * mul / pow10;
	if (*bps > POLICY_RATE_MAX) {
		snprintf(why, whysz, "over the limit 100gbit");
		return -ERANGE;
	}
	if (*bps == 0)
		return rate_zero(why, whysz);
	if (*bps < POLICY_RATE_MIN) {
		snprintf(why, whysz, "under the minimum 8kbit");
		return -ERANGE;
	}
	return 0;
}

const char *policy_rate_format(uint64_t bps, char *buf, size_t sz)
{
	for (size_t k = 0; k < N_RATE_UNITS; k++)
		if (bps && bps % rate_units[k].mul == 0) {
			snprintf(buf, sz, "%llu%s", (unsigned long long)(bps / rate_units[k].mul),
				 rate_units[k].name);
			return buf;
		}
	snprintf(buf, sz, "%llubit", (unsigned long long)bps);
	return buf;
}

void policy_bw_want(const struct policy *p, uint64_t own_eg, uint64_t own_in, uint64_t *eg,
		    uint64_t *in)
{
	*eg = own_eg ? own_eg : p ? p->bw_egress_bps : 0;
	*in = own_in ? own_in : p ? p->bw_ingress_bps : 0;
}

int policy_budget_parse(const char *s, size_t len, uint64_t *bytes, uint32_t *period_s,
			char *why, size_t whysz)
{
	const char *slash = memchr(s, '/', len), *u, *per;
	size_t i = 0, n = 0, nf = 0, ulen, plen, num = slash ? (size_t)(slash - s) : len;
	uint64_t v = 0, frac = 0, pow10 = 1, mul = 0;

	if (len && s[0] == '-') {
		snprintf(why, whysz, "a budget is a positive number of bytes");
		return -EINVAL;
	}
	/* 16 digits: 1PiB in bytes, 1125899906842624, is one of them. */
	if (digits(s, num, &i, &v, &n, 16) < 0) {
		snprintf(why, whysz, "over the limit 1PiB");
		return -ERANGE;
	}
	if (i < num && s[i] == '.') {	/* read to say what it is in whole bytes */
		i++;
		if (digits(s, num, &i, &frac, &nf, 9) < 0) {
			snprintf(why, whysz, "a budget is a whole number of bytes (e.g. 1500MB/day)");
			return -EINVAL;
		}
		for (size_t k = 0; k < nf; k++)
			pow10 *= 10;
	}
	if (n == 0 && nf == 0) {
		snprintf(why, whysz, "expected bytes and a window, e.g. 1GB/day or 500MB/hour");
		return -EINVAL;
	}
	if (v == 0 && frac == 0 && i == len)
		return budget_zero(why, whysz);	/* "0": zero, not a missing window */
	if (!slash) {
		snprintf(why, whysz, "a budget needs a window, /hour or /day (e.g. 1GB/day)");
		return -EINVAL;
	}
	u = s + i;
	ulen = (size_t)(slash - u);
	if (ulen && (u[0] == ' ' || u[ulen - 1] == ' ')) {
		snprintf(why, whysz, "no spaces (e.g. 1GB/day)");
		return -EINVAL;
	}
	for (size_t k = 0; k < N_BYTE_UNITS && !mul; k++)
		if (strlen(byte_units[k].name) == ulen &&
		    strncasecmp(u, byte_units[k].name, ulen) == 0 && u[ulen - 1] == 'B')
			mul = byte_units[k].mul;
	if (!mul) {
		snprintf(why, whysz, "%s (expected B, KB, MB, GB, TB, PB or KiB, MiB, GiB, TiB, PiB: "
			 "bytes, upper-case B)", ulen == 0 ? "no unit" : ulen && u[ulen - 1] == 'b' ?
			 "'b' is bits; a budget counts bytes" : "unknown unit");
		return -EINVAL;
	}
	per = slash + 1;
	plen = len - (size_t)(per - s);
	if (plen == 4 && strncmp(per, "hour", 4) == 0)
		*period_s = 3600;
	else if (plen == 3 && strncmp(per, "day", 3) == 0)
		*period_s = 86400;
	else {
		snprintf(why, whysz, "the window is /hour or /day");
		return -EINVAL;
	}
	if (v > POLICY_BUDGET_MAX / mul) {
		snprintf(why, whysz, "over the limit 1PiB");
		return -ERANGE;
	}
	if (nf) {
		/* frac/10^nf of mul bytes is whole iff (10^nf/g) divides frac, g
		 * = gcd(mul, 10^nf); it is then below mul: no overflow. */
		uint64_t g = mul, h = pow10, whole;
		char b[POLICY_BUDGET_STRLEN];

		if (v == 0 && frac == 0)
			return budget_zero(why, whysz);	/* "0.0GB/day" */
		while (h) {
			uint64_t t = g % h;

			g = h;
			h = t;
		}
		whole = v * mul + frac / (pow10 / g) * (mul / g);
		if (whole > POLICY_BUDGET_MAX) {
			snprintf(why, whysz, "over the limit 1PiB");
			return -ERANGE;
		}
		if (frac % (pow10 / g) || whole == 0)
			snprintf(why, whysz, "a budget is a whole number of bytes (e.g. 1500MB/day)");
		else
			snprintf(why, whysz, "a whole number of bytes: write %s",
				 policy_budget_format(whole, *period_s, b, sizeof(b)));
		return -EINVAL;
	}
	if (v == 0)
		return budget_zero(why, whysz);
	*bytes = v * mul;
	return 0;
}

const char *policy_budget_format(uint64_t bytes, uint32_t period_s, char *buf, size_t sz)
{
	const char *per = period_s == 3600 ? "hour" : "day";

	for (size_t k = 0; k < N_BYTE_UNITS; k++)
		if (bytes && bytes % byte_units[k].mul == 0) {
			snprintf(buf, sz, "%llu%s/%s", (unsigned long long)(bytes / byte_units[k].mul),
				 byte_units[k].name, per);
			return buf;
		}
	snprintf(buf, sz, "%lluB/%s", (unsigned long long)bytes, per);
	return buf;
}

int policy_bw_parse(const struct yamlx_node *n, const char *file, struct diag *err,
		    struct policy *p)
{
	static const char *const names[] = { "egress", "ingress" };
	const struct yamlx_node *v[2];
	uint64_t *out[2] = { &p->bw_egress_bps, &p->bw_ingress_bps };
	char q[300], why[256];
	int r;

	if (n->type != YAMLX_MAP)
		return FAIL(n, "limits.bandwidth: expected a mapping, got %s (e.g. bandwidth: "
			    "{ egress: 20mbit, ingress: 100mbit })", yamlx_kind(n));
	r = yamlx_fields(n, file, err, "limits.bandwidth", names, 2, NULL, v);
	if (r < 0)
		return r;
	if (!v[0] && !v[1])
		return FAIL(n, "limits.bandwidth: expected egress and/or ingress (e.g. bandwidth: "
			    "{ egress: 20mbit })");
	for (int d = 0; d < 2; d++) {
		if (!v[d])
			continue;
		if (!yamlx_is_str(v[d]))
			return FAIL(v[d], "limits.bandwidth.%s: expected a rate, got %s (e.g. 20mbit)",
				    names[d], yamlx_kind(v[d]));
		if (policy_rate_parse(v[d]->str, v[d]->len, out[d], why, sizeof(why)) < 0)
			return FAIL(v[d], "limits.bandwidth.%s: bad rate '%s': %s", names[d],
				    yamlx_quote(v[d]->str, v[d]->len, q, sizeof(q)), why);
	}
	return 0;
}

int policy_budget_node(const struct yamlx_node *n, const char *file, struct diag *err,
		       const char *where, struct policy_rule *rule)
{
	char q[300], why[256];

	/*
	 * A closed rule is refused per sandbox by leaving it out of the
	 * sandbox's DNS view and removing its pins; a cidrs rule needs no pin
	 * and is accepted for all of its policy's sandboxes at once
	 * (pc-POLICY-cidr4/6), so it cannot be closed for one of them.
	 */
	if (!rule->n_domains)
		return FAIL(n, "%s.budget: only a 'domains' rule has a budget (a cidrs rule's "
			    "traffic cannot be refused per sandbox)", where);
	if (!yamlx_is_str(n))
		return FAIL(n, "%s.budget: expected bytes per window, got %s (e.g. budget: 1GB/day)",
			    where, yamlx_kind(n));
	if (policy_budget_parse(n->str, n->len, &rule->budget_bytes, &rule->budget_period_s, why,
				sizeof(why)) < 0)
		return FAIL(n, "%s.budget: bad budget '%s': %s", where,
			    yamlx_quote(n->str, n->len, q, sizeof(q)), why);
	return 0;
}

int policy_budget_check(const struct policy *p, const struct yamlx_node *eg, const char *file,
			struct diag *err)
{
	char key[POLICY_RULE_KEY_MAX], other[POLICY_RULE_KEY_MAX], q[300];
	size_t n = 0;

	for (size_t i = 0; i < p->n_rules && i < eg->n_kids; i++) {
		if (!p->rules[i].budget_bytes)
			continue;
		if (++n > POLICY_BUDGET_RULES)
			return FAIL(eg->kids[i], "egress[%zu].budget: more than %u rules with a "
				    "budget (one counter each per sandbox)", i, POLICY_BUDGET_RULES);
		/*
		 * One counter per key (rbudget.h): in the state file, in the
		 * metrics' labels, across a restart.  Two rules under one key
		 * would count into two counters a restart reads back as one,
		 * and two series with the same labels.  At most 64 budgeted
		 * rules: the quadratic walk is 2,016 comparisons.
		 */
		policy_rule_key(&p->rules[i], key, sizeof(key));
		for (size_t j = 0; j < i; j++)
			if (p->rules[j].budget_bytes &&
			    strcmp(policy_rule_key(&p->rules[j], other, sizeof(other)), key) == 0)
				return FAIL(eg->kids[i], "egress[%zu]: its budget would share the key "
					    "'%s' with egress[%zu]'s (line %u): budgets are kept by their "
					    "rule's first domain and protocol; put both ports in one rule "
					    "or list another domain first", i,
					    yamlx_quote(key, strlen(key), q, sizeof(q)), j, eg->kids[j]->line);
	}
	return 0;
}

const char *policy_rule_key(const struct policy_rule *r, char *buf, size_t sz)
{
	char pfx[PREFIX_STRLEN];
	const char *first = r->n_domains ? r->domains[0] :
			    r->n_cidrs ? prefix_format(&r->cidrs[0], pfx, sizeof(pfx)) : "";

	snprintf(buf, sz, "%s %s", first, r->proto == IPPROTO_UDP ? "udp" : "tcp");
	return buf;
}
