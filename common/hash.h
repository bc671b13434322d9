/*
 * hash.h - FNV-1a (Fowler/Noll/Vo, draft-eastlake-fnv), 32 and 64 bit.
 *
 * The one hash netd uses for its in-memory tables and derived names.  Not
 * keyed: callers that hash what a sandbox chooses bound their chains (or
 * salt the input) themselves.  Pure, header-only.
 */
#ifndef NETD_COMMON_HASH_H
#define NETD_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FNV32_INIT 2166136261u
#define FNV64_INIT 14695981039346656037ull

/* fnv32_add() - fold @len bytes of @p into the running hash @h; return it. */
static inline uint32_t fnv32_add(uint32_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* fnv32_str() - fold the NUL-terminated @s (not its NUL) into @h. */
static inline uint32_t fnv32_str(uint32_t h, const char *s)
{
	return fnv32_add(h, s, strlen(s));
}

/* fnv64_add() - fold @len bytes of @p into the running hash @h; return it. */
static inline uint64_t fnv64_add(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* fnv64_str() - fold the NUL-terminated @s (not its NUL) into @h. */
static inline uint64_t fnv64_str(uint64_t h, const char *s)
{
	return fnv64_add(h, s, strlen(s));
}

#endif
