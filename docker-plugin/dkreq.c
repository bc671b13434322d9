/*
 * dkreq - netd-docker's requests, records and replies (dkreq.h).  Pure:
 * JSON text in, structs out, and back; jansson, common/addr.c.
 */
#include "docker-plugin/dkreq.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_names[DK_METHODS] = {
	[DK_ACTIVATE] = "Plugin.Activate",
	[DK_CAPABILITIES] = "NetworkDriver.GetCapabilities",
	[DK_CREATE_NETWORK] = "NetworkDriver.CreateNetwork",
	[DK_DELETE_NETWORK] = "NetworkDriver.DeleteNetwork",
	[DK_CREATE_ENDPOINT] = "NetworkDriver.CreateEndpoint",
	[DK_DELETE_ENDPOINT] = "NetworkDriver.DeleteEndpoint",
	[DK_ENDPOINT_INFO] = "NetworkDriver.EndpointOperInfo",
	[DK_JOIN] = "NetworkDriver.Join",
	[DK_LEAVE] = "NetworkDriver.Leave",
	[DK_PROGRAM_EXTERNAL] = "NetworkDriver.ProgramExternalConnectivity",
	[DK_REVOKE_EXTERNAL] = "NetworkDriver.RevokeExternalConnectivity",
	[DK_DISCOVER_NEW] = "NetworkDriver.DiscoverNew",
	[DK_DISCOVER_DELETE] = "NetworkDriver.DiscoverDelete",
};

enum dk_method dk_method_of(const char *path)
{
	if (!path || path[0] != '/')
		return DK_UNKNOWN;
	for (int m = 1; m < DK_METHODS; m++)
		if (strcmp(path + 1, method_names[m]) == 0)
			return (enum dk_method)m;
	return DK_UNKNOWN;
}

const char *dk_method_name(enum dk_method m)
{
	return m > DK_UNKNOWN && m < DK_METHODS ? method_names[m] : "";
}

static int fail(char *err, size_t errsz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * String member @key of @obj into @buf (@sz with the NUL): absent or null
 * leaves "" and returns 1; not a string, a NUL inside or too long: -EINVAL.
 */
static int get_str(const json_t *obj, const char *key, char *buf, size_t sz, char *err,
		   size_t errsz)
{
	json_t *v = json_object_get(obj, key);

	buf[0] = '\0';
	if (!v || json_is_null(v))
		return 1;
	if (!json_is_string(v))
		return fail(err, errsz, "\"%s\" must be a string", key);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return fail(err, errsz, "\"%s\" holds a NUL", key);
	if (json_string_length(v) >= sz)
		return fail(err, errsz, "\"%s\" is longer than %zu bytes", key, sz - 1);
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* A 64-hex-digit ID, required. */
static int get_id(const json_t *obj, const char *key, char out[DK_ID_LEN + 1], char *err,
		  size_t errsz)
{
	int r = get_str(obj, key, out, DK_ID_LEN + 1, err, errsz);

	if (r < 0)
		return r;
	if (r > 0 || strlen(out) != DK_ID_LEN || strspn(out, "0123456789abcdef") != DK_ID_LEN)
		return fail(err, errsz, "\"%s\" must be %d lower-case hex digits", key, DK_ID_LEN);
	return 0;
}

/* netd's names: [A-Za-z0-9][A-Za-z0-9_.-]{0,63} (netd/model/policy.h policy_name_valid()). */
static bool name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > DK_POLICY_MAX || !strchr("0123456789abcdefghijklmnopqrstuvwxyz"
						   "ABCDEFGHIJKLMNOPQRSTUVWXYZ", s[0]))
		return false;
	return strspn(s, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.-") == n;
}

/* "ADDR/PLEN" (host bits kept), PLEN 1..bits-1; @family 0: either. */
static int ifaddr_parse(const char *s, int family, struct addr *a, uint8_t *plen)
{
	char buf[PREFIX_STRLEN + 1], *slash, *end;
	unsigned long n;

	if (strlen(s) > PREFIX_STRLEN)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (!slash || !slash[1] || strspn(slash + 1, "0123456789") != strlen(slash + 1) ||
	    strlen(slash + 1) > 3)
		return -EINVAL;
	*slash = '\0';
	n = strtoul(slash + 1, &end, 10);
	if (addr_parse(buf, a) < 0 || (family && a->family != family) || n == 0 ||
	    n >= addr_len(a->family) * 8)
		return -EINVAL;
	*plen = (uint8_t)n;
	return 0;
}

static int mac_parse(const char *s, uint8_t mac[6])
{
	unsigned int v[6];
	char tail;

	if (strlen(s) != 17 || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3],
				      &v[4], &v[5], &tail) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (!strchr("0123456789abcdefABCDEF", s[3 * i]) ||
		    !strchr("0123456789abcdefABCDEF", s[3 * i + 1]) || (i < 5 && s[3 * i + 2] != ':'))
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return -EINVAL;	/* multicast, or zero */
	return 0;
}

