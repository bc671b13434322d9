/*
 * ftab.c - the flow table both SNI checks keep (ftab.h): chains by the
 * 4-tuple's FNV-1a, owners' shares of open entries, the settled list.
 */
#include "netd/sni/ftab.h"

#include <errno.h>
#include <stdlib.h>

#include "common/hash.h"

int ftab_init(struct ftab *t, uint32_t n_buckets, size_t max, uint16_t open_max,
	      uint32_t n_owners, void (*free_entry)(struct fentry *e))
{
	*t = (struct ftab){ .n_buckets = n_buckets, .max = max, .open_max = open_max,
			    .n_owners = n_owners, .free_entry = free_entry };
	t->b = calloc(n_buckets, sizeof(*t->b));
	t->open = calloc(n_owners ? n_owners : 1, sizeof(*t->open));
	if (!t->b || !t->open) {
		free(t->b);
		free(t->open);
		*t = (struct ftab){ 0 };
		return -ENOMEM;
	}
	return 0;
}

void ftab_fini(struct ftab *t)
{
	for (uint32_t i = 0; t->b && i < t->n_buckets; i++)
		while (t->b[i])
			ftab_unlink(t, &t->b[i]);
	free(t->b);
	free(t->open);
	*t = (struct ftab){ 0 };
}

static uint32_t bucket_of(const struct ftab *t, const struct ftuple *k)
{
	uint32_t h = FNV32_INIT;

	h = fnv32_add(h, k->src.a, addr_len(k->src.family));
	h = fnv32_add(h, k->dst.a, addr_len(k->dst.family));
	h = fnv32_add(h, &k->sport, sizeof(k->sport));
	h = fnv32_add(h, &k->dport, sizeof(k->dport));
	return h & (t->n_buckets - 1);
}

struct fentry **ftab_find(struct ftab *t, const struct ftuple *k)
{
	struct fentry **pp = &t->b[bucket_of(t, k)];

	for (; *pp; pp = &(*pp)->next) {
		const struct ftuple *e = &(*pp)->key;

		if (e->sport == k->sport && e->dport == k->dport && addr_equal(&e->src, &k->src) &&
		    addr_equal(&e->dst, &k->dst))
			break;
	}
	return pp;
}

void ftab_link(struct ftab *t, struct fentry **slot, struct fentry *e)
{
	e->open = false;
	e->lru = (struct lru_node){ 0 };
	lru_append(&t->lru, &e->lru);
	e->next = *slot;
	*slot = e;
	t->n++;
}

/* Take @e out of its owner's share. */
static void share_leave(struct ftab *t, const struct fentry *e)
{
	if (e->owner < t->n_owners && t->open[e->owner])
		t->open[e->owner]--;
}

void ftab_set_open(struct ftab *t, struct fentry *e, bool open)
{
	if (e->open == open)
		return;
	e->open = open;
	if (open) {
		lru_remove(&t->lru, &e->lru);
		if (e->owner < t->n_owners)
			t->open[e->owner]++;
	} else {
		share_leave(t, e);
		lru_append(&t->lru, &e->lru);
	}
}

void ftab_unlink(struct ftab *t, struct fentry **slot)
{
	struct fentry *e = *slot;

	if (e->open)
		share_leave(t, e);
	else
		lru_remove(&t->lru, &e->lru);
	*slot = e->next;
	t->n--;
	t->free_entry(e);
}

bool ftab_share_full(const struct ftab *t, uint32_t owner)
{
	return owner < t->n_owners && t->open[owner] >= t->open_max;
}

bool ftab_make_room(struct ftab *t)
{
	struct fentry *old = lru_first(&t->lru, struct fentry, lru);

	if (t->n < t->max)
		return true;
	if (!old)
		return false;
	ftab_unlink(t, ftab_find(t, &old->key));
	return true;
}

bool ftab_full(const struct ftab *t)
{
	return t->n >= t->max && !t->lru.head;
}

size_t ftab_sweep(struct ftab *t, uint64_t now_ms,
		  uint64_t (*keep_ms)(const struct fentry *e, const void *ctx), const void *ctx)
{
	size_t n = 0;

	for (uint32_t i = 0; i < t->n_buckets; i++)
		for (struct fentry **pp = &t->b[i]; *pp;) {
			if (now_ms >= (*pp)->start_ms + keep_ms(*pp, ctx)) {
				ftab_unlink(t, pp);
				n++;
			} else {
				pp = &(*pp)->next;
			}
		}
	return n;
}

size_t ftab_open_count(const struct ftab *t, uint32_t owner)
{
	return owner < t->n_owners ? t->open[owner] : 0;
}
