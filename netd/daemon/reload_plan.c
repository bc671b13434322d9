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

/* "WHAT: WAS -> NOW" appended to @arr (a JSON array).  Return: 0; -ENOMEM. */
static int limit_line(json_t *arr, const char *what, const char *was, const char *now)
{
	char line[POLICY_RULE_KEY_MAX + 160];

	snprintf(line, sizeof(line), "%s: %s -> %s", what, was, now);
	return json_array_append_new(arr, json_string(line)) < 0 ? -ENOMEM : 0;
}

/* @bps as a policy writes it, or "unlimited". */
static const char *rate_text(uint64_t bps, char *buf, size_t sz)
{
	return bps ? policy_rate_format(bps, buf, sz) : "unlimited";
}

/* Rule @r's budget as a policy writes it, or "none". */
static const char *budget_text(const struct policy_rule *r, char *buf, size_t sz)
{
	return r && r->budget_bytes ? policy_budget_format(r->budget_bytes, r->budget_period_s,
							   buf, sz) : "none";
}

/* limits.egress_bytes with its on_exceed, or "none". */
static const char *quota_text(const struct policy *p, char *buf, size_t sz)
{
	if (!p || !p->egress_bytes)
		return "none";
	snprintf(buf, sz, "%llu bytes, on_exceed %s", (unsigned long long)p->egress_bytes,
		 p->quota_cut ? "cut" : "finish");
	return buf;
}

/* The rule of @p (NULL: none) with a budget under key @key (policy_rule_key();
 * one at most: policy_budget_check()). */
static const struct policy_rule *budgeted(const struct policy *p, const char *key)
{
	char k[POLICY_RULE_KEY_MAX];

	for (size_t i = 0; p && i < p->n_rules; i++)
		if (p->rules[i].budget_bytes &&
		    strcmp(policy_rule_key(&p->rules[i], k, sizeof(k)), key) == 0)
			return &p->rules[i];
	return NULL;
}

/*
 * The policy's own limits a move from @old (NULL: none) to @np changes,
 * onto @arr: limits.connections, limits.egress_bytes, and each rule's
 * budget by the key its counter is kept under (rbudget.h).  Not the rates:
 * a sandbox's own may hide them (bw_lines()).  Return: 0; -ENOMEM.
 */
static int policy_limit_lines(const struct policy *old, const struct policy *np, json_t *arr)
{
	char a[POLICY_BUDGET_STRLEN + 48], b[POLICY_BUDGET_STRLEN + 48], key[POLICY_RULE_KEY_MAX],
	     what[POLICY_RULE_KEY_MAX + 8];
	uint32_t oc = old ? old->max_conns : 0;
	int r = 0;

	if (oc != np->max_conns) {
		snprintf(a, sizeof(a), oc ? "%u" : "netd.yaml's", oc);
		snprintf(b, sizeof(b), np->max_conns ? "%u" : "netd.yaml's", np->max_conns);
		r = limit_line(arr, "connections", a, b);
	}
	if (!r && strcmp(quota_text(old, a, sizeof(a)), quota_text(np, b, sizeof(b))) != 0)
		r = limit_line(arr, "egress_bytes", a, b);
	/* Budgets the new policy sets (changed or new), then those it dropped. */
	for (size_t i = 0; !r && i < np->n_rules; i++) {
		const struct policy_rule *nr = &np->rules[i], *or;

		if (!nr->budget_bytes)
			continue;
		policy_rule_key(nr, key, sizeof(key));
		or = budgeted(old, key);
		if (or && or->budget_bytes == nr->budget_bytes &&
		    or->budget_period_s == nr->budget_period_s)
			continue;
		snprintf(what, sizeof(what), "budget %s", key);
		r = limit_line(arr, what, budget_text(or, a, sizeof(a)),
			       budget_text(nr, b, sizeof(b)));
	}
	for (size_t i = 0; !r && old && i < old->n_rules; i++) {
		const struct policy_rule *or = &old->rules[i];

		if (!or->budget_bytes)
			continue;
		if (budgeted(np, policy_rule_key(or, key, sizeof(key))))
			continue;
		snprintf(what, sizeof(what), "budget %s", key);
		r = limit_line(arr, what, budget_text(or, a, sizeof(a)), "none");
	}
	return r;
}

