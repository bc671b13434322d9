/*
 * pinreg - the pin registry (see pinreg.h).  A chained hash table with a
 * fixed bucket array, hashed by (sandbox, address): every (protocol, port,
 * gateway flag) of an address and the address's last name share one probe.  Sandboxes
 * are interned (a small hash by name): an entry points at its sandbox and
 * sits on that sandbox's list.  Lapsed entries are swept a few buckets per
 * note, so memory follows the live pins.
 *
 * The hot path, one DNS answer of n pins: fw_pin() gives the ones the
 * kernel lacks (one probe each) and the answer's note names all n; the
 * note finds what the give just touched through a memo of its entries
 * (a key compare, no hash), so each pin costs one probe.
 */
#include "netd/model/pinreg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "netd/model/sandbox.h"

#define PINREG_BUCKETS    (1u << 18)	/* entries: about 4 a bucket when full */
#define PINREG_SB_BUCKETS 4096		/* sandbox name -> its record */
#define PINREG_SWEEP      8		/* buckets swept per note */
#define PINREG_MATCH      64		/* matching rules looked at per name */
#define PINREG_MEMO       64		/* entries of the last give remembered */
#define PINREG_FULL_EVERY_MS 1000	/* a whole sweep when full at most this often */
#define PINREG_REPEAT     16		/* pins of a note that a repeat can match */

struct ent;

/* One sandbox: its entries. */
struct sbx {
	struct sbx *next;	/* name hash chain */
	struct ent *first;
	size_t n, n_given;
	uint32_t h;		/* its name's hash: the seed of its entries' */
	char name[SANDBOX_NAME_MAX + 1];
};

struct ent {
	struct ent *next;			/* bucket chain */
	struct ent *sb_next, **sb_pprev;	/* its sandbox's list */
	struct sbx *sb;
	struct addr addr;
	uint8_t proto;		/* 0: an address named without a pin (port 0) */
	uint16_t port;
	bool gateway;		/* a gateway pin (gw4/6), not a plain one (pin4/6) */
	bool given;		/* fw gave it to the kernel */
	uint8_t n_names, oldest, last;	/* ring of names; @last: the one noted last */
	uint64_t given_ms;	/* fw's: when the kernel's element lapses (the latest give) */
	uint64_t named_ms;	/* the answers': until when its names hold it */
	uint64_t stamp;		/* the note that named it last (0: none) */
	uint64_t gen;		/* the give that gave it last */
	char *names[PINREG_NAMES_MAX];
};

struct pinreg {
	struct ent **b;		/* PINREG_BUCKETS */
	struct sbx **sb;	/* PINREG_SB_BUCKETS */
	size_t n, n_given;
	uint32_t sweep;
	uint64_t stamp, gen;
	uint64_t full_swept_ms;
	bool full_swept;
	struct sbx *busy;	/* the sandbox a call works on: not freed under it */
	/* The entries the last give touched, in order (pinreg_note() reuses them). */
	const struct sbx *memo_sb;
	struct ent *memo[PINREG_MEMO];
	size_t n_memo;
	/*
	 * The last note, for note_repeat(): the same note again in the same
	 * millisecond with nothing changed between (@epoch) would only restamp
	 * what it stamped last.  A hot name is answered many times a millisecond.
	 */
	uint64_t epoch;		/* bumped by every call that may change an entry */
	struct {
		uint64_t epoch, ms;	/* r->epoch after it (0: none), its now_ms */
		size_t n;
		struct pin pins[PINREG_REPEAT];
		char sandbox[SANDBOX_NAME_MAX + 1];
		char qname[PINREG_QNAME_MAX + 1];
	} last;
};

static uint32_t bucket_of(const struct sbx *s, const struct addr *a)
{
	uint32_t h = fnv32_add(s->h, &a->family, sizeof(a->family));

	return fnv32_add(h, a->a, addr_len(a->family)) & (PINREG_BUCKETS - 1);
}

static struct sbx **sbx_slot(const struct pinreg *r, const char *name, uint32_t h)
{
	struct sbx **pp = &r->sb[h & (PINREG_SB_BUCKETS - 1)];

	while (*pp && strcmp((*pp)->name, name) != 0)
		pp = &(*pp)->next;
	return pp;
}

static bool name_ok(const char *sandbox)
{
	return sandbox && strlen(sandbox) <= SANDBOX_NAME_MAX;
}

