/*
 * cli_audit - `netd audit`: read, filter, follow and summarize the audit
 * log (JSON Lines).  Reads the file directly; the daemon, if it runs, is
 * only asked where the file is.
 */
#ifndef NETD_CLI_AUDIT_H
#define NETD_CLI_AUDIT_H

#include <stdbool.h>

#include <jansson.h>

#include "common/addr.h"

struct audit_filter {
	const char *sandbox;	/* exact; NULL = any */
	const char *event;	/* exact ("conn", "deny", "dns", ...); NULL = any */
	const char *domain;	/* exact, or "*.example.com" for names below; NULL = any */
	char since[40];		/* RFC 3339 UTC, compared with "ts"; "" = no bound */
	char until[40];
	const char *verdict;	/* "allow" or "deny"; NULL = any (see cli_audit_verdict()) */
	const char *reason;	/* exact "reason"; NULL = any */
	bool has_dst;		/* dst: "dst" (or a DNS record's "answers") inside it */
	struct prefix dst;
	int port;		/* "dport"; -1 = any */
};

/*
 * cli_audit_verdict() - a record's verdict: its "verdict" (dns), "deny"
 * for deny and deny_suppressed, "allow" for conn, conn_open, conn_update
 * and conn_late; NULL for the others (sandbox, netd, policy_reload ...).  Pure.
 */
const char *cli_audit_verdict(const json_t *rec);

/*
 * cli_audit_match() - does record @rec pass @f?  "domain" is matched
 * against the record's "domain" (conn, deny) or "qname" (dns); "dst"
 * against "dst" or any of a dns record's "answers".  Pure.
 */
bool cli_audit_match(const struct audit_filter *f, const json_t *rec);

/*
 * cli_audit_time() - @arg as an RFC 3339 UTC bound into @out (>= 40 bytes):
 * "2026-11-30T06:00:00Z" (or a prefix such as "2026-11-30") as is, or a
 * relative "N[smhd]" ago from @now.  Return: 0; -EINVAL.
 */
int cli_audit_time(const char *arg, long long now, char *out, size_t sz);

/*
 * cli_audit_locate() - which audit log `netd audit` reads without --file,
 * into @out (@sz bytes): $NETD_AUDIT_LOG if set; else the running
 * daemon's ("audit"."file" of GET /v1/status on @socket_path); else the
 * audit_log of @config_path if that file exists and parses; else the
 * built-in default.  @how gets a word for where it came from ("env",
 * "daemon", "config", "default") for error messages.  Return: 0; -ENAMETOOLONG.
 */
int cli_audit_locate(const char *socket_path, const char *config_path, char *out, size_t sz,
		     const char **how);

/*
 * cli_audit() - `netd audit ...`; @argv[0] is "audit".  @socket_path is
 * the control socket to ask for the log's path (borrowed).
 * Return: exit status (enum cli_exit).
 */
int cli_audit(int argc, char **argv, const char *socket_path);

#endif
