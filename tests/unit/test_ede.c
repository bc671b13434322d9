/*
 * test_ede - RFC 8914 Extended DNS Errors on denied answers: the option's
 * exact bytes inside our OPT RR, nothing without EDNS, the text's bounds
 * and ASCII-only rule, and a buffer too small.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dnsproxy/ede.h"

/* "www.example.com" A IN, ID 0x1234, RD, with (@opt) an OPT RR, size 4096. */
static size_t query(uint8_t *buf, bool opt)
{
	static const uint8_t q[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
				     3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e',
				     3, 'c', 'o', 'm', 0, 0, 1, 0, 1 };
	static const uint8_t o[] = { 0, 0, 41, 0x10, 0x00, 0, 0, 0, 0, 0, 0 };
	size_t n = sizeof(q);

	memcpy(buf, q, sizeof(q));
	if (opt) {
		buf[11] = 1;	/* ARCOUNT */
		memcpy(buf + n, o, sizeof(o));
		n += sizeof(o);
	}
	return n;
}

static void test_with_edns(void **state)
{
	uint8_t qb[64], out[512];
	struct wire_query q;
	size_t ql = query(qb, true);
	const char *text = "netd: blocked by the sandbox's policy: not in policy";
	size_t tl = strlen(text);
	int n;

	(void)state;
	assert_int_equal(wire_parse_query(qb, ql, &q), 0);
	assert_true(q.has_opt);
	n = ede_build_response(qb, ql, &q, WIRE_RCODE_NXDOMAIN, EDE_INFO_BLOCKED, text, out,
			       sizeof(out));
	assert_true(n > 0);
	assert_int_equal((size_t)n, 12 + 21 + 11 + 6 + tl);
	assert_int_equal(out[3] & 0x0f, WIRE_RCODE_NXDOMAIN);
	assert_int_equal(out[10] << 8 | out[11], 1);	/* ARCOUNT: the OPT */
	{
		const uint8_t *opt = out + 12 + 21;

		assert_int_equal(opt[0], 0);	/* root owner */
		assert_int_equal(opt[1] << 8 | opt[2], WIRE_TYPE_OPT);
		assert_int_equal(opt[9] << 8 | opt[10], 6 + tl);	/* RDLEN */
		assert_int_equal(opt[11] << 8 | opt[12], 15);	/* OPTION-CODE: EDE */
		assert_int_equal(opt[13] << 8 | opt[14], 2 + tl);	/* OPTION-LENGTH */
		assert_int_equal(opt[15] << 8 | opt[16], 15);	/* INFO-CODE: Blocked */
		assert_memory_equal(opt + 17, text, tl);	/* no NUL on the wire */
	}
	/* One byte short of room: refused, not truncated. */
	assert_int_equal(ede_build_response(qb, ql, &q, 3, 15, text, out, (size_t)n - 1), -ENOBUFS);
}

static void test_without_edns(void **state)
{
	uint8_t qb[64], out[512], plain[512];
	struct wire_query q;
	size_t ql = query(qb, false);
	int n, m;

	(void)state;
	assert_int_equal(wire_parse_query(qb, ql, &q), 0);
	assert_false(q.has_opt);
	n = ede_build_response(qb, ql, &q, WIRE_RCODE_REFUSED, 15, "x", out, sizeof(out));
	m = wire_build_response(qb, ql, &q, WIRE_RCODE_REFUSED, false, plain, sizeof(plain));
	assert_int_equal(n, m);		/* exactly the plain answer: no OPT, no EDE */
	assert_memory_equal(out, plain, (size_t)n);
	assert_int_equal(out[10] << 8 | out[11], 0);
}

static void test_text(void **state)
{
	char buf[EDE_TEXT_MAX + 1], big[400];

	(void)state;
	/* Issue 30, finding 8: the sandbox learns why, not the policy's name. */
	assert_string_equal(ede_policy_text(buf, sizeof(buf), "not-in-policy"),
			    "netd: blocked by the sandbox's policy: not in policy");
	assert_string_equal(ede_policy_text(buf, sizeof(buf), "qname-too-long"),
			    "netd: blocked by the sandbox's policy: qname too long");
	assert_string_equal(ede_policy_text(buf, sizeof(buf), NULL),
			    "netd: blocked by the sandbox's policy: not in policy");
	assert_string_equal(ede_policy_text(buf, sizeof(buf), "a\n\xc3"),
			    "netd: blocked by the sandbox's policy: a??");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(strlen(ede_policy_text(buf, sizeof(buf), big)), EDE_TEXT_MAX);
	/* EXTRA-TEXT past EDE_TEXT_MAX is cut, non-ASCII becomes '?'. */
	{
		uint8_t qb[64], out[512];
		struct wire_query q;
		size_t ql = query(qb, true);
		int n;

		assert_int_equal(wire_parse_query(qb, ql, &q), 0);
		n = ede_build_response(qb, ql, &q, 3, 15, big, out, sizeof(out));
		assert_int_equal(n, 12 + 21 + 11 + 6 + EDE_TEXT_MAX);
		n = ede_build_response(qb, ql, &q, 3, 15, "\x01z", out, sizeof(out));
		assert_memory_equal(out + n - 2, "?z", 2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_with_edns),
		cmocka_unit_test(test_without_edns),
		cmocka_unit_test(test_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
