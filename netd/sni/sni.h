/*
 * sni - the name a new TCP connection says it is for, read from its first
 * payload bytes: a TLS ClientHello's server_name (RFC 8446 4.1.2, RFC 6066
 * 3), or an HTTP/1.x request's Host (RFC 9112 3.2); an HTTP/2 prior-knowledge
 * preface (RFC 9113 3.4) is recognized but not decoded (HPACK).  Pure: bytes
 * in, a verdict out; no I/O, no allocation, no logging.
 *
 * Incremental: the caller hands in the stream's first bytes as they arrive
 * (split across any number of TCP segments, or TLS records); each call
 * re-reads the whole prefix and says "need more" until it can decide.
 * Nothing past SNI_STREAM_MAX bytes is ever read: a client that has not
 * said its name by then gets SNI_TOO_LONG.
 *
 * What this module does not do: decrypt anything (ECH's inner name is
 * unknowable: the outer, public name is reported with SNI_ECH), parse
 * QUIC Initial packets (quic.h does, and hands the ClientHello it
 * reassembled to sni_parse_handshake()), decode HPACK, or judge whether a
 * name is allowed (sni_match.h does that).
 */
#ifndef NETD_SNI_H
#define NETD_SNI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNI_STREAM_MAX 16384	/* bytes of a stream read at most */
#define SNI_NAME_MAX   253	/* presentation form, no trailing dot (RFC 1035 3.1) */

#define SNI_EXT_SERVER_NAME 0x0000	/* RFC 6066 3 */
#define SNI_EXT_ECH         0xfe0d	/* draft-ietf-tls-esni, encrypted_client_hello */
#define SNI_EXT_ALPN        0x0010	/* RFC 7301 3.1, application_layer_protocol_negotiation */

/* The ALPN protocols a ClientHello offered (sni_result.alpn), as bits. */
#define SNI_ALPN_H2     0x1u	/* "h2" (RFC 9113 3.1) */
#define SNI_ALPN_HTTP11 0x2u	/* "http/1.1" */
#define SNI_ALPN_OTHER  0x4u	/* anything else */

enum sni_status {
	SNI_MORE,	/* undecided: feed more bytes */
	SNI_NAME,	/* a name was found: res->name */
	SNI_NO_NAME,	/* well-formed, but names nothing (TLS without server_name,
			 * HTTP/1.0 without Host, the HTTP/2 preface) */
	SNI_ECH,	/* TLS with encrypted_client_hello: res->name is the outer
			 * (public) name, or "" if the outer hello has none */
	SNI_BAD_NAME,	/* the name is not a valid A-label host name (non-ASCII,
			 * an IP literal in brackets, empty label, too long, ...) */
	SNI_GARBAGE,	/* neither TLS nor HTTP, or malformed */
	SNI_TOO_LONG,	/* undecided within SNI_STREAM_MAX bytes */
};

enum sni_proto {
	SNI_PROTO_UNKNOWN,
	SNI_PROTO_TLS,
	SNI_PROTO_HTTP1,
	SNI_PROTO_H2,	/* prior knowledge ("PRI * HTTP/2.0" preface) */
	SNI_PROTO_QUIC,	/* a ClientHello from QUIC Initial packets (quic.h) */
};

struct sni_result {
	enum sni_status status;
	enum sni_proto proto;	/* what the bytes looked like so far */
	char name[SNI_NAME_MAX + 1];	/* SNI_NAME, SNI_ECH: lower-case, no trailing
					 * dot, no port; "" otherwise */
	unsigned int alpn;	/* TLS: SNI_ALPN_* bits the hello offered; 0: no
				 * ALPN extension (or not TLS) */
	bool ech;		/* a whole ClientHello that carried encrypted_client_hello
				 * (real or GREASE: indistinguishable): status SNI_ECH,
				 * or SNI_BAD_NAME for its outer name; or what
				 * sni_ech_outer() (sni_match.h) made of SNI_ECH */
};

/*
 * sni_parse() - decide what the stream prefix @buf[0..@len) names.
 * @buf: the first @len bytes the client sent, in order; not retained.
 *       Bytes beyond SNI_STREAM_MAX are ignored.
 * @res: filled in every case (status, proto, name).
 * TLS: one or more handshake records (type 22, version 3.x, length <=
 * 2^14 + 256) carrying one ClientHello (handshake type 1); records may
 * split it anywhere.  The server_name list's host_name entry (type 0) is
 * the name; duplicate extensions or two host_names are SNI_GARBAGE (RFC
 * 8446 4.2, RFC 6066 3).
 * HTTP/1.x: a request line (method SP target SP HTTP/1.x CRLF), then header
 * fields up to the empty line; the Host field's uri-host, or the authority of
 * an absolute-form or authority-form target (RFC 9112 3.2.2-3.2.3).  Two
 * Host fields, a Host that disagrees with the target's authority, obs-fold,
 * whitespace before a field's colon and bare CR or LF are SNI_GARBAGE: a
 * server might read them differently than we do.
 * Return: res->status.
 */
enum sni_status sni_parse(const uint8_t *buf, size_t len, struct sni_result *res);

/*
 * sni_parse_handshake() - the same verdict as sni_parse() on TLS, over a
 * bare handshake message instead of TLS records: QUIC carries the
 * ClientHello in CRYPTO frames, without the record layer (RFC 9001 4.1.3).
 * @msg: the first @len bytes of the handshake stream (HandshakeType 1,
 *       a 24-bit length, the ClientHello; RFC 8446 4); not retained.
 * @res: filled in every case; res->proto is SNI_PROTO_QUIC.
 * Return: res->status: SNI_MORE until the whole message is there; a
 * message longer than SNI_STREAM_MAX is SNI_TOO_LONG; any other
 * handshake type SNI_GARBAGE.
 */
enum sni_status sni_parse_handshake(const uint8_t *msg, size_t len, struct sni_result *res);

/*
 * sni_name_norm() - normalize host name @in[0..@len) into @out (>=
 * SNI_NAME_MAX + 1 bytes): lower-case, one trailing dot dropped; labels of
 * [a-z0-9_-], 1..63 bytes, at most SNI_NAME_MAX bytes in all (RFC 1035 2.3.4,
 * 3.1).  Non-ASCII (U-labels) is refused: A-labels only.
 * Return: 0; -EINVAL (@out is then "").
 */
int sni_name_norm(const char *in, size_t len, char *out);

/* sni_status_str() - "name", "need-more", ... for logs and the audit trail. */
const char *sni_status_str(enum sni_status s);

/* sni_proto_str() - "tls", "http", "h2", "quic" or "unknown". */
const char *sni_proto_str(enum sni_proto p);

/*
 * An accumulating buffer over sni_parse(), for a caller that gets the
 * stream a segment at a time.  sni_stream_init() empties it;
 * sni_stream_feed() appends @data[0..@len) (in stream order; the caller
 * drops retransmissions) and parses everything so far.  Once decided, the
 * result sticks and more data is not looked at.  Return: res->status.
 */
struct sni_stream {
	uint8_t buf[SNI_STREAM_MAX];
	size_t len;
	struct sni_result res;
};

void sni_stream_init(struct sni_stream *st);
enum sni_status sni_stream_feed(struct sni_stream *st, const uint8_t *data, size_t len,
				struct sni_result *res);

#endif
