/*
 * suggest - audit records -> a suggested policy (netd/suggest.h).  Two
 * phases: suggest_add() folds records into tables (names, destinations,
 * live flows, what was seen but is not to be suggested); suggest_render()
 * decides rules from the tables and prints them sorted.  Nothing here
 * trusts the log: every name goes through policy_pattern_check(), every
 * address through addr_parse(), every string printed in a comment is
 * reduced to printable ASCII.
 */
#include "netd/suggest.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/addr.h"
#include "common/hash.h"
#include "common/special.h"
#include "netd/policy.h"

#define SG_ADDR_NAMES 16	/* names remembered per answer address */
#define SG_SKIPPED_MAX 32	/* seen-but-not-suggested lines kept, per kind */
#define SG_WILD_SHOW 4		/* names listed in a wildcard's comment */

/* ---- a string-keyed index: key -> position in an array ------------------ */

struct sg_tab {
	char **key;		/* owned; NULL = free */
	size_t *pos;
	size_t mask, n;		/* slots - 1 (0 = not allocated); keys stored */
};

static size_t *tab_find(const struct sg_tab *t, const char *key)
{
	if (!t->key)
		return NULL;
	for (size_t i = fnv64_str(FNV64_INIT, key) & t->mask;; i = (i + 1) & t->mask) {
		if (!t->key[i])
			return NULL;
		if (strcmp(t->key[i], key) == 0)
			return &t->pos[i];
	}
}

static int tab_grow(struct sg_tab *t)
{
	size_t slots = t->key ? 2 * (t->mask + 1) : 64;
	char **key = calloc(slots, sizeof(*key));
	size_t *pos = calloc(slots, sizeof(*pos));

	if (!key || !pos) {
		free(key);
		free(pos);
		return -ENOMEM;
	}
	for (size_t i = 0; t->key && i <= t->mask; i++) {
		size_t j;

		if (!t->key[i])
			continue;
		for (j = fnv64_str(FNV64_INIT, t->key[i]) & (slots - 1); key[j]; j = (j + 1) & (slots - 1))
			;
		key[j] = t->key[i];
		pos[j] = t->pos[i];
	}
	free(t->key);
	free(t->pos);
	t->key = key;
	t->pos = pos;
	t->mask = slots - 1;
	return 0;
}

/* Add @key (copied; not present yet) -> @pos.  Return: 0; -ENOMEM. */
static int tab_put(struct sg_tab *t, const char *key, size_t pos)
{
	size_t i;

	/* Load factor <= 1/2, so a free slot always ends a probe. */
	if ((!t->key || 2 * (t->n + 1) > t->mask + 1) && tab_grow(t) < 0)
		return -ENOMEM;
	for (i = fnv64_str(FNV64_INIT, key) & t->mask; t->key[i]; i = (i + 1) & t->mask)
		;
	t->key[i] = strdup(key);
	if (!t->key[i])
		return -ENOMEM;
	t->pos[i] = pos;
	t->n++;
	return 0;
}

static void tab_done(struct sg_tab *t)
{
	for (size_t i = 0; t->key && i <= t->mask; i++)
		free(t->key[i]);
	free(t->key);
	free(t->pos);
}

/* ---- the tables ------------------------------------------------------- */

struct sg_name {
	char *name;		/* owned; passed policy_pattern_check() */
	uint64_t queries;	/* dns records the policy (or audit mode) answered */
	uint64_t denied;	/* dns records the policy denied */
};

struct sg_dest {
	ssize_t name;		/* index into names, -1: no name (CIDR rule or none) */
	struct addr dst;
	uint8_t proto;		/* IPPROTO_TCP / IPPROTO_UDP */
	uint16_t port;
	uint64_t conns, bytes_out, bytes_in;
	bool counted;		/* bytes from conn/conn_update records (conn_open has none) */
};

/* A flow seen only in conn_update records so far (still live). */
struct sg_flow {
	struct sg_dest d;	/* conns = 1, the latest counters */
	bool ended;		/* its "conn" record came: counted there */
};

struct sg_addr {
	uint32_t names[SG_ADDR_NAMES];	/* indexes into names */
	size_t n;
};

struct sg_note {		/* seen, not suggested: one comment line */
	char text[160];
	uint64_t count;
};

enum sg_note_kind { NOTE_DENIED_CONN, NOTE_BAD_NAME, NOTE_OTHER_PROTO, NOTE_N };

struct suggest {
	char sandbox[POLICY_NAME_MAX + 1], policy[POLICY_NAME_MAX + 1];
	bool by_sandbox, by_policy;
	char since[40];

