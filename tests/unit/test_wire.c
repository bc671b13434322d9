/*
 * test_wire - the DNS codec on hand-built packets: queries (EDNS0, escapes,
 * limits, malformed), responses built from them, answer walks (CNAME/DNAME
 * chains in any order, loops, off-chain and additional-section addresses,
 * truncation) and TTL capping.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "dnsproxy/wire.h"

/* ---- a tiny packet writer ---------------------------------------------- */

struct pkt {
	uint8_t b[8192];
	size_t len;
};

static void p_u8(struct pkt *p, uint8_t v)
{
	p->b[p->len++] = v;
}

static void p_u16(struct pkt *p, uint16_t v)
{
	p_u8(p, (uint8_t)(v >> 8));
	p_u8(p, (uint8_t)v);
}

static void p_u32(struct pkt *p, uint32_t v)
{
	p_u16(p, (uint16_t)(v >> 16));
	p_u16(p, (uint16_t)v);
}

static void p_hdr(struct pkt *p, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an,
		  uint16_t ns, uint16_t ar)
{
	p->len = 0;
	p_u16(p, id);
	p_u16(p, flags);
	p_u16(p, qd);
	p_u16(p, an);
	p_u16(p, ns);
	p_u16(p, ar);
}

/* Write "a.b.c" uncompressed (no escapes); "" or "." is the root. Return offset. */
static size_t p_name(struct pkt *p, const char *name)
{
	size_t at = p->len;

	while (*name && strcmp(name, ".") != 0) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);

		p_u8(p, (uint8_t)l);
		memcpy(p->b + p->len, name, l);
		p->len += l;
		name += l + (dot ? 1 : 0);
	}
	p_u8(p, 0);
	return at;
}

static void p_ptr(struct pkt *p, size_t off)
{
	p_u16(p, (uint16_t)(0xc000 | off));
}

static void p_rrhdr(struct pkt *p, uint16_t type, uint16_t class, uint32_t ttl, uint16_t rdlen)
{
	p_u16(p, type);
	p_u16(p, class);
	p_u32(p, ttl);
	p_u16(p, rdlen);
}

static void p_a(struct pkt *p, const char *owner, uint32_t ttl, const char *ip)
{
	struct in_addr a;

	p_name(p, owner);
	p_rrhdr(p, WIRE_TYPE_A, WIRE_CLASS_IN, ttl, 4);
	assert_int_equal(inet_pton(AF_INET, ip, &a), 1);
	memcpy(p->b + p->len, &a, 4);
	p->len += 4;
}

static void p_aaaa(struct pkt *p, const char *owner, uint32_t ttl, const char *ip)
{
	struct in6_addr a;

	p_name(p, owner);
	p_rrhdr(p, WIRE_TYPE_AAAA, WIRE_CLASS_IN, ttl, 16);
	assert_int_equal(inet_pton(AF_INET6, ip, &a), 1);
	memcpy(p->b + p->len, &a, 16);
	p->len += 16;
}

/* A CNAME or DNAME with an uncompressed target. */
static void p_alias(struct pkt *p, uint16_t type, const char *owner, uint32_t ttl,
		    const char *target)
{
	size_t rdlen_at;

	p_name(p, owner);
	p_rrhdr(p, type, WIRE_CLASS_IN, ttl, 0);
	rdlen_at = p->len - 2;
	p_name(p, target);
	p->b[rdlen_at] = (uint8_t)((p->len - rdlen_at - 2) >> 8);
	p->b[rdlen_at + 1] = (uint8_t)(p->len - rdlen_at - 2);
}

static void p_opt(struct pkt *p, uint16_t udp, uint32_t ttl)
{
	p_u8(p, 0);
	p_rrhdr(p, WIRE_TYPE_OPT, udp, ttl, 0);
}

static void set_count(struct pkt *p, int which, uint16_t v)
{
	p->b[4 + 2 * which] = (uint8_t)(v >> 8);
	p->b[5 + 2 * which] = (uint8_t)v;
}

static void query_of(struct pkt *p, const char *name, uint16_t qtype)
{
	p_hdr(p, 0x1234, 0x0100, 1, 0, 0, 0);
	p_name(p, name);
	p_u16(p, qtype);
	p_u16(p, WIRE_CLASS_IN);
}

static struct wire_query parsed(const char *name, uint16_t qtype)
{
	struct wire_query q;
	struct pkt p;

	query_of(&p, name, qtype);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	return q;
}

/* Response header + question for @name, answer count set later. */
static void resp_of(struct pkt *p, const char *name, uint16_t qtype)
{
	p_hdr(p, 0xbeef, 0x8180, 1, 0, 0, 0);
	p_name(p, name);
	p_u16(p, qtype);
	p_u16(p, WIRE_CLASS_IN);
}

static void assert_addr(const struct wire_addr *a, const char *ip)
{
	char buf[ADDR_STRLEN];

	assert_string_equal(addr_format(&a->addr, buf, sizeof(buf)), ip);
}

/* ---- queries ------------------------------------------------------------ */

static void test_query_basic(void **state)
{
	struct wire_query q;
	struct pkt p;

	query_of(&p, "www.Example.COM", WIRE_TYPE_AAAA);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.opcode, 0);
	assert_string_equal(q.qname, "www.example.com");
	assert_true(q.qname_plain);
	assert_int_equal(q.qname_labels, 3);
	assert_int_equal(q.qtype, WIRE_TYPE_AAAA);
	assert_int_equal(q.qclass, WIRE_CLASS_IN);
	assert_int_equal(q.question_end, p.len);
	assert_false(q.has_opt);
	assert_int_equal(q.udp_size, 512);

	query_of(&p, ".", WIRE_TYPE_NS);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_string_equal(q.qname, ".");
	assert_int_equal(q.qname_labels, 0);

	query_of(&p, "_dmarc.my-host9.example", WIRE_TYPE_TXT);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_string_equal(q.qname, "_dmarc.my-host9.example");
	assert_true(q.qname_plain);
}

