/*
 * suggest - `netd policy suggest`'s core: audit records in, a policy YAML
 * out, allowing what the records show was used and nothing else.  Pure:
 * parsed JSON records in memory; no file, no daemon, no logging
 * (netd/cli/cli_suggest.c reads the log).  docs/policy-workflow.md.
 *
 * What counts as used, for the sandbox or policy chosen:
 *   - "conn" records, and "conn_update"/"conn_open" (an audit-mode
 *     sandbox's connection that enforce mode would have dropped) of flows
 *     with no "conn" yet: (proto, dst, dport) with its "domain";
 *   - "dns" records the policy (or audit mode) answered: the name, how
 *     often, and the addresses it resolved to.  A name gets the ports of
 *     connections attributed to it and of connections to an address it
 *     resolved to (the pin is per address, so that grants nothing more).
 * Output, byte-for-byte the same for the same records (sorted, no clock):
 *   - one domain rule per (protocol, port set) of exact names: a
 *     suggestion opens nothing more than what was seen.  Only when asked
 *     (SUGGEST_WILDCARDS), "*.REG" where SUGGEST_WILD_MIN or more names
 *     below one registrable domain (the Public Suffix List, as
 *     policy_registrable_domain() has it) share that port set, counting
 *     only names whose every port came from connections made to that name
 *     (a connection by address, credited to the names that resolved to
 *     the address, never counts); never a wildcard over a public suffix;
 *   - /32 or /128 CIDR rules only for connections no name accounts for,
 *     never for an address in the never-pin table (common/special.h);
 *   - a comment on every line with counts and bytes, and the things seen
 *     but not suggested (denied names, resolved-only names, ICMP, names
 *     that are not policy patterns, never-pin addresses) as comments.
 * Everything the records control is bounded (SUGGEST_MAX_*); what did not
 * fit is counted and said in the output.
 */
#ifndef NETD_SUGGEST_H
#define NETD_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define SUGGEST_WILD_MIN   3	/* names below one registrable domain before "*." */

/* suggest_render() flags */
#define SUGGEST_WILDCARDS  (1u << 0)	/* fold siblings into "*.REG" (--wildcards) */
#define SUGGEST_MAX_NAMES  4096	/* distinct names kept */
#define SUGGEST_MAX_DESTS  16384	/* distinct (domain, proto, dst, port) kept */
#define SUGGEST_MAX_FLOWS  65536	/* live flows (conn_update without conn) kept */
#define SUGGEST_MAX_ADDRS  32	/* answer addresses kept per name */

struct suggest_filter {
	const char *sandbox;	/* exact "sandbox"; NULL = any */
	const char *policy;	/* exact "policy"; NULL = any */
	char since[40];		/* records with "ts" >= this (RFC 3339 UTC); "" = all */
};

struct suggest;

/*
 * suggest_new() - an empty collector for records passing @f (copied).
 * @ret: caller frees with suggest_free().  Return: 0; -ENOMEM.
 */
int suggest_new(const struct suggest_filter *f, struct suggest **ret);

/* suggest_free() - NULL-safe. */
void suggest_free(struct suggest *s);

/*
 * suggest_add() - take one audit record (borrowed; nothing of it is kept
 * by reference).  Records of other sandboxes, other events and malformed
 * ones are ignored.  Return: 1 used; 0 ignored; -ENOMEM.
 */
int suggest_add(struct suggest *s, const json_t *rec);

/*
 * suggest_render() - the policy YAML, named @name (policy_name_valid()),
 * with @source (the files read, for the header comment; printable ASCII
 * kept, the rest as '?') into *@ret (NUL-terminated, @ret_len bytes;
 * caller frees with free()).  @flags: 0 (exact names only) or
 * SUGGEST_WILDCARDS (siblings connected to by name may become "*.REG").
 * Return: 0; -EINVAL (bad @name or unknown @flags); -ENOMEM.
 */
int suggest_render(const struct suggest *s, const char *name, const char *source,
		   unsigned int flags, char **ret, size_t *ret_len);

#endif
