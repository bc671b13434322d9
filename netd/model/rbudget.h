/*
 * rbudget - one sandbox's byte budgets per rule (a rule's `budget: 1GB/day`,
 * docs/policies.md): a counter per budgeted rule of its policy, each over
 * a window of an hour or a day (UTC, aligned to the epoch: a day budget
 * starts again at 00:00 UTC), and which rules are closed because their
 * counter reached the budget.  Pure bookkeeping: the caller passes the
 * time and the bytes (conntrack's, netd/trail/trail.h), and does the
 * refusing and cutting (netd/daemon/rbudgetglue.c).
 *
 * Counters are kept by the rule's key (policy_rule_key(): its first domain
 * or CIDR and its protocol), so a reload that reorders rules or changes a
 * budget keeps what was counted, and a restart reads them back from the
 * sandbox's state file.
 */
#ifndef NETD_RBUDGET_H
#define NETD_RBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/model/policy.h"
#include "netd/model/policy_dns.h"

struct rbudget_counter {
	char key[POLICY_RULE_KEY_MAX];	/* policy_rule_key() */
	uint16_t rule;		/* its index in the policy of the last rbudget_sync() */
	uint32_t period_s;	/* 3600 or 86400 */
	int64_t window_s;	/* start of the window counted (UTC seconds, a multiple of period_s) */
	uint64_t limit;		/* bytes */
	uint64_t used;		/* bytes of this window */
	bool spent;		/* used >= limit: the rule is closed until the window ends */
	uint64_t exceeded;	/* windows in which it was spent, since netd started */
};

#define RBUDGET_OFF_WORDS (POLICY_MAX_RULES / 64)

struct rbudget_set {
	uint64_t off[RBUDGET_OFF_WORDS];	/* closed rules: bit i = rule i of the policy */
	bool dirty;		/* counted or rolled since the caller last saved it */
	struct policy_dns_masked dns;	/* the caller's: its policy without the closed
					 * rules, for the DNS decision (policy_dns.h) */
	size_t n;
	struct rbudget_counter c[];	/* n of them, in rule order */
};

/* What rbudget_sync() finds in a set it replaces: a counter carried over. */
struct rbudget_saved {
	const char *key;	/* policy_rule_key() */
	uint32_t period_s;
	int64_t window_s;
	uint64_t used;
};

/*
 * rbudget_sync() - make *@set the counters of @p's budgeted rules at
 * @now_s: a counter of the old set (or of @saved[0..@n_saved), a state
 * file's, when *@set is NULL) with the same key and window length is
 * carried over, used bytes and all; others start at 0.  A policy without
 * budgets leaves *@set NULL.  *@set: caller frees with rbudget_free().
 * Return: 0; -ENOMEM (*@set unchanged).
 */
int rbudget_sync(struct rbudget_set **set, const struct policy *p, int64_t now_s,
		const struct rbudget_saved *saved, size_t n_saved);

/* rbudget_free() - NULL-safe. */
void rbudget_free(struct rbudget_set *set);

/* rbudget_window() - the start of the window of @period_s that holds @now_s. */
int64_t rbudget_window(int64_t now_s, uint32_t period_s);

/*
 * rbudget_add() - @bytes of a connection rule @rule allowed, at @now_s (a
 * window that ended first starts again).  Return: 1 if this closed the
 * rule (its counter reached the budget now); 0; -ENOENT (no budget on
 * @rule, or @set NULL).
 */
int rbudget_add(struct rbudget_set *set, uint16_t rule, uint64_t bytes, int64_t now_s);

/*
 * rbudget_roll() - start the windows that ended by @now_s afresh.
 * Return: how many closed rules this opened again.
 */
size_t rbudget_roll(struct rbudget_set *set, int64_t now_s);

/* rbudget_any_closed() - is any rule closed?  NULL @set: no. */
bool rbudget_any_closed(const struct rbudget_set *set);

/* rbudget_closed() - is rule @rule closed by its budget?  NULL @set: no. */
bool rbudget_closed(const struct rbudget_set *set, uint16_t rule);

/* rbudget_of() - the counter of rule @rule, or NULL. */
const struct rbudget_counter *rbudget_of(const struct rbudget_set *set, uint16_t rule);

#endif
