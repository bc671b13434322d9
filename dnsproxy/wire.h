/*
 * wire - the DNS message codec (RFC 1035 4.1, RFC 6891 for EDNS0).  Pure:
 * works on caller-provided buffers, never allocates, never logs.  Every
 * length and offset read from a packet is bounds-checked; compression
 * pointers must point backwards (no loops) and a name is at most 255 octets.
 */
#ifndef NETD_DNSPROXY_WIRE_H
#define NETD_DNSPROXY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"

#define WIRE_HDR_LEN      12
#define WIRE_NAME_MAX     255	/* octets on the wire, RFC 1035 3.1 */
#define WIRE_NAME_STRLEN  1024	/* presentation form incl. \DDD escapes, NUL */
#define WIRE_UDP_MIN      512	/* RFC 1035 4.2.1 */
#define WIRE_MSG_MAX      65535

#define WIRE_TYPE_A      1
#define WIRE_TYPE_NS     2
#define WIRE_TYPE_MD     3	/* obsolete (RFC 1035 3.3.4) */
#define WIRE_TYPE_MF     4	/* obsolete (RFC 1035 3.3.5) */
#define WIRE_TYPE_CNAME  5
#define WIRE_TYPE_SOA    6
#define WIRE_TYPE_PTR    12
#define WIRE_TYPE_MX     15
#define WIRE_TYPE_TXT    16
#define WIRE_TYPE_AAAA   28
#define WIRE_TYPE_DNAME  39
#define WIRE_TYPE_OPT    41
#define WIRE_TYPE_SVCB   64
#define WIRE_TYPE_HTTPS  65
#define WIRE_TYPE_TKEY   249	/* meta-types (RFC 2930, 8945) */
#define WIRE_TYPE_TSIG   250
#define WIRE_TYPE_IXFR   251	/* zone transfers (RFC 1995, 5936) */
#define WIRE_TYPE_AXFR   252
#define WIRE_TYPE_MAILB  253	/* obsolete mail qtypes (RFC 1035 3.2.3) */
#define WIRE_TYPE_MAILA  254
#define WIRE_TYPE_ANY    255
#define WIRE_CLASS_IN    1

#define WIRE_RCODE_NOERROR  0
#define WIRE_RCODE_FORMERR  1
#define WIRE_RCODE_SERVFAIL 2
#define WIRE_RCODE_NXDOMAIN 3
#define WIRE_RCODE_NOTIMP   4
#define WIRE_RCODE_REFUSED  5
#define WIRE_RCODE_BADVERS  16	/* extended, needs an OPT RR (RFC 6891 6.1.3) */

struct wire_query {
	uint16_t id;
	uint16_t flags;		/* header word 2, host byte order */
	uint8_t opcode;
	char qname[WIRE_NAME_STRLEN];	/* lower-case presentation form, no trailing
					 * dot ("." for the root); odd bytes as \DDD */
	bool qname_plain;	/* every label only [a-z0-9_-] (after lower-casing):
				 * only such names may be matched against a policy */
	unsigned int qname_labels;
	uint16_t qtype, qclass;
	size_t question_end;	/* offset just past the question section */
	bool has_opt;		/* an EDNS0 OPT RR in the additional section */
	uint16_t udp_size;	/* client's EDNS0 buffer size, or 512 */
	uint8_t edns_version;
	bool do_bit;
};

/*
 * wire_parse_query() - decode a query message (RFC 1035 4.1.1-4.1.2).
 * @buf, @len: the message as received; not retained.
 * @q: filled on success (and the header fields also on -EBADMSG when at
 *     least 12 bytes were present, so the caller can answer FORMERR; the
 *     EDNS fields too when an OPT RR was found, also with -EOPNOTSUPP, so
 *     the answer to an EDNS query carries an OPT, RFC 6891 7).
 * Accepts exactly one question, QR=0, and an optional OPT RR (RFC 6891);
 * EDNS versions are reported (q->edns_version), not judged here.
 * Return: 0; -EBADMSG (malformed: QDCOUNT != 1, truncated, bad name,
 * compression loop, trailing junk...); -EPROTO (QR=1 or shorter than a
 * header: drop silently); -EOPNOTSUPP (opcode other than QUERY: NOTIMP).
 */
