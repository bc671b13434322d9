/*
 * test_quic - netd/sni/quic.c: the Initial keys, header protection and
 * AES-128-GCM against RFC 9001 Appendix A (QUIC v1) and RFC 9369 Appendix
 * A (v2) byte for byte; then Initials built by the test-only encoder
 * (tests/unit/quic_enc.h, itself checked against the RFCs' sample
 * packets): a ClientHello in one packet, split over two datagrams in
 * either order, coalesced packets, a Retry's new connection, compatible
 * version negotiation, and what is garbage (other versions, a client's
 * Retry or Version Negotiation, a small datagram, a bad tag, a frame an
 * Initial may not carry, rewritten or unbounded CRYPTO data).
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

#include "common/hex.h"
#include "netd/sni/quic.h"
#include "tests/unit/quic_enc.h"
#include "tests/unit/quic_vectors.h"

static const uint8_t rfc_dcid[8] = { 0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08 };

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = strlen(s) / 2;

	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)(hex_digit(s[2 * i]) << 4 | hex_digit(s[2 * i + 1]));
	return n;
}

static void assert_hex(const uint8_t *got, size_t len, const char *want)
{
	uint8_t w[2048];

	assert_int_equal(unhex(want, w), len);
	assert_memory_equal(got, w, len);
}

/* A reader that reassembles into a quic_hello (as qflow.c does). */
struct col {
	struct quic_hello qh;
	unsigned int resets;
};

static int col_crypto(void *ctx, uint64_t off, const uint8_t *d, size_t n)
{
	int r = quic_hello_add(&((struct col *)ctx)->qh, off, d, n);

	return r == -EBADMSG ? -EILSEQ : r;	/* rewritten, not malformed */
}

static void col_reset(void *ctx)
{
	struct col *c = ctx;

	quic_hello_init(&c->qh);
	c->resets++;
}

static struct col col;
static const struct quic_reader reader = { col_crypto, col_reset, &col };

static void keys_check(uint32_t v, const char *ck, const char *civ, const char *chp,
		       const char *sk, const char *siv, const char *shp)
{
	struct quic_keys k;

	assert_int_equal(quic_initial_keys(v, rfc_dcid, 8, false, &k), 0);
	assert_hex(k.key, 16, ck);
	assert_hex(k.iv, 12, civ);
	assert_hex(k.hp, 16, chp);
	assert_int_equal(quic_initial_keys(v, rfc_dcid, 8, true, &k), 0);
	assert_hex(k.key, 16, sk);
	assert_hex(k.iv, 12, siv);
	assert_hex(k.hp, 16, shp);
}

/* RFC 9001 A.1, RFC 9369 A.1: client and server key, iv, hp. */
static void test_keys(void **state)
{
	struct quic_keys k;

	(void)state;
	keys_check(QUIC_V1, v1_client_key, v1_client_iv, v1_client_hp, v1_server_key, v1_server_iv,
		   v1_server_hp);
	keys_check(QUIC_V2, v2_client_key, v2_client_iv, v2_client_hp, v2_server_key, v2_server_iv,
		   v2_server_hp);
	assert_int_equal(quic_initial_keys(0xff00001d, rfc_dcid, 8, false, &k), -EPROTONOSUPPORT);
	assert_int_equal(quic_initial_keys(QUIC_V1, rfc_dcid, 21, false, &k), -EINVAL);
}

/*
 * RFC 9001 A.2 / RFC 9369 A.2: the protected client Initial opens to the
 * CRYPTO frame and PADDING (1162 bytes, packet number 2), and the encoder
 * seals that payload into the very same 1200 bytes.
 */
