/*
 * pinmap - bounded, set-associative map (slot, address) -> name.
 */
#include "netd/trail/pinmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define PINMAP_WAYS 4

struct pin_entry {
	bool used;
	uint32_t slot;
	struct addr addr;
	uint64_t age;		/* insertion counter; smallest = oldest */
	char name[PINMAP_NAME_MAX + 1];
};

struct pinmap {
	size_t n_buckets;	/* power of two */
	uint64_t clock;
	struct pin_entry *e;	/* n_buckets * PINMAP_WAYS */
};

int pinmap_new(size_t entries, struct pinmap **ret)
{
	struct pinmap *m = calloc(1, sizeof(*m));
	size_t nb = 16;

	if (!m)
		return -ENOMEM;
	while (nb * PINMAP_WAYS < entries && nb < ((size_t)1 << 24))
		nb <<= 1;
	m->n_buckets = nb;
	m->e = calloc(nb * PINMAP_WAYS, sizeof(*m->e));
	if (!m->e) {
		free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

void pinmap_free(struct pinmap *m)
{
	if (!m)
		return;
	free(m->e);
	free(m);
}

/* FNV-1a over slot, family and address bytes. */
static size_t bucket(const struct pinmap *m, uint32_t slot, const struct addr *a)
{
	uint64_t h = 1469598103934665603ull;
	size_t len = addr_len(a->family);

	for (int i = 0; i < 4; i++)
		h = (h ^ ((slot >> (8 * i)) & 0xff)) * 1099511628211ull;
	h = (h ^ a->family) * 1099511628211ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ a->a[i]) * 1099511628211ull;
	return (size_t)(h & (m->n_buckets - 1)) * PINMAP_WAYS;
}

static bool same(const struct pin_entry *e, uint32_t slot, const struct addr *a)
{
	return e->used && e->slot == slot && addr_equal(&e->addr, a);
}

void pinmap_set(struct pinmap *m, uint32_t slot, const struct addr *addr, const char *name)
{
	struct pin_entry *b = &m->e[bucket(m, slot, addr)], *victim = NULL;
	size_t n;

	for (int i = 0; i < PINMAP_WAYS && !victim; i++)
		if (same(&b[i], slot, addr))
			victim = &b[i];
	for (int i = 0; i < PINMAP_WAYS && !victim; i++)
		if (!b[i].used)
			victim = &b[i];
	if (!victim) {
		victim = &b[0];
		for (int i = 1; i < PINMAP_WAYS; i++)
			if (b[i].age < victim->age)
				victim = &b[i];
	}
	victim->used = true;
	victim->slot = slot;
	victim->addr = *addr;
	victim->age = ++m->clock;
	n = strnlen(name, PINMAP_NAME_MAX);
	memcpy(victim->name, name, n);
	victim->name[n] = '\0';
}

const char *pinmap_get(const struct pinmap *m, uint32_t slot, const struct addr *addr)
{
	const struct pin_entry *b = &m->e[bucket(m, slot, addr)];

	for (int i = 0; i < PINMAP_WAYS; i++)
		if (same(&b[i], slot, addr))
			return b[i].name;
	return NULL;
}

void pinmap_forget(struct pinmap *m, uint32_t slot)
{
	for (size_t i = 0; i < m->n_buckets * PINMAP_WAYS; i++)
		if (m->e[i].used && m->e[i].slot == slot)
			m->e[i].used = false;
}
