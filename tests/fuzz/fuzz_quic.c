/*
 * fuzz_quic - netd/sni/quic.c on arbitrary bytes, two ways.  The first
 * byte picks: even, the rest is a client datagram as received
 * (quic_dgram_read() with a fresh connection, twice: a second read of the
 * same bytes must not change what the first reassembled); odd, the rest
 * is an Initial's plaintext frames, sealed by the test encoder
 * (tests/unit/quic_enc.h) into a valid 1200-byte Initial, so the frame
 * walker and the CRYPTO reassembly see what decrypts.  Checks: headers
 * stay inside the datagram, a sealed Initial always opens, the frames'
 * verdict is the same sealed or bare, a decided name is normalized.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		sealed(data + 1, size - 1);
	else
		raw(data + 1, size - 1);
	return 0;
}