static void mac_format(const uint8_t mac[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

/*
 * netd.policy and netd.mode among @opts (an object of strings; another
 * netd.* key refused; keys of other namespaces, with a dot, ignored).
 * @bare: refuse a key with no dot too (a network's -o: "policy" for
 * "netd.policy" must not leave the network on the default policy).
 * @where: for the message.
 */
static int netd_opts(const json_t *opts, char policy[DK_POLICY_MAX + 1], char mode[8],
		     bool bare, const char *where, char *err, size_t errsz)
{
	const char *k;
	json_t *v;
	int r;

	if (!opts || json_is_null(opts))
		return 0;
	if (!json_is_object(opts))
		return fail(err, errsz, "%s must be an object", where);
	json_object_foreach((json_t *)opts, k, v) {
		if (bare && !strchr(k, '.')) {
			/* the option's name without its "netd." */
			if (strcmp(k, &DK_OPT_POLICY[5]) == 0 || strcmp(k, &DK_OPT_MODE[5]) == 0)
				return fail(err, errsz, "unknown option '%s' (did you mean 'netd.%s'?)",
					    k, k);
			return fail(err, errsz, "unknown option '%.64s' in %s: netd takes "
				    DK_OPT_POLICY " and " DK_OPT_MODE, k, where);
		}
		if (strncmp(k, "netd.", 5) != 0)
			continue;
		if (strcmp(k, DK_OPT_POLICY) != 0 && strcmp(k, DK_OPT_MODE) != 0)
			return fail(err, errsz, "unknown option \"%.64s\" in %s: netd takes "
				    DK_OPT_POLICY " and " DK_OPT_MODE, k, where);
	}
	if ((r = get_str(opts, DK_OPT_POLICY, policy, DK_POLICY_MAX + 1, err, errsz)) < 0 ||
	    (r = get_str(opts, DK_OPT_MODE, mode, 8, err, errsz)) < 0)
		return r;
	if (json_object_get(opts, DK_OPT_POLICY) && !name_valid(policy))
		return fail(err, errsz, DK_OPT_POLICY " must be a netd policy name: 1-64 of "
			    "[A-Za-z0-9_.-], starting alphanumeric");
	if (mode[0] && strcmp(mode, "audit") != 0 && strcmp(mode, "enforce") != 0)
		return fail(err, errsz, DK_OPT_MODE " must be audit or enforce");
	return 0;
}

/* IPv4Data/IPv6Data: [{"Pool": CIDR, "Gateway": "ADDR/PLEN"?, ...}]. */
static int pools_parse(const json_t *arr, int family, const char *key, struct dk_pool *out,
		       size_t *n, char *err, size_t errsz)
{
	size_t i;
	json_t *e;

	*n = 0;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return fail(err, errsz, "\"%s\" must be an array", key);
	if (json_array_size(arr) > DK_POOLS_MAX)
		return fail(err, errsz, "\"%s\": more than %d pools", key, DK_POOLS_MAX);
	json_array_foreach(arr, i, e) {
		char pool[PREFIX_STRLEN + 1], gw[PREFIX_STRLEN + 1];
		struct dk_pool *p = &out[i];
		uint8_t plen;
		int r;

		if (!json_is_object(e))
			return fail(err, errsz, "\"%s\" holds a non-object", key);
		if ((r = get_str(e, "Pool", pool, sizeof(pool), err, errsz)) < 0 ||
		    (r = get_str(e, "Gateway", gw, sizeof(gw), err, errsz)) < 0)
			return r;
		if (prefix_parse(pool, &p->pool) < 0 || p->pool.addr.family != family)
			return fail(err, errsz, "\"%s\": Pool \"%.64s\" is not an %s CIDR", key, pool,
				    family == AF_INET ? "IPv4" : "IPv6");
		memset(&p->gateway, 0, sizeof(p->gateway));
		if (gw[0] && (ifaddr_parse(gw, family, &p->gateway, &plen) < 0 ||
			      !prefix_contains(&p->pool, &p->gateway)))
			return fail(err, errsz, "\"%s\": Gateway \"%.64s\" is not ADDR/PLEN inside "
				    "its Pool", key, gw);
		(*n)++;
	}
	return 0;
}

static int parse_create_network(const json_t *o, struct dk_req *out, char *err, size_t errsz)
{
	const json_t *opts = json_object_get(o, "Options");
	int r;

	if (opts && !json_is_null(opts) && !json_is_object(opts))
		return fail(err, errsz, "\"Options\" must be an object");
	r = netd_opts(opts ? json_object_get(opts, "com.docker.network.generic") : NULL,
		      out->net.policy, out->net.mode, true, "the network's options (-o)", err, errsz);
	if (r < 0)
		return r;
	if ((r = pools_parse(json_object_get(o, "IPv4Data"), AF_INET, "IPv4Data", out->net.v4,
			     &out->net.n_v4, err, errsz)) < 0 ||
	    (r = pools_parse(json_object_get(o, "IPv6Data"), AF_INET6, "IPv6Data", out->net.v6,
			     &out->net.n_v6, err, errsz)) < 0)
		return r;
	return 0;
}

static int parse_create_endpoint(const json_t *o, struct dk_req *out, char *err, size_t errsz)
{
	const json_t *ifc = json_object_get(o, "Interface"), *opts = json_object_get(o, "Options");
	const json_t *pm = opts && json_is_object(opts) ?
				   json_object_get(opts, "com.docker.network.portmap") : NULL;
	char a[PREFIX_STRLEN + 1], mac[24];
	int r;

	if (ifc && !json_is_null(ifc)) {
		if (!json_is_object(ifc))
			return fail(err, errsz, "\"Interface\" must be an object");
		if ((r = get_str(ifc, "Address", a, sizeof(a), err, errsz)) < 0)
			return r;
		if (a[0] && ifaddr_parse(a, AF_INET, &out->addr4, &out->plen4) < 0)
			return fail(err, errsz, "Interface.Address \"%.64s\" is not IPv4 ADDR/PLEN", a);
		if ((r = get_str(ifc, "AddressIPv6", a, sizeof(a), err, errsz)) < 0)
			return r;
		if (a[0] && ifaddr_parse(a, AF_INET6, &out->addr6, &out->plen6) < 0)
			return fail(err, errsz, "Interface.AddressIPv6 \"%.64s\" is not IPv6 ADDR/PLEN",
				    a);
		if ((r = get_str(ifc, "MacAddress", mac, sizeof(mac), err, errsz)) < 0)
			return r;
		if (mac[0] && mac_parse(mac, out->mac) < 0)
			return fail(err, errsz, "Interface.MacAddress \"%.24s\" is not a unicast MAC",
				    mac);
		out->mac_given = mac[0] != '\0';
	}
	r = netd_opts(opts, out->policy, out->mode, false, "the endpoint's options (--driver-opt)",
		      err, errsz);
	if (r < 0)
		return r;
	if (pm && !json_is_null(pm) && (!json_is_array(pm) || json_array_size(pm) > 0))
		out->ports_published = true;
	return 0;
}

int dk_parse(enum dk_method method, const char *text, size_t len, struct dk_req *out,
	     char *err, size_t errsz)
{
	json_error_t jerr;
	json_t *o;
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->method = method;
	err[0] = '\0';
	if (len > DK_BODY_MAX) {
		fail(err, errsz, "request body over %d bytes", DK_BODY_MAX);
		return -EMSGSIZE;
	}
	/* Handshakes and notifications: nothing in them matters to netd. */
	if (method == DK_ACTIVATE || method == DK_CAPABILITIES || method == DK_DISCOVER_NEW ||
	    method == DK_DISCOVER_DELETE)
		return 0;
	if (method <= DK_UNKNOWN || method >= DK_METHODS)
		return fail(err, errsz, "unknown method");
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return fail(err, errsz, "request body is not JSON: line %d column %d: %s", jerr.line,
			    jerr.column, jerr.text);
	if (!json_is_object(o)) {
		r = fail(err, errsz, "request body must be a JSON object");
		goto out;
	}
	if ((r = get_id(o, "NetworkID", out->network_id, err, errsz)) < 0)
		goto out;
	if (method != DK_CREATE_NETWORK && method != DK_DELETE_NETWORK &&
	    (r = get_id(o, "EndpointID", out->endpoint_id, err, errsz)) < 0)
		goto out;
	switch (method) {
	case DK_CREATE_NETWORK:
		r = parse_create_network(o, out, err, errsz);
		break;
	case DK_CREATE_ENDPOINT:
		r = parse_create_endpoint(o, out, err, errsz);
		break;
	case DK_JOIN:
		r = get_str(o, "SandboxKey", out->sandbox_key, sizeof(out->sandbox_key), err, errsz);
		if (r >= 0 && out->sandbox_key[0] != '/')
			r = fail(err, errsz, "\"SandboxKey\" must be an absolute path");
		else if (r > 0)
			r = 0;
		break;
	default:
		break;
	}
out:
	json_decref(o);
	if (r < 0) {
		enum dk_method m = out->method;

		memset(out, 0, sizeof(*out));
		out->method = m;
	}
	return r < 0 ? r : 0;
}

void dk_sandbox_name(const char *eid, char *buf, size_t sz)
{
	snprintf(buf, sz, DK_SANDBOX_PREFIX "%.*s", DK_SANDBOX_HEX, eid);
}

static unsigned hexval(char c)
{
	return c >= 'a' ? (unsigned)(c - 'a' + 10) : (unsigned)(c - '0');
}

void dk_endpoint_mac(const struct dk_req *r, uint8_t mac[6])
{
	mac[0] = 0x02;	/* locally administered, unicast */
	mac[1] = 0x42;
	if (r->addr4.family == AF_INET) {
		memcpy(mac + 2, r->addr4.a, 4);
		return;
	}
	for (int i = 0; i < 4; i++)
		mac[2 + i] = (uint8_t)(hexval(r->endpoint_id[2 * i]) << 4 |
				       hexval(r->endpoint_id[2 * i + 1]));
}

int dk_endpoint_from(const struct dk_req *r, struct dk_endpoint *ep, char *err, size_t errsz)
{
	memset(ep, 0, sizeof(*ep));
	if (!r->addr4.family && !r->addr6.family)
		return fail(err, errsz, "Docker gave the endpoint no address: netd needs Docker's IPAM "
			    "to give it one (not --ipam-driver null)");
	memcpy(ep->network, r->network_id, sizeof(ep->network));
	ep->addr4 = r->addr4;
	ep->plen4 = r->plen4;
	ep->addr6 = r->addr6;
	ep->plen6 = r->plen6;
	if (r->mac_given)
		memcpy(ep->mac, r->mac, sizeof(ep->mac));
	else
		dk_endpoint_mac(r, ep->mac);
	memcpy(ep->policy, r->policy, sizeof(ep->policy));
	memcpy(ep->mode, r->mode, sizeof(ep->mode));
	return 0;
}

/* ---- the state records (the driver's files) ----------------------------------- */

static json_t *addr_json(const struct addr *a)
{
	char buf[ADDR_STRLEN];

	return a->family ? json_string(addr_format(a, buf, sizeof(buf))) : json_null();
}

static json_t *ifaddr_json(const struct addr *a, uint8_t plen)
{
	char buf[ADDR_STRLEN], out[PREFIX_STRLEN + 8];

	if (!a->family)
		return json_null();
	snprintf(out, sizeof(out), "%s/%u", addr_format(a, buf, sizeof(buf)), plen);
	return json_string(out);
}

static json_t *pools_json(const struct dk_pool *p, size_t n)
{
	json_t *arr = json_array();
	char buf[PREFIX_STRLEN];

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:o}", "pool",
						     prefix_format(&p[i].pool, buf, sizeof(buf)),
						     "gateway", addr_json(&p[i].gateway)));
	return arr;
}

