/*
 * policy_index - the qname matcher behind policy_match(): a hash index
 * built once per policy.  Pure: memory only.
 *
 * Four kinds of key, each mapped to the ascending list of rules that name
 * it: exact names and the suffixes of "*." wildcards a rule allows, and
 * the same two for the names a rule's `except:` takes back.  A lookup
 * costs two hash probes per label of the qname (allow, except).
 *
 * The last names looked up are remembered (struct pmemo_slot): a sandbox asks
 * the same few names all day, and the proxy decides an answer's name again
 * on its way out.  policy_match() is a pure function of the policy, which
 * never changes once built, and the name; the memo is compared byte for
 * byte, so it answers exactly what the lookup would.  Not thread-safe: one
 * thread looks up a policy (the daemon's loop; a CLI command).
 */

#include "netd/model/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum pidx_kind {
	PIDX_EXACT,		/* "a.example.com" in domains */
	PIDX_WILD,		/* the suffix "example.com" of "*.example.com" in domains */
	PIDX_EXCEPT_EXACT,	/* the same two in except */
	PIDX_EXCEPT_WILD,
};

struct pidx_entry {
	const char *key;	/* borrowed from a rule's domains[]/excepts[]; NULL = free */
	size_t len;
	uint8_t kind;		/* enum pidx_kind */
	uint64_t hash;
	uint16_t *rules;	/* ascending, no duplicates */
	uint16_t n_rules, cap;
};

#define PMEMO_SLOTS 16	/* names remembered, direct-mapped by their hash */
#define PMEMO_RULES 8	/* a name that more rules match is not remembered */
#define PMEMO_NAME  253	/* bytes of a remembered name (a DNS name's most) */

/* One remembered lookup: @name's matching rules (all @n of them). */
struct pmemo_slot {
	uint64_t hash;		/* FNV-1a of the name; 0 with len 0: empty */
	uint8_t len, n;
	uint16_t rules[PMEMO_RULES];
	char name[PMEMO_NAME];	/* not NUL-terminated */
};

struct pidx {
	struct pidx_entry *slot;
	size_t mask;		/* slots - 1; slots is a power of two */
	bool any_except;	/* skip the except probes when no rule has one */
	struct pmemo_slot *memo;	/* PMEMO_SLOTS; written by lookups */
};

/* FNV-1a, seeded per kind; the keys come from the operator's file, lookups from sandboxes. */
static uint64_t pidx_hash(const char *s, size_t len, uint8_t kind)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)kind << 56);

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static bool pidx_same(const struct pidx_entry *e, uint64_t h, const char *s, size_t len,
		      uint8_t kind)
{
	return e->hash == h && e->kind == kind && e->len == len && memcmp(e->key, s, len) == 0;
}

static const struct pidx_entry *pidx_find(const struct pidx *x, const char *s, size_t len,
					  uint8_t kind)
{
	uint64_t h = pidx_hash(s, len, kind);

	/* Load factor <= 1/2, so a free slot always ends the probe. */
	for (size_t i = h & x->mask;; i = (i + 1) & x->mask) {
		const struct pidx_entry *e = &x->slot[i];

		if (!e->key)
			return NULL;
		if (pidx_same(e, h, s, len, kind))
			return e;
	}
}

