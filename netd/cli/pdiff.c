/*
 * pdiff - audit records replayed against proposed policies
 * (netd/cli/pdiff.h): each record's own decision against the one the daemon
 * would take under the proposed policy, the differences folded per
 * (policy, sandbox, what) with counts and first/last times.  Nothing here
 * trusts the log: names are decided by the proxy's own decision (a name
 * with odd bytes never matches), addresses go through addr_parse(), every
 * table is bounded.  The tables are jansson objects (hashed by key); the
 * report sorts what it takes from them.
 */
#include "netd/cli/pdiff.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/addr.h"
#include "common/reason.h"
#include "common/special.h"
#include "dnsproxy/decide.h"
#include "dnsproxy/wire.h"
#include "netd/model/policy_dns.h"

struct pdiff {
	const struct policy **pols;	/* owned array, borrowed policies */
	size_t n_pols;
	char *sandbox, *policy;		/* owned copies of the filters; NULL = any */
	char since[40];
	bool any_policy;
	json_t *groups;		/* "recorded-policy\nsandbox" -> group (see group_get()) */
	json_t *flows;		/* "sandbox\n5-tuple" -> true while live, false once ended */
	json_t *addrs;		/* "sandbox\naddress" -> the last name resolved to it */
	json_t *others;		/* policy not proposed -> records */
	size_t n_changes;
	uint64_t newly_denied, newly_allowed;
	uint64_t not_policy;	/* records whose decision was not the policy's */
	uint64_t other_proto;	/* connections other than TCP/UDP with a port */
	uint64_t unusable;	/* records missing what a decision needs */
	uint64_t over;		/* what did not fit the PDIFF_MAX_* bounds */
};

/* One decision: what was done, or what would be. */
struct pd_verdict {
	bool allow;
	ssize_t rule;		/* allow: the rule of the proposed policy; else -1 */
	const char *why;	/* deny: a reason word (static) */
};

int pdiff_new(const struct policy *const *pols, size_t n, const struct pdiff_opts *o,
	      struct pdiff **ret)
{
	struct pdiff *d;

	*ret = NULL;
	if (n == 0 || (o && o->any_policy && n != 1))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(pols[i]->name, pols[j]->name) == 0)
				return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->pols = malloc(n * sizeof(*d->pols));
	d->groups = json_object();
	d->flows = json_object();
	d->addrs = json_object();
	d->others = json_object();
	if (o && o->sandbox)
		d->sandbox = strdup(o->sandbox);
	if (o && o->policy)
		d->policy = strdup(o->policy);
	if (!d->pols || !d->groups || !d->flows || !d->addrs || !d->others ||
	    (o && o->sandbox && !d->sandbox) || (o && o->policy && !d->policy)) {
		pdiff_free(d);
		return -ENOMEM;
	}
	memcpy(d->pols, pols, n * sizeof(*d->pols));
	d->n_pols = n;
	if (o) {
		snprintf(d->since, sizeof(d->since), "%s", o->since);
		d->any_policy = o->any_policy;
	}
	*ret = d;
	return 0;
}

void pdiff_free(struct pdiff *d)
{
	if (!d)
		return;
	free(d->pols);
	free(d->sandbox);
	free(d->policy);
	json_decref(d->groups);
	json_decref(d->flows);
	json_decref(d->addrs);
	json_decref(d->others);
	free(d);
}

/* ---- small helpers -------------------------------------------------------- */

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* Add @by to integer member @k of @o (created at 0).  Return: 0; -ENOMEM. */
static int bump(json_t *o, const char *k, json_int_t by)
{
	json_t *v = json_object_get(o, k);

	if (v)
		return json_integer_set(v, json_integer_value(v) + by);
	return json_object_set_new(o, k, json_integer(by));
}

/* A timestamp as netd writes them: digits and RFC 3339 punctuation only. */
static bool ts_ok(const char *ts)
{
	size_t n = ts ? strlen(ts) : 0;

	return n >= 10 && n < 40 && strspn(ts, "0123456789-:.TZ") == n;
}

/*
 * When a record's decision was taken: a connection's "start" (a deny's
 * "first"), else "ts".  Same format everywhere (UTC, "Z"): string order
 * is time order.  NULL if neither is a timestamp.
 */
static const char *rec_time(const json_t *rec, const char *ev)
{
	const char *t = str(rec, strcmp(ev, "deny") == 0 ? "first" : "start");

	if (strcmp(ev, "dns") != 0 && ts_ok(t))
		return t;
	t = str(rec, "ts");
	return ts_ok(t) ? t : NULL;
}

