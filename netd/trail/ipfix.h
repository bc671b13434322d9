/*
 * ipfix - the IPFIX encoder (RFC 7011): netd's two Templates, its Data
 * Records and the Messages that carry them.  Pure: bytes in memory, no
 * socket, no clock, no logging; the exporter (ipfixexp.h) sends what this
 * builds and passes the time in.
 *
 * One Data Record is one connection of a sandbox (or, with interim export,
 * one stretch of it) as a biflow (RFC 5103): the forward direction is what
 * the sandbox sent (it initiated the connection: biflowDirection 1), the
 * reverse direction, with the Reverse Information Element PEN 29305, what
 * it received.  Octets are IP octets, headers included, as conntrack counts
 * them (octetDeltaCount's definition), so initiatorOctets/responderOctets
 * (231/232, layer-4 payload octets) are not used.  Enterprise-specific
 * elements (RFC 7011 3.2) under the configured Private Enterprise Number
 * carry what only netd knows, as variable-length strings (RFC 7011 7):
 * sandbox, policy, domain, rule, verdict (IPFIX_IE_*).
 *
 *   Template 256 (IPv4)                 Template 257 (IPv6)
 *   flowStartMilliseconds    152  8     (the same, with
 *   flowEndMilliseconds      153  8      sourceIPv6Address 27 and
 *   sourceIPv4Address          8  4      destinationIPv6Address 28,
 *   destinationIPv4Address    12  4      16 octets each)
 *   sourceTransportPort        7  2
 *   destinationTransportPort  11  2     ICMP: source port 0, destination
 *   protocolIdentifier         4  1     port type * 256 + code (as NetFlow
 *   flowEndReason            136  1     collectors expect)
 *   biflowDirection          239  1
 *   octetDeltaCount            1  8
 *   packetDeltaCount           2  8
 *   reverseOctetDeltaCount  29305/1  8
 *   reversePacketDeltaCount 29305/2  8
 *   sandbox, policy, domain, rule, verdict   PEN/1..5, variable length
 */
#ifndef NETD_IPFIX_H
#define NETD_IPFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"

#define IPFIX_VERSION        10	/* RFC 7011 3.1 */
#define IPFIX_SET_TEMPLATE   2	/* RFC 7011 3.3.2 */
#define IPFIX_TEMPLATE_V4    256
#define IPFIX_TEMPLATE_V6    257
#define IPFIX_PEN_REVERSE    29305	/* RFC 5103 6.1 */
#define IPFIX_PEN_DOCUMENTATION 32473	/* RFC 5612: the default enterprise number */
#define IPFIX_HEADER_LEN     16
#define IPFIX_SET_HEADER_LEN 4
#define IPFIX_STR_MAX        255	/* bytes of one string element; longer is cut */
#define IPFIX_RECORD_MAX     (87 + 5 * (3 + IPFIX_STR_MAX))	/* one Data Record, bytes */
#define IPFIX_TEMPLATE_SET_MAX 256	/* bytes of ipfix_template_set()'s Set */

/* netd's enterprise-specific Information Elements (under the configured PEN). */
enum ipfix_ie {
	IPFIX_IE_SANDBOX = 1,
	IPFIX_IE_POLICY = 2,
	IPFIX_IE_DOMAIN = 3,	/* the name that pinned the address, or the CIDR rule */
	IPFIX_IE_RULE = 4,	/* the policy rule that allowed it (pattern or CIDR) */
	IPFIX_IE_VERDICT = 5,	/* "allow", or "would-deny:REASON" (audit mode) */
};

/* flowEndReason (IANA IE 136). */
enum ipfix_end {
	IPFIX_END_IDLE = 1,	/* conntrack's idle timeout destroyed it (UDP, ICMP, ...) */
	IPFIX_END_ACTIVE = 2,	/* an interim record of a live connection */
	IPFIX_END_FLOW = 3,	/* the connection ended (TCP close, FIN or RST) */
	IPFIX_END_FORCED = 4,
};

/* One Data Record's values.  Strings are borrowed; NULL is an empty string. */
struct ipfix_flow {
	struct addr src, dst;	/* the same family */
	uint16_t sport, dport;	/* host byte order */
	uint8_t proto;
	uint8_t end_reason;	/* enum ipfix_end */
	uint64_t start_ms, end_ms;	/* milliseconds since the Unix epoch */
	uint64_t octets_out, packets_out;	/* the sandbox sent (forward) */
	uint64_t octets_in, packets_in;		/* it received (reverse) */
	const char *sandbox, *policy, *domain, *rule, *verdict;
};

/*
 * ipfix_template_set() - the Template Set (Set ID 2) defining Templates 256
 * and 257 (RFC 7011 3.4.1), enterprise elements under @pen, into @buf.
 * Return: its length (<= IPFIX_TEMPLATE_SET_MAX); -ENOSPC if @cap is short.
 */
int ipfix_template_set(uint32_t pen, uint8_t *buf, size_t cap);

/*
 * ipfix_record() - @f as one Data Record of its family's Template into @buf.
 * Strings over IPFIX_STR_MAX bytes are cut there.
 * Return: its length (<= IPFIX_RECORD_MAX) and *@template_id; -EAFNOSUPPORT
 * (no family, or two); -ENOSPC if @cap is short.
 */
int ipfix_record(const struct ipfix_flow *f, uint8_t *buf, size_t cap, uint16_t *template_id);

/*
 * An IPFIX Message being built in a caller's buffer: ipfix_msg_init(), then
 * ipfix_msg_add_set() and ipfix_msg_add_record() in the order they are to
 * appear (a Template Set before the Data Sets it describes: RFC 7011 8.2),
 * then ipfix_msg_finish().  Consecutive records of one Template share one
 * Data Set.  Nothing is allocated.
 */
struct ipfix_msg {
	uint8_t *buf;
	size_t cap, len;
	size_t set_off;		/* where the open Data Set's header is; 0: none open */
	uint16_t set_id;
	uint32_t records;	/* Data Records in the message */
};

/* ipfix_msg_init() - an empty message in @buf (@cap bytes, at most 65535 used). */
void ipfix_msg_init(struct ipfix_msg *m, uint8_t *buf, size_t cap);

/*
 * ipfix_msg_add_set() - append a whole Set (e.g. ipfix_template_set()'s).
 * Return: 0; -ENOSPC (the message is unchanged).
 */
int ipfix_msg_add_set(struct ipfix_msg *m, const uint8_t *set, size_t len);

/*
 * ipfix_msg_add_record() - append one encoded Data Record of Template
 * @template_id, in the open Data Set if it is that Template's, else in a
 * new one.  Return: 0; -ENOSPC (the message is unchanged).
 */
int ipfix_msg_add_record(struct ipfix_msg *m, uint16_t template_id, const uint8_t *rec,
			 size_t len);

/*
 * ipfix_msg_finish() - write the Message Header (RFC 7011 3.1): version 10,
 * the length, @export_s (seconds since the epoch), @seq (Data Records sent
 * before this message in this Transport Session and Observation Domain,
 * mod 2^32) and @domain (the Observation Domain ID); close the open Set.
 * Return: the message's length in bytes.
 */
size_t ipfix_msg_finish(struct ipfix_msg *m, uint32_t export_s, uint32_t seq, uint32_t domain);

/* ipfix_msg_empty() - nothing but the header's room yet? */
bool ipfix_msg_empty(const struct ipfix_msg *m);

#endif
