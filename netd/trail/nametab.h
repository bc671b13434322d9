/*
 * nametab - the names live connections were opened under, each kept once
 * with a reference count: a flow's entry (flowtab.h) holds a small id, not
 * the string, so the `conn` record written at the close names what the
 * connection was opened for, not what pinned its address since.  Bounded:
 * at most the capacity given at creation; a full table hands out no id
 * (the caller then names the flow at its close, as before).  Pure: memory
 * only, no I/O, no logging.
 */
#ifndef NETD_NAMETAB_H
#define NETD_NAMETAB_H

#include <stddef.h>
#include <stdint.h>

#define NAMETAB_NAME_MAX 255	/* bytes of a name, without the NUL (a qname or a CIDR) */

struct nametab;

/*
 * nametab_new() - an empty table of at most @cap names (1..2^24).
 * @ret: caller frees with nametab_free().  Return: 0; -EINVAL; -ENOMEM.
 */
int nametab_new(size_t cap, struct nametab **ret);

/* nametab_free() - NULL-safe; every id is invalid afterwards. */
void nametab_free(struct nametab *t);

/*
 * nametab_get() - the id of @name (copied, at most NAMETAB_NAME_MAX bytes),
 * with one more reference; the caller gives it back with nametab_put().
 * Return: an id > 0; 0 for NULL, a longer name, a full table or no memory.
 */
uint32_t nametab_get(struct nametab *t, const char *name);

/* nametab_str() - the name of @id; borrowed until its last nametab_put(); NULL for 0. */
const char *nametab_str(const struct nametab *t, uint32_t id);

/* nametab_put() - one reference less; the last one frees the name.  0 is ignored. */
void nametab_put(struct nametab *t, uint32_t id);

/* nametab_count() - names held. */
size_t nametab_count(const struct nametab *t);

#endif
