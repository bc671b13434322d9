/*
 * cache - the proxy's answer cache.  Pure (memory only, no I/O, no
 * logging; the clock is the caller's).  Stores upstream responses exactly
 * as they were delivered, keyed by question and the query bits that change
 * the answer, bounded in entries and bytes, LRU eviction.
 *
 * Not here: any decision.  A hit is only bytes: the proxy sends it through
 * the same policy check and pin path as a fresh answer (decide first, pin
 * with the TTL actually handed out, send after the kernel's ack), so one
 * cache is shared by every sandbox.
 */
#ifndef NETD_DNSPROXY_CACHE_H
#define NETD_DNSPROXY_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "dnsproxy/wire.h"

#define CACHE_F_EDNS 0x01	/* the query carried an OPT RR (RFC 6891 7) */
#define CACHE_F_DO   0x02	/* ... with DO set (RFC 3225) */
#define CACHE_F_CD   0x04	/* CD set in the header (RFC 4035 3.2.2) */

#define CACHE_DEFAULT_ENTRIES 10000
#define CACHE_MAX_ENTRIES     1000000
#define CACHE_BYTES_PER_ENTRY 1024	/* byte bound = entries * this */
#define CACHE_NEG_MAX_S       300	/* negative answers live at most this long */

struct cache;

/* The lookup key: the question (qname lower-case presentation form, as
 * wire_parse_query() gives it) and CACHE_F_* bits.  Borrowed. */
struct cache_key {
	const char *qname;
	uint16_t qtype, qclass;
	uint8_t flags;
	uint8_t edns_version;	/* the OPT's version (RFC 6891 6.1.3), 0 without */
};

/* cache_key_from_query() - the key of @q (borrows q->qname). */
void cache_key_from_query(const struct wire_query *q, struct cache_key *k);

/*
 * cache_new() - an empty cache of at most @max_entries entries and
 * @max_bytes bytes (entries, keys and messages).  Caller frees with
 * cache_free().  Return: 0; -EINVAL (a zero bound); -ENOMEM.
 */
int cache_new(size_t max_entries, size_t max_bytes, struct cache **ret);

/* cache_free() - NULL-safe. */
void cache_free(struct cache *c);

/*
 * cache_put() - store a copy of @msg/@len (a complete response) under @k,
 * received at @now_ms, servable for @ttl_s seconds; replaces an entry
 * with the same key; evicts least recently used entries to stay within
 * the bounds.  Return: 0; -EINVAL (@ttl_s 0, or @len bigger than a
 * message or than the byte bound); -ENOMEM.
 */
int cache_put(struct cache *c, const struct cache_key *k, const uint8_t *msg, size_t len,
	      uint32_t ttl_s, uint64_t now_ms);

/*
 * cache_get() - the response stored under @k as it must be handed out at
 * @now_ms: copied to @out (room for @max) with every TTL lowered by its
 * age in seconds, rounded up, so nothing is served past its expiry; an
 * entry whose age reached its TTL is dropped.  The ID and question are
 * the first client's: the caller puts the new client's back.
 * Return: bytes in @out; -ENOENT (no live entry); -ENOBUFS (@max).
 */
int cache_get(struct cache *c, const struct cache_key *k, uint64_t now_ms, uint8_t *out,
	      size_t max);

/* cache_expire() - drop entries expired at @now_ms.  Return: dropped. */
size_t cache_expire(struct cache *c, uint64_t now_ms);

/* cache_count(), cache_bytes() - entries and bytes held. */
size_t cache_count(const struct cache *c);
size_t cache_bytes(const struct cache *c);

#endif