static void client_initial_check(uint32_t v, const char *packet, const char *crypto,
				 const char *header)
{
	uint8_t pkt[1200], plain[1200], frames[300], again[1300], hdr[64];
	size_t plain_len = 0, flen = unhex(crypto, frames);
	struct quic_keys k;
	struct quic_hdr h;
	struct quic_dgram out;
	struct quic_conn c = { 0 };
	struct sni_result res;
	uint64_t pn = 0;

	assert_int_equal(unhex(packet, pkt), 1200);
	assert_int_equal(quic_hdr_parse(pkt, sizeof(pkt), &h), 0);
	assert_int_equal(h.type, QUIC_PT_INITIAL);
	assert_int_equal(h.version, v);
	assert_int_equal(h.dcid_len, 8);
	assert_memory_equal(h.dcid, rfc_dcid, 8);
	assert_int_equal(h.len, 1200);
	assert_int_equal(quic_initial_keys(v, h.dcid, h.dcid_len, false, &k), 0);
	assert_int_equal(quic_initial_open(pkt, &h, &k, -1, plain, &plain_len, &pn), 0);
	assert_int_equal(pn, 2);
	assert_int_equal(plain_len, 1162);
	assert_memory_equal(plain, frames, flen);
	for (size_t i = flen; i < plain_len; i++)
		assert_int_equal(plain[i], 0);
	/* the unprotected header: the packet's first 18 bytes, then pn 2 */
	assert_int_equal(unhex(header, hdr), 22);
	assert_memory_equal(pkt + 1, hdr + 1, 17);
	/* the encoder reproduces the sample packet byte for byte */
	{
		struct qe_pkt p = { .version = v, .dcid = rfc_dcid, .dcid_len = 8, .pn = 2,
				    .pn_len = 4, .frames = frames, .frames_len = flen, .size = 1200 };

		assert_int_equal(qe_initial(again, &p, &k), 1200);
		assert_memory_equal(again, pkt, 1200);
	}
	/* and the datagram reads to the name */
	memset(&col, 0, sizeof(col));
	assert_int_equal(quic_dgram_read(&c, pkt, sizeof(pkt), &reader, &out), QUIC_READ_OK);
	assert_int_equal(out.n_initial, 1);
	assert_true(out.new_conn);
	assert_int_equal(out.version, v);
	assert_int_equal(quic_hello_parse(&col.qh, &res), SNI_NAME);
	assert_string_equal(res.name, "example.com");
	assert_int_equal(res.proto, SNI_PROTO_QUIC);
	assert_int_equal(res.alpn, SNI_ALPN_OTHER);	/* "alpn" */
	/* a flipped bit of the tag: the keys no longer open it */
	pkt[1199] ^= 1;
	assert_int_equal(quic_initial_open(pkt, &h, &k, -1, plain, &plain_len, &pn), -EBADMSG);
	memset(&c, 0, sizeof(c));
	assert_int_equal(quic_dgram_read(&c, pkt, sizeof(pkt), &reader, &out), QUIC_READ_GARBAGE);
}

static void test_rfc_client_initial(void **state)
{
	(void)state;
	client_initial_check(QUIC_V1, v1_client_packet, v1_client_crypto, v1_client_header);
	client_initial_check(QUIC_V2, v2_client_packet, v2_client_crypto, v2_client_header);
}

/* RFC 9001 A.4 / RFC 9369 A.4: a Retry is recognized; from a client it is garbage. */
static void test_rfc_retry(void **state)
{
	uint8_t pkt[64];
	size_t n;
	struct quic_hdr h;
	struct quic_dgram out;
	struct quic_conn c = { 0 };

	(void)state;
	n = unhex(v1_retry, pkt);
	assert_int_equal(quic_hdr_parse(pkt, n, &h), 0);
	assert_int_equal(h.type, QUIC_PT_RETRY);
	assert_int_equal(quic_dgram_read(&c, pkt, n, &reader, &out), QUIC_READ_GARBAGE);
	n = unhex(v2_retry, pkt);
	assert_int_equal(quic_hdr_parse(pkt, n, &h), 0);
	assert_int_equal(h.type, QUIC_PT_RETRY);
	assert_int_equal(h.version, QUIC_V2);
}

