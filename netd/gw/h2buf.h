/*
 * h2buf - what the HTTP/2 engine (netd/gw/h2.c) keeps of a stream while
 * passing it on: received header blocks under hard limits, body bytes
 * between the two sessions, and the field lists that cross (RFC 9113
 * 8.2.2, 8.3.1), a credential's secret placed by reference.  Pure: memory
 * only.
 */
#ifndef NETD_GW_H2BUF_H
#define NETD_GW_H2BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>
#include <sys/types.h>

#include <nghttp2/nghttp2.h>

#include "netd/gw/req.h"

/* The engine's limits (netd/gw/h2.h has the others). */
#define GW_H2_MAX_HEADER_LIST 65536	/* SETTINGS_MAX_HEADER_LIST_SIZE both ways, enforced */
#define GW_H2_MAX_FIELDS 256		/* header fields in one block, enforced */
#define GW_H2_STREAM_WINDOW 65535	/* per-stream receive window, both sessions */
#define GW_H2_BODY_CAP (2 * GW_H2_STREAM_WINDOW)	/* one body buffered, hard cap */

/* One received field; name and value NUL-terminated, lower-case names (HTTP/2). */
struct gw_hfield {
	char *name, *value;	/* one allocation: name NUL value NUL */
	size_t name_len, value_len;
};

/* A header block being received: at most GW_H2_MAX_FIELDS, GW_H2_MAX_HEADER_LIST bytes. */
struct gw_hblock {
	struct gw_hfield *f;
	size_t n, cap, list_len;
	bool over;		/* past a limit: the rest was dropped */
};

/* Body bytes taken from one session, not yet given to the other. */
struct gw_body {
	uint8_t *p;
	size_t off, len, cap;
};

/*
 * gw_hblock_add() - add one field to @b (copied).  Past GW_H2_MAX_FIELDS
 * fields or GW_H2_MAX_HEADER_LIST bytes (counted as RFC 9113 6.5.2 does:
 * name + value + 32 each) the field is dropped and @b->over set.
 * Return: 0 (also when dropped); -ENOMEM.
 */
int gw_hblock_add(struct gw_hblock *b, const uint8_t *name, size_t name_len,
		  const uint8_t *value, size_t value_len);

/* gw_hblock_get() - the first field named @name (lower-case), borrowed from @b; or NULL. */
const struct gw_hfield *gw_hblock_get(const struct gw_hblock *b, const char *name);

/* gw_hblock_clear() - free the fields; @b is empty and reusable. */
void gw_hblock_clear(struct gw_hblock *b);

/* gw_body_avail() - bytes in @b not yet taken. */
size_t gw_body_avail(const struct gw_body *b);

/*
 * gw_body_add() - append @n bytes of @p (copied).  @b never holds more
 * than GW_H2_BODY_CAP (flow control keeps a well-behaved peer far below).
 * Return: 0; -EMSGSIZE past the cap; -ENOMEM.
 */
int gw_body_add(struct gw_body *b, const uint8_t *p, size_t n);

/* gw_body_free() - free the bytes; @b is empty and reusable. */
void gw_body_free(struct gw_body *b);

/*
 * gw_h2_hop_by_hop() - true when @f must not be forwarded: a pseudo-header
 * (rebuilt), a connection-specific field (RFC 9113 8.2.2), "te" other
 * than "trailers", and in a request (@request) "host" (:authority carries
 * it, RFC 9113 8.3.1).
 */
bool gw_h2_hop_by_hop(const struct gw_hfield *f, bool request);

/*
 * gw_h2_has_placeholder() - true when a field value of @b holds one of
 * @ctx's credential placeholders (trailers, which gw_req_check() never
 * sees, are refused with one).
 */
bool gw_h2_has_placeholder(const struct gw_req_ctx *ctx, const struct gw_hblock *b);

/* One nghttp2 name/value pair; @n a NUL-terminated literal or string. */
#define GW_H2_NV(n, v, vl, fl) \
	((nghttp2_nv){ (uint8_t *)(n), (uint8_t *)(v), strlen(n), (vl), (fl) })

/*
 * gw_h2_nva_fields() - the regular fields of @b that may cross (not
 * gw_h2_hop_by_hop()) into @nva (room for b->n), pointing into @b.
 * Return: how many.
 */
size_t gw_h2_nva_fields(const struct gw_hblock *b, bool request, nghttp2_nv *nva);

/*
 * gw_h2_nva_request() - the upstream request's fields into @nva (room for
 * @n_hdrs + 5): the pseudo-headers rebuilt from method @m, authority @a
 * (may be NULL) and path @p (RFC 9113 8.3.1), then the fields of @hdrs
 * that may cross, a placeholder replaced by its credential's secret as
 * @res's rewrites say: referenced, not copied (NO_COPY_VALUE: the secret
 * outlives the session) and never indexed (NO_INDEX, RFC 7541 6.2.3);
 * with a rewrite, no content coding asked for (gw_req_field_dropped(),
 * then accept-encoding: identity last).
 * Return: the count; -1 with *@ret_bad set when a rewrite's credential has
 * no secret (gw_req_check()'s contract says never: refuse, never leak).
 */
ssize_t gw_h2_nva_request(nghttp2_nv *nva, const struct gw_hfield *m, const struct gw_hfield *a,
			  const struct gw_hfield *p, const struct gw_hdr *hdrs, size_t n_hdrs,
			  const struct gw_req_result *res, const struct gw_cred **ret_bad);

#endif