static struct sbx *sbx_find(const struct pinreg *r, const char *sandbox)
{
	if (!r || !name_ok(sandbox))
		return NULL;
	return *sbx_slot(r, sandbox, fnv32_str(FNV32_INIT, sandbox));
}

/* @sandbox's record, made if new; NULL on out of memory. */
static struct sbx *sbx_get(struct pinreg *r, const char *sandbox)
{
	uint32_t h = fnv32_str(FNV32_INIT, sandbox);
	struct sbx **pp = sbx_slot(r, sandbox, h), *s = *pp;

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->h = h;
	snprintf(s->name, sizeof(s->name), "%s", sandbox);
	*pp = s;
	return s;
}

/* Free @s if it holds nothing (and no call is working on it). */
static void sbx_release(struct pinreg *r, struct sbx *s)
{
	struct sbx **pp;

	if (!s || s->n || s == r->busy)
		return;
	pp = sbx_slot(r, s->name, s->h);
	*pp = s->next;
	free(s);
}

static void names_clear(struct ent *e)
{
	for (unsigned int i = 0; i < e->n_names; i++)
		free(e->names[i]);
	e->n_names = e->oldest = e->last = 0;
	e->stamp = 0;
}

/* Unlink @e (found at *@pp in its bucket) and free it. */
static void ent_drop(struct pinreg *r, struct ent **pp)
{
	struct ent *e = *pp;
	struct sbx *s = e->sb;

	*pp = e->next;
	*e->sb_pprev = e->sb_next;
	if (e->sb_next)
		e->sb_next->sb_pprev = e->sb_pprev;
	s->n--;
	r->n--;
	if (e->given) {
		s->n_given--;
		r->n_given--;
	}
	names_clear(e);
	free(e);
	r->n_memo = 0;	/* it may have been one of them */
	sbx_release(r, s);
}

/* Where @e is in its bucket. */
static struct ent **ent_pp(struct pinreg *r, const struct ent *e)
{
	struct ent **pp = &r->b[bucket_of(e->sb, &e->addr)];

	while (*pp != e)
		pp = &(*pp)->next;
	return pp;
}

static void ent_ungive(struct pinreg *r, struct ent *e)
{
	if (!e->given)
		return;
	e->given = false;
	e->sb->n_given--;
	r->n_given--;
}

/* Drop the entries of bucket @i lapsed for the slack at @now_ms.  Return: how many. */
static size_t bucket_sweep(struct pinreg *r, uint32_t i, uint64_t now_ms)
{
	size_t n = 0;

	for (struct ent **pp = &r->b[i]; *pp;) {
		const struct ent *e = *pp;

		if ((e->given_ms > e->named_ms ? e->given_ms : e->named_ms) + PINREG_SLACK_MS <
		    now_ms) {
			ent_drop(r, pp);
			n++;
		} else {
			pp = &(*pp)->next;
		}
	}
	return n;
}

size_t pinreg_sweep(struct pinreg *r, uint64_t now_ms)
{
	size_t n = 0;

	if (r)
		r->epoch++;
	for (uint32_t i = 0; r && i < PINREG_BUCKETS; i++)
		n += bucket_sweep(r, i, now_ms);
	return n;
}

static struct ent *find(const struct pinreg *r, uint32_t b, const struct sbx *s,
			const struct addr *a, uint8_t proto, uint16_t port, bool gateway)
{
	for (struct ent *e = r->b[b]; e; e = e->next)
		if (e->sb == s && e->proto == proto && e->port == port && e->gateway == gateway &&
		    addr_equal(&e->addr, a))
			return e;
	return NULL;
}

/*
 * The entry of (@s, @p's address, protocol, port and gateway flag), made if
 * new.  Full: one whole sweep (at most every PINREG_FULL_EVERY_MS), then
 * -ENOSPC.  Return: 0 (*@ret set); -ENOSPC; -ENOMEM.
 */
static int ent_get(struct pinreg *r, struct sbx *s, const struct pin *p, uint64_t now_ms,
		   struct ent **ret)
{
	const struct addr *a = &p->addr;
	uint32_t b = bucket_of(s, a);
	struct ent *e = find(r, b, s, a, p->proto, p->port, p->gateway);

