/*
 * ctcut - cut live connections: delete conntrack entries (ctnetlink over
 * libmnl, in the caller's netns) whose original direction goes from one
 * sandbox address to an address/protocol/port a policy reload removed.
 * With the entry gone the next packet of the flow is "new" and meets the
 * sandbox's policy chain, which no longer accepts it: the connection stops.
 * Edge module: no logging (the caller logs the count).
 */
#ifndef NETD_CTCUT_H
#define NETD_CTCUT_H

#include <stddef.h>

#include "common/addr.h"
#include "netd/model/pinreg.h"

#define CTCUT_MAX 4096	/* entries deleted per call; more are left alone */

/*
 * ctcut_run() - delete every conntrack entry whose original tuple is
 * @src -> cut[i].addr, protocol cut[i].proto, destination port cut[i].port,
 * for any i < @n.  One dump, then one delete per matching entry; an entry
 * that vanished meanwhile is not an error.
 * Return: number of entries deleted; -EBUSY (the kernel refused to delete
 * some: offloaded to a flowtable, and its ctnetlink predates "netfilter:
 * ctnetlink: Support offloaded conntrack entry deletion", Linux 6.4; the
 * others were deleted); -errno (dump failed: nothing cut).
 */
int ctcut_run(const struct addr *src, const struct pinreg_cut *cut, size_t n);

/*
 * ctcut_source() - delete every conntrack entry whose original source is
 * @src (any protocol, any destination): a deleted sandbox's flows must not
 * carry over to the next sandbox given the same address.
 * Return: number of entries deleted (at most CTCUT_MAX); -EBUSY as for
 * ctcut_run(); -errno.
 */
int ctcut_source(const struct addr *src);

#endif
