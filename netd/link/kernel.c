/*
 * link/kernel.c - the real links behind the ops table (netd/link/kernel.h):
 * each op calls the function it is named for.  No state of its own.
 */
#include "netd/link/kernel.h"

#include "netd/link/forwarding.h"

static int rt_netns_create(struct link_kernel *k, const char *name)
{
	return link_netns_create(name);
}

static int rt_netns_delete(struct link_kernel *k, const char *name)
{
	return link_netns_delete(name);
}

static int rt_netns_open(struct link_kernel *k, const char *path)
{
	return link_netns_open(path);
}

static int rt_netns_other_links(struct link_kernel *k, int netns_fd, char *first, size_t sz)
{
	return link_netns_other_links(netns_fd, first, sz);
}

static int rt_veth_setup(struct link_kernel *k, const struct link_veth *v)
{
	return link_veth_setup(v);
}

static int rt_names(struct link_kernel *k, char (**ret)[16])
{
	return link_names(ret);
}

static int rt_del(struct link_kernel *k, const char *ifname)
{
	return link_delete(ifname);
}

static int rt_exists(struct link_kernel *k, const char *ifname)
{
	return link_exists(ifname);
}

static int rt_default_route_ifname(struct link_kernel *k, char *buf, size_t sz)
{
	return link_default_route_ifname(buf, sz);
}

static int rt_local_addrs(struct link_kernel *k, struct prefix **ret)
{
	return link_local_addrs(ret);
}

static int rt_default_gateways(struct link_kernel *k, struct addr *out, size_t max)
{
	return link_default_gateways(out, max);
}

static int rt_forwarding_enable(struct link_kernel *k, int ipv6)
{
	return forwarding_enable(ipv6);
}

static int rt_watch(struct link_kernel *k, struct event_base *base,
		    const struct linkwatch_ops *ops, void *ctx, struct linkwatch **ret)
{
	return linkwatch_new(base, ops, ctx, ret);
}

static void rt_unwatch(struct link_kernel *k, struct linkwatch *w)
{
	linkwatch_free(w);
}

static int rt_tap_create(struct link_kernel *k, const struct tap_spec *s)
{
	return tap_create(s);
}

static int rt_tap_delete(struct link_kernel *k, const char *ifname)
{
	return tap_delete(ifname);
}

static int rt_tap_configure(struct link_kernel *k, const char *ifname, const struct prefix *host4,
			    const struct prefix *host6)
{
	return tap_configure(ifname, host4, host6);
}

static int rt_tap_query(struct link_kernel *k, const char *ifname, struct tap_info *ret)
{
	return tap_query(ifname, ret);
}

static int rt_shape_set(struct link_kernel *k, struct shape_req *req)
{
	return shape_set(req);
}

static int rt_shape_get(struct link_kernel *k, const char *ifname, const char *ifb,
			struct shape_stats *out)
{
	return shape_get(ifname, ifb, out);
}

static int rt_shape_dump(struct link_kernel *k, shape_dump_fn *fn, void *ctx)
{
	return shape_dump(fn, ctx);
}

static int rt_shape_survey(struct link_kernel *k, struct shape_dev **ret)
{
	return shape_survey(ret);
}

static const struct link_kernel_ops rtnl_ops = {
	.netns_create = rt_netns_create,
	.netns_delete = rt_netns_delete,
	.netns_open = rt_netns_open,
	.netns_other_links = rt_netns_other_links,
	.veth_setup = rt_veth_setup,
	.names = rt_names,
	.del = rt_del,
	.exists = rt_exists,
	.default_route_ifname = rt_default_route_ifname,
	.local_addrs = rt_local_addrs,
	.default_gateways = rt_default_gateways,
	.forwarding_enable = rt_forwarding_enable,
	.watch = rt_watch,
	.unwatch = rt_unwatch,
	.tap_create = rt_tap_create,
	.tap_delete = rt_tap_delete,
	.tap_configure = rt_tap_configure,
	.tap_query = rt_tap_query,
	.shape_set = rt_shape_set,
	.shape_get = rt_shape_get,
	.shape_dump = rt_shape_dump,
	.shape_survey = rt_shape_survey,
};

struct link_kernel *link_kernel_rtnl(void)
{
	static struct link_kernel rtnl = { .ops = &rtnl_ops };

	return &rtnl;
}
