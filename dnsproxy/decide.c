/*
 * decide - the pure query decision.  Given a parsed query and a sandbox's
 * policy: may the query go upstream, and through which rules?  Given the
 * addresses an allowed answer carries: which (address, protocol, port)
 * pins to commit, for how long.  No I/O, no logging, no allocation.
 *
 * Names with bytes outside [a-z0-9_-] are never matched (a policy can only
 * name plain host names); addresses inside the "internal" prefixes (the
 * never-pin table of common/special.c plus the host's own addresses and the
 * sandbox pools), or embedding an IPv4 address inside them, are never
 * pinned through a name, so a hostile zone cannot rebind an allowed name to
 * loopback, RFC 1918 space, a metadata service, a tunnel or the host.
 */
#include "dnsproxy/decide.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/reason.h"
#include "common/special.h"

/* rule_get() - rule @i of the policy's view.  Return: 0; -ENOENT. */
static int rule_get(const struct decide_ctx *c, uint16_t i, struct decide_rule *out)
{
	if (!c->policy || !c->policy->ops)
		return -ENOENT;
	return c->policy->ops->rule(c->policy->pol, i, out);
}

uint16_t decide_local(const struct wire_query *q, const char **reason)
{
	uint16_t t = q->qtype;

	/* RFC 6891 6.1.3: before anything else looks at the query. */
	if (q->has_opt && q->edns_version != 0) {
		*reason = reason_dns_name(REASON_DNS_BADVERS);
		return WIRE_RCODE_BADVERS;
	}
	if (t == 0 || t == 65535 || t == WIRE_TYPE_OPT || t == WIRE_TYPE_TKEY ||
	    t == WIRE_TYPE_TSIG || (t >= 128 && t <= 248)) {
		*reason = reason_dns_name(REASON_DNS_QTYPE_META);
		return WIRE_RCODE_FORMERR;
	}
	if (t == WIRE_TYPE_IXFR || t == WIRE_TYPE_AXFR) {
		*reason = reason_dns_name(REASON_DNS_QTYPE_ZONE_TRANSFER);
		return WIRE_RCODE_REFUSED;
	}
	if (t == WIRE_TYPE_MAILB || t == WIRE_TYPE_MAILA || t == WIRE_TYPE_MD ||
	    t == WIRE_TYPE_MF) {
		*reason = reason_dns_name(REASON_DNS_QTYPE_OBSOLETE);
		return WIRE_RCODE_NOTIMP;
	}
	return 0;
}

enum decide_verdict decide_query(const struct decide_ctx *c, const struct wire_query *q,
				 uint16_t *rules, size_t *n_rules)
{
	size_t n, qlen, kept = 0;
	bool capped = false;

	*n_rules = 0;
	/* Only class IN names reach addresses a pin could open. */
	if (q->qclass != WIRE_CLASS_IN)
		return DECIDE_DENY_CLASS;
	if (!q->qname_plain || q->qname_labels == 0)
		return DECIDE_DENY_NAME;
	if (!c->policy || !c->policy->ops)
		return DECIDE_DENY;
	n = c->policy->ops->match(c->policy->pol, q->qname, rules, DECIDE_MAX_RULES);
	if (n == 0)
		return DECIDE_DENY;
	/* More matching rules than we can carry: pin through the first
	 * DECIDE_MAX_RULES (ascending order), never more than allowed. */
	if (n > DECIDE_MAX_RULES)
		n = DECIDE_MAX_RULES;
	/* A rule's max_qname_length caps the names it matches (DNS
	 * tunnelling through a wildcard needs long names). */
	qlen = strlen(q->qname);
	for (size_t i = 0; i < n; i++) {
		struct decide_rule rule;

		if (rule_get(c, rules[i], &rule) < 0 ||
		    (rule.max_qname_len && qlen > rule.max_qname_len)) {
			capped = true;
			continue;
		}
		rules[kept++] = rules[i];
	}
	*n_rules = kept;
	if (kept == 0)
		return capped ? DECIDE_DENY_LONG : DECIDE_DENY;
	return DECIDE_ALLOW;
}

