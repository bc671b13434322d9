/*
 * replay - the replay seam's edges (dnsproxy/replay.h): a transport that
 * hands replies to the test, an upstream that queues queries until the
 * test answers them, a clock the test sets.  Nothing else differs from
 * the daemon's proxy: query.c runs unchanged.
 */
#include "dnsproxy/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dnsproxy/proxy_int.h"

struct replay_up {
	unsigned int id;	/* 0 = free slot */
	upstream_cb cb;
	void *arg;
};

struct replay {
	struct proxy *p;
	const struct replay_ops *ops;
	void *ctx;
	uint64_t now_ms;
	unsigned int next_id;
	size_t n_up;
	struct replay_up up[REPLAY_MAX_UPSTREAM];
};

static uint64_t replay_clock(void *ctx)
{
	const struct replay *rp = ctx;

	return rp->now_ms;
}

static int replay_send(struct proxy *p, const struct origin *o, const uint8_t *msg, size_t len)
{
	p->replay->ops->reply(p->replay->ctx, o->tag, o->t->stream, msg, len);
	return 0;
}

static void replay_hold(struct origin *o)
{
}

static const struct transport replay_udp = {
	.name = "udp", .stream = false, .send = replay_send,
	.hold = replay_hold, .release = replay_hold,
};

static const struct transport replay_tcp = {
	.name = "tcp", .stream = true, .send = replay_send,
	.hold = replay_hold, .release = replay_hold,
};

static void replay_up_send(void *impl, const uint8_t *q, size_t len, upstream_cb cb, void *arg)
{
	struct replay *rp = impl;
	struct replay_up *u = NULL;

	for (size_t i = 0; i < REPLAY_MAX_UPSTREAM && !u; i++)
		if (rp->up[i].id == 0)
			u = &rp->up[i];
	if (!u) {
		cb(arg, -EIO, NULL, 0);
		return;
	}
	if (++rp->next_id == 0)
		rp->next_id = 1;
	*u = (struct replay_up){ .id = rp->next_id, .cb = cb, .arg = arg };
	rp->n_up++;
	if (rp->ops->upstream)
		rp->ops->upstream(rp->ctx, u->id, q, len);
}

/* Like ares_destroy(): every outstanding query's callback gets -ECANCELED. */
static void replay_up_free(void *impl)
{
	struct replay *rp = impl;

	for (size_t i = 0; i < REPLAY_MAX_UPSTREAM; i++) {
		struct replay_up u = rp->up[i];

		if (u.id == 0)
			continue;
		rp->up[i].id = 0;
		u.cb(u.arg, -ECANCELED, NULL, 0);
	}
	free(rp);
}

int replay_new(const struct proxy_config *cfg, const struct proxy_ops *ops, void *ctx,
	       const struct replay_ops *rops, void *rctx, struct proxy **ret)
{
	struct replay *rp;
	struct proxy *p;
	int r;

	*ret = NULL;
	if (!ops || !ops->lookup || !ops->pin || !rops || !rops->reply)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	rp = calloc(1, sizeof(*rp));
	if (!p || !rp) {
		free(p);
		free(rp);
		return -ENOMEM;
	}
	r = proxy_init(p, cfg, ops, ctx);
	if (r < 0) {
		free(rp);
		proxy_free(p);
		return r;
	}
	*rp = (struct replay){ .p = p, .ops = rops, .ctx = rctx, .now_ms = 1000 };
	p->replay = rp;
	p->up = (struct proxy_upstream){ .send = replay_up_send, .free = replay_up_free,
					 .impl = rp };
	p->clock_ms = replay_clock;
	p->clock_ctx = rp;
	*ret = p;
	return 0;
}

void replay_set_clock(struct proxy *p, uint64_t now_ms)
{
	if (now_ms > p->replay->now_ms)
		p->replay->now_ms = now_ms;
}

void replay_query(struct proxy *p, const struct addr *client, bool tcp, const uint8_t *msg,
		  size_t len, uint64_t tag)
{
	struct origin o = { .t = tcp ? &replay_tcp : &replay_udp, .client = *client, .tag = tag };

	query_in(p, msg, len, &o);
}

int replay_answer(struct proxy *p, unsigned int id, int err, const uint8_t *ans, size_t len)
{
	struct replay *rp = p->replay;

	for (size_t i = 0; id && i < REPLAY_MAX_UPSTREAM; i++) {
		struct replay_up u = rp->up[i];

		if (u.id != id)
			continue;
		rp->up[i].id = 0;
		rp->n_up--;
		u.cb(u.arg, err, err ? NULL : ans, err ? 0 : len);
		return 0;
	}
	return -ENOENT;
}

size_t replay_outstanding(const struct proxy *p)
{
	return p->replay->n_up;
}

void replay_tick(struct proxy *p)
{
	query_expire(p, p->replay->now_ms);
	proxy_sweep(p);
}