/*
 * @sb's rates before and after a move from @old to @np (policy_bw_want():
 * its own rates stay), as "bandwidth egress: 10mbit -> 4mbit" lines on
 * @arr (made if NULL and a line is due).  Return: 0; -ENOMEM.
 */
static int bw_lines(const struct policy *old, const struct policy *np, const struct sandbox *sb,
		    json_t **arr)
{
	uint64_t was[2], now[2];
	char a[POLICY_RATE_STRLEN], b[POLICY_RATE_STRLEN];

	policy_bw_want(old, sb->bw_egress_bps, sb->bw_ingress_bps, &was[0], &was[1]);
	policy_bw_want(np, sb->bw_egress_bps, sb->bw_ingress_bps, &now[0], &now[1]);
	for (int k = 0; k < 2; k++) {
		if (was[k] == now[k])
			continue;
		if (!*arr && !(*arr = json_array()))
			return -ENOMEM;
		if (limit_line(*arr, k ? "bandwidth ingress" : "bandwidth egress",
			       rate_text(was[k], a, sizeof(a)), rate_text(now[k], b, sizeof(b))) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * What a move from one policy to another means, worked out once per pair
 * (a reload of one policy shared by 5,000 sandboxes compares two policies,
 * not 10,000): equal digests, the items added and removed, and the
 * policy's own limits that changed.
 */
struct pair {
	const struct policy *old, *np;	/* borrowed */
	bool same;			/* equal digests: the same rules */
	json_t *added, *removed;	/* owned; NULL if same */
	json_t *limits;			/* owned: policy_limit_lines() */
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
		json_decref(ps->v[i].limits);
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
	m->limits = json_array();
	if (!m->limits || policy_limit_lines(old, np, m->limits) < 0) {
		json_decref(m->added);
		json_decref(m->removed);
		json_decref(m->limits);
		return NULL;
	}
	ps->n++;
	return m;
}

/* Fill @c for @sb moving as @m says; @bw: its rates' lines (bw_lines()), taken. */
static int plan_change(const struct reload_input *in, struct reload_change *c,
		       struct sandbox *sb, const struct pair *m, json_t *bw, char *err,
		       size_t errsz)
{
	const struct policy *np = m->np;
	size_t cap = pinreg_count_of(in->pins, sb->name) + 1;	/* its own entries only */
	int r;

	c->sb = sb;
	c->pol = np;
	c->deny_all = !np->file;
	c->rules = !m->same;
	c->limits = bw ? bw : json_array();
	if (!c->limits || json_array_extend(c->limits, m->limits) < 0) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
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
	/*
	 * Equal rules allow the same pins; should the split still cut one, the
	 * batch must carry it (pinreg_drop() follows the kernel, never leads).
	 */
	if (c->n_cut)
		c->rules = true;
	if (c->n_keep > RELOAD_MAX_PINS)
		c->n_keep = RELOAD_MAX_PINS;	/* the set's size; the rest re-resolve */
	/* Only limits changed: no item added or removed. */
	c->added = m->added ? json_incref(m->added) : json_array();
	c->removed = m->removed ? json_incref(m->removed) : json_array();
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
		json_t *bw = NULL;

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
		if (bw_lines(old, np, sb, &bw) < 0) {
			json_decref(bw);
			snprintf(err, errsz, "out of memory");
			r = -ENOMEM;
			break;
		}
		if (m->same && !json_array_size(m->limits) && !bw)
			continue;
		r = plan_change(in, &out->changes[out->n_changes++], sb, m, bw, err, errsz);
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
		json_decref(p->changes[i].limits);
	}
	free(p->changes);
	memset(p, 0, sizeof(*p));
}
