/*
 * rbudget - byte budgets per rule and sandbox; see rbudget.h.  Pure.
 */
#include "netd/model/rbudget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t rbudget_window(int64_t now_s, uint32_t period_s)
{
	int64_t w;

	if (!period_s)
		return now_s;
	w = now_s - now_s % (int64_t)period_s;
	return now_s < 0 && now_s % (int64_t)period_s ? w - (int64_t)period_s : w;
}

/* @c spent or not, and its rule's bit in @set->off (the DNS view's mask) with it. */
static void spent_set(struct rbudget_set *set, struct rbudget_counter *c, bool on)
{
	uint64_t bit = 1ull << (c->rule % 64);

	c->spent = on;
	if (c->rule >= POLICY_MAX_RULES)
		return;
	if (on)
		set->off[c->rule / 64] |= bit;
	else
		set->off[c->rule / 64] &= ~bit;
}

/* A counter of @old or @saved with @key and @period_s, carried into @c. */
static void carry(struct rbudget_counter *c, const struct rbudget_set *old,
		  const struct rbudget_saved *saved, size_t n_saved)
{
	for (size_t i = 0; old && i < old->n; i++)
		if (old->c[i].period_s == c->period_s && strcmp(old->c[i].key, c->key) == 0) {
			c->window_s = old->c[i].window_s;
			c->used = old->c[i].used;
			c->exceeded = old->c[i].exceeded;
			return;
		}
	for (size_t i = 0; !old && i < n_saved; i++)
		if (saved[i].key && saved[i].period_s == c->period_s &&
		    strcmp(saved[i].key, c->key) == 0) {
			c->window_s = saved[i].window_s;
			c->used = saved[i].used;
			return;
		}
}

int rbudget_sync(struct rbudget_set **set, const struct policy *p, int64_t now_s,
		const struct rbudget_saved *saved, size_t n_saved)
{
	struct rbudget_set *old = *set, *s;
	size_t n = 0, k = 0;

	for (size_t i = 0; p && i < p->n_rules; i++)
		n += p->rules[i].budget_bytes != 0;
	if (!n) {
		rbudget_free(old);
		*set = NULL;
		return 0;
	}
	s = calloc(1, sizeof(*s) + n * sizeof(s->c[0]));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_rules && i < POLICY_MAX_RULES; i++) {
		const struct policy_rule *r = &p->rules[i];
		struct rbudget_counter *c = &s->c[k];

		if (!r->budget_bytes)
			continue;
		policy_rule_key(r, c->key, sizeof(c->key));
		c->rule = (uint16_t)i;
		c->period_s = r->budget_period_s;
		c->limit = r->budget_bytes;
		c->window_s = rbudget_window(now_s, c->period_s);
		carry(c, old, saved, n_saved);
		/* A window that ended while netd was down (or a future one, from a
		 * clock set back) starts afresh. */
		if (c->window_s != rbudget_window(now_s, c->period_s)) {
			c->window_s = rbudget_window(now_s, c->period_s);
			c->used = 0;
		}
		spent_set(s, c, c->used >= c->limit);
		k++;
	}
	s->n = k;
	s->dirty = true;
	rbudget_free(old);
	*set = s;
	return 0;
}

void rbudget_free(struct rbudget_set *set)
{
	free(set);
}

static struct rbudget_counter *find(struct rbudget_set *set, uint16_t rule)
{
	for (size_t i = 0; set && i < set->n; i++)
		if (set->c[i].rule == rule)
			return &set->c[i];
	return NULL;
}

const struct rbudget_counter *rbudget_of(const struct rbudget_set *set, uint16_t rule)
{
	return find((struct rbudget_set *)set, rule);
}

/* Start @c's window again if it ended by @now_s.  Return: true if that opened it. */
static bool roll(struct rbudget_set *set, struct rbudget_counter *c, int64_t now_s)
{
	int64_t w = rbudget_window(now_s, c->period_s);
	bool was = c->spent;

	if (w == c->window_s)
		return false;
	c->window_s = w;
	c->used = 0;
	spent_set(set, c, false);
	set->dirty = true;
	return was;
}

int rbudget_add(struct rbudget_set *set, uint16_t rule, uint64_t bytes, int64_t now_s)
{
	struct rbudget_counter *c = find(set, rule);

	if (!c)
		return -ENOENT;
	roll(set, c, now_s);
	c->used = c->used > UINT64_MAX - bytes ? UINT64_MAX : c->used + bytes;
	set->dirty = true;
	if (c->spent || c->used < c->limit)
		return 0;
	spent_set(set, c, true);
	c->exceeded++;
	return 1;
}

size_t rbudget_roll(struct rbudget_set *set, int64_t now_s)
{
	size_t n = 0;

	for (size_t i = 0; set && i < set->n; i++)
		n += roll(set, &set->c[i], now_s);
	return n;
}

bool rbudget_any_closed(const struct rbudget_set *set)
{
	for (int i = 0; set && i < RBUDGET_OFF_WORDS; i++)
		if (set->off[i])
			return true;
	return false;
}

bool rbudget_closed(const struct rbudget_set *set, uint16_t rule)
{
	return set && rule < POLICY_MAX_RULES && (set->off[rule / 64] >> (rule % 64)) & 1;
}
