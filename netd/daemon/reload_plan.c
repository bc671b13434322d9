/*
 * reload_plan - a reload's plan, over memory only.  Pure.
 */
#include "netd/daemon/reload_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "netd/daemon/policyview.h"

struct policy *reload_deny_all_new(const char *name)
{
	char text[256];
	struct diag err = { 0 };
	struct policy *p;

	if (!policy_name_valid(name))
		return NULL;
	snprintf(text, sizeof(text),
		 "name: %s\ndescription: \"deny all: its policy file is gone\"\negress: []\n", name);
	if (policy_parse(text, strlen(text), NULL, &p, &err) < 0)
		return NULL;
	free(p->file);
	p->file = NULL;
	return p;
}

static const struct policy *find(const struct policy *const *set, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set[i]->name, name) == 0)
			return set[i];
	return NULL;
}

/* The policy @sb runs under after the reload: its new one, else a deny-all added to @p. */
static const struct policy *new_policy_of(const struct reload_input *in, struct reload_plan *p,
					  const struct sandbox *sb, char *err, size_t errsz)
{
	const struct policy *np = find((const struct policy *const *)p->policies, p->n_policies,
				       sb->policy);

	if (np)
		return np;
	if (p->n_policies == in->max_policies ||
	    !(p->policies[p->n_policies] = reload_deny_all_new(sb->policy))) {
		snprintf(err, errsz, "cannot make a deny-all policy for %s", sb->policy);
		return NULL;
	}
	return p->policies[p->n_policies++];
}

/* Fill @c for @sb moving from @old (may be NULL) to @np. */
static int plan_change(const struct reload_input *in, struct reload_change *c,
		       struct sandbox *sb, const struct policy *old, const struct policy *np,
		       char *err, size_t errsz)
{
	size_t cap = pinsrc_count(in->pinsrc) + 1;
	json_t *io, *inew;
	int r;

	c->sb = sb;
	c->pol = np;
	c->deny_all = !np->file;
	c->keep = calloc(cap, sizeof(*c->keep));
	c->cut = calloc(cap, sizeof(*c->cut));
	if (!c->keep || !c->cut) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	r = pinsrc_split(in->pinsrc, sb->name, np, in->now_ms, c->keep, cap, &c->n_keep, c->cut,
			 cap, &c->n_cut);
	if (r < 0) {
		snprintf(err, errsz, "sandbox %s: %s", sb->name, strerror(-r));
		return r;
	}
	if (c->n_keep > RELOAD_MAX_PINS)
		c->n_keep = RELOAD_MAX_PINS;	/* the set's size; the rest re-resolve */
	io = json_object();
	inew = json_object();
	if (io && inew) {
		pview_items(old, io);
		pview_items(np, inew);
		c->added = pview_items_minus(inew, io);
		c->removed = pview_items_minus(io, inew);
	}
	json_decref(io);
	json_decref(inew);
	if (!c->added || !c->removed) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int reload_plan_build(const struct reload_input *in, struct policy **newp, size_t n_new,
		      struct reload_plan *out, char *err, size_t errsz)
{
	size_t n_sb = sandbox_count(in->sandboxes);
	struct sandbox *sb;
	uint32_t cur = 0;
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->policies = calloc(in->max_policies ? in->max_policies : 1, sizeof(*out->policies));
	out->changes = calloc(n_sb ? n_sb : 1, sizeof(*out->changes));
	if (!out->policies || !out->changes || n_new > in->max_policies) {
		for (size_t i = 0; i < n_new; i++)
			policy_free(newp[i]);
		snprintf(err, errsz, "%s", n_new > in->max_policies ? "too many policies" :
									"out of memory");
		return n_new > in->max_policies ? -E2BIG : -ENOMEM;
	}
	memcpy(out->policies, newp, n_new * sizeof(*newp));
	out->n_policies = n_new;
	while ((sb = sandbox_next(in->sandboxes, &cur))) {
		const struct policy *old = find(in->old, in->n_old, sb->policy), *np;
		char d1[PVIEW_DIGEST_LEN + 8], d2[PVIEW_DIGEST_LEN + 8];

		np = new_policy_of(in, out, sb, err, errsz);
		if (!np)
			return -ENOMEM;
		if (old && strcmp(pview_digest(old, d1, sizeof(d1)),
				  pview_digest(np, d2, sizeof(d2))) == 0)
			continue;
		r = plan_change(in, &out->changes[out->n_changes++], sb, old, np, err, errsz);
		if (r < 0)
			return r;
	}
	return 0;
}

struct policy **reload_plan_take_policies(struct reload_plan *p, size_t *n)
{
	struct policy **set = p->policies;

	*n = p->n_policies;
	p->policies = NULL;
	p->n_policies = 0;
	return set;
}

void reload_plan_free(struct reload_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_policies; i++)
		policy_free(p->policies[i]);
	free(p->policies);
	for (size_t i = 0; p->changes && i < p->n_changes; i++) {
		free(p->changes[i].keep);
		free(p->changes[i].cut);
		json_decref(p->changes[i].added);
		json_decref(p->changes[i].removed);
	}
	free(p->changes);
	memset(p, 0, sizeof(*p));
}
