/*
 * test_ipfix - the IPFIX encoder (netd/trail/ipfix.c) against bytes
 * computed by hand from RFC 7011 (Message Header 3.1, Field Specifiers 3.2,
 * Sets 3.3, Template Records 3.4.1, variable length 7), RFC 5103 (reverse
 * elements, PEN 29305) and IANA's element numbers; then whole messages
 * read back by an independent reader (tests/unit/ipfix_read.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/trail/ipfix.h"
#include "tests/unit/ipfix_read.h"

#define PEN 32473

/* One Template Record as written by hand: 18 field specifiers. */
#define TPL_FIELDS(src_id, dst_id, alen)                                                  \
	0x00, 0x98, 0x00, 0x08,		/* flowStartMilliseconds 152, 8 */                \
	0x00, 0x99, 0x00, 0x08,		/* flowEndMilliseconds 153, 8 */                  \
	0x00, src_id, 0x00, alen,	/* source address */                              \
	0x00, dst_id, 0x00, alen,	/* destination address */                         \
	0x00, 0x07, 0x00, 0x02,		/* sourceTransportPort 7 */                       \
	0x00, 0x0b, 0x00, 0x02,		/* destinationTransportPort 11 */                 \
	0x00, 0x04, 0x00, 0x01,		/* protocolIdentifier 4 */                        \
	0x00, 0x88, 0x00, 0x01,		/* flowEndReason 136 */                           \
	0x00, 0xef, 0x00, 0x01,		/* biflowDirection 239 */                         \
	0x00, 0x01, 0x00, 0x08,		/* octetDeltaCount 1 */                           \
	0x00, 0x02, 0x00, 0x08,		/* packetDeltaCount 2 */                          \
	0x80, 0x01, 0x00, 0x08, 0x00, 0x00, 0x72, 0x79,	/* reverse octets: E, 29305 */     \
	0x80, 0x02, 0x00, 0x08, 0x00, 0x00, 0x72, 0x79,	/* reverse packets */              \
	0x80, 0x01, 0xff, 0xff, 0x00, 0x00, 0x7e, 0xd9,	/* sandbox: PEN 32473, var */     \
	0x80, 0x02, 0xff, 0xff, 0x00, 0x00, 0x7e, 0xd9,	/* policy */                       \
	0x80, 0x03, 0xff, 0xff, 0x00, 0x00, 0x7e, 0xd9,	/* domain */                       \
	0x80, 0x04, 0xff, 0xff, 0x00, 0x00, 0x7e, 0xd9,	/* rule */                         \
	0x80, 0x05, 0xff, 0xff, 0x00, 0x00, 0x7e, 0xd9	/* verdict */

static const uint8_t want_tset[] = {
	0x00, 0x02, 0x00, 0xd4,		/* Set ID 2 (Templates), length 212 */
	0x01, 0x00, 0x00, 0x12,		/* Template 256, 18 fields */
	TPL_FIELDS(0x08, 0x0c, 0x04),	/* sourceIPv4Address 8, destinationIPv4Address 12 */
	0x01, 0x01, 0x00, 0x12,		/* Template 257 */
	TPL_FIELDS(0x1b, 0x1c, 0x10),	/* sourceIPv6Address 27, destinationIPv6Address 28 */
};

static struct ipfix_flow flow4(void)
{
	struct ipfix_flow f = {
		.sport = 40000, .dport = 443, .proto = IPPROTO_TCP, .end_reason = IPFIX_END_FLOW,
		.start_ms = 1700000000000ull, .end_ms = 1700000002500ull,
		.octets_out = 2452, .packets_out = 40, .octets_in = 1053778, .packets_in = 760,
		.sandbox = "sb1", .policy = "python-dev", .domain = "pypi.org", .rule = "pypi.org",
		.verdict = "allow",
	};

	assert_int_equal(addr_parse("10.87.0.2", &f.src), 0);
	assert_int_equal(addr_parse("198.51.100.10", &f.dst), 0);
	return f;
}

