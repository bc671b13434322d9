/*
 * policy_index - the matcher index behind policy_match() (netd/policy.h),
 * built by policy_parse() once the rules are in.  Internal to netd/policy*.c.
 */
#ifndef NETD_POLICY_INDEX_H
#define NETD_POLICY_INDEX_H

#include "netd/policy.h"

/*
 * policy_index_build() - index @p's domains and excepts into p->index
 * (owned by @p; policy_free() frees it).  The patterns must be validated
 * and normalized; the index borrows them.  Return: 0; -ENOMEM.
 */
int policy_index_build(struct policy *p);

/* policy_index_free() - free an index from policy_index_build(); NULL-safe. */
void policy_index_free(void *index);

#endif
