/*
 * flowtab - open addressing with linear probing and backward-shift
 * deletion (no tombstones), so a table that churns forever never fills
 * with dead slots.  See flowtab.h for what an entry means.
 */
#include "netd/trail/flowtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

struct fkey {
	uint32_t id;
	uint16_t sport, dport;
	uint8_t proto, family;
	uint8_t src[16], dst[16];
};

struct fent {
	bool used, recorded;
	bool opened;			/* flowtab_open() saw its start */
	uint32_t name;			/* what it was opened under (nametab.h id); 0: none */
	struct fkey k;
	struct flow_ctr counted;	/* folded into the metrics */
	struct flow_ctr rec;		/* what the close's record reported (recorded) */
	struct flow_ctr exported;	/* what interim IPFIX records reported */
	uint64_t exported_ns;		/* when the last one was; 0: none */
};

struct flowtab {
	struct fent *e;
	size_t mask, n;
};

struct flow_ctr flowtab_ctr(const struct ct_flow *f)
{
	return (struct flow_ctr){ .bytes_out = f->bytes_out, .bytes_in = f->bytes_in,
				  .packets_out = f->packets_out, .packets_in = f->packets_in };
}

bool flowtab_ctr_zero(const struct flow_ctr *c)
{
	return !c->bytes_out && !c->bytes_in && !c->packets_out && !c->packets_in;
}

/* @a - @b per counter; 0 where @a is smaller (counters never shrink, ids may collide). */
static struct flow_ctr sub(const struct flow_ctr *a, const struct flow_ctr *b)
{
#define SUB(x) (a->x > b->x ? a->x - b->x : 0)
	return (struct flow_ctr){ SUB(bytes_out), SUB(bytes_in), SUB(packets_out),
				  SUB(packets_in) };
#undef SUB
}

/* Counted is never behind: keep the larger of each. */
static void raise_to(struct flow_ctr *c, const struct flow_ctr *v)
{
	struct flow_ctr d = sub(v, c);

	c->bytes_out += d.bytes_out;
	c->bytes_in += d.bytes_in;
	c->packets_out += d.packets_out;
	c->packets_in += d.packets_in;
}

static struct fkey key_of(const struct ct_flow *f)
{
	struct fkey k;

	memset(&k, 0, sizeof(k));	/* padding too: keys are compared with memcmp */
	k.id = f->id;
	k.sport = f->sport;
	k.dport = f->dport;
	k.proto = f->proto;
	k.family = (uint8_t)f->src.family;
	memcpy(k.src, f->src.a, sizeof(k.src));
	memcpy(k.dst, f->dst.a, sizeof(k.dst));
	return k;
}

static size_t home(const struct flowtab *t, const struct fkey *k)
{
	return (size_t)fnv64_add(FNV64_INIT, k, sizeof(*k)) & t->mask;
}

/* The entry for @k, or NULL; *@slot: where it is or would go. */
static struct fent *find(struct flowtab *t, const struct fkey *k, size_t *slot)
{
	size_t i = home(t, k);

	for (;; i = (i + 1) & t->mask) {
		struct fent *e = &t->e[i];

		if (!e->used) {
			*slot = i;
			return NULL;
		}
		if (memcmp(&e->k, k, sizeof(*k)) == 0) {
			*slot = i;
			return e;
		}
	}
}

/* A new entry at @slot if the table holds fewer than @limit. */
static struct fent *add(struct flowtab *t, const struct fkey *k, size_t slot, size_t limit)
{
	struct fent *e = &t->e[slot];

	if (t->n >= limit)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->k = *k;
	t->n++;
	return e;
}

