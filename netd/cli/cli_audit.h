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
	bool has_dst;		/* dst: "dst" (or a DNS record's "answers", an http
				 * record's "upstream" address) inside it */
	struct prefix dst;
	int port;		/* "dport" (an http record's "upstream" port); -1 = any */
};

/*
 * cli_audit_verdict() - a record's verdict: its "verdict" (dns), "deny"
 * for deny and deny_suppressed, "allow" for conn, conn_open, conn_update
 * and conn_late; NULL for the others (sandbox, netd, policy_reload ...).  Pure.
 */
const char *cli_audit_verdict(const json_t *rec);

/*
 * cli_audit_match() - does record @rec pass @f?  "domain" is matched
 * against the record's "domain" (conn, deny), "qname" (dns) or "host"
 * (http); "dst" against "dst", any of a dns record's "answers" or an http
 * record's "upstream" address; the port against "dport" or the
 * "upstream" port: what `netd audit`'s DESTINATION and DOMAIN show.  Pure.
 */
bool cli_audit_match(const struct audit_filter *f, const json_t *rec);

/*
 * cli_audit_event_known() - is @ev one of CLI_AUDIT_EVENTS (cli_help.h),
 * the events `netd audit --event` takes?  Pure.
 */
bool cli_audit_event_known(const char *ev);

/*
 * cli_audit_time() - @arg as an RFC 3339 UTC bound into @out (>= 40 bytes):
 * "2026-11-30T06:00:00Z" (or a prefix such as "2026-11-30") as is, or a
 * relative "N[smhd]" ago from @now.  Return: 0; -EINVAL.
 */
int cli_audit_time(const char *arg, long long now, char *out, size_t sz);

/*
 * cli_audit_cell() - @s as a table cell: printable ASCII only, the rest
 * '?' (the log is not trusted), in @buf (@sz bytes, cut to fit); "-" for
 * NULL.  Return: @buf, or "-".  Pure.
 */
const char *cli_audit_cell(const char *s, char *buf, size_t sz);

/*
 * cli_audit_detail() - record @rec's DETAIL in `netd audit`'s table, into
 * @buf (@sz bytes, cut to fit): a dns record's verdict, a sandbox
 * record's action, a gateway request's "METHOD PATH STATUS [reason]", a
 * budget record's "ACTION RULE: USED of BUDGET" ("closed api.openai.com
 * tcp: 1000291816 of 1GB/day"), else the reason ("not-pinned x3" for a
 * folded deny, "allow, would deny: REASON" in audit mode); "-" for none.
 * Every part is a cli_audit_cell().  Return: @buf.  Pure.
 */
const char *cli_audit_detail(const json_t *rec, char *buf, size_t sz);

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
 * cli_audit_fn - what cli_audit_read_files() hands each record to: @rec
 * (borrowed for the call), from line @line of @file.  Return: >= 0 to go
 * on; -errno to stop (the read fails with it).
 */
typedef int (*cli_audit_fn)(void *arg, const json_t *rec, const char *file,
			    unsigned long line);

/*
 * cli_audit_read_files() - read the audit logs @files (@n_files, oldest
 * first: rotated files, then the live one), each from its start, and hand
 * every line that is a JSON object to @fn, in order.  With @n_files 0, the
 * log cli_audit_locate() finds (asking @socket_path; borrowed).  Lines
 * that are not JSON objects (a torn last line, garbage, over 1 MiB) are
 * skipped and counted: one line on stderr says how many and where the
 * first was (FILE:LINE).  @cmd ("policy suggest") prefixes messages.
 * @source, @source_sz: the files read, ", "-joined (may be NULL).
 * Return: CLI_OK; CLI_NOT_FOUND (a file does not exist, as `netd audit`);
 * CLI_FAILED (unreadable, or @fn failed; said on stderr).
 */
int cli_audit_read_files(const char *cmd, const char *const *files, size_t n_files,
			 const char *socket_path, cli_audit_fn fn, void *arg, char *source,
			 size_t source_sz);

/*
 * cli_audit() - `netd audit ...`; @argv[0] is "audit".  @socket_path is
 * the control socket to ask for the log's path (borrowed).
 * Return: exit status (enum cli_exit).
 */
int cli_audit(int argc, char **argv, const char *socket_path);

#endif
