/*
 * test_sniflow - the SNI check's flow table (netd/sni/flow.c): a real
 * ClientHello (curl's, tests/unit/sni/) cut into segments and sent in
 * order, out of order, retransmitted, in a SYN (TCP Fast Open); flows
 * without a SYN, a second ISN, the deadline, the packet bound, RST, the
 * table limit and the sweep.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "netd/sni/flow.h"
#include "tests/unit/sni/vectors.h"

#define DL 5000			/* deadline, ms */
#define ISN 0xfffffff0u		/* wraps: sequence arithmetic is mod 2^32 */

static struct sniflow_pkt pkt(uint16_t sport, uint32_t seq, const uint8_t *b, size_t len)
{
	struct sniflow_pkt p = { .sport = sport, .dport = 443, .seq = seq, .ack = true,
				 .payload = b, .len = len };

	assert_int_equal(addr_parse("10.0.0.2", &p.src), 0);
	assert_int_equal(addr_parse("192.0.2.50", &p.dst), 0);
	return p;
}

static struct sniflow_pkt syn(uint16_t sport, uint32_t isn)
{
	struct sniflow_pkt p = pkt(sport, isn, NULL, 0);

	p.syn = true;
	p.ack = false;
	return p;
}

static enum sniflow_step step(struct sniflow_tab *t, struct sniflow_pkt p, uint64_t now,
			      struct sni_result *r)
{
	return sniflow_packet(t, &p, now, DL, r);
}

static void test_in_order_and_gaps(void **state)
{
	const unsigned char *h = curl_tls_bin;
	size_t n = sizeof(curl_tls_bin);
	struct sniflow_tab *t;
	struct sni_result r;
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(sniflow_new(&t), 0);
	/* in order, three pieces, a pure ACK between */
	struct sniflow_meta m;

	assert_int_equal(step(t, syn(1000, ISN), 0, &r), SNIFLOW_ACCEPT);
	p = syn(1000, ISN);
	assert_true(sniflow_meta(t, &p, &m));
	assert_false(m.tagged);
	sniflow_tag(t, &p, 2, 1);
	assert_true(sniflow_meta(t, &p, &m));
	assert_true(m.tagged && m.tag[0] == 2 && m.tag[1] == 1 && m.start_ms == 0);
	assert_int_equal(step(t, pkt(1000, ISN + 1, NULL, 0), 1, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(1000, ISN + 1, h, 100), 2, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(1000, ISN + 101, h + 100, 200), 3, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(1000, ISN + 301, h + 300, n - 300), 4, &r), SNIFLOW_DECIDED);
	assert_int_equal(r.status, SNI_NAME);
	assert_string_equal(r.name, "allowed.example.com");
	p = pkt(1000, ISN + 1 + (uint32_t)n, NULL, 0);
	sniflow_settle(t, &p, true, 5);
	assert_int_equal(step(t, p, 6, &r), SNIFLOW_ACCEPTED);

	/* a gap is dropped; the retransmission fills it; overlap is read once */
	assert_int_equal(step(t, syn(1001, 7), 0, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(1001, 8 + 200, h + 200, n - 200), 1, &r), SNIFLOW_DROP);
	assert_int_equal(step(t, pkt(1001, 8, h, 150), 2, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(1001, 8, h, 100), 3, &r), SNIFLOW_ACCEPT);	/* old bytes */
	assert_int_equal(step(t, pkt(1001, 8 + 100, h + 100, n - 100), 4, &r), SNIFLOW_DECIDED);
	assert_string_equal(r.name, "allowed.example.com");
	p = pkt(1001, 8, NULL, 0);
	sniflow_settle(t, &p, false, 5);
	assert_int_equal(step(t, p, 6, &r), SNIFLOW_REJECTED);
	/* a rejected flow stays rejected, even through a new SYN */
	assert_int_equal(step(t, syn(1001, 99), 7, &r), SNIFLOW_REJECTED);
	assert_int_equal(sniflow_count(t), 2);
	sniflow_free(t);
}

