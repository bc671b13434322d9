/*
 * grace - the idle grace for expired pins (docs/dns.md, "What is pinned,
 * and what is not"): when a sandbox's connection to an address it
 * reached through a name closes, that exact (address, l4proto, dport) is
 * pinned again for the grace, so a client that reconnects without asking
 * DNS again (connection pools, cached addresses) still gets through for a
 * while.  Pure: which grace a closed flow gets, and which conntrack ids
 * were already served.  The edges are acct.c (closing TCP states,
 * DESTROY), trail.c (attribution by the pin registry, counters) and the daemon (the
 * pin itself, never shortening a longer one).
 *
 * What never gets a grace: an address no name pinned for that sandbox
 * (the pin registry), traffic a CIDR rule allows, a name the sandbox's current
 * policy no longer allows on that proto/port (a reload removed it), and
 * addresses with no connection (only flows the kernel accepted end).
 */
#ifndef NETD_GRACE_H
#define NETD_GRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/model/policy.h"

#define GRACE_SEEN_SLOTS 65536	/* conntrack ids remembered; power of two */

/*
 * grace_timeout_s() - the grace, in seconds, for a closed connection of a
 * sandbox under policy @p to @dst, @proto (IPPROTO_TCP/UDP), @port (host
 * byte order) that the pin registry attributes to @name (lower-case, as pinned).
 * The largest over the domain rules that match @name and allow
 * @proto/@port: a rule's idle_grace if it has one, else @global_s.
 * Return: seconds; 0 = no grace (no such rule, a CIDR rule covers the
 * flow, other protocols, @p or @name NULL, or the grace is off).
 */
uint32_t grace_timeout_s(const struct policy *p, const char *name, const struct addr *dst,
			 uint8_t proto, uint16_t port, uint32_t global_s);

/*
 * grace_gateway() - is the grace pin for @name on @proto/@port under @p a
 * gateway pin (struct pin.gateway)?  Yes if any domain rule that matches
 * @name and allows @proto/@port has gateway: such a connection was steered
 * to the API gateway (gw4/6 wins over pin4/6 in prerouting), and its
 * grace must never open a direct path (pin4/6) to that address.
 */
bool grace_gateway(const struct policy *p, const char *name, uint8_t proto, uint16_t port);

/* grace_policy_wants() - could @p (with @global_s) ever give a grace? */
bool grace_policy_wants(const struct policy *p, uint32_t global_s);

/* Conntrack ids whose close was already handled (the TIME_WAIT entry's
 * DESTROY comes 120 s later and must not start the grace again).
 * Direct-mapped: a collision forgets an older id, which at worst re-pins
 * once more.  Zero-initialise. */
struct grace_seen {
	uint32_t id[GRACE_SEEN_SLOTS];
};

/* grace_seen_mark() - remember @id (0 = no id: ignored). */
void grace_seen_mark(struct grace_seen *s, uint32_t id);

/* grace_seen_has() - was @id marked (and not taken since)? */
bool grace_seen_has(const struct grace_seen *s, uint32_t id);

/* grace_seen_take() - was @id marked?  Forgets it either way. */
bool grace_seen_take(struct grace_seen *s, uint32_t id);

#endif