static const uint8_t want_rec4[] = {
	0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00,	/* start 1700000000000 ms */
	0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x71, 0xc4,	/* end 1700000002500 ms */
	0x0a, 0x57, 0x00, 0x02,				/* 10.87.0.2 */
	0xc6, 0x33, 0x64, 0x0a,				/* 198.51.100.10 */
	0x9c, 0x40, 0x01, 0xbb,				/* 40000, 443 */
	0x06, 0x03, 0x01,				/* tcp, end of flow, initiator */
	0, 0, 0, 0, 0, 0, 0x09, 0x94,			/* octets out 2452 */
	0, 0, 0, 0, 0, 0, 0x00, 0x28,			/* packets out 40 */
	0, 0, 0, 0, 0, 0x10, 0x14, 0x52,		/* octets in 1053778 */
	0, 0, 0, 0, 0, 0, 0x02, 0xf8,			/* packets in 760 */
	0x03, 's', 'b', '1',
	0x0a, 'p', 'y', 't', 'h', 'o', 'n', '-', 'd', 'e', 'v',
	0x08, 'p', 'y', 'p', 'i', '.', 'o', 'r', 'g',
	0x08, 'p', 'y', 'p', 'i', '.', 'o', 'r', 'g',
	0x05, 'a', 'l', 'l', 'o', 'w',
};

static void test_template_set(void **state)
{
	uint8_t buf[IPFIX_TEMPLATE_SET_MAX];
	int n;

	(void)state;
	n = ipfix_template_set(PEN, buf, sizeof(buf));
	assert_int_equal(n, sizeof(want_tset));
	assert_memory_equal(buf, want_tset, sizeof(want_tset));
	assert_int_equal(ipfix_template_set(PEN, buf, sizeof(want_tset) - 1), -ENOSPC);
	/* Another enterprise number: only its four octets change. */
	n = ipfix_template_set(0x01020304, buf, sizeof(buf));
	assert_int_equal(n, sizeof(want_tset));
	assert_memory_equal(buf + 8 + 11 * 4 + 2 * 8 + 4, "\x01\x02\x03\x04", 4);
}

static void test_record_v4(void **state)
{
	struct ipfix_flow f = flow4();
	uint8_t buf[IPFIX_RECORD_MAX];
	uint16_t tid = 0;
	int n;

	(void)state;
	n = ipfix_record(&f, buf, sizeof(buf), &tid);
	assert_int_equal(n, sizeof(want_rec4));
	assert_int_equal(tid, IPFIX_TEMPLATE_V4);
	assert_memory_equal(buf, want_rec4, sizeof(want_rec4));
	assert_int_equal(ipfix_record(&f, buf, sizeof(want_rec4) - 1, &tid), -ENOSPC);
	/* NULL strings are empty ones: one zero length octet each. */
	f.sandbox = f.policy = f.domain = f.rule = f.verdict = NULL;
	assert_int_equal(ipfix_record(&f, buf, sizeof(buf), &tid), 63 + 5);
	assert_memory_equal(buf + 63, "\0\0\0\0\0", 5);
	/* Two families, or none: no record. */
	assert_int_equal(addr_parse("2001:db8::1", &f.dst), 0);
	assert_int_equal(ipfix_record(&f, buf, sizeof(buf), &tid), -EAFNOSUPPORT);
	memset(&f.src, 0, sizeof(f.src));
	assert_int_equal(ipfix_record(&f, buf, sizeof(buf), &tid), -EAFNOSUPPORT);
}