int wire_parse_query(const uint8_t *buf, size_t len, struct wire_query *q);

/*
 * wire_build_response() - an answerless response to @query: same ID and
 * question bytes (original case), QR=1, RD copied, RA=1 (but not on
 * NOTIMP), @rcode, TC if @tc, and an OPT RR (our buffer size 1232, version
 * 0, DO echoed) if the query had one.  @rcode may be an extended RCODE
 * (RFC 6891 6.1.3: e.g. WIRE_RCODE_BADVERS) only if the query had an OPT.
 * @query/@qlen: the original query bytes; @q: its parse (the question must
 * have parsed; for FORMERR without a question pass q->question_end = 12).
 * @out/@outmax: destination.  Return: bytes written; -EINVAL; -ENOBUFS.
 */
int wire_build_response(const uint8_t *query, size_t qlen, const struct wire_query *q,
			uint16_t rcode, bool tc, uint8_t *out, size_t outmax);

/* An address record found on the answer's CNAME chain. */
struct wire_addr {
	struct addr addr;
	uint32_t ttl_s;		/* the RR's TTL as received */
	bool hint;		/* from an SVCB/HTTPS ipv4hint/ipv6hint (RFC 9460) */
};

struct wire_answer {
	uint16_t id;
	uint8_t rcode;
	bool tc;
	unsigned int chain_len;	/* CNAME/DNAME hops followed from the qname */
	size_t n_addrs;		/* addresses stored in the caller's array */
	size_t n_dropped;	/* address RRs ignored: off-chain owner, other sections */
	size_t n_hints;		/* addresses taken from SVCB/HTTPS hints (in n_addrs) */
	uint32_t min_ttl_s;	/* smallest TTL among answer-section RRs used */
	/* What wire_cap_ttls_walked() needs of the message it checked. */
	size_t len;		/* its length */
	size_t rr_off;		/* where its answer section starts */
	uint16_t counts[3];	/* ANCOUNT, NSCOUNT, ARCOUNT */
};

#define WIRE_CHAIN_MAX 16	/* CNAME/DNAME hops followed before giving up */

/*
 * wire_walk_answer() - the part that decides what may be pinned.  Checks
 * that @buf is a response whose question equals @q's (case-insensitive),
 * then follows the CNAME chain from the qname through the answer section
 * (records in any order, at most WIRE_CHAIN_MAX hops) and collects every A
 * and AAAA RR of class IN whose owner is on that chain, and the ipv4hint/
 * ipv6hint addresses of SVCB/HTTPS RRs owned by a chain name (RFC 9460:
 * a client may connect to them directly, so they are pinned under the same
 * rules; malformed SvcParams anywhere -> -EBADMSG, AliasMode hints are
 * ignored).  Records in the authority/additional sections, or owned by
 * other names, are never collected (counted in n_dropped).  Inconsistent
 * answers are malformed: a CNAME next to a DNAME above its owner that is
 * not the DNAME substitution, DNAMEs above a name that disagree (RFC 6672
 * 2.2), two CNAMEs of one owner with different targets (RFC 2181 10.1), a
 * name that reads header or RR fixed-field octets (see wire_cap_ttls()).
 * @out/@max: addresses; Return: 0 (@ret filled); -EBADMSG (malformed,
 * question mismatch); -ELOOP (chain longer than WIRE_CHAIN_MAX or a cycle);
 * -ENOBUFS (more than @max addresses).
 */
int wire_walk_answer(const uint8_t *buf, size_t len, const struct wire_query *q,
		     struct wire_addr *out, size_t max, struct wire_answer *ret);

#define WIRE_SVC_IPV4HINT 4	/* SvcParamKeys, RFC 9460 14.3.2 */
#define WIRE_SVC_IPV6HINT 6

