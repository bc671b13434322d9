/*
 * ctmsg - pure decoding of the two kernel streams the audit trail is made
 * of, and the JSON records built from them.  No sockets, no logging:
 * acct.c and nflog.c read the netlink sockets and call in here.
 *
 *   ctnetlink (nfnetlink_conntrack): one conntrack entry per message, its
 *     original-direction tuple, mark, id, accounting counters (with
 *     net.netfilter.nf_conntrack_acct=1) and timestamps (with
 *     nf_conntrack_timestamp=1).
 *   nfnetlink_log: one logged packet per message, its prefix, in/out
 *     interface indexes and the packet from the network header on.
 *
 * Everything here comes from the kernel and is still parsed as untrusted
 * bytes: every length is checked, nothing is assumed present.
 */
#ifndef NETD_CTMSG_H
#define NETD_CTMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/addr.h"

struct nlmsghdr;

/* A conntrack entry, original direction = what the sandbox sent. */
struct ct_flow {
	struct addr src, dst;	/* original tuple */
	uint8_t proto;		/* IPPROTO_* */
	uint16_t sport, dport;	/* host byte order; ICMP: sport = echo id, dport = type << 8 | code */
	uint32_t mark;		/* ct mark (0 if absent) */
	uint32_t id;		/* conntrack id (0 if absent) */
	uint64_t packets_out, bytes_out;	/* original direction counters */
	uint64_t packets_in, bytes_in;		/* reply direction counters */
	bool has_counters;	/* nf_conntrack_acct was on when the entry was made */
	uint64_t start_ns, stop_ns;	/* CLOCK_REALTIME ns; 0 if the kernel gave none */
	uint8_t tcp_state;	/* TCP: enum tcp_conntrack (TCP_CONNTRACK_*), if has_tcp_state */
	bool has_tcp_state;	/* the message carried CTA_PROTOINFO_TCP_STATE */
};

enum ct_event {
	CT_EV_NEW = 1,		/* IPCTNL_MSG_CT_NEW: an event or a dump entry */
	CT_EV_DESTROY = 2,	/* IPCTNL_MSG_CT_DELETE */
};

/*
 * ct_parse() - decode one ctnetlink message (nlmsghdr + nfgenmsg +
 * attributes), as received from a conntrack event group or a dump.
 * @buf, @len: one netlink message; @len bytes are readable; not retained.
 * @out: filled on success.
 * Return: CT_EV_NEW or CT_EV_DESTROY; -EBADMSG (malformed, truncated or
 * no original tuple); -EPROTONOSUPPORT (not a ctnetlink entry message).
 */
int ct_parse(const void *buf, size_t len, struct ct_flow *out);

/*
 * ct_walk() - call @cb for each netlink message in a recv() buffer,
 * checking every length against what is left (unlike mnl_nlmsg_ok(), a
 * huge nlmsg_len cannot pass as negative).  NLMSG_NOOP is skipped.
 * @seq: if non-zero, messages with another sequence number are skipped.
 * Return: 0 (walked all); 1 (NLMSG_DONE seen); -errno from an NLMSG_ERROR
 * (0 = an ack: returns 1); -EBADMSG (a bad length ends the walk).
 */
int ct_walk(const void *buf, size_t len, uint32_t seq,
	    void (*cb)(const void *msg, size_t len, void *arg), void *arg);

/*
 * ct_put_request() - start a ctnetlink request in @buf (room for
 * MNL_SOCKET_BUFFER_SIZE): nlmsghdr with @type (IPCTNL_MSG_CT_*), flags
 * NLM_F_REQUEST | @flags, sequence @seq, then the nfgenmsg for @family
 * (AF_UNSPEC: both).  Attributes go after it (mnl_attr_put_*).
 * Return: the message, inside @buf (nothing allocated).
 */
struct nlmsghdr *ct_put_request(void *buf, uint16_t type, uint16_t flags, uint8_t family,
				uint32_t seq);

/* A packet logged by an nftables `log group N` rule. */
struct ct_logpkt {
	char prefix[128];	/* NUL-terminated; "" if none */
	uint32_t indev, outdev;	/* ifindex, 0 if none */
	struct addr src, dst;
	uint8_t proto;		/* IPPROTO_*; 0 if the payload was too short */
	uint16_t sport, dport;	/* as in struct ct_flow; 0 if not applicable */
	uint16_t len;		/* the packet's length from its IP header */
	uint32_t mark;		/* the packet mark (NFULA_MARK), 0 if none */
};