static void test_query_edns(void **state)
{
	struct wire_query q;
	struct pkt p;

	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	p_opt(&p, 4096, 0x00008000);	/* DO */
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_true(q.has_opt);
	assert_int_equal(q.udp_size, 4096);
	assert_true(q.do_bit);
	assert_int_equal(q.edns_version, 0);
	assert_int_equal(q.question_end, p.len - 11);

	/* RFC 6891 6.2.5: below 512 is taken as 512. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	p_opt(&p, 100, 0x00010000);	/* version 1 */
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_int_equal(q.udp_size, 512);
	assert_int_equal(q.edns_version, 1);
	assert_false(q.do_bit);

	/* With one well-formed option (cookie, 8 bytes). */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	p_u8(&p, 0);
	p_rrhdr(&p, WIRE_TYPE_OPT, 1232, 0, 12);
	p_u16(&p, 10);
	p_u16(&p, 8);
	p_u32(&p, 1);
	p_u32(&p, 2);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);

	/* Option length running past the RDATA. */
	p.b[p.len - 9] = 9;
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);

	/* Two OPT RRs: FORMERR (RFC 6891 6.1.1). */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 3, 2);
	p_opt(&p, 1232, 0);
	p_opt(&p, 1232, 0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);

	/* OPT owned by a name other than the root. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	p_name(&p, "x");
	p_rrhdr(&p, WIRE_TYPE_OPT, 1232, 0, 0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);

	/* ARCOUNT says 1, nothing there. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
}

static void test_query_malformed(void **state)
{
	struct wire_query q;
	struct pkt p;

	/* Shorter than a header, or a response: drop. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	assert_int_equal(wire_parse_query(p.b, 11, &q), -EPROTO);
	assert_int_equal(wire_parse_query(p.b, 0, &q), -EPROTO);
	p.b[2] |= 0x80;
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EPROTO);

	/* Other opcodes: NOTIMP, header still filled in. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	p.b[2] = 0x28;		/* opcode 5 (UPDATE) */
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EOPNOTSUPP);
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.opcode, 5);
	assert_int_equal(q.question_end, 12);

	/* QDCOUNT 0 and 2. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 0, 0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	assert_int_equal(q.id, 0x1234);
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 0, 2);
	p_name(&p, "example.org");
	p_u16(&p, 1);
	p_u16(&p, 1);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);

	/* Answers in a query. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_a(&p, "example.com", 60, "192.0.2.1");
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);

	/* Trailing junk. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	p_u8(&p, 0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);

	/* Every truncation of a valid query fails. */
	query_of(&p, "www.example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	p_opt(&p, 1232, 0);
	for (size_t n = 12; n < p.len; n++)
		assert_int_equal(wire_parse_query(p.b, n, &q), -EBADMSG);
	for (size_t n = 0; n < 12; n++)
		assert_int_equal(wire_parse_query(p.b, n, &q), -EPROTO);
}

static void test_query_names(void **state)
{
	struct wire_query q;
	struct pkt p;
	char name[300];

	/* Escapes: '.' in a label, NUL, space, backslash, 0xff. */
	p_hdr(&p, 1, 0, 1, 0, 0, 0);
	p_u8(&p, 3);
	memcpy(p.b + p.len, "a.B", 3);
	p.len += 3;
	p_u8(&p, 4);
	memcpy(p.b + p.len, "\0 \\\xff", 4);
	p.len += 4;
	p_name(&p, "com");
	p_u16(&p, 1);
	p_u16(&p, 1);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_string_equal(q.qname, "a\\.b.\\000\\032\\092\\255.com");
	assert_false(q.qname_plain);
	assert_int_equal(q.qname_labels, 3);

	/* Longest legal name: 255 octets (63+1)*3 + (61+1) + 1. */
	memset(name, 0, sizeof(name));
	for (int i = 0; i < 3; i++) {
		memset(name + i * 64, 'a', 63);
		name[i * 64 + 63] = '.';
	}
	memset(name + 192, 'b', 61);
	query_of(&p, name, 1);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_int_equal(strlen(q.qname), 253);
	/* One more octet: too long. */
	name[192 + 61] = 'b';
	query_of(&p, name, 1);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EMSGSIZE);

	/* A worst case for the presentation buffer: every byte escaped. */
	p_hdr(&p, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 4; i++) {
		p_u8(&p, i < 3 ? 63 : 61);
		memset(p.b + p.len, 0xfe, i < 3 ? 63 : 61);
		p.len += i < 3 ? 63 : 61;
	}
	p_u8(&p, 0);
	p_u16(&p, 1);
	p_u16(&p, 1);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_int_equal(strlen(q.qname), 250 * 4 + 3);
	assert_false(q.qname_plain);

	/* Label types 0x40 and 0x80 are not allowed. */
	query_of(&p, "example.com", 1);
	p.b[12] = 0x41;
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	query_of(&p, "example.com", 1);
	p.b[12] = 0x81;
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);

	/* Compression pointers: to itself, forwards, into a loop. */
	p_hdr(&p, 1, 0, 1, 0, 0, 0);
	p_ptr(&p, 12);
	p_u16(&p, 1);
	p_u16(&p, 1);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	p_hdr(&p, 1, 0, 1, 0, 0, 0);
	p_ptr(&p, 14);
	p_u16(&p, 1);
	p_u16(&p, 1);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	/* A pointer that is the last byte. */
	p_hdr(&p, 1, 0, 1, 0, 0, 0);
	p_u8(&p, 0xc0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
}

