/*
 * gw/name - which names the gateway mints a leaf certificate for: one DNS
 * name as a TLS client sends it in server_name (RFC 6066 3), checked
 * before it goes anywhere near a certificate.  Pure.
 */
#ifndef NETD_GW_NAME_H
#define NETD_GW_NAME_H

#include <stddef.h>

#define GW_NAME_MAX  253	/* presentation form, no trailing dot (RFC 1035 2.3.4, 3.1) */
#define GW_LABEL_MAX 63		/* bytes (RFC 1035 2.3.4) */

/*
 * gw_name_check() - is @in (@len bytes, not NUL-terminated, may hold any
 * byte) a host name a leaf may carry as its one dNSName?  What is taken:
 * labels of 1 to GW_LABEL_MAX bytes of letters, digits, '-' and '_',
 * separated by single dots, no '-' first or last in a label (RFC 952,
 * RFC 1123 2.1), at most GW_NAME_MAX bytes.  Refused besides: a trailing
 * dot (RFC 6066 3: "without a trailing dot"), a wildcard, and a name whose
 * last label is numeric (digits, or 0x and hex digits: "1.2.3.4", "10.0x7f"),
 * which a client reads as an IPv4 address and for which it sends no SNI
 * (RFC 6066 3: literal addresses are not permitted; RFC 3696 2: no TLD is
 * numeric).  '_' is taken although RFC 5280 4.2.1.6 asks for the LDH
 * "preferred name syntax": policies accept it, real hosts carry it
 * (legacy S3 bucket names, internal services), and OpenSSL, Go, Node and
 * curl match it; the CA is netd's own, trusted only by its sandboxes
 * (docs/gateway.md).
 * @out: at least GW_NAME_MAX + 1 bytes; on success the name lower-cased,
 * NUL-terminated.  Untouched beyond what was written on failure.
 * Return: 0; -EINVAL.
 */
int gw_name_check(const char *in, size_t len, char *out);

#endif
