/*
 * special - the never-pin table: every address block a DNS answer must never
 * open, in one place, each entry with its source.  The IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890, RFC 8190 and the RFCs that
 * added entries since), multicast, the deprecated blocks some stacks still
 * route, and the cloud providers' metadata and host-agent addresses.  The
 * documentation blocks (RFC 5737, RFC 3849, RFC 9637) are flagged: they are
 * in the list only when the config says so (dns.never_pin_documentation).
 *
 * Pure: constant data and lookups over memory; no I/O, no allocation.  The
 * runtime entries (the host's own addresses, the sandbox pools) are not
 * here: the daemon appends them to what special_prefixes() returns.
 */
#ifndef NETD_COMMON_SPECIAL_H
#define NETD_COMMON_SPECIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/addr.h"

/* special_entry.flags */
#define SPECIAL_DOC   0x1u	/* a documentation block: listed only with SPECIAL_WITH_DOC */
#define SPECIAL_CLOUD 0x2u	/* a provider's metadata / host-agent address */

/* Flags for the functions below. */
#define SPECIAL_WITH_DOC 0x1u	/* include the SPECIAL_DOC entries */

struct special_entry {
	const char *cidr;	/* "ADDR/LEN", host bits zero */
	const char *what;	/* what the block is, for logs and docs */
	const char *source;	/* the RFC section or provider document */
	unsigned int flags;	/* SPECIAL_DOC, SPECIAL_CLOUD */
};

/* The table, in docs/security.md order; special_table_n entries. */
extern const struct special_entry special_table[];
extern const size_t special_table_n;

#define SPECIAL_TABLE_MAX 128	/* upper bound on special_table_n (for callers' arrays) */

/*
 * special_prefixes() - the table's prefixes, parsed, for the decide context
 * and the nf_tables "internal" sets.  @flags: SPECIAL_WITH_DOC or 0.
 * @out, @max: destination.  Return: count stored (at most @max; pass
 * SPECIAL_TABLE_MAX to get all).
 */
size_t special_prefixes(struct prefix *out, size_t max, unsigned int flags);

/* The IPv4 address an IPv6 address carries, and in which form. */
struct special_v4 {
	struct addr v4;		/* AF_INET */
	const char *form;	/* "IPv4-mapped", "6to4", "Teredo client", ... */
};

/*
 * special_embedded_v4() - every IPv4 address @a embeds in a form a stack or
 * a relay on the path may act on: IPv4-mapped ::ffff:0:0/96 and
 * IPv4-compatible ::/96 (RFC 4291 2.5.5), IPv4-translated ::ffff:0:0:0/96
 * (RFC 2765 2.1), NAT64 64:ff9b::/96 (RFC 6052 2.1), 6to4 2002:V4::/48
 * (RFC 3056 2), Teredo 2001::/32's server and its obfuscated (bit-inverted)
 * client address (RFC 4380 4).  @out has room for 2.
 * Return: how many were stored (0 for IPv4 or no embedding).
 */
size_t special_embedded_v4(const struct addr *a, struct special_v4 out[2]);

/* A table entry an address falls in, directly or through an embedded IPv4. */
struct special_hit {
	const struct special_entry *entry;	/* the most specific entry */
	const char *form;	/* NULL if @a itself is inside; else the embedding */
	struct addr v4;		/* the embedded address when @form is set */
};

/*
 * special_find() - is @a inside the table (the most specific entry), or
 * does it embed (special_embedded_v4()) an IPv4 address that is?
 * @flags: SPECIAL_WITH_DOC or 0.  @hit: filled when found; may be NULL.
 * Return: true if found.
 */
bool special_find(const struct addr *a, unsigned int flags, struct special_hit *hit);

/*
 * special_overlaps() - the entries a policy CIDR @p overlaps (inside it, or
 * containing it), in table order, for `netd policy check`'s warnings.
 * @flags: SPECIAL_WITH_DOC or 0.  @out, @max: the first @max of them.
 * Return: how many overlap (may exceed @max).
 */
size_t special_overlaps(const struct prefix *p, unsigned int flags,
			const struct special_entry **out, size_t max);

#endif
