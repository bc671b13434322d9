/*
 * sandbox - registry of sandboxes indexed by slot: address lookups (every
 * DNS query) are arithmetic for pool addresses and a hash lookup for a
 * sandbox's own (chained) addresses; name lookups a hash by name.
 * Pure.
 */
#include "netd/model/sandbox.h"
#include "netd/model/rbudget.h"

#include "common/hash.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SANDBOX_ADDR_BUCKETS 1024	/* power of two */
#define SANDBOX_NAME_BUCKETS 4096	/* power of two */

struct sandbox_table {
	struct prefix pool4, pool6;
	uint32_t n_slots;
	uint32_t next;		/* round-robin cursor */
	size_t count;
	struct sandbox **slots;	/* n_slots entries */
	struct sandbox *hash[2][SANDBOX_ADDR_BUCKETS];	/* own_addrs sandboxes by address */
	struct sandbox *by_name[SANDBOX_NAME_BUCKETS];	/* inserted sandboxes by name */
};

/* Names come from the operator's API calls, not from sandboxes: FNV-1a. */
static uint32_t name_bucket(const char *name)
{
	return fnv32_str(FNV32_INIT, name) & (SANDBOX_NAME_BUCKETS - 1);
}

static uint32_t pool_slots(const struct prefix *p)
{
	unsigned int host_bits = (unsigned int)addr_len(p->addr.family) * 8 - p->plen;

	if (host_bits >= 32)
		return SANDBOX_MAX;
	if (host_bits < 2)
		return 0;
	return ((uint32_t)1 << host_bits) / 4 < SANDBOX_MAX ? ((uint32_t)1 << host_bits) / 4 :
								 SANDBOX_MAX;
}

int sandbox_table_new(const struct prefix *pool4, const struct prefix *pool6,
		      struct sandbox_table **ret)
{
	struct sandbox_table *t;
	uint32_t n = pool_slots(pool4);

	if (pool4->addr.family != AF_INET)
		return -EINVAL;
	if (pool6->addr.family == AF_INET6 && pool_slots(pool6) < n)
		n = pool_slots(pool6);
	if (n == 0)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->slots = calloc(n, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return -ENOMEM;
	}
	t->pool4 = *pool4;
	t->pool6 = *pool6;
	t->n_slots = n;
	*ret = t;
	return 0;
}

/* @sb and what it owns (its budget counters); NULL-safe. */
static void sandbox_free(struct sandbox *sb)
{
	if (sb)
		rbudget_free(sb->budgets);
	free(sb);
}

void sandbox_table_free(struct sandbox_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->n_slots; i++)
		sandbox_free(t->slots[i]);
	free(t->slots);
	free(t);
}

/* Add @n to the last 32 bits of @a (network byte order). */
static void addr_add(struct addr *a, uint32_t n)
{
	size_t len = addr_len(a->family);
	uint32_t v = ((uint32_t)a->a[len - 4] << 24) | ((uint32_t)a->a[len - 3] << 16) |
		     ((uint32_t)a->a[len - 2] << 8) | a->a[len - 1];

	v += n;
	a->a[len - 4] = (uint8_t)(v >> 24);
	a->a[len - 3] = (uint8_t)(v >> 16);
	a->a[len - 2] = (uint8_t)(v >> 8);
	a->a[len - 1] = (uint8_t)v;
}

static uint32_t addr_low32(const struct addr *a)
{
	size_t len = addr_len(a->family);

	return ((uint32_t)a->a[len - 4] << 24) | ((uint32_t)a->a[len - 3] << 16) |
	       ((uint32_t)a->a[len - 2] << 8) | a->a[len - 1];
}

struct sandbox *sandbox_find(const struct sandbox_table *t, const char *name)
{
	for (struct sandbox *sb = t->by_name[name_bucket(name)]; sb; sb = sb->nnext)
		if (strcmp(sb->name, name) == 0)
			return sb;
	return NULL;
}

int sandbox_alloc(struct sandbox_table *t, const char *name, int64_t want_slot,
		  struct sandbox **ret)
{
	struct sandbox *sb;
	uint32_t slot;

	if (strlen(name) > SANDBOX_NAME_MAX)
		return -ENAMETOOLONG;
	if (sandbox_find(t, name))
		return -EEXIST;
	if (want_slot >= 0) {
		if ((uint64_t)want_slot >= t->n_slots || t->slots[want_slot])
			return -EBUSY;
		slot = (uint32_t)want_slot;
	} else {
		uint32_t i;

		for (i = 0; i < t->n_slots; i++) {
			slot = (t->next + i) % t->n_slots;
			if (!t->slots[slot])
				break;
		}
		if (i == t->n_slots)
			return -ENOSPC;
		t->next = (slot + 1) % t->n_slots;
	}
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	snprintf(sb->name, sizeof(sb->name), "%s", name);
	sb->slot = slot;
	snprintf(sb->host_ifname, sizeof(sb->host_ifname), SANDBOX_IFNAME_PREFIX "%05x", slot);
	snprintf(sb->peer_ifname, sizeof(sb->peer_ifname), "eth0");
	sb->gw4 = t->pool4.addr;
	addr_add(&sb->gw4, slot * 4 + 1);
	sb->addr4 = t->pool4.addr;
	addr_add(&sb->addr4, slot * 4 + 2);
	if (t->pool6.addr.family == AF_INET6) {
		sb->gw6 = t->pool6.addr;
		addr_add(&sb->gw6, slot * 4 + 1);
		sb->addr6 = t->pool6.addr;
		addr_add(&sb->addr6, slot * 4 + 2);
	}
	*ret = sb;
	return 0;
}

