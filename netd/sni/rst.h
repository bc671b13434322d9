/*
 * snirst - the server's half of an SNI check reset: the refused segment
 * rewritten into a bare TCP RST of its own connection, which netd gives
 * back to the kernel (nfnetlink_queue carries a replaced packet with the
 * verdict) so that it follows the connection's path to the server and the
 * refused bytes never do.  Pure: bytes in, bytes out; no I/O.
 */
#ifndef NETD_SNI_RST_H
#define NETD_SNI_RST_H

#include <stddef.h>
#include <stdint.h>

#define SNIRST_MAX 60	/* the longest RST built: IPv6 (40) + TCP (20) */

/*
 * snirst_build() - @ip (@len bytes: an IPv4 or IPv6 packet carrying TCP, as
 * sniflow_pkt_parse() takes it; not retained) rewritten into a RST of the
 * same connection into @out (SNIRST_MAX bytes): the same addresses, ports,
 * IPv4 TOS, ID and DF / IPv6 traffic class and flow label, and TTL / hop
 * limit; sequence number @seq (host byte order; the server's RCV.NXT, which
 * RFC 5961 3.2 requires of a RST it takes); ACK and the acknowledgment
 * number as @ip had them; window 0, no options, no payload; no IPv4 options
 * and no IPv6 extension headers.  The IPv4 header checksum (RFC 791) and
 * the TCP checksum over the pseudo-header (RFC 9293 3.1, RFC 8200 8.1) are
 * computed.
 * Return: the length written (40 for IPv4, 60 for IPv6); -EBADMSG or
 * -EPROTO as sniflow_pkt_parse(); -EINVAL for a SYN (the server has no
 * connection to reset yet) or a RST (nothing to add).
 */
int snirst_build(const uint8_t *ip, size_t len, uint32_t seq, uint8_t out[SNIRST_MAX]);

/*
 * snirst_csum() - the Internet checksum (RFC 1071) of @len bytes at @p
 * added to @sum (a partial sum, 0 to start; host byte order, unfolded).
 * snirst_csum_fold() folds and complements it into the value a header
 * carries (as two bytes, big-endian).
 */
uint32_t snirst_csum(uint32_t sum, const uint8_t *p, size_t len);
uint16_t snirst_csum_fold(uint32_t sum);

#endif