/* The proposed policy for records of @recorded; NULL: none proposed. */
static const struct policy *policy_for(const struct pdiff *d, const char *recorded)
{
	if (d->any_policy)
		return d->pols[0];
	for (size_t i = 0; i < d->n_pols; i++)
		if (strcmp(d->pols[i]->name, recorded) == 0)
			return d->pols[i];
	return NULL;
}

/* ---- the decisions, as the daemon takes them ------------------------------ */

/* Labels of only [a-z0-9_-] (wire.c's "plain"), none empty; *@labels counted. */
static bool name_plain(const char *name, unsigned int *labels)
{
	size_t len = 0;

	*labels = 0;
	for (const char *c = name;; c++) {
		if (*c == '.' || *c == '\0') {
			if (len == 0)
				return *c == '\0' && *labels == 0 && c == name;	/* "" */
			(*labels)++;
			len = 0;
			if (*c == '\0')
				return true;
			continue;
		}
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
		      *c == '_'))
			return false;
		len++;
	}
}

/* The proxy's decision on @name under @p: decide_query() over policy_dns_view(). */
static enum decide_verdict name_decide(const struct policy *p, const char *name,
				       uint16_t *rules, size_t *n_rules)
{
	struct decide_policy view = policy_dns_view(p);
	struct decide_ctx c = { .policy = &view };
	struct wire_query q = { .qclass = WIRE_CLASS_IN };
	size_t len = strlen(name);

	*n_rules = 0;
	if (len >= sizeof(q.qname))
		return DECIDE_DENY_NAME;
	memcpy(q.qname, name, len + 1);
	q.qname_plain = name_plain(name, &q.qname_labels);
	return decide_query(&c, &q, rules, n_rules);
}

static struct pd_verdict dns_decide(const struct policy *p, const char *qname)
{
	uint16_t rules[DECIDE_MAX_RULES];
	size_t n;
	enum decide_verdict v = name_decide(p, qname, rules, &n);

	if (v == DECIDE_ALLOW)
		return (struct pd_verdict){ .allow = true, .rule = rules[0] };
	return (struct pd_verdict){ .rule = -1, .why = decide_reason(v) };
}

/*
 * A new connection under @p, in the order of the policy's chain
 * (netd/fw/pchain.c): a CIDR rule accepts first; a never-pin address is
 * dropped; a pin is there only if @name (may be NULL) is answered under
 * @p by a rule with @proto and @port (decide_pins() pins every port of
 * every rule the name matched).
 */
static struct pd_verdict flow_decide(const struct policy *p, const char *name,
				     const struct addr *dst, uint8_t proto, uint16_t port)
{
	uint16_t rules[DECIDE_MAX_RULES];
	ssize_t r = policy_cidr_rule(p, dst, proto, port);
	enum decide_verdict v;
	size_t n;

	if (r >= 0)
		return (struct pd_verdict){ .allow = true, .rule = r };
	/* The daemon's default table (dns.never_pin_documentation: false);
	 * the host's own addresses and the pools are not known here. */
	if (special_find(dst, 0, NULL))
		return (struct pd_verdict){ .rule = -1, .why = "never-pin" };
	if (!name)
		return (struct pd_verdict){ .rule = -1,
					    .why = reason_deny_name(REASON_DENY_NOT_PINNED) };
	v = name_decide(p, name, rules, &n);
	if (v != DECIDE_ALLOW)
		return (struct pd_verdict){ .rule = -1, .why = decide_reason(v) };
	for (size_t i = 0; i < n; i++)
		if (policy_rule_port(&p->rules[rules[i]], proto, port))
			return (struct pd_verdict){ .allow = true, .rule = rules[i] };
	return (struct pd_verdict){ .rule = -1, .why = "port" };
}

/* ---- groups and changes ----------------------------------------------------- */

/* The group of (@recorded policy, @sandbox) replayed against @p; created if new. */
static json_t *group_get(struct pdiff *d, const struct policy *p, const char *recorded,
			 const char *sandbox)
{
	char key[2 * 256 + 2];
	json_t *g;

	snprintf(key, sizeof(key), "%.255s\n%.255s", recorded, sandbox);
	g = json_object_get(d->groups, key);
	if (g)
		return g;
	if (json_object_size(d->groups) >= PDIFF_MAX_GROUPS) {
		d->over++;
		return NULL;
	}
	g = json_pack("{s:s, s:s?, s:s, s:s, s:{s:i, s:i}, s:{s:i, s:i}, s:{}}", "policy", p->name,
		      "file", p->file, "recorded_policy", recorded, "sandbox", sandbox, "dns",
		      "replayed", 0, "unchanged", 0, "flows", "replayed", 0, "unchanged", 0,
		      "changes");
	if (!g || json_object_set_new(d->groups, key, g) < 0) {
		d->over++;
		return NULL;
	}
	return g;
}

