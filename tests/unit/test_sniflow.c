/*
 * test_sniflow - the SNI check's flow table (netd/sni/flow.c): a real
 * ClientHello (curl's, tests/unit/sni/) cut into segments and sent in
 * order, out of order, retransmitted, in a SYN (TCP Fast Open); flows
 * without a SYN, a second ISN, the deadline, the packet bound, RST, the
 * table limit and the sweep.  Issue 30: read bytes sent again with other
 * bytes (a first segment the server discarded, SYN data it did not take),
 * the wait for the server's acknowledgment, urgent data and TCP-MD5/AO
 * options, a new connection on a settled flow's tuple, per-owner shares.
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
#define OWNERS 8
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
	return sniflow_packet(t, &p, 0, now, DL, r);
}

/* The server's segment acknowledging @ack_seq of @sport's flow. */
static enum sniflow_step reply(struct sniflow_tab *t, uint16_t sport, uint32_t ack_seq, uint64_t now)
{
	struct sniflow_pkt p = pkt(sport, 0, NULL, 0), r = p;

	r.src = p.dst;
	r.dst = p.src;
	r.sport = p.dport;
	r.dport = p.sport;
	r.ack_seq = ack_seq;
	return sniflow_reply(t, &r, now);
}

static void test_in_order_and_gaps(void **state)
{
	const unsigned char *h = curl_tls_bin;
	size_t n = sizeof(curl_tls_bin);
	struct sniflow_tab *t;
	struct sni_result r;
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(sniflow_new(OWNERS, &t), 0);
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
	/* accepted on what was read: watched until the server acknowledged it */
	assert_true(sniflow_settle(t, &p, true, 5));
	assert_int_equal(sniflow_open_count(t, 0), 1);
	assert_int_equal(step(t, p, 6, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(1000, ISN + 1, h, 100), 6, &r), SNIFLOW_ACCEPT);
	assert_int_equal(reply(t, 1000, ISN + 1, 7), SNIFLOW_ACCEPT);	/* the SYN only */
	assert_int_equal(reply(t, 1000, ISN + (uint32_t)n, 7), SNIFLOW_ACCEPT);	/* one short */
	assert_int_equal(reply(t, 1000, ISN + 1 + (uint32_t)n, 8), SNIFLOW_CONFIRMED);
	assert_int_equal(sniflow_open_count(t, 0), 0);
	assert_int_equal(step(t, p, 9, &r), SNIFLOW_ACCEPTED);
	assert_int_equal(reply(t, 1000, ISN + 1 + (uint32_t)n, 9), SNIFLOW_ACCEPTED);

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
	assert_int_equal(sniflow_new(OWNERS, &t), 0);
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
	assert_int_equal(step(t, pkt(2003, 11, NULL, 0), 1, &r), SNIFLOW_TOO_MANY);
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
	assert_true(sniflow_settle(t, &p, true, 0));
	/* the sweep: undecided flows after the deadline, settled ones after SNIFLOW_KEEP_MS */
	{
		size_t before = sniflow_count(t);

		assert_true(sniflow_sweep(t, DL - 1, DL) == 0);
		assert_true(sniflow_sweep(t, DL, DL) > 0);	/* the undecided ones */
		assert_true(sniflow_count(t) > 0 && sniflow_count(t) < before);
		/* 2005 was never acknowledged: waits SNIFLOW_CONFIRM_MS, then goes */
		assert_int_equal(step(t, pkt(2005, 11, NULL, 0), DL + 1, &r), SNIFLOW_ACCEPT);
		assert_int_equal(step(t, pkt(2005, 11, NULL, 0), SNIFLOW_CONFIRM_MS, &r), SNIFLOW_LATE);
		assert_true(sniflow_sweep(t, SNIFLOW_CONFIRM_MS, DL) > 0);
		assert_int_equal(step(t, pkt(2005, 11, NULL, 0), SNIFLOW_CONFIRM_MS + 1, &r),
				 SNIFLOW_UNKNOWN);
		assert_int_equal(step(t, pkt(2001, 11, NULL, 0), DL + 1, &r), SNIFLOW_REJECTED);
		assert_true(sniflow_sweep(t, SNIFLOW_KEEP_MS + 10, DL) > 0);
		assert_int_equal(sniflow_count(t), 0);
	}
	sniflow_free(t);
}

/*
 * Issue 30, finding 7: one owner filling the table starved another.  Each
 * owner has SNIFLOW_OPEN_PER_OWNER flows under check; settled flows give
 * their room up, oldest first.
 */
