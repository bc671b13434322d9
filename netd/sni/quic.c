/*
 * quic - QUIC Initial packets read for their ClientHello.  See quic.h.
 * Every length is checked against what is there before it is used; the
 * crypto objects OpenSSL hands out are fetched once and kept for the
 * process (netd's loop is one thread).
 */
#include "netd/sni/quic.h"

#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "netd/sni/rd.h"

#define HASH_LEN 32	/* SHA-256: the Initial secrets' hash (RFC 9001 5.2) */

/* RFC 9001 5.2 and RFC 9369 3.3.1. */
static const uint8_t salt_v1[20] = { 0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
				     0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a };
static const uint8_t salt_v2[20] = { 0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
				     0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9 };

static struct {
	EVP_KDF *hkdf;
	EVP_KDF_CTX *kctx;	/* reused: its digest set once */
	bool kctx_ready;
	EVP_CIPHER *ecb, *gcm;
	EVP_CIPHER_CTX *ecb_ctx, *gcm_ctx;
} ossl;

static int ossl_init(void)
{
	if (ossl.gcm_ctx)
		return 0;
	if (!ossl.hkdf)
		ossl.hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	if (!ossl.ecb)
		ossl.ecb = EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
	if (!ossl.gcm)
		ossl.gcm = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	if (!ossl.ecb_ctx)
		ossl.ecb_ctx = EVP_CIPHER_CTX_new();
	if (!ossl.hkdf || !ossl.ecb || !ossl.gcm || !ossl.ecb_ctx)
		return -ENOMEM;
	if (!ossl.kctx && !(ossl.kctx = EVP_KDF_CTX_new(ossl.hkdf)))
		return -ENOMEM;
	ossl.gcm_ctx = EVP_CIPHER_CTX_new();
	return ossl.gcm_ctx ? 0 : -ENOMEM;
}

/* ---- varints and the header (RFC 9000 16, 17.2) ------------------------ */

/* A variable-length integer (RFC 9000 16): 1, 2, 4 or 8 bytes, the top two bits say which. */
static uint64_t rd_varint(struct rd *r)
{
	const uint8_t *p;
	size_t n;
	uint64_t v;

	if (r->bad || r->n < 1) {
		r->bad = true;
		return 0;
	}
	n = (size_t)1 << (r->p[0] >> 6);
	if (!(p = rd_take(r, n)))
		return 0;
	v = p[0] & 0x3f;
	for (size_t i = 1; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static enum quic_ptype long_type(uint32_t version, uint8_t b0)
{
	static const enum quic_ptype v1[4] = { QUIC_PT_INITIAL, QUIC_PT_0RTT, QUIC_PT_HANDSHAKE,
					       QUIC_PT_RETRY };
	/* RFC 9369 3.2: Initial 0b01, 0-RTT 0b10, Handshake 0b11, Retry 0b00 */
	static const enum quic_ptype v2[4] = { QUIC_PT_RETRY, QUIC_PT_INITIAL, QUIC_PT_0RTT,
					       QUIC_PT_HANDSHAKE };

	return version == QUIC_V2 ? v2[(b0 >> 4) & 3] : v1[(b0 >> 4) & 3];
}

int quic_hdr_parse(const uint8_t *buf, size_t len, struct quic_hdr *h)
{
	struct rd r = { .p = buf, .n = len };
	const uint8_t *p;
	uint64_t plen;
	size_t scid_len;

	memset(h, 0, sizeof(*h));
	if (len < 1)
		return -EBADMSG;
	if (!(buf[0] & 0x80)) {
		h->type = QUIC_PT_SHORT;	/* RFC 9000 17.3: the rest of the datagram */
		h->len = len;
		return 0;
	}
	rd_take(&r, 1);
	if (!(p = rd_take(&r, 4)))
		return -EBADMSG;
	h->version = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	h->len = len;
	if (h->version == 0) {
		h->type = QUIC_PT_VN;
		return 0;
	}
	if (h->version != QUIC_V1 && h->version != QUIC_V2) {
		/* RFC 8999 5.1: only the invariants hold; nothing after them is read. */
		h->type = QUIC_PT_OTHER_VERSION;
		return 0;
	}
	/* The fixed bit is not checked: a peer that saw grease_quic_bit in the
	 * other's transport parameters (or remembers it) sends it as 0 at
	 * random (RFC 9287 3); ngtcp2 does, in Initials too. */
	h->type = long_type(h->version, buf[0]);
	h->dcid_len = r.n ? r.p[0] : 0;
	rd_take(&r, 1);
	if (h->dcid_len > QUIC_CID_MAX || !(p = rd_take(&r, h->dcid_len)))
		return -EBADMSG;
	memcpy(h->dcid, p, h->dcid_len);
	scid_len = r.n ? r.p[0] : 0;
	rd_take(&r, 1);
	if (scid_len > QUIC_CID_MAX || !rd_take(&r, scid_len))
		return -EBADMSG;
	if (h->type == QUIC_PT_RETRY)
		return 0;
	if (h->type == QUIC_PT_INITIAL) {
		uint64_t tlen = rd_varint(&r);	/* RFC 9000 17.2.2: the token */

		if (r.bad || tlen > r.n)
			return -EBADMSG;
		rd_take(&r, (size_t)tlen);
	}
	plen = rd_varint(&r);
	if (r.bad || plen > r.n)
		return -EBADMSG;
	h->pn_off = len - r.n;
	h->len = h->pn_off + (size_t)plen;
	/* RFC 9001 5.4.2: the sample starts 4 bytes after the packet number. */
	if (plen < 4 + QUIC_SAMPLE_LEN)
		return -EBADMSG;
	return 0;
}

/* ---- keys (RFC 9001 5.1-5.2, RFC 8446 7.1) --------------------------------- */

/* One HKDF step: extract (@mode EXTRACT_ONLY, @salt) or expand (@info). */
static int hkdf(int mode, const uint8_t *salt, size_t salt_len, const uint8_t *key,
		size_t key_len, const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len)
{
	static const uint8_t none[1];
	OSSL_PARAM params[6], *p = params;

	if (ossl_init() < 0)
		return -ENOMEM;
	/* The context is kept: the digest is fetched by name once (that fetch
	 * is most of a step's cost); every call sets all of the rest. */
	if (!ossl.kctx_ready)
		*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
	*p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, key_len);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
						 (void *)(salt ? salt : none), salt_len);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
						 (void *)(info ? info : none), info_len);
	*p = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(ossl.kctx, out, out_len, params) != 1) {
		ossl.kctx_ready = false;
		EVP_KDF_CTX_reset(ossl.kctx);
		return -EIO;
	}
	ossl.kctx_ready = true;
	return 0;
}