static void test_record_v6_long_string(void **state)
{
	struct ipfix_flow f = flow4();
	uint8_t buf[IPFIX_RECORD_MAX];
	char dom[400];
	uint16_t tid = 0;
	int n;

	(void)state;
	assert_int_equal(addr_parse("fd00:87::2", &f.src), 0);
	assert_int_equal(addr_parse("2001:db8:20::20", &f.dst), 0);
	memset(dom, 'a', sizeof(dom) - 1);
	dom[sizeof(dom) - 1] = '\0';
	f.domain = dom;		/* 399 bytes: cut to 255, in the 3-octet form */
	n = ipfix_record(&f, buf, sizeof(buf), &tid);
	assert_int_equal(tid, IPFIX_TEMPLATE_V6);
	/* fixed part 87 octets, then sandbox (1+3), policy (1+10), domain (3+255), ... */
	assert_int_equal(n, 87 + 4 + 11 + 258 + 9 + 6);
	assert_memory_equal(buf + 16, "\xfd\x00\x00\x87\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
	assert_memory_equal(buf + 32, "\x20\x01\x0d\xb8\x00\x20\0\0\0\0\0\0\0\0\0\x20", 16);
	assert_memory_equal(buf + 87 + 4 + 11, "\xff\x00\xff", 3);	/* 255 = 0x00ff */
	assert_int_equal(buf[87 + 4 + 11 + 3], 'a');
	assert_int_equal(buf[87 + 4 + 11 + 3 + 254], 'a');
	assert_int_equal(buf[87 + 4 + 11 + 258], 8);	/* the rule follows at once */
	/* 254 bytes still fit the one-octet form. */
	dom[254] = '\0';
	n = ipfix_record(&f, buf, sizeof(buf), &tid);
	assert_int_equal(n, 87 + 4 + 11 + 255 + 9 + 6);
	assert_int_equal(buf[87 + 4 + 11], 254);
}

static void test_message(void **state)
{
	struct ipfix_flow f = flow4();
	uint8_t buf[2048], rec[IPFIX_RECORD_MAX], tset[IPFIX_TEMPLATE_SET_MAX];
	struct ipfix_msg m;
	uint16_t tid;
	int rl, tl;
	size_t len;

	(void)state;
	tl = ipfix_template_set(PEN, tset, sizeof(tset));
	rl = ipfix_record(&f, rec, sizeof(rec), &tid);
	ipfix_msg_init(&m, buf, sizeof(buf));
	assert_true(ipfix_msg_empty(&m));
	assert_int_equal(ipfix_msg_add_set(&m, tset, (size_t)tl), 0);
	assert_int_equal(ipfix_msg_add_record(&m, tid, rec, (size_t)rl), 0);
	assert_int_equal(ipfix_msg_add_record(&m, tid, rec, (size_t)rl), 0);
	len = ipfix_msg_finish(&m, 0x65000000, 7, 1);
	assert_int_equal(len, 16 + 212 + 4 + 2 * sizeof(want_rec4));
	assert_int_equal(m.records, 2);
	/* Header: version 10, length, export time, sequence 7, domain 1 (RFC 7011 3.1). */
	assert_memory_equal(buf, "\x00\x0a", 2);
	assert_int_equal(buf[2] << 8 | buf[3], (int)len);
	assert_memory_equal(buf + 4, "\x65\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x01", 12);
	assert_memory_equal(buf + 16, want_tset, sizeof(want_tset));
	/* One Data Set (ID 256) for both records. */
	assert_memory_equal(buf + 16 + 212, "\x01\x00", 2);
	assert_int_equal(buf[16 + 212 + 2] << 8 | buf[16 + 212 + 3], 4 + 2 * sizeof(want_rec4));
	assert_memory_equal(buf + 16 + 212 + 4, want_rec4, sizeof(want_rec4));
	assert_memory_equal(buf + 16 + 212 + 4 + sizeof(want_rec4), want_rec4, sizeof(want_rec4));

	/* A full message refuses and stays as it was. */
	ipfix_msg_init(&m, buf, 16 + 4 + sizeof(want_rec4));
	assert_int_equal(ipfix_msg_add_record(&m, tid, rec, (size_t)rl), 0);
	assert_int_equal(ipfix_msg_add_record(&m, tid, rec, (size_t)rl), -ENOSPC);
	assert_int_equal(ipfix_msg_add_set(&m, tset, (size_t)tl), -ENOSPC);
	assert_int_equal(ipfix_msg_finish(&m, 0, 0, 0), 16 + 4 + sizeof(want_rec4));
	assert_int_equal(m.records, 1);
}

/* Mixed families: a Data Set per run of one Template; all read back by the reader. */
static void test_read_back(void **state)
{
	static struct ipr_reader rd;
	static struct ipr_msg pm;
	struct ipfix_flow f4 = flow4(), f6 = flow4();
	uint8_t buf[4096], rec[IPFIX_RECORD_MAX], tset[IPFIX_TEMPLATE_SET_MAX];
	struct ipfix_msg m;
	char s[300];
	uint16_t tid;
	int n;

	(void)state;
	assert_int_equal(addr_parse("fd00:87::2", &f6.src), 0);
	assert_int_equal(addr_parse("2001:db8:20::20", &f6.dst), 0);
	f6.proto = IPPROTO_UDP;
	f6.end_reason = IPFIX_END_IDLE;
	f6.verdict = "would-deny:not-pinned";
	f6.octets_in = 0xfedcba9876543210ull;
	ipfix_msg_init(&m, buf, sizeof(buf));
	n = ipfix_template_set(PEN, tset, sizeof(tset));
	assert_int_equal(ipfix_msg_add_set(&m, tset, (size_t)n), 0);
	n = ipfix_record(&f4, rec, sizeof(rec), &tid);
	assert_int_equal(ipfix_msg_add_record(&m, tid, rec, (size_t)n), 0);
	n = ipfix_record(&f6, rec, sizeof(rec), &tid);
	assert_int_equal(ipfix_msg_add_record(&m, tid, rec, (size_t)n), 0);
	n = ipfix_record(&f4, rec, sizeof(rec), &tid);
	assert_int_equal(ipfix_msg_add_record(&m, tid, rec, (size_t)n), 0);
	n = (int)ipfix_msg_finish(&m, 1, 42, 9);

	memset(&rd, 0, sizeof(rd));
	assert_int_equal(ipr_parse(&rd, buf, (size_t)n, &pm), 0);
	assert_int_equal(pm.seq, 42);
	assert_int_equal(pm.domain, 9);
	assert_int_equal(pm.n_templates, 2);
	assert_int_equal(pm.n_data_sets, 3);	/* v4, v6, v4 */
	assert_int_equal(pm.n_rec, 3);
	assert_int_equal(pm.rec[0].tpl, 256);
	assert_int_equal(pm.rec[1].tpl, 257);
	assert_int_equal(ipr_uint(&pm.rec[0], 0, 1), 2452);
	assert_int_equal(ipr_uint(&pm.rec[0], IPFIX_PEN_REVERSE, 1), 1053778);
	assert_int_equal(ipr_uint(&pm.rec[0], IPFIX_PEN_REVERSE, 2), 760);
	assert_int_equal(ipr_uint(&pm.rec[0], 0, 152), 1700000000000ull);
	assert_int_equal(ipr_uint(&pm.rec[0], 0, 11), 443);
	assert_string_equal(ipr_str(&pm.rec[0], PEN, IPFIX_IE_SANDBOX, s, sizeof(s)), "sb1");
	assert_string_equal(ipr_str(&pm.rec[0], PEN, IPFIX_IE_POLICY, s, sizeof(s)), "python-dev");
	assert_string_equal(ipr_str(&pm.rec[1], PEN, IPFIX_IE_VERDICT, s, sizeof(s)),
			    "would-deny:not-pinned");
	assert_int_equal(ipr_uint(&pm.rec[1], 0, 4), IPPROTO_UDP);
	assert_int_equal(ipr_uint(&pm.rec[1], 0, 136), IPFIX_END_IDLE);
	assert_true(ipr_uint(&pm.rec[1], IPFIX_PEN_REVERSE, 1) == 0xfedcba9876543210ull);
	assert_int_equal(ipr_get(&pm.rec[1], 0, 27)->len, 16);
	assert_memory_equal(ipr_get(&pm.rec[1], 0, 28)->p, f6.dst.a, 16);

	/* A later message without Templates still reads: the reader kept them. */
	ipfix_msg_init(&m, buf, sizeof(buf));
	n = ipfix_record(&f6, rec, sizeof(rec), &tid);
	assert_int_equal(ipfix_msg_add_record(&m, tid, rec, (size_t)n), 0);
	n = (int)ipfix_msg_finish(&m, 2, 45, 9);
	assert_int_equal(ipr_parse(&rd, buf, (size_t)n, &pm), 0);
	assert_int_equal(pm.n_rec, 1);
	assert_int_equal(pm.n_templates, 0);
	/* ... and a reader that never saw them cannot. */
	memset(&rd, 0, sizeof(rd));
	assert_int_equal(ipr_parse(&rd, buf, (size_t)n, &pm), 0);
	assert_int_equal(pm.n_rec, 0);
	assert_int_equal(rd.unknown_sets, 1);
	/* Cut anywhere, the reader refuses rather than reads past the end. */
	for (int cut = 0; cut < n; cut++) {
		memset(&rd, 0, sizeof(rd));
		assert_int_not_equal(ipr_parse(&rd, buf, (size_t)cut, &pm), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template_set),
		cmocka_unit_test(test_record_v4),
		cmocka_unit_test(test_record_v6_long_string),
		cmocka_unit_test(test_message),
		cmocka_unit_test(test_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
