/*
 * denyfold - a fixed table of pending attempts, open addressing with
 * linear probing and backward-shift deletion.  See denyfold.h.
 */
#include "netd/trail/denyfold.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define MASK (DENYFOLD_CAP - 1)

struct slot {
	bool used;
	struct denyfold_rec r;
};

struct denyfold {
	struct slot s[DENYFOLD_CAP];
	unsigned int n;
};

static uint64_t key_hash(uint32_t slot, const struct ct_logpkt *p, const char *reason)
{
	uint64_t h = fnv64_add(FNV64_INIT, &slot, sizeof(slot));

	h = fnv64_add(h, &p->proto, 1);
	h = fnv64_add(h, &p->src, sizeof(p->src));
	h = fnv64_add(h, &p->dst, sizeof(p->dst));
	h = fnv64_add(h, &p->sport, 2);
	h = fnv64_add(h, &p->dport, 2);
	return fnv64_add(h, reason, strlen(reason));
}

static bool same(const struct denyfold_rec *r, uint32_t slot, const struct ct_logpkt *p,
		 const char *reason)
{
	return r->slot == slot && r->pkt.proto == p->proto && r->pkt.sport == p->sport &&
	       r->pkt.dport == p->dport && addr_equal(&r->pkt.src, &p->src) &&
	       addr_equal(&r->pkt.dst, &p->dst) && strcmp(r->reason, reason) == 0;
}

/* The slot of the pending attempt, or of the free slot where it would go. */
static size_t find(const struct denyfold *d, uint32_t slot, const struct ct_logpkt *p,
		   const char *reason, bool *found)
{
	size_t i = (size_t)key_hash(slot, p, reason) & MASK;

	for (;; i = (i + 1) & MASK) {
		if (!d->s[i].used) {
			*found = false;
			return i;
		}
		if (same(&d->s[i].r, slot, p, reason)) {
			*found = true;
			return i;
		}
	}
}

static void del(struct denyfold *d, size_t i)
{
	size_t j = i;

	d->s[i].used = false;
	d->n--;
	for (;;) {
		size_t h;

		j = (j + 1) & MASK;
		if (!d->s[j].used)
			return;
		h = (size_t)key_hash(d->s[j].r.slot, &d->s[j].r.pkt, d->s[j].r.reason) & MASK;
		if ((i <= j) ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		d->s[i] = d->s[j];
		d->s[j].used = false;
		i = j;
	}
}

int denyfold_new(struct denyfold **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void denyfold_free(struct denyfold *d)
{
	free(d);
}

bool denyfold_join(struct denyfold *d, uint32_t slot, const struct ct_logpkt *p,
		   const char *reason, uint64_t now_ms, uint64_t now_ns)
{
	bool found;
	size_t i = find(d, slot, p, reason, &found);
	struct denyfold_rec *r = &d->s[i].r;

	/* A packet after the gap is a new attempt (the old one is due). */
	if (!found || now_ms - r->last_ms > DENYFOLD_GAP_MS ||
	    now_ms - r->first_ms >= DENYFOLD_HOLD_MS)
		return false;
	r->span.count++;
	r->span.last_ns = now_ns;
	r->last_ms = now_ms;
	return true;
}

bool denyfold_add(struct denyfold *d, uint32_t slot, const struct ct_logpkt *p,
		  const char *reason, uint64_t suppressed, uint64_t now_ms, uint64_t now_ns,
		  struct denyfold_rec *evicted)
{
	bool found, ev = false;
	size_t i = find(d, slot, p, reason, &found);
	struct denyfold_rec *r;

	if (found) {
		/* The same key, due but not taken yet: out with the old one. */
		*evicted = d->s[i].r;
		del(d, i);
		ev = true;
	} else if (d->n >= DENYFOLD_CAP - 1) {
		size_t old = 0;

		for (size_t k = 0; k < DENYFOLD_CAP; k++)
			if (d->s[k].used && (!d->s[old].used ||
					     d->s[k].r.first_ms < d->s[old].r.first_ms))
				old = k;
		*evicted = d->s[old].r;
		del(d, old);
		ev = true;
	}
	i = find(d, slot, p, reason, &found);
	d->s[i].used = true;
	d->n++;
	r = &d->s[i].r;
	memset(r, 0, sizeof(*r));
	r->slot = slot;
	r->pkt = *p;
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	r->suppressed = suppressed;
	r->span = (struct ct_deny_span){ .count = 1, .first_ns = now_ns, .last_ns = now_ns };
	r->first_ms = r->last_ms = now_ms;
	return ev;
}

bool denyfold_take(struct denyfold *d, uint64_t now_ms, int64_t slot, bool all,
		   struct denyfold_rec *out)
{
	if (!d->n)
		return false;
	for (size_t i = 0; i < DENYFOLD_CAP; i++) {
		const struct denyfold_rec *r = &d->s[i].r;

		if (!d->s[i].used)
			continue;
		if (all || (slot >= 0 && r->slot == (uint64_t)slot) ||
		    (slot < 0 && (now_ms - r->last_ms > DENYFOLD_GAP_MS ||
				  now_ms - r->first_ms >= DENYFOLD_HOLD_MS))) {
			*out = *r;
			del(d, i);
			return true;
		}
	}
	return false;
}

unsigned int denyfold_pending(const struct denyfold *d)
{
	return d ? d->n : 0;
}