	struct sg_name *names;
	size_t n_names;
	struct sg_tab name_tab;
	struct sg_dest *dests;
	size_t n_dests;
	struct sg_tab dest_tab;
	struct sg_flow *flows;
	size_t n_flows;
	struct sg_tab flow_tab;
	struct sg_addr *addrs;	/* answer address -> names */
	size_t n_addrs;
	struct sg_tab addr_tab;
	struct sg_note notes[NOTE_N][SG_SKIPPED_MAX];
	size_t n_notes[NOTE_N];
	struct sg_tab note_tab;	/* "kind|text" -> index within the kind */

	uint64_t n_dns, n_conn, n_would_deny, n_over;	/* records used; over a limit */
	char first_ts[40], last_ts[40];
};

int suggest_new(const struct suggest_filter *f, struct suggest **ret)
{
	struct suggest *s = calloc(1, sizeof(*s));

	*ret = NULL;
	if (!s)
		return -ENOMEM;
	if (f && f->sandbox) {
		snprintf(s->sandbox, sizeof(s->sandbox), "%s", f->sandbox);
		s->by_sandbox = true;
	}
	if (f && f->policy) {
		snprintf(s->policy, sizeof(s->policy), "%s", f->policy);
		s->by_policy = true;
	}
	if (f)
		snprintf(s->since, sizeof(s->since), "%s", f->since);
	*ret = s;
	return 0;
}

void suggest_free(struct suggest *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_names; i++)
		free(s->names[i].name);
	free(s->names);
	free(s->dests);
	free(s->flows);
	free(s->addrs);
	tab_done(&s->name_tab);
	tab_done(&s->dest_tab);
	tab_done(&s->flow_tab);
	tab_done(&s->addr_tab);
	tab_done(&s->note_tab);
	free(s);
}

/* ---- reading records ---------------------------------------------------- */

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static uint64_t num(const json_t *o, const char *k)
{
	json_int_t v = json_integer_value(json_object_get(o, k));

	return v > 0 ? (uint64_t)v : 0;
}

/* @s reduced to printable ASCII (no quote, no backslash), at most @sz - 1 bytes. */
static char *clean(const char *s, char *buf, size_t sz)
{
	size_t j = 0;

	for (size_t i = 0; s && s[i] && j + 1 < sz; i++)
		buf[j++] = s[i] > ' ' && s[i] < 0x7f && s[i] != '"' && s[i] != '\\' ? s[i] : '?';
	buf[j] = '\0';
	return buf;
}

/* A timestamp as netd writes them: digits and RFC 3339 punctuation only. */
static bool ts_ok(const char *ts)
{
	size_t n = ts ? strlen(ts) : 0;

	if (n < 10 || n >= 40)
		return false;
	return strspn(ts, "0123456789-:.TZ") == n;
}

static void note(struct suggest *s, enum sg_note_kind kind, const char *text)
{
	char key[200];
	size_t *pos;

	snprintf(key, sizeof(key), "%d|%s", (int)kind, text);
	pos = tab_find(&s->note_tab, key);
	if (pos) {
		s->notes[kind][*pos].count++;
		return;
	}
	if (s->n_notes[kind] == SG_SKIPPED_MAX || tab_put(&s->note_tab, key, s->n_notes[kind]) < 0) {
		s->n_over++;
		return;
	}
	snprintf(s->notes[kind][s->n_notes[kind]].text, sizeof(s->notes[0][0].text), "%s", text);
	s->notes[kind][s->n_notes[kind]++].count = 1;
}

/* The name entry for @name (valid pattern, exact); created if new.  Return: index; -1. */
static ssize_t name_get(struct suggest *s, const char *name)
{
	char why[400], q[120], line[160];
	size_t *pos = tab_find(&s->name_tab, name);
	struct sg_name *nn;

	if (pos)
		return (ssize_t)*pos;
	if (name[0] == '*' || policy_pattern_check(name, why, sizeof(why)) < 0) {
		snprintf(line, sizeof(line), "%s (not a policy name)", clean(name, q, sizeof(q)));
		note(s, NOTE_BAD_NAME, line);
		return -1;
	}
	if (s->n_names == SUGGEST_MAX_NAMES) {
		s->n_over++;
		return -1;
	}
	if (s->n_names % 64 == 0) {
		nn = realloc(s->names, (s->n_names + 64) * sizeof(*nn));
		if (!nn)
			return -1;
		s->names = nn;
	}
	nn = &s->names[s->n_names];
	*nn = (struct sg_name){ .name = strdup(name) };
	if (!nn->name || tab_put(&s->name_tab, name, s->n_names) < 0) {
		free(nn->name);
		return -1;
	}
	return (ssize_t)s->n_names++;
}