static int pidx_add(struct pidx *x, const char *s, size_t len, uint8_t kind, uint16_t rule)
{
	uint64_t h = pidx_hash(s, len, kind);
	struct pidx_entry *e;
	size_t i;

	for (i = h & x->mask;; i = (i + 1) & x->mask) {
		e = &x->slot[i];
		if (!e->key || pidx_same(e, h, s, len, kind))
			break;
	}
	if (!e->key) {
		e->key = s;
		e->len = len;
		e->kind = kind;
		e->hash = h;
	}
	/* Rules are added in ascending order, so appending keeps the list sorted. */
	if (e->n_rules && e->rules[e->n_rules - 1] == rule)
		return 0;
	if (e->n_rules == e->cap) {
		uint16_t cap = e->cap ? (uint16_t)(e->cap * 2) : 2;
		uint16_t *r = realloc(e->rules, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		e->rules = r;
		e->cap = cap;
	}
	e->rules[e->n_rules++] = rule;
	return 0;
}

void policy_index_free(void *index)
{
	struct pidx *x = index;

	if (!x)
		return;
	if (x->slot)
		for (size_t i = 0; i <= x->mask; i++)
			free(x->slot[i].rules);
	free(x->slot);
	free(x->memo);
	free(x);
}

/* Add the patterns @pats/@n of rule @r; @except: they are except entries. */
static int pidx_add_list(struct pidx *x, char *const *pats, size_t n, bool except, uint16_t r)
{
	for (size_t d = 0; d < n; d++) {
		const char *s = pats[d];
		bool wild = s[0] == '*';
		uint8_t kind = except ? (wild ? PIDX_EXCEPT_WILD : PIDX_EXCEPT_EXACT)
				      : (wild ? PIDX_WILD : PIDX_EXACT);

		if (wild)
			s += 2;	/* "*.": the pattern was validated */
		if (pidx_add(x, s, strlen(s), kind, r) < 0)
			return -ENOMEM;
	}
	return 0;
}

int policy_index_build(struct policy *p)
{
	size_t total = 0, slots = 16;
	struct pidx *x;

	for (size_t r = 0; r < p->n_rules; r++)
		total += p->rules[r].n_domains + p->rules[r].n_excepts;
	while (slots < 2 * total)
		slots *= 2;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->slot = calloc(slots, sizeof(*x->slot));
	x->memo = calloc(PMEMO_SLOTS, sizeof(*x->memo));
	if (!x->slot || !x->memo) {
		policy_index_free(x);
		return -ENOMEM;
	}
	x->mask = slots - 1;
	for (size_t r = 0; r < p->n_rules; r++) {
		const struct policy_rule *rule = &p->rules[r];

		if (pidx_add_list(x, rule->domains, rule->n_domains, false, (uint16_t)r) < 0 ||
		    pidx_add_list(x, rule->excepts, rule->n_excepts, true, (uint16_t)r) < 0) {
			policy_index_free(x);
			return -ENOMEM;
		}
		x->any_except |= rule->n_excepts > 0;
	}
	p->index = x;
	return 0;
}

static void bits_set(uint64_t *bits, const struct pidx_entry *e)
{
	if (e)
		for (uint16_t i = 0; i < e->n_rules; i++)
			bits[e->rules[i] / 64] |= 1ull << (e->rules[i] % 64);
}

/*
 * Every rule that names @qname/@len through an entry of kind @exact (the
 * whole name) or @wild ("*.example.com" covers every name strictly below
 * example.com: the suffix after each dot, never the whole name).
 */
static void bits_lookup(const struct pidx *x, const char *qname, size_t len, uint8_t exact,
			uint8_t wild, uint64_t *bits)
{
	bits_set(bits, pidx_find(x, qname, len, exact));
	for (size_t i = 0; i < len; i++)
		if (qname[i] == '.')
			bits_set(bits, pidx_find(x, qname + i + 1, len - i - 1, wild));
}

/* The memo's answer for @qname/@len (hash @h) into @out/@max: its count; -1 if not there. */
static long memo_get(const struct pidx *x, uint64_t h, const char *qname, size_t len,
		     uint16_t *out, size_t max)
{
	const struct pmemo_slot *m = &x->memo[h & (PMEMO_SLOTS - 1)];

	if (!len || m->hash != h || m->len != len || memcmp(m->name, qname, len) != 0)
		return -1;
	if (max && m->n)
		memcpy(out, m->rules, (m->n < max ? m->n : max) * sizeof(*out));
	return m->n;
}

/* Remember that @qname/@len (hash @h) matched @rules[0..@n) (all of them). */
static void memo_put(const struct pidx *x, uint64_t h, const char *qname, size_t len,
		     const uint16_t *rules, size_t n)
{
	struct pmemo_slot *m = &x->memo[h & (PMEMO_SLOTS - 1)];

	if (!len || len > PMEMO_NAME || n > PMEMO_RULES)
		return;
	m->hash = h;
	m->len = (uint8_t)len;
	m->n = (uint8_t)n;
	memcpy(m->rules, rules, n * sizeof(*rules));
	memcpy(m->name, qname, len);
}

/* The lookup itself: two probes a label (struct pidx). */
static size_t match_index(const struct pidx *x, const char *qname, size_t len, uint16_t *out,
			  size_t max)
{
	uint64_t bits[(POLICY_MAX_RULES + 63) / 64] = { 0 };
	uint64_t except[(POLICY_MAX_RULES + 63) / 64] = { 0 };
	size_t n = 0;

	bits_lookup(x, qname, len, PIDX_EXACT, PIDX_WILD, bits);
	/* A rule's except takes the name back from that rule only. */
	if (x->any_except)
		bits_lookup(x, qname, len, PIDX_EXCEPT_EXACT, PIDX_EXCEPT_WILD, except);
	/* Rule indexes in ascending order, a word of the bitmap at a time. */
	for (size_t w = 0; w < sizeof(bits) / sizeof(bits[0]); w++)
		for (uint64_t b = bits[w] & ~except[w]; b; b &= b - 1) {
			if (n < max)
				out[n] = (uint16_t)(w * 64 + (size_t)__builtin_ctzll(b));
			n++;
		}
	return n;
}

size_t policy_match(const struct policy *p, const char *qname, uint16_t *out, size_t max)
{
	uint16_t mine[PMEMO_RULES];
	const struct pidx *x;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t len, n;
	long got;

	if (!p || !p->index || !qname)
		return 0;
	x = p->index;
	len = strlen(qname);
	/* The contract: a name with bytes outside [a-z0-9-_.] never matches
	 * (so a literal "*" label cannot ride on a wildcard rule).  The same
	 * pass hashes it for the memo. */
	for (size_t i = 0; i < len; i++) {
		char c = qname[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.'))
			return 0;
		h = (h ^ (unsigned char)c) * 0x100000001b3ull;
	}
	got = memo_get(x, h, qname, len, out, max);
	if (got >= 0)
		return (size_t)got;
	/* Into our own array when the caller's is too small to remember from. */
	if (max >= PMEMO_RULES) {
		n = match_index(x, qname, len, out, max);
		memo_put(x, h, qname, len, out, n);
		return n;
	}
	n = match_index(x, qname, len, mine, PMEMO_RULES);
	memo_put(x, h, qname, len, mine, n);
	if (max && n)
		memcpy(out, mine, (n < max ? n : max) * sizeof(*out));
	return n;
}