	if (e) {
		*ret = e;
		return 0;
	}
	if (r->n >= PINREG_MAX &&
	    (!r->full_swept || now_ms >= r->full_swept_ms + PINREG_FULL_EVERY_MS)) {
		r->full_swept = true;
		r->full_swept_ms = now_ms;
		pinreg_sweep(r, now_ms);
	}
	if (r->n >= PINREG_MAX)
		return -ENOSPC;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->sb = s;
	e->addr = *a;
	e->proto = p->proto;
	e->port = p->port;
	e->gateway = p->gateway;
	e->next = r->b[b];
	r->b[b] = e;
	e->sb_next = s->first;
	if (s->first)
		s->first->sb_pprev = &e->sb_next;
	e->sb_pprev = &s->first;
	s->first = e;
	s->n++;
	r->n++;
	*ret = e;
	return 0;
}

/*
 * An answer pinned @e again at @now_ms until @expires_ms: if its names had
 * lapsed they no longer hold it (they go); never shortened.  fw's gives
 * leave names alone (an idle grace re-pin keeps the address's last name).
 */
static void ent_extend(struct ent *e, uint64_t now_ms, uint64_t expires_ms)
{
	if (e->named_ms <= now_ms && e->n_names)
		names_clear(e);
	if (expires_ms > e->named_ms)
		e->named_ms = expires_ms;
}

/* @qname pinned or named @e now (note @stamp).  Return: 0; -ENOMEM (its names unchanged). */
static int ent_name(struct ent *e, const char *qname, uint64_t stamp)
{
	unsigned int slot;
	char *dup;

	for (unsigned int j = 0; j < e->n_names; j++)
		if (strcmp(e->names[j], qname) == 0) {
			e->last = (uint8_t)j;
			e->stamp = stamp;
			return 0;
		}
	dup = strdup(qname);
	if (!dup)
		return -ENOMEM;
	if (e->n_names < PINREG_NAMES_MAX) {
		slot = e->n_names++;
	} else {
		slot = e->oldest;
		free(e->names[slot]);
		e->oldest = (uint8_t)((e->oldest + 1) % PINREG_NAMES_MAX);
	}
	e->names[slot] = dup;
	e->last = (uint8_t)slot;
	e->stamp = stamp;
	return 0;
}

int pinreg_new(struct pinreg **ret)
{
	struct pinreg *r = calloc(1, sizeof(*r));

	*ret = NULL;
	if (!r)
		return -ENOMEM;
	r->b = calloc(PINREG_BUCKETS, sizeof(*r->b));
	r->sb = calloc(PINREG_SB_BUCKETS, sizeof(*r->sb));
	if (!r->b || !r->sb) {
		free(r->b);
		free(r->sb);
		free(r);
		return -ENOMEM;
	}
	*ret = r;
	return 0;
}

void pinreg_free(struct pinreg *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < PINREG_BUCKETS; i++)
		for (struct ent *e = r->b[i], *nx; e; e = nx) {
			nx = e->next;
			names_clear(e);
			free(e);
		}
	for (uint32_t i = 0; i < PINREG_SB_BUCKETS; i++)
		for (struct sbx *s = r->sb[i], *nx; s; s = nx) {
			nx = s->next;
			free(s);
		}
	free(r->b);
	free(r->sb);
	free(r);
}

/* ---- fw's part ------------------------------------------------------------ */

int pinreg_give(struct pinreg *r, const char *sandbox, const struct pin *pins, size_t n,
		uint64_t now_ms, uint64_t *ret_gen)
{
	struct sbx *s;
	int err = 0;

	if (!r || !name_ok(sandbox) || (n && !pins))
		return -EINVAL;
	s = sbx_get(r, sandbox);
	if (!s)
		return -ENOMEM;
	r->epoch++;
	r->busy = s;
	r->gen++;
	r->memo_sb = s;
	r->n_memo = 0;
	for (size_t i = 0; i < n && !err; i++) {
		struct ent *e;

		err = ent_get(r, s, &pins[i], now_ms, &e);
		if (err)
			break;
		if (now_ms + pins[i].timeout_ms > e->given_ms)
			e->given_ms = now_ms + pins[i].timeout_ms;
		if (!e->given) {
			e->given = true;
			s->n_given++;
			r->n_given++;
		}
		e->gen = r->gen;
		if (r->n_memo < PINREG_MEMO)
			r->memo[r->n_memo++] = e;
	}
	if (ret_gen)
		*ret_gen = r->gen;
	r->busy = NULL;
	sbx_release(r, s);
	return err;
}