const char *decide_reason(enum decide_verdict v)
{
	switch (v) {
	case DECIDE_DENY_NAME:
		return reason_dns_name(REASON_DNS_BAD_NAME);
	case DECIDE_DENY_CLASS:
		return reason_dns_name(REASON_DNS_BAD_CLASS);
	case DECIDE_DENY_LONG:
		return reason_dns_name(REASON_DNS_QNAME_TOO_LONG);
	case DECIDE_DENY_BUDGET:
		return reason_dns_name(REASON_DNS_BUDGET);
	case DECIDE_DENY_ENCODED:
		return reason_dns_name(REASON_DNS_ENCODED);
	default:
		return reason_dns_name(REASON_DNS_NOT_IN_POLICY);
	}
}

void decide_internal_index(const struct prefix *internal, size_t n, struct decide_internal_ix *ix)
{
	memset(ix, 0, sizeof(*ix));
	for (size_t i = 0; i < n; i++) {
		const struct prefix *p = &internal[i];
		uint64_t *bits = p->addr.family == AF_INET ? ix->v4 : p->addr.family == AF_INET6 ? ix->v6
											: NULL;
		unsigned int plen = p->plen < 16 ? p->plen : 16;
		uint32_t first = (uint32_t)p->addr.a[0] << 8 | p->addr.a[1];
		uint32_t lo = plen ? first & (0xffffu << (16 - plen)) : 0;
		uint32_t hi = lo | (0xffffu >> plen);

		for (uint32_t b = lo; bits && b <= hi; b++)
			bits[b / 64] |= 1ull << (b % 64);
	}
}

static bool in_internal(const struct decide_ctx *c, const struct addr *a)
{
	if (c->internal_ix) {
		const uint64_t *bits = a->family == AF_INET ? c->internal_ix->v4 :
				       a->family == AF_INET6 ? c->internal_ix->v6 : NULL;
		uint32_t first = (uint32_t)a->a[0] << 8 | a->a[1];

		/* No prefix of the list starts with these 16 bits (or family). */
		if (!bits || !(bits[first / 64] >> (first % 64) & 1))
			return false;
	}
	for (size_t i = 0; i < c->n_internal; i++)
		if (prefix_contains(&c->internal[i], a))
			return true;
	return false;
}

bool decide_never_pin(const struct decide_ctx *c, const struct addr *a)
{
	struct special_v4 v[2];
	size_t n;

	if (in_internal(c, a))
		return true;
	/* An IPv6 answer that carries an IPv4 address (mapped, NAT64, 6to4,
	 * Teredo's server and client): that IPv4 address is checked too, so
	 * the host's own IPv4 addresses and pools cannot be reached that way
	 * even where the embedding block itself is not in c->internal. */
	n = special_embedded_v4(a, v);
	for (size_t i = 0; i < n; i++)
		if (in_internal(c, &v[i].v4))
			return true;
	return false;
}

static uint32_t clamp_ttl(const struct decide_ctx *c, uint32_t ttl_s)
{
	uint32_t lo = c->min_ttl_s ? c->min_ttl_s : 1;	/* element timeout > 0 */
	uint32_t hi = c->max_ttl_s > lo ? c->max_ttl_s : lo;

	if (ttl_s < lo)
		ttl_s = lo;
	if (ttl_s > hi)
		ttl_s = hi;
	/* pin.timeout_ms is 32 bits: at most ~49 days. */
	if (ttl_s > UINT32_MAX / 1000)
		ttl_s = UINT32_MAX / 1000;
	return ttl_s;
}

bool decide_ech_strip(const struct decide_ctx *c, const uint16_t *rules, size_t n_rules)
{
	for (size_t i = 0; i < n_rules; i++) {
		struct decide_rule rule;

		if (rule_get(c, rules[i], &rule) == 0 && rule.ech_strip)
			return true;
	}
	return false;
}

