/*
 * fuzz_suggest - `netd policy suggest` on arbitrary audit logs: each line
 * of the input that is a JSON object goes to suggest_add(); the rendered
 * suggestion must always parse as a policy (the promise `netd policy
 * check` relies on), every domain it lists must pass policy_pattern_check(),
 * and rendering twice gives the same bytes; with and without
 * SUGGEST_WILDCARDS, and without it no line is a wildcard.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "netd/model/policy.h"
#include "netd/cli/suggest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct suggest_filter f = { .sandbox = "agent" };
	struct suggest *s;
	struct policy *p = NULL;
	struct diag err;
	char *a, *b, why[400];
	size_t la, lb;

	if (suggest_new(&f, &s) < 0)
		return 0;
	for (size_t i = 0; i < size;) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - (data + i)) : size - i;
		json_t *rec = json_loadb((const char *)data + i, n, 0, NULL);

		if (rec)
			suggest_add(s, rec);
		json_decref(rec);
		i += n + 1;
	}
	/* Without --wildcards no line is a wildcard: nothing opens more than was seen. */
	for (unsigned int flags = 0; flags <= SUGGEST_WILDCARDS; flags += SUGGEST_WILDCARDS) {
		if (suggest_render(s, "fuzz", "fuzz.jsonl", flags, &a, &la) < 0)
			break;
		if (suggest_render(s, "fuzz", "fuzz.jsonl", flags, &b, &lb) < 0 || la != lb ||
		    memcmp(a, b, la))
			abort();
		if (policy_parse(a, la, "suggested.yaml", &p, &err) < 0)
			abort();
		for (size_t r = 0; r < p->n_rules; r++)
			for (size_t d = 0; d < p->rules[r].n_domains; d++)
				if (policy_pattern_check(p->rules[r].domains[d], why, sizeof(why)) < 0 ||
				    (!flags && p->rules[r].domains[d][0] == '*'))
					abort();
		policy_free(p);
		free(a);
		free(b);
	}
	suggest_free(s);
	return 0;
}
