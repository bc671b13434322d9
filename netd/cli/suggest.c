/*
 * suggest - audit records -> a suggested policy (netd/cli/suggest.h), first
 * half: suggest_add() folds records into tables (names, destinations,
 * live flows, what was seen but is not to be suggested; netd/cli/suggest_int.h);
 * netd/cli/suggest_render.c's suggest_render() decides rules from the tables
 * and prints them sorted.  Nothing here trusts the log: every name goes
 * through policy_pattern_check(), every address through addr_parse(),
 * every string printed in a comment is reduced to printable ASCII.
 */
#include "netd/cli/suggest.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/addr.h"
#include "common/hash.h"
#include "common/reason.h"
#include "netd/model/policy.h"
#include "netd/cli/suggest_int.h"

/* ---- the string-keyed index (netd/cli/suggest_int.h) ----------------------- */

size_t *sg_tab_find(const struct sg_tab *t, const char *key)
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

static int sg_tab_grow(struct sg_tab *t)
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
int sg_tab_put(struct sg_tab *t, const char *key, size_t pos)
{
	size_t i;

	/* Load factor <= 1/2, so a free slot always ends a probe. */
	if ((!t->key || 2 * (t->n + 1) > t->mask + 1) && sg_tab_grow(t) < 0)
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

void sg_tab_done(struct sg_tab *t)
{
	for (size_t i = 0; t->key && i <= t->mask; i++)
		free(t->key[i]);
	free(t->key);
	free(t->pos);
}

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
	sg_tab_done(&s->name_tab);
	sg_tab_done(&s->dest_tab);
	sg_tab_done(&s->flow_tab);
	sg_tab_done(&s->addr_tab);
	sg_tab_done(&s->note_tab);
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
char *sg_clean(const char *s, char *buf, size_t sz)
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
	pos = sg_tab_find(&s->note_tab, key);
	if (pos) {
		s->notes[kind][*pos].count++;
		return;
	}
	if (s->n_notes[kind] == SG_SKIPPED_MAX || sg_tab_put(&s->note_tab, key, s->n_notes[kind]) < 0) {
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
	size_t *pos = sg_tab_find(&s->name_tab, name);
	struct sg_name *nn;

	if (pos)
		return (ssize_t)*pos;
	if (name[0] == '*' || policy_pattern_check(name, why, sizeof(why)) < 0) {
		snprintf(line, sizeof(line), "%s (not a policy name)", sg_clean(name, q, sizeof(q)));
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
	if (!nn->name || sg_tab_put(&s->name_tab, name, s->n_names) < 0) {
		free(nn->name);
		return -1;
	}
	return (ssize_t)s->n_names++;
}

/*
 * Keep in @have (SG_TS_MAX bytes) the earlier of it and @ts (audit time
 * stamps: string order is time order); "" (unknown) wins, so that what
 * has no time is never taken for later than anything.
 */
static void ts_keep_first(char *have, const char *ts)
{
	if (!have[0])
		return;
	if (!ts_ok(ts))
		have[0] = '\0';
	else if (strcmp(ts, have) < 0)
		snprintf(have, SG_TS_MAX, "%s", ts);
}

/* Remember that name @ni resolved to @a at @ts (the record's). */
static void addr_add(struct suggest *s, const struct addr *a, size_t ni, const char *ts)
{
	char key[ADDR_STRLEN];
	size_t *pos;
	struct sg_addr *x;

	addr_format(a, key, sizeof(key));
	pos = sg_tab_find(&s->addr_tab, key);
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
		if (sg_tab_put(&s->addr_tab, key, s->n_addrs) < 0)
			return;
		s->addrs[s->n_addrs].n = 0;
		pos = sg_tab_find(&s->addr_tab, key);
		s->n_addrs++;
	}
	x = &s->addrs[*pos];
	for (size_t i = 0; i < x->n; i++)
		if (x->names[i] == ni) {
			ts_keep_first(x->first[i], ts);
			return;
		}
	if (x->n < SG_ADDR_NAMES) {
		snprintf(x->first[x->n], SG_TS_MAX, "%s", ts_ok(ts) ? ts : "");
		x->names[x->n++] = (uint32_t)ni;
	}
}

/* Reasons the DNS path gives that are about the policy (docs/audit.md). */
static bool policy_reason(const char *r)
{
	switch (reason_dns_of(r)) {
	case REASON_DNS_POLICY:
	case REASON_DNS_NOT_IN_POLICY:
	case REASON_DNS_QNAME_TOO_LONG:
	case REASON_DNS_AUDIT_MODE:
		return true;
	default:
		return false;
	}
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
			addr_add(s, &ad, (size_t)ni, str(rec, "ts"));
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
		snprintf(line, sizeof(line), "%s to %s", sg_clean(proto, q, 16), sg_clean(dst, q + 16, 48));
		note(s, NOTE_OTHER_PROTO, line);
		return -1;
	}
	d->port = (uint16_t)port;
	/* When it started (conntrack's clock; the record's own time without it). */
	snprintf(d->first, sizeof(d->first), "%s",
		 ts_ok(str(rec, "start")) ? str(rec, "start") : ts_ok(str(rec, "ts")) ? str(rec, "ts") : "");
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
	pos = sg_tab_find(&s->dest_tab, key);
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
		if (sg_tab_put(&s->dest_tab, key, s->n_dests) < 0)
			return;
		s->dests[s->n_dests] = *d;
		s->dests[s->n_dests].conns = 0;
		s->dests[s->n_dests].bytes_out = s->dests[s->n_dests].bytes_in = 0;
		pos = sg_tab_find(&s->dest_tab, key);
		s->n_dests++;
	}
	x = &s->dests[*pos];
	x->conns += d->conns;
	x->bytes_out += d->bytes_out;
	x->bytes_in += d->bytes_in;
	x->counted |= d->counted;
	ts_keep_first(x->first, d->first);
}

static void flow_key(const json_t *rec, char *buf, size_t sz)
{
	char a[3][64];

	/* The 5-tuple: a conn_open's start is netd's clock, not conntrack's. */
	snprintf(buf, sz, "%s|%s|%lld|%s|%lld", sg_clean(str(rec, "proto"), a[0], 16),
		 sg_clean(str(rec, "src"), a[1], 48), (long long)num(rec, "sport"),
		 sg_clean(str(rec, "dst"), a[2], 48), (long long)num(rec, "dport"));
}

/* A live flow's interim counters: kept until its "conn" record replaces them. */
static void flow_update(struct suggest *s, const json_t *rec, const struct sg_dest *d,
			bool end)
{
	char key[300];
	size_t *pos;
	struct sg_flow *f;

	flow_key(rec, key, sizeof(key));
	pos = sg_tab_find(&s->flow_tab, key);
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
		if (sg_tab_put(&s->flow_tab, key, s->n_flows) < 0)
			return;
		pos = sg_tab_find(&s->flow_tab, key);
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
		/* Live (conn_update, or the conn_open conntrack's NEW event
		 * writes): counted once, unless its "conn" comes. */
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
		 addr_format(&d.dst, a, sizeof(a)), d.port, sg_clean(str(rec, "reason"), q, sizeof(q)));
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
