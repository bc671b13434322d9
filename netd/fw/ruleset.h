/*
 * ruleset - pure helpers for fw: turn policy CIDR rules and prefix lists
 * into the disjoint ranges that nf_tables interval sets demand.  The kernel
 * rejects overlapping intervals (rbtree: -EEXIST, pipapo: -ENOTEMPTY), so
 * "10.0.0.0/8 port 443" next to "10.1.0.0/16 ports 443-444" must be cut
 * into pieces first.  No I/O, no logging, no libnftnl.
 */
#ifndef NETD_RULESET_H
#define NETD_RULESET_H

#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/model/policy.h"

/* Hard limit on interval elements per family (cidr rules in and out, merged prefixes out). */
#define RULESET_ELEMS_MAX 4096

/* An inclusive address range; both ends network byte order, 4 or 16 bytes used. */
struct ruleset_range {
	uint8_t lo[16], hi[16];
};

/* An inclusive (address range x protocol x port range) box. */
struct ruleset_box {
	uint8_t lo[16], hi[16];	/* network byte order */
	uint8_t proto;		/* IPPROTO_TCP / IPPROTO_UDP */
	uint16_t port_lo, port_hi;	/* host byte order, inclusive */
};

/*
 * ruleset_merge_prefixes() - the prefixes of @family in @p[0..@n) as sorted,
 * disjoint, non-adjacent ranges (overlapping or touching prefixes merged).
 * Other families are skipped.
 * @p, @n: any number of prefixes (the host's own addresses, one per sandbox
 * veth and more, merge into few ranges).
 * @out, @max: destination.  Return: number of ranges; -E2BIG if more than
 * @max ranges would be needed; -ENOMEM.
 */
int ruleset_merge_prefixes(int family, const struct prefix *p, size_t n,
			   struct ruleset_range *out, size_t max);

/*
 * ruleset_cidr_boxes() - every cidr rule of @pol (domain rules skipped) for
 * addresses of @family, as pairwise disjoint boxes covering exactly the
 * union of (cidr x proto x ports) of all rules; touching boxes with the
 * same proto and port range are merged.  A cidr rule without ports covers
 * ports 0-65535.
 * @ret: on success a malloc()ed array (NULL when the count is 0); caller
 * frees with free().  Sorted by (proto, port_lo, port_hi, lo).
 * Return: number of boxes; -E2BIG (more than RULESET_ELEMS_MAX in or out);
 * -EINVAL (port range lo > hi); -ENOMEM.
 */
int ruleset_cidr_boxes(const struct policy *pol, int family, struct ruleset_box **ret);

#endif
