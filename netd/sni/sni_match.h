/*
 * sni_match - may a connection that says it is for @seen (its TLS SNI or
 * HTTP Host, from sni.h) use an address that the names @pinned pinned for
 * that sandbox (from pinsrc)?  Pure: policy and names in, yes/no out.
 *
 * The rule: @seen must be covered by a domain pattern of the policy that
 * also covers one of the pinned names, in a rule for the connection's
 * protocol and port.  An exact pattern covers only itself, so a name
 * pinned through "allowed.example.com" admits only that SNI; a name
 * pinned through "*.cdn.example" admits any name under cdn.example (the
 * operator allowed all of them, and one edge serves them all).  A name
 * the policy allows through a different pattern that pinned other
 * addresses does not count: the address was not pinned for it.
 */
#ifndef NETD_SNI_MATCH_H
#define NETD_SNI_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/policy.h"

/*
 * sni_pattern_covers() - does domain pattern @pat (normalized, as stored in
 * policy_rule.domains) cover @name (lower-case, no trailing dot)?  "*.x.y"
 * covers names strictly below x.y at any depth; other patterns only
 * themselves (policy.h).
 */
bool sni_pattern_covers(const char *pat, const char *name);

/*
 * sni_match() - the check above.
 * @pol: the sandbox's current policy (borrowed).
 * @pinned, @n_pinned: the qnames whose answers pinned the destination for
 *       this sandbox (pinsrc_names()), lower-case presentation form.
 * @proto, @port: the connection's (IPPROTO_TCP, host byte order).
 * @seen: the normalized name the client sent (sni.h); NULL or "" never
 *       matches.
 * Honours each rule's max_qname_length for @seen.
 * Return: true if allowed.
 */
bool sni_match(const struct policy *pol, const char *const *pinned, size_t n_pinned,
	       uint8_t proto, uint16_t port, const char *seen);

#endif
