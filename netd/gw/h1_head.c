/*
 * gw/h1_head - strict HTTP/1.x heads and chunked framing (netd/gw/h1_head.h).
 * Everything here is a refusal of something some parser somewhere reads
 * differently: the gateway forwards raw bytes, so what it reads as one
 * message must be what the upstream reads; and, at the end, the request
 * head it then gets.  Pure.
 */
#include "netd/gw/h1_head.h"

#include <errno.h>
#include <string.h>

/* tchar (RFC 9110 5.6.2) */
static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-vchar, SP, HTAB, obs-text (RFC 9110 5.5) */
static bool is_value_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool eq_nocase(const char *a, size_t an, const char *b)
{
	size_t bn = strlen(b);

	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (lower(a[i]) != b[i])
			return false;
	return true;
}

long gw_h1_head_end(const char *buf, size_t len, size_t from)
{
	for (size_t i = from; i < len; i++) {
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			return -EBADMSG;	/* bare LF */
		if (i > 0 && buf[i - 1] == '\r' && buf[i] != '\n')
			return -EBADMSG;	/* bare CR */
		if (i >= 3 && buf[i] == '\n' && memcmp(buf + i - 3, "\r\n\r\n", 4) == 0)
			return (long)i + 1;
		if (i + 1 >= GW_H1_HEAD_MAX)
			return -EMSGSIZE;
	}
	return 0;
}

