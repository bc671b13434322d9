/*
 * test_qflow - the QUIC check's flow table (netd/sni/qflow.c), fed with
 * Initials from the test encoder (tests/unit/quic_enc.h): a ClientHello
 * in one datagram decides; split over two, the first passes and the
 * second decides; a 0-RTT or short-header packet while undecided and an
 * Initial in a small datagram are dropped; an accepted flow passes its
 * retransmissions and refuses other bytes at the same offsets; a Retry's
 * new connection is checked afresh; a rejected flow stays rejected; an
 * unknown version; the deadline, the datagram bound, the shares, the
 * sweep; the UDP parser.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "netd/sni/qflow.h"
#include "tests/unit/quic_enc.h"

#define DL 5000

static const uint8_t dcid_a[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t dcid_b[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
static uint8_t hello[4096], dg[4096];
static size_t hl;

static struct qflow_pkt dgram(uint16_t sport, size_t len)
{
	struct qflow_pkt p = { .sport = sport, .dport = 443, .payload = dg, .len = len };

	p.src.family = p.dst.family = AF_INET;
	memcpy(p.src.a, "\x0a\x00\x00\x02", 4);
	memcpy(p.dst.a, "\xcb\x00\x71\x42", 4);
	return p;
}

/* An Initial to @dcid, pn @pn, CRYPTO [@from, @to) of hello, in a datagram of @size. */
static size_t initial(const uint8_t *dcid, uint64_t pn, size_t from, size_t to, size_t size)
{
	uint8_t frames[4096];
	struct quic_keys k;
	struct qe_pkt p = { .version = QUIC_V1, .dcid = dcid, .dcid_len = 8, .pn = pn,
			    .pn_len = 2, .frames = frames, .size = size };

	assert_int_equal(quic_initial_keys(QUIC_V1, dcid, 8, false, &k), 0);
	p.frames_len = qe_crypto(frames, from, hello + from, to - from);
	return qe_initial(dg, &p, &k);
}

static void test_decide_and_settle(void **state)
{
	struct qflow_tab *t;
	struct sni_result res;
	struct qflow_pkt p;

	(void)state;
	assert_int_equal(qflow_new(4, &t), 0);
	hl = qe_client_hello(hello, "allowed.example", 1500);
	/* the second half first: passes, undecided */
	p = dgram(1000, initial(dcid_a, 1, 900, hl, 1200));
	assert_int_equal(qflow_packet(t, &p, 0, 0, DL, &res), QFLOW_PASS);
	assert_int_equal(qflow_open_count(t, 0), 1);
	/* a short header while undecided: dropped */
	dg[0] = 0x40;
	p.len = 100;
	assert_int_equal(qflow_packet(t, &p, 0, 1, DL, &res), QFLOW_DROP);
	/* an Initial in a 1000-byte datagram: dropped, not read */
	p = dgram(1000, initial(dcid_a, 0, 0, 900, 1000));
	assert_int_equal(qflow_packet(t, &p, 0, 2, DL, &res), QFLOW_DROP);
	/* the first half: decided */
	p = dgram(1000, initial(dcid_a, 0, 0, 900, 1200));
	assert_int_equal(qflow_packet(t, &p, 0, 3, DL, &res), QFLOW_DECIDED);
	assert_int_equal(res.status, SNI_NAME);
	assert_string_equal(res.name, "allowed.example");
	assert_int_equal(res.proto, SNI_PROTO_QUIC);
	qflow_settle(t, &p, true, 4);
	assert_int_equal(qflow_open_count(t, 0), 0);
	/* the same Initial again (a retransmission): accepted */
	assert_int_equal(qflow_packet(t, &p, 0, 5, DL, &res), QFLOW_ACCEPTED);
	/* an Initial in a small datagram, now: passes unread (other bytes, even) */
	hello[10] ^= 0xff;
	p = dgram(1000, initial(dcid_a, 3, 0, 300, 600));
	hello[10] ^= 0xff;
	assert_int_equal(qflow_packet(t, &p, 0, 5, DL, &res), QFLOW_ACCEPTED);
	/* other bytes where the hello was read: rewritten */
	hello[100] ^= 0xff;
	p = dgram(1000, initial(dcid_a, 2, 50, 200, 1200));
	assert_int_equal(qflow_packet(t, &p, 0, 6, DL, &res), QFLOW_REWRITTEN);
	hello[100] ^= 0xff;
	/* a Retry's new connection: checked afresh, another name decides */
	hl = qe_client_hello(hello, "denied.example", 0);
	p = dgram(1000, initial(dcid_b, 0, 0, hl, 1200));
	assert_int_equal(qflow_packet(t, &p, 0, 7, DL, &res), QFLOW_DECIDED);
	assert_string_equal(res.name, "denied.example");
	qflow_settle(t, &p, false, 8);
	/* rejected stays rejected, whatever comes */
	hl = qe_client_hello(hello, "allowed.example", 0);
	p = dgram(1000, initial(dcid_a, 0, 0, hl, 1200));
	assert_int_equal(qflow_packet(t, &p, 0, 9, DL, &res), QFLOW_REJECTED);
	assert_int_equal(qflow_count(t), 1);
	/* forgotten after QFLOW_KEEP_MS */
	assert_int_equal(qflow_sweep(t, 8 + QFLOW_KEEP_MS, DL), 1);
	assert_int_equal(qflow_packet(t, &p, 0, 9 + QFLOW_KEEP_MS, DL, &res), QFLOW_DECIDED);
	qflow_free(t);
}