static void test_shares(void **state)
{
	struct sniflow_tab *t;
	struct sni_result r;
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(sniflow_new(OWNERS, &t), 0);
	for (unsigned int i = 0; i < SNIFLOW_OPEN_PER_OWNER; i++) {
		p = syn((uint16_t)(10000 + i), 1);
		assert_int_equal(sniflow_packet(t, &p, 3, 0, DL, &r), SNIFLOW_ACCEPT);
	}
	p = syn(9999, 1);
	assert_int_equal(sniflow_packet(t, &p, 3, 0, DL, &r), SNIFLOW_FULL);
	p = pkt(9999, 2, curl_tls_bin, sizeof(curl_tls_bin));
	assert_int_equal(sniflow_packet(t, &p, 3, 1, DL, &r), SNIFLOW_FULL);	/* still */
	p = syn(9999, 1);
	assert_int_equal(sniflow_packet(t, &p, 4, 0, DL, &r), SNIFLOW_ACCEPT);	/* another owner */
	assert_int_equal(sniflow_open_count(t, 3), SNIFLOW_OPEN_PER_OWNER);
	assert_int_equal(sniflow_open_count(t, 4), 1);
	/* one settles: its owner has room again */
	p = pkt(10000, 2, NULL, 0);
	assert_false(sniflow_settle(t, &p, false, 1));
	p = syn(9998, 1);
	assert_int_equal(sniflow_packet(t, &p, 3, 1, DL, &r), SNIFLOW_ACCEPT);
	sniflow_free(t);

	/* a table full of settled flows makes room for a new one, oldest first */
	assert_int_equal(sniflow_new(SNIFLOW_MAX, &t), 0);
	for (unsigned int i = 0; i < SNIFLOW_MAX; i++) {
		p = syn((uint16_t)i, 1);
		p.src.a[3] = (uint8_t)(i >> 8);
		assert_int_equal(sniflow_packet(t, &p, i, i, DL, &r), SNIFLOW_ACCEPT);
		assert_false(sniflow_settle(t, &p, true, i));
	}
	assert_int_equal(sniflow_count(t), SNIFLOW_MAX);
	p = syn(1, 1);
	p.src.a[2] = 99;
	assert_int_equal(sniflow_packet(t, &p, 0, SNIFLOW_MAX, DL, &r), SNIFLOW_ACCEPT);
	assert_int_equal(sniflow_count(t), SNIFLOW_MAX);
	p = syn(0, 1);
	p.src.a[3] = 0;
	p.ack = true;
	p.syn = false;
	assert_int_equal(sniflow_packet(t, &p, 0, SNIFLOW_MAX, DL, &r), SNIFLOW_UNKNOWN);	/* the oldest went */
	p.sport = 1;
	assert_int_equal(sniflow_packet(t, &p, 1, SNIFLOW_MAX, DL, &r), SNIFLOW_ACCEPTED);
	sniflow_free(t);
}

/*
 * Issue 30, findings 1-3: what decides is what the server read.  Bytes the
 * check read that come again must be the same; an accepted flow stays
 * watched until the server acknowledged them; urgent data and options the
 * check does not model end the check; a new connection on the tuple of a
 * settled one (conntrack reuses an entry the server reset) is checked anew.
 */
