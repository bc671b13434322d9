/*
 * reason - the audit log's reason words, each defined once: why the DNS
 * proxy decided a query as it did (the "dns" record's "reason" and
 * "would_deny", the EDE text, netd_dns_queries_total's label) and why
 * netd's rules dropped a packet (the "deny" record's "reason",
 * netd_sandbox_denied_total's label, the nflog prefix "netd:REASON").
 * docs/audit.md's two reason tables are checked against these
 * (tests/docs_check.sh).  Pure; in common/ because the proxy writes the
 * DNS ones and netd counts and reads them.
 */
#ifndef NETD_COMMON_REASON_H
#define NETD_COMMON_REASON_H

/* Why a DNS query was decided so; the order is the metrics' order. */
enum reason_dns {
	REASON_DNS_POLICY,		/* allowed by a rule, answered */
	REASON_DNS_NOT_IN_POLICY,
	REASON_DNS_QNAME_TOO_LONG,
	REASON_DNS_BAD_NAME,
	REASON_DNS_BAD_CLASS,
	REASON_DNS_RATE_LIMIT,
	REASON_DNS_OVERLOAD,
	REASON_DNS_PIN_LIMIT,
	REASON_DNS_NAME_PIN_LIMIT,
	REASON_DNS_TOO_MANY_PINS,
	REASON_DNS_PIN_FAILED,
	REASON_DNS_BAD_ANSWER,
	REASON_DNS_ANSWER_LOOP,
	REASON_DNS_ANSWER_TOO_LARGE,
	REASON_DNS_NO_MEMORY,
	REASON_DNS_UPSTREAM_TIMEOUT,
	REASON_DNS_UPSTREAM_FAILURE,
	REASON_DNS_AUDIT_MODE,
	REASON_DNS_BADVERS,
	REASON_DNS_QTYPE_META,
	REASON_DNS_QTYPE_ZONE_TRANSFER,
	REASON_DNS_QTYPE_OBSOLETE,
	REASON_DNS_FORMERR,
	REASON_DNS_NOTIMP,
	REASON_DNS_OTHER,		/* a metrics label only: a word not above */
	N_REASON_DNS
};

/* Why a packet was dropped (a "deny" record); the order is the metrics' order. */
enum reason_deny {
	REASON_DENY_NOT_PINNED,
	REASON_DENY_INTERNAL,
	REASON_DENY_TO_HOST,
	REASON_DENY_SANDBOX_TO_SANDBOX,
	REASON_DENY_SPOOF,
	REASON_DENY_IPV6_DISABLED,
	REASON_DENY_QUOTA,
	REASON_DENY_CONN_LIMIT,
	REASON_DENY_OTHER,		/* a metrics label only: a word not above */
	N_REASON_DENY
};

/* reason_dns_name() - the word for @r ("not-in-policy"); static storage. */
const char *reason_dns_name(enum reason_dns r);

/*
 * reason_dns_of() - the reason whose word is @name; REASON_DNS_OTHER for
 * NULL or a word not in the table (never REASON_DNS_OTHER's own word).
 */
enum reason_dns reason_dns_of(const char *name);

/* reason_deny_name() - the word for @r ("not-pinned"); static storage. */
const char *reason_deny_name(enum reason_deny r);

/* reason_deny_of() - as reason_dns_of(), for the deny reasons. */
enum reason_deny reason_deny_of(const char *name);

#endif