static const uint8_t dcid_a[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t dcid_b[10] = { 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 };
static const uint8_t scid[4] = { 0xaa, 0xbb, 0xcc, 0xdd };

/* An Initial of @v to @dcid with CRYPTO [@from, @to) of @hello, padded to @size. */
static size_t initial(uint8_t *out, uint32_t v, const uint8_t *dcid, size_t dcid_len,
		      const uint8_t *kdcid, size_t kdcid_len, uint64_t pn, const uint8_t *hello,
		      size_t from, size_t to, size_t size)
{
	static uint8_t frames[20000];
	struct quic_keys k;
	struct qe_pkt p = { .version = v, .dcid = dcid, .dcid_len = dcid_len, .scid = scid,
			    .scid_len = sizeof(scid), .pn = pn, .pn_len = 2, .frames = frames,
			    .size = size };

	assert_int_equal(quic_initial_keys(v, kdcid, kdcid_len, false, &k), 0);
	frames[0] = 0x01;	/* a PING first, as a client may */
	p.frames_len = 1 + qe_crypto(frames + 1, from, hello + from, to - from);
	return qe_initial(out, &p, &k);
}

static enum sni_status name_of(struct sni_result *res)
{
	return quic_hello_parse(&col.qh, res);
}

/* One packet; split over two datagrams, either order; coalesced; a 0-RTT beside. */
static void test_generated(void **state)
{
	uint8_t hello[4096], d[4096];
	size_t hl, n, m;
	struct quic_dgram out;
	struct quic_conn c = { 0 };
	struct sni_result res;

	(void)state;
	hl = qe_client_hello(hello, "allowed.example", 0);
	memset(&col, 0, sizeof(col));
	n = initial(d, QUIC_V1, dcid_a, 8, dcid_a, 8, 0, hello, 0, hl, 1200);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_int_equal(name_of(&res), SNI_NAME);
	assert_string_equal(res.name, "allowed.example");
	assert_false(res.ech);

	/* with an ECH extension (GREASE ECH over QUIC): marked, the outer name kept */
	hl = qe_client_hello_ext(hello, "allowed.example", 200, 0xfe0d);
	memset(&col, 0, sizeof(col));
	memset(&c, 0, sizeof(c));
	n = initial(d, QUIC_V1, dcid_a, 8, dcid_a, 8, 0, hello, 0, hl, 1200);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_int_equal(name_of(&res), SNI_ECH);
	assert_true(res.ech);
	assert_int_equal(res.proto, SNI_PROTO_QUIC);
	assert_string_equal(res.name, "allowed.example");

	/* a post-quantum-sized hello (about 1.9 KB): the second half first */
	hl = qe_client_hello(hello, "allowed.example", 1800);
	assert_true(hl > 1800);
	memset(&col, 0, sizeof(col));
	memset(&c, 0, sizeof(c));
	n = initial(d, QUIC_V2, dcid_a, 8, dcid_a, 8, 1, hello, 1000, hl, 1250);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_int_equal(name_of(&res), SNI_MORE);
	assert_int_equal(col.qh.prefix, 0);
	n = initial(d, QUIC_V2, dcid_a, 8, dcid_a, 8, 0, hello, 0, 1000, 1250);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_false(out.new_conn);	/* the keys the first one gave */
	assert_int_equal(col.resets, 1);
	assert_int_equal(name_of(&res), SNI_NAME);
	assert_string_equal(res.name, "allowed.example");

	/* coalesced: two Initials and a 0-RTT in one datagram */
	memset(&col, 0, sizeof(col));
	memset(&c, 0, sizeof(c));
	n = initial(d, QUIC_V1, dcid_a, 8, dcid_a, 8, 0, hello, 0, 700, 0);
	n += initial(d + n, QUIC_V1, dcid_a, 8, dcid_a, 8, 1, hello, 700, hl, 0);
	m = n;
	d[n++] = 0xd0;	/* v1 0-RTT (type 1), fixed bit */
	memcpy(d + n, "\x00\x00\x00\x01\x08", 5);
	n += 5;
	memcpy(d + n, dcid_a, 8);
	n += 8;
	d[n++] = 0;	/* no SCID */
	d[n++] = 0x40;	/* Length 64, two bytes */
	d[n++] = 64;
	memset(d + n, 0x77, 64);
	n += 64;
	assert_true(n >= QUIC_DGRAM_MIN);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_int_equal(out.n_initial, 2);
	assert_int_equal(out.n_other, 1);
	assert_int_equal(name_of(&res), SNI_NAME);
	/* zero bytes after the packets are padding; other bytes a 1-RTT packet */
	memset(d + m, 0, n - m);
	memset(&col, 0, sizeof(col));
	memset(&c, 0, sizeof(c));
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_int_equal(out.n_other, 0);
	d[m] = 0x40;
	memset(&c, 0, sizeof(c));
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_int_equal(out.n_initial, 2);
	assert_int_equal(out.n_other, 1);
}

/*
 * After a Retry the client's Initial goes to the Retry's SCID with keys
 * from it: a new connection (reset).  After the server's Initial the client
 * uses the server's CID with the first keys; after compatible version
 * negotiation, the new version's keys from the original DCID.
 */
static void test_retry_and_versions(void **state)
{
	uint8_t hello[512], d[2048];
	size_t hl, n;
	struct quic_dgram out;
	struct quic_conn c = { 0 };
	struct sni_result res;

	(void)state;
	hl = qe_client_hello(hello, "allowed.example", 0);
	memset(&col, 0, sizeof(col));
	n = initial(d, QUIC_V1, dcid_a, 8, dcid_a, 8, 0, hello, 0, hl, 1200);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_true(out.new_conn);
	/* to the server's CID, keys of the original DCID: the same connection */
	n = initial(d, QUIC_V1, dcid_b, 10, dcid_a, 8, 1, hello, 0, hl, 1200);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_false(out.new_conn);
	/* compatible negotiation to v2: v2 keys from the original DCID */
	n = initial(d, QUIC_V2, dcid_b, 10, dcid_a, 8, 2, hello, 0, hl, 1200);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_false(out.new_conn);
	assert_int_equal(c.version, QUIC_V2);
	assert_int_equal(col.resets, 1);
	/* Retry: a new DCID with its own keys, another hello */
	hl = qe_client_hello(hello, "denied.example", 0);
	n = initial(d, QUIC_V2, dcid_b, 10, dcid_b, 10, 3, hello, 0, hl, 1200);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_true(out.new_conn);
	assert_int_equal(col.resets, 2);
	assert_int_equal(name_of(&res), SNI_NAME);
	assert_string_equal(res.name, "denied.example");
}

/* What is not a client's readable Initial. */
static void test_garbage(void **state)
{
	uint8_t hello[512], d[2048], frames[64];
	size_t hl, n;
	struct quic_dgram out;
	struct quic_conn c = { 0 };
	struct quic_keys k;
	struct qe_pkt p = { .version = QUIC_V1, .dcid = dcid_a, .dcid_len = 8, .pn_len = 1,
			    .frames = frames, .size = 1200 };

	(void)state;
	hl = qe_client_hello(hello, "allowed.example", 0);
	/* under 1200 bytes: not read */
	memset(&col, 0, sizeof(col));
	n = initial(d, QUIC_V1, dcid_a, 8, dcid_a, 8, 0, hello, 0, hl, 1000);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_SMALL);
	assert_int_equal(col.qh.prefix, 0);
	/* other versions: a draft, v2's draft number, a reserved (greased) one */
	n = initial(d, QUIC_V1, dcid_a, 8, dcid_a, 8, 0, hello, 0, hl, 1200);
	for (int i = 0; i < 3; i++) {
		static const uint8_t vs[3][4] = { { 0xff, 0, 0, 0x1d }, { 0x70, 0x9a, 0x50, 0xc4 },
						  { 0x1a, 0x2a, 0x3a, 0x4a } };

		memcpy(d + 1, vs[i], 4);
		assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_VERSION);
	}
	/* version 0 (Version Negotiation) from a client */
	memset(d + 1, 0, 4);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_GARBAGE);
	/* a short header alone: not read, counted */
	memset(&c, 0, sizeof(c));
	d[0] = 0x41;
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_int_equal(out.n_other, 1);
	assert_int_equal(out.n_initial, 0);
	/* the fixed bit greased to 0 (RFC 9287; ngtcp2 does it): still read */
	assert_int_equal(quic_initial_keys(QUIC_V1, dcid_a, 8, false, &k), 0);
	p.grease = true;
	p.frames_len = qe_crypto(frames, 0, hello, 40);
	n = qe_initial(d, &p, &k);
	p.grease = false;
	assert_int_equal(d[0] & 0xc0, 0x80);
	memset(&col, 0, sizeof(col));
	memset(&c, 0, sizeof(c));
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	assert_int_equal(out.n_initial, 1);
	assert_int_equal(col.qh.prefix, 40);
	/* random bytes */
	for (size_t i = 0; i < 1200; i++)
		d[i] = (uint8_t)(i * 37 + 11);
	d[0] = 0xc3;
	memcpy(d + 1, "\x00\x00\x00\x01", 4);
	assert_int_equal(quic_dgram_read(&c, d, 1200, &reader, &out), QUIC_READ_GARBAGE);
	/* a STREAM frame (0x08) in an Initial */
	assert_int_equal(quic_initial_keys(QUIC_V1, dcid_a, 8, false, &k), 0);
	frames[0] = 0x08;
	frames[1] = 0;
	frames[2] = 0x41;
	p.frames_len = 3;
	n = qe_initial(d, &p, &k);
	memset(&c, 0, sizeof(c));
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_GARBAGE);
	/* an ACK frame and a CONNECTION_CLOSE are allowed (RFC 9000 12.4) */
	memcpy(frames, "\x02\x00\x00\x00\x00\x1c\x01\x00\x02hi", 11);
	p.frames_len = 11;
	n = qe_initial(d, &p, &k);
	memset(&c, 0, sizeof(c));
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	/* CRYPTO past 16 KiB, or other bytes where bytes were read: stopped */
	p.frames_len = qe_crypto(frames, QUIC_HELLO_MAX - 4, (const uint8_t *)"abcdefgh", 8);
	n = qe_initial(d, &p, &k);
	memset(&col, 0, sizeof(col));
	memset(&c, 0, sizeof(c));
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_STOP);
	assert_int_equal(out.cb_err, -EMSGSIZE);
	p.frames_len = qe_crypto(frames, 0, hello, 20);
	n = qe_initial(d, &p, &k);
	memset(&c, 0, sizeof(c));
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_OK);
	hello[10] ^= 0xff;
	p.frames_len = qe_crypto(frames, 5, hello + 5, 10);
	p.pn = 1;
	n = qe_initial(d, &p, &k);
	assert_int_equal(quic_dgram_read(&c, d, n, &reader, &out), QUIC_READ_STOP);
	assert_int_equal(out.cb_err, -EILSEQ);
}

