/*
 * gw/scrub - a secret an upstream sends back, masked (netd/gw/scrub.h).
 */
#include "netd/gw/scrub.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool gw_scrub_secret(const struct gw_cred *c, const uint8_t **p, size_t *len)
{
	if (!c->value || c->secret_len < GW_SCRUB_MIN || c->secret_off > c->value_len ||
	    c->secret_len > c->value_len - c->secret_off)
		return false;
	*p = c->value + c->secret_off;
	*len = c->secret_len;
	return true;
}

bool gw_scrub_any(const struct gw_req_ctx *ctx)
{
	const uint8_t *p;
	size_t n;

	for (size_t i = 0; ctx && i < ctx->n_creds; i++)
		if (gw_scrub_secret(&ctx->creds[i], &p, &n))
			return true;
	return false;
}

size_t gw_scrub_mask(const struct gw_req_ctx *ctx, uint8_t *buf, size_t len)
{
	size_t masked = 0;

	for (size_t i = 0; ctx && i < ctx->n_creds; i++) {
		const uint8_t *sec;
		size_t n, at = 0;
		uint8_t *hit;

		if (!gw_scrub_secret(&ctx->creds[i], &sec, &n))
			continue;
		while (at + n <= len && (hit = memmem(buf + at, len - at, sec, n))) {
			memset(hit, GW_SCRUB_MASK, n);
			at = (size_t)(hit - buf) + n;
			masked++;
		}
	}
	return masked;
}

/*
 * The longest tail of @buf (@len bytes) that is a proper prefix of a secret
 * of @ctx: bytes that may yet become one.  Each candidate start is a byte
 * equal to the secret's first, among the last n - 1.
 */
static size_t tail_prefix(const struct gw_req_ctx *ctx, const uint8_t *buf, size_t len)
{
	size_t best = 0;

	for (size_t i = 0; len && i < ctx->n_creds; i++) {
		const uint8_t *sec, *p;
		size_t n, from;

		if (!gw_scrub_secret(&ctx->creds[i], &sec, &n))
			continue;
		from = len > n - 1 ? len - (n - 1) : 0;
		/* the first start found is the longest tail */
		for (p = memchr(buf + from, sec[0], len - from); p;
		     p = memchr(p + 1, sec[0], (size_t)(buf + len - (p + 1)))) {
			size_t k = (size_t)(buf + len - p);

			if (k > best && memcmp(p, sec, k) == 0) {
				best = k;
				break;
			}
			if (k <= best || p + 1 >= buf + len)
				break;
		}
	}
	return best;
}

size_t gw_scrub_room(const struct gw_scrub *s, size_t len)
{
	return s->n_hold + len;
}

size_t gw_scrub_run(struct gw_scrub *s, const struct gw_req_ctx *ctx, const uint8_t *in,
		    size_t len, bool end, uint8_t *out)
{
	size_t total = s->n_hold + len, keep;

	if (s->n_hold)
		memcpy(out, s->hold, s->n_hold);
	if (len)
		memcpy(out + s->n_hold, in, len);
	if (s->n_hold)
		explicit_bzero(s->hold, s->n_hold);
	s->n_hold = 0;
	s->masked += gw_scrub_mask(ctx, out, total);
	keep = end ? 0 : tail_prefix(ctx, out, total);
	if (keep > s->cap) {
		uint8_t *h = malloc(keep);

		if (!h) {
			memset(out + total - keep, GW_SCRUB_MASK, keep);	/* fail closed */
			return total;
		}
		if (s->hold) {
			explicit_bzero(s->hold, s->cap);
			free(s->hold);
		}
		s->hold = h;
		s->cap = keep;
	}
	if (keep) {
		memcpy(s->hold, out + total - keep, keep);
		explicit_bzero(out + total - keep, keep);
		s->n_hold = keep;
	}
	return total - keep;
}

int gw_scrub_pass(struct gw_scrub *s, const struct gw_req_ctx *ctx, const uint8_t *in,
		  size_t len, bool end, int (*emit)(void *arg, const uint8_t *p, size_t n),
		  void *arg)
{
	size_t room = gw_scrub_room(s, len), n;
	uint8_t *tmp;
	int r;

	if (!room)
		return 0;
	if (!s->n_hold && !gw_scrub_any(ctx))
		return emit(arg, in, len);
	tmp = malloc(room);
	if (!tmp)
		return -ENOMEM;
	n = gw_scrub_run(s, ctx, in, len, end, tmp);
	r = n ? emit(arg, tmp, n) : 0;
	free(tmp);
	return r;
}

static int body_emit(void *arg, const uint8_t *p, size_t n)
{
	return gw_body_add(arg, p, n);
}

int gw_scrub_body_add(struct gw_scrub *s, const struct gw_req_ctx *ctx, struct gw_body *b,
		      const uint8_t *data, size_t len, bool end)
{
	return gw_scrub_pass(s, ctx, data, len, end, body_emit, b);
}

size_t gw_scrub_hblock(const struct gw_req_ctx *ctx, struct gw_hblock *b)
{
	size_t masked = 0;

	for (size_t i = 0; i < b->n; i++) {
		/* a name too: an upstream may make one of what it was sent */
		masked += gw_scrub_mask(ctx, (uint8_t *)b->f[i].name, b->f[i].name_len);
		masked += gw_scrub_mask(ctx, (uint8_t *)b->f[i].value, b->f[i].value_len);
	}
	return masked;
}

void gw_scrub_free(struct gw_scrub *s)
{
	if (s->hold) {
		explicit_bzero(s->hold, s->cap);
		free(s->hold);
	}
	*s = (struct gw_scrub){ 0 };
}
