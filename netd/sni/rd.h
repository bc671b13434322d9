/*
 * rd - a bounds-checked reader over a byte range, for the parsers of
 * netd/sni/ (sni.c: TLS and HTTP; quic.c: QUIC headers and frames).  A read
 * past the end marks the reader bad and returns nothing; every later read
 * of a bad reader fails too, so a parser checks `bad` once at the end of a
 * structure.  Header only, internal to netd/sni/.
 */
#ifndef NETD_SNI_RD_H
#define NETD_SNI_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rd {
	const uint8_t *p;	/* the next byte (borrowed) */
	size_t n;		/* bytes left */
	bool bad;		/* a read went past the end */
};

/* rd_take() - the next @n bytes (borrowed from @r's range), or NULL past the end. */
static inline const uint8_t *rd_take(struct rd *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->bad || r->n < n) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	r->n -= n;
	return p;
}

/* rd_uint() - an @n-byte (n <= 4) unsigned integer in network order; 0 past the end. */
static inline uint32_t rd_uint(struct rd *r, size_t n)
{
	const uint8_t *p = rd_take(r, n);
	uint32_t v = 0;

	for (size_t i = 0; p && i < n; i++)
		v = v << 8 | p[i];
	return v;
}

#endif