/* HKDF-Expand-Label(@secret, @label, "", @out_len) (RFC 8446 7.1): "tls13 " + label. */
static int expand_label(const uint8_t *secret, const char *label, uint8_t *out, size_t out_len)
{
	uint8_t info[2 + 1 + 6 + 32 + 1];
	size_t ll = strlen(label), n = 0;

	if (ll > 32)
		return -EINVAL;
	info[n++] = (uint8_t)(out_len >> 8);
	info[n++] = (uint8_t)out_len;
	info[n++] = (uint8_t)(6 + ll);
	memcpy(info + n, "tls13 ", 6);
	n += 6;
	memcpy(info + n, label, ll);
	n += ll;
	info[n++] = 0;	/* an empty context */
	return hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, NULL, 0, secret, HASH_LEN, info, n, out, out_len);
}

int quic_initial_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len, bool server,
		      struct quic_keys *k)
{
	uint8_t initial[HASH_LEN], secret[HASH_LEN];
	bool v2 = version == QUIC_V2;
	int r;

	if (version != QUIC_V1 && !v2)
		return -EPROTONOSUPPORT;
	if (dcid_len > QUIC_CID_MAX)
		return -EINVAL;
	/* initial_secret = HKDF-Extract(initial_salt, client_dst_connection_id) */
	r = hkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, v2 ? salt_v2 : salt_v1, sizeof(salt_v1),
		 dcid_len ? dcid : (const uint8_t *)"", dcid_len, NULL, 0, initial, HASH_LEN);
	if (r == 0)
		r = expand_label(initial, server ? "server in" : "client in", secret, HASH_LEN);
	if (r == 0)
		r = expand_label(secret, v2 ? "quicv2 key" : "quic key", k->key, QUIC_KEY_LEN);
	if (r == 0)
		r = expand_label(secret, v2 ? "quicv2 iv" : "quic iv", k->iv, QUIC_IV_LEN);
	if (r == 0)
		r = expand_label(secret, v2 ? "quicv2 hp" : "quic hp", k->hp, QUIC_KEY_LEN);
	return r;
}

