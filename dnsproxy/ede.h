/*
 * ede - Extended DNS Errors (RFC 8914) on the answers netd's policy denies:
 * INFO-CODE 15 "Blocked" (RFC 8914 4.16: the operator's security policy
 * blocks the name) and an EXTRA-TEXT giving the reason (not the policy's name),
 * so an agent sees *why* at once instead of retrying elsewhere.  Only when
 * the query carried an OPT RR: without EDNS there is nowhere to put it
 * (RFC 8914 2, RFC 6891 7).  Pure: buffers in, bytes out.
 */
#ifndef NETD_DNSPROXY_EDE_H
#define NETD_DNSPROXY_EDE_H

#include <stddef.h>
#include <stdint.h>

#include "dnsproxy/wire.h"

#define EDE_OPTION_CODE  15	/* EDNS0 option "Extended DNS Error" (RFC 8914 2) */
#define EDE_INFO_BLOCKED 15	/* RFC 8914 4.16 */
#define EDE_INFO_PROHIBITED 18	/* RFC 8914 4.19: this client may not, for now */
#define EDE_TEXT_MAX     160	/* bytes of EXTRA-TEXT we send */
#define EDE_OPTION_MAX   (4 + 2 + EDE_TEXT_MAX)	/* code, length, INFO-CODE, text */

/*
 * ede_policy_text() - the EXTRA-TEXT for a query the sandbox's policy denied
 * for @reason (the audit log's reason: "not-in-policy" -> "not in policy").
 * The policy is not named: the sandbox learns why, not the operator's
 * name for its policy (the audit record has it).  Only printable ASCII is
 * kept (others become '?'); at most EDE_TEXT_MAX bytes.  @buf: >=
 * EDE_TEXT_MAX + 1 bytes.  Return: @buf.
 */
char *ede_policy_text(char *buf, size_t sz, const char *reason);

/*
 * ede_build_response() - wire_build_response(@rcode, no TC) for @query,
 * and if the query had an OPT RR, an EDE option (@info_code, @text: ASCII,
 * at most EDE_TEXT_MAX bytes used, not NUL-terminated on the wire) in our
 * OPT RR's RDATA (RFC 8914 2: OPTION-CODE 15, OPTION-LENGTH, INFO-CODE,
 * EXTRA-TEXT).  @out/@outmax: destination; the EDE needs EDE_OPTION_MAX
 * bytes more than wire_build_response().
 * Return: bytes written; -ENOBUFS; -EINVAL (as wire_build_response()).
 */
int ede_build_response(const uint8_t *query, size_t qlen, const struct wire_query *q,
		       uint8_t rcode, uint16_t info_code, const char *text, uint8_t *out,
		       size_t outmax);

#endif