/* The FORMERR / NOTIMP for an EDNS query carries an OPT too (RFC 6891 7). */
static void test_query_edns_on_errors(void **state)
{
	struct wire_query q;
	struct pkt p;

	/* An answer RR in a query, then the OPT. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	set_count(&p, 3, 1);
	p_a(&p, "example.com", 60, "192.0.2.1");
	p_opt(&p, 4096, 0x00018000);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	assert_true(q.has_opt);
	assert_true(q.do_bit);
	assert_int_equal(q.edns_version, 1);
	assert_int_equal(q.question_end, 12);	/* not echoed: the header was bad */

	/* Unknown opcode: NOTIMP, still with the EDNS fields. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	p.b[2] = 0x78;		/* opcode 15 */
	set_count(&p, 3, 1);
	p_opt(&p, 1232, 0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EOPNOTSUPP);
	assert_true(q.has_opt);
	assert_int_equal(q.question_end, 12);

	/* QDCOUNT 0 with an OPT. */
	p_hdr(&p, 7, 0x0100, 0, 0, 0, 1);
	p_opt(&p, 1232, 0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	assert_true(q.has_opt);

	/* A malformed option: FORMERR, with an OPT in the answer. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	p_u8(&p, 0);
	p_rrhdr(&p, WIRE_TYPE_OPT, 1232, 0, 3);
	p_u16(&p, 10);
	p_u8(&p, 0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	assert_true(q.has_opt);

	/* An OPT in the authority section is not the query's OPT. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 2, 1);
	p_opt(&p, 1232, 0);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	assert_false(q.has_opt);

	/* Broken beyond finding the OPT: nothing claimed. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	set_count(&p, 3, 1);
	p_opt(&p, 1232, 0);
	p.len--;
	assert_int_equal(wire_parse_query(p.b, p.len, &q), -EBADMSG);
	assert_false(q.has_opt);
}

/* Extended RCODEs (BADVERS) and the RA bit. */
static void test_build_response_ext(void **state)
{
	uint8_t out[600];
	struct wire_query q;
	struct pkt p;
	int n;

	query_of(&p, "example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	p_opt(&p, 4096, 0x00018000);	/* version 1, DO */
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	n = wire_build_response(p.b, p.len, &q, WIRE_RCODE_BADVERS, false, out, sizeof(out));
	assert_int_equal(n, (int)q.question_end + 11);
	assert_int_equal(out[3] & 0x0f, 0);	/* low 4 bits of 16 */
	assert_int_equal(out[3] & 0x80, 0x80);	/* RA */
	assert_int_equal(out[4] << 8 | out[5], 1);	/* question echoed */
	assert_int_equal(out[6] << 8 | out[7], 0);	/* no answer */
	/* OPT: EXTENDED-RCODE 1 (16 >> 4), VERSION 0, DO echoed. */
	assert_memory_equal(out + q.question_end, "\0\0\x29\x04\xd0\x01\0\x80\0\0\0", 11);

	/* An extended RCODE needs an OPT to carry it. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	assert_int_equal(wire_build_response(p.b, p.len, &q, WIRE_RCODE_BADVERS, false, out,
					     sizeof(out)), -EINVAL);

	/* NOTIMP: no RA (RFC 8906 8.1.4); the others keep it. */
	n = wire_build_response(p.b, p.len, &q, WIRE_RCODE_NOTIMP, false, out, sizeof(out));
	assert_int_equal(n, (int)p.len);
	assert_int_equal(out[3], WIRE_RCODE_NOTIMP);
	n = wire_build_response(p.b, p.len, &q, WIRE_RCODE_REFUSED, false, out, sizeof(out));
	assert_int_equal(out[3], 0x80 | WIRE_RCODE_REFUSED);
	n = wire_build_response(p.b, p.len, &q, WIRE_RCODE_FORMERR, false, out, sizeof(out));
	assert_int_equal(out[3], 0x80 | WIRE_RCODE_FORMERR);
}

/* ---- responses built from a query --------------------------------------- */

static void test_build_response(void **state)
{
	uint8_t out[600];
	struct wire_query q;
	struct pkt p;
	int n;

	query_of(&p, "WWW.example.com", WIRE_TYPE_A);
	set_count(&p, 3, 1);
	p_opt(&p, 4096, 0x8000);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	n = wire_build_response(p.b, p.len, &q, WIRE_RCODE_NXDOMAIN, false, out, sizeof(out));
	assert_int_equal(n, (int)q.question_end + 11);
	assert_int_equal(out[0], 0x12);
	assert_int_equal(out[1], 0x34);
	assert_int_equal(out[2], 0x81);	/* QR, RD */
	assert_int_equal(out[3], 0x83);	/* RA, NXDOMAIN */
	assert_memory_equal(out + 4, "\0\1\0\0\0\0\0\1", 8);
	/* The question as the client wrote it (case kept). */
	assert_memory_equal(out + 12, p.b + 12, q.question_end - 12);
	assert_memory_equal(out + q.question_end, "\0\0\x29\x04\xd0\0\0\x80\0\0\0", 11);

	/* TC, no OPT. */
	query_of(&p, "example.com", WIRE_TYPE_A);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	n = wire_build_response(p.b, p.len, &q, WIRE_RCODE_NOERROR, true, out, sizeof(out));
	assert_int_equal(n, (int)p.len);
	assert_int_equal(out[2], 0x83);	/* QR, TC, RD */
	assert_int_equal(out[11], 0);

	/* FORMERR without question. */
	q.question_end = 12;
	n = wire_build_response(p.b, p.len, &q, WIRE_RCODE_FORMERR, false, out, sizeof(out));
	assert_int_equal(n, 12);
	assert_int_equal(out[5], 0);
	assert_int_equal(out[3] & 0xf, WIRE_RCODE_FORMERR);

	/* Too small a buffer. */
	q.question_end = p.len;
	assert_int_equal(wire_build_response(p.b, p.len, &q, 0, false, out, 20), -ENOBUFS);

	/* The response parses back as a response, not a query. */
	n = wire_build_response(p.b, p.len, &q, WIRE_RCODE_REFUSED, false, out, sizeof(out));
	assert_int_equal(wire_parse_query(out, (size_t)n, &q), -EPROTO);

	wire_set_id(out, 0xabcd);
	assert_int_equal(out[0], 0xab);
	assert_int_equal(out[1], 0xcd);
}

/* ---- answers ------------------------------------------------------------ */

static void test_walk_simple(void **state)
{
	struct wire_query q = parsed("www.example.com", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;

	resp_of(&p, "www.EXAMPLE.com", WIRE_TYPE_A);	/* case differs */
	set_count(&p, 1, 3);
	/* Owner compressed to the question. */
	p_ptr(&p, 12);
	p_rrhdr(&p, WIRE_TYPE_A, WIRE_CLASS_IN, 300, 4);
	p_u32(&p, 0xc0000201);
	p_a(&p, "www.example.com", 60, "192.0.2.2");
	p_a(&p, "www.example.com", 30, "192.0.2.2");	/* duplicate, lower TTL */
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.id, 0xbeef);
	assert_int_equal(r.rcode, 0);
	assert_false(r.tc);
	assert_int_equal(r.chain_len, 0);
	assert_int_equal(r.n_addrs, 2);
	assert_int_equal(r.n_dropped, 0);
	assert_int_equal(r.min_ttl_s, 30);
	assert_addr(&a[0], "192.0.2.1");
	assert_int_equal(a[0].ttl_s, 300);
	assert_addr(&a[1], "192.0.2.2");
	assert_int_equal(a[1].ttl_s, 30);

	/* Too many for the caller's array. */
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 1, &r), -ENOBUFS);

	/* Every truncation fails, and trailing junk too. */
	for (size_t n = 0; n < p.len; n++)
		assert_int_equal(wire_walk_answer(p.b, n, &q, a, 8, &r), -EBADMSG);
	p_u8(&p, 0);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
}

static void test_walk_question_mismatch(void **state)
{
	struct wire_query q = parsed("www.example.com", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;

	resp_of(&p, "www.example.org", WIRE_TYPE_A);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	resp_of(&p, "www.example.com", WIRE_TYPE_AAAA);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	/* QR=0 */
	resp_of(&p, "www.example.com", WIRE_TYPE_A);
	p.b[2] &= 0x7f;
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	/* No question */
	p_hdr(&p, 1, 0x8180, 0, 0, 0, 0);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	/* An empty NXDOMAIN is fine. */
	resp_of(&p, "www.example.com", WIRE_TYPE_A);
	p.b[3] = 0x83;
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.rcode, WIRE_RCODE_NXDOMAIN);
	assert_int_equal(r.n_addrs, 0);
}

static void test_walk_cname_out_of_order(void **state)
{
	struct wire_query q = parsed("www.example.com", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;

	/* www -> edge.cdn.test -> e1.cdn.test, records reversed, plus an
	 * off-chain A, an AAAA on the chain and an additional-section A. */
	resp_of(&p, "www.example.com", WIRE_TYPE_A);
	set_count(&p, 1, 5);
	set_count(&p, 3, 1);
	p_a(&p, "e1.cdn.test", 20, "203.0.113.10");
	p_a(&p, "evil.test", 20, "203.0.113.66");
	p_alias(&p, WIRE_TYPE_CNAME, "edge.cdn.test", 100, "e1.cdn.test");
	p_aaaa(&p, "edge.cdn.test", 50, "2001:db8::10");
	p_alias(&p, WIRE_TYPE_CNAME, "www.example.com", 200, "EDGE.cdn.test");
	p_a(&p, "www.example.com", 20, "203.0.113.99");	/* additional */
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.chain_len, 2);
	assert_int_equal(r.n_addrs, 2);
	assert_addr(&a[0], "203.0.113.10");
	assert_addr(&a[1], "2001:db8::10");
	assert_int_equal(r.n_dropped, 2);
	assert_int_equal(r.min_ttl_s, 20);
}

static void test_walk_cname_loops(void **state)
{
	struct wire_query q = parsed("a.test", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;
	char from[32], to[32];

	/* a -> b -> a */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 3);
	p_alias(&p, WIRE_TYPE_CNAME, "a.test", 60, "b.test");
	p_alias(&p, WIRE_TYPE_CNAME, "b.test", 60, "a.test");
	p_a(&p, "a.test", 60, "192.0.2.1");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -ELOOP);

	/* Self loop. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_alias(&p, WIRE_TYPE_CNAME, "a.test", 60, "a.test");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -ELOOP);

	/* Exactly WIRE_CHAIN_MAX hops is fine, one more is not. */
	for (int hops = WIRE_CHAIN_MAX; hops <= WIRE_CHAIN_MAX + 1; hops++) {
		resp_of(&p, "a.test", WIRE_TYPE_A);
		set_count(&p, 1, (uint16_t)(hops + 1));
		for (int i = 0; i < hops; i++) {
			if (i == 0)
				snprintf(from, sizeof(from), "a.test");
			else
				snprintf(from, sizeof(from), "h%d.test", i);
			snprintf(to, sizeof(to), "h%d.test", i + 1);
			p_alias(&p, WIRE_TYPE_CNAME, from, 60, to);
		}
		p_a(&p, to, 60, "192.0.2.7");
		if (hops == WIRE_CHAIN_MAX) {
			assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
			assert_int_equal(r.chain_len, WIRE_CHAIN_MAX);
			assert_int_equal(r.n_addrs, 1);
		} else {
			assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -ELOOP);
		}
	}
}