json_t *dk_network_json(const struct dk_network *n)
{
	return json_pack("{s:s, s:s, s:o, s:o}", "policy", n->policy, "mode", n->mode, "ipv4",
			 pools_json(n->v4, n->n_v4), "ipv6", pools_json(n->v6, n->n_v6));
}

/* A record file's text as a JSON object. */
static json_t *record_load(const char *text, size_t len, char *err, size_t errsz, int *r)
{
	json_error_t jerr;
	json_t *o;

	if (len > DK_BODY_MAX) {
		*r = -EMSGSIZE;
		snprintf(err, errsz, "over %d bytes", DK_BODY_MAX);
		return NULL;
	}
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o || !json_is_object(o)) {
		*r = fail(err, errsz, "not a JSON object%s%s", o ? "" : ": ", o ? "" : jerr.text);
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A record's "ipv4"/"ipv6" pools: [{"pool", "gateway"}]. */
static int record_pools(const json_t *o, const char *key, int family, struct dk_pool *out,
			size_t *n, char *err, size_t errsz)
{
	const json_t *arr = json_object_get(o, key);
	size_t i;
	json_t *e;

	*n = 0;
	if (!json_is_array(arr) || json_array_size(arr) > DK_POOLS_MAX)
		return fail(err, errsz, "\"%s\" must be an array of at most %d pools", key,
			    DK_POOLS_MAX);
	json_array_foreach(arr, i, e) {
		char pool[PREFIX_STRLEN + 1], gw[ADDR_STRLEN + 1];
		int r;

		if (!json_is_object(e))
			return fail(err, errsz, "\"%s\" holds a non-object", key);
		if ((r = get_str(e, "pool", pool, sizeof(pool), err, errsz)) < 0 ||
		    (r = get_str(e, "gateway", gw, sizeof(gw), err, errsz)) < 0)
			return r;
		memset(&out[i], 0, sizeof(out[i]));
		if (prefix_parse(pool, &out[i].pool) < 0 || out[i].pool.addr.family != family ||
		    (gw[0] && (addr_parse(gw, &out[i].gateway) < 0 ||
			       !prefix_contains(&out[i].pool, &out[i].gateway))))
			return fail(err, errsz, "\"%s\": a pool or its gateway is wrong", key);
		(*n)++;
	}
	return 0;
}

int dk_network_parse(const char *text, size_t len, struct dk_network *out, char *err,
		     size_t errsz)
{
	int r = 0;
	json_t *o = record_load(text, len, err, errsz, &r);

	memset(out, 0, sizeof(*out));
	if (!o)
		return r;
	if ((r = get_str(o, "policy", out->policy, sizeof(out->policy), err, errsz)) < 0 ||
	    (r = get_str(o, "mode", out->mode, sizeof(out->mode), err, errsz)) < 0 ||
	    (r = record_pools(o, "ipv4", AF_INET, out->v4, &out->n_v4, err, errsz)) < 0 ||
	    (r = record_pools(o, "ipv6", AF_INET6, out->v6, &out->n_v6, err, errsz)) < 0)
		goto out;
	r = 0;
	if ((out->policy[0] && !name_valid(out->policy)) ||
	    (out->mode[0] && strcmp(out->mode, "audit") != 0 && strcmp(out->mode, "enforce") != 0))
		r = fail(err, errsz, "\"policy\" or \"mode\" is not one netd takes");
out:
	json_decref(o);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}

json_t *dk_endpoint_json(const struct dk_endpoint *e)
{
	char mac[18];

	mac_format(e->mac, mac);
	return json_pack("{s:s, s:o, s:o, s:s, s:s, s:s, s:s}", "network", e->network, "ipv4",
			 ifaddr_json(&e->addr4, e->plen4), "ipv6", ifaddr_json(&e->addr6, e->plen6),
			 "mac", mac, "policy", e->policy, "mode", e->mode, "sandbox_key",
			 e->sandbox_key);
}

int dk_endpoint_parse(const char *text, size_t len, struct dk_endpoint *out, char *err,
		      size_t errsz)
{
	char a4[PREFIX_STRLEN + 1], a6[PREFIX_STRLEN + 1], mac[24];
	int r = 0;
	json_t *o = record_load(text, len, err, errsz, &r);

	memset(out, 0, sizeof(*out));
	if (!o)
		return r;
	if ((r = get_id(o, "network", out->network, err, errsz)) < 0 ||
	    (r = get_str(o, "ipv4", a4, sizeof(a4), err, errsz)) < 0 ||
	    (r = get_str(o, "ipv6", a6, sizeof(a6), err, errsz)) < 0 ||
	    (r = get_str(o, "mac", mac, sizeof(mac), err, errsz)) < 0 ||
	    (r = get_str(o, "policy", out->policy, sizeof(out->policy), err, errsz)) < 0 ||
	    (r = get_str(o, "mode", out->mode, sizeof(out->mode), err, errsz)) < 0 ||
	    (r = get_str(o, "sandbox_key", out->sandbox_key, sizeof(out->sandbox_key), err,
			 errsz)) < 0)	/* absent in a record of before: "" */
		goto out;
	r = 0;
	if ((out->sandbox_key[0] && out->sandbox_key[0] != '/') || (a4[0] && ifaddr_parse(a4, AF_INET, &out->addr4, &out->plen4) < 0) ||
	    (a6[0] && ifaddr_parse(a6, AF_INET6, &out->addr6, &out->plen6) < 0) ||
	    (!a4[0] && !a6[0]) || mac_parse(mac, out->mac) < 0 ||
	    (out->policy[0] && !name_valid(out->policy)) ||
	    (out->mode[0] && strcmp(out->mode, "audit") != 0 && strcmp(out->mode, "enforce") != 0))
		r = fail(err, errsz, "an address, the MAC, the policy, the mode or the sandbox key "
			 "is wrong");
out:
	json_decref(o);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}

/* ---- what netd is asked, and what Docker is told ------------------------------- */

void dk_policy_of(const struct dk_endpoint *e, const struct dk_network *n, const char *dflt,
		  const char **policy, const char **mode)
{
	*policy = e->policy[0] ? e->policy : n->policy[0] ? n->policy : dflt;
	*mode = e->mode[0] ? e->mode : n->mode;
}

bool dk_gateway_of(const struct dk_network *n, const struct addr *a, struct addr *gw)
{
	const struct dk_pool *p = a->family == AF_INET ? n->v4 : n->v6;
	size_t np = a->family == AF_INET ? n->n_v4 : n->n_v6;

	memset(gw, 0, sizeof(*gw));
	for (size_t i = 0; i < np; i++)
		if (prefix_contains(&p[i].pool, a) && p[i].gateway.family) {
			*gw = p[i].gateway;
			return true;
		}
	return false;
}

json_t *dk_create_body(const char *eid, const struct dk_endpoint *e, const struct dk_network *n,
		       const char *key, const char *dflt, char *err, size_t errsz)
{
	char name[DK_SANDBOX_NAME_LEN + 1], mac[18];
	const char *policy, *mode;
	struct addr gw4, gw6;
	json_t *o, *addrs;

	if ((e->addr4.family && !dk_gateway_of(n, &e->addr4, &gw4)) ||
	    (e->addr6.family && !dk_gateway_of(n, &e->addr6, &gw6))) {
		fail(err, errsz, "the endpoint's address is in none of the network's pools with a "
		     "gateway (netd routes the container through the gateway Docker's IPAM chose)");
		return NULL;
	}
	dk_sandbox_name(eid, name, sizeof(name));
	dk_policy_of(e, n, dflt, &policy, &mode);
	mac_format(e->mac, mac);
	addrs = json_object();
	if (addrs && e->addr4.family)
		json_object_update_new(addrs, json_pack("{s:o, s:o}", "ipv4",
							ifaddr_json(&e->addr4, e->plen4), "gateway4",
							addr_json(&gw4)));
	if (addrs && e->addr6.family)
		json_object_update_new(addrs, json_pack("{s:o, s:o}", "ipv6",
							ifaddr_json(&e->addr6, e->plen6), "gateway6",
							addr_json(&gw6)));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o?}", "name", name, "policy", policy, "kind",
		      "peer", "netns", key, "mac", mac, "addresses", addrs);
	if (o && mode[0])
		json_object_set_new(o, "mode", json_string(mode));
	return o;
}