static void test_server_reads(void **state)
{
	const unsigned char *h = curl_tls_bin, *py = openssl_tls_bin;
	size_t n = sizeof(curl_tls_bin);
	struct sniflow_tab *t;
	struct sni_result r;
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(sniflow_new(OWNERS, &t), 0);
	/* 2: the first segment carries TCP-MD5 (the server drops it unread) */
	assert_int_equal(step(t, syn(3000, 100), 0, &r), SNIFLOW_ACCEPT);
	p = pkt(3000, 101, h, n);
	p.odd_opt = true;
	assert_int_equal(step(t, p, 1, &r), SNIFLOW_UNMODELLED);
	/* ... and the same range, other bytes, after a first read */
	assert_int_equal(step(t, syn(3001, 100), 0, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(3001, 101, h, n), 1, &r), SNIFLOW_DECIDED);
	p = pkt(3001, 101, NULL, 0);
	assert_true(sniflow_settle(t, &p, true, 1));
	assert_int_equal(step(t, pkt(3001, 101, py, 64), 2, &r), SNIFLOW_REWRITTEN);
	assert_string_equal(r.name, "allowed.example.com");	/* what was read */
	/* ... before it decided too */
	assert_int_equal(step(t, syn(3002, 100), 0, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(3002, 101, h, 50), 1, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(3002, 101, py, 80), 2, &r), SNIFLOW_REWRITTEN);
	/* ... but the same bytes again, overlapping new ones, are fine */
	assert_int_equal(step(t, pkt(3002, 101, h, 80), 3, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(3002, 181, h + 80, n - 80), 4, &r), SNIFLOW_DECIDED);

	/* 3: TCP Fast Open data the server did not take, then other bytes */
	p = syn(3003, 500);
	p.payload = h;
	p.len = n;
	assert_int_equal(step(t, p, 0, &r), SNIFLOW_DECIDED);
	assert_true(sniflow_settle(t, &p, true, 0));
	assert_int_equal(reply(t, 3003, 501, 1), SNIFLOW_ACCEPT);	/* SYN-ACK: the SYN only */
	assert_int_equal(step(t, pkt(3003, 501, py, 100), 2, &r), SNIFLOW_REWRITTEN);
	/* taken: the SYN-ACK acknowledges the data */
	p.sport = 3004;
	assert_int_equal(step(t, p, 0, &r), SNIFLOW_DECIDED);
	assert_true(sniflow_settle(t, &p, true, 0));
	assert_int_equal(reply(t, 3004, 501 + (uint32_t)n, 1), SNIFLOW_CONFIRMED);

	/* urgent data leaves the server's stream */
	assert_int_equal(step(t, syn(3005, 100), 0, &r), SNIFLOW_ACCEPT);
	p = pkt(3005, 101, h, 40);
	p.urg = true;
	assert_int_equal(step(t, p, 1, &r), SNIFLOW_UNMODELLED);

	/* 1: a settled flow, then a new SYN on its tuple: read afresh */
	assert_int_equal(step(t, syn(3006, 100), 0, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(3006, 101, h, n), 1, &r), SNIFLOW_DECIDED);
	p = pkt(3006, 101, NULL, 0);
	assert_true(sniflow_settle(t, &p, true, 1));
	assert_int_equal(reply(t, 3006, 101 + (uint32_t)n, 2), SNIFLOW_CONFIRMED);
	assert_int_equal(step(t, p, 3, &r), SNIFLOW_ACCEPTED);
	assert_int_equal(step(t, syn(3006, 7777), 4, &r), SNIFLOW_ACCEPT);
	assert_int_equal(step(t, pkt(3006, 7778, py, sizeof(openssl_tls_bin)), 5, &r),
			 SNIFLOW_DECIDED);
	sniflow_free(t);
}

/*
 * Verdicts on flows the table has no entry for (netd restarted, swept):
 * remembered as settled; and a watched flow whose tuple a new connection
 * of another sandbox takes moves between the two shares.
 */
static void test_unseen_and_moves(void **state)
{
	const unsigned char *h = curl_tls_bin;
	size_t n = sizeof(curl_tls_bin);
	struct sniflow_tab *t;
	struct sni_result r;
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(sniflow_new(OWNERS, &t), 0);
	p = pkt(4000, 1, NULL, 0);
	assert_false(sniflow_settle(t, &p, true, 0));
	assert_int_equal(sniflow_count(t), 1);
	assert_int_equal(sniflow_open_count(t, 0), 0);
	assert_int_equal(step(t, p, 1, &r), SNIFLOW_ACCEPTED);
	p.sport = 4001;
	assert_false(sniflow_settle(t, &p, false, 0));
	assert_int_equal(step(t, p, 1, &r), SNIFLOW_REJECTED);
	/* settled ones give their room up: swept after SNIFLOW_KEEP_MS */
	assert_int_equal(sniflow_sweep(t, SNIFLOW_KEEP_MS, DL), 2);
	assert_int_equal(step(t, p, SNIFLOW_KEEP_MS, &r), SNIFLOW_UNKNOWN);

	/* owner 2 reads and accepts; the server has not acknowledged yet */
	p = syn(4002, 100);
	assert_int_equal(sniflow_packet(t, &p, 2, 0, DL, &r), SNIFLOW_ACCEPT);
	p = pkt(4002, 101, h, n);
	assert_int_equal(sniflow_packet(t, &p, 2, 1, DL, &r), SNIFLOW_DECIDED);
	assert_true(sniflow_settle(t, &p, true, 1));
	assert_int_equal(sniflow_open_count(t, 2), 1);
	/* a new connection on the tuple, owner 5: counted off 2, onto 5 */
	p = syn(4002, 9000);
	assert_int_equal(sniflow_packet(t, &p, 5, 2, DL, &r), SNIFLOW_ACCEPT);
	assert_int_equal(sniflow_open_count(t, 2), 0);
	assert_int_equal(sniflow_open_count(t, 5), 1);
	assert_int_equal(sniflow_count(t), 1);
	/* and it is read from its own start */
	p = pkt(4002, 9001, h, n);
	assert_int_equal(sniflow_packet(t, &p, 5, 3, DL, &r), SNIFLOW_DECIDED);
	assert_false(sniflow_settle(t, &p, false, 3));
	assert_int_equal(sniflow_open_count(t, 5), 0);
	sniflow_free(t);
}

