/*
 * reason - the audit log's reason words (reason.h): one table each, indexed
 * by the enum, so a word and its enum cannot drift apart.  Pure.
 */
#include "common/reason.h"

#include <stddef.h>
#include <string.h>

static const char *const dns_names[N_REASON_DNS] = {
	[REASON_DNS_POLICY] = "policy",
	[REASON_DNS_NOT_IN_POLICY] = "not-in-policy",
	[REASON_DNS_QNAME_TOO_LONG] = "qname-too-long",
	[REASON_DNS_BAD_NAME] = "bad-name",
	[REASON_DNS_BAD_CLASS] = "bad-class",
	[REASON_DNS_RATE_LIMIT] = "rate-limit",
	[REASON_DNS_OVERLOAD] = "overload",
	[REASON_DNS_PIN_LIMIT] = "pin-limit",
	[REASON_DNS_NAME_PIN_LIMIT] = "name-pin-limit",
	[REASON_DNS_TOO_MANY_PINS] = "too-many-pins",
	[REASON_DNS_PIN_FAILED] = "pin-failed",
	[REASON_DNS_BAD_ANSWER] = "bad-answer",
	[REASON_DNS_ANSWER_LOOP] = "answer-loop",
	[REASON_DNS_ANSWER_TOO_LARGE] = "answer-too-large",
	[REASON_DNS_NO_MEMORY] = "no-memory",
	[REASON_DNS_UPSTREAM_TIMEOUT] = "upstream-timeout",
	[REASON_DNS_UPSTREAM_FAILURE] = "upstream-failure",
	[REASON_DNS_AUDIT_MODE] = "audit-mode",
	[REASON_DNS_BADVERS] = "badvers",
	[REASON_DNS_QTYPE_META] = "qtype-meta",
	[REASON_DNS_QTYPE_ZONE_TRANSFER] = "qtype-zone-transfer",
	[REASON_DNS_QTYPE_OBSOLETE] = "qtype-obsolete",
	[REASON_DNS_FORMERR] = "formerr",
	[REASON_DNS_NOTIMP] = "notimp",
	[REASON_DNS_BUDGET] = "dns-budget",
	[REASON_DNS_ENCODED] = "dns-encoded",
	[REASON_DNS_OTHER] = "other",
};

static const char *const deny_names[N_REASON_DENY] = {
	[REASON_DENY_NOT_PINNED] = "not-pinned",
	[REASON_DENY_INTERNAL] = "internal",
	[REASON_DENY_TO_HOST] = "to-host",
	[REASON_DENY_SANDBOX_TO_SANDBOX] = "sandbox-to-sandbox",
	[REASON_DENY_SPOOF] = "spoof",
	[REASON_DENY_IPV6_DISABLED] = "ipv6-disabled",
	[REASON_DENY_QUOTA] = "quota",
	[REASON_DENY_CONN_LIMIT] = "conn-limit",
	[REASON_DENY_PORT_NOT_ALLOWED] = "port-not-allowed",
	[REASON_DENY_OTHER] = "other",
};

static const char *const gw_names[N_REASON_GW] = {
	[REASON_GW_HOST_MISMATCH] = "host-mismatch",
	[REASON_GW_METHOD_DENIED] = "method-denied",
	[REASON_GW_PATH_DENIED] = "path-denied",
	[REASON_GW_RATE_LIMITED] = "rate-limited",
	[REASON_GW_CREDENTIAL_MISDIRECTED] = "credential-misdirected",
	[REASON_GW_BAD_REQUEST] = "bad-request",
	[REASON_GW_UPSTREAM_FAILURE] = "upstream-failure",
	[REASON_GW_UPSTREAM_UNTRUSTED] = "upstream-untrusted",
	[REASON_GW_UPSTREAM_TLS] = "upstream-tls",
	[REASON_GW_UPSTREAM_CONNECT] = "upstream-connect",
	[REASON_GW_UPSTREAM_TIMEOUT] = "upstream-timeout",
	[REASON_GW_UPSTREAM_CLOSED] = "upstream-closed",
	[REASON_GW_BAD_RESPONSE] = "bad-response",
	[REASON_GW_CLIENT_CLOSED] = "client-closed",
	[REASON_GW_CONNECTION_CLOSED] = "connection-closed",
	[REASON_GW_INTERNAL] = "internal",
	[REASON_GW_NOT_A_SANDBOX] = "not-a-sandbox",
	[REASON_GW_NO_SNI] = "no-sni",
	[REASON_GW_SNI_NOT_PINNED] = "sni-not-pinned",
	[REASON_GW_GATEWAY_ERROR] = "gateway-error",
	[REASON_GW_OTHER] = "other",
};

/* The index of @name among the first @n - 1 of @names (the last is "other"); else @n - 1. */
static unsigned int lookup(const char *const *names, unsigned int n, const char *name)
{
	for (unsigned int i = 0; name && i + 1 < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return n - 1;
}

const char *reason_dns_name(enum reason_dns r)
{
	return dns_names[(unsigned int)r < N_REASON_DNS ? r : REASON_DNS_OTHER];
}

enum reason_dns reason_dns_of(const char *name)
{
	return (enum reason_dns)lookup(dns_names, N_REASON_DNS, name);
}

const char *reason_deny_name(enum reason_deny r)
{
	return deny_names[(unsigned int)r < N_REASON_DENY ? r : REASON_DENY_OTHER];
}

enum reason_deny reason_deny_of(const char *name)
{
	return (enum reason_deny)lookup(deny_names, N_REASON_DENY, name);
}

const char *reason_gw_name(enum reason_gw r)
{
	return gw_names[(unsigned int)r < N_REASON_GW ? r : REASON_GW_OTHER];
}

enum reason_gw reason_gw_of(const char *name)
{
	return (enum reason_gw)lookup(gw_names, N_REASON_GW, name);
}