/* @fn(@r, e, @arg) for each entry e of @sandbox (it may drop e); the empty sandbox goes after. */
static void each_of(struct pinreg *r, const char *sandbox,
		    void (*fn)(struct pinreg *, struct ent *, uint64_t), uint64_t arg)
{
	struct sbx *s = sbx_find(r, sandbox);

	if (!s)
		return;
	r->epoch++;
	r->busy = s;
	for (struct ent *e = s->first, *nx; e; e = nx) {
		nx = e->sb_next;
		fn(r, e, arg);
	}
	r->busy = NULL;
	sbx_release(r, s);
}

/* Not given unless give call @gen gave it; dropped if that leaves it nothing. */
static void retain_one(struct pinreg *r, struct ent *e, uint64_t gen)
{
	if (!e->given || (gen && e->gen == gen))
		return;
	ent_ungive(r, e);
	if (!e->n_names)
		ent_drop(r, ent_pp(r, e));
}

void pinreg_retain(struct pinreg *r, const char *sandbox, uint64_t gen)
{
	each_of(r, sandbox, retain_one, gen);
}

size_t pinreg_given_count(const struct pinreg *r, const char *sandbox)
{
	const struct sbx *s = sbx_find(r, sandbox);

	return s ? s->n_given : 0;
}

size_t pinreg_given_total(const struct pinreg *r)
{
	return r ? r->n_given : 0;
}

size_t pinreg_given_live(const struct pinreg *r, const char *sandbox, const struct pin *pins,
			 size_t n, uint64_t now_ms)
{
	const struct sbx *s = sbx_find(r, sandbox);
	size_t live = 0;

	for (const struct ent *e = s ? s->first : NULL; e; e = e->sb_next)
		live += e->given && e->given_ms > now_ms;
	for (size_t i = 0; i < n; i++) {
		const struct ent *e = s ? find(r, bucket_of(s, &pins[i].addr), s, &pins[i].addr,
					       pins[i].proto, pins[i].port, pins[i].gateway) : NULL;

		if (!e || !e->given || e->given_ms <= now_ms)
			live++;
	}
	return live;
}

size_t pinreg_given_each(const struct pinreg *r, const char *sandbox, pinreg_pin_fn *fn,
			 void *arg)
{
	const struct sbx *s = sbx_find(r, sandbox);
	size_t k = 0;

	for (const struct ent *e = s ? s->first : NULL; e; e = e->sb_next)
		if (e->given) {
			const struct pin p = { .addr = e->addr, .proto = e->proto, .port = e->port,
					       .gateway = e->gateway };

			fn(arg, &p);
			k++;
		}
	return k;
}

/* ---- the daemon's part ---------------------------------------------------- */

static bool qname_ok(const char *qname)
{
	return qname && strlen(qname) <= PINREG_QNAME_MAX;
}

/* The memo's next entry if it is @p's, advancing *@j; NULL otherwise. */
static struct ent *memo_take(struct pinreg *r, const struct sbx *s, size_t *j, const struct pin *p)
{
	struct ent *e;

	if (r->memo_sb != s || *j >= r->n_memo)
		return NULL;
	e = r->memo[*j];
	if (e->proto != p->proto || e->port != p->port || e->gateway != p->gateway ||
	    !addr_equal(&e->addr, &p->addr))
		return NULL;
	(*j)++;
	return e;
}

/* A note's share of the sweep: the next PINREG_SWEEP buckets. */
static void note_sweep(struct pinreg *r, uint64_t now_ms)
{
	for (unsigned int k = 0; k < PINREG_SWEEP; k++)
		bucket_sweep(r, r->sweep++ & (PINREG_BUCKETS - 1), now_ms);
}

/* Do @p and @q pin the same, for as long? */
static bool pin_same(const struct pin *p, const struct pin *q)
{
	return p->proto == q->proto && p->port == q->port && p->gateway == q->gateway &&
	       p->timeout_ms == q->timeout_ms && addr_equal(&p->addr, &q->addr);
}

/*
 * Is this note the last one again, in its millisecond, with nothing changed
 * since?  Then it would find every entry it names already named by @qname,
 * stamped last and held past now (each expiry is now + a timeout that is
 * the same): nothing to do.
 */
static bool note_repeat(const struct pinreg *r, const char *sandbox, const char *qname,
			const struct pin *pins, size_t n, uint64_t now_ms)
{
	if (!pins || !r->last.epoch || r->last.epoch != r->epoch || r->last.ms != now_ms ||
	    r->last.n != n || strcmp(r->last.qname, qname) != 0 ||
	    strcmp(r->last.sandbox, sandbox) != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!pin_same(&r->last.pins[i], &pins[i]))
			return false;
	return true;
}

