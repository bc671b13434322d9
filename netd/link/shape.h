/*
 * shape - a sandbox's bandwidth limits on its host interface (a veth's
 * host end, a microVM's tap, a chained attachment's bridge port), through
 * rtnetlink (rtnl.c), never tc(8).  The messages are tc.c's.
 *
 *   to the sandbox (its ingress, downloads): HTB as the root qdisc of the
 *     host interface, whose egress is what the sandbox receives;
 *   from the sandbox (its egress, uploads): what arrives on the host
 *     interface is redirected at its ingress (u32 + mirred) to an IFB
 *     device of the sandbox's own ("ndi" + its slot), whose egress has the
 *     same HTB shaper; the packet then continues into the host's stack as
 *     if it had just arrived on the host interface (nftables sees that
 *     interface as its iif).
 *
 * Shaped, not policed: packets over the rate wait in a queue of about
 * 100 ms (tc.h) rather than being dropped at once, so TCP settles at the
 * rate.  (A policer, act_police, would drop at the rate and needs a burst
 * sized to the path's RTT; not every kernel has it, and this machine's
 * has not.)  A direction without a limit has nothing: no qdisc, no
 * filter, no IFB, so an unlimited sandbox pays nothing per packet.
 * Edge module: talks to the kernel, never logs.
 */
#ifndef NETD_LINK_SHAPE_H
#define NETD_LINK_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/link/tc.h"

#define SHAPE_IFB_PREFIX "ndi"	/* + 5 hex digits of the slot */

/*
 * shape_ifb_name() - the IFB of the sandbox in slot @slot into @buf
 * (>= 16 bytes): "ndi" and the slot in 5 hex digits.  Return: 0; -EINVAL.
 */
int shape_ifb_name(uint32_t slot, char *buf, size_t sz);

/* shape_is_ifb_name() - does @name look like one shape_ifb_name() makes? */
bool shape_is_ifb_name(const char *name);

struct shape_req {
	const char *ifname;	/* the sandbox's host interface */
	const char *ifb;	/* its IFB (shape_ifb_name()) */
	uint64_t ingress_bps;	/* to the sandbox; 0: none */
	uint64_t egress_bps;	/* from the sandbox; 0: none */
	/* Set by shape_set(): the interfaces' indexes (0: none), for shape_dump()'s callers. */
	int ifindex, ifb_index;
};

/*
 * shape_set() - make @req->ifname's shaping what @req says, in its netns
 * (the caller's): a direction with a rate gets its shaper, or keeps it
 * with the new rate and queue (a live flow goes on: the class and the
 * queue are changed in place); a direction without one loses it (the
 * root qdisc, or the ingress qdisc with its filter and then the IFB).
 * Idempotent: running it again after a restart changes nothing but what
 * differs.  Order: the IFB's shaper before the redirect to it.
 * Return: 0; -ENODEV (no @ifname); the kernel's -errno (what was done
 * before the failing step stays: run it again, or with both rates 0).
 */
int shape_set(struct shape_req *req);

/* The counters of a sandbox's shapers. */
struct shape_stats {
	bool has_ingress, has_egress;	/* an HTB root on the interface / on its IFB */
	struct tc_qstats ingress, egress;
};

/*
 * shape_get() - the HTB roots of @ifname (to the sandbox) and @ifb (from
 * it), if there are: bytes sent on, drops, backlog and the kernel's rate
 * estimate.  Return: 0 (@out filled; a missing device or qdisc is
 * has_* false); -errno.
 */
int shape_get(const char *ifname, const char *ifb, struct shape_stats *out);

/* One device of the netns, as shape_survey() found it. */
struct shape_dev {
	char name[16];
	int ifindex;
	bool htb_root;		/* netd's HTB (1:) is its root qdisc */
	bool ingress;		/* it has an ingress qdisc */
};

/*
 * shape_survey() - every device of the caller's netns with what shaping
 * it has, in two dumps (links, qdiscs) whatever the number of sandboxes:
 * a restart checks each shaped sandbox against it instead of asking the
 * kernel a dozen questions per sandbox.  @ret: a malloc()ed array sorted
 * by name (strcmp), caller frees; NULL if none.  Return: count; -errno.
 */
int shape_survey(struct shape_dev **ret);

/* shape_dump()'s callback: one qdisc (its device, handle, kind, counters:
 * bytes, packets, drops, backlog), @q borrowed for the call; @ctx is shape_dump()'s. */
typedef void shape_dump_fn(void *ctx, const struct tc_qstats *q);

/*
 * shape_dump() - @fn for every root HTB qdisc of handle 1: in the
 * caller's netns (one RTM_GETQDISC dump), for the metrics.  A dump the
 * kernel marks interrupted is asked again, so @fn may see a qdisc twice:
 * keep the last.  Return: how many; -errno.
 */
int shape_dump(shape_dump_fn *fn, void *ctx);

#endif
