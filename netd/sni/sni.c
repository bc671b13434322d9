/*
 * sni - TLS ClientHello server_name and HTTP/1.x Host from a stream's first
 * bytes.  See sni.h.  Every length is checked against what is there before
 * it is used; nothing here trusts the client.
 */
#include "netd/sni/sni.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "netd/sni/rd.h"

#define TLS_REC_HDR        5
#define TLS_CT_HANDSHAKE   22	/* RFC 8446 5.1, ContentType.handshake */
#define TLS_HS_CLIENT_HELLO 1	/* RFC 8446 4, HandshakeType.client_hello */
#define TLS_REC_MAX        16384	/* RFC 8446 5.1: a TLSPlaintext fragment is <= 2^14 */
#define TLS_EXT_MAX        256	/* extensions per hello; real clients send ~20 */
#define SNI_HOST_NAME      0	/* RFC 6066 3, NameType.host_name */
#define HTTP_METHOD_MAX    32	/* bytes of a method token before we call it garbage */

static const char h2_preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";	/* RFC 9113 3.4 */
#define H2_PREFACE_LEN (sizeof(h2_preface) - 1)

/* ---- names ------------------------------------------------------------ */

int sni_name_norm(const char *in, size_t len, char *out)
{
	size_t lab = 0;

	out[0] = '\0';
	if (len && in[len - 1] == '.')
		len--;		/* "example.com." is example.com */
	if (len == 0 || len > SNI_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		/* A-labels only: a U-label (or any byte >= 0x80) is refused, as the
		 * policy parser refuses it (RFC 5890 2.3.2.1). */
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.')) {
			out[0] = '\0';
			return -EINVAL;
		}
		out[i] = (char)c;
	}
	out[len] = '\0';
	for (size_t i = 0; i <= len; i++) {
		if (i < len && out[i] != '.')
			continue;
		if (i == lab || i - lab > 63) {	/* RFC 1035 2.3.4 */
			out[0] = '\0';
			return -EINVAL;
		}
		lab = i + 1;
	}
	return 0;
}

static enum sni_status set(struct sni_result *res, enum sni_status s)
{
	res->status = s;
	if (s != SNI_NAME && s != SNI_ECH)
		res->name[0] = '\0';
	return s;
}

/* Store name @s/@n in @res: SNI_NAME (or @ok_status) if valid, else SNI_BAD_NAME. */
static enum sni_status set_name(struct sni_result *res, const char *s, size_t n,
				enum sni_status ok_status)
{
	if (sni_name_norm(s, n, res->name) < 0)
		return set(res, SNI_BAD_NAME);
	return set(res, ok_status);
}

/* ---- TLS -------------------------------------------------------------- */

/* A vector with an @lenbytes-byte length prefix, as a sub-reader. */
static struct rd rd_vec(struct rd *r, size_t lenbytes)
{
	size_t n = rd_uint(r, lenbytes);
	const uint8_t *p = rd_take(r, n);

	return (struct rd){ .p = p, .n = p ? n : 0, .bad = !p };
}

/*
 * RFC 6066 3: ServerNameList server_name_list<1..2^16-1>, each entry a
 * NameType and, for host_name, a HostName<1..2^16-1>.  Sets *@name/@n to
 * the host_name (borrowed from @ext).  Return: false if malformed.
 */
static bool tls_server_name(struct rd ext, const uint8_t **name, size_t *n)
{
	struct rd list = rd_vec(&ext, 2);

	if (list.bad || ext.n != 0 || list.n == 0)
		return false;
	while (list.n) {
		unsigned int type = rd_uint(&list, 1);
		struct rd hn = rd_vec(&list, 2);

		if (list.bad || hn.n == 0)
			return false;
		if (type != SNI_HOST_NAME)
			continue;	/* no other NameType is defined; skip it */
		if (*name)
			return false;	/* "MUST NOT contain more than one name of the same name_type" */
		*name = hn.p;
		*n = hn.n;
	}
	return true;
}