/* Remember that name @ni resolved to @a. */
static void addr_add(struct suggest *s, const struct addr *a, size_t ni)
{
	char key[ADDR_STRLEN];
	size_t *pos;
	struct sg_addr *x;

	addr_format(a, key, sizeof(key));
	pos = tab_find(&s->addr_tab, key);
	if (!pos) {
		if (s->n_addrs == SUGGEST_MAX_DESTS) {
			s->n_over++;
			return;
		}
		if (s->n_addrs % 64 == 0) {
			x = realloc(s->addrs, (s->n_addrs + 64) * sizeof(*x));
			if (!x)
				return;
			s->addrs = x;
		}
		if (tab_put(&s->addr_tab, key, s->n_addrs) < 0)
			return;
		s->addrs[s->n_addrs].n = 0;
		pos = tab_find(&s->addr_tab, key);
		s->n_addrs++;
	}
	x = &s->addrs[*pos];
	for (size_t i = 0; i < x->n; i++)
		if (x->names[i] == ni)
			return;
	if (x->n < SG_ADDR_NAMES)
		x->names[x->n++] = (uint32_t)ni;
}

/* Reasons the DNS path gives that are about the policy (docs/audit.md). */
static bool policy_reason(const char *r)
{
	return r && (strcmp(r, "policy") == 0 || strcmp(r, "not-in-policy") == 0 ||
		     strcmp(r, "qname-too-long") == 0 || strcmp(r, "audit-mode") == 0);
}

static int add_dns(struct suggest *s, const json_t *rec)
{
	const char *qname = str(rec, "qname"), *verdict = str(rec, "verdict");
	const json_t *ans = json_object_get(rec, "answers"), *a;
	ssize_t ni;
	size_t i;

	if (!qname || !verdict || !policy_reason(str(rec, "reason")))
		return 0;
	ni = name_get(s, qname);
	if (ni < 0)
		return 1;
	if (strcmp(verdict, "allow") != 0) {
		s->names[ni].denied++;
		return 1;
	}
	s->names[ni].queries++;
	json_array_foreach(ans, i, a) {
		struct addr ad;

		if (json_is_string(a) && addr_parse(json_string_value(a), &ad) == 0)
			addr_add(s, &ad, (size_t)ni);
	}
	return 1;
}

/* The addressing of a conn/conn_update/deny record.  Return: 0; -1 (unusable). */
static int rec_dest(struct suggest *s, const json_t *rec, struct sg_dest *d)
{
	const char *proto = str(rec, "proto"), *dst = str(rec, "dst"), *dom = str(rec, "domain");
	json_int_t port = json_integer_value(json_object_get(rec, "dport"));
	char q[64], line[160];

	*d = (struct sg_dest){ .name = -1 };
	if (!proto || !dst || addr_parse(dst, &d->dst) < 0)
		return -1;
	if (strcmp(proto, "tcp") == 0)
		d->proto = IPPROTO_TCP;
	else if (strcmp(proto, "udp") == 0)
		d->proto = IPPROTO_UDP;
	if (!d->proto || port < 1 || port > 65535) {
		/* A policy allows TCP and UDP ports; say what else was used. */
		snprintf(line, sizeof(line), "%s to %s", clean(proto, q, 16), clean(dst, q + 16, 48));
		note(s, NOTE_OTHER_PROTO, line);
		return -1;
	}
	d->port = (uint16_t)port;
	/* "domain" is a pinned name, or the CIDR rule that allowed the address. */
	if (dom && !strchr(dom, '/'))
		d->name = name_get(s, dom);
	return 0;
}

static void dest_key(const struct sg_dest *d, char *buf, size_t sz)
{
	char a[ADDR_STRLEN];

	snprintf(buf, sz, "%u|%s|%u|%zd", d->proto, addr_format(&d->dst, a, sizeof(a)), d->port,
		 d->name);
}

static void dest_add(struct suggest *s, const struct sg_dest *d)
{
	char key[128];
	size_t *pos;
	struct sg_dest *x;

	dest_key(d, key, sizeof(key));
	pos = tab_find(&s->dest_tab, key);
	if (!pos) {
		if (s->n_dests == SUGGEST_MAX_DESTS) {
			s->n_over++;
			return;
		}
		if (s->n_dests % 64 == 0) {
			x = realloc(s->dests, (s->n_dests + 64) * sizeof(*x));
			if (!x)
				return;
			s->dests = x;
		}
		if (tab_put(&s->dest_tab, key, s->n_dests) < 0)
			return;
		s->dests[s->n_dests] = *d;
		s->dests[s->n_dests].conns = 0;
		s->dests[s->n_dests].bytes_out = s->dests[s->n_dests].bytes_in = 0;
		pos = tab_find(&s->dest_tab, key);
		s->n_dests++;
	}
	x = &s->dests[*pos];
	x->conns += d->conns;
	x->bytes_out += d->bytes_out;
	x->bytes_in += d->bytes_in;
	x->counted |= d->counted;
}

