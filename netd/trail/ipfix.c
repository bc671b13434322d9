/*
 * ipfix - Templates, Data Records and Messages of RFC 7011, in network
 * byte order, built in the caller's buffers.  Pure.  The element list of
 * both Templates is one table (fields[]): the Template Set and every Data
 * Record are written from it, so they cannot disagree.
 */
#include "netd/trail/ipfix.h"

#include <errno.h>
#include <string.h>

/* What a field's value is taken from. */
enum src {
	S_START, S_END, S_SRC, S_DST, S_SPORT, S_DPORT, S_PROTO, S_REASON, S_BIDIR,
	S_OCT_OUT, S_PKT_OUT, S_OCT_IN, S_PKT_IN,
	S_SANDBOX, S_POLICY, S_DOMAIN, S_RULE, S_VERDICT,
};

#define VARLEN 65535	/* a variable-length field (RFC 7011 7) */
#define PEN_OURS 1	/* .pen: the configured enterprise number */

static const struct field {
	uint16_t id;		/* Information Element identifier (E bit apart) */
	uint16_t len;		/* octets; VARLEN; 0: the address's (4 or 16) */
	uint32_t pen;		/* 0: IANA; PEN_OURS; else this number */
	enum src src;
} fields[] = {
	{ 152, 8, 0, S_START },		/* flowStartMilliseconds */
	{ 153, 8, 0, S_END },		/* flowEndMilliseconds */
	{ 0, 0, 0, S_SRC },		/* sourceIPv4Address 8 / sourceIPv6Address 27 */
	{ 0, 0, 0, S_DST },		/* destinationIPv4Address 12 / ...IPv6Address 28 */
	{ 7, 2, 0, S_SPORT },		/* sourceTransportPort */
	{ 11, 2, 0, S_DPORT },		/* destinationTransportPort */
	{ 4, 1, 0, S_PROTO },		/* protocolIdentifier */
	{ 136, 1, 0, S_REASON },	/* flowEndReason */
	{ 239, 1, 0, S_BIDIR },		/* biflowDirection: 1 = initiator (RFC 5103 6.3) */
	{ 1, 8, 0, S_OCT_OUT },		/* octetDeltaCount */
	{ 2, 8, 0, S_PKT_OUT },		/* packetDeltaCount */
	{ 1, 8, IPFIX_PEN_REVERSE, S_OCT_IN },	/* reverseOctetDeltaCount (RFC 5103) */
	{ 2, 8, IPFIX_PEN_REVERSE, S_PKT_IN },	/* reversePacketDeltaCount */
	{ IPFIX_IE_SANDBOX, VARLEN, PEN_OURS, S_SANDBOX },
	{ IPFIX_IE_POLICY, VARLEN, PEN_OURS, S_POLICY },
	{ IPFIX_IE_DOMAIN, VARLEN, PEN_OURS, S_DOMAIN },
	{ IPFIX_IE_RULE, VARLEN, PEN_OURS, S_RULE },
	{ IPFIX_IE_VERDICT, VARLEN, PEN_OURS, S_VERDICT },
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

/* One Template Record for @family (RFC 7011 3.4.1, field specifiers 3.2). */
static size_t put_template(uint8_t *p, int family, uint32_t pen)
{
	bool v6 = family == AF_INET6;
	size_t n = 4;

	put16(p, v6 ? IPFIX_TEMPLATE_V6 : IPFIX_TEMPLATE_V4);
	put16(p + 2, (uint16_t)N_FIELDS);
	for (size_t i = 0; i < N_FIELDS; i++) {
		const struct field *fd = &fields[i];
		uint16_t id = fd->id, len = fd->len;
		uint32_t e = fd->pen == PEN_OURS ? pen : fd->pen;

		if (fd->src == S_SRC)
			id = v6 ? 27 : 8;
		else if (fd->src == S_DST)
			id = v6 ? 28 : 12;
		if (!len)
			len = v6 ? 16 : 4;
		/* The Enterprise bit, then the Enterprise Number (RFC 7011 3.2). */
		put16(p + n, e ? (uint16_t)(id | 0x8000) : id);
		put16(p + n + 2, len);
		n += 4;
		if (e) {
			put32(p + n, e);
			n += 4;
		}
	}
	return n;
}

int ipfix_template_set(uint32_t pen, uint8_t *buf, size_t cap)
{
	uint8_t tmp[IPFIX_TEMPLATE_SET_MAX];
	size_t n = IPFIX_SET_HEADER_LEN;

	n += put_template(tmp + n, AF_INET, pen);
	n += put_template(tmp + n, AF_INET6, pen);
	put16(tmp, IPFIX_SET_TEMPLATE);
	put16(tmp + 2, (uint16_t)n);
	if (n > cap)
		return -ENOSPC;
	memcpy(buf, tmp, n);
	return (int)n;
}

/* A variable-length string (RFC 7011 7): 1 length octet, or 255 and 2 octets. */
static size_t put_str(uint8_t *p, const char *s)
{
	size_t len = s ? strnlen(s, IPFIX_STR_MAX) : 0;

	if (len < 255) {
		p[0] = (uint8_t)len;
		memcpy(p + 1, s ? s : "", len);
		return 1 + len;
	}
	p[0] = 255;
	put16(p + 1, (uint16_t)len);
	memcpy(p + 3, s, len);
	return 3 + len;
}

int ipfix_record(const struct ipfix_flow *f, uint8_t *buf, size_t cap, uint16_t *template_id)
{
	uint8_t tmp[IPFIX_RECORD_MAX];
	size_t alen = addr_len(f->src.family), n = 0;

	if (!alen || f->dst.family != f->src.family)
		return -EAFNOSUPPORT;
	for (size_t i = 0; i < N_FIELDS; i++) {
		uint8_t *p = tmp + n;

		switch (fields[i].src) {
		case S_START: put64(p, f->start_ms); n += 8; break;
		case S_END: put64(p, f->end_ms); n += 8; break;
		case S_SRC: memcpy(p, f->src.a, alen); n += alen; break;
		case S_DST: memcpy(p, f->dst.a, alen); n += alen; break;
		case S_SPORT: put16(p, f->sport); n += 2; break;
		case S_DPORT: put16(p, f->dport); n += 2; break;
		case S_PROTO: *p = f->proto; n += 1; break;
		case S_REASON: *p = f->end_reason; n += 1; break;
		case S_BIDIR: *p = 1; n += 1; break;
		case S_OCT_OUT: put64(p, f->octets_out); n += 8; break;
		case S_PKT_OUT: put64(p, f->packets_out); n += 8; break;
		case S_OCT_IN: put64(p, f->octets_in); n += 8; break;
		case S_PKT_IN: put64(p, f->packets_in); n += 8; break;
		case S_SANDBOX: n += put_str(p, f->sandbox); break;
		case S_POLICY: n += put_str(p, f->policy); break;
		case S_DOMAIN: n += put_str(p, f->domain); break;
		case S_RULE: n += put_str(p, f->rule); break;
		case S_VERDICT: n += put_str(p, f->verdict); break;
		}
	}
	if (n > cap)
		return -ENOSPC;
	memcpy(buf, tmp, n);
	*template_id = alen == 16 ? IPFIX_TEMPLATE_V6 : IPFIX_TEMPLATE_V4;
	return (int)n;
}

void ipfix_msg_init(struct ipfix_msg *m, uint8_t *buf, size_t cap)
{
	*m = (struct ipfix_msg){ .buf = buf, .cap = cap > 65535 ? 65535 : cap,
				 .len = IPFIX_HEADER_LEN };
}

bool ipfix_msg_empty(const struct ipfix_msg *m)
{
	return m->len == IPFIX_HEADER_LEN;
}

/* Close the open Data Set: its length in its header.  (No padding: RFC 7011 3.3.1 makes it optional.) */
static void close_set(struct ipfix_msg *m)
{
	if (!m->set_off)
		return;
	put16(m->buf + m->set_off + 2, (uint16_t)(m->len - m->set_off));
	m->set_off = 0;
}

int ipfix_msg_add_set(struct ipfix_msg *m, const uint8_t *set, size_t len)
{
	if (m->len + len > m->cap)
		return -ENOSPC;
	close_set(m);
	memcpy(m->buf + m->len, set, len);
	m->len += len;
	return 0;
}

int ipfix_msg_add_record(struct ipfix_msg *m, uint16_t template_id, const uint8_t *rec,
			 size_t len)
{
	bool same = m->set_off && m->set_id == template_id;
	size_t need = len + (same ? 0 : IPFIX_SET_HEADER_LEN);

	if (m->len + need > m->cap)
		return -ENOSPC;
	if (!same) {
		close_set(m);
		m->set_off = m->len;
		m->set_id = template_id;
		put16(m->buf + m->len, template_id);	/* a Data Set's ID is its Template's */
		m->len += IPFIX_SET_HEADER_LEN;
	}
	memcpy(m->buf + m->len, rec, len);
	m->len += len;
	m->records++;
	return 0;
}

size_t ipfix_msg_finish(struct ipfix_msg *m, uint32_t export_s, uint32_t seq, uint32_t domain)
{
	close_set(m);
	put16(m->buf, IPFIX_VERSION);
	put16(m->buf + 2, (uint16_t)m->len);
	put32(m->buf + 4, export_s);
	put32(m->buf + 8, seq);
	put32(m->buf + 12, domain);
	return m->len;
}