/*
 * RFC 7301 3.1: ProtocolNameList protocol_name_list<2..2^16-1>, each a
 * ProtocolName<1..2^8-1>.  Return: the SNI_ALPN_* bits offered; 0 if
 * malformed (the caller calls that garbage).
 */
static unsigned int tls_alpn(struct rd ext)
{
	struct rd list = rd_vec(&ext, 2);
	unsigned int bits = 0;

	if (list.bad || ext.n != 0 || list.n == 0)
		return 0;
	while (list.n) {
		struct rd pn = rd_vec(&list, 1);

		if (list.bad || pn.n == 0)
			return 0;
		if (pn.n == 2 && !memcmp(pn.p, "h2", 2))
			bits |= SNI_ALPN_H2;
		else if (pn.n == 8 && !memcmp(pn.p, "http/1.1", 8))
			bits |= SNI_ALPN_HTTP11;
		else
			bits |= SNI_ALPN_OTHER;
	}
	return bits;
}

/* RFC 8446 4.1.2: the ClientHello body @ch (after the handshake header). */
static enum sni_status tls_client_hello(struct rd ch, struct sni_result *res)
{
	uint16_t seen[TLS_EXT_MAX];
	size_t n_seen = 0, name_len = 0;
	const uint8_t *name = NULL;
	bool ech = false;
	struct rd ext_all, sid, cs, comp;
	unsigned int ver = rd_uint(&ch, 2);

	rd_take(&ch, 32);	/* random */
	sid = rd_vec(&ch, 1);
	cs = rd_vec(&ch, 2);
	comp = rd_vec(&ch, 1);
	if (ch.bad || (ver >> 8) != 3 || sid.n > 32 || cs.n < 2 || cs.n % 2 || comp.n < 1)
		return set(res, SNI_GARBAGE);
	if (ch.n == 0)
		return set(res, SNI_NO_NAME);	/* a TLS 1.2 hello may carry no extensions */
	ext_all = rd_vec(&ch, 2);
	if (ext_all.bad || ch.n != 0)
		return set(res, SNI_GARBAGE);
	while (ext_all.n) {
		unsigned int type = rd_uint(&ext_all, 2);
		struct rd ext = rd_vec(&ext_all, 2);

		if (ext_all.bad || n_seen == TLS_EXT_MAX)
			return set(res, SNI_GARBAGE);
		/* RFC 8446 4.2: no two extensions of the same type. */
		for (size_t i = 0; i < n_seen; i++)
			if (seen[i] == type)
				return set(res, SNI_GARBAGE);
		seen[n_seen++] = (uint16_t)type;
		if (type == SNI_EXT_SERVER_NAME && !tls_server_name(ext, &name, &name_len))
			return set(res, SNI_GARBAGE);
		if (type == SNI_EXT_ECH)
			ech = true;
		if (type == SNI_EXT_ALPN && !(res->alpn = tls_alpn(ext)))
			return set(res, SNI_GARBAGE);
	}
	/* Said whatever the name turns out to be (a bad outer name too): the
	 * caller may judge the outer name (tls.ech: outer) and records it. */
	res->ech = ech;
	if (ech) {
		/* The outer ClientHello's name is the client-facing server's public
		 * name (draft-ietf-tls-esni 6.1); the inner one is encrypted.  A
		 * GREASE ECH extension (6.2: random bytes, no config) looks the
		 * same: nothing in it tells them apart. */
		if (!name)
			return set(res, SNI_ECH);
		return set_name(res, (const char *)name, name_len, SNI_ECH);
	}
	if (!name)
		return set(res, SNI_NO_NAME);
	return set_name(res, (const char *)name, name_len, SNI_NAME);
}

/*
 * Reassemble the first handshake message from TLS records (RFC 8446 5.1:
 * a handshake message may span records; records must not interleave other
 * content types before it is complete).
 */