/* ---- packet protection (RFC 9001 5.3-5.4) ---------------------------------- */

/* mask = AES-ECB(hp, sample) (RFC 9001 5.4.3); the first 5 bytes are used. */
static int hp_mask(const uint8_t *hp, const uint8_t *sample, uint8_t mask[16])
{
	int n = 0;

	if (ossl_init() < 0 || EVP_EncryptInit_ex2(ossl.ecb_ctx, ossl.ecb, hp, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(ossl.ecb_ctx, 0) != 1 ||
	    EVP_EncryptUpdate(ossl.ecb_ctx, mask, &n, sample, QUIC_SAMPLE_LEN) != 1 || n != 16)
		return -EIO;
	return 0;
}

/* RFC 9000 A.3: the full packet number from its @bits-bit truncation. */
static uint64_t pn_decode(int64_t largest, uint64_t truncated, unsigned int bits)
{
	uint64_t expected = (uint64_t)(largest + 1), win = (uint64_t)1 << bits, hwin = win / 2;
	uint64_t cand = (expected & ~(win - 1)) | truncated;

	if (cand + hwin <= expected && cand < ((uint64_t)1 << 62) - win)
		return cand + win;
	if (cand > expected + hwin && cand >= win)
		return cand - win;
	return cand;
}

/*
 * AES-128-GCM open (RFC 9001 5.3) of @ct (@ct_len bytes, then the 16-byte
 * tag) into @out, with the AAD in three pieces: the unprotected first byte
 * @b0, the header's bytes @mid[0..@mid_len) as sent (a token makes them
 * long: not copied), the unprotected packet number @pnb.
 */
static int gcm_open(const struct quic_keys *k, const uint8_t *nonce, uint8_t b0,
		    const uint8_t *mid, size_t mid_len, const uint8_t *pnb, size_t pn_len,
		    const uint8_t *ct, size_t ct_len, uint8_t *out)
{
	EVP_CIPHER_CTX *c = ossl.gcm_ctx;
	int n = 0, m = 0;

	if (mid_len > INT32_MAX || ct_len > INT32_MAX)
		return -EBADMSG;
	if (EVP_DecryptInit_ex2(c, ossl.gcm, k->key, nonce, NULL) != 1 ||
	    EVP_DecryptUpdate(c, NULL, &n, &b0, 1) != 1 ||
	    EVP_DecryptUpdate(c, NULL, &n, mid, (int)mid_len) != 1 ||
	    EVP_DecryptUpdate(c, NULL, &n, pnb, (int)pn_len) != 1 ||
	    EVP_DecryptUpdate(c, out, &n, ct, (int)ct_len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, QUIC_TAG_LEN, (void *)(ct + ct_len)) != 1 ||
	    EVP_DecryptFinal_ex(c, out + n, &m) != 1)
		return -EBADMSG;
	return 0;
}

int quic_initial_open(const uint8_t *pkt, const struct quic_hdr *h, const struct quic_keys *k,
		      int64_t largest_pn, uint8_t *plain, size_t *plain_len, uint64_t *pn)
{
	uint8_t mask[16], nonce[QUIC_IV_LEN], pnb[4], b0;
	size_t pn_len, hl;
	uint64_t tpn = 0;

	if (ossl_init() < 0)
		return -ENOMEM;
	if (h->type != QUIC_PT_INITIAL || h->pn_off + 4 + QUIC_SAMPLE_LEN > h->len ||
	    hp_mask(k->hp, pkt + h->pn_off + 4, mask) < 0)
		return -EBADMSG;
	b0 = pkt[0] ^ (mask[0] & 0x0f);	/* a long header: 4 bits protected (5.4.1) */
	pn_len = (size_t)(b0 & 0x03) + 1;
	hl = h->pn_off + pn_len;
	if (hl + QUIC_TAG_LEN > h->len)
		return -EBADMSG;
	for (size_t i = 0; i < pn_len; i++) {
		pnb[i] = pkt[h->pn_off + i] ^ mask[1 + i];
		tpn = tpn << 8 | pnb[i];
	}
	*pn = pn_decode(largest_pn, tpn, (unsigned int)(8 * pn_len));
	memcpy(nonce, k->iv, QUIC_IV_LEN);	/* 5.3: the IV XOR the packet number */
	for (size_t i = 0; i < 8; i++)
		nonce[QUIC_IV_LEN - 1 - i] ^= (uint8_t)(*pn >> (8 * i));
	if (gcm_open(k, nonce, b0, pkt + 1, h->pn_off - 1, pnb, pn_len, pkt + hl,
		     h->len - hl - QUIC_TAG_LEN, plain) < 0)
		return -EBADMSG;
	*plain_len = h->len - hl - QUIC_TAG_LEN;
	/* RFC 9000 17.2: the reserved bits are zero once unprotected. */
	return b0 & 0x0c ? -EBADMSG : 0;
}

/* ---- frames (RFC 9000 19) ----------------------------------------------------- */

int quic_frames(const uint8_t *p, size_t len,
		int (*crypto)(void *ctx, uint64_t off, const uint8_t *data, size_t n), void *ctx)
{
	struct rd r = { .p = p, .n = len };
	unsigned int frames = 0;

	while (r.n) {
		uint64_t type = rd_varint(&r), off, n, count;
		const uint8_t *data;
		int e;

		frames++;
		switch (type) {
		case 0x00:	/* PADDING */
		case 0x01:	/* PING */
			break;
		case 0x02:	/* ACK: largest, delay, range count, first range, ranges */
		case 0x03:	/* ... and three ECN counts */
			rd_varint(&r);
			rd_varint(&r);
			count = rd_varint(&r);
			rd_varint(&r);
			for (uint64_t i = 0; i < count && !r.bad; i++) {
				rd_varint(&r);
				rd_varint(&r);
			}
			for (int i = 0; type == 0x03 && i < 3; i++)
				rd_varint(&r);
			break;
		case 0x06:	/* CRYPTO: offset, length, data */
			off = rd_varint(&r);
			n = rd_varint(&r);
			if (r.bad || n > r.n || off + n > ((uint64_t)1 << 62) - 1)
				return -EBADMSG;
			data = rd_take(&r, (size_t)n);
			if ((e = crypto(ctx, off, data, (size_t)n)) < 0)
				return e;
			break;
		case 0x1c:	/* CONNECTION_CLOSE: error code, frame type, reason */
			rd_varint(&r);
			rd_varint(&r);
			n = rd_varint(&r);
			if (r.bad || n > r.n)
				return -EBADMSG;
			rd_take(&r, (size_t)n);
			break;
		default:
			return -EBADMSG;	/* not allowed in an Initial (12.4) */
		}
		if (r.bad)
			return -EBADMSG;
	}
	return frames ? 0 : -EBADMSG;	/* 12.4: a packet carries at least one frame */
}

/* ---- the CRYPTO stream ------------------------------------------------------- */

void quic_hello_init(struct quic_hello *qh)
{
	qh->prefix = 0;
	memset(qh->have, 0, sizeof(qh->have));
}

static bool have(const struct quic_hello *qh, size_t i)
{
	return qh->have[i / 8] & (1u << (i % 8));
}

int quic_hello_add(struct quic_hello *qh, uint64_t off, const uint8_t *data, size_t n)
{
	if (off > QUIC_HELLO_MAX || n > QUIC_HELLO_MAX - off)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++)
		if (have(qh, (size_t)off + i) && qh->buf[off + i] != data[i])
			return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		qh->buf[off + i] = data[i];
		qh->have[(off + i) / 8] |= (uint8_t)(1u << ((off + i) % 8));
	}
	while (qh->prefix < QUIC_HELLO_MAX && have(qh, qh->prefix))
		qh->prefix++;
	return 0;
}

