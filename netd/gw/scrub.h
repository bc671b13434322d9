/*
 * gw/scrub - a secret an upstream sends back, masked before the client
 * sees it (docs/gateway.md, "Echoed secrets").  A credential's secret - its
 * own bytes, not its format: "sk-...", not "Bearer sk-..." - found whole in
 * a response's header field or body has every byte replaced by
 * GW_SCRUB_MASK, so the length stays and Content-Length and chunk sizes
 * still hold.  A body arrives in pieces: the tail of a piece that could be
 * the start of a secret is held back until the next piece (or the end)
 * shows what it is, and only then; a tail that cannot start one (an SSE
 * event's "\n\n") leaves at once.  The secrets are the ones this
 * connection may carry (gw_cred.value set), read from the context on every
 * call, so a rotation is followed.  Pure: memory only.
 */
#ifndef NETD_GW_SCRUB_H
#define NETD_GW_SCRUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netd/gw/h2buf.h"
#include "netd/gw/req.h"

#define GW_SCRUB_MASK '*'
/* A shorter secret is not looked for: it would mask ordinary text. */
#define GW_SCRUB_MIN 8

/* One response stream's state; zero-initialised is empty.  Free with gw_scrub_free(). */
struct gw_scrub {
	uint8_t *hold;		/* owned; a tail that may begin a secret, not yet sent */
	size_t n_hold, cap;
	uint64_t masked;	/* secrets masked in this stream so far */
};

/*
 * gw_scrub_secret() - @c's secret inside its value (@c->value +
 * @c->secret_off, @c->secret_len bytes) into *@p and *@len.  Return: false when
 * there is none to look for (no value on this connection, or shorter than
 * GW_SCRUB_MIN).
 */
bool gw_scrub_secret(const struct gw_cred *c, const uint8_t **p, size_t *len);

/* gw_scrub_any() - does @ctx hold a secret to look for? */
bool gw_scrub_any(const struct gw_req_ctx *ctx);

/*
 * gw_scrub_mask() - mask every whole secret of @ctx's credentials in @buf
 * (@len bytes, in place).  Return: how many were masked.
 */
size_t gw_scrub_mask(const struct gw_req_ctx *ctx, uint8_t *buf, size_t len);

/* gw_scrub_room() - the bytes gw_scrub_run()'s @out must have room for. */
size_t gw_scrub_room(const struct gw_scrub *s, size_t len);

/*
 * gw_scrub_run() - @len bytes of @in (may be NULL when 0), after what @s
 * holds, masked into @out (gw_scrub_room(@s, @len) bytes), less the tail
 * that could begin a secret, which @s keeps; @end: the stream ends here,
 * nothing is kept.  Return: the bytes written to @out; with @out full the
 * call cannot fail, but keeping a tail needs memory: on -ENOMEM nothing is
 * kept (the tail is written out masked as if it were a secret: fail closed).
 */
size_t gw_scrub_run(struct gw_scrub *s, const struct gw_req_ctx *ctx, const uint8_t *in,
		    size_t len, bool end, uint8_t *out);

/*
 * gw_scrub_pass() - gw_scrub_run() of @in, what it writes handed to
 * @emit(@arg, bytes, n) (not called for none).  Without a secret to look
 * for and nothing held, @in goes to @emit as it is, uncopied.  Return: 0;
 * @emit's negative return; -ENOMEM.
 */
int gw_scrub_pass(struct gw_scrub *s, const struct gw_req_ctx *ctx, const uint8_t *in,
		  size_t len, bool end, int (*emit)(void *arg, const uint8_t *p, size_t n),
		  void *arg);

/*
 * gw_scrub_body_add() - gw_scrub_pass() into the end of @b (an HTTP/2
 * response body).  Return: 0; -EMSGSIZE, -ENOMEM as gw_body_add().
 */
int gw_scrub_body_add(struct gw_scrub *s, const struct gw_req_ctx *ctx, struct gw_body *b,
		      const uint8_t *data, size_t len, bool end);

/*
 * gw_scrub_hblock() - gw_scrub_mask() of every field name and value of @b
 * (HTTP/2 response headers and trailers; '*' is a token character, so a
 * masked name stays one, RFC 9110 5.6.2).  Return: secrets masked.
 */
size_t gw_scrub_hblock(const struct gw_req_ctx *ctx, struct gw_hblock *b);

/* gw_scrub_free() - wipe and free what @s holds; @s is empty again. */
void gw_scrub_free(struct gw_scrub *s);

#endif
