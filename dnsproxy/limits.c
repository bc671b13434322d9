/*
 * limits - the proxy's per client address counters: queries upstream, TCP
 * connections, and the query-rate token bucket (common/tbucket.h), in a
 * small hash table (common/hash.h) keyed by address.  A slot lives while
 * anything counts or its bucket still remembers recent queries.  Also the
 * encoded-label score (tunnel_score(), declared in dnsproxy/budget.h).
 * No I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "dnsproxy/budget.h"
#include "dnsproxy/proxy_int.h"

static unsigned int slot_hash(const struct addr *a)
{
	uint32_t h = fnv32_add(FNV32_INIT, &a->family, 1);

	return fnv32_add(h, a->a, addr_len(a->family)) % PROXY_CLIENT_BUCKETS;
}

struct client_slot *slot_get(struct proxy *p, const struct addr *a, bool create)
{
	unsigned int h = slot_hash(a);
	struct client_slot *s;

	for (s = p->slots[h]; s; s = s->next)
		if (addr_equal(&s->addr, a))
			return s;
	if (!create)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = *a;
	tbucket_init(&s->rate, p->cfg.burst, proxy_now_ms(p));
	s->next = p->slots[h];
	p->slots[h] = s;
	return s;
}

void slot_put(struct proxy *p, const struct addr *a)
{
	unsigned int h = slot_hash(a);

	for (struct client_slot **pp = &p->slots[h]; *pp; pp = &(*pp)->next) {
		struct client_slot *s = *pp;

		if (!addr_equal(&s->addr, a))
			continue;
		/* Keep it while its rate bucket still remembers queries (a
		 * refill changes nothing the next take would not). */
		tbucket_refill(&s->rate, p->cfg.qps, p->cfg.burst, proxy_now_ms(p));
		if (s->queries == 0 && s->conns == 0 && tbucket_full(&s->rate, p->cfg.burst)) {
			*pp = s->next;
			free(s);
		}
		return;
	}
}

bool rate_ok(struct proxy *p, const struct addr *a, uint64_t *ret_limited)
{
	struct client_slot *s = slot_get(p, a, true);
	bool ok;

	if (!s)
		return true;	/* out of memory: the outstanding limit still holds */
	ok = tbucket_take(&s->rate, p->cfg.qps, p->cfg.burst, proxy_now_ms(p));
	if (ok)
		s->limited = 0;
	else
		s->limited++;
	*ret_limited = s->limited;
	slot_put(p, a);
	return ok;
}

void slots_free(struct proxy *p)
{
	for (size_t i = 0; i < PROXY_CLIENT_BUCKETS; i++) {
		while (p->slots[i]) {
			struct client_slot *s = p->slots[i];

			p->slots[i] = s->next;
			free(s);
		}
	}
}

/* ---- the encoded-label score ---------------------------------------------- */

/*
 * What tunnel_score() reads: the legitimate corpus (tests/unit/dns/
 * legit_names.txt) has words, short abbreviations, numbers, and IDs of at
 * most 32 characters a run (EKS, R2, Elastic Cloud: 32 hex; Lambda URLs:
 * 32 base36), 49 a label (an NLB: 32 hex, '-', 16 hex) and 48 a name.
 * Encoders write long runs of base32, base36, hex or base64.
 */

static bool is_vowel(char c)
{
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z');
}

/* A run of letters that reads as words: 3 or fewer, or a quarter vowels and
 * no cluster of more than 4 consonants ("strengths" does not; rare in names). */
static bool letters_wordy(const char *s, size_t n)
{
	size_t vowels = 0, run = 0, most = 0;

	if (n <= 3)
		return true;
	for (size_t i = 0; i < n; i++) {
		run = is_vowel(s[i]) ? 0 : run + 1;
		vowels += is_vowel(s[i]);
		if (run > most)
			most = run;
	}
	return vowels * 4 >= n && most <= 4;
}

/* One run of [a-z0-9] inside a label, read once. */
struct tok {
	size_t n, digits;
	size_t runs;		/* maximal letter runs and digit runs */
	bool hex;		/* [0-9a-f] only */
	bool b32;		/* [a-z2-7] only */
	bool words;		/* every letter run wordy, at most 2 numbers */
};

static void tok_read(const char *s, size_t n, struct tok *t)
{
	size_t numbers = 0;

	memset(t, 0, sizeof(*t));
	t->n = n;
	t->hex = t->b32 = t->words = true;
	for (size_t i = 0; i < n;) {
		size_t k = i;
		bool dig = is_digit(s[i]);

		while (k < n && is_digit(s[k]) == dig)
			k++;
		t->runs++;
		if (dig)
			numbers++;
		else if (!letters_wordy(s + i, k - i))
			t->words = false;
		i = k;
	}
	for (size_t i = 0; i < n; i++) {
		t->digits += is_digit(s[i]);
		t->hex &= is_digit(s[i]) || s[i] <= 'f';
		t->b32 &= !is_digit(s[i]) || (s[i] >= '2' && s[i] <= '7');
	}
	if (numbers > 2)
		t->words = false;
}

/* An ID-like run (tunnel_score()'s definition). */
static bool tok_id(const char *s, const struct tok *t)
{
	if (t->n < 5)
		return false;
	if (t->digits == t->n)
		return true;
	if (t->digits && t->hex && t->n >= 8)
		return true;
	if (t->digits && t->runs >= 3)
		return true;
	return !t->digits && t->n >= 8 && !letters_wordy(s, t->n);
}