static void test_walk_compression_loop(void **state)
{
	struct wire_query q = parsed("a.test", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;
	size_t at;

	/* Owner is a pointer to itself. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	at = p.len;
	p_ptr(&p, at);
	p_rrhdr(&p, WIRE_TYPE_A, 1, 60, 4);
	p_u32(&p, 0xc0000201);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);

	/* Label then a pointer back to that label: a loop via a backwards
	 * pointer that is not before the pointer's own name start. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	at = p.len;
	p_u8(&p, 1);
	p_u8(&p, 'x');
	p_ptr(&p, at);
	p_rrhdr(&p, WIRE_TYPE_A, 1, 60, 4);
	p_u32(&p, 0xc0000201);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);

	/* A chain of pointers, each to the one before it: legal direction,
	 * but more than a name could ever need (127 labels) is refused. */
	for (int chain = 120; chain <= 200; chain += 80) {
		resp_of(&p, "a.test", WIRE_TYPE_A);
		set_count(&p, 1, 1);
		/* owner: 'x' label, then pointers hopping back to the qname */
		at = p.len;
		p_ptr(&p, 12);
		for (int i = 1; i < chain; i++)
			p_ptr(&p, at + 2 * (size_t)(i - 1));
		{
			size_t owner = p.len;

			p_u8(&p, 1);
			p_u8(&p, 'x');
			p_ptr(&p, owner - 2);
		}
		p_rrhdr(&p, WIRE_TYPE_A, 1, 60, 4);
		p_u32(&p, 0xc0000201);
		set_count(&p, 1, 0);
		set_count(&p, 3, 0);
		/* The pointers are bytes after the question: make them the RDATA of
		 * a TXT record so the message stays well-formed. */
		{
			struct pkt m;
			size_t body = p.len - at;

			resp_of(&m, "a.test", WIRE_TYPE_A);
			set_count(&m, 1, 2);
			p_name(&m, "pad.test");
			p_rrhdr(&m, WIRE_TYPE_TXT, 1, 60, (uint16_t)(2 * chain));
			memcpy(m.b + m.len, p.b + at, body);
			/* Re-aim the pointers at their new place. */
			for (int i = 1; i < chain; i++) {
				size_t o = m.len + 2 * (size_t)i;

				m.b[o] = (uint8_t)(0xc0 | (m.len + 2 * (size_t)(i - 1)) >> 8);
				m.b[o + 1] = (uint8_t)(m.len + 2 * (size_t)(i - 1));
			}
			{
				size_t owner = m.len + 2 * (size_t)chain;

				m.b[owner + 2] = (uint8_t)(0xc0 | (owner - 2) >> 8);
				m.b[owner + 3] = (uint8_t)(owner - 2);
			}
			m.len += body;
			if (chain <= WIRE_NAME_MAX / 2) {
				assert_int_equal(wire_walk_answer(m.b, m.len, &q, a, 8, &r), 0);
				assert_int_equal(r.n_dropped, 1);	/* x.a.test is off-chain */
			} else {
				assert_int_equal(wire_walk_answer(m.b, m.len, &q, a, 8, &r),
						 -EBADMSG);
			}
		}
	}

	/* Forward pointer in a CNAME target. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_name(&p, "a.test");
	p_rrhdr(&p, WIRE_TYPE_CNAME, 1, 60, 2);
	p_ptr(&p, p.len + 2);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);

	/* CNAME target that does not fill its RDATA. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_name(&p, "a.test");
	p_rrhdr(&p, WIRE_TYPE_CNAME, 1, 60, 9);
	p_name(&p, "b.test");
	p_u8(&p, 0);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
}

static void test_walk_bad_rdata(void **state)
{
	struct wire_query q = parsed("a.test", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;

	/* A with rdlength 5. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_name(&p, "a.test");
	p_rrhdr(&p, WIRE_TYPE_A, 1, 60, 5);
	p_u32(&p, 0xc0000201);
	p_u8(&p, 0);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);

	/* RDLENGTH beyond the end. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_name(&p, "a.test");
	p_rrhdr(&p, WIRE_TYPE_A, 1, 60, 4);
	p_u16(&p, 0xc000);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);

	/* Class CH A: not collected; TTL with the top bit set reads as 0. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 2);
	p_name(&p, "a.test");
	p_rrhdr(&p, WIRE_TYPE_A, 3, 60, 4);
	p_u32(&p, 0xc0000201);
	p_a(&p, "a.test", 0x80000000u, "192.0.2.9");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.n_addrs, 1);
	assert_int_equal(r.n_dropped, 1);
	assert_int_equal(a[0].ttl_s, 0);
}

static void test_walk_dname(void **state)
{
	struct wire_query q = parsed("www.old.test", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;

	/* DNAME only (no synthesized CNAME): old.test -> new.example. */
	resp_of(&p, "www.old.test", WIRE_TYPE_A);
	set_count(&p, 1, 3);
	p_a(&p, "www.new.example", 60, "198.51.100.5");
	p_a(&p, "www.old.test", 60, "198.51.100.6");	/* owner on the chain too */
	p_alias(&p, WIRE_TYPE_DNAME, "old.test", 90, "new.example");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.chain_len, 1);
	assert_int_equal(r.n_addrs, 2);
	assert_addr(&a[0], "198.51.100.5");

	/* DNAME + the synthesized CNAME, as servers send it. */
	resp_of(&p, "www.old.test", WIRE_TYPE_A);
	set_count(&p, 1, 3);
	p_alias(&p, WIRE_TYPE_DNAME, "old.test", 90, "new.example");
	p_alias(&p, WIRE_TYPE_CNAME, "www.old.test", 90, "www.new.example");
	p_a(&p, "www.new.example", 60, "198.51.100.5");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.chain_len, 1);
	assert_int_equal(r.n_addrs, 1);

	/* A DNAME does not apply to its own owner (RFC 6672 2.3). */
	q = parsed("old.test", WIRE_TYPE_A);
	resp_of(&p, "old.test", WIRE_TYPE_A);
	set_count(&p, 1, 2);
	p_alias(&p, WIRE_TYPE_DNAME, "old.test", 90, "new.example");
	p_a(&p, "new.example", 60, "198.51.100.7");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.chain_len, 0);
	assert_int_equal(r.n_addrs, 0);
	assert_int_equal(r.n_dropped, 1);

	/* A DNAME onto a subdomain of itself loops until the chain limit. */
	q = parsed("x.loop.test", WIRE_TYPE_A);
	resp_of(&p, "x.loop.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_alias(&p, WIRE_TYPE_DNAME, "loop.test", 90, "y.loop.test");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -ELOOP);
}