/* Remember a note that succeeded, for note_repeat(); any other forgets the last. */
static void note_keep(struct pinreg *r, const char *sandbox, const char *qname,
		      const struct pin *pins, size_t n, uint64_t now_ms, int err)
{
	r->epoch++;
	r->last.epoch = 0;
	if (err || !pins || n > PINREG_REPEAT)
		return;
	r->last.epoch = r->epoch;
	r->last.ms = now_ms;
	r->last.n = n;
	memcpy(r->last.pins, pins, n * sizeof(*pins));
	/* Both lengths checked by note() (name_ok(), qname_ok()). */
	memcpy(r->last.sandbox, sandbox, strlen(sandbox) + 1);
	memcpy(r->last.qname, qname, strlen(qname) + 1);
}

/*
 * One answer's note: @pins[0..@n) pinned for @qname, or (@pins NULL)
 * @addrs[0..@n) named without a pin (protocol and port 0, lapsing now).
 */
static int note(struct pinreg *r, const char *sandbox, const char *qname, const struct pin *pins,
		const struct addr *addrs, size_t n, uint64_t now_ms)
{
	struct sbx *s;
	size_t j = 0;
	int err = 0;

	if (!r || !name_ok(sandbox) || !qname_ok(qname) || (n && !pins && !addrs))
		return -EINVAL;
	if (note_repeat(r, sandbox, qname, pins, n, now_ms)) {
		note_sweep(r, now_ms);	/* never drops a live entry, so never one of the note's */
		return 0;
	}
	s = sbx_get(r, sandbox);
	if (!s)
		return -ENOMEM;
	r->busy = s;
	note_sweep(r, now_ms);
	r->stamp++;
	for (size_t i = 0; i < n && !err; i++) {
		const struct pin p = pins ? pins[i] : (struct pin){ .addr = addrs[i] };
		struct ent *e = memo_take(r, s, &j, &p);

		if (!e)
			err = ent_get(r, s, &p, now_ms, &e);
		if (err)
			break;
		/* The proxy never shortens a pin (pintrack): neither do we. */
		ent_extend(e, now_ms, now_ms + p.timeout_ms);
		err = ent_name(e, qname, r->stamp);
	}
	r->n_memo = 0;	/* one answer's */
	r->busy = NULL;
	sbx_release(r, s);
	note_keep(r, sandbox, qname, pins, n, now_ms, err);
	return err;
}

int pinreg_note(struct pinreg *r, const char *sandbox, const char *qname, const struct pin *pins,
		size_t n, uint64_t now_ms)
{
	return note(r, sandbox, qname, n ? pins : NULL, NULL, n, now_ms);
}

int pinreg_name(struct pinreg *r, const char *sandbox, const char *qname,
		const struct addr *addrs, size_t n, uint64_t now_ms)
{
	return note(r, sandbox, qname, NULL, n ? addrs : NULL, n, now_ms);
}

const char *pinreg_last_name(const struct pinreg *r, const char *sandbox, const struct addr *addr)
{
	const struct sbx *s = sbx_find(r, sandbox);
	const struct ent *best = NULL;

	if (!s || !addr)
		return NULL;
	for (const struct ent *e = r->b[bucket_of(s, addr)]; e; e = e->next)
		if (e->sb == s && e->n_names && addr_equal(&e->addr, addr) &&
		    (!best || e->stamp > best->stamp))
			best = e;
	return best ? best->names[best->last] : NULL;
}

size_t pinreg_names(const struct pinreg *r, const char *sandbox, const struct addr *a,
		    uint8_t proto, uint16_t port, uint64_t now_ms, const char **out)
{
	return pinreg_names_gw(r, sandbox, a, proto, port, false, now_ms, out);
}

size_t pinreg_names_gw(const struct pinreg *r, const char *sandbox, const struct addr *a,
		       uint8_t proto, uint16_t port, bool gateway, uint64_t now_ms,
		       const char **out)
{
	const struct sbx *s = sbx_find(r, sandbox);
	const struct ent *e;

	if (!s || !a || !proto)
		return 0;
	e = find(r, bucket_of(s, a), s, a, proto, port, gateway);
	if (!e || e->named_ms <= now_ms)
		return 0;
	for (unsigned int i = 0; i < e->n_names; i++)
		out[i] = e->names[i];
	return e->n_names;
}