static enum sni_status tls_parse(const uint8_t *b, size_t len, struct sni_result *res)
{
	uint8_t hs[SNI_STREAM_MAX];
	size_t pos = 0, hl = 0, need = 0;

	res->proto = SNI_PROTO_TLS;
	while (pos < len) {
		size_t rlen, take;

		if (b[pos] != TLS_CT_HANDSHAKE)
			return set(res, SNI_GARBAGE);
		if (len - pos > 1 && b[pos + 1] != 3)
			return set(res, SNI_GARBAGE);	/* legacy_record_version 3.x */
		if (len - pos < TLS_REC_HDR)
			return set(res, SNI_MORE);
		rlen = (size_t)b[pos + 3] << 8 | b[pos + 4];
		/* Zero-length handshake fragments are forbidden; 2^14 is the cap. */
		if (rlen == 0 || rlen > TLS_REC_MAX)
			return set(res, SNI_GARBAGE);
		take = len - pos - TLS_REC_HDR;
		if (take > rlen)
			take = rlen;
		memcpy(hs + hl, b + pos + TLS_REC_HDR, take);	/* hl + take <= len <= sizeof(hs) */
		hl += take;
		pos += TLS_REC_HDR + take;
		if (hl >= 1 && hs[0] != TLS_HS_CLIENT_HELLO)
			return set(res, SNI_GARBAGE);
		if (hl >= 4) {
			need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
			if (need > SNI_STREAM_MAX)
				return set(res, SNI_TOO_LONG);
			if (hl >= need)
				return tls_client_hello((struct rd){ .p = hs + 4, .n = need - 4 }, res);
		}
	}
	return set(res, SNI_MORE);
}

enum sni_status sni_parse_handshake(const uint8_t *msg, size_t len, struct sni_result *res)
{
	size_t need;

	res->proto = SNI_PROTO_QUIC;
	res->name[0] = '\0';
	res->alpn = 0;
	res->ech = false;
	if (len >= 1 && msg[0] != TLS_HS_CLIENT_HELLO)
		return set(res, SNI_GARBAGE);
	if (len < 4)
		return set(res, SNI_MORE);
	need = 4 + ((size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3]);
	if (need > SNI_STREAM_MAX)
		return set(res, SNI_TOO_LONG);
	if (len < need)
		return set(res, SNI_MORE);
	return tls_client_hello((struct rd){ .p = msg + 4, .n = need - 4 }, res);
}

/* ---- HTTP/1.x ---------------------------------------------------------- */

/* RFC 9110 5.6.2 tchar. */
static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The host of authority @a/@n ("host" or "host:port", RFC 3986 3.2). */
static enum sni_status authority_host(const char *a, size_t n, char *out)
{
	size_t h = n;

	if (n && a[0] == '[')
		return SNI_BAD_NAME;	/* an IP literal names no policy name */
	if (memchr(a, '@', n))
		return SNI_GARBAGE;	/* userinfo: forbidden in http(s) URIs (RFC 9110 4.2.4) */
	for (size_t i = 0; i < n; i++)
		if (a[i] == ':') {
			h = i;
			break;
		}
	for (size_t i = h + 1; i < n; i++)
		if (a[i] < '0' || a[i] > '9')
			return SNI_GARBAGE;
	if (h == 0)
		return SNI_NO_NAME;
	return sni_name_norm(a, h, out) < 0 ? SNI_BAD_NAME : SNI_NAME;
}

/* Early garbage checks on an incomplete request: a method token, then SP. */
static enum sni_status http_partial(const uint8_t *b, size_t len)
{
	size_t i = 0;

