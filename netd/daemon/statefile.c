/*
 * statefile - sandbox state files (JSON, jansson) to structs and back.
 * Pure.  Every check is here, so the fuzz target covers every byte a
 * corrupted or hand-edited file can hold.
 */
#include "common/diag.h"
#include "common/ifname.h"
#include "netd/daemon/statefile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "netd/link/tap.h"
#include "netd/model/policy.h"

/*
 * The string member @key of @obj into @buf (@sz bytes with the NUL).
 * @required: absent is an error; else absent or null leaves "" and returns 1.
 * Return: 0 (set); 1 (absent); -EINVAL.
 */
static int get_str(json_t *obj, const char *key, bool required, char *buf, size_t sz,
		   char *err, size_t errsz)
{
	json_t *v = json_object_get(obj, key);

	buf[0] = '\0';
	if (!v || (!required && json_is_null(v))) {
		if (required)
			return diag_err(err, errsz, "\"%s\" is missing", key);
		return 1;
	}
	if (!json_is_string(v))
		return diag_err(err, errsz, "\"%s\" must be a string", key);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return diag_err(err, errsz, "\"%s\" holds a NUL", key);
	if (json_string_length(v) >= sz)
		return diag_err(err, errsz, "\"%s\" is longer than %zu bytes", key, sz - 1);
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* An address member of @family; absent or null: family 0.  Return: 0; -EINVAL. */
static int get_addr(json_t *obj, const char *key, int family, struct addr *out, char *err,
		    size_t errsz)
{
	char buf[ADDR_STRLEN + 1];
	int r = get_str(obj, key, false, buf, sizeof(buf), err, errsz);

	memset(out, 0, sizeof(*out));
	if (r != 0)
		return r < 0 ? r : 0;
	if (addr_parse(buf, out) < 0 || out->family != family)
		return diag_err(err, errsz, "\"%s\" must be an %s address", key,
				family == AF_INET ? "IPv4" : "IPv6");
	return 0;
}

/* A boolean member; absent: @dflt.  Return: 0; -EINVAL. */
static int get_bool(json_t *obj, const char *key, bool required, bool dflt, bool *out,
		    char *err, size_t errsz)
{
	json_t *v = json_object_get(obj, key);

	*out = dflt;
	if (!v)
		return required ? diag_err(err, errsz, "\"%s\" is missing", key) : 0;
	if (!json_is_boolean(v))
		return diag_err(err, errsz, "\"%s\" must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* An integer member in [@lo, @hi]; absent: 0 (or an error if @required). */
static int get_int(json_t *obj, const char *key, bool required, json_int_t lo, json_int_t hi,
		   json_int_t *out, char *err, size_t errsz)
{
	json_t *v = json_object_get(obj, key);

	*out = 0;
	if (!v)
		return required ? diag_err(err, errsz, "\"%s\" is missing", key) : 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return diag_err(err, errsz, "\"%s\" must be an integer in %lld..%lld", key,
				(long long)lo, (long long)hi);
	*out = json_integer_value(v);
	return 0;
}

/* The workload's members, each optional (older files have none). */
static int parse_workload(json_t *obj, struct workload *w, char *err, size_t errsz)
{
	char buf[WORKLOAD_CONTAINER_ID_MAX + 2];	/* the longest field, and one byte over */

	for (int f = 0; f < WORKLOAD_FIELDS; f++) {
		const char *key = workload_key((enum workload_field)f);
		int r = get_str(obj, key, false, buf, sizeof(buf), err, errsz);

		if (r < 0)
			return r;
		if (r == 0 && workload_set(w, (enum workload_field)f, buf, err, errsz) < 0)
			return -EINVAL;
	}
	return 0;
}

/* "bandwidth" or "shaped": {"egress"?, "ingress"?} in bit/s, each 8kbit..100gbit. */
static int parse_rates(json_t *obj, const char *key, uint64_t *eg, uint64_t *in, char *err,
		       size_t errsz)
{
	json_t *v = json_object_get(obj, key);
	json_int_t r[2] = { 0, 0 };
	int e;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return diag_err(err, errsz, "\"%s\" must be an object", key);
	if ((e = get_int(v, "egress", false, POLICY_RATE_MIN, POLICY_RATE_MAX, &r[0], err,
			 errsz)) < 0 ||
	    (e = get_int(v, "ingress", false, POLICY_RATE_MIN, POLICY_RATE_MAX, &r[1], err,
			 errsz)) < 0)
		return e;
	*eg = (uint64_t)r[0];
	*in = (uint64_t)r[1];
	return 0;
}

/* "budgets": [{"rule", "period" (3600 | 86400), "window" (its multiple), "used"}]. */
static int parse_budgets(json_t *obj, struct statefile *sf, char *err, size_t errsz)
{
	json_t *v = json_object_get(obj, "budgets"), *b;
	size_t i;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > POLICY_BUDGET_RULES)
		return diag_err(err, errsz, "\"budgets\" must be an array of at most %d",
				POLICY_BUDGET_RULES);
	json_array_foreach(v, i, b) {
		struct statefile_budget *o = &sf->budgets[i];
		json_int_t per, win, used;
		int r;

		if (!json_is_object(b))
			return diag_err(err, errsz, "\"budgets\"[%zu] must be an object", i);
		if ((r = get_str(b, "rule", true, o->rule, sizeof(o->rule), err, errsz)) < 0 ||
		    (r = get_int(b, "period", true, 3600, 86400, &per, err, errsz)) < 0 ||
		    (r = get_int(b, "window", true, 0, INT64_MAX, &win, err, errsz)) < 0 ||
		    (r = get_int(b, "used", true, 0, INT64_MAX, &used, err, errsz)) < 0)
			return r;
		if ((per != 3600 && per != 86400) || win % per)
			return diag_err(err, errsz, "\"budgets\"[%zu]: period 3600 or 86400, "
					"window a multiple of it", i);
		o->period_s = (uint32_t)per;
		o->window_s = (int64_t)win;
		o->used = (uint64_t)used;
		sf->n_budgets++;
	}
	return 0;
}

/* The common members every state file has. */
static int parse_common(json_t *obj, struct statefile *sf, char *err, size_t errsz)
{
	json_int_t slot, created;
	int r;

	if ((r = get_str(obj, "name", true, sf->name, sizeof(sf->name), err, errsz)) < 0 ||
	    (r = get_str(obj, "policy", true, sf->policy, sizeof(sf->policy), err, errsz)) < 0 ||
	    (r = get_str(obj, "netns", true, sf->netns, sizeof(sf->netns), err, errsz)) < 0 ||
	    (r = get_bool(obj, "netns_owned", true, false, &sf->netns_owned, err, errsz)) < 0 ||
	    (r = get_str(obj, "ifname", true, sf->ifname, sizeof(sf->ifname), err, errsz)) < 0 ||
	    (r = get_int(obj, "slot", true, 0, SANDBOX_MAX - 1, &slot, err, errsz)) < 0 ||
	    (r = get_int(obj, "created", false, 0, INT64_MAX, &created, err, errsz)) < 0 ||
	    (r = get_str(obj, "policy_digest", false, sf->digest, sizeof(sf->digest), err,
			 errsz)) < 0 ||
	    (r = get_bool(obj, "ipv6", false, true, &sf->ipv6, err, errsz)) < 0)
		return r;
	{
		char mode[16];

		if ((r = get_str(obj, "mode", false, mode, sizeof(mode), err, errsz)) < 0)
			return r;
		if (strcmp(mode, "audit") == 0)
			sf->mode = 2;	/* FW_MODE_AUDIT */
		else if (strcmp(mode, "enforce") == 0)
			sf->mode = 1;	/* FW_MODE_ENFORCE */
		else if (mode[0])
			return diag_err(err, errsz, "\"mode\" must be \"audit\" or \"enforce\"");
	}
	if (!policy_name_valid(sf->name) || !policy_name_valid(sf->policy))
		return diag_err(err, errsz, "\"name\" and \"policy\" must be valid names");
	/* A chained attachment's netns may be "" (netd never enters it). */
	if (sf->netns[0] && sf->netns[0] != '/')
		return diag_err(err, errsz, "\"netns\" must be an absolute path");
	if (!ifname_valid(sf->ifname))
		return diag_err(err, errsz, "\"ifname\" is not an interface name");
	sf->slot = (uint32_t)slot;
	sf->created = (int64_t)created;
	if ((r = parse_rates(obj, "bandwidth", &sf->bw_egress_bps, &sf->bw_ingress_bps, err,
			     errsz)) < 0 ||
	    (r = parse_rates(obj, "shaped", &sf->shaped_egress_bps, &sf->shaped_ingress_bps, err,
			     errsz)) < 0 ||
	    (r = parse_budgets(obj, sf, err, errsz)) < 0)
		return r;
	return parse_workload(obj, &sf->workload, err, errsz);
}

/* netd's veth with an IPAM plugin's addresses: each address with its gateway and length. */
static int parse_ipam(json_t *obj, struct statefile *sf, char *err, size_t errsz)
{
	json_int_t p4, p6;
	int r;

	if ((r = get_addr(obj, "ipv4_addr", AF_INET, &sf->addr4, err, errsz)) < 0 ||
	    (r = get_addr(obj, "gateway4", AF_INET, &sf->gw4, err, errsz)) < 0 ||
	    (r = get_addr(obj, "ipv6_addr", AF_INET6, &sf->addr6, err, errsz)) < 0 ||
	    (r = get_addr(obj, "gateway6", AF_INET6, &sf->gw6, err, errsz)) < 0 ||
	    (r = get_int(obj, "plen4", false, 0, 31, &p4, err, errsz)) < 0 ||
	    (r = get_int(obj, "plen6", false, 0, 127, &p6, err, errsz)) < 0)
		return r;
	if (!sf->addr4.family && !sf->addr6.family)
		return diag_err(err, errsz, "an IPAM sandbox needs \"ipv4_addr\" or \"ipv6_addr\"");
	if ((sf->addr4.family && (!sf->gw4.family || p4 < 1)) ||
	    (sf->addr6.family && (!sf->gw6.family || p6 < 1)))
		return diag_err(err, errsz, "each IPAM address needs its gateway and a prefix length");
	/* What has no address has no gateway or length (so formatting round-trips). */
	if (!sf->addr4.family) {
		memset(&sf->gw4, 0, sizeof(sf->gw4));
		p4 = 0;
	}
	if (!sf->addr6.family) {
		memset(&sf->gw6, 0, sizeof(sf->gw6));
		p6 = 0;
	}
	sf->plen4 = (uint8_t)p4;
	sf->plen6 = (uint8_t)p6;
	sf->kind = STATEFILE_IPAM;
	return 0;
}

static int parse_chained(json_t *obj, struct statefile *sf, char *err, size_t errsz)
{
	int r;

	if ((r = get_str(obj, "host_ifname", true, sf->host_ifname, sizeof(sf->host_ifname), err,
			 errsz)) < 0 ||
	    (r = get_addr(obj, "ipv4_addr", AF_INET, &sf->addr4, err, errsz)) < 0 ||
	    (r = get_addr(obj, "ipv6_addr", AF_INET6, &sf->addr6, err, errsz)) < 0)
		return r;
	if (!ifname_valid(sf->host_ifname))
		return diag_err(err, errsz, "\"host_ifname\" is not an interface name");
	if (!sf->addr4.family && !sf->addr6.family)
		return diag_err(err, errsz, "a chained sandbox needs \"ipv4_addr\" or \"ipv6_addr\"");
	sf->kind = STATEFILE_CHAINED;
	return 0;
}

/* netd's veth whose peer its owner moved (Docker): IPAM's keys and the peer's MAC. */
static int parse_peer(json_t *obj, struct statefile *sf, char *err, size_t errsz)
{
	char mac[TAP_MAC_STRLEN + 1];
	int r = parse_ipam(obj, sf, err, errsz);

	if (r < 0 || (r = get_str(obj, "mac", true, mac, sizeof(mac), err, errsz)) < 0)
		return r;
	if (tap_mac_parse(mac, sf->mac) < 0)
		return diag_err(err, errsz, "\"mac\" must be a unicast MAC, xx:xx:xx:xx:xx:xx");
	sf->kind = STATEFILE_PEER;
	return 0;
}

/* netd's tap: its name, owner (never none), group, queues and MTU. */
static int parse_tap(json_t *obj, struct statefile *sf, char *err, size_t errsz)
{
	json_int_t owner, group = UINT32_MAX, queues, mtu;
	json_t *g = json_object_get(obj, "tap_group");
	int r;

	if ((r = get_str(obj, "host_ifname", true, sf->host_ifname, sizeof(sf->host_ifname), err,
			 errsz)) < 0 ||
	    (r = get_int(obj, "tap_owner", true, 0, UINT32_MAX - 1, &owner, err, errsz)) < 0 ||
	    (g && !json_is_null(g) &&
	     (r = get_int(obj, "tap_group", true, 0, UINT32_MAX - 1, &group, err, errsz)) < 0) ||
	    (r = get_int(obj, "tap_queues", true, 1, 256, &queues, err, errsz)) < 0 ||
	    (r = get_int(obj, "mtu", true, 1280, 65521, &mtu, err, errsz)) < 0)
		return r;
	if (!ifname_valid(sf->host_ifname))
		return diag_err(err, errsz, "\"host_ifname\" is not an interface name");
	sf->tap_owner = (uint32_t)owner;
	sf->tap_group = (uint32_t)group;
	sf->tap_queues = (uint16_t)queues;
	sf->mtu = (uint16_t)mtu;
	sf->kind = STATEFILE_TAP;
	return 0;
}

int statefile_parse(const char *text, size_t len, struct statefile *out, char *err,
		    size_t errsz)
{
	json_error_t jerr;
	json_t *obj, *kind;
	int r;

	memset(out, 0, sizeof(*out));
	if (len > STATEFILE_MAX_LEN) {
		snprintf(err, errsz, "over %d bytes", STATEFILE_MAX_LEN);
		return -EMSGSIZE;
	}
	obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!obj)
		return diag_err(err, errsz, "not JSON: line %d column %d: %s", jerr.line, jerr.column,
				jerr.text);
	if (!json_is_object(obj)) {
		r = diag_err(err, errsz, "not a JSON object");
		goto out;
	}
	r = parse_common(obj, out, err, errsz);
	if (r < 0)
		goto out;
	kind = json_object_get(obj, "kind");
	if (kind && !json_is_null(kind) &&
	    (!json_is_string(kind) || (strcmp(json_string_value(kind), "chained") != 0 &&
				       strcmp(json_string_value(kind), "tap") != 0 &&
				       strcmp(json_string_value(kind), "peer") != 0)))
		r = diag_err(err, errsz, "\"kind\" must be \"chained\", \"tap\" or \"peer\" if set");
	else if (kind && json_is_string(kind) && strcmp(json_string_value(kind), "tap") == 0)
		r = parse_tap(obj, out, err, errsz);
	else if (kind && json_is_string(kind) && strcmp(json_string_value(kind), "peer") == 0)
		r = parse_peer(obj, out, err, errsz);
	else if (kind && json_is_string(kind))
		r = parse_chained(obj, out, err, errsz);
	else if (json_object_get(obj, "plen4") || json_object_get(obj, "plen6"))
		r = parse_ipam(obj, out, err, errsz);
	else
		out->kind = STATEFILE_POOL;
out:
	json_decref(obj);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}

static json_t *addr_json(const struct addr *a)
{
	char buf[ADDR_STRLEN];

	return a->family ? json_string(addr_format(a, buf, sizeof(buf))) : json_null();
}

/* @key: {"egress"?, "ingress"?} into @obj, only the rates set; nothing if neither. */
static void rates_json(json_t *obj, const char *key, uint64_t eg, uint64_t in)
{
	json_t *o;

	if (!obj || (!eg && !in))
		return;
	o = json_object();
	if (o && eg)
		json_object_set_new(o, "egress", json_integer((json_int_t)eg));
	if (o && in)
		json_object_set_new(o, "ingress", json_integer((json_int_t)in));
	json_object_set_new(obj, key, o);
}

char *statefile_format(const struct statefile *sf)
{
	json_t *obj = json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:I, s:b}", "name", sf->name,
				"policy", sf->policy, "netns", sf->netns, "netns_owned",
				sf->netns_owned, "ifname", sf->ifname, "slot", (int)sf->slot,
				"created", (json_int_t)sf->created, "ipv6", sf->ipv6);
	char *text;

	/* Older netds kept the policy's digest here; it is in STATE_DIR/policies now. */
	if (obj && sf->digest[0])
		json_object_set_new(obj, "policy_digest", json_string(sf->digest));

	/* Only when the sandbox has its own: older files, and readers, unchanged. */
	if (obj && sf->mode)
		json_object_set_new(obj, "mode", json_string(sf->mode == 2 ? "audit" : "enforce"));
	if (obj && sf->kind == STATEFILE_PEER) {
		char mac[TAP_MAC_STRLEN];

		tap_mac_format(sf->mac, mac);
		json_object_update_new(obj, json_pack("{s:s, s:s}", "kind", "peer", "mac", mac));
	}
	if (obj && (sf->kind == STATEFILE_IPAM || sf->kind == STATEFILE_PEER))
		json_object_update_new(obj, json_pack("{s:o, s:o, s:i, s:o, s:o, s:i}",
						      "ipv4_addr", addr_json(&sf->addr4),
						      "gateway4", addr_json(&sf->gw4),
						      "plen4", (int)sf->plen4,
						      "ipv6_addr", addr_json(&sf->addr6),
						      "gateway6", addr_json(&sf->gw6),
						      "plen6", (int)sf->plen6));
	if (obj && sf->kind == STATEFILE_CHAINED)
		json_object_update_new(obj, json_pack("{s:s, s:s, s:o, s:o}", "kind", "chained",
						      "host_ifname", sf->host_ifname,
						      "ipv4_addr", addr_json(&sf->addr4),
						      "ipv6_addr", addr_json(&sf->addr6)));
	if (obj && sf->kind == STATEFILE_TAP)
		json_object_update_new(obj, json_pack("{s:s, s:s, s:I, s:o, s:i, s:i}", "kind", "tap",
						      "host_ifname", sf->host_ifname,
						      "tap_owner", (json_int_t)sf->tap_owner,
						      "tap_group", sf->tap_group == UINT32_MAX ?
						      json_null() : json_integer(sf->tap_group),
						      "tap_queues", (int)sf->tap_queues,
						      "mtu", (int)sf->mtu));
	/* Only what is known: a file without them reads back the same. */
	for (int f = 0; obj && f < WORKLOAD_FIELDS; f++) {
		const char *v = workload_get(&sf->workload, (enum workload_field)f);

		if (v[0])
			json_object_set_new(obj, workload_key((enum workload_field)f), json_string(v));
	}
	rates_json(obj, "bandwidth", sf->bw_egress_bps, sf->bw_ingress_bps);
	rates_json(obj, "shaped", sf->shaped_egress_bps, sf->shaped_ingress_bps);
	if (obj && sf->n_budgets) {
		json_t *arr = json_array();

		for (size_t i = 0; arr && i < sf->n_budgets; i++)
			json_array_append_new(arr, json_pack("{s:s, s:i, s:I, s:I}", "rule",
							     sf->budgets[i].rule, "period",
							     (int)sf->budgets[i].period_s, "window",
							     (json_int_t)sf->budgets[i].window_s,
							     "used", (json_int_t)sf->budgets[i].used));
		json_object_set_new(obj, "budgets", arr);
	}
	text = obj ? json_dumps(obj, JSON_INDENT(2)) : NULL;
	json_decref(obj);
	return text;
}