/* The answer must agree with itself about each hop (RFC 6672 2.2, RFC 2181 10.1). */
static void test_walk_chain_inconsistent(void **state)
{
	struct wire_query q = parsed("www.old.test", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;

	/* DNAME old.test -> new.example, but the "synthesized" CNAME says evil. */
	resp_of(&p, "www.old.test", WIRE_TYPE_A);
	set_count(&p, 1, 3);
	p_alias(&p, WIRE_TYPE_DNAME, "old.test", 90, "new.example");
	p_alias(&p, WIRE_TYPE_CNAME, "www.old.test", 90, "www.evil.example");
	p_a(&p, "www.evil.example", 60, "198.51.100.66");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	/* The same with the CNAME first. */
	resp_of(&p, "www.old.test", WIRE_TYPE_A);
	set_count(&p, 1, 3);
	p_alias(&p, WIRE_TYPE_CNAME, "www.old.test", 90, "www.evil.example");
	p_alias(&p, WIRE_TYPE_DNAME, "old.test", 90, "new.example");
	p_a(&p, "www.evil.example", 60, "198.51.100.66");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);

	/* Two DNAMEs above the name that disagree (one at old.test, one at test). */
	resp_of(&p, "www.old.test", WIRE_TYPE_A);
	set_count(&p, 1, 2);
	p_alias(&p, WIRE_TYPE_DNAME, "old.test", 90, "new.example");
	p_alias(&p, WIRE_TYPE_DNAME, "test", 90, "other.example");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	/* The same DNAME twice is one RRset, fine. */
	resp_of(&p, "www.old.test", WIRE_TYPE_A);
	set_count(&p, 1, 3);
	p_alias(&p, WIRE_TYPE_DNAME, "old.test", 90, "new.example");
	p_alias(&p, WIRE_TYPE_DNAME, "old.test", 30, "NEW.example");
	p_a(&p, "www.new.example", 60, "198.51.100.5");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.n_addrs, 1);
	assert_int_equal(r.min_ttl_s, 30);

	/* Two CNAMEs for one owner with different targets. */
	q = parsed("a.test", WIRE_TYPE_A);
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 4);
	p_alias(&p, WIRE_TYPE_CNAME, "a.test", 60, "b.test");
	p_alias(&p, WIRE_TYPE_CNAME, "a.test", 60, "c.test");
	p_a(&p, "b.test", 60, "192.0.2.2");
	p_a(&p, "c.test", 60, "192.0.2.3");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	/* A duplicate of the same CNAME is harmless. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 3);
	p_alias(&p, WIRE_TYPE_CNAME, "a.test", 60, "b.test");
	p_alias(&p, WIRE_TYPE_CNAME, "a.test", 60, "B.test");
	p_a(&p, "b.test", 60, "192.0.2.2");
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.chain_len, 1);
	assert_int_equal(r.n_addrs, 1);
}

/* An SVCB/HTTPS RR: priority, uncompressed target, then @params raw. */
static void p_svcb_prio(struct pkt *p, uint16_t type, const char *owner, uint32_t ttl,
			uint16_t prio, const char *target, const uint8_t *params, size_t plen)
{
	size_t rdlen_at;

	p_name(p, owner);
	p_rrhdr(p, type, WIRE_CLASS_IN, ttl, 0);
	rdlen_at = p->len - 2;
	p_u16(p, prio);
	p_name(p, target);
	memcpy(p->b + p->len, params, plen);
	p->len += plen;
	p->b[rdlen_at] = (uint8_t)((p->len - rdlen_at - 2) >> 8);
	p->b[rdlen_at + 1] = (uint8_t)(p->len - rdlen_at - 2);
}

static void p_svcb(struct pkt *p, uint16_t type, const char *owner, uint32_t ttl,
		   const char *target, const uint8_t *params, size_t plen)
{
	p_svcb_prio(p, type, owner, ttl, 1, target, params, plen);
}

static void test_walk_svcb_hints(void **state)
{
	/* alpn=h2, ipv4hint=198.51.100.41,198.51.100.42, ipv6hint=2001:db8::41 */
	static const uint8_t params[] = {
		0, 1, 0, 3, 2, 'h', '2',
		0, 4, 0, 8, 198, 51, 100, 41, 198, 51, 100, 42,
		0, 6, 0, 16, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x41,
	};
	static const uint8_t bad_len[] = { 0, 4, 0, 5, 198, 51, 100, 41, 1 };
	static const uint8_t overrun[] = { 0, 4, 0, 8, 198, 51, 100, 41 };
	static const uint8_t empty[] = { 0, 6, 0, 0 };
	struct wire_query q = parsed("svc.test", WIRE_TYPE_HTTPS);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;

	resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
	set_count(&p, 1, 1);
	p_svcb(&p, WIRE_TYPE_HTTPS, "svc.test", 77, ".", params, sizeof(params));
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.n_addrs, 3);
	assert_int_equal(r.n_hints, 3);
	assert_addr(&a[0], "198.51.100.41");
	assert_addr(&a[1], "198.51.100.42");
	assert_addr(&a[2], "2001:db8::41");
	assert_true(a[0].hint);
	assert_int_equal(a[2].ttl_s, 77);
	assert_int_equal(r.min_ttl_s, 77);

	/* Through a CNAME, SVCB (type 64) too; hints of an off-chain owner
	 * and in the additional section are not collected. */
	q = parsed("alias.test", WIRE_TYPE_SVCB);
	resp_of(&p, "alias.test", WIRE_TYPE_SVCB);
	set_count(&p, 1, 3);
	set_count(&p, 3, 1);
	p_svcb(&p, WIRE_TYPE_SVCB, "svc.test", 60, "pool.test", params, sizeof(params));
	p_alias(&p, WIRE_TYPE_CNAME, "alias.test", 60, "svc.test");
	p_svcb(&p, WIRE_TYPE_SVCB, "other.test", 60, ".", params + 7, 12);
	p_svcb(&p, WIRE_TYPE_SVCB, "svc.test", 60, ".", params + 7, 12);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.n_addrs, 3);
	assert_int_equal(r.n_dropped, 2);

	/* More hints than room. */
	q = parsed("svc.test", WIRE_TYPE_HTTPS);
	resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
	set_count(&p, 1, 1);
	p_svcb(&p, WIRE_TYPE_HTTPS, "svc.test", 77, ".", params, sizeof(params));
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 2, &r), -ENOBUFS);

	/* Malformed SvcParams: a hint list not a multiple of 4, a value
	 * running past the RDATA, an empty hint list. */
	resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
	set_count(&p, 1, 1);
	p_svcb(&p, WIRE_TYPE_HTTPS, "svc.test", 77, ".", bad_len, sizeof(bad_len));
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
	set_count(&p, 1, 1);
	p_svcb(&p, WIRE_TYPE_HTTPS, "svc.test", 77, ".", overrun, sizeof(overrun) - 1);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
	set_count(&p, 1, 1);
	p_svcb(&p, WIRE_TYPE_HTTPS, "svc.test", 77, ".", empty, sizeof(empty));
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
}

