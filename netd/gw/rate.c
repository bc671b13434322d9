/*
 * gw/rate - per-(sandbox, rule) token buckets in a bounded table
 * (netd/gw/rate.h).  A chained hash table over a preallocated array of
 * keys, with an LRU list through the same keys: lookup, take and eviction
 * are O(1) and never allocate.  Pure.
 */
#include "netd/gw/rate.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define MICRO 1000000u	/* micro-requests one request costs */

struct rate_key {
	char sandbox[GW_RATE_KEY_MAX + 1];
	int rule;
	uint32_t rate_milli, burst;
	uint64_t micro;		/* micro-requests available (<= burst * MICRO) */
	uint64_t last_ms;	/* when micro was last refilled */
	struct rate_key *next;	/* hash chain */
	struct rate_key *newer, *older;	/* LRU list */
};

struct gw_rate {
	struct rate_key *keys;	/* max_keys of them */
	struct rate_key **heads;	/* n_heads chains */
	size_t max_keys, n_keys, n_heads;
	struct rate_key *newest, *oldest;
};

struct gw_rate *gw_rate_new(size_t max_keys)
{
	struct gw_rate *r;

	if (max_keys == 0 || max_keys > (1u << 24))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->max_keys = max_keys;
	for (r->n_heads = 16; r->n_heads < max_keys; r->n_heads <<= 1)
		;
	r->keys = calloc(max_keys, sizeof(*r->keys));
	r->heads = calloc(r->n_heads, sizeof(*r->heads));
	if (!r->keys || !r->heads) {
		gw_rate_free(r);
		return NULL;
	}
	return r;
}

void gw_rate_free(struct gw_rate *r)
{
	if (!r)
		return;
	free(r->keys);
	free(r->heads);
	free(r);
}

size_t gw_rate_count(const struct gw_rate *r)
{
	return r->n_keys;
}

static size_t slot_of(const struct gw_rate *r, const char *sandbox, int rule)
{
	uint32_t h = fnv32_str(FNV32_INIT, sandbox);

	h = fnv32_add(h, &rule, sizeof(rule));
	return h & (r->n_heads - 1);
}

static void lru_unlink(struct gw_rate *r, struct rate_key *k)
{
	if (k->newer)
		k->newer->older = k->older;
	else
		r->newest = k->older;
	if (k->older)
		k->older->newer = k->newer;
	else
		r->oldest = k->newer;
	k->newer = k->older = NULL;
}

static void lru_push(struct gw_rate *r, struct rate_key *k)
{
	k->older = r->newest;
	k->newer = NULL;
	if (r->newest)
		r->newest->newer = k;
	r->newest = k;
	if (!r->oldest)
		r->oldest = k;
}

static void chain_unlink(struct gw_rate *r, struct rate_key *k)
{
	struct rate_key **pp = &r->heads[slot_of(r, k->sandbox, k->rule)];

	while (*pp && *pp != k)
		pp = &(*pp)->next;
	if (*pp)
		*pp = k->next;
	k->next = NULL;
}

/* A free key, or the least recently used one taken out of the table. */
static struct rate_key *key_alloc(struct gw_rate *r)
{
	struct rate_key *k;

	if (r->n_keys < r->max_keys)
		return &r->keys[r->n_keys++];
	k = r->oldest;
	lru_unlink(r, k);
	chain_unlink(r, k);
	return k;
}

static void key_fill(struct rate_key *k, uint32_t rate_milli, uint32_t burst, uint64_t now_ms)
{
	k->rate_milli = rate_milli;
	k->burst = burst;
	k->micro = (uint64_t)burst * MICRO;
	k->last_ms = now_ms;
}

/* Add what the rate earned since last_ms, capped at the burst; no overflow. */
static void refill(struct rate_key *k, uint64_t now_ms)
{
	uint64_t cap = (uint64_t)k->burst * MICRO;

	if (now_ms <= k->last_ms)
		return;	/* backwards (or the same ms): nothing earned, last_ms kept */
	if (k->micro < cap) {
		uint64_t missing = cap - k->micro;
		uint64_t full_ms = (missing + k->rate_milli - 1) / k->rate_milli;
		uint64_t dt = now_ms - k->last_ms;

		/* dt < full_ms bounds dt * rate_milli below missing + rate_milli */
		k->micro = dt >= full_ms ? cap : k->micro + dt * k->rate_milli;
	}
	k->last_ms = now_ms;
}

int gw_rate_take(struct gw_rate *r, const char *sandbox, int rule, uint32_t rate_milli,
		 uint32_t burst, uint64_t now_ms, uint32_t *retry_after_s)
{
	struct rate_key *k;
	size_t slot;
	uint64_t wait_ms;

	if (!sandbox || strlen(sandbox) > GW_RATE_KEY_MAX)
		return -EINVAL;
	if (rate_milli == 0)
		return 0;
	if (burst == 0)
		burst = 1;
	if (burst > GW_RATE_BURST_MAX)
		burst = GW_RATE_BURST_MAX;
	slot = slot_of(r, sandbox, rule);
	for (k = r->heads[slot]; k; k = k->next)
		if (k->rule == rule && strcmp(k->sandbox, sandbox) == 0)
			break;
	if (!k) {
		k = key_alloc(r);
		memset(k, 0, sizeof(*k));
		strcpy(k->sandbox, sandbox);	/* length checked above */
		k->rule = rule;
		k->next = r->heads[slot];
		r->heads[slot] = k;
		key_fill(k, rate_milli, burst, now_ms);
	} else {
		lru_unlink(r, k);
		if (k->rate_milli != rate_milli || k->burst != burst)
			key_fill(k, rate_milli, burst, now_ms);	/* a reload changed the rule */
	}
	lru_push(r, k);
	refill(k, now_ms);
	if (k->micro >= MICRO) {
		k->micro -= MICRO;
		return 0;
	}
	wait_ms = (MICRO - k->micro + rate_milli - 1) / rate_milli;
	*retry_after_s = (uint32_t)((wait_ms + 999) / 1000);
	if (*retry_after_s == 0)
		*retry_after_s = 1;
	return -EAGAIN;
}
