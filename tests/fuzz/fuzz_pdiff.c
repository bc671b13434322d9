/*
 * fuzz_pdiff - `netd policy replay`'s core on arbitrary audit logs: each
 * line of the input that is a JSON object goes to pdiff_add() against two
 * fixed proposed policies (a wildcard with an except and max_qname_length,
 * single ports, CIDR rules, one over a never-pin address).  The report
 * must account for every change it counts (the totals are the sum of the
 * changes' counts, nothing over the limits here), every change has a count
 * of at least 1, first <= last, a direction and a kind, a newly allowed
 * one a rule of its policy, and the report is the same when asked twice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "netd/cli/pdiff.h"
#include "netd/model/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char pol_a[] =
	"name: agent\n"
	"egress:\n"
	"  - domains: [\"*.example.com\", pypi.org]\n"
	"    except: [uploads.example.com, \"*.user.example.com\"]\n"
	"    ports: [443, 8443]\n"
	"    max_qname_length: 40\n"
	"  - domains: [\"*.example.net\"]\n"
	"    ports: [53]\n"
	"    protocol: udp\n"
	"  - cidrs: [203.0.113.0/24, 169.254.169.254/32, \"2001:db8::/64\"]\n"
	"    ports: [\"8000-8080\"]\n";
static const char pol_b[] = "name: other\negress: []\n";

static struct policy *pols[2];

static void setup(void)
{
	struct diag err;

	if (pols[0])
		return;
	if (policy_parse(pol_a, sizeof(pol_a) - 1, "a.yaml", &pols[0], &err) < 0 ||
	    policy_parse(pol_b, sizeof(pol_b) - 1, "b.yaml", &pols[1], &err) < 0)
		abort();
}

static void check(const json_t *rep)
{
	long long sum[2] = { 0, 0 };
	const json_t *g, *c;
	size_t i, j;

	if (json_integer_value(json_object_get(json_object_get(rep, "not_replayed"),
					       "over_limits")))
		return;	/* not reached by an input of this size, but then totals may differ */
	json_array_foreach(json_object_get(rep, "groups"), i, g) {
		const char *pn = json_string_value(json_object_get(g, "policy"));
		const struct policy *p = pn && strcmp(pn, "agent") == 0 ? pols[0] : pols[1];

		json_array_foreach(json_object_get(g, "changes"), j, c) {
			const char *dir = json_string_value(json_object_get(c, "direction"));
			const char *kind = json_string_value(json_object_get(c, "kind"));
			const char *f = json_string_value(json_object_get(c, "first"));
			const char *l = json_string_value(json_object_get(c, "last"));
			json_int_t n = json_integer_value(json_object_get(c, "count"));
			bool allowed;

			if (!dir || !kind || n < 1 || (!f != !l) || (f && strcmp(f, l) > 0))
				abort();
			allowed = strcmp(dir, "newly-allowed") == 0;
			if (!allowed && strcmp(dir, "newly-denied") != 0)
				abort();
			if (allowed && (json_integer_value(json_object_get(c, "rule")) < 0 ||
					(size_t)json_integer_value(json_object_get(c, "rule")) >=
						p->n_rules))
				abort();
			sum[allowed] += n;
		}
	}
	if (sum[0] != json_integer_value(json_object_get(rep, "newly_denied")) ||
	    sum[1] != json_integer_value(json_object_get(rep, "newly_allowed")))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct policy *const *pp;
	struct pdiff_opts o = { 0 };
	struct pdiff *d;
	json_t *a, *b;

	setup();
	pp = (const struct policy *const *)pols;
	/* The first byte chooses: every policy by name, or sandbox sb1 against the first. */
	if (size && data[0] == '!') {
		o.sandbox = "sb1";
		o.any_policy = true;
	}
	if (pdiff_new(pp, o.any_policy ? 1 : 2, &o, &d) < 0)
		return 0;
	for (size_t i = 0; i < size;) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - (data + i)) : size - i;
		json_t *rec = json_loadb((const char *)data + i, n, 0, NULL);

		if (rec && pdiff_add(d, rec) < 0)
			abort();
		json_decref(rec);
		i += n + 1;
	}
	a = pdiff_report(d);
	b = pdiff_report(d);
	if (!a || !b || !json_equal(a, b))
		abort();
	check(a);
	json_decref(a);
	json_decref(b);
	pdiff_free(d);
	return 0;
}
