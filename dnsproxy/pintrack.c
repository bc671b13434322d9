/*
 * pintrack - the proxy's record of committed pins and their expiry (see
 * pintrack.h).  Two chained hash tables: sandboxes by name, and entries by
 * (sandbox, address, protocol, port, gateway): a plain and a gateway pin
 * of one address are two kernel elements (pin4/6, gw4/6), each tracked.
 * The entry table doubles when it holds twice as many entries as buckets;
 * the caller bounds the total through the per-sandbox limit.  Each sandbox
 * also lists its own entries, so that forgetting one sandbox costs what it
 * holds, not the whole table.
 */
#include "dnsproxy/pintrack.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define SB_BUCKETS      4096
#define ENTRY_BUCKETS0  1024
#define SB_NAME_MAX     128

struct pt_entry;

struct pt_sandbox {
	struct pt_sandbox *next;
	struct pt_entry *first;		/* its entries */
	size_t n_entries;
	char name[SB_NAME_MAX];
};

struct pt_entry {
	struct pt_entry *next;
	struct pt_entry *sb_next, **sb_pprev;	/* its sandbox's list */
	struct pt_sandbox *sb;
	struct addr addr;
	uint8_t proto;
	uint16_t port;
	bool gateway;
	uint64_t expires_ms;
};

struct pintrack {
	struct pt_sandbox *sbs[SB_BUCKETS];
	struct pt_entry **buckets;
	size_t n_buckets;	/* power of two */
	size_t n_entries;
};

static uint32_t name_hash(const char *name)
{
	return fnv32_add(FNV32_INIT, name, strlen(name));
}

static size_t entry_hash(const struct pintrack *pt, const struct pt_sandbox *sb,
			 const struct pin *p)
{
	uint32_t h = fnv32_add(FNV32_INIT, &sb, sizeof(sb));

	h = fnv32_add(h, &p->addr.family, sizeof(p->addr.family));
	h = fnv32_add(h, p->addr.a, addr_len(p->addr.family));
	h = fnv32_add(h, &p->proto, 1);
	h = fnv32_add(h, &p->port, 2);
	h = fnv32_add(h, &(uint8_t){ p->gateway }, 1);
	return h & (pt->n_buckets - 1);
}

int pintrack_new(struct pintrack **ret)
{
	struct pintrack *pt = calloc(1, sizeof(*pt));

	*ret = NULL;
	if (!pt)
		return -ENOMEM;
	pt->n_buckets = ENTRY_BUCKETS0;
	pt->buckets = calloc(pt->n_buckets, sizeof(*pt->buckets));
	if (!pt->buckets) {
		free(pt);
		return -ENOMEM;
	}
	*ret = pt;
	return 0;
}

void pintrack_free(struct pintrack *pt)
{
	if (!pt)
		return;
	for (size_t i = 0; pt->buckets && i < pt->n_buckets; i++) {
		while (pt->buckets[i]) {
			struct pt_entry *e = pt->buckets[i];

			pt->buckets[i] = e->next;
			free(e);
		}
	}
	for (size_t i = 0; i < SB_BUCKETS; i++) {
		while (pt->sbs[i]) {
			struct pt_sandbox *s = pt->sbs[i];

			pt->sbs[i] = s->next;
			free(s);
		}
	}
	free(pt->buckets);
	free(pt);
}