static void test_unknown_late_and_limits(void **state)
{
	static uint8_t junk[16];
	struct sniflow_tab *t;
	struct sni_result r;
	struct sniflow_pkt p;

	(void)state;
	memset(junk, 'A', sizeof(junk));
	assert_int_equal(sniflow_new(&t), 0);
	/* no SYN: the start is unknown */
	assert_int_equal(step(t, pkt(2000, 1, curl_tls_bin, sizeof(curl_tls_bin)), 0, &r),
			 SNIFLOW_UNKNOWN);
	/* a second ISN while undecided */
	assert_int_equal(step(t, syn(2001, 10), 0, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, syn(2001, 10), 1, &r), SNIFLOW_ACCEPT);	/* retransmitted */
	assert_int_equal(step(t, syn(2001, 5000), 2, &r), SNIFLOW_REJECTED);
	/* the deadline: undecided, so far "GET AAA..." */
	assert_int_equal(step(t, syn(2002, 10), 0, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(2002, 11, (const uint8_t *)"GET ", 4), 10, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(2002, 15, junk, 1), DL, &r), SNIFLOW_LATE);
	assert_int_equal(r.status, SNI_MORE);
	assert_int_equal(r.proto, SNI_PROTO_HTTP1);
	/* the packet bound */
	assert_int_equal(step(t, syn(2003, 10), 0, &r), SNIFLOW_ACCEPT);
	for (unsigned int i = 0; i < SNIFLOW_PACKETS_MAX; i++)
		assert_int_equal(step(t, pkt(2003, 11, NULL, 0), 1, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(2003, 11, NULL, 0), 1, &r), SNIFLOW_LATE);
	/* RST forgets an undecided flow */
	assert_int_equal(step(t, syn(2004, 10), 0, &r), SNIFLOW_ACCEPT);
	p = pkt(2004, 11, NULL, 0);
	p.rst = true;
	assert_int_equal(step(t, p, 1, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(2004, 11, junk, 4), 2, &r), SNIFLOW_UNKNOWN);
	/* TCP Fast Open: the hello in the SYN */
	p = syn(2005, 10);
	p.payload = curl_tls_bin;
	p.len = sizeof(curl_tls_bin);
	assert_int_equal(step(t, p, 0, &r), SNIFLOW_DECIDED);
	assert_string_equal(r.name, "allowed.example.com");
	/* the sweep: undecided flows after the deadline, settled ones after SNIFLOW_KEEP_MS */
	{
		size_t before = sniflow_count(t);

		assert_true(sniflow_sweep(t, DL - 1, DL) == 0);
		assert_true(sniflow_sweep(t, DL, DL) > 0);	/* the undecided ones */
		assert_true(sniflow_count(t) > 0 && sniflow_count(t) < before);
		assert_int_equal(step(t, pkt(2005, 11, NULL, 0), DL + 1, &r), SNIFLOW_UNKNOWN);
		assert_int_equal(step(t, pkt(2001, 11, NULL, 0), DL + 1, &r), SNIFLOW_REJECTED);
		assert_true(sniflow_sweep(t, SNIFLOW_KEEP_MS + 10, DL) > 0);
		assert_int_equal(sniflow_count(t), 0);
	}
	/* the table limit */
	for (unsigned int i = 0; i < SNIFLOW_MAX; i++)
		assert_int_equal(step(t, syn((uint16_t)(10000 + i), 1), 0, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, syn(9999, 1), 0, &r), SNIFLOW_UNKNOWN);
	p = pkt(9999, 2, NULL, 0);
	sniflow_settle(t, &p, false, 0);	/* no room: not remembered */
	assert_int_equal(step(t, p, 1, &r), SNIFLOW_UNKNOWN);
	sniflow_free(t);
}

static void test_pkt_parse(void **state)
{
	/* IPv4 10.0.0.2:40000 -> 192.0.2.50:443, seq 0x01020304, PSH|ACK, "hi" */
	static const uint8_t v4[] = {
		0x45, 0, 0, 42, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 2, 192, 0, 2, 50,
		0x9c, 0x40, 0x01, 0xbb, 1, 2, 3, 4, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
		'h', 'i',
	};
	uint8_t b[sizeof(v4)];
	struct sniflow_pkt p;
	char s[ADDR_STRLEN];

	(void)state;
	assert_int_equal(sniflow_pkt_parse(v4, sizeof(v4), &p), 0);
	assert_string_equal(addr_format(&p.dst, s, sizeof(s)), "192.0.2.50");
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 443);
	assert_int_equal(p.seq, 0x01020304);
	assert_true(p.ack && !p.syn && !p.rst && !p.fin);
	assert_int_equal(p.len, 2);
	assert_memory_equal(p.payload, "hi", 2);
	memcpy(b, v4, sizeof(b));
	b[6] = 0x20;	/* MF */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), -EPROTO);
	memcpy(b, v4, sizeof(b));
	b[9] = 17;
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), -EPROTO);
	memcpy(b, v4, sizeof(b));
	b[3] = 43;	/* longer than what is there */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), -EBADMSG);
	memcpy(b, v4, sizeof(b));
	b[32] = 0xf0;	/* data offset 60 > the segment */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), -EBADMSG);
	assert_int_equal(sniflow_pkt_parse(v4, 30, &p), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_and_gaps),
		cmocka_unit_test(test_unknown_late_and_limits),
		cmocka_unit_test(test_pkt_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