enum sni_status quic_hello_parse(const struct quic_hello *qh, struct sni_result *res)
{
	enum sni_status s = sni_parse_handshake(qh->buf, qh->prefix, res);

	/* A hello that would reach past the bound can never be read whole. */
	if (s == SNI_MORE && qh->prefix == QUIC_HELLO_MAX)
		s = res->status = SNI_TOO_LONG;
	return s;
}

/* ---- datagrams ------------------------------------------------------------------ */

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Open Initial @pkt (@h) for @c: its keys; keys for the packet's version
 * from the original DCID; else keys from its own DCID (a new connection).
 * Return: 0 (opened; *@fresh if by the last); -EBADMSG.
 */
static int open_for(struct quic_conn *c, const uint8_t *pkt, const struct quic_hdr *h,
		    uint8_t *plain, size_t *plain_len, uint64_t *pn, bool *fresh)
{
	struct quic_keys k;

	*fresh = false;
	if (c->keyed && c->version == h->version &&
	    quic_initial_open(pkt, h, &c->k, c->largest_pn, plain, plain_len, pn) == 0)
		return 0;
	if (c->keyed && c->version != h->version &&
	    quic_initial_keys(h->version, c->odcid, c->odcid_len, false, &k) == 0 &&
	    quic_initial_open(pkt, h, &k, c->largest_pn, plain, plain_len, pn) == 0) {
		c->k = k;	/* the version changed, the connection did not (RFC 9368) */
		c->version = h->version;
		return 0;
	}
	if (c->keyed && h->dcid_len == c->odcid_len && !memcmp(h->dcid, c->odcid, h->dcid_len))
		return -EBADMSG;	/* its own DCID gives the keys tried first */
	if (quic_initial_keys(h->version, h->dcid, h->dcid_len, false, &k) < 0 ||
	    quic_initial_open(pkt, h, &k, -1, plain, plain_len, pn) < 0)
		return -EBADMSG;
	c->keyed = true;
	c->version = h->version;
	memcpy(c->odcid, h->dcid, h->dcid_len);
	c->odcid_len = h->dcid_len;
	c->k = k;
	c->largest_pn = -1;
	*fresh = true;
	return 0;
}