	while (i < len && i <= HTTP_METHOD_MAX && tchar(b[i]))
		i++;
	if (i > HTTP_METHOD_MAX || (i < len && (i == 0 || b[i] != ' ')))
		return SNI_GARBAGE;
	for (; i < len; i++)
		if (b[i] == 0 || (b[i] == '\n' && (i == 0 || b[i - 1] != '\r')) ||
		    (i > 0 && b[i - 1] == '\r' && b[i] != '\n'))
			return SNI_GARBAGE;	/* NUL, bare LF, bare CR */
	return SNI_MORE;
}

/* The target of a request line: the host of its authority, if it has one. */
static enum sni_status http_target(const char *t, size_t n, bool connect, char *out)
{
	const char *s;
	size_t i;

	if (connect)
		return authority_host(t, n, out);	/* authority-form (RFC 9112 3.2.3) */
	if (n && (t[0] == '/' || (n == 1 && t[0] == '*')))
		return SNI_NO_NAME;	/* origin-form, asterisk-form: the Host field says */
	s = memmem(t, n, "://", 3);
	if (!s)
		return SNI_GARBAGE;
	s += 3;			/* absolute-form (RFC 9112 3.2.2) */
	for (i = 0; s + i < t + n && !strchr("/?#", s[i]); i++)
		;
	return authority_host(s, i, out);
}

/* One header field line @l/@n: sets *@host/@hn if it is Host.  Return: false if malformed. */
static bool http_field(const char *l, size_t n, const char **host, size_t *hn, unsigned int *n_host)
{
	size_t i = 0, e;

	while (i < n && tchar((unsigned char)l[i]))
		i++;
	/* RFC 9112 5.1: no whitespace between name and colon; 5.2: no obs-fold. */
	if (i == 0 || i == n || l[i] != ':')
		return false;
	for (size_t k = i + 1; k < n; k++)
		if ((unsigned char)l[k] < 0x20 && l[k] != '\t')
			return false;
	if (i != 4 || strncasecmp(l, "host", 4) != 0)
		return true;
	if (++*n_host > 1)
		return false;	/* RFC 9112 3.2: more than one Host is a 400 */
	for (i++; i < n && (l[i] == ' ' || l[i] == '\t'); i++)
		;
	for (e = n; e > i && (l[e - 1] == ' ' || l[e - 1] == '\t'); e--)
		;
	*host = l + i;
	*hn = e - i;
	return true;
}

static enum sni_status http_parse(const uint8_t *b, size_t len, struct sni_result *res)
{
	const char *s = (const char *)b, *end, *eol, *sp1, *sp2, *host = NULL;
	char tname[SNI_NAME_MAX + 1], hname[SNI_NAME_MAX + 1];
	enum sni_status ts, hs;
	unsigned int n_host = 0;
	size_t hn = 0;
	bool v11;

	res->proto = SNI_PROTO_HTTP1;
	end = memmem(s, len, "\r\n\r\n", 4);
	/* Only the header section: a body that follows may hold any byte. */
	if (http_partial(b, end ? (size_t)(end + 4 - s) : len) == SNI_GARBAGE)
		return set(res, SNI_GARBAGE);
	if (!end)
		return set(res, SNI_MORE);
	end += 2;		/* each line below ends at a CRLF before @end */
	eol = memmem(s, (size_t)(end - s), "\r\n", 2);
	sp1 = memchr(s, ' ', (size_t)(eol - s));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp2 || sp2 == sp1 + 1 || eol - sp2 != 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    sp2[8] < '0' || sp2[8] > '9')
		return set(res, SNI_GARBAGE);
	for (const char *c = sp1 + 1; c < sp2; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
			return set(res, SNI_GARBAGE);
	v11 = sp2[8] != '0';
	for (const char *l = eol + 2; l < end; l = eol + 2) {
		eol = memmem(l, (size_t)(end - l), "\r\n", 2);
		if (!http_field(l, (size_t)(eol - l), &host, &hn, &n_host))
			return set(res, SNI_GARBAGE);
	}
	ts = http_target(sp1 + 1, (size_t)(sp2 - sp1 - 1),
			 sp1 - s == 7 && memcmp(s, "CONNECT", 7) == 0, tname);
	if (ts == SNI_GARBAGE || ts == SNI_BAD_NAME)
		return set(res, ts);
	hs = host ? (hn ? authority_host(host, hn, hname) : SNI_NO_NAME) : SNI_NO_NAME;
	if (host && (hs == SNI_GARBAGE || hs == SNI_BAD_NAME))
		return set(res, hs);
	if (ts == SNI_NAME) {
		/* The target's authority wins (RFC 9112 3.2.2); a Host that says
		 * otherwise would be read differently by some server: refuse. */
		if (hs == SNI_NAME && strcmp(tname, hname) != 0)
			return set(res, SNI_GARBAGE);
		memcpy(res->name, tname, sizeof(tname));
		return set(res, SNI_NAME);
	}
	if (!host && v11)
		return set(res, SNI_GARBAGE);	/* RFC 9112 3.2: HTTP/1.1 without Host is a 400 */
	if (hs != SNI_NAME)
		return set(res, SNI_NO_NAME);
	memcpy(res->name, hname, sizeof(hname));
	return set(res, SNI_NAME);
}

