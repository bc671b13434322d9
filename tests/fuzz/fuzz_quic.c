/*
 * fuzz_quic - netd/sni/quic.c and qflow.c on arbitrary bytes, three ways.
 * The first byte picks: 0 mod 3, the rest is a client datagram as received
 * (quic_dgram_read() with a fresh connection, twice: a second read of the
 * same bytes must not change what the first reassembled), and the same
 * bytes as an IP packet (qflow_pkt_parse(): the payload lies inside);
 * 1 mod 3, the rest is an Initial's plaintext frames, sealed by the test
 * encoder (tests/unit/quic_enc.h) into a valid 1200-byte Initial, so the
 * frame walker and the CRYPTO reassembly see what decrypts; 2 mod 3, the
 * rest is a sequence of datagrams (a length byte, then that many bytes,
 * each sealed as an Initial's frames when its length byte is odd) fed to
 * one qflow table flow by flow, each decision settled by a bit of the
 * length.  Checks: headers stay inside the datagram, a sealed Initial
 * always opens, the frames' verdict is the same sealed or bare, a decided
 * name is normalized, the table's counts stay in bounds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netd/sni/qflow.h"
#include "netd/sni/quic.h"
#include "tests/unit/quic_enc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct quic_hello qh;

static int on_crypto(void *ctx, uint64_t off, const uint8_t *d, size_t n)
{
	int r = quic_hello_add(&qh, off, d, n);

	return r == -EBADMSG ? -EILSEQ : r;
}

static void on_reset(void *ctx)
{
	quic_hello_init(&qh);
}

static int count_crypto(void *ctx, uint64_t off, const uint8_t *d, size_t n)
{
	return 0;
}

static void check_hello(void)
{
	struct sni_result res;
	char norm[SNI_NAME_MAX + 1];

	if (qh.prefix > QUIC_HELLO_MAX)
		abort();
	if (quic_hello_parse(&qh, &res) == SNI_NAME &&
	    (sni_name_norm(res.name, strlen(res.name), norm) < 0 || strcmp(norm, res.name)))
		abort();
}

static void raw(const uint8_t *d, size_t n)
{
	static const struct quic_reader r = { on_crypto, on_reset, NULL };
	struct quic_conn c = { 0 };
	struct quic_dgram out;
	struct quic_hdr h;
	size_t prefix;

	if (quic_hdr_parse(d, n, &h) == 0 && (h.len > n || h.pn_off > h.len))
		abort();
	quic_hello_init(&qh);
	quic_dgram_read(&c, d, n, &r, &out);
	check_hello();
	prefix = qh.prefix;
	/* the same datagram again (a retransmission): nothing new, nothing lost */
	if (out.status == QUIC_READ_OK && quic_dgram_read(&c, d, n, &r, &out) == QUIC_READ_OK &&
	    qh.prefix != prefix)
		abort();
}

static void sealed(const uint8_t *f, size_t n)
{
	static const uint8_t dcid[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const struct quic_reader r = { on_crypto, on_reset, NULL };
	static uint8_t pkt[4096];
	struct qe_pkt p = { .version = n % 2 ? QUIC_V2 : QUIC_V1, .dcid = dcid, .dcid_len = 8,
			    .pn_len = 2, .frames = f, .frames_len = n, .size = 1200 };
	struct quic_keys k;
	struct quic_conn c = { 0 };
	struct quic_dgram out;
	size_t len;
	int bare;

	if (n > 3000 || quic_initial_keys(p.version, dcid, 8, false, &k) < 0)
		return;
	len = qe_initial(pkt, &p, &k);
	quic_hello_init(&qh);
	quic_dgram_read(&c, pkt, len, &r, &out);
	if (out.status == QUIC_READ_SMALL || out.status == QUIC_READ_VERSION)
		abort();	/* it is a whole v1/v2 Initial of 1200 bytes or more */
	bare = quic_frames(f, n, count_crypto, NULL);
	/* PADDING after the frames changes nothing but an empty payload */
	if (out.status == QUIC_READ_GARBAGE && bare == 0)
		abort();
	check_hello();
}

/* One Initial of @f (@n bytes of frames), sealed for DCID @id, into @out. */
static size_t seal(uint8_t *out, const uint8_t *f, size_t n, uint8_t id, uint64_t pn)
{
	const uint8_t dcid[8] = { id, 2, 3, 4, 5, 6, 7, 8 };
	struct qe_pkt p = { .version = QUIC_V1, .dcid = dcid, .dcid_len = 8, .pn = pn,
			    .pn_len = 2, .frames = f, .frames_len = n, .size = 1200 };
	struct quic_keys k;

	if (quic_initial_keys(QUIC_V1, dcid, 8, false, &k) < 0)
		abort();
	return qe_initial(out, &p, &k);
}

static void table(const uint8_t *d, size_t n)
{
	static uint8_t pkt[2048];
	struct qflow_tab *t;
	uint64_t now = 0;
	uint64_t pn = 0;

	if (qflow_new(2, &t) < 0)
		abort();
	while (n >= 2) {
		size_t len = d[0] < n - 1 ? d[0] : n - 1;
		struct qflow_pkt p = { .sport = (uint16_t)(d[1] & 3), .dport = 443 };
		struct sni_result res;
		enum qflow_step s;

		p.src.family = p.dst.family = AF_INET;
		p.payload = d + 1;
		p.len = len;
		if (d[0] & 1) {
			p.len = seal(pkt, d + 1, len, (uint8_t)(d[0] >> 6), pn++);
			p.payload = pkt;
		}
		now += d[0] & 0x0f ? 10 : 3000;
		s = qflow_packet(t, &p, d[0] >> 7, now, 5000, &res);
		if (s == QFLOW_DECIDED || s == QFLOW_VERSION || s == QFLOW_LATE ||
		    s == QFLOW_TOO_MANY || s == QFLOW_REWRITTEN)
			qflow_settle(t, &p, d[0] & 2, now);
		if (d[0] == 0xff)
			qflow_sweep(t, now, 5000);
		if (qflow_count(t) > QFLOW_MAX || qflow_open_count(t, 0) > QFLOW_OPEN_PER_OWNER)
			abort();
		d += 1 + len;
		n -= 1 + len;
	}
	qflow_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qflow_pkt q;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		raw(data + 1, size - 1);
		if (qflow_pkt_parse(data + 1, size - 1, &q) == 0 &&
		    (q.payload < data + 1 || q.payload + q.len > data + size))
			abort();
		break;
	case 1:
		sealed(data + 1, size - 1);
		break;
	default:
		table(data + 1, size - 1);
		break;
	}
	return 0;
}
