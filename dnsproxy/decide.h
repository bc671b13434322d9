/*
 * decide - the pure query decision: (query, policy) -> allow/deny, and
 * (answer addresses, matching rules) -> the pins to commit.  No I/O.
 */
#ifndef NETD_DNSPROXY_DECIDE_H
#define NETD_DNSPROXY_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "common/pin.h"
#include "dnsproxy/wire.h"

#define DECIDE_MAX_RULES 32	/* rules that may match one qname */

/*
 * The policy as the decision sees it: a narrow view that netd implements
 * over its own policies (netd/model/policy_dns.h), so the proxy never includes
 * netd's headers.  What one rule contributes to a decision:
 */
struct decide_rule {
	bool by_name;		/* a domain rule; a cidr rule never pins through a name */
	bool ech_strip;		/* its names' answers lose their ECH configs: the SNI of
				 * the connections it admits is checked (decide_ech_strip()) */
	uint8_t proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	uint32_t min_ttl_s;	/* pins last at least this (s); 0 = dns.min_ttl only */
	uint16_t max_qname_len;	/* longer names do not match; 0 = no cap */
	const struct port_range *ports;	/* borrowed from the policy */
	size_t n_ports;
	bool gateway;		/* its connections go through netd's API gateway: its
				 * pins are gateway pins (struct pin.gateway) */
	/* dns: { budget, encoded } (dnsproxy/budget.h, docs/dns.md): */
	uint32_t budget_names;	/* distinct names a sandbox may ask below this rule
				 * within budget_window_s; 0 = no budget */
	uint32_t budget_window_s;	/* the sliding window, seconds (1..86400) */
	uint8_t encoded;	/* enum decide_encoded: what the encoded-label score does */
	const char *pattern;	/* the rule's first domain pattern, for the refusal's
				 * EDE text; borrowed like @ports; may be NULL */
};

/* What a rule does with a name the encoded-label score flags (tunnel_score()). */
enum decide_encoded {
	DECIDE_ENCODED_OFF = 0,	/* not scored */
	DECIDE_ENCODED_LOG,	/* scored, logged and counted; answered */
	DECIDE_ENCODED_REFUSE,	/* the rule does not allow it */
};

struct decide_policy_ops {
	/*
	 * match() - the rules that allow @qname (lower-case presentation form,
	 * no trailing dot): indexes, ascending, at most @max stored in @out.
	 * Return: the number that match (may exceed @max; 0 = denied).
	 */
	size_t (*match)(const void *pol, const char *qname, uint16_t *out, size_t max);
	/* rule() - rule @i's view into @out.  Return: 0; -ENOENT (no such rule). */
	int (*rule)(const void *pol, uint16_t i, struct decide_rule *out);
};

struct decide_policy {
	const struct decide_policy_ops *ops;	/* NULL: no policy (everything denied) */
	const void *pol;	/* the implementer's policy, opaque; borrowed */
	const char *name;	/* for the audit log; borrowed like @pol */
};

/* Which first 16 bits of an address c->internal's prefixes cover, per
 * family (bit b: some prefix may hold an address whose first two bytes
 * are b, in network byte order). */
struct decide_internal_ix {
	uint64_t v4[1024], v6[1024];
};

struct decide_ctx {
	const struct decide_policy *policy;
	const struct prefix *internal;	/* never pinned through a name (rebinding):
					 * special_prefixes() + host addresses + pools */
	size_t n_internal;
	const struct decide_internal_ix *internal_ix;	/* decide_internal_index() of
							 * @internal; NULL: scan it all */
	uint32_t min_ttl_s, max_ttl_s;	/* pin timeout = clamp(TTL) */
};

enum decide_verdict {
	DECIDE_ALLOW = 0,
	DECIDE_DENY,		/* not in the policy */
	DECIDE_DENY_NAME,	/* qname has bytes that may not be matched */
	DECIDE_DENY_CLASS,	/* class other than IN */
	DECIDE_DENY_LONG,	/* matched only rules whose max_qname_length it exceeds */
	DECIDE_DENY_BUDGET,	/* matched only rules whose name budget it would exceed
				 * (budget_filter(), not decide_query()) */
	DECIDE_DENY_ENCODED,	/* matched only rules that refuse it as encoded (the same) */
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
 * decide_reason() - the audit reason word (common/reason.h) for a denying
 * verdict @v: bad-name, bad-class, qname-too-long, dns-budget, dns-encoded,
 * else not-in-policy.  Static storage.
 */
const char *decide_reason(enum decide_verdict v);

/*
 * decide_pins() - the pins for an allowed answer: every (address, proto,
 * port, gateway) of every matching rule, timeout = clamp(ttl, min, max)
 * seconds, in milliseconds, raised to the rule's min_ttl if it has one.
 * A rule with gateway gives gateway pins: an address and port that a
 * gateway rule and a plain rule both match gets the gateway pin only, with
 * the longer of the two timeouts (it goes through the gateway).  Addresses
 * decide_never_pin() refuses (the never-pin table, the host's own, the
 * pools, and IPv6 forms embedding any of those) are skipped and counted in
 * @n_rebind.
 * Return: pins stored in @out (at most @max); -ENOBUFS if more were needed.
 */
int decide_pins(const struct decide_ctx *c, const uint16_t *rules, size_t n_rules,
		const struct wire_addr *addrs, size_t n_addrs, struct pin *out, size_t max,
		size_t *n_rebind);

/*
 * decide_ech_strip() - must an answer for a name that matched @rules lose
 * its ECH configurations (wire_ech_strip())?  Yes if any of them says so
 * (decide_rule.ech_strip): a connection to an address one of them pins
 * has its SNI checked, and a client using ECH would hide the name there,
 * so one rule keeping ECH never outvotes another that checks.
 */
bool decide_ech_strip(const struct decide_ctx *c, const uint16_t *rules, size_t n_rules);

/*
 * decide_never_pin() - is @a inside c->internal, or does it embed an IPv4
 * address inside it (special_embedded_v4(): mapped, compatible, NAT64,
 * 6to4, Teredo server and client)?  The test decide_pins() applies; the
 * proxy uses it to log each refused address.
 */
bool decide_never_pin(const struct decide_ctx *c, const struct addr *a);

/*
 * decide_internal_index() - @ix for the @n prefixes at @internal
 * (decide_ctx.internal_ix): decide_never_pin() then scans the list only for
 * an address whose first 16 bits one of them covers (most public answers
 * pass after one bit test, not ~50 prefix compares).  Pure; @ix is
 * valid while @internal does not change.
 */
void decide_internal_index(const struct prefix *internal, size_t n, struct decide_internal_ix *ix);

#endif