/* RFC 9460 2.2: "Clients MUST consider an RR malformed if ..." */
static void test_walk_svcb_malformed(void **state)
{
	static const struct {
		const char *what;
		uint8_t params[40];
		size_t len;
	} bad[] = {
		{ "keys out of order", { 0, 6, 0, 16, 0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
					 0, 0, 0, 1, 0, 4, 0, 4, 198, 51, 100, 41 }, 28 },
		{ "a key twice", { 0, 4, 0, 4, 198, 51, 100, 41, 0, 4, 0, 4, 198, 51, 100, 42 }, 16 },
		{ "the invalid key 65535", { 0, 4, 0, 4, 198, 51, 100, 41, 0xff, 0xff, 0, 0 }, 12 },
		{ "mandatory lists a key not present", { 0, 0, 0, 2, 0, 3, 0, 4, 0, 4, 198, 51,
							 100, 41 }, 14 },
		{ "mandatory lists itself", { 0, 0, 0, 2, 0, 0, 0, 4, 0, 4, 198, 51, 100, 41 }, 14 },
		{ "mandatory out of order", { 0, 0, 0, 4, 0, 4, 0, 1, 0, 1, 0, 3, 2, 'h', '2',
					      0, 4, 0, 4, 198, 51, 100, 41 }, 23 },
		{ "mandatory empty", { 0, 0, 0, 0, 0, 4, 0, 4, 198, 51, 100, 41 }, 12 },
		{ "alpn with an empty id", { 0, 1, 0, 1, 0, 0, 4, 0, 4, 198, 51, 100, 41 }, 13 },
		{ "alpn id past the value", { 0, 1, 0, 2, 2, 'h', 0, 4, 0, 4, 198, 51, 100, 41 }, 14 },
		{ "no-default-alpn with a value", { 0, 1, 0, 3, 2, 'h', '2', 0, 2, 0, 1, 0 }, 12 },
		{ "port of 3 octets", { 0, 3, 0, 3, 1, 187, 0, 0, 4, 0, 4, 198, 51, 100, 41 }, 15 },
	};
	static const uint8_t good[] = { 0, 0, 0, 4, 0, 1, 0, 4, 0, 1, 0, 3, 2, 'h', '2',
					0, 3, 0, 2, 1, 187, 0, 4, 0, 4, 198, 51, 100, 41 };
	struct wire_query q = parsed("svc.test", WIRE_TYPE_HTTPS);
	struct wire_addr a[8];
	struct wire_answer r;
	struct pkt p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
		set_count(&p, 1, 1);
		p_svcb(&p, WIRE_TYPE_HTTPS, "svc.test", 60, ".", bad[i].params, bad[i].len);
		if (wire_walk_answer(p.b, p.len, &q, a, 8, &r) != -EBADMSG)
			fail_msg("accepted SvcParams with %s", bad[i].what);
		/* Malformed is malformed off the chain and in AliasMode too. */
		resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
		set_count(&p, 3, 1);
		p_svcb_prio(&p, WIRE_TYPE_HTTPS, "other.test", 60, 0, "x.test", bad[i].params,
			    bad[i].len);
		if (wire_walk_answer(p.b, p.len, &q, a, 8, &r) != -EBADMSG)
			fail_msg("accepted an additional AliasMode RR with %s", bad[i].what);
	}

	/* mandatory=alpn,port alpn=h2 port=443 ipv4hint=198.51.100.41 */
	resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
	set_count(&p, 1, 1);
	p_svcb(&p, WIRE_TYPE_HTTPS, "svc.test", 60, "pool.test", good, sizeof(good));
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.n_addrs, 1);
	assert_addr(&a[0], "198.51.100.41");

	/* AliasMode: the SvcParams are ignored (RFC 9460 2.4.2), hints never pinned. */
	resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
	set_count(&p, 1, 1);
	p_svcb_prio(&p, WIRE_TYPE_HTTPS, "svc.test", 60, 0, "pool.test", good, sizeof(good));
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.n_addrs, 0);
	assert_int_equal(r.n_hints, 0);

	/* A compressed TargetName (2.2: uncompressed). */
	resp_of(&p, "svc.test", WIRE_TYPE_HTTPS);
	set_count(&p, 1, 1);
	p_name(&p, "svc.test");
	p_rrhdr(&p, WIRE_TYPE_HTTPS, WIRE_CLASS_IN, 60, 2 + 2 + 8);
	p_u16(&p, 1);
	p_ptr(&p, 12);
	memcpy(p.b + p.len, good + 21, 8);	/* ipv4hint */
	p.len += 8;
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
}

static void test_cap_ttls(void **state)
{
	size_t ns_at, ar_at, opt_at;
	struct pkt p;

	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 2);
	set_count(&p, 2, 1);
	set_count(&p, 3, 2);
	p_a(&p, "a.test", 7200, "192.0.2.1");		/* ttl at 16..19 after owner */
	p_a(&p, "a.test", 10, "192.0.2.2");
	ns_at = p.len;
	p_a(&p, "ns.test", 0x80000001u, "192.0.2.3");	/* authority */
	ar_at = p.len;
	p_a(&p, "ns.test", 86400, "192.0.2.4");	/* additional */
	opt_at = p.len;
	p_opt(&p, 4096, 0x00008000);
	assert_int_equal(wire_cap_ttls(p.b, p.len, 300), 0);

	{
		struct wire_query q = parsed("a.test", WIRE_TYPE_A);
		struct wire_addr a[4];
		struct wire_answer r;

		assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 4, &r), 0);
		assert_int_equal(a[0].ttl_s, 300);
		assert_int_equal(a[1].ttl_s, 10);
		assert_int_equal(r.n_dropped, 2);
	}
	/* authority: top-bit TTL became 0; additional capped; OPT untouched.
	 * "ns.test" is 9 octets, then type and class (4), then the TTL. */
	assert_memory_equal(p.b + ns_at + 13, "\0\0\0\0", 4);
	assert_memory_equal(p.b + ar_at + 13, "\0\0\x01\x2c", 4);
	assert_memory_equal(p.b + opt_at + 5, "\0\0\x80\0", 4);

	for (size_t n = 0; n < p.len; n++)
		assert_int_equal(wire_cap_ttls(p.b, n, 300), -EBADMSG);
}

/*
 * p_ttl_named() - a response for "a.test" A: an A on the qname; a TXT
 * whose TTL octets read "\1x" + a pointer to the question, i.e.
 * "x.a.test"; then an A owned by a pointer to that TTL (capping the TTL to
 * 300 would turn the third owner into the root).  Return: the TTL's offset.
 */
