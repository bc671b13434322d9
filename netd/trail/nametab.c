/*
 * nametab - interned names with reference counts.  See nametab.h.  The
 * entries sit in one array (id = index + 1), chained per hash bucket by
 * index; freed entries go on a free list, so an id stays put while held.
 */
#include "netd/trail/nametab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

struct nent {
	char *s;		/* owned; NULL: free */
	uint32_t refs;
	uint32_t next;		/* bucket chain or free list: index + 1, 0 = end */
};

struct nametab {
	struct nent *e;		/* cap entries */
	uint32_t *bucket;	/* index + 1 of the chain's first, 0 = empty; nbucket a power of 2 */
	size_t cap, nbucket, n;
	uint32_t free_head;	/* index + 1, 0 = none */
	uint32_t used;		/* entries ever handed out (the rest are fresh) */
};

int nametab_new(size_t cap, struct nametab **ret)
{
	struct nametab *t;
	size_t nb = 16;

	*ret = NULL;
	if (cap == 0 || cap > (1u << 24))
		return -EINVAL;
	while (nb < cap)
		nb <<= 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->e = calloc(cap, sizeof(*t->e));
	t->bucket = calloc(nb, sizeof(*t->bucket));
	if (!t->e || !t->bucket) {
		nametab_free(t);
		return -ENOMEM;
	}
	t->cap = cap;
	t->nbucket = nb;
	*ret = t;
	return 0;
}

void nametab_free(struct nametab *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->e && i < t->used; i++)
		free(t->e[i].s);
	free(t->e);
	free(t->bucket);
	free(t);
}

static uint32_t *bucket_of(const struct nametab *t, const char *name)
{
	return &t->bucket[fnv32_str(FNV32_INIT, name) & (t->nbucket - 1)];
}

uint32_t nametab_get(struct nametab *t, const char *name)
{
	uint32_t *b, i;
	struct nent *e;

	if (!t || !name || strlen(name) > NAMETAB_NAME_MAX)
		return 0;
	b = bucket_of(t, name);
	for (i = *b; i; i = t->e[i - 1].next)
		if (strcmp(t->e[i - 1].s, name) == 0) {
			t->e[i - 1].refs++;
			return i;
		}
	if (t->free_head) {
		i = t->free_head;
		t->free_head = t->e[i - 1].next;
	} else if (t->used < t->cap) {
		i = ++t->used;
	} else {
		return 0;	/* full */
	}
	e = &t->e[i - 1];
	e->s = strdup(name);
	if (!e->s) {
		e->next = t->free_head;	/* back on the free list */
		t->free_head = i;
		return 0;
	}
	e->refs = 1;
	e->next = *b;
	*b = i;
	t->n++;
	return i;
}

const char *nametab_str(const struct nametab *t, uint32_t id)
{
	return t && id && id <= t->used ? t->e[id - 1].s : NULL;
}

void nametab_put(struct nametab *t, uint32_t id)
{
	struct nent *e;
	uint32_t *pp;

	if (!t || !id || id > t->used || !t->e[id - 1].s)
		return;
	e = &t->e[id - 1];
	if (--e->refs)
		return;
	for (pp = bucket_of(t, e->s); *pp != id; pp = &t->e[*pp - 1].next)
		;
	*pp = e->next;
	free(e->s);
	e->s = NULL;
	e->next = t->free_head;
	t->free_head = id;
	t->n--;
}

size_t nametab_count(const struct nametab *t)
{
	return t ? t->n : 0;
}
