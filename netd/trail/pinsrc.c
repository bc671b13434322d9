/*
 * pinsrc - (sandbox, address, protocol, port) -> the qnames that pinned it.
 * A chained hash table with a fixed bucket array; expired entries are swept
 * a few buckets per note, so memory follows the live pins.  Each sandbox's
 * entries are also on a list of their own (found through a second, small
 * hash by name), so what a reload asks per sandbox costs what that
 * sandbox holds, not the whole table.  See pinsrc.h.
 */
#include "netd/trail/pinsrc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "netd/model/sandbox.h"

#define PINSRC_BUCKETS (1u << 16)
#define PINSRC_SWEEP   8	/* buckets swept per note */
#define PINSRC_MATCH   64	/* matching rules looked at per name */
#define PINSRC_SB_BUCKETS 4096	/* sandbox name -> its list */

struct ent;

/* One sandbox's entries. */
struct sbh {
	struct sbh *next;	/* name hash chain */
	struct ent *first;
	size_t n;		/* entries on the list */
	char name[SANDBOX_NAME_MAX + 1];
};

struct ent {
	struct ent *next;
	struct ent *sb_next, **sb_pprev;	/* its sandbox's list */
	struct sbh *head;
	char sandbox[SANDBOX_NAME_MAX + 1];
	struct addr addr;
	uint8_t proto;
	uint16_t port;
	uint64_t expires_ms;
	char *names[PINSRC_NAMES_MAX];
	unsigned int n_names, oldest;
};

struct pinsrc {
	struct ent **b;
	struct sbh **sb;	/* PINSRC_SB_BUCKETS */
	size_t n;
	uint32_t sweep;
	uint64_t last_now_ms;
};

static uint32_t hash(const char *sb, const struct addr *a, uint8_t proto, uint16_t port)
{
	const uint8_t tail[3] = { proto, (uint8_t)(port >> 8), (uint8_t)(port & 0xff) };
	uint32_t h = fnv32_str(FNV32_INIT, sb);

	h = fnv32_add(h, a->a, addr_len(a->family));
	h = fnv32_add(h, tail, sizeof(tail));
	return h & (PINSRC_BUCKETS - 1);
}

static struct sbh **sbh_slot(const struct pinsrc *m, const char *name)
{
	struct sbh **pp = &m->sb[fnv32_str(FNV32_INIT, name) & (PINSRC_SB_BUCKETS - 1)];

	while (*pp && strcmp((*pp)->name, name) != 0)
		pp = &(*pp)->next;
	return pp;
}

/* Put new entry @e on its sandbox's list.  Return: 0; -ENOMEM. */
static int ent_link(struct pinsrc *m, struct ent *e)
{
	struct sbh **pp = sbh_slot(m, e->sandbox), *h = *pp;

	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		snprintf(h->name, sizeof(h->name), "%s", e->sandbox);
		*pp = h;
	}
	e->head = h;
	e->sb_next = h->first;
	if (h->first)
		h->first->sb_pprev = &e->sb_next;
	e->sb_pprev = &h->first;
	h->first = e;
	h->n++;
	return 0;
}

/* Take @e off its sandbox's list; the last one out frees the list. */
static void ent_unlink(struct pinsrc *m, struct ent *e)
{
	*e->sb_pprev = e->sb_next;
	if (e->sb_next)
		e->sb_next->sb_pprev = e->sb_pprev;
	e->head->n--;
	if (!e->head->first) {
		struct sbh **pp = sbh_slot(m, e->head->name);

		*pp = e->head->next;
		free(e->head);
	}
}

static void ent_free(struct ent *e)
{
	for (unsigned int i = 0; i < e->n_names; i++)
		free(e->names[i]);
	free(e);
}

