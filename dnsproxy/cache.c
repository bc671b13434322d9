/*
 * cache - the proxy's answer cache: a chained hash table over the key, and
 * one doubly linked list in use order for LRU eviction.  Pure: memory
 * only, the caller's clock, no logging.  See cache.h.
 */
#include "dnsproxy/cache.h"

#include "common/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct entry *hnext;		/* hash chain */
	struct entry *prev, *next;	/* use order, most recent first */
	uint32_t hash;
	uint64_t rx_ms;			/* when the response was received */
	uint32_t ttl_s;			/* servable this long after rx_ms */
	uint32_t aged_s;		/* the stored TTLs are already lowered by this */
	size_t key_len, msg_len;
	uint8_t data[];			/* key bytes, then the message */
};

struct cache {
	struct entry **buckets;
	size_t n_buckets;		/* a power of two */
	struct entry *head, *tail;
	size_t count, bytes;
	size_t max_entries, max_bytes;
};

/* The key's bytes: qname, NUL, qtype, qclass (big endian), flags, EDNS version. */
static size_t key_bytes(const struct cache_key *k, uint8_t *out)
{
	size_t n = strnlen(k->qname, WIRE_NAME_STRLEN - 1);

	memcpy(out, k->qname, n);
	out[n++] = 0;
	out[n++] = (uint8_t)(k->qtype >> 8);
	out[n++] = (uint8_t)k->qtype;
	out[n++] = (uint8_t)(k->qclass >> 8);
	out[n++] = (uint8_t)k->qclass;
	out[n++] = k->flags;
	out[n++] = k->edns_version;
	return n;
}

#define KEY_MAX (WIRE_NAME_STRLEN + 6)

static uint32_t hash_bytes(const uint8_t *b, size_t n)
{
	return fnv32_add(FNV32_INIT, b, n);
}

static size_t entry_size(const struct entry *e)
{
	return sizeof(*e) + e->key_len + e->msg_len;
}

void cache_key_from_query(const struct wire_query *q, struct cache_key *k)
{
	k->qname = q->qname;
	k->qtype = q->qtype;
	k->qclass = q->qclass;
	k->flags = (q->has_opt ? CACHE_F_EDNS : 0) | (q->do_bit ? CACHE_F_DO : 0) |
		   (q->flags & 0x0010 ? CACHE_F_CD : 0);
	/* The proxy answers other versions BADVERS before the cache; the key
	 * keeps them apart anyway (RFC 6891 6.1.3: answers differ by version). */
	k->edns_version = q->has_opt ? q->edns_version : 0;
}

int cache_new(size_t max_entries, size_t max_bytes, struct cache **ret)
{
	struct cache *c;
	size_t nb = 16;

	*ret = NULL;
	if (max_entries == 0 || max_bytes == 0)
		return -EINVAL;
	if (max_entries > CACHE_MAX_ENTRIES)
		max_entries = CACHE_MAX_ENTRIES;
	while (nb < max_entries)
		nb <<= 1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->buckets = calloc(nb, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return -ENOMEM;
	}
	c->n_buckets = nb;
	c->max_entries = max_entries;
	c->max_bytes = max_bytes;
	*ret = c;
	return 0;
}

static void list_unlink(struct cache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void list_push(struct cache *c, struct entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static void entry_remove(struct cache *c, struct entry *e)
{
	struct entry **pp = &c->buckets[e->hash & (c->n_buckets - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	list_unlink(c, e);
	c->count--;
	c->bytes -= entry_size(e);
	free(e);
}

static struct entry *entry_find(const struct cache *c, const uint8_t *key, size_t key_len,
				uint32_t h)
{
	for (struct entry *e = c->buckets[h & (c->n_buckets - 1)]; e; e = e->hnext)
		if (e->hash == h && e->key_len == key_len && !memcmp(e->data, key, key_len))
			return e;
	return NULL;
}

void cache_free(struct cache *c)
{
	if (!c)
		return;
	while (c->head) {
		struct entry *e = c->head;

		c->head = e->next;
		free(e);
	}
	free(c->buckets);
	free(c);
}

int cache_put(struct cache *c, const struct cache_key *k, const uint8_t *msg, size_t len,
	      uint32_t ttl_s, uint64_t now_ms)
{
	uint8_t key[KEY_MAX];
	size_t key_len = key_bytes(k, key);
	uint32_t h = hash_bytes(key, key_len);
	struct entry *e, *old;

	if (ttl_s == 0 || len < WIRE_HDR_LEN || len > WIRE_MSG_MAX ||
	    sizeof(*e) + key_len + len > c->max_bytes)
		return -EINVAL;
	e = malloc(sizeof(*e) + key_len + len);
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	e->hash = h;
	e->rx_ms = now_ms;
	e->ttl_s = ttl_s;
	e->key_len = key_len;
	e->msg_len = len;
	memcpy(e->data, key, key_len);
	memcpy(e->data + key_len, msg, len);

	old = entry_find(c, key, key_len, h);
	if (old)
		entry_remove(c, old);
	/* Make room: least recently used first. */
	while (c->tail && (c->count + 1 > c->max_entries ||
			   c->bytes + entry_size(e) > c->max_bytes))
		entry_remove(c, c->tail);
	e->hnext = c->buckets[h & (c->n_buckets - 1)];
	c->buckets[h & (c->n_buckets - 1)] = e;
	list_push(c, e);
	c->count++;
	c->bytes += entry_size(e);
	return 0;
}

/* Age in whole seconds, rounded up: never hand out a TTL past expiry. */
static uint64_t entry_age_s(const struct entry *e, uint64_t now_ms)
{
	if (now_ms <= e->rx_ms)
		return 0;
	return (now_ms - e->rx_ms + 999) / 1000;
}

int cache_get(struct cache *c, const struct cache_key *k, uint64_t now_ms, uint8_t *out,
	      size_t max)
{
	uint8_t key[KEY_MAX];
	size_t key_len = key_bytes(k, key);
	struct entry *e = entry_find(c, key, key_len, hash_bytes(key, key_len));
	uint64_t age;

	if (!e)
		return -ENOENT;
	age = entry_age_s(e, now_ms);
	if (age >= e->ttl_s) {
		entry_remove(c, e);
		return -ENOENT;
	}
	if (e->msg_len > max)
		return -ENOBUFS;
	/*
	 * Aged in place, once per second of age rather than once per hit
	 * (lowering by a then by b is lowering by a + b: TTLs stop at 0).
	 * Stored messages were parsed before they were stored; a failure
	 * here means memory went bad: drop the entry rather than serve it.
	 */
	if (age > e->aged_s) {
		if (wire_age_ttls(e->data + e->key_len, e->msg_len, (uint32_t)(age - e->aged_s)) < 0) {
			entry_remove(c, e);
			return -ENOENT;
		}
		e->aged_s = (uint32_t)age;
	}
	memcpy(out, e->data + e->key_len, e->msg_len);
	list_unlink(c, e);
	list_push(c, e);
	return (int)e->msg_len;
}

size_t cache_expire(struct cache *c, uint64_t now_ms)
{
	size_t n = 0;

	for (struct entry *e = c->head, *next; e; e = next) {
		next = e->next;
		if (entry_age_s(e, now_ms) >= e->ttl_s) {
			entry_remove(c, e);
			n++;
		}
	}
	return n;
}

size_t cache_count(const struct cache *c)
{
	return c->count;
}

size_t cache_bytes(const struct cache *c)
{
	return c->bytes;
}
