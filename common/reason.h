/*
 * reason - the audit log's reason words, each defined once: why the DNS
 * proxy decided a query as it did (the "dns" record's "reason" and
 * "would_deny", the EDE text, netd_dns_queries_total's label) and why
 * netd's rules dropped a packet (the "deny" record's "reason",
 * netd_sandbox_denied_total's label, the nflog prefix "netd:REASON").
 * And the API gateway's words (netd/gw/, netd/daemon/gwglue.c): why a
 * request was refused or failed (the "http" record's "reason", the
 * refusal's X-Netd-Reason header and JSON "error") and why netd refused a
 * steered connection (the worker's verdict).  docs/audit.md's three
 * reason tables are checked against these (tests/docs_check.sh).  Pure;
 * in common/ because the proxy writes the DNS ones and netd counts and
 * reads them.
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
	REASON_DNS_BUDGET,		/* over the rule's dns.budget of distinct names */
	REASON_DNS_ENCODED,		/* a label the encoded-label score refuses */
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
	/* not-pinned (the kernel's word) to an address whose domain the policy
	 * allows on other ports or protocols only: trail.c decides it */
	REASON_DENY_PORT_NOT_ALLOWED,
	REASON_DENY_OTHER,		/* a metrics label only: a word not above */
	N_REASON_DENY
};

/*
 * Why the API gateway refused or ended a request, or refused a connection
 * (docs/audit.md, "API gateway requests").  The first block is a request's
 * (an "http" record's "reason", X-Netd-Reason), the last four a
 * connection's (netd's verdict to the worker: the connection is closed,
 * no request is read, no record written).
 */
enum reason_gw {
	REASON_GW_HOST_MISMATCH,	/* 421: Host/:authority is not the SNI */
	REASON_GW_METHOD_DENIED,	/* 403 (405 for CONNECT) */
	REASON_GW_PATH_DENIED,		/* 403 */
	REASON_GW_RATE_LIMITED,		/* 429 with Retry-After */
	REASON_GW_CREDENTIAL_MISDIRECTED,	/* 403: a placeholder where it is never replaced */
	REASON_GW_BAD_REQUEST,		/* 400 (431 for an HTTP/2 header list too large) */
	REASON_GW_UPSTREAM_FAILURE,	/* 502: the upstream broke HTTP/2 or a stream */
	REASON_GW_UPSTREAM_UNTRUSTED,	/* 502: its certificate did not verify */
	REASON_GW_UPSTREAM_TLS,		/* 502: its TLS handshake failed otherwise */
	REASON_GW_UPSTREAM_CONNECT,	/* 502: no TCP connection to it */
	REASON_GW_UPSTREAM_TIMEOUT,	/* 504: gateway.connect_timeout passed */
	REASON_GW_UPSTREAM_CLOSED,	/* 502: it closed before its answer was whole */
	REASON_GW_BAD_RESPONSE,		/* 502: its answer was malformed */
	REASON_GW_CLIENT_CLOSED,	/* the sandbox went away mid-request */
	REASON_GW_CONNECTION_CLOSED,	/* the connection ended with the request unanswered */
	REASON_GW_INTERNAL,		/* the gateway itself failed (out of memory, a write) */
	REASON_GW_NOT_A_SANDBOX,	/* connection: the source is no sandbox's */
	REASON_GW_NO_SNI,		/* connection: the ClientHello named no server */
	REASON_GW_SNI_NOT_PINNED,	/* connection: the SNI's own answer did not pin the address */
	REASON_GW_GATEWAY_ERROR,	/* connection: no leaf or rule view (CA, memory) */
	REASON_GW_OTHER,		/* a word not above (reason_gw_of()'s answer) */
	N_REASON_GW
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

/* reason_gw_name() - the word for @r ("host-mismatch"); static storage. */
const char *reason_gw_name(enum reason_gw r);

/* reason_gw_of() - as reason_dns_of(), for the gateway's reasons. */
enum reason_gw reason_gw_of(const char *name);

#endif