/* sni_parse_handshake(): the bare message QUIC carries. */
static void test_handshake_parse(void **state)
{
	uint8_t hello[512];
	size_t hl = qe_client_hello(hello, "Allowed.Example", 0);
	struct sni_result res;

	(void)state;
	assert_int_equal(sni_parse_handshake(hello, 3, &res), SNI_MORE);
	assert_int_equal(sni_parse_handshake(hello, hl - 1, &res), SNI_MORE);
	assert_int_equal(sni_parse_handshake(hello, hl, &res), SNI_NAME);
	assert_string_equal(res.name, "allowed.example");
	assert_int_equal(res.proto, SNI_PROTO_QUIC);
	assert_string_equal(sni_proto_str(res.proto), "quic");
	hl = qe_client_hello(hello, NULL, 0);
	assert_int_equal(sni_parse_handshake(hello, hl, &res), SNI_NO_NAME);
	hello[0] = 2;	/* a ServerHello */
	assert_int_equal(sni_parse_handshake(hello, hl, &res), SNI_GARBAGE);
	hello[0] = 1;
	hello[1] = 1;	/* 64 KiB and more */
	assert_int_equal(sni_parse_handshake(hello, hl, &res), SNI_TOO_LONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_rfc_client_initial),
		cmocka_unit_test(test_rfc_retry),
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_retry_and_versions),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_handshake_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
