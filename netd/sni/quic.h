/*
 * quic - the ClientHello a QUIC client sends in its Initial packets, for the
 * SNI check (docs/sni.md): QUIC version 1 (RFC 9000 17.2, RFC 9001 5) and
 * version 2 (RFC 9369).  An Initial is protected with keys anyone can
 * derive from its Destination Connection ID (RFC 9001 5.2), so a middlebox
 * can read it: header protection off (AES-128-ECB over a sample, 5.4),
 * AES-128-GCM open (5.3), the frames walked (RFC 9000 19), the CRYPTO data
 * reassembled by offset across packets and datagrams (a post-quantum
 * ClientHello fills two or three), bounded at QUIC_HELLO_MAX bytes, then
 * handed to sni_parse_handshake().
 *
 * Pure over memory: OpenSSL's EVP does the crypto (HKDF through EVP_KDF,
 * AES through EVP_CIPHER, fetched once and kept); no I/O, no logging, no
 * clock.  Nothing here decides what to do with a packet: qflow.h does.
 *
 * Not done: 0-RTT, Handshake and 1-RTT packets are never opened (their
 * keys come from the TLS handshake); Retry and Version Negotiation come
 * from servers and are only recognized; the Retry integrity tag is not
 * checked (a client never sends one).
 */
#ifndef NETD_SNI_QUIC_H
#define NETD_SNI_QUIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/sni/sni.h"

#define QUIC_V1         0x00000001u	/* RFC 9000 15 */
#define QUIC_V2         0x6b3343cfu	/* RFC 9369 3.1 */
#define QUIC_CID_MAX    20		/* RFC 9000 17.2: v1 and v2 connection IDs */
#define QUIC_HELLO_MAX  SNI_STREAM_MAX	/* CRYPTO bytes of the Initial space read at most */
#define QUIC_DGRAM_MIN  1200		/* RFC 9000 14.1: a datagram with an Initial */
#define QUIC_KEY_LEN    16		/* AES-128 */
#define QUIC_IV_LEN     12
#define QUIC_TAG_LEN    16
#define QUIC_SAMPLE_LEN 16		/* RFC 9001 5.4.2 */

enum quic_ptype {
	QUIC_PT_INITIAL,
	QUIC_PT_0RTT,
	QUIC_PT_HANDSHAKE,
	QUIC_PT_RETRY,
	QUIC_PT_VN,		/* version 0: Version Negotiation (RFC 9000 17.2.1) */
	QUIC_PT_SHORT,		/* 1-RTT (RFC 9000 17.3) */
	QUIC_PT_OTHER_VERSION,	/* a long header of a version not read here */
};

/* One packet's header, as far as it is not protected (RFC 9000 17.2). */
struct quic_hdr {
	enum quic_ptype type;
	uint32_t version;
	uint8_t dcid[QUIC_CID_MAX];
	size_t dcid_len;
	size_t pn_off;		/* Initial, 0-RTT, Handshake: where the packet number starts */
	size_t len;		/* bytes of the datagram this packet takes (coalesced
				 * packets follow it: RFC 9000 12.2) */
};

/*
 * quic_hdr_parse() - the header of the packet at @buf (@len bytes left in
 * the datagram) into *@h.  A long header of v1 or v2 must have connection
 * IDs of at most 20 bytes (its fixed bit may be greased: RFC 9287), and for
 * Initial, 0-RTT and Handshake a Length that fits in @len and leaves room
 * for the header protection sample (RFC 9001 5.4.2).  Other versions, a
 * Version Negotiation, Retry and a short header take the rest of @len.
 * Return: 0; -EBADMSG if malformed.
 */
int quic_hdr_parse(const uint8_t *buf, size_t len, struct quic_hdr *h);

/* Initial packet protection keys (RFC 9001 5.1-5.2). */
struct quic_keys {
	uint8_t key[QUIC_KEY_LEN];
	uint8_t iv[QUIC_IV_LEN];
	uint8_t hp[QUIC_KEY_LEN];
};

/*
 * quic_initial_keys() - the client's (@server false) or the server's
 * Initial keys for @version (QUIC_V1 or QUIC_V2) and the client's first
 * Destination Connection ID @dcid (@dcid_len <= QUIC_CID_MAX bytes):
 * HKDF-Extract with the version's salt, HKDF-Expand-Label "client in" /
 * "server in", then "quic key", "quic iv", "quic hp" (v2: "quicv2 key",
 * "quicv2 iv", "quicv2 hp"; RFC 9369 3.3).
 * Return: 0; -EPROTONOSUPPORT for another version; -EINVAL; -ENOMEM or
 * -EIO if OpenSSL fails.
 */
int quic_initial_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len, bool server,
		      struct quic_keys *k);

/*
 * quic_initial_open() - remove header protection (RFC 9001 5.4.1, AES-ECB
 * over the 16 bytes 4 after the packet number's start) and open the
 * AES-128-GCM payload (5.3) of the Initial at @pkt (@h from
 * quic_hdr_parse(); @pkt is not changed).  The packet number is
 * reconstructed from @largest_pn (the largest opened before, -1 for none;
 * RFC 9000 A.3).
 * @plain: at least @h->len bytes; gets the frames.  *@plain_len, *@pn: set
 * on success.
 * Return: 0; -EBADMSG if the keys do not open it (the tag does not
 * verify) or the reserved bits are not zero (RFC 9000 17.2).
 */