/*
 * Does @pol allow @qname on @proto/@port through a domain rule with
 * (@gateway) or without gateway:?  A gateway pin is kept only by a rule
 * that still steers it to the gateway, a plain pin only by a plain rule: a
 * reload that drops a rule's gateway: cuts its gateway pins (the name is
 * pinned afresh, plain, by its next answer), never makes a direct path of
 * them, and one that adds it cuts the plain ones.
 */
/* Does a rule of @pol not in @off (a bit per rule; NULL: none) allow @qname there? */
static bool allowed(const struct policy *pol, const uint64_t *off, const char *qname,
		    uint8_t proto, uint16_t port, bool gateway)
{
	uint16_t idx[PINREG_MATCH];
	size_t n = policy_match(pol, qname, idx, PINREG_MATCH);

	if (n > PINREG_MATCH)
		n = PINREG_MATCH;
	for (size_t i = 0; i < n; i++)
		if (idx[i] < pol->n_rules && policy_rule_port(&pol->rules[idx[i]], proto, port) &&
		    (pol->rules[idx[i]].gateway != NULL) == gateway &&
		    !(off && (off[idx[i] / 64] >> (idx[i] % 64)) & 1))
			return true;
	return false;
}

int pinreg_split(const struct pinreg *r, const char *sandbox, const struct policy *pol,
		 uint64_t now_ms, struct pin *keep, size_t max_keep, size_t *n_keep,
		 struct pinreg_cut *cut, size_t max_cut, size_t *n_cut)
{
	return pinreg_split_off(r, sandbox, pol, NULL, now_ms, keep, max_keep, n_keep, cut,
				max_cut, n_cut);
}

int pinreg_split_off(const struct pinreg *r, const char *sandbox, const struct policy *pol,
		     const uint64_t *off, uint64_t now_ms, struct pin *keep, size_t max_keep,
		     size_t *n_keep, struct pinreg_cut *cut, size_t max_cut, size_t *n_cut)
{
	const struct sbx *s = sbx_find(r, sandbox);

	*n_keep = *n_cut = 0;
	for (const struct ent *e = s ? s->first : NULL; e; e = e->sb_next) {
		bool ok = false;

		/* Live pins an answer named; fw's alone and bare names are neither. */
		if (e->named_ms <= now_ms || !e->n_names || !e->proto)
			continue;
		for (unsigned int j = 0; j < e->n_names && !ok; j++)
			ok = pol && allowed(pol, off, e->names[j], e->proto, e->port, e->gateway);
		if (ok) {
			if (*n_keep == max_keep)
				return -E2BIG;
			keep[(*n_keep)++] = (struct pin){
				.addr = e->addr, .proto = e->proto, .port = e->port,
				.timeout_ms = (uint32_t)(e->named_ms - now_ms), .gateway = e->gateway };
		} else {
			struct pinreg_cut *c;

			if (*n_cut == max_cut)
				return -E2BIG;
			c = &cut[(*n_cut)++];
			c->addr = e->addr;
			c->proto = e->proto;
			c->port = e->port;
			c->gateway = e->gateway;
			snprintf(c->qname, sizeof(c->qname), "%s", e->names[0]);
		}
	}
	return 0;
}

/* @e loses its names; dropped unless given. */
static void ent_unname(struct pinreg *r, struct ent *e, uint64_t unused)
{
	(void)unused;
	if (e->given)
		names_clear(e);
	else
		ent_drop(r, ent_pp(r, e));
}

void pinreg_drop(struct pinreg *r, const char *sandbox, const struct pinreg_cut *cut, size_t n)
{
	struct sbx *s = sbx_find(r, sandbox);

	if (!s || (n && !cut))
		return;
	r->epoch++;
	r->busy = s;
	for (size_t i = 0; i < n; i++) {
		struct ent *e = find(r, bucket_of(s, &cut[i].addr), s, &cut[i].addr, cut[i].proto,
				     cut[i].port, cut[i].gateway);

		if (e)
			e->named_ms = 0;	/* its names no longer hold it */
	}
	r->busy = NULL;
	sbx_release(r, s);
}

void pinreg_forget(struct pinreg *r, const char *sandbox)
{
	each_of(r, sandbox, ent_unname, 0);
}

size_t pinreg_count(const struct pinreg *r)
{
	return r ? r->n : 0;
}

size_t pinreg_count_of(const struct pinreg *r, const char *sandbox)
{
	const struct sbx *s = sbx_find(r, sandbox);

	return s ? s->n : 0;
}
