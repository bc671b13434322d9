/*
 * policyview - policies as JSON, digests and items.  Pure.
 */
#include "netd/daemon/policyview.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/addr.h"
#include "common/hash.h"

/*
 * limits.connections, when the policy sets it, into @o's "limits" object
 * (made if need be).  Return: 0; -ENOMEM.
 */
static int pview_limit_conns(json_t *o, const struct policy *p)
{
	json_t *lim;

	if (!p->max_conns)
		return 0;
	lim = json_object_get(o, "limits");
	if (!lim && json_object_set_new(o, "limits", lim = json_object()) < 0)
		return -ENOMEM;
	return json_object_set_new(lim, "connections", json_integer(p->max_conns)) < 0 ? -ENOMEM : 0;
}

/* @n strings @v as a new JSON array. */
static json_t *pview_strings(char *const *v, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_string(v[i]));
	return arr;
}

/*
 * gateway: {credentials?, rate? ("5/s burst 20", canonical), methods?,
 * paths?}: what the rule says, each key only when set; in the digest, so a
 * reload that adds, changes or removes gateway: changes the rule.
 */
static json_t *pview_gateway(const struct policy_gateway *g)
{
	json_t *o = json_object();
	char rate[64];

	if (!o)
		return NULL;
	if (g->n_credentials)
		json_object_set_new(o, "credentials", pview_strings(g->credentials,
								    g->n_credentials));
	if (g->rate_milli)
		json_object_set_new(o, "rate", json_string(policy_gw_rate_format(g, rate,
										 sizeof(rate))));
	if (g->n_methods)
		json_object_set_new(o, "methods", pview_strings(g->methods, g->n_methods));
	if (g->n_paths)
		json_object_set_new(o, "paths", pview_strings(g->paths, g->n_paths));
	return o;
}

/*
 * The per-rule keys, into @rule, each only when the rule sets it (so the
 * digest of a rule without them is what it was before they were shown).
 */
static void pview_rule_extras(json_t *rule, const struct policy_rule *r)
{
	if (r->min_ttl_s)
		json_object_set_new(rule, "min_ttl", json_integer(r->min_ttl_s));
	if (r->max_qname_len)
		json_object_set_new(rule, "max_qname_length", json_integer(r->max_qname_len));
	if (r->idle_grace_set)
		json_object_set_new(rule, "idle_grace", json_integer(r->idle_grace_s));
	if (r->tls_sni != POLICY_L7_OFF || r->tls_ech != POLICY_ECH_DEFAULT) {
		json_t *tls = json_object();

		if (r->tls_sni != POLICY_L7_OFF)
			json_object_set_new(tls, "sni", json_string(policy_l7_str(
								(enum policy_l7)r->tls_sni)));
		/* Only when set (written, or outer inherited by a udp rule): the
		 * digest of a rule without it is what it was before. */
		if (r->tls_ech != POLICY_ECH_DEFAULT)
			json_object_set_new(tls, "ech", json_string(policy_ech_str(
								(enum policy_ech)r->tls_ech)));
		json_object_set_new(rule, "tls", tls);
	}
	if (r->http_host != POLICY_L7_OFF)
		json_object_set_new(rule, "http", json_pack("{s:s}", "host",
						       policy_l7_str((enum policy_l7)r->http_host)));
	if (r->gateway)
		json_object_set_new(rule, "gateway", pview_gateway(r->gateway));
	/* dns: as written (canonical); its defaults are in the API's "defaults". */
	if (r->dns_set) {
		char b[32];

		json_object_set_new(rule, "dns", json_pack("{s:s, s:s}", "budget",
					policy_dns_budget_format(r, b, sizeof(b)), "encoded",
					policy_encoded_str((enum policy_encoded)r->dns_encoded)));
	}
	if (r->budget_bytes) {
		char b[POLICY_BUDGET_STRLEN];

		json_object_set_new(rule, "budget", json_string(policy_budget_format(
					    r->budget_bytes, r->budget_period_s, b, sizeof(b))));
	}
}

/* limits.bandwidth, when the policy sets it, into @o's "limits".  Return: 0; -ENOMEM. */
static int pview_limit_bw(json_t *o, const struct policy *p)
{
	char buf[POLICY_RATE_STRLEN];
	json_t *lim, *bw;

	if (!p->bw_egress_bps && !p->bw_ingress_bps)
		return 0;
	lim = json_object_get(o, "limits");
	if (!lim && json_object_set_new(o, "limits", lim = json_object()) < 0)
		return -ENOMEM;
	if (json_object_set_new(lim, "bandwidth", bw = json_object()) < 0)
		return -ENOMEM;
	if (p->bw_egress_bps)
		json_object_set_new(bw, "egress", json_string(policy_rate_format(p->bw_egress_bps,
									     buf, sizeof(buf))));
	if (p->bw_ingress_bps)
		json_object_set_new(bw, "ingress", json_string(policy_rate_format(p->bw_ingress_bps,
									      buf, sizeof(buf))));
	return 0;
}

