/*
 * cli_audit - `netd audit`: read, filter, follow and summarize the audit
 * log (JSON Lines).  Reads the file directly; no daemon needed.
 */
#ifndef NETD_CLI_AUDIT_H
#define NETD_CLI_AUDIT_H

#include <stdbool.h>

#include <jansson.h>

struct audit_filter {
	const char *sandbox;	/* exact; NULL = any */
	const char *event;	/* exact ("conn", "deny", "dns", ...); NULL = any */
	const char *domain;	/* exact, or "*.example.com" for names below; NULL = any */
	char since[40];		/* RFC 3339 UTC, compared with "ts"; "" = no bound */
	char until[40];
};

/*
 * cli_audit_match() - does record @rec pass @f?  "domain" is matched
 * against the record's "domain" (conn, deny) or "qname" (dns).  Pure.
 */
bool cli_audit_match(const struct audit_filter *f, const json_t *rec);

/*
 * cli_audit_time() - @arg as an RFC 3339 UTC bound into @out (>= 40 bytes):
 * "2026-11-30T06:00:00Z" (or a prefix such as "2026-11-30") as is, or a
 * relative "N[smhd]" ago from @now.  Return: 0; -EINVAL.
 */
int cli_audit_time(const char *arg, long long now, char *out, size_t sz);

/* cli_audit() - `netd audit ...`; @argv[0] is "audit".  Return: exit status. */
int cli_audit(int argc, char **argv);

#endif
