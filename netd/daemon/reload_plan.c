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

/*
 * What a move from one policy to another means, worked out once per pair
 * (a reload of one policy shared by 5,000 sandboxes compares two policies,
 * not 10,000): equal digests, and the items added and removed.
 */
struct pair {
	const struct policy *old, *np;	/* borrowed */
	bool same;
	json_t *added, *removed;	/* owned; NULL if same */
};

struct pairs {
	struct pair *v;
	size_t n;
};

static void pairs_free(struct pairs *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		json_decref(ps->v[i].added);
		json_decref(ps->v[i].removed);
	}
	free(ps->v);
}

/* The pair (@old, @np), worked out if new.  NULL: out of memory. */
static const struct pair *pair_of(struct pairs *ps, const struct policy *old,
				  const struct policy *np)
{
	char d1[PVIEW_DIGEST_LEN + 8], d2[PVIEW_DIGEST_LEN + 8];
	json_t *io, *inew;
	struct pair *m;

	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].old == old && ps->v[i].np == np)
			return &ps->v[i];
	m = reallocarray(ps->v, ps->n + 1, sizeof(*m));
	if (!m)
		return NULL;
	ps->v = m;
	m = &ps->v[ps->n];
	*m = (struct pair){ .old = old, .np = np };
	m->same = old && strcmp(pview_digest(old, d1, sizeof(d1)),
				pview_digest(np, d2, sizeof(d2))) == 0;
	if (!m->same) {
		io = json_object();
		inew = json_object();
		if (io && inew) {
			pview_items(old, io);
			pview_items(np, inew);
			m->added = pview_items_minus(inew, io);
			m->removed = pview_items_minus(io, inew);
		}
		json_decref(io);
		json_decref(inew);
		if (!m->added || !m->removed) {
			json_decref(m->added);
			json_decref(m->removed);
			return NULL;
		}
	}
	ps->n++;
	return m;
}

/* Fill @c for @sb moving as @m says. */
static int plan_change(const struct reload_input *in, struct reload_change *c,
		       struct sandbox *sb, const struct pair *m, char *err, size_t errsz)
{
	const struct policy *np = m->np;
	size_t cap = pinreg_count_of(in->pins, sb->name) + 1;	/* its own entries only */
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
	r = pinreg_split(in->pins, sb->name, np, in->now_ms, c->keep, cap, &c->n_keep, c->cut,
			 cap, &c->n_cut);
	if (r < 0) {
		snprintf(err, errsz, "sandbox %s: %s", sb->name, strerror(-r));
		return r;
	}
	if (c->n_keep > RELOAD_MAX_PINS)
		c->n_keep = RELOAD_MAX_PINS;	/* the set's size; the rest re-resolve */
	c->added = json_incref(m->added);
	c->removed = json_incref(m->removed);
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
	struct pairs ps = { 0 };
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
		const struct pair *m;

		np = new_policy_of(in, out, sb, err, errsz);
		if (!np) {
			r = -ENOMEM;
			break;
		}
		m = pair_of(&ps, old, np);
		if (!m) {
			snprintf(err, errsz, "out of memory");
			r = -ENOMEM;
			break;
		}
		if (m->same)
			continue;
		r = plan_change(in, &out->changes[out->n_changes++], sb, m, err, errsz);
		if (r < 0)
			break;
	}
	pairs_free(&ps);
	return r;
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
