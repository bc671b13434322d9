/*
 * quic_enc.h - a test-only QUIC Initial encoder (RFC 9000 17.2.2, RFC 9001
 * 5.3-5.4): frames in, a protected Initial out, so the tests can build the
 * packets a client would send (one ClientHello in one packet, split over
 * two, coalesced, after a Retry) and check netd/sni/quic.c reads them.  It
 * seals with OpenSSL directly, not with anything of quic.c but
 * quic_initial_keys() (itself checked against the RFC vectors); test_quic
 * checks that it reproduces the RFCs' sample packets byte for byte.
 * Header-only: used by tests/unit/test_quic.c, tests/fuzz/fuzz_quic.c and
 * tests/bench/quic_bench.c.  Never part of netd.
 */
#ifndef NETD_TESTS_QUIC_ENC_H
#define NETD_TESTS_QUIC_ENC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

#include "netd/sni/quic.h"

/* A variable-length integer (RFC 9000 16) in the shortest form. */
static inline size_t qe_varint(uint8_t *o, uint64_t v)
{
	size_t n = v < 64 ? 1 : v < 16384 ? 2 : v < (1u << 30) ? 4 : 8;

	for (size_t i = 0; i < n; i++)
		o[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	o[0] |= (uint8_t)((n == 1 ? 0 : n == 2 ? 1 : n == 4 ? 2 : 3) << 6);
	return n;
}

/* A CRYPTO frame (RFC 9000 19.6). */
static inline size_t qe_crypto(uint8_t *o, uint64_t off, const uint8_t *d, size_t n)
{
	size_t k = 0;

	o[k++] = 0x06;
	k += qe_varint(o + k, off);
	k += qe_varint(o + k, n);
	memcpy(o + k, d, n);
	return k + n;
}

struct qe_pkt {
	uint32_t version;
	const uint8_t *dcid, *scid, *token;
	size_t dcid_len, scid_len, token_len;
	uint64_t pn;
	size_t pn_len;			/* 1..4 */
	const uint8_t *frames;
	size_t frames_len;
	size_t size;			/* PADDING added up to this packet size (0: none) */
	bool grease;			/* the fixed bit 0 (RFC 9287) */
};

/*
 * qe_initial() - the protected Initial @p into @out (room for p->size or
 * the packet, whichever is larger), with client keys @k.  Return: its length.
 */
static inline size_t qe_initial(uint8_t *out, const struct qe_pkt *p, const struct quic_keys *k)
{
	uint8_t nonce[QUIC_IV_LEN], mask[16];
	size_t n = 0, pn_off, body, pad = 0, hdr;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l = 0;

	out[n++] = (uint8_t)((p->grease ? 0x80 : 0xc0) | (p->version == QUIC_V2 ? 0x10 : 0x00) |
			     (p->pn_len - 1));
	for (int i = 3; i >= 0; i--)
		out[n++] = (uint8_t)(p->version >> (8 * i));
	out[n++] = (uint8_t)p->dcid_len;
	if (p->dcid_len)
		memcpy(out + n, p->dcid, p->dcid_len);
	n += p->dcid_len;
	out[n++] = (uint8_t)p->scid_len;
	if (p->scid_len)
		memcpy(out + n, p->scid, p->scid_len);
	n += p->scid_len;
	n += qe_varint(out + n, p->token_len);
	if (p->token_len)
		memcpy(out + n, p->token, p->token_len);
	n += p->token_len;
	body = p->pn_len + p->frames_len + QUIC_TAG_LEN;
	if (p->size > n + 2 + body)
		pad = p->size - (n + 2 + body);
	body += pad;
	out[n++] = (uint8_t)(0x40 | body >> 8);	/* Length, two bytes */
	out[n++] = (uint8_t)body;
	pn_off = n;
	for (size_t i = 0; i < p->pn_len; i++)
		out[n++] = (uint8_t)(p->pn >> (8 * (p->pn_len - 1 - i)));
	hdr = n;
	memcpy(out + n, p->frames, p->frames_len);
	memset(out + n + p->frames_len, 0, pad);	/* PADDING frames */
	memcpy(nonce, k->iv, QUIC_IV_LEN);
	for (size_t i = 0; i < 8; i++)
		nonce[QUIC_IV_LEN - 1 - i] ^= (uint8_t)(p->pn >> (8 * i));
	EVP_EncryptInit_ex2(c, EVP_aes_128_gcm(), k->key, nonce, NULL);
	EVP_EncryptUpdate(c, NULL, &l, out, (int)hdr);
	EVP_EncryptUpdate(c, out + hdr, &l, out + hdr, (int)(p->frames_len + pad));
	EVP_EncryptFinal_ex(c, out + hdr + l, &l);
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, QUIC_TAG_LEN, out + hdr + p->frames_len + pad);
	n = hdr + p->frames_len + pad + QUIC_TAG_LEN;
	/* Header protection (RFC 9001 5.4.1): the sample 4 bytes after pn_off. */
	EVP_EncryptInit_ex2(c, EVP_aes_128_ecb(), k->hp, NULL, NULL);
	EVP_CIPHER_CTX_set_padding(c, 0);
	EVP_EncryptUpdate(c, mask, &l, out + pn_off + 4, 16);
	EVP_CIPHER_CTX_free(c);
	out[0] ^= mask[0] & 0x0f;
	for (size_t i = 0; i < p->pn_len; i++)
		out[pn_off + i] ^= mask[1 + i];
	return n;
}

