/*
 * fuzz_link - the rtnetlink dump and event parsers on arbitrary bytes: the
 * link, route and address dump callbacks of netd/link/link.c (link_names(),
 * link_netns_other_links(), link_default_route_ifname(),
 * link_default_gateways(), link_local_addrs()), rtnl.c's RTM_NEWLINK
 * callback (an interface's index and MAC, rtnl_link_get()) and linkwatch's
 * RTM_DELLINK callback (netd/link/linkwatch.c).  The input is one recv()
 * buffer, run through nlbuf_walk() (common/nlbuf.c) exactly as rtnl_talk()
 * (through nlbuf_recv_run()) and linkwatch's reader run it.
 *
 * The callbacks are static (they are only ever reached through a netlink
 * socket), so this harness includes the three files rather than widen their
 * interfaces; the library archive supplies only what they call besides.
 *
 * Asserts: nlbuf_walk() says -EBADMSG for every buffer nlbuf_check()
 * rejects, and otherwise 1 (more), 0 (done) or -errno;
 * every name handed out is NUL-terminated within IFNAMSIZ; counts
 * never exceed what was stored; a gateway or local address has the family
 * and length of an IPv4/IPv6 address.
 */
#include "netd/link/link.c"
#include "netd/link/linkwatch.c"
#include "netd/link/rtnl.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned int deleted_n;

static void on_deleted(void *ctx, const char *ifname)
{
	(void)ctx;
	if (strnlen(ifname, IF_NAMESIZE) >= IF_NAMESIZE)
		abort();
	deleted_n++;
}

static void on_lost(void *ctx)
{
	(void)ctx;
}

static void names_check(const struct name_list *l)
{
	size_t stored = l->n < l->max ? l->n : l->max;

	for (size_t i = 0; i < stored; i++)
		if (strnlen(l->names[i], IFNAMSIZ) >= IFNAMSIZ)
			abort();
}

/* One pass of @cb over the buffer, as nl_talk() and on_readable() run it. */
static void run(const void *buf, size_t len, mnl_cb_t cb, void *data)
{
	/* seq 0 and portid 0: libmnl checks neither, as for a multicast event. */
	int r = nlbuf_walk(buf, len, 0, 0, cb, data);

	if ((nlbuf_check(buf, len) < 0 && r != -EBADMSG) || r > 1 || r < -NLBUF_ERRNO_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct linkwatch_ops ops = { .deleted = on_deleted, .lost = on_lost };
	struct linkwatch w = { .ops = &ops };
	struct name_list all = { .grow = true };
	char first[1][IFNAMSIZ];
	struct name_list one = { .names = first, .max = 1, .skip_lo = true };
	struct route_pick pick = { 0 };
	struct addr gws[4];
	struct gw_list gl = { .out = gws, .max = 4 };
	struct addr_list al = { 0 };
	struct rtnl_link link = { 0 };
	uint32_t *copy;

	if (size > RTNL_RECV_SIZE)
		return 0;
	/* Netlink messages are 4-byte aligned in a recv() buffer. */
	copy = malloc(size + 4);
	if (!copy)
		return 0;
	memcpy(copy, data, size);

	/* Only a 6-byte IFLA_ADDRESS is taken (ASan checks the copy). */
	run(copy, size, link_id_cb, &link);

	run(copy, size, name_list_cb, &all);
	if (all.err == 0 && all.n > all.max)
		abort();
	names_check(&all);
	free(all.names);

	run(copy, size, name_list_cb, &one);
	names_check(&one);

	run(copy, size, default_route_cb, &pick);
	if (pick.found && pick.oif <= 0)
		abort();

	run(copy, size, default_gw_cb, &gl);
	if (gl.n > gl.max)
		abort();
	for (size_t i = 0; i < gl.n; i++)
		if (gws[i].family != AF_INET && gws[i].family != AF_INET6)
			abort();

	run(copy, size, local_addr_cb, &al);
	if (al.n > al.cap)
		abort();
	for (size_t i = 0; i < al.n; i++)
		if (al.out[i].plen != addr_len(al.out[i].addr.family) * 8 || al.out[i].plen == 0)
			abort();
	free(al.out);

	deleted_n = 0;
	run(copy, size, msg_cb, &w);

	free(copy);
	return 0;
}
