/*
 * budget - the name budget of DNS tunnelling's defences (budget.h): per
 * sandbox, the distinct names each budgeted rule let it ask in the last
 * window, as keyed 64-bit hashes.  A sandbox's names sit in one array
 * (at most BUDGET_NAMES_MAX, grown by doubling), indexed by a chained hash
 * table on (rule, hash), and threaded on one list per rule in the order
 * they were last asked: the head is the oldest, so the window slides by
 * popping heads, and "retry in" is the head's age.  Sandboxes are found by
 * name.  Also budget_filter(), which applies a rule's budget and its
 * encoded: mode (tunnel_score(), limits.c) to one query.  Pure.
 */
#include "dnsproxy/budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define SB_BUCKETS   1024
#define SB_NAME_MAX  128	/* bytes of a sandbox name kept, with its NUL */
#define CAP0         64		/* names a sandbox gets room for at first */

struct bg_entry {
	uint64_t h;		/* budget_name_hash() of the name */
	uint32_t last_s;	/* when it was last asked (caller's clock, s) */
	uint16_t rule;
	int32_t hnext;		/* its hash chain; the free list when unused */
	int32_t prev, next;	/* its rule's list, oldest first */
};

struct bg_rule {
	uint16_t rule;		/* the policy's rule index */
	bool spent;		/* refused a name since its last new one */
	uint32_t window_s;	/* as last charged */
	uint32_t n;		/* names in its list */
	int32_t head, tail;
};

struct bg_sandbox {
	struct bg_sandbox *next;
	struct bg_entry *e;
	uint32_t cap;		/* entries allocated (a power of two) = buckets */
	uint32_t used;		/* entries ever handed out: e[used..cap) are fresh */
	uint32_t n;		/* live entries */
	int32_t free;		/* a freed entry, chained through hnext; -1: none */
	int32_t *bkt;
	struct bg_rule *rules;
	uint32_t n_rules, cap_rules;
	char name[SB_NAME_MAX];
};

/*
 * The last names scored (tunnel_score() is a pure function of the name):
 * a hot name is scored once, not once per query.  Direct-mapped by an FNV
 * hash of the name; a collision only costs a new score.
 */
#define SCORE_MEMO_N	 16
#define SCORE_MEMO_NAME	 128	/* longer names are scored every time */

struct score_memo {
	char qname[SCORE_MEMO_NAME];	/* "": empty */
	bool flagged;
	struct tunnel_score sc;
};

struct budget {
	uint8_t key[BUDGET_KEY_LEN];
	size_t names;
	struct bg_sandbox *sbs[SB_BUCKETS];
	struct score_memo memo[SCORE_MEMO_N];
};

/* score() - tunnel_score() of @qname, through @b's memo. */
static bool score(struct budget *b, const char *qname, struct tunnel_score *sc)
{
	size_t len = strlen(qname);
	struct score_memo *m;

	if (len == 0 || len >= SCORE_MEMO_NAME)
		return tunnel_score(qname, sc);
	m = &b->memo[fnv32_add(FNV32_INIT, qname, len) % SCORE_MEMO_N];
	if (memcmp(m->qname, qname, len + 1) != 0) {
		m->flagged = tunnel_score(qname, &m->sc);
		memcpy(m->qname, qname, len + 1);
	}
	*sc = m->sc;
	return m->flagged;
}

/* ---- SipHash-2-4 (Aumasson, Bernstein: "SipHash: a fast short-input PRF") -- */

static uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void sipround(uint64_t v[4])
{
	v[0] += v[1]; v[1] = rotl(v[1], 13); v[1] ^= v[0]; v[0] = rotl(v[0], 32);
	v[2] += v[3]; v[3] = rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = rotl(v[1], 17); v[1] ^= v[2]; v[2] = rotl(v[2], 32);
}