static void flow_key(const json_t *rec, char *buf, size_t sz)
{
	char a[3][64];

	/* The 5-tuple: conn_open records (nflog) have no conntrack start time. */
	snprintf(buf, sz, "%s|%s|%lld|%s|%lld", clean(str(rec, "proto"), a[0], 16),
		 clean(str(rec, "src"), a[1], 48), (long long)num(rec, "sport"),
		 clean(str(rec, "dst"), a[2], 48), (long long)num(rec, "dport"));
}

/* A live flow's interim counters: kept until its "conn" record replaces them. */
static void flow_update(struct suggest *s, const json_t *rec, const struct sg_dest *d,
			bool end)
{
	char key[300];
	size_t *pos;
	struct sg_flow *f;

	flow_key(rec, key, sizeof(key));
	pos = tab_find(&s->flow_tab, key);
	if (!pos) {
		if (end)
			return;
		if (s->n_flows == SUGGEST_MAX_FLOWS) {
			s->n_over++;
			return;
		}
		if (s->n_flows % 64 == 0) {
			f = realloc(s->flows, (s->n_flows + 64) * sizeof(*f));
			if (!f)
				return;
			s->flows = f;
		}
		if (tab_put(&s->flow_tab, key, s->n_flows) < 0)
			return;
		pos = tab_find(&s->flow_tab, key);
		s->flows[s->n_flows++] = (struct sg_flow){ .d = { .name = -1 } };
	}
	f = &s->flows[*pos];
	if (end)
		f->ended = true;
	else if (!f->ended && (d->counted || !f->d.counted))
		f->d = *d;	/* a conn_open after a conn_update adds nothing */
}

static int add_conn(struct suggest *s, const json_t *rec, bool end)
{
	struct sg_dest d;

	if (rec_dest(s, rec, &d) < 0)
		return 1;
	d.conns = 1;
	d.bytes_out = num(rec, "bytes_out");
	d.bytes_in = num(rec, "bytes_in");
	d.counted = json_is_integer(json_object_get(rec, "bytes_out"));
	if (end) {
		dest_add(s, &d);
		flow_update(s, rec, &d, true);
		s->n_conn++;
	} else {
		/* Live (conn_update, or the conn_open an audit-mode sandbox's
		 * first packet writes): counted once, unless its "conn" comes. */
		flow_update(s, rec, &d, false);
	}
	return 1;
}

/* A packet the policy in force dropped: seen, not suggested. */
static int add_deny(struct suggest *s, const json_t *rec)
{
	struct sg_dest d;
	char a[ADDR_STRLEN], q[64], line[160];

	if (rec_dest(s, rec, &d) < 0)
		return 1;
	snprintf(line, sizeof(line), "%s %s:%u (%s)", d.proto == IPPROTO_TCP ? "tcp" : "udp",
		 addr_format(&d.dst, a, sizeof(a)), d.port, clean(str(rec, "reason"), q, sizeof(q)));
	note(s, NOTE_DENIED_CONN, line);
	return 1;
}

int suggest_add(struct suggest *s, const json_t *rec)
{
	const char *ev = str(rec, "event"), *ts = str(rec, "ts");
	int r;

	if (!json_is_object(rec) || !ev)
		return 0;
	if (s->by_sandbox && (!str(rec, "sandbox") || strcmp(str(rec, "sandbox"), s->sandbox)))
		return 0;
	if (s->by_policy && (!str(rec, "policy") || strcmp(str(rec, "policy"), s->policy)))
		return 0;
	/* Same format everywhere (UTC, "Z"): string order is time order. */
	if (s->since[0] && (!ts || strcmp(ts, s->since) < 0))
		return 0;
	if (strcmp(ev, "dns") == 0)
		r = add_dns(s, rec);
	else if (strcmp(ev, "conn") == 0)
		r = add_conn(s, rec, true);
	else if (strcmp(ev, "conn_update") == 0 || strcmp(ev, "conn_open") == 0)
		r = add_conn(s, rec, false);
	else if (strcmp(ev, "deny") == 0)
		r = add_deny(s, rec);
	else
		return 0;
	if (r <= 0)
		return r;
	if (strcmp(ev, "dns") == 0)
		s->n_dns++;
	if (str(rec, "would_deny"))
		s->n_would_deny++;
	if (ts_ok(ts)) {
		if (!s->first_ts[0] || strcmp(ts, s->first_ts) < 0)
			snprintf(s->first_ts, sizeof(s->first_ts), "%s", ts);
		if (strcmp(ts, s->last_ts) > 0)
			snprintf(s->last_ts, sizeof(s->last_ts), "%s", ts);
	}
	return 1;
}

/* ---- rendering ---------------------------------------------------------- */