static int parse_request_line(const char *s, size_t n, struct gw_h1_head *h)
{
	const char *sp1 = memchr(s, ' ', n), *sp2;

	if (!sp1 || sp1 == s)
		return -EBADMSG;
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - s));
	if (!sp2 || sp2 == sp1 + 1)
		return -EBADMSG;	/* HTTP/0.9 has no version; an empty target */
	h->method = s;
	h->method_len = (size_t)(sp1 - s);
	h->target = sp1 + 1;
	h->target_len = (size_t)(sp2 - sp1 - 1);
	for (size_t i = 0; i < h->method_len; i++)
		if (!is_tchar((unsigned char)s[i]))
			return -EBADMSG;
	for (size_t i = 0; i < h->target_len; i++) {
		unsigned char c = (unsigned char)h->target[i];

		if (c <= 0x20 || c >= 0x7f)
			return -EBADMSG;
	}
	if ((size_t)(s + n - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return -EBADMSG;
	if (sp2[8] != '0' && sp2[8] != '1')
		return -EBADMSG;
	h->minor = (unsigned int)(sp2[8] - '0');
	return 0;
}

static int parse_status_line(const char *s, size_t n, struct gw_h1_head *h)
{
	if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ')
		return -EBADMSG;
	h->minor = (unsigned int)(s[7] - '0');
	for (int i = 9; i < 12; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
	h->status = (unsigned int)((s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0'));
	if (h->status < 100 || h->status > 599)
		return -EBADMSG;
	if (n > 12 && s[12] != ' ')
		return -EBADMSG;
	for (size_t i = 13; i < n; i++)
		if (!is_value_byte((unsigned char)s[i]))
			return -EBADMSG;
	return 0;
}

/* Transfer-Encoding: a list whose last coding, and only it, is chunked (RFC 9112 6.1). */
static int parse_te(const char *v, size_t n, struct gw_h1_head *h)
{
	size_t i = 0;
	bool seen_chunked = false, last_chunked = false;

	while (i < n) {
		size_t start, end;

		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		if (i == n)
			break;
		start = i;
		while (i < n && v[i] != ',')
			i++;
		end = i;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		last_chunked = eq_nocase(v + start, end - start, "chunked");
		if (last_chunked && seen_chunked)
			return -EBADMSG;
		seen_chunked |= last_chunked;
	}
	if (!last_chunked)
		return -EBADMSG;
	h->chunked = true;
	return 0;
}

static int parse_length(const char *v, size_t n, struct gw_h1_head *h)
{
	uint64_t x = 0;

	if (n == 0 || n > 18)
		return -EBADMSG;	/* 1*DIGIT, and no room to overflow */
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EBADMSG;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	h->has_length = true;
	h->length = x;
	return 0;
}

/* The framing and routing fields; counts the ones that may come once. */
static int note_field(struct gw_h1_head *h, const struct gw_hdr *f, unsigned int *n_te)
{
	if (eq_nocase(f->name, f->name_len, "content-length")) {
		if (h->has_length)
			return -EBADMSG;	/* two, even equal: RFC 9112 6.3 (5) */
		return parse_length(f->value, f->value_len, h);
	}
	if (eq_nocase(f->name, f->name_len, "transfer-encoding")) {
		if ((*n_te)++)
			return -EBADMSG;
		return parse_te(f->value, f->value_len, h);
	}
	if (eq_nocase(f->name, f->name_len, "host")) {
		if (h->host >= 0)
			return -EBADMSG;
		h->host = (int)h->n_hdrs;
	} else if (eq_nocase(f->name, f->name_len, "upgrade")) {
		h->upgrade_websocket = !h->upgrade &&
				       eq_nocase(f->value, f->value_len, "websocket");
		h->upgrade = true;
	} else if (eq_nocase(f->name, f->name_len, "expect")) {
		h->expect_continue = eq_nocase(f->value, f->value_len, "100-continue");
	}
	return 0;
}

/* One field line "name: value" (@s, @n without CRLF) into h->hdrs. */
static int parse_field(const char *s, size_t n, struct gw_h1_head *h, unsigned int *n_te)
{
	const char *colon = memchr(s, ':', n), *v;
	size_t vn;
	struct gw_hdr *f;

	if (s[0] == ' ' || s[0] == '\t')
		return -EBADMSG;	/* obs-fold (RFC 9112 5.2) */
	if (!colon || colon == s)
		return -EBADMSG;
	for (const char *p = s; p < colon; p++)
		if (!is_tchar((unsigned char)*p))
			return -EBADMSG;	/* also whitespace before the colon (RFC 9112 5.1) */
	v = colon + 1;
	vn = n - (size_t)(v - s);
	for (size_t i = 0; i < vn; i++)
		if (!is_value_byte((unsigned char)v[i]))
			return -EBADMSG;
	while (vn && (*v == ' ' || *v == '\t')) {
		v++;
		vn--;
	}
	while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
		vn--;
	if (h->n_hdrs == GW_H1_FIELDS_MAX)
		return -EBADMSG;
	f = &h->hdrs[h->n_hdrs];
	f->name = s;
	f->name_len = (size_t)(colon - s);
	f->value = v;
	f->value_len = vn;
	if (note_field(h, f, n_te) < 0)
		return -EBADMSG;
	h->n_hdrs++;
	return 0;
}

int gw_h1_head_parse(const char *buf, size_t len, bool request, struct gw_h1_head *out)
{
	const char *p = buf, *end = buf + len;
	unsigned int n_te = 0;
	bool first = true;

	memset(out, 0, offsetof(struct gw_h1_head, hdrs));
	out->n_hdrs = 0;
	out->host = -1;
	out->has_length = out->chunked = out->upgrade = out->upgrade_websocket = false;
	out->expect_continue = false;
	out->length = 0;
	if (len < 4 || memcmp(end - 4, "\r\n\r\n", 4) != 0)
		return -EBADMSG;
	while (p < end) {
		const char *cr = memchr(p, '\r', (size_t)(end - p));
		size_t n;
		int r;

		if (!cr || cr + 1 >= end || cr[1] != '\n' || memchr(p, '\n', (size_t)(cr - p)))
			return -EBADMSG;
		n = (size_t)(cr - p);
		if (n == 0)
			break;	/* the empty line */
		if (first) {
			out->line_len = n;
			r = request ? parse_request_line(p, n, out) : parse_status_line(p, n, out);
			first = false;
		} else {
			r = parse_field(p, n, out, &n_te);
		}
		if (r < 0)
			return r;
		p = cr + 2;
	}
	if (first || p + 2 != end)
		return -EBADMSG;
	if (out->chunked && (out->has_length || out->minor == 0))
		return -EBADMSG;	/* RFC 9112 6.1, 6.3 (3): smuggling */
	if (request && out->minor == 1 && out->host < 0)
		return -EBADMSG;	/* RFC 9112 3.2 */
	return 0;
}

/* ---- chunked framing (RFC 9112 7.1) -------------------------------------- */

enum {
	CH_SIZE,	/* the first hex digit */
	CH_SIZE_MORE,	/* more hex digits, or the extension, or CR */
	CH_EXT,		/* extension bytes up to CR */
	CH_SIZE_LF,	/* LF after the size line's CR */
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TRAILER,	/* start of a trailer line, or CR of the final empty line */
	CH_TRAILER_LINE,
	CH_TRAILER_LF,
	CH_FINAL_LF,
};

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (unsigned char)lower((char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One byte outside chunk data.  Return 1 ended, 0 go on, -EBADMSG. */
static int chunk_byte(struct gw_h1_chunks *c, unsigned char b)
{
	int v;

	switch (c->state) {
	case CH_SIZE:
	case CH_SIZE_MORE:
		v = hexval(b);
		if (v >= 0) {
			if (++c->digits > 15)
				return -EBADMSG;
			c->left = c->left * 16 + (uint64_t)v;
			c->state = CH_SIZE_MORE;
			return 0;
		}
		if (c->state == CH_SIZE)
			return -EBADMSG;
		if (b == '\r')
			c->state = CH_SIZE_LF;
		else if (b == ';' || b == ' ' || b == '\t')
			c->state = CH_EXT;
		else
			return -EBADMSG;
		return 0;
	case CH_EXT:
		if (b == '\r')
			c->state = CH_SIZE_LF;
		else if (!is_value_byte(b))
			return -EBADMSG;
		return 0;
	case CH_SIZE_LF:
		if (b != '\n')
			return -EBADMSG;
		c->digits = 0;
		c->last = c->left == 0;
		c->state = c->last ? CH_TRAILER : CH_DATA;
		return 0;
	case CH_DATA_CR:
		if (b != '\r')
			return -EBADMSG;
		c->state = CH_DATA_LF;
		return 0;
	case CH_DATA_LF:
		if (b != '\n')
			return -EBADMSG;
		c->state = CH_SIZE;
		return 0;
	case CH_TRAILER:
		if (b == '\r') {
			c->state = CH_FINAL_LF;
			return 0;
		}
		if (!is_tchar(b))
			return -EBADMSG;	/* obs-fold, or not a field name */
		c->state = CH_TRAILER_LINE;
		return 0;
	case CH_TRAILER_LINE:
		if (b == '\r')
			c->state = CH_TRAILER_LF;
		else if (!is_value_byte(b))
			return -EBADMSG;
		return 0;
	case CH_TRAILER_LF:
		if (b != '\n')
			return -EBADMSG;
		c->state = CH_TRAILER;
		return 0;
	case CH_FINAL_LF:
		return b == '\n' ? 1 : -EBADMSG;
	}
	return -EBADMSG;
}

int gw_h1_chunks_scan(struct gw_h1_chunks *c, const uint8_t *buf, size_t len, size_t *used)
{
	size_t i = 0;

	while (i < len) {
		int r;

		if (c->state == CH_DATA) {
			uint64_t take = len - i < c->left ? len - i : c->left;

			i += (size_t)take;
			c->left -= take;
			if (c->left == 0)
				c->state = CH_DATA_CR;
			continue;
		}
		if (c->last && ++c->trailer_len > GW_H1_HEAD_MAX)
			return -EBADMSG;
		r = chunk_byte(c, buf[i++]);
		if (r != 0) {
			*used = i;
			return r;
		}
	}
	*used = i;
	return 0;
}

/* @n bytes of @src at @out + *@at (when writing), *@at moved on either way. */
static void put(char *out, size_t *at, const void *src, size_t n)
{
	if (out)
		memcpy(out + *at, src, n);
	*at += n;
}

size_t gw_h1_head_forward(const char *line, const struct gw_h1_head *hd,
			  const struct gw_req_result *res, char *out)
{
	static const char identity[] = "Accept-Encoding: " GW_REQ_IDENTITY_VALUE "\r\n";
	size_t at = 0;

	put(out, &at, line, hd->line_len);
	put(out, &at, "\r\n", 2);
	for (size_t i = 0; i < hd->n_hdrs; i++) {
		const struct gw_hdr *f = &hd->hdrs[i];
		const struct gw_cred *with = NULL;

		for (size_t r = 0; r < res->n_rewrites; r++)
			if (res->rewrites[r].index == i)
				with = res->rewrites[r].cred;
		if (gw_req_field_dropped(res, f->name, f->name_len, f->value, f->value_len))
			continue;
		put(out, &at, f->name, f->name_len);
		put(out, &at, ": ", 2);
		if (with)
			put(out, &at, with->value, with->value_len);
		else
			put(out, &at, f->value, f->value_len);
		put(out, &at, "\r\n", 2);
	}
	if (res->n_rewrites)
		put(out, &at, identity, sizeof(identity) - 1);
	put(out, &at, "\r\n", 2);
	return at;
}