/* Where the server stands if the segment just handed in is refused (issue 32). */
static void test_rcv_nxt(void **state)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n";
	struct sniflow_tab *t;
	struct sni_result r;
	struct sniflow_meta m;
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(sniflow_new(OWNERS, &t), 0);
	assert_int_equal(step(t, syn(2000, ISN), 0, &r), SNIFLOW_ACCEPT);
	assert_true(sniflow_meta(t, &(struct sniflow_pkt){ 0 }, &m) == false);
	p = pkt(2000, ISN + 1, (const uint8_t *)req, 3);
	assert_int_equal(step(t, p, 1, &r), SNIFLOW_ACCEPT);
	assert_true(sniflow_meta(t, &p, &m) && m.rcv_nxt_known);
	assert_int_equal(m.rcv_nxt, ISN + 1);
	/* Overlaps the 3 bytes read: the server stands after them, not at its seq. */
	p = pkt(2000, ISN + 1, (const uint8_t *)req, sizeof(req) - 1);
	assert_int_equal(step(t, p, 2, &r), SNIFLOW_DECIDED);
	assert_true(sniflow_meta(t, &p, &m));
	assert_int_equal(m.rcv_nxt, ISN + 4);
	assert_false(sniflow_settle(t, &p, false, 2));
	assert_true(sniflow_meta(t, &p, &m));
	assert_int_equal(m.rcv_nxt, ISN + 4);
	/* A flow netd never saw start: unknown. */
	p = pkt(2001, ISN + 50, (const uint8_t *)req, 3);
	assert_int_equal(step(t, p, 3, &r), SNIFLOW_UNKNOWN);
	assert_false(sniflow_settle(t, &p, false, 3));
	assert_true(sniflow_meta(t, &p, &m));
	assert_false(m.rcv_nxt_known);
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
	memcpy(b, v4, sizeof(b));
	b[33] = 0x38;	/* URG|PSH|ACK */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), 0);
	assert_true(p.urg && !p.odd_opt);
}

/* TCP options, and IPv6 extension headers walked as the kernel does (issue 30, finding 8). */
static void test_pkt_parse_ext(void **state)
{
	/* IPv4 with a 24-byte TCP header: MD5 would not fit; NOP NOP kind 19 len 2 */
	static const uint8_t v4o[] = {
		0x45, 0, 0, 44, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 2, 192, 0, 2, 50,
		0x9c, 0x40, 0x01, 0xbb, 1, 2, 3, 4, 0, 0, 0, 9, 0x60, 0x18, 0xff, 0xff, 0, 0, 0, 0,
		1, 1, 19, 2,
	};
	/* IPv6 2001:db8::2 -> 2001:db8::50, destination options (PadN), TCP, "hi" */
	static const uint8_t v6[] = {
		0x60, 0, 0, 0, 0, 30, 60, 64,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x50,
		6, 0, 1, 4, 0, 0, 0, 0,
		0x9c, 0x40, 0x01, 0xbb, 1, 2, 3, 4, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
		'h', 'i',
	};
	uint8_t b[sizeof(v6)];
	struct sniflow_pkt p;

	(void)state;
	assert_int_equal(sniflow_pkt_parse(v4o, sizeof(v4o), &p), 0);
	assert_true(p.odd_opt);
	assert_int_equal(p.ack_seq, 9);
	assert_int_equal(sniflow_pkt_parse(v6, sizeof(v6), &p), 0);
	assert_int_equal(p.dport, 443);
	assert_int_equal(p.len, 2);
	assert_memory_equal(p.payload, "hi", 2);
	memcpy(b, v6, sizeof(b));
	b[40] = 59;	/* the options header says "no next header" */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), -EPROTO);
	memcpy(b, v6, sizeof(b));
	b[6] = 44;	/* a fragment header with offset 0x0104 */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), -EPROTO);
	memcpy(b, v6, sizeof(b));
	b[6] = 44;
	b[42] = 0;
	b[43] = 0;	/* a whole packet's fragment header */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), 0);
	memcpy(b, v6, sizeof(b));
	b[41] = 200;	/* longer than the packet */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), -EBADMSG);
	memcpy(b, v6, sizeof(b));
	b[6] = 50;	/* ESP */
	assert_int_equal(sniflow_pkt_parse(b, sizeof(b), &p), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_and_gaps),
		cmocka_unit_test(test_unknown_late_and_limits),
		cmocka_unit_test(test_pkt_parse),
		cmocka_unit_test(test_rcv_nxt),
		cmocka_unit_test(test_pkt_parse_ext),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_server_reads),
		cmocka_unit_test(test_unseen_and_moves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