/*
 * qe_client_hello_ext() - a TLS 1.3 ClientHello handshake message (RFC 8446
 * 4.1.2) into @out naming @sni (NULL: no server_name), with @extra bytes of
 * an extension of type @ext_type (0x0a0a, a GREASE type: a stand-in for a
 * post-quantum key share; 0xfe0d: an ECH extension's type, for a hello
 * that carries one, as GREASE ECH does - the check never reads inside).
 * Return: its length (4 + body).
 */
static inline size_t qe_client_hello_ext(uint8_t *out, const char *sni, size_t extra,
					 uint16_t ext_type)
{
	size_t n = 4, ext_at, sl = sni ? strlen(sni) : 0;

	out[n++] = 3;
	out[n++] = 3;
	memset(out + n, 0x5a, 32);	/* random */
	n += 32;
	out[n++] = 0;			/* legacy_session_id */
	out[n++] = 0;
	out[n++] = 2;
	out[n++] = 0x13;		/* TLS_AES_128_GCM_SHA256 */
	out[n++] = 0x01;
	out[n++] = 1;
	out[n++] = 0;			/* null compression */
	ext_at = n;
	n += 2;
	if (sni) {
		out[n++] = 0;		/* server_name (RFC 6066 3) */
		out[n++] = 0;
		out[n++] = (uint8_t)((sl + 5) >> 8);
		out[n++] = (uint8_t)(sl + 5);
		out[n++] = (uint8_t)((sl + 3) >> 8);
		out[n++] = (uint8_t)(sl + 3);
		out[n++] = 0;		/* host_name */
		out[n++] = (uint8_t)(sl >> 8);
		out[n++] = (uint8_t)sl;
		memcpy(out + n, sni, sl);
		n += sl;
	}
	if (extra) {
		out[n++] = (uint8_t)(ext_type >> 8);
		out[n++] = (uint8_t)ext_type;
		out[n++] = (uint8_t)(extra >> 8);
		out[n++] = (uint8_t)extra;
		memset(out + n, 0x11, extra);
		n += extra;
	}
	out[ext_at] = (uint8_t)((n - ext_at - 2) >> 8);
	out[ext_at + 1] = (uint8_t)(n - ext_at - 2);
	out[0] = 1;			/* client_hello */
	out[1] = (uint8_t)((n - 4) >> 16);
	out[2] = (uint8_t)((n - 4) >> 8);
	out[3] = (uint8_t)(n - 4);
	return n;
}

/* qe_client_hello() - the same with a GREASE type (RFC 8701) as the extra extension. */
static inline size_t qe_client_hello(uint8_t *out, const char *sni, size_t extra)
{
	return qe_client_hello_ext(out, sni, extra, 0x0a0a);
}

#endif