/* A short run that counts beside an ID-like one: a digit, or no vowel. */
static bool tok_noisy(const char *s, const struct tok *t)
{
	bool vowel = false;

	for (size_t i = 0; i < t->n; i++)
		vowel |= is_vowel(s[i]);
	return t->n < 5 && (t->digits || !vowel);
}

static uint8_t tok_shape(const struct tok *t)
{
	if (t->digits == t->n)
		return TUNNEL_DIGITS;
	if (!t->digits)
		return TUNNEL_LETTERS;
	if (t->hex)
		return TUNNEL_HEX;
	return t->b32 ? TUNNEL_BASE32 : TUNNEL_BASE36;
}

/* What a label (or a whole name) adds up to. */
struct ids {
	size_t n;		/* ID-like characters */
	bool hex;		/* ... all of them hex (and separators) */
	bool sep;		/* ... a separator among them */
	bool digits, b32;	/* ... a digit among them; all in [a-z2-7] */
};

/*
 * label_runs() - call @fn for each run of [a-z0-9] of the label @s/@n,
 * with whether a counted run came just before it; stop when @fn returns
 * true.  Return: what @fn returned last.
 */
static bool label_runs(const char *s, size_t n, void *arg,
		       bool (*fn)(void *arg, const char *run, const struct tok *t))
{
	for (size_t i = 0; i < n;) {
		size_t k = i;
		struct tok t;

		while (k < n && is_alnum(s[k]))
			k++;
		if (k == i) {	/* a separator ('-', '_', anything else) */
			i++;
			continue;
		}
		tok_read(s + i, k - i, &t);
		if (fn(arg, s + i, &t))
			return true;
		i = k;
	}
	return false;
}

/* First pass over a label: a run too long to be an ID, and any ID-like run. */
struct first {
	struct tunnel_score *sc;
	bool any_id;
};

static bool first_run(void *arg, const char *run, const struct tok *t)
{
	struct first *f = arg;

	if (t->n > TUNNEL_TOKEN_MAX && !t->words) {
		f->sc->why = TUNNEL_TOKEN;
		f->sc->shape = tok_shape(t);
		f->sc->chars = (uint16_t)(t->n > UINT16_MAX ? UINT16_MAX : t->n);
		return true;
	}
	f->any_id |= tok_id(run, t);
	return false;
}

/* Second pass: the ID-like runs and the noisy short ones beside them. */
struct second {
	struct ids *l;
	bool prev;		/* the run before was counted */
};

static bool second_run(void *arg, const char *run, const struct tok *t)
{
	struct second *c = arg;
	bool counted = tok_id(run, t) || tok_noisy(run, t);

	if (counted) {
		c->l->n += t->n + (c->prev ? 1 : 0);
		c->l->sep |= c->prev;
		c->l->hex &= t->hex;
		c->l->b32 &= t->b32;
		c->l->digits |= t->digits > 0;
	}
	c->prev = counted;
	return false;
}

static uint8_t ids_shape(const struct ids *l)
{
	if (l->hex && l->digits)
		return TUNNEL_HEX;
	if (l->sep)
		return TUNNEL_BASE64;
	if (!l->digits)
		return TUNNEL_LETTERS;
	return l->b32 ? TUNNEL_BASE32 : TUNNEL_BASE36;
}

/* Fold label @l into the name's @all. */
static void ids_add(struct ids *all, const struct ids *l)
{
	if (!l->n)
		return;
	all->n += l->n;
	all->hex &= l->hex;
	all->sep |= l->sep;
	all->digits |= l->digits;
	all->b32 &= l->b32;
}

static uint16_t clamp16(size_t v)
{
	return (uint16_t)(v > UINT16_MAX ? UINT16_MAX : v);
}

bool tunnel_score(const char *qname, struct tunnel_score *out)
{
	struct tunnel_score sc = { 0 };
	struct ids all = { .hex = true, .b32 = true };

	for (const char *label = qname; *label && !sc.why;) {
		size_t n = strcspn(label, ".");
		struct ids l = { .hex = true, .b32 = true };
		struct first f = { .sc = &sc };
		struct second c = { .l = &l };

		if (label_runs(label, n, &f, first_run))
			break;	/* TUNNEL_TOKEN */
		if (f.any_id)
			label_runs(label, n, &c, second_run);
		ids_add(&all, &l);
		if (l.n > (l.hex ? TUNNEL_LABEL_HEX : TUNNEL_LABEL_IDS)) {
			sc.why = TUNNEL_LABEL;
			sc.shape = ids_shape(&l);
			sc.chars = clamp16(l.n);
		}
		label += n;
		if (*label == '.')
			label++;
	}
	if (!sc.why && all.n > TUNNEL_NAME_IDS) {
		sc.why = TUNNEL_NAME;
		sc.shape = ids_shape(&all);
		sc.chars = clamp16(all.n);
	}
	sc.ids = clamp16(all.n);
	if (out)
		*out = sc;
	return sc.why != TUNNEL_NONE;
}

const char *tunnel_shape_name(unsigned int shape)
{
	static const char *const names[] = {
		[TUNNEL_HEX] = "hex", [TUNNEL_BASE32] = "base32", [TUNNEL_BASE36] = "base36",
		[TUNNEL_BASE64] = "base64", [TUNNEL_LETTERS] = "letters", [TUNNEL_DIGITS] = "digits",
	};

	return shape < sizeof(names) / sizeof(names[0]) ? names[shape] : "data";
}