/* A set of (proto << 16 | port), sorted, no duplicates. */
struct sg_pset {
	uint32_t *v;
	size_t n, cap;
};

static int pset_add(struct sg_pset *p, uint8_t proto, uint16_t port)
{
	uint32_t x = (uint32_t)proto << 16 | port;
	size_t i;

	for (i = 0; i < p->n && p->v[i] < x; i++)
		;
	if (i < p->n && p->v[i] == x)
		return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4;
		uint32_t *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	memmove(p->v + i + 1, p->v + i, (p->n - i) * sizeof(*p->v));
	p->v[i] = x;
	p->n++;
	return 0;
}

/* One line of a rule: a name, a wildcard or an address, for one protocol. */
struct sg_item {
	char pat[POLICY_NAME_MAX + 260];	/* "api.example.com", "*.example.com", "198.51.100.7/32" */
	uint8_t proto;
	const uint32_t *ports;	/* into a pset: the entries of @proto */
	size_t n_ports;
	const char *reg;	/* registrable domain (names only), borrowed; NULL = none */
	bool cidr;
	ssize_t ni;		/* names only: index into the names */
	struct addr addr;	/* cidr: the address */
	uint64_t conns, out, in, queries;
	bool counted;		/* some of @conns came with byte counts */
	size_t n_members;	/* names a wildcard stands for */
	const char *members[SG_WILD_SHOW];
};

struct sg_render {
	const struct suggest *s;
	struct sg_pset *npset;	/* per name */
	uint64_t (*nstat)[4];	/* per name: conns, bytes out, bytes in, counted */
	struct sg_pset *cpset;	/* per CIDR candidate */
	struct sg_item *citem;	/* per CIDR candidate: address and counts */
	size_t n_cidr;
	struct sg_tab cidr_tab;
	struct sg_note nopin[SG_SKIPPED_MAX];
	size_t n_nopin;
	struct sg_item *items;
	size_t n_items;
};

static int ports_cmp(const struct sg_item *a, const struct sg_item *b)
{
	for (size_t i = 0; i < a->n_ports && i < b->n_ports; i++)
		if (a->ports[i] != b->ports[i])
			return a->ports[i] < b->ports[i] ? -1 : 1;
	return a->n_ports < b->n_ports ? -1 : a->n_ports > b->n_ports;
}

/* Rules order: names before addresses, TCP before UDP, port sets; then the line. */
static int item_cmp(const void *x, const void *y)
{
	const struct sg_item *a = x, *b = y;
	int c;

	if (a->cidr != b->cidr)
		return a->cidr ? 1 : -1;
	if (a->proto != b->proto)
		return a->proto < b->proto ? -1 : 1;
	c = ports_cmp(a, b);
	if (c)
		return c;
	if (a->cidr) {
		if (a->addr.family != b->addr.family)
			return a->addr.family < b->addr.family ? -1 : 1;
		return memcmp(a->addr.a, b->addr.a, sizeof(a->addr.a));
	}
	return strcmp(a->pat, b->pat);
}

/* For the wildcard pass: group by registrable domain within a port set. */
static int item_reg_cmp(const void *x, const void *y)
{
	const struct sg_item *a = x, *b = y;
	int c;

	if (a->cidr != b->cidr || a->proto != b->proto || (c = ports_cmp(a, b)) != 0)
		return item_cmp(x, y);
	c = strcmp(a->reg ? a->reg : "", b->reg ? b->reg : "");
	return c ? c : strcmp(a->pat, b->pat);
}