/*
 * ct_parse_log() - decode one nfnetlink_log NFULNL_MSG_PACKET message.
 * The payload is parsed as an IPv4 (RFC 791) or IPv6 (RFC 8200) header;
 * IPv6 extension headers are not walked (proto is then the first next
 * header, ports 0).
 * @buf, @len: one netlink message; not retained.  @out: filled on success.
 * Return: 0; -EBADMSG (malformed); -EPROTONOSUPPORT (other message type,
 * or no IP payload).
 */
int ct_parse_log(const void *buf, size_t len, struct ct_logpkt *out);

/* ct_proto_name() - "tcp", "udp", "icmp", "icmpv6", "sctp" or the number. */
const char *ct_proto_name(uint8_t proto, char *buf, size_t sz);

/*
 * ct_time_format() - RFC 3339 UTC with milliseconds ("2026-01-02T03:04:05.678Z")
 * of @ns nanoseconds since the epoch into @buf (>= 32 bytes).  Return: @buf.
 */
char *ct_time_format(uint64_t ns, char *buf, size_t sz);

/*
 * ct_flow_span() - when @f began and ended, as its records say
 * (CLOCK_REALTIME ns): the kernel's timestamps; without a stop time
 * (an interim record) @now_ns; without a start, the end.  end >= start.
 */
void ct_flow_span(const struct ct_flow *f, uint64_t now_ns, uint64_t *start_ns, uint64_t *end_ns);

/*
 * ct_flow_sni_refused() - did the SNI/Host check refuse @f?  Its entry's
 * ct mark holds FW_SNI_DROP_CTMARK under FW_SNI_CTMARK_BITS (netd/fw.h):
 * netd sets it before a refused TCP connection's reset and on a refused
 * QUIC flow.  Pure.
 */
bool ct_flow_sni_refused(const struct ct_flow *f);

/*
 * ct_conn_json() - the body of a "conn" (or "conn_update") audit record:
 * sandbox, policy, proto, src, sport, dst, dport, domain, bytes_out,
 * bytes_in, packets_out, packets_in, start, end, duration_s - in that order;
 * then, for a flow the SNI/Host check refused (ct_flow_sni_refused()),
 * verdict "deny" and reason "sni-check" (its "sni" record says why).
 * @now_ns: "end" when the flow has no stop time (an interim update).
 * Strings are borrowed; @domain may be NULL (JSON null).
 * Return: a new object (caller decrefs); NULL on ENOMEM.
 */
json_t *ct_conn_json(const struct ct_flow *f, const char *sandbox, const char *policy,
		     const char *domain, uint64_t now_ns);

/*
 * ct_open_json() - the body of a "conn_open" record (an allowed connection
 * was confirmed by conntrack): sandbox, policy, proto, src, sport, dst,
 * dport, domain, start (@start_ns, CLOCK_REALTIME).  Strings borrowed;
 * @domain may be NULL.  Return: a new object (caller decrefs); NULL on ENOMEM.
 */
json_t *ct_open_json(const struct ct_flow *f, const char *sandbox, const char *policy,
		     const char *domain, uint64_t start_ns);

/* What one "deny" record stands for: packets of one attempt (folded). */
struct ct_deny_span {
	uint64_t count;		/* packets (>= 1): the first and its retransmits */
	uint64_t first_ns, last_ns;	/* CLOCK_REALTIME of the first and the last */
};

/*
 * ct_deny_json() - the body of a "deny" audit record: sandbox, policy,
 * proto, src, sport, dst, dport, domain, reason, count, first, last,
 * suppressed (packets of this sandbox not recorded since its previous
 * deny record).  @span NULL: count 1, no first/last.
 * Return: a new object (caller decrefs); NULL on ENOMEM.
 */
json_t *ct_deny_json(const struct ct_logpkt *p, const char *sandbox, const char *policy,
		     const char *domain, const char *reason, uint64_t suppressed,
		     const struct ct_deny_span *span);

/*
 * ct_put_get() - a ctnetlink request in @buf (room for
 * MNL_SOCKET_BUFFER_SIZE) for the one entry with @f's original tuple (and
 * id, if @f->id): IPCTNL_MSG_CT_GET, no dump.  The kernel answers with the
 * entry (counters, timestamps, TCP state) or an NLMSG_ERROR (-ENOENT: gone).
 * Return: the message, inside @buf.
 */
struct nlmsghdr *ct_put_get(void *buf, const struct ct_flow *f, uint32_t seq);

/*
 * ct_put_get_reply() - the same request for the entry whose reply tuple is
 * @reply's src, dst, proto, sport, dport (the way its replies go: after a
 * DNAT, from the new destination).  The answer carries the original tuple.
 * Return: the message, inside @buf.
 */
struct nlmsghdr *ct_put_get_reply(void *buf, const struct ct_flow *reply, uint32_t seq);

#endif