static void test_garbage_and_bounds(void **state)
{
	struct qflow_tab *t;
	struct sni_result res;
	struct qflow_pkt p;

	(void)state;
	assert_int_equal(qflow_new(2, &t), 0);
	hl = qe_client_hello(hello, "allowed.example", 0);
	/* an unknown version */
	p = dgram(2000, initial(dcid_a, 0, 0, hl, 1200));
	memcpy(dg + 1, "\xff\x00\x00\x1d", 4);
	assert_int_equal(qflow_packet(t, &p, 0, 0, DL, &res), QFLOW_VERSION);
	assert_int_equal(res.status, SNI_GARBAGE);
	/* a v1 long header over bytes no key opens */
	p = dgram(2001, 1200);
	memset(dg, 0xc1, 1200);
	memcpy(dg + 1, "\x00\x00\x00\x01\x08", 5);
	assert_int_equal(qflow_packet(t, &p, 0, 0, DL, &res), QFLOW_DECIDED);
	assert_int_equal(res.status, SNI_GARBAGE);
	/* the deadline: undecided datagrams pass until then */
	p = dgram(2002, initial(dcid_a, 0, 10, hl, 1200));
	assert_int_equal(qflow_packet(t, &p, 0, 0, DL, &res), QFLOW_PASS);
	assert_int_equal(qflow_packet(t, &p, 0, DL, DL, &res), QFLOW_LATE);
	assert_int_equal(res.status, SNI_MORE);
	/* the datagram bound */
	p = dgram(2003, initial(dcid_a, 0, 10, hl, 1200));
	for (int i = 0; i < QFLOW_DGRAMS_MAX; i++)
		assert_int_equal(qflow_packet(t, &p, 1, 0, DL, &res), QFLOW_PASS);
	assert_int_equal(qflow_packet(t, &p, 1, 0, DL, &res), QFLOW_TOO_MANY);
	/* the share: QFLOW_OPEN_PER_OWNER undecided flows of one owner */
	for (uint16_t i = 0; qflow_open_count(t, 1) < QFLOW_OPEN_PER_OWNER; i++) {
		p = dgram((uint16_t)(3000 + i), initial(dcid_a, 0, 10, hl, 1200));
		assert_int_equal(qflow_packet(t, &p, 1, 0, DL, &res), QFLOW_PASS);
	}
	p = dgram(4000, initial(dcid_a, 0, 10, hl, 1200));
	assert_int_equal(qflow_packet(t, &p, 1, 0, DL, &res), QFLOW_FULL);
	assert_int_equal(qflow_packet(t, &p, 0, 0, DL, &res), QFLOW_PASS);	/* another owner's */
	/* the sweep frees the undecided ones at their deadline */
	assert_true(qflow_sweep(t, DL, DL) >= QFLOW_OPEN_PER_OWNER);
	assert_int_equal(qflow_open_count(t, 1), 0);
	qflow_free(t);
	qflow_free(NULL);
}

static void test_pkt_parse(void **state)
{
	uint8_t b[80] = { 0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 2, 203, 0, 113, 66,
			  0x30, 0x39, 0x01, 0xbb, 0, 20, 0, 0, 'q', 'u', 'i', 'c' };
	uint8_t v6[60] = { 0x60, 0, 0, 0, 0, 12, 17, 64 };
	struct qflow_pkt p;

	(void)state;
	assert_int_equal(qflow_pkt_parse(b, 40, &p), 0);
	assert_int_equal(p.sport, 12345);
	assert_int_equal(p.dport, 443);
	assert_int_equal(p.len, 12);
	assert_memory_equal(p.payload, "quic", 4);
	b[25] = 4;	/* a UDP length under its header */
	assert_int_equal(qflow_pkt_parse(b, 40, &p), -EBADMSG);
	b[25] = 20;
	b[9] = 6;	/* TCP */
	assert_int_equal(qflow_pkt_parse(b, 40, &p), -EPROTO);
	b[9] = 17;
	b[6] = 0x20;	/* MF: a fragment */
	assert_int_equal(qflow_pkt_parse(b, 40, &p), -EPROTO);
	v6[40 + 1] = 53;
	v6[40 + 3] = 0xbb;
	v6[40 + 5] = 12;
	assert_int_equal(qflow_pkt_parse(v6, 52, &p), 0);
	assert_int_equal(p.src.family, AF_INET6);
	assert_int_equal(p.len, 4);
	assert_int_equal(qflow_pkt_parse(v6, 30, &p), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_and_settle),
		cmocka_unit_test(test_garbage_and_bounds),
		cmocka_unit_test(test_pkt_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
