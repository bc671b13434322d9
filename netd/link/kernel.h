/*
 * link/kernel - what the daemon asks of the host's links, as an ops table,
 * the way netd/fw/kernel.h is fw's nf_tables: named netns, veth pairs and
 * their addresses and routes, interfaces listed, looked up and deleted,
 * the host's addresses and default routes, the forwarding sysctls, link
 * events, microVM taps, bandwidth shaping.  link_kernel_rtnl() is the real
 * one (link.c, tap.c, shape.c, forwarding.c, linkwatch.c: rtnetlink and
 * /proc/sys); a test hands the daemon a stand-in (tests/unit/box_link.c)
 * that asks no kernel and records what it was asked.  Each op has the
 * contract of the function it stands for (netd/link/link.h, tap.h,
 * shape.h, forwarding.h, linkwatch.h); @k is
 * the table it was called through.  Not here: `netd exec` (nsexec.c),
 * which the daemon never runs.
 */
#ifndef NETD_LINK_KERNEL_H
#define NETD_LINK_KERNEL_H

#include <stddef.h>

#include "common/addr.h"
#include "netd/link/link.h"
#include "netd/link/linkwatch.h"
#include "netd/link/shape.h"
#include "netd/link/tap.h"

struct event_base;
struct link_kernel;

struct link_kernel_ops {
	int (*netns_create)(struct link_kernel *k, const char *name);	/* link_netns_create() */
	int (*netns_delete)(struct link_kernel *k, const char *name);	/* link_netns_delete() */
	int (*netns_open)(struct link_kernel *k, const char *path);	/* link_netns_open() */
	int (*netns_other_links)(struct link_kernel *k, int netns_fd, char *first, size_t sz);
	int (*veth_setup)(struct link_kernel *k, const struct link_veth *v);	/* link_veth_setup() */
	int (*names)(struct link_kernel *k, char (**ret)[16]);	/* link_names() */
	int (*del)(struct link_kernel *k, const char *ifname);	/* link_delete() */
	int (*exists)(struct link_kernel *k, const char *ifname);	/* link_exists() */
	int (*default_route_ifname)(struct link_kernel *k, char *buf, size_t sz);
	int (*local_addrs)(struct link_kernel *k, struct prefix **ret);	/* link_local_addrs() */
	int (*default_gateways)(struct link_kernel *k, struct addr *out, size_t max);
	int (*forwarding_enable)(struct link_kernel *k, int ipv6);	/* forwarding_enable() */
	/*
	 * linkwatch_new(): @ops' callbacks run on @base.  A stand-in may
	 * deliver events without a struct linkwatch: *@ret NULL, return 0.
	 */
	int (*watch)(struct link_kernel *k, struct event_base *base,
		     const struct linkwatch_ops *ops, void *ctx, struct linkwatch **ret);
	void (*unwatch)(struct link_kernel *k, struct linkwatch *w);	/* linkwatch_free(); NULL-safe */
	int (*tap_create)(struct link_kernel *k, const struct tap_spec *s);	/* tap_create() */
	int (*tap_delete)(struct link_kernel *k, const char *ifname);	/* tap_delete() */
	int (*tap_configure)(struct link_kernel *k, const char *ifname, const struct prefix *host4,
			     const struct prefix *host6);	/* tap_configure() */
	int (*tap_query)(struct link_kernel *k, const char *ifname, struct tap_info *ret);
	int (*shape_set)(struct link_kernel *k, struct shape_req *req);	/* shape_set() */
	int (*shape_get)(struct link_kernel *k, const char *ifname, const char *ifb,
			 struct shape_stats *out);	/* shape_get() */
	int (*shape_dump)(struct link_kernel *k, shape_dump_fn *fn, void *ctx);	/* shape_dump() */
	int (*shape_survey)(struct link_kernel *k, struct shape_dev **ret);	/* shape_survey() */
};

struct link_kernel {
	const struct link_kernel_ops *ops;
};

/*
 * link_kernel_rtnl() - the host's links through rtnetlink and /proc/sys:
 * every op is the function it is named for.  Stateless; borrowed for the
 * process's lifetime (never freed).
 */
struct link_kernel *link_kernel_rtnl(void);

#endif
