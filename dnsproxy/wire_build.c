/*
 * wire_build - the DNS messages netd writes (RFC 1035 4.1, RFC 6891 6.1):
 * answerless responses to a sandbox's query, the query sent upstream for
 * it, and a query of netd's own (`netd verify`'s probes).  Pure:
 * caller-provided buffers, no allocation, no logging.  Reading messages
 * and editing them in place is wire.c's.
 */
#include "dnsproxy/wire.h"

#include <errno.h>
#include <string.h>

#define HDR_QR       0x8000
#define HDR_RD       0x0100
#define HDR_TC       0x0200
#define HDR_RA       0x0080
#define HDR_CD       0x0010

#define OPT_OUR_UDP_SIZE 1232	/* DNS flag day 2020 default */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/*
 * A header (@id, @flags, QDCOUNT 1 if there is a question, no answer or
 * authority), @qsec bytes of @query's question section, and with @opt an
 * OPT RR (RFC 6891 6.1.2: root owner, @udp_size as CLASS, @opt_ttl as
 * TTL, no options; ARCOUNT 1).  @out has room (the callers checked).
 */
static void put_message(uint8_t *out, const uint8_t *query, size_t qsec, uint16_t id,
			uint16_t flags, bool opt, uint16_t udp_size, uint32_t opt_ttl)
{
	put16(out, id);
	put16(out + 2, flags);
	put16(out + 4, qsec ? 1 : 0);
	put16(out + 6, 0);
	put16(out + 8, 0);
	put16(out + 10, opt ? 1 : 0);
	memcpy(out + WIRE_HDR_LEN, query + WIRE_HDR_LEN, qsec);
	if (opt) {
		uint8_t *o = out + WIRE_HDR_LEN + qsec;

		o[0] = 0;	/* owner: root */
		put16(o + 1, WIRE_TYPE_OPT);
		put16(o + 3, udp_size);
		put32(o + 5, opt_ttl);
		put16(o + 9, 0);	/* RDLEN: no options */
	}
}

int wire_build_response(const uint8_t *query, size_t qlen, const struct wire_query *q,
			uint16_t rcode, bool tc, uint8_t *out, size_t outmax)
{
	size_t qsec, need;
	uint16_t flags;

	if (qlen < WIRE_HDR_LEN || q->question_end < WIRE_HDR_LEN || q->question_end > qlen)
		return -EINVAL;
	/* RFC 6891 6.1.3: the upper 8 bits of a 12-bit RCODE live in the OPT. */
	if (rcode > 0xfff || (rcode > 0xf && !q->has_opt))
		return -EINVAL;
	qsec = q->question_end - WIRE_HDR_LEN;
	need = WIRE_HDR_LEN + qsec + (q->has_opt ? 11 : 0);
	if (need > outmax)
		return -ENOBUFS;

	flags = HDR_QR | (uint16_t)(q->opcode & 0x0f) << 11 | (q->flags & HDR_RD) | (rcode & 0x0f);
	/* RA: recursion is what netd offers, but not for a kind of query it
	 * does not implement (RFC 8906 8.1.4 expects no RA on NOTIMP). */
	if (rcode != WIRE_RCODE_NOTIMP)
		flags |= HDR_RA;
	if (tc)
		flags |= HDR_TC;
	/* OPT: extended rcode, version 0 (the one netd implements, RFC 6891
	 * 6.1.3 also for BADVERS), DO echoed (RFC 3225 3), no other flags. */
	put_message(out, query, qsec, q->id, flags, q->has_opt, OPT_OUR_UDP_SIZE,
		    (uint32_t)(rcode >> 4) << 24 | (q->do_bit ? 0x8000u : 0));
	return (int)need;
}

int wire_build_upstream_query(const uint8_t *query, size_t qlen, const struct wire_query *q,
			      uint8_t *out, size_t outmax)
{
	size_t qsec, need;

	if (qlen < WIRE_HDR_LEN || q->question_end <= WIRE_HDR_LEN || q->question_end > qlen)
		return -EINVAL;
	qsec = q->question_end - WIRE_HDR_LEN;
	need = WIRE_HDR_LEN + qsec + (q->has_opt ? 11 : 0);
	if (need > outmax)
		return -ENOBUFS;
	/* QUERY with the client's RD and CD, nothing else of its header; OPT
	 * with the client's size (it gets TC above it), version and DO. */
	put_message(out, query, qsec, q->id, (uint16_t)(q->flags & (HDR_RD | HDR_CD)), q->has_opt,
		    q->udp_size, (uint32_t)q->edns_version << 16 | (q->do_bit ? 0x8000u : 0));
	return (int)need;
}

int wire_build_query(uint8_t *out, size_t outmax, uint16_t id, const char *qname, uint16_t qtype)
{
	const char *s = strcmp(qname, ".") == 0 ? "" : qname;
	size_t n = WIRE_HDR_LEN, lab;

	/* The question (RFC 1035 4.1.2): the name's labels, uncompressed. */
	for (; *s; s += lab + (s[lab] == '.')) {
		lab = strcspn(s, ".\\");
		/* RFC 1035 2.3.4: a label is 1-63 octets; no \ escape is decoded here */
		if (lab == 0 || lab > 63 || s[lab] == '\\')
			return -EINVAL;
		/* RFC 1035 3.1: a name is at most 255 octets, its root label included */
		if (n - WIRE_HDR_LEN + 1 + lab + 1 > WIRE_NAME_MAX)
			return -EMSGSIZE;
		if (n + 1 + lab > outmax)
			return -ENOBUFS;
		out[n] = (uint8_t)lab;
		memcpy(out + n + 1, s, lab);
		n += 1 + lab;
	}
	if (n + 5 > outmax)
		return -ENOBUFS;
	out[n] = 0;	/* the root label */
	put16(out + n + 1, qtype);
	put16(out + n + 3, WIRE_CLASS_IN);
	/* The header (RFC 1035 4.1.1): QUERY, RD, one question, nothing else. */
	put16(out, id);
	put16(out + 2, HDR_RD);
	put16(out + 4, 1);
	memset(out + 6, 0, WIRE_HDR_LEN - 6);
	return (int)(n + 5);
}