/*
 * Count a replayed record of @kind ("dns", "flows") in @g: unchanged, or a
 * change keyed @what (its members in @desc, a new object this takes) at
 * time @t with the new verdict @nv.  Return: 0; -ENOMEM.
 */
static int record(struct pdiff *d, json_t *g, const char *kind, const char *what, json_t *desc,
		  bool was_allowed, const struct pd_verdict *nv, const char *t,
		  const struct policy *p)
{
	json_t *changes = json_object_get(g, "changes"), *c;
	char key[1024];
	int r = -ENOMEM;

	if (bump(json_object_get(g, kind), "replayed", 1) < 0)
		goto out;
	if (was_allowed == nv->allow) {
		r = bump(json_object_get(g, kind), "unchanged", 1);
		goto out;
	}
	if (nv->allow)
		d->newly_allowed++;
	else
		d->newly_denied++;
	snprintf(key, sizeof(key), "%c%s\n%s", nv->allow ? '+' : '-', kind, what);
	c = json_object_get(changes, key);
	if (!c) {
		if (d->n_changes >= PDIFF_MAX_CHANGES) {
			d->over++;
			r = 0;
			goto out;
		}
		c = desc;
		desc = NULL;
		if (!c || json_object_set_new(c, "direction", json_string(nv->allow ?
			  "newly-allowed" : "newly-denied")) < 0 ||
		    json_object_set_new(c, "count", json_integer(0)) < 0 ||
		    json_object_set_new(changes, key, c) < 0)
			goto out;
		d->n_changes++;
		if (nv->allow) {
			if (json_object_set_new(c, "rule", json_integer(nv->rule)) < 0 ||
			    json_object_set_new(c, "line", json_integer(p->rules[nv->rule].line)) < 0)
				goto out;
		} else if (json_object_set_new(c, "why", json_string(nv->why)) < 0) {
			goto out;
		}
	}
	if (bump(c, "count", 1) < 0)
		goto out;
	if (t) {
		const char *f = str(c, "first"), *l = str(c, "last");

		if ((!f || strcmp(t, f) < 0) && json_object_set_new(c, "first", json_string(t)) < 0)
			goto out;
		if ((!l || strcmp(t, l) > 0) && json_object_set_new(c, "last", json_string(t)) < 0)
			goto out;
	}
	r = 0;
out:
	json_decref(desc);
	return r;
}

/* ---- records ------------------------------------------------------------ */

/* What the policy in force decided for a dns record; false if not the policy. */
static bool dns_was(const json_t *rec, bool *allowed)
{
	switch (reason_dns_of(str(rec, "reason"))) {
	case REASON_DNS_POLICY:
		*allowed = true;
		return true;
	case REASON_DNS_NOT_IN_POLICY:
	case REASON_DNS_QNAME_TOO_LONG:
	case REASON_DNS_AUDIT_MODE:	/* answered only because of audit mode */
		*allowed = false;
		return true;
	default:
		/* Rate limits, upstream failures, local answers, bad names:
		 * not a decision a policy takes (or not one the record shows). */
		return false;
	}
}