uint64_t budget_name_hash(const uint8_t key[BUDGET_KEY_LEN], const void *data, size_t len)
{
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v[4] = { 0x736f6d6570736575ull ^ k0, 0x646f72616e646f6dull ^ k1,
			  0x6c7967656e657261ull ^ k0, 0x7465646279746573ull ^ k1 };
	const uint8_t *in = data;
	uint64_t last = (uint64_t)len << 56;
	size_t full = len - len % 8;

	for (size_t i = 0; i < full; i += 8) {
		uint64_t m = le64(in + i);

		v[3] ^= m;
		sipround(v);
		sipround(v);
		v[0] ^= m;
	}
	for (size_t i = 0; i < len % 8; i++)
		last |= (uint64_t)in[full + i] << (8 * i);
	v[3] ^= last;
	sipround(v);
	sipround(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* ---- sandboxes ---------------------------------------------------------------- */

int budget_new(const uint8_t key[BUDGET_KEY_LEN], struct budget **ret)
{
	struct budget *b = calloc(1, sizeof(*b));

	*ret = NULL;
	if (!b)
		return -ENOMEM;
	memcpy(b->key, key, BUDGET_KEY_LEN);
	*ret = b;
	return 0;
}

static void sb_free(struct bg_sandbox *s)
{
	if (!s)
		return;
	free(s->e);
	free(s->bkt);
	free(s->rules);
	free(s);
}

void budget_free(struct budget *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < SB_BUCKETS; i++)
		while (b->sbs[i]) {
			struct bg_sandbox *s = b->sbs[i];

			b->sbs[i] = s->next;
			sb_free(s);
		}
	free(b);
}

static struct bg_sandbox **sb_slot(struct budget *b, const char *name)
{
	struct bg_sandbox **pp = &b->sbs[fnv32_str(FNV32_INIT, name) % SB_BUCKETS];

	while (*pp && strncmp((*pp)->name, name, SB_NAME_MAX - 1) != 0)
		pp = &(*pp)->next;
	return pp;
}

/* The sandbox's table, made (empty, CAP0 entries) if need be.  NULL: no memory. */
static struct bg_sandbox *sb_get(struct budget *b, const char *name)
{
	struct bg_sandbox **pp = sb_slot(b, name), *s;

	if (*pp)
		return *pp;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->e = calloc(CAP0, sizeof(*s->e));
	s->bkt = malloc(CAP0 * sizeof(*s->bkt));
	if (!s->e || !s->bkt) {
		sb_free(s);
		return NULL;
	}
	s->cap = CAP0;
	s->free = -1;
	for (uint32_t i = 0; i < CAP0; i++)
		s->bkt[i] = -1;
	snprintf(s->name, sizeof(s->name), "%s", name);
	*pp = s;
	return s;
}

void budget_reset(struct budget *b, const char *sandbox)
{
	struct bg_sandbox **pp, *s;

	if (!b || !sandbox)
		return;
	pp = sb_slot(b, sandbox);
	if (!(s = *pp))
		return;
	*pp = s->next;
	b->names -= s->n;
	sb_free(s);
}

size_t budget_names(const struct budget *b)
{
	return b ? b->names : 0;
}

/* ---- one sandbox's names ---------------------------------------------------- */

static uint32_t bucket_of(const struct bg_sandbox *s, uint16_t rule, uint64_t h)
{
	return (uint32_t)((h ^ ((uint64_t)rule * 0x9e3779b97f4a7c15ull)) & (s->cap - 1));
}

static int32_t entry_find(const struct bg_sandbox *s, uint16_t rule, uint64_t h)
{
	for (int32_t i = s->bkt[bucket_of(s, rule, h)]; i >= 0; i = s->e[i].hnext)
		if (s->e[i].h == h && s->e[i].rule == rule)
			return i;
	return -1;
}

static void hash_link(struct bg_sandbox *s, int32_t i)
{
	uint32_t k = bucket_of(s, s->e[i].rule, s->e[i].h);

	s->e[i].hnext = s->bkt[k];
	s->bkt[k] = i;
}

/* Twice the room (at most BUDGET_NAMES_MAX), chains rebuilt.  Return: 0; -ENOMEM. */
static int sb_grow(struct bg_sandbox *s)
{
	uint32_t cap = s->cap * 2;
	struct bg_entry *e;
	int32_t *bkt;

	if (cap > BUDGET_NAMES_MAX)
		return -ENOMEM;
	bkt = malloc(cap * sizeof(*bkt));
	e = bkt ? realloc(s->e, cap * sizeof(*e)) : NULL;
	if (!e) {
		free(bkt);
		return -ENOMEM;
	}
	s->e = e;
	free(s->bkt);
	s->bkt = bkt;
	s->cap = cap;
	for (uint32_t i = 0; i < cap; i++)
		bkt[i] = -1;
	/* Only live entries go back into chains: they are on their rules' lists. */
	for (uint32_t r = 0; r < s->n_rules; r++)
		for (int32_t i = s->rules[r].head; i >= 0; i = s->e[i].next)
			hash_link(s, i);
	return 0;
}

static struct bg_rule *rule_get(struct bg_sandbox *s, uint16_t rule)
{
	struct bg_rule *r;

	for (uint32_t i = 0; i < s->n_rules; i++)
		if (s->rules[i].rule == rule)
			return &s->rules[i];
	if (s->n_rules == s->cap_rules) {
		uint32_t cap = s->cap_rules ? s->cap_rules * 2 : 4;

		r = realloc(s->rules, cap * sizeof(*r));
		if (!r)
			return NULL;
		s->rules = r;
		s->cap_rules = cap;
	}
	r = &s->rules[s->n_rules++];
	*r = (struct bg_rule){ .rule = rule, .head = -1, .tail = -1 };
	return r;
}

static void list_unlink(struct bg_sandbox *s, struct bg_rule *r, int32_t i)
{
	struct bg_entry *e = &s->e[i];

	if (e->prev >= 0)
		s->e[e->prev].next = e->next;
	else
		r->head = e->next;
	if (e->next >= 0)
		s->e[e->next].prev = e->prev;
	else
		r->tail = e->prev;
}

static void list_append(struct bg_sandbox *s, struct bg_rule *r, int32_t i)
{
	s->e[i].prev = r->tail;
	s->e[i].next = -1;
	if (r->tail >= 0)
		s->e[r->tail].next = i;
	else
		r->head = i;
	r->tail = i;
}

/* Forget entry @i of rule @r: off its list and chain, onto the free list. */
static void entry_drop(struct budget *b, struct bg_sandbox *s, struct bg_rule *r, int32_t i)
{
	int32_t *pp = &s->bkt[bucket_of(s, s->e[i].rule, s->e[i].h)];

	list_unlink(s, r, i);
	while (*pp != i)
		pp = &s->e[*pp].hnext;
	*pp = s->e[i].hnext;
	s->e[i].hnext = s->free;
	s->free = i;
	s->n--;
	r->n--;
	b->names--;
}

/* Drop @r's names that left the window by @now_s.  Return: how many. */
static size_t rule_expire(struct budget *b, struct bg_sandbox *s, struct bg_rule *r,
			  uint32_t now_s)
{
	size_t n = 0;

	while (r->head >= 0 && now_s - s->e[r->head].last_s >= r->window_s) {
		entry_drop(b, s, r, r->head);
		n++;
	}
	return n;
}

/* Seconds until @r's oldest name leaves its window (at least 1). */
static uint32_t rule_retry(const struct bg_sandbox *s, const struct bg_rule *r, uint32_t now_s)
{
	uint32_t age = r->head >= 0 ? now_s - s->e[r->head].last_s : 0;

	return age < r->window_s ? r->window_s - age : 1;
}

/* Every rule's expired names; the soonest any other leaves, in *@ret_retry_s. */
static void sb_expire(struct budget *b, struct bg_sandbox *s, uint32_t now_s,
		      uint32_t *ret_retry_s)
{
	uint32_t soonest = UINT32_MAX;

	for (uint32_t k = 0; k < s->n_rules; k++) {
		rule_expire(b, s, &s->rules[k], now_s);
		if (s->rules[k].n && rule_retry(s, &s->rules[k], now_s) < soonest)
			soonest = rule_retry(s, &s->rules[k], now_s);
	}
	if (ret_retry_s)
		*ret_retry_s = soonest == UINT32_MAX ? 1 : soonest;
}

/* A free entry (the free list, a fresh one, or after growing); -1: none. */
static int32_t entry_alloc(struct bg_sandbox *s)
{
	int32_t i = s->free;

	if (i >= 0) {
		s->free = s->e[i].hnext;
		return i;
	}
	if (s->used == s->cap && sb_grow(s) < 0)
		return -1;
	return (int32_t)s->used++;
}

size_t budget_expire(struct budget *b, uint64_t now_ms)
{
	uint32_t now_s = (uint32_t)(now_ms / 1000);
	size_t before;

	if (!b)
		return 0;
	before = b->names;
	for (size_t i = 0; i < SB_BUCKETS; i++) {
		struct bg_sandbox **pp = &b->sbs[i];

		while (*pp) {
			struct bg_sandbox *s = *pp;

			sb_expire(b, s, now_s, NULL);
			if (s->n == 0) {
				*pp = s->next;
				sb_free(s);
			} else {
				pp = &s->next;
			}
		}
	}
	return before - b->names;
}

/* budget_charge(), and whether an OVER is the first since the rule's last new name. */
static enum budget_result charge(struct budget *b, const char *sandbox, uint16_t rule,
				 uint32_t names, uint32_t window_s, const char *qname,
				 uint64_t now_ms, uint32_t *ret_retry_s, bool *ret_first)
{
	uint32_t now_s = (uint32_t)(now_ms / 1000), retry = 1;
	uint64_t h = budget_name_hash(b->key, qname, strlen(qname));
	struct bg_sandbox *s = sb_get(b, sandbox);
	struct bg_rule *r = s ? rule_get(s, rule) : NULL;
	enum budget_result res = BUDGET_FULL;
	int32_t i;

	*ret_first = false;
	if (!r)
		goto out;	/* out of memory: fail closed */
	r->window_s = window_s ? window_s : 1;
	rule_expire(b, s, r, now_s);
	if ((i = entry_find(s, rule, h)) >= 0) {
		/* Asked again: not new; it stays in the window while it is used. */
		s->e[i].last_s = now_s;
		list_unlink(s, r, i);
		list_append(s, r, i);
		return BUDGET_KNOWN;
	}
	if (r->n >= names) {
		retry = rule_retry(s, r, now_s);
		*ret_first = !r->spent;
		r->spent = true;
		res = BUDGET_OVER;
		goto out;
	}
	if (s->n >= BUDGET_NAMES_MAX)
		sb_expire(b, s, now_s, &retry);
	/* The sandbox's table is full, or memory ran out: refused, fail closed. */
	if (s->n >= BUDGET_NAMES_MAX || (i = entry_alloc(s)) < 0)
		goto out;
	s->e[i] = (struct bg_entry){ .h = h, .last_s = now_s, .rule = rule };
	hash_link(s, i);
	list_append(s, r, i);
	s->n++;
	r->n++;
	r->spent = false;
	b->names++;
	return BUDGET_ADDED;
out:
	if (ret_retry_s)
		*ret_retry_s = retry;
	return res;
}

enum budget_result budget_charge(struct budget *b, const char *sandbox, uint16_t rule,
				 uint32_t names, uint32_t window_s, const char *qname,
				 uint64_t now_ms, uint32_t *ret_retry_s)
{
	bool first;

	if (names == 0)
		return BUDGET_KNOWN;	/* no budget */
	return charge(b, sandbox, rule, names, window_s, qname, now_ms, ret_retry_s, &first);
}

/* ---- one query ---------------------------------------------------------------- */

/* May rule @r (index @idx) keep @qname?  Fills @why when it may not. */
static bool rule_keeps(struct budget *b, const struct decide_rule *r, uint16_t idx,
		       const char *sandbox, const char *qname, uint64_t now_ms, bool flagged,
		       const struct tunnel_score *sc, struct budget_why *why)
{
	enum budget_result res;
	bool first = false;
	uint32_t retry = 0;

	if (flagged && r->encoded == DECIDE_ENCODED_REFUSE) {
		/* Before the budget: an encoded name spends nothing. */
		why->encoded = true;
		why->score = *sc;
		why->pattern = r->pattern;
		return false;
	}
	if (flagged && r->encoded == DECIDE_ENCODED_LOG) {
		why->logged = true;
		why->score = *sc;
	}
	if (!r->budget_names)
		return true;
	res = charge(b, sandbox, idx, r->budget_names, r->budget_window_s, qname, now_ms, &retry,
		     &first);
	if (res == BUDGET_KNOWN || res == BUDGET_ADDED)
		return true;
	why->over = res == BUDGET_OVER;
	why->full = res == BUDGET_FULL;
	why->first_over |= first;
	why->names = r->budget_names;
	why->window_s = r->budget_window_s;
	why->retry_s = retry;
	why->pattern = r->pattern;
	return false;
}

enum decide_verdict budget_filter(struct budget *b, const struct decide_ctx *c,
				  const char *sandbox, const char *qname, uint64_t now_ms,
				  uint16_t *rules, size_t *n_rules, struct budget_why *why)
{
	struct tunnel_score sc = { 0 };
	bool scored = false, flagged = false;
	size_t kept = 0;

	memset(why, 0, sizeof(*why));
	if (!b || !c->policy || !c->policy->ops)
		return *n_rules ? DECIDE_ALLOW : DECIDE_DENY;
	for (size_t i = 0; i < *n_rules; i++) {
		struct decide_rule r;

		if (c->policy->ops->rule(c->policy->pol, rules[i], &r) < 0)
			continue;
		if (r.encoded != DECIDE_ENCODED_OFF && !scored) {
			flagged = score(b, qname, &sc);
			scored = true;
		}
		if (rule_keeps(b, &r, rules[i], sandbox, qname, now_ms, flagged, &sc, why))
			rules[kept++] = rules[i];
	}
	*n_rules = kept;
	if (kept)
		return DECIDE_ALLOW;
	if (why->encoded)
		return DECIDE_DENY_ENCODED;
	return why->over || why->full ? DECIDE_DENY_BUDGET : DECIDE_DENY;
}

/* ---- words ------------------------------------------------------------------- */

char *budget_window_format(uint32_t s, char *buf, size_t sz)
{
	if (s && s % 3600 == 0)
		snprintf(buf, sz, "%uh", s / 3600);
	else if (s && s % 60 == 0)
		snprintf(buf, sz, "%um", s / 60);
	else
		snprintf(buf, sz, "%us", s);
	return buf;
}

char *budget_text(char *buf, size_t sz, enum decide_verdict v, const struct budget_why *why)
{
	const struct tunnel_score *sc = &why->score;
	const char *shape = tunnel_shape_name(sc->shape);
	char w[BUDGET_WINDOW_STRLEN];

	if (!sz)
		return buf;
	if (v == DECIDE_DENY_ENCODED && sc->why == TUNNEL_TOKEN)
		snprintf(buf, sz, "netd: refused as DNS tunnelling: a run of %u characters looks "
			 "%s-encoded", sc->chars, shape);
	else if (v == DECIDE_DENY_ENCODED && sc->why == TUNNEL_LABEL)
		snprintf(buf, sz, "netd: refused as DNS tunnelling: a label with %u ID-like "
			 "characters (%s)", sc->chars, shape);
	else if (v == DECIDE_DENY_ENCODED)
		snprintf(buf, sz, "netd: refused as DNS tunnelling: %u ID-like characters in "
			 "the name (%s)", sc->chars, shape);
	else if (why->full)
		snprintf(buf, sz, "netd: this sandbox holds %u names under DNS budgets, the "
			 "most; retry in %us", BUDGET_NAMES_MAX, why->retry_s);
	else
		snprintf(buf, sz, "netd: DNS name budget spent: %u new names per %s below %s; "
			 "retry in %us", why->names,
			 budget_window_format(why->window_s, w, sizeof(w)),
			 why->pattern ? why->pattern : "this rule", why->retry_s);
	for (size_t i = 0; buf[i]; i++)
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e)
			buf[i] = '?';
	return buf;
}
