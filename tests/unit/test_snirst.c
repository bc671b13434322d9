/*
 * test_snirst - netd/sni/rst.c: the refused segment rewritten into the
 * server's RST (issue 32).  The expected packets were written by a separate
 * program (Python's struct, its own RFC 1071 sum), and every checksum is
 * also verified here by summing the headers as a receiver does.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "netd/sni/flow.h"
#include "netd/sni/rst.h"

/*
 * IPv4 10.0.0.2:40000 -> 192.0.2.50:443, TOS 0x10, ID 0x1234, DF, TTL 63,
 * 4 bytes of IP options, a NOP NOP NOP EOL TCP option, seq 0x01020304,
 * ack 0x0a0b0c0d, PSH|ACK, "hello"; its RST with seq 0x01020305.
 * IPv6 fd00:87::2:40001 -> 2001:db8:20::20:7443, traffic class 0xab, flow
 * label 0x12345, hop limit 63, a Destination Options header, seq
 * 0xfffffff0, ack 0x11223344, PSH|ACK, "hi!"; its RST with its own seq.
 */
static const uint8_t in4[] = {
	0x46, 0x10, 0x00, 0x35, 0x12, 0x34, 0x40, 0x00, 0x3f, 0x06, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0x00, 0x02, 0x32, 0x01, 0x01, 0x01, 0x00, 0x9c, 0x40, 0x01, 0xbb, 0x01, 0x02, 0x03, 0x04, 0x0a, 0x0b, 0x0c, 0x0d, 0x60, 0x18, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
};
static const uint8_t out4[] = {
	0x45, 0x10, 0x00, 0x28, 0x12, 0x34, 0x40, 0x00, 0x3f, 0x06, 0x5d, 0x58, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0x00, 0x02, 0x32, 0x9c, 0x40, 0x01, 0xbb, 0x01, 0x02, 0x03, 0x05, 0x0a, 0x0b, 0x0c, 0x0d, 0x50, 0x14, 0x00, 0x00, 0x2b, 0x82, 0x00, 0x00,
};
static const uint8_t in6[] = {
	0x6a, 0xb1, 0x23, 0x45, 0x00, 0x1f, 0x3c, 0x3f, 0xfd, 0x00, 0x00, 0x87, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x06, 0x00, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x9c, 0x41, 0x1d, 0x13, 0xff, 0xff, 0xff, 0xf0, 0x11, 0x22, 0x33, 0x44, 0x50, 0x18, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x68, 0x69, 0x21,
};
static const uint8_t out6[] = {
	0x6a, 0xb1, 0x23, 0x45, 0x00, 0x14, 0x06, 0x3f, 0xfd, 0x00, 0x00, 0x87, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x9c, 0x41, 0x1d, 0x13, 0xff, 0xff, 0xff, 0xf0, 0x11, 0x22, 0x33, 0x44, 0x50, 0x14, 0x00, 0x00, 0x86, 0xa2, 0x00, 0x00,
};

/* A receiver's check, written apart from rst.c: the one's-complement sum of
 * what a checksum covers, checksum included, is 0xffff. */
static int verify(const uint8_t *pseudo, size_t plen, const uint8_t *b, size_t len)
{
	uint64_t s = 0;

	for (size_t i = 0; i < plen; i += 2)
		s += (uint64_t)pseudo[i] * 256 + pseudo[i + 1];
	for (size_t i = 0; i < len; i += 2)
		s += (uint64_t)b[i] * 256 + (i + 1 < len ? b[i + 1] : 0);
	while (s > 0xffff)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

static void test_ipv4(void **state)
{
	uint8_t out[SNIRST_MAX], ph[12] = { 0 };
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(snirst_build(in4, sizeof(in4), 0x01020305, out), 40);
	assert_memory_equal(out, out4, sizeof(out4));
	assert_true(verify(NULL, 0, out, 20));	/* the IPv4 header */
	memcpy(ph, out + 12, 8);
	ph[9] = 6;
	ph[11] = 20;
	assert_true(verify(ph, sizeof(ph), out + 20, 20));	/* TCP */
	/* What the kernel will parse of it. */
	assert_int_equal(sniflow_pkt_parse(out, 40, &p), 0);
	assert_true(p.rst && p.ack && !p.syn && !p.fin && !p.urg && !p.odd_opt);
	assert_int_equal(p.seq, 0x01020305);
	assert_int_equal(p.ack_seq, 0x0a0b0c0d);
	assert_int_equal(p.len, 0);
}

static void test_ipv6(void **state)
{
	uint8_t out[SNIRST_MAX], ph[40] = { 0 };
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(snirst_build(in6, sizeof(in6), 0xfffffff0, out), 60);
	assert_memory_equal(out, out6, sizeof(out6));
	memcpy(ph, out + 8, 32);	/* RFC 8200 8.1: addresses, length, next header */
	ph[35] = 20;
	ph[39] = 6;
	assert_true(verify(ph, sizeof(ph), out + 40, 20));
	assert_int_equal(sniflow_pkt_parse(out, 60, &p), 0);
	assert_true(p.rst && p.ack && p.len == 0);
	assert_int_equal(p.sport, 40001);
	assert_int_equal(p.dport, 7443);
}

static void test_refused(void **state)
{
	uint8_t b[sizeof(in4)], out[SNIRST_MAX], ph[12] = { 0 };

	(void)state;
	memcpy(b, in4, sizeof(b));
	b[24 + 13] = 0x02;	/* a SYN: the server has no connection to reset */
	assert_int_equal(snirst_build(b, sizeof(b), 1, out), -EINVAL);
	b[24 + 13] = 0x14;	/* a RST already */
	assert_int_equal(snirst_build(b, sizeof(b), 1, out), -EINVAL);
	b[24 + 13] = 0x08;	/* no ACK: none in the reset either */
	assert_int_equal(snirst_build(b, sizeof(b), 7, out), 40);
	assert_int_equal(out[33], 0x04);
	assert_memory_equal(out + 28, "\0\0\0\0", 4);
	memcpy(ph, out + 12, 8);
	ph[9] = 6;
	ph[11] = 20;
	assert_true(verify(ph, sizeof(ph), out + 20, 20));
	memcpy(b, in4, sizeof(b));
	b[6] = 0x20;	/* a fragment */
	assert_int_equal(snirst_build(b, sizeof(b), 1, out), -EPROTO);
	assert_int_equal(snirst_build(in4, 30, 1, out), -EBADMSG);
	assert_int_equal(snirst_build(in6, 50, 1, out), -EBADMSG);
	assert_int_equal(snirst_build(in4, 0, 1, out), -EBADMSG);
}

/* RFC 1071's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2 (complement 220d). */
static void test_csum(void **state)
{
	static const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

	(void)state;
	assert_int_equal(snirst_csum_fold(snirst_csum(0, b, sizeof(b))), 0x220d);
	/* An odd length is padded with a zero byte. */
	assert_int_equal(snirst_csum_fold(snirst_csum(0, b, 1)), 0xffff);
	assert_int_equal(snirst_csum_fold(snirst_csum(0, b + 2, 1)), 0x0dff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_csum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
