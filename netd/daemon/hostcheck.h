/*
 * hostcheck - may a sandbox request use this address or interface?  An
 * address a create/attach request names (a chained attachment's, or an
 * IPAM plugin's address and gateway) must not collide with the host:
 * netd's upstream resolver (every uncached query of every sandbox would
 * then be REFUSED), the host's own addresses or its router, loopback; a
 * host_ifname must not be the egress interface or lo.  Pure: the caller
 * gathers the facts (netd/link/link.h) and the registry checks (other
 * sandboxes, netd's pool) stay with the registry (netd/model/sandbox.h).
 */
#ifndef NETD_DAEMON_HOSTCHECK_H
#define NETD_DAEMON_HOSTCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "common/addr.h"

/* What the host has; every pointer borrowed for the call, counts may be 0. */
struct hostcheck_facts {
	const struct prefix *local;	/* the host's own addresses (host-length prefixes) */
	size_t n_local;
	const struct addr *routers;	/* next hops of its default routes */
	size_t n_routers;
	const struct addr *upstreams;	/* netd's upstream resolvers */
	size_t n_upstreams;
	const char *egress_ifname;	/* NULL or "": none */
};

enum hostcheck_role {
	HOSTCHECK_SANDBOX,	/* the sandbox's own address */
	HOSTCHECK_GATEWAY,	/* the host end's address (an IPAM gateway) */
};

/*
 * hostcheck_addr() - may @a be used as @role?  @shared_gateway: @a is
 * already another interface-mode sandbox's gateway (an IPAM range's
 * gateway sits on every one of its host veths), so for HOSTCHECK_GATEWAY
 * being one of the host's addresses is expected, not a collision.
 * @why/@sz: on refusal, the reason ("is netd's upstream resolver").
 * Return: 0; -EINVAL (refused).
 */
int hostcheck_addr(const struct hostcheck_facts *h, const struct addr *a,
		   enum hostcheck_role role, bool shared_gateway, char *why, size_t sz);

/*
 * hostcheck_ifname() - may host interface @ifname be bound to a sandbox
 * (a chained attachment's host_ifname)?  Never lo, never the egress
 * interface.  Return: 0; -EINVAL (@why filled).
 */
int hostcheck_ifname(const struct hostcheck_facts *h, const char *ifname, char *why, size_t sz);

#endif
