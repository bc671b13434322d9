/*
 * ledger - see ledger.h.
 */
#include "netd/fw/ledger.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

static uint32_t pin_hash(const struct pin *p)
{
	uint32_t h = FNV32_INIT;

	h = fnv32_add(h, &p->addr.family, sizeof(p->addr.family));
	h = fnv32_add(h, p->addr.a, addr_len(p->addr.family));
	h = fnv32_add(h, &p->proto, sizeof(p->proto));
	return fnv32_add(h, &p->port, sizeof(p->port));
}

static bool pin_same(const struct pin *a, const struct pin *b)
{
	return a->addr.family == b->addr.family && a->proto == b->proto && a->port == b->port &&
	       memcmp(a->addr.a, b->addr.a, addr_len(a->addr.family)) == 0;
}

/* The slot holding @p, or the empty slot where it would go. */
static size_t find_slot(const struct fw_ledger *l, const struct pin *p)
{
	size_t mask = l->nslot - 1, i = pin_hash(p) & mask;

	while (l->slot[i] && !pin_same(&l->v[l->slot[i] - 1].p, p))
		i = (i + 1) & mask;
	return i;
}

/* Rebuild the index for the first l->n entries into @nslot slots (the same number: in place). */
static int reindex(struct fw_ledger *l, size_t nslot)
{
	if (nslot == l->nslot) {
		memset(l->slot, 0, nslot * sizeof(*l->slot));
	} else {
		uint32_t *s = calloc(nslot, sizeof(*s));

		if (!s)
			return -ENOMEM;
		free(l->slot);
		l->slot = s;
		l->nslot = nslot;
	}
	for (size_t i = 0; i < l->n; i++)
		l->slot[find_slot(l, &l->v[i].p)] = (uint32_t)(i + 1);
	return 0;
}

/* Drop the entries lapsed for the slack; returns whether any went. */
static bool prune(struct fw_ledger *l, uint64_t now_ms)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].expires_ms + FW_LEDGER_SLACK_MS >= now_ms)
			l->v[k++] = l->v[i];
	if (k == l->n)
		return false;
	l->n = k;
	return true;
}

/* Room for @more entries (and an index at most half full). */
static int reserve(struct fw_ledger *l, size_t more, uint64_t now_ms)
{
	size_t want = l->n + more, nslot;

	if (want > l->cap && prune(l, now_ms))
		reindex(l, l->nslot);	/* in place: cannot fail */
	want = l->n + more;
	if (want > l->cap) {
		size_t nc = l->cap ? l->cap : 16;
		void *nv;

		while (nc < want)
			nc *= 2;
		nv = realloc(l->v, nc * sizeof(*l->v));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	for (nslot = l->nslot ? l->nslot : 32; nslot < 2 * want; nslot *= 2)
		;
	return nslot != l->nslot ? reindex(l, nslot) : 0;
}

int fw_ledger_note(struct fw_ledger *l, const struct pin *pins, size_t n, uint64_t now_ms)
{
	int r = reserve(l, n, now_ms);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		size_t s = find_slot(l, &pins[i]);
		struct fw_ledger_pin *e;

		bool had = l->slot[s] != 0;

		if (had) {
			e = &l->v[l->slot[s] - 1];
		} else {
			e = &l->v[l->n++];
			l->slot[s] = (uint32_t)l->n;
			e->expires_ms = 0;
		}
		/* The latest expiry either gave: a kernel may keep the longer one. */
		if (e->expires_ms < now_ms + pins[i].timeout_ms)
			e->expires_ms = now_ms + pins[i].timeout_ms;
		e->p = pins[i];
	}
	return 0;
}

size_t fw_ledger_live(const struct fw_ledger *l, const struct pin *pins, size_t n,
		      uint64_t now_ms)
{
	size_t live = 0;

	for (size_t i = 0; i < l->n; i++)
		live += l->v[i].expires_ms > now_ms;
	for (size_t i = 0; i < n; i++) {
		size_t s = l->nslot ? find_slot(l, &pins[i]) : 0;

		if (!l->nslot || !l->slot[s] || l->v[l->slot[s] - 1].expires_ms <= now_ms)
			live++;
	}
	return live;
}

void fw_ledger_prune(struct fw_ledger *l, uint64_t now_ms)
{
	if (l->nslot && prune(l, now_ms))
		reindex(l, l->nslot);	/* in place: cannot fail */
}

void fw_ledger_clear(struct fw_ledger *l)
{
	l->n = 0;
	if (l->slot)
		memset(l->slot, 0, l->nslot * sizeof(*l->slot));
}

void fw_ledger_free(struct fw_ledger *l)
{
	if (!l)
		return;
	free(l->v);
	free(l->slot);
	memset(l, 0, sizeof(*l));
}
