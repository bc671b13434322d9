/*
 * link - network namespaces, veth pairs, addresses and routes over
 * rtnetlink (libmnl), and the few /proc/sys knobs netd needs.  Never execs
 * ip.  All functions run in the caller's netns unless they take a netns fd.
 */
#ifndef NETD_LINK_H
#define NETD_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"

#define NETNS_RUN_DIR "/run/netns"

/*
 * link_netns_create() - create a named netns like `ip netns add NAME`: a new
 * netns bind-mounted at /run/netns/NAME, so `ip netns exec NAME` sees it.
 * The caller's own netns is unchanged.  Return: 0; -EEXIST; -errno.
 */
int link_netns_create(const char *name);

/*
 * link_netns_delete() - unmount and remove /run/netns/NAME (the netns dies
 * with its last user).  Missing is not an error.  Return: 0; -errno.
 */
int link_netns_delete(const char *name);

/*
 * link_netns_open() - open a netns by path ("/run/netns/NAME",
 * "/proc/PID/ns/net", ...) and check that it is one (nsfs).
 * Return: an O_CLOEXEC fd the caller closes; -ENOENT; -EINVAL (not a netns).
 */
int link_netns_open(const char *path);

/*
 * link_netns_enter() - move the calling thread into the netns @netns_fd
 * (from link_netns_open()) for a moment: sockets made until
 * link_netns_leave() belong to it for their whole life (rtnl.c does the
 * same).  Return: an fd of the thread's own netns, for link_netns_leave();
 * -errno (nothing changed).
 */
int link_netns_enter(int netns_fd);

/*
 * link_netns_leave() - back into @self_fd (link_netns_enter()'s), which is
 * closed.  Failing to return would leave the daemon in a sandbox's netns:
 * that is logged and aborts the process.
 */
void link_netns_leave(int self_fd);

/*
 * link_mntns_own() - was this process given a mount namespace of its own
 * by what started it (`ip netns exec`, `unshare -m`): is its mount
 * namespace other than its parent's?  Then the netns bind mounts it makes
 * under /run/netns are seen by nobody else: not by `netd exec`, `ip
 * netns`, nor a container runtime.  (Not PID 1's: a whole host session, or
 * a container, may have its own, and that is fine.)  Return: true if the
 * two differ; false if they are the same or either cannot be read (no
 * parent: a container's first process).
 */
bool link_mntns_own(void);

struct link_veth {
	const char *host_ifname;	/* created in the caller's netns */
	const char *peer_ifname;	/* created in @netns_fd, e.g. "eth0" */
	int netns_fd;
	/*
	 * @peer_here: the peer stays in the caller's netns, down, without
	 * addresses or routes, for someone else to move (Docker's driver
	 * protocol: it moves the interface its driver names into the
	 * container); @netns_fd unused.  The peer's addresses still tell the
	 * host end's point-to-point route and neighbour.  @peer_mac: the peer's
	 * MAC (NULL: the kernel's choice; required with @peer_here, so the
	 * neighbour entry matches).
	 */
	bool peer_here;
	const uint8_t *peer_mac;
	struct prefix host4, peer4;	/* e.g. 10.87.0.1/30 and 10.87.0.2/30; family 0 = none */
	struct prefix host6, peer6;	/* e.g. fd00:87::1/64, fd00:87::2/64; family 0 = none */
};
/* (Here a prefix is an interface address: host bits are set, unlike the
 * CIDR prefixes prefix_parse() returns.  Routes need both host and peer of a
 * family.  A host prefix of /32 or /128 is point-to-point: its far end is
 * the peer's address, which the host netns then routes to this veth.) */

/*
 * link_veth_setup() - create the veth pair, move the peer into the netns,
 * put the addresses on both ends (IPv6 without DAD), bring up both and the
 * netns's lo, and add default routes in the netns via the host end's
 * addresses.  With @v->peer_here only the host end is configured and up
 * (its addresses, the neighbour entry for the peer's); the peer is left
 * down in the caller's netns.  On failure nothing is left behind.
 * Return: 0; -EEXIST (an interface of that name exists); -errno.
 */
int link_veth_setup(const struct link_veth *v);

/*
 * link_netns_other_links() - how many interfaces other than loopback the
 * netns @netns_fd has; @first/@sz receives the first one's name.  netd
 * attaches only namespaces where its veth will be the only way out.
 * Return: count (0 = only lo); -errno.
 */
int link_netns_other_links(int netns_fd, char *first, size_t sz);

/*
 * link_names() - the names of every interface in the caller's netns, however
 * many there are.  @ret: a malloc()ed array of that many names, caller frees
 * with free() (NULL if none).  Return: count; -errno (nothing in *@ret).
 */
int link_names(char (**ret)[16]);

/*
 * link_delete() - delete interface @ifname in the caller's netns (a veth
 * takes its peer with it).  Missing is not an error.  Return: 0; -errno.
 */
int link_delete(const char *ifname);

/*
 * link_exists() - 1 if @ifname exists in the caller's netns, 0 if not, -errno.
 */
int link_exists(const char *ifname);

/*
 * link_default_route_ifname() - name of the interface of the IPv4 default
 * route in the caller's netns into @buf (>= 16 bytes).
 * Return: 0; -ENOENT (no default route); -errno.
 */
int link_default_route_ifname(char *buf, size_t sz);

/*
 * link_local_addrs() - every address configured on any interface of the
 * caller's netns, as host-length prefixes, for the "never pin the host's own
 * addresses" list; however many there are (each sandbox's host veth adds
 * its own).  @ret: a malloc()ed array, caller frees with free() (NULL if
 * none).  A partial list is never returned: Return: count; -errno.
 */
int link_local_addrs(struct prefix **ret);

/*
 * link_default_gateways() - the gateways (next hops) of the default routes,
 * IPv4 and IPv6, of every table in the caller's netns, into @out (at most
 * @max; the rest are left out).  Return: count stored; -errno.
 */
int link_default_gateways(struct addr *out, size_t max);


#endif
