/*
 * suggest_render - audit records -> a suggested policy (netd/cli/suggest.h),
 * second half: from the tables suggest_add() filled (netd/cli/suggest_int.h),
 * the names and addresses each connection accounts for, the wildcards
 * siblings collapse to (only when asked: SUGGEST_WILDCARDS), and the
 * YAML, every part sorted.  Pure: memory in,
 * a string out (open_memstream).
 */
#include "netd/cli/suggest.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/addr.h"
#include "common/special.h"
#include "netd/model/policy.h"
#include "netd/cli/suggest_int.h"

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

static bool pset_has(const struct sg_pset *p, uint32_t x)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i] == x)
			return true;
	return false;
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
	bool by_name;		/* names only: every port came from connections made to
				 * this name (not only to an address it resolved to) */
	struct addr addr;	/* cidr: the address */
	uint64_t conns, out, in, queries;
	bool counted;		/* some of @conns came with byte counts */
	size_t n_members;	/* names a wildcard stands for */
	const char *members[SG_WILD_SHOW];
};

struct sg_render {
	const struct suggest *s;
	unsigned int flags;	/* SUGGEST_WILDCARDS */
	struct sg_pset *npset;	/* per name: every port it is given */
	struct sg_pset *nnamed;	/* per name: ports of connections made to the name */
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
		if (pset_add(&rd->npset[d->name], d->proto, d->port) < 0 ||
		    pset_add(&rd->nnamed[d->name], d->proto, d->port) < 0)
			return -ENOMEM;
		rd->nstat[d->name][0] += d->conns;
		rd->nstat[d->name][1] += d->bytes_out;
		rd->nstat[d->name][2] += d->bytes_in;
		rd->nstat[d->name][3] |= d->counted;
		covered = true;
	}
	/*
	 * Every name that resolved to the address before the connection was
	 * made: its pin opens the address for the port anyway, so listing the
	 * port for each grants no more.  A name that answered only later does
	 * not account for it: enforced, that connection would find no pin.
	 */
	pos = sg_tab_find(&s->addr_tab, key);
	for (size_t i = 0; pos && i < s->addrs[*pos].n; i++) {
		const char *named = s->addrs[*pos].first[i];

		if (named[0] && d->first[0] && strcmp(named, d->first) > 0)
			continue;
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
	pos = sg_tab_find(&rd->cidr_tab, key);
	if (!pos) {
		if (sg_tab_put(&rd->cidr_tab, key, rd->n_cidr) < 0)
			return -ENOMEM;
		pos = sg_tab_find(&rd->cidr_tab, key);
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

/* May @m stand in a wildcard over its registrable domain @reg? */
static bool wild_member(const struct sg_item *m, const char *reg)
{
	/* A connection by address is credited to every name that resolved
	 * to the address (render_dest()); such a name was not seen used, so
	 * it never widens the suggestion (issue 30).  The registrable domain
	 * itself stays exact: a wildcard does not cover it. */
	return m->by_name && strcmp(m->pat, reg) != 0;
}

/* Only with SUGGEST_WILDCARDS: runs of >= SUGGEST_WILD_MIN names strictly
 * below one registrable domain, connected to by name, same protocol and
 * ports, become one "*.REG" item; the other names of the run stay exact. */
static void collapse(struct sg_render *rd)
{
	size_t w = 0;

	if (!(rd->flags & SUGGEST_WILDCARDS))
		return;
	qsort(rd->items, rd->n_items, sizeof(*rd->items), item_reg_cmp);
	for (size_t i = 0; i < rd->n_items;) {
		struct sg_item *a = &rd->items[i];
		size_t j = i, below = 0;
		char pat[sizeof(a->pat)], why[400];

		while (j < rd->n_items && !rd->items[j].cidr && a->reg && rd->items[j].reg &&
		       strcmp(rd->items[j].reg, a->reg) == 0 && rd->items[j].proto == a->proto &&
		       ports_cmp(&rd->items[j], a) == 0) {
			below += wild_member(&rd->items[j], a->reg);
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

				if (!wild_member(m, a->reg)) {
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

	sg_clean(source, src, sizeof(src));
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
	for (size_t i = 0; rd->nnamed && i < rd->s->n_names; i++)
		free(rd->nnamed[i].v);
	free(rd->nnamed);
	for (size_t i = 0; rd->cpset && i < rd->n_cidr; i++)
		free(rd->cpset[i].v);
	free(rd->npset);
	free(rd->nstat);
	free(rd->cpset);
	free(rd->citem);
	free(rd->items);
	sg_tab_done(&rd->cidr_tab);
}

/* Fold every destination into names and CIDR candidates, then make the items. */
static int render_plan(struct sg_render *rd)
{
	const struct suggest *s = rd->s;
	size_t nd = s->n_dests + s->n_flows, max_items;

	rd->npset = calloc(s->n_names + 1, sizeof(*rd->npset));
	rd->nnamed = calloc(s->n_names + 1, sizeof(*rd->nnamed));
	rd->nstat = calloc(s->n_names + 1, sizeof(*rd->nstat));
	rd->cpset = calloc(nd + 1, sizeof(*rd->cpset));
	rd->citem = calloc(nd + 1, sizeof(*rd->citem));
	if (!rd->npset || !rd->nnamed || !rd->nstat || !rd->cpset || !rd->citem)
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

		size_t first = rd->n_items;

		snprintf(t.pat, sizeof(t.pat), "%s", s->names[i].name);
		t.reg = policy_registrable_domain(s->names[i].name);
		items_from(rd, &rd->npset[i], &t);
		for (size_t k = first; k < rd->n_items; k++) {
			struct sg_item *it = &rd->items[k];

			it->by_name = true;
			for (size_t q = 0; q < it->n_ports; q++)
				if (!pset_has(&rd->nnamed[i], it->ports[q]))
					it->by_name = false;
		}
	}
	collapse(rd);
	for (size_t i = 0; i < rd->n_cidr; i++)
		items_from(rd, &rd->cpset[i], &rd->citem[i]);
	qsort(rd->items, rd->n_items, sizeof(*rd->items), item_cmp);
	return 0;
}

int suggest_render(const struct suggest *s, const char *name, const char *source,
		   unsigned int flags, char **ret, size_t *ret_len)
{
	struct sg_render rd = { .s = s, .flags = flags };
	FILE *f;
	int r;

	*ret = NULL;
	*ret_len = 0;
	if (!policy_name_valid(name) || (flags & ~SUGGEST_WILDCARDS))
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