/*
 * wire_svcb_check() - is @rdata/@rdlen a well-formed SVCB/HTTPS RDATA
 * (RFC 9460 2.2)?  SvcPriority, an uncompressed TargetName, then SvcParams
 * filling the RDATA exactly, keys strictly increasing and never 65535,
 * mandatory, alpn, no-default-alpn, port, ipv4hint and ipv6hint values in
 * their formats (7.1-7.4); other values are opaque.  Borrowed, not kept.
 * Return: the offset of the first SvcParam in @rdata; -EBADMSG.
 */
int wire_svcb_check(const uint8_t *rdata, size_t rdlen);

/*
 * wire_cap_ttls() - lower every RR TTL in answer, authority and additional
 * sections (not OPT) to at most @max_ttl_s, in place, so no client caches
 * an answer longer than its pin lasts.  Changes TTL octets only, and only
 * in a message where no name (question, owner, or a name in the RDATA of
 * the types a receiver decompresses, RFC 3597 4) reads a header or RR
 * fixed-field octet: so no name changes, and capping twice is capping once.
 * Return: 0; -EBADMSG (malformed, or such a name: @buf left unchanged).
 */
int wire_cap_ttls(uint8_t *buf, size_t len, uint32_t max_ttl_s);

/*
 * wire_cap_ttls_walked() - wire_cap_ttls() of @buf/@len, which
 * wire_walk_answer() returned 0 for, with @wa, and which has not changed
 * since (its TTLs aside): the message check that walk made is not made
 * again.  A length or section count other than @wa's falls back to
 * wire_cap_ttls().  Return: as wire_cap_ttls().
 */
int wire_cap_ttls_walked(uint8_t *buf, size_t len, uint32_t max_ttl_s,
			 const struct wire_answer *wa);

/*
 * wire_build_upstream_query() - the query netd sends upstream for @query:
 * its ID, RD and CD bits and question (original case), and, if it had
 * one, an OPT RR with its buffer size, version and DO bit but no options.
 * Anything else the client put in the message (other header bits,
 * answer/authority/additional records, EDNS options) is not forwarded, so
 * a sandbox cannot smuggle bytes to the resolver outside the qname
 * (RFC 1035 4.1, RFC 6891 6.1).
 * Return: bytes written to @out; -EINVAL (no parsed question); -ENOBUFS.
 */
int wire_build_upstream_query(const uint8_t *query, size_t qlen, const struct wire_query *q,
			      uint8_t *out, size_t outmax);

/*
 * wire_build_query() - a query of netd's own (RFC 1035 4.1.1-4.1.2): ID
 * @id, opcode QUERY, RD set, one question (@qname, @qtype, class IN), no
 * other section, no OPT.  @qname: presentation form without escapes,
 * labels separated by single dots, a trailing dot allowed, "." (or "")
 * for the root; written uncompressed, case kept; borrowed.  @out/@outmax:
 * destination (WIRE_HDR_LEN + WIRE_NAME_MAX + 4 always suffices).
 * Return: bytes written; -EINVAL (an empty label, one over 63 octets, a
 * backslash: RFC 1035 2.3.4); -EMSGSIZE (over 255 octets on the wire,
 * RFC 1035 3.1); -ENOBUFS.
 */
int wire_build_query(uint8_t *out, size_t outmax, uint16_t id, const char *qname, uint16_t qtype);

/* wire_set_id() - store @id (host order) as the message ID of @buf (>= 2 bytes). */
void wire_set_id(uint8_t *buf, uint16_t id);

/*
 * wire_cache_ttl() - how long a response may be served from a cache, in
 * seconds: the smallest TTL of every RR in all sections (OPT excluded,
 * RFC 2181 8 for the top bit).  Negative answers (NXDOMAIN, or NOERROR
 * with an empty answer section) are cached only with an SOA in the
 * authority section, for min(SOA TTL, SOA MINIMUM) and at most
 * @max_neg_s (RFC 2308 3, 5).  Truncated responses (TC=1) and rcodes
 * other than NOERROR/NXDOMAIN are not cacheable.
 * Return: 0 (@ttl_s filled, may be 0); -ENOENT (not cacheable); -EBADMSG.
 */
