/*
 * policy_dns - netd's policies as the DNS proxy's decision sees them: the
 * narrow struct decide_policy view (dnsproxy/decide.h) over a struct
 * policy, so dnsproxy/ never includes netd/model/policy.h.  Pure.
 */
#ifndef NETD_POLICY_DNS_H
#define NETD_POLICY_DNS_H

#include "dnsproxy/decide.h"
#include "netd/model/policy.h"

/*
 * policy_dns_view() - the decision's view of @p (NULL: a view with no
 * policy, which denies everything).  Borrows @p: valid while @p is.
 */
struct decide_policy policy_dns_view(const struct policy *p);

/* A policy with some rules left out (a sandbox's rules whose budget is spent). */
struct policy_dns_masked {
	const struct policy *p;
	const uint64_t *off;	/* POLICY_MAX_RULES bits: rule i out if off[i / 64] bit i % 64 */
};

/*
 * policy_dns_view_masked() - the decision's view of @m->p without the
 * rules @m->off leaves out: a name only they allow is denied, and no
 * answer pins for them.  Borrows @m (and what it points to): valid while
 * they are.
 */
struct decide_policy policy_dns_view_masked(const struct policy_dns_masked *m);

#endif