static struct pt_sandbox *sb_find(const struct pintrack *pt, const char *name)
{
	for (struct pt_sandbox *s = pt->sbs[name_hash(name) % SB_BUCKETS]; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static struct pt_entry *entry_find(const struct pintrack *pt, const struct pt_sandbox *sb,
				   const struct pin *p)
{
	for (struct pt_entry *e = pt->buckets[entry_hash(pt, sb, p)]; e; e = e->next)
		if (e->sb == sb && e->proto == p->proto && e->port == p->port &&
		    e->gateway == p->gateway && addr_equal(&e->addr, &p->addr))
			return e;
	return NULL;
}

int pintrack_plan(const struct pintrack *pt, const char *sandbox, const struct pin *pins,
		  size_t n, uint64_t now_ms, size_t max_live, struct pin *out)
{
	const struct pt_sandbox *sb = sb_find(pt, sandbox);
	size_t n_out = 0, n_new = 0;

	for (size_t i = 0; i < n; i++) {
		const struct pt_entry *e = sb ? entry_find(pt, sb, &pins[i]) : NULL;
		uint64_t expires = now_ms + pins[i].timeout_ms;

		/* The kernel's element outlives this answer's TTL already:
		 * re-adding would only SET (maybe shorten) its timeout. */
		if (e && e->expires_ms > now_ms && e->expires_ms >= expires)
			continue;
		if (!e)
			n_new++;
		out[n_out++] = pins[i];
	}
	if (max_live && n_new && (sb ? sb->n_entries : 0) + n_new > max_live)
		return -ENOSPC;
	return (int)n_out;
}

static void grow(struct pintrack *pt)
{
	size_t nb = pt->n_buckets * 2;
	struct pt_entry **b = calloc(nb, sizeof(*b));
	struct pt_entry **old = pt->buckets;
	size_t old_n = pt->n_buckets;

	if (!b)
		return;		/* longer chains, still correct */
	pt->buckets = b;
	pt->n_buckets = nb;
	for (size_t i = 0; i < old_n; i++) {
		while (old[i]) {
			struct pt_entry *e = old[i];
			struct pin k = { .addr = e->addr, .proto = e->proto, .port = e->port,
					.gateway = e->gateway };
			size_t h = entry_hash(pt, e->sb, &k);

			old[i] = e->next;
			e->next = b[h];
			b[h] = e;
		}
	}
	free(old);
}

int pintrack_commit(struct pintrack *pt, const char *sandbox, const struct pin *pins,
		    size_t n, uint64_t now_ms)
{
	struct pt_sandbox *sb = sb_find(pt, sandbox);

	if (!sb) {
		uint32_t h = name_hash(sandbox) % SB_BUCKETS;

		if (strlen(sandbox) >= SB_NAME_MAX)
			return -ENAMETOOLONG;
		sb = calloc(1, sizeof(*sb));
		if (!sb)
			return -ENOMEM;
		strcpy(sb->name, sandbox);
		sb->next = pt->sbs[h];
		pt->sbs[h] = sb;
	}
	for (size_t i = 0; i < n; i++) {
		struct pt_entry *e = entry_find(pt, sb, &pins[i]);
		uint64_t expires = now_ms + pins[i].timeout_ms;
		size_t h;

		if (e) {
			/* Only ever later: the kernel's SET with a later
			 * timeout is the only kind of re-add we send. */
			if (expires > e->expires_ms)
				e->expires_ms = expires;
			continue;
		}
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->sb = sb;
		e->addr = pins[i].addr;
		e->proto = pins[i].proto;
		e->port = pins[i].port;
		e->gateway = pins[i].gateway;
		e->expires_ms = expires;
		h = entry_hash(pt, sb, &pins[i]);
		e->next = pt->buckets[h];
		pt->buckets[h] = e;
		e->sb_next = sb->first;
		if (sb->first)
			sb->first->sb_pprev = &e->sb_next;
		e->sb_pprev = &sb->first;
		sb->first = e;
		sb->n_entries++;
		pt->n_entries++;
		if (pt->n_entries > 2 * pt->n_buckets)
			grow(pt);
	}
	return 0;
}

/* Take @e off its sandbox's list and free it. */
static void entry_release(struct pintrack *pt, struct pt_entry *e)
{
	*e->sb_pprev = e->sb_next;
	if (e->sb_next)
		e->sb_next->sb_pprev = e->sb_pprev;
	e->sb->n_entries--;
	pt->n_entries--;
	free(e);
}

/* drop_expired() - remove the entries expired at @now_ms.  Return: removed. */
static size_t drop_expired(struct pintrack *pt, uint64_t now_ms)
{
	size_t n = 0;

	for (size_t i = 0; i < pt->n_buckets; i++) {
		struct pt_entry **pp = &pt->buckets[i];

		while (*pp) {
			struct pt_entry *e = *pp;

			if (e->expires_ms > now_ms) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			entry_release(pt, e);
			n++;
		}
	}
	return n;
}

void pintrack_reset(struct pintrack *pt, const char *sandbox)
{
	struct pt_sandbox *sb;
	uint32_t h;

	if (!pt)
		return;
	sb = sb_find(pt, sandbox);
	if (!sb)
		return;
	/* Each of its entries out of its bucket (chains are short: see grow()). */
	while (sb->first) {
		struct pt_entry *e = sb->first;
		struct pin k = { .addr = e->addr, .proto = e->proto, .port = e->port,
					.gateway = e->gateway };
		struct pt_entry **pp = &pt->buckets[entry_hash(pt, sb, &k)];

		while (*pp != e)
			pp = &(*pp)->next;
		*pp = e->next;
		entry_release(pt, e);
	}
	h = name_hash(sandbox) % SB_BUCKETS;
	for (struct pt_sandbox **pp = &pt->sbs[h]; *pp; pp = &(*pp)->next) {
		if (*pp == sb) {
			*pp = sb->next;
			free(sb);
			break;
		}
	}
}

size_t pintrack_expire(struct pintrack *pt, uint64_t now_ms)
{
	return drop_expired(pt, now_ms);
}

size_t pintrack_live(const struct pintrack *pt, const char *sandbox)
{
	const struct pt_sandbox *sb = sb_find(pt, sandbox);

	return sb ? sb->n_entries : 0;
}

size_t pintrack_total(const struct pintrack *pt)
{
	return pt->n_entries;
}