int pinsrc_new(struct pinsrc **ret)
{
	struct pinsrc *m = calloc(1, sizeof(*m));

	*ret = NULL;
	if (!m)
		return -ENOMEM;
	m->b = calloc(PINSRC_BUCKETS, sizeof(*m->b));
	m->sb = calloc(PINSRC_SB_BUCKETS, sizeof(*m->sb));
	if (!m->b || !m->sb) {
		free(m->b);
		free(m->sb);
		free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

void pinsrc_free(struct pinsrc *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < PINSRC_BUCKETS; i++)
		for (struct ent *e = m->b[i], *nx; e; e = nx) {
			nx = e->next;
			ent_free(e);
		}
	for (uint32_t i = 0; i < PINSRC_SB_BUCKETS; i++)
		for (struct sbh *h = m->sb[i], *nx; h; h = nx) {
			nx = h->next;
			free(h);
		}
	free(m->b);
	free(m->sb);
	free(m);
}

/* Unlink entries of bucket @i for which @pred holds. */
static void bucket_drop(struct pinsrc *m, uint32_t i, bool (*pred)(const struct ent *, const void *),
			const void *arg)
{
	for (struct ent **pp = &m->b[i], *e; (e = *pp);) {
		if (pred(e, arg)) {
			*pp = e->next;
			ent_unlink(m, e);
			ent_free(e);
			m->n--;
		} else {
			pp = &e->next;
		}
	}
}

static bool expired(const struct ent *e, const void *now)
{
	return e->expires_ms <= *(const uint64_t *)now;
}

static struct ent *find(const struct pinsrc *m, uint32_t h, const char *sb, const struct addr *a,
			uint8_t proto, uint16_t port)
{
	for (struct ent *e = m->b[h]; e; e = e->next)
		if (e->proto == proto && e->port == port && addr_equal(&e->addr, a) &&
		    strcmp(e->sandbox, sb) == 0)
			return e;
	return NULL;
}

int pinsrc_note(struct pinsrc *m, const char *sandbox, const char *qname,
		const struct pin *pins, size_t n, uint64_t now_ms)
{
	if (!m || !sandbox || !qname || strlen(sandbox) > SANDBOX_NAME_MAX || strlen(qname) > 255 ||
	    (n && !pins))
		return -EINVAL;
	for (unsigned int k = 0; k < PINSRC_SWEEP; k++)
		bucket_drop(m, m->sweep++ & (PINSRC_BUCKETS - 1), expired, &now_ms);
	for (size_t i = 0; i < n; i++) {
		const struct pin *p = &pins[i];
		uint32_t h = hash(sandbox, &p->addr, p->proto, p->port);
		struct ent *e = find(m, h, sandbox, &p->addr, p->proto, p->port);
		bool have = false;
		char *dup;

		if (!e) {
			if (m->n >= PINSRC_MAX)
				return -ENOSPC;
			e = calloc(1, sizeof(*e));
			if (!e)
				return -ENOMEM;
			snprintf(e->sandbox, sizeof(e->sandbox), "%s", sandbox);
			e->addr = p->addr;
			e->proto = p->proto;
			e->port = p->port;
			if (ent_link(m, e) < 0) {
				free(e);
				return -ENOMEM;
			}
			e->next = m->b[h];
			m->b[h] = e;
			m->n++;
		} else if (e->expires_ms <= now_ms) {
			/* Expired in the kernel too: its old names no longer hold it. */
			for (unsigned int j = 0; j < e->n_names; j++)
				free(e->names[j]);
			e->n_names = e->oldest = 0;
		}
		/* The proxy never shortens a pin (pintrack): neither do we. */
		if (now_ms + p->timeout_ms > e->expires_ms)
			e->expires_ms = now_ms + p->timeout_ms;
		for (unsigned int j = 0; j < e->n_names && !have; j++)
			have = strcmp(e->names[j], qname) == 0;
		if (have)
			continue;
		dup = strdup(qname);
		if (!dup)
			return -ENOMEM;
		if (e->n_names < PINSRC_NAMES_MAX) {
			e->names[e->n_names++] = dup;
		} else {
			free(e->names[e->oldest]);
			e->names[e->oldest] = dup;
			e->oldest = (e->oldest + 1) % PINSRC_NAMES_MAX;
		}
	}
	return 0;
}

static bool is_ent(const struct ent *e, const void *which)
{
	return e == which;
}

void pinsrc_forget(struct pinsrc *m, const char *sandbox)
{
	struct sbh *h;

	if (!m || !sandbox || strlen(sandbox) > SANDBOX_NAME_MAX)
		return;
	/* Each of its entries out of its bucket (the last one frees the list). */
	while ((h = *sbh_slot(m, sandbox)) && h->first) {
		struct ent *e = h->first;

		bucket_drop(m, hash(e->sandbox, &e->addr, e->proto, e->port), is_ent, e);
	}
}

/* Does @pol allow @qname on @proto/@port through a domain rule? */
static bool allowed(const struct policy *pol, const char *qname, uint8_t proto, uint16_t port)
{
	uint16_t idx[PINSRC_MATCH];
	size_t n = policy_match(pol, qname, idx, PINSRC_MATCH);

	if (n > PINSRC_MATCH)
		n = PINSRC_MATCH;
	for (size_t i = 0; i < n; i++) {
		const struct policy_rule *r = &pol->rules[idx[i]];

		if (idx[i] < pol->n_rules && policy_rule_port(r, proto, port))
			return true;
	}
	return false;
}

int pinsrc_split(const struct pinsrc *m, const char *sandbox, const struct policy *pol,
		 uint64_t now_ms, struct pin *keep, size_t max_keep, size_t *n_keep,
		 struct pinsrc_cut *cut, size_t max_cut, size_t *n_cut)
{
	const struct sbh *h;

	*n_keep = *n_cut = 0;
	if (!m || strlen(sandbox) > SANDBOX_NAME_MAX)
		return 0;
	h = *sbh_slot(m, sandbox);
	for (const struct ent *e = h ? h->first : NULL; e; e = e->sb_next) {
		bool ok = false;

		if (e->expires_ms <= now_ms)
			continue;
		for (unsigned int j = 0; j < e->n_names && !ok; j++)
			ok = pol && allowed(pol, e->names[j], e->proto, e->port);
		if (ok) {
			if (*n_keep == max_keep)
				return -E2BIG;
			keep[*n_keep] = (struct pin){ .addr = e->addr, .proto = e->proto,
							 .port = e->port,
							 .timeout_ms = (uint32_t)(e->expires_ms - now_ms) };
			(*n_keep)++;
		} else {
			struct pinsrc_cut *c;

			if (*n_cut == max_cut)
				return -E2BIG;
			c = &cut[(*n_cut)++];
			c->addr = e->addr;
			c->proto = e->proto;
			c->port = e->port;
			snprintf(c->qname, sizeof(c->qname), "%s", e->n_names ? e->names[0] : "");
		}
	}
	return 0;
}

void pinsrc_drop(struct pinsrc *m, const char *sandbox, const struct pinsrc_cut *cut, size_t n)
{
	if (!m)
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t h = hash(sandbox, &cut[i].addr, cut[i].proto, cut[i].port);

		for (struct ent **pp = &m->b[h], *e; (e = *pp); pp = &e->next)
			if (e->proto == cut[i].proto && e->port == cut[i].port &&
			    addr_equal(&e->addr, &cut[i].addr) && strcmp(e->sandbox, sandbox) == 0) {
				*pp = e->next;
				ent_unlink(m, e);
				ent_free(e);
				m->n--;
				break;
			}
	}
}

size_t pinsrc_names(const struct pinsrc *m, const char *sandbox, const struct addr *a,
		    uint8_t proto, uint16_t port, uint64_t now_ms, const char **out)
{
	const struct ent *e;

	if (!m || !sandbox || !a)
		return 0;
	e = find(m, hash(sandbox, a, proto, port), sandbox, a, proto, port);
	if (!e || e->expires_ms <= now_ms)
		return 0;
	for (unsigned int i = 0; i < e->n_names; i++)
		out[i] = e->names[i];
	return e->n_names;
}

size_t pinsrc_count(const struct pinsrc *m)
{
	return m ? m->n : 0;
}

size_t pinsrc_count_of(const struct pinsrc *m, const char *sandbox)
{
	const struct sbh *h;

	if (!m || !sandbox || strlen(sandbox) > SANDBOX_NAME_MAX)
		return 0;
	h = *sbh_slot(m, sandbox);
	return h ? h->n : 0;
}
