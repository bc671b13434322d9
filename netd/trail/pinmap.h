/*
 * pinmap - which name each pinned address was pinned for, per sandbox slot:
 * the "domain" of conn and deny records.  The last name that pinned an
 * address wins.  Bounded: a fixed number of entries, set-associative;
 * when a bucket is full its oldest entry is replaced.  Pure, no I/O.
 */
#ifndef NETD_PINMAP_H
#define NETD_PINMAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"

#define PINMAP_NAME_MAX 253	/* presentation form, bytes, without NUL (RFC 1035 3.1) */

struct pinmap;

/*
 * pinmap_new() - an empty map of about @entries entries (rounded up to a
 * power of two, at least 64).  Caller frees with pinmap_free().
 * Return: 0; -ENOMEM.
 */
int pinmap_new(size_t entries, struct pinmap **ret);

/* pinmap_free() - NULL-safe. */
void pinmap_free(struct pinmap *m);

/*
 * pinmap_set() - remember that @addr was pinned for @name in sandbox @slot
 * (a longer name is truncated).  @name is copied.
 */
void pinmap_set(struct pinmap *m, uint32_t slot, const struct addr *addr, const char *name);

/* pinmap_get() - the name, borrowed until the next pinmap_set(); or NULL. */
const char *pinmap_get(const struct pinmap *m, uint32_t slot, const struct addr *addr);

/* pinmap_forget() - drop every entry of @slot (the sandbox is gone). */
void pinmap_forget(struct pinmap *m, uint32_t slot);

#endif