/* ---- dispatch ----------------------------------------------------------- */

enum sni_status sni_parse(const uint8_t *buf, size_t len, struct sni_result *res)
{
	enum sni_status s;

	res->proto = SNI_PROTO_UNKNOWN;
	res->name[0] = '\0';
	res->alpn = 0;
	res->ech = false;
	if (len > SNI_STREAM_MAX)
		len = SNI_STREAM_MAX;
	if (len == 0)
		return set(res, SNI_MORE);
	if (buf[0] == TLS_CT_HANDSHAKE) {
		s = tls_parse(buf, len, res);
	} else if (memcmp(buf, h2_preface, len < H2_PREFACE_LEN ? len : H2_PREFACE_LEN) == 0) {
		/* HTTP/2 with prior knowledge: the name is in an HPACK-coded
		 * :authority later on, which we do not decode. */
		res->proto = SNI_PROTO_H2;
		s = set(res, len < H2_PREFACE_LEN ? SNI_MORE : SNI_NO_NAME);
	} else if (tchar(buf[0])) {
		s = http_parse(buf, len, res);
	} else {
		s = set(res, SNI_GARBAGE);
	}
	if (s == SNI_MORE && len == SNI_STREAM_MAX)
		s = set(res, SNI_TOO_LONG);
	return s;
}

const char *sni_status_str(enum sni_status s)
{
	switch (s) {
	case SNI_MORE: return "need-more";
	case SNI_NAME: return "name";
	case SNI_NO_NAME: return "no-name";
	case SNI_ECH: return "ech";
	case SNI_BAD_NAME: return "bad-name";
	case SNI_GARBAGE: return "garbage";
	case SNI_TOO_LONG: return "too-long";
	}
	return "?";
}

const char *sni_proto_str(enum sni_proto p)
{
	switch (p) {
	case SNI_PROTO_TLS: return "tls";
	case SNI_PROTO_HTTP1: return "http";
	case SNI_PROTO_H2: return "h2";
	case SNI_PROTO_QUIC: return "quic";
	case SNI_PROTO_UNKNOWN: break;
	}
	return "unknown";
}

void sni_stream_init(struct sni_stream *st)
{
	st->len = 0;
	memset(&st->res, 0, sizeof(st->res));
	st->res.status = SNI_MORE;
}

enum sni_status sni_stream_feed(struct sni_stream *st, const uint8_t *data, size_t len,
				struct sni_result *res)
{
	if (st->res.status == SNI_MORE) {
		size_t room = sizeof(st->buf) - st->len;

		if (len > room)
			len = room;
		if (len)
			memcpy(st->buf + st->len, data, len);
		st->len += len;
		sni_parse(st->buf, st->len, &st->res);
	}
	*res = st->res;
	return res->status;
}