/* FNV-1a over the address bytes: chained addresses are few and not chosen by a sandbox. */
static uint32_t addr_bucket(const struct addr *a)
{
	return fnv32_add(FNV32_INIT, a->a, addr_len(a->family)) & (SANDBOX_ADDR_BUCKETS - 1);
}

static const struct addr *own_addr(const struct sandbox *sb, int f)
{
	return f == 0 ? &sb->addr4 : &sb->addr6;
}

static struct sandbox *hash_find(const struct sandbox_table *t, const struct addr *a)
{
	int f = a->family == AF_INET ? 0 : 1;

	for (struct sandbox *sb = t->hash[f][addr_bucket(a)]; sb; sb = sb->hnext[f])
		if (addr_equal(own_addr(sb, f), a))
			return sb;
	return NULL;
}

static bool in_pool(const struct sandbox_table *t, const struct addr *a)
{
	const struct prefix *pool = a->family == AF_INET ? &t->pool4 : &t->pool6;

	return pool->addr.family == a->family && prefix_contains(pool, a);
}

int sandbox_set_addrs(struct sandbox_table *t, struct sandbox *sb, const struct addr *a4,
		      const struct addr *a6)
{
	if ((a4->family && a4->family != AF_INET) || (a6->family && a6->family != AF_INET6) ||
	    (!a4->family && !a6->family))
		return -EINVAL;
	if ((a4->family && in_pool(t, a4)) || (a6->family && in_pool(t, a6)))
		return -EINVAL;
	if ((a4->family && hash_find(t, a4)) || (a6->family && hash_find(t, a6)))
		return -EADDRINUSE;
	sb->addr4 = *a4;
	sb->addr6 = *a6;
	memset(&sb->gw4, 0, sizeof(sb->gw4));
	memset(&sb->gw6, 0, sizeof(sb->gw6));
	sb->own_addrs = true;
	return 0;
}

void sandbox_insert(struct sandbox_table *t, struct sandbox *sb)
{
	t->slots[sb->slot] = sb;
	t->count++;
	sb->nnext = t->by_name[name_bucket(sb->name)];
	t->by_name[name_bucket(sb->name)] = sb;
	if (!sb->own_addrs)
		return;
	for (int f = 0; f < 2; f++) {
		const struct addr *a = own_addr(sb, f);
		struct sandbox **head;

		if (!a->family)
			continue;
		head = &t->hash[f][addr_bucket(a)];
		sb->hnext[f] = *head;
		*head = sb;
	}
}

void sandbox_remove(struct sandbox_table *t, struct sandbox *sb)
{
	if (t->slots[sb->slot] == sb) {
		t->slots[sb->slot] = NULL;
		t->count--;
		for (struct sandbox **pp = &t->by_name[name_bucket(sb->name)]; *pp; pp = &(*pp)->nnext)
			if (*pp == sb) {
				*pp = sb->nnext;
				break;
			}
		for (int f = 0; sb->own_addrs && f < 2; f++) {
			const struct addr *a = own_addr(sb, f);
			struct sandbox **pp;

			if (!a->family)
				continue;
			for (pp = &t->hash[f][addr_bucket(a)]; *pp; pp = &(*pp)->hnext[f]) {
				if (*pp == sb) {
					*pp = sb->hnext[f];
					break;
				}
			}
		}
	}
	sandbox_free(sb);
}

void sandbox_release(struct sandbox_table *t, struct sandbox *sb)
{
	(void)t;
	sandbox_free(sb);
}

struct sandbox *sandbox_by_addr(const struct sandbox_table *t, const struct addr *a)
{
	const struct prefix *pool = a->family == AF_INET ? &t->pool4 : &t->pool6;
	struct sandbox *sb;
	uint32_t off;

	if (a->family != AF_INET && a->family != AF_INET6)
		return NULL;
	if (pool->addr.family != a->family || !prefix_contains(pool, a))
		return hash_find(t, a);
	off = addr_low32(a) - addr_low32(&pool->addr);
	if (off % 4 != 2 || off / 4 >= t->n_slots)
		return NULL;
	sb = t->slots[off / 4];
	if (!sb)
		return NULL;
	/* The pool check covered the upper bytes only up to plen; compare all. */
	if (!addr_equal(a->family == AF_INET ? &sb->addr4 : &sb->addr6, a))
		return NULL;
	return sb;
}

struct sandbox *sandbox_by_slot(const struct sandbox_table *t, uint32_t slot)
{
	return slot < t->n_slots ? t->slots[slot] : NULL;
}

size_t sandbox_count(const struct sandbox_table *t)
{
	return t->count;
}

struct sandbox *sandbox_next(const struct sandbox_table *t, uint32_t *cursor)
{
	while (*cursor < t->n_slots) {
		struct sandbox *sb = t->slots[(*cursor)++];

		if (sb)
			return sb;
	}
	return NULL;
}