static size_t p_ttl_named(struct pkt *p)
{
	size_t txt_ttl;

	resp_of(p, "a.test", WIRE_TYPE_A);
	set_count(p, 1, 3);
	p_ptr(p, 12);
	p_rrhdr(p, WIRE_TYPE_A, WIRE_CLASS_IN, 60, 4);
	p_u32(p, 0xc6336447);
	p_ptr(p, 12);
	txt_ttl = p->len + 4;
	p_rrhdr(p, WIRE_TYPE_TXT, WIRE_CLASS_IN, 0x0178c00c, 2);
	p_u8(p, 1);
	p_u8(p, 't');
	p_ptr(p, txt_ttl);
	p_rrhdr(p, WIRE_TYPE_A, WIRE_CLASS_IN, 60, 4);
	p_u32(p, 0xc6336448);
	return txt_ttl;
}

/*
 * Names never read octets that wire.c edits in place: a pointer into a TTL
 * (capping it would rename the record), into the header (the ID is
 * rewritten), into an RDLENGTH; the answer is refused, never "capped".
 */
static void test_cap_ttls_names_fixed(void **state)
{
	struct wire_query q = parsed("a.test", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer r;
	uint8_t copy[8192];
	size_t txt_ttl, at;
	struct pkt p;

	txt_ttl = p_ttl_named(&p);
	memcpy(copy, p.b, p.len);
	assert_int_equal(wire_cap_ttls(copy, p.len, 300), -EBADMSG);
	assert_memory_equal(copy, p.b, p.len);	/* untouched */
	assert_int_equal(wire_age_ttls(copy, p.len, 5), -EBADMSG);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	/* The same message with the pointer aimed at a real name is fine. */
	p.b[txt_ttl + 4 + 2 + 2 + 1] = 12;
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), 0);
	assert_int_equal(r.n_addrs, 2);	/* both A RRs now own "a.test" */
	assert_int_equal(wire_cap_ttls(p.b, p.len, 300), 0);
	memcpy(copy, p.b, p.len);
	assert_int_equal(wire_cap_ttls(copy, p.len, 300), 0);
	assert_memory_equal(copy, p.b, p.len);	/* twice = once */

	/* An owner pointing into the header: offset 8, NSCOUNT's high octet,
	 * 0, reads as the root; it would change with the header. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_ptr(&p, 8);
	p_rrhdr(&p, WIRE_TYPE_A, WIRE_CLASS_IN, 60, 4);
	p_u32(&p, 0xc6336447);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	assert_int_equal(wire_cap_ttls(p.b, p.len, 300), -EBADMSG);

	/* A CNAME target pointing into the CNAME's own RDLENGTH (0x0002 reads
	 * as the root after a 0 octet). */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	p_ptr(&p, 12);
	at = p.len;
	p_rrhdr(&p, WIRE_TYPE_CNAME, WIRE_CLASS_IN, 60, 2);
	p_ptr(&p, at + 8);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &r), -EBADMSG);
	assert_int_equal(wire_cap_ttls(p.b, p.len, 300), -EBADMSG);

	/* An MX exchange (a name the client decompresses, RFC 3597 4)
	 * pointing into a TTL. */
	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 1);
	set_count(&p, 3, 2);
	p_a(&p, "a.test", 0x0178c00c, "192.0.2.1");
	p_name(&p, "a.test");
	p_rrhdr(&p, WIRE_TYPE_MX, WIRE_CLASS_IN, 60, 4);
	p_u16(&p, 10);
	p_ptr(&p, 24 + 8 + 4);	/* the A RR's TTL: question ends at 24, owner 8 octets */
	p_opt(&p, 1232, 0);
	assert_int_equal(wire_cap_ttls(p.b, p.len, 300), -EBADMSG);
	/* ... while one into the A RR's address (which reads c0 0c: the
	 * question's name) is only odd, not dangerous. */
	p.b[p.len - 11 - 1] = 24 + 8 + 10;
	p.b[24 + 8 + 10] = 0xc0;
	p.b[24 + 8 + 10 + 1] = 12;
	assert_int_equal(wire_cap_ttls(p.b, p.len, 300), 0);
}

/*
 * wire_cap_ttls_walked(): after a walk that passed, the same capping as
 * wire_cap_ttls() without its message check; a message the walk did not
 * pass (its length or counts differ from the walk's) is checked in full,
 * so one whose name reads a TTL is still refused and left as it was.
 */
static void test_cap_ttls_walked(void **state)
{
	struct wire_query q = parsed("a.test", WIRE_TYPE_A);
	struct wire_addr a[8];
	struct wire_answer good, r;
	uint8_t copy[8192], copy2[8192];
	struct pkt p, bad;

	resp_of(&p, "a.test", WIRE_TYPE_A);
	set_count(&p, 1, 2);
	set_count(&p, 2, 1);
	set_count(&p, 3, 1);
	p_a(&p, "a.test", 7200, "192.0.2.1");
	p_a(&p, "a.test", 10, "192.0.2.2");
	p_a(&p, "ns.test", 0x80000001u, "192.0.2.3");
	p_opt(&p, 4096, 0x00008000);
	assert_int_equal(wire_walk_answer(p.b, p.len, &q, a, 8, &good), 0);
	memcpy(copy, p.b, p.len);
	memcpy(copy2, p.b, p.len);
	assert_int_equal(wire_cap_ttls(copy, p.len, 300), 0);
	assert_int_equal(wire_cap_ttls_walked(copy2, p.len, 300, &good), 0);
	assert_memory_equal(copy, copy2, p.len);
	assert_memory_not_equal(copy, p.b, p.len);	/* 7200 and the top bit capped */

	/* The TTL that reads as a name (p_ttl_named()), with the good
	 * message's walk: refused, untouched. */
	p_ttl_named(&bad);
	memcpy(copy, bad.b, bad.len);
	assert_int_equal(wire_cap_ttls_walked(copy, bad.len, 300, &good), -EBADMSG);
	assert_memory_equal(copy, bad.b, bad.len);
	/* ... and with a walk of its own length but other counts. */
	r = good;
	r.len = bad.len;
	assert_int_equal(wire_cap_ttls_walked(copy, bad.len, 300, &r), -EBADMSG);
	assert_memory_equal(copy, bad.b, bad.len);
	/* A walk that says nothing (zeroed): checked in full, capped alike. */
	memset(&r, 0, sizeof(r));
	memcpy(copy2, p.b, p.len);
	assert_int_equal(wire_cap_ttls_walked(copy2, p.len, 300, &r), 0);
	memcpy(copy, p.b, p.len);
	assert_int_equal(wire_cap_ttls(copy, p.len, 300), 0);
	assert_memory_equal(copy, copy2, p.len);
	(void)state;
}

