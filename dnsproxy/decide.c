/*
 * decide - the pure query decision.  Given a parsed query and a sandbox's
 * policy: may the query go upstream, and through which rules?  Given the
 * addresses an allowed answer carries: which (address, protocol, port)
 * pins to commit, for how long.  No I/O, no logging, no allocation.
 *
 * Names with bytes outside [a-z0-9_-] are never matched (a policy can only
 * name plain host names); addresses inside the "internal" prefixes are
 * never pinned through a name, so a hostile zone cannot rebind an allowed
 * name to loopback, RFC 1918 space, the metadata service or the host.
 */
#include "dnsproxy/decide.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

uint16_t decide_local(const struct wire_query *q, const char **reason)
{
	uint16_t t = q->qtype;

	/* RFC 6891 6.1.3: before anything else looks at the query. */
	if (q->has_opt && q->edns_version != 0) {
		*reason = "badvers";
		return WIRE_RCODE_BADVERS;
	}
	if (t == 0 || t == 65535 || t == WIRE_TYPE_OPT || t == WIRE_TYPE_TKEY ||
	    t == WIRE_TYPE_TSIG || (t >= 128 && t <= 248)) {
		*reason = "qtype-meta";
		return WIRE_RCODE_FORMERR;
	}
	if (t == WIRE_TYPE_IXFR || t == WIRE_TYPE_AXFR) {
		*reason = "qtype-zone-transfer";
		return WIRE_RCODE_REFUSED;
	}
	if (t == WIRE_TYPE_MAILB || t == WIRE_TYPE_MAILA || t == WIRE_TYPE_MD ||
	    t == WIRE_TYPE_MF) {
		*reason = "qtype-obsolete";
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
	if (!c->policy)
		return DECIDE_DENY;
	n = policy_match(c->policy, q->qname, rules, DECIDE_MAX_RULES);
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
		const struct policy_rule *rule = rules[i] < c->policy->n_rules ?
			&c->policy->rules[rules[i]] : NULL;

		if (!rule || (rule->max_qname_len && qlen > rule->max_qname_len)) {
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

static bool is_internal(const struct decide_ctx *c, const struct addr *a)
{
	for (size_t i = 0; i < c->n_internal; i++)
		if (prefix_contains(&c->internal[i], a))
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
	/* fw_pin.timeout_ms is 32 bits: at most ~49 days. */
	if (ttl_s > UINT32_MAX / 1000)
		ttl_s = UINT32_MAX / 1000;
	return ttl_s;
}

int decide_pins(const struct decide_ctx *c, const uint16_t *rules, size_t n_rules,
		const struct wire_addr *addrs, size_t n_addrs, struct fw_pin *out, size_t max,
		size_t *n_rebind)
{
	size_t n = 0;

	*n_rebind = 0;
	for (size_t a = 0; a < n_addrs; a++) {
		uint32_t timeout_ms;

		if (addr_len(addrs[a].addr.family) == 0)
			continue;
		if (is_internal(c, &addrs[a].addr)) {
			(*n_rebind)++;
			continue;
		}
		for (size_t r = 0; r < n_rules; r++) {
			const struct policy_rule *rule;
			uint32_t ttl_s;

			if (!c->policy || rules[r] >= c->policy->n_rules)
				continue;
			rule = &c->policy->rules[rules[r]];
			if (rule->n_domains == 0)	/* a cidr rule never matches a name */
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
				n++;
			}
		}
	}
	return (int)n;
}

/* Where a name must never point (IANA special-purpose registries, RFC 6890). */
static const char *const internal_default[] = {
	"0.0.0.0/8",		/* "this network", RFC 791 */
	"10.0.0.0/8",		/* RFC 1918 */
	"100.64.0.0/10",	/* CGNAT, RFC 6598 */
	"127.0.0.0/8",		/* loopback */
	"169.254.0.0/16",	/* link-local, cloud metadata */
	"172.16.0.0/12",	/* RFC 1918 */
	"192.0.0.0/24",		/* IETF protocol assignments */
	"192.168.0.0/16",	/* RFC 1918 */
	"198.18.0.0/15",	/* benchmarking, RFC 2544 */
	"224.0.0.0/4",		/* multicast */
	"240.0.0.0/4",		/* reserved */
	"255.255.255.255/32",	/* limited broadcast */
	"::/96",		/* unspecified, loopback and IPv4-compatible (RFC 4291 2.5.5.1) */
	"::ffff:0:0/96",	/* IPv4-mapped */
	"::ffff:0:0:0/96",	/* IPv4-translated (SIIT, RFC 2765) */
	"64:ff9b::/96",		/* NAT64, RFC 6052: embeds IPv4 */
	"64:ff9b:1::/48",	/* local-use NAT64, RFC 8215 */
	"100::/64",		/* discard-only, RFC 6666 */
	"2002::/16",		/* 6to4: embeds IPv4 */
	"fc00::/7",		/* unique local */
	"fe80::/10",		/* link-local */
	"fec0::/10",		/* site-local, deprecated (RFC 3879) but still routed by some */
	"ff00::/8",		/* multicast */
};

size_t decide_internal_default(struct prefix *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(internal_default) / sizeof(internal_default[0]); i++) {
		if (n >= max)
			break;
		/* Constant, valid text: prefix_parse cannot fail here. */
		if (prefix_parse(internal_default[i], &out[n]) == 0)
			n++;
	}
	return n;
}