/* Remember the addresses an allowed answer gave @sandbox, for nameless records. */
static int note_answers(struct pdiff *d, const char *sandbox, const json_t *rec,
			const char *qname)
{
	const json_t *a;
	size_t i;

	json_array_foreach(json_object_get(rec, "answers"), i, a) {
		char key[256 + ADDR_STRLEN + 2], txt[ADDR_STRLEN];
		struct addr ad;

		if (!json_is_string(a) || addr_parse(json_string_value(a), &ad) < 0)
			continue;
		snprintf(key, sizeof(key), "%.255s\n%s", sandbox, addr_format(&ad, txt, sizeof(txt)));
		if (!json_object_get(d->addrs, key) && json_object_size(d->addrs) >= PDIFF_MAX_ADDRS) {
			d->over++;
			continue;
		}
		if (json_object_set_new(d->addrs, key, json_string(qname)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int add_dns(struct pdiff *d, const json_t *rec, const struct policy *p, json_t *g,
		   const char *sandbox, const char *t)
{
	const char *qname = str(rec, "qname");
	struct pd_verdict nv;
	bool was;

	if (!qname) {
		d->unusable++;
		return 0;
	}
	if (!dns_was(rec, &was)) {
		d->not_policy++;
		return 0;
	}
	/* Audit mode answered every name: its addresses name later connections. */
	if (str(rec, "verdict") && strcmp(str(rec, "verdict"), "allow") == 0 &&
	    note_answers(d, sandbox, rec, qname) < 0)
		return -ENOMEM;
	nv = dns_decide(p, qname);
	if (record(d, g, "dns", qname, json_pack("{s:s, s:s}", "kind", "dns", "qname", qname),
		   was, &nv, t, p) < 0)
		return -ENOMEM;
	return 1;
}

/*
 * Is this connection record one not counted yet?  conn_open, conn_update
 * and conn of one connection share its 5-tuple: the first of them counts,
 * "conn" ends it (so the 5-tuple reused later counts again).
 */
static bool flow_first(struct pdiff *d, const json_t *rec, const char *sandbox, bool end)
{
	char key[600];
	json_t *live;

	snprintf(key, sizeof(key), "%.255s\n%.16s|%.64s|%lld|%.64s|%lld", sandbox,
		 str(rec, "proto"), str(rec, "src") ? str(rec, "src") : "",
		 (long long)json_integer_value(json_object_get(rec, "sport")), str(rec, "dst"),
		 (long long)json_integer_value(json_object_get(rec, "dport")));
	live = json_object_get(d->flows, key);
	if (live && json_is_true(live)) {
		if (end)
			json_object_set_new(d->flows, key, json_false());
		return false;
	}
	if (!live && json_object_size(d->flows) >= PDIFF_MAX_FLOWS) {
		d->over++;	/* counted, maybe twice: no room to follow it */
		return true;
	}
	json_object_set_new(d->flows, key, json_boolean(!end));
	return true;
}

static int add_flow(struct pdiff *d, const json_t *rec, const char *ev, const struct policy *p,
		    json_t *g, const char *sandbox, const char *t)
{
	const char *proto = str(rec, "proto"), *dst = str(rec, "dst"), *dom = str(rec, "domain");
	json_int_t port = json_integer_value(json_object_get(rec, "dport"));
	const char *name = NULL;
	char key[300], txt[ADDR_STRLEN];
	struct pd_verdict nv;
	struct addr a;
	uint8_t ip;
	bool was;

	if (!proto || !dst || addr_parse(dst, &a) < 0) {
		d->unusable++;
		return 0;
	}
	ip = strcmp(proto, "tcp") == 0 ? IPPROTO_TCP : strcmp(proto, "udp") == 0 ? IPPROTO_UDP : 0;
	if (!ip || port < 1 || port > 65535) {
		d->other_proto++;	/* a policy allows TCP and UDP ports only */
		return 0;
	}
	if (strcmp(ev, "deny") == 0) {
		enum reason_deny why = reason_deny_of(str(rec, "reason"));

		/* Spoofing, the host, other sandboxes, quota and connection
		 * limits: the base chains' or the limits', never a rule's. */
		if (why != REASON_DENY_NOT_PINNED && why != REASON_DENY_PORT_NOT_ALLOWED &&
		    why != REASON_DENY_INTERNAL) {
			d->not_policy++;
			return 0;
		}
		was = false;
	} else {
		if (!flow_first(d, rec, sandbox, strcmp(ev, "conn") == 0))
			return 0;
		was = !str(rec, "would_deny");
	}
	/* "domain": the name that pinned the address, or the CIDR rule that
	 * allowed it; without a name, the last one resolved to it here. */
	if (dom && !strchr(dom, '/')) {
		name = dom;
	} else {
		snprintf(key, sizeof(key), "%.255s\n%s", sandbox, addr_format(&a, txt, sizeof(txt)));
		name = json_string_value(json_object_get(d->addrs, key));
	}
	nv = flow_decide(p, name, &a, ip, (uint16_t)port);
	addr_format(&a, txt, sizeof(txt));
	snprintf(key, sizeof(key), "%s|%s|%u|%.200s", proto, txt, (unsigned)port, name ? name : "");
	if (record(d, g, "flows", key, json_pack("{s:s, s:s, s:s, s:i, s:s?}", "kind", "flow",
			"proto", proto, "dst", txt, "dport", (json_int_t)port, "domain", name),
		   was, &nv, t, p) < 0)
		return -ENOMEM;
	return 1;
}

int pdiff_add(struct pdiff *d, const json_t *rec)
{
	const char *ev = str(rec, "event"), *ts = str(rec, "ts");
	const char *sandbox = str(rec, "sandbox"), *pol = str(rec, "policy");
	const struct policy *p;
	json_t *g;
	bool dns, flow;

	if (!json_is_object(rec) || !ev)
		return 0;
	dns = strcmp(ev, "dns") == 0;
	flow = strcmp(ev, "conn") == 0 || strcmp(ev, "conn_open") == 0 ||
	       strcmp(ev, "conn_update") == 0 || strcmp(ev, "deny") == 0;
	if (!dns && !flow)
		return 0;	/* nothing a policy decides: lifecycle, counters, sni */
	if (!sandbox || !pol) {
		d->unusable++;
		return 0;
	}
	if ((d->sandbox && strcmp(sandbox, d->sandbox) != 0) ||
	    (d->policy && strcmp(pol, d->policy) != 0))
		return 0;
	if (d->since[0] && (!ts || strcmp(ts, d->since) < 0))
		return 0;
	p = policy_for(d, pol);
	if (!p) {
		if (!json_object_get(d->others, pol) &&
		    json_object_size(d->others) >= PDIFF_MAX_OTHERS) {
			d->over++;
			return 0;
		}
		return bump(d->others, pol, 1) < 0 ? -ENOMEM : 0;
	}
	g = group_get(d, p, pol, sandbox);
	if (!g)
		return 0;
	if (dns)
		return add_dns(d, rec, p, g, sandbox, rec_time(rec, ev));
	return add_flow(d, rec, ev, p, g, sandbox, rec_time(rec, ev));
}

/* ---- the report ------------------------------------------------------------ */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Changes: newly denied ('-') before newly allowed ('+'), then by kind and what. */
static int change_cmp(const void *a, const void *b)
{
	const char *ka = *(const char *const *)a, *kb = *(const char *const *)b;

	if (ka[0] != kb[0])
		return ka[0] == '-' ? -1 : 1;
	return strcmp(ka, kb);
}

/* The keys of @o sorted by @cmp, in *@ret (caller frees; the keys are @o's). */
static int sorted_keys(const json_t *o, int (*cmp)(const void *, const void *),
		       const char ***ret)
{
	size_t n = json_object_size(o), i = 0;
	const char **keys = malloc((n ? n : 1) * sizeof(*keys)), *k;
	json_t *v;

	*ret = keys;
	if (!keys)
		return -ENOMEM;
	json_object_foreach((json_t *)o, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp);
	return 0;
}

/* A group for the report: a copy whose "changes" is an array, sorted. */
static json_t *group_out(const json_t *g)
{
	const json_t *changes = json_object_get(g, "changes");
	json_t *copy = json_copy((json_t *)g), *arr = json_array();
	const char **keys = NULL;
	size_t n = json_object_size(changes);

	if (!copy || !arr || sorted_keys(changes, change_cmp, &keys) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (json_array_append(arr, json_object_get(changes, keys[i])) < 0)
			goto fail;
	free(keys);
	if (json_object_set_new(copy, "changes", arr) < 0) {
		json_decref(copy);
		return NULL;
	}
	return copy;
fail:
	free(keys);
	json_decref(arr);
	json_decref(copy);
	return NULL;
}

json_t *pdiff_report(const struct pdiff *d)
{
	json_t *out, *groups = json_array(), *others = json_array();
	const char **keys = NULL;
	size_t n;

	out = json_pack("{s:I, s:I, s:o, s:{s:o, s:I, s:I, s:I, s:I}}", "newly_denied",
			(json_int_t)d->newly_denied, "newly_allowed", (json_int_t)d->newly_allowed,
			"groups", groups, "not_replayed", "policies", others, "not_policy_decisions",
			(json_int_t)d->not_policy, "other_protocols", (json_int_t)d->other_proto,
			"unusable", (json_int_t)d->unusable, "over_limits", (json_int_t)d->over);
	if (!out)
		return NULL;
	/* Groups by recorded policy, then sandbox (their keys' order). */
	if (sorted_keys(d->groups, name_cmp, &keys) < 0)
		goto fail;
	n = json_object_size(d->groups);
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(groups, group_out(json_object_get(d->groups, keys[i]))) < 0)
			goto fail;
	free(keys);
	if (sorted_keys(d->others, name_cmp, &keys) < 0)
		goto fail;
	n = json_object_size(d->others);
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(others, json_pack("{s:s, s:O}", "policy", keys[i], "records",
							    json_object_get(d->others, keys[i]))) < 0)
			goto fail;
	free(keys);
	return out;
fail:
	free(keys);
	json_decref(out);
	return NULL;
}