/* What goes upstream: question, RD/CD and EDNS basics; nothing smuggled. */
static void test_upstream_query(void **state)
{
	struct wire_query q;
	uint8_t out[512];
	struct pkt p;
	int n;

	query_of(&p, "ExAmple.com", WIRE_TYPE_A);
	p.b[2] |= 0x07;		/* Z/AA/TC-ish bits a client has no business setting */
	p.b[3] |= 0x70 | 0x10;	/* Z, AD, CD */
	set_count(&p, 3, 2);
	/* an OPT with a cookie option, then a TXT record carrying data */
	p_u8(&p, 0);
	p_rrhdr(&p, WIRE_TYPE_OPT, 4000, 0x00008000, 12);
	p_u16(&p, 10);
	p_u16(&p, 8);
	p_u32(&p, 0x53454352);
	p_u32(&p, 0x45540000);
	p_name(&p, "leak");
	p_rrhdr(&p, WIRE_TYPE_TXT, WIRE_CLASS_IN, 0, 7);
	p_u8(&p, 6);
	memcpy(p.b + p.len, "SECRET", 6);
	p.len += 6;
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);

	n = wire_build_upstream_query(p.b, p.len, &q, out, sizeof(out));
	assert_int_equal(n, (int)q.question_end + 11);
	assert_memory_equal(out, p.b, 2);			/* ID */
	assert_int_equal(out[2], 0x01);				/* RD only */
	assert_int_equal(out[3], 0x10);				/* CD only */
	assert_int_equal(out[4] << 8 | out[5], 1);		/* QDCOUNT */
	assert_int_equal(out[10] << 8 | out[11], 1);		/* ARCOUNT: OPT only */
	assert_memory_equal(out + 12, p.b + 12, q.question_end - 12);	/* 0x20 case kept */
	assert_int_equal(out[q.question_end], 0);		/* OPT owner root */
	assert_int_equal(out[q.question_end + 3] << 8 | out[q.question_end + 4], 4000);
	assert_int_equal(out[q.question_end + 7], 0x80);	/* DO */
	assert_int_equal(out[q.question_end + 9] << 8 | out[q.question_end + 10], 0);	/* no options */
	assert_null(memmem(out, (size_t)n, "SECRET", 6));
	assert_null(memmem(out, (size_t)n, "SECR", 4));
	assert_int_equal(wire_parse_query(out, (size_t)n, &q), 0);

	/* Without EDNS: header and question only. */
	query_of(&p, "example.com", WIRE_TYPE_AAAA);
	assert_int_equal(wire_parse_query(p.b, p.len, &q), 0);
	n = wire_build_upstream_query(p.b, p.len, &q, out, sizeof(out));
	assert_int_equal(n, (int)p.len);
	assert_int_equal(wire_build_upstream_query(p.b, p.len, &q, out, 10), -ENOBUFS);
}

/* netd's own query (netd verify's probes): what wire_parse_query() reads back. */
static void test_build_query(void **state)
{
	uint8_t out[WIRE_HDR_LEN + WIRE_NAME_MAX + 4];
	char name[300];
	struct wire_query q;
	struct pkt p;
	int n;

	(void)state;
	/* Byte for byte what query_of() writes: header with RD, one question. */
	n = wire_build_query(out, sizeof(out), 0x1234, "p3-00ff.netd-verify.invalid", WIRE_TYPE_A);
	query_of(&p, "p3-00ff.netd-verify.invalid", WIRE_TYPE_A);
	assert_int_equal(n, (int)p.len);
	assert_memory_equal(out, p.b, p.len);
	assert_int_equal(wire_parse_query(out, (size_t)n, &q), 0);
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.flags, 0x0100);
	assert_string_equal(q.qname, "p3-00ff.netd-verify.invalid");
	assert_int_equal(q.qtype, WIRE_TYPE_A);
	assert_int_equal(q.qclass, WIRE_CLASS_IN);
	assert_false(q.has_opt);

	/* Case kept on the wire (the parse lower-cases); a trailing dot is the same name. */
	n = wire_build_query(out, sizeof(out), 7, "PyPI.org.", WIRE_TYPE_AAAA);
	assert_int_equal(n, WIRE_HDR_LEN + 10 + 4);
	assert_memory_equal(out + WIRE_HDR_LEN, "\x04PyPI\x03org", 10);
	assert_int_equal(wire_parse_query(out, (size_t)n, &q), 0);
	assert_string_equal(q.qname, "pypi.org");
	assert_int_equal(q.qtype, WIRE_TYPE_AAAA);

	/* The root. */
	assert_int_equal(wire_build_query(out, sizeof(out), 7, ".", WIRE_TYPE_NS), WIRE_HDR_LEN + 5);
	assert_int_equal(wire_parse_query(out, WIRE_HDR_LEN + 5, &q), 0);
	assert_string_equal(q.qname, ".");

	/* Labels: 1-63 octets, no escapes (RFC 1035 2.3.4). */
	assert_int_equal(wire_build_query(out, sizeof(out), 7, "a..b", 1), -EINVAL);
	assert_int_equal(wire_build_query(out, sizeof(out), 7, ".a", 1), -EINVAL);
	assert_int_equal(wire_build_query(out, sizeof(out), 7, "a\\.b", 1), -EINVAL);
	memset(name, 'x', 64);
	name[64] = '\0';
	assert_int_equal(wire_build_query(out, sizeof(out), 7, name, 1), -EINVAL);
	name[63] = '\0';
	assert_int_equal(wire_build_query(out, sizeof(out), 7, name, 1), WIRE_HDR_LEN + 65 + 4);

	/* Names: 255 octets on the wire at most (RFC 1035 3.1): 4 x 63 + 2 + 1 = 255. */
	memset(name, 'x', 4 * 64);
	for (int i = 1; i < 4; i++)
		name[64 * i - 1] = '.';
	name[4 * 64 - 1] = '\0';	/* 63.63.63.63: 4 x 64 + 1 = 257 */
	assert_int_equal(wire_build_query(out, sizeof(out), 7, name, 1), -EMSGSIZE);
	name[4 * 64 - 3] = '\0';	/* 63.63.63.61: 255 */
	n = wire_build_query(out, sizeof(out), 7, name, 1);
	assert_int_equal(n, WIRE_HDR_LEN + WIRE_NAME_MAX + 4);
	assert_int_equal(wire_parse_query(out, (size_t)n, &q), 0);

	/* Room: exactly enough, one byte short. */
	assert_int_equal(wire_build_query(out, WIRE_HDR_LEN + 10 + 4, 7, "pypi.org", 1),
			 WIRE_HDR_LEN + 10 + 4);
	assert_int_equal(wire_build_query(out, WIRE_HDR_LEN + 10 + 3, 7, "pypi.org", 1), -ENOBUFS);
	assert_int_equal(wire_build_query(out, 5, 7, "pypi.org", 1), -ENOBUFS);
	assert_int_equal(wire_build_query(out, 5, 7, ".", 1), -ENOBUFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_basic),
		cmocka_unit_test(test_query_edns),
		cmocka_unit_test(test_query_malformed),
		cmocka_unit_test(test_query_names),
		cmocka_unit_test(test_query_edns_on_errors),
		cmocka_unit_test(test_build_response),
		cmocka_unit_test(test_build_response_ext),
		cmocka_unit_test(test_walk_simple),
		cmocka_unit_test(test_walk_question_mismatch),
		cmocka_unit_test(test_walk_cname_out_of_order),
		cmocka_unit_test(test_walk_cname_loops),
		cmocka_unit_test(test_walk_compression_loop),
		cmocka_unit_test(test_walk_bad_rdata),
		cmocka_unit_test(test_walk_dname),
		cmocka_unit_test(test_walk_chain_inconsistent),
		cmocka_unit_test(test_walk_svcb_hints),
		cmocka_unit_test(test_walk_svcb_malformed),
		cmocka_unit_test(test_cap_ttls),
		cmocka_unit_test(test_cap_ttls_names_fixed),
		cmocka_unit_test(test_cap_ttls_walked),
		cmocka_unit_test(test_upstream_query),
		cmocka_unit_test(test_build_query),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