/* A connection (or a live flow) @d: to the names that account for it, else a CIDR candidate. */
static int render_dest(struct sg_render *rd, const struct sg_dest *d)
{
	const struct suggest *s = rd->s;
	char key[ADDR_STRLEN];
	const size_t *pos;
	bool covered = false;
	struct special_hit hit;

	addr_format(&d->dst, key, sizeof(key));
	if (d->name >= 0) {
		if (pset_add(&rd->npset[d->name], d->proto, d->port) < 0)
			return -ENOMEM;
		rd->nstat[d->name][0] += d->conns;
		rd->nstat[d->name][1] += d->bytes_out;
		rd->nstat[d->name][2] += d->bytes_in;
		rd->nstat[d->name][3] |= d->counted;
		covered = true;
	}
	/* Every name that resolved to the address: its pin opens the address
	 * for the port anyway, so listing the port for each grants no more. */
	pos = tab_find(&s->addr_tab, key);
	for (size_t i = 0; pos && i < s->addrs[*pos].n; i++) {
		if (pset_add(&rd->npset[s->addrs[*pos].names[i]], d->proto, d->port) < 0)
			return -ENOMEM;
		covered = true;
	}
	if (covered)
		return 0;
	if (special_find(&d->dst, 0, &hit)) {
		struct sg_note *n = NULL;

		for (size_t i = 0; i < rd->n_nopin; i++)
			if (strncmp(rd->nopin[i].text, key, strlen(key)) == 0 &&
			    rd->nopin[i].text[strlen(key)] == ' ')
				n = &rd->nopin[i];
		if (!n && rd->n_nopin < SG_SKIPPED_MAX) {
			n = &rd->nopin[rd->n_nopin++];
			snprintf(n->text, sizeof(n->text), "%s (in %s of the never-pin table)", key,
				 hit.entry->cidr);
		}
		if (n)
			n->count += d->conns;
		return 0;
	}
	pos = tab_find(&rd->cidr_tab, key);
	if (!pos) {
		if (tab_put(&rd->cidr_tab, key, rd->n_cidr) < 0)
			return -ENOMEM;
		pos = tab_find(&rd->cidr_tab, key);
		rd->citem[rd->n_cidr] = (struct sg_item){ .cidr = true, .addr = d->dst };
		snprintf(rd->citem[rd->n_cidr].pat, sizeof(rd->citem[0].pat), "%s/%u", key,
			 d->dst.family == AF_INET ? 32 : 128);
		rd->n_cidr++;
	}
	rd->citem[*pos].conns += d->conns;
	rd->citem[*pos].out += d->bytes_out;
	rd->citem[*pos].in += d->bytes_in;
	rd->citem[*pos].counted |= d->counted;
	return pset_add(&rd->cpset[*pos], d->proto, d->port);
}

/* Split @p into one item per protocol, from @tmpl. */
static void items_from(struct sg_render *rd, const struct sg_pset *p, const struct sg_item *tmpl)
{
	for (size_t i = 0; i < p->n;) {
		size_t j = i;
		struct sg_item *it = &rd->items[rd->n_items++];

		while (j < p->n && p->v[j] >> 16 == p->v[i] >> 16)
			j++;
		*it = *tmpl;
		it->proto = (uint8_t)(p->v[i] >> 16);
		it->ports = p->v + i;
		it->n_ports = j - i;
		i = j;
	}
}

/* Runs of >= SUGGEST_WILD_MIN names strictly below one registrable domain,
 * same protocol and ports, become one "*.REG" item. */
static void collapse(struct sg_render *rd)
{
	size_t w = 0;

	qsort(rd->items, rd->n_items, sizeof(*rd->items), item_reg_cmp);
	for (size_t i = 0; i < rd->n_items;) {
		struct sg_item *a = &rd->items[i];
		size_t j = i, below = 0;
		char pat[sizeof(a->pat)], why[400];

		while (j < rd->n_items && !rd->items[j].cidr && a->reg && rd->items[j].reg &&
		       strcmp(rd->items[j].reg, a->reg) == 0 && rd->items[j].proto == a->proto &&
		       ports_cmp(&rd->items[j], a) == 0) {
			below += strcmp(rd->items[j].pat, a->reg) != 0;
			j++;
		}
		snprintf(pat, sizeof(pat), "*.%s", a->reg ? a->reg : "");
		if (j == i || below < SUGGEST_WILD_MIN || policy_pattern_check(pat, why, sizeof(why))) {
			rd->items[w++] = rd->items[i++];
			continue;
		}
		{
			struct sg_item wild = *a;

			snprintf(wild.pat, sizeof(wild.pat), "%s", pat);
			wild.conns = wild.out = wild.in = wild.queries = 0;
			wild.n_members = 0;
			for (size_t k = i; k < j; k++) {
				struct sg_item *m = &rd->items[k];

				if (strcmp(m->pat, a->reg) == 0) {	/* the domain itself stays exact */
					rd->items[w++] = *m;
					continue;
				}
				if (wild.n_members < SG_WILD_SHOW)
					wild.members[wild.n_members] = rd->s->names[m->ni].name;
				wild.n_members++;
				wild.conns += m->conns;
				wild.counted |= m->counted;
				wild.out += m->out;
				wild.in += m->in;
				wild.queries += m->queries;
			}
			rd->items[w++] = wild;
		}
		i = j;
	}
	rd->n_items = w;
}

static void print_counts(FILE *f, const struct sg_item *it)
{
	fprintf(f, "# %llu conn%s", (unsigned long long)it->conns, it->conns == 1 ? "" : "s");
	if (it->counted)
		fprintf(f, ", %llu B out, %llu B in", (unsigned long long)it->out,
			(unsigned long long)it->in);
	else if (it->conns)
		fprintf(f, " (no byte counts yet)");
	if (!it->cidr)
		fprintf(f, ", %llu quer%s", (unsigned long long)it->queries,
			it->queries == 1 ? "y" : "ies");
	if (it->n_members) {
		fprintf(f, "; %zu names:", it->n_members);
		for (size_t k = 0; k < it->n_members && k < SG_WILD_SHOW; k++)
			fprintf(f, " %s", it->members[k]);
		if (it->n_members > SG_WILD_SHOW)
			fprintf(f, " +%zu more", it->n_members - SG_WILD_SHOW);
	}
	if (it->cidr)
		fprintf(f, "; connected to without a name");
	fputc('\n', f);
}