/* One Initial of the datagram: opened, its frames read. */
static enum quic_read read_initial(struct quic_conn *c, const uint8_t *pkt,
				   const struct quic_hdr *h, const struct quic_reader *r,
				   struct quic_dgram *out)
{
	uint8_t plain[65536];
	size_t plain_len = 0;
	uint64_t pn = 0;
	bool fresh;
	int e;

	if (open_for(c, pkt, h, plain, &plain_len, &pn, &fresh) < 0)
		return QUIC_READ_GARBAGE;
	if (fresh) {
		out->new_conn = true;
		r->reset(r->ctx);
	}
	if ((int64_t)pn > c->largest_pn)
		c->largest_pn = (int64_t)pn;
	out->n_initial++;
	e = quic_frames(plain, plain_len, r->crypto, r->ctx);
	if (e == -EBADMSG)
		return QUIC_READ_GARBAGE;
	if (e < 0) {
		out->cb_err = e;
		return QUIC_READ_STOP;
	}
	return QUIC_READ_OK;
}

enum quic_read quic_dgram_read(struct quic_conn *c, const uint8_t *d, size_t len,
			       const struct quic_reader *r, struct quic_dgram *out)
{
	struct quic_hdr h, first = { 0 };
	size_t pos = 0;

	memset(out, 0, sizeof(*out));
	while (pos < len) {
		enum quic_read s;

		if (pos && all_zero(d + pos, len - pos))
			break;	/* padding after the last packet */
		if (quic_hdr_parse(d + pos, len - pos, &h) < 0)
			return out->status = QUIC_READ_GARBAGE;
		if (!pos)
			first = h;
		if (h.type != QUIC_PT_SHORT && !out->version)
			out->version = h.version;
		switch (h.type) {
		case QUIC_PT_OTHER_VERSION:
			return out->status = QUIC_READ_VERSION;
		case QUIC_PT_VN:
		case QUIC_PT_RETRY:
			return out->status = QUIC_READ_GARBAGE;	/* a server's, not a client's */
		case QUIC_PT_SHORT:
			/* 1-RTT: last in a datagram (RFC 9000 12.2), never read */
			out->n_other++;
			return out->status = QUIC_READ_OK;
		default:
			break;
		}
		/* RFC 9000 12.2: coalesced packets share the first one's DCID. */
		if (pos && (h.dcid_len != first.dcid_len || memcmp(h.dcid, first.dcid, h.dcid_len)))
			return out->status = QUIC_READ_GARBAGE;
		if (h.type == QUIC_PT_INITIAL && len < QUIC_DGRAM_MIN) {
			out->n_small++;	/* not read: a server discards it, not the rest */
		} else if (h.type == QUIC_PT_INITIAL) {
			if ((s = read_initial(c, d + pos, &h, r, out)) != QUIC_READ_OK)
				return out->status = s;
		} else {
			out->n_other++;	/* 0-RTT, Handshake: keys from the handshake */
		}
		pos += h.len;
	}
	return out->status = out->n_small ? QUIC_READ_SMALL : QUIC_READ_OK;
}