int quic_initial_open(const uint8_t *pkt, const struct quic_hdr *h, const struct quic_keys *k,
		      int64_t largest_pn, uint8_t *plain, size_t *plain_len, uint64_t *pn);

/*
 * quic_frames() - walk the frames of an opened Initial (RFC 9000 19):
 * PADDING, PING, ACK, CRYPTO and CONNECTION_CLOSE (0x1c) are what an
 * Initial may carry (12.4, Table 3); any other type, a frame that runs
 * past the end, or no frame at all is malformed.  @crypto is called for
 * each CRYPTO frame (its stream offset, its data, borrowed); a negative
 * return stops the walk and is returned.
 * Return: 0; -EBADMSG; what @crypto returned.
 */
int quic_frames(const uint8_t *p, size_t len,
		int (*crypto)(void *ctx, uint64_t off, const uint8_t *data, size_t n), void *ctx);

/*
 * The CRYPTO stream of the Initial space, reassembled by offset: bytes in
 * any order, any overlap; [0, prefix) is contiguous.  quic_hello_init()
 * empties it.
 */
struct quic_hello {
	size_t prefix;
	uint8_t have[QUIC_HELLO_MAX / 8];	/* a bit per byte received */
	uint8_t buf[QUIC_HELLO_MAX];
};

/* quic_hello_init() - @qh empty: no byte received, prefix 0. */
void quic_hello_init(struct quic_hello *qh);

/*
 * quic_hello_add() - CRYPTO data @data[0..@n) at stream offset @off.
 * Return: 0; -EMSGSIZE if it reaches past QUIC_HELLO_MAX (nothing is
 * added); -EBADMSG if it carries other bytes than were added before at the
 * same offsets (RFC 9000 2.2: the data at an offset must not change; a
 * server keeps the first), nothing added.
 */
int quic_hello_add(struct quic_hello *qh, uint64_t off, const uint8_t *data, size_t n);

/*
 * quic_hello_parse() - sni_parse_handshake() over the contiguous prefix.
 * Return: res->status (SNI_MORE while the ClientHello is incomplete).
 */
enum sni_status quic_hello_parse(const struct quic_hello *qh, struct sni_result *res);

/*
 * Which connection a flow reads: the client's keys from the Destination
 * Connection ID of the connection's first Initial (RFC 9001 5.2: later
 * Initials keep those keys when the client switches to the server's
 * connection ID), and the largest packet number opened.
 */
struct quic_conn {
	bool keyed;
	uint32_t version;
	uint8_t odcid[QUIC_CID_MAX];
	size_t odcid_len;
	struct quic_keys k;
	int64_t largest_pn;
};

enum quic_read {
	QUIC_READ_OK,		/* every Initial read (maybe none: see quic_dgram) */
	QUIC_READ_SMALL,	/* Initials in a datagram under QUIC_DGRAM_MIN: not
				 * read (a server discards them, and only them:
				 * RFC 9000 14.1); the rest was (n_small) */
	QUIC_READ_VERSION,	/* a long header of a version not read here */
	QUIC_READ_GARBAGE,	/* not QUIC from a client: malformed, an Initial no key
				 * opens, a frame an Initial may not carry, a Retry or
				 * Version Negotiation, coalesced long-header
				 * packets of two connection IDs */
	QUIC_READ_STOP,		/* the crypto callback stopped the walk (cb_err) */
};

/* What one datagram held. */
struct quic_dgram {
	enum quic_read status;
	uint32_t version;	/* of the first long header, 0 if none */
	unsigned int n_initial;	/* Initials opened */
	unsigned int n_other;	/* 0-RTT, Handshake and short-header packets: not read */
	unsigned int n_small;	/* Initials not read: the datagram is under QUIC_DGRAM_MIN */
	bool new_conn;		/* an Initial opened only with keys from its own DCID:
				 * the client started a new connection (after a Retry
				 * or a Version Negotiation, or a second connection on
				 * the same addresses and ports); @reset was called */
	int cb_err;		/* QUIC_READ_STOP: what @crypto returned */
};

struct quic_reader {
	/* CRYPTO data of an Initial of the connection being read (as quic_frames()). */
	int (*crypto)(void *ctx, uint64_t off, const uint8_t *data, size_t n);
	/* The connection changed (or got its first keys): forget its CRYPTO stream. */
	void (*reset)(void *ctx);
	void *ctx;
};

/*
 * quic_dgram_read() - read the client's datagram @d (@len bytes, a UDP
 * payload; not retained) for connection @c: each coalesced packet's header;
 * each Initial opened with @c's keys, else with keys for its version from
 * @c's original DCID (compatible version negotiation, RFC 9368), else from
 * its own DCID (a new connection: @c is re-keyed, r->reset() called); its
 * CRYPTO frames to r->crypto().  Zero bytes after the last long-header
 * packet are padding; other bytes there are a short-header packet (1-RTT
 * comes last: RFC 9000 12.2), counted in n_other.  *@out says what was found.
 * Return: out->status.
 */
enum quic_read quic_dgram_read(struct quic_conn *c, const uint8_t *d, size_t len,
			       const struct quic_reader *r, struct quic_dgram *out);


#endif
