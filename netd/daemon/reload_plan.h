/*
 * reload_plan - what a policy reload changes, decided over memory: old
 * state (the registry, the loaded policies, where each pin came from) and
 * the new policy set in, a plan out: which sandboxes change, under which
 * policy (deny-all if its file is gone: fail closed), which of their pins
 * stay, which go, and what the reload reports for each: the added/removed
 * items and the limits that changed (its rates, its rules' budgets,
 * connections, egress_bytes).  The one place a reload's "what changed" is
 * worked out: reload.c logs, audits and returns it as it is.  Pure:
 * no nf_tables, no I/O, no logging.  reload.c commits the plan in one
 * batch and only then swaps the policies in.
 */
#ifndef NETD_DAEMON_RELOAD_PLAN_H
#define NETD_DAEMON_RELOAD_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "netd/model/pinreg.h"
#include "netd/model/policy.h"
#include "netd/model/sandbox.h"

#define RELOAD_MAX_PINS 65536	/* pins kept per sandbox: a pin set's size; the rest re-resolve */

/* One sandbox whose policy changed: its rules, its limits, or both. */
struct reload_change {
	struct sandbox *sb;		/* borrowed from the registry */
	const struct policy *pol;	/* its new policy, owned by the plan's set */
	bool deny_all;			/* its policy file is gone */
	bool rules;			/* its rules changed (digest): re-rendered in the batch;
					 * false: only limits changed, nothing for nf_tables */
	struct pin *keep;		/* pins the new policy still allows (remaining lifetimes) */
	size_t n_keep;
	struct pinreg_cut *cut;		/* pins it no longer allows */
	size_t n_cut;
	json_t *added, *removed;	/* policy items (policyview.h), arrays */
	json_t *limits;			/* what changed in the limits it runs under, an array of
					 * "WHAT: OLD -> NEW" ("bandwidth ingress: 20mbit ->
					 * 4mbit", "budget pypi.org tcp: 1MB/hour -> none") */
};

struct reload_plan {
	struct policy **policies;	/* the new set incl. deny-all stand-ins; owned */
	size_t n_policies;
	struct reload_change *changes;
	size_t n_changes;
};

/* What the plan is made from; all borrowed for the call. */
struct reload_input {
	const struct sandbox_table *sandboxes;
	const struct policy *const *old;	/* the loaded set */
	size_t n_old;
	const struct pinreg *pins;	/* which names pinned what (pinreg_split()) */
	uint64_t now_ms;		/* monotonic, for the pins' remaining lifetimes */
	size_t max_policies;		/* room for the new set with its deny-alls */
};

/*
 * reload_deny_all_new() - a policy that allows nothing, named @name: what a
 * sandbox runs under when its policy file is gone (fail closed).  Marked by
 * a NULL file and a description saying why.  Caller frees with
 * policy_free().  Return: NULL on out of memory or an invalid name.
 */
struct policy *reload_deny_all_new(const char *name);

/*
 * reload_plan_build() - plan a reload to the policies @newp[0..@n_new).
 * Takes ownership of every @newp[i] (on success they are @out->policies;
 * on failure they are freed).  A sandbox is changed iff its policy's digest
 * (policyview.h) differs, its policy is gone, or a limit it runs under
 * changes: its rates (policy_bw_want(): its own rates from create hide its
 * policy's), a rule's budget, limits.connections or limits.egress_bytes.
 * @out: caller frees with reload_plan_free() (also after a failure).
 * @err/@errsz: on failure, why.  Return: 0; -ENOMEM; -E2BIG (more policies
 * than @in->max_policies with the deny-alls, or a pin array too small).
 */
int reload_plan_build(const struct reload_input *in, struct policy **newp, size_t n_new,
		      struct reload_plan *out, char *err, size_t errsz);

/* reload_plan_take_policies() - hand the new set over (the caller frees them); empties @p's. */
struct policy **reload_plan_take_policies(struct reload_plan *p, size_t *n);

/* reload_plan_free() - everything the plan still owns; NULL-safe, idempotent. */
void reload_plan_free(struct reload_plan *p);

#endif