json_t *dk_join_reply(const json_t *sb)
{
	const char *ifname = json_string_value(json_object_get(sb, "ifname"));
	const char *gw4 = json_string_value(json_object_get(sb, "gateway4"));
	const char *gw6 = json_string_value(json_object_get(sb, "gateway6"));
	json_t *o;

	if (!ifname || !ifname[0])
		return NULL;
	o = json_pack("{s:{s:s, s:s}, s:b}", "InterfaceName", "SrcName", ifname, "DstPrefix",
		      DK_DST_PREFIX, "DisableGatewayService", 1);
	if (o && gw4)
		json_object_set_new(o, "Gateway", json_string(gw4));
	if (o && gw6)
		json_object_set_new(o, "GatewayIPv6", json_string(gw6));
	return o;
}

json_t *dk_oper_info(const char *name, const json_t *sb, const char *state)
{
	static const char *const keys[] = { "policy", "mode", "host_ifname", "ipv4", "ipv6", "mac",
					    "netns", NULL };
	json_t *v = json_pack("{s:s}", "netd.sandbox", name);

	for (size_t i = 0; v && sb && keys[i]; i++) {
		const char *s = json_string_value(json_object_get(sb, keys[i]));
		char k[32];

		if (!s)
			continue;
		snprintf(k, sizeof(k), "netd.%s", keys[i]);
		json_object_set_new(v, k, json_string(s));
	}
	if (v && !sb && state)
		json_object_set_new(v, "netd.state", json_string(state));
	return v ? json_pack("{s:o}", "Value", v) : NULL;
}

json_t *dk_error(const char *msg)
{
	return json_pack("{s:s}", "Err", msg);
}