/* The gateway pin of @p's (address, proto, port) among @out[0..@n), or NULL. */
static struct pin *gateway_twin(struct pin *out, size_t n, const struct pin *p)
{
	for (size_t j = 0; j < n; j++)
		if (out[j].gateway && out[j].proto == p->proto && out[j].port == p->port &&
		    addr_equal(&out[j].addr, &p->addr))
			return &out[j];
	return NULL;
}

/*
 * An address and port a gateway rule pins goes through the gateway, also
 * where a plain rule names it too: the plain pin of the same (address,
 * proto, port) is left out and its timeout, if longer, given to the
 * gateway pin.  Two elements would lapse apart (a plain rule's min_ttl,
 * say), and between the two the plain one would let the sandbox past the
 * gateway's checks and records.  Return: the pins left, in order.
 */
static size_t fold_gateway(struct pin *out, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct pin *gw = out[i].gateway ? NULL : gateway_twin(out, n, &out[i]);

		if (!gw)
			continue;
		if (out[i].timeout_ms > gw->timeout_ms)
			gw->timeout_ms = out[i].timeout_ms;
		out[i].port = 0;	/* left out below; no pin has port 0 */
	}
	for (size_t i = 0; i < n; i++)
		if (out[i].port)
			out[k++] = out[i];
	return k;
}

int decide_pins(const struct decide_ctx *c, const uint16_t *rules, size_t n_rules,
		const struct wire_addr *addrs, size_t n_addrs, struct pin *out, size_t max,
		size_t *n_rebind)
{
	size_t n = 0;
	bool gateway = false, plain = false;	/* pins of each kind made */

	*n_rebind = 0;
	for (size_t a = 0; a < n_addrs; a++) {
		uint32_t timeout_ms;

		if (addr_len(addrs[a].addr.family) == 0)
			continue;
		if (decide_never_pin(c, &addrs[a].addr)) {
			(*n_rebind)++;
			continue;
		}
		for (size_t r = 0; r < n_rules; r++) {
			struct decide_rule rule_v, *rule = &rule_v;
			uint32_t ttl_s;

			if (rule_get(c, rules[r], rule) < 0)
				continue;
			if (!rule->by_name)	/* a cidr rule never matches a name */
				continue;
			/* A rule's min_ttl raises the floor for clients that
			 * cache past the TTL; it may exceed dns.max_ttl (the
			 * answer's TTLs are still capped at max_ttl). */
			ttl_s = clamp_ttl(c, addrs[a].ttl_s);
			if (rule->min_ttl_s > ttl_s)
				ttl_s = rule->min_ttl_s > UINT32_MAX / 1000 ? UINT32_MAX / 1000
									    : rule->min_ttl_s;
			timeout_ms = ttl_s * 1000u;
			for (size_t p = 0; p < rule->n_ports; p++) {
				const struct port_range *pr = &rule->ports[p];
				bool dup = false;

				/* Domain rules carry single ports (the parser
				 * rejects ranges); never open a range by name. */
				if (pr->lo != pr->hi || pr->lo == 0)
					continue;
				for (size_t k = 0; k < n && !dup; k++) {
					if (out[k].proto == rule->proto && out[k].port == pr->lo &&
					    out[k].gateway == rule->gateway &&
					    addr_equal(&out[k].addr, &addrs[a].addr)) {
						if (timeout_ms > out[k].timeout_ms)
							out[k].timeout_ms = timeout_ms;
						dup = true;
					}
				}
				if (dup)
					continue;
				if (n >= max)
					return -ENOBUFS;
				memset(&out[n], 0, sizeof(out[n]));
				out[n].addr = addrs[a].addr;
				out[n].proto = rule->proto;
				out[n].port = pr->lo;
				out[n].timeout_ms = timeout_ms;
				out[n].gateway = rule->gateway;
				*(rule->gateway ? &gateway : &plain) = true;
				n++;
			}
		}
	}
	/* the usual answer has one kind only: nothing to fold */
	return (int)(gateway && plain ? fold_gateway(out, n) : n);
}
