/*
 * pdiff - `netd policy replay`'s core: audit records in, per proposed
 * policy and sandbox what would have been decided differently out.  Pure:
 * parsed JSON records and parsed policies in memory; no file, no daemon, no
 * clock, no logging (netd/cli/cli_replay.c reads the log and prints).
 * docs/policy-workflow.md ("Replaying a policy change").
 *
 * Which proposed policy a record meets: the one named like the record's
 * "policy" (or, with pdiff_opts.any_policy, the one policy given).  Records
 * of policies not proposed are counted per policy, not replayed.
 *
 * What was done is the record's own decision (audit mode's "would_deny"
 * counts as what enforce mode would have done); what would be done is
 * decided here as the daemon decides:
 *   - "dns" records decided by the policy (reason policy, not-in-policy,
 *     qname-too-long, audit-mode): the qname through decide_query() over
 *     policy_dns_view(), the proxy's own decision (policy_match() with its
 *     wildcards and excepts, max_qname_length, names with odd bytes never
 *     matched).  Other reasons (rate limits, upstream failures, local
 *     answers, bad names or classes) are not the policy's and are counted.
 *   - connections ("conn_open", "conn_update", "conn": one connection,
 *     counted once by its 5-tuple; "deny" records of reasons not-pinned,
 *     port-not-allowed and internal: one attempt each), TCP and UDP: a CIDR rule of the proposed
 *     policy for (dst, proto, dport) (policy_cidr_rule()), else nothing for
 *     a never-pin address (common/special.h), else the name that pinned the
 *     address (the record's "domain", or for a record without one the last
 *     name a "dns" record of that sandbox resolved to the address) allowed
 *     by a rule with that protocol and port.
 * Everything the records control is bounded (PDIFF_MAX_*); what did not fit
 * is counted in the report.
 */
#ifndef NETD_PDIFF_H
#define NETD_PDIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "netd/model/policy.h"

#define PDIFF_MAX_GROUPS  4096	/* (recorded policy, sandbox) pairs */
#define PDIFF_MAX_CHANGES 65536	/* distinct changed names and flows, all groups */
#define PDIFF_MAX_FLOWS   65536	/* connections followed to count them once */
#define PDIFF_MAX_ADDRS   65536	/* (sandbox, address) -> last name that resolved to it */
#define PDIFF_MAX_OTHERS  1024	/* policies not proposed, listed with their counts */

struct pdiff_opts {
	const char *sandbox;	/* only records of this sandbox; NULL = every sandbox */
	const char *policy;	/* only records under this policy; NULL = every policy */
	char since[40];		/* records with "ts" >= this (RFC 3339 UTC); "" = all */
	bool any_policy;	/* replay every record selected against the one policy
				 * given, whatever policy it ran under */
};

struct pdiff;

/*
 * pdiff_new() - an empty replay of @pols (@n policies, each name once;
 * borrowed: they must outlive the replay) under @o (copied).
 * @ret: caller frees with pdiff_free().
 * Return: 0; -EINVAL (@n is 0, two policies share a name, or any_policy
 * with @n != 1); -ENOMEM.
 */
int pdiff_new(const struct policy *const *pols, size_t n, const struct pdiff_opts *o,
	      struct pdiff **ret);

/* pdiff_free() - NULL-safe. */
void pdiff_free(struct pdiff *d);

/*
 * pdiff_add() - replay one audit record (borrowed, nothing kept by
 * reference), in log order (oldest first: a connection's name may come from
 * an earlier dns record).  Records of other events, sandboxes or policies,
 * or malformed ones, are counted or ignored, never an error.
 * Return: 1 replayed; 0 not; -ENOMEM.
 */
int pdiff_add(struct pdiff *d, const json_t *rec);

/*
 * pdiff_report() - what changed, as a JSON object (docs/policy-workflow.md
 * shows it): "newly_denied" and "newly_allowed" (totals of records),
 * "groups" (per proposed policy and sandbox, sorted: records replayed and
 * unchanged, and "changes", each with "direction", "kind" (dns or flow),
 * what it is, "count", "first", "last", and why or which rule), and
 * "not_replayed" (policies not proposed, records not decided by a policy,
 * other protocols, unusable records, over the limits).  Sorted throughout:
 * the same records give the same report.
 * Return: a new reference (caller json_decref()s); NULL on out of memory.
 */
json_t *pdiff_report(const struct pdiff *d);

#endif
