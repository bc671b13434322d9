/*
 * policyview - a loaded policy seen from outside: its JSON (GET
 * /v1/policies/NAME), its digest (state files, reload change detection)
 * and its items (what a reload reports as added/removed).  Pure: no
 * daemon state, no I/O, no logging.
 */
#ifndef NETD_DAEMON_POLICYVIEW_H
#define NETD_DAEMON_POLICYVIEW_H

#include <stddef.h>

#include <jansson.h>

#include "netd/model/policy.h"

#define PVIEW_DIGEST_LEN 17	/* 16 hex digits and the NUL */

/*
 * pview_json() - @p as the API shows it: {name, description?, file?,
 * egress: [{domains, except? | cidrs, ports, protocol, min_ttl?,
 * max_qname_length?, idle_grace?, tls? {sni}, http? {host}, gateway?
 * {credentials?, rate?, methods?, paths?}}], limits?,
 * mode? ("audit"), on_deny? ("reject")}: every key the policy has; the
 * optional ones only when not the default, so older digests stay what
 * they were.
 * Return: a new object (caller decrefs); NULL on out of memory.
 */
json_t *pview_json(const struct policy *p);

/*
 * pview_digest() - FNV-1a 64 (common/hash.h) of @p's canonical JSON
 * (pview_json() without "file", compact, keys sorted), as 16 lower-case hex
 * digits in @buf (>= PVIEW_DIGEST_LEN bytes): equal digests, equal rules.
 * @p NULL or out of memory: "".  Return: @buf.
 */
const char *pview_digest(const struct policy *p, char *buf, size_t sz);

/*
 * pview_items() - what @p allows, one key per (domain or CIDR) x (protocol,
 * ports), e.g. "pypi.org tcp/443" or "198.51.100.0/24 tcp/any", set to true
 * in the object @set.  @p may be NULL (nothing).
 */
void pview_items(const struct policy *p, json_t *set);

/* pview_items_minus() - the keys of @a not in @b, as a new JSON array (insertion order). */
json_t *pview_items_minus(json_t *a, json_t *b);

#endif
