/*
 * decide - the pure query decision: (query, policy) -> allow/deny, and
 * (answer addresses, matching rules) -> the pins to commit.  No I/O.
 */
#ifndef NETD_DNSPROXY_DECIDE_H
#define NETD_DNSPROXY_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "dnsproxy/wire.h"
#include "netd/fw.h"
#include "netd/policy.h"

#define DECIDE_MAX_RULES 32	/* rules that may match one qname */

struct decide_ctx {
	const struct policy *policy;
	const struct prefix *internal;	/* never pinned through a name (rebinding) */
	size_t n_internal;
	uint32_t min_ttl_s, max_ttl_s;	/* pin timeout = clamp(TTL) */
};

enum decide_verdict {
	DECIDE_ALLOW = 0,
	DECIDE_DENY,		/* not in the policy */
	DECIDE_DENY_NAME,	/* qname has bytes that may not be matched */
	DECIDE_DENY_CLASS,	/* class other than IN */
	DECIDE_DENY_LONG,	/* matched only rules whose max_qname_length it exceeds */
};

/*
 * decide_local() - must @q be answered by netd itself?  Checked before the
 * cache and the policy, for every name: such a query is never forwarded
 * nor served from the cache.
 *   EDNS version other than 0 (the only one netd implements): BADVERS
 *     (RFC 6891 6.1.3; the reply's OPT says version 0).
 *   qtype 0 and 65535 (reserved, RFC 6895 3.1), the meta-types OPT (RFC
 *     6891 6.1.1: never forwarded), TKEY, TSIG and the unassigned meta
 *     range 128-248 (RFC 6895 3.1: only meaningful in a transaction, not
 *     data to look up): FORMERR.
 *   IXFR, AXFR (zone transfers, RFC 1995, RFC 5936; a forwarder serves
 *     no zone, and a server may refuse a transfer): REFUSED.
 *   MAILB, MAILA, MD, MF (obsolete, RFC 1035 3.2.3, 3.3.4, 3.3.5; RFC
 *     973): NOTIMP, "the name server does not support the requested kind
 *     of query" (RFC 1035 4.1.1).
 * Every other qtype (data types, unknown ones (RFC 3597), ANY (RFC 8482 is
 * the upstream's)) goes on to the policy.
 * @reason: set to the audit reason when the return is not 0.
 * Return: 0 (go on), or the RCODE to answer with (maybe extended).
 */
uint16_t decide_local(const struct wire_query *q, const char **reason);

/*
 * decide_query() - may @q be forwarded?  @rules/@n_rules: on ALLOW, the
 * indexes of the policy rules that match (at most DECIDE_MAX_RULES), less
 * those whose max_qname_length @q's name exceeds.
 * Return: the verdict.
 */
enum decide_verdict decide_query(const struct decide_ctx *c, const struct wire_query *q,
				 uint16_t *rules, size_t *n_rules);

/*
 * decide_pins() - the pins for an allowed answer: every (address, proto,
 * port) of every matching rule, timeout = clamp(ttl, min, max) seconds, in
 * milliseconds, raised to the rule's min_ttl if it has one.  Addresses inside c->internal (loopback, RFC 1918,
 * link-local, metadata, CGNAT, the host's own, IPv4-mapped/embedded forms)
 * are skipped and counted in @n_rebind.
 * Return: pins stored in @out (at most @max); -ENOBUFS if more were needed.
 */
int decide_pins(const struct decide_ctx *c, const uint16_t *rules, size_t n_rules,
		const struct wire_addr *addrs, size_t n_addrs, struct fw_pin *out, size_t max,
		size_t *n_rebind);

#define DECIDE_INTERNAL_DEFAULT_N 23	/* prefixes decide_internal_default() has */

/*
 * decide_internal_default() - the built-in "points inside" prefixes (both
 * families).  @out/@max; Return: count stored (all of them if @max suffices).
 */
size_t decide_internal_default(struct prefix *out, size_t max);

#endif