json_t *pview_json(const struct policy *p)
{
	json_t *rules = json_array();

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		json_t *rule = json_object(), *ports = json_array();

		if (r->n_domains) {
			json_t *arr = json_array();

			for (size_t j = 0; j < r->n_domains; j++)
				json_array_append_new(arr, json_string(r->domains[j]));
			json_object_set_new(rule, "domains", arr);
			if (r->n_excepts) {
				json_t *ex = json_array();

				for (size_t j = 0; j < r->n_excepts; j++)
					json_array_append_new(ex, json_string(r->excepts[j]));
				json_object_set_new(rule, "except", ex);
			}
		} else {
			json_t *arr = json_array();
			char buf[PREFIX_STRLEN];

			for (size_t j = 0; j < r->n_cidrs; j++)
				json_array_append_new(arr, json_string(prefix_format(
								   &r->cidrs[j], buf, sizeof(buf))));
			json_object_set_new(rule, "cidrs", arr);
		}
		for (size_t j = 0; j < r->n_ports; j++) {
			char buf[16];

			if (r->ports[j].lo == r->ports[j].hi)
				json_array_append_new(ports, json_integer(r->ports[j].lo));
			else {
				snprintf(buf, sizeof(buf), "%u-%u", r->ports[j].lo, r->ports[j].hi);
				json_array_append_new(ports, json_string(buf));
			}
		}
		json_object_set_new(rule, "ports", ports);
		json_object_set_new(rule, "protocol",
				    json_string(r->proto == IPPROTO_UDP ? "udp" : "tcp"));
		pview_rule_extras(rule, r);
		json_array_append_new(rules, rule);
	}
	{
		json_t *o = json_pack("{s:s, s:s?, s:s?, s:o}", "name", p->name, "description",
				      p->description, "file", p->file, "egress", rules);

		/*
		 * Only when set, so the digest of a policy without limits (state
		 * files, reload change detection) is what it was before limits.
		 */
		if (o && p->egress_bytes)
			json_object_set_new(o, "limits", json_pack("{s:I, s:s}", "egress_bytes",
					    (json_int_t)p->egress_bytes, "on_exceed",
					    p->quota_cut ? "cut" : "finish"));
		if (o && (pview_limit_conns(o, p) < 0 || pview_limit_bw(o, p) < 0)) {
			json_decref(o);
			return NULL;
		}
		/* Likewise mode and on_deny: only when not the default. */
		if (o && p->audit)
			json_object_set_new(o, "mode", json_string("audit"));
		if (o && p->reject)
			json_object_set_new(o, "on_deny", json_string("reject"));
		return o;
	}
}

const char *pview_digest(const struct policy *p, char *buf, size_t sz)
{
	json_t *j = p ? pview_json(p) : NULL;
	char *text;

	if (j) {
		json_t *lim = json_object_get(j, "limits"), *rule;
		size_t i;

		json_object_del(j, "file");	/* where it lives is not what it says */
		/*
		 * Nor the rates and budgets: they change no nf_tables rule and no
		 * pin (a restart keeps the pins of a policy whose rates changed;
		 * netd/daemon/bwglue.c applies them), and policies without them
		 * keep the digest they had.  A reload reports their changes
		 * itself (reload_plan.c's limits).
		 */
		if (lim && json_object_del(lim, "bandwidth") == 0 && !json_object_size(lim))
			json_object_del(j, "limits");
		json_array_foreach(json_object_get(j, "egress"), i, rule)
			json_object_del(rule, "budget");
	}
	text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (!text) {
		snprintf(buf, sz, "%s", "");
		return buf;
	}
	snprintf(buf, sz, "%016llx", (unsigned long long)fnv64_str(FNV64_INIT, text));
	free(text);
	return buf;
}

void pview_items(const struct policy *p, json_t *set)
{
	for (size_t i = 0; p && i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		char ports[512] = "", item[700];
		size_t n = 0;

		for (size_t k = 0; k < r->n_ports && n < sizeof(ports) - 16; k++)
			n += (size_t)snprintf(ports + n, sizeof(ports) - n,
					      r->ports[k].lo == r->ports[k].hi ? "%s%u" : "%s%u-%u",
					      k ? "," : "", r->ports[k].lo, r->ports[k].hi);
		if (!r->n_ports)
			snprintf(ports, sizeof(ports), "any");
		for (size_t k = 0; k < r->n_domains; k++) {
			snprintf(item, sizeof(item), "%s %s/%s", r->domains[k],
				 r->proto == IPPROTO_UDP ? "udp" : "tcp", ports);
			json_object_set_new(set, item, json_true());
		}
		for (size_t k = 0; k < r->n_cidrs; k++) {
			char a[ADDR_STRLEN];

			snprintf(item, sizeof(item), "%s/%u %s/%s",
				 addr_format(&r->cidrs[k].addr, a, sizeof(a)), r->cidrs[k].plen,
				 r->proto == IPPROTO_UDP ? "udp" : "tcp", ports);
			json_object_set_new(set, item, json_true());
		}
	}
}

json_t *pview_items_minus(json_t *a, json_t *b)
{
	json_t *out = json_array(), *v;
	const char *k;

	json_object_foreach(a, k, v)
		if (!json_object_get(b, k))
			json_array_append_new(out, json_string(k));
	return out;
}
