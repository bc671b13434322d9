/*
 * jsonl - flat JSON members into a fixed buffer (see jsonl.h).
 */
#include "common/jsonl.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

void jsonl_init(struct jsonl *j, char *buf, size_t cap)
{
	j->buf = buf;
	j->cap = cap;
	j->len = 0;
	j->overflow = false;
	j->first = true;
}

static void put(struct jsonl *j, const char *s, size_t n)
{
	if (j->overflow || j->cap - j->len < n) {
		j->overflow = true;
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static void put_c(struct jsonl *j, char c)
{
	put(j, &c, 1);
}

/* Bytes that go into a JSON string as they are: printable ASCII but '"' and '\\'. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* A JSON string (RFC 8259 7) of @s, ASCII only. */
static void put_string(struct jsonl *j, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	if (!j->overflow && n < SIZE_MAX / 8 && j->cap - j->len >= 6 * n + 2) {
		/* Room for the worst case: write straight into the buffer. */
		char *o = j->buf + j->len;

		*o++ = '"';
		for (; *p; p++) {
			if (plain(*p)) {
				*o++ = (char)*p;
			} else if (*p == '"' || *p == '\\') {
				*o++ = '\\';
				*o++ = (char)*p;
			} else {
				memcpy(o, "\\u00", 4);
				o[4] = hex[*p >> 4];
				o[5] = hex[*p & 15];
				o += 6;
			}
		}
		*o++ = '"';
		j->len = (size_t)(o - j->buf);
		return;
	}
	put_c(j, '"');
	while (*p) {
		/* Copy a run of plain characters at once. */
		const unsigned char *q = p;

		while (plain(*q))
			q++;
		if (q != p) {
			put(j, (const char *)p, (size_t)(q - p));
			p = q;
			continue;
		}
		if (*p == '"' || *p == '\\') {
			char e[2] = { '\\', (char)*p };

			put(j, e, 2);
		} else {
			char e[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };

			put(j, e, 6);
		}
		p++;
	}
	put_c(j, '"');
}

static void key(struct jsonl *j, const char *k)
{
	if (!j->first)
		put_c(j, ',');
	j->first = false;
	put_string(j, k);
	put_c(j, ':');
}

void jsonl_str(struct jsonl *j, const char *k, const char *val)
{
	key(j, k);
	if (val)
		put_string(j, val);
	else
		put(j, "null", 4);
}

void jsonl_uint(struct jsonl *j, const char *k, uint64_t val)
{
	char d[20];
	size_t n = 0;

	key(j, k);
	do {
		d[sizeof(d) - ++n] = (char)('0' + val % 10);
		val /= 10;
	} while (val);
	put(j, d + sizeof(d) - n, n);
}

void jsonl_array_begin(struct jsonl *j, const char *k)
{
	key(j, k);
	put_c(j, '[');
	j->first = true;
}

void jsonl_array_str(struct jsonl *j, const char *val)
{
	if (!j->first)
		put_c(j, ',');
	j->first = false;
	put_string(j, val);
}

void jsonl_array_end(struct jsonl *j)
{
	put_c(j, ']');
	j->first = false;
}

void jsonl_raw(struct jsonl *j, const char *members, size_t len)
{
	if (!len)
		return;
	if (!j->first)
		put_c(j, ',');
	j->first = false;
	put(j, members, len);
}

int jsonl_done(const struct jsonl *j)
{
	return j->overflow ? -ENOBUFS : (int)j->len;
}
