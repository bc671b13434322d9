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

#endif