int wire_cache_ttl(const uint8_t *buf, size_t len, uint32_t max_neg_s, uint32_t *ttl_s);

/*
 * wire_age_ttls() - subtract @age_s from every RR TTL (OPT excluded), in
 * place, floor 0: what a cache hands out @age_s seconds after it stored
 * the response (RFC 1035 4.1.3 TTL is relative).  The same messages as
 * wire_cap_ttls() are refused.  Return: 0; -EBADMSG.
 */
int wire_age_ttls(uint8_t *buf, size_t len, uint32_t age_s);

/*
 * wire_question_end() - offset just past the question section of @buf
 * (header + QDCOUNT questions).  Return: the offset; -EBADMSG.
 */
int wire_question_end(const uint8_t *buf, size_t len);

/*
 * wire_rdata_names() - where the names a receiver decompresses lie in the
 * RDATA of @type (RFC 3597 4: NS, MD, MF, CNAME, SOA, MB, MG, MR, PTR,
 * MINFO, MX, RP, AFSDB, RT, SIG, PX, NXT, SRV, NAPTR; and KX, DNAME,
 * RRSIG, SVCB/HTTPS's TargetName): *@ret_n names, one after the other,
 * the first at offset *@ret_first of @rdata; 0 names for opaque RDATA.
 * @rdata/@rdlen borrowed; the names themselves are not read.
 * Return: 0; -EBADMSG (RDATA shorter than what precedes its first name).
 */
int wire_rdata_names(uint16_t type, const uint8_t *rdata, size_t rdlen, size_t *ret_first,
		     unsigned int *ret_n);

#define WIRE_SVC_ECH 5		/* the ech SvcParamKey (RFC 9460 14.3.2, RFC 9848) */
#define WIRE_ECH_MAX_CUTS 1024	/* byte ranges one rewrite may remove */

/* What wire_ech_strip() removed. */
struct wire_ech_result {
	unsigned int params;	/* ech SvcParams removed from RRs that stay */
	unsigned int rrs;	/* SVCB/HTTPS RRs dropped: their mandatory listed ech */
	unsigned int sigs;	/* RRSIGs dropped: they covered an RRset that changed */
};

/*
 * wire_ech_strip() - @in without its ECH configurations (RFC 9460, RFC
 * 9848): in every section, every ServiceMode (SvcPriority > 0) SVCB (64)
 * or HTTPS (65) RR of any class loses its ech SvcParam (key 5), or, if its
 * mandatory key lists ech (RFC 9460 8: the RR does not work without it),
 * is dropped whole; so are the RRSIGs covering an RRset that changed (their
 * signature no longer holds), and the AD bit is cleared.  AliasMode RRs
 * are left as they are (2.4.2: their SvcParams are ignored).  Everything
 * else is copied byte for byte; every RDLENGTH and section count that
 * changes is rewritten, and every compression pointer whose target moved
 * is moved with it (RFC 1035 4.1.4) wherever a name reads it.
 * @in/@len: a whole DNS message, borrowed.  @out/@outmax: where the result
 * goes (@outmax >= @len always suffices; never @in).  @res: filled.
 * Fails closed: a message it cannot walk, an SVCB/HTTPS RDATA
 * wire_svcb_check() refuses, a name (kept) that reads bytes the cut
 * removes or reads as a label an octet it patches (a count, an RDLENGTH,
 * a pointer it moves), a pointer to move that lies in opaque RDATA, or
 * more than WIRE_ECH_MAX_CUTS ranges to cut is refused whole, never
 * passed on with an ech in it.
 * Return: the bytes written to @out (< @len) when something was removed; 0
 * when @in carries no ech to remove (nothing written); -EBADMSG; -E2BIG
 * (too many cuts); -ENOBUFS (@outmax).
 */
int wire_ech_strip(const uint8_t *in, size_t len, uint8_t *out, size_t outmax,
		   struct wire_ech_result *res);

#endif