/* The rules: items sorted, one rule per run of equal (kind, protocol, ports). */
static void print_rules(FILE *f, const struct sg_render *rd)
{
	for (size_t i = 0; i < rd->n_items;) {
		const struct sg_item *a = &rd->items[i];
		size_t j = i, width = 0;

		while (j < rd->n_items && rd->items[j].cidr == a->cidr &&
		       rd->items[j].proto == a->proto && ports_cmp(&rd->items[j], a) == 0) {
			size_t l = strlen(rd->items[j].pat);

			width = l > width ? l : width;
			j++;
		}
		width = width > 40 ? 40 : width;
		fprintf(f, "  - %s:\n", a->cidr ? "cidrs" : "domains");
		for (size_t k = i; k < j; k++) {
			/* Quoted: "*" starts an alias in YAML, and no name becomes a bool. */
			fprintf(f, "      - \"%s\"%*s  ", rd->items[k].pat,
				(int)(width - (strlen(rd->items[k].pat) < width ? strlen(rd->items[k].pat)
										 : width)), "");
			print_counts(f, &rd->items[k]);
		}
		fprintf(f, "    ports: [");
		for (size_t k = 0; k < a->n_ports; k++)
			fprintf(f, "%s%u", k ? ", " : "", a->ports[k] & 0xffffu);
		fprintf(f, "]\n    protocol: %s\n", a->proto == IPPROTO_UDP ? "udp" : "tcp");
		i = j;
	}
}

static int note_cmp(const void *x, const void *y)
{
	return strcmp(((const struct sg_note *)x)->text, ((const struct sg_note *)y)->text);
}

static int name_idx_cmp(const void *x, const void *y, void *ctx)
{
	const struct suggest *s = ctx;

	return strcmp(s->names[*(const size_t *)x].name, s->names[*(const size_t *)y].name);
}

/* The comment block after the rules: sorted, so the order records came in does not show. */
static void print_notes(FILE *f, struct sg_render *rd)
{
	static const char *const what[NOTE_N] = {
		[NOTE_DENIED_CONN] = "dropped by netd",
		[NOTE_BAD_NAME] = "names no policy can list",
		[NOTE_OTHER_PROTO] = "traffic other than TCP/UDP ports",
	};
	const struct suggest *s = rd->s;
	struct sg_note sorted[SG_SKIPPED_MAX];
	size_t *order = calloc(s->n_names + 1, sizeof(*order));
	bool head = false;

#define NOTE_HEAD() do { if (!head) fprintf(f, "#\n# Seen but not suggested (review):\n"); head = true; } while (0)
	for (size_t i = 0; order && i < s->n_names; i++)
		order[i] = i;
	if (order)
		qsort_r(order, s->n_names, sizeof(*order), name_idx_cmp, (void *)s);
	for (size_t k = 0; order && k < s->n_names; k++) {
		const struct sg_name *n = &s->names[order[k]];

		if (rd->npset[order[k]].n)
			continue;
		NOTE_HEAD();
		if (n->queries)
			fprintf(f, "#   resolved, never connected to: %s (%llu quer%s)\n", n->name,
				(unsigned long long)n->queries, n->queries == 1 ? "y" : "ies");
		else if (n->denied)
			fprintf(f, "#   denied by the policy in force: %s (%llu quer%s)\n", n->name,
				(unsigned long long)n->denied, n->denied == 1 ? "y" : "ies");
	}
	free(order);
	qsort(rd->nopin, rd->n_nopin, sizeof(*rd->nopin), note_cmp);
	for (size_t i = 0; i < rd->n_nopin; i++) {
		NOTE_HEAD();
		fprintf(f, "#   never-pin address: %s, %llu conn%s\n", rd->nopin[i].text,
			(unsigned long long)rd->nopin[i].count, rd->nopin[i].count == 1 ? "" : "s");
	}
	for (int k = 0; k < NOTE_N; k++) {
		memcpy(sorted, s->notes[k], s->n_notes[k] * sizeof(*sorted));
		qsort(sorted, s->n_notes[k], sizeof(*sorted), note_cmp);
		for (size_t i = 0; i < s->n_notes[k]; i++) {
			NOTE_HEAD();
			fprintf(f, "#   %s: %s (%llu)\n", what[k], sorted[i].text,
				(unsigned long long)sorted[i].count);
		}
	}
	if (s->n_over) {
		NOTE_HEAD();
		fprintf(f, "#   %llu records or entries over suggest's limits were left out\n",
			(unsigned long long)s->n_over);
	}
#undef NOTE_HEAD
}

