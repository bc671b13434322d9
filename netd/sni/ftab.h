/*
 * ftab - the flow table both SNI checks keep (flow.c for TCP, qflow.c for
 * QUIC): entries keyed by their addresses and ports, each owner's share of
 * the entries under check, and the settled list from which a full table
 * takes room, oldest first.  Internal to netd/sni/; pure (memory only).
 *
 * An entry (struct fentry) is embedded in the caller's flow, which the
 * caller allocates; the table frees it only through free_entry (given to
 * ftab_init()), when it is unlinked, made room for, swept or the table
 * finished.  Times are caller-supplied monotonic milliseconds.
 *
 * Not keyed: a sandbox choosing its ports can lengthen one chain, never
 * beyond the table's max entries in all.
 */
#ifndef NETD_SNI_FTAB_H
#define NETD_SNI_FTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/addr.h"
#include "netd/sni/lru.h"

/* A flow's key: as the sandbox sent it (ports in host byte order). */
struct ftuple {
	struct addr src, dst;
	uint16_t sport, dport;
};

/* The table's part of a flow (embed it; ftab_entry() gets the flow back). */
struct fentry {
	struct fentry *next;	/* bucket chain */
	struct lru_node lru;	/* settled entries, oldest first */
	struct ftuple key;
	uint32_t owner;		/* whose share it counts in while open; UINT32_MAX: nobody's */
	bool open;		/* under check: in its owner's share, not on the settled list */
	uint64_t start_ms;	/* its start, or when it was settled: what the sweep ages */
};

/* ftab_entry() - the flow of type @type whose struct fentry member @member is @e. */
#define ftab_entry(e, type, member) ((type *)((char *)(e) - offsetof(type, member)))

struct ftab {
	struct fentry **b;	/* n_buckets chains */
	uint32_t n_buckets;	/* a power of two */
	size_t max;		/* entries held at most, open and settled */
	uint16_t open_max;	/* open entries one owner may hold */
	uint16_t *open;		/* [owner]: its open entries */
	uint32_t n_owners;
	struct lru lru;		/* settled entries, oldest first */
	size_t n;
	void (*free_entry)(struct fentry *e);	/* frees the flow around @e */
};

/*
 * ftab_init() - an empty table of @n_buckets chains (a power of two)
 * holding at most @max entries, @open_max open ones per owner, for owners
 * 0..@n_owners-1 (an owner beyond has no share and no bound).
 * @free_entry frees a flow the table lets go.  Return: 0; -ENOMEM.
 */
int ftab_init(struct ftab *t, uint32_t n_buckets, size_t max, uint16_t open_max,
	      uint32_t n_owners, void (*free_entry)(struct fentry *e));

/* ftab_fini() - free every entry (through free_entry) and the table's arrays. */
void ftab_fini(struct ftab *t);

/*
 * ftab_find() - the slot of the entry keyed @k: *slot is the entry, or
 * NULL (then it is where ftab_link() puts one).  A slot is valid until
 * the table changes.
 */
struct fentry **ftab_find(struct ftab *t, const struct ftuple *k);

/*
 * ftab_link() - put @e (key, owner and start set) in the table at @slot
 * (from ftab_find() of its key, with no table change since), settled: on
 * the settled list, in no share.  The caller made room (ftab_make_room()).
 */
void ftab_link(struct ftab *t, struct fentry **slot, struct fentry *e);

/*
 * ftab_set_open() - move @e into its owner's share (@open) or onto the
 * settled list, newest (!@open).  The same state again is a no-op.
 */
void ftab_set_open(struct ftab *t, struct fentry *e, bool open);

/* ftab_unlink() - take the entry at @slot out of the table and free it (free_entry). */
void ftab_unlink(struct ftab *t, struct fentry **slot);

/* ftab_share_full() - does @owner hold its open_max open entries? */
bool ftab_share_full(const struct ftab *t, uint32_t owner);

/*
 * ftab_make_room() - room for one more entry: the oldest settled one is
 * forgotten if the table holds max.  Slots found before are stale after.
 * Return: false when the table is full of open entries.
 */
bool ftab_make_room(struct ftab *t);

/* ftab_full() - is the table full of open entries (ftab_make_room() would fail)? */
bool ftab_full(const struct ftab *t);

/*
 * ftab_sweep() - forget every entry with @now_ms >= start_ms + keep_ms(e,
 * @ctx).  Return: how many.
 */
size_t ftab_sweep(struct ftab *t, uint64_t now_ms,
		  uint64_t (*keep_ms)(const struct fentry *e, const void *ctx), const void *ctx);

/* ftab_open_count() - @owner's open entries (0 for an owner beyond the table's). */
size_t ftab_open_count(const struct ftab *t, uint32_t owner);

#endif