/* Remove @slot, shifting back the entries of its cluster that may move. */
static void del(struct flowtab *t, size_t slot)
{
	size_t i = slot, j = slot;

	t->e[i].used = false;
	t->n--;
	for (;;) {
		size_t h;

		j = (j + 1) & t->mask;
		if (!t->e[j].used)
			return;
		h = home(t, &t->e[j].k);
		/* Entry j may fill hole i unless its home lies cyclically in (i, j]. */
		if ((i <= j) ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		t->e[i] = t->e[j];
		t->e[j].used = false;
		i = j;
	}
}

int flowtab_new(size_t cap, struct flowtab **ret)
{
	struct flowtab *t;
	size_t n = 16;

	if (cap == 0 || cap > (1u << 24))
		return -EINVAL;
	while (n < cap)
		n <<= 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->e = calloc(n, sizeof(*t->e));
	if (!t->e) {
		free(t);
		return -ENOMEM;
	}
	t->mask = n - 1;
	*ret = t;
	return 0;
}

void flowtab_free(struct flowtab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}

/*
 * @f's entry (added if new, while the table holds fewer than @limit): into
 * @fold what @f's counters hold beyond what the entry has counted, which
 * the entry then counts.  Return: the entry; NULL if @f is new and the
 * table is at @limit (@fold zeroed).
 */
static struct fent *fold_in(struct flowtab *t, const struct ct_flow *f, struct flow_ctr *fold,
			    size_t limit)
{
	struct fkey k = key_of(f);
	struct flow_ctr c = flowtab_ctr(f);
	size_t slot;
	struct fent *e = find(t, &k, &slot);

	memset(fold, 0, sizeof(*fold));
	if (!e && !(e = add(t, &k, slot, limit)))
		return NULL;
	*fold = sub(&c, &e->counted);
	raise_to(&e->counted, &c);
	return e;
}

int flowtab_live(struct flowtab *t, const struct ct_flow *f, struct flow_ctr *fold)
{
	/* Live adds stop at 3/4: the rest is for closes, and probes stay short. */
	struct fent *e = fold_in(t, f, fold, (t->mask + 1) / 4 * 3);

	if (!e)
		return 0;
	return e->recorded ? 2 : 1;
}

int flowtab_open(struct flowtab *t, const struct ct_flow *f, uint32_t name)
{
	struct fkey k = key_of(f);
	size_t slot;
	struct fent *e = find(t, &k, &slot);

	if (e)
		return 0;	/* seen already (a second NEW for one entry): keep the first */
	/* Opens stop at 3/4, as live adds do: the rest is for closes. */
	e = add(t, &k, slot, (t->mask + 1) / 4 * 3);
	if (!e)
		return -ENOSPC;
	e->opened = true;
	e->name = name;
	return 1;
}

bool flowtab_name(struct flowtab *t, const struct ct_flow *f, uint32_t *name)
{
	struct fkey k = key_of(f);
	size_t slot;
	const struct fent *e = find(t, &k, &slot);

	*name = e ? e->name : 0;
	return e && e->opened;
}

int flowtab_close(struct flowtab *t, const struct ct_flow *f, struct flow_ctr *fold)
{
	/* One slot always stays free: probing ends at an unused slot. */
	struct fent *e = fold_in(t, f, fold, t->mask);

	if (!e)
		return -ENOSPC;
	if (e->recorded)
		return 0;
	e->recorded = true;
	e->rec = flowtab_ctr(f);
	return 1;
}

bool flowtab_end(struct flowtab *t, const struct ct_flow *f, struct flow_ctr *fold,
		 struct flow_ctr *late)
{
	struct fkey k = key_of(f);
	struct flow_ctr c = flowtab_ctr(f);
	size_t slot;
	struct fent *e = find(t, &k, &slot);
	bool recorded;

	memset(late, 0, sizeof(*late));
	if (!e) {
		*fold = c;
		return false;
	}
	*fold = sub(&c, &e->counted);
	recorded = e->recorded;
	if (recorded)
		*late = sub(&c, &e->rec);
	del(t, slot);
	return recorded;
}

size_t flowtab_count(const struct flowtab *t)
{
	return t ? t->n : 0;
}

bool flowtab_interim(struct flowtab *t, const struct ct_flow *f, uint64_t now_ns,
		     uint64_t interval_ns, struct flow_ctr *delta, uint64_t *since_ns)
{
	struct fkey k = key_of(f);
	struct flow_ctr now = flowtab_ctr(f);
	struct fent *e;
	uint64_t since;
	size_t slot;

	e = find(t, &k, &slot);
	if (!e || e->recorded || !interval_ns)
		return false;
	since = e->exported_ns ? e->exported_ns : f->start_ns;
	if (!since || now_ns < since || now_ns - since < interval_ns)
		return false;
	*delta = sub(&now, &e->exported);
	*since_ns = since;
	raise_to(&e->exported, &now);
	e->exported_ns = now_ns;
	return true;
}

struct flow_ctr flowtab_exported(struct flowtab *t, const struct ct_flow *f, uint64_t *since_ns)
{
	struct fkey k = key_of(f);
	struct fent *e;
	size_t slot;

	e = find(t, &k, &slot);
	*since_ns = e ? e->exported_ns : 0;
	return e ? e->exported : (struct flow_ctr){ 0 };
}

struct flow_ctr flowtab_ctr_sub(const struct flow_ctr *a, const struct flow_ctr *b)
{
	return sub(a, b);
}