static void print_header(FILE *f, const struct suggest *s, const char *name, const char *source)
{
	char src[200], scope[120];
	uint64_t conns = s->n_conn;

	for (size_t i = 0; i < s->n_flows; i++)
		conns += !s->flows[i].ended;	/* still open, or ended after the log */

	clean(source, src, sizeof(src));
	if (s->by_sandbox)
		snprintf(scope, sizeof(scope), "sandbox %s", s->sandbox);
	else if (s->by_policy)
		snprintf(scope, sizeof(scope), "policy %s", s->policy);
	else
		snprintf(scope, sizeof(scope), "all sandboxes");
	fprintf(f, "# Suggested by `netd policy suggest` from what %s used, as the audit log\n"
		"# %s shows (%s to %s): %llu DNS record%s, %llu connection%s",
		scope, src[0] ? src : "-", s->first_ts[0] ? s->first_ts : "-",
		s->last_ts[0] ? s->last_ts : "-", (unsigned long long)s->n_dns,
		s->n_dns == 1 ? "" : "s", (unsigned long long)conns, conns == 1 ? "" : "s");
	if (s->n_would_deny)
		fprintf(f, ", %llu marked would_deny", (unsigned long long)s->n_would_deny);
	fprintf(f, ".\n# Review every line, then `netd policy check` it and install it in policy_dir.\n"
		"name: %s\ndescription: \"suggested from the audit log of %s\"\n", name, scope);
}

static void render_done(struct sg_render *rd)
{
	for (size_t i = 0; rd->npset && i < rd->s->n_names; i++)
		free(rd->npset[i].v);
	for (size_t i = 0; rd->cpset && i < rd->n_cidr; i++)
		free(rd->cpset[i].v);
	free(rd->npset);
	free(rd->nstat);
	free(rd->cpset);
	free(rd->citem);
	free(rd->items);
	tab_done(&rd->cidr_tab);
}

/* Fold every destination into names and CIDR candidates, then make the items. */
static int render_plan(struct sg_render *rd)
{
	const struct suggest *s = rd->s;
	size_t nd = s->n_dests + s->n_flows, max_items;

	rd->npset = calloc(s->n_names + 1, sizeof(*rd->npset));
	rd->nstat = calloc(s->n_names + 1, sizeof(*rd->nstat));
	rd->cpset = calloc(nd + 1, sizeof(*rd->cpset));
	rd->citem = calloc(nd + 1, sizeof(*rd->citem));
	if (!rd->npset || !rd->nstat || !rd->cpset || !rd->citem)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_dests; i++)
		if (render_dest(rd, &s->dests[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < s->n_flows; i++)
		if (!s->flows[i].ended && render_dest(rd, &s->flows[i].d) < 0)
			return -ENOMEM;
	/* At most two items (TCP, UDP) per name and per address. */
	max_items = 2 * (s->n_names + rd->n_cidr) + 1;
	rd->items = calloc(max_items, sizeof(*rd->items));
	if (!rd->items)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_names; i++) {
		struct sg_item t = { .ni = (ssize_t)i, .conns = rd->nstat[i][0],
				     .out = rd->nstat[i][1], .in = rd->nstat[i][2],
				     .counted = rd->nstat[i][3] != 0,
				     .queries = s->names[i].queries };

		snprintf(t.pat, sizeof(t.pat), "%s", s->names[i].name);
		t.reg = policy_registrable_domain(s->names[i].name);
		items_from(rd, &rd->npset[i], &t);
	}
	collapse(rd);
	for (size_t i = 0; i < rd->n_cidr; i++)
		items_from(rd, &rd->cpset[i], &rd->citem[i]);
	qsort(rd->items, rd->n_items, sizeof(*rd->items), item_cmp);
	return 0;
}

int suggest_render(const struct suggest *s, const char *name, const char *source, char **ret,
		   size_t *ret_len)
{
	struct sg_render rd = { .s = s };
	FILE *f;
	int r;

	*ret = NULL;
	*ret_len = 0;
	if (!policy_name_valid(name))
		return -EINVAL;
	r = render_plan(&rd);
	if (r < 0) {
		render_done(&rd);
		return r;
	}
	f = open_memstream(ret, ret_len);
	if (!f) {
		render_done(&rd);
		return -ENOMEM;
	}
	print_header(f, s, name, source);
	if (rd.n_items == 0)
		fprintf(f, "egress: []    # nothing was used\n");
	else
		fprintf(f, "egress:\n");
	print_rules(f, &rd);
	print_notes(f, &rd);
	render_done(&rd);
	if (fclose(f) != 0 || !*ret) {
		free(*ret);
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}
