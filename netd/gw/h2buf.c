/*
 * h2buf - header blocks, body buffers and the field lists that cross, for
 * netd/gw/h2.c (netd/gw/h2buf.h).  Pure: memory only (nghttp2's nv type,
 * no session).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "netd/gw/h2buf.h"

void gw_hblock_clear(struct gw_hblock *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->f[i].name);
	free(b->f);
	memset(b, 0, sizeof(*b));
}

/* Adds one field, or marks the block over its limits (RFC 9113 6.5.2 MAX_HEADER_LIST_SIZE). */
int gw_hblock_add(struct gw_hblock *b, const uint8_t *name, size_t name_len,
		      const uint8_t *value, size_t value_len)
{
	char *mem;

	if (b->over)
		return 0;
	b->list_len += name_len + value_len + 32;	/* RFC 9113 6.5.2: + 32 a field */
	if (b->list_len > GW_H2_MAX_HEADER_LIST || b->n >= GW_H2_MAX_FIELDS) {
		b->over = true;
		return 0;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		struct gw_hfield *f = realloc(b->f, cap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		b->f = f;
		b->cap = cap;
	}
	mem = malloc(name_len + value_len + 2);
	if (!mem)
		return -ENOMEM;
	memcpy(mem, name, name_len);
	mem[name_len] = '\0';
	memcpy(mem + name_len + 1, value, value_len);
	mem[name_len + 1 + value_len] = '\0';
	b->f[b->n++] = (struct gw_hfield){ mem, mem + name_len + 1, name_len, value_len };
	return 0;
}

const struct gw_hfield *gw_hblock_get(const struct gw_hblock *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->f[i].name, name))
			return &b->f[i];
	return NULL;
}

size_t gw_body_avail(const struct gw_body *b)
{
	return b->len - b->off;
}

int gw_body_add(struct gw_body *b, const uint8_t *p, size_t n)
{
	if (b->off == b->len)
		b->off = b->len = 0;
	if (b->len - b->off + n > GW_H2_BODY_CAP)
		return -EMSGSIZE;	/* the peer overran the window nghttp2 enforces */
	if (b->len + n > b->cap) {
		if (b->off) {
			memmove(b->p, b->p + b->off, b->len - b->off);
			b->len -= b->off;
			b->off = 0;
		}
		if (b->len + n > b->cap) {
			size_t cap = b->cap ? b->cap : 4096;
			uint8_t *q;

			while (cap < b->len + n)
				cap *= 2;
			q = realloc(b->p, cap);
			if (!q)
				return -ENOMEM;
			b->p = q;
			b->cap = cap;
		}
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

void gw_body_free(struct gw_body *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/*
 * Connection-specific fields never cross (RFC 9113 8.2.2): nghttp2 refuses
 * them on receipt already; this is the second line.  "host" goes too: the
 * request carries :authority (RFC 9113 8.3.1).
 */
bool gw_h2_hop_by_hop(const struct gw_hfield *f, bool request)
{
	static const char *const names[] = {
		"connection", "keep-alive", "proxy-connection", "transfer-encoding",
		"upgrade", "http2-settings",
	};

	if (f->name[0] == ':')
		return true;	/* pseudo-headers are rebuilt */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(f->name, names[i]))
			return true;
	if (!strcmp(f->name, "te"))
		return strcmp(f->value, "trailers") != 0;	/* RFC 9113 8.2.2 */
	return request && !strcmp(f->name, "host");
}

/* True when a field of @b holds a placeholder (trailers are not checked by req.c). */
bool gw_h2_has_placeholder(const struct gw_req_ctx *ctx, const struct gw_hblock *b)
{
	for (size_t i = 0; i < b->n; i++)
		for (size_t c = 0; c < ctx->n_creds; c++) {
			const char *ph = ctx->creds[c].placeholder;

			if (ph && *ph && memmem(b->f[i].value, b->f[i].value_len, ph, strlen(ph)))
				return true;
		}
	return false;
}

/* ---- the field lists that cross ------------------------------------------ */

size_t gw_h2_nva_fields(const struct gw_hblock *b, bool request, nghttp2_nv *nva)
{
	size_t n = 0;

	for (size_t i = 0; i < b->n; i++)
		if (!gw_h2_hop_by_hop(&b->f[i], request))
			nva[n++] = (nghttp2_nv){ (uint8_t *)b->f[i].name, (uint8_t *)b->f[i].value,
						 b->f[i].name_len, b->f[i].value_len,
						 NGHTTP2_NV_FLAG_NONE };
	return n;
}

ssize_t gw_h2_nva_request(nghttp2_nv *nva, const struct gw_hfield *m, const struct gw_hfield *a,
			   const struct gw_hfield *p, const struct gw_hdr *hdrs, size_t n_hdrs,
			   const struct gw_req_result *res, const struct gw_cred **ret_bad)
{
	size_t n = 0;

	nva[n++] = GW_H2_NV(":method", m->value, m->value_len, NGHTTP2_NV_FLAG_NONE);
	nva[n++] = GW_H2_NV(":scheme", "https", 5, NGHTTP2_NV_FLAG_NONE);
	nva[n++] = GW_H2_NV(":authority", a ? a->value : "", a ? a->value_len : 0, NGHTTP2_NV_FLAG_NONE);
	nva[n++] = GW_H2_NV(":path", p->value, p->value_len, NGHTTP2_NV_FLAG_NONE);
	for (size_t i = 0; i < n_hdrs; i++) {
		struct gw_hfield f = { (char *)hdrs[i].name, (char *)hdrs[i].value,
				       hdrs[i].name_len, hdrs[i].value_len };
		const struct gw_cred *cred = NULL;

		if (gw_h2_hop_by_hop(&f, true) ||
		    gw_req_field_dropped(res, f.name, f.name_len, f.value, f.value_len))
			continue;
		for (size_t r = 0; r < res->n_rewrites; r++)
			if (res->rewrites[r].index == i)
				cred = res->rewrites[r].cred;
		if (!cred) {
			nva[n++] = GW_H2_NV(f.name, f.value, f.value_len, NGHTTP2_NV_FLAG_NONE);
			continue;
		}
		if (!cred->value) {
			*ret_bad = cred;
			return -1;
		}
		/*
		 * The secret: referenced, never copied by us (NO_COPY_VALUE:
		 * ctx outlives the session) and never put in HPACK's dynamic
		 * table (NO_INDEX: RFC 7541 6.2.3, never-indexed literal).
		 */
		nva[n++] = GW_H2_NV(f.name, cred->value, cred->value_len,
			      NGHTTP2_NV_FLAG_NO_COPY_VALUE | NGHTTP2_NV_FLAG_NO_INDEX);
	}
	if (res->n_rewrites)
		nva[n++] = GW_H2_NV(GW_REQ_IDENTITY_NAME, GW_REQ_IDENTITY_VALUE,
				    strlen(GW_REQ_IDENTITY_VALUE), NGHTTP2_NV_FLAG_NONE);
	return (ssize_t)n;
}

